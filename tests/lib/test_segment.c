/* Segmentation end to end through the library: synthetic images of k flat regions plus mild
 * noise come out as exactly those regions (adjusted Rand index >= 0.95), for intensity and for
 * colour features; k-means alone recovers well-separated blobs; the ARI itself is checked.
 * Also the output set's commit and its background writer of .npy arrays. With an argument, writes
 * the intensity test image there (data/synthetic_regions.png). */
#include "diaseg_internal.h"
#include "io.h"
#include "check.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { W = 120, H = 80 };

/* Region of pixel (x, y): 0 background, 1 disc, 2 rectangle, 3 ellipse. */
static int region_of(int x, int y)
{
  if ((x - 40) * (x - 40) + (y - 45) * (y - 45) < 22 * 22)
    return 1;
  if (x >= 75 && x < 110 && y >= 8 && y < 35)
    return 2;
  if ((x - 92) * (x - 92) * 4 + (y - 62) * (y - 62) * 9 < 30 * 30)
    return 3;
  return 0;
}

/* Intensity image: levels 0.15 / 0.75 / 0.45 / 0.95, uniform noise +-0.03. Colour image: equal
 * luminance for every region (only the hue differs), so only --affinity color can separate them. */
static void make_image(dsg_image *img, int *truth, int color);

/* Specks: isolated pixels far in intensity from every neighbour are components of their own with
 * eigenvalue 1. They must neither take eigenvector slots nor become segments. */
static void add_specks(dsg_image *img, int count)
{
  for (int s = 0; s < count; s++) {
    int x = 3 + (int)(test_uniform() * (W - 6)), y = 3 + (int)(test_uniform() * (H - 6));
    unsigned char *p = img->pixels + ((size_t)y * W + x) * img->channels;
    p[0] = p[0] < 128 ? 255 : 0;
  }
}

static void make_image(dsg_image *img, int *truth, int color)
{
  static const double level[4] = {0.15, 0.75, 0.45, 0.95};
  static const unsigned char rgb[4][3] = {
      {120, 120, 120}, {200, 90, 120}, {60, 150, 110}, {90, 120, 220}};
  unsigned char *px = malloc((size_t)W * H * 3);
  test_rng_state = 99;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int r = region_of(x, y), i = y * W + x;
      truth[i] = r;
      if (!color) {
        double v = level[r] + 0.06 * (test_uniform() - 0.5);
        px[i] = (unsigned char)(v * 255 + 0.5);
      } else {
        for (int c = 0; c < 3; c++)
          px[3 * i + c] = (unsigned char)(rgb[r][c] + (int)(12 * (test_uniform() - 0.5)));
      }
    }
  dsg_image_from_pixels(img, W, H, color ? 3 : 1, px);
  free(px);
}

static double segment(const dsg_image *img, const app_cue *feature, int k, int *labels)
{
  float *f = NULL;
  int nf = 0, dim = 0;
  spmv_dia *N = NULL;
  double *sd = NULL;
  spmv_matvec *mv = NULL;
  eig_options opt;
  eig_result res;
  float *emb = NULL;
  app_affinity_params ap = {5, 0.1, 4.0, NULL, 0, NULL};
  app_kmeans_params kp = {k, 8, 300, 1};
  app_features(img, feature, &f, &nf);
  CHECK(app_affinity_build(img->width, img->height, f, nf, &ap, &N, &sd) == DSG_OK, "affinity");
  app_components comps;
  CHECK(app_components_find(N, sd, &comps) == DSG_OK, "components");
  spmv_matvec_create_cpu(&mv, N);
  eig_options_init(&opt);
  opt.nev = 8;
  app_components_to_options(&comps, &opt);
  CHECK(eig_arpack_solve(mv, &opt, &res) == DSG_OK, "solve: %s", dsg_error_message());
  CHECK(comps.significant <= 4 && comps.significant >= 1, "significant components %d",
        comps.significant);
  /* no returned eigenvector is concentrated on a speck */
  for (int k2 = 0; k2 < res.nconv; k2++) {
    double speck_mass = 0;
    for (int i = 0; i < W * H; i++)
      if (comps.label[i] >= comps.significant)
        speck_mass +=
            (double)res.vectors[(size_t)k2 * W * H + i] * res.vectors[(size_t)k2 * W * H + i];
    CHECK(speck_mass < 1e-6, "eigenvector %d has %.3g of its mass on specks", k2, speck_mass);
  }
  if (getenv("TEST_SEGMENT_DUMP")) {
    printf("components %d significant %d specks %zu:", comps.count, comps.significant,
           comps.speck_pixels);
    for (int q = 0; q < res.nconv; q++)
      printf(" %.8f", res.values[q]);
    printf("\n");
  }
  int pick[APP_MAX_EMBED];
  app_pick_vectors(&res, k, app_min_support((size_t)W * H), pick);
  CHECK(app_embedding(&res, sd, pick, k, &emb, &dim) == DSG_OK && dim == k - 1, "embedding");
  CHECK(app_kmeans(emb, (size_t)W * H, dim, &kp, labels, NULL) == DSG_OK, "kmeans");
  app_fill_specks(labels, &comps, W, H);
  free(emb);
  app_components_free(&comps);
  eig_result_free(&res);
  spmv_matvec_destroy(mv);
  spmv_dia_destroy(N);
  free(sd);
  free(f);
  return 0;
}

/* ---- app_out: the all-or-nothing commit ---- */

static void put_file(const char *dir, const char *name, const char *text)
{
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

/* The file's first line ("" if missing). */
static const char *get_file(const char *dir, const char *name)
{
  static char text[64];
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  text[0] = '\0';
  if (f) {
    if (!fgets(text, sizeof(text), f))
      text[0] = '\0';
    fclose(f);
  }
  return text;
}

/* Entries of dir whose name starts with '.' (temporaries, backups), . and .. aside. */
static int hidden_files(const char *dir)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  int count = 0;
  while (d && (e = readdir(d)))
    count += e->d_name[0] == '.' && strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d)
    closedir(d);
  return count;
}

/* Stages a.txt, b.txt, c.txt with "new" in dir. */
static app_out *stage_three(const char *dir)
{
  app_out *o = NULL;
  static const char *const names[] = {"a.txt", "b.txt", "c.txt"};
  CHECK(app_out_begin(&o, dir) == DSG_OK, "app_out_begin: %s", dsg_error_message());
  for (int i = 0; o && i < 3; i++)
    CHECK(app_out_text(o, names[i], "new\n", 4) == DSG_OK, "stage %s", names[i]);
  return o;
}

static void out_commit_tests(void)
{
  char dir[] = "/tmp/diaseg-test-out-XXXXXX", path[512];
  app_out *o;
  int st;
  if (!mkdtemp(dir)) {
    CHECK(0, "mkdtemp");
    return;
  }
  /* an earlier run's files */
  put_file(dir, "a.txt", "old\n");
  put_file(dir, "b.txt", "old\n");
  put_file(dir, "c.txt", "old\n");

  /* a folder in the way of the last file: an error before any rename, the earlier files stay */
  snprintf(path, sizeof(path), "%s/c.txt", dir);
  unlink(path);
  mkdir(path, 0777);
  o = stage_three(dir);
  st = app_out_commit(o, NULL);
  CHECK(st == DSG_ERR_IO && strstr(dsg_error_message(), "c.txt") &&
            strstr(dsg_error_message(), "folder"),
        "a folder in the way: %d '%s'", st, dsg_error_message());
  app_out_destroy(o);
  CHECK(strcmp(get_file(dir, "a.txt"), "old\n") == 0 &&
            strcmp(get_file(dir, "b.txt"), "old\n") == 0,
        "a folder in the way: the earlier files were replaced");
  CHECK(hidden_files(dir) == 0, "a folder in the way: %d hidden files left", hidden_files(dir));
  rmdir(path);
  put_file(dir, "c.txt", "old\n");

  /* a failure midway (the last temporary vanished before its rename): the files renamed before
   * it are rolled back to the earlier ones, and no backup stays */
  o = stage_three(dir);
  snprintf(path, sizeof(path), "%s/.c.txt.tmp-%ld", dir, (long)getpid());
  CHECK(unlink(path) == 0, "the temporary is not %s", path);
  st = app_out_commit(o, NULL);
  CHECK(st == DSG_ERR_IO && strstr(dsg_error_message(), "c.txt"), "midway failure: %d '%s'", st,
        dsg_error_message());
  app_out_destroy(o);
  CHECK(strcmp(get_file(dir, "a.txt"), "old\n") == 0 &&
            strcmp(get_file(dir, "b.txt"), "old\n") == 0 &&
            strcmp(get_file(dir, "c.txt"), "old\n") == 0,
        "midway failure: not rolled back (a: %s)", get_file(dir, "a.txt"));
  CHECK(hidden_files(dir) == 0, "midway failure: %d hidden files left", hidden_files(dir));

  /* a new file where there was none goes again on a rollback */
  snprintf(path, sizeof(path), "%s/a.txt", dir);
  unlink(path);
  o = stage_three(dir);
  snprintf(path, sizeof(path), "%s/.c.txt.tmp-%ld", dir, (long)getpid());
  unlink(path);
  CHECK(app_out_commit(o, NULL) == DSG_ERR_IO, "midway failure accepted");
  app_out_destroy(o);
  snprintf(path, sizeof(path), "%s/a.txt", dir);
  CHECK(access(path, F_OK) != 0, "rollback left a new a.txt where there was none");
  put_file(dir, "a.txt", "old\n");

  /* success: every file replaced, no backup left; a second staged copy at an outside path naming
   * one of them (--json DIR/b.txt) commits too */
  o = stage_three(dir);
  {
    FILE *fp = NULL;
    int direct = -1;
    snprintf(path, sizeof(path), "%s/b.txt", dir);
    CHECK(app_out_open_path(o, path, &fp, &direct) == DSG_OK && fp && direct == 0,
          "app_out_open_path: %s", dsg_error_message());
    if (fp) {
      fputs("new\n", fp);
      CHECK(app_out_close(o, fp) == DSG_OK, "close the outside copy");
    }
  }
  st = app_out_commit(o, NULL);
  CHECK(st == DSG_OK, "commit: %s", dsg_error_message());
  app_out_destroy(o);
  CHECK(strcmp(get_file(dir, "a.txt"), "new\n") == 0 &&
            strcmp(get_file(dir, "b.txt"), "new\n") == 0 &&
            strcmp(get_file(dir, "c.txt"), "new\n") == 0,
        "commit: not every file replaced");
  CHECK(hidden_files(dir) == 0, "commit: %d hidden files left", hidden_files(dir));

  /* app_out_open_path: a folder is refused; a device is not staged but written in place */
  {
    FILE *fp = NULL;
    int direct = -1;
    o = NULL;
    CHECK(app_out_begin(&o, dir) == DSG_OK, "app_out_begin");
    CHECK(app_out_open_path(o, dir, &fp, &direct) == DSG_ERR_IO && !fp &&
              strstr(dsg_error_message(), "folder"),
          "a folder as --json: '%s'", dsg_error_message());
    CHECK(app_out_open_path(o, "/dev/null", &fp, &direct) == DSG_OK && !fp && direct == 1,
          "/dev/null is not written in place");
    CHECK(app_write_direct("/dev/null", "x", 1) == DSG_OK, "write to /dev/null");
    app_out_destroy(o);
  }
  CHECK(access("/dev/null", F_OK) == 0, "/dev/null is gone");
  {
    struct stat sb;
    CHECK(stat("/dev/null", &sb) == 0 && S_ISCHR(sb.st_mode), "/dev/null is no longer a device");
  }

  static const char *const names[] = {"a.txt", "b.txt", "c.txt"};
  for (int i = 0; i < 3; i++) {
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    unlink(path);
  }
  CHECK(rmdir(dir) == 0, "%s is not empty at the end", dir);
}

/* The bytes of dir/name into buf (at most cap), -1 when unreadable. */
static long file_bytes(const char *dir, const char *name, unsigned char *buf, size_t cap)
{
  char path[512];
  FILE *f;
  size_t n;
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  f = fopen(path, "rb");
  if (!f)
    return -1;
  n = fread(buf, 1, cap, f);
  fclose(f);
  return (long)n;
}

/* The background writer of .npy arrays (issue 17): its files are byte for byte those of the
 * writers one at a time, more arrays than threads included; a caller's failure keeps its status
 * and message and leaves nothing once the set is destroyed; a name it cannot stage stages none. */
static void out_writer_tests(void)
{
  char dir[] = "/tmp/diaseg-test-npy-XXXXXX", name[32];
  static const float f[6] = {1.5f, -2.0f, 0.0f, 3.25f, 1e-7f, -0.5f};
  static const int32_t l[4] = {0, 7, -3, 65536};
  static const double d[4] = {0.1, -1e300, 2.5, 0.0};
  const app_npy arrays[6] = {
      {"f.npy", APP_NPY_F32, f, 2, {2, 3, 0}},  {"l.npy", APP_NPY_I32, l, 1, {4, 0, 0}},
      {"d.npy", APP_NPY_F64, d, 3, {1, 2, 2}},  {"f2.npy", APP_NPY_F32, f, 1, {6, 0, 0}},
      {"l2.npy", APP_NPY_I32, l, 2, {2, 2, 0}}, {"e.npy", APP_NPY_F32, f, 2, {0, 3, 0}}};
  app_out *o = NULL;
  app_out_writer *w = NULL;
  unsigned char a[512], b[512];
  if (!mkdtemp(dir)) {
    CHECK(0, "mkdtemp");
    return;
  }
  CHECK(app_out_begin(&o, dir) == DSG_OK, "app_out_begin: %s", dsg_error_message());
  CHECK(app_out_npy_start(o, arrays, 6, &w) == DSG_OK && w, "app_out_npy_start: %s",
        dsg_error_message());
  for (int i = 0; i < 6; i++) { /* the same arrays one at a time, meanwhile */
    const app_npy *x = &arrays[i];
    snprintf(name, sizeof(name), "one_%s", x->name);
    CHECK((x->type == APP_NPY_F32 ? app_out_npy_f32(o, name, x->data, x->ndim, x->shape)
           : x->type == APP_NPY_I32
               ? app_out_npy_i32(o, name, x->data, x->ndim, x->shape)
               : app_out_npy_f64(o, name, x->data, x->ndim, x->shape)) == DSG_OK,
          "%s: %s", name, dsg_error_message());
  }
  CHECK(app_out_npy_wait(w, DSG_OK) == DSG_OK, "app_out_npy_wait: %s", dsg_error_message());
  CHECK(app_out_commit(o, NULL) == DSG_OK, "commit: %s", dsg_error_message());
  app_out_destroy(o);
  for (int i = 0; i < 6; i++) {
    long na = file_bytes(dir, arrays[i].name, a, sizeof(a)), nb;
    snprintf(name, sizeof(name), "one_%s", arrays[i].name);
    nb = file_bytes(dir, name, b, sizeof(b));
    CHECK(na > 0 && na == nb && memcmp(a, b, (size_t)na) == 0, "%s: %ld bytes, one at a time %ld",
          arrays[i].name, na, nb);
  }
  CHECK(hidden_files(dir) == 0, "the writer left %d hidden files", hidden_files(dir));

  /* the caller failed meanwhile: its status and message stay, the arrays go with the set */
  o = NULL;
  w = NULL;
  CHECK(app_out_begin(&o, dir) == DSG_OK, "app_out_begin: %s", dsg_error_message());
  CHECK(app_out_npy_start(o, arrays, 3, &w) == DSG_OK, "app_out_npy_start: %s",
        dsg_error_message());
  dsg_error_set(DSG_ERR_LIMIT, "the caller's own failure");
  CHECK(app_out_npy_wait(w, DSG_ERR_LIMIT) == DSG_ERR_LIMIT &&
            strcmp(dsg_error_message(), "the caller's own failure") == 0,
        "a failed caller's status: '%s'", dsg_error_message());
  app_out_destroy(o);
  CHECK(hidden_files(dir) == 0, "a failed caller: %d hidden files left", hidden_files(dir));

  /* a name that cannot be staged: none of the arrays is, and no writer starts */
  o = NULL;
  w = (app_out_writer *)1;
  const app_npy bad[2] = {{"ok.npy", APP_NPY_F32, f, 1, {6, 0, 0}},
                          {"no/slash.npy", APP_NPY_F32, f, 1, {6, 0, 0}}};
  CHECK(app_out_begin(&o, dir) == DSG_OK, "app_out_begin: %s", dsg_error_message());
  CHECK(app_out_npy_start(o, bad, 2, &w) == DSG_ERR_INVALID && w == NULL &&
            strstr(dsg_error_message(), "no/slash.npy"),
        "a name with a slash: '%s'", dsg_error_message());
  CHECK(hidden_files(dir) == 0, "a name with a slash: %d files staged", hidden_files(dir));
  CHECK(app_out_npy_wait(NULL, DSG_OK) == DSG_OK, "app_out_npy_wait(NULL)");
  app_out_destroy(o);

  for (int i = 0; i < 6; i++) {
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", dir, arrays[i].name);
    unlink(path);
    snprintf(path, sizeof(path), "%s/one_%s", dir, arrays[i].name);
    unlink(path);
  }
  CHECK(rmdir(dir) == 0, "%s is not empty at the end", dir);
}

int main(int argc, char **argv)
{
  int *truth = malloc(sizeof(int) * W * H), *labels = malloc(sizeof(int) * W * H);
  dsg_image img;

  if (argc > 1) { /* regenerate data/synthetic_regions.png */
    app_out *o = NULL;
    char *dir = strdup(argv[1]), *slash = strrchr(dir, '/');
    make_image(&img, truth, 0);
    if (slash)
      *slash = '\0';
    int st = app_out_begin(&o, slash ? dir : ".");
    if (st == DSG_OK)
      st = app_out_png(o, slash ? slash + 1 : argv[1], W, H, 1, img.pixels);
    if (st == DSG_OK)
      st = app_out_commit(o, NULL);
    app_out_destroy(o);
    free(dir);
    return st == DSG_OK ? 0 : 1;
  }

  /* the ARI itself */
  {
    int a[6] = {0, 0, 1, 1, 2, 2}, b[6] = {5, 5, 3, 3, 0, 0}, c[6] = {0, 1, 0, 1, 0, 1};
    CHECK(CLOSE(app_adjusted_rand(a, b, 6), 1.0, 0, 1e-12), "ARI of a relabeling");
    CHECK(app_adjusted_rand(a, c, 6) < 0.1, "ARI of unrelated labelings = %g",
          app_adjusted_rand(a, c, 6));
  }

  make_image(&img, truth, 0);
  segment(&img, test_cue("intensity"), 4, labels);
  double ari = app_adjusted_rand(truth, labels, (size_t)W * H);
  CHECK(ari >= 0.95, "intensity regions: adjusted Rand index %.4f < 0.95", ari);
  printf("intensity: ARI %.4f\n", ari);
  /* labels are numbered by first appearance: pixel 0 is label 0 */
  CHECK(labels[0] == 0, "labels not canonical");
  dsg_image_free(&img);

  /* with 12 specks: same segmentation (speck pixels count with the region around them) */
  make_image(&img, truth, 0);
  add_specks(&img, 12);
  segment(&img, test_cue("intensity"), 4, labels);
  ari = app_adjusted_rand(truth, labels, (size_t)W * H);
  CHECK(ari >= 0.95, "regions with specks: adjusted Rand index %.4f < 0.95", ari);
  printf("intensity with specks: ARI %.4f\n", ari);
  if (getenv("TEST_SEGMENT_DUMP"))
    for (int y = 0; y < H; y += 2, putchar('\n'))
      for (int x = 0; x < W; x += 1)
        putchar('0' + labels[y * W + x]);
  dsg_image_free(&img);

  make_image(&img, truth, 1);
  segment(&img, test_cue("color"), 4, labels);
  ari = app_adjusted_rand(truth, labels, (size_t)W * H);
  CHECK(ari >= 0.95, "colour regions: adjusted Rand index %.4f < 0.95", ari);
  printf("color: ARI %.4f\n", ari);
  dsg_image_free(&img);

  /* localised eigenvectors and carving them out as specks */
  {
    enum { NN = 500 };
    float vec[3 * NN] = {0};
    double val[3] = {1, 0.9, 0.8}, sd[NN];
    eig_result er = {0};
    er.n = NN;
    er.nconv = 3;
    er.values = val;
    er.vectors = vec;
    for (int i = 0; i < NN; i++) {
      vec[i] = (float)(1.0 / sqrt(NN)); /* spread */
      sd[i] = 1.0 + (i % 5);
    }
    vec[NN + 17] = 0.8f; /* localised on pixels 17 and 40, a faint tail elsewhere */
    vec[NN + 40] = 0.6f;
    for (int i = 0; i < NN; i++)
      if (i != 17 && i != 40)
        vec[NN + i] = 1e-4f;
    vec[2 * NN + 3] = 1.0f; /* a single pixel */
    int px[64];
    CHECK(app_localised_support(&er, 0, 32, px) == 0, "a spread vector is not localised");
    int cnt = app_localised_support(&er, 1, 32, px);
    CHECK(cnt == 2 && px[0] == 17 && px[1] == 40, "pair support: %d (%d, %d)", cnt, px[0], px[1]);
    CHECK(app_localised_support(&er, 2, 32, px) == 1 && px[0] == 3, "single-pixel support");
    { /* at the size bound: 31 equal entries are a support of 31; 40 are spread (the first
       * pass's bound on what 32 entries can hold rejects them) */
      float *v = vec + 2 * NN;
      memset(v, 0, NN * sizeof(*v));
      for (int i = 0; i < 40; i++)
        v[7 * i] = i < 31 ? 0.25f : 0.0f;
      CHECK(app_localised_support(&er, 2, 32, px) == 31, "31 equal entries: %d",
            app_localised_support(&er, 2, 32, px));
      for (int i = 31; i < 40; i++)
        v[7 * i] = 0.25f;
      CHECK(app_localised_support(&er, 2, 32, px) == 0, "40 equal entries are not localised");
      memset(v, 0, NN * sizeof(*v));
      v[3] = 1.0f; /* the single pixel again, for the carving below */
      CHECK(app_localised_support(&er, 2, 32, px) == 1 && px[0] == 3, "single-pixel support");
    }
    CHECK(app_support(&er, 0) > NN - 1 && app_support(&er, 2) < 1.0001,
          "participation ratios %g %g", app_support(&er, 0), app_support(&er, 2));

    app_components comps = {0};
    comps.count = 1;
    comps.significant = 1;
    comps.label = calloc(NN, sizeof(int));
    comps.values = malloc(NN * sizeof(float));
    CHECK(app_components_carve(&comps, sd, NN, px, 1) == DSG_OK && comps.count == 2 &&
              comps.label[3] == 1 && comps.speck_pixels == 1,
          "carve one pixel");
    double n0 = 0, n1 = 0;
    for (int i = 0; i < NN; i++) {
      double sq = (double)comps.values[i] * comps.values[i];
      if (comps.label[i] == 0)
        n0 += sq;
      else
        n1 += sq;
      /* each group's vector is proportional to D^1/2 on it */
      const int ref = comps.label[i] == 0 ? 0 : 3;
      CHECK(CLOSE(comps.values[i] / sd[i], comps.values[ref] / sd[ref], 1e-6, 0),
            "group vector not proportional to D^1/2 1 at %d", i);
    }
    CHECK(CLOSE(n0, 1, 1e-6, 0) && CLOSE(n1, 1, 1e-6, 0), "group norms %g %g", n0, n1);
    app_components_free(&comps);
  }

  /* k-means alone: three tight blobs in 2-D are found exactly, whatever the seed */
  {
    enum { NP = 3000 };
    float *pts = malloc(sizeof(float) * NP * 2);
    int *lab = malloc(sizeof(int) * NP), *tru = malloc(sizeof(int) * NP);
    static const float cx[3] = {0, 5, 0}, cy[3] = {0, 0, 5};
    for (int i = 0; i < NP; i++) {
      tru[i] = i % 3;
      pts[2 * i] = cx[i % 3] + (float)(test_uniform() - 0.5);
      pts[2 * i + 1] = cy[i % 3] + (float)(test_uniform() - 0.5);
    }
    for (uint64_t seed = 1; seed <= 5; seed++) {
      app_kmeans_params kp = {3, 4, 100, seed};
      double inertia = -1;
      CHECK(app_kmeans(pts, NP, 2, &kp, lab, &inertia) == DSG_OK, "kmeans");
      CHECK(app_adjusted_rand(tru, lab, NP) == 1.0, "blobs, seed %d: ARI %g", (int)seed,
            app_adjusted_rand(tru, lab, NP));
      CHECK(inertia > 0 && inertia < NP * 0.2, "blobs inertia %g", inertia);
    }
    app_kmeans_params bad = {0, 4, 100, 1};
    CHECK(app_kmeans(pts, NP, 2, &bad, lab, NULL) == DSG_ERR_INVALID, "k = 0 accepted");
    free(pts);
    free(lab);
    free(tru);
  }
  out_commit_tests();
  out_writer_tests();
  free(truth);
  free(labels);
  return check_report("test_segment");
}
