/* The hierarchy's watershed (app/lib/hierarchy.c) against a reference written here: pixels
 * visited by ascending strength, ties by index (qsort on (value, index)), NaN and infinities as
 * 0, each joining its lowest labelled 4-neighbour. The maps are random with many ties (a few
 * levels), negative values, -0 and +0, NaN and infinities, so that the library's radix order must
 * match the comparison order exactly; then the hierarchy's own invariants (nregions - 1 merges at
 * ascending levels, every region below min_area merged first). */
#include "diaseg_internal.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_key {
  float v;
  int i;
} ref_key;

static int ref_cmp(const void *a, const void *b)
{
  const ref_key *p = a, *q = b;
  if (p->v != q->v)
    return p->v < q->v ? -1 : 1;
  return p->i - q->i;
}

static int ref_watershed(const float *E, int w, int h, int32_t *label)
{
  const size_t n = (size_t)w * h;
  ref_key *order = malloc(n * sizeof(*order));
  for (size_t i = 0; i < n; i++) {
    order[i].v = isfinite(E[i]) ? E[i] : 0.0f;
    order[i].i = (int)i;
    label[i] = -1;
  }
  qsort(order, n, sizeof(*order), ref_cmp);
  int count = 0;
  for (size_t t = 0; t < n; t++) {
    const int p = order[t].i, x = p % w, y = p / w;
    const int nb[4] = {x > 0 ? p - 1 : -1, x + 1 < w ? p + 1 : -1, y > 0 ? p - w : -1,
                       y + 1 < h ? p + w : -1};
    int best = -1;
    for (int k = 0; k < 4; k++)
      if (nb[k] >= 0 && label[nb[k]] >= 0 && (best < 0 || E[nb[k]] < E[best]))
        best = nb[k];
    label[p] = best >= 0 ? label[best] : count++;
  }
  free(order);
  return count;
}

int main(void)
{
  static const int sizes[][2] = {{1, 1}, {7, 1}, {1, 9}, {17, 13}, {64, 48}, {120, 90}};
  static const float special[] = {0.0f, -0.0f, NAN, INFINITY, -INFINITY, -0.25f, 1e-30f};
  for (int trial = 0; trial < 24; trial++) {
    const int w = sizes[trial % 6][0], h = sizes[trial % 6][1];
    const size_t n = (size_t)w * h;
    const int levels = trial < 12 ? 5 : 1000; /* many ties, then few */
    float *E = malloc(n * sizeof(*E));
    int32_t *ref = malloc(n * sizeof(*ref));
    for (size_t i = 0; i < n; i++) {
      E[i] = (float)(test_rand64() % (uint64_t)levels) / levels - (trial % 3 == 0 ? 0.3f : 0.0f);
      if (test_rand64() % 17 == 0)
        E[i] = special[test_rand64() % 7];
    }
    const int R = ref_watershed(E, w, h, ref);
    app_hierarchy H;
    const int min_area = trial % 2 ? 1 : 6;
    CHECK(app_hierarchy_build(E, w, h, min_area, &H) == DSG_OK, "%dx%d: %s", w, h,
          dsg_error_message());
    CHECK(H.nregions == R, "%dx%d trial %d: %d regions, the reference %d", w, h, trial, H.nregions,
          R);
    int same = H.nregions == R;
    for (size_t i = 0; same && i < n; i++)
      same = H.region[i] == ref[i];
    CHECK(same, "%dx%d trial %d: the watershed differs from the (value, index) order", w, h, trial);
    CHECK(H.nmerges == (R > 0 ? R - 1 : 0), "%dx%d: %d merges of %d regions", w, h, H.nmerges, R);
    int ascending = 1;
    for (int m = 1; m < H.nmerges; m++)
      ascending = ascending && H.merge_level[m] >= H.merge_level[m - 1];
    CHECK(ascending, "%dx%d trial %d: merge levels not ascending", w, h, trial);
    app_hierarchy_free(&H);
    free(E);
    free(ref);
  }
  return check_report("test_hierarchy");
}
