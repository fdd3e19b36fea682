/* What the bench's three units share: the result rows, the result files' policy and the order
 * of the solvers. Not installed; nothing outside app/bench includes it. */
#ifndef DIASEG_BENCH_INTERNAL_H
#define DIASEG_BENCH_INTERNAL_H

#include <stdio.h>

#include "bench.h"

/* ---- results (measure.c fills them, tables.c and chart.c show them) ---- */

/* One table row: an input on one backend (and kernel), with one solver or none. */
typedef struct bench_row {
  char input[64];
  int width, height, n, ndiag;
  char backend[32];      /* "cpu", "opencl:INDEX" */
  char device[200];      /* the device's full name, and its platform or thread count */
  char device_short[64]; /* the chart's name: "NVIDIA H200", "PoCL cpu", "C path, 16 threads" */
  char kernel[32];
  char solver[16];              /* "arpack", "lanczos", or "" (SpMV only) */
  double check_error;           /* max row error of the product vs the reference */
  double spmv_median, spmv_min; /* seconds */
  double gflops, gbs, copy_gbs, bound_pct;
  int solved, converged, nconv;
  long matvecs;
  double solve_s, mv_kernel_s, mv_transfer_s, mv_host_s, eig_host_s, max_residual;
  double lambda_last;         /* the nev-th eigenvalue, to compare backends */
  double orth_s, other_dev_s; /* Lanczos: Gram-Schmidt kernels; projection, norms, restarts */
  long steps, launches;       /* Lanczos: expansion steps, kernel launches */
  long second_passes;         /* Lanczos: Gram-Schmidt second passes (DGKS) */
  double speedup_spmv, speedup_solve; /* against the C path on the same input */
} bench_row;

typedef struct bench {
  const app_config *cfg;
  bench_row *rows;
  int nrows, cap;
  int skipped; /* OpenCL device and kernel pairs that could not be set up */
} bench;

/* The solvers in the order bench runs them and the chart groups them: the eigensolver table
 * (eig_solver_at) from its last row to its first. The table lists the default (lanczos) first;
 * bench has always put the ARPACK rows, the reference, before the Lanczos ones. */
int bench_solver_count(void);
const char *bench_solver_name(int i);

/* ---- result files (tables.c) ---- */

/* A bench output file, staged like every diaseg output (app_out): written to a temporary in
 * the file's folder and renamed into place only when complete, so an error, a full disk or a
 * signal never leaves a truncated JSON, CSV or chart. */
typedef struct bench_file {
  app_out *out;
  FILE *fp;
  const char *name;
  const char *direct; /* a path that is not a regular file (/dev/stdout, a FIFO): staged in a
                       * private folder, then written to it, never renamed over it */
  char tmpdir[64];
} bench_file;

/* Stages a file for path: write it as f->name in f->out (app_out_open, app_out_png, ...).
 * Returns DSG_OK, DSG_ERR_INVALID (path names a folder), DSG_ERR_IO or DSG_ERR_NOMEM. */
int bench_file_open(bench_file *f, const char *path);
/* Closes the file if open (checking every write), renames it into place (or, for a path that
 * is not a regular file, writes its bytes there) and clears f. Returns status if it is an error,
 * else the outcome of the commit. */
int bench_file_commit(bench_file *f, int status);
/* Checks that path can be written (stages a probe and drops it), so that an unwritable --json,
 * --csv or --chart fails before the measurements. Returns DSG_OK or the error. */
int bench_file_probe(const char *path);

/* ---- outputs ---- */

/* The table (tables.c), with a note per input and device below it. */
void bench_print_table(const bench *b, FILE *out);
/* --json FILE ("-": standard output) and --csv FILE (tables.c). */
int bench_write_json(const bench *b, const char *path);
int bench_write_csv(const bench *b, const char *path);
/* --chart FILE: SVG, or PNG when the name ends in .png (chart.c). */
int bench_write_chart(const bench *b, const char *path);

#endif /* DIASEG_BENCH_INTERNAL_H */
