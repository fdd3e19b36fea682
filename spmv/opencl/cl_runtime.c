/* The OpenCL runtime: devices, opening one, program builds, errors, event timing. */
#include "cl_runtime.h"

#include "cl_cache.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CL_PLATFORM_NOT_FOUND_KHR
#define CL_PLATFORM_NOT_FOUND_KHR -1001
#endif

static _Thread_local char build_log[8192];
static _Thread_local unsigned long cl_failures; /* spmv_cl_fail calls on this thread */

const char *spmv_cl_build_log(void) { return build_log; }

/* Keeps the program's build log for spmv_cl_build_log(). */
static void keep_build_log(cl_program prog, cl_device_id dev)
{
  size_t len = 0;
  build_log[0] = '\0';
  clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof(build_log) - 1, build_log, &len);
  build_log[len < sizeof(build_log) ? len : sizeof(build_log) - 1] = '\0';
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

int spmv_cl_fail(cl_int err, const char *what, const char *device)
{
  int status = err == CL_MEM_OBJECT_ALLOCATION_FAILURE || err == CL_OUT_OF_RESOURCES ||
                       err == CL_OUT_OF_HOST_MEMORY
                   ? DSG_ERR_LIMIT
                   : DSG_ERR_OPENCL;
  cl_failures++;
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

static int list_devices_unlocked(spmv_cl_device **list, cl_device_id **ids, int *count)
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

/* The platforms and devices, listed by one thread at a time: a runtime's first listing loads its
 * drivers, and PoCL's, raced by a second thread (the CLI's warm-up beside its run), has handed
 * that thread no device, or crashed it. */
static int list_devices(spmv_cl_device **list, cl_device_id **ids, int *count)
{
  static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
  pthread_mutex_lock(&list_lock);
  const int status = list_devices_unlocked(list, ids, count);
  pthread_mutex_unlock(&list_lock);
  return status;
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
  if (spec && *spec) {
    /* an index: digits, perhaps after a '-' (a name never is); past the range of long (errno
     * ERANGE) it names no device either, and the message quotes it as given */
    const char *digits = spec + (spec[0] == '-');
    if (*digits && strspn(digits, "0123456789") == strlen(digits)) {
      long v;
      errno = 0;
      v = strtol(spec, NULL, 10);
      if (errno == ERANGE || v < 0 || v >= count)
        return dsg_error_set(DSG_ERR_NODEVICE,
                             "OpenCL device %.64s%s does not exist: there are %d "
                             "(0 to %d; see 'diaseg devices')",
                             spec, strlen(spec) > 64 ? "..." : "", count, count - 1);
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
    return dsg_error_set(DSG_ERR_NODEVICE,
                         "no OpenCL device matches '%.200s%s' (see 'diaseg devices')", spec,
                         strlen(spec) > 200 ? "..." : "");
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

/* ---- one device, opened ---- */

int spmv_cl_runtime_open(spmv_cl_runtime *rt, const char *spec, const char *kernel_dir,
                         unsigned long long max_alloc)
{
  spmv_cl_device *list = NULL;
  cl_device_id *ids = NULL;
  int count = 0, index = 0, status;

  memset(rt, 0, sizeof(*rt));
  status = list_devices(&list, &ids, &count);
  if (status == DSG_OK)
    status = spmv_cl_pick(list, count, spec, 0, &index);
  if (status != DSG_OK)
    goto out;
  rt->dev = list[index];
  rt->device = ids[index];
  rt->max_alloc = max_alloc && max_alloc < rt->dev.max_alloc ? max_alloc : rt->dev.max_alloc;
  rt->max_alloc_capped = max_alloc != 0;
  rt->failures = cl_failures;
  status = spmv_cl_cache_queue(rt->device, rt->dev.name, &rt->ctx, &rt->queue);
  if (status != DSG_OK)
    goto out;
  if (kernel_dir && *kernel_dir && !(rt->kernel_dir = strdup(kernel_dir)))
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the kernel folder's name");
out:
  if (status != DSG_OK)
    spmv_cl_runtime_close(rt);
  free(list);
  free(ids);
  return status;
}

void spmv_cl_runtime_close(spmv_cl_runtime *rt)
{
  if (rt->queue) {
    clFinish(rt->queue);
    clReleaseCommandQueue(rt->queue);
  }
  if (rt->ctx && cl_failures != rt->failures)
    spmv_cl_cache_forget(rt->ctx);
  if (rt->ctx)
    clReleaseContext(rt->ctx);
  free(rt->kernel_dir);
  memset(rt, 0, sizeof(*rt));
}

cl_int spmv_cl_upload(const spmv_cl_runtime *rt, cl_mem_flags flags, const void *host, size_t bytes,
                      cl_mem *m)
{
  cl_int err;
  *m = clCreateBuffer(rt->ctx, flags, bytes, NULL, &err);
  if (err == CL_SUCCESS)
    err = clEnqueueWriteBuffer(rt->queue, *m, CL_TRUE, 0, bytes, host, 0, NULL, NULL);
  if (err != CL_SUCCESS && *m) {
    clReleaseMemObject(*m);
    *m = NULL;
  }
  return err;
}

/* ---- programs ---- */

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

#define KERNEL_FILE_MAX ((off_t)1 << 24) /* 16 MiB: far above any kernel source */

/* The kernel file at `path` into *text (malloc'd, NUL-terminated): a regular file of at most
 * KERNEL_FILE_MAX bytes. It is opened without blocking and checked again once open, so that a
 * FIFO (which would wait for a writer forever), a device or a folder, even one put in its place
 * after the first check, is refused with a message instead of read. */
static int read_kernel_file(const char *path, char **text)
{
  char shown[DSG_SHORT_NAME], *buf = NULL;
  struct stat st;
  int fd, rc, status = DSG_OK;

  *text = NULL;
  if (stat(path, &st) != 0)
    return dsg_error_set(DSG_ERR_IO, "cannot read the kernel file '%s': %s",
                         dsg_short_name(path, shown), strerror(errno));
  if (S_ISDIR(st.st_mode))
    return dsg_error_set(DSG_ERR_IO, "'%s' is a folder, not a kernel file",
                         dsg_short_name(path, shown));
  fd = S_ISREG(st.st_mode) ? open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
  if (fd < 0 && S_ISREG(st.st_mode))
    return dsg_error_set(DSG_ERR_IO, "cannot read the kernel file '%s': %s",
                         dsg_short_name(path, shown), strerror(errno));
  if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    status = dsg_error_set(DSG_ERR_IO, "the kernel file '%s' is %s, not a regular file",
                           dsg_short_name(path, shown), dsg_file_kind(st.st_mode));
    goto out_close;
  }
  if (st.st_size > KERNEL_FILE_MAX) {
    status = dsg_error_set(
        DSG_ERR_LIMIT, "the kernel file '%s' has %lld bytes, over diaseg's limit of %lld",
        dsg_short_name(path, shown), (long long)st.st_size, (long long)KERNEL_FILE_MAX);
    goto out_close;
  }
  buf = malloc((size_t)st.st_size + 1);
  if (!buf) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %lld bytes for the kernel file '%s'",
                           (long long)st.st_size + 1, dsg_short_name(path, shown));
    goto out_close;
  }
  rc = dsg_read_exact(fd, buf, (size_t)st.st_size);
  if (rc != 0) {
    status = dsg_error_set(DSG_ERR_IO, "cannot read the kernel file '%s': %s",
                           dsg_short_name(path, shown),
                           rc > 0 ? strerror(rc) : "it shrank while being read");
    free(buf);
    goto out_close;
  }
  buf[st.st_size] = '\0';
  *text = buf;
out_close:
  if (fd >= 0)
    close(fd);
  return status;
}

int spmv_cl_build(const spmv_cl_runtime *rt, const char *name, const char *options,
                  cl_program *prog)
{
  char *from_disk = NULL, path[4096];
  const char *src;
  cl_int err;
  int status = DSG_OK;

  build_log[0] = '\0';
  if (rt->kernel_dir) {
    if ((size_t)snprintf(path, sizeof(path), "%s/%s.cl", rt->kernel_dir, name) >= sizeof(path))
      return dsg_error_set(DSG_ERR_IO,
                           "cannot read the kernel file %s.cl: the kernel folder's name has %zu "
                           "characters, over the %zu a path may have",
                           name, strlen(rt->kernel_dir), sizeof(path) - 1);
    status = read_kernel_file(path, &from_disk);
    if (status != DSG_OK)
      return status;
    src = from_disk;
  } else {
    src = spmv_kernel_source(name);
  }
  if (!options)
    options = "";
  if (src && spmv_cl_cache_program_claim(rt->ctx, rt->device, src, options, prog))
    goto out; /* built before, or by another thread meanwhile; else claimed: built below */
  *prog = clCreateProgramWithSource(rt->ctx, 1, &src, NULL, &err);
  if (err != CL_SUCCESS) {
    *prog = NULL;
    status = spmv_cl_fail(err, "clCreateProgramWithSource", rt->dev.name);
    if (src)
      spmv_cl_cache_program_abandon(rt->ctx, rt->device, src, options);
    goto out;
  }
  err = clBuildProgram(*prog, 1, &rt->device, options, NULL, NULL);
  if (err == CL_SUCCESS) {
    spmv_cl_cache_program_keep(rt->ctx, rt->device, src, options, *prog);
  } else {
    char shown[DSG_SHORT_NAME];
    keep_build_log(*prog, rt->device);
    status = dsg_error_set(DSG_ERR_OPENCL,
                           "building the OpenCL kernels %s%s%s failed: %s (%d) on %s "
                           "(build log above)",
                           from_disk ? "from " : "", from_disk ? dsg_short_name(path, shown) : name,
                           from_disk ? "" : ".cl (built in)", spmv_cl_error_name(err), (int)err,
                           rt->dev.name);
    clReleaseProgram(*prog); /* a failed build is neither kept nor handed out */
    *prog = NULL;
    spmv_cl_cache_program_abandon(rt->ctx, rt->device, src, options);
  }
out:
  free(from_disk);
  return status;
}

/* ---- timing ---- */

double spmv_cl_event_seconds(cl_event ev)
{
  cl_ulong t0 = 0, t1 = 0;
  if (clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL) !=
          CL_SUCCESS ||
      clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL) != CL_SUCCESS)
    return 0.0;
  return t1 > t0 ? (double)(t1 - t0) * 1e-9 : 0.0;
}
