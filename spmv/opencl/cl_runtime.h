/* Private to spmv/opencl/: the OpenCL runtime every OpenCL unit stands on — the devices, one
 * device's context and queue, program builds (from the copies embedded at build time, or from a
 * folder of .cl files), error messages with their cl_int, event timing. It knows nothing of
 * matrices or kernels. */
#ifndef DIASEG_SPMV_CL_RUNTIME_H
#define DIASEG_SPMV_CL_RUNTIME_H

#include <CL/cl.h>

#include "spmv.h"

/* One device, opened: its description, a context and an in-order profiling queue on it, both
 * the process-wide cache's (cl_cache.h), shared with every other runtime on the device; rt holds
 * a reference to each. */
typedef struct spmv_cl_runtime {
  spmv_cl_device dev; /* dev.name names the device in every message */
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;       /* in order, CL_QUEUE_PROFILING_ENABLE */
  unsigned long failures;       /* this thread's OpenCL failures (spmv_cl_fail) when opened */
  unsigned long long max_alloc; /* the device's largest allocation, or the lower cap asked for */
  int max_alloc_capped;         /* max_alloc came from the options (spmv_cl_options.max_alloc) */
  char *kernel_dir;             /* where .cl files come from; NULL: the embedded copies */
} spmv_cl_runtime;

/* Opens the device that `spec` names (spmv_cl_pick; gpu_only 0) into rt: context and queue (from
 * the cache, opened there on the device's first use), the allocation cap (max_alloc: 0, or a cap
 * below the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE) and the kernel folder (NULL or "": embedded).
 * On failure rt is closed. Returns DSG_OK, DSG_ERR_NODEVICE, DSG_ERR_NOMEM or DSG_ERR_OPENCL with
 * the message. */
int spmv_cl_runtime_open(spmv_cl_runtime *rt, const char *spec, const char *kernel_dir,
                         unsigned long long max_alloc);
/* Waits for rt's queue and releases everything rt holds; rt may be zeroed or half-opened. When an
 * OpenCL call failed on this thread since rt was opened, the cache forgets rt's context (it may
 * be unusable, e.g. after CL_OUT_OF_RESOURCES): the next runtime opens a fresh one. */
void spmv_cl_runtime_close(spmv_cl_runtime *rt);

/* The text of kernels/NAME.cl, embedded at build time (spmv/embed.cmake); NULL if none. */
const char *spmv_kernel_source(const char *name);
/* Builds kernels/NAME.cl, from rt->kernel_dir when set (a missing file, a folder, a FIFO or
 * another file that is not a regular one is an error, checked without blocking; at most 16 MiB)
 * or else the embedded copy, with the compiler options `options`, into *prog (the caller's
 * reference: release it with clReleaseProgram), or hands out the cache's program of the same
 * text and options, built earlier in the process. A successful build is kept in the cache; a
 * failed one is released (*prog NULL), keeps its log (spmv_cl_build_log) and writes the message.
 * Returns DSG_OK, DSG_ERR_IO, DSG_ERR_LIMIT (over 16 MiB), DSG_ERR_NOMEM or DSG_ERR_OPENCL. */
int spmv_cl_build(const spmv_cl_runtime *rt, const char *name, const char *options,
                  cl_program *prog);

/* The name of an OpenCL error code. */
const char *spmv_cl_error_name(cl_int e);
/* Records an OpenCL failure, e.g. "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE (-11) on
 * NVIDIA H200": DSG_ERR_LIMIT for out-of-memory/resources, else DSG_ERR_OPENCL. device may be
 * NULL. Returns the status. */
int spmv_cl_fail(cl_int err, const char *what, const char *device);
/* bytes as "1000 bytes", "12.3 KiB", "4.5 MiB", ... in buf; returns buf. */
const char *spmv_cl_bytes(unsigned long long bytes, char buf[32]);
/* *m = a new buffer of `bytes` (flags: its access, no host pointer) holding host's bytes, put
 * there by a blocking write on rt's queue: NVIDIA's driver took 3-4x longer to copy a large host
 * array in at creation (CL_MEM_COPY_HOST_PTR) the first times a process did (docs/PERFORMANCE.md,
 * "Uploads by a write"). On failure *m is NULL and the error is returned. */
cl_int spmv_cl_upload(const spmv_cl_runtime *rt, cl_mem_flags flags, const void *host, size_t bytes,
                      cl_mem *m);
/* A finished event's device time (profiling), 0 if unavailable. */
double spmv_cl_event_seconds(cl_event ev);

#endif /* DIASEG_SPMV_CL_RUNTIME_H */
