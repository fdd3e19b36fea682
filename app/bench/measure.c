/* diaseg bench: SpMV and eigensolve timings per backend, against the measured copy bandwidth.
 *
 * For each input (an image, or the sample image resampled to --size WxH) the problem (features,
 * the normalised affinity, its components) is built once by the library (dsg_problem_create),
 * and its specks carved once by an untimed solve (input_carve). Each backend then gets:
 *  - SpMV: `repeat` timed products after 3 warm-ups; the median and the minimum of the product's
 *    own time (the C loop's wall time; an OpenCL kernel's event time);
 *  - its bandwidth bound: a plain copy of as many bytes as the matrix, on the same device, timed
 *    the same way (bytes read + bytes written); on the host each timed product follows a timed
 *    copy, so drift on a shared machine moves both;
 *  - the eigensolve: what `diaseg segment` runs (dsg_problem_solve_on, without the grouping), the
 *    same nev, tol and known vectors for every backend, split into the matvec's kernel, transfer
 *    and host time and the eigensolver's host work;
 *  - a check: its product against the scalar reference (max row error relative to |A||x|).
 * Figures: GFLOP/s = 2 ndiag n / t; effective GB/s = (4 ndiag + 8) n / t (A, x and y once). */
#include "bench_internal.h"
/* only for app_result_eig: the eigensolver's own split of a solve's time (matvec kernel,
 * transfer and host time, the Lanczos basis operations), which diaseg.h does not give */
#include "diaseg_internal.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

/* ---- the solvers, in bench's order (bench_internal.h) ---- */

int bench_solver_count(void) { return eig_solver_count(); }

const char *bench_solver_name(int i) { return eig_solver_at(eig_solver_count() - 1 - i)->name; }

/* ---- rows ---- */

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
  return &b->rows[b->nrows++];
}

/* The last library message as the command line shows it (parameters spelled as flags), for
 * the notes bench prints on stderr and goes on. */
static const char *last_message(char *buf, size_t cap)
{
  dsg_error_render(dsg_error_raw(), buf, cap, app_cli_spell, NULL);
  return buf;
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

/* ---- inputs ---- */

typedef struct bench_input {
  const char *label;
  dsg_image img; /* until the problem is built */
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

/* Loads path (resampled to w x h when w > 0), builds its problem with opt and the vectors of
 * the SpMV measurements: a fixed random x and its reference product. input_free frees in, also
 * after an error. */
static int input_prepare(const app_config *cfg, const dsg_options *opt, bench_input *in,
                         const char *path, int w, int h)
{
  int status = app_image_load(path, cfg->max_pixels, &in->img);
  if (status == DSG_OK && w > 0) {
    dsg_image resized = {0};
    if ((size_t)w * (size_t)h > cfg->max_pixels)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "--size %dx%d is over the cap of %zu pixels (raise it "
                           "with --max-pixels)",
                           w, h, cfg->max_pixels);
    status = dsg_image_resize(&in->img, w, h, &resized);
    dsg_image_free(&in->img);
    in->img = resized;
  }
  if (status == DSG_OK)
    status = dsg_problem_create(&in->img, opt, &in->problem);
  if (status != DSG_OK)
    return status;
  in->width = in->img.width;
  in->height = in->img.height;
  dsg_image_free(&in->img);
  in->N = dsg_problem_dia(in->problem);
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

/* Carves the problem's specks before any measurement, with one untimed solve on the C path
 * (opt's solver). dsg_problem_solve_on carves the specks it finds into the problem it solves, so
 * without this the first solve measured would pay for the carving rounds and every later one
 * would start from its groups: now every backend and solver solves the same problem, the one
 * `diaseg segment` ends its rounds with, and gets the same eigenvalues. */
static int input_carve(const app_config *cfg, const dsg_options *opt, bench_input *in)
{
  dsg_options one = *opt;
  spmv_matvec *mv = NULL;
  dsg_result *res = NULL;
  int status;
  if (cfg->no_solve || opt->keep_specks) /* no solve, or no specks to carve */
    return DSG_OK;
  /* on the fastest backend at hand (a GPU unless only the C path is measured): at 3840x2160 a
   * C-path solve would cost more than all the GPU rows together */
  one.matvec = strcmp(cfg->opt.matvec, "cpu") == 0 ? "cpu" : "auto";
  status = dsg_problem_matvec(in->problem, &one, 1, &mv);
  if (status == DSG_OK)
    status = dsg_problem_solve_on(in->problem, &one, mv, &res);
  if (status == DSG_ERR_NOCONV) /* the measured solves will say so */
    status = DSG_OK;
  dsg_result_destroy(res);
  spmv_matvec_destroy(mv);
  return status;
}

/* ---- one backend ---- */

/* Whether bench runs solver `name` (--solver NAME or all). */
static int solver_wanted(const app_config *cfg, const char *name)
{
  return strcmp(cfg->opt.solver, "all") == 0 || strcmp(cfg->opt.solver, name) == 0;
}

/* The solver a backend's matvec is made ready for (dsg_problem_matvec): of those bench runs, the
 * first with a step to take before the clock (today only lanczos: its kernels are built before
 * its solve, as for segment and eigs), else the first. */
static const char *solver_to_prepare(const app_config *cfg)
{
  const char *first = NULL;
  for (int s = 0; s < bench_solver_count(); s++) {
    const eig_solver *solver;
    if (!solver_wanted(cfg, bench_solver_name(s)))
      continue;
    if (eig_solver_find(bench_solver_name(s), &solver) == DSG_OK && solver->prepare)
      return solver->name;
    first = first ? first : bench_solver_name(s);
  }
  return first ? first : bench_solver_name(0);
}

/* The figures of one solve into row. */
static void row_from_result(bench_row *row, const dsg_result *res)
{
  const eig_result *eig = app_result_eig(res);
  const double *residuals = dsg_result_residuals(res), *values = dsg_result_eigenvalues(res);
  const int nconv = dsg_result_nconv(res);
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

/* The solves bench runs (--solver NAME, or every solver) on one backend's matvec: the first into
 * row, each further one into a new row with the same SpMV figures. opt is the backend's (matvec,
 * device, kernel). A solve stopped at max_iter is measured like the others (its pairs, flagged). */
static int bench_solves(const app_config *cfg, const dsg_options *opt, bench *b, bench_input *in,
                        spmv_matvec *mv, bench_row *row)
{
  const bench_row spmv_row = *row;
  int status = DSG_OK, first = 1;
  for (int s = 0; s < bench_solver_count() && status == DSG_OK; s++) {
    const char *name = bench_solver_name(s);
    dsg_options one = *opt;
    dsg_result *res = NULL;
    if (!solver_wanted(cfg, name))
      continue;
    if (!first) { /* another row, with the same SpMV figures */
      bench_row *next = new_row(b);
      if (!next) {
        status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
        break;
      }
      *next = spmv_row;
      row = next;
    }
    first = 0;
    snprintf(row->solver, sizeof(row->solver), "%s", name);
    one.solver = name;
    if (!cfg->quiet)
      fprintf(stderr, "bench: %s: %s%s%s: %s solve\n", row->input, row->backend,
              row->kernel[0] ? "/" : "", row->kernel, name);
    status = dsg_problem_solve_on(in->problem, &one, mv, &res);
    if (res && (status == DSG_OK || status == DSG_ERR_NOCONV)) {
      row_from_result(row, res);
      status = DSG_OK;
    }
    dsg_result_destroy(res);
  }
  return status;
}

/* Times one backend's SpMV on one input into row, then its solves (bench_solves) unless
 * --spmv-only. With a host copy, each timed product is preceded by a timed copy and
 * row->copy_gbs is set from their median. */
static int bench_backend(const app_config *cfg, const dsg_options *opt, bench *b, bench_input *in,
                         spmv_matvec *mv, host_copy *copy, bench_row *row)
{
  const spmv_dia *N = in->N;
  const int repeat = cfg->repeat;
  double *t = malloc(2 * (size_t)repeat * sizeof(*t)), *tc = t + repeat;
  int status = DSG_OK;
  if (!t)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d timings", repeat);

  row->width = in->width;
  row->height = in->height;
  row->n = N->rows;
  row->ndiag = N->ndiag;
  snprintf(row->input, sizeof(row->input), "%s", in->label);
  for (int r = 0; r < 3 && status == DSG_OK; r++) {
    if (copy)
      host_copy_run(copy);
    status = spmv_matvec_apply(mv, in->x, in->y);
  }
  if (status == DSG_OK)
    row->check_error = spmv_dia_row_error(N, in->x, in->y, in->ref);
  for (int r = 0; r < repeat && status == DSG_OK; r++) {
    if (copy)
      tc[r] = host_copy_run(copy);
    spmv_timing before = spmv_matvec_timing(mv);
    status = spmv_matvec_apply(mv, in->x, in->y);
    t[r] = spmv_matvec_timing(mv).kernel_s - before.kernel_s;
  }
  if (status != DSG_OK)
    goto out_free;
  if (copy)
    row->copy_gbs = 2.0 * (double)(copy->count * sizeof(float)) / median_sorted(tc, repeat) / 1e9;
  row->spmv_median = median_sorted(t, repeat);
  row->spmv_min = t[0];
  row->gflops = 2.0 * N->ndiag * (double)N->rows / row->spmv_median / 1e9;
  row->gbs = (4.0 * N->ndiag + 8.0) * (double)N->rows / row->spmv_median / 1e9;
  row->bound_pct = row->copy_gbs > 0 ? 100.0 * row->gbs / row->copy_gbs : NAN;
  if (!cfg->no_solve)
    status = bench_solves(cfg, opt, b, in, mv, row);
out_free:
  free(t);
  return status;
}

/* ---- the backends ---- */

/* The C path on one input: one row per solver. */
static int bench_cpu(const app_config *cfg, const dsg_options *base, bench *b, bench_input *in)
{
  dsg_options opt = *base;
  spmv_matvec *mv = NULL;
  host_copy copy = {0};
  char cpu_name[128];
  int status;
  bench_row *row = new_row(b);
  if (!row)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
  snprintf(row->backend, sizeof(row->backend), "cpu");
  host_cpu_name(cpu_name, sizeof(cpu_name));
  snprintf(row->device, sizeof(row->device), "%s (host, %d OpenMP threads)", cpu_name,
           omp_get_max_threads());
  snprintf(row->device_short, sizeof(row->device_short), "C path, %d threads",
           omp_get_max_threads());
  if (!cfg->quiet)
    fprintf(stderr, "bench: %s: cpu: copy bandwidth, SpMV x %d%s\n", in->label, cfg->repeat,
            cfg->no_solve ? "" : ", eigensolve");
  opt.matvec = "cpu";
  status = host_copy_init(&copy, spmv_dia_bytes(in->N));
  if (status == DSG_OK)
    status = dsg_problem_matvec(in->problem, &opt, !cfg->no_solve, &mv);
  if (status == DSG_OK)
    status = bench_backend(cfg, &opt, b, in, mv, &copy, row);
  spmv_matvec_destroy(mv);
  host_copy_free(&copy);
  return status;
}

/* Whether bench measures kernel k (--kernel all, a list, one name, or auto: the one of image
 * and vector that the device gets, which only the matvec knows). */
static int kernel_wanted(const app_config *cfg, spmv_kernel want, int k)
{
  if (cfg->kernel_mask)
    return (cfg->kernel_mask & (1u << k)) != 0;
  if (cfg->all_kernels)
    return 1;
  if (want != SPMV_KERNEL_AUTO)
    return (int)want == k;
  return k == SPMV_KERNEL_IMAGE || k == SPMV_KERNEL_VECTOR;
}

/* Every OpenCL device (or the one --cl-device names) x every kernel (or --kernel's): a row each.
 * A device or kernel that fails is reported on stderr and skipped; the others go on. */
static int bench_opencl(const app_config *cfg, const dsg_options *base, bench *b, bench_input *in)
{
  const char *label = in->label;
  const int each = cfg->all_kernels || cfg->kernel_mask; /* kernels by name, not --kernel's */
  spmv_kernel want = SPMV_KERNEL_AUTO;
  dsg_device *list = NULL;
  char why[1024];
  int count = 0, only = -1, status = dsg_devices(&list, &count);
  if (status != DSG_OK) {
    if (strcmp(cfg->opt.matvec, "opencl") == 0)
      return status; /* an error: the CLI prints its message */
    if (!cfg->quiet)
      fprintf(stderr, "bench: no OpenCL backend, going on without: %s\n",
              last_message(why, sizeof(why)));
    return DSG_OK;
  }
  if (cfg->opt.kernel && *cfg->opt.kernel)
    status = spmv_kernel_parse(cfg->opt.kernel, &want);
  if (status == DSG_OK && cfg->opt.cl_device && *cfg->opt.cl_device)
    status = dsg_device_pick(list, count, cfg->opt.cl_device, 0, &only);
  for (int d = 0; d < count && status == DSG_OK; d++) {
    double copy = NAN;
    if (only >= 0 && d != only)
      continue;
    for (int k = SPMV_KERNEL_NAIVE; k < SPMV_KERNEL_COUNT && status == DSG_OK; k++) {
      dsg_options opt = *base;
      spmv_matvec *mv = NULL;
      char spec[16];
      if (!kernel_wanted(cfg, want, k))
        continue;
      snprintf(spec, sizeof(spec), "%d", d);
      opt.matvec = "opencl";
      opt.cl_device = spec;
      opt.kernel = each ? spmv_kernel_name((spmv_kernel)k) : cfg->opt.kernel;
      if (!cfg->quiet)
        fprintf(stderr, "bench: %s: opencl [%d] %s: kernel %s\n", label, d, list[d].name,
                each || want != SPMV_KERNEL_AUTO ? spmv_kernel_name((spmv_kernel)k) : "auto");
      if (dsg_problem_matvec(in->problem, &opt, !cfg->no_solve, &mv) != DSG_OK) {
        fprintf(stderr, "bench: %s: skipping [%d] %s kernel %s: %s\n", label, d, list[d].name,
                spmv_kernel_name((spmv_kernel)k), last_message(why, sizeof(why)));
        b->skipped++;
        continue;
      }
      const spmv_cl_info *info = spmv_matvec_cl_info(mv);
      if (!each && want == SPMV_KERNEL_AUTO && (int)info->kernel != k) {
        spmv_matvec_destroy(mv); /* auto picked the other one of image/vector */
        continue;
      }
      if (isnan(copy)) {
        status = spmv_cl_copy_gbs(mv, spmv_dia_bytes(in->N), cfg->repeat, &copy);
        if (status != DSG_OK) {
          spmv_matvec_destroy(mv);
          break;
        }
      }
      bench_row *row = new_row(b);
      if (!row) {
        spmv_matvec_destroy(mv);
        status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
        break;
      }
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
      row->copy_gbs = copy;
      status = bench_backend(cfg, &opt, b, in, mv, NULL, row);
      spmv_matvec_destroy(mv);
    }
  }
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
    row->speedup_spmv = cpu ? cpu->spmv_median / row->spmv_median : NAN;
    row->speedup_solve = cpu && row->solved && cpu->solved ? cpu->solve_s / row->solve_s : NAN;
  }
}

int app_bench(const app_config *cfg)
{
  bench b = {cfg, NULL, 0, 0, 0};
  dsg_options opt = cfg->opt;
  char sample[4096];
  int status = DSG_OK;
  const int ninputs = cfg->ninputs + cfg->nsizes > 0 ? cfg->ninputs + cfg->nsizes : 1;
  const char *files[] = {cfg->json, cfg->csv, cfg->chart};

  /* The options every backend starts from: eigenpairs only (no grouping), Ctrl-C stops a solve,
   * and no library notes (bench prints its own progress). matvec and solver are the names of one
   * backend and one solver (bench's "all" is none); each measurement sets its own. */
  opt.k = 0;
  opt.cancel = &app_cancel;
  opt.progress = NULL;
  opt.log = NULL;
  opt.matvec = "cpu";
  opt.solver = solver_to_prepare(cfg);

  /* an unwritable --json, --csv or --chart path fails now, not after the measurements */
  for (int i = 0; i < 3 && status == DSG_OK; i++)
    if (files[i] && strcmp(files[i], "-") != 0)
      status = bench_file_probe(files[i]);
  for (int i = 0; i < ninputs && status == DSG_OK; i++) {
    bench_input in;
    char label[64];
    const char *path;
    int w = 0, h = 0;
    memset(&in, 0, sizeof(in));
    if (i < cfg->ninputs) {
      const char *slash = strrchr(cfg->inputs[i], '/');
      path = cfg->inputs[i];
      snprintf(label, sizeof(label), "%s", slash ? slash + 1 : path);
    } else {
      status = app_find_sample(sample, sizeof(sample));
      if (status != DSG_OK)
        break;
      path = sample;
      if (cfg->nsizes > 0) {
        w = cfg->sizes[i - cfg->ninputs][0];
        h = cfg->sizes[i - cfg->ninputs][1];
        snprintf(label, sizeof(label), "%dx%d", w, h);
      } else {
        snprintf(label, sizeof(label), "coffee.png");
      }
    }
    in.label = label;
    if (!cfg->quiet)
      fprintf(stderr, "bench: %s: building the affinity\n", label);
    status = input_prepare(cfg, &opt, &in, path, w, h);
    if (status == DSG_OK)
      status = input_carve(cfg, &opt, &in);

    const int first = b.nrows;
    if (status == DSG_OK && strcmp(cfg->opt.matvec, "opencl") != 0)
      status = bench_cpu(cfg, &opt, &b, &in);
    if (status == DSG_OK && strcmp(cfg->opt.matvec, "cpu") != 0)
      status = bench_opencl(cfg, &opt, &b, &in);
    set_speedups(&b, first);
    input_free(&in);
    if (status == DSG_OK && app_cancel)
      status =
          dsg_error_set(DSG_ERR_INTERRUPTED, "bench interrupted by signal %d", (int)app_cancel);
  }
  if (status == DSG_OK && b.nrows == 0 && b.skipped > 0)
    status = dsg_error_set(DSG_ERR_NODEVICE,
                           "bench measured nothing: all %d OpenCL device and kernel pairs tried "
                           "were skipped (reasons above)",
                           b.skipped);
  else if (status == DSG_OK && b.nrows == 0)
    status = dsg_error_set(DSG_ERR_NODEVICE, "bench measured nothing: no backend ran (see "
                                             "--matvec, --cl-device and --kernel)");
  if (status == DSG_OK) {
    /* the table goes to stdout unless the JSON does */
    FILE *table = cfg->json && strcmp(cfg->json, "-") == 0 ? stderr : stdout;
    bench_print_table(&b, table);
    if (table == stdout && (fflush(stdout) != 0 || ferror(stdout)))
      status = dsg_error_set(DSG_ERR_IO, "cannot write the table to standard output: %s",
                             strerror(errno));
    if (status == DSG_OK && cfg->json)
      status = bench_write_json(&b, cfg->json);
    if (status == DSG_OK && cfg->csv)
      status = bench_write_csv(&b, cfg->csv);
    if (status == DSG_OK && cfg->chart)
      status = bench_write_chart(&b, cfg->chart);
  }
  free(b.rows);
  return status;
}
