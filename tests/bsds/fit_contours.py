#!/usr/bin/env python3
"""Fits the weights of diaseg's boundary detector (a logistic combination of its parts) on BSDS500.

    python3 tests/bsds/fit_contours.py --bsds /work/shared/bsds --split train [--limit N]
        [--parts diaseg|standin] [--diaseg build/app/diaseg] [--pos 2000 --neg 2000 --band 2]
        [--seed 0] [--negative drop|clip] [--holdout 0.2] [--json OUT.json]

The detector combines P parts (oriented-gradient channels: brightness L, CIELAB a and b, texture,
each at 3 scales: 12, in that order), each part the max over orientations of its oriented
gradient, not thinned. For every image:

  parts    `diaseg contours IMG -o TMPDIR --parts -q` and TMPDIR/contour_parts.npy (float32,
           P x H x W); or, with --parts standin, a Python STAND-IN computed here (Sobel magnitudes of
           Gaussian-blurred CIELAB L, a, b and of a local-contrast texture channel, sigma 1, 2, 4: 12
           channels in the same order). The stand-in only exercises this script: its weights are
           not the detector's.
  labels   positive: a pixel on any human's boundary (seg2bmap of each human segmentation, the
           union); negative: farther than --band px (Euclidean, default 2) from every such pixel;
           the pixels in between are left out
  samples  up to --pos positives and --neg negatives, drawn without replacement with a generator
           seeded by (--seed, image id): the same pixels whatever --limit or the order

Then a logistic regression of the label on the parts (the features standardised for the solver,
the weights given back in the parts' own units): scikit-learn's LogisticRegression (no penalty,
lbfgs, C = inf) when it imports, else Newton's method (IRLS) in NumPy. The detector needs non-negative
weights: with --negative drop (default) the part of the most negative weight is left out and the
rest refitted, until none is negative (the dropped parts get weight 0 and are named); with
--negative clip the negative weights are set to 0 without a refit.

Output: the table of weights (raw and per standard deviation of the part), the intercept, a C array
literal in part order ready to paste, the training AUC and, with --holdout F, the AUC on a fraction
F of the images (chosen by the seed) of a fit on the others; --json saves all of it. The samples
of each image are cached under --cache (outside the repository), keyed by the parts' source (for
diaseg: a hash of the binary) and the sampling settings.
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
    from scipy import ndimage
    import harness
    import metrics
except ImportError as e:  # pragma: no cover
    sys.exit("fit_contours.py needs NumPy and SciPy (%s)" % e)

PART_NAMES = ["L_s1", "L_s2", "L_s3", "a_s1", "a_s2", "a_s3", "b_s1", "b_s2", "b_s3",
              "T_s1", "T_s2", "T_s3"]
STANDIN_SIGMAS = (1.0, 2.0, 4.0)
SAMPLES_VERSION = 1


log = harness.log
load_image = harness.load_image
file_hash = harness.file_hash


# ---- parts ------------------------------------------------------------------------------------------

def standin_parts(img):
    """A STAND-IN for diaseg's contour_parts.npy (12 x H x W float32), for developing the fit only:
    for sigma in 1, 2, 4 the Sobel gradient magnitude (skimage.filters.sobel) of the Gaussian-blurred
    CIELAB L/100, a/100, b/100, and of a texture channel: the local standard deviation of L/100 in a
    Gaussian window of 2 sigma. Order: L s1..s3, a s1..s3, b s1..s3, T s1..s3."""
    from skimage import color, filters
    lab = color.rgb2lab(img) / 100.0
    L = lab[..., 0]
    out = []
    for ch in range(3):
        for s in STANDIN_SIGMAS:
            out.append(filters.sobel(ndimage.gaussian_filter(lab[..., ch], s)))
    for s in STANDIN_SIGMAS:
        m = ndimage.gaussian_filter(L, 2 * s)
        v = np.maximum(ndimage.gaussian_filter(L * L, 2 * s) - m * m, 0.0)
        out.append(filters.sobel(np.sqrt(v)))
    return np.stack(out).astype(np.float32)


def diaseg_parts(img_path, diaseg, extra):
    with tempfile.TemporaryDirectory(prefix="bsds-parts-") as d:
        out = os.path.join(d, "out")
        cmd = [diaseg, "contours", img_path, "-o", out, "--parts", "-q"] + list(extra)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("%s: exit %d: %s" % (" ".join(cmd), p.returncode, p.stderr.strip()))
        parts = np.load(os.path.join(out, "contour_parts.npy"))
    if parts.ndim != 3:
        raise RuntimeError("contour_parts.npy of %s is %s, not P x H x W" % (img_path, parts.shape))
    return parts


# ---- labels and samples ---------------------------------------------------------------------------

def boundary_labels(gt_segs, band=2.0):
    """(positive, negative) boolean maps: positive = union of seg2bmap of the human segmentations;
    negative = Euclidean distance to the nearest positive > band."""
    pos = np.zeros(np.asarray(gt_segs[0]).shape, bool)
    for g in gt_segs:
        pos |= metrics.seg2bmap(g)
    if not pos.any():
        return pos, np.ones_like(pos)
    dist = ndimage.distance_transform_edt(~pos)
    return pos, dist > band


def sample_image(task):
    """Parts, labels and the balanced sample of one image: (iid, Xpos, Xneg, info)."""
    iid, img_path, gt_path, cpath, opts = task
    if cpath and os.path.exists(cpath):
        with np.load(cpath) as z:
            if int(z["version"]) == SAMPLES_VERSION:
                return iid, z["xpos"], z["xneg"], json.loads(str(z["info"])), True
    t0 = time.time()
    if opts["parts"] == "diaseg":
        parts = diaseg_parts(img_path, opts["diaseg"], opts["diaseg_args"])
    else:
        parts = standin_parts(load_image(img_path))
    t_parts = time.time() - t0
    gsegs, _ = metrics.load_ground_truth(gt_path)
    if parts.shape[1:] != gsegs[0].shape:
        raise RuntimeError("%s: parts %s, ground truth %s" % (iid, parts.shape, gsegs[0].shape))
    pos, neg = boundary_labels(gsegs, opts["band"])
    rng = np.random.default_rng([opts["seed"], int(iid)])
    ip = np.flatnonzero(pos.ravel())
    ineg = np.flatnonzero(neg.ravel())
    ip = np.sort(rng.choice(ip, min(opts["pos"], ip.size), replace=False))
    ineg = np.sort(rng.choice(ineg, min(opts["neg"], ineg.size), replace=False))
    flat = parts.reshape(parts.shape[0], -1)
    xpos = flat[:, ip].T.astype(np.float32)
    xneg = flat[:, ineg].T.astype(np.float32)
    info = {"P": int(parts.shape[0]), "shape": list(parts.shape[1:]), "npos_all": int(pos.sum()),
            "nneg_all": int(neg.sum()), "nband": int(pos.size - pos.sum() - neg.sum()),
            "parts_seconds": t_parts}
    if cpath:
        tmp = cpath + ".tmp.npz"
        np.savez_compressed(tmp, xpos=xpos, xneg=xneg, info=json.dumps(info), version=SAMPLES_VERSION)
        os.replace(tmp, cpath)
    return iid, xpos, xneg, info, False


# ---- logistic regression ----------------------------------------------------------------------------

def _newton(Z, y, iters=50, ridge=1e-8):
    """Logistic regression by Newton's method (IRLS) on standardised features Z (n x p), with an
    intercept; a tiny ridge keeps the Hessian invertible. Returns (w, b)."""
    n, p = Z.shape
    A = np.hstack([Z, np.ones((n, 1))])
    beta = np.zeros(p + 1)
    for _ in range(iters):
        eta = A @ beta
        mu = 1.0 / (1.0 + np.exp(-eta))
        g = A.T @ (mu - y) + ridge * np.r_[beta[:p], 0.0]
        W = mu * (1 - mu)
        H = (A * W[:, None]).T @ A + ridge * np.diag(np.r_[np.ones(p), 0.0])
        step = np.linalg.solve(H, g)
        beta -= step
        if np.max(np.abs(step)) < 1e-10:
            break
    return beta[:p], float(beta[p])


def logistic_fit(X, y, solver="auto"):
    """Unpenalised logistic regression of y on X (raw units). Returns (w_raw, b_raw, w_std, solver):
    w_std are the weights per standard deviation of each feature."""
    mu = X.mean(0)
    sd = X.std(0)
    sd[sd == 0] = 1.0
    Z = (X - mu) / sd
    used = solver
    if solver in ("auto", "sklearn"):
        try:
            from sklearn.linear_model import LogisticRegression
            m = LogisticRegression(C=np.inf, solver="lbfgs", max_iter=5000, tol=1e-10)  # no penalty
            m.fit(Z, y)
            ws, bs = m.coef_[0].astype(float), float(m.intercept_[0])
            used = "sklearn"
        except ImportError:
            if solver == "sklearn":
                raise SystemExit("--solver sklearn: scikit-learn is not installed")
            used = "newton"
    if used in ("auto", "newton"):
        ws, bs = _newton(Z, y.astype(float))
        used = "newton"
    w = ws / sd
    b = bs - float((ws * mu / sd).sum())
    return w, b, ws, used


def fit_nonneg(X, y, names, mode="drop", solver="auto"):
    """Logistic fit with non-negative weights. mode drop: refit without the part of the most
    negative weight until none is negative; clip: one fit, negative weights set to 0."""
    active = list(range(X.shape[1]))
    dropped = []
    while True:
        w, b, ws, used = logistic_fit(X[:, active], y, solver)
        if mode == "clip" or (w >= 0).all() or len(active) == 1:
            break
        k = int(np.argmin(w))
        dropped.append({"part": names[active[k]], "weight_when_dropped": float(w[k])})
        del active[k]
    W = np.zeros(X.shape[1])
    Ws = np.zeros(X.shape[1])
    W[active] = w
    Ws[active] = ws
    clipped = []
    if mode == "clip":
        for i in np.flatnonzero(W < 0):
            clipped.append({"part": names[i], "weight_before_clip": float(W[i])})
        W = np.maximum(W, 0)
        Ws = np.maximum(Ws, 0)
    return {"weights": W, "intercept": b, "weights_per_sd": Ws, "dropped": dropped, "clipped": clipped,
            "solver": used}


def auc(score, y):
    """Area under the ROC curve (Mann-Whitney U with mid-ranks for ties)."""
    from scipy.stats import rankdata
    y = np.asarray(y).astype(bool)
    r = rankdata(score)
    npos, nneg = int(y.sum()), int((~y).sum())
    if npos == 0 or nneg == 0:
        return float("nan")
    return float((r[y].sum() - npos * (npos + 1) / 2) / (npos * nneg))


def c_float(x):
    """A C float literal: 7 -> 7.0f, 1e-05 -> 1e-05f, 0.25 -> 0.25f."""
    t = "%.9g" % x
    if not any(c in t for c in ".eEn"):
        t += ".0"
    return t + "f"


def c_literal(weights, intercept, names, cname, comment):
    lines = ["/* %s */" % comment,
             "static const float %s[%d] = {" % (cname, len(weights))]
    for w, n in zip(weights, names):
        lines.append("    %s, /* %s */" % (c_float(w), n))
    lines.append("};")
    lines.append("static const float %s_bias = %s;" % (cname, c_float(intercept)))
    return "\n".join(lines)


# ---- main -----------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", default="/work/shared/bsds")
    ap.add_argument("--split", default="train", choices=["train", "val"])
    ap.add_argument("--limit", type=int, default=0, help="first N images (sorted by id); 0: all")
    ap.add_argument("--parts", choices=["diaseg", "standin"], default="diaseg",
                    help="diaseg: `diaseg contours --parts`; standin: Python stand-in (development only)")
    ap.add_argument("--diaseg", default=os.path.join(ROOT, "build", "app", "diaseg"))
    ap.add_argument("--diaseg-args", default="", help="extra options for `diaseg contours`")
    ap.add_argument("--names", default=",".join(PART_NAMES), help="part names, comma-separated, in order")
    ap.add_argument("--pos", type=int, default=2000, help="positives per image (at most)")
    ap.add_argument("--neg", type=int, default=2000, help="negatives per image (at most)")
    ap.add_argument("--band", type=float, default=2.0, help="negatives lie farther than this (px)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--negative", choices=["drop", "clip"], default="drop")
    ap.add_argument("--solver", choices=["auto", "sklearn", "newton"], default="auto")
    ap.add_argument("--holdout", type=float, default=0.2,
                    help="fraction of images for a held-out AUC (0: none); the weights use all")
    ap.add_argument("--c-name", default="dsg_contour_weights")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cache", default=os.path.join(tempfile.gettempdir(), "bsds_cache"))
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--json", help="write weights, intercept, C literal and statistics here")
    args = ap.parse_args(argv)

    for p in [args.cache] + ([args.json] if args.json else []):
        rp = os.path.realpath(p)
        if rp == ROOT or rp.startswith(ROOT + os.sep):
            raise SystemExit("%s is inside the repository: nothing derived from BSDS500 goes there" % p)
    imgdir = os.path.join(args.bsds, "images", args.split)
    gtdir = os.path.join(args.bsds, "groundTruth", args.split)
    if not os.path.isdir(imgdir) or not os.path.isdir(gtdir):
        raise SystemExit("no BSDS500 %s split under %s" % (args.split, args.bsds))
    ids = sorted(f[:-4] for f in os.listdir(imgdir) if f.endswith(".jpg"))
    ids = [i for i in ids if os.path.exists(os.path.join(gtdir, i + ".mat"))]
    if args.limit:
        ids = ids[:args.limit]
    names = [n for n in args.names.split(",") if n]

    key = {"parts": args.parts, "pos": args.pos, "neg": args.neg, "band": args.band, "seed": args.seed}
    if args.parts == "diaseg":
        d = os.path.abspath(args.diaseg)
        if not (os.path.isfile(d) and os.access(d, os.X_OK)):
            raise SystemExit("no diaseg command at %s (build it, or pass --diaseg)" % d)
        p = subprocess.run([d, "contours", "--help"], capture_output=True, text=True)
        if p.returncode != 0 or "--parts" not in (p.stdout + p.stderr):
            raise SystemExit("%s has no 'contours --parts' yet (diaseg contours --help: exit %d: %s); "
                             "build one that has it, or try the script with --parts standin"
                             % (d, p.returncode, (p.stderr or p.stdout).strip()[:300]))
        key.update(binary=file_hash(d), args=args.diaseg_args.split())
    else:
        key.update(standin=list(STANDIN_SIGMAS))
        log("parts: the Python STAND-IN (Sobel of blurred L, a, b, local contrast), not diaseg's")
    tag = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:10]
    cdir = None if args.no_cache else os.path.join(os.path.realpath(args.cache), args.split,
                                                   "contour-samples-%s-%s" % (args.parts, tag))
    if cdir:
        os.makedirs(cdir, exist_ok=True)
    opts = {"parts": args.parts, "diaseg": os.path.abspath(args.diaseg),
            "diaseg_args": args.diaseg_args.split(), "pos": args.pos, "neg": args.neg,
            "band": args.band, "seed": args.seed}
    tasks = [(i, os.path.join(imgdir, i + ".jpg"), os.path.join(gtdir, i + ".mat"),
              os.path.join(cdir, i + ".npz") if cdir else None, opts) for i in ids]
    log("%d %s images, parts %s, up to %d + %d samples each, cache %s"
        % (len(ids), args.split, args.parts, args.pos, args.neg, cdir))
    got = {}
    t0 = time.time()
    if args.jobs > 1 and len(tasks) > 1:
        import multiprocessing as mp
        ex = cf.ProcessPoolExecutor(args.jobs, mp_context=mp.get_context("spawn"))
        it = (f.result() for f in cf.as_completed([ex.submit(sample_image, t) for t in tasks]))
    else:
        ex = None
        it = (sample_image(t) for t in tasks)
    try:
        for n, (iid, xp, xn, info, cached) in enumerate(it, 1):
            got[iid] = (xp, xn, info)
            log("[%d/%d %.0f s] %s: %d + %d samples%s" % (n, len(tasks), time.time() - t0, iid,
                                                         len(xp), len(xn), " (cached)" if cached else ""))
    finally:
        if ex:
            ex.shutdown(cancel_futures=True)
    P = {got[i][2]["P"] for i in ids}
    if len(P) != 1:
        raise SystemExit("the images have different numbers of parts: %s" % sorted(P))
    P = P.pop()
    if len(names) != P:
        log("%d part names for %d parts: naming them part0..part%d" % (len(names), P, P - 1))
        names = ["part%d" % i for i in range(P)]

    def stack(sel):
        X = np.concatenate([np.concatenate([got[i][0], got[i][1]]) for i in sel]).astype(np.float64)
        y = np.concatenate([np.r_[np.ones(len(got[i][0])), np.zeros(len(got[i][1]))] for i in sel])
        return X, y

    X, y = stack(ids)
    fit = fit_nonneg(X, y, names, args.negative, args.solver)
    score = X @ fit["weights"] + fit["intercept"]
    train_auc = auc(score, y)
    prob = 1 / (1 + np.exp(-score))
    train_acc = float(((prob >= 0.5) == (y == 1)).mean())
    hold = None
    if args.holdout > 0 and len(ids) >= 2:
        rng = np.random.default_rng(args.seed)
        nh = max(1, int(round(args.holdout * len(ids))))
        hid = set(rng.choice(ids, nh, replace=False).tolist())
        tr = [i for i in ids if i not in hid]
        te = [i for i in ids if i in hid]
        Xt, yt = stack(tr)
        Xh, yh = stack(te)
        fh = fit_nonneg(Xt, yt, names, args.negative, args.solver)
        hold = {"images_fit": len(tr), "images_held_out": len(te), "held_out_ids": te,
                "auc_held_out": auc(Xh @ fh["weights"] + fh["intercept"], yh),
                "auc_held_out_best_single_part": max(auc(Xh[:, k], yh) for k in range(P))}
    single = [auc(X[:, k], y) for k in range(P)]
    mpos = X[y == 1].mean(0)
    mneg = X[y == 0].mean(0)

    src = "diaseg contours --parts" if args.parts == "diaseg" else "Python STAND-IN parts (not diaseg's)"
    comment = ("fitted by tests/bsds/fit_contours.py on BSDS500 %s, %d images, <= %d + %d px each "
               "(band %g, seed %d), %s; intercept for balanced classes"
               % (args.split, len(ids), args.pos, args.neg, args.band, args.seed, src))
    lit = c_literal(fit["weights"], fit["intercept"], names, args.c_name, comment)
    print("%d images, %d positives + %d negatives, %d parts (%s), solver %s"
          % (len(ids), int(y.sum()), int((1 - y).sum()), P, src, fit["solver"]))
    print("%-8s %12s %12s %10s %10s %8s" % ("part", "weight", "weight/sd", "mean pos", "mean neg", "AUC"))
    for k in range(P):
        print("%-8s %12.6g %12.6g %10.4g %10.4g %8.4f" % (names[k], fit["weights"][k],
                                                          fit["weights_per_sd"][k], mpos[k], mneg[k],
                                                          single[k]))
    print("intercept %.6g" % fit["intercept"])
    for d in fit["dropped"]:
        print("dropped %s (weight %.4g when dropped; refitted without it, weight 0)"
              % (d["part"], d["weight_when_dropped"]))
    for d in fit["clipped"]:
        print("clipped %s (weight %.4g set to 0, no refit)" % (d["part"], d["weight_before_clip"]))
    print("training: AUC %.4f, accuracy %.4f (balanced samples)" % (train_auc, train_acc))
    if hold:
        print("held out: AUC %.4f on %d images (fit on %d); best single part %.4f"
              % (hold["auc_held_out"], hold["images_held_out"], hold["images_fit"],
                 hold["auc_held_out_best_single_part"]))
    print(lit)
    if args.json:
        out = {"split": args.split, "images": len(ids), "ids": ids, "parts_source": args.parts,
               "standin": args.parts == "standin", "names": names, "sampling": key,
               "weights": fit["weights"].tolist(), "intercept": fit["intercept"],
               "weights_per_sd": fit["weights_per_sd"].tolist(), "dropped": fit["dropped"],
               "clipped": fit["clipped"], "solver": fit["solver"], "negative": args.negative,
               "npos": int(y.sum()), "nneg": int((1 - y).sum()), "train_auc": train_auc,
               "train_accuracy": train_acc, "single_part_auc": single, "mean_pos": mpos.tolist(),
               "mean_neg": mneg.tolist(), "holdout": hold, "c_literal": lit,
               "command": " ".join(sys.argv), "seconds": time.time() - t0}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
