/* diaseg's own Lanczos solver: thick-restart Lanczos (K. Wu and H. Simon, "Thick-restart Lanczos
 * method for large symmetric eigenvalue problems", SIAM J. Matrix Anal. Appl. 22(2), 2000) with
 * full reorthogonalisation (classical Gram-Schmidt applied twice), written once against the
 * spmv_basis operations, so the same algorithm runs on the C path and, with everything of length
 * n in device memory, on an OpenCL device. The host keeps only the small projected matrix T
 * (at most ncv x ncv), solved with LAPACK's dsyev.
 *
 * After a restart that keeps k Ritz vectors y_0 .. y_k-1 (values theta_i), the basis is
 * [Y_k, r / |r|] and T is an arrowhead: theta on the diagonal, s_i = beta * y_i[m-1] in the k-th
 * row and column; the expansion continues with the ordinary three-term recurrence. A Ritz pair
 * has converged when |beta * y_i[m-1]| <= tol |theta_i|. */
#include "eigensolver.h"
#include "eigensolver_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Eigenpairs of the leading mcur x mcur block of T (leading dimension ld): values descending into
 * theta, vectors as the columns of Y (ld = mcur), same order. */
static int small_eigen(const eig_fortran *f, const double *T, int ld, int mcur, double *theta,
                       double *Y, double *work, int lwork)
{
  for (int c = 0; c < mcur; c++)
    for (int r = 0; r < mcur; r++)
      Y[r + c * mcur] = T[r + c * ld];
  return eig_dsyev_descending(f, Y, mcur, theta, work, lwork, "projected matrix");
}

void eig_lanczos_default_keep(int m, int nev, int nconv, int *keep)
{
  /* ARPACK's rule (dsaup2): the wanted pairs, plus one more for each that has converged, up to
   * half of the others; early restarts bring many new directions, later ones keep what works */
  int k = nev + (nconv < (m - nev) / 2 ? nconv : (m - nev) / 2);
  if (k == 1)
    k = m >= 6 ? m / 2 : 2;
  *keep = k > m - 1 ? m - 1 : k;
}

int eig_lanczos_prepare(spmv_matvec *mv, const eig_options *opt)
{
  int m = 0, status = eig_check_options(opt, spmv_matvec_rows(mv), &m);
  const eig_fortran *f;
  if (status == DSG_OK) /* LAPACK loaded before the solve's clock starts */
    status = eig_fortran_load(&f);
  return status == DSG_OK ? spmv_matvec_prepare_basis(mv, m) : status;
}

int eig_lanczos_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  const int n = spmv_matvec_rows(mv);
  int m = 0, status, nknown, nev_a, k = 0, mcur = 0, iter = 0, lwork;
  double *T = NULL, *theta = NULL, *Y = NULL, *coef = NULL, *work = NULL, *rstart = NULL;
  float *fstart = NULL;
  spmv_basis *b = NULL;
  spmv_timing before;
  spmv_known known = {opt->known_count, opt->known_label, opt->known_values};
  const eig_fortran *f = NULL;
  eig_progress_state progress;
  double t0, beta_m = 0.0;

  memset(res, 0, sizeof(*res));
  status = eig_check_options(opt, n, &m);
  if (status == DSG_OK)
    status = eig_fortran_load(&f);
  if (status != DSG_OK)
    return status;
  res->n = n;
  res->nev = opt->nev;
  res->ncv = m;
  res->solver = "lanczos";
  status = eig_result_alloc(res, n, opt->nev);
  if (status != DSG_OK)
    return status;
  nknown = opt->known_keep > 0 && opt->known_keep < opt->known_count ? opt->known_keep
                                                                     : opt->known_count;
  nknown = nknown < opt->nev ? nknown : opt->nev;
  nev_a = opt->nev - nknown;

  before = spmv_matvec_timing(mv);
  t0 = dsg_seconds();
  eig_progress_begin(&progress, opt, nknown, m, t0);
  if (nknown > 0)
    status = eig_known_pairs(mv, opt, res->values, res->vectors, nknown);
  res->nconv = nknown;
  if (status != DSG_OK || nev_a == 0)
    goto out_timing;

  lwork = 8 * (m + 1);
  T = calloc((size_t)(m + 1) * (size_t)(m + 1), sizeof(*T));
  theta = malloc((size_t)(m + 1) * sizeof(*theta));
  Y = malloc((size_t)(m + 1) * (size_t)(m + 1) * sizeof(*Y));
  coef = malloc((size_t)m * (size_t)(m + 2) * sizeof(*coef));
  work = malloc((size_t)lwork * sizeof(*work));
  rstart = malloc((size_t)n * sizeof(*rstart));
  fstart = malloc((size_t)n * sizeof(*fstart));
  if (!T || !theta || !Y || !coef || !work || !rstart || !fstart) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the Lanczos workspace (m = %d)", m);
    goto out_timing;
  }
  status =
      spmv_basis_create(&b, mv, m, opt->known_count > 0 ? &known : NULL, !opt->lanczos_unfused);
  if (status != DSG_OK)
    goto out_timing;
  eig_start_vector(rstart, n);
  for (int i = 0; i < n; i++)
    fstart[i] = (float)rstart[i];
  {
    double norm = 0.0;
    status = spmv_basis_set(b, 0, fstart, &norm);
    if (status == DSG_OK && !(norm > 0.0))
      status = dsg_error_set(DSG_ERR_SOLVER, "the start vector lies in the span of the known "
                                             "eigenvectors");
  }
  if (status != DSG_OK)
    goto out_timing;

  for (iter = 1; iter <= opt->max_iter; iter++) {
    int breakdown = -1, nconv = 0;
    for (int j = k; j < m && status == DSG_OK; j++) {
      status = spmv_basis_expand(b, j);
      eig_progress_tick(&progress, res->matvecs + (j - k + 1));
    }
    if (status == DSG_OK)
      status = spmv_basis_coefficients(b, k, m, coef);
    if (status != DSG_OK)
      goto out_timing;
    res->matvecs += m - k;

    /* T's new rows: alpha on the diagonal, beta beside it; the arrowhead row k stays */
    double tnorm = 0.0;
    for (int j = 0; j < k; j++)
      tnorm = fmax(tnorm, fabs(T[j + j * (m + 1)]));
    for (int j = k; j < m; j++) {
      const double *cj = coef + (size_t)(j - k) * (size_t)(m + 2);
      const double alpha = cj[j], beta = cj[j + 1];
      T[j + j * (m + 1)] = alpha;
      tnorm = fmax(tnorm, fabs(alpha) + beta);
      if (breakdown < 0 && !(beta > 1e-12 * (tnorm > 0 ? tnorm : 1.0))) {
        breakdown = j; /* an invariant subspace: V[:, 0..j] */
        beta_m = 0.0;
        break;
      }
      if (j + 1 < m) {
        T[j + (j + 1) * (m + 1)] = beta;
        T[(j + 1) + j * (m + 1)] = beta;
      }
      beta_m = beta;
    }
    mcur = breakdown >= 0 ? breakdown + 1 : m;

    status = small_eigen(f, T, m + 1, mcur, theta, Y, work, lwork);
    if (status != DSG_OK)
      goto out_timing;
    double worst = mcur < nev_a ? INFINITY : 0.0; /* the progress model's (eig_progress) */
    for (int i = 0, top = 1; i < nev_a && i < mcur; i++) {
      const double est = fabs(beta_m * Y[(mcur - 1) + i * mcur]);
      top = top && est <= opt->tol * fabs(theta[i]); /* converged from the top down */
      nconv += top;
      worst = fmax(worst, est / (opt->tol * fmax(fabs(theta[i]), EIG_EPS23)));
    }
    eig_progress_restart(&progress, res->matvecs, nconv, worst);
    status = eig_cancelled(opt, res->matvecs);
    if (status != DSG_OK)
      goto out_timing;
    if (nconv >= nev_a || iter == opt->max_iter || (breakdown >= 0 && mcur >= nev_a)) {
      const int take = nconv >= nev_a || breakdown >= 0 ? (nev_a < mcur ? nev_a : mcur) : nconv;
      for (int i = 0; i < take; i++)
        res->values[nknown + i] = theta[i];
      status = spmv_basis_ritz(b, Y, mcur, mcur, take, res->vectors + (size_t)nknown * (size_t)n);
      if (status != DSG_OK)
        goto out_timing;
#pragma omp parallel for schedule(dynamic, 1)
      for (int i = 0; i < take; i++) /* n-long each: 16 of them took 0.2 s at 3840x2160 */
        eig_normalize_sign(res->vectors + (size_t)(nknown + i) * (size_t)n, n);
      res->nconv = nknown + take;
      break;
    }
    if (breakdown >= 0) {
      /* the space explored so far is invariant but holds too few eigenpairs (mcur < nev_a < m):
       * keep all of it, as Ritz vectors, and go on from a fresh direction orthogonal to it */
      double norm = 0.0;
      k = mcur;
      status = spmv_basis_restart(b, Y, mcur, mcur, k);
      for (int i = 0; i < n; i++)
        fstart[i] = (float)rstart[((long long)i * 7919 + iter) % n];
      if (status == DSG_OK)
        status = spmv_basis_set(b, k, fstart, &norm);
      if (status == DSG_OK && !(norm > 1e-6))
        status = dsg_error_set(DSG_ERR_SOLVER,
                               "the operator has only %d eigenpairs outside "
                               "the known vectors; " DSG_PARAM("nev") " %d asks for more",
                               mcur + nknown, opt->nev);
      if (status != DSG_OK)
        goto out_timing;
      memset(T, 0, (size_t)(m + 1) * (size_t)(m + 1) * sizeof(*T));
      for (int i = 0; i < k; i++)
        T[i + i * (m + 1)] = theta[i];
      continue;
    }

    /* thick restart: keep the top k Ritz vectors and the residual direction */
    eig_lanczos_default_keep(m, nev_a, nconv, &k);
    status = spmv_basis_restart(b, Y, mcur, mcur, k);
    if (status != DSG_OK)
      goto out_timing;
    memset(T, 0, (size_t)(m + 1) * (size_t)(m + 1) * sizeof(*T));
    for (int i = 0; i < k; i++) {
      const double s = beta_m * Y[(mcur - 1) + i * mcur];
      T[i + i * (m + 1)] = theta[i];
      T[i + k * (m + 1)] = s;
      T[k + i * (m + 1)] = s;
    }
  }
  res->iterations = iter < opt->max_iter ? iter : opt->max_iter;

out_timing:
  res->solve_s = dsg_seconds() - t0;
  {
    spmv_timing after = spmv_matvec_timing(mv);
    if (b)
      res->basis = spmv_basis_get_timing(b);
    /* the products: the basis steps' DIA kernels plus the known vectors' Rayleigh quotients */
    res->matvec.calls = res->basis.steps + (after.calls - before.calls);
    res->matvec.kernel_s = res->basis.matvec_s + (after.kernel_s - before.kernel_s);
    res->matvec.transfer_s = res->basis.transfer_s + (after.transfer_s - before.transfer_s);
    res->matvec.host_s = after.host_s - before.host_s;
    res->matvec.total_s = res->matvec.kernel_s + res->matvec.transfer_s + res->matvec.host_s;
    res->host_s = res->solve_s - res->matvec.total_s - res->basis.project_s - res->basis.orth_s -
                  res->basis.normalize_s - res->basis.restart_s;
  }
  spmv_basis_destroy(b);
  free(T);
  free(theta);
  free(Y);
  free(coef);
  free(work);
  free(rstart);
  free(fstart);
  if (status != DSG_OK)
    return status;
  res->converged = res->nconv == opt->nev;
  eig_progress_done(&progress, res->matvecs, res->nconv);
  return eig_finish(mv, opt, res);
}
