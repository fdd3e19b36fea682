/* bench: SpMV and eigensolve timings per backend against the measured copy bandwidth.
 *
 * measure.c  inputs through the library (dsg_problem_create), the products through spmv, the
 *            solves through dsg_problem_solve_on: what `diaseg segment` runs
 * tables.c   the table on the terminal, --json and --csv, the result files' policy
 * chart.c    --chart: the SVG or PNG bar chart
 */
#ifndef DIASEG_BENCH_H
#define DIASEG_BENCH_H

#include "cli.h"

/* Runs the bench command: tables on stdout, --json / --csv / --chart files. */
int app_bench(const app_config *cfg);

#endif
