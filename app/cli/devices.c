/* diaseg devices: the OpenCL platforms and devices, and which one diaseg would pick. */
#include "cli.h"

#include <stdlib.h>

static double gib(unsigned long long b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

int app_devices(const app_config *cfg)
{
  const char *named = cfg->opt.cl_device && *cfg->opt.cl_device ? cfg->opt.cl_device : NULL;
  dsg_device *list = NULL;
  int count = 0, gpu = -1, any = -1, status;
  char any_error[512] = "";

  status = dsg_devices(&list, &count);
  if (status != DSG_OK) {
    if (cfg->json || named)
      return status; /* --cl-device names a device, and there is none */
    printf("No OpenCL devices: %s\nWith --matvec auto (the default) diaseg uses the C path.\n",
           dsg_error_message());
    return DSG_OK;
  }
  status = dsg_device_pick(list, count, named, 0, &any);
  if (status != DSG_OK) {
    if (named && !cfg->cl_device_from_env) {
      free(list);
      return status; /* it must exist: the same error as a run's */
    }
    snprintf(any_error, sizeof(any_error), "%s", dsg_error_message());
    any = -1;
  }
  if (dsg_device_pick(list, count, named, 1, &gpu) != DSG_OK)
    gpu = -1;
  if (cfg->json) {
    char *json = NULL;
    size_t len = 0;
    free(list);
    status = dsg_devices_json(named, &json, &len);
    if (status == DSG_OK)
      fwrite(json, 1, len, stdout);
    dsg_free(json);
    return status;
  }
  printf("OpenCL devices (%d):\n", count);
  for (int i = 0; i < count; i++) {
    const dsg_device *d = &list[i];
    printf("%c [%d] %s: %s (%s)\n", i == gpu ? '*' : ' ', d->index, d->platform, d->name,
           d->gpu   ? "GPU"
           : d->cpu ? "CPU"
                    : "other");
    printf("      %s, %d compute units, global memory %.1f GiB, max allocation %.1f GiB, "
           "local memory %.0f KiB\n",
           d->version, d->compute_units, gib(d->global_mem), gib(d->max_alloc),
           (double)d->local_mem / 1024.0);
    if (d->image_support)
      printf("      images: yes, max 2D %zu x %zu; fp64: %s\n", d->image2d_max_width,
             d->image2d_max_height, d->fp64 ? "yes" : "no");
    else
      printf("      images: no; fp64: %s\n", d->fp64 ? "yes" : "no");
  }
  if (gpu >= 0)
    printf("--matvec auto (the default) uses [%d] %s.\n", gpu, list[gpu].name);
  else
    printf("--matvec auto (the default) uses the C path: no OpenCL GPU.\n");
  if (any >= 0)
    printf(
        "--matvec opencl uses [%d] %s (choose with --cl-device INDEX|NAME or DIASEG_CL_DEVICE).\n",
        any, list[any].name);
  else
    printf("--matvec opencl fails (DIASEG_CL_DEVICE): %s\n", any_error);
  free(list);
  return DSG_OK;
}
