/* The threaded C product and the matvec interface equal the scalar reference on random DIA
 * matrices of awkward sizes; the reference itself equals a dense product. The connected
 * components (spmv_dia_components, which reads each pixel pair once from a diagonal and its
 * mirror) equal a label propagation over every stored entry, and hand-made cases where only the
 * lower side of a pair, or only a diagonal below the main one, links two rows; an image's links
 * on 1, 3 and 8 threads (the union-find's bands of rows). */
#include "check.h"
#include "spmv.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

/* A random DIA matrix: ndiag distinct offsets in (-rows, rows) always including 0, values in
 * [-1, 1] where the column is inside, zero elsewhere (the layout's invariant). */

/* The reference: every row takes the smallest label among the rows it is linked to (|a| >
 * threshold either way) until nothing changes; then numbered by first appearance. */
static int components_reference(const spmv_dia *A, float threshold, int *label)
{
  const int n = A->rows;
  int *lab = malloc((size_t)n * sizeof(*lab)), *id = malloc((size_t)n * sizeof(*id)), count = 0;
  for (int i = 0; i < n; i++) {
    lab[i] = i;
    id[i] = -1;
  }
  for (int changed = 1; changed;) {
    changed = 0;
    for (int d = 0; d < A->ndiag; d++)
      for (int r = 0; r < n; r++) {
        const int c = r + A->offsets[d];
        if (A->offsets[d] == 0 || c < 0 || c >= n ||
            !(fabsf(A->values[(size_t)d * A->pitch + r]) > threshold))
          continue;
        const int m = lab[r] < lab[c] ? lab[r] : lab[c];
        changed |= lab[r] != m || lab[c] != m;
        lab[r] = lab[c] = m;
      }
  }
  for (int i = 0; i < n; i++) {
    if (id[lab[i]] < 0)
      id[lab[i]] = count++;
    label[i] = id[lab[i]];
  }
  free(lab);
  free(id);
  return count;
}

/* An image's links (a disc of radius 2 on a 200-pixel-wide grid: offsets up to 402 rows away),
 * random values: the components at 0.92 and, nested, at 0.88 (thousands of them) equal the
 * reference's with 1, 3 and 8 threads (the union-find works in bands of rows, one per thread,
 * then joins the pairs that cross them). */
static void test_components_banded(void)
{
  const int w = 200, h = 200, n = w * h;
  int offsets[32], ndiag = 0;
  for (int dy = -2; dy <= 2; dy++)
    for (int dx = -2; dx <= 2; dx++)
      if (dx * dx + dy * dy <= 4)
        offsets[ndiag++] = dy * w + dx;
  spmv_dia *A = NULL;
  CHECK(spmv_dia_create(&A, n, ndiag, offsets) == DSG_OK, "create");
  if (!A)
    return;
  for (int d = 0; d < ndiag; d++)
    for (int r = 0; r < n; r++) {
      const int c = r + offsets[d];
      A->values[(size_t)d * A->pitch + r] = c >= 0 && c < n ? (float)test_uniform() : 0.0f;
    }
  int *want_in = malloc((size_t)n * sizeof(int)), *want_out = malloc((size_t)n * sizeof(int));
  int *got_in = malloc((size_t)n * sizeof(int)), *got_out = malloc((size_t)n * sizeof(int));
  const int nwant_in = components_reference(A, 0.92f, want_in),
            nwant_out = components_reference(A, 0.88f, want_out);
  spmv_links inner, outer;
  CHECK(spmv_dia_links(A, 0.92f, &inner) == DSG_OK && spmv_dia_links(A, 0.88f, &outer) == DSG_OK,
        "links: %s", dsg_error_message());
  const int before = omp_get_max_threads();
  static const int threads[] = {1, 3, 8};
  for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
    int nin = -1, nout = -1, wrong_in = 0, wrong_out = 0;
    omp_set_num_threads(threads[t]);
    CHECK(spmv_links_components_nested(&inner, &outer, got_in, &nin, got_out, &nout) == DSG_OK,
          "nested components: %s", dsg_error_message());
    for (int i = 0; i < n; i++) {
      wrong_in += got_in[i] != want_in[i];
      wrong_out += got_out[i] != want_out[i];
    }
    CHECK(nin == nwant_in && nout == nwant_out && wrong_in == 0 && wrong_out == 0,
          "200x200 disc, %d threads: %d (want %d) and %d (want %d) components, %d and %d rows off",
          threads[t], nin, nwant_in, nout, nwant_out, wrong_in, wrong_out);
    printf("  200x200 disc, %d threads: %d and %d components, as the reference\n", threads[t], nin,
           nout);
  }
  omp_set_num_threads(before);
  spmv_links_free(&inner);
  spmv_links_free(&outer);
  free(want_in);
  free(want_out);
  free(got_in);
  free(got_out);
  spmv_dia_destroy(A);
}

static void test_components(void)
{
  static const int sizes[] = {1, 2, 5, 33, 1000, 4097};
  static const int ndiags[] = {1, 3, 81};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
    for (size_t q = 0; q < sizeof(ndiags) / sizeof(ndiags[0]); q++) {
      const int n = sizes[s];
      spmv_dia *A = test_random_dia(n, ndiags[q]);
      int *got = malloc((size_t)n * sizeof(*got)), *want = malloc((size_t)n * sizeof(*want));
      int ngot = -1, wrong = 0;
      /* 0.9: most entries below it, so that the graph has many components */
      CHECK(spmv_dia_components(A, 0.9f, got, &ngot) == DSG_OK, "components");
      const int nwant = components_reference(A, 0.9f, want);
      for (int i = 0; i < n; i++)
        wrong += got[i] != want[i];
      CHECK(ngot == nwant && wrong == 0, "n %d, %d diagonals: %d components (want %d), %d rows off",
            n, ndiags[q], ngot, nwant, wrong);
      /* nested: the components at 0.9 and, built on them, at 0.5, against the reference's */
      spmv_links inner, outer;
      int *in_got = malloc((size_t)n * sizeof(*in_got)),
          *want_outer = malloc((size_t)n * sizeof(int));
      int nin = -1, nout = -1, wrong_in = 0, wrong_out = 0;
      CHECK(spmv_dia_links(A, 0.9f, &inner) == DSG_OK &&
                spmv_dia_links(A, 0.5f, &outer) == DSG_OK &&
                spmv_links_components_nested(&inner, &outer, in_got, &nin, got, &nout) == DSG_OK,
            "nested components: %s", dsg_error_message());
      const int nwant_outer = components_reference(A, 0.5f, want_outer);
      for (int i = 0; i < n; i++) {
        wrong_in += in_got[i] != want[i];
        wrong_out += got[i] != want_outer[i];
      }
      CHECK(nin == nwant && wrong_in == 0 && nout == nwant_outer && wrong_out == 0,
            "n %d, %d diagonals, nested: %d (want %d) and %d (want %d) components, %d and %d rows "
            "off",
            n, ndiags[q], nin, nwant, nout, nwant_outer, wrong_in, wrong_out);
      spmv_links_free(&inner);
      spmv_links_free(&outer);
      free(in_got);
      free(want_outer);
      free(got);
      free(want);
      spmv_dia_destroy(A);
    }
  {
    /* offsets -2, 0, 2: the pair (1, 3) above threshold only on the lower side (row 3) */
    const int offsets[] = {-2, 0, 2}, want[6] = {0, 1, 2, 1, 3, 4};
    spmv_dia *A = NULL;
    int got[6], count = 0, wrong = 0;
    CHECK(spmv_dia_create(&A, 6, 3, offsets) == DSG_OK, "create");
    if (A) {
      A->values[3] = 1.0f; /* diagonal 0 (offset -2), row 3: entry (3, 1) */
      CHECK(spmv_dia_components(A, 0.5f, got, &count) == DSG_OK, "components");
      for (int i = 0; i < 6; i++)
        wrong += got[i] != want[i];
      CHECK(count == 5 && wrong == 0, "a pair linked from below: %d components, %d rows off", count,
            wrong);
    }
    spmv_dia_destroy(A);
  }
  {
    /* offsets -1, 0 (no diagonal above): a chain linked from below only */
    const int offsets[] = {-1, 0};
    spmv_dia *A = NULL;
    int got[5], count = 0;
    CHECK(spmv_dia_create(&A, 5, 2, offsets) == DSG_OK, "create");
    if (A) {
      for (int r = 1; r < 5; r++)
        A->values[r] = 1.0f;
      A->values[3] = 0.0f; /* (3, 2) cut: {0, 1, 2} and {3, 4} */
      CHECK(spmv_dia_components(A, 0.5f, got, &count) == DSG_OK, "components");
      CHECK(count == 2 && got[0] == 0 && got[2] == 0 && got[3] == 1 && got[4] == 1,
            "a chain below the diagonal: %d components", count);
    }
    spmv_dia_destroy(A);
  }
}

/* A random symmetric DIA matrix (spmv_dia.symmetric): 0 and `half` distinct offsets o > 0 with
 * their mirrors -o; the values above the main diagonal random, those below their mirrors'. */
static spmv_dia *random_symmetric(int rows, int half)
{
  int *pos = malloc((size_t)(half + 1) * sizeof(*pos)), k = 0;
  int *off = malloc((size_t)(2 * half + 1) * sizeof(*off));
  spmv_dia *A = NULL;
  if (half > rows - 1)
    half = rows - 1;
  while (k < half) {
    int o = 1 + (int)(test_rand64() % (uint64_t)(rows - 1)), dup = 0;
    for (int i = 0; i < k; i++)
      dup |= pos[i] == o;
    if (!dup)
      pos[k++] = o;
  }
  for (int i = 1; i < k; i++)
    for (int j = i; j > 0 && pos[j] < pos[j - 1]; j--) {
      int t = pos[j];
      pos[j] = pos[j - 1];
      pos[j - 1] = t;
    }
  for (int i = 0; i < k; i++) {
    off[k - 1 - i] = -pos[i];
    off[k + 1 + i] = pos[i];
  }
  off[k] = 0;
  if (spmv_dia_create(&A, rows, 2 * k + 1, off) == DSG_OK) {
    for (int r = 0; r < rows; r++)
      A->values[(size_t)k * A->pitch + r] = (float)(2 * test_uniform() - 1);
    for (int i = 0; i < k; i++)
      for (int r = 0; r + pos[i] < rows; r++) {
        const float v = (float)(2 * test_uniform() - 1);
        A->values[(size_t)(k + 1 + i) * A->pitch + r] = v;
        A->values[(size_t)(k - 1 - i) * A->pitch + r + pos[i]] = v;
      }
    A->symmetric = 1;
  }
  free(pos);
  free(off);
  return A;
}

/* The product of a symmetric matrix from its upper half equals the reference; it reads no
 * entry below the main diagonal (they are overwritten after the reference and the product does
 * not change); validate holds the matrix to the mirror promise. */
static void test_symmetric(void)
{
  static const int sizes[] = {1, 2, 3, 5, 31, 33, 127, 1000, 1025, 4097, 70001};
  static const int halves[] = {0, 1, 2, 4, 40, 158};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
    for (size_t q = 0; q < sizeof(halves) / sizeof(halves[0]); q++) {
      const int n = sizes[s];
      spmv_dia *A = random_symmetric(n, halves[q]);
      float *x = malloc((size_t)n * sizeof(*x)), *y = malloc((size_t)n * sizeof(*y));
      float *ref = malloc((size_t)n * sizeof(*ref));
      CHECK(A != NULL && x && y && ref, "random_symmetric(%d, %d)", n, halves[q]);
      if (A && x && y && ref) {
        CHECK(spmv_dia_validate(A) == DSG_OK, "n=%d half=%d: symmetric matrix validates: %s", n,
              halves[q], dsg_error_message());
        for (int i = 0; i < n; i++) {
          x[i] = (float)(2 * test_uniform() - 1);
          y[i] = NAN;
        }
        spmv_dia_mul_ref(A, x, ref);
        const int zero = A->ndiag / 2;
        for (int d = 0; d < zero; d++) /* below the main diagonal: never read */
          for (int r = 0; r < n; r++)
            if (r + A->offsets[d] >= 0)
              A->values[(size_t)d * A->pitch + r] = 1e3f;
        spmv_dia_mul(A, x, y);
        double e = spmv_dia_row_error(A, x, y, ref);
        CHECK(e <= 1e-5, "n=%d ndiag=%d: symmetric product vs reference: row error %.3g", n,
              A->ndiag, e);
        if (zero > 0 && n > 1)
          CHECK(spmv_dia_validate(A) == DSG_ERR_INVALID,
                "n=%d ndiag=%d: validate catches a "
                "broken mirror",
                n, A->ndiag);
      }
      spmv_dia_destroy(A);
      free(x);
      free(y);
      free(ref);
    }
  /* offsets that are not in pairs break the promise */
  {
    spmv_dia *A = NULL;
    int lop[] = {-2, 0, 1};
    CHECK(spmv_dia_create(&A, 5, 3, lop) == DSG_OK && A, "lopsided layout");
    if (A) {
      A->symmetric = 1;
      CHECK(spmv_dia_validate(A) == DSG_ERR_INVALID, "validate catches unpaired offsets");
    }
    spmv_dia_destroy(A);
  }
}

int main(void)
{
  test_symmetric();
  test_components();
  test_components_banded();
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
  /* the stencil's promise (spmv_dia.width): a 3 x 3 image, offsets of its 4-neighbours; an
   * entry linking the last pixel of a row to the first of the next breaks it, as does an
   * offset that no stencil of its width has (+-2 in a 4-wide image) */
  {
    spmv_dia *A = NULL;
    int four[] = {-3, -1, 1, 3}, wide[] = {-2, 2};
    CHECK(spmv_dia_create(&A, 9, 4, four) == DSG_OK && A, "4-neighbour layout");
    if (A) {
      A->width = 3;
      for (int d = 0; d < A->ndiag; d++)
        for (int r = 0; r < 9; r++) {
          const int c = r + four[d];
          const int across = (four[d] == 1 && r % 3 == 2) || (four[d] == -1 && r % 3 == 0);
          A->values[(size_t)d * A->pitch + r] = c >= 0 && c < 9 && !across ? 0.5f : 0.0f;
        }
      CHECK(spmv_dia_validate(A) == DSG_OK, "a true stencil of width 3: %s", dsg_error_message());
      A->values[(size_t)2 * A->pitch + 2] = 0.5f; /* offset +1 at row 2: pixel (2, 0) -> (0, 1) */
      CHECK(spmv_dia_validate(A) == DSG_ERR_INVALID && strstr(dsg_error_message(), "across"),
            "validate catches an entry across the image's edge: %s", dsg_error_message());
      A->values[(size_t)2 * A->pitch + 2] = 0.0f;
      A->width = 0; /* no promise: the same entry is an ordinary one */
      A->values[(size_t)2 * A->pitch + 2] = 0.5f;
      CHECK(spmv_dia_validate(A) == DSG_OK, "width 0 promises nothing: %s", dsg_error_message());
    }
    spmv_dia_destroy(A);
    A = NULL;
    CHECK(spmv_dia_create(&A, 8, 2, wide) == DSG_OK && A, "offsets +-2");
    if (A) {
      A->width = 4; /* +-2 in a 4-wide image: 2 columns over or 2 back a row, both half the width */
      CHECK(spmv_dia_validate(A) == DSG_ERR_INVALID && strstr(dsg_error_message(), "stencil"),
            "validate catches an offset no width-4 stencil has: %s", dsg_error_message());
    }
    spmv_dia_destroy(A);
  }
  return check_report("test_matvec");
}
