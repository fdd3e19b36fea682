/* The boundary detector on the device (spmv/opencl/cl_image.c): oriented histogram gradients,
 * their combination and non-maximum suppression. The C references are app_contour_gradients,
 * app_contour_combine and app_contour_thin (app/lib/contours.c); spmv/spmv_image.h has the
 * formulas and the layouts.
 *
 * contour_gradients: one work-item per pixel, one launch per channel. Each work-item keeps its
 * 2 NORIENT sector histograms of MAX_BINS bins in local memory as HIST_T counters (uchar when the
 * host has checked that no sector holds more than 255 offsets, else ushort), grows them scale by
 * scale over the disc's offsets (nearest first), and after each scale computes the 8 half-disc
 * chi-squared values from them in registers: T (the disc) and g (sectors 0 .. NORIENT - 1) are
 * sums of sector rows, and turning the half-disc by one sector adds a row and takes one away.
 * The local array is laid out counter-major, LANES work-items per 32-bit word column, so that
 * the work-items of a warp that touch different counters fall in different banks but for pairs
 * (at most 2-way conflicts for uchar and WG 64; none for ushort and WG 32).
 * The disc table and the smoothing taps sit in constant memory: every work-item reads the same
 * entry at the same time.
 *
 * -D options (all set by the host): WG (work-group size), HIST_T and PER_WORD (counters per
 * 32-bit word: 4 for uchar, 2 for ushort), MAX_BINS, NORIENT, SMOOTH_MAX (the largest smoothing
 * radius; the taps are zero-padded to 2 SMOOTH_MAX + 1).
 */
#ifndef WG
#define WG 64
#endif
#ifndef HIST_T
#define HIST_T uchar
#define PER_WORD 4
#endif
#ifndef MAX_BINS
#define MAX_BINS 32
#endif
#ifndef NORIENT
#define NORIENT 8
#endif
#ifndef SMOOTH_MAX
#define SMOOTH_MAX 8
#endif

#define NSECT (2 * NORIENT)
#define LANES (WG / PER_WORD)
#define NTAPS (2 * SMOOTH_MAX + 1)

/* i reflected into [0, n): ..., 1, 0 | 0, 1, ..., n-1 | n-1, n-2, ... (app/lib/contours.c) */
inline int reflect(int i, const int n)
{
  const int period = 2 * n;
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - 1 - i;
}

/* The channels' bins padded by reflection: pad[c * pw * ph + py * pw + px], pw = w + 2 R.
 * Work-items: (pw * ph rounded up, nchannels). */
__kernel void contour_pad(__global const uchar *bins, const int w, const int h, const int R,
                          __global uchar *pad)
{
  const int pw = w + 2 * R, ph = h + 2 * R, c = get_global_id(1);
  const int idx = get_global_id(0);
  if (idx >= pw * ph)
    return;
  const int px = idx % pw, py = idx / pw;
  pad[(size_t)c * pw * ph + idx] =
      bins[(size_t)c * w * h + (size_t)reflect(py - R, h) * w + reflect(px - R, w)];
}

/* The gradients of channel c: grad[((part0 + s) * NORIENT + o) * n + i] for its scales s.
 * pad: the padded bins (contour_pad), plane = pw * ph bytes per channel; disc[k] = (dy * pw + dx,
 * sector * MAX_BINS * WG); count[c * nscales + s]: the offsets of scale s; taps[c * NTAPS +
 * SMOOTH_MAX + t]: the bin smoothing's tap t, zero beyond the channel's radius (not read when
 * smooth is 0). Adding the zero taps and the bins from nb to MAX_BINS (all counts zero) changes
 * no sum, so the results are the C reference's sums in its order. */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void
contour_gradients(__global const uchar *pad, const int pw, const int plane, const int w,
                  const int n, const int R, __constant int2 *disc, __constant int *count,
                  const int nscales, const int c, const int nb, __constant float *taps,
                  const int smooth, const int part0, __global float *grad)
{
  __local HIST_T hist[NSECT * MAX_BINS * WG];
  const int lid = get_local_id(0), i = get_global_id(0);
  if (i >= n)
    return; /* no barriers below: each work-item works on its own counters only */
  __local HIST_T *hl = hist + (lid % LANES) * PER_WORD + lid / LANES;
  for (int r = 0; r < NSECT * MAX_BINS; r++)
    hl[r * WG] = 0;

  float k[NTAPS];
#pragma unroll
  for (int t = 0; t < NTAPS; t++)
    k[t] = taps[c * NTAPS + t];

  const int x = i % w, y = i / w;
  __global const uchar *centre = pad + (size_t)c * plane + (size_t)(y + R) * pw + (x + R);
  int j = 0;
  for (int s = 0; s < nscales; s++) {
    const int end = count[c * nscales + s];
    for (; j < end; j++) {
      const int2 e = disc[j];
      hl[e.y + (int)centre[e.x] * WG]++;
    }

    /* tf: the disc's histogram (smoothed); g: the half-disc of sectors 0 .. NORIENT - 1 */
    float tf[MAX_BINS], g[MAX_BINS], inv[MAX_BINS];
#pragma unroll
    for (int b = 0; b < MAX_BINS; b++) {
      int t = 0, h0 = 0;
      for (int q = 0; q < NSECT; q++) {
        const int v = hl[(q * MAX_BINS + b) * WG];
        t += v;
        h0 += q < NORIENT ? v : 0;
      }
      tf[b] = (float)t;
      g[b] = (float)h0;
    }
    if (smooth) {
      float ts[MAX_BINS];
#pragma unroll
      for (int b = 0; b < MAX_BINS; b++) {
        float acc = 0.0f;
#pragma unroll
        for (int t = -SMOOTH_MAX; t <= SMOOTH_MAX; t++)
          if (b + t >= 0 && b + t < MAX_BINS)
            acc += k[t + SMOOTH_MAX] * tf[b + t];
        ts[b] = acc;
      }
#pragma unroll
      for (int b = 0; b < MAX_BINS; b++)
        tf[b] = ts[b];
    }
#pragma unroll
    for (int b = 0; b < MAX_BINS; b++)
      inv[b] = b < nb && tf[b] > 1e-6f ? 1.0f / tf[b] : 0.0f;

    const float scale = 0.5f / (float)(end / 2);
    __global float *out = grad + (size_t)(part0 + s) * NORIENT * n + i;
    for (int o = 0; o < NORIENT; o++) {
      float acc = 0.0f;
      if (smooth) {
#pragma unroll
        for (int b = 0; b < MAX_BINS; b++) {
          float gs = 0.0f;
#pragma unroll
          for (int t = -SMOOTH_MAX; t <= SMOOTH_MAX; t++)
            if (b + t >= 0 && b + t < MAX_BINS)
              gs += k[t + SMOOTH_MAX] * g[b + t];
          const float d = 2.0f * gs - tf[b];
          acc += d * d * inv[b];
        }
      } else {
#pragma unroll
        for (int b = 0; b < MAX_BINS; b++) {
          const float d = 2.0f * g[b] - tf[b];
          acc += d * d * inv[b];
        }
      }
      out[(size_t)o * n] = acc * scale;
      /* turn the half-disc by one sector: sector o + NORIENT comes in, sector o goes out */
#pragma unroll
      for (int b = 0; b < MAX_BINS; b++)
        g[b] += (float)hl[((o + NORIENT) * MAX_BINS + b) * WG] - (float)hl[(o * MAX_BINS + b) * WG];
    }
  }
}

/* The combination: z(o) = sum_p weight[p] grad_p(o); v(o) = (logistic(bias + z) - s0) / (1 - s0);
 * strength = max_o v (the first o that reaches it into orientation); parts[p] = max(0, max_o
 * grad_p(o)). parts may be unused (want_parts 0). */
__kernel void contour_combine(__global const float *grad, const int n, const int nparts,
                              __constant float *weight, const float bias, const float s0,
                              __global float *strength, __global uchar *orientation,
                              const int want_parts, __global float *parts)
{
  const int i = get_global_id(0);
  if (i >= n)
    return;
  float best = -1.0f;
  int arg = 0;
  for (int o = 0; o < NORIENT; o++) {
    float z = 0.0f;
    for (int p = 0; p < nparts; p++)
      z += weight[p] * grad[((size_t)p * NORIENT + o) * n + i];
    const float v = (1.0f / (1.0f + exp(-(bias + z))) - s0) / (1.0f - s0);
    if (v > best) {
      best = v;
      arg = o;
    }
  }
  strength[i] = best;
  orientation[i] = (uchar)arg;
  if (want_parts)
    for (int p = 0; p < nparts; p++) {
      float m = 0.0f;
      for (int o = 0; o < NORIENT; o++)
        m = fmax(m, grad[((size_t)p * NORIENT + o) * n + i]);
      parts[(size_t)p * n + i] = m;
    }
}

/* m at (x + ix + fx, y + iy + fy), fx, fy in [0, 1), bilinear, the coordinates clamped to the
 * image first (app/lib/contours.c's bilinear). */
inline float bilinear(__global const float *m, const int w, const int h, int x, int y, float fx,
                      float fy)
{
  if (x < 0) {
    x = 0;
    fx = 0.0f;
  } else if (x >= w - 1) {
    x = w - 1;
    fx = 0.0f;
  }
  if (y < 0) {
    y = 0;
    fy = 0.0f;
  } else if (y >= h - 1) {
    y = h - 1;
    fy = 0.0f;
  }
  const int x1 = x + 1 < w ? x + 1 : x, y1 = y + 1 < h ? y + 1 : y;
  return (1.0f - fy) * ((1.0f - fx) * m[y * w + x] + fx * m[y * w + x1]) +
         fy * ((1.0f - fx) * m[y1 * w + x] + fx * m[y1 * w + x1]);
}

/* Non-maximum suppression: m[i] stays where it is above the sample one pixel along the normal of
 * its orientation and not below the one on the other side. normal[o] = (ix, iy, fx, fy) of the
 * + side and normal[NORIENT + o] of the - side: the offset's floor and fraction. */
__kernel void contour_thin(__global const float *m, __global const uchar *orientation, const int w,
                           const int h, __constant float4 *normal, __global float *out)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int x = i % w, y = i / w, o = orientation[i];
  const float4 p = normal[o], q = normal[NORIENT + o];
  const float a = bilinear(m, w, h, x + (int)p.x, y + (int)p.y, p.z, p.w);
  const float b = bilinear(m, w, h, x + (int)q.x, y + (int)q.y, q.z, q.w);
  out[i] = m[i] > a && m[i] >= b ? m[i] : 0.0f;
}
