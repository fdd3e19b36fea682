/* Private to spmv/: the OpenCL matvec's state, shared with the OpenCL Lanczos basis. */
#ifndef DIASEG_OPENCL_INTERNAL_H
#define DIASEG_OPENCL_INTERNAL_H

#include <CL/cl.h>

#include "spmv_internal.h"

typedef struct cl_matvec {
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;
  cl_program program;
  cl_kernel kernel, copy;
  cl_mem A, offsets, x, y, ximage;
  float *staging; /* image kernel: x zero-padded to the image */
  int rows, ndiag;
  size_t pitch, global, local;
  spmv_cl_info info;
  spmv_cl_device dev;
  unsigned long long max_alloc; /* the device's largest allocation, or the --cl-max-alloc cap */
  char *kernel_dir;             /* where .cl files come from (--kernel-dir); NULL: built in */
  cl_program lanczos;           /* kernels/lanczos.cl, built once, when first needed */
  size_t lanczos_local;         /* its work-group size */
} cl_matvec;

/* The text of kernels/NAME.cl, embedded at build time (spmv/embed.cmake); NULL if none. */
const char *spmv_kernel_source(const char *name);
/* Builds kernels/NAME.cl, from m->kernel_dir when set (a missing file is an error) or else the
 * embedded copy, with the compiler options `options`, into *prog. A failed build keeps its log
 * (spmv_cl_build_log) and writes the message. Returns DSG_OK, DSG_ERR_IO or DSG_ERR_OPENCL. */
int spmv_cl_build(cl_matvec *m, const char *name, const char *options, cl_program *prog);
/* The Lanczos kernels of m, built once (m->lanczos), and the check that a basis of m_cols
 * columns (and kc known columns) fits the device: spmv_matvec_prepare_lanczos's work. */
int spmv_cl_lanczos_ready(cl_matvec *m, int m_cols, int kc);
/* The name of an OpenCL error code. */
const char *spmv_cl_error_name(cl_int e);
/* Records an OpenCL failure (DSG_ERR_LIMIT for out-of-memory/resources, else DSG_ERR_OPENCL). */
int spmv_cl_fail(cl_int err, const char *what, const char *device);
/* Keeps the program's build log for spmv_cl_build_log(). */
void spmv_cl_keep_build_log(cl_program prog, cl_device_id dev);
/* bytes as "1000 bytes", "12.3 KiB", "4.5 MiB", ... in buf; returns buf. */
const char *spmv_cl_bytes(unsigned long long bytes, char buf[32]);
/* A finished event's device time (profiling), 0 if unavailable. */
double spmv_cl_event_seconds(cl_event ev);

#endif
