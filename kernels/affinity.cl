/* The affinity on the device (spmv/opencl/cl_image.c): W over the disc with the intervening-
 * contour term, D = row sums, N = D^-1/2 W D^-1/2 in DIA form (values[d * pitch + i]). The C
 * reference is app_affinity_build (app/lib/affinity.c); spmv/spmv_image.h has the formulas.
 *
 * affinity_weights: one work-item per pixel i, its row: for each disc offset k whose pixel j is
 * inside the image, w = exp(-|F_i - F_j|^2 / sigma_i^2 - ic / sigma_c) * spatial[k], ic the
 * largest contour strength on offset k's line. The exponent is carried in two floats (hi + lo,
 * error-free sums and products with fma), so that w is as accurate as float exp whatever the
 * exponent's size; inv_si2 and inv_sc are 1 / sigma_i^2 and 1 / sigma_c as two floats each
 * (x + y). The row sum is a compensated float sum. The tables (disc, lines) are the same for
 * every work-item at the same time: their loads are broadcasts. The entries that no offset
 * writes stay zero (the host zero-fills).
 *
 * affinity_normalise: N_ij = W_ij (1 / (s_i s_j)), s = D^1/2: the product s_i s_j is the same for
 * (i, j) and (j, i), so N stays exactly symmetric; `linked` is set when an off-diagonal entry is
 * above 1e-7 (APP_COMPONENT_THRESHOLD). */

/* disc[k] = (dx, dy, diagonal or -1, the first point of its line); disc[ndisc].w ends the last
 * line. line[t]: the line's points as pixel offsets y * w + x from i. */
__kernel void affinity_weights(const int w, const int h, __global const float *f, const int nfeat,
                               __global const float *contours, const int use_contours,
                               const float2 inv_si2, const float2 inv_sc, const int ndisc,
                               __global const int4 *disc, __global const float *spatial,
                               __global const int *line, __global float *values, const int pitch,
                               __global float *sdeg)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int x = i % w, y = i / w;
  __global const float *fi = f + (size_t)i * nfeat;
  float sum = 0.0f, lost = 0.0f; /* Kahan: lost is what the last addition dropped */
  for (int k = 0; k < ndisc; k++) {
    const int4 e = disc[k];
    const int xj = x + e.x, yj = y + e.y;
    if (e.z < 0 || xj < 0 || xj >= w || yj < 0 || yj >= h)
      continue;
    __global const float *fj = f + ((size_t)yj * w + xj) * nfeat;
    /* the exponent E = -|F_i - F_j|^2 / sigma_i^2 - ic / sigma_c as hi + lo (two floats): a
     * float E alone would be off by |E| ulps, 1e-5 of w at E = -60 */
    float hi = 0.0f, lo = 0.0f;
    for (int c = 0; c < nfeat; c++) {
      const float a = fi[c], b = fj[c];
      const float d = a - b, db = d - a, de = (a - (d - db)) - (b + db);    /* a - b = d + de */
      const float p = d * d, pe = fma(d, d, -p);                            /* d^2 = p + pe */
      const float t = hi + p, tb = t - hi, te = (hi - (t - tb)) + (p - tb); /* hi + p = t + te */
      hi = t;
      lo += te + pe + 2.0f * d * de;
    }
    /* times 1 / sigma_i^2 = inv_si2.x + inv_si2.y */
    float eh = hi * inv_si2.x;
    float el = fma(hi, inv_si2.x, -eh) + hi * inv_si2.y + lo * inv_si2.x;
    if (use_contours) {
      float ic = 0.0f;
      const int end = disc[k + 1].w;
      for (int t = e.w; t < end; t++)
        ic = fmax(ic, contours[i + line[t]]);
      const float ch = ic * inv_sc.x, cl = fma(ic, inv_sc.x, -ch) + ic * inv_sc.y;
      const float t = eh + ch, tb = t - eh, te = (eh - (t - tb)) + (ch - tb);
      eh = t;
      el += te + cl;
    }
    /* exp(-(eh + el)) = exp(-eh) (1 - el), el being below an ulp of eh; past 110 exp is 0 in
     * float (and an infinite eh would make el NaN) */
    const float wt = eh < 110.0f ? exp(-eh) * (1.0f - el) * spatial[k] : 0.0f;
    values[(size_t)e.z * pitch + i] = wt;
    const float yk = wt - lost, s = sum + yk;
    lost = (s - sum) - yk;
    sum = s;
  }
  sdeg[i] = sqrt(sum);
}

/* Work-items: rows rounded up to whole groups; every one reaches the barriers. */
__kernel void affinity_normalise(const int n, const int ndiag, __global const int *offsets,
                                 __global float *values, const int pitch,
                                 __global const float *sdeg, __global int *linked)
{
  __local int any;
  const int i = get_global_id(0);
  if (get_local_id(0) == 0)
    any = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  int mine = 0;
  if (i < n) {
    const float si = sdeg[i];
    for (int d = 0; d < ndiag; d++) {
      const int off = offsets[d], j = i + off;
      __global float *a = values + (size_t)d * pitch + i;
      if (j >= 0 && j < n && *a != 0.0f) {
        const float v = *a * (1.0f / (si * sdeg[j]));
        *a = v;
        mine |= off != 0 && v > 1e-7f;
      }
    }
  }
  if (mine)
    atomic_or(&any, 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0 && any)
    atomic_or(linked, 1);
}

/* affinity_links: the link masks of N above `threshold` (spmv_links; C reference spmv_dia_links in
 * spmv/dia.c): one work-item per 32-row word of one pair of mirrored diagonals (upper[k]: entry
 * (r, r + offsets[k]), lower[k]: entry (r + offsets[k], r); -1: not stored), bit t of the word
 * set when either entry of row r = 32 word + t is above threshold in magnitude. */
__kernel void affinity_links(const int rows, const int count, __global const int *offsets,
                             __global const int *upper, __global const int *lower,
                             __global const float *values, const int pitch, const float threshold,
                             const int words, __global uint *bits)
{
  const int g = get_global_id(0);
  if (g >= count * words)
    return;
  const int k = g / words, w = g % words, off = offsets[k], up = upper[k], lo = lower[k];
  uint word = 0;
  for (int t = 0; t < 32; t++) {
    const int r = w * 32 + t;
    if (r >= rows - off)
      break;
    const int set = (up >= 0 && fabs(values[(size_t)up * pitch + r]) > threshold) ||
                    (lo >= 0 && fabs(values[(size_t)lo * pitch + r + off]) > threshold);
    word |= (uint)set << t;
  }
  bits[g] = word;
}
