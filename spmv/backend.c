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

/* ---- blocks ---- */

static int check_slot(const spmv_block *k, int s, const char *what)
{
  if (s < 0 || s >= k->slots)
    return dsg_error_set(DSG_ERR_INVALID, "%s: block slot %d outside [0, %d)", what, s, k->slots);
  return DSG_OK;
}

int spmv_block_create(spmv_block **out, spmv_matvec *mv, int b, int slots, const spmv_known *known)
{
  spmv_block *k;
  int status;
  *out = NULL;
  if (b < 1 || b > SPMV_BLOCK_MAX || b > mv->rows || slots < 1 || slots > 8)
    return dsg_error_set(DSG_ERR_INVALID,
                         "a block needs 1 <= b <= min(%d, n = %d) columns and 1 to 8 slots "
                         "(b = %d, slots = %d)",
                         SPMV_BLOCK_MAX, mv->rows, b, slots);
  if (!mv->backend->block.create)
    return dsg_error_set(DSG_ERR_INVALID, "the %s backend has no block operations",
                         mv->backend->name);
  k = calloc(1, sizeof(*k));
  if (!k)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a block");
  k->ops = &mv->backend->block;
  k->mv = mv;
  k->n = mv->rows;
  k->b = b;
  k->slots = slots;
  if (known)
    k->known = *known;
  status = k->ops->create(mv->impl, k);
  if (status != DSG_OK) {
    free(k);
    return status;
  }
  *out = k;
  return DSG_OK;
}

int spmv_block_width(const spmv_block *k) { return k->b; }

int spmv_block_set(spmv_block *k, int s, const float *x)
{
  int status = check_slot(k, s, "spmv_block_set");
  return status == DSG_OK ? k->ops->set(k, s, x) : status;
}

int spmv_block_fill_random(spmv_block *k, int s, unsigned long long seed)
{
  int status = check_slot(k, s, "spmv_block_fill_random");
  return status == DSG_OK ? k->ops->fill_random(k, s, seed) : status;
}

int spmv_block_get(spmv_block *k, int s, int cols, float *out)
{
  int status = check_slot(k, s, "spmv_block_get");
  if (status == DSG_OK && (cols < 0 || cols > k->b))
    status = dsg_error_set(DSG_ERR_INVALID, "spmv_block_get: %d columns of %d", cols, k->b);
  return status == DSG_OK ? k->ops->get(k, s, cols, out) : status;
}

int spmv_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                       double gamma)
{
  int status = check_slot(k, dst, "spmv_block_product");
  if (status == DSG_OK)
    status = check_slot(k, src, "spmv_block_product");
  if (status == DSG_OK && prev >= 0)
    status = check_slot(k, prev, "spmv_block_product");
  if (status == DSG_OK && dst == src)
    status = dsg_error_set(DSG_ERR_INVALID, "spmv_block_product: dst and src are slot %d", dst);
  if (status != DSG_OK)
    return status;
  k->timing.products += k->b;
  return k->ops->product(k, dst, src, prev, alpha, beta, gamma);
}

int spmv_block_axpby(spmv_block *k, int dst, double alpha, int x, double beta, int y)
{
  int status = check_slot(k, dst, "spmv_block_axpby");
  if (status == DSG_OK)
    status = check_slot(k, x, "spmv_block_axpby");
  if (status == DSG_OK)
    status = check_slot(k, y, "spmv_block_axpby");
  return status == DSG_OK ? k->ops->axpby(k, dst, alpha, x, beta, y) : status;
}

int spmv_block_gram(spmv_block *k, int x, int y, double *G)
{
  int status = check_slot(k, x, "spmv_block_gram");
  if (status == DSG_OK)
    status = check_slot(k, y, "spmv_block_gram");
  return status == DSG_OK ? k->ops->gram(k, x, y, G) : status;
}

int spmv_block_transform(spmv_block *k, int s, const double *M)
{
  int status = check_slot(k, s, "spmv_block_transform");
  return status == DSG_OK ? k->ops->transform(k, s, M) : status;
}

int spmv_block_residuals(spmv_block *k, int ax, int x, const double *theta, double *out)
{
  int status = check_slot(k, ax, "spmv_block_residuals");
  if (status == DSG_OK)
    status = check_slot(k, x, "spmv_block_residuals");
  return status == DSG_OK ? k->ops->residuals(k, ax, x, theta, out) : status;
}

int spmv_block_project(spmv_block *k, int s)
{
  int status = check_slot(k, s, "spmv_block_project");
  if (status != DSG_OK || k->known.count <= 0)
    return status;
  return k->ops->project(k, s);
}

spmv_block_timing spmv_block_get_timing(const spmv_block *k) { return k->timing; }

void spmv_block_destroy(spmv_block *k)
{
  if (!k)
    return;
  k->ops->destroy(k);
  free(k);
}
