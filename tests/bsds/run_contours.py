#!/usr/bin/env python3
"""BSDS500 evaluation of boundary detectors (soft boundary maps), as the benchmark's boundaryBench.

    python3 tests/bsds/run_contours.py --bsds /work/shared/bsds --split val [--limit N]
        [--methods diaseg-contours,diaseg-gpb,sobel,sobel-nms] [--diaseg build/app/diaseg] [--nthresh 33]
        [--jobs 2] [--cache /tmp/bsds_cache] [--json OUT.json] [--markdown OUT.md] [--plot PR.png]
        [--show ID,ID --show-dir DIR [--seg NAME=PATTERN ...]]

Each method writes one soft boundary map per image (float32 H x W in [0, 1], 0 = no boundary);
the map is cached under --cache (outside the repository), scored at --nthresh thresholds with
metrics.boundary_pr_image (the benchmark's evaluation_bdry_image.m: threshold, thin, match
one-to-one to every human within 0.0075 x the diagonal) and the per-image counts cached beside it,
so a rerun only aggregates (metrics.aggregate_pr: ODS F, OIS F, AP as collect_eval_bdry.m).

Methods:
  diaseg-contours  `<diaseg> contours IMG -o TMPDIR -q [--diaseg-args ...]`, then TMPDIR/contours.npy
                   (already non-max suppressed); the cache is keyed by a hash of the diaseg binary,
                   so a rebuild recomputes the maps
  diaseg-gpb       `<diaseg> segment IMG -o TMPDIR -q --pictures 0 [--diaseg-args ...]`, then
                   TMPDIR/contours.npy: the default segment's map, gPb (the detector with the
                   eigenvectors' spectral term, --spectral-weight) thinned; keyed likewise
  sobel            skimage.filters.sobel of the grey image (rgb2gray), divided by its maximum in
                   the image: a labelled baseline, NOT thinned to ridges (the benchmark's
                   thinning of each thresholded map then gives skeletons of wide bands)
  sobel-nms        the same magnitude, non-max suppressed along the gradient direction (4 sectors,
                   as in Canny, no hysteresis), then divided by its maximum

--show writes one PNG per given image id into --show-dir: the photo, the human boundaries (mean of
the humans' maps), the first method's map and up to two segmentations (--seg NAME=PATTERN, PATTERN a
labels .npy path with {id} for the image id, or FILE.npz:KEY, e.g. run_bsds.py's cached
.../felzenszwalb-HASH/{id}.npz:s3), drawn as coloured regions with their outlines over the photo.
"""

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import harness
    import metrics
except ImportError as e:  # pragma: no cover
    sys.exit("run_contours.py needs NumPy and SciPy (%s)" % e)

ALL_METHODS = ["diaseg-contours", "diaseg-gpb", "sobel", "sobel-nms"]
DIASEG_METHODS = {"diaseg-contours": ["contours"],
                  "diaseg-gpb": ["segment", "--pictures", "0"]}
SCORE_VERSION = 1   # bump when metrics.boundary_pr_image's counts change


log = harness.log
load_image = harness.load_image
file_hash = harness.file_hash


def need_skimage(what):
    try:
        import skimage  # noqa: F401
    except ImportError:
        raise SystemExit("%s needs scikit-image: /tmp/venv-bsds/bin/pip install scikit-image" % what)


# ---- boundary maps --------------------------------------------------------------------------------

def sobel_parts(img):
    """Grey image's Sobel magnitude (skimage.filters.sobel) and its two directional parts."""
    from skimage import color, filters
    g = color.rgb2gray(img)
    return filters.sobel(g), filters.sobel_h(g), filters.sobel_v(g)


def nms(mag, gy, gx):
    """Non-maximum suppression of mag along the gradient (gy, gx), quantised to 4 directions
    (0, 45, 90, 135 degrees): a pixel is kept when not below either neighbour across the edge."""
    h, w = mag.shape
    p = np.pad(mag, 1, mode="constant")
    ang = (np.rad2deg(np.arctan2(gy, gx)) + 180.0) % 180.0
    sector = (np.floor((ang + 22.5) / 45.0).astype(int)) % 4    # 0: gradient along x, 1: 45, 2: y, 3: 135
    # neighbour offsets (dy, dx) along the gradient per sector; rows grow downward, gy = d/drow
    offs = {0: (0, 1), 1: (1, 1), 2: (1, 0), 3: (1, -1)}
    keep = np.zeros((h, w), bool)
    for s, (dy, dx) in offs.items():
        n1 = p[1 + dy:1 + dy + h, 1 + dx:1 + dx + w]
        n2 = p[1 - dy:1 - dy + h, 1 - dx:1 - dx + w]
        keep |= (sector == s) & (mag >= n1) & (mag >= n2)
    return np.where(keep, mag, 0.0)


def normalise(m):
    m = np.asarray(m, dtype=np.float64)
    mx = float(m.max())
    return (m / mx if mx > 0 else m).astype(np.float32)


def boundary_map(method, img_path, opts):
    """The soft boundary map (float32, H x W, [0, 1]) of one image, and notes."""
    if method in DIASEG_METHODS:
        with tempfile.TemporaryDirectory(prefix="bsds-contours-") as d:
            out = os.path.join(d, "out")
            cmd = ([opts["diaseg"], DIASEG_METHODS[method][0], img_path, "-o", out, "-q"] +
                   DIASEG_METHODS[method][1:] + opts["diaseg_args"])
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
            pb = np.load(os.path.join(out, "contours.npy"))
        notes = []
        if pb.ndim != 2:
            raise RuntimeError("contours.npy of %s is %s, not H x W" % (img_path, pb.shape))
        lo, hi = float(pb.min()), float(pb.max())
        if lo < 0 or hi > 1:
            notes.append("contours.npy outside [0, 1]: %g..%g, clipped" % (lo, hi))
            pb = np.clip(pb, 0, 1)
        return pb.astype(np.float32), notes
    img = load_image(img_path)
    mag, gy, gx = sobel_parts(img)
    if method == "sobel":
        return normalise(mag), []
    if method == "sobel-nms":
        return normalise(nms(mag, gy, gx)), []
    raise ValueError(method)


# ---- one (method, image) task ---------------------------------------------------------------------

def run_task(task):
    name, iid, img_path, gt_path, cdir, score_tag, opts = task
    os.makedirs(cdir, exist_ok=True)
    pb_path = os.path.join(cdir, iid + ".pb.npy")
    score_path = os.path.join(cdir, "%s.%s.score.json" % (iid, score_tag))
    if os.path.exists(score_path) and not opts["rescore"]:
        with open(score_path) as f:
            sc = json.load(f)
        if sc.get("version") == SCORE_VERSION:
            sc["cached"] = True
            return name, iid, sc
    t0 = time.time()
    notes = []
    if os.path.exists(pb_path):
        pb = np.load(pb_path)
        map_s = None
    else:
        pb, notes = boundary_map(name, img_path, opts)
        map_s = time.time() - t0
        tmp = pb_path + ".tmp.npy"
        np.save(tmp, pb)
        os.replace(tmp, pb_path)
    if opts["quantize8"]:
        pb = np.round(np.asarray(pb, np.float64) * 255.0) / 255.0   # as the benchmark reads 8-bit PNGs
    t1 = time.time()
    _, gbdrys = metrics.load_ground_truth(gt_path)
    sc = metrics.boundary_pr_image(pb, gbdrys, nthresh=opts["nthresh"], thin_pb=not opts["no_thin"])
    sc.update({"version": SCORE_VERSION, "image": iid, "map_seconds": map_s,
               "score_seconds": time.time() - t1, "notes": notes})
    harness.save_json(score_path, sc)
    sc["cached"] = False
    return name, iid, sc


# ---- output ---------------------------------------------------------------------------------------

def fmt_table(results, md=False):
    head = ["method", "images", "ODS F", "ODS R", "ODS P", "ODS t", "OIS F", "AP"]
    rows = []
    for name, r in results.items():
        a = r["scores"]
        rows.append([name, str(a["images"]), "%.3f" % a["ods_f"], "%.3f" % a["ods_r"],
                     "%.3f" % a["ods_p"], "%.3f" % a["ods_t"], "%.3f" % a["ois_f"], "%.3f" % a["ap"]])
    return harness.table(head, rows, md)


def plot_pr(results, path, title):
    """The PR curves (recall x, precision y) of every method, the iso-F curves F = 0.1 .. 0.9 and
    each method's ODS point; thresholds with no machine pixel (P undefined) are left out."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 6.4))
    for f in np.arange(0.1, 0.91, 0.1):
        r = np.linspace(f / 2 + 1e-3, 1, 400)
        p = f * r / (2 * r - f)
        ok = (p >= 0) & (p <= 1)
        ax.plot(r[ok], p[ok], color="#8fbf8f", lw=0.7, zorder=1)
        ax.text(r[ok][-1], p[ok][-1], " %.1f" % f, color="#5f8f5f", fontsize=7, va="center")
    for k, (name, res) in enumerate(results.items()):
        a = res["scores"]
        c = a["curve"]
        sump = np.array(res["sumP_total"], float)
        ok = sump > 0
        col = "C%d" % k
        ax.plot(np.array(c["r"])[ok], np.array(c["p"])[ok], color=col, lw=1.8, zorder=3,
                label="[F=%.3f AP=%.3f] %s" % (a["ods_f"], a["ap"], name))
        ax.plot([a["ods_r"]], [a["ods_p"]], "o", color=col, ms=7, mec="k", zorder=4)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("Recall")
    ax.set_ylabel("Precision")
    ax.set_aspect("equal")
    ax.grid(True, lw=0.3)
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def load_labels(spec, iid):
    path = spec.replace("{id}", iid)
    key = None
    if ".npz:" in path:
        path, key = path.rsplit(":", 1)
    if path.endswith(".npz"):
        with np.load(path) as z:
            return np.asarray(z[key or sorted(z.files)[0]])
    return np.load(path)


def show_images(ids, split, bsds, pb_dir, pb_name, segs, out_dir):
    """One PNG per image: photo | human boundaries (mean over humans) | pb | segmentations."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from skimage.color import label2rgb
    from skimage.segmentation import mark_boundaries
    os.makedirs(out_dir, exist_ok=True)
    written = []
    for iid in ids:
        img = load_image(os.path.join(bsds, "images", split, iid + ".jpg"))
        _, gb = metrics.load_ground_truth(os.path.join(bsds, "groundTruth", split, iid + ".mat"))
        gmean = np.mean([g.astype(float) for g in gb], axis=0)
        pb = np.load(os.path.join(pb_dir, iid + ".pb.npy"))
        panels = [(img, "%s %s" % (split, iid), None),
                  (1 - gmean, "humans: mean of %d boundary maps" % len(gb), "gray"),
                  (1 - pb, "%s (1 - map)" % pb_name, "gray")]
        for name, spec in segs[:2]:
            lab = load_labels(spec, iid)
            if lab.shape != img.shape[:2]:
                raise SystemExit("%s: labels %s, image %s" % (name, lab.shape, img.shape[:2]))
            ov = label2rgb(lab, image=img, alpha=0.35, bg_label=-1, image_alpha=1.0)
            ov = mark_boundaries(ov, lab, color=(1, 1, 0))
            panels.append((ov, "%s (%d regions)" % (name, len(np.unique(lab))), None))
        h, w = img.shape[:2]       # about one screen pixel per image pixel (dpi 100)
        fig, axs = plt.subplots(1, len(panels), figsize=(len(panels) * (w + 10) / 100.0, (h + 40) / 100.0))
        fig.subplots_adjust(left=0.003, right=0.997, bottom=0.01, top=1 - 30.0 / (h + 40), wspace=0.03)
        for ax, (im, title, cmap) in zip(np.atleast_1d(axs), panels):
            ax.imshow(im, cmap=cmap, vmin=0 if cmap else None, vmax=1 if cmap else None,
                      interpolation="nearest")
            ax.set_title(title, fontsize=8)
            ax.axis("off")
        path = os.path.join(out_dir, "%s_%s.png" % (split, iid))
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(path)
    return written


# ---- main -----------------------------------------------------------------------------------------

def check_diaseg_contours(diaseg):
    if not (os.path.isfile(diaseg) and os.access(diaseg, os.X_OK)):
        raise SystemExit("no diaseg command at %s (build it: cmake -S . -B build && cmake --build "
                         "build, or pass --diaseg)" % diaseg)
    p = subprocess.run([diaseg, "contours", "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit("%s has no working 'contours' command yet (diaseg contours --help: exit %d: "
                         "%s); build a diaseg that has it, or leave diaseg-contours out of --methods"
                         % (diaseg, p.returncode, (p.stderr or p.stdout).strip()[:300]))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", default="/work/shared/bsds", help="data folder (README.md there)")
    ap.add_argument("--split", default="val", choices=["train", "val"])
    ap.add_argument("--limit", type=int, default=0, help="first N images (sorted by id); 0: all")
    ap.add_argument("--ids", default="", help="comma-separated image ids instead of the split's list")
    ap.add_argument("--methods", default=",".join(ALL_METHODS))
    ap.add_argument("--diaseg", default=os.path.join(ROOT, "build", "app", "diaseg"))
    ap.add_argument("--diaseg-args", default="",
                    help="extra options for `diaseg contours` (one string, split on spaces)")
    ap.add_argument("--nthresh", type=int, default=33,
                    help="thresholds linspace(1/(n+1), 1-1/(n+1), n); the benchmark uses 99")
    ap.add_argument("--quantize8", action="store_true",
                    help="round the map to multiples of 1/255 first (the benchmark reads 8-bit PNGs)")
    ap.add_argument("--no-thin", action="store_true", help="do not thin the thresholded maps")
    ap.add_argument("--ap-occurrence", choices=["last", "first"], default="last",
                    help="which P of equal-R thresholds the AP uses (metrics.average_precision)")
    ap.add_argument("--jobs", type=int, default=2, help="images in parallel (processes, at most 2 here)")
    ap.add_argument("--threads", type=int, default=0, help="OMP_NUM_THREADS per worker")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "bsds_cache"))
    ap.add_argument("--rescore", action="store_true", help="recount from the cached maps")
    ap.add_argument("--json", help="write the scores, PR curves and per-image counts here")
    ap.add_argument("--markdown", help="write the table as Markdown here")
    ap.add_argument("--plot", help="write the PR curves (PNG) here")
    ap.add_argument("--show", default="", help="comma-separated image ids: write side-by-side PNGs")
    ap.add_argument("--show-dir", default=os.path.join(tempfile.gettempdir(), "bsds_show"))
    ap.add_argument("--show-only", action="store_true", help="only the --show pictures, no scoring")
    ap.add_argument("--seg", action="append", default=[], metavar="NAME=PATTERN",
                    help="a segmentation for --show: labels .npy (or FILE.npz:KEY), {id} = image id")
    args = ap.parse_args(argv)

    cache_real = os.path.realpath(args.cache)
    for p in [args.cache, args.show_dir] + [x for x in (args.json, args.markdown, args.plot) if x]:
        rp = os.path.realpath(p)
        if rp == ROOT or rp.startswith(ROOT + os.sep):
            raise SystemExit("%s is inside the repository (%s): nothing derived from BSDS500 is "
                             "written into the tree" % (p, ROOT))
    imgdir = os.path.join(args.bsds, "images", args.split)
    gtdir = os.path.join(args.bsds, "groundTruth", args.split)
    if not os.path.isdir(imgdir) or not os.path.isdir(gtdir):
        raise SystemExit("no BSDS500 %s split under %s" % (args.split, args.bsds))
    if args.ids:
        ids = [i for i in args.ids.split(",") if i]
    else:
        ids = sorted(f[:-4] for f in os.listdir(imgdir) if f.endswith(".jpg"))
        ids = [i for i in ids if os.path.exists(os.path.join(gtdir, i + ".mat"))]
    if args.limit:
        ids = ids[:args.limit]
    show = [i for i in args.show.split(",") if i]
    if args.show_only:
        if not show:
            raise SystemExit("--show-only needs --show ID,..")
        ids = []
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        if m not in ALL_METHODS:
            raise SystemExit("unknown method %s (known: %s)" % (m, ", ".join(ALL_METHODS)))
    if any(m not in DIASEG_METHODS for m in methods) or show:
        need_skimage("the sobel baselines and --show")
    segs = []
    for s in args.seg:
        if "=" not in s:
            raise SystemExit("--seg NAME=PATTERN, not %r" % s)
        segs.append(tuple(s.split("=", 1)))

    opts = {"diaseg": os.path.abspath(args.diaseg), "diaseg_args": args.diaseg_args.split(),
            "rescore": args.rescore, "nthresh": args.nthresh, "quantize8": args.quantize8,
            "no_thin": args.no_thin}
    conf = {}
    for m in methods:
        params = {"method": m}
        if m in DIASEG_METHODS:
            check_diaseg_contours(opts["diaseg"])
            params.update(binary=file_hash(opts["diaseg"]), args=opts["diaseg_args"])
        tag = hashlib.sha1(json.dumps(params, sort_keys=True).encode()).hexdigest()[:10]
        cdir = os.path.join(cache_real, args.split, "contours-%s-%s" % (m, tag))
        conf[m] = (params, cdir)
    score_tag = "n%d%s%s" % (args.nthresh, "-q8" if args.quantize8 else "", "-nothin" if args.no_thin else "")

    tasks = [(m, iid, os.path.join(imgdir, iid + ".jpg"), os.path.join(gtdir, iid + ".mat"),
              conf[m][1], score_tag, opts) for iid in ids for m in methods]
    jobs = max(1, args.jobs)
    threads = args.threads or max(1, (os.cpu_count() or 1) // jobs)
    log("%d images x %d methods, %d thresholds, %d jobs, cache %s"
        % (len(ids), len(methods), args.nthresh, jobs, cache_real))
    per = {m: {} for m in methods}
    t0 = time.time()
    if jobs > 1 and len(tasks) > 1:
        import multiprocessing as mp
        ex = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("spawn"),
                                    initializer=harness.worker_init, initargs=(threads,))
        futs = [ex.submit(run_task, t) for t in tasks]
        it = (f.result() for f in cf.as_completed(futs))
    else:
        harness.worker_init(threads)
        ex = None
        it = (run_task(t) for t in tasks)
    try:
        for done, (name, iid, sc) in enumerate(it, 1):
            per[name][iid] = sc
            what = "cached" if sc.get("cached") else "map %s, score %.1f s" % (
                "cached" if sc["map_seconds"] is None else "%.1f s" % sc["map_seconds"], sc["score_seconds"])
            log("[%d/%d %.0f s] %s %s: %s%s" % (done, len(tasks), time.time() - t0, name, iid, what,
                                              ("; " + "; ".join(sc["notes"])) if sc["notes"] else ""))
    finally:
        if ex:
            ex.shutdown(cancel_futures=True)

    results = {}
    for m in methods if ids else []:
        params, cdir = conf[m]
        ims = [per[m][i] for i in ids]
        agg = metrics.aggregate_pr(ims, ap_occurrence=args.ap_occurrence)
        agg["per_image"] = dict(zip(ids, agg["per_image"]))
        results[m] = {"parameters": params, "cache": cdir, "scores": agg,
                      "sumP_total": np.sum([im["sumP"] for im in ims], axis=0).tolist(),
                      "notes": {i: per[m][i]["notes"] for i in ids if per[m][i]["notes"]},
                      "counts": {i: {k: per[m][i][k] for k in ("cntR", "sumR", "cntP", "sumP")}
                                 for i in ids}}
    if show:
        m0 = methods[0]
        for iid in show:       # the first method's map of every shown image (cached, or made now)
            pb_path = os.path.join(conf[m0][1], iid + ".pb.npy")
            if not os.path.exists(pb_path):
                os.makedirs(conf[m0][1], exist_ok=True)
                pb, _ = boundary_map(m0, os.path.join(imgdir, iid + ".jpg"), opts)
                np.save(pb_path, pb)
        for p in show_images(show, args.split, args.bsds, conf[m0][1], m0, segs, args.show_dir):
            log("wrote %s" % p)
    if not results:
        return 0
    print(fmt_table(results))
    meta = {"split": args.split, "images": len(ids), "ids": ids, "command": " ".join(sys.argv),
            "nthresh": args.nthresh, "thresholds": metrics.pb_thresholds(args.nthresh).tolist(),
            "quantize8": args.quantize8, "thin": not args.no_thin, "max_dist": metrics.MAX_DIST,
            "ap_occurrence": args.ap_occurrence, "seconds": time.time() - t0}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("BSDS500 %s, %d images, %d thresholds (`%s`)\n\n"
                    % (args.split, len(ids), args.nthresh, meta["command"]))
            f.write(fmt_table(results, md=True) + "\n")
    if args.plot:
        plot_pr(results, args.plot, "BSDS500 %s, %d images, %d thresholds"
                % (args.split, len(ids), args.nthresh))
        log("PR curves: %s" % args.plot)
    return 0


if __name__ == "__main__":
    sys.exit(main())
