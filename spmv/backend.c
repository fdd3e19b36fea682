/* The backend interface's front: the public matvec and basis functions, which check their
 * arguments, keep the timing and call the backend's table (backend_internal.h). */
#include "backend_internal.h"

#include <stdlib.h>

/* ---- the matvec ---- */

int spmv_matvec_wrap(spmv_matvec **out, const spmv_backend *backend, void *impl, int rows)
{
  spmv_matvec *mv = calloc(1, sizeof(*mv));
  *out = NULL;
  if (!mv) {
    backend->matvec.destroy(impl);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the matvec object");
  }
  mv->backend = backend;
  mv->impl = impl;
  mv->rows = rows;
  *out = mv;
  return DSG_OK;
}

void *spmv_matvec_impl(const spmv_matvec *mv, const spmv_backend *backend)
{
  return mv && mv->backend == backend ? mv->impl : NULL;
}

int spmv_matvec_apply(spmv_matvec *mv, const float *x, float *y)
{
  double t0 = dsg_seconds();
  int status = mv->backend->matvec.apply(mv->impl, x, y, &mv->timing);
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

const char *spmv_matvec_backend(const spmv_matvec *mv) { return mv->backend->name; }

spmv_caps spmv_matvec_caps(const spmv_matvec *mv) { return mv->backend->caps(mv->impl); }

/* DSG_OK when 2 <= m <= 4096, else DSG_ERR_INVALID with the message. */
static int check_basis_size(int m)
{
  if (m < 2 || m > 4096)
    return dsg_error_set(DSG_ERR_INVALID, "a Lanczos basis needs 2 <= m <= 4096 (m = %d)", m);
  return DSG_OK;
}

int spmv_matvec_prepare_basis(spmv_matvec *mv, int m)
{
  int status = check_basis_size(m);
  if (status != DSG_OK)
    return status;
  return mv->backend->matvec.prepare_basis ? mv->backend->matvec.prepare_basis(mv->impl, m)
                                           : DSG_OK;
}

void spmv_matvec_destroy(spmv_matvec *mv)
{
  if (!mv)
    return;
  mv->backend->matvec.destroy(mv->impl);
  free(mv);
}

/* ---- the basis ---- */

int spmv_basis_create(spmv_basis **out, spmv_matvec *mv, int m, const spmv_known *known, int fuse)
{
  spmv_basis *b;
  int status;
  *out = NULL;
  status = check_basis_size(m);
  if (status != DSG_OK)
    return status;
  b = calloc(1, sizeof(*b));
  if (!b)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a basis");
  b->ops = &mv->backend->basis;
  b->mv = mv;
  b->n = mv->rows;
  b->m = m;
  b->fuse = fuse;
  if (known)
    b->known = *known;
  status = mv->backend->basis.create(mv->impl, b);
  if (status != DSG_OK) {
    free(b);
    return status;
  }
  *out = b;
  return DSG_OK;
}

int spmv_basis_set(spmv_basis *b, int col, const float *x, double *norm)
{
  if (col < 0 || col > b->m)
    return dsg_error_set(DSG_ERR_INVALID, "basis column %d outside [0, %d]", col, b->m);
  return b->ops->set(b, col, x, norm);
}

int spmv_basis_expand(spmv_basis *b, int j)
{
  if (j < 0 || j >= b->m)
    return dsg_error_set(DSG_ERR_INVALID, "Lanczos step %d outside [0, %d)", j, b->m);
  b->timing.steps++;
  return b->ops->expand(b, j);
}

int spmv_basis_coefficients(spmv_basis *b, int j0, int j1, double *coef)
{
  return b->ops->coefficients(b, j0, j1, coef);
}

int spmv_basis_restart(spmv_basis *b, const double *Y, int ldy, int mcur, int k)
{
  if (mcur < 1 || mcur > b->m || k < 1 || k >= mcur + 1 || k > b->m)
    return dsg_error_set(DSG_ERR_INVALID, "restart keeps %d of %d columns", k, mcur);
  return b->ops->restart(b, Y, ldy, mcur, k);
}

int spmv_basis_ritz(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out)
{
  return b->ops->ritz(b, Y, ldy, mcur, k, out);
}

spmv_basis_timing spmv_basis_get_timing(const spmv_basis *b) { return b->timing; }

void spmv_basis_destroy(spmv_basis *b)
{
  if (!b)
    return;
  b->ops->destroy(b);
  free(b);
}
