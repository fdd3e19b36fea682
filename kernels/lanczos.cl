/* Vector operations of the device-resident Lanczos solver (spmv/opencl/cl_basis.c), the OpenCL
 * twin of spmv/cpu/basis_cpu.c (the C reference). The basis V is column-major: column i starts at
 * i * ld.
 *
 * Reductions accumulate in double. A kernel that reduces leaves one partial sum per work-group
 * and entry in `part`, entry-major (entry e of group g at part[e * groups + g]); the kernel that
 * needs the sums adds them itself, in every one of its work-groups and in the same fixed order
 * (lanes over the partials, then a tree in local memory whose stride halves from the top, without
 * bank conflicts: NVIDIA's "OpenCL Programming for the CUDA Architecture", listing 6). That costs
 * each group a few thousand loads from cache and saves a launch per reduction, and the results
 * do not depend on scheduling.
 *
 * The row-parallel kernels take four rows at a time with float4 loads: w and every column of
 * the basis are zero from row n up to the next multiple of 4 (and columns start at multiples of
 * 4 floats), so the last block of four needs no special case.
 *
 * -D options: LOCAL (work-group size, a power of two), TILE (basis columns per group of V^T w),
 * HMAX (entries a group sums into local memory at a time). */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef LOCAL
#define LOCAL 256
#endif
#ifndef TILE
#define TILE 8
#endif
#ifndef HMAX
#define HMAX 256
#endif

/* Tree sum of s[0..LOCAL) for `tiles` interleaved values: s[t * LOCAL + lid]. */
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

/* sums[e] = sum over p < P of part[(e0 + e) * P + p], for e < count (count <= HMAX), the same
 * in every work-group: L lanes per entry (a power of two, L * entries <= LOCAL) take the partials
 * lane, lane + L, ... in order, then a tree adds the lanes. Ends with a barrier. */
inline void sum_partials(__global const double *part, const int P, const int e0, const int count,
                         __local double *s, __local double *sums, const int lid)
{
  for (int c = 0; c < count; c += LOCAL) {
    const int entries = min(count - c, LOCAL);
    int L = LOCAL;
    while (L > 1 && L * entries > LOCAL)
      L >>= 1;
    const int e = lid / L, lane = lid % L;
    double sum = 0.0;
    if (e < entries)
      for (int p = lane; p < P; p += L)
        sum += part[(size_t)(e0 + c + e) * P + p];
    s[lid] = sum;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int stride = L / 2; stride > 0; stride >>= 1) {
      if (lane < stride && e < entries)
        s[lid] += s[lid + stride];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lane == 0 && e < entries)
      sums[c + e] = s[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* V^T w and w . w, as partial sums. Column nc stands for w itself (w . w, for the DGKS test), so
 * there are tiles = ceil((nc + 1) / TILE) column tiles; work-group q takes tile q % tiles over
 * the blocks of four rows g * LOCAL + lid + k * groups * LOCAL of row group g = q / tiles
 * (groups = the number of work-groups / tiles) and writes part[i * groups + g] for its columns
 * i. Four rows at a time, float4 loads: a work-item keeps 16 bytes of each column in flight (the
 * columns and w are zero past row n, up to a multiple of 4). The groups of one row group are
 * neighbours in the launch, so they read the same w about together: w comes from memory once, V
 * once (V^T w with several work-items per row block, as in E. Bainville's gemv). In pass 2
 * nothing is done unless pass 1's DGKS test asked for it (*flag). */
__kernel void lz_gemvt(__global const float *V, const int ld, const int n, const int nc,
                       __global const float *w, __global double *part, const int pass,
                       __global const int *flag)
{
  __local double s[TILE * LOCAL];
  const int lid = get_local_id(0), tiles = (nc + TILE) / TILE, q = get_group_id(0);
  const int g = q / tiles, groups = get_num_groups(0) / tiles, i0 = (q % tiles) * TILE;
  const int cols = min(TILE, nc + 1 - i0), n4 = (n + 3) / 4;
  double acc[TILE];
  if (pass == 2 && *flag == 0)
    return;
  for (int t = 0; t < TILE; t++)
    acc[t] = 0.0;
  for (int r4 = g * LOCAL + lid; r4 < n4; r4 += groups * LOCAL) {
    const double4 wr = convert_double4(vload4(r4, w));
    for (int t = 0; t < TILE; t++)
      if (t < cols)
        acc[t] +=
            dot(i0 + t < nc ? convert_double4(vload4(r4, V + (size_t)(i0 + t) * ld)) : wr, wr);
  }
  for (int t = 0; t < TILE; t++)
    s[t * LOCAL + lid] = acc[t];
  tree_sum(s, lid, cols);
  if (lid < cols)
    part[(size_t)(i0 + lid) * groups + g] = s[lid * LOCAL];
}

/* w -= V[:, 0..nc) h, where h (and w . w at entry nc) is the sum of lz_gemvt's P partials per
 * entry, added by every group, HMAX entries at a time. Four rows (float4) and four columns at a
 * time with independent sums, so that each work-item has 64 bytes of V in flight. Work-group 0 also
 * logs h (coef[coef_off + i]: mode 1 sets, mode 2 adds, 0 leaves the log alone) and, in pass 1,
 * makes the DGKS test: a second pass is needed when |w - V h|^2 = w.w - |h|^2 < w.w / 2, which
 * *flag tells pass 2's kernels (flag[1] counts them). With `fused`, also wpart[g] = this group's
 * sum of the updated w^2 (pass 1 writes it; pass 2, if it runs, overwrites it). */
__kernel void lz_gemvn(__global const float *V, const int ld, const int n, const int nc,
                       __global const double *part, const int P, __global float *w,
                       __global double *coef, const int coef_off, const int mode, const int fused,
                       __global double *wpart, const int pass, __global int *flag)
{
  __local double s[LOCAL];
  __local double h[HMAX];
  const int lid = get_local_id(0), g = get_group_id(0), lead = g == 0 && lid == 0;
  const int n4 = (n + 3) / 4;
  double hh = 0.0, ww = 0.0, ss = 0.0;
  if (pass == 2 && *flag == 0)
    return;
  for (int c0 = 0; c0 <= nc; c0 += HMAX) { /* entries c0 .. c0 + count - 1 of h, w.w */
    const int count = min(HMAX, nc + 1 - c0), cols = min(count, nc - c0);
    sum_partials(part, P, c0, count, s, h, lid);
    if (g == 0 && mode != 0)
      for (int i = lid; i < cols; i += LOCAL)
        coef[coef_off + c0 + i] = (mode == 1 ? 0.0 : coef[coef_off + c0 + i]) + h[i];
    if (lead) {
      for (int i = 0; i < cols; i++)
        hh += h[i] * h[i];
      if (cols < count)
        ww = h[cols];
    }
    ss = 0.0;
    for (int r4 = get_global_id(0); r4 < n4; r4 += get_global_size(0)) {
      __global const float *v = V + (size_t)c0 * ld;
      double4 a0 = convert_double4(vload4(r4, w)), a1 = (double4)(0.0), a2 = a1, a3 = a1;
      int i = 0;
      for (; i + 4 <= cols; i += 4) {
        const float4 v0 = vload4(r4, v + (size_t)i * ld), v1 = vload4(r4, v + (size_t)(i + 1) * ld);
        const float4 v2 = vload4(r4, v + (size_t)(i + 2) * ld);
        const float4 v3 = vload4(r4, v + (size_t)(i + 3) * ld);
        a0 -= convert_double4(v0) * h[i];
        a1 -= convert_double4(v1) * h[i + 1];
        a2 -= convert_double4(v2) * h[i + 2];
        a3 -= convert_double4(v3) * h[i + 3];
      }
      for (; i < cols; i++)
        a0 -= convert_double4(vload4(r4, v + (size_t)i * ld)) * h[i];
      const float4 f = convert_float4((a0 + a1) + (a2 + a3));
      vstore4(f, r4, w);
      ss += dot(convert_double4(f), convert_double4(f));
    }
  }
  if (pass == 1 && lead) {
    flag[0] = ww - hh < 0.5 * ww;
    flag[1] += flag[0]; /* second passes so far */
  }
  if (fused) {
    s[lid] = ss;
    tree_sum(s, lid, 1);
    if (lid == 0)
      wpart[g] = s[0];
  }
}

/* wpart[g] = sum over this group's rows of w^2 (the unfused norm). */
__kernel void lz_norm2(__global const float *w, const int n, __global double *wpart)
{
  __local double s[LOCAL];
  const int lid = get_local_id(0), n4 = (n + 3) / 4;
  double ss = 0.0;
  for (int r4 = get_global_id(0); r4 < n4; r4 += get_global_size(0)) {
    const double4 f = convert_double4(vload4(r4, w));
    ss += dot(f, f);
  }
  s[lid] = ss;
  tree_sum(s, lid, 1);
  if (lid == 0)
    wpart[get_group_id(0)] = s[0];
}

/* beta = |w|, the square root of the sum of the P partials of w^2 (every group adds them the
 * same way), logged by group 0 at coef[coef_off]; dst = w * (float)(1 / beta), or 0 when beta is 0
 * (an exhausted Krylov space: the host sees beta = 0 and stops). */
__kernel void lz_scale(__global const float *w, const int n, __global const double *wpart,
                       const int P, __global double *coef, const int coef_off, __global float *dst)
{
  __local double s[LOCAL];
  __local double sum[1];
  const int lid = get_local_id(0);
  sum_partials(wpart, P, 0, 1, s, sum, lid);
  const double beta = sqrt(sum[0]);
  const float f = beta > 0.0 ? (float)(1.0 / beta) : 0.0f;
  if (get_group_id(0) == 0 && lid == 0)
    coef[coef_off] = beta;
  for (int r4 = get_global_id(0); r4 < (n + 3) / 4; r4 += get_global_size(0))
    vstore4(vload4(r4, w) * f, r4, dst);
}

/* Known vectors with disjoint supports: part[c * groups + g] = sum over this group's rows with
 * label c of value * w, for c in [c0, c0 + TILE). */
__kernel void lz_known_dot(__global const int *label, __global const float *value, const int n,
                           const int nk, const int c0, __global const float *w,
                           __global double *part)
{
  __local double s[TILE * LOCAL];
  const int lid = get_local_id(0), g = get_group_id(0), tiles = min(TILE, nk - c0);
  double acc[TILE];
  for (int t = 0; t < TILE; t++)
    acc[t] = 0.0;
  for (int r = get_global_id(0); r < n; r += get_global_size(0)) {
    const int t = label[r] - c0;
    if (t >= 0 && t < TILE)
      for (int q = 0; q < TILE; q++) /* select without a private-array index */
        acc[q] += q == t ? (double)value[r] * w[r] : 0.0;
  }
  for (int t = 0; t < TILE; t++)
    s[t * LOCAL + lid] = acc[t];
  tree_sum(s, lid, tiles);
  if (lid < tiles)
    part[(size_t)(c0 + lid) * get_num_groups(0) + g] = s[lid * LOCAL];
}

/* w -= dots[label] * value where a row belongs to a known vector; dots[c] is the sum of
 * lz_known_dot's P partials for vector c, added by every group, HMAX vectors at a time. */
__kernel void lz_known_apply(__global const int *label, __global const float *value, const int n,
                             const int nk, __global const double *part, const int P,
                             __global float *w)
{
  __local double s[LOCAL];
  __local double dots[HMAX];
  const int lid = get_local_id(0);
  for (int c0 = 0; c0 < nk; c0 += HMAX) {
    const int count = min(HMAX, nk - c0);
    sum_partials(part, P, c0, count, s, dots, lid);
    for (int r = get_global_id(0); r < n; r += get_global_size(0)) {
      const int c = label[r] - c0;
      if (c >= 0 && c < count)
        w[r] = (float)((double)w[r] - dots[c] * value[r]);
    }
  }
}

/* out[:, c] = V[:, 0..mcur) Y[:, c] for c < k: the restart product and the Ritz vectors. */
__kernel void lz_rotate(__global const float *V, const int ld, const int n, const int mcur,
                        __global const double *Y, const int ldy, const int k, __global float *out,
                        const int ldo)
{
  for (int r = get_global_id(0); r < n; r += get_global_size(0))
    for (int c = 0; c < k; c++) {
      double acc = 0.0;
      for (int i = 0; i < mcur; i++)
        acc += (double)V[(size_t)i * ld + r] * Y[i + c * ldy];
      out[(size_t)c * ldo + r] = (float)acc;
    }
}
