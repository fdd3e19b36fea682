/* The OpenCL devices, for the library's callers (diaseg devices, bench, Python). */
#include "diaseg_internal.h"
#include "json.h"

#include <stdlib.h>
#include <string.h>

static void from_spmv(const spmv_cl_device *d, dsg_device *o)
{
  memset(o, 0, sizeof(*o));
  o->index = d->index;
  memcpy(o->platform, d->platform, sizeof(o->platform));
  memcpy(o->name, d->name, sizeof(o->name));
  memcpy(o->version, d->version, sizeof(o->version));
  o->gpu = d->gpu;
  o->cpu = d->cpu;
  o->global_mem = d->global_mem;
  o->max_alloc = d->max_alloc;
  o->local_mem = d->local_mem;
  o->compute_units = d->compute_units;
  o->max_work_group = d->max_work_group;
  o->image_support = d->image_support;
  o->image2d_max_width = d->image2d_max_width;
  o->image2d_max_height = d->image2d_max_height;
  o->fp64 = d->fp64;
}

static void to_spmv(const dsg_device *d, spmv_cl_device *o)
{
  memset(o, 0, sizeof(*o));
  o->index = d->index;
  memcpy(o->platform, d->platform, sizeof(o->platform));
  memcpy(o->name, d->name, sizeof(o->name));
  o->gpu = d->gpu;
  o->cpu = d->cpu;
}

int dsg_devices(dsg_device **list, int *count)
{
  spmv_cl_device *cl = NULL;
  int n = 0, status = spmv_cl_devices(&cl, &n);
  *list = NULL;
  *count = 0;
  if (status != DSG_OK)
    return status;
  *list = calloc((size_t)n, sizeof(**list));
  if (!*list) {
    free(cl);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the device list");
  }
  for (int i = 0; i < n; i++)
    from_spmv(&cl[i], &(*list)[i]);
  *count = n;
  free(cl);
  return DSG_OK;
}

int dsg_device_pick(const dsg_device *list, int count, const char *spec, int gpu_only, int *index)
{
  spmv_cl_device *cl = calloc(count > 0 ? (size_t)count : 1, sizeof(*cl));
  int status;
  if (!cl)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the device list");
  for (int i = 0; i < count; i++)
    to_spmv(&list[i], &cl[i]);
  status = spmv_cl_pick(cl, count, spec, gpu_only, index);
  free(cl);
  return status;
}

int dsg_devices_json(const char *cl_device, char **json, size_t *len)
{
  dsg_device *list = NULL;
  int count = 0, gpu = -1, any = -1, status;
  app_json j;
  *json = NULL;
  *len = 0;
  status = dsg_devices(&list, &count);
  if (status != DSG_OK)
    return status;
  if (dsg_device_pick(list, count, cl_device, 0, &any) != DSG_OK)
    any = -1;
  if (dsg_device_pick(list, count, cl_device, 1, &gpu) != DSG_OK)
    gpu = -1;
  app_json_init(&j);
  app_json_begin_object(&j, NULL);
  app_json_int(&j, "auto_device", gpu);
  app_json_int(&j, "opencl_device", any);
  app_json_begin_array(&j, "devices");
  for (int i = 0; i < count; i++) {
    const dsg_device *d = &list[i];
    app_json_begin_object(&j, NULL);
    app_json_int(&j, "index", d->index);
    app_json_string(&j, "platform", d->platform);
    app_json_string(&j, "name", d->name);
    app_json_string(&j, "version", d->version);
    app_json_string(&j, "type", d->gpu ? "GPU" : d->cpu ? "CPU" : "other");
    app_json_int(&j, "global_mem", (long long)d->global_mem);
    app_json_int(&j, "max_alloc", (long long)d->max_alloc);
    app_json_int(&j, "local_mem", (long long)d->local_mem);
    app_json_int(&j, "compute_units", d->compute_units);
    app_json_bool(&j, "image_support", d->image_support);
    app_json_int(&j, "image2d_max_width", (long long)d->image2d_max_width);
    app_json_int(&j, "image2d_max_height", (long long)d->image2d_max_height);
    app_json_bool(&j, "fp64", d->fp64);
    app_json_end_object(&j);
  }
  app_json_end_array(&j);
  app_json_end_object(&j);
  status = app_json_finish(&j);
  if (status == DSG_OK) {
    *json = j.buf;
    *len = j.len;
    j.buf = NULL;
  }
  app_json_free(&j);
  free(list);
  return status;
}
