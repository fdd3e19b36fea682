#!/usr/bin/env python3
"""What the eigensolver's tolerance does to diaseg's results, on BSDS500 photographs.

For each image and each tolerance (and a reference at 1e-6, diaseg's floor) this runs one
segment through the Python package and measures, against the run 10x tighter and against the
reference:
  - label agreement: the fraction of pixels whose labels agree after the best one-to-one matching
    of the two label sets (Hungarian matching on the contingency table), for k-means at k = 8 and
    for the default grouping (the hierarchy at the automatic scale; 1e-3 against 1e-4 only);
  - eigenvector error: for each vector, 1 - |cos| of its angle to the reference's span of the same
    number of vectors, the largest over the vectors (0: the same subspace);
  - products and solve time.
Docs: docs/QUALITY.md ("The eigensolver's tolerance"), docs/PERFORMANCE.md.

    python3 tests/bsds/run_tol.py --bsds ../shared/bsds --split val --limit 20 --json tol.json
"""
import argparse
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import harness  # noqa: E402

TOLS = [1e-3, 1e-4, 1e-5]
REF_TOL = 1e-6


def agreement(a, b):
    """Fraction of pixels labelled alike by a and b under the best one-to-one label matching."""
    import numpy as np
    from scipy.optimize import linear_sum_assignment
    a = np.unique(a.ravel(), return_inverse=True)[1]
    b = np.unique(b.ravel(), return_inverse=True)[1]
    table = np.zeros((a.max() + 1, b.max() + 1), np.int64)
    np.add.at(table, (a, b), 1)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum()) / a.size


def subspace_error(vecs, ref):
    """max over vectors of 1 - |projection norm| onto the reference span (vectors unit norm)."""
    import numpy as np
    m = min(len(vecs), len(ref))
    if m == 0:
        return float("nan")
    R = ref[:m].reshape(m, -1).astype(np.float64)
    Q, _ = np.linalg.qr(R.T)
    worst = 0.0
    for v in vecs[:m].reshape(m, -1).astype(np.float64):
        v = v / np.linalg.norm(v)
        worst = max(worst, 1.0 - float(np.linalg.norm(Q.T @ v)))
    return worst


def one_image(job):
    path, opts = job
    sys.path.insert(0, os.path.join(ROOT, "app", "python"))
    import diaseg
    img = harness.load_image(path)
    runs = {}
    for tol in TOLS + [REF_TOL]:
        km = diaseg.segment(img, k=8, grouping="kmeans", tol=tol, nev=opts["nev"],
                            matvec=opts["matvec"])
        runs[tol] = {"km": km.labels, "vec": km.eigenvectors,
                     "products": km.report["matvec_count_all_solves"],
                     "solve": km.timing["solve"]}
        # the default grouping: the hierarchy's labels come from the contours alone (its
        # eigenvectors draw pictures), so 1e-3 against 1e-4 shows whether they move at all
        if tol in (1e-3, 1e-4):
            runs[tol]["hier"] = diaseg.segment(img, tol=tol, nev=opts["nev"],
                                               matvec=opts["matvec"]).labels
    out = {"image": os.path.basename(path), "tols": {}}
    for tol in TOLS:
        tighter = float("%.0e" % (tol / 10))
        r, t, ref = runs[tol], runs[tighter], runs[REF_TOL]
        out["tols"][str(tol)] = {
            "kmeans_agreement_10x": agreement(r["km"], t["km"]),
            "kmeans_agreement_ref": agreement(r["km"], ref["km"]),
            "vector_error_ref": subspace_error(r["vec"], ref["vec"]),
            "solve_s": r["solve"], "products": r["products"],
        }
        if "hier" in r and "hier" in t:
            out["tols"][str(tol)]["hierarchy_agreement_10x"] = agreement(r["hier"], t["hier"])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bsds", default="/work/shared/bsds")
    ap.add_argument("--split", default="val", choices=["train", "val"])
    ap.add_argument("--limit", type=int, default=20, help="first N images (sorted); 0: all")
    ap.add_argument("--nev", type=int, default=8)
    ap.add_argument("--matvec", default="cpu")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--json")
    args = ap.parse_args()
    import numpy as np
    d = os.path.join(args.bsds, "images", args.split)
    paths = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jpg"))
    if args.limit:
        paths = paths[:args.limit]
    opts = {"nev": args.nev, "matvec": args.matvec}
    with multiprocessing.Pool(args.jobs, initializer=harness.worker_init,
                              initargs=(args.threads,)) as pool:
        results = pool.map(one_image, [(p, opts) for p in paths])
    rows = []
    summary = {}
    for tol in TOLS:
        per = [r["tols"][str(tol)] for r in results]
        s = {k: float(np.mean([p[k] for p in per])) for k in per[0]}
        s["kmeans_agreement_10x_min"] = float(np.min([p["kmeans_agreement_10x"] for p in per]))
        hier = "-"
        if "hierarchy_agreement_10x" in s:
            s["hierarchy_agreement_10x_min"] = float(np.min([p["hierarchy_agreement_10x"]
                                                             for p in per]))
            hier = "%.4f (min %.4f)" % (s["hierarchy_agreement_10x"],
                                        s["hierarchy_agreement_10x_min"])
        summary[str(tol)] = s
        rows.append(["%g" % tol, hier,
                     "%.3f (min %.3f)" % (s["kmeans_agreement_10x"], s["kmeans_agreement_10x_min"]),
                     "%.3f" % s["kmeans_agreement_ref"], "%.1e" % s["vector_error_ref"],
                     "%.3f" % s["solve_s"], "%.0f" % s["products"]])
    print(harness.table(["tol", "default labels vs 10x tighter", "k-means k=8 vs 10x tighter",
                         "k-means vs 1e-6", "eigenvector error vs 1e-6", "solve s (mean)",
                         "products (mean)"], rows, md=True))
    if args.json:
        harness.save_json(args.json, {"images": len(results), "summary": summary,
                                      "per_image": results})


if __name__ == "__main__":
    main()
