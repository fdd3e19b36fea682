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

#endif
