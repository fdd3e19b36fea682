#!/usr/bin/env python3
"""Checks of tests/bsds/fit_contours.py on toys (no data needed): the labels (positives on the
human boundaries, a band left out, negatives beyond), the logistic fit against known weights (both
solvers), the non-negativity rule (drop and refit; clip), the AUC and the C literal.

    python3 tests/bsds/test_fit_contours.py        (exit 0: all passed, 1: a check failed)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import fit_contours as FC
except ImportError as e:
    print("test_fit_contours.py: skipped, needs NumPy and SciPy (%s)" % e)
    sys.exit(77)

FAILURES = []
PASSED = []


def check(cond, what):
    (PASSED if cond else FAILURES).append(what)
    if not cond:
        print("FAILED:", what, file=sys.stderr)


def toy_labels():
    # 10 x 10, one human: left half 1, right half 2 (from column 5). seg2bmap marks column 4 (its
    # right neighbour differs): 10 positives. Distances to column 4: columns 3, 5 at 1 px, 2, 6 at
    # 2 px (the band, left out with band 2), columns 0, 1, 7, 8, 9 beyond: 50 negatives.
    s = np.ones((10, 10), int)
    s[:, 5:] = 2
    pos, neg = FC.boundary_labels([s], band=2)
    check(pos.sum() == 10 and pos[:, 4].all(), "labels: positives = column 4")
    check(neg.sum() == 50 and neg[:, [0, 1, 7, 8, 9]].all() and not neg[:, 2:7].any(),
          "labels: negatives = columns 0, 1, 7, 8, 9 (%d)" % neg.sum())
    # a second human splitting at row 5 adds row 4 (the union): 10 + 10 - 1 (shared pixel (4, 4))
    t = np.ones((10, 10), int)
    t[5:, :] = 2
    pos, _ = FC.boundary_labels([s, t], band=2)
    check(pos.sum() == 19, "labels: union of two humans, %d positives, expected 19" % pos.sum())


def toy_fit():
    rng = np.random.default_rng(1)
    n = 40000
    X = rng.random((n, 3)) * [1.0, 2.0, 0.5]
    w_true, b_true = np.array([3.0, 1.0, 2.0]), -3.0
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w_true + b_true)))).astype(float)
    for solver in ("newton", "sklearn"):
        try:
            f = FC.fit_nonneg(X, y, ["x0", "x1", "x2"], "drop", solver)
        except SystemExit:
            continue                                  # scikit-learn not installed
        check(np.allclose(f["weights"], w_true, atol=0.2) and abs(f["intercept"] - b_true) < 0.2
              and not f["dropped"], "fit (%s): weights %r intercept %r, true %r %r"
              % (solver, f["weights"], f["intercept"], w_true, b_true))
    a = FC.fit_nonneg(X, y, ["x0", "x1", "x2"], "drop", "newton")
    # a feature that lowers the odds: x3 with true weight -2; drop leaves it out and refits the
    # rest (which then recover the true weights: x3 is independent of them); clip keeps the fit
    X3 = np.hstack([X, rng.random((n, 1))])
    y3 = (rng.random(n) < 1 / (1 + np.exp(-(X3 @ np.r_[w_true, -2.0] + b_true)))).astype(float)
    f = FC.fit_nonneg(X3, y3, ["x0", "x1", "x2", "x3"], "drop", "newton")
    check([d["part"] for d in f["dropped"]] == ["x3"] and f["weights"][3] == 0 and
          f["dropped"][0]["weight_when_dropped"] < -1.5 and (f["weights"][:3] > 0.5).all(),
          "drop: x3 dropped (%r), weights %r" % (f["dropped"], f["weights"]))
    g = FC.fit_nonneg(X3, y3, ["x0", "x1", "x2", "x3"], "clip", "newton")
    check([d["part"] for d in g["clipped"]] == ["x3"] and g["weights"][3] == 0 and
          np.allclose(g["weights"][:3], w_true, atol=0.25), "clip: x3 clipped, weights %r" % g["weights"])
    # units: scaling a feature by 10 divides its weight by 10, the standardised weight is unchanged
    h = FC.fit_nonneg(X * [10, 1, 1], y, ["x0", "x1", "x2"], "drop", "newton")
    check(np.isclose(h["weights"][0] * 10, a["weights"][0], rtol=1e-6) and
          np.allclose(h["weights_per_sd"], a["weights_per_sd"], rtol=1e-6), "weights in the parts' units")


def toy_auc_literal():
    check(FC.auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75, "AUC of a 4-point toy: 3 of 4 pairs")
    check(FC.auc([1, 1, 1, 1], [0, 1, 0, 1]) == 0.5, "AUC with all ties: 0.5")
    lit = FC.c_literal([0.0, 2.5, 7.0, 1e-5], -1.0, ["a", "b", "c", "d"], "w", "toy")
    check("0.0f, /* a */" in lit and "2.5f, /* b */" in lit and "7.0f, /* c */" in lit and
          "1e-05f, /* d */" in lit and "static const float w[4] = {" in lit and
          "static const float w_bias = -1.0f;" in lit, "C literal:\n" + lit)


def main():
    for t in (toy_labels, toy_fit, toy_auc_literal):
        t()
    print("%d passed, %d failed" % (len(PASSED), len(FAILURES)))
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
