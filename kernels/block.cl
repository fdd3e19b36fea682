/* Block operations of the block eigensolvers (spmv/opencl/cl_block.c), the OpenCL twin of
 * spmv/cpu/block_cpu.c (the C reference). All slots live in one buffer: column v of the slot that
 * starts at float offset `o` is data[o + v * ld + r], r < n; rows n .. ld - 1 are zero and stay
 * zero.
 *
 * Reductions accumulate in double and leave one partial sum per work-group and entry,
 * group-major (entry e of group g at part[g * count + e]); blk_sum_groups adds them up in group
 * order, so results do not depend on scheduling.
 *
 * -D options: NB (columns per block, 1..64: one program per block width), LOCAL (work-group
 * size, a power of two), SIDE (the Gram tile's items per side, SIDE * SIDE <= LOCAL), TROWS (rows
 * the Gram kernel stages in local memory at a time), RC (columns a reduction sums at a time);
 * for blk_product4: PLOCAL (its work-group size), VC (columns per work-group), NCH (column
 * chunks: ceil(NB / VC)), RUN (the most diagonals of one run); for blk_product_tile: TX, TY (the
 * tile's pixels across and down: TX * TY work-items per group), HALO (the stencil's reach in
 * pixels), TVC (columns staged at a time). */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef NB
#define NB 1
#endif
#ifndef LOCAL
#define LOCAL 256
#endif
#ifndef SIDE
#define SIDE 16
#endif
#ifndef TROWS
#define TROWS 32
#endif
#ifndef RC
#define RC 8
#endif
#ifndef PLOCAL
#define PLOCAL 256
#endif
#ifndef VC
#define VC (NB < 8 ? NB : 8)
#endif
#ifndef NCH
#define NCH ((NB + VC - 1) / VC)
#endif
#ifndef RUN
#define RUN 16
#endif
#ifndef TX
#define TX 32
#endif
#ifndef TY
#define TY 8
#endif
#ifndef HALO
#define HALO 5
#endif
#ifndef TVC
#define TVC (NB < 8 ? NB : 8)
#endif

/* Tree sum of s[0..LOCAL) for `tiles` interleaved values: s[t * LOCAL + lid]. Ends with a
 * barrier: the sums are at s[t * LOCAL]. */
inline void tree_sum(__local double *s, const int lid, const int tiles)
{
  for (int stride = LOCAL / 2; stride > 0; stride >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < stride)
      for (int t = 0; t < tiles; t++)
        s[t * LOCAL + lid] += s[t * LOCAL + lid + stride];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
}

/* Y := alpha A X + beta X + gamma P (P only with has_prev): the DIA SpMM, one row per work-item
 * with NB float accumulators, A read once for all NB columns. The sum runs over the diagonals in
 * order in float (as spmv_dia_mul's); the epilogue is in double. Y may be P: each work-item reads
 * its entries of P before it writes Y's. stride: floats per stored diagonal (rows when packed,
 * else pitch). The arguments that change from call to call come first (as blk_product4's). */
__kernel void blk_product(__global float *data, const ulong xo, const ulong yo, const ulong po,
                          const int has_prev, const double alpha, const double beta,
                          const double gamma, const int ld, __global const float *A,
                          const int stride, const int n, const int ndiag,
                          __global const int *offsets)
{
  const int r = get_global_id(0);
  if (r >= n)
    return;
  __global const float *X = data + xo;
  float acc[NB];
  for (int v = 0; v < NB; v++)
    acc[v] = 0.0f;
  for (int d = 0; d < ndiag; d++) {
    const int c = r + offsets[d];
    if (c >= 0 && c < n) {
      const float a = A[(size_t)d * stride + r];
      for (int v = 0; v < NB; v++)
        acc[v] += a * X[(size_t)v * ld + c];
    }
  }
  for (int v = 0; v < NB; v++) {
    const size_t e = (size_t)v * ld + r;
    double y = alpha * (double)acc[v] + beta * (double)X[e];
    if (has_prev)
      y += gamma * (double)data[po + e];
    data[yo + e] = (float)y;
  }
}

/* The same product, four consecutive rows per work-item and VC columns per work-group: work-group
 * g takes rows [R0, R0 + TR) (TR = 4 PLOCAL), R0 = (g / NCH) TR, and columns VC (g % NCH) ..,
 * so the NCH work-groups that read the same rows of A run side by side and share them in the
 * cache. The diagonals come in runs of consecutive offsets o, o + 1, .., o + L - 1 (runs[q]:
 * first diagonal, L <= RUN; the stencil of an image has one run per pixel row of the disc): for
 * each run the work-group stages X[R0 + o .. R0 + o + TR + L) of its columns in local memory
 * once (zero outside [0, n)), and each work-item reads its 4 rows' L + 3 entries from there as
 * aligned float4s, instead of 4 L loads from global memory. Each row sums the diagonals in order
 * in float (as blk_product); a run that reaches outside [0, n) in this work-group (the first and
 * last rows of the matrix) takes a slow path that leaves out the entries of A outside the
 * matrix, as the C path does. Y may be P: each work-item reads its entries of P before it writes
 * Y's. */
#define TR (4 * PLOCAL) /* rows per work-group */
#define WL (TR + RUN)   /* floats of one staged column: 4 (PLOCAL - 1) + RUN + 4 at most read */
__kernel __attribute__((reqd_work_group_size(PLOCAL, 1, 1))) void
blk_product4(__global float *data, const ulong xo, const ulong yo, const ulong po,
             const int has_prev, const double alpha, const double beta, const double gamma,
             const int ld, __global const float *A, const int stride, const int n,
             __global const int *offsets, __global const int2 *runs, const int nruns)
{
  __local float4 win4[VC * WL / 4];
  __local float *win = (__local float *)win4;
  const int lid = get_local_id(0), g = get_group_id(0);
  const int v0 = (g % NCH) * VC, R0 = (g / NCH) * TR, r = R0 + 4 * lid;
  const int aligned = (stride & 3) == 0;
  __global const float *X = data + xo + (size_t)v0 * ld;
  float4 acc[VC];
  for (int v = 0; v < VC; v++)
    acc[v] = (float4)(0.0f);
  for (int q = 0; q < nruns; q++) {
    const int2 run = runs[q];
    const int L = run.y, span = TR + ((L + 3) & ~3);
    const long o = offsets[run.x], base = (long)R0 + o;
    /* the slow path: a column of this run outside [0, n), or rows past n */
    const int edge = base < 0 || base + TR + L - 1 > n || R0 + TR > n;
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous run's window is no longer read */
    for (int v = 0; v < VC; v++)
      if (v0 + v < NB)
        for (int e = lid; e < span; e += PLOCAL) {
          const long c = base + e;
          win[v * WL + e] = c >= 0 && c < n ? X[(size_t)v * ld + (size_t)c] : 0.0f;
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k4 = 0; k4 < L; k4 += 4) {
      float4 a[4];
      for (int t = 0; t < 4; t++) {
        const int d = run.x + k4 + t;
        __global const float *Ad = A + (size_t)d * stride;
        if (k4 + t >= L)
          a[t] = (float4)(0.0f);
        else if (!edge) /* 16-byte aligned where the stride is a multiple of 4 (pitched) */
          a[t] = aligned ? ((__global const float4 *)Ad)[r / 4] : vload4(0, Ad + r);
        else {
          float av[4];
          for (int j = 0; j < 4; j++) {
            const long c = (long)r + j + o + k4 + t;
            av[j] = r + j < n && c >= 0 && c < n ? Ad[r + j] : 0.0f;
          }
          a[t] = (float4)(av[0], av[1], av[2], av[3]);
        }
      }
      for (int v = 0; v < VC; v++)
        if (v0 + v < NB) {
          const int at = (v * WL + 4 * lid + k4) / 4;
          const float4 w0 = win4[at], w1 = win4[at + 1];
          /* row j of diagonal k4 + t reads w[j + t] */
          acc[v] += a[0] * w0;
          if (k4 + 1 < L)
            acc[v] += a[1] * (float4)(w0.s123, w1.s0);
          if (k4 + 2 < L)
            acc[v] += a[2] * (float4)(w0.s23, w1.s01);
          if (k4 + 3 < L)
            acc[v] += a[3] * (float4)(w0.s3, w1.s012);
        }
    }
  }
  if (r >= n)
    return;
  for (int v = 0; v < VC; v++)
    if (v0 + v < NB) {
      /* columns start at multiples of ld (>= 32 floats) and r is a multiple of 4: aligned,
       * and r + 3 < ld */
      const size_t e = ((size_t)(v0 + v) * ld + r) / 4;
      double4 y = alpha * convert_double4(acc[v]) +
                  beta * convert_double4(((__global const float4 *)(data + xo))[e]);
      if (has_prev)
        y += gamma * convert_double4(((__global const float4 *)(data + po))[e]);
      const float4 f = convert_float4(y);
      __global float *Y = data + yo + 4 * e;
      if (r + 3 < n)
        ((__global float4 *)(data + yo))[e] = f;
      else { /* rows n .. stay zero */
        Y[0] = f.s0;
        if (r + 1 < n)
          Y[1] = f.s1;
        if (r + 2 < n)
          Y[2] = f.s2;
      }
    }
}

/* The same product on a pixel stencil (spmv_dia's width W > 0), tiled in 2D: work-group g takes
 * the TX x TY pixels (x, y) of tile (g % gx, g / gx) (gx tiles across), one per work-item, and
 * stages the tile and a halo of HALO pixels around it ((TX + 2 HALO) x (TY + 2 HALO) pixels) of
 * TVC columns at a time in local memory: zero for pixels outside the image and for rows >= n (a
 * partial last image row). Each work-item then sums its pixel's row over the diagonals in order
 * in float (as blk_product), diagonal d's column read from the tile at its pixel's position plus
 * tdelta[d] = dy TWH + dx (offset d = dy W + dx, |dx|, |dy| <= HALO, decomposed by the host).
 * Where the column r + offset is inside [0, n) but pixel (x + dx, y + dy) is outside the image,
 * A's entry is zero by the stencil's promise: the tile's zero changes nothing (but perhaps the
 * sign of a zero). A is re-read for each chunk of columns (mostly from the cache). Y may be P. */
#define TWH (TX + 2 * HALO) /* pixels of one staged tile row */
#define THH (TY + 2 * HALO) /* staged tile rows */
#define TPIX (TWH * THH)    /* staged pixels per column */
__kernel __attribute__((reqd_work_group_size(TX * TY, 1, 1))) void
blk_product_tile(__global float *data, const ulong xo, const ulong yo, const ulong po,
                 const int has_prev, const double alpha, const double beta, const double gamma,
                 const int ld, __global const float *A, const int stride, const int n,
                 const int ndiag, __constant int *tdelta, const int width, const int gx)
{
  __local float tile[TVC * TPIX];
  const int lid = get_local_id(0), g = get_group_id(0);
  const int tx = lid % TX, ty = lid / TX;
  const int x0 = (g % gx) * TX, y0 = (g / gx) * TY;
  const int x = x0 + tx, y = y0 + ty, r = y * width + x;
  const int mine = x < width && r < n; /* a pixel of the image with a row */
  const int at = (ty + HALO) * TWH + tx + HALO;
  __global const float *X = data + xo;
  for (int v0 = 0; v0 < NB; v0 += TVC) {
    float acc[TVC];
    for (int v = 0; v < TVC; v++)
      acc[v] = 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous chunk's tile is no longer read */
    for (int e = lid; e < TPIX; e += TX * TY) {
      const int px = x0 - HALO + e % TWH, py = y0 - HALO + e / TWH;
      const long c = (long)py * width + px;
      const int inside = px >= 0 && px < width && py >= 0 && c < n;
      for (int v = 0; v < TVC; v++)
        if (v0 + v < NB)
          tile[v * TPIX + e] = inside ? X[(size_t)(v0 + v) * ld + (size_t)c] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (mine) {
      for (int d = 0; d < ndiag; d++) {
        const float a = A[(size_t)d * stride + r];
        const int t = at + tdelta[d];
        for (int v = 0; v < TVC; v++)
          acc[v] += a * tile[v * TPIX + t];
      }
      for (int v = 0; v < TVC; v++)
        if (v0 + v < NB) {
          const size_t e = (size_t)(v0 + v) * ld + r;
          double yv = alpha * (double)acc[v] + beta * (double)X[e];
          if (has_prev)
            yv += gamma * (double)data[po + e];
          data[yo + e] = (float)yv;
        }
    }
  }
}

/* Slot so := the pseudo-random columns of spmv_block_fill_random (spmv.h): entry (r, v) from the
 * splitmix64 stream seeded seed + v, in 64-bit integers and one double, as the C path computes
 * it. One row per work-item; rows n .. ld - 1 are left alone (zero). */
__kernel void blk_fill_random(__global float *data, const ulong so, const int n, const int ld,
                              const ulong seed)
{
  const int r = get_global_id(0);
  if (r >= n)
    return;
  for (int v = 0; v < NB; v++) {
    ulong z = seed + (ulong)v + (ulong)(r + 1) * 0x9e3779b97f4a7c15UL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
    z ^= z >> 31;
    data[so + (size_t)v * ld + r] = (float)((double)(z >> 11) * 0x1.0p-53 - 0.5);
  }
}

/* D := alpha X + beta Y over the count4 float4s of a slot (padding included: zeros stay zero).
 * D may be X or Y. */
__kernel void blk_axpby(__global float *data, const ulong dst, const double alpha, const ulong xo,
                        const double beta, const ulong yo, const ulong count4)
{
  const size_t i = get_global_id(0);
  if (i >= count4)
    return;
  const double4 x = convert_double4(vload4(i, data + xo)),
                y = convert_double4(vload4(i, data + yo));
  vstore4(convert_float4(alpha * x + beta * y), i, data + dst);
}

/* The Gram kernel's tile: SIDE_I x SIDE_I work-items, each owning MI x MI entries (i, j) =
 * (ti + a * SIDE_I, tj + c * SIDE_I) of the NB x NB matrix; LANES work-items share an entry
 * and split the tile's rows when the entries are fewer than the work-items. */
#define MI ((NB + SIDE - 1) / SIDE)
#define SIDE_I ((NB + MI - 1) / MI)
#define ITEMS (SIDE_I * SIDE_I)
#define LANES (LOCAL / ITEMS)
#define TP (TROWS + 1) /* the staged columns' stride: odd, no bank conflicts */

/* part[g * NB * NB + i + j * NB] = sum over work-group g's rows of X[r, i] Y[r, j]: tiles of
 * TROWS rows (tile g, g + groups, ...) of both slots staged in local memory, each product exact
 * in double. */
__kernel void blk_gram(__global const float *data, const ulong xo, const ulong yo, const int n,
                       const int ld, __global double *part)
{
  __local float xs[NB * TP], ys[NB * TP];
#if LANES > 1
  __local double red[LOCAL];
#endif
  const int lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
  const int item = lid % ITEMS, lane = lid / ITEMS, ti = item % SIDE_I, tj = item / SIDE_I;
  const int tiles = (n + TROWS - 1) / TROWS;
  __global const float *X = data + xo, *Y = data + yo;
  double acc[MI][MI];
  for (int a = 0; a < MI; a++)
    for (int c = 0; c < MI; c++)
      acc[a][c] = 0.0;
  for (int tile = g; tile < tiles; tile += groups) {
    const int r0 = tile * TROWS;
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous tile is no longer read */
    for (int e = lid; e < NB * TROWS; e += LOCAL) {
      const int col = e / TROWS, row = e % TROWS, r = r0 + row;
      xs[col * TP + row] = r < n ? X[(size_t)col * ld + r] : 0.0f;
      ys[col * TP + row] = r < n ? Y[(size_t)col * ld + r] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lane < LANES)
      for (int t = lane; t < TROWS; t += LANES) {
        double xv[MI], yv[MI];
        for (int a = 0; a < MI; a++) {
          xv[a] = (double)xs[min(ti + a * SIDE_I, NB - 1) * TP + t];
          yv[a] = (double)ys[min(tj + a * SIDE_I, NB - 1) * TP + t];
        }
        for (int a = 0; a < MI; a++)
          for (int c = 0; c < MI; c++)
            acc[a][c] += xv[a] * yv[c];
      }
  }
  __global double *p = part + (size_t)g * NB * NB;
  for (int a = 0; a < MI; a++)
    for (int c = 0; c < MI; c++) {
      const int i = ti + a * SIDE_I, j = tj + c * SIDE_I;
#if LANES > 1 /* the lanes' sums, in lane order */
      barrier(CLK_LOCAL_MEM_FENCE);
      red[lid] = acc[a][c];
      barrier(CLK_LOCAL_MEM_FENCE);
      if (lane == 0 && i < NB && j < NB) {
        double s = 0.0;
        for (int l = 0; l < LANES; l++)
          s += red[item + l * ITEMS];
        p[i + j * NB] = s;
      }
#else
      if (lane == 0 && i < NB && j < NB)
        p[i + j * NB] = acc[a][c];
#endif
    }
}

/* part[g * NB + v] = sum over work-group g's rows of (AX[r, v] - theta[v] X[r, v])^2. */
__kernel void blk_residuals(__global const float *data, const ulong ao, const ulong xo, const int n,
                            const int ld, __constant double *theta, __global double *part)
{
  __local double s[RC * LOCAL];
  const int lid = get_local_id(0), g = get_group_id(0);
  __global const float *AX = data + ao, *X = data + xo;
  for (int v0 = 0; v0 < NB; v0 += RC) {
    double acc[RC];
    for (int c = 0; c < RC; c++)
      acc[c] = 0.0;
    for (int r = get_global_id(0); r < n; r += get_global_size(0))
      for (int c = 0; c < RC; c++)
        if (v0 + c < NB) {
          const size_t e = (size_t)(v0 + c) * ld + r;
          const double d = (double)AX[e] - theta[v0 + c] * (double)X[e];
          acc[c] += d * d;
        }
    for (int c = 0; c < RC; c++)
      s[c * LOCAL + lid] = acc[c];
    tree_sum(s, lid, min(RC, NB - v0));
    if (lid < RC && v0 + lid < NB)
      part[(size_t)g * NB + v0 + lid] = s[lid * LOCAL];
    barrier(CLK_LOCAL_MEM_FENCE); /* s is read before the next columns overwrite it */
  }
}

/* out[e] = sum over g < groups of part[g * count + e], in group order. */
__kernel void blk_sum_groups(__global const double *part, const int groups, const int count,
                             __global double *out)
{
  const int e = get_global_id(0);
  if (e >= count)
    return;
  double s = 0.0;
  for (int g = 0; g < groups; g++)
    s += part[(size_t)g * count + e];
  out[e] = s;
}

/* X := X M in place, one row per work-item (it reads its row before writing it): column j is
 * sum_i X[:, i] M[i + j * NB], summed in double in the order of i. */
__kernel void blk_transform(__global float *data, const ulong so, const int n, const int ld,
                            __constant double *M)
{
  const int r = get_global_id(0);
  if (r >= n)
    return;
  __global float *X = data + so;
  float x[NB];
  for (int i = 0; i < NB; i++)
    x[i] = X[(size_t)i * ld + r];
  for (int j = 0; j < NB; j++) {
    double s = 0.0;
    for (int i = 0; i < NB; i++)
      s += (double)x[i] * M[i + j * NB];
    X[(size_t)j * ld + r] = (float)s;
  }
}

/* Known vectors, step 1: chunkdot[q * NB + v] = sum over chunk q of value * X[row, v], one
 * work-group per chunk. The chunks are runs of rows[] (the labelled rows sorted by label; vals
 * their values), bounded by chunk[q] .. chunk[q + 1], each within one label. */
__kernel void blk_known_dot(__global const float *data, const ulong so, const int ld,
                            __global const int *rows, __global const float *vals,
                            __global const int *chunk, __global double *chunkdot)
{
  __local double s[RC * LOCAL];
  const int lid = get_local_id(0), q = get_group_id(0), beg = chunk[q], end = chunk[q + 1];
  __global const float *X = data + so;
  for (int v0 = 0; v0 < NB; v0 += RC) {
    double acc[RC];
    for (int c = 0; c < RC; c++)
      acc[c] = 0.0;
    for (int k = beg + lid; k < end; k += LOCAL) {
      const int r = rows[k];
      const double w = (double)vals[k];
      for (int c = 0; c < RC; c++)
        if (v0 + c < NB)
          acc[c] += w * (double)X[(size_t)(v0 + c) * ld + r];
    }
    for (int c = 0; c < RC; c++)
      s[c * LOCAL + lid] = acc[c];
    tree_sum(s, lid, min(RC, NB - v0));
    if (lid < RC && v0 + lid < NB)
      chunkdot[(size_t)q * NB + v0 + lid] = s[lid * LOCAL];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* Step 2: kd[c * NB + v] = sum of known vector c's chunks' dots (chunks first[c] ..
 * first[c + 1], in order), one work-item per (c, v). */
__kernel void blk_known_sum(__global const double *chunkdot, __global const int *first,
                            const int count, __global double *kd)
{
  const size_t e = get_global_id(0);
  if (e >= (size_t)count * NB)
    return;
  const int c = (int)(e / NB), v = (int)(e % NB);
  double s = 0.0;
  for (int q = first[c]; q < first[c + 1]; q++)
    s += chunkdot[(size_t)q * NB + v];
  kd[e] = s;
}

/* Step 3: X[r, v] -= value[r] kd[label[r] * NB + v] for the rows in a known vector's support,
 * one row per work-item. */
__kernel void blk_known_apply(__global float *data, const ulong so, const int n, const int ld,
                              __global const int *label, __global const float *value,
                              __global const double *kd)
{
  const int r = get_global_id(0);
  if (r >= n)
    return;
  const int c = label[r];
  if (c < 0)
    return;
  __global float *X = data + so;
  const double w = (double)value[r];
  for (int v = 0; v < NB; v++) {
    const size_t e = (size_t)v * ld + r;
    X[e] = (float)((double)X[e] - w * kd[(size_t)c * NB + v]);
  }
}
