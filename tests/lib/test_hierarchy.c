/* The hierarchy's watershed (app/lib/hierarchy.c) against a reference written here: pixels
 * visited by ascending strength, ties by index (qsort on (value, index)), NaN and infinities as
 * 0, each joining its lowest labelled 4-neighbour. The maps are random with many ties (a few
 * levels), negative values, -0 and +0, NaN and infinities, so that the library's radix order must
 * match the comparison order exactly; then the hierarchy's own invariants (nregions - 1 merges at
 * ascending levels, every region below min_area merged first). With the region cue: weights 0
 * give the plain hierarchy bit for bit on the same maps, positive weights keep its invariants,
 * and on a toy of three blocks the cue reverses the plain order at the levels its formula gives
 * (test_region_cue). The merges against a greedy reference that recomputes every key at every
 * step (test_greedy). */
#include "diaseg_internal.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_key {
  float v;
  int i;
} ref_key;

static int ref_cmp(const void *a, const void *b)
{
  const ref_key *p = a, *q = b;
  if (p->v != q->v)
    return p->v < q->v ? -1 : 1;
  return p->i - q->i;
}

static int ref_watershed(const float *E, int w, int h, int32_t *label)
{
  const size_t n = (size_t)w * h;
  ref_key *order = malloc(n * sizeof(*order));
  for (size_t i = 0; i < n; i++) {
    order[i].v = isfinite(E[i]) ? E[i] : 0.0f;
    order[i].i = (int)i;
    label[i] = -1;
  }
  qsort(order, n, sizeof(*order), ref_cmp);
  int count = 0;
  for (size_t t = 0; t < n; t++) {
    const int p = order[t].i, x = p % w, y = p / w;
    const int nb[4] = {x > 0 ? p - 1 : -1, x + 1 < w ? p + 1 : -1, y > 0 ? p - w : -1,
                       y + 1 < h ? p + w : -1};
    int best = -1;
    for (int k = 0; k < 4; k++)
      if (nb[k] >= 0 && label[nb[k]] >= 0 && (best < 0 || E[nb[k]] < E[best]))
        best = nb[k];
    label[p] = best >= 0 ? label[best] : count++;
  }
  free(order);
  return count;
}

/* chi-squared distance of two histograms (counts) normalised by their totals */
static double ref_chi2(const double *ha, const double *hb, int bins, double na, double nb)
{
  double d = 0.0;
  for (int k = 0; k < bins; k++) {
    const double p = ha[k] / na, q = hb[k] / nb;
    if (p + q > 0.0)
      d += (p - q) * (p - q) / (p + q);
  }
  return 0.5 * d;
}

/* Three blocks A | B | C of 10 columns, 12 rows, split by ridge columns 9 (0.5) and 19 (0.45):
 * the plain hierarchy joins B and C first (the weaker boundary); A and B have the same bins in
 * every channel, C others, so the region cue joins A and B first, at the level of its formula
 * computed here from the watershed's regions. */
static void test_region_cue(void)
{
  enum { W = 30, H = 12, N = W * H };
  static float E[N];
  static unsigned char bins[APP_CONTOUR_CHANNELS * N];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      E[y * W + x] = x == 9 ? 0.5f : x == 19 ? 0.45f : 0.0f;
      for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
        bins[c * N + y * W + x] = (unsigned char)(x < 20 ? 3 + c : 7 + c);
    }
  app_hierarchy P, Q;
  const double wt = 0.2, area = 40.0;
  const app_region_cue cue = {bins, {wt, wt, wt, wt}, area, NULL};
  CHECK(app_hierarchy_build(E, W, H, 1, &P) == DSG_OK, "plain: %s", dsg_error_message());
  CHECK(app_hierarchy_build_cue(E, &cue, W, H, 1, &Q) == DSG_OK, "cue: %s", dsg_error_message());
  CHECK(P.nregions == 3 && Q.nregions == 3, "the toy has %d / %d watershed regions, not 3",
        P.nregions, Q.nregions);
  if (P.nregions != 3 || Q.nregions != 3)
    goto out;
  const int a = P.region[0], b = P.region[15], c = P.region[W - 1];
  int32_t cut[N];
  CHECK(app_hierarchy_cut(&P, 2, 0.0, cut, NULL) == DSG_OK && cut[15] == cut[W - 1] &&
            cut[0] != cut[15],
        "plain: the first merge is not B with C");
  CHECK(app_hierarchy_cut(&Q, 2, 0.0, cut, NULL) == DSG_OK && cut[0] == cut[15] &&
            cut[15] != cut[W - 1],
        "cue: the first merge is not A with B");
  /* the reference levels: the regions' areas and histograms, the boundaries' mean cracks */
  double hist[3][APP_CONTOUR_CHANNELS][32] = {{{0}}}, cnt[3] = {0}, sum[3][3] = {{0}},
         len[3][3] = {{0}};
  const int id[3] = {a, b, c};
  int of[3];
  for (int r = 0; r < 3; r++)
    of[id[r]] = r;
  for (int i = 0; i < N; i++) {
    const int r = of[Q.region[i]];
    cnt[r]++;
    for (int ch = 0; ch < APP_CONTOUR_CHANNELS; ch++)
      hist[r][ch][bins[ch * N + i]]++;
    const int nb[2] = {i % W + 1 < W ? i + 1 : -1, i + W < N ? i + W : -1};
    for (int t = 0; t < 2; t++)
      if (nb[t] >= 0 && of[Q.region[nb[t]]] != r) {
        const int s = of[Q.region[nb[t]]], lo = r < s ? r : s, hi = r < s ? s : r;
        sum[lo][hi] += 0.5 * ((double)E[i] + E[nb[t]]);
        len[lo][hi]++;
      }
  }
  double chi = 0.0;
  for (int ch = 0; ch < APP_CONTOUR_CHANNELS; ch++)
    chi += ref_chi2(hist[0][ch], hist[1][ch], 32, cnt[0], cnt[1]);
  double small = cnt[0] < cnt[1] ? cnt[0] : cnt[1];
  const double first = (sum[0][1] / len[0][1] + small / (small + area) * wt * chi) / (1.0 + 4 * wt);
  /* A and B joined: their histograms summed, against C */
  chi = 0.0;
  for (int ch = 0; ch < APP_CONTOUR_CHANNELS; ch++) {
    double ab[32];
    for (int k = 0; k < 32; k++)
      ab[k] = hist[0][ch][k] + hist[1][ch][k];
    chi += ref_chi2(ab, hist[2][ch], 32, cnt[0] + cnt[1], cnt[2]);
  }
  small = cnt[2] < cnt[0] + cnt[1] ? cnt[2] : cnt[0] + cnt[1];
  double second = (sum[1][2] / len[1][2] + small / (small + area) * wt * chi) / (1.0 + 4 * wt);
  second = second > first ? second : first;
  CHECK(fabs(Q.merge_level[0] - first) < 1e-6 && fabs(Q.merge_level[1] - second) < 1e-6,
        "cue: levels %.7g, %.7g, the formula's %.7g, %.7g", Q.merge_level[0], Q.merge_level[1],
        first, second);
  CHECK(chi > 0.5 && second > P.merge_level[1], "cue: C's distance %.3g adds nothing", chi);
out:
  app_hierarchy_free(&P);
  app_hierarchy_free(&Q);
}

/* The arc model's tables (the library's own, included here): every tree well formed, and the
 * library's evaluator gives scikit-learn's predictions for the rows the fit wrote beside them. */
#include "arcs/model.inc"

static void test_arc_model(void)
{
  int nodes = (int)(sizeof(arc_model_nodes) / sizeof(arc_model_nodes[0])), bad = 0;
  for (int t = 0; t < ARC_MODEL_TREES; t++) {
    const int lo = arc_model_root[t], hi = t + 1 < ARC_MODEL_TREES ? arc_model_root[t + 1] : nodes;
    const app_arc_node *tr = arc_model_nodes + lo;
    for (int i = 0; i < hi - lo; i++)
      if (tr[i].feature >= 0 &&
          (tr[i].feature >= APP_ARC_FEATURES || tr[i].left <= i || tr[i].right <= i ||
           tr[i].left >= hi - lo || tr[i].right >= hi - lo || !isfinite(tr[i].t)))
        bad++;
    CHECK(lo < hi && tr[0].feature >= 0, "arc model: tree %d is empty or a lone leaf", t);
  }
  CHECK(bad == 0, "arc model: %d nodes point outside their tree or read no feature", bad);
  /* one at a time, and all at once (blocks of arcs): the same sums */
  double many[ARC_MODEL_CHECKS];
  app_arc_predict_many(&arc_model_check_x[0][0], ARC_MODEL_CHECKS, many);
  for (int r = 0; r < ARC_MODEL_CHECKS; r++) {
    const double y = app_arc_predict(arc_model_check_x[r]);
    CHECK(fabs(y - arc_model_check_y[r]) < 1e-9 && many[r] == y,
          "arc model: row %d predicts %.12g (%.12g with the others), the fit %.12g", r, y, many[r],
          arc_model_check_y[r]);
  }
  for (int f = 0; f < APP_ARC_FEATURES; f++)
    CHECK(app_arc_feature_name(f) != NULL, "arc feature %d has no name", f);
  CHECK(app_arc_feature_name(APP_ARC_FEATURES) == NULL && app_arc_feature_name(-1) == NULL,
        "arc feature names past the table");
}

/* One arc between two regions, its features by hand: 4 cracks between columns 2 and 3 of a
 * 6 x 4 image, E's cracks 0.3, 0.375, 0.5, 0.625, gPb 0.2 everywhere, the forest's map 0 | 1;
 * regions of 12 and 20 pixels whose brightness histograms are all bin 3 against half bin 3,
 * half bin 5 (chi2 0.5 (0.25 / 1.5 + 0.25 / 0.5) = 1 / 3, mean bins 3 and 4 of 25), equal in
 * the other channels. */
static void test_arc_features(void)
{
  enum { W = 6, H = 4, N = W * H, NB = 25 + 25 + 25 + APP_TEXTONS };
  float E[N], G[N], F[N];
  const float left[H] = {0.1f, 0.25f, 0.5f, 0.75f};
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      E[y * W + x] = x == 2 ? left[y] : 0.5f;
      G[y * W + x] = 0.2f;
      F[y * W + x] = x < 3 ? 0.0f : 1.0f;
    }
  static float hist[2 * NB];
  const int first[4] = {0, 25, 50, 75}, bins[4] = {25, 25, 25, APP_TEXTONS};
  const long area[2] = {12, 20};
  hist[3] = 12;
  hist[NB + 3] = 10;
  hist[NB + 5] = 10;
  for (int r = 0; r < 2; r++) {
    hist[r * NB + 25 + 7] = hist[r * NB + 50 + 7] = (float)area[r];
    hist[r * NB + 75] = (float)area[r];
  }
  size_t crack[H];
  int arc[H] = {0, 0, 0, 0};
  for (int y = 0; y < H; y++)
    crack[y] = 2 * (size_t)(y * W + 2);
  const int ra = 0, rb = 1;
  app_arc_record rec;
  memset(&rec, 0, sizeof(rec));
  const app_arc_cue cue = {G, F, 0.4, &rec};
  const app_arc_input in = {W, H, E, &cue, H, crack, arc, 1, &ra, &rb, area, hist, NB, first, bins};
  float strength[H];
  CHECK(app_arc_strengths(&in, strength) == DSG_OK, "arc features: %s", dsg_error_message());
  CHECK(rec.narcs == 1 && rec.ncracks == H && rec.features && rec.crack[3] == crack[3] &&
            rec.arc[3] == 0,
        "arc features: the record has %d arcs, %zu cracks", rec.narcs, rec.ncracks);
  if (!rec.features)
    return;
  const double mean = 0.45, sq = (0.09 + 0.140625 + 0.25 + 0.390625) / 4;
  const double want[APP_ARC_FEATURES] = {mean,      sqrt(sq - mean * mean),
                                         0.625,     0.3,
                                         0.2,       0.0,
                                         0.2,       0.2,
                                         0.5,       0.0,
                                         0.5,       0.5,
                                         1.0,       0.5,
                                         log(4.0),  log(12.0),
                                         log(20.0), 4.0 / sqrt(12.0),
                                         1.0 / 3.0, 1.0 / 25.0,
                                         0.0,       0.0,
                                         0.0,       0.0,
                                         0.0};
  for (int f = 0; f < APP_ARC_FEATURES; f++)
    CHECK(CLOSE(rec.features[f], want[f], 1e-6, 1e-6), "arc feature %s: %.9g, by hand %.9g",
          app_arc_feature_name(f), rec.features[f], want[f]);
  double p = app_arc_predict(rec.features);
  p = p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
  const double cv[H] = {0.3, 0.375, 0.5, 0.625};
  for (int y = 0; y < H; y++)
    CHECK(CLOSE(strength[y], 0.6 * cv[y] + 0.4 * p, 1e-6, 1e-6),
          "arc strength of crack %d: %.7g, 0.6 x %.3g + 0.4 x %.7g", y, strength[y], cv[y], p);
  app_arc_record_free(&rec);
}

/* The learnt strengths in the hierarchy: on the three blocks of test_region_cue (no specks:
 * min_area 1) the base arcs are the two block boundaries, recorded crack for crack, and the
 * merges' levels are the cue's formula with (1 - w) x the boundary's mean + w x the model's
 * prediction for the recorded features; at weight 0 the plain cue's levels. */
static void test_arc_hierarchy(void)
{
  enum { W = 30, H = 12, N = W * H };
  static float E[N], G[N], F[N];
  static unsigned char bins[APP_CONTOUR_CHANNELS * N];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      const int i = y * W + x;
      E[i] = x == 9 ? 0.5f : x == 19 ? 0.45f : 0.0f;
      G[i] = E[i] * 0.8f;
      F[i] = x == 19 ? 0.9f : 0.1f;
      for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
        bins[c * N + i] = (unsigned char)(x < 20 ? 3 + c : 7 + c);
    }
  const double wt = 0.2, area = 40.0;
  for (int weighted = 0; weighted < 2; weighted++) {
    const double aw = weighted ? 0.7 : 0.0;
    app_arc_record rec;
    memset(&rec, 0, sizeof(rec));
    const app_arc_cue arcs = {G, F, aw, &rec};
    const app_region_cue plain = {bins, {wt, wt, wt, wt}, area, NULL};
    const app_region_cue cue = {bins, {wt, wt, wt, wt}, area, &arcs};
    app_hierarchy P, Q;
    CHECK(app_hierarchy_build_cue(E, &plain, W, H, 1, &P) == DSG_OK &&
              app_hierarchy_build_cue(E, &cue, W, H, 1, &Q) == DSG_OK,
          "arcs: %s", dsg_error_message());
    CHECK(rec.narcs == 2 && rec.ncracks == 2 * H, "arcs: %d arcs, %zu cracks recorded, not 2, %d",
          rec.narcs, rec.ncracks, 2 * H);
    int on_boundary = Q.nregions == 3;
    for (size_t i = 0; on_boundary && i < rec.ncracks; i++) {
      const size_t p = rec.crack[i] / 2, q = rec.crack[i] % 2 ? p + W : p + 1;
      on_boundary = Q.region[p] != Q.region[q];
    }
    CHECK(on_boundary, "arcs: a recorded crack lies inside a watershed region");
    if (rec.narcs == 2 && Q.nregions == 3 && P.nregions == 3) {
      /* each arc's strength: (1 - w) x its cracks' mean (A|B 0.25, B|C 0.225) + w x the model's
       * prediction; A and B (alike) merge first, then B|C with the plain cue's histogram term,
       * P's second level x (1 + 4 wt) - 0.225 */
      double s_ab = 0.0, s_bc = 0.0;
      for (int a = 0; a < 2; a++) {
        const double *x = rec.features + a * APP_ARC_FEATURES;
        double p = app_arc_predict(x);
        p = p < 0.0 ? 0.0 : p > 1.0 ? 1.0 : p;
        *(fabs(x[0] - 0.25) < 1e-6 ? &s_ab : &s_bc) = (1.0 - aw) * x[0] + aw * p;
      }
      const double div = 1.0 + 4 * wt, first = s_ab / div;
      double second = (s_bc + P.merge_level[1] * div - 0.225) / div;
      second = second > first ? second : first;
      CHECK(fabs(Q.merge_level[0] - first) < 1e-6 && fabs(Q.merge_level[1] - second) < 1e-6,
            "arcs at weight %g: levels %.7g, %.7g, the formula's %.7g, %.7g", aw, Q.merge_level[0],
            Q.merge_level[1], first, second);
      if (!weighted)
        CHECK(fabs(Q.merge_level[0] - P.merge_level[0]) < 1e-6 &&
                  fabs(Q.merge_level[1] - P.merge_level[1]) < 1e-6,
              "arcs at weight 0: levels %.7g, %.7g, the plain cue's %.7g, %.7g", Q.merge_level[0],
              Q.merge_level[1], P.merge_level[0], P.merge_level[1]);
    }
    app_arc_record_free(&rec);
    app_hierarchy_free(&P);
    app_hierarchy_free(&Q);
  }
}

/* Regions below min_area (specks) merge as without the cue: on a random map the region cue's
 * hierarchy begins with the plain one's speck merges (the merges at level 0), pair for pair;
 * after them both hierarchies' levels rise at every merge. */
static void test_specks(void)
{
  enum { W = 64, H = 48, N = W * H };
  static float E[N];
  static unsigned char bins[APP_CONTOUR_CHANNELS * N];
  for (int i = 0; i < N; i++)
    E[i] = (float)(test_rand64() % 50) / 50.0f;
  for (int i = 0; i < APP_CONTOUR_CHANNELS * N; i++)
    bins[i] = (unsigned char)(test_rand64() % 25);
  const app_region_cue cue = {bins, {0.3, 0.3, 0.3, 0.3}, 20.0, NULL};
  app_hierarchy P, Q;
  CHECK(app_hierarchy_build(E, W, H, 12, &P) == DSG_OK &&
            app_hierarchy_build_cue(E, &cue, W, H, 12, &Q) == DSG_OK,
        "specks: %s", dsg_error_message());
  int specks = 0, same = P.nmerges == Q.nmerges;
  while (specks < P.nmerges && P.merge_level[specks] == 0.0f)
    specks++;
  for (int m = 0; same && m < specks; m++)
    same = Q.merge_a[m] == P.merge_a[m] && Q.merge_b[m] == P.merge_b[m] && Q.merge_level[m] == 0.0f;
  CHECK(specks > 10 && same && (specks == Q.nmerges || Q.merge_level[specks] > 0.0f),
        "specks: the cue's hierarchy does not begin with the plain one's %d speck merges", specks);
  /* after the specks every merge is above the one before (a float's step where its key is not),
   * so that every cut at k regions is a cut of the UCM at a level */
  int rising = 1;
  for (int m = specks + 1; m < P.nmerges; m++)
    rising = rising && P.merge_level[m] > P.merge_level[m - 1];
  for (int m = specks + 1; m < Q.nmerges; m++)
    rising = rising && Q.merge_level[m] > Q.merge_level[m - 1];
  CHECK(rising, "specks: levels after the specks not increasing");
  app_hierarchy_free(&P);
  app_hierarchy_free(&Q);
}

/* The merging against a reference written here, on random maps with specks and the region cue:
 * at every step the reference finds the least key over all pairs of adjacent regions, recomputed
 * from the pixels (a pair with a region below min_area: its boundary's mean, the specks first;
 * else the mean plus the cue's distances, app/lib/hierarchy.c's formula), and the library's merge
 * must be one of the pairs at that key (within rounding: the library sums a boundary's cracks in
 * another order, and a speck's key, mean - 1e9, in doubles near 1e9) at the level it gives (0 for
 * the specks, then the key, raised by a float's step where it is not above the level before). */
static void test_greedy(int w, int h, int min_area, int cued)
{
  const int n = w * h;
  float *E = malloc((size_t)n * sizeof(*E));
  unsigned char *bins = malloc((size_t)n * APP_CONTOUR_CHANNELS);
  for (int i = 0; i < n; i++)
    E[i] = (float)(test_rand64() % 1000003) / 1000003.0f;
  for (int i = 0; i < n * APP_CONTOUR_CHANNELS; i++)
    bins[i] = (unsigned char)(test_rand64() % 6);
  const double wt = 0.25, cue_area = 9.0;
  const app_region_cue cue = {bins, {wt, wt, wt, wt}, cue_area, NULL};
  app_hierarchy H;
  CHECK(app_hierarchy_build_cue(E, cued ? &cue : NULL, w, h, min_area, &H) == DSG_OK,
        "greedy %dx%d: %s", w, h, dsg_error_message());
  const int R = H.nregions;
  int *parent = malloc((size_t)R * sizeof(*parent)), *root = malloc((size_t)n * sizeof(*root));
  double *sum = calloc((size_t)R * R, sizeof(*sum)), *cnt = calloc((size_t)R * R, sizeof(*cnt));
  double *keys = calloc((size_t)R * R, sizeof(*keys)); /* the pairs of larger regions' keys */
  double *area = malloc((size_t)R * sizeof(*area));
  double *hist = malloc((size_t)R * APP_CONTOUR_CHANNELS * 8 * sizeof(*hist));
  for (int r = 0; r < R; r++)
    parent[r] = r;
  int bad = -1, specks = 0;
  float level = 0.0f;
  for (int m = 0; m < H.nmerges && bad < 0; m++) {
    for (int i = 0; i < n; i++) { /* the regions now: roots of the watershed's */
      int r = H.region[i];
      while (parent[r] != r)
        r = parent[r];
      root[i] = r;
    }
    memset(sum, 0, (size_t)R * R * sizeof(*sum));
    memset(cnt, 0, (size_t)R * R * sizeof(*cnt));
    memset(area, 0, (size_t)R * sizeof(*area));
    memset(hist, 0, (size_t)R * APP_CONTOUR_CHANNELS * 8 * sizeof(*hist));
    for (int i = 0; i < n; i++) {
      area[root[i]]++;
      for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
        hist[((size_t)root[i] * APP_CONTOUR_CHANNELS + c) * 8 + bins[c * n + i]]++;
      const int nb[2] = {i % w + 1 < w ? i + 1 : -1, i + w < n ? i + w : -1};
      for (int t = 0; t < 2; t++)
        if (nb[t] >= 0 && root[nb[t]] != root[i]) {
          const int a = root[i] < root[nb[t]] ? root[i] : root[nb[t]];
          const int b = root[i] < root[nb[t]] ? root[nb[t]] : root[i];
          sum[(size_t)a * R + b] += 0.5 * ((double)E[i] + (double)E[nb[t]]);
          cnt[(size_t)a * R + b]++;
        }
    }
    /* each pair's key: specks' (their mean, ranked before all) and the others' */
    double best_speck = INFINITY, best = INFINITY;
    for (int a = 0; a < R; a++)
      for (int b = a + 1; b < R; b++) {
        const size_t ab = (size_t)a * R + b;
        if (cnt[ab] == 0.0)
          continue;
        double key = sum[ab] / cnt[ab];
        if (area[a] < min_area || area[b] < min_area) {
          best_speck = key < best_speck ? key : best_speck;
          continue;
        }
        if (cued) {
          const double small = area[a] < area[b] ? area[a] : area[b];
          for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
            key += small / (small + cue_area) * wt *
                   ref_chi2(hist + ((size_t)a * APP_CONTOUR_CHANNELS + c) * 8,
                            hist + ((size_t)b * APP_CONTOUR_CHANNELS + c) * 8, 8, area[a], area[b]);
          key /= 1.0 + APP_CONTOUR_CHANNELS * wt;
        }
        keys[ab] = key;
        best = key < best ? key : best;
      }
    int a = H.merge_a[m], b = H.merge_b[m];
    while (parent[a] != a)
      a = parent[a];
    while (parent[b] != b)
      b = parent[b];
    const int lo = a < b ? a : b, hi = a < b ? b : a;
    const size_t ab = (size_t)lo * R + hi;
    const int speck = area[lo] < min_area || area[hi] < min_area;
    int ok = a != b && cnt[ab] > 0.0;
    if (ok && speck) { /* a speck's boundary at the least mean, within a double's step at 1e9 */
      ok = isfinite(best_speck) && sum[ab] / cnt[ab] <= best_speck + 3e-7 &&
           H.merge_level[m] == level;
      specks++;
    } else if (ok) {
      const float want = (float)keys[ab] > level ? (float)keys[ab] : nextafterf(level, INFINITY);
      ok = !isfinite(best_speck) && keys[ab] <= best + 1e-9 &&
           fabsf(H.merge_level[m] - want) <= 1e-6f;
      level = H.merge_level[m];
    }
    if (!ok)
      bad = m;
    parent[hi] = lo;
  }
  CHECK(bad < 0 && specks > 0 && specks < H.nmerges,
        "greedy %dx%d min_area %d cue %d: merge %d of %d is not the least key (%d specks)", w, h,
        min_area, cued, bad, H.nmerges, specks);
  app_hierarchy_free(&H);
  free(E);
  free(bins);
  free(parent);
  free(root);
  free(sum);
  free(keys);
  free(cnt);
  free(area);
  free(hist);
}

int main(void)
{
  static const int sizes[][2] = {{1, 1}, {7, 1}, {1, 9}, {17, 13}, {64, 48}, {120, 90}};
  static const float special[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, -0.25f, 1e-30f};
  for (int trial = 0; trial < 24; trial++) {
    const int w = sizes[trial % 6][0], h = sizes[trial % 6][1];
    const size_t n = (size_t)w * h;
    const int levels = trial < 12 ? 5 : 1000; /* many ties, then few */
    float *E = malloc(n * sizeof(*E));
    int32_t *ref = malloc(n * sizeof(*ref));
    for (size_t i = 0; i < n; i++) {
      E[i] = (float)(test_rand64() % (uint64_t)levels) / levels - (trial % 3 == 0 ? 0.3f : 0.0f);
      if (test_rand64() % 17 == 0)
        E[i] = special[test_rand64() % 7];
    }
    const int R = ref_watershed(E, w, h, ref);
    app_hierarchy H;
    const int min_area = trial % 2 ? 1 : 6;
    CHECK(app_hierarchy_build(E, w, h, min_area, &H) == DSG_OK, "%dx%d: %s", w, h,
          dsg_error_message());
    CHECK(H.nregions == R, "%dx%d trial %d: %d regions, the reference %d", w, h, trial, H.nregions,
          R);
    int same = H.nregions == R;
    for (size_t i = 0; same && i < n; i++)
      same = H.region[i] == ref[i];
    CHECK(same, "%dx%d trial %d: the watershed differs from the (value, index) order", w, h, trial);
    CHECK(H.nmerges == (R > 0 ? R - 1 : 0), "%dx%d: %d merges of %d regions", w, h, H.nmerges, R);
    int ascending = 1;
    for (int m = 1; m < H.nmerges; m++)
      ascending = ascending && H.merge_level[m] >= H.merge_level[m - 1];
    CHECK(ascending, "%dx%d trial %d: merge levels not ascending", w, h, trial);
    /* the region cue at weight 0 is the plain hierarchy; at 0.3 the same invariants */
    unsigned char *bins = malloc(n * APP_CONTOUR_CHANNELS);
    for (size_t i = 0; i < n * APP_CONTOUR_CHANNELS; i++)
      bins[i] = (unsigned char)(test_rand64() % 25);
    for (int weighted = 0; weighted < 2; weighted++) {
      const double wt = weighted ? 0.3 : 0.0;
      const app_region_cue cue = {bins, {wt, wt, wt, wt}, 7.0, NULL};
      app_hierarchy G;
      CHECK(app_hierarchy_build_cue(E, &cue, w, h, min_area, &G) == DSG_OK, "%dx%d cue: %s", w, h,
            dsg_error_message());
      int equal = G.nregions == H.nregions && G.nmerges == H.nmerges;
      if (!weighted) {
        for (int m = 0; equal && m < H.nmerges; m++)
          equal = G.merge_a[m] == H.merge_a[m] && G.merge_b[m] == H.merge_b[m] &&
                  G.merge_level[m] == H.merge_level[m];
        for (size_t k = 0; equal && k < 2 * n; k++)
          equal = G.crack_level[k] == H.crack_level[k];
      }
      for (int m = 1; equal && m < G.nmerges; m++)
        equal = G.merge_level[m] >= G.merge_level[m - 1];
      CHECK(equal, "%dx%d trial %d: the region cue at weight %g: %s", w, h, trial, wt,
            weighted ? "merge levels not ascending" : "not the plain hierarchy");
      app_hierarchy_free(&G);
    }
    free(bins);
    app_hierarchy_free(&H);
    free(E);
    free(ref);
  }
  test_region_cue();
  test_arc_model();
  test_arc_features();
  test_arc_hierarchy();
  test_specks();
  test_greedy(40, 30, 6, 1);
  test_greedy(33, 27, 10, 1);
  test_greedy(40, 30, 6, 0);
  return check_report("test_hierarchy");
}
