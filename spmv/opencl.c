/* The OpenCL backend of the matvec interface: devices, the program, the DIA kernels, timing. */
#include "opencl_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

#define SPMV_DEFAULT_LOCAL 128
#define SPMV_IMAGE_MAX_WIDTH 8192 /* pixels; the image is at most this wide (a power of two) */

static _Thread_local char build_log[8192];

const char *spmv_cl_build_log(void) { return build_log; }

void spmv_cl_keep_build_log(cl_program prog, cl_device_id dev)
{
  size_t len = 0;
  build_log[0] = '\0';
  clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof(build_log) - 1, build_log, &len);
  build_log[len < sizeof(build_log) ? len : sizeof(build_log) - 1] = '\0';
}

static const char *kernel_names[SPMV_KERNEL_COUNT] = {"auto",  "naive",  "aligned",
                                                      "local", "vector", "image"};

const char *spmv_kernel_name(spmv_kernel k)
{
  return k >= 0 && k < SPMV_KERNEL_COUNT ? kernel_names[k] : "?";
}

int spmv_kernel_parse(const char *name, spmv_kernel *k)
{
  for (int i = 0; i < SPMV_KERNEL_COUNT; i++)
    if (strcmp(name, kernel_names[i]) == 0) {
      *k = (spmv_kernel)i;
      return DSG_OK;
    }
  return dsg_error_set(DSG_ERR_INVALID,
                       "--kernel '%s' is not one of naive, aligned, local, "
                       "vector, image, auto",
                       name);
}

const char *spmv_cl_error_name(cl_int e)
{
  switch (e) {
  case CL_SUCCESS: return "CL_SUCCESS";
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_DEVICE_NOT_AVAILABLE: return "CL_DEVICE_NOT_AVAILABLE";
  case CL_COMPILER_NOT_AVAILABLE: return "CL_COMPILER_NOT_AVAILABLE";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_PROFILING_INFO_NOT_AVAILABLE: return "CL_PROFILING_INFO_NOT_AVAILABLE";
  case CL_IMAGE_FORMAT_NOT_SUPPORTED: return "CL_IMAGE_FORMAT_NOT_SUPPORTED";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_DEVICE: return "CL_INVALID_DEVICE";
  case CL_INVALID_CONTEXT: return "CL_INVALID_CONTEXT";
  case CL_INVALID_COMMAND_QUEUE: return "CL_INVALID_COMMAND_QUEUE";
  case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
  case CL_INVALID_IMAGE_SIZE: return "CL_INVALID_IMAGE_SIZE";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_PROGRAM: return "CL_INVALID_PROGRAM";
  case CL_INVALID_PROGRAM_EXECUTABLE: return "CL_INVALID_PROGRAM_EXECUTABLE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_GLOBAL_WORK_SIZE: return "CL_INVALID_GLOBAL_WORK_SIZE";
  case CL_INVALID_EVENT: return "CL_INVALID_EVENT";
  case CL_INVALID_OPERATION: return "CL_INVALID_OPERATION";
  case CL_PLATFORM_NOT_FOUND_KHR: return "CL_PLATFORM_NOT_FOUND_KHR";
  default: return "CL error";
  }
}

/* Records an OpenCL failure with its code, e.g. "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE
 * (-11) on NVIDIA H200". */
int spmv_cl_fail(cl_int err, const char *what, const char *device)
{
  int status = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
                       err == CL_OUT_OF_HOST_MEMORY
                   ? DSG_ERR_LIMIT
                   : DSG_ERR_OPENCL;
  return dsg_error_set(status, "%s failed: %s (%d)%s%s%s", what, spmv_cl_error_name(err), (int)err,
                       device ? " on " : "", device ? device : "",
                       status == DSG_ERR_LIMIT ? "; the device is out of memory or resources" : "");
}

/* ---- devices ---- */

/* A device string, truncated to cap (clGetDeviceInfo refuses buffers shorter than the string). */
static void get_string(cl_device_id d, cl_device_info what, char *buf, size_t cap)
{
  char tmp[1024];
  if (clGetDeviceInfo(d, what, sizeof(tmp), tmp, NULL) != CL_SUCCESS)
    snprintf(tmp, sizeof(tmp), "?");
  tmp[sizeof(tmp) - 1] = '\0';
  tmp[cap - 1] = '\0'; /* truncate */
  memcpy(buf, tmp, cap);
}

static int list_devices(spmv_cl_device **list, cl_device_id **ids, int *count)
{
  cl_uint nplat = 0;
  cl_platform_id plats[32];
  cl_int err = clGetPlatformIDs(32, plats, &nplat);
  spmv_cl_device *out = NULL;
  cl_device_id *dev_ids = NULL;
  int n = 0, cap = 0;

  *list = NULL;
  *count = 0;
  if (ids)
    *ids = NULL;
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && nplat == 0))
    return dsg_error_set(DSG_ERR_NODEVICE,
                         "no OpenCL platform found (CL_PLATFORM_NOT_FOUND_KHR): "
                         "install an OpenCL driver (e.g. pocl-opencl-icd) or check OCL_ICD_VENDORS "
                         "and /etc/OpenCL/vendors");
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "clGetPlatformIDs", NULL);
  for (cl_uint p = 0; p < nplat && p < 32; p++) {
    char pname[96];
    cl_uint ndev = 0;
    cl_device_id devs[64];
    char tmp[1024];
    if (clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof(tmp), tmp, NULL) != CL_SUCCESS)
      snprintf(tmp, sizeof(tmp), "platform %u", p);
    tmp[sizeof(pname) - 1] = '\0'; /* truncate */
    memcpy(pname, tmp, sizeof(pname));
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &ndev) != CL_SUCCESS)
      continue; /* a platform without devices */
    for (cl_uint d = 0; d < ndev && d < 64; d++) {
      if (n == cap) {
        cap = cap ? 2 * cap : 8;
        spmv_cl_device *o2 = realloc(out, (size_t)cap * sizeof(*out));
        cl_device_id *i2 = realloc(dev_ids, (size_t)cap * sizeof(*dev_ids));
        if (o2)
          out = o2;
        if (i2)
          dev_ids = i2;
        if (!o2 || !i2) {
          free(out);
          free(dev_ids);
          return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the device list");
        }
      }
      spmv_cl_device *x = &out[n];
      cl_device_type type = 0;
      cl_ulong u = 0;
      cl_uint cu = 0;
      cl_bool img = CL_FALSE;
      cl_device_fp_config fp64 = 0;
      memset(x, 0, sizeof(*x));
      x->index = n;
      snprintf(x->platform, sizeof(x->platform), "%s", pname);
      get_string(devs[d], CL_DEVICE_NAME, x->name, sizeof(x->name));
      get_string(devs[d], CL_DEVICE_VERSION, x->version, sizeof(x->version));
      clGetDeviceInfo(devs[d], CL_DEVICE_TYPE, sizeof(type), &type, NULL);
      x->gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
      x->cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
      if (clGetDeviceInfo(devs[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(u), &u, NULL) == CL_SUCCESS)
        x->global_mem = u;
      if (clGetDeviceInfo(devs[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(u), &u, NULL) == CL_SUCCESS)
        x->max_alloc = u;
      if (clGetDeviceInfo(devs[d], CL_DEVICE_LOCAL_MEM_SIZE, sizeof(u), &u, NULL) == CL_SUCCESS)
        x->local_mem = u;
      if (clGetDeviceInfo(devs[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cu), &cu, NULL) ==
          CL_SUCCESS)
        x->compute_units = (int)cu;
      clGetDeviceInfo(devs[d], CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(x->max_work_group),
                      &x->max_work_group, NULL);
      if (clGetDeviceInfo(devs[d], CL_DEVICE_IMAGE_SUPPORT, sizeof(img), &img, NULL) == CL_SUCCESS)
        x->image_support = img == CL_TRUE;
      if (x->image_support) {
        clGetDeviceInfo(devs[d], CL_DEVICE_IMAGE2D_MAX_WIDTH, sizeof(size_t), &x->image2d_max_width,
                        NULL);
        clGetDeviceInfo(devs[d], CL_DEVICE_IMAGE2D_MAX_HEIGHT, sizeof(size_t),
                        &x->image2d_max_height, NULL);
      }
      if (clGetDeviceInfo(devs[d], CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL) ==
          CL_SUCCESS)
        x->fp64 = fp64 != 0;
      dev_ids[n] = devs[d];
      n++;
    }
  }
  if (n == 0) {
    free(out);
    free(dev_ids);
    return dsg_error_set(DSG_ERR_NODEVICE, "no OpenCL device found on %u platform(s)", nplat);
  }
  *list = out;
  *count = n;
  if (ids)
    *ids = dev_ids;
  else
    free(dev_ids);
  return DSG_OK;
}

int spmv_cl_devices(spmv_cl_device **list, int *count) { return list_devices(list, NULL, count); }

static int contains_nocase(const char *hay, const char *needle)
{
  for (; *hay; hay++) {
    size_t i = 0;
    while (needle[i] && hay[i] &&
           tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
      i++;
    if (!needle[i])
      return 1;
  }
  return 0;
}

int spmv_cl_pick(const spmv_cl_device *list, int count, const char *spec, int gpu_only, int *index)
{
  if (!spec || !*spec)
    spec = getenv("DIASEG_CL_DEVICE");
  if (spec && *spec) {
    char *end;
    long v = strtol(spec, &end, 10);
    if (*end == '\0') {
      if (v < 0 || v >= count)
        return dsg_error_set(DSG_ERR_NODEVICE,
                             "OpenCL device %ld does not exist: there are %d "
                             "(0 to %d; see 'diaseg devices')",
                             v, count, count - 1);
      *index = (int)v;
      return DSG_OK;
    }
    for (int i = 0; i < count; i++) {
      char full[200];
      snprintf(full, sizeof(full), "%s %s", list[i].platform, list[i].name);
      if (contains_nocase(full, spec)) {
        *index = i;
        return DSG_OK;
      }
    }
    return dsg_error_set(DSG_ERR_NODEVICE, "no OpenCL device matches '%s' (see 'diaseg devices')",
                         spec);
  }
  for (int i = 0; i < count; i++)
    if (list[i].gpu) {
      *index = i;
      return DSG_OK;
    }
  if (gpu_only)
    return dsg_error_set(DSG_ERR_NODEVICE, "no OpenCL GPU found among %d device(s)", count);
  *index = 0;
  return DSG_OK;
}

void spmv_cl_options_init(spmv_cl_options *opt)
{
  memset(opt, 0, sizeof(*opt));
  opt->kernel = SPMV_KERNEL_AUTO;
}

/* ---- the matvec ---- */

static void cl_destroy(void *impl)
{
  cl_matvec *m = impl;
  if (!m)
    return;
  if (m->queue)
    clFinish(m->queue);
  if (m->kernel)
    clReleaseKernel(m->kernel);
  if (m->copy)
    clReleaseKernel(m->copy);
  if (m->program)
    clReleaseProgram(m->program);
  if (m->lanczos)
    clReleaseProgram(m->lanczos);
  free(m->kernel_dir);
  if (m->A)
    clReleaseMemObject(m->A);
  if (m->offsets)
    clReleaseMemObject(m->offsets);
  if (m->x)
    clReleaseMemObject(m->x);
  if (m->y)
    clReleaseMemObject(m->y);
  if (m->ximage)
    clReleaseMemObject(m->ximage);
  if (m->queue)
    clReleaseCommandQueue(m->queue);
  if (m->ctx)
    clReleaseContext(m->ctx);
  free(m->staging);
  free(m);
}

double spmv_cl_event_seconds(cl_event ev)
{
  cl_ulong t0 = 0, t1 = 0;
  if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL) !=
          CL_SUCCESS ||
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL) != CL_SUCCESS)
    return 0.0;
  return t1 > t0 ? (double)(t1 - t0) * 1e-9 : 0.0;
}

static int cl_apply(void *impl, const float *x, float *y, spmv_timing *t)
{
  cl_matvec *m = impl;
  cl_event ev[3] = {NULL, NULL, NULL};
  cl_int err;
  double t0 = dsg_seconds();
  int status = DSG_OK;

  if (m->ximage) {
    size_t origin[3] = {0, 0, 0}, region[3] = {m->info.image_width, m->info.image_height, 1};
    memcpy(m->staging, x, (size_t)m->rows * sizeof(float)); /* the tail stays zero */
    err = clEnqueueWriteImage(m->queue, m->ximage, CL_FALSE, origin, region, 0, 0, m->staging, 0,
                              NULL, &ev[0]);
  } else {
    err = clEnqueueWriteBuffer(m->queue, m->x, CL_FALSE, 0, (size_t)m->rows * sizeof(float), x, 0,
                               NULL, &ev[0]);
  }
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "writing x", m->info.device);
    goto out;
  }
  err =
      clEnqueueNDRangeKernel(m->queue, m->kernel, 1, NULL, &m->global, &m->local, 0, NULL, &ev[1]);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "running the DIA kernel", m->info.device);
    goto out;
  }
  err = clEnqueueReadBuffer(m->queue, m->y, CL_TRUE, 0, (size_t)m->rows * sizeof(float), y, 0, NULL,
                            &ev[2]);
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
    clFinish(m->queue);
  for (int i = 0; i < 3; i++)
    if (ev[i])
      clReleaseEvent(ev[i]);
  return status;
}

static int cl_prepare_lanczos(void *impl, int m) { return spmv_cl_lanczos_ready(impl, m, 0); }

static const spmv_matvec_ops cl_ops = {"opencl", cl_apply, cl_destroy, spmv_basis_init_cl,
                                       cl_prepare_lanczos};

const char *spmv_cl_bytes(unsigned long long bytes, char buf[32])
{
  static const char *unit[] = {"KiB", "MiB", "GiB", "TiB"};
  double v = (double)bytes;
  int u = -1;
  while (v >= 1024.0 && u < 3) {
    v /= 1024.0;
    u++;
  }
  if (u < 0)
    snprintf(buf, 32, "%llu bytes", bytes);
  else
    snprintf(buf, 32, "%.1f %s", v, unit[u]);
  return buf;
}

static char *read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  long len;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && len < (1 << 24) &&
      fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)len + 1))) {
    if (fread(buf, 1, (size_t)len, f) != (size_t)len) {
      free(buf);
      buf = NULL;
    } else {
      buf[len] = '\0';
    }
  }
  fclose(f);
  return buf;
}

int spmv_cl_build(cl_matvec *m, const char *name, const char *options, cl_program *prog)
{
  char *from_disk = NULL, path[4096];
  const char *src;
  cl_int err;
  int status = DSG_OK;

  build_log[0] = '\0';
  if (m->kernel_dir) {
    snprintf(path, sizeof(path), "%s/%s.cl", m->kernel_dir, name);
    from_disk = read_text(path);
    if (!from_disk)
      return dsg_error_set(DSG_ERR_IO, "cannot read the kernel file '%s': %s", path,
                           strerror(errno));
    src = from_disk;
  } else {
    src = spmv_kernel_source(name);
  }
  *prog = clCreateProgramWithSource(m->ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "clCreateProgramWithSource", m->info.device);
    goto out;
  }
  err = clBuildProgram(*prog, 1, &m->device, options, NULL, NULL);
  if (err != CL_SUCCESS) {
    spmv_cl_keep_build_log(*prog, m->device);
    status = dsg_error_set(DSG_ERR_OPENCL,
                           "building the OpenCL kernels %s%s%s failed: %s (%d) on %s "
                           "(build log above)",
                           from_disk ? "from " : "", from_disk ? path : name,
                           from_disk ? "" : ".cl (built in)", spmv_cl_error_name(err), (int)err,
                           m->info.device);
  }
out:
  free(from_disk);
  return status;
}

/* Picks the kernel and its image shape; checks every size against the device's limits. */
static int plan(cl_matvec *m, const spmv_dia *A, const spmv_cl_options *opt)
{
  const spmv_cl_device *d = &m->dev;
  const unsigned long long max_alloc =
      opt->max_alloc && opt->max_alloc < d->max_alloc ? opt->max_alloc : d->max_alloc;
  const unsigned long long a_bytes =
      opt->kernel == SPMV_KERNEL_NAIVE
          ? (unsigned long long)A->ndiag * (unsigned long long)A->rows * 4
          : (unsigned long long)spmv_dia_bytes(A);
  const unsigned long long vec_bytes = (unsigned long long)A->rows * 4;
  size_t pixels = ((size_t)A->rows + 3) / 4, w = 1, h;
  spmv_kernel k = opt->kernel;

  /* the image: as narrow as possible up to SPMV_IMAGE_MAX_WIDTH and the device's width */
  while (w < pixels && w < SPMV_IMAGE_MAX_WIDTH && w * 2 <= d->image2d_max_width)
    w *= 2;
  h = (pixels + w - 1) / w;
  if (k == SPMV_KERNEL_AUTO) {
    if (d->image_support && h <= d->image2d_max_height) {
      k = SPMV_KERNEL_IMAGE;
      snprintf(m->info.note, sizeof(m->info.note), "kernel image: x in a %zu x %zu float4 image", w,
               h);
    } else {
      k = SPMV_KERNEL_VECTOR;
      snprintf(m->info.note, sizeof(m->info.note), "kernel vector: %s",
               d->image_support ? "x does not fit the device's largest image"
                                : "the device has no image support");
    }
  }
  if (k == SPMV_KERNEL_IMAGE) {
    if (!d->image_support)
      return dsg_error_set(DSG_ERR_NODEVICE,
                           "--kernel image needs image support, which %s lacks "
                           "(use --kernel vector)",
                           d->name);
    if (h > d->image2d_max_height)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "x needs a %zu x %zu image, over %s's largest 2D image "
                           "%zu x %zu (use --kernel vector)",
                           w, h, d->name, d->image2d_max_width, d->image2d_max_height);
    m->info.image_width = w;
    m->info.image_height = h;
  }
  m->max_alloc = max_alloc;
  if (a_bytes > max_alloc) {
    char need[32], cap[32];
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the matrix needs one buffer of %s, over %s's largest "
                         "allocation of %s%s",
                         spmv_cl_bytes(a_bytes, need), d->name, spmv_cl_bytes(max_alloc, cap),
                         opt->max_alloc ? " (the --cl-max-alloc cap)"
                                        : " (CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  }
  if (a_bytes + 3 * vec_bytes + (unsigned long long)A->ndiag * 4 > d->global_mem) {
    char need[32], have[32];
    return dsg_error_set(
        DSG_ERR_LIMIT, "the matrix and vectors need %s, over %s's %s of global memory",
        spmv_cl_bytes(a_bytes + 3 * vec_bytes, need), d->name, spmv_cl_bytes(d->global_mem, have));
  }
  m->info.kernel = k;
  return DSG_OK;
}

static int set_args(cl_matvec *m)
{
  const int pitch = (int)m->pitch;
  cl_int err = CL_SUCCESS;
  int a = 0;
  err |= clSetKernelArg(m->kernel, a++, sizeof(cl_mem), &m->A);
  if (m->info.kernel != SPMV_KERNEL_NAIVE)
    err |= clSetKernelArg(m->kernel, a++, sizeof(int), &pitch);
  err |= clSetKernelArg(m->kernel, a++, sizeof(int), &m->rows);
  err |= clSetKernelArg(m->kernel, a++, sizeof(int), &m->ndiag);
  err |= clSetKernelArg(m->kernel, a++, sizeof(cl_mem), &m->offsets);
  if (m->info.kernel == SPMV_KERNEL_IMAGE) {
    int log_w = 0, mask = (int)m->info.image_width - 1;
    while (((size_t)1 << log_w) < m->info.image_width)
      log_w++;
    err |= clSetKernelArg(m->kernel, a++, sizeof(cl_mem), &m->ximage);
    err |= clSetKernelArg(m->kernel, a++, sizeof(int), &log_w);
    err |= clSetKernelArg(m->kernel, a++, sizeof(int), &mask);
  } else {
    err |= clSetKernelArg(m->kernel, a++, sizeof(cl_mem), &m->x);
  }
  err |= clSetKernelArg(m->kernel, a++, sizeof(cl_mem), &m->y);
  return err == CL_SUCCESS ? DSG_OK
                           : spmv_cl_fail(CL_INVALID_KERNEL_ARGS, "clSetKernelArg", m->info.device);
}

int spmv_matvec_create_opencl(spmv_matvec **out, const spmv_dia *A, const spmv_cl_options *opt)
{
  spmv_cl_device *list = NULL;
  cl_device_id *ids = NULL, dev;
  cl_matvec *m = NULL;
  cl_int err;
  int count = 0, index = 0, status;
  float *packed = NULL;

  *out = NULL;
  status = list_devices(&list, &ids, &count);
  if (status == DSG_OK)
    status = spmv_cl_pick(list, count, opt->device, 0, &index);
  if (status != DSG_OK)
    goto out;
  m = calloc(1, sizeof(*m));
  if (!m) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the OpenCL matvec");
    goto out;
  }
  m->dev = list[index];
  dev = ids[index];
  m->device = dev;
  m->rows = A->rows;
  m->ndiag = A->ndiag;
  m->pitch = A->pitch;
  snprintf(m->info.platform, sizeof(m->info.platform), "%s", m->dev.platform);
  snprintf(m->info.device, sizeof(m->info.device), "%s", m->dev.name);
  status = plan(m, A, opt);
  if (status != DSG_OK)
    goto out;

  m->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "clCreateContext", m->info.device);
    goto out;
  }
  m->queue = clCreateCommandQueue(m->ctx, dev, CL_QUEUE_PROFILING_ENABLE, &err);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "clCreateCommandQueue", m->info.device);
    goto out;
  }
  {
    const char *dir =
        opt->kernel_dir && *opt->kernel_dir ? opt->kernel_dir : getenv("DIASEG_KERNEL_DIR");
    if (dir && *dir && !(m->kernel_dir = strdup(dir))) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the kernel folder's name");
      goto out;
    }
  }
  status = spmv_cl_build(m, "dia_spmv", "-cl-std=CL1.2", &m->program);
  if (status != DSG_OK)
    goto out;
  {
    static const char *fn[SPMV_KERNEL_COUNT] = {NULL,        "dia_naive",  "dia_aligned",
                                                "dia_local", "dia_vector", "dia_image"};
    m->kernel = clCreateKernel(m->program, fn[m->info.kernel], &err);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "clCreateKernel", m->info.device);
      goto out;
    }
    m->copy = clCreateKernel(m->program, "copy_float4", &err);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "clCreateKernel(copy_float4)", m->info.device);
      goto out;
    }
  }

  /* A: pitched as on the host, or packed (diag * rows + row) for the naive kernel */
  if (m->info.kernel == SPMV_KERNEL_NAIVE) {
    packed = malloc((size_t)A->ndiag * (size_t)A->rows * sizeof(float));
    if (!packed) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the packed matrix");
      goto out;
    }
    for (int d = 0; d < A->ndiag; d++)
      memcpy(packed + (size_t)d * (size_t)A->rows, A->values + (size_t)d * A->pitch,
             (size_t)A->rows * sizeof(float));
    m->A = clCreateBuffer(m->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                          (size_t)A->ndiag * (size_t)A->rows * sizeof(float), packed, &err);
  } else {
    m->A = clCreateBuffer(m->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, spmv_dia_bytes(A),
                          A->values, &err);
  }
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "uploading the matrix", m->info.device);
    goto out;
  }
  m->offsets = clCreateBuffer(m->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              (size_t)A->ndiag * sizeof(int), A->offsets, &err);
  if (err == CL_SUCCESS)
    m->y = clCreateBuffer(m->ctx, CL_MEM_WRITE_ONLY, (size_t)A->rows * sizeof(float), NULL, &err);
  if (err == CL_SUCCESS && m->info.kernel != SPMV_KERNEL_IMAGE)
    m->x = clCreateBuffer(m->ctx, CL_MEM_READ_ONLY, (size_t)A->rows * sizeof(float), NULL, &err);
  if (err == CL_SUCCESS && m->info.kernel == SPMV_KERNEL_IMAGE) {
    cl_image_format fmt = {CL_RGBA, CL_FLOAT};
    const size_t floats = m->info.image_width * m->info.image_height * 4;
    cl_image_desc desc;
    memset(&desc, 0, sizeof(desc));
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = m->info.image_width;
    desc.image_height = m->info.image_height;
    m->ximage = clCreateImage(m->ctx, CL_MEM_READ_ONLY, &fmt, &desc, NULL, &err);
    m->staging = calloc(floats, sizeof(float));
    if (err == CL_SUCCESS && !m->staging) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the image staging buffer");
      goto out;
    }
  }
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "allocating the vectors", m->info.device);
    goto out;
  }
  {
    size_t local = opt->local_size ? opt->local_size : SPMV_DEFAULT_LOCAL, items;
    size_t kmax = 0;
    if (clGetKernelWorkGroupInfo(m->kernel, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof(kmax), &kmax,
                                 NULL) == CL_SUCCESS &&
        kmax > 0 && local > kmax) {
      if (opt->local_size) {
        status = dsg_error_set(DSG_ERR_INVALID,
                               "--local-size %zu is over the kernel's limit of %zu "
                               "on %s",
                               opt->local_size, kmax, m->info.device);
        goto out;
      }
      local = kmax;
    }
    items = m->info.kernel >= SPMV_KERNEL_VECTOR ? ((size_t)A->rows + 3) / 4 : (size_t)A->rows;
    m->local = local;
    m->global = (items + local - 1) / local * local;
    m->info.local_size = local;
  }
  status = set_args(m);
  if (status != DSG_OK)
    goto out;
  status = spmv_matvec_wrap(out, &cl_ops, m, A->rows);
  m = NULL; /* owned by *out now (or freed by the wrap on failure) */

out:
  cl_destroy(m);
  free(packed);
  free(list);
  free(ids);
  return status;
}

const spmv_cl_info *spmv_matvec_cl_info(const spmv_matvec *mv)
{
  return mv->ops == &cl_ops ? &((const cl_matvec *)mv->impl)->info : NULL;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int spmv_cl_copy_gbs(spmv_matvec *mv, size_t bytes, int repeat, double *gbs)
{
  cl_matvec *m;
  cl_mem src = NULL, dst = NULL;
  cl_int err;
  double *t = NULL;
  int status = DSG_OK, n4;
  size_t global, local;

  if (mv->ops != &cl_ops)
    return dsg_error_set(DSG_ERR_INVALID, "spmv_cl_copy_gbs needs an OpenCL matvec");
  m = mv->impl;
  n4 = (int)(bytes / 16);
  local = m->dev.max_work_group >= 256 ? 256 : m->dev.max_work_group; /* not the matvec's size */
  global = ((size_t)n4 + local - 1) / local * local;
  t = malloc((size_t)(repeat + 2) * sizeof(*t));
  src = clCreateBuffer(m->ctx, CL_MEM_READ_WRITE, (size_t)n4 * 16, NULL, &err);
  if (err == CL_SUCCESS)
    dst = clCreateBuffer(m->ctx, CL_MEM_READ_WRITE, (size_t)n4 * 16, NULL, &err);
  if (err != CL_SUCCESS || !t) {
    status = t ? spmv_cl_fail(err, "allocating the copy benchmark", m->info.device)
               : dsg_error_set(DSG_ERR_NOMEM, "cannot allocate timings");
    goto out;
  }
  {
    const float zero = 0.0f, one = 1.0f;
    clEnqueueFillBuffer(m->queue, src, &one, sizeof(one), 0, (size_t)n4 * 16, 0, NULL, NULL);
    clEnqueueFillBuffer(m->queue, dst, &zero, sizeof(zero), 0, (size_t)n4 * 16, 0, NULL, NULL);
  }
  clSetKernelArg(m->copy, 0, sizeof(cl_mem), &src);
  clSetKernelArg(m->copy, 1, sizeof(cl_mem), &dst);
  clSetKernelArg(m->copy, 2, sizeof(int), &n4);
  for (int r = 0; r < repeat + 2; r++) {
    cl_event ev;
    err = clEnqueueNDRangeKernel(m->queue, m->copy, 1, NULL, &global, &local, 0, NULL, &ev);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "running the copy benchmark", m->info.device);
      goto out;
    }
    clWaitForEvents(1, &ev);
    t[r] = spmv_cl_event_seconds(ev);
    clReleaseEvent(ev);
  }
  qsort(t + 2, (size_t)repeat, sizeof(*t), cmp_double);
  *gbs = 2.0 * (double)n4 * 16.0 / t[2 + repeat / 2] / 1e9;
out:
  if (src)
    clReleaseMemObject(src);
  if (dst)
    clReleaseMemObject(dst);
  free(t);
  return status;
}
