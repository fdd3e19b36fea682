/* The structured edge forest on the device (spmv/opencl/cl_image.c, spmv_cl_forest): the
 * channels, the trees' descents and the leaves' sharpened boundaries, one scale per call. The C
 * references are app_forest_channels, app_forest_descend and app_forest_detect's leaf_edges
 * (app/lib/forest.c); docs/PIPELINE.md ("1c") has the recipe.
 *
 * The channels: forest_lab_pad (one work-item per padded pixel: CIELAB in float, as contours.cl's
 * contour_lab, mapped to [0, 1], and the sharpening's colours), forest_halve (2 x 2 means),
 * forest_gradient and forest_normalise (the gradient of the largest magnitude over the three
 * colours, divided by its triangle mean), forest_hist (the 4-orientation histogram in cells),
 * the separable triangle filter forest_tri (one of app_forest_triangle's two passes, along the
 * rows or the columns, one work-item per pixel and plane: get_global_id(1) is the plane) and
 * forest_quantise (8-bit codes).
 * Every one computes in float as its reference, in its order, with no contraction into fused
 * multiply-adds (the pragma below): they differ from it only where the device's CIELAB (float,
 * where the reference uses double), atan2, sqrt or division round otherwise, which can move a
 * channel's code by one.
 *
 * forest_detect: one work-item per place and tree. It descends the tree (each node's feature a
 * regular channel's code or the difference of two self-similarity codes, the offsets from a
 * table made for this grid), unpacks the leaf's 16 x 16 segmentation from its 4-bit labels,
 * makes its boundary's rings as 16-bit row masks (ring 0: pixels with a 4-neighbour of another
 * segment; ring k: the 8-neighbourhood of the rings before it, less them), moves the pixels of
 * the first `sharpen` rings, in the reference's order (ring by ring, ascending), to the
 * neighbouring segment of the nearest mean colour, and adds 1 at each pixel of the rings 0 ..
 * sharpen that then has a 4-neighbour of another segment. The votes are integers added with
 * atomic_inc, so the map is the reference's exactly whatever order they land in.
 *
 * forest_map: the votes of the image's own pixels times the gain over the votes a pixel can get.
 *
 * The scales and the thinning (app_forest_detect_ms, app_forest_thin): forest_double (the image
 * doubled, dsg_image_resize's bilinear: its samples fall on quarter pixels, so every step is exact
 * in float and the bytes are the reference's), forest_combine (the three maps averaged, the half
 * scale's brought up by app_upsample_field's bilinear, in double where the device has it, as the
 * reference), forest_orient (the boundary's direction from the smoothed map's Hessian) and
 * forest_thin (non-maximum suppression across it, as app_contour_thin from contours.cl's table of
 * normals, then the taper at the image's edge).
 *
 * -D options (all set by the host): PATCH (the pixels a place reads), OUT (its leaf's side),
 * STRIDE (between places), NCHAN (channels), MAX_SEGS (a leaf's segments, at most),
 * SHARPEN_MAX (the rings the sharpening may move, at most).
 */
#ifndef PATCH
#define PATCH 32
#endif
#ifndef OUT
#define OUT 16
#endif
#ifndef STRIDE
#define STRIDE 2
#endif
#ifndef NCHAN
#define NCHAN 13
#endif
#ifndef MAX_SEGS
#define MAX_SEGS 16
#endif
#ifndef SHARPEN_MAX
#define SHARPEN_MAX 2
#endif

#pragma OPENCL FP_CONTRACT OFF

/* the half scale's bilinear in the reference's precision where the device has it */
#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double real;
#else
typedef float real;
#endif

#define ORIENTS 4
#define PI_F 3.14159265358979323846f         /* (float)M_PI */
#define ORIENT_SCALE 1.27323954473516268615f /* (float)(ORIENTS / M_PI) */

/* i reflected into [0, n): ..., 1, 0 | 0, 1, ..., n-1 | n-1, n-2, ... (app_reflect) */
inline int reflect(int i, const int n)
{
  const int period = 2 * n;
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - 1 - i;
}

/* CIELAB's f (app/lib/contours.c's lab_f) */
inline float lab_f(const float t)
{
  return t > 216.0f / 24389.0f ? cbrt(t) : (24389.0f / 27.0f * t + 16.0f) / 116.0f;
}

/* One work-item per pixel of the padded image (pw x ph, the image w x h at (pad, pad), the rest
 * reflected): full[k pn + d] = (lab_k - lo_k) / span_k, k = L, a, b; color (when want_color)
 * [k pn + d] = the byte of channel k / 255 (one or two channels: grey). */
__kernel void forest_lab_pad(__global const uchar *pixels, const int channels, const int w,
                             const int h, const int pad, const int pw, const int ph,
                             __constant float *linear, const float4 lo, const float4 span,
                             __global float *full, const int want_color, __global float *color)
{
  const int d = get_global_id(0), pn = pw * ph;
  if (d >= pn)
    return;
  const int y = d / pw, x = d % pw;
  const int s = reflect(y - pad, h) * w + reflect(x - pad, w);
  __global const uchar *p = pixels + (size_t)s * channels;
  const uchar c0 = p[0], c1 = channels >= 3 ? p[1] : p[0], c2 = channels >= 3 ? p[2] : p[0];
  const float r = linear[c0], g = linear[c1], b = linear[c2];
  const float X = (0.4124564f * r + 0.3575761f * g + 0.1804375f * b) / 0.95047f;
  const float Y = 0.2126729f * r + 0.7151522f * g + 0.0721750f * b;
  const float Z = (0.0193339f * r + 0.1191920f * g + 0.9503041f * b) / 1.08883f;
  const float fx = lab_f(X), fy = lab_f(Y), fz = lab_f(Z);
  full[d] = (116.0f * fy - 16.0f - lo.s0) / span.s0;
  full[pn + d] = (500.0f * (fx - fy) - lo.s1) / span.s1;
  full[2 * pn + d] = (200.0f * (fy - fz) - lo.s2) / span.s2;
  if (want_color) {
    color[d] = (float)c0 / 255.0f;
    color[pn + d] = (float)c1 / 255.0f;
    color[2 * pn + d] = (float)c2 / 255.0f;
  }
}

/* The triangle filter of radius r (weights 1 .. r + 1 .. 1, over (r + 1)^2) along the rows
 * (columns 0) or the columns (1) of plane get_global_id(1) (w x h, borders reflected) of src + so,
 * into dst + dof. (Here and below, so, dof, io, ho, mo: element offsets of the planes into their
 * buffers.) */
__kernel void forest_tri(__global const float *src, const int so, __global float *dst,
                         const int dof, const int w, const int h, const int r, const int columns)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const size_t plane = (size_t)get_global_id(1) * w * h;
  const int y = i / w, x = i % w;
  const int at = columns ? y : x, len = columns ? h : w, step = columns ? w : 1;
  __global const float *line = src + so + plane + (i - at * step); /* the row's or column's start */
  const float norm = 1.0f / (float)((r + 1) * (r + 1));
  float s = 0.0f;
  for (int t = -r; t <= r; t++)
    s += (float)(r + 1 - abs(t)) * line[(size_t)reflect(at + t, len) * step];
  dst[dof + plane + i] = s * norm;
}

/* The means of 2 x 2 blocks of plane get_global_id(1) (w x h) into dst (w / 2 x h / 2 planes). */
__kernel void forest_halve(__global const float *src, const int so, __global float *dst,
                           const int dof, const int w, const int h)
{
  src += so;
  dst += dof;
  const int hw = w / 2, hh = h / 2, i = get_global_id(0);
  if (i >= hw * hh)
    return;
  const int z = get_global_id(1), y = i / hw, x = i % hw;
  __global const float *s = src + (size_t)z * w * h + (size_t)(2 * y) * w + 2 * x;
  dst[(size_t)z * hw * hh + i] = 0.25f * (s[0] + s[1] + s[w] + s[w + 1]);
}

/* The gradient of a 3-plane image (w x h): the colour of the largest squared magnitude (central
 * differences, one-sided at the borders), its magnitude and its orientation in [0, pi). */
__kernel void forest_gradient(__global const float *img, const int io, const int w, const int h,
                              __global float *mag, __global float *ori)
{
  img += io;
  const int i = get_global_id(0), n = w * h;
  if (i >= n)
    return;
  const int y = i / w, x = i % w;
  float best = -1.0f, bx = 0.0f, by = 0.0f;
  for (int c = 0; c < 3; c++) {
    __global const float *p = img + (size_t)c * n;
    const float gx = w < 2        ? 0.0f
                     : x == 0     ? p[i + 1] - p[i]
                     : x == w - 1 ? p[i] - p[i - 1]
                                  : 0.5f * (p[i + 1] - p[i - 1]);
    const float gy = h < 2        ? 0.0f
                     : y == 0     ? p[i + w] - p[i]
                     : y == h - 1 ? p[i] - p[i - w]
                                  : 0.5f * (p[i + w] - p[i - w]);
    const float m = gx * gx + gy * gy;
    if (m > best) {
      best = m;
      bx = gx;
      by = gy;
    }
  }
  mag[i] = sqrt(best);
  float o = atan2(by, bx);
  if (o < 0.0f)
    o += PI_F;
  if (o >= PI_F)
    o -= PI_F;
  ori[i] = o;
}

/* mag / (mean + 0.01) */
__kernel void forest_normalise(__global float *mag, __global const float *mean, const int mo,
                               const int n)
{
  mean += mo;
  const int i = get_global_id(0);
  if (i < n)
    mag[i] = mag[i] / (mean[i] + 0.01f);
}

/* The 4-orientation histogram of (mag, ori) (w x h) in cells of bin x bin pixels (their mean),
 * each pixel's magnitude shared linearly between its two nearest orientations: hist[o] planes of
 * w / bin x h / bin. */
__kernel void forest_hist(__global const float *mag, __global const float *ori, const int w,
                          const int h, const int bin, __global float *hist, const int ho)
{
  hist += ho;
  const int hw = w / bin, hh = h / bin, i = get_global_id(0);
  if (i >= hw * hh)
    return;
  const int y = i / hw, x = i % hw;
  const float inv = 1.0f / (float)(bin * bin);
  float acc[ORIENTS] = {0.0f, 0.0f, 0.0f, 0.0f};
  for (int dy = 0; dy < bin; dy++)
    for (int dx = 0; dx < bin; dx++) {
      const size_t p = (size_t)(y * bin + dy) * w + x * bin + dx;
      const float o = ori[p] * ORIENT_SCALE;
      int o0 = (int)o;
      const float f = o - (float)o0;
      o0 = o0 % ORIENTS;
      acc[o0] += (1.0f - f) * mag[p];
      acc[(o0 + 1) % ORIENTS] += f * mag[p];
    }
  for (int o = 0; o < ORIENTS; o++)
    hist[(size_t)o * hw * hh + i] = acc[o] * inv;
}

/* Plane z = get_global_id(1) of src (n floats each) coded in 8 bits: round(v scale[z]) clamped
 * to [0, 255]. */
__kernel void forest_quantise(__global const float *src, const int n, __constant float *scale,
                              __global uchar *dst)
{
  const int i = get_global_id(0);
  if (i >= n)
    return;
  const int z = get_global_id(1);
  const float q = src[(size_t)z * n + i] * scale[z] + 0.5f;
  dst[(size_t)z * n + i] = (uchar)(q <= 0.0f ? 0 : q >= 255.0f ? 255 : (int)q);
}

/* ---- the trees and their leaves ---- */

/* The ring after `all` (16 row masks): its 8-neighbourhood less itself, into ring; all grows. */
inline void next_ring(ushort *all, ushort *ring)
{
  ushort grown[OUT];
  for (int y = 0; y < OUT; y++) {
    uint m = 0;
    for (int dy = -1; dy <= 1; dy++)
      if (y + dy >= 0 && y + dy < OUT)
        m |= all[y + dy];
    grown[y] = (ushort)((m | m << 1 | m >> 1) & 0xffffu);
  }
  for (int y = 0; y < OUT; y++) {
    ring[y] = grown[y] & (ushort)~all[y];
    all[y] |= ring[y];
  }
}

/* Whether pixel i of the 16 x 16 labels S has a 4-neighbour of another label. */
inline int on_boundary(const uchar *S, const int i)
{
  const int y = i / OUT, x = i % OUT, s = S[i];
  return (x > 0 && S[i - 1] != s) || (x + 1 < OUT && S[i + 1] != s) || (y > 0 && S[i - OUT] != s) ||
         (y + 1 < OUT && S[i + OUT] != s);
}

/* One work-item per (place, tree) of rows x cols places and te trees (get_global_id(0) = (r cols
 * + c) te + t): the tree ((r + c) % 2 te + t) % ntrees descends at channel corner (r, c) of the
 * cw-wide channels; node k is node[k] = (feature | threshold << 16, child); a leaf's index is
 * its node's first word. leaf_at[l]: (segments, the patch's place among segs, in 128-byte
 * steps of 4-bit labels). The sharpening reads color (3 planes of pw x ph); the votes go into
 * acc (aw wide). feat_a, feat_b: each feature's offset into the channel planes (reg for the
 * first nreg features, else the difference sim[a] - sim[b]). */
__kernel void forest_detect(__global const uchar *reg, __global const uchar *sim, const int cw,
                            const int rows, const int cols, const int te, const int ntrees,
                            __global const uint *tree, __global const uint2 *node,
                            __global const uint2 *leaf_at, __global const uchar *segs,
                            __global const int *feat_a, __global const int *feat_b, const int nreg,
                            __global const float *color, const int pw, const int pn,
                            const int sharpen, __global int *acc, const int aw)
{
  const int id = get_global_id(0);
  if (id >= rows * cols * te)
    return;
  const int t = id % te, place = id / te, r = place / cols, c = place % cols;
  const int at = r * cw + c;
  uint k = tree[((r + c) % 2 * te + t) % ntrees];
  uint2 nd = node[k];
  while (nd.s1) {
    const int f = (int)(nd.s0 & 0xffffu), thr = (int)(short)(ushort)(nd.s0 >> 16);
    const int v =
        f < nreg ? (int)reg[feat_a[f] + at] : (int)sim[feat_a[f] + at] - (int)sim[feat_b[f] + at];
    k = v < thr ? nd.s1 : nd.s1 + 1;
    nd = node[k];
  }
  const uint2 la = leaf_at[nd.s0];
  const int m = (int)la.s0;
  if (m < 2)
    return;
  uchar S[OUT * OUT];
  __global const uchar *packed = segs + (size_t)la.s1 * (OUT * OUT / 2);
  for (int i = 0; i < OUT * OUT / 2; i++) {
    const uchar b = packed[i];
    S[2 * i] = b & 15;
    S[2 * i + 1] = b >> 4;
  }
  /* the rings of the leaf's own boundary */
  ushort ring[SHARPEN_MAX + 1][OUT], all[OUT];
  for (int y = 0; y < OUT; y++) {
    ushort bits = 0;
    for (int x = 0; x < OUT; x++)
      if (on_boundary(S, y * OUT + x))
        bits |= (ushort)(1u << x);
    ring[0][y] = all[y] = bits;
  }
  for (int q = 1; q <= sharpen; q++)
    next_ring(all, ring[q]);
  const int oy = r * STRIDE + (PATCH - OUT) / 2, ox = c * STRIDE + (PATCH - OUT) / 2;
  if (sharpen > 0) {
    float mu[MAX_SEGS][3], cnt[MAX_SEGS];
    for (int s = 0; s < MAX_SEGS; s++) {
      cnt[s] = 0.0f;
      mu[s][0] = mu[s][1] = mu[s][2] = 0.0f;
    }
    for (int y = 0; y < OUT; y += 2)
      for (int x = 0; x < OUT; x += 2) {
        const int s = S[y * OUT + x];
        const size_t p = (size_t)(oy + y) * pw + ox + x;
        cnt[s] += 1.0f;
        for (int q = 0; q < 3; q++)
          mu[s][q] += color[(size_t)q * pn + p];
      }
    for (int s = 0; s < m; s++)
      if (cnt[s] > 0.0f)
        for (int q = 0; q < 3; q++)
          mu[s][q] /= cnt[s];
    for (int q = 0; q < sharpen; q++)
      for (int y = 0; y < OUT; y++)
        for (uint bits = ring[q][y]; bits; bits &= bits - 1) {
          const int x = 31 - clz(bits & -bits), i = y * OUT + x;
          const size_t p = (size_t)(oy + y) * pw + ox + x;
          const int nb[4] = {x > 0 ? i - 1 : i, x + 1 < OUT ? i + 1 : i, y > 0 ? i - OUT : i,
                             y + 1 < OUT ? i + OUT : i};
          float best = 1e30f;
          int arg = S[i];
          for (int e = 0; e < 4; e++) {
            const int s = S[nb[e]];
            if (cnt[s] == 0.0f)
              continue;
            float d2 = 0.0f;
            for (int ch = 0; ch < 3; ch++) {
              const float d = mu[s][ch] - color[(size_t)ch * pn + p];
              d2 += d * d;
            }
            if (d2 < best) {
              best = d2;
              arg = s;
            }
          }
          S[i] = (uchar)arg;
        }
  }
  __global int *dst = acc + (size_t)(r * STRIDE) * aw + c * STRIDE;
  for (int q = 0; q <= sharpen; q++)
    for (int y = 0; y < OUT; y++)
      for (uint bits = ring[q][y]; bits; bits &= bits - 1) {
        const int x = 31 - clz(bits & -bits);
        if (on_boundary(S, y * OUT + x))
          atomic_inc(dst + (size_t)y * aw + x);
      }
}

/* E[y w + x] = acc[(y + off) aw + x + off] norm: the votes of the image's own pixels. */
__kernel void forest_map(__global const int *acc, const int aw, const int off, const int w,
                         const int h, const float norm, __global float *E)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int y = i / w, x = i % w;
  E[i] = (float)acc[(size_t)(y + off) * aw + x + off] * norm;
}

/* ---- the scales and the thinning --------------------------------------------------------- */

/* The w x h image of `channels` bytes a pixel doubled to 2w x 2h (dsg_image_resize: bilinear, pixel
 * centres onto pixel centres, at (X / 2 - 1 / 4, Y / 2 - 1 / 4), rounded half up). */
__kernel void forest_double(__global const uchar *src, const int channels, const int w, const int h,
                            __global uchar *dst)
{
  const int W = 2 * w, i = get_global_id(0);
  if (i >= W * 2 * h)
    return;
  const float sy = 0.5f * (float)(i / W) - 0.25f, sx = 0.5f * (float)(i % W) - 0.25f;
  const int y0 = sy < 0.0f ? 0 : (int)sy, x0 = sx < 0.0f ? 0 : (int)sx;
  const int y1 = y0 + 1 < h ? y0 + 1 : h - 1, x1 = x0 + 1 < w ? x0 + 1 : w - 1;
  const float fy = sy < 0.0f ? 0.0f : sy - (float)y0, fx = sx < 0.0f ? 0.0f : sx - (float)x0;
  __global const uchar *p = src;
  for (int k = 0; k < channels; k++) {
    const float a = p[((size_t)y0 * w + x0) * channels + k],
                b = p[((size_t)y0 * w + x1) * channels + k];
    const float e = p[((size_t)y1 * w + x0) * channels + k],
                f = p[((size_t)y1 * w + x1) * channels + k];
    const float v = (a * (1.0f - fx) + b * fx) * (1.0f - fy) + (e * (1.0f - fx) + f * fx) * fy;
    dst[(size_t)i * channels + k] = (uchar)(int)(v + 0.5f);
  }
}

/* Where pixel X of a side of `big` pixels falls on a side of `small` (resolution.c's to_work). */
inline real to_small(const int X, const int big, const int small, int *lo, int *hi)
{
  const real f = ((real)X + (real)0.5f) * small / big - (real)0.5f;
  const int a = (int)floor(f);
  *lo = a < 0 ? 0 : a > small - 1 ? small - 1 : a;
  *hi = a + 1 > small - 1 ? small - 1 : a + 1 < 0 ? 0 : a + 1;
  return f;
}

/* In place, the w x h map E of the image's own scale joined by the others (app_forest_detect_ms):
 * E + coarse (the half scale's, hw x hh, brought up bilinearly; hw = 0: none, E counts twice) and
 * the 2 x 2 means of twice (2w x 2h), over 3. */
__kernel void forest_combine(__global float *E, const int w, const int h,
                             __global const float *coarse, const int hw, const int hh,
                             __global const float *twice)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int y = i / w, x = i % w;
  float e = E[i];
  if (hw > 0) {
    int x0, x1, y0, y1;
    const real fx = to_small(x, w, hw, &x0, &x1), fy = to_small(y, h, hh, &y0, &y1);
    const real tx = fx < 0 ? 0 : fx - floor(fx), ty = fy < 0 ? 0 : fy - floor(fy);
    const real a = coarse[y0 * hw + x0], b = coarse[y0 * hw + x1], c = coarse[y1 * hw + x0],
               d = coarse[y1 * hw + x1];
    e += (float)((a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty);
  } else {
    e *= 2.0f;
  }
  __global const float *q = twice + (size_t)(2 * y) * (2 * w) + 2 * x;
  E[i] = (e + 0.25f * (q[0] + q[1] + q[2 * w] + q[2 * w + 1])) / 3.0f;
}

/* The boundary's direction at each pixel of s (the map smoothed; app_forest_orientation): the
 * Hessian's 0.5 atan2(2 dxy, dxx - dyy) in [0, pi), rounded to the nearest o step, o modulo
 * norient. */
__kernel void forest_orient(__global const float *s, const int w, const int h, const int norient,
                            const float step, __global uchar *orientation)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int y = i / w, x = i % w;
  const int xl = x > 0 ? x - 1 : x, xr = x + 1 < w ? x + 1 : x;
  const int yu = y > 0 ? y - 1 : y, yd = y + 1 < h ? y + 1 : y;
  const float c = s[i];
  const float dxx = s[y * w + xr] - 2.0f * c + s[y * w + xl];
  const float dyy = s[yd * w + x] - 2.0f * c + s[yu * w + x];
  const float dxy = 0.25f * (s[yd * w + xr] - s[yd * w + xl] - s[yu * w + xr] + s[yu * w + xl]);
  float th = 0.5f * atan2(2.0f * dxy, dxx - dyy);
  if (th < 0.0f)
    th += PI_F;
  if (th >= PI_F)
    th -= PI_F;
  const int o = (int)floor(th / step + 0.5f);
  orientation[i] = (uchar)(o % norient);
}

/* m at (x + fx, y + fy), fx, fy in [0, 1), bilinear, the point clamped to the image first
 * (contours.cl's, app/lib/contours.c's bilinear). */
inline float forest_sample(__global const float *m, const int w, const int h, int x, int y,
                           float fx, float fy)
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

/* app_forest_thin's strength: m where it is above the samples 1 .. reach pixels along the normal
 * of its orientation on one side and not below those on the other (normal: contours.cl's
 * contour_thin table, (ix, iy, fx, fy) of sample k on side 0 / 1 at [(2 (k - 1) + side) norient +
 * o]), times d / border within border pixels of the image's edge (d: the distance to it), at most
 * top. */
__kernel void forest_thin(__global const float *m, __global const uchar *orientation, const int w,
                          const int h, __constant float4 *normal, const int norient,
                          const int reach, const int border, const float top,
                          __global float *strength)
{
  const int i = get_global_id(0);
  if (i >= w * h)
    return;
  const int x = i % w, y = i / w, o = orientation[i];
  float v = m[i];
  int keep = 1;
  for (int k = 0; keep && k < reach; k++) {
    const float4 p = normal[2 * k * norient + o], q = normal[(2 * k + 1) * norient + o];
    const float a = forest_sample(m, w, h, x + (int)p.x, y + (int)p.y, p.z, p.w);
    const float b = forest_sample(m, w, h, x + (int)q.x, y + (int)q.y, q.z, q.w);
    keep = v > a && v >= b;
  }
  v = keep ? v : 0.0f;
  int d = x < y ? x : y;
  d = w - 1 - x < d ? w - 1 - x : d;
  d = h - 1 - y < d ? h - 1 - y : d;
  if (d < border)
    v *= (float)d / (float)border;
  strength[i] = v < top ? v : top;
}
