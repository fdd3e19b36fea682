/* The local boundary detector: oriented histogram gradients of brightness, colour and texture
 * over half-discs at three scales and 8 orientations, combined into one boundary strength and
 * thinned by non-maximum suppression. After mPb (Martin, Fowlkes & Malik, PAMI 2004; Arbelaez,
 * Maire, Fowlkes & Malik, TPAMI 2011); the formulas are in docs/PIPELINE.md, "Contours".
 *
 *   RGB -> CIELAB (L, a, b) and textons (k-means of Gaussian-derivative responses of L)
 *       -> per channel a bin index per pixel
 *       -> per pixel, per channel: histograms of 16 angular sectors of the disc, grown scale by
 *          scale; half-disc o = sectors o .. o+7; chi-squared of the two halves, 8 orientations
 *       -> G(x, o) = sum over parts p of w_p chi2_p(x, o); strength = logistic(b0 + max_o G)
 *       -> non-maximum suppression across the best orientation
 *
 * The sectors are exact halves: an offset and its opposite fall in sectors s and s + 8, so each
 * half-disc holds one of every opposite pair and both halves have the same pixel count. Then
 * g + h = the whole disc's histogram T for every orientation, and
 *   chi2 = 1/2 sum_b (g_b - h_b)^2 / (g_b + h_b)  (histograms normalised to 1)
 *        = 1/(2 m) sum_b (2 g_b - T_b)^2 / T_b    (counts; m pixels per half).
 * Images are padded by reflection, so every size works, 1-pixel-wide ones included. */
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define NSECT (2 * APP_CONTOUR_ORIENTATIONS)
#define NTEXTON APP_TEXTONS
#define MAX_BINS 32
#define TEXTON_DIM APP_TEXTON_DIM

/* The channels: bins of the histograms and the half-disc radii of the three scales (gPb's, in
 * pixels of a BSDS500-sized image), and the Gaussian that smooths the histograms along their bins
 * before the chi-squared (gPb's 0.1 and 0.05 of the range: nearby brightnesses are not as
 * different as distant ones; textons have no order). The parts are channel-major: part = 3 *
 * channel + scale. */
static const app_contour_channel channels[APP_CONTOUR_CHANNELS] = {
    {"brightness", 25, 2.5, {3, 5, 10}},
    {"color_a", 25, 1.25, {5, 10, 20}},
    {"color_b", 25, 1.25, {5, 10, 20}},
    {"texture", NTEXTON, 0.0, {5, 10, 20}},
};

/* gPb's ranges of L, a and b (rgb2lab.m): nearly all of the sRGB gamut */
static const float lab_lo[3] = {0.0f, -73.0f, -95.0f}, lab_hi[3] = {100.0f, 95.0f, 95.0f};

/* The texton filters per scale: (x, y, xx, sqrt2 xy, yy), each the Gaussian derivative of one
 * order along the rows and one along the columns, times a scale */
#define TEXTON_PER_SCALE 5
static const int texton_along_rows[TEXTON_PER_SCALE] = {1, 0, 2, 1, 0};
static const int texton_along_columns[TEXTON_PER_SCALE] = {0, 1, 0, 1, 2};
static const float texton_scale[TEXTON_PER_SCALE] = {1.0f, 1.0f, 1.0f, 1.41421356f, 1.0f};
static const double texton_sigma[TEXTON_DIM / TEXTON_PER_SCALE] = {1.0, 2.0};

/* The combinations (app_contour_weights). The local part of segment's gPb: fit by logistic
 * regression on the 200 BSDS500 train images (tests/bsds/fit_contours.py --split train --band 4
 * --holdout 0.2: 2000 + 2000 pixels per image, on a human boundary against more than 4 pixels
 * from all, the universal textons; held-out AUC 0.890, the best single part 0.831; negatives
 * beyond 4 pixels scored ODS F 0.676 on the first 50 train images against 0.673 beyond 2;
 * docs/QUALITY.md). gPb's spectral weight, its automatic level and every val figure of segment
 * were measured with it. */
const app_contour_weights app_contour_local = {
    {
        2.07908, 1.16977, 2.74093, /* brightness r 3, 5, 10 */
        0.46946, 3.29224, 0.25416, /* colour a r 5, 10, 20 */
        1.96674, 1.91979, 0.93452, /* colour b r 5, 10, 20 */
        1.88048, 0.38393, 2.59410, /* texture r 5, 10, 20 */
    },
    -3.45968};

/* The detector alone (mPb: `diaseg contours`, dsg_contours, segment's contour cue without the
 * spectral term), fit as the local part but with negatives more than 6 pixels from every human
 * boundary (fit_contours.py --band 6). ODS F on BSDS500 train, boundaryBench: 0.6819 and 0.7042
 * on the first and last 100 images, against 0.6785 and 0.7044 with the local part's weights
 * (band 8: 0.6818 and 0.7031; docs/QUALITY.md). */
const app_contour_weights app_contour_alone = {
    {
        2.29422, 0.49823, 3.20862, /* brightness r 3, 5, 10 */
        0.03342, 3.27179, 1.14847, /* colour a r 5, 10, 20 */
        1.37523, 1.84418, 1.90065, /* colour b r 5, 10, 20 */
        1.90299, 0.68221, 2.88258, /* texture r 5, 10, 20 */
    },
    -3.69947};

const app_contour_channel *app_contour_channel_at(int c)
{
  return c >= 0 && c < APP_CONTOUR_CHANNELS ? &channels[c] : NULL;
}

int dsg_contour_parts(void) { return APP_CONTOUR_PARTS; }

const char *dsg_contour_part_name(int p)
{
  static const char *names[APP_CONTOUR_PARTS] = {"brightness_r3", "brightness_r5", "brightness_r10",
                                                 "color_a_r5",    "color_a_r10",   "color_a_r20",
                                                 "color_b_r5",    "color_b_r10",   "color_b_r20",
                                                 "texture_r5",    "texture_r10",   "texture_r20"};
  return p >= 0 && p < APP_CONTOUR_PARTS ? names[p] : NULL;
}

/* ---- CIELAB ------------------------------------------------------------------------------ */

static double srgb_to_linear(double v)
{
  return v <= 0.04045 ? v / 12.92 : pow((v + 0.055) / 1.055, 2.4);
}

static double lab_f(double t)
{
  return t > 216.0 / 24389.0 ? cbrt(t) : (24389.0 / 27.0 * t + 16.0) / 116.0;
}

void app_rgb_to_lab(const unsigned char *p, int c, float lab[3])
{
  const double r = srgb_to_linear(p[0] / 255.0), g = srgb_to_linear((c >= 3 ? p[1] : p[0]) / 255.0),
               b = srgb_to_linear((c >= 3 ? p[2] : p[0]) / 255.0);
  /* sRGB (D65) -> XYZ, normalised by the white point */
  const double x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
  const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
  const double z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
  const double fx = lab_f(x), fy = lab_f(y), fz = lab_f(z);
  lab[0] = (float)(116.0 * fy - 16.0);
  lab[1] = (float)(500.0 * (fx - fy));
  lab[2] = (float)(200.0 * (fy - fz));
}

/* the bin of a value v in [lo, hi] among nb */
static unsigned char bin_of(double v, double lo, double hi, int nb)
{
  int b = (int)((v - lo) / (hi - lo) * nb);
  return (unsigned char)(b < 0 ? 0 : b >= nb ? nb - 1 : b);
}

/* ---- textons ----------------------------------------------------------------------------- */

/* 1-D Gaussian derivative kernels of order 0, 1, 2 at sigma, radius ceil(3 sigma); the
 * derivatives scaled by sigma^order so that both scales' responses compare. */
static int gauss_kernels(double sigma, float *k0, float *k1, float *k2)
{
  const int r = (int)ceil(3.0 * sigma);
  double s0 = 0.0;
  for (int x = -r; x <= r; x++)
    s0 += exp(-0.5 * x * x / (sigma * sigma));
  for (int x = -r; x <= r; x++) {
    const double g = exp(-0.5 * x * x / (sigma * sigma)) / s0;
    k0[x + r] = (float)g;
    k1[x + r] = (float)(-x / sigma * g);
    k2[x + r] = (float)((x * x / (sigma * sigma) - 1.0) * g);
  }
  return r;
}

/* dst = src convolved with kx along rows, then ky along columns (reflected borders) */
void app_conv_sep(const float *src, int w, int h, const float *kx, const float *ky, int r,
                  float *tmp, float *dst)
{
  /* away from the borders the reflection is the identity: the same sums, in the same order,
   * without it (the texton dictionary is reproduced bit for bit through this function) */
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    const float *row = src + (size_t)y * w;
    for (int x = 0; x < w; x++) {
      double s = 0.0;
      if (x >= r && x + r < w)
        for (int t = -r; t <= r; t++)
          s += (double)kx[t + r] * row[x - t];
      else
        for (int t = -r; t <= r; t++)
          s += (double)kx[t + r] * row[app_reflect(x - t, w)];
      tmp[(size_t)y * w + x] = (float)s;
    }
  }
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    const int inside = y >= r && y + r < h;
    for (int x = 0; x < w; x++) {
      double s = 0.0;
      if (inside)
        for (int t = -r; t <= r; t++)
          s += (double)ky[t + r] * tmp[(size_t)(y - t) * w + x];
      else
        for (int t = -r; t <= r; t++)
          s += (double)ky[t + r] * tmp[(size_t)app_reflect(y - t, h) * w + x];
      dst[(size_t)y * w + x] = (float)s;
    }
  }
}

void app_gradient_add(const float *src, int w, int h, const float *k0, const float *k1, int r,
                      float scale, int norient, float *tmp0, float *tmp1, float *out)
{
  const size_t n = (size_t)w * h;
  float nx[APP_CONTOUR_ORIENTATIONS], ny[APP_CONTOUR_ORIENTATIONS];
  for (int o = 0; o < norient && o < APP_CONTOUR_ORIENTATIONS; o++) {
    const double th = o * (M_PI / norient);
    nx[o] = (float)(-sin(th) * scale);
    ny[o] = (float)(cos(th) * scale);
  }
  /* the rows with k0 (into tmp0, for gy) and k1 (into tmp1, for gx): app_conv_sep's first pass */
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    const float *row = src + (size_t)y * w;
    for (int x = 0; x < w; x++) {
      double s0 = 0.0, s1 = 0.0;
      if (x >= r && x + r < w)
        for (int t = -r; t <= r; t++) {
          s0 += (double)k0[t + r] * row[x - t];
          s1 += (double)k1[t + r] * row[x - t];
        }
      else
        for (int t = -r; t <= r; t++) {
          s0 += (double)k0[t + r] * row[app_reflect(x - t, w)];
          s1 += (double)k1[t + r] * row[app_reflect(x - t, w)];
        }
      tmp0[(size_t)y * w + x] = (float)s0;
      tmp1[(size_t)y * w + x] = (float)s1;
    }
  }
  /* the columns (gx = tmp1 with k0, gy = tmp0 with k1), summed into out at once */
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++) {
    const int inside = y >= r && y + r < h;
    for (int x = 0; x < w; x++) {
      double sx = 0.0, sy = 0.0;
      for (int t = -r; t <= r; t++) {
        const size_t at = (size_t)(inside ? y - t : app_reflect(y - t, h)) * w + x;
        sx += (double)k0[t + r] * tmp1[at];
        sy += (double)k1[t + r] * tmp0[at];
      }
      const float gx = (float)sx, gy = (float)sy;
      const size_t i = (size_t)y * w + x;
      if (norient <= 0)
        out[i] += scale * sqrtf(gx * gx + gy * gy);
      for (int o = 0; o < norient && o < APP_CONTOUR_ORIENTATIONS; o++)
        out[(size_t)o * n + i] += fabsf(nx[o] * gx + ny[o] * gy);
    }
  }
}

/* Texton responses of the brightness L / 100: the Gaussian derivatives (x, y, xx, sqrt2 xy,
 * yy), which steer to every orientation, at sigma 1 and 2, contrast-normalised per pixel as in
 * Malik, Belongie, Leung & Shi (IJCV 2001): F <- F log(1 + |F| / 0.03) / |F|. */
int app_texton_responses(const float *lum, int w, int h, float *resp)
{
  const size_t n = (size_t)w * h;
  float k0[13], k1[13], k2[13], *tmp = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
  int status = DSG_OK;
  if (!tmp || !out) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the texton filters of %zu pixels", n);
    goto out_free;
  }
  for (int s = 0; s < TEXTON_DIM / TEXTON_PER_SCALE; s++) {
    const int r = gauss_kernels(texton_sigma[s], k0, k1, k2);
    const float *order[3] = {k0, k1, k2};
    for (int f = 0; f < TEXTON_PER_SCALE; f++) {
      app_conv_sep(lum, w, h, order[texton_along_rows[f]], order[texton_along_columns[f]], r, tmp,
                   out);
      for (size_t i = 0; i < n; i++)
        resp[i * TEXTON_DIM + TEXTON_PER_SCALE * s + f] = texton_scale[f] * out[i];
    }
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float *f = resp + i * TEXTON_DIM;
    double norm = 0.0;
    for (int d = 0; d < TEXTON_DIM; d++)
      norm += (double)f[d] * f[d];
    norm = sqrt(norm);
    if (norm > 0.0) {
      const double g = log1p(norm / APP_TEXTON_CONTRAST) / norm;
      for (int d = 0; d < TEXTON_DIM; d++)
        f[d] = (float)(f[d] * g);
    }
  }
out_free:
  free(tmp);
  free(out);
  return status;
}

/* The texton dictionary: the centres of k-means (k-means++, 8 restarts) of the responses of
 * 2000 pixels from each of the 200 BSDS500 train images (tests/bsds/fit_textons.c), one
 * dictionary for every image as in gPb (Arbelaez et al. 2011): a texton means the same texture
 * in every photo, and no image pays for its own clustering. */
static const float texton_centre[NTEXTON][TEXTON_DIM] = {
#include "textons.inc"
};

const float *app_texton_centres(void) { return &texton_centre[0][0]; }

/* Textons: every pixel's nearest centre of the dictionary. */
static int textons(const float *lum, int w, int h, unsigned char *texton)
{
  const size_t n = (size_t)w * h;
  float *resp = malloc(n * TEXTON_DIM * sizeof(float));
  int status = DSG_OK;
  if (!resp) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the textons of %zu pixels", n);
    goto out_free;
  }
  status = app_texton_responses(lum, w, h, resp);
  if (status != DSG_OK)
    goto out_free;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    const float *f = resp + i * TEXTON_DIM;
    float best = HUGE_VALF;
    int arg = 0;
    for (int c = 0; c < NTEXTON; c++) {
      float d2 = 0.0f;
      for (int d = 0; d < TEXTON_DIM; d++) {
        const float e = f[d] - texton_centre[c][d];
        d2 += e * e;
      }
      if (d2 < best) {
        best = d2;
        arg = c;
      }
    }
    texton[i] = (unsigned char)arg;
  }
out_free:
  free(resp);
  return status;
}

/* ---- bins -------------------------------------------------------------------------------- */

int app_contour_bins(const dsg_image *img, unsigned char *bins)
{
  const int w = img->width, h = img->height, c = img->channels;
  const size_t n = (size_t)w * h;
  float *lum = malloc(n * sizeof(float));
  int status = DSG_OK;
  if (!lum)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contour channels of %zu pixels", n);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float lab[3];
    app_rgb_to_lab(img->pixels + i * (size_t)c, c, lab);
    lum[i] = lab[0] / 100.0f;
    for (int k = 0; k < 3; k++)
      bins[k * n + i] = bin_of(lab[k], lab_lo[k], lab_hi[k], channels[k].bins);
  }
  status = textons(lum, w, h, bins + 3 * n);
  free(lum);
  return status;
}

/* ---- the disc ---------------------------------------------------------------------------- */

typedef struct disc_entry {
  int dx, dy, d2, sector;
} disc_entry;

static int cmp_disc(const void *a, const void *b)
{
  const disc_entry *p = a, *q = b;
  if (p->d2 != q->d2)
    return p->d2 - q->d2;
  if (p->dy != q->dy)
    return p->dy - q->dy;
  return p->dx - q->dx;
}

/* sector of (dx, dy) != 0: [s pi/8, (s+1) pi/8) for the upper half plane (dy > 0, or dy = 0 and
 * dx > 0, y pointing down the rows), the opposite offset's sector + 8 for the other half */
static int sector_of(int dx, int dy)
{
  if (dy > 0 || (dy == 0 && dx > 0)) {
    /* offsets on a sector's first edge (0, 45, 90, 135 degrees) belong to it: the 1e-9 guards
     * against atan2's rounding (the nearest other integer offsets are ~1e-3 rad off an edge) */
    int s = (int)floor(atan2((double)dy, (double)dx) / (M_PI / APP_CONTOUR_ORIENTATIONS) + 1e-9);
    return s < 0 ? 0 : s >= APP_CONTOUR_ORIENTATIONS ? APP_CONTOUR_ORIENTATIONS - 1 : s;
  }
  return sector_of(-dx, -dy) + APP_CONTOUR_ORIENTATIONS;
}

int app_contour_disc(int radius, int *dx, int *dy, int *sector, int *count_within)
{
  int m = 0;
  disc_entry *e = malloc((size_t)(2 * radius + 1) * (size_t)(2 * radius + 1) * sizeof(*e));
  if (!e)
    return -1;
  for (int y = -radius; y <= radius; y++)
    for (int x = -radius; x <= radius; x++)
      if ((x || y) && x * x + y * y <= radius * radius)
        e[m++] = (disc_entry){x, y, x * x + y * y, sector_of(x, y)};
  qsort(e, (size_t)m, sizeof(*e), cmp_disc);
  for (int i = 0; i < m; i++) {
    dx[i] = e[i].dx;
    dy[i] = e[i].dy;
    sector[i] = e[i].sector;
  }
  if (count_within)
    for (int r = 0; r <= radius; r++) {
      int c = 0;
      while (c < m && e[c].d2 <= r * r)
        c++;
      count_within[r] = c;
    }
  free(e);
  return m;
}

/* ---- oriented gradients ------------------------------------------------------------------ */

/* The smoothing of histograms along their bins: a Gaussian of sigma bins, cut at 3 sigma and at
 * the ends (the same for both halves, so g + h = t still holds after it). */
typedef struct bin_smoother {
  int radius;
  float k[2 * MAX_BINS + 1];
} bin_smoother;

static void smoother_init(bin_smoother *sm, double sigma)
{
  sm->radius = sigma > 0.0 ? (int)ceil(3.0 * sigma) : 0;
  if (sm->radius > MAX_BINS)
    sm->radius = MAX_BINS;
  double sum = 0.0;
  for (int t = -sm->radius; t <= sm->radius; t++)
    sum += sigma > 0.0 ? exp(-0.5 * t * t / (sigma * sigma)) : 1.0;
  for (int t = -sm->radius; t <= sm->radius; t++)
    sm->k[t + sm->radius] =
        (float)((sigma > 0.0 ? exp(-0.5 * t * t / (sigma * sigma)) : 1.0) / sum);
}

static void smooth_bins(const bin_smoother *sm, const float *in, int nb, float *out)
{
  for (int b = 0; b < nb; b++) {
    float acc = 0.0f;
    const int lo = b - sm->radius < 0 ? 0 : b - sm->radius;
    const int hi = b + sm->radius >= nb ? nb - 1 : b + sm->radius;
    for (int u = lo; u <= hi; u++)
      acc += sm->k[u - b + sm->radius] * in[u];
    out[b] = acc;
  }
}

/* The orientations side by side, four to a vector of GCC's and Clang's vector extension (the
 * width of SSE2 and NEON: a wider one is lowered through memory there). The arithmetic is
 * element-wise, so each lane computes what one orientation at a time would, in the same order:
 * the result is the same bit for bit. */
typedef float quad __attribute__((vector_size(4 * sizeof(float))));
#define QUADS (APP_CONTOUR_ORIENTATIONS / 4)

/* chi2 of the two halves of each orientation from the sector histograms of a disc
 * (hist[s * MAX_BINS + b]) of 2 m pixels */
static void half_disc_chi2(const unsigned short *hist, int nb, int m, const bin_smoother *sm,
                           float *chi)
{
  enum { NO = APP_CONTOUR_ORIENTATIONS };
  _Static_assert(NO % 4 == 0, "the orientations fill whole quads");
  float tf[MAX_BINS], inv[MAX_BINS], ts[MAX_BINS];
  quad g[MAX_BINS][QUADS]; /* g[b][o / 4][o % 4]: bin b of orientation o's first half */
  quad acc[QUADS];
  for (int q = 0; q < QUADS; q++)
    acc[q] = (quad){0.0f, 0.0f, 0.0f, 0.0f};
  for (int b = 0; b < nb; b++) {
    /* the first half of orientation 0 is sectors 0 .. NO-1; orientation o + 1's gains sector
     * o + NO and loses sector o */
    int t = 0;
    for (int s = 0; s < 2 * NO; s++)
      t += hist[s * MAX_BINS + b];
    tf[b] = (float)t;
    float gb = 0.0f;
    for (int s = 0; s < NO; s++)
      gb += hist[s * MAX_BINS + b];
    for (int o = 0; o < NO; o++) {
      g[b][o / 4][o % 4] = gb;
      gb += (float)hist[(o + NO) * MAX_BINS + b] - (float)hist[o * MAX_BINS + b];
    }
  }
  if (sm->radius > 0) {
    smooth_bins(sm, tf, nb, ts);
    memcpy(tf, ts, (size_t)nb * sizeof(float));
  }
  for (int b = 0; b < nb; b++)
    inv[b] = tf[b] > 1e-6f ? 1.0f / tf[b] : 0.0f;
  for (int b = 0; b < nb; b++) {
    const int lo = b - sm->radius < 0 ? 0 : b - sm->radius;
    const int hi = b + sm->radius >= nb ? nb - 1 : b + sm->radius;
    for (int q = 0; q < QUADS; q++) {
      quad gs = g[b][q];
      if (sm->radius > 0) {
        gs = (quad){0.0f, 0.0f, 0.0f, 0.0f};
        for (int u = lo; u <= hi; u++)
          gs += sm->k[u - b + sm->radius] * g[u][q];
      }
      const quad d = 2.0f * gs - tf[b];
      acc[q] += d * d * inv[b];
    }
  }
  const float scale = 0.5f / (float)m;
  for (int o = 0; o < NO; o++)
    chi[o] = acc[o / 4][o % 4] * scale;
}

int app_contour_gradients(const unsigned char *bins, int w, int h,
                          const volatile sig_atomic_t *cancel, float *grad)
{
  const int R = APP_CONTOUR_RMAX, pw = w + 2 * R, ph = h + 2 * R;
  const size_t n = (size_t)w * h, pn = (size_t)pw * ph;
  const int ndisc_max = (2 * R + 1) * (2 * R + 1);
  int *dx = malloc((size_t)ndisc_max * sizeof(int)), *dy = malloc((size_t)ndisc_max * sizeof(int));
  int *sector = malloc((size_t)ndisc_max * sizeof(int)),
      *rel = malloc((size_t)ndisc_max * sizeof(int));
  unsigned char *pad = malloc(pn * APP_CONTOUR_CHANNELS);
  int within[APP_CONTOUR_RMAX + 1], status = DSG_OK;
  if (!dx || !dy || !sector || !rel || !pad) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contour gradients of %zu pixels", n);
    goto out_free;
  }
  const int ndisc = app_contour_disc(R, dx, dy, sector, within);
  for (int i = 0; i < ndisc; i++) {
    rel[i] = dy[i] * pw + dx[i];
    sector[i] *= MAX_BINS; /* the sector's first bin in a histogram */
  }
  bin_smoother smoother[APP_CONTOUR_CHANNELS];
  for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
    smoother_init(&smoother[c], channels[c].smooth);
  for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
#pragma omp parallel for schedule(static)
    for (int y = 0; y < ph; y++)
      for (int x = 0; x < pw; x++)
        pad[c * pn + (size_t)y * pw + x] =
            bins[c * n + (size_t)app_reflect(y - R, h) * w + app_reflect(x - R, w)];

  /* rows in bands, the cancel flag looked at in between */
  const int band = 16;
  for (int y0 = 0; y0 < h && status == DSG_OK; y0 += band) {
    const int y1 = y0 + band < h ? y0 + band : h;
#pragma omp parallel
    {
      unsigned short hist[NSECT * MAX_BINS];
      float chi[APP_CONTOUR_ORIENTATIONS];
#pragma omp for schedule(dynamic, 1)
      for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
          const size_t i = (size_t)y * w + x;
          const size_t centre = (size_t)(y + R) * pw + (size_t)(x + R);
          for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
            const unsigned char *map = pad + c * pn + centre;
            const int nb = channels[c].bins;
            int k = 0;
            memset(hist, 0, sizeof(hist));
            for (int s = 0; s < APP_CONTOUR_SCALES; s++) {
              const int end = within[channels[c].radius[s]];
              for (; k < end; k++) {
                const int b = map[rel[k]];
                hist[sector[k] + b]++;
              }
              half_disc_chi2(hist, nb, end / 2, &smoother[c], chi);
              float *g =
                  grad + ((size_t)(c * APP_CONTOUR_SCALES + s) * APP_CONTOUR_ORIENTATIONS) * n;
              for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++)
                g[(size_t)o * n + i] = chi[o];
            }
          }
        }
    }
    if (cancel && *cancel)
      status = dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                             (int)*cancel);
  }
out_free:
  free(dx);
  free(dy);
  free(sector);
  free(rel);
  free(pad);
  return status;
}

/* ---- combination and thinning ------------------------------------------------------------ */

static float bilinear(const float *m, int w, int h, double x, double y)
{
  if (x < 0)
    x = 0;
  if (y < 0)
    y = 0;
  if (x > w - 1)
    x = w - 1;
  if (y > h - 1)
    y = h - 1;
  const int x0 = (int)x, y0 = (int)y, x1 = x0 + 1 < w ? x0 + 1 : x0, y1 = y0 + 1 < h ? y0 + 1 : y0;
  const double fx = x - x0, fy = y - y0;
  return (float)((1 - fy) * ((1 - fx) * m[(size_t)y0 * w + x0] + fx * m[(size_t)y0 * w + x1]) +
                 fy * ((1 - fx) * m[(size_t)y1 * w + x0] + fx * m[(size_t)y1 * w + x1]));
}

void app_contour_combine(const float *grad, int w, int h, const app_contour_weights *cw,
                         float *strength, float *oriented, unsigned char *orientation)
{
  const size_t n = (size_t)w * h;
  const double s0 = 1.0 / (1.0 + exp(-cw->bias));
  float *peak = oriented ? oriented : NULL;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    double best = -1.0;
    int arg = 0;
    for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++) {
      double z = 0.0;
      for (int p = 0; p < APP_CONTOUR_PARTS; p++)
        z += cw->part[p] * grad[((size_t)p * APP_CONTOUR_ORIENTATIONS + o) * n + i];
      const double v = (1.0 / (1.0 + exp(-(cw->bias + z))) - s0) / (1.0 - s0);
      if (peak)
        peak[(size_t)o * n + i] = (float)v;
      if (v > best) {
        best = v;
        arg = o;
      }
    }
    strength[i] = (float)best;
    orientation[i] = (unsigned char)arg;
  }
}

void app_contour_gpb(const float *oriented, const app_contour_weights *cw, const float *spectral,
                     double weight, int w, int h, float *strength, unsigned char *orientation)
{
  const size_t n = (size_t)w * h;
  const double s0 = 1.0 / (1.0 + exp(-cw->bias));
  const double half = log((0.5 * (1.0 - s0) + s0) / (0.5 * (1.0 - s0))) - cw->bias;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    double best = -1.0;
    int arg = 0;
    for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++) {
      /* back to the combination: v = (q - s0) / (1 - s0), q = logistic(bias + z) */
      double q = oriented[(size_t)o * n + i] * (1.0 - s0) + s0;
      q = q < s0 ? s0 : q > 1.0 - 1e-12 ? 1.0 - 1e-12 : q;
      const double x = log(q / (1.0 - q)) - cw->bias + weight * spectral[(size_t)o * n + i];
      const double v = x > 0.0 ? x / (x + half) : 0.0;
      if (v > best) {
        best = v;
        arg = o;
      }
    }
    strength[i] = (float)best;
    orientation[i] = (unsigned char)arg;
  }
}

void app_contour_thin(const float *m, const unsigned char *orientation, int w, int h, float *out)
{
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const size_t i = (size_t)y * w + x;
      /* the edge runs along angle o pi/8 (x right, y down); its normal is 90 degrees on */
      const double th = orientation[i] * (M_PI / APP_CONTOUR_ORIENTATIONS);
      const double nx = -sin(th), ny = cos(th);
      int keep = 1;
      for (int k = 1; keep && k <= APP_CONTOUR_REACH; k++) {
        const float a = bilinear(m, w, h, x + k * nx, y + k * ny),
                    b = bilinear(m, w, h, x - k * nx, y - k * ny);
        keep = m[i] > a && m[i] >= b;
      }
      out[i] = keep ? m[i] : 0.0f;
    }
}

/* ---- the detector ------------------------------------------------------------------------ */

int app_contours(const dsg_image *img, const app_contour_weights *cw,
                 const volatile sig_atomic_t *cancel, float *strength, float *parts, float *soft,
                 float *oriented, unsigned char *bins_out)
{
  const int w = img->width, h = img->height;
  const size_t n = (size_t)w * h;
  unsigned char *bins = bins_out ? bins_out : malloc(n * APP_CONTOUR_CHANNELS),
                *orientation = malloc(n);
  float *grad = malloc(n * APP_CONTOUR_PARTS * APP_CONTOUR_ORIENTATIONS * sizeof(float));
  float *peak = malloc(n * sizeof(float));
  int status = DSG_OK;
  if (!bins || !orientation || !grad || !peak) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of a %d x %d image", w, h);
    goto out_free;
  }
  status = app_contour_bins(img, bins);
  if (status == DSG_OK)
    status = app_contour_gradients(bins, w, h, cancel, grad);
  if (status != DSG_OK)
    goto out_free;
  if (parts)
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
      for (int p = 0; p < APP_CONTOUR_PARTS; p++) {
        float best = 0.0f;
        for (int o = 0; o < APP_CONTOUR_ORIENTATIONS; o++) {
          const float v = grad[((size_t)p * APP_CONTOUR_ORIENTATIONS + o) * n + i];
          best = v > best ? v : best;
        }
        parts[(size_t)p * n + i] = best;
      }
  app_contour_combine(grad, w, h, cw, peak, oriented, orientation);
  app_contour_thin(peak, orientation, w, h, strength);
  if (soft)
    memcpy(soft, peak, n * sizeof(*soft));
out_free:
  if (bins != bins_out)
    free(bins);
  free(orientation);
  free(grad);
  free(peak);
  return status;
}

/* The tables of the binning on the device (spmv_contour_binning): app_contour_bins' ranges and
 * app_texton_responses' filter bank, from the same constants and functions (gauss_kernels,
 * srgb_to_linear, the dictionary), so that the device's bins are the C reference's
 * (tests/spmv/test_cl_image.c compares them). */
void app_contour_binning_init(app_contour_binning *d)
{
  memset(d, 0, sizeof(*d));
  for (int v = 0; v < 256; v++)
    d->linear[v] = (float)srgb_to_linear(v / 255.0);
  for (int s = 0; s < TEXTON_DIM / TEXTON_PER_SCALE; s++) {
    const int r =
        gauss_kernels(texton_sigma[s], d->taps[3 * s], d->taps[3 * s + 1], d->taps[3 * s + 2]);
    for (int k = 0; k < 3; k++) {
      d->radius[3 * s + k] = r;
      d->filter[3 * s + k] = d->taps[3 * s + k];
    }
    for (int f = 0; f < TEXTON_PER_SCALE; f++) {
      d->row[TEXTON_PER_SCALE * s + f] = 3 * s + texton_along_rows[f];
      d->column[TEXTON_PER_SCALE * s + f] = 3 * s + texton_along_columns[f];
      d->scale[TEXTON_PER_SCALE * s + f] = texton_scale[f];
    }
  }
  d->b.linear = d->linear;
  memcpy(d->b.lo, lab_lo, sizeof(lab_lo));
  memcpy(d->b.hi, lab_hi, sizeof(lab_hi));
  d->b.nfilters = 6;
  d->b.filter_radius = d->radius;
  d->b.filter = d->filter;
  d->b.dim = TEXTON_DIM;
  d->b.row_filter = d->row;
  d->b.column_filter = d->column;
  d->b.response_scale = d->scale;
  d->b.contrast = (float)APP_TEXTON_CONTRAST;
  d->b.ncentres = NTEXTON;
  d->b.centres = &texton_centre[0][0];
}

/* The detector's geometry as spmv_image.h takes it (the disc, its sectors, the channels' bins,
 * scales and smoothing), with the storage it points into. */
typedef struct contour_geometry {
  spmv_contour_geometry g;
  int *dx, *dy, *sector;
  int within[APP_CONTOUR_RMAX + 1];
  int nbins[APP_CONTOUR_CHANNELS], count[APP_CONTOUR_PARTS], sradius[APP_CONTOUR_CHANNELS];
  bin_smoother sm[APP_CONTOUR_CHANNELS];
  const float *taps[APP_CONTOUR_CHANNELS];
} contour_geometry;

static void contour_geometry_free(contour_geometry *cg)
{
  free(cg->dx);
  free(cg->dy);
  free(cg->sector);
}

/* cg's tables filled (free with contour_geometry_free, also after a failure). */
static int contour_geometry_init(contour_geometry *cg)
{
  const int R = APP_CONTOUR_RMAX, cap = (2 * R + 1) * (2 * R + 1);
  memset(cg, 0, sizeof(*cg));
  cg->dx = malloc(cap * sizeof(int));
  cg->dy = malloc(cap * sizeof(int));
  cg->sector = malloc(cap * sizeof(int));
  if (!cg->dx || !cg->dy || !cg->sector)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contour disc");
  const int ndisc = app_contour_disc(R, cg->dx, cg->dy, cg->sector, cg->within);
  for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
    cg->nbins[c] = channels[c].bins;
    smoother_init(&cg->sm[c], channels[c].smooth);
    cg->sradius[c] = cg->sm[c].radius;
    cg->taps[c] = cg->sm[c].k;
    for (int s = 0; s < APP_CONTOUR_SCALES; s++)
      cg->count[c * APP_CONTOUR_SCALES + s] = cg->within[channels[c].radius[s]];
  }
  const spmv_contour_geometry g = {.ndisc = ndisc,
                                   .dx = cg->dx,
                                   .dy = cg->dy,
                                   .sector = cg->sector,
                                   .pad = R,
                                   .nchannels = APP_CONTOUR_CHANNELS,
                                   .nscales = APP_CONTOUR_SCALES,
                                   .norient = APP_CONTOUR_ORIENTATIONS,
                                   .bins = cg->nbins,
                                   .count = cg->count,
                                   .smooth_radius = cg->sradius,
                                   .smooth = cg->taps,
                                   .reach = APP_CONTOUR_REACH};
  cg->g = g;
  return DSG_OK;
}

/* The detector on the device im, from the pixels: the bins (CIELAB, textons), gradients,
 * combination and thinning all run there, the tables handed over as data (spmv_image.h); only
 * the outputs asked for come back. */
int app_contours_cl(spmv_cl_image *im, const dsg_image *img, const app_contour_weights *cw,
                    const volatile sig_atomic_t *cancel, float *strength, float *parts, float *soft,
                    float *oriented, unsigned char *bins)
{
  const int w = img->width, h = img->height;
  float weight[APP_CONTOUR_PARTS];
  app_contour_binning binning;
  contour_geometry cg;
  int status = contour_geometry_init(&cg);
  if (status != DSG_OK)
    goto out;
  if (cancel && *cancel) {
    status = dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                           (int)*cancel);
    goto out;
  }
  for (int p = 0; p < APP_CONTOUR_PARTS; p++)
    weight[p] = (float)cw->part[p];
  app_contour_binning_init(&binning);
  {
    /* the strength before thinning stays on the device unless soft asks for it */
    const spmv_contour_outputs o = {NULL, parts, soft, NULL, strength, oriented};
    status = spmv_cl_contours_rgb(im, &cg.g, &binning.b, weight, (float)cw->bias, img->pixels,
                                  img->channels, w, h, &o, bins, NULL);
  }
out:
  contour_geometry_free(&cg);
  return status;
}

int app_contour_bins_cl(spmv_cl_image *im, const dsg_image *img, unsigned char *bins)
{
  app_contour_binning binning;
  contour_geometry cg;
  int status = contour_geometry_init(&cg);
  if (status == DSG_OK) {
    app_contour_binning_init(&binning);
    status = spmv_cl_contours_rgb(im, &cg.g, &binning.b, NULL, 0.0f, img->pixels, img->channels,
                                  img->width, img->height, NULL, bins, NULL);
  }
  contour_geometry_free(&cg);
  return status;
}

int app_contour_gpb_cl(spmv_cl_image *im, const spmv_spectral *s, const float *oriented,
                       const app_contour_weights *cw, double weight, int width, int height,
                       float *strength, unsigned char *orientation, float *thin)
{
  contour_geometry cg;
  int status = contour_geometry_init(&cg);
  if (status == DSG_OK) {
    const spmv_contour_outputs o = {NULL, NULL, strength, orientation, thin, NULL};
    status = spmv_cl_gpb(im, &cg.g, s, oriented, (float)cw->bias, (float)weight, width, height, &o,
                         NULL);
  }
  contour_geometry_free(&cg);
  return status;
}

/* The detectors, a table (dsg_options.detector). */
static const app_detector detectors[] = {
    {"auto", "the forest for the contours alone, the gradients for segment's contour cues",
     APP_DETECTOR_AUTO},
    {"forest", "the structured edge forest learnt from BSDS500 train's human segmentations",
     APP_DETECTOR_FOREST},
    {"gradients",
     "oriented histogram gradients of brightness, colour and texture (mPb), fit on BSDS500 train",
     APP_DETECTOR_GRADIENTS},
};

int dsg_detector_count(void) { return (int)(sizeof(detectors) / sizeof(detectors[0])); }

const char *dsg_detector_name(int i)
{
  return i >= 0 && i < dsg_detector_count() ? detectors[i].name : NULL;
}

const char *dsg_options_detector(const dsg_options *opt)
{
  const app_cue *cue;
  const app_detector *det;
  if (app_cue_find(opt->affinity, &cue) != DSG_OK || !cue->contours ||
      app_detector_find(opt->detector, 0, &det) != DSG_OK)
    return NULL;
  return det->name;
}

int app_detector_find(const char *name, int alone, const app_detector **out)
{
  char names[128] = "";
  if (!name)
    name = "auto";
  for (int i = 0; i < dsg_detector_count(); i++) {
    if (strcmp(name, detectors[i].name) == 0) {
      *out = &detectors[i];
      if (detectors[i].kind == APP_DETECTOR_AUTO)
        *out = &detectors[alone ? APP_DETECTOR_FOREST : APP_DETECTOR_GRADIENTS];
      return DSG_OK;
    }
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
             detectors[i].name);
  }
  *out = NULL;
  return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("detector") " '%s' is not one of %s", name,
                       names);
}

int app_contours_on(spmv_cl_image **im, const dsg_options *opt, const app_detector *det,
                    const dsg_image *img, const app_contour_weights *cw, float *strength,
                    float *parts, float *soft, float *oriented, unsigned char *bins)
{
  int status = DSG_OK;
  if (det->kind == APP_DETECTOR_FOREST) {
    if (parts || oriented)
      return dsg_error_set(DSG_ERR_INVALID, "the forest detector has no parts or orientations: "
                                            "they are the " DSG_PARAM("detector") " gradients'");
    if (!app_forest_ahead_take(img, strength, soft)) { /* made by dsg_presolve */
      if (*im) {
        status = app_forest_contours(*im, img, APP_FOREST_SCALES, opt->cancel, strength, soft);
        app_device_fall_back(im, opt, &status, "the forest");
      }
      if (!*im)
        status = app_forest_contours(NULL, img, APP_FOREST_SCALES, opt->cancel, strength, soft);
    }
    if (status == DSG_OK && bins)
      status = *im ? app_contour_bins_cl(*im, img, bins) : app_contour_bins(img, bins);
    return status;
  }
  if (*im) {
    status = app_contours_cl(*im, img, cw, opt->cancel, strength, parts, soft, oriented, bins);
    if (!app_device_fall_back(im, opt, &status, "the contours"))
      return status;
  }
  return app_contours(img, cw, opt->cancel, strength, parts, soft, oriented, bins);
}

int dsg_contours(const dsg_image *img, const dsg_options *opt, float **strength, float **parts)
{
  int status, w, h;
  float *s = NULL, *p = NULL, *big = NULL;
  dsg_image small = {0, 0, 0, NULL};
  const dsg_image *work = img;
  dsg_options defaults;
  spmv_cl_image *im = NULL;
  const app_detector *det;
  *strength = NULL;
  if (parts)
    *parts = NULL;
  if (!img || !img->pixels || img->width < 1 || img->height < 1 || img->channels < 1 ||
      img->channels > 4)
    return dsg_error_set(DSG_ERR_INVALID, "the image has no pixels or %d channels",
                         img ? img->channels : 0);
  if (!opt) {
    dsg_options_init(&defaults);
    defaults.matvec = "cpu";
    opt = &defaults;
  }
  if (app_work_pixels_check(opt->work_pixels) != DSG_OK)
    return DSG_ERR_INVALID;
  /* "auto": the forest, or the gradients when their parts are asked for */
  status = app_detector_find(opt->detector, !parts, &det);
  if (status != DSG_OK)
    return status;
  if (parts && det->kind == APP_DETECTOR_FOREST)
    return dsg_error_set(
        DSG_ERR_INVALID,
        "the forest detector has no parts: they are the " DSG_PARAM("detector") " gradients'");
  if (opt->progress) { /* one stage: the detector */
    dsg_progress rec = {"contours", 0, 1, 0, -1, 0, 0, 0.0, 0.0, -1.0};
    opt->progress(opt->progress_data, &rec);
  }
  if (app_work_size(img->width, img->height, opt->work_pixels, &w, &h)) {
    status = app_image_shrink(img, w, h, &small);
    if (status != DSG_OK)
      return status;
    work = &small; /* detected at the working size, brought back to the image's below */
  }
  const size_t n = (size_t)work->width * work->height, N = (size_t)img->width * img->height;
  s = malloc(n * sizeof(float));
  if (parts)
    p = malloc(n * APP_CONTOUR_PARTS * sizeof(float));
  if (!s || (parts && !p)) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of %zu pixels", n);
    goto out_free;
  }
  /* the forest on the host unless the device is asked for: on the H200 machine its 3 scales take
   * 0.17 s there, NVIDIA's OpenCL opening alone 0.3 s (docs/PERFORMANCE.md) */
  if (det->kind == APP_DETECTOR_FOREST && (!opt->matvec || strcmp(opt->matvec, "opencl") != 0))
    status = app_forest_contours(NULL, work, APP_FOREST_SCALES, opt->cancel, s, NULL);
  else if ((status = app_image_device(opt, &im)) == DSG_OK)
    status = app_contours_on(&im, opt, det, work, &app_contour_alone, s, p, NULL, NULL, NULL);
  spmv_cl_image_destroy(im);
  if (status == DSG_OK && work != img) {
    float *bigp = NULL;
    big = malloc(N * sizeof(float));
    bigp = parts ? malloc(N * APP_CONTOUR_PARTS * sizeof(float)) : NULL;
    if (!big || (parts && !bigp)) {
      free(bigp);
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of %zu pixels", N);
      goto out_free;
    }
    status = app_upsample_contours(s, work->width, work->height, img->width, img->height, big);
    for (int k = 0; parts && k < APP_CONTOUR_PARTS; k++) /* the parts are soft: bilinear */
      app_upsample_field(p + (size_t)k * n, work->width, work->height, img->width, img->height,
                         bigp + (size_t)k * N);
    free(s);
    free(p);
    s = big;
    p = bigp;
    big = NULL;
  }
  if (status != DSG_OK)
    goto out_free;
  *strength = s;
  s = NULL;
  if (parts) {
    *parts = p;
    p = NULL;
  }
out_free:
  free(s);
  free(p);
  free(big);
  dsg_image_free(&small);
  return status;
}
