/* The memory model and check (app/lib/memory.c): dsg_memory_need against the model's formula
 * worked by hand, its growth with the image and the working size; dsg_check_memory refusing a
 * run over the host cap and over a device's (capped) memory or largest allocation, saying a size
 * that does fit; "auto" taking the C path where the device is too small and the host is not, and
 * refusing where neither holds the problem; dsg_segment refusing before any work; a device that
 * runs out part-way answered with the size that fits (app_memory_explain). */
#include "diaseg_internal.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The model's constants, as app/lib/memory.c documents them. */
#define MIB (1024.0 * 1024.0)
static double host_cpu_lanczos(double input, double n, int ncv)
{
  return 32.0 * MIB + 1.10 * (18.0 * input + (4.0 * 81 + 4.0 * (ncv + 1) + 200.0) * n);
}

/* "at most about W x H fits": the W and H of the message; 0 when absent. */
static int fit_of(const char *msg, int *w, int *h)
{
  const char *p = strstr(msg, "at most about ");
  return p && sscanf(p, "at most about %d x %d fits", w, h) == 2;
}

/* A gray ramp with a bright square, w x h. */
static dsg_image picture(int w, int h)
{
  dsg_image img;
  dsg_image_from_pixels(&img, w, h, 1, NULL);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      img.pixels[(size_t)y * w + x] =
          (unsigned char)(x > w / 3 && x < 2 * w / 3 && y > h / 3 && y < 2 * h / 3 ? 220 : 2 * x);
  return img;
}

static void test_model(void)
{
  dsg_options opt;
  dsg_memory m, m2;
  dsg_options_init(&opt);
  opt.solver = "lanczos"; /* the model's rows for lanczos at nev 8, then chfsi's */
  opt.nev = 8;
  opt.work_pixels = 0; /* full resolution: the working size is the image */
  dsg_memory_need(&opt, 481, 321, &m);
  const double n = 481.0 * 321.0;
  CHECK(m.work_pixels == 481 * 321, "work pixels %lld", m.work_pixels);
  CHECK(CLOSE(m.host_cpu, host_cpu_lanczos(n, n, 32), 1e-12, 0), "host_cpu %.0f, expected %.0f",
        m.host_cpu, host_cpu_lanczos(n, n, 32));
  /* the device: the matrix, the basis twice, 8 known columns, 2 more, 32 bytes */
  CHECK(CLOSE(m.device, 1.10 * (324.0 + 4.0 * (2 * 32 + 10) + 32.0) * n, 1e-12, 0), "device %.0f",
        m.device);
  CHECK(CLOSE(m.device_buffer, 324.0 * n, 1e-12, 0), "the largest buffer is the matrix: %.0f",
        m.device_buffer);
  CHECK(m.host_opencl < m.host_cpu, "the OpenCL path's host part %.0f >= the C path's %.0f",
        m.host_opencl, m.host_cpu);
  CHECK(dsg_estimate_bytes(&opt, 481, 321) == m.host_cpu, "dsg_estimate_bytes is host_cpu");

  /* a larger ncv: a larger basis; chfsi: three slots of the block */
  opt.ncv = 64;
  dsg_memory_need(&opt, 481, 321, &m2);
  CHECK(CLOSE(m2.host_cpu - m.host_cpu, 1.10 * 4.0 * 32 * n, 1e-9, 0), "ncv 64: +%.0f bytes",
        m2.host_cpu - m.host_cpu);
  opt.ncv = 400; /* the basis outgrows the matrix as the largest buffer */
  dsg_memory_need(&opt, 481, 321, &m2);
  CHECK(CLOSE(m2.device_buffer, 4.0 * 409 * n, 1e-12, 0), "ncv 400: buffer %.0f", m2.device_buffer);
  opt.ncv = 0;
  opt.solver = "chfsi";
  dsg_memory_need(&opt, 481, 321, &m2);
  CHECK(CLOSE(m2.device, 1.10 * (324.0 + 4.0 * 3 * 16 + 32.0) * n, 1e-12, 0), "chfsi device %.0f",
        m2.device);
  opt.solver = "lanczos";

  /* the working size: a 12 MP photo is solved at about DSG_WORK_PIXELS, its outputs at 12 MP */
  dsg_options_init(&opt);
  opt.solver = "lanczos";
  opt.nev = 8;
  dsg_memory_need(&opt, 4000, 3000, &m);
  CHECK(m.work_pixels <= DSG_WORK_PIXELS && m.work_pixels > DSG_WORK_PIXELS * 0.98,
        "work pixels %lld", m.work_pixels);
  CHECK(CLOSE(m.host_cpu, host_cpu_lanczos(12e6, (double)m.work_pixels, 32), 1e-12, 0),
        "12 MP host %.0f", m.host_cpu);
  dsg_memory_need(&opt, 8000, 6000, &m2);
  CHECK(m2.work_pixels == m.work_pixels || abs((int)(m2.work_pixels - m.work_pixels)) < 1000,
        "the working size follows the cap, not the image: %lld, %lld", m.work_pixels,
        m2.work_pixels);
  CHECK(CLOSE(m2.host_cpu - m.host_cpu, 1.10 * 18.0 * 36e6, 0.01, 0),
        "36 MP more: +%.0f host bytes", m2.host_cpu - m.host_cpu);
  CHECK(CLOSE(m2.device, m.device, 0.01, 0), "the device holds the working size: %.0f, %.0f",
        m.device, m2.device);
  /* the radius: the matrix's diagonals */
  opt.radius = 10;
  dsg_memory_need(&opt, 4000, 3000, &m2);
  CHECK(CLOSE(m2.device_buffer, 4.0 * app_disc_size(10) * m2.work_pixels, 1e-12, 0),
        "radius 10: %.0f", m2.device_buffer);
}

static void test_host_cap(void)
{
  dsg_options opt;
  dsg_memory m;
  int w, h;
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  opt.work_pixels = 0;
  CHECK(dsg_check_memory(&opt, 481, 321) == DSG_OK, "481 x 321 does not fit this machine: %s",
        dsg_error_message());
  dsg_memory_need(&opt, 481, 321, &m);
  opt.max_memory = (unsigned long long)(m.host_cpu * 0.6);
  CHECK(dsg_check_memory(&opt, 481, 321) == DSG_ERR_LIMIT &&
            strstr(dsg_error_message(), "host memory") && strstr(dsg_error_message(), "max_memory"),
        "over the cap: %s", dsg_error_message());
  /* the size it names fits, and a little more does not */
  CHECK(fit_of(dsg_error_message(), &w, &h) && w < 481 && h < 321, "fit: %s", dsg_error_message());
  dsg_memory_need(&opt, w, h, &m);
  CHECK(m.host_cpu <= (double)opt.max_memory, "%d x %d needs %.0f > the cap %llu", w, h, m.host_cpu,
        opt.max_memory);
  dsg_memory_need(&opt, w + 3, h + 2, &m);
  CHECK(m.host_cpu > (double)opt.max_memory, "%d x %d is not the largest that fits", w, h);
  CHECK(strstr(dsg_error_message(), "work_pixels"), "the working size is what does not fit: %s",
        dsg_error_message());
  opt.max_memory = 1ull << 50;
  CHECK(dsg_check_memory(&opt, 481, 321) == DSG_OK, "a cap over what is available: %s",
        dsg_error_message());
  /* a working-size run whose image's own outputs do not fit: no working-size hint */
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  dsg_memory_need(&opt, 16000, 12000, &m);
  opt.max_memory = (unsigned long long)(m.host_cpu * 0.5);
  CHECK(dsg_check_memory(&opt, 16000, 12000) == DSG_ERR_LIMIT &&
            fit_of(dsg_error_message(), &w, &h) && w < 16000 && w > 8000 &&
            !strstr(dsg_error_message(), "work_pixels"),
        "16000 x 12000 over half its need: %s", dsg_error_message());

  /* dsg_affinity: N at the image's own size, checked before it is built */
  {
    dsg_options_init(&opt);
    dsg_image big = picture(200, 150);
    dsg_matrix *N = NULL;
    const double need = 32.0 * MIB + 1.10 * (18.0 + 324.0 + 200.0) * 200.0 * 150.0;
    opt.max_memory = (unsigned long long)(need * 0.9);
    CHECK(dsg_affinity(&big, &opt, &N) == DSG_ERR_LIMIT && !N &&
              strstr(dsg_error_message(), "the affinity of a 200 x 150 image") &&
              fit_of(dsg_error_message(), &w, &h) && w < 200 && w > 150,
          "dsg_affinity over max_memory: %s", dsg_error_message());
    opt.max_memory = (unsigned long long)(need * 1.01);
    CHECK(dsg_affinity(&big, &opt, &N) == DSG_OK && N, "dsg_affinity within max_memory: %s",
          dsg_error_message());
    dsg_matrix_destroy(N);
    dsg_image_free(&big);
  }

  /* dsg_segment checks before any work */
  dsg_image img = picture(64, 48);
  dsg_result *r = NULL;
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  opt.max_memory = 1000;
  CHECK(dsg_segment(&img, &opt, &r) == DSG_ERR_LIMIT && !r &&
            strstr(dsg_error_message(), "host memory"),
        "dsg_segment over max_memory: %s", dsg_error_message());
  dsg_image_free(&img);
}

static void test_device(void)
{
  dsg_device *list = NULL;
  int count = 0, w, h;
  if (dsg_devices(&list, &count) != DSG_OK || count < 1) {
    printf("test_memory: no OpenCL device, the device checks are skipped\n");
    dsg_error_clear();
    return;
  }
  char spec[16];
  snprintf(spec, sizeof(spec), "%d", list[0].index);
  dsg_options opt;
  dsg_memory m;
  dsg_options_init(&opt);
  opt.matvec = "opencl";
  opt.cl_device = spec;
  opt.work_pixels = 0;
  dsg_memory_need(&opt, 481, 321, &m);
  opt.cl_max_mem = (unsigned long long)(m.device * 0.5);
  CHECK(dsg_check_memory(&opt, 481, 321) == DSG_ERR_LIMIT &&
            strstr(dsg_error_message(), "device memory") &&
            strstr(dsg_error_message(), "cl_max_mem") && strstr(dsg_error_message(), list[0].name),
        "over the device's memory: %s", dsg_error_message());
  CHECK(fit_of(dsg_error_message(), &w, &h), "no fit: %s", dsg_error_message());
  dsg_memory_need(&opt, w, h, &m);
  CHECK(m.device <= (double)opt.cl_max_mem, "%d x %d needs %.0f on the device", w, h, m.device);
  opt.cl_max_mem = 0;
  opt.cl_max_alloc = (unsigned long long)(m.device_buffer * 0.5);
  CHECK(dsg_check_memory(&opt, w, h) == DSG_ERR_LIMIT &&
            strstr(dsg_error_message(), "largest allocation") &&
            strstr(dsg_error_message(), "the matrix"),
        "over the largest allocation: %s", dsg_error_message());
  opt.cl_max_alloc = 0;

  /* auto, a device too small: the C path where it fits (the run's report says cpu), else both
   * refusals */
  dsg_image img = picture(64, 48);
  dsg_result *r = NULL;
  opt.matvec = "auto";
  dsg_memory_need(&opt, 64, 48, &m);
  opt.cl_max_mem = (unsigned long long)(m.device * 0.5);
  opt.nev = 4;
  opt.k = 3;
  CHECK(dsg_check_memory(&opt, 64, 48) == DSG_OK, "auto with room on the host: %s",
        dsg_error_message());
  CHECK(dsg_segment(&img, &opt, &r) == DSG_OK && r, "auto falls back: %s", dsg_error_message());
  if (r) {
    char *json = NULL;
    size_t len = 0;
    CHECK(dsg_result_report(r, NULL, &json, &len) == DSG_OK && json &&
              strstr(json, "\"matvec_backend\": \"cpu\""),
          "auto's report: %.300s", json ? json : "(none)");
    free(json);
    dsg_result_destroy(r);
    r = NULL;
  }
  opt.max_memory = 1000;
  CHECK(dsg_segment(&img, &opt, &r) == DSG_ERR_LIMIT && !r &&
            strstr(dsg_error_message(), "device memory") &&
            strstr(dsg_error_message(), "nor does the C path") &&
            strstr(dsg_error_message(), "host memory"),
        "neither fits: %s", dsg_error_message());
  dsg_image_free(&img);

  /* a device that ran out part-way: the size that fits the whole device */
  dsg_options_init(&opt);
  opt.matvec = "opencl";
  opt.cl_device = spec;
  dsg_error_set(DSG_ERR_LIMIT, "allocating the matrix failed: CL_MEM_OBJECT_ALLOCATION_FAILURE");
  CHECK(app_memory_explain(&opt, 4000, 3000, DSG_ERR_LIMIT) == DSG_ERR_LIMIT &&
            strstr(dsg_error_message(), "CL_MEM_OBJECT_ALLOCATION_FAILURE") &&
            strstr(dsg_error_message(), "other programs hold the rest"),
        "part-way, a run the device holds: %s", dsg_error_message());
  dsg_memory_need(&opt, 4000, 3000, &m);
  opt.cl_max_mem = (unsigned long long)(m.device / 2);
  dsg_error_set(DSG_ERR_LIMIT, "allocating the matrix failed: CL_MEM_OBJECT_ALLOCATION_FAILURE");
  CHECK(app_memory_explain(&opt, 4000, 3000, DSG_ERR_LIMIT) == DSG_ERR_LIMIT &&
            strstr(dsg_error_message(), "CL_MEM_OBJECT_ALLOCATION_FAILURE") &&
            strstr(dsg_error_message(), "with all of") && fit_of(dsg_error_message(), &w, &h) &&
            w < 4000 && h < 3000,
        "part-way, a run too large for the device: %s", dsg_error_message());
  opt.cl_max_mem = 0;
  dsg_error_set(DSG_ERR_IO, "not a memory error");
  CHECK(app_memory_explain(&opt, 4000, 3000, DSG_ERR_IO) == DSG_ERR_IO &&
            strcmp(dsg_error_raw(), "not a memory error") == 0,
        "another error changed: %s", dsg_error_message());
  opt.matvec = "cpu";
  dsg_error_set(DSG_ERR_LIMIT, "a C path limit");
  CHECK(app_memory_explain(&opt, 4000, 3000, DSG_ERR_LIMIT) == DSG_ERR_LIMIT &&
            strcmp(dsg_error_raw(), "a C path limit") == 0,
        "the C path's limit changed: %s", dsg_error_message());
  free(list);
}

/* root/rel := text (a file), or root/rel a folder when text is NULL */
static void put(const char *root, const char *rel, const char *text)
{
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", root, rel);
  if (!text) {
    mkdir(path, 0700);
    return;
  }
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* app_memory_cgroup_room on fake trees: v2 (memory.max, memory.current, "max" = none), v1 (the
 * memory controller's limit and usage, 2^63 - 1 rounded = none), the least over the ancestors. */
static void test_cgroup(void)
{
  char tmpl[] = "/tmp/diaseg-cgroup-XXXXXX", sys[512], proc[512];
  const char *root = mkdtemp(tmpl);
  CHECK(root != NULL, "mkdtemp");
  if (!root)
    return;
  snprintf(proc, sizeof(proc), "%s/cgroup", root);
  snprintf(sys, sizeof(sys), "%s/sys", root);
  /* v2: /a/b with 3 GiB max and 1 GiB used under /a with 10 GiB max and 9.5 GiB used */
  put(root, "sys", NULL);
  put(root, "sys/a", NULL);
  put(root, "sys/a/b", NULL);
  put(root, "sys/a/b/memory.max", "3221225472\n");
  put(root, "sys/a/b/memory.current", "1073741824\n");
  put(root, "sys/a/memory.max", "10737418240\n");
  put(root, "sys/a/memory.current", "10200547328\n");
  put(root, "cgroup", "0::/a/b\n");
  CHECK(app_memory_cgroup_room(proc, sys) == 10737418240.0 - 10200547328.0,
        "v2, the parent's room is the least: %.0f", app_memory_cgroup_room(proc, sys));
  put(root, "sys/a/memory.max", "max\n");
  CHECK(app_memory_cgroup_room(proc, sys) == 2147483648.0, "v2, the child's: %.0f",
        app_memory_cgroup_room(proc, sys));
  put(root, "sys/a/b/memory.max", "max\n");
  CHECK(app_memory_cgroup_room(proc, sys) == 0.0, "v2, no limit: %.0f",
        app_memory_cgroup_room(proc, sys));
  /* v1: the memory controller at sys/memory/c, 512 MiB limit, 100 MiB used; "no limit" above */
  put(root, "sys/memory", NULL);
  put(root, "sys/memory/c", NULL);
  put(root, "sys/memory/c/memory.limit_in_bytes", "536870912\n");
  put(root, "sys/memory/c/memory.usage_in_bytes", "104857600\n");
  put(root, "sys/memory/memory.limit_in_bytes", "9223372036854771712\n");
  put(root, "sys/memory/memory.usage_in_bytes", "5000000000\n");
  put(root, "cgroup", "9:name=systemd:/\n4:memory:/c\n1:cpu:/\n");
  CHECK(app_memory_cgroup_room(proc, sys) == 536870912.0 - 104857600.0, "v1: %.0f",
        app_memory_cgroup_room(proc, sys));
  put(root, "cgroup", "garbage\n::\n");
  CHECK(app_memory_cgroup_room(proc, sys) == 0.0, "garbage: %.0f",
        app_memory_cgroup_room(proc, sys));
  CHECK(app_memory_cgroup_room("/nonexistent/cgroup", sys) == 0.0, "no file");
  char cmd[600];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
  CHECK(system(cmd) == 0, "cleanup");
}

int main(void)
{
  test_cgroup();
  test_model();
  test_host_cap();
  test_device();
  return check_report("test_memory");
}
