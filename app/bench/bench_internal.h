/* What the bench's three units share: the result rows, the result files' policy and the order
 * of the solvers. Not installed; nothing outside app/bench includes it. */
#ifndef DIASEG_BENCH_INTERNAL_H
#define DIASEG_BENCH_INTERNAL_H

#include <stdio.h>

#include "bench.h"

/* ---- results (measure.c fills them, tables.c and chart.c show them) ---- */

/* What became of a row's eigensolve (--e2e: of its segment run). */
typedef enum bench_state {
  BENCH_STATE_NONE,        /* not asked for (--spmv-only) */
  BENCH_STATE_DONE,        /* measured (a solve stopped at --max-iter too: see converged) */
  BENCH_STATE_BUDGET,      /* stopped when it went over --budget */
  BENCH_STATE_SKIPPED,     /* not run: on this input a backend with a faster SpMV went over */
  BENCH_STATE_INTERRUPTED, /* a signal stopped it */
  BENCH_STATE_COUNT
} bench_state;
/* The states' names in the JSON and the CSV: "none", "done", "over_budget", "skipped",
 * "interrupted"; and in the table's solve column ("-", "", "budget", "skipped", "stopped"). */
const char *bench_state_name(bench_state s);
const char *bench_state_cell(bench_state s);

/* The stages of --e2e, in the order they run: each a column of the table and the CSV, a field
 * of the JSON, a colour of the chart. Their seconds add up to the row's total. */
enum {
  BENCH_STAGE_CONTOURS,   /* the boundary detector (contour cues) */
  BENCH_STAGE_AFFINITY,   /* the features, W and N, without the detector */
  BENCH_STAGE_SETUP,      /* the components, the backend (device, kernels, upload) */
  BENCH_STAGE_SOLVE,      /* every eigensolve, speck carving rounds included */
  BENCH_STAGE_GROUPING,   /* the hierarchy or k-means */
  BENCH_STAGE_RESOLUTION, /* shrinking to the working size, labels back to the image's */
  BENCH_STAGE_WRITE,      /* the default outputs, staged and committed (bench's copy of them) */
  BENCH_STAGE_COUNT
};
/* "contours", "affinity", "setup", "solve", "grouping", "resolution", "write" */
const char *bench_stage_name(int stage);

/* One table row: an input on one backend (and kernel), with one solver or none. */
typedef struct bench_row {
  char input[64];
  int width, height, n, ndiag;
  int work_width, work_height; /* --e2e: the size it was segmented at */
  char backend[32];            /* "cpu", "opencl:INDEX" */
  char device[200];            /* the device's full name, and its platform or thread count */
  char device_short[64]; /* the chart's name: "NVIDIA H200", "PoCL cpu", "C path, 16 threads" */
  char kernel[32];
  char solver[16];              /* "arpack", "lanczos", or "" (SpMV only) */
  double check_error;           /* max row error of the product vs the reference */
  int runs;                     /* timed products: --repeat, or fewer when --budget ran out */
  double spmv_median, spmv_min; /* seconds */
  double gflops, gbs, copy_gbs, bound_pct;
  double copy_spread; /* the host copies: (max - min) / median of their bandwidths; NAN: none */
  bench_state state;
  int solved, converged, nconv;
  long matvecs;
  double solve_s, mv_kernel_s, mv_transfer_s, mv_host_s, eig_host_s, max_residual;
  double solve_wall_s;        /* the call's own time: speck rounds and residuals included */
  double lambda_last;         /* the nev-th eigenvalue, to compare backends */
  double orth_s, other_dev_s; /* Lanczos: Gram-Schmidt kernels; projection, norms, restarts */
  long steps, launches;       /* Lanczos: expansion steps, kernel launches */
  long second_passes;         /* Lanczos: Gram-Schmidt second passes (DGKS) */
  double speedup_spmv, speedup_solve; /* against the C path on the same input */
  double stage_s[BENCH_STAGE_COUNT];  /* --e2e: seconds per stage */
  double total_s, speedup_total;      /* --e2e: their sum; the C path's over this one's */
} bench_row;

/* A warning of the run: on standard error when it arises, and in the table's notes and the
 * JSON ("kind": "load", "copy_spread", "bound"). */
typedef struct bench_warning {
  char kind[16];
  char message[400];
} bench_warning;

enum { BENCH_MAX_WARNINGS = 64 };

typedef struct bench {
  const app_config *cfg;
  bench_row *rows;
  int nrows, cap;
  int skipped;     /* OpenCL device and kernel pairs that could not be set up */
  int first;       /* the current input's first row */
  int interrupted; /* the signal that stopped the run (0: none) */
  double load;     /* the 1-minute load average when it began (NAN: unknown) */
  int load_override;
  int cores; /* online */
  bench_warning warnings[BENCH_MAX_WARNINGS];
  int nwarnings;
} bench;

/* The solvers in the order bench runs them and the chart groups them: the eigensolver table
 * (eig_solver_at) from its last row to its first. The table lists the default (lanczos) first;
 * bench has always put the ARPACK rows, the reference, before the Lanczos ones. */
int bench_solver_count(void);
const char *bench_solver_name(int i);

/* Whether row's SpMV beat its copy bound (%bw > 100): a suspect figure (a matrix that fits in
 * the caches, or a busy host), marked in the table and the JSON. */
int bench_bound_suspect(const bench_row *r);

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

/* The table (tables.c), with a note per input and device below it, and the run's warnings. */
void bench_print_table(const bench *b, FILE *out);
/* --json FILE ("-": standard output) and --csv FILE (tables.c). */
int bench_write_json(const bench *b, const char *path);
int bench_write_csv(const bench *b, const char *path);
/* --chart FILE: SVG, or PNG when the name ends in .png (chart.c). */
int bench_write_chart(const bench *b, const char *path);

#endif /* DIASEG_BENCH_INTERNAL_H */
