/* The structured edge forest (app/lib/forest.c) against answers known without it:
 *  - the grid: every feature inside its 16 x 16 patch and channel, every image row covered by
 *    the patches the way the accumulation's reference below counts them;
 *  - the channels of a constant image (its CIELAB codes, no gradient anywhere);
 *  - hand-made forests (built here in the model's format, deflated with zlib): a tree that always
 *    reaches a leaf split down its middle gives a map known pixel by pixel (each pixel's count of
 *    patches, smoothed by the triangle of 1 and scaled, computed here), and a tree that splits on
 *    a pixel's brightness draws only where the image is bright;
 *  - damaged models: every truncation and every byte of the inflated model changed, refused
 *    with DSG_ERR_FORMAT or, where still a valid model, run without a crash;
 *  - the forest that comes with the library on a step: its map peaks on the step, thinned to a
 *    line beside it, nothing far from it. */
#include "check.h"
#include "diaseg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define G APP_FOREST_OUT

/* ---- model building ------------------------------------------------------------------------ */

typedef struct model {
  unsigned char *raw; /* the inflated model */
  size_t len;
} model;

static void put16(unsigned char *p, unsigned v)
{
  p[0] = (unsigned char)(v & 255);
  p[1] = (unsigned char)(v >> 8 & 255);
}

static void put32(unsigned char *p, uint32_t v)
{
  for (int k = 0; k < 4; k++)
    p[k] = (unsigned char)(v >> 8 * k & 255);
}

/* One tree of three nodes: the root splits on feature fid at thr, its left child is leaf 0 (one
 * segment), its right leaf 1 (two segments: columns < 8 and >= 8). */
static model split_model(int fid, int thr)
{
  const size_t len = 20 + 4 * 2 + 8 * 3 + 1 + (1 + G * G / 2);
  model m = {calloc(1, len), len};
  unsigned char *p = m.raw;
  memcpy(p, "DSGF", 4);
  put32(p + 4, 2);
  put32(p + 8, 1);  /* trees */
  put32(p + 12, 3); /* nodes */
  put32(p + 16, 2); /* leaves */
  put32(p + 20, 0);
  put32(p + 24, 3);
  unsigned char *node = p + 28;
  put16(node, (unsigned)fid); /* the root */
  put16(node + 2, (unsigned)(uint16_t)(int16_t)thr);
  put32(node + 4, 1);
  put16(node + 8, 0); /* leaf 0 */
  put16(node + 10, 0);
  put32(node + 12, 0);
  put16(node + 16, 1); /* leaf 1 */
  put16(node + 18, 0);
  put32(node + 20, 0);
  unsigned char *leaf = node + 24;
  leaf[0] = 1;
  leaf[1] = 2;
  for (int i = 0; i < G * G / 2; i++) { /* pixels 2i and 2i + 1: the same row */
    const int x0 = (2 * i) % G, x1 = (2 * i + 1) % G;
    leaf[2 + i] = (unsigned char)((x0 >= G / 2) | (x1 >= G / 2) << 4);
  }
  return m;
}

/* the model's file: "DSGZ", the inflated size, the deflated bytes */
static unsigned char *deflated(const model *m, size_t *len)
{
  uLongf cap = compressBound((uLong)m->len);
  unsigned char *out = malloc(8 + cap);
  memcpy(out, "DSGZ", 4);
  put32(out + 4, (uint32_t)m->len);
  compress(out + 8, &cap, m->raw, (uLong)m->len);
  *len = 8 + cap;
  return out;
}

static app_forest *parse(const model *m, int *status)
{
  size_t len;
  unsigned char *bytes = deflated(m, &len);
  app_forest *F = NULL;
  *status = app_forest_parse(bytes, len, &F);
  free(bytes);
  return F;
}

static dsg_image image_of(int w, int h, unsigned char *px) { return (dsg_image){w, h, 3, px}; }

/* ---- the grid ------------------------------------------------------------------------------ */

/* how many patch rows write image row y (patch r writes rows [2r - 8, 2r + 8)) */
static int patches_over(int y, int rows)
{
  int count = 0;
  for (int r = 0; r < rows; r++)
    count += 2 * r - G / 2 <= y && y < 2 * r + G / 2;
  return count;
}

static void test_grid(void)
{
  static const int sizes[][2] = {{1, 1}, {7, 5}, {33, 2}, {481, 321}};
  for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
    app_forest_grid g;
    app_forest_geometry(sizes[s][0], sizes[s][1], &g);
    CHECK(g.pw % 4 == 0 && g.ph % 4 == 0 && g.pw >= g.width + 2 * g.pad &&
              g.ph >= g.height + 2 * g.pad && g.pw < g.width + 2 * g.pad + 4,
          "%d x %d: padded %d x %d", g.width, g.height, g.pw, g.ph);
    CHECK(g.cw * 2 == g.pw && g.ch * 2 == g.ph, "channels %d x %d", g.cw, g.ch);
    /* the last patch reads inside the padded image; every row is under 3 patches or more, 8
     * away from the image's top and bottom (where the patches centred outside it are missing) */
    CHECK(2 * (g.rows - 1) + APP_FOREST_PATCH <= g.ph && 2 * g.rows + APP_FOREST_PATCH > g.ph,
          "rows %d of %d", g.rows, g.ph);
    for (int y = 0; y < g.height; y++) {
      const int k = patches_over(y, g.rows);
      CHECK(k >= 3 && k <= 8 && (k == 8 || y < 6 || y >= g.height - 8), "row %d: %d patches", y, k);
    }
  }
  /* every feature in its channel's 16 x 16 patch; the regular ones each a place of their own */
  app_forest_grid g;
  app_forest_geometry(50, 40, &g);
  const int cn = g.cw * g.ch, side = APP_FOREST_PATCH / APP_FOREST_SHRINK;
  int bad = 0, repeated = 0;
  for (int f = 0; f < APP_FOREST_FEATURES; f++) {
    int z, a, b;
    app_forest_feature_at(f, g.cw, g.ch, &z, &a, &b);
    const int regular = f < APP_FOREST_REG_FEATURES;
    bad += z < 0 || z >= APP_FOREST_CHANNELS || (regular ? b != -1 : b < 0);
    for (int k = 0; k < (regular ? 1 : 2); k++) {
      const int at = (k ? b : a) - z * cn;
      bad += at < 0 || at / g.cw >= side || at % g.cw >= side;
    }
    if (regular)
      repeated += a != z * cn + (f % (side * side)) / side * g.cw + f % side;
    else
      bad += a == b;
  }
  CHECK(bad == 0 && repeated == 0, "%d features outside their patch, %d misplaced", bad, repeated);
}

/* ---- the channels -------------------------------------------------------------------------- */

static void test_channels(void)
{
  const int w = 21, h = 13;
  unsigned char px[21 * 13 * 3];
  memset(px, 128, sizeof(px));
  dsg_image img = image_of(w, h, px);
  app_forest_grid g;
  app_forest_geometry(w, h, &g);
  const size_t cn = (size_t)g.cw * g.ch;
  unsigned char *reg = malloc(APP_FOREST_CHANNELS * cn), *sim = malloc(APP_FOREST_CHANNELS * cn);
  CHECK(app_forest_channels(&img, &g, reg, sim, NULL, NULL) == DSG_OK, "channels");
  float lab[3];
  app_rgb_to_lab(px, 3, lab);
  /* L in [0, 100] -> [0, 255]; a and b from [-73, 95] and [-95, 95] */
  const int code[3] = {(int)(lab[0] / 100.0f * 255.0f + 0.5f),
                       (int)((lab[1] + 73.0f) / 168.0f * 255.0f + 0.5f),
                       (int)((lab[2] + 95.0f) / 190.0f * 255.0f + 0.5f)};
  int wrong = 0;
  for (int z = 0; z < APP_FOREST_CHANNELS; z++)
    for (size_t i = 0; i < cn; i++) {
      const int want = z < 3 ? code[z] : 0;
      wrong += abs(reg[z * cn + i] - want) > 1 || abs(sim[z * cn + i] - want) > 1;
    }
  CHECK(wrong == 0, "%d channel codes of a grey image off (L code %d)", wrong, code[0]);
  free(reg);
  free(sim);
}

/* ---- hand-made forests ------------------------------------------------------------------- */

/* The map of the leaf split down its middle at every place, one tree: each image column is on
 * the split of exactly one patch column (the split's pixels 7 and 8 fall on columns 2c - 1 and
 * 2c), each row under patches_over(y) patch rows; then the triangle of 1 (borders reflected) and
 * the gain over 64 patches. */
static void split_reference(int w, int h, float *E)
{
  app_forest_grid g;
  app_forest_geometry(w, h, &g);
  const float norm = APP_FOREST_GAIN / 64.0f;
  for (int y = 0; y < h; y++) {
    double s = 0.0;
    for (int t = -1; t <= 1; t++) {
      int yy = y + t;
      yy = yy < 0 ? -1 - yy : yy >= h ? 2 * h - 1 - yy : yy;
      if (yy < 0) /* a one-row image reflects onto itself */
        yy = 0;
      s += (2 - abs(t)) * patches_over(yy, g.rows);
    }
    for (int x = 0; x < w; x++)
      E[(size_t)y * w + x] = (float)(s / 4.0) * norm;
  }
}

static void test_hand_model(void)
{
  const int w = 40, h = 30;
  unsigned char *px = malloc((size_t)w * h * 3);
  float *E = malloc((size_t)w * h * sizeof(float)), *ref = malloc((size_t)w * h * sizeof(float));
  /* a random image: the always-right tree does not look at it */
  for (int i = 0; i < w * h * 3; i++)
    px[i] = (unsigned char)(test_rand64() & 255);
  dsg_image img = image_of(w, h, px);
  int status;
  model m = split_model(0, -32768); /* no value is below the threshold: always right */
  app_forest *F = parse(&m, &status);
  CHECK(status == DSG_OK && F && F->ntrees == 1 && F->nleaves == 2 && F->nmulti == 1,
        "the hand-made forest parses (%d)", status);
  if (F) {
    CHECK(app_forest_detect(F, &img, 0, NULL, E) == DSG_OK, "detect");
    split_reference(w, h, ref);
    int off = 0;
    for (int i = 0; i < w * h; i++)
      off += !CLOSE(E[i], ref[i], 1e-5, 1e-6);
    CHECK(off == 0, "%d of %d pixels off the reference (E[0] %g, want %g; middle %g, want %g)", off,
          w * h, E[0], ref[0], E[h / 2 * w + w / 2], ref[h / 2 * w + w / 2]);
    CHECK(CLOSE(ref[h / 2 * w + w / 2], APP_FOREST_GAIN * 8.0 / 64.0, 1e-6, 0.0),
          "the reference's interior: 8 patches of 64");
    /* at 3 scales: each scale's map is the same constant away from its top and bottom rows, so
     * is their mean (rows 16 .. 47 of 64: 8 rows inside the halved image's full rows) */
    const int W3 = 80, H3 = 64;
    unsigned char *px3 = malloc((size_t)W3 * H3 * 3);
    float *E3 = malloc((size_t)W3 * H3 * sizeof(float));
    for (int i = 0; i < W3 * H3 * 3; i++)
      px3[i] = (unsigned char)(test_rand64() & 255);
    dsg_image img3 = image_of(W3, H3, px3);
    CHECK(app_forest_detect_ms(F, &img3, 0, NULL, E3) == DSG_OK, "detect at 3 scales");
    int off3 = 0;
    for (int y = 16; y < 48; y++)
      for (int x = 0; x < W3; x++)
        off3 += !CLOSE(E3[y * W3 + x], APP_FOREST_GAIN * 8.0 / 64.0, 1e-5, 1e-6);
    CHECK(off3 == 0, "3 scales: %d interior pixels off (%g)", off3, E3[32 * W3 + 40]);
    /* and sizes the halving cannot halve */
    for (int k = 0; k < 3; k++) {
      const int ws = k == 1 ? 5 : 1, hs = k == 2 ? 4 : 1;
      dsg_image tiny = image_of(ws, hs, px3);
      CHECK(app_forest_detect_ms(F, &tiny, APP_FOREST_SHARPEN, NULL, E3) == DSG_OK &&
                isfinite(E3[0]) && E3[0] >= 0,
            "3 scales of %d x %d", ws, hs);
    }
    free(px3);
    free(E3);
    app_forest_free(F);
  }
  free(m.raw);

  /* a tree that reads the brightness (channel 0, L) at the patch's middle, (8, 8) of its 16 x 16
   * channel places: the image's pixel at the patch's centre. Top half black, bottom white: the
   * patches centred in the white half draw their split, the black half's draw nothing. */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      memset(px + ((size_t)y * w + x) * 3, y < h / 2 ? 0 : 255, 3);
  m = split_model(8 * 16 + 8, 128);
  F = parse(&m, &status);
  CHECK(status == DSG_OK && F, "the brightness tree parses");
  if (F) {
    CHECK(app_forest_detect(F, &img, 0, NULL, E) == DSG_OK, "detect");
    split_reference(w, h, ref);
    int dark = 0, bright = 0;
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        if (y < h / 2 - 10)
          dark += E[y * w + x] != 0.0f;
        if (y >= h / 2 + 10)
          bright += !CLOSE(E[y * w + x], ref[y * w + x], 1e-5, 1e-6);
      }
    CHECK(dark == 0 && bright == 0, "%d dark pixels drawn, %d bright ones off", dark, bright);
    app_forest_free(F);
  }
  free(m.raw);
  free(px);
  free(E);
  free(ref);
}

/* ---- damaged models ------------------------------------------------------------------------ */

static void test_damage(void)
{
  const int w = 20, h = 17;
  unsigned char px[20 * 17 * 3];
  for (size_t i = 0; i < sizeof(px); i++)
    px[i] = (unsigned char)(test_rand64() & 255);
  dsg_image img = image_of(w, h, px);
  float E[20 * 17];
  model m = split_model(100, 7);
  size_t len;
  unsigned char *bytes = deflated(&m, &len);
  /* every truncation of the file */
  int accepted = 0;
  for (size_t cut = 0; cut < len; cut++) {
    app_forest *F = NULL;
    const int status = app_forest_parse(bytes, cut, &F);
    accepted += status != DSG_ERR_FORMAT || F != NULL;
    app_forest_free(F);
  }
  CHECK(accepted == 0, "%d truncations of %zu bytes not refused as damaged", accepted, len);
  /* a header that asks for 4 GB */
  put32(bytes + 4, 0xffffffffu);
  app_forest *F = NULL;
  CHECK(app_forest_parse(bytes, len, &F) == DSG_ERR_FORMAT && !F, "a 4 GB header refused");
  free(bytes);
  /* every byte of the inflated model set to 0, 255 and its value + 1: refused, or a model that
   * runs (the sanitizer build checks that it stays in bounds) */
  int wrong = 0, ran = 0;
  for (size_t i = 0; i < m.len; i++)
    for (int v = 0; v < 3; v++) {
      model d = {malloc(m.len), m.len};
      memcpy(d.raw, m.raw, m.len);
      d.raw[i] = (unsigned char)(v == 0 ? 0 : v == 1 ? 255 : d.raw[i] + 1);
      int status;
      F = parse(&d, &status);
      if (status == DSG_OK) {
        const int st = app_forest_detect(F, &img, APP_FOREST_SHARPEN, NULL, E);
        for (int k = 0; k < w * h; k++)
          wrong += st != DSG_OK || !isfinite(E[k]) || E[k] < 0.0f;
        ran++;
      } else {
        wrong += status != DSG_ERR_FORMAT || F != NULL;
      }
      app_forest_free(F);
      free(d.raw);
    }
  /* (a feature, a threshold or a leaf's label pattern changed still makes a model) */
  CHECK(wrong == 0 && ran > 0, "%d wrong answers from damaged models (%d ran)", wrong, ran);
  free(m.raw);
}

/* ---- the library's forest ------------------------------------------------------------------ */

static void test_default(void)
{
  const app_forest *F;
  CHECK(app_forest_default(&F) == DSG_OK && F && F->ntrees >= APP_FOREST_TREES_EVAL,
        "the library's forest");
  const int w = 64, h = 48;
  unsigned char *px = malloc((size_t)w * h * 3);
  float *soft = malloc((size_t)w * h * sizeof(float)),
        *thin = malloc((size_t)w * h * sizeof(float));
  /* a vertical step, dark grey to light grey, between columns 31 and 32 */
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      memset(px + ((size_t)y * w + x) * 3, x < w / 2 ? 60 : 190, 3);
  dsg_image img = image_of(w, h, px);
  CHECK(app_forest_contours(NULL, &img, 1, NULL, thin, soft) == DSG_OK, "contours");
  int weak = 0, far = 0, stray = 0, lines = 0;
  for (int y = 8; y < h - 8; y++) {
    const float *row = soft + (size_t)y * w, *trow = thin + (size_t)y * w;
    weak += fmaxf(row[w / 2 - 1], row[w / 2]) < 0.3f;
    for (int x = 0; x < w; x++) {
      if (abs(2 * x - (w - 1)) > 20) /* 10 pixels or more from the step */
        far += row[x] > 0.05f;
      if (trow[x] > 0.0f)
        abs(2 * x - (w - 1)) <= 3 ? lines++ : stray++;
    }
  }
  CHECK(weak == 0, "%d rows where the step's map is below 0.3 (%g)", weak, soft[h / 2 * w + w / 2]);
  CHECK(far == 0, "%d pixels far from the step above 0.05", far);
  CHECK(stray == 0 && lines >= h - 16 && lines <= 2 * (h - 16),
        "the thinned map: %d pixels on the step's line (want one or two a row), %d elsewhere",
        lines, stray);
  /* the taper: nothing on the image's outermost pixels */
  int edge = 0;
  for (int x = 0; x < w; x++)
    edge += thin[x] != 0.0f || thin[(size_t)(h - 1) * w + x] != 0.0f;
  CHECK(edge == 0, "%d pixels of the top and bottom rows drawn", edge);
  /* a constant image: no leaf splits it, nothing drawn */
  memset(px, 97, (size_t)w * h * 3);
  CHECK(app_forest_contours(NULL, &img, 1, NULL, thin, soft) == DSG_OK, "contours");
  float top = 0.0f;
  for (int i = 0; i < w * h; i++)
    top = fmaxf(top, fmaxf(soft[i], thin[i]));
  CHECK(top == 0.0f, "a constant image has contours up to %g", top);
  free(px);
  free(soft);
  free(thin);
}

/* The map made ahead (dsg_presolve's): taken by the same pixels only, once, equal to the map
 * made then; another image's take leaves it. */
static void test_ahead(void)
{
  const int w = 48, h = 40;
  const size_t n = (size_t)w * h;
  unsigned char *a = malloc(n * 3), *b = malloc(n * 3);
  float *want = malloc(n * sizeof(float)), *want_soft = malloc(n * sizeof(float)),
        *got = malloc(n * sizeof(float)), *got_soft = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; i++) /* a disc on grey; b the same with one pixel changed */
    memset(a + 3 * i, hypot((double)(i % w) - 20.0, (double)(i / w) - 18.0) < 11.0 ? 200 : 50, 3);
  memcpy(b, a, n * 3);
  b[3 * (n / 2)] ^= 1;
  dsg_image ia = image_of(w, h, a), ib = image_of(w, h, b);
  CHECK(app_forest_contours(NULL, &ia, APP_FOREST_SCALES, NULL, want, want_soft) == DSG_OK,
        "contours: %s", dsg_error_message());
  CHECK(app_forest_ahead_take(&ia, got, got_soft) == 0, "a take with nothing made ahead");
  CHECK(app_forest_ahead_put(&ia, 1, NULL) == DSG_OK, "put: %s", dsg_error_message());
  CHECK(app_forest_ahead_take(&ib, got, got_soft) == 0, "another image's take");
  memset(got, 0, n * sizeof(float));
  CHECK(app_forest_ahead_take(&ia, got, got_soft) == 1 &&
            memcmp(got, want, n * sizeof(float)) == 0 &&
            memcmp(got_soft, want_soft, n * sizeof(float)) == 0,
        "the take is not the map made then");
  CHECK(app_forest_ahead_take(&ia, got, NULL) == 0, "a second take");
  CHECK(app_forest_ahead_put(&ib, 1, NULL) == DSG_OK && app_forest_ahead_take(&ib, got, NULL) == 1,
        "put and take without soft");
  /* made without the thinning (a map for the hierarchy): the map alone, or thinned at the take
   * to the same floats as app_forest_contours' */
  memset(got, 0, n * sizeof(float));
  memset(got_soft, 0, n * sizeof(float));
  CHECK(app_forest_ahead_put(&ia, 0, NULL) == DSG_OK &&
            app_forest_ahead_take(&ia, NULL, got_soft) == 1 &&
            memcmp(got_soft, want_soft, n * sizeof(float)) == 0,
        "a map made ahead without its thinning is not the map made then");
  CHECK(app_forest_ahead_put(&ia, 0, NULL) == DSG_OK &&
            app_forest_ahead_take(&ia, got, NULL) == 1 && memcmp(got, want, n * sizeof(float)) == 0,
        "a strength thinned at the take is not app_forest_contours'");
  /* the map alone from app_forest_contours: the same map, the thinning not asked for */
  memset(got_soft, 0, n * sizeof(float));
  CHECK(app_forest_contours(NULL, &ia, APP_FOREST_SCALES, NULL, NULL, got_soft) == DSG_OK &&
            memcmp(got_soft, want_soft, n * sizeof(float)) == 0,
        "the map without the strength differs");
  CHECK(app_forest_contours(NULL, &ia, APP_FOREST_SCALES, NULL, NULL, NULL) == DSG_ERR_INVALID,
        "contours with neither output accepted");
  free(a);
  free(b);
  free(want);
  free(want_soft);
  free(got);
  free(got_soft);
}

/* app_forest_triangle against the filter written out here, pixel by pixel with the reflection
 * (each output's taps summed from -r to r, in float): bit for bit, on random maps wider and
 * narrower than the filter, at the radii the forest uses and past the fast path's largest. */
static void test_triangle(void)
{
  static const int sizes[][2] = {{1, 1}, {3, 2}, {9, 9}, {10, 40}, {37, 23}, {64, 5}, {200, 61}};
  static const int radii[] = {0, 1, 2, 4, 16, 17};
  int wrong = 0, cases = 0;
  for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
    for (size_t ri = 0; ri < sizeof(radii) / sizeof(radii[0]); ri++) {
      const int w = sizes[si][0], h = sizes[si][1], r = radii[ri];
      const size_t n = (size_t)w * h;
      float *m = malloc(n * sizeof(float)), *want = malloc(n * sizeof(float)),
            *tmp = malloc(n * sizeof(float)), *row = malloc(n * sizeof(float));
      for (size_t i = 0; i < n; i++)
        m[i] = (float)(test_rand64() % 100000) / 7919.0f - 3.0f;
      const float norm = 1.0f / (float)((r + 1) * (r + 1));
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
          float acc = 0.0f;
          for (int t = -r; t <= r; t++)
            acc += (float)(r + 1 - abs(t)) * m[(size_t)y * w + app_reflect(x + t, w)];
          row[(size_t)y * w + x] = acc * norm;
        }
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
          float acc = 0.0f;
          for (int t = -r; t <= r; t++)
            acc += (float)(r + 1 - abs(t)) * row[(size_t)app_reflect(y + t, h) * w + x];
          want[(size_t)y * w + x] = acc * norm;
        }
      app_forest_triangle(m, w, h, r, tmp);
      wrong += memcmp(m, want, n * sizeof(float)) != 0;
      cases++;
      free(m);
      free(want);
      free(tmp);
      free(row);
    }
  CHECK(wrong == 0, "the triangle differs from the filter written out in %d of %d cases", wrong,
        cases);
}

int main(void)
{
  test_grid();
  test_channels();
  test_triangle();
  test_hand_model();
  test_damage();
  test_default();
  test_ahead();
  return check_report("test_forest");
}
