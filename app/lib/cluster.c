/* Spectral embedding, k-means with k-means++ seeding, and the adjusted Rand index.
 * Sums over pixels are taken over a fixed number of chunks combined in order, so results do not
 * depend on the number of threads. */
#include "diaseg_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NCHUNK 64 /* fixed partition of the points for deterministic reductions */

double app_min_support(size_t n)
{
  return n / APP_SPECK_FRACTION > APP_SPECK_PIXELS ? (double)(n / APP_SPECK_FRACTION)
                                                   : (double)APP_SPECK_PIXELS;
}

double app_support(const eig_result *res, int j)
{
  const float *u = res->vectors + (size_t)j * (size_t)res->n;
  double s2 = 0.0, s4 = 0.0;
  for (int i = 0; i < res->n; i++) {
    double q = (double)u[i] * u[i];
    s2 += q;
    s4 += q * q;
  }
  return s4 > 0.0 ? s2 * s2 / s4 : 0.0;
}

typedef struct mass_entry {
  double m;
  int i;
} mass_entry;

static int cmp_mass_desc(const void *a, const void *b)
{
  double x = ((const mass_entry *)a)->m, y = ((const mass_entry *)b)->m;
  return (x < y) - (x > y);
}

int app_localised_support(const eig_result *res, int j, int max_pixels, int *pixels)
{
  const float *u = res->vectors + (size_t)j * (size_t)res->n;
  mass_entry top[256];
  int ntop = 0, count = 0;
  double total = 0.0, acc = 0.0;
  if (max_pixels > 256)
    max_pixels = 256;
  /* keep the max_pixels largest entries (insertion into a small sorted array) */
  for (int i = 0; i < res->n; i++) {
    double m = (double)u[i] * u[i];
    total += m;
    if (ntop < max_pixels || m > top[ntop - 1].m) {
      int p = ntop < max_pixels ? ntop++ : ntop - 1;
      while (p > 0 && top[p - 1].m < m) {
        top[p] = top[p - 1];
        p--;
      }
      top[p].m = m;
      top[p].i = i;
    }
  }
  qsort(top, (size_t)ntop, sizeof(*top), cmp_mass_desc);
  for (; count < ntop && acc < (1.0 - 1e-3) * total; count++) {
    acc += top[count].m;
    pixels[count] = top[count].i;
  }
  return acc >= (1.0 - 1e-3) * total ? count : 0;
}

int app_pick_vectors(const eig_result *res, int k, double min_support, int *pick)
{
  int got = 0, skipped = 0;
  for (int j = 0; j < res->nconv && got < k; j++) {
    if (app_support(res, j) >= min_support)
      pick[got++] = j;
    else
      skipped++;
  }
  if (got < k) { /* not enough spread-out vectors: use the top k as they are */
    for (int j = 0; j < k; j++)
      pick[j] = j;
    return 0;
  }
  return skipped;
}

int app_embedding(const eig_result *res, const double *sqrt_degree, const int *pick, int k,
                  float **emb, int *dim)
{
  const int n = res->n, m = k - 1;
  double a[APP_MAX_EMBED], w[APP_MAX_EMBED], h[APP_MAX_EMBED][APP_MAX_EMBED], tt = 0.0, an = 0.0,
                                                                              ww;
  float *e;
  *emb = NULL;
  if (k < 2 || k > res->nconv)
    return dsg_error_set(DSG_ERR_INVALID, "-k %d needs 2 <= k <= the %d eigenvectors computed", k,
                         res->nconv);
  for (int j = 0; pick && j < k; j++)
    if (pick[j] < 0 || pick[j] >= res->nconv)
      return dsg_error_set(DSG_ERR_INVALID, "embedding vector %d does not exist", pick[j]);
  if (k > APP_MAX_EMBED)
    return dsg_error_set(DSG_ERR_INVALID, "-k %d is over the embedding limit of %d", k,
                         APP_MAX_EMBED);
  /* a = U_k^T t for the trivial direction t = D^1/2 1 / |D^1/2 1| */
  for (int i = 0; i < n; i++)
    tt += sqrt_degree[i] * sqrt_degree[i];
  for (int j = 0; j < k; j++) {
    const float *u = res->vectors + (size_t)(pick ? pick[j] : j) * (size_t)n;
    double s = 0.0;
    for (int i = 0; i < n; i++)
      s += (double)u[i] * sqrt_degree[i];
    a[j] = s / sqrt(tt);
    an += a[j] * a[j];
  }
  /* Householder H = I - 2 w w^T / (w^T w) maps a / |a| to -+e_0: its columns 1..k-1 are an
   * orthonormal basis of span(U_k) without t. For a connected image a = e_0 and H = I (up to the
   * sign of column 0), i.e. plain "drop u_0". */
  an = sqrt(an);
  for (int j = 0; j < k; j++)
    w[j] = an > 0.0 ? a[j] / an : (j == 0);
  w[0] += w[0] >= 0.0 ? 1.0 : -1.0;
  ww = 0.0;
  for (int j = 0; j < k; j++)
    ww += w[j] * w[j];
  for (int r = 0; r < k; r++)
    for (int c = 0; c < k; c++)
      h[r][c] = (r == c) - 2.0 * w[r] * w[c] / ww;

  e = malloc((size_t)n * (size_t)m * sizeof(*e));
  if (!e)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d embedding", n, m);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    double ss = 0.0, u[APP_MAX_EMBED];
    float *row = e + (size_t)i * (size_t)m;
    for (int r = 0; r < k; r++)
      u[r] = res->vectors[(size_t)(pick ? pick[r] : r) * (size_t)n + (size_t)i];
    for (int j = 0; j < m; j++) {
      double q = 0.0;
      for (int r = 0; r < k; r++)
        q += u[r] * h[r][j + 1];
      double v = q / sqrt_degree[i]; /* generalised eigenvector entry: D^-1/2 u */
      row[j] = (float)v;
      ss += v * v;
    }
    if (ss > 0.0) {
      float s = (float)(1.0 / sqrt(ss));
      for (int j = 0; j < m; j++)
        row[j] *= s;
    }
  }
  *emb = e;
  *dim = m;
  return DSG_OK;
}

void app_fill_specks(int *labels, const app_components *comps, int width, int height)
{
  const size_t n = (size_t)width * (size_t)height;
  int changed = 1;
  if (comps->significant >= comps->count)
    return;
  for (size_t i = 0; i < n; i++)
    if (comps->label[i] >= comps->significant)
      labels[i] = -1;
  /* sweeps until every speck pixel has a labelled neighbour chain (specks are small) */
  while (changed) {
    changed = 0;
    for (int y = 0; y < height; y++)
      for (int x = 0; x < width; x++) {
        const size_t i = (size_t)y * (size_t)width + (size_t)x;
        if (labels[i] >= 0)
          continue;
        int l = x > 0 ? labels[i - 1] : -1;
        if (l < 0 && y > 0)
          l = labels[i - (size_t)width];
        if (l < 0 && x + 1 < width)
          l = labels[i + 1];
        if (l < 0 && y + 1 < height)
          l = labels[i + (size_t)width];
        if (l >= 0) {
          labels[i] = l;
          changed = 1;
        }
      }
  }
  for (size_t i = 0; i < n; i++)
    if (labels[i] < 0)
      labels[i] = 0; /* only if no pixel outside specks exists at all */
}

/* splitmix64: small, fast, and good enough for seeding. */
static uint64_t rng_next(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s) { return (double)(rng_next(s) >> 11) * 0x1.0p-53; }

static double dist2(const float *a, const double *c, int dim)
{
  double s = 0.0;
  for (int j = 0; j < dim; j++) {
    double d = (double)a[j] - c[j];
    s += d * d;
  }
  return s;
}

/* k-means++: the first centre uniformly, each next one with probability ~ squared distance to the
 * nearest centre so far. */
static void seed_centres(const float *pts, size_t n, int dim, int k, uint64_t *rng, double *centres,
                         double *d2)
{
  size_t first = (size_t)(rng_uniform(rng) * (double)n);
  if (first >= n)
    first = n - 1;
  for (int j = 0; j < dim; j++)
    centres[j] = pts[first * (size_t)dim + (size_t)j];
  for (size_t i = 0; i < n; i++)
    d2[i] = dist2(pts + i * (size_t)dim, centres, dim);
  for (int c = 1; c < k; c++) {
    double chunk_sum[NCHUNK], total = 0.0, target;
    size_t pick = n - 1;
#pragma omp parallel for schedule(static)
    for (int b = 0; b < NCHUNK; b++) {
      size_t lo = n * (size_t)b / NCHUNK, hi = n * (size_t)(b + 1) / NCHUNK;
      double s = 0.0;
      for (size_t i = lo; i < hi; i++)
        s += d2[i];
      chunk_sum[b] = s;
    }
    for (int b = 0; b < NCHUNK; b++)
      total += chunk_sum[b];
    target = rng_uniform(rng) * total;
    if (total > 0.0) {
      for (int b = 0; b < NCHUNK; b++) {
        if (target >= chunk_sum[b] && b < NCHUNK - 1) {
          target -= chunk_sum[b];
          continue;
        }
        size_t lo = n * (size_t)b / NCHUNK, hi = n * (size_t)(b + 1) / NCHUNK;
        for (size_t i = lo; i < hi; i++) {
          pick = i;
          if (d2[i] > 0.0 && target < d2[i])
            break;
          target -= d2[i];
        }
        break;
      }
    } else {
      pick = (size_t)(rng_uniform(rng) * (double)n); /* all points coincide with the centres */
      if (pick >= n)
        pick = n - 1;
    }
    double *cc = centres + (size_t)c * (size_t)dim;
    for (int j = 0; j < dim; j++)
      cc[j] = pts[pick * (size_t)dim + (size_t)j];
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) {
      double d = dist2(pts + i * (size_t)dim, cc, dim);
      if (d < d2[i])
        d2[i] = d;
    }
  }
}

/* Lloyd's iterations from the given centres; returns the inertia. */
static double lloyd(const float *pts, size_t n, int dim, int k, int max_iter, double *centres,
                    int *labels, double *sums, double *d2)
{
  double inertia = 0.0;
  size_t counts_len = (size_t)NCHUNK * (size_t)k;
  long *counts = calloc(counts_len, sizeof(*counts));
  if (!counts)
    return -1.0;
  for (int it = 0; it < max_iter; it++) {
    long changed = 0;
    inertia = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : changed)
    for (size_t i = 0; i < n; i++) {
      const float *p = pts + i * (size_t)dim;
      int best = 0;
      double bd = DBL_MAX;
      for (int c = 0; c < k; c++) {
        double d = dist2(p, centres + (size_t)c * (size_t)dim, dim);
        if (d < bd) {
          bd = d;
          best = c;
        }
      }
      changed += labels[i] != best;
      labels[i] = best;
      d2[i] = bd;
    }
    /* new centres: per-chunk sums, combined in chunk order */
    memset(sums, 0, (size_t)NCHUNK * (size_t)k * (size_t)dim * sizeof(*sums));
    memset(counts, 0, counts_len * sizeof(*counts));
#pragma omp parallel for schedule(static)
    for (int b = 0; b < NCHUNK; b++) {
      size_t lo = n * (size_t)b / NCHUNK, hi = n * (size_t)(b + 1) / NCHUNK;
      double *s = sums + (size_t)b * (size_t)k * (size_t)dim;
      long *cnt = counts + (size_t)b * (size_t)k;
      for (size_t i = lo; i < hi; i++) {
        const float *p = pts + i * (size_t)dim;
        double *sc = s + (size_t)labels[i] * (size_t)dim;
        cnt[labels[i]]++;
        for (int j = 0; j < dim; j++)
          sc[j] += p[j];
      }
    }
    for (size_t i = 0; i < n; i++)
      inertia += d2[i];
    if (changed == 0 && it > 0)
      break;
    for (int c = 0; c < k; c++) {
      long total = 0;
      double *cc = centres + (size_t)c * (size_t)dim;
      for (int b = 0; b < NCHUNK; b++)
        total += counts[(size_t)b * (size_t)k + (size_t)c];
      if (total == 0) {
        /* empty cluster: move it onto the point farthest from its centre */
        size_t far = 0;
        for (size_t i = 1; i < n; i++)
          if (d2[i] > d2[far])
            far = i;
        for (int j = 0; j < dim; j++)
          cc[j] = pts[far * (size_t)dim + (size_t)j];
        d2[far] = 0.0;
        continue;
      }
      for (int j = 0; j < dim; j++) {
        double s = 0.0;
        for (int b = 0; b < NCHUNK; b++)
          s += sums[((size_t)b * (size_t)k + (size_t)c) * (size_t)dim + (size_t)j];
        cc[j] = s / (double)total;
      }
    }
  }
  free(counts);
  return inertia;
}

/* Renumbers labels 0..k-1 in order of first appearance. */
static void canonical_labels(int *labels, size_t n, int k)
{
  int *map = malloc((size_t)k * sizeof(*map));
  int next = 0;
  if (!map)
    return; /* labels stay valid, just not canonical */
  for (int c = 0; c < k; c++)
    map[c] = -1;
  for (size_t i = 0; i < n; i++) {
    if (map[labels[i]] < 0)
      map[labels[i]] = next++;
    labels[i] = map[labels[i]];
  }
  free(map);
}

int app_kmeans(const float *points, size_t n, int dim, const app_kmeans_params *p, int *labels,
               double *inertia)
{
  int status = DSG_OK;
  double best = DBL_MAX, *centres = NULL, *sums = NULL, *d2 = NULL;
  int *trial = NULL;
  uint64_t rng = p->seed ^ 0x6b6d65616e732b2bull; /* "kmeans++" */

  if (p->k < 1 || (size_t)p->k > n)
    return dsg_error_set(DSG_ERR_INVALID, "k-means needs 1 <= k <= %zu points (k = %d)", n, p->k);
  if (p->restarts < 1 || p->max_iter < 1)
    return dsg_error_set(DSG_ERR_INVALID, "k-means needs restarts >= 1 and iterations >= 1");
  if (p->k == 1 || dim == 0) {
    memset(labels, 0, n * sizeof(*labels));
    if (inertia)
      *inertia = 0.0;
    return DSG_OK;
  }
  centres = malloc((size_t)p->k * (size_t)dim * sizeof(*centres));
  sums = malloc((size_t)NCHUNK * (size_t)p->k * (size_t)dim * sizeof(*sums));
  d2 = malloc(n * sizeof(*d2));
  trial = malloc(n * sizeof(*trial));
  if (!centres || !sums || !d2 || !trial) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate k-means state for %zu points", n);
    goto out_free;
  }
  for (int r = 0; r < p->restarts; r++) {
    double in;
    seed_centres(points, n, dim, p->k, &rng, centres, d2);
    for (size_t i = 0; i < n; i++)
      trial[i] = -1;
    in = lloyd(points, n, dim, p->k, p->max_iter, centres, trial, sums, d2);
    if (in < 0.0) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate k-means counters");
      goto out_free;
    }
    if (in < best) {
      best = in;
      memcpy(labels, trial, n * sizeof(*labels));
    }
  }
  canonical_labels(labels, n, p->k);
  if (inertia)
    *inertia = best;

out_free:
  free(centres);
  free(sums);
  free(d2);
  free(trial);
  return status;
}

double app_adjusted_rand(const int *a, const int *b, size_t n)
{
  int ka = 0, kb = 0;
  double sum_ij = 0.0, sum_a = 0.0, sum_b = 0.0, total, expected, maxi;
  long *table, *ra, *rb;
  for (size_t i = 0; i < n; i++) {
    ka = a[i] + 1 > ka ? a[i] + 1 : ka;
    kb = b[i] + 1 > kb ? b[i] + 1 : kb;
  }
  table = calloc((size_t)ka * (size_t)kb, sizeof(*table));
  ra = calloc((size_t)ka, sizeof(*ra));
  rb = calloc((size_t)kb, sizeof(*rb));
  if (!table || !ra || !rb) {
    free(table);
    free(ra);
    free(rb);
    return NAN;
  }
  for (size_t i = 0; i < n; i++) {
    table[(size_t)a[i] * (size_t)kb + (size_t)b[i]]++;
    ra[a[i]]++;
    rb[b[i]]++;
  }
#define C2(x) ((double)(x) * ((double)(x)-1.0) / 2.0)
  for (size_t c = 0; c < (size_t)ka * (size_t)kb; c++)
    sum_ij += C2(table[c]);
  for (int c = 0; c < ka; c++)
    sum_a += C2(ra[c]);
  for (int c = 0; c < kb; c++)
    sum_b += C2(rb[c]);
  total = C2(n);
#undef C2
  free(table);
  free(ra);
  free(rb);
  expected = total > 0.0 ? sum_a * sum_b / total : 0.0;
  maxi = 0.5 * (sum_a + sum_b);
  if (maxi == expected)
    return 1.0; /* both labelings trivial (one cluster each, or all singletons) */
  return (sum_ij - expected) / (maxi - expected);
}
