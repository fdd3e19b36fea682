/* DIA storage and the two C products: the scalar reference and the threaded one. */
#include "spmv_internal.h"

#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int create(spmv_dia **out, int rows, int ndiag, const int *offsets, int host)
{
  spmv_dia *A = NULL;
  size_t pitch, count, bytes;

  *out = NULL;
  if (rows < 1 || ndiag < 1)
    return dsg_error_set(DSG_ERR_INVALID, "DIA matrix needs rows >= 1 and ndiag >= 1 (got %d, %d)",
                         rows, ndiag);
  for (int d = 0; d < ndiag; d++) {
    if (offsets[d] <= -rows || offsets[d] >= rows)
      return dsg_error_set(DSG_ERR_INVALID, "DIA offset %d lies outside a %d-row matrix",
                           offsets[d], rows);
    if (d > 0 && offsets[d] <= offsets[d - 1])
      return dsg_error_set(DSG_ERR_INVALID, "DIA offsets must be strictly ascending (%d then %d)",
                           offsets[d - 1], offsets[d]);
  }
  pitch = ((size_t)rows + SPMV_PITCH_ALIGN - 1) / SPMV_PITCH_ALIGN * SPMV_PITCH_ALIGN;
  if (pitch > SIZE_MAX / sizeof(float) / (size_t)ndiag)
    return dsg_error_set(DSG_ERR_LIMIT, "DIA matrix of %d diagonals x %zu floats overflows size_t",
                         ndiag, pitch);
  count = pitch * (size_t)ndiag;
  bytes = count * sizeof(float); /* a multiple of 128: pitch is a multiple of 32 floats */

  A = malloc(sizeof(*A));
  if (!A)
    goto out_nomem;
  A->rows = rows;
  A->ndiag = ndiag;
  A->pitch = pitch;
  A->width = 0;
  A->symmetric = 0;
  A->device = NULL;
  A->offsets = malloc((size_t)ndiag * sizeof(*A->offsets));
  A->values = host ? aligned_alloc(SPMV_ALIGN_BYTES, bytes) : NULL;
  if (!A->offsets || (host && !A->values))
    goto out_nomem;
  memcpy(A->offsets, offsets, (size_t)ndiag * sizeof(*A->offsets));
  if (host)
    memset(A->values, 0, bytes);
  *out = A;
  return DSG_OK;

out_nomem:
  spmv_dia_destroy(A);
  return dsg_error_set(DSG_ERR_NOMEM,
                       "cannot allocate a DIA matrix of %d diagonals x %zu floats "
                       "(%.1f MiB)",
                       ndiag, pitch, (double)bytes / 1048576.0);
}

int spmv_dia_create(spmv_dia **out, int rows, int ndiag, const int *offsets)
{
  return create(out, rows, ndiag, offsets, 1);
}

int spmv_dia_create_shape(spmv_dia **out, int rows, int ndiag, const int *offsets)
{
  return create(out, rows, ndiag, offsets, 0);
}

int spmv_dia_read_device(const spmv_dia *A, float **values)
{
  const size_t bytes = spmv_dia_bytes(A);
  int status;
  *values = NULL;
  if (!A->device)
    return dsg_error_set(DSG_ERR_INVALID, "a DIA matrix without a device copy to read back");
  *values = aligned_alloc(SPMV_ALIGN_BYTES, bytes);
  if (!*values)
    return dsg_error_set(DSG_ERR_NOMEM,
                         "cannot allocate the host's copy of a DIA matrix (%.1f MiB)",
                         (double)bytes / 1048576.0);
  memset(*values, 0, bytes); /* the pages faulted in here, not inside the backend's copy */
  status = A->device->read(A->device, *values, bytes);
  if (status != DSG_OK) {
    free(*values);
    *values = NULL;
  }
  return status;
}

int spmv_dia_host(spmv_dia *A)
{
  float *values;
  int status;
  if (A->values)
    return DSG_OK;
  status = spmv_dia_read_device(A, &values);
  if (status == DSG_OK)
    A->values = values;
  return status;
}

static void release_device(spmv_dia *A)
{
  if (A->device) {
    A->device->release(A->device);
    A->device = NULL;
  }
}

void spmv_dia_drop_device(spmv_dia *A)
{
  if (A && A->values) /* without host values the device's is the only copy */
    release_device(A);
}

void spmv_dia_destroy(spmv_dia *A)
{
  if (!A)
    return;
  release_device(A);
  free(A->offsets);
  free(A->values);
  free(A);
}

size_t spmv_dia_bytes(const spmv_dia *A) { return (size_t)A->ndiag * A->pitch * sizeof(float); }

int spmv_dia_validate(const spmv_dia *A)
{
  if (A->pitch < (size_t)A->rows || A->pitch % SPMV_PITCH_ALIGN != 0)
    return dsg_error_set(DSG_ERR_INVALID, "DIA pitch %zu is not a multiple of %d covering %d rows",
                         A->pitch, SPMV_PITCH_ALIGN, A->rows);
  if ((uintptr_t)A->values % SPMV_ALIGN_BYTES != 0)
    return dsg_error_set(DSG_ERR_INVALID, "DIA values are not %d-byte aligned", SPMV_ALIGN_BYTES);
  for (int d = 0; d < A->ndiag; d++) {
    const float *a = A->values + (size_t)d * A->pitch;
    if (d > 0 && A->offsets[d] <= A->offsets[d - 1])
      return dsg_error_set(DSG_ERR_INVALID, "DIA offsets not ascending at diagonal %d", d);
    for (size_t r = 0; r < A->pitch; r++) {
      long long col = (long long)r + A->offsets[d];
      int inside = r < (size_t)A->rows && col >= 0 && col < A->rows;
      if (!isfinite(a[r]))
        return dsg_error_set(DSG_ERR_INVALID, "DIA value at diagonal %d row %zu is not finite", d,
                             r);
      if (!inside && a[r] != 0.0f)
        return dsg_error_set(DSG_ERR_INVALID,
                             "DIA value at diagonal %d (offset %d) row %zu lies "
                             "outside the matrix but is %g, not 0",
                             d, A->offsets[d], r, a[r]);
    }
  }
  for (int d = 0; A->width > 0 && d < A->ndiag; d++) { /* the stencil's promise */
    const int W = A->width, o = A->offsets[d];
    const int dy = (o >= 0 ? o + W / 2 : o - (W - 1) / 2) / W, dx = o - dy * W;
    const float *a = A->values + (size_t)d * A->pitch;
    if (2 * (dx < 0 ? -dx : dx) >= W)
      return dsg_error_set(DSG_ERR_INVALID, "DIA offset %d is no stencil offset of width %d", o, W);
    for (int r = 0; r < A->rows; r++) {
      const int x = r % W;
      if ((x + dx < 0 || x + dx >= W) && a[r] != 0.0f)
        return dsg_error_set(DSG_ERR_INVALID,
                             "DIA value at diagonal %d (offset %d = %d rows %+d) row %d links "
                             "pixels across the edge of a %d-wide image but is %g, not 0",
                             d, o, dy, dx, r, W, a[r]);
    }
  }
  if (A->symmetric) { /* the mirror promise */
    int zero = -1;
    for (int d = 0; d < A->ndiag; d++)
      zero = A->offsets[d] == 0 ? d : zero;
    if (zero < 0 || 2 * zero + 1 != A->ndiag)
      return dsg_error_set(DSG_ERR_INVALID, "a symmetric DIA matrix needs its offsets in pairs o, "
                                            "-o around the main diagonal");
    for (int k = 1; zero + k < A->ndiag; k++) {
      const int o = A->offsets[zero + k];
      const float *up = A->values + (size_t)(zero + k) * A->pitch;
      const float *lo = A->values + (size_t)(zero - k) * A->pitch;
      if (A->offsets[zero - k] != -o)
        return dsg_error_set(DSG_ERR_INVALID, "a symmetric DIA matrix has offset %d without %d", o,
                             -o);
      for (int r = 0; r + o < A->rows; r++)
        if (lo[r + o] != up[r])
          return dsg_error_set(DSG_ERR_INVALID,
                               "a symmetric DIA matrix has entry (%d, %d) = %g but (%d, %d) = %g",
                               r, r + o, up[r], r + o, r, lo[r + o]);
    }
  }
  return DSG_OK;
}

double spmv_dia_row_mul(const spmv_dia *A, int row, const float *x)
{
  double acc = 0.0;
  for (int d = 0; d < A->ndiag; d++) {
    long long col = (long long)row + A->offsets[d];
    if (col >= 0 && col < A->rows)
      acc += (double)A->values[(size_t)d * A->pitch + (size_t)row] * (double)x[col];
  }
  return acc;
}

void spmv_dia_mul_ref(const spmv_dia *A, const float *x, float *y)
{
  for (int row = 0; row < A->rows; row++)
    y[row] = (float)spmv_dia_row_mul(A, row, x);
}

double spmv_dia_row_error(const spmv_dia *A, const float *x, const float *y, const float *ref)
{
  double worst = 0.0;
  for (int r = 0; r < A->rows; r++) {
    double scale = 0.0;
    for (int d = 0; d < A->ndiag; d++) {
      const long long c = (long long)r + A->offsets[d];
      if (c >= 0 && c < A->rows)
        scale += fabs((double)A->values[(size_t)d * A->pitch + (size_t)r] * (double)x[c]);
    }
    const double e = isfinite(y[r])
                         ? fabs((double)y[r] - (double)ref[r]) / (scale > 0.0 ? scale : 1.0)
                         : INFINITY;
    worst = e > worst ? e : worst;
  }
  return worst;
}

/* The threaded product. Rows are split into blocks whose accumulators (8 KiB) stay in L1; each
 * block takes the diagonals eight at a time, so the accumulator is loaded and stored once per
 * eight products instead of once per product (2.2x faster on the CI machine; its bandwidth
 * against the copy bound is in docs/PERFORMANCE.md). Rows whose eight columns all lie inside the
 * matrix run the vectorised loop; the few rows near the ends check each column. On x86-64 the block
 * is compiled twice, for AVX2 + FMA and for the baseline, and the loader picks one (target_clones).
 */
#define SPMV_BLOCK_ROWS 2048
#define SPMV_GROUP 8

SPMV_CLONES
static void dia_block(const spmv_dia *A, const float *restrict x, float *restrict y, int r0, int r1)
{
  float acc[SPMV_BLOCK_ROWS];
  const int rows = A->rows;
  const size_t p = A->pitch;
  int d = 0;
  memset(acc, 0, sizeof(acc));
  for (; d + SPMV_GROUP <= A->ndiag; d += SPMV_GROUP) {
    const int *o = A->offsets + d;
    const float *restrict a0 = A->values + (size_t)d * p;
    /* [lo, hi): rows where all eight columns r + o[j] are inside (offsets ascend) */
    const int lo = r0 > -o[0] ? r0 : -o[0];
    int hi = r1 < rows - o[SPMV_GROUP - 1] ? r1 : rows - o[SPMV_GROUP - 1];
    if (hi < lo)
      hi = lo;
    for (int r = r0; r < r1; r++) {
      if (r == lo) {
        r = hi;
        if (r >= r1)
          break;
      }
      float s = 0.0f;
      for (int j = 0; j < SPMV_GROUP; j++) {
        const long long c = (long long)r + o[j];
        if (c >= 0 && c < rows)
          s += a0[(size_t)j * p + (size_t)r] * x[c];
      }
      acc[r - r0] += s;
    }
    const float *restrict a1 = a0 + p, *restrict a2 = a1 + p, *restrict a3 = a2 + p;
    const float *restrict a4 = a3 + p, *restrict a5 = a4 + p, *restrict a6 = a5 + p;
    const float *restrict a7 = a6 + p;
    const int o0 = o[0], o1 = o[1], o2 = o[2], o3 = o[3], o4 = o[4], o5 = o[5], o6 = o[6],
              o7 = o[7];
#pragma omp simd
    for (int r = lo; r < hi; r++)
      acc[r - r0] +=
          ((a0[r] * x[r + o0] + a1[r] * x[r + o1]) + (a2[r] * x[r + o2] + a3[r] * x[r + o3])) +
          ((a4[r] * x[r + o4] + a5[r] * x[r + o5]) + (a6[r] * x[r + o6] + a7[r] * x[r + o7]));
  }
  for (; d < A->ndiag; d++) { /* the remaining diagonals one at a time */
    const int off = A->offsets[d];
    const int lo = r0 > -off ? r0 : -off;
    const int hi = r1 < rows - off ? r1 : rows - off;
    const float *restrict a = A->values + (size_t)d * p;
#pragma omp simd
    for (int r = lo; r < hi; r++)
      acc[r - r0] += a[r] * x[r + off];
  }
  memcpy(y + r0, acc, (size_t)(r1 - r0) * sizeof(float));
}

/* The block of a symmetric matrix (spmv_dia.symmetric) from its upper half: row r takes
 * a_o[r] x[r + o] (the entry above the main diagonal) and a_o[r - o] x[r - o] (its mirror below,
 * stored above as row r - o's), four offsets o > 0 at a time. The mirrors' values were read o
 * rows before, within the last few blocks: from the cache, so the product moves about half the
 * bytes of dia_block. */
#define SPMV_SYM_GROUP 4
SPMV_CLONES
static void dia_block_sym(const spmv_dia *A, const float *restrict x, float *restrict y, int r0,
                          int r1)
{
  float acc[SPMV_BLOCK_ROWS];
  const int rows = A->rows, zero = A->ndiag / 2;
  const size_t p = A->pitch;
  const float *restrict a = A->values + (size_t)zero * p;
  int d = zero + 1;
  for (int r = r0; r < r1; r++)
    acc[r - r0] = a[r] * x[r];
  for (; d + SPMV_SYM_GROUP <= A->ndiag; d += SPMV_SYM_GROUP) {
    const int *o = A->offsets + d;
    const float *restrict a0 = A->values + (size_t)d * p, *restrict a1 = a0 + p;
    const float *restrict a2 = a1 + p, *restrict a3 = a2 + p;
    const int o0 = o[0], o1 = o[1], o2 = o[2], o3 = o[3];
    /* [lo, hi): rows where r + o3 and r - o3 are both inside (offsets ascend) */
    const int lo = r0 > o3 ? r0 : o3;
    int hi = r1 < rows - o3 ? r1 : rows - o3;
    if (hi < lo)
      hi = lo;
    for (int r = r0; r < r1; r++) {
      if (r == lo) {
        r = hi;
        if (r >= r1)
          break;
      }
      float s = 0.0f;
      for (int j = 0; j < SPMV_SYM_GROUP; j++) {
        const float *restrict aj = A->values + (size_t)(d + j) * p;
        if (r + o[j] < rows)
          s += aj[r] * x[r + o[j]];
        if (r - o[j] >= 0)
          s += aj[r - o[j]] * x[r - o[j]];
      }
      acc[r - r0] += s;
    }
#pragma omp simd
    for (int r = lo; r < hi; r++)
      acc[r - r0] += ((a0[r] * x[r + o0] + a0[r - o0] * x[r - o0]) +
                      (a1[r] * x[r + o1] + a1[r - o1] * x[r - o1])) +
                     ((a2[r] * x[r + o2] + a2[r - o2] * x[r - o2]) +
                      (a3[r] * x[r + o3] + a3[r - o3] * x[r - o3]));
  }
  for (; d < A->ndiag; d++) { /* the remaining offsets one at a time */
    const int off = A->offsets[d];
    const float *restrict ad = A->values + (size_t)d * p;
    for (int r = r0; r < r1; r++) {
      float s = 0.0f;
      if (r + off < rows)
        s += ad[r] * x[r + off];
      if (r - off >= 0)
        s += ad[r - off] * x[r - off];
      acc[r - r0] += s;
    }
  }
  memcpy(y + r0, acc, (size_t)(r1 - r0) * sizeof(float));
}

void spmv_dia_mul(const spmv_dia *A, const float *x, float *y)
{
  const int rows = A->rows;
  const int nblocks = (rows + SPMV_BLOCK_ROWS - 1) / SPMV_BLOCK_ROWS;
  const int sym = A->symmetric;
#pragma omp parallel for schedule(static)
  for (int b = 0; b < nblocks; b++) {
    const int r0 = b * SPMV_BLOCK_ROWS,
              r1 = r0 + SPMV_BLOCK_ROWS < rows ? r0 + SPMV_BLOCK_ROWS : rows;
    if (sym)
      dia_block_sym(A, x, y, r0, r1);
    else
      dia_block(A, x, y, r0, r1);
  }
}

/* The pairs of diagonals: for each offset o > 0, o and the diagonal of -o (or -1); then each
 * offset o < 0 without a mirror above, as -o with no diagonal above. */
static int pair_diagonals(const spmv_dia *A, int *offsets, int *upper, int *lower)
{
  int count = 0;
  for (int d = 0; d < A->ndiag; d++) {
    const int off = A->offsets[d];
    int mirror = -1;
    if (off == 0)
      continue;
    for (int e = 0; e < A->ndiag; e++)
      if (A->offsets[e] == -off)
        mirror = e;
    if (off > 0) {
      offsets[count] = off;
      upper[count] = d;
      lower[count++] = mirror;
    } else if (mirror < 0) {
      offsets[count] = -off;
      upper[count] = -1;
      lower[count++] = d;
    }
  }
  return count;
}

int spmv_links_create(spmv_links *L, const spmv_dia *A)
{
  memset(L, 0, sizeof(*L));
  L->rows = A->rows;
  L->words = ((size_t)A->rows + 31) / 32;
  L->offsets = malloc((size_t)A->ndiag * sizeof(*L->offsets));
  L->upper = malloc((size_t)A->ndiag * sizeof(*L->upper));
  L->lower = malloc((size_t)A->ndiag * sizeof(*L->lower));
  if (!L->offsets || !L->upper || !L->lower)
    goto nomem;
  L->count = pair_diagonals(A, L->offsets, L->upper, L->lower);
  L->bits = calloc((L->count > 0 ? (size_t)L->count : 1) * L->words, sizeof(*L->bits));
  if (!L->bits)
    goto nomem;
  return DSG_OK;
nomem:
  spmv_links_free(L);
  return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the links of %d rows", A->rows);
}

void spmv_links_free(spmv_links *L)
{
  free(L->offsets);
  free(L->upper);
  free(L->lower);
  free(L->bits);
  memset(L, 0, sizeof(*L));
}

int spmv_dia_links(const spmv_dia *A, float threshold, spmv_links *L)
{
  int status = spmv_links_create(L, A);
  if (status != DSG_OK)
    return status;
  for (int k = 0; k < L->count; k++) {
    const int off = L->offsets[k], n = A->rows;
    const float *a = L->upper[k] >= 0 ? A->values + (size_t)L->upper[k] * A->pitch : NULL;
    const float *b = L->lower[k] >= 0 ? A->values + (size_t)L->lower[k] * A->pitch : NULL;
    uint32_t *bits = L->bits + (size_t)k * L->words;
#pragma omp parallel for schedule(static)
    for (size_t w = 0; w < L->words; w++) {
      uint32_t word = 0;
      for (int t = 0; t < 32; t++) {
        const long long r = (long long)w * 32 + t;
        if (r < n - off && ((a && fabsf(a[r]) > threshold) || (b && fabsf(b[r + off]) > threshold)))
          word |= 1u << t;
      }
      bits[w] = word;
    }
  }
  return DSG_OK;
}

static int uf_find(int *parent, int a)
{
  while (parent[a] != a) {
    parent[a] = parent[parent[a]]; /* path halving */
    a = parent[a];
  }
  return a;
}

/* Joins the pairs (r, r + off) that L links (and `except`, when given, does not: the same pairs
 * as L), r in [r0, r1), r + off in [lo, hi), into parent. Every parent is at most its row (the
 * smaller index is the root). With flat, [r0, hi) is flattened after each offset, so most linked
 * pairs of one component are seen equal at once, without a walk to the roots. */
static void join_span(int *parent, const spmv_links *L, const spmv_links *except, int r0, int r1,
                      int lo, int hi, int flat)
{
  for (int k = 0; k < L->count; k++) {
    const int off = L->offsets[k];
    const uint32_t *bits = L->bits + (size_t)k * L->words;
    const uint32_t *skip = except ? except->bits + (size_t)k * L->words : NULL;
    const int from = r0 > lo - off ? r0 : lo - off, to = r1 < hi - off ? r1 : hi - off;
    for (size_t w = from > 0 ? (size_t)from / 32 : 0; to > from && w * 32 < (size_t)to; w++)
      for (uint32_t word = skip ? bits[w] & ~skip[w] : bits[w]; word; word &= word - 1) {
        const int r = (int)(w * 32) + __builtin_ctz(word);
        if (r < from || r >= to)
          continue;
        if (parent[r] != parent[r + off]) {
          const int x = uf_find(parent, r), y = uf_find(parent, r + off);
          if (x != y)
            parent[x > y ? x : y] = x < y ? x : y;
        }
      }
    if (flat)
      for (int i = r0; i < hi; i++)
        parent[i] = parent[parent[i]];
  }
}

/* Joins the rows L links into parent (see join_span). Where parent is still every row its own
 * (fresh), in bands of rows on the threads: first each band's pairs within it (a band's finds
 * and roots stay in it, flattened after each offset), then, on one thread, the pairs that cross
 * from a band into the rows after it; else (parent already joined elsewhere, where a find may
 * lead into another band, and where the pairs L adds to `except`'s are few) on one thread,
 * without the flattening after each offset (40 sweeps of every row for a few new pairs: most of
 * the nested pass's time). Then one flattening. The partition, and so the roots, do not depend on
 * the bands. */
static void join_links(int *parent, const spmv_links *L, const spmv_links *except, int fresh)
{
  const int n = L->rows;
  int reach = 0; /* the largest offset */
  for (int k = 0; k < L->count; k++)
    reach = L->offsets[k] > reach ? L->offsets[k] : reach;
  /* bands of whole words, each at least 8 times the reach (the pairs that cross are few) */
  int nbands = fresh ? omp_get_max_threads() : 1;
  while (nbands > 1 && (long long)n / nbands < 8LL * reach + 64)
    nbands--;
  const long long band = (((long long)n + nbands - 1) / nbands + 31) / 32 * 32;
#pragma omp parallel for schedule(static)
  for (int t = 0; t < nbands; t++) {
    const int b0 = (int)(t * band < n ? t * band : n),
              b1 = (int)((t + 1) * band < n ? (t + 1) * band : n);
    if (b1 > b0)
      join_span(parent, L, except, b0, b1, b0, b1, fresh);
  }
  for (int t = 0; t + 1 < nbands; t++) {
    const int b1 = (int)((t + 1) * band < n ? (t + 1) * band : n);
    if (b1 < n)
      join_span(parent, L, except, b1 - reach > 0 ? b1 - reach : 0, b1, b1, n, 0);
  }
  for (int i = 0; i < n; i++) /* parent[i] <= i: one sweep in row order */
    parent[i] = parent[parent[i]];
}

/* Roots are the smallest index of their component (parent flat): numbered in row order. */
static int number(const int *parent, int n, int *label)
{
  int count = 0;
  for (int i = 0; i < n; i++)
    label[i] = parent[i] == i ? count++ : label[parent[i]];
  return count;
}

int spmv_links_components(const spmv_links *L, int *label, int *ncomp)
{
  return spmv_links_components_nested(L, NULL, label, ncomp, NULL, NULL);
}

int spmv_links_components_nested(const spmv_links *inner, const spmv_links *outer, int *inner_label,
                                 int *ninner, int *outer_label, int *nouter)
{
  const int n = inner->rows;
  int *parent;
  if (outer &&
      (outer->rows != n || outer->count != inner->count ||
       memcmp(outer->offsets, inner->offsets, (size_t)inner->count * sizeof(*inner->offsets)) != 0))
    return dsg_error_set(DSG_ERR_INVALID, "nested links of different matrices");
  parent = malloc((size_t)n * sizeof(*parent));
  if (!parent)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d union-find entries", n);
  for (int i = 0; i < n; i++)
    parent[i] = i;
  join_links(parent, inner, NULL, 1);
  *ninner = number(parent, n, inner_label);
  if (outer) { /* the outer components join inner ones: only the pairs inner lacks are new */
    join_links(parent, outer, inner, 0);
    *nouter = number(parent, n, outer_label);
  }
  free(parent);
  return DSG_OK;
}

int spmv_dia_components(const spmv_dia *A, float threshold, int *label, int *ncomp)
{
  spmv_links L;
  int status = spmv_dia_links(A, threshold, &L);
  if (status == DSG_OK)
    status = spmv_links_components(&L, label, ncomp);
  spmv_links_free(&L);
  return status;
}
