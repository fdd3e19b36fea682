/* Choosing the backend of a problem: the C path, or the DIA kernels on an OpenCL device, made
 * ready for the solver before its clock starts; with "auto", a GPU when there is one and the C
 * path when the OpenCL path cannot run the problem. */
#include "diaseg_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_log(const dsg_options *opt, int level, const char *fmt, ...)
{
  char msg[8192];
  va_list ap;
  if (!opt->log)
    return;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  opt->log(opt->log_data, level, msg);
}

int app_cl_options(const dsg_options *opt, spmv_cl_options *cl)
{
  int status = DSG_OK;
  spmv_cl_options_init(cl);
  cl->device = opt->cl_device;
  if (opt->kernel && *opt->kernel)
    status = spmv_kernel_parse(opt->kernel, &cl->kernel);
  cl->local_size = opt->local_size;
  cl->kernel_dir = opt->kernel_dir && *opt->kernel_dir ? opt->kernel_dir : NULL;
  cl->max_alloc = opt->cl_max_alloc;
  cl->basis_groups = opt->basis_groups;
  cl->basis_row_groups = opt->basis_row_groups;
  return status;
}

void app_eig_options(const dsg_options *opt, eig_options *eo)
{
  eig_options_init(eo);
  eo->nev = opt->nev;
  eo->ncv = opt->ncv;
  eo->tol = app_tol(opt);
  eo->max_iter = opt->max_iter;
  eo->lanczos_unfused = opt->lanczos_unfused;
  eo->spectrum_radius = 1.0; /* N = D^-1/2 W D^-1/2, W >= 0: its spectrum lies in [-1, 1] */
}

static void say_opencl(const dsg_options *opt, const spmv_matvec *mv)
{
  const spmv_cl_info *info = spmv_matvec_cl_info(mv);
  if (info)
    app_log(opt, DSG_LOG_INFO, "matvec: OpenCL on %s (%s), kernel %s, local size %zu%s%s",
            info->device, info->platform, spmv_kernel_name(info->kernel), info->local_size,
            info->note[0] ? "; " : "", info->note);
}

static void log_build(const dsg_options *opt)
{
  const char *log = spmv_cl_build_log();
  if (log[0])
    app_log(opt, DSG_LOG_DETAIL, "--- OpenCL build log ---\n%s\n--- end of build log ---", log);
}

/* The OpenCL matvec for N, made ready for the solver when it will run (its kernels built and
 * its basis checked now, so that a device that cannot run it is found before the solve, and
 * with "auto" the C path takes over). *bad_options: the solver's options themselves are wrong,
 * which no other backend mends. */
static int create_opencl(const dsg_options *opt, const spmv_dia *N, const spmv_cl_options *cl,
                         const eig_solver *solver, spmv_matvec **mv, int *bad_options)
{
  int status = spmv_matvec_create_opencl(mv, N, cl);
  *bad_options = 0;
  if (status == DSG_OK && solver && solver->prepare) {
    eig_options eo;
    app_eig_options(opt, &eo);
    status = solver->prepare(*mv, &eo);
    if (status != DSG_OK) {
      *bad_options = status == DSG_ERR_INVALID;
      spmv_matvec_destroy(*mv);
      *mv = NULL;
    }
  }
  if (status != DSG_OK)
    log_build(opt);
  return status;
}

/* The backend table: "auto" is resolved below, the others are rows. */
static const char *const backends[] = {"auto", "cpu", "opencl"};

int app_backend_check(const char *name)
{
  for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
    if (name && strcmp(name, backends[i]) == 0)
      return DSG_OK;
  return dsg_error_set(DSG_ERR_INVALID, DSG_PARAM("matvec") " '%s' is not one of auto, cpu, opencl",
                       name ? name : "");
}

/* The device matvec "auto" takes with opt (*index in spmv_cl_devices' list): the one cl_device
 * names, else the first GPU; an error (its message set) when there is none. */
static int auto_device(const dsg_options *opt, int *index)
{
  spmv_cl_device *list = NULL;
  int count = 0;
  int status = spmv_cl_devices(&list, &count);
  if (status == DSG_OK)
    status = spmv_cl_pick(list, count, opt->cl_device, 1, index);
  free(list);
  return status;
}

int app_auto_has_gpu(const dsg_options *opt)
{
  int index = -1;
  const int status = auto_device(opt, &index);
  dsg_error_clear();
  return status == DSG_OK;
}

int app_image_device(const dsg_options *opt, spmv_cl_image **im)
{
  int status, index = -1;
  char spec[16];
  /* kernel_dir is the DIA and Lanczos kernels' (--kernel-dir): the image stages build their
   * built-in copies */
  const char *kdir = NULL;
  *im = NULL;
  if (!opt->matvec || strcmp(opt->matvec, "cpu") == 0)
    return DSG_OK;
  if (strcmp(opt->matvec, "opencl") == 0)
    return spmv_cl_image_create(im, opt->cl_device, kdir);
  /* auto: a named device, else the first GPU, else the C path */
  status = auto_device(opt, &index);
  if (status != DSG_OK) {
    if (opt->cl_device && *opt->cl_device)
      app_log(opt, DSG_LOG_INFO, "image stages: the C path (%s)", dsg_error_raw());
    return DSG_OK;
  }
  snprintf(spec, sizeof(spec), "%d", index);
  status = spmv_cl_image_create(im, spec, kdir);
  if (status != DSG_OK) {
    app_log(opt, DSG_LOG_WARNING,
            "the image stages cannot run on OpenCL (%s); they take the C path", dsg_error_raw());
    *im = NULL;
  }
  return DSG_OK;
}

int app_device_fall_back(spmv_cl_image **im, const dsg_options *opt, int *status, const char *what)
{
  if (*status == DSG_OK || *status == DSG_ERR_INTERRUPTED || *status == DSG_ERR_NOMEM ||
      strcmp(opt->matvec, "auto") != 0)
    return 0;
  app_log(opt, DSG_LOG_WARNING, "%s failed on OpenCL (%s); taking the C path", what,
          dsg_error_raw());
  spmv_cl_image_destroy(*im);
  *im = NULL;
  *status = DSG_OK;
  return 1;
}

/* The C path's matvec: N's values on the host first (read back where they stayed on the device). */
static int create_cpu(spmv_dia *N, spmv_matvec **mv)
{
  const int status = spmv_dia_host(N);
  return status == DSG_OK ? spmv_matvec_create_cpu(mv, N) : status;
}

int app_matvec_create(const dsg_options *opt, spmv_dia *N, const eig_solver *solver,
                      spmv_matvec **mv)
{
  spmv_cl_options cl;
  int status, bad_options, index = -1;
  char spec[16];

  *mv = NULL;
  status = app_backend_check(opt->matvec);
  if (status != DSG_OK)
    return status;
  if (strcmp(opt->matvec, "cpu") == 0)
    return create_cpu(N, mv);
  status = app_cl_options(opt, &cl);
  if (status != DSG_OK)
    return status;
  if (strcmp(opt->matvec, "opencl") == 0) {
    status = create_opencl(opt, N, &cl, solver, mv, &bad_options);
    if (status == DSG_OK)
      say_opencl(opt, *mv);
    return status;
  }
  /* auto: a named device, else the first GPU, else the C path */
  status = auto_device(opt, &index);
  if (status != DSG_OK) {
    app_log(opt, DSG_LOG_INFO, "matvec: the C path (%s)", dsg_error_raw());
    return create_cpu(N, mv);
  }
  snprintf(spec, sizeof(spec), "%d", index);
  cl.device = spec;
  status = create_opencl(opt, N, &cl, solver, mv, &bad_options);
  if (status != DSG_OK && bad_options)
    return status;
  if (status != DSG_OK) { /* the C path only where it holds the problem */
    const int w = N->width > 0 ? N->width : N->rows;
    status = app_memory_fallback(opt, w, N->rows / w, status, "the OpenCL path failed");
    return status == DSG_OK ? create_cpu(N, mv) : status;
  }
  say_opencl(opt, *mv);
  return DSG_OK;
}
