/* The boundary detector on the device (spmv/opencl/cl_image.c): the channels' bins (CIELAB and
 * textons) from the image's pixels, oriented histogram gradients, their combination and
 * non-maximum suppression. The C references are app_contour_bins, app_contour_gradients,
 * app_contour_combine and app_contour_thin (app/lib/contours.c); spmv/spmv_image.h has the
 * formulas and the layouts.
 *
 * The bins: contour_lab (one work-item per pixel: CIELAB in float, the L, a, b bins and the
 * brightness L / 100), texton_rows (the texton filters along the rows of the brightness, one
 * work-item per pixel and 1-D filter) and texton_assign (one work-item per pixel: each response
 * along the columns of its row pass, the contrast normalisation and the nearest centre of the
 * dictionary, which sits in constant memory with the filters' taps). They write the bins where
 * contour_pad reads them, so the host never sees them.
 *
 * contour_gradients: one work-item per pixel, one launch per channel, in a kernel made for the
 * channel's kind (its bins and smoothing radius, -D options, so that the loops run over those
 * only; contour_gradients itself takes any channel). Each work-item keeps its 2 NORIENT sector
 * histograms of nb bins in local memory as counters of 32 / PER_WORD bits
 * packed PER_WORD to a 32-bit word (bytes when the host has checked that no sector holds more
 * than 255 offsets, else 16 bits), grows them scale by scale over the disc's offsets (nearest
 * first), and after each scale computes the NORIENT half-disc chi-squared values from them in
 * registers: T (the disc) and g (sectors 0 .. NORIENT - 1) are sums of sector rows, and turning
 * the half-disc by one sector adds a row and takes one away. The counts are integers until they
 * become the C reference's floats, and the float sums run in its order (bins, taps ascending).
 * Each work-item owns whole words, laid out word-major with the work-items side by side, so a
 * warp's accesses never share a bank. A count goes in with an atomic add although no other
 * work-item touches the word: its result is not waited for, so one work-item's adds follow each
 * other without the stall of a load before each store. Unsmoothed channels take the bins one
 * word at a time, all orientations at once, so only one word per sector lives in registers.
 * The disc table and the smoothing taps sit in constant memory: every work-item reads the same
 * entry at the same time. Each value goes where the host asks: the gradients themselves (all
 * nparts x NORIENT planes, only when the caller wants them), the combination's sums z(o) (each
 * launch adds its parts' weighted values to the NORIENT planes, in the parts' order, so that the
 * float sums are those the combination would make from the gradients), and each part's largest
 * value over the orientations; then contour_combine only takes the logistic and the argmax.
 *
 * gPb, after the solve (the C references app_spectral_gradient, app_contour_gpb): spectral_range
 * (one work-group per eigenvector: its range, hence its scale), then per eigenvector
 * spectral_rows and spectral_columns (the separable Gaussian derivatives, adding its 8 oriented
 * magnitudes to the spectral term in the vectors' order), gpb_combine (the term joins the
 * detector's combination), and contour_thin on the result.
 *
 * -D options (all set by the host): WG (work-group size), PER_WORD (counters per 32-bit word: 4
 * or 2), MAX_BINS, NORIENT, SMOOTH_MAX (the largest smoothing radius; the taps are zero-padded to
 * 2 SMOOTH_MAX + 1), MAX_DIM (texton responses per pixel, at most), and NBk, SRk for each kind
 * k < 8 of channel (contour_gradients_k).
 */
#ifndef WG
#define WG 64
#endif
#ifndef PER_WORD
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
#ifndef MAX_DIM
#define MAX_DIM 16
#endif

#define NSECT (2 * NORIENT)
#define BITS (32 / PER_WORD)
#define MASK ((1u << BITS) - 1u)
#define WPR ((MAX_BINS + PER_WORD - 1) / PER_WORD) /* words per sector row, at most */
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

/* ---- the bins ---- */

/* CIELAB's f (app/lib/contours.c's lab_f) */
inline float lab_f(const float t)
{
  return t > 216.0f / 24389.0f ? cbrt(t) : (24389.0f / 27.0f * t + 16.0f) / 116.0f;
}

/* v's bin of nb over [lo, lo + span], clamped (app/lib/contours.c's bin_of) */
inline uchar bin_of(const float v, const float lo, const float span, const int nb)
{
  const int b = (int)((v - lo) / span * (float)nb);
  return (uchar)(b < 0 ? 0 : b >= nb ? nb - 1 : b);
}

/* CIELAB (D65) of pixel i's bytes (app_rgb_to_lab in float: one or two channels are grey, the
 * fourth is not read), its bins into channels 0, 1, 2 of bins (n bytes each) and the brightness
 * lum[i] = L / 100. linear[v]: byte v's sRGB value on the linear scale. lo and span: the ranges
 * of L, a, b (.s0, .s1, .s2); nb their bins. */
__kernel void contour_lab(__global const uchar *pixels, const int channels, const int n,
                          __constant float *linear, const float4 lo, const float4 span,
                          const int4 nb, __global uchar *bins, __global float *lum)
{
  const int i = get_global_id(0);
  if (i >= n)
    return;
  __global const uchar *p = pixels + (size_t)i * channels;
  const float r = linear[p[0]], g = linear[channels >= 3 ? p[1] : p[0]],
              b = linear[channels >= 3 ? p[2] : p[0]];
  /* sRGB (D65) -> XYZ, normalised by the white point */
  const float x = (0.4124564f * r + 0.3575761f * g + 0.1804375f * b) / 0.95047f;
  const float y = 0.2126729f * r + 0.7151522f * g + 0.0721750f * b;
  const float z = (0.0193339f * r + 0.1191920f * g + 0.9503041f * b) / 1.08883f;
  const float fx = lab_f(x), fy = lab_f(y), fz = lab_f(z);
  const float L = 116.0f * fy - 16.0f, A = 500.0f * (fx - fy), B = 200.0f * (fy - fz);
  bins[i] = bin_of(L, lo.s0, span.s0, nb.s0);
  bins[(size_t)n + i] = bin_of(A, lo.s1, span.s1, nb.s1);
  bins[2 * (size_t)n + i] = bin_of(B, lo.s2, span.s2, nb.s2);
  lum[i] = L / 100.0f;
}

/* The texton filters along the rows (app_conv_sep's first pass, borders reflected):
 * rows[f * n + i] = sum_{t = -r .. r} taps[at + t + r] lum[y w + reflect(x - t)], (at, r) =
 * filter[f]: its first tap and radius. Work-items: (n rounded up, the filters). */
__kernel void texton_rows(__global const float *lum, const int w, const int n,
                          __constant int2 *filter, __constant float *taps, __global float *rows)
{
  const int i = get_global_id(0), f = get_global_id(1);
  if (i >= n)
    return;
  const int x = i % w, row = i - x;
  const int2 k = filter[f];
  __constant float *tap = taps + k.x + k.y;
  float s = 0.0f;
  for (int t = -k.y; t <= k.y; t++)
    s += tap[t] * lum[row + reflect(x - t, w)];
  rows[(size_t)f * n + i] = s;
}

/* Pixel i's texton: response d = scale[d] * (the row pass response[d].x along the columns with
 * the filter of first tap response[d].y and radius response[d].z: app_conv_sep's second pass),
 * contrast-normalised (F <- F log(1 + |F| / contrast) / |F|, app_texton_responses), then the
 * nearest of the ncentres centres (centres[c * dim + d]; squared distances, the first minimum
 * wins) into channel `channel` of bins. */
__kernel void texton_assign(__global const float *rows, const int w, const int h, const int dim,
                            __constant int4 *response, __constant float *taps,
                            __constant float *scale, const float contrast,
                            __constant float *centres, const int ncentres, const int channel,
                            __global uchar *bins)
{
  const int i = get_global_id(0), n = w * h;
  if (i >= n)
    return;
  const int x = i % w, y = i / w;
  /* loops over MAX_DIM, unrolled, so that f stays in registers */
  float f[MAX_DIM], norm = 0.0f;
#pragma unroll
  for (int d = 0; d < MAX_DIM; d++) {
    f[d] = 0.0f;
    if (d < dim) {
      const int4 q = response[d];
      __global const float *plane = rows + (size_t)q.x * n + x;
      __constant float *tap = taps + q.y + q.z;
      float s = 0.0f;
      for (int t = -q.z; t <= q.z; t++)
        s += tap[t] * plane[(size_t)reflect(y - t, h) * w];
      f[d] = scale[d] * s;
      norm += f[d] * f[d];
    }
  }
  norm = sqrt(norm);
  if (norm > 0.0f) {
    const float g = log1p(norm / contrast) / norm;
#pragma unroll
    for (int d = 0; d < MAX_DIM; d++)
      f[d] *= g;
  }
  float best = INFINITY;
  int arg = 0;
  for (int c = 0; c < ncentres; c++) {
    __constant float *centre = centres + c * dim;
    float d2 = 0.0f;
#pragma unroll
    for (int d = 0; d < MAX_DIM; d++)
      if (d < dim) {
        const float e = f[d] - centre[d];
        d2 += e * e;
      }
    if (d2 < best) {
      best = d2;
      arg = c;
    }
  }
  bins[(size_t)channel * n + i] = (uchar)arg;
}

/* ---- the gradients ---- */

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

/* The combination's sum so far at orientation o of pixel i (0 before part 0), read ahead of the
 * value it is added to so that the load's latency hides behind the computation. */
inline float sum_in(const int o, const int n, const int i, const int p, const int want,
                    __global const float *z)
{
  return (want & 2) && p > 0 ? z[(size_t)o * n + i] : 0.0f;
}

/* Part p's value v at orientation o of pixel i where want asks for it (gradients below), zin the
 * sum so far (sum_in); returns the part's largest value so far, peak updated. out: the part's
 * plane of orientation 0 at i. */
inline float put(const float v, const int o, const int n, const int i, const int p, const int want,
                 const float wp, __global float *out, __global float *z, const float zin,
                 const float peak)
{
  if (want & 1)
    out[(size_t)o * n] = v;
  if (want & 2)
    z[(size_t)o * n + i] = p == 0 ? wp * v : zin + wp * v;
  return fmax(peak, v);
}

/* One offset e of the disc: the pixel's bin counted in e's sector (hl: the work-item's counters,
 * wpr words per sector row). */
inline void count_offset(__local uint *hl, __global const uchar *centre, const int2 e,
                         const int wpr)
{
  const uint b = centre[e.x];
  atomic_add(&hl[(e.y * wpr + (int)(b / PER_WORD)) * WG], 1u << (b % PER_WORD * BITS));
}

/* The gradients of channel c at its scales s (part p = part0 + s), value v_p(o): with want & 1,
 * grad[(p * NORIENT + o) * n + i] = v_p(o); with want & 2, z[o * n + i] = weight[0] v_0(o) + ...
 * + weight[p] v_p(o) (part 0 writes it, the others add theirs: the launches run in the parts'
 * order); with want & 4, parts[p * n + i] = max(0, max_o v_p(o)).
 * hist: the work-group's counters, wpr words per sector row; pad: the padded bins (contour_pad),
 * plane = pw * ph bytes per channel; disc[k] = (dy * pw + dx, sector); count[c * nscales + s]:
 * the offsets of scale s; taps[c * NTAPS + SMOOTH_MAX + t]: the bin smoothing's tap t (read for
 * |t| <= sr; sr 0: no smoothing). The loops run over the channel's nb bins and the taps within
 * sr, in the C reference's order; the kernels below call this with nb, sr and wpr constant, so
 * that the compiler drops the bins and taps beyond them. */
inline void gradients(__local uint *hist, const int nb, const int sr, const int wpr,
                      __global const uchar *pad, const int pw, const int plane, const int w,
                      const int n, const int R, __constant int2 *disc, __constant int *count,
                      const int nscales, const int c, __constant float *taps, const int part0,
                      __global float *grad, const int want, __constant float *weight,
                      __global float *z, __global float *parts)
{
  const int lid = get_local_id(0), i = get_global_id(0);
  if (i >= n)
    return; /* no barriers below: each work-item works on its own words only */
  __local uint *hl = hist + lid;
  for (int r = 0; r < NSECT * wpr; r++)
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
    /* fire and forget: the adds need no result, so they need not wait for each other; 8 at a
     * time, unrolled by hand (on this loop, `#pragma unroll 8` is more than PoCL's LLVM can do,
     * and its compiler says so on the program's stderr) */
    for (; j + 8 <= end; j += 8)
#pragma unroll
      for (int u = 0; u < 8; u++)
        count_offset(hl, centre, disc[j + u], wpr);
    for (; j < end; j++)
      count_offset(hl, centre, disc[j], wpr);
    mem_fence(CLK_LOCAL_MEM_FENCE); /* the adds land before this work-item reads its words */

    const int p = part0 + s;
    const float scale = 0.5f / (float)(end / 2), wp = want & 2 ? weight[p] : 0.0f;
    __global float *out = grad + (size_t)p * NORIENT * n + i;
    float peak = 0.0f;
    if (sr == 0) {
      /* bin by bin: the bin's sector counts, its disc count, and its term of every orientation
       * (the sums over the bins in the C reference's order) */
      float acc[NORIENT], zin[NORIENT];
#pragma unroll
      for (int o = 0; o < NORIENT; o++) {
        acc[o] = 0.0f;
        zin[o] = sum_in(o, n, i, p, want, z);
      }
      for (int wd = 0; wd < wpr; wd++) {
        uint v[NSECT];
#pragma unroll
        for (int q = 0; q < NSECT; q++)
          v[q] = hl[(q * wpr + wd) * WG];
#pragma unroll
        for (int kk = 0; kk < PER_WORD; kk++)
          if (wd * PER_WORD + kk < nb) {
            int cnt[NSECT], t = 0, g = 0;
#pragma unroll
            for (int q = 0; q < NSECT; q++) {
              cnt[q] = (int)((v[q] >> (kk * BITS)) & MASK);
              t += cnt[q];
              g += q < NORIENT ? cnt[q] : 0;
            }
            const float tf = (float)t, inv = tf > 1e-6f ? 1.0f / tf : 0.0f;
#pragma unroll
            for (int o = 0; o < NORIENT; o++) {
              const float d = 2.0f * (float)g - tf;
              acc[o] += d * d * inv;
              g += cnt[o + NORIENT] - cnt[o];
            }
          }
      }
#pragma unroll
      for (int o = 0; o < NORIENT; o++)
        peak = put(acc[o] * scale, o, n, i, p, want, wp, out, z, zin[o], peak);
      if (want & 4)
        parts[(size_t)p * n + i] = peak;
      continue;
    }

    /* gi: the half-disc of sectors o .. o + NORIENT - 1 (counts); tf: the disc's, smoothed */
    int gi[MAX_BINS], ti[MAX_BINS];
#pragma unroll
    for (int b = 0; b < MAX_BINS; b++)
      gi[b] = ti[b] = 0;
#pragma unroll
    for (int q = 0; q < NSECT; q++)
#pragma unroll
      for (int wd = 0; wd < WPR; wd++)
        if (wd < wpr) {
          const uint v = hl[(q * wpr + wd) * WG];
#pragma unroll
          for (int kk = 0; kk < PER_WORD; kk++)
            if (wd * PER_WORD + kk < nb) {
              const int cnt = (int)((v >> (kk * BITS)) & MASK);
              ti[wd * PER_WORD + kk] += cnt;
              if (q < NORIENT)
                gi[wd * PER_WORD + kk] += cnt;
            }
        }
    float tf[MAX_BINS], inv[MAX_BINS];
#pragma unroll
    for (int b = 0; b < MAX_BINS; b++) {
      float a = 0.0f;
#pragma unroll
      for (int t = -SMOOTH_MAX; t <= SMOOTH_MAX; t++)
        if (t >= -sr && t <= sr && b + t >= 0 && b + t < nb)
          a += k[t + SMOOTH_MAX] * (float)ti[b + t];
      tf[b] = a;
      inv[b] = b < nb && a > 1e-6f ? 1.0f / a : 0.0f;
    }
    for (int o = 0; o < NORIENT; o++) {
      const float zin = sum_in(o, n, i, p, want, z);
      float gf[MAX_BINS], acc = 0.0f;
#pragma unroll
      for (int b = 0; b < MAX_BINS; b++)
        gf[b] = (float)gi[b];
#pragma unroll
      for (int b = 0; b < MAX_BINS; b++)
        if (b < nb) {
          float gs = 0.0f;
#pragma unroll
          for (int t = -SMOOTH_MAX; t <= SMOOTH_MAX; t++)
            if (t >= -sr && t <= sr && b + t >= 0 && b + t < nb)
              gs += k[t + SMOOTH_MAX] * gf[b + t];
          const float d = 2.0f * gs - tf[b];
          acc += d * d * inv[b];
        }
      peak = put(acc * scale, o, n, i, p, want, wp, out, z, zin, peak);
      if (o + 1 < NORIENT) /* turn the half-disc by one sector: o + NORIENT in, o out */
#pragma unroll
        for (int wd = 0; wd < WPR; wd++)
          if (wd < wpr) {
            const uint in = hl[((o + NORIENT) * wpr + wd) * WG], gone = hl[(o * wpr + wd) * WG];
#pragma unroll
            for (int kk = 0; kk < PER_WORD; kk++)
              if (wd * PER_WORD + kk < nb)
                gi[wd * PER_WORD + kk] +=
                    (int)((in >> (kk * BITS)) & MASK) - (int)((gone >> (kk * BITS)) & MASK);
          }
    }
    if (want & 4)
      parts[(size_t)p * n + i] = peak;
  }
}

#define GRADIENT_ARGS                                                                              \
  __global const uchar *pad, const int pw, const int plane, const int w, const int n, const int R, \
      __constant int2 *disc, __constant int *count, const int nscales, const int c,                \
      __constant float *taps, const int part0, __global float *grad, const int nb, const int sr,   \
      const int want, __constant float *weight, __global float *z, __global float *parts
#define GRADIENT_CALL                                                                              \
  pad, pw, plane, w, n, R, disc, count, nscales, c, taps, part0, grad, want, weight, z, parts
#define WORDS(nb) (((nb) + PER_WORD - 1) / PER_WORD)

/* Any channel: nb and sr as given (the host takes it for a kind beyond the eight below). */
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void contour_gradients(GRADIENT_ARGS)
{
  __local uint hist[NSECT * WPR * WG];
  gradients(hist, nb, sr, WPR, GRADIENT_CALL);
}

/* The channels of kind k (bins NBk, smoothing radius SRk, both -D options): nb and sr are not
 * read. */
#define GRADIENTS_OF_KIND(name, NBK, SRK)                                                          \
  __kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void name(GRADIENT_ARGS)                \
  {                                                                                                \
    __local uint hist[NSECT * WORDS(NBK) * WG];                                                    \
    gradients(hist, NBK, SRK, WORDS(NBK), GRADIENT_CALL);                                          \
  }
#ifdef NB0
GRADIENTS_OF_KIND(contour_gradients_0, NB0, SR0)
#endif
#ifdef NB1
GRADIENTS_OF_KIND(contour_gradients_1, NB1, SR1)
#endif
#ifdef NB2
GRADIENTS_OF_KIND(contour_gradients_2, NB2, SR2)
#endif
#ifdef NB3
GRADIENTS_OF_KIND(contour_gradients_3, NB3, SR3)
#endif
#ifdef NB4
GRADIENTS_OF_KIND(contour_gradients_4, NB4, SR4)
#endif
#ifdef NB5
GRADIENTS_OF_KIND(contour_gradients_5, NB5, SR5)
#endif
#ifdef NB6
GRADIENTS_OF_KIND(contour_gradients_6, NB6, SR6)
#endif
#ifdef NB7
GRADIENTS_OF_KIND(contour_gradients_7, NB7, SR7)
#endif

/* ---- combination and thinning ---- */

/* The combination from its sums z(o) = sum_p weight[p] grad_p(o) (z[o * n + i], made by the
 * gradients' kernels): v(o) = (logistic(bias + z) - s0) / (1 - s0); strength = max_o v (the
 * first o that reaches it into orientation); oriented[o * n + i] = v(o) with want_oriented. */
__kernel void contour_combine(__global const float *z, const int n, const float bias,
                              const float s0, __global float *strength, __global uchar *orientation,
                              const int want_oriented, __global float *oriented)
{
  const int i = get_global_id(0);
  if (i >= n)
    return;
  float best = -1.0f;
  int arg = 0;
  for (int o = 0; o < NORIENT; o++) {
    const float v = (1.0f / (1.0f + exp(-(bias + z[(size_t)o * n + i]))) - s0) / (1.0f - s0);
    if (want_oriented)
      oriented[(size_t)o * n + i] = v;
    if (v > best) {
      best = v;
      arg = o;
    }
  }
  strength[i] = best;
  orientation[i] = (uchar)arg;
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

/* Non-maximum suppression: m[i] stays where it is above the samples 1 .. reach pixels along the
 * normal of its orientation on one side and not below those on the other. normal[(2 (k - 1) +
 * side) NORIENT + o] = (ix, iy, fx, fy) of the sample k pixels away on the + (side 0) or - side
 * (side 1): the offset's floor and fraction. */
__kernel void contour_thin(__global const float *m, __global const uchar *orientation, const int w,
                           const int h, __constant float4 *normal, const int reach,
                           __global float *out)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int x = i % w, y = i / w, o = orientation[i];
  const float v = m[i];
  int keep = 1;
  for (int k = 0; keep && k < reach; k++) {
    const float4 p = normal[2 * k * NORIENT + o], q = normal[(2 * k + 1) * NORIENT + o];
    const float a = bilinear(m, w, h, x + (int)p.x, y + (int)p.y, p.z, p.w);
    const float b = bilinear(m, w, h, x + (int)q.x, y + (int)q.y, q.z, q.w);
    keep = v > a && v >= b;
  }
  out[i] = keep ? v : 0.0f;
}

/* ---- gPb: the spectral term joins the combination ---- */

/* Vector j's value at pixel i (app_spectral_gradient): v = u / sqrt(d), or, for a pixel whose
 * degree d is below `isolated` when the products are given, (N u)_i / (mu sqrt(d)). */
inline float spectral_value(__global const float *u, __global const float *Nu, const int products,
                            __global const float *sd, const float isolated, const float mu,
                            const int i)
{
  const float s = sd[i];
  return products && s * s < isolated ? Nu[i] / (mu * s) : u[i] / s;
}

/* One work-group per vector j (the second dimension): the range [lo, hi] of its values, then
 * scale[j] = weight[j] / (hi - lo), 0 where the vector is constant or weight[j] is 0 (it adds
 * nothing). The local size is a power of two, at most SPECTRAL_LOCAL. */
#define SPECTRAL_LOCAL 256
__kernel void spectral_range(__global const float *vectors, __global const float *products,
                             const int has_products, __global const float *sd, const float isolated,
                             __constant float *mu, __constant float *weight, const int n,
                             __global float *scale)
{
  __local float lo[SPECTRAL_LOCAL], hi[SPECTRAL_LOCAL];
  const int l = get_local_id(0), size = get_local_size(0), j = get_global_id(1);
  __global const float *u = vectors + (size_t)j * n, *Nu = products + (size_t)j * n;
  float a = INFINITY, b = -INFINITY;
  for (int i = l; i < n; i += size) {
    const float v = spectral_value(u, Nu, has_products, sd, isolated, mu[j], i);
    a = v < a ? v : a;
    b = v > b ? v : b;
  }
  lo[l] = a;
  hi[l] = b;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = size / 2; s > 0; s /= 2) {
    if (l < s) {
      lo[l] = lo[l + s] < lo[l] ? lo[l + s] : lo[l];
      hi[l] = hi[l + s] > hi[l] ? hi[l + s] : hi[l];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0)
    scale[j] = hi[0] > lo[0] && weight[j] > 0.0f ? weight[j] / (hi[0] - lo[0]) : 0.0f;
}

/* Vector j along the rows (app_gradient_add's first pass): row0 = the Gaussian g, row1 its
 * derivative d (taps: g's 2 r + 1, then d's), sum_{t = -r .. r} tap[t + r] v[y w + reflect(x - t)].
 * Nothing where scale[j] is 0. */
__kernel void spectral_rows(__global const float *vectors, __global const float *products,
                            const int has_products, __global const float *sd, const float isolated,
                            __constant float *mu, __constant float *scale, const int j, const int w,
                            const int n, __constant float *taps, const int r, __global float *row0,
                            __global float *row1)
{
  const int i = get_global_id(0);
  if (i >= n || scale[j] == 0.0f)
    return;
  __constant float *g = taps, *d = taps + 2 * r + 1;
  __global const float *u = vectors + (size_t)j * n, *Nu = products + (size_t)j * n;
  const int x = i % w, row = i - x;
  float s0 = 0.0f, s1 = 0.0f;
  for (int t = -r; t <= r; t++) {
    const float v =
        spectral_value(u, Nu, has_products, sd, isolated, mu[j], row + reflect(x - t, w));
    s0 += g[t + r] * v;
    s1 += d[t + r] * v;
  }
  row0[i] = s0;
  row1[i] = s1;
}

/* Vector j along the columns, added to the spectral term (app_gradient_add's second pass):
 * gx = row1 by g, gy = row0 by d, and spectral[o n + i] += |scale (nx_o gx + ny_o gy)| with
 * (nx_o, ny_o) = normal[o] = (-sin, cos)(o pi / NORIENT), the vectors added in order. */
__kernel void spectral_columns(__global const float *row0, __global const float *row1,
                               __constant float *scale, const int j, const int w, const int h,
                               __constant float *taps, const int r, __constant float2 *normal,
                               __global float *spectral)
{
  const int i = get_global_id(0), n = w * h;
  const float sc = scale[j];
  if (i >= n || sc == 0.0f)
    return;
  __constant float *g = taps, *d = taps + 2 * r + 1;
  const int x = i % w, y = i / w;
  float sx = 0.0f, sy = 0.0f;
  for (int t = -r; t <= r; t++) {
    const int at = reflect(y - t, h) * w + x;
    sx += g[t + r] * row1[at];
    sy += d[t + r] * row0[at];
  }
  for (int o = 0; o < NORIENT; o++)
    spectral[(size_t)o * n + i] += fabs(normal[o].x * sc * sx + normal[o].y * sc * sy);
}

/* gPb (app_contour_gpb): the detector's v(o) back to its linear part, z(o) = logit(v (1 - s0) +
 * s0) - bias, the weighted spectral term added, x = z + weight spectral(o), then x / (x + x_half)
 * (0 where x <= 0); its largest value over o into strength, the first o that reaches it into
 * orientation. 1 - q is kept at least 1e-12 as the reference's q is at most 1 - 1e-12. */
__kernel void gpb_combine(__global const float *oriented, __global const float *spectral,
                          const int n, const float bias, const float s0, const float x_half,
                          const float weight, __global float *strength, __global uchar *orientation)
{
  const int i = get_global_id(0);
  if (i >= n)
    return;
  float best = -1.0f;
  int arg = 0;
  for (int o = 0; o < NORIENT; o++) {
    const float v = oriented[(size_t)o * n + i];
    const float q = v > 0.0f ? v * (1.0f - s0) + s0 : s0;
    const float p = v > 0.0f ? fmax((1.0f - v) * (1.0f - s0), 1e-12f) : 1.0f - s0;
    const float x = log(q / p) - bias + weight * spectral[(size_t)o * n + i];
    const float e = x > 0.0f ? x / (x + x_half) : 0.0f;
    if (e > best) {
      best = e;
      arg = o;
    }
  }
  strength[i] = best;
  orientation[i] = (uchar)arg;
}
