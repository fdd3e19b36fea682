/* Private to spmv/opencl/: the DIA kernels of kernels/dia_spmv.cl — the table that describes
 * them, the matrix on the device, and the one function that binds a DIA kernel's arguments
 * (used by the matvec and by the basis alike). Adding a kernel is adding its row to the table
 * (cl_dia.c) and its function to kernels/dia_spmv.cl. */
#ifndef DIASEG_SPMV_CL_DIA_H
#define DIASEG_SPMV_CL_DIA_H

#include "cl_runtime.h"

/* The arguments a DIA kernel can take, in the order its row lists them. */
typedef enum spmv_cl_dia_arg {
  SPMV_CL_ARG_END = 0,    /* ends the list */
  SPMV_CL_ARG_A,          /* __global const float *: the values, packed or pitched */
  SPMV_CL_ARG_PITCH,      /* int: floats per stored diagonal (pitched layout) */
  SPMV_CL_ARG_ROWS,       /* int: the matrix order */
  SPMV_CL_ARG_NDIAG,      /* int: stored diagonals */
  SPMV_CL_ARG_OFFSETS,    /* __global const int *: the diagonals' column offsets */
  SPMV_CL_ARG_X,          /* __global const float *: x (a buffer kernel's; set per launch) */
  SPMV_CL_ARG_X_IMAGE,    /* read_only image2d_t: x as float4 pixels (the DIA's image) */
  SPMV_CL_ARG_LOG_WIDTH,  /* int: log2 of the image's width in pixels */
  SPMV_CL_ARG_WIDTH_MASK, /* int: the image's width - 1 */
  SPMV_CL_ARG_Y,          /* __global float *: y */
  SPMV_CL_ARG_MAX = 10    /* the most arguments a row lists */
} spmv_cl_dia_arg;

/* One DIA kernel. */
typedef struct spmv_cl_dia_kernel {
  spmv_kernel id;
  const char *name;     /* spmv_kernel_name */
  const char *function; /* its __kernel in kernels/dia_spmv.cl */
  int packed;           /* A packed, diagonal d at d * rows (no padding); else pitched as on the
                         * host (d * pitch) */
  int rows_per_item;    /* rows one work-item computes: the launch has ceil(rows / this) items */
  int x_image;          /* x read from a float4 image (SPMV_CL_ARG_X_IMAGE), else a buffer */
  spmv_cl_dia_arg args[SPMV_CL_ARG_MAX + 1]; /* its arguments in order, SPMV_CL_ARG_END after */
} spmv_cl_dia_kernel;

/* The row of kernel id, or NULL for SPMV_KERNEL_AUTO and values outside the enum. */
const spmv_cl_dia_kernel *spmv_cl_dia_kernel_find(spmv_kernel id);

/* A DIA matrix on a device, with its kernel chosen and its launch size fixed. */
typedef struct spmv_cl_dia {
  const spmv_cl_dia_kernel *kernel;
  cl_program program; /* kernels/dia_spmv.cl (also holds copy_float4) */
  cl_mem A, offsets;
  cl_mem ximage;                    /* x_image kernels: x as an image_width x image_height */
  size_t image_width, image_height; /* float4 image (zero past row n); else 0 */
  int rows, ndiag;
  int width; /* spmv_dia's: the image's width when A is a pixel stencil, else 0 */
  size_t pitch;
  size_t global, local; /* the launch: local work-group size, global = items rounded up */
} spmv_cl_dia;

/* Gives A the device copy `values` (A's pitched values, made on rt's device): retains values,
 * rt's context and queue, which spmv_dia_destroy releases; spmv_dia_host reads it back through
 * the queue. Returns DSG_OK or DSG_ERR_NOMEM (A unchanged). */
int spmv_cl_dia_keep_device(spmv_dia *A, const spmv_cl_runtime *rt, cl_mem values);
/* A's device copy if it is an OpenCL one on ctx, else NULL (A keeps its reference). */
cl_mem spmv_cl_dia_device_values(const spmv_dia *A, cl_context ctx);

/* Uploads A (which may be freed afterwards; where A holds a pitched device copy on rt's context
 * (spmv_cl_dia_keep_device) and the kernel reads the pitched layout, that copy is taken instead)
 * for the DIA kernel `kernel` (SPMV_KERNEL_AUTO: the image kernel where the device supports an
 * image of x's size, else vector; why goes into note, note_cap bytes) with work-groups of
 * local_size (0: 128, capped by the device). Checks every allocation against rt's device first,
 * builds kernels/dia_spmv.cl. Returns DSG_OK, DSG_ERR_NODEVICE, DSG_ERR_LIMIT, DSG_ERR_INVALID,
 * DSG_ERR_IO, DSG_ERR_NOMEM or DSG_ERR_OPENCL with the message. Free with spmv_cl_dia_destroy. */
int spmv_cl_dia_create(spmv_cl_dia **out, const spmv_cl_runtime *rt, const spmv_dia *A,
                       spmv_kernel kernel, size_t local_size, char *note, size_t note_cap);
/* Frees dia (NULL allowed); rt's queue must be idle. */
void spmv_cl_dia_destroy(spmv_cl_dia *dia);

/* THE binder: creates a kernel object of dia's DIA kernel with every argument set, the matrix
 * and y as given, x the buffer x (NULL: set it later with spmv_cl_dia_set_x) or, for an x_image
 * kernel, dia's image (x is then ignored). Launch it with dia->global, dia->local. Returns
 * DSG_OK or DSG_ERR_OPENCL (the caller releases *out only on success). */
int spmv_cl_dia_kernel_create(const spmv_cl_runtime *rt, const spmv_cl_dia *dia, cl_mem x, cl_mem y,
                              cl_kernel *out);
/* Points a buffer kernel's x (SPMV_CL_ARG_X, wherever its row lists it) at x. Not for x_image
 * kernels: copy x into dia->ximage instead. Returns DSG_OK or DSG_ERR_OPENCL. */
int spmv_cl_dia_set_x(const spmv_cl_runtime *rt, const spmv_cl_dia *dia, cl_kernel k, cl_mem x);

#endif /* DIASEG_SPMV_CL_DIA_H */
