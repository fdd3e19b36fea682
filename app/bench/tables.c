/* bench's figures as text: the table on the terminal, --json and --csv, and the policy every
 * result file follows (staged and renamed into place; a path that is not a regular file, such as
 * /dev/stdout or a FIFO, written through). The table's and the CSV's numbers are columns
 * (name, width, value from a row), one list per mode and output. */
#include "bench_internal.h"
#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- result files ---- */

/* Drops f's staged set (uncommitted files are removed) without a second signal in between:
 * bench writes its files after a first signal too, and a second one removes what is staged. */
static void file_drop(bench_file *f)
{
  app_signals_hold();
  app_signals_guard(NULL);
  app_out_destroy(f->out);
  f->out = NULL;
  app_signals_release(0);
}

/* app_out_begin, the set then guarded: a second signal removes its staged file and exits */
static int file_begin(bench_file *f, const char *dir)
{
  int status = app_out_begin(&f->out, dir);
  if (status == DSG_OK)
    app_signals_guard(f->out);
  return status;
}

int bench_file_open(bench_file *f, const char *path)
{
  const char *slash = strrchr(path, '/');
  char *dir = NULL;
  struct stat st;
  int status;
  memset(f, 0, sizeof(*f));
  f->name = slash ? slash + 1 : path;
  if (!*f->name)
    return dsg_error_set(DSG_ERR_INVALID, "'%s' names a folder, not a file", path);
  if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
    snprintf(f->tmpdir, sizeof(f->tmpdir), "/tmp/diaseg-bench-XXXXXX");
    if (!mkdtemp(f->tmpdir))
      return dsg_error_set(DSG_ERR_IO, "cannot create a folder in /tmp: %s", strerror(errno));
    f->direct = path;
    return file_begin(f, f->tmpdir);
  }
  if (slash) {
    dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!dir)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
  }
  status = file_begin(f, dir ? dir : ".");
  free(dir);
  return status;
}

int bench_file_commit(bench_file *f, int status)
{
  if (f->fp) {
    int st = app_out_close(f->out, f->fp);
    status = status == DSG_OK ? st : status;
  }
  if (status == DSG_OK) {
    app_signals_hold(); /* the rename runs whole */
    status = app_out_commit(f->out, NULL);
    app_signals_release(0);
  }
  file_drop(f);
  if (f->direct) {
    char staged[128];
    snprintf(staged, sizeof(staged), "%s/%s", f->tmpdir, f->name);
    if (status == DSG_OK) {
      unsigned char *buf = NULL;
      size_t len = 0;
      status = app_read_file(staged, &buf, &len);
      if (status == DSG_OK)
        status = app_write_direct(f->direct, (const char *)buf, len);
      free(buf);
    }
    unlink(staged);
    rmdir(f->tmpdir);
  }
  memset(f, 0, sizeof(*f));
  return status;
}

int bench_file_probe(const char *path)
{
  bench_file f;
  int status = bench_file_open(&f, path);
  if (status == DSG_OK)
    status = app_out_open(f.out, f.name, &f.fp);
  file_drop(&f); /* removes the probe, and a folder it created */
  if (f.direct) {
    rmdir(f.tmpdir);
    if (status == DSG_OK && access(f.direct, W_OK) != 0)
      status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", f.direct, strerror(errno));
  }
  return status;
}

/* ---- columns ---- */

/* A numeric column of the table or the CSV. */
typedef struct column {
  const char *head;
  int width, prec; /* the table's: %*.*f; the CSV's: %.*g (prec significant digits) */
  double (*value)(const bench_row *r, int stage); /* NAN: "-" in the table, empty in the CSV */
  int stage;                                      /* of a stage column */
  const char *(*text)(const bench_row *r);        /* the table: a word instead, where not NULL;
                                                   * the CSV: the cell, where value is NULL */
  char (*mark)(const bench_row *r);               /* the table: a flag after the number, or ' ' */
} column;

/* A column's value from a row; stage: the --e2e stage of a stage column. */
#define ROW_VALUE(name, expr)                                                                      \
  static double name(const bench_row *r, int stage)                                                \
  {                                                                                                \
    (void)stage;                                                                                   \
    return expr;                                                                                   \
  }
/* the solve's (--e2e: the run's) figures: NAN unless it was measured */
#define SOLVED(v) (r->solved ? (v) : NAN)

ROW_VALUE(v_spmv_ms, r->spmv_median * 1e3)
ROW_VALUE(v_min_ms, r->spmv_min * 1e3)
ROW_VALUE(v_spmv_s, r->spmv_median)
ROW_VALUE(v_min_s, r->spmv_min)
ROW_VALUE(v_gflops, r->gflops)
ROW_VALUE(v_gbs, r->gbs)
ROW_VALUE(v_copy_gbs, r->copy_gbs)
ROW_VALUE(v_bound, r->bound_pct)
ROW_VALUE(v_check, r->check_error)
ROW_VALUE(v_runs, (double)r->runs)
ROW_VALUE(v_spread, r->copy_spread)
ROW_VALUE(v_suspect, (double)bench_bound_suspect(r))
ROW_VALUE(v_speedup_spmv, r->speedup_spmv)
ROW_VALUE(v_solve, SOLVED(r->solve_s))
ROW_VALUE(v_wall, r->state == BENCH_STATE_NONE ? NAN : r->solve_wall_s)
ROW_VALUE(v_matvecs, SOLVED((double)r->matvecs))
ROW_VALUE(v_mv, SOLVED(r->mv_kernel_s))
ROW_VALUE(v_xfer, SOLVED(r->mv_transfer_s))
ROW_VALUE(v_mv_host, SOLVED(r->mv_host_s))
ROW_VALUE(v_eig_host, SOLVED(r->eig_host_s))
ROW_VALUE(v_orth, SOLVED(r->orth_s))
ROW_VALUE(v_other, SOLVED(r->other_dev_s))
/* the table's host time: the solve less its device work */
ROW_VALUE(v_host,
          SOLVED(r->solve_s - r->mv_kernel_s - r->mv_transfer_s - r->orth_s - r->other_dev_s))
ROW_VALUE(v_residual, SOLVED(r->max_residual))
ROW_VALUE(v_speedup_solve, r->speedup_solve)
ROW_VALUE(v_stage, SOLVED(r->stage_s[stage]))
ROW_VALUE(v_total, SOLVED(r->total_s))
ROW_VALUE(v_speedup_total, r->speedup_total)

/* the state where nothing was measured ("budget", "skipped", ...), else the number */
static const char *t_state(const bench_row *r)
{
  return r->state == BENCH_STATE_DONE ? NULL : bench_state_cell(r->state);
}
static const char *t_status(const bench_row *r) { return bench_state_name(r->state); }
static char m_suspect(const bench_row *r) { return bench_bound_suspect(r) ? '?' : ' '; }

/* The table: SpMV, then the solve and its split. */
static const column spmv_table[] = {
    {"spmv ms", 8, 3, v_spmv_ms, 0, NULL, NULL},
    {"min ms", 8, 3, v_min_ms, 0, NULL, NULL},
    {"GFLOP/s", 7, 1, v_gflops, 0, NULL, NULL},
    {"GB/s", 7, 1, v_gbs, 0, NULL, NULL},
    {"%bw", 6, 1, v_bound, 0, NULL, m_suspect},
    {"solve s", 8, 3, v_solve, 0, t_state, NULL},
    {"prod", 6, 0, v_matvecs, 0, NULL, NULL},
    {"mv s", 8, 3, v_mv, 0, NULL, NULL},
    {"xfer s", 7, 3, v_xfer, 0, NULL, NULL},
    {"orth s", 7, 3, v_orth, 0, NULL, NULL},
    {"host s", 7, 3, v_host, 0, NULL, NULL},
    {"x spmv", 6, 2, v_speedup_spmv, 0, NULL, NULL},
    {"x solve", 7, 2, v_speedup_solve, 0, NULL, NULL},
};
/* The CSV: every figure, in seconds. */
static const column spmv_csv[] = {
    {"check_error", 0, 3, v_check, 0, NULL, NULL},
    {"spmv_median_s", 0, 6, v_spmv_s, 0, NULL, NULL},
    {"spmv_min_s", 0, 6, v_min_s, 0, NULL, NULL},
    {"gflops", 0, 4, v_gflops, 0, NULL, NULL},
    {"effective_gbs", 0, 4, v_gbs, 0, NULL, NULL},
    {"copy_gbs", 0, 4, v_copy_gbs, 0, NULL, NULL},
    {"percent_of_copy_bandwidth", 0, 4, v_bound, 0, NULL, NULL},
    {"solve_s", 0, 6, v_solve, 0, NULL, NULL},
    {"matvecs", 0, 12, v_matvecs, 0, NULL, NULL},
    {"matvec_kernel_s", 0, 6, v_mv, 0, NULL, NULL},
    {"matvec_transfer_s", 0, 6, v_xfer, 0, NULL, NULL},
    {"matvec_host_s", 0, 6, v_mv_host, 0, NULL, NULL},
    {"eigensolver_host_s", 0, 6, v_eig_host, 0, NULL, NULL},
    {"orthogonalization_s", 0, 6, v_orth, 0, NULL, NULL},
    {"other_device_s", 0, 6, v_other, 0, NULL, NULL},
    {"max_residual", 0, 3, v_residual, 0, NULL, NULL},
    {"speedup_spmv", 0, 4, v_speedup_spmv, 0, NULL, NULL},
    {"speedup_solve", 0, 4, v_speedup_solve, 0, NULL, NULL},
    {"spmv_runs", 0, 12, v_runs, 0, NULL, NULL},
    {"copy_spread", 0, 3, v_spread, 0, NULL, NULL},
    {"bound_suspect", 0, 1, v_suspect, 0, NULL, NULL},
    {"solve_wall_s", 0, 6, v_wall, 0, NULL, NULL},
    {"status", 0, 0, NULL, 0, t_status, NULL},
};

enum { MAX_COLUMNS = 32 };

/* --e2e's columns: a stage each (heads "contours s" or "contours_s"), the total, the products,
 * the speedup over the C path; and in the CSV the status. */
typedef struct e2e_columns {
  column c[MAX_COLUMNS];
  char heads[BENCH_STAGE_COUNT][32];
  int n;
} e2e_columns;

static void e2e_columns_init(e2e_columns *e, int csv)
{
  const char *sep = csv ? "_" : " ";
  e->n = 0;
  for (int s = 0; s < BENCH_STAGE_COUNT; s++) {
    snprintf(e->heads[s], sizeof(e->heads[s]), "%s%ss", bench_stage_name(s), sep);
    const int len = (int)strlen(e->heads[s]);
    e->c[e->n++] = (column){e->heads[s], len > 8 ? len : 8, csv ? 6 : 3, v_stage, s, NULL, NULL};
  }
  e->c[e->n++] = (column){csv ? "total_s" : "total s", 8, csv ? 6 : 3, v_total, 0, t_state, NULL};
  e->c[e->n++] = (column){csv ? "matvecs" : "prod", 6, csv ? 12 : 0, v_matvecs, 0, NULL, NULL};
  e->c[e->n++] =
      (column){csv ? "speedup_total" : "x total", 7, csv ? 4 : 2, v_speedup_total, 0, NULL, NULL};
  if (csv) {
    e->c[e->n++] = (column){"solve_wall_s", 0, 6, v_wall, 0, NULL, NULL};
    e->c[e->n++] = (column){"status", 0, 0, NULL, 0, t_status, NULL};
  }
}

/* One cell of the table. */
static void table_cell(FILE *out, const column *c, const bench_row *r)
{
  const char *word = c->text ? c->text(r) : NULL;
  const double v = c->value(r, c->stage);
  const int w = c->mark ? c->width - 1 : c->width;
  if (word)
    fprintf(out, " %*s%s", w, word, c->mark ? " " : "");
  else if (isnan(v))
    fprintf(out, " %*s%s", w, "-", c->mark ? " " : "");
  else
    fprintf(out, " %*.*f", w, c->prec, v);
  if (c->mark && !word && !isnan(v))
    fputc(c->mark(r), out);
}

/* ---- the table ---- */

/* "backend/kernel", the table's name of a row */
static void table_name(const bench_row *r, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", r->backend, r->kernel[0] ? "/" : "", r->kernel);
}

void bench_print_table(const bench *b, FILE *out)
{
  int wi = (int)strlen("input"), wb = (int)strlen("backend"), ws = (int)strlen("solver");
  int ncols = (int)(sizeof(spmv_table) / sizeof(spmv_table[0])), suspect = 0, over = 0;
  int skipped = 0;
  const column *cols = spmv_table;
  e2e_columns e2e;
  char name[80];
  if (b->cfg->e2e) {
    e2e_columns_init(&e2e, 0);
    cols = e2e.c;
    ncols = e2e.n;
  }
  for (int i = 0; i < b->nrows; i++) { /* the text columns as wide as their longest entry */
    table_name(&b->rows[i], name, sizeof(name));
    wi = (int)strlen(b->rows[i].input) > wi ? (int)strlen(b->rows[i].input) : wi;
    wb = (int)strlen(name) > wb ? (int)strlen(name) : wb;
    ws = (int)strlen(b->rows[i].solver) > ws ? (int)strlen(b->rows[i].solver) : ws;
  }
  fprintf(out, "%-*s %-*s %-*s", wi, "input", wb, "backend", ws, "solver");
  for (int c = 0; c < ncols; c++)
    fprintf(out, " %*s", cols[c].width, cols[c].head);
  fputc('\n', out);
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    table_name(r, name, sizeof(name));
    fprintf(out, "%-*s %-*s %-*s", wi, r->input, wb, name, ws, r->solver[0] ? r->solver : "-");
    for (int c = 0; c < ncols; c++)
      table_cell(out, &cols[c], r);
    fputc('\n', out);
    suspect += bench_bound_suspect(r);
    over += r->state == BENCH_STATE_BUDGET;
    skipped += r->state == BENCH_STATE_SKIPPED;
  }
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0) {
      if (b->cfg->e2e && r->work_width)
        fprintf(out, "# %s: %dx%d, segmented at %dx%d, %d diagonals\n", r->input, r->width,
                r->height, r->work_width, r->work_height, r->ndiag);
      else if (b->cfg->e2e)
        fprintf(out, "# %s: %dx%d\n", r->input, r->width, r->height);
      else
        fprintf(out, "# %s: %dx%d, n = %d, %d diagonals\n", r->input, r->width, r->height, r->n,
                r->ndiag);
    }
    if (i > 0 && strcmp(r->input, b->rows[i - 1].input) == 0 &&
        strcmp(r->backend, b->rows[i - 1].backend) == 0)
      continue;
    if (b->cfg->e2e)
      fprintf(out, "#   %s = %s\n", r->backend, r->device);
    else if (!isnan(r->copy_spread))
      fprintf(out, "#   %s = %s, copy bandwidth %.1f GB/s (spread %.0f%% over %d runs)\n",
              r->backend, r->device, r->copy_gbs, 100.0 * r->copy_spread, r->runs);
    else
      fprintf(out, "#   %s = %s, copy bandwidth %.1f GB/s\n", r->backend, r->device, r->copy_gbs);
  }
  if (suspect)
    fprintf(out, "# ?: %%bw over 100, faster than a copy of the same bytes: suspect\n");
  if (over)
    fprintf(out, "# budget: stopped when it took longer than --budget %g s\n", b->cfg->budget);
  if (skipped)
    fprintf(out, "# skipped: on this input a backend with a faster SpMV went over the budget\n");
  for (int w = 0; w < b->nwarnings; w++)
    fprintf(out, "# warning: %s\n", b->warnings[w].message);
  if (b->interrupted)
    fprintf(out, "# interrupted by signal %d: the rows above are those measured before it\n",
            b->interrupted);
}

/* ---- JSON and CSV ---- */

/* The SpMV and solve figures of one row. */
static void json_spmv_row(app_json *j, const bench_row *r)
{
  app_json_number(j, "check_error", r->check_error);
  app_json_begin_object(j, "spmv");
  app_json_int(j, "runs", r->runs);
  app_json_number(j, "median_s", r->spmv_median);
  app_json_number(j, "min_s", r->spmv_min);
  app_json_number(j, "gflops", r->gflops);
  app_json_number(j, "effective_gbs", r->gbs);
  app_json_number(j, "copy_gbs", r->copy_gbs);
  app_json_number(j, "copy_spread", r->copy_spread);
  app_json_number(j, "percent_of_copy_bandwidth", r->bound_pct);
  app_json_bool(j, "bound_suspect", bench_bound_suspect(r));
  app_json_number(j, "speedup_vs_cpu", r->speedup_spmv);
  app_json_end_object(j);
  if (r->solved) {
    app_json_begin_object(j, "solve");
    app_json_bool(j, "converged", r->converged);
    app_json_int(j, "nconv", r->nconv);
    app_json_int(j, "matvecs", r->matvecs);
    app_json_number(j, "total_s", r->solve_s);
    app_json_number(j, "wall_s", r->solve_wall_s);
    app_json_number(j, "matvec_kernel_s", r->mv_kernel_s);
    app_json_number(j, "matvec_transfer_s", r->mv_transfer_s);
    app_json_number(j, "matvec_host_s", r->mv_host_s);
    app_json_number(j, "eigensolver_host_s", r->eig_host_s);
    app_json_number(j, "orthogonalization_s", r->orth_s);
    app_json_number(j, "other_device_s", r->other_dev_s);
    app_json_int(j, "lanczos_steps", r->steps);
    app_json_int(j, "kernel_launches", r->launches);
    app_json_int(j, "gram_schmidt_second_passes", r->second_passes);
    app_json_number(j, "max_residual", r->max_residual);
    app_json_number(j, "last_eigenvalue", r->lambda_last);
    app_json_number(j, "speedup_vs_cpu", r->speedup_solve);
    app_json_end_object(j);
  } else {
    app_json_null(j, "solve");
  }
}

/* The stages of one --e2e row. */
static void json_e2e_row(app_json *j, const bench_row *r)
{
  char key[40];
  app_json_int(j, "work_width", r->work_width);
  app_json_int(j, "work_height", r->work_height);
  if (r->solved) {
    app_json_begin_object(j, "stages");
    for (int s = 0; s < BENCH_STAGE_COUNT; s++) {
      snprintf(key, sizeof(key), "%s_s", bench_stage_name(s));
      app_json_number(j, key, r->stage_s[s]);
    }
    app_json_end_object(j);
  } else {
    app_json_null(j, "stages");
  }
  app_json_number(j, "total_s", v_total(r, 0));
  app_json_number(j, "wall_s", v_wall(r, 0));
  app_json_bool(j, "converged", r->converged);
  app_json_int(j, "nconv", r->nconv);
  app_json_int(j, "matvecs", r->matvecs);
  app_json_number(j, "speedup_vs_cpu", r->speedup_total);
}

int bench_write_json(const bench *b, const char *path)
{
  const dsg_options *opt = &b->cfg->opt;
  app_json j;
  int status;
  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_string(&j, "diaseg_version", dsg_version());
  app_json_string(&j, "mode", b->cfg->e2e ? "e2e" : b->cfg->no_solve ? "spmv" : "spmv+solve");
  app_json_int(&j, "nev", opt->nev);
  app_json_number(&j, "tol", opt->tol > 0.0 ? opt->tol : NAN); /* null: segment's own (--e2e) */
  app_json_int(&j, "repeat", b->cfg->repeat);
  app_json_number(&j, "budget_s", b->cfg->budget); /* null: no limit */
  app_json_bool(&j, "keep_specks", opt->keep_specks);
  app_json_int(&j, "radius", opt->radius);
  app_json_bool(&j, "interrupted", b->interrupted != 0);
  if (b->interrupted)
    app_json_int(&j, "interrupted_by_signal", b->interrupted);
  else
    app_json_null(&j, "interrupted_by_signal");
  app_json_begin_object(&j, "host");
  app_json_number(&j, "load_1min", b->load);
  app_json_bool(&j, "load_overridden", b->load_override);
  app_json_int(&j, "cores", b->cores);
  app_json_end_object(&j);
  app_json_begin_array(&j, "warnings");
  for (int w = 0; w < b->nwarnings; w++) {
    app_json_begin_object(&j, NULL);
    app_json_string(&j, "kind", b->warnings[w].kind);
    app_json_string(&j, "message", b->warnings[w].message);
    app_json_end_object(&j);
  }
  app_json_end_array(&j);
  app_json_begin_array(&j, "results");
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    app_json_begin_object(&j, NULL);
    app_json_string(&j, "input", r->input);
    app_json_int(&j, "width", r->width);
    app_json_int(&j, "height", r->height);
    app_json_int(&j, "n", r->n);
    app_json_int(&j, "ndiag", r->ndiag);
    app_json_string(&j, "backend", r->backend);
    app_json_string(&j, "device", r->device);
    app_json_string(&j, "device_short", r->device_short);
    app_json_string(&j, "kernel", r->kernel[0] ? r->kernel : NULL);
    app_json_string(&j, "solver", r->solver[0] ? r->solver : NULL);
    app_json_string(&j, "status", bench_state_name(r->state));
    if (b->cfg->e2e)
      json_e2e_row(&j, r);
    else
      json_spmv_row(&j, r);
    app_json_end_object(&j);
  }
  app_json_end_array(&j);
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK) {
    if (strcmp(path, "-") == 0) {
      status = app_write_direct("-", j.buf, j.len); /* every write checked: a full disk, a pipe */
    } else {
      bench_file f;
      status = bench_file_open(&f, path);
      if (status == DSG_OK)
        status = app_out_text(f.out, f.name, j.buf, j.len);
      status = bench_file_commit(&f, status);
    }
  }
  app_json_free(&j);
  return status;
}

int bench_write_csv(const bench *b, const char *path)
{
  int ncols = (int)(sizeof(spmv_csv) / sizeof(spmv_csv[0]));
  const column *cols = spmv_csv;
  e2e_columns e2e;
  bench_file out;
  int status = bench_file_open(&out, path);
  if (status == DSG_OK)
    status = app_out_open(out.out, out.name, &out.fp);
  if (status != DSG_OK)
    return bench_file_commit(&out, status);
  if (b->cfg->e2e) {
    e2e_columns_init(&e2e, 1);
    cols = e2e.c;
    ncols = e2e.n;
  }
  FILE *f = out.fp;
  fprintf(f, "input,width,height,n,ndiag,backend,device,kernel,solver");
  for (int c = 0; c < ncols; c++)
    fprintf(f, ",%s", cols[c].head);
  fputc('\n', f);
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    fprintf(f, "%s,%d,%d,%d,%d,%s,\"%s\",%s,%s", r->input, r->width, r->height, r->n, r->ndiag,
            r->backend, r->device, r->kernel, r->solver);
    for (int c = 0; c < ncols; c++) {
      const double v = cols[c].value ? cols[c].value(r, cols[c].stage) : NAN;
      if (!cols[c].value)
        fprintf(f, ",%s", cols[c].text(r));
      else if (isnan(v))
        fputc(',', f);
      else
        fprintf(f, ",%.*g", cols[c].prec, v);
    }
    fputc('\n', f);
  }
  return bench_file_commit(&out, DSG_OK);
}
