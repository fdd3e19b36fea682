/* The ARPACK-ng driver: dsaupd/dseupd through reverse communication, the product through
 * spmv_matvec (float), ARPACK's vectors in double. */
#include "eigensolver.h"
#include "eigensolver_internal.h"

#include <arpack.h>
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ARPACK's Fortran code keeps SAVEd state: one solve at a time in this process. */
static pthread_mutex_t arpack_lock = PTHREAD_MUTEX_INITIALIZER;
/* ARPACK's orthogonalisation runs on whatever libblas.so.3 the system provides. OpenBLAS's
 * pthread build keeps its own pool of busy-waiting threads, one per core, which fights the
 * OpenMP threads of the products for the same cores: on the GPU machine a 120 x 80 solve took
 * 35 ms per product. Below 2^20 rows its calls last microseconds and threads buy nothing, so
 * that build runs single-threaded there; above, its calls last long enough for its threads to
 * pay. Its OpenMP build shares the OpenMP pool and is left alone. Called under arpack_lock. */
#define EIG_BLAS_THREADED_ROWS (1 << 20)

static void tame_blas_threads(int n)
{
  static int all = -1;
  int (*get_parallel)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_parallel");
  void (*set_threads)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
  int (*get_threads)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
  if (!get_parallel || !set_threads || !get_threads || get_parallel() != 1) /* 1: pthreads */
    return;
  if (all < 0)
    all = get_threads();
  set_threads(n < EIG_BLAS_THREADED_ROWS ? 1 : all);
}

static const char *dsaupd_message(int info)
{
  switch (info) {
  case -1: return "N must be positive";
  case -2: return "NEV must be positive";
  case -3: return "NCV must satisfy NEV < NCV <= N";
  case -4: return "the iteration limit must be positive";
  case -5: return "WHICH is invalid";
  case -6: return "BMAT is invalid";
  case -7: return "the work array is too small";
  case -8: return "LAPACK's tridiagonal eigensolver (dsteqr) failed";
  case -9: return "the start vector is zero";
  case -10: return "the mode is invalid";
  case -11: return "mode and BMAT are incompatible";
  case -12: return "ISHIFT is invalid";
  case -13: return "NEV and WHICH=BE are incompatible";
  case -14: return "no eigenvalue reached the requested accuracy";
  case -15: return "HOWMNY is invalid";
  case -16: return "HOWMNY=S is not implemented";
  case -17: return "dseupd and dsaupd disagree on the number of converged Ritz values";
  case -9999: return "the Lanczos factorization could not be built";
  case 3: return "no shifts could be applied during a restart (try a larger --ncv)";
  default: return "unknown ARPACK error";
  }
}

void eig_options_init(eig_options *opt)
{
  memset(opt, 0, sizeof(*opt));
  opt->nev = 8;
  opt->ncv = 0;
  opt->tol = 1e-5;
  opt->max_iter = 1000;
}

void eig_result_free(eig_result *res)
{
  free(res->values);
  free(res->vectors);
  free(res->residuals);
  memset(res, 0, sizeof(*res));
}

int eig_check_options(const eig_options *opt, int n, int *ncv_out)
{
  int ncv = opt->ncv;
  if (n < 2)
    return dsg_error_set(DSG_ERR_INVALID, "the operator has order %d; eigenpairs need n >= 2", n);
  if (opt->nev < 1 || opt->nev >= n)
    return dsg_error_set(DSG_ERR_INVALID,
                         "--nev %d is out of range: it must satisfy 1 <= nev < n "
                         "= %d",
                         opt->nev, n);
  if (!(opt->tol > 0.0) || !isfinite(opt->tol) || opt->tol >= 1.0)
    return dsg_error_set(DSG_ERR_INVALID, "--tol %g is out of range: it must be in (0, 1)",
                         opt->tol);
  if (opt->max_iter < 1)
    return dsg_error_set(DSG_ERR_INVALID, "--max-iter %d is out of range: it must be >= 1",
                         opt->max_iter);
  if (opt->known_count < 0 || (opt->known_count > 0 && (!opt->known_label || !opt->known_values)))
    return dsg_error_set(DSG_ERR_INVALID, "known eigenvectors: %d given without labels or values",
                         opt->known_count);
  if (opt->known_keep < 0 || opt->known_keep > opt->known_count)
    return dsg_error_set(DSG_ERR_INVALID, "known eigenvectors: keep %d of %d", opt->known_keep,
                         opt->known_count);
  for (int i = 0; opt->known_count > 0 && i < n; i++)
    if (opt->known_label[i] < -1 || opt->known_label[i] >= opt->known_count)
      return dsg_error_set(DSG_ERR_INVALID,
                           "known eigenvectors: row %d has label %d outside "
                           "[-1, %d)",
                           i, opt->known_label[i], opt->known_count);
  if (ncv == 0) {
    ncv = 2 * opt->nev + 1 > 32 ? 2 * opt->nev + 1 : 32;
    if (ncv > n)
      ncv = n;
  }
  if (ncv <= opt->nev || ncv > n)
    return dsg_error_set(DSG_ERR_INVALID,
                         "--ncv %d is out of range: it must satisfy nev = %d < "
                         "ncv <= n = %d",
                         ncv, opt->nev, n);
  *ncv_out = ncv;
  return DSG_OK;
}

void eig_start_vector(double *r, int n)
{
  uint64_t s = EIG_START_SEED;
  for (int i = 0; i < n; i++) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    r[i] = (double)(z >> 11) * 0x1.0p-53 - 0.5;
  }
}

void eig_normalize_sign(float *u, int n)
{
  double ss = 0.0, amax = -1.0;
  int imax = 0;
  for (int i = 0; i < n; i++) {
    double a = fabs((double)u[i]);
    ss += a * a;
    if (a > amax) {
      amax = a;
      imax = i;
    }
  }
  if (ss == 0.0)
    return;
  float scale = (float)(1.0 / sqrt(ss));
  if (u[imax] < 0.0f)
    scale = -scale;
  for (int i = 0; i < n; i++)
    u[i] *= scale;
}

int eig_residuals(spmv_matvec *mv, eig_result *res)
{
  const int n = res->n;
  float *y = malloc((size_t)n * sizeof(*y));
  int status = DSG_OK;
  if (!y)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the residual vector (%d floats)", n);
  for (int k = 0; k < res->nconv; k++) {
    const float *u = res->vectors + (size_t)k * (size_t)n;
    double lambda = res->values[k], ss = 0.0;
    status = spmv_matvec_apply(mv, u, y);
    if (status != DSG_OK)
      break;
    for (int i = 0; i < n; i++) {
      double r = (double)y[i] - lambda * (double)u[i];
      ss += r * r;
    }
    res->residuals[k] = sqrt(ss);
  }
  free(y);
  return status;
}

int eig_result_alloc(eig_result *res, int n, int nev)
{
  res->values = calloc((size_t)nev, sizeof(*res->values));
  res->residuals = calloc((size_t)nev, sizeof(*res->residuals));
  res->vectors = malloc((size_t)nev * (size_t)n * sizeof(*res->vectors));
  if (!res->values || !res->residuals || !res->vectors)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d eigenvectors of %d floats", nev, n);
  return DSG_OK;
}

/* Rows split into a fixed number of chunks: per-chunk partial dots combined in chunk order keep
 * the projection independent of the thread count. */
#define EIG_PROJ_CHUNKS 64
#define EIG_PROJ_MAX_KNOWN 64 /* above this, one sequential pass (many tiny components) */

void eig_project_known(const eig_options *opt, int n, double *x, double *work)
{
  const int c = opt->known_count;
  const int *label = opt->known_label;
  const float *val = opt->known_values;
  if (c <= 0)
    return;
  if (c > EIG_PROJ_MAX_KNOWN) {
    for (int k = 0; k < c; k++)
      work[k] = 0.0;
    for (int i = 0; i < n; i++)
      if (label[i] >= 0)
        work[label[i]] += (double)val[i] * x[i];
  } else {
    double part[EIG_PROJ_CHUNKS][EIG_PROJ_MAX_KNOWN];
#pragma omp parallel for schedule(static)
    for (int b = 0; b < EIG_PROJ_CHUNKS; b++) {
      const int lo = (int)((long long)n * b / EIG_PROJ_CHUNKS);
      const int hi = (int)((long long)n * (b + 1) / EIG_PROJ_CHUNKS);
      double *p = part[b];
      for (int k = 0; k < c; k++)
        p[k] = 0.0;
      if (c == 1) {
        double s = 0.0;
        for (int i = lo; i < hi; i++)
          s += label[i] == 0 ? (double)val[i] * x[i] : 0.0;
        p[0] = s;
      } else {
        for (int i = lo; i < hi; i++)
          if (label[i] >= 0)
            p[label[i]] += (double)val[i] * x[i];
      }
    }
    for (int k = 0; k < c; k++) {
      double s = 0.0;
      for (int b = 0; b < EIG_PROJ_CHUNKS; b++)
        s += part[b][k];
      work[k] = s;
    }
  }
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++)
    if (label[i] >= 0)
      x[i] -= work[label[i]] * (double)val[i];
}

int eig_known_pairs(spmv_matvec *mv, const eig_options *opt, double *values, float *vectors,
                    int count)
{
  const int n = spmv_matvec_rows(mv);
  float *y = malloc((size_t)n * sizeof(*y));
  int status = DSG_OK;
  if (!y)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the known-vector workspace");
  const int *label = opt->known_return_label ? opt->known_return_label : opt->known_label;
  const float *value = opt->known_return_values ? opt->known_return_values : opt->known_values;
  /* one product per returned vector: its Rayleigh quotient */
  for (int k = 0; k < count && status == DSG_OK; k++) {
    float *u = vectors + (size_t)k * (size_t)n;
    double q = 0.0;
    for (int i = 0; i < n; i++)
      u[i] = label[i] == k ? value[i] : 0.0f;
    status = spmv_matvec_apply(mv, u, y);
    for (int i = 0; i < n; i++)
      q += (double)u[i] * (double)y[i];
    values[k] = q;
    eig_normalize_sign(u, n);
  }
  free(y);
  return status;
}

int eig_sort_pairs(eig_result *res)
{
  const size_t n = (size_t)res->n;
  float *tmp = malloc(n * sizeof(*tmp));
  if (!tmp)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a vector to sort eigenpairs");
  /* insertion sort on values (descending), moving vectors along; nconv is small */
  for (int a = 1; a < res->nconv; a++) {
    for (int b = a; b > 0 && res->values[b] > res->values[b - 1]; b--) {
      double t = res->values[b];
      res->values[b] = res->values[b - 1];
      res->values[b - 1] = t;
      float *u = res->vectors + (size_t)b * n, *v = res->vectors + (size_t)(b - 1) * n;
      memcpy(tmp, u, n * sizeof(*tmp));
      memcpy(u, v, n * sizeof(*tmp));
      memcpy(v, tmp, n * sizeof(*tmp));
    }
  }
  free(tmp);
  return DSG_OK;
}

/* Copies the nget largest of the nret pairs ARPACK returned (ascending values, vectors in z,
 * column-major n x nret) to res from position `at`: descending, float, diaseg's sign convention. */
static void take_pairs(eig_result *res, int at, int nget, int nret, const double *d,
                       const double *z)
{
  const int n = res->n;
  for (int k = 0; k < nget; k++) {
    int src = nret - 1 - k;
    float *u = res->vectors + (size_t)(at + k) * (size_t)n;
    const double *zs = z + (size_t)src * (size_t)n;
    res->values[at + k] = d[src];
    for (int i = 0; i < n; i++)
      u[i] = (float)zs[i];
    eig_normalize_sign(u, n);
  }
}

static void timing_since(eig_result *res, spmv_matvec *mv, spmv_timing before, double t0)
{
  spmv_timing after = spmv_matvec_timing(mv);
  res->solve_s = dsg_seconds() - t0;
  res->matvec.calls = after.calls - before.calls;
  res->matvec.total_s = after.total_s - before.total_s;
  res->matvec.kernel_s = after.kernel_s - before.kernel_s;
  res->matvec.transfer_s = after.transfer_s - before.transfer_s;
  res->matvec.host_s = after.host_s - before.host_s;
  res->host_s = res->solve_s - res->matvec.total_s;
}

/* ARPACK on P A P (P projects out the known vectors) for nev_a pairs, stored in res from `at`. */
static int run_arpack(spmv_matvec *mv, const eig_options *opt, int nev_a, int ncv, int at,
                      eig_result *res, int *info_out, double t0)
{
  const int n = res->n;
  int status = DSG_OK, ido = 0, info = 1, lworkl = ncv * (ncv + 8);
  int iparam[11] = {0}, ipntr[14] = {0};
  double *resid, *v, *workd, *workl, *d, *proj;
  int *select;
  float *xf, *yf;
  double next_report = t0 + 0.2;

  resid = malloc((size_t)n * sizeof(*resid));
  v = malloc((size_t)n * (size_t)ncv * sizeof(*v));
  workd = malloc(3 * (size_t)n * sizeof(*workd));
  workl = malloc((size_t)lworkl * sizeof(*workl));
  d = malloc((size_t)ncv * sizeof(*d));
  proj = malloc(((size_t)opt->known_count + 1) * sizeof(*proj));
  select = calloc((size_t)ncv, sizeof(*select));
  xf = malloc((size_t)n * sizeof(*xf));
  yf = malloc((size_t)n * sizeof(*yf));
  if (!resid || !v || !workd || !workl || !d || !proj || !select || !xf || !yf) {
    status = dsg_error_set(DSG_ERR_NOMEM,
                           "cannot allocate ARPACK's workspace for n = %d, ncv = %d "
                           "(%.1f MiB)",
                           n, ncv, (double)n * (ncv + 4) * 8.0 / 1048576.0);
    goto out_free;
  }
  eig_start_vector(resid, n);
  eig_project_known(opt, n, resid, proj);
  iparam[0] = 1;             /* exact shifts */
  iparam[2] = opt->max_iter; /* mxiter */
  iparam[6] = 1;             /* mode 1: standard problem A x = lambda x */

  for (;;) {
    dsaupd_c(&ido, "I", n, "LA", nev_a, opt->tol, resid, ncv, v, n, iparam, ipntr, workd, workl,
             lworkl, &info);
    if (ido != 1 && ido != -1)
      break;
    double *x = workd + ipntr[0] - 1, *y = workd + ipntr[1] - 1;
    eig_project_known(opt, n, x, proj);
    for (int i = 0; i < n; i++)
      xf[i] = (float)x[i];
    status = spmv_matvec_apply(mv, xf, yf);
    if (status != DSG_OK)
      goto out_free;
    for (int i = 0; i < n; i++)
      y[i] = (double)yf[i];
    eig_project_known(opt, n, y, proj);
    res->matvecs++;
    if (opt->cancel && *opt->cancel) {
      status = dsg_error_set(DSG_ERR_INTERRUPTED,
                             "the eigensolve was interrupted after %ld "
                             "products",
                             res->matvecs);
      goto out_free;
    }
    if (opt->progress && dsg_seconds() >= next_report) {
      opt->progress(opt->progress_data, res->matvecs, -1, dsg_seconds() - t0);
      next_report = dsg_seconds() + 0.2;
    }
  }
  res->iterations = iparam[2];
  *info_out = info;
  if (info < 0 || info == 3) {
    status = dsg_error_set(DSG_ERR_SOLVER, "ARPACK dsaupd failed (info %d): %s", info,
                           dsaupd_message(info));
    goto out_free;
  }
  const int nret = iparam[4] < ncv ? iparam[4] : ncv; /* ARPACK may converge more than nev */
  const int nget = nret < nev_a ? nret : nev_a;
  if (nget > 0) {
    int einfo = 0;
    dseupd_c(1, "A", select, d, v, n, 0.0, "I", n, "LA", nev_a, opt->tol, resid, ncv, v, n, iparam,
             ipntr, workd, workl, lworkl, &einfo);
    if (einfo != 0) {
      status = dsg_error_set(DSG_ERR_SOLVER, "ARPACK dseupd failed (info %d): %s", einfo,
                             dsaupd_message(einfo));
      goto out_free;
    }
    take_pairs(res, at, nget, nret, d, v);
  }
  res->nconv = at + nget;

out_free:
  free(resid);
  free(v);
  free(workd);
  free(workl);
  free(d);
  free(proj);
  free(select);
  free(xf);
  free(yf);
  return status;
}

int eig_arpack_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  const int n = spmv_matvec_rows(mv);
  int ncv = 0, status, info = 0, nknown, nev_a;
  spmv_timing before;
  double t0;

  memset(res, 0, sizeof(*res));
  status = eig_check_options(opt, n, &ncv);
  if (status != DSG_OK)
    return status;
  res->n = n;
  res->nev = opt->nev;
  res->ncv = ncv;
  res->solver = "arpack";
  status = eig_result_alloc(res, n, opt->nev);
  if (status != DSG_OK)
    return status;
  nknown = opt->known_keep > 0 && opt->known_keep < opt->known_count ? opt->known_keep
                                                                     : opt->known_count;
  nknown = nknown < opt->nev ? nknown : opt->nev;
  nev_a = opt->nev - nknown;

  pthread_mutex_lock(&arpack_lock);
  tame_blas_threads(n);
  before = spmv_matvec_timing(mv);
  t0 = dsg_seconds();
  if (nknown > 0)
    status = eig_known_pairs(mv, opt, res->values, res->vectors, nknown);
  res->nconv = nknown;
  if (status == DSG_OK && nev_a > 0)
    status = run_arpack(mv, opt, nev_a, ncv, nknown, res, &info, t0);
  timing_since(res, mv, before, t0);
  pthread_mutex_unlock(&arpack_lock);
  if (status != DSG_OK)
    return status;

  res->converged = res->nconv == opt->nev && info == 0;
  return eig_finish(mv, opt, res);
}

int eig_finish(spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  int status = eig_sort_pairs(res);
  if (status == DSG_OK)
    status = eig_residuals(mv, res);
  if (status == DSG_OK && !res->converged)
    status = dsg_error_set(DSG_ERR_NOCONV,
                           "the eigensolver stopped at its iteration limit (%d "
                           "restarts, %ld products) with %d of %d eigenpairs converged",
                           res->iterations, res->matvecs, res->nconv, opt->nev);
  return status;
}
