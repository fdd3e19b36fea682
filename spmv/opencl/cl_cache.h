/* Private to spmv/opencl/: the process-wide cache of OpenCL objects that every runtime
 * (cl_runtime.c) draws from, so that the image stages and the matvec of a run, and the runs after
 * it, share one device opening and one build of each program: one context and in-order profiling
 * queue per device, and the built programs keyed by (context, device, source text, options).
 * Everything it hands out carries a reference of the caller's own (released with clRelease*), so
 * that releasing it, or clearing the cache (spmv_cl_cache_clear, spmv.h), never frees what the
 * other holds. Guarded by one mutex; nothing slow (no build) runs under it but a context's
 * creation. A program is built once: a thread that wants one another is building waits for it.
 * docs/ARCHITECTURE.md, "The OpenCL cache". */
#ifndef DIASEG_SPMV_CL_CACHE_H
#define DIASEG_SPMV_CL_CACHE_H

#include <CL/cl.h>

/* The context and queue of `device` (created on first use; dev_name names it in the message),
 * each retained for the caller. Returns DSG_OK, or DSG_ERR_OPENCL / DSG_ERR_LIMIT / DSG_ERR_NOMEM
 * with the message; a failure caches nothing. */
int spmv_cl_cache_queue(cl_device_id device, const char *dev_name, cl_context *ctx,
                        cl_command_queue *queue);

/* The program built from `source` (NUL-terminated) with `options` in ctx for device, retained for
 * the caller, into *prog: 1. When another thread is building it, waits for that build first.
 * When there is none: 0, *prog NULL, and the program is claimed for the caller, who builds it and
 * then calls spmv_cl_cache_program_keep (built) or spmv_cl_cache_program_abandon (not), so that
 * the threads that want it meanwhile wait instead of building it again. */
int spmv_cl_cache_program_claim(cl_context ctx, cl_device_id device, const char *source,
                                const char *options, cl_program *prog);
/* Keeps prog, successfully built from `source` with `options` in ctx for device after a claim,
 * and counts the build; the caller keeps its own reference. Only programs of a context the cache
 * holds are kept. A text that changed (an edited file of the kernel folder) is another key: built
 * and kept beside the old one, which stays until the cache is cleared. Out of memory at the
 * claim, it keeps nothing (the next run builds again). */
void spmv_cl_cache_program_keep(cl_context ctx, cl_device_id device, const char *source,
                                const char *options, cl_program prog);
/* Drops the caller's claim of a program it could not build: a thread waiting for it builds it
 * itself (and meets the same failure). */
void spmv_cl_cache_program_abandon(cl_context ctx, cl_device_id device, const char *source,
                                   const char *options);

/* Data a caller uploaded once for the process (the forest's model, cl_image.c): per context one
 * entry of up to SPMV_CL_CACHE_DATA buffers and as many ints, under `key` (the data's identity
 * for the process's life). get: 1 with the buffers retained for the caller and the ints copied
 * when ctx holds key's entry, else 0. keep: the entry for ctx, in place of the one before (the
 * cache takes its own references); out of memory it keeps nothing. */
#define SPMV_CL_CACHE_DATA 4
int spmv_cl_cache_data_get(cl_context ctx, const void *key, cl_mem *mem, int *info);
void spmv_cl_cache_data_keep(cl_context ctx, const void *key, const cl_mem *mem, const int *info);

/* Drops the cache's references to ctx, its queue and every program built in it, so that the
 * next runtime on the device gets a fresh context (after an OpenCL failure that may have left ctx
 * unusable), and its data. Holders keep theirs. */
void spmv_cl_cache_forget(cl_context ctx);

#endif /* DIASEG_SPMV_CL_CACHE_H */
