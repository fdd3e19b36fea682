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
} cl_matvec;

/* The text of kernels/NAME.cl, embedded at build time (spmv/embed.cmake); NULL if none. */
const char *spmv_kernel_source(const char *name);
/* Reads a text file (kernel development: DIASEG_KERNEL_DIR); NULL on failure, errno set. */
char *spmv_cl_read_text(const char *path);
/* The name of an OpenCL error code. */
const char *spmv_cl_error_name(cl_int e);
/* Records an OpenCL failure (DSG_ERR_LIMIT for out-of-memory/resources, else DSG_ERR_OPENCL). */
int spmv_cl_fail(cl_int err, const char *what, const char *device);
/* Keeps the program's build log for spmv_cl_build_log(). */
void spmv_cl_keep_build_log(cl_program prog, cl_device_id dev);
/* A finished event's device time (profiling), 0 if unavailable. */
double spmv_cl_event_seconds(cl_event ev);

#endif
