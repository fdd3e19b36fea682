/* The backend interface and the DIA kernel table, checked where a wrong row or binder would show:
 *  - every kernel of the table runs through the OpenCL matvec (row error <= 1e-5 of |A||x|) and
 *    through a basis expansion (its product bound by the same binder, x a basis column), whose
 *    coefficients equal the C basis's to 1e-5, with and without known vectors, fused and not,
 *    and with the basis's work-group counts set by the options;
 *  - spmv_matvec_caps and spmv_matvec_prepare_basis on both backends;
 *  - kernel names parse back, a bad one fails with a message naming the kernel parameter;
 *  - spmv reads no environment: with DIASEG_CL_DEVICE, DIASEG_KERNEL_DIR and
 *    DIASEG_LANCZOS_GROUPS set to nonsense, spmv_cl_pick(NULL) takes the first GPU, else device
 *    0, and a matvec with no device or kernel folder named is created as usual;
 *  - messages name parameters (DSG_PARAM), never command-line flags.
 * The device: $DIASEG_CL_DEVICE (read before it is overwritten), else the first OpenCL device.
 * Without any OpenCL device the test is skipped (exit code 77). */
#include "check.h"
#include "disc_affinity.h"

#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77 /* ctest's SKIP_RETURN_CODE */
#define BASIS_M 10   /* basis columns - 1 */

static char device[256] = "0";

/* The options for kernel k on the test's device. */
static void cl_options(spmv_cl_options *opt, spmv_kernel k)
{
  spmv_cl_options_init(opt);
  opt->device = device;
  opt->kernel = k;
}

/* A message names no flag: no "--", and the parameter `param` marked as one. */
static int names_param(const char *param)
{
  char marked[64];
  snprintf(marked, sizeof(marked), DSG_PARAM("%s"), param);
  return strstr(dsg_error_raw(), marked) != NULL && strstr(dsg_error_raw(), "--") == NULL;
}

/* Runs a basis of BASIS_M + 1 columns on mv from x: V[:, 0] = x / |x|, BASIS_M steps; coef gets
 * BASIS_M * (BASIS_M + 2) coefficients. Returns the status of the first failure. */
static int expand_basis(spmv_matvec *mv, const spmv_known *known, int fuse, const float *x,
                        double *norm, double *coef)
{
  spmv_basis *b = NULL;
  int status = spmv_basis_create(&b, mv, BASIS_M, known, fuse);
  if (status == DSG_OK)
    status = spmv_basis_set(b, 0, x, norm);
  for (int j = 0; j < BASIS_M && status == DSG_OK; j++)
    status = spmv_basis_expand(b, j);
  if (status == DSG_OK)
    status = spmv_basis_coefficients(b, 0, BASIS_M, coef);
  if (status == DSG_OK && spmv_basis_get_timing(b).steps != BASIS_M)
    status = DSG_ERR_INVALID;
  spmv_basis_destroy(b);
  return status;
}

/* The largest difference between two coefficient logs, over the entries a step writes. */
static double coef_diff(const double *a, const double *b)
{
  double worst = 0.0;
  for (int j = 0; j < BASIS_M; j++)
    for (int i = 0; i <= j + 1; i++) {
      const double d = fabs(a[j * (BASIS_M + 2) + i] - b[j * (BASIS_M + 2) + i]);
      worst = d > worst || isnan(d) ? d : worst;
    }
  return worst;
}

/* Every kernel, through the matvec and through a basis, against the C path. */
static void kernels_and_bases(const spmv_dia *A, const char *what, int fp64)
{
  const int n = A->rows;
  const size_t ncoef = (size_t)BASIS_M * (BASIS_M + 2);
  float *x = malloc((size_t)n * sizeof(*x)), *y = malloc((size_t)n * sizeof(*y));
  float *ref = malloc((size_t)n * sizeof(*ref)), *value = malloc((size_t)n * sizeof(*value));
  int *label = malloc((size_t)n * sizeof(*label));
  double *coef_c = malloc(ncoef * sizeof(double)), *coef_cl = malloc(ncoef * sizeof(double));
  spmv_matvec *cpu = NULL;
  spmv_known known = {2, label, value};

  /* two known vectors of disjoint support: the first half, and every other row of the rest */
  {
    const int half = n / 2;
    int count1 = 0;
    for (int i = 0; i < n; i++) {
      label[i] = i < half ? 0 : (i % 2 == 0 ? 1 : -1);
      count1 += label[i] == 1;
    }
    for (int i = 0; i < n; i++)
      value[i] = label[i] == 0   ? (float)(1.0 / sqrt((double)half))
                 : label[i] == 1 ? (float)(1.0 / sqrt((double)count1))
                                 : 0.0f;
  }
  for (int i = 0; i < n; i++)
    x[i] = (float)(2 * test_uniform() - 1);
  spmv_dia_mul_ref(A, x, ref);
  CHECK(spmv_matvec_create_cpu(&cpu, A) == DSG_OK, "%s: cpu matvec", what);

  for (int k = SPMV_KERNEL_NAIVE; k < SPMV_KERNEL_COUNT; k++) {
    spmv_cl_options opt;
    spmv_matvec *mv = NULL;
    const char *name = spmv_kernel_name((spmv_kernel)k);
    CHECK(strcmp(name, "?") != 0, "kernel %d has no row in the table", k);
    cl_options(&opt, (spmv_kernel)k);
    int status = spmv_matvec_create_opencl(&mv, A, &opt);
    CHECK(status == DSG_OK, "%s: create %s: %s", what, name, dsg_error_message());
    if (status != DSG_OK)
      continue;
    CHECK((int)spmv_matvec_cl_info(mv)->kernel == k, "%s: info says kernel %s, not %s", what,
          spmv_kernel_name(spmv_matvec_cl_info(mv)->kernel), name);
    for (int i = 0; i < n; i++)
      y[i] = NAN;
    CHECK(spmv_matvec_apply(mv, x, y) == DSG_OK, "%s: apply %s: %s", what, name,
          dsg_error_message());
    double e = spmv_dia_row_error(A, x, y, ref);
    CHECK(e <= 1e-5, "%s: kernel %s: matvec row error %.3g", what, name, e);

    for (int variant = 0; variant < 3 && fp64; variant++) {
      const spmv_known *kn = variant == 0 ? NULL : &known;
      const int fuse = variant != 1;
      double norm_c = 0, norm_cl = 0;
      int sc = expand_basis(cpu, kn, fuse, x, &norm_c, coef_c);
      int scl = expand_basis(mv, kn, fuse, x, &norm_cl, coef_cl);
      CHECK(sc == DSG_OK && scl == DSG_OK, "%s: kernel %s variant %d: basis: %d %d %s", what, name,
            variant, sc, scl, dsg_error_message());
      if (sc != DSG_OK || scl != DSG_OK)
        continue;
      CHECK(CLOSE(norm_cl, norm_c, 1e-5, 1e-5), "%s: kernel %s: |x| %.9g vs C %.9g", what, name,
            norm_cl, norm_c);
      double d = coef_diff(coef_cl, coef_c);
      CHECK(d <= 1e-5, "%s: kernel %s variant %d: basis coefficients differ from C by %.3g", what,
            name, variant, d);
    }
    spmv_matvec_destroy(mv);
  }

  /* the basis's work-group counts from the options: the same numbers */
  if (fp64) {
    spmv_cl_options opt;
    spmv_matvec *mv = NULL;
    double norm_c = 0, norm_cl = 0;
    cl_options(&opt, SPMV_KERNEL_VECTOR);
    opt.basis_groups = 3;
    opt.basis_row_groups = 2;
    CHECK(spmv_matvec_create_opencl(&mv, A, &opt) == DSG_OK, "%s: basis groups 3, 2: %s", what,
          dsg_error_message());
    if (mv) {
      int sc = expand_basis(cpu, &known, 1, x, &norm_c, coef_c);
      int scl = expand_basis(mv, &known, 1, x, &norm_cl, coef_cl);
      CHECK(sc == DSG_OK && scl == DSG_OK, "%s: basis groups: %s", what, dsg_error_message());
      double d = coef_diff(coef_cl, coef_c);
      CHECK(d <= 1e-5, "%s: basis groups 3, 2: coefficients differ from C by %.3g", what, d);
    }
    spmv_matvec_destroy(mv);
  }
  spmv_matvec_destroy(cpu);
  free(x);
  free(y);
  free(ref);
  free(value);
  free(label);
  free(coef_c);
  free(coef_cl);
}

static void caps_and_prepare(const spmv_dia *A, int fp64)
{
  spmv_matvec *cpu = NULL, *mv = NULL;
  spmv_cl_options opt;
  CHECK(spmv_matvec_create_cpu(&cpu, A) == DSG_OK, "cpu matvec");
  cl_options(&opt, SPMV_KERNEL_AUTO);
  CHECK(spmv_matvec_create_opencl(&mv, A, &opt) == DSG_OK, "opencl matvec: %s",
        dsg_error_message());
  if (!cpu || !mv)
    goto out;
  spmv_caps c = spmv_matvec_caps(cpu), g = spmv_matvec_caps(mv);
  CHECK(strcmp(c.backend, "cpu") == 0 && c.device_resident == 0 && c.fp64 == 1,
        "cpu caps: %s %d %d", c.backend, c.device_resident, c.fp64);
  CHECK(strcmp(g.backend, "opencl") == 0 && g.device_resident == 1 && g.fp64 == fp64,
        "opencl caps: %s %d %d (device fp64 %d)", g.backend, g.device_resident, g.fp64, fp64);
  CHECK(strcmp(c.backend, spmv_matvec_backend(cpu)) == 0 &&
            strcmp(g.backend, spmv_matvec_backend(mv)) == 0,
        "caps.backend is spmv_matvec_backend");
  CHECK(spmv_matvec_cl_info(cpu) == NULL && spmv_matvec_cl_info(mv) != NULL, "cl_info");
  CHECK(spmv_matvec_prepare_basis(cpu, BASIS_M) == DSG_OK, "prepare cpu: %s", dsg_error_message());
  CHECK(spmv_matvec_prepare_basis(cpu, 1) == DSG_ERR_INVALID, "prepare m = 1");
  int status = spmv_matvec_prepare_basis(mv, BASIS_M);
  CHECK(fp64 ? status == DSG_OK : status == DSG_ERR_NODEVICE && names_param("solver"),
        "prepare opencl: %d %s", status, dsg_error_message());
  if (fp64) /* built once: a second call only checks the size */
    CHECK(spmv_matvec_prepare_basis(mv, BASIS_M) == DSG_OK, "prepare twice");
  double gbs = 0;
  CHECK(spmv_cl_copy_gbs(cpu, 1 << 20, 3, &gbs) == DSG_ERR_INVALID, "copy_gbs on the C path");
  CHECK(spmv_cl_copy_gbs(mv, 1 << 20, 3, &gbs) == DSG_OK && gbs > 0, "copy_gbs: %s %g",
        dsg_error_message(), gbs);
out:
  spmv_matvec_destroy(cpu);
  spmv_matvec_destroy(mv);
}

static void names_and_messages(const spmv_dia *A)
{
  spmv_kernel k;
  for (int i = SPMV_KERNEL_AUTO; i < SPMV_KERNEL_COUNT; i++)
    CHECK(spmv_kernel_parse(spmv_kernel_name((spmv_kernel)i), &k) == DSG_OK && (int)k == i,
          "kernel %d: '%s' does not parse back", i, spmv_kernel_name((spmv_kernel)i));
  CHECK(spmv_kernel_parse("bogus", &k) == DSG_ERR_INVALID &&
            strstr(dsg_error_message(), "kernel") && strstr(dsg_error_message(), "bogus") &&
            strstr(dsg_error_message(), "naive, aligned, local, vector, image, auto") &&
            names_param("kernel"),
        "parse bogus: %s", dsg_error_message());

  spmv_cl_options opt;
  spmv_matvec *mv = NULL;
  cl_options(&opt, SPMV_KERNEL_VECTOR);
  opt.local_size = (size_t)1 << 30;
  CHECK(spmv_matvec_create_opencl(&mv, A, &opt) == DSG_ERR_INVALID && !mv &&
            names_param("local_size"),
        "local_size 2^30: %s", dsg_error_raw());
  cl_options(&opt, SPMV_KERNEL_VECTOR);
  opt.max_alloc = 1000;
  CHECK(spmv_matvec_create_opencl(&mv, A, &opt) == DSG_ERR_LIMIT && !mv &&
            strstr(dsg_error_message(), "allocation") && names_param("cl_max_alloc"),
        "max_alloc 1000: %s", dsg_error_raw());
  cl_options(&opt, SPMV_KERNEL_VECTOR);
  opt.basis_groups = 70000;
  CHECK(spmv_matvec_create_opencl(&mv, A, &opt) == DSG_ERR_INVALID && !mv &&
            names_param("basis_groups"),
        "basis_groups 70000: %s", dsg_error_raw());
  cl_options(&opt, SPMV_KERNEL_VECTOR);
  opt.basis_row_groups = 70000;
  CHECK(spmv_matvec_create_opencl(&mv, A, &opt) == DSG_ERR_INVALID && !mv &&
            names_param("basis_row_groups"),
        "basis_row_groups 70000: %s", dsg_error_raw());
}

/* With the environment full of nonsense, spmv does what its arguments say. */
static void no_environment(const spmv_cl_device *list, int count, const spmv_dia *A)
{
  int first_gpu = -1, index = -1;
  for (int i = 0; i < count && first_gpu < 0; i++)
    if (list[i].gpu)
      first_gpu = i;
  setenv("DIASEG_CL_DEVICE", "no-such-device-bogus", 1);
  setenv("DIASEG_KERNEL_DIR", "/nonexistent-kernel-dir", 1);
  setenv("DIASEG_LANCZOS_GROUPS", "1,1", 1);
  CHECK(spmv_cl_pick(list, count, NULL, 0, &index) == DSG_OK &&
            index == (first_gpu >= 0 ? first_gpu : 0),
        "pick(NULL) = %d, first GPU %d: %s", index, first_gpu, dsg_error_message());
  index = -1;
  CHECK(spmv_cl_pick(list, count, "", 0, &index) == DSG_OK &&
            index == (first_gpu >= 0 ? first_gpu : 0),
        "pick(\"\") = %d", index);
  int status = spmv_cl_pick(list, count, NULL, 1, &index);
  CHECK(first_gpu >= 0 ? status == DSG_OK && index == first_gpu : status == DSG_ERR_NODEVICE,
        "pick(NULL, gpu_only) = %d: %s", status, dsg_error_message());
  CHECK(spmv_cl_pick(list, count, "0", 0, &index) == DSG_OK && index == 0, "pick(\"0\")");

  spmv_cl_options opt;
  spmv_matvec *mv = NULL;
  spmv_cl_options_init(&opt); /* no device, no kernel folder */
  status = spmv_matvec_create_opencl(&mv, A, &opt);
  CHECK(status == DSG_OK, "create with the environment set: %s", dsg_error_message());
  if (mv) {
    const spmv_cl_info *info = spmv_matvec_cl_info(mv);
    const int want = first_gpu >= 0 ? first_gpu : 0;
    CHECK(strcmp(info->device, list[want].name) == 0, "device '%s', not '%s'", info->device,
          list[want].name);
  }
  spmv_matvec_destroy(mv);
}

int main(void)
{
  spmv_cl_device *list = NULL;
  int count = 0, index = 0;
  const char *env = getenv("DIASEG_CL_DEVICE");
  if (env && *env)
    snprintf(device, sizeof(device), "%s", env);
  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_backend: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  CHECK(spmv_cl_pick(list, count, device, 0, &index) == DSG_OK, "pick '%s'", device);
  const int fp64 = list[index].fp64;
  printf("test_backend: device [%d] %s: %s%s\n", index, list[index].platform, list[index].name,
         fp64 ? "" : " (no fp64: the basis checks are skipped)");

  /* image affinities, and a random matrix of an awkward size */
  static const struct {
    int w, h, radius, nf;
  } images[] = {{97, 61, 5, 1}, {13, 7, 10, 3}, {203, 1, 5, 1}};
  for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
    float *f = test_image_features(images[i].w, images[i].h, images[i].nf);
    spmv_dia *N = NULL;
    char what[64];
    snprintf(what, sizeof(what), "image %dx%d r=%d", images[i].w, images[i].h, images[i].radius);
    CHECK(f && test_disc_affinity(images[i].w, images[i].h, f, images[i].nf, images[i].radius, 0.1,
                                  4.0, &N) == DSG_OK,
          "%s", what);
    if (N)
      kernels_and_bases(N, what, fp64);
    if (N && i == 0) {
      caps_and_prepare(N, fp64);
      names_and_messages(N);
      no_environment(list, count, N);
    }
    spmv_dia_destroy(N);
    free(f);
  }
  free(list);
  return check_report("test_backend");
}
