/* The structured edge forest on an OpenCL device (spmv_cl_forest, kernels/forest.cl) against its
 * C reference in the library (app_forest_channels, app_forest_detect; app/lib/forest.c), with
 * the library's own model:
 *  - from the reference's channels (the probe puts them in), the map equals app_forest_detect's
 *    bit for bit at 0, 1 and 2 sharpening rings, on a photo-like synthetic image, on random
 *    grey, grey + alpha and RGBA images and on awkward sizes (1 x 1, one row, one column, sizes
 *    off the work-group size); the map at 1 ring must fail that comparison against 2 rings' (the
 *    comparison sees the sharpening);
 *  - the device's own channels differ from the reference's codes by at most one, on at most
 *    CODE_SHARE of the codes (+1): float CIELAB against double, the device's atan2, sqrt and
 *    division; with them, the map differs from the reference's only near such codes: at most
 *    MAP_SHARE of the pixels by more than 1e-6, the mean difference below MAP_MEAN;
 *  - the library's scales and thinning (app_forest_contours, spmv_cl_forest_contours) on the
 *    device and on the host: the soft maps within the same bounds, the thinned strengths equal
 *    but at THIN_SHARE of the pixels (ties within rounding), in range and 0 on the edge, on
 *    several sizes (one row or column: no half scale) and channel counts, at 3 scales and 1;
 *  - the checks a caller can trip: too many trees read, a sharpening out of range, a damaged
 *    model (a child before its parent), a probe with one kind of channel.
 * The device: $DIASEG_CL_DEVICE, else the first OpenCL device (PoCL in CI). Without any OpenCL
 * device the test is skipped (exit code 77). */
#include "diaseg_internal.h"

#include "check.h"
#include "spmv_image.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77
#define CODE_SHARE 1e-3 /* of the channels' codes may differ (by one) */
#define MAP_SHARE 0.03  /* of the pixels may differ where a place took another leaf */
#define MAP_MEAN 2e-3   /* the mean |difference| of the map (its values reach about 1) */
#define THIN_SHARE 0.01 /* of the thinned pixels may differ where values tie within rounding */

static const char *device_spec(void)
{
  const char *env = getenv("DIASEG_CL_DEVICE");
  return env && *env ? env : "0";
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

/* A photo-like image: two discs and a bar on a gradient, with noise (c channels). */
static unsigned char *synthetic(int w, int h, int c)
{
  unsigned char *px = malloc((size_t)w * h * c);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      int v[3] = {40 + 120 * x / (w > 1 ? w - 1 : 1), 90, 160 - 60 * y / (h > 1 ? h - 1 : 1)};
      const int dx = x - w / 3, dy = y - h / 2, ex = x - 2 * w / 3, ey = y - h / 3;
      if (dx * dx + dy * dy < (w * w) / 36) {
        v[0] = 220;
        v[1] = 40;
        v[2] = 30;
      } else if (ex * ex + ey * ey < (h * h) / 25) {
        v[0] = 20;
        v[1] = 200;
        v[2] = 60;
      } else if (y > 3 * h / 4 && x > w / 5) {
        v[0] = v[1] = v[2] = 245;
      }
      for (int k = 0; k < c; k++) {
        const int q = (k < 3 ? v[k] : 255) + (int)(rnd() % 13) - 6;
        px[((size_t)y * w + x) * c + k] = (unsigned char)(q < 0 ? 0 : q > 255 ? 255 : q);
      }
    }
  return px;
}

static unsigned char *random_image(int w, int h, int c)
{
  unsigned char *px = malloc((size_t)w * h * c);
  for (size_t i = 0; i < (size_t)w * h * c; i++)
    px[i] = (unsigned char)rnd();
  return px;
}

/* Pixels of a and b (n) that differ by more than tol, and their mean |difference|. */
static int count_off(const float *a, const float *b, int n, double tol, double *mean)
{
  int off = 0;
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    const double d = fabs((double)a[i] - b[i]);
    off += !(d <= tol);
    s += d;
  }
  *mean = s / n;
  return off;
}

/* One image: the map from the reference's channels bit for bit at every sharpening, then the
 * device's channels and map within the bounds. */
static void one_image(spmv_cl_image *im, const app_forest *F, int w, int h, int c,
                      const unsigned char *px, const char *what)
{
  const dsg_image img = {w, h, c, (unsigned char *)px};
  app_forest_grid g;
  app_forest_geometry(w, h, &g);
  const size_t n = (size_t)w * h, cn = (size_t)g.cw * g.ch * APP_FOREST_CHANNELS;
  unsigned char *reg = malloc(cn), *sim = malloc(cn), *dreg = malloc(cn), *dsim = malloc(cn);
  float *ref = malloc(n * sizeof(float)), *E = malloc(n * sizeof(float));
  float *ref2 = malloc(n * sizeof(float));
  CHECK(app_forest_channels(&img, &g, reg, sim, NULL, NULL) == DSG_OK, "%s: channels", what);
  for (int sharpen = 0; sharpen <= APP_FOREST_SHARPEN; sharpen++) {
    const spmv_forest_probe in = {reg, sim, NULL, NULL};
    CHECK(app_forest_detect(F, &img, sharpen, NULL, ref) == DSG_OK, "%s: reference", what);
    const int st = app_forest_detect_cl(im, F, &img, sharpen, E, &in);
    CHECK(st == DSG_OK, "%s: device, sharpen %d: %s", what, sharpen, dsg_error_message());
    int off = 0, first = -1;
    for (size_t i = 0; st == DSG_OK && i < n; i++)
      if (memcmp(&E[i], &ref[i], sizeof(float)) != 0 && off++ == 0)
        first = (int)i;
    CHECK(st == DSG_OK && off == 0,
          "%s, sharpen %d, the reference's channels: %d of %zu pixels differ (first %d: %.9g "
          "against %.9g)",
          what, sharpen, off, n, first, first >= 0 ? E[first] : 0.0, first >= 0 ? ref[first] : 0.0);
    if (sharpen == 1)
      memcpy(ref2, E, n * sizeof(float));
  }
  /* the comparison sees the sharpening (where the image has edges inside a patch) */
  if (w >= 24 && h >= 24) {
    double mean;
    CHECK(count_off(ref2, ref, (int)n, 1e-6, &mean) > 0, "%s: 1 ring's map passes for 2 rings'",
          what);
  }
  /* the device's own channels */
  {
    const spmv_forest_probe out = {NULL, NULL, dreg, dsim};
    const int st = app_forest_detect_cl(im, F, &img, APP_FOREST_SHARPEN, E, &out);
    CHECK(st == DSG_OK, "%s: device channels: %s", what, dsg_error_message());
    int far = 0, differ = 0;
    for (size_t i = 0; st == DSG_OK && i < cn; i++) {
      const int d1 = abs((int)dreg[i] - reg[i]), d2 = abs((int)dsim[i] - sim[i]);
      far += d1 > 1 || d2 > 1;
      differ += (d1 != 0) + (d2 != 0);
    }
    CHECK(far == 0 && differ <= CODE_SHARE * 2.0 * (double)cn + 1,
          "%s: %d codes off by more than one, %d of %zu differ", what, far, differ, 2 * cn);
    double mean;
    const int off = count_off(E, ref, (int)n, 1e-6, &mean);
    CHECK(off <= MAP_SHARE * (double)n + 1 && mean <= MAP_MEAN,
          "%s: the device's own map differs at %d of %zu pixels (mean %.2e)", what, off, n, mean);
    printf("  %-28s %4d x %-4d codes differing %d of %zu, map pixels off %d (mean %.1e)\n", what, w,
           h, differ, 2 * cn, off, mean);
  }
  free(reg);
  free(sim);
  free(dreg);
  free(dsim);
  free(ref);
  free(ref2);
  free(E);
}

/* The library's path, app_forest_contours at `scales` scales, on the device and on the host: the
 * soft maps within the scales' bounds, the thinned strengths (the same maps thinned; the
 * direction and the suppression may differ where values tie within rounding) differ at no more
 * than THIN_SHARE of the pixels, within [0, APP_FOREST_TOP] and 0 on the image's edge. */
static void library_path(spmv_cl_image *im, int w, int h, int c, int scales, int photo)
{
  unsigned char *px = photo ? synthetic(w, h, c) : random_image(w, h, c);
  const dsg_image img = {w, h, c, px};
  const size_t n = (size_t)w * h;
  float *s0 = malloc(n * sizeof(float)), *s1 = malloc(n * sizeof(float));
  float *e0 = malloc(n * sizeof(float)), *e1 = malloc(n * sizeof(float));
  CHECK(app_forest_contours(NULL, &img, scales, NULL, s0, e0) == DSG_OK, "host: %s",
        dsg_error_message());
  CHECK(app_forest_contours(im, &img, scales, NULL, s1, e1) == DSG_OK, "device: %s",
        dsg_error_message());
  /* the map alone (the hierarchy's, no thinning): the same floats as beside the strength */
  float *e2 = malloc(n * sizeof(float));
  CHECK(app_forest_contours(im, &img, scales, NULL, NULL, e2) == DSG_OK &&
            memcmp(e2, e1, n * sizeof(float)) == 0,
        "%d x %d x %d, %d scale(s): the device's map without the thinning differs: %s", w, h, c,
        scales, dsg_error_message());
  free(e2);
  double mean_e, mean_s;
  const int off_e = count_off(e1, e0, (int)n, 1e-6, &mean_e);
  const int off_s = count_off(s1, s0, (int)n, 1e-6, &mean_s);
  int range = 0, edge = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const float v = s1[(size_t)y * w + x];
      range += !(v >= 0.0f && v <= APP_FOREST_TOP);
      edge += (x == 0 || y == 0 || x == w - 1 || y == h - 1) && v != 0.0f;
    }
  CHECK(off_e <= MAP_SHARE * (double)n + 1 && mean_e <= MAP_MEAN && mean_s <= MAP_MEAN,
        "%d x %d x %d, %d scale(s): the soft map differs at %d of %zu pixels (mean %.2e), the "
        "thinned (mean %.2e)",
        w, h, c, scales, off_e, n, mean_e, mean_s);
  CHECK(off_s <= THIN_SHARE * (double)n + 1,
        "%d x %d x %d, %d scale(s): the thinned strength differs at %d of %zu pixels", w, h, c,
        scales, off_s, n);
  CHECK(range == 0 && edge == 0,
        "%d x %d x %d, %d scale(s): %d strengths outside [0, top], %d not 0 on the edge", w, h, c,
        scales, range, edge);
  printf("  the library's %d scale(s) %d x %d x %d: soft map pixels off %d (mean %.1e), thinned "
         "off %d (mean %.1e)\n",
         scales, w, h, c, off_e, mean_e, off_s, mean_s);
  free(px);
  free(s0);
  free(s1);
  free(e0);
  free(e1);
}

static void error_paths(spmv_cl_image *im, const app_forest *F)
{
  const int w = 40, h = 30;
  unsigned char *px = random_image(w, h, 3);
  const dsg_image img = {w, h, 3, px};
  float *E = malloc((size_t)w * h * sizeof(float));
  app_forest_grid g;
  app_forest_geometry(w, h, &g);
  unsigned char *codes = malloc((size_t)g.cw * g.ch * APP_FOREST_CHANNELS);
  memset(codes, 0, (size_t)g.cw * g.ch * APP_FOREST_CHANNELS);
  const spmv_forest_probe half = {codes, NULL, NULL, NULL};
  int st = app_forest_detect_cl(im, F, &img, 2, E, &half);
  CHECK(st == DSG_ERR_INVALID && strstr(dsg_error_message(), "one kind"),
        "a probe with regular codes alone: %d %s", st, dsg_error_message());
  /* a damaged model: a node that is its own child (a descent that would never end) */
  app_forest bad = *F;
  uint32_t *child = malloc(F->nnodes * sizeof(uint32_t));
  memcpy(child, F->child, F->nnodes * sizeof(uint32_t));
  child[F->tree[1] - 2] = F->tree[1] - 2; /* a node of tree 0 that is its own child */
  bad.child = child;
  st = app_forest_detect_cl(im, &bad, &img, 2, E, NULL);
  CHECK(st == DSG_ERR_INVALID && strstr(dsg_error_message(), "out of range"),
        "a node that is its own child: %d %s", st, dsg_error_message());
  /* and the good model again (its key differs from the damaged one's: uploaded anew) */
  st = app_forest_detect_cl(im, F, &img, 2, E, NULL);
  CHECK(st == DSG_OK, "the model again after a damaged one: %s", dsg_error_message());
  free(child);
  free(codes);
  free(E);
  free(px);
}

int main(void)
{
  spmv_cl_device *list = NULL;
  spmv_cl_image *im = NULL;
  const app_forest *F = NULL;
  int count = 0;

  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_cl_forest: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  free(list);
  CHECK(app_forest_default(&F) == DSG_OK, "the library's forest: %s", dsg_error_message());
  CHECK(spmv_cl_image_create(&im, device_spec(), NULL) == DSG_OK, "create: %s",
        dsg_error_message());
  if (!im || !F)
    return check_report("test_cl_forest");
  printf("test_cl_forest: device %s, %d trees, %u nodes\n", spmv_cl_image_device(im), F->ntrees,
         F->nnodes);
  unsigned char *px = synthetic(97, 61, 3);
  one_image(im, F, 97, 61, 3, px, "synthetic RGB");
  free(px);
  const int size[][3] = {{1, 1, 3}, {33, 1, 1}, {1, 29, 2}, {45, 37, 4}, {70, 9, 3}};
  for (size_t k = 0; k < sizeof(size) / sizeof(size[0]); k++) {
    char what[48];
    snprintf(what, sizeof(what), "random, %d channel(s)", size[k][2]);
    px = random_image(size[k][0], size[k][1], size[k][2]);
    one_image(im, F, size[k][0], size[k][1], size[k][2], px, what);
    free(px);
  }
  /* the scales and the thinning: a photo-like image, random ones of each channel count, one row
   * or column (no half scale), 2 x 2, and one scale */
  const int lib[][5] = {{90, 70, 3, 3, 1}, {41, 33, 1, 3, 0}, {37, 29, 4, 3, 1}, {1, 17, 3, 3, 1},
                        {23, 1, 2, 3, 0},  {2, 2, 3, 3, 0},   {90, 70, 3, 1, 1}};
  for (size_t k = 0; k < sizeof(lib) / sizeof(lib[0]); k++)
    library_path(im, lib[k][0], lib[k][1], lib[k][2], lib[k][3], lib[k][4]);
  error_paths(im, F);
  spmv_cl_image_destroy(im);
  return check_report("test_cl_forest");
}
