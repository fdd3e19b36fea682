/* Pictures: segment colours, the boundary overlay, and viridis pictures of eigenvectors. */
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* viridis (CC0, van der Walt & Smith), 33 evenly spaced samples of matplotlib's 256-entry table */
static const unsigned char viridis33[33][3] = {
    {68, 1, 84},    {71, 13, 96},   {72, 24, 106},  {72, 35, 116},  {71, 45, 123},  {69, 55, 129},
    {66, 64, 134},  {62, 73, 137},  {59, 82, 139},  {55, 91, 141},  {51, 99, 141},  {47, 107, 142},
    {44, 114, 142}, {41, 122, 142}, {38, 130, 142}, {35, 137, 142}, {33, 145, 140}, {31, 151, 139},
    {31, 159, 136}, {33, 166, 133}, {39, 173, 129}, {49, 181, 123}, {61, 188, 116}, {76, 194, 108},
    {92, 200, 99},  {110, 206, 88}, {129, 211, 77}, {149, 216, 64}, {170, 220, 50}, {192, 223, 37},
    {213, 226, 26}, {234, 229, 26}, {253, 231, 37}};

void dsg_viridis(double t, unsigned char rgb[3])
{
  double s;
  int i;
  if (!(t > 0.0))
    t = 0.0; /* NaN too */
  if (t > 1.0)
    t = 1.0;
  s = t * 32.0;
  i = (int)s;
  if (i >= 32)
    i = 31;
  s -= i;
  for (int c = 0; c < 3; c++)
    rgb[c] = (unsigned char)(viridis33[i][c] * (1.0 - s) + viridis33[i + 1][c] * s + 0.5);
}

/* Tableau 20, dark shades first: distinct, colour-blind-aware, and familiar. */
static const unsigned char palette20[20][3] = {
    {31, 119, 180},  {255, 127, 14},  {44, 160, 44},   {214, 39, 40},   {148, 103, 189},
    {140, 86, 75},   {227, 119, 194}, {127, 127, 127}, {188, 189, 34},  {23, 190, 207},
    {174, 199, 232}, {255, 187, 120}, {152, 223, 138}, {255, 152, 150}, {197, 176, 213},
    {196, 156, 148}, {247, 182, 210}, {199, 199, 199}, {219, 219, 141}, {158, 218, 229}};

void dsg_label_color(int label, unsigned char rgb[3])
{
  if (label >= 0 && label < 20) {
    memcpy(rgb, palette20[label], 3);
    return;
  }
  /* golden-ratio hue steps, fixed saturation and value */
  double h = fmod(0.1 + (double)label * 0.6180339887498949, 1.0) * 6.0, s = 0.65, v = 0.9;
  int i = (int)h;
  double f = h - i, p = v * (1 - s), q = v * (1 - s * f), t = v * (1 - s * (1 - f));
  double r, g, b;
  switch (i % 6) {
  case 0:
    r = v;
    g = t;
    b = p;
    break;
  case 1:
    r = q;
    g = v;
    b = p;
    break;
  case 2:
    r = p;
    g = v;
    b = t;
    break;
  case 3:
    r = p;
    g = q;
    b = v;
    break;
  case 4:
    r = t;
    g = p;
    b = v;
    break;
  default:
    r = v;
    g = p;
    b = q;
    break;
  }
  rgb[0] = (unsigned char)(r * 255 + 0.5);
  rgb[1] = (unsigned char)(g * 255 + 0.5);
  rgb[2] = (unsigned char)(b * 255 + 0.5);
}

static int alloc_rgb(int width, int height, unsigned char **rgb)
{
  size_t bytes = (size_t)width * (size_t)height * 3;
  *rgb = malloc(bytes);
  if (!*rgb)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", width, height);
  return DSG_OK;
}

int dsg_picture_labels(const int32_t *labels, int width, int height, unsigned char **rgb)
{
  const size_t n = (size_t)width * (size_t)height;
  int status = alloc_rgb(width, height, rgb);
  if (status != DSG_OK)
    return status;
  for (size_t i = 0; i < n; i++)
    dsg_label_color(labels[i], *rgb + 3 * i);
  return DSG_OK;
}

int dsg_picture_overlay(const dsg_image *img, const int32_t *labels, unsigned char **rgb)
{
  static const unsigned char edge[3] = {255, 255, 0};
  const int w = img->width, h = img->height, c = img->channels;
  int status = alloc_rgb(w, h, rgb);
  if (status != DSG_OK)
    return status;
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const unsigned char *p = img->pixels + i * (size_t)c;
      unsigned char *o = *rgb + 3 * i, tint[3];
      const int l = labels[i];
      const int boundary = (x + 1 < w && labels[i + 1] != l) || (y + 1 < h && labels[i + w] != l) ||
                           (x > 0 && labels[i - 1] != l) || (y > 0 && labels[i - w] != l);
      if (boundary) {
        memcpy(o, edge, 3);
        continue;
      }
      dsg_label_color(l, tint);
      for (int k = 0; k < 3; k++) {
        int v = c >= 3 ? p[k] : p[0];
        o[k] = (unsigned char)((v * 3 + tint[k] + 2) / 4); /* 75% image, 25% segment colour */
      }
    }
  }
  return DSG_OK;
}

/* Approximate q-quantile of finite values via a 4096-bin histogram between lo and hi. */
static double quantile(const float *v, size_t n, double lo, double hi, double q)
{
  enum { BINS = 4096 };
  size_t hist[BINS] = {0}, total = 0, acc = 0;
  if (!(hi > lo))
    return lo;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i]))
      continue;
    int b = (int)((v[i] - lo) / (hi - lo) * (BINS - 1));
    hist[b < 0 ? 0 : b >= BINS ? BINS - 1 : b]++;
    total++;
  }
  for (int b = 0; b < BINS; b++) {
    acc += hist[b];
    if ((double)acc >= q * (double)total)
      return lo + (hi - lo) * (b + 0.5) / (BINS - 1);
  }
  return hi;
}

int dsg_picture_field(const float *field, int width, int height, unsigned char **rgb)
{
  const size_t n = (size_t)width * (size_t)height;
  double lo = INFINITY, hi = -INFINITY, a, b;
  int status = alloc_rgb(width, height, rgb);
  if (status != DSG_OK)
    return status;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(field[i]))
      continue;
    lo = field[i] < lo ? field[i] : lo;
    hi = field[i] > hi ? field[i] : hi;
  }
  a = quantile(field, n, lo, hi, 0.01);
  b = quantile(field, n, lo, hi, 0.99);
  if (!(b > a)) {
    a = lo;
    b = hi > lo ? hi : lo + 1.0;
  }
  for (size_t i = 0; i < n; i++)
    dsg_viridis(((double)field[i] - a) / (b - a), *rgb + 3 * i);
  return DSG_OK;
}
