/* A region hierarchy from a boundary-strength map: watershed regions, then greedy merging of the
 * two regions whose common boundary is weakest on average, until one region is left (after the
 * oriented watershed and ultrametric contour map of Arbelaez, Maire, Fowlkes & Malik, TPAMI
 * 2011). Every scale comes from one pass: a cut at k regions replays the first merges, the
 * ultrametric contour map (UCM) gives every boundary the level at which it disappears.
 *
 * Boundaries lie on the cracks between 4-adjacent pixels. Crack c between pixels p and q has
 * strength (E_p + E_q) / 2; the strength of the boundary between two regions is the mean over its
 * cracks. Regions smaller than min_area pixels merge first (their weakest neighbour) at level 0,
 * so that a cut at k regions is k regions a person can see rather than specks of texture or the
 * slivers a watershed leaves along a strong edge. Levels are made increasing (each merge's level is
 * above the one before), which makes the UCM an ultrametric whose every cut at k regions is a cut
 * at a level. */
#include "diaseg_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct edge {
  int a, b;         /* the regions it joins (current representatives), a < b */
  double sum;       /* crack strengths */
  double key;       /* the key of its live heap entry */
  long count;       /* cracks */
  int into;         /* the edge it joined when its two regions' boundaries became one, else -1 */
  float level;      /* the level at which its two regions merged (alive ones: 0) */
  unsigned version; /* bumped at each change: heap entries with an older one are stale */
  int alive;
  int deferred; /* its key is to be made when the specks are gone (hier_state's deferred) */
} edge;

typedef struct heap_item {
  double key;
  int e;
  unsigned version;
} heap_item;

typedef struct hier_state {
  edge *edges;
  int nedges, cap_edges;
  int *crack_edge; /* 2 n: each crack's first edge (-1: inside a region) */
  /* hash of (a, b) -> edge, open addressing */
  int64_t *keys;
  int *vals;
  size_t hcap, hused; /* slots, and slots with a key (live or forgotten) */
  heap_item *heap;
  size_t nheap, cap_heap;
  int **adj; /* per region: its edges (may hold dead ones) */
  int *nadj, *cap_adj;
  long *area;
  int min_area;
  /* the region cue (NULL: none): each region's histogram of every channel, counts */
  const app_region_cue *cue;
  float *hist; /* R x nbins */
  int nbins, first[APP_CONTOUR_CHANNELS], bins[APP_CONTOUR_CHANNELS];
  double wsum; /* the cue's weights' sum */
  /* While regions below min_area remain, every merge is a speck's (their keys are below all
   * others), so the keys of the edges between two larger regions are not needed yet: the heap
   * holds the specks' edges only, and the others' keys are made once, when it is empty
   * (flush_deferred), not at every change of their regions (with the region cue, a histogram
   * distance each time). The merges are the same, in the same order. */
  int deferring;
  int *deferred, ndeferred, cap_deferred;
  int width, height;
  const float *E; /* the map (the base arcs' learnt strengths read it) */
} hier_state;

static uint64_t mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  return x;
}

/* doubles the table (at half load), keeping the live keys */
static int hash_grow(hier_state *s)
{
  const size_t old = s->hcap;
  int64_t *keys = s->keys;
  int *vals = s->vals;
  s->hcap = 2 * old;
  s->keys = malloc(s->hcap * sizeof(*s->keys));
  s->vals = malloc(s->hcap * sizeof(*s->vals));
  if (!s->keys || !s->vals) {
    free(keys);
    free(vals);
    return -1;
  }
  memset(s->keys, 0xff, s->hcap * sizeof(*s->keys));
  s->hused = 0;
  for (size_t i = 0; i < old; i++)
    if (keys[i] != -1 && vals[i] >= 0) {
      size_t j = mix((uint64_t)keys[i]) & (s->hcap - 1);
      while (s->keys[j] != -1)
        j = (j + 1) & (s->hcap - 1);
      s->keys[j] = keys[i];
      s->vals[j] = vals[i];
      s->hused++;
    }
  free(keys);
  free(vals);
  return 0;
}

/* the value slot of (a, b); with insert, a new key gets value -1 (NULL: out of memory) */
static int *hash_slot(hier_state *s, int a, int b, int insert)
{
  const int64_t key = ((int64_t)a << 32) | (uint32_t)b;
  if (insert && 2 * (s->hused + 1) > s->hcap && hash_grow(s))
    return NULL;
  size_t i = mix((uint64_t)key) & (s->hcap - 1);
  while (s->keys[i] != -1 && s->keys[i] != key)
    i = (i + 1) & (s->hcap - 1);
  if (s->keys[i] == -1) {
    if (!insert)
      return NULL;
    s->keys[i] = key;
    s->vals[i] = -1;
    s->hused++;
  }
  return &s->vals[i];
}

/* removal by a tombstone would break probing: mark the value dead instead */
static void hash_forget(hier_state *s, int a, int b)
{
  int *v = hash_slot(s, a, b, 0);
  if (v)
    *v = -1;
}

/* The heap's order: the key, then the edge (so that the order of equal keys does not depend on
 * the heap's history). */
static int heap_before(const heap_item *x, const heap_item *y)
{
  return x->key < y->key || (x->key == y->key && x->e < y->e);
}

static int heap_push(hier_state *s, double key, int e)
{
  if (s->nheap == s->cap_heap) {
    size_t cap = s->cap_heap ? 2 * s->cap_heap : 1024;
    heap_item *h = realloc(s->heap, cap * sizeof(*h));
    if (!h)
      return -1;
    s->heap = h;
    s->cap_heap = cap;
  }
  size_t i = s->nheap++;
  heap_item it = {key, e, s->edges[e].version};
  s->edges[e].key = key;
  while (i > 0 && heap_before(&it, &s->heap[(i - 1) / 2])) {
    s->heap[i] = s->heap[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  s->heap[i] = it;
  return 0;
}

/* chi-squared distance of regions a's and b's histograms in channel c, in [0, 1] */
static double region_chi2(const hier_state *s, int a, int b, int c)
{
  const float *ha = s->hist + (size_t)a * s->nbins + s->first[c],
              *hb = s->hist + (size_t)b * s->nbins + s->first[c];
  const double na = 1.0 / (double)s->area[a], nb = 1.0 / (double)s->area[b];
  double d = 0.0;
  for (int k = 0; k < s->bins[c]; k++) {
    const double p = ha[k] * na, q = hb[k] * nb;
    if (p + q > 0.0)
      d += (p - q) * (p - q) / (p + q);
  }
  return 0.5 * d;
}

/* the merge key: the boundary's mean strength; with the region cue, between two regions of
 * min_area or more, plus the regions' histogram distances, each times its channel's weight and
 * the trust in the smaller region's histograms, a / (a + cue->area) for a pixels (a sliver's
 * histogram says little), all divided by 1 + the weights' sum, so that a map in [0, 1] keeps
 * its levels there */
static double edge_key(const hier_state *s, const edge *e)
{
  double key = e->sum / (double)e->count;
  if (s->area[e->a] < s->min_area || s->area[e->b] < s->min_area)
    return key - 1e9; /* a speck joins its weakest boundary's neighbour, as without the cue */
  if (s->cue) {
    const long smaller = s->area[e->a] < s->area[e->b] ? s->area[e->a] : s->area[e->b];
    const double trust = (double)smaller / ((double)smaller + s->cue->area);
    for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
      if (s->cue->weight[c] != 0.0)
        key += trust * s->cue->weight[c] * region_chi2(s, e->a, e->b, c);
    key /= 1.0 + s->wsum;
  }
  return key;
}

/* An edge between two regions of min_area or more while specks remain: its entry becomes stale
 * and its key is made by flush_deferred. */
static int defer(hier_state *s, int e)
{
  edge *ed = &s->edges[e];
  if (ed->deferred)
    return 0;
  if (s->ndeferred == s->cap_deferred) {
    const int cap = s->cap_deferred ? 2 * s->cap_deferred : 1024;
    int *d = realloc(s->deferred, (size_t)cap * sizeof(*d));
    if (!d)
      return -1;
    s->deferred = d;
    s->cap_deferred = cap;
  }
  s->deferred[s->ndeferred++] = e;
  ed->deferred = 1;
  ed->version++;
  return 0;
}

static int speck_edge(const hier_state *s, const edge *e)
{
  return s->area[e->a] < s->min_area || s->area[e->b] < s->min_area;
}

/* Queues edge e again where its key changed (a merge changed its mean, or a region at one side
 * reached min_area): the entry queued before becomes stale. An unchanged key keeps its entry. */
static int requeue(hier_state *s, int e)
{
  if (s->deferring && !speck_edge(s, &s->edges[e]))
    return defer(s, e);
  const double key = edge_key(s, &s->edges[e]);
  if (key == s->edges[e].key || (key != key && s->edges[e].key != s->edges[e].key)) /* NaN */
    return 0;
  s->edges[e].version++;
  return heap_push(s, key, e);
}

/* The base arcs (the edges left when the specks have merged, before any other merge): their
 * learnt strengths (arcs.c) become their cracks' strengths, each edge's sum theirs. */
static int learn_arcs(hier_state *s)
{
  const size_t n = (size_t)s->width * s->height;
  int *arc_of = malloc((size_t)(s->nedges ? s->nedges : 1) * sizeof(*arc_of));
  int *ra = NULL, *rb = NULL, *arc = NULL, narcs = 0, status = -1;
  size_t *crack = NULL, ncr = 0;
  float *v = NULL;
  if (!arc_of)
    goto out;
  for (int e = 0; e < s->nedges; e++)
    arc_of[e] = s->edges[e].alive ? narcs++ : -1;
  ra = malloc((size_t)(narcs ? narcs : 1) * sizeof(*ra));
  rb = malloc((size_t)(narcs ? narcs : 1) * sizeof(*rb));
  for (size_t c = 0; c < 2 * n; c++)
    ncr += s->crack_edge[c] >= 0;
  crack = malloc((ncr ? ncr : 1) * sizeof(*crack));
  arc = malloc((ncr ? ncr : 1) * sizeof(*arc));
  v = malloc((ncr ? ncr : 1) * sizeof(*v));
  if (!ra || !rb || !crack || !arc || !v)
    goto out;
  for (int e = 0; e < s->nedges; e++)
    if (arc_of[e] >= 0) {
      ra[arc_of[e]] = s->edges[e].a;
      rb[arc_of[e]] = s->edges[e].b;
      s->edges[e].sum = 0.0;
    }
  /* the cracks of the live edges: an edge joined into another (into) is followed to its end,
   * and the crack points there from now on (its level at the end is that edge's) */
  ncr = 0;
  for (size_t c = 0; c < 2 * n; c++) {
    int e = s->crack_edge[c];
    if (e < 0)
      continue;
    while (s->edges[e].into >= 0)
      e = s->edges[e].into;
    if (arc_of[e] < 0) /* inside a region: a speck's boundary */
      continue;
    s->crack_edge[c] = e;
    crack[ncr] = c;
    arc[ncr++] = arc_of[e];
  }
  const app_arc_input in = {s->width, s->height, s->E,     s->cue->arcs, ncr,
                            crack,    arc,       narcs,    ra,           rb,
                            s->area,  s->hist,   s->nbins, s->first,     s->bins};
  if (app_arc_strengths(&in, v) != DSG_OK)
    goto out;
  for (size_t i = 0; i < ncr; i++)
    s->edges[s->crack_edge[crack[i]]].sum += (double)v[i];
  status = 0;
out:
  free(arc_of);
  free(ra);
  free(rb);
  free(crack);
  free(arc);
  free(v);
  return status;
}

/* The deferred edges' keys, made now that no speck is left to merge first: every live entry
 * then has the key its edge has now, as if it had been made at each change (the heap's order,
 * key then edge, does not depend on when an entry came). */
static int flush_deferred(hier_state *s)
{
  s->deferring = 0;
  if (s->cue && s->cue->arcs && learn_arcs(s))
    return -1;
  for (int i = 0; i < s->ndeferred; i++) {
    edge *e = &s->edges[s->deferred[i]];
    e->deferred = 0;
    if (e->alive && heap_push(s, edge_key(s, e), s->deferred[i]))
      return -1;
  }
  s->ndeferred = 0;
  return 0;
}

static heap_item heap_pop(hier_state *s)
{
  heap_item top = s->heap[0], last = s->heap[--s->nheap];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= s->nheap)
      break;
    if (c + 1 < s->nheap && heap_before(&s->heap[c + 1], &s->heap[c]))
      c++;
    if (!heap_before(&s->heap[c], &last))
      break;
    s->heap[i] = s->heap[c];
    i = c;
  }
  if (s->nheap > 0)
    s->heap[i] = last;
  return top;
}

static int adj_add(hier_state *s, int r, int e)
{
  if (s->nadj[r] == s->cap_adj[r]) {
    int cap = s->cap_adj[r] ? 2 * s->cap_adj[r] : 4;
    int *a = realloc(s->adj[r], (size_t)cap * sizeof(*a));
    if (!a)
      return -1;
    s->adj[r] = a;
    s->cap_adj[r] = cap;
  }
  s->adj[r][s->nadj[r]++] = e;
  return 0;
}

/* the merge order: the weakest mean boundary first, boundaries of small regions before all */

/* the watershed of E: pixels in ascending order, each joining the region of its lowest
 * already-labelled 4-neighbour, or starting a new one */

/* A float's order as an unsigned integer's (-0 as +0; NaN and infinities are mapped to 0 before) */
static uint32_t order_key(float v)
{
  uint32_t u;
  if (v == 0.0f)
    v = 0.0f;
  memcpy(&u, &v, sizeof(u));
  return u & 0x80000000u ? ~u : u | 0x80000000u;
}

/* a seed of the watershed: its pixel and its order key */
typedef struct seed {
  uint32_t key;
  int pixel;
} seed;

static int seed_cmp(const void *a, const void *b)
{
  const seed *p = a, *q = b;
  if (p->key != q->key)
    return p->key < q->key ? -1 : 1;
  return (p->pixel > q->pixel) - (p->pixel < q->pixel);
}

/* The watershed of E: the pixels by ascending strength, ties by index (NaN and infinities as 0),
 * each joining the region of its lowest 4-neighbour among those before it, or starting a region
 * where none is; regions are numbered in the order they start. Which neighbours come before a
 * pixel depends on the two pixels' keys alone, so each pixel's choice (its parent) is made on its
 * own, in parallel, without sorting the pixels; the regions' numbers come from a sort of the
 * seeds (the pixels with no parent, a few thousand), and each pixel takes its seed's number by
 * following its parents (each before the last, so the chains end). The labels of the sequential
 * flood in that order, exactly (test_hierarchy: against a flood over a comparison sort). */
static int watershed(const float *E, int w, int h, int32_t *label, int *nregions)
{
  const size_t n = (size_t)w * h;
  uint32_t *key = malloc(n * sizeof(*key));
  seed *seeds = NULL;
  int count = 0, nseeds = 0, status = DSG_OK;
  if (!key) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the watershed of %zu pixels", n);
    goto out;
  }
#pragma omp parallel for schedule(static)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++) {
    key[i] = order_key(isfinite(E[i]) ? E[i] : 0.0f);
  }
  /* each pixel's parent: the lowest neighbour before it (the first in the order left, right, up,
   * down among equals), or itself (a seed) */
#pragma omp parallel for schedule(static) reduction(+ : count)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++) {
    const int p = (int)i, x = p % w, y = p / w;
    const int nb[4] = {x > 0 ? p - 1 : -1, x + 1 < w ? p + 1 : -1, y > 0 ? p - w : -1,
                       y + 1 < h ? p + w : -1};
    int best = -1;
    for (int k = 0; k < 4; k++) {
      const int q = nb[k];
      if (q >= 0 && (key[q] < key[p] || (key[q] == key[p] && q < p)) &&
          (best < 0 || E[q] < E[best]))
        best = q;
    }
    label[p] = best >= 0 ? best : p;
    count += best < 0;
  }
  seeds = malloc((count ? (size_t)count : 1) * sizeof(*seeds));
  if (!seeds) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the watershed of %zu pixels", n);
    goto out;
  }
  for (size_t i = 0; i < n; i++)
    if (label[i] == (int32_t)i)
      seeds[nseeds++] = (seed){key[i], (int)i};
  qsort(seeds, (size_t)count, sizeof(*seeds), seed_cmp);
  for (int r = 0; r < count; r++) /* a seed's key becomes its region's number */
    key[seeds[r].pixel] = (uint32_t)r;
  /* every pixel's parent becomes its seed (the chains halved as they are walked), then the
   * seed's number */
  for (size_t i = 0; i < n; i++) {
    int32_t r = label[i];
    while (label[r] != r)
      r = label[r] = label[label[r]];
    label[i] = r;
  }
#pragma omp parallel for schedule(static)
  for (ptrdiff_t i = 0; i < (ptrdiff_t)n; i++)
    label[i] = (int32_t)key[label[i]];
out:
  free(key);
  free(seeds);
  *nregions = status == DSG_OK ? count : 0;
  return status;
}

void app_hierarchy_free(app_hierarchy *H)
{
  if (!H)
    return;
  free(H->region);
  free(H->merge_a);
  free(H->merge_b);
  free(H->merge_level);
  free(H->crack_level);
  memset(H, 0, sizeof(*H));
}

int app_hierarchy_build(const float *E, int w, int h, int min_area, app_hierarchy *H)
{
  return app_hierarchy_build_cue(E, NULL, w, h, min_area, H);
}

int app_hierarchy_build_cue(const float *E, const app_region_cue *cue, int w, int h, int min_area,
                            app_hierarchy *H)
{
  const size_t n = (size_t)w * h, ncrack = 2 * n;
  hier_state s;
  int status = DSG_OK, R = 0;
  memset(&s, 0, sizeof(s));
  memset(H, 0, sizeof(*H));
  H->width = w;
  H->height = h;
  s.width = w;
  s.height = h;
  s.E = E;
  H->region = malloc(n * sizeof(*H->region));
  H->crack_level = malloc(ncrack * sizeof(*H->crack_level));
  s.crack_edge = malloc(ncrack * sizeof(*s.crack_edge));
  if (!H->region || !H->crack_level || !s.crack_edge) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the hierarchy of %zu pixels", n);
    goto out;
  }
  for (size_t c = 0; c < ncrack; c++) {
    H->crack_level[c] = 0.0f;
    s.crack_edge[c] = -1;
  }
  status = watershed(E, w, h, H->region, &R);
  if (status != DSG_OK)
    goto out;
  H->nregions = R;
  s.min_area = min_area;
  s.hcap = 1024;
  while (s.hcap < 8 * (size_t)R)
    s.hcap *= 2;
  s.hused = 0;
  s.keys = malloc(s.hcap * sizeof(*s.keys));
  s.vals = malloc(s.hcap * sizeof(*s.vals));
  s.adj = calloc((size_t)R, sizeof(*s.adj));
  s.nadj = calloc((size_t)R, sizeof(*s.nadj));
  s.cap_adj = calloc((size_t)R, sizeof(*s.cap_adj));
  s.area = calloc((size_t)R, sizeof(*s.area));
  H->merge_a = malloc((size_t)(R > 1 ? R - 1 : 1) * sizeof(int));
  H->merge_b = malloc((size_t)(R > 1 ? R - 1 : 1) * sizeof(int));
  H->merge_level = malloc((size_t)(R > 1 ? R - 1 : 1) * sizeof(float));
  if (!s.keys || !s.vals || !s.adj || !s.nadj || !s.cap_adj || !s.area || !H->merge_a ||
      !H->merge_b || !H->merge_level)
    goto nomem;
  memset(s.keys, 0xff, s.hcap * sizeof(*s.keys));
  for (size_t i = 0; i < n; i++)
    s.area[H->region[i]]++;
  if (cue) {
    s.cue = cue;
    for (int c = 0; c < APP_CONTOUR_CHANNELS; c++) {
      s.first[c] = s.nbins;
      s.bins[c] = app_contour_channel_at(c)->bins;
      s.nbins += s.bins[c];
      s.wsum += cue->weight[c];
    }
    s.hist = calloc((size_t)R * (size_t)s.nbins, sizeof(*s.hist));
    if (!s.hist)
      goto nomem;
    for (size_t i = 0; i < n; i++) {
      float *hr = s.hist + (size_t)H->region[i] * s.nbins;
      for (int c = 0; c < APP_CONTOUR_CHANNELS; c++)
        hr[s.first[c] + cue->bins[(size_t)c * n + i]] += 1.0f;
    }
  }

  /* the cracks between different regions, into one edge per pair of regions */
  for (size_t c = 0; c < ncrack; c++) {
    const size_t p = c / 2;
    const int x = (int)(p % (size_t)w), y = (int)(p / (size_t)w);
    size_t q;
    if (c % 2 == 0) { /* the crack right of p */
      if (x + 1 >= w)
        continue;
      q = p + 1;
    } else { /* the crack below p */
      if (y + 1 >= h)
        continue;
      q = p + (size_t)w;
    }
    int a = H->region[p], b = H->region[q];
    if (a == b)
      continue;
    if (a > b) {
      const int t = a;
      a = b;
      b = t;
    }
    int *slot = hash_slot(&s, a, b, 1);
    if (!slot)
      goto nomem;
    if (*slot < 0) {
      if (s.nedges == s.cap_edges) {
        int cap = s.cap_edges ? 2 * s.cap_edges : 1024;
        edge *e = realloc(s.edges, (size_t)cap * sizeof(*e));
        if (!e)
          goto nomem;
        s.edges = e;
        s.cap_edges = cap;
      }
      s.edges[s.nedges] = (edge){a, b, 0.0, 0.0, 0, -1, 0.0f, 0, 1, 0};
      *slot = s.nedges++;
      if (adj_add(&s, a, *slot) || adj_add(&s, b, *slot))
        goto nomem;
    }
    edge *e = &s.edges[*slot];
    e->sum += 0.5 * ((double)E[p] + (double)E[q]);
    e->count++;
    s.crack_edge[c] = *slot;
  }
  s.deferring = 1;
  for (int e = 0; e < s.nedges; e++)
    if (speck_edge(&s, &s.edges[e]) ? heap_push(&s, edge_key(&s, &s.edges[e]), e) : defer(&s, e))
      goto nomem;

  /* merging: b's edges move to a (the smaller list into the larger) */
  float level = 0.0f;
  while (H->nmerges < R - 1) {
    if (s.nheap == 0 && s.deferring && flush_deferred(&s)) /* the specks are merged */
      goto nomem;
    if (s.nheap == 0)
      break;
    heap_item it = heap_pop(&s);
    edge *e = &s.edges[it.e];
    if (!e->alive || it.version != e->version)
      continue;
    const float key = (float)it.key;
    /* a region below min_area is not a region of the hierarchy: it joins its weakest neighbour
     * at the current level (0 before any real merge), so its boundary leaves the UCM. Any other
     * merge is above the one before, by a float's step where its key is not (a boundary that
     * got weaker as its regions grew, or the region cue's regions that got closer), so that
     * every cut at k regions is a cut of the UCM at a level */
    if (it.key > -1e8)
      level = key > level ? key : nextafterf(level, INFINITY);
    e->level = level; /* its cracks' level, set at the end (crack_edge, into) */
    int keep = e->a, gone = e->b;
    if (s.nadj[keep] < s.nadj[gone]) {
      keep = e->b;
      gone = e->a;
    }
    H->merge_a[H->nmerges] = keep;
    H->merge_b[H->nmerges] = gone;
    H->merge_level[H->nmerges++] = level;
    e->alive = 0;
    hash_forget(&s, e->a, e->b);
    s.area[keep] += s.area[gone];
    if (s.hist) {
      float *hk = s.hist + (size_t)keep * s.nbins;
      const float *hg = s.hist + (size_t)gone * s.nbins;
      for (int k = 0; k < s.nbins; k++)
        hk[k] += hg[k];
    }
    for (int t = 0; t < s.nadj[gone]; t++) {
      edge *f = &s.edges[s.adj[gone][t]];
      if (!f->alive)
        continue;
      const int other = f->a == gone ? f->b : f->a;
      hash_forget(&s, f->a, f->b);
      const int lo = keep < other ? keep : other, hi = keep < other ? other : keep;
      int *slot = hash_slot(&s, lo, hi, 1);
      if (!slot)
        goto nomem;
      if (*slot >= 0) { /* keep and other were neighbours already: one boundary now */
        edge *g = &s.edges[*slot];
        g->sum += f->sum;
        g->count += f->count;
        f->alive = 0;
        f->into = *slot; /* f's cracks are g's now */
        if (requeue(&s, *slot))
          goto nomem;
      } else {
        f->a = lo;
        f->b = hi;
        *slot = (int)(f - s.edges);
        if (adj_add(&s, keep, *slot) || requeue(&s, *slot))
          goto nomem;
      }
    }
    /* keep's own edges changed key when its area reached min_area, or with the region cue its
     * histograms: queue them again */
    if (s.hist || (s.area[keep] - s.area[gone] < s.min_area && s.area[keep] >= s.min_area))
      for (int t = 0; t < s.nadj[keep]; t++) {
        if (s.edges[s.adj[keep][t]].alive && requeue(&s, s.adj[keep][t]))
          goto nomem;
      }
    free(s.adj[gone]);
    s.adj[gone] = NULL;
    s.nadj[gone] = s.cap_adj[gone] = 0;
  }
  /* each crack's level: that of the edge its first edge became part of (into, followed to its
   * end and then pointed there directly), the level at which that boundary disappeared */
  for (size_t c = 0; c < ncrack; c++) {
    int e = s.crack_edge[c];
    if (e < 0)
      continue;
    int last = e;
    while (s.edges[last].into >= 0)
      last = s.edges[last].into;
    while (s.edges[e].into >= 0) {
      const int next = s.edges[e].into;
      s.edges[e].into = last;
      e = next;
    }
    H->crack_level[c] = s.edges[last].level;
  }
  goto out;
nomem:
  status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the hierarchy of %zu pixels", n);
out:
  if (s.adj)
    for (int r = 0; r < R; r++)
      free(s.adj[r]);
  free(s.adj);
  free(s.nadj);
  free(s.cap_adj);
  free(s.area);
  free(s.hist);
  free(s.edges);
  free(s.keys);
  free(s.vals);
  free(s.heap);
  free(s.deferred);
  free(s.crack_edge);
  if (status != DSG_OK)
    app_hierarchy_free(H);
  return status;
}

/* The spectral boundary term of gPb (Arbelaez et al. 2011, section 3.2): the sum over the
 * eigenvectors j >= 1 of |d v_j| / sqrt(1 - mu_j), v_j = D^-1/2 u_j scaled to [0, 1], d the
 * derivative by Gaussian derivatives of sigma 1 across orientation o (the edge along o pi /
 * norient, as the detector's: d = -sin(theta) d/dx + cos(theta) d/dy) into out[o n + i], or with
 * norient 0 the gradient's magnitude into out[i]; 1 - mu_j is the generalised eigenvalue of the
 * cut. Pairs with 1 - mu_j <= 1e-6 (other components' indicators) and constant vectors add
 * nothing.
 * A pixel that the contour cue nearly cuts off (degree below APP_SPECTRAL_ISOLATED of the mean:
 * the pixels on a strong contour) has u_i ~ sqrt(d_i) times its neighbours' v, far below the
 * solver's absolute error, so D^-1/2 u is noise there (0 where the solver left it 0, which moved
 * the spectral crest a pixel off the contour, onto the side of the vector's support). With the
 * products N u (res->products, optional: the residuals' products, so the matrix is not needed
 * here) its v comes from the product instead, as the generalised eigenproblem has it:
 * v_i = (N u)_i / (mu sqrt(d_i)) = sum_j (W_ij / d_i) v_j / mu, a weighted mean of its
 * neighbours' values. */
#define APP_SPECTRAL_ISOLATED 1e-2
#define APP_SPECTRAL_RADIUS 3 /* the derivative filters': sigma 1 */

/* The filters: k0 the Gaussian of sigma 1, k1 its derivative, 2 APP_SPECTRAL_RADIUS + 1 taps. */
static void spectral_taps(float *k0, float *k1)
{
  const int r = APP_SPECTRAL_RADIUS;
  double s0 = 0.0;
  for (int t = -r; t <= r; t++)
    s0 += exp(-0.5 * t * t);
  for (int t = -r; t <= r; t++) {
    k0[t + r] = (float)(exp(-0.5 * t * t) / s0);
    k1[t + r] = (float)(-t * exp(-0.5 * t * t) / s0);
  }
}

/* The degree below which a pixel counts as isolated: APP_SPECTRAL_ISOLATED of the mean. */
static double spectral_isolated(const double *sqrt_degree, size_t n)
{
  double mean_degree = 0.0;
#pragma omp parallel for reduction(+ : mean_degree) schedule(static)
  for (size_t i = 0; i < n; i++)
    mean_degree += sqrt_degree[i] * sqrt_degree[i] / (double)n;
  return APP_SPECTRAL_ISOLATED * mean_degree;
}

int app_spectral_gradient(const eig_result *res, const double *sqrt_degree, int w, int h,
                          int norient, float *out)
{
  if (norient > APP_CONTOUR_ORIENTATIONS)
    return dsg_error_set(DSG_ERR_INVALID, "the spectral term has at most %d orientations, not %d",
                         APP_CONTOUR_ORIENTATIONS, norient);
  const size_t n = (size_t)w * h;
  const double isolated = spectral_isolated(sqrt_degree, n);
  float *v = malloc(n * sizeof(float));
  float *gx = malloc(n * sizeof(float)), *gy = malloc(n * sizeof(float)); /* the passes' rows */
  float k0[2 * APP_SPECTRAL_RADIUS + 1], k1[2 * APP_SPECTRAL_RADIUS + 1];
  int status = DSG_OK;
  if (!v || !gx || !gy) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectral gradient of %zu pixels", n);
    goto out;
  }
  spectral_taps(k0, k1);
  memset(out, 0, (norient > 0 ? (size_t)norient : 1) * n * sizeof(*out));
  for (int j = 1; j < res->nconv; j++) {
    const double mu = res->values[j], lam = 1.0 - mu;
    if (!(lam > 1e-6))
      continue; /* another component's indicator: no gradient inside it */
    const float *u = res->vectors + (size_t)j * n;
    const float *Nu = res->products ? res->products + (size_t)j * n : NULL;
    float lo = HUGE_VALF, hi = -HUGE_VALF;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) schedule(static)
    for (size_t i = 0; i < n; i++) {
      double vi = u[i] / sqrt_degree[i];
      if (Nu && sqrt_degree[i] * sqrt_degree[i] < isolated)
        vi = Nu[i] / (mu * sqrt_degree[i]);
      v[i] = (float)vi;
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
    }
    if (!(hi > lo))
      continue;
    const float scale = (float)(1.0 / ((double)(hi - lo) * sqrt(lam)));
    app_gradient_add(v, w, h, k0, k1, APP_SPECTRAL_RADIUS, scale, norient, gx, gy, out);
  }
out:
  free(v);
  free(gx);
  free(gy);
  return status;
}

int app_spectral_gpb_cl(spmv_cl_image *im, const eig_result *res, const double *sqrt_degree, int w,
                        int h, const float *oriented, const app_contour_weights *cw, double weight,
                        float *strength, unsigned char *orientation, float *thin)
{
  const size_t n = (size_t)w * h;
  const int nvec = res->nconv > 1 ? res->nconv - 1 : 0; /* vector 0 is D^1/2: no gradient */
  float *mu = malloc((size_t)(nvec > 0 ? nvec : 1) * sizeof(float));
  float *wt = malloc((size_t)(nvec > 0 ? nvec : 1) * sizeof(float));
  float k0[2 * APP_SPECTRAL_RADIUS + 1], k1[2 * APP_SPECTRAL_RADIUS + 1];
  int status;
  if (!mu || !wt) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectral weights");
    goto out;
  }
  spectral_taps(k0, k1);
  for (int j = 1; j <= nvec; j++) {
    const double lam = 1.0 - res->values[j];
    mu[j - 1] = (float)res->values[j];
    wt[j - 1] = lam > 1e-6 ? (float)(1.0 / sqrt(lam)) : 0.0f;
  }
  const spmv_spectral s = {.nvec = nvec,
                           .vectors = res->vectors + n,
                           .products = res->products ? res->products + n : NULL,
                           .mu = mu,
                           .weight = wt,
                           .sqrt_degree = sqrt_degree,
                           .isolated = spectral_isolated(sqrt_degree, n),
                           .radius = APP_SPECTRAL_RADIUS,
                           .smooth = k0,
                           .derivative = k1};
  status = app_contour_gpb_cl(im, &s, oriented, cw, weight, w, h, strength, orientation, thin);
out:
  free(mu);
  free(wt);
  return status;
}

void app_hierarchy_map_levels(app_hierarchy *H, double half)
{
  const size_t ncrack = 2 * (size_t)H->width * H->height;
  for (int m = 0; m < H->nmerges; m++)
    H->merge_level[m] = (float)(H->merge_level[m] / (H->merge_level[m] + half));
  for (size_t c = 0; c < ncrack; c++)
    H->crack_level[c] = (float)(H->crack_level[c] / (H->crack_level[c] + half));
}

static int find(int *parent, int x)
{
  while (parent[x] != x) {
    parent[x] = parent[parent[x]];
    x = parent[x];
  }
  return x;
}

int app_hierarchy_cut(const app_hierarchy *H, int k, double threshold, int32_t *labels, int *count)
{
  const size_t n = (size_t)H->width * H->height;
  const int R = H->nregions;
  int *parent = malloc((size_t)R * sizeof(*parent)), *id = malloc((size_t)R * sizeof(*id));
  if (!parent || !id) {
    free(parent);
    free(id);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a cut of %d regions", R);
  }
  for (int r = 0; r < R; r++) {
    parent[r] = r;
    id[r] = -1;
  }
  for (int m = 0; m < H->nmerges; m++) {
    if (k > 0 ? R - m <= k : H->merge_level[m] > threshold)
      break;
    parent[find(parent, H->merge_b[m])] = find(parent, H->merge_a[m]);
  }
  int next = 0;
  for (size_t i = 0; i < n; i++) {
    const int r = find(parent, H->region[i]);
    if (id[r] < 0)
      id[r] = next++;
    labels[i] = id[r];
  }
  if (count)
    *count = next;
  free(parent);
  free(id);
  return DSG_OK;
}

void app_hierarchy_ucm(const app_hierarchy *H, float *ucm)
{
  const int w = H->width, h = H->height, W2 = 2 * w + 1, H2 = 2 * h + 1;
  memset(ucm, 0, (size_t)W2 * H2 * sizeof(*ucm));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const size_t p = (size_t)y * w + x;
      if (x + 1 < w)
        ucm[(size_t)(2 * y + 1) * W2 + (size_t)(2 * x + 2)] = H->crack_level[2 * p];
      if (y + 1 < h)
        ucm[(size_t)(2 * y + 2) * W2 + (size_t)(2 * x + 1)] = H->crack_level[2 * p + 1];
    }
  /* the corners, the frame's included: the strongest crack that meets there. The frame's
   * cracks (between a pixel and the outside) stay 0 and its corners take the one crack that meets
   * the border there, as in BSDS500's ucm2: a cut ucm <= t joins no regions along the border,
   * and the corner map ucm[2::2, 2::2], which the benchmark thresholds as the boundary map, holds
   * the image's boundaries only (a frame at the top level would put its last row and column
   * there at every level) */
  for (int y = 0; y < H2; y += 2)
    for (int x = 0; x < W2; x += 2) {
      const size_t i = (size_t)y * W2 + x;
      float m = 0.0f;
      if (x > 0 && ucm[i - 1] > m)
        m = ucm[i - 1];
      if (x < W2 - 1 && ucm[i + 1] > m)
        m = ucm[i + 1];
      if (y > 0 && ucm[i - W2] > m)
        m = ucm[i - W2];
      if (y < H2 - 1 && ucm[i + W2] > m)
        m = ucm[i + W2];
      ucm[i] = m;
    }
}
