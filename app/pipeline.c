/* The segment and eigs runs: load -> affinity -> solve -> cluster -> write, with the report. */
#include "app.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef DIASEG_SOURCE_DATA_DIR
#define DIASEG_SOURCE_DATA_DIR ""
#endif
#ifndef DIASEG_INSTALL_DATA_DIR
#define DIASEG_INSTALL_DATA_DIR ""
#endif
#define SAMPLE_IMAGE "coffee.png"

volatile sig_atomic_t app_cancel = 0;
static app_out *volatile active_out = NULL; /* what a second signal cleans up */

static void on_signal(int sig)
{
  if (app_cancel) {
    app_out_abort_signal_safe(active_out);
    _exit(128 + sig);
  }
  app_cancel = sig;
}

void app_signals_install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

int app_exit_code(int status)
{
  switch (status) {
  case DSG_OK: return APP_EXIT_OK;
  case DSG_ERR_INVALID:
  case DSG_ERR_FORMAT: return APP_EXIT_USAGE;
  case DSG_ERR_NOCONV: return APP_EXIT_NOCONV;
  case DSG_ERR_INTERRUPTED: return app_cancel ? 128 + app_cancel : APP_EXIT_INTERRUPTED;
  default: return APP_EXIT_ERROR;
  }
}

static int file_exists(const char *path) { return access(path, R_OK) == 0; }

int app_find_sample(char *buf, size_t cap)
{
  char exe[4096];
  const char *env = getenv("DIASEG_DATA_DIR");
  const char *dirs[6] = {env, DIASEG_SOURCE_DATA_DIR, DIASEG_INSTALL_DATA_DIR, NULL, NULL, NULL};
  char rel[3][4200];
  ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0) {
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
      *slash = '\0';
    snprintf(rel[0], sizeof(rel[0]), "%s/../share/diaseg", exe);
    snprintf(rel[1], sizeof(rel[1]), "%s/../data", exe);
    snprintf(rel[2], sizeof(rel[2]), "%s/data", exe);
    dirs[3] = rel[0];
    dirs[4] = rel[1];
    dirs[5] = rel[2];
  }
  for (int i = 0; i < 6; i++) {
    if (!dirs[i] || !*dirs[i])
      continue;
    snprintf(buf, cap, "%s/%s", dirs[i], SAMPLE_IMAGE);
    if (file_exists(buf))
      return DSG_OK;
  }
  return dsg_error_set(DSG_ERR_IO,
                       "cannot find the sample image %s (set DIASEG_DATA_DIR to the "
                       "folder holding it, or name an IMAGE)",
                       SAMPLE_IMAGE);
}

typedef struct run {
  const app_config *cfg;
  char image_path[4096];
  app_image img;
  spmv_dia *N;
  double *sqrt_degree;
  app_components comps;
  spmv_matvec *mv;
  eig_result eig;
  int solve_status;
  int *labels;
  int clustered;
  int pick[APP_MAX_EMBED]; /* eigenvectors used by the embedding */
  int solves;              /* eigensolves run (more than one when specks were carved out) */
  long matvecs_all;        /* products over all of them */
  int carved;              /* localised eigenvectors carved out as specks */
  int skipped;             /* localised eigenvectors passed over */
  double inertia;
  app_out *out;
  FILE *json_fp;        /* --json FILE, staged with the outputs */
  int json_direct;      /* --json names a device, FIFO or link: written in place */
  int input_w, input_h; /* the image's size before --resize */
  char solve_note[512]; /* the eigensolver's message when it stopped at --max-iter */
  int nfiles;
  double t_load, t_affinity, t_setup, t_solve, t_cluster, t_write, t_total;
} run;

static void progress(void *data, long matvecs, int nconv, double elapsed)
{
  (void)data;
  if (nconv >= 0)
    fprintf(stderr, "\r  solving: %ld products, %d converged, %.1f s   ", matvecs, nconv, elapsed);
  else
    fprintf(stderr, "\r  solving: %ld products, %.1f s   ", matvecs, elapsed);
  fflush(stderr);
}

static int check_cancel(void)
{
  if (app_cancel)
    return dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                         (int)app_cancel);
  return DSG_OK;
}

/* Carves eigenvectors localised on fewer pixels than a speck out as speck groups. Returns how
 * many were carved (0: none, the solve stands). */
static int carve_localised(run *r, int *carved)
{
  const int n = r->N->rows, max_pixels = (int)app_min_support((size_t)n);
  int *pixels = malloc((size_t)max_pixels * sizeof(*pixels)), status = DSG_OK;
  *carved = 0;
  if (!pixels)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d pixel indices", max_pixels);
  for (int j = 0; j < r->eig.nconv && status == DSG_OK; j++) {
    int count = app_localised_support(&r->eig, j, max_pixels, pixels);
    if (count > 0 && count < max_pixels) {
      status = app_components_carve(&r->comps, r->sqrt_degree, n, pixels, count);
      (*carved)++;
    }
  }
  free(pixels);
  return status;
}

#define APP_SPECK_ROUNDS 3 /* solves at most: the first and two after carving specks */

static int stage_solve(run *r)
{
  const app_config *cfg = r->cfg;
  eig_options opt;
  int status, tty = !cfg->quiet && isatty(STDERR_FILENO), carved = 0;
  double t0 = dsg_seconds();

  status = app_components_find(r->N, r->sqrt_degree, &r->comps);
  if (status == DSG_OK && !cfg->keep_specks) {
    /* the groups are deflated: the solve needs the eigenvectors it does not get from them in
     * the space they leave */
    const int n = r->N->rows,
              from_groups = r->comps.significant < cfg->nev ? r->comps.significant : cfg->nev;
    if (n - r->comps.count < cfg->nev - from_groups)
      status = dsg_error_set(DSG_ERR_INVALID,
                             "the affinity links too few pixels for --nev %d: %zu of the %d "
                             "pixels are specks (joined to the rest only by edges N_ij <= 1e-4 "
                             "with --sigma-i %g --sigma-x %g); raise --sigma-x or --sigma-i, or "
                             "add --keep-specks",
                             cfg->nev, r->comps.speck_pixels, n, cfg->affinity.sigma_i,
                             cfg->affinity.sigma_x);
  }
  if (status == DSG_OK)
    status = app_matvec_create(cfg, r->N, &r->mv);
  if (status != DSG_OK)
    return status;
  r->t_setup = dsg_seconds() - t0; /* components, the matvec (device, program, upload) */
  t0 = dsg_seconds();
  for (int round = 0; round < APP_SPECK_ROUNDS; round++) {
    app_eig_options(cfg, &opt);
    opt.cancel = &app_cancel;
    if (!cfg->keep_specks)
      app_components_to_options(&r->comps, &opt);
    if (tty)
      opt.progress = progress;
    eig_result_free(&r->eig);
    status = app_solve(cfg, r->mv, &opt, &r->eig);
    r->solves++;
    r->matvecs_all += r->eig.matvecs;
    if (status != DSG_OK || cfg->keep_specks || round + 1 == APP_SPECK_ROUNDS)
      break;
    status = carve_localised(r, &carved);
    if (status != DSG_OK || carved == 0)
      break;
    r->carved += carved;
  }
  if (tty)
    fprintf(stderr, "\r%60s\r", "");
  r->t_solve = dsg_seconds() - t0;
  if (status == DSG_ERR_INTERRUPTED)
    return check_cancel();
  if (status == DSG_ERR_NOCONV) {
    /* partial results: keep going, flag them, exit 3; app_run says so once, at the end */
    snprintf(r->solve_note, sizeof(r->solve_note), "%s", dsg_error_message());
    r->solve_status = status;
    return DSG_OK;
  }
  return status;
}

static int stage_cluster(run *r)
{
  const app_config *cfg = r->cfg;
  const size_t n = (size_t)r->img.width * (size_t)r->img.height;
  float *emb = NULL;
  int dim = 0, status;
  app_kmeans_params kp = {cfg->k, cfg->restarts, 300, cfg->seed};
  double t0 = dsg_seconds();

  if (cfg->command != APP_CMD_SEGMENT)
    return DSG_OK;
  if (r->eig.nconv < cfg->k) /* only after --max-iter stopped the solve: app_run says so */
    return DSG_OK;
  r->labels = malloc(n * sizeof(*r->labels));
  if (!r->labels)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu labels", n);
  if (cfg->k == 1) {
    memset(r->labels, 0, n * sizeof(*r->labels));
  } else {
    r->skipped = app_pick_vectors(&r->eig, cfg->k, app_min_support(n), r->pick);
    status = app_embedding(&r->eig, r->sqrt_degree, r->pick, cfg->k, &emb, &dim);
    if (status != DSG_OK)
      return status;
    status = app_kmeans(emb, n, dim, &kp, r->labels, &r->inertia);
    free(emb);
    if (status != DSG_OK)
      return status;
    app_fill_specks(r->labels, &r->comps, r->img.width, r->img.height);
  }
  r->clustered = 1;
  r->t_cluster = dsg_seconds() - t0;
  return check_cancel();
}

static int write_picture(run *r, const char *name, unsigned char *rgb)
{
  int status = app_out_png(r->out, name, r->img.width, r->img.height, 3, rgb);
  free(rgb);
  r->nfiles += status == DSG_OK;
  return status;
}

static int stage_write(run *r)
{
  const int w = r->img.width, h = r->img.height;
  const size_t n = (size_t)w * (size_t)h;
  unsigned char *rgb = NULL;
  float *field = NULL;
  int status;
  double t0 = dsg_seconds();

  if (r->eig.nconv > 0) {
    size_t shape[3] = {(size_t)r->eig.nconv, (size_t)h, (size_t)w};
    status = app_out_npy_f32(r->out, "eigenvectors.npy", r->eig.vectors, 3, shape);
    if (status != DSG_OK)
      return status;
    r->nfiles++;
    field = malloc(n * sizeof(*field));
    if (!field)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", w, h);
    for (int k = 0; k < r->eig.nconv && status == DSG_OK; k++) {
      char name[32];
      const float *u = r->eig.vectors + (size_t)k * n;
      for (size_t i = 0; i < n; i++)
        field[i] = (float)((double)u[i] / r->sqrt_degree[i]); /* v = D^-1/2 u */
      snprintf(name, sizeof(name), "eigvec_%02d.png", k);
      status = app_picture_field(field, w, h, &rgb);
      if (status == DSG_OK)
        status = write_picture(r, name, rgb);
      if (status == DSG_OK)
        status = check_cancel();
    }
    free(field);
    if (status != DSG_OK)
      return status;
  }
  if (r->clustered) {
    size_t shape[2] = {(size_t)h, (size_t)w};
    status = app_out_npy_i32(r->out, "labels.npy", (const int32_t *)r->labels, 2, shape);
    if (status != DSG_OK)
      return status;
    r->nfiles++;
    status = app_picture_labels(r->labels, w, h, &rgb);
    if (status == DSG_OK)
      status = write_picture(r, "labels.png", rgb);
    if (status == DSG_OK)
      status = app_picture_overlay(&r->img, r->labels, &rgb);
    if (status == DSG_OK)
      status = write_picture(r, "overlay.png", rgb);
    if (status != DSG_OK)
      return status;
  }
  r->t_write = dsg_seconds() - t0;
  return check_cancel();
}

/* affinity --export: the matrix in diaseg's own layout, for other solvers (tests/peers.py). */
static int stage_export(run *r)
{
  const spmv_dia *N = r->N;
  const app_config *cfg = r->cfg;
  size_t shape_off[1] = {(size_t)N->ndiag}, shape_val[2] = {(size_t)N->ndiag, N->pitch};
  size_t shape_deg[1] = {(size_t)N->rows};
  app_json j;
  int status = app_out_npy_i32(r->out, "offsets.npy", (const int32_t *)N->offsets, 1, shape_off);
  if (status == DSG_OK)
    status = app_out_npy_f32(r->out, "diagonals.npy", N->values, 2, shape_val);
  if (status == DSG_OK)
    status = app_out_npy_f64(r->out, "sqrt_degree.npy", r->sqrt_degree, 1, shape_deg);
  if (status != DSG_OK)
    return status;
  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_string(&j, "diaseg_version", DIASEG_VERSION);
  app_json_string(&j, "image", r->image_path);
  app_json_int(&j, "width", r->img.width);
  app_json_int(&j, "height", r->img.height);
  app_json_int(&j, "n", N->rows);
  app_json_int(&j, "ndiag", N->ndiag);
  app_json_int(&j, "pitch", (long long)N->pitch);
  app_json_string(&j, "layout",
                  "diagonals[d, row] = N[row, row + offsets[d]] for 0 <= row < n; "
                  "zero where the column is outside [0, n) and for row >= n");
  app_json_int(&j, "radius", cfg->affinity.radius);
  app_json_number(&j, "sigma_i", cfg->affinity.sigma_i);
  app_json_number(&j, "sigma_x", cfg->affinity.sigma_x);
  app_json_string(&j, "affinity", cfg->feature == APP_FEATURE_COLOR ? "color" : "intensity");
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK)
    status = app_out_text(r->out, "matrix.json", j.buf, j.len);
  app_json_free(&j);
  return status;
}

static void json_numbers(app_json *j, const char *key, const double *v, int n)
{
  app_json_begin_array(j, key);
  for (int i = 0; i < n; i++)
    app_json_number(j, NULL, v[i]);
  app_json_end_array(j);
}

/* An option's value, else its environment variable's, else NULL (empty counts as unset). */
static const char *nonempty(const char *option, const char *env)
{
  const char *v = option && *option ? option : getenv(env);
  return v && *v ? v : NULL;
}

static int build_report(const run *r, app_json *j)
{
  const app_config *cfg = r->cfg;
  const eig_result *e = &r->eig;
  double max_res = 0.0;
  for (int i = 0; i < e->nconv; i++)
    max_res = e->residuals[i] > max_res ? e->residuals[i] : max_res;

  app_json_init(j);
  app_json_begin_object(j, NULL);
  app_json_string(j, "diaseg_version", DIASEG_VERSION);
  app_json_string(j, "command", app_command_name(cfg->command));
  app_json_string(j, "image", r->image_path);
  app_json_int(j, "width", r->img.width);
  app_json_int(j, "height", r->img.height);
  app_json_int(j, "channels", r->img.channels);
  app_json_int(j, "n", (long long)r->img.width * r->img.height);
  app_json_int(j, "nev", cfg->nev);
  if (cfg->command == APP_CMD_SEGMENT)
    app_json_int(j, "k", cfg->k);
  else
    app_json_null(j, "k");
  app_json_begin_object(j, "parameters");
  app_json_bool(j, "keep_specks", cfg->keep_specks);
  app_json_int(j, "radius", cfg->affinity.radius);
  app_json_number(j, "sigma_i", cfg->affinity.sigma_i);
  app_json_number(j, "sigma_x", cfg->affinity.sigma_x);
  app_json_string(j, "affinity", cfg->feature == APP_FEATURE_COLOR ? "color" : "intensity");
  app_json_number(j, "tol", cfg->tol);
  app_json_int(j, "max_iter", cfg->max_iter);
  app_json_int(j, "ncv", e->ncv);
  app_json_string(j, "matvec", cfg->matvec);
  app_json_string(j, "solver", e->solver ? e->solver : cfg->solver);
  app_json_int(j, "seed", (long long)cfg->seed);
  app_json_int(j, "restarts", cfg->restarts);
  app_json_int(j, "max_pixels", (long long)cfg->max_pixels);
  app_json_int(j, "input_width", r->input_w); /* the image file's size, before --resize */
  app_json_int(j, "input_height", r->input_h);
  if (cfg->resize_w > 0) {
    app_json_begin_object(j, "resize");
    app_json_int(j, "width", cfg->resize_w);
    app_json_int(j, "height", cfg->resize_h);
    app_json_end_object(j);
  } else {
    app_json_null(j, "resize");
  }
  /* the OpenCL settings in effect, from the options or their environment variables */
  app_json_string(j, "cl_device", nonempty(cfg->cl_device, "DIASEG_CL_DEVICE"));
  app_json_string(j, "kernel_dir", nonempty(cfg->kernel_dir, "DIASEG_KERNEL_DIR"));
  {
    spmv_cl_options clo;
    app_cl_options(cfg, &clo);
    if (clo.max_alloc)
      app_json_int(j, "cl_max_alloc", (long long)clo.max_alloc);
    else
      app_json_null(j, "cl_max_alloc");
  }
  app_json_end_object(j);
  app_json_begin_object(j, "matrix");
  app_json_string(j, "format", "dia");
  app_json_int(j, "ndiag", r->N->ndiag);
  app_json_int(j, "pitch", (long long)r->N->pitch);
  app_json_int(j, "bytes", (long long)spmv_dia_bytes(r->N));
  app_json_begin_array(j, "offsets");
  for (int d = 0; d < r->N->ndiag; d++)
    app_json_int(j, NULL, r->N->offsets[d]);
  app_json_end_array(j);
  app_json_end_object(j);
  app_json_int(j, "components", r->comps.count);
  app_json_int(j, "significant_components", r->comps.significant);
  app_json_int(j, "speck_pixels", (long long)r->comps.speck_pixels);
  app_json_int(j, "specks_carved_from_eigenvectors", r->carved);
  app_json_int(j, "eigensolves", r->solves);
  app_json_int(j, "matvec_count_all_solves", r->matvecs_all);
  app_json_bool(j, "converged", e->converged);
  app_json_int(j, "converged_count", e->nconv);
  app_json_string(j, "solver_status",
                  e->converged ? "converged"
                               : "iteration limit reached: "
                                 "partial results");
  json_numbers(j, "eigenvalues", e->values, e->nconv);
  json_numbers(j, "residuals", e->residuals, e->nconv);
  app_json_number(j, "max_residual", max_res);
  app_json_int(j, "matvec_count", e->matvecs);
  app_json_int(j, "arpack_iterations", e->iterations); /* restarts, whichever solver */
  app_json_int(j, "iterations", e->iterations);
  app_json_string(j, "matvec_backend", spmv_matvec_backend(r->mv));
  {
    const spmv_cl_info *cl = spmv_matvec_cl_info(r->mv);
    if (cl) {
      app_json_begin_object(j, "opencl");
      app_json_string(j, "platform", cl->platform);
      app_json_string(j, "device", cl->device);
      app_json_string(j, "kernel", spmv_kernel_name(cl->kernel));
      app_json_int(j, "local_size", (long long)cl->local_size);
      if (cl->kernel == SPMV_KERNEL_IMAGE) {
        app_json_int(j, "image_width", (long long)cl->image_width);
        app_json_int(j, "image_height", (long long)cl->image_height);
      }
      app_json_end_object(j);
    } else {
      app_json_null(j, "opencl");
    }
  }
  app_json_begin_object(j, "segmentation");
  app_json_bool(j, "written", r->clustered);
  if (r->clustered) {
    app_json_number(j, "kmeans_inertia", r->inertia);
    app_json_begin_array(j, "embedding_vectors");
    for (int q = 0; q < cfg->k && cfg->k > 1; q++)
      app_json_int(j, NULL, r->pick[q]);
    app_json_end_array(j);
    app_json_int(j, "localised_vectors_skipped", r->skipped);
  }
  app_json_end_object(j);
  app_json_begin_object(j, "seconds");
  app_json_number(j, "load", r->t_load);
  app_json_number(j, "affinity", r->t_affinity);
  app_json_number(j, "matvec_setup", r->t_setup);
  app_json_number(j, "solve", r->t_solve);
  app_json_number(j, "cluster", r->t_cluster);
  app_json_number(j, "write", r->t_write);
  app_json_number(j, "total", r->t_total);
  app_json_begin_object(j, "solve_split");
  app_json_number(j, "matvec_total", e->matvec.total_s);
  app_json_number(j, "matvec_kernel", e->matvec.kernel_s);
  app_json_number(j, "matvec_transfer", e->matvec.transfer_s);
  app_json_number(j, "matvec_host", e->matvec.host_s);
  app_json_number(j, "eigensolver_host", e->host_s);
  if (e->basis.steps > 0) {
    app_json_int(j, "lanczos_steps", e->basis.steps);
    app_json_int(j, "kernel_launches", e->basis.launches);
    app_json_int(j, "gram_schmidt_second_passes", e->basis.second_passes);
    app_json_number(j, "projection", e->basis.project_s);
    app_json_number(j, "orthogonalization", e->basis.orth_s);
    app_json_number(j, "normalization", e->basis.normalize_s);
    app_json_number(j, "restart", e->basis.restart_s);
  }
  app_json_end_object(j);
  app_json_end_object(j);
  app_json_end_object(j);
  return app_json_finish(j);
}

static void run_free(run *r)
{
  app_out_destroy(r->out);
  active_out = NULL;
  app_image_free(&r->img);
  spmv_matvec_destroy(r->mv);
  spmv_dia_destroy(r->N);
  free(r->sqrt_degree);
  app_components_free(&r->comps);
  eig_result_free(&r->eig);
  free(r->labels);
}

int app_run(const app_config *cfg)
{
  run r;
  app_json report = {0};
  float *features = NULL;
  int nfeat = 0, status;
  double t_start = dsg_seconds(), t0;
  size_t n;

  memset(&r, 0, sizeof(r));
  r.cfg = cfg;
  if (cfg->image)
    snprintf(r.image_path, sizeof(r.image_path), "%s", cfg->image);
  else if ((status = app_find_sample(r.image_path, sizeof(r.image_path))) != DSG_OK)
    return status;

  /* load and check everything before anything is created on disk */
  t0 = dsg_seconds();
  status = app_image_load(r.image_path, cfg->max_pixels, &r.img);
  if (status != DSG_OK)
    goto out;
  r.input_w = r.img.width;
  r.input_h = r.img.height;
  if (cfg->resize_w > 0) {
    app_image resized;
    if ((size_t)cfg->resize_w * (size_t)cfg->resize_h > cfg->max_pixels) {
      status = dsg_error_set(DSG_ERR_LIMIT,
                             "--resize %dx%d gives %zu pixels, over the cap of %zu "
                             "(raise it with --max-pixels)",
                             cfg->resize_w, cfg->resize_h,
                             (size_t)cfg->resize_w * (size_t)cfg->resize_h, cfg->max_pixels);
      goto out;
    }
    status = app_image_resize(&r.img, cfg->resize_w, cfg->resize_h, &resized);
    if (status != DSG_OK)
      goto out;
    app_image_free(&r.img);
    r.img = resized;
  }
  r.t_load = dsg_seconds() - t0;
  n = (size_t)r.img.width * (size_t)r.img.height;
  if (cfg->command != APP_CMD_AFFINITY && n < 2) {
    status = dsg_error_set(DSG_ERR_INVALID,
                           "the image is %d x %d = %zu pixel, too small: it needs at least 2 "
                           "pixels (--resize can enlarge it)",
                           r.img.width, r.img.height, n);
    goto out;
  }
  if (cfg->command != APP_CMD_AFFINITY && (size_t)cfg->nev >= n) {
    status = dsg_error_set(DSG_ERR_INVALID,
                           "--nev %d is out of range for a %d x %d image: it must "
                           "satisfy 1 <= nev < %zu pixels",
                           cfg->nev, r.img.width, r.img.height, n);
    goto out;
  }
  if (cfg->ncv > 0 && (size_t)cfg->ncv > n) {
    status = dsg_error_set(DSG_ERR_INVALID, "--ncv %d is out of range: it must be <= %zu pixels",
                           cfg->ncv, n);
    goto out;
  }
  status = app_out_begin(&r.out, cfg->out_dir);
  if (status != DSG_OK)
    goto out;
  active_out = r.out;
  /* --json FILE is staged with the outputs: a path that cannot be written fails now */
  if (cfg->json && strcmp(cfg->json, "-") != 0)
    status = app_out_open_path(r.out, cfg->json, &r.json_fp, &r.json_direct);
  if (status != DSG_OK)
    goto out;

  t0 = dsg_seconds();
  status = app_features(&r.img, cfg->feature, &features, &nfeat);
  if (status == DSG_OK)
    status = app_affinity_build(r.img.width, r.img.height, features, nfeat, &cfg->affinity, &r.N,
                                &r.sqrt_degree);
  free(features);
  if (status == DSG_OK)
    status = check_cancel();
  if (status != DSG_OK)
    goto out;
  r.t_affinity = dsg_seconds() - t0;
  if (cfg->command == APP_CMD_AFFINITY) {
    static const char *const exported[] = {"offsets.npy", "diagonals.npy", "sqrt_degree.npy",
                                           "matrix.json", NULL};
    status = stage_export(&r);
    if (status == DSG_OK)
      status = app_out_commit(r.out, exported);
    if (status == DSG_OK && !cfg->quiet)
      fprintf(stderr, "diaseg: %s %dx%d: N with %d diagonals (%.1f MiB) exported to %s/\n",
              r.image_path, r.img.width, r.img.height, r.N->ndiag,
              (double)spmv_dia_bytes(r.N) / 1048576.0, cfg->out_dir);
    goto out;
  }

  status = stage_solve(&r);
  if (status == DSG_OK)
    status = stage_cluster(&r);
  if (status == DSG_OK)
    status = stage_write(&r);
  if (status != DSG_OK)
    goto out;

  r.t_total = dsg_seconds() - t_start;
  status = build_report(&r, &report);
  if (status == DSG_OK)
    status = app_out_text(r.out, "report.json", report.buf, report.len);
  if (status == DSG_OK && r.json_fp) {
    FILE *fp = r.json_fp;
    r.json_fp = NULL;
    fwrite(report.buf, 1, report.len, fp);
    status = app_out_close(r.out, fp);
  } else if (status == DSG_OK && cfg->json) {
    /* standard output, a device, a FIFO: written in place, before the commit, so that a failure
     * here (a full device, a closed pipe) leaves no output either */
    status = app_write_direct(cfg->json, report.buf, report.len);
  }
  if (status == DSG_OK)
    status = check_cancel();
  if (status == DSG_OK) {
    /* the folder holds one run: an earlier run's outputs that this one did not write go
     * (eigvec_%02d.png: two digits, more from --nev 100 on; nothing else of the user's) */
    static const char *const outputs[] = {"eigvec_[0-9][0-9].png",
                                          "eigvec_[0-9][0-9][0-9].png",
                                          "eigvec_[0-9][0-9][0-9][0-9].png",
                                          "eigenvectors.npy",
                                          "labels.npy",
                                          "labels.png",
                                          "overlay.png",
                                          "report.json",
                                          NULL};
    status = app_out_commit(r.out, outputs);
  }
  if (status != DSG_OK)
    goto out;
  r.nfiles++;
  if (!cfg->quiet) {
    double max_res = 0.0;
    char segs[48] = "";
    for (int i = 0; i < r.eig.nconv; i++)
      max_res = r.eig.residuals[i] > max_res ? r.eig.residuals[i] : max_res;
    if (r.clustered)
      snprintf(segs, sizeof(segs), ", %d segments", cfg->k);
    fprintf(stderr,
            "diaseg: %s %dx%d: %d/%d eigenpairs (max residual %.1e, %ld products, %.2f s "
            "solve)%s; %d files in %s/ (%.2f s total)\n",
            r.image_path, r.img.width, r.img.height, r.eig.nconv, cfg->nev, max_res, r.eig.matvecs,
            r.t_solve, segs, r.nfiles, cfg->out_dir, dsg_seconds() - t_start);
  }
  status = r.solve_status;
  if (status == DSG_ERR_NOCONV) {
    /* the one message of the event: the solver's, what it means for the outputs */
    char segs[128] = "";
    if (cfg->command == APP_CMD_SEGMENT && !r.clustered)
      snprintf(segs, sizeof(segs),
               "; -k %d needs %d converged eigenvectors, so no segmentation "
               "was written",
               cfg->k, cfg->k);
    dsg_error_set(DSG_ERR_NOCONV,
                  "%s (--max-iter %d)%s; the partial results are flagged in %s/report.json",
                  r.solve_note, cfg->max_iter, segs, cfg->out_dir);
  }

out:
  app_json_free(&report);
  run_free(&r);
  return status;
}
