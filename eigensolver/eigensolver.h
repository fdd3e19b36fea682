/* eigensolver: the largest eigenpairs of a symmetric operator given as an spmv_matvec.
 *
 * Three solvers, chosen from a table (eig_solver_find): diaseg's thick-restart Lanczos
 * (lanczos.c), its block Chebyshev-filtered subspace iteration (chfsi.c) and ARPACK-ng
 * (arpack.c); what they share is in common.c.
 * eig_arpack_solve drives ARPACK-ng's symmetric implicitly restarted Lanczos (dsaupd/dseupd)
 * through reverse communication; every product y = A x goes through the matvec interface, so the
 * same driver runs on the C path and on OpenCL devices. ARPACK keeps global state and is not
 * reentrant: calls are serialised by a lock in this module.
 *
 * Determinism: the start vector is fixed (see EIG_START_SEED and docs/PIPELINE.md) and every
 * eigenvector is returned with unit 2-norm and the sign that makes its entry of largest magnitude
 * (the first such entry) positive.
 */
#ifndef DIASEG_EIGENSOLVER_H
#define DIASEG_EIGENSOLVER_H

#include <signal.h>

#include "spmv.h"

/* Seed of the splitmix64 stream that makes the start vector r_i = u_i - 0.5, u_i in [0, 1). */
#define EIG_START_SEED 0x6469617365677631ull /* "diasegv1" */

/* A solver's report of its progress (eig_options.progress), from the solving thread. */
typedef struct eig_progress {
  long matvecs; /* products with the operator so far; never decreases */
  int nconv;    /* pairs converged, known ones included: the most seen so far, so it never
                 * decreases (a Ritz pair's residual estimate can rise again after a restart) */
  int nev;      /* pairs wanted */
  int restarts; /* restarts so far */
  /* the total products the solve is expected to take (the model: eig_progress_estimate in
   * eigensolver_internal.h): from the rate at which the slowest wanted pair's residual estimate
   * falls over the last restarts, else from the products per converged pair; >= matvecs,
   * <= max_iter * ncv; the median of the last 5 restarts' totals; -1 while estimating: until
   * the third restart, or until a pair converged or the residuals began to fall */
  long matvecs_estimate;
  double elapsed_s; /* since the solve began */
  int done;         /* 1 on the last report: the solve stopped (converged or at max_iter) */
} eig_progress;

/* Called every progress_interval seconds of a solve, and once when it stops (done). */
typedef void (*eig_progress_fn)(void *data, const eig_progress *p);

typedef struct eig_options {
  int nev;      /* eigenpairs wanted, 1 <= nev < n */
  int ncv;      /* Lanczos basis size; 0 picks min(n, max(2 nev + 1, 32)); nev < ncv <= n */
  double tol;   /* convergence: |A u - theta u| <= tol |theta| (ARPACK's relative test) */
  int max_iter; /* restart limit (ARPACK's mxiter) */
  /* Optional known eigenvectors with disjoint supports, e.g. the vectors D^1/2 1_C of the
   * connected components C of a normalised affinity, whose eigenvalue 1 has the multiplicity of
   * the component count, which a Krylov method with one start vector cannot resolve.
   * Known vector c has the entries known_values[i] on the rows with known_label[i] == c and zero
   * elsewhere (unit norm each; labels in [0, known_count), -1 for rows in none). They are
   * projected out of the Lanczos operator; the first known_keep of them (0: all) are returned
   * among the results, with their Rayleigh quotients as eigenvalues. The others (e.g. isolated
   * specks, whose eigenvalue-1 indicators carry no segmentation) are only kept out of the way. */
  int known_count;
  int known_keep;
  const int *known_label;
  const float *known_values;
  /* Optional: the vectors to return for the first known_keep pairs, if not the projected ones
   * (each a unit vector in the span of the known vectors, disjoint supports, label -1 = none).
   * diaseg returns whole components here while it projects them out with specks carved. */
  const int *known_return_label;
  const float *known_return_values;
  const volatile sig_atomic_t *cancel; /* optional: nonzero asks the solve to stop */
  eig_progress_fn progress;            /* optional */
  void *progress_data;
  double progress_interval; /* seconds between reports; 0: 0.5; < 0: after every restart */
  int lanczos_unfused; /* eig_lanczos_solve: compute |w| in a pass of its own (for measuring) */
  /* eig_chfsi_solve: every eigenvalue lies in [-spectrum_radius, spectrum_radius] (a normalised
   * affinity: 1); 0 (the default): unknown, estimated with a few Lanczos steps */
  double spectrum_radius;
  /* eig_chfsi_solve (the other solvers ignore them): an optional start block of start_cols
   * columns of n floats (column j at start + j * n), e.g. a coarser problem's block brought to
   * this one (app/lib/coarse.c); it takes the place of the first min(start_cols, b) columns of the
   * random start block and the filter's degree is CHFSI_DEGREE_WARM (docs/PIPELINE.md,
   * "Coarse-to-fine starts"). start_values (optional, with start_cols >= b): the start block's Ritz
   * values (a coarser problem's, descending), which bound the first filter in place of a
   * Rayleigh-Ritz step on the start. keep_block: res->block and res->block_values get the final
   * block (every column, converged or not) and its Ritz values, for a finer problem to start
   * from. */
  const float *start;
  const double *start_values;
  int start_cols;
  int keep_block;
  /* res->products gets A u of every returned pair: the products the residuals are measured with
   * (for a caller that needs A u without the matrix; diaseg's spectral term) */
  int keep_products;
} eig_options;

/* Fills *opt with the defaults (nev 8, ncv auto, tol 1e-5, max_iter 1000, no cancel/progress). */
void eig_options_init(eig_options *opt);
/* The basis size ncv 0 stands for: min(n, max(2 nev + 1, 32)). */
int eig_default_ncv(int nev, int n);
/* The chfsi solver's default block size for nev wanted pairs of an operator of order n with
 * `known` known vectors: nev + max(8, nev / 2), at most SPMV_BLOCK_MAX and n - known. */
int eig_chfsi_block_size(int nev, int n, int known);

typedef struct eig_result {
  int n;              /* order of the operator */
  int nev;            /* eigenpairs asked for */
  int ncv;            /* basis size used */
  int nconv;          /* eigenpairs returned (converged); < nev when the iteration limit hit */
  int converged;      /* 1 when nconv == nev */
  int iterations;     /* restarts (ARPACK iparam[2] on exit) */
  long matvecs;       /* products with the operator during the solve (residuals excluded) */
  double *values;     /* nconv eigenvalues, descending */
  float *vectors;     /* nconv unit eigenvectors, vector i at vectors + i * n */
  double *residuals;  /* nconv values |A u - lambda u|_2, one more product each after the solve */
  double solve_s;     /* wall time of the solve (residual products excluded) */
  spmv_timing matvec; /* the matvec time inside solve_s */
  double host_s;      /* the rest of solve_s: ARPACK's orthogonalisation and restarts; for the
                       * Lanczos solver the host's share (launches, waits, the small problem) */
  spmv_basis_timing basis; /* eig_lanczos_solve: time per kind of basis operation */
  const char *solver;      /* "arpack" or "lanczos" */
  float *block;            /* eig_chfsi_solve with keep_block: block_cols columns of n, else NULL */
  double *block_values;    /* ... and their Ritz values, descending */
  int block_cols;
  float *products; /* keep_products: nconv vectors A u_i of n floats (the residuals'), else NULL */
} eig_result;

/* Computes the opt->nev largest (algebraic) eigenpairs of the symmetric operator mv.
 * Returns DSG_OK when all converged; DSG_ERR_NOCONV when the restart limit stopped it (res holds
 * the nconv pairs that did converge, possibly none: a partial result, flagged); DSG_ERR_INVALID
 * for bad options; DSG_ERR_SOLVER for an ARPACK failure; DSG_ERR_INTERRUPTED when *cancel was
 * set; or the matvec's error. On every return res is valid for eig_result_free(). */
int eig_arpack_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res);

/* The same problem with diaseg's thick-restart Lanczos (Wu & Simon) with full
 * reorthogonalisation, on mv's backend: for an OpenCL matvec every vector of length n stays in
 * device memory. Same options, results and return codes as eig_arpack_solve; ncv is the basis
 * size m (the default max(2 nev + 1, 32)). */
int eig_lanczos_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res);

/* The same problem with diaseg's block solver, Chebyshev-filtered subspace iteration
 * (eigensolver/chfsi.c), on mv's backend's blocks (spmv_block): ncv is the block size b
 * (0: nev + max(8, nev / 2), at most SPMV_BLOCK_MAX and n minus the known vectors). Same
 * options, results and return codes as eig_arpack_solve. */
int eig_chfsi_solve(spmv_matvec *mv, const eig_options *opt, eig_result *res);
/* Gets mv ready for eig_chfsi_solve before the solve: LAPACK loaded, and the blocks' kernels
 * built and their memory checked (a block created and freed). Returns DSG_OK or the error. */
int eig_chfsi_prepare(spmv_matvec *mv, const eig_options *opt);

/* Gets mv ready for eig_lanczos_solve with these options before the solve: validates them
 * and, on an OpenCL matvec, builds the solver's kernels and checks that its basis fits the
 * device (spmv_matvec_prepare_basis). Returns DSG_OK, DSG_ERR_INVALID for bad options, or
 * the device's error (a caller may then fall back to the C path). */
int eig_lanczos_prepare(spmv_matvec *mv, const eig_options *opt);

/* ---- the solvers, as a table ---------------------------------------------------------------
 * Callers choose a solver by name; a new solver is a row in eigensolver/common.c and its file. */
typedef struct eig_solver {
  const char *name;        /* "lanczos", "arpack" */
  const char *description; /* one line, for help texts */
  int (*solve)(spmv_matvec *mv, const eig_options *opt, eig_result *res);
  /* optional (NULL: nothing to do): gets mv ready before the solve's clock starts, so that a
   * device that cannot run the solver says so before any work */
  int (*prepare)(spmv_matvec *mv, const eig_options *opt);
} eig_solver;

/* The solver called `name`. Returns DSG_OK, or DSG_ERR_INVALID with a message listing the names. */
int eig_solver_find(const char *name, const eig_solver **out);
/* The table: solvers 0 .. eig_solver_count() - 1 (the first is the default). */
int eig_solver_count(void);
const eig_solver *eig_solver_at(int i);

/* Frees the arrays of res (not res itself) and zeroes it. */
void eig_result_free(eig_result *res);

/* Normalises u (length n) to unit 2-norm and flips its sign so that its first entry of largest
 * magnitude is positive; returns the factor u was multiplied by (1 for a zero vector). Exposed
 * for other solvers and tests. */
float eig_normalize_sign(float *u, int n);

#endif /* DIASEG_EIGENSOLVER_H */
