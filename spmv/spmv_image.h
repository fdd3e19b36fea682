/* spmv_image: the image stages of diaseg on an OpenCL device — the boundary detector (its
 * channels' bins, oriented histogram gradients, combination and thinning: kernels/contours.cl),
 * gPb (the eigenvectors' spectral term joining the detector, after the solve; the same file)
 * and the intervening-contour affinity N = D^-1/2 W D^-1/2 (kernels/affinity.cl). Their C
 * references are the library's app_contour_bins, app_contour_gradients, app_contour_combine,
 * app_contour_thin, app_spectral_gradient, app_contour_gpb and app_affinity_build
 * (app/lib/contours.c, hierarchy.c, affinity.c); spmv does not call them (layering): the caller
 * passes its tables (the disc, its sectors and lines, the channels' bins and smoothing, the
 * colour ranges, the texton filters and dictionary, the spectral term's filters) as data. The
 * formulas are in docs/PIPELINE.md.
 *
 * One spmv_cl_image holds one device's context and queue and gets each program on first use,
 * both from the process-wide cache (spmv.h, spmv_cl_cache_clear) that the matvec draws from too:
 * a caller running both stages and the matvec, or many images one after the other, opens the
 * device and builds each program once per process. Everything runs synchronously: a function
 * returns when its results are on the host; one thread at a time may use an spmv_cl_image. Like
 * the rest of spmv it reads no environment and no files but the kernel folder it is given.
 */
#ifndef DIASEG_SPMV_IMAGE_H
#define DIASEG_SPMV_IMAGE_H

#include "spmv.h"

typedef struct spmv_cl_image spmv_cl_image;

/* Opens the OpenCL device that `device` names (spmv_cl_pick: an index or a name; NULL or "": the
 * first GPU, else the first device) for the image stages; kernel_dir (NULL or "": the copies
 * embedded at build time) is where kernels/contours.cl and affinity.cl are read from. Returns
 * DSG_OK, DSG_ERR_NODEVICE, DSG_ERR_NOMEM or DSG_ERR_OPENCL with the message. Free with
 * spmv_cl_image_destroy. */
int spmv_cl_image_create(spmv_cl_image **out, const char *device, const char *kernel_dir);
/* Waits for the device and frees im and every OpenCL object it holds (NULL is allowed). */
void spmv_cl_image_destroy(spmv_cl_image *im);
/* The device's name, as messages show it. */
const char *spmv_cl_image_device(const spmv_cl_image *im);

/* ---------------------------------------------------------------------------------------------
 * Oriented histogram gradients (the boundary detector's dominant cost).
 *
 * For every pixel, channel c and scale s: the histograms of the channel's bins over the 16
 * angular sectors of the disc of scale s's radius (the image padded by reflection, as the C
 * reference's `reflect`), and for each orientation o the chi-squared distance of the two
 * half-discs (sectors o .. o + norient - 1 against the rest), with the histograms smoothed along
 * their bins where the channel asks for it:
 *   chi2 = 1/(2 m) sum_b (2 g_b - T_b)^2 / T_b   (counts; T the disc, g one half, m = count / 2).
 * The disc's offsets are given nearest first; scale s of channel c takes the first
 * count[c * nscales + s] of them, so the histograms grow scale by scale.
 * ------------------------------------------------------------------------------------------- */

#define SPMV_CONTOUR_MAX_BINS 32   /* bins of a channel's histogram, at most */
#define SPMV_CONTOUR_MAX_ORIENT 16 /* orientations, at most (2 norient sectors) */
#define SPMV_CONTOUR_MAX_REACH 8   /* the thinning's reach, at most */

typedef struct spmv_contour_geometry {
  int ndisc;         /* disc offsets without the centre, nearest first (app_contour_disc) */
  const int *dx;     /* ndisc column offsets, |dx| <= pad */
  const int *dy;     /* ndisc row offsets (y down the rows), |dy| <= pad */
  const int *sector; /* ndisc sectors in [0, 2 norient): the opposite of an offset in sector s
                      * lies in sector (s + norient) mod 2 norient */
  int pad;           /* the reflection padding: the largest radius */
  int nchannels;     /* channels of `bins` (4: L, a, b, textons) */
  int nscales;       /* scales per channel (3); part p = c * nscales + s */
  int norient;       /* orientations (8), at most SPMV_CONTOUR_MAX_ORIENT */
  const int *bins;   /* nchannels: histogram bins, in [1, SPMV_CONTOUR_MAX_BINS] */
  const int *count;  /* nchannels * nscales: offsets within scale s of channel c, nondecreasing
                      * in s, even (whole opposite pairs), at most ndisc */
  const int *smooth_radius;   /* nchannels: the bin smoothing's radius, 0: none (then
                               * smooth[c] is not read); at most SPMV_CONTOUR_MAX_BINS */
  const float *const *smooth; /* nchannels: 2 * smooth_radius[c] + 1 taps, centre at index
                               * smooth_radius[c] (the histogram is cut at its ends) */
  int reach; /* the thinning's samples: 1 .. reach pixels along the normal (APP_CONTOUR_REACH),
              * at most SPMV_CONTOUR_MAX_REACH; read only when the thinning is asked for */
} spmv_contour_geometry;

/* The gradients of a width x height image: bins[c * n + i] (n = width * height pixels, row-major)
 * is pixel i's bin in channel c, below g->bins[c]; grad[((p * norient) + o) * n + i] receives
 * part p's chi-squared at orientation o (nchannels * nscales * norient * n floats).
 * kernel_seconds (optional) receives the device time of the kernels (the transfers not
 * included). Equal to app_contour_gradients up to float rounding (1e-5;
 * tests/spmv/test_cl_image.c). Returns DSG_OK, DSG_ERR_INVALID (a geometry or a bin out of range,
 * with the first one named), DSG_ERR_LIMIT (a buffer over the device's allocation limit, or the
 * tables over its constant memory), DSG_ERR_NOMEM, DSG_ERR_IO (kernel_dir) or DSG_ERR_OPENCL (the
 * build log in spmv_cl_build_log()). */
int spmv_cl_contour_gradients(spmv_cl_image *im, const spmv_contour_geometry *g,
                              const unsigned char *bins, int width, int height, float *grad,
                              double *kernel_seconds);

/* The detector's outputs on the host, each optional (NULL: not computed or not read back). */
typedef struct spmv_contour_outputs {
  float *grad;                /* nparts * norient * n: the gradients, laid out as above */
  float *parts;               /* nparts * n: each part's largest gradient over the orientations
                               * (at least 0) */
  float *strength;            /* n: the combination's largest value over the orientations */
  unsigned char *orientation; /* n: the first orientation that reaches it */
  float *thin;                /* n: strength after non-maximum suppression */
  float *oriented;            /* norient * n: the combination v(o) at every orientation, o-major
                               * (the spectral term joins it there: gPb) */
} spmv_contour_outputs;

/* The detector on the device: the gradients (as spmv_cl_contour_gradients; they are kept, all
 * nparts norient planes of them, only when out->grad asks for them), then, when parts, strength,
 * orientation or thin is asked for, the combination and thinning of app_contour_combine and
 * app_contour_thin: for every pixel and orientation z = sum_p weight[p] grad_p(o) (nparts =
 * nchannels * nscales weights; the float sum runs over p in order, as the reference's, with or
 * without the gradients kept: the outputs are the same bit for bit), v(o) = (logistic(bias + z) -
 * s0) / (1 - s0) with s0 = logistic(bias); strength = max_o v; then non-maximum suppression across
 * each pixel's orientation: kept where strength is above its bilinear samples (clamped to the
 * image) 1 .. g->reach pixels along the normal (at angle o pi / norient + pi / 2, x right and y
 * down) on one side and not below those on the other. Only the outputs asked for cross back to the
 * host, and the call waits for the device once, at its end. The device computes in float where the
 * combination's reference uses double: strengths agree to 1e-5, and an orientation or a thinned
 * pixel can differ where two values tie within that. kernel_seconds (optional; NULL skips the
 * kernels' profiling) as above. Returns as spmv_cl_contour_gradients. */
int spmv_cl_contours(spmv_cl_image *im, const spmv_contour_geometry *g, const float *weight,
                     float bias, const unsigned char *bins, int width, int height,
                     const spmv_contour_outputs *out, double *kernel_seconds);

/* ---------------------------------------------------------------------------------------------
 * gPb on the device: the spectral term (the eigenvectors' oriented gradients) joins the
 * detector's combination, then the non-maximum suppression, so that the grouping's data-parallel
 * part runs where the detector did. The C references are the library's app_spectral_gradient,
 * app_contour_gpb and app_contour_thin (app/lib/hierarchy.c, contours.c).
 * ------------------------------------------------------------------------------------------- */

typedef struct spmv_spectral {
  int nvec;                  /* eigenvectors, 0 or more */
  const float *vectors;      /* nvec * n: u_j, j-major */
  const float *products;     /* nvec * n: N u_j (optional; NULL: every pixel takes u / sqrt(d)) */
  const float *mu;           /* nvec: the eigenvalues of N (non-zero where products are read) */
  const float *weight;       /* nvec: 1 / sqrt(1 - mu_j), 0 where vector j adds nothing */
  const double *sqrt_degree; /* n: D^1/2, positive */
  double isolated;           /* a pixel of degree below this takes v = (N u)_i / (mu_j
                              * sqrt(d_i)) from the products, where given */
  int radius;                /* the filters' radius, 1 to SPMV_CONTOUR_MAX_RADIUS */
  const float *smooth;       /* 2 radius + 1 taps: the Gaussian, centre at index radius */
  const float *derivative;   /* 2 radius + 1 taps: its derivative */
} spmv_spectral;

/* gPb of a width x height image (n pixels) on the device, from the detector's combination at
 * every orientation (oriented: g->norient planes of n floats, as spmv_contour_outputs.oriented)
 * and the eigenvectors s. The spectral term: for each vector j with weight[j] > 0, its values
 * v_i = u_i / sqrt(d_i) (or from the product, see above), its range [lo, hi], and its
 * derivatives gx, gy (the separable filters: smooth along one axis and derivative along the
 * other, borders reflected); S(o) = sum_j weight[j] / (hi - lo) |nx_o gx + ny_o gy| with
 * (nx_o, ny_o) = (-sin, cos)(o pi / norient), the vectors added in order (a constant vector adds
 * nothing). Then, with s0 = logistic(bias) and half = logit(0.5 (1 - s0) + s0) - bias: x(o) =
 * logit(oriented(o) (1 - s0) + s0) - bias + weight S(o), gPb(o) = x / (x + half) where x > 0,
 * else 0; out->strength its largest value over o, out->orientation the first o that reaches it,
 * out->thin that after the detector's non-maximum suppression (g->reach samples). out's other
 * fields must be NULL; strength, orientation and thin are each optional. The device computes in
 * float where the references use double: strengths agree to 1e-5 relative (tests/spmv/
 * test_cl_image.c), and an orientation or a thinned pixel can differ where two values tie within
 * that. Returns as spmv_cl_contours, and DSG_ERR_INVALID for s out of range. */
int spmv_cl_gpb(spmv_cl_image *im, const spmv_contour_geometry *g, const spmv_spectral *s,
                const float *oriented, float bias, float weight, int width, int height,
                const spmv_contour_outputs *out, double *kernel_seconds);

/* ---------------------------------------------------------------------------------------------
 * k-means on the device: the primitives of k-means++ seeding and Lloyd's iterations on points
 * that stay there (kernels/kmeans.cl). The library's app_kmeans drives them; its host engine is
 * the C reference (app/lib/cluster.c). Every distance and sum is a double computed as the
 * reference computes it (coordinates in order, a chunk's points in index order, no fused
 * multiply-adds), so the results are the same bit for bit (tests/spmv/test_cl_image.c). Chunk b
 * of nchunk holds the points [n b / nchunk, n (b + 1) / nchunk). The device needs double
 * precision (cl_khr_fp64). Each call waits for its results.
 * ------------------------------------------------------------------------------------------- */

typedef struct spmv_cl_points spmv_cl_points;

/* 1 when im's device computes in double precision (cl_khr_fp64), as k-means there needs. */
int spmv_cl_image_doubles(const spmv_cl_image *im);

/* Uploads n points of dim floats (row-major) for k clusters and nchunk chunks (1 <= k, nchunk;
 * k <= n; 1 <= dim), with labels all -1. Returns DSG_OK, DSG_ERR_INVALID (a size out of range),
 * DSG_ERR_LIMIT (no double precision on the device, or a buffer over its largest allocation),
 * DSG_ERR_NOMEM or DSG_ERR_OPENCL. Free with spmv_cl_points_destroy. */
int spmv_cl_points_create(spmv_cl_image *im, const float *points, size_t n, int dim, int k,
                          int nchunk, spmv_cl_points **out);
void spmv_cl_points_destroy(spmv_cl_points *p);
/* Point i's dim coordinates. */
int spmv_cl_points_get(spmv_cl_points *p, size_t i, float *coords);
/* d2[i] = |x_i - centre|^2 (first), or the smaller of that and d2[i]; chunk_d2 (nchunk) the
 * chunks' sums of d2. */
int spmv_cl_points_distances(spmv_cl_points *p, const double *centre, int first, double *chunk_d2);
/* d2[from .. from + count) into out. */
int spmv_cl_points_d2(spmv_cl_points *p, size_t from, size_t count, double *out);
/* One assignment: each point's label the nearest of the k centres (k * dim; the first of
 * equals), d2 its squared distance; sums (k * dim) and counts (k) each cluster's coordinate
 * sums and size (each chunk's in index order, the chunks' in chunk order), chunk_d2 (nchunk)
 * the chunks' sums of d2, *changed the labels that moved. */
int spmv_cl_points_assign(spmv_cl_points *p, const double *centres, double *sums, int64_t *counts,
                          double *chunk_d2, long *changed);
/* Labels all -1 (a new run). */
int spmv_cl_points_reset(spmv_cl_points *p);
/* The labels kept as the best so far, and read back from there (n ints). */
int spmv_cl_points_keep(spmv_cl_points *p);
int spmv_cl_points_best(spmv_cl_points *p, int *labels);

/* ---------------------------------------------------------------------------------------------
 * The channels' bins on the device (app_contour_bins), so that the detector runs from the pixels
 * and its bins never cross to the host. Channels 0, 1, 2: CIELAB L, a, b of the sRGB (D65)
 * pixels (app_rgb_to_lab, in float), each binned over its range: bin = (int)((v - lo) / (hi -
 * lo) * bins), clamped to [0, bins). Channel 3: the texton, the nearest centre of a fixed
 * dictionary to the pixel's filter responses of the brightness L / 100 (app_texton_responses:
 * response d = scale[d] * the brightness filtered by filter row_filter[d] along the rows and then
 * column_filter[d] along the columns, reflected borders as app_conv_sep; then F <- F log(1 +
 * |F| / contrast) / |F| per pixel; squared distances, the first nearest centre wins).
 * ------------------------------------------------------------------------------------------- */

#define SPMV_CONTOUR_MAX_DIM 16    /* texton responses per pixel, at most */
#define SPMV_CONTOUR_MAX_RADIUS 64 /* a texton filter's radius, at most */

typedef struct spmv_contour_binning {
  const float *linear;         /* 256: byte v's sRGB value v / 255 on the linear scale (computed
                                * in double as the reference's, rounded to float) */
  float lo[3], hi[3];          /* the ranges of L, a and b (hi > lo); their bins: g->bins[0 .. 2] */
  int nfilters;                /* 1-D filters, 1 to 64 */
  const int *filter_radius;    /* nfilters radii in [0, SPMV_CONTOUR_MAX_RADIUS] */
  const float *const *filter;  /* nfilters: 2 r + 1 taps each, a convolution as app_conv_sep's:
                                * out[x] = sum_{t = -r .. r} filter[t + r] in[x - t] */
  int dim;                     /* responses per pixel, 1 to SPMV_CONTOUR_MAX_DIM */
  const int *row_filter;       /* dim: the filter of response d along the rows ... */
  const int *column_filter;    /* dim: ... then this one along the columns */
  const float *response_scale; /* dim: the factor applied to response d last */
  float contrast;              /* the contrast normalisation's constant (> 0) */
  int ncentres;                /* the dictionary's centres, 1 to g->bins[3] */
  const float *centres;        /* ncentres * dim, row-major */
} spmv_contour_binning;

/* The detector from a width x height image's pixels (channels 1 to 4 bytes each, row-major; one
 * or two channels are grey (and alpha), a fourth is alpha, not read): the bins on the device as
 * described above for the geometry g (4 channels: L, a, b, textons), then as spmv_cl_contours.
 * out may be NULL (the bins alone); bins_out (optional, 4 n bytes) receives the bins, laid out as
 * spmv_cl_contours takes them. kernel_seconds (optional) includes the binning's kernels.
 * Tolerances (tests/spmv/test_cl_image.c): the device converts to CIELAB in float where the
 * reference uses double, so an L, a or b bin differs from app_contour_bins' (by one) only where
 * the reference's value lies within 1e-3 of the edge between the two (2.3e-5 seen over 2.25 M
 * random pixels on PoCL); the filters and the normalisation run in float too (the reference sums
 * in double), so a texton differs only where the reference's squared distances to the two
 * centres are within 1e-4 (1.5e-7 seen); each kind on at most 1e-3 of the pixels. The outputs
 * are then those of spmv_cl_contours on these bins. Returns as spmv_cl_contours, and
 * DSG_ERR_INVALID for a table of b or the channels out of range. */
int spmv_cl_contours_rgb(spmv_cl_image *im, const spmv_contour_geometry *g,
                         const spmv_contour_binning *b, const float *weight, float bias,
                         const unsigned char *pixels, int channels, int width, int height,
                         const spmv_contour_outputs *out, unsigned char *bins_out,
                         double *kernel_seconds);

/* ---------------------------------------------------------------------------------------------
 * The affinity: W_ij = exp(-|F_i - F_j|^2 / sigma_i^2 - ic_ij / sigma_c) exp(-|X_i - X_j|^2 /
 * sigma_x^2) over the disc, ic_ij the largest contour strength on the line from i to j (both
 * ends included; 0 without contours); D the row sums of W; N = D^-1/2 W D^-1/2.
 * ------------------------------------------------------------------------------------------- */

typedef struct spmv_affinity_geometry {
  int ndisc;          /* disc offsets, (0, 0) included (app_disc_offsets) */
  const int *dx;      /* ndisc column offsets */
  const int *dy;      /* ndisc row offsets */
  const int *diag_of; /* ndisc: the diagonal of N (index into N->offsets) that offset k fills, -1:
                       * none; N->offsets[diag_of[k]] must be dy[k] * width + dx[k] */
  /* The lines of the contour term (NULL: no contour term): offset k's line is the points
   * (line_x[t], line_y[t]), t in [line_at[k], line_at[k + 1]), relative to pixel i, each inside
   * the box spanned by (0, 0) and (dx[k], dy[k]) (app_line). line_at has ndisc + 1 entries. */
  const int *line_at;
  const int *line_x;
  const int *line_y;
} spmv_affinity_geometry;

/* Fills N (created by the caller with spmv_dia_create: n = width * height rows and the diagonals
 * that g->diag_of names; its values are overwritten; or with spmv_dia_create_shape: the values
 * stay on the device alone) with D^-1/2 W D^-1/2 of a width x height
 * image: features (nfeat floats per pixel; nfeat 0 and features NULL for the contour and spatial
 * terms alone), contours (n floats, or NULL: no contour term; then g's lines are not read).
 * sqrt_degree (optional, n doubles) receives D^1/2; linked (optional) 1 when some off-diagonal
 * entry of N is above 1e-7 (a pixel has a neighbour), else 0; kernel_seconds (optional) the
 * kernels' device time. The device computes in float where the reference uses double, the
 * weight's exponent carried in two floats: entries agree to a relative 1e-5 (5e-7 measured)
 * wherever they are above 1e-30, and an entry is zero on one side only where its weight underflows
 * float on the other. Returns DSG_OK, DSG_ERR_INVALID (a geometry, N's shape or a sigma out of
 * range, named), DSG_ERR_LIMIT, DSG_ERR_NOMEM, DSG_ERR_IO or DSG_ERR_OPENCL. */
int spmv_cl_affinity(spmv_cl_image *im, const spmv_affinity_geometry *g, int width, int height,
                     const float *features, int nfeat, const float *contours, double sigma_i,
                     double sigma_x, double sigma_c, spmv_dia *N, double *sqrt_degree, int *linked,
                     double *kernel_seconds);
/* N's links above threshold (spmv_links; the C reference is spmv_dia_links) from N's copy on
 * im's device (spmv_cl_affinity's): the components' input, read back instead of N. L is the
 * caller's to free (spmv_links_free). Returns DSG_OK, DSG_ERR_INVALID (N has no copy there),
 * DSG_ERR_LIMIT, DSG_ERR_NOMEM or DSG_ERR_OPENCL. */
int spmv_cl_links(spmv_cl_image *im, const spmv_dia *N, float threshold, spmv_links *L);

/* ---------------------------------------------------------------------------------------------
 * The structured edge forest on the device (kernels/forest.cl): one scale of the library's
 * app_forest_detect, whose parts are the C references (app_forest_channels, app_forest_descend
 * and the leaves' votes, app/lib/forest.c; docs/PIPELINE.md "1c"). The model and the recipe come
 * as data: spmv knows the shapes (the constants below, which the library checks against its
 * own), not the numbers.
 *
 * From the pixels: the image padded by reflection to pw x ph (the image at (pad, pad)); CIELAB
 * (float, from the linear table as spmv_cl_contours_rgb's) mapped to [0, 1] by lo and hi; the 13
 * channels at half resolution (the colours' 2 x 2 means; the gradient's normalised magnitude,
 * |g| / (its triangle mean of norm_radius + 0.01), halved, and its 4-orientation histogram in
 * 2 x 2 cells; the same two from the half-resolution colours, per pixel), each smoothed by the
 * triangle of reg_radius and of sim_radius and coded round(v scale[z]) in [0, 255] (the regular
 * and self-similarity channels). At each of rows x cols places (channel corner (r, c)) trees_eval
 * trees ((r + c) % 2 trees_eval + t, modulo the trees) descend: a node's feature f reads the
 * regular code reg[feat_a[f] + r cw + c] for f < nregular, else sim[feat_a[f] + ...] - sim[
 * feat_b[f] + ...], and goes left when that is below its threshold. The leaf's 16 x 16
 * segmentation (at padded pixel (STRIDE r + 8, STRIDE c + 8)) moves the pixels of its boundary's
 * first `sharpen` rings to the neighbouring segment of the nearest mean colour (the padded RGB
 * / 255 smoothed by the triangle of color_radius, sampled at every other pixel), and each pixel
 * of rings 0 .. sharpen still on a boundary gets a vote. E (width x height) = the votes at the
 * image's pixels times gain / (trees_eval (OUT / STRIDE)^2), smoothed by the triangle of 1.
 *
 * Tolerances (tests/spmv/test_cl_forest.c): the votes are integers and the map's float steps
 * run in the reference's order without fused multiply-adds, so from the same channels E is the
 * reference's bit for bit. The channels themselves take CIELAB in float (the reference: double)
 * and the device's atan2, sqrt and division: a code differs from app_forest_channels' by one
 * where the reference's value lies within rounding of a code's edge (at most 1e-3 of the codes;
 * none in the test's images on PoCL or an H200), and a place that reads such a code near its
 * node's threshold can take another leaf.
 * ------------------------------------------------------------------------------------------- */

#define SPMV_FOREST_SHRINK 2      /* channels at half resolution */
#define SPMV_FOREST_PATCH 32      /* the pixels a place reads */
#define SPMV_FOREST_OUT 16        /* its leaf's side */
#define SPMV_FOREST_STRIDE 2      /* between places */
#define SPMV_FOREST_CHANNELS 13   /* L a b, |g| and 4 orientations at full and at half size */
#define SPMV_FOREST_MAX_SEGS 16   /* a leaf's segments, at most */
#define SPMV_FOREST_SHARPEN_MAX 2 /* the rings the sharpening may move, at most */
#define SPMV_FOREST_MAX_TREES 64

/* The trees (as app_forest holds them): nodes of all trees in one array. */
typedef struct spmv_forest_model {
  const void *key;      /* the model's identity for the process's life (NULL: none): the
                         * device keeps the model it was last given, in the process-wide
                         * cache, and uploads another only when the key (or the trees' sizes)
                         * change */
  int ntrees;           /* 1 to SPMV_FOREST_MAX_TREES */
  const uint32_t *tree; /* ntrees + 1: tree t's nodes are tree[t] .. tree[t + 1] - 1 */
  uint32_t nnodes;
  const uint16_t *fid;   /* nnodes: the feature a node reads */
  const int16_t *thr;    /* nnodes: left when the feature is below it */
  const uint32_t *child; /* nnodes: the left child (right = left + 1); 0: a leaf, whose index
                          * is fid | thr << 16 (as 16-bit words) */
  uint32_t nleaves;
  const unsigned char *nsegs; /* nleaves: a leaf's segments, 1 to SPMV_FOREST_MAX_SEGS */
  const uint32_t *seg_at;     /* nleaves: a leaf of 2 segments or more: its patch in segs */
  uint32_t nmulti;            /* patches */
  const unsigned char *segs;  /* nmulti patches of OUT x OUT labels (row-major) in 4 bits each,
                               * low nibble first: OUT^2 / 2 bytes a patch. A label is below its
                               * leaf's segments (not checked here: a label beyond gives another
                               * map, never a read outside the patch's 16 segments) */
} spmv_forest_model;

/* One scale's grid and the channels' recipe. */
typedef struct spmv_forest_params {
  int pad, pw, ph;     /* the padded image, pw x ph (multiples of 2 SHRINK, at least
                        * PATCH), the image's pixel (0, 0) at (pad, pad) */
  int rows, cols;      /* places: (ph - PATCH) / STRIDE + 1, (pw - PATCH) / STRIDE + 1 */
  const float *linear; /* 256: byte v's sRGB value on the linear scale */
  float lo[3], hi[3];  /* CIELAB's ranges, mapped to [0, 1] */
  float scale[SPMV_FOREST_CHANNELS];                     /* each channel's code: round(v scale) */
  int norm_radius, reg_radius, sim_radius, color_radius; /* triangle radii, 0 to 16 */
  int nfeatures, nregular;    /* features, of which the first nregular read one regular code */
  const int *feat_a, *feat_b; /* nfeatures offsets into the 13 channel planes of (pw / SHRINK)
                               * x (ph / SHRINK) codes, for the place (0, 0); feat_b for pairs */
  int trees_eval;             /* trees read at a place, 1 to ntrees */
  int sharpen;                /* 0 to SPMV_FOREST_SHARPEN_MAX */
  float gain;
} spmv_forest_params;

/* What a test may put in or take out between the channels and the trees (each optional: NULL). */
typedef struct spmv_forest_probe {
  const unsigned char *reg_in, *sim_in; /* 13 cw ch codes each: the trees read these instead of
                                         * the device's (both or neither) */
  unsigned char *reg_out, *sim_out;     /* the device's codes */
} spmv_forest_probe;

/* One scale of the forest on a width x height image of 1 to 4 bytes per pixel (row-major; as
 * spmv_cl_contours_rgb reads them): E (width * height floats) as above; probe may be NULL.
 * kernel_seconds (optional) the kernels' device time. Returns DSG_OK, DSG_ERR_INVALID (a model,
 * grid or recipe out of range, named), DSG_ERR_LIMIT (a buffer over the device's largest
 * allocation), DSG_ERR_NOMEM or DSG_ERR_OPENCL. */
int spmv_cl_forest(spmv_cl_image *im, const spmv_forest_model *F, const spmv_forest_params *p,
                   const unsigned char *pixels, int channels, int width, int height, float *E,
                   const spmv_forest_probe *probe, double *kernel_seconds);

/* The thinning of spmv_cl_forest_contours (the library's app_forest_thin). */
typedef struct spmv_forest_thinning {
  int radius;  /* the map's triangle smoothing before its Hessian, 0 to 16 */
  int norient; /* the directions o pi / norient, 1 to SPMV_CONTOUR_MAX_ORIENT */
  int reach;   /* the suppression's samples: 1 .. reach pixels along the normal, at most
                * SPMV_CONTOUR_MAX_REACH */
  int border;  /* the strength tapers to 0 over this many pixels at the image's edge (0: none) */
  float top;   /* the strength's largest value */
} spmv_forest_thinning;

/* The forest at 1 or 3 scales, and its thinning, on the device (the library's app_forest_contours;
 * C references app_forest_detect_ms and app_forest_thin, app/lib/forest.c). scales 1: the image's
 * own map E with the grid p[0]; 3: E + the map of `half` (the image shrunk to width / 2 x height
 * / 2 by the caller, grid p[1]; absent, and E counted twice, when either side is 1) brought up
 * bilinearly + the 2 x 2 means of the map of the image doubled on the device (bilinear, grid
 * p[2]), over 3. Then the direction of each pixel's boundary: the Hessian of E smoothed by the
 * triangle of t->radius, 0.5 atan2(2 dxy, dxx - dyy) rounded to the nearest o pi / t->norient;
 * strength = E where it is above its samples 1 .. t->reach pixels along the normal on one side and
 * not below those on the other (else 0), times d / t->border within t->border pixels of the edge,
 * at most t->top. soft receives E. Either output may be NULL, not both; without strength (t
 * then unread) the thinning is not run. Tolerances (tests/spmv/test_cl_forest.c): each
 * scale's as spmv_cl_forest's; the doubled image is the reference's byte for byte, the half
 * scale's bilinear is computed in double where the device has it; the direction (the device's
 * atan2) and the suppression (its samples in float, the reference's in double) can differ where
 * values tie within rounding, as spmv_cl_contours' thinning. Returns as spmv_cl_forest. */
int spmv_cl_forest_contours(spmv_cl_image *im, const spmv_forest_model *F,
                            const spmv_forest_params *p, int scales, const unsigned char *pixels,
                            const unsigned char *half, int channels, int width, int height,
                            const spmv_forest_thinning *t, float *strength, float *soft,
                            double *kernel_seconds);

/* ---------------------------------------------------------------------------------------------
 * The boundary network on the device (kernels/net.cl); the C reference is the library's
 * app_net_run (app/lib/net.c, docs/PIPELINE.md "7c"). The network comes as data: `layers`
 * layers of `channels` 3 x 3 filters, layer l dilated by dilation[l], its weights
 * weight[l][((o cin + c) 3 + ky) 3 + kx] (cin: inputs for the first layer, else channels) and
 * bias[l][o], each followed by max(0, .); the image reflected at its edges (-i reads i, repeated
 * where a dilation passes the image); then one 1 x 1 filter out_weight over the last layer's
 * channels and the inputs (in that order) plus out_bias, and the logistic.
 *
 * Tolerances (tests/spmv/test_cl_net.c): each layer sums its terms in the reference's order
 * (bias, then c, ky, kx) without fused multiply-adds, so the layers are the reference's bit for
 * bit where the device rounds float products and sums correctly; the logistic's exp is the
 * device's: M within 1e-6 of the reference's.
 * ------------------------------------------------------------------------------------------- */

#define SPMV_NET_MAX_CHANNELS 32 /* a layer's filters, at most (each work-item's accumulators) */
#define SPMV_NET_MAX_INPUTS 32
#define SPMV_NET_MAX_LAYERS 16

typedef struct spmv_net {
  int inputs;                 /* planes in, 1 to SPMV_NET_MAX_INPUTS */
  int channels;               /* each layer's filters, 1 to SPMV_NET_MAX_CHANNELS */
  int layers;                 /* 1 to SPMV_NET_MAX_LAYERS */
  const int *dilation;        /* layers, each >= 1 */
  const float *const *weight; /* layers */
  const float *const *bias;   /* layers */
  const float *out_weight;    /* channels + inputs */
  float out_bias;
} spmv_net;

/* M (width * height floats) = the network on x (inputs planes of width * height floats,
 * row-major). kernel_seconds (optional) the kernels' device time. Returns DSG_OK,
 * DSG_ERR_INVALID (a shape out of range, named), DSG_ERR_LIMIT, DSG_ERR_NOMEM or
 * DSG_ERR_OPENCL. */
int spmv_cl_net(spmv_cl_image *im, const spmv_net *net, const float *x, int width, int height,
                float *M, double *kernel_seconds);

#endif /* DIASEG_SPMV_IMAGE_H */
