/* diaseg bench: SpMV and eigensolve timings per backend, against the measured copy bandwidth.
 *
 * For each input (an image, or the sample image resampled to --size WxH) the normalised affinity
 * is built once on the host. Each backend then gets:
 *  - SpMV: `repeat` timed products after 3 warm-ups; the median and the minimum of the product's
 *    own time (the C loop's wall time; an OpenCL kernel's event time);
 *  - its bandwidth bound: a plain copy of as many bytes as the matrix, on the same device, timed
 *    the same way (bytes read + bytes written); on the host each timed product follows a timed
 *    copy, so drift on a shared machine moves both;
 *  - the eigensolve: the same nev, tol and known vectors for every backend, split into the
 *    matvec's kernel, transfer and host time and the eigensolver's host work;
 *  - a check: its product against the scalar reference (max row error relative to |A||x|).
 * Figures: GFLOP/s = 2 ndiag n / t; effective GB/s = (4 ndiag + 8) n / t (A, x and y once). */
#include "app_internal.h"

#include <math.h>
#include <strings.h>
#include <omp.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

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

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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
static void device_short_name(const spmv_cl_device *d, char *buf, size_t cap)
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

typedef struct bench_input {
  const char *label;
  app_image img;
  spmv_dia *N;
  double *sqrt_degree;
  app_components comps;
  float *x, *y, *ref;
} bench_input;

static void input_free(bench_input *in)
{
  app_image_free(&in->img);
  spmv_dia_destroy(in->N);
  free(in->sqrt_degree);
  app_components_free(&in->comps);
  free(in->x);
  free(in->y);
  free(in->ref);
}

static int input_prepare(const app_config *cfg, bench_input *in, const char *path, int w, int h)
{
  float *feat = NULL;
  int nfeat = 0, status;
  status = app_image_load(path, cfg->max_pixels, &in->img);
  if (status == DSG_OK && w > 0) {
    app_image resized;
    if ((size_t)w * (size_t)h > cfg->max_pixels)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "--size %dx%d is over the cap of %zu pixels (raise it "
                           "with --max-pixels)",
                           w, h, cfg->max_pixels);
    status = app_image_resize(&in->img, w, h, &resized);
    app_image_free(&in->img);
    in->img = resized;
  }
  if (status == DSG_OK)
    status = app_features(&in->img, cfg->feature, &feat, &nfeat);
  if (status == DSG_OK)
    status = app_affinity_build(in->img.width, in->img.height, feat, nfeat, &cfg->affinity, &in->N,
                                &in->sqrt_degree);
  free(feat);
  if (status == DSG_OK)
    status = app_components_find(in->N, in->sqrt_degree, &in->comps);
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
  if ((size_t)cfg->nev >= n)
    return dsg_error_set(DSG_ERR_INVALID, "--nev %d is out of range for %s (%zu pixels)", cfg->nev,
                         in->label, n);
  return DSG_OK;
}

static double median_sorted(double *t, int count)
{
  qsort(t, (size_t)count, sizeof(*t), cmp_double);
  return count % 2 ? t[count / 2] : 0.5 * (t[count / 2 - 1] + t[count / 2]);
}

/* Times one backend's SpMV and solve on one input into row. With a host copy, each timed product
 * is preceded by a timed copy and row->copy_gbs is set from their median. */
static int bench_backend(const app_config *cfg, bench *b, bench_input *in, spmv_matvec *mv,
                         host_copy *copy, bench_row *row)
{
  const spmv_dia *N = in->N;
  const int repeat = cfg->repeat;
  double *t = malloc(2 * (size_t)repeat * sizeof(*t)), *tc = t + repeat;
  int status = DSG_OK;
  if (!t)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d timings", repeat);

  row->width = in->img.width;
  row->height = in->img.height;
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
    goto out;
  if (copy)
    row->copy_gbs = 2.0 * (double)(copy->count * sizeof(float)) / median_sorted(tc, repeat) / 1e9;
  row->spmv_median = median_sorted(t, repeat);
  row->spmv_min = t[0];
  row->gflops = 2.0 * N->ndiag * (double)N->rows / row->spmv_median / 1e9;
  row->gbs = (4.0 * N->ndiag + 8.0) * (double)N->rows / row->spmv_median / 1e9;
  row->bound_pct = row->copy_gbs > 0 ? 100.0 * row->gbs / row->copy_gbs : NAN;

  if (!cfg->no_solve) {
    static const char *solvers[] = {"arpack", "lanczos"};
    const bench_row spmv_row = *row;
    int first = 1;
    for (int s = 0; s < 2 && status == DSG_OK; s++) {
      eig_options opt;
      eig_result res;
      app_config one = *cfg;
      if (strcmp(cfg->solver, "all") != 0 && strcmp(cfg->solver, solvers[s]) != 0)
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
      snprintf(row->solver, sizeof(row->solver), "%s", solvers[s]);
      one.solver = solvers[s];
      app_eig_options(cfg, &opt);
      if (!cfg->keep_specks)
        app_components_to_options(&in->comps, &opt);
      opt.cancel = &app_cancel;
      if (!cfg->quiet)
        fprintf(stderr, "bench: %s: %s%s%s: %s solve\n", row->input, row->backend,
                row->kernel[0] ? "/" : "", row->kernel, solvers[s]);
      /* the Lanczos kernels are built before the clock starts, as for segment and eigs */
      status = s == 1 ? eig_lanczos_prepare(mv, &opt) : DSG_OK;
      if (status == DSG_OK)
        status = app_solve(&one, mv, &opt, &res);
      else
        memset(&res, 0, sizeof(res));
      if (status == DSG_OK || status == DSG_ERR_NOCONV) {
        row->solved = 1;
        row->converged = res.converged;
        row->nconv = res.nconv;
        row->matvecs = res.matvecs;
        row->solve_s = res.solve_s;
        row->mv_kernel_s = res.matvec.kernel_s;
        row->mv_transfer_s = res.matvec.transfer_s;
        row->mv_host_s = res.matvec.host_s;
        row->eig_host_s = res.host_s;
        row->orth_s = res.basis.orth_s;
        row->other_dev_s = res.basis.project_s + res.basis.normalize_s + res.basis.restart_s;
        row->steps = res.basis.steps;
        row->launches = res.basis.launches;
        row->second_passes = res.basis.second_passes;
        for (int k = 0; k < res.nconv; k++)
          row->max_residual =
              res.residuals[k] > row->max_residual ? res.residuals[k] : row->max_residual;
        row->lambda_last = res.nconv ? res.values[res.nconv - 1] : NAN;
        status = DSG_OK;
      }
      eig_result_free(&res);
    }
  }
out:
  free(t);
  return status;
}

/* "backend/kernel", the table's name of a row */
static void table_name(const bench_row *r, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", r->backend, r->kernel[0] ? "/" : "", r->kernel);
}

static void print_table(const bench *b, FILE *out)
{
  int wi = (int)strlen("input"), wb = (int)strlen("backend"), ws = (int)strlen("solver");
  char name[80];
  for (int i = 0; i < b->nrows; i++) { /* the text columns as wide as their longest entry */
    table_name(&b->rows[i], name, sizeof(name));
    wi = (int)strlen(b->rows[i].input) > wi ? (int)strlen(b->rows[i].input) : wi;
    wb = (int)strlen(name) > wb ? (int)strlen(name) : wb;
    ws = (int)strlen(b->rows[i].solver) > ws ? (int)strlen(b->rows[i].solver) : ws;
  }
  fprintf(out, "%-*s %-*s %-*s %8s %8s %7s %7s %5s %8s %6s %8s %7s %7s %7s %6s %7s\n", wi, "input",
          wb, "backend", ws, "solver", "spmv ms", "min ms", "GFLOP/s", "GB/s", "%bw", "solve s",
          "prod", "mv s", "xfer s", "orth s", "host s", "x spmv", "x solve");
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    table_name(r, name, sizeof(name));
    fprintf(out, "%-*s %-*s %-*s %8.3f %8.3f %7.1f %7.1f %5.1f", wi, r->input, wb, name, ws,
            r->solver[0] ? r->solver : "-", r->spmv_median * 1e3, r->spmv_min * 1e3, r->gflops,
            r->gbs, r->bound_pct);
    if (r->solved)
      fprintf(out, " %8.3f %6ld %8.3f %7.3f %7.3f %7.3f %6.2f %7.2f\n", r->solve_s, r->matvecs,
              r->mv_kernel_s, r->mv_transfer_s, r->orth_s,
              r->solve_s - r->mv_kernel_s - r->mv_transfer_s - r->orth_s - r->other_dev_s,
              r->speedup_spmv, r->speedup_solve);
    else
      fprintf(out, " %8s %6s %8s %7s %7s %7s %6.2f %7s\n", "-", "-", "-", "-", "-", "-",
              r->speedup_spmv, "-");
  }
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0)
      fprintf(out, "# %s: %dx%d, n = %d, %d diagonals\n", r->input, r->width, r->height, r->n,
              r->ndiag);
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0 ||
        strcmp(r->backend, b->rows[i - 1].backend) != 0)
      fprintf(out, "#   %s = %s, copy bandwidth %.1f GB/s\n", r->backend, r->device, r->copy_gbs);
  }
}

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

static int bench_file_open(bench_file *f, const char *path)
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
    return app_out_begin(&f->out, f->tmpdir);
  }
  if (slash) {
    dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
    if (!dir)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
  }
  status = app_out_begin(&f->out, dir ? dir : ".");
  free(dir);
  return status;
}

/* Closes the file if open (checking every write), renames it into place (or, for a path that
 * is not a regular file, writes its bytes there) and frees f. */
static int bench_file_commit(bench_file *f, int status)
{
  if (f->fp) {
    int st = app_out_close(f->out, f->fp);
    status = status == DSG_OK ? st : status;
  }
  if (status == DSG_OK)
    status = app_out_commit(f->out, NULL);
  app_out_destroy(f->out);
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

static int write_json(const bench *b, const char *path)
{
  const app_config *cfg = b->cfg;
  app_json j;
  int status;
  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_string(&j, "diaseg_version", DIASEG_VERSION);
  app_json_int(&j, "nev", cfg->nev);
  app_json_number(&j, "tol", cfg->tol);
  app_json_int(&j, "repeat", cfg->repeat);
  app_json_bool(&j, "keep_specks", cfg->keep_specks);
  app_json_int(&j, "radius", cfg->affinity.radius);
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
    app_json_number(&j, "check_error", r->check_error);
    app_json_begin_object(&j, "spmv");
    app_json_number(&j, "median_s", r->spmv_median);
    app_json_number(&j, "min_s", r->spmv_min);
    app_json_number(&j, "gflops", r->gflops);
    app_json_number(&j, "effective_gbs", r->gbs);
    app_json_number(&j, "copy_gbs", r->copy_gbs);
    app_json_number(&j, "percent_of_copy_bandwidth", r->bound_pct);
    app_json_number(&j, "speedup_vs_cpu", r->speedup_spmv);
    app_json_end_object(&j);
    if (r->solved) {
      app_json_begin_object(&j, "solve");
      app_json_bool(&j, "converged", r->converged);
      app_json_int(&j, "nconv", r->nconv);
      app_json_int(&j, "matvecs", r->matvecs);
      app_json_number(&j, "total_s", r->solve_s);
      app_json_number(&j, "matvec_kernel_s", r->mv_kernel_s);
      app_json_number(&j, "matvec_transfer_s", r->mv_transfer_s);
      app_json_number(&j, "matvec_host_s", r->mv_host_s);
      app_json_number(&j, "eigensolver_host_s", r->eig_host_s);
      app_json_number(&j, "orthogonalization_s", r->orth_s);
      app_json_number(&j, "other_device_s", r->other_dev_s);
      app_json_int(&j, "lanczos_steps", r->steps);
      app_json_int(&j, "kernel_launches", r->launches);
      app_json_int(&j, "gram_schmidt_second_passes", r->second_passes);
      app_json_number(&j, "max_residual", r->max_residual);
      app_json_number(&j, "last_eigenvalue", r->lambda_last);
      app_json_number(&j, "speedup_vs_cpu", r->speedup_solve);
      app_json_end_object(&j);
    } else {
      app_json_null(&j, "solve");
    }
    app_json_end_object(&j);
  }
  app_json_end_array(&j);
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK) {
    if (strcmp(path, "-") == 0) {
      fwrite(j.buf, 1, j.len, stdout);
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

static int write_csv(const bench *b, const char *path)
{
  bench_file out;
  int status = bench_file_open(&out, path);
  if (status == DSG_OK)
    status = app_out_open(out.out, out.name, &out.fp);
  if (status != DSG_OK)
    return bench_file_commit(&out, status);
  FILE *f = out.fp;
  fprintf(f, "input,width,height,n,ndiag,backend,device,kernel,solver,check_error,spmv_median_s,"
             "spmv_min_s,gflops,effective_gbs,copy_gbs,percent_of_copy_bandwidth,solve_s,matvecs,"
             "matvec_kernel_s,matvec_transfer_s,matvec_host_s,eigensolver_host_s,"
             "orthogonalization_s,other_device_s,max_residual,speedup_spmv,speedup_solve\n");
  for (int i = 0; i < b->nrows; i++) {
    const bench_row *r = &b->rows[i];
    fprintf(f, "%s,%d,%d,%d,%d,%s,\"%s\",%s,%s,%.3g,%.6g,%.6g,%.4g,%.4g,%.4g,%.4g,", r->input,
            r->width, r->height, r->n, r->ndiag, r->backend, r->device, r->kernel, r->solver,
            r->check_error, r->spmv_median, r->spmv_min, r->gflops, r->gbs, r->copy_gbs,
            r->bound_pct);
    if (r->solved)
      fprintf(f, "%.6g,%ld,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.3g,%.4g,%.4g\n", r->solve_s, r->matvecs,
              r->mv_kernel_s, r->mv_transfer_s, r->mv_host_s, r->eig_host_s, r->orth_s,
              r->other_dev_s, r->max_residual, r->speedup_spmv, r->speedup_solve);
    else
      fprintf(f, ",,,,,,,,,%.4g,\n", r->speedup_spmv);
  }
  return bench_file_commit(&out, DSG_OK);
}

/* ---- the chart: bar panels drawn on a canvas that is SVG text or PNG pixels ---- */

typedef struct canvas {
  FILE *svg;          /* SVG: elements go here */
  unsigned char *rgb; /* PNG: pixels */
  int png;            /* which of the two, known before either is open */
  int w, h;
} canvas;

static void hex_rgb(const char *hex, unsigned char c[3])
{
  unsigned v = (unsigned)strtoul(hex + 1, NULL, 16);
  c[0] = (unsigned char)(v >> 16);
  c[1] = (unsigned char)(v >> 8);
  c[2] = (unsigned char)v;
}

/* text as SVG character data: file names may hold &, < or > */
static void svg_escaped(FILE *f, const char *text)
{
  for (; *text; text++) {
    if (*text == '&')
      fputs("&amp;", f);
    else if (*text == '<')
      fputs("&lt;", f);
    else if (*text == '>')
      fputs("&gt;", f);
    else
      fputc(*text, f);
  }
}

static void cv_rect(canvas *cv, int x, int y, int w, int h, const char *fill, const char *title)
{
  if (cv->svg) {
    fprintf(cv->svg, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s'>", x, y, w, h, fill);
    if (title) {
      fputs("<title>", cv->svg);
      svg_escaped(cv->svg, title);
      fputs("</title>", cv->svg);
    }
    fprintf(cv->svg, "</rect>\n");
    return;
  }
  unsigned char c[3];
  hex_rgb(fill, c);
  for (int yy = y < 0 ? 0 : y; yy < y + h && yy < cv->h; yy++)
    for (int xx = x < 0 ? 0 : x; xx < x + w && xx < cv->w; xx++)
      memcpy(cv->rgb + 3 * ((size_t)yy * cv->w + xx), c, 3);
}

static void cv_hline(canvas *cv, int x1, int x2, int y, const char *color, int width)
{
  if (cv->svg)
    fprintf(cv->svg, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='%s' stroke-width='%d'/>\n", x1,
            y, x2, y, color, width);
  else
    cv_rect(cv, x1, y - width / 2, x2 - x1, width, color, NULL);
}

/* The width of text in pixels: the PNG's font at scale 2; for SVG's 12 px sans-serif, an
 * estimate on the wide side (7 px a character). */
static int cv_text_width(const canvas *cv, const char *text)
{
  char buf[256];
  if (!cv->png)
    return 7 * (int)strlen(text);
  snprintf(buf, sizeof(buf), "%.255s", text);
  return 2 * app_font_width(buf);
}

/* text at (x, y) = baseline-left (anchor 0), centred (1) or right-aligned (2) */
static void cv_text(canvas *cv, int x, int y, const char *text, int anchor, int bold)
{
  if (cv->svg) {
    static const char *anchors[] = {"start", "middle", "end"};
    fprintf(cv->svg, "<text x='%d' y='%d' text-anchor='%s'%s>", x, y, anchors[anchor],
            bold ? " font-weight='bold'" : "");
    svg_escaped(cv->svg, text);
    fputs("</text>\n", cv->svg);
    return;
  }
  char buf[256];
  static char quads[60000];
  snprintf(buf, sizeof(buf), "%.255s", text);
  const int scale = 2, tw = app_font_width(buf) * scale;
  const int x0 = anchor == 0 ? x : anchor == 1 ? x - tw / 2 : x - tw;
  const int nq = app_font_quads(buf, quads, sizeof(quads));
  for (int q = 0; q < nq; q++) { /* axis-aligned quads: 4 vertices of x, y, z, colour */
    const float *v = (const float *)(quads + (size_t)q * 64);
    const int qx = (int)v[0], qy = (int)v[1], qw = (int)v[8] - qx, qh = (int)v[9] - qy;
    for (int dx = bold ? 1 : 0; dx >= 0; dx--)
      cv_rect(cv, x0 + qx * scale + dx, y - 12 + qy * scale, qw * scale, qh * scale, "#000000",
              NULL);
  }
}

/* Whether value, as a bar's label, fits in a bar bw pixels wide. */
static int cv_value_fits(const canvas *cv, int bw, double value)
{
  char text[32];
  snprintf(text, sizeof(text), "%.3g", value);
  return cv_text_width(cv, text) <= bw - 2;
}

/* A bar h pixels high on the baseline, with its value above it if labelled. */
static void cv_bar(canvas *cv, int x, int bw, int base, int h, const char *fill, const char *title,
                   double value, int labelled)
{
  char text[32];
  cv_rect(cv, x, base - h, bw - 2, h, fill, title);
  snprintf(text, sizeof(text), "%.3g", value);
  if (labelled)
    cv_text(cv, x + (bw - 2) / 2, base - h - 4, text, 1, 0);
}

/* A chart series, one colour: the device's short name and the kernel ("NVIDIA H200, aligned") */
static void series_label(const bench_row *r, char *buf, size_t cap)
{
  snprintf(buf, cap, "%s%s%s", r->device_short, r->kernel[0] ? ", " : "", r->kernel);
}

enum { CHART_ROWS = 1024, CHART_SERIES = 32 };

/* Bar panels with one group per input and one colour per device and kernel, named in a legend:
 * the eigensolve's seconds (log scale) in one sub-group per solver, when anything was solved, and
 * the SpMV's effective GB/s, one bar per device and kernel (the SpMV figures are the same for
 * every solver), with the device's copy bandwidth as a black tick. */
static int write_chart(const bench *b, const char *path)
{
  static const char *colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  static const char *solvers[] = {"arpack", "lanczos"};
  char series[CHART_SERIES][100], name[100], label[256], tick[32];
  int nser = 0, ninputs = 0, group_of[CHART_ROWS], series_of[CHART_ROWS], status = DSG_OK;
  int has_solver[2] = {0, 0};
  double max_gbs = 1, max_s = 1e-3, min_s = 1e9, ticks[2][16];
  int nticks[2] = {0, 0};
  const int nrows = b->nrows < CHART_ROWS ? b->nrows : CHART_ROWS;
  const size_t plen = strlen(path);
  const int png = plen > 4 && strcasecmp(path + plen - 4, ".png") == 0;
  canvas cv = {0};
  bench_file out;
  cv.png = png;
  for (int i = 0; i < nrows; i++) {
    const bench_row *r = &b->rows[i];
    int k;
    series_label(r, name, sizeof(name));
    for (k = 0; k < nser && strcmp(series[k], name) != 0; k++)
      ;
    if (k == nser && nser < CHART_SERIES)
      snprintf(series[nser++], sizeof(series[0]), "%s", name);
    series_of[i] = k < nser ? k : -1;
    if (i == 0 || strcmp(r->input, b->rows[i - 1].input) != 0)
      ninputs++;
    group_of[i] = ninputs - 1;
    max_gbs = fmax(max_gbs, fmax(r->gbs, r->copy_gbs));
    if (r->solved && r->solve_s > 0) {
      has_solver[strcmp(r->solver, solvers[0]) == 0 ? 0 : 1] = 1;
      max_s = fmax(max_s, r->solve_s);
      min_s = fmin(min_s, r->solve_s);
    }
  }
  const int nsol = has_solver[0] + has_solver[1], npanels = nsol ? 2 : 1;
  { /* GB/s: four ticks of a round step, with headroom over the highest bar or tick */
    const double raw = 1.05 * max_gbs / 4, mag = pow(10, floor(log10(raw)));
    static const double steps[] = {1, 2, 2.5, 5, 10};
    int m = 0;
    while (m < 4 && steps[m] * mag < raw)
      m++;
    max_gbs = 4 * steps[m] * mag;
    for (int t = 0; t <= 4; t++)
      ticks[1][nticks[1]++] = max_gbs * t / 4;
  }
  if (min_s > max_s)
    min_s = max_s / 10;
  const double lo = pow(10, floor(log10(min_s))), hi = fmax(pow(10, ceil(log10(max_s))), 10 * lo);
  { /* seconds: every decade (every other one over 8), and 2 and 5 within a single decade */
    const int decades = (int)lround(log10(hi / lo)), step = decades > 8 ? 2 : 1;
    for (int t = 0; t <= decades && nticks[0] < 14; t += step)
      ticks[0][nticks[0]++] = lo * pow(10, t);
    if (decades == 1) {
      ticks[0][nticks[0]++] = 2 * lo;
      ticks[0][nticks[0]++] = 5 * lo;
    }
  }
  int left = 40;
  for (int p = 2 - npanels; p < 2; p++)
    for (int t = 0; t < nticks[p]; t++) {
      snprintf(tick, sizeof(tick), "%g", ticks[p][t]);
      left = cv_text_width(&cv, tick) + 12 > left ? cv_text_width(&cv, tick) + 12 : left;
    }
  int colw = 0; /* the legend: as many columns as its longest name allows */
  for (int k = 0; k < nser; k++)
    colw = cv_text_width(&cv, series[k]) + 40 > colw ? cv_text_width(&cv, series[k]) + 40 : colw;
  const int W = 960, PH = 240, right = 20, top = 40, plot_w = W - left - right;
  const int gw = plot_w / (ninputs ? ninputs : 1),
            ncols = colw && plot_w / colw ? plot_w / colw : 1;
  const int panel_h[2] = {38 + PH + 48, 38 + PH + 36}; /* title, plot, axis labels */
  const int legend_y = top + (nsol ? panel_h[0] : 0) + panel_h[1];
  const int H = legend_y + 20 * ((nser + ncols - 1) / ncols) + 10;
  cv.w = W;
  cv.h = H;
  status = bench_file_open(&out, path);
  if (status == DSG_OK && png) {
    cv.rgb = malloc((size_t)W * H * 3);
    if (!cv.rgb)
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the chart");
    else
      memset(cv.rgb, 255, (size_t)W * H * 3);
  } else if (status == DSG_OK) {
    status = app_out_open(out.out, out.name, &out.fp);
    cv.svg = out.fp;
  }
  if (status != DSG_OK)
    return bench_file_commit(&out, status);
  if (cv.svg) {
    fprintf(cv.svg,
            "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
            "font-family='sans-serif' font-size='12'>\n<rect width='100%%' "
            "height='100%%' fill='white'/>\n",
            W, H);
  }
  if (nsol)
    snprintf(label, sizeof(label), "diaseg bench: eigensolve nev %d, tol %g; SpMV median of %d",
             b->cfg->nev, b->cfg->tol, b->cfg->repeat);
  else
    snprintf(label, sizeof(label), "diaseg bench: SpMV, median of %d", b->cfg->repeat);
  cv_text(&cv, left, 22, label, 0, 1);
  for (int panel = 2 - npanels, y0 = top; panel < 2; y0 += panel_h[panel], panel++) {
    const int base = y0 + 38 + PH; /* the bars' baseline */
    cv_text(&cv, left, y0 + 14,
            panel == 0 ? "Eigensolve time, seconds (log scale, lower is better)"
                       : "SpMV effective bandwidth, GB/s (higher is better; "
                         "black ticks: copy bandwidth)",
            0, 1);
    for (int t = 0; t < nticks[panel]; t++) {
      const double v = ticks[panel][t];
      const int y =
          base - (int)lround(PH * (panel == 0 ? log(v / lo) / log(hi / lo) : v / max_gbs));
      cv_hline(&cv, left, W - right, y, "#dddddd", 1);
      snprintf(tick, sizeof(tick), "%g", v);
      cv_text(&cv, left - 6, y + 5, tick, 2, 0);
    }
    cv_hline(&cv, left, W - right, base, "#000000", 1);
    const int sgw = (gw - 10) / (nsol ? nsol : 1); /* a solver's sub-group */
    const int per = (panel == 0 ? sgw - 10 : gw - 20) / (nser ? nser : 1);
    const int bw = per > 90 ? 90 : per < 3 ? 3 : per; /* a bar and its 2-pixel gap */
    int labelled = 1; /* every bar's value above it, or none where one of them does not fit */
    for (int i = 0; i < nrows; i++)
      if (panel == 1 || (b->rows[i].solved && b->rows[i].solve_s > 0))
        labelled =
            labelled && cv_value_fits(&cv, bw, panel == 0 ? b->rows[i].solve_s : b->rows[i].gbs);
    for (int i = 0; i < nrows; i++) {
      const bench_row *r = &b->rows[i];
      const int k = series_of[i], g = group_of[i];
      int x, dup = 0;
      double frac;
      if (k < 0)
        continue;
      if (panel == 0) {
        const int slot = has_solver[0] && strcmp(r->solver, solvers[0]) != 0 ? 1 : 0;
        if (!r->solved || !(r->solve_s > 0))
          continue;
        x = left + g * gw + 5 + slot * sgw + (sgw - nser * bw) / 2 + k * bw;
        frac = log(r->solve_s / lo) / log(hi / lo);
        snprintf(label, sizeof(label), "%s %s, %s: solve %.4g s", r->input, series[k], r->solver,
                 r->solve_s);
      } else {
        for (int j = 0; j < i && !dup; j++) /* another solver's row of the same SpMV */
          dup = group_of[j] == g && series_of[j] == k;
        if (dup)
          continue;
        x = left + g * gw + (gw - nser * bw) / 2 + k * bw;
        frac = r->gbs / max_gbs;
        snprintf(label, sizeof(label), "%s %s: SpMV %.4g GB/s, copy %.4g GB/s", r->input, series[k],
                 r->gbs, r->copy_gbs);
      }
      frac = frac < 0 ? 0 : frac > 1 ? 1 : frac;
      const int h = (int)(PH * frac) > 2 ? (int)(PH * frac) : 2;
      cv_bar(&cv, x, bw, base, h, colors[k % 10], label, panel == 0 ? r->solve_s : r->gbs,
             labelled);
      if (panel == 1 && r->copy_gbs > 0)
        cv_rect(&cv, x, base - (int)(PH * fmin(1.0, r->copy_gbs / max_gbs)) - 1, bw - 2, 3,
                "#000000", NULL);
    }
    for (int i = 0; i < nrows; i++) {
      const int g = group_of[i];
      if (i > 0 && g == group_of[i - 1])
        continue;
      cv_text(&cv, left + g * gw + gw / 2, base + (panel == 0 ? 34 : 18), b->rows[i].input, 1, 1);
      for (int s = 0; panel == 0 && s < 2; s++)
        if (has_solver[s])
          cv_text(&cv, left + g * gw + 5 + (has_solver[0] ? s : 0) * sgw + sgw / 2, base + 16,
                  solvers[s], 1, 0);
    }
  }
  for (int k = 0; k < nser; k++) {
    const int x = left + (k % ncols) * colw, y = legend_y + 20 * (k / ncols) + 12;
    cv_rect(&cv, x, y - 11, 12, 12, colors[k % 10], NULL);
    cv_text(&cv, x + 18, y, series[k], 0, 0);
  }
  if (cv.svg)
    fprintf(cv.svg, "</svg>\n");
  else
    status = app_out_png(out.out, out.name, W, H, 3, cv.rgb);
  free(cv.rgb);
  return bench_file_commit(&out, status);
}

/* Every OpenCL device (or the one --cl-device names) x every kernel (or --kernel's): a row each.
 * A device or kernel that fails is reported on stderr and skipped; the others go on. */
static int bench_opencl(const app_config *cfg, bench *b, bench_input *in, const char *label)
{
  spmv_cl_device *list = NULL;
  int count = 0, status = spmv_cl_devices(&list, &count);
  if (status != DSG_OK) {
    if (strcmp(cfg->matvec, "opencl") == 0)
      return status; /* an error: the CLI prints its message */
    if (!cfg->quiet)
      fprintf(stderr, "bench: no OpenCL backend, going on without: %s\n", dsg_error_message());
    return DSG_OK;
  }
  int only = -1;
  if (cfg->cl_device && *cfg->cl_device) {
    status = spmv_cl_pick(list, count, cfg->cl_device, 0, &only);
    if (status != DSG_OK) {
      free(list);
      return status;
    }
  }
  for (int d = 0; d < count && status == DSG_OK; d++) {
    double copy = NAN;
    if (only >= 0 && d != only)
      continue;
    for (int k = SPMV_KERNEL_NAIVE; k < SPMV_KERNEL_COUNT && status == DSG_OK; k++) {
      spmv_cl_options opt;
      spmv_matvec *mv = NULL;
      char spec[16];
      if (cfg->kernel_mask && !(cfg->kernel_mask & (1u << k)))
        continue;
      if (!cfg->kernel_mask && !cfg->all_kernels && cfg->kernel != SPMV_KERNEL_AUTO &&
          (int)cfg->kernel != k)
        continue;
      if (!cfg->kernel_mask && !cfg->all_kernels && cfg->kernel == SPMV_KERNEL_AUTO &&
          k != SPMV_KERNEL_IMAGE && k != SPMV_KERNEL_VECTOR)
        continue; /* auto: the kernel the device would get, decided below */
      app_cl_options(cfg, &opt);
      snprintf(spec, sizeof(spec), "%d", d);
      opt.device = spec;
      opt.kernel = cfg->all_kernels || cfg->kernel_mask ? (spmv_kernel)k : cfg->kernel;
      if (!cfg->quiet)
        fprintf(stderr, "bench: %s: opencl [%d] %s: kernel %s\n", label, d, list[d].name,
                cfg->all_kernels || cfg->kernel_mask || cfg->kernel != SPMV_KERNEL_AUTO
                    ? spmv_kernel_name(k)
                    : "auto");
      if (spmv_matvec_create_opencl(&mv, in->N, &opt) != DSG_OK) {
        fprintf(stderr, "bench: %s: skipping [%d] %s kernel %s: %s\n", label, d, list[d].name,
                spmv_kernel_name(k), dsg_error_message());
        b->skipped++;
        continue;
      }
      const spmv_cl_info *info = spmv_matvec_cl_info(mv);
      if (!cfg->kernel_mask && !cfg->all_kernels && cfg->kernel == SPMV_KERNEL_AUTO &&
          (int)info->kernel != k) {
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
      status = bench_backend(cfg, b, in, mv, NULL, row);
      spmv_matvec_destroy(mv);
    }
  }
  free(list);
  return status;
}

int app_bench(const app_config *cfg)
{
  bench b = {cfg, NULL, 0, 0, 0};
  char sample[4096];
  int status = DSG_OK;
  const int ninputs = cfg->ninputs + cfg->nsizes > 0 ? cfg->ninputs + cfg->nsizes : 1;
  const char *files[] = {cfg->json, cfg->csv, cfg->chart};

  /* an unwritable --json, --csv or --chart path fails now, not after the measurements */
  for (int i = 0; i < 3 && status == DSG_OK; i++) {
    bench_file f;
    if (!files[i] || strcmp(files[i], "-") == 0)
      continue;
    status = bench_file_open(&f, files[i]);
    if (status == DSG_OK)
      status = app_out_open(f.out, f.name, &f.fp);
    app_out_destroy(f.out); /* removes the probe, and a folder it created */
    if (f.direct) {
      rmdir(f.tmpdir);
      if (status == DSG_OK && access(f.direct, W_OK) != 0)
        status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", f.direct, strerror(errno));
    }
  }
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
    status = input_prepare(cfg, &in, path, w, h);

    /* the C path */
    const int first = b.nrows;
    if (status == DSG_OK && strcmp(cfg->matvec, "opencl") != 0) {
      spmv_matvec *mv = NULL;
      bench_row *row = new_row(&b);
      host_copy copy = {0};
      if (!row) {
        status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate bench results");
      } else {
        snprintf(row->backend, sizeof(row->backend), "cpu");
        char cpu_name[128];
        host_cpu_name(cpu_name, sizeof(cpu_name));
        snprintf(row->device, sizeof(row->device), "%s (host, %d OpenMP threads)", cpu_name,
                 omp_get_max_threads());
        snprintf(row->device_short, sizeof(row->device_short), "C path, %d threads",
                 omp_get_max_threads());
        if (!cfg->quiet)
          fprintf(stderr, "bench: %s: cpu: copy bandwidth, SpMV x %d%s\n", label, cfg->repeat,
                  cfg->no_solve ? "" : ", eigensolve");
        status = host_copy_init(&copy, spmv_dia_bytes(in.N));
        if (status == DSG_OK)
          status = spmv_matvec_create_cpu(&mv, in.N);
        if (status == DSG_OK)
          status = bench_backend(cfg, &b, &in, mv, &copy, row);
        spmv_matvec_destroy(mv);
        host_copy_free(&copy);
      }
    }
    if (status == DSG_OK && strcmp(cfg->matvec, "cpu") != 0)
      status = bench_opencl(cfg, &b, &in, label);
    /* speedups against the C path of this input, with the same solver */
    for (int r = first; r < b.nrows; r++) {
      bench_row *row = &b.rows[r];
      const bench_row *cpu = NULL;
      for (int q = first; q < b.nrows && !cpu; q++)
        if (strcmp(b.rows[q].backend, "cpu") == 0 && strcmp(b.rows[q].solver, row->solver) == 0)
          cpu = &b.rows[q];
      row->speedup_spmv = cpu ? cpu->spmv_median / row->spmv_median : NAN;
      row->speedup_solve = cpu && row->solved && cpu->solved ? cpu->solve_s / row->solve_s : NAN;
    }
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
    print_table(&b, cfg->json && strcmp(cfg->json, "-") == 0 ? stderr : stdout);
    if (cfg->json)
      status = write_json(&b, cfg->json);
    if (status == DSG_OK && cfg->csv)
      status = write_csv(&b, cfg->csv);
    if (status == DSG_OK && cfg->chart)
      status = write_chart(&b, cfg->chart);
  }
  free(b.rows);
  return status;
}
