/* Minimal test helpers: CHECK records a failure with its location and keeps going. */
#ifndef DIASEG_TEST_CHECK_H
#define DIASEG_TEST_CHECK_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>

static int check_failures = 0;
static long check_count = 0;

#define CHECK(cond, ...)                                                                           \
  do {                                                                                             \
    check_count++;                                                                                 \
    if (!(cond)) {                                                                                 \
      check_failures++;                                                                            \
      if (check_failures <= 25) {                                                                  \
        fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond);                   \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fputc('\n', stderr);                                                                       \
      }                                                                                            \
    }                                                                                              \
  } while (0)

/* |a - b| <= atol + rtol |b|, and neither is NaN */
#define CLOSE(a, b, rtol, atol)                                                                    \
  (fabs((double)(a) - (double)(b)) <= (atol) + (rtol)*fabs((double)(b)))

static int check_report(const char *name)
{
  if (check_failures)
    fprintf(stderr, "%s: %d of %ld checks FAILED\n", name, check_failures, check_count);
  else
    printf("%s: all %ld checks passed\n", name, check_count);
  return check_failures ? 1 : 0;
}

/* Deterministic test randomness (splitmix64). */
static uint64_t test_rng_state = 12345;
static inline uint64_t test_rand64(void)
{
  uint64_t z = (test_rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static inline double test_uniform(void) { return (double)(test_rand64() >> 11) * 0x1.0p-53; }

/* A random DIA matrix for the product tests: ndiag distinct offsets in (-rows, rows) including
 * 0, values in [-1, 1] where the column is inside, zero elsewhere (the layout's invariant). */
#include "spmv.h"
#include <stdlib.h>

static inline spmv_dia *test_random_dia(int rows, int ndiag)
{
  int *off = malloc((size_t)ndiag * sizeof(*off)), k = 0;
  spmv_dia *A = NULL;
  if (ndiag > 2 * rows - 1)
    ndiag = 2 * rows - 1;
  off[k++] = 0;
  while (k < ndiag) {
    int o = (int)(test_rand64() % (uint64_t)(2 * rows - 1)) - (rows - 1), dup = 0;
    for (int i = 0; i < k; i++)
      dup |= off[i] == o;
    if (!dup)
      off[k++] = o;
  }
  for (int i = 1; i < k; i++) /* insertion sort */
    for (int j = i; j > 0 && off[j] < off[j - 1]; j--) {
      int t = off[j];
      off[j] = off[j - 1];
      off[j - 1] = t;
    }
  if (spmv_dia_create(&A, rows, k, off) == DSG_OK)
    for (int d = 0; d < k; d++)
      for (int r = 0; r < rows; r++) {
        long long c = (long long)r + off[d];
        if (c >= 0 && c < rows)
          A->values[(size_t)d * A->pitch + r] = (float)(2 * test_uniform() - 1);
      }
  free(off);
  return A;
}

/* The library's tests: a cue of the table by name (app/lib/cues.c). */
#ifdef DIASEG_INTERNAL_H
static inline const app_cue *test_cue(const char *name)
{
  const app_cue *c = NULL;
  app_cue_find(name, &c);
  return c;
}
#endif

#endif
