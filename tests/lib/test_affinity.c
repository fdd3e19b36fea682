/* DIA construction equals the dense N = D^-1/2 W D^-1/2 built straight from the formulas:
 * several image shapes (including 1 x N, N x 1 and widths below the disc's diameter) and radii,
 * intensity and colour features. Also: symmetric, N (D^1/2 1) = D^1/2 1, layout invariants. */
#include "diaseg_internal.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

/* The command line's spelling of the parameters these tests meet (app/cli: --sigma-x). */
static const char *cli_spell(const char *param, void *data)
{
  (void)data;
  return strcmp(param, "sigma_x") == 0   ? "--sigma-x"
         : strcmp(param, "sigma_i") == 0 ? "--sigma-i"
                                         : NULL;
}

/* Dense reference, double, from the definitions in docs/PIPELINE.md. */
static double *dense_reference(int w, int h, const float *f, int nf, const app_affinity_params *p,
                               double *sqrt_degree)
{
  const int n = w * h, r = p->radius;
  double *N = calloc((size_t)n * n, sizeof(*N));
  for (int i = 0; i < n; i++) {
    int xi = i % w, yi = i / w;
    for (int j = 0; j < n; j++) {
      int dx = j % w - xi, dy = j / w - yi;
      if (dx * dx + dy * dy > r * r)
        continue;
      double d2 = 0;
      for (int c = 0; c < nf; c++) {
        double t = (double)f[i * nf + c] - f[j * nf + c];
        d2 += t * t;
      }
      N[(size_t)i * n + j] = exp(-d2 / (p->sigma_i * p->sigma_i)) *
                             exp(-(double)(dx * dx + dy * dy) / (p->sigma_x * p->sigma_x));
    }
  }
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++)
      s += N[(size_t)i * n + j];
    sqrt_degree[i] = sqrt(s);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      N[(size_t)i * n + j] /= sqrt_degree[i] * sqrt_degree[j];
  return N;
}

static void one_case(int w, int h, int radius, int nf)
{
  const int n = w * h;
  app_affinity_params p = {radius, 0.1 + 0.2 * test_uniform(), 1.5 + 4.0 * test_uniform(), NULL, 0,
                           NULL};
  float *f = malloc((size_t)n * nf * sizeof(*f));
  double *sd_ref = malloc((size_t)n * sizeof(*sd_ref)), *sd = NULL;
  spmv_dia *A = NULL;
  /* piecewise features with noise, so that W varies over several orders of magnitude */
  for (int i = 0; i < n * nf; i++)
    f[i] = (float)(((i / nf) % 7 < 3 ? 0.2 : 0.7) + 0.1 * test_uniform());
  double *N = dense_reference(w, h, f, nf, &p, sd_ref);
  int status = app_affinity_build(w, h, f, nf, &p, &A, &sd);
  CHECK(status == DSG_OK, "%dx%d r=%d: build failed: %s", w, h, radius, dsg_error_message());
  if (status != DSG_OK)
    goto out;
  CHECK(spmv_dia_validate(A) == DSG_OK, "%dx%d r=%d: %s", w, h, radius, dsg_error_message());
  CHECK(A->pitch % 32 == 0 && A->pitch >= (size_t)n && A->pitch < (size_t)n + 32,
        "pitch %zu for %d rows", A->pitch, n);
  CHECK(((uintptr_t)A->values & 127) == 0, "values not 128-byte aligned");
  if (w > 2 * radius && h > 2 * radius)
    CHECK(A->ndiag == app_disc_size(radius), "%dx%d r=%d: %d diagonals, expected %d", w, h, radius,
          A->ndiag, app_disc_size(radius));

  /* rebuild the dense matrix from the diagonals and compare every entry */
  double *R = calloc((size_t)n * n, sizeof(*R)), maxerr = 0;
  for (int d = 0; d < A->ndiag; d++)
    for (int i = 0; i < n; i++) {
      long long j = (long long)i + A->offsets[d];
      if (j >= 0 && j < n)
        R[(size_t)i * n + j] += A->values[(size_t)d * A->pitch + i];
    }
  for (size_t k = 0; k < (size_t)n * n; k++) {
    double e = fabs(R[k] - N[k]);
    maxerr = e > maxerr ? e : maxerr;
    CHECK(CLOSE(R[k], N[k], 1e-6, 1e-9), "%dx%d r=%d nf=%d: N[%zu,%zu] = %.9g, reference %.9g", w,
          h, radius, nf, k / n, k % n, R[k], N[k]);
  }
  /* exactly symmetric, D^1/2 matches, N D^1/2 1 = D^1/2 1 */
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) {
      CHECK(R[(size_t)i * n + j] == R[(size_t)j * n + i], "N not symmetric at (%d,%d)", i, j);
      s += R[(size_t)i * n + j] * sd[j];
    }
    CHECK(CLOSE(sd[i], sd_ref[i], 1e-9, 0), "D^1/2[%d] = %.12g, reference %.12g", i, sd[i],
          sd_ref[i]);
    CHECK(CLOSE(s, sd[i], 1e-6, 0), "(N D^1/2 1)[%d] = %.9g, D^1/2 = %.9g", i, s, sd[i]);
  }
  free(R);
out:
  spmv_dia_destroy(A);
  free(sd);
  free(N);
  free(f);
  free(sd_ref);
}

/* The contour cue's N is symmetric bit for bit as well (each pair's line is the same pixels seen
 * from either end), which the matrix promises (spmv_dia.symmetric: its C product reads the upper
 * half) and validate checks, on narrow and square images with a random contour map. */
static void contour_case(int w, int h, int radius)
{
  const int n = w * h;
  float *f = malloc((size_t)n * sizeof(*f)), *e = malloc((size_t)n * sizeof(*e));
  spmv_dia *A = NULL;
  for (int i = 0; i < n; i++) {
    f[i] = (float)test_uniform();
    e[i] = test_uniform() < 0.2 ? (float)test_uniform() : 0.0f;
  }
  app_affinity_params p = {radius, 0.3, 4.0, e, 0.1, NULL};
  int status = app_affinity_build(w, h, f, 1, &p, &A, NULL);
  CHECK(status == DSG_OK, "contours %dx%d r=%d: build failed: %s", w, h, radius,
        dsg_error_message());
  if (status == DSG_OK) {
    CHECK(A->symmetric == 1, "contours %dx%d r=%d: N promises symmetry", w, h, radius);
    CHECK(spmv_dia_validate(A) == DSG_OK, "contours %dx%d r=%d: %s", w, h, radius,
          dsg_error_message());
  }
  spmv_dia_destroy(A);
  free(f);
  free(e);
}

int main(void)
{
  static const int shapes[][2] = {{7, 5}, {1, 17}, {17, 1}, {13, 11}, {3, 40}, {40, 3}, {12, 12}};
  static const int radii[] = {1, 2, 3, 5};
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
    for (size_t r = 0; r < sizeof(radii) / sizeof(radii[0]); r++)
      for (int nf = 1; nf <= 3; nf += 2)
        one_case(shapes[s][0], shapes[s][1], radii[r], nf);
  for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++)
    for (size_t r = 0; r < sizeof(radii) / sizeof(radii[0]); r++)
      contour_case(shapes[s][0], shapes[s][1], radii[r]);
  contour_case(61, 47, 5);

  /* the disc: 81 offsets at radius 5, 317 at radius 10, (0,0) included, row-major */
  CHECK(app_disc_size(5) == 81, "disc(5) = %d", app_disc_size(5));
  CHECK(app_disc_size(10) == 317, "disc(10) = %d", app_disc_size(10));
  CHECK(app_disc_size(1) == 5, "disc(1) = %d", app_disc_size(1));
  {
    int dx[81], dy[81], zero = 0;
    app_disc_offsets(5, dx, dy);
    for (int k = 0; k < 81; k++)
      zero += dx[k] == 0 && dy[k] == 0;
    CHECK(zero == 1 && dy[0] == -5 && dx[0] == 0 && dy[80] == 5, "disc order");
  }
  /* the default image shape gives the article's 81 diagonals at offsets dy * width + dx */
  {
    const int w = 481, h = 321;
    float *f = calloc((size_t)w * h, sizeof(*f));
    app_affinity_params p = {5, 0.1, 4.0, NULL, 0, NULL};
    spmv_dia *A = NULL;
    CHECK(app_affinity_build(w, h, f, 1, &p, &A, NULL) == DSG_OK, "481x321 build");
    if (A) {
      CHECK(A->ndiag == 81 && A->offsets[0] == -5 * w && A->offsets[40] == 0 &&
                A->offsets[80] == 5 * w && A->pitch == 154432,
            "481x321 layout: ndiag %d pitch %zu", A->ndiag, A->pitch);
    }
    spmv_dia_destroy(A);
    free(f);
  }
  /* bad parameters are refused with a message */
  {
    float f[4] = {0};
    spmv_dia *A = NULL;
    app_affinity_params bad[] = {{0, 0.1, 4, NULL, 0, NULL},
                                 {5, 0, 4, NULL, 0, NULL},
                                 {5, 0.1, -1, NULL, 0, NULL},
                                 {5, NAN, 4, NULL, 0, NULL},
                                 {5, 0.1, INFINITY, NULL, 0, NULL}};
    for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
      int st = app_affinity_build(2, 2, f, 1, &bad[b], &A, NULL);
      CHECK(st == DSG_ERR_INVALID && A == NULL && strlen(dsg_error_message()) > 10,
            "bad params %zu accepted (%d)", b, st);
    }
    app_affinity_params ok = {1, 0.1, 4, NULL, 0, NULL};
    CHECK(app_affinity_build(1, 1, f, 1, &ok, &A, NULL) == DSG_ERR_INVALID,
          "a 1x1 image has no neighbours");
  }
  /* tiny but valid sigmas are refused at the affinity stage, saying what to change */
  {
    enum { S = 16 };
    float flat[S * S] = {0}, ramp[S * S];
    spmv_dia *A = NULL;
    double *sd = NULL;
    for (int i = 0; i < S * S; i++)
      ramp[i] = (float)i / 255.0f; /* every neighbour differs by at least 1/255 */
    /* sigma^2 must be a normal double: 1e-200^2 underflows to 0, 1e-160^2 is subnormal */
    const double tiny_i[] = {1e-200, 1e-160};
    for (int t = 0; t < 2; t++) {
      app_affinity_params p = {5, tiny_i[t], 4, NULL, 0, NULL};
      int st = app_affinity_build(S, S, flat, 1, &p, &A, &sd);
      CHECK(st == DSG_ERR_INVALID && !A && !sd && strstr(dsg_error_message(), "sigma_i^2"),
            "--sigma-i %g: %d '%s'", tiny_i[t], st, dsg_error_message());
      spmv_dia_destroy(A);
      free(sd);
      A = NULL;
      sd = NULL;
    }
    /* the nearest neighbour's weight exp(-1 / sigma_x^2) at or below float resolution: the
     * message gives the smallest usable value, which works, and a value just below it does not */
    const double tiny_x[] = {0.01, 0.1, 0.249};
    for (int t = 0; t < 3; t++) {
      app_affinity_params p = {5, 0.1, tiny_x[t], NULL, 0, NULL};
      int st = app_affinity_build(S, S, flat, 1, &p, &A, &sd);
      char shown[1024]; /* the message as the command line shows it */
      dsg_error_render(dsg_error_raw(), shown, sizeof(shown), cli_spell, NULL);
      CHECK(st == DSG_ERR_INVALID && !A && strstr(shown, "--sigma-x") &&
                strstr(shown, "smallest usable --sigma-x is 0.2491") &&
                strstr(dsg_error_message(), "smallest usable sigma_x is 0.2491"),
            "--sigma-x %g: %d '%s'", tiny_x[t], st, shown);
      spmv_dia_destroy(A);
      free(sd);
      A = NULL;
      sd = NULL;
    }
    {
      app_affinity_params p = {5, 0.1, 0.2491, NULL, 0, NULL};
      int st = app_affinity_build(S, S, flat, 1, &p, &A, &sd);
      CHECK(st == DSG_OK && A, "the advertised --sigma-x 0.2491: %s", dsg_error_message());
      spmv_dia_destroy(A);
      free(sd);
      A = NULL;
      sd = NULL;
    }
    /* no pixel linked to any neighbour (every feature weight underflows): the message names
     * the smallest --sigma-i that links a pair, and that one builds */
    app_affinity_params p = {5, 1e-4, 4, NULL, 0, NULL};
    int st = app_affinity_build(S, S, ramp, 1, &p, &A, &sd);
    const char *msg = dsg_error_message(), *at = strstr(msg, "at least ");
    CHECK(st == DSG_ERR_INVALID && !A && !sd && strstr(msg, "no pixel has a neighbour") && at,
          "ramp with --sigma-i 1e-4: %d '%s'", st, msg);
    spmv_dia_destroy(A);
    free(sd);
    A = NULL;
    sd = NULL;
    if (at) {
      p.sigma_i = atof(at + strlen("at least "));
      st = app_affinity_build(S, S, ramp, 1, &p, &A, &sd);
      CHECK(st == DSG_OK && p.sigma_i > 1e-4 && p.sigma_i < 1e-2, "the advertised --sigma-i %g: %s",
            p.sigma_i, dsg_error_message());
      int edges = 0;
      for (int d = 0; A && d < A->ndiag; d++)
        for (int i = 0; A->offsets[d] != 0 && i < S * S; i++)
          edges += A->values[(size_t)d * A->pitch + i] > APP_COMPONENT_THRESHOLD;
      CHECK(edges > 0, "the advertised --sigma-i %g links no pair", p.sigma_i);
      spmv_dia_destroy(A);
      free(sd);
    }
  }
  return check_report("test_affinity");
}
