/* Coarse-to-fine starts for the block solver (issue 15; docs/PIPELINE.md, "Coarse-to-fine
 * starts"). The same problem is made on the image shrunk APP_COARSE_FACTOR times each way (the
 * same cue and options: its own contours, affinity and components), solved with chfsi from its
 * random block at a looser tolerance, and the coarse block, every column of it, is brought to the
 * fine grid: each column u is a normalised affinity's vector D^1/2 v with v piecewise smooth over
 * the image, so v = u / D_c^1/2 is interpolated (bilinear, centres onto centres) and multiplied by
 * the fine D^1/2. The fine solve starts from that block (eig_options.start). The result is the
 * fine problem's own: only the start differs. Tried and not kept: the fine problem's contours
 * shrunk (by maximum or mean) instead of the detector run on the coarse image, which saves the
 * coarse detector's time but gave starts that needed one to three rounds more, and a start
 * aggregated from N itself (4 x 4 pixel blocks), which needed more products than the random
 * block (docs/PERFORMANCE.md, "Coarse-to-fine starts and the C block product"). */
#include "diaseg_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define APP_COARSE_FACTOR 5 /* the coarse image is the image shrunk this much each way */
/* ... and at least this many pixels each way, where it was measured: before chfsi bounded its
 * filter's growth (chfsi.c, CHFSI_GROWTH_MAX), chfsi at nev 16 on a flat 16 x 16 or 20 x 20
 * problem ran its 1000 restarts unconverged (7 s on 2 cores), from 24 x 24 it converged in 3
 * (20 ms); smaller coarse images now converge too, but what a start from them is worth is not
 * measured, and below this `auto` takes Lanczos */
#define APP_COARSE_MIN_SIDE 24
#define APP_COARSE_TOL_SCALE 10 /* the coarse solve's tolerance: this times the fine one's */
/* its restarts at most (3 for a BSDS photo's 97 x 65): a start need not converge, and one whose
 * solve does not is cut short rather than paid for in full */
#define APP_COARSE_MAX_ITER 50

int app_coarse_size(const dsg_options *opt, int width, int height, int *cw, int *ch)
{
  *cw = (width + APP_COARSE_FACTOR - 1) / APP_COARSE_FACTOR;
  *ch = (height + APP_COARSE_FACTOR - 1) / APP_COARSE_FACTOR;
  return opt->coarse_start && *cw >= APP_COARSE_MIN_SIDE && *ch >= APP_COARSE_MIN_SIDE &&
         (long long)*cw * *ch > 4LL * (opt->nev + 1);
}

int app_coarse_image(const dsg_image *work, const dsg_options *opt, dsg_image *coarse)
{
  int cw, ch;
  memset(coarse, 0, sizeof(*coarse));
  return app_coarse_size(opt, work->width, work->height, &cw, &ch)
             ? app_image_shrink(work, cw, ch, coarse)
             : DSG_OK;
}

void app_coarse_free(app_coarse *c)
{
  free(c->block);
  free(c->values);
  free(c->sqrt_degree);
  memset(c, 0, sizeof(*c));
}

/* The coarse block (cols columns of cw x ch) in the fine grid of w x h: v = u / D_c^1/2 (into
 * v_c), bilinear, times D^1/2 (into out). */
static int lift(const float *u, int cols, const double *sd_c, int cw, int ch, const double *sd,
                int w, int h, float *v_c, float *out)
{
  const size_t nc = (size_t)cw * (size_t)ch, n = (size_t)w * (size_t)h;
  int status;
#pragma omp parallel for collapse(2) schedule(static)
  for (int v = 0; v < cols; v++)
    for (size_t i = 0; i < nc; i++) {
      const size_t e = (size_t)v * nc + i;
      v_c[e] = sd_c[i] > 0.0 ? (float)(u[e] / sd_c[i]) : 0.0f;
    }
  status = app_upsample_fields(v_c, cols, cw, ch, w, h, out);
  if (status != DSG_OK) {
    return status;
  }
  /* in chunks handed out as threads come free: a core busy with other work (on the H200 machine,
   * for a while after the forest's device work) delays one chunk, not a thread's whole share */
#pragma omp parallel for collapse(2) schedule(dynamic, 16384)
  for (int v = 0; v < cols; v++)
    for (size_t i = 0; i < n; i++)
      out[(size_t)v * n + i] = (float)(out[(size_t)v * n + i] * sd[i]);
  return DSG_OK;
}

/* The options a coarse solve depends on beyond the problem's own: a solve made ahead of time is
 * used only by a solve of the same ones. */
static void coarse_key(const dsg_options *opt, app_coarse *c)
{
  c->nev = opt->nev;
  c->ncv = opt->ncv;
  c->max_iter = opt->max_iter;
  c->seed = opt->seed;
  c->tol = app_tol(opt);
}

int app_coarse_matches(const app_coarse *c, const dsg_options *opt)
{
  app_coarse key;
  coarse_key(opt, &key);
  return c->block && c->nev == key.nev && c->ncv == key.ncv && c->max_iter == key.max_iter &&
         c->seed == key.seed && c->tol == key.tol;
}

int app_coarse_solve(const dsg_image *coarse, const dsg_options *opt, app_coarse *out)
{
  const double t0 = dsg_seconds();
  dsg_options copt = *opt;
  dsg_problem *cp = NULL;
  spmv_matvec *mv = NULL;
  const eig_solver *solver = NULL;
  eig_options eo;
  eig_result eig;
  int status;

  memset(out, 0, sizeof(*out));
  memset(&eig, 0, sizeof(eig));
  coarse_key(opt, out);
  copt.progress = NULL;
  copt.log = NULL;
  copt.coarse_start = 0;
  copt.matvec = "cpu"; /* 1/25 of the pixels: the host's, beside the device's work */
  status = eig_solver_find("chfsi", &solver);
  if (status == DSG_OK)
    status = dsg_problem_create(coarse, &copt, &cp);
  if (status == DSG_OK)
    status = dsg_problem_matvec(cp, &copt, 1, &mv);
  if (status != DSG_OK)
    goto out;
  app_eig_options(&copt, &eo);
  /* a start needs less: APP_COARSE_TOL_SCALE times the tolerance */
  eo.tol = eo.tol * APP_COARSE_TOL_SCALE < 0.1 ? eo.tol * APP_COARSE_TOL_SCALE : 0.1;
  eo.max_iter = eo.max_iter < APP_COARSE_MAX_ITER ? eo.max_iter : APP_COARSE_MAX_ITER;
  eo.cancel = opt->cancel;
  eo.keep_block = 1;
  if (!opt->keep_specks)
    app_components_to_options(app_problem_components(cp), &eo);
  status = solver->solve(mv, &eo, &eig);
  if (status == DSG_ERR_NOCONV) /* a start need not have converged */
    status = DSG_OK;
  if (status != DSG_OK || !eig.block)
    goto out;
  const size_t nc = (size_t)coarse->width * (size_t)coarse->height;
  out->sqrt_degree = malloc(nc * sizeof(*out->sqrt_degree));
  if (!out->sqrt_degree) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a coarse problem's degrees");
    goto out;
  }
  memcpy(out->sqrt_degree, app_problem_sqrt_degree(cp), nc * sizeof(*out->sqrt_degree));
  out->block = eig.block;
  eig.block = NULL;
  out->values = eig.block_values;
  eig.block_values = NULL;
  out->cols = eig.block_cols;
  out->width = coarse->width;
  out->height = coarse->height;
  out->products = eig.matvecs;
out:
  if (status != DSG_OK)
    app_coarse_free(out);
  out->seconds = dsg_seconds() - t0; /* on a failure too: the solve's clock counts it */
  eig_result_free(&eig);
  spmv_matvec_destroy(mv);
  dsg_problem_destroy(cp);
  return status;
}

int app_coarse_lift(app_coarse *c, const dsg_problem *fine)
{
  const double t0 = dsg_seconds();
  int width, height, status;
  float *block = NULL, *v_c = NULL;
  app_problem_size(fine, &width, &height);
  const size_t n = (size_t)width * (size_t)height;
  block = malloc((size_t)c->cols * n * sizeof(*block));
  v_c = malloc((size_t)c->cols * (size_t)c->width * (size_t)c->height * sizeof(*v_c));
  if (!block || !v_c)
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a start block of %d x %zu floats",
                           c->cols, n);
  else
    status = lift(c->block, c->cols, c->sqrt_degree, c->width, c->height,
                  app_problem_sqrt_degree(fine), width, height, v_c, block);
  free(v_c);
  free(c->block);
  free(c->sqrt_degree);
  c->sqrt_degree = NULL;
  c->block = status == DSG_OK ? block : NULL;
  if (status != DSG_OK) {
    free(block);
    free(c->values);
    c->values = NULL;
    c->cols = 0;
  }
  c->seconds += dsg_seconds() - t0;
  return status;
}

int app_coarse_start(const dsg_image *coarse, const dsg_options *opt, const dsg_problem *fine,
                     app_coarse *out)
{
  int status = app_coarse_solve(coarse, opt, out);
  if (status == DSG_OK)
    status = app_coarse_lift(out, fine);
  return status;
}

/* ---- a coarse solve made ahead of its run (dsg_presolve) ---- */

/* Every option a run's problem or its coarse solve may depend on, in one string: a solve made
 * ahead is taken only by a run whose string is the same (the device's options and the callbacks
 * choose nothing of it: the coarse problem is the host's). */
static void ahead_key(const dsg_options *o, char *key, size_t len)
{
#define STR(s) ((s) ? (s) : "-")
  int at = snprintf(
      key, len,
      "k%d s%llu r%d g%s w%.17g m%d W%.17g F%.17g A%.17g N%.17g t%.17g p%lld a%s R%d i%.17g x%.17g "
      "c%.17g K%d n%d v%d T%.17g I%d S%s C%d ks",
      o->k, (unsigned long long)o->seed, o->restarts, STR(o->grouping), o->spectral_weight,
      o->min_region, o->region_weight, o->forest_weight, o->arc_weight, o->net_weight, o->threshold,
      o->work_pixels, STR(o->affinity), o->radius, o->sigma_i, o->sigma_x, o->sigma_c,
      o->keep_specks, o->nev, o->ncv, app_tol(o), o->max_iter, STR(o->solver), o->coarse_start);
#undef STR
  for (int i = 0; i < o->nks && o->ks && at > 0 && (size_t)at < len; i++)
    at += snprintf(key + at, len - (size_t)at, " %d", o->ks[i]);
}

static pthread_mutex_t ahead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  dsg_image img;  /* the coarse image it was solved from */
  char key[1024]; /* ahead_key of its options */
  app_coarse out; /* its solve (block NULL: none kept) */
} ahead;

void app_coarse_ahead_put(dsg_image *coarse, const dsg_options *opt, app_coarse *c)
{
  pthread_mutex_lock(&ahead_lock);
  dsg_image_free(&ahead.img);
  app_coarse_free(&ahead.out);
  ahead.img = *coarse;
  ahead.out = *c;
  ahead_key(opt, ahead.key, sizeof(ahead.key));
  pthread_mutex_unlock(&ahead_lock);
  memset(coarse, 0, sizeof(*coarse));
  memset(c, 0, sizeof(*c));
}

int app_coarse_ahead_take(const dsg_image *coarse, const dsg_options *opt, app_coarse *out)
{
  char key[sizeof(ahead.key)];
  int taken = 0;
  ahead_key(opt, key, sizeof(key));
  pthread_mutex_lock(&ahead_lock);
  if (ahead.out.block && app_image_same(&ahead.img, coarse) && strcmp(ahead.key, key) == 0) {
    *out = ahead.out;
    memset(&ahead.out, 0, sizeof(ahead.out));
    dsg_image_free(&ahead.img);
    taken = 1;
  }
  pthread_mutex_unlock(&ahead_lock);
  return taken;
}
