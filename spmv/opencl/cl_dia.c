/* The DIA kernels: their table, the matrix on the device, and the binder of their arguments. */
#include "cl_dia.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DIA_DEFAULT_LOCAL 128
#define DIA_IMAGE_MAX_WIDTH 8192 /* pixels; the image is at most this wide (a power of two) */

/* The arguments of the pitched buffer kernels: A, pitch, rows, ndiag, offsets, x, y. */
#define PITCHED_BUFFER_ARGS                                                                        \
  {                                                                                                \
    SPMV_CL_ARG_A, SPMV_CL_ARG_PITCH, SPMV_CL_ARG_ROWS, SPMV_CL_ARG_NDIAG, SPMV_CL_ARG_OFFSETS,    \
        SPMV_CL_ARG_X, SPMV_CL_ARG_Y                                                               \
  }

/* One row per kernel of kernels/dia_spmv.cl, in the order of spmv_kernel (and of the list that
 * spmv_kernel_parse's message shows). */
static const spmv_cl_dia_kernel dia_kernels[] = {
    {.id = SPMV_KERNEL_NAIVE,
     .name = "naive",
     .function = "dia_naive",
     .packed = 1,
     .rows_per_item = 1,
     .x_image = 0,
     .args = {SPMV_CL_ARG_A, SPMV_CL_ARG_ROWS, SPMV_CL_ARG_NDIAG, SPMV_CL_ARG_OFFSETS,
              SPMV_CL_ARG_X, SPMV_CL_ARG_Y}},
    {.id = SPMV_KERNEL_ALIGNED,
     .name = "aligned",
     .function = "dia_aligned",
     .packed = 0,
     .rows_per_item = 1,
     .x_image = 0,
     .args = PITCHED_BUFFER_ARGS},
    {.id = SPMV_KERNEL_LOCAL,
     .name = "local",
     .function = "dia_local",
     .packed = 0,
     .rows_per_item = 1,
     .x_image = 0,
     .args = PITCHED_BUFFER_ARGS},
    {.id = SPMV_KERNEL_VECTOR,
     .name = "vector",
     .function = "dia_vector",
     .packed = 0,
     .rows_per_item = 4,
     .x_image = 0,
     .args = PITCHED_BUFFER_ARGS},
    {.id = SPMV_KERNEL_IMAGE,
     .name = "image",
     .function = "dia_image",
     .packed = 0,
     .rows_per_item = 4,
     .x_image = 1,
     .args = {SPMV_CL_ARG_A, SPMV_CL_ARG_PITCH, SPMV_CL_ARG_ROWS, SPMV_CL_ARG_NDIAG,
              SPMV_CL_ARG_OFFSETS, SPMV_CL_ARG_X_IMAGE, SPMV_CL_ARG_LOG_WIDTH,
              SPMV_CL_ARG_WIDTH_MASK, SPMV_CL_ARG_Y}},
};
#define DIA_KERNELS (sizeof(dia_kernels) / sizeof(dia_kernels[0]))

/* SPMV_KERNEL_AUTO's choice: AUTO_IMAGE where the device has an image of x's size, else
 * AUTO_BUFFER. */
#define AUTO_IMAGE SPMV_KERNEL_IMAGE
#define AUTO_BUFFER SPMV_KERNEL_VECTOR

const spmv_cl_dia_kernel *spmv_cl_dia_kernel_find(spmv_kernel id)
{
  for (size_t i = 0; i < DIA_KERNELS; i++)
    if (dia_kernels[i].id == id)
      return &dia_kernels[i];
  return NULL;
}

const char *spmv_kernel_name(spmv_kernel k)
{
  const spmv_cl_dia_kernel *row = spmv_cl_dia_kernel_find(k);
  return k == SPMV_KERNEL_AUTO ? "auto" : row ? row->name : "?";
}

int spmv_kernel_parse(const char *name, spmv_kernel *k)
{
  char names[256] = "";
  if (strcmp(name, "auto") == 0) {
    *k = SPMV_KERNEL_AUTO;
    return DSG_OK;
  }
  for (size_t i = 0; i < DIA_KERNELS; i++)
    if (strcmp(name, dia_kernels[i].name) == 0) {
      *k = dia_kernels[i].id;
      return DSG_OK;
    }
  for (size_t i = 0; i < DIA_KERNELS; i++) {
    strncat(names, dia_kernels[i].name, sizeof(names) - strlen(names) - 1);
    strncat(names, ", ", sizeof(names) - strlen(names) - 1);
  }
  strncat(names, "auto", sizeof(names) - strlen(names) - 1);
  return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("kernel") " '%s' is not one of %s", name, names);
}

/* Picks the kernel and x's image shape; checks every size against the device's limits. */
static int plan(const spmv_cl_runtime *rt, const spmv_dia *A, spmv_kernel requested,
                spmv_cl_dia *dia, char *note, size_t note_cap)
{
  const spmv_cl_device *d = &rt->dev;
  const unsigned long long max_alloc = rt->max_alloc;
  const unsigned long long vec_bytes = (unsigned long long)A->rows * 4;
  const spmv_cl_dia_kernel *row;
  unsigned long long a_bytes;
  size_t pixels = ((size_t)A->rows + 3) / 4, w = 1, h;

  /* the image: as narrow as possible up to DIA_IMAGE_MAX_WIDTH and the device's width */
  while (w < pixels && w < DIA_IMAGE_MAX_WIDTH && w * 2 <= d->image2d_max_width)
    w *= 2;
  h = (pixels + w - 1) / w;
  if (requested == SPMV_KERNEL_AUTO) {
    if (d->image_support && h <= d->image2d_max_height) {
      requested = AUTO_IMAGE;
      snprintf(note, note_cap, "kernel %s: x in a %zu x %zu float4 image",
               spmv_kernel_name(requested), w, h);
    } else {
      requested = AUTO_BUFFER;
      snprintf(note, note_cap, "kernel %s: %s", spmv_kernel_name(requested),
               d->image_support ? "x does not fit the device's largest image"
                                : "the device has no image support");
    }
  }
  row = spmv_cl_dia_kernel_find(requested);
  if (!row)
    return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("kernel") " %d is not a DIA kernel",
                         (int)requested);
  if (row->x_image) {
    if (!d->image_support)
      return dsg_error_set(DSG_ERR_NODEVICE,
                           DSG_PARAM("kernel") " %s needs image support, which %s lacks "
                                               "(use " DSG_PARAM("kernel") " vector)",
                           row->name, d->name);
    if (h > d->image2d_max_height)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "x needs a %zu x %zu image, over %s's largest 2D image "
                           "%zu x %zu (use " DSG_PARAM("kernel") " vector)",
                           w, h, d->name, d->image2d_max_width, d->image2d_max_height);
    dia->image_width = w;
    dia->image_height = h;
  }
  a_bytes = row->packed ? (unsigned long long)A->ndiag * (unsigned long long)A->rows * 4
                        : (unsigned long long)spmv_dia_bytes(A);
  if (a_bytes > max_alloc) {
    char need[32], cap[32];
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the matrix needs one buffer of %s, over %s's largest "
                         "allocation of %s%s",
                         spmv_cl_bytes(a_bytes, need), d->name, spmv_cl_bytes(max_alloc, cap),
                         rt->max_alloc_capped ? " (the " DSG_PARAM("cl_max_alloc") " cap)"
                                              : " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  if (a_bytes + 3 * vec_bytes + (unsigned long long)A->ndiag * 4 > d->global_mem) {
    char need[32], have[32];
    return dsg_error_set(
        DSG_ERR_LIMIT, "the matrix and vectors need %s, over %s's %s of global memory",
        spmv_cl_bytes(a_bytes + 3 * vec_bytes, need), d->name, spmv_cl_bytes(d->global_mem, have));
  }
  dia->kernel = row;
  return DSG_OK;
}

/* A's values on an OpenCL device (spmv_dia_device's extension). */
typedef struct cl_dia_device {
  spmv_dia_device base;
  cl_context ctx;
  cl_command_queue queue;
  cl_mem values;
  char name[96]; /* the device's, for messages */
} cl_dia_device;

static void release_device(spmv_dia_device *self)
{
  cl_dia_device *d = (cl_dia_device *)self;
  clReleaseMemObject(d->values);
  clReleaseCommandQueue(d->queue);
  clReleaseContext(d->ctx);
  free(d);
}

static int read_device(spmv_dia_device *self, float *values, size_t bytes)
{
  cl_dia_device *d = (cl_dia_device *)self;
  cl_int err = clEnqueueReadBuffer(d->queue, d->values, CL_TRUE, 0, bytes, values, 0, NULL, NULL);
  return err == CL_SUCCESS ? DSG_OK : spmv_cl_fail(err, "reading the matrix back", d->name);
}

int spmv_cl_dia_keep_device(spmv_dia *A, const spmv_cl_runtime *rt, cl_mem values)
{
  cl_dia_device *d = malloc(sizeof(*d));
  if (!d)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the matrix's device copy");
  d->base.release = release_device;
  d->base.read = read_device;
  d->ctx = rt->ctx;
  d->queue = rt->queue;
  d->values = values;
  snprintf(d->name, sizeof(d->name), "%s", rt->dev.name);
  clRetainContext(d->ctx);
  clRetainCommandQueue(d->queue);
  clRetainMemObject(values);
  if (A->device) /* the copy it replaces */
    A->device->release(A->device);
  A->device = &d->base;
  return DSG_OK;
}

cl_mem spmv_cl_dia_device_values(const spmv_dia *A, cl_context ctx)
{
  const cl_dia_device *d = (const cl_dia_device *)A->device;
  return A->device && A->device->release == release_device && d->ctx == ctx ? d->values : NULL;
}

/* A on the device, into dia->A: pitched as on the host, or packed (diag * rows + row). A pitched
 * copy already on rt's context is taken as it is; a matrix with no host values is read back from
 * its device copy for the upload. */
static int upload_values(const spmv_cl_runtime *rt, spmv_cl_dia *dia, const spmv_dia *A)
{
  const size_t packed_floats = (size_t)A->ndiag * (size_t)A->rows;
  const cl_mem kept = spmv_cl_dia_device_values(A, rt->ctx);
  const float *values = A->values;
  float *packed = NULL, *read = NULL;
  cl_int err;
  if (!dia->kernel->packed && kept) {
    dia->A = kept;
    clRetainMemObject(dia->A);
    return DSG_OK;
  }
  if (!values) { /* on a device alone, in a layout or a context this upload cannot take */
    const int status = spmv_dia_read_device(A, &read);
    if (status != DSG_OK)
      return status;
    values = read;
  }
  if (dia->kernel->packed) {
    packed = malloc(packed_floats * sizeof(float));
    if (!packed) {
      free(read);
      return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the packed matrix");
    }
    for (int d = 0; d < A->ndiag; d++)
      memcpy(packed + (size_t)d * (size_t)A->rows, values + (size_t)d * A->pitch,
             (size_t)A->rows * sizeof(float));
    err = spmv_cl_upload(rt, CL_MEM_READ_ONLY, packed, packed_floats * sizeof(float), &dia->A);
    free(packed);
  } else {
    err = spmv_cl_upload(rt, CL_MEM_READ_ONLY, values, spmv_dia_bytes(A), &dia->A);
  }
  free(read);
  return err == CL_SUCCESS ? DSG_OK : spmv_cl_fail(err, "uploading the matrix", rt->dev.name);
}

/* The work-group size (local_size, or 0: DIA_DEFAULT_LOCAL capped by the kernel's limit) and
 * the launch: one work-item per rows_per_item rows, rounded up to whole groups. */
static int launch_size(const spmv_cl_runtime *rt, spmv_cl_dia *dia, size_t local_size)
{
  const size_t per = (size_t)dia->kernel->rows_per_item;
  size_t local = local_size ? local_size : DIA_DEFAULT_LOCAL, items, kmax = 0;
  cl_int err;
  cl_kernel probe = clCreateKernel(dia->program, dia->kernel->function, &err);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "clCreateKernel", rt->dev.name);
  if (clGetKernelWorkGroupInfo(probe, rt->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kmax), &kmax,
                               NULL) == CL_SUCCESS &&
      kmax > 0 && local > kmax) {
    if (local_size) {
      clReleaseKernel(probe);
      return dsg_error_set(DSG_ERR_INVALID,
                           DSG_PARAM("local_size") " %zu is over the kernel's limit of %zu on %s",
                           local_size, kmax, rt->dev.name);
    }
    local = kmax;
  }
  clReleaseKernel(probe);
  items = ((size_t)dia->rows + per - 1) / per;
  dia->local = local;
  dia->global = (items + local - 1) / local * local;
  return DSG_OK;
}

int spmv_cl_dia_create(spmv_cl_dia **out, const spmv_cl_runtime *rt, const spmv_dia *A,
                       spmv_kernel kernel, size_t local_size, char *note, size_t note_cap)
{
  spmv_cl_dia *dia;
  cl_int err;
  int status;

  *out = NULL;
  dia = calloc(1, sizeof(*dia));
  if (!dia)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the OpenCL matrix");
  dia->rows = A->rows;
  dia->ndiag = A->ndiag;
  dia->width = A->width;
  dia->pitch = A->pitch;
  status = plan(rt, A, kernel, dia, note, note_cap);
  if (status != DSG_OK)
    goto out_free;
  status = spmv_cl_build(rt, "dia_spmv", "-cl-std=CL1.2", &dia->program);
  if (status != DSG_OK)
    goto out_free;

  status = upload_values(rt, dia, A);
  if (status != DSG_OK)
    goto out_free;
  dia->offsets = clCreateBuffer(rt->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                (size_t)A->ndiag * sizeof(int), A->offsets, &err);
  if (err == CL_SUCCESS && dia->kernel->x_image) {
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    cl_image_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = dia->image_width;
    desc.image_height = dia->image_height;
    dia->ximage = clCreateImage(rt->ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
  }
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "allocating the vectors", rt->dev.name);
    goto out_free;
  }
  status = launch_size(rt, dia, local_size);
  if (status != DSG_OK)
    goto out_free;
  *out = dia;
  return DSG_OK;

out_free:
  spmv_cl_dia_destroy(dia);
  return status;
}

void spmv_cl_dia_destroy(spmv_cl_dia *dia)
{
  if (!dia)
    return;
  if (dia->program)
    clReleaseProgram(dia->program);
  if (dia->A)
    clReleaseMemObject(dia->A);
  if (dia->offsets)
    clReleaseMemObject(dia->offsets);
  if (dia->ximage)
    clReleaseMemObject(dia->ximage);
  free(dia);
}

int spmv_cl_dia_kernel_create(const spmv_cl_runtime *rt, const spmv_cl_dia *dia, cl_mem x, cl_mem y,
                              cl_kernel *out)
{
  const int pitch = (int)dia->pitch, mask = (int)dia->image_width - 1;
  int log_w = 0;
  cl_int err;
  cl_kernel k;

  *out = NULL;
  while (((size_t)1 << log_w) < dia->image_width)
    log_w++;
  k = clCreateKernel(dia->program, dia->kernel->function, &err);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "clCreateKernel", rt->dev.name);
  for (cl_uint i = 0; dia->kernel->args[i] != SPMV_CL_ARG_END && err == CL_SUCCESS; i++) {
    switch (dia->kernel->args[i]) {
    case SPMV_CL_ARG_A: err = clSetKernelArg(k, i, sizeof(cl_mem), &dia->A); break;
    case SPMV_CL_ARG_PITCH: err = clSetKernelArg(k, i, sizeof(int), &pitch); break;
    case SPMV_CL_ARG_ROWS: err = clSetKernelArg(k, i, sizeof(int), &dia->rows); break;
    case SPMV_CL_ARG_NDIAG: err = clSetKernelArg(k, i, sizeof(int), &dia->ndiag); break;
    case SPMV_CL_ARG_OFFSETS: err = clSetKernelArg(k, i, sizeof(cl_mem), &dia->offsets); break;
    case SPMV_CL_ARG_X:
      if (x)
        err = clSetKernelArg(k, i, sizeof(cl_mem), &x);
      break;
    case SPMV_CL_ARG_X_IMAGE: err = clSetKernelArg(k, i, sizeof(cl_mem), &dia->ximage); break;
    case SPMV_CL_ARG_LOG_WIDTH: err = clSetKernelArg(k, i, sizeof(int), &log_w); break;
    case SPMV_CL_ARG_WIDTH_MASK: err = clSetKernelArg(k, i, sizeof(int), &mask); break;
    case SPMV_CL_ARG_Y: err = clSetKernelArg(k, i, sizeof(cl_mem), &y); break;
    default: err = CL_INVALID_KERNEL_ARGS; break; /* a row lists an argument not handled here */
    }
  }
  if (err != CL_SUCCESS) {
    clReleaseKernel(k);
    return spmv_cl_fail(err, "setting the DIA kernel's arguments", rt->dev.name);
  }
  *out = k;
  return DSG_OK;
}

int spmv_cl_dia_set_x(const spmv_cl_runtime *rt, const spmv_cl_dia *dia, cl_kernel k, cl_mem x)
{
  for (cl_uint i = 0; dia->kernel->args[i] != SPMV_CL_ARG_END; i++)
    if (dia->kernel->args[i] == SPMV_CL_ARG_X) {
      cl_int err = clSetKernelArg(k, i, sizeof(cl_mem), &x);
      return err == CL_SUCCESS ? DSG_OK
                               : spmv_cl_fail(err, "setting the DIA kernel's x", rt->dev.name);
    }
  return dsg_error_set(DSG_ERR_INVALID, "the DIA kernel %s reads x from an image, not a buffer",
                       dia->kernel->name);
}
