/* The device's copy bandwidth (spmv_cl_copy_gbs): copy_float4 of kernels/dia_spmv.cl on an
 * OpenCL matvec's device, the bound that the DIA kernels' figures are compared with. */
#include "cl_matvec.h"

#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int spmv_cl_copy_gbs(spmv_matvec *mv, size_t bytes, int repeat, double *gbs)
{
  const spmv_cl_runtime *rt = spmv_cl_matvec_runtime(mv);
  const spmv_cl_dia *dia = spmv_cl_matvec_dia(mv);
  cl_kernel copy = NULL;
  cl_mem src = NULL, dst = NULL;
  cl_int err;
  double *t = NULL;
  int status = DSG_OK, n4;
  size_t global, local;

  if (!rt || !dia)
    return dsg_error_set(DSG_ERR_INVALID, "spmv_cl_copy_gbs needs an OpenCL matvec");
  n4 = (int)(bytes / 16);
  local = rt->dev.max_work_group >= 256 ? 256 : rt->dev.max_work_group; /* not the matvec's size */
  global = ((size_t)n4 + local - 1) / local * local;
  t = malloc((size_t)(repeat + 2) * sizeof(*t));
  src = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, (size_t)n4 * 16, NULL, &err);
  if (err == CL_SUCCESS)
    dst = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, (size_t)n4 * 16, NULL, &err);
  if (err != CL_SUCCESS || !t) {
    status = t ? spmv_cl_fail(err, "allocating the copy benchmark", rt->dev.name)
               : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate timings");
    goto out;
  }
  {
    const float zero = 0.0f, one = 1.0f;
    clEnqueueFillBuffer(rt->queue, src, &one, sizeof(one), 0, (size_t)n4 * 16, 0, NULL, NULL);
    clEnqueueFillBuffer(rt->queue, dst, &zero, sizeof(zero), 0, (size_t)n4 * 16, 0, NULL, NULL);
  }
  copy = clCreateKernel(dia->program, "copy_float4", &err); /* kernels/dia_spmv.cl's */
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "clCreateKernel(copy_float4)", rt->dev.name);
    goto out;
  }
  clSetKernelArg(copy, 0, sizeof(cl_mem), &src);
  clSetKernelArg(copy, 1, sizeof(cl_mem), &dst);
  clSetKernelArg(copy, 2, sizeof(int), &n4);
  for (int r = 0; r < repeat + 2; r++) {
    cl_event ev;
    err = clEnqueueNDRangeKernel(rt->queue, copy, 1, NULL, &global, &local, 0, NULL, &ev);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "running the copy benchmark", rt->dev.name);
      goto out;
    }
    clWaitForEvents(1, &ev);
    t[r] = spmv_cl_event_seconds(ev);
    clReleaseEvent(ev);
  }
  qsort(t + 2, (size_t)repeat, sizeof(*t), cmp_double);
  *gbs = 2.0 * (double)n4 * 16.0 / t[2 + repeat / 2] / 1e9;
out:
  if (copy)
    clReleaseKernel(copy);
  if (src)
    clReleaseMemObject(src);
  if (dst)
    clReleaseMemObject(dst);
  free(t);
  return status;
}
