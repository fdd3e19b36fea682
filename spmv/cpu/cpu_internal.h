/* Private to spmv/cpu/: the C basis, for the C backend's table (matvec_cpu.c). */
#ifndef DIASEG_SPMV_CPU_INTERNAL_H
#define DIASEG_SPMV_CPU_INTERNAL_H

#include "backend_internal.h"

/* Creates the C basis of b (b->impl) for products with A (borrowed, as by the matvec).
 * Returns DSG_OK, DSG_ERR_LIMIT (the size overflows) or DSG_ERR_NOMEM. */
int spmv_cpu_basis_create(spmv_basis *b, const spmv_dia *A);
/* The operations of spmv_basis_ops (backend_internal.h) on a C basis. */
int spmv_cpu_basis_set(spmv_basis *b, int col, const float *x, double *norm);
int spmv_cpu_basis_expand(spmv_basis *b, int j);
int spmv_cpu_basis_coefficients(spmv_basis *b, int j0, int j1, double *coef);
int spmv_cpu_basis_restart(spmv_basis *b, const double *Y, int ldy, int mcur, int k);
int spmv_cpu_basis_ritz(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out);
void spmv_cpu_basis_destroy(spmv_basis *b);

#endif /* DIASEG_SPMV_CPU_INTERNAL_H */
