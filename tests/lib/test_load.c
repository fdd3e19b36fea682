/* Memory stays flat across 100 sequential solves in one process, through the library API: the
 * affinity, the components, a matvec and a solve (both solvers in turn) built and freed each
 * time; then 20 OpenCL matvecs with device-resident solves on the test device (PoCL in CI). The
 * resident set after the warm-up and at the end may differ by allocator noise only. Under
 * AddressSanitizer freed memory waits in quarantine, so there LeakSanitizer checks instead. */
#if defined(__SANITIZE_ADDRESS__)
#define MEASURE_RSS 0
#else
#define MEASURE_RSS 1
#endif
#include "diaseg_internal.h"
#include "io.h"
#include "check.h"

#include <malloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double rss_mib(void)
{
  long pages = 0, resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
    resident = 0;
  if (f)
    fclose(f);
  malloc_trim(0);
  return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

static int one_solve(const dsg_image *img, int opencl, int lanczos)
{
  float *f = NULL;
  int nf, status;
  spmv_dia *N = NULL;
  double *sd = NULL;
  app_components comps;
  spmv_matvec *mv = NULL;
  eig_options opt;
  eig_result res;
  app_affinity_params ap = {5, 0.1, 4.0, NULL, 0, NULL};
  memset(&comps, 0, sizeof(comps));
  memset(&res, 0, sizeof(res));
  status = app_features(img, test_cue("intensity"), &f, &nf);
  if (status == DSG_OK)
    status = app_affinity_build(img->width, img->height, f, nf, &ap, &N, &sd);
  if (status == DSG_OK)
    status = app_components_find(N, sd, &comps);
  if (status == DSG_OK && opencl) {
    spmv_cl_options co;
    spmv_cl_options_init(&co);
    co.device = getenv("DIASEG_CL_DEVICE") ? getenv("DIASEG_CL_DEVICE") : "0";
    co.kernel = SPMV_KERNEL_VECTOR;
    status = spmv_matvec_create_opencl(&mv, N, &co);
  } else if (status == DSG_OK) {
    status = spmv_matvec_create_cpu(&mv, N);
  }
  if (status == DSG_OK) {
    eig_options_init(&opt);
    opt.nev = 6;
    opt.tol = 1e-4;
    app_components_to_options(&comps, &opt);
    status = lanczos ? eig_lanczos_solve(mv, &opt, &res) : eig_arpack_solve(mv, &opt, &res);
  }
  eig_result_free(&res);
  spmv_matvec_destroy(mv);
  app_components_free(&comps);
  spmv_dia_destroy(N);
  free(sd);
  free(f);
  return status;
}

int main(void)
{
  dsg_image full, img;
  double warm = 0, end;
  CHECK(app_image_load(TEST_DATA_DIR "/coffee.png", APP_DEFAULT_MAX_PIXELS, &full) == DSG_OK,
        "load");
  dsg_image_resize(&full, 64, 48, &img);
  for (int i = 0; i < 100; i++) {
    int status = one_solve(&img, 0, i % 2);
    CHECK(status == DSG_OK, "C path solve %d: %s", i, dsg_error_message());
    if (i == 29) /* thread pools and allocator arenas settle in the first ~20 solves */
      warm = rss_mib();
  }
  end = rss_mib();
  printf("C path: resident %.1f MiB after 30 solves, %.1f MiB after 100\n", warm, end);
  if (MEASURE_RSS)
    CHECK(end - warm < 1.0, "C path: memory grew by %.2f MiB over 70 solves", end - warm);

  for (int i = 0; i < 20; i++) {
    int status = one_solve(&img, 1, 1);
    CHECK(status == DSG_OK, "OpenCL solve %d: %s", i, dsg_error_message());
    if (i == 4)
      warm = rss_mib();
  }
  end = rss_mib();
  printf("OpenCL: resident %.1f MiB after 5 solves, %.1f MiB after 20\n", warm, end);
  if (MEASURE_RSS)
    CHECK(end - warm < 8.0, "OpenCL: memory grew by %.2f MiB over 15 solves", end - warm);
  dsg_image_free(&img);
  dsg_image_free(&full);
  return check_report("test_load");
}
