/* The C backend: the threaded product (spmv_dia_mul) on host memory, all of its time kernel
 * time, and the OpenMP basis (basis_cpu.c). The matrix is borrowed: it is the backend's state. */
#include "cpu_internal.h"

static int cpu_apply(void *impl, const float *x, float *y, spmv_timing *t)
{
  double t0 = dsg_seconds();
  spmv_dia_mul(impl, x, y);
  t->kernel_s += dsg_seconds() - t0;
  return DSG_OK;
}

static void cpu_destroy(void *impl) { (void)impl; /* the matrix is borrowed */ }

static spmv_caps cpu_caps(const void *impl)
{
  (void)impl;
  spmv_caps caps = {"cpu", 0, 1};
  return caps;
}

static int cpu_basis_create(void *impl, spmv_basis *b) { return spmv_cpu_basis_create(b, impl); }
static int cpu_block_create(void *impl, spmv_block *k) { return spmv_cpu_block_create(k, impl); }

static const spmv_backend cpu_backend = {
    .name = "cpu",
    .caps = cpu_caps,
    .matvec = {.apply = cpu_apply, .prepare_basis = NULL, .destroy = cpu_destroy},
    .basis = {.create = cpu_basis_create,
              .set = spmv_cpu_basis_set,
              .expand = spmv_cpu_basis_expand,
              .coefficients = spmv_cpu_basis_coefficients,
              .restart = spmv_cpu_basis_restart,
              .ritz = spmv_cpu_basis_ritz,
              .destroy = spmv_cpu_basis_destroy},
    .block = {.create = cpu_block_create,
              .set = spmv_cpu_block_set,
              .get = spmv_cpu_block_get,
              .fill_random = spmv_cpu_block_fill_random,
              .product = spmv_cpu_block_product,
              .axpby = spmv_cpu_block_axpby,
              .gram = spmv_cpu_block_gram,
              .transform = spmv_cpu_block_transform,
              .residuals = spmv_cpu_block_residuals,
              .project = spmv_cpu_block_project,
              .destroy = spmv_cpu_block_destroy},
};

int spmv_matvec_create_cpu(spmv_matvec **out, const spmv_dia *A)
{
  return spmv_matvec_wrap(out, &cpu_backend, (void *)A, A->rows);
}
