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

/* Rows r0 .. r1 - 1 of the block product Y := alpha A X + beta X + gamma P (P may be NULL): (A X)
 * in float, accumulated in diagonal order (spmv_dia_mul's order), the three terms added in double
 * and rounded once. Rows go R at a time (R = the vector's floats) with eight columns' sums in
 * registers: a diagonal's R values are loaded once for eight columns (1.1 loads per multiply-add
 * instead of 3 and a store), and each sum goes to Y from its register. A group of rows near the
 * first or last rows, where some diagonal's columns leave the matrix, takes those columns as zeros
 * (the entries there are zero: spmv.h); the last r1 - r0 mod R rows go one at a time. R is 16 on a
 * CPU with AVX-512 (product_rows16), 8 elsewhere. */
typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
/* R floats at any float's address (unaligned, and allowed to alias float data) */
typedef float v8f_at __attribute__((vector_size(32), aligned(4), may_alias));
typedef float v16f_at __attribute__((vector_size(64), aligned(4), may_alias));
typedef double v8d __attribute__((vector_size(64)));
typedef double v16d __attribute__((vector_size(128)));

/* Software prefetch distances in floats, ahead of the rows being read: the product reads 81
 * diagonals and 8 x 11 runs of X at once, more streams than the hardware prefetchers follow
 * (measured on the 2-core machine's EPYC: 27% faster with A's, 5% more with X's). */
#define PREFETCH_A 64
#define PREFETCH_X 128

#define PRODUCT_ROWS_BODY(VEC, VEC_AT, VECD, R)                                                    \
  const int nd = A->ndiag, *off = A->offsets, rows = A->rows;                                      \
  const size_t p = A->pitch;                                                                       \
  const int full = r0 + (r1 - r0) / (R) * (R);                                                     \
  for (int v0 = 0; v0 < b; v0 += 8) {                                                              \
    const int nv = b - v0 < 8 ? b - v0 : 8;                                                        \
    const float *Xv = X + (size_t)v0 * n;                                                          \
    for (int r = r0; r < full; r += (R)) {                                                         \
      VEC s[8] = {{0}};                                                                            \
      const float *a = A->values + (size_t)r;                                                      \
      if (nv == 8 && r + off[0] >= 0 && r + (R) + off[nd - 1] <= rows) { /* inside */              \
        for (int d = 0; d < nd; d++, a += p) {                                                     \
          const VEC ad = *(const VEC_AT *)(const void *)a;                                         \
          const float *x = Xv + (size_t)((long long)r + off[d]);                                   \
          __builtin_prefetch(a + PREFETCH_A);                                                      \
          for (int v = 0; v < 8; v++) {                                                            \
            __builtin_prefetch(x + (size_t)v * n + PREFETCH_X);                                    \
            s[v] += ad * *(const VEC_AT *)(const void *)(x + (size_t)v * n);                       \
          }                                                                                        \
        }                                                                                          \
      } else {                                                                                     \
        for (int d = 0; d < nd; d++, a += p) {                                                     \
          const VEC ad = *(const VEC_AT *)(const void *)a;                                         \
          const long long c = (long long)r + off[d];                                               \
          if (c + (R) <= 0 || c >= rows)                                                           \
            continue;                                                                              \
          for (int v = 0; v < nv; v++) {                                                           \
            const float *x = Xv + (size_t)v * n;                                                   \
            VEC xv;                                                                                \
            if (c >= 0 && c + (R) <= rows) {                                                       \
              xv = *(const VEC_AT *)(const void *)(x + c);                                         \
            } else {                                                                               \
              for (int i = 0; i < (R); i++)                                                        \
                xv[i] = c + i >= 0 && c + i < rows ? x[c + i] : 0.0f;                              \
            }                                                                                      \
            s[v] += ad * xv;                                                                       \
          }                                                                                        \
        }                                                                                          \
      }                                                                                            \
      for (int v = 0; v < nv; v++) {                                                               \
        const size_t o = (size_t)(v0 + v) * n + (size_t)r;                                         \
        VECD y = __builtin_convertvector(s[v], VECD) * alpha +                                     \
                 __builtin_convertvector(*(const VEC_AT *)(const void *)(X + o), VECD) * beta;     \
        if (P)                                                                                     \
          y += __builtin_convertvector(*(const VEC_AT *)(const void *)(P + o), VECD) * gamma;      \
        *(VEC_AT *)(void *)(Y + o) = __builtin_convertvector(y, VEC);                              \
      }                                                                                            \
    }                                                                                              \
  }                                                                                                \
  for (int r = full; r < r1; r++) /* the rest one row at a time, bounds-checked */                 \
    for (int v = 0; v < b; v++) {                                                                  \
      const float *x = X + (size_t)v * n;                                                          \
      float t = 0.0f;                                                                              \
      for (int d = 0; d < nd; d++) {                                                               \
        const long long c = (long long)r + off[d];                                                 \
        if (c >= 0 && c < rows)                                                                    \
          t += A->values[(size_t)d * p + (size_t)r] * x[c];                                        \
      }                                                                                            \
      const size_t o = (size_t)v * n + (size_t)r;                                                  \
      Y[o] = (float)(alpha * (double)t + beta * (double)X[o] + (P ? gamma * (double)P[o] : 0.0));  \
    }

SPMV_CLONES static void product_rows(const spmv_dia *A, const float *X, const float *P, float *Y,
                                     size_t n, int b, int r0, int r1, double alpha, double beta,
                                     double gamma){PRODUCT_ROWS_BODY(v8f, v8f_at, v8d, 8)}

#ifdef SPMV_AVX512
SPMV_AVX512 static void product_rows16(const spmv_dia *A, const float *X, const float *P, float *Y,
                                       size_t n, int b, int r0, int r1, double alpha, double beta,
                                       double gamma)
{
  PRODUCT_ROWS_BODY(v16f, v16f_at, v16d, 16)
}
#endif

int spmv_cpu_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                           double gamma)
{
  const cpu_block *c = k->impl;
  const int n = k->n, b = k->b, nblocks = (n + BLOCK_ROWS - 1) / BLOCK_ROWS;
  const float *X = col(k, src, 0);
  float *Y = col(k, dst, 0);
  const float *P = prev >= 0 ? col(k, prev, 0) : NULL;
  double t0 = dsg_seconds();
#ifdef SPMV_AVX512
  const int wide = spmv_cpu_avx512();
#endif
#pragma omp parallel for schedule(static)
  for (int blk = 0; blk < nblocks; blk++) {
    const int r0 = blk * BLOCK_ROWS, r1 = r0 + BLOCK_ROWS < n ? r0 + BLOCK_ROWS : n;
#ifdef SPMV_AVX512
    if (wide)
      product_rows16(c->A, X, P, Y, (size_t)n, b, r0, r1, alpha, beta, gamma);
    else
#endif
      product_rows(c->A, X, P, Y, (size_t)n, b, r0, r1, alpha, beta, gamma);
  }
  k->timing.matvec_s += dsg_seconds() - t0;
  return DSG_OK;
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

/* p[i + j b] += X_i . Y_j over rows r0 .. r1 - 1 (double sums of float products) for the
 * GRAM_TILE x GRAM_TILE columns from (i0, j0) that are inside the block: four rows of every
 * column at a time, each X and Y vector loaded once for GRAM_TILE multiply-adds (instead of a dot
 * at a time: two loads per multiply-add); the rest of the rows one at a time. */
typedef double v4d __attribute__((vector_size(32)));
typedef double v4d_a8 __attribute__((vector_size(32), aligned(8), may_alias));
typedef float v4f_a4 __attribute__((vector_size(16), aligned(4), may_alias));
#define GRAM_TILE 4

SPMV_CLONES static void gram_tile(const float *X, const float *Y, size_t n, int b, int i0, int j0,
                                  int r0, int r1, double *p)
{
  const int ni = b - i0 < GRAM_TILE ? b - i0 : GRAM_TILE,
            nj = b - j0 < GRAM_TILE ? b - j0 : GRAM_TILE;
  const float *x[GRAM_TILE], *y[GRAM_TILE];
  v4d s[GRAM_TILE][GRAM_TILE] = {{{0}}};
  double t[GRAM_TILE][GRAM_TILE] = {{0}};
  int r = r0;
  for (int a = 0; a < GRAM_TILE; a++) { /* columns past the block's edge repeat its last */
    x[a] = X + (size_t)(i0 + (a < ni ? a : ni - 1)) * n;
    y[a] = Y + (size_t)(j0 + (a < nj ? a : nj - 1)) * n;
  }
  for (; r + 4 <= r1; r += 4) {
    v4d xv[GRAM_TILE], yv[GRAM_TILE];
    for (int a = 0; a < GRAM_TILE; a++) {
      xv[a] = __builtin_convertvector(*(const v4f_a4 *)(const void *)(x[a] + r), v4d);
      yv[a] = __builtin_convertvector(*(const v4f_a4 *)(const void *)(y[a] + r), v4d);
    }
    for (int a = 0; a < GRAM_TILE; a++)
      for (int c = 0; c < GRAM_TILE; c++)
        s[a][c] += xv[a] * yv[c];
  }
  for (int a = 0; a < GRAM_TILE; a++)
    for (int c = 0; c < GRAM_TILE; c++)
      t[a][c] = (s[a][c][0] + s[a][c][1]) + (s[a][c][2] + s[a][c][3]);
  for (; r < r1; r++)
    for (int a = 0; a < GRAM_TILE; a++)
      for (int c = 0; c < GRAM_TILE; c++)
        t[a][c] += (double)x[a][r] * (double)y[c][r];
  for (int c = 0; c < nj; c++)
    for (int a = 0; a < ni; a++)
      p[(size_t)(i0 + a) + (size_t)(j0 + c) * (size_t)b] += t[a][c];
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
      for (int j0 = 0; j0 < b; j0 += GRAM_TILE)
        for (int i0 = 0; i0 < (sym ? j0 + 1 : b); i0 += GRAM_TILE)
          gram_tile(col(k, x, 0), col(k, y, 0), (size_t)n, b, i0, j0, s0, s1, p);
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

/* Rows r0 .. r1 - 1 of X := X M into t (b columns of BLOCK_ROWS doubles), the sum over i added
 * in the order i = 0 .. b - 1: four rows of TRANSFORM_COLS output columns at a time, the sums in
 * registers, each X vector loaded once for all of them. */
#define TRANSFORM_COLS 8

SPMV_CLONES static void transform_rows(const float *X, size_t n, int b, const double *M, int r0,
                                       int r1, double *t)
{
  const int full = r0 + (r1 - r0) / 4 * 4;
  for (int j0 = 0; j0 < b; j0 += TRANSFORM_COLS) {
    const int nj = b - j0 < TRANSFORM_COLS ? b - j0 : TRANSFORM_COLS;
    for (int r = r0; r < full; r += 4) {
      v4d s[TRANSFORM_COLS] = {{0}};
      for (int i = 0; i < b; i++) {
        const v4d xv = __builtin_convertvector(
            *(const v4f_a4 *)(const void *)(X + (size_t)i * n + (size_t)r), v4d);
        const double *m = M + i + (size_t)j0 * (size_t)b;
        for (int c = 0; c < TRANSFORM_COLS; c++)
          s[c] += xv * m[(size_t)(c < nj ? c : nj - 1) * (size_t)b];
      }
      for (int c = 0; c < nj; c++)
        *(v4d_a8 *)(void *)(t + (size_t)(j0 + c) * BLOCK_ROWS + (size_t)(r - r0)) = s[c];
    }
    for (int r = full; r < r1; r++)
      for (int c = 0; c < nj; c++) {
        double acc = 0.0;
        for (int i = 0; i < b; i++)
          acc += (double)X[(size_t)i * n + (size_t)r] * M[i + (size_t)(j0 + c) * (size_t)b];
        t[(size_t)(j0 + c) * BLOCK_ROWS + (size_t)(r - r0)] = acc;
      }
  }
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
      transform_rows(X, (size_t)n, b, M, r0, r1, t);
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
