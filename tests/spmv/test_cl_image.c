/* The image stages on an OpenCL device (spmv_image.h) against their C references in the library:
 *  - the oriented histogram gradients (kernels/contours.cl) equal app_contour_gradients within
 *    GRAD_TOL (float sums in another order; chi2 values lie in [0, 1]) on the bins of a synthetic
 *    image (app_contour_bins, textons included) and on random bins of awkward sizes (1 x 1, one
 *    row, one column, sizes off the work-group size), with the library's own disc, channels and
 *    bin smoothing; one perturbed input bin must move the result beyond GRAD_TOL (the comparison
 *    sees a difference);
 *  - the combination and thinning equal app_contour_combine and app_contour_thin (reach
 *    APP_CONTOUR_REACH): strength and parts within GRAD_TOL, and an orientation or a thinned
 *    pixel differs only where the C reference's values tie within TIE_TOL (the value and one of
 *    its samples 1 .. reach pixels along the normal, or two orientations), on at most 1% of the
 *    pixels; thinning with reach 1 must fail that comparison; without the gradients asked for
 *    (the combination's sums and the parts made by the gradients' kernels, the library's path),
 *    and with the parts alone, the outputs are those of the call with the gradients, bit for bit;
 *  - the bins on the device (spmv_cl_contours_rgb) equal app_contour_bins' on synthetic and
 *    random images of awkward sizes (1 x 1, one row, one column, sizes off the work-group size),
 *    grey (1 channel), grey + alpha (2), RGB and RGBA, and a palette of every byte value: an L, a
 *    or b bin may differ by one only where the reference's value (app_rgb_to_lab) lies within
 *    LAB_EDGE_TOL of the edge between them, a texton only where the reference's squared
 *    distances of the pixel's responses (app_texton_responses) to both centres are within
 *    TEXTON_TIE_TOL, each on at most 1e-3 of the pixels (+1); a pixel's colour moved and two
 *    centres swapped must fail that comparison;
 *  - the detector from the pixels equals the C stages on the bins the device made, and the
 *    library's app_contours_cl (its own tables) gives the same parts bit for bit and equals
 *    app_contours within GRAD_TOL where the bins agree, kept pixels differing only on the ties
 *    found above;
 *  - the affinity N (kernels/affinity.cl) equals app_affinity_build with the intervening-contour
 *    term (contours from the library's detector, and random ones), with and without features,
 *    without contours, and on an image narrower than the disc (shared diagonals): every entry
 *    within a relative N_RTOL (float exp against double) over an absolute N_ATOL, the same zero
 *    pattern wherever either value is above N_ATOL (only a weight that underflows in one of them
 *    may be zero there and not here), D^1/2 within N_RTOL, linked set; a 1% change of sigma_c
 *    must move N beyond the tolerance;
 *  - gPb on the device (app_spectral_gpb_cl: the spectral term of the eigenvectors, the
 *    combination with the detector's, the thinning) equals app_spectral_gradient,
 *    app_contour_gpb and app_contour_thin within GPB_TOL on awkward sizes (1 x 1, one row, one
 *    column), with a constant vector, a pair of 1 - mu below 1e-6, pixels isolated by D that
 *    take their values from the products, and with one eigenvector alone; orientations and
 *    thinned pixels differ only on ties; the spectral weight 1% off and the products withheld
 *    must fail that comparison;
 *  - k-means on the device (app_kmeans_cl) gives app_kmeans' labels and inertia bit for bit on
 *    clustered and uniform points (3 to 70000 of them: 64 to 136 chunks), 1 to 15 dimensions, k
 *    from 2 to 40, with coincident points
 *    (every point the same: empty clusters) and k = n; one coordinate moved by one ulp on the
 * device's side must show;
 *  - the failures a CPU machine can produce give a message: a bin out of range, a kernel folder
 *    that does not exist.
 * The device: $DIASEG_CL_DEVICE, else the first OpenCL device (PoCL in CI). Without any OpenCL
 * device the test is skipped (exit code 77). */
#include "diaseg_internal.h"

#include "check.h"
#include "spmv_image.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77 /* ctest's SKIP_RETURN_CODE */

#define GRAD_TOL 1e-5       /* |chi2_cl - chi2_c|, absolute (chi2 in [0, 1]) */
#define TIE_TOL 1e-5        /* reference values this close may order either way on the device */
#define LAB_EDGE_TOL 1e-3   /* an L, a or b this close to a bin's edge may bin either way (float) */
#define TEXTON_TIE_TOL 1e-4 /* centres this close in squared distance may win either way */
#define N_RTOL 1e-5         /* N entries and D^1/2: relative */
#define N_ATOL 1e-30 /* N entries: absolute, for weights near float underflow (subnormal W) */

/* The combination the device is handed: segment's (app_contour_local, contours.c), in float as
 * app_contours_cl hands it over. */
static float part_weight[APP_CONTOUR_PARTS];
static float part_bias;

static void library_weights(void)
{
  for (int p = 0; p < APP_CONTOUR_PARTS; p++)
    part_weight[p] = (float)app_contour_local.part[p];
  part_bias = (float)app_contour_local.bias;
}

static const char *device_spec(void)
{
  const char *env = getenv("DIASEG_CL_DEVICE");
  return env && *env ? env : "0";
}

/* ---- the detector's geometry, filled from the library's tables as the library will ---- */

typedef struct geometry {
  spmv_contour_geometry g;
  int dx[(2 * APP_CONTOUR_RMAX + 1) * (2 * APP_CONTOUR_RMAX + 1)];
  int dy[(2 * APP_CONTOUR_RMAX + 1) * (2 * APP_CONTOUR_RMAX + 1)];
  int sector[(2 * APP_CONTOUR_RMAX + 1) * (2 * APP_CONTOUR_RMAX + 1)];
  int bins[APP_CONTOUR_CHANNELS], count[APP_CONTOUR_PARTS], radius[APP_CONTOUR_CHANNELS];
  float taps[APP_CONTOUR_CHANNELS][2 * SPMV_CONTOUR_MAX_BINS + 1];
  const float *tap_of[APP_CONTOUR_CHANNELS];
} geometry;

/* contours.c's smoother_init: a Gaussian of sigma bins cut at 3 sigma (and at 32) */
static int smoother(double sigma, float *k)
{
  int r = sigma > 0.0 ? (int)ceil(3.0 * sigma) : 0;
  double sum = 0.0;
  if (r > SPMV_CONTOUR_MAX_BINS)
    r = SPMV_CONTOUR_MAX_BINS;
  for (int t = -r; t <= r; t++)
    sum += sigma > 0.0 ? exp(-0.5 * t * t / (sigma * sigma)) : 1.0;
  for (int t = -r; t <= r; t++)
    k[t + r] = (float)((sigma > 0.0 ? exp(-0.5 * t * t / (sigma * sigma)) : 1.0) / sum);
  return r;
}

static void geometry_init(geometry *G)
{
  int within[APP_CONTOUR_RMAX + 1];
  memset(G, 0, sizeof(*G));
  G->g.ndisc = app_contour_disc(APP_CONTOUR_RMAX, G->dx, G->dy, G->sector, within);
  G->g.dx = G->dx;
  G->g.dy = G->dy;
  G->g.sector = G->sector;
  G->g.pad = APP_CONTOUR_RMAX;
  G->g.nchannels = APP_CONTOUR_CHANNELS;
  G->g.nscales = APP_CONTOUR_SCALES;
  G->g.norient = APP_CONTOUR_ORIENTATIONS;
  for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
    const app_contour_channel *ch = app_contour_channel_at(c);
    G->bins[c] = ch->bins;
    for (int s = 0; s < APP_CONTOUR_SCALES; s++)
      G->count[c * APP_CONTOUR_SCALES + s] = within[ch->radius[s]];
    G->radius[c] = smoother(ch->smooth, G->taps[c]);
    G->tap_of[c] = G->taps[c];
  }
  G->g.bins = G->bins;
  G->g.count = G->count;
  G->g.smooth_radius = G->radius;
  G->g.smooth = G->tap_of;
  G->g.reach = APP_CONTOUR_REACH;
}

/* ---- synthetic images ---- */

/* w x h RGB: smooth shading, a rectangle, a disc, a diagonal stripe, a little noise */
static unsigned char *synthetic_rgb(int w, int h)
{
  unsigned char *p = malloc((size_t)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      for (int c = 0; c < 3; c++) {
        double v = 90 + 40 * sin(0.11 * x + c) * cos(0.07 * y - c);
        if (x > w / 5 && x < w / 2 && y > h / 4 && y < 3 * h / 4)
          v += c == 0 ? 90 : -30;
        if ((x - 3 * w / 4) * (x - 3 * w / 4) + (y - h / 3) * (y - h / 3) < h * h / 16)
          v += c == 2 ? 100 : 20;
        if (abs(x - y - w / 3) < 2)
          v -= 60;
        v += 12 * (test_uniform() - 0.5);
        p[((size_t)y * w + x) * 3 + c] = (unsigned char)(v < 0 ? 0 : v > 255 ? 255 : v);
      }
  return p;
}

/* ---- gradients, combination, thinning ---- */

/* m at (x, y), contours.c's bilinear: for the thinning's tie test */
static float bilinear(const float *m, int w, int h, double x, double y)
{
  x = x < 0 ? 0 : x > w - 1 ? w - 1 : x;
  y = y < 0 ? 0 : y > h - 1 ? h - 1 : y;
  const int x0 = (int)x, y0 = (int)y, x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
  const double fx = x - x0, fy = y - y0;
  return (float)((1 - fy) * ((1 - fx) * m[(size_t)y0 * w + x0] + fx * m[(size_t)y0 * w + x1]) +
                 fy * ((1 - fx) * m[(size_t)y1 * w + x0] + fx * m[(size_t)y1 * w + x1]));
}

static double max_abs_diff(const float *a, const float *b, size_t count)
{
  double e = 0.0;
  for (size_t i = 0; i < count; i++) {
    const double d = fabs((double)a[i] - (double)b[i]);
    e = d > e || d != d ? d : e;
  }
  return e;
}

/* The device's detector outputs of one image (each n or nparts n values; grad optional). */
typedef struct detector_out {
  float *grad, *parts, *strength, *thin, *oriented;
  unsigned char *orient;
} detector_out;

static void detector_out_alloc(detector_out *d, size_t n, int with_grad)
{
  const size_t ngrad = n * APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS;
  d->grad = with_grad ? malloc(ngrad * sizeof(float)) : NULL;
  d->parts = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  d->strength = malloc(n * sizeof(float));
  d->thin = malloc(n * sizeof(float));
  d->orient = malloc(n);
  d->oriented = malloc(n * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  for (size_t i = 0; with_grad && i < ngrad; i++)
    d->grad[i] = NAN; /* overwritten everywhere */
}

static void detector_out_free(detector_out *d)
{
  free(d->grad);
  free(d->parts);
  free(d->strength);
  free(d->thin);
  free(d->orient);
  free(d->oriented);
}

/* How the device's detector compares with the C stages on the same bins. */
typedef struct detector_diff {
  double grad, parts, strength, thin; /* max |cl - c| (thin: where both keep the pixel) */
  double oriented;                    /* the combination at every orientation (gPb's input) */
  int orient_ties, thin_ties;         /* differences on ties within TIE_TOL */
  int unexplained;                    /* orientations or thinned pixels that differ on no tie */
  int edge_pixels;                    /* pixels the C thinning keeps */
} detector_diff;

/* The C stages (app_contour_gradients, _combine, _thin and the parts' maxima) on bins against
 * the device's outputs d. A thinned pixel kept on one side only must be a tie of the reference:
 * its value within TIE_TOL of one of its samples 1 .. APP_CONTOUR_REACH pixels along the normal,
 * or its orientation a tie. report: print the first unexplained differences. */
static detector_diff compare_detector(const unsigned char *bins, int w, int h,
                                      const detector_out *d, const char *what, int report)
{
  const size_t n = (size_t)w * h, ngrad = n * APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS;
  float *ref = malloc(ngrad * sizeof(float)),
        *ref_parts = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  float *ref_strength = malloc(n * sizeof(float)), *ref_thin = malloc(n * sizeof(float));
  float *oriented = malloc(n * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  unsigned char *ref_orient = malloc(n);
  detector_diff r;
  memset(&r, 0, sizeof(r));

  CHECK(app_contour_gradients(bins, w, h, NULL, ref) == DSG_OK, "%s: C gradients: %s", what,
        dsg_error_message());
  app_contour_combine(ref, w, h, &app_contour_local, ref_strength, oriented, ref_orient);
  app_contour_thin(ref_strength, ref_orient, w, h, ref_thin);
  for (size_t i = 0; i < n; i++)
    for (int p = 0; p < APP_CONTOUR_PARTS; p++) {
      float best = 0.0f;
      for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++) {
        const float v = ref[((size_t)p * APP_CONTOUR_ORIENTATIONS + o) * n + i];
        best = v > best ? v : best;
      }
      ref_parts[(size_t)p * n + i] = best;
    }
  r.grad = d->grad ? max_abs_diff(d->grad, ref, ngrad) : 0.0;
  r.parts = max_abs_diff(d->parts, ref_parts, n * APP_CONTOUR_PARTS);
  r.strength = max_abs_diff(d->strength, ref_strength, n);
  r.oriented = max_abs_diff(d->oriented, oriented, n * APP_CONTOUR_ORIENTATIONS);
  for (size_t i = 0; i < n; i++) {
    const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
    if (d->orient[i] != ref_orient[i]) {
      const int o = d->orient[i] < APP_CONTOUR_ORIENTATIONS ? d->orient[i] : 0;
      const double a = oriented[(size_t)o * n + i], b = oriented[(size_t)ref_orient[i] * n + i];
      if (d->orient[i] < APP_CONTOUR_ORIENTATIONS && fabs(a - b) <= TIE_TOL) {
        r.orient_ties++;
      } else {
        if (report && r.unexplained < 5)
          fprintf(stderr, "%s: pixel (%d, %d): orientation %d, the C reference's %d (%.9g, %.9g)\n",
                  what, x, y, d->orient[i], ref_orient[i], a, b);
        r.unexplained++;
      }
    }
    r.edge_pixels += ref_thin[i] > 0.0f;
    if ((d->thin[i] != 0.0f) == (ref_thin[i] != 0.0f)) {
      const double e = fabs((double)d->thin[i] - ref_thin[i]);
      r.thin = e > r.thin || e != e ? e : r.thin;
      continue;
    }
    /* kept on one side only: a tie of the reference's samples, or an orientation tie */
    const double th = ref_orient[i] * (M_PI / APP_CONTOUR_ORIENTATIONS);
    const double m = ref_strength[i];
    int tie = d->orient[i] != ref_orient[i];
    for (int k = 1; k <= APP_CONTOUR_REACH; k++) {
      const double a = bilinear(ref_strength, w, h, x - k * sin(th), y + k * cos(th));
      const double b = bilinear(ref_strength, w, h, x + k * sin(th), y - k * cos(th));
      tie = tie || fabs(m - a) <= TIE_TOL || fabs(m - b) <= TIE_TOL;
    }
    if (tie) {
      r.thin_ties++;
    } else {
      if (report && r.unexplained < 5)
        fprintf(stderr, "%s: pixel (%d, %d) thinned %.9g, the C reference %.9g\n", what, x, y,
                d->thin[i], ref_thin[i]);
      r.unexplained++;
    }
  }
  free(ref);
  free(ref_parts);
  free(ref_strength);
  free(ref_thin);
  free(oriented);
  free(ref_orient);
  return r;
}

/* The detector's comparison passes: every value within GRAD_TOL, every difference of
 * orientation or thinning a tie, and ties on at most 1% of the pixels. */
static void check_detector_diff(const detector_diff *r, size_t n, const char *what)
{
  CHECK(r->grad <= GRAD_TOL && r->parts <= GRAD_TOL && r->strength <= GRAD_TOL &&
            r->thin <= GRAD_TOL && r->oriented <= GRAD_TOL,
        "%s: detector: gradients %.3g, parts %.3g, strength %.3g, thinned %.3g, oriented %.3g "
        "(tolerance %g)",
        what, r->grad, r->parts, r->strength, r->thin, r->oriented, GRAD_TOL);
  CHECK(r->unexplained == 0 && r->orient_ties <= (int)(n / 100) + 1 &&
            r->thin_ties <= (int)(n / 100) + 1,
        "%s: %d differences on no tie; %d orientation ties, %d thinning ties of %zu pixels", what,
        r->unexplained, r->orient_ties, r->thin_ties, n);
  printf("  %-34s strength %.2e, oriented %.2e, parts %.2e, thinned %.2e (%d edge pixels); "
         "ties: %d orientations, %d thinned\n",
         what, r->strength, r->oriented, r->parts, r->thin, r->edge_pixels, r->orient_ties,
         r->thin_ties);
}

/* The detector on the device from host bins against the C stages, on bins of a w x h image. */
static void check_contours(spmv_cl_image *im, const geometry *G, const unsigned char *bins, int w,
                           int h, const char *what, int perturb)
{
  const size_t n = (size_t)w * h, ngrad = n * APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS;
  float *ref = malloc(ngrad * sizeof(float)), *grad = malloc(ngrad * sizeof(float));
  unsigned char *moved = malloc(n * 4);
  detector_out d;
  double seconds = -1.0;

  detector_out_alloc(&d, n, 1);
  CHECK(app_contour_gradients(bins, w, h, NULL, ref) == DSG_OK, "%s: C gradients: %s", what,
        dsg_error_message());
  for (size_t i = 0; i < ngrad; i++)
    grad[i] = NAN;
  int status = spmv_cl_contour_gradients(im, &G->g, bins, w, h, grad, &seconds);
  CHECK(status == DSG_OK, "%s: gradients: %s\n%s", what, dsg_error_message(), spmv_cl_build_log());
  if (status != DSG_OK)
    goto out;
  const double e = max_abs_diff(grad, ref, ngrad);
  CHECK(e <= GRAD_TOL && seconds > 0.0, "%s: gradients differ by %.3g (tolerance %g), %g s", what,
        e, GRAD_TOL, seconds);
  printf("  %-34s gradients: max |cl - c| %.2e\n", what, e);

  if (perturb) { /* one bin moved in the texture channel: the comparison must see it */
    const size_t i = n / 2 + (size_t)w / 2;
    memcpy(moved, bins, n * 4);
    moved[3 * n + i] = (unsigned char)((moved[3 * n + i] + 7) % G->bins[3]);
    CHECK(spmv_cl_contour_gradients(im, &G->g, moved, w, h, grad, NULL) == DSG_OK, "perturbed");
    const double moved_e = max_abs_diff(grad, ref, ngrad);
    CHECK(moved_e > GRAD_TOL, "%s: a moved bin changes the gradients by only %.3g", what, moved_e);
    printf("  %-34s one moved bin: max |cl - c| %.2e (must exceed %g)\n", what, moved_e, GRAD_TOL);
  }

  /* the combination and the thinning */
  spmv_contour_outputs out = {d.grad, d.parts, d.strength, d.orient, d.thin, d.oriented};
  status = spmv_cl_contours(im, &G->g, part_weight, part_bias, bins, w, h, &out, &seconds);
  CHECK(status == DSG_OK, "%s: detector: %s", what, dsg_error_message());
  if (status != DSG_OK)
    goto out;
  const detector_diff r = compare_detector(bins, w, h, &d, what, 1);
  check_detector_diff(&r, n, what);

  /* without the gradients (the library's calls): the combination's sums and the parts come from
   * the gradients' kernels alone, in the same order, so every output is the same bit for bit;
   * and the parts alone, without the combination */
  {
    detector_out lean_out;
    detector_out_alloc(&lean_out, n, 0);
    for (size_t i = 0; i < n * APP_CONTOUR_PARTS; i++)
      lean_out.parts[i] = NAN;
    spmv_contour_outputs lean = {
        NULL, lean_out.parts, lean_out.strength, lean_out.orient, lean_out.thin, lean_out.oriented};
    status = spmv_cl_contours(im, &G->g, part_weight, part_bias, bins, w, h, &lean, NULL);
    CHECK(status == DSG_OK, "%s: detector without the gradients: %s", what, dsg_error_message());
    const int same =
        status == DSG_OK &&
        memcmp(lean_out.parts, d.parts, n * APP_CONTOUR_PARTS * sizeof(float)) == 0 &&
        memcmp(lean_out.strength, d.strength, n * sizeof(float)) == 0 &&
        memcmp(lean_out.orient, d.orient, n) == 0 &&
        memcmp(lean_out.thin, d.thin, n * sizeof(float)) == 0 &&
        memcmp(lean_out.oriented, d.oriented, n * APP_CONTOUR_ORIENTATIONS * sizeof(float)) == 0;
    CHECK(same, "%s: the detector's outputs without the gradients differ from those with them",
          what);
    for (size_t i = 0; i < n * APP_CONTOUR_PARTS; i++)
      lean_out.parts[i] = NAN;
    spmv_contour_outputs parts_only = {NULL, lean_out.parts, NULL, NULL, NULL, NULL};
    status = spmv_cl_contours(im, &G->g, part_weight, part_bias, bins, w, h, &parts_only, NULL);
    CHECK(status == DSG_OK &&
              memcmp(lean_out.parts, d.parts, n * APP_CONTOUR_PARTS * sizeof(float)) == 0,
          "%s: the parts alone differ from the detector's (%s)", what,
          status == DSG_OK ? "no error" : dsg_error_message());
    printf("  %-34s without the gradients: the same outputs bit for bit%s\n", what,
           same ? "" : " (NOT)");
    detector_out_free(&lean_out);
  }

  if (perturb) { /* thinning with reach 1: the comparison with APP_CONTOUR_REACH must see it */
    geometry near = *G;
    spmv_contour_outputs thin_only = {NULL, d.parts, d.strength, d.orient, d.thin, NULL};
    near.g.reach = 1;
    CHECK(spmv_cl_contours(im, &near.g, part_weight, part_bias, bins, w, h, &thin_only, NULL) ==
              DSG_OK,
          "reach 1");
    const detector_diff moved_r = compare_detector(bins, w, h, &d, what, 0);
    CHECK(moved_r.unexplained > 0, "%s: thinning with reach 1 passes as reach %d", what,
          APP_CONTOUR_REACH);
    printf("  %-34s thinning with reach 1: %d pixels differ on no tie (must be > 0)\n", what,
           moved_r.unexplained);
  }
out:
  free(ref);
  free(grad);
  free(moved);
  detector_out_free(&d);
}

static void contours_synthetic(spmv_cl_image *im, const geometry *G, int w, int h)
{
  unsigned char *rgb = synthetic_rgb(w, h), *bins = malloc((size_t)w * h * 4);
  dsg_image img = {w, h, 3, rgb};
  char what[64];
  snprintf(what, sizeof(what), "synthetic %dx%d", w, h);
  CHECK(app_contour_bins(&img, bins) == DSG_OK, "bins: %s", dsg_error_message());
  check_contours(im, G, bins, w, h, what, 1);
  free(rgb);
  free(bins);
}

static void contours_random(spmv_cl_image *im, const geometry *G, int w, int h)
{
  const size_t n = (size_t)w * h;
  unsigned char *bins = malloc(n * 4);
  char what[64];
  for (int c = 0; c < 4; c++)
    for (size_t i = 0; i < n; i++) /* blocks of a few bins, so that the histograms differ */
      bins[c * n + i] = (unsigned char)(((i / 7) * 5 + test_rand64() % 3) % (size_t)G->bins[c]);
  snprintf(what, sizeof(what), "random bins %dx%d", w, h);
  check_contours(im, G, bins, w, h, what, 0);
  free(bins);
}

/* ---- the bins on the device ---- */

/* The binning's tables, as app_contours_cl hands them to the device (app_contour_binning_init),
 * with a copy of the dictionary that a test may change. */
typedef struct binning {
  spmv_contour_binning b;
  app_contour_binning lib;
  float centres[APP_TEXTONS * APP_TEXTON_DIM];
} binning;

/* the ranges of L, a, b (the binning's) */
static float lab_lo[3], lab_hi[3];

static void binning_init(binning *B)
{
  app_contour_binning_init(&B->lib);
  B->b = B->lib.b;
  memcpy(B->centres, B->lib.b.centres, sizeof(B->centres));
  B->b.centres = B->centres;
  memcpy(lab_lo, B->b.lo, sizeof(lab_lo));
  memcpy(lab_hi, B->b.hi, sizeof(lab_hi));
}

/* How the device's bins compare with app_contour_bins'. */
typedef struct bins_diff {
  int lab;           /* L, a, b bins one apart where the reference's value is near an edge */
  int texton;        /* textons on a near tie */
  int unexplained;   /* anything else */
  double lab_edge;   /* the largest distance to the edge among the lab differences */
  double texton_gap; /* the largest squared distance gap among the texton differences */
} bins_diff;

static float texton_distance(const float *f, int c)
{
  const float *centre = app_texton_centres() + (size_t)c * APP_TEXTON_DIM;
  float d2 = 0.0f;
  for (int d = 0; d < APP_TEXTON_DIM; d++) {
    const float e = f[d] - centre[d];
    d2 += e * e;
  }
  return d2;
}

/* dev against ref (app_contour_bins of img). An L, a or b bin may differ by one where the
 * reference's value (app_rgb_to_lab) lies within LAB_EDGE_TOL of the edge between them; a texton
 * where the squared distances of the pixel's responses (app_texton_responses) to the device's
 * centre and to the reference's differ by at most TEXTON_TIE_TOL. */
static bins_diff compare_bins(const dsg_image *img, const unsigned char *dev,
                              const unsigned char *ref, const char *what, int report)
{
  const int w = img->width, h = img->height, ch = img->channels;
  const size_t n = (size_t)w * h;
  float *lum = calloc(n, sizeof(float)), *resp = malloc(n * APP_TEXTON_DIM * sizeof(float));
  bins_diff r;
  memset(&r, 0, sizeof(r));
  for (size_t i = 0; i < n; i++) {
    float lab[3];
    app_rgb_to_lab(img->pixels + i * (size_t)ch, ch, lab);
    lum[i] = lab[0] / 100.0f;
    for (int c = 0; c < 3; c++) {
      const int a = dev[(size_t)c * n + i], b = ref[(size_t)c * n + i];
      if (a == b)
        continue;
      const double step = ((double)lab_hi[c] - lab_lo[c]) / app_contour_channel_at(c)->bins;
      const double edge = lab_lo[c] + (a > b ? a : b) * step; /* between bins a and b */
      const double dist = fabs(lab[c] - edge);
      if (abs(a - b) == 1 && dist <= LAB_EDGE_TOL) {
        r.lab++;
        r.lab_edge = dist > r.lab_edge ? dist : r.lab_edge;
      } else {
        if (report && r.unexplained < 5)
          fprintf(stderr, "%s: pixel %zu channel %d: bin %d, the C reference's %d (value %.9g)\n",
                  what, i, c, a, b, lab[c]);
        r.unexplained++;
      }
    }
  }
  CHECK(app_texton_responses(lum, w, h, resp) == DSG_OK, "%s: responses: %s", what,
        dsg_error_message());
  for (size_t i = 0; i < n; i++) {
    const int a = dev[3 * n + i], b = ref[3 * n + i];
    if (a == b)
      continue;
    const double gap = a < APP_TEXTONS ? (double)texton_distance(resp + i * APP_TEXTON_DIM, a) -
                                             texton_distance(resp + i * APP_TEXTON_DIM, b)
                                       : HUGE_VAL;
    if (gap <= TEXTON_TIE_TOL) {
      r.texton++;
      r.texton_gap = gap > r.texton_gap ? gap : r.texton_gap;
    } else {
      if (report && r.unexplained < 5)
        fprintf(stderr, "%s: pixel %zu: texton %d, the C reference's %d (distances apart %.3g)\n",
                what, i, a, b, gap);
      r.unexplained++;
    }
  }
  free(lum);
  free(resp);
  return r;
}

/* The bins' comparison passes: no difference but edge cases and near ties, on at most 1e-3 of
 * the pixels (and one more, for tiny images) each. */
static void check_bins_diff(const bins_diff *r, size_t n, const char *what)
{
  const int most = (int)(n / 1000) + 1;
  CHECK(r->unexplained == 0 && r->lab <= most && r->texton <= most,
        "%s: bins: %d differences on no edge and no tie; %d L, a, b ones near an edge, %d texton "
        "ties of %zu pixels (at most %d)",
        what, r->unexplained, r->lab, r->texton, n, most);
  printf("  %-34s bins: %d L, a, b bins near an edge (within %.1e), %d textons on near ties "
         "(within %.1e)\n",
         what, r->lab, r->lab_edge, r->texton, r->texton_gap);
}

/* The bins of img on the device (spmv_cl_contours_rgb with out NULL) against app_contour_bins. */
static void check_bins(spmv_cl_image *im, const geometry *G, const binning *B, const dsg_image *img,
                       const char *what)
{
  const size_t n = (size_t)img->width * img->height;
  unsigned char *dev = malloc(n * 4), *ref = malloc(n * 4);
  double seconds = -1.0;
  memset(dev, 0xff, n * 4);
  CHECK(app_contour_bins(img, ref) == DSG_OK, "%s: C bins: %s", what, dsg_error_message());
  int status = spmv_cl_contours_rgb(im, &G->g, &B->b, NULL, 0.0f, img->pixels, img->channels,
                                    img->width, img->height, NULL, dev, &seconds);
  CHECK(status == DSG_OK && seconds > 0.0, "%s: device bins: %s\n%s", what, dsg_error_message(),
        spmv_cl_build_log());
  if (status == DSG_OK) {
    const bins_diff r = compare_bins(img, dev, ref, what, 1);
    check_bins_diff(&r, n, what);
  }
  free(dev);
  free(ref);
}

/* The detector from the pixels: spmv_cl_contours_rgb against the C stages on the bins it made
 * (and those bins against app_contour_bins), then the library's app_contours_cl: the same outputs
 * as spmv_cl_contours_rgb with the test's tables, and where the bins agree with the reference's
 * app_contours' strength and parts within the tolerances. */
static void check_detector(spmv_cl_image *im, const geometry *G, const binning *B,
                           const dsg_image *img, const char *what)
{
  const int w = img->width, h = img->height;
  const size_t n = (size_t)w * h;
  unsigned char *dev_bins = malloc(n * 4), *ref_bins = malloc(n * 4), *lib_bins = malloc(n * 4);
  float *lib_strength = malloc(n * sizeof(float)), *lib_soft = malloc(n * sizeof(float));
  float *lib_parts = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  float *ref_strength = malloc(n * sizeof(float)), *ref_soft = malloc(n * sizeof(float));
  float *ref_parts = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  detector_out d;
  double seconds = -1.0;

  detector_out_alloc(&d, n, 1);
  CHECK(app_contour_bins(img, ref_bins) == DSG_OK, "%s: C bins: %s", what, dsg_error_message());
  spmv_contour_outputs out = {d.grad, d.parts, d.strength, d.orient, d.thin, d.oriented};
  int status = spmv_cl_contours_rgb(im, &G->g, &B->b, part_weight, part_bias, img->pixels,
                                    img->channels, w, h, &out, dev_bins, &seconds);
  CHECK(status == DSG_OK && seconds > 0.0, "%s: detector from pixels: %s", what,
        dsg_error_message());
  if (status != DSG_OK)
    goto out;
  const bins_diff rb = compare_bins(img, dev_bins, ref_bins, what, 1);
  check_bins_diff(&rb, n, what);
  const detector_diff r = compare_detector(dev_bins, w, h, &d, what, 1);
  check_detector_diff(&r, n, what);

  /* the library's path: its own tables, the same kernels */
  status = app_contours_cl(im, img, &app_contour_local, NULL, lib_strength, lib_parts, lib_soft,
                           NULL, lib_bins);
  CHECK(status == DSG_OK, "%s: app_contours_cl: %s", what, dsg_error_message());
  if (status != DSG_OK)
    goto out;
  /* the bins it hands out (the hierarchy's region cue) are the device's */
  CHECK(memcmp(lib_bins, dev_bins, n * 4) == 0, "%s: app_contours_cl's bins are not the device's",
        what);
  /* the same bins make the same parts, bit for bit, and the same weights the same strength */
  const double e_lib = max_abs_diff(lib_soft, d.strength, n);
  CHECK(memcmp(lib_parts, d.parts, n * APP_CONTOUR_PARTS * sizeof(float)) == 0 && e_lib <= GRAD_TOL,
        "%s: app_contours_cl's parts are not spmv_cl_contours_rgb's with the test's tables, or "
        "its strength is %.3g away",
        what, e_lib);
  if (memcmp(dev_bins, ref_bins, n * 4) != 0) {
    printf("  %-34s app_contours: not compared (the bins differ on near ties)\n", what);
    goto out;
  }
  CHECK(app_contours(img, &app_contour_local, NULL, ref_strength, ref_parts, ref_soft, NULL,
                     lib_bins) == DSG_OK,
        "%s: app_contours", what);
  CHECK(memcmp(lib_bins, ref_bins, n * 4) == 0, "%s: app_contours' bins are not app_contour_bins'",
        what);
  const double e_soft = max_abs_diff(lib_soft, ref_soft, n);
  const double e_parts = max_abs_diff(lib_parts, ref_parts, n * APP_CONTOUR_PARTS);
  double e_thin = 0.0;
  int one_sided = 0;
  for (size_t i = 0; i < n; i++) {
    if ((lib_strength[i] != 0.0f) != (ref_strength[i] != 0.0f)) {
      one_sided++;
      continue;
    }
    const double e = fabs((double)lib_strength[i] - ref_strength[i]);
    e_thin = e > e_thin || e != e ? e : e_thin;
  }
  /* the same bins: app_contours is the C stages compare_detector ran, so the pixels kept on
   * one side only are the ties it found */
  CHECK(e_soft <= GRAD_TOL && e_parts <= GRAD_TOL && e_thin <= GRAD_TOL && one_sided == r.thin_ties,
        "%s: app_contours_cl against app_contours: strength %.3g, parts %.3g, thinned %.3g "
        "(tolerance %g), %d pixels kept on one side (%d ties)",
        what, e_soft, e_parts, e_thin, GRAD_TOL, one_sided, r.thin_ties);
  printf("  %-34s app_contours_cl = app_contours: strength %.2e, parts %.2e, thinned %.2e, %d "
         "ties\n",
         what, e_soft, e_parts, e_thin, one_sided);
out:
  free(dev_bins);
  free(ref_bins);
  free(lib_bins);
  free(lib_strength);
  free(lib_soft);
  free(lib_parts);
  free(ref_strength);
  free(ref_soft);
  free(ref_parts);
  detector_out_free(&d);
}

/* w x h pixels of `channels` bytes: the synthetic colour image's channels (grey: its first,
 * alpha: random), or random bytes (random 1) */
static unsigned char *test_pixels(int w, int h, int channels, int random)
{
  const size_t n = (size_t)w * h;
  unsigned char *rgb = synthetic_rgb(w, h), *p = malloc(n * (size_t)channels);
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < channels; c++) {
      const int colour = channels >= 3 ? c : 0, alpha = c == 3 || (channels == 2 && c == 1);
      p[i * channels + c] =
          random || alpha ? (unsigned char)(test_rand64() & 255) : rgb[i * 3 + (size_t)colour];
    }
  free(rgb);
  return p;
}

/* Every byte value in every channel, in many combinations: 256 x 48 */
static unsigned char *palette(void)
{
  const int w = 256, h = 48;
  unsigned char *p = malloc((size_t)w * h * 3);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      unsigned char *q = p + ((size_t)y * w + x) * 3;
      q[0] = (unsigned char)x;
      q[1] = (unsigned char)(x * 7 + y * 31);
      q[2] = (unsigned char)(y * 16 + x / 2 + (x & 1) * 128);
    }
  return p;
}

static void bins_cases(spmv_cl_image *im, const geometry *G, binning *B)
{
  static const struct {
    int w, h, channels, random;
  } sizes[] = {{61, 47, 3, 0}, {203, 157, 3, 0}, {1, 1, 3, 0},   {37, 1, 3, 1},  {1, 29, 3, 1},
               {70, 9, 3, 1},  {53, 31, 1, 0},   {19, 23, 2, 0}, {45, 33, 4, 0}, {129, 65, 4, 1}};
  char what[64];
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    const int w = sizes[s].w, h = sizes[s].h, ch = sizes[s].channels;
    dsg_image img = {w, h, ch, test_pixels(w, h, ch, sizes[s].random)};
    snprintf(what, sizeof(what), "%s %dx%dx%d", sizes[s].random ? "random" : "synthetic", w, h, ch);
    check_bins(im, G, B, &img, what);
    free(img.pixels);
  }
  dsg_image pal = {256, 48, 3, palette()};
  check_bins(im, G, B, &pal, "palette 256x48x3");

  /* the comparisons can fail: a pixel far from its colour, two centres swapped */
  const size_t n = (size_t)pal.width * pal.height;
  unsigned char *ref = malloc(n * 4), *dev = malloc(n * 4);
  CHECK(app_contour_bins(&pal, ref) == DSG_OK, "palette bins");
  unsigned char *q = pal.pixels + (n / 2) * 3;
  q[0] ^= 0x80;
  q[1] ^= 0x80;
  CHECK(spmv_cl_contours_rgb(im, &G->g, &B->b, NULL, 0.0f, pal.pixels, 3, pal.width, pal.height,
                             NULL, dev, NULL) == DSG_OK,
        "moved pixel");
  q[0] ^= 0x80;
  q[1] ^= 0x80;
  bins_diff r = compare_bins(&pal, dev, ref, "palette, one pixel moved", 0);
  CHECK(r.unexplained > 0, "a moved pixel passes the bins' comparison");
  printf("  %-34s one moved pixel: %d bins differ on no edge or tie (must be > 0)\n",
         "palette 256x48x3", r.unexplained);
  float saved[APP_TEXTON_DIM];
  memcpy(saved, B->centres, sizeof(saved));
  memcpy(B->centres, B->centres + APP_TEXTON_DIM, sizeof(saved));
  memcpy(B->centres + APP_TEXTON_DIM, saved, sizeof(saved));
  CHECK(spmv_cl_contours_rgb(im, &G->g, &B->b, NULL, 0.0f, pal.pixels, 3, pal.width, pal.height,
                             NULL, dev, NULL) == DSG_OK,
        "swapped centres");
  memcpy(B->centres + APP_TEXTON_DIM, B->centres, sizeof(saved));
  memcpy(B->centres, saved, sizeof(saved));
  r = compare_bins(&pal, dev, ref, "palette, centres 0 and 1 swapped", 0);
  CHECK(r.unexplained > 0, "swapped texton centres pass the bins' comparison");
  printf("  %-34s centres 0 and 1 swapped: %d textons differ on no tie (must be > 0)\n",
         "palette 256x48x3", r.unexplained);
  free(ref);
  free(dev);
  free(pal.pixels);
}

static void detector_cases(spmv_cl_image *im, const geometry *G, const binning *B)
{
  static const struct {
    int w, h, channels, random;
  } sizes[] = {{61, 47, 3, 0}, {1, 1, 3, 0},   {37, 1, 3, 1}, {1, 29, 3, 1},
               {70, 9, 3, 1},  {53, 31, 1, 0}, {45, 33, 4, 0}};
  char what[64];
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    const int w = sizes[s].w, h = sizes[s].h, ch = sizes[s].channels;
    dsg_image img = {w, h, ch, test_pixels(w, h, ch, sizes[s].random)};
    snprintf(what, sizeof(what), "pixels %s %dx%dx%d", sizes[s].random ? "random" : "synthetic", w,
             h, ch);
    check_detector(im, G, B, &img, what);
    free(img.pixels);
  }
}

/* ---- the affinity ---- */

/* The device's N against app_affinity_build's for one image and parameter set. */
static double kept_product_error(const spmv_dia *A, const spmv_dia *R, spmv_kernel k,
                                 const float *x, const float *want);

/* N made with its values on the device alone (spmv_dia_create_shape): the host gets none; the
 * link masks made there equal spmv_dia_links's on the values read back (bit for bit: the same
 * floats, the same comparisons), and spmv_dia_host reads back exactly the values of the run
 * that read them back at once (N). */
static void check_device_only(spmv_cl_image *im, const spmv_affinity_geometry *g, int w, int h,
                              const float *f, int nfeat, const float *contours, double sigma_i,
                              double sigma_x, double sigma_c, const spmv_dia *N, const char *what)
{
  static const float thresholds[] = {1e-4f, 1e-7f, 0.05f};
  spmv_dia *S = NULL;
  int status = spmv_dia_create_shape(&S, N->rows, N->ndiag, N->offsets);
  CHECK(status == DSG_OK && S && !S->values, "%s: a matrix without host values", what);
  if (status != DSG_OK)
    return;
  status = spmv_cl_affinity(im, g, w, h, f, nfeat, contours, sigma_i, sigma_x, sigma_c, S, NULL,
                            NULL, NULL);
  CHECK(status == DSG_OK && !S->values && S->device, "%s: device-only affinity: %s", what,
        dsg_error_message());
  for (int t = 0; t < 3 && status == DSG_OK; t++) {
    spmv_links got, want;
    long differ = 0, set = 0;
    int ok = spmv_cl_links(im, S, thresholds[t], &got) == DSG_OK;
    ok = ok && spmv_dia_links(N, thresholds[t], &want) == DSG_OK;
    ok = ok && got.count == want.count && got.words == want.words;
    for (size_t b = 0; ok && b < (size_t)want.count * want.words; b++) {
      differ += got.bits[b] != want.bits[b];
      set += __builtin_popcount(want.bits[b]);
    }
    CHECK(ok && differ == 0, "%s: the device's links above %g: %ld of %zu words differ (%s)", what,
          (double)thresholds[t], differ, (size_t)want.count * want.words, dsg_error_message());
    CHECK(t < 2 || set > 0, "%s: no link above %g: the comparison is empty", what,
          (double)thresholds[t]);
    spmv_links_free(&got);
    spmv_links_free(&want);
  }
  if (status == DSG_OK) { /* products from S: the pitched kernels take its copy, the packed one
                           * reads it back for its upload; S keeps no host values */
    const int n = N->rows;
    float *x = malloc((size_t)n * sizeof(*x)), *want = malloc((size_t)n * sizeof(*want));
    for (int i = 0; x && i < n; i++)
      x[i] = (float)(test_uniform() - 0.5);
    if (x && want) {
      spmv_dia_mul_ref(N, x, want);
      const spmv_kernel kernels[] = {SPMV_KERNEL_IMAGE, SPMV_KERNEL_NAIVE};
      for (int k = 0; k < 2; k++) {
        const double e = kept_product_error(S, N, kernels[k], x, want);
        CHECK(e <= 1e-5 && !S->values, "%s: %s on a device-only N: row error %.3g", what,
              spmv_kernel_name(kernels[k]), e);
      }
    }
    free(x);
    free(want);
  }
  spmv_dia_drop_device(S); /* no host values: the device's copy is the only one, and stays */
  CHECK(S->device != NULL, "%s: the only copy was dropped", what);
  status = spmv_dia_host(S);
  CHECK(status == DSG_OK && S->values && memcmp(S->values, N->values, spmv_dia_bytes(N)) == 0,
        "%s: the values read back differ from the affinity's own read-back (%s)", what,
        dsg_error_message());
  spmv_dia_destroy(S);
}

/* The product of a matvec made from A (kernel k) against want, the reference product of the
 * values it should have read: the largest row error, relative to the rows of R (A's values on the
 * host; A itself where it has them). */
static double kept_product_error(const spmv_dia *A, const spmv_dia *R, spmv_kernel k,
                                 const float *x, const float *want)
{
  spmv_cl_options o;
  spmv_matvec *mv = NULL;
  float *y = malloc((size_t)A->rows * sizeof(*y));
  double err = HUGE_VAL;
  spmv_cl_options_init(&o);
  o.device = device_spec();
  o.kernel = k;
  if (y && spmv_matvec_create_opencl(&mv, A, &o) == DSG_OK && spmv_matvec_apply(mv, x, y) == DSG_OK)
    err = spmv_dia_row_error(R, x, y, want);
  else
    printf("  the matvec failed: %s\n", dsg_error_message());
  spmv_matvec_destroy(mv);
  free(y);
  return err;
}

/* The device affinity leaves N's values on the device, and a product there takes that copy
 * instead of uploading the host's: shown by zeroing the host's values behind the copy's back (a
 * pitched kernel still multiplies by the device's N; the packed naive kernel, which cannot take
 * the copy, and any kernel once the copy is dropped, by the zeros). */
static void check_kept_copy(spmv_dia *N, const char *what)
{
  const int n = N->rows;
  float *x = malloc((size_t)n * sizeof(*x)), *want = malloc((size_t)n * sizeof(*want));
  float *zero = calloc((size_t)n, sizeof(*zero));
  float *saved = malloc(spmv_dia_bytes(N));
  CHECK(N->device != NULL, "%s: the device affinity kept no device copy of N", what);
  if (!x || !want || !zero || !saved || !N->device)
    goto out;
  for (int i = 0; i < n; i++)
    x[i] = (float)(test_uniform() - 0.5);
  spmv_dia_mul_ref(N, x, want);
  memcpy(saved, N->values, spmv_dia_bytes(N));
  memset(N->values, 0, spmv_dia_bytes(N)); /* the host's values only */
  const spmv_kernel pitched[] = {SPMV_KERNEL_ALIGNED, SPMV_KERNEL_IMAGE};
  for (int k = 0; k < 2; k++) {
    const double e = kept_product_error(N, N, pitched[k], x, want);
    CHECK(e <= 1e-5, "%s: %s from the device copy: row error %.3g", what,
          spmv_kernel_name(pitched[k]), e);
  }
  CHECK(kept_product_error(N, N, SPMV_KERNEL_NAIVE, x, zero) == 0.0,
        "%s: the packed kernel did not upload the host's values", what);
  spmv_dia_drop_device(N);
  CHECK(N->device == NULL && kept_product_error(N, N, SPMV_KERNEL_ALIGNED, x, zero) == 0.0,
        "%s: the dropped copy was still used", what);
  memcpy(N->values, saved, spmv_dia_bytes(N));
out:
  free(x);
  free(want);
  free(zero);
  free(saved);
}

static void check_affinity(spmv_cl_image *im, int w, int h, const float *f, int nfeat,
                           const float *contours, int radius, double sigma_i, double sigma_x,
                           double sigma_c, const char *what)
{
  const int n = w * h, ndisc = app_disc_size(radius), cap = 2 * radius + 1;
  app_affinity_params p = {radius, sigma_i, sigma_x, contours, sigma_c, NULL};
  spmv_dia *ref = NULL, *N = NULL;
  double *ref_sd = NULL, *sd = malloc((size_t)n * sizeof(double)), seconds = -1.0;
  int *dx = malloc((size_t)ndisc * sizeof(int)), *dy = malloc((size_t)ndisc * sizeof(int));
  int *diag_of = malloc((size_t)ndisc * sizeof(int)),
      *line_at = malloc((size_t)(ndisc + 1) * sizeof(int));
  int *lx = malloc((size_t)ndisc * cap * sizeof(int)),
      *ly = malloc((size_t)ndisc * cap * sizeof(int));
  int linked = -1, status;

  status = app_affinity_build(w, h, f, nfeat, &p, &ref, &ref_sd);
  CHECK(status == DSG_OK, "%s: C affinity: %s", what, dsg_error_message());
  if (status != DSG_OK)
    goto out;
  /* the library's geometry: its disc, the diagonal of each offset, the lines */
  app_disc_offsets(radius, dx, dy);
  line_at[0] = 0;
  for (int k = 0; k < ndisc; k++) {
    const int o = dy[k] * w + dx[k];
    diag_of[k] = -1;
    if (abs(dx[k]) < w && abs(dy[k]) < h)
      for (int d = 0; d < ref->ndiag; d++)
        if (ref->offsets[d] == o)
          diag_of[k] = d;
    line_at[k + 1] = line_at[k] + app_line(dx[k], dy[k], lx + line_at[k], ly + line_at[k]);
  }
  spmv_affinity_geometry g = {ndisc, dx, dy, diag_of, line_at, lx, ly};
  status = spmv_dia_create(&N, n, ref->ndiag, ref->offsets);
  CHECK(status == DSG_OK, "create N");
  if (status != DSG_OK)
    goto out;
  for (size_t i = 0; i < (size_t)ref->ndiag * ref->pitch; i++)
    N->values[i] = NAN; /* overwritten everywhere */
  status = spmv_cl_affinity(im, &g, w, h, f, nfeat, contours, sigma_i, sigma_x, sigma_c, N, sd,
                            &linked, &seconds);
  CHECK(status == DSG_OK, "%s: device affinity: %s", what, dsg_error_message());
  if (status != DSG_OK)
    goto out;
  double e_rel = 0.0, e_big = 0.0, e_sd = 0.0;
  long bad_zero = 0, bad = 0, nonzero = 0;
  for (int d = 0; d < ref->ndiag; d++)
    for (size_t i = 0; i < ref->pitch; i++) {
      const float a = N->values[(size_t)d * N->pitch + i],
                  b = ref->values[(size_t)d * ref->pitch + i];
      nonzero += b != 0.0f;
      if (!CLOSE(a, b, N_RTOL, N_ATOL))
        bad++;
      if (fabs(b) >= 1e-30)
        e_rel = fmax(e_rel, fabs((double)a - b) / fabs(b));
      if (fabs(b) >= 1e-7)
        e_big = fmax(e_big, fabs((double)a - b) / fabs(b));
      if ((a == 0.0f) != (b == 0.0f) && fmaxf(fabsf(a), fabsf(b)) >= N_ATOL)
        bad_zero++;
    }
  for (int i = 0; i < n; i++)
    e_sd = fmax(e_sd, fabs(sd[i] - ref_sd[i]) / ref_sd[i]);
  CHECK(bad == 0 && bad_zero == 0 && e_sd <= N_RTOL && linked == 1 && seconds > 0.0,
        "%s: %ld entries beyond %g relative / %g absolute (max relative %.3g), %ld zeros moved, "
        "D^1/2 %.3g, linked %d",
        what, bad, N_RTOL, N_ATOL, e_rel, bad_zero, e_sd, linked);
  printf("  %-34s N: %ld nonzeros in %d diagonals, max relative %.2e (entries >= 1e-7), %.2e "
         "(>= 1e-30); D^1/2 %.2e\n",
         what, nonzero, ref->ndiag, e_big, e_rel, e_sd);

  check_kept_copy(N, what);
  check_device_only(im, &g, w, h, f, nfeat, contours, sigma_i, sigma_x, sigma_c, N, what);

  if (contours) { /* sigma_c 1% larger: the comparison must see it */
    status = spmv_cl_affinity(im, &g, w, h, f, nfeat, contours, sigma_i, sigma_x, sigma_c * 1.01, N,
                              NULL, NULL, NULL);
    double moved = 0.0;
    for (int d = 0; d < ref->ndiag; d++)
      for (size_t i = 0; i < (size_t)n; i++) {
        const float a = N->values[(size_t)d * N->pitch + i],
                    b = ref->values[(size_t)d * ref->pitch + i];
        if (b != 0.0f)
          moved = fmax(moved, fabs((double)a - b) / fabs(b));
      }
    CHECK(status == DSG_OK && moved > N_RTOL, "%s: sigma_c 1%% larger moves N by only %.3g", what,
          moved);
  }
out:
  spmv_dia_destroy(ref);
  spmv_dia_destroy(N);
  free(ref_sd);
  free(sd);
  free(dx);
  free(dy);
  free(diag_of);
  free(line_at);
  free(lx);
  free(ly);
}

static void affinity_cases(spmv_cl_image *im)
{
  const int w = 48, h = 40, n = w * h;
  unsigned char *rgb = synthetic_rgb(w, h);
  dsg_image img = {w, h, 3, rgb};
  float *f = malloc((size_t)n * 3 * sizeof(float)), *edges = malloc((size_t)n * sizeof(float));
  float *noise = malloc((size_t)n * sizeof(float));
  for (int i = 0; i < 3 * n; i++)
    f[i] = rgb[i] / 255.0f;
  for (int i = 0; i < n; i++)
    noise[i] = (float)(test_uniform() * test_uniform());
  CHECK(app_contours(&img, &app_contour_local, NULL, edges, NULL, NULL, NULL, NULL) == DSG_OK,
        "detector: %s", dsg_error_message());
  check_affinity(im, w, h, f, 3, edges, 5, 0.1, 4.0, 0.1, "48x40 colour + contours r=5");
  check_affinity(im, w, h, NULL, 0, edges, 5, 0.1, 4.0, 0.1, "48x40 contours alone r=5");
  check_affinity(im, w, h, f, 3, noise, 8, 0.2, 5.0, 0.3, "48x40 colour + random r=8");
  check_affinity(im, w, h, f, 3, NULL, 5, 0.1, 4.0, 0.1, "48x40 colour, no contours r=5");
  check_affinity(im, 7, 30, f, 1, noise, 5, 0.3, 4.0, 0.2, "7x30 (width < 2r) r=5");
  check_affinity(im, 30, 1, f, 2, noise, 3, 0.3, 4.0, 0.2, "30x1 r=3");
  free(rgb);
  free(f);
  free(edges);
  free(noise);
}

/* ---- gPb: the spectral term on the device ---- */

#define GPB_TOL 1e-5 /* |gPb_cl - gPb_c|, absolute (gPb in [0, 1)) */

/* The C reference's gPb of pixel i at orientation o (app_contour_gpb's formula), for the ties */
static double gpb_at(const float *oriented, const float *spec, double weight, size_t n, size_t i,
                     int o)
{
  const double bias = app_contour_local.bias, s0 = 1.0 / (1.0 + exp(-bias));
  const double half = log((0.5 * (1.0 - s0) + s0) / (0.5 * (1.0 - s0))) - bias;
  double q = oriented[(size_t)o * n + i] * (1.0 - s0) + s0;
  q = q < s0 ? s0 : q > 1.0 - 1e-12 ? 1.0 - 1e-12 : q;
  const double x = log(q / (1.0 - q)) - bias + weight * spec[(size_t)o * n + i];
  return x > 0.0 ? x / (x + half) : 0.0;
}

typedef struct gpb_case {
  int w, h, nvec; /* nvec eigenvectors after the first */
  eig_result res;
  double *sd;
  float *oriented;
} gpb_case;

/* Eigenpairs of a w x h image as a solve hands them over: vector 0 = D^1/2 / |D^1/2|; smooth
 * waves with a step; one constant vector (adds nothing); one pair with 1 - mu below 1e-6 (another
 * component's indicator: adds nothing); products N u = mu u plus a wave, so that the pixels
 * isolated by D (a column of degree 1e-4 of the mean) visibly take their values from them. The
 * detector's combination: a pattern in [0, 1) with exact 0 and values near 1. */
static void gpb_case_init(gpb_case *c, int w, int h)
{
  const size_t n = (size_t)w * h;
  const int nconv = 7;
  memset(c, 0, sizeof(*c));
  c->w = w;
  c->h = h;
  c->nvec = nconv - 1;
  c->res.n = (int)n;
  c->res.nconv = nconv;
  c->res.values = malloc(nconv * sizeof(double));
  c->res.vectors = malloc(n * nconv * sizeof(float));
  c->res.products = malloc(n * nconv * sizeof(float));
  c->sd = malloc(n * sizeof(double));
  c->oriented = malloc(n * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  const double mu[7] = {1.0, 0.995, 0.98, 0.9999995, 0.95, 0.9, 0.85};
  for (int j = 0; j < nconv; j++)
    c->res.values[j] = mu[j];
  for (size_t i = 0; i < n; i++) {
    const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
    c->sd[i] = x == w / 3 && w > 2 ? 1e-2 * sqrt(20.0) : sqrt(20.0 + 4.0 * sin(0.3 * x + 0.2 * y));
  }
  for (int j = 0; j < nconv; j++)
    for (size_t i = 0; i < n; i++) {
      const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
      double v;
      switch (j) {
      case 0: v = c->sd[i]; break;
      case 2: v = 0.0; break; /* constant (0: D^-1/2 u rounds alike on both sides) */
      default:
        v = sin(0.17 * j * x + 0.3) * cos(0.11 * j * y) + (x > w / 2 && y > h / 3 ? 0.8 : 0.0);
      }
      float u = (float)(v * c->sd[i] * 0.05);
      c->res.vectors[(size_t)j * n + i] = u;
      c->res.products[(size_t)j * n + i] =
          j == 2 ? 0.0f : (float)(mu[j] * u + 0.02 * c->sd[i] * cos(0.5 * x - 0.4 * y + j));
    }
  for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++)
    for (size_t i = 0; i < n; i++) {
      const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
      double v = 0.5 + 0.5 * sin(0.23 * x * (o + 1) - 0.19 * y + o);
      if ((x + y + o) % 11 == 0)
        v = 0.0;
      if ((x * 3 + y + o) % 17 == 0)
        v = 1.0 - 1e-7 * (o + 1);
      c->oriented[(size_t)o * n + i] = (float)v;
    }
}

static void gpb_case_free(gpb_case *c)
{
  free(c->res.values);
  free(c->res.vectors);
  free(c->res.products);
  free(c->sd);
  free(c->oriented);
}

/* The device's gPb (app_spectral_gpb_cl, the library's path) against app_spectral_gradient,
 * app_contour_gpb and app_contour_thin: strength within GPB_TOL, orientations and thinned pixels
 * differing only on ties within TIE_TOL (on at most 1% of the pixels). Returns the strength's
 * largest difference; expect_pass 0: a mutant input (dev_res or dev_weight, the device's, not
 * c->res or weight), which must differ beyond GPB_TOL. */
static double check_gpb(spmv_cl_image *im, const gpb_case *c, const eig_result *dev_res,
                        double weight, double dev_weight, const char *what, int expect_pass)
{
  const int w = c->w, h = c->h;
  const size_t n = (size_t)w * h;
  float *spec = malloc(n * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  float *ref = malloc(n * sizeof(float)), *ref_thin = malloc(n * sizeof(float));
  float *E = malloc(n * sizeof(float)), *thin = malloc(n * sizeof(float));
  unsigned char *ref_orient = malloc(n), *orient = malloc(n);
  int ties = 0, unexplained = 0;
  double e = 0.0, te = 0.0;
  for (size_t i = 0; i < n; i++)
    E[i] = thin[i] = NAN; /* overwritten everywhere */
  CHECK(app_spectral_gradient(&c->res, c->sd, w, h, APP_CONTOUR_ORIENTATIONS, spec) == DSG_OK,
        "%s: C spectral term: %s", what, dsg_error_message());
  app_contour_gpb(c->oriented, &app_contour_local, spec, weight, w, h, ref, ref_orient);
  app_contour_thin(ref, ref_orient, w, h, ref_thin);
  int status = app_spectral_gpb_cl(im, dev_res, c->sd, w, h, c->oriented, &app_contour_local,
                                   dev_weight, E, NULL, thin);
  CHECK(status == DSG_OK, "%s: device gPb: %s", what, dsg_error_message());
  /* the orientations: the library asks for none; a call asking for them alone */
  status = app_spectral_gpb_cl(im, dev_res, c->sd, w, h, c->oriented, &app_contour_local,
                               dev_weight, NULL, orient, NULL);
  CHECK(status == DSG_OK, "%s: device orientations: %s", what, dsg_error_message());
  e = max_abs_diff(E, ref, n);
  for (size_t i = 0; i < n && expect_pass; i++) {
    const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
    int tie = 0;
    if (orient[i] != ref_orient[i]) {
      tie = orient[i] < APP_CONTOUR_ORIENTATIONS &&
            fabs(gpb_at(c->oriented, spec, weight, n, i, orient[i]) -
                 gpb_at(c->oriented, spec, weight, n, i, ref_orient[i])) <= TIE_TOL;
      ties += tie;
      unexplained += !tie;
    }
    if ((thin[i] != 0.0f) == (ref_thin[i] != 0.0f)) {
      const double d = fabs((double)thin[i] - ref_thin[i]);
      te = d > te || d != d ? d : te;
      continue;
    }
    const double th = ref_orient[i] * (M_PI / APP_CONTOUR_ORIENTATIONS), m = ref[i];
    for (int k = 1; k <= APP_CONTOUR_REACH; k++) {
      const double a = bilinear(ref, w, h, x - k * sin(th), y + k * cos(th));
      const double b = bilinear(ref, w, h, x + k * sin(th), y - k * cos(th));
      tie = tie || fabs(m - a) <= TIE_TOL || fabs(m - b) <= TIE_TOL;
    }
    ties += tie;
    if (!tie && unexplained++ < 5)
      fprintf(stderr, "%s: pixel (%d, %d) thinned %.9g, the C reference %.9g\n", what, x, y,
              thin[i], ref_thin[i]);
  }
  if (expect_pass) {
    CHECK(e <= GPB_TOL && te <= GPB_TOL, "%s: gPb %.3g, thinned %.3g (tolerance %g)", what, e, te,
          GPB_TOL);
    CHECK(unexplained == 0 && ties <= (int)(n / 100) + 1,
          "%s: %d differences on no tie, %d ties of %zu pixels", what, unexplained, ties, n);
    printf("  %-34s gPb %.2e, thinned %.2e; ties %d\n", what, e, te, ties);
  } else {
    CHECK(e > GPB_TOL, "%s: a mutant within tolerance (%.3g): the comparison sees nothing", what,
          e);
    printf("  %-34s the mutant differs by %.2e\n", what, e);
  }
  free(spec);
  free(ref);
  free(ref_thin);
  free(E);
  free(thin);
  free(ref_orient);
  free(orient);
  return e;
}

static void gpb_cases(spmv_cl_image *im)
{
  const int sizes[][2] = {{61, 47}, {1, 1}, {37, 1}, {1, 29}, {70, 9}};
  for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
    gpb_case c;
    char what[64];
    gpb_case_init(&c, sizes[k][0], sizes[k][1]);
    snprintf(what, sizeof(what), "gPb %dx%d", c.w, c.h);
    check_gpb(im, &c, &c.res, DSG_SPECTRAL_WEIGHT, DSG_SPECTRAL_WEIGHT, what, 1);
    if (k == 0) {
      /* mutants: the weight 1% off; the products not handed over (the isolated column) */
      check_gpb(im, &c, &c.res, DSG_SPECTRAL_WEIGHT, DSG_SPECTRAL_WEIGHT * 1.01,
                "gPb weight x1.01 (mutant)", 0);
      eig_result no_products = c.res;
      no_products.products = NULL;
      check_gpb(im, &c, &no_products, DSG_SPECTRAL_WEIGHT, DSG_SPECTRAL_WEIGHT,
                "gPb without products (mutant)", 0);
      /* no vector after the first: the detector's combination alone */
      eig_result one = c.res;
      one.nconv = 1;
      gpb_case c1 = c;
      c1.res = one;
      check_gpb(im, &c1, &one, DSG_SPECTRAL_WEIGHT, DSG_SPECTRAL_WEIGHT, "gPb, one eigenvector", 1);
    }
    gpb_case_free(&c);
  }
  /* what spmv_cl_gpb refuses */
  geometry G;
  geometry_init(&G);
  const double sd = 1.0;
  const spmv_spectral s = {0, NULL, NULL, NULL, NULL, &sd, 0.0, 3, NULL, NULL};
  float strength = 0.0f;
  const spmv_contour_outputs out = {NULL, NULL, &strength, NULL, NULL, NULL};
  int status = spmv_cl_gpb(im, &G.g, &s, &strength, 0.0f, 1.0f, 1, 1, &out, NULL);
  CHECK(status == DSG_ERR_INVALID && strstr(dsg_error_message(), "filters"),
        "gPb without filters: %d %s", status, dsg_error_message());
}

/* ---- k-means on the device ---- */

/* n points of dimension dim around `blobs` centres (0: uniform noise), with `dups` of them
 * copies of point 0 (coincident points: empty clusters and zero distances) */
static float *kmeans_points(size_t n, int dim, int blobs, size_t dups)
{
  float *pts = malloc(n * (size_t)dim * sizeof(float));
  for (size_t i = 0; i < n; i++) {
    const int b = blobs ? (int)(test_uniform() * blobs) : 0;
    for (int j = 0; j < dim; j++)
      pts[i * dim + j] = (float)((blobs ? 3.0 * ((b * 7 + j * 3) % 5) : 0.0) +
                                 (test_uniform() - 0.5) * (blobs ? 1.0 : 4.0));
  }
  for (size_t i = 1; i <= dups && i < n; i++)
    memcpy(pts + i * dim, pts, (size_t)dim * sizeof(float));
  return pts;
}

/* app_kmeans_cl against app_kmeans: the same labels and inertia bit for bit; dev (optional) the
 * device's points when they differ from the host's (a mutant, which must not agree). */
static void check_kmeans(spmv_cl_image *im, const float *pts, const float *dev, size_t n, int dim,
                         int k, int restarts, const char *what)
{
  int *ref = malloc(n * sizeof(int)), *got = malloc(n * sizeof(int));
  double in_ref = -1.0, in_got = -2.0;
  const app_kmeans_params kp = {k, restarts, 300, 7};
  for (size_t i = 0; i < n; i++)
    got[i] = -5;
  CHECK(app_kmeans(pts, n, dim, &kp, ref, &in_ref) == DSG_OK, "%s: C k-means: %s", what,
        dsg_error_message());
  const int status = app_kmeans_cl(im, dev ? dev : pts, n, dim, &kp, got, &in_got);
  if (status == DSG_ERR_LIMIT && strstr(dsg_error_message(), "double precision")) {
    printf("  %-34s skipped: %s\n", what, dsg_error_message()); /* the library takes the host */
    free(ref);
    free(got);
    return;
  }
  CHECK(status == DSG_OK, "%s: device k-means: %s", what, dsg_error_message());
  size_t differ = 0;
  for (size_t i = 0; i < n; i++)
    differ += got[i] != ref[i];
  if (dev) {
    CHECK(differ > 0 || in_got != in_ref,
          "%s: a mutant gives the same labels and inertia: the comparison sees nothing", what);
    printf("  %-34s the mutant differs: %zu labels, inertia %.17g against %.17g\n", what, differ,
           in_got, in_ref);
  } else {
    CHECK(differ == 0 && in_got == in_ref, "%s: %zu labels differ, inertia %.17g against %.17g",
          what, differ, in_got, in_ref);
    printf("  %-34s labels and inertia equal (%.10g)\n", what, in_got);
  }
  free(ref);
  free(got);
}

static void kmeans_cases(spmv_cl_image *im)
{
  struct {
    size_t n;
    int dim, k, blobs, restarts;
    size_t dups;
  } cases[] = {{5000, 5, 6, 6, 3, 0}, {1237, 15, 16, 9, 2, 0}, {64, 2, 9, 0, 2, 40},
               {3, 1, 3, 0, 1, 0},    {700, 3, 2, 2, 8, 0},    {2000, 1, 40, 0, 1, 1500},
               {30, 2, 3, 0, 2, 29},    /* one point 30 times: clusters left empty */
               {70000, 3, 5, 5, 2, 0}}; /* 136 chunks of the points (cluster.c) */
  for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
    char what[64];
    float *pts = kmeans_points(cases[c].n, cases[c].dim, cases[c].blobs, cases[c].dups);
    snprintf(what, sizeof(what), "k-means n %zu dim %d k %d%s", cases[c].n, cases[c].dim,
             cases[c].k, cases[c].dups ? " dups" : "");
    check_kmeans(im, pts, NULL, cases[c].n, cases[c].dim, cases[c].k, cases[c].restarts, what);
    if (c == 0) {
      /* one coordinate of one point moved by a float's last bit on the device's side */
      float *moved = malloc(cases[c].n * cases[c].dim * sizeof(float));
      memcpy(moved, pts, cases[c].n * cases[c].dim * sizeof(float));
      moved[17 * cases[c].dim + 1] = nextafterf(moved[17 * cases[c].dim + 1], INFINITY);
      check_kmeans(im, pts, moved, cases[c].n, cases[c].dim, cases[c].k, cases[c].restarts,
                   "k-means, a point moved (mutant)");
      free(moved);
    }
    free(pts);
  }
  /* what the device refuses */
  spmv_cl_points *none = NULL;
  const float one = 1.0f;
  int status = spmv_cl_points_create(im, &one, 1, 1, 2, 64, &none);
  CHECK(status == DSG_ERR_INVALID && !none && strstr(dsg_error_message(), "k 2"),
        "k-means with k > n: %d %s", status, dsg_error_message());
}

/* ---- failures ---- */

static void error_paths(spmv_cl_image *im, const geometry *G, const binning *B)
{
  unsigned char bins[4 * 6] = {0};
  float grad[12 * 8 * 6];
  bins[2] = 200; /* channel 0 has 25 bins */
  int status = spmv_cl_contour_gradients(im, &G->g, bins, 3, 2, grad, NULL);
  CHECK(status == DSG_ERR_INVALID && strstr(dsg_error_message(), "bin 200"), "bin 200: %d %s",
        status, dsg_error_message());
  geometry odd = *G;
  odd.g.dx = odd.dx;
  odd.g.dy = odd.dy;
  odd.g.sector = odd.sector;
  odd.g.bins = odd.bins;
  odd.g.count = odd.count;
  odd.g.smooth_radius = odd.radius;
  odd.count[1] = 3; /* not whole opposite pairs */
  bins[2] = 0;
  status = spmv_cl_contour_gradients(im, &odd.g, bins, 3, 2, grad, NULL);
  CHECK(status == DSG_ERR_INVALID && strstr(dsg_error_message(), "even"), "odd count: %d %s",
        status, dsg_error_message());

  /* the detector from pixels: channels, the dictionary, the thinning's reach */
  unsigned char pixels[6 * 4] = {0};
  float thin[6], weight[APP_CONTOUR_PARTS] = {0};
  spmv_contour_outputs out = {NULL, NULL, NULL, NULL, thin, NULL};
  status = spmv_cl_contours_rgb(im, &G->g, &B->b, weight, 0.0f, pixels, 5, 3, 2, &out, NULL, NULL);
  CHECK(status == DSG_ERR_INVALID && strstr(dsg_error_message(), "5 channels"), "5 channels: %d %s",
        status, dsg_error_message());
  binning big = *B;
  big.b.ncentres = 40;
  status = spmv_cl_contours_rgb(im, &G->g, &big.b, weight, 0.0f, pixels, 3, 3, 2, &out, NULL, NULL);
  CHECK(status == DSG_ERR_INVALID && strstr(dsg_error_message(), "40 centres"), "40 centres: %d %s",
        status, dsg_error_message());
  geometry far = *G;
  far.g.reach = SPMV_CONTOUR_MAX_REACH + 1;
  status = spmv_cl_contours_rgb(im, &far.g, &B->b, weight, 0.0f, pixels, 3, 3, 2, &out, NULL, NULL);
  CHECK(status == DSG_ERR_INVALID && strstr(dsg_error_message(), "reach"), "reach %d: %d %s",
        far.g.reach, status, dsg_error_message());

  spmv_cl_image *other = NULL;
  status = spmv_cl_image_create(&other, device_spec(), "/nonexistent-kernel-dir");
  CHECK(status == DSG_OK, "create with a kernel folder: %s", dsg_error_message());
  if (other) {
    status = spmv_cl_contour_gradients(other, &G->g, bins, 3, 2, grad, NULL);
    CHECK(status == DSG_ERR_IO, "missing kernel folder: %d %s", status, dsg_error_message());
  }
  spmv_cl_image_destroy(other);
  spmv_cl_image_destroy(NULL);
}

int main(void)
{
  spmv_cl_device *list = NULL;
  spmv_cl_image *im = NULL;
  int count = 0;
  static geometry G; /* 60 KiB of tables */
  static binning B;

  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_cl_image: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  free(list);
  CHECK(spmv_cl_image_create(&im, device_spec(), NULL) == DSG_OK, "create: %s",
        dsg_error_message());
  if (!im)
    return check_report("test_cl_image");
  printf("test_cl_image: device %s\n", spmv_cl_image_device(im));

  geometry_init(&G);
  library_weights();
  printf("  the library's combination: bias %.5f, weights", part_bias);
  for (int p = 0; p < APP_CONTOUR_PARTS; p++)
    printf(" %.4f", part_weight[p]);
  printf("\n");
  CHECK(G.g.ndisc > 0, "disc");
  contours_synthetic(im, &G, 61, 47);
  contours_random(im, &G, 1, 1);
  contours_random(im, &G, 37, 1);
  contours_random(im, &G, 1, 29);
  contours_random(im, &G, 70, 9);
  binning_init(&B);
  bins_cases(im, &G, &B);
  detector_cases(im, &G, &B);
  affinity_cases(im);
  gpb_cases(im);
  kmeans_cases(im);
  error_paths(im, &G, &B);
  spmv_cl_image_destroy(im);
  return check_report("test_cl_image");
}
