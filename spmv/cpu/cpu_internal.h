/* Private to spmv/cpu/: the C basis and blocks, for the C backend's table (matvec_cpu.c). */
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

/* Creates the C blocks of k (k->impl) for products with A (borrowed). Returns DSG_OK,
 * DSG_ERR_LIMIT (the size overflows) or DSG_ERR_NOMEM. */
int spmv_cpu_block_create(spmv_block *k, const spmv_dia *A);
/* The operations of spmv_block_ops (backend_internal.h) on C blocks (block_cpu.c). */
int spmv_cpu_block_set(spmv_block *k, int s, const float *x);
int spmv_cpu_block_get(spmv_block *k, int s, int cols, float *out);
int spmv_cpu_block_fill_random(spmv_block *k, int s, unsigned long long seed);
int spmv_cpu_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                           double gamma);
int spmv_cpu_block_axpby(spmv_block *k, int dst, double alpha, int x, double beta, int y);
int spmv_cpu_block_gram(spmv_block *k, int x, int y, double *G);
int spmv_cpu_block_transform(spmv_block *k, int s, const double *M);
int spmv_cpu_block_residuals(spmv_block *k, int ax, int x, const double *theta, double *out);
int spmv_cpu_block_project(spmv_block *k, int s);
void spmv_cpu_block_destroy(spmv_block *k);

#endif /* DIASEG_SPMV_CPU_INTERNAL_H */
