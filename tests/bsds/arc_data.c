/* The base arcs of segment's hierarchy, for tests/bsds/fit_arcs.py: a tool run by hand on
 * BSDS500 train, not a test (docs/QUALITY.md).
 *
 *   arc_data IMAGE OUT [--arc-weight W]
 *
 * Runs segment's defaults before the boundary network (the C path, net_weight 0, arc_weight 0.3:
 * the model is fit on gPb's arcs) on IMAGE at its own size and writes to OUT, for every
 * base arc of the hierarchy (the regions left once the specks merged) the features the
 * library's arc model reads (app/lib/arcs.c, APP_ARC_FEATURES of them) and the cracks on it:
 *   int32 width, height, arcs, features; int64 cracks;
 *   int64 crack[cracks] (2 p: the crack right of pixel p, 2 p + 1: below it);
 *   int32 arc[cracks]; float64 features[arcs][features].
 * The features do not depend on the arc weight (they are made before the model is read). */
#include "diaseg_internal.h"
#include "io.h"
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_record(const char *path, int w, int h, const app_arc_record *rec)
{
  char tmp[4096];
  FILE *f = record_open(path, tmp, sizeof(tmp));
  const int32_t head[4] = {w, h, rec->narcs, APP_ARC_FEATURES};
  const int64_t ncr = (int64_t)rec->ncracks;
  int ok = f && fwrite(head, sizeof(head), 1, f) == 1 && fwrite(&ncr, sizeof(ncr), 1, f) == 1;
  for (size_t i = 0; ok && i < rec->ncracks; i++) {
    const int64_t c = (int64_t)rec->crack[i];
    ok = fwrite(&c, sizeof(c), 1, f) == 1;
  }
  for (size_t i = 0; ok && i < rec->ncracks; i++) {
    const int32_t a = rec->arc[i];
    ok = fwrite(&a, sizeof(a), 1, f) == 1;
  }
  ok = ok && fwrite(rec->features, sizeof(double), (size_t)rec->narcs * APP_ARC_FEATURES, f) ==
                 (size_t)rec->narcs * APP_ARC_FEATURES;
  return record_close(f, ok, tmp, path, "arc_data");
}

int main(int argc, char **argv)
{
  dsg_image img = {0, 0, 0, NULL};
  dsg_options opt;
  dsg_problem *p = NULL;
  dsg_result *r = NULL;
  app_arc_record rec;
  int rc = 1;
  memset(&rec, 0, sizeof(rec));
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  opt.work_pixels = 0; /* the image's own size: the humans' boundaries are at it */
  opt.net_weight = 0.0; /* the arcs of gPb's map, as the model was fit */
  opt.arc_weight = 0.3;
  if (argc == 5 && strcmp(argv[3], "--arc-weight") == 0)
    opt.arc_weight = atof(argv[4]);
  else if (argc != 3) {
    fprintf(stderr, "usage: arc_data IMAGE OUT [--arc-weight W]\n");
    return 2;
  }
  if (app_image_load(argv[1], (size_t)1 << 28, &img) != DSG_OK ||
      dsg_problem_create(&img, &opt, &p) != DSG_OK) {
    fprintf(stderr, "arc_data: %s: %s\n", argv[1], dsg_error_message());
    goto out;
  }
  app_problem_record_arcs(p, &rec);
  if (dsg_problem_solve(p, &opt, &r) != DSG_OK) {
    fprintf(stderr, "arc_data: %s: %s\n", argv[1], dsg_error_message());
    goto out;
  }
  if (!rec.features) {
    fprintf(stderr,
            "arc_data: %s: the hierarchy had no base arcs to record (one region, or a "
            "run without the forest's map and the region cue)\n",
            argv[1]);
    goto out;
  }
  rc = write_record(argv[2], img.width, img.height, &rec);
out:
  app_arc_record_free(&rec);
  dsg_result_destroy(r);
  dsg_problem_destroy(p);
  dsg_image_free(&img);
  return rc;
}
