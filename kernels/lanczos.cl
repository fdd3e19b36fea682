/* Vector operations of the device-resident Lanczos solver (spmv/basis_cl.c), the OpenCL twin of
 * spmv/basis_cpu.c (the C reference). The basis V is column-major: column i starts at i * ld.
 * Reductions accumulate in double and finish with a tree in local memory without bank
 * conflicts (the stride halves from the top, NVIDIA's "OpenCL Programming for the CUDA
 * Architecture", listing 6); a one-group kernel adds the per-group partials in a fixed order,
 * so results do not depend on scheduling.
 *
 * -D options: LOCAL (work-group size, a power of two), TILE (basis columns per pass of V^T w). */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

#ifndef LOCAL
#define LOCAL 256
#endif
#ifndef TILE
#define TILE 8
#endif

/* Tree sum of s[0..LOCAL) for TILE interleaved values: s[t * LOCAL + lid]. */
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

/* part[g * (nc + 1) + i] = sum over this group's rows of V[:, i] . w for i < nc, and w . w at
 * i = nc (for the DGKS test). Columns go TILE at a time, so w is read ceil(nc / TILE) times and V
 * once (V^T w with several work-items per row block, as in E. Bainville's gemv; the partials are
 * added by lz_reduce). In the second Gram-Schmidt pass (pass 2) nothing is done unless the DGKS
 * test of the first pass asked for it (*flag). */
__kernel void lz_gemvt(__global const float *V, const int ld, const int n, const int nc,
                       __global const float *w, __global double *part, const int pass,
                       __global const int *flag)
{
  __local double s[TILE * LOCAL];
  const int lid = get_local_id(0), g = get_group_id(0);
  if (pass == 2 && *flag == 0)
    return;
  for (int i0 = 0; i0 <= nc; i0 += TILE) { /* i = nc: w itself */
    const int tiles = min(TILE, nc + 1 - i0);
    double acc[TILE];
    for (int t = 0; t < TILE; t++)
      acc[t] = 0.0;
    for (int r = get_global_id(0); r < n; r += get_global_size(0)) {
      const double wr = w[r];
      for (int t = 0; t < tiles; t++) {
        const int i = i0 + t;
        acc[t] += (i < nc ? (double)V[(size_t)i * ld + r] : wr) * wr;
      }
    }
    for (int t = 0; t < TILE; t++)
      s[t * LOCAL + lid] = acc[t];
    tree_sum(s, lid, tiles);
    if (lid < tiles)
      part[(size_t)g * (nc + 1) + i0 + lid] = s[lid * LOCAL];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

/* One group: out[i] = sum over groups of part[g * stride + i], every work-item taking the
 * groups lid, lid + LOCAL, ... in order before a tree sum (a fixed order: deterministic).
 * mode 1 also sets, mode 2 adds it to coef[coef_off + i] (the coefficient log of the current
 * step); mode 0 leaves the log alone. pass 0: plain sums (stride nc). Gram-Schmidt passes 1 and
 * 2 (stride nc + 1, the last entry w . w): pass 1 sets *flag to the DGKS test, a second pass is
 * needed when |w - V h|^2 = w.w - |h|^2 < w.w / 2; pass 2 does nothing unless *flag. */
__kernel void lz_reduce(__global const double *part, const int groups, const int nc,
                        __global double *out, __global double *coef, const int coef_off,
                        const int mode, const int pass, __global int *flag)
{
  __local double s[LOCAL];
  const int lid = get_local_id(0), stride = pass ? nc + 1 : nc;
  double hh = 0.0;
  if (pass == 2 && *flag == 0)
    return;
  for (int i = 0; i < stride; i++) {
    double sum = 0.0;
    for (int g = lid; g < groups; g += LOCAL)
      sum += part[(size_t)g * stride + i];
    s[lid] = sum;
    tree_sum(s, lid, 1);
    if (lid == 0) {
      if (i < nc) {
        out[i] = s[0];
        hh += s[0] * s[0];
        if (mode == 1)
          coef[coef_off + i] = s[0];
        else if (mode == 2)
          coef[coef_off + i] += s[0];
      } else if (pass == 1) {
        flag[0] = s[0] - hh < 0.5 * s[0];
        flag[1] += flag[0]; /* second passes so far */
      }
    }
  }
}

/* w -= V[:, 0..nc) h. With fused norm, also part[g] = sum of the updated w^2 over this group
 * (pass 1 writes it; pass 2, if the DGKS test asked for it, overwrites it). */
__kernel void lz_gemvn(__global const float *V, const int ld, const int n, const int nc,
                       __global const double *h, __global float *w, const int fused,
                       __global double *part, const int pass, __global const int *flag)
{
  __local double hl[64];
  __local double s[LOCAL];
  const int lid = get_local_id(0);
  if (pass == 2 && *flag == 0)
    return;
  for (int i = lid; i < nc && i < 64; i += get_local_size(0))
    hl[i] = h[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  double ss = 0.0;
  for (int r = get_global_id(0); r < n; r += get_global_size(0)) {
    double acc = w[r];
    for (int i = 0; i < nc; i++)
      acc -= (double)V[(size_t)i * ld + r] * (nc <= 64 ? hl[i] : h[i]);
    const float f = (float)acc;
    w[r] = f;
    ss += (double)f * f;
  }
  if (fused) {
    s[lid] = ss;
    tree_sum(s, lid, 1);
    if (lid == 0)
      part[get_group_id(0)] = s[0];
  }
}

/* part[g] = sum over this group's rows of w^2 (the unfused norm). */
__kernel void lz_norm2(__global const float *w, const int n, __global double *part)
{
  __local double s[LOCAL];
  const int lid = get_local_id(0);
  double ss = 0.0;
  for (int r = get_global_id(0); r < n; r += get_global_size(0))
    ss += (double)w[r] * w[r];
  s[lid] = ss;
  tree_sum(s, lid, 1);
  if (lid == 0)
    part[get_group_id(0)] = s[0];
}

/* One group: beta = sqrt(sum_g part[g]) into coef[coef_off] (the log) and 1 / beta into *inv
 * (0 when beta is 0: an exhausted Krylov space; the host sees beta = 0 and stops). */
__kernel void lz_beta(__global const double *part, const int groups, __global double *coef,
                      const int coef_off, __global float *inv)
{
  __local double s[LOCAL];
  const int lid = get_local_id(0);
  double sum = 0.0;
  for (int g = lid; g < groups; g += LOCAL)
    sum += part[g];
  s[lid] = sum;
  tree_sum(s, lid, 1);
  if (lid == 0) {
    const double beta = sqrt(s[0]);
    coef[coef_off] = beta;
    *inv = beta > 0.0 ? (float)(1.0 / beta) : 0.0f;
  }
}

/* dst = src * inv[0] */
__kernel void lz_scale(__global const float *src, const int n, __global const float *inv,
                       __global float *dst)
{
  const float f = inv[0];
  for (int r = get_global_id(0); r < n; r += get_global_size(0))
    dst[r] = src[r] * f;
}

/* Known vectors with disjoint supports: part[g * nk + c] = sum over this group's rows with
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
    part[(size_t)g * nk + c0 + lid] = s[lid * LOCAL];
}

/* w -= dots[label] * value where a row belongs to a known vector. */
__kernel void lz_known_apply(__global const int *label, __global const float *value, const int n,
                             __global const double *dots, __global float *w)
{
  for (int r = get_global_id(0); r < n; r += get_global_size(0)) {
    const int c = label[r];
    if (c >= 0)
      w[r] = (float)((double)w[r] - dots[c] * value[r]);
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
