/* The threaded C product and the matvec interface equal the scalar reference on random DIA
 * matrices of awkward sizes; the reference itself equals a dense product. */
#include "check.h"
#include "spmv.h"

#include <stdlib.h>
#include <string.h>

/* A random DIA matrix: ndiag distinct offsets in (-rows, rows) always including 0, values in
 * [-1, 1] where the column is inside, zero elsewhere (the layout's invariant). */

int main(void)
{
  static const int sizes[] = {1, 2, 3, 5, 31, 32, 33, 127, 1000, 1023, 1025, 4097, 70001};
  static const int ndiags[] = {1, 3, 81, 317};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    for (size_t q = 0; q < sizeof(ndiags) / sizeof(ndiags[0]); q++) {
      const int n = sizes[s];
      spmv_dia *A = test_random_dia(n, ndiags[q]);
      float *x = malloc((size_t)n * sizeof(*x)), *y = malloc((size_t)n * sizeof(*y));
      float *ref = malloc((size_t)n * sizeof(*ref)), *y2 = malloc((size_t)n * sizeof(*y2));
      spmv_matvec *mv = NULL;
      CHECK(A != NULL, "test_random_dia(%d, %d)", n, ndiags[q]);
      if (!A)
        continue;
      for (int i = 0; i < n; i++) {
        x[i] = (float)(2 * test_uniform() - 1);
        y[i] = y2[i] = NAN; /* poison: every entry must be written */
      }
      spmv_dia_mul_ref(A, x, ref);
      spmv_dia_mul(A, x, y);
      double e = spmv_dia_row_error(A, x, y, ref);
      CHECK(e <= 1e-5, "n=%d ndiag=%d: threaded vs reference: row error %.3g", n, A->ndiag, e);
      CHECK(spmv_matvec_create_cpu(&mv, A) == DSG_OK, "create cpu matvec");
      CHECK(spmv_matvec_apply(mv, x, y2) == DSG_OK, "apply");
      CHECK(memcmp(y, y2, (size_t)n * sizeof(*y)) == 0,
            "n=%d: matvec object differs from "
            "spmv_dia_mul",
            n);
      spmv_timing t = spmv_matvec_timing(mv);
      CHECK(t.calls == 1 && t.total_s >= t.kernel_s && t.kernel_s >= 0, "timing %ld %g %g", t.calls,
            t.total_s, t.kernel_s);
      CHECK(strcmp(spmv_matvec_backend(mv), "cpu") == 0 && spmv_matvec_rows(mv) == n, "backend");
      /* reference vs a dense product, for the small ones */
      if (n <= 127) {
        for (int r = 0; r < n; r++) {
          double acc = 0;
          for (int c = 0; c < n; c++)
            for (int d = 0; d < A->ndiag; d++)
              if (A->offsets[d] == c - r)
                acc += (double)A->values[(size_t)d * A->pitch + r] * x[c];
          CHECK(CLOSE(ref[r], acc, 1e-6, 1e-6), "n=%d: reference row %d = %g, dense %g", n, r,
                ref[r], acc);
        }
      }
      spmv_matvec_destroy(mv);
      spmv_dia_destroy(A);
      free(x);
      free(y);
      free(y2);
      free(ref);
    }
  }
  /* creation refuses bad layouts */
  {
    spmv_dia *A = NULL;
    int bad1[] = {0, 0}, bad2[] = {1, -1}, bad3[] = {5};
    CHECK(spmv_dia_create(&A, 4, 2, bad1) == DSG_ERR_INVALID && !A, "duplicate offsets");
    CHECK(spmv_dia_create(&A, 4, 2, bad2) == DSG_ERR_INVALID && !A, "descending offsets");
    CHECK(spmv_dia_create(&A, 4, 1, bad3) == DSG_ERR_INVALID && !A, "offset outside");
    CHECK(spmv_dia_create(&A, 0, 1, bad1) == DSG_ERR_INVALID && !A, "zero rows");
    int ok[] = {-1, 0, 1};
    CHECK(spmv_dia_create(&A, 4, 3, ok) == DSG_OK && A, "valid");
    if (A) {
      A->values[0] = 1.0f; /* row 0, offset -1: column -1 lies outside and must stay zero */
      CHECK(spmv_dia_validate(A) == DSG_ERR_INVALID, "validate catches a value outside");
    }
    spmv_dia_destroy(A);
  }
  return check_report("test_matvec");
}
