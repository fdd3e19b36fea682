/* diaseg.h: spectral image segmentation (normalized cuts) as a library.
 *
 * Pixels in memory in; labels, eigenpairs, the normalised affinity and timings out. The library
 * reads no files, no flags and no environment variables: the command line (app/cli), the
 * benchmark (app/bench), the tests and the Python package are its callers, and they all run the
 * same recipe:
 *
 *   image -> cue features -> affinity W (radius-r disc, DIA) -> N = D^-1/2 W D^-1/2
 *         -> connected components and specks -> eigensolver (speck carving rounds)
 *         -> spectral embedding -> k-means -> labels
 *
 * Conventions (VLFeat / libvips style): every function returns an int status from dsg_base.h
 * (DSG_OK = 0, negative on error) and writes a one-line message, read with dsg_error_message()
 * on the same thread; objects come in create/destroy pairs, destroy accepts NULL, and whoever
 * creates an object destroys it. Arrays returned by accessors belong to their object.
 * Formulas and layouts: docs/PIPELINE.md; the layers: docs/ARCHITECTURE.md.
 */
#ifndef DIASEG_H
#define DIASEG_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "dsg_base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, e.g. "0.1.0". */
const char *dsg_version(void);

/* ---- images ---------------------------------------------------------------------------------
 * 8-bit samples, row-major, channels interleaved. A float image in [0, 1] is quantised to 8 bits
 * by the caller (round(255 v)), which is what the features of a file read from disk see. */
typedef struct dsg_image {
  int width;
  int height;
  int channels;          /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
  unsigned char *pixels; /* width * height * channels bytes */
} dsg_image;

/* A copy of `pixels` in *img. Returns DSG_OK, DSG_ERR_INVALID (size, channels) or
 * DSG_ERR_NOMEM. Free with dsg_image_free. */
int dsg_image_from_pixels(dsg_image *img, int width, int height, int channels,
                          const unsigned char *pixels);
/* Bilinear resampling of src to width x height into *dst (free with dsg_image_free). */
int dsg_image_resize(const dsg_image *src, int width, int height, dsg_image *dst);
/* Frees the pixels of an image the library allocated and zeroes *img (NULL is allowed). */
void dsg_image_free(dsg_image *img);

/* ---- options --------------------------------------------------------------------------------
 * Every option of a run, with the command line's names (docs/CLI.md): `sigma_x` here is
 * --sigma-x there and sigma_x= in Python. Choices are names looked up in tables: the cues
 * (dsg_cue_name), the backends ("auto", "cpu", "opencl"), the solvers (eigensolver.h) and the
 * OpenCL kernels (spmv.h). Strings are borrowed for the duration of a call. */

/* A report of a run's progress, to dsg_options.progress from the calling thread: once as each
 * stage starts, about every 0.5 s during the solve, and once when each eigensolve stops. The
 * record is borrowed for the call. Counts never decrease within a run. */
typedef struct dsg_progress {
  const char *stage; /* "contours", "affinity", "setup", "solve", "grouping" (a static string) */
  int stage_index;   /* 0 .. stage_count - 1: the stage's place among the run's stages, in the */
  int stage_count;   /* order above ("contours" only for a cue with contours, "grouping" for k>0) */
  long products;     /* products with N so far, every speck round's (dsg_result_products: the
                      * last round's alone); 0 before the solve */
  /* the products the whole solve is expected to take (>= products, at most max_iter * ncv per
   * round) from the rate at which the slowest wanted pair's residual falls; -1 while estimating
   * (the first restarts); = products once the solve stopped */
  long products_estimate;
  int converged;          /* pairs converged: the most seen so far, <= wanted */
  int wanted;             /* nev */
  double elapsed_s;       /* since the run began (dsg_problem_create) */
  double stage_elapsed_s; /* since this stage began */
  double eta_s;           /* seconds left in the solve at its rate so far; < 0: unknown */
} dsg_progress;
typedef void (*dsg_progress_fn)(void *data, const dsg_progress *p);

enum dsg_log_level {
  DSG_LOG_INFO = 0,    /* what was chosen, e.g. the backend and its device */
  DSG_LOG_WARNING = 1, /* a fallback: the run goes on another way */
  DSG_LOG_DETAIL = 2   /* several lines that explain an error, e.g. an OpenCL build log */
};
/* Receives the library's notes. `message` may mark parameters (DSG_PARAM): show it through
 * dsg_error_render, or as it is with the marks removed. */
typedef void (*dsg_log_fn)(void *data, int level, const char *message);

typedef struct dsg_options {
  /* grouping */
  int k; /* segments; 0: no grouping (eigenpairs only); DSG_K_AUTO: chosen; k-means: k <= nev */
  uint64_t seed; /* k-means++ seed */
  int restarts;  /* k-means++ runs; the lowest inertia wins */
  /* Several k from one eigensolve: nks > 0 groups the same eigenvectors once per ks[i], in the
   * caller's order, with the same seed and restarts each time (each k's labels are those of a
   * run with k = ks[i] alone), and k is not read. Every ks[i] in [1, min(nev, 64)], no value
   * twice (refused, not merged: each k names its own outputs), so nks <= 64. ks is borrowed for
   * the call. nks 0 (the default, ks NULL): the single k. */
  const int *ks;
  int nks;
  /* "hierarchy" (default): cuts of the region hierarchy (watershed regions of the boundary map E
   * merged by boundary strength, docs/PIPELINE.md) at k regions, k up to DSG_MAX_CUT and not
   * bounded by nev; "kmeans": k-means++ on the spectral embedding. E = gPb: the contour cue's
   * combination at every orientation with spectral_weight * the eigenvectors' oriented
   * gradients added inside its logistic, before thinning (the contour cue's strength alone at
   * spectral_weight 0; the spectral gradient alone for a cue without contours); the result's
   * contours are then gPb thinned. */
  const char *grouping;
  /* >= 0; default DSG_SPECTRAL_WEIGHT. Read when the problem is made (dsg_problem_create): a
   * problem made at 0 keeps the contour cue's strength whatever a later call asks. */
  double spectral_weight;
  int min_region; /* hierarchy: regions below this many pixels merge first; 0: max(n / 1500, 32) */
  /* hierarchy, contour cues: >= 0; default DSG_REGION_WEIGHT. The merge order reads the regions
   * as well as their boundary: each boundary's mean strength plus this times the chi-squared
   * distances of the two regions' histograms of colour a, colour b and textons and half this
   * times that of brightness (the detector's bins), trusted by a / (a + pixels / 50), a the
   * smaller region's pixels; the sum divided by 1 + 3.5 x this. 0: the boundary alone. The
   * levels shrink by that divisor: DSG_AUTO_THRESHOLD was fit with the default. Read when the
   * problem is made (dsg_problem_create): a problem made at 0 keeps no bins and merges by the
   * boundary alone; a run without the cue (that, a cue without contours, k-means) reports 0. */
  double region_weight;
  /* hierarchy, contour cues with the gradients: >= 0; default DSG_FOREST_WEIGHT. The structured
   * edge forest's map (detector "forest"'s, before thinning) joins gPb in the map the hierarchy
   * is made from: (gPb + this * forest) / (1 + this), held to [0, 1]; 0: gPb alone. The result's
   * contours stay gPb thinned. Read when the problem is made (dsg_problem_create): a problem made
   * at 0 has no forest map; a run without it (that, the forest as the detector, a cue without
   * contours, k-means) reports 0. */
  double forest_weight;
  /* hierarchy, contour cues with the gradients, the forest's map and the region cue: in [0, 1];
   * default DSG_ARC_WEIGHT. Once the specks have merged, each boundary between two of the
   * regions left takes this share of its strength from a model fit on BSDS500 train's human
   * boundaries (the boundary's strengths in gPb and the forest's map, its length, its regions'
   * sizes and histograms: docs/PIPELINE.md 7b), the rest from the map. 0: the map alone. A run
   * without the forest's map or the region cue reports 0. The model was fit on gPb's arcs: with
   * the boundary network (net_weight) it is off by default. */
  double arc_weight;
  /* hierarchy, contour cues with the gradients and the forest's map: in [0, 1]; default
   * DSG_NET_WEIGHT. A small convolutional network fit on BSDS500 train's persons' majority
   * boundaries (docs/PIPELINE.md 7c) reads gPb, the forest's map and the colours and makes a
   * boundary map M in (0, 1); gPb becomes (1 - this) gPb + this sqrt(M) in the hierarchy's map,
   * before the forest's map joins it. 0: gPb alone. The result's contours stay gPb thinned. Read
   * when the problem is made (dsg_problem_create): a problem made at 0 keeps no copy of the
   * pixels; a run without the forest's map reports 0. */
  double net_weight;
  /* hierarchy: > 0 cuts at this level instead of at k regions (the boundaries above it stay;
   * levels are the UCM's, in [0, 1) for the contour cues), and k and ks are not read; 0: k */
  double threshold;
  /* resolution: an image of more than work_pixels pixels is segmented at the largest size of its
   * aspect within work_pixels (area-averaged), and its labels and contours come back at the
   * image's size, refined against its pixels (dsg_result_width/height); the eigenvectors, degrees
   * and hierarchy stay at the working size (dsg_result_work_width/height). 0: full resolution.
   * Default DSG_WORK_PIXELS. */
  long long work_pixels;
  /* affinity */
  const char *affinity; /* the cue: "contour" (default), "contour+color", "intensity", "color" */
  /* the boundary detector (dsg_detector_name): "auto" (default, or NULL): the forest for
   * dsg_contours without parts, the gradients for the contour cues (segment's gPb and hierarchy
   * were fit with them, and they run on the OpenCL device); "forest", the structured edge forest
   * learnt from BSDS500 train (the sharper boundary map; on the host); "gradients", the oriented
   * histogram gradients of brightness, colour and texture (mPb). */
  const char *detector;
  int radius;      /* disc radius r >= 1 (81 offsets for r = 5) */
  double sigma_i;  /* feature scale > 0 */
  double sigma_x;  /* spatial scale > 0 */
  double sigma_c;  /* contour scale > 0 (the contour cues): exp(-max contour / sigma_c) */
  int keep_specks; /* 1: no component or speck handling: the plain top of the spectrum */
  /* eigensolver */
  int nev;      /* eigenpairs, 1 <= nev < pixels */
  int ncv;      /* basis size; 0: automatic */
  double tol;   /* |N u - lambda u| <= tol |lambda|; DSG_MIN_TOL <= tol < 1; 0: DSG_TOL_AUTO */
  int max_iter; /* restart limit */
  /* "auto" (default): chfsi for the hierarchy's labels (gPb's spectral term wants the top of the
   * spectrum's cluster near 1, which chfsi from the coarse start finds and Lanczos at
   * DSG_TOL_HIERARCHY does not; docs/QUALITY.md) where the image is large enough for the coarse
   * start (116 pixels a side at the working size), lanczos where it is not, where the eigenvectors
   * are the result or k-means groups them; or "lanczos", "chfsi", "arpack" (eig_solver_find) */
  const char *solver;
  /* chfsi: 1 (default) starts the solve from the block of the same problem solved on the image
   * shrunk 5x each way (on the C path, whatever the backend), brought back (docs/PIPELINE.md,
   * "Coarse-to-fine starts"), where that image is at least 16 pixels each way; 0: from the random
   * block. The other solvers do not read it. */
  int coarse_start;
  /* backend */
  const char *matvec;     /* "auto": the first OpenCL GPU, else the C path; "cpu"; "opencl" */
  const char *cl_device;  /* index or name substring; NULL: the first GPU, else device 0 */
  const char *kernel;     /* DIA kernel name; NULL or "auto": chosen for the device */
  size_t local_size;      /* OpenCL work-group size; 0: the kernel's default */
  const char *kernel_dir; /* read kernels/NAME.cl from here; NULL: the built-in copies */
  unsigned long long cl_max_alloc; /* cap on one device allocation; 0: the device's */
  unsigned long long cl_max_mem;   /* cap on the device's memory; 0: the device's */
  /* cap on the host memory a run may take (dsg_check_memory); 0: the machine's available memory */
  unsigned long long max_memory;
  size_t basis_groups, basis_row_groups; /* OpenCL basis kernels' grid (tuning); 0: automatic */
  int lanczos_unfused;                   /* |w| in a pass of its own (for measuring the fusion) */
  /* callbacks (optional) */
  const volatile sig_atomic_t *cancel; /* nonzero asks the run to stop: DSG_ERR_INTERRUPTED */
  dsg_progress_fn progress;
  void *progress_data;
  dsg_log_fn log;
  void *log_data;
} dsg_options;

#define DSG_MAX_K 64 /* k-means segments at most, and k values in a list at most */
/* k = DSG_K_AUTO (the default) chooses the scale: grouping "hierarchy" cuts at level
 * DSG_AUTO_THRESHOLD, the UCM threshold of the best Covering + boundary F on BSDS500 train
 * (the default options: gPb from nev 16 eigenvectors by chfsi refined by the boundary network,
 * the forest's map joining it, the region cue; train images 101-150, which the network did not
 * see; docs/QUALITY.md); "kmeans" takes the k in [2, nev - 1] before the largest eigengap
 * lambda_k - lambda_(k+1). The report says which ("scale"). */
#define DSG_K_AUTO (-1)
#define DSG_AUTO_THRESHOLD 0.44
/* The level -k auto cuts the hierarchy at for opt, each fit on BSDS500 train at its weights:
 * DSG_AUTO_THRESHOLD at the defaults (the boundary network, the forest's map, the region cue);
 * 0.36 with the learnt strengths instead of the network (net_weight 0, arc_weight > 0), 0.37
 * without either; the network without the region cue 0.69; gPb alone
 * (forest_weight 0) with the region cue 0.44, as the forest as the detector with it; without the
 * cue (region_weight 0, or a cue without contours) 0.55 with the forest's map, 0.64 without, 0.47
 * for the forest as the detector (the region cue's divisor and the forest's low background lower
 * the levels). */
double dsg_options_auto_level(const dsg_options *opt);
/* The spectral term's weight in gPb (spectral_weight): the best boundary F of segment's
 * contours on BSDS500 train (docs/QUALITY.md, "gPb"). */
#define DSG_SPECTRAL_WEIGHT 0.2
/* The region cue's weight in the hierarchy's merges (region_weight): fit on BSDS500 train's
 * first 50 images (docs/QUALITY.md, "The region cue"). */
#define DSG_REGION_WEIGHT 0.2
/* The forest's weight in the hierarchy's map (forest_weight): fit on BSDS500 train's first 50
 * images (docs/QUALITY.md, "The forest joins gPb"). */
#define DSG_FOREST_WEIGHT 0.25
/* The learnt strengths' share of the base boundaries' strengths (arc_weight): 0.3 was fit on
 * BSDS500 train's first 50 images without the network (docs/QUALITY.md, "The base arcs' learnt
 * strengths"); with it they cost regions, and are off. */
#define DSG_ARC_WEIGHT 0.0
/* The boundary network's share of the hierarchy's map (net_weight): its map alone in gPb's
 * place scored best on BSDS500 train (docs/QUALITY.md, "The boundary network"). */
#define DSG_NET_WEIGHT 1.0
#define DSG_MAX_CUT 9999  /* regions of a cut of the hierarchy at most */
#define DSG_MAX_RADIUS 30 /* disc radius at most */
/* The default working resolution (work_pixels): BSDS500's photographs (481 x 321) are segmented
 * whole, larger ones at about that size (docs/QUALITY.md measures the choice). */
#define DSG_WORK_PIXELS 160000
#define DSG_MIN_WORK_PIXELS 1024 /* the smallest working resolution */
/* The smallest tol diaseg honours. The eigenvectors are float32: |N u - lambda u| of a float32
 * vector, measured with a float32 product, comes out at 1e-7 to 3e-7 |lambda| however far the
 * solver went, so below this a solver would call pairs converged that miss tol many times over
 * (at tol 1e-12: residuals 1e5 tol). At 1e-6 the measured residuals of the solver's pairs meet
 * tol |lambda| up to that rounding (at most 1.0004 tol |lambda| on the sample images, both solvers,
 * C path and OpenCL: docs/RELIABILITY.md); dsg_options_check refuses a smaller tol. */
#define DSG_MIN_TOL 1e-6
/* tol 0 (the default) chooses by what the eigenvectors are for (measured on BSDS500 val,
 * docs/QUALITY.md): DSG_TOL_HIERARCHY when they feed the hierarchy's gPb (chfsi from the coarse
 * start, solver auto: the BSDS500 train scores of its vectors at 1e-3 are above Lanczos' at 1e-5),
 * DSG_TOL_VECTORS when they are the result or k-means groups them (k-means labels at 1e-5 agree
 * with 1e-6's on 95% of the pixels, at 1e-3 on 44%). */
#define DSG_TOL_AUTO 0.0
#define DSG_TOL_HIERARCHY 1e-3
#define DSG_TOL_VECTORS 1e-5

/* The defaults: k auto, tol auto, work_pixels DSG_WORK_PIXELS, seed 1, restarts 8, grouping
 * hierarchy, spectral_weight DSG_SPECTRAL_WEIGHT, min_region 0 (automatic), region_weight
 * DSG_REGION_WEIGHT, forest_weight DSG_FOREST_WEIGHT, arc_weight DSG_ARC_WEIGHT, net_weight
 * DSG_NET_WEIGHT, affinity contour,
 * radius 5, sigma_i 0.1, sigma_x 4, sigma_c 0.1, nev 16, tol auto, max_iter 1000, solver auto,
 * matvec auto; no list of k (ks NULL, nks 0); no callbacks. */
void dsg_options_init(dsg_options *opt);
/* Checks opt on its own (names, ranges, every k of ks, tol against DSG_MIN_TOL), before any work.
 * Returns DSG_OK or DSG_ERR_INVALID. */
int dsg_options_check(const dsg_options *opt);

/* The groupings: "hierarchy", "kmeans" (NULL past the end). */
int dsg_grouping_count(void);
const char *dsg_grouping_name(int i);

/* The cue table: cue i's name for i in [0, dsg_cue_count()), NULL past the end. */
int dsg_cue_count(void);
const char *dsg_cue_name(int i);
/* The boundary detectors: detector i's name for i in [0, dsg_detector_count()), NULL past the
 * end ("auto", "forest", "gradients"). */
int dsg_detector_count(void);
const char *dsg_detector_name(int i);
/* The detector opt's contour cue runs ("auto" resolved: "gradients"), NULL for a cue without
 * contours or a name not in the tables (report.json's and matrix.json's "detector"). */
const char *dsg_options_detector(const dsg_options *opt);

/* ---- segmentation ---------------------------------------------------------------------------*/
typedef struct dsg_result dsg_result;

/* Segments img with opt (k = 0: eigenpairs only). Returns DSG_OK; DSG_ERR_NOCONV when the
 * solver stopped at max_iter (*out holds the pairs that converged, flagged, and labels only if
 * k of them did); DSG_ERR_INTERRUPTED; or another error with *out NULL. Free with
 * dsg_result_destroy. */
int dsg_segment(const dsg_image *img, const dsg_options *opt, dsg_result **out);
void dsg_result_destroy(dsg_result *r);

int dsg_result_width(const dsg_result *r);
int dsg_result_height(const dsg_result *r);
/* The size the image was segmented at (opt.work_pixels): the eigenvectors', the degrees' and the
 * hierarchy's (dsg_result_ucm); width and height when the image was not shrunk. */
int dsg_result_work_width(const dsg_result *r);
int dsg_result_work_height(const dsg_result *r);
/* Segment labels 0 .. k-1, width * height int32, numbered in order of first appearance; NULL
 * without grouping (k = 0, or fewer than k pairs converged). With a list (opt.ks), the first
 * k's labels: dsg_result_labels_k(r, opt.ks[0]). */
const int32_t *dsg_result_labels(const dsg_result *r);
/* The groupings of the run: 0 (k = 0), 1 (a single k) or opt.nks; the i-th one's k (in the
 * order of opt.ks; 0 for i out of range). */
int dsg_result_nk(const dsg_result *r);
int dsg_result_k_at(const dsg_result *r, int i);
/* The labels for k (as dsg_result_labels); NULL when k was not asked for, or fewer than k pairs
 * converged. */
const int32_t *dsg_result_labels_k(const dsg_result *r, int k);
/* Converged eigenpairs, eigenvalues descending. */
int dsg_result_nconv(const dsg_result *r);
const double *dsg_result_eigenvalues(const dsg_result *r);
/* nconv unit eigenvectors of N, vector i at i * width * height (float). */
const float *dsg_result_eigenvectors(const dsg_result *r);
/* |N u_i - lambda_i u_i|, measured with one more product of each u_i after the solve. */
const double *dsg_result_residuals(const dsg_result *r);
/* The boundary detector's strength (width * height floats, dsg_contours' map) when the cue uses
 * contours, else NULL. */
const float *dsg_result_contours(const dsg_result *r);
/* The ultrametric contour map of the hierarchy (grouping "hierarchy") into ucm, BSDS500's
 * doubled grid of (2 height + 1) x (2 width + 1) floats: pixel (x, y) at (2x + 1, 2y + 1), the
 * boundary between two pixels between them, holding the level at which the regions on its two
 * sides merge (a cut at threshold t keeps the boundaries above t), corners (the frame's too) the
 * strongest boundary meeting there, 0 inside regions and on the frame's other cells (as BSDS500's
 * ucm2: cutting at t, scipy.ndimage.label(ucm <= t)[0][1::2, 1::2], gives the regions of level
 * t, and ucm[2::2, 2::2] >= t is the boundary map its benchmark scores). DSG_ERR_INVALID
 * without a hierarchy. */
int dsg_result_ucm(const dsg_result *r, float *ucm);

/* ---- the hierarchy after the run ----------------------------------------------------------------
 * Cuts of the region hierarchy at other k or levels than the run's, without running again. */
typedef struct dsg_hierarchy dsg_hierarchy;
/* Moves r's hierarchy (grouping "hierarchy") into *out; r keeps all else (dsg_result_ucm then
 * refuses). DSG_ERR_INVALID when r has none. Free with dsg_hierarchy_destroy. */
int dsg_result_take_hierarchy(dsg_result *r, dsg_hierarchy **out);
void dsg_hierarchy_destroy(dsg_hierarchy *h);
/* The regions of its finest level, the most a cut holds. */
int dsg_hierarchy_regions(const dsg_hierarchy *h);
/* The cut at k regions (k >= 1; all its regions where it has fewer) or, with k = 0, at level
 * threshold (the merges at or below it made), into labels (the image's width * height), as the
 * run makes its labels for that k or threshold: 0 .. *segments - 1 (segments optional) in order
 * of first appearance. img: the image the run segmented, which the labels are refined against
 * where the run worked at a smaller size (dsg_result_work_width); NULL where it did not. */
int dsg_hierarchy_cut(const dsg_hierarchy *h, const dsg_image *img, int k, double threshold,
                      int32_t *labels, int *segments);
/* D^1/2 per pixel (generalised vectors are D^-1/2 u). */
const double *dsg_result_sqrt_degree(const dsg_result *r);
/* 1 when all nev pairs converged. When not, the solver's own words ("" otherwise). */
int dsg_result_converged(const dsg_result *r);
const char *dsg_result_note(const dsg_result *r);

/* Products with N in the final eigensolve (the report's matvec_count). */
long dsg_result_products(const dsg_result *r);

/* Seconds per stage of dsg_segment. */
typedef struct dsg_timing {
  double affinity; /* features, W, N */
  double setup;    /* components, the backend (device, kernels, upload) */
  double solve;    /* every eigensolve, speck carving rounds included */
  double cluster;  /* embedding and k-means, every k of a list */
  double total;
  double contours;   /* the boundary detector (part of affinity; 0 for a cue without contours) */
  double resolution; /* shrinking to the working size and bringing labels and contours back */
} dsg_timing;
dsg_timing dsg_result_timing(const dsg_result *r);

/* What the caller knows about a run and the library does not, for the report. */
typedef struct dsg_report_info {
  const char *command;             /* "segment" or "eigs"; NULL: "segment" when k > 0 */
  const char *image;               /* the input's name, e.g. its path; NULL: null */
  int input_width, input_height;   /* before the caller resampled it; 0: the image's size */
  int resize_width, resize_height; /* the caller's resampling; 0: none */
  long long max_pixels;            /* the caller's cap on pixels; 0: null */
  double load_s, write_s, total_s; /* the caller's stages; total 0: the library's total */
} dsg_report_info;

/* The run's report as JSON text (docs/CLI.md, "report.json"): sizes, every parameter, matrix,
 * components, eigenvalues, residuals, backend, segmentation, seconds per stage. "k" and
 * "segmentation" are the first (or only) k's; "ks" lists every k (null without grouping) and
 * "segmentations" holds one "segmentation" object per k, with its "k", in the same order. info
 * may be NULL. *json is malloc'd, NUL-terminated, *len bytes (free with dsg_free). */
int dsg_result_report(const dsg_result *r, const dsg_report_info *info, char **json, size_t *len);

/* The checks dsg_segment makes of an image's size against opt (at least 2 pixels, nev and ncv
 * below the pixel count), for callers that want them before other work. */
int dsg_check_size(const dsg_options *opt, int width, int height);
/* What a segment of a width x height image takes in memory with opt, from the sizes alone
 * (docs/PIPELINE.md, "Memory": a linear model of the image's and the working size's pixels, the
 * disc and the solver's vectors; rounded up from measurements). */
typedef struct dsg_memory {
  long long work_pixels; /* the size the problem is solved at */
  double host_cpu;       /* host bytes at the run's peak on the C path */
  double host_opencl;    /* host bytes at the run's peak on the OpenCL path */
  double device;         /* device bytes at the peak on the OpenCL path */
  double device_buffer;  /* its largest single buffer (the matrix, or Lanczos' basis) */
  double affinity;       /* host bytes of dsg_affinity: N at the image's own size */
} dsg_memory;
void dsg_memory_need(const dsg_options *opt, int width, int height, dsg_memory *m);
/* dsg_memory_need against what there is: the host's available memory (or opt->max_memory) and,
 * for matvec "opencl" or "auto" with a GPU, that device's memory and largest allocation (or
 * cl_max_mem, cl_max_alloc). DSG_OK, or DSG_ERR_LIMIT saying what ran short and what image size
 * would fit. "auto" with a device too small is DSG_OK where the C path fits: dsg_segment then
 * takes it. dsg_segment checks this before any work; callers may ask first. work_pixels < 0
 * (which no run takes) is full resolution with no working size offered in the message, for
 * callers that have none (diaseg bench). */
int dsg_check_memory(const dsg_options *opt, int width, int height);
/* dsg_memory_need's host_cpu, for saying what a run will cost before it starts. */
double dsg_estimate_bytes(const dsg_options *opt, int width, int height);

/* ---- the recipe in two steps ----------------------------------------------------------------
 * dsg_segment is dsg_problem_create + dsg_problem_solve. A caller that solves one image several
 * ways (diaseg bench: every backend and kernel) builds the problem once. */
typedef struct dsg_problem dsg_problem;

/* Features, N, its connected components and specks, and the checks (options, size, enough
 * linked pixels for nev). Free with dsg_problem_destroy. */
int dsg_problem_create(const dsg_image *img, const dsg_options *opt, dsg_problem **out);
void dsg_problem_destroy(dsg_problem *p);
/* The backend opt asks for, the eigensolve with the speck carving rounds, and the grouping:
 * what dsg_segment does after the problem. p is updated (carved specks) and may be solved again.
 * Same returns as dsg_segment. */
int dsg_problem_solve(dsg_problem *p, const dsg_options *opt, dsg_result **out);

/* For measuring the backend itself (diaseg bench), with spmv.h: the problem's matrix N with its
 * values on the host (read back where the problem left them on the device; the status of that),
 * a matvec
 * on the backend opt asks for (made ready for opt's solver when `solve`), and the solve of
 * dsg_problem_solve on that matvec (the caller destroys it). */
struct spmv_dia;
struct spmv_matvec;
int dsg_problem_dia(const dsg_problem *p, const struct spmv_dia **N);
int dsg_problem_matvec(dsg_problem *p, const dsg_options *opt, int solve, struct spmv_matvec **mv);
int dsg_problem_solve_on(dsg_problem *p, const dsg_options *opt, struct spmv_matvec *mv,
                         dsg_result **out);

/* ---- the affinity alone ---------------------------------------------------------------------*/
typedef struct dsg_matrix dsg_matrix;

/* N = D^-1/2 W D^-1/2 of img with opt's cue, radius and sigmas, as a DIA matrix:
 * values[d * pitch + row] = N[row, row + offsets[d]], zero where the column is outside [0, n)
 * and for rows >= n; offsets ascending. Free with dsg_matrix_destroy. */
int dsg_affinity(const dsg_image *img, const dsg_options *opt, dsg_matrix **out);
void dsg_matrix_destroy(dsg_matrix *m);
int dsg_matrix_rows(const dsg_matrix *m);
int dsg_matrix_ndiag(const dsg_matrix *m);
size_t dsg_matrix_pitch(const dsg_matrix *m);
const int *dsg_matrix_offsets(const dsg_matrix *m);
const float *dsg_matrix_values(const dsg_matrix *m);
const double *dsg_matrix_sqrt_degree(const dsg_matrix *m);

/* ---- contours -------------------------------------------------------------------------------
 * The boundary detector (docs/PIPELINE.md, "Contours"): oriented chi-squared gradients of
 * brightness, colour (CIELAB a, b) and texture (textons) over half-discs at 3 scales and 8
 * orientations, combined with weights fit on BSDS500 train, thinned by non-maximum suppression.
 * *strength: width * height floats in [0, 1), 0 off the contours. *parts (optional; NULL to skip):
 * dsg_contour_parts() maps of width * height floats, each part's gradient at its best orientation
 * before the combination (for fitting the weights). Free both with dsg_free. opt (optional) gives
 * the cancel flag. Any image size works (the borders are reflected). */
int dsg_contours(const dsg_image *img, const dsg_options *opt, float **strength, float **parts);
int dsg_contour_parts(void);
const char *dsg_contour_part_name(int p);

/* ---- devices --------------------------------------------------------------------------------*/
typedef struct dsg_device {
  int index; /* across all platforms, in enumeration order: what cl_device takes */
  char platform[96];
  char name[96];
  char version[64];                                    /* the device's OpenCL version string */
  int gpu, cpu;                                        /* its type */
  unsigned long long global_mem, max_alloc, local_mem; /* bytes */
  int compute_units;
  size_t max_work_group;
  int image_support;
  size_t image2d_max_width, image2d_max_height;
  int fp64;
} dsg_device;

/* Every OpenCL device of every platform into *list (malloc'd: free with dsg_free). Returns
 * DSG_OK, or DSG_ERR_NODEVICE with a message when there is no platform (no ICD) or no device. */
int dsg_devices(dsg_device **list, int *count);
/* The device `spec` names (an index, or a case-insensitive substring of "platform name"); NULL
 * or "": the first GPU, else (unless gpu_only) the first device. DSG_OK or DSG_ERR_NODEVICE. */
int dsg_device_pick(const dsg_device *list, int count, const char *spec, int gpu_only, int *index);
/* The devices as JSON text, for programs: {"auto_device": the GPU that matvec "auto" takes (-1:
 * the C path), "opencl_device": the device matvec "opencl" takes with `cl_device` (-1: none),
 * "devices": [{index, platform, name, version, type, global_mem, max_alloc, local_mem,
 * compute_units, image_support, image2d_max_width, image2d_max_height, fp64}]}. No OpenCL
 * platform gives DSG_ERR_NODEVICE. *json is malloc'd (free with dsg_free). */
int dsg_devices_json(const char *cl_device, char **json, size_t *len);
/* Gets the OpenCL device a run with opt will use ready before the run: opens it (its context and
 * queue) and builds every program dsg_segment builds on it with opt (the boundary detector's and
 * the affinity's for a cue with contours; the DIA product's; the solver's), with the same build
 * options, into the process-wide cache, where the run then finds them (with solver "auto", the
 * solver of an image of at least 116 pixels a side: a smaller image's run takes Lanczos and builds
 * its kernels itself). Opening a GPU and building
 * its programs take a few tenths of a second on the first run of a process: a caller can pay them
 * on a thread of its own while it reads the image (the diaseg command does), and join it before
 * dsg_segment. It runs a tiny image through those device paths (a few milliseconds of host work
 * beside the device's), logs nothing and reports no progress; opt->cancel stops it. Thread-safe.
 * matvec "cpu": nothing to do, DSG_OK at once. "auto": DSG_OK whatever happens (no GPU: nothing to
 * do; a device that fails: the run meets the failure and falls back as it would have). "opencl":
 * DSG_OK, or the error the run would meet on the device (DSG_ERR_NODEVICE, DSG_ERR_OPENCL,
 * DSG_ERR_LIMIT, ...), or DSG_ERR_INVALID for options dsg_options_check refuses. */
int dsg_prepare(const dsg_options *opt);
/* Solves ahead what a dsg_segment of img with opt needs of the image alone: chfsi's coarse start
 * (the image at the run's working size shrunk 5x, made into its problem and solved on the host's
 * C path; docs/PIPELINE.md, "Coarse-to-fine starts"). It is kept for the process's next run of the
 * same pixels and options, which then takes it instead of solving it itself (on a device run, on
 * a worker thread beside the device's stages, whose end the run may wait for); report.json's
 * `coarse_start.ahead` says so. It makes no OpenCL call, so a caller can run it while dsg_prepare
 * opens the device on another thread (the diaseg command does, in the device's opening time). One
 * solve is kept: a later call replaces it; a run of other pixels or options leaves it. Nothing to
 * do (DSG_OK) where the run takes no coarse start (solver lanczos or arpack, coarse_start 0, an
 * image under 116 pixels a side). With detector "forest" and a contour cue it first makes the
 * edge forest's map of the image (its model parsed once per process), which the run of the same
 * pixels then takes in place of its contours stage's work (0.2-0.35 s of it on 16 cores).
 * Returns DSG_OK or the error of the options, the image, the model or the coarse solve
 * (DSG_ERR_NOMEM, DSG_ERR_INTERRUPTED, ...), which the run would meet or not; the run does not
 * depend on it. Thread-safe. */
int dsg_presolve(const dsg_image *img, const dsg_options *opt);

/* ---- pictures -------------------------------------------------------------------------------
 * RGB pictures (width * height * 3 bytes, malloc'd: free with dsg_free) of the results. */
/* The colour of segment `label` (a fixed qualitative palette, then golden-ratio hues). */
void dsg_label_color(int label, unsigned char rgb[3]);
/* Viridis colour for t in [0, 1] (clamped). */
void dsg_viridis(double t, unsigned char rgb[3]);
/* The colour maps of dsg_picture_field_map, a table: map i's name for i in
 * [0, dsg_colormap_count()) ("viridis", "magma", "inferno", "gray", "coolwarm", "RdBu"; NULL past
 * the end), and whether it is diverging (1: coolwarm, RdBu; 0 otherwise or out of range). */
int dsg_colormap_count(void);
const char *dsg_colormap_name(int i);
int dsg_colormap_diverging(int i);
/* One colour per segment. */
int dsg_picture_labels(const int32_t *labels, int width, int height, unsigned char **rgb);
/* The image (as RGB) lightly tinted by segment colour, with segment boundaries drawn. */
int dsg_picture_overlay(const dsg_image *img, const int32_t *labels, unsigned char **rgb);
/* Picture of a scalar field (width * height floats) with the colour map named `colormap` (a
 * dsg_colormap_name, matched without regard to case; NULL: viridis). A sequential map spans the
 * field's 1st to 99th percentile; a diverging map puts 0 at its middle colour and spans -p to +p,
 * p the 99th percentile of |field| (eigenvectors are signed). Values beyond take the end colours.
 * Returns DSG_OK, DSG_ERR_INVALID for a name not in the table (the message lists the names) or
 * DSG_ERR_NOMEM; *rgb is NULL on error. */
int dsg_picture_field_map(const float *field, int width, int height, const char *colormap,
                          unsigned char **rgb);
/* dsg_picture_field_map with viridis. */
int dsg_picture_field(const float *field, int width, int height, unsigned char **rgb);

/* Frees memory the library handed out (report and device texts, pictures). */
void dsg_free(void *p);

#ifdef __cplusplus
}
#endif

#endif /* DIASEG_H */
