#!/usr/bin/env python3
"""Fits the hierarchy's base-arc strengths (app/lib/arcs.c) on BSDS500 train.

    python3 tests/bsds/fit_arcs.py --bsds /work/shared/bsds --arc-data build/tests/arc_data \
        --data /tmp/arcs --limit 50 --out app/lib/arcs/model.inc

1. tests/bsds/arc_data (a program over the library) runs segment's default before the
   boundary network (--net-weight 0, --arc-weight 0.3) on each train image
   and writes, for every base arc of its hierarchy (the regions left once the specks merged),
   the APP_ARC_FEATURES numbers the library's ensemble reads, and which arc each crack is on.
2. Each arc's target: for each person, the share of its cracks with a pixel within 3 pixels of
   that person's boundary; the best of the persons (a boundary counts as right when one person
   drew it, as the benchmark's precision counts it).
3. A boosted ensemble of regression trees (scikit-learn's HistGradientBoostingRegressor, 200
   trees of 15 leaves, learning rate 0.05, every arc weighted by its length) is fit on them and
   written as C tables into --out.

The edge forest's map is one of the features: fit on images the forest was not fit on (the
library's forest saw all of train), build arc_data with -DDIASEG_FOREST_MODEL= a forest fit on
the other images (forest_data.py --skip N, fit_forest), as docs/QUALITY.md says.
Needs scikit-learn (pip install scikit-learn); the library needs nothing of it.
"""

import argparse
import datetime
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
from scipy import ndimage  # noqa: E402

import harness  # noqa: E402
import metrics  # noqa: E402

TOLERANCE = 3.0  # pixels: a crack with a pixel this near a person's boundary is on it
PARAMS = dict(max_iter=200, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40,
              l2_regularization=1.0, early_stopping=False, random_state=0)


def read_arcs(path):
    """One image's record from arc_data: (width, height, features, cracks, arcs)."""
    with open(path, "rb") as f:
        w, h, narcs, nfeat = (int(v) for v in np.fromfile(f, np.int32, 4))
        ncr = int(np.fromfile(f, np.int64, 1)[0])
        crack = np.fromfile(f, np.int64, ncr)
        arc = np.fromfile(f, np.int32, ncr)
        X = np.fromfile(f, np.float64, narcs * nfeat).reshape(narcs, nfeat)
    if len(crack) != ncr or X.shape != (narcs, nfeat):
        raise SystemExit("%s is truncated" % path)
    return w, h, X, crack, arc


def targets(w, h, crack, arc, narcs, bdrys):
    """Each arc's best person's share of cracks within TOLERANCE of that person's boundary,
    and its length in cracks."""
    p = crack // 2
    q = np.where(crack % 2 == 1, p + w, p + 1)
    length = np.bincount(arc, minlength=narcs).astype(np.float64)
    best = np.zeros(narcs)
    for b in bdrys:
        d = ndimage.distance_transform_edt(~b).ravel()
        near = np.minimum(d[p], d[q]) <= TOLERANCE
        best = np.maximum(best, np.bincount(arc, near.astype(np.float64), narcs) / length)
    return best, length


def trees_of(model):
    """The fitted ensemble as (base, [nodes of each tree]); a node (feature, threshold, left,
    right, value), feature -1 for a leaf."""
    base = float(np.ravel(model._baseline_prediction)[0])
    trees = []
    for it in model._predictors:
        nodes = it[0].nodes
        trees.append([(int(-1 if nd["is_leaf"] else nd["feature_idx"]), float(nd["num_threshold"]),
                       int(nd["left"]), int(nd["right"]), float(nd["value"])) for nd in nodes])
    return base, trees


def predict(base, trees, X):
    """The C evaluator's arithmetic (app_arc_predict), to check the tables against sklearn."""
    y = np.full(len(X), base)
    for t in trees:
        for r, x in enumerate(X):
            i = 0
            while t[i][0] >= 0:
                i = t[i][2] if x[t[i][0]] <= t[i][1] else t[i][3]
            y[r] += t[i][4]
    return y


def write_model(path, base, trees, note, check_x, check_y):
    roots, nodes = [], []
    for t in trees:
        roots.append(len(nodes))
        nodes.extend(t)
    with open(path + ".tmp", "w") as f:
        f.write("/* The base arcs' strengths (app/lib/arcs.c): a boosted ensemble of regression "
                "trees,\n * written by tests/bsds/fit_arcs.py; do not edit.\n")
        for line in note:
            f.write(" * %s\n" % line)
        f.write(" */\n#define ARC_MODEL_TREES %d\n" % len(trees))
        f.write("static const double arc_model_base = %.17g;\n" % base)
        f.write("static const int arc_model_root[ARC_MODEL_TREES] = {\n")
        for i in range(0, len(roots), 16):
            f.write("    %s,\n" % ", ".join(str(r) for r in roots[i:i + 16]))
        f.write("};\n/* a leaf's value or the threshold, feature (-1: a leaf), left, right */\n")
        f.write("static const app_arc_node arc_model_nodes[%d] = {\n" % len(nodes))
        if max(len(t) for t in trees) >= 32768:
            raise SystemExit("a tree of %d nodes: the tables index them in 16 bits"
                             % max(len(t) for t in trees))
        for fe, th, le, ri, va in nodes:
            if fe < 0:
                f.write("    {%.17g, -1, 0, 0},\n" % va)
            else:
                f.write("    {%.17g, %d, %d, %d},\n" % (th, fe, le, ri))
        f.write("};\n")
        f.write("/* arcs of the training set and the fitted model's predictions for them (scikit-learn's\n"
                " * own predict): tests/lib/test_hierarchy.c checks app_arc_predict against them */\n")
        f.write("#define ARC_MODEL_CHECKS %d\n" % len(check_y))
        f.write("static const double arc_model_check_x[ARC_MODEL_CHECKS][%d] = {\n" % check_x.shape[1])
        for x in check_x:
            f.write("    {%s},\n" % ", ".join("%.17g" % v for v in x))
        f.write("};\nstatic const double arc_model_check_y[ARC_MODEL_CHECKS] = {\n")
        f.write("    %s};\n" % ", ".join("%.17g" % v for v in check_y))
    os.replace(path + ".tmp", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bsds", default="/work/shared/bsds")
    ap.add_argument("--arc-data", required=True, help="the arc_data program (a build's tests/)")
    ap.add_argument("--data", required=True, help="a folder for the records (outside the tree)")
    ap.add_argument("--skip", type=int, default=0, help="leave out the first N train images")
    ap.add_argument("--limit", type=int, default=0, help="then take N images only")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", required=True, help="the model's C tables (app/lib/arcs/model.inc)")
    ap.add_argument("--note", default="", help="a line for the tables' header (the forest used)")
    args = ap.parse_args(argv)
    data = harness.outside_tree(args.data, ROOT)
    from sklearn.ensemble import HistGradientBoostingRegressor

    imgdir = os.path.join(args.bsds, "images", "train")
    gtdir = os.path.join(args.bsds, "groundTruth", "train")
    ids = sorted(f[:-4] for f in os.listdir(imgdir) if f.endswith(".jpg"))[args.skip:]
    if args.limit:
        ids = ids[:args.limit]
    if not ids:
        raise SystemExit("no BSDS500 train images under %s" % args.bsds)
    os.makedirs(data, exist_ok=True)
    harness.make_records(args.arc_data, imgdir, ids, data, ".arcs", args.jobs)
    Xs, ys, ws = [], [], []
    for iid in ids:
        w, h, X, crack, arc = read_arcs(os.path.join(data, iid + ".arcs"))
        _, bdrys = metrics.load_ground_truth(os.path.join(gtdir, iid + ".mat"))
        y, length = targets(w, h, crack, arc, len(X), bdrys)
        Xs.append(X)
        ys.append(y)
        ws.append(length)
    X, y, wt = np.concatenate(Xs), np.concatenate(ys), np.concatenate(ws)
    model = HistGradientBoostingRegressor(**PARAMS).fit(X, y, sample_weight=wt)
    base, trees = trees_of(model)
    check = X[:: max(1, len(X) // 500)]
    err = np.abs(predict(base, trees, check) - model.predict(check)).max()
    if err > 1e-9:
        raise SystemExit("the tables do not reproduce the model (%g)" % err)
    note = ["Fit on BSDS500 train images %s .. %s (%d images, %d arcs) on %s." % (
        ids[0], ids[-1], len(ids), len(X), datetime.date.today().isoformat()),
        "Targets, features and settings: tests/bsds/fit_arcs.py; docs/QUALITY.md."]
    if args.note:
        note.append(args.note)
    rows = np.linspace(0, len(X) - 1, 12).astype(int)
    write_model(args.out, base, trees, note, X[rows], model.predict(X[rows]))
    print("%d trees, %d nodes, %d arcs of %d images -> %s" % (
        len(trees), sum(len(t) for t in trees), len(X), len(ids), args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
