/* Private to spmv/: the matvec object's backend table. */
#ifndef DIASEG_SPMV_INTERNAL_H
#define DIASEG_SPMV_INTERNAL_H

#include "spmv.h"

typedef struct spmv_matvec_ops {
  const char *backend;
  /* y = A x on host arrays; adds its time split to *t (calls and total_s are kept by the caller). */
  int (*apply)(void *impl, const float *x, float *y, spmv_timing *t);
  void (*destroy)(void *impl);
} spmv_matvec_ops;

struct spmv_matvec {
  const spmv_matvec_ops *ops;
  void *impl;
  int rows;
  spmv_timing timing;
};

/* Wraps impl (owned from here on, freed with ops->destroy) in a new matvec object. */
int spmv_matvec_wrap(spmv_matvec **out, const spmv_matvec_ops *ops, void *impl, int rows);

#endif
