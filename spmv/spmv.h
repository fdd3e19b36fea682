/* spmv: DIA sparse matrices and the matrix-vector products of diaseg.
 *
 * This is the bottom module of diaseg (app -> eigensolver -> spmv -> kernels). It owns:
 *  - the DIA matrix (spmv_dia): ndiag diagonals of a square matrix, each stored in `pitch` floats;
 *  - the scalar reference product (the test oracle) and the threaded C product;
 *  - the backend interface (spmv_matvec, spmv_basis): y = A x and the vector operations of a
 *    Lanczos basis behind one object, implemented by the C path (the reference) and by the
 *    OpenCL path, with per-call timing split into kernel, transfer and host time, and the
 *    backend's capabilities (spmv_caps).
 * It reads no environment variables, flags or files other than the kernel folder it is given;
 * its messages name parameters with DSG_PARAM, never command-line flags.
 * The layout and formulas are described in docs/PIPELINE.md.
 */
#ifndef DIASEG_SPMV_H
#define DIASEG_SPMV_H

#include <stddef.h>
#include <stdint.h>

#include "dsg_base.h"

/* ---------------------------------------------------------------------------------------------
 * DIA matrices.
 *
 * A square rows x rows matrix stored by diagonals: entry (row, row + offsets[d]) lives at
 * values[d * pitch + row]. offsets are strictly ascending. pitch is rows rounded up to a
 * multiple of SPMV_PITCH_ALIGN floats, values is SPMV_ALIGN_BYTES-aligned, and every entry whose
 * column falls outside [0, rows) and every padding entry (row >= rows) is zero.
 * ------------------------------------------------------------------------------------------- */
#define SPMV_PITCH_ALIGN 32 /* floats: 128 bytes */
#define SPMV_ALIGN_BYTES 128

/* A copy of a matrix's values that a backend made on its device (the OpenCL affinity writes N
 * there first): a product on the same device takes it instead of uploading values again. The
 * backend extends it; release frees it, read copies it to the host (bytes: spmv_dia_bytes). */
typedef struct spmv_dia_device {
  void (*release)(struct spmv_dia_device *self);
  int (*read)(struct spmv_dia_device *self, float *values, size_t bytes);
} spmv_dia_device;

typedef struct spmv_dia {
  int rows;     /* matrix order n */
  int ndiag;    /* number of stored diagonals */
  size_t pitch; /* floats per stored diagonal, >= rows, multiple of SPMV_PITCH_ALIGN */
  int *offsets; /* ndiag column offsets, strictly ascending */
  /* ndiag * pitch floats, SPMV_ALIGN_BYTES-aligned, zero-initialised; NULL in a matrix made with
   * spmv_dia_create_shape until spmv_dia_host gives it the device's */
  float *values;
  /* 0, or the width W of the image whose pixels the rows are (row y * W + x) when A is a pixel
   * stencil: every offset is dy * W + dx with |dx| < W / 2, and every entry linking pixels across
   * the image's left and right edges (0 <= x + dx < W fails) is zero. A backend may then tile
   * the product in 2D. spmv_dia_create sets 0; spmv_dia_validate checks the promise. */
  int width;
  /* 0, or 1 when A = A^T exactly: the offsets come in pairs o, -o (and 0 among them) and
   * values[-o][r + o] == values[o][r] for every row r. spmv_dia_mul then reads the diagonals of
   * offsets >= 0 alone (half the bytes), each entry below the main diagonal as its mirror above.
   * spmv_dia_create sets 0; the affinity builders set 1 (N is symmetric by construction);
   * whoever changes values sets it back to 0 unless the change keeps the promise, which
   * spmv_dia_validate checks. */
  int symmetric;
  /* NULL, or the values as they are on a backend's device (equal to values, owned by A): whoever
   * changes values after it is set drops it first (spmv_dia_drop_device). */
  spmv_dia_device *device;
} spmv_dia;

/* Allocates a zero-filled DIA matrix with the given offsets (copied; must be strictly ascending
 * and within (-rows, rows)). Checks ndiag * pitch for overflow before allocating.
 * Returns DSG_OK, DSG_ERR_INVALID or DSG_ERR_NOMEM. Free with spmv_dia_destroy. */
int spmv_dia_create(spmv_dia **out, int rows, int ndiag, const int *offsets);
/* The same matrix without host values (values NULL): for a backend that fills a device copy
 * (A->device) and a host that may never need them. Every function that reads values wants them
 * first (spmv_dia_host). */
int spmv_dia_create_shape(spmv_dia **out, int rows, int ndiag, const int *offsets);
/* Gives A host values where it has none, read from its device copy. Returns DSG_OK (also when A
 * had them), DSG_ERR_NOMEM, DSG_ERR_INVALID (no device copy either) or the backend's error. */
int spmv_dia_host(spmv_dia *A);
/* A's device copy read into *values (ndiag * pitch floats, SPMV_ALIGN_BYTES-aligned; the caller
 * frees them), A unchanged. Returns DSG_OK, DSG_ERR_INVALID (no device copy), DSG_ERR_NOMEM or the
 * backend's error. */
int spmv_dia_read_device(const spmv_dia *A, float **values);
/* Frees A and its device copy (NULL is allowed). */
void spmv_dia_destroy(spmv_dia *A);
/* Releases A's device copy, if any, where A has host values (else it is the only copy): for
 * whoever changes A's values, or no longer needs the copy. */
void spmv_dia_drop_device(spmv_dia *A);
/* Bytes of the stored values (ndiag * pitch * sizeof(float)). */
size_t spmv_dia_bytes(const spmv_dia *A);
/* Checks the invariants above (ascending offsets, zeros outside the matrix and in the padding,
 * finite values). Returns DSG_OK or DSG_ERR_INVALID with a message naming the first violation. */
int spmv_dia_validate(const spmv_dia *A);

/* Scalar reference y = A x: one row at a time, bounds-checked, accumulated in double.
 * The test oracle for every other product. x and y have rows elements and must not alias. */
void spmv_dia_mul_ref(const spmv_dia *A, const float *x, float *y);
/* One row of it: (A x)_row in double, the diagonals in order (spmv_dia_mul_ref's sum). */
double spmv_dia_row_mul(const spmv_dia *A, int row, const float *x);
/* The largest row error of y against a reference product ref = A x, relative to the row's
 * sum |a_rd| |x_c| (1 for an empty row): the measure every test and bench check uses. */
double spmv_dia_row_error(const spmv_dia *A, const float *x, const float *y, const float *ref);
/* Threaded (OpenMP), vectorised y = A x over row blocks, eight diagonals at a time; float
 * accumulation. A symmetric matrix (A->symmetric) is read through its upper half: four diagonals
 * at a time, each entry for its own row and for its mirror's. x and y have rows elements and must
 * not alias. */
void spmv_dia_mul(const spmv_dia *A, const float *x, float *y);

/* Connected components of the graph whose edges are the entries |a_ij| > threshold (i != j).
 * label (rows ints) receives 0 .. *ncomp - 1, numbered by first appearance in row order. Each
 * pair i, j is looked up once, from a diagonal above the main one and its mirror below.
 * Returns DSG_OK or DSG_ERR_NOMEM. */
int spmv_dia_components(const spmv_dia *A, float threshold, int *label, int *ncomp);

/* Which rows of a DIA matrix an entry above a threshold links, one bit a pair of rows: the
 * components' input, 1/32 of a float a pair where the matrix has two. Pair k joins rows r and
 * r + offsets[k] (offsets[k] > 0), read from the diagonal `upper[k]` (entry (r, r + o)) and its
 * mirror `lower[k]` (entry (r + o, r)), either -1 where A stores none: bit r of mask k (word
 * r / 32 of bits + k * words, bit r % 32) is set when |a| > threshold on either side. */
typedef struct spmv_links {
  int rows, count;    /* rows of A; pairs of diagonals */
  int *offsets;       /* count offsets > 0 */
  int *upper, *lower; /* count diagonal indices of A each, or -1 */
  size_t words;       /* 32-bit words a mask: ceil(rows / 32) */
  uint32_t *bits;     /* count masks of `words` words each */
} spmv_links;

/* The pairs of A's diagonals into L, every bit clear (a device fills them). Returns DSG_OK or
 * DSG_ERR_NOMEM. Free with spmv_links_free. */
int spmv_links_create(spmv_links *L, const spmv_dia *A);
/* The C reference: L = A's links above threshold (spmv_links_create, then every bit). */
int spmv_dia_links(const spmv_dia *A, float threshold, spmv_links *L);
/* Connected components of the rows that L links, numbered as spmv_dia_components's. Returns
 * DSG_OK or DSG_ERR_NOMEM. */
int spmv_links_components(const spmv_links *L, int *label, int *ncomp);
/* The components of inner and of outer (optional), links of one matrix at two thresholds, outer's
 * the lower (every pair inner links, outer links too): outer's start from inner's, so only the
 * pairs between the thresholds are visited again. Returns DSG_OK, DSG_ERR_INVALID (links of
 * different matrices) or DSG_ERR_NOMEM. */
int spmv_links_components_nested(const spmv_links *inner, const spmv_links *outer, int *inner_label,
                                 int *ninner, int *outer_label, int *nouter);
void spmv_links_free(spmv_links *L);

/* ---------------------------------------------------------------------------------------------
 * The matvec interface: y = A x for one fixed matrix, on some backend.
 * ------------------------------------------------------------------------------------------- */
typedef struct spmv_matvec spmv_matvec;

/* Accumulated timing of all apply calls since creation (or the last reset), in seconds.
 * total_s is the wall time of the calls; kernel_s the device (or C loop) time of the product;
 * transfer_s the host<->device copies; host_s the rest (argument setup, waits, conversions). */
typedef struct spmv_timing {
  long calls;
  double total_s;
  double kernel_s;
  double transfer_s;
  double host_s;
} spmv_timing;

/* Creates the C-path matvec for A. A is borrowed: it must outlive the matvec.
 * Returns DSG_OK or DSG_ERR_NOMEM. */
int spmv_matvec_create_cpu(spmv_matvec **out, const spmv_dia *A);
/* y = A x with x, y host arrays of spmv_matvec_rows() floats. Returns DSG_OK or an error
 * (OpenCL failures) with the message set. */
int spmv_matvec_apply(spmv_matvec *mv, const float *x, float *y);
/* Matrix order n. */
int spmv_matvec_rows(const spmv_matvec *mv);
/* The timing accumulated so far. */
spmv_timing spmv_matvec_timing(const spmv_matvec *mv);
/* Resets the timing counters to zero. */
void spmv_matvec_timing_reset(spmv_matvec *mv);
/* Backend name: "cpu" or "opencl". */
const char *spmv_matvec_backend(const spmv_matvec *mv);

/* What a matvec's backend offers its callers (the eigensolver chooses by it). */
typedef struct spmv_caps {
  const char *backend; /* "cpu" or "opencl" (spmv_matvec_backend) */
  int device_resident; /* basis vectors live in device memory */
  int fp64;            /* double-precision reductions on the device (always 1 for cpu) */
} spmv_caps;

/* The capabilities of mv's backend (for OpenCL, of its device). */
spmv_caps spmv_matvec_caps(const spmv_matvec *mv);
/* Frees mv and everything it created (NULL is allowed). */
void spmv_matvec_destroy(spmv_matvec *mv);
/* Gets mv ready for a basis of m + 1 columns (spmv_basis_create) ahead of the solve, so that a
 * device that cannot run it says so before any work, and the kernels' build time is not part of
 * the solve: on OpenCL, checks double precision and that the basis fits the device's memory, and
 * builds the basis kernels (kernels/lanczos.cl) once per matvec, or takes them from the
 * process-wide cache. Nothing to do on the C path.
 * Returns DSG_OK, DSG_ERR_INVALID (m outside [2, 4096]), DSG_ERR_NODEVICE, DSG_ERR_LIMIT,
 * DSG_ERR_IO or DSG_ERR_OPENCL (build log in spmv_cl_build_log()). */
int spmv_matvec_prepare_basis(spmv_matvec *mv, int m);

/* ---------------------------------------------------------------------------------------------
 * The OpenCL path: the DIA kernels of kernels/dia_spmv.cl on any OpenCL device (a GPU, or a CPU
 * through PoCL). The device's context and queue and the built programs come from a process-wide
 * cache (spmv_cl_cache_clear), shared with the image stages (spmv_image.h) and with later
 * matvecs; A is uploaded once per matvec; each product writes x (into an image for the image
 * kernel), runs the kernel and reads y back, timed with events.
 * ------------------------------------------------------------------------------------------- */
typedef enum spmv_kernel {
  SPMV_KERNEL_AUTO = 0, /* image where the device supports images of the needed size, else vector */
  SPMV_KERNEL_NAIVE,    /* one row per work-item, packed A, offsets from global memory */
  SPMV_KERNEL_ALIGNED,  /* the pitched, aligned layout */
  SPMV_KERNEL_LOCAL,    /* offsets staged in local memory */
  SPMV_KERNEL_VECTOR,   /* four rows per work-item, float4 loads */
  SPMV_KERNEL_IMAGE,    /* vector, with x read from a float4 image (texture cache) */
  SPMV_KERNEL_COUNT
} spmv_kernel;

/* "naive", "aligned", ... ("auto" for SPMV_KERNEL_AUTO). */
const char *spmv_kernel_name(spmv_kernel k);
/* Parses a kernel name. Returns DSG_OK or DSG_ERR_INVALID with a message listing the names. */
int spmv_kernel_parse(const char *name, spmv_kernel *k);

typedef struct spmv_cl_device {
  int index; /* across all platforms, in enumeration order */
  char platform[96];
  char name[96];
  char version[64]; /* the device's OpenCL version string */
  int gpu;          /* CL_DEVICE_TYPE_GPU */
  int cpu;          /* CL_DEVICE_TYPE_CPU */
  unsigned long long global_mem, max_alloc, local_mem;
  int compute_units;
  size_t max_work_group;
  int image_support;
  size_t image2d_max_width, image2d_max_height;
  int fp64;
} spmv_cl_device;

/* Every OpenCL device of every platform. *list is malloc'd (caller frees). Returns DSG_OK, or
 * DSG_ERR_NODEVICE with a message when there is no platform (no ICD) or no device. */
int spmv_cl_devices(spmv_cl_device **list, int *count);
/* The device a spec names: an index, or a case-insensitive substring of "platform device"; NULL
 * or "" means the first GPU, else (unless gpu_only) the first device. Reads no environment (the
 * caller passes what the user asked for). Returns DSG_OK or DSG_ERR_NODEVICE with a message. */
int spmv_cl_pick(const spmv_cl_device *list, int count, const char *spec, int gpu_only, int *index);

typedef struct spmv_cl_options {
  const char *device;     /* see spmv_cl_pick */
  spmv_kernel kernel;     /* SPMV_KERNEL_AUTO by default */
  size_t local_size;      /* work-group size; 0: 128 (capped by the device) */
  const char *kernel_dir; /* load the kernels' .cl files from this folder; NULL or "": built in */
  unsigned long long max_alloc; /* 0: the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE; else a lower cap,
                                 * to test the size checks */
  size_t basis_groups;     /* the basis's row-parallel kernels: work-groups; 0: automatic (8 per
                            * compute unit, never more than the rows give work to) */
  size_t basis_row_groups; /* the basis's V^T w: row groups; 0: automatic (1 per compute unit,
                            * likewise). Each at most 65536 (DSG_ERR_INVALID); for tuning */
} spmv_cl_options;

/* Zeroes opt: the defaults above. */
void spmv_cl_options_init(spmv_cl_options *opt);

/* Creates the OpenCL matvec for A on the chosen device (A is copied to the device, or, for a
 * kernel of the pitched layout, takes A's device copy where it is on the same device (A->device);
 * a matrix without host values is read back from that copy for the upload; the host copy may be
 * freed afterwards). Checks every allocation against the device's limits
 * first. Reads no environment: everything comes from opt. Returns DSG_OK, DSG_ERR_NODEVICE,
 * DSG_ERR_LIMIT, DSG_ERR_OPENCL, DSG_ERR_IO (kernel_dir) or DSG_ERR_INVALID, with a message; a
 * failed program build leaves its log in spmv_cl_build_log(). */
int spmv_matvec_create_opencl(spmv_matvec **out, const spmv_dia *A, const spmv_cl_options *opt);

typedef struct spmv_cl_info {
  char platform[96];
  char device[96];
  spmv_kernel kernel;
  size_t local_size;
  size_t image_width, image_height; /* image kernel: x's image, in float4 pixels */
  char note[256];                   /* why this kernel, when it was chosen automatically */
} spmv_cl_info;

/* The OpenCL details of mv, or NULL for the C path. */
const spmv_cl_info *spmv_matvec_cl_info(const spmv_matvec *mv);
/* The build log of this thread's last failed program build ("" if none). */
const char *spmv_cl_build_log(void);
/* The device's copy bandwidth: copy_float4 over `bytes`, the median of `repeat` event-timed runs,
 * bytes read plus written per second. mv must be an OpenCL matvec. */
int spmv_cl_copy_gbs(spmv_matvec *mv, size_t bytes, int repeat, double *gbs);

/* The process-wide OpenCL cache: one context and in-order queue per device, opened by the first
 * matvec or spmv_cl_image on it, and every program built, keyed by (device, the source text, the
 * build options): a matvec or an image-stage object made later in the process, on any thread,
 * reuses them instead of opening the device and building again. A kernel folder's file is read
 * on every creation, so an edited file is a new key and is built. Failed builds are not kept; an
 * OpenCL call that failed during an object's life drops its context from the cache when the
 * object is destroyed (the next creation opens a fresh one). Every object keeps its own
 * references, so destroying it never frees what the cache holds and clearing the cache never
 * frees what a live object uses. Objects on several threads share the device's one in-order
 * queue, so their device work is serialised. Released at exit. */

/* Releases the cache's references (thread-safe); the next creation opens the device again. Also
 * resets the counts below. */
void spmv_cl_cache_clear(void);

/* What the cache holds, and what it did since the process began or the last spmv_cl_cache_clear
 * (for tests and diagnostics). */
typedef struct spmv_cl_cache_counts {
  int contexts; /* devices opened: a context and a queue each */
  int programs; /* built programs held */
  long builds;  /* programs built (successfully) */
  long reuses;  /* programs handed out from the cache instead of built */
} spmv_cl_cache_counts;
spmv_cl_cache_counts spmv_cl_cache_stats(void);

/* ---------------------------------------------------------------------------------------------
 * Lanczos bases: the vector operations of a restarted Lanczos method, done where the matvec
 * lives. On the OpenCL path everything of length n stays in device memory; only the small
 * coefficient arrays cross to the host. The C path implements the same operations with OpenMP.
 *
 * The basis holds m + 1 columns V[:, 0..m] of n floats and a work vector w. Reductions are done in
 * double. Known vectors with disjoint supports (spmv_known) are projected out after every product,
 * so the method works on P A P.
 * ------------------------------------------------------------------------------------------- */
typedef struct spmv_known {
  int count;          /* 0: none */
  const int *label;   /* n labels in [-1, count): the vector each row belongs to (-1: none) */
  const float *value; /* n entries: row i's value in vector label[i]; each vector has unit norm */
} spmv_known;

typedef struct spmv_basis spmv_basis;

/* Time spent in each kind of basis operation since creation, in seconds (device event time on
 * the OpenCL path, wall time on the C path), and how many expansion steps ran. */
typedef struct spmv_basis_timing {
  long steps;
  double matvec_s;    /* the DIA product (and the copy of x into the image, if any) */
  double project_s;   /* known-vector projection */
  double orth_s;      /* both Gram-Schmidt passes: V^T w and w - V h */
  double normalize_s; /* |w| and V[:, j+1] = w / |w| */
  double restart_s;   /* the restart product V Y and the Ritz vectors */
  double transfer_s;  /* coefficients to the host, start vectors to the device */
  long launches;      /* OpenCL kernel launches (0 on the C path) */
  long second_passes; /* Gram-Schmidt second passes the DGKS test asked for */
} spmv_basis_timing;

/* Creates a basis of m + 1 columns on mv's backend. known may be NULL. `fuse` (OpenCL) computes
 * |w|^2 inside the second Gram-Schmidt update instead of in a pass of its own.
 * Returns DSG_OK, DSG_ERR_LIMIT (device memory), DSG_ERR_NOMEM, DSG_ERR_OPENCL. */
int spmv_basis_create(spmv_basis **out, spmv_matvec *mv, int m, const spmv_known *known, int fuse);
/* V[:, col] = x / |x| after x is projected and orthogonalised against V[:, 0..col-1] (twice).
 * *norm receives |x| after orthogonalisation (0: x lies in the span). */
int spmv_basis_set(spmv_basis *b, int col, const float *x, double *norm);
/* One Lanczos step, queued (no host synchronisation): w = P A P V[:, j]; classical Gram-Schmidt
 * against V[:, 0..j], a second pass when the DGKS test asks for it (the first pass cancelled more
 * than half of |w|^2); V[:, j + 1] = w / |w|. Step j's coefficients (h_0 .. h_j summed over the
 * passes, then |w|) are logged for spmv_basis_coefficients. */
int spmv_basis_expand(spmv_basis *b, int j);
/* Waits for the queued steps and reads the logged coefficients of steps j0 .. j1 - 1 into
 * coef[(j - j0) * (m + 2) + i]: h_i for i <= j, then |w| at index j + 1. */
int spmv_basis_coefficients(spmv_basis *b, int j0, int j1, double *coef);
/* Thick restart: V[:, c] = sum_i V[:, i] Y[i + c * ldy] for c < k (i < mcur), then V[:, k] =
 * V[:, mcur] (the residual direction). Y is column-major with leading dimension ldy. */
int spmv_basis_restart(spmv_basis *b, const double *Y, int ldy, int mcur, int k);
/* out[c * n + r] = sum_i V[r, i] Y[i + c * ldy] for c < k, i < mcur: Ritz vectors to the host. */
int spmv_basis_ritz(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out);
spmv_basis_timing spmv_basis_get_timing(const spmv_basis *b);
void spmv_basis_destroy(spmv_basis *b);

/* ---------------------------------------------------------------------------------------------
 * Blocks: sets of b vectors of n floats where the matvec lives, for block eigensolvers (the
 * Chebyshev-filtered subspace iteration, eigensolver/chfsi.c). A block object holds `slots`
 * blocks of b columns each (column v of a slot is a vector of n floats); the product reads A once
 * for all b columns (a DIA SpMM), which is where a block method saves over one vector at a time.
 * Reductions are done in double. Known vectors (spmv_known) are projected out only on request.
 * ------------------------------------------------------------------------------------------- */
typedef struct spmv_block spmv_block;

/* Time spent in the block operations since creation, in seconds (device event time on the
 * OpenCL path, wall time on the C path). */
typedef struct spmv_block_timing {
  long products;     /* vector products: b per spmv_block_product */
  double matvec_s;   /* spmv_block_product */
  double vector_s;   /* spmv_block_axpby, spmv_block_transform, spmv_block_project */
  double reduce_s;   /* spmv_block_gram, spmv_block_residuals (their reductions and read-back) */
  double transfer_s; /* spmv_block_set, spmv_block_get */
  long launches;     /* OpenCL kernel launches (0 on the C path) */
} spmv_block_timing;

/* The most columns a block may have. */
#define SPMV_BLOCK_MAX 64

/* Creates `slots` (1..8) blocks of b (1..SPMV_BLOCK_MAX, <= n) columns on mv's backend, zeroed.
 * known may be NULL (borrowed: it must outlive the block). Returns DSG_OK, DSG_ERR_INVALID,
 * DSG_ERR_LIMIT (device memory), DSG_ERR_NOMEM, DSG_ERR_NODEVICE (OpenCL without double
 * precision), DSG_ERR_IO (a kernel folder) or DSG_ERR_OPENCL. */
int spmv_block_create(spmv_block **out, spmv_matvec *mv, int b, int slots, const spmv_known *known);
/* Columns per block. */
int spmv_block_width(const spmv_block *k);
/* Slot s := x, x column-major with leading dimension n (column v at x + v * n). */
int spmv_block_set(spmv_block *k, int s, const float *x);
/* Slot s := pseudo-random columns, made where the block lives: column v is the splitmix64 stream
 * seeded seed + v, entry i = (z >> 11) 2^-53 - 0.5 rounded to float, with z = mix(seed + v +
 * (i + 1) 0x9e3779b97f4a7c15) (splitmix64's output function): the numbers eig_start_vector
 * makes for seed EIG_START_SEED, bit for bit on every backend. */
int spmv_block_fill_random(spmv_block *k, int s, unsigned long long seed);
/* The first `cols` columns of slot s into out (column v at out + v * n). */
int spmv_block_get(spmv_block *k, int s, int cols, float *out);
/* dst := alpha A src + beta src + gamma prev, column by column; prev < 0: no third term.
 * dst != src; dst may be prev (each entry of prev is read before it is overwritten). One step of
 * a Chebyshev recurrence. */
int spmv_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                       double gamma);
/* dst := alpha x + beta y (dst may be x or y). */
int spmv_block_axpby(spmv_block *k, int dst, double alpha, int x, double beta, int y);
/* G[i + j * b] = sum_r X[r, i] Y[r, j] for slots x, y (x may be y), accumulated in double. */
int spmv_block_gram(spmv_block *k, int x, int y, double *G);
/* Slot s := slot s times M (b x b, column-major: column j of the result is sum_i s[:, i]
 * M[i + j * b]), in place. */
int spmv_block_transform(spmv_block *k, int s, const double *M);
/* out[v] = |ax[:, v] - theta[v] x[:, v]|^2 for v < b, accumulated in double. */
int spmv_block_residuals(spmv_block *k, int ax, int x, const double *theta, double *out);
/* Slot s := P s, P the projector out of the known vectors (nothing without known vectors). */
int spmv_block_project(spmv_block *k, int s);
spmv_block_timing spmv_block_get_timing(const spmv_block *k);
/* Frees k (NULL allowed); destroy blocks before their matvec. */
void spmv_block_destroy(spmv_block *k);

#endif /* DIASEG_SPMV_H */
