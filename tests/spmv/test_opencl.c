/* Every OpenCL DIA kernel equals the C reference (row error <= 1e-5 of |A||x|) on random DIA
 * matrices of awkward sizes and on image affinities (disc_affinity.h: 1 x N, N x 1, n below the
 * largest offset, radii 1, 5 and 10); the matvec reports its timing; and the failures that a CPU
 * machine can produce give a message, not a crash: a device that does not exist, an allocation
 * over the (capped) limit, a kernel file that does not build.
 * The device: $DIASEG_CL_DEVICE, else the first OpenCL device (PoCL in CI; the H200 by hand).
 * Without any OpenCL device the test is skipped (exit code 77).
 * Not covered: a store past the end of y (the kernels guard it; no result check can see it). */
#include "check.h"
#include "disc_affinity.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEST_SKIP 77 /* ctest's SKIP_RETURN_CODE */

static const char *device_spec(void)
{
  const char *env = getenv("DIASEG_CL_DEVICE");
  return env && *env ? env : "0";
}

/* Compares every kernel with the reference on A, twice with fresh x (the second product must not
 * see the first's x). */
static void check_all_kernels(const spmv_dia *A, const char *what)
{
  const int n = A->rows;
  float *x = malloc((size_t)n * sizeof(*x)), *y = malloc((size_t)n * sizeof(*y));
  float *ref = malloc((size_t)n * sizeof(*ref));
  for (int k = SPMV_KERNEL_NAIVE; k < SPMV_KERNEL_COUNT; k++) {
    spmv_cl_options opt;
    spmv_matvec *mv = NULL;
    spmv_cl_options_init(&opt);
    opt.device = device_spec();
    opt.kernel = (spmv_kernel)k;
    if (k == SPMV_KERNEL_LOCAL)
      opt.local_size = 64; /* a second work-group size */
    int status = spmv_matvec_create_opencl(&mv, A, &opt);
    CHECK(status == DSG_OK, "%s: create %s: %s", what, spmv_kernel_name(k), dsg_error_message());
    if (status != DSG_OK)
      continue;
    const spmv_cl_info *info = spmv_matvec_cl_info(mv);
    CHECK(info && (int)info->kernel == k && strcmp(spmv_matvec_backend(mv), "opencl") == 0, "info");
    for (int round = 0; round < 2; round++) {
      for (int i = 0; i < n; i++) {
        x[i] = (float)(2 * test_uniform() - 1);
        y[i] = NAN;
      }
      spmv_dia_mul_ref(A, x, ref);
      CHECK(spmv_matvec_apply(mv, x, y) == DSG_OK, "%s: apply: %s", what, dsg_error_message());
      double e = spmv_dia_row_error(A, x, y, ref);
      CHECK(e <= 1e-5, "%s: kernel %s (n = %d, %d diagonals): row error %.3g", what,
            spmv_kernel_name(k), n, A->ndiag, e);
    }
    spmv_timing t = spmv_matvec_timing(mv);
    CHECK(t.calls == 2 && t.kernel_s > 0 && t.transfer_s >= 0 && t.total_s >= t.kernel_s,
          "%s: timing calls %ld kernel %g transfer %g total %g", what, t.calls, t.kernel_s,
          t.transfer_s, t.total_s);
    spmv_matvec_destroy(mv);
  }
  free(x);
  free(y);
  free(ref);
}

/* nf: 1 (intensity) or 3 (color) features per pixel */
static void image_affinity(int w, int h, int radius, int nf)
{
  float *f = test_image_features(w, h, nf);
  spmv_dia *N = NULL;
  char what[96];
  snprintf(what, sizeof(what), "image %dx%d r=%d %s", w, h, radius,
           nf == 3 ? "color" : "intensity");
  CHECK(f && test_disc_affinity(w, h, f, nf, radius, 0.1, 4.0, &N) == DSG_OK, "%s: %s", what,
        dsg_error_message());
  if (N)
    check_all_kernels(N, what);
  spmv_dia_destroy(N);
  free(f);
}

static void error_paths(void)
{
  spmv_dia *A = test_random_dia(1000, 9);
  spmv_matvec *mv = NULL;
  spmv_cl_options opt;
  int status;

  spmv_cl_options_init(&opt);
  opt.device = "99";
  status = spmv_matvec_create_opencl(&mv, A, &opt);
  CHECK(status == DSG_ERR_NODEVICE && !mv && strstr(dsg_error_message(), "does not exist"),
        "device 99: %d %s", status, dsg_error_message());
  opt.device = "no-such-device-name";
  status = spmv_matvec_create_opencl(&mv, A, &opt);
  CHECK(status == DSG_ERR_NODEVICE && !mv, "device by name: %d %s", status, dsg_error_message());

  spmv_cl_options_init(&opt);
  opt.device = device_spec();
  opt.max_alloc = 1000; /* far below the matrix's 36 KiB */
  status = spmv_matvec_create_opencl(&mv, A, &opt);
  CHECK(status == DSG_ERR_LIMIT && !mv && strstr(dsg_error_message(), "allocation"),
        "max_alloc 1000: %d %s", status, dsg_error_message());

  /* a kernel file that does not compile: the error and the build log */
  char dir[] = "/tmp/diaseg-test-kernels-XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char path[256];
  snprintf(path, sizeof(path), "%s/dia_spmv.cl", dir);
  FILE *f = fopen(path, "w");
  fputs("__kernel void dia_vector(__global float *A) { this is not OpenCL C; }\n", f);
  fclose(f);
  spmv_cl_options_init(&opt);
  opt.device = device_spec();
  opt.kernel_dir = dir;
  status = spmv_matvec_create_opencl(&mv, A, &opt);
  CHECK(status == DSG_ERR_OPENCL && !mv && strstr(dsg_error_message(), "build") &&
            strlen(spmv_cl_build_log()) > 0,
        "broken kernel: %d %s / log '%.60s'", status, dsg_error_message(), spmv_cl_build_log());
  unlink(path);
  rmdir(dir);
  opt.kernel_dir = "/nonexistent-kernel-dir";
  status = spmv_matvec_create_opencl(&mv, A, &opt);
  CHECK(status == DSG_ERR_IO && !mv, "missing kernel dir: %d %s", status, dsg_error_message());

  /* kernel names */
  spmv_kernel k;
  CHECK(spmv_kernel_parse("image", &k) == DSG_OK && k == SPMV_KERNEL_IMAGE, "parse image");
  CHECK(spmv_kernel_parse("fast", &k) == DSG_ERR_INVALID, "parse fast");
  spmv_dia_destroy(A);
}

int main(void)
{
  spmv_cl_device *list = NULL;
  int count = 0;
  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_opencl: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  int index = 0;
  CHECK(spmv_cl_pick(list, count, device_spec(), 0, &index) == DSG_OK, "pick");
  printf("test_opencl: device [%d] %s: %s\n", index, list[index].platform, list[index].name);
  free(list);

  /* random matrices: sizes off every multiple of 4, 32 and the work-group size */
  static const int sizes[] = {1, 2, 3, 5, 37, 130, 1023, 4099, 70001};
  static const int ndiags[] = {1, 3, 81, 317};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
    for (size_t q = 0; q < sizeof(ndiags) / sizeof(ndiags[0]); q++) {
      char what[64];
      spmv_dia *A = test_random_dia(sizes[s], ndiags[q]);
      snprintf(what, sizeof(what), "random n=%d ndiag=%d", sizes[s], ndiags[q]);
      check_all_kernels(A, what);
      spmv_dia_destroy(A);
    }

  /* image affinities (the matrices diaseg solves) */
  float *probe = test_image_features(481, 321, 3);
  CHECK(probe != NULL, "load"); /* the synthetic image */
  free(probe);
  image_affinity(481, 321, 5, 1);
  image_affinity(97, 61, 1, 1);
  image_affinity(97, 61, 10, 3); /* 317 diagonals: two local blocks */
  image_affinity(1, 203, 5, 1);  /* 1 x N */
  image_affinity(203, 1, 5, 1);  /* N x 1 */
  image_affinity(3, 2, 5, 1);    /* n = 6 below the largest offset */
  image_affinity(13, 7, 10, 1);

  error_paths();
  return check_report("test_opencl");
}
