/* app: everything that knows about images, files and the command line.
 *
 * image.c     loading (stb_image, hardened), features
 * affinity.c  the radius-r disc, W, D and N = D^-1/2 W D^-1/2 in DIA form
 * cluster.c   spectral embedding and k-means++
 * picture.c   labels / overlay / eigenvector pictures (colour maps)
 * output.c    staged (atomic) output files, PNG and .npy writers
 * json.c      a small JSON writer for report.json
 * pipeline.c  the segment / eigs runs; cli.c the command line; main.c the entry point
 * Formulas and file formats: docs/PIPELINE.md and docs/CLI.md.
 */
#ifndef DIASEG_APP_H
#define DIASEG_APP_H

#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>

#include "eigensolver.h"
#include "spmv.h"

/* ---- images ------------------------------------------------------------------------------ */

/* Default cap on width * height; --max-pixels raises it. */
#define APP_DEFAULT_MAX_PIXELS ((size_t)1 << 25) /* 33,554,432 pixels, e.g. 8192 x 4096 */
/* Largest file diaseg reads, in bytes. */
#define APP_MAX_FILE_BYTES ((size_t)1 << 30)

typedef struct app_image {
  int width;
  int height;
  int channels;          /* 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA */
  unsigned char *pixels; /* width * height * channels bytes, row-major, interleaved */
} app_image;

/* Loads a PNG, JPEG, BMP, TGA (by .tga extension only: the format has no signature) or PNM
 * (P5/P6) file. Checks the header's dimensions against max_pixels in size_t before decoding.
 * Returns DSG_OK, DSG_ERR_IO (missing, unreadable, a directory), DSG_ERR_FORMAT (not an image,
 * truncated or corrupt) or DSG_ERR_LIMIT. Free with app_image_free. */
int app_image_load(const char *path, size_t max_pixels, app_image *img);
/* The same checks and decoding on a file already in memory; `name` is used in messages and to
 * recognise TGA by its extension. The entry point of the image fuzzer. */
int app_image_decode(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                     app_image *img);
/* Wraps existing pixels (copied) in an app_image, e.g. for synthetic test images. */
int app_image_from_pixels(app_image *img, int width, int height, int channels,
                          const unsigned char *pixels);
/* Bilinear resampling of src to width x height (for benchmark sizes). */
int app_image_resize(const app_image *src, int width, int height, app_image *dst);
void app_image_free(app_image *img);

typedef enum app_feature {
  APP_FEATURE_INTENSITY, /* gray = (0.299 R + 0.587 G + 0.114 B) / 255, or v / 255 */
  APP_FEATURE_COLOR      /* (R, G, B) / 255 */
} app_feature;

/* Per-pixel features: *nfeat (1 or 3) floats per pixel, row-major. Caller frees *out. */
int app_features(const app_image *img, app_feature kind, float **out, int *nfeat);

/* ---- affinity ---------------------------------------------------------------------------- */

typedef struct app_affinity_params {
  int radius;     /* disc radius r >= 1: offsets with dx^2 + dy^2 <= r^2 */
  double sigma_i; /* feature scale, > 0 */
  double sigma_x; /* spatial scale, > 0 */
} app_affinity_params;

#define APP_MAX_RADIUS 30

/* Number of offsets (dx, dy) in the disc of radius r, (0,0) included (81 for r = 5). */
int app_disc_size(int radius);
/* Fills dx, dy (capacity app_disc_size(radius)) with the disc offsets in row-major order. */
void app_disc_offsets(int radius, int *dx, int *dy);

/* Builds N = D^-1/2 W D^-1/2 of a width x height image with per-pixel features (nfeat floats
 * each) as a DIA matrix: offsets dy * width + dx ascending; disc offsets that give the same
 * diagonal (possible when width <= 2r) share it, since at most one of them is inside the image
 * for any pixel; diagonals with no pixel pair inside the image are left out.
 * *sqrt_degree (optional) receives D^1/2 (n doubles). Returns DSG_OK, DSG_ERR_INVALID (bad
 * parameters, no neighbours) or DSG_ERR_NOMEM / DSG_ERR_LIMIT. */
int app_affinity_build(int width, int height, const float *features, int nfeat,
                       const app_affinity_params *p, spmv_dia **N, double **sqrt_degree);

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
#define APP_MAX_EMBED 64
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
 * *inertia (optional) receives the sum of squared distances. */
int app_kmeans(const float *points, size_t n, int dim, const app_kmeans_params *p, int *labels,
               double *inertia);

/* Gives the pixels of speck components (label >= comps->significant) the label of a 4-neighbour
 * outside any speck, spreading inwards; labels of other pixels are unchanged. */
void app_fill_specks(int *labels, const app_components *comps, int width, int height);

/* Adjusted Rand index of two labelings (1 = identical up to renaming). */
double app_adjusted_rand(const int *a, const int *b, size_t n);

/* ---- pictures ---------------------------------------------------------------------------- */

/* The colour of segment `label` (a fixed qualitative palette, then golden-ratio hues). */
void app_label_color(int label, unsigned char rgb[3]);
/* Viridis colour for t in [0, 1] (clamped). */
void app_viridis(double t, unsigned char rgb[3]);
/* RGB picture of labels (width * height * 3 bytes, caller frees). */
int app_picture_labels(const int *labels, int width, int height, unsigned char **rgb);
/* The input image (as RGB) lightly tinted by segment colour, with segment boundaries drawn. */
int app_picture_overlay(const app_image *img, const int *labels, unsigned char **rgb);
/* Viridis picture of a scalar field, scaled from its 1st to its 99th percentile. */
int app_picture_field(const float *field, int width, int height, unsigned char **rgb);

/* ---- output files ------------------------------------------------------------------------ */

/* A set of output files written atomically: each is staged as a hidden temporary file in the
 * output folder and renamed into place by app_out_commit; app_out_destroy without a commit
 * removes every staged file, so an error or interrupt leaves no partial output behind. */
typedef struct app_out app_out;

/* Creates the folder if missing (one level) and checks it is writable. */
int app_out_begin(app_out **out, const char *dir);
/* Opens a staged file for the final name `name` (no path separators). */
int app_out_open(app_out *o, const char *name, FILE **fp);
/* Closes a staged file, checking every write, flush and close; on failure the file is dropped. */
int app_out_close(app_out *o, FILE *fp);
/* Stages a file at any path, its temporary beside it, committed with the set (--json FILE); a
 * missing parent folder or one that cannot be written fails here. A folder at `path` is an error.
 * A path that exists and is not a regular file (a device such as /dev/full, a FIFO, a symbolic
 * link such as /dev/stdout) is never staged or renamed over: *fp stays NULL and *direct is 1;
 * write it with app_write_direct. */
int app_out_open_path(app_out *o, const char *path, FILE **fp, int *direct);
/* Writes len bytes to path ("-": standard output) in place: open (creating, truncating, like `>`
 * in a shell), write and close, each checked. Returns DSG_OK or DSG_ERR_IO with the reason. */
int app_write_direct(const char *path, const char *buf, size_t len);
/* Puts every staged file in place, all or nothing: first checks that no target is a folder or
 * anything else but a regular file (an error, nothing renamed), keeps each earlier file under a
 * hidden backup name (a hard link, else a rename) until every new one is renamed into place, and
 * on a failure midway removes the new ones and restores the earlier ones. Then removes the
 * backups, and the files of an earlier run that this one did not write: names in the folder that
 * match one of the fnmatch patterns in `stale` (NULL terminated; NULL: none), e.g. eigvec_07.png
 * after a run with --nev 4. Other files stay. */
int app_out_commit(app_out *o, const char *const *stale);
/* Removes staged files that were not committed, frees o (NULL is allowed). */
void app_out_destroy(app_out *o);
/* Removes staged files now (async-signal-safe: unlink only). For signal handlers. */
void app_out_abort_signal_safe(app_out *o);
/* The folder. */
const char *app_out_dir(const app_out *o);

/* Writers into a staged file. They check their sizes (stbi_write_png computes in int). */
int app_out_png(app_out *o, const char *name, int width, int height, int comp,
                const unsigned char *data);
int app_out_npy_f32(app_out *o, const char *name, const float *data, int ndim, const size_t *shape);
int app_out_npy_f64(app_out *o, const char *name, const double *data, int ndim,
                    const size_t *shape);
int app_out_npy_i32(app_out *o, const char *name, const int32_t *data, int ndim,
                    const size_t *shape);
int app_out_text(app_out *o, const char *name, const char *text, size_t len);

/* ---- JSON -------------------------------------------------------------------------------- */

/* A growing JSON text with automatic commas. Keys are ignored inside arrays. Errors (out of
 * memory) are sticky and reported by app_json_finish. */
typedef struct app_json {
  char *buf;
  size_t len, cap;
  int depth;
  int first[32];           /* no comma needed before the next item at this depth */
  unsigned char array[32]; /* the container at this depth is an array */
  int failed;
} app_json;

void app_json_init(app_json *j);
void app_json_begin_object(app_json *j, const char *key);
void app_json_end_object(app_json *j);
void app_json_begin_array(app_json *j, const char *key);
void app_json_end_array(app_json *j);
void app_json_string(app_json *j, const char *key, const char *value);
void app_json_number(app_json *j, const char *key, double value); /* non-finite -> null */
void app_json_int(app_json *j, const char *key, long long value);
void app_json_bool(app_json *j, const char *key, int value);
void app_json_null(app_json *j, const char *key);
/* Terminates the text (newline); returns DSG_OK or DSG_ERR_NOMEM. */
int app_json_finish(app_json *j);
void app_json_free(app_json *j);

/* ---- command line and runs -------------------------------------------------------------- */

typedef enum app_command {
  APP_CMD_NONE,
  APP_CMD_SEGMENT,  /* image -> segments, pictures, report */
  APP_CMD_EIGS,     /* image -> eigenvectors, pictures, report (no clustering) */
  APP_CMD_AFFINITY, /* image -> the normalised matrix as .npy files (for other solvers) */
  APP_CMD_BENCH,    /* SpMV and solve timings per backend, against the bandwidth bound */
  APP_CMD_DEVICES   /* list the OpenCL platforms and devices */
} app_command;

#define APP_MAX_INPUTS 16

/* Everything a run needs; app_cli_parse fills it from argv, starting from app_config_init. */
typedef struct app_config {
  app_command command;
  int help;               /* --help given: print app_cli_usage and exit 0 */
  int version;            /* --version given */
  const char *image;      /* NULL: the sample image (app_find_sample) */
  const char *out_dir;    /* -o (segment, eigs; default "out") or --export (affinity; "matrix") */
  int resize_w, resize_h; /* --resize WxH: resample the image first (0: keep) */
  int k;                  /* -k segments */
  int nev;                /* --nev */
  int ncv;                /* --ncv, 0 = automatic */
  double tol;             /* --tol */
  int max_iter;           /* --max-iter */
  app_affinity_params affinity;
  app_feature feature;    /* --affinity intensity|color */
  const char *matvec;     /* --matvec auto|cpu|opencl (bench: also all) */
  const char *solver;     /* --solver lanczos|arpack (bench: also all) */
  const char *cl_device;  /* --cl-device INDEX|NAME ($DIASEG_CL_DEVICE) */
  spmv_kernel kernel;     /* --kernel (SPMV_KERNEL_AUTO; bench: all_kernels) */
  int all_kernels;        /* bench --kernel all (the default there) */
  unsigned kernel_mask;   /* bench --kernel a,b,...: bit k for spmv_kernel k (0: see above) */
  size_t local_size;      /* --local-size */
  const char *kernel_dir; /* --kernel-dir ($DIASEG_KERNEL_DIR) */
  unsigned long long cl_max_alloc; /* --cl-max-alloc ($DIASEG_CL_MAX_ALLOC) */
  uint64_t seed;                   /* --seed (k-means) */
  int restarts;                    /* --restarts (k-means) */
  const char *json;                /* --json FILE or "-" */
  size_t max_pixels;               /* --max-pixels */
  int quiet;                       /* --quiet: no progress or summary on stderr */
  int keep_specks; /* --keep-specks: no speck handling, the plain top of the spectrum */
  /* bench */
  const char *inputs[APP_MAX_INPUTS]; /* IMAGE ... */
  int ninputs;
  int sizes[APP_MAX_INPUTS][2]; /* --size WxH ... (the sample image resampled) */
  int nsizes;
  int repeat;        /* --repeat: timed SpMV runs (median and min are reported) */
  int no_solve;      /* --spmv-only */
  const char *csv;   /* --csv FILE */
  const char *chart; /* --chart FILE.svg */
} app_config;

void app_config_init(app_config *cfg);
/* Parses argv (argv[0] is the program) into cfg. Returns DSG_OK or DSG_ERR_INVALID with a
 * message naming the offending argument. Never prints, never exits. */
int app_cli_parse(int argc, char **argv, app_config *cfg);
/* Prints the help of cmd (APP_CMD_NONE: the overview) to f. */
void app_cli_usage(FILE *f, app_command cmd);
/* Name of a command ("segment", ...). */
const char *app_command_name(app_command cmd);

/* Finds the sample image (DIASEG_DATA_DIR, the source tree, the install prefix, next to the
 * executable) and writes its path into buf. Returns DSG_OK or DSG_ERR_IO. */
int app_find_sample(char *buf, size_t cap);

/* Set by the signal handlers; the run checks it between stages and in the solver. */
extern volatile sig_atomic_t app_cancel;
/* Installs SIGINT/SIGTERM handlers: the first signal sets app_cancel, a second one removes the
 * staged outputs at once and exits 128 + signal. */
void app_signals_install(void);

/* Exit codes of the diaseg command (docs/CLI.md). */
enum app_exit {
  APP_EXIT_OK = 0,
  APP_EXIT_ERROR = 1,  /* a runtime failure: I/O, memory, OpenCL, solver */
  APP_EXIT_USAGE = 2,  /* bad command line or bad input image */
  APP_EXIT_NOCONV = 3, /* the eigensolver hit its iteration limit: partial results, flagged */
  APP_EXIT_INTERRUPTED = 130
};
/* Maps a status to the exit code above. */
int app_exit_code(int status);

/* Creates the matvec cfg asks for on N. "cpu": the C path. "opencl": cfg's device and kernel;
 * failures are errors. "auto": a named device ($DIASEG_CL_DEVICE, --cl-device), else the first
 * OpenCL GPU, else the C path; if the OpenCL path fails it falls back to the C path. Says on
 * stderr which it took (unless quiet). N must outlive the matvec. */
int app_matvec_create(const app_config *cfg, const spmv_dia *N, spmv_matvec **mv);
/* The spmv_cl_options that cfg asks for. */
void app_cl_options(const app_config *cfg, spmv_cl_options *opt);
/* The eigensolver options cfg asks for (nev, ncv, tol, max_iter; the rest at their defaults). */
void app_eig_options(const app_config *cfg, eig_options *opt);
/* diaseg devices: the platforms and devices, and which one diaseg would pick. */
int app_devices(const app_config *cfg);

/* Runs the eigensolver cfg->solver names ("lanczos" or "arpack"). */
int app_solve(const app_config *cfg, spmv_matvec *mv, const eig_options *opt, eig_result *res);

/* Runs the bench command: tables on stdout, --json / --csv / --chart files. */
int app_bench(const app_config *cfg);

/* Runs cfg->command (segment, eigs or affinity). Returns a status; prints nothing on error (the
 * caller prints dsg_error_message()), progress and the summary on stderr unless cfg->quiet. */
int app_run(const app_config *cfg);

#endif /* DIASEG_APP_H */
