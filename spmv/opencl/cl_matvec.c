/* The OpenCL backend: the matvec (a DIA kernel on the device, x written and y read back on every
 * product, timed with events) and its table, whose basis is cl_basis.c's. */
#include "cl_basis.h"
#include "cl_block.h"
#include "cl_matvec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CL_MAX_BASIS_GROUPS 65536 /* spmv_cl_options.basis_groups, basis_row_groups */

typedef struct cl_matvec {
  spmv_cl_runtime rt;
  spmv_cl_dia *dia;
  cl_kernel kernel; /* the DIA kernel, x = x (or the DIA's image), y = y */
  cl_mem x, y;      /* x: buffer kernels only */
  float *staging;   /* x_image kernels: x zero-padded to the image */
  spmv_cl_info info;
  spmv_cl_basis_kernels basis; /* built by the first basis (or spmv_matvec_prepare_basis) */
} cl_matvec;

void spmv_cl_options_init(spmv_cl_options *opt)
{
  memset(opt, 0, sizeof(*opt));
  opt->kernel = SPMV_KERNEL_AUTO;
}

static void cl_destroy(void *impl)
{
  cl_matvec *m = impl;
  if (!m)
    return;
  if (m->rt.queue)
    clFinish(m->rt.queue);
  if (m->kernel)
    clReleaseKernel(m->kernel);
  if (m->x)
    clReleaseMemObject(m->x);
  if (m->y)
    clReleaseMemObject(m->y);
  free(m->staging);
  spmv_cl_basis_kernels_release(&m->basis);
  spmv_cl_dia_destroy(m->dia);
  spmv_cl_runtime_close(&m->rt);
  free(m);
}

static int cl_apply(void *impl, const float *x, float *y, spmv_timing *t)
{
  cl_matvec *m = impl;
  const spmv_cl_dia *dia = m->dia;
  const size_t bytes = (size_t)dia->rows * sizeof(float);
  cl_command_queue q = m->rt.queue;
  cl_event ev[3] = {NULL, NULL, NULL};
  cl_int err;
  double t0 = dsg_seconds();
  int status = DSG_OK;

  if (dia->kernel->x_image) {
    size_t origin[3] = {0, 0, 0}, region[3] = {dia->image_width, dia->image_height, 1};
    memcpy(m->staging, x, bytes); /* the tail stays zero */
    err = clEnqueueWriteImage(q, dia->ximage, CL_FALSE, origin, region, 0, 0, m->staging, 0, NULL,
                              &ev[0]);
  } else {
    err = clEnqueueWriteBuffer(q, m->x, CL_FALSE, 0, bytes, x, 0, NULL, &ev[0]);
  }
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "writing x", m->info.device);
    goto out;
  }
  err = clEnqueueNDRangeKernel(q, m->kernel, 1, NULL, &dia->global, &dia->local, 0, NULL, &ev[1]);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "running the DIA kernel", m->info.device);
    goto out;
  }
  err = clEnqueueReadBuffer(q, m->y, CL_TRUE, 0, bytes, y, 0, NULL, &ev[2]);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "reading y", m->info.device);
    goto out;
  }
  {
    double wall = dsg_seconds() - t0;
    double k = spmv_cl_event_seconds(ev[1]),
           tr = spmv_cl_event_seconds(ev[0]) + spmv_cl_event_seconds(ev[2]);
    t->kernel_s += k;
    t->transfer_s += tr;
    t->host_s += wall > k + tr ? wall - k - tr : 0.0;
  }
out:
  if (status != DSG_OK)
    clFinish(q);
  for (int i = 0; i < 3; i++)
    if (ev[i])
      clReleaseEvent(ev[i]);
  return status;
}

static spmv_caps cl_caps(const void *impl)
{
  const cl_matvec *m = impl;
  spmv_caps caps = {"opencl", 1, m->rt.dev.fp64};
  return caps;
}

static int cl_prepare_basis(void *impl, int m_cols)
{
  cl_matvec *m = impl;
  return spmv_cl_basis_prepare(&m->rt, m->dia, &m->basis, m_cols, 0);
}

static int cl_basis_create(void *impl, spmv_basis *b)
{
  cl_matvec *m = impl;
  return spmv_cl_basis_create(b, &m->rt, m->dia, &m->basis);
}

static int cl_block_create(void *impl, spmv_block *k)
{
  cl_matvec *m = impl;
  return spmv_cl_block_create(k, &m->rt, m->dia);
}

static const spmv_backend cl_backend = {
    .name = "opencl",
    .caps = cl_caps,
    .matvec = {.apply = cl_apply, .prepare_basis = cl_prepare_basis, .destroy = cl_destroy},
    .basis = {.create = cl_basis_create,
              .set = spmv_cl_basis_set,
              .expand = spmv_cl_basis_expand,
              .coefficients = spmv_cl_basis_coefficients,
              .restart = spmv_cl_basis_restart,
              .ritz = spmv_cl_basis_ritz,
              .destroy = spmv_cl_basis_destroy},
    .block = {.create = cl_block_create,
              .set = spmv_cl_block_set,
              .get = spmv_cl_block_get,
              .fill_random = spmv_cl_block_fill_random,
              .product = spmv_cl_block_product,
              .axpby = spmv_cl_block_axpby,
              .gram = spmv_cl_block_gram,
              .transform = spmv_cl_block_transform,
              .residuals = spmv_cl_block_residuals,
              .project = spmv_cl_block_project,
              .destroy = spmv_cl_block_destroy},
};

/* The options that spmv_cl_runtime_open and spmv_cl_dia_create do not check. */
static int check_options(const spmv_cl_options *opt)
{
  if (opt->basis_groups > CL_MAX_BASIS_GROUPS)
    return dsg_error_set(DSG_ERR_INVALID,
                         DSG_PARAM("basis_groups") " %zu is out of range: it must be in [0, %d] "
                                                   "(0: automatic)",
                         opt->basis_groups, CL_MAX_BASIS_GROUPS);
  if (opt->basis_row_groups > CL_MAX_BASIS_GROUPS)
    return dsg_error_set(
        DSG_ERR_INVALID,
        DSG_PARAM("basis_row_groups") " %zu is out of range: it must be in [0, %d] "
                                      "(0: automatic)",
        opt->basis_row_groups, CL_MAX_BASIS_GROUPS);
  return DSG_OK;
}

int spmv_matvec_create_opencl(spmv_matvec **out, const spmv_dia *A, const spmv_cl_options *opt)
{
  cl_matvec *m = NULL;
  cl_int err = CL_SUCCESS;
  int status;

  *out = NULL;
  status = check_options(opt);
  if (status != DSG_OK)
    return status;
  m = calloc(1, sizeof(*m));
  if (!m)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the OpenCL matvec");
  status = spmv_cl_runtime_open(&m->rt, opt->device, opt->kernel_dir, opt->max_alloc);
  if (status != DSG_OK)
    goto out;
  snprintf(m->info.platform, sizeof(m->info.platform), "%s", m->rt.dev.platform);
  snprintf(m->info.device, sizeof(m->info.device), "%s", m->rt.dev.name);
  status = spmv_cl_dia_create(&m->dia, &m->rt, A, opt->kernel, opt->local_size, m->info.note,
                              sizeof(m->info.note));
  if (status != DSG_OK)
    goto out;
  m->info.kernel = m->dia->kernel->id;
  m->info.local_size = m->dia->local;
  m->info.image_width = m->dia->image_width;
  m->info.image_height = m->dia->image_height;
  m->basis.groups = opt->basis_groups;
  m->basis.row_groups = opt->basis_row_groups;

  m->y = clCreateBuffer(m->rt.ctx, CL_MEM_WRITE_ONLY, (size_t)A->rows * sizeof(float), NULL, &err);
  if (err == CL_SUCCESS && !m->dia->kernel->x_image)
    m->x = clCreateBuffer(m->rt.ctx, CL_MEM_READ_ONLY, (size_t)A->rows * sizeof(float), NULL, &err);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "allocating the vectors", m->info.device);
    goto out;
  }
  if (m->dia->kernel->x_image) {
    m->staging = calloc(m->dia->image_width * m->dia->image_height * 4, sizeof(float));
    if (!m->staging) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the image staging buffer");
      goto out;
    }
  }
  status = spmv_cl_dia_kernel_create(&m->rt, m->dia, m->x, m->y, &m->kernel);
  if (status != DSG_OK)
    goto out;
  status = spmv_matvec_wrap(out, &cl_backend, m, A->rows);
  m = NULL; /* owned by *out now (or freed by the wrap on failure) */

out:
  cl_destroy(m);
  return status;
}

const spmv_cl_info *spmv_matvec_cl_info(const spmv_matvec *mv)
{
  const cl_matvec *m = spmv_matvec_impl(mv, &cl_backend);
  return m ? &m->info : NULL;
}

const spmv_cl_runtime *spmv_cl_matvec_runtime(const spmv_matvec *mv)
{
  const cl_matvec *m = spmv_matvec_impl(mv, &cl_backend);
  return m ? &m->rt : NULL;
}

const spmv_cl_dia *spmv_cl_matvec_dia(const spmv_matvec *mv)
{
  const cl_matvec *m = spmv_matvec_impl(mv, &cl_backend);
  return m ? m->dia : NULL;
}
