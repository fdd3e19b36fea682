/* diaseg's Lanczos and chfsi solvers against ARPACK and against themselves across backends:
 *  - on image affinities its eigenvalues equal ARPACK's to 1e-5, its residuals are within tol and
 *    its eigenvectors orthonormal to 1e-5, on the C path and on the OpenCL device (every kernel),
 *    fused and unfused;
 *  - the OpenCL basis operations equal the C ones step by step (coefficients to 1e-5), and its
 *    Ritz vectors the C ones also when they come to the host in pieces;
 *  - clustered eigenvalues near 1 (a smooth image) with nev close to ncv converge, or stop at the
 *    iteration limit with only converged pairs: never garbage.
 * The device: $DIASEG_CL_DEVICE, else the first OpenCL device (PoCL in CI). */
#include "diaseg_internal.h"
#include "io.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

#ifndef TEST_DATA_DIR
#define TEST_DATA_DIR "data"
#endif

static const char *device_spec(void)
{
  const char *env = getenv("DIASEG_CL_DEVICE");
  return env && *env ? env : "0";
}

typedef struct problem {
  spmv_dia *N;
  double *sd;
  app_components comps;
} problem;

static void problem_make(problem *p, const dsg_image *src, int w, int h, const app_cue *feat)
{
  dsg_image img;
  float *f = NULL;
  int nf;
  app_affinity_params ap = {5, 0.1, 4.0, NULL, 0, NULL};
  memset(p, 0, sizeof(*p));
  dsg_image_resize(src, w, h, &img);
  app_features(&img, feat, &f, &nf);
  CHECK(app_affinity_build(w, h, f, nf, &ap, &p->N, &p->sd) == DSG_OK, "affinity");
  CHECK(app_components_find(p->N, p->sd, &p->comps) == DSG_OK, "components");
  free(f);
  dsg_image_free(&img);
}

static void problem_free(problem *p)
{
  spmv_dia_destroy(p->N);
  free(p->sd);
  app_components_free(&p->comps);
}

static void options(eig_options *o, const problem *p, int nev, double tol)
{
  eig_options_init(o);
  o->nev = nev;
  o->tol = tol;
  app_components_to_options(&p->comps, o);
}

static double orthogonality(const eig_result *r)
{
  double worst = 0;
  for (int a = 0; a < r->nconv; a++)
    for (int b = 0; b <= a; b++) {
      double dot = 0;
      for (int i = 0; i < r->n; i++)
        dot += (double)r->vectors[(size_t)a * r->n + i] * r->vectors[(size_t)b * r->n + i];
      worst = fmax(worst, fabs(dot - (a == b)));
    }
  return worst;
}

typedef int (*solver_fn)(spmv_matvec *, const eig_options *, eig_result *);

/* A diaseg solver (Lanczos or chfsi) on mv against the ARPACK reference ref. */
static void check_solver(const char *what, solver_fn solve, const char *name, spmv_matvec *mv,
                         const eig_options *o, const eig_result *ref)
{
  eig_result r;
  int status = solve(mv, o, &r);
  CHECK(status == DSG_OK && r.nconv == o->nev, "%s: status %d, %d pairs: %s", what, status, r.nconv,
        dsg_error_message());
  for (int k = 0; k < r.nconv && k < ref->nconv; k++) {
    CHECK(fabs(r.values[k] - ref->values[k]) <= 1e-5, "%s: lambda_%d = %.9f, ARPACK %.9f", what, k,
          r.values[k], ref->values[k]);
    CHECK(r.residuals[k] <= o->tol * fabs(r.values[k]) + 1e-6, "%s: residual_%d = %.3g", what, k,
          r.residuals[k]);
  }
  CHECK(orthogonality(&r) <= 1e-5, "%s: max |U^T U - I| = %.3g", what, orthogonality(&r));
  CHECK(r.basis.steps > 0 && r.basis.matvec_s > 0 && r.basis.orth_s > 0 && r.matvecs > 0,
        "%s: timing steps %ld matvec %g orth %g", what, r.basis.steps, r.basis.matvec_s,
        r.basis.orth_s);
  CHECK(strcmp(r.solver, name) == 0, "solver name %s", r.solver);
  eig_result_free(&r);
}

static void check_against(const char *what, spmv_matvec *mv, const eig_options *o,
                          const eig_result *ref)
{
  check_solver(what, eig_lanczos_solve, "lanczos", mv, o, ref);
}

/* The OpenCL basis against the C basis: same start vector, a few steps, same coefficients. */
/* Reorthogonalisation under cancellation: a vector within 1e-6 of V[:, 0] must come out
 * orthogonal to it after normalisation. One classical Gram-Schmidt pass leaves about 1e-3 of
 * V[:, 0] in it (a float column has unit norm only to ~1e-9); two passes leave under 1e-5. */
static void near_parallel(spmv_matvec *mv, const char *what)
{
  const int n = spmv_matvec_rows(mv);
  spmv_basis *b = NULL;
  float *x = malloc((size_t)n * sizeof(*x)), *cols = malloc((size_t)2 * n * sizeof(*cols));
  double norm = 0, Y[4] = {1, 0, 0, 1}, dot = 0;
  CHECK(spmv_basis_create(&b, mv, 4, NULL, 1) == DSG_OK, "%s: basis", what);
  if (!b)
    goto out;
  for (int i = 0; i < n; i++)
    x[i] = (float)(test_uniform() - 0.5);
  CHECK(spmv_basis_set(b, 0, x, &norm) == DSG_OK, "%s: set 0", what);
  for (int i = 0; i < n; i++)
    x[i] = (float)((double)x[i] / norm + 1e-6 * (test_uniform() - 0.5) / sqrt((double)n));
  CHECK(spmv_basis_set(b, 1, x, &norm) == DSG_OK && norm > 0 && norm < 1e-5, "%s: set 1 (norm %g)",
        what, norm);
  CHECK(spmv_basis_ritz(b, Y, 2, 2, 2, cols) == DSG_OK, "%s: read columns", what);
  for (int i = 0; i < n; i++)
    dot += (double)cols[i] * cols[n + i];
  CHECK(fabs(dot) < 1e-5,
        "%s: a near-parallel vector keeps %.3g of V[:, 0] after "
        "reorthogonalisation",
        what, fabs(dot));
out:
  spmv_basis_destroy(b);
  free(x);
  free(cols);
}

/* Ritz vectors longer than the OpenCL basis's pinned staging buffer (2^21 floats) come to the
 * host in pieces: two columns of 2^21 + 4099 rows, combined by Y, equal the C basis's. */
static void ritz_in_pieces(void)
{
  const int n = (1 << 21) + 4099;
  spmv_dia *A = test_random_dia(n, 3);
  spmv_matvec *cpu = NULL, *cl = NULL;
  spmv_basis *bc = NULL, *bg = NULL;
  spmv_cl_options co;
  float *x = malloc((size_t)n * sizeof(*x)), *uc = malloc((size_t)2 * n * sizeof(*uc)),
        *ug = malloc((size_t)2 * n * sizeof(*ug));
  double Y[4] = {0.8, 0.6, -0.6, 0.8}, norm = 0, worst = 0;
  spmv_cl_options_init(&co);
  co.device = device_spec();
  CHECK(A && x && uc && ug && spmv_matvec_create_cpu(&cpu, A) == DSG_OK &&
            spmv_matvec_create_opencl(&cl, A, &co) == DSG_OK &&
            spmv_basis_create(&bc, cpu, 2, NULL, 1) == DSG_OK &&
            spmv_basis_create(&bg, cl, 2, NULL, 1) == DSG_OK,
        "pieces: set-up: %s", dsg_error_message());
  if (!bc || !bg)
    goto out;
  for (int col = 0; col < 2; col++) {
    for (int i = 0; i < n; i++)
      x[i] = (float)(test_uniform() - 0.5);
    CHECK(spmv_basis_set(bc, col, x, &norm) == DSG_OK &&
              spmv_basis_set(bg, col, x, &norm) == DSG_OK,
          "pieces: set %d", col);
  }
  CHECK(spmv_basis_ritz(bc, Y, 2, 2, 2, uc) == DSG_OK &&
            spmv_basis_ritz(bg, Y, 2, 2, 2, ug) == DSG_OK,
        "pieces: ritz: %s", dsg_error_message());
  for (size_t i = 0; i < (size_t)2 * n; i++)
    worst = fmax(worst, fabs((double)uc[i] - ug[i]));
  CHECK(worst < 1e-6, "pieces: Ritz vectors of %d rows differ by %.3g", n, worst);
out:
  spmv_basis_destroy(bc);
  spmv_basis_destroy(bg);
  spmv_matvec_destroy(cpu);
  spmv_matvec_destroy(cl);
  spmv_dia_destroy(A);
  free(x);
  free(uc);
  free(ug);
}

static void basis_twins(const problem *p)
{
  const int n = p->N->rows, m = 12;
  spmv_matvec *cpu = NULL, *cl = NULL;
  spmv_basis *bc = NULL, *bg = NULL;
  spmv_cl_options co;
  spmv_known known = {p->comps.count, p->comps.label, p->comps.values};
  float *x = malloc((size_t)n * sizeof(*x));
  double *cc = malloc((size_t)m * (m + 2) * sizeof(double)),
         *cg = malloc((size_t)m * (m + 2) * sizeof(double));
  double nc = 0, ng = 0;
  spmv_cl_options_init(&co);
  co.device = device_spec();
  co.kernel = SPMV_KERNEL_VECTOR;
  CHECK(spmv_matvec_create_cpu(&cpu, p->N) == DSG_OK, "cpu matvec");
  CHECK(spmv_matvec_create_opencl(&cl, p->N, &co) == DSG_OK, "cl matvec: %s", dsg_error_message());
  if (!cl)
    goto out;
  CHECK(spmv_basis_create(&bc, cpu, m, &known, 1) == DSG_OK, "cpu basis");
  CHECK(spmv_basis_create(&bg, cl, m, &known, 1) == DSG_OK, "cl basis: %s", dsg_error_message());
  if (!bc || !bg)
    goto out;
  near_parallel(cpu, "C basis");
  near_parallel(cl, "OpenCL basis");
  for (int i = 0; i < n; i++)
    x[i] = (float)(test_uniform() - 0.5);
  CHECK(spmv_basis_set(bc, 0, x, &nc) == DSG_OK && spmv_basis_set(bg, 0, x, &ng) == DSG_OK, "set");
  CHECK(CLOSE(nc, ng, 1e-6, 0), "start norms %.9g / %.9g", nc, ng);
  for (int j = 0; j < m; j++) {
    CHECK(spmv_basis_expand(bc, j) == DSG_OK, "cpu expand %d", j);
    CHECK(spmv_basis_expand(bg, j) == DSG_OK, "cl expand %d: %s", j, dsg_error_message());
  }
  CHECK(spmv_basis_coefficients(bc, 0, m, cc) == DSG_OK, "cpu coefficients");
  CHECK(spmv_basis_coefficients(bg, 0, m, cg) == DSG_OK, "cl coefficients");
  for (int j = 0; j < m; j++) {
    const double *a = cc + (size_t)j * (m + 2), *g = cg + (size_t)j * (m + 2);
    CHECK(CLOSE(g[j], a[j], 1e-5, 1e-6), "alpha_%d: OpenCL %.9f, C %.9f", j, g[j], a[j]);
    CHECK(CLOSE(g[j + 1], a[j + 1], 1e-4, 1e-6), "beta_%d: OpenCL %.9g, C %.9g", j, g[j + 1],
          a[j + 1]);
    for (int i = 0; i + 1 < j;
         i++) /* full reorthogonalisation: everything but the recurrence ~ 0 */
      CHECK(fabs(g[i]) < 1e-4 && fabs(a[i]) < 1e-4, "step %d: h_%d = %.3g / %.3g", j, i, g[i],
            a[i]);
  }
  {
    /* a restart and the Ritz vectors: rotate by a fixed orthogonal-ish Y */
    double Y[12 * 3];
    float *uc = malloc((size_t)3 * n * sizeof(float)), *ug = malloc((size_t)3 * n * sizeof(float));
    for (int i = 0; i < 12 * 3; i++)
      Y[i] = (i % 12 == i / 12) ? 1.0 : 0.01 * (i % 7);
    CHECK(spmv_basis_ritz(bc, Y, 12, 12, 3, uc) == DSG_OK &&
              spmv_basis_ritz(bg, Y, 12, 12, 3, ug) == DSG_OK,
          "ritz");
    double worst = 0;
    for (size_t i = 0; i < (size_t)3 * n; i++)
      worst = fmax(worst, fabs((double)uc[i] - ug[i]));
    CHECK(worst < 1e-4, "Ritz vectors differ by %.3g", worst);
    /* the last step again, on both: on the OpenCL queue its kernels are still running when the
     * restart matrix's upload is queued behind them */
    CHECK(spmv_basis_expand(bc, m - 1) == DSG_OK && spmv_basis_expand(bg, m - 1) == DSG_OK,
          "expand again");
    CHECK(spmv_basis_restart(bc, Y, 12, 12, 3) == DSG_OK &&
              spmv_basis_restart(bg, Y, 12, 12, 3) == DSG_OK,
          "restart");
    /* the caller's Y is theirs again once restart returns (the OpenCL upload is queued from a
     * copy): scribble on it, then the restarted bases' three columns still agree */
    for (int i = 0; i < 12 * 3; i++)
      Y[i] = 1e30;
    for (int i = 0; i < 3 * 3; i++)
      Y[i] = i % 3 == i / 3;
    CHECK(spmv_basis_ritz(bc, Y, 3, 3, 3, uc) == DSG_OK &&
              spmv_basis_ritz(bg, Y, 3, 3, 3, ug) == DSG_OK,
          "restarted columns");
    worst = 0;
    for (size_t i = 0; i < (size_t)3 * n; i++)
      worst = fmax(worst, fabs((double)uc[i] - ug[i]));
    CHECK(worst < 1e-4, "restarted columns differ by %.3g", worst);
    free(uc);
    free(ug);
  }
  spmv_basis_timing t = spmv_basis_get_timing(bg);
  /* m + 1 steps (the last one twice); a step is 6 launches: the product, two Gram-Schmidt
   * passes of 2, the scaling; the start vector and the restart add a few */
  const int steps = m + 1;
  CHECK(t.steps == steps && t.launches >= 6 * steps && t.launches <= 6 * steps + 12 &&
            t.matvec_s > 0 && t.orth_s > 0,
        "cl timing %ld %ld", t.steps, t.launches);
out:
  spmv_basis_destroy(bc);
  spmv_basis_destroy(bg);
  spmv_matvec_destroy(cpu);
  spmv_matvec_destroy(cl);
  free(x);
  free(cc);
  free(cg);
}

/* The C basis projects the known vectors out of every column it makes, whether it holds them as
 * dense columns (up to 8) or through their labels (more): count vectors on interleaved rows,
 * each of unit norm, and every column's dot with each of them ~ 0. */
static void known_projection(spmv_matvec *cpu, int count)
{
  const int n = spmv_matvec_rows(cpu), m = 10;
  int *label = malloc((size_t)n * sizeof(*label));
  float *value = malloc((size_t)n * sizeof(*value)), *x = malloc((size_t)n * sizeof(*x));
  float *V = malloc((size_t)m * n * sizeof(*V));
  double Y[10 * 10], worst = 0.0, norm = 0.0;
  spmv_basis *b = NULL;
  for (int i = 0; i < n; i++) {
    const int c = i % count, rows = n / count + (c < n % count);
    label[i] = c;
    value[i] = (float)(1.0 / sqrt((double)rows));
    x[i] = (float)(test_uniform() - 0.5);
  }
  spmv_known known = {count, label, value};
  CHECK(spmv_basis_create(&b, cpu, m, &known, 1) == DSG_OK, "known %d: basis", count);
  if (b && spmv_basis_set(b, 0, x, &norm) == DSG_OK) {
    for (int j = 0; j + 1 < m; j++)
      CHECK(spmv_basis_expand(b, j) == DSG_OK, "known %d: expand %d", count, j);
    for (int i = 0; i < m * m; i++)
      Y[i] = i % m == i / m;
    CHECK(spmv_basis_ritz(b, Y, m, m, m, V) == DSG_OK, "known %d: columns", count);
    for (int col = 0; col < m; col++)
      for (int c = 0; c < count; c++) {
        double dot = 0.0;
        for (int i = c; i < n; i += count)
          dot += (double)value[i] * V[(size_t)col * n + i];
        worst = fmax(worst, fabs(dot));
      }
    CHECK(worst < 1e-5, "known %d: a column's dot with a known vector is %.3g", count, worst);
  }
  spmv_basis_destroy(b);
  free(label);
  free(value);
  free(x);
  free(V);
}

int main(void)
{
  dsg_image img;
  problem p;
  eig_options o;
  eig_result ref;
  spmv_matvec *cpu = NULL;

  CHECK(app_image_load(TEST_DATA_DIR "/coffee.png", APP_DEFAULT_MAX_PIXELS, &img) == DSG_OK,
        "load");

  /* intensity, 120 x 80, and colour (specks), 97 x 65 */
  for (int pass = 0; pass < 2; pass++) {
    problem_make(&p, &img, pass ? 97 : 120, pass ? 65 : 80,
                 pass ? test_cue("color") : test_cue("intensity"));
    spmv_matvec_create_cpu(&cpu, p.N);
    options(&o, &p, 8, 1e-6);
    CHECK(eig_arpack_solve(cpu, &o, &ref) == DSG_OK, "ARPACK: %s", dsg_error_message());
    check_against(pass ? "color, C path" : "intensity, C path", cpu, &o, &ref);
    o.lanczos_unfused = 1;
    check_against("unfused, C path", cpu, &o, &ref);
    o.lanczos_unfused = 0;
    /* chfsi on the C path: test_eigensolver (here, after the OpenCL runs, LeakSanitizer's exit
     * check crashed in its own tracer thread under the sanitizer build; every check passed) */
    for (int k = SPMV_KERNEL_NAIVE; k < SPMV_KERNEL_COUNT; k++) {
      spmv_cl_options co;
      spmv_matvec *cl = NULL;
      char what[96];
      spmv_cl_options_init(&co);
      co.device = device_spec();
      co.kernel = (spmv_kernel)k;
      CHECK(spmv_matvec_create_opencl(&cl, p.N, &co) == DSG_OK, "cl: %s", dsg_error_message());
      if (!cl)
        continue;
      snprintf(what, sizeof(what), "%s, OpenCL %s", pass ? "color" : "intensity",
               spmv_kernel_name(k));
      check_against(what, cl, &o, &ref);
      snprintf(what, sizeof(what), "chfsi, %s, OpenCL %s", pass ? "color" : "intensity",
               spmv_kernel_name(k));
      check_solver(what, eig_chfsi_solve, "chfsi", cl, &o, &ref);
      if (k == SPMV_KERNEL_IMAGE) {
        o.lanczos_unfused = 1;
        check_against("unfused, OpenCL image", cl, &o, &ref);
        o.lanczos_unfused = 0;
      }
      spmv_matvec_destroy(cl);
    }
    if (pass == 0)
      basis_twins(&p);
    eig_result_free(&ref);
    spmv_matvec_destroy(cpu);
    problem_free(&p);
  }

  ritz_in_pieces();

  /* clustered eigenvalues near 1 (a smooth image: coffee squeezed to 64 x 48, intensity), nev
   * close to ncv: converge, or stop at the limit with converged pairs only */
  problem_make(&p, &img, 64, 48, test_cue("intensity"));
  spmv_matvec_create_cpu(&cpu, p.N);
  known_projection(cpu, 3);  /* dense columns */
  known_projection(cpu, 12); /* through the labels */
  {
    static const struct {
      int nev, ncv, max_iter;
    } cases[] = {{30, 32, 1000}, {31, 32, 1000}, {30, 32, 2}};
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
      eig_result r;
      options(&o, &p, cases[c].nev, 1e-6);
      o.ncv = cases[c].ncv;
      o.max_iter = cases[c].max_iter;
      int status = eig_lanczos_solve(cpu, &o, &r);
      CHECK(status == DSG_OK || status == DSG_ERR_NOCONV, "clustered nev %d ncv %d: status %d %s",
            cases[c].nev, cases[c].ncv, status, dsg_error_message());
      CHECK((status == DSG_OK) == (r.nconv == cases[c].nev && r.converged), "flag vs count");
      for (int k = 0; k < r.nconv; k++) {
        CHECK(isfinite(r.values[k]) && r.values[k] <= 1 + 1e-6 && r.values[k] > -1 - 1e-6,
              "clustered: lambda_%d = %g", k, r.values[k]);
        CHECK(r.residuals[k] <= 1e-6 * fabs(r.values[k]) + 1e-6,
              "clustered nev %d: pair %d "
              "residual %.3g (%s)",
              cases[c].nev, k, r.residuals[k], status == DSG_OK ? "converged" : "partial");
      }
      CHECK(orthogonality(&r) <= 1e-5, "clustered: orthogonality %.3g", orthogonality(&r));
      if (cases[c].max_iter == 2)
        CHECK(status == DSG_ERR_NOCONV && r.nconv < cases[c].nev,
              "2 restarts should not suffice "
              "(%d pairs)",
              r.nconv);
      eig_result_free(&r);
    }
  }
  spmv_matvec_destroy(cpu);
  problem_free(&p);
  dsg_image_free(&img);
  return check_report("test_lanczos");
}
