/* The boundary network's input, for tests/bsds/fit_net.py: a tool run by hand on BSDS500 train,
 * not a test (docs/QUALITY.md).
 *
 *   net_data IMAGE OUT
 *
 * Runs segment's defaults (the C path) on IMAGE at its own size and writes to OUT the network's
 * input as the library makes it (app_net_input: gPb, the forest's map, the colours):
 *   int32 width, height, planes; float32 x[planes][height][width]. */
#include "diaseg_internal.h"
#include "io.h"
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_record(const char *path, int w, int h, const float *x)
{
  char tmp[4096];
  const size_t count = (size_t)APP_NET_INPUTS * w * h;
  const int32_t head[3] = {w, h, APP_NET_INPUTS};
  FILE *f = record_open(path, tmp, sizeof(tmp));
  const int ok =
      f && fwrite(head, sizeof(head), 1, f) == 1 && fwrite(x, sizeof(*x), count, f) == count;
  return record_close(f, ok, tmp, path, "net_data");
}

int main(int argc, char **argv)
{
  dsg_image img = {0, 0, 0, NULL};
  dsg_options opt;
  dsg_problem *p = NULL;
  dsg_result *r = NULL;
  float *x = NULL;
  int rc = 1;
  dsg_options_init(&opt);
  opt.matvec = "cpu";
  opt.work_pixels = 0; /* the image's own size: the humans' boundaries are at it */
  if (argc != 3) {
    fprintf(stderr, "usage: net_data IMAGE OUT\n");
    return 2;
  }
  if (app_image_load(argv[1], (size_t)1 << 28, &img) != DSG_OK ||
      dsg_problem_create(&img, &opt, &p) != DSG_OK) {
    fprintf(stderr, "net_data: %s: %s\n", argv[1], dsg_error_message());
    goto out;
  }
  x = calloc((size_t)APP_NET_INPUTS * img.width * img.height, sizeof(*x));
  if (!x) {
    fprintf(stderr, "net_data: cannot allocate the record\n");
    goto out;
  }
  app_problem_record_net(p, x);
  if (dsg_problem_solve(p, &opt, &r) != DSG_OK) {
    fprintf(stderr, "net_data: %s: %s\n", argv[1], dsg_error_message());
    goto out;
  }
  if (r->opt.net_weight <= 0.0) { /* the network did not run */
    fprintf(stderr, "net_data: %s: the run had no boundary network to record\n", argv[1]);
    goto out;
  }
  rc = write_record(argv[2], img.width, img.height, x);
out:
  free(x);
  dsg_result_destroy(r);
  dsg_problem_destroy(p);
  dsg_image_free(&img);
  return rc;
}
