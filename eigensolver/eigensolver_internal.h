/* Private to eigensolver/: pieces shared by the solvers. */
#ifndef DIASEG_EIGENSOLVER_INTERNAL_H
#define DIASEG_EIGENSOLVER_INTERNAL_H

#include "eigensolver.h"

#include <arpack.h>

/* Validates opt for an operator of order n and resolves ncv (0 = automatic) into *ncv_out. */
int eig_check_options(const eig_options *opt, int n, int *ncv_out);
/* The documented start vector: r_i = u_i - 0.5 from splitmix64 seeded with EIG_START_SEED. */
void eig_start_vector(double *r, int n);
/* Allocates values, residuals and vectors of res for nev pairs of length n. */
int eig_result_alloc(eig_result *res, int n, int nev);
/* Fills res->residuals[k] = |A u_k - lambda_k u_k|_2 for k < res->nconv (one product each);
 * keep_products: res->products keeps the products A u_k. */
int eig_residuals(spmv_matvec *mv, int keep_products, eig_result *res);
/* The same for pairs first .. first + count - 1, their products into products + k n where
 * products is not NULL. */
int eig_measure_pairs(spmv_matvec *mv, eig_result *res, int first, int count, float *products);

/* x -= sum_c (v_c . x) v_c over the known vectors of opt (work: known_count doubles). */
void eig_project_known(const eig_options *opt, int n, double *x, double *work);
/* The first `count` known vectors of opt as eigenpairs (Rayleigh quotients) into values/vectors. */
int eig_known_pairs(spmv_matvec *mv, const eig_options *opt, double *values, float *vectors,
                    int count);
/* The end of every solve: measures the pairs' residuals (eig_residuals), then
 * eig_finish_measured. */
int eig_finish(spmv_matvec *mv, const eig_options *opt, eig_result *res);
/* The end of a solve that measured its pairs' residuals (and, for opt->keep_products, their
 * products) itself: sorts the pairs, and turns a solve that did not converge (res->converged
 * unset) into DSG_ERR_NOCONV with its message. */
int eig_finish_measured(const eig_options *opt, eig_result *res);
/* Sorts res's nconv pairs by descending value, their residuals and products (if any) along. */
int eig_sort_pairs(eig_result *res);

/* Ritz vectors kept at a thick restart of an m-vector basis with nconv of the nev wanted pairs
 * converged: nev + min(nconv, (m - nev) / 2), at most m - 1 (ARPACK's rule). */
void eig_lanczos_default_keep(int m, int nev, int nconv, int *keep);

/* ---- progress (common.c) ----------------------------------------------------------------
 * What the solvers share to report eig_progress: the monotone counts, the timing of the reports
 * and the model of the total products. */
#define EIG_PROGRESS_WINDOW 6 /* restarts the convergence rate is fit over */
#define EIG_PROGRESS_MEDIAN 5 /* the estimate reported: the median of the last restarts' */
/* DBL_EPSILON^(2/3): ARPACK's floor under |theta| in its convergence test (dsconv) */
#define EIG_EPS23 3.6688e-11

typedef struct eig_progress_state {
  const eig_options *opt;
  eig_progress rec;                 /* the counts reported so far */
  double next;                      /* when the next timed report is due (dsg_seconds) */
  double t0;                        /* the solve's start */
  int nknown;                       /* known pairs: converged from the start */
  long max_matvecs;                 /* max_iter * ncv: no solve takes more */
  long estimate;                    /* the median of recent[]; -1: none yet */
  long recent[EIG_PROGRESS_MEDIAN]; /* the model's totals at the last restarts */
  int nrecent;
  int count;                             /* restarts in the window, oldest first: */
  long at[EIG_PROGRESS_WINDOW];          /* products at the restart */
  double log_worst[EIG_PROGRESS_WINDOW]; /* log of the worst ratio then (see below) */
} eig_progress_state;

/* Starts the reports of a solve of opt->nev pairs, nknown of them known, basis size ncv, begun
 * at t0 (dsg_seconds). Nothing is reported without opt->progress. */
void eig_progress_begin(eig_progress_state *s, const eig_options *opt, int nknown, int ncv,
                        double t0);
/* After a restart: nconv of the computed (not known) wanted pairs have converged now, and
 * worst = max over the computed wanted pairs of |residual estimate| / (tol |theta|) (<= 1: all
 * converged; not finite: unknown, no sample for the model). Updates the counts and the model
 * (bounded by max_iter restarts as long as the recent ones; where it has no estimate after
 * having had one, the last one stays) and reports when a report is due (at every restart with
 * a negative progress_interval) the median of the model's last EIG_PROGRESS_MEDIAN totals: the
 * fit's slope is noisy from one restart to the next, and the median steadies the total (on the
 * solves below, the typical change from one restart's total to the next fell from 50% to 19%)
 * without making it less accurate. */
void eig_progress_restart(eig_progress_state *s, long matvecs, int nconv, double worst);
/* Between restarts: reports when a report is due. */
void eig_progress_tick(eig_progress_state *s, long matvecs);
/* The last report of a solve that stopped by itself (converged, or at max_iter) with nconv
 * pairs, known ones included. */
void eig_progress_done(eig_progress_state *s, long matvecs, int nconv);

/* The model of the total products of a solve, from the last `count` restarts (oldest first):
 * at[i] products and log_worst[i] = log of the worst ratio |residual estimate| / (tol |theta|)
 * of the wanted pairs at restart i. A restarted Krylov method converges linearly: each
 * product cuts a pair's residual by a roughly constant factor, the one set by the gap between
 * its eigenvalue and the unwanted part of the spectrum, so log_worst falls on a line in the
 * products, and the solve stops when it reaches 0. The slope is fit by least squares over the
 * window (count >= 3), and the total is at[count - 1] + log_worst[count - 1] / -slope. Where the
 * line does not fall (early restarts, where the Ritz values still move), the products per
 * converged pair so far, at[count - 1] * nwanted / nconv, if a pair has converged; else -1
 * (estimating). Bounded by [at[count - 1], max_matvecs]; all converged: at[count - 1].
 * Measured on 40 solves of the four sample images (160 x 120 to 320 x 240, nev 4 to 24, both
 * solvers; every restart's estimate against the solve's total): in the second half of a solve
 * over 80% of the estimates are within 2x of the total, the typical error a factor 1.5; in the
 * first half a factor 1.6, mostly under early and over in the middle. Products per converged
 * pair alone did worse (a factor 3.6 early, 2 late): pairs converge late, several at once.
 * Where the spectrum is clustered (a path graph) the residuals stall and then fall at once, and
 * the estimate runs several times over while they stall. */
long eig_progress_estimate(const long *at, const double *log_worst, int count, int nconv,
                           int nwanted, long max_matvecs);

/* The Fortran libraries' functions the solvers call, loaded on first use (fortran.c). */
typedef struct eig_fortran {
  void (*dsyev)(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
                double *w, double *work, const int *lwork, int *info);
  __typeof__(dsaupd_c) *dsaupd; /* ARPACK-ng's C interface (arpack.h): declared, not linked */
  __typeof__(dseupd_c) *dseupd;
  /* NULL unless the BLAS is OpenBLAS */
  int (*openblas_get_parallel)(void);
  void (*openblas_set_num_threads)(int);
  int (*openblas_get_num_threads)(void);
} eig_fortran;

/* Loads BLAS, LAPACK and ARPACK-ng once per process (after checking that the address space can
 * hold what the BLAS maps when it starts) and gives their functions. Returns DSG_OK, or
 * DSG_ERR_LIMIT / DSG_ERR_NOMEM / DSG_ERR_SOLVER with the message, every time it is called. */
int eig_fortran_load(const eig_fortran **out);

/* DSG_ERR_INTERRUPTED with its message (after `matvecs` products) when opt->cancel is set, else
 * DSG_OK: every solver's check between its steps. */
int eig_cancelled(const eig_options *opt, long matvecs);

/* Eigenpairs of the symmetric n x n A (column-major, overwritten by the vectors) with LAPACK's
 * dsyev (common.c): values descending into w, vectors as A's columns in the same order. `what`
 * names the matrix in the error message. Returns DSG_OK or DSG_ERR_SOLVER. */
int eig_dsyev_descending(const eig_fortran *f, double *A, int n, double *w, double *work, int lwork,
                         const char *what);

#endif
