/* DIA sparse matrix-vector products y = A x: the sequence of B. Catanzaro, "OpenCL Optimization
 * Case Study: Diagonal Sparse Matrix Vector Multiplication" (AMD, 2010), with the listings' bugs
 * fixed. The C reference is spmv_dia_mul_ref (spmv/dia.c); docs/PIPELINE.md has the layout.
 *
 * A holds ndiag diagonals: A[d * pitch + row] = A(row, row + offsets[d]), zero where the column
 * is outside [0, rows) and in the padding rows >= rows. pitch is rows rounded up to 32 floats.
 * Every kernel reads x only at columns inside [0, rows).
 *
 * Compile-time options (-D): LOCAL_OFFSETS, the diagonals staged in local memory per block
 * (default 256; more diagonals are processed block by block).
 */
#ifndef LOCAL_OFFSETS
#define LOCAL_OFFSETS 256
#endif

/* 1. naive: one work-item per row; A packed without padding (diag * rows + row); offsets read
 *    from global memory on every iteration (12 bytes per 2 flops). */
__kernel void dia_naive(__global const float *A, const int rows, const int ndiag,
                        __global const int *offsets, __global const float *x, __global float *y)
{
  const int row = get_global_id(0);
  if (row >= rows)
    return;
  float acc = 0.0f;
  for (int d = 0; d < ndiag; d++) {
    const int col = row + offsets[d];
    if (col >= 0 && col < rows)
      acc += A[(size_t)d * rows + row] * x[col];
  }
  y[row] = acc;
}

/* 2. aligned: the pitched, 128-byte-aligned layout; the matrix pointer steps by pitch. */
__kernel void dia_aligned(__global const float *A, const int pitch, const int rows, const int ndiag,
                          __global const int *offsets, __global const float *x, __global float *y)
{
  const int row = get_global_id(0);
  if (row >= rows)
    return;
  __global const float *a = A + row;
  float acc = 0.0f;
  for (int d = 0; d < ndiag; d++) {
    const int col = row + offsets[d];
    if (col >= 0 && col < rows)
      acc += *a * x[col];
    a += pitch;
  }
  y[row] = acc;
}

/* 3. local: offsets staged in local memory (8 bytes per 2 flops), LOCAL_OFFSETS at a time.
 *    Every work-item reaches every barrier; only rows inside compute and store. */
__kernel void dia_local(__global const float *A, const int pitch, const int rows, const int ndiag,
                        __global const int *offsets, __global const float *x, __global float *y)
{
  __local int l_off[LOCAL_OFFSETS];
  const int row = get_global_id(0), lid = get_local_id(0), lsz = get_local_size(0);
  float acc = 0.0f;
  for (int base = 0; base < ndiag; base += LOCAL_OFFSETS) {
    const int count = min(LOCAL_OFFSETS, ndiag - base);
    barrier(CLK_LOCAL_MEM_FENCE); /* the previous block is no longer read */
    for (int i = lid; i < count; i += lsz)
      l_off[i] = offsets[base + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (row < rows) {
      __global const float *a = A + (size_t)base * pitch + row;
      for (int d = 0; d < count; d++) {
        const int col = row + l_off[d];
        if (col >= 0 && col < rows)
          acc += *a * x[col];
        a += pitch;
      }
    }
  }
  if (row < rows)
    y[row] = acc;
}

/* x[col .. col + 3] with zeros outside [0, rows). */
inline float4 x_window(__global const float *x, const int col, const int rows)
{
  if (col >= 0 && col + 3 < rows) /* the article's bound col < rows - 4 missed col = rows - 4 */
    return vload4(0, x + col);
  float4 v;
  v.s0 = col >= 0 && col < rows ? x[col] : 0.0f;
  v.s1 = col + 1 >= 0 && col + 1 < rows ? x[col + 1] : 0.0f;
  v.s2 = col + 2 >= 0 && col + 2 < rows ? x[col + 2] : 0.0f;
  v.s3 = col + 3 >= 0 && col + 3 < rows ? x[col + 3] : 0.0f;
  return v;
}

/* y[row .. row + 3] = acc, only the rows that exist (the article stored all four). */
inline void y_store(__global float *y, const int row, const int rows, const float4 acc)
{
  if (row + 3 < rows) {
    vstore4(acc, 0, y + row);
  } else {
    y[row] = acc.s0;
    if (row + 1 < rows)
      y[row + 1] = acc.s1;
    if (row + 2 < rows)
      y[row + 2] = acc.s2;
  }
}

/* 4. vector: four rows per work-item, float4 loads of A (16-byte aligned: row is a multiple of 4
 *    and pitch of 32) and of x. */
__kernel void dia_vector(__global const float *A, const int pitch, const int rows, const int ndiag,
                         __global const int *offsets, __global const float *x, __global float *y)
{
  __local int l_off[LOCAL_OFFSETS];
  const int row = get_global_id(0) * 4, lid = get_local_id(0), lsz = get_local_size(0);
  float4 acc = (float4)(0.0f);
  for (int base = 0; base < ndiag; base += LOCAL_OFFSETS) {
    const int count = min(LOCAL_OFFSETS, ndiag - base);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < count; i += lsz)
      l_off[i] = offsets[base + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (row < rows) {
      __global const float *a = A + (size_t)base * pitch + row;
      for (int d = 0; d < count; d++) {
        acc += vload4(0, a) * x_window(x, row + l_off[d], rows);
        a += pitch;
      }
    }
  }
  if (row < rows)
    y_store(y, row, rows, acc);
}

/* x as an image of float4 pixels, 2^log_width pixels wide: element i is component i % 4 of pixel
 * (i / 4) % width, row (i / 4) / width. Reads outside the image (negative columns, past the end)
 * return zero through the clamp-to-border sampler; the last row is zero-padded on the host. */
__constant sampler_t x_sampler =
    CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP | CLK_FILTER_NEAREST;

inline float4 x_texel(read_only image2d_t xi, const int log_width, const int mask, const int p)
{
  return read_imagef(xi, x_sampler, (int2)(p & mask, p >> log_width));
}

/* x[col .. col + 3] from the two texels p = col >> 2 and p + 1: the four alignment cases. */
inline float4 x_align(const float4 v0, const float4 v1, const int align)
{
  if (align == 0)
    return v0;
  if (align == 1)
    return (float4)(v0.s123, v1.s0);
  if (align == 2)
    return (float4)(v0.s23, v1.s01);
  return (float4)(v0.s3, v1.s012);
}

/* 5. image: like vector, with x read through the texture cache (4 bytes per 2 flops once x is
 *    cached). The image is passed by value (the article passed a pointer). A work-item keeps the
 *    last two texels it fetched, t0 = pixel tp and t1 = pixel tp + 1, and fetches only what the
 *    next diagonal adds: the disc's diagonals come in runs of consecutive offsets (dx = -5..5 for
 *    each dy), so a run of 11 costs 4 or 5 fetches instead of 19. row is a multiple of 4, so
 *    p - tp and align = offset & 3 are the same for all work-items of a diagonal: neither the
 *    reuse nor the four alignment cases diverge. */
__kernel void dia_image(__global const float *A, const int pitch, const int rows, const int ndiag,
                        __global const int *offsets, read_only image2d_t xi, const int log_width,
                        const int width_mask, __global float *y)
{
  __local int l_off[LOCAL_OFFSETS];
  const int row = get_global_id(0) * 4, lid = get_local_id(0), lsz = get_local_size(0);
  float4 acc = (float4)(0.0f), t0 = (float4)(0.0f), t1 = (float4)(0.0f);
  int tp = INT_MIN; /* no texel held: (row + offset) >> 2 > INT_MIN + 1 for every offset */
  for (int base = 0; base < ndiag; base += LOCAL_OFFSETS) {
    const int count = min(LOCAL_OFFSETS, ndiag - base);
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int i = lid; i < count; i += lsz)
      l_off[i] = offsets[base + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (row < rows) {
      __global const float *a = A + (size_t)base * pitch + row;
      for (int d = 0; d < count; d++) {
        const int col = row + l_off[d], p = col >> 2; /* arithmetic shift: floor(col / 4) */
        if (p == tp + 1) {
          t0 = t1;
          t1 = x_texel(xi, log_width, width_mask, p + 1);
        } else if (p != tp) {
          t0 = x_texel(xi, log_width, width_mask, p);
          t1 = x_texel(xi, log_width, width_mask, p + 1);
        }
        tp = p;
        acc += vload4(0, a) * x_align(t0, t1, col & 3); /* col & 3 also for negative col */
        a += pitch;
      }
    }
  }
  if (row < rows)
    y_store(y, row, rows, acc);
}

/* Copy bandwidth, the bound of the products above: dst = src over n4 float4s. */
__kernel void copy_float4(__global const float4 *src, __global float4 *dst, const int n4)
{
  const int i = get_global_id(0);
  if (i < n4)
    dst[i] = src[i];
}
