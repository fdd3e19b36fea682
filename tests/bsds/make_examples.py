#!/usr/bin/env python3
"""Pictures for docs/QUALITY.md, from the project's own sample images (data/; no BSDS500
photograph goes into the repository), two rows: the photo, diaseg segment's contours (gPb: the
boundary detector with the eigenvectors' term), its hierarchy (ucm.png) and scikit-image's
felzenszwalb at its ODS scale on BSDS500 val (400) for comparison; then the hierarchy at three
levels (the cuts at the -k list) and the cut segment makes by default (-k auto).

    python3 tests/bsds/make_examples.py --diaseg build/app/diaseg --out docs/images \
        [--images data/coffee.png,data/chelsea.jpg,data/camera.png] [-k 4,12,30]
"""
import argparse, os, subprocess, sys, tempfile

import numpy as np
from PIL import Image

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def overlay(img, labels):
    from skimage.segmentation import find_boundaries
    out = img.astype(np.float64).copy()
    b = find_boundaries(labels, mode="inner")
    out[b] = [255, 220, 0]
    return out.astype(np.uint8)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--diaseg", default=os.path.join(ROOT, "build", "app", "diaseg"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "images"))
    ap.add_argument("--images", default="data/coffee.png,data/chelsea.jpg,data/camera.png")
    ap.add_argument("-k", default="4,12,30", help="three k: the hierarchy's cuts shown")
    a = ap.parse_args()
    from skimage.segmentation import felzenszwalb
    for path in a.images.split(","):
        path = os.path.join(ROOT, path)
        img = np.asarray(Image.open(path).convert("RGB"))
        ks = [int(k) for k in a.k.split(",")]
        with tempfile.TemporaryDirectory() as d:
            subprocess.run([a.diaseg, "segment", path, "-k", a.k, "--matvec", "cpu", "-q",
                            "-o", d], check=True)
            pb = np.load(os.path.join(d, "contours.npy"))
            cuts = [np.load(os.path.join(d, "labels_k%d.npy" % k)) for k in ks]
            ucm_png = np.asarray(Image.open(os.path.join(d, "ucm.png")).convert("RGB"))
            subprocess.run([a.diaseg, "segment", path, "--matvec", "cpu", "-q", "-o", d],
                           check=True)
            cuts.append(np.load(os.path.join(d, "labels.npy")))
        h, w = img.shape[:2]
        contours = (255 * (1 - np.clip(pb / max(pb.max(), 1e-6), 0, 1) ** 0.5)).astype(np.uint8)
        contours = np.dstack([contours] * 3)
        ucm_small = np.asarray(Image.fromarray(ucm_png).resize((w, h), Image.BILINEAR))
        fz = felzenszwalb(img, scale=400, sigma=0.8, min_size=20)
        rows = [[img, contours, ucm_small, overlay(img, fz)], [overlay(img, c) for c in cuts]]
        sep = np.full((h, 6, 3), 255, np.uint8)
        lines = [np.hstack([x for p in r for x in (p, sep)][:-1]) for r in rows]
        row = np.vstack([lines[0], np.full((6, lines[0].shape[1], 3), 255, np.uint8), lines[1]])
        name = os.path.splitext(os.path.basename(path))[0]
        out = os.path.join(a.out, "quality_%s.jpg" % name)
        pic = Image.fromarray(row)
        pic = pic.resize((pic.width * 480 // pic.height, 480), Image.LANCZOS)
        pic.save(out, quality=85)
        print(out, "felzenszwalb segments:", int(fz.max()) + 1, "auto cut:", int(cuts[-1].max()) + 1,
              file=sys.stderr)


if __name__ == "__main__":
    main()
