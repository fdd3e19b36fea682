"""BSDS500 segmentation benchmark measures (Arbelaez, Maire, Fowlkes, Malik, TPAMI 2011), in NumPy/SciPy.

A re-implementation of the benchmark code of the public BSDS500 release (bench/benchmarks/*.m and
bench/source/match.cc), written from its definitions; the per-image counts and the data-set
aggregation follow that code line by line (the MATLAB names are given in the comments):

  per image and per scale t (evaluate_image; evaluation_reg_image.m, evaluation_bdry_image.m)
    region covering  cntR[t] = sum over the M human segmentations, over their regions R, of
                     |R| * max_{R' in S} |R n R'| / |R u R'|;  sumR[t] = sum of the |R| (= M * N)
                     (and cntP, sumP: the covering of S by all the human regions, kept, not reported)
    PRI              ri[t]  = mean over the humans of the Rand index (contingency-table formula)
    VI               voi[t] = mean over the humans of H(S) + H(G) - 2 I(S, G), in bits (log2, as
                     match_segmentations2.m computes it)
    boundaries       bcntR[t] = sum over humans of the human boundary pixels matched one-to-one to
                     S's thinned boundary map within 0.0075 x the image diagonal;
                     bsumR[t] = sum over humans of their boundary pixels;
                     bcntP[t] = S's boundary pixels matched to at least one human; bsumP[t] = S's
                     boundary pixels
  over the data set (aggregate; collect_eval_reg.m, collect_eval_bdry.m)
    covering  ODS = max_t sum cntR / sum sumR; OIS = sum_i cntR_i[t_i] / sum_i sumR_i[t_i] with t_i the
              last scale of image i with the largest cntR/sumR; Best = per-human-region best over
              all scales, summed
    PRI, VI   ODS = best over t of the image mean (VI: lowest); OIS = mean over images of each
              image's best
    boundary  ODS F = the benchmark's maxF: the largest F along the straight lines between the
              aggregated (R, P) of consecutive scales (100 steps each); OIS: each image's first scale
              of largest F, its counts summed over the images, F of the summed R and P

  soft boundary maps, per image and threshold t (boundary_pr_image; evaluation_bdry_image.m)
    the binary map pb >= t, thinned, matched to each human as above: cntR, sumR, cntP, sumP per t,
    thresholds linspace(1/(n+1), 1 - 1/(n+1), n) (pb_thresholds; the benchmark's n is 99)
  over the data set (aggregate_pr; collect_eval_bdry.m)
    ODS F = maxF on the summed counts (threshold interpolated alike); OIS: each image's first
    threshold of largest F, counts summed; AP = Area_PR (average_precision): P interpolated
    linearly in R at R = 0, 0.01, .., 1 (0 outside the curve's range), summed x 0.01

The one-to-one matching (correspond) is exact: a minimum-cost perfect matching of the benchmark's
assignment graph (real pairs within the tolerance at cost round(100 d), every pixel matchable to
an "unmatched" dummy at the outlier cost), solved with SciPy's LAPJVsp
(min_weight_full_bipartite_matching). The benchmark's CSA solves the same problem on a graph whose
outlier edges are a random sparse subset; see tests/bsds/README.md.
"""

import math

import numpy as np
from scipy import ndimage, sparse
from scipy.sparse.csgraph import min_weight_full_bipartite_matching

MAX_DIST = 0.0075      # fraction of the image diagonal (evaluation_bdry_image.m, correspondPixels.cc)
OUTLIER_COST = 100.0   # multiple of maxDist (correspondPixels.cc)
MULTIPLIER = 100       # CSA's integer weights (match.cc)

__all__ = [
    "relabel", "contingency", "rand_index", "variation_of_information", "covering_counts",
    "seg2bmap", "thin", "correspond", "boundary_counts", "evaluate_image", "aggregate",
    "fmeasure", "max_f", "load_ground_truth", "ucm_cuts", "ucm_boundary_map",
    "pb_thresholds", "boundary_pr_image", "average_precision", "aggregate_pr",
]


# ---- regions ------------------------------------------------------------------------------------

def relabel(seg):
    """Labels 1..K in order of first value (np.unique order), int64; any integer labels in."""
    seg = np.asarray(seg)
    _, inv = np.unique(seg, return_inverse=True)
    return inv.reshape(seg.shape).astype(np.int64) + 1


def contingency(a, b):
    """Joint histogram n[u-1, v-1] = #pixels with a == u and b == v, for 1-based labels a, b.
    Rows/columns run to max(a), max(b): labels absent from the image give empty rows/columns, as
    in match_segmentations2.m."""
    a = np.asarray(a, dtype=np.int64).ravel()
    b = np.asarray(b, dtype=np.int64).ravel()
    if a.shape != b.shape:
        raise ValueError("segmentations differ in size")
    if a.size and (a.min() < 1 or b.min() < 1):
        raise ValueError("labels must be >= 1")
    na, nb = int(a.max()), int(b.max())
    n = np.bincount((a - 1) * nb + (b - 1), minlength=na * nb)
    return n.reshape(na, nb).astype(np.float64)


def rand_index(n):
    """Rand index from a contingency table (match_segmentations2.m, rand_index)."""
    n = np.asarray(n, dtype=np.float64)
    N = n.sum()
    nu = n.sum(axis=1)
    nv = n.sum(axis=0)
    pairs = N * (N - 1) / 2
    return 1.0 - ((nu * nu).sum() / 2 + (nv * nv).sum() / 2 - (n * n).sum()) / pairs


def variation_of_information(n):
    """VI = H1 + H2 - 2 MI in bits (log2, as match_segmentations2.m) from a contingency table."""
    n = np.asarray(n, dtype=np.float64)
    joint = n / n.sum()
    p1 = joint.sum(axis=1)
    p2 = joint.sum(axis=0)
    h1 = -np.sum(p1[p1 > 0] * np.log2(p1[p1 > 0]))
    h2 = -np.sum(p2[p2 > 0] * np.log2(p2[p2 > 0]))
    nz = joint > 0
    outer = np.outer(p1, p2)
    mi = np.sum(joint[nz] * np.log2(joint[nz] / outer[nz]))
    return h1 + h2 - 2.0 * mi


def covering_counts(seg, gts):
    """The covering counts of evaluation_reg_image.m for one segmentation seg (labels >= 1,
    consecutive) and the list gts of human segmentations (1-based labels).

    Returns (cntR, sumR, cntP, sumP, matchesGT) where matchesGT[r] is, for every region r of every
    human segmentation (concatenated in order, labels 1..max of each), its best overlap with a
    region of seg (match_segmentations.m), and cntR = sum_r |r| matchesGT[r], sumR = sum_r |r|;
    cntP, sumP: the same for seg's regions against all the human regions."""
    seg = np.asarray(seg, dtype=np.int64)
    nseg = int(seg.max())
    seg_area = np.bincount(seg.ravel(), minlength=nseg + 1)[1:].astype(np.float64)
    matches_gt, areas_gt = [], []
    matches_seg = np.zeros(nseg)
    for gt in gts:
        n = contingency(gt, seg)                       # gt regions x seg regions
        gt_area = n.sum(axis=1)
        union = gt_area[:, None] + seg_area[None, :] - n
        with np.errstate(invalid="ignore", divide="ignore"):
            acc = np.where(union > 0, n / np.where(union > 0, union, 1), 0.0)
        matches_gt.append(acc.max(axis=1) if acc.shape[1] else np.zeros(acc.shape[0]))
        areas_gt.append(gt_area)
        if acc.shape[0]:
            matches_seg = np.maximum(matches_seg, acc.max(axis=0))
    mg = np.concatenate(matches_gt)
    ag = np.concatenate(areas_gt)
    return float((ag * mg).sum()), float(ag.sum()), float((seg_area * matches_seg).sum()), \
        float(seg_area.sum()), mg


# ---- boundaries ---------------------------------------------------------------------------------

def seg2bmap(seg):
    """Boundary map of a label image, one pixel wide (seg2bmap.m; the same map as
    seg2bdry(seg, 'imageSize') of the benchmark): pixel (i, j) is a boundary pixel when its label
    differs from its right, lower or lower-right neighbour; on the last row only the right one
    counts, on the last column only the lower one, the last pixel never."""
    s = np.asarray(seg)
    h, w = s.shape
    b = np.zeros((h, w), dtype=bool)
    b[:, :-1] |= s[:, :-1] != s[:, 1:]
    b[:-1, :] |= s[:-1, :] != s[1:, :]
    b[:-1, :-1] |= s[:-1, :-1] != s[1:, 1:]
    b[-1, :] = False
    b[-1, :-1] = s[-1, :-1] != s[-1, 1:]
    b[:, -1] = False
    b[:-1, -1] = s[:-1, -1] != s[1:, -1]
    b[-1, -1] = False
    return b


def _thin_luts():
    # MATLAB bwmorph(..., 'thin', Inf): Lam, Lee & Suen 1992, the two-subiteration algorithm of
    # Guo & Hall 1989. Neighbour bits (code of ndimage.correlate with _THIN_MASK): bit0 = E,
    # bit1 = NE, bit2 = N, bit3 = NW, bit4 = W, bit5 = SW, bit6 = S, bit7 = SE (x1..x8).
    g1 = np.zeros(256, bool)
    g2 = np.zeros(256, bool)
    g3 = np.zeros(256, bool)
    g3p = np.zeros(256, bool)
    for c in range(256):
        x = [(c >> i) & 1 for i in range(8)]
        # G1: the crossing number X_H(p) = 1
        xh = sum(1 for i in (0, 2, 4, 6) if not x[i] and (x[i + 1] or x[(i + 2) % 8]))
        g1[c] = xh == 1
        # G2: 2 <= min(n1, n2) <= 3
        n1 = sum(1 for k in (1, 3, 5, 7) if x[k] or x[k - 1])
        n2 = sum(1 for k in (1, 3, 5, 7) if x[k] or x[(k + 1) % 8])
        g2[c] = 2 <= min(n1, n2) <= 3
        # G3 (first subiteration): (x2 | x3 | !x8) & x1 == 0; G3' (second): (x6 | x7 | !x4) & x5 == 0
        g3[c] = not ((x[1] or x[2] or not x[7]) and x[0])
        g3p[c] = not ((x[5] or x[6] or not x[3]) and x[4])
    return g1 & g2 & g3, g1 & g2 & g3p


_THIN_LUT1, _THIN_LUT2 = _thin_luts()
_THIN_MASK = np.array([[8, 4, 2], [16, 0, 1], [32, 64, 128]], dtype=np.int32)


def thin(bmap):
    """Morphological thinning to 1-pixel lines, repeated until nothing changes (bwmorph 'thin' Inf)."""
    skel = np.asarray(bmap, dtype=bool).astype(np.int32)
    while True:
        before = int(skel.sum())
        for lut in (_THIN_LUT1, _THIN_LUT2):
            code = ndimage.correlate(skel, _THIN_MASK, mode="constant", cval=0)
            skel[lut[code] & (skel > 0)] = 0
        if int(skel.sum()) == before:
            return skel.astype(bool)


def _offsets(max_dist):
    r = int(math.ceil(max_dist))
    out = []
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            d2 = dx * dx + dy * dy
            if d2 <= max_dist * max_dist:
                out.append((dy, dx, d2))
    return out


def correspond(bmap1, bmap2, max_dist=MAX_DIST, outlier_cost=OUTLIER_COST):
    """One-to-one correspondence of two boundary maps (correspondPixels / match.cc), exact.

    Pixels closer than max_dist * diagonal may be paired at cost round(100 * distance); a pixel
    left unpaired costs ceil(100 * outlier_cost * max_dist * diagonal), and so does each pair (the
    benchmark's outlier-to-outlier edge): the minimum-cost perfect matching of that assignment
    graph. Returns (match1, match2): boolean maps of the matched pixels of each map."""
    b1 = np.asarray(bmap1).astype(bool)
    b2 = np.asarray(bmap2).astype(bool)
    if b1.shape != b2.shape:
        raise ValueError("boundary maps differ in size")
    h, w = b1.shape
    idiag = math.sqrt(h * h + w * w)
    md = max_dist * idiag
    ow = int(math.ceil(outlier_cost * md * MULTIPLIER))
    m1 = np.zeros_like(b1)
    m2 = np.zeros_like(b2)
    y1, x1 = np.nonzero(b1)
    if y1.size == 0 or not b2.any():
        return m1, m2
    id2 = np.full((h, w), -1, dtype=np.int64)
    id2[b2] = np.arange(int(b2.sum()))
    ei, ej, ew = [], [], []
    idx1 = np.arange(y1.size)
    for dy, dx, d2 in _offsets(md):
        y2 = y1 + dy
        x2 = x1 + dx
        ok = (y2 >= 0) & (y2 < h) & (x2 >= 0) & (x2 < w)
        j = np.full(y1.size, -1, dtype=np.int64)
        j[ok] = id2[y2[ok], x2[ok]]
        sel = j >= 0
        if sel.any():
            ei.append(idx1[sel])
            ej.append(j[sel])
            ew.append(np.full(int(sel.sum()), int(round(math.sqrt(d2) * MULTIPLIER)), np.int64))
    if not ei:
        return m1, m2
    ei = np.concatenate(ei)
    ej = np.concatenate(ej)
    ew = np.concatenate(ew)
    # keep only the matchable pixels, numbered 0..n1-1 and 0..n2-1
    u1, ei = np.unique(ei, return_inverse=True)
    u2, ej = np.unique(ej, return_inverse=True)
    n1, n2 = u1.size, u2.size
    # rows: the n1 pixels of map 1, then n2 dummies ("map-2 pixel j unmatched");
    # columns: the n2 pixels of map 2, then n1 dummies ("map-1 pixel i unmatched").
    # A real pair (i, j) frees the dummies of i and j, which then pair with each other at the
    # outlier cost (the benchmark's outlier-to-outlier edge), so every matching of real pairs is a
    # perfect matching here with the benchmark's cost. All weights + 1: csgraph drops explicit
    # zeros, and a perfect matching has n1 + n2 edges whatever it is, so the optimum is unchanged.
    r1 = np.arange(n1)
    r2 = np.arange(n2)
    rows = np.concatenate([ei, r1, n1 + r2, n1 + ej])
    cols = np.concatenate([ej, n2 + r1, r2, n2 + ei])
    vals = np.concatenate([ew, np.full(n1, ow), np.full(n2, ow), np.full(ei.size, ow)]) + 1
    g = sparse.csr_matrix((vals.astype(np.float64), (rows, cols)), shape=(n1 + n2, n2 + n1))
    g.sum_duplicates()
    col = min_weight_full_bipartite_matching(g)[1]     # col[row] for each row
    real = col[:n1] < n2
    i = r1[real]
    j = col[:n1][real]
    flat1 = (y1[u1[i]], x1[u1[i]])
    m1[flat1] = True
    ys2, xs2 = np.nonzero(b2)
    m2[ys2[u2[j]], xs2[u2[j]]] = True
    return m1, m2


def boundary_counts(seg, gt_bdrys, max_dist=MAX_DIST, thin_pb=True):
    """(cntR, sumR, cntP, sumP) of evaluation_bdry_image.m for one segmentation: its boundary map
    (seg2bmap, then thinned) matched to every human boundary map in turn."""
    bmap = seg2bmap(seg)
    if thin_pb:
        bmap = thin(bmap)
    acc = np.zeros_like(bmap)
    cnt_r = sum_r = 0
    for g in gt_bdrys:
        g = np.asarray(g).astype(bool)
        m1, m2 = correspond(bmap, g, max_dist)
        acc |= m1
        sum_r += int(g.sum())
        cnt_r += int(m2.sum())
    return cnt_r, sum_r, int(acc.sum()), int(bmap.sum())


# ---- a hierarchy (ucm2) ----------------------------------------------------------------------------

def ucm_cuts(ucm, thresholds):
    """The segmentations of an ultrametric contour map on the doubled grid (2H+1 x 2W+1, pixel
    (i, j) at (2i+1, 2j+1)) at each threshold: bwlabel(ucm2 <= t) read at the pixels
    (evaluation_reg_image.m; 4- and 8-connectivity agree on a ucm2 whose corners hold the
    strongest boundary meeting there)."""
    return [ndimage.label(np.asarray(ucm) <= t)[0][1::2, 1::2] for t in thresholds]


def ucm_boundary_map(ucm):
    """The soft boundary map (H x W) the benchmark scores for a ucm2: its corners,
    ucm2(3:2:end, 3:2:end) (evaluation_bdry_image.m), thresholded pb >= t and thinned there."""
    return np.asarray(ucm, dtype=np.float32)[2::2, 2::2]


# ---- one image, all scales ------------------------------------------------------------------------

def evaluate_image(segs, gt_segs, gt_bdrys=None, boundaries=True, max_dist=MAX_DIST):
    """The benchmark's per-image counts for the segmentations segs (one per scale, any integer
    labels) against the human segmentations gt_segs (1-based) and boundary maps gt_bdrys (default:
    thin(seg2bmap(g)) of each g in gt_segs, which is exactly what the data set's Boundaries hold). Returns a dict of lists
    (one entry per scale) plus the scalar cntR_best (evaluation_reg_image.m's evFile3)."""
    gt_segs = [np.asarray(g, dtype=np.int64) for g in gt_segs]
    if gt_bdrys is None:
        gt_bdrys = [thin(seg2bmap(g)) for g in gt_segs]
    out = {k: [] for k in ("cntR", "sumR", "cntP", "sumP", "ri", "voi",
                           "bcntR", "bsumR", "bcntP", "bsumP", "nseg")}
    best_gt = None
    areas = np.concatenate([np.bincount(g.ravel(), minlength=int(g.max()) + 1)[1:] for g in gt_segs])
    prev = None
    for seg in segs:
        s = relabel(seg)
        if prev is not None and np.array_equal(s, prev):
            # the same partition as the scale before (a hierarchy's neighbouring thresholds often
            # give one): the same counts, without scoring it again
            for k in out:
                out[k].append(out[k][-1])
            continue
        prev = s
        out["nseg"].append(int(s.max()))
        ri = voi = 0.0
        for g in gt_segs:
            n = contingency(s, g)
            ri += rand_index(n)
            voi += variation_of_information(n)
        out["ri"].append(ri / len(gt_segs))
        out["voi"].append(voi / len(gt_segs))
        cr, sr, cp, sp, mg = covering_counts(s, gt_segs)
        for k, v in zip(("cntR", "sumR", "cntP", "sumP"), (cr, sr, cp, sp)):
            out[k].append(v)
        best_gt = mg if best_gt is None else np.maximum(best_gt, mg)
        if boundaries:
            br, bsr, bp, bsp = boundary_counts(s, gt_bdrys, max_dist)
        else:
            br = bsr = bp = bsp = 0
        for k, v in zip(("bcntR", "bsumR", "bcntP", "bsumP"), (br, bsr, bp, bsp)):
            out[k].append(v)
    out["cntR_best"] = float((areas * best_gt).sum()) if best_gt is not None else 0.0
    return out


# ---- data set aggregation -------------------------------------------------------------------------

def fmeasure(r, p):
    """2PR / (P + R), 0 where P + R = 0 (collect_eval_bdry.m)."""
    r = np.asarray(r, dtype=np.float64)
    p = np.asarray(p, dtype=np.float64)
    s = p + r
    return 2 * p * r / (s + (s == 0))


def _ratio(c, s):
    c = np.asarray(c, dtype=np.float64)
    s = np.asarray(s, dtype=np.float64)
    return c / (s + (s == 0))


def max_f(R, P):
    """collect_eval_bdry.m's maxF: the best F at the scales and along the straight lines between
    consecutive scales (linspace(0, 1) steps). Returns (position, R, P, F), position a fractional
    scale index (0-based)."""
    R = np.asarray(R, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    best = (0.0, float(R[0]), float(P[0]), float(fmeasure(R[0], P[0])))
    d = np.linspace(0.0, 1.0, 100)
    for i in range(1, R.size):
        r = R[i] * d + R[i - 1] * (1 - d)
        p = P[i] * d + P[i - 1] * (1 - d)
        f = fmeasure(r, p)
        for k in range(d.size):            # strictly greater, first wins, as the MATLAB loop
            if f[k] > best[3]:
                best = (i - 1 + d[k], float(r[k]), float(p[k]), float(f[k]))
    return best


def aggregate(images, scales=None):
    """Data-set scores from per-image results (evaluate_image dicts, same scales in the same order).

    Returns a dict: covering {ods, ods_scale, ois, best}, pri {ods, ods_scale, ois}, vi {ods,
    ods_scale, ois}, boundary {ods_f, ods_r, ods_p, ods_scale (fractional between list entries),
    ods_f_discrete, ois_f, ois_r, ois_p}, per_scale {covering, pri, vi, r, p, f, nseg_mean}."""
    if not images:
        raise ValueError("no images")
    T = len(images[0]["cntR"])
    if any(len(im["cntR"]) != T for im in images):
        raise ValueError("images have different numbers of scales")
    scales = list(range(T)) if scales is None else list(scales)

    def arr(k):
        return np.array([im[k] for im in images], dtype=np.float64)   # images x scales

    cntR, sumR = arr("cntR"), arr("sumR")
    # covering (collect_eval_reg.m)
    Rt = _ratio(cntR.sum(0), sumR.sum(0))
    t_ods = int(np.argmax(Rt))                                          # first maximum
    Ri = _ratio(cntR, sumR)
    last_best = [int(np.flatnonzero(r == r.max())[-1]) for r in Ri]    # ff(end)
    ois_c = sum(cntR[i, t] for i, t in enumerate(last_best))
    ois_s = sum(sumR[i, t] for i, t in enumerate(last_best))
    best_total = sum(im["cntR_best"] for im in images) / sumR[:, 0].sum()
    # PRI / VI
    ri, voi = arr("ri"), arr("voi")
    gri, gvoi = ri.mean(0), voi.mean(0)
    t_ri, t_voi = int(np.argmax(gri)), int(np.argmin(gvoi))
    # boundaries (collect_eval_bdry.m)
    bcR, bsR, bcP, bsP = arr("bcntR"), arr("bsumR"), arr("bcntP"), arr("bsumP")
    R = _ratio(bcR.sum(0), bsR.sum(0))
    P = _ratio(bcP.sum(0), bsP.sum(0))
    F = fmeasure(R, P)
    pos, r_o, p_o, f_o = max_f(R, P)
    Fi = fmeasure(_ratio(bcR, bsR), _ratio(bcP, bsP))
    first_best = [int(np.flatnonzero(f == f.max())[0]) for f in Fi]   # ff(1)
    r_max = _ratio(sum(bcR[i, t] for i, t in enumerate(first_best)),
                   sum(bsR[i, t] for i, t in enumerate(first_best)))
    p_max = _ratio(sum(bcP[i, t] for i, t in enumerate(first_best)),
                   sum(bsP[i, t] for i, t in enumerate(first_best)))
    lo = int(math.floor(pos))
    frac = pos - lo
    ods_scale = scales[lo] if frac == 0 or lo + 1 >= T else \
        "%s..%s (%.2f)" % (scales[lo], scales[lo + 1], frac)
    nseg = arr("nseg") if all("nseg" in im for im in images) else np.zeros_like(cntR)
    return {
        "images": len(images),
        "scales": scales,
        "covering": {"ods": float(Rt[t_ods]), "ods_scale": scales[t_ods],
                     "ois": float(_ratio(ois_c, ois_s)), "best": float(best_total)},
        "pri": {"ods": float(gri[t_ri]), "ods_scale": scales[t_ri], "ois": float(ri.max(1).mean())},
        "vi": {"ods": float(gvoi[t_voi]), "ods_scale": scales[t_voi], "ois": float(voi.min(1).mean())},
        "boundary": {"ods_f": f_o, "ods_r": r_o, "ods_p": p_o, "ods_scale": ods_scale,
                     "ods_f_discrete": float(F.max()), "ods_scale_discrete": scales[int(np.argmax(F))],
                     "ois_f": float(fmeasure(r_max, p_max)), "ois_r": float(r_max),
                     "ois_p": float(p_max)},
        "per_scale": {"covering": Rt.tolist(), "pri": gri.tolist(), "vi": gvoi.tolist(),
                      "r": R.tolist(), "p": P.tolist(), "f": F.tolist(),
                      "nseg_mean": nseg.mean(0).tolist()},
    }


# ---- soft boundary maps (boundary detectors) --------------------------------------------------------

def pb_thresholds(nthresh=33):
    """The benchmark's thresholds for a soft boundary map in [0, 1] (evaluation_bdry_image.m):
    linspace(1/(n+1), 1 - 1/(n+1), n); n = 99 gives 0.01, 0.02, .., 0.99."""
    n = int(nthresh)
    if n < 1:
        raise ValueError("nthresh must be >= 1")
    return np.linspace(1.0 / (n + 1), 1.0 - 1.0 / (n + 1), n)


def boundary_pr_image(pb, gt_bdrys, nthresh=33, max_dist=MAX_DIST, thin_pb=True, thresholds=None):
    """Per-threshold counts of a soft boundary map pb (H x W, values in [0, 1], 0 = no boundary)
    against the human boundary maps gt_bdrys (evaluation_bdry_image.m): for each threshold t the
    binary map pb >= t, thinned (bwmorph 'thin' Inf) when thin_pb, is matched one-to-one to each
    human map in turn (correspond, tolerance max_dist x diagonal);
      cntR[t] = sum over humans of the human pixels matched, sumR[t] = sum of the human pixels,
      cntP[t] = machine pixels matched to at least one human, sumP[t] = machine pixels.
    thresholds (increasing) overrides nthresh. A threshold whose thinned map equals the previous
    one's reuses its counts (same input, same result). Returns a dict of lists: thresh, cntR,
    sumR, cntP, sumP."""
    pb = np.asarray(pb, dtype=np.float64)
    if pb.ndim != 2:
        raise ValueError("pb must be 2-D")
    gts = [np.asarray(g).astype(bool) for g in gt_bdrys]
    if any(g.shape != pb.shape for g in gts):
        raise ValueError("pb is %s, a ground truth map differs" % (pb.shape,))
    thresh = pb_thresholds(nthresh) if thresholds is None else np.asarray(thresholds, np.float64)
    out = {"thresh": thresh.tolist(), "cntR": [], "sumR": [], "cntP": [], "sumP": []}
    prev_map, prev = None, None
    gsum = sum(int(g.sum()) for g in gts)
    for t in thresh:
        bmap = pb >= t
        if thin_pb:
            bmap = thin(bmap)
        if prev_map is not None and np.array_equal(bmap, prev_map):
            counts = prev
        else:
            acc = np.zeros(pb.shape, dtype=bool)
            cnt_r = 0
            if bmap.any():
                for g in gts:
                    m1, m2 = correspond(bmap, g, max_dist)
                    acc |= m1
                    cnt_r += int(m2.sum())
            counts = (cnt_r, gsum, int(acc.sum()), int(bmap.sum()))
            prev_map, prev = bmap, counts
        for k, v in zip(("cntR", "sumR", "cntP", "sumP"), counts):
            out[k].append(v)
    return out


def average_precision(R, P, occurrence="last"):
    """collect_eval_bdry.m's Area_PR: [Ru, indR] = unique(R); Pu = P(indR); the precision
    interpolated linearly in recall (interp1) at Ri = 0:0.01:1, 0 outside [min R, max R] (NaN
    set to 0), summed and times 0.01 (a 101-point Riemann sum, not a trapezoid). 0 when R takes
    fewer than two distinct values. Among thresholds of equal R, `occurrence` picks which P:
    "last" (the highest threshold: unique's index in the MATLAB of the benchmark's time, before
    R2013a, and its 'legacy' flag now) or "first" (unique's default since R2013a)."""
    R = np.asarray(R, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    if occurrence == "last":
        ru, irev = np.unique(R[::-1], return_index=True)
        idx = R.size - 1 - irev
    elif occurrence == "first":
        ru, idx = np.unique(R, return_index=True)
    else:
        raise ValueError("occurrence: 'last' or 'first'")
    if ru.size < 2:
        return 0.0
    ri = np.arange(101) / 100.0        # k/100 correctly rounded, as MATLAB's 0:0.01:1
    pi = np.interp(ri, ru, P[idx], left=0.0, right=0.0)
    return float(pi.sum() * 0.01)


def aggregate_pr(images, thresh=None, ap_occurrence="last"):
    """Data-set scores of a boundary detector from per-image counts (boundary_pr_image dicts, the
    same thresholds) as collect_eval_bdry.m computes them:
      ODS: the counts summed over the images per threshold, R = cntR/sumR, P = cntP/sumP; maxF:
           the best F at the thresholds and on the straight lines between consecutive ones (100
           steps each; threshold, R, P interpolated alike); ods_f_discrete without that.
      OIS: each image's first threshold of largest F (ff(1)), those counts summed, F of the sums.
      AP:  average_precision of the summed curve (Area_PR).
      per image: each image's own maxF (the benchmark's eval_bdry_img.txt).
    Returns a dict: ods_f, ods_r, ods_p, ods_t, ods_f_discrete, ods_t_discrete, ois_f, ois_r,
    ois_p, ap, curve {thresh, r, p, f}, per_image [{t, r, p, f}]."""
    if not images:
        raise ValueError("no images")
    thresh = np.asarray(images[0]["thresh"] if thresh is None else thresh, dtype=np.float64)
    T = thresh.size

    def arr(k):
        a = np.array([im[k] for im in images], dtype=np.float64)
        if a.shape != (len(images), T):
            raise ValueError("images have different numbers of thresholds")
        return a

    cR, sR, cP, sP = arr("cntR"), arr("sumR"), arr("cntP"), arr("sumP")
    R = _ratio(cR.sum(0), sR.sum(0))
    P = _ratio(cP.sum(0), sP.sum(0))
    F = fmeasure(R, P)
    pos, r_o, p_o, f_o = max_f(R, P)
    lo = int(math.floor(pos))
    frac = pos - lo
    t_o = float(thresh[lo]) if lo + 1 >= T else float(thresh[lo + 1] * frac + thresh[lo] * (1 - frac))
    Ri, Pi = _ratio(cR, sR), _ratio(cP, sP)
    Fi = fmeasure(Ri, Pi)
    first = [int(np.flatnonzero(f == f.max())[0]) for f in Fi]            # ff(1)
    rows = np.arange(len(images))
    r_max = float(_ratio(cR[rows, first].sum(), sR[rows, first].sum()))
    p_max = float(_ratio(cP[rows, first].sum(), sP[rows, first].sum()))
    per = []
    for i in rows:
        ps, rr, pp, ff = max_f(Ri[i], Pi[i])
        li = int(math.floor(ps))
        fi = ps - li
        ti = float(thresh[li]) if li + 1 >= T else float(thresh[li + 1] * fi + thresh[li] * (1 - fi))
        per.append({"t": ti, "r": rr, "p": pp, "f": ff})
    return {
        "images": len(images),
        "ods_f": f_o, "ods_r": r_o, "ods_p": p_o, "ods_t": t_o,
        "ods_f_discrete": float(F.max()), "ods_t_discrete": float(thresh[int(np.argmax(F))]),
        "ois_f": float(fmeasure(r_max, p_max)), "ois_r": r_max, "ois_p": p_max,
        "ap": average_precision(R, P, ap_occurrence),
        "curve": {"thresh": thresh.tolist(), "r": R.tolist(), "p": P.tolist(), "f": F.tolist()},
        "per_image": per,
    }


# ---- data -------------------------------------------------------------------------------------------

def load_ground_truth(path):
    """The human segmentations (uint16, 1-based) and boundary maps (bool) of one BSDS .mat file."""
    from scipy.io import loadmat
    gt = loadmat(path)["groundTruth"][0]
    segs = [np.asarray(g["Segmentation"][0][0]) for g in gt]
    bdrys = [np.asarray(g["Boundaries"][0][0]).astype(bool) for g in gt]
    return segs, bdrys
