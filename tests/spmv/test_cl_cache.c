/* The process-wide OpenCL cache (spmv.h, spmv_cl_cache_clear): a second matvec on the device
 * reuses the first's context and program (no new build) and gives the same products, equal to
 * the C reference; the image stages share the matvec's context; the basis kernels are built once;
 * destroying one object, or clearing the cache, leaves the others working; after a clear a new
 * matvec opens the device again. A kernel folder's file is part of the key: an edited file is
 * built, a file that does not build is not kept and does not spoil the cache. An OpenCL failure
 * makes the cache forget its context. Threads creating matvecs at once share one context. Values
 * only, never timings.
 * The device: $DIASEG_CL_DEVICE, else the first OpenCL device (PoCL in CI). Without any OpenCL
 * device the test is skipped (exit code 77). */
#include "check.h"
#include "spmv_image.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TEST_SKIP 77 /* ctest's SKIP_RETURN_CODE */
#define THREADS 4

static const char *device_spec(void)
{
  const char *env = getenv("DIASEG_CL_DEVICE");
  return env && *env ? env : "0";
}

/* mv on A: 1 if its product of a fixed x equals the reference (row error <= 1e-5), y receives
 * it. */
static int product_ok(spmv_matvec *mv, const spmv_dia *A, float *y)
{
  const int n = A->rows;
  float *x = malloc((size_t)n * sizeof(*x)), *ref = malloc((size_t)n * sizeof(*ref));
  int ok;
  for (int i = 0; i < n; i++) {
    x[i] = (float)((i * 37 % 101) - 50) / 50.0f;
    y[i] = NAN;
  }
  spmv_dia_mul_ref(A, x, ref);
  ok = spmv_matvec_apply(mv, x, y) == DSG_OK && spmv_dia_row_error(A, x, y, ref) <= 1e-5;
  free(x);
  free(ref);
  return ok;
}

static spmv_matvec *create(const spmv_dia *A, const char *kernel_dir, int *status)
{
  spmv_cl_options opt;
  spmv_matvec *mv = NULL;
  spmv_cl_options_init(&opt);
  opt.device = device_spec();
  opt.kernel = SPMV_KERNEL_VECTOR; /* the same program text and options every time */
  opt.kernel_dir = kernel_dir;
  *status = spmv_matvec_create_opencl(&mv, A, &opt);
  return mv;
}

/* Two matvecs, the basis kernels, the image stages, a clear in the middle of it all. */
static void reuse(const spmv_dia *A)
{
  const size_t n = (size_t)A->rows;
  float *y1 = malloc(n * sizeof(*y1)), *y2 = malloc(n * sizeof(*y2));
  spmv_cl_cache_counts c;
  spmv_cl_image *im = NULL;
  int status;

  spmv_cl_cache_clear();
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 0 && c.programs == 0 && c.builds == 0 && c.reuses == 0,
        "after a clear: %d contexts, %d programs, %ld builds, %ld reuses", c.contexts, c.programs,
        c.builds, c.reuses);

  spmv_matvec *mv1 = create(A, NULL, &status);
  CHECK(status == DSG_OK, "first matvec: %s", dsg_error_message());
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 1 && c.programs == 1 && c.builds == 1 && c.reuses == 0,
        "first matvec: %d contexts, %d programs, %ld builds, %ld reuses", c.contexts, c.programs,
        c.builds, c.reuses);
  spmv_matvec *mv2 = create(A, NULL, &status);
  CHECK(status == DSG_OK, "second matvec: %s", dsg_error_message());
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 1 && c.programs == 1 && c.builds == 1 && c.reuses == 1,
        "second matvec: %d contexts, %d programs, %ld builds, %ld reuses (want 1, 1, 1, 1)",
        c.contexts, c.programs, c.builds, c.reuses);
  if (mv1 && mv2) {
    CHECK(product_ok(mv1, A, y1), "first matvec's product");
    CHECK(product_ok(mv2, A, y2), "second matvec's product");
    CHECK(memcmp(y1, y2, n * sizeof(*y1)) == 0, "the two matvecs' products differ");
  }

  /* the basis kernels (double precision): built for the first matvec, reused by the second */
  if (mv1 && mv2 && spmv_matvec_caps(mv1).fp64) {
    CHECK(spmv_matvec_prepare_basis(mv1, 20) == DSG_OK, "prepare_basis 1: %s", dsg_error_message());
    CHECK(spmv_matvec_prepare_basis(mv2, 20) == DSG_OK, "prepare_basis 2: %s", dsg_error_message());
    c = spmv_cl_cache_stats();
    CHECK(c.programs == 2 && c.builds == 2 && c.reuses == 2,
          "basis kernels: %d programs, %ld builds, %ld reuses (want 2, 2, 2)", c.programs, c.builds,
          c.reuses);
  }

  /* the image stages open the matvec's device: the same context */
  CHECK(spmv_cl_image_create(&im, device_spec(), NULL) == DSG_OK, "image stages: %s",
        dsg_error_message());
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 1, "image stages: %d contexts (want the matvec's one)", c.contexts);
  spmv_cl_image_destroy(im);

  /* destroying one leaves the other's context, queue and program alive */
  spmv_matvec_destroy(mv1);
  if (mv2) {
    CHECK(product_ok(mv2, A, y1), "second matvec after the first was destroyed");
    CHECK(memcmp(y1, y2, n * sizeof(*y1)) == 0, "product changed after the first was destroyed");
  }
  /* so does a clear: mv2 holds its own references */
  spmv_cl_cache_clear();
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 0 && c.programs == 0, "clear: %d contexts, %d programs", c.contexts,
        c.programs);
  if (mv2)
    CHECK(product_ok(mv2, A, y1), "second matvec after a clear");
  spmv_matvec *mv3 = create(A, NULL, &status);
  CHECK(status == DSG_OK, "matvec after a clear: %s", dsg_error_message());
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 1 && c.programs == 1 && c.builds == 1 && c.reuses == 0,
        "after a clear: %d contexts, %d programs, %ld builds, %ld reuses (want 1, 1, 1, 0)",
        c.contexts, c.programs, c.builds, c.reuses);
  if (mv3) {
    CHECK(product_ok(mv3, A, y1), "matvec after a clear: product");
    CHECK(memcmp(y1, y2, n * sizeof(*y1)) == 0, "matvec after a clear: product differs");
  }
  spmv_matvec_destroy(mv2);
  spmv_matvec_destroy(mv3);
  free(y1);
  free(y2);
}

/* text into dir/dia_spmv.cl */
static void write_kernel(const char *dir, const char *text, const char *extra)
{
  char path[256];
  snprintf(path, sizeof(path), "%s/dia_spmv.cl", dir);
  FILE *f = fopen(path, "w");
  CHECK(f != NULL, "cannot write %s", path);
  if (!f)
    return;
  fputs(text, f);
  fputs(extra, f);
  fclose(f);
}

static char *read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  char *text = NULL;
  long len;
  if (!f)
    return NULL;
  if (fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
      (text = malloc((size_t)len + 1)) != NULL) {
    if (fread(text, 1, (size_t)len, f) != (size_t)len) {
      free(text);
      text = NULL;
    } else {
      text[len] = '\0';
    }
  }
  fclose(f);
  return text;
}

/* The kernel folder: the text is the key. */
static void kernel_folder(const spmv_dia *A)
{
  char dir[] = "/tmp/diaseg-test-cache-XXXXXX", path[256];
  char *text = read_text(DIASEG_KERNELS_DIR "/dia_spmv.cl");
  float *y = malloc((size_t)A->rows * sizeof(*y));
  spmv_cl_cache_counts c;
  spmv_matvec *mv;
  int status;

  CHECK(text != NULL, "cannot read %s", DIASEG_KERNELS_DIR "/dia_spmv.cl");
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  if (!text)
    goto out;
  spmv_cl_cache_clear();
  write_kernel(dir, text, "");
  for (int round = 0; round < 2; round++) { /* built once, then reused */
    mv = create(A, dir, &status);
    CHECK(status == DSG_OK && product_ok(mv, A, y), "kernel folder, round %d: %s", round,
          dsg_error_message());
    spmv_matvec_destroy(mv);
  }
  c = spmv_cl_cache_stats();
  CHECK(c.builds == 1 && c.reuses == 1, "kernel folder: %ld builds, %ld reuses (want 1, 1)",
        c.builds, c.reuses);

  write_kernel(dir, text, "\n/* edited */\n"); /* a changed file is built again */
  mv = create(A, dir, &status);
  CHECK(status == DSG_OK && product_ok(mv, A, y), "edited kernel file: %s", dsg_error_message());
  spmv_matvec_destroy(mv);
  c = spmv_cl_cache_stats();
  CHECK(c.builds == 2 && c.programs == 2, "edited kernel file: %ld builds, %d programs (want 2)",
        c.builds, c.programs);

  write_kernel(dir, "__kernel void dia_vector(__global float *A) { not OpenCL C; }\n", "");
  mv = create(A, dir, &status);
  CHECK(status == DSG_ERR_OPENCL && !mv && strstr(dsg_error_message(), "build"),
        "broken kernel file: %d %s", status, dsg_error_message());
  c = spmv_cl_cache_stats();
  CHECK(c.builds == 2 && c.programs == 2 && c.contexts == 1,
        "broken kernel file kept: %ld builds, %d programs, %d contexts", c.builds, c.programs,
        c.contexts);
  /* twice: a failed build is not handed out the second time either */
  mv = create(A, dir, &status);
  CHECK(status == DSG_ERR_OPENCL && !mv, "broken kernel file, again: %d", status);

  write_kernel(dir, text, ""); /* back to the first text: the cache's program again */
  mv = create(A, dir, &status);
  CHECK(status == DSG_OK && product_ok(mv, A, y), "kernel file restored: %s", dsg_error_message());
  spmv_matvec_destroy(mv);
  mv = create(A, NULL, &status); /* the built-in copy: the same text, the same program */
  CHECK(status == DSG_OK && product_ok(mv, A, y), "built-in kernels: %s", dsg_error_message());
  spmv_matvec_destroy(mv);
  c = spmv_cl_cache_stats();
  CHECK(c.builds == 2 && c.reuses == 3, "kernel file restored: %ld builds, %ld reuses (want 2, 3)",
        c.builds, c.reuses);
out:
  snprintf(path, sizeof(path), "%s/dia_spmv.cl", dir);
  unlink(path);
  rmdir(dir);
  free(text);
  free(y);
}

/* An OpenCL call that fails during a matvec's life (here clCreateBuffer of 0 bytes, through
 * spmv_cl_copy_gbs) makes the cache forget the context when the matvec is destroyed; a matvec
 * still using it goes on working, and the next one opens the device again. */
static void failure(const spmv_dia *A)
{
  float *y = malloc((size_t)A->rows * sizeof(*y)), *y0 = malloc((size_t)A->rows * sizeof(*y0));
  spmv_cl_cache_counts c;
  double gbs = 0.0;
  int status;

  spmv_cl_cache_clear();
  spmv_matvec *keep = create(A, NULL, &status);
  CHECK(status == DSG_OK && product_ok(keep, A, y0), "matvec before the failure: %s",
        dsg_error_message());
  spmv_matvec *mv = create(A, NULL, &status);
  CHECK(status == DSG_OK, "failing matvec: %s", dsg_error_message());
  if (mv) {
    status = spmv_cl_copy_gbs(mv, 0, 1, &gbs);
    CHECK(status == DSG_ERR_OPENCL && strstr(dsg_error_message(), "failed"), "a 0-byte copy: %d %s",
          status, dsg_error_message());
  }
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 1 && c.programs == 1, "before the failing matvec's destruction: %d, %d",
        c.contexts, c.programs);
  spmv_matvec_destroy(mv);
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 0 && c.programs == 0,
        "after a failure: %d contexts, %d programs (want the context forgotten)", c.contexts,
        c.programs);
  if (keep) {
    CHECK(product_ok(keep, A, y), "the other matvec after the failure");
    CHECK(memcmp(y, y0, (size_t)A->rows * sizeof(*y)) == 0, "product changed after the failure");
  }
  mv = create(A, NULL, &status);
  c = spmv_cl_cache_stats();
  CHECK(status == DSG_OK && product_ok(mv, A, y) && c.contexts == 1 && c.builds == 2,
        "after the failure: %s; %d contexts, %ld builds (want a fresh context and build)",
        dsg_error_message(), c.contexts, c.builds);
  spmv_matvec_destroy(mv);
  spmv_matvec_destroy(keep);
  free(y);
  free(y0);
}

typedef struct worker {
  const spmv_dia *A;
  const char *kernel_dir;
  pthread_barrier_t *start;
  int status, ok;
} worker;

static void *work(void *arg)
{
  worker *w = arg;
  float *y = malloc((size_t)w->A->rows * sizeof(*y));
  pthread_barrier_wait(w->start); /* all at once, so that their builds would overlap */
  spmv_matvec *mv = create(w->A, w->kernel_dir, &w->status);
  w->ok = w->status == DSG_OK && y && product_ok(mv, w->A, y);
  spmv_matvec_destroy(mv);
  free(y);
  return NULL;
}

/* THREADS threads create a matvec at once from kernel_dir (NULL: the built-in kernels); their
 * statuses and products into w. */
static void race(const spmv_dia *A, const char *kernel_dir, worker *w)
{
  pthread_t tid[THREADS];
  pthread_barrier_t start;
  int started[THREADS];
  pthread_barrier_init(&start, NULL, THREADS);
  for (int i = 0; i < THREADS; i++) {
    w[i] = (worker){A, kernel_dir, &start, -1, 0};
    started[i] = pthread_create(&tid[i], NULL, work, &w[i]) == 0;
    CHECK(started[i], "pthread_create %d", i);
    if (!started[i]) /* the barrier would wait for it forever */
      exit(1);
  }
  for (int i = 0; i < THREADS; i++)
    pthread_join(tid[i], NULL);
  pthread_barrier_destroy(&start);
}

/* Matvecs created on several threads at once: one context, and one build of the program, which
 * the others wait for (claimed by the first; before, each thread that missed it built its own
 * copy). A build that fails on one thread is not handed to the others: each meets the failure
 * itself, nothing is kept, and none waits forever. */
static void threads(const spmv_dia *A)
{
  char dir[] = "/tmp/diaseg-test-race-XXXXXX", path[256];
  worker w[THREADS];
  spmv_cl_cache_counts c;

  spmv_cl_cache_clear();
  race(A, NULL, w);
  for (int i = 0; i < THREADS; i++)
    CHECK(w[i].ok, "thread %d: the matvec failed or its product is wrong", i);
  c = spmv_cl_cache_stats();
  CHECK(c.contexts == 1 && c.programs == 1 && c.builds == 1 && c.reuses == THREADS - 1,
        "%d threads: %d contexts, %d programs, %ld builds, %ld reuses (want 1, 1, 1, %d)", THREADS,
        c.contexts, c.programs, c.builds, c.reuses, THREADS - 1);

  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  write_kernel(dir, "__kernel void dia_vector(__global float *A) { not OpenCL C; }\n", "");
  race(A, dir, w);
  for (int i = 0; i < THREADS; i++)
    CHECK(w[i].status == DSG_ERR_OPENCL && !w[i].ok, "thread %d, broken kernel file: status %d", i,
          w[i].status);
  c = spmv_cl_cache_stats();
  CHECK(c.programs == 1 && c.builds == 1, "broken kernel file, %d threads: %d programs, %ld builds",
        THREADS, c.programs, c.builds);
  snprintf(path, sizeof(path), "%s/dia_spmv.cl", dir);
  unlink(path);
  rmdir(dir);
}

int main(void)
{
  spmv_cl_device *list = NULL;
  int count = 0;
  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_cl_cache: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  free(list);

  spmv_dia *A = test_random_dia(1000, 9);
  CHECK(A != NULL, "matrix");
  if (A) {
    reuse(A);
    kernel_folder(A);
    failure(A);
    threads(A);
  }
  spmv_dia_destroy(A);
  spmv_cl_cache_clear();
  return check_report("test_cl_cache");
}
