/* The block operations (spmv_block_*, spmv.h) of the OpenCL backend against the C path, and the
 * C path against plain scalar double-precision references computed here, for blocks of 1, 5, 17,
 * 24 and 64 columns (every shape of the Gram kernel's tiles) on symmetric DIA matrices of awkward
 * orders (n = 7 and 24 under the offsets' span, n not a multiple of 4 or 32, n with several
 * known-vector chunks) and on an image affinity, with A packed (kernel naive) and pitched (the
 * automatic kernel). Tolerances, each relative to the magnitude of the terms summed (|a| |x| and
 * the like):
 *  - product (with prev, without, and dst == prev): row error <= 1e-5 (float accumulation over
 *    the diagonals, as spmv_dia_row_error);
 *  - axpby, transform, project: <= 1e-6 (one float rounding of a double result);
 *  - gram, residuals: <= 1e-6 of sum |x_i| |y_j| and sum (|ax| + |theta x|)^2;
 *  - after project, each column's dot with each known vector <= 1e-6 of its norm on the support.
 * fill_random: bit for bit the C path's numbers (and the splitmix64 formula of spmv.h, checked
 * here on a few entries), for several seeds, the other slots untouched.
 * Known vectors: thousands of small supports (1 or 2 rows, numbered against the row order), one
 * covering almost all rows (several chunks), labels -1 and an empty label. Also: set/get round
 * trips bit for bit, a fresh block is zero, project without known vectors changes nothing, the
 * timing counts, a block over the (capped) device allocation fails with DSG_ERR_LIMIT and a known
 * label out of range with DSG_ERR_INVALID.
 * The device: $DIASEG_CL_DEVICE, else the first OpenCL device. Without any OpenCL device (or
 * without double precision on it) the test is skipped (exit code 77). */
#include "check.h"
#include "disc_affinity.h"

#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77 /* ctest's SKIP_RETURN_CODE */
#define SLOTS 4

static char device[256] = "0";

/* A symmetric DIA matrix of order n: the main diagonal and +-o for each o of offs (0 < o < n,
 * ascending), values in [-1, 1] (A(r, r + o) = A(r + o, r)). */
static spmv_dia *test_symmetric_dia(int n, const int *offs, int count)
{
  int *off = malloc((size_t)(2 * count + 1) * sizeof(*off));
  spmv_dia *A = NULL;
  for (int i = 0; i < count; i++) {
    off[i] = -offs[count - 1 - i];
    off[count + 1 + i] = offs[i];
  }
  off[count] = 0;
  if (spmv_dia_create(&A, n, 2 * count + 1, off) == DSG_OK) {
    for (int r = 0; r < n; r++)
      A->values[(size_t)count * A->pitch + (size_t)r] = (float)(2 * test_uniform() - 1);
    for (int i = 0; i < count; i++) {
      const int o = offs[i];
      float *up = A->values + (size_t)(count + 1 + i) * A->pitch;
      float *down = A->values + (size_t)(count - 1 - i) * A->pitch;
      for (int r = 0; r + o < n; r++)
        up[r] = down[r + o] = (float)(2 * test_uniform() - 1);
    }
  }
  free(off);
  return A;
}

/* A pixel stencil of an image w pixels wide with n pixels (the last image row partial where w
 * does not divide n): the offsets dy w + dx of the disc dx^2 + dy^2 <= radius^2, values random
 * in (0, 1] where pixel (x + dx, y + dy) is in the image (a row < n), else zero. width is set
 * (a 2D stencil for the backends) where w > 2 radius + 1, else 0. Not symmetric: the product
 * does not need it. */
static spmv_dia *test_stencil_dia(int w, int n, int radius)
{
  const int side = 2 * radius + 1, stencil = w > side;
  int *off = malloc((size_t)side * (size_t)side * sizeof(*off)), count = 0, ndiag = 0;
  spmv_dia *A = NULL;
  for (int dy = -radius; dy <= radius; dy++)
    for (int dx = -radius; dx <= radius; dx++)
      if (dx * dx + dy * dy <= radius * radius && abs(dy * w + dx) < n)
        off[count++] = dy * w + dx;
  qsort(off, (size_t)count, sizeof(*off), test_cmp_int); /* narrow images: offsets repeat */
  for (int k = 0; k < count; k++)
    if (ndiag == 0 || off[k] != off[ndiag - 1])
      off[ndiag++] = off[k];
  count = ndiag;
  if (spmv_dia_create(&A, n, count, off) == DSG_OK) {
    for (int d = 0; d < count; d++) {
      const int o = off[d], dy = (o >= 0 ? o + w / 2 : o - (w - 1) / 2) / w, dx = o - dy * w;
      for (int r = 0; r < n; r++) {
        const int x = r % w;
        const long long c = (long long)r + o;
        if ((!stencil || (x + dx >= 0 && x + dx < w)) && c >= 0 && c < n)
          A->values[(size_t)d * A->pitch + (size_t)r] = (float)(1.0 - test_uniform());
      }
    }
    A->width = stencil ? w : 0;
  }
  free(off);
  return A;
}

/* The known vectors of n rows: in each run of 16 rows, row 15 (and row 14 of every other run) a
 * small vector of its own, numbered from the end; row 5 of every third run in none (-1); the rest
 * one big vector 0. The last label has no row. Values random, each vector of unit norm. */
static spmv_known test_known(int n, int *label, float *value)
{
  const int runs = (n + 15) / 16;
  spmv_known k = {runs + 2, label, value};
  double *norm2 = calloc((size_t)k.count, sizeof(double));
  for (int r = 0; r < n; r++) {
    const int q = r / 16, pos = r % 16;
    label[r] = pos == 15 || (pos == 14 && q % 2 == 0) ? 1 + (runs - 1 - q)
               : pos == 5 && q % 3 == 0               ? -1
                                                      : 0;
    value[r] = label[r] < 0 ? 0.0f : (float)((0.5 + test_uniform()) * (r % 3 ? 1 : -1));
    if (label[r] >= 0)
      norm2[label[r]] += (double)value[r] * value[r];
  }
  for (int r = 0; r < n; r++)
    if (label[r] >= 0)
      value[r] = (float)(value[r] / sqrt(norm2[label[r]]));
  free(norm2);
  return k;
}

static void random_block(float *x, size_t count)
{
  for (size_t i = 0; i < count; i++)
    x[i] = (float)(2 * test_uniform() - 1);
}

/* The largest |y - ref| / mag over count entries (mag 0: compared absolutely); NaN counts as
 * infinite. */
static double worst(const float *y, const double *ref, const double *mag, size_t count)
{
  double w = 0.0;
  for (size_t i = 0; i < count; i++) {
    const double e = fabs((double)y[i] - ref[i]) / (mag[i] > 0 ? mag[i] : 1e-300);
    if (!(e <= w))
      w = isnan(e) ? INFINITY : e;
  }
  return w;
}

/* The same, y against another float result. */
static double worst_f(const float *y, const float *ref, const double *mag, size_t count)
{
  double w = 0.0;
  for (size_t i = 0; i < count; i++) {
    const double e = fabs((double)y[i] - (double)ref[i]) / (mag[i] > 0 ? mag[i] : 1e-300);
    if (!(e <= w))
      w = isnan(e) ? INFINITY : e;
  }
  return w;
}

/* Entry (r, v) of spmv_block_fill_random's columns for seed, as spmv.h defines it. */
static float splitmix_entry(unsigned long long seed, int v, int r)
{
  unsigned long long z =
      seed + (unsigned long long)v + (unsigned long long)(r + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (float)((double)(z >> 11) * 0x1.0p-53 - 0.5);
}

/* One matrix, one block width, one kernel: every operation on both backends. */
typedef struct test_case {
  const spmv_dia *A;
  const char *what;
  int b;
  spmv_matvec *cpu, *cl;
  const spmv_known *known;
  spmv_block *kc, *kl; /* C and OpenCL blocks */
  float *x0, *x1, *x2, *yc, *yl;
  double *ref, *mag;
} test_case;

/* Slot s := x on both backends. */
static void set_both(test_case *t, int s, const float *x)
{
  int sc = spmv_block_set(t->kc, s, x), sl = spmv_block_set(t->kl, s, x);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: set slot %d: %s", t->what, t->b, s,
        dsg_error_message());
}

/* yc, yl := slot s of the C and the OpenCL block. */
static void get_both(test_case *t, int s)
{
  const size_t count = (size_t)t->A->rows * (size_t)t->b;
  for (size_t i = 0; i < count; i++)
    t->yc[i] = t->yl[i] = NAN;
  int sc = spmv_block_get(t->kc, s, t->b, t->yc), sl = spmv_block_get(t->kl, s, t->b, t->yl);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: get slot %d: %s", t->what, t->b, s,
        dsg_error_message());
}

/* Checks yc against ref and yl against yc, relative to mag, to tol. */
static void compare(test_case *t, const char *op, double tol)
{
  const size_t count = (size_t)t->A->rows * (size_t)t->b;
  const double ec = worst(t->yc, t->ref, t->mag, count), el = worst_f(t->yl, t->yc, t->mag, count);
  CHECK(ec <= tol, "%s b=%d: %s: the C path is off the double reference by %.3g (tol %g)", t->what,
        t->b, op, ec, tol);
  CHECK(el <= tol, "%s b=%d: %s: OpenCL is off the C path by %.3g (tol %g)", t->what, t->b, op, el,
        tol);
}

/* Slot 1 := fill_random(seed) on both backends: bit for bit equal, the formula's numbers, in
 * [-0.5, 0.5), slot 2 (x2) untouched. */
static void check_fill_random(test_case *t)
{
  static const unsigned long long seeds[] = {0x6469617365677631ull /* EIG_START_SEED */, 0, 1,
                                             0xfffffffffffffff0ull};
  const int n = t->A->rows, b = t->b;
  const size_t count = (size_t)n * (size_t)b;
  set_both(t, 2, t->x2);
  for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
    int sc = spmv_block_fill_random(t->kc, 1, seeds[i]);
    int sl = spmv_block_fill_random(t->kl, 1, seeds[i]);
    CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: fill_random: %s", t->what, b,
          dsg_error_message());
    get_both(t, 1);
    int same = memcmp(t->yc, t->yl, count * sizeof(float)) == 0, range = 1, formula = 1;
    for (size_t e = 0; e < count; e++)
      range &= t->yl[e] >= -0.5f && t->yl[e] < 0.5f;
    for (int v = 0; v<b; v += b> 1 ? b - 1 : 1)
      for (int r = 0; r<n; r += n> 3 ? n / 3 : 1)
        formula &= t->yc[(size_t)v * n + r] == splitmix_entry(seeds[i], v, r);
    CHECK(same, "%s b=%d: fill_random seed %#llx: OpenCL differs from the C path", t->what, b,
          seeds[i]);
    CHECK(range && formula, "%s b=%d: fill_random seed %#llx: not the numbers of spmv.h", t->what,
          b, seeds[i]);
  }
  get_both(t, 2);
  CHECK(memcmp(t->yl, t->x2, count * sizeof(float)) == 0 &&
            memcmp(t->yc, t->x2, count * sizeof(float)) == 0,
        "%s b=%d: fill_random touched another slot", t->what, b);
}

/* dst := alpha A src + beta src + gamma prev with src = x0, prev = x1 (prev < 0: none). */
static void check_product(test_case *t, int dst, int prev, double alpha, double beta, double gamma)
{
  const spmv_dia *A = t->A;
  const int n = A->rows, src = 0;
  char op[96];
  set_both(t, src, t->x0);
  if (prev >= 0)
    set_both(t, prev, t->x1);
  int sc = spmv_block_product(t->kc, dst, src, prev, alpha, beta, gamma);
  int sl = spmv_block_product(t->kl, dst, src, prev, alpha, beta, gamma);
  snprintf(op, sizeof(op), "product dst %d prev %d", dst, prev);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: %s: %s", t->what, t->b, op, dsg_error_message());
  for (int v = 0; v < t->b; v++) {
    const float *x = t->x0 + (size_t)v * n, *p = t->x1 + (size_t)v * n;
    for (int r = 0; r < n; r++) {
      double s = 0.0, m = 0.0;
      for (int d = 0; d < A->ndiag; d++) {
        const long long c = (long long)r + A->offsets[d];
        if (c >= 0 && c < n) {
          const double a = A->values[(size_t)d * A->pitch + (size_t)r];
          s += a * x[c];
          m += fabs(a * x[c]);
        }
      }
      const size_t e = (size_t)v * n + (size_t)r;
      t->ref[e] = alpha * s + beta * x[r] + (prev >= 0 ? gamma * p[r] : 0.0);
      t->mag[e] = fabs(alpha) * m + fabs(beta * x[r]) + (prev >= 0 ? fabs(gamma * p[r]) : 0.0);
    }
  }
  get_both(t, dst);
  compare(t, op, 1e-5);
}

/* dst := alpha x + beta y for the slot pattern (dst, x, y) with x0 in slot 0, x1 in slot 1. */
static void check_axpby(test_case *t, int dst, int x, int y)
{
  const size_t count = (size_t)t->A->rows * (size_t)t->b;
  const double alpha = 0.75, beta = -1.25;
  char op[64];
  set_both(t, 0, t->x0);
  set_both(t, 1, t->x1);
  int sc = spmv_block_axpby(t->kc, dst, alpha, x, beta, y);
  int sl = spmv_block_axpby(t->kl, dst, alpha, x, beta, y);
  snprintf(op, sizeof(op), "axpby %d := %d, %d", dst, x, y);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: %s: %s", t->what, t->b, op, dsg_error_message());
  const float *xs = x == 0 ? t->x0 : t->x1, *ys = y == 0 ? t->x0 : t->x1;
  for (size_t i = 0; i < count; i++) {
    t->ref[i] = alpha * xs[i] + beta * ys[i];
    t->mag[i] = fabs(alpha * xs[i]) + fabs(beta * ys[i]);
  }
  get_both(t, dst);
  compare(t, op, 1e-6);
}

/* G = X^T Y for (x0, x1) and (x0, x0). */
static void check_gram(test_case *t)
{
  const int n = t->A->rows, b = t->b;
  const size_t bb = (size_t)b * (size_t)b;
  double *gc = malloc(bb * sizeof(double)), *gl = malloc(bb * sizeof(double));
  double *gr = malloc(bb * sizeof(double)), *gm = malloc(bb * sizeof(double));
  set_both(t, 0, t->x0);
  set_both(t, 1, t->x1);
  for (int same = 0; same < 2; same++) {
    const int ys = same ? 0 : 1;
    const float *Y = same ? t->x0 : t->x1;
    for (size_t e = 0; e < bb; e++)
      gc[e] = gl[e] = NAN;
    int sc = spmv_block_gram(t->kc, 0, ys, gc), sl = spmv_block_gram(t->kl, 0, ys, gl);
    CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: gram: %s", t->what, t->b, dsg_error_message());
    for (int j = 0; j < b; j++)
      for (int i = 0; i < b; i++) {
        double s = 0.0, m = 0.0;
        for (int r = 0; r < n; r++) {
          const double p = (double)t->x0[(size_t)i * n + r] * Y[(size_t)j * n + r];
          s += p;
          m += fabs(p);
        }
        gr[i + (size_t)j * b] = s;
        gm[i + (size_t)j * b] = m;
      }
    double ec = 0.0, el = 0.0;
    int sym = 1;
    for (size_t e = 0; e < bb; e++) {
      const double dc = fabs(gc[e] - gr[e]) / gm[e], dl = fabs(gl[e] - gc[e]) / gm[e];
      ec = dc > ec || isnan(dc) ? dc : ec;
      el = dl > el || isnan(dl) ? dl : el;
    }
    for (int j = 0; j < b && same; j++)
      for (int i = 0; i < b; i++)
        sym &= gl[i + (size_t)j * b] == gl[j + (size_t)i * b];
    CHECK(ec <= 1e-6, "%s b=%d: gram (same %d): the C path is off the reference by %.3g", t->what,
          b, same, ec);
    CHECK(el <= 1e-6, "%s b=%d: gram (same %d): OpenCL is off the C path by %.3g", t->what, b, same,
          el);
    CHECK(sym, "%s b=%d: OpenCL's X^T X is not symmetric", t->what, b);
  }
  free(gc);
  free(gl);
  free(gr);
  free(gm);
}

/* |ax - theta x|^2 per column, ax = x1 in slot 3, x = x0 in slot 0. */
static void check_residuals(test_case *t)
{
  const int n = t->A->rows, b = t->b;
  double *theta = malloc((size_t)b * sizeof(double)), *oc = malloc((size_t)b * sizeof(double));
  double *ol = malloc((size_t)b * sizeof(double));
  for (int v = 0; v < b; v++) {
    theta[v] = 2 * test_uniform() - 1;
    oc[v] = ol[v] = NAN;
  }
  set_both(t, 0, t->x0);
  set_both(t, 3, t->x1);
  int sc = spmv_block_residuals(t->kc, 3, 0, theta, oc);
  int sl = spmv_block_residuals(t->kl, 3, 0, theta, ol);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: residuals: %s", t->what, b, dsg_error_message());
  for (int v = 0; v < b; v++) {
    double s = 0.0, m = 0.0;
    for (int r = 0; r < n; r++) {
      const double a = t->x1[(size_t)v * n + r], x = t->x0[(size_t)v * n + r];
      s += (a - theta[v] * x) * (a - theta[v] * x);
      m += (fabs(a) + fabs(theta[v] * x)) * (fabs(a) + fabs(theta[v] * x));
    }
    CHECK(fabs(oc[v] - s) <= 1e-6 * m, "%s b=%d: residual %d: C %.17g, reference %.17g", t->what, b,
          v, oc[v], s);
    CHECK(fabs(ol[v] - oc[v]) <= 1e-6 * m, "%s b=%d: residual %d: OpenCL %.17g, C %.17g", t->what,
          b, v, ol[v], oc[v]);
  }
  free(theta);
  free(oc);
  free(ol);
}

/* slot 2 := x2 M in place. */
static void check_transform(test_case *t)
{
  const int n = t->A->rows, b = t->b;
  double *M = malloc((size_t)b * (size_t)b * sizeof(double));
  for (int e = 0; e < b * b; e++)
    M[e] = e % 7 == 3 ? 0.0 : 2 * test_uniform() - 1;
  set_both(t, 2, t->x2);
  int sc = spmv_block_transform(t->kc, 2, M), sl = spmv_block_transform(t->kl, 2, M);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: transform: %s", t->what, b, dsg_error_message());
  for (int j = 0; j < b; j++)
    for (int r = 0; r < n; r++) {
      double s = 0.0, m = 0.0;
      for (int i = 0; i < b; i++) {
        s += (double)t->x2[(size_t)i * n + r] * M[i + (size_t)j * b];
        m += fabs((double)t->x2[(size_t)i * n + r] * M[i + (size_t)j * b]);
      }
      t->ref[(size_t)j * n + r] = s;
      t->mag[(size_t)j * n + r] = m;
    }
  memset(M, 0, (size_t)b * (size_t)b * sizeof(double)); /* the block keeps no pointer to M */
  get_both(t, 2);
  compare(t, "transform", 1e-6);
  free(M);
}

/* slot 0 := P x0, then the dots with the known vectors. */
static void check_project(test_case *t)
{
  const int n = t->A->rows, b = t->b, count = t->known->count;
  const int *label = t->known->label;
  const float *value = t->known->value;
  double *dots = calloc((size_t)count * (size_t)b, sizeof(double));
  double *absd = calloc((size_t)count * (size_t)b, sizeof(double));
  double *after = calloc((size_t)count * (size_t)b, sizeof(double));
  double *norm2 = calloc((size_t)count * (size_t)b, sizeof(double));
  set_both(t, 0, t->x0);
  int sc = spmv_block_project(t->kc, 0), sl = spmv_block_project(t->kl, 0);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: project: %s", t->what, b, dsg_error_message());
  for (int v = 0; v < b; v++)
    for (int r = 0; r < n; r++)
      if (label[r] >= 0) {
        const double x = t->x0[(size_t)v * n + r];
        dots[(size_t)label[r] * b + v] += (double)value[r] * x;
        absd[(size_t)label[r] * b + v] += fabs((double)value[r] * x);
        norm2[(size_t)label[r] * b + v] += x * x;
      }
  for (int v = 0; v < b; v++)
    for (int r = 0; r < n; r++) {
      const size_t e = (size_t)v * n + (size_t)r;
      const double x = t->x0[e];
      const int c = label[r];
      t->ref[e] = c >= 0 ? x - (double)value[r] * dots[(size_t)c * b + v] : x;
      t->mag[e] = fabs(x) + (c >= 0 ? fabs((double)value[r]) * absd[(size_t)c * b + v] : 0.0);
    }
  get_both(t, 0);
  compare(t, "project", 1e-6);
  /* what is left along each known vector: rounding only */
  for (int pass = 0; pass < 2; pass++) {
    const float *y = pass == 0 ? t->yc : t->yl;
    double w = 0.0;
    memset(after, 0, (size_t)count * (size_t)b * sizeof(double));
    for (int v = 0; v < b; v++)
      for (int r = 0; r < n; r++)
        if (label[r] >= 0)
          after[(size_t)label[r] * b + v] += (double)value[r] * y[(size_t)v * n + r];
    for (size_t e = 0; e < (size_t)count * (size_t)b; e++) {
      const double rel = fabs(after[e]) / (norm2[e] > 0 ? sqrt(norm2[e]) : 1.0);
      w = rel > w || isnan(rel) ? rel : w;
    }
    CHECK(w <= 1e-6, "%s b=%d: after %s's project, a known vector's dot is %.3g of the norm",
          t->what, b, pass == 0 ? "C" : "OpenCL", w);
  }
  free(dots);
  free(absd);
  free(after);
  free(norm2);
}

static void run_case(test_case *t)
{
  const int n = t->A->rows, b = t->b;
  const size_t count = (size_t)n * (size_t)b;
  int sc = spmv_block_create(&t->kc, t->cpu, b, SLOTS, t->known);
  int sl = spmv_block_create(&t->kl, t->cl, b, SLOTS, t->known);
  CHECK(sc == DSG_OK && sl == DSG_OK, "%s b=%d: create: %s", t->what, b, dsg_error_message());
  if (sc != DSG_OK || sl != DSG_OK)
    goto out;
  CHECK(spmv_block_width(t->kl) == b, "width");

  /* a fresh block is zero; set and get round trip bit for bit */
  get_both(t, 3);
  {
    int zero = 1, same = 1;
    for (size_t i = 0; i < count; i++)
      zero &= t->yl[i] == 0.0f && t->yc[i] == 0.0f;
    CHECK(zero, "%s b=%d: a fresh block is not zero", t->what, b);
    set_both(t, 2, t->x2);
    get_both(t, 2);
    for (size_t i = 0; i < count; i++)
      same &= t->yl[i] == t->x2[i] && t->yc[i] == t->x2[i];
    CHECK(same, "%s b=%d: set/get does not round-trip", t->what, b);
    if (b > 1) { /* fewer columns than the block has */
      float *part = malloc((size_t)n * 2 * sizeof(float));
      for (size_t i = 0; i < (size_t)n * 2; i++)
        part[i] = NAN;
      CHECK(spmv_block_get(t->kl, 2, 1, part) == DSG_OK &&
                memcmp(part, t->x2, (size_t)n * sizeof(float)) == 0 && isnan(part[n]),
            "%s b=%d: get of 1 column", t->what, b);
      free(part);
    }
  }

  check_fill_random(t);
  check_product(t, 3, 1, 1.7, -0.6, 0.35);
  check_product(t, 2, -1, 0.8, 0.25, 99.0); /* gamma ignored without prev */
  check_product(t, 1, 1, -1.1, 0.4, -0.7);  /* dst == prev */
  check_axpby(t, 2, 0, 1);
  check_axpby(t, 0, 0, 1); /* dst == x */
  check_axpby(t, 1, 0, 1); /* dst == y */
  check_axpby(t, 2, 0, 0); /* x == y */
  check_gram(t);
  check_residuals(t);
  check_transform(t);
  if (t->known)
    check_project(t);

  spmv_block_timing tl = spmv_block_get_timing(t->kl), tc = spmv_block_get_timing(t->kc);
  CHECK(tl.products == 3L * b && tc.products == 3L * b, "%s b=%d: products %ld %ld", t->what, b,
        tl.products, tc.products);
  CHECK(tl.matvec_s > 0 && tl.vector_s > 0 && tl.reduce_s > 0 && tl.transfer_s > 0 &&
            tl.launches >= 3 + 4 + 4 + 2 + 1,
        "%s b=%d: OpenCL timing %g %g %g %g, %ld launches", t->what, b, tl.matvec_s, tl.vector_s,
        tl.reduce_s, tl.transfer_s, tl.launches);
  CHECK(tc.launches == 0, "%s b=%d: the C path launched %ld kernels", t->what, b, tc.launches);
out:
  spmv_block_destroy(t->kc);
  spmv_block_destroy(t->kl);
  t->kc = t->kl = NULL;
}

/* Every width b <= n on A, with A packed (naive) and pitched (auto), with known vectors and
 * without. */
static void check_matrix(const spmv_dia *A, const char *what)
{
  /* stencils: the widths of one chunk, of a partial chunk and of two chunks of the tiled product */
  static const int all[] = {1, 5, 17, 24, 64}, stencil[] = {1, 5, 24};
  const int *widths = A->width > 0 ? stencil : all;
  const size_t nwidths = A->width > 0 ? 3 : 5;
  static const spmv_kernel kernels[] = {SPMV_KERNEL_NAIVE, SPMV_KERNEL_AUTO};
  const int n = A->rows;
  const size_t big = (size_t)n * SPMV_BLOCK_MAX;
  int *label = malloc((size_t)n * sizeof(int));
  float *value = malloc((size_t)n * sizeof(float));
  spmv_known known = test_known(n, label, value);
  test_case t = {.A = A,
                 .what = what,
                 .x0 = malloc(big * sizeof(float)),
                 .x1 = malloc(big * sizeof(float)),
                 .x2 = malloc(big * sizeof(float)),
                 .yc = malloc(big * sizeof(float)),
                 .yl = malloc(big * sizeof(float)),
                 .ref = malloc(big * sizeof(double)),
                 .mag = malloc(big * sizeof(double))};
  random_block(t.x0, big);
  random_block(t.x1, big);
  random_block(t.x2, big);
  CHECK(spmv_matvec_create_cpu(&t.cpu, A) == DSG_OK, "%s: cpu matvec", what);
  for (size_t k = 0; k < sizeof(kernels) / sizeof(kernels[0]); k++) {
    spmv_cl_options opt;
    spmv_cl_options_init(&opt);
    opt.device = device;
    opt.kernel = kernels[k];
    CHECK(spmv_matvec_create_opencl(&t.cl, A, &opt) == DSG_OK, "%s: opencl matvec: %s", what,
          dsg_error_message());
    for (size_t i = 0; i < nwidths && t.cl && t.cpu; i++) {
      if (widths[i] > n)
        continue;
      t.b = widths[i];
      t.known = i % 2 == k % 2 || n > 1000 ? &known : NULL; /* both ways on the small ones */
      run_case(&t);
    }
    /* project without known vectors changes nothing */
    if (t.cl && k == 0) {
      spmv_block *kl = NULL;
      float *y = t.yl;
      CHECK(spmv_block_create(&kl, t.cl, 1, 1, NULL) == DSG_OK, "create");
      if (kl) {
        spmv_block_set(kl, 0, t.x0);
        CHECK(spmv_block_project(kl, 0) == DSG_OK && spmv_block_get(kl, 0, 1, y) == DSG_OK &&
                  memcmp(y, t.x0, (size_t)n * sizeof(float)) == 0,
              "%s: project without known vectors", what);
      }
      spmv_block_destroy(kl);
    }
    spmv_matvec_destroy(t.cl);
    t.cl = NULL;
  }
  spmv_matvec_destroy(t.cpu);
  free(t.x0);
  free(t.x1);
  free(t.x2);
  free(t.yc);
  free(t.yl);
  free(t.ref);
  free(t.mag);
  free(label);
  free(value);
}

/* The failures a block's creation reports. */
static void check_creation_failures(void)
{
  static const int offs[] = {1, 3};
  const int n = 20011;
  spmv_dia *A = test_symmetric_dia(n, offs, 2);
  spmv_matvec *mv = NULL;
  spmv_block *k = NULL;
  spmv_cl_options opt;
  int *label = malloc((size_t)n * sizeof(int));
  float *value = malloc((size_t)n * sizeof(float));
  spmv_known known = test_known(n, label, value);
  spmv_cl_options_init(&opt);
  opt.device = device;
  opt.kernel = SPMV_KERNEL_VECTOR;
  opt.max_alloc = 2u << 20; /* the matrix fits, 4 slots of 24 columns (7.7 MB) do not */
  CHECK(A && spmv_matvec_create_opencl(&mv, A, &opt) == DSG_OK, "capped matvec: %s",
        dsg_error_message());
  if (mv) {
    int status = spmv_block_create(&k, mv, 24, SLOTS, NULL);
    CHECK(status == DSG_ERR_LIMIT && !k && strstr(dsg_error_message(), "block") &&
              strstr(dsg_error_raw(), DSG_PARAM("cl_max_alloc")),
          "a block over the allocation cap: %d %s", status, dsg_error_raw());
    CHECK(spmv_block_create(&k, mv, 1, 1, NULL) == DSG_OK && k, "a small block: %s",
          dsg_error_message());
    spmv_block_destroy(k);
    k = NULL;
    label[n / 2] = known.count; /* out of range */
    status = spmv_block_create(&k, mv, 1, 1, &known);
    CHECK(status == DSG_ERR_INVALID && !k && strstr(dsg_error_message(), "label"),
          "a known label out of range: %d %s", status, dsg_error_message());
  }
  spmv_block_destroy(NULL);
  spmv_matvec_destroy(mv);
  spmv_dia_destroy(A);
  free(label);
  free(value);
}

int main(void)
{
  spmv_cl_device *list = NULL;
  int count = 0, index = 0;
  const char *env = getenv("DIASEG_CL_DEVICE");
  if (env && *env)
    snprintf(device, sizeof(device), "%s", env);
  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_block: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  CHECK(spmv_cl_pick(list, count, device, 0, &index) == DSG_OK, "pick '%s'", device);
  printf("test_block: device [%d] %s: %s\n", index, list[index].platform, list[index].name);
  if (!list[index].fp64) {
    printf("test_block: skipped: the device has no double precision\n");
    free(list);
    return TEST_SKIP;
  }
  free(list);

  /* symmetric random matrices: n under the offsets' span (7, 24), n not a multiple of 4 or 32,
   * n with a known vector over several chunks of rows, and long runs of consecutive offsets */
  static const struct {
    int n, count, offs[20];
  } sym[] = {{7, 2, {2, 6}},
             {24, 3, {1, 5, 23}},
             {37, 3, {1, 2, 30}},
             {1000, 3, {1, 31, 40}},
             {1001, 4, {1, 2, 7, 500}},
             {4099, 2, {1, 64}},
             {40009, 3, {1, 2, 200}},
             /* 41 consecutive offsets: runs longer than the product's (16 diagonals) */
             {5003, 20, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}}};
  for (size_t i = 0; i < sizeof(sym) / sizeof(sym[0]); i++) {
    spmv_dia *A = test_symmetric_dia(sym[i].n, sym[i].offs, sym[i].count);
    char what[64];
    snprintf(what, sizeof(what), "symmetric n=%d ndiag=%d", sym[i].n, 2 * sym[i].count + 1);
    CHECK(A != NULL, "%s", what);
    if (A)
      check_matrix(A, what);
    spmv_dia_destroy(A);
  }
  /* pixel stencils (the tiled product where width is set): partial tiles across and down,
   * a partial last image row, a narrow image, reaches 1, 3, 5 and 8, and a tall image too
   * narrow to be a stencil (width 0: the product of any DIA matrix) */
  static const struct {
    int w, n, radius;
  } stencil[] = {{37, 37 * 23, 1},  {37, 37 * 22 + 15, 3},  {64, 64 * 48, 5}, {64, 64 * 47 + 1, 5},
                 {200, 200 * 7, 5}, {200, 200 * 6 + 77, 3}, {13, 13 * 40, 5}, {97, 97 * 61 - 3, 8},
                 {5, 5 * 300, 5},   {33, 33 * 9 + 32, 5}};
  for (size_t i = 0; i < sizeof(stencil) / sizeof(stencil[0]); i++) {
    spmv_dia *A = test_stencil_dia(stencil[i].w, stencil[i].n, stencil[i].radius);
    char what[96];
    snprintf(what, sizeof(what), "stencil %d wide n=%d r=%d (width %d)", stencil[i].w, stencil[i].n,
             stencil[i].radius, A ? A->width : -1);
    CHECK(A != NULL, "%s", what);
    CHECK(A && spmv_dia_validate(A) == DSG_OK, "%s: validate: %s", what, dsg_error_message());
    if (A)
      check_matrix(A, what);
    spmv_dia_destroy(A);
  }
  /* the kind of matrix diaseg solves: an image affinity of 81 diagonals */
  {
    float *f = test_image_features(97, 61, 1);
    spmv_dia *N = NULL;
    CHECK(f && test_disc_affinity(97, 61, f, 1, 5, 0.1, 4.0, &N) == DSG_OK, "affinity");
    if (N)
      check_matrix(N, "image 97x61 r=5");
    if (N) { /* the same as a stencil: the tiled product */
      N->width = 97;
      CHECK(spmv_dia_validate(N) == DSG_OK, "affinity stencil: validate: %s", dsg_error_message());
      check_matrix(N, "image 97x61 r=5 (width 97)");
    }
    spmv_dia_destroy(N);
    free(f);
  }
  check_creation_failures();
  return check_report("test_block");
}
