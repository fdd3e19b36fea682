/* The ARPACK-ng driver: dsaupd/dseupd through reverse communication, the product through
 * spmv_matvec (float), ARPACK's vectors in double. */
#include "eigensolver_internal.h"

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

static void tame_blas_threads(const eig_fortran *f, int n)
{
  static int all = -1;
  if (!f->openblas_get_parallel || !f->openblas_set_num_threads || !f->openblas_get_num_threads ||
      f->openblas_get_parallel() != 1) /* 1: pthreads */
    return;
  if (all < 0)
    all = f->openblas_get_num_threads();
  f->openblas_set_num_threads(n < EIG_BLAS_THREADED_ROWS ? 1 : all);
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
  case 3: return "no shifts could be applied during a restart (try a larger " DSG_PARAM("ncv") ")";
  default: return "unknown ARPACK error";
  }
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

/* A Ritz value and its error bound, for the progress reports. */
typedef struct ritz_pair {
  double value, bound;
} ritz_pair;

static int ritz_descending(const void *a, const void *b)
{
  const double x = ((const ritz_pair *)a)->value, y = ((const ritz_pair *)b)->value;
  return (x < y) - (x > y);
}

/* The progress model's view of ARPACK between two products: dsaupd leaves the ncv Ritz values of
 * its last restart at workl[ipntr[5] - 1] and their error bounds at workl[ipntr[6] - 1] (its
 * documented IPNTR(6), IPNTR(7); zero before the first restart). When they changed since `seen`
 * (2 ncv doubles), a restart happened: the wanted pairs are the nev_a largest values, converged
 * by dsconv's test, bound <= tol max(eps^2/3, |value|). */
static void arpack_progress(eig_progress_state *s, const double *workl, const int *ipntr, int ncv,
                            int nev_a, double *seen, ritz_pair *pairs, long matvecs)
{
  const int set = ipntr[5] >= 1 && ipntr[6] >= 1; /* by dsaupd's first call; checked anyway */
  const double *ritz = workl + (set ? ipntr[5] - 1 : 0), *bounds = workl + (set ? ipntr[6] - 1 : 0);
  const double tol = s->opt->tol;
  double worst = 0.0, top = 0.0;
  int nconv = 0;
  if (!set || (memcmp(seen, ritz, (size_t)ncv * sizeof(*seen)) == 0 &&
               memcmp(seen + ncv, bounds, (size_t)ncv * sizeof(*seen)) == 0)) {
    eig_progress_tick(s, matvecs);
    return;
  }
  memcpy(seen, ritz, (size_t)ncv * sizeof(*seen));
  memcpy(seen + ncv, bounds, (size_t)ncv * sizeof(*seen));
  for (int i = 0; i < ncv; i++) {
    pairs[i].value = ritz[i];
    pairs[i].bound = fabs(bounds[i]);
    top = fmax(top, fabs(ritz[i]));
  }
  if (!(top > 0.0)) { /* before the first restart */
    eig_progress_tick(s, matvecs);
    return;
  }
  qsort(pairs, (size_t)ncv, sizeof(*pairs), ritz_descending);
  for (int i = 0; i < nev_a && i < ncv; i++) {
    const double ratio = pairs[i].bound / (tol * fmax(fabs(pairs[i].value), EIG_EPS23));
    nconv += ratio <= 1.0;
    worst = fmax(worst, ratio);
  }
  eig_progress_restart(s, matvecs, nconv, worst);
}

/* ARPACK on P A P (P projects out the known vectors) for nev_a pairs, stored in res from `at`. */
static int run_arpack(const eig_fortran *f, spmv_matvec *mv, const eig_options *opt, int nev_a,
                      int ncv, int at, eig_result *res, int *info_out, eig_progress_state *progress)
{
  const int n = res->n;
  int status = DSG_OK, ido = 0, info = 1, lworkl = ncv * (ncv + 8);
  int iparam[11] = {0}, ipntr[14] = {0};
  double *resid, *v, *workd, *workl, *d, *proj;
  int *select;
  float *xf, *yf;
  double *seen = NULL; /* the progress reports' copy of the Ritz values and bounds */
  ritz_pair *pairs = NULL;

  resid = malloc((size_t)n * sizeof(*resid));
  v = malloc((size_t)n * (size_t)ncv * sizeof(*v));
  workd = malloc(3 * (size_t)n * sizeof(*workd));
  workl = calloc((size_t)lworkl, sizeof(*workl)); /* zero: no Ritz values before a restart */
  d = malloc((size_t)ncv * sizeof(*d));
  proj = malloc(((size_t)opt->known_count + 1) * sizeof(*proj));
  select = calloc((size_t)ncv, sizeof(*select));
  xf = malloc((size_t)n * sizeof(*xf));
  yf = malloc((size_t)n * sizeof(*yf));
  if (opt->progress) {
    seen = calloc(2 * (size_t)ncv, sizeof(*seen));
    pairs = malloc((size_t)ncv * sizeof(*pairs));
  }
  if (!resid || !v || !workd || !workl || !d || !proj || !select || !xf || !yf ||
      (opt->progress && (!seen || !pairs))) {
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
    f->dsaupd(&ido, "I", n, "LA", nev_a, opt->tol, resid, ncv, v, n, iparam, ipntr, workd, workl,
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
    status = eig_cancelled(opt, res->matvecs);
    if (status != DSG_OK)
      goto out_free;
    if (opt->progress)
      arpack_progress(progress, workl, ipntr, ncv, nev_a, seen, pairs, res->matvecs);
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
    f->dseupd(1, "A", select, d, v, n, 0.0, "I", n, "LA", nev_a, opt->tol, resid, ncv, v, n, iparam,
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
  free(seen);
  free(pairs);
  return status;
}

int eig_arpack_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  const int n = spmv_matvec_rows(mv);
  int ncv = 0, status, info = 0, nknown, nev_a;
  const eig_fortran *f = NULL;
  spmv_timing before;
  eig_progress_state progress;
  double t0;

  memset(res, 0, sizeof(*res));
  status = eig_check_options(opt, n, &ncv);
  if (status == DSG_OK)
    status = eig_fortran_load(&f);
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
  tame_blas_threads(f, n);
  before = spmv_matvec_timing(mv);
  t0 = dsg_seconds();
  eig_progress_begin(&progress, opt, nknown, ncv, t0);
  if (nknown > 0)
    status = eig_known_pairs(mv, opt, res->values, res->vectors, nknown);
  res->nconv = nknown;
  if (status == DSG_OK && nev_a > 0)
    status = run_arpack(f, mv, opt, nev_a, ncv, nknown, res, &info, &progress);
  timing_since(res, mv, before, t0);
  pthread_mutex_unlock(&arpack_lock);
  if (status != DSG_OK)
    return status;

  res->converged = res->nconv == opt->nev && info == 0;
  eig_progress_done(&progress, res->matvecs, res->nconv);
  return eig_finish(mv, opt, res);
}
