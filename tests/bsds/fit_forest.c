/* fit_forest: the edge forest (app/lib/forest.c) fit on BSDS500 train, after Dollar & Zitnick's
 * structured forests (ICCV 2013; PAMI 2015).
 *
 *   python3 tests/bsds/forest_data.py --bsds ../shared/bsds --out /tmp/forest_data
 *   fit_forest --data /tmp/forest_data [--trees 4] [--min-child 8] [--max-depth 64]
 *              [--features 0.25] [--seed 1] --out app/lib/forest/edges.dsf
 *
 * Each tree: the patches of DATA/tree_T.samples, their features read from the library's own
 * channels (app_forest_channels: what the trees are fit on is what they read in a run), a random
 * quarter of the features for the whole tree and sqrt of those tried at each node. A node's
 * samples carry 16 x 16 label patches, which no split criterion reads directly: at each node 256
 * random pixel pairs give every patch a code (same segment or not), the codes' first principal
 * component splits the patches into two classes, and the split is the feature and threshold of
 * least Gini impurity of those classes. A node stops at one class or too few samples; a leaf keeps
 * the patch of the code nearest the node's mean code, with segments of 5 pixels or fewer merged
 * into a neighbour. Deterministic: each node draws from a generator seeded by its tree and place.
 * Not a test: it reads a data set that is never in the repository. */
#include "diaseg_internal.h"
#include "io.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#define G APP_FOREST_OUT
#define G2 (G * G)
#define NPAIRS 256
#define WORDS (NPAIRS / 64)
#define PCA_SAMPLES 2048

typedef struct image_data {
  app_forest_grid grid;
  unsigned char *reg, *sim;
  int ngt;
  uint16_t *gt; /* ngt x height x width */
} image_data;

typedef struct sample {
  int img, r, c; /* the place: channel corner (r, c) */
} sample;

typedef struct feature {
  int z, dy1, dx1, dy2, dx2; /* dy2 < 0: a regular feature */
} feature;

typedef struct tnode {
  int fid, thr, left, right; /* left < 0: a leaf */
  int leaf_sample;
} tnode;

typedef struct tree_ctx {
  const image_data *im;
  const sample *smp;
  const unsigned char *lab; /* G2 labels per sample */
  int *idx;                 /* sample indices, partitioned in place */
  const int *fsub;          /* the tree's features */
  int nfsub, ftry, min_child, max_depth;
  uint64_t seed;
  tnode *nodes;
  int nnodes, cap;
  feature feat[APP_FOREST_FEATURES];
} tree_ctx;

static uint64_t splitmix(uint64_t *s)
{
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int value(const tree_ctx *t, const sample *s, const feature *f)
{
  const image_data *im = &t->im[s->img];
  const size_t cn = (size_t)im->grid.cw * im->grid.ch, cw = (size_t)im->grid.cw;
  if (f->dy2 < 0)
    return im->reg[f->z * cn + (s->r + f->dy1) * cw + s->c + f->dx1];
  return (int)im->sim[f->z * cn + (s->r + f->dy1) * cw + s->c + f->dx1] -
         (int)im->sim[f->z * cn + (s->r + f->dy2) * cw + s->c + f->dx2];
}

static int new_node(tree_ctx *t)
{
  int id;
#pragma omp critical(nodes)
  {
    if (t->nnodes == t->cap) {
      t->cap = t->cap ? 2 * t->cap : 4096;
      t->nodes = realloc(t->nodes, (size_t)t->cap * sizeof(*t->nodes));
      if (!t->nodes) {
        fprintf(stderr, "fit_forest: out of memory\n");
        exit(1);
      }
    }
    id = t->nnodes++;
    t->nodes[id] = (tnode){-1, 0, -1, -1, -1};
  }
  return id;
}

/* The codes of the samples idx[0..n) under `pairs`; their classes (first principal component's
 * sign) into cls; returns 1 when all codes are alike (a pure node), and *medoid the sample whose
 * code is nearest the mean. */
static int discretize(const tree_ctx *t, const int *idx, int n, uint64_t *rng, unsigned char *cls,
                      int *medoid)
{
  int pi[NPAIRS], pj[NPAIRS];
  for (int k = 0; k < NPAIRS; k++) {
    const int a = (int)(splitmix(rng) % G2);
    int b = (int)(splitmix(rng) % (G2 - 1));
    b += b >= a;
    pi[k] = a;
    pj[k] = b;
  }
  uint64_t *code = malloc((size_t)n * WORDS * sizeof(uint64_t));
  double mean[NPAIRS] = {0};
  if (!code) {
    fprintf(stderr, "fit_forest: out of memory\n");
    exit(1);
  }
  for (int s = 0; s < n; s++) {
    const unsigned char *L = t->lab + (size_t)idx[s] * G2;
    uint64_t *w = code + (size_t)s * WORDS;
    memset(w, 0, WORDS * sizeof(uint64_t));
    for (int k = 0; k < NPAIRS; k++)
      if (L[pi[k]] == L[pj[k]])
        w[k / 64] |= 1ull << (k % 64);
  }
  for (int s = 0; s < n; s++)
    for (int k = 0; k < NPAIRS; k++)
      mean[k] += (double)((code[(size_t)s * WORDS + k / 64] >> (k % 64)) & 1);
  int cols[NPAIRS], d = 0;
  for (int k = 0; k < NPAIRS; k++) {
    if (mean[k] > 0.0 && mean[k] < (double)n)
      cols[d++] = k;
    mean[k] /= n;
  }
  /* the medoid: least squared distance to the mean code */
  double best = HUGE_VAL;
  *medoid = idx[0];
  for (int s = 0; s < n; s++) {
    double e = 0.0;
    for (int q = 0; q < d; q++) {
      const int k = cols[q];
      const double v = (double)((code[(size_t)s * WORDS + k / 64] >> (k % 64)) & 1) - mean[k];
      e += v * v;
    }
    if (e < best) {
      best = e;
      *medoid = idx[s];
    }
  }
  if (d == 0) {
    free(code);
    return 1;
  }
  /* the first principal component, from the covariance of up to PCA_SAMPLES codes */
  const int m = n < PCA_SAMPLES ? n : PCA_SAMPLES;
  double *C = calloc((size_t)d * d, sizeof(double)), *x = malloc((size_t)d * sizeof(double));
  double *u = malloc((size_t)d * sizeof(double)), *v = malloc((size_t)d * sizeof(double));
  if (!C || !x || !u || !v) {
    fprintf(stderr, "fit_forest: out of memory\n");
    exit(1);
  }
  for (int q = 0; q < m; q++) {
    const int s = (int)((long long)q * n / m);
    for (int a = 0; a < d; a++) {
      const int k = cols[a];
      x[a] = (double)((code[(size_t)s * WORDS + k / 64] >> (k % 64)) & 1) - mean[k];
    }
    for (int a = 0; a < d; a++)
      if (x[a] != 0.0)
        for (int b = 0; b < d; b++)
          C[(size_t)a * d + b] += x[a] * x[b];
  }
  for (int a = 0; a < d; a++)
    u[a] = 1.0 + 0.01 * (double)(splitmix(rng) % 1000) / 1000.0;
  for (int it = 0; it < 100; it++) {
    double norm = 0.0;
    for (int a = 0; a < d; a++) {
      double acc = 0.0;
      for (int b = 0; b < d; b++)
        acc += C[(size_t)a * d + b] * u[b];
      v[a] = acc;
      norm += acc * acc;
    }
    norm = sqrt(norm);
    if (!(norm > 0.0))
      break;
    double change = 0.0;
    for (int a = 0; a < d; a++) {
      const double na = v[a] / norm;
      change += fabs(na - u[a]);
      u[a] = na;
    }
    if (change < 1e-9 * d)
      break;
  }
  int n1 = 0;
  for (int s = 0; s < n; s++) {
    double z = 0.0;
    for (int a = 0; a < d; a++) {
      const int k = cols[a];
      z += ((double)((code[(size_t)s * WORDS + k / 64] >> (k % 64)) & 1) - mean[k]) * u[a];
    }
    cls[s] = z < 0.0;
    n1 += cls[s];
  }
  free(C);
  free(x);
  free(u);
  free(v);
  free(code);
  return n1 == 0 || n1 == n;
}

/* The best split of idx[0..n) (classes cls): feature, threshold (left: value < thr) and its
 * impurity n * Gini; HUGE_VAL when no split leaves min_child on both sides. */
static double best_split(const tree_ctx *t, const int *idx, int n, const unsigned char *cls,
                         uint64_t *rng, int *fid, int *thr)
{
  enum { BINS = 512, OFFSET = 255 };
  double best = HUGE_VAL;
  int *h0 = malloc(BINS * sizeof(int)), *h1 = malloc(BINS * sizeof(int));
  for (int q = 0; q < t->ftry; q++) {
    const int f = t->fsub[splitmix(rng) % (uint64_t)t->nfsub];
    const feature *ft = &t->feat[f];
    memset(h0, 0, BINS * sizeof(int));
    memset(h1, 0, BINS * sizeof(int));
    for (int s = 0; s < n; s++) {
      const int v = value(t, &t->smp[idx[s]], ft) + OFFSET;
      if (cls[s])
        h1[v]++;
      else
        h0[v]++;
    }
    long n0 = 0, nn1 = 0;
    for (int s = 0; s < n; s++)
      nn1 += cls[s];
    n0 = n - nn1;
    long l0 = 0, l1 = 0;
    for (int b = 1; b < BINS; b++) { /* threshold b: values < b go left */
      l0 += h0[b - 1];
      l1 += h1[b - 1];
      if (h0[b - 1] == 0 && h1[b - 1] == 0)
        continue;
      const long nl = l0 + l1, nr = n - nl;
      if (nl < t->min_child || nr < t->min_child)
        continue;
      const long r0 = n0 - l0, r1 = nn1 - l1;
      const double g = (double)nl - (double)(l0 * l0 + l1 * l1) / (double)nl + (double)nr -
                       (double)(r0 * r0 + r1 * r1) / (double)nr;
      if (g < best) {
        best = g;
        *fid = f;
        *thr = b - OFFSET;
      }
    }
  }
  free(h0);
  free(h1);
  return best;
}

static int grow(tree_ctx *t, int lo, int hi, int depth)
{
  const int id = new_node(t), n = hi - lo;
  uint64_t rng =
      t->seed ^ ((uint64_t)lo * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)hi << 32) ^ (uint64_t)depth;
  splitmix(&rng);
  unsigned char *cls = malloc((size_t)n);
  int medoid, fid = -1, thr = 0;
  if (!cls) {
    fprintf(stderr, "fit_forest: out of memory\n");
    exit(1);
  }
  const int pure = discretize(t, t->idx + lo, n, &rng, cls, &medoid);
  double g = HUGE_VAL;
  if (!pure && n >= 2 * t->min_child && depth < t->max_depth)
    g = best_split(t, t->idx + lo, n, cls, &rng, &fid, &thr);
  free(cls);
  if (g == HUGE_VAL) {
#pragma omp critical(nodes)
    t->nodes[id].leaf_sample = medoid;
    return id;
  }
  /* partition by the split */
  const feature *ft = &t->feat[fid];
  int a = lo, b = hi - 1;
  while (a <= b) {
    if (value(t, &t->smp[t->idx[a]], ft) < thr)
      a++;
    else {
      const int tmp = t->idx[a];
      t->idx[a] = t->idx[b];
      t->idx[b--] = tmp;
    }
  }
  int left, right;
  if (n > 20000) {
#pragma omp task shared(left) firstprivate(t, lo, a, depth)
    left = grow(t, lo, a, depth + 1);
#pragma omp task shared(right) firstprivate(t, a, hi, depth)
    right = grow(t, a, hi, depth + 1);
#pragma omp taskwait
  } else {
    left = grow(t, lo, a, depth + 1);
    right = grow(t, a, hi, depth + 1);
  }
#pragma omp critical(nodes)
  {
    t->nodes[id].fid = fid;
    t->nodes[id].thr = thr;
    t->nodes[id].left = left;
    t->nodes[id].right = right;
  }
  return id;
}

/* A leaf's patch: segments of 5 pixels or fewer take the most common label around them, then
 * the labels are renumbered in order of first appearance; more than APP_FOREST_MAX_SEGS segments
 * (none seen) keep merging their smallest. Returns the count. */
static int clean_patch(unsigned char *S)
{
  for (int pass = 0; pass < 64; pass++) {
    int count[256] = {0}, m = 0;
    for (int i = 0; i < G2; i++)
      count[S[i]]++;
    for (int l = 0; l < 256; l++)
      m += count[l] > 0;
    int victim = -1;
    for (int l = 0; l < 256; l++)
      if (count[l] > 0 && count[l] <= 5 && m > 1) {
        victim = l;
        break;
      }
    if (victim < 0 && m > APP_FOREST_MAX_SEGS) {
      int small = G2 + 1;
      for (int l = 0; l < 256; l++)
        if (count[l] > 0 && count[l] < small) {
          small = count[l];
          victim = l;
        }
    }
    if (victim < 0)
      break;
    int around[256] = {0};
    for (int i = 0; i < G2; i++) {
      if (S[i] != victim)
        continue;
      const int y = i / G, x = i % G;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++) {
          const int yy = y + dy, xx = x + dx;
          if (yy >= 0 && yy < G && xx >= 0 && xx < G && S[yy * G + xx] != victim)
            around[S[yy * G + xx]]++;
        }
    }
    int to = -1;
    for (int l = 0; l < 256; l++)
      if (around[l] > 0 && (to < 0 || around[l] > around[to]))
        to = l;
    if (to < 0)
      break;
    for (int i = 0; i < G2; i++)
      if (S[i] == victim)
        S[i] = (unsigned char)to;
  }
  int map[256];
  for (int l = 0; l < 256; l++)
    map[l] = -1;
  int m = 0;
  for (int i = 0; i < G2; i++) {
    if (map[S[i]] < 0)
      map[S[i]] = m++;
    S[i] = (unsigned char)map[S[i]];
  }
  return m;
}

typedef struct bytes {
  unsigned char *p;
  size_t n, cap;
} bytes;

static void put(bytes *b, const void *src, size_t n)
{
  if (b->n + n > b->cap) {
    b->cap = 2 * (b->n + n) + 1024;
    b->p = realloc(b->p, b->cap);
    if (!b->p) {
      fprintf(stderr, "fit_forest: out of memory\n");
      exit(1);
    }
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void put32(bytes *b, uint32_t v)
{
  const unsigned char c[4] = {v & 255, (v >> 8) & 255, (v >> 16) & 255, v >> 24};
  put(b, c, 4);
}

static void put16(bytes *b, uint16_t v)
{
  const unsigned char c[2] = {v & 255, v >> 8};
  put(b, c, 2);
}

int main(int argc, char **argv)
{
  const char *data = NULL, *out = NULL;
  int ntrees = 4, min_child = 8, max_depth = 64;
  double frac = 0.25;
  uint64_t seed = 1;
  for (int a = 1; a < argc; a++) {
    if (a + 1 >= argc) {
      fprintf(stderr, "fit_forest: %s needs a value\n", argv[a]);
      return 2;
    }
    const char *v = argv[++a];
    if (strcmp(argv[a - 1], "--data") == 0)
      data = v;
    else if (strcmp(argv[a - 1], "--out") == 0)
      out = v;
    else if (strcmp(argv[a - 1], "--trees") == 0)
      ntrees = atoi(v);
    else if (strcmp(argv[a - 1], "--min-child") == 0)
      min_child = atoi(v);
    else if (strcmp(argv[a - 1], "--max-depth") == 0)
      max_depth = atoi(v);
    else if (strcmp(argv[a - 1], "--features") == 0)
      frac = atof(v);
    else if (strcmp(argv[a - 1], "--seed") == 0)
      seed = strtoull(v, NULL, 10);
    else {
      fprintf(stderr, "fit_forest: unknown option %s\n", argv[a - 1]);
      return 2;
    }
  }
  if (!data || !out || ntrees < 1 || ntrees > 64 || min_child < 1 || frac <= 0 || frac > 1) {
    fprintf(stderr, "usage: fit_forest --data DIR --out FILE [--trees 4] [--min-child 8] "
                    "[--max-depth 64] [--features 0.25] [--seed 1]\n");
    return 2;
  }
  char path[4096];
  snprintf(path, sizeof(path), "%s/images.txt", data);
  FILE *lf = fopen(path, "r");
  if (!lf) {
    fprintf(stderr, "fit_forest: cannot read %s (run tests/bsds/forest_data.py)\n", path);
    return 1;
  }
  image_data *im = NULL;
  int nimg = 0;
  char line[4096];
  while (fgets(line, sizeof(line), lf)) {
    line[strcspn(line, "\n")] = 0;
    if (!line[0])
      continue;
    im = realloc(im, (size_t)(nimg + 1) * sizeof(*im));
    image_data *d = &im[nimg];
    dsg_image img = {0, 0, 0, NULL};
    if (app_image_load(line, (size_t)1 << 28, &img) != DSG_OK) {
      fprintf(stderr, "fit_forest: %s\n", dsg_error_message());
      return 1;
    }
    app_forest_geometry(img.width, img.height, &d->grid);
    const size_t cn = (size_t)d->grid.cw * d->grid.ch;
    d->reg = malloc(APP_FOREST_CHANNELS * cn);
    d->sim = malloc(APP_FOREST_CHANNELS * cn);
    if (!d->reg || !d->sim || app_forest_channels(&img, &d->grid, d->reg, d->sim, NULL, NULL)) {
      fprintf(stderr, "fit_forest: channels of %s: %s\n", line, dsg_error_message());
      return 1;
    }
    /* the humans' segmentations: DATA/ID.gt */
    const char *base = strrchr(line, '/');
    base = base ? base + 1 : line;
    char id[256];
    snprintf(id, sizeof(id), "%.*s", (int)(strcspn(base, ".")), base);
    snprintf(path, sizeof(path), "%s/%s.gt", data, id);
    unsigned char *raw;
    size_t len;
    if (app_read_file(path, &raw, &len) != DSG_OK || len < 12) {
      fprintf(stderr, "fit_forest: cannot read %s\n", path);
      return 1;
    }
    const int32_t *hd = (const int32_t *)raw;
    if (hd[1] != img.height || hd[2] != img.width ||
        len != 12 + (size_t)hd[0] * hd[1] * hd[2] * 2) {
      fprintf(stderr, "fit_forest: %s does not match its photo\n", path);
      return 1;
    }
    d->ngt = hd[0];
    d->gt = malloc(len - 12);
    memcpy(d->gt, raw + 12, len - 12);
    free(raw);
    dsg_image_free(&img);
    nimg++;
    fprintf(stderr, "\r%d images", nimg);
  }
  fclose(lf);
  fprintf(stderr, "\n");

  bytes nodes_b = {0}, leaves_b = {0};
  uint32_t tree_start[65], total_nodes = 0, total_leaves = 0;
  uint64_t fsel = seed * 0x2545f4914f6cdd1dull + 7;
  for (int tr = 0; tr < ntrees; tr++) {
    snprintf(path, sizeof(path), "%s/tree_%d.samples", data, tr);
    unsigned char *raw;
    size_t len;
    if (app_read_file(path, &raw, &len) != DSG_OK || len % 16) {
      fprintf(stderr, "fit_forest: cannot read %s\n", path);
      return 1;
    }
    const int ns = (int)(len / 16);
    const int32_t *rec = (const int32_t *)raw;
    sample *smp = malloc((size_t)ns * sizeof(*smp));
    unsigned char *lab = malloc((size_t)ns * G2);
    int *idx = malloc((size_t)ns * sizeof(int));
    if (!smp || !lab || !idx) {
      fprintf(stderr, "fit_forest: out of memory\n");
      return 1;
    }
#pragma omp parallel for schedule(static)
    for (int s = 0; s < ns; s++) {
      const int k = rec[4 * s], x = rec[4 * s + 1], y = rec[4 * s + 2], j = rec[4 * s + 3];
      const image_data *d = &im[k];
      const int w = d->grid.width, h = d->grid.height;
      smp[s] = (sample){k, y / 2, x / 2};
      idx[s] = s;
      const uint16_t *seg = d->gt + (size_t)j * w * h;
      int mapv[G2], m = 0; /* the labels met so far; label q becomes q */
      unsigned char *L = lab + (size_t)s * G2;
      for (int py = 0; py < G; py++)
        for (int px = 0; px < G; px++) {
          const int v =
              seg[(size_t)app_reflect(y - G / 2 + py, h) * w + app_reflect(x - G / 2 + px, w)];
          int q = 0;
          while (q < m && mapv[q] != v)
            q++;
          if (q == m)
            mapv[m++] = v;
          L[py * G + px] = (unsigned char)q;
        }
    }
    free(raw);
    tree_ctx *t = calloc(1, sizeof(*t));
    t->im = im;
    t->smp = smp;
    t->lab = lab;
    t->idx = idx;
    t->min_child = min_child;
    t->max_depth = max_depth;
    t->seed = seed * 1000003ull + (uint64_t)tr;
    for (int f = 0; f < APP_FOREST_FEATURES; f++) {
      /* channel offsets on a grid of width cw are z cn + dy cw + dx: recover (z, dy, dx) */
      int z, a, b;
      const int cw = 1000, ch = 1000;
      app_forest_feature_at(f, cw, ch, &z, &a, &b);
      a -= z * cw * ch;
      t->feat[f].z = z;
      t->feat[f].dy1 = a / cw;
      t->feat[f].dx1 = a % cw;
      if (b >= 0) {
        b -= z * cw * ch;
        t->feat[f].dy2 = b / cw;
        t->feat[f].dx2 = b % cw;
      } else {
        t->feat[f].dy2 = t->feat[f].dx2 = -1;
      }
    }
    /* the tree's features: a random fraction of all, without repetition */
    const int nsub = (int)lround(frac * APP_FOREST_FEATURES);
    int *perm = malloc(APP_FOREST_FEATURES * sizeof(int));
    for (int f = 0; f < APP_FOREST_FEATURES; f++)
      perm[f] = f;
    for (int f = 0; f < nsub; f++) {
      const int g = f + (int)(splitmix(&fsel) % (uint64_t)(APP_FOREST_FEATURES - f));
      const int tmp = perm[f];
      perm[f] = perm[g];
      perm[g] = tmp;
    }
    t->fsub = perm;
    t->nfsub = nsub;
    t->ftry = (int)lround(sqrt((double)nsub));
    double t0 = dsg_seconds();
#pragma omp parallel
#pragma omp single
    grow(t, 0, ns, 0);
    /* write breadth first: a node's children together, after it */
    int *order = malloc((size_t)t->nnodes * sizeof(int)),
        *newid = malloc((size_t)t->nnodes * sizeof(int));
    int head = 0, tail = 0, nleaf = 0;
    order[tail++] = 0;
    newid[0] = 0;
    while (head < tail) {
      const int k = order[head++];
      if (t->nodes[k].left >= 0) {
        newid[t->nodes[k].left] = tail;
        order[tail++] = t->nodes[k].left;
        newid[t->nodes[k].right] = tail;
        order[tail++] = t->nodes[k].right;
      }
    }
    tree_start[tr] = total_nodes;
    for (int q = 0; q < tail; q++) {
      const tnode *nd = &t->nodes[order[q]];
      if (nd->left >= 0) {
        put16(&nodes_b, (uint16_t)nd->fid);
        put16(&nodes_b, (uint16_t)(int16_t)nd->thr);
        put32(&nodes_b, total_nodes + (uint32_t)newid[nd->left]);
      } else {
        const uint32_t l = total_leaves + (uint32_t)nleaf++;
        put16(&nodes_b, (uint16_t)(l & 0xffff));
        put16(&nodes_b, (uint16_t)(l >> 16));
        put32(&nodes_b, 0);
        unsigned char S[G2], packed[1 + G2 / 2];
        memcpy(S, lab + (size_t)nd->leaf_sample * G2, G2);
        packed[0] = (unsigned char)clean_patch(S);
        for (int i = 0; i < G2 / 2; i++)
          packed[1 + i] = (unsigned char)(S[2 * i] | S[2 * i + 1] << 4);
        put(&leaves_b, packed, packed[0] > 1 ? sizeof(packed) : 1);
      }
    }
    fprintf(stderr, "tree %d: %d samples, %d nodes, %d leaves, %.1f s\n", tr, ns, tail, nleaf,
            dsg_seconds() - t0);
    total_nodes += (uint32_t)tail;
    total_leaves += (uint32_t)nleaf;
    free(order);
    free(newid);
    free(perm);
    free(t->nodes);
    free(t);
    free(smp);
    free(lab);
    free(idx);
  }
  tree_start[ntrees] = total_nodes;
  bytes file = {0};
  put(&file, "DSGF", 4);
  put32(&file, 2);
  put32(&file, (uint32_t)ntrees);
  put32(&file, total_nodes);
  put32(&file, total_leaves);
  for (int tr = 0; tr <= ntrees; tr++)
    put32(&file, tree_start[tr]);
  put(&file, nodes_b.p, nodes_b.n);
  put(&file, leaves_b.p, leaves_b.n);
  uLongf zlen = compressBound(file.n);
  unsigned char *z = malloc(8 + zlen);
  memcpy(z, "DSGZ", 4);
  z[4] = file.n & 255;
  z[5] = (file.n >> 8) & 255;
  z[6] = (file.n >> 16) & 255;
  z[7] = (file.n >> 24) & 255;
  if (compress2(z + 8, &zlen, file.p, file.n, 9) != Z_OK) {
    fprintf(stderr, "fit_forest: deflate failed\n");
    return 1;
  }
  FILE *of = fopen(out, "wb");
  if (!of || fwrite(z, 1, 8 + zlen, of) != 8 + zlen || fclose(of)) {
    fprintf(stderr, "fit_forest: cannot write %s\n", out);
    return 1;
  }
  /* check that the library reads it */
  app_forest *F;
  if (app_forest_parse(z, 8 + zlen, &F) != DSG_OK) {
    fprintf(stderr, "fit_forest: the written model does not parse: %s\n", dsg_error_message());
    return 1;
  }
  fprintf(stderr, "%s: %d trees, %u nodes, %u leaves, %zu bytes (%zu deflated)\n", out, ntrees,
          F->nnodes, F->nleaves, file.n, (size_t)(8 + zlen));
  app_forest_free(F);
  return 0;
}
