/* segment, eigs and affinity: load the image, check everything, stage the outputs, run the
 * library, write the outputs and the report, and put them in place all at once. */
#include "cli.h"
#include "json.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef DIASEG_SOURCE_DATA_DIR
#define DIASEG_SOURCE_DATA_DIR ""
#endif
#ifndef DIASEG_INSTALL_DATA_DIR
#define DIASEG_INSTALL_DATA_DIR ""
#endif
#define SAMPLE_IMAGE "coffee.png"

/* The files segment and eigs write into the output folder, and remove there when an earlier run
 * left them and this one does not write them (eigvec_%02d.png: two digits, more from --nev 100
 * on; labels_k%d.*, labels_color_k%d.png and overlay_k%d.png of a list of k, 1 <= k <= 9999;
 * nothing else of the user's): the folder holds one run. */
static const char *const run_outputs[] = {"eigvec_[0-9][0-9].png",
                                          "eigvec_[0-9][0-9][0-9].png",
                                          "eigvec_[0-9][0-9][0-9][0-9].png",
                                          "eigenvectors.npy",
                                          "labels.npy",
                                          "labels.png",
                                          "labels_color.png",
                                          "labels_color_k[0-9].png",
                                          "labels_color_k[0-9][0-9].png",
                                          "labels_color_k[0-9][0-9][0-9].png",
                                          "labels_color_k[0-9][0-9][0-9][0-9].png",
                                          "overlay.png",
                                          "labels_k[0-9].npy",
                                          "labels_k[0-9][0-9].npy",
                                          "labels_k[0-9][0-9][0-9].npy",
                                          "labels_k[0-9][0-9][0-9][0-9].npy",
                                          "labels_k[0-9][0-9][0-9].png",
                                          "labels_k[0-9][0-9][0-9][0-9].png",
                                          "overlay_k[0-9][0-9][0-9].png",
                                          "overlay_k[0-9][0-9][0-9][0-9].png",
                                          "contour_parts.npy",
                                          "labels_k[0-9].png",
                                          "labels_k[0-9][0-9].png",
                                          "overlay_k[0-9].png",
                                          "overlay_k[0-9][0-9].png",
                                          "contours.npy",
                                          "contours.png",
                                          "ucm.npy",
                                          "ucm.png",
                                          "report.json",
                                          NULL};
/* diaseg contours' files */
static const char *const contour_outputs[] = {"contours.npy", "contours.png", "contour_parts.npy",
                                              NULL};
/* affinity --export's files */
static const char *const export_outputs[] = {"offsets.npy", "diagonals.npy", "sqrt_degree.npy",
                                             "matrix.json", NULL};

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
  dsg_image img;
  dsg_result *res;
  dsg_matrix *matrix; /* affinity --export */
  int solve_status;
  app_out *out;
  FILE *json_fp;          /* --json FILE, staged with the outputs */
  int json_direct;        /* --json names a device, FIFO or link: written in place */
  int input_w, input_h;   /* the image's size before --resize */
  int resize_w, resize_h; /* what --resize and --max-side made of it (0: kept) */
  int nfiles;
  double t_load, t_write, t_total;
} run;

/* The progress on standard error (--progress): a line for people, redrawn in place
 * ("[4/5] solve  1234/~3000 products  5/8 converged  12.3 s  ETA 15 s"), or for programs one
 * JSON object a line per report (docs/CLI.md, "Progress"). */
typedef struct progress_view {
  app_progress_mode mode; /* APP_PROGRESS_BAR or APP_PROGRESS_JSON */
  int width;              /* characters of the line on the terminal now (0: none) */
} progress_view;

static void progress(void *data, const dsg_progress *p)
{
  progress_view *v = data;
  char line[256];
  int len;
  if (v->mode == APP_PROGRESS_JSON) { /* a line per report, unknowns null, seconds to the ms */
    app_json j;
    app_json_init(&j);
    j.compact = 1;
    app_json_begin_object(&j, NULL);
    app_json_string(&j, "stage", p->stage);
    app_json_int(&j, "stage_index", p->stage_index);
    app_json_int(&j, "stage_count", p->stage_count);
    app_json_int(&j, "products", p->products);
    if (p->products_estimate >= 0)
      app_json_int(&j, "products_estimate", p->products_estimate);
    else
      app_json_null(&j, "products_estimate");
    app_json_int(&j, "converged", p->converged);
    app_json_int(&j, "wanted", p->wanted);
    app_json_number(&j, "elapsed_s", round(p->elapsed_s * 1000.0) / 1000.0);
    app_json_number(&j, "stage_elapsed_s", round(p->stage_elapsed_s * 1000.0) / 1000.0);
    app_json_number(&j, "eta_s", p->eta_s >= 0.0 ? round(p->eta_s * 1000.0) / 1000.0 : NAN);
    app_json_end_object(&j);
    if (app_json_finish(&j) == DSG_OK) /* out of memory: no line this time */
      fwrite(j.buf, 1, j.len, stderr);
    app_json_free(&j);
    fflush(stderr);
    return;
  }
  len = snprintf(line, sizeof(line), "[%d/%d] %s", p->stage_index + 1, p->stage_count, p->stage);
  if (strcmp(p->stage, "solve") == 0) {
    if (p->products_estimate >= 0)
      len += snprintf(line + len, sizeof(line) - (size_t)len, "  %ld/~%ld products", p->products,
                      p->products_estimate);
    else
      len += snprintf(line + len, sizeof(line) - (size_t)len, "  %ld products (estimating)",
                      p->products);
    len += snprintf(line + len, sizeof(line) - (size_t)len, "  %d/%d converged", p->converged,
                    p->wanted);
  }
  len += snprintf(line + len, sizeof(line) - (size_t)len, "  %.1f s", p->elapsed_s);
  if (p->eta_s >= 0.0 && p->eta_s < 60.0)
    len += snprintf(line + len, sizeof(line) - (size_t)len, "  ETA %.0f s", p->eta_s);
  else if (p->eta_s >= 60.0)
    len += snprintf(line + len, sizeof(line) - (size_t)len, "  ETA %.0f min", ceil(p->eta_s / 60));
  /* blanks over what is left of a longer line before */
  fprintf(stderr, "\r%s%*s", line, v->width > len ? v->width - len : 0, "");
  fflush(stderr);
  v->width = len;
}

/* Clears the line for people, if there is one. */
static void progress_clear(progress_view *v)
{
  if (v->width > 0)
    fprintf(stderr, "\r%*s\r", v->width, "");
  v->width = 0;
}

static int check_cancel(void)
{
  if (app_cancel)
    return dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                         (int)app_cancel);
  return DSG_OK;
}

/* Pictures waiting to be encoded together, in parallel (app_out_png_many); the batch owns their
 * pixels. Written when full (a count, or about 256 MiB of pixels) and at the end of a stage. */
#define BATCH_PICTURES 16
#define BATCH_BYTES ((size_t)256 << 20)
typedef struct picture_batch {
  app_png pics[BATCH_PICTURES];
  char names[BATCH_PICTURES][48];
  void *pixels[BATCH_PICTURES];
  int n;
  size_t bytes;
} picture_batch;

static void batch_free(picture_batch *b)
{
  for (int i = 0; i < b->n; i++)
    free(b->pixels[i]);
  b->n = 0;
  b->bytes = 0;
}

/* Writes the pictures of the batch and empties it. */
static int batch_flush(run *r, picture_batch *b)
{
  const int n = b->n;
  int status = app_out_png_many(r->out, b->pics, n);
  batch_free(b);
  if (status != DSG_OK)
    return status;
  r->nfiles += n;
  return check_cancel();
}

/* Queues the picture `name` of w x h pixels, `channels` samples of `depth` bits each (app_png);
 * the batch takes `pixels` (malloc'd), also on an error. */
static int write_picture(run *r, picture_batch *b, const char *name, int w, int h, int channels,
                         int depth, void *pixels)
{
  const size_t bytes = (size_t)w * (size_t)h * (size_t)channels * (size_t)(depth / 8);
  int status = DSG_OK;
  if (b->n == BATCH_PICTURES || (b->n > 0 && b->bytes + bytes > BATCH_BYTES))
    status = batch_flush(r, b);
  if (status != DSG_OK) {
    free(pixels);
    return status;
  }
  snprintf(b->names[b->n], sizeof(b->names[b->n]), "%s", name);
  b->pics[b->n] = (app_png){b->names[b->n], w, h, channels, depth, pixels};
  b->pixels[b->n] = pixels;
  b->n++;
  b->bytes += bytes;
  return DSG_OK;
}

/* The eigenvectors' size: the working resolution the image was segmented at (the labels are at
 * the image's). */
static void eig_size(const run *r, int *w, int *h)
{
  *w = dsg_result_work_width(r->res);
  *h = dsg_result_work_height(r->res);
}

/* contours.png (16-bit gray, round(65535 strength)), queued in b */
static int picture_contours(run *r, const float *strength, picture_batch *b)
{
  const int w = r->img.width, h = r->img.height;
  const size_t n = (size_t)w * (size_t)h;
  uint16_t *png = malloc(n * sizeof(*png));
  int status;
  if (!png)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", w, h);
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    const double v = strength[i] < 0.0f ? 0.0 : strength[i] > 1.0f ? 1.0 : strength[i];
    png[i] = (uint16_t)lround(v * 65535.0);
  }
  status = write_picture(r, b, "contours.png", w, h, 1, 16, png);
  return status == DSG_OK ? check_cancel() : status;
}

/* diaseg contours' files: contours.npy (float32 H x W), contour_parts.npy (float32 parts x H x W,
 * with --parts) in the background while contours.png is made and encoded */
static int stage_contours(run *r, const float *strength, const float *parts)
{
  const size_t w = (size_t)r->img.width, h = (size_t)r->img.height;
  const app_npy arrays[2] = {
      {"contours.npy", APP_NPY_F32, strength, 2, {h, w, 0}},
      {"contour_parts.npy", APP_NPY_F32, parts, 3, {(size_t)dsg_contour_parts(), h, w}}};
  const int narrays = parts ? 2 : 1;
  picture_batch b = {0};
  app_out_writer *writer = NULL;
  int status = app_out_npy_start(r->out, arrays, narrays, &writer);
  if (status == DSG_OK)
    status = picture_contours(r, strength, &b);
  if (status == DSG_OK)
    status = batch_flush(r, &b);
  batch_free(&b);
  status = app_out_npy_wait(writer, status);
  if (status == DSG_OK)
    r->nfiles += narrays;
  return status;
}

/* The hierarchy's ultrametric contour map (float32, (2H+1) x (2W+1) at the working resolution,
 * BSDS's convention) into *ucm (malloc'd), or NULL when the run built no hierarchy. */
static int result_ucm(run *r, float **ucm, size_t *W2, size_t *H2)
{
  *W2 = 2 * (size_t)dsg_result_work_width(r->res) + 1;
  *H2 = 2 * (size_t)dsg_result_work_height(r->res) + 1;
  *ucm = malloc(*W2 * *H2 * sizeof(**ucm));
  if (!*ucm)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %zu x %zu map", *W2, *H2);
  if (dsg_result_ucm(r->res, *ucm) != DSG_OK) { /* no hierarchy: nothing to write */
    free(*ucm);
    *ucm = NULL;
    dsg_error_clear();
  }
  return DSG_OK;
}

/* ucm.png (8-bit, the levels scaled by the largest, dark on white like a drawing), queued in b */
static int picture_ucm(run *r, const float *ucm, size_t W2, size_t H2, picture_batch *b)
{
  unsigned char *gray = malloc(W2 * H2);
  float top = 0.0f;
  int status;
  if (!gray)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %zu x %zu picture", W2, H2);
#pragma omp parallel for schedule(static) reduction(max : top)
  for (size_t i = 0; i < W2 * H2; i++) {
    top = ucm[i] > top ? ucm[i] : top;
  }
  /* most cells lie inside a region (level 0: white); only the boundaries' need the root */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < W2 * H2; i++)
    gray[i] = ucm[i] > 0.0f ? (unsigned char)lround(255.0 * (1.0 - sqrt(ucm[i] / top))) : 255;
  status = write_picture(r, b, "ucm.png", (int)W2, (int)H2, 1, 8, gray);
  return status == DSG_OK ? check_cancel() : status;
}

/* The pictures of a segmentation, queued in b: labels.png (16-bit gray: the label of each pixel,
 * as labels.npy), labels_color.png (one colour per segment) and overlay.png; with k > 0 (a list
 * of k), labels_kK.png, labels_color_kK.png and overlay_kK.png. Nothing for labels NULL (the
 * solve stopped short of k). */
static int picture_labels(run *r, picture_batch *b, const int32_t *labels, int k)
{
  const int w = r->img.width, h = r->img.height;
  const size_t n = (size_t)w * (size_t)h;
  char suffix[16] = "", name[48];
  unsigned char *rgb = NULL;
  uint16_t *gray = NULL;
  int status, fits = 1;
  if (!labels)
    return DSG_OK;
  if (k > 0)
    snprintf(suffix, sizeof(suffix), "_k%d", k);
  gray = malloc(n * sizeof(*gray));
  if (!gray)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", w, h);
#pragma omp parallel for schedule(static) reduction(& : fits)
  for (size_t i = 0; i < n; i++) {
    fits &= labels[i] >= 0 && labels[i] <= UINT16_MAX; /* labels are below DSG_MAX_CUT */
    gray[i] = (uint16_t)labels[i];
  }
  for (size_t i = 0; !fits && i < n; i++)
    if (labels[i] < 0 || labels[i] > UINT16_MAX) {
      free(gray);
      return dsg_error_set(DSG_ERR_LIMIT, "label %ld does not fit a 16-bit PNG", (long)labels[i]);
    }
  snprintf(name, sizeof(name), "labels%s.png", suffix);
  status = write_picture(r, b, name, w, h, 1, 16, gray);
  if (status == DSG_OK)
    status = dsg_picture_labels(labels, w, h, &rgb);
  if (status == DSG_OK) {
    snprintf(name, sizeof(name), "labels_color%s.png", suffix);
    status = write_picture(r, b, name, w, h, 3, 8, rgb);
  }
  if (status == DSG_OK)
    status = dsg_picture_overlay(&r->img, labels, &rgb);
  if (status == DSG_OK) {
    snprintf(name, sizeof(name), "overlay%s.png", suffix);
    status = write_picture(r, b, name, w, h, 3, 8, rgb);
  }
  if (status == DSG_OK)
    status = check_cancel();
  return status;
}

/* Whether v (n values) is constant: its spread, max - min over the finite values, below 1e-4 of
 * max |v|. The first eigenvector of N on a connected image is the trivial one, u = D^1/2 1 / |.|,
 * whose v = D^-1/2 u is constant up to float32 rounding (a spread of about 1e-7 of max |v|);
 * every other eigenvector is D-orthogonal to it, so it changes sign: a spread of order max |v|. */
static int is_constant(const float *v, size_t n)
{
  float lo = INFINITY, hi = -INFINITY;
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(v[i]))
      continue;
    lo = v[i] < lo ? v[i] : lo;
    hi = v[i] > hi ? v[i] : hi;
  }
  if (!(hi >= lo))
    return 1; /* nothing finite: nothing to draw */
  return (double)hi - (double)lo <= 1e-4 * fmax(fabs((double)lo), fabs((double)hi));
}

/* The pictures of the first --pictures eigenvectors that are not constant (eigvec_NN.png, NN the
 * vector's index in eigenvectors.npy), with --colormap, queued in b */
static int picture_eigenvectors(run *r, picture_batch *b)
{
  const app_config *cfg = r->cfg;
  const int nconv = dsg_result_nconv(r->res);
  const double *sqrt_degree = dsg_result_sqrt_degree(r->res);
  const float *vectors = dsg_result_eigenvectors(r->res);
  int w, h, drawn = 0, status = DSG_OK;
  size_t n;
  float *field = NULL;
  eig_size(r, &w, &h);
  n = (size_t)w * (size_t)h;
  for (int k = 0; k < nconv && status == DSG_OK && (cfg->pictures < 0 || drawn < cfg->pictures);
       k++) {
    char name[32];
    const float *u = vectors + (size_t)k * n;
    unsigned char *rgb = NULL;
    if (!field && !(field = malloc(n * sizeof(*field))))
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a %d x %d picture", w, h);
    for (size_t i = 0; i < n; i++)
      field[i] = (float)((double)u[i] / sqrt_degree[i]); /* v = D^-1/2 u */
    if (is_constant(field, n))
      continue; /* the trivial vector: a flat picture says nothing */
    snprintf(name, sizeof(name), "eigvec_%02d.png", k);
    status = dsg_picture_field_map(field, w, h, cfg->colormap, &rgb);
    if (status == DSG_OK)
      status = write_picture(r, b, name, w, h, 3, 8, rgb);
    drawn++;
  }
  free(field);
  return status == DSG_OK ? check_cancel() : status;
}

/* The arrays of a run at most: eigenvectors.npy, contours.npy, ucm.npy and a labels file per k */
#define RUN_ARRAYS (3 + DSG_MAX_K)

/* Every output but the report. The arrays (eigenvectors.npy: every vector; contours.npy; ucm.npy;
 * labels.npy, or labels_kK.npy per k of a list) are written in the background while the pictures
 * are made and encoded; both are staged before the commit. */
static int stage_write(run *r)
{
  const size_t W = (size_t)r->img.width, H = (size_t)r->img.height;
  const int nconv = dsg_result_nconv(r->res), nk = dsg_result_nk(r->res);
  const float *contours = dsg_result_contours(r->res);
  app_npy arrays[RUN_ARRAYS];
  char names[RUN_ARRAYS][32];
  picture_batch b = {0};
  app_out_writer *writer = NULL;
  float *ucm = NULL;
  size_t W2 = 0, H2 = 0;
  int w, h, narrays = 0, status;
  double t0 = dsg_seconds();

  eig_size(r, &w, &h);
  if (nconv > 0)
    arrays[narrays++] = (app_npy){"eigenvectors.npy",
                                  APP_NPY_F32,
                                  dsg_result_eigenvectors(r->res),
                                  3,
                                  {(size_t)nconv, (size_t)h, (size_t)w}};
  if (contours)
    arrays[narrays++] = (app_npy){"contours.npy", APP_NPY_F32, contours, 2, {H, W, 0}};
  status = result_ucm(r, &ucm, &W2, &H2);
  if (ucm)
    arrays[narrays++] = (app_npy){"ucm.npy", APP_NPY_F32, ucm, 2, {H2, W2, 0}};
  /* -k 2,4,8: one set per k, named by it */
  for (int i = 0; i < (nk > 1 ? nk : 1) && narrays < RUN_ARRAYS; i++) {
    const int k = nk > 1 ? dsg_result_k_at(r->res, i) : 0;
    const int32_t *labels = nk > 1 ? dsg_result_labels_k(r->res, k) : dsg_result_labels(r->res);
    if (!labels)
      continue;
    if (k > 0)
      snprintf(names[narrays], sizeof(names[narrays]), "labels_k%d.npy", k);
    else
      snprintf(names[narrays], sizeof(names[narrays]), "labels.npy");
    arrays[narrays] = (app_npy){names[narrays], APP_NPY_I32, labels, 2, {H, W, 0}};
    narrays++;
  }
  if (status == DSG_OK)
    status = app_out_npy_start(r->out, arrays, narrays, &writer);

  if (status == DSG_OK)
    status = picture_eigenvectors(r, &b);
  if (status == DSG_OK && contours)
    status = picture_contours(r, contours, &b);
  if (status == DSG_OK && ucm)
    status = picture_ucm(r, ucm, W2, H2, &b);
  for (int i = 0; i < (nk > 1 ? nk : 1) && status == DSG_OK; i++) {
    const int k = nk > 1 ? dsg_result_k_at(r->res, i) : 0;
    status = picture_labels(r, &b,
                            nk > 1 ? dsg_result_labels_k(r->res, k) : dsg_result_labels(r->res), k);
  }
  if (status == DSG_OK)
    status = batch_flush(r, &b);
  batch_free(&b);
  status = app_out_npy_wait(writer, status);
  free(ucm);
  if (status != DSG_OK)
    return status;
  r->nfiles += narrays;
  r->t_write = dsg_seconds() - t0;
  return check_cancel();
}

/* affinity --export: the matrix in diaseg's own layout, for other solvers (tests/cli/peers.py). */
static int stage_export(run *r)
{
  const dsg_matrix *N = r->matrix;
  const dsg_options *opt = &r->cfg->opt;
  const int ndiag = dsg_matrix_ndiag(N), rows = dsg_matrix_rows(N);
  const size_t pitch = dsg_matrix_pitch(N);
  size_t shape_off[1] = {(size_t)ndiag}, shape_val[2] = {(size_t)ndiag, pitch};
  size_t shape_deg[1] = {(size_t)rows};
  app_json j;
  int status =
      app_out_npy_i32(r->out, "offsets.npy", (const int32_t *)dsg_matrix_offsets(N), 1, shape_off);
  if (status == DSG_OK)
    status = app_out_npy_f32(r->out, "diagonals.npy", dsg_matrix_values(N), 2, shape_val);
  if (status == DSG_OK)
    status = app_out_npy_f64(r->out, "sqrt_degree.npy", dsg_matrix_sqrt_degree(N), 1, shape_deg);
  if (status != DSG_OK)
    return status;
  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_string(&j, "diaseg_version", dsg_version());
  app_json_string(&j, "image", r->image_path);
  app_json_int(&j, "width", r->img.width);
  app_json_int(&j, "height", r->img.height);
  app_json_int(&j, "n", rows);
  app_json_int(&j, "ndiag", ndiag);
  app_json_int(&j, "pitch", (long long)pitch);
  app_json_string(&j, "layout",
                  "diagonals[d, row] = N[row, row + offsets[d]] for 0 <= row < n; "
                  "zero where the column is outside [0, n) and for row >= n");
  app_json_int(&j, "radius", opt->radius);
  app_json_number(&j, "sigma_i", opt->sigma_i);
  app_json_number(&j, "sigma_x", opt->sigma_x);
  app_json_number(&j, "sigma_c", opt->sigma_c);
  app_json_string(&j, "affinity", opt->affinity);
  app_json_string(&j, "detector", dsg_options_detector(opt));
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK)
    status = app_out_text(r->out, "matrix.json", j.buf, j.len);
  app_json_free(&j);
  return status;
}

static void run_free(run *r)
{
  /* the staged files go whole: a second signal meanwhile waits, then exits with nothing left */
  app_signals_hold();
  app_signals_guard(NULL);
  app_out_destroy(r->out);
  app_signals_release(0);
  dsg_image_free(&r->img);
  dsg_result_destroy(r->res);
  dsg_matrix_destroy(r->matrix);
}

/* The size --resize and --max-side ask for an image of w x h into *tw x *th (0 x 0: keep it): a
 * missing side or a percentage keeps the aspect (each side at least 1 pixel); --max-side then
 * shrinks the longer side to N. */
static void resize_target(const app_config *cfg, int w, int h, int *tw, int *th)
{
  double W = w, H = h;
  if (cfg->resize_percent > 0.0) {
    W = w * cfg->resize_percent / 100.0;
    H = h * cfg->resize_percent / 100.0;
  } else if (cfg->resize_w > 0 || cfg->resize_h > 0) {
    W = cfg->resize_w > 0 ? cfg->resize_w : (double)w * cfg->resize_h / h;
    H = cfg->resize_h > 0 ? cfg->resize_h : (double)h * cfg->resize_w / w;
  }
  if (cfg->max_side > 0 && (W > cfg->max_side || H > cfg->max_side)) {
    const double s = cfg->max_side / (W > H ? W : H);
    W *= s;
    H *= s;
  }
  *tw = (int)lround(W) < 1 ? 1 : (int)lround(W);
  *th = (int)lround(H) < 1 ? 1 : (int)lround(H);
  if (*tw == w && *th == h)
    *tw = *th = 0; /* nothing to do */
}

/* The image, resampled as --resize and --max-side ask, in r->img. */
static int load(run *r)
{
  const app_config *cfg = r->cfg;
  double t0 = dsg_seconds();
  int status = app_image_load(r->image_path, cfg->max_pixels, &r->img);
  if (status != DSG_OK)
    return status;
  r->input_w = r->img.width;
  r->input_h = r->img.height;
  resize_target(cfg, r->img.width, r->img.height, &r->resize_w, &r->resize_h);
  if (r->resize_w > 0) {
    dsg_image resized;
    if ((size_t)r->resize_w * (size_t)r->resize_h > cfg->max_pixels)
      return dsg_error_set(DSG_ERR_INVALID,
                           "resizing to %dx%d gives %zu pixels, over the cap of %zu "
                           "(raise it with --max-pixels)",
                           r->resize_w, r->resize_h, (size_t)r->resize_w * (size_t)r->resize_h,
                           cfg->max_pixels);
    status = dsg_image_resize(&r->img, r->resize_w, r->resize_h, &resized);
    if (status != DSG_OK)
      return status;
    dsg_image_free(&r->img);
    r->img = resized;
  }
  r->t_load = dsg_seconds() - t0;
  return DSG_OK;
}

/* The report into report.json and --json (a file staged with the outputs, or written in place
 * before the commit for standard output, a device or a FIFO: a failure there leaves no output
 * either). */
static int write_report(run *r, double t_start)
{
  const app_config *cfg = r->cfg;
  dsg_report_info info = {app_command_name(cfg->command),
                          r->image_path,
                          r->input_w,
                          r->input_h,
                          r->resize_w,
                          r->resize_h,
                          (long long)cfg->max_pixels,
                          r->t_load,
                          r->t_write,
                          0.0};
  char *json = NULL;
  size_t len = 0;
  int status;
  r->t_total = dsg_seconds() - t_start;
  info.total_s = r->t_total;
  status = dsg_result_report(r->res, &info, &json, &len);
  if (status == DSG_OK)
    status = app_out_text(r->out, "report.json", json, len);
  if (status == DSG_OK && r->json_fp) {
    FILE *fp = r->json_fp;
    r->json_fp = NULL;
    fwrite(json, 1, len, fp);
    status = app_out_close(r->out, fp);
  } else if (status == DSG_OK && cfg->json) {
    status = app_write_direct(cfg->json, json, len);
  }
  dsg_free(json);
  return status;
}

/* The k of the run whose labels were computed (written 1) or not (0), as "2,4,8", into buf
 * (room for 64 k). Returns how many. */
static int list_ks(const dsg_result *res, int written, char *buf, size_t cap)
{
  size_t len = 0;
  int count = 0;
  buf[0] = '\0';
  for (int i = 0; i < dsg_result_nk(res); i++) {
    const int k = dsg_result_k_at(res, i);
    if ((dsg_result_labels_k(res, k) != NULL) != written || len + 4 >= cap)
      continue;
    len += (size_t)snprintf(buf + len, cap - len, "%s%d", count ? "," : "", k);
    count++;
  }
  return count;
}

static void summary(const run *r, double t_start)
{
  const app_config *cfg = r->cfg;
  const int nconv = dsg_result_nconv(r->res);
  const double *res = dsg_result_residuals(r->res);
  double max_res = 0.0;
  char segs[256] = "", ks[200];
  for (int i = 0; i < nconv; i++)
    max_res = res[i] > max_res ? res[i] : max_res;
  if (dsg_result_nk(r->res) > 1) {
    if (list_ks(r->res, 1, ks, sizeof(ks)) > 0)
      snprintf(segs, sizeof(segs), ", segments for k = %s", ks);
  } else if (dsg_result_labels(r->res)) {
    const int32_t *labels = dsg_result_labels(r->res);
    int count = 0;
    for (size_t i = 0; i < (size_t)r->img.width * (size_t)r->img.height; i++)
      count = labels[i] >= count ? labels[i] + 1 : count;
    if (cfg->opt.threshold > 0.0)
      snprintf(segs, sizeof(segs), ", %d segments at level %g", count, cfg->opt.threshold);
    else if (cfg->opt.k == DSG_K_AUTO && strcmp(cfg->opt.grouping, "hierarchy") == 0)
      snprintf(segs, sizeof(segs), ", %d segments (-k auto: the hierarchy at level %g)", count,
               dsg_options_auto_level(&cfg->opt));
    else if (cfg->opt.k == DSG_K_AUTO)
      snprintf(segs, sizeof(segs), ", %d segments (-k auto: the largest eigengap)", count);
    else
      snprintf(segs, sizeof(segs), ", %d segments", count);
  }
  char work[64] = ""; /* where the working resolution shrank the image */
  if (dsg_result_work_width(r->res) != r->img.width)
    snprintf(work, sizeof(work), " (solved at %dx%d)", dsg_result_work_width(r->res),
             dsg_result_work_height(r->res));
  fprintf(stderr,
          "diaseg: %s %dx%d%s: %d/%d eigenpairs (max residual %.1e, %ld products, %.2f s "
          "solve)%s; %d files in %s/ (%.2f s total)\n",
          r->image_path, r->img.width, r->img.height, work, nconv, cfg->opt.nev, max_res,
          dsg_result_products(r->res), dsg_result_timing(r->res).solve, segs, r->nfiles,
          cfg->out_dir, dsg_seconds() - t_start);
}

/* Puts the outputs in place, whole: a signal that comes now is handled once the commit is done
 * (the run is then complete), and one that came before it stops it. */
static int commit(run *r, const char *const *stale)
{
  int status;
  app_signals_hold();
  status = check_cancel();
  if (status == DSG_OK)
    status = app_out_commit(r->out, stale);
  app_signals_release(status == DSG_OK);
  return status;
}

/* path made absolute with its links resolved, where its last components (up to 8) do not exist
 * yet: the existing part resolved, the rest appended. Returns 0, or -1 where it cannot tell. */
static int resolve(const char *path, char *buf, int depth)
{
  char parent[PATH_MAX], *slash;
  const char *dir = ".", *base;
  size_t len = strlen(path), used;
  if (realpath(path, buf))
    return 0;
  if (errno != ENOENT || depth >= 8 || len == 0 || len >= sizeof(parent))
    return -1;
  while (len > 1 && path[len - 1] == '/')
    len--;
  memcpy(parent, path, len);
  parent[len] = '\0';
  slash = strrchr(parent, '/');
  base = slash ? slash + 1 : parent;
  if (slash == parent)
    dir = "/";
  else if (slash) {
    *slash = '\0';
    dir = parent;
  }
  if (strcmp(base, ".") == 0 || strcmp(base, "..") == 0 || resolve(dir, buf, depth + 1) != 0)
    return -1;
  used = strlen(buf);
  if (used + 1 + strlen(base) + 1 > PATH_MAX)
    return -1;
  snprintf(buf + used, PATH_MAX - used, "%s%s", used > 0 && buf[used - 1] == '/' ? "" : "/", base);
  return 0;
}

/* --json FILE must be neither the input image (an existing file: the same device and inode) nor
 * the output folder or one of the run's outputs in it (by the resolved path: the folder may not
 * exist yet), which would overwrite or remove it. report.json is allowed: it is the same report.
 * Checked before anything is created. */
static int check_json(const run *r, const char *const *outputs)
{
  const char *json = r->cfg->json, *out_dir = r->cfg->out_dir, *base;
  char jpath[PATH_MAX], opath[PATH_MAX], *slash;
  struct stat js, is;
  if (!json || strcmp(json, "-") == 0)
    return DSG_OK;
  if (stat(json, &js) == 0 && stat(r->image_path, &is) == 0 && js.st_dev == is.st_dev &&
      js.st_ino == is.st_ino)
    return dsg_error_set(DSG_ERR_INVALID,
                         "--json '%s' is the input image '%s': writing the report there would "
                         "overwrite it; name another file",
                         json, r->image_path);
  if (resolve(json, jpath, 0) != 0 || resolve(out_dir, opath, 0) != 0)
    return DSG_OK; /* a path that cannot be reached: staging it says why */
  if (strcmp(jpath, opath) == 0)
    return dsg_error_set(DSG_ERR_INVALID,
                         "--json '%s' is the output folder '%s'; name a file outside it", json,
                         out_dir);
  slash = strrchr(jpath, '/');
  base = slash + 1;
  *slash = '\0';
  if (strcmp(jpath[0] ? jpath : "/", opath) != 0 || strcmp(base, "report.json") == 0)
    return DSG_OK;
  for (int i = 0; outputs[i]; i++)
    if (fnmatch(outputs[i], base, 0) == 0)
      return dsg_error_set(DSG_ERR_INVALID,
                           "--json '%s' is the output %s of this run in '%s', which would "
                           "replace or remove the report; name another file",
                           json, base, out_dir);
  return DSG_OK;
}

/* --full-resolution: what the run will cost against the default working size, before it starts
 * (memory: dsg_estimate_bytes; time: the solve's products grow with the pixels too). */
static void say_full_resolution(const run *r)
{
  const app_config *cfg = r->cfg;
  const double n = (double)r->img.width * r->img.height;
  const double bytes = dsg_estimate_bytes(&cfg->opt, r->img.width, r->img.height);
  const double ratio = n / DSG_WORK_PIXELS;
  if (ratio <= 1.0)
    return;
  fprintf(stderr,
          "diaseg: --full-resolution: %dx%d is %.1f megapixels, %.0fx the default working size: "
          "about %.1f GiB of memory, and more than %.0fx the time (the solve needs more "
          "products as the image grows)\n",
          r->img.width, r->img.height, n / 1e6, ratio, bytes / (1024.0 * 1024.0 * 1024.0), ratio);
}

/* diaseg contours: the detector alone */
static int run_contours(run *r, const dsg_options *opt, double t_start)
{
  const app_config *cfg = r->cfg;
  const int w = r->img.width, h = r->img.height;
  float *strength = NULL, *parts = NULL;
  double t0 = dsg_seconds();
  int status = dsg_contours(&r->img, opt, &strength, cfg->parts ? &parts : NULL);
  const double t_detect = dsg_seconds() - t0;
  if (status == DSG_OK)
    status = stage_contours(r, strength, parts);
  if (status == DSG_OK)
    status = commit(r, contour_outputs);
  if (status == DSG_OK && !cfg->quiet)
    fprintf(stderr, "diaseg: %s %dx%d: contours in %.2f s; %d files in %s/ (%.2f s total)\n",
            r->image_path, w, h, t_detect, r->nfiles, cfg->out_dir, dsg_seconds() - t_start);
  dsg_free(strength);
  dsg_free(parts);
  return status;
}

/* The OpenCL device of a run, opened and its programs built (dsg_prepare) on a thread of their
 * own while the image is read and decoded: on a GPU a few tenths of a second of the first run of
 * the process, paid beside the decode instead of after it. The run starts once it is done: run
 * beside it, with OpenCL calls on both threads at once, LeakSanitizer's exit check crashed on
 * PoCL in one of five passes of the sanitized CLI (tests/run_all.sh). What the run needs of the
 * image alone, chfsi's coarse start, is solved meanwhile on this thread instead (dsg_presolve:
 * host work, no OpenCL call), so that the run's setup does not wait for it (0.02-0.13 s on the
 * H200, docs/PERFORMANCE.md). */
typedef struct device_warmup {
  dsg_options opt;
  pthread_t thread;
  int running;
} device_warmup;

static void *warmup_main(void *arg)
{
  device_warmup *w = arg;
  dsg_prepare(&w->opt); /* a failure is the run's to meet, and to report in its place */
  return NULL;
}

/* Starts the warm-up for the first image of the process that segment or eigs will run with
 * --matvec opencl or auto (dsg_prepare finds whether auto has a GPU), once the image's name opens
 * (a name that does not fails at once, without waiting for a device). --matvec cpu starts
 * nothing. */
static void warmup_start(device_warmup *w, const app_config *cfg, const dsg_options *opt,
                         const char *image)
{
  static int started; /* the process-wide OpenCL cache keeps the device for the next images */
  memset(w, 0, sizeof(*w));
  if (started || (cfg->command != APP_CMD_SEGMENT && cfg->command != APP_CMD_EIGS) ||
      !opt->matvec || strcmp(opt->matvec, "cpu") == 0 ||
      (strcmp(image, "-") != 0 && access(image, R_OK) != 0))
    return;
  started = 1;
  w->opt = *opt;
  w->opt.progress = NULL;
  w->opt.log = NULL;
  w->running = pthread_create(&w->thread, NULL, warmup_main, w) == 0;
}

/* Waits for the warm-up, if one runs: before the library uses the device, and before the run
 * returns. */
static void warmup_join(device_warmup *w)
{
  if (w->running)
    pthread_join(w->thread, NULL);
  w->running = 0;
}

static int run_image(const app_config *cfg)
{
  device_warmup warmup;
  run r;
  dsg_options opt = cfg->opt;
  progress_view view = {cfg->progress, 0};
  int status;
  double t_start = dsg_seconds();

  memset(&r, 0, sizeof(r));
  r.cfg = cfg;
  opt.cancel = &app_cancel;
  opt.log = app_cli_log;
  opt.log_data = (void *)cfg;
  if (view.mode == APP_PROGRESS_AUTO)
    view.mode = isatty(STDERR_FILENO) ? APP_PROGRESS_BAR : APP_PROGRESS_NONE;
  if (cfg->quiet && view.mode != APP_PROGRESS_JSON) /* -q: none, unless --progress json */
    view.mode = APP_PROGRESS_NONE;
  if (view.mode != APP_PROGRESS_NONE) {
    opt.progress = progress;
    opt.progress_data = &view;
  }
  if (cfg->image)
    snprintf(r.image_path, sizeof(r.image_path), "%s", cfg->image);
  else if ((status = app_find_sample(r.image_path, sizeof(r.image_path))) != DSG_OK)
    return status;

  /* load and check everything before anything is created on disk; the device meanwhile */
  warmup_start(&warmup, cfg, &opt, r.image_path);
  status = load(&r);
  if (status == DSG_OK && cfg->command != APP_CMD_AFFINITY && cfg->command != APP_CMD_CONTOURS)
    status = dsg_check_size(&opt, r.img.width, r.img.height);
  if (status == DSG_OK && cfg->full_resolution && !cfg->quiet)
    say_full_resolution(&r);
  if (status == DSG_OK)
    status = check_json(&r, cfg->command == APP_CMD_AFFINITY   ? export_outputs
                            : cfg->command == APP_CMD_CONTOURS ? contour_outputs
                                                               : run_outputs);
  if (status == DSG_OK)
    status = app_out_begin(&r.out, cfg->out_dir);
  if (status != DSG_OK)
    goto out;
  app_signals_guard(r.out);
  /* --json FILE is staged with the outputs: a path that cannot be written fails now */
  if (cfg->json && strcmp(cfg->json, "-") != 0)
    status = app_out_open_path(r.out, cfg->json, &r.json_fp, &r.json_direct);
  if (status != DSG_OK)
    goto out;

  if (cfg->command == APP_CMD_CONTOURS) {
    status = run_contours(&r, &opt, t_start);
    goto out;
  }
  if (cfg->command == APP_CMD_AFFINITY) {
    status = dsg_affinity(&r.img, &opt, &r.matrix);
    if (status == DSG_OK)
      status = stage_export(&r);
    if (status == DSG_OK)
      status = commit(&r, export_outputs);
    if (status == DSG_OK && !cfg->quiet)
      fprintf(stderr, "diaseg: %s %dx%d: N with %d diagonals (%.1f MiB) exported to %s/\n",
              r.image_path, r.img.width, r.img.height, dsg_matrix_ndiag(r.matrix),
              (double)dsg_matrix_ndiag(r.matrix) * (double)dsg_matrix_pitch(r.matrix) * 4.0 /
                  1048576.0,
              cfg->out_dir);
    goto out;
  }

  /* chfsi's coarse start (and with --detector forest the forest's model) in the device's opening
   * time: host work only (dsg_presolve), taken by the run in place of its own; a failure is the
   * run's to meet */
  if (warmup.running && dsg_presolve(&r.img, &opt) != DSG_OK)
    dsg_error_clear();
  warmup_join(&warmup);
  status = dsg_segment(&r.img, &opt, &r.res);
  progress_clear(&view);
  if (status == DSG_ERR_NOCONV) {
    /* partial results: kept, flagged, exit 3; said once, at the end */
    r.solve_status = status;
    status = DSG_OK;
  }
  if (status == DSG_OK)
    status = stage_write(&r);
  if (status == DSG_OK)
    status = write_report(&r, t_start);
  if (status == DSG_OK)
    status = commit(&r, run_outputs);
  if (status != DSG_OK)
    goto out;
  r.nfiles++;
  if (!cfg->quiet)
    summary(&r, t_start);
  status = r.solve_status;
  if (status == DSG_ERR_NOCONV) {
    /* the one message of the event: the solver's, what it means for the outputs */
    char segs[320] = "", ks[200];
    if (cfg->command == APP_CMD_SEGMENT && dsg_result_nk(r.res) > 1) {
      if (list_ks(r.res, 0, ks, sizeof(ks)) > 0)
        snprintf(segs, sizeof(segs),
                 "; -k K needs K converged eigenvectors, so no segmentation was written "
                 "for k = %s",
                 ks);
    } else if (cfg->command == APP_CMD_SEGMENT && !dsg_result_labels(r.res)) {
      snprintf(segs, sizeof(segs),
               "; -k %d needs %d converged eigenvectors, so no segmentation "
               "was written",
               cfg->opt.k, cfg->opt.k);
    }
    dsg_error_set(DSG_ERR_NOCONV,
                  "%s (--max-iter %d)%s; the partial results are flagged in %s/report.json",
                  dsg_result_note(r.res), cfg->opt.max_iter, segs, cfg->out_dir);
  }

out:
  warmup_join(&warmup);
  run_free(&r);
  return status;
}

/* ---- batches: several images, or the images of a folder, in one call ---- */

/* The image files diaseg reads, by their extension (the loader checks the content). */
static const char *const image_extensions[] = {".png",  ".jpg",  ".jpeg", ".bmp", ".tga",
                                               ".pnm",  ".ppm",  ".pgm",  ".pbm", ".tif",
                                               ".tiff", ".webp", NULL};

static int is_image_name(const char *name)
{
  const char *dot = strrchr(name, '.');
  if (!dot || name[0] == '.')
    return 0;
  for (int i = 0; image_extensions[i]; i++)
    if (strcasecmp(dot, image_extensions[i]) == 0)
      return 1;
  return 0;
}

static int is_folder(const char *path)
{
  struct stat st;
  return strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

typedef struct image_batch {
  char **paths;
  int count, cap;
} image_batch;

static int image_batch_add(image_batch *b, const char *dir, const char *name)
{
  char *p;
  if (b->count == b->cap) {
    const int cap = b->cap ? 2 * b->cap : 64;
    char **grown = realloc(b->paths, (size_t)cap * sizeof(*grown));
    if (!grown)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot list %d images", cap);
    b->paths = grown;
    b->cap = cap;
  }
  const size_t len = (dir ? strlen(dir) + 1 : 0) + strlen(name) + 1;
  p = malloc(len);
  if (!p)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot list the images");
  snprintf(p, len, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  b->paths[b->count++] = p;
  return DSG_OK;
}

static int by_name(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A folder's image files, sorted by name (not its subfolders'). */
static int image_batch_add_folder(image_batch *b, const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  const int first = b->count;
  int status = DSG_OK;
  if (!d)
    return dsg_error_set(DSG_ERR_IO, "cannot read the folder '%s': %s", dir, strerror(errno));
  while (status == DSG_OK && (e = readdir(d)) != NULL)
    if (is_image_name(e->d_name))
      status = image_batch_add(b, dir, e->d_name);
  closedir(d);
  if (status == DSG_OK && b->count == first)
    status = dsg_error_set(DSG_ERR_INVALID, "the folder '%s' holds no image files (%s)", dir,
                           "png, jpg, bmp, tga, pnm, tif, webp");
  if (status == DSG_OK)
    qsort(b->paths + first, (size_t)(b->count - first), sizeof(*b->paths), by_name);
  return status;
}

static void image_batch_free(image_batch *b)
{
  for (int i = 0; i < b->count; i++)
    free(b->paths[i]);
  free(b->paths);
}

/* A file's name without its folders and extension ("stdin" for -), into buf. */
static const char *stem_of(const char *path, char *buf, size_t cap)
{
  const char *slash = strrchr(path, '/'), *dot;
  snprintf(buf, cap, "%s", strcmp(path, "-") == 0 ? "stdin" : slash ? slash + 1 : path);
  dot = strrchr(buf, '.');
  if (dot && dot != buf)
    buf[dot - buf] = '\0';
  return buf;
}

/* The output folder of image i: OUT/STEM, the file's name without its extension ("stdin" for
 * -), made unique with -2, -3, ... where two images share a name. */
static void image_batch_folder(const app_config *cfg, const image_batch *b, int i, char *buf,
                               size_t cap)
{
  char stem[256], other[256];
  int same = 0;
  stem_of(b->paths[i], stem, sizeof(stem));
  for (int j = 0; j < i; j++)
    same += strcmp(stem_of(b->paths[j], other, sizeof(other)), stem) == 0;
  if (same)
    snprintf(buf, cap, "%s/%s-%d", cfg->out_dir, stem, same + 1);
  else
    snprintf(buf, cap, "%s/%s", cfg->out_dir, stem);
}

int app_run(const app_config *cfg)
{
  image_batch b = {NULL, 0, 0};
  int status = DSG_OK, first_failure = DSG_OK, failed = 0, done = 0;
  double t0 = dsg_seconds();

  if (cfg->command == APP_CMD_AFFINITY ||
      (cfg->nimages <= 1 && !(cfg->image && is_folder(cfg->image))))
    return run_image(cfg); /* one image: -o is its folder (affinity takes one) */
  for (int i = 0; i < cfg->nimages && status == DSG_OK; i++)
    status = is_folder(cfg->images[i]) ? image_batch_add_folder(&b, cfg->images[i])
                                       : image_batch_add(&b, NULL, cfg->images[i]);
  if (status != DSG_OK) {
    image_batch_free(&b);
    return status;
  }
  for (int i = 0; i < b.count; i++) {
    app_config one = *cfg;
    char folder[PATH_MAX + 300];
    image_batch_folder(cfg, &b, i, folder, sizeof(folder));
    one.image = b.paths[i];
    one.nimages = 1;
    one.out_dir = folder;
    if (!cfg->quiet)
      fprintf(stderr, "diaseg: [%d/%d] %s -> %s/\n", i + 1, b.count, b.paths[i], folder);
    status = run_image(&one);
    if (status == DSG_ERR_INTERRUPTED || app_cancel) {
      first_failure = DSG_ERR_INTERRUPTED;
      break;
    }
    if (status != DSG_OK) { /* said now, one line; the others still run */
      app_cli_say(status == DSG_ERR_NOCONV ? "warning" : "error", dsg_error_raw());
      failed++;
      if (first_failure == DSG_OK)
        first_failure = status;
    } else {
      done++;
    }
  }
  if (!cfg->quiet || failed)
    fprintf(stderr, "diaseg: %d of %d images done, %d failed (%.1f s)\n", done, b.count, failed,
            dsg_seconds() - t0);
  image_batch_free(&b);
  if (first_failure == DSG_ERR_INTERRUPTED)
    return dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d after %d of %d images",
                         (int)app_cancel, done + failed, b.count);
  if (first_failure != DSG_OK)
    return dsg_error_set(first_failure, "%d of %d images failed (their messages are above)", failed,
                         b.count);
  return DSG_OK;
}
