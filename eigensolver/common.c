/* What every solver shares: options, their checks, the start vector, known vectors, result
 * handling (sorting, residuals, the end of a solve), the progress reports and the solver table. */
#include "eigensolver_internal.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int eig_default_ncv(int nev, int n)
{
  const int ncv = 2 * nev + 1 > 32 ? 2 * nev + 1 : 32;
  return ncv < n ? ncv : n;
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
  free(res->block);
  free(res->block_values);
  free(res->products);
  memset(res, 0, sizeof(*res));
}

int eig_check_options(const eig_options *opt, int n, int *ncv_out)
{
  int ncv = opt->ncv;
  if (n < 2)
    return dsg_error_set(DSG_ERR_INVALID, "the operator has order %d; eigenpairs need n >= 2", n);
  if (opt->nev < 1 || opt->nev >= n)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("nev") " %d is out of range: it must satisfy 1 <= nev < n "
                                          "= %d",
                         opt->nev, n);
  if (!(opt->tol > 0.0) || !isfinite(opt->tol) || opt->tol >= 1.0)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("tol") " %g is out of range: it must be in (0, 1)", opt->tol);
  if (opt->max_iter < 1)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("max_iter") " %d is out of range: it must be >= 1",
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
  if (ncv == 0)
    ncv = eig_default_ncv(opt->nev, n);
  if (ncv <= opt->nev || ncv > n)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("ncv") " %d is out of range: it must satisfy nev = %d < "
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

float eig_normalize_sign(float *u, int n)
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
    return 1.0f;
  float scale = (float)(1.0 / sqrt(ss));
  if (u[imax] < 0.0f)
    scale = -scale;
  for (int i = 0; i < n; i++)
    u[i] *= scale;
  return scale;
}

int eig_measure_pairs(spmv_matvec *mv, eig_result *res, int first, int count, float *products)
{
  const int n = res->n;
  float *y = products ? NULL : malloc((size_t)n * sizeof(*y));
  int status = DSG_OK;
  if (!products && !y)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a residual vector (%d floats)", n);
  for (int k = first; k < first + count && status == DSG_OK; k++) {
    const float *u = res->vectors + (size_t)k * (size_t)n;
    float *yk = products ? products + (size_t)k * (size_t)n : y;
    double lambda = res->values[k], ss = 0.0;
    status = spmv_matvec_apply(mv, u, yk);
    for (int i = 0; i < n && status == DSG_OK; i++) {
      double r = (double)yk[i] - lambda * (double)u[i];
      ss += r * r;
    }
    res->residuals[k] = sqrt(ss);
  }
  free(y);
  return status;
}

int eig_residuals(spmv_matvec *mv, int keep_products, eig_result *res)
{
  const size_t n = (size_t)res->n;
  float *y = NULL;
  int status;
  free(res->products);
  res->products = NULL;
  if (keep_products && res->nconv > 0) {
    y = malloc((size_t)res->nconv * n * sizeof(*y));
    if (!y)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the residual vectors (%d x %zu floats)",
                           res->nconv, n);
  }
  status = eig_measure_pairs(mv, res, 0, res->nconv, y);
  if (status == DSG_OK)
    res->products = y;
  else
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

/* u <-> v, n floats each, through tmp */
static void swap_floats(float *u, float *v, float *tmp, size_t n)
{
  memcpy(tmp, u, n * sizeof(*tmp));
  memcpy(u, v, n * sizeof(*tmp));
  memcpy(v, tmp, n * sizeof(*tmp));
}

int eig_sort_pairs(eig_result *res)
{
  const size_t n = (size_t)res->n;
  float *tmp = malloc(n * sizeof(*tmp));
  if (!tmp)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a vector to sort eigenpairs");
  /* insertion sort on values (descending), moving vectors, residuals and products along; nconv
   * is small */
  for (int a = 1; a < res->nconv; a++) {
    for (int b = a; b > 0 && res->values[b] > res->values[b - 1]; b--) {
      const size_t at = (size_t)b * n, before = (size_t)(b - 1) * n;
      double t = res->values[b];
      res->values[b] = res->values[b - 1];
      res->values[b - 1] = t;
      t = res->residuals[b];
      res->residuals[b] = res->residuals[b - 1];
      res->residuals[b - 1] = t;
      swap_floats(res->vectors + at, res->vectors + before, tmp, n);
      if (res->products)
        swap_floats(res->products + at, res->products + before, tmp, n);
    }
  }
  free(tmp);
  return DSG_OK;
}

int eig_finish_measured(const eig_options *opt, eig_result *res)
{
  int status = eig_sort_pairs(res);
  if (status == DSG_OK && !res->converged)
    status = dsg_error_set(DSG_ERR_NOCONV,
                           "the eigensolver stopped at its iteration limit (%d "
                           "restarts, %ld products) with %d of %d eigenpairs converged",
                           res->iterations, res->matvecs, res->nconv, opt->nev);
  return status;
}

int eig_finish(spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  const int status = eig_residuals(mv, opt->keep_products, res);
  return status == DSG_OK ? eig_finish_measured(opt, res) : status;
}

int eig_cancelled(const eig_options *opt, long matvecs)
{
  if (opt->cancel && *opt->cancel)
    return dsg_error_set(DSG_ERR_INTERRUPTED, "the eigensolve was interrupted after %ld products",
                         matvecs);
  return DSG_OK;
}

int eig_dsyev_descending(const eig_fortran *f, double *A, int n, double *w, double *work, int lwork,
                         const char *what)
{
  int info = 0;
  f->dsyev("V", "U", &n, A, &n, w, work, &lwork, &info);
  if (info != 0)
    return dsg_error_set(DSG_ERR_SOLVER, "LAPACK dsyev failed on the %d x %d %s (info %d)", n, n,
                         what, info);
  for (int a = 0, b = n - 1; a < b; a++, b--) { /* ascending -> descending: values and columns */
    double t = w[a];
    w[a] = w[b];
    w[b] = t;
    for (int r = 0; r < n; r++) {
      t = A[r + a * n];
      A[r + a * n] = A[r + b * n];
      A[r + b * n] = t;
    }
  }
  return DSG_OK;
}

/* ---- the solver table: adding a solver is adding its row and its file ---- */

static const eig_solver solvers[] = {
    {"lanczos", "diaseg's thick-restart Lanczos; on an OpenCL matvec the basis stays on the device",
     eig_lanczos_solve, eig_lanczos_prepare},
    {"arpack", "ARPACK-ng's implicitly restarted Lanczos; vectors on the host", eig_arpack_solve,
     NULL},
    {"chfsi",
     "diaseg's Chebyshev-filtered subspace iteration: each product reads the matrix once for a "
     "block of vectors",
     eig_chfsi_solve, eig_chfsi_prepare},
};

int eig_solver_count(void) { return (int)(sizeof(solvers) / sizeof(solvers[0])); }

const eig_solver *eig_solver_at(int i)
{
  return i >= 0 && i < eig_solver_count() ? &solvers[i] : NULL;
}

int eig_solver_find(const char *name, const eig_solver **out)
{
  char names[128] = "";
  for (int i = 0; i < eig_solver_count(); i++) {
    if (name && strcmp(name, solvers[i].name) == 0) {
      *out = &solvers[i];
      return DSG_OK;
    }
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
             solvers[i].name);
  }
  *out = NULL;
  return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("solver") " '%s' is not one of %s",
                       name ? name : "", names);
}

/* ---- progress ---- */

#define EIG_PROGRESS_DEFAULT_S 0.5 /* seconds between reports by default */

static double progress_interval(const eig_options *opt)
{
  return opt->progress_interval != 0.0 ? opt->progress_interval : EIG_PROGRESS_DEFAULT_S;
}

void eig_progress_begin(eig_progress_state *s, const eig_options *opt, int nknown, int ncv,
                        double t0)
{
  memset(s, 0, sizeof(*s));
  s->opt = opt;
  s->t0 = t0;
  s->next = t0 + fmax(progress_interval(opt), 0.0);
  s->nknown = nknown;
  /* ARPACK's and Lanczos' restarts each take fewer than ncv products */
  s->max_matvecs = opt->max_iter > 0 && ncv > 0 && (long)opt->max_iter < LONG_MAX / ncv
                       ? (long)opt->max_iter * ncv
                       : LONG_MAX;
  s->estimate = -1;
  s->rec.nconv = nknown;
  s->rec.nev = opt->nev;
  s->rec.matvecs_estimate = -1;
}

static void progress_report(eig_progress_state *s, long matvecs)
{
  const double now = dsg_seconds();
  if (matvecs > s->rec.matvecs)
    s->rec.matvecs = matvecs;
  s->rec.matvecs_estimate =
      s->estimate < 0 ? -1 : (s->estimate > s->rec.matvecs ? s->estimate : s->rec.matvecs);
  s->rec.elapsed_s = now - s->t0;
  s->opt->progress(s->opt->progress_data, &s->rec);
  s->next = now + fmax(progress_interval(s->opt), 0.0);
}

/* After a restart: every restart with a negative interval, else when the interval has passed. */
static int report_due(const eig_progress_state *s)
{
  return progress_interval(s->opt) < 0.0 || dsg_seconds() >= s->next;
}

long eig_progress_estimate(const long *at, const double *log_worst, int count, int nconv,
                           int nwanted, long max_matvecs)
{
  double total = -1.0;
  long now;
  if (count < 1)
    return -1;
  now = at[count - 1];
  if (log_worst[count - 1] <= 0.0)
    return now; /* every wanted pair has converged */
  if (count >= 3) {
    double mx = 0.0, my = 0.0, sxx = 0.0, sxy = 0.0;
    for (int i = 0; i < count; i++) {
      mx += (double)at[i] / count;
      my += log_worst[i] / count;
    }
    for (int i = 0; i < count; i++) {
      sxx += ((double)at[i] - mx) * ((double)at[i] - mx);
      sxy += ((double)at[i] - mx) * (log_worst[i] - my);
    }
    if (sxx > 0.0 && sxy < 0.0)
      total = (double)now + log_worst[count - 1] / (-sxy / sxx);
  }
  if (total < 0.0 && nconv > 0)
    total = (double)now * nwanted / nconv;
  if (total < 0.0)
    return -1;
  if (total > (double)max_matvecs)
    total = (double)max_matvecs;
  return total < (double)now ? now : (long)ceil(total);
}

void eig_progress_restart(eig_progress_state *s, long matvecs, int nconv, double worst)
{
  const int nwanted = s->rec.nev - s->nknown;
  long limit = s->max_matvecs, estimate;
  if (!s->opt->progress)
    return;
  s->rec.restarts++;
  if (s->nknown + nconv > s->rec.nconv)
    s->rec.nconv = s->nknown + nconv;
  if (!isfinite(worst)) { /* no sample: the counts alone */
    if (report_due(s))
      progress_report(s, matvecs);
    return;
  }
  if (s->count == EIG_PROGRESS_WINDOW) {
    memmove(s->at, s->at + 1, (EIG_PROGRESS_WINDOW - 1) * sizeof(*s->at));
    memmove(s->log_worst, s->log_worst + 1, (EIG_PROGRESS_WINDOW - 1) * sizeof(*s->log_worst));
    s->count--;
  }
  s->at[s->count] = matvecs;
  s->log_worst[s->count] = worst > 0.0 ? log(worst) : -1.0; /* 0: exact pairs */
  s->count++;
  /* at most max_iter restarts in all, each as long as the recent ones */
  if (s->count >= 2 && s->opt->max_iter > s->rec.restarts) {
    const double per_restart = (double)(s->at[s->count - 1] - s->at[0]) / (s->count - 1),
                 cap = (double)matvecs + per_restart * (s->opt->max_iter - s->rec.restarts);
    if (cap < (double)limit)
      limit = (long)cap;
  }
  estimate = eig_progress_estimate(s->at, s->log_worst, s->count, s->rec.nconv - s->nknown, nwanted,
                                   limit);
  /* a window where the residuals did not fall keeps the last total rather than going back to
   * estimating */
  if (estimate < 0 && s->nrecent > 0)
    estimate = s->recent[s->nrecent - 1];
  if (estimate >= 0) {
    long sorted[EIG_PROGRESS_MEDIAN];
    int n;
    if (s->nrecent == EIG_PROGRESS_MEDIAN) {
      memmove(s->recent, s->recent + 1, (EIG_PROGRESS_MEDIAN - 1) * sizeof(*s->recent));
      s->nrecent--;
    }
    s->recent[s->nrecent++] = estimate;
    n = s->nrecent;
    memcpy(sorted, s->recent, (size_t)n * sizeof(*sorted));
    for (int i = 1; i < n; i++) /* insertion sort of at most 5 */
      for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
        const long t = sorted[j];
        sorted[j] = sorted[j - 1];
        sorted[j - 1] = t;
      }
    s->estimate = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }
  if (report_due(s))
    progress_report(s, matvecs);
}

void eig_progress_tick(eig_progress_state *s, long matvecs)
{
  if (s->opt->progress && progress_interval(s->opt) >= 0.0 && dsg_seconds() >= s->next)
    progress_report(s, matvecs);
}

void eig_progress_done(eig_progress_state *s, long matvecs, int nconv)
{
  if (!s->opt->progress)
    return;
  if (nconv > s->rec.nconv)
    s->rec.nconv = nconv;
  s->estimate = matvecs;
  s->rec.done = 1;
  progress_report(s, matvecs);
}
