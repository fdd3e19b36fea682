/* The hierarchy's base arcs and their learnt strengths.
 *
 * When the specks have merged (hierarchy.c), the boundary between two of the regions left is a
 * base arc. Its strength in the map, the mean of its cracks', says how strong the edge is, not
 * whether a person would draw it: texture and shading make strong arcs that no one draws, and a
 * faint arc between two regions of other colours often is drawn. A boosted ensemble of
 * regression trees fit on BSDS500 train (tests/bsds/fit_arcs.py: each base arc's share of
 * cracks within 3 pixels of a person's boundary, the best of the persons, weighted by its
 * length) reads the arc's features below and predicts that share; each crack of the arc then
 * has (1 - w) x its own strength + w x the prediction, w = --arc-weight. The greedy merging
 * goes on from there as before (boundaries' means, the region cue). docs/PIPELINE.md 7b,
 * docs/QUALITY.md "The base arcs' learnt strengths". */
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arcs/model.inc"

/* The features, in the model's order: the cracks' strengths ((v_p + v_q) / 2) in the map E
 * (gPb and the forest's map joined), in gPb and in the forest's map (mean, standard deviation,
 * largest, smallest), E's share above two levels, the arc's length and its regions' areas
 * (logarithms), the length over the smaller region's side, and per channel of the region cue
 * the chi-squared distance of the two regions' histograms and the distance of their mean bins. */
static const char *const feature_names[APP_ARC_FEATURES] = {
    "E_mean",       "E_std",        "E_max",       "E_min",       "gpb_mean",
    "gpb_std",      "gpb_max",      "gpb_min",     "forest_mean", "forest_std",
    "forest_max",   "forest_min",   "E_above_0.2", "E_above_0.4", "log_length",
    "log_area_min", "log_area_max", "length_rel",  "chi2_L",      "mean_L",
    "chi2_a",       "mean_a",       "chi2_b",      "mean_b",      "chi2_texture"};
static const double above[2] = {0.2, 0.4};

const char *app_arc_feature_name(int f)
{
  return f >= 0 && f < APP_ARC_FEATURES ? feature_names[f] : NULL;
}

/* Tree by tree over a block of arcs, so that a tree's nodes stay in the nearest cache while
 * the block's arcs descend it (arc by arc, the 200 trees' 90 KB pass through it for each arc:
 * 4.3 against 3.8 ms for 1 338 arcs on one core of the 2-core machine), blocks in parallel.
 * Each arc's sum is the base, then the trees in order. */
#define ARC_BLOCK 32
void app_arc_predict_many(const double *X, int n, double *y)
{
#pragma omp parallel for schedule(static) if (n > 4 * ARC_BLOCK)
  for (int b = 0; b < n; b += ARC_BLOCK) {
    const int m = n - b < ARC_BLOCK ? n - b : ARC_BLOCK;
    const double *xb = X + (size_t)b * APP_ARC_FEATURES;
    double acc[ARC_BLOCK];
    for (int j = 0; j < m; j++)
      acc[j] = arc_model_base;
    for (int t = 0; t < ARC_MODEL_TREES; t++) {
      const app_arc_node *tree = arc_model_nodes + arc_model_root[t];
      for (int j = 0; j < m; j++) {
        const double *x = xb + (size_t)j * APP_ARC_FEATURES;
        int i = 0;
        while (tree[i].feature >= 0)
          i = x[tree[i].feature] <= tree[i].t ? tree[i].left : tree[i].right;
        acc[j] += tree[i].t;
      }
    }
    for (int j = 0; j < m; j++)
      y[b + j] = acc[j];
  }
}

double app_arc_predict(const double *x)
{
  double y;
  app_arc_predict_many(x, 1, &y);
  return y;
}

void app_arc_record_free(app_arc_record *rec)
{
  if (!rec)
    return;
  free(rec->features);
  free(rec->crack);
  free(rec->arc);
  memset(rec, 0, sizeof(*rec));
}

/* per arc, sums over its cracks: for each of the 3 maps the sum, the sum of squares, the
 * largest, the smallest; E above each level; the count */
enum { MAPS = 3, ACC = MAPS * 4 + 2 + 1 };

int app_arc_strengths(const app_arc_input *in, float *strength)
{
  const app_arc_cue *cue = in->cue;
  const size_t w = (size_t)in->width;
  const float *map[MAPS] = {in->E, cue->gpb, cue->forest};
  const int A = in->narcs;
  double *acc = malloc((size_t)(A > 0 ? A : 1) * ACC * sizeof(*acc));
  double *X = malloc((size_t)(A > 0 ? A : 1) * APP_ARC_FEATURES * sizeof(*X));
  double *pred = malloc((size_t)(A > 0 ? A : 1) * sizeof(*pred));
  int status = DSG_OK;
  if (!acc || !X || !pred) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the features of %d arcs", A);
    goto out;
  }
  for (int a = 0; a < A; a++) {
    double *s = acc + (size_t)a * ACC;
    for (int m = 0; m < MAPS; m++) {
      s[4 * m] = s[4 * m + 1] = 0.0;
      s[4 * m + 2] = -INFINITY;
      s[4 * m + 3] = INFINITY;
    }
    s[4 * MAPS] = s[4 * MAPS + 1] = s[4 * MAPS + 2] = 0.0;
  }
  for (size_t i = 0; i < in->ncracks; i++) {
    const size_t c = in->crack[i], p = c / 2, q = c % 2 ? p + w : p + 1;
    double *s = acc + (size_t)in->arc[i] * ACC;
    for (int m = 0; m < MAPS; m++) {
      const double v = 0.5 * ((double)map[m][p] + (double)map[m][q]);
      s[4 * m] += v;
      s[4 * m + 1] += v * v;
      s[4 * m + 2] = v > s[4 * m + 2] ? v : s[4 * m + 2];
      s[4 * m + 3] = v < s[4 * m + 3] ? v : s[4 * m + 3];
      if (m == 0)
        for (int l = 0; l < 2; l++)
          s[4 * MAPS + l] += v > above[l];
    }
    s[ACC - 1] += 1.0;
  }
  /* each arc's features (independent), then the trees' predictions, most of the time */
#pragma omp parallel for schedule(static)
  for (int a = 0; a < A; a++) {
    const double *s = acc + (size_t)a * ACC, len = s[ACC - 1];
    double *x = X + (size_t)a * APP_ARC_FEATURES;
    int f = 0;
    for (int m = 0; m < MAPS; m++) {
      const double mean = s[4 * m] / len, var = s[4 * m + 1] / len - mean * mean;
      x[f++] = mean;
      x[f++] = sqrt(var > 0.0 ? var : 0.0);
      x[f++] = s[4 * m + 2];
      x[f++] = s[4 * m + 3];
    }
    for (int l = 0; l < 2; l++)
      x[f++] = s[4 * MAPS + l] / len;
    const int ra = in->region_a[a], rb = in->region_b[a];
    const double na = (double)in->area[ra], nb = (double)in->area[rb];
    const double amin = na < nb ? na : nb, amax = na < nb ? nb : na;
    x[f++] = log(len);
    x[f++] = log(amin);
    x[f++] = log(amax);
    x[f++] = len / sqrt(amin);
    for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
      const float *ha = in->hist + (size_t)ra * in->nbins + in->first[c],
                  *hb = in->hist + (size_t)rb * in->nbins + in->first[c];
      double chi = 0.0, ma = 0.0, mb = 0.0;
      for (int k = 0; k < in->bins[c]; k++) {
        const double pa = ha[k] / na, pb = hb[k] / nb;
        if (pa + pb > 0.0)
          chi += (pa - pb) * (pa - pb) / (pa + pb);
        ma += k * pa;
        mb += k * pb;
      }
      x[f++] = 0.5 * chi;
      if (c < APP_CONTOUR_CHANNELS - 1) /* the texture's bins are textons: no order */
        x[f++] = fabs(ma - mb) / in->bins[c];
    }
  }
  app_arc_predict_many(X, A, pred);
  for (int a = 0; a < A; a++)
    pred[a] = pred[a] < 0.0 ? 0.0 : pred[a] > 1.0 ? 1.0 : pred[a];
  for (size_t i = 0; i < in->ncracks; i++) {
    const size_t c = in->crack[i], p = c / 2, q = c % 2 ? p + w : p + 1;
    const double v = 0.5 * ((double)in->E[p] + (double)in->E[q]);
    strength[i] = (float)((1.0 - cue->weight) * v + cue->weight * pred[in->arc[i]]);
  }
  if (cue->record) {
    app_arc_record *rec = cue->record;
    app_arc_record_free(rec);
    rec->crack = malloc((in->ncracks ? in->ncracks : 1) * sizeof(*rec->crack));
    rec->arc = malloc((in->ncracks ? in->ncracks : 1) * sizeof(*rec->arc));
    if (!rec->crack || !rec->arc) {
      app_arc_record_free(rec);
      status =
          dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the record of %zu cracks", in->ncracks);
      goto out;
    }
    memcpy(rec->crack, in->crack, in->ncracks * sizeof(*rec->crack));
    memcpy(rec->arc, in->arc, in->ncracks * sizeof(*rec->arc));
    rec->ncracks = in->ncracks;
    rec->narcs = A;
    rec->features = X;
    X = NULL;
  }
out:
  free(acc);
  free(X);
  free(pred);
  return status;
}
