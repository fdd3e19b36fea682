#!/usr/bin/env python3
"""BSDS500 evaluation of diaseg and two peers (Felzenszwalb-Huttenlocher and SLIC from scikit-image).

    python3 tests/bsds/run_bsds.py --bsds /work/shared/bsds --split val [--limit N]
        [--methods diaseg-intensity,diaseg-color,felzenszwalb,slic] [--diaseg build/app/diaseg]
        [--jobs 2] [--cache /tmp/bsds_cache] --json OUT.json [--markdown OUT.md]

Every method runs on the same images at every scale of its list; each (method, image) is segmented
once, its labels cached under --cache (outside the repository: nothing derived from BSDS500 is
written into the tree), scored with tests/bsds/metrics.py (the benchmark's definitions), and the
per-image counts cached beside them, so a rerun only aggregates. Progress goes to stderr; the table
(Covering, PRI, VI, boundary F: ODS and OIS) to stdout, the JSON to --json, a Markdown table to
--markdown.

diaseg: the Python package (app/python, over the build's libdiaseg.so, found beside --diaseg or
from $DIASEG_LIBRARY) when it imports, else the command line (`diaseg segment IMG -k K --nev 12
--matvec cpu --tol 1e-3 --affinity A -q -o DIR`, labels.npy). One call per k: today neither takes
several k, so each k repeats the (deterministic) eigensolve. The package gets Pillow's decode of
the JPEG, the command its own (stb_image): the pixels differ slightly, and so can the segmentations
(tests/bsds/README.md).
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
    sys.exit("run_bsds.py needs NumPy and SciPy (%s); use /usr/bin/python3 on Debian "
             "(python3-numpy python3-scipy) or a venv that has them" % e)

DIASEG_KS = [2, 3, 4, 6, 8, 12]
# cuts need no eigenvector per k: the list reaches as far as felzenszwalb's scales do
DIASEG_KS_HIERARCHY = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
# diaseg-ucm: one run with the defaults, its ultrametric contour map scored as the benchmark
# scores a ucm2 at its 99 thresholds (bench_bsds500.m's nthresh = 99: linspace(1/100, 99/100,
# 99)): the regions of bwlabel(ucm2 <= t) on the doubled grid (evaluation_reg_image.m), the
# boundaries of the corner map ucm2(3:2:end, 3:2:end) >= t, thinned (evaluation_bdry_image.m)
UCM_THRESHOLDS = [round(0.01 * i, 2) for i in range(1, 100)]  # 0.01 .. 0.99
DIASEG_AFFINITIES = ["intensity", "color", "contour", "contour+color"]
DIASEG_GROUPINGS = ["kmeans", "hierarchy"]
FZ_SCALES = [100, 200, 400, 800, 1600, 3200, 6400, 12800]
SLIC_NS = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256]
ALL_METHODS = ["diaseg-intensity", "diaseg-color", "felzenszwalb", "slic"]
SCORE_VERSION = 2   # bump when metrics.py's per-image counts change (2: a ucm's boundaries)


log = harness.log
load_image = harness.load_image


# ---- methods --------------------------------------------------------------------------------------

def method_config(name, args):
    """(scales, parameters) of a method; the parameters name its cache folder."""
    if name == "diaseg-ucm":
        params = {"nev": args.nev, "tol": args.tol, "matvec": args.matvec, "ucm": True}
        params.update(args.diaseg_opt)
        return UCM_THRESHOLDS, params
    if name.startswith("diaseg-"):
        # diaseg-AFFINITY or diaseg-AFFINITY-GROUPING (e.g. diaseg-contour-hierarchy)
        aff, grouping = name.split("-", 1)[1], None
        if aff.rsplit("-", 1)[-1] in DIASEG_GROUPINGS:
            aff, grouping = aff.rsplit("-", 1)
        if aff not in DIASEG_AFFINITIES:
            raise SystemExit("unknown method %s (affinities: %s; groupings: %s)"
                             % (name, ", ".join(DIASEG_AFFINITIES), ", ".join(DIASEG_GROUPINGS)))
        params = {"affinity": aff, "nev": args.nev, "tol": args.tol, "matvec": args.matvec}
        if grouping:
            params["grouping"] = grouping
        params.update(args.diaseg_opt)
        ks = args.ks if args.ks else (DIASEG_KS_HIERARCHY if grouping == "hierarchy" else DIASEG_KS)
        return ks, params
    if name == "felzenszwalb":
        return args.fz_scales, {"sigma": 0.8, "min_size": 20}
    if name == "slic":
        return args.slic_ns, {"compactness": 10, "start_label": 0}
    raise SystemExit("unknown method %s (known: %s)" % (name, ", ".join(ALL_METHODS)))


def cache_dir(args, name, scales, params):
    key = json.dumps({"m": name, "s": list(scales), "p": params}, sort_keys=True)
    tag = hashlib.sha1(key.encode()).hexdigest()[:10]
    return os.path.join(args.cache, args.split, "%s-%s" % (name, tag))


def have_image_reader():
    for mod in ("PIL", "matplotlib"):
        try:
            __import__(mod)
            return True
        except ImportError:
            pass
    return False


_DIASEG = None   # the package, once imported in this worker


def _diaseg_package(lib):
    global _DIASEG
    if _DIASEG is None:
        if lib:
            os.environ["DIASEG_LIBRARY"] = lib
        sys.path.insert(0, os.path.join(ROOT, "app", "python"))
        import diaseg  # noqa: E402
        _DIASEG = diaseg
    return _DIASEG


def segment_diaseg(img_path, scales, params, opts):
    """One solve per image: the k list groups the same eigenvectors once per k (diaseg-ucm: the
    run's hierarchy cut at each threshold). Returns (segmentations, notes, boundary map), the map
    a ucm's corners (diaseg-ucm) or None (the boundaries are the segmentations')."""
    notes = []
    if params.get("ucm"):
        params = {k: v for k, v in params.items() if k != "ucm"}
        extra = {k: v for k, v in params.items() if k not in ("nev", "tol", "matvec")}
        if opts["diaseg_mode"] == "package":
            dg = _diaseg_package(opts["diaseg_lib"])
            r = dg.segment(load_image(img_path), k=2, nev=params["nev"], tol=params["tol"],
                           matvec=params["matvec"], **extra)
            return metrics.ucm_cuts(r.ucm, scales), notes, metrics.ucm_boundary_map(r.ucm)
        with tempfile.TemporaryDirectory(prefix="bsds-diaseg-") as d:
            cmd = [opts["diaseg"], "segment", img_path, "-k", "2", "--nev", str(params["nev"]),
                   "--tol", str(params["tol"]), "--matvec", params["matvec"], "-q", "-o", d]
            for k, v in extra.items():
                cmd += ["--" + k.replace("_", "-"), str(v)]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode not in (0, 3):
                raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
            ucm = np.load(os.path.join(d, "ucm.npy"))
            return metrics.ucm_cuts(ucm, scales), notes, metrics.ucm_boundary_map(ucm)
    extra = {k: v for k, v in params.items() if k not in ("nev", "tol", "matvec", "affinity")}
    if opts["diaseg_mode"] == "package":
        import warnings
        dg = _diaseg_package(opts["diaseg_lib"])
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            r = dg.segment(load_image(img_path), k=list(scales), nev=params["nev"],
                           tol=params["tol"], matvec=params["matvec"],
                           affinity=params["affinity"], **extra)
        if not r.converged:
            notes.append("not converged")
        notes += [str(x.message) for x in w if "converge" not in str(x.message)]
        return [np.asarray(r.labels_for(k)) for k in scales], notes, None
    with tempfile.TemporaryDirectory(prefix="bsds-diaseg-") as d:
        cmd = [opts["diaseg"], "segment", img_path, "-k", ",".join(str(k) for k in scales),
               "--nev", str(params["nev"]), "--tol", str(params["tol"]), "--matvec",
               params["matvec"], "--affinity", params["affinity"], "-q", "-o", d]
        for k, v in extra.items():
            cmd += ["--" + k.replace("_", "-"), str(v)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 3):
            raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
        if p.returncode == 3:
            notes.append("not converged")
        names = ["labels.npy"] if len(scales) == 1 else ["labels_k%d.npy" % k for k in scales]
        return [np.load(os.path.join(d, f)) for f in names], notes, None


def segment_peer(name, img, scales, params):
    try:
        import skimage.segmentation as sks
    except ImportError:
        raise SystemExit("method %s needs scikit-image: pip install scikit-image (e.g. into a venv: "
                         "python3 -m venv --system-site-packages /tmp/venv-bsds && "
                         "/tmp/venv-bsds/bin/pip install scikit-image) or apt-get install "
                         "python3-skimage" % name)
    out = []
    for s in scales:
        if name == "felzenszwalb":
            out.append(sks.felzenszwalb(img, scale=s, **params))
        else:
            out.append(sks.slic(img, n_segments=s, **params))
    return out, []


# ---- one (method, image) task ---------------------------------------------------------------------

def run_task(task):
    """Segments (or loads the cached labels) and scores one image for one method; returns its
    per-image counts, with the seconds spent."""
    name, iid, img_path, gt_path, cdir, scales, params, opts = task
    os.makedirs(cdir, exist_ok=True)
    lab_path = os.path.join(cdir, iid + ".npz")
    score_path = os.path.join(cdir, iid + ".score.json")
    if os.path.exists(score_path) and not opts["rescore"]:
        with open(score_path) as f:
            sc = json.load(f)
        if sc.get("version") == SCORE_VERSION:
            sc["cached"] = True
            return name, iid, sc
    t0 = time.time()
    notes = []
    pb = None
    if os.path.exists(lab_path):
        with np.load(lab_path) as z:
            if name == "diaseg-ucm" and "pb" not in z:
                os.remove(lab_path)   # cut before the cache kept the ucm's corners: run again
                return run_task(task)
            labels = [z["s%d" % i] for i in range(len(scales))]
            pb = z["pb"] if "pb" in z else None
        seg_s = None
    else:
        if name.startswith("diaseg-"):
            labels, notes, pb = segment_diaseg(img_path, scales, params, opts)
        else:
            labels, notes = segment_peer(name, load_image(img_path), scales, params)
        seg_s = time.time() - t0
        tmp = lab_path + ".tmp.npz"
        arrays = {"s%d" % i: np.asarray(l).astype(np.int32) for i, l in enumerate(labels)}
        if pb is not None:
            arrays["pb"] = pb
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, lab_path)
    t1 = time.time()
    gsegs, gbdrys = metrics.load_ground_truth(gt_path)
    sc = metrics.evaluate_image(labels, gsegs, gbdrys, boundaries=pb is None)
    if pb is not None:
        # a hierarchy: its boundaries at each threshold are the corner map's (scales are the
        # thresholds), as the benchmark scores a ucm2
        b = metrics.boundary_pr_image(pb, gbdrys, thresholds=scales)
        for k in ("cntR", "sumR", "cntP", "sumP"):
            sc["b" + k] = b[k]
    sc.update({"version": SCORE_VERSION, "image": iid, "segment_seconds": seg_s,
               "score_seconds": time.time() - t1, "notes": notes})
    harness.save_json(score_path, sc)
    sc["cached"] = False
    return name, iid, sc


# ---- output ---------------------------------------------------------------------------------------

def fmt_table(results, md=False):
    head = ["method", "images", "Covering ODS", "Covering OIS", "PRI ODS", "PRI OIS", "VI ODS",
            "VI OIS", "F ODS", "F OIS"]
    rows = []
    for name, r in results.items():
        a = r["scores"]
        rows.append([name, str(a["images"]),
                     "%.3f" % a["covering"]["ods"], "%.3f" % a["covering"]["ois"],
                     "%.3f" % a["pri"]["ods"], "%.3f" % a["pri"]["ois"],
                     "%.3f" % a["vi"]["ods"], "%.3f" % a["vi"]["ois"],
                     "%.3f" % a["boundary"]["ods_f"], "%.3f" % a["boundary"]["ois_f"]])
    return harness.table(head, rows, md)


def fmt_best_scales(results):
    out = []
    for name, r in results.items():
        a = r["scores"]
        out.append("%s: scales %s; ODS at Covering %s, PRI %s, VI %s, F %s; mean segments per scale %s"
                   % (name, a["scales"], a["covering"]["ods_scale"], a["pri"]["ods_scale"],
                      a["vi"]["ods_scale"], a["boundary"]["ods_scale"],
                      [round(x, 1) for x in a["per_scale"]["nseg_mean"]]))
    return out


# ---- main -----------------------------------------------------------------------------------------

def int_list(s):
    return [int(x) for x in s.split(",") if x]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", default="/work/shared/bsds", help="data folder (README.md there)")
    ap.add_argument("--split", default="val", choices=["train", "val"],
                    help="train or val (the test split is held out)")
    ap.add_argument("--limit", type=int, default=0, help="first N images (sorted by id); 0: all")
    ap.add_argument("--methods", default=",".join(ALL_METHODS))
    ap.add_argument("--diaseg", default=os.path.join(ROOT, "build", "app", "diaseg"),
                    help="the diaseg command; its folder's libdiaseg.so serves the Python package")
    ap.add_argument("--diaseg-mode", choices=["auto", "package", "cli"], default="auto",
                    help="auto: the Python package if it imports, else the command")
    ap.add_argument("--jobs", type=int, default=2, help="images in parallel (processes)")
    ap.add_argument("--threads", type=int, default=0,
                    help="OMP_NUM_THREADS per worker (default: cores / jobs, at least 1)")
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "bsds_cache"),
                    help="labels and per-image counts (outside the repository)")
    ap.add_argument("--rescore", action="store_true", help="recompute the counts from cached labels")
    ap.add_argument("--ks", type=int_list, default=None,
                    help="diaseg k list (default %s; hierarchy groupings %s)"
                    % (",".join(map(str, DIASEG_KS)), ",".join(map(str, DIASEG_KS_HIERARCHY))))
    ap.add_argument("--matvec", default="cpu", help="diaseg backend (cpu, opencl, auto)")
    ap.add_argument("--diaseg-opt", action="append", default=[], metavar="NAME=VALUE",
                    help="another diaseg option for every diaseg method (repeatable), e.g. "
                    "sigma_c=0.1; it is part of the cache key")
    ap.add_argument("--nev", type=int, default=16)
    ap.add_argument("--tol", type=float, default=1e-3, help="diaseg eigensolver tolerance")
    ap.add_argument("--fz-scales", type=int_list, default=FZ_SCALES)
    ap.add_argument("--slic-ns", type=int_list, default=SLIC_NS)
    ap.add_argument("--json", help="write every score, per scale, here")
    ap.add_argument("--markdown", help="write the table as Markdown here")
    args = ap.parse_args(argv)
    opts_kv = {}
    for item in args.diaseg_opt:
        if "=" not in item:
            raise SystemExit("--diaseg-opt %r: expected NAME=VALUE" % item)
        k, v = item.split("=", 1)
        try:
            v = json.loads(v)
        except ValueError:
            pass  # a string
        opts_kv[k.replace("-", "_")] = v
    args.diaseg_opt = opts_kv

    cache_real = os.path.realpath(args.cache)
    if cache_real == ROOT or cache_real.startswith(ROOT + os.sep):
        raise SystemExit("--cache must be outside the repository (%s)" % ROOT)
    imgdir = os.path.join(args.bsds, "images", args.split)
    gtdir = os.path.join(args.bsds, "groundTruth", args.split)
    if not os.path.isdir(imgdir) or not os.path.isdir(gtdir):
        raise SystemExit("no BSDS500 %s split under %s (images/%s, groundTruth/%s)"
                         % (args.split, args.bsds, args.split, args.split))
    ids = sorted(f[:-4] for f in os.listdir(imgdir) if f.endswith(".jpg"))
    ids = [i for i in ids if os.path.exists(os.path.join(gtdir, i + ".mat"))]
    if args.limit:
        ids = ids[:args.limit]
    methods = [m for m in args.methods.split(",") if m]
    for m in methods:
        method_config(m, args)
    if any(not m.startswith("diaseg-") for m in methods):
        try:
            import skimage  # noqa: F401
        except ImportError:
            raise SystemExit("the peers (felzenszwalb, slic) need scikit-image: "
                             "pip install scikit-image (e.g. python3 -m venv --system-site-packages "
                             "/tmp/venv-bsds && /tmp/venv-bsds/bin/pip install scikit-image), "
                             "or apt-get install python3-skimage")

    opts = {"diaseg": args.diaseg, "diaseg_lib": None, "diaseg_mode": "cli", "rescore": args.rescore}
    if any(m.startswith("diaseg-") for m in methods):
        lib = os.environ.get("DIASEG_LIBRARY") or os.path.join(os.path.dirname(
            os.path.abspath(args.diaseg)), "libdiaseg.so")
        mode = args.diaseg_mode
        if mode == "auto" and not have_image_reader():
            mode = "cli"      # the package takes arrays: it needs Pillow or matplotlib to read JPEGs
        if mode in ("auto", "package"):
            probe = subprocess.run(
                [sys.executable, "-c", "import sys; sys.path.insert(0, %r); import diaseg; "
                 "print(diaseg.__version__, diaseg._lib.PATH)" % os.path.join(ROOT, "app", "python")],
                capture_output=True, text=True,
                env=dict(os.environ, DIASEG_LIBRARY=lib) if os.path.exists(lib) else None)
            if probe.returncode == 0:
                opts.update(diaseg_mode="package", diaseg_lib=lib if os.path.exists(lib) else None)
                log("diaseg: Python package %s" % probe.stdout.strip())
            elif mode == "package":
                raise SystemExit("import diaseg failed: %s" % probe.stderr.strip()[-500:])
        if opts["diaseg_mode"] == "cli":
            if not os.access(args.diaseg, os.X_OK):
                raise SystemExit("no diaseg command at %s (build it, or pass --diaseg)" % args.diaseg)
            log("diaseg: command %s" % args.diaseg)

    tasks = []
    conf = {}
    for m in methods:
        scales, params = method_config(m, args)
        cdir = cache_dir(args, m, scales, params)
        conf[m] = (scales, params, cdir)
    # image-major order: partial runs cover the first images of every method
    for iid in ids:
        for m in methods:
            scales, params, cdir = conf[m]
            tasks.append((m, iid, os.path.join(imgdir, iid + ".jpg"), os.path.join(gtdir, iid + ".mat"),
                          cdir, scales, params, opts))
    threads = args.threads or max(1, (os.cpu_count() or 1) // max(1, args.jobs))
    log("%d images x %d methods, %d jobs x %d threads, cache %s"
        % (len(ids), len(methods), args.jobs, threads, args.cache))

    per = {m: {} for m in methods}
    t0 = time.time()
    done = 0
    if args.jobs > 1:
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        ex = cf.ProcessPoolExecutor(args.jobs, mp_context=ctx, initializer=harness.worker_init,
                                    initargs=(threads,))
        futs = [ex.submit(run_task, t) for t in tasks]
        it = cf.as_completed(futs)
    else:
        harness.worker_init(threads)
        ex = None
        it = (run_task(t) for t in tasks)
    try:
        for r in it:
            name, iid, sc = r.result() if ex else r
            per[name][iid] = sc
            done += 1
            if sc.get("cached"):
                what = "cached"
            else:
                what = "segment %s s, score %.1f s" % (
                    "cached" if sc["segment_seconds"] is None else "%.1f" % sc["segment_seconds"],
                    sc["score_seconds"])
            log("[%d/%d %.0f s] %s %s: %s%s" % (done, len(tasks), time.time() - t0, name, iid, what,
                                              ("; " + "; ".join(sc["notes"])) if sc["notes"] else ""))
    finally:
        if ex:
            ex.shutdown(cancel_futures=True)

    results = {}
    for m in methods:
        scales, params, cdir = conf[m]
        ims = [per[m][i] for i in ids]
        agg = metrics.aggregate(ims, scales)
        results[m] = {"scales": scales, "parameters": params, "cache": cdir, "scores": agg,
                      "notes": {i: per[m][i]["notes"] for i in ids if per[m][i]["notes"]},
                      "per_image": {i: {k: per[m][i][k] for k in
                                        ("cntR", "sumR", "cntP", "sumP", "cntR_best", "ri", "voi",
                                         "bcntR", "bsumR", "bcntP", "bsumP", "nseg")} for i in ids}}
    table = fmt_table(results)
    print(table)
    for line in fmt_best_scales(results):
        print(line)
    meta = {"split": args.split, "images": len(ids), "ids": ids, "command": " ".join(sys.argv),
            "diaseg_mode": opts["diaseg_mode"], "vi_log_base": 2,
            "max_dist": metrics.MAX_DIST, "seconds": time.time() - t0}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("BSDS500 %s, %d images (`%s`)\n\n" % (args.split, len(ids), meta["command"]))
            f.write(fmt_table(results, md=True) + "\n\n")
            for line in fmt_best_scales(results):
                f.write("- " + line + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
