/* Spectral embedding, k-means with k-means++ seeding (on the host or an OpenCL device: the same
 * labels), and the adjusted Rand index. Sums over pixels are taken over chunks fixed by the
 * problem's size, combined in order, so results do not depend on the number of threads. */
#include "diaseg_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The points' fixed partition for deterministic sums: chunks of about KMEANS_CHUNK points, at
 * least KMEANS_MIN_CHUNKS of them (the C path's threads share them out), and few enough that
 * the chunks' sums of every cluster and coordinate stay within KMEANS_MAX_SUMS doubles. */
#define KMEANS_CHUNK 512
#define KMEANS_MIN_CHUNKS 64
#define KMEANS_MAX_SUMS (1 << 22)

static int kmeans_chunks(size_t n, int k, int dim)
{
  const size_t cap = KMEANS_MAX_SUMS / ((size_t)k * (size_t)(dim > 0 ? dim : 1));
  size_t c = n / KMEANS_CHUNK;
  c = c < cap ? c : cap;
  return c > KMEANS_MIN_CHUNKS ? (int)c : KMEANS_MIN_CHUNKS;
}

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
  double biggest = 0.0;
  if (max_pixels > 256)
    max_pixels = 256;
  for (int i = 0; i < res->n; i++) {
    const double m = (double)u[i] * u[i];
    total += m;
    biggest = m > biggest ? m : biggest;
  }
  /* max_pixels entries hold at most max_pixels times the largest (the factor covers the sum's
   * rounding): short of the mass, the vector is spread out, as the selection below would find */
  if ((double)max_pixels * biggest * (1.0 + 1e-12) < (1.0 - 1e-3) * total)
    return 0;
  /* keep the max_pixels largest entries (insertion into a small sorted array) */
  for (int i = 0; i < res->n; i++) {
    double m = (double)u[i] * u[i];
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

/* ---- the engines: what k-means asks of its points ---- */

/* The points' side of k-means: their coordinates, the squared distances d2 to the nearest centre
 * so far, the labels of the run and the best run's. The host's arrays (host_ops, the C
 * reference) or an OpenCL device's copy (device_ops: spmv_cl_points, kernels/kmeans.cl); both
 * compute the same doubles in the same order, so they give the same labels bit for bit. Chunk
 * b of nchunk (kmeans_chunks) is the points [n b / nchunk, n (b + 1) / nchunk); a sum over the
 * points is each chunk's in index order, then the chunks' in chunk order. */
typedef struct kmeans_ops {
  /* point i's dim coordinates into p */
  int (*point)(void *ctx, size_t i, float *p);
  /* d2 = the distance to centre (first) or the smaller of that and d2; chunk_d2 its chunk sums */
  int (*distances)(void *ctx, const double *centre, int first, double *chunk_d2);
  /* d2[from .. from + count) into out */
  int (*d2)(void *ctx, size_t from, size_t count, double *out);
  /* labels the nearest centres (the first of equals), d2 their distances; each cluster's
   * coordinate sums (k * dim) and size (k), the chunks' sums of d2; *changed the labels that
   * moved */
  int (*assign)(void *ctx, const double *centres, double *sums, int64_t *counts, double *chunk_d2,
                long *changed);
  int (*reset)(void *ctx);             /* labels all -1 */
  int (*keep)(void *ctx);              /* the labels become the best */
  int (*best)(void *ctx, int *labels); /* the best labels */
} kmeans_ops;

typedef struct host_points {
  const float *pts;
  size_t n;
  int dim, k, nchunk;
  double *d2, *chunk_sums; /* chunk_sums: nchunk * k * dim */
  int64_t *chunk_counts;   /* nchunk * k */
  int *trial, *best;
} host_points;

static int host_point(void *ctx, size_t i, float *p)
{
  const host_points *h = ctx;
  memcpy(p, h->pts + i * (size_t)h->dim, (size_t)h->dim * sizeof(*p));
  return DSG_OK;
}

/* the chunks' sums of d2, each in index order */
static void host_chunk_d2(const host_points *h, double *chunk_d2)
{
  const size_t n = h->n;
  const int nchunk = h->nchunk;
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nchunk; b++) {
    size_t lo = n * (size_t)b / (size_t)nchunk, hi = n * (size_t)(b + 1) / (size_t)nchunk;
    double s = 0.0;
    for (size_t i = lo; i < hi; i++)
      s += h->d2[i];
    chunk_d2[b] = s;
  }
}

static int host_distances(void *ctx, const double *centre, int first, double *chunk_d2)
{
  host_points *h = ctx;
  const int dim = h->dim;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < h->n; i++) {
    const double d = dist2(h->pts + i * (size_t)dim, centre, dim);
    if (first || d < h->d2[i])
      h->d2[i] = d;
  }
  host_chunk_d2(h, chunk_d2);
  return DSG_OK;
}

static int host_d2(void *ctx, size_t from, size_t count, double *out)
{
  const host_points *h = ctx;
  memcpy(out, h->d2 + from, count * sizeof(*out));
  return DSG_OK;
}

static int host_assign(void *ctx, const double *centres, double *sums, int64_t *counts,
                       double *chunk_d2, long *changed)
{
  host_points *h = ctx;
  const size_t n = h->n;
  const int dim = h->dim, k = h->k;
  long moved = 0;
#pragma omp parallel for schedule(static) reduction(+ : moved)
  for (size_t i = 0; i < n; i++) {
    const float *p = h->pts + i * (size_t)dim;
    int best = 0;
    double bd = DBL_MAX;
    for (int c = 0; c < k; c++) {
      double d = dist2(p, centres + (size_t)c * (size_t)dim, dim);
      if (d < bd) {
        bd = d;
        best = c;
      }
    }
    moved += h->trial[i] != best;
    h->trial[i] = best;
    h->d2[i] = bd;
  }
  /* per-chunk sums, each in index order, then the chunks' in chunk order */
  const int nchunk = h->nchunk;
  memset(h->chunk_sums, 0, (size_t)nchunk * (size_t)k * (size_t)dim * sizeof(*h->chunk_sums));
  memset(h->chunk_counts, 0, (size_t)nchunk * (size_t)k * sizeof(*h->chunk_counts));
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nchunk; b++) {
    size_t lo = n * (size_t)b / (size_t)nchunk, hi = n * (size_t)(b + 1) / (size_t)nchunk;
    double *s = h->chunk_sums + (size_t)b * (size_t)k * (size_t)dim;
    int64_t *cnt = h->chunk_counts + (size_t)b * (size_t)k;
    for (size_t i = lo; i < hi; i++) {
      const float *p = h->pts + i * (size_t)dim;
      double *sc = s + (size_t)h->trial[i] * (size_t)dim;
      cnt[h->trial[i]]++;
      for (int j = 0; j < dim; j++)
        sc[j] += p[j];
    }
  }
#pragma omp parallel for schedule(static)
  for (int c = 0; c < k; c++) {
    int64_t total = 0;
    for (int b = 0; b < nchunk; b++)
      total += h->chunk_counts[(size_t)b * (size_t)k + (size_t)c];
    counts[c] = total;
    for (int j = 0; j < dim; j++) {
      double sum = 0.0;
      for (int b = 0; b < nchunk; b++)
        sum += h->chunk_sums[((size_t)b * (size_t)k + (size_t)c) * (size_t)dim + (size_t)j];
      sums[(size_t)c * (size_t)dim + (size_t)j] = sum;
    }
  }
  host_chunk_d2(h, chunk_d2);
  *changed = moved;
  return DSG_OK;
}

static int host_reset(void *ctx)
{
  host_points *h = ctx;
  for (size_t i = 0; i < h->n; i++)
    h->trial[i] = -1;
  return DSG_OK;
}

static int host_keep(void *ctx)
{
  host_points *h = ctx;
  memcpy(h->best, h->trial, h->n * sizeof(*h->best));
  return DSG_OK;
}

static int host_best(void *ctx, int *labels)
{
  host_points *h = ctx;
  if (labels != h->best)
    memcpy(labels, h->best, h->n * sizeof(*labels));
  return DSG_OK;
}

static const kmeans_ops host_ops = {host_point, host_distances, host_d2,  host_assign,
                                    host_reset, host_keep,      host_best};

static int device_point(void *ctx, size_t i, float *p) { return spmv_cl_points_get(ctx, i, p); }
static int device_distances(void *ctx, const double *centre, int first, double *chunk_d2)
{
  return spmv_cl_points_distances(ctx, centre, first, chunk_d2);
}
static int device_d2(void *ctx, size_t from, size_t count, double *out)
{
  return spmv_cl_points_d2(ctx, from, count, out);
}
static int device_assign(void *ctx, const double *centres, double *sums, int64_t *counts,
                         double *chunk_d2, long *changed)
{
  return spmv_cl_points_assign(ctx, centres, sums, counts, chunk_d2, changed);
}
static int device_reset(void *ctx) { return spmv_cl_points_reset(ctx); }
static int device_keep(void *ctx) { return spmv_cl_points_keep(ctx); }
static int device_best(void *ctx, int *labels) { return spmv_cl_points_best(ctx, labels); }

static const kmeans_ops device_ops = {device_point, device_distances, device_d2,  device_assign,
                                      device_reset, device_keep,      device_best};

/* ---- the driver ---- */

/* What a run needs besides the engine: the centres, the clusters' sums and counts, the chunks'
 * sums of d2, a copy of d2 (scratch, n) and a point's coordinates. */
typedef struct kmeans_state {
  const kmeans_ops *ops;
  void *ctx;
  size_t n;
  int dim, k, nchunk;
  double *centres, *sums, *chunk_d2, *scratch;
  int64_t *counts;
  float *point;
} kmeans_state;

/* Centre c = point i. */
static int set_centre(kmeans_state *s, int c, size_t i)
{
  int status = s->ops->point(s->ctx, i, s->point);
  for (int j = 0; j < s->dim && status == DSG_OK; j++)
    s->centres[(size_t)c * (size_t)s->dim + (size_t)j] = s->point[j];
  return status;
}

/* k-means++: the first centre uniformly, each next one with probability ~ squared distance to the
 * nearest centre so far: a chunk by its sum of d2, then a point in it. */
static int seed_centres(kmeans_state *s, uint64_t *rng)
{
  const size_t n = s->n;
  size_t first = (size_t)(rng_uniform(rng) * (double)n);
  if (first >= n)
    first = n - 1;
  int status = set_centre(s, 0, first);
  if (status == DSG_OK)
    status = s->ops->distances(s->ctx, s->centres, 1, s->chunk_d2);
  for (int c = 1; c < s->k && status == DSG_OK; c++) {
    double total = 0.0, target;
    size_t pick = n - 1;
    for (int b = 0; b < s->nchunk; b++)
      total += s->chunk_d2[b];
    target = rng_uniform(rng) * total;
    if (total > 0.0) {
      for (int b = 0; b < s->nchunk; b++) {
        if (target >= s->chunk_d2[b] && b < s->nchunk - 1) {
          target -= s->chunk_d2[b];
          continue;
        }
        size_t lo = n * (size_t)b / (size_t)s->nchunk, hi = n * (size_t)(b + 1) / (size_t)s->nchunk;
        status = s->ops->d2(s->ctx, lo, hi - lo, s->scratch);
        for (size_t i = lo; i < hi && status == DSG_OK; i++) {
          const double d = s->scratch[i - lo];
          pick = i;
          if (d > 0.0 && target < d)
            break;
          target -= d;
        }
        break;
      }
    } else {
      pick = (size_t)(rng_uniform(rng) * (double)n); /* all points coincide with the centres */
      if (pick >= n)
        pick = n - 1;
    }
    if (status == DSG_OK)
      status = set_centre(s, c, pick);
    if (status == DSG_OK)
      status = s->ops->distances(s->ctx, s->centres + (size_t)c * (size_t)s->dim, 0, s->chunk_d2);
  }
  return status;
}

/* Lloyd's iterations from the centres; *inertia the last assignment's (the chunks' sums of d2,
 * in chunk order). */
static int lloyd(kmeans_state *s, int max_iter, double *inertia)
{
  const size_t n = s->n;
  const int k = s->k, dim = s->dim;
  int status = DSG_OK;
  for (int it = 0; it < max_iter && status == DSG_OK; it++) {
    long changed = 0;
    status = s->ops->assign(s->ctx, s->centres, s->sums, s->counts, s->chunk_d2, &changed);
    if (status != DSG_OK)
      break;
    *inertia = 0.0;
    for (int b = 0; b < s->nchunk; b++)
      *inertia += s->chunk_d2[b];
    if (changed == 0 && it > 0)
      break;
    int have_d2 = 0; /* scratch holds d2, for the empty clusters */
    for (int c = 0; c < k && status == DSG_OK; c++) {
      const int64_t total = s->counts[c];
      double *cc = s->centres + (size_t)c * (size_t)dim;
      if (total == 0) {
        /* empty cluster: move it onto the point farthest from its centre */
        size_t far = 0;
        if (!have_d2)
          status = s->ops->d2(s->ctx, 0, n, s->scratch);
        have_d2 = 1;
        for (size_t i = 1; i < n && status == DSG_OK; i++)
          if (s->scratch[i] > s->scratch[far])
            far = i;
        if (status == DSG_OK)
          status = set_centre(s, c, far);
        s->scratch[far] = 0.0;
        continue;
      }
      for (int j = 0; j < dim; j++)
        cc[j] = s->sums[(size_t)c * (size_t)dim + (size_t)j] / (double)total;
    }
  }
  return status;
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

/* The restarts on the engine (ops, ctx) of n points. */
static int kmeans_run(const kmeans_ops *ops, void *ctx, size_t n, int dim, int nchunk,
                      const app_kmeans_params *p, int *labels, double *inertia)
{
  int status = DSG_OK;
  double best = DBL_MAX;
  uint64_t rng = p->seed ^ 0x6b6d65616e732b2bull; /* "kmeans++" */
  kmeans_state s = {ops, ctx, n, dim, p->k, nchunk, NULL, NULL, NULL, NULL, NULL, NULL};
  s.centres = malloc((size_t)p->k * (size_t)dim * sizeof(*s.centres));
  s.sums = malloc((size_t)p->k * (size_t)dim * sizeof(*s.sums));
  s.chunk_d2 = malloc((size_t)nchunk * sizeof(*s.chunk_d2));
  s.scratch = malloc(n * sizeof(*s.scratch));
  s.counts = malloc((size_t)p->k * sizeof(*s.counts));
  s.point = malloc((size_t)dim * sizeof(*s.point));
  if (!s.centres || !s.sums || !s.chunk_d2 || !s.scratch || !s.counts || !s.point) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate k-means state for %zu points", n);
    goto out_free;
  }
  for (int r = 0; r < p->restarts && status == DSG_OK; r++) {
    double in = 0.0;
    status = seed_centres(&s, &rng);
    if (status == DSG_OK)
      status = ops->reset(ctx);
    if (status == DSG_OK)
      status = lloyd(&s, p->max_iter, &in);
    if (status == DSG_OK && in < best) {
      best = in;
      status = ops->keep(ctx);
    }
  }
  if (status == DSG_OK)
    status = ops->best(ctx, labels);
  if (status == DSG_OK) {
    canonical_labels(labels, n, p->k);
    if (inertia)
      *inertia = best;
  }
out_free:
  free(s.centres);
  free(s.sums);
  free(s.chunk_d2);
  free(s.scratch);
  free(s.counts);
  free(s.point);
  return status;
}

/* The checks and the trivial cases both entry points share: 1 when labels are done. */
static int kmeans_trivial(size_t n, int dim, const app_kmeans_params *p, int *labels,
                          double *inertia, int *status)
{
  *status = DSG_OK;
  if (p->k < 1 || (size_t)p->k > n)
    *status =
        dsg_error_set(DSG_ERR_INVALID, "k-means needs 1 <= k <= %zu points (k = %d)", n, p->k);
  else if (p->restarts < 1 || p->max_iter < 1)
    *status = dsg_error_set(DSG_ERR_INVALID, "k-means needs restarts >= 1 and iterations >= 1");
  if (*status != DSG_OK)
    return 1;
  if (p->k == 1 || dim == 0) {
    memset(labels, 0, n * sizeof(*labels));
    if (inertia)
      *inertia = 0.0;
    return 1;
  }
  return 0;
}

int app_kmeans(const float *points, size_t n, int dim, const app_kmeans_params *p, int *labels,
               double *inertia)
{
  int status;
  if (kmeans_trivial(n, dim, p, labels, inertia, &status))
    return status;
  const int nchunk = kmeans_chunks(n, p->k, dim);
  host_points h = {points,
                   n,
                   dim,
                   p->k,
                   nchunk,
                   malloc(n * sizeof(double)),
                   malloc((size_t)nchunk * (size_t)p->k * (size_t)dim * sizeof(double)),
                   malloc((size_t)nchunk * (size_t)p->k * sizeof(int64_t)),
                   malloc(n * sizeof(int)),
                   labels};
  if (!h.d2 || !h.chunk_sums || !h.chunk_counts || !h.trial)
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate k-means state for %zu points", n);
  else
    status = kmeans_run(&host_ops, &h, n, dim, nchunk, p, labels, inertia);
  free(h.d2);
  free(h.chunk_sums);
  free(h.chunk_counts);
  free(h.trial);
  return status;
}

int app_kmeans_cl(spmv_cl_image *im, const float *points, size_t n, int dim,
                  const app_kmeans_params *p, int *labels, double *inertia)
{
  spmv_cl_points *dev = NULL;
  int status;
  if (kmeans_trivial(n, dim, p, labels, inertia, &status))
    return status;
  const int nchunk = kmeans_chunks(n, p->k, dim);
  status = spmv_cl_points_create(im, points, n, dim, p->k, nchunk, &dev);
  if (status == DSG_OK)
    status = kmeans_run(&device_ops, dev, n, dim, nchunk, p, labels, inertia);
  spmv_cl_points_destroy(dev);
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
