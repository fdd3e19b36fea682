/* What a run needs in memory, from the sizes alone and before any work: the host's bytes, and on
 * the OpenCL path the device's, against what there is. A run that cannot fit stops before it
 * starts and says what size would (dsg_check_memory); "auto" takes the C path only where the C
 * path holds the problem; a device that runs out part-way is answered with the same figure.
 *
 * The model is linear in the pixels (docs/PIPELINE.md, "Memory"):
 *   host   = MEM_HOST_BASE + MEM_HOST_PER_INPUT x (the image's pixels)
 *            + (4 ndiag + 4 host_columns + MEM_HOST_PER_WORK) x (the working pixels)
 *   device = (4 ndiag + 4 device_columns + MEM_DEVICE_PER_WORK) x (the working pixels)
 * ndiag is the disc's offsets (81 at radius 5): the matrix N, one float per offset and pixel, on
 * the host (built there, or read back from the device's affinity) and on the device (one buffer,
 * which must also fit the device's largest allocation). The columns are the solver's vectors of
 * one float per pixel, a row of `solvers` below, where they live on that backend. The constants
 * are peak RSS slopes measured on the 2-core machine with the default options (coffee.png at
 * 481x321 and 962x642 at full resolution, both cues' buffers and the outputs included; a 33.5 and
 * a 134 megapixel photo at the default working size for MEM_HOST_PER_INPUT), rounded up; the
 * device's are the buffers the OpenCL modules allocate (spmv/opencl/cl_basis.c, cl_block.c). */
#include "diaseg_internal.h"

#include <limits.h>
#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MEM_HOST_BASE (32.0 * 1024 * 1024) /* the program, its libraries, the OpenCL runtime */
#define MEM_HOST_PER_INPUT 18.0  /* the image, its labels, contours and pictures at its size */
#define MEM_HOST_PER_WORK 200.0  /* features, degrees, vectors, hierarchy at the working size */
#define MEM_DEVICE_PER_WORK 32.0 /* x, y, w, the known vectors' labels and values, degrees */
#define MEM_DEVICE_DENSE_KNOWN 8 /* Lanczos keeps up to 8 known vectors as dense columns */
#define MEM_MARGIN 1.10          /* on the variable part: what the measurements did not see */

/* The solvers' vectors in floats per pixel for ncv (Lanczos, ARPACK) or block size b (chfsi). */
typedef struct mem_solver {
  const char *name;
  int host_c_per_col, host_c_extra;   /* C path, on the host: columns x ncv (or b) + extra */
  int host_cl_per_col, host_cl_extra; /* OpenCL path, on the host */
  int dev_per_col, dev_extra;         /* OpenCL path, on the device */
} mem_solver;

static const mem_solver solvers[] = {
    /* the basis V (ncv + 1 columns) and, on the device, its rotation's copy */
    {"lanczos", 1, 1, 0, 0, 2, 2 + MEM_DEVICE_DENSE_KNOWN},
    /* three slots of b columns (X, AX, Y); the Ritz block comes back to the host */
    {"chfsi", 3, 0, 1, 0, 3, 0},
    /* ARPACK's workd and V in double on the host whatever the backend; x and y on the device */
    {"arpack", 2, 3, 2, 3, 0, 2},
};

static const mem_solver *solver_row(const char *name)
{
  for (size_t i = 0; i < sizeof(solvers) / sizeof(solvers[0]); i++)
    if (name && strcmp(name, solvers[i].name) == 0)
      return &solvers[i];
  return &solvers[0];
}

/* The solver's column count: ncv for Lanczos and ARPACK, the block size for chfsi. */
static int columns(const dsg_options *opt, const mem_solver *s, long long n)
{
  const int cap = n < INT_MAX ? (int)n : INT_MAX;
  if (strcmp(s->name, "chfsi") == 0)
    return opt->ncv > 0 ? opt->ncv : eig_chfsi_block_size(opt->nev, cap, 0);
  return opt->ncv > 0 ? opt->ncv : eig_default_ncv(opt->nev, cap);
}

/* The disc's offsets: the matrix's floats per pixel (radius 5 where opt has none yet). */
static double disc_of(const dsg_options *opt)
{
  return app_disc_size(opt->radius > 0 ? opt->radius : 5);
}

/* The host's bytes for `input` image pixels and n working pixels whose solver keeps `floats`
 * floats a pixel besides the matrix. */
static double host_bytes(const dsg_options *opt, double input, double n, double floats)
{
  return MEM_HOST_BASE + MEM_MARGIN * (MEM_HOST_PER_INPUT * input +
                                       (4.0 * disc_of(opt) + 4.0 * floats + MEM_HOST_PER_WORK) * n);
}

void dsg_memory_need(const dsg_options *opt, int width, int height, dsg_memory *m)
{
  int w = width > 0 ? width : 0, h = height > 0 ? height : 0;
  memset(m, 0, sizeof(*m));
  if (w > 0 && h > 0)
    app_work_size(w, h, opt->work_pixels, &w, &h);
  const mem_solver *s = solver_row(app_solver_at(opt, w, h));
  const double input = (double)(width > 0 ? width : 0) * (double)(height > 0 ? height : 0);
  const double n = (double)w * (double)h;
  const double cols = columns(opt, s, (long long)n);
  const double matrix = 4.0 * disc_of(opt) * n;
  /* Lanczos' basis is one buffer of ncv + 1 columns and the dense known vectors */
  const double basis =
      strcmp(s->name, "lanczos") == 0 ? 4.0 * (cols + 1 + MEM_DEVICE_DENSE_KNOWN) * n : 0.0;
  /* chfsi's coarse start: its block, lifted to the working size, stays on the host until the
   * solve ends, whatever the backend */
  const double start = strcmp(s->name, "chfsi") == 0 && opt->coarse_start ? cols : 0.0;
  m->work_pixels = (long long)n;
  m->host_cpu = host_bytes(opt, input, n, s->host_c_per_col * cols + s->host_c_extra + start);
  m->host_opencl = host_bytes(opt, input, n, s->host_cl_per_col * cols + s->host_cl_extra + start);
  m->device = MEM_MARGIN *
              (matrix + (4.0 * (s->dev_per_col * cols + s->dev_extra) + MEM_DEVICE_PER_WORK) * n);
  m->device_buffer = basis > matrix ? basis : matrix;
  m->affinity = host_bytes(opt, input, input, 0.0); /* N at the image's own size */
}

double dsg_estimate_bytes(const dsg_options *opt, int width, int height)
{
  dsg_memory m;
  dsg_memory_need(opt, width, height, &m);
  return m.host_cpu;
}

/* A file's first number; -1 when it cannot be read or holds none (cgroup v2's "max" included). */
static double read_number(const char *dir, const char *name)
{
  char path[4096 + 64]; /* dir (at most 4095) and a file name */
  unsigned long long v;
  double out = -1.0;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  if (!f)
    return -1.0;
  if (fscanf(f, "%llu", &v) == 1)
    out = (double)v;
  fclose(f);
  return out;
}

/* The least room (limit - usage) over the cgroup folder dir and its ancestors down to root. */
static double least_room(const char *root, const char *cgroup, const char *limit_file,
                         const char *usage_file)
{
  char dir[4096];
  double least = 0.0;
  snprintf(dir, sizeof(dir), "%s%s", root, cgroup);
  for (;;) {
    const double limit = read_number(dir, limit_file), usage = read_number(dir, usage_file);
    /* v1 writes "no limit" as a page-rounded 2^63 - 1 */
    if (limit > 0.0 && limit < 0x1p62 && usage >= 0.0) {
      const double room = limit > usage ? limit - usage : 1.0;
      least = least > 0.0 && least < room ? least : room;
    }
    char *slash = strrchr(dir, '/');
    if (!slash || (size_t)(slash - dir) < strlen(root))
      break;
    *slash = '\0';
  }
  return least;
}

double app_memory_cgroup_room(const char *proc_cgroup, const char *sys_root)
{
  char line[4096], root[4096];
  double room = 0.0;
  FILE *f = fopen(proc_cgroup, "r");
  if (!f)
    return 0.0;
  while (fgets(line, sizeof(line), f)) {
    line[strcspn(line, "\n")] = '\0';
    char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
    if (!c2)
      continue;
    *c1 = '\0';
    *c2 = '\0';
    const char *controllers = c1 + 1, *path = c2 + 1;
    double r = 0.0;
    if (strcmp(line, "0") == 0 && !*controllers) { /* v2: one hierarchy */
      snprintf(root, sizeof(root), "%s", sys_root);
      r = least_room(root, strcmp(path, "/") == 0 ? "" : path, "memory.max", "memory.current");
    } else if (strstr(controllers, "memory")) { /* v1: the memory controller's hierarchy */
      snprintf(root, sizeof(root), "%s/memory", sys_root);
      r = least_room(root, strcmp(path, "/") == 0 ? "" : path, "memory.limit_in_bytes",
                     "memory.usage_in_bytes");
    }
    if (r > 0.0 && (room <= 0.0 || r < room))
      room = r;
  }
  fclose(f);
  return room;
}

/* The host's memory a run may take: MemAvailable (free memory plus what the kernel can reclaim),
 * else the free pages; no more than the process's cgroup (a container's limit) leaves; opt->
 * max_memory caps it. 0 when none is known and there is no cap. */
static double host_available(const dsg_options *opt)
{
  double avail = 0.0;
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    unsigned long long kb;
    while (fgets(line, sizeof(line), f))
      if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
        avail = (double)kb * 1024.0;
        break;
      }
    fclose(f);
  }
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
  if (avail <= 0.0) {
    const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
      avail = (double)pages * (double)page;
  }
#endif
  const double room = app_memory_cgroup_room("/proc/self/cgroup", "/sys/fs/cgroup");
  if (room > 0.0 && (avail <= 0.0 || room < avail))
    avail = room;
  if (opt->max_memory > 0 && (avail <= 0.0 || (double)opt->max_memory < avail))
    avail = (double)opt->max_memory;
  return avail;
}

/* The largest pixel count p whose need(p) <= cap, need increasing in p: a bisection on the
 * image's size at its aspect (what a smaller --max-side or --resize gives). full: the working
 * size follows the image (work_pixels 0, or the image within it); else the image shrinks and the
 * working size with it once it is under work_pixels. */
/* One figure of dsg_memory_need's, by its offset in dsg_memory (offsetof(dsg_memory, device)). */
static double need_of(const dsg_options *opt, int w, int h, size_t field)
{
  dsg_memory m;
  double v;
  dsg_memory_need(opt, w, h, &m);
  memcpy(&v, (const char *)&m + field, sizeof(v));
  return v;
}

/* The longest side s (the image scaled to s on its longer side) whose figure `field` is <= cap;
 * 0: none. */
static int fit_side(const dsg_options *opt, int width, int height, size_t field, double cap)
{
  const int longest = width > height ? width : height;
  int lo = 0, hi = longest;
  while (lo < hi) {
    const int mid = lo + (hi - lo + 1) / 2;
    const double f = (double)mid / longest;
    int w = (int)lround(width * f), h = (int)lround(height * f);
    w = w < 1 ? 1 : w;
    h = h < 1 ? 1 : h;
    if (need_of(opt, w, h, field) <= cap)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

static const char *size_text(double bytes, char *buf, size_t cap)
{
  if (bytes >= 1024.0 * 1024.0 * 1024.0)
    snprintf(buf, cap, "%.1f GiB", bytes / (1024.0 * 1024.0 * 1024.0));
  else if (bytes >= 1024.0 * 1024.0)
    snprintf(buf, cap, "%.0f MiB", bytes / (1024.0 * 1024.0));
  else if (bytes >= 1024.0)
    snprintf(buf, cap, "%.0f KiB", bytes / 1024.0);
  else
    snprintf(buf, cap, "%.0f bytes", bytes);
  return buf;
}

/* "at most about W x H fits", the image's largest size at its aspect with fn <= cap, and where the
 * working size is what does not fit, the working size that does. */
static void say_fit(const dsg_options *opt, int width, int height, size_t field, double cap,
                    char *buf, size_t bufcap)
{
  const int side = fit_side(opt, width, height, field, cap);
  const int longest = width > height ? width : height;
  if (side < 2) {
    snprintf(buf, bufcap, "no image of this shape fits");
    return;
  }
  const double f = (double)side / longest;
  const int w = (int)lround(width * f), h = (int)lround(height * f);
  if (opt->work_pixels == 0 || (long long)w * h < opt->work_pixels)
    snprintf(buf, bufcap,
             "at most about %d x %d fits (the image scaled down to it, or " DSG_PARAM(
                 "work_pixels") " %lld)",
             w, h, (long long)w * h);
  else
    snprintf(buf, bufcap, "at most about %d x %d fits (the image scaled down to it)", w, h);
}

/* The device a run with opt takes, or -1 (the C path). Never an error: the run itself reports a
 * device that cannot be opened. */
static int run_device(const dsg_options *opt, spmv_cl_device *dev)
{
  spmv_cl_device *list = NULL;
  int count = 0, index = -1, found = 0;
  if (!opt->matvec || strcmp(opt->matvec, "cpu") == 0)
    return 0;
  char saved[1024];
  snprintf(saved, sizeof(saved), "%s", dsg_error_raw()); /* listing is not an error here */
  if (spmv_cl_devices(&list, &count) == DSG_OK &&
      spmv_cl_pick(list, count, opt->cl_device, strcmp(opt->matvec, "auto") == 0, &index) ==
          DSG_OK) {
    *dev = list[index];
    if (opt->cl_max_mem && opt->cl_max_mem < dev->global_mem)
      dev->global_mem = opt->cl_max_mem;
    if (opt->cl_max_alloc && opt->cl_max_alloc < dev->max_alloc)
      dev->max_alloc = opt->cl_max_alloc;
    found = 1;
  }
  free(list);
  if (saved[0])
    dsg_error_set(DSG_OK, "%s", saved);
  else
    dsg_error_clear();
  return found;
}

/* The device's part: DSG_OK when the problem fits dev, else DSG_ERR_LIMIT saying what would. */
static int check_device(const dsg_options *opt, int width, int height, const spmv_cl_device *dev)
{
  dsg_memory m;
  char need[32], have[32], fit[200];
  dsg_memory_need(opt, width, height, &m);
  if (m.device_buffer > (double)dev->max_alloc) {
    say_fit(opt, width, height, offsetof(dsg_memory, device_buffer), (double)dev->max_alloc, fit,
            sizeof(fit));
    return dsg_error_set(
        DSG_ERR_LIMIT,
        "a %d x %d image (solved at %lld pixels) needs one device buffer of %s "
        "for %s, over %s's largest allocation of %s%s: %s",
        width, height, m.work_pixels, size_text(m.device_buffer, need, sizeof(need)),
        m.device_buffer > 4.0 * disc_of(opt) * (double)m.work_pixels ? "the Lanczos basis"
                                                                     : "the matrix",
        dev->name, size_text((double)dev->max_alloc, have, sizeof(have)),
        opt->cl_max_alloc ? " (the " DSG_PARAM("cl_max_alloc") " cap)" : "", fit);
  }
  if (m.device > (double)dev->global_mem) {
    say_fit(opt, width, height, offsetof(dsg_memory, device), (double)dev->global_mem, fit,
            sizeof(fit));
    return dsg_error_set(DSG_ERR_LIMIT,
                         "a %d x %d image (solved at %lld pixels) needs about %s of device memory, "
                         "over %s's %s%s: %s",
                         width, height, m.work_pixels, size_text(m.device, need, sizeof(need)),
                         dev->name, size_text((double)dev->global_mem, have, sizeof(have)),
                         opt->cl_max_mem ? " (the " DSG_PARAM("cl_max_mem") " cap)" : "", fit);
  }
  return DSG_OK;
}

/* The host's part for one backend (opencl: the host side of the OpenCL path). */
static int check_host(const dsg_options *opt, int width, int height, int opencl)
{
  dsg_memory m;
  char need[32], have[32], fit[200];
  const double avail = host_available(opt);
  dsg_memory_need(opt, width, height, &m);
  const double bytes = opencl ? m.host_opencl : m.host_cpu;
  if (avail <= 0.0 || bytes <= avail)
    return DSG_OK;
  say_fit(opt, width, height,
          opencl ? offsetof(dsg_memory, host_opencl) : offsetof(dsg_memory, host_cpu), avail, fit,
          sizeof(fit));
  return dsg_error_set(DSG_ERR_LIMIT,
                       "a %d x %d image (solved at %lld pixels on the %s) needs about %s of host "
                       "memory, over the %s%s: %s",
                       width, height, m.work_pixels, opencl ? "OpenCL path" : "C path",
                       size_text(bytes, need, sizeof(need)), size_text(avail, have, sizeof(have)),
                       opt->max_memory ? " cap of " DSG_PARAM("max_memory") : " available", fit);
}

int app_memory_plan(const dsg_options *opt, int width, int height, int *use_cpu)
{
  spmv_cl_device dev;
  int status;
  *use_cpu = 0;
  if (!run_device(opt, &dev)) /* the C path; "opencl" without its device: the run says so */
    return opt->matvec && strcmp(opt->matvec, "opencl") == 0 ? DSG_OK
                                                             : check_host(opt, width, height, 0);
  status = check_device(opt, width, height, &dev);
  if (status == DSG_OK)
    return check_host(opt, width, height, 1);
  if (strcmp(opt->matvec, "auto") != 0)
    return status;
  status = app_memory_fallback(opt, width, height, status, NULL); /* auto: the C path, if it fits */
  *use_cpu = status == DSG_OK;
  return status;
}

int app_memory_fallback(const dsg_options *opt, int width, int height, int status,
                        const char *failed)
{
  char device_msg[1024];
  snprintf(device_msg, sizeof(device_msg), "%s", dsg_error_raw());
  if (check_host(opt, width, height, 0) != DSG_OK) {
    char host_msg[1024];
    snprintf(host_msg, sizeof(host_msg), "%s", dsg_error_raw());
    return dsg_error_set(status, "%s; nor does the C path: %s", device_msg, host_msg);
  }
  if (failed)
    app_log(opt, DSG_LOG_WARNING, "%s (%s); falling back to the C path", failed, device_msg);
  else
    app_log(opt, DSG_LOG_WARNING, "%s; falling back to the C path", device_msg);
  dsg_error_clear();
  return DSG_OK;
}

int app_memory_check_affinity(const dsg_options *opt, int width, int height)
{
  char need[32], have[32], fit[200];
  const double avail = host_available(opt),
               bytes = need_of(opt, width, height, offsetof(dsg_memory, affinity));
  if (avail <= 0.0 || bytes <= avail)
    return DSG_OK;
  const int side = fit_side(opt, width, height, offsetof(dsg_memory, affinity), avail);
  const int longest = width > height ? width : height;
  snprintf(fit, sizeof(fit), "at most about %d x %d fits (the image scaled down to it)",
           (int)lround((double)width * side / longest),
           (int)lround((double)height * side / longest));
  return dsg_error_set(DSG_ERR_LIMIT,
                       "the affinity of a %d x %d image needs about %s of host memory, over the "
                       "%s%s: %s",
                       width, height, size_text(bytes, need, sizeof(need)),
                       size_text(avail, have, sizeof(have)),
                       opt->max_memory ? " cap of " DSG_PARAM("max_memory") : " available",
                       side < 2 ? "no image of this shape fits" : fit);
}

int dsg_check_memory(const dsg_options *opt, int width, int height)
{
  int use_cpu;
  return app_memory_plan(opt, width, height, &use_cpu);
}

int app_memory_explain(const dsg_options *opt, int width, int height, int status)
{
  spmv_cl_device dev;
  dsg_memory m;
  char msg[1024], fit[200], have[32], need[32];
  if (status != DSG_ERR_LIMIT || !run_device(opt, &dev))
    return status;
  snprintf(msg, sizeof(msg), "%s", dsg_error_raw());
  dsg_memory_need(opt, width, height, &m);
  if (m.device <= (double)dev.global_mem && m.device_buffer <= (double)dev.max_alloc)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "%s (the run needs about %s of %s's %s: other programs hold the rest; "
                         "it fits once they release it)",
                         msg, size_text(m.device, need, sizeof(need)), dev.name,
                         size_text((double)dev.global_mem, have, sizeof(have)));
  say_fit(opt, width, height, offsetof(dsg_memory, device), (double)dev.global_mem, fit,
          sizeof(fit));
  return dsg_error_set(DSG_ERR_LIMIT, "%s (with all of %s's %s free, %s)", msg, dev.name,
                       size_text((double)dev.global_mem, have, sizeof(have)), fit);
}
