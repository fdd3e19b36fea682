/* The C blocks (OpenMP): the reference of the OpenCL ones (spmv/opencl/cl_block.c,
 * kernels/block.cl). Slot s, column v is data + (s * b + v) * n. Reductions run over a fixed
 * partition of the rows and are added in order, so results do not depend on the thread count. */
#include "cpu_internal.h"
#include "spmv_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_ROWS 256   /* rows of the product's and the transform's row blocks */
#define GRAM_CHUNKS 256  /* the reductions' fixed partition of the rows */
#define GRAM_SUBROWS 512 /* rows a chunk's dots take at a time (its columns stay in cache) */

typedef struct cpu_block {
  const spmv_dia *A; /* the matvec's matrix (borrowed) */
  float *data;       /* slots * b columns of n */
  double *part;      /* GRAM_CHUNKS * b * b partial sums */
  double *kdots;     /* known.count * b */
} cpu_block;

static float *col(const spmv_block *k, int s, int v)
{
  const cpu_block *c = k->impl;
  return c->data + ((size_t)s * (size_t)k->b + (size_t)v) * (size_t)k->n;
}

void spmv_cpu_block_destroy(spmv_block *k)
{
  cpu_block *c = k->impl;
  if (!c)
    return;
  free(c->data);
  free(c->part);
  free(c->kdots);
  free(c);
  k->impl = NULL;
}

int spmv_cpu_block_create(spmv_block *k, const spmv_dia *A)
{
  const size_t n = (size_t)k->n, cols = (size_t)k->slots * (size_t)k->b;
  int status = DSG_OK;
  cpu_block *c = calloc(1, sizeof(*c));
  k->impl = c;
  if (!c)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a block");
  c->A = A;
  if (n > ((size_t)-1 / sizeof(float)) / cols) {
    status = dsg_error_set(DSG_ERR_LIMIT, "%d blocks of %d x %zu floats overflow size_t", k->slots,
                           k->b, n);
    goto out;
  }
  c->data = calloc(cols * n, sizeof(float));
  c->part = malloc((size_t)GRAM_CHUNKS * (size_t)k->b * (size_t)k->b * sizeof(double));
  c->kdots =
      malloc((size_t)(k->known.count > 0 ? k->known.count : 1) * (size_t)k->b * sizeof(double));
  if (!c->data || !c->part || !c->kdots)
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d blocks of %d x %zu floats", k->slots,
                           k->b, n);
out:
  if (status != DSG_OK)
    spmv_cpu_block_destroy(k);
  return status;
}

int spmv_cpu_block_set(spmv_block *k, int s, const float *x)
{
  double t0 = dsg_seconds();
  memcpy(col(k, s, 0), x, (size_t)k->b * (size_t)k->n * sizeof(float));
  k->timing.transfer_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_block_get(spmv_block *k, int s, int cols, float *out)
{
  double t0 = dsg_seconds();
  memcpy(out, col(k, s, 0), (size_t)cols * (size_t)k->n * sizeof(float));
  k->timing.transfer_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_block_fill_random(spmv_block *k, int s, unsigned long long seed)
{
  const int n = k->n, b = k->b;
  double t0 = dsg_seconds();
#pragma omp parallel for schedule(static)
  for (long long e = 0; e < (long long)b * n; e++) {
    const int v = (int)(e / n), i = (int)(e % n);
    uint64_t z = (uint64_t)seed + (uint64_t)v + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    col(k, s, v)[i] = (float)((double)(z >> 11) * 0x1.0p-53 - 0.5);
  }
  k->timing.vector_s += dsg_seconds() - t0;
  return DSG_OK;
}

/* Rows r0 .. r1 - 1 of the block product: acc[v * BLOCK_ROWS + r - r0] = (A X)[r, v], float
 * accumulation in diagonal order (spmv_dia_mul's order for the remaining diagonals). Rows whose
 * columns r + offset all lie inside the matrix go eight at a time with eight columns' sums in
 * registers (a diagonal's eight values loaded once for eight columns: 1.1 loads per multiply-add
 * instead of 3 and a store); the others, near the first and last rows, one by one. */
typedef float v8f __attribute__((vector_size(32)));
/* eight floats at any float's address (unaligned, and allowed to alias float data) */
typedef float v8f_at __attribute__((vector_size(32), aligned(4), may_alias));
#define LOAD8(p) (*(const v8f_at *)(const void *)(p))

SPMV_CLONES static void product_rows(const spmv_dia *A, const float *X, size_t n, int b, int r0,
                                     int r1, float *acc)
{
  const int nd = A->ndiag, *off = A->offsets;
  const size_t p = A->pitch;
  /* [lo, hi): rows where every diagonal's column is inside (offsets ascend) */
  int lo = r0 > -off[0] ? r0 : -off[0],
      hi = r1 < A->rows - off[nd - 1] ? r1 : A->rows - off[nd - 1];
  if (hi < lo)
    hi = lo;
  hi = lo + (hi - lo) / 8 * 8;
  for (int v0 = 0; v0 < b; v0 += 8) {
    const int nv = b - v0 < 8 ? b - v0 : 8;
    const float *Xv = X + (size_t)v0 * n;
    for (int r = lo; r < hi; r += 8) {
      v8f s[8] = {{0}};
      if (nv == 8) {
        for (int d = 0; d < nd; d++) {
          const v8f a = LOAD8(A->values + (size_t)d * p + (size_t)r);
          const float *x = Xv + (size_t)((long long)r + off[d]);
          s[0] += a * LOAD8(x);
          s[1] += a * LOAD8(x + n);
          s[2] += a * LOAD8(x + 2 * n);
          s[3] += a * LOAD8(x + 3 * n);
          s[4] += a * LOAD8(x + 4 * n);
          s[5] += a * LOAD8(x + 5 * n);
          s[6] += a * LOAD8(x + 6 * n);
          s[7] += a * LOAD8(x + 7 * n);
        }
      } else {
        for (int d = 0; d < nd; d++) {
          const v8f a = LOAD8(A->values + (size_t)d * p + (size_t)r);
          const float *x = Xv + (size_t)((long long)r + off[d]);
          for (int v = 0; v < nv; v++)
            s[v] += a * LOAD8(x + (size_t)v * n);
        }
      }
      for (int v = 0; v < nv; v++)
        *(v8f_at *)(void *)(acc + (size_t)(v0 + v) * BLOCK_ROWS + (size_t)(r - r0)) = s[v];
    }
  }
  /* the rest one row at a time, bounds-checked */
  for (int r = r0; r < r1; r++) {
    if (r == lo && hi > lo) {
      r = hi - 1;
      continue;
    }
    for (int v = 0; v < b; v++) {
      const float *x = X + (size_t)v * n;
      float t = 0.0f;
      for (int d = 0; d < nd; d++) {
        const long long c = (long long)r + off[d];
        if (c >= 0 && c < A->rows)
          t += A->values[(size_t)d * p + (size_t)r] * x[c];
      }
      acc[(size_t)v * BLOCK_ROWS + (size_t)(r - r0)] = t;
    }
  }
}

int spmv_cpu_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                           double gamma)
{
  const cpu_block *c = k->impl;
  const int n = k->n, b = k->b, nblocks = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
  const float *X = col(k, src, 0);
  float *Y = col(k, dst, 0);
  const float *P = prev >= 0 ? col(k, prev, 0) : NULL;
  double t0 = dsg_seconds();
  int failed = 0;
#pragma omp parallel
  {
    float *acc = malloc((size_t)b * BLOCK_ROWS * sizeof(float));
    if (!acc) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int blk = 0; blk < nblocks; blk++) {
      const int r0 = blk * BLOCK_ROWS, r1 = r0 + BLOCK_ROWS < n ? r0 + BLOCK_ROWS : n;
      if (!acc)
        continue;
      product_rows(c->A, X, (size_t)n, b, r0, r1, acc);
      for (int v = 0; v < b; v++) {
        const size_t o = (size_t)v * (size_t)n;
        for (int r = r0; r < r1; r++) {
          double y = alpha * (double)acc[(size_t)v * BLOCK_ROWS + (size_t)(r - r0)] +
                     beta * (double)X[o + (size_t)r];
          if (P)
            y += gamma * (double)P[o + (size_t)r];
          Y[o + (size_t)r] = (float)y;
        }
      }
    }
    free(acc);
  }
  k->timing.matvec_s += dsg_seconds() - t0;
  return failed ? dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the block product's rows") : DSG_OK;
}

int spmv_cpu_block_axpby(spmv_block *k, int dst, double alpha, int x, double beta, int y)
{
  const size_t total = (size_t)k->b * (size_t)k->n;
  float *D = col(k, dst, 0);
  const float *X = col(k, x, 0), *Y = col(k, y, 0);
  double t0 = dsg_seconds();
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < total; i++)
    D[i] = (float)(alpha * (double)X[i] + beta * (double)Y[i]);
  k->timing.vector_s += dsg_seconds() - t0;
  return DSG_OK;
}

/* The chunk q of GRAM_CHUNKS: rows [*r0, *r1). */
static void chunk_rows(int n, int q, int *r0, int *r1)
{
  *r0 = (int)((long long)n * q / GRAM_CHUNKS);
  *r1 = (int)((long long)n * (q + 1) / GRAM_CHUNKS);
}

SPMV_CLONES static double dot_rows(const float *x, const float *y, int r0, int r1)
{
  double s = 0.0;
#pragma omp simd reduction(+ : s)
  for (int r = r0; r < r1; r++)
    s += (double)x[r] * (double)y[r];
  return s;
}

int spmv_cpu_block_gram(spmv_block *k, int x, int y, double *G)
{
  cpu_block *c = k->impl;
  const int n = k->n, b = k->b, sym = x == y;
  const size_t bb = (size_t)b * (size_t)b;
  double t0 = dsg_seconds();
#pragma omp parallel for schedule(static)
  for (int q = 0; q < GRAM_CHUNKS; q++) {
    int r0, r1;
    double *p = c->part + (size_t)q * bb;
    chunk_rows(n, q, &r0, &r1);
    memset(p, 0, bb * sizeof(double));
    for (int s0 = r0; s0 < r1; s0 += GRAM_SUBROWS) {
      const int s1 = s0 + GRAM_SUBROWS < r1 ? s0 + GRAM_SUBROWS : r1;
      for (int j = 0; j < b; j++)
        for (int i = 0; i < (sym ? j + 1 : b); i++)
          p[i + (size_t)j * b] += dot_rows(col(k, x, i), col(k, y, j), s0, s1);
    }
  }
  for (size_t e = 0; e < bb; e++) {
    double s = 0.0;
    for (int q = 0; q < GRAM_CHUNKS; q++)
      s += c->part[(size_t)q * bb + e];
    G[e] = s;
  }
  if (sym)
    for (int j = 0; j < b; j++)
      for (int i = j + 1; i < b; i++)
        G[i + (size_t)j * b] = G[j + (size_t)i * b];
  k->timing.reduce_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_block_transform(spmv_block *k, int s, const double *M)
{
  const int n = k->n, b = k->b, nblocks = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
  float *X = col(k, s, 0);
  double t0 = dsg_seconds();
  int failed = 0;
#pragma omp parallel
  {
    double *t = malloc((size_t)b * BLOCK_ROWS * sizeof(double));
    if (!t) {
#pragma omp atomic write
      failed = 1;
    }
#pragma omp for schedule(static)
    for (int blk = 0; blk < nblocks; blk++) {
      const int r0 = blk * BLOCK_ROWS, r1 = r0 + BLOCK_ROWS < n ? r0 + BLOCK_ROWS : n;
      if (!t)
        continue;
      memset(t, 0, (size_t)b * BLOCK_ROWS * sizeof(double));
      for (int j = 0; j < b; j++)
        for (int i = 0; i < b; i++) {
          const double m = M[i + (size_t)j * b];
          const float *xi = X + (size_t)i * (size_t)n;
          double *tj = t + (size_t)j * BLOCK_ROWS - r0;
          if (m != 0.0)
            for (int r = r0; r < r1; r++)
              tj[r] += (double)xi[r] * m;
        }
      for (int j = 0; j < b; j++)
        for (int r = r0; r < r1; r++)
          X[(size_t)j * (size_t)n + (size_t)r] =
              (float)t[(size_t)j * BLOCK_ROWS + (size_t)(r - r0)];
    }
    free(t);
  }
  k->timing.vector_s += dsg_seconds() - t0;
  return failed ? dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the block transform's rows")
                : DSG_OK;
}

int spmv_cpu_block_residuals(spmv_block *k, int ax, int x, const double *theta, double *out)
{
  cpu_block *c = k->impl;
  const int n = k->n, b = k->b;
  double t0 = dsg_seconds();
#pragma omp parallel for schedule(static)
  for (int q = 0; q < GRAM_CHUNKS; q++) {
    int r0, r1;
    chunk_rows(n, q, &r0, &r1);
    for (int v = 0; v < b; v++) {
      const float *a = col(k, ax, v), *u = col(k, x, v);
      double s = 0.0;
      for (int r = r0; r < r1; r++) {
        const double e = (double)a[r] - theta[v] * (double)u[r];
        s += e * e;
      }
      c->part[(size_t)q * b + v] = s;
    }
  }
  for (int v = 0; v < b; v++) {
    double s = 0.0;
    for (int q = 0; q < GRAM_CHUNKS; q++)
      s += c->part[(size_t)q * b + v];
    out[v] = s;
  }
  k->timing.reduce_s += dsg_seconds() - t0;
  return DSG_OK;
}

int spmv_cpu_block_project(spmv_block *k, int s)
{
  cpu_block *c = k->impl;
  const int n = k->n, b = k->b, nk = k->known.count;
  const int *label = k->known.label;
  const float *value = k->known.value;
  double t0 = dsg_seconds();
  /* the dots: one column per thread, rows in order (disjoint supports: one sum per row) */
#pragma omp parallel for schedule(static)
  for (int v = 0; v < b; v++) {
    const float *x = col(k, s, v);
    for (int q = 0; q < nk; q++)
      c->kdots[(size_t)q * b + v] = 0.0;
    for (int r = 0; r < n; r++)
      if (label[r] >= 0)
        c->kdots[(size_t)label[r] * b + v] += (double)value[r] * (double)x[r];
  }
#pragma omp parallel for schedule(static)
  for (int v = 0; v < b; v++) {
    float *x = col(k, s, v);
    for (int r = 0; r < n; r++)
      if (label[r] >= 0)
        x[r] = (float)((double)x[r] - (double)value[r] * c->kdots[(size_t)label[r] * b + v]);
  }
  k->timing.vector_s += dsg_seconds() - t0;
  return DSG_OK;
}
