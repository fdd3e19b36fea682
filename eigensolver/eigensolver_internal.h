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
/* Fills res->residuals[k] = |A u_k - lambda_k u_k|_2 for k < res->nconv (one product each). */
int eig_residuals(spmv_matvec *mv, eig_result *res);

/* x -= sum_c (v_c . x) v_c over the known vectors of opt (work: known_count doubles). */
void eig_project_known(const eig_options *opt, int n, double *x, double *work);
/* The first `count` known vectors of opt as eigenpairs (Rayleigh quotients) into values/vectors. */
int eig_known_pairs(spmv_matvec *mv, const eig_options *opt, double *values, float *vectors,
                    int count);
/* The end of every solve: sorts the pairs, measures their residuals, and turns a solve that did
 * not converge (res->converged unset) into DSG_ERR_NOCONV with its message. */
int eig_finish(spmv_matvec *mv, const eig_options *opt, eig_result *res);
/* Sorts res's nconv pairs by descending value. */
int eig_sort_pairs(eig_result *res);

/* Ritz vectors kept at a thick restart of an m-vector basis with nconv of the nev wanted pairs
 * converged: nev + min(nconv, (m - nev) / 2), at most m - 1 (ARPACK's rule). */
void eig_lanczos_default_keep(int m, int nev, int nconv, int *keep);

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

#endif
