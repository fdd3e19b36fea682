/* The recipe behind dsg_segment: a problem (features -> affinity -> components), solved on a
 * backend with the speck carving rounds, then grouped (embedding -> k-means). The command line,
 * bench, the tests and the Python package all run it through these functions. */
#include "diaseg_internal.h"

#include <limits.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define APP_SPECK_ROUNDS 3 /* solves at most: the first and two after carving specks */

struct dsg_problem {
  int width, height;
  spmv_dia *N;
  double *sqrt_degree;
  app_components comps;
  const app_cue *cue;
  double t_affinity, t_components, t_contours;
  double t_start;        /* dsg_seconds() when it was created: the progress reports' elapsed_s */
  float *contours;       /* the boundary detector's strength when the cue uses it, else NULL */
  float *soft;           /* the same before thinning (the hierarchy's boundary map) */
  int forest;            /* the contour cue's detector is the forest (no orientations) */
  float *forest_map;     /* the forest's map before thinning, which joins gPb in the hierarchy's
                          * map (uses_forest_map); else NULL */
  float *oriented;       /* the detector's combination at each orientation, when the spectral term
                          * joins it (gPb); else NULL */
  unsigned char *bins;   /* the channels' bins (app_contour_bins) for the hierarchy's region cue,
                          * when it is asked for (uses_region_cue); else NULL */
  dsg_image pixels;      /* the image's copy for the boundary network (uses_net); else empty */
  dsg_image coarse;      /* the image shrunk for chfsi's coarse start (coarse.c), when asked */
  app_coarse early;      /* its solve, made beside the problem's making (coarse_job), if any */
  spmv_cl_image *device; /* the device for the grouping (gPb, k-means): the detector's, kept;
                          * for k-means of a cue without contours the run's (NULL: the C path) */
  app_arc_record
      *arc_record; /* set by app_problem_record_arcs (tests/bsds/arc_data.c), else NULL */
  float *net_record; /* set by app_problem_record_net (tests/bsds/net_data.c), else NULL */
};

void app_problem_record_arcs(dsg_problem *p, app_arc_record *rec) { p->arc_record = rec; }
void app_problem_record_net(dsg_problem *p, float *x) { p->net_record = x; }

void app_problem_size(const dsg_problem *p, int *width, int *height)
{
  *width = p->width;
  *height = p->height;
}
const app_components *app_problem_components(const dsg_problem *p) { return &p->comps; }
const double *app_problem_sqrt_degree(const dsg_problem *p) { return p->sqrt_degree; }
spmv_cl_image *app_problem_device(const dsg_problem *p) { return p->device; }

const char *dsg_version(void) { return DIASEG_VERSION; }

void dsg_options_init(dsg_options *opt)
{
  memset(opt, 0, sizeof(*opt));
  opt->k = DSG_K_AUTO;
  opt->seed = 1;
  opt->restarts = 8;
  opt->affinity = "contour";
  opt->detector = "auto";
  opt->radius = 5;
  opt->sigma_i = 0.1;
  opt->sigma_x = 4.0;
  opt->sigma_c = 0.1;
  opt->grouping = "hierarchy";
  opt->spectral_weight = DSG_SPECTRAL_WEIGHT;
  opt->region_weight = DSG_REGION_WEIGHT;
  opt->forest_weight = DSG_FOREST_WEIGHT;
  opt->arc_weight = DSG_ARC_WEIGHT;
  opt->net_weight = DSG_NET_WEIGHT;
  opt->work_pixels = DSG_WORK_PIXELS;
  opt->nev = 16;
  opt->ncv = 0;
  opt->tol = DSG_TOL_AUTO;
  opt->max_iter = 1000;
  opt->solver = "auto";
  opt->coarse_start = 1;
  opt->matvec = "auto";
}

/* tol in [DSG_MIN_TOL, 1): below the floor the float32 vectors cannot show the accuracy asked
 * for, and a solver would still call its pairs converged (diaseg.h). */
static int check_tol(const dsg_options *opt)
{
  if (opt->tol > 0.0 && opt->tol < DSG_MIN_TOL)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("tol") " %g is below %g, the smallest tolerance diaseg "
                                          "honours: its eigenvectors are float32, whose residuals "
                                          "|N u - lambda u| measure up to ~3e-7 |lambda| however "
                                          "long the solve",
                         opt->tol, DSG_MIN_TOL);
  if (opt->tol != DSG_TOL_AUTO && !(opt->tol >= DSG_MIN_TOL && opt->tol < 1.0))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("tol") " %g is out of range: it must be in [%g, 1) (0: "
                                          "automatic)",
                         opt->tol, DSG_MIN_TOL);
  return DSG_OK;
}

/* Whether opt's run groups by the hierarchy (some k, a list or auto; not eigenpairs alone). */
static int hierarchy_labels(const dsg_options *opt)
{
  return app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY &&
         (opt->k != 0 || opt->nks > 0);
}

double app_tol(const dsg_options *opt)
{
  if (opt->tol != DSG_TOL_AUTO)
    return opt->tol;
  /* the hierarchy's spectral term was fit and measured at DSG_TOL_HIERARCHY (docs/QUALITY.md) */
  if (hierarchy_labels(opt))
    return DSG_TOL_HIERARCHY;
  return DSG_TOL_VECTORS;
}

const char *app_solver(const dsg_options *opt)
{
  if (!opt->solver || strcmp(opt->solver, "auto") != 0)
    return opt->solver; /* NULL: eig_solver_find says what is wrong */
  /* gPb's spectral term from chfsi's coarse-started vectors: the top of the spectrum's cluster
   * near 1, where Lanczos at DSG_TOL_HIERARCHY stops at mixtures from lower in it; better on every
   * BSDS500 train measure and a fraction of the solve (docs/QUALITY.md) */
  if (hierarchy_labels(opt))
    return "chfsi";
  return "lanczos";
}

const char *app_solver_at(const dsg_options *opt, int width, int height)
{
  const char *name = app_solver(opt);
  int cw, ch;
  if (opt->solver && strcmp(opt->solver, "auto") == 0 && name && strcmp(name, "chfsi") == 0 &&
      width > 0 && height > 0 && !app_coarse_size(opt, width, height, &cw, &ch))
    return "lanczos";
  return name;
}

int app_option_ks(const dsg_options *opt, int *ks)
{
  if (opt->nks > 0 && opt->ks) {
    const int count = opt->nks < DSG_MAX_K ? opt->nks : DSG_MAX_K; /* dsg_options_check: <= */
    memcpy(ks, opt->ks, (size_t)count * sizeof(*ks));
    return count;
  }
  ks[0] = opt->k;
  return opt->k > 0 || opt->k == DSG_K_AUTO;
}

/* k, or every k of the list: in range, within nev for k-means (a cut of the hierarchy needs no
 * eigenvector per segment), none twice (each k names its own outputs in
 * the callers, so a repeated one is a mistake, not a request). */
static int check_ks(const dsg_options *opt)
{
  int max_k = 0, max_at = 0;
  const int top =
      app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY ? DSG_MAX_CUT : APP_MAX_EMBED;
  if (opt->nks == 0) {
    if (opt->k == DSG_K_AUTO)
      return DSG_OK;
    if (opt->k < 0 || opt->k > top)
      return dsg_error_set(DSG_ERR_INVALID,
                           DSG_PARAM("k") " %d is out of range: it must be in [0, %d] (0: no "
                                          "grouping; %d segments at most for k-means, %d regions "
                                          "for a cut of the hierarchy) or auto",
                           opt->k, top, APP_MAX_EMBED, DSG_MAX_CUT);
    if (opt->k > opt->nev && app_grouping_find(opt->grouping) == APP_GROUPING_KMEANS)
      return dsg_error_set(DSG_ERR_INVALID,
                           DSG_PARAM("k") " %d needs k <= nev: raise " DSG_PARAM("nev") " to %d",
                           opt->k, opt->k);
    return DSG_OK;
  }
  if (opt->nks < 0 || opt->nks > APP_MAX_EMBED || !opt->ks)
    return dsg_error_set(DSG_ERR_INVALID,
                         "a list of " DSG_PARAM("k") " has %d values%s: it must hold 1 to %d "
                                                     "distinct values",
                         opt->nks, opt->ks ? "" : " and no array", APP_MAX_EMBED);
  for (int i = 0; i < opt->nks; i++) {
    const int k = opt->ks[i];
    if (k < 1 || k > top)
      return dsg_error_set(DSG_ERR_INVALID,
                           DSG_PARAM("k") " %d (value %d of the list) is out of range: each k "
                                          "of a list must be in [1, %d] (%d for k-means, %d "
                                          "for a cut of the hierarchy)",
                           k, i + 1, top, APP_MAX_EMBED, DSG_MAX_CUT);
    for (int j = 0; j < i; j++)
      if (opt->ks[j] == k)
        return dsg_error_set(DSG_ERR_INVALID,
                             DSG_PARAM("k") " %d is in the list twice (values %d and %d): give "
                                            "each k once",
                             k, j + 1, i + 1);
    if (k > max_k) {
      max_k = k;
      max_at = i + 1;
    }
  }
  if (max_k > opt->nev && app_grouping_find(opt->grouping) == APP_GROUPING_KMEANS)
    return dsg_error_set(
        DSG_ERR_INVALID,
        DSG_PARAM("k") " %d (value %d of the list) needs k <= nev: raise " DSG_PARAM(
            "nev") " to %d",
        max_k, max_at, max_k);
  return DSG_OK;
}

/* The groupings (dsg_options.grouping), in the order of enum app_grouping_kind. */
static const char *const groupings[] = {"hierarchy", "kmeans"};

int dsg_grouping_count(void) { return (int)(sizeof(groupings) / sizeof(groupings[0])); }

const char *dsg_grouping_name(int i)
{
  return i >= 0 && i < dsg_grouping_count() ? groupings[i] : NULL;
}

int app_grouping_find(const char *name)
{
  for (int i = 0; name && i < (int)(sizeof(groupings) / sizeof(groupings[0])); i++)
    if (strcmp(name, groupings[i]) == 0)
      return i;
  return -1;
}

int dsg_options_check(const dsg_options *opt)
{
  const app_cue *cue;
  const eig_solver *solver;
  spmv_kernel kernel;
  const app_detector *det;
  int status = app_cue_find(opt->affinity, &cue);
  if (status == DSG_OK)
    status = app_detector_find(opt->detector, 0, &det);
  if (status == DSG_OK && !(opt->solver && strcmp(opt->solver, "auto") == 0))
    status = eig_solver_find(opt->solver, &solver);
  if (status == DSG_OK)
    status = app_backend_check(opt->matvec);
  if (status == DSG_OK && opt->kernel && *opt->kernel)
    status = spmv_kernel_parse(opt->kernel, &kernel);
  if (status == DSG_OK)
    status = check_ks(opt);
  if (status != DSG_OK)
    return status;
  if (opt->restarts < 1)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("restarts") " %d is out of range: it must be >= 1",
                         opt->restarts);
  if (app_grouping_find(opt->grouping) < 0)
    return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("grouping") " '%s' is not one of %s, %s",
                         opt->grouping ? opt->grouping : "", groupings[0], groupings[1]);
  if (!isfinite(opt->sigma_c) || !(opt->sigma_c > 0.0))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("sigma_c") " %g is invalid: it must be finite and > 0",
                         opt->sigma_c);
  if (!isfinite(opt->threshold) || opt->threshold < 0.0)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("threshold") " %g is invalid: it must be finite and >= 0 (0: "
                                                "cut at k regions)",
                         opt->threshold);
  if (opt->threshold > 0.0 && app_grouping_find(opt->grouping) != APP_GROUPING_HIERARCHY)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("threshold") " %g cuts a hierarchy: it needs " DSG_PARAM(
                             "grouping") " hierarchy, not '%s'",
                         opt->threshold, opt->grouping ? opt->grouping : "");
  if (opt->min_region < 0)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("min_region") " %d is out of range: it must be >= 0 (0: "
                                                 "automatic)",
                         opt->min_region);
  if (app_work_pixels_check(opt->work_pixels) != DSG_OK)
    return DSG_ERR_INVALID;
  if (!isfinite(opt->spectral_weight) || opt->spectral_weight < 0.0)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("spectral_weight") " %g is invalid: it must be finite and >= 0",
                         opt->spectral_weight);
  if (!isfinite(opt->region_weight) || opt->region_weight < 0.0)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("region_weight") " %g is invalid: it must be finite and >= 0",
                         opt->region_weight);
  if (!isfinite(opt->forest_weight) || opt->forest_weight < 0.0)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("forest_weight") " %g is invalid: it must be finite and >= 0",
                         opt->forest_weight);
  if (!(opt->arc_weight >= 0.0 && opt->arc_weight <= 1.0))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("arc_weight") " %g is invalid: it must be in [0, 1]",
                         opt->arc_weight);
  if (!(opt->net_weight >= 0.0 && opt->net_weight <= 1.0))
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("net_weight") " %g is invalid: it must be in [0, 1]",
                         opt->net_weight);
  return check_tol(opt);
}

int dsg_check_size(const dsg_options *opt, int width, int height)
{
  if (width > 0 && height > 0) /* the size the solve runs at */
    app_work_size(width, height, opt->work_pixels, &width, &height);
  const size_t n = (size_t)(width > 0 ? width : 0) * (size_t)(height > 0 ? height : 0);
  if (n < 2)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the image is %d x %d = %zu pixel, too small: it needs at least 2 "
                         "pixels (" DSG_PARAM("resize") " can enlarge it)",
                         width, height, n);
  if ((size_t)opt->nev >= n)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("nev") " %d is out of range for a %d x %d image: it must "
                                          "satisfy 1 <= nev < %zu pixels",
                         opt->nev, width, height, n);
  if (opt->ncv > 0 && (size_t)opt->ncv > n)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("ncv") " %d is out of range: it must be <= %zu pixels", opt->ncv,
                         n);
  return DSG_OK;
}

static int check_cancel(const dsg_options *opt)
{
  if (opt->cancel && *opt->cancel)
    return dsg_error_set(DSG_ERR_INTERRUPTED, "interrupted by signal %d; no output was written",
                         (int)*opt->cancel);
  return DSG_OK;
}

/* ---- progress (dsg_progress) ---- */

/* The stages of a run, in order. */
enum { STAGE_CONTOURS, STAGE_AFFINITY, STAGE_SETUP, STAGE_SOLVE, STAGE_GROUPING, STAGE_COUNT };
static const char *const stage_names[STAGE_COUNT] = {"contours", "affinity", "setup", "solve",
                                                     "grouping"};

/* A run's reports to opt->progress: the stage, and the solve's counts kept monotone across
 * the speck rounds. */
typedef struct app_progress {
  const dsg_options *opt;
  dsg_progress rec;
  double t_run, t_stage;
  int no_contours;      /* the cue has no contours: no such stage */
  int grouping;         /* k > 0 (or a list, or a threshold): a grouping stage */
  long products_before; /* the products of the earlier speck rounds */
} app_progress;

static void progress_init(app_progress *pr, const dsg_options *opt, const app_cue *cue,
                          double t_run)
{
  int ks[DSG_MAX_K];
  memset(pr, 0, sizeof(*pr));
  pr->grouping = app_option_ks(opt, ks) > 0 || opt->threshold > 0.0;
  pr->opt = opt;
  pr->t_run = t_run;
  pr->t_stage = t_run;
  pr->no_contours = !cue->contours;
  pr->rec.stage = stage_names[pr->no_contours ? STAGE_AFFINITY : STAGE_CONTOURS];
  pr->rec.stage_count = STAGE_COUNT - pr->no_contours - !pr->grouping;
  pr->rec.products_estimate = -1;
  pr->rec.wanted = opt->nev;
  pr->rec.eta_s = -1.0;
}

static void progress_send(app_progress *pr)
{
  const double now = dsg_seconds();
  pr->rec.elapsed_s = now - pr->t_run;
  pr->rec.stage_elapsed_s = now - pr->t_stage;
  pr->opt->progress(pr->opt->progress_data, &pr->rec);
}

/* Stage `stage` starts (pr NULL: no reports). */
static void progress_stage(app_progress *pr, int stage)
{
  if (!pr || !pr->opt->progress)
    return;
  pr->t_stage = dsg_seconds();
  pr->rec.stage = stage_names[stage];
  pr->rec.stage_index = stage - (stage > STAGE_CONTOURS ? pr->no_contours : 0);
  pr->rec.eta_s = -1.0;
  progress_send(pr);
}

/* An eigensolve's report as the run's: the earlier speck rounds' products added, the converged
 * count the most seen in the run, the ETA from the products per second of the stage so far. */
static void progress_solve(void *data, const eig_progress *e)
{
  app_progress *pr = data;
  const long products = pr->products_before + e->matvecs;
  const double stage_s = dsg_seconds() - pr->t_stage;
  if (products > pr->rec.products)
    pr->rec.products = products;
  if (e->nconv > pr->rec.converged)
    pr->rec.converged = e->nconv < pr->rec.wanted ? e->nconv : pr->rec.wanted;
  pr->rec.products_estimate =
      e->matvecs_estimate < 0 ? -1 : pr->products_before + e->matvecs_estimate;
  if (pr->rec.products_estimate >= 0 && pr->rec.products_estimate < pr->rec.products)
    pr->rec.products_estimate = pr->rec.products;
  pr->rec.eta_s = pr->rec.products_estimate >= 0 && pr->rec.products > 0
                      ? (double)(pr->rec.products_estimate - pr->rec.products) * stage_s /
                            (double)pr->rec.products
                      : -1.0;
  progress_send(pr);
}

static int check_image(const dsg_image *img)
{
  if (!img || !img->pixels || img->width < 1 || img->height < 1 || img->channels < 1 ||
      img->channels > 4)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the image is %d x %d with %d channels: it needs "
                         "pixels, a positive size and 1 to 4 channels",
                         img ? img->width : 0, img ? img->height : 0, img ? img->channels : 0);
  return DSG_OK;
}

/* Whether the spectral term joins the detector (gPb) under opt: a contour cue, a positive
 * spectral weight and the hierarchy. It decides the detector's weights too (app_contour_local
 * then, else app_contour_alone), so that dsg_affinity builds the matrix dsg_segment solves. */
static int uses_gpb(const dsg_options *opt, const app_cue *cue)
{
  return cue->contours && opt->spectral_weight > 0.0 &&
         app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY;
}

/* Whether the hierarchy's merges read the regions' colour and texture (the region cue): the
 * contour cues, whose detector makes the channels' bins, with a positive region weight. */
static int uses_region_cue(const dsg_options *opt, const app_cue *cue)
{
  return cue->contours && opt->region_weight > 0.0 &&
         app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY;
}

/* Whether the detector is the forest (whose map has no orientations: its gPb is made apart). */
static int uses_forest(const dsg_options *opt)
{
  const app_detector *det;
  return app_detector_find(opt->detector, 0, &det) == DSG_OK && det->kind == APP_DETECTOR_FOREST;
}

/* Whether the forest's map joins the gradients' gPb in the hierarchy's map (forest_weight): the
 * contour cues' hierarchy with the gradients as the detector. */
static int uses_forest_map(const dsg_options *opt, const app_cue *cue)
{
  return cue->contours && opt->forest_weight > 0.0 && !uses_forest(opt) &&
         app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY;
}

/* Whether the boundary network refines the hierarchy's map (net_weight): it reads the forest's
 * map, so where that joins gPb. */
static int uses_net(const dsg_options *opt, const app_cue *cue)
{
  return uses_forest_map(opt, cue) && opt->net_weight > 0.0;
}

int app_problem_uses_net(const dsg_problem *p, const dsg_options *opt)
{
  return uses_net(opt, p->cue);
}

double dsg_options_auto_level(const dsg_options *opt)
{
  const app_cue *cue;
  if (app_cue_find(opt->affinity, &cue) != DSG_OK)
    return APP_PLAIN_LEVEL;
  if (uses_net(opt, cue))
    return uses_region_cue(opt, cue) ? DSG_AUTO_THRESHOLD : APP_NET_PLAIN_LEVEL;
  if (uses_forest_map(opt, cue) && uses_region_cue(opt, cue))
    return opt->arc_weight > 0.0 ? APP_ARC_CUE_LEVEL : APP_FOREST_MAP_CUE_LEVEL;
  if (uses_forest_map(opt, cue))
    return APP_FOREST_MAP_PLAIN_LEVEL;
  if (uses_region_cue(opt, cue))
    return APP_CUE_LEVEL;
  return cue->contours && uses_forest(opt) ? APP_FOREST_PLAIN_LEVEL : APP_PLAIN_LEVEL;
}

/* The link masks the components are found from (app_components_from_links): where N was made
 * on the device, its links are made there too and N's values stay there (links[0] above
 * APP_SPECK_THRESHOLD, links[1] above APP_COMPONENT_THRESHOLD). */
static int device_links(spmv_cl_image *im, spmv_dia *N, spmv_links links[2])
{
  int status = spmv_cl_links(im, N, APP_SPECK_THRESHOLD, &links[0]);
  if (status == DSG_OK)
    status = spmv_cl_links(im, N, APP_COMPONENT_THRESHOLD, &links[1]);
  return status;
}

/* Features, the contours if the cue takes them, and N of img (the affinity alone: no
 * components). *contours (optional) receives the detector's strength map (n floats, NULL for a
 * cue without contours), *soft and *oriented (optional) the same before thinning and at every
 * orientation, *bins (optional) the channels' bins (app_contour_bins, 4 n bytes; NULL for a cue
 * without contours), and *t_contours its seconds. The detector combines its parts with gPb's local
 * weights where the spectral term joins it (uses_gpb), else with its own (mPb, as dsg_contours).
 * links (optional): where N is made on a device, its values stay there, and links gets the
 * masks of its components (device_links); else they stay empty (count 0) and N is on the host.
 * device (optional): the device the image stages ran on, handed over (NULL: the C path).
 * forest (optional): the forest's map before thinning as well (a contour cue's, on the same
 * device), for the hierarchy's map (uses_forest_map). */
static int build_affinity(const dsg_image *img, const dsg_options *opt, const app_cue *cue,
                          spmv_dia **N, double **sqrt_degree, float **contours, float **soft,
                          float **oriented, unsigned char **bins, float **forest,
                          double *t_contours, spmv_links links[2], app_progress *pr,
                          spmv_cl_image **device)
{
  float *soft_map = NULL, *oriented_map = NULL, *forest_map = NULL;
  unsigned char *bin_map = NULL;
  app_affinity_params ap = {opt->radius, opt->sigma_i, opt->sigma_x, NULL, opt->sigma_c, NULL};
  float *features = NULL, *edges = NULL;
  int nfeat = 0, status = DSG_OK;
  double t0 = dsg_seconds();
  spmv_cl_image *im = NULL;
  const app_detector *det;
  const int fallback = strcmp(opt->matvec, "auto") == 0; /* "opencl": failures are errors */
  if (contours)
    *contours = NULL;
  if (soft)
    *soft = NULL;
  if (oriented)
    *oriented = NULL;
  if (bins)
    *bins = NULL;
  if (forest)
    *forest = NULL;
  if (t_contours)
    *t_contours = 0.0;
  if (device)
    *device = NULL;
  progress_stage(pr, cue->contours ? STAGE_CONTOURS : STAGE_AFFINITY);
  /* the image stages go to the device for the contour cues, whose detector is worth it */
  if (cue->contours)
    status = app_image_device(opt, &im); /* NULL: the C path */
  if (status != DSG_OK)
    return status;
  if (cue->contours) {
    const size_t n = (size_t)img->width * (size_t)img->height;
    edges = malloc(n * sizeof(*edges));
    soft_map = soft ? malloc(n * sizeof(*soft_map)) : NULL;
    oriented_map = oriented ? malloc(n * APP_CONTOUR_ORIENTATIONS * sizeof(*oriented_map)) : NULL;
    bin_map = bins ? malloc(n * APP_CONTOUR_CHANNELS) : NULL;
    forest_map = forest ? malloc(n * sizeof(*forest_map)) : NULL;
    if (!edges || (soft && !soft_map) || (oriented && !oriented_map) || (bins && !bin_map) ||
        (forest && !forest_map))
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of a %d x %d image",
                             img->width, img->height);
    else if ((status = app_detector_find(opt->detector, 0, &det)) == DSG_OK) {
      if (det->kind == APP_DETECTOR_FOREST) /* the forest's crests are higher */
        ap.sigma_c *= APP_FOREST_SIGMA_C;
      status = app_contours_on(&im, opt, det, img,
                               uses_gpb(opt, cue) ? &app_contour_local : &app_contour_alone, edges,
                               NULL, soft_map, oriented_map, bin_map);
    }
    if (status == DSG_OK && forest) { /* the forest's map beside the detector, where it ran */
      const app_detector *fd;
      status = app_detector_find("forest", 0, &fd);
      if (status == DSG_OK)
        status = app_contours_on(&im, opt, fd, img, NULL, NULL, NULL, forest_map, NULL, NULL);
    }
    ap.contours = edges;
    if (t_contours)
      *t_contours = dsg_seconds() - t0;
    if (status == DSG_OK)
      progress_stage(pr, STAGE_AFFINITY);
  }
  if (status == DSG_OK)
    status = app_features(img, cue, &features, &nfeat);
  if (status == DSG_OK)
    status = check_cancel(opt); /* between the stages: the features, W and N, the components */
  ap.device = im;
  if (status == DSG_OK)
    status = app_affinity_build_cancel(img->width, img->height, features, nfeat, &ap, opt->cancel,
                                       N, sqrt_degree);
  if (status == DSG_OK && !(*N)->values && !links) {
    status = spmv_dia_host(*N); /* the caller wants N itself, on the host */
    spmv_dia_drop_device(*N);   /* and the device's memory back */
  }
  if (status == DSG_OK && !(*N)->values) {
    status = device_links(im, *N, links);
    if (status != DSG_OK && status != DSG_ERR_INTERRUPTED && fallback) {
      /* auto: the components from the host's copy instead */
      app_log(opt, DSG_LOG_WARNING, "the components' links failed on OpenCL (%s); N is read back",
              dsg_error_raw());
      spmv_links_free(&links[0]);
      spmv_links_free(&links[1]);
      status = spmv_dia_host(*N);
    }
  }
  if (im && status != DSG_OK && status != DSG_ERR_INTERRUPTED && status != DSG_ERR_NOMEM &&
      status != DSG_ERR_INVALID && fallback) {
    app_log(opt, DSG_LOG_WARNING, "the affinity failed on OpenCL (%s); taking the C path",
            dsg_error_raw());
    ap.device = NULL;
    spmv_dia_destroy(*N); /* made on the device, where its links or its read-back failed */
    *N = NULL;
    if (sqrt_degree) {
      free(*sqrt_degree);
      *sqrt_degree = NULL;
    }
    status = app_affinity_build_cancel(img->width, img->height, features, nfeat, &ap, opt->cancel,
                                       N, sqrt_degree);
  }
  if (status == DSG_OK && device && ap.device) {
    *device = im; /* the image stages stayed on the device: gPb goes there too */
    im = NULL;
  }
  spmv_cl_image_destroy(im);
  free(features);
  if (status == DSG_OK)
    status = check_cancel(opt);
  if (status == DSG_OK && contours) {
    *contours = edges;
    edges = NULL;
  }
  if (status == DSG_OK && soft) {
    *soft = soft_map;
    soft_map = NULL;
  }
  if (status == DSG_OK && oriented) {
    *oriented = oriented_map;
    oriented_map = NULL;
  }
  if (status == DSG_OK && bins) {
    *bins = bin_map;
    bin_map = NULL;
  }
  if (status == DSG_OK && forest) {
    *forest = forest_map;
    forest_map = NULL;
  }
  free(edges);
  free(soft_map);
  free(oriented_map);
  free(bin_map);
  free(forest_map);
  return status;
}

void dsg_problem_destroy(dsg_problem *p)
{
  if (!p)
    return;
  spmv_dia_destroy(p->N);
  free(p->sqrt_degree);
  free(p->contours);
  free(p->soft);
  free(p->oriented);
  free(p->bins);
  free(p->forest_map);
  dsg_image_free(&p->pixels);
  app_components_free(&p->comps);
  dsg_image_free(&p->coarse);
  app_coarse_free(&p->early);
  spmv_cl_image_destroy(p->device);
  free(p);
}

/* chfsi's coarse problem solved on a worker thread while the problem is made: it needs only the
 * shrunk image, and where the detector and the affinity run on a device the host is otherwise
 * waiting for it (for the device's stages, and for its opening where no dsg_prepare came
 * first: 0.25 s on the H200). On the C path the two would share the same cores, so it is solved
 * in the solve, as before. */
typedef struct coarse_job {
  const dsg_image *img;
  dsg_options opt; /* the caller's, valid until dsg_problem_create returns (it joins) */
  app_coarse out;
  pthread_t thread;
  int started;
} coarse_job;

static void *coarse_job_run(void *arg)
{
  coarse_job *job = arg;
  if (app_coarse_solve(job->img, &job->opt, &job->out) != DSG_OK)
    dsg_error_clear(); /* this thread's: the solve goes on from the random block */
  job->out.beside = 1;
  job->out.worker_seconds = job->out.seconds;
  return NULL;
}

static void coarse_job_start(coarse_job *job, const dsg_problem *p, const dsg_options *opt)
{
  memset(job, 0, sizeof(*job));
  /* the image stages take a device for the contour cues (build_affinity) */
  if (!p->coarse.pixels || !p->cue->contours ||
      strcmp(app_solver_at(opt, p->width, p->height), "chfsi") != 0 || !opt->matvec ||
      strcmp(opt->matvec, "cpu") == 0 ||
      (strcmp(opt->matvec, "auto") == 0 && !app_auto_has_gpu(opt)))
    return;
  job->img = &p->coarse;
  job->opt = *opt;
  job->started = pthread_create(&job->thread, NULL, coarse_job_run, job) == 0;
}

/* Waits for the job; its block goes to p when the problem is made (status DSG_OK). */
static void coarse_job_join(coarse_job *job, dsg_problem *p, int status)
{
  if (!job->started)
    return;
  const double t0 = dsg_seconds();
  pthread_join(job->thread, NULL);
  job->out.waited = dsg_seconds() - t0; /* part of the setup stage */
  job->started = 0;
  if (status == DSG_OK && p && job->out.block)
    p->early = job->out;
  else
    app_coarse_free(&job->out);
}

int dsg_problem_create(const dsg_image *img, const dsg_options *opt, dsg_problem **out)
{
  coarse_job job = {0};
  dsg_problem *p = NULL;
  double t0 = dsg_seconds();
  app_progress pr;
  spmv_links links[2]; /* N's links, where N stays on the device */
  int status;

  *out = NULL;
  memset(links, 0, sizeof(links));
  status = dsg_options_check(opt);
  if (status == DSG_OK)
    status = check_image(img);
  if (status == DSG_OK)
    status = dsg_check_size(opt, img->width, img->height);
  if (status != DSG_OK)
    return status;
  p = calloc(1, sizeof(*p));
  if (!p)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a problem");
  p->width = img->width;
  p->height = img->height;
  app_cue_find(opt->affinity, &p->cue);
  p->t_start = t0;
  progress_init(&pr, opt, p->cue, t0);
  status = app_coarse_image(img, opt, &p->coarse);
  if (status != DSG_OK)
    goto fail;
  /* a coarse solve made ahead of the run (dsg_presolve) is taken as the worker's would be */
  if (!p->coarse.pixels || !app_coarse_ahead_take(&p->coarse, opt, &p->early))
    coarse_job_start(&job, p, opt);
  /* the spectral term joins the detector's oriented combination (gPb) for the hierarchy */
  const int gpb = uses_gpb(opt, p->cue);
  p->forest = p->cue->contours && uses_forest(opt);
  /* the device the detector ran on stays for the grouping (gPb, k-means) */
  status = build_affinity(
      img, opt, p->cue, &p->N, &p->sqrt_degree, &p->contours, &p->soft,
      gpb && !p->forest ? &p->oriented : NULL, uses_region_cue(opt, p->cue) ? &p->bins : NULL,
      uses_forest_map(opt, p->cue) ? &p->forest_map : NULL, &p->t_contours, links, &pr, &p->device);
  /* the boundary network reads the colours after the solve */
  if (status == DSG_OK && uses_net(opt, p->cue))
    status = dsg_image_from_pixels(&p->pixels, img->width, img->height, img->channels, img->pixels);
  if (status != DSG_OK)
    goto fail;
  p->t_affinity = dsg_seconds() - t0;
  t0 = dsg_seconds();
  progress_stage(&pr, STAGE_SETUP);
  /* N on the host, or its links from the device where N stays */
  status = p->N->values
               ? app_components_find(p->N, p->sqrt_degree, &p->comps)
               : app_components_from_links(&links[0], &links[1], p->sqrt_degree, &p->comps);
  spmv_links_free(&links[0]);
  spmv_links_free(&links[1]);
  if (status == DSG_OK)
    status = check_cancel(opt);
  if (status == DSG_OK && !opt->keep_specks) {
    /* the groups are deflated: the solve needs the eigenvectors it does not get from them in
     * the space they leave */
    const int n = p->N->rows,
              from_groups = p->comps.significant < opt->nev ? p->comps.significant : opt->nev;
    if (n - p->comps.count < opt->nev - from_groups)
      status = dsg_error_set(DSG_ERR_INVALID,
                             "the affinity links too few pixels for %s %d: %zu of the %d pixels "
                             "are specks (joined to the rest only by edges N_ij <= 1e-4 with %s "
                             "%g %s %g); raise %s or %s, or add %s",
                             DSG_PARAM("nev"), opt->nev, p->comps.speck_pixels, n,
                             DSG_PARAM("sigma_i"), opt->sigma_i, DSG_PARAM("sigma_x"), opt->sigma_x,
                             DSG_PARAM("sigma_x"), DSG_PARAM("sigma_i"), DSG_PARAM("keep_specks"));
  }
  if (status != DSG_OK)
    goto fail;
  coarse_job_join(&job, p, status);
  p->t_components = dsg_seconds() - t0; /* with the wait for the worker: setup's */
  *out = p;
  return DSG_OK;
fail:
  coarse_job_join(&job, p, status);
  spmv_links_free(&links[0]);
  spmv_links_free(&links[1]);
  dsg_problem_destroy(p);
  return status;
}

int dsg_problem_dia(const dsg_problem *p, const struct spmv_dia **N)
{
  const int status = spmv_dia_host(p->N); /* read back where it stayed on the device */
  *N = status == DSG_OK ? p->N : NULL;
  return status;
}

int dsg_problem_matvec(dsg_problem *p, const dsg_options *opt, int solve, struct spmv_matvec **mv)
{
  const eig_solver *solver = NULL;
  int status = solve ? eig_solver_find(app_solver_at(opt, p->width, p->height), &solver) : DSG_OK;
  if (status == DSG_OK)
    status = app_matvec_create(opt, p->N, solver, mv);
  /* N's device copy (the OpenCL affinity's) has served: the product holds its own reference, and
   * the device is not kept busy with it after the product is gone */
  spmv_dia_drop_device(p->N);
  return status;
}

/* ---- results ---- */

void dsg_result_destroy(dsg_result *r)
{
  if (!r)
    return;
  free(r->sqrt_degree);
  free(r->offsets);
  free(r->contours);
  app_coarse_free(&r->coarse);
  app_hierarchy_free(r->hierarchy);
  free(r->hierarchy);
  eig_result_free(&r->eig);
  for (int g = 0; g < r->ngroups; g++)
    free(r->groups[g].labels);
  free(r);
}

/* Keeps the options, their strings copied (the caller's may not outlive the result), and the k
 * of the groupings: the list goes into r->groups, opt.k is its first k. region_cue: whether the
 * hierarchy reads the regions (a problem made without the cue's bins cannot: its region_weight
 * is kept as 0, and -k auto's level is the one without the cue); forest_map: whether the forest
 * joins its map (a problem made without the forest's map: forest_weight kept as 0, likewise);
 * net: whether the boundary network refines it (a problem made without its pixels: net_weight
 * kept as 0). */
static void keep_options(dsg_result *r, const dsg_options *opt, int region_cue, int forest_map,
                         int net)
{
  int ks[DSG_MAX_K];
  const char **fields[7] = {&r->opt.affinity,  &r->opt.solver, &r->opt.matvec,
                            &r->opt.cl_device, &r->opt.kernel, &r->opt.kernel_dir,
                            &r->opt.grouping};
  r->opt = *opt;
  r->opt.tol = app_tol(opt); /* the report says what was used */
  r->opt.cancel = NULL;
  r->opt.progress = NULL;
  r->opt.log = NULL;
  if (!region_cue)
    r->opt.region_weight = 0.0;
  if (!forest_map)
    r->opt.forest_weight = 0.0;
  if (!region_cue || !forest_map) /* the learnt strengths read both */
    r->opt.arc_weight = 0.0;
  if (!forest_map || !net) /* the network reads the forest's map */
    r->opt.net_weight = 0.0;
  r->ngroups = app_option_ks(opt, ks);
  if (opt->nks == 0 && opt->k == DSG_K_AUTO && opt->threshold == 0.0) {
    r->k_auto = 1;
    if (app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY)
      r->opt.threshold = dsg_options_auto_level(&r->opt); /* a level; k-means: group() */
  }
  if (r->opt.threshold > 0.0) { /* one cut of the hierarchy at a level: k 0 marks it */
    r->ngroups = 1;
    ks[0] = 0;
  }
  for (int g = 0; g < r->ngroups; g++)
    r->groups[g].k = ks[g];
  r->opt.k = r->ngroups > 0 ? ks[0] : 0;
  r->opt.ks = NULL;
  r->opt.nks = 0;
  for (int i = 0; i < 7; i++)
    if (*fields[i]) {
      snprintf(r->strings[i], sizeof(r->strings[i]), "%s", *fields[i]);
      *fields[i] = r->strings[i];
    }
}

/* Carves eigenvectors localised on fewer pixels than a speck out as speck groups: the vectors'
 * supports found in parallel, carved in the vectors' order. */
static int carve_localised(dsg_problem *p, const eig_result *eig, int *carved)
{
  const int n = p->N->rows, max_pixels = (int)app_min_support((size_t)n), nv = eig->nconv;
  int *pixels = malloc((size_t)(nv > 0 ? nv : 1) * (size_t)max_pixels * sizeof(*pixels));
  int *count = malloc((size_t)(nv > 0 ? nv : 1) * sizeof(*count)), status = DSG_OK;
  *carved = 0;
  if (!pixels || !count) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d x %d pixel indices", nv, max_pixels);
    goto out;
  }
#pragma omp parallel for schedule(dynamic, 1)
  for (int j = 0; j < nv; j++)
    count[j] = app_localised_support(eig, j, max_pixels, pixels + (size_t)j * max_pixels);
  for (int j = 0; j < nv && status == DSG_OK; j++)
    if (count[j] > 0 && count[j] < max_pixels) {
      status = app_components_carve(&p->comps, p->sqrt_degree, n, pixels + (size_t)j * max_pixels,
                                    count[j]);
      (*carved)++;
    }
out:
  free(pixels);
  free(count);
  return status;
}

static int solve(dsg_problem *p, const dsg_options *opt, const eig_solver *solver, spmv_matvec *mv,
                 dsg_result *r, app_progress *pr)
{
  eig_options eo;
  int status = DSG_OK, carved = 0;
  double t0 = dsg_seconds();
  int cw, ch;
  /* chfsi from the coarse problem's block (on every backend: its vectors are the top of the
   * cluster near 1 that gPb wants, docs/QUALITY.md); its time is part of the solve's */
  if (p->coarse.pixels && strcmp(solver->name, "chfsi") == 0 &&
      app_coarse_size(opt, p->width, p->height, &cw, &ch) && cw == p->coarse.width &&
      ch == p->coarse.height) {
    if (app_coarse_matches(&p->early, opt)) { /* solved beside the problem's making */
      r->coarse = p->early;
      memset(&p->early, 0, sizeof(p->early));
      r->coarse.seconds = 0.0; /* the solve waits for the lift alone */
      status = app_coarse_lift(&r->coarse, p);
    } else {
      status = app_coarse_start(&p->coarse, opt, p, &r->coarse);
    }
    if (status == DSG_ERR_INTERRUPTED)
      return status;
    if (status != DSG_OK) /* short of a start (memory, too few linked pixels): the random block */
      dsg_error_clear();
    status = DSG_OK;
  }
  eig_result before; /* the previous round's pairs, while a round after carving runs */
  memset(&before, 0, sizeof(before));
  for (int round = 0; round < APP_SPECK_ROUNDS; round++) {
    app_eig_options(opt, &eo);
    eo.start = r->coarse.block;
    eo.start_values = r->coarse.values;
    eo.start_cols = r->coarse.cols;
    eo.cancel = opt->cancel;
    /* N u for the hierarchy's spectral term, which has no N */
    eo.keep_products = app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY;
    eo.progress = opt->progress ? progress_solve : NULL;
    eo.progress_data = pr;
    pr->products_before = r->matvecs_all;
    if (!opt->keep_specks)
      app_components_to_options(&p->comps, &eo);
    eig_result_free(&before);
    before = r->eig;
    memset(&r->eig, 0, sizeof(r->eig));
    /* a round after carving starts near the pairs before it: ten times their restarts (at least
     * 100) bound it, so that one that stalls costs no more than that */
    if (round > 0 && before.converged) {
      const long cap = before.iterations > 10 ? 10L * before.iterations : 100L;
      eo.max_iter = cap < eo.max_iter ? (int)cap : eo.max_iter;
    }
    status = solver->solve(mv, &eo, &r->eig);
    r->solves++;
    r->matvecs_all += r->eig.matvecs;
    if (status == DSG_ERR_NOCONV && round > 0 && r->eig.nconv < before.nconv) {
      /* a round after carving that stalls (seen with chfsi on a 64 x 48 image: the carved
       * speck's vector projected out, the block stagnates) keeps the converged pairs before it */
      app_log(opt, DSG_LOG_WARNING,
              "the solve after carving %d speck(s) stopped with %d of %d pairs (%s); the %d "
              "converged pairs of the solve before it are kept",
              r->carved, r->eig.nconv, opt->nev, dsg_error_raw(), before.nconv);
      dsg_error_clear();
      eig_result_free(&r->eig);
      r->eig = before;
      memset(&before, 0, sizeof(before));
      r->carved -= carved; /* the pairs kept are from before that carving */
      status = DSG_OK;
      break;
    }
    if (status != DSG_OK || opt->keep_specks || round + 1 == APP_SPECK_ROUNDS)
      break;
    status = carve_localised(p, &r->eig, &carved);
    if (status != DSG_OK || carved == 0)
      break;
    r->carved += carved;
  }
  eig_result_free(&before);
  r->timing.solve = dsg_seconds() - t0;
  r->eig.solve_s += r->coarse.seconds; /* the solver's clock, with what its start cost */
  free(r->coarse.block);
  free(r->coarse.values);
  r->coarse.block = NULL;
  r->coarse.values = NULL;
  if (status == DSG_ERR_INTERRUPTED && check_cancel(opt) != DSG_OK)
    return DSG_ERR_INTERRUPTED; /* the message says which signal */
  if (status == DSG_ERR_NOCONV) {
    /* partial results: kept, flagged; the caller decides what to make of them */
    snprintf(r->note, sizeof(r->note), "%s", dsg_error_raw());
    r->solve_status = status;
    return DSG_OK;
  }
  return status;
}

/* Whether the grouping runs on p->device: it is open, and opt (the run's, which may not be the
 * problem's: bench solves one problem on each backend) does not ask for the C path. */
static int grouping_device(const dsg_problem *p, const dsg_options *opt)
{
  return p->device && opt->matvec && strcmp(opt->matvec, "cpu") != 0;
}

/* After a grouping step on p->device failed with *status: app_device_fall_back's C path. */
static int fall_back(dsg_problem *p, const dsg_options *opt, int *status, const char *what)
{
  return app_device_fall_back(&p->device, opt, status, what);
}

/* The labels for g->k from the eigenvectors in r: what a run with that k alone computes (the
 * same seed and restarts), so a list of k gives each k the labels it would get on its own. */
static int group_one(dsg_problem *p, const dsg_options *opt, dsg_result *r, app_grouping *g)
{
  const size_t n = (size_t)p->width * (size_t)p->height;
  float *emb = NULL;
  int dim = 0, status;
  int *labels;
  app_kmeans_params kp = {g->k, opt->restarts, 300, opt->seed};

  if (g->k < 1 || r->eig.nconv < g->k) /* --max-iter stopped the solve short of this k */
    return DSG_OK;
  labels = malloc(n * sizeof(*labels));
  if (!labels)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu labels", n);
  g->labels = (int32_t *)labels;
  if (g->k == 1) {
    memset(labels, 0, n * sizeof(*labels));
    return DSG_OK;
  }
  g->skipped = app_pick_vectors(&r->eig, g->k, app_min_support(n), g->pick);
  status = app_embedding(&r->eig, p->sqrt_degree, g->pick, g->k, &emb, &dim);
  if (status != DSG_OK)
    return status;
  if (grouping_device(p, opt) && spmv_cl_image_doubles(p->device)) { /* else the host's */
    status = app_kmeans_cl(p->device, emb, n, dim, &kp, labels, &g->inertia);
    if (fall_back(p, opt, &status, "k-means"))
      status = app_kmeans(emb, n, dim, &kp, labels, &g->inertia);
  } else {
    status = app_kmeans(emb, n, dim, &kp, labels, &g->inertia);
  }
  free(emb);
  if (status == DSG_OK)
    app_fill_specks(labels, &p->comps, p->width, p->height);
  return status;
}

/* E = (1 - weight) E + weight sqrt(M), M the boundary network's map from E (gPb), the forest's
 * map and the pixels: on p's device where the grouping runs there, else (or where it fails
 * under matvec auto) on the C path. */
static int refine(dsg_problem *p, const dsg_options *opt, double weight, float *E)
{
  const int w = p->width, h = p->height;
  const size_t n = (size_t)w * h;
  const app_net *net = app_net_default();
  float *x = malloc((size_t)APP_NET_INPUTS * n * sizeof(*x)), *M = malloc(n * sizeof(*M));
  int status = DSG_OK;
  if (!x || !M) {
    status = dsg_error_set(DSG_ERR_NOMEM,
                           "cannot allocate the boundary network's input of %zu pixels", n);
    goto out;
  }
  app_net_input(p->pixels.pixels, p->pixels.channels, E, p->forest_map, n, x);
  if (p->net_record)
    memcpy(p->net_record, x, (size_t)APP_NET_INPUTS * n * sizeof(*x));
  if (grouping_device(p, opt)) {
    status = spmv_cl_net(p->device, net, x, w, h, M, NULL);
    if (fall_back(p, opt, &status, "the boundary network"))
      status = app_net_run(net, x, w, h, M);
  } else {
    status = app_net_run(net, x, w, h, M);
  }
  if (status == DSG_OK)
    app_net_blend(E, M, weight, n);
out:
  free(x);
  free(M);
  return status;
}

/* The hierarchy's boundary map E and its hierarchy and UCM into r. E is the contour cue's
 * strength before thinning, or with the spectral term (p->oriented) gPb: the eigenvectors'
 * oriented gradients join the detector's combination at every orientation, and r's contours
 * become gPb thinned. A cue without contours: the spectral gradient alone. */
static int build_hierarchy(dsg_problem *p, const dsg_options *opt, dsg_result *r)
{
  const int w = p->width, h = p->height;
  const size_t n = (size_t)w * h;
  const int forest_gpb = p->forest && p->soft && opt->spectral_weight > 0.0;
  const int gpb = (p->oriented || forest_gpb) && opt->spectral_weight > 0.0;
  const int norient = gpb ? APP_CONTOUR_ORIENTATIONS : 0;
  float *E = malloc(n * sizeof(*E)), *spec = NULL, *gpb_map = NULL;
  unsigned char *orientation = NULL;
  int status = DSG_OK, ready = 0; /* E made */
  if (!E) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the hierarchy of %zu pixels", n);
    goto out;
  }
  if (p->soft && !gpb) {
    memcpy(E, p->soft, n * sizeof(*E));
    ready = 1;
  } else if (gpb && !forest_gpb && grouping_device(p, opt)) {
    /* on the device the detector ran on: only gPb and its thinning come back */
    status = app_spectral_gpb_cl(p->device, &r->eig, p->sqrt_degree, w, h, p->oriented,
                                 &app_contour_local, opt->spectral_weight, E, NULL, r->contours);
    if (!fall_back(p, opt, &status, "gPb")) {
      if (status != DSG_OK)
        goto out;
      ready = 1;
    }
  }
  if (!ready) {
    spec = malloc((norient ? (size_t)norient : 1) * n * sizeof(*spec));
    orientation = norient ? malloc(n) : NULL;
    if (!spec || (norient && !orientation)) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectral term of %zu pixels", n);
      goto out;
    }
    status = app_spectral_gradient(&r->eig, p->sqrt_degree, w, h, norient, spec);
    if (status != DSG_OK)
      goto out;
    if (forest_gpb) {
      app_forest_gpb(p->soft, spec, opt->spectral_weight * APP_FOREST_SPECTRAL, w, h, E);
      status = r->contours ? app_forest_thin(E, w, h, r->contours) : DSG_OK;
      if (status != DSG_OK)
        goto out;
    } else if (norient) {
      app_contour_gpb(p->oriented, &app_contour_local, spec, opt->spectral_weight, w, h, E,
                      orientation);
      if (r->contours)
        app_contour_thin(E, orientation, w, h, r->contours);
    } else {
      memcpy(E, spec, n * sizeof(*E));
    }
  }
  /* the forest's map joins gPb (r's forest_weight is 0 where the problem has none, keep_options),
   * the sum scaled back and held to gPb's [0, 1] (the forest's crests may pass 1) */
  const double fw = r->opt.forest_weight, aw = r->opt.arc_weight;
  if (aw > 0.0 && fw > 0.0 && p->forest_map && p->bins) { /* the learnt strengths read gPb */
    gpb_map = malloc(n * sizeof(*gpb_map));
    if (!gpb_map) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the hierarchy of %zu pixels", n);
      goto out;
    }
    memcpy(gpb_map, E, n * sizeof(*gpb_map));
  }
  if (r->opt.net_weight > 0.0 && p->forest_map && p->pixels.pixels) {
    status = refine(p, opt, r->opt.net_weight, E);
    if (status != DSG_OK)
      goto out;
  }
  if (fw > 0.0 && p->forest_map)
    for (size_t i = 0; i < n; i++) {
      const double e = ((double)E[i] + fw * (double)p->forest_map[i]) / (1.0 + fw);
      E[i] = e < 1.0 ? (float)e : 1.0f;
    }
  r->hierarchy = calloc(1, sizeof(*r->hierarchy));
  if (!r->hierarchy) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the hierarchy of %zu pixels", n);
    goto out;
  }
  const size_t auto_min = n / APP_MIN_REGION_FRACTION > APP_SPECK_PIXELS
                              ? n / APP_MIN_REGION_FRACTION
                              : APP_SPECK_PIXELS;
  /* the region cue (the bins were made with the problem; r's weight is 0 where the run has none,
   * keep_options): brightness at a share of the weight */
  const double rw = r->opt.region_weight;
  /* the base arcs' learnt strengths (r's arc_weight is 0 without the forest's map or the bins) */
  const app_arc_cue arcs = {gpb_map, p->forest_map, aw, p->arc_record};
  const app_region_cue cue = {p->bins,
                              {APP_REGION_BRIGHTNESS * rw, rw, rw, rw},
                              (double)n / APP_REGION_AREA_FRACTION,
                              gpb_map ? &arcs : NULL};
  status =
      app_hierarchy_build_cue(E, rw > 0.0 && p->bins ? &cue : NULL, w, h,
                              opt->min_region > 0 ? opt->min_region : (int)auto_min, r->hierarchy);
  if (status == DSG_OK && p->forest) /* the forest's strengths are unbounded: levels in [0, 1) */
    app_hierarchy_map_levels(r->hierarchy, APP_FOREST_LEVEL_HALF);
out:
  free(E);
  free(gpb_map);
  free(spec);
  free(orientation);
  return status;
}

static size_t n_of(const dsg_result *r) { return (size_t)r->width * (size_t)r->height; }

/* Every k of the run, one after the other on the one set of eigenvectors. */
static int group(dsg_problem *p, const dsg_options *opt, dsg_result *r)
{
  double t0 = dsg_seconds();
  int status = DSG_OK;
  const int hierarchy = app_grouping_find(opt->grouping) == APP_GROUPING_HIERARCHY;
  if (hierarchy && r->ngroups > 0 && r->eig.nconv > 0)
    status = build_hierarchy(p, opt, r);
  /* k-means for a cue without contours: on the device the solve asked for, when there is one
   * (a contour cue's is the detector's, kept since; none when it took the C path) */
  if (!hierarchy && !p->device && !p->cue->contours && r->ngroups > 0 && opt->matvec &&
      strcmp(opt->matvec, "cpu") != 0)
    status = app_image_device(opt, &p->device);
  for (int g = 0; g < r->ngroups && status == DSG_OK; g++) {
    app_grouping *gr = &r->groups[g];
    if (hierarchy && r->hierarchy) {
      const app_hierarchy *H = r->hierarchy;
      gr->hierarchy = 1;
      gr->labels = malloc(n_of(r) * sizeof(*gr->labels));
      int count = 0;
      status = gr->labels ? app_hierarchy_cut(H, gr->k, r->opt.threshold, gr->labels, &count)
                          : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu labels", n_of(r));
      if (gr->k == 0 && gr->labels) { /* a threshold: as many regions as the level leaves */
        gr->segments = count;
        gr->level = r->opt.threshold;
        continue;
      }
      gr->segments = gr->k < H->nregions ? gr->k : H->nregions;
      /* the cut at k regions applied the first nregions - k merges: the next one's level */
      gr->level = H->nregions - gr->k >= 0 && H->nregions - gr->k < H->nmerges
                      ? H->merge_level[H->nregions - gr->k]
                      : 0.0;
      if (status == DSG_OK && gr->segments < gr->k)
        app_log(opt, DSG_LOG_WARNING,
                "k %d: the hierarchy of this image has %d regions; the cut has %d", gr->k,
                H->nregions, gr->segments);
      continue;
    }
    if (gr->k == DSG_K_AUTO) { /* k-means: the k before the largest eigengap */
      const double *lambda = r->eig.values;
      int best = 2;
      for (int k = 3; k < r->eig.nconv; k++)
        if (lambda[k - 1] - lambda[k] > lambda[best - 1] - lambda[best])
          best = k;
      gr->k = r->eig.nconv > 2 ? best : r->eig.nconv > 1 ? 2 : 1;
      r->opt.k = gr->k;
    }
    status = group_one(p, opt, r, gr);
    if (gr->labels)
      gr->segments = gr->k;
    if (status == DSG_OK)
      status = check_cancel(opt); /* between two k-means: a long list stops early */
  }
  r->timing.cluster = dsg_seconds() - t0;
  return status;
}

int dsg_problem_solve_on(dsg_problem *p, const dsg_options *opt, struct spmv_matvec *mv,
                         dsg_result **out)
{
  const eig_solver *solver;
  dsg_result *r;
  const spmv_cl_info *cl;
  app_progress pr;
  const size_t n = (size_t)p->N->rows;
  int status = eig_solver_find(app_solver_at(opt, p->width, p->height), &solver);

  *out = NULL;
  if (status == DSG_OK)
    status = check_tol(opt); /* opt may not be the options the problem was created with */
  if (status == DSG_OK)
    status = check_ks(opt); /* the groupings are sized by it */
  if (status != DSG_OK)
    return status;
  r = calloc(1, sizeof(*r));
  if (!r)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a result");
  keep_options(r, opt, p->bins && uses_region_cue(opt, p->cue),
               p->forest_map && uses_forest_map(opt, p->cue),
               p->pixels.pixels && uses_net(opt, p->cue));
  r->width = p->width;
  r->height = p->height;
  r->n = p->N->rows;
  r->ndiag = p->N->ndiag;
  r->pitch = p->N->pitch;
  r->matrix_bytes = spmv_dia_bytes(p->N);
  r->offsets = malloc((size_t)p->N->ndiag * sizeof(*r->offsets));
  r->sqrt_degree = malloc(n * sizeof(*r->sqrt_degree));
  if (!r->offsets || !r->sqrt_degree) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a result of %zu pixels", n);
    goto fail;
  }
  memcpy(r->offsets, p->N->offsets, (size_t)p->N->ndiag * sizeof(*r->offsets));
  memcpy(r->sqrt_degree, p->sqrt_degree, n * sizeof(*r->sqrt_degree));
  snprintf(r->backend, sizeof(r->backend), "%s", spmv_matvec_backend(mv));
  if ((cl = spmv_matvec_cl_info(mv)) != NULL) {
    r->has_cl = 1;
    r->cl = *cl;
  }
  r->timing.affinity = p->t_affinity;
  r->timing.contours = p->t_contours;
  if (p->contours) {
    r->contours = malloc(n * sizeof(*r->contours));
    if (!r->contours) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a result of %zu pixels", n);
      goto fail;
    }
    memcpy(r->contours, p->contours, n * sizeof(*r->contours));
  }
  progress_init(&pr, opt, p->cue, p->t_start);
  progress_stage(&pr, STAGE_SOLVE);
  status = solve(p, opt, solver, mv, r, &pr);
  /* the speck rounds may have carved new groups: the report counts them */
  r->components = p->comps.count;
  r->significant = p->comps.significant;
  r->speck_pixels = p->comps.speck_pixels;
  if (status == DSG_OK)
    status = check_cancel(opt);
  if (status == DSG_OK && pr.grouping)
    progress_stage(&pr, STAGE_GROUPING);
  if (status == DSG_OK)
    status = group(p, opt, r);
  if (status != DSG_OK)
    goto fail;
  *out = r;
  if (r->solve_status == DSG_ERR_NOCONV)
    return dsg_error_set(DSG_ERR_NOCONV, "%s", r->note);
  return DSG_OK;
fail:
  dsg_result_destroy(r);
  return status;
}

int dsg_problem_solve(dsg_problem *p, const dsg_options *opt, dsg_result **out)
{
  spmv_matvec *mv = NULL;
  double t0 = dsg_seconds(), setup;
  int status = check_tol(opt); /* before a device is opened for nothing */
  *out = NULL;
  if (status == DSG_OK)
    status = dsg_problem_matvec(p, opt, 1, &mv);
  if (status != DSG_OK)
    return status;
  setup = p->t_components + (dsg_seconds() - t0); /* components, the device, program, upload */
  status = dsg_problem_solve_on(p, opt, mv, out);
  if (status == DSG_ERR_LIMIT && spmv_matvec_cl_info(mv) && opt->matvec &&
      strcmp(opt->matvec, "auto") == 0) {
    /* auto, a device that ran out during the solve (drivers allocate at first use): the C path,
     * where it holds the problem */
    status = app_memory_fallback(opt, p->width, p->height, status, "the solve failed on OpenCL");
    if (status == DSG_OK) {
      spmv_matvec_destroy(mv);
      mv = NULL;
      t0 = dsg_seconds();
      status = spmv_dia_host(p->N); /* the device's copy, where the host had none */
      if (status == DSG_OK)
        status = spmv_matvec_create_cpu(&mv, p->N);
      setup += dsg_seconds() - t0;
      if (status == DSG_OK)
        status = dsg_problem_solve_on(p, opt, mv, out);
    }
  }
  if (*out)
    (*out)->timing.setup = setup;
  spmv_matvec_destroy(mv);
  return status;
}

/* labels renumbered 0 .. count-1 in order of first appearance (a region no photo pixel kept,
 * possible for a sliver along a boundary, leaves no gap), *count their number. */
static int renumber(int32_t *labels, size_t n, int *count)
{
  int32_t top = 0, next = 0, *map, *order = NULL;
  unsigned char *seen = NULL;
  int parts = omp_get_max_threads(), used = 1, *found = NULL;
#pragma omp parallel for schedule(static) reduction(max : top)
  for (size_t i = 0; i < n; i++)
    top = labels[i] > top ? labels[i] : top;
  const size_t labels_n = (size_t)top + 1;
  map = malloc(labels_n * sizeof(*map));
  if (!map)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d labels", top + 1);
  for (int32_t l = 0; l <= top; l++)
    map[l] = -1;
  /* the labels in order of first appearance: each thread lists the labels of its part of the
   * image (parts in the image's order) as it first sees them; the lists, read part after part,
   * give that order. Short of memory for the lists: one part. */
  if (parts > 1 && n >= ((size_t)1 << 16) && labels_n <= ((size_t)1 << 24) / (size_t)parts) {
    seen = calloc((size_t)parts * labels_n, 1);
    order = malloc((size_t)parts * labels_n * sizeof(*order));
    found = calloc((size_t)parts, sizeof(*found));
  }
  if (seen && order && found) {
#pragma omp parallel num_threads(parts)
    {
      const int t = omp_get_thread_num(), nt = omp_get_num_threads();
      const size_t i0 = n / (size_t)nt * (size_t)t +
                        (n % (size_t)nt < (size_t)t ? n % (size_t)nt : (size_t)t),
                   i1 = i0 + n / (size_t)nt + ((size_t)t < n % (size_t)nt);
      unsigned char *mine = seen + (size_t)t * labels_n;
      int32_t *list = order + (size_t)t * labels_n;
      if (t == 0)
        used = nt;
      for (size_t i = i0; i < i1; i++)
        if (!mine[labels[i]]) {
          mine[labels[i]] = 1;
          list[found[t]++] = labels[i];
        }
    }
    for (int t = 0; t < used; t++)
      for (int j = 0; j < found[t]; j++)
        if (map[order[(size_t)t * labels_n + (size_t)j]] < 0)
          map[order[(size_t)t * labels_n + (size_t)j]] = next++;
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++)
      labels[i] = map[labels[i]];
  } else {
    for (size_t i = 0; i < n; i++) {
      if (map[labels[i]] < 0)
        map[labels[i]] = next++;
      labels[i] = map[labels[i]];
    }
  }
  free(seen);
  free(order);
  free(found);
  free(map);
  *count = next;
  return DSG_OK;
}

/* Labels made at the working size (work) to the image's (full), as a run's come back and its
 * hierarchy's cuts after it: refined against full's pixels (app_upsample_labels), then
 * renumbered 0 .. count - 1 in order of first appearance, as at the working size (a sliver the
 * photo's pixels left may leave a gap). */
static int labels_to_full_size(const dsg_image *full, const dsg_image *work, const int32_t *labels,
                               int32_t *big, int *count)
{
  const int status = app_upsample_labels(full, work, labels, big);
  return status == DSG_OK ? renumber(big, (size_t)full->width * (size_t)full->height, count)
                          : status;
}

/* r's labels and contours, computed on `work`, brought to the size of `full` (resolution.c). */
static int to_full_size(dsg_result *r, const dsg_image *full, const dsg_image *work)
{
  const size_t N = (size_t)full->width * (size_t)full->height;
  int status = DSG_OK;
  for (int g = 0; g < r->ngroups && status == DSG_OK; g++) {
    int32_t *labels = r->groups[g].labels, *big;
    if (!labels)
      continue;
    big = malloc(N * sizeof(*big));
    if (!big)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu labels", N);
    status = labels_to_full_size(full, work, labels, big, &r->groups[g].segments);
    free(labels);
    r->groups[g].labels = big;
  }
  if (status == DSG_OK && r->contours) {
    float *big = malloc(N * sizeof(*big));
    if (!big)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contours of %zu pixels", N);
    status = app_upsample_contours(r->contours, work->width, work->height, full->width,
                                   full->height, big);
    free(r->contours);
    r->contours = big;
  }
  r->width = full->width;
  r->height = full->height;
  return status;
}

/* The working image of img under opt (app_work_size): img itself, or img shrunk into *small;
 * dsg_segment's and dsg_presolve's. */
static int working_image(const dsg_image *img, const dsg_options *opt, dsg_image *small,
                         const dsg_image **work)
{
  int w, h, status = DSG_OK;
  *work = img;
  if (app_work_size(img->width, img->height, opt->work_pixels, &w, &h)) {
    status = app_image_shrink(img, w, h, small);
    *work = small;
  }
  return status;
}

int dsg_segment(const dsg_image *img, const dsg_options *opt_in, dsg_result **out)
{
  dsg_problem *p = NULL;
  dsg_image small = {0, 0, 0, NULL};
  const dsg_image *work = img;
  double t0 = dsg_seconds(), t_resize = 0.0;
  int use_cpu = 0, planned = 0, status = check_image(img);
  dsg_options local = *opt_in;
  const dsg_options *opt = &local;
  *out = NULL;
  /* memory, before any work: a run that cannot fit stops here; "auto" may take the C path */
  if (status == DSG_OK)
    status = dsg_options_check(opt);
  if (status == DSG_OK)
    status = app_memory_plan(opt, img->width, img->height, &use_cpu);
  if (use_cpu)
    local.matvec = "cpu";
  planned = status == DSG_OK;
  if (status == DSG_OK) {
    status = working_image(img, opt, &small, &work);
    if (work != img)
      t_resize = dsg_seconds() - t0;
  }
  if (status == DSG_OK)
    status = dsg_problem_create(work, opt, &p);
  if (status == DSG_OK)
    status = dsg_problem_solve(p, opt, out);
  if (*out) {
    const double t1 = dsg_seconds();
    int up = DSG_OK;
    (*out)->channels = img->channels;
    (*out)->work_width = work->width;
    (*out)->work_height = work->height;
    if (work != img && (up = to_full_size(*out, img, work)) != DSG_OK) {
      dsg_result_destroy(*out);
      *out = NULL;
      status = up;
    } else {
      (*out)->timing.resolution = t_resize + (dsg_seconds() - t1);
      (*out)->timing.total = dsg_seconds() - t0;
    }
  }
  dsg_problem_destroy(p);
  dsg_image_free(&small);
  /* a device that ran out part-way: what would fit it */
  return planned ? app_memory_explain(opt, img->width, img->height, status) : status;
}

int dsg_presolve(const dsg_image *img, const dsg_options *opt)
{
  dsg_image small = {0, 0, 0, NULL}, coarse = {0, 0, 0, NULL};
  const dsg_image *work = img;
  app_coarse c;
  int status = check_image(img);
  memset(&c, 0, sizeof(c));
  if (status == DSG_OK && !opt)
    status = dsg_error_set(DSG_ERR_INVALID, "dsg_presolve needs the run's options");
  if (status == DSG_OK)
    status = dsg_options_check(opt);
  if (status == DSG_OK)
    status = dsg_check_size(opt, img->width, img->height);
  if (status == DSG_OK)
    status = working_image(img, opt, &small, &work);
  /* the forest's map of that image, which a contour cue's run on the C path then takes (the
   * model parsed with it, once per process); a run with a device makes the map there
   * (kernels/forest.cl), and only the model's parsing comes ahead */
  const app_cue *cue;
  if (status == DSG_OK && app_cue_find(opt->affinity, &cue) == DSG_OK && cue->contours &&
      (uses_forest(opt) || uses_forest_map(opt, cue))) {
    const app_forest *F;
    status = !opt->matvec || strcmp(opt->matvec, "cpu") == 0
                 ? app_forest_ahead_put(work, uses_forest(opt), opt->cancel)
                 : app_forest_default(&F);
  }
  /* what the run's problem and solve would take: chfsi from the coarse start at that size */
  if (status == DSG_OK && strcmp(app_solver_at(opt, work->width, work->height), "chfsi") == 0)
    status = app_coarse_image(work, opt, &coarse);
  if (status == DSG_OK && coarse.pixels) {
    status = app_coarse_solve(&coarse, opt, &c);
    if (status == DSG_OK && c.block) {
      c.ahead = 1;
      c.worker_seconds = c.seconds;
      app_coarse_ahead_put(&coarse, opt, &c);
    }
  }
  app_coarse_free(&c);
  dsg_image_free(&coarse);
  dsg_image_free(&small);
  return status;
}

int dsg_result_work_width(const dsg_result *r) { return r->work_width; }
int dsg_result_work_height(const dsg_result *r) { return r->work_height; }
int dsg_result_width(const dsg_result *r) { return r->width; }
const float *dsg_result_contours(const dsg_result *r) { return r->contours; }
int dsg_result_ucm(const dsg_result *r, float *ucm)
{
  if (!r->hierarchy)
    return dsg_error_set(DSG_ERR_INVALID, "this result has no hierarchy (grouping '%s')",
                         r->opt.grouping ? r->opt.grouping : "");
  app_hierarchy_ucm(r->hierarchy, ucm);
  return DSG_OK;
}
int dsg_result_height(const dsg_result *r) { return r->height; }
const int32_t *dsg_result_labels(const dsg_result *r)
{
  return r->ngroups > 0 ? r->groups[0].labels : NULL;
}
int dsg_result_nk(const dsg_result *r) { return r->ngroups; }
int dsg_result_k_at(const dsg_result *r, int i)
{
  return i >= 0 && i < r->ngroups ? r->groups[i].k : 0;
}
const int32_t *dsg_result_labels_k(const dsg_result *r, int k)
{
  for (int g = 0; g < r->ngroups; g++)
    if (r->groups[g].k == k)
      return r->groups[g].labels;
  return NULL;
}
int dsg_result_nconv(const dsg_result *r) { return r->eig.nconv; }
const double *dsg_result_eigenvalues(const dsg_result *r) { return r->eig.values; }
const float *dsg_result_eigenvectors(const dsg_result *r) { return r->eig.vectors; }
const double *dsg_result_residuals(const dsg_result *r) { return r->eig.residuals; }
const double *dsg_result_sqrt_degree(const dsg_result *r) { return r->sqrt_degree; }
int dsg_result_converged(const dsg_result *r) { return r->eig.converged; }
const char *dsg_result_note(const dsg_result *r) { return r->note; }
dsg_timing dsg_result_timing(const dsg_result *r) { return r->timing; }
long dsg_result_products(const dsg_result *r) { return r->eig.matvecs; }
const eig_result *app_result_eig(const dsg_result *r) { return &r->eig; }

/* ---- the affinity alone ---- */

struct dsg_matrix {
  spmv_dia *N;
  double *sqrt_degree;
};

int dsg_affinity(const dsg_image *img, const dsg_options *opt, dsg_matrix **out)
{
  const app_cue *cue;
  dsg_matrix *m;
  int status = app_cue_find(opt->affinity, &cue);
  *out = NULL;
  if (status == DSG_OK)
    status = check_image(img);
  if (status == DSG_OK) /* N at the image's own size: checked before it is built */
    status = app_memory_check_affinity(opt, img->width, img->height);
  if (status != DSG_OK)
    return status;
  m = calloc(1, sizeof(*m));
  if (!m)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a matrix");
  status = build_affinity(img, opt, cue, &m->N, &m->sqrt_degree, NULL, NULL, NULL, NULL, NULL, NULL,
                          NULL, NULL, NULL);
  if (status != DSG_OK) {
    dsg_matrix_destroy(m);
    return status;
  }
  *out = m;
  return DSG_OK;
}

void dsg_matrix_destroy(dsg_matrix *m)
{
  if (!m)
    return;
  spmv_dia_destroy(m->N);
  free(m->sqrt_degree);
  free(m);
}

int dsg_matrix_rows(const dsg_matrix *m) { return m->N->rows; }
int dsg_matrix_ndiag(const dsg_matrix *m) { return m->N->ndiag; }
size_t dsg_matrix_pitch(const dsg_matrix *m) { return m->N->pitch; }
const int *dsg_matrix_offsets(const dsg_matrix *m) { return m->N->offsets; }
const float *dsg_matrix_values(const dsg_matrix *m) { return m->N->values; }
const double *dsg_matrix_sqrt_degree(const dsg_matrix *m) { return m->sqrt_degree; }

void dsg_free(void *p) { free(p); }

/* ---- the hierarchy after the run ---------------------------------------------------------- */
struct dsg_hierarchy {
  app_hierarchy H;   /* at the working size */
  int width, height; /* the image's */
  int channels;      /* the image's (0: a result dsg_segment did not make) */
};

int dsg_result_take_hierarchy(dsg_result *r, dsg_hierarchy **out)
{
  *out = NULL;
  if (!r->hierarchy)
    return dsg_error_set(DSG_ERR_INVALID, "this result has no hierarchy (grouping '%s')",
                         r->opt.grouping ? r->opt.grouping : "");
  dsg_hierarchy *h = malloc(sizeof(*h));
  if (!h)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a hierarchy");
  h->H = *r->hierarchy;
  h->width = r->width;
  h->height = r->height;
  h->channels = r->channels;
  free(r->hierarchy);
  r->hierarchy = NULL;
  *out = h;
  return DSG_OK;
}

void dsg_hierarchy_destroy(dsg_hierarchy *h)
{
  if (!h)
    return;
  app_hierarchy_free(&h->H);
  free(h);
}

int dsg_hierarchy_regions(const dsg_hierarchy *h) { return h->H.nregions; }

int dsg_hierarchy_cut(const dsg_hierarchy *h, const dsg_image *img, int k, double threshold,
                      int32_t *labels, int *segments)
{
  const int w = h->H.width, ht = h->H.height;
  const int shrunk = w != h->width || ht != h->height;
  const size_t n = (size_t)w * ht;
  int32_t *work_labels = NULL;
  dsg_image small = {0, 0, 0, NULL};
  int status = DSG_OK;
  if (segments)
    *segments = 0;
  if (k < 0)
    return dsg_error_set(DSG_ERR_INVALID,
                         "a cut at %d regions: k must be 1 or more (0: a cut at a threshold)", k);
  if (k == 0 && !isfinite(threshold))
    return dsg_error_set(DSG_ERR_INVALID, "a cut at threshold %g: it must be finite", threshold);
  if (shrunk) { /* the labels come back to the image's size as the run's did (to_full_size) */
    if (!img || !img->pixels || img->width != h->width || img->height != h->height ||
        (h->channels > 0 && img->channels != h->channels))
      return dsg_error_set(DSG_ERR_INVALID,
                           "the hierarchy was made at %d x %d for a %d x %d image of %d "
                           "channels: its cut needs that image (given: %d x %d, %d channels)",
                           w, ht, h->width, h->height, h->channels, img ? img->width : 0,
                           img ? img->height : 0, img ? img->channels : 0);
    work_labels = malloc(n * sizeof(*work_labels));
    if (!work_labels)
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu labels", n);
  }
  int count = 0;
  status = app_hierarchy_cut(&h->H, k, threshold, shrunk ? work_labels : labels, &count);
  if (status == DSG_OK && shrunk)
    status = app_image_shrink(img, w, ht, &small);
  if (status == DSG_OK && shrunk)
    status = labels_to_full_size(img, &small, work_labels, labels, &count);
  if (status == DSG_OK && segments)
    *segments = count;
  free(work_labels);
  dsg_image_free(&small);
  return status;
}
