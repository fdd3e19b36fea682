/* Choosing the matvec backend, and `diaseg devices`. */
#include "app.h"

#include <stdlib.h>
#include <string.h>

void app_cl_options(const app_config *cfg, spmv_cl_options *opt)
{
  const char *cap = getenv("DIASEG_CL_MAX_ALLOC");
  spmv_cl_options_init(opt);
  opt->device = cfg->cl_device;
  opt->kernel = cfg->kernel;
  opt->local_size = cfg->local_size;
  opt->kernel_dir = cfg->kernel_dir;
  opt->max_alloc = cfg->cl_max_alloc;
  if (!opt->max_alloc && cap && *cap)
    opt->max_alloc = strtoull(cap, NULL, 10);
}

void app_eig_options(const app_config *cfg, eig_options *opt)
{
  eig_options_init(opt);
  opt->nev = cfg->nev;
  opt->ncv = cfg->ncv;
  opt->tol = cfg->tol;
  opt->max_iter = cfg->max_iter;
}

static void say_opencl(const app_config *cfg, const spmv_matvec *mv)
{
  const spmv_cl_info *info = spmv_matvec_cl_info(mv);
  if (cfg->quiet || !info)
    return;
  fprintf(stderr, "diaseg: matvec: OpenCL on %s (%s), kernel %s, local size %zu%s%s\n",
          info->device, info->platform, spmv_kernel_name(info->kernel), info->local_size,
          info->note[0] ? "; " : "", info->note);
}

static void print_build_log(void)
{
  const char *log = spmv_cl_build_log();
  if (log[0])
    fprintf(stderr, "--- OpenCL build log ---\n%s\n--- end of build log ---\n", log);
}

/* The OpenCL matvec for N, made ready for the Lanczos solver when it will run (its kernels
 * built and its basis checked now, so that a device that cannot run it is found before the
 * solve, and with --matvec auto the C path takes over). *bad_options: the solver's options
 * themselves are wrong, which no other backend mends. */
static int create_opencl(const app_config *cfg, const spmv_dia *N, const spmv_cl_options *opt,
                         spmv_matvec **mv, int *bad_options)
{
  int status = spmv_matvec_create_opencl(mv, N, opt);
  *bad_options = 0;
  if (status == DSG_OK && !cfg->no_solve && strcmp(cfg->solver, "arpack") != 0) {
    eig_options o;
    app_eig_options(cfg, &o);
    status = eig_lanczos_prepare(*mv, &o);
    if (status != DSG_OK) {
      *bad_options = status == DSG_ERR_INVALID;
      spmv_matvec_destroy(*mv);
      *mv = NULL;
    }
  }
  if (status != DSG_OK)
    print_build_log();
  return status;
}

int app_matvec_create(const app_config *cfg, const spmv_dia *N, spmv_matvec **mv)
{
  spmv_cl_options opt;
  int status, bad_options;
  *mv = NULL;
  if (strcmp(cfg->matvec, "cpu") == 0)
    return spmv_matvec_create_cpu(mv, N);
  app_cl_options(cfg, &opt);
  if (strcmp(cfg->matvec, "opencl") == 0) {
    status = create_opencl(cfg, N, &opt, mv, &bad_options);
    if (status == DSG_OK)
      say_opencl(cfg, *mv);
    return status;
  }
  /* auto */
  {
    spmv_cl_device *list = NULL;
    int count = 0, index = -1;
    const char *named =
        cfg->cl_device && *cfg->cl_device ? cfg->cl_device : getenv("DIASEG_CL_DEVICE");
    char spec[16];
    status = spmv_cl_devices(&list, &count);
    if (status == DSG_OK)
      status = spmv_cl_pick(list, count, named, 1, &index);
    free(list);
    if (status != DSG_OK) {
      if (!cfg->quiet)
        fprintf(stderr, "diaseg: matvec: the C path (%s)\n", dsg_error_message());
      return spmv_matvec_create_cpu(mv, N);
    }
    snprintf(spec, sizeof(spec), "%d", index);
    opt.device = spec;
    status = create_opencl(cfg, N, &opt, mv, &bad_options);
    if (status != DSG_OK && bad_options)
      return status;
    if (status != DSG_OK) {
      fprintf(stderr, "diaseg: warning: the OpenCL path failed (%s); falling back to the C path\n",
              dsg_error_message());
      return spmv_matvec_create_cpu(mv, N);
    }
    say_opencl(cfg, *mv);
    return DSG_OK;
  }
}

int app_solve(const app_config *cfg, spmv_matvec *mv, const eig_options *opt, eig_result *res)
{
  eig_options o = *opt;
  const char *unfused = getenv("DIASEG_LANCZOS_UNFUSED"); /* for measuring the fusion */
  if (strcmp(cfg->solver, "arpack") == 0)
    return eig_arpack_solve(mv, &o, res);
  o.lanczos_unfused = unfused && *unfused && strcmp(unfused, "0") != 0;
  return eig_lanczos_solve(mv, &o, res);
}

static double gib(unsigned long long b) { return (double)b / (1024.0 * 1024.0 * 1024.0); }

int app_devices(const app_config *cfg)
{
  spmv_cl_device *list = NULL;
  int count = 0, gpu = -1, any = -1, status;
  char any_error[512] = "";
  app_json j;
  status = spmv_cl_devices(&list, &count);
  if (status != DSG_OK) {
    if (cfg->json || (cfg->cl_device && *cfg->cl_device))
      return status; /* --cl-device names a device, and there is none */
    printf("No OpenCL devices: %s\nWith --matvec auto (the default) diaseg uses the C path.\n",
           dsg_error_message());
    return DSG_OK;
  }
  status = spmv_cl_pick(list, count, cfg->cl_device, 0, &any);
  if (status != DSG_OK) {
    if (cfg->cl_device && *cfg->cl_device) { /* it must exist: the same error as a run's */
      free(list);
      return status;
    }
    snprintf(any_error, sizeof(any_error), "%s", dsg_error_message()); /* $DIASEG_CL_DEVICE */
    any = -1;
  }
  if (spmv_cl_pick(list, count, cfg->cl_device, 1, &gpu) != DSG_OK)
    gpu = -1;
  if (cfg->json) {
    app_json_init(&j);
    app_json_begin_object(&j, NULL);
    app_json_int(&j, "auto_device", gpu);
    app_json_int(&j, "opencl_device", any);
    app_json_begin_array(&j, "devices");
    for (int i = 0; i < count; i++) {
      const spmv_cl_device *d = &list[i];
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
    if (status == DSG_OK)
      fwrite(j.buf, 1, j.len, stdout);
    app_json_free(&j);
    free(list);
    return status;
  }
  printf("OpenCL devices (%d):\n", count);
  for (int i = 0; i < count; i++) {
    const spmv_cl_device *d = &list[i];
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
