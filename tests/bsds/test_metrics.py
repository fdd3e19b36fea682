#!/usr/bin/env python3
"""Checks of tests/bsds/metrics.py (the BSDS500 benchmark's measures) on toy cases whose values are
worked out by hand below, then, when the data set is there, on two val images with trivial
segmentations against values computed independently here and values pinned once.

    python3 tests/bsds/test_metrics.py [--bsds /work/shared/bsds]

Exit 0: every check passed; 1: a check failed; 77: the toy checks passed but the data checks were
skipped (no data folder), or NumPy/SciPy are missing. Each failed check is listed on stderr, and the
last line reads 'N passed, N failed'."""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

try:
    import numpy as np
    import metrics as M
except ImportError as e:
    print("test_metrics.py: skipped, needs NumPy and SciPy (%s)" % e)
    sys.exit(77)

PASSED = []
FAILURES = []


def check(cond, what):
    if cond:
        PASSED.append(what)
    else:
        FAILURES.append(what)
        print("FAILED:", what, file=sys.stderr)
    return cond


def close(a, b, tol=1e-12):
    return abs(float(a) - float(b)) <= tol


def halves(h, w, col):
    """Label 1 left of column `col`, 2 from it on."""
    s = np.ones((h, w), dtype=np.int64)
    s[:, col:] = 2
    return s


def scores_of(segs, gts, bdrys=None):
    """Single-image, single-scale measures from evaluate_image."""
    r = M.evaluate_image(segs, gts, bdrys)
    cov = r["cntR"][0] / r["sumR"][0]
    R = r["bcntR"][0] / (r["bsumR"][0] or 1)
    P = r["bcntP"][0] / (r["bsumP"][0] or 1)
    return r, cov, r["ri"][0], r["voi"][0], R, P, float(M.fmeasure(R, P))


def toy_identical():
    # S = G = two halves of a 4 x 6 image: covering 1, PRI 1, VI 0, boundary P = R = F = 1.
    g = halves(4, 6, 3)
    r, cov, ri, vi, R, P, F = scores_of([g.copy()], [g])
    check(close(cov, 1) and close(ri, 1) and close(vi, 0), "identical: covering %g PRI %g VI %g" % (cov, ri, vi))
    check(close(R, 1) and close(P, 1) and close(F, 1), "identical: R %g P %g F %g" % (R, P, F))
    check(r["bsumP"][0] == 4, "identical: seg2bmap marks the 4 pixels left of the split, got %d" % r["bsumP"][0])
    # relabelled S (other label values) scores the same
    r2 = scores_of([g * 7 + 3], [g])
    check(close(r2[1], 1) and close(r2[2], 1) and close(r2[3], 0), "identical up to label names")


def toy_one_vs_two():
    # S: one region of N = 24 pixels; G: two halves of 12 pixels (4 x 6 image).
    #  covering C(S->G) = (12 * 12/24 + 12 * 12/24) / 24 = 0.5   (each half overlaps S by 12/24)
    #  cntP (S covered by G) = 24 * max(12/24, 12/24) = 12, sumP = 24
    #  Rand: n = [[12, 12]], N = 24, C(24, 2) = 276; pairs inside a G half: 2 C(12, 2) = 132 agree,
    #        the 144 pairs across the split disagree (S joins them): RI = 132/276 = 11/23
    #  VI: H(S) = 0, H(G) = 1 bit, I = 0: VI = 1 (bits)
    #  boundaries: S has none: P = 0 (0/0 counts as 0), R = 0/4, F = 0
    g = halves(4, 6, 3)
    s = np.ones_like(g)
    r, cov, ri, vi, R, P, F = scores_of([s], [g])
    check(close(cov, 0.5), "1 vs 2 regions: covering %r, expected 0.5" % cov)
    check(r["cntP"][0] == 12 and r["sumP"][0] == 24, "1 vs 2 regions: cntP %r sumP %r" % (r["cntP"][0], r["sumP"][0]))
    check(close(ri, 11 / 23), "1 vs 2 regions: PRI %r, expected 11/23" % ri)
    check(close(vi, 1.0), "1 vs 2 regions: VI %r, expected 1 bit" % vi)
    check(r["bsumP"][0] == 0 and r["bsumR"][0] == 4 and r["bcntR"][0] == 0 and F == 0,
          "1 vs 2 regions: boundary counts %r" % ([r[k][0] for k in ("bcntR", "bsumR", "bcntP", "bsumP")],))
    # Two humans: G and the one-region segmentation. cntR adds over the humans: 12 + 24 * 1 = 36 of
    # 48 (covering 0.75); PRI = (11/23 + 1)/2; VI = (1 + 0)/2; boundary sumR = 4 + 0.
    r, cov, ri, vi, R, P, F = scores_of([s], [g, np.ones_like(g)])
    check(r["cntR"][0] == 36 and r["sumR"][0] == 48, "two humans: cntR %r sumR %r" % (r["cntR"][0], r["sumR"][0]))
    check(close(ri, (11 / 23 + 1) / 2) and close(vi, 0.5), "two humans: PRI %r VI %r" % (ri, vi))
    # The reverse: S = two halves against G = one region: covering = 24 * max(12/24, 12/24)/24 = 0.5;
    # Rand and VI are symmetric (11/23, 1 bit); S's 4 boundary pixels match nothing: P = 0, R = 0/0.
    r, cov, ri, vi, R, P, F = scores_of([g], [s])
    check(close(cov, 0.5) and close(ri, 11 / 23) and close(vi, 1.0), "2 vs 1: %r %r %r" % (cov, ri, vi))
    check(r["bsumP"][0] == 4 and r["bcntP"][0] == 0 and r["bsumR"][0] == 0, "2 vs 1: boundary counts")


def toy_covering_unequal():
    # 2 x 5 image, G: columns 0-1 (4 px) | columns 2-4 (6 px); S: columns 0-2 (6 px) | 3-4 (4 px).
    #   G region A (4): overlap with S1 = 4/6, with S2 = 0 -> 4/6; weight 4
    #   G region B (6): with S1: 2/(6+6-2) = 0.2, with S2: 4/6 -> 4/6; weight 6
    #   covering = (4 * 4/6 + 6 * 4/6) / 10 = 2/3
    g = np.array([[1, 1, 2, 2, 2]] * 2)
    s = np.array([[1, 1, 1, 2, 2]] * 2)
    r, cov, ri, vi, *_ = scores_of([s], [g])
    check(close(cov, 2 / 3), "unequal regions: covering %r, expected 2/3" % cov)
    # Rand: n = [[4, 2], [0, 4]] (S rows, G cols); N = 10, C(10,2) = 45; sum n_u^2/2 = (36+16)/2 = 26,
    # sum n_v^2/2 = (16+36)/2 = 26, sum n^2 = 16+4+16 = 36: RI = 1 - (26+26-36)/45 = 29/45
    check(close(ri, 29 / 45), "unequal regions: PRI %r, expected 29/45" % ri)
    # VI = H(S|G) + H(G|S): H(S|G) = 0.6 * H(2/6, 4/6) (G's B splits 2/4) = 0.6 * 0.918295834;
    # H(G|S) = 0.6 * H(4/6, 2/6) (S1 splits 4/2): the same. VI = 1.2 * 0.9182958340544896
    check(close(vi, 1.2 * 0.9182958340544896, 1e-12), "unequal regions: VI %r" % vi)


def toy_tolerance():
    # 200 x 200 image: diagonal 282.84, tolerance 0.0075 * 282.84 = 2.12 px. S splits at column 100
    # (boundary pixels: column 99, 200 of them); G splits at 102 (boundary column 101: 2 px away,
    # inside) or at 103 (column 102: 3 px away, outside; a diagonal pair is farther still).
    s = halves(200, 200, 100)
    for col, inside in ((102, True), (103, False)):
        g = halves(200, 200, col)
        r, cov, ri, vi, R, P, F = scores_of([s], [g])
        want = 1.0 if inside else 0.0
        check(r["bsumP"][0] == 200 and r["bsumR"][0] == 200, "tolerance: 200 boundary pixels each")
        check(close(R, want) and close(P, want) and close(F, want),
              "boundary %d px away (%s the 2.12 px tolerance): R %g P %g F %g"
              % (col - 100, "inside" if inside else "outside", R, P, F))
    # the tolerance itself: 1 px on a 100 x 100 image (1.06 px) matches, sqrt(2) px does not
    b1 = np.zeros((100, 100), bool)
    b1[50, 50] = True
    for (y, x), ok in (((50, 51), True), ((51, 51), False), ((49, 50), True)):
        b2 = np.zeros_like(b1)
        b2[y, x] = True
        m1, m2 = M.correspond(b1, b2)
        check(m1.sum() == m2.sum() == (1 if ok else 0), "100x100: pixel at (%d,%d) %s" % (y, x, "matched" if ok else "unmatched"))


def toy_one_to_one():
    # Two S pixels within tolerance of one G pixel: only one is matched (100 x 100: 1.06 px).
    b1 = np.zeros((100, 100), bool)
    b2 = np.zeros_like(b1)
    b1[50, 50] = b1[50, 51] = True
    b2[50, 50] = True
    m1, m2 = M.correspond(b1, b2)
    check(m1.sum() == 1 and m2.sum() == 1 and m1[50, 50], "one-to-one: 2 S pixels, 1 G pixel -> 1 match (the closer)")
    # precision 1/2 and recall 1/1 through the boundary counts
    cntR, sumR, cntP, sumP = 0, 0, 0, 0
    cntR += int(m2.sum()); sumR += int(b2.sum()); cntP += int(m1.sum()); sumP += int(b1.sum())
    check((cntR, sumR, cntP, sumP) == (1, 1, 1, 2), "one-to-one: R 1/1, P 1/2")
    # Exact, not greedy: S a = (50,50), b = (49,50); G c = (50,50), d = (51,50). Greedy by distance
    # takes a-c (0 px) and leaves b and d unmatched (b-d is 2 px); the optimum pairs a-d and b-c
    # (1 px each): 2 matches.
    b1 = np.zeros((100, 100), bool)
    b2 = np.zeros_like(b1)
    b1[50, 50] = b1[49, 50] = True
    b2[50, 50] = b2[51, 50] = True
    m1, m2 = M.correspond(b1, b2)
    check(m1.sum() == 2 and m2.sum() == 2, "one-to-one: the maximum matching (2), not the greedy one (1)")
    # A chain: S on row 50, columns 10..89; G on row 51, columns 11..90 (80 pixels each). S (50, c)
    # pairs with G (51, c) for c = 11..89 (1 px); S (50, 10) has only G (51, 11), at sqrt(2) > 1.06,
    # and G (51, 90) nothing: 79 matches.
    b1 = np.zeros((100, 100), bool)
    b2 = np.zeros_like(b1)
    b1[50, 10:90] = True
    b2[51, 11:91] = True
    m1, m2 = M.correspond(b1, b2)
    check(m1.sum() == 79 and m2.sum() == 79 and not m1[50, 10] and not m2[51, 90], "chain: 79 matches, %d" % m1.sum())


def toy_thin_seg2bmap():
    # seg2bmap: label differs from the right, lower or lower-right neighbour; last row: right only;
    # last column: lower only. A 3 x 3 label image with a single different pixel in the middle:
    #   [1 1 1; 1 2 1; 1 1 1] -> (0,0) (lower-right differs), (0,1) (lower), (1,0) (right), (1,1)
    #   (right, lower), others not.
    s = np.array([[1, 1, 1], [1, 2, 1], [1, 1, 1]])
    want = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 0]], bool)
    check((M.seg2bmap(s) == want).all(), "seg2bmap on a 3x3 toy")
    # thinning leaves 1-pixel lines alone and reduces a 3-pixel-wide bar to a line
    bar = np.zeros((9, 20), bool)
    bar[3:6, 2:18] = True
    t = M.thin(bar)
    check(t.sum() < bar.sum() and (t.sum(axis=0)[4:16] == 1).all(), "thin: a 3-px bar becomes 1 px wide")
    line = np.zeros((9, 20), bool)
    line[4, 2:18] = True
    check((M.thin(line) == line).all(), "thin: a 1-px line is unchanged")
    try:
        from skimage.morphology import thin as sk_thin   # the same algorithm as bwmorph 'thin'
    except ImportError:
        return
    rng = np.random.default_rng(3)
    same = all((M.thin(b) == sk_thin(b)).all() for b in (rng.random((40, 50)) < p for p in (0.3, 0.5, 0.7)))
    check(same, "thin equals scikit-image's thin on random maps")


def toy_aggregation():
    # Two images, two scales each; counts chosen by hand.
    #  covering: A cntR [6, 9] / 10, B [8, 2] / 10. ODS: per scale (6+8)/20 = 0.7, (9+2)/20 = 0.55
    #            -> 0.7 at scale 1; OIS: A's best is scale 2 (9), B's scale 1 (8): 17/20 = 0.85
    #  PRI: A [0.7, 0.9], B [0.8, 0.6]: means [0.75, 0.75] -> ODS 0.75 (scale 1, the first);
    #       OIS (0.9 + 0.8)/2 = 0.85
    #  VI: A [2, 1], B [1, 3]: means [1.5, 2] -> ODS 1.5; OIS (1 + 1)/2 = 1
    #  boundary: A R = P = [5, 9]/10, B R = P = [8, 2]/10; summed R = P = [13, 11]/20 -> F [0.65,
    #       0.55], the line between them peaks at its end: ODS F 0.65; OIS: A at scale 2, B at
    #       scale 1: R = P = (9 + 8)/20 -> F 0.85
    #  best covering: cntR_best 9.5 and 8 over sumR 10 + 10 -> 0.875
    def im(cr, ri, voi, bc, best):
        return {"cntR": cr, "sumR": [10, 10], "cntP": [0, 0], "sumP": [10, 10], "ri": ri, "voi": voi,
                "bcntR": bc, "bsumR": [10, 10], "bcntP": bc, "bsumP": [10, 10], "nseg": [1, 2],
                "cntR_best": best}
    a = M.aggregate([im([6, 9], [0.7, 0.9], [2, 1], [5, 9], 9.5), im([8, 2], [0.8, 0.6], [1, 3], [8, 2], 8)],
                    scales=["s1", "s2"])
    c, p, v, b = a["covering"], a["pri"], a["vi"], a["boundary"]
    check(close(c["ods"], 0.7) and c["ods_scale"] == "s1" and close(c["ois"], 0.85) and close(c["best"], 0.875),
          "aggregation: covering %r" % c)
    check(close(p["ods"], 0.75) and p["ods_scale"] == "s1" and close(p["ois"], 0.85), "aggregation: PRI %r" % p)
    check(close(v["ods"], 1.5) and v["ods_scale"] == "s1" and close(v["ois"], 1.0), "aggregation: VI %r" % v)
    check(close(b["ods_f"], 0.65) and close(b["ois_f"], 0.85) and close(b["ois_r"], 0.85),
          "aggregation: boundary %r" % b)
    # covering OIS takes the LAST scale among ties (ff(end)), boundary OIS the FIRST (ff(1)):
    # image with equal covering at both scales but different sumR weights is not possible (sumR is
    # constant per image), so check the index choice through the boundary counts instead:
    # A: R = P at both scales 0.5 but counts 5/10 and 10/20 -> the first (5/10) is summed.
    ia = im([5, 5], [0.5, 0.5], [1, 1], [5, 10], 5)
    ia["bsumR"] = ia["bsumP"] = [10, 20]
    a = M.aggregate([ia], scales=[1, 2])
    check(close(a["boundary"]["ois_r"], 0.5) and a["boundary"]["ods_scale"] == 1, "boundary OIS takes the first best scale")
    # the interpolation of maxF: R = [0.9, 0.3], P = [0.3, 0.9]: F = 0.45 at both scales; along the
    # line, at d = 49/99: r = 0.9 - 0.6 d, p = 0.3 + 0.6 d, r p = 0.36 - (0.6 (0.5 - d))^2,
    # F = 2 r p / 1.2 = 0.6 - (0.3/99)^2 / 0.6 = 0.59998469...
    pos, r, pp, f = M.max_f([0.9, 0.3], [0.3, 0.9])
    check(close(f, 0.6 - (0.3 / 99) ** 2 / 0.6, 1e-12) and close(pos, 49 / 99, 1e-12),
          "maxF interpolates between scales: F %r at %r" % (f, pos))
    check(close(M.fmeasure(0, 0), 0), "F of R = P = 0 is 0")


# ---- soft boundary maps (boundary_pr_image, average_precision, aggregate_pr) ----------------------------

def vline(h, w, col, r0, r1, value=1.0):
    """An h x w float map with `value` on column col, rows r0..r1-1."""
    m = np.zeros((h, w))
    m[r0:r1, col] = value
    return m


def toy_thresholds():
    t = M.pb_thresholds(99)
    check(t.size == 99 and close(t[0], 0.01) and close(t[-1], 0.99) and np.allclose(np.diff(t), 0.01),
          "99 thresholds: 0.01, 0.02, .., 0.99")
    t = M.pb_thresholds(9)
    check(np.allclose(t, np.arange(1, 10) / 10), "9 thresholds: 0.1 .. 0.9")
    check(np.allclose(M.pb_thresholds(1), [0.5]), "1 threshold: 0.5")


def counts_at(r, i):
    return tuple(r[k][i] for k in ("cntR", "sumR", "cntP", "sumP"))


def toy_boundary_pr():
    # 100 x 100 image: tolerance 0.0075 * 141.42 = 1.06 px. Human boundary: column 50, rows 10..89
    # (80 px). Thresholds 0.1, .., 0.9 (nthresh 9); map values chosen off the thresholds.
    gt = vline(100, 100, 50, 10, 90).astype(bool)
    # (1) a perfect map of strength 0.65, two identical humans: at t <= 0.6 every pixel matches:
    #     cntR = sumR = 2 x 80 (recall sums over humans), cntP = sumP = 80 (a machine pixel counts
    #     once); at t >= 0.7 the map is empty: cntR = 0, sumP = 0 (R = P = F = 0 there).
    r = M.boundary_pr_image(vline(100, 100, 50, 10, 90, 0.65), [gt, gt], nthresh=9)
    check(all(counts_at(r, i) == (160, 160, 80, 80) for i in range(6)) and
          all(counts_at(r, i) == (0, 160, 0, 0) for i in range(6, 9)),
          "perfect map: counts %r" % ([counts_at(r, i) for i in range(9)],))
    a = M.aggregate_pr([r])
    F = a["curve"]["f"]
    check(all(close(f, 1) for f in F[:6]) and all(close(f, 0) for f in F[6:]),
          "perfect map: F = 1 at every threshold below its value, 0 above: %r" % F)
    check(close(a["ods_f"], 1) and close(a["ois_f"], 1) and close(a["ods_t"], 0.1),
          "perfect map: ODS F 1 at t 0.1 (the first), OIS F 1: %r %r %r" % (a["ods_f"], a["ois_f"], a["ods_t"]))
    # AP: R = P = 1 at t <= 0.6, R = P = 0 (empty map) above: unique(R) = {0, 1} with P 0 and 1,
    # the interpolated P(r) = r at r = 0, 0.01, .., 1: sum = 50.5, x 0.01 = 0.505 (the benchmark
    # counts the empty map's (0, 0) point, so a perfect binary map does not get AP 1)
    check(close(a["ap"], 0.505), "perfect map: AP %r, expected 0.505" % a["ap"])
    # (2) the map 3 px off the human line on a 200 x 200 image (tolerance 2.12 px): nothing matches,
    #     R = 0, P = 0; 2 px off: everything matches (the positive control)
    gt2 = vline(200, 200, 100, 20, 180).astype(bool)
    for shift, want in ((3, 0), (2, 160)):
        r = M.boundary_pr_image(vline(200, 200, 100 + shift, 20, 180, 0.5), [gt2], nthresh=9)
        check(all(counts_at(r, i) == (want, 160, want, 160) for i in range(5)),
              "map %d px off the boundary: counts %r, expected cntR = cntP = %d of 160"
              % (shift, counts_at(r, 0), want))
    a = M.aggregate_pr([M.boundary_pr_image(vline(200, 200, 103, 20, 180, 0.5), [gt2], nthresh=9)])
    check(close(a["ods_f"], 0) and close(a["ois_f"], 0) and max(a["curve"]["r"]) == 0,
          "map 3 px off: recall 0 everywhere, F 0")
    # (3) half the boundary (rows 10..49 of 10..89): one-to-one, so 40 of the 80 human pixels
    #     match (the 40 machine pixels cannot cover more): R = 1/2, P = 1, F = 2/3
    r = M.boundary_pr_image(vline(100, 100, 50, 10, 50, 0.5), [gt], nthresh=9)
    check(counts_at(r, 0) == (40, 80, 40, 40), "half the boundary: counts %r, expected (40, 80, 40, 40)"
          % (counts_at(r, 0),))
    a = M.aggregate_pr([r])
    check(close(a["curve"]["r"][0], 0.5) and close(a["curve"]["p"][0], 1) and close(a["ods_f"], 2 / 3),
          "half the boundary: R %r P %r F %r, expected 1/2, 1, 2/3"
          % (a["curve"]["r"][0], a["curve"]["p"][0], a["ods_f"]))
    # (4) thinning: a 3-px-wide band over the line (columns 49..51) is thinned to one line before
    #     the matching: P = 1 (76..80 px, all matched); unthinned, 240 px of which 80 match (the
    #     matching is one-to-one): P = 1/3 exactly, R = 1
    band = np.zeros((100, 100))
    band[10:90, 49:52] = 0.5
    r = M.boundary_pr_image(band, [gt], nthresh=3)
    c = counts_at(r, 0)
    check(76 <= c[3] <= 80 and c[2] == c[3] and c[0] == c[3], "thinned band: counts %r, expected one "
          "matched line of 76..80 px" % (c,))
    r = M.boundary_pr_image(band, [gt], nthresh=3, thin_pb=False)
    check(counts_at(r, 0) == (80, 80, 80, 240), "unthinned band: counts %r, expected (80, 80, 80, 240)"
          % (counts_at(r, 0),))
    # (5) graded: the true line at 0.85, a false line (column 70) at 0.35. t = 0.1..0.3: both lines,
    #     R = 1, P = 1/2; t = 0.4..0.8: the true one, R = P = 1; t = 0.9: empty, R = P = 0.
    pb = vline(100, 100, 50, 10, 90, 0.85) + vline(100, 100, 70, 10, 90, 0.35)
    r = M.boundary_pr_image(pb, [gt], nthresh=9)
    a = M.aggregate_pr([r])
    want_p = [0.5] * 3 + [1] * 5 + [0]
    check(np.allclose(a["curve"]["p"], want_p) and np.allclose(a["curve"]["r"], [1] * 8 + [0]),
          "graded map: P %r" % a["curve"]["p"])
    # ODS: F = 2/3 at t <= 0.3; on the line from t = 0.3 to 0.4, F = 2p/(1+p) < 1 until its end:
    # ODS F = 1 first at t = 0.4; discrete the same
    check(close(a["ods_f"], 1) and close(a["ods_t"], 0.4) and close(a["ods_t_discrete"], 0.4)
          and close(a["curve"]["f"][0], 2 / 3), "graded map: ODS F %r at t %r" % (a["ods_f"], a["ods_t"]))
    # AP: unique(R) = {0, 1}; of the thresholds with R = 1 the LAST one (P = 1) counts, as unique
    # did in the MATLAB of the benchmark: P(r) = r, AP 0.505; with the first one (P = 1/2, modern
    # MATLAB's default) P(r) = r/2, AP 0.2525
    check(close(a["ap"], 0.505) and close(M.average_precision(a["curve"]["r"], a["curve"]["p"], "first"), 0.2525),
          "graded map: AP %r (last occurrence), expected 0.505 and 0.2525 (first)" % a["ap"])
    # (6) an empty map: zero counts of the machine, AP 0 (one distinct R)
    r = M.boundary_pr_image(np.zeros((100, 100)), [gt], nthresh=5)
    a = M.aggregate_pr([r])
    check(all(counts_at(r, i) == (0, 80, 0, 0) for i in range(5)) and a["ap"] == 0 and a["ods_f"] == 0,
          "empty map: counts 0, AP 0, F 0")


def toy_aggregate_pr():
    # Two images, three thresholds, counts by hand (cntR = cntP in each, so F = 2 c / (sumR + sumP)):
    #  A: cntR = cntP = [8, 6, 0], sumR 10, sumP [16, 6, 0]: F = [16/26, 12/16, 0]: best t2
    #  B: cntR = cntP = [9, 3, 0], sumR 10, sumP [10, 10, 0]: F = [0.9, 0.3, 0]: best t1
    #  summed: R = [17/20, 9/20, 0], P = [17/26, 9/16, 0]: F = [34/46, 18/36, 0]; the lines between
    #  do not beat the first point: ODS F = 34/46 at t1 (0.25)
    #  OIS: A at t2 (6, 10, 6, 6) + B at t1 (9, 10, 9, 10): R = 15/20, P = 15/16, F = 30/36
    #  AP: P(r) = 1.25 r on [0, 0.45]: sum over r = 0..0.45 = 0.0125 x 1035 = 12.9375; on (0.45, 0.85]
    #  P = 9/16 + (r - 0.45)/0.4 x D, D = 17/26 - 9/16 = 38/416: 40 points, 22.5 + 20.5 D; above
    #  0.85: 0. AP = 0.01 x (12.9375 + 22.5 + 20.5 x 38/416)
    th = [0.25, 0.5, 0.75]
    A = {"thresh": th, "cntR": [8, 6, 0], "sumR": [10] * 3, "cntP": [8, 6, 0], "sumP": [16, 6, 0]}
    B = {"thresh": th, "cntR": [9, 3, 0], "sumR": [10] * 3, "cntP": [9, 3, 0], "sumP": [10, 10, 0]}
    a = M.aggregate_pr([A, B])
    check(close(a["ods_f"], 34 / 46) and close(a["ods_t"], 0.25) and close(a["ods_f_discrete"], 34 / 46),
          "two images: ODS F %r at %r, expected 34/46 at 0.25" % (a["ods_f"], a["ods_t"]))
    check(close(a["ois_f"], 30 / 36) and close(a["ois_r"], 0.75) and close(a["ois_p"], 15 / 16),
          "two images: OIS F %r, expected 30/36" % a["ois_f"])
    ap = 0.01 * (12.9375 + 22.5 + 20.5 * 38 / 416)
    check(close(a["ap"], ap, 1e-12), "two images: AP %r, expected %r" % (a["ap"], ap))
    # per image (eval_bdry_img.txt): each image's own maxF. B's best is its first point (0.9); A's
    # line from (R, P) = (0.8, 0.5) to (0.6, 1) peaks inside, above its points' 0.75: at d of the
    # way, r = 0.8 - 0.2 d, p = 0.5 + 0.5 d, F = 2 r p / (r + p) = 2 r p / (1.3 + 0.3 d), largest
    # at d = 0.9371 (dF/dd = 0); of the 100 steps k/99 the nearest, d = 93/99 = 0.9394
    d = 93 / 99
    fa = 2 * (0.8 - 0.2 * d) * (0.5 + 0.5 * d) / (1.3 + 0.3 * d)
    check(close(a["per_image"][0]["f"], fa) and close(a["per_image"][0]["t"], 0.25 + 0.25 * d)
          and close(a["per_image"][1]["f"], 0.9) and close(a["per_image"][1]["t"], 0.25),
          "two images: per-image best F %r, expected %r and 0.9" % (a["per_image"], fa))
    # A alone: its ODS is that interior point, the threshold interpolated alike (t = 0.25 + 0.25 d)
    a1 = M.aggregate_pr([A])
    check(close(a1["ods_f"], fa) and close(a1["ods_t"], 0.25 + 0.25 * d) and close(a1["ods_r"], 0.8 - 0.2 * d)
          and close(a1["ods_f_discrete"], 0.75) and close(a1["ods_t_discrete"], 0.5),
          "A alone: ODS F %r at t %r, expected %r at %r (discrete 0.75 at 0.5)"
          % (a1["ods_f"], a1["ods_t"], fa, 0.25 + 0.25 * d))
    # OIS ties: C has F = 1/2 at t1 (5/10 matched, 5 of 10 machine pixels) and at t2 (5/10, 10 of
    # 20): the FIRST (ff(1) of collect_eval_bdry.m) is summed. With D = (8, 10, 8, 10) at both:
    # R = P = 13/20, OIS F 0.65 (the last would give P = 18/30, F 0.624)
    C = {"thresh": [0.25, 0.5], "cntR": [5, 5], "sumR": [10, 10], "cntP": [5, 10], "sumP": [10, 20]}
    D = {"thresh": [0.25, 0.5], "cntR": [8, 8], "sumR": [10, 10], "cntP": [8, 8], "sumP": [10, 10]}
    a2 = M.aggregate_pr([C, D])
    check(close(a2["ois_f"], 0.65) and close(a2["ois_p"], 0.65),
          "OIS takes each image's first best threshold: F %r, expected 0.65" % a2["ois_f"])
    # AP of a three-point curve: R = [1, 0.5, 0], P = [0.5, 1, 0]: P(r) = 2r on [0, 0.5] (sum 25.5),
    # 1.5 - r on (0.5, 1] (sum 37.25): 0.6275
    check(close(M.average_precision([1, 0.5, 0], [0.5, 1, 0]), 0.6275), "AP of a 3-point curve 0.6275")


# ---- on the data --------------------------------------------------------------------------------------

# Values of the two first val images (101085, 101087) computed once with metrics.py (see the README);
# the one-region values are also recomputed independently below.
# Tolerances: 1e-6 for the region measures, 1e-3 for the boundary ones (a different but equally
# optimal matching may pick other pixels).
PINNED = {
    "one":  {"covering": 0.142028340, "pri": 0.142022783, "vi": 3.486006483, "f": 0.0},
    "grid": {"covering": 0.242867999, "pri": 0.855180771, "vi": 3.416634166,
             "f": 0.150191819, "r": 0.106278802, "p": 0.255944931},
}


def data_checks(bsds):
    gtdir = os.path.join(bsds, "groundTruth", "val")
    ids = sorted(f[:-4] for f in os.listdir(gtdir) if f.endswith(".mat"))[:2]
    check(ids == ["101085", "101087"], "the first two val images are 101085 and 101087: %r" % ids)
    images = {"one": [], "grid": []}
    indep = {"cntR": 0.0, "sumR": 0.0, "ri": [], "vi": []}
    for iid in ids:
        gsegs, gbd = M.load_ground_truth(os.path.join(gtdir, iid + ".mat"))
        check(all((M.thin(M.seg2bmap(g)) == b).all() for g, b in zip(gsegs, gbd)),
              "%s: the data's Boundaries are thin(seg2bmap(Segmentation))" % iid)
        h, w = gsegs[0].shape
        one = np.ones((h, w), np.int64)
        grid = (np.arange(h)[:, None] * 4 // h) * 4 + np.arange(w)[None, :] * 4 // w
        r1 = M.evaluate_image([one], gsegs, gbd)
        rg = M.evaluate_image([grid], gsegs, gbd)
        images["one"].append(r1)
        images["grid"].append(rg)
        # independent one-region values: a GT region R is covered by S = the image with overlap
        # |R|/N, so cntR = sum |R|^2 / N; Rand = sum_R C(|R|, 2) / C(N, 2); VI = H(G) in bits
        N = h * w
        ri = vi = 0.0
        for g in gsegs:
            a = np.bincount(g.ravel())[1:].astype(float)
            a = a[a > 0]
            indep["cntR"] += (a * a).sum() / N
            indep["sumR"] += N
            ri += (a * (a - 1) / 2).sum() / (N * (N - 1) / 2)
            q = a / N
            vi += -(q * np.log2(q)).sum()
        indep["ri"].append(ri / len(gsegs))
        indep["vi"].append(vi / len(gsegs))
        check(close(r1["cntR"][0], sum((np.bincount(g.ravel())[1:].astype(float) ** 2).sum() / N for g in gsegs), 1e-6),
              "%s: one-region cntR = sum |R|^2 / N" % iid)
        check(close(r1["ri"][0], indep["ri"][-1], 1e-12) and close(r1["voi"][0], indep["vi"][-1], 1e-9),
              "%s: one-region PRI %r VI %r vs %r %r" % (iid, r1["ri"][0], r1["voi"][0], indep["ri"][-1], indep["vi"][-1]))
        check(r1["bsumP"][0] == 0 and r1["bcntR"][0] == 0, "%s: one region has no boundary" % iid)
        check(rg["nseg"][0] == 16 and rg["bsumP"][0] > 0, "%s: the 4x4 grid has 16 regions" % iid)
        check(rg["bcntP"][0] <= rg["bsumP"][0] and rg["bcntR"][0] <= rg["bsumR"][0], "%s: counts bounded" % iid)
    got = {}
    for name, ims in images.items():
        a = M.aggregate(ims, [name])
        got[name] = {"covering": a["covering"]["ods"], "pri": a["pri"]["ods"], "vi": a["vi"]["ods"],
                     "f": a["boundary"]["ods_f"], "r": a["boundary"]["ods_r"], "p": a["boundary"]["ods_p"]}
        print("%s: %s" % (name, ", ".join("%s %.9f" % kv for kv in got[name].items())))
    check(close(got["one"]["covering"], indep["cntR"] / indep["sumR"], 1e-9), "one region: covering (independent)")
    check(close(got["one"]["pri"], np.mean(indep["ri"]), 1e-12), "one region: PRI (independent)")
    check(close(got["one"]["vi"], np.mean(indep["vi"]), 1e-9), "one region: VI (independent)")
    for name, want in PINNED.items():
        for k, v in want.items():
            if v is not None:
                tol = 1e-3 if k in ("f", "r", "p") else 1e-6
                check(close(got[name][k], v, tol), "%s: %s %.6f, pinned %.6f" % (name, k, got[name][k], v))
    # sane ranges whatever the pins say
    g = got["grid"]
    check(0.1 < g["covering"] < 0.6 and 0.5 < g["pri"] < 0.9 and 1.5 < g["vi"] < 5 and 0.02 < g["f"] < 0.5,
          "grid: sane ranges %r" % g)


def toy_repeated_scales():
    # a hierarchy's neighbouring thresholds often give the same partition: evaluate_image reuses
    # the counts of the scale before, which must equal scoring each scale on its own (a partition
    # under other label values, and another partition into as many regions, included)
    g = halves(6, 8, 4)
    a = halves(6, 8, 3)
    b = a * 5 + 1                       # a, other label values
    c = a.copy()
    c[0, 0] = 3                         # a with one pixel apart
    d = halves(6, 8, 6)                 # two regions too, split elsewhere
    one = np.ones((6, 8), dtype=np.int64)
    segs = [a, a.copy(), b, d, c, one, one.copy()]
    together = M.evaluate_image(segs, [g])
    alone = [M.evaluate_image([x], [g]) for x in segs]
    same = all(together[k][i] == alone[i][k][0] for i in range(len(segs)) for k in together
               if k != "cntR_best")
    check(same, "repeated scales: counts equal to scoring each scale alone")
    check(together["nseg"] == [2, 2, 2, 2, 3, 1, 1], "repeated scales: nseg %r" % together["nseg"])


def ucm_of(levels_by_pair, labels):
    """A ucm2 (2H+1 x 2W+1) of a label image: the crack between two pixels of labels a != b holds
    levels_by_pair[(min, max)], 0 inside a region and on the frame's cracks, every corner the
    strongest crack meeting there (diaseg's ucm.npy convention)."""
    h, w = labels.shape
    u = np.zeros((2 * h + 1, 2 * w + 1))
    for i in range(h):
        for j in range(w):
            a = labels[i, j]
            if j + 1 < w and labels[i, j + 1] != a:
                u[2 * i + 1, 2 * j + 2] = levels_by_pair[tuple(sorted((a, labels[i, j + 1])))]
            if i + 1 < h and labels[i + 1, j] != a:
                u[2 * i + 2, 2 * j + 1] = levels_by_pair[tuple(sorted((a, labels[i + 1, j])))]
    p = np.pad(u, 1)
    u[::2, ::2] = np.maximum.reduce([p[:-2, 1:-1], p[2:, 1:-1], p[1:-1, :-2], p[1:-1, 2:]])[::2, ::2]
    return u


def toy_ucm():
    # a 6 x 8 image: region 1 the left half, regions 2 and 3 the right half's top and bottom rows;
    # 2 and 3 merge at level 0.3, then the halves at 0.7
    lab = np.ones((6, 8), dtype=np.int64)
    lab[:3, 4:] = 2
    lab[3:, 4:] = 3
    u = ucm_of({(1, 2): 0.7, (1, 3): 0.7, (2, 3): 0.3}, lab)
    cuts = M.ucm_cuts(u, [0.1, 0.5, 0.9])
    check(np.array_equal(M.relabel(cuts[0]), M.relabel(lab)), "ucm cut at 0.1: the 3 regions")
    check(np.array_equal(M.relabel(cuts[1]), halves(6, 8, 4)), "ucm cut at 0.5: the 2 halves")
    check(cuts[2].max() == 1 and cuts[2].min() == 1, "ucm cut at 0.9: one region")
    pb = M.ucm_boundary_map(u)
    check(pb.shape == (6, 8), "ucm boundary map: %s" % (pb.shape,))
    # the corner map at a threshold is the cut's seg2bmap boundary (axis-aligned boundaries)
    for t, cut in zip((0.1, 0.5), cuts[:2]):
        check(np.array_equal(pb >= t, M.seg2bmap(cut)),
              "ucm boundary map at %g equals the cut's seg2bmap" % t)
    check(not (pb >= 0.9).any(), "ucm boundary map at 0.9: empty")
    # so scoring the corners (the benchmark on a ucm2) gives the cut's boundary counts
    g = halves(6, 8, 4)
    gb = M.thin(M.seg2bmap(g))
    b = M.boundary_pr_image(pb, [gb], thresholds=[0.1, 0.5])
    r = M.evaluate_image(cuts[:2], [g], [gb])
    check(all(b[k] == r["b" + k] for k in ("cntR", "sumR", "cntP", "sumP")),
          "ucm corner counts %r equal the cuts' %r" % (b["cntP"], r["bcntP"]))
    # a frame at the top level (what diaseg wrote before 2026-11-28) cuts the same regions but
    # puts the last row and column into the benchmark's boundary map at every level below it
    framed = u.copy()
    framed[0, :] = framed[-1, :] = framed[:, 0] = framed[:, -1] = 0.7
    check(all(np.array_equal(a, c) for a, c in zip(M.ucm_cuts(framed, [0.1, 0.5, 0.9]), cuts)),
          "a top-level frame: the same cuts")
    border = np.zeros((6, 8), bool)
    border[-1, :] = border[:, -1] = True
    got = M.ucm_boundary_map(framed) >= 0.5
    check(np.array_equal(got, (pb >= 0.5) | border),
          "a top-level frame: %d boundary pixels, want the cut's and the last row and column"
          % got.sum())


def main():
    ap = argparse.ArgumentParser(description="checks of the BSDS500 measures")
    ap.add_argument("--bsds", default="/work/shared/bsds")
    args = ap.parse_args()
    for t in (toy_identical, toy_one_vs_two, toy_covering_unequal, toy_tolerance, toy_one_to_one,
              toy_thin_seg2bmap, toy_aggregation, toy_thresholds, toy_boundary_pr, toy_aggregate_pr,
              toy_repeated_scales, toy_ucm):
        t()
    skipped = 0
    if os.path.isdir(os.path.join(args.bsds, "groundTruth", "val")):
        data_checks(args.bsds)
    else:
        print("no BSDS500 val split under %s: data checks skipped" % args.bsds)
        skipped = 1
    print("%d passed, %d failed%s" % (len(PASSED), len(FAILURES), ", %d skipped" % skipped if skipped else ""))
    if FAILURES:
        return 1
    return 77 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
