/* Private to spmv/opencl/: the OpenCL Lanczos basis (cl_basis.c), for the OpenCL backend's table
 * (cl_matvec.c). It runs on a matvec's runtime and device matrix, given to it explicitly; it
 * knows nothing else of the matvec. */
#ifndef DIASEG_SPMV_CL_BASIS_H
#define DIASEG_SPMV_CL_BASIS_H

#include "backend_internal.h"
#include "cl_dia.h"

/* The basis kernels of one matvec: kernels/lanczos.cl, built (or taken from the process-wide
 * cache) once, when first needed, and the launch shape its options ask for. The matvec owns it
 * (zeroed at creation, the counts set from spmv_cl_options) and releases it with
 * spmv_cl_basis_kernels_release. */
typedef struct spmv_cl_basis_kernels {
  cl_program program; /* NULL until built */
  size_t local;       /* the work-group size it was built for (-DLOCAL) */
  size_t groups;      /* work-groups of the row-parallel kernels; 0: 8 per compute unit */
  size_t row_groups;  /* row groups of V^T w; 0: 1 per compute unit */
} spmv_cl_basis_kernels;

/* Checks that rt's device can hold a basis of m_cols + 1 columns over dia (and kc dense known
 * columns), with double precision, and builds the basis kernels into bk unless built:
 * spmv_matvec_prepare_basis's work. Returns DSG_OK, DSG_ERR_NODEVICE, DSG_ERR_LIMIT,
 * DSG_ERR_IO or DSG_ERR_OPENCL with the message. */
int spmv_cl_basis_prepare(const spmv_cl_runtime *rt, const spmv_cl_dia *dia,
                          spmv_cl_basis_kernels *bk, int m_cols, int kc);
/* Releases bk's program (bk->program becomes NULL). */
void spmv_cl_basis_kernels_release(spmv_cl_basis_kernels *bk);

/* Creates the device basis of b (b->impl) on rt and dia (both must outlive it), with the kernels
 * of bk (prepared here if need be). Returns DSG_OK or an error status with the message. */
int spmv_cl_basis_create(spmv_basis *b, const spmv_cl_runtime *rt, const spmv_cl_dia *dia,
                         spmv_cl_basis_kernels *bk);
/* The operations of spmv_basis_ops (backend_internal.h) on an OpenCL basis. */
int spmv_cl_basis_set(spmv_basis *b, int col, const float *x, double *norm);
int spmv_cl_basis_expand(spmv_basis *b, int j);
int spmv_cl_basis_coefficients(spmv_basis *b, int j0, int j1, double *coef);
int spmv_cl_basis_restart(spmv_basis *b, const double *Y, int ldy, int mcur, int k);
int spmv_cl_basis_ritz(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out);
void spmv_cl_basis_destroy(spmv_basis *b);

#endif /* DIASEG_SPMV_CL_BASIS_H */
