/* Private to spmv/opencl/: the OpenCL blocks (cl_block.c, kernels/block.cl), for the OpenCL
 * backend's table (cl_matvec.c). Like the basis, a block runs on a matvec's runtime and device
 * matrix, given to it explicitly; it knows nothing else of the matvec. */
#ifndef DIASEG_SPMV_CL_BLOCK_H
#define DIASEG_SPMV_CL_BLOCK_H

#include "backend_internal.h"
#include "cl_dia.h"

/* Creates the device blocks of k (k->impl: k->slots blocks of k->b columns of k->n floats,
 * zeroed, and k->known's tables) on rt and dia (both must outlive it); builds kernels/block.cl
 * for k->b columns (or takes it from the process-wide cache). Returns DSG_OK, DSG_ERR_NODEVICE
 * (no double precision), DSG_ERR_LIMIT (device memory), DSG_ERR_INVALID (a known label outside
 * [-1, count)), DSG_ERR_NOMEM, DSG_ERR_IO or DSG_ERR_OPENCL with the message; on failure k->impl
 * is NULL. */
int spmv_cl_block_create(spmv_block *k, const spmv_cl_runtime *rt, const spmv_cl_dia *dia);
/* The operations of spmv_block_ops (backend_internal.h) on OpenCL blocks. Everything is queued
 * without host synchronisation but set and get (through pinned staging buffers, made on the
 * first call and kept), gram and residuals (blocking reads), which also collect the event
 * timing. */
int spmv_cl_block_set(spmv_block *k, int s, const float *x);
int spmv_cl_block_get(spmv_block *k, int s, int cols, float *out);
int spmv_cl_block_fill_random(spmv_block *k, int s, unsigned long long seed);
int spmv_cl_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                          double gamma);
int spmv_cl_block_axpby(spmv_block *k, int dst, double alpha, int x, double beta, int y);
int spmv_cl_block_gram(spmv_block *k, int x, int y, double *G);
int spmv_cl_block_transform(spmv_block *k, int s, const double *M);
int spmv_cl_block_residuals(spmv_block *k, int ax, int x, const double *theta, double *out);
int spmv_cl_block_project(spmv_block *k, int s);
void spmv_cl_block_destroy(spmv_block *k);

#endif /* DIASEG_SPMV_CL_BLOCK_H */
