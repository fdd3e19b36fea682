/* The public API (diaseg.h) as a caller sees it: defaults, option checks and their messages,
 * dsg_segment on a synthetic image of four regions (both solvers, the C path and, where there is
 * one, an OpenCL device), the report, the affinity alone against the library's own builder,
 * cancellation, and the error messages' parameter marks. */
#include "diaseg_internal.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { W = 96, H = 64 };

/* Four flat regions (background, disc, rectangle, ellipse) with mild noise. */
static void regions(dsg_image *img, int *truth)
{
  static const double level[4] = {0.2, 0.8, 0.5, 0.95};
  unsigned char *px = malloc((size_t)W * H);
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int r = 0;
      if ((x - 30) * (x - 30) + (y - 36) * (y - 36) < 18 * 18)
        r = 1;
      else if (x >= 60 && x < 88 && y >= 8 && y < 30)
        r = 2;
      else if ((x - 72) * (x - 72) * 4 + (y - 50) * (y - 50) * 16 < 40 * 40)
        r = 3;
      truth[y * W + x] = r;
      px[y * W + x] = (unsigned char)((level[r] + 0.05 * (test_uniform() - 0.5)) * 255 + 0.5);
    }
  dsg_image_from_pixels(img, W, H, 1, px);
  free(px);
}

static const char *spell(const char *param, void *data)
{
  (void)data;
  return strcmp(param, "sigma_x") == 0 ? "--sigma-x" : NULL;
}

static void check_segment(const dsg_image *img, const int *truth, const char *matvec,
                          const char *solver, double *lambda1)
{
  dsg_options opt;
  dsg_result *r = NULL;
  int status;
  dsg_options_init(&opt);
  opt.k = 4;
  opt.tol = 1e-5;
  opt.matvec = matvec;
  opt.solver = solver;
  status = dsg_segment(img, &opt, &r);
  CHECK(status == DSG_OK && r, "%s/%s: dsg_segment: %d %s", matvec, solver, status,
        dsg_error_message());
  if (!r)
    return;
  CHECK(dsg_result_width(r) == W && dsg_result_height(r) == H, "%s/%s: size", matvec, solver);
  CHECK(dsg_result_nconv(r) == opt.nev && dsg_result_converged(r), "%s/%s: %d of %d converged",
        matvec, solver, dsg_result_nconv(r), opt.nev);
  for (int i = 0; i < dsg_result_nconv(r); i++) {
    const double lam = dsg_result_eigenvalues(r)[i];
    CHECK(dsg_result_residuals(r)[i] <= 1e-4 * (lam > 0 ? lam : -lam) + 1e-6,
          "%s/%s: pair %d residual %g (lambda %g)", matvec, solver, i, dsg_result_residuals(r)[i],
          lam);
    CHECK(i == 0 || dsg_result_eigenvalues(r)[i - 1] >= lam, "%s/%s: eigenvalues not descending",
          matvec, solver);
  }
  CHECK(CLOSE(dsg_result_eigenvalues(r)[0], 1.0, 0, 1e-5), "%s/%s: lambda_1 = %.8f, not 1", matvec,
        solver, dsg_result_eigenvalues(r)[0]);
  *lambda1 = dsg_result_nconv(r) > 1 ? dsg_result_eigenvalues(r)[1] : 0;
  CHECK(dsg_result_labels(r) != NULL, "%s/%s: no labels", matvec, solver);
  if (dsg_result_labels(r)) {
    const double ari = app_adjusted_rand(truth, dsg_result_labels(r), (size_t)W * H);
    CHECK(ari >= 0.95, "%s/%s: adjusted Rand index %.4f < 0.95", matvec, solver, ari);
    CHECK(dsg_result_labels(r)[0] == 0, "%s/%s: labels not canonical", matvec, solver);
  }
  {
    char *json = NULL;
    size_t len = 0;
    dsg_report_info info = {"segment", "regions", 0, 0, 0, 0, 0, 0, 0, 0};
    CHECK(dsg_result_report(r, &info, &json, &len) == DSG_OK && json && len == strlen(json),
          "%s/%s: report", matvec, solver);
    CHECK(json && strstr(json, "\"converged\": true") && strstr(json, "\"k\": 4") &&
              strstr(json, "\"image\": \"regions\"") && strstr(json, solver),
          "%s/%s: report lacks fields: %.300s", matvec, solver, json ? json : "");
    dsg_free(json);
  }
  dsg_result_destroy(r);
}

int main(void)
{
  dsg_image img;
  dsg_options opt;
  dsg_result *r = NULL;
  static int truth[W * H];
  double lambda_cpu = 0, lambda_other = 0;
  int status;

  /* defaults are the command line's */
  dsg_options_init(&opt);
  CHECK(opt.k == 5 && opt.nev == 8 && opt.radius == 5 && opt.sigma_i == 0.1 && opt.sigma_x == 4.0 &&
            opt.tol == 1e-5 && opt.max_iter == 1000 && strcmp(opt.affinity, "intensity") == 0 &&
            strcmp(opt.solver, "lanczos") == 0 && strcmp(opt.matvec, "auto") == 0,
        "defaults");
  CHECK(dsg_options_check(&opt) == DSG_OK, "defaults rejected: %s", dsg_error_message());
  CHECK(dsg_cue_count() == 2 && strcmp(dsg_cue_name(0), "intensity") == 0 &&
            strcmp(dsg_cue_name(1), "color") == 0 && dsg_cue_name(2) == NULL,
        "cue table");

  /* names are looked up in tables; the messages name the parameter, not a flag */
  {
    static const struct {
      const char *field, *value, *expect;
    } bad[] = {{"affinity", "texture", "affinity 'texture' is not one of intensity, color"},
               {"solver", "qr", "solver 'qr' is not one of lanczos, arpack"},
               {"matvec", "gpu", "matvec 'gpu' is not one of auto, cpu, opencl"},
               {"kernel", "fast", "kernel 'fast'"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      dsg_options o;
      dsg_options_init(&o);
      if (strcmp(bad[i].field, "affinity") == 0)
        o.affinity = bad[i].value;
      else if (strcmp(bad[i].field, "solver") == 0)
        o.solver = bad[i].value;
      else if (strcmp(bad[i].field, "matvec") == 0)
        o.matvec = bad[i].value;
      else
        o.kernel = bad[i].value;
      CHECK(dsg_options_check(&o) == DSG_ERR_INVALID &&
                strstr(dsg_error_message(), bad[i].expect) &&
                !strchr(dsg_error_message(), '\001') && !strstr(dsg_error_message(), "--"),
            "%s '%s': %s", bad[i].field, bad[i].value, dsg_error_message());
    }
    dsg_options_init(&opt);
    opt.k = 9;
    CHECK(dsg_options_check(&opt) == DSG_ERR_INVALID && strstr(dsg_error_message(), "k <= nev"),
          "k 9 > nev 8: %s", dsg_error_message());
  }

  /* issue 16: a tolerance below what float32 vectors can show is refused, naming tol and the
   * smallest one diaseg honours (DSG_MIN_TOL); NaN and values outside (0, 1) too */
  {
    static const double bad[] = {1e-12, 1e-7, 0.999 * DSG_MIN_TOL, 0.0, -1e-3, 1.0, NAN, INFINITY};
    char floor_text[32];
    snprintf(floor_text, sizeof(floor_text), "%g", DSG_MIN_TOL);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      dsg_options o;
      dsg_options_init(&o);
      o.tol = bad[i];
      CHECK(dsg_options_check(&o) == DSG_ERR_INVALID && strstr(dsg_error_message(), "tol ") &&
                strstr(dsg_error_message(), floor_text) && !strstr(dsg_error_message(), "--"),
            "tol %g: %s", bad[i], dsg_error_message());
    }
    dsg_options_init(&opt);
    opt.tol = DSG_MIN_TOL;
    CHECK(DSG_MIN_TOL > 0 && DSG_MIN_TOL < 1e-5 && dsg_options_check(&opt) == DSG_OK,
          "tol DSG_MIN_TOL (%g) refused: %s", DSG_MIN_TOL, dsg_error_message());
  }

  regions(&img, truth);
  /* size checks, before any work */
  dsg_options_init(&opt);
  CHECK(dsg_check_size(&opt, 1, 1) == DSG_ERR_INVALID &&
            strstr(dsg_error_message(), "at least 2 pixels"),
        "1 x 1: %s", dsg_error_message());
  CHECK(dsg_check_size(&opt, 3, 2) == DSG_ERR_INVALID &&
            strstr(dsg_error_message(), "nev 8 is out of range for a 3 x 2 image"),
        "nev >= n: %s", dsg_error_message());
  {
    dsg_image none = {W, H, 1, NULL};
    CHECK(dsg_segment(&none, &opt, &r) == DSG_ERR_INVALID && r == NULL, "NULL pixels accepted");
  }

  /* the parameter marks: shown as names, or spelled by the front end */
  opt.sigma_x = 0.01;
  opt.matvec = "cpu";
  status = dsg_segment(&img, &opt, &r);
  CHECK(status == DSG_ERR_INVALID && r == NULL, "sigma_x 0.01: %d", status);
  CHECK(strstr(dsg_error_message(), "smallest usable sigma_x is") &&
            !strchr(dsg_error_message(), '\001'),
        "plain message: %s", dsg_error_message());
  {
    char buf[1024];
    dsg_error_render(dsg_error_raw(), buf, sizeof(buf), spell, NULL);
    CHECK(strstr(buf, "smallest usable --sigma-x is") && !strchr(buf, '\002'),
          "rendered message: %s", buf);
    dsg_error_render("a \001nev\002 b", buf, 6, NULL, NULL);
    CHECK(strcmp(buf, "a nev") == 0, "render into a short buffer: '%s'", buf);
  }

  /* segmentation, the C path with both solvers, then an OpenCL device if there is one */
  check_segment(&img, truth, "cpu", "lanczos", &lambda_cpu);
  check_segment(&img, truth, "cpu", "arpack", &lambda_other);
  CHECK(CLOSE(lambda_other, lambda_cpu, 0, 1e-4), "lambda_2: arpack %.7f, lanczos %.7f",
        lambda_other, lambda_cpu);
  {
    dsg_device *list = NULL;
    int count = 0;
    if (dsg_devices(&list, &count) == DSG_OK && count > 0) {
      check_segment(&img, truth, "opencl", "lanczos", &lambda_other);
      CHECK(CLOSE(lambda_other, lambda_cpu, 0, 1e-4), "lambda_2: opencl %.7f, cpu %.7f",
            lambda_other, lambda_cpu);
    } else {
      printf("no OpenCL device: the OpenCL segmentation is skipped\n");
    }
    dsg_free(list);
  }

  /* issue 16: the tolerance floor holds in dsg_segment and in dsg_problem_solve (bench solves a
   * problem with other options), and at DSG_MIN_TOL every returned pair meets it (no speck
   * handling: the solver's own pairs) with both solvers, on the C path and an OpenCL device */
  {
    dsg_problem *p = NULL;
    dsg_options_init(&opt);
    opt.matvec = "cpu";
    opt.tol = 1e-12;
    r = NULL;
    CHECK(dsg_segment(&img, &opt, &r) == DSG_ERR_INVALID && r == NULL &&
              strstr(dsg_error_message(), "tol 1e-12"),
          "dsg_segment, tol 1e-12: %s", dsg_error_message());
    opt.tol = 1e-5;
    CHECK(dsg_problem_create(&img, &opt, &p) == DSG_OK, "problem: %s", dsg_error_message());
    opt.tol = 1e-12;
    CHECK(p && dsg_problem_solve(p, &opt, &r) == DSG_ERR_INVALID && r == NULL &&
              strstr(dsg_error_message(), "tol 1e-12"),
          "dsg_problem_solve, tol 1e-12: %s", dsg_error_message());
    dsg_problem_destroy(p);
    dsg_device *list = NULL;
    int count = 0;
    const int have_cl = dsg_devices(&list, &count) == DSG_OK && count > 0;
    dsg_free(list);
    static const char *const runs[][2] = {
        {"cpu", "lanczos"}, {"cpu", "arpack"}, {"opencl", "lanczos"}, {"opencl", "arpack"}};
    for (int i = 0; i < (have_cl ? 4 : 2); i++) {
      dsg_options_init(&opt);
      opt.k = 0;
      opt.nev = 8;
      opt.keep_specks = 1;
      opt.tol = DSG_MIN_TOL;
      opt.matvec = runs[i][0];
      opt.solver = runs[i][1];
      r = NULL;
      status = dsg_segment(&img, &opt, &r);
      CHECK(status == DSG_OK && r, "%s/%s at tol %g: %s", runs[i][0], runs[i][1], DSG_MIN_TOL,
            dsg_error_message());
      for (int k = 0; r && k < dsg_result_nconv(r); k++) {
        const double lam = dsg_result_eigenvalues(r)[k], res = dsg_result_residuals(r)[k];
        /* 1% for the float32 rounding the measurement itself adds (diaseg.h, DSG_MIN_TOL) */
        CHECK(res <= 1.01 * DSG_MIN_TOL * (lam > 0 ? lam : -lam),
              "%s/%s at tol %g: pair %d residual %g", runs[i][0], runs[i][1], DSG_MIN_TOL, k,
              res / (lam > 0 ? lam : -lam));
      }
      dsg_result_destroy(r);
    }
    r = NULL;
  }

  /* k = 0: eigenpairs only */
  dsg_options_init(&opt);
  opt.k = 0;
  opt.matvec = "cpu";
  opt.nev = 4;
  CHECK(dsg_segment(&img, &opt, &r) == DSG_OK && r && dsg_result_labels(r) == NULL &&
            dsg_result_nconv(r) == 4,
        "k 0: %s", dsg_error_message());
  dsg_result_destroy(r);

  /* a cancel request stops the run */
  {
    volatile sig_atomic_t stop = 15;
    opt.cancel = &stop;
    r = NULL;
    CHECK(dsg_segment(&img, &opt, &r) == DSG_ERR_INTERRUPTED && r == NULL &&
              strstr(dsg_error_message(), "signal 15"),
          "cancel: %s", dsg_error_message());
    opt.cancel = NULL;
  }

  /* the affinity alone is the library's builder's matrix */
  {
    dsg_matrix *m = NULL;
    spmv_dia *N = NULL;
    double *sd = NULL;
    float *f = NULL;
    int nf = 0;
    app_affinity_params ap = {5, 0.1, 4.0};
    dsg_options_init(&opt);
    CHECK(dsg_affinity(&img, &opt, &m) == DSG_OK, "dsg_affinity: %s", dsg_error_message());
    app_features(&img, test_cue("intensity"), &f, &nf);
    CHECK(app_affinity_build(W, H, f, nf, &ap, &N, &sd) == DSG_OK, "builder");
    if (m && N) {
      CHECK(dsg_matrix_rows(m) == W * H && dsg_matrix_ndiag(m) == 81 &&
                dsg_matrix_pitch(m) == N->pitch,
            "matrix shape");
      CHECK(memcmp(dsg_matrix_offsets(m), N->offsets, 81 * sizeof(int)) == 0 &&
                memcmp(dsg_matrix_values(m), N->values, spmv_dia_bytes(N)) == 0 &&
                memcmp(dsg_matrix_sqrt_degree(m), sd, (size_t)W * H * sizeof(double)) == 0,
            "the matrix differs from app_affinity_build's");
    }
    dsg_matrix_destroy(m);
    spmv_dia_destroy(N);
    free(sd);
    free(f);
  }

  dsg_image_free(&img);
  return check_report("test_api");
}
