/* fit_textons: the texton dictionary of the boundary detector (app/lib/textons.inc), fit on
 * photographs as gPb fits its universal textons.
 *
 *   fit_textons [--per-image N] [--restarts R] [--symmetric] IMAGE... > app/lib/textons.inc
 *
 * For every image: CIELAB L / 100 (app_rgb_to_lab), the texton filters' responses
 * (app_texton_responses, contrast-normalised per pixel), N pixels taken on an even stride (default
 * 2000). Then k-means (k-means++, R restarts, default 8, fixed seed; app_kmeans) of all the samples
 * into APP_TEXTONS centres, written as C initialisers, nearest to the origin first.
 *
 * --symmetric makes the dictionary closed under the 8 symmetries of the pixel grid (mirror x,
 * mirror y, transpose), so that the detector would treat an image and its mirror or transpose
 * alike: each sample is brought to its canonical pose (mirrored and transposed until its sigma-2
 * gradient (x, y) has x >= y >= 0), k-means of the canonical samples gives APP_TEXTONS / 8
 * centres, and the dictionary is their 8 poses each (a transformed image's textons are then the
 * same ones renumbered, which leaves every chi-squared distance as it was). It scored below the
 * plain dictionary on BSDS500 train (docs/QUALITY.md), so the project's dictionary is the plain
 * one, fit on the 200 BSDS500 train images. Not a test: it reads a data set that is never in the
 * repository. */
#include "diaseg_internal.h"
#include "io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PER_SCALE 5 /* responses per scale: x, y, xx, sqrt2 xy, yy (app_texton_responses) */
#define POSES 8     /* D4 */

static void mirror_x(float *f) /* x -> -x: the x derivative and the mixed one change sign */
{
  for (int s = 0; s < APP_TEXTON_DIM; s += PER_SCALE) {
    f[s] = -f[s];
    f[s + 3] = -f[s + 3];
  }
}

static void mirror_y(float *f)
{
  for (int s = 0; s < APP_TEXTON_DIM; s += PER_SCALE) {
    f[s + 1] = -f[s + 1];
    f[s + 3] = -f[s + 3];
  }
}

static void transpose(float *f) /* x <-> y, xx <-> yy */
{
  for (int s = 0; s < APP_TEXTON_DIM; s += PER_SCALE) {
    float t = f[s];
    f[s] = f[s + 1];
    f[s + 1] = t;
    t = f[s + 2];
    f[s + 2] = f[s + 4];
    f[s + 4] = t;
  }
}

/* pose g of f: bit 0 mirror x, bit 1 mirror y, bit 2 transpose (applied in that order) */
static void pose(float *f, int g)
{
  if (g & 1)
    mirror_x(f);
  if (g & 2)
    mirror_y(f);
  if (g & 4)
    transpose(f);
}

static int cmp_norm(const void *a, const void *b)
{
  const float *p = a, *q = b;
  double np = 0.0, nq = 0.0;
  for (int d = 0; d < APP_TEXTON_DIM; d++) {
    np += (double)p[d] * p[d];
    nq += (double)q[d] * q[d];
  }
  return (np > nq) - (np < nq);
}

/* the canonical pose: the coarsest scale's gradient with x >= y >= 0 */
static void canonical(float *f)
{
  const int s = APP_TEXTON_DIM - PER_SCALE;
  if (f[s] < 0.0f)
    mirror_x(f);
  if (f[s + 1] < 0.0f)
    mirror_y(f);
  if (f[s + 1] > f[s])
    transpose(f);
}

int main(int argc, char **argv)
{
  size_t per = 2000, ns = 0, cap = 0;
  int restarts = 8, first = 1, status = 1, symmetric = 0;
  float *sample = NULL;
  int *label = NULL;
  for (; first < argc && strncmp(argv[first], "--", 2) == 0; first += 2) {
    if (strcmp(argv[first], "--symmetric") == 0) {
      symmetric = 1;
      first--;
      continue;
    }
    if (first + 1 >= argc) {
      fprintf(stderr, "fit_textons: %s needs a value\n", argv[first]);
      return 2;
    }
    if (strcmp(argv[first], "--per-image") == 0)
      per = (size_t)strtoul(argv[first + 1], NULL, 10);
    else if (strcmp(argv[first], "--restarts") == 0)
      restarts = atoi(argv[first + 1]);
    else {
      fprintf(stderr, "fit_textons: unknown option %s\n", argv[first]);
      return 2;
    }
  }
  if (first >= argc || per < 1 || restarts < 1) {
    fprintf(stderr, "usage: fit_textons [--per-image N] [--restarts R] [--symmetric] IMAGE...\n");
    return 2;
  }
  for (int a = first; a < argc; a++) {
    dsg_image img = {0, 0, 0, NULL};
    if (app_image_load(argv[a], (size_t)1 << 28, &img) != DSG_OK) {
      fprintf(stderr, "fit_textons: %s\n", dsg_error_message());
      goto out;
    }
    const size_t n = (size_t)img.width * img.height, stride = n > per ? n / per : 1;
    float *lum = malloc(n * sizeof(float)), *resp = malloc(n * APP_TEXTON_DIM * sizeof(float));
    if (cap < ns + per + 1) {
      cap = 2 * (ns + per + 1);
      float *grown = realloc(sample, cap * APP_TEXTON_DIM * sizeof(float));
      if (grown)
        sample = grown;
      else
        cap = 0;
    }
    int ok = lum && resp && cap > 0;
    if (ok) {
      for (size_t i = 0; i < n; i++) {
        float lab[3];
        app_rgb_to_lab(img.pixels + i * (size_t)img.channels, img.channels, lab);
        lum[i] = lab[0] / 100.0f;
      }
      ok = app_texton_responses(lum, img.width, img.height, resp) == DSG_OK;
    }
    for (size_t i = stride / 2; ok && i < n && ns < cap; i += stride, ns++) {
      memcpy(sample + ns * APP_TEXTON_DIM, resp + i * APP_TEXTON_DIM,
             APP_TEXTON_DIM * sizeof(float));
      if (symmetric)
        canonical(sample + ns * APP_TEXTON_DIM);
    }
    free(lum);
    free(resp);
    dsg_image_free(&img);
    if (!ok) {
      fprintf(stderr, "fit_textons: out of memory at %s\n", argv[a]);
      goto out;
    }
    fprintf(stderr, "\r%d/%d images, %zu samples", a - first + 1, argc - first, ns);
  }
  fprintf(stderr, "\n");
  label = malloc(ns * sizeof(int));
  const int poses = symmetric ? POSES : 1, K = APP_TEXTONS / poses;
  if (!label || ns < (size_t)K) {
    fprintf(stderr, "fit_textons: %zu samples, %d needed\n", ns, K);
    goto out;
  }
  double inertia = 0.0, centre[APP_TEXTONS][APP_TEXTON_DIM] = {{0}};
  int count[APP_TEXTONS] = {0};
  const app_kmeans_params kp = {K, restarts, 100, 7};
  if (app_kmeans(sample, ns, APP_TEXTON_DIM, &kp, label, &inertia) != DSG_OK) {
    fprintf(stderr, "fit_textons: %s\n", dsg_error_message());
    goto out;
  }
  for (size_t s = 0; s < ns; s++) {
    count[label[s]]++;
    for (int d = 0; d < APP_TEXTON_DIM; d++)
      centre[label[s]][d] += sample[s * APP_TEXTON_DIM + d];
  }
  float out[APP_TEXTONS][APP_TEXTON_DIM];
  for (int c = 0; c < K; c++)
    for (int g = 0; g < poses; g++) {
      for (int d = 0; d < APP_TEXTON_DIM; d++)
        out[c * poses + g][d] = (float)(centre[c][d] / (count[c] > 0 ? count[c] : 1));
      pose(out[c * poses + g], g);
    }
  if (!symmetric)
    qsort(out, APP_TEXTONS, sizeof(out[0]), cmp_norm);
  printf("/* The texton dictionary (contours.c): %d centres of %d responses%s, k-means of %zu\n"
         " * samples (mean squared distance %.6f); written by tests/bsds/fit_textons.c%s. */\n",
         K, APP_TEXTON_DIM, symmetric ? " in their 8 poses each" : "", ns, inertia / (double)ns,
         symmetric ? " --symmetric" : "");
  for (int c = 0; c < APP_TEXTONS; c++) {
    printf("    {");
    for (int d = 0; d < APP_TEXTON_DIM; d++)
      printf("%s% .6ff", d ? ", " : "", out[c][d]);
    printf("},\n");
  }
  status = 0;
out:
  free(sample);
  free(label);
  return status;
}
