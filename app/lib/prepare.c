/* Getting the OpenCL device of a run ready ahead of it (dsg_prepare): the run of a tiny image
 * through the same device paths, so that opening the device and building its programs, a fixed
 * cost of a few tenths of a second on a GPU, are paid while the caller still reads its image. */
#include "diaseg_internal.h"

#include <limits.h>
#include <omp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

/* The tiny image's side: at least this, and wider than the disc, so that every offset of the
 * disc is a diagonal as in a real image (the programs do not depend on the size). Small: on a
 * CPU device (PoCL) the detector's radius-20 discs cost 3 ms at 12 x 12, 20 ms at 32 x 32. */
#define PREPARE_SIDE 12

/* A picture with edges in it (a checkerboard of 4-pixel squares over a ramp), side x side RGB. */
static int prepare_image(int side, dsg_image *img)
{
  int status = dsg_image_from_pixels(img, side, side, 3, NULL);
  if (status != DSG_OK)
    return status;
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++) {
      unsigned char *p = img->pixels + 3 * ((size_t)y * side + x);
      const int square = ((x / 4) + (y / 4)) & 1;
      p[0] = (unsigned char)(square ? 200 : 40 + 2 * x);
      p[1] = (unsigned char)(square ? 60 + 3 * y : 180);
      p[2] = (unsigned char)(square ? 90 : 30 + x + y);
    }
  return DSG_OK;
}

/* k-means' program, on the device the grouping will take: the problem's, or for a cue without
 * contours the one the run asks for (segment.c's group) */
static int prepare_kmeans(const dsg_problem *p, const dsg_options *opt)
{
  spmv_cl_image *im = app_problem_device(p), *own = NULL;
  int status = DSG_OK, labels[2];
  if (!im) {
    status = app_image_device(opt, &own);
    im = own;
  }
  if (status == DSG_OK && im && spmv_cl_image_doubles(im)) {
    const float points[2] = {0.0f, 1.0f};
    const app_kmeans_params kp = {2, 1, 1, 1};
    status = app_kmeans_cl(im, points, 2, 1, &kp, labels, NULL);
  }
  spmv_cl_image_destroy(own);
  return status;
}

/* The boundary network's program: the network on one pixel */
static int prepare_net(spmv_cl_image *im)
{
  float x[APP_NET_INPUTS] = {0}, M;
  return spmv_cl_net(im, app_net_default(), x, 1, 1, &M, NULL);
}

int dsg_prepare(const dsg_options *opt)
{
  dsg_options tiny;
  dsg_image img = {0, 0, 0, NULL};
  dsg_problem *p = NULL;
  struct spmv_matvec *mv = NULL;
  stack_t own;
  int status, side, threads, is_auto, kept;

  if (!opt)
    return dsg_error_set(DSG_ERR_INVALID, "dsg_prepare needs the run's options");
  status = dsg_options_check(opt);
  if (status != DSG_OK)
    return status; /* the run refuses them too */
  if (strcmp(opt->matvec, "cpu") == 0)
    return DSG_OK;
  /* The OpenCL runtime loaded for the first time on this thread may give it an alternate signal
   * stack of its own (PoCL's LLVM does); the thread gets its own back below, so that whoever made
   * that one still finds it when the thread ends (AddressSanitizer unmaps its own then, and fails
   * on another's). */
  kept = sigaltstack(NULL, &own) == 0;
  is_auto = strcmp(opt->matvec, "auto") == 0;
  if (is_auto && !app_auto_has_gpu(opt)) {
    status = DSG_OK; /* the C path: nothing to open */
    goto out_stack;
  }
  /* the run's cue, disc, device, kernels and solver: what chooses the programs and their
   * options; the rest made small and quiet (no grouping, nothing logged or reported) */
  tiny = *opt;
  tiny.solver = app_solver(opt); /* the run's, which tiny's k = 0 would not choose */
  tiny.k = 0;
  tiny.ks = NULL;
  tiny.nks = 0;
  tiny.threshold = 0.0;
  tiny.nev = 2;
  /* chfsi builds its block kernels for the run's block size (nev's, on any real image) */
  tiny.ncv = strcmp(tiny.solver, "chfsi") == 0 && opt->ncv == 0
                 ? eig_chfsi_block_size(opt->nev, INT_MAX, 0)
                 : 0;
  tiny.work_pixels = 0;
  tiny.keep_specks = 1;
  tiny.progress = NULL;
  tiny.log = NULL;
  side = 2 * opt->radius + 2 > PREPARE_SIDE ? 2 * opt->radius + 2 : PREPARE_SIDE;
  /* a tiny image needs no team of threads: none is started for it on the caller's thread */
  threads = omp_get_max_threads();
  omp_set_num_threads(1);
  status = prepare_image(side, &img);
  if (status == DSG_OK) /* the detector's and the affinity's programs, for a cue with contours */
    status = dsg_problem_create(&img, &tiny, &p);
  if (status == DSG_OK) /* the DIA product's, and the solver's (Lanczos: its basis kernels) */
    status = dsg_problem_matvec(p, &tiny, 1, &mv);
  if (status == DSG_OK && app_grouping_find(opt->grouping) == APP_GROUPING_KMEANS)
    status = prepare_kmeans(p, &tiny);
  /* the boundary network's program, on the detector's device (where gPb is made) */
  if (status == DSG_OK && app_problem_uses_net(p, opt) && app_problem_device(p))
    status = prepare_net(app_problem_device(p));
  spmv_matvec_destroy(mv);
  dsg_problem_destroy(p);
  dsg_image_free(&img);
  omp_set_num_threads(threads);
  if (status != DSG_OK && is_auto) {
    dsg_error_clear(); /* the run meets the failure again and falls back as it would have */
    status = DSG_OK;
  }
out_stack:
  if (kept)
    sigaltstack(&own, NULL);
  return status;
}
