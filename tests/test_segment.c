/* Segmentation end to end through the library: synthetic images of k flat regions plus mild
 * noise come out as exactly those regions (adjusted Rand index >= 0.95), for intensity and for
 * colour features; k-means alone recovers well-separated blobs; the ARI itself is checked.
 * With an argument, writes the intensity test image there (data/synthetic_regions.png). */
#include "app.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

enum { W = 120, H = 80 };

/* Region of pixel (x, y): 0 background, 1 disc, 2 rectangle, 3 ellipse. */
static int region_of(int x, int y)
{
  if ((x - 40) * (x - 40) + (y - 45) * (y - 45) < 22 * 22)
    return 1;
  if (x >= 75 && x < 110 && y >= 8 && y < 35)
    return 2;
  if ((x - 92) * (x - 92) * 4 + (y - 62) * (y - 62) * 9 < 30 * 30)
    return 3;
  return 0;
}

/* Intensity image: levels 0.15 / 0.75 / 0.45 / 0.95, uniform noise +-0.03. Colour image: equal
 * luminance for every region (only the hue differs), so only --affinity color can separate them. */
static void make_image(app_image *img, int *truth, int color)
{
  static const double level[4] = {0.15, 0.75, 0.45, 0.95};
  static const unsigned char rgb[4][3] = {{120, 120, 120}, {200, 90, 120}, {60, 150, 110}, {90, 120, 220}};
  unsigned char *px = malloc((size_t)W * H * 3);
  test_rng_state = 99;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int r = region_of(x, y), i = y * W + x;
      truth[i] = r;
      if (!color) {
        double v = level[r] + 0.06 * (test_uniform() - 0.5);
        px[i] = (unsigned char)(v * 255 + 0.5);
      } else {
        for (int c = 0; c < 3; c++)
          px[3 * i + c] = (unsigned char)(rgb[r][c] + (int)(12 * (test_uniform() - 0.5)));
      }
    }
  app_image_from_pixels(img, W, H, color ? 3 : 1, px);
  free(px);
}

static double segment(const app_image *img, app_feature feature, int k, int *labels)
{
  float *f = NULL;
  int nf = 0, dim = 0;
  spmv_dia *N = NULL;
  double *sd = NULL;
  spmv_matvec *mv = NULL;
  eig_options opt;
  eig_result res;
  float *emb = NULL;
  app_affinity_params ap = {5, 0.1, 4.0};
  app_kmeans_params kp = {k, 8, 300, 1};
  app_features(img, feature, &f, &nf);
  CHECK(app_affinity_build(img->width, img->height, f, nf, &ap, &N, &sd) == DSG_OK, "affinity");
  app_components comps;
  CHECK(app_components_find(N, sd, &comps) == DSG_OK, "components");
  spmv_matvec_create_cpu(&mv, N);
  eig_options_init(&opt);
  opt.nev = 8;
  opt.known_count = comps.count;
  opt.known_label = comps.label;
  opt.known_values = comps.values;
  CHECK(eig_arpack_solve(mv, &opt, &res) == DSG_OK, "solve: %s", dsg_error_message());
  CHECK(app_embedding(&res, sd, k, &emb, &dim) == DSG_OK && dim == k - 1, "embedding");
  CHECK(app_kmeans(emb, (size_t)W * H, dim, &kp, labels, NULL) == DSG_OK, "kmeans");
  free(emb);
  app_components_free(&comps);
  eig_result_free(&res);
  spmv_matvec_destroy(mv);
  spmv_dia_destroy(N);
  free(sd);
  free(f);
  return 0;
}

int main(int argc, char **argv)
{
  int *truth = malloc(sizeof(int) * W * H), *labels = malloc(sizeof(int) * W * H);
  app_image img;

  if (argc > 1) { /* regenerate data/synthetic_regions.png */
    app_out *o = NULL;
    char *dir = strdup(argv[1]), *slash = strrchr(dir, '/');
    make_image(&img, truth, 0);
    if (slash)
      *slash = '\0';
    int st = app_out_begin(&o, slash ? dir : ".");
    if (st == DSG_OK)
      st = app_out_png(o, slash ? slash + 1 : argv[1], W, H, 1, img.pixels);
    if (st == DSG_OK)
      st = app_out_commit(o);
    app_out_destroy(o);
    free(dir);
    return st == DSG_OK ? 0 : 1;
  }

  /* the ARI itself */
  {
    int a[6] = {0, 0, 1, 1, 2, 2}, b[6] = {5, 5, 3, 3, 0, 0}, c[6] = {0, 1, 0, 1, 0, 1};
    CHECK(CLOSE(app_adjusted_rand(a, b, 6), 1.0, 0, 1e-12), "ARI of a relabeling");
    CHECK(app_adjusted_rand(a, c, 6) < 0.1, "ARI of unrelated labelings = %g",
          app_adjusted_rand(a, c, 6));
  }

  make_image(&img, truth, 0);
  segment(&img, APP_FEATURE_INTENSITY, 4, labels);
  double ari = app_adjusted_rand(truth, labels, (size_t)W * H);
  CHECK(ari >= 0.95, "intensity regions: adjusted Rand index %.4f < 0.95", ari);
  printf("intensity: ARI %.4f\n", ari);
  /* labels are numbered by first appearance: pixel 0 is label 0 */
  CHECK(labels[0] == 0, "labels not canonical");
  app_image_free(&img);

  make_image(&img, truth, 1);
  segment(&img, APP_FEATURE_COLOR, 4, labels);
  ari = app_adjusted_rand(truth, labels, (size_t)W * H);
  CHECK(ari >= 0.95, "colour regions: adjusted Rand index %.4f < 0.95", ari);
  printf("color: ARI %.4f\n", ari);
  app_image_free(&img);

  /* k-means alone: three tight blobs in 2-D are found exactly, whatever the seed */
  {
    enum { NP = 3000 };
    float *pts = malloc(sizeof(float) * NP * 2);
    int *lab = malloc(sizeof(int) * NP), *tru = malloc(sizeof(int) * NP);
    static const float cx[3] = {0, 5, 0}, cy[3] = {0, 0, 5};
    for (int i = 0; i < NP; i++) {
      tru[i] = i % 3;
      pts[2 * i] = cx[i % 3] + (float)(test_uniform() - 0.5);
      pts[2 * i + 1] = cy[i % 3] + (float)(test_uniform() - 0.5);
    }
    for (uint64_t seed = 1; seed <= 5; seed++) {
      app_kmeans_params kp = {3, 4, 100, seed};
      double inertia = -1;
      CHECK(app_kmeans(pts, NP, 2, &kp, lab, &inertia) == DSG_OK, "kmeans");
      CHECK(app_adjusted_rand(tru, lab, NP) == 1.0, "blobs, seed %d: ARI %g", (int)seed,
            app_adjusted_rand(tru, lab, NP));
      CHECK(inertia > 0 && inertia < NP * 0.2, "blobs inertia %g", inertia);
    }
    app_kmeans_params bad = {0, 4, 100, 1};
    CHECK(app_kmeans(pts, NP, 2, &bad, lab, NULL) == DSG_ERR_INVALID, "k = 0 accepted");
    free(pts);
    free(lab);
    free(tru);
  }
  free(truth);
  free(labels);
  return check_report("test_segment");
}
