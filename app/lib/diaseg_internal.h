/* The library's internals: the stages of the recipe as functions on arrays, for segment.c, the
 * library's other units and the library's own tests (tests/lib). Not installed.
 *
 * cues.c       the cue table: per-pixel features
 * contours.c   the boundary detector (oriented histogram gradients, non-maximum suppression)
 * affinity.c   the radius-r disc, W, D and N = D^-1/2 W D^-1/2 in DIA form; components, specks
 * cluster.c    spectral embedding and k-means++
 * picture.c    labels / overlay / eigenvector pictures (colour maps)
 * backend.c    choosing the backend (C path or an OpenCL device) for a problem
 * memory.c     what a run needs in host and device memory, against what there is
 * segment.c    the recipe: problem -> solve (speck rounds) -> grouping; the public API
 * report.c     the report's JSON
 * devices.c    the OpenCL device list for callers
 * Formulas: docs/PIPELINE.md.
 */
#ifndef DIASEG_INTERNAL_H
#define DIASEG_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diaseg.h"
#include "eigensolver.h"
#include "spmv.h"
#include "spmv_image.h"

/* ---- cues ------------------------------------------------------------------------------- */

typedef struct app_cue {
  const char *name;        /* "intensity", "color", "contour", "contour+color" */
  const char *description; /* one line, for help texts */
  int nfeat;               /* floats per pixel (0: no feature term) */
  /* the features of one pixel p (c channels) into f (nfeat floats); NULL when nfeat is 0 */
  void (*features)(const unsigned char *p, int c, float *f);
  int contours; /* 1: the intervening-contour term of the boundary detector's strength */
} app_cue;

/* The cue called `name`. Returns DSG_OK or DSG_ERR_INVALID with a message listing the names. */
int app_cue_find(const char *name, const app_cue **out);
/* Per-pixel features: *nfeat floats per pixel, row-major. Caller frees *out. */
int app_features(const dsg_image *img, const app_cue *cue, float **out, int *nfeat);

/* ---- contours (contours.c) ------------------------------------------------------------- */

#define APP_CONTOUR_CHANNELS 4     /* brightness L, colour a, colour b, texture */
#define APP_CONTOUR_SCALES 3       /* half-disc radii per channel */
#define APP_CONTOUR_PARTS 12       /* channel x scale, channel-major */
#define APP_CONTOUR_ORIENTATIONS 8 /* o pi / 8, o = 0 .. 7 */
#define APP_CONTOUR_RMAX 20        /* the largest radius */
#define APP_CONTOUR_REACH                                                                          \
  2                              /* thinning: a pixel is kept when it is the largest within        \
                                  * this many pixels on both sides along the normal */
#define APP_TEXTON_CONTRAST 0.03 /* texton responses: F <- F log(1 + |F| / this) / |F| */
#define APP_TEXTONS 32           /* the texton dictionary's size: the texture channel's bins */
#define APP_TEXTON_DIM                                                                             \
  10 /* filter responses per pixel: Gaussian derivatives x, y, xx,                                 \
      * sqrt2 xy, yy of L / 100 at sigma 1 and 2 */

typedef struct app_contour_channel {
  const char *name;
  int bins;                       /* histogram bins */
  double smooth;                  /* Gaussian smoothing along the bins (sigma in bins; 0: none) */
  int radius[APP_CONTOUR_SCALES]; /* ascending, <= APP_CONTOUR_RMAX */
} app_contour_channel;

const app_contour_channel *app_contour_channel_at(int c);
/* sRGB pixel (c channels; gray repeats) -> CIELAB, D65 */
void app_rgb_to_lab(const unsigned char *p, int c, float lab[3]);
/* The bin of every pixel in each channel: bins[c * n + i] (n = pixels), textons included. */
int app_contour_bins(const dsg_image *img, unsigned char *bins);
/* The texton filters' responses of lum (L / 100): resp[i * APP_TEXTON_DIM + d], contrast-
 * normalised per pixel. */
int app_texton_responses(const float *lum, int width, int height, float *resp);
/* The texton dictionary: APP_TEXTONS x APP_TEXTON_DIM floats, row-major (contours.c). */
const float *app_texton_centres(void);
/* The detector's binning on the device (spmv_image.h's spmv_contour_binning), its tables filled
 * from the C path's own constants: the sRGB curve, the L, a, b ranges, the texton filters and
 * the dictionary (b points into the struct and at the dictionary). */
typedef struct app_contour_binning {
  spmv_contour_binning b;
  float linear[256];
  float taps[6][13]; /* orders 0, 1, 2 at sigma 1, then at sigma 2 (radius 3, 6) */
  const float *filter[6];
  int radius[6];
  int row[APP_TEXTON_DIM], column[APP_TEXTON_DIM];
  float scale[APP_TEXTON_DIM];
} app_contour_binning;
void app_contour_binning_init(app_contour_binning *t);
/* The offsets of the disc of `radius` without its centre, nearest first, with their sectors
 * (0 .. 15, see contours.c); count_within[r] (optional, radius + 1 ints): how many lie within r.
 * Returns the count, -1 when out of memory. */
int app_contour_disc(int radius, int *dx, int *dy, int *sector, int *count_within);
/* chi2 half-disc gradients of the binned channels: grad[((p * 8) + o) * n + i] for part p,
 * orientation o, pixel i (the C reference of the OpenCL kernel). */
int app_contour_gradients(const unsigned char *bins, int width, int height,
                          const volatile sig_atomic_t *cancel, float *grad);
/* A combination of the parts: strength = (logistic(bias + sum_p part[p] chi2_p) - s0) / (1 - s0),
 * s0 = logistic(bias), so that no gradient is 0. Two are fit (contours.c), as gPb fits two: the
 * detector alone (mPb: `diaseg contours`, dsg_contours, and the contour cue where no spectral
 * term joins) and the local part of gPb (the default segment: a contour cue, a positive spectral
 * weight and the hierarchy; its spectral weight and automatic level were measured with it).
 * segment.c's uses_gpb picks one, for dsg_affinity and dsg_segment alike. */
typedef struct app_contour_weights {
  double part[APP_CONTOUR_PARTS];
  double bias;
} app_contour_weights;
extern const app_contour_weights app_contour_alone, app_contour_local;

/* The weighted combination: strength[i] = max over o, orientation[i] = its o; oriented (optional,
 * 8 n floats) the combination at every orientation. */
void app_contour_combine(const float *grad, int width, int height, const app_contour_weights *cw,
                         float *strength, float *oriented, unsigned char *orientation);
/* gPb: the spectral term (spectral, APP_CONTOUR_ORIENTATIONS n floats as app_spectral_gradient
 * writes them) joins the detector's combination at every orientation (oriented, as
 * app_contour_combine writes it), in its linear part: x(o) = z(o) + weight spectral(o), z the
 * weighted sum of the parts (recovered from the logistic), then v(o) = x / (x + x_half), x_half
 * the z of strength 0.5: no saturation (the logistic of x = 40, where a strong spectral edge
 * takes it, is 1 in float and flattens the crest); strength = max_o v, orientation its o. */
void app_contour_gpb(const float *oriented, const app_contour_weights *cw, const float *spectral,
                     double weight, int width, int height, float *strength,
                     unsigned char *orientation);
/* app_contour_gpb then app_contour_thin on the device im, the spectral term made there from
 * the eigenvectors s (spmv_cl_gpb; app_spectral_gpb_cl builds s): strength, orientation and thin
 * (each optional, n values) as app_contour_gpb's strength and orientation and app_contour_thin's
 * out. */
int app_contour_gpb_cl(spmv_cl_image *im, const spmv_spectral *s, const float *oriented,
                       const app_contour_weights *cw, double weight, int width, int height,
                       float *strength, unsigned char *orientation, float *thin);
/* Non-maximum suppression of m across each pixel's orientation: kept where larger than the
 * bilinear samples 1 .. APP_CONTOUR_REACH pixels along the normal on one side and not smaller
 * on the other. */
void app_contour_thin(const float *m, const unsigned char *orientation, int width, int height,
                      float *out);
/* The detector: thinned strength (n floats) and, optional, each part's maximum over orientations
 * (parts n floats each), the strength before thinning (soft, n floats) and the combination at
 * every orientation (oriented, APP_CONTOUR_ORIENTATIONS n floats, orientation-major), and the
 * channels' bins (bins, APP_CONTOUR_CHANNELS n bytes as app_contour_bins writes them). */
int app_contours(const dsg_image *img, const app_contour_weights *cw,
                 const volatile sig_atomic_t *cancel, float *strength, float *parts, float *soft,
                 float *oriented, unsigned char *bins);
/* app_contour_bins on an OpenCL device (spmv_cl_contours_rgb's bins alone, within its
 * tolerances). */
int app_contour_bins_cl(spmv_cl_image *im, const dsg_image *img, unsigned char *bins);
/* The same with the bins, gradients, combination and thinning on an OpenCL device
 * (spmv_image.h; its bins are app_contour_bins' within spmv_cl_contours_rgb's tolerances). */
int app_contours_cl(spmv_cl_image *im, const dsg_image *img, const app_contour_weights *cw,
                    const volatile sig_atomic_t *cancel, float *strength, float *parts, float *soft,
                    float *oriented, unsigned char *bins);
/* The detector table (contours.c): dsg_options.detector's names. */
enum { APP_DETECTOR_AUTO, APP_DETECTOR_FOREST, APP_DETECTOR_GRADIENTS };
typedef struct app_detector {
  const char *name;
  const char *description; /* one line, for help texts */
  int kind;                /* APP_DETECTOR_* */
} app_detector;
/* The detector `name` names (NULL: "auto"), "auto" resolved for the contours alone (alone = 1:
 * dsg_contours without parts, the forest) or else (alone = 0: segment's contour cues, whose gPb
 * and hierarchy the defaults were fit with the gradients; the gradients' parts): never the
 * "auto" row. DSG_ERR_INVALID, named, for a name not in the table. */
int app_detector_find(const char *name, int alone, const app_detector **out);
/* The detector det (app_detector_find): the gradients on *im (app_image_device; NULL: the C
 * path; when the device fails and opt->matvec is "auto", a warning, *im is destroyed and set to
 * NULL, and the C path runs), with the weights cw; the forest on *im or the host (no parts, no
 * orientations; strength may be NULL when soft is given: its map alone, not thinned). bins
 * (optional): the channels' bins, as app_contours (the forest's run: app_contour_bins), for the
 * hierarchy's region cue. */
int app_contours_on(spmv_cl_image **im, const dsg_options *opt, const app_detector *det,
                    const dsg_image *img, const app_contour_weights *cw, float *strength,
                    float *parts, float *soft, float *oriented, unsigned char *bins);

/* i reflected into [0, n) (..., 1, 0 | 0, 1, ..., n-1 | n-1, n-2, ...), for any i and n >= 1 */
static inline int app_reflect(int i, int n)
{
  const int period = 2 * n;
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - 1 - i;
}

/* dst = src convolved with kx (2r + 1 taps) along rows, then ky along columns, borders
 * reflected; tmp holds width * height floats */
void app_conv_sep(const float *src, int width, int height, const float *kx, const float *ky, int r,
                  float *tmp, float *dst);
/* Adds the oriented gradient of src to out: gx = src * (kx k1, ky k0), gy = src * (kx k0, ky k1)
 * (k0 smoothing, k1 derivative, radius r, as app_conv_sep), then at each orientation o < norient
 * out[o n + i] += |nx gx + ny gy| with (nx, ny) = scale (-sin, cos)(o pi / norient), or with
 * norient 0 out[i] += scale |(gx, gy)|. Bit for bit what two app_conv_sep calls and those sums
 * give, in two passes over the image instead of 2 + norient. norient <= APP_CONTOUR_ORIENTATIONS;
 * tmp0, tmp1: n floats each. */
void app_gradient_add(const float *src, int width, int height, const float *k0, const float *k1,
                      int r, float scale, int norient, float *tmp0, float *tmp1, float *out);

/* ---- the structured edge forest (forest.c) ----------------------------------------------- */

#define APP_FOREST_SHRINK 2    /* channels at half resolution */
#define APP_FOREST_PATCH 32    /* a tree reads the 32 x 32 pixels around a place */
#define APP_FOREST_OUT 16      /* and its leaf writes the 16 x 16 in the middle */
#define APP_FOREST_STRIDE 2    /* a place at every other pixel each way */
#define APP_FOREST_CHANNELS 13 /* L a b, |g| and 4 orientations at full, the same at half size */
#define APP_FOREST_ORIENTS 4
#define APP_FOREST_CELLS 5 /* self-similarity: 5 x 5 cells, every pair */
#define APP_FOREST_PAIRS                                                                           \
  (APP_FOREST_CELLS * APP_FOREST_CELLS * (APP_FOREST_CELLS * APP_FOREST_CELLS - 1) / 2)
#define APP_FOREST_REG_FEATURES                                                                    \
  ((APP_FOREST_PATCH / APP_FOREST_SHRINK) * (APP_FOREST_PATCH / APP_FOREST_SHRINK) *               \
   APP_FOREST_CHANNELS)
#define APP_FOREST_FEATURES (APP_FOREST_REG_FEATURES + APP_FOREST_PAIRS * APP_FOREST_CHANNELS)
/* the gradient's magnitude is divided by its triangle mean of this radius */
#define APP_FOREST_NORM_RADIUS 4
#define APP_FOREST_REG_SMOOTH 1      /* the regular channels' triangle radius (half-size pixels) */
#define APP_FOREST_SIM_SMOOTH 4      /* the self-similarity channels' */
#define APP_FOREST_MAG_SCALE 98.0f   /* 8-bit codes of the normalised magnitude: 2.6 -> 255 */
#define APP_FOREST_HIST_SCALE 127.0f /* and of its histograms: 2 -> 255 */
#define APP_FOREST_SHARPEN 2         /* rings of a leaf's boundary the sharpening may move */
#define APP_FOREST_TREES_EVAL 4      /* trees read at each place */
#define APP_FOREST_MAX_SEGS 16       /* segments of a leaf */
#define APP_FOREST_GAIN 1.66f /* the map's scale (Dollar & Zitnick's for 2 sharpening rings) */
#define APP_FOREST_MAX_BYTES (256u << 20) /* a model's largest inflated size */
#define APP_FOREST_TOP 0x1.fffffep-1f     /* the thinned strength's largest value, below 1 */
#define APP_FOREST_BORDER 5        /* the thinned strength tapers to 0 over this many edge pixels */
#define APP_FOREST_ORIENT_RADIUS 4 /* the map's smoothing (a triangle) before its orientation */

/* An image's grid: padded by reflection, pad pixels each side and to a multiple of 4, pw x ph;
 * its channels cw x ch; rows x cols places. */
typedef struct app_forest_grid {
  int width, height, pad, pw, ph, cw, ch, rows, cols;
} app_forest_grid;
void app_forest_geometry(int width, int height, app_forest_grid *g);
/* Feature f's place in the channels of a cw x ch grid: a regular feature reads channel offset
 * a (b = -1), a self-similarity feature the difference a - b; relative to the place's corner. */
void app_forest_feature_at(int f, int cw, int ch, int *channel, int *a, int *b);
/* The 13 channels of img on grid g, 8 bits each, channel-major (13 cw ch bytes each): reg (the
 * regular channels) and sim (the self-similarity ones); color (optional, 3 pw ph floats) the
 * padded RGB in [0, 1] smoothed, for the sharpening; raw (optional, 13 cw ch floats) the channels
 * before smoothing and coding. */
int app_forest_channels(const dsg_image *img, const app_forest_grid *g, unsigned char *reg,
                        unsigned char *sim, float *color, float *raw);

/* A parsed forest: nodes of all trees in one array, tree t's root at tree[t]. */
typedef struct app_forest {
  int ntrees;
  uint32_t nnodes, nleaves, tree[65];
  uint16_t *fid;         /* the feature a node reads */
  int16_t *thr;          /* left when the feature is below it */
  uint32_t *child;       /* the left child (right = left + 1); 0 for a leaf */
  uint32_t *leaf;        /* a leaf's index */
  unsigned char *nsegs;  /* per leaf: its segments */
  uint32_t *seg_at;      /* per leaf: its patch's place among the patches (UINT32_MAX: one
                          * segment, no boundary) */
  uint32_t nmulti;       /* patches: the leaves of 2 segments or more */
  unsigned char *segs;   /* per patch: 16 x 16 labels */
  unsigned char *packed; /* the same 4 bits each, low nibble first (the file's, the device's) */
  unsigned char *ring;   /* the patches' boundary pixels and their rings (forest.c) */
  uint32_t *ring_start;  /* per patch: APP_FOREST_SHARPEN + 2 bounds into ring */
} app_forest;
/* The model's bytes (zlib-deflated, forest.c) into *out; DSG_ERR_FORMAT when damaged. */
int app_forest_parse(const unsigned char *data, size_t len, app_forest **out);
void app_forest_free(app_forest *F);
/* The forest that comes with the library, parsed on first use (thread-safe). */
int app_forest_default(const app_forest **out);

/* Every feature's channel offsets on a cw x ch grid (app_forest_feature_at), for the descents. */
typedef struct app_forest_lookup {
  int *a, *b;
} app_forest_lookup;
int app_forest_lookup_init(int cw, int ch, app_forest_lookup *lk);
void app_forest_lookup_free(app_forest_lookup *lk);
/* The leaf tree `tree` reaches at the place whose channel corner is `at` (r cw + c). */
uint32_t app_forest_descend(const app_forest *F, int tree, const unsigned char *reg,
                            const unsigned char *sim, size_t at, const app_forest_lookup *lk);
/* The forest's boundary map of img (width * height floats, before thinning), its leaves'
 * boundaries sharpened by `sharpen` rings (0 .. APP_FOREST_SHARPEN). */
int app_forest_detect(const app_forest *F, const dsg_image *img, int sharpen,
                      const volatile sig_atomic_t *cancel, float *E);
/* app_forest_detect on the device im (spmv_cl_forest, kernels/forest.cl; the same map from the
 * same channels, see spmv_image.h for the tolerances); probe (optional) as spmv_cl_forest's. */
int app_forest_detect_cl(spmv_cl_image *im, const app_forest *F, const dsg_image *img, int sharpen,
                         float *E, const spmv_forest_probe *probe);
/* The same at 3 scales (the image halved, as it is, doubled: each map brought back to its size
 * and the three averaged; for one row or column, the image's own map counts twice). */
int app_forest_detect_ms(const app_forest *F, const dsg_image *img, int sharpen,
                         const volatile sig_atomic_t *cancel, float *E);
/* E's orientation at each pixel (the edge along o pi / 8, as app_contour_thin reads it), from
 * the curvature of E smoothed (the triangle of APP_FOREST_ORIENT_RADIUS). */
int app_forest_orientation(const float *E, int width, int height, unsigned char *orientation);
/* In place: the triangle filter of radius r >= 0 (weights 1, 2, .., r + 1, .., 2, 1, over
 * (r + 1)^2) along the rows and then the columns of the width x height map m, the borders
 * reflected (app_reflect); each output sums its taps from -r to r in that order, in float.
 * tmp: width * height floats. The forest's channels, map and orientation smooth with it. */
void app_forest_triangle(float *m, int width, int height, int r, float *tmp);
/* The library's forest (2 sharpening rings) at `scales` scales (1: the image's own; 3:
 * app_forest_detect_ms, what `contours` and the contour cue read, APP_FOREST_SCALES): the
 * thinned strength (n floats in [0, 1): app_contour_thin across app_forest_orientation, tapered
 * to 0 over the APP_FOREST_BORDER pixels nearest the image's edge, at most APP_FOREST_TOP) and soft
 * the map before (unbounded: a little past 1 on sharp steps), either optional (not both): without
 * strength the thinning is not run; on the device im (the scales and the thinning:
 * spmv_cl_forest_contours), or on the host for NULL. */
int app_forest_contours(spmv_cl_image *im, const dsg_image *img, int scales,
                        const volatile sig_atomic_t *cancel, float *strength, float *soft);
/* The process's forest map made ahead (dsg_presolve): put makes app_forest_contours' maps of img
 * at APP_FOREST_SCALES (the thinned strength only where thin is non-zero) and keeps them with a
 * copy of its pixels, in place of any kept before; take copies them into strength and soft
 * (either may be NULL; a strength not made ahead is thinned from the map then, the same floats),
 * forgets them and returns 1 when img has the same pixels, else returns 0 and leaves them (0 and
 * forgets them where that thinning fails: the caller makes both again). Thread-safe. */
int app_forest_ahead_put(const dsg_image *img, int thin, const volatile sig_atomic_t *cancel);
int app_forest_ahead_take(const dsg_image *img, float *strength, float *soft);
/* The scales the library's forest reads, for the contours alone and as segment's contour cue: 3
 * scored above one on BSDS500 train with a forest fit on the rest (contours: boundary F 0.716
 * against 0.707; the cue's hierarchy: Covering 0.593 / PRI 0.809 / VI 1.629 / F 0.717 against
 * 0.577 / 0.808 / 1.647 / 0.707; docs/QUALITY.md). */
#define APP_FOREST_SCALES 3
/* -k auto's level with the region cue and gPb alone (forest_weight 0; dsg_options_auto_level):
 * the best Covering + F on BSDS500 train's first 50 images at the default region weight. */
#define APP_CUE_LEVEL 0.44
/* -k auto's level with the region cue and the forest's map joining gPb but without the base
 * arcs' learnt strengths (arc_weight 0): the default's level before them, fit as APP_CUE_LEVEL. */
#define APP_FOREST_MAP_CUE_LEVEL 0.37
/* -k auto's level with the base arcs' learnt strengths in place of the boundary network
 * (net_weight 0, arc_weight > 0): the default's level before the network, fit as APP_CUE_LEVEL. */
#define APP_ARC_CUE_LEVEL 0.36
/* -k auto's level with the boundary network and without the region cue, fit as DSG_AUTO_THRESHOLD
 * (docs/QUALITY.md, "The boundary network"). */
#define APP_NET_PLAIN_LEVEL 0.69
/* The forest's hierarchy levels u map to u / (u + APP_FOREST_LEVEL_HALF) (hierarchy.c): 0.24
 * puts the level of the best Covering + F on BSDS500 train (the first 50 images, a forest fit
 * on the other 150, the default region weight) at APP_CUE_LEVEL, as the gradients' level is
 * (0.12 did without the region cue, at 0.64). */
#define APP_FOREST_LEVEL_HALF 0.24
/* -k auto's levels without the region cue (region_weight 0; dsg_options_auto_level): the
 * gradients' best Covering + F on BSDS500 train before the cue, the same with the forest's map
 * joining gPb at the default forest_weight (the first 50 images, a forest fit on the other 150),
 * and the forest's as the detector (0.64 at the half 0.12 it was fit with) mapped through
 * APP_FOREST_LEVEL_HALF. */
#define APP_PLAIN_LEVEL 0.64
#define APP_FOREST_MAP_PLAIN_LEVEL 0.55
#define APP_FOREST_PLAIN_LEVEL 0.47
/* The forest as segment's contour cue: sigma_c and the spectral weight, fit for the gradients,
 * are scaled by these (0.1 -> 0.05, 0.2 -> 0.005: the best of those tried on BSDS500 train,
 * docs/QUALITY.md), so that the defaults carry over. */
#define APP_FOREST_SIGMA_C 0.5
#define APP_FOREST_SPECTRAL 0.025
/* E thinned as app_forest_contours thins it (n floats into strength). */
int app_forest_thin(const float *E, int width, int height, float *strength);
/* The forest's gPb: out = E + weight * max over o of spectral (APP_CONTOUR_ORIENTATIONS n
 * floats, as app_spectral_gradient writes them). */
void app_forest_gpb(const float *E, const float *spectral, double weight, int width, int height,
                    float *out);

/* ---- hierarchy (hierarchy.c) ------------------------------------------------------------ */

/* Watershed regions of a boundary map E and their greedy merging by mean boundary strength into
 * a hierarchy; every merge recorded, every crack's level (the ultrametric contour map). Cracks:
 * 2 p is the one right of pixel p, 2 p + 1 the one below. */
typedef struct app_hierarchy {
  int width, height;
  int nregions;           /* watershed regions */
  int32_t *region;        /* each pixel's watershed region */
  int nmerges;            /* nregions - 1 */
  int *merge_a, *merge_b; /* merge m joins the regions holding watershed regions a and b */
  float *merge_level;     /* ascending */
  float *crack_level;     /* 2 n: the level at which the crack's two sides join (0: same region) */
} app_hierarchy;

/* The default smallest region of the hierarchy: pixels / this (about 100 for a BSDS500 photo;
 * fit on BSDS500 train, docs/QUALITY.md), and at least a speck (APP_SPECK_PIXELS). */
#define APP_MIN_REGION_FRACTION 1500
/* Regions below min_area pixels merge before any other. */
int app_hierarchy_build(const float *E, int width, int height, int min_area, app_hierarchy *H);
/* The same with a region cue: the merge key adds the two regions' chi-squared distances of
 * their histograms of each channel of app_contour_bins' bins (APP_CONTOUR_CHANNELS n bytes),
 * times the channel's weight and a / (a + area), a the smaller region's pixels (hierarchy.c). */
typedef struct app_arc_cue app_arc_cue;
typedef struct app_region_cue {
  const unsigned char *bins;
  double weight[APP_CONTOUR_CHANNELS];
  double area;             /* > 0 */
  const app_arc_cue *arcs; /* the base arcs' learnt strengths (arcs.c), or NULL */
} app_region_cue;
/* The region cue's area: the image's pixels / this (about 3000 for a BSDS500 photo), and the
 * brightness histogram's share of the region weight (colour a, b and textons: 1); fit on
 * BSDS500 train with the default region weight (docs/QUALITY.md, "The region cue"). */
#define APP_REGION_AREA_FRACTION 50
#define APP_REGION_BRIGHTNESS 0.5
int app_hierarchy_build_cue(const float *E, const app_region_cue *cue, int width, int height,
                            int min_area, app_hierarchy *H);

/* ---- the base arcs' learnt strengths (arcs.c) -------------------------------------------- */
/* Once the specks have merged, each boundary between two of the regions left (a base arc) gets
 * a strength learnt from BSDS500 train's humans: a boosted regression ensemble (tests/bsds/
 * fit_arcs.py, embedded as app/lib/arcs/model.inc) reads APP_ARC_FEATURES numbers of the arc
 * (its cracks' strengths in the map, in gPb and in the forest's map; its length; its regions'
 * areas and histograms) and says how much of it lies on a person's boundary. Each crack of the
 * arc then has (1 - weight) x its own strength + weight x that. */
#define APP_ARC_FEATURES 25
typedef struct app_arc_record { /* what the hierarchy's base arcs were (tests/bsds/arc_data.c) */
  int narcs;
  double *features; /* narcs x APP_ARC_FEATURES */
  size_t ncracks;
  size_t *crack; /* the cracks on base arcs (2 p: right of p, 2 p + 1: below p) */
  int *arc;      /* each one's arc */
} app_arc_record;
void app_arc_record_free(app_arc_record *rec);
struct app_arc_cue {
  const float *gpb;       /* gPb before the forest's map joins it, n */
  const float *forest;    /* the forest's map, n */
  double weight;          /* the learnt strength's share, in (0, 1] */
  app_arc_record *record; /* optional: filled with the features and the cracks' arcs */
};
/* A node of the ensemble's trees (app/lib/arcs/model.inc: arc_model_nodes, tree t's from
 * arc_model_root[t]). */
typedef struct app_arc_node {
  double t;            /* a leaf's share of the prediction, else x[feature] <= t: left */
  int16_t feature;     /* -1: a leaf */
  int16_t left, right; /* the children, from the tree's first node */
} app_arc_node;
/* The feature's name (a table's row), NULL past the end. */
const char *app_arc_feature_name(int f);
/* The ensemble's prediction for one arc's features; for n arcs' (X: n x APP_ARC_FEATURES) into
 * y, the same sums in the same order, tree by tree over blocks of arcs. */
double app_arc_predict(const double *x);
void app_arc_predict_many(const double *X, int n, double *y);
/* What the hierarchy hands over at the base level: its regions' areas and histograms (the
 * region cue's layout: nbins per region, channel c's bins from first[c]) and the cracks on
 * base arcs, with each arc's two regions. */
typedef struct app_arc_input {
  int width, height;
  const float *E; /* the hierarchy's map */
  const app_arc_cue *cue;
  size_t ncracks;
  const size_t *crack;
  const int *arc;
  int narcs;
  const int *region_a, *region_b; /* per arc */
  const long *area;               /* per region */
  const float *hist;
  int nbins;
  const int *first, *bins;
} app_arc_input;
/* Each listed crack's strength into strength[ncracks]; the features and cracks into
 * in->cue->record when it is set. DSG_ERR_NOMEM with the message. */
int app_arc_strengths(const app_arc_input *in, float *strength);
/* Makes p's runs record their hierarchy's base arcs into rec (NULL: no more), for
 * tests/bsds/arc_data.c: the features the model is fit on are the library's own. */
void app_problem_record_arcs(dsg_problem *p, app_arc_record *rec);

/* ---- the boundary network (net.c) -------------------------------------------------------- */
/* A small convolutional network refines the hierarchy's map: from gPb, the forest's map and the
 * colours (APP_NET_INPUTS planes, app_net_input) it makes M in (0, 1), fit on BSDS500 train to
 * the persons' majority boundaries (tests/bsds/fit_net.py, embedded as app/lib/net/boundary.inc),
 * and the map becomes (1 - net_weight) gPb + net_weight sqrt(M) before the forest's map joins it.
 * The C reference is app_net_run; kernels/net.cl computes the same sums in the same order. */
#define APP_NET_INPUTS 5          /* gPb, the forest's map (held to the cap), R, G, B */
#define APP_NET_FOREST_CAP 1.5f   /* the forest's map is held to this (its crests pass 1) */
#define APP_NET_COLOUR_MEAN 0.45f /* the colours in, as (v / 255 - mean) / spread */
#define APP_NET_COLOUR_SPREAD 0.25f
typedef spmv_net app_net; /* the shapes and the weights: spmv_image.h */
/* The library's network (app/lib/net/boundary.inc). */
const app_net *app_net_default(void);
/* Index i of a row of n reflected at the edges as the network reads it (-i -> i, n - 1 + i ->
 * n - 1 - i), repeatedly where i is far out; 0 for n 1. */
int app_net_reflect(int i, int n);
/* The network's input planes x (APP_NET_INPUTS n floats) from the working size's pixels (1 to 4
 * channels, alpha unread), gPb and the forest's map (n each). */
void app_net_input(const unsigned char *pixels, int channels, const float *gpb, const float *forest,
                   size_t n, float *x);
/* M (w h floats) = the network on x; DSG_ERR_NOMEM with the message. OpenMP over rows. */
int app_net_run(const app_net *net, const float *x, int w, int h, float *M);
float app_net_logistic(float z);
/* E = (1 - weight) E + weight sqrt(M). */
void app_net_blend(float *E, const float *M, double weight, size_t n);
/* Makes p's runs copy the network's input (APP_NET_INPUTS n floats) into x (NULL: no more), for
 * tests/bsds/net_data.c: the network is fit on the library's own inputs. */
void app_problem_record_net(dsg_problem *p, float *x);
/* Whether a run of p under opt has the boundary network refine its map (dsg_prepare). */
int app_problem_uses_net(const dsg_problem *p, const dsg_options *opt);

/* Every level u of H (merges and cracks) mapped to u / (u + half): monotone, so the hierarchy
 * is unchanged, and a map whose strengths are unbounded has its levels in [0, 1), half at 0.5. */
void app_hierarchy_map_levels(app_hierarchy *H, double half);
/* Labels (0.., in order of first appearance) of the cut with k regions (k > 0; fewer when the
 * watershed had fewer), or else of the cut at `threshold` (boundaries above it stay); count
 * (optional): how many regions the cut has. */
int app_hierarchy_cut(const app_hierarchy *H, int k, double threshold, int32_t *labels, int *count);
/* The UCM on BSDS's doubled grid, (2 h + 1) x (2 w + 1): pixel (x, y) at (2x+1, 2y+1), the crack
 * between two pixels between them, corners (the frame's too) the strongest crack meeting there,
 * the frame's cracks 0 (BSDS500's ucm2). */
void app_hierarchy_ucm(const app_hierarchy *H, float *ucm);
void app_hierarchy_free(app_hierarchy *H);
/* The spectral boundary term from eigenpairs (see hierarchy.c): norient * width * height floats,
 * orientation-major, or with norient 0 the unoriented gradient, width * height floats. The
 * pixels a contour nearly isolates take their values from res->products where it has them. */
int app_spectral_gradient(const eig_result *res, const double *sqrt_degree, int width, int height,
                          int norient, float *out);
/* gPb thinned on the device im (app_contour_gpb_cl) with the spectral term of res made there:
 * equal to app_spectral_gradient with APP_CONTOUR_ORIENTATIONS orientations, then
 * app_contour_gpb and app_contour_thin, within float rounding (spmv_cl_gpb). strength,
 * orientation and thin (each optional) as those write them. */
int app_spectral_gpb_cl(spmv_cl_image *im, const eig_result *res, const double *sqrt_degree,
                        int width, int height, const float *oriented, const app_contour_weights *cw,
                        double weight, float *strength, unsigned char *orientation, float *thin);

/* ---- affinity ---------------------------------------------------------------------------- */

typedef struct app_affinity_params {
  int radius;     /* disc radius r >= 1: offsets with dx^2 + dy^2 <= r^2 */
  double sigma_i; /* feature scale, > 0 */
  double sigma_x; /* spatial scale, > 0 */
  /* the intervening-contour term (NULL: none): W_ij *= exp(-max_{line i..j} contours / sigma_c),
   * the maximum over the 4-connected straight line from i to j, both ends included */
  const float *contours;
  double sigma_c; /* contour scale, > 0 when contours are given */
  /* NULL: the C path; else W, D and N on this OpenCL device, where N's values stay (its host has
   * none until spmv_dia_host reads them back) */
  spmv_cl_image *device;
} app_affinity_params;

#define APP_MAX_RADIUS DSG_MAX_RADIUS

/* Number of offsets (dx, dy) in the disc of radius r, (0,0) included (81 for r = 5). */
int app_disc_size(int radius);
/* Fills dx, dy (capacity app_disc_size(radius)) with the disc offsets in row-major order. */
void app_disc_offsets(int radius, int *dx, int *dy);
/* The 4-connected straight line from (0, 0) to (dx, dy), both ends included, into px, py
 * (capacity |dx| + |dy| + 1); returns its length. The line of (-dx, -dy) is this one shifted by
 * (-dx, -dy), so that the pairs (i, j) and (j, i) cross the same pixels. */
int app_line(int dx, int dy, int *px, int *py);

/* Builds N = D^-1/2 W D^-1/2 of a width x height image with per-pixel features (nfeat floats
 * each; nfeat 0 with contours: the contour and spatial terms alone) as a DIA matrix: offsets dy *
 * width + dx ascending; disc offsets that give the same diagonal (possible when width <= 2r) share
 * it, since at most one of them is inside the image for any pixel; diagonals with no pixel pair
 * inside the image are left out. *sqrt_degree (optional) receives D^1/2 (n doubles). Returns
 * DSG_OK, DSG_ERR_INVALID (bad parameters, no neighbours) or DSG_ERR_NOMEM / DSG_ERR_LIMIT. */
int app_affinity_build(int width, int height, const float *features, int nfeat,
                       const app_affinity_params *p, spmv_dia **N, double **sqrt_degree);
/* The same, stopping between bands of pixels with DSG_ERR_INTERRUPTED when *cancel (NULL: never)
 * is nonzero; the matrix is the same. */
int app_affinity_build_cancel(int width, int height, const float *features, int nfeat,
                              const app_affinity_params *p, const volatile sig_atomic_t *cancel,
                              spmv_dia **N_out, double **sqrt_degree);

/* Entries N_ij at or below this count as no edge when finding connected components: couplings
 * at float rounding level, which no float Lanczos can resolve into separate eigenvalues. */
#define APP_COMPONENT_THRESHOLD 1e-7f
/* A group of pixels smaller than a speck (below) that only edges N_ij <= APP_SPECK_THRESHOLD join
 * to the rest is a speck too: a nearly isolated highlight whose eigenvector (eigenvalue within
 * ~1e-6 of 1) would take the place of a segment's. */
#define APP_SPECK_THRESHOLD 1e-4f

/* Components smaller than max(APP_SPECK_PIXELS, n / APP_SPECK_FRACTION) pixels are specks (e.g.
 * a specular highlight whose colour is far from all its neighbours): not segments. */
#define APP_SPECK_PIXELS 32
#define APP_SPECK_FRACTION 2000

/* The connected components of N (edges N_ij > APP_COMPONENT_THRESHOLD) with the specks carved
 * out of them, and their vectors D^1/2 1_C / |D^1/2 1_C| (eigenvalue 1 for a component; within
 * the speck couplings of 1 otherwise): label[i] in [0, count), the `significant` components first
 * (largest first, at least one), then the specks; values[i] is pixel i's entry in its group's
 * vector. Passed to the eigensolver as known eigenvectors (disjoint supports): all are projected
 * out of the Lanczos operator, the significant ones are returned as eigenpairs. */
typedef struct app_components {
  int count;
  int significant;
  size_t speck_pixels;
  int *label;
  float *values;
  /* whole components, specks included: pixel i belongs to significant component whole_label[i]
   * (-1: a component that is itself a speck); whole_values its D^1/2 1_C / |D^1/2 1_C| entry.
   * These are exact eigenvectors (eigenvalue 1) and are what the solvers return. */
  int *whole_label;
  float *whole_values;
} app_components;

int app_components_find(const spmv_dia *N, const double *sqrt_degree, app_components *c);
/* The same from N's links above APP_SPECK_THRESHOLD (fine) and APP_COMPONENT_THRESHOLD (coarse),
 * e.g. made where N is (spmv_cl_links): N itself is not read. */
int app_components_from_links(const spmv_links *fine, const spmv_links *coarse,
                              const double *sqrt_degree, app_components *c);
void app_components_free(app_components *c);
/* Hands c to the eigensolver as its known vectors: opt's known_* fields point into c. */
void app_components_to_options(const app_components *c, eig_options *opt);
/* Makes the `count` pixels a new speck group, carving them out of their groups, and recomputes the
 * vectors of the groups involved. */
int app_components_carve(app_components *c, const double *sqrt_degree, int n, const int *pixels,
                         int count);
/* Pixels holding (1 - 1e-3) of eigenvector j's mass, largest entries first, if fewer than
 * max_pixels do: writes them into pixels and returns their count; returns 0 when the vector is
 * spread over more (not a speck). */
int app_localised_support(const eig_result *res, int j, int max_pixels, int *pixels);

/* ---- clustering -------------------------------------------------------------------------- */

/* Spectral embedding for k segments from the eigenvectors U_k = [u_pick[0] .. u_pick[k-1]] (pick
 * NULL: the top k): the k - 1
 * directions of span(U_k) orthogonal to the trivial vector D^1/2 1 (for a connected image that is
 * u_1 .. u_k-1: "without the trivial one"; for a disconnected one it keeps the directions that
 * tell the components apart), as generalised vectors D^-1/2 q, each pixel's row scaled to unit
 * length (zero rows stay zero). *emb receives n * (k - 1) floats (row-major), *dim = k - 1.
 * Needs 2 <= k <= min(res->nconv, APP_MAX_EMBED). */
#define APP_MAX_EMBED DSG_MAX_K
int app_embedding(const eig_result *res, const double *sqrt_degree, const int *pick, int k,
                  float **emb, int *dim);

/* Smallest effective support of an eigenvector used for segmentation: a speck's size,
 * max(APP_SPECK_PIXELS, n / APP_SPECK_FRACTION). */
double app_min_support(size_t n);

/* Effective support of eigenvector j: the participation ratio (sum u^2)^2 / sum u^4, between 1
 * (one pixel) and n (spread evenly). */
double app_support(const eig_result *res, int j);

/* Chooses the k eigenvectors for the embedding: the first ones (in eigenvalue order) whose
 * effective support is at least `min_support` pixels; eigenvectors localised on a speck (a nearly
 * isolated highlight, cut off almost for free) carry no segmentation. Falls back to the first k
 * if fewer qualify. Writes the indices into pick (k ints); returns how many were skipped. */
int app_pick_vectors(const eig_result *res, int k, double min_support, int *pick);

typedef struct app_kmeans_params {
  int k;         /* clusters, >= 1 */
  int restarts;  /* independent k-means++ runs; the lowest inertia wins */
  int max_iter;  /* Lloyd iterations per run */
  uint64_t seed; /* seeds the k-means++ draws */
} app_kmeans_params;

/* k-means with k-means++ seeding on n points of dimension dim. labels (n ints) receive 0..k-1,
 * numbered in order of first appearance in the image (row-major) so results compare across runs.
 * *inertia (optional) receives the sum of squared distances (chunks of about 512 points, each
 * summed in index order, added in chunk order, as every sum over the points is). */
int app_kmeans(const float *points, size_t n, int dim, const app_kmeans_params *p, int *labels,
               double *inertia);
/* The same with the points on the OpenCL device im (spmv_cl_points): the same labels and inertia
 * bit for bit, the host's part a few numbers per step. Fails where the device lacks double
 * precision (DSG_ERR_LIMIT) or memory. */
int app_kmeans_cl(spmv_cl_image *im, const float *points, size_t n, int dim,
                  const app_kmeans_params *p, int *labels, double *inertia);

/* Gives the pixels of speck components (label >= comps->significant) the label of a 4-neighbour
 * outside any speck, spreading inwards; labels of other pixels are unchanged. */
void app_fill_specks(int *labels, const app_components *comps, int width, int height);

/* Adjusted Rand index of two labelings (1 = identical up to renaming). */
double app_adjusted_rand(const int *a, const int *b, size_t n);

/* ---- backends ------------------------------------------------------------------------- */

/* Sends a note to opt->log (printf-style; nothing without a log callback). */
void app_log(const dsg_options *opt, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* DSG_OK when `name` is a backend ("auto", "cpu", "opencl"), else DSG_ERR_INVALID. */
int app_backend_check(const char *name);
/* The spmv_cl_options that opt asks for (DSG_ERR_INVALID for an unknown kernel name). */
int app_cl_options(const dsg_options *opt, spmv_cl_options *cl);
/* The eigensolver options opt asks for (nev, ncv, tol, max_iter; the rest at their defaults). */
void app_eig_options(const dsg_options *opt, eig_options *eo);
/* Whether matvec "auto" takes an OpenCL GPU with opt: one that cl_device names, or the first. */
int app_auto_has_gpu(const dsg_options *opt);
/* The OpenCL device for the image stages (contours, affinity) that opt->matvec asks for: "cpu"
 * gives *im NULL (the C path); "opencl" opt's device, failures are errors; "auto" the named
 * device or the first GPU, else (or when it cannot be opened, with a warning) NULL. */
int app_image_device(const dsg_options *opt, spmv_cl_image **im);
/* After a stage on the device *im failed with *status: under `--matvec auto` (but for an
 * interruption or the host's memory) a warning naming `what`, the device closed for the rest of
 * the run (*im NULL) and *status DSG_OK: returns 1, the caller takes the C path. "opencl":
 * failures are errors (returns 0). */
int app_device_fall_back(spmv_cl_image **im, const dsg_options *opt, int *status, const char *what);
/* Creates the matvec opt->matvec asks for on N. "cpu": the C path. "opencl": opt's device and
 * kernel; failures are errors. "auto": the named device, else the first OpenCL GPU, else the C
 * path; if the OpenCL path fails it falls back to the C path. With a solver, the OpenCL path is
 * made ready for it (solver->prepare). Notes which it took through opt->log. N must outlive the
 * matvec. */
int app_matvec_create(const dsg_options *opt, spmv_dia *N, const eig_solver *solver,
                      spmv_matvec **mv);

/* ---- results -------------------------------------------------------------------------- */

/* The grouping of a run for one k. */
/* dsg_options.grouping: the index of `name` in the table (segment.c), -1 if none */
enum app_grouping_kind { APP_GROUPING_HIERARCHY = 0, APP_GROUPING_KMEANS = 1 };
int app_grouping_find(const char *name);

typedef struct app_grouping {
  int k;
  int segments;    /* labels written: k, or fewer when the hierarchy has fewer regions */
  int hierarchy;   /* 1: a cut of the hierarchy (level), 0: k-means (inertia, pick, skipped) */
  double level;    /* the cut's level: boundaries above it stay */
  int32_t *labels; /* NULL: fewer than k pairs converged */
  int pick[APP_MAX_EMBED]; /* eigenvectors used by the embedding */
  int skipped;             /* localised eigenvectors passed over for it */
  double inertia;
} app_grouping;

/* The k opt asks for into ks (DSG_MAX_K ints): opt->ks when nks > 0, else k alone (none for
 * k = 0). Returns their count. */
int app_option_ks(const dsg_options *opt, int *ks);
/* The tolerance of the solve: opt->tol, or for DSG_TOL_AUTO the one its grouping needs. */
double app_tol(const dsg_options *opt);
/* The solver's name: opt->solver, or for "auto" the one its grouping needs (chfsi for the
 * hierarchy's labels, lanczos where the eigenvectors are the result or k-means groups them). */
const char *app_solver(const dsg_options *opt);
/* The same for a problem of width x height pixels (the working size; 0 x 0: not known, as
 * app_solver): auto takes chfsi only where it starts from the coarse problem (app_coarse_size),
 * Lanczos elsewhere. From a random block chfsi's vectors score lower (docs/QUALITY.md), and on a
 * problem of a few hundred pixels (an image under 116 pixels a side) at nev 16 it did not converge
 * in 1000 restarts where Lanczos takes milliseconds. */
const char *app_solver_at(const dsg_options *opt, int width, int height);

/* The problem's size, components and D^1/2 (coarse.c). */
void app_problem_size(const dsg_problem *p, int *width, int *height);
const app_components *app_problem_components(const dsg_problem *p);
const double *app_problem_sqrt_degree(const dsg_problem *p);
/* The device the problem's image stages ran on, kept for the grouping (NULL: the C path). */
spmv_cl_image *app_problem_device(const dsg_problem *p);

/* ---- coarse-to-fine starts for chfsi (coarse.c) ---- */
typedef struct app_coarse {
  float *block;           /* cols columns: of the coarse grid after app_coarse_solve, of the fine
                           * problem's n after app_coarse_lift; or NULL */
  double *values;         /* their Ritz values on the coarse problem, descending */
  double *sqrt_degree;    /* the coarse problem's D^1/2, until the lift */
  int cols;               /* the coarse solve's block size */
  int width, height;      /* the coarse image's */
  long products;          /* the coarse solve's vector products (of width * height rows) */
  double seconds;         /* what the solve spent on it: the coarse problem, its solve and the
                           * lift; the lift alone where it was solved beside or ahead */
  int beside;             /* 1: solved beside the fine problem's making (a worker thread) */
  double worker_seconds;  /* beside or ahead: the coarse problem's and its solve's own time */
  double waited;          /* beside: how long the making waited for the worker at its end */
  int ahead;              /* 1: solved ahead of the run (dsg_presolve); seconds: the lift alone */
  int nev, ncv, max_iter; /* the options it was solved with (app_coarse_matches) */
  uint64_t seed;
  double tol;
} app_coarse;
/* 1 when opt asks for coarse starts (coarse_start; the chfsi solve takes them) and the coarse
 * image of a width x height image, *cw x *ch, is large enough; 0 when not (*cw, *ch set either
 * way). */
int app_coarse_size(const dsg_options *opt, int width, int height, int *cw, int *ch);
/* The coarse image of the working image `work` (shrunk to app_coarse_size) into *coarse, or
 * *coarse empty (no pixels) where opt takes no coarse start at that size. The one rule both the
 * problem's making and dsg_presolve follow, so that a presolved start matches its run's pixels. */
int app_coarse_image(const dsg_image *work, const dsg_options *opt, dsg_image *coarse);
/* `coarse` (the image shrunk, app_coarse_size) made into a problem with opt on the C path and
 * solved with chfsi: its block on the coarse grid. Needs nothing of the fine problem, so it may
 * run beside its making. On an error out->block is NULL. */
int app_coarse_solve(const dsg_image *coarse, const dsg_options *opt, app_coarse *out);
/* Whether c was solved with the options a solve with opt needs. */
int app_coarse_matches(const app_coarse *c, const dsg_options *opt);
/* c's block brought to the fine grid of `fine` (in place). On an error c->block is NULL. */
int app_coarse_lift(app_coarse *c, const dsg_problem *fine);
/* The two in a row: the start block of the problem `fine`. On an error out->block is NULL and
 * the caller may go on without a start. */
int app_coarse_start(const dsg_image *coarse, const dsg_options *opt, const dsg_problem *fine,
                     app_coarse *out);
void app_coarse_free(app_coarse *c);
/* The process's coarse solve made ahead (dsg_presolve): put keeps c, solved from the coarse image
 * `coarse` with opt (both taken over: zeroed here), in place of any kept before; take moves it
 * into *out and returns 1 when it was solved from the same pixels with the same options, else
 * returns 0 and leaves it. Thread-safe. */
void app_coarse_ahead_put(dsg_image *coarse, const dsg_options *opt, app_coarse *c);
int app_coarse_ahead_take(const dsg_image *coarse, const dsg_options *opt, app_coarse *out);

struct dsg_result {
  int width, height, channels; /* the labels' and contours' size: the image's */
  int work_width, work_height; /* the eigenvectors', degrees' and hierarchy's: the working size */
  dsg_options opt;             /* the options of the run; strings point into `strings` */
  char strings[7][256];
  int n;
  double *sqrt_degree;
  float *contours;                 /* the boundary detector's strength (contour cues), else NULL */
  struct app_hierarchy *hierarchy; /* grouping "hierarchy": the regions and their merges */
  int ndiag;
  size_t pitch, matrix_bytes;
  int *offsets;
  int components, significant;
  size_t speck_pixels;
  eig_result eig;
  int solve_status;
  char note[512]; /* the eigensolver's message when it stopped at max_iter */
  int solves;     /* eigensolves run (more than one when specks were carved out) */
  long matvecs_all;
  int carved;
  app_coarse coarse; /* the chfsi solve's coarse start (block freed after the solve), if any */
  /* one grouping per k, in the order of opt.ks (opt.k is the first, opt.ks is not kept) */
  int k_auto; /* the caller's k was DSG_K_AUTO: the scale was chosen (groups[0]) */
  int ngroups;
  app_grouping groups[DSG_MAX_K];
  char backend[16];
  int has_cl;
  spmv_cl_info cl;
  dsg_timing timing;
};

/* The eigensolver's result inside r (tests). */
const eig_result *app_result_eig(const dsg_result *r);

/* ---- the working resolution (resolution.c) ---- */
/* DSG_OK for 0 (full resolution) or >= DSG_MIN_WORK_PIXELS, else DSG_ERR_INVALID with the
 * message (dsg_options_check and dsg_contours both check with it). */
int app_work_pixels_check(long long work_pixels);
/* The largest width x height of the image's aspect within max_pixels into *work_w, *work_h;
 * returns 1 when that is smaller than the image, 0 (the image's own size) when not or when
 * max_pixels <= 0 (full resolution). */
int app_work_size(int width, int height, long long max_pixels, int *work_w, int *work_h);
/* Whether a and b are the same pixels (size, channels and bytes); what a result made ahead of its
 * run (dsg_presolve's) is matched by. */
int app_image_same(const dsg_image *a, const dsg_image *b);
/* src shrunk to width x height (each at most src's) by area averaging, into *dst. */
int app_image_shrink(const dsg_image *src, int width, int height, dsg_image *dst);
/* Labels of the working image `work` (its width * height) brought to the size of `full` (out:
 * full's width * height): inside a region the region's label, within a working pixel of a
 * boundary the label whose working pixels nearby are closest in colour and place. */
int app_upsample_labels(const dsg_image *full, const dsg_image *work, const int32_t *labels,
                        int32_t *out);
/* A field of w x h brought to W x H, bilinear (centres onto centres). */
void app_upsample_field(const float *src, int w, int h, int W, int H, float *dst);
/* The same for `count` fields stacked (field k at src + k w h, into dst + k W H), in one pass.
 * DSG_OK or DSG_ERR_NOMEM (the message set). */
int app_upsample_fields(const float *src, int count, int w, int h, int W, int H, float *dst);
/* A thinned contour map of w x h brought to W x H, lines kept one pixel wide. */
int app_upsample_contours(const float *src, int w, int h, int W, int H, float *dst);

/* ---- memory (memory.c) ---- */
/* dsg_check_memory, and *use_cpu = 1 where matvec "auto" must take the C path because the device
 * cannot hold the problem (logged as a warning). */
int app_memory_plan(const dsg_options *opt, int width, int height, int *use_cpu);
/* "auto" after the device failed with status (its message set): DSG_OK, with a warning that
 * names `failed` (NULL: the message alone) and the device's message, when the C path's host
 * memory holds a segment of width x height; else status, the device's message followed by the
 * host's refusal ("; nor does the C path: ..."). */
int app_memory_fallback(const dsg_options *opt, int width, int height, int status,
                        const char *failed);
/* The memory the process's cgroup still allows (a container's limit): the least limit - usage
 * over its cgroup and their ancestors, cgroup v2 (memory.max, memory.current) or v1 (the memory
 * controller's memory.limit_in_bytes, memory.usage_in_bytes), read from proc_cgroup
 * (/proc/self/cgroup) and the tree at sys_root (/sys/fs/cgroup); 0: no limit found. */
double app_memory_cgroup_room(const char *proc_cgroup, const char *sys_root);
/* DSG_OK when the host holds dsg_affinity of width x height (N at the image's own size), else
 * DSG_ERR_LIMIT saying so and what size would fit. */
int app_memory_check_affinity(const dsg_options *opt, int width, int height);
/* status, with the message of a device that ran out part-way (DSG_ERR_LIMIT on the OpenCL path)
 * completed by the image size that would fit the whole device; other statuses unchanged. */
int app_memory_explain(const dsg_options *opt, int width, int height, int status);

#endif /* DIASEG_INTERNAL_H */
