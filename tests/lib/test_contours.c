/* The boundary detector (app/lib/contours.c) and the intervening-contour affinity against
 * references written independently of them:
 *  - the sector-histogram gradients against a direct per-pixel, per-orientation count of the two
 *    half-discs (half membership by the sign of a cross product), smoothed and chi-squared here;
 *  - the detector on images whose answer is known (constant: nothing; a step: a thin line on the
 *    step; any size, 1 x 1 included);
 *  - the 4-connected lines and the contour term of W on a hand-made contour;
 *  - the spectral term on eigenvectors whose gradients are known (a ramp, a diagonal step) at
 *    every orientation, and gPb: the detector's combination unchanged at weight 0, the spectral
 *    term raising it where it is large. */
#include "check.h"
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int reflect_ref(int i, int n)
{
  while (i < 0 || i >= n)
    i = i < 0 ? -1 - i : 2 * n - 1 - i;
  return i;
}

/* offset (dx, dy) is in half-disc o: left of the line at angle o pi/8 (x right, y down), or on
 * it pointing the line's way. The even orientations use integer directions so that the offsets
 * on them are decided exactly. */
static int in_half(int dx, int dy, int o)
{
  static const int ux[4] = {1, 1, 0, -1}, uy[4] = {0, 1, 1, 1};
  double cx, dot;
  if (o % 2 == 0) {
    cx = (double)ux[o / 2] * dy - (double)uy[o / 2] * dx;
    dot = (double)ux[o / 2] * dx + (double)uy[o / 2] * dy;
  } else {
    const double th = o * M_PI / 8.0, c = cos(th), s = sin(th);
    cx = c * dy - s * dx;
    dot = c * dx + s * dy;
  }
  return cx > 0.0 || (cx == 0.0 && dot > 0.0);
}

static void smooth_ref(const double *in, int nb, double sigma, double *out)
{
  if (!(sigma > 0.0)) {
    memcpy(out, in, (size_t)nb * sizeof(*out));
    return;
  }
  const int r = (int)ceil(3.0 * sigma);
  double sum = 0.0;
  for (int t = -r; t <= r; t++)
    sum += exp(-0.5 * t * t / (sigma * sigma));
  for (int b = 0; b < nb; b++) {
    out[b] = 0.0;
    for (int t = -r; t <= r; t++)
      if (b + t >= 0 && b + t < nb)
        out[b] += exp(-0.5 * t * t / (sigma * sigma)) / sum * in[b + t];
  }
}

/* chi2 of half-disc o at (x, y) of channel c at radius r, counted directly */
static double chi2_ref(const unsigned char *bins, int w, int h, int x, int y, int nb, double sigma,
                       int r, int o)
{
  double g[64] = {0}, hh[64] = {0}, gs[64], hs[64], acc = 0.0;
  int m = 0;
  for (int dy = -r; dy <= r; dy++)
    for (int dx = -r; dx <= r; dx++) {
      if ((!dx && !dy) || dx * dx + dy * dy > r * r)
        continue;
      const int b = bins[(size_t)reflect_ref(y + dy, h) * w + reflect_ref(x + dx, w)];
      if (in_half(dx, dy, o)) {
        g[b] += 1.0;
        m++;
      } else {
        hh[b] += 1.0;
      }
    }
  smooth_ref(g, nb, sigma, gs);
  smooth_ref(hh, nb, sigma, hs);
  for (int b = 0; b < nb; b++) {
    const double t = (gs[b] + hs[b]) / m;
    if (t * m > 1e-6)
      acc += (gs[b] / m - hs[b] / m) * (gs[b] / m - hs[b] / m) / t;
  }
  return 0.5 * acc;
}

static void test_gradients(void)
{
  const int w = 23, h = 17;
  const size_t n = (size_t)w * h;
  unsigned char *bins = malloc(n * APP_CONTOUR_CHANNELS);
  float *grad = malloc(n * APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  /* regions with a few bins each, and noise: every orientation sees some difference */
  for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
    const int nb = app_contour_channel_at(c)->bins;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int b = (x + 2 * y < 20 ? nb / 4 : 3 * nb / 4) + (int)(test_uniform() * 5) - 2;
        bins[c * n + (size_t)y * w + x] = (unsigned char)(b < 0 ? 0 : b >= nb ? nb - 1 : b);
      }
  }
  CHECK(app_contour_gradients(bins, w, h, NULL, grad) == DSG_OK, "gradients: %s",
        dsg_error_message());
  double worst = 0.0, largest = 0.0;
  for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
    const app_contour_channel *ch = app_contour_channel_at(c);
    for (int s = 0; s < APP_CONTOUR_SCALES; s++)
      for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++)
        for (int y = 0; y < h; y += 2)
          for (int x = 0; x < w; x += 2) {
            const double ref =
                chi2_ref(bins + c * n, w, h, x, y, ch->bins, ch->smooth, ch->radius[s], o);
            const float got =
                grad[((size_t)(c * APP_CONTOUR_SCALES + s) * APP_CONTOUR_ORIENTATIONS + o) * n +
                     (size_t)y * w + x];
            const double d = fabs(ref - got);
            worst = d > worst ? d : worst;
            largest = ref > largest ? ref : largest;
          }
  }
  /* float sums of at most 1256 counts: 1e-5 on values in [0, 1] */
  CHECK(worst <= 1e-5, "sector gradients differ from the direct count by %g", worst);
  CHECK(largest > 0.3, "the test image should have strong gradients (largest %g)", largest);
  free(bins);
  free(grad);
}

/* the sectors split the disc into exact halves: each opposite pair lies in sectors s and s+8 */
static void test_disc(void)
{
  const int R = APP_CONTOUR_RMAX, cap = (2 * R + 1) * (2 * R + 1);
  int *dx = malloc(cap * sizeof(int)), *dy = malloc(cap * sizeof(int));
  int *sec = malloc(cap * sizeof(int)), within[APP_CONTOUR_RMAX + 1];
  const int m = app_contour_disc(R, dx, dy, sec, within);
  CHECK(m == app_disc_size(R) - 1, "disc of radius %d: %d offsets", R, m);
  CHECK(within[5] == 80 && within[R] == m, "within 5: %d (80 expected)", within[5]);
  int bad = 0;
  for (int i = 0; i < m; i++) {
    bad += sec[i] < 0 || sec[i] >= 16;
    for (int j = 0; j < m; j++)
      if (dx[j] == -dx[i] && dy[j] == -dy[i])
        bad += sec[j] != (sec[i] + 8) % 16;
    for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++) /* sectors o..o+7 = the reference's half */
      bad += ((sec[i] - o + 16) % 16 < 8) != in_half(dx[i], dy[i], o);
  }
  CHECK(bad == 0, "%d offsets in the wrong sector", bad);
  free(dx);
  free(dy);
  free(sec);
}

/* dsg_contours with the gradients (the detector this file checks; "auto" is the forest
 * without parts, tests/lib/test_forest.c) */
static dsg_options gradients_options(void)
{
  dsg_options opt;
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  opt.detector = "gradients";
  return opt;
}

static void test_detector(void)
{
  const dsg_options grad = gradients_options();
  /* constant: no boundary anywhere, no part */
  {
    const int w = 30, h = 20;
    unsigned char *px = malloc((size_t)w * h * 3);
    memset(px, 120, (size_t)w * h * 3);
    dsg_image img = {w, h, 3, px};
    float *s = NULL, *parts = NULL;
    CHECK(dsg_contours(&img, &grad, &s, &parts) == DSG_OK, "constant: %s", dsg_error_message());
    double mx = 0.0;
    for (size_t i = 0; s && i < (size_t)w * h; i++)
      mx = fmax(mx, s[i]);
    for (size_t i = 0; parts && i < (size_t)w * h * APP_CONTOUR_PARTS; i++)
      mx = fmax(mx, parts[i]);
    CHECK(mx == 0.0, "a constant image has contours up to %g", mx);
    dsg_free(s);
    dsg_free(parts);
    free(px);
  }
  /* a vertical step between columns 19 and 20: a one-pixel line there, nothing away from it */
  {
    const int w = 40, h = 30;
    unsigned char *px = malloc((size_t)w * h);
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++)
        px[y * w + x] = x < 20 ? 40 : 200;
    dsg_image img = {w, h, 1, px};
    float *s = NULL;
    CHECK(dsg_contours(&img, &grad, &s, NULL) == DSG_OK, "step: %s", dsg_error_message());
    int on = 0, off = 0, thick = 0;
    for (int y = 0; s && y < h; y++) {
      int row = 0;
      for (int x = 0; x < w; x++) {
        const float v = s[y * w + x];
        if (x == 19 || x == 20) {
          on += v > 0.5f;
          row += v > 0.0f;
        } else {
          off += v > 0.01f;
        }
      }
      thick += row != 1;
    }
    CHECK(on == h, "the step is found in %d of %d rows", on, h);
    CHECK(off == 0, "%d pixels away from the step have strength > 0.01", off);
    CHECK(thick == 0, "%d rows have a line not one pixel wide", thick);
    dsg_free(s);
    free(px);
  }
  /* every size works with both detectors, down to 1 x 1 and 1 pixel wide; values finite and in
   * [0, 1) */
  for (int forest = 0; forest < 2; forest++) {
    const int sizes[][2] = {{1, 1}, {1, 9}, {9, 1}, {2, 2}, {3, 50}};
    for (size_t t = 0; t < sizeof(sizes) / sizeof(sizes[0]); t++) {
      const int w = sizes[t][0], h = sizes[t][1];
      unsigned char px[150 * 3];
      for (int i = 0; i < w * h * 3; i++)
        px[i] = (unsigned char)(test_rand64() & 255);
      dsg_image img = {w, h, 3, px};
      float *s = NULL;
      int ok = dsg_contours(&img, forest ? NULL : &grad, &s, NULL) == DSG_OK;
      CHECK(ok, "%d x %d: %s", w, h, dsg_error_message());
      for (int i = 0; ok && i < w * h; i++)
        CHECK(isfinite(s[i]) && s[i] >= 0.0f && s[i] < 1.0f, "%d x %d: strength %g", w, h,
              (double)s[i]);
      dsg_free(s);
    }
  }
}

static void test_lines(void)
{
  int px[64], py[64], qx[64], qy[64], bad = 0;
  for (int dy = -8; dy <= 8; dy++)
    for (int dx = -8; dx <= 8; dx++) {
      const int m = app_line(dx, dy, px, py), m2 = app_line(-dx, -dy, qx, qy);
      bad += m != abs(dx) + abs(dy) + 1 || m2 != m;
      bad += px[0] != 0 || py[0] != 0 || px[m - 1] != dx || py[m - 1] != dy;
      for (int t = 1; t < m; t++) /* 4-connected, inside the bounding box */
        bad += abs(px[t] - px[t - 1]) + abs(py[t] - py[t - 1]) != 1 || px[t] < (dx < 0 ? dx : 0) ||
               px[t] > (dx > 0 ? dx : 0);
      for (int t = 0; t < m; t++) { /* the reverse offset crosses the same pixels, from j */
        int found = 0;
        for (int u = 0; u < m2; u++)
          found |= qx[u] + dx == px[t] && qy[u] + dy == py[t];
        bad += !found;
      }
    }
  CHECK(bad == 0, "%d line defects", bad);
}

/* W_ij = exp(-max contour on the line / sigma_c) exp(-d^2 / sigma_x^2) with no features */
static void test_affinity_contour(void)
{
  const int w = 12, h = 10, n = w * h;
  float contour[120] = {0};
  for (int y = 0; y < h; y++)
    contour[y * w + 6] = 0.8f; /* a wall at x = 6 */
  app_affinity_params p = {3, 0.1, 2.0, contour, 0.25, NULL};
  spmv_dia *N = NULL;
  double *sd = NULL;
  float dummy = 0.0f;
  CHECK(app_affinity_build(w, h, &dummy, 0, &p, &N, &sd) == DSG_OK, "contour affinity: %s",
        dsg_error_message());
  if (!N)
    return;
  double worst = 0.0;
  int asym = 0;
  for (int i = 0; i < n; i++)
    for (int d = 0; d < N->ndiag; d++) {
      const int j = i + N->offsets[d];
      if (j < 0 || j >= n)
        continue;
      const int xi = i % w, yi = i / w, xj = j % w, yj = j / w;
      const int ddx = xj - xi, ddy = yj - yi;
      if (abs(ddx) > 3 || ddx * ddx + ddy * ddy > 9)
        continue; /* wraps to another row: not a neighbour */
      const double W = N->values[(size_t)d * N->pitch + i] * sd[i] * sd[j];
      const int crosses = (xi - 6) * (xj - 6) <= 0; /* on or across the wall */
      const double want = exp(-(crosses ? 0.8 : 0.0) / 0.25) * exp(-(ddx * ddx + ddy * ddy) / 4.0);
      worst = fmax(worst, fabs(W - want) / want);
      /* N symmetric: the entry of (j, i) */
      for (int e = 0; e < N->ndiag; e++)
        if (N->offsets[e] == -N->offsets[d])
          asym += N->values[(size_t)e * N->pitch + j] != N->values[(size_t)d * N->pitch + i];
    }
  CHECK(worst < 1e-5, "W differs from the hand-made contour term by %g (relative)", worst);
  CHECK(asym == 0, "%d asymmetric entries", asym);
  spmv_dia_destroy(N);
  free(sd);
}

/* The spectral term: v_1 = D^-1/2 u_1 a ramp along x (|d/dx| = 1 / (w - 1) before the scaling
 * to [0, 1] by its range and 1 / sqrt(1 - mu)), v_2 a step along the diagonal x + y = const,
 * v_0 the trivial vector (no gradient) and a pair at eigenvalue 1 (skipped). */
static void test_spectral(void)
{
  enum { w = 24, h = 20, NO = APP_CONTOUR_ORIENTATIONS };
  const size_t n = (size_t)w * h;
  float *vec = calloc(4 * n, sizeof(float)), *spec = malloc(NO * n * sizeof(float));
  float *mag = malloc(n * sizeof(float));
  double *sd = malloc(n * sizeof(double));
  double values[4] = {1.0, 0.99, 0.96, 1.0};
  for (size_t i = 0; i < n; i++) {
    const int x = (int)(i % w), y = (int)(i / w);
    sd[i] = 0.5 + 0.01 * (double)(i % 7); /* the degrees vary: the term reads D^-1/2 u */
    vec[i] = (float)sd[i];
    vec[n + i] = (float)(sd[i] * x);
    vec[2 * n + i] = (float)(sd[i] * (x + y < 20 ? 0.0 : 3.0));
    vec[3 * n + i] = (float)(sd[i] * (x < 5 ? 1.0 : 0.0));
  }
  eig_result res = {0};
  res.n = (int)n;
  res.nconv = 4;
  res.values = values;
  res.vectors = vec;
  values[3] = 1.0; /* another component's indicator: no gradient from it */
  CHECK(app_spectral_gradient(&res, sd, w, h, NO, spec) == DSG_OK, "spectral: %s",
        dsg_error_message());
  CHECK(app_spectral_gradient(&res, sd, w, h, 0, mag) == DSG_OK, "spectral: %s",
        dsg_error_message());
  /* the ramp alone, away from the step (within 3 pixels of it the step adds) and the borders
   * (the reflection flattens the ramp there): v scaled to [0, 1] has slope 1 / (w - 1) along x,
   * which the derivative of the Gaussian truncated at 3 sigma measures times c = sum t^2 g(t) /
   * sum g(t) (0.9966); across orientation o that is |sin(o pi / 8)| of it, then / sqrt(1 - mu) */
  double c = 0.0, c0 = 0.0;
  for (int t = -3; t <= 3; t++) {
    c += t * t * exp(-0.5 * t * t);
    c0 += exp(-0.5 * t * t);
  }
  const double slope = c / c0 / ((w - 1) * sqrt(1.0 - 0.99));
  double worst = 0.0;
  const int x = 6, y = 4; /* x + y = 10: 10 pixels off the step's line */
  for (int o = 0; o < NO; o++)
    worst = fmax(worst,
                 fabs(spec[(size_t)o * n + (size_t)y * w + x] - fabs(sin(o * M_PI / NO)) * slope));
  CHECK(worst < 1e-5, "the ramp's oriented term is off by %g", worst);
  CHECK(fabs(mag[(size_t)y * w + x] - slope) < 1e-5, "the ramp's unoriented term %g, not %g",
        mag[(size_t)y * w + x], slope);
  /* on the diagonal step (x + y = 20 between 19 and 20) the step's term dominates at the
   * orientation of the line x + y = const: along 3 pi / 4 (o = 6), its normal (1, 1) / sqrt 2 */
  {
    const size_t i = (size_t)10 * w + 10;
    int arg = 0;
    for (int o = 1; o < NO; o++)
      arg = spec[(size_t)o * n + i] > spec[(size_t)arg * n + i] ? o : arg;
    CHECK(arg == 6, "the diagonal step peaks at orientation %d, not 6", arg);
  }
  /* gPb: at weight 0 the detector's combination comes back through another squash (x / (x +
   * x_half) of its linear part instead of the logistic): the same orientations, the same order
   * of the pixels, 0 at 0 and 0.5 at 0.5; with a weight it rises where the spectral term is
   * positive and never falls */
  {
    float *oriented = malloc(NO * n * sizeof(float)), *a = malloc(n * sizeof(float));
    float *b = malloc(n * sizeof(float)), *best = malloc(n * sizeof(float));
    unsigned char *oa = malloc(n), *ob = malloc(n);
    for (size_t k = 0; k < NO * n; k++)
      oriented[k] = (float)((k * 2654435761u) % 1000) / 1000.0f;
    for (int o = 0; o < NO; o++) {
      oriented[(size_t)o * n] = 0.5f;     /* pixel 0: 0.5 at every orientation */
      oriented[(size_t)o * n + 1] = 0.0f; /* pixel 1: no contour */
    }
    app_contour_gpb(oriented, &app_contour_local, spec, 0.0, w, h, a, oa);
    int other = 0, order = 0;
    for (size_t i = 0; i < n; i++) {
      int arg = 0;
      for (int o = 1; o < NO; o++)
        arg = oriented[(size_t)o * n + i] > oriented[(size_t)arg * n + i] ? o : arg;
      best[i] = oriented[(size_t)arg * n + i];
      other += oa[i] != arg;
    }
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++)
        order += best[i] < best[j] && !(a[i] < a[j]);
    CHECK(other == 0 && order == 0,
          "gPb at weight 0: %d orientations differ, %d pairs out of "
          "order",
          other, order);
    CHECK(fabs(a[0] - 0.5) < 1e-6 && a[1] == 0.0f, "gPb at weight 0: 0.5 -> %g, 0 -> %g", a[0],
          a[1]);
    app_contour_gpb(oriented, &app_contour_local, spec, 0.05, w, h, b, ob);
    int fell = 0, rose = 0;
    for (size_t i = 0; i < n; i++) {
      fell += b[i] < a[i] - 1e-6f || !(b[i] <= 1.0f);
      rose += b[i] > a[i];
    }
    CHECK(fell == 0 && rose > (int)n / 2, "gPb with the spectral term: %d fell, %d rose of %zu",
          fell, rose, n);
    free(oriented);
    free(a);
    free(b);
    free(best);
    free(oa);
    free(ob);
  }
  free(vec);
  free(spec);
  free(mag);
  free(sd);
}

/* The spectral term's pixels that the contour cue nearly cuts off: with the products N u their v
 * is the generalised eigenvector's, (N u)_i / (mu sqrt(d_i)), whatever u_i the solver left there;
 * the term equals the one of a vector that carries that value, and differs from the raw u's. */
static void test_spectral_isolated(void)
{
  enum { w = 12, h = 6 };
  const int n = w * h, iso = 2 * w + 6;
  static const int offsets[3] = {-1, 0, 1};
  spmv_dia *N = NULL;
  CHECK(spmv_dia_create(&N, n, 3, offsets) == DSG_OK, "N: %s", dsg_error_message());
  if (!N)
    return;
  double *sd = malloc(n * sizeof(double)), values[2] = {1.0, 0.9};
  float *u0 = calloc(2 * (size_t)n, sizeof(float)), *u1 = calloc(2 * (size_t)n, sizeof(float));
  float *a = malloc(8 * (size_t)n * sizeof(float)), *b = malloc(8 * (size_t)n * sizeof(float));
  float *c = malloc(8 * (size_t)n * sizeof(float));
  for (int i = 0; i < n; i++) {
    sd[i] = i == iso ? 0.01 : 1.0; /* degree 1e-4 against a mean near 1 */
    N->values[N->pitch + (size_t)i] = 0.1f;
    if (i % w > 0)
      N->values[(size_t)i] = 0.45f; /* (i, i - 1) within the row */
    if (i % w < w - 1)
      N->values[2 * N->pitch + (size_t)i] = 0.45f;
    u0[i] = (float)sd[i];
    u0[n + i] = (float)(sd[i] * (i % w < 6 ? 2.0 : -1.0) * (1.0 + 0.05 * (i / w)));
  }
  u0[n + iso] = 0.0f; /* what the solver leaves on an isolated pixel */
  memcpy(u1, u0, 2 * (size_t)n * sizeof(float));
  u1[n + iso] = (float)(spmv_dia_row_mul(N, iso, u0 + n) / 0.9);
  float *Nu = malloc(2 * (size_t)n * sizeof(float)); /* the residuals' products N u */
  spmv_dia_mul_ref(N, u0, Nu);
  spmv_dia_mul_ref(N, u0 + n, Nu + n);
  eig_result r0 = {0}, r1 = {0};
  r0.n = r1.n = n;
  r0.nconv = r1.nconv = 2;
  r0.values = r1.values = values;
  r0.vectors = u0;
  r1.vectors = u1;
  r0.products = Nu;
  CHECK(app_spectral_gradient(&r0, sd, w, h, 8, a) == DSG_OK, "with N u");
  CHECK(app_spectral_gradient(&r1, sd, w, h, 8, b) == DSG_OK, "the vector that carries it");
  r0.products = NULL;
  CHECK(app_spectral_gradient(&r0, sd, w, h, 8, c) == DSG_OK, "raw");
  double same = 0.0, moved = 0.0;
  for (size_t k = 0; k < 8 * (size_t)n; k++) {
    same = fmax(same, fabs(a[k] - b[k]));
    moved = fmax(moved, fabs(a[k] - c[k]));
  }
  CHECK(same < 1e-5 && moved > 0.1,
        "isolated pixel: %g from the generalised eigenvector's term "
        "(want 0), %g from the raw vector's (want > 0.1)",
        same, moved);
  spmv_dia_destroy(N);
  free(Nu);
  free(sd);
  free(u0);
  free(u1);
  free(a);
  free(b);
  free(c);
}

int main(void)
{
  test_disc();
  test_gradients();
  test_detector();
  test_lines();
  test_affinity_contour();
  test_spectral();
  test_spectral_isolated();
  return check_report("test_contours");
}
