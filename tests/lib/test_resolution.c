/* The working resolution (app/lib/resolution.c, dsg_options.work_pixels): the working size keeps
 * the aspect within the cap; area averaging equals hand-computed means; labels brought back to
 * the photo's size put a boundary between working pixels where the photo's colours put it (not
 * on the working grid, as nearest-neighbour would); a one-pixel contour stays one pixel wide; and
 * a whole segment of a photo over the cap returns labels and contours at the photo's size, the
 * eigenvectors and hierarchy at the working size, with the regions right. Also the automatic
 * scale and tolerance: k auto cuts the hierarchy at DSG_AUTO_THRESHOLD (the same labels as that
 * threshold given), and tol auto is DSG_TOL_HIERARCHY there, DSG_TOL_VECTORS for k-means. */
#include "diaseg_internal.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

static void test_work_size(void)
{
  int w, h;
  CHECK(app_work_size(481, 321, 160000, &w, &h) == 0 && w == 481 && h == 321, "BSDS size kept");
  CHECK(app_work_size(4000, 3000, 160000, &w, &h) == 1, "12 MP shrinks");
  CHECK((long long)w * h <= 160000 && w == 461 && h == 346, "4000x3000 -> %dx%d", w, h);
  CHECK(app_work_size(4000, 3000, 0, &w, &h) == 0 && w == 4000, "0: full resolution");
  CHECK(app_work_size(100000, 2, 1024, &w, &h) == 1 && h >= 1 && (long long)w * h <= 1024,
        "a thin strip keeps a row: %dx%d", w, h);
}

static void test_shrink(void)
{
  /* 4x2 gray -> 2x1: each output is the mean of a 2x2 block; 3x1 -> 2x1: partial pixels */
  const unsigned char px[8] = {0, 10, 100, 200, 20, 30, 50, 50};
  const unsigned char row[3] = {0, 90, 180};
  dsg_image src, dst;
  CHECK(dsg_image_from_pixels(&src, 4, 2, 1, px) == DSG_OK, "image");
  CHECK(app_image_shrink(&src, 2, 1, &dst) == DSG_OK, "shrink");
  CHECK(dst.pixels[0] == 15 && dst.pixels[1] == 100, "block means %d %d (15, 100)", dst.pixels[0],
        dst.pixels[1]);
  dsg_image_free(&src);
  dsg_image_free(&dst);
  CHECK(dsg_image_from_pixels(&src, 3, 1, 1, row) == DSG_OK, "image");
  CHECK(app_image_shrink(&src, 2, 1, &dst) == DSG_OK, "shrink");
  /* footprints [0, 1.5) and [1.5, 3): (0 + 0.5 * 90) / 1.5 = 30, (0.5 * 90 + 180) / 1.5 = 150 */
  CHECK(dst.pixels[0] == 30 && dst.pixels[1] == 150, "partial means %d %d (30, 150)", dst.pixels[0],
        dst.pixels[1]);
  dsg_image_free(&src);
  dsg_image_free(&dst);
}

/* A photo W x H, dark left of column `edge`, bright from it on; its working image and labels
 * shrunk by `f`. The boundary of the labels brought back must be at `edge` on every row. */
/* An edge inside a working pixel (edge not a multiple of F); that mixed working pixel labelled
 * with the left side. Edge 41: one photo column of it is right of the edge (41). Edge 37: five
 * (37..41), and photo column 37's two nearest working pixels both say left. */
static void upsample_labels_case(int edge)
{
  enum { W = 96, H = 24, F = 6 };
  const int w = W / F, h = H / F;
  dsg_image full, work;
  int32_t *labels = malloc((size_t)w * h * sizeof(*labels));
  int32_t *out = malloc((size_t)W * H * sizeof(*out));
  int wrong = 0, nearest_wrong = 0;
  CHECK(dsg_image_from_pixels(&full, W, H, 3, NULL) == DSG_OK, "image");
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      memset(full.pixels + ((size_t)y * W + x) * 3, x < edge ? 40 : 210, 3);
  CHECK(app_image_shrink(&full, w, h, &work) == DSG_OK, "shrink");
  for (int y = 0; y < h; y++) /* the working pixel holding the edge (mixed) goes left */
    for (int x = 0; x < w; x++)
      labels[y * w + x] = x <= edge / F ? 0 : 1;
  CHECK(app_upsample_labels(&full, &work, labels, out) == DSG_OK, "upsample");
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      wrong += out[y * W + x] != (x < edge ? 0 : 1);
      nearest_wrong += labels[(y / F) * w + x / F] != (x < edge ? 0 : 1);
    }
  CHECK(wrong == 0, "edge %d: %d pixels on the wrong side (nearest-neighbour: %d)", edge, wrong,
        nearest_wrong);
  CHECK(nearest_wrong > 0, "edge %d: the test's edge is off the working grid", edge);
  dsg_image_free(&full);
  dsg_image_free(&work);
  free(labels);
  free(out);
}

static void test_upsample_labels(void)
{
  upsample_labels_case(41);
  upsample_labels_case(37);
}

static void test_upsample_contours(void)
{
  enum { w = 10, h = 8, W = 50, H = 40 };
  float src[w * h], *dst = malloc((size_t)W * H * sizeof(*dst));
  memset(src, 0, sizeof(src));
  for (int y = 0; y < h; y++)
    src[y * w + 4] = 0.8f; /* a vertical line at working column 4 */
  CHECK(app_upsample_contours(src, w, h, W, H, dst) == DSG_OK, "upsample");
  for (int Y = 0; Y < H; Y++) {
    int on = 0, at = -1;
    for (int X = 0; X < W; X++)
      if (dst[Y * W + X] > 0.0f) {
        on++;
        at = X;
        CHECK(dst[Y * W + X] == 0.8f, "strength kept: %g", dst[Y * W + X]);
      }
    /* column 4's centre, 4.5 working pixels = 22.5 photo pixels: photo column 22 */
    CHECK(on == 1 && at == 22, "row %d: %d pixels on, at %d (one, at 22)", Y, on, at);
  }
  free(dst);
}

/* Two flat halves, the edge off every grid, segmented through a working size 4x smaller. */
static void test_segment_at_working_size(void)
{
  enum { W = 192, H = 96 };
  const int edge = 93;
  dsg_image img;
  dsg_options opt;
  dsg_result *res = NULL;
  int wrong = 0;
  CHECK(dsg_image_from_pixels(&img, W, H, 3, NULL) == DSG_OK, "image");
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      unsigned char *p = img.pixels + ((size_t)y * W + x) * 3;
      p[0] = x < edge ? 30 : 200;
      p[1] = x < edge ? 90 : 60;
      p[2] = x < edge ? 160 : 40;
    }
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  opt.k = 2;
  opt.work_pixels = W * H / 16;
  CHECK(dsg_segment(&img, &opt, &res) == DSG_OK && res, "segment: %s", dsg_error_message());
  if (res) {
    const int32_t *labels = dsg_result_labels(res);
    CHECK(dsg_result_width(res) == W && dsg_result_height(res) == H, "labels at the photo's size");
    CHECK(dsg_result_work_width(res) == W / 4 && dsg_result_work_height(res) == H / 4,
          "working size %dx%d (48x24)", dsg_result_work_width(res), dsg_result_work_height(res));
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++)
        wrong += labels[y * W + x] != labels[y * W + (x < edge ? 0 : W - 1)];
    CHECK(labels[0] != labels[W - 1] && wrong == 0, "%d pixels off their half", wrong);
    CHECK(labels[0] == 0 && labels[W - 1] == 1, "labels in order of first appearance");
    CHECK(dsg_result_contours(res) != NULL, "contours at the photo's size");
    CHECK(dsg_result_timing(res).resolution > 0.0, "the resolution stage is timed");
  }
  dsg_result_destroy(res);
  dsg_image_free(&img);
}

static double report_number(const char *json, const char *key)
{
  const char *p = strstr(json, key);
  return p ? atof(p + strlen(key)) : -1.0;
}

static void test_auto(void)
{
  enum { W = 64, H = 48 };
  dsg_image img;
  dsg_options opt;
  dsg_result *a = NULL, *t = NULL, *km = NULL;
  char *json = NULL;
  size_t len = 0;
  CHECK(dsg_image_from_pixels(&img, W, H, 1, NULL) == DSG_OK, "image");
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      img.pixels[y * W + x] = (unsigned char)(((x / 16 + y / 16) % 3) * 100 + (x * 7 + y) % 5);
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  CHECK(opt.k == DSG_K_AUTO && opt.tol == DSG_TOL_AUTO, "auto by default");
  CHECK(dsg_segment(&img, &opt, &a) == DSG_OK, "auto: %s", dsg_error_message());
  opt.threshold = DSG_AUTO_THRESHOLD;
  CHECK(dsg_segment(&img, &opt, &t) == DSG_OK, "threshold: %s", dsg_error_message());
  if (a && t)
    CHECK(memcmp(dsg_result_labels(a), dsg_result_labels(t), sizeof(int32_t) * W * H) == 0,
          "k auto is the cut at level %g", DSG_AUTO_THRESHOLD);
  if (a && dsg_result_report(a, NULL, &json, &len) == DSG_OK) {
    CHECK(strstr(json, "\"auto\": true") != NULL, "report says auto: %.200s",
          strstr(json, "\"scale\"") ? strstr(json, "\"scale\"") : json);
    CHECK(report_number(json, "\"tol\":") == DSG_TOL_HIERARCHY, "tol auto for the hierarchy");
    dsg_free(json);
  }
  opt.threshold = 0.0;
  opt.grouping = "kmeans";
  CHECK(dsg_segment(&img, &opt, &km) == DSG_OK, "kmeans auto: %s", dsg_error_message());
  if (km && dsg_result_report(km, NULL, &json, &len) == DSG_OK) {
    const double *lambda = dsg_result_eigenvalues(km);
    int best = 2;
    for (int k = 3; k < dsg_result_nconv(km); k++)
      if (lambda[k - 1] - lambda[k] > lambda[best - 1] - lambda[best])
        best = k;
    CHECK(report_number(json, "\"tol\":") == DSG_TOL_VECTORS, "tol auto for k-means");
    CHECK((int)report_number(json, "\"k\":") == best, "eigengap k %d (report %g)", best,
          report_number(json, "\"k\":"));
    dsg_free(json);
  }
  dsg_result_destroy(a);
  dsg_result_destroy(t);
  dsg_result_destroy(km);
  dsg_image_free(&img);
}

int main(void)
{
  test_work_size();
  test_shrink();
  test_upsample_labels();
  test_upsample_contours();
  test_segment_at_working_size();
  test_auto();
  return check_report("test_resolution");
}
