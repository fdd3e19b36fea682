/* The matvec object and its C backend. */
#include "spmv_internal.h"

#include <stdlib.h>

int spmv_matvec_wrap(spmv_matvec **out, const spmv_matvec_ops *ops, void *impl, int rows)
{
  spmv_matvec *mv = calloc(1, sizeof(*mv));
  *out = NULL;
  if (!mv) {
    ops->destroy(impl);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the matvec object");
  }
  mv->ops = ops;
  mv->impl = impl;
  mv->rows = rows;
  *out = mv;
  return DSG_OK;
}

int spmv_matvec_apply(spmv_matvec *mv, const float *x, float *y)
{
  double t0 = dsg_seconds();
  int status = mv->ops->apply(mv->impl, x, y, &mv->timing);
  mv->timing.calls++;
  mv->timing.total_s += dsg_seconds() - t0;
  return status;
}

int spmv_matvec_rows(const spmv_matvec *mv) { return mv->rows; }

spmv_timing spmv_matvec_timing(const spmv_matvec *mv) { return mv->timing; }

void spmv_matvec_timing_reset(spmv_matvec *mv)
{
  spmv_timing zero = {0};
  mv->timing = zero;
}

const char *spmv_matvec_backend(const spmv_matvec *mv) { return mv->ops->backend; }

int spmv_matvec_prepare_lanczos(spmv_matvec *mv, int m)
{
  int status = spmv_basis_check_size(m);
  if (status != DSG_OK)
    return status;
  return mv->ops->prepare_lanczos ? mv->ops->prepare_lanczos(mv->impl, m) : DSG_OK;
}

void spmv_matvec_destroy(spmv_matvec *mv)
{
  if (!mv)
    return;
  mv->ops->destroy(mv->impl);
  free(mv);
}

/* ---- the C backend: the threaded product on host memory; all of its time is kernel time ---- */

static int cpu_apply(void *impl, const float *x, float *y, spmv_timing *t)
{
  double t0 = dsg_seconds();
  spmv_dia_mul(impl, x, y);
  t->kernel_s += dsg_seconds() - t0;
  return DSG_OK;
}

static void cpu_destroy(void *impl) { (void)impl; /* the matrix is borrowed */ }

static const spmv_matvec_ops cpu_ops = {"cpu", cpu_apply, cpu_destroy, spmv_basis_init_cpu, NULL};

int spmv_matvec_create_cpu(spmv_matvec **out, const spmv_dia *A)
{
  return spmv_matvec_wrap(out, &cpu_ops, (void *)A, A->rows);
}
