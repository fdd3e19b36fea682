/* The image stages on an OpenCL device (spmv_image.h) against their C references in the library:
 *  - the oriented histogram gradients (kernels/contours.cl) equal app_contour_gradients within
 *    GRAD_TOL (float sums in another order; chi2 values lie in [0, 1]) on the bins of a synthetic
 *    image (app_contour_bins, textons included) and on random bins of awkward sizes (1 x 1, one
 *    row, one column, sizes off the work-group size), with the library's own disc, channels and
 *    bin smoothing; one perturbed input bin must move the result beyond GRAD_TOL (the comparison
 *    sees a difference);
 *  - the combination and thinning equal app_contour_combine and app_contour_thin: strength and
 *    parts within GRAD_TOL, and an orientation or a thinned pixel differs only where the C
 *    reference's values tie within TIE_TOL;
 *  - the affinity N (kernels/affinity.cl) equals app_affinity_build with the intervening-contour
 *    term (contours from the library's detector, and random ones), with and without features,
 *    without contours, and on an image narrower than the disc (shared diagonals): every entry
 *    within a relative N_RTOL (float exp against double) over an absolute N_ATOL, the same zero
 *    pattern wherever either value is above N_ATOL (only a weight that underflows in one of them
 *    may be zero there and not here), D^1/2 within N_RTOL, linked set; a 1% change of sigma_c
 *    must move N beyond the tolerance;
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

#define GRAD_TOL 1e-5 /* |chi2_cl - chi2_c|, absolute (chi2 in [0, 1]) */
#define TIE_TOL 1e-5  /* reference values this close may order either way on the device */
#define N_RTOL 1e-5   /* N entries and D^1/2: relative */
#define N_ATOL 1e-30  /* N entries: absolute, for weights near float underflow (subnormal W) */

/* The combination's weights and bias: contours.c keeps them in a static table (fit on BSDS500,
 * so they change), and the test reads them back through app_contour_combine, the function that
 * uses them. Pixel 0 has every part at -1e4 (z -> -inf: v = -s0 / (1 - s0), so the bias); pixel
 * 1 + p has part p at 1 (v = (logistic(bias + w_p) - s0) / (1 - s0), so w_p). Weights are >= 0
 * and some > 0. Accurate to a few 1e-7, which moves the strength by less than that. */
static float part_weight[APP_CONTOUR_PARTS];
static float part_bias;

static void library_weights(void)
{
  const int w = APP_CONTOUR_PARTS + 1, n = w;
  float grad[APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS * (APP_CONTOUR_PARTS + 1)] = {0};
  float strength[APP_CONTOUR_PARTS + 1],
      oriented[APP_CONTOUR_ORIENTATIONS * (APP_CONTOUR_PARTS + 1)];
  unsigned char orientation[APP_CONTOUR_PARTS + 1];
  for (int p = 0; p < APP_CONTOUR_PARTS; p++)
    for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++) {
      grad[(p * APP_CONTOUR_ORIENTATIONS + o) * n + 0] = -1e4f;
      grad[(p * APP_CONTOUR_ORIENTATIONS + o) * n + 1 + p] = 1.0f;
    }
  app_contour_combine(grad, w, 1, strength, oriented, orientation);
  const double v0 = oriented[0], s0 = -v0 / (1.0 - v0), bias = log(s0 / (1.0 - s0));
  part_bias = (float)bias;
  for (int p = 0; p < APP_CONTOUR_PARTS; p++) {
    const double sig = s0 + oriented[1 + p] * (1.0 - s0);
    part_weight[p] = (float)(log(sig / (1.0 - sig)) - bias);
  }
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

/* The detector on the device against the C stages, on bins of a w x h image. */
static void check_contours(spmv_cl_image *im, const geometry *G, const unsigned char *bins, int w,
                           int h, const char *what, int perturb)
{
  const size_t n = (size_t)w * h, ngrad = n * APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS;
  float *ref = malloc(ngrad * sizeof(float)), *grad = malloc(ngrad * sizeof(float));
  float *parts = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  float *ref_parts = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  float *strength = malloc(n * sizeof(float)), *ref_strength = malloc(n * sizeof(float));
  float *oriented = malloc(n * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  float *thin = malloc(n * sizeof(float)), *ref_thin = malloc(n * sizeof(float));
  unsigned char *orient = malloc(n), *ref_orient = malloc(n), *moved = malloc(n * 4);
  double seconds = -1.0;

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
  spmv_contour_outputs out = {grad, parts, strength, orient, thin};
  status = spmv_cl_contours(im, &G->g, part_weight, part_bias, bins, w, h, &out, &seconds);
  CHECK(status == DSG_OK, "%s: detector: %s", what, dsg_error_message());
  if (status != DSG_OK)
    goto out;
  app_contour_combine(ref, w, h, ref_strength, oriented, ref_orient);
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
  const double e_grad = max_abs_diff(grad, ref, ngrad);
  const double e_parts = max_abs_diff(parts, ref_parts, n * APP_CONTOUR_PARTS);
  const double e_strength = max_abs_diff(strength, ref_strength, n);
  CHECK(e_grad <= GRAD_TOL && e_parts <= GRAD_TOL && e_strength <= GRAD_TOL,
        "%s: detector: gradients %.3g, parts %.3g, strength %.3g (tolerance %g)", what, e_grad,
        e_parts, e_strength, GRAD_TOL);
  int orient_ties = 0, thin_ties = 0, thin_on = 0;
  double e_thin = 0.0;
  for (size_t i = 0; i < n; i++) {
    const int x = (int)(i % (size_t)w), y = (int)(i / (size_t)w);
    if (orient[i] != ref_orient[i]) {
      const double a = oriented[(size_t)orient[i] * n + i],
                   b = oriented[(size_t)ref_orient[i] * n + i];
      CHECK(orient[i] < APP_CONTOUR_ORIENTATIONS && fabs(a - b) <= TIE_TOL,
            "%s: pixel (%d, %d): orientation %d, the C reference's %d (values %.9g, %.9g)", what, x,
            y, orient[i], ref_orient[i], a, b);
      orient_ties++;
    }
    thin_on += ref_thin[i] > 0.0f;
    if ((thin[i] != 0.0f) == (ref_thin[i] != 0.0f)) {
      const double d = fabs((double)thin[i] - ref_thin[i]);
      e_thin = d > e_thin ? d : e_thin;
      continue;
    }
    /* kept on one side only: a tie of the reference's samples, or an orientation tie */
    const double th = ref_orient[i] * (M_PI / APP_CONTOUR_ORIENTATIONS);
    const double m = ref_strength[i];
    const double a = bilinear(ref_strength, w, h, x - sin(th), y + cos(th));
    const double b = bilinear(ref_strength, w, h, x + sin(th), y - cos(th));
    CHECK(orient[i] != ref_orient[i] || fabs(m - a) <= TIE_TOL || fabs(m - b) <= TIE_TOL,
          "%s: pixel (%d, %d) thinned %g, the C reference %g (m %.9g, samples %.9g %.9g)", what, x,
          y, thin[i], ref_thin[i], m, a, b);
    thin_ties++;
  }
  CHECK(e_thin <= GRAD_TOL && orient_ties <= (int)(n / 100) + 1 && thin_ties <= (int)(n / 100) + 1,
        "%s: thinned %.3g; %d orientation ties, %d thinning ties of %zu pixels", what, e_thin,
        orient_ties, thin_ties, n);
  printf("  %-34s strength %.2e, parts %.2e, thinned %.2e (%d edge pixels); ties: %d "
         "orientations, %d thinned\n",
         what, e_strength, e_parts, e_thin, thin_on, orient_ties, thin_ties);
out:
  free(ref);
  free(grad);
  free(parts);
  free(ref_parts);
  free(strength);
  free(ref_strength);
  free(oriented);
  free(thin);
  free(ref_thin);
  free(orient);
  free(ref_orient);
  free(moved);
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

/* ---- the affinity ---- */

/* The device's N against app_affinity_build's for one image and parameter set. */
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
  CHECK(app_contours(&img, NULL, edges, NULL, NULL) == DSG_OK, "detector: %s", dsg_error_message());
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

/* ---- failures ---- */

static void error_paths(spmv_cl_image *im, const geometry *G)
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
  affinity_cases(im);
  error_paths(im, &G);
  spmv_cl_image_destroy(im);
  return check_report("test_cl_image");
}
