/* The working resolution: a photo larger than opt->work_pixels is segmented at the largest size
 * of its aspect within that many pixels, and its labels and contours come back at the photo's
 * size, refined against the photo's own pixels (docs/PIPELINE.md, "Working resolution"). */
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Weights of the label refinement: a candidate label's cost at a pixel of the photo is the
 * smallest, over the working pixels of that label in the 4 x 4 window around it, of
 * |colour difference|^2 / SIGMA_COLOUR^2 + |distance in working pixels|^2 / SIGMA_SPACE^2:
 * colour decides within about a working pixel of the coarse boundary, distance beyond it. */
#define APP_REFINE_SIGMA_COLOUR 16.0 /* 8-bit units over the channels' sum of squares */
#define APP_REFINE_SIGMA_SPACE 1.0   /* working pixels */

int app_work_pixels_check(long long work_pixels)
{
  if (work_pixels < 0 || (work_pixels > 0 && work_pixels < DSG_MIN_WORK_PIXELS))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("work_pixels") " %lld is out of range: it must be 0 (full "
                                                  "resolution) or >= %d",
                         work_pixels, DSG_MIN_WORK_PIXELS);
  return DSG_OK;
}

int app_work_size(int width, int height, long long max_pixels, int *work_w, int *work_h)
{
  const double n = (double)width * (double)height;
  double s;
  int w, h;
  *work_w = width;
  *work_h = height;
  if (max_pixels <= 0 || n <= (double)max_pixels)
    return 0;
  s = sqrt((double)max_pixels / n);
  w = (int)floor(width * s);
  h = (int)floor(height * s);
  w = w < 1 ? 1 : w;
  h = h < 1 ? 1 : h;
  while ((long long)w * h > max_pixels) /* rounding: at most a step or two */
    *(w >= h ? &w : &h) -= 1;
  *work_w = w;
  *work_h = h;
  return 1;
}

/* Area-weighted average: each output pixel is the mean of the input over its footprint (partial
 * pixels weighted by their covered fraction), so no input pixel is skipped however large the
 * factor (bilinear sampling aliases there). For shrinking only (width <= src's, height too). Each
 * output column's input columns and their covered fractions are worked out once, not once per
 * row (the same numbers, summed in the same order). */
int app_image_shrink(const dsg_image *src, int width, int height, dsg_image *dst)
{
  const int c = src->channels, W = src->width, H = src->height;
  const double fx = (double)W / width, fy = (double)H / height;
  /* output column x covers input columns first[x] .. first[x] + count[x] - 1, weighted by
   * cover[at[x] ..] */
  const size_t per = (size_t)ceil(fx) + 2; /* input columns one output column can touch */
  int *first = malloc((size_t)width * sizeof(*first)),
      *count = malloc((size_t)width * sizeof(*count));
  double *cover = malloc((size_t)width * per * sizeof(*cover));
  int status = first && count && cover ? dsg_image_from_pixels(dst, width, height, c, NULL)
                                       : dsg_error_set(DSG_ERR_NOMEM,
                                                       "cannot allocate the footprints of a %d x "
                                                       "%d image",
                                                       width, height);
  if (status != DSG_OK) {
    memset(dst, 0, sizeof(*dst));
    goto out_free;
  }
  for (int x = 0; x < width; x++) {
    const double x0 = x * fx, x1 = (x + 1) * fx;
    first[x] = (int)x0;
    count[x] = 0;
    for (int X = (int)x0; X < W && X < x1 && (size_t)count[x] < per; X++)
      cover[(size_t)x * per + (size_t)count[x]++] = fmin(X + 1.0, x1) - fmax((double)X, x0);
  }
#pragma omp parallel for schedule(static)
  for (int y = 0; y < height; y++) {
    const double y0 = y * fy, y1 = (y + 1) * fy;
    double acc[4];
    for (int x = 0; x < width; x++) {
      const double *wx = cover + (size_t)x * per;
      double area = 0.0;
      memset(acc, 0, sizeof(acc));
      for (int Y = (int)y0; Y < H && Y < y1; Y++) {
        const double wy = fmin(Y + 1.0, y1) - fmax((double)Y, y0);
        const unsigned char *row = src->pixels + ((size_t)Y * W + first[x]) * c;
        for (int i = 0; i < count[x]; i++) {
          const double wgt = wy * wx[i];
          const unsigned char *p = row + (size_t)i * c;
          for (int k = 0; k < c; k++)
            acc[k] += wgt * p[k];
          area += wgt;
        }
      }
      for (int k = 0; k < c; k++)
        dst->pixels[((size_t)y * width + x) * c + k] =
            (unsigned char)(area > 0.0 ? acc[k] / area + 0.5 : 0.0);
    }
  }
out_free:
  free(first);
  free(count);
  free(cover);
  return status;
}

/* Where pixel X of a side of `big` pixels falls on a side of `small` pixels (centres onto
 * centres), and the two working pixels around it. */
static double to_work(int X, int big, int small, int *lo, int *hi)
{
  const double f = ((double)X + 0.5) * small / big - 0.5;
  int a = (int)floor(f);
  *lo = a < 0 ? 0 : a > small - 1 ? small - 1 : a;
  *hi = a + 1 > small - 1 ? small - 1 : a + 1 < 0 ? 0 : a + 1;
  return f;
}

/* to_work of every column of a side of `big` pixels: the same numbers, worked out once for all
 * the rows. NULL when out of memory. */
typedef struct work_columns {
  int *lo, *hi;
  double *f;
} work_columns;

static int columns_init(work_columns *c, int big, int small)
{
  c->lo = malloc((size_t)big * sizeof(*c->lo));
  c->hi = malloc((size_t)big * sizeof(*c->hi));
  c->f = malloc((size_t)big * sizeof(*c->f));
  if (!c->lo || !c->hi || !c->f) {
    free(c->lo);
    free(c->hi);
    free(c->f);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the columns of a %d-pixel side", big);
  }
  for (int X = 0; X < big; X++)
    c->f[X] = to_work(X, big, small, &c->lo[X], &c->hi[X]);
  return DSG_OK;
}

static void columns_free(work_columns *c)
{
  free(c->lo);
  free(c->hi);
  free(c->f);
}

static double colour_gap(const unsigned char *a, const unsigned char *b, int colours)
{
  double d = 0.0;
  for (int k = 0; k < colours; k++)
    d += ((double)a[k] - b[k]) * ((double)a[k] - b[k]);
  return d;
}

int app_upsample_labels(const dsg_image *full, const dsg_image *work, const int32_t *labels,
                        int32_t *out)
{
  const int W = full->width, H = full->height, w = work->width, h = work->height;
  const int colours = full->channels >= 3 ? 3 : 1; /* alpha is not a colour */
  const double ic = 1.0 / (APP_REFINE_SIGMA_COLOUR * APP_REFINE_SIGMA_COLOUR);
  const double is = 1.0 / (APP_REFINE_SIGMA_SPACE * APP_REFINE_SIGMA_SPACE);
  work_columns col;
  unsigned char *flat; /* per working pixel: 1 when its 3 x 3 neighbours all share its label */
  if (work->channels != full->channels)
    return dsg_error_set(DSG_ERR_INVALID, "the working image has %d channels, the photo %d",
                         work->channels, full->channels);
  flat = malloc((size_t)w * h);
  if (!flat)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the label refinement of %d x %d", w, h);
  if (columns_init(&col, W, w) != DSG_OK) {
    free(flat);
    return DSG_ERR_NOMEM;
  }
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const int32_t a = labels[(size_t)y * w + x];
      int same = 1;
      for (int qy = y > 0 ? y - 1 : 0; same && qy <= (y < h - 1 ? y + 1 : h - 1); qy++)
        for (int qx = x > 0 ? x - 1 : 0; same && qx <= (x < w - 1 ? x + 1 : w - 1); qx++)
          same = labels[(size_t)qy * w + qx] == a;
      flat[(size_t)y * w + x] = (unsigned char)same;
    }
#pragma omp parallel for schedule(static)
  for (int Y = 0; Y < H; Y++) {
    int y0, y1;
    const double fy = to_work(Y, H, h, &y0, &y1);
    for (int X = 0; X < W; X++) {
      const int x0 = col.lo[X], x1 = col.hi[X];
      const double fx = col.f[X];
      const int32_t a = labels[(size_t)y0 * w + x0];
      const unsigned char *pix = full->pixels + ((size_t)Y * W + X) * full->channels;
      const int qx0 = x0 > 0 ? x0 - 1 : 0, qx1 = x1 < w - 1 ? x1 + 1 : w - 1;
      const int qy0 = y0 > 0 ? y0 - 1 : 0, qy1 = y1 < h - 1 ? y1 + 1 : h - 1;
      int32_t best = a;
      double best_cost = INFINITY;
      /* inside a region: the whole window has one label, i.e. the four nearest working pixels
       * share it and each agrees with its 3 x 3 neighbours. (The four alone are not enough: a
       * working pixel across a boundary mixes both sides' colours and may carry either label, so
       * the photo's pixels under it are decided below.) */
      if (labels[(size_t)y0 * w + x1] == a && labels[(size_t)y1 * w + x0] == a &&
          labels[(size_t)y1 * w + x1] == a && flat[(size_t)y0 * w + x0] &&
          flat[(size_t)y0 * w + x1] && flat[(size_t)y1 * w + x0] && flat[(size_t)y1 * w + x1]) {
        out[(size_t)Y * W + X] = a;
        continue;
      }
      /* near a boundary: the label whose nearby working pixels look most like this pixel */
      for (int qy = qy0; qy <= qy1; qy++) {
        for (int qx = qx0; qx <= qx1; qx++) {
          const size_t q = (size_t)qy * w + qx;
          const double cost = colour_gap(pix, work->pixels + q * work->channels, colours) * ic +
                              ((qx - fx) * (qx - fx) + (qy - fy) * (qy - fy)) * is;
          if (cost < best_cost || (cost == best_cost && labels[q] < best)) {
            best_cost = cost;
            best = labels[q];
          }
        }
      }
      out[(size_t)Y * W + X] = best;
    }
  }
  columns_free(&col);
  free(flat);
  return DSG_OK;
}

/* app_upsample_fields with the columns worked out (col) */
static void upsample_fields_on(const float *src, int count, int w, int h, int W, int H,
                               const work_columns *col, float *dst)
{
  const size_t in = (size_t)w * (size_t)h, out = (size_t)W * (size_t)H;
  /* rows handed out as threads come free (a busy core delays a few rows; the coarse start's
   * lift, coarse.c) */
#pragma omp parallel for schedule(dynamic, 8) collapse(2)
  for (int k = 0; k < count; k++)
    for (int Y = 0; Y < H; Y++) {
      const float *s = src + (size_t)k * in;
      int y0, y1;
      const double fy = to_work(Y, H, h, &y0, &y1), ty = fy < 0.0 ? 0.0 : fy - floor(fy);
      for (int X = 0; X < W; X++) {
        const int x0 = col->lo[X], x1 = col->hi[X];
        const double fx = col->f[X], tx = fx < 0.0 ? 0.0 : fx - floor(fx);
        const double a = s[(size_t)y0 * w + x0], b = s[(size_t)y0 * w + x1],
                     c = s[(size_t)y1 * w + x0], d = s[(size_t)y1 * w + x1];
        dst[(size_t)k * out + (size_t)Y * W + X] =
            (float)((a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty);
      }
    }
}

static void upsample_field_on(const float *src, int w, int h, int W, int H, const work_columns *col,
                              float *dst)
{
  upsample_fields_on(src, 1, w, h, W, H, col, dst);
}

int app_upsample_fields(const float *src, int count, int w, int h, int W, int H, float *dst)
{
  work_columns col;
  if (columns_init(&col, W, w) != DSG_OK)
    return DSG_ERR_NOMEM;
  upsample_fields_on(src, count, w, h, W, H, &col, dst);
  columns_free(&col);
  return DSG_OK;
}

void app_upsample_field(const float *src, int w, int h, int W, int H, float *dst)
{
  work_columns col;
  if (columns_init(&col, W, w) != DSG_OK) { /* out of memory: each column worked out per row */
    dsg_error_clear();
#pragma omp parallel for schedule(static)
    for (int Y = 0; Y < H; Y++) {
      int y0, y1;
      const double fy = to_work(Y, H, h, &y0, &y1), ty = fy < 0.0 ? 0.0 : fy - floor(fy);
      for (int X = 0; X < W; X++) {
        int x0, x1;
        const double fx = to_work(X, W, w, &x0, &x1), tx = fx < 0.0 ? 0.0 : fx - floor(fx);
        const double a = src[(size_t)y0 * w + x0], b = src[(size_t)y0 * w + x1],
                     c = src[(size_t)y1 * w + x0], d = src[(size_t)y1 * w + x1];
        dst[(size_t)Y * W + X] =
            (float)((a * (1 - tx) + b * tx) * (1 - ty) + (c * (1 - tx) + d * tx) * ty);
      }
    }
    return;
  }
  upsample_field_on(src, w, h, W, H, &col, dst);
  columns_free(&col);
}

int app_upsample_contours(const float *src, int w, int h, int W, int H, float *dst)
{
  /* bilinear, then only the crest across the line kept: a one-pixel line at the working size stays
   * one pixel wide at the photo's (a 2-pixel tie keeps its first pixel), with the strength of the
   * strongest working pixel around it */
  float *smooth = malloc((size_t)W * H * sizeof(*smooth));
  work_columns col;
  if (!smooth)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of %d x %d pixels", W, H);
  if (columns_init(&col, W, w) != DSG_OK) {
    free(smooth);
    return DSG_ERR_NOMEM;
  }
  upsample_field_on(src, w, h, W, H, &col, smooth);
#pragma omp parallel for schedule(static)
  for (int Y = 0; Y < H; Y++) {
    int y0, y1;
    to_work(Y, H, h, &y0, &y1);
    for (int X = 0; X < W; X++) {
      const size_t i = (size_t)Y * W + X;
      const float v = smooth[i];
      /* at the border the missing neighbour mirrors the one inside */
      const float l0 = X > 0 ? smooth[i - 1] : -1.0f, r0 = X + 1 < W ? smooth[i + 1] : -1.0f;
      const float u0 = Y > 0 ? smooth[i - W] : -1.0f, d0 = Y + 1 < H ? smooth[i + W] : -1.0f;
      const float l = l0 < 0.0f ? r0 : l0, r = r0 < 0.0f ? l0 : r0;
      const float u = u0 < 0.0f ? d0 : u0, d = d0 < 0.0f ? u0 : d0;
      const int x0 = col.lo[X], x1 = col.hi[X];
      float top;
      dst[i] = 0.0f;
      if (!(v > 0.0f && ((v >= l && v > r) || (v >= u && v > d))))
        continue;
      top = src[(size_t)y0 * w + x0];
      top = fmaxf(top, src[(size_t)y0 * w + x1]);
      top = fmaxf(top, src[(size_t)y1 * w + x0]);
      dst[i] = fmaxf(top, src[(size_t)y1 * w + x1]);
    }
  }
  columns_free(&col);
  free(smooth);
  return DSG_OK;
}
