/* The pixel-affinity matrix of radius-r discs, normalised for normalized cuts, in DIA form. */
#include "diaseg_internal.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

int app_disc_size(int radius)
{
  int count = 0;
  for (int dy = -radius; dy <= radius; dy++)
    for (int dx = -radius; dx <= radius; dx++)
      count += dx * dx + dy * dy <= radius * radius;
  return count;
}

void app_disc_offsets(int radius, int *dx, int *dy)
{
  int k = 0;
  for (int y = -radius; y <= radius; y++)
    for (int x = -radius; x <= radius; x++)
      if (x * x + y * y <= radius * radius) {
        dx[k] = x;
        dy[k] = y;
        k++;
      }
}

/* Bresenham's points t (dx, dy) / L rounded, t = 0 .. L = max(|dx|, |dy|), with the corner
 * (x_next, y) put in at each diagonal step: a 4-connected line cannot slip between the pixels of
 * a thin (8-connected) contour. Computed for the upper half plane only (dy > 0, or dy = 0 and
 * dx > 0); the other half is the reflection shifted back, the same pixels seen from j. */
int app_line(int dx, int dy, int *px, int *py)
{
  if (!(dy > 0 || (dy == 0 && dx >= 0))) {
    const int m = app_line(-dx, -dy, px, py);
    for (int t = 0; t < m - 1 - t; t++) { /* reversed, so that it runs from (0, 0) */
      const int x = px[t], y = py[t];
      px[t] = px[m - 1 - t];
      py[t] = py[m - 1 - t];
      px[m - 1 - t] = x;
      py[m - 1 - t] = y;
    }
    for (int t = 0; t < m; t++) {
      px[t] += dx;
      py[t] += dy;
    }
    return m;
  }
  const int L = abs(dx) > abs(dy) ? abs(dx) : abs(dy);
  int m = 0, x0 = 0, y0 = 0;
  px[m] = 0;
  py[m++] = 0;
  for (int t = 1; t <= L; t++) {
    const int x = (int)floor((double)t * dx / L + 0.5), y = (int)floor((double)t * dy / L + 0.5);
    if (x != x0 && y != y0) {
      px[m] = x;
      py[m++] = y0;
    }
    px[m] = x;
    py[m++] = y;
    x0 = x;
    y0 = y;
  }
  return m;
}

/* W, D and N on p->device: the geometry (offsets, their diagonals, the lines as points) handed
 * over as data; *degree receives D^1/2 */
static int build_on_device(const app_affinity_params *p, int width, int height,
                           const float *features, int nfeat, int ndisc, const int *dx,
                           const int *dy, const int *diag_of, const int *line_at, spmv_dia *A,
                           double **degree)
{
  int *lx = NULL, *ly = NULL, linked = 0, status = DSG_OK;
  if (p->contours) {
    lx = malloc((size_t)line_at[ndisc] * sizeof(*lx));
    ly = malloc((size_t)line_at[ndisc] * sizeof(*ly));
    if (!lx || !ly) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the lines of the affinity");
      goto out;
    }
    for (int k = 0; k < ndisc; k++)
      app_line(dx[k], dy[k], lx + line_at[k], ly + line_at[k]);
  }
  {
    const spmv_affinity_geometry g = {ndisc, dx, dy, diag_of, p->contours ? line_at : NULL, lx, ly};
    status = spmv_cl_affinity(p->device, &g, width, height, nfeat > 0 ? features : NULL, nfeat,
                              p->contours, p->sigma_i, p->sigma_x, p->sigma_c, A, *degree, &linked,
                              NULL);
  }
  if (status == DSG_OK && !linked)
    status = dsg_error_set(DSG_ERR_INVALID,
                           "no pixel has a neighbour: every weight of this image is 0 or below "
                           "float resolution (1e-7); raise " DSG_PARAM("sigma_i") " (or " DSG_PARAM(
                               "sigma_c") " for a contour cue)");
out:
  free(lx);
  free(ly);
  return status;
}

static int cmp_int(const void *a, const void *b)
{
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int check_params(int width, int height, int nfeat, const app_affinity_params *p)
{
  if (width < 1 || height < 1)
    return dsg_error_set(DSG_ERR_INVALID, "image is %d x %d; it needs at least one pixel", width,
                         height);
  if ((long long)width * height > INT_MAX / 2)
    return dsg_error_set(DSG_ERR_LIMIT, "image %d x %d has more pixels than diaseg indexes (%d)",
                         width, height, INT_MAX / 2);
  if (nfeat < (p->contours ? 0 : 1))
    return dsg_error_set(DSG_ERR_INVALID, "features need at least one channel");
  if (p->contours && (!isfinite(p->sigma_c) || !(p->sigma_c > 0.0)))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("sigma_c") " %g is invalid: it must be finite and > 0",
                         p->sigma_c);
  if (p->radius < 1 || p->radius > APP_MAX_RADIUS)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("radius") " %d is out of range: it must be in [1, %d] "
                                             "(radius 0 gives no neighbours)",
                         p->radius, APP_MAX_RADIUS);
  if (!isfinite(p->sigma_i) || !(p->sigma_i > 0.0))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("sigma_i") " %g is invalid: it must be finite and > 0",
                         p->sigma_i);
  if (!isfinite(p->sigma_x) || !(p->sigma_x > 0.0))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("sigma_x") " %g is invalid: it must be finite and > 0",
                         p->sigma_x);
  /* the weights divide by sigma^2: it must be a normal double (not 0, not subnormal, not inf) */
  if (!isnormal(p->sigma_i * p->sigma_i))
    return dsg_error_set(
        DSG_ERR_INVALID,
        DSG_PARAM("sigma_i") " %g is out of range: sigma_i^2 = %g is not a normal positive "
                             "double (it must lie in [%g, %g])",
        p->sigma_i, p->sigma_i * p->sigma_i, sqrt(DBL_MIN), sqrt(DBL_MAX));
  if (!isnormal(p->sigma_x * p->sigma_x))
    return dsg_error_set(
        DSG_ERR_INVALID,
        DSG_PARAM("sigma_x") " %g is out of range: sigma_x^2 = %g is not a normal positive "
                             "double (it must lie in [%g, %g])",
        p->sigma_x, p->sigma_x * p->sigma_x, sqrt(DBL_MIN), sqrt(DBL_MAX));
  /* The nearest neighbour's weight exp(-1 / sigma_x^2) bounds every edge: at or below
   * APP_COMPONENT_THRESHOLD (float resolution; below FLT_MIN it underflows to 0) no pixel has a
   * neighbour and N is the identity. */
  const float nearest = (float)exp(-1.0 / (p->sigma_x * p->sigma_x));
  if (!(nearest > APP_COMPONENT_THRESHOLD)) {
    /* the smallest usable value, rounded up to 4 significant digits */
    const double min_sx = 1.0 / sqrt(-log((double)APP_COMPONENT_THRESHOLD));
    const double scale = pow(10.0, 3 - floor(log10(min_sx)));
    return dsg_error_set(
        DSG_ERR_INVALID,
        DSG_PARAM("sigma_x") " %g is too small: the weight of a pixel's nearest neighbour, "
                             "exp(-1 / sigma_x^2) = %.3g, %s, so no pixel has a neighbour; the "
                             "smallest usable " DSG_PARAM("sigma_x") " is %.4g",
        p->sigma_x, (double)nearest,
        nearest == 0.0f ? "underflows to 0 in float"
                        : "is below float resolution (diaseg counts weights "
                          "<= 1e-7 as no edge)",
        ceil(min_sx * scale) / scale);
  }
  return DSG_OK;
}

/* Pixels each thread handles between two looks at the cancel flag: ~20 ms of pass 1 on one core,
 * so that a signal is seen at once and the look costs nothing. */
#define CANCEL_PIXELS_PER_THREAD 65536

/* Pixels per band of the passes below: the loops run band by band, the cancel flag looked at in
 * between (by the calling thread, outside the parallel loops). Each pixel's arithmetic is the
 * same in any band, so N does not depend on the band size. */
static long long band_pixels(void)
{
#ifdef _OPENMP
  return (long long)CANCEL_PIXELS_PER_THREAD * omp_get_max_threads();
#else
  return CANCEL_PIXELS_PER_THREAD;
#endif
}

static int check_cancel(const volatile sig_atomic_t *cancel)
{
  if (cancel && *cancel)
    return dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                         (int)*cancel);
  return DSG_OK;
}

int app_affinity_build_cancel(int width, int height, const float *features, int nfeat,
                              const app_affinity_params *p, const volatile sig_atomic_t *cancel,
                              spmv_dia **N_out, double **sqrt_degree)
{
  int status, ndisc, nvalid = 0, ndiag = 0;
  int *dx = NULL, *dy = NULL, *diag_of = NULL, *offsets = NULL, *line = NULL, *line_at = NULL;
  double *spatial = NULL, *degree = NULL;
  spmv_dia *A = NULL;

  *N_out = NULL;
  if (sqrt_degree)
    *sqrt_degree = NULL;
  status = check_params(width, height, nfeat, p);
  if (status != DSG_OK)
    return status;

  const int n = width * height;
  const double inv_si2 = 1.0 / (p->sigma_i * p->sigma_i), inv_sx2 = 1.0 / (p->sigma_x * p->sigma_x);
  ndisc = app_disc_size(p->radius);
  dx = malloc((size_t)ndisc * sizeof(*dx));
  dy = malloc((size_t)ndisc * sizeof(*dy));
  diag_of = malloc((size_t)ndisc * sizeof(*diag_of));
  offsets = malloc((size_t)ndisc * sizeof(*offsets));
  spatial = malloc((size_t)ndisc * sizeof(*spatial));
  degree = calloc((size_t)n, sizeof(*degree));
  if (p->contours) { /* lines of at most 2r + 1 pixels */
    line = malloc((size_t)ndisc * (size_t)(2 * p->radius + 1) * sizeof(*line));
    line_at = malloc((size_t)(ndisc + 1) * sizeof(*line_at));
  }
  if (!dx || !dy || !diag_of || !offsets || !spatial || !degree ||
      (p->contours && (!line || !line_at))) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the affinity of %d pixels", n);
    goto out_free;
  }
  app_disc_offsets(p->radius, dx, dy);
  if (p->contours) { /* each offset's line as pixel offsets y * width + x */
    int px[2 * APP_MAX_RADIUS + 1], py[2 * APP_MAX_RADIUS + 1];
    line_at[0] = 0;
    for (int k = 0; k < ndisc; k++) {
      const int m = app_line(dx[k], dy[k], px, py);
      for (int t = 0; t < m; t++)
        line[line_at[k] + t] = py[t] * width + px[t];
      line_at[k + 1] = line_at[k] + m;
    }
  }
  const double inv_sc = p->contours ? 1.0 / p->sigma_c : 0.0;

  /* Diagonals: the distinct offsets dy * width + dx of disc entries that can join two pixels. */
  for (int k = 0; k < ndisc; k++) {
    spatial[k] = exp(-(double)(dx[k] * dx[k] + dy[k] * dy[k]) * inv_sx2);
    if (abs(dx[k]) < width && abs(dy[k]) < height)
      offsets[nvalid++] = dy[k] * width + dx[k];
  }
  if (nvalid < 2) {
    status = dsg_error_set(DSG_ERR_INVALID,
                           DSG_PARAM("radius") " %d gives the pixels of a %d x %d image no "
                                               "neighbours",
                           p->radius, width, height);
    goto out_free;
  }
  qsort(offsets, (size_t)nvalid, sizeof(*offsets), cmp_int);
  for (int k = 0; k < nvalid; k++)
    if (ndiag == 0 || offsets[k] != offsets[ndiag - 1])
      offsets[ndiag++] = offsets[k];
  for (int k = 0; k < ndisc; k++) {
    const int o = dy[k] * width + dx[k];
    const int *hit = bsearch(&o, offsets, (size_t)ndiag, sizeof(*offsets), cmp_int);
    diag_of[k] = abs(dx[k]) < width && abs(dy[k]) < height && hit ? (int)(hit - offsets) : -1;
  }
  /* made on the device, N's values stay there: the host reads them back only where it needs them
   * (spmv_dia_host) */
  status = p->device ? spmv_dia_create_shape(&A, n, ndiag, offsets)
                     : spmv_dia_create(&A, n, ndiag, offsets);
  if (status != DSG_OK)
    goto out_free;
  if (width > 2 * p->radius + 1) /* every disc offset distinct, |dx| < width / 2: a stencil */
    A->width = width;
  if (p->device) { /* both passes on the OpenCL device (kernels/affinity.cl) */
    status = build_on_device(p, width, height, features, nfeat, ndisc, dx, dy, diag_of, line_at, A,
                             &degree);
    if (status != DSG_OK)
      goto out_free;
    goto done;
  }

  /* Pass 1: W (float) into the diagonals, D = row sums of W (double). need: the smallest
   * sigma_i that lifts the weight of a pair at or below APP_COMPONENT_THRESHOLD above it (for the
   * message when no pixel has a neighbour). */
  const double log_thr = -log((double)APP_COMPONENT_THRESHOLD);
  const long long band = band_pixels();
  const int band_rows = band / width > height ? height : band / width > 0 ? (int)(band / width) : 1;
  double need = HUGE_VAL;
  for (int y0 = 0; y0 < height && status == DSG_OK; y0 += band_rows) {
    const int y1 = height - y0 > band_rows ? y0 + band_rows : height;
#pragma omp parallel for schedule(static) reduction(min : need)
    for (int y = y0; y < y1; y++) {
      for (int x = 0; x < width; x++) {
        const int i = y * width + x;
        const float *fi =
            features ? features + (size_t)i * (size_t)nfeat : NULL; /* contour: none */
        double sum = 0.0;
        for (int k = 0; k < ndisc; k++) {
          const int xj = x + dx[k], yj = y + dy[k];
          if (diag_of[k] < 0 || xj < 0 || xj >= width || yj < 0 || yj >= height)
            continue;
          const float *fj =
              features ? features + ((size_t)yj * (size_t)width + (size_t)xj) * (size_t)nfeat
                       : NULL;
          double dist2 = 0.0;
          for (int c = 0; c < nfeat; c++) {
            double diff = (double)fi[c] - (double)fj[c];
            dist2 += diff * diff;
          }
          double ic = 0.0;
          if (line)
            for (int t = line_at[k]; t < line_at[k + 1]; t++) {
              const double e = p->contours[i + line[t]];
              ic = e > ic ? e : ic;
            }
          const double w = exp(-dist2 * inv_si2 - ic * inv_sc) * spatial[k];
          A->values[(size_t)diag_of[k] * A->pitch + (size_t)i] = (float)w;
          if (!((float)w > APP_COMPONENT_THRESHOLD) && dist2 > 0.0) {
            const double room =
                log_thr - (double)(dx[k] * dx[k] + dy[k] * dy[k]) * inv_sx2 - ic * inv_sc;
            if (room > 0.0 && sqrt(dist2 / room) < need)
              need = sqrt(dist2 / room);
          }
          sum += w;
        }
        degree[i] = sum;
      }
    }
    status = check_cancel(cancel);
  }
  if (status != DSG_OK)
    goto out_free;
  /* Pass 2: N_ij = W_ij * (s_i * s_j), s = D^-1/2; the product s_i * s_j keeps N exactly
   * symmetric. degree becomes D^1/2. linked: some pixel has a neighbour, an edge N_ij above
   * APP_COMPONENT_THRESHOLD (what app_components_find counts). */
  int linked = 0;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++)
    degree[i] = sqrt(degree[i]);
  for (int i0 = 0; i0 < n && status == DSG_OK; i0 += (int)(band < n ? band : n)) {
    const int i1 = n - i0 > band ? i0 + (int)band : n;
#pragma omp parallel for schedule(static) reduction(| : linked)
    for (int i = i0; i < i1; i++) {
      for (int d = 0; d < ndiag; d++) {
        const long long j = (long long)i + offsets[d];
        float *a = A->values + (size_t)d * A->pitch + (size_t)i;
        if (j >= 0 && j < n && *a != 0.0f) {
          *a = (float)((double)*a * (1.0 / (degree[i] * degree[j])));
          linked |= offsets[d] != 0 && *a > APP_COMPONENT_THRESHOLD;
        }
      }
    }
    status = check_cancel(cancel);
  }
  if (status != DSG_OK)
    goto out_free;
  if (!linked && p->contours && !isfinite(need)) {
    status = dsg_error_set(DSG_ERR_INVALID,
                           "no pixel has a neighbour: with " DSG_PARAM(
                               "sigma_c") " %g the contour term exp(-max contour / sigma_c) puts "
                                          "every weight below float resolution (1e-7); raise "
                                          "it",
                           p->sigma_c);
    goto out_free;
  }
  if (!linked) {
    /* 1% over the bound, rounded up to 3 significant digits */
    const double scale = isfinite(need) ? pow(10.0, 2 - floor(log10(need * 1.01))) : 1.0;
    status = dsg_error_set(
        DSG_ERR_INVALID,
        "no pixel has a neighbour: with " DSG_PARAM(
            "sigma_i") " %g every weight "
                       "exp(-|F_i - F_j|^2 / sigma_i^2 - |X_i - X_j|^2 / sigma_x^2) of "
                       "this image is 0 or below float resolution (1e-7); raise " DSG_PARAM(
                           "sigma_i") " "
                                      "to at least %.3g",
        p->sigma_i, isfinite(need) ? ceil(need * 1.01 * scale) / scale : 1.0);
    goto out_free;
  }
done:
  A->symmetric = 1; /* N_ij = N_ji exactly: W's terms are symmetric in i, j, and s_i s_j too */
  *N_out = A;
  A = NULL;
  if (sqrt_degree) {
    *sqrt_degree = degree;
    degree = NULL;
  }

out_free:
  spmv_dia_destroy(A);
  free(dx);
  free(dy);
  free(diag_of);
  free(offsets);
  free(spatial);
  free(degree);
  free(line);
  free(line_at);
  return status;
}

int app_affinity_build(int width, int height, const float *features, int nfeat,
                       const app_affinity_params *p, spmv_dia **N_out, double **sqrt_degree)
{
  return app_affinity_build_cancel(width, height, features, nfeat, p, NULL, N_out, sqrt_degree);
}

typedef struct comp_size {
  int size, id, speck;
} comp_size;

/* significant first, then larger first; equal sizes in order of first appearance */
static int cmp_group(const void *a, const void *b)
{
  const comp_size *x = a, *y = b;
  if (x->speck != y->speck)
    return x->speck - y->speck;
  if (x->size != y->size)
    return x->size < y->size ? 1 : -1;
  return (x->id > y->id) - (x->id < y->id);
}

int app_components_find(const spmv_dia *N, const double *sqrt_degree, app_components *c)
{
  spmv_links fine, coarse;
  int status = spmv_dia_links(N, APP_SPECK_THRESHOLD, &fine);
  memset(&coarse, 0, sizeof(coarse));
  if (status == DSG_OK)
    status = spmv_dia_links(N, APP_COMPONENT_THRESHOLD, &coarse);
  if (status == DSG_OK)
    status = app_components_from_links(&fine, &coarse, sqrt_degree, c);
  else
    memset(c, 0, sizeof(*c));
  spmv_links_free(&fine);
  spmv_links_free(&coarse);
  return status;
}

int app_components_from_links(const spmv_links *fine_links, const spmv_links *coarse_links,
                              const double *sqrt_degree, app_components *c)
{
  const int n = fine_links->rows, min_size = (int)app_min_support((size_t)n);
  int *fine = NULL, *fine_size = NULL, *coarse_size = NULL, *group_of = NULL, *rank = NULL;
  int *coarse = NULL;
  int nfine = 0, ncoarse = 0, ngroups = 0, status;
  comp_size *groups = NULL;
  double *norm2 = NULL;

  memset(c, 0, sizeof(*c));
  c->label = malloc((size_t)n * sizeof(*c->label));
  c->values = malloc((size_t)n * sizeof(*c->values));
  fine = malloc((size_t)n * sizeof(*fine));
  coarse = malloc((size_t)n * sizeof(*coarse));
  if (!c->label || !c->values || !fine || !coarse) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate component labels for %d pixels", n);
    goto out;
  }
  /* coarse: true components; fine: what the speck threshold separates (inside them) */
  status = spmv_links_components_nested(fine_links, coarse_links, fine, &nfine, coarse, &ncoarse);
  if (status != DSG_OK)
    goto out;
  fine_size = calloc((size_t)nfine, sizeof(*fine_size));
  coarse_size = calloc((size_t)ncoarse, sizeof(*coarse_size));
  group_of = malloc((size_t)(nfine + ncoarse) * sizeof(*group_of));
  groups = calloc((size_t)(nfine + ncoarse), sizeof(*groups));
  if (!fine_size || !coarse_size || !group_of || !groups) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d components", nfine + ncoarse);
    goto out;
  }
  for (int i = 0; i < n; i++) {
    fine_size[fine[i]]++;
    coarse_size[coarse[i]]++;
  }
  /* group ids: coarse component k -> k; speck (small fine part, or small component) -> ncoarse +
   * its fine id. Fine parts are subsets of coarse components, so the groups are disjoint. */
  for (int k = 0; k < ncoarse + nfine; k++)
    group_of[k] = -1;
  for (int i = 0; i < n; i++) {
    int speck = fine_size[fine[i]] < min_size || coarse_size[coarse[i]] < min_size;
    int g = speck ? ncoarse + fine[i] : coarse[i];
    if (group_of[g] < 0) {
      group_of[g] = ngroups;
      groups[ngroups].id = ngroups;
      groups[ngroups].speck = speck;
      ngroups++;
    }
    groups[group_of[g]].size++;
    c->label[i] = group_of[g];
  }
  qsort(groups, (size_t)ngroups, sizeof(*groups), cmp_group);
  if (groups[0].speck)
    groups[0].speck = 0; /* the largest group always counts, even in an image of specks */
  rank = malloc((size_t)ngroups * sizeof(*rank));
  norm2 = calloc((size_t)ngroups, sizeof(*norm2));
  if (!rank || !norm2) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d components", ngroups);
    goto out;
  }
  for (int k = 0; k < ngroups; k++)
    rank[groups[k].id] = k;
  for (int i = 0; i < n; i++) {
    c->label[i] = rank[c->label[i]];
    norm2[c->label[i]] += sqrt_degree[i] * sqrt_degree[i];
  }
  for (int i = 0; i < n; i++)
    c->values[i] = (float)(sqrt_degree[i] / sqrt(norm2[c->label[i]]));
  c->count = ngroups;
  c->significant = 0;
  while (c->significant < ngroups && !groups[c->significant].speck)
    c->significant++;
  for (int k = c->significant; k < ngroups; k++)
    c->speck_pixels += (size_t)groups[k].size;
  /* whole components: each significant group is a coarse component minus its specks */
  {
    int *sig_of_coarse = malloc((size_t)ncoarse * sizeof(*sig_of_coarse));
    double *wn = calloc((size_t)(c->significant > 0 ? c->significant : 1), sizeof(*wn));
    c->whole_label = malloc((size_t)n * sizeof(*c->whole_label));
    c->whole_values = malloc((size_t)n * sizeof(*c->whole_values));
    if (!sig_of_coarse || !wn || !c->whole_label || !c->whole_values) {
      free(sig_of_coarse);
      free(wn);
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate whole components for %d pixels", n);
      goto out;
    }
    for (int k = 0; k < ncoarse; k++)
      sig_of_coarse[k] = -1;
    for (int i = 0; i < n; i++)
      if (c->label[i] < c->significant)
        sig_of_coarse[coarse[i]] = c->label[i];
    for (int i = 0; i < n; i++) {
      c->whole_label[i] = sig_of_coarse[coarse[i]];
      if (c->whole_label[i] >= 0)
        wn[c->whole_label[i]] += sqrt_degree[i] * sqrt_degree[i];
    }
    for (int i = 0; i < n; i++)
      c->whole_values[i] =
          c->whole_label[i] >= 0 ? (float)(sqrt_degree[i] / sqrt(wn[c->whole_label[i]])) : 0.0f;
    free(sig_of_coarse);
    free(wn);
  }
out:
  free(fine);
  free(coarse);
  free(fine_size);
  free(coarse_size);
  free(group_of);
  free(groups);
  free(rank);
  free(norm2);
  if (status != DSG_OK)
    app_components_free(c);
  return status;
}

int app_components_carve(app_components *c, const double *sqrt_degree, int n, const int *pixels,
                         int count)
{
  const int g = c->count;
  double *norm2 = calloc((size_t)g + 1, sizeof(*norm2));
  if (!norm2)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d component norms", g + 1);
  for (int k = 0; k < count; k++) {
    c->label[pixels[k]] = g;
    c->speck_pixels++;
  }
  c->count = g + 1;
  for (int i = 0; i < n; i++)
    norm2[c->label[i]] += sqrt_degree[i] * sqrt_degree[i];
  for (int i = 0; i < n; i++)
    c->values[i] = (float)(sqrt_degree[i] / sqrt(norm2[c->label[i]]));
  free(norm2);
  return DSG_OK;
}

void app_components_to_options(const app_components *c, eig_options *opt)
{
  opt->known_count = c->count;
  opt->known_keep = c->significant;
  opt->known_label = c->label;
  opt->known_values = c->values;
  opt->known_return_label = c->whole_label;
  opt->known_return_values = c->whole_values;
}

void app_components_free(app_components *c)
{
  free(c->label);
  free(c->values);
  free(c->whole_label);
  free(c->whole_values);
  memset(c, 0, sizeof(*c));
}
