/* Private to spmv/: the matvec object's backend table. */
#ifndef DIASEG_SPMV_INTERNAL_H
#define DIASEG_SPMV_INTERNAL_H

#include "spmv.h"

/* The C path's hot loops are compiled for AVX2 + FMA and for the x86-64 baseline, and the
 * loader picks one (target_clones): the baseline does two doubles per instruction. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SPMV_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SPMV_CLONES
#endif

typedef struct spmv_basis_ops spmv_basis_ops;

typedef struct spmv_matvec_ops {
  const char *backend;
  /* y = A x on host arrays; adds its time split to *t (calls and total_s are kept by the caller).
   */
  int (*apply)(void *impl, const float *x, float *y, spmv_timing *t);
  void (*destroy)(void *impl);
  /* fills b->ops and b->impl for a basis on this backend */
  int (*basis_init)(spmv_basis *b);
  /* spmv_matvec_prepare_lanczos; NULL: nothing to prepare */
  int (*prepare_lanczos)(void *impl, int m);
} spmv_matvec_ops;

/* A basis: the operations of its backend, and what they share. */
struct spmv_basis_ops {
  int (*set)(spmv_basis *b, int col, const float *x, double *norm);
  int (*expand)(spmv_basis *b, int j);
  int (*coefficients)(spmv_basis *b, int j0, int j1, double *coef);
  int (*restart)(spmv_basis *b, const double *Y, int ldy, int mcur, int k);
  int (*ritz)(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out);
  void (*destroy)(spmv_basis *b);
};

struct spmv_basis {
  const spmv_basis_ops *ops;
  spmv_matvec *mv;
  void *impl;
  int n, m;
  spmv_known known;
  int fuse;
  spmv_basis_timing timing;
};

/* DSG_OK when 2 <= m <= 4096, else DSG_ERR_INVALID with the message. */
int spmv_basis_check_size(int m);
int spmv_basis_init_cpu(spmv_basis *b);
int spmv_basis_init_cl(spmv_basis *b);

struct spmv_matvec {
  const spmv_matvec_ops *ops;
  void *impl;
  int rows;
  spmv_timing timing;
};

/* Wraps impl (owned from here on, freed with ops->destroy) in a new matvec object. */
int spmv_matvec_wrap(spmv_matvec **out, const spmv_matvec_ops *ops, void *impl, int rows);

#endif
