/* The structured edge forest: a boundary detector learnt from BSDS500 train's human
 * segmentations, after Dollar & Zitnick's structured forests (ICCV 2013; PAMI 2015). Written for
 * diaseg; the formulas are in docs/PIPELINE.md, "Contours".
 *
 *   RGB -> padded by reflection -> 13 channels at half resolution (CIELAB, the gradient's
 *          normalised magnitude and its 4-orientation histogram at full and at half resolution),
 *          smoothed twice (the trees' "regular" and "self-similarity" channels), 8 bits each
 *       -> at every other pixel, each of 4 trees reads features of the 32 x 32 patch around it
 *          (a channel's value at one of 16 x 16 places, or the difference of two of 5 x 5 cells)
 *          down to a leaf, which holds a 16 x 16 segmentation learnt from the humans'
 *       -> the leaf's segmentation, its boundary snapped to the photo's colours ("sharpened"),
 *          adds its boundary pixels into the map; the sum over trees and patches, smoothed, is
 *          the boundary strength E
 *
 * The same on an OpenCL device: app_forest_detect_cl hands the trees and these recipes to spmv's
 * spmv_cl_forest (kernels/forest.cl), whose references are the functions below; segment's run
 * takes it where its device is open (contours.c, app_contours_on).
 *
 * The trees come with the library (app/lib/forest/edges.dsf, embedded at build time) and are fit
 * by tests/bsds/fit_forest.c, which computes its features with the functions below, so that what
 * the trees were fit on is what they read here. */
#include "diaseg_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* ---- geometry ---------------------------------------------------------------------------- */

void app_forest_geometry(int w, int h, app_forest_grid *g)
{
  const int pad = APP_FOREST_PATCH / 2;
  g->width = w;
  g->height = h;
  g->pad = pad;
  g->pw = w + 2 * pad;
  g->ph = h + 2 * pad;
  g->pw += (4 - g->pw % 4) % 4;
  g->ph += (4 - g->ph % 4) % 4;
  g->cw = g->pw / APP_FOREST_SHRINK;
  g->ch = g->ph / APP_FOREST_SHRINK;
  /* patch (r, c) reads channels [r, r + 16) x [c, c + 16) and writes the image's rows
   * [2r - 8, 2r + 8) and columns [2c - 8, 2c + 8): every pixel is covered by 8 x 8 patches */
  g->rows = (g->ph - APP_FOREST_PATCH) / APP_FOREST_STRIDE + 1;
  g->cols = (g->pw - APP_FOREST_PATCH) / APP_FOREST_STRIDE + 1;
}

/* The self-similarity cells: 5 x 5 places in the 16 x 16 channel patch */
static const int sim_cell[APP_FOREST_CELLS] = {1, 4, 8, 11, 14};

void app_forest_feature_at(int f, int cw, int ch, int *channel, int *a, int *b)
{
  const int side = APP_FOREST_PATCH / APP_FOREST_SHRINK; /* 16 */
  if (f < APP_FOREST_REG_FEATURES) {
    const int z = f / (side * side), p = f % (side * side);
    *channel = z;
    *a = z * cw * ch + (p / side) * cw + p % side;
    *b = -1;
    return;
  }
  f -= APP_FOREST_REG_FEATURES;
  const int z = f / APP_FOREST_PAIRS;
  int k = f % APP_FOREST_PAIRS, i = 0;
  const int ncell = APP_FOREST_CELLS * APP_FOREST_CELLS;
  while (k >= ncell - 1 - i) { /* pairs (i, j), j > i, in order */
    k -= ncell - 1 - i;
    i++;
  }
  const int j = i + 1 + k;
  *channel = z;
  *a = z * cw * ch + sim_cell[i / APP_FOREST_CELLS] * cw + sim_cell[i % APP_FOREST_CELLS];
  *b = z * cw * ch + sim_cell[j / APP_FOREST_CELLS] * cw + sim_cell[j % APP_FOREST_CELLS];
}

/* ---- channels ---------------------------------------------------------------------------- */

/* Away from the borders the taps are added a whole row at a time (the same sums in the same
 * order, without the reflection's tests, and in vectors), at the borders one pixel at a time. */
#define TRIANGLE_MAX_RADIUS 16
void app_forest_triangle(float *m, int w, int h, int r, float *tmp)
{
  const float norm = 1.0f / (float)((r + 1) * (r + 1));
  float wt[2 * TRIANGLE_MAX_RADIUS + 1];
  const int fast = r <= TRIANGLE_MAX_RADIUS; /* larger radii: every pixel reflected */
  for (int t = -r; fast && t <= r; t++)
    wt[t + r] = (float)(r + 1 - abs(t));
  /* along the rows: the interior x in [r, w - r) */
  const int xlo = fast && w > 2 * r ? r : w, xhi = fast && w > 2 * r ? w - r : w;
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    const float *row = m + (size_t)y * w;
    float *out = tmp + (size_t)y * w;
    for (int x = xlo; x < xhi; x++)
      out[x] = 0.0f;
    for (int t = -r; t <= r && xlo < xhi; t++) {
      const float c = wt[t + r];
      for (int x = xlo; x < xhi; x++)
        out[x] += c * row[x + t];
    }
    for (int x = xlo; x < xhi; x++)
      out[x] *= norm;
    for (int x = 0; x < w; x++) {
      if (x == xlo)
        x = xhi; /* the interior is done */
      if (x >= w)
        break;
      float s = 0.0f;
      for (int t = -r; t <= r; t++)
        s += (float)(r + 1 - abs(t)) * row[app_reflect(x + t, w)];
      out[x] = s * norm;
    }
  }
  /* along the columns: the interior rows y in [r, h - r) */
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    float *out = m + (size_t)y * w;
    if (fast && y >= r && y + r < h) {
      for (int x = 0; x < w; x++)
        out[x] = 0.0f;
      for (int t = -r; t <= r; t++) {
        const float c = wt[t + r], *src = tmp + (size_t)(y + t) * w;
        for (int x = 0; x < w; x++)
          out[x] += c * src[x];
      }
      for (int x = 0; x < w; x++)
        out[x] *= norm;
      continue;
    }
    for (int x = 0; x < w; x++) {
      float s = 0.0f;
      for (int t = -r; t <= r; t++)
        s += (float)(r + 1 - abs(t)) * tmp[(size_t)app_reflect(y + t, h) * w + x];
      out[x] = s * norm;
    }
  }
}

/* The gradient of a 3-channel image (channel-major, w x h): at each pixel the channel of the
 * largest magnitude (central differences, one-sided at the borders), its magnitude M normalised
 * by its triangle mean of radius APP_FOREST_NORM_RADIUS (M / (mean + 0.01)) and its orientation in
 * [0, pi). tmp: 2 w h floats. */
static void gradient(const float *img, int w, int h, float *mag, float *ori, float *tmp)
{
  const size_t n = (size_t)w * h;
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const size_t i = (size_t)y * w + x;
      float best = -1.0f, bx = 0.0f, by = 0.0f;
      for (int c = 0; c < 3; c++) {
        const float *p = img + c * n;
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
      mag[i] = sqrtf(best);
      float o = atan2f(by, bx);
      if (o < 0.0f)
        o += (float)M_PI;
      if (o >= (float)M_PI)
        o -= (float)M_PI;
      ori[i] = o;
    }
  memcpy(tmp, mag, n * sizeof(float));
  app_forest_triangle(tmp, w, h, APP_FOREST_NORM_RADIUS, tmp + n);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++)
    mag[i] = mag[i] / (tmp[i] + 0.01f);
}

/* The 4-orientation histogram of (mag, ori) (w x h) in cells of bin x bin pixels (the mean over
 * the cell), each pixel's magnitude shared linearly between the two nearest orientations, into
 * hist[o] (w / bin x h / bin each). */
static void orient_hist(const float *mag, const float *ori, int w, int h, int bin, float *hist)
{
  const int hw = w / bin, hh = h / bin;
  const size_t hn = (size_t)hw * hh;
  const float inv = 1.0f / (float)(bin * bin);
#pragma omp parallel for schedule(static)
  for (int y = 0; y < hh; y++)
    for (int x = 0; x < hw; x++) {
      float acc[APP_FOREST_ORIENTS] = {0};
      for (int dy = 0; dy < bin; dy++)
        for (int dx = 0; dx < bin; dx++) {
          const size_t i = (size_t)(y * bin + dy) * w + x * bin + dx;
          const float o = ori[i] * (float)(APP_FOREST_ORIENTS / M_PI);
          int o0 = (int)o;
          const float f = o - (float)o0;
          o0 = o0 % APP_FOREST_ORIENTS;
          acc[o0] += (1.0f - f) * mag[i];
          acc[(o0 + 1) % APP_FOREST_ORIENTS] += f * mag[i];
        }
      for (int o = 0; o < APP_FOREST_ORIENTS; o++)
        hist[o * hn + (size_t)y * hw + x] = acc[o] * inv;
    }
}

/* the mean of 2 x 2 blocks of a w x h map, for each of nc channels (channel-major) */
static void halve(const float *src, int w, int h, int nc, float *dst)
{
  const int hw = w / 2, hh = h / 2;
  for (int c = 0; c < nc; c++) {
    const float *s = src + (size_t)c * w * h;
    float *d = dst + (size_t)c * hw * hh;
#pragma omp parallel for schedule(static)
    for (int y = 0; y < hh; y++)
      for (int x = 0; x < hw; x++) {
        const size_t i = (size_t)(2 * y) * w + 2 * x;
        d[(size_t)y * hw + x] = 0.25f * (s[i] + s[i + 1] + s[i + w] + s[i + w + 1]);
      }
  }
}

/* CIELAB's ranges (gPb's, as contours.c) map to [0, 1] */
static const float lab_lo[3] = {0.0f, -73.0f, -95.0f}, lab_hi[3] = {100.0f, 95.0f, 95.0f};

/* Each channel's 8-bit code: round(value * scale), clamped to [0, 255]. The colours span [0, 1];
 * the normalised gradient and its histograms reach a few units on a sharp step (scales set from
 * the 99.9th percentile over BSDS500 train's channels). */
static const float channel_scale[APP_FOREST_CHANNELS] = {
    255.0f,
    255.0f,
    255.0f, /* L, a, b */
    APP_FOREST_MAG_SCALE,
    APP_FOREST_HIST_SCALE,
    APP_FOREST_HIST_SCALE,
    APP_FOREST_HIST_SCALE,
    APP_FOREST_HIST_SCALE, /* full resolution */
    APP_FOREST_MAG_SCALE,
    APP_FOREST_HIST_SCALE,
    APP_FOREST_HIST_SCALE,
    APP_FOREST_HIST_SCALE,
    APP_FOREST_HIST_SCALE}; /* half resolution */

static unsigned char quantise(float v, float scale)
{
  const float q = v * scale + 0.5f;
  return (unsigned char)(q <= 0.0f ? 0 : q >= 255.0f ? 255 : (int)q);
}

int app_forest_channels(const dsg_image *img, const app_forest_grid *g, unsigned char *reg,
                        unsigned char *sim, float *color, float *raw)
{
  const int w = img->width, h = img->height, c = img->channels;
  const int pw = g->pw, ph = g->ph, cw = g->cw, chh = g->ch;
  const size_t n = (size_t)w * h, pn = (size_t)pw * ph, cn = (size_t)cw * chh;
  float *lab = malloc(3 * n * sizeof(float));
  float *full = malloc(3 * pn * sizeof(float)); /* padded CIELAB in [0, 1] */
  float *half = malloc(3 * cn * sizeof(float)); /* the same at half resolution */
  float *mag = malloc(pn * sizeof(float)), *ori = malloc(pn * sizeof(float));
  float *tmp = malloc(2 * pn * sizeof(float));
  float *chn = malloc(APP_FOREST_CHANNELS * cn * sizeof(float));
  float *smooth = malloc(cn * sizeof(float));
  int status = DSG_OK;
  if (!lab || !full || !half || !mag || !ori || !tmp || !chn || !smooth) {
    status = dsg_error_set(DSG_ERR_NOMEM,
                           "cannot allocate the edge forest's channels of a %d x %d "
                           "image",
                           w, h);
    goto out;
  }
  /* CIELAB of each pixel, then padded by reflection */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float v[3];
    app_rgb_to_lab(img->pixels + i * (size_t)c, c, v);
    for (int k = 0; k < 3; k++)
      lab[k * n + i] = (v[k] - lab_lo[k]) / (lab_hi[k] - lab_lo[k]);
  }
#pragma omp parallel for schedule(static)
  for (int y = 0; y < ph; y++) {
    const int sy = app_reflect(y - g->pad, h);
    for (int x = 0; x < pw; x++) {
      const size_t s = (size_t)sy * w + app_reflect(x - g->pad, w), d = (size_t)y * pw + x;
      for (int k = 0; k < 3; k++)
        full[k * pn + d] = lab[k * n + s];
    }
  }
  if (color) { /* the sharpening's colours: the padded image's, smoothed by the triangle of 1 */
#pragma omp parallel for schedule(static)
    for (int y = 0; y < ph; y++) {
      const int sy = app_reflect(y - g->pad, h);
      for (int x = 0; x < pw; x++) {
        const unsigned char *p = img->pixels + ((size_t)sy * w + app_reflect(x - g->pad, w)) * c;
        const size_t d = (size_t)y * pw + x;
        for (int k = 0; k < 3; k++)
          color[k * pn + d] = p[c >= 3 ? k : 0] / 255.0f;
      }
    }
    for (int k = 0; k < 3; k++)
      app_forest_triangle(color + k * pn, pw, ph, 1, tmp);
  }
  halve(full, pw, ph, 3, half);
  memcpy(chn, half, 3 * cn * sizeof(float));
  /* the gradient at full resolution: its magnitude halved, its histogram in 2 x 2 cells */
  gradient(full, pw, ph, mag, ori, tmp);
  halve(mag, pw, ph, 1, chn + 3 * cn);
  orient_hist(mag, ori, pw, ph, 2, chn + 4 * cn);
  /* and at half resolution: magnitude and histogram per pixel */
  gradient(half, cw, chh, mag, ori, tmp);
  memcpy(chn + 8 * cn, mag, cn * sizeof(float));
  orient_hist(mag, ori, cw, chh, 1, chn + 9 * cn);
  if (raw)
    memcpy(raw, chn, APP_FOREST_CHANNELS * cn * sizeof(float));
  /* the regular channels (triangle of 1) and the self-similarity channels (triangle of 4) */
  for (int z = 0; z < APP_FOREST_CHANNELS; z++) {
    const float *src = chn + (size_t)z * cn;
    memcpy(smooth, src, cn * sizeof(float));
    app_forest_triangle(smooth, cw, chh, APP_FOREST_REG_SMOOTH, tmp);
    for (size_t i = 0; i < cn; i++)
      reg[(size_t)z * cn + i] = quantise(smooth[i], channel_scale[z]);
    memcpy(smooth, src, cn * sizeof(float));
    app_forest_triangle(smooth, cw, chh, APP_FOREST_SIM_SMOOTH, tmp);
    for (size_t i = 0; i < cn; i++)
      sim[(size_t)z * cn + i] = quantise(smooth[i], channel_scale[z]);
  }
out:
  free(lab);
  free(full);
  free(half);
  free(mag);
  free(ori);
  free(tmp);
  free(chn);
  free(smooth);
  return status;
}

/* ---- the model --------------------------------------------------------------------------- */

/* Boundary pixels of a leaf's segmentation and the rings around them, for the sharpening:
 * ring 0 the pixels with a 4-neighbour of another segment, ring k the pixels 8-adjacent to
 * rings < k and in none of them; as pixel indices (ascending within a ring) into list, ring k
 * at list[bounds[k] .. bounds[k + 1]). Rows of 16 pixels as 16-bit masks. */
static int leaf_rings(const unsigned char *seg, unsigned char *list, uint32_t *bounds)
{
  const int g = APP_FOREST_OUT;
  uint16_t ring[APP_FOREST_OUT] = {0}, all[APP_FOREST_OUT];
  for (int i = 0; i < g * g; i++) {
    const int y = i / g, x = i % g, s = seg[i];
    if ((x > 0 && seg[i - 1] != s) || (x + 1 < g && seg[i + 1] != s) ||
        (y > 0 && seg[i - g] != s) || (y + 1 < g && seg[i + g] != s))
      ring[y] |= (uint16_t)(1u << x);
  }
  int count = 0;
  memcpy(all, ring, sizeof(all));
  for (int k = 0; k <= APP_FOREST_SHARPEN; k++) {
    bounds[k] = (uint32_t)count;
    if (k > 0) { /* the next ring: the 8-neighbourhood of all so far, less all */
      uint16_t grown[APP_FOREST_OUT];
      for (int y = 0; y < g; y++) {
        uint32_t m = 0;
        for (int dy = -1; dy <= 1; dy++)
          if (y + dy >= 0 && y + dy < g)
            m |= all[y + dy];
        grown[y] = (uint16_t)((m | m << 1 | m >> 1) & 0xffffu);
      }
      for (int y = 0; y < g; y++) {
        ring[y] = grown[y] & (uint16_t)~all[y];
        all[y] |= ring[y];
      }
    }
    for (int y = 0; y < g; y++)
      for (unsigned bits = ring[y]; bits; bits &= bits - 1)
        list[count++] = (unsigned char)(y * g + __builtin_ctz(bits));
  }
  bounds[APP_FOREST_SHARPEN + 1] = (uint32_t)count;
  return count;
}

void app_forest_free(app_forest *F)
{
  if (!F)
    return;
  free(F->fid);
  free(F->thr);
  free(F->child);
  free(F->leaf);
  free(F->nsegs);
  free(F->seg_at);
  free(F->segs);
  free(F->packed);
  free(F->ring);
  free(F->ring_start);
  free(F);
}

static uint32_t rd32(const unsigned char *p)
{
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The model's bytes (docs/PIPELINE.md, "The edge forest's file"):
 *   "DSGF" version(u32=2) trees(u32) nodes(u32) leaves(u32)
 *   per tree: its first node (u32), trees + 1 of them (the last = nodes)
 *   per node: fid(u16) thr(i16) child(u32): child 0 a leaf whose index is fid | thr << 16
 *             (as u16s), else the left child's index within the whole array (right = left + 1)
 *   per leaf: segments(u8), then for 2 segments or more 128 bytes: 256 labels of 4 bits, low
 *             nibble first, row-major
 * all little-endian, the whole deflated (zlib) after an 8-byte header "DSGZ" + inflated size. */
int app_forest_parse(const unsigned char *data, size_t len, app_forest **out)
{
  const size_t g2 = APP_FOREST_OUT * APP_FOREST_OUT;
  *out = NULL;
  if (len < 8 || memcmp(data, "DSGZ", 4) != 0)
    return dsg_error_set(DSG_ERR_FORMAT, "the edge forest's model is not a diaseg forest");
  const uLongf size = rd32(data + 4);
  if (size > APP_FOREST_MAX_BYTES) /* a damaged header asks for no gigabytes */
    return dsg_error_set(DSG_ERR_FORMAT, "the edge forest's model is damaged (%lu bytes inflated)",
                         (unsigned long)size);
  unsigned char *raw = malloc(size ? size : 1);
  app_forest *F = calloc(1, sizeof(*F));
  int status = DSG_OK;
  if (!raw || !F) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the edge forest");
    goto fail;
  }
  uLongf got = size;
  if (uncompress(raw, &got, data + 8, (uLong)(len - 8)) != Z_OK || got != size || size < 20 ||
      memcmp(raw, "DSGF", 4) != 0 || rd32(raw + 4) != 2)
    goto damaged;
  F->ntrees = (int)rd32(raw + 8);
  F->nnodes = rd32(raw + 12);
  F->nleaves = rd32(raw + 16);
  if (F->ntrees < 1 || F->ntrees > 64 || F->nnodes < 1 || F->nleaves < 1 ||
      20 + 4 * ((size_t)F->ntrees + 1) + 8 * (size_t)F->nnodes + F->nleaves > size)
    goto damaged;
  const size_t nn = F->nnodes, nl = F->nleaves;
  const unsigned char *p = raw + 20, *end = raw + size;
  /* the leaves' patches: count the ones with 2 segments or more first */
  size_t nmulti = 0;
  {
    const unsigned char *q = p + 4 * ((size_t)F->ntrees + 1) + 8 * nn;
    for (size_t l = 0; l < nl; l++) {
      if (q >= end || q[0] < 1 || q[0] > APP_FOREST_MAX_SEGS)
        goto damaged;
      const size_t step = q[0] > 1 ? 1 + g2 / 2 : 1;
      nmulti += q[0] > 1;
      if ((size_t)(end - q) < step)
        goto damaged;
      q += step;
    }
    if (q != end)
      goto damaged;
  }
  F->nmulti = (uint32_t)nmulti;
  F->fid = malloc(nn * sizeof(*F->fid));
  F->thr = malloc(nn * sizeof(*F->thr));
  F->child = malloc(nn * sizeof(*F->child));
  F->leaf = malloc(nn * sizeof(*F->leaf));
  F->nsegs = malloc(nl);
  F->seg_at = malloc(nl * sizeof(*F->seg_at));
  F->segs = malloc((nmulti ? nmulti : 1) * g2);
  F->packed = malloc((nmulti ? nmulti : 1) * g2 / 2);
  F->ring_start = malloc((nmulti ? nmulti : 1) * (APP_FOREST_SHARPEN + 2) * sizeof(*F->ring_start));
  F->ring = malloc((nmulti ? nmulti : 1) * g2);
  if (!F->fid || !F->thr || !F->child || !F->leaf || !F->nsegs || !F->seg_at || !F->segs ||
      !F->packed || !F->ring_start || !F->ring) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the edge forest");
    goto fail;
  }
  for (int t = 0; t <= F->ntrees; t++, p += 4) {
    F->tree[t] = rd32(p);
    if (F->tree[t] > nn || (t > 0 && F->tree[t] <= F->tree[t - 1]) || (t == 0 && F->tree[0]) ||
        (t == F->ntrees && F->tree[t] != nn))
      goto damaged;
  }
  for (size_t k = 0; k < nn; k++, p += 8) {
    F->fid[k] = (uint16_t)(p[0] | p[1] << 8);
    F->thr[k] = (int16_t)(uint16_t)(p[2] | p[3] << 8);
    F->child[k] = rd32(p + 4);
    F->leaf[k] = F->child[k] ? 0 : (uint32_t)F->fid[k] | (uint32_t)(uint16_t)F->thr[k] << 16;
  }
  /* every child inside its own tree and after its parent (so that a descent ends), every leaf
   * index and feature in range */
  for (int t = 0; t < F->ntrees; t++)
    for (uint32_t k = F->tree[t]; k < F->tree[t + 1]; k++) {
      const uint32_t c = F->child[k];
      if (c ? c <= k || c + 1 >= F->tree[t + 1] || F->fid[k] >= APP_FOREST_FEATURES
            : F->leaf[k] >= nl)
        goto damaged;
    }
  uint32_t m = 0;
  for (size_t l = 0; l < nl; l++) {
    F->nsegs[l] = p[0];
    F->seg_at[l] = UINT32_MAX;
    if (p[0] == 1) {
      p++;
      continue;
    }
    unsigned char *s = F->segs + (size_t)m * g2;
    memcpy(F->packed + (size_t)m * g2 / 2, p + 1, g2 / 2);
    for (size_t i = 0; i < g2 / 2; i++) {
      s[2 * i] = p[1 + i] & 15;
      s[2 * i + 1] = p[1 + i] >> 4;
    }
    p += 1 + g2 / 2;
    for (size_t i = 0; i < g2; i++)
      if (s[i] >= F->nsegs[l])
        goto damaged;
    F->seg_at[l] = m++;
  }
  /* every patch's rings in g2 bytes of its own (its pixels, at most), the patches in parallel */
#pragma omp parallel for schedule(static)
  for (long k = 0; k < (long)nmulti; k++) {
    uint32_t *b = F->ring_start + (size_t)k * (APP_FOREST_SHARPEN + 2);
    leaf_rings(F->segs + (size_t)k * g2, F->ring + (size_t)k * g2, b);
    for (int j = 0; j < APP_FOREST_SHARPEN + 2; j++)
      b[j] += (uint32_t)((size_t)k * g2);
  }
  free(raw);
  *out = F;
  return DSG_OK;
damaged:
  status = dsg_error_set(DSG_ERR_FORMAT, "the edge forest's model is damaged");
fail:
  free(raw);
  app_forest_free(F);
  return status;
}

/* The model that comes with the library (app/lib/forest/edges.dsf, embedded by the build),
 * parsed once per process. */
extern const unsigned char app_forest_blob[];
extern const unsigned char app_forest_blob_end[];

static pthread_once_t default_once = PTHREAD_ONCE_INIT;
static app_forest *default_forest;
static int default_status;
static char default_message[256];

static void default_free(void) { app_forest_free(default_forest); }

static void default_load(void)
{
  default_status = app_forest_parse(
      app_forest_blob, (size_t)(app_forest_blob_end - app_forest_blob), &default_forest);
  if (default_status != DSG_OK)
    snprintf(default_message, sizeof(default_message), "%s", dsg_error_message());
  else
    atexit(default_free); /* LeakSanitizer sees nothing held */
}

int app_forest_default(const app_forest **out)
{
  pthread_once(&default_once, default_load);
  if (default_status != DSG_OK) {
    *out = NULL;
    return dsg_error_set(default_status, "%s", default_message);
  }
  *out = default_forest;
  return DSG_OK;
}

/* ---- detection --------------------------------------------------------------------------- */

uint32_t app_forest_descend(const app_forest *F, int tree, const unsigned char *reg,
                            const unsigned char *sim, size_t at, const app_forest_lookup *lk)
{
  uint32_t k = F->tree[tree];
  while (F->child[k]) {
    const int f = F->fid[k];
    const int v = f < APP_FOREST_REG_FEATURES ? (int)reg[lk->a[f] + at]
                                              : (int)sim[lk->a[f] + at] - (int)sim[lk->b[f] + at];
    k = v < F->thr[k] ? F->child[k] : F->child[k] + 1;
  }
  return F->leaf[k];
}

int app_forest_lookup_init(int cw, int ch, app_forest_lookup *lk)
{
  lk->a = malloc(APP_FOREST_FEATURES * sizeof(*lk->a));
  lk->b = malloc(APP_FOREST_FEATURES * sizeof(*lk->b));
  if (!lk->a || !lk->b) {
    free(lk->a);
    free(lk->b);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the edge forest's feature table");
  }
  for (int f = 0; f < APP_FOREST_FEATURES; f++) {
    int z, a, b;
    app_forest_feature_at(f, cw, ch, &z, &a, &b);
    lk->a[f] = a;
    lk->b[f] = b;
  }
  return DSG_OK;
}

void app_forest_lookup_free(app_forest_lookup *lk)
{
  free(lk->a);
  free(lk->b);
  lk->a = lk->b = NULL;
}

/* One leaf's sharpened boundary at patch (r, c), added into acc (the padded image's size, less
 * the patch's margin: (rows - 1) * stride + 16 wide... see app_forest_detect). */
static void leaf_edges(const app_forest *F, uint32_t l, const float *color,
                       const app_forest_grid *g, int r, int c, int sharpen, float *acc, int aw)
{
  const int G = APP_FOREST_OUT, m = F->nsegs[l];
  if (m < 2)
    return;
  const size_t pn = (size_t)g->pw * g->ph, at = F->seg_at[l];
  unsigned char S[APP_FOREST_OUT * APP_FOREST_OUT];
  memcpy(S, F->segs + at * G * G, sizeof(S));
  const unsigned char *ring = F->ring;
  const uint32_t *bounds = F->ring_start + at * (APP_FOREST_SHARPEN + 2);
  /* the output patch's top-left pixel in the padded image */
  const int oy = r * APP_FOREST_STRIDE + (APP_FOREST_PATCH - G) / 2,
            ox = c * APP_FOREST_STRIDE + (APP_FOREST_PATCH - G) / 2;
  if (sharpen > 0) {
    float mu[APP_FOREST_MAX_SEGS][3] = {{0}}, cnt[APP_FOREST_MAX_SEGS] = {0};
    for (int y = 0; y < G; y += 2)
      for (int x = 0; x < G; x += 2) {
        const int s = S[y * G + x];
        const size_t p = (size_t)(oy + y) * g->pw + ox + x;
        cnt[s] += 1.0f;
        for (int k = 0; k < 3; k++)
          mu[s][k] += color[k * pn + p];
      }
    for (int s = 0; s < m; s++)
      if (cnt[s] > 0.0f)
        for (int k = 0; k < 3; k++)
          mu[s][k] /= cnt[s];
    for (uint32_t t = bounds[0]; t < bounds[sharpen]; t++) {
      const int i = ring[t], y = i / G, x = i % G;
      const size_t p = (size_t)(oy + y) * g->pw + ox + x;
      const int nb[4] = {x > 0 ? i - 1 : i, x + 1 < G ? i + 1 : i, y > 0 ? i - G : i,
                         y + 1 < G ? i + G : i};
      float best = 1e30f;
      int arg = S[i];
      for (int q = 0; q < 4; q++) {
        const int s = S[nb[q]];
        if (cnt[s] == 0.0f)
          continue;
        float e = 0.0f;
        for (int k = 0; k < 3; k++) {
          const float d = mu[s][k] - color[k * pn + p];
          e += d * d;
        }
        if (e < best) {
          best = e;
          arg = s;
        }
      }
      S[i] = (unsigned char)arg;
    }
  }
  const uint32_t upto = bounds[sharpen > 0 ? sharpen + 1 : 1];
  float *dst = acc + (size_t)(r * APP_FOREST_STRIDE) * aw + c * APP_FOREST_STRIDE;
  for (uint32_t t = bounds[0]; t < upto; t++) {
    const int i = ring[t], y = i / G, x = i % G, s = S[i];
    if ((x > 0 && S[i - 1] != s) || (x + 1 < G && S[i + 1] != s) || (y > 0 && S[i - G] != s) ||
        (y + 1 < G && S[i + G] != s))
      dst[(size_t)y * aw + x] += 1.0f;
  }
}

int app_forest_detect(const app_forest *F, const dsg_image *img, int sharpen,
                      const volatile sig_atomic_t *cancel, float *E)
{
  app_forest_grid g;
  app_forest_geometry(img->width, img->height, &g);
  const size_t cn = (size_t)g.cw * g.ch, pn = (size_t)g.pw * g.ph;
  const int G = APP_FOREST_OUT, aw = (g.cols - 1) * APP_FOREST_STRIDE + G,
            ah = (g.rows - 1) * APP_FOREST_STRIDE + G;
  unsigned char *reg = malloc(APP_FOREST_CHANNELS * cn), *sim = malloc(APP_FOREST_CHANNELS * cn);
  float *color = sharpen > 0 ? malloc(3 * pn * sizeof(float)) : NULL;
  float *acc = calloc((size_t)aw * ah, sizeof(float));
  uint32_t *leaves = malloc((size_t)g.rows * g.cols * APP_FOREST_TREES_EVAL * sizeof(uint32_t));
  float *tmp = malloc((size_t)img->width * img->height * sizeof(float));
  app_forest_lookup lk = {NULL, NULL};
  int status = DSG_OK;
  if (sharpen > APP_FOREST_SHARPEN)
    sharpen = APP_FOREST_SHARPEN;
  if (!reg || !sim || (sharpen > 0 && !color) || !acc || !leaves || !tmp) {
    status =
        dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the edge forest's maps of a %d x %d image",
                      img->width, img->height);
    goto out;
  }
  status = app_forest_channels(img, &g, reg, sim, color, NULL);
  if (status == DSG_OK)
    status = app_forest_lookup_init(g.cw, g.ch, &lk);
  if (status != DSG_OK)
    goto out;
  const int te = F->ntrees < APP_FOREST_TREES_EVAL ? F->ntrees : APP_FOREST_TREES_EVAL;
#pragma omp parallel for schedule(static)
  for (int r = 0; r < g.rows; r++)
    for (int c = 0; c < g.cols; c++)
      for (int t = 0; t < te; t++) {
        const int tree = ((r + c) % 2 * te + t) % F->ntrees;
        leaves[((size_t)r * g.cols + c) * te + t] =
            app_forest_descend(F, tree, reg, sim, (size_t)r * g.cw + c, &lk);
      }
  if (cancel && *cancel) {
    status = dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                           (int)*cancel);
    goto out;
  }
  /* patches 8 rows apart write disjoint rows: each pass of the threads takes one row in 8 */
  for (int r0 = 0; r0 < G / APP_FOREST_STRIDE; r0++) {
#pragma omp parallel for schedule(dynamic, 1)
    for (int r = r0; r < g.rows; r += G / APP_FOREST_STRIDE)
      for (int c = 0; c < g.cols; c++)
        for (int t = 0; t < te; t++)
          leaf_edges(F, leaves[((size_t)r * g.cols + c) * te + t], color, &g, r, c, sharpen, acc,
                     aw);
  }
  /* the map of the image's own pixels: acc's (y, x) is the padded image's (y + 8, x + 8), the
   * image's (y - 8, x - 8); each pixel is written by up to te * 64 leaves */
  const float norm =
      APP_FOREST_GAIN / (float)(te * (G / APP_FOREST_STRIDE) * (G / APP_FOREST_STRIDE));
  const int off = g.pad - (APP_FOREST_PATCH - G) / 2;
#pragma omp parallel for schedule(static)
  for (int y = 0; y < img->height; y++)
    for (int x = 0; x < img->width; x++)
      E[(size_t)y * img->width + x] = acc[(size_t)(y + off) * aw + x + off] * norm;
  app_forest_triangle(E, img->width, img->height, 1, tmp);
out:
  app_forest_lookup_free(&lk);
  free(reg);
  free(sim);
  free(color);
  free(acc);
  free(leaves);
  free(tmp);
  return status;
}

/* ---- on a device ------------------------------------------------------------------------ */

/* spmv's forest (kernels/forest.cl) has this file's shapes; the numbers go over as data */
_Static_assert(APP_FOREST_SHRINK == SPMV_FOREST_SHRINK && APP_FOREST_PATCH == SPMV_FOREST_PATCH &&
                   APP_FOREST_OUT == SPMV_FOREST_OUT && APP_FOREST_STRIDE == SPMV_FOREST_STRIDE &&
                   APP_FOREST_CHANNELS == SPMV_FOREST_CHANNELS &&
                   APP_FOREST_MAX_SEGS == SPMV_FOREST_MAX_SEGS &&
                   APP_FOREST_SHARPEN <= SPMV_FOREST_SHARPEN_MAX && APP_FOREST_ORIENTS == 4,
               "the device's forest has the library's shapes");

/* The grid and the recipe of a width x height scale for the device (spmv_forest_params), its
 * features' offsets in lk (the caller frees them: app_forest_lookup_free); linear: the CIELAB
 * table (app_contour_binning's). */
static int device_params(const app_forest *F, int width, int height, int sharpen,
                         const float *linear, app_forest_lookup *lk, spmv_forest_params *p)
{
  app_forest_grid g;
  app_forest_geometry(width, height, &g);
  const int status = app_forest_lookup_init(g.cw, g.ch, lk);
  if (status != DSG_OK)
    return status;
  *p = (spmv_forest_params){.pad = g.pad,
                            .pw = g.pw,
                            .ph = g.ph,
                            .rows = g.rows,
                            .cols = g.cols,
                            .linear = linear,
                            .norm_radius = APP_FOREST_NORM_RADIUS,
                            .reg_radius = APP_FOREST_REG_SMOOTH,
                            .sim_radius = APP_FOREST_SIM_SMOOTH,
                            .color_radius = 1,
                            .nfeatures = APP_FOREST_FEATURES,
                            .nregular = APP_FOREST_REG_FEATURES,
                            .feat_a = lk->a,
                            .feat_b = lk->b,
                            .trees_eval = F->ntrees < APP_FOREST_TREES_EVAL ? F->ntrees
                                                                            : APP_FOREST_TREES_EVAL,
                            .sharpen = sharpen < 0                    ? 0
                                       : sharpen < APP_FOREST_SHARPEN ? sharpen
                                                                      : APP_FOREST_SHARPEN,
                            .gain = APP_FOREST_GAIN};
  for (int k = 0; k < 3; k++) {
    p->lo[k] = lab_lo[k];
    p->hi[k] = lab_hi[k];
  }
  memcpy(p->scale, channel_scale, sizeof(p->scale));
  return DSG_OK;
}

/* What the device's forest is handed for up to 3 scales: the trees, each scale's grid and recipe,
 * the features' offsets and the CIELAB table (app_contour_binning's) that the recipes point to. */
typedef struct device_setup {
  spmv_forest_model m;
  spmv_forest_params p[3];
  app_forest_lookup lk[3];
  app_contour_binning binning;
} device_setup;

static void device_setup_free(device_setup *s)
{
  if (!s)
    return;
  for (int k = 0; k < 3; k++)
    app_forest_lookup_free(&s->lk[k]);
  free(s);
}

/* *out (device_setup_free) for the scales of size[k] (width, height; 0 x 0: the scale is not
 * run, its p[k] left unset), k < 3. */
static int device_setup_make(const app_forest *F, const int size[3][2], int sharpen,
                             device_setup **out)
{
  device_setup *s = calloc(1, sizeof(*s));
  int status = s ? DSG_OK : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the forest's tables");
  if (status == DSG_OK) {
    app_contour_binning_init(&s->binning);
    s->m = (spmv_forest_model){F,        F->ntrees,  F->tree,  F->nnodes, F->fid,    F->thr,
                               F->child, F->nleaves, F->nsegs, F->seg_at, F->nmulti, F->packed};
  }
  for (int k = 0; k < 3 && status == DSG_OK; k++)
    if (size[k][0] > 0)
      status =
          device_params(F, size[k][0], size[k][1], sharpen, s->binning.linear, &s->lk[k], &s->p[k]);
  if (status != DSG_OK) {
    device_setup_free(s);
    s = NULL;
  }
  *out = s;
  return status;
}

int app_forest_detect_cl(spmv_cl_image *im, const app_forest *F, const dsg_image *img, int sharpen,
                         float *E, const spmv_forest_probe *probe)
{
  const int size[3][2] = {{img->width, img->height}, {0, 0}, {0, 0}};
  device_setup *s;
  int status = device_setup_make(F, size, sharpen, &s);
  if (status == DSG_OK)
    status = spmv_cl_forest(im, &s->m, &s->p[0], img->pixels, img->channels, img->width,
                            img->height, E, probe, NULL);
  device_setup_free(s);
  return status;
}

/* app_forest_contours on the device: the scales and the thinning in one call
 * (spmv_cl_forest_contours); the half image is shrunk here, as app_forest_detect_ms shrinks it. */
static int contours_cl(spmv_cl_image *im, const app_forest *F, const dsg_image *img, int scales,
                       float *strength, float *soft)
{
  const int w = img->width, h = img->height, with_half = scales == 3 && w >= 2 && h >= 2;
  const int size[3][2] = {{w, h},
                          {with_half ? w / 2 : 0, with_half ? h / 2 : 0},
                          {scales == 3 ? 2 * w : 0, scales == 3 ? 2 * h : 0}};
  const spmv_forest_thinning t = {APP_FOREST_ORIENT_RADIUS, APP_CONTOUR_ORIENTATIONS,
                                  APP_CONTOUR_REACH, APP_FOREST_BORDER, APP_FOREST_TOP};
  dsg_image half = {0, 0, 0, NULL};
  device_setup *s;
  int status = device_setup_make(F, size, APP_FOREST_SHARPEN, &s);
  if (status == DSG_OK && with_half)
    status = app_image_shrink(img, w / 2, h / 2, &half);
  if (status == DSG_OK)
    status = spmv_cl_forest_contours(im, &s->m, s->p, scales, img->pixels, half.pixels,
                                     img->channels, w, h, &t, strength, soft, NULL);
  device_setup_free(s);
  dsg_image_free(&half);
  return status;
}

/* The direction of the boundary at each pixel from the map's curvature: the Hessian of E smoothed
 * by the triangle of 4 has its most negative curvature across a crest, so the crest runs along
 * the eigenvector of the larger eigenvalue, at 0.5 atan2(2 dxy, dxx - dyy) in [0, pi) (x right,
 * y down), rounded to the nearest of the APP_CONTOUR_ORIENTATIONS. */
int app_forest_orientation(const float *E, int w, int h, unsigned char *orientation)
{
  const size_t n = (size_t)w * h;
  const float step = (float)(M_PI / APP_CONTOUR_ORIENTATIONS);
  float *s = malloc(n * sizeof(float)), *tmp = malloc(n * sizeof(float));
  if (!s || !tmp) {
    free(s);
    free(tmp);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the orientation of %zu pixels", n);
  }
  memcpy(s, E, n * sizeof(float));
  app_forest_triangle(s, w, h, APP_FOREST_ORIENT_RADIUS, tmp);
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int xl = x > 0 ? x - 1 : x, xr = x + 1 < w ? x + 1 : x;
      const int yu = y > 0 ? y - 1 : y, yd = y + 1 < h ? y + 1 : y;
      const float c = s[(size_t)y * w + x];
      const float dxx = s[(size_t)y * w + xr] - 2.0f * c + s[(size_t)y * w + xl];
      const float dyy = s[(size_t)yd * w + x] - 2.0f * c + s[(size_t)yu * w + x];
      const float dxy = 0.25f * (s[(size_t)yd * w + xr] - s[(size_t)yd * w + xl] -
                                 s[(size_t)yu * w + xr] + s[(size_t)yu * w + xl]);
      float th = 0.5f * atan2f(2.0f * dxy, dxx - dyy);
      if (th < 0.0f)
        th += (float)M_PI;
      if (th >= (float)M_PI)
        th -= (float)M_PI;
      const int o = (int)floorf(th / step + 0.5f);
      orientation[(size_t)y * w + x] = (unsigned char)(o % APP_CONTOUR_ORIENTATIONS);
    }
  free(s);
  free(tmp);
  return DSG_OK;
}

void app_forest_gpb(const float *E, const float *spectral, double weight, int w, int h, float *out)
{
  const size_t n = (size_t)w * h;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float best = 0.0f;
    for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++)
      best = spectral[(size_t)o * n + i] > best ? spectral[(size_t)o * n + i] : best;
    out[i] = E[i] + (float)weight * best;
  }
}

int app_forest_thin(const float *E, int w, int h, float *strength)
{
  const size_t n = (size_t)w * h;
  unsigned char *orientation = malloc(n);
  if (!orientation)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of a %d x %d image", w, h);
  int status = app_forest_orientation(E, w, h, orientation);
  if (status == DSG_OK) {
    app_contour_thin(E, orientation, w, h, strength);
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int d = x < y ? x : y;
        d = w - 1 - x < d ? w - 1 - x : d;
        d = h - 1 - y < d ? h - 1 - y : d;
        float *v = strength + (size_t)y * w + x;
        if (d < APP_FOREST_BORDER)
          *v *= (float)d / APP_FOREST_BORDER;
        /* in [0, 1) as the gradients' strength: the map's sums reach a little past 1 on sharp
         * steps */
        *v = *v < APP_FOREST_TOP ? *v : APP_FOREST_TOP;
      }
  }
  free(orientation);
  return status;
}

int app_forest_detect_ms(const app_forest *F, const dsg_image *img, int sharpen,
                         const volatile sig_atomic_t *cancel, float *E)
{
  const int w = img->width, h = img->height;
  const size_t n = (size_t)w * h;
  dsg_image half = {0, 0, 0, NULL}, twice = {0, 0, 0, NULL};
  float *tmp = malloc(4 * n * sizeof(float));
  int status = tmp ? app_forest_detect(F, img, sharpen, cancel, E)
                   : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the forest's scales");
  if (status == DSG_OK && w >= 2 && h >= 2) {
    status = app_image_shrink(img, w / 2, h / 2, &half);
    if (status == DSG_OK)
      status = app_forest_detect(F, &half, sharpen, cancel, tmp + n);
    if (status == DSG_OK) {
      app_upsample_field(tmp + n, w / 2, h / 2, w, h, tmp);
      for (size_t i = 0; i < n; i++)
        E[i] += tmp[i];
    }
  } else if (status == DSG_OK) {
    for (size_t i = 0; i < n; i++)
      E[i] *= 2.0f;
  }
  if (status == DSG_OK)
    status = dsg_image_resize(img, 2 * w, 2 * h, &twice);
  if (status == DSG_OK)
    status = app_forest_detect(F, &twice, sharpen, cancel, tmp);
  if (status == DSG_OK)
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        const float *q = tmp + (size_t)(2 * y) * (2 * w) + 2 * x;
        E[(size_t)y * w + x] =
            (E[(size_t)y * w + x] + 0.25f * (q[0] + q[1] + q[2 * w] + q[2 * w + 1])) / 3.0f;
      }
  dsg_image_free(&half);
  dsg_image_free(&twice);
  free(tmp);
  return status;
}

int app_forest_contours(spmv_cl_image *im, const dsg_image *img, int scales,
                        const volatile sig_atomic_t *cancel, float *strength, float *soft)
{
  const int w = img->width, h = img->height;
  const size_t n = (size_t)w * h;
  const app_forest *F;
  float *E = soft ? soft : malloc(n * sizeof(float));
  int status = strength || soft ? app_forest_default(&F)
                                : dsg_error_set(DSG_ERR_INVALID, "the forest's contours need a "
                                                                 "strength or a map to make");
  if (status == DSG_OK && !E)
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of a %d x %d image", w, h);
  if (status == DSG_OK && cancel && *cancel)
    status = dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                           (int)*cancel);
  if (status == DSG_OK && im)
    status = contours_cl(im, F, img, scales, strength, E);
  else if (status == DSG_OK) {
    status = scales == 3 ? app_forest_detect_ms(F, img, APP_FOREST_SHARPEN, cancel, E)
                         : app_forest_detect(F, img, APP_FOREST_SHARPEN, cancel, E);
    if (status == DSG_OK && strength)
      status = app_forest_thin(E, w, h, strength);
  }
  if (E != soft)
    free(E);
  return status;
}

/* ---- a map made ahead of its run (dsg_presolve) ------------------------------------------- */

static pthread_mutex_t ahead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  dsg_image img;   /* the pixels it was made from */
  float *strength; /* app_forest_contours' maps at APP_FOREST_SCALES; strength NULL where the */
  float *soft;     /* put was not asked to thin (take thins soft then, as the host path does) */
} ahead;

static void ahead_clear(void)
{
  dsg_image_free(&ahead.img);
  free(ahead.strength);
  free(ahead.soft);
  ahead.strength = ahead.soft = NULL;
}

int app_forest_ahead_put(const dsg_image *img, int thin, const volatile sig_atomic_t *cancel)
{
  const size_t n = (size_t)img->width * img->height, bytes = n * (size_t)img->channels;
  dsg_image copy = {img->width, img->height, img->channels, malloc(bytes ? bytes : 1)};
  float *strength = thin ? malloc(n * sizeof(float)) : NULL, *soft = malloc(n * sizeof(float));
  int status = copy.pixels && (strength || !thin) && soft
                   ? app_forest_contours(NULL, img, APP_FOREST_SCALES, cancel, strength, soft)
                   : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of a %d x %d image",
                                   img->width, img->height);
  if (status == DSG_OK) {
    memcpy(copy.pixels, img->pixels, bytes);
    pthread_mutex_lock(&ahead_lock);
    ahead_clear();
    ahead.img = copy;
    ahead.strength = strength;
    ahead.soft = soft;
    pthread_mutex_unlock(&ahead_lock);
    return DSG_OK;
  }
  free(copy.pixels);
  free(strength);
  free(soft);
  return status;
}

int app_forest_ahead_take(const dsg_image *img, float *strength, float *soft)
{
  const size_t n = (size_t)img->width * img->height;
  int taken = 0;
  pthread_mutex_lock(&ahead_lock);
  if (ahead.soft && app_image_same(&ahead.img, img)) {
    taken = 1;
    if (strength && ahead.strength)
      memcpy(strength, ahead.strength, n * sizeof(float));
    else if (strength) /* made without its thinning: thinned here, as app_forest_contours would */
      taken = app_forest_thin(ahead.soft, img->width, img->height, strength) == DSG_OK;
    if (soft)
      memcpy(soft, ahead.soft, n * sizeof(float));
    ahead_clear();
  }
  pthread_mutex_unlock(&ahead_lock);
  return taken;
}
