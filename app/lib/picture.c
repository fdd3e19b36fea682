/* Pictures: segment colours, the boundary overlay, and pictures of eigenvectors through a table
 * of colour maps. */
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* viridis (CC0, van der Walt & Smith), 33 evenly spaced samples of matplotlib's 256-entry table */
static const unsigned char viridis33[33][3] = {
    {68, 1, 84},    {71, 13, 96},   {72, 24, 106},  {72, 35, 116},  {71, 45, 123},  {69, 55, 129},
    {66, 64, 134},  {62, 73, 137},  {59, 82, 139},  {55, 91, 141},  {51, 99, 141},  {47, 107, 142},
    {44, 114, 142}, {41, 122, 142}, {38, 130, 142}, {35, 137, 142}, {33, 145, 140}, {31, 151, 139},
    {31, 159, 136}, {33, 166, 133}, {39, 173, 129}, {49, 181, 123}, {61, 188, 116}, {76, 194, 108},
    {92, 200, 99},  {110, 206, 88}, {129, 211, 77}, {149, 216, 64}, {170, 220, 50}, {192, 223, 37},
    {213, 226, 26}, {234, 229, 26}, {253, 231, 37}};

/* magma (CC0, van der Walt & Smith), 33 evenly spaced samples of matplotlib's 256-entry table */
static const unsigned char magma33[33][3] = {
    {0, 0, 4},       {3, 3, 18},      {10, 8, 34},     {19, 13, 52},    {29, 17, 71},
    {41, 17, 90},    {54, 16, 107},   {68, 15, 118},   {81, 18, 124},   {93, 23, 127},
    {106, 28, 129},  {118, 33, 129},  {131, 38, 129},  {144, 42, 129},  {156, 46, 127},
    {170, 51, 125},  {183, 55, 121},  {194, 59, 117},  {207, 64, 112},  {219, 71, 106},
    {229, 80, 100},  {238, 91, 94},   {244, 105, 92},  {249, 120, 93},  {251, 135, 97},
    {253, 150, 104}, {254, 165, 113}, {254, 180, 123}, {254, 194, 135}, {254, 209, 148},
    {253, 224, 161}, {252, 238, 176}, {252, 253, 191},
};
/* inferno (CC0, van der Walt & Smith), 33 evenly spaced samples of matplotlib's 256-entry table */
static const unsigned char inferno33[33][3] = {
    {0, 0, 4},       {4, 3, 18},      {11, 7, 36},     {21, 11, 55},   {33, 12, 74},
    {47, 10, 91},    {61, 9, 101},    {74, 12, 107},   {87, 16, 110},  {100, 21, 110},
    {113, 25, 110},  {125, 30, 109},  {138, 34, 106},  {151, 39, 102}, {163, 44, 97},
    {176, 49, 91},   {188, 55, 84},   {198, 61, 77},   {208, 69, 69},  {218, 78, 60},
    {227, 89, 51},   {235, 100, 41},  {241, 113, 31},  {246, 126, 20}, {249, 140, 10},
    {251, 155, 6},   {252, 170, 15},  {251, 186, 31},  {249, 201, 50}, {245, 217, 73},
    {242, 232, 101}, {243, 245, 134}, {252, 255, 164},
};
/* coolwarm (Moreland's diverging map, matplotlib's 33 control points) */
static const unsigned char coolwarm33[33][3] = {
    {59, 76, 192},   {68, 90, 204},   {77, 104, 215},  {87, 117, 225},  {98, 130, 234},
    {108, 142, 241}, {119, 154, 247}, {130, 165, 251}, {141, 176, 254}, {152, 185, 255},
    {163, 194, 255}, {174, 201, 253}, {184, 208, 249}, {194, 213, 244}, {204, 217, 238},
    {213, 219, 230}, {221, 221, 221}, {229, 216, 209}, {236, 211, 197}, {241, 204, 185},
    {245, 196, 173}, {247, 187, 160}, {247, 177, 148}, {247, 166, 135}, {244, 154, 123},
    {241, 141, 111}, {236, 127, 99},  {229, 112, 88},  {222, 96, 77},   {213, 80, 66},
    {203, 62, 56},   {192, 40, 47},   {180, 4, 38},
};
/* RdBu (ColorBrewer, Cynthia Brewer; Apache 2.0): its 11 colours, red (low) to blue (high) */
static const unsigned char rdbu11[11][3] = {
    {103, 0, 31},    {178, 24, 43},   {214, 96, 77},   {244, 165, 130},
    {253, 219, 199}, {247, 247, 247}, {209, 229, 240}, {146, 197, 222},
    {67, 147, 195},  {33, 102, 172},  {5, 48, 97},
};
/* gray: black to white, R = G = B */
static const unsigned char gray2[2][3] = {{0, 0, 0}, {255, 255, 255}};

/* The colour maps: a row per map, its samples evenly spaced over [0, 1] and interpolated
 * linearly. A diverging map's middle colour is 0 of a signed field (dsg_picture_field_map). */
typedef struct colormap_row {
  const char *name;
  const unsigned char (*samples)[3];
  int count;
  int diverging;
} colormap_row;

static const colormap_row colormaps[] = {
    {"viridis", viridis33, 33, 0}, {"magma", magma33, 33, 0},       {"inferno", inferno33, 33, 0},
    {"gray", gray2, 2, 0},         {"coolwarm", coolwarm33, 33, 1}, {"RdBu", rdbu11, 11, 1},
};
#define NCOLORMAPS ((int)(sizeof(colormaps) / sizeof(colormaps[0])))

int dsg_colormap_count(void) { return NCOLORMAPS; }

const char *dsg_colormap_name(int i) { return i >= 0 && i < NCOLORMAPS ? colormaps[i].name : NULL; }

int dsg_colormap_diverging(int i) { return i >= 0 && i < NCOLORMAPS ? colormaps[i].diverging : 0; }

static int find_colormap(const char *name, int *index)
{
  char names[128] = "";
  for (int i = 0; i < NCOLORMAPS; i++)
    if (name && strcasecmp(name, colormaps[i].name) == 0) {
      *index = i;
      return DSG_OK;
    }
  for (int i = 0; i < NCOLORMAPS; i++)
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
             colormaps[i].name);
  return dsg_error_set(DSG_ERR_INVALID, "colour map '%s' is not one of %s", name ? name : "(null)",
                       names);
}

/* The colour of t in [0, 1] (clamped; NaN: 0) on map m. */
static void map_color(const colormap_row *m, double t, unsigned char rgb[3])
{
  const int last = m->count - 1;
  double s;
  int i;
  if (!(t > 0.0))
    t = 0.0;
  if (t > 1.0)
    t = 1.0;
  s = t * last;
  i = (int)s;
  if (i >= last)
    i = last - 1;
  s -= i;
  for (int c = 0; c < 3; c++)
    rgb[c] = (unsigned char)(m->samples[i][c] * (1.0 - s) + m->samples[i + 1][c] * s + 0.5);
}

void dsg_viridis(double t, unsigned char rgb[3]) { map_color(&colormaps[0], t, rgb); }

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

/* Labels below this get their colours from a table (label_table) */
#define LABEL_TABLE_MAX (1 << 16)

/* The colours of labels 0 .. the largest of the n labels (dsg_label_color's), looked up per pixel
 * instead of a hue computed per pixel; NULL when a label is outside [0, LABEL_TABLE_MAX) or the
 * table cannot be allocated: then each pixel's colour is computed. Free with free. */
static unsigned char *label_table(const int32_t *labels, size_t n)
{
  int32_t lo = INT32_MAX, hi = INT32_MIN;
  unsigned char *table;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
  for (size_t i = 0; i < n; i++) {
    lo = labels[i] < lo ? labels[i] : lo;
    hi = labels[i] > hi ? labels[i] : hi;
  }
  if (n == 0 || lo < 0 || hi >= LABEL_TABLE_MAX)
    return NULL;
  table = malloc(((size_t)hi + 1) * 3);
  for (int32_t l = 0; table && l <= hi; l++)
    dsg_label_color(l, table + 3 * (size_t)l);
  return table;
}

int dsg_picture_labels(const int32_t *labels, int width, int height, unsigned char **rgb)
{
  const size_t n = (size_t)width * (size_t)height;
  unsigned char *table;
  int status = alloc_rgb(width, height, rgb);
  if (status != DSG_OK)
    return status;
  table = label_table(labels, n);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    if (table)
      memcpy(*rgb + 3 * i, table + 3 * (size_t)labels[i], 3);
    else
      dsg_label_color(labels[i], *rgb + 3 * i);
  }
  free(table);
  return DSG_OK;
}

int dsg_picture_overlay(const dsg_image *img, const int32_t *labels, unsigned char **rgb)
{
  static const unsigned char edge[3] = {255, 255, 0};
  const int w = img->width, h = img->height, c = img->channels;
  unsigned char *table;
  int status = alloc_rgb(w, h, rgb);
  if (status != DSG_OK)
    return status;
  table = label_table(labels, (size_t)w * (size_t)h);
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    for (int x = 0; x < w; x++) {
      const size_t i = (size_t)y * (size_t)w + (size_t)x;
      const unsigned char *p = img->pixels + i * (size_t)c;
      unsigned char *o = *rgb + 3 * i, own[3];
      const unsigned char *tint = own;
      const int l = labels[i];
      const int boundary = (x + 1 < w && labels[i + 1] != l) || (y + 1 < h && labels[i + w] != l) ||
                           (x > 0 && labels[i - 1] != l) || (y > 0 && labels[i - w] != l);
      if (boundary) {
        memcpy(o, edge, 3);
        continue;
      }
      if (table)
        tint = table + 3 * (size_t)l;
      else
        dsg_label_color(l, own);
      for (int k = 0; k < 3; k++) {
        int v = c >= 3 ? p[k] : p[0];
        o[k] = (unsigned char)((v * 3 + tint[k] + 2) / 4); /* 75% image, 25% segment colour */
      }
    }
  }
  free(table);
  return DSG_OK;
}

/* Approximate q-quantile of the finite values of v (of |v| when `absolute`) via a 4096-bin
 * histogram between lo and hi. */
static double quantile(const float *v, size_t n, int absolute, double lo, double hi, double q)
{
  enum { BINS = 4096 };
  size_t hist[BINS] = {0}, total = 0, acc = 0;
  double scale;
  if (!(hi > lo))
    return lo;
  scale = (BINS - 1) / (hi - lo);
#pragma omp parallel for schedule(static) reduction(+ : hist[:BINS], total)
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i]))
      continue;
    const double x = absolute ? fabs((double)v[i]) : (double)v[i];
    const int b = (int)((x - lo) * scale);
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

int dsg_picture_field_map(const float *field, int width, int height, const char *colormap,
                          unsigned char **rgb)
{
  const size_t n = (size_t)width * (size_t)height;
  double lo = INFINITY, hi = -INFINITY, a, b;
  const colormap_row *m;
  int status, index = 0;
  *rgb = NULL;
  if (colormap && (status = find_colormap(colormap, &index)) != DSG_OK)
    return status;
  m = &colormaps[index];
  status = alloc_rgb(width, height, rgb);
  if (status != DSG_OK)
    return status;
#pragma omp parallel for schedule(static) reduction(min : lo) reduction(max : hi)
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(field[i]))
      continue;
    lo = field[i] < lo ? field[i] : lo;
    hi = field[i] > hi ? field[i] : hi;
  }
  if (m->diverging) {
    /* eigenvectors are signed: 0 at the middle colour, +-the 99th percentile of |v| at the ends */
    const double top = fmax(fabs(lo), fabs(hi));
    b = top > 0.0 ? quantile(field, n, 1, 0.0, top, 0.99) : 1.0;
    if (!(b > 0.0))
      b = top > 0.0 ? top : 1.0;
    a = -b;
  } else {
    a = quantile(field, n, 0, lo, hi, 0.01);
    b = quantile(field, n, 0, lo, hi, 0.99);
    if (!(b > a)) {
      a = lo;
      b = hi > lo ? hi : lo + 1.0;
    }
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++)
    map_color(m, ((double)field[i] - a) / (b - a), *rgb + 3 * i);
  return DSG_OK;
}

int dsg_picture_field(const float *field, int width, int height, unsigned char **rgb)
{
  return dsg_picture_field_map(field, width, height, "viridis", rgb);
}
