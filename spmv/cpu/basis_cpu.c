/* The C basis (OpenMP): the reference of the OpenCL one (spmv/opencl/cl_basis.c,
 * kernels/lanczos.cl). Reductions run over a fixed partition of the rows and are added in order,
 * so results do not depend on the number of threads. */
#include "cpu_internal.h"
#include "spmv_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ROWS 4096     /* rows per reduction chunk: a chunk of w stays in L1 */
#define BASIS_DENSE_KNOWN 8 /* up to this many known vectors are held as dense columns, */
#define BASIS_DENSE_KNOWN_BYTES ((size_t)64 << 20) /* in at most this many bytes */

typedef struct cpu_basis {
  const spmv_dia *A; /* the matvec's matrix (borrowed) */
  float *V;          /* (m + 1) columns of n */
  float *w;
  float *tmp;    /* restart: (m + 1) columns */
  double *coef;  /* m steps x (m + 2) */
  double *part;  /* nchunks x max(m + 1, known) partial sums */
  double *npart; /* nchunks partial sums of a |x|^2 */
  float *K;      /* the known vectors as dense columns (zeros off their supports), or NULL */
  int nchunks;
} cpu_basis;

void spmv_cpu_basis_destroy(spmv_basis *b)
{
  cpu_basis *c = b->impl;
  if (!c)
    return;
  free(c->V);
  free(c->w);
  free(c->tmp);
  free(c->coef);
  free(c->part);
  free(c->npart);
  free(c->K);
  free(c);
  b->impl = NULL;
}

/* The inner loops of Gram-Schmidt, rows r0 .. r1 - 1 of one chunk, four columns at a time (x
 * read once per four columns and rounded to float once), compiled for AVX2 as well (SPMV_CLONES):
 * with the baseline's two doubles per instruction the C path's Gram-Schmidt was compute-bound,
 * at a third of the 2-core CI machine's copy bandwidth. */
/* out[i] = sum over r of V[r, i] x[r], i < nc (V column-major with n rows). */
SPMV_CLONES static void chunk_dots(const float *V, size_t n, int nc, const float *x, int r0, int r1,
                                   double *out)
{
  int i = 0;
  for (; i + 4 <= nc; i += 4) {
    const float *v0 = V + (size_t)i * n, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
    for (int r = r0; r < r1; r++) {
      const double xr = x[r];
      s0 += (double)v0[r] * xr;
      s1 += (double)v1[r] * xr;
      s2 += (double)v2[r] * xr;
      s3 += (double)v3[r] * xr;
    }
    out[i] = s0;
    out[i + 1] = s1;
    out[i + 2] = s2;
    out[i + 3] = s3;
  }
  for (; i < nc; i++) {
    const float *v = V + (size_t)i * n;
    double s = 0.0;
#pragma omp simd reduction(+ : s)
    for (int r = r0; r < r1; r++)
      s += (double)v[r] * (double)x[r];
    out[i] = s;
  }
}

/* x[r] -= sum over i of V[r, i] h[i], rows r0 .. r1 - 1. */
SPMV_CLONES static void chunk_update(const float *V, size_t n, int nc, const double *h, float *x,
                                     int r0, int r1)
{
  int i = 0;
  for (; i + 4 <= nc; i += 4) {
    const float *v0 = V + (size_t)i * n, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n;
    const double h0 = h[i], h1 = h[i + 1], h2 = h[i + 2], h3 = h[i + 3];
#pragma omp simd
    for (int r = r0; r < r1; r++)
      x[r] = (float)((double)x[r] - (double)v0[r] * h0 - (double)v1[r] * h1 - (double)v2[r] * h2 -
                     (double)v3[r] * h3);
  }
  for (; i < nc; i++) {
    const float *v = V + (size_t)i * n;
    const double hi = h[i];
#pragma omp simd
    for (int r = r0; r < r1; r++)
      x[r] = (float)((double)x[r] - (double)v[r] * hi);
  }
}

/* dots[i] = the chunks' partial sums of entry i (part, nc a chunk), added in chunk order */
static void sum_parts(const cpu_basis *c, int nc, double *dots)
{
  for (int i = 0; i < nc; i++) {
    double s = 0.0;
    for (int q = 0; q < c->nchunks; q++)
      s += c->part[(size_t)q * (size_t)nc + (size_t)i];
    dots[i] = s;
  }
}

/* dots[i] = M[:, i] . x for i < nc, M column-major with n rows (double, chunked, added in chunk
 * order). */
static void dots_v_of(const cpu_basis *c, const float *M, int n, int nc, const float *x,
                      double *dots)
{
  const int nch = c->nchunks;
  double *part = c->part;
#pragma omp parallel for schedule(static)
  for (int q = 0; q < nch; q++) {
    const int r0 = q * CHUNK_ROWS, r1 = r0 + CHUNK_ROWS < n ? r0 + CHUNK_ROWS : n;
    chunk_dots(M, (size_t)n, nc, x, r0, r1, part + (size_t)q * (size_t)nc);
  }
  sum_parts(c, nc, dots);
}

/* dots[i] = V[:, i] . x for i < nc */
static void dots_v(const cpu_basis *c, int n, int nc, const float *x, double *dots)
{
  dots_v_of(c, c->V, n, nc, x, dots);
}

/* sum over r0 <= r < r1 of x[r]^2 */
static double chunk_norm2(const float *x, int r0, int r1)
{
  double t = 0.0;
#pragma omp simd reduction(+ : t)
  for (int r = r0; r < r1; r++)
    t += (double)x[r] * (double)x[r];
  return t;
}

/* |x| from the chunks' partial sums (npart, one per chunk), added in chunk order */
static double norm_from(const cpu_basis *c)
{
  double s = 0.0;
  for (int q = 0; q < c->nchunks; q++)
    s += c->npart[q];
  return sqrt(s);
}

static double norm_of(const cpu_basis *c, int n, const float *x)
{
  const int nch = c->nchunks;
#pragma omp parallel for schedule(static)
  for (int q = 0; q < nch; q++) {
    const int r0 = q * CHUNK_ROWS, r1 = r0 + CHUNK_ROWS < n ? r0 + CHUNK_ROWS : n;
    c->npart[q] = chunk_norm2(x, r0, r1);
  }
  return norm_from(c);
}

/* x -= sum_c (v_c . x) v_c over the known vectors (disjoint supports). */
static void project_known(spmv_basis *b, float *x)
{
  const spmv_known *k = &b->known;
  cpu_basis *c = b->impl;
  const int n = b->n, nch = c->nchunks, nk = k->count;
  double *dots, *part = c->part;
  if (nk <= 0)
    return;
  if (c->K) { /* dense columns: the Gram-Schmidt loops, vectorised, no indirection */
    double h[BASIS_DENSE_KNOWN];
    dots_v_of(c, c->K, n, nk, x, h);
#pragma omp parallel for schedule(static)
    for (int q = 0; q < nch; q++) {
      const int r0 = q * CHUNK_ROWS, r1 = r0 + CHUNK_ROWS < n ? r0 + CHUNK_ROWS : n;
      chunk_update(c->K, (size_t)n, nk, h, x, r0, r1);
    }
    return;
  }
  dots = calloc((size_t)nk, sizeof(*dots));
  if (!dots)
    return; /* checked at creation: part has room; dots is small */
#pragma omp parallel for schedule(static)
  for (int q = 0; q < nch; q++) {
    const int r0 = q * CHUNK_ROWS, r1 = r0 + CHUNK_ROWS < n ? r0 + CHUNK_ROWS : n;
    double *p = part + (size_t)q * (size_t)nk;
    for (int i = 0; i < nk; i++)
      p[i] = 0.0;
    for (int r = r0; r < r1; r++)
      if (k->label[r] >= 0)
        p[k->label[r]] += (double)k->value[r] * (double)x[r];
  }
  for (int q = 0; q < nch; q++)
    for (int i = 0; i < nk; i++)
      dots[i] += part[(size_t)q * (size_t)nk + (size_t)i];
#pragma omp parallel for schedule(static)
  for (int r = 0; r < n; r++)
    if (k->label[r] >= 0)
      x[r] = (float)((double)x[r] - dots[k->label[r]] * (double)k->value[r]);
  free(dots);
}

/* x -= V h chunk by chunk, each chunk's rows then read again while they are in cache: the
 * chunk's partial sums of V^T x (part, when dots) and of |x|^2 (npart) for the x left. */
static void update_then_dots(cpu_basis *c, int n, int nc, const double *h, float *x, int dots)
{
  const int nch = c->nchunks;
#pragma omp parallel for schedule(static)
  for (int q = 0; q < nch; q++) {
    const int r0 = q * CHUNK_ROWS, r1 = r0 + CHUNK_ROWS < n ? r0 + CHUNK_ROWS : n;
    chunk_update(c->V, (size_t)n, nc, h, x, r0, r1);
    if (dots)
      chunk_dots(c->V, (size_t)n, nc, x, r0, r1, c->part + (size_t)q * (size_t)nc);
    c->npart[q] = chunk_norm2(x, r0, r1);
  }
}

/* Classical Gram-Schmidt of x against V[:, 0..nc) with the DGKS test: a second pass only when
 * the first cancelled more than half of |x|^2 (|x - V h|^2 = |x|^2 - |h|^2 < |x|^2 / 2), as on
 * the OpenCL path; coef[i] += h_i. Returns |x| after it. The first pass's update also makes the
 * second pass's V^T x on the rows it has just written (one sweep over V fewer when the second
 * pass runs, as it does on nearly every step near NCut's clustered top of the spectrum); the sums
 * are the ones separate sweeps would make, in the same order. */
static double cgs2(spmv_basis *b, int nc, float *x, double *coef)
{
  cpu_basis *c = b->impl;
  const int n = b->n;
  double h[4097], xx, hh = 0.0;
  if (nc <= 0)
    return norm_of(c, n, x);
  xx = norm_of(c, n, x);
  xx *= xx;
  dots_v(c, n, nc, x, h);
  update_then_dots(c, n, nc, h, x, 1);
  for (int i = 0; i < nc; i++) {
    hh += h[i] * h[i];
    if (coef)
      coef[i] += h[i];
  }
  if (!(xx - hh < 0.5 * xx))
    return norm_from(c); /* the DGKS test: no second pass needed */
  b->timing.second_passes++;
  sum_parts(c, nc, h); /* the second pass's V^T x, from the first update's partial sums */
  for (int i = 0; coef && i < nc; i++)
    coef[i] += h[i];
  update_then_dots(c, n, nc, h, x, 0);
  return norm_from(c);
}

int spmv_cpu_basis_set(spmv_basis *b, int col, const float *x, double *norm)
{
  cpu_basis *c = b->impl;
  const int n = b->n;
  float *v = c->V + (size_t)col * (size_t)n;
  double t0 = dsg_seconds(), nrm;
  memcpy(c->w, x, (size_t)n * sizeof(float));
  project_known(b, c->w);
  nrm = cgs2(b, col, c->w, NULL);
  for (int r = 0; r < n; r++)
    v[r] = nrm > 0.0 ? (float)((double)c->w[r] / nrm) : 0.0f;
  *norm = nrm;
  b->timing.orth_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_basis_expand(spmv_basis *b, int j)
{
  cpu_basis *c = b->impl;
  const int n = b->n;
  double *coef = c->coef + (size_t)j * (size_t)(b->m + 2), t0 = dsg_seconds(), t1, beta;
  memset(coef, 0, (size_t)(b->m + 2) * sizeof(*coef));
  spmv_dia_mul(c->A, c->V + (size_t)j * (size_t)n, c->w);
  t1 = dsg_seconds();
  b->timing.matvec_s += t1 - t0;
  project_known(b, c->w);
  t0 = dsg_seconds();
  b->timing.project_s += t0 - t1;
  beta = cgs2(b, j + 1, c->w, coef);
  t1 = dsg_seconds();
  b->timing.orth_s += t1 - t0;
  coef[j + 1] = beta;
  {
    float *v = c->V + (size_t)(j + 1) * (size_t)n;
    const float inv = beta > 0.0 ? (float)(1.0 / beta) : 0.0f;
#pragma omp parallel for schedule(static)
    for (int r = 0; r < n; r++)
      v[r] = c->w[r] * inv;
  }
  b->timing.normalize_s += dsg_seconds() - t1;
  return DSG_OK;
}

int spmv_cpu_basis_coefficients(spmv_basis *b, int j0, int j1, double *coef)
{
  cpu_basis *c = b->impl;
  memcpy(coef, c->coef + (size_t)j0 * (size_t)(b->m + 2),
         (size_t)(j1 - j0) * (size_t)(b->m + 2) * sizeof(double));
  return DSG_OK;
}

/* out[:, col] = V[:, 0..mcur) Y[:, col] for col < k */
static void rotate(const cpu_basis *c, int n, const double *Y, int ldy, int mcur, int k, float *out,
                   size_t ldo)
{
#pragma omp parallel for schedule(static)
  for (int r0 = 0; r0 < n; r0 += CHUNK_ROWS) {
    const int r1 = r0 + CHUNK_ROWS < n ? r0 + CHUNK_ROWS : n;
    double acc[CHUNK_ROWS];
    for (int col = 0; col < k; col++) {
      for (int r = r0; r < r1; r++)
        acc[r - r0] = 0.0;
      for (int i = 0; i < mcur; i++) {
        const float *v = c->V + (size_t)i * (size_t)n;
        const double y = Y[i + (size_t)col * (size_t)ldy];
#pragma omp simd
        for (int r = r0; r < r1; r++)
          acc[r - r0] += (double)v[r] * y;
      }
      for (int r = r0; r < r1; r++)
        out[(size_t)col * ldo + (size_t)r] = (float)acc[r - r0];
    }
  }
}

int spmv_cpu_basis_restart(spmv_basis *b, const double *Y, int ldy, int mcur, int k)
{
  cpu_basis *c = b->impl;
  const size_t n = (size_t)b->n;
  double t0 = dsg_seconds();
  rotate(c, b->n, Y, ldy, mcur, k, c->tmp, n);
  memcpy(c->tmp + (size_t)k * n, c->V + (size_t)mcur * n, n * sizeof(float)); /* residual */
  memcpy(c->V, c->tmp, (size_t)(k + 1) * n * sizeof(float));
  b->timing.restart_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_basis_ritz(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out)
{
  double t0 = dsg_seconds();
  rotate(b->impl, b->n, Y, ldy, mcur, k, out, (size_t)b->n);
  b->timing.restart_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_basis_create(spmv_basis *b, const spmv_dia *A)
{
  const size_t n = (size_t)b->n, cols = (size_t)b->m + 1;
  cpu_basis *c = calloc(1, sizeof(*c));
  const int width = b->m + 1 > b->known.count ? b->m + 1 : b->known.count;
  if (!c)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a basis");
  b->impl = c;
  c->A = A;
  c->nchunks = (int)((n + CHUNK_ROWS - 1) / CHUNK_ROWS);
  if (cols > SIZE_MAX / sizeof(float) / n) {
    spmv_cpu_basis_destroy(b);
    return dsg_error_set(DSG_ERR_LIMIT, "a basis of %zu x %zu floats overflows", cols, n);
  }
  c->V = malloc(cols * n * sizeof(float));
  c->tmp = malloc(cols * n * sizeof(float));
  c->w = malloc(n * sizeof(float));
  c->coef = calloc((size_t)b->m * ((size_t)b->m + 2), sizeof(double));
  c->part = malloc((size_t)c->nchunks * (size_t)width * sizeof(double));
  c->npart = malloc((size_t)c->nchunks * sizeof(double));
  /* a few known vectors become dense columns (the OpenCL basis does the same), up to
   * BASIS_DENSE_KNOWN_BYTES (within the memory check's margin: app/lib/memory.c counts them not) */
  if (b->known.count > 0 && b->known.count <= BASIS_DENSE_KNOWN && b->known.count <= b->m + 1 &&
      (size_t)b->known.count * n * sizeof(float) <= BASIS_DENSE_KNOWN_BYTES) {
    c->K = calloc((size_t)b->known.count * n, sizeof(float));
    if (c->K)
      for (size_t r = 0; r < n; r++)
        if (b->known.label[r] >= 0)
          c->K[(size_t)b->known.label[r] * n + r] = b->known.value[r];
  }
  if (!c->V || !c->tmp || !c->w || !c->coef || !c->part || !c->npart) {
    spmv_cpu_basis_destroy(b);
    return dsg_error_set(DSG_ERR_NOMEM,
                         "cannot allocate a Lanczos basis of %zu x %zu floats "
                         "(%.1f MiB, twice)",
                         n, cols, (double)(cols * n * 4) / 1048576.0);
  }
  return DSG_OK;
}
