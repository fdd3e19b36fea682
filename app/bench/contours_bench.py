#!/usr/bin/env python3
"""Benchmark of the boundary detector (diaseg.contours) as a user calls it: wall time per call,
C path against OpenCL, at BSDS500's size and at 4K, after one warm-up call each.

    DIASEG_LIBRARY=build/app/libdiaseg.so python3 app/bench/contours_bench.py [--repeat 10]
        [--image data/coffee.png] [--sizes 481x321,3840x2160] [--matvec cpu,opencl]
        [--work-pixels default,0] [--json F]

--work-pixels lists the working sizes to time: "default" (the library's, as a user gets it: a
larger image is detected at that many pixels and its map brought back to full size) and/or 0 (the
detector at the image's own size).

Prints one line per (size, backend, working size): median and fastest of the timed calls. Nothing is asserted:
the figures go to docs/PERFORMANCE.md with the machine and the commit.
"""
import argparse, json, os, statistics, sys, time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import diaseg  # noqa: E402


def load(path):
    try:
        from PIL import Image
        return np.asarray(Image.open(path).convert("RGB"))
    except ImportError:
        import skimage.io
        return skimage.io.imread(path)[..., :3]


def resize(img, w, h):
    """Bilinear, pixel centres on pixel centres (as dsg_image_resize)."""
    H, W = img.shape[:2]
    ys = (np.arange(h) + 0.5) * H / h - 0.5
    xs = (np.arange(w) + 0.5) * W / w - 0.5
    y0 = np.clip(np.floor(ys).astype(int), 0, H - 1)
    x0 = np.clip(np.floor(xs).astype(int), 0, W - 1)
    y1, x1 = np.minimum(y0 + 1, H - 1), np.minimum(x0 + 1, W - 1)
    fy = np.clip(ys - y0, 0, 1)[:, None, None]
    fx = np.clip(xs - x0, 0, 1)[None, :, None]
    a = img.astype(np.float64)
    top = a[y0][:, x0] * (1 - fx) + a[y0][:, x1] * fx
    bot = a[y1][:, x0] * (1 - fx) + a[y1][:, x1] * fx
    return np.clip(np.rint(top * (1 - fy) + bot * fy), 0, 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--image", default=os.path.join(HERE, "..", "..", "data", "coffee.png"))
    ap.add_argument("--sizes", default="481x321,3840x2160")
    ap.add_argument("--matvec", default="cpu,opencl")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--work-pixels", default="default,0",
                    help="comma-separated: 'default' and/or pixel counts (0: full resolution)")
    ap.add_argument("--json")
    a = ap.parse_args()
    base = load(a.image)
    rows = []
    for size in a.sizes.split(","):
        w, h = map(int, size.split("x"))
        img = base if base.shape[:2] == (h, w) else resize(base, w, h)
        for m in a.matvec.split(","):
            for wp in a.work_pixels.split(","):
                opts = {"matvec": m}
                if wp != "default":
                    opts["work_pixels"] = int(wp)
                try:
                    diaseg.contours(img, **opts)  # warm-up: device, programs
                except RuntimeError as e:
                    print("%s %s: %s" % (size, m, e), file=sys.stderr)
                    continue
                t = []
                for _ in range(a.repeat):
                    t0 = time.perf_counter()
                    pb = diaseg.contours(img, **opts)
                    t.append(time.perf_counter() - t0)
                row = {"size": size, "matvec": m, "work_pixels": wp,
                       "median_s": statistics.median(t), "min_s": min(t), "repeat": a.repeat,
                       "contour_pixels": int((pb > 0).sum())}
                rows.append(row)
                print("%-10s %-7s work %-8s median %8.4f s  min %8.4f s"
                      % (size, m, wp, row["median_s"], row["min_s"]), flush=True)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"image": a.image, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
