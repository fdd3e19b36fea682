/* diaseg's block solver: Chebyshev-filtered subspace iteration (Y. Zhou and Y. Saad, "A
 * Chebyshev-Davidson algorithm for large symmetric eigenproblems", SIAM J. Matrix Anal. Appl.
 * 29(3), 2007; Y. Zhou, Y. Saad, M. L. Tiago and J. R. Chelikowsky, "Self-consistent-field
 * calculations using Chebyshev-filtered subspace iteration", J. Comput. Phys. 219, 2006),
 * written against the spmv_block operations, so that on an OpenCL matvec every vector stays on
 * the device and every product reads the matrix once for the whole block.
 *
 * A block X of b orthonormal vectors (b > nev) is filtered by a Chebyshev polynomial of degree d
 * that is at most 1 in magnitude on [lo, c] (lo <= the spectrum's lowest point, c the block's
 * smallest Ritz value) and grows fast above c, scaled to 1 at the largest Ritz value; the
 * filtered block is orthonormalised (SVQB: the eigendecomposition of its Gram matrix) and a
 * Rayleigh-Ritz step on it gives the next X, A X and the Ritz values. A pair has converged when
 * |A x - theta x| <= tol |theta| (measured: one reduction over the block), from the top down.
 * Each iteration costs d products of the block: d - 1 in the filter (its first step reuses A X)
 * and one for A Y. The host solves only b x b problems.
 *
 * Why it pays (docs/PERFORMANCE.md "The block solver"): the DIA product is bound by reading the
 * matrix, 81 values a row against 2 vector entries, so a product of 24 vectors costs a few times
 * one; NCut spectra have many eigenvalues within 1e-3 of 1, where a Krylov method needs ~40
 * products per wanted vector one at a time. */
#include "eigensolver.h"
#include "eigensolver_internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHFSI_DEGREE 32 /* the filter's degree: see docs/PERFORMANCE.md "The block solver" */
/* From a start block (opt->start): the first round's degree, and the second round's, which only
 * finishes pairs that are nearly there, doubled for each round after it (polish_degree;
 * docs/PERFORMANCE.md, "Coarse-to-fine starts") */
#define CHFSI_DEGREE_WARM 24
#define CHFSI_DEGREE_POLISH 6
#define CHFSI_SVQB_FLOOR 1e-14 /* Gram eigenvalues below this times the largest are clamped */
/* The measured residual of float vectors does not fall below the product's rounding, about
 * FLT_EPSILON |A| per row sum: a pair whose residual is within this many FLT_EPSILON times the
 * spectral radius of tol |theta| counts as converged (a tol of 1e-6 on an affinity: +5e-7). */
#define CHFSI_ROUNDING 4.0

/* The filter grows the top Ritz value's component at most this many times as much as the lowest
 * wanted one's: the block is float, and a lower wanted direction amplified less than 1 /
 * FLT_EPSILON times below the top one's is lost in the filtered block's rounding. On a photo's NCut
 * spectrum (wanted values within 1e-3 of 1) a degree of hundreds stays under it; on a small image's
 * spread spectrum (a flat 20 x 20: 0.93 down to 0.30) degree 32 grew the top 1e8 times as much, and
 * the pairs below 0.4 never converged. */
#define CHFSI_GROWTH_MAX 1e3
#define CHFSI_DEGREE_MIN 4 /* ... the least degree that bound may leave */

enum { SLOT_X, SLOT_AX, SLOT_Y, SLOTS }; /* X and Y trade places every iteration */

int eig_chfsi_block_size(int nev, int n, int known)
{
  int b = nev + (nev / 2 > 8 ? nev / 2 : 8);
  if (b > SPMV_BLOCK_MAX)
    b = SPMV_BLOCK_MAX;
  if (b > n - known)
    b = n - known;
  return b;
}

/* From a start, round iter > 1's degree: CHFSI_DEGREE_POLISH, doubled every round that did not
 * finish, at most the first round's. */
static int polish_degree(int iter, int degree)
{
  const int shift = iter - 2 < 8 ? iter - 2 : 8;
  const int d = CHFSI_DEGREE_POLISH << shift;
  return d < degree ? d : degree;
}

/* Degree d, or less where T_d would grow the component of the top Ritz value `top` more than
 * CHFSI_GROWTH_MAX times as much as that of the lowest wanted one, `low` (t = (A - cen) / e:
 * T_d(t) grows as exp(d acosh t) above 1). */
static int growth_degree(int d, double top, double low, double cen, double e)
{
  const double gap = acosh(fmax((top - cen) / e, 1.0)) - acosh(fmax((low - cen) / e, 1.0));
  if (gap > 0.0 && (double)d * gap > log(CHFSI_GROWTH_MAX)) {
    const int most = (int)(log(CHFSI_GROWTH_MAX) / gap);
    d = most > CHFSI_DEGREE_MIN ? most : CHFSI_DEGREE_MIN;
  }
  return d;
}

/* The first min(start_cols, b) columns of slot x := opt->start's (the rest stay random). */
static int set_start(spmv_block *k, int x, const eig_options *opt, int n, int b)
{
  const int cols = opt->start_cols < b ? opt->start_cols : b;
  float *block = malloc((size_t)b * (size_t)n * sizeof(*block));
  int status;
  if (!block)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a start block of %d x %d floats", b, n);
  status = spmv_block_get(k, x, b, block);
  if (status == DSG_OK) {
    memcpy(block, opt->start, (size_t)cols * (size_t)n * sizeof(*block));
    status = spmv_block_set(k, x, block);
  }
  free(block);
  return status;
}

/* Eigenpairs of the symmetric b x b S (overwritten by the vectors), values descending. */
static int small_eigen(const eig_fortran *f, double *S, int b, double *w, double *work, int lwork)
{
  return eig_dsyev_descending(f, S, b, w, work, lwork, "block problem");
}

/* M such that Y M has orthonormal columns, from G = Y^T Y (SVQB, Stathopoulos & Wu 2002): the
 * Gram matrix scaled to a unit diagonal, its eigendecomposition U s U^T, M = D U s^-1/2, with s
 * clamped at CHFSI_SVQB_FLOOR times its largest (a rank-deficient block keeps b columns). */
static int svqb(const eig_fortran *f, const double *G, int b, double *M, double *S, double *w,
                double *work, int lwork)
{
  double *dscale = work + lwork; /* b more doubles */
  int status;
  for (int i = 0; i < b; i++)
    dscale[i] = 1.0 / sqrt(fmax(G[i + i * b], 1e-300));
  for (int j = 0; j < b; j++)
    for (int i = 0; i < b; i++)
      S[i + j * b] = 0.5 * (G[i + j * b] + G[j + i * b]) * dscale[i] * dscale[j];
  status = small_eigen(f, S, b, w, work, lwork);
  if (status != DSG_OK)
    return status;
  const double floor = CHFSI_SVQB_FLOOR * fmax(w[0], 1e-300);
  for (int j = 0; j < b; j++) {
    const double s = 1.0 / sqrt(fmax(w[j], floor));
    for (int i = 0; i < b; i++)
      M[i + j * b] = dscale[i] * S[i + j * b] * s;
  }
  return DSG_OK;
}

/* out = L^T H L, H symmetrised, for b x b column-major (tmp b x b). */
static void congruence(const double *H, const double *L, int b, double *out, double *tmp)
{
  for (int j = 0; j < b; j++) /* tmp = H L */
    for (int i = 0; i < b; i++) {
      double s = 0.0;
      for (int q = 0; q < b; q++)
        s += 0.5 * (H[i + q * b] + H[q + i * b]) * L[q + j * b];
      tmp[i + j * b] = s;
    }
  for (int j = 0; j < b; j++)
    for (int i = 0; i < b; i++) {
      double s = 0.0;
      for (int q = 0; q < b; q++)
        s += L[q + i * b] * tmp[q + j * b];
      out[i + j * b] = s;
    }
}

/* out = A B for b x b column-major. */
static void matmul(const double *A, const double *B, int b, double *out)
{
  for (int j = 0; j < b; j++)
    for (int i = 0; i < b; i++) {
      double s = 0.0;
      for (int q = 0; q < b; q++)
        s += A[i + q * b] * B[q + j * b];
      out[i + j * b] = s;
    }
}

/* Slot y := P y M, P the projector out of the known vectors and M from SVQB, so that its columns
 * are orthonormal (w: b doubles of scratch; ws: 3 b x b). */
static int orthonormalise(spmv_block *k, const eig_fortran *f, int y, double *w, double *ws,
                          double *work, int lwork)
{
  const int b = spmv_block_width(k);
  double *G = ws, *M = ws + (size_t)b * b, *S = M + (size_t)b * b;
  int status = spmv_block_project(k, y);
  if (status == DSG_OK)
    status = spmv_block_gram(k, y, y, G);
  if (status == DSG_OK)
    status = svqb(f, G, b, M, S, w, work, lwork);
  return status == DSG_OK ? spmv_block_transform(k, y, M) : status;
}

/* Rayleigh-Ritz on slot y (A y in slot ay): y := y Q, ay := ay Q, theta descending, where Q
 * diagonalises y^T A y in the y^T y metric. */
static int rayleigh_ritz(spmv_block *k, const eig_fortran *f, int y, int ay, double *theta,
                         double *ws, double *work, int lwork)
{
  const int b = spmv_block_width(k);
  const size_t bb = (size_t)b * (size_t)b;
  double *G = ws, *H = G + bb, *M = H + bb, *S = M + bb, *Q = S + bb, *T = Q + bb;
  int status = spmv_block_gram(k, y, y, G);
  if (status == DSG_OK)
    status = spmv_block_gram(k, y, ay, H);
  if (status == DSG_OK)
    status = svqb(f, G, b, M, S, theta, work, lwork);
  if (status != DSG_OK)
    return status;
  congruence(H, M, b, S, T);
  status = small_eigen(f, S, b, theta, work, lwork);
  if (status != DSG_OK)
    return status;
  matmul(M, S, b, Q);
  status = spmv_block_transform(k, y, Q);
  return status == DSG_OK ? spmv_block_transform(k, ay, Q) : status;
}

/* An estimate of the spectral radius where the caller gives none: 12 Lanczos steps (full
 * reorthogonalisation, on the host) from the start vector; the largest |Ritz value| plus the last
 * beta (a Ritz value lies within beta of an eigenvalue, and the extreme ones converge first),
 * with 1% to spare. */
static int estimate_radius(spmv_matvec *mv, const eig_options *opt, double *radius)
{
  enum { STEPS = 12 };
  const int n = spmv_matvec_rows(mv), steps = n < STEPS ? n : STEPS;
  double *V = malloc((size_t)(steps + 1) * (size_t)n * sizeof(*V)), *wk = NULL;
  float *xf = malloc((size_t)n * sizeof(*xf)), *yf = malloc((size_t)n * sizeof(*yf));
  double T[STEPS * STEPS] = {0}, beta = 0.0, big = 0.0;
  int status = DSG_OK, m = 0;
  if (!V || !xf || !yf) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectrum estimate's vectors");
    goto out;
  }
  wk = malloc((size_t)(opt->known_count > 0 ? opt->known_count : 1) * sizeof(*wk));
  if (!wk) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectrum estimate's vectors");
    goto out;
  }
  eig_start_vector(V, n);
  for (int j = 0; j < steps && status == DSG_OK; j++) {
    double *v = V + (size_t)j * n, *w = v + n, nrm = 0.0;
    if (opt->known_count > 0)
      eig_project_known(opt, n, v, wk);
    for (int i = 0; i < n; i++)
      nrm += v[i] * v[i];
    nrm = sqrt(nrm);
    if (!(nrm > 1e-300))
      break;
    for (int i = 0; i < n; i++)
      xf[i] = (float)(v[i] /= nrm);
    if (j > 0)
      T[j + (j - 1) * STEPS] = T[(j - 1) + j * STEPS] = beta = nrm;
    status = spmv_matvec_apply(mv, xf, yf);
    for (int i = 0; i < n; i++)
      w[i] = yf[i];
    for (int pass = 0; pass < 2; pass++)
      for (int q = 0; q <= j; q++) {
        const double *u = V + (size_t)q * n;
        double h = 0.0;
        for (int i = 0; i < n; i++)
          h += u[i] * w[i];
        if (pass == 0 && q == j)
          T[j + j * STEPS] = h;
        else if (q == j)
          T[j + j * STEPS] += h;
        for (int i = 0; i < n; i++)
          w[i] -= h * u[i];
      }
    m = j + 1;
  }
  if (status == DSG_OK) {
    double nrm = 0.0, *A = malloc((size_t)m * m * sizeof(*A)), theta[STEPS], work[8 * STEPS];
    const eig_fortran *f = NULL;
    int info = 0, lwork = 8 * STEPS;
    for (int i = 0; i < n; i++)
      nrm += V[(size_t)m * n + i] * V[(size_t)m * n + i];
    beta = sqrt(nrm);
    status = A ? eig_fortran_load(&f)
               : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectrum estimate");
    if (status == DSG_OK) {
      for (int c = 0; c < m; c++)
        for (int r = 0; r < m; r++)
          A[r + c * m] = T[r + c * STEPS];
      f->dsyev("N", "U", &m, A, &m, theta, work, &lwork, &info);
      for (int i = 0; i < m; i++)
        big = fmax(big, fabs(theta[i]));
    }
    free(A);
    if (status == DSG_OK && info != 0)
      status = dsg_error_set(DSG_ERR_SOLVER, "LAPACK dsyev failed on the spectrum estimate");
  }
  *radius = 1.01 * (big + beta);
out:
  free(V);
  free(wk);
  free(xf);
  free(yf);
  return status;
}

/* The known vectors a solve returns among its pairs (the rest it computes). */
static int known_returned(const eig_options *opt)
{
  int nknown = opt->known_keep > 0 && opt->known_keep < opt->known_count ? opt->known_keep
                                                                         : opt->known_count;
  return nknown < opt->nev ? nknown : opt->nev;
}

int eig_chfsi_prepare(spmv_matvec *mv, const eig_options *opt)
{
  int m = 0, status = eig_check_options(opt, spmv_matvec_rows(mv), &m);
  const eig_fortran *f;
  spmv_block *k = NULL;
  if (status == DSG_OK) /* LAPACK loaded before the solve's clock starts */
    status = eig_fortran_load(&f);
  if (status == DSG_OK) { /* the block's kernels built and its memory checked, likewise */
    const int n = spmv_matvec_rows(mv);
    /* the solve's b (the kernels are built per b) */
    const int b = opt->ncv > 0 ? opt->ncv : eig_chfsi_block_size(opt->nev, n, opt->known_count);
    if (b >= 1 && b <= SPMV_BLOCK_MAX && b <= n)
      status = spmv_block_create(&k, mv, b, SLOTS, NULL);
  }
  spmv_block_destroy(k);
  return status;
}

/* The end of a solve's measurement: res holds its nconv pairs, the known ones first, then the
 * block's, which are slot x's first columns times scale (eig_normalize_sign's factors). One block
 * product of x into the free slot gives the block's residuals |A u - theta u| on the block's own
 * backend (and, for keep_products, the products A u, read back once), where a product per pair
 * would move each vector to the device and back; the known pairs take one product each. */
static int measure(spmv_matvec *mv, spmv_block *k, const eig_options *opt, int x, int free_slot,
                   const double *theta, const float *scale, int nknown, double *resid,
                   eig_result *res)
{
  const size_t n = (size_t)res->n;
  const int take = res->nconv - nknown;
  float *products = NULL;
  int status = DSG_OK;
  if (opt->keep_products && res->nconv > 0) {
    products = malloc((size_t)res->nconv * n * sizeof(*products));
    if (!products)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the products (%d x %zu floats)",
                           res->nconv, n);
  }
  status = eig_measure_pairs(mv, res, 0, nknown, products);
  if (status == DSG_OK && take > 0)
    status = spmv_block_product(k, free_slot, x, -1, 1.0, 0.0, 0.0);
  if (status == DSG_OK && take > 0)
    status = spmv_block_residuals(k, free_slot, x, theta, resid);
  if (status == DSG_OK && take > 0 && products) {
    float *out = products + (size_t)nknown * n;
    status = spmv_block_get(k, free_slot, take, out);
    if (status == DSG_OK) {
#pragma omp parallel for collapse(2) schedule(static)
      for (int i = 0; i < take; i++)
        for (size_t r = 0; r < n; r++)
          out[(size_t)i * n + r] *= scale[i];
    }
  }
  for (int i = 0; i < take && status == DSG_OK; i++)
    res->residuals[nknown + i] = fabs((double)scale[i]) * sqrt(resid[i]);
  if (status == DSG_OK)
    res->products = products;
  else
    free(products);
  return status;
}

int eig_chfsi_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  const int n = spmv_matvec_rows(mv);
  int m = 0, status, nknown, nev_a, b = 0, iter = 0, lwork, x = SLOT_X, ax = SLOT_AX;
  spmv_block *k = NULL;
  spmv_known known = {opt->known_count, opt->known_label, opt->known_values};
  const eig_fortran *f = NULL;
  eig_progress_state progress;
  double *theta = NULL, *ws = NULL, *work = NULL, *resid = NULL;
  float *scale = NULL; /* the factors eig_normalize_sign applied to the block's returned columns */
  spmv_timing before;
  double t0, radius = 0.0;
  const int warm = opt->start && opt->start_cols > 0;
  int given_values = 0;
  const int degree = warm ? CHFSI_DEGREE_WARM : CHFSI_DEGREE;

  memset(res, 0, sizeof(*res));
  status = eig_check_options(opt, n, &m);
  if (status == DSG_OK)
    status = eig_fortran_load(&f);
  if (status != DSG_OK)
    return status;
  nknown = known_returned(opt);
  nev_a = opt->nev - nknown;
  /* the default b from nev, not from the pairs left to compute, so that prepare (which may not
   * know the known vectors yet) builds the kernels for the same b (they are built per b) */
  b = opt->ncv > 0 ? opt->ncv : eig_chfsi_block_size(opt->nev, n, opt->known_count);
  res->n = n;
  res->nev = opt->nev;
  res->ncv = b;
  res->solver = "chfsi";
  status = eig_result_alloc(res, n, opt->nev);
  if (status != DSG_OK)
    return status;
  if (nev_a > 0 && (b > SPMV_BLOCK_MAX || b > n - opt->known_count || b < nev_a))
    return dsg_error_set(DSG_ERR_INVALID,
                         "the chfsi solver's block of %d vectors must hold the %d "
                         "wanted and at most min(%d, n - known = %d) (" DSG_PARAM("ncv") ")",
                         b, nev_a, SPMV_BLOCK_MAX, n - opt->known_count);

  before = spmv_matvec_timing(mv);
  t0 = dsg_seconds();
  eig_progress_begin(&progress, opt, nknown, b, t0);
  if (nknown > 0)
    status = eig_known_pairs(mv, opt, res->values, res->vectors, nknown);
  res->nconv = nknown;
  if (status != DSG_OK || nev_a == 0)
    goto out;
  radius = opt->spectrum_radius;
  if (!(radius > 0.0))
    status = estimate_radius(mv, opt, &radius);
  if (status != DSG_OK)
    goto out;

  lwork = 8 * b + 8;
  theta = malloc((size_t)b * sizeof(*theta));
  resid = malloc((size_t)b * sizeof(*resid));
  scale = malloc((size_t)b * sizeof(*scale));
  ws = malloc(6 * (size_t)b * (size_t)b * sizeof(*ws));
  work = malloc(((size_t)lwork + (size_t)b) * sizeof(*work));
  if (!theta || !resid || !scale || !ws || !work) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the chfsi workspace (b = %d)", b);
    goto out;
  }
  status = spmv_block_create(&k, mv, b, SLOTS, opt->known_count > 0 ? &known : NULL);
  if (status != DSG_OK)
    goto out;
  given_values = warm && opt->start_values && opt->start_cols >= b;
  /* the start block: the caller's (opt->start), or made where the block lives: column 0 the
   * documented start vector (eig_start_vector), column v the same splitmix64 stream seeded
   * EIG_START_SEED + v (also behind a start of fewer than b columns) */
  if (warm && opt->start_cols >= b)
    status = spmv_block_set(k, x, opt->start);
  else
    status = spmv_block_fill_random(k, x, EIG_START_SEED);
  if (status == DSG_OK && warm && opt->start_cols < b)
    status = set_start(k, x, opt, n, b);
  /* X orthonormal (twice from the random block, which is far from it; once from a start block)
   * and out of the known vectors' span, A X, the first Ritz values. A start block with its Ritz
   * values is only projected: they bound the first filter, which needs no orthonormal X (the
   * filtered block is orthonormalised), and no pair of a start is converged before it. */
  if (given_values) {
    if (status == DSG_OK)
      status = spmv_block_project(k, x);
    memcpy(theta, opt->start_values, (size_t)b * sizeof(*theta));
  }
  for (int pass = 0; pass < (given_values ? 0 : warm ? 1 : 2) && status == DSG_OK; pass++)
    status = orthonormalise(k, f, x, theta, ws, work, lwork);
  if (status == DSG_OK)
    status = spmv_block_product(k, ax, x, -1, 1.0, 0.0, 0.0);
  if (status == DSG_OK && !given_values)
    status = rayleigh_ritz(k, f, x, ax, theta, ws, work, lwork);
  if (status != DSG_OK)
    goto out;
  res->matvecs = b;

  for (iter = 1; iter <= opt->max_iter; iter++) {
    int nconv = 0, top = 1;
    double worst = 0.0;
    if (!(given_values && iter == 1)) { /* (a start with its values: straight to the filter) */
      status = spmv_block_residuals(k, ax, x, theta, resid);
      if (status != DSG_OK)
        goto out;
      for (int i = 0; i < nev_a; i++) {
        const double r = sqrt(resid[i]);
        /* converged from the top down */
        top = top && r <= opt->tol * fabs(theta[i]) + CHFSI_ROUNDING * FLT_EPSILON * radius;
        nconv += top;
        worst = fmax(worst, r / (opt->tol * fmax(fabs(theta[i]), EIG_EPS23)));
      }
      eig_progress_restart(&progress, res->matvecs, nconv, worst);
    }
    status = eig_cancelled(opt, res->matvecs);
    if (status != DSG_OK)
      goto out;
    if (nconv >= nev_a || iter == opt->max_iter) {
      const int take = nconv >= nev_a ? nev_a : nconv;
      float *out = res->vectors + (size_t)nknown * (size_t)n;
      for (int i = 0; i < take; i++)
        res->values[nknown + i] = theta[i];
      status = spmv_block_get(k, x, take, out);
      if (status != DSG_OK)
        goto out;
#pragma omp parallel for schedule(dynamic, 1)
      for (int i = 0; i < take; i++)
        scale[i] = eig_normalize_sign(out + (size_t)i * (size_t)n, n);
      res->nconv = nknown + take;
      if (opt->keep_block) {
        res->block = malloc((size_t)b * (size_t)n * sizeof(*res->block));
        if (!res->block) {
          status = dsg_error_set(DSG_ERR_NOMEM, "cannot keep a block of %d x %d floats", b, n);
          goto out;
        }
        res->block_values = malloc((size_t)b * sizeof(*res->block_values));
        if (!res->block_values) {
          status = dsg_error_set(DSG_ERR_NOMEM, "cannot keep a block's %d values", b);
          goto out;
        }
        memcpy(res->block_values, theta, (size_t)b * sizeof(*theta));
        status = spmv_block_get(k, x, b, res->block);
        res->block_cols = status == DSG_OK ? b : 0;
      }
      break;
    }

    /* the filter: T_d on [lo, c] mapped to [-1, 1], scaled to 1 at theta[0] (the recurrence
     * p_j+1 = 2 s_j t p_j - s_j s_j-1 p_j-1 with t = (A - cen) / e, s_j = 1 / (2 tt - s_j-1),
     * s_0 = 1 / tt, tt = t(theta[0])), on X with p_1 from A X; then Y = p_d(A) X */
    {
      const double lo = -radius, hi = theta[0];
      double c = theta[b - 1];
      if (!(c > lo))
        c = lo + 1e-3 * (hi - lo);
      if (!(c < hi)) /* every Ritz value equal: no gap to filter by (converges next round) */
        c = hi - 1e-3 * (hi - lo);
      const double cen = 0.5 * (c + lo), e = 0.5 * (c - lo), tt = (hi - cen) / e;
      double s_prev = 1.0 / tt, s;
      int cur = x == SLOT_Y ? SLOT_X : SLOT_Y, prev = x;
      const int d = growth_degree(warm && iter > 1 ? polish_degree(iter, degree) : degree, theta[0],
                                  theta[nev_a - 1], cen, e);
      status = spmv_block_axpby(k, cur, s_prev / e, ax, -s_prev * cen / e, x);
      for (int j = 1; j < d && status == DSG_OK; j++) {
        s = 1.0 / (2.0 * tt - s_prev);
        /* Y_j+1 into prev's slot: the two slots by turns */
        status =
            spmv_block_product(k, prev, cur, prev, 2.0 * s / e, -2.0 * s * cen / e, -s * s_prev);
        const int t = cur;
        cur = prev;
        prev = t;
        s_prev = s;
      }
      res->matvecs += (long)(d - 1) * b;
      if (status != DSG_OK)
        goto out;
      /* the filtered block is in `cur`; X's slot is free. Orthonormalise, then Rayleigh-Ritz */
      status = orthonormalise(k, f, cur, theta, ws, work, lwork);
      if (status == DSG_OK)
        status = spmv_block_product(k, ax, cur, -1, 1.0, 0.0, 0.0);
      res->matvecs += b;
      if (status == DSG_OK)
        status = rayleigh_ritz(k, f, cur, ax, theta, ws, work, lwork);
      if (status != DSG_OK)
        goto out;
      x = cur;
    }
  }
  res->iterations = iter < opt->max_iter ? iter : opt->max_iter;

out:
  res->solve_s = dsg_seconds() - t0;
  {
    spmv_timing after = spmv_matvec_timing(mv);
    spmv_block_timing bt = {0};
    if (k)
      bt = spmv_block_get_timing(k);
    /* the products: the block's plus the known vectors' Rayleigh quotients */
    res->matvec.calls = bt.products + (after.calls - before.calls);
    res->matvec.kernel_s = bt.matvec_s + (after.kernel_s - before.kernel_s);
    res->matvec.transfer_s = bt.transfer_s + (after.transfer_s - before.transfer_s);
    res->matvec.host_s = after.host_s - before.host_s;
    res->matvec.total_s = res->matvec.kernel_s + res->matvec.transfer_s + res->matvec.host_s;
    res->basis.steps = bt.products / (b > 0 ? b : 1);
    res->basis.matvec_s = bt.matvec_s;
    res->basis.orth_s = bt.vector_s + bt.reduce_s;
    res->basis.transfer_s = bt.transfer_s;
    res->basis.launches = bt.launches;
    res->host_s = res->solve_s - res->matvec.total_s - res->basis.orth_s;
  }
  /* the residuals (not counted in the solve's time or products, as eig_finish's are not) */
  if (status == DSG_OK && nev_a > 0)
    status =
        measure(mv, k, opt, x, x == SLOT_X ? SLOT_Y : SLOT_X, theta, scale, nknown, resid, res);
  spmv_block_destroy(k);
  free(theta);
  free(resid);
  free(scale);
  free(ws);
  free(work);
  if (status != DSG_OK)
    return status;
  res->converged = res->nconv == opt->nev;
  eig_progress_done(&progress, res->matvecs, res->nconv);
  /* no block pair wanted (every pair known): the known pairs measured as every solver's */
  return nev_a > 0 ? eig_finish_measured(opt, res) : eig_finish(mv, opt, res);
}
