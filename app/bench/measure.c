/* diaseg bench: SpMV and eigensolve timings per backend, against the measured copy bandwidth;
 * with --e2e, the whole segment stage by stage per backend.
 *
 * For each input (an image, or the sample image resampled to --size WxH) the problem (features,
 * the normalised affinity, its components) is built once by the library (dsg_problem_create).
 * Each backend then gets:
 *  - SpMV: `repeat` timed products after 3 warm-ups (fewer once they took a sixth of the
 *    budget, 3 at least); the median and the minimum of the product's own time (the C loop's
 *    wall time; an OpenCL kernel's event time);
 *  - its bandwidth bound: a plain copy of as many bytes as the matrix, on the same device, timed
 *    the same way (bytes read + bytes written); on the host each timed product follows a timed
 *    copy, so drift on a shared machine moves both, and the copies' spread says how much it did;
 *  - the eigensolve: what `diaseg segment` runs (dsg_problem_solve_on, without the grouping), the
 *    same nev, tol and known vectors for every backend, split into the matvec's kernel, transfer
 *    and host time and the eigensolver's host work;
 *  - a check: its product against the scalar reference (max row error relative to |A||x|).
 * Figures: GFLOP/s = 2 ndiag n / t; effective GB/s = (4 ndiag + 8) n / t (A, x and y once).
 *
 * The specks: dsg_problem_solve_on carves the specks it finds into the problem it solves, in
 * rounds of solves. The first solve of an input does the rounds; every row's figures are those
 * of its call's last round, the solve of the carved problem, which is what every later solve
 * solves in one round: so every backend and solver is measured on the same problem, the one
 * `diaseg segment` ends its rounds with (the row's wall time, solve_wall_s, has the rounds).
 *
 * The budget (--budget): a configuration's solve, or its whole segment with --e2e, is stopped
 * when it takes longer (a watchdog raises the library's cancel flag), and the row says so; the
 * solves of the backends whose SpMV is no faster are then skipped on that input. Ctrl-C stops
 * the run the same way, and the rows measured so far are shown and written, marked.
 *
 * --e2e: dsg_segment from the image in memory (the load is not timed) on each backend, its
 * dsg_timing per stage, then the write of segment's default outputs into a temporary folder
 * (e2e_write), which is removed. */
#include "bench_internal.h"
/* for app_result_eig: the eigensolver's own split of a solve's time (matvec kernel, transfer
 * and host time, the Lanczos basis operations), and for --e2e the result's backend (the kernel
 * that auto chose) and matrix size, which diaseg.h does not give */
#include "diaseg_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- names (bench_internal.h) ---- */

int bench_solver_count(void) { return eig_solver_count(); }

const char *bench_solver_name(int i) { return eig_solver_at(eig_solver_count() - 1 - i)->name; }

static const char *const state_names[BENCH_STATE_COUNT] = {"none", "done", "over_budget", "skipped",
                                                           "interrupted"};
static const char *const state_cells[BENCH_STATE_COUNT] = {"-", "", "budget", "skipped", "stopped"};
static const char *const stage_names[BENCH_STAGE_COUNT] = {
    "contours", "affinity", "setup", "solve", "grouping", "resolution", "write"};

const char *bench_state_name(bench_state s) { return state_names[s]; }
const char *bench_state_cell(bench_state s) { return state_cells[s]; }
const char *bench_stage_name(int stage) { return stage_names[stage]; }

int bench_bound_suspect(const bench_row *r) { return r->bound_pct > 100.0; }

/* ---- rows and warnings ---- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median_sorted(double *t, int count)
{
  qsort(t, (size_t)count, sizeof(*t), cmp_double);
  return count % 2 ? t[count / 2] : 0.5 * (t[count / 2 - 1] + t[count / 2]);
}

static bench_row *new_row(bench *b)
{
  if (b->nrows == b->cap) {
    int cap = b->cap ? 2 * b->cap : 16;
    bench_row *r = realloc(b->rows, (size_t)cap * sizeof(*r));
    if (!r)
      return NULL;
    b->rows = r;
    b->cap = cap;
  }
  memset(&b->rows[b->nrows], 0, sizeof(bench_row));
  b->rows[b->nrows].copy_spread = NAN;
  return &b->rows[b->nrows++];
}

/* A warning: on standard error now, as "bench: warning: ..." like bench's other lines (also with
 * --quiet; the one "diaseg: " line stays the error, if any), kept for the table and the JSON. */
static void bench_warn(bench *b, const char *kind, const char *fmt, ...)
{
  bench_warning *w = &b->warnings[b->nwarnings < BENCH_MAX_WARNINGS ? b->nwarnings : 0];
  char text[sizeof(w->message)];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof(text), fmt, ap);
  va_end(ap);
  fprintf(stderr, "bench: warning: %s\n", text);
  if (b->nwarnings == BENCH_MAX_WARNINGS)
    return;
  snprintf(w->kind, sizeof(w->kind), "%s", kind);
  snprintf(w->message, sizeof(w->message), "%s", text);
  b->nwarnings++;
}

/* The last library message as the command line shows it (parameters spelled as flags), for
 * the notes bench prints on stderr and goes on. */
static const char *last_message(char *buf, size_t cap)
{
  dsg_error_render(dsg_error_raw(), buf, cap, app_cli_spell, NULL);
  return buf;
}

/* ---- the host's load ---- */

/* Warns when the host is busy before anything is measured: its 1-minute load average (or
 * $DIASEG_BENCH_LOAD_OVERRIDE's, for testing) over half its online cores. bench's C path and
 * PoCL run a thread on every core and wait for the slowest at every step, so another runnable
 * process on half the cores already slows them severalfold and scatters their times (a shared
 * 2-core host at load 4: a C-path solve 3 times slower, its SpMV median 8 times its minimum). */
static void check_load(bench *b)
{
  const app_config *cfg = b->cfg;
  double load[1];
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  b->cores = cores > 0 ? (int)cores : 1;
  b->load = NAN;
  b->load_override = cfg->load_override >= 0.0;
  if (b->load_override)
    b->load = cfg->load_override;
  else if (getloadavg(load, 1) == 1)
    b->load = load[0];
  if (b->load > 0.5 * b->cores)
    bench_warn(b, "load",
               "the host is busy: its 1-minute load average is %.2f on %d cores%s, over half "
               "of them; the figures will be slower and noisier than on an idle host, the C "
               "path's most (it runs a thread on every core)",
               b->load, b->cores, b->load_override ? " (DIASEG_BENCH_LOAD_OVERRIDE)" : "");
}

/* ---- device names ---- */

/* The host CPU's model name from /proc/cpuinfo, or "host CPU" where it has none. */
static void host_cpu_name(char *buf, size_t cap)
{
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[512];
  snprintf(buf, cap, "host CPU");
  if (!f)
    return;
  while (fgets(line, sizeof(line), f)) {
    const char *v = strchr(line, ':');
    if (strncmp(line, "model name", 10) != 0 || !v)
      continue;
    for (v++; *v == ' ' || *v == '\t'; v++)
      ;
    const int len = (int)strcspn(v, "\n");
    if (len > 0)
      snprintf(buf, cap, "%.*s", len, v);
    break;
  }
  fclose(f);
}

/* A device name short enough for a chart: without (R) and (TM), a CPU's clock ("@ 2.40GHz") or
 * an AMD GPU's feature flags ("gfx90a:sramecc+:xnack-"); PoCL's CPU device is "PoCL cpu". */
static void device_short_name(const dsg_device *d, char *buf, size_t cap)
{
  const int pocl = strstr(d->platform, "Portable Computing Language") != NULL;
  size_t len = 0;
  if (pocl && d->cpu) {
    snprintf(buf, cap, "PoCL cpu");
    return;
  }
  len = (size_t)snprintf(buf, cap, "%s", pocl ? "PoCL " : "");
  for (const char *p = d->name; *p && *p != '@' && *p != ':' && len + 1 < cap;) {
    if (strncmp(p, "(R)", 3) == 0 || strncasecmp(p, "(TM)", 4) == 0) {
      p = strchr(p, ')') + 1;
    } else if (*p == ' ' && (len == 0 || buf[len - 1] == ' ')) {
      p++;
    } else {
      buf[len++] = *p++;
    }
  }
  while (len > 0 && buf[len - 1] == ' ')
    len--;
  buf[len] = '\0';
}

/* ---- the host's copy bandwidth ---- */

/* dst = src over count floats with streaming stores where the CPU has them: a plain store first
 * reads the destination line (write-allocate), so a plain copy moves 3 bytes per 2 counted and
 * understates the bandwidth that the SpMV, which mostly reads, can use. */
static void copy_floats(float *restrict dst, const float *restrict src, size_t count)
{
#if defined(__x86_64__)
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < count / 4; i++)
    _mm_stream_ps(dst + 4 * i, _mm_load_ps(src + 4 * i));
  _mm_sfence();
  for (size_t i = count / 4 * 4; i < count; i++)
    dst[i] = src[i];
#else
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < count; i++)
    dst[i] = src[i];
#endif
}

/* The host's bandwidth bound: a threaded copy of as many bytes as the matrix. Its runs are
 * interleaved with the SpMV's (bench_backend), so that a shared machine whose bandwidth drifts
 * while the bench runs moves both figures alike and their ratio stays meaningful. */
typedef struct host_copy {
  float *src, *dst;
  size_t count;
} host_copy;

static int host_copy_init(host_copy *c, size_t bytes)
{
  c->count = bytes / sizeof(float);
  const size_t alloc = (c->count * sizeof(float) + 63) / 64 * 64;
  c->src = aligned_alloc(64, alloc);
  c->dst = aligned_alloc(64, alloc);
  if (!c->src || !c->dst) {
    free(c->src);
    free(c->dst);
    c->src = c->dst = NULL;
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate 2 x %zu bytes for the copy benchmark",
                         bytes);
  }
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < c->count; i++) {
    c->src[i] = (float)(i & 1023);
    c->dst[i] = 0.0f;
  }
  return DSG_OK;
}

/* One timed copy; seconds. */
static double host_copy_run(host_copy *c)
{
  double t0 = dsg_seconds();
  copy_floats(c->dst, c->src, c->count);
  return dsg_seconds() - t0;
}

static void host_copy_free(host_copy *c)
{
  free(c->src);
  free(c->dst);
}

/* ---- the budget ---- */

/* The timed products of a configuration stop once they took this share of its budget (3 of
 * them at least): 5 s of 30, 10 products of PoCL's half second at 1920x1080 on 2 cores, where
 * its 20 took 10 s, a tenth of the run. */
#define BENCH_SPMV_SHARE 6

/* The cancel flag handed to the library for one configuration: a watchdog thread raises it to
 * app_cancel's signal when one comes, or to WATCH_BUDGET once the budget is spent. The library
 * looks at it between restarts of a solve and between the stages of a segment. */
#define WATCH_BUDGET (-1)

typedef struct bench_watch {
  volatile sig_atomic_t stop;
  double deadline; /* dsg_seconds(); INFINITY: none */
  double t0;
  atomic_int quit;
  pthread_t thread;
  int started;
} bench_watch;

static void *watch_loop(void *arg)
{
  bench_watch *w = arg;
  const struct timespec tick = {0, 10 * 1000 * 1000}; /* 10 ms */
  while (!atomic_load(&w->quit) && !w->stop) {
    if (app_cancel)
      w->stop = app_cancel;
    else if (dsg_seconds() > w->deadline)
      w->stop = WATCH_BUDGET;
    else
      nanosleep(&tick, NULL);
  }
  return NULL;
}

/* Starts the clock of a configuration of `budget` seconds; returns the cancel flag to hand to
 * the library: w's, or app_cancel where no thread could be started (no budget then). */
static const volatile sig_atomic_t *watch_start(bench_watch *w, double budget)
{
  memset(w, 0, sizeof(*w));
  atomic_init(&w->quit, 0);
  w->t0 = dsg_seconds();
  w->deadline = w->t0 + budget;
  w->started = pthread_create(&w->thread, NULL, watch_loop, w) == 0;
  if (w->started && dsg_seconds() > w->deadline) /* spent already: whatever the thread does */
    w->stop = WATCH_BUDGET;
  return w->started ? &w->stop : &app_cancel;
}

/* Stops the watchdog. Returns the seconds since watch_start; *over: the budget stopped it (and
 * no signal came). */
static double watch_stop(bench_watch *w, int *over)
{
  if (w->started) {
    atomic_store(&w->quit, 1);
    pthread_join(w->thread, NULL);
  }
  *over = w->started && w->stop == WATCH_BUDGET && !app_cancel;
  return dsg_seconds() - w->t0;
}

/* ---- inputs ---- */

typedef struct bench_input {
  const char *label;
  dsg_image img; /* until the problem is built (--e2e: throughout) */
  int width, height;
  dsg_problem *problem;
  const spmv_dia *N; /* the problem's matrix */
  float *x, *y, *ref;
} bench_input;

static void input_free(bench_input *in)
{
  dsg_image_free(&in->img);
  dsg_problem_destroy(in->problem);
  free(in->x);
  free(in->y);
  free(in->ref);
}

/* Loads path into in->img, resampled to w x h when w > 0. */
static int input_load(const app_config *cfg, bench_input *in, const char *path, int w, int h)
{
  int status = app_image_load(path, cfg->max_pixels, &in->img);
  if (status == DSG_OK && w > 0) {
    dsg_image resized = {0};
    if ((size_t)w * (size_t)h > cfg->max_pixels)
      return dsg_error_set(DSG_ERR_INVALID,
                           "--size %dx%d is over the cap of %zu pixels (raise it "
                           "with --max-pixels)",
                           w, h, cfg->max_pixels);
    status = dsg_image_resize(&in->img, w, h, &resized);
    dsg_image_free(&in->img);
    in->img = resized;
  }
  if (status == DSG_OK) {
    in->width = in->img.width;
    in->height = in->img.height;
  }
  return status;
}

/* Builds the problem of in->img with opt (then drops the image) and the vectors of the SpMV
 * measurements: a fixed random x and its reference product. input_free frees in, also after an
 * error. */
static int input_problem(const dsg_options *opt, bench_input *in)
{
  /* the problem at the image's own size on the host (every backend's starts from it): its
   * memory checked first, so that a size the host cannot hold stops with what would fit */
  dsg_options host = *opt;
  host.work_pixels = -1; /* the size itself: no working size to offer (dsg_check_memory) */
  host.matvec = "cpu";
  int status = dsg_check_memory(&host, in->img.width, in->img.height);
  if (status == DSG_OK)
    status = dsg_problem_create(&in->img, opt, &in->problem);
  if (status != DSG_OK)
    return status;
  dsg_image_free(&in->img);
  status = dsg_problem_dia(in->problem, &in->N);
  if (status != DSG_OK)
    return status;
  const size_t n = (size_t)in->N->rows;
  in->x = malloc(n * sizeof(float));
  in->y = malloc(n * sizeof(float));
  in->ref = malloc(n * sizeof(float));
  if (!in->x || !in->y || !in->ref)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench vectors of %zu floats", n);
  uint64_t s = 42;
  for (size_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    in->x[i] = (float)((double)(s >> 11) * 0x1.0p-53) - 0.5f;
  }
  spmv_dia_mul_ref(in->N, in->x, in->ref);
  return DSG_OK;
}

/* ---- one backend ---- */

/* Whether bench runs solver `name` (--solver NAME, all, or auto: the one segment takes with
 * --e2e on an input of width x height, eigs's without; 0 x 0: no input in view). */
static int solver_wanted(const app_config *cfg, const char *name, int width, int height)
{
  dsg_options opt = cfg->opt, defaults;
  int w = 0, h = 0;
  if (strcmp(opt.solver, "all") == 0)
    return 1;
  /* eigenpairs only; --e2e: segment's default k (bench has no -k), so that auto resolves to the
   * solver a default segment takes (run_bench's opt.k) at the input's working size */
  dsg_options_init(&defaults);
  opt.k = cfg->e2e ? defaults.k : 0;
  if (cfg->e2e && width > 0 && height > 0)
    app_work_size(width, height, opt.work_pixels, &w, &h);
  return strcmp(app_solver_at(&opt, w, h), name) == 0;
}

/* The solver a backend's matvec is made ready for (dsg_problem_matvec): of those bench runs, the
 * first with a step to take before the clock (lanczos and chfsi: their kernels are built before
 * its solve, as for segment and eigs), else the first. */
static const char *solver_to_prepare(const app_config *cfg)
{
  const char *first = NULL;
  for (int s = 0; s < bench_solver_count(); s++) {
    const eig_solver *solver;
    if (!solver_wanted(cfg, bench_solver_name(s), 0, 0))
      continue;
    if (eig_solver_find(bench_solver_name(s), &solver) == DSG_OK && solver->prepare)
      return solver->name;
    first = first ? first : bench_solver_name(s);
  }
  return first ? first : bench_solver_name(0);
}

/* The figures of one solve into row: its last round's (the solve of the carved problem). */
static void row_from_result(bench_row *row, const dsg_result *res)
{
  const eig_result *eig = app_result_eig(res);
  const double *residuals = dsg_result_residuals(res), *values = dsg_result_eigenvalues(res);
  const int nconv = dsg_result_nconv(res);
  row->state = BENCH_STATE_DONE;
  row->solved = 1;
  row->converged = dsg_result_converged(res);
  row->nconv = nconv;
  row->matvecs = dsg_result_products(res);
  /* the eigensolver's own clock, as its split below: the residual products that every solve
   * ends with are not part of it (dsg_result_timing's solve, the report's, includes them) */
  row->solve_s = eig->solve_s;
  row->mv_kernel_s = eig->matvec.kernel_s;
  row->mv_transfer_s = eig->matvec.transfer_s;
  row->mv_host_s = eig->matvec.host_s;
  row->eig_host_s = eig->host_s;
  row->orth_s = eig->basis.orth_s;
  row->other_dev_s = eig->basis.project_s + eig->basis.normalize_s + eig->basis.restart_s;
  row->steps = eig->basis.steps;
  row->launches = eig->basis.launches;
  row->second_passes = eig->basis.second_passes;
  for (int k = 0; k < nconv; k++)
    row->max_residual = residuals[k] > row->max_residual ? residuals[k] : row->max_residual;
  row->lambda_last = nconv ? values[nconv - 1] : NAN;
}

/* The row of this input that makes row's solve pointless: the same solver went over the budget
 * on a backend whose SpMV is at least as fast. NULL: none. */
static const bench_row *overran_faster(const bench *b, const bench_row *row)
{
  for (int i = b->first; i < b->nrows; i++) {
    const bench_row *o = &b->rows[i];
    if (o != row && o->state == BENCH_STATE_BUDGET && strcmp(o->solver, row->solver) == 0 &&
        o->spmv_median <= row->spmv_median)
      return o;
  }
  return NULL;
}

/* "backend/kernel" into buf */
static const char *row_name(const bench_row *r, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", r->backend, r->kernel[0] ? "/" : "", r->kernel);
  return buf;
}

/* A run (`what`: "lanczos solve", "segment") that ended without a result: stopped by the budget
 * (the row marked, said on stderr, the bench goes on: DSG_OK), by a signal (the row marked, the
 * status kept), or failed (the status kept). */
static int stopped(const app_config *cfg, bench_row *row, int status, int over, const char *input,
                   const char *what, double wall)
{
  char name[96];
  if (status == DSG_ERR_INTERRUPTED && over) {
    row->state = BENCH_STATE_BUDGET;
    dsg_error_clear();
    if (!cfg->quiet)
      fprintf(stderr, "bench: %s: %s: %s stopped after %.1f s, over the budget (raise --budget)\n",
              input, row_name(row, name, sizeof(name)), what, wall);
    return DSG_OK;
  }
  if (status == DSG_ERR_INTERRUPTED)
    row->state = BENCH_STATE_INTERRUPTED;
  return status;
}

/* The solves bench runs (--solver NAME, or every solver) on one backend's matvec: the first into
 * row, each further one into a new row with the same SpMV figures. opt is the backend's (matvec,
 * device, kernel). A solve stopped at max_iter is measured like the others (its pairs, flagged);
 * one stopped by the budget or skipped (overran_faster) keeps its SpMV figures and says so. */
static int bench_solves(bench *b, const dsg_options *opt, bench_input *in, spmv_matvec *mv,
                        int index)
{
  const app_config *cfg = b->cfg;
  const bench_row spmv_row = b->rows[index];
  char name_buf[80];
  int status = DSG_OK, first = 1;
  for (int s = 0; s < bench_solver_count() && status == DSG_OK && !app_cancel; s++) {
    const char *name = bench_solver_name(s);
    dsg_options one = *opt;
    dsg_result *res = NULL;
    bench_watch watch;
    const bench_row *faster;
    int over = 0;
    if (!solver_wanted(cfg, name, 0, 0))
      continue;
    if (!first) { /* another row, with the same SpMV figures */
      bench_row *next = new_row(b);
      if (!next)
        return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
      *next = spmv_row;
      index = b->nrows - 1;
    }
    first = 0;
    bench_row *row = &b->rows[index];
    snprintf(row->solver, sizeof(row->solver), "%s", name);
    faster = overran_faster(b, row);
    if (faster) {
      row->state = BENCH_STATE_SKIPPED;
      if (!cfg->quiet)
        fprintf(stderr,
                "bench: %s: %s: %s solve skipped: %s's went over the budget with a "
                "faster SpMV\n",
                row->input, row_name(row, name_buf, sizeof(name_buf)), name, faster->backend);
      continue;
    }
    one.solver = name;
    if (!cfg->quiet)
      fprintf(stderr, "bench: %s: %s: %s solve\n", row->input,
              row_name(row, name_buf, sizeof(name_buf)), name);
    one.cancel = watch_start(&watch, cfg->budget);
    status = dsg_problem_solve_on(in->problem, &one, mv, &res);
    const double wall = watch_stop(&watch, &over);
    row = &b->rows[index];
    row->solve_wall_s = wall;
    if (res && (status == DSG_OK || status == DSG_ERR_NOCONV)) {
      row_from_result(row, res);
      status = DSG_OK;
    } else {
      char what[64];
      snprintf(what, sizeof(what), "%s solve", name);
      status = stopped(cfg, row, status, over, row->input, what, wall);
    }
    dsg_result_destroy(res);
  }
  if (app_cancel && b->rows[index].state == BENCH_STATE_NONE)
    b->rows[index].state = BENCH_STATE_INTERRUPTED; /* the signal came before its solve */
  return status;
}

/* Times one backend's SpMV on one input into row `index` (the last one), then its solves
 * (bench_solves) unless --spmv-only. With a host copy, each timed product is preceded by a timed
 * copy, and the row's copy_gbs and copy_spread are set from them. The timed products stop once
 * they took 1 / BENCH_SPMV_SHARE of the budget (3 at least), or at a signal. */
static int bench_backend(bench *b, const dsg_options *opt, bench_input *in, spmv_matvec *mv,
                         host_copy *copy, int index)
{
  const app_config *cfg = b->cfg;
  const spmv_dia *N = in->N;
  const int repeat = cfg->repeat;
  double *t = malloc(3 * (size_t)repeat * sizeof(*t)), *tc = t + repeat, *bw = tc + repeat;
  bench_row *row = &b->rows[index];
  int status = DSG_OK, runs = 0;
  if (!t)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d timings", repeat);

  row->width = in->width;
  row->height = in->height;
  row->n = N->rows;
  row->ndiag = N->ndiag;
  snprintf(row->input, sizeof(row->input), "%s", in->label);
  for (int r = 0; r < 3 && status == DSG_OK && !app_cancel; r++) {
    if (copy)
      host_copy_run(copy);
    status = spmv_matvec_apply(mv, in->x, in->y);
  }
  if (status == DSG_OK)
    row->check_error = spmv_dia_row_error(N, in->x, in->y, in->ref);
  const double t0 = dsg_seconds();
  for (; runs < repeat && status == DSG_OK && !app_cancel; runs++) {
    if (runs >= 3 && dsg_seconds() - t0 > cfg->budget / BENCH_SPMV_SHARE)
      break;
    if (copy)
      tc[runs] = host_copy_run(copy);
    spmv_timing before = spmv_matvec_timing(mv);
    status = spmv_matvec_apply(mv, in->x, in->y);
    t[runs] = spmv_matvec_timing(mv).kernel_s - before.kernel_s;
  }
  if (status != DSG_OK || runs == 0) /* runs 0: a signal came first; app_bench drops the row */
    goto out_free;
  row->runs = runs;
  if (copy) {
    const double bytes = 2.0 * (double)(copy->count * sizeof(float));
    for (int r = 0; r < runs; r++)
      bw[r] = bytes / tc[r] / 1e9;
    const double median = median_sorted(bw, runs);
    row->copy_gbs = median;
    row->copy_spread = (bw[runs - 1] - bw[0]) / median;
  }
  row->spmv_median = median_sorted(t, runs);
  row->spmv_min = t[0];
  row->gflops = 2.0 * N->ndiag * (double)N->rows / row->spmv_median / 1e9;
  row->gbs = (4.0 * N->ndiag + 8.0) * (double)N->rows / row->spmv_median / 1e9;
  row->bound_pct = row->copy_gbs > 0 ? 100.0 * row->gbs / row->copy_gbs : NAN;
  if (copy && row->copy_spread > 0.2)
    bench_warn(b, "copy_spread",
               "%s: %s: the host's copy bandwidth moved by %.0f%% between the %d repeats "
               "(%.1f to %.1f GB/s): the host is busy or its clock changes, so these figures "
               "are unreliable",
               row->input, row->backend, 100.0 * row->copy_spread, runs, bw[0], bw[runs - 1]);
  if (!cfg->no_solve)
    status = bench_solves(b, opt, in, mv, index);
out_free:
  free(t);
  return status;
}

/* ---- the backends ---- */

/* The C path's names into row. */
static void cpu_names(bench_row *row)
{
  char cpu_name[128];
  snprintf(row->backend, sizeof(row->backend), "cpu");
  host_cpu_name(cpu_name, sizeof(cpu_name));
  snprintf(row->device, sizeof(row->device), "%s (host, %d OpenMP threads)", cpu_name,
           omp_get_max_threads());
  snprintf(row->device_short, sizeof(row->device_short), "C path, %d threads",
           omp_get_max_threads());
}

/* OpenCL device d's names into row (its full name from the matvec's or the result's info). */
static void opencl_names(bench_row *row, const dsg_device *list, int count, int d,
                         const spmv_cl_info *info)
{
  snprintf(row->backend, sizeof(row->backend), "opencl:%d", d);
  snprintf(row->device, sizeof(row->device), "%s (%s)", info->device, info->platform);
  device_short_name(&list[d], row->device_short, sizeof(row->device_short));
  for (int e = 0; e < count; e++) { /* two devices of one name: add the index */
    char other[sizeof(row->device_short)];
    device_short_name(&list[e], other, sizeof(other));
    if (e != d && strcmp(other, row->device_short) == 0) {
      const size_t len = strlen(row->device_short);
      snprintf(row->device_short + len, sizeof(row->device_short) - len, " [%d]", d);
      break;
    }
  }
  snprintf(row->kernel, sizeof(row->kernel), "%s", spmv_kernel_name(info->kernel));
}

/* The C path on one input: one row per solver. */
static int bench_cpu(bench *b, const dsg_options *base, bench_input *in)
{
  const app_config *cfg = b->cfg;
  dsg_options opt = *base;
  spmv_matvec *mv = NULL;
  host_copy copy = {0};
  int status;
  bench_row *row = new_row(b);
  if (!row)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
  cpu_names(row);
  if (!cfg->quiet)
    fprintf(stderr, "bench: %s: cpu: copy bandwidth, SpMV x %d%s\n", in->label, cfg->repeat,
            cfg->no_solve ? "" : ", eigensolve");
  opt.matvec = "cpu";
  status = host_copy_init(&copy, spmv_dia_bytes(in->N));
  if (status == DSG_OK)
    status = dsg_problem_matvec(in->problem, &opt, !cfg->no_solve, &mv);
  if (status == DSG_OK)
    status = bench_backend(b, &opt, in, mv, &copy, b->nrows - 1);
  spmv_matvec_destroy(mv);
  host_copy_free(&copy);
  return status;
}

/* An OpenCL device and kernel that bench measures; kernel NULL: the device's own (auto). */
typedef struct cl_target {
  int device;
  const char *kernel;
} cl_target;

/* Whether bench measures kernel k by name (--kernel all, or a list). */
static int kernel_wanted(const app_config *cfg, int k)
{
  return cfg->all_kernels || (cfg->kernel_mask & (1u << k)) != 0;
}

/* The OpenCL devices and kernels bench measures, in order, into *targets (malloc'd): the device
 * --cl-device names, else every device (--matvec all), else the one --matvec opencl takes; on
 * each, every kernel --kernel names (all, a list), else --kernel's one or the device's own. */
static int opencl_targets(const app_config *cfg, const dsg_device *list, int count,
                          cl_target **targets, int *ntargets)
{
  const int each = cfg->all_kernels || cfg->kernel_mask; /* kernels by name */
  int only = -1, status = DSG_OK, n = 0;
  spmv_kernel want = SPMV_KERNEL_AUTO;
  cl_target *t;
  *targets = NULL;
  *ntargets = 0;
  if (cfg->opt.kernel && *cfg->opt.kernel)
    status = spmv_kernel_parse(cfg->opt.kernel, &want);
  if (status == DSG_OK && cfg->opt.cl_device && *cfg->opt.cl_device)
    status = dsg_device_pick(list, count, cfg->opt.cl_device, 0, &only);
  else if (status == DSG_OK && !cfg->all_devices)
    status = dsg_device_pick(list, count, NULL, 0, &only);
  if (status != DSG_OK)
    return status;
  t = malloc((size_t)count * SPMV_KERNEL_COUNT * sizeof(*t));
  if (!t)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d OpenCL targets", count);
  for (int d = 0; d < count; d++) {
    if (only >= 0 && d != only)
      continue;
    if (!each) {
      t[n++] = (cl_target){d, want == SPMV_KERNEL_AUTO ? NULL : cfg->opt.kernel};
      continue;
    }
    for (int k = SPMV_KERNEL_NAIVE; k < SPMV_KERNEL_COUNT; k++)
      if (k != SPMV_KERNEL_AUTO && kernel_wanted(cfg, k))
        t[n++] = (cl_target){d, spmv_kernel_name((spmv_kernel)k)};
  }
  *targets = t;
  *ntargets = n;
  return DSG_OK;
}

/* The OpenCL devices, or NULL and count 0 where there is no OpenCL backend and bench goes on
 * without it (said on stderr); an error with --matvec opencl. Free with dsg_free. */
static int opencl_devices(const app_config *cfg, dsg_device **list, int *count)
{
  char why[1024];
  int status = dsg_devices(list, count);
  if (status == DSG_OK)
    return DSG_OK;
  *list = NULL;
  *count = 0;
  if (strcmp(cfg->opt.matvec, "opencl") == 0)
    return status; /* an error: the CLI prints its message */
  if (!cfg->quiet)
    fprintf(stderr, "bench: no OpenCL backend, going on without: %s\n",
            last_message(why, sizeof(why)));
  dsg_error_clear();
  return DSG_OK;
}

/* Each OpenCL target (opencl_targets) on one input: a row each, one per solver. A device or
 * kernel that fails is reported on stderr and skipped; the others go on. */
static int bench_opencl(bench *b, const dsg_options *base, bench_input *in)
{
  const app_config *cfg = b->cfg;
  const char *label = in->label;
  dsg_device *list = NULL;
  cl_target *targets = NULL;
  char why[1024];
  int count = 0, ntargets = 0, status = opencl_devices(cfg, &list, &count);
  if (status == DSG_OK && count > 0)
    status = opencl_targets(cfg, list, count, &targets, &ntargets);
  double copy = NAN;
  for (int i = 0; i < ntargets && status == DSG_OK && !app_cancel; i++) {
    const int d = targets[i].device;
    dsg_options opt = *base;
    spmv_matvec *mv = NULL;
    char spec[16];
    if (i > 0 && targets[i - 1].device != d)
      copy = NAN; /* a device's copy bandwidth, measured once */
    snprintf(spec, sizeof(spec), "%d", d);
    opt.matvec = "opencl";
    opt.cl_device = spec;
    opt.kernel = targets[i].kernel;
    if (!cfg->quiet)
      fprintf(stderr, "bench: %s: opencl [%d] %s: kernel %s\n", label, d, list[d].name,
              targets[i].kernel ? targets[i].kernel : "auto");
    if (dsg_problem_matvec(in->problem, &opt, !cfg->no_solve, &mv) != DSG_OK) {
      fprintf(stderr, "bench: %s: skipping [%d] %s kernel %s: %s\n", label, d, list[d].name,
              targets[i].kernel ? targets[i].kernel : "auto", last_message(why, sizeof(why)));
      b->skipped++;
      continue;
    }
    if (isnan(copy))
      status = spmv_cl_copy_gbs(mv, spmv_dia_bytes(in->N), cfg->repeat, &copy);
    bench_row *row = status == DSG_OK ? new_row(b) : NULL;
    if (status == DSG_OK && !row)
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
    if (status == DSG_OK) {
      opencl_names(row, list, count, d, spmv_matvec_cl_info(mv));
      row->copy_gbs = copy;
      status = bench_backend(b, &opt, in, mv, NULL, b->nrows - 1);
    }
    spmv_matvec_destroy(mv);
  }
  free(targets);
  dsg_free(list);
  return status;
}

/* ---- --e2e: the whole segment ---- */

/* Removes the files in dir, then dir (one level: what e2e_write committed there). */
static void remove_folder(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  char path[4200];
  while (d && (e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    unlink(path);
  }
  if (d)
    closedir(d);
  rmdir(dir);
}

/* A picture (malloc'd rgb, freed here) into out. */
static int write_picture(app_out *out, const char *name, int w, int h, int comp, unsigned char *rgb)
{
  int status = app_out_png(out, name, w, h, comp, rgb);
  free(rgb);
  return status;
}

/* segment's default outputs of res into out: the files app/cli/run.c writes (its stage_write
 * and report, static there, so bench writes the same files through the same io.h and diaseg.h
 * calls, one after the other): eigenvectors.npy and the first APP_DEFAULT_PICTURES eigvec_NN.png,
 * contours.npy and .png, ucm.npy and .png, labels.npy, labels.png, overlay.png and report.json. */
static int e2e_outputs(app_out *out, const dsg_image *img, const dsg_result *res, const char *label)
{
  const int ww = dsg_result_work_width(res), wh = dsg_result_work_height(res);
  const int w = dsg_result_width(res), h = dsg_result_height(res), nconv = dsg_result_nconv(res);
  const size_t wn = (size_t)ww * (size_t)wh, n = (size_t)w * (size_t)h;
  const int32_t *labels = dsg_result_labels(res);
  const float *contours = dsg_result_contours(res);
  unsigned char *rgb = NULL, *gray = NULL;
  float *field = NULL, *ucm = NULL;
  uint16_t *png16 = NULL;
  char name[32], *json = NULL;
  size_t len = 0;
  int status = DSG_OK;
  if (nconv > 0) {
    const float *vectors = dsg_result_eigenvectors(res);
    const double *sqrt_degree = dsg_result_sqrt_degree(res);
    const size_t shape[3] = {(size_t)nconv, (size_t)wh, (size_t)ww};
    status = app_out_npy_f32(out, "eigenvectors.npy", vectors, 3, shape);
    field = status == DSG_OK ? malloc(wn * sizeof(*field)) : NULL;
    if (status == DSG_OK && !field)
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", ww, wh);
#ifdef APP_DEFAULT_PICTURES
    const int pictures = APP_DEFAULT_PICTURES < nconv ? APP_DEFAULT_PICTURES : nconv;
#else
    const int pictures = nconv;
#endif
    for (int k = 0; k < pictures && status == DSG_OK; k++) {
      const float *u = vectors + (size_t)k * wn;
      for (size_t i = 0; i < wn; i++)
        field[i] = (float)((double)u[i] / sqrt_degree[i]); /* v = D^-1/2 u */
      snprintf(name, sizeof(name), "eigvec_%02d.png", k);
      status = dsg_picture_field(field, ww, wh, &rgb);
      if (status == DSG_OK)
        status = write_picture(out, name, ww, wh, 3, rgb);
    }
  }
  if (status == DSG_OK && contours) {
    const size_t shape[2] = {(size_t)h, (size_t)w};
    status = app_out_npy_f32(out, "contours.npy", contours, 2, shape);
    png16 = status == DSG_OK ? malloc(n * sizeof(*png16)) : NULL;
    if (status == DSG_OK && !png16)
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", w, h);
    for (size_t i = 0; status == DSG_OK && i < n; i++) {
      const double v = contours[i] < 0.0f ? 0.0 : contours[i] > 1.0f ? 1.0 : contours[i];
      png16[i] = (uint16_t)lround(v * 65535.0);
    }
    if (status == DSG_OK)
      status = app_out_png16(out, "contours.png", w, h, png16);
  }
  if (status == DSG_OK) { /* the hierarchy's map, at the working size */
    const size_t W2 = 2 * (size_t)ww + 1, H2 = 2 * (size_t)wh + 1, shape[2] = {H2, W2};
    float top = 0.0f;
    ucm = malloc(W2 * H2 * sizeof(*ucm));
    gray = malloc(W2 * H2);
    if (!ucm || !gray)
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %zu x %zu map", W2, H2);
    if (status == DSG_OK && dsg_result_ucm(res, ucm) == DSG_OK) {
      status = app_out_npy_f32(out, "ucm.npy", ucm, 2, shape);
      for (size_t i = 0; i < W2 * H2; i++)
        top = ucm[i] > top ? ucm[i] : top;
      for (size_t i = 0; i < W2 * H2; i++)
        gray[i] = (unsigned char)lround(255.0 * (1.0 - (top > 0.0f ? sqrt(ucm[i] / top) : 0.0)));
      if (status == DSG_OK)
        status = app_out_png(out, "ucm.png", (int)W2, (int)H2, 1, gray);
    } else if (status == DSG_OK) {
      dsg_error_clear(); /* no hierarchy (k-means): no map */
    }
  }
  if (status == DSG_OK && labels) {
    const size_t shape[2] = {(size_t)h, (size_t)w};
    status = app_out_npy_i32(out, "labels.npy", labels, 2, shape);
    if (status == DSG_OK)
      status = dsg_picture_labels(labels, w, h, &rgb);
    if (status == DSG_OK)
      status = write_picture(out, "labels.png", w, h, 3, rgb);
    if (status == DSG_OK)
      status = dsg_picture_overlay(img, labels, &rgb);
    if (status == DSG_OK)
      status = write_picture(out, "overlay.png", w, h, 3, rgb);
  }
  if (status == DSG_OK) {
    const dsg_report_info info = {"segment", label, w, h, 0, 0, 0, 0.0, 0.0, 0.0};
    status = dsg_result_report(res, &info, &json, &len);
  }
  if (status == DSG_OK)
    status = app_out_text(out, "report.json", json, len);
  dsg_free(json);
  free(field);
  free(png16);
  free(ucm);
  free(gray);
  return status;
}

/* The write stage of --e2e: e2e_outputs staged in a temporary folder and committed, timed into
 * *seconds, then removed. */
static int e2e_write(const dsg_image *img, const dsg_result *res, const char *label,
                     double *seconds)
{
  char dir[64], out_dir[80];
  app_out *out = NULL;
  int status;
  snprintf(dir, sizeof(dir), "/tmp/diaseg-bench-XXXXXX");
  if (!mkdtemp(dir))
    return dsg_error_set(DSG_ERR_IO, "cannot create a folder in /tmp: %s", strerror(errno));
  snprintf(out_dir, sizeof(out_dir), "%s/out", dir);
  const double t0 = dsg_seconds();
  status = app_out_begin(&out, out_dir);
  if (status == DSG_OK) {
    app_signals_guard(out); /* a second signal removes the staged files */
    status = e2e_outputs(out, img, res, label);
  }
  if (status == DSG_OK)
    status = app_out_commit(out, NULL);
  *seconds = dsg_seconds() - t0;
  app_signals_hold();
  app_signals_guard(NULL);
  app_out_destroy(out);
  remove_folder(out_dir);
  rmdir(dir);
  app_signals_release(0);
  return status;
}

/* One segment run on a backend into the last row (its names set): dsg_segment under the budget,
 * then the write stage. opt is the backend's (matvec, device, kernel, solver). */
static int e2e_run(bench *b, const dsg_options *opt, bench_input *in)
{
  const app_config *cfg = b->cfg;
  const int index = b->nrows - 1;
  dsg_options one = *opt;
  dsg_result *res = NULL;
  bench_watch watch;
  char name[80];
  int over = 0, status;
  bench_row *row = &b->rows[index];
  snprintf(row->input, sizeof(row->input), "%s", in->label);
  snprintf(row->solver, sizeof(row->solver), "%s", opt->solver);
  row->width = in->width;
  row->height = in->height;
  if (!cfg->quiet)
    fprintf(stderr, "bench: %s: %s: segment (%s)\n", in->label, row_name(row, name, sizeof(name)),
            opt->solver);
  one.cancel = watch_start(&watch, cfg->budget);
  status = dsg_segment(&in->img, &one, &res);
  const double wall = watch_stop(&watch, &over);
  row->solve_wall_s = wall;
  if (res && (status == DSG_OK || status == DSG_ERR_NOCONV)) {
    const dsg_timing t = dsg_result_timing(res);
    double write_s = 0.0;
    row->state = BENCH_STATE_DONE;
    row->solved = 1;
    row->converged = dsg_result_converged(res);
    row->nconv = dsg_result_nconv(res);
    row->matvecs = dsg_result_products(res);
    row->work_width = dsg_result_work_width(res);
    row->work_height = dsg_result_work_height(res);
    row->n = row->work_width * row->work_height;
    row->ndiag = res->ndiag;
    if (res->has_cl) /* the kernel auto chose */
      snprintf(row->kernel, sizeof(row->kernel), "%s", spmv_kernel_name(res->cl.kernel));
    status = e2e_write(&in->img, res, in->label, &write_s);
    row = &b->rows[index];
    row->stage_s[BENCH_STAGE_CONTOURS] = t.contours;
    row->stage_s[BENCH_STAGE_AFFINITY] = t.affinity - t.contours;
    row->stage_s[BENCH_STAGE_SETUP] = t.setup;
    row->stage_s[BENCH_STAGE_SOLVE] = t.solve;
    row->stage_s[BENCH_STAGE_GROUPING] = t.cluster;
    row->stage_s[BENCH_STAGE_RESOLUTION] = t.resolution;
    row->stage_s[BENCH_STAGE_WRITE] = write_s;
    row->total_s = t.total + write_s;
  } else {
    status = stopped(cfg, row, status, over, in->label, "segment", wall);
  }
  dsg_result_destroy(res);
  return status;
}

/* --e2e on one input: the C path and each OpenCL target (opencl_targets), each with every solver
 * bench runs, a row each. */
static int bench_e2e(bench *b, const dsg_options *base, bench_input *in)
{
  const app_config *cfg = b->cfg;
  dsg_device *list = NULL;
  cl_target *targets = NULL;
  int count = 0, ntargets = 0, status = DSG_OK;
  const int cpu = strcmp(cfg->opt.matvec, "opencl") != 0;
  if (strcmp(cfg->opt.matvec, "cpu") != 0)
    status = opencl_devices(cfg, &list, &count);
  if (status == DSG_OK && count > 0)
    status = opencl_targets(cfg, list, count, &targets, &ntargets);
  for (int i = cpu ? -1 : 0; i < ntargets && status == DSG_OK && !app_cancel; i++) {
    for (int s = 0; s < bench_solver_count() && status == DSG_OK && !app_cancel; s++) {
      dsg_options opt = *base;
      char spec[16];
      bench_row *row;
      if (!solver_wanted(cfg, bench_solver_name(s), in->width, in->height))
        continue;
      if (!(row = new_row(b))) {
        status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
        break;
      }
      opt.solver = bench_solver_name(s);
      if (i < 0) {
        cpu_names(row);
        opt.matvec = "cpu";
      } else {
        const int d = targets[i].device;
        spmv_cl_info info;
        memset(&info, 0, sizeof(info));
        snprintf(info.device, sizeof(info.device), "%s", list[d].name);
        snprintf(info.platform, sizeof(info.platform), "%s", list[d].platform);
        info.kernel = SPMV_KERNEL_AUTO;
        opencl_names(row, list, count, d, &info);
        if (targets[i].kernel) /* else the one auto chooses, known after the run */
          snprintf(row->kernel, sizeof(row->kernel), "%s", targets[i].kernel);
        else
          row->kernel[0] = '\0';
        snprintf(spec, sizeof(spec), "%d", d);
        opt.matvec = "opencl";
        opt.cl_device = spec;
        opt.kernel = targets[i].kernel;
      }
      status = e2e_run(b, &opt, in);
      if (status != DSG_OK && status != DSG_ERR_INTERRUPTED && i >= 0 &&
          b->rows[b->nrows - 1].state == BENCH_STATE_NONE) {
        char why[1024];
        fprintf(stderr, "bench: %s: skipping %s: %s\n", in->label, b->rows[b->nrows - 1].backend,
                last_message(why, sizeof(why)));
        b->nrows--; /* a device that fails is skipped, as for the SpMV */
        b->skipped++;
        status = DSG_OK;
      }
    }
  }
  free(targets);
  dsg_free(list);
  return status;
}

/* ---- the command ---- */

/* Speedups of rows first .. b->nrows - 1 (one input) against its C path with the same solver. */
static void set_speedups(bench *b, int first)
{
  for (int r = first; r < b->nrows; r++) {
    bench_row *row = &b->rows[r];
    const bench_row *cpu = NULL;
    for (int q = first; q < b->nrows && !cpu; q++)
      if (strcmp(b->rows[q].backend, "cpu") == 0 && strcmp(b->rows[q].solver, row->solver) == 0)
        cpu = &b->rows[q];
    row->speedup_spmv = cpu && row->runs ? cpu->spmv_median / row->spmv_median : NAN;
    row->speedup_solve = cpu && row->solved && cpu->solved ? cpu->solve_s / row->solve_s : NAN;
    row->speedup_total = cpu && row->solved && cpu->solved ? cpu->total_s / row->total_s : NAN;
  }
}

/* The input i of the run: its path, label and size (w 0: as it is). */
static int input_source(const app_config *cfg, int i, char *sample, size_t cap, const char **path,
                        char *label, size_t label_cap, int *w, int *h)
{
  *w = *h = 0;
  if (i < cfg->ninputs) {
    const char *slash = strrchr(cfg->inputs[i], '/');
    *path = cfg->inputs[i];
    snprintf(label, label_cap, "%s", slash ? slash + 1 : *path);
    return DSG_OK;
  }
  int status = app_find_sample(sample, cap);
  if (status != DSG_OK)
    return status;
  *path = sample;
  if (cfg->nsizes > 0) {
    *w = cfg->sizes[i - cfg->ninputs][0];
    *h = cfg->sizes[i - cfg->ninputs][1];
    snprintf(label, label_cap, "%dx%d", *w, *h);
  } else {
    snprintf(label, label_cap, "coffee.png");
  }
  return DSG_OK;
}

/* The table, then --json, --csv and --chart. */
static int write_results(const bench *b)
{
  const app_config *cfg = b->cfg;
  /* the table goes to stdout unless the JSON does */
  FILE *table = cfg->json && strcmp(cfg->json, "-") == 0 ? stderr : stdout;
  int status = DSG_OK;
  bench_print_table(b, table);
  if (table == stdout && (fflush(stdout) != 0 || ferror(stdout)))
    status =
        dsg_error_set(DSG_ERR_IO, "cannot write the table to standard output: %s", strerror(errno));
  if (status == DSG_OK && cfg->json)
    status = bench_write_json(b, cfg->json);
  if (status == DSG_OK && cfg->csv)
    status = bench_write_csv(b, cfg->csv);
  if (status == DSG_OK && cfg->chart)
    status = bench_write_chart(b, cfg->chart);
  return status;
}

int app_bench(const app_config *cfg)
{
  bench b;
  dsg_options opt = cfg->opt, defaults;
  char sample[4096];
  int status = DSG_OK, suspect = 0;
  const int ninputs = cfg->ninputs + cfg->nsizes > 0 ? cfg->ninputs + cfg->nsizes : 1;
  const char *files[] = {cfg->json, cfg->csv, cfg->chart};

  memset(&b, 0, sizeof(b));
  b.cfg = cfg;
  b.load = NAN;
  /* The options every backend starts from: eigenpairs only (no grouping; --e2e: segment's k),
   * Ctrl-C stops the work, and no library notes (bench prints its own progress). matvec and
   * solver are the names of one backend and one solver (bench's "all" is none); each
   * measurement sets its own. */
  dsg_options_init(&defaults);
  opt.k = cfg->e2e ? defaults.k : 0;
  opt.cancel = &app_cancel;
  opt.progress = NULL;
  opt.log = NULL;
  opt.matvec = "cpu";
  opt.solver = solver_to_prepare(cfg);

  /* an unwritable --json, --csv or --chart path fails now, not after the measurements */
  for (int i = 0; i < 3 && status == DSG_OK; i++)
    if (files[i] && strcmp(files[i], "-") != 0)
      status = bench_file_probe(files[i]);
  if (status == DSG_OK)
    check_load(&b);
  for (int i = 0; i < ninputs && status == DSG_OK && !app_cancel; i++) {
    bench_input in;
    char label[64];
    const char *path = NULL;
    int w, h;
    memset(&in, 0, sizeof(in));
    status = input_source(cfg, i, sample, sizeof(sample), &path, label, sizeof(label), &w, &h);
    if (status != DSG_OK)
      break;
    in.label = label;
    b.first = b.nrows;
    if (!cfg->quiet)
      fprintf(stderr, "bench: %s: %s\n", label,
              cfg->e2e ? "loading the image" : "building the affinity");
    status = input_load(cfg, &in, path, w, h);
    if (status == DSG_OK && cfg->e2e) {
      status = bench_e2e(&b, &opt, &in);
    } else if (status == DSG_OK) {
      status = input_problem(&opt, &in);
      if (status == DSG_OK && strcmp(cfg->opt.matvec, "opencl") != 0)
        status = bench_cpu(&b, &opt, &in);
      if (status == DSG_OK && strcmp(cfg->opt.matvec, "cpu") != 0 && !app_cancel)
        status = bench_opencl(&b, &opt, &in);
    }
    set_speedups(&b, b.first);
    input_free(&in);
  }
  int kept = 0; /* without the SpMV rows that a signal stopped before their first product */
  for (int i = 0; i < b.nrows; i++)
    if (cfg->e2e || b.rows[i].runs > 0)
      b.rows[kept++] = b.rows[i];
  b.nrows = kept;
  if (app_cancel && (status == DSG_OK || status == DSG_ERR_INTERRUPTED)) {
    b.interrupted = app_cancel; /* what was measured is shown and written, marked */
    status = DSG_OK;
    dsg_error_clear();
  } else if (status == DSG_OK && b.nrows == 0 && b.skipped > 0) {
    status = dsg_error_set(DSG_ERR_NODEVICE,
                           "bench measured nothing: all %d OpenCL device and kernel pairs tried "
                           "were skipped (reasons above)",
                           b.skipped);
  } else if (status == DSG_OK && b.nrows == 0) {
    status = dsg_error_set(DSG_ERR_NODEVICE, "bench measured nothing: no backend ran (see "
                                             "--matvec, --cl-device and --kernel)");
  }
  for (int i = 0; i < b.nrows; i++)
    suspect += bench_bound_suspect(&b.rows[i]);
  if (status == DSG_OK && suspect > 0)
    bench_warn(&b, "bound",
               "%d row%s beat the copy bandwidth of the same bytes (%%bw over 100, marked ?): "
               "the bound or the timing is off (a matrix that fits in the caches, a busy host), "
               "so those figures are suspect",
               suspect, suspect > 1 ? "s" : "");
  if (status == DSG_OK)
    status = write_results(&b);
  if (status == DSG_OK && b.interrupted)
    status = dsg_error_set(DSG_ERR_INTERRUPTED,
                           "bench interrupted by signal %d: the table%s hold%s the %d row%s "
                           "measured before it",
                           b.interrupted, cfg->json || cfg->csv || cfg->chart ? " and files" : "",
                           cfg->json || cfg->csv || cfg->chart ? "" : "s", b.nrows,
                           b.nrows == 1 ? "" : "s");
  free(b.rows);
  return status;
}
