/* The one place that loads the Fortran libraries the solvers call: LAPACK (dsyev, for the Lanczos
 * solver's projected problem) and ARPACK-ng (dsaupd/dseupd), with the BLAS under both. They are
 * opened with dlopen the first time a solve needs them, not linked: the BLAS diaseg prefers
 * (OpenBLAS) reserves its buffers in a load-time constructor and, when the address space is
 * limited (ulimit -v) below what it reserves, retries that mmap forever. Loaded at start-up, it
 * hung every command, `diaseg --version` too; loaded here, only a solve needs it, and a probe of
 * the address space first turns the hang into an error. */
#include "eigensolver_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <omp.h>

/* Debian's sonames (libblas.so.3 and liblapack.so.3 are alternatives: reference BLAS, OpenBLAS,
 * BLIS; the run path prefers OpenBLAS's OpenMP build, see CMakeLists.txt) */
#define EIG_BLAS_SONAME "libblas.so.3"
#define EIG_LAPACK_SONAME "liblapack.so.3"
#define EIG_ARPACK_SONAME "libarpack.so.2"
/* Free address space the BLAS needs to start: OpenBLAS maps its libraries (about 60 MiB with
 * libgfortran) and then, in its constructor, a 128 MiB buffer per thread (one per core, or per
 * OpenMP thread in its OpenMP build), plus the threads' stacks. Measured: on the 2-core machine a
 * 256 MiB probe let a 300 MB limit through and OpenBLAS hung, 2 x 128 + 256 MiB starts or fails at
 * once at every limit; on the 16-core GPU machine a 2 GB limit hung OpenBLAS. */
#define EIG_BLAS_BUFFER ((size_t)128 << 20)
#define EIG_BLAS_MARGIN ((size_t)256 << 20)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static eig_fortran loaded;
static int load_status = DSG_OK;
static char load_message[512];

/* DSG_OK when a mapping of EIG_BLAS_ADDRESS_SPACE bytes can be made now (it is not touched, and
 * unmapped at once): what an address-space limit leaves shows up as a failed mmap. */
static int probe_address_space(void)
{
  struct rlimit rl;
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  const int threads = omp_get_max_threads() > cores ? omp_get_max_threads() : (int)cores;
  const size_t need = (size_t)(threads > 1 ? threads : 1) * EIG_BLAS_BUFFER + EIG_BLAS_MARGIN;
  void *p = mmap(NULL, need, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p != MAP_FAILED) {
    munmap(p, need);
    return DSG_OK;
  }
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the address-space limit of %llu MiB (ulimit -v) leaves less than the "
                         "%zu MiB the BLAS library needs to start with %d threads; raise the limit",
                         (unsigned long long)(rl.rlim_cur >> 20), need >> 20, threads);
  return dsg_error_set(DSG_ERR_NOMEM, "cannot map %zu MiB of address space for the BLAS library",
                       need >> 20);
}

static void *open_library(const char *soname, int *status)
{
  void *h = dlopen(soname, RTLD_NOW | RTLD_GLOBAL);
  if (!h)
    *status = dsg_error_set(DSG_ERR_SOLVER, "cannot load %s: %s (install libarpack2 and a LAPACK)",
                            soname, dlerror());
  return h;
}

static void *symbol(void *h, const char *name, int *status)
{
  void *f = h ? dlsym(h, name) : NULL;
  if (h && !f && *status == DSG_OK)
    *status = dsg_error_set(DSG_ERR_SOLVER, "the Fortran library lacks %s: %s", name, dlerror());
  return f;
}

static void load(void)
{
  void *blas = NULL, *lapack = NULL, *arpack = NULL;
  int status = probe_address_space();
  if (status == DSG_OK)
    blas = open_library(EIG_BLAS_SONAME, &status);
  if (status == DSG_OK)
    lapack = open_library(EIG_LAPACK_SONAME, &status);
  if (status == DSG_OK)
    arpack = open_library(EIG_ARPACK_SONAME, &status);
  if (status == DSG_OK) {
    *(void **)&loaded.dsyev = symbol(lapack, "dsyev_", &status);
    *(void **)&loaded.dsaupd = symbol(arpack, "dsaupd_c", &status);
    *(void **)&loaded.dseupd = symbol(arpack, "dseupd_c", &status);
    /* OpenBLAS's thread controls, when the BLAS is OpenBLAS */
    *(void **)&loaded.openblas_get_parallel = dlsym(blas, "openblas_get_parallel");
    *(void **)&loaded.openblas_set_num_threads = dlsym(blas, "openblas_set_num_threads");
    *(void **)&loaded.openblas_get_num_threads = dlsym(blas, "openblas_get_num_threads");
  }
  load_status = status;
  if (status != DSG_OK)
    snprintf(load_message, sizeof(load_message), "%s", dsg_error_raw());
  /* the handles stay open for the process's life: the solvers keep the functions */
}

int eig_fortran_load(const eig_fortran **out)
{
  pthread_once(&once, load);
  *out = load_status == DSG_OK ? &loaded : NULL;
  if (load_status != DSG_OK)
    return dsg_error_set(load_status, "%s", load_message);
  return DSG_OK;
}
