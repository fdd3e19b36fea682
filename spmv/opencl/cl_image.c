/* The image stages on an OpenCL device: the boundary detector's bins, gradients, combination and
 * thinning (kernels/contours.cl), the affinity N (kernels/affinity.cl), the edge forest
 * (kernels/forest.cl) and the boundary network (kernels/net.cl). spmv/spmv_image.h
 * documents the functions; the kernels' files their design. A call queues its transfers and
 * kernels back to back and waits once, at its end (batch). */
#include "spmv_image.h"

#include "cl_cache.h"
#include "cl_dia.h"
#include "cl_runtime.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IMAGE_LOCAL 128   /* work-group size of the one-pixel-per-item kernels but the gradients */
#define GRAD_LOCAL_MAX 32 /* the gradients' work-group, at most (32 beat 64 on an H200) */
#define MAX_PAD 4096      /* the reflection padding, at most (the gradients' largest radius) */
#define GRAD_KINDS 8      /* kinds of channel with a gradients kernel of their own, at most */

struct spmv_cl_image {
  spmv_cl_runtime rt;
  cl_program contours; /* built with contours_options (its -D values depend on the geometry) */
  char contours_options[512];
  cl_program affinity;
  cl_program kmeans;
  cl_program forest;
  cl_program net; /* built for net_channels filters (-DNET_CHANNELS) */
  int net_channels;
  unsigned long long max_constant; /* CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE */
  struct {                         /* the last forest model uploaded (spmv_cl_forest) */
    const void *key;
    uint32_t max_fid; /* the largest feature a node reads */
    cl_mem tree, node, leaf, segs;
  } model;
};

static void forest_model_release(spmv_cl_image *im);

int spmv_cl_image_create(spmv_cl_image **out, const char *device, const char *kernel_dir)
{
  spmv_cl_image *im;
  cl_ulong bytes = 0;
  int status;

  *out = NULL;
  im = calloc(1, sizeof(*im));
  if (!im)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the OpenCL image stages");
  status = spmv_cl_runtime_open(&im->rt, device, kernel_dir, 0);
  if (status != DSG_OK) {
    free(im);
    return status;
  }
  /* OpenCL 1.2 promises at least 64 KiB */
  if (clGetDeviceInfo(im->rt.device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof(bytes), &bytes,
                      NULL) != CL_SUCCESS ||
      bytes == 0)
    bytes = 65536;
  im->max_constant = bytes;
  *out = im;
  return DSG_OK;
}

void spmv_cl_image_destroy(spmv_cl_image *im)
{
  if (!im)
    return;
  if (im->rt.queue)
    clFinish(im->rt.queue);
  if (im->contours)
    clReleaseProgram(im->contours);
  if (im->affinity)
    clReleaseProgram(im->affinity);
  if (im->kmeans)
    clReleaseProgram(im->kmeans);
  if (im->forest)
    clReleaseProgram(im->forest);
  if (im->net)
    clReleaseProgram(im->net);
  forest_model_release(im);
  spmv_cl_runtime_close(&im->rt);
  free(im);
}

const char *spmv_cl_image_device(const spmv_cl_image *im) { return im->rt.dev.name; }

/* ---- helpers ---- */

/* Host data of at least this many bytes goes up by spmv_cl_upload, not as the buffer's
 * CL_MEM_COPY_HOST_PTR: on the H200 with NVIDIA's driver, 4.9 MB took 2.2-3.8 ms the first times
 * a process copied them at creation and 0.45-0.8 ms by a blocking write (33 MB: 20-22 ms against
 * 5.0-5.6 ms; smaller ones are as fast either way). */
#define BUFFER_WRITE_MIN ((unsigned long long)1 << 20)

/* A buffer of `bytes` (at least 1), copied from host when given; nothing when *status is already
 * an error, so that a run of them needs one check. what names it in the message. The copy is
 * done when it returns (the caller's memory may go). */
static cl_mem buffer(spmv_cl_image *im, cl_mem_flags flags, unsigned long long bytes,
                     const void *host, const char *what, int *status)
{
  cl_int err;
  cl_mem m;
  const int write = host && bytes >= BUFFER_WRITE_MIN;
  if (*status != DSG_OK)
    return NULL;
  if (bytes > im->rt.max_alloc) {
    char need[32], cap[32];
    *status = dsg_error_set(DSG_ERR_LIMIT,
                            "%s needs one buffer of %s, over %s's largest allocation of %s "
                            "(CL_DEVICE_MAX_MEM_ALLOC_SIZE)",
                            what, spmv_cl_bytes(bytes, need), im->rt.dev.name,
                            spmv_cl_bytes(im->rt.max_alloc, cap));
    return NULL;
  }
  if (write)
    err = spmv_cl_upload(&im->rt, flags, host, (size_t)bytes, &m);
  else
    m = clCreateBuffer(im->rt.ctx, flags | (host ? CL_MEM_COPY_HOST_PTR : 0),
                       bytes ? (size_t)bytes : 1, (void *)host, &err);
  if (err != CL_SUCCESS) {
    char msg[128];
    snprintf(msg, sizeof(msg), "%s %s", write ? "uploading" : "allocating", what);
    *status = spmv_cl_fail(err, msg, im->rt.dev.name);
    return NULL;
  }
  return m;
}

static void release(cl_mem *m)
{
  if (*m)
    clReleaseMemObject(*m);
  *m = NULL;
}

/* Fills m's first `bytes` with the pattern of `size` bytes. */
static int fill(const spmv_cl_image *im, cl_mem m, const void *pattern, size_t size, size_t bytes,
                const char *what)
{
  const cl_int err = clEnqueueFillBuffer(im->rt.queue, m, pattern, size, 0, bytes, 0, NULL, NULL);
  return err == CL_SUCCESS ? DSG_OK : spmv_cl_fail(err, what, im->rt.dev.name);
}

/* Kernel `name` of prog into *k, its `count` arguments given as (size_t size, const void *value)
 * pairs in ap. */
static int kernel_va(const spmv_cl_image *im, cl_program prog, const char *name, cl_kernel *k,
                     int count, va_list ap)
{
  char what[128];
  cl_int err;
  *k = clCreateKernel(prog, name, &err);
  if (err != CL_SUCCESS) {
    snprintf(what, sizeof(what), "clCreateKernel(%s)", name);
    return spmv_cl_fail(err, what, im->rt.dev.name);
  }
  for (int a = 0; a < count && err == CL_SUCCESS; a++) {
    const size_t size = va_arg(ap, size_t);
    const void *value = va_arg(ap, const void *);
    err = clSetKernelArg(*k, (cl_uint)a, size, value);
  }
  if (err != CL_SUCCESS) {
    clReleaseKernel(*k);
    *k = NULL;
    snprintf(what, sizeof(what), "setting the arguments of %s", name);
    return spmv_cl_fail(err, what, im->rt.dev.name);
  }
  return DSG_OK;
}

/* The same, the arguments as the call's own. */
static int kernel(const spmv_cl_image *im, cl_program prog, const char *name, cl_kernel *k,
                  int count, ...)
{
  va_list ap;
  va_start(ap, count);
  const int status = kernel_va(im, prog, name, k, count, ap);
  va_end(ap);
  return status;
}

/* The commands of one call go to the in-order queue back to back, with no wait in between (each
 * wait costs a round trip to the device), and the call ends with one clFinish (batch_finish).
 * With the kernels' time asked for, each kernel's event is kept and read then. */
#define BATCH_EVENTS 96 /* kernels of one call, at most: 64 channels' gradients and 7 others */

typedef struct batch {
  int timed; /* keep the kernels' events */
  int count;
  cl_event ev[BATCH_EVENTS];
  const char *name[BATCH_EVENTS];
} batch;

/* Enqueues k over items (rounded up to whole work-groups of `local`, or for local 0 of
 * IMAGE_LOCAL capped by the device) times dim1 into the batch b. */
static int launch(const spmv_cl_image *im, cl_kernel k, const char *name, size_t items,
                  size_t local, size_t dim1, batch *b)
{
  if (!local)
    local = IMAGE_LOCAL < im->rt.dev.max_work_group ? IMAGE_LOCAL : im->rt.dev.max_work_group;
  const size_t global[2] = {(items + local - 1) / local * local, dim1}, lsize[2] = {local, 1};
  const int timed = b->timed && b->count < BATCH_EVENTS;
  char what[128];
  cl_int err = clEnqueueNDRangeKernel(im->rt.queue, k, 2, NULL, global, lsize, 0, NULL,
                                      timed ? &b->ev[b->count] : NULL);
  if (err != CL_SUCCESS) {
    snprintf(what, sizeof(what), "running %s", name);
    return spmv_cl_fail(err, what, im->rt.dev.name);
  }
  if (timed)
    b->name[b->count++] = name;
  return DSG_OK;
}

/* Waits for the queue, adds the batch's kernel times to *seconds and releases its events. A
 * kernel that failed on the device is named when the batch was timed, else `what` is. */
static int batch_finish(const spmv_cl_image *im, batch *b, const char *what, double *seconds)
{
  char msg[128];
  int status = DSG_OK;
  const cl_int err = clFinish(im->rt.queue);
  for (int e = 0; e < b->count; e++) {
    cl_int run = CL_COMPLETE;
    if (clGetEventInfo(b->ev[e], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(run), &run, NULL) !=
        CL_SUCCESS)
      run = CL_COMPLETE;
    if (run < 0 && status == DSG_OK) {
      snprintf(msg, sizeof(msg), "running %s", b->name[e]);
      status = spmv_cl_fail(run, msg, im->rt.dev.name);
    }
    *seconds += spmv_cl_event_seconds(b->ev[e]);
    clReleaseEvent(b->ev[e]);
  }
  b->count = 0;
  if (err != CL_SUCCESS && status == DSG_OK) {
    snprintf(msg, sizeof(msg), "running %s", what);
    status = spmv_cl_fail(err, msg, im->rt.dev.name);
  }
  return status;
}

/* Enqueues the copy of m's first `bytes` to host (nothing when host is NULL): it has landed once
 * the batch has finished. */
static int read_back(const spmv_cl_image *im, cl_mem m, size_t bytes, void *host, const char *what)
{
  char msg[128];
  cl_int err;
  if (!host)
    return DSG_OK;
  err = clEnqueueReadBuffer(im->rt.queue, m, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    return DSG_OK;
  snprintf(msg, sizeof(msg), "reading %s", what);
  return spmv_cl_fail(err, msg, im->rt.dev.name);
}

/* Writes every page of the host output at host (NULL: nothing), so that its first-touch faults
 * happen here, while the device works, and not in the read that fills it. */
static void prefault(void *host, size_t bytes)
{
  if (host)
    memset(host, 0, bytes);
}

/* ---- the boundary detector ---- */

/* What the gradients' program and launch are built for. */
typedef struct contour_plan {
  int max_bins;   /* MAX_BINS: the most bins of a channel */
  int smooth_max; /* SMOOTH_MAX: the largest smoothing radius */
  int per_word;   /* counters per 32-bit word: 4 (uchar) or 2 (ushort) */
  size_t wg;      /* WG */
  int nkinds;     /* kinds of channel (bins, smoothing radius) with a kernel of their own */
  int kind_bins[GRAD_KINDS], kind_radius[GRAD_KINDS];
} contour_plan;

/* The kind of a channel of nb bins and smoothing radius sr among plan's: its index, or
 * plan->nkinds when it has no kernel of its own. */
static int kind_of(const contour_plan *plan, int nb, int sr)
{
  int k = 0;
  while (k < plan->nkinds && (plan->kind_bins[k] != nb || plan->kind_radius[k] != sr))
    k++;
  return k;
}

static int check_geometry(const spmv_contour_geometry *g, contour_plan *plan)
{
  int most = 0, population[2 * SPMV_CONTOUR_MAX_ORIENT] = {0};
  if (!g || g->ndisc < 2 || !g->dx || !g->dy || !g->sector || !g->bins || !g->count ||
      !g->smooth_radius || !g->smooth)
    return dsg_error_set(DSG_ERR_INVALID, "the contour geometry lacks its disc or its tables");
  if (g->norient < 1 || g->norient > SPMV_CONTOUR_MAX_ORIENT || g->nchannels < 1 ||
      g->nscales < 1 || g->nchannels > 64 || g->nscales > 64)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the contour geometry has %d orientations (at most %d), %d channels and "
                         "%d scales (1 to 64 each)",
                         g->norient, SPMV_CONTOUR_MAX_ORIENT, g->nchannels, g->nscales);
  if (g->pad < 1 || g->pad > MAX_PAD)
    return dsg_error_set(DSG_ERR_INVALID, "the contour padding %d is outside [1, %d]", g->pad,
                         MAX_PAD);
  for (int k = 0; k < g->ndisc; k++) {
    if (abs(g->dx[k]) > g->pad || abs(g->dy[k]) > g->pad || (!g->dx[k] && !g->dy[k]) ||
        g->sector[k] < 0 || g->sector[k] >= 2 * g->norient)
      return dsg_error_set(DSG_ERR_INVALID,
                           "contour disc offset %d (%d, %d) in sector %d: it must be nonzero, "
                           "within the padding %d and in a sector of [0, %d)",
                           k, g->dx[k], g->dy[k], g->sector[k], g->pad, 2 * g->norient);
    population[g->sector[k]]++;
  }
  plan->max_bins = plan->smooth_max = plan->nkinds = 0;
  for (int c = 0; c < g->nchannels; c++) {
    if (g->bins[c] < 1 || g->bins[c] > SPMV_CONTOUR_MAX_BINS)
      return dsg_error_set(DSG_ERR_INVALID, "contour channel %d has %d bins: it must have 1 to %d",
                           c, g->bins[c], SPMV_CONTOUR_MAX_BINS);
    if (g->smooth_radius[c] < 0 || g->smooth_radius[c] > SPMV_CONTOUR_MAX_BINS ||
        (g->smooth_radius[c] > 0 && !g->smooth[c]))
      return dsg_error_set(DSG_ERR_INVALID,
                           "contour channel %d's smoothing radius %d is outside [0, %d] or has "
                           "no taps",
                           c, g->smooth_radius[c], SPMV_CONTOUR_MAX_BINS);
    for (int s = 0; s < g->nscales; s++) {
      const int m = g->count[c * g->nscales + s];
      if (m < 2 || m > g->ndisc || m % 2 || (s > 0 && m < g->count[c * g->nscales + s - 1]))
        return dsg_error_set(DSG_ERR_INVALID,
                             "contour channel %d scale %d counts %d offsets: it must be even, "
                             "in [2, %d] and not below the scale before",
                             c, s, m, g->ndisc);
    }
    plan->max_bins = g->bins[c] > plan->max_bins ? g->bins[c] : plan->max_bins;
    const int k = kind_of(plan, g->bins[c], g->smooth_radius[c]);
    if (k == plan->nkinds && k < GRAD_KINDS) {
      plan->kind_bins[k] = g->bins[c];
      plan->kind_radius[k] = g->smooth_radius[c];
      plan->nkinds++;
    }
    plan->smooth_max =
        g->smooth_radius[c] > plan->smooth_max ? g->smooth_radius[c] : plan->smooth_max;
  }
  /* a counter holds at most its sector's population: one byte is enough up to 255 */
  for (int s = 0; s < 2 * g->norient; s++)
    most = population[s] > most ? population[s] : most;
  if (most > 65535)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "a contour sector holds %d offsets, over the 65535 a counter can count",
                         most);
  plan->per_word = most <= 255 ? 4 : 2;
  return DSG_OK;
}

/* The gradients' kernel of kind k (k < 0 or beyond the plan's kinds: the one for any channel). */
static void gradients_kernel_name(int k, char *name, size_t size)
{
  if (k >= 0)
    snprintf(name, size, "contour_gradients_%d", k);
  else
    snprintf(name, size, "contour_gradients");
}

/* The detector's program for plan, built (or kept from the last call), and the gradients'
 * work-group: the largest of at most GRAD_LOCAL_MAX items whose counters fit the device's local
 * memory and that the kernel (built for the most bins and taps) can run. */
static int contour_program(spmv_cl_image *im, const spmv_contour_geometry *g, contour_plan *plan)
{
  /* 2 norient sector rows of 32-bit words, per_word counters each */
  const unsigned long long per_item =
      2ull * (unsigned long long)g->norient *
      (unsigned long long)((plan->max_bins + plan->per_word - 1) / plan->per_word) * 4ull;
  size_t wg = GRAD_LOCAL_MAX;
  while (wg > im->rt.dev.max_work_group && wg > 1)
    wg /= 2;
  while (wg > 1 && per_item * wg > im->rt.dev.local_mem)
    wg /= 2;
  for (;;) {
    char options[sizeof(im->contours_options)], have[32], need[32];
    size_t kmax = 0, at;
    cl_int err = CL_SUCCESS;
    int status;
    if (per_item * wg > im->rt.dev.local_mem)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "the contour histograms of %zu pixels need %s of local memory, over "
                           "%s's %s",
                           wg, spmv_cl_bytes(per_item * wg, need), im->rt.dev.name,
                           spmv_cl_bytes(im->rt.dev.local_mem, have));
    snprintf(options, sizeof(options),
             "-cl-std=CL1.2 -DWG=%zu -DPER_WORD=%d -DMAX_BINS=%d -DNORIENT=%d -DSMOOTH_MAX=%d "
             "-DMAX_DIM=%d",
             wg, plan->per_word, plan->max_bins, g->norient, plan->smooth_max,
             SPMV_CONTOUR_MAX_DIM);
    at = strlen(options);
    for (int k = 0; k < plan->nkinds && at < sizeof(options); k++)
      at += (size_t)snprintf(options + at, sizeof(options) - at, " -DNB%d=%d -DSR%d=%d", k,
                             plan->kind_bins[k], k, plan->kind_radius[k]);
    if (!im->contours || strcmp(options, im->contours_options) != 0) {
      if (im->contours)
        clReleaseProgram(im->contours);
      im->contours = NULL;
      im->contours_options[0] = '\0';
      status = spmv_cl_build(&im->rt, "contours", options, &im->contours);
      if (status != DSG_OK) {
        im->contours = NULL;
        return status;
      }
      snprintf(im->contours_options, sizeof(im->contours_options), "%s", options);
    }
    /* the fewest work-items any of the gradients' kernels can run */
    for (int k = -1; k < plan->nkinds && err == CL_SUCCESS; k++) {
      char name[32];
      size_t most = 0;
      gradients_kernel_name(k, name, sizeof(name));
      cl_kernel probe = clCreateKernel(im->contours, name, &err);
      if (err != CL_SUCCESS)
        return spmv_cl_fail(err, "clCreateKernel(contour_gradients)", im->rt.dev.name);
      err = clGetKernelWorkGroupInfo(probe, im->rt.device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(most),
                                     &most, NULL);
      clReleaseKernel(probe);
      if (err == CL_SUCCESS && most > 0 && (kmax == 0 || most < kmax))
        kmax = most;
    }
    if (err != CL_SUCCESS || kmax == 0 || kmax >= wg)
      break;
    while (wg > kmax)
      wg /= 2;
  }
  plan->wg = wg;
  return DSG_OK;
}

/* The normals of the thinning: for k = 1 .. reach, (ix, iy, fx, fy) of the offset k (-sin th,
 * cos th) and of its opposite, th = o pi / norient, at normal[(2 (k - 1) + side) norient + o]:
 * the floor and the fraction, fractions within 1e-9 of 0 or 1 rounded (cos(pi / 2) is 6e-17 in
 * double: the C reference's sample lands on the pixel). */
static void thin_normals(int norient, int reach, cl_float4 *normal)
{
  for (int k = 1; k <= reach; k++)
    for (int side = 0; side < 2; side++)
      for (int o = 0; o < norient; o++) {
        const double th = o * (M_PI / norient), sign = side ? -1.0 : 1.0;
        const double v[2] = {k * -sin(th) * sign, k * cos(th) * sign};
        cl_float4 *q = &normal[(2 * (k - 1) + side) * norient + o];
        for (int a = 0; a < 2; a++) {
          double i = floor(v[a]), f = v[a] - i;
          if (f < 1e-9)
            f = 0.0;
          if (f > 1.0 - 1e-9) {
            i += 1.0;
            f = 0.0;
          }
          q->s[a] = (float)i;
          q->s[2 + a] = (float)f;
        }
      }
}

/* The checks both entry points share, then the gradients' program: the geometry, the image's
 * size, what the outputs need (the weights, the thinning's reach) and the tables' constant
 * memory. */
static int contour_prepare(spmv_cl_image *im, const spmv_contour_geometry *g, const float *weight,
                           int width, int height, const spmv_contour_outputs *out,
                           contour_plan *plan)
{
  int status = check_geometry(g, plan);
  if (status != DSG_OK)
    return status;
  const int nparts = g->nchannels * g->nscales,
            combine = out->parts || out->strength || out->orientation || out->thin || out->oriented;
  if (width < 1 || height < 1)
    return dsg_error_set(DSG_ERR_INVALID, "the contour image is %d x %d", width, height);
  if (combine && !weight)
    return dsg_error_set(DSG_ERR_INVALID, "the contour combination needs its %d weights", nparts);
  if (out->thin && (g->reach < 1 || g->reach > SPMV_CONTOUR_MAX_REACH))
    return dsg_error_set(DSG_ERR_INVALID, "the contour thinning's reach %d is outside [1, %d]",
                         g->reach, SPMV_CONTOUR_MAX_REACH);
  const long long pw = (long long)width + 2 * g->pad, ph = (long long)height + 2 * g->pad;
  if ((long long)width * height > INT_MAX / 2 || pw * ph > INT_MAX / 2)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the contour image %d x %d (%lld x %lld padded) has more pixels than "
                         "diaseg indexes (%d)",
                         width, height, pw, ph, INT_MAX / 2);
  const unsigned long long constant =
      (unsigned long long)g->ndisc * sizeof(cl_int2) +
      (unsigned long long)(nparts + g->nchannels * (2 * plan->smooth_max + 1)) * sizeof(float);
  if (constant > im->max_constant) {
    char need[32], have[32];
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the contour disc of %d offsets needs %s of constant memory, over %s's %s",
                         g->ndisc, spmv_cl_bytes(constant, need), im->rt.dev.name,
                         spmv_cl_bytes(im->max_constant, have));
  }
  return contour_program(im, g, plan);
}

/* The detector from the bins on the device (d_bins: g->nchannels planes of n bytes, every bin
 * below its channel's count) to the outputs asked for: padding, gradients, combination,
 * thinning, and the reads of the outputs, all enqueued into b; the outputs have landed once b
 * has finished. The gradients' kernels write the gradients only when out->grad asks for them
 * (nparts norient planes: 3.2 GB at 3840 x 2160); the combination needs only their weighted sums
 * z (norient planes) and the parts their maxima, which the same kernels make. The buffers made
 * here are released on return: OpenCL keeps them while the commands that use them run. */
static int contour_detect(spmv_cl_image *im, const spmv_contour_geometry *g,
                          const contour_plan *plan, cl_mem d_bins, const float *weight, float bias,
                          int width, int height, const spmv_contour_outputs *out, batch *b)
{
  cl_mem d_pad = NULL, d_disc = NULL, d_count = NULL, d_taps = NULL, d_grad = NULL;
  cl_mem d_weight = NULL, d_z = NULL, d_strength = NULL, d_orient = NULL, d_parts = NULL;
  cl_mem d_normal = NULL, d_thin = NULL, d_oriented = NULL;
  cl_kernel k = NULL;
  cl_int2 *disc = NULL;
  float *taps = NULL;
  int status = DSG_OK;
  const int nparts = g->nchannels * g->nscales,
            combine = out->strength || out->orientation || out->thin || out->oriented;
  /* what the gradients' kernels write (kernels/contours.cl): 1 the gradients, 2 the
   * combination's sums, 4 the parts */
  const int want = (out->grad ? 1 : 0) | (combine ? 2 : 0) | (out->parts ? 4 : 0);
  if (!want)
    return DSG_OK;
  const int n = width * height, ntaps = 2 * plan->smooth_max + 1;
  const int pw = width + 2 * g->pad, ph = height + 2 * g->pad;

  /* the tables: disc[k] = (dy * pw + dx, sector); the taps zero-padded */
  disc = malloc((size_t)g->ndisc * sizeof(*disc));
  taps = calloc((size_t)g->nchannels * (size_t)ntaps, sizeof(*taps));
  if (!disc || !taps) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the contour tables");
    goto out_release;
  }
  for (int j = 0; j < g->ndisc; j++) {
    disc[j].s[0] = g->dy[j] * pw + g->dx[j];
    disc[j].s[1] = g->sector[j];
  }
  for (int c = 0; c < g->nchannels; c++)
    for (int t = -g->smooth_radius[c]; t <= g->smooth_radius[c]; t++)
      taps[c * ntaps + plan->smooth_max + t] = g->smooth[c][t + g->smooth_radius[c]];

  const unsigned long long nn = (unsigned long long)n;
  const unsigned long long grad_floats = (unsigned long long)nparts * g->norient * nn;
  d_pad = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)pw * ph * g->nchannels, NULL,
                 "the padded contour bins", &status);
  d_disc = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)g->ndisc * sizeof(*disc), disc,
                  "the contour disc", &status);
  d_count = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)nparts * sizeof(int), g->count,
                   "the contour scales", &status);
  d_taps = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)g->nchannels * ntaps * sizeof(float),
                  taps, "the contour smoothing", &status);
  if (out->grad)
    d_grad = buffer(im, CL_MEM_WRITE_ONLY, grad_floats * sizeof(float), NULL,
                    "the contour gradients", &status);
  if (combine) {
    d_weight = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)nparts * sizeof(float), weight,
                      "the contour weights", &status);
    d_z = buffer(im, CL_MEM_READ_WRITE, nn * g->norient * sizeof(float), NULL,
                 "the contour combination's sums", &status);
  }
  if (out->parts)
    d_parts = buffer(im, CL_MEM_WRITE_ONLY, nn * nparts * sizeof(float), NULL, "the contour parts",
                     &status);
  if (status != DSG_OK)
    goto out_release;

  const int pad = g->pad, plane = pw * ph, nscales = g->nscales;
  status = kernel(im, im->contours, "contour_pad", &k, 5, sizeof(cl_mem), &d_bins, sizeof(int),
                  &width, sizeof(int), &height, sizeof(int), &pad, sizeof(cl_mem), &d_pad);
  if (status == DSG_OK)
    status = launch(im, k, "contour_pad", (size_t)plane, 0, (size_t)g->nchannels, b);
  if (k)
    clReleaseKernel(k); /* an enqueued kernel lives until it has run */
  k = NULL;
  /* one launch per channel, in the parts' order (the sums z add up in it); the buffers a call
   * does not want are NULL arguments, never read */
  for (int c = 0; c < g->nchannels && status == DSG_OK; c++) {
    const int part0 = c * g->nscales, nb = g->bins[c], sr = g->smooth_radius[c];
    char name[32];
    const int kind = kind_of(plan, nb, sr);
    gradients_kernel_name(kind < plan->nkinds ? kind : -1, name, sizeof(name));
    status = kernel(im, im->contours, name, &k, 19, sizeof(cl_mem), &d_pad, sizeof(int), &pw,
                    sizeof(int), &plane, sizeof(int), &width, sizeof(int), &n, sizeof(int), &pad,
                    sizeof(cl_mem), &d_disc, sizeof(cl_mem), &d_count, sizeof(int), &nscales,
                    sizeof(int), &c, sizeof(cl_mem), &d_taps, sizeof(int), &part0, sizeof(cl_mem),
                    &d_grad, sizeof(int), &nb, sizeof(int), &sr, sizeof(int), &want, sizeof(cl_mem),
                    &d_weight, sizeof(cl_mem), &d_z, sizeof(cl_mem), &d_parts);
    if (status == DSG_OK)
      status = launch(im, k, "contour_gradients", (size_t)n, plan->wg, 1, b);
    if (k)
      clReleaseKernel(k);
    k = NULL;
  }
  if (status != DSG_OK || !combine)
    goto out_read;

  /* the combination and the thinning */
  cl_float4 normal[2 * SPMV_CONTOUR_MAX_REACH * SPMV_CONTOUR_MAX_ORIENT];
  const int reach = out->thin ? g->reach : 0;
  thin_normals(g->norient, reach, normal);
  const float s0 = (float)(1.0 / (1.0 + exp(-(double)bias)));
  const int want_oriented = out->oriented != NULL;
  d_strength =
      buffer(im, CL_MEM_READ_WRITE, nn * sizeof(float), NULL, "the contour strength", &status);
  d_orient = buffer(im, CL_MEM_READ_WRITE, nn, NULL, "the contour orientations", &status);
  if (want_oriented)
    d_oriented = buffer(im, CL_MEM_WRITE_ONLY, nn * g->norient * sizeof(float), NULL,
                        "the oriented contour strength", &status);
  if (out->thin) {
    d_normal = buffer(im, CL_MEM_READ_ONLY, 2ull * reach * g->norient * sizeof(cl_float4), normal,
                      "the contour normals", &status);
    d_thin =
        buffer(im, CL_MEM_WRITE_ONLY, nn * sizeof(float), NULL, "the thinned contours", &status);
  }
  if (status != DSG_OK)
    goto out_release;
  status =
      kernel(im, im->contours, "contour_combine", &k, 8, sizeof(cl_mem), &d_z, sizeof(int), &n,
             sizeof(float), &bias, sizeof(float), &s0, sizeof(cl_mem), &d_strength, sizeof(cl_mem),
             &d_orient, sizeof(int), &want_oriented, sizeof(cl_mem), &d_oriented);
  if (status == DSG_OK)
    status = launch(im, k, "contour_combine", (size_t)n, 0, 1, b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK && out->thin) {
    status = kernel(im, im->contours, "contour_thin", &k, 7, sizeof(cl_mem), &d_strength,
                    sizeof(cl_mem), &d_orient, sizeof(int), &width, sizeof(int), &height,
                    sizeof(cl_mem), &d_normal, sizeof(int), &reach, sizeof(cl_mem), &d_thin);
    if (status == DSG_OK)
      status = launch(im, k, "contour_thin", (size_t)n, 0, 1, b);
    if (k)
      clReleaseKernel(k);
    k = NULL;
  }

out_read:
  if (status != DSG_OK)
    goto out_release;
  /* the kernels start, and meanwhile the host's outputs get their pages (first touches of fresh
   * memory), which the reads would otherwise fault in after the kernels */
  clFlush(im->rt.queue);
  prefault(out->grad, (size_t)(grad_floats * sizeof(float)));
  prefault(out->parts, (size_t)(nn * nparts * sizeof(float)));
  prefault(out->strength, (size_t)nn * sizeof(float));
  prefault(out->orientation, (size_t)nn);
  prefault(out->thin, (size_t)nn * sizeof(float));
  prefault(out->oriented, (size_t)(nn * g->norient * sizeof(float)));
  status = read_back(im, d_grad, (size_t)(grad_floats * sizeof(float)), out->grad,
                     "the contour gradients");
  if (status == DSG_OK)
    status = read_back(im, d_parts, (size_t)(nn * nparts * sizeof(float)), out->parts,
                       "the contour parts");
  if (status == DSG_OK)
    status = read_back(im, d_strength, (size_t)nn * sizeof(float), out->strength,
                       "the contour strength");
  if (status == DSG_OK)
    status = read_back(im, d_orient, (size_t)nn, out->orientation, "the contour orientations");
  if (status == DSG_OK)
    status = read_back(im, d_thin, (size_t)nn * sizeof(float), out->thin, "the thinned contours");
  if (status == DSG_OK)
    status = read_back(im, d_oriented, (size_t)(nn * g->norient * sizeof(float)), out->oriented,
                       "the oriented contour strength");

out_release:
  release(&d_pad);
  release(&d_disc);
  release(&d_count);
  release(&d_taps);
  release(&d_grad);
  release(&d_weight);
  release(&d_z);
  release(&d_strength);
  release(&d_orient);
  release(&d_parts);
  release(&d_normal);
  release(&d_thin);
  release(&d_oriented);
  free(disc);
  free(taps);
  return status;
}

int spmv_cl_contours(spmv_cl_image *im, const spmv_contour_geometry *g, const float *weight,
                     float bias, const unsigned char *bins, int width, int height,
                     const spmv_contour_outputs *out, double *kernel_seconds)
{
  contour_plan plan = {0};
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  cl_mem d_bins = NULL;
  double seconds = 0.0;
  int status, finished;

  if (kernel_seconds)
    *kernel_seconds = 0.0;
  if (!out)
    return dsg_error_set(DSG_ERR_INVALID, "the contour detector was given no outputs");
  if (!bins)
    return dsg_error_set(DSG_ERR_INVALID, "the contour detector was given no bins");
  status = contour_prepare(im, g, weight, width, height, out, &plan);
  if (status != DSG_OK)
    return status;
  /* bins from the host: one out of range would count outside the histograms */
  const int n = width * height;
  for (int c = 0; c < g->nchannels; c++)
    for (int i = 0; i < n; i++)
      if (bins[(size_t)c * n + i] >= g->bins[c])
        return dsg_error_set(DSG_ERR_INVALID,
                             "contour channel %d: pixel %d's bin %d is not below the channel's %d "
                             "bins",
                             c, i, bins[(size_t)c * n + i], g->bins[c]);
  d_bins = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)n * g->nchannels, bins,
                  "the contour bins", &status);
  if (status == DSG_OK)
    status = contour_detect(im, g, &plan, d_bins, weight, bias, width, height, out, &b);
  release(&d_bins);
  finished = batch_finish(im, &b, "the contour detector", &seconds);
  if (status == DSG_OK)
    status = finished;
  if (kernel_seconds)
    *kernel_seconds = seconds;
  return status;
}

int spmv_cl_contour_gradients(spmv_cl_image *im, const spmv_contour_geometry *g,
                              const unsigned char *bins, int width, int height, float *grad,
                              double *kernel_seconds)
{
  spmv_contour_outputs out;
  memset(&out, 0, sizeof(out));
  out.grad = grad;
  return spmv_cl_contours(im, g, NULL, 0.0f, bins, width, height, &out, kernel_seconds);
}

/* ---- the bins on the device ---- */

#define BINNING_MAX_FILTERS 64 /* 1-D texton filters, at most */

/* The binning's tables, checked against the geometry: L, a, b and the textons are channels 0 to
 * 3, each bin below its channel's count. *taps_out receives the filters' taps in all. */
static int check_binning(const spmv_contour_binning *bn, const spmv_contour_geometry *g,
                         int *taps_out)
{
  int taps = 0;
  if (!bn || !bn->linear || !bn->filter_radius || !bn->filter || !bn->row_filter ||
      !bn->column_filter || !bn->response_scale || !bn->centres)
    return dsg_error_set(DSG_ERR_INVALID, "the contour binning lacks its tables");
  if (g->nchannels != 4)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the contour binning fills 4 channels (L, a, b, textons), not %d",
                         g->nchannels);
  for (int c = 0; c < 3; c++)
    if (!(bn->hi[c] > bn->lo[c]) || !isfinite(bn->lo[c]) || !isfinite(bn->hi[c]))
      return dsg_error_set(DSG_ERR_INVALID,
                           "the contour binning's range [%g, %g] of channel %d is empty",
                           (double)bn->lo[c], (double)bn->hi[c], c);
  if (bn->nfilters < 1 || bn->nfilters > BINNING_MAX_FILTERS)
    return dsg_error_set(DSG_ERR_INVALID, "the contour binning has %d filters: 1 to %d",
                         bn->nfilters, BINNING_MAX_FILTERS);
  for (int f = 0; f < bn->nfilters; f++) {
    if (bn->filter_radius[f] < 0 || bn->filter_radius[f] > SPMV_CONTOUR_MAX_RADIUS ||
        !bn->filter[f])
      return dsg_error_set(DSG_ERR_INVALID,
                           "texton filter %d's radius %d is outside [0, %d] or it has no taps", f,
                           bn->filter_radius[f], SPMV_CONTOUR_MAX_RADIUS);
    taps += 2 * bn->filter_radius[f] + 1;
  }
  if (bn->dim < 1 || bn->dim > SPMV_CONTOUR_MAX_DIM)
    return dsg_error_set(DSG_ERR_INVALID, "the texton responses number %d: 1 to %d", bn->dim,
                         SPMV_CONTOUR_MAX_DIM);
  for (int d = 0; d < bn->dim; d++)
    if (bn->row_filter[d] < 0 || bn->row_filter[d] >= bn->nfilters || bn->column_filter[d] < 0 ||
        bn->column_filter[d] >= bn->nfilters)
      return dsg_error_set(DSG_ERR_INVALID,
                           "texton response %d takes filters %d and %d, not among the %d", d,
                           bn->row_filter[d], bn->column_filter[d], bn->nfilters);
  if (!(bn->contrast > 0.0f) || !isfinite(bn->contrast))
    return dsg_error_set(DSG_ERR_INVALID, "the texton contrast %g must be finite and > 0",
                         (double)bn->contrast);
  if (bn->ncentres < 1 || bn->ncentres > g->bins[3])
    return dsg_error_set(DSG_ERR_INVALID,
                         "the texton dictionary has %d centres: 1 to the texture channel's %d "
                         "bins",
                         bn->ncentres, g->bins[3]);
  *taps_out = taps;
  return DSG_OK;
}

int spmv_cl_contours_rgb(spmv_cl_image *im, const spmv_contour_geometry *g,
                         const spmv_contour_binning *bn, const float *weight, float bias,
                         const unsigned char *pixels, int channels, int width, int height,
                         const spmv_contour_outputs *out, unsigned char *bins_out,
                         double *kernel_seconds)
{
  static const spmv_contour_outputs none = {NULL, NULL, NULL, NULL, NULL, NULL};
  contour_plan plan = {0};
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  cl_mem d_pixels = NULL, d_linear = NULL, d_bins = NULL, d_lum = NULL, d_rows = NULL;
  cl_mem d_filter = NULL, d_taps = NULL, d_response = NULL, d_scale = NULL, d_centres = NULL;
  cl_kernel k = NULL;
  cl_int2 *filter = NULL;
  cl_int4 *response = NULL;
  float *taps = NULL;
  double seconds = 0.0;
  int status, finished, ntaps = 0;

  if (kernel_seconds)
    *kernel_seconds = 0.0;
  if (!out)
    out = &none;
  if (!pixels || channels < 1 || channels > 4)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the contour detector's image has %d channels%s: it needs 1 to 4",
                         channels, pixels ? "" : " and no pixels");
  status = contour_prepare(im, g, weight, width, height, out, &plan);
  if (status == DSG_OK)
    status = check_binning(bn, g, &ntaps);
  if (status != DSG_OK)
    return status;
  const int n = width * height, dim = bn->dim, nfilters = bn->nfilters;
  const unsigned long long nn = (unsigned long long)n;
  const unsigned long long constant = (unsigned long long)dim * (sizeof(cl_int4) + sizeof(float)) +
                                      (unsigned long long)ntaps * sizeof(float) +
                                      (unsigned long long)bn->ncentres * dim * sizeof(float);
  if (constant > im->max_constant) {
    char need[32], have[32];
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the texton filters and dictionary need %s of constant memory, over "
                         "%s's %s",
                         spmv_cl_bytes(constant, need), im->rt.dev.name,
                         spmv_cl_bytes(im->max_constant, have));
  }

  /* the filters' taps back to back: filter[f] = (its first tap, its radius); response[d] = (the
   * row pass it reads, its column filter's first tap and radius) */
  filter = malloc((size_t)nfilters * sizeof(*filter));
  response = malloc((size_t)dim * sizeof(*response));
  taps = malloc((size_t)ntaps * sizeof(*taps));
  if (!filter || !response || !taps) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the texton tables");
    goto out_release;
  }
  for (int f = 0, at = 0; f < nfilters; f++) {
    const int r = bn->filter_radius[f];
    filter[f].s[0] = at;
    filter[f].s[1] = r;
    memcpy(taps + at, bn->filter[f], (size_t)(2 * r + 1) * sizeof(float));
    at += 2 * r + 1;
  }
  for (int d = 0; d < dim; d++) {
    response[d].s[0] = bn->row_filter[d];
    response[d].s[1] = filter[bn->column_filter[d]].s[0];
    response[d].s[2] = filter[bn->column_filter[d]].s[1];
    response[d].s[3] = 0;
  }

  d_pixels = buffer(im, CL_MEM_READ_ONLY, nn * (unsigned long long)channels, pixels,
                    "the image's pixels", &status);
  d_linear =
      buffer(im, CL_MEM_READ_ONLY, 256 * sizeof(float), bn->linear, "the sRGB table", &status);
  d_bins = buffer(im, CL_MEM_READ_WRITE, nn * 4, NULL, "the contour bins", &status);
  d_lum = buffer(im, CL_MEM_READ_WRITE, nn * sizeof(float), NULL, "the brightness", &status);
  d_rows = buffer(im, CL_MEM_READ_WRITE, nn * (unsigned long long)nfilters * sizeof(float), NULL,
                  "the texton filters' row pass", &status);
  d_filter = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)nfilters * sizeof(*filter), filter,
                    "the texton filters", &status);
  d_taps = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)ntaps * sizeof(float), taps,
                  "the texton filters' taps", &status);
  d_response = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)dim * sizeof(*response), response,
                      "the texton responses", &status);
  d_scale = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)dim * sizeof(float),
                   bn->response_scale, "the texton responses' scales", &status);
  d_centres = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)bn->ncentres * dim * sizeof(float),
                     bn->centres, "the texton dictionary", &status);
  if (status != DSG_OK)
    goto out_release;

  const cl_float4 lo = {{bn->lo[0], bn->lo[1], bn->lo[2], 0.0f}},
                  span = {
                      {bn->hi[0] - bn->lo[0], bn->hi[1] - bn->lo[1], bn->hi[2] - bn->lo[2], 1.0f}};
  const cl_int4 nb = {{g->bins[0], g->bins[1], g->bins[2], 1}};
  const int texture = 3, ncentres = bn->ncentres;
  const float contrast = bn->contrast;
  status = kernel(im, im->contours, "contour_lab", &k, 9, sizeof(cl_mem), &d_pixels, sizeof(int),
                  &channels, sizeof(int), &n, sizeof(cl_mem), &d_linear, sizeof(cl_float4), &lo,
                  sizeof(cl_float4), &span, sizeof(cl_int4), &nb, sizeof(cl_mem), &d_bins,
                  sizeof(cl_mem), &d_lum);
  if (status == DSG_OK)
    status = launch(im, k, "contour_lab", (size_t)n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status = kernel(im, im->contours, "texton_rows", &k, 6, sizeof(cl_mem), &d_lum, sizeof(int),
                    &width, sizeof(int), &n, sizeof(cl_mem), &d_filter, sizeof(cl_mem), &d_taps,
                    sizeof(cl_mem), &d_rows);
  if (status == DSG_OK)
    status = launch(im, k, "texton_rows", (size_t)n, 0, (size_t)nfilters, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status = kernel(im, im->contours, "texton_assign", &k, 12, sizeof(cl_mem), &d_rows, sizeof(int),
                    &width, sizeof(int), &height, sizeof(int), &dim, sizeof(cl_mem), &d_response,
                    sizeof(cl_mem), &d_taps, sizeof(cl_mem), &d_scale, sizeof(float), &contrast,
                    sizeof(cl_mem), &d_centres, sizeof(int), &ncentres, sizeof(int), &texture,
                    sizeof(cl_mem), &d_bins);
  if (status == DSG_OK)
    status = launch(im, k, "texton_assign", (size_t)n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status = read_back(im, d_bins, (size_t)(nn * 4), bins_out, "the contour bins");
  if (status == DSG_OK)
    status = contour_detect(im, g, &plan, d_bins, weight, bias, width, height, out, &b);

out_release:
  release(&d_pixels);
  release(&d_linear);
  release(&d_bins);
  release(&d_lum);
  release(&d_rows);
  release(&d_filter);
  release(&d_taps);
  release(&d_response);
  release(&d_scale);
  release(&d_centres);
  finished = batch_finish(im, &b, "the contour detector", &seconds);
  if (status == DSG_OK)
    status = finished;
  free(filter);
  free(response);
  free(taps);
  if (kernel_seconds)
    *kernel_seconds = seconds;
  return status;
}

/* ---- gPb ---- */

#define SPECTRAL_LOCAL 256 /* spectral_range's work-group, at most (kernels/contours.cl) */

static int check_spectral(const spmv_spectral *s, const float *oriented,
                          const spmv_contour_outputs *out)
{
  if (!s || s->nvec < 0 || (s->nvec > 0 && (!s->vectors || !s->mu || !s->weight)) ||
      !s->sqrt_degree)
    return dsg_error_set(DSG_ERR_INVALID,
                         "gPb needs the eigenvectors, their eigenvalues and weights and D^1/2");
  if (s->radius < 1 || s->radius > SPMV_CONTOUR_MAX_RADIUS || !s->smooth || !s->derivative)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the spectral term's filters (radius %d) are not in "
                         "[1, %d] or are missing",
                         s->radius, SPMV_CONTOUR_MAX_RADIUS);
  if (!oriented)
    return dsg_error_set(DSG_ERR_INVALID, "gPb needs the detector's combination at every "
                                          "orientation");
  if (out->grad || out->parts || out->oriented)
    return dsg_error_set(DSG_ERR_INVALID, "gPb makes only the strength, the orientations and "
                                          "the thinned strength");
  return DSG_OK;
}

int spmv_cl_gpb(spmv_cl_image *im, const spmv_contour_geometry *g, const spmv_spectral *s,
                const float *oriented, float bias, float weight, int width, int height,
                const spmv_contour_outputs *out, double *kernel_seconds)
{
  static const spmv_contour_outputs none = {NULL, NULL, NULL, NULL, NULL, NULL};
  contour_plan plan = {0};
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  cl_mem d_vectors = NULL, d_products = NULL, d_sd = NULL, d_mu = NULL, d_weight = NULL;
  cl_mem d_scale = NULL, d_taps = NULL, d_row0 = NULL, d_row1 = NULL, d_normal = NULL;
  cl_mem d_oriented = NULL, d_spectral = NULL, d_strength = NULL, d_orient = NULL;
  cl_mem d_thin_normal = NULL, d_thin = NULL;
  cl_kernel k = NULL;
  float *sd = NULL, *taps = NULL;
  double seconds = 0.0;
  int status, finished;

  if (kernel_seconds)
    *kernel_seconds = 0.0;
  if (!out)
    out = &none;
  status = check_spectral(s, oriented, out);
  if (status == DSG_OK)
    status = check_geometry(g, &plan);
  if (status != DSG_OK)
    return status;
  if (width < 1 || height < 1 || (long long)width * height > INT_MAX / 2)
    return dsg_error_set(DSG_ERR_INVALID, "the gPb image is %d x %d", width, height);
  if (out->thin && (g->reach < 1 || g->reach > SPMV_CONTOUR_MAX_REACH))
    return dsg_error_set(DSG_ERR_INVALID, "the contour thinning's reach %d is outside [1, %d]",
                         g->reach, SPMV_CONTOUR_MAX_REACH);
  status = contour_program(im, g, &plan); /* the detector's program: gPb's kernels are there */
  if (status != DSG_OK)
    return status;
  const int n = width * height, nvec = s->nvec, r = s->radius, no = g->norient;
  const unsigned long long nn = (unsigned long long)n, vec = (unsigned long long)nvec * nn;
  const int has_products = s->products != NULL;
  const float isolated = (float)s->isolated;

  /* D^1/2 in float, the taps side by side (smooth, then derivative) */
  sd = malloc((size_t)nn * sizeof(*sd));
  taps = malloc((size_t)(4 * r + 2) * sizeof(*taps));
  if (!sd || !taps) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the spectral term's tables");
    goto out_release;
  }
  for (size_t i = 0; i < (size_t)nn; i++)
    sd[i] = (float)s->sqrt_degree[i];
  memcpy(taps, s->smooth, (size_t)(2 * r + 1) * sizeof(*taps));
  memcpy(taps + 2 * r + 1, s->derivative, (size_t)(2 * r + 1) * sizeof(*taps));
  cl_float2 normal[SPMV_CONTOUR_MAX_ORIENT];
  for (int o = 0; o < no; o++) {
    const double th = o * (M_PI / no);
    normal[o].s[0] = (float)-sin(th);
    normal[o].s[1] = (float)cos(th);
  }
  cl_float4 thin_normal[2 * SPMV_CONTOUR_MAX_REACH * SPMV_CONTOUR_MAX_ORIENT];
  const int reach = out->thin ? g->reach : 0;
  thin_normals(no, reach, thin_normal);

  d_vectors = buffer(im, CL_MEM_READ_ONLY, vec * sizeof(float), nvec ? s->vectors : NULL,
                     "the eigenvectors", &status);
  if (has_products)
    d_products = buffer(im, CL_MEM_READ_ONLY, vec * sizeof(float), nvec ? s->products : NULL,
                        "the eigenvectors' products", &status);
  d_sd = buffer(im, CL_MEM_READ_ONLY, nn * sizeof(float), sd, "D^1/2", &status);
  d_mu = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(nvec ? nvec : 1) * sizeof(float),
                nvec ? s->mu : NULL, "the eigenvalues", &status);
  d_weight = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(nvec ? nvec : 1) * sizeof(float),
                    nvec ? s->weight : NULL, "the spectral weights", &status);
  d_scale = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)(nvec ? nvec : 1) * sizeof(float),
                   NULL, "the spectral scales", &status);
  d_taps = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(4 * r + 2) * sizeof(float), taps,
                  "the spectral filters", &status);
  d_row0 =
      buffer(im, CL_MEM_READ_WRITE, nn * sizeof(float), NULL, "the spectral row pass", &status);
  d_row1 =
      buffer(im, CL_MEM_READ_WRITE, nn * sizeof(float), NULL, "the spectral row pass", &status);
  d_normal = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)no * sizeof(cl_float2), normal,
                    "the spectral normals", &status);
  d_oriented = buffer(im, CL_MEM_READ_ONLY, nn * no * sizeof(float), oriented,
                      "the oriented contour strength", &status);
  d_spectral =
      buffer(im, CL_MEM_READ_WRITE, nn * no * sizeof(float), NULL, "the spectral term", &status);
  d_strength = buffer(im, CL_MEM_READ_WRITE, nn * sizeof(float), NULL, "gPb", &status);
  d_orient = buffer(im, CL_MEM_READ_WRITE, nn, NULL, "gPb's orientations", &status);
  if (out->thin) {
    d_thin_normal = buffer(im, CL_MEM_READ_ONLY, 2ull * reach * no * sizeof(cl_float4), thin_normal,
                           "the contour normals", &status);
    d_thin = buffer(im, CL_MEM_WRITE_ONLY, nn * sizeof(float), NULL, "gPb thinned", &status);
  }
  if (status == DSG_OK) {
    const float zero = 0.0f;
    status = fill(im, d_spectral, &zero, sizeof(zero), (size_t)(nn * no * sizeof(float)),
                  "clearing the spectral term");
  }
  if (status != DSG_OK)
    goto out_release;
  if (nvec > 0) {
    size_t local = SPECTRAL_LOCAL;
    while (local > im->rt.dev.max_work_group && local > 1)
      local /= 2;
    status = kernel(im, im->contours, "spectral_range", &k, 9, sizeof(cl_mem), &d_vectors,
                    sizeof(cl_mem), has_products ? &d_products : &d_vectors, sizeof(int),
                    &has_products, sizeof(cl_mem), &d_sd, sizeof(float), &isolated, sizeof(cl_mem),
                    &d_mu, sizeof(cl_mem), &d_weight, sizeof(int), &n, sizeof(cl_mem), &d_scale);
    if (status == DSG_OK)
      status = launch(im, k, "spectral_range", local, local, (size_t)nvec, &b);
    if (k)
      clReleaseKernel(k);
    k = NULL;
  }
  /* each vector along the rows, then along the columns into the term, in order */
  for (int j = 0; j < nvec && status == DSG_OK; j++) {
    status = kernel(im, im->contours, "spectral_rows", &k, 14, sizeof(cl_mem), &d_vectors,
                    sizeof(cl_mem), has_products ? &d_products : &d_vectors, sizeof(int),
                    &has_products, sizeof(cl_mem), &d_sd, sizeof(float), &isolated, sizeof(cl_mem),
                    &d_mu, sizeof(cl_mem), &d_scale, sizeof(int), &j, sizeof(int), &width,
                    sizeof(int), &n, sizeof(cl_mem), &d_taps, sizeof(int), &r, sizeof(cl_mem),
                    &d_row0, sizeof(cl_mem), &d_row1);
    if (status == DSG_OK)
      status = launch(im, k, "spectral_rows", (size_t)n, 0, 1, &b);
    if (k)
      clReleaseKernel(k);
    k = NULL;
    if (status == DSG_OK)
      status = kernel(im, im->contours, "spectral_columns", &k, 10, sizeof(cl_mem), &d_row0,
                      sizeof(cl_mem), &d_row1, sizeof(cl_mem), &d_scale, sizeof(int), &j,
                      sizeof(int), &width, sizeof(int), &height, sizeof(cl_mem), &d_taps,
                      sizeof(int), &r, sizeof(cl_mem), &d_normal, sizeof(cl_mem), &d_spectral);
    if (status == DSG_OK)
      status = launch(im, k, "spectral_columns", (size_t)n, 0, 1, &b);
    if (k)
      clReleaseKernel(k);
    k = NULL;
  }
  /* gPb and its thinning */
  const double s0d = 1.0 / (1.0 + exp(-(double)bias));
  const float s0 = (float)s0d,
              half = (float)(log((0.5 * (1.0 - s0d) + s0d) / (0.5 * (1.0 - s0d))) - bias);
  if (status == DSG_OK)
    status = kernel(im, im->contours, "gpb_combine", &k, 9, sizeof(cl_mem), &d_oriented,
                    sizeof(cl_mem), &d_spectral, sizeof(int), &n, sizeof(float), &bias,
                    sizeof(float), &s0, sizeof(float), &half, sizeof(float), &weight,
                    sizeof(cl_mem), &d_strength, sizeof(cl_mem), &d_orient);
  if (status == DSG_OK)
    status = launch(im, k, "gpb_combine", (size_t)n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK && out->thin) {
    status = kernel(im, im->contours, "contour_thin", &k, 7, sizeof(cl_mem), &d_strength,
                    sizeof(cl_mem), &d_orient, sizeof(int), &width, sizeof(int), &height,
                    sizeof(cl_mem), &d_thin_normal, sizeof(int), &reach, sizeof(cl_mem), &d_thin);
    if (status == DSG_OK)
      status = launch(im, k, "contour_thin", (size_t)n, 0, 1, &b);
    if (k)
      clReleaseKernel(k);
    k = NULL;
  }
  if (status == DSG_OK) {
    clFlush(im->rt.queue);
    prefault(out->strength, (size_t)nn * sizeof(float));
    prefault(out->orientation, (size_t)nn);
    prefault(out->thin, (size_t)nn * sizeof(float));
    status = read_back(im, d_strength, (size_t)nn * sizeof(float), out->strength, "gPb");
  }
  if (status == DSG_OK)
    status = read_back(im, d_orient, (size_t)nn, out->orientation, "gPb's orientations");
  if (status == DSG_OK)
    status = read_back(im, d_thin, (size_t)nn * sizeof(float), out->thin, "gPb thinned");

out_release:
  release(&d_vectors);
  release(&d_products);
  release(&d_sd);
  release(&d_mu);
  release(&d_weight);
  release(&d_scale);
  release(&d_taps);
  release(&d_row0);
  release(&d_row1);
  release(&d_normal);
  release(&d_oriented);
  release(&d_spectral);
  release(&d_strength);
  release(&d_orient);
  release(&d_thin_normal);
  release(&d_thin);
  finished = batch_finish(im, &b, "gPb", &seconds);
  if (status == DSG_OK)
    status = finished;
  free(sd);
  free(taps);
  if (kernel_seconds)
    *kernel_seconds = seconds;
  return status;
}

/* ---- k-means ---- */

struct spmv_cl_points {
  spmv_cl_image *im;
  size_t n;
  int dim, k, nchunk;
  cl_mem points, labels, best, d2, centres, sums, counts, chunk_d2, changed;
  cl_mem total, total_counts; /* the clusters' sums and sizes over the chunks */
};

void spmv_cl_points_destroy(spmv_cl_points *p)
{
  if (!p)
    return;
  release(&p->points);
  release(&p->labels);
  release(&p->best);
  release(&p->d2);
  release(&p->centres);
  release(&p->sums);
  release(&p->counts);
  release(&p->chunk_d2);
  release(&p->changed);
  release(&p->total);
  release(&p->total_counts);
  free(p);
}

/* Writes `bytes` of host into m (without waiting: the queue is in order). */
static int write_to(const spmv_cl_image *im, cl_mem m, size_t bytes, const void *host,
                    const char *what)
{
  char msg[128];
  const cl_int err = clEnqueueWriteBuffer(im->rt.queue, m, CL_FALSE, 0, bytes, host, 0, NULL, NULL);
  if (err == CL_SUCCESS)
    return DSG_OK;
  snprintf(msg, sizeof(msg), "writing %s", what);
  return spmv_cl_fail(err, msg, im->rt.dev.name);
}

/* Reads `bytes` of m from `offset` into host, waiting for them (and for the queue before). */
static int read_now(const spmv_cl_image *im, cl_mem m, size_t offset, size_t bytes, void *host,
                    const char *what)
{
  const cl_int err =
      clEnqueueReadBuffer(im->rt.queue, m, CL_TRUE, offset, bytes, host, 0, NULL, NULL);
  return err == CL_SUCCESS ? DSG_OK : spmv_cl_fail(err, what, im->rt.dev.name);
}

int spmv_cl_image_doubles(const spmv_cl_image *im)
{
  cl_device_fp_config fp64 = 0;
  return clGetDeviceInfo(im->rt.device, CL_DEVICE_DOUBLE_FP_CONFIG, sizeof(fp64), &fp64, NULL) ==
             CL_SUCCESS &&
         fp64 != 0;
}

int spmv_cl_points_create(spmv_cl_image *im, const float *points, size_t n, int dim, int k,
                          int nchunk, spmv_cl_points **out)
{
  spmv_cl_points *p;
  int status = DSG_OK;
  *out = NULL;
  if (!points || n < 1 || dim < 1 || k < 1 || (size_t)k > n || nchunk < 1 ||
      n > (size_t)LLONG_MAX / (size_t)dim)
    return dsg_error_set(DSG_ERR_INVALID,
                         "k-means on the device needs points, 1 <= k <= n and a chunk (n %zu, "
                         "dim %d, k %d, %d chunks)",
                         n, dim, k, nchunk);
  if (!spmv_cl_image_doubles(im))
    return dsg_error_set(DSG_ERR_LIMIT,
                         "k-means on %s needs double precision (cl_khr_fp64), which it lacks",
                         im->rt.dev.name);
  if (!im->kmeans) {
    status = spmv_cl_build(&im->rt, "kmeans", "-cl-std=CL1.2", &im->kmeans);
    if (status != DSG_OK) {
      im->kmeans = NULL;
      return status;
    }
  }
  p = calloc(1, sizeof(*p));
  if (!p)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the k-means state");
  p->im = im;
  p->n = n;
  p->dim = dim;
  p->k = k;
  p->nchunk = nchunk;
  const unsigned long long nn = n;
  p->points =
      buffer(im, CL_MEM_READ_ONLY, nn * dim * sizeof(float), points, "the k-means points", &status);
  p->labels =
      buffer(im, CL_MEM_READ_WRITE, nn * sizeof(cl_int), NULL, "the k-means labels", &status);
  p->best =
      buffer(im, CL_MEM_READ_WRITE, nn * sizeof(cl_int), NULL, "the best k-means labels", &status);
  p->d2 =
      buffer(im, CL_MEM_READ_WRITE, nn * sizeof(cl_double), NULL, "the k-means distances", &status);
  p->centres = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)k * dim * sizeof(cl_double), NULL,
                      "the k-means centres", &status);
  p->sums = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)nchunk * k * dim * sizeof(cl_double),
                   NULL, "the k-means sums", &status);
  p->counts = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)nchunk * k * sizeof(cl_long), NULL,
                     "the k-means counts", &status);
  p->chunk_d2 = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)nchunk * sizeof(cl_double), NULL,
                       "the k-means chunk sums", &status);
  p->changed =
      buffer(im, CL_MEM_READ_WRITE, sizeof(cl_int), NULL, "the k-means change count", &status);
  p->total = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)k * dim * sizeof(cl_double), NULL,
                    "the k-means clusters' sums", &status);
  p->total_counts = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)k * sizeof(cl_long), NULL,
                           "the k-means clusters' sizes", &status);
  if (status == DSG_OK)
    status = spmv_cl_points_reset(p);
  if (status != DSG_OK) {
    spmv_cl_points_destroy(p);
    return status;
  }
  *out = p;
  return DSG_OK;
}

int spmv_cl_points_get(spmv_cl_points *p, size_t i, float *coords)
{
  if (i >= p->n)
    return dsg_error_set(DSG_ERR_INVALID, "k-means point %zu of %zu", i, p->n);
  return read_now(p->im, p->points, i * (size_t)p->dim * sizeof(float),
                  (size_t)p->dim * sizeof(float), coords, "reading a k-means point");
}

/* Enqueues kmeans_chunk_sums of d2 and the read of its nchunk sums into chunk_d2. */
static int chunk_sums(spmv_cl_points *p, double *chunk_d2, batch *b)
{
  spmv_cl_image *im = p->im;
  cl_kernel k = NULL;
  const cl_long n = (cl_long)p->n;
  int status = kernel(im, im->kmeans, "kmeans_chunk_sums", &k, 4, sizeof(cl_mem), &p->d2,
                      sizeof(cl_long), &n, sizeof(int), &p->nchunk, sizeof(cl_mem), &p->chunk_d2);
  if (status == DSG_OK)
    status = launch(im, k, "kmeans_chunk_sums", (size_t)p->nchunk, 0, 1, b);
  if (k)
    clReleaseKernel(k);
  if (status == DSG_OK)
    status = read_back(im, p->chunk_d2, (size_t)p->nchunk * sizeof(double), chunk_d2,
                       "the k-means chunk sums");
  return status;
}

int spmv_cl_points_distances(spmv_cl_points *p, const double *centre, int first, double *chunk_d2)
{
  spmv_cl_image *im = p->im;
  batch b = {0, 0, {NULL}, {NULL}};
  cl_kernel k = NULL;
  double seconds = 0.0;
  const cl_long n = (cl_long)p->n;
  int status =
      write_to(im, p->centres, (size_t)p->dim * sizeof(double), centre, "a k-means centre");
  if (status == DSG_OK)
    status = kernel(im, im->kmeans, "kmeans_distances", &k, 6, sizeof(cl_mem), &p->points,
                    sizeof(cl_long), &n, sizeof(int), &p->dim, sizeof(cl_mem), &p->centres,
                    sizeof(int), &first, sizeof(cl_mem), &p->d2);
  if (status == DSG_OK)
    status = launch(im, k, "kmeans_distances", p->n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  if (status == DSG_OK)
    status = chunk_sums(p, chunk_d2, &b);
  const int finished = batch_finish(im, &b, "the k-means distances", &seconds);
  return status == DSG_OK ? finished : status;
}

int spmv_cl_points_d2(spmv_cl_points *p, size_t from, size_t count, double *out)
{
  if (from > p->n || count > p->n - from)
    return dsg_error_set(DSG_ERR_INVALID, "k-means distances %zu + %zu of %zu", from, count, p->n);
  if (count == 0)
    return DSG_OK;
  return read_now(p->im, p->d2, from * sizeof(double), count * sizeof(double), out,
                  "reading the k-means distances");
}

int spmv_cl_points_assign(spmv_cl_points *p, const double *centres, double *sums, int64_t *counts,
                          double *chunk_d2, long *changed)
{
  spmv_cl_image *im = p->im;
  batch b = {0, 0, {NULL}, {NULL}};
  cl_kernel k = NULL;
  double seconds = 0.0;
  const cl_long n = (cl_long)p->n;
  const cl_int zero = 0;
  cl_int moved = 0;
  int status = write_to(im, p->centres, (size_t)p->k * p->dim * sizeof(double), centres,
                        "the k-means centres");
  if (status == DSG_OK)
    status = fill(im, p->changed, &zero, sizeof(zero), sizeof(zero), "clearing a k-means count");
  if (status == DSG_OK)
    status =
        kernel(im, im->kmeans, "kmeans_assign", &k, 8, sizeof(cl_mem), &p->points, sizeof(cl_long),
               &n, sizeof(int), &p->dim, sizeof(cl_mem), &p->centres, sizeof(int), &p->k,
               sizeof(cl_mem), &p->labels, sizeof(cl_mem), &p->d2, sizeof(cl_mem), &p->changed);
  if (status == DSG_OK)
    status = launch(im, k, "kmeans_assign", p->n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status =
        kernel(im, im->kmeans, "kmeans_sums", &k, 8, sizeof(cl_mem), &p->points, sizeof(cl_mem),
               &p->labels, sizeof(cl_long), &n, sizeof(int), &p->dim, sizeof(int), &p->k,
               sizeof(int), &p->nchunk, sizeof(cl_mem), &p->sums, sizeof(cl_mem), &p->counts);
  if (status == DSG_OK)
    status = launch(im, k, "kmeans_sums", (size_t)p->nchunk, 0, (size_t)p->k * p->dim, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status =
        kernel(im, im->kmeans, "kmeans_reduce", &k, 7, sizeof(cl_mem), &p->sums, sizeof(cl_mem),
               &p->counts, sizeof(int), &p->dim, sizeof(int), &p->k, sizeof(int), &p->nchunk,
               sizeof(cl_mem), &p->total, sizeof(cl_mem), &p->total_counts);
  if (status == DSG_OK)
    status = launch(im, k, "kmeans_reduce", (size_t)p->k * p->dim, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  if (status == DSG_OK)
    status = chunk_sums(p, chunk_d2, &b);
  if (status == DSG_OK)
    status =
        read_back(im, p->total, (size_t)p->k * p->dim * sizeof(double), sums, "the k-means sums");
  if (status == DSG_OK)
    status = read_back(im, p->total_counts, (size_t)p->k * sizeof(int64_t), counts,
                       "the k-means counts");
  if (status == DSG_OK)
    status = read_back(im, p->changed, sizeof(moved), &moved, "the k-means change count");
  const int finished = batch_finish(im, &b, "a k-means assignment", &seconds);
  if (status == DSG_OK)
    status = finished;
  if (status == DSG_OK)
    *changed = moved;
  return status;
}

int spmv_cl_points_reset(spmv_cl_points *p)
{
  const cl_int none = -1;
  return fill(p->im, p->labels, &none, sizeof(none), p->n * sizeof(cl_int),
              "clearing the k-means labels");
}

int spmv_cl_points_keep(spmv_cl_points *p)
{
  const cl_int err = clEnqueueCopyBuffer(p->im->rt.queue, p->labels, p->best, 0, 0,
                                         p->n * sizeof(cl_int), 0, NULL, NULL);
  return err == CL_SUCCESS ? DSG_OK
                           : spmv_cl_fail(err, "keeping the k-means labels", p->im->rt.dev.name);
}

int spmv_cl_points_best(spmv_cl_points *p, int *labels)
{
  return read_now(p->im, p->best, 0, p->n * sizeof(cl_int), labels, "reading the k-means labels");
}

/* ---- the affinity ---- */

static int check_affinity(const spmv_affinity_geometry *g, int width, int height,
                          const float *features, int nfeat, const float *contours,
                          const spmv_dia *N)
{
  if (width < 1 || height < 1 || (long long)width * height > INT_MAX / 2)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the affinity's image is %d x %d: it needs 1 to %d pixels", width, height,
                         INT_MAX / 2);
  if (nfeat < 0 || (nfeat > 0 && !features) || (nfeat == 0 && !contours))
    return dsg_error_set(DSG_ERR_INVALID,
                         "the affinity has %d features per pixel%s and %s contours", nfeat,
                         nfeat > 0 && !features ? " but none given" : "", contours ? "" : "no");
  if (!N || N->rows != width * height || N->ndiag < 1)
    return dsg_error_set(DSG_ERR_INVALID, "N has %d rows for an image of %d x %d pixels",
                         N ? N->rows : 0, width, height);
  if (!g || g->ndisc < 1 || !g->dx || !g->dy || !g->diag_of ||
      (contours && (!g->line_at || !g->line_x || !g->line_y)))
    return dsg_error_set(DSG_ERR_INVALID, "the affinity geometry lacks its disc%s",
                         contours ? " or its lines" : "");
  for (int k = 0; k < g->ndisc; k++) {
    const int d = g->diag_of[k];
    if (d < -1 || d >= N->ndiag ||
        (d >= 0 && N->offsets[d] != (long long)g->dy[k] * width + g->dx[k]))
      return dsg_error_set(DSG_ERR_INVALID,
                           "affinity disc offset %d (%d, %d) names diagonal %d, which is not its "
                           "offset %lld among N's %d",
                           k, g->dx[k], g->dy[k], d, (long long)g->dy[k] * width + g->dx[k],
                           N->ndiag);
    if (!contours)
      continue;
    if (g->line_at[k] < 0 || g->line_at[k + 1] < g->line_at[k] || g->line_at[k + 1] > INT_MAX / 2)
      return dsg_error_set(DSG_ERR_INVALID, "affinity line %d starts at %d and ends at %d", k,
                           g->line_at[k], g->line_at[k + 1]);
    for (int t = g->line_at[k]; t < g->line_at[k + 1]; t++) {
      const int x = g->line_x[t], y = g->line_y[t];
      if (x < (g->dx[k] < 0 ? g->dx[k] : 0) || x > (g->dx[k] > 0 ? g->dx[k] : 0) ||
          y < (g->dy[k] < 0 ? g->dy[k] : 0) || y > (g->dy[k] > 0 ? g->dy[k] : 0))
        return dsg_error_set(DSG_ERR_INVALID,
                             "affinity line %d's point (%d, %d) lies outside the box of (0, 0) "
                             "and (%d, %d)",
                             k, x, y, g->dx[k], g->dy[k]);
    }
  }
  return DSG_OK;
}

/* 1 / sigma^power as two floats, inv->s[0] + inv->s[1], when sigma is finite and positive and
 * that is a finite float; name is the parameter's, DSG_PARAM-marked. */
static int inverse(double sigma, int power, const char *name, cl_float2 *inv)
{
  const double r = 1.0 / pow(sigma, power);
  if (!isfinite(sigma) || !(sigma > 0.0) || !(r <= FLT_MAX))
    return dsg_error_set(DSG_ERR_INVALID,
                         "%s %g is out of range for the device's float arithmetic: it must be "
                         "finite and > 0, and 1 / %s^%d at most %g",
                         name, sigma, name, power, (double)FLT_MAX);
  inv->s[0] = (float)r;
  inv->s[1] = (float)(r - (double)inv->s[0]);
  return DSG_OK;
}

int spmv_cl_affinity(spmv_cl_image *im, const spmv_affinity_geometry *g, int width, int height,
                     const float *features, int nfeat, const float *contours, double sigma_i,
                     double sigma_x, double sigma_c, spmv_dia *N, double *sqrt_degree, int *linked,
                     double *kernel_seconds)
{
  cl_mem d_f = NULL, d_contours = NULL, d_disc = NULL, d_spatial = NULL, d_line = NULL;
  cl_mem d_values = NULL, d_sdeg = NULL, d_offsets = NULL, d_linked = NULL;
  cl_kernel k = NULL;
  cl_int4 *disc = NULL;
  float *spatial = NULL, *sdeg = NULL;
  cl_float2 inv_si2 = {{0.0f, 0.0f}}, inv_sc = {{0.0f, 0.0f}}, inv_sx2;
  int *line = NULL, nline = 0, is_linked = 0, status, finished;
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  double seconds = 0.0;

  if (kernel_seconds)
    *kernel_seconds = 0.0;
  if (linked)
    *linked = 0;
  status = check_affinity(g, width, height, features, nfeat, contours, N);
  if (status == DSG_OK)
    status = inverse(sigma_i, 2, DSG_PARAM("sigma_i"), &inv_si2);
  if (status == DSG_OK)
    status = inverse(sigma_x, 2, DSG_PARAM("sigma_x"), &inv_sx2);
  if (status == DSG_OK && contours)
    status = inverse(sigma_c, 1, DSG_PARAM("sigma_c"), &inv_sc);
  if (status != DSG_OK)
    return status;
  if (!im->affinity) {
    status = spmv_cl_build(&im->rt, "affinity", "-cl-std=CL1.2", &im->affinity);
    if (status != DSG_OK) {
      im->affinity = NULL;
      return status;
    }
  }

  const int n = width * height, ndisc = g->ndisc, use_contours = contours != NULL;
  const int pitch = (int)N->pitch;
  nline = contours ? g->line_at[ndisc] - g->line_at[0] : 0;
  disc = malloc((size_t)(ndisc + 1) * sizeof(*disc));
  spatial = malloc((size_t)ndisc * sizeof(*spatial));
  line = malloc((size_t)(nline > 0 ? nline : 1) * sizeof(*line));
  sdeg = malloc((size_t)n * sizeof(*sdeg));
  if (!disc || !spatial || !line || !sdeg) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the affinity's tables");
    goto out_release;
  }
  for (int j = 0; j < ndisc; j++) {
    const double d2 = (double)g->dx[j] * g->dx[j] + (double)g->dy[j] * g->dy[j];
    disc[j].s[0] = g->dx[j];
    disc[j].s[1] = g->dy[j];
    disc[j].s[2] = g->diag_of[j];
    disc[j].s[3] = contours ? g->line_at[j] - g->line_at[0] : 0;
    spatial[j] = (float)exp(-d2 / (sigma_x * sigma_x));
  }
  disc[ndisc].s[0] = disc[ndisc].s[1] = disc[ndisc].s[2] = 0;
  disc[ndisc].s[3] = nline;
  for (int t = 0; t < nline; t++)
    line[t] = g->line_y[g->line_at[0] + t] * width + g->line_x[g->line_at[0] + t];

  const unsigned long long nn = (unsigned long long)n;
  d_f = buffer(im, CL_MEM_READ_ONLY, nfeat > 0 ? nn * nfeat * sizeof(float) : 1,
               nfeat > 0 ? features : NULL, "the features", &status);
  d_contours = buffer(im, CL_MEM_READ_ONLY, contours ? nn * sizeof(float) : 1, contours,
                      "the contours", &status);
  d_disc = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(ndisc + 1) * sizeof(*disc), disc,
                  "the affinity disc", &status);
  d_spatial = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)ndisc * sizeof(float), spatial,
                     "the affinity's spatial terms", &status);
  d_line = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(nline > 0 ? nline : 1) * sizeof(int),
                  line, "the affinity lines", &status);
  d_values = buffer(im, CL_MEM_READ_WRITE, spmv_dia_bytes(N), NULL, "the matrix", &status);
  d_sdeg = buffer(im, CL_MEM_READ_WRITE, nn * sizeof(float), NULL, "the degrees", &status);
  d_offsets = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)N->ndiag * sizeof(int), N->offsets,
                     "the matrix offsets", &status);
  d_linked = buffer(im, CL_MEM_READ_WRITE, sizeof(int), &is_linked, "the affinity flag", &status);
  if (status == DSG_OK) {
    const float zero = 0.0f;
    status = fill(im, d_values, &zero, sizeof(zero), spmv_dia_bytes(N), "zeroing the matrix");
  }
  if (status != DSG_OK)
    goto out_release;

  const int iw = width, ih = height, ndiag = N->ndiag;
  status =
      kernel(im, im->affinity, "affinity_weights", &k, 15, sizeof(int), &iw, sizeof(int), &ih,
             sizeof(cl_mem), &d_f, sizeof(int), &nfeat, sizeof(cl_mem), &d_contours, sizeof(int),
             &use_contours, sizeof(cl_float2), &inv_si2, sizeof(cl_float2), &inv_sc, sizeof(int),
             &ndisc, sizeof(cl_mem), &d_disc, sizeof(cl_mem), &d_spatial, sizeof(cl_mem), &d_line,
             sizeof(cl_mem), &d_values, sizeof(int), &pitch, sizeof(cl_mem), &d_sdeg);
  if (status == DSG_OK)
    status = launch(im, k, "affinity_weights", (size_t)n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status = kernel(im, im->affinity, "affinity_normalise", &k, 7, sizeof(int), &n, sizeof(int),
                    &ndiag, sizeof(cl_mem), &d_offsets, sizeof(cl_mem), &d_values, sizeof(int),
                    &pitch, sizeof(cl_mem), &d_sdeg, sizeof(cl_mem), &d_linked);
  if (status == DSG_OK)
    status = launch(im, k, "affinity_normalise", (size_t)n, 0, 1, &b);
  if (k)
    clReleaseKernel(k);
  k = NULL;
  if (status == DSG_OK)
    status = read_back(im, d_values, spmv_dia_bytes(N), N->values, "the matrix");
  if (status == DSG_OK)
    status = read_back(im, d_sdeg, (size_t)n * sizeof(float), sdeg, "the degrees");
  if (status == DSG_OK)
    status = read_back(im, d_linked, sizeof(int), &is_linked, "the affinity flag");
  finished = batch_finish(im, &b, "the affinity", &seconds);
  if (status == DSG_OK)
    status = finished;
  if (status != DSG_OK)
    goto out_release;
  /* the matrix stays on the device for a product there (spmv_cl_dia_create) */
  status = spmv_cl_dia_keep_device(N, &im->rt, d_values);
  if (status != DSG_OK)
    goto out_release;
  if (sqrt_degree)
    for (int i = 0; i < n; i++)
      sqrt_degree[i] = sdeg[i];
  if (linked)
    *linked = is_linked != 0;

out_release:
  if (status != DSG_OK)
    clFinish(im->rt.queue);
  release(&d_f);
  release(&d_contours);
  release(&d_disc);
  release(&d_spatial);
  release(&d_line);
  release(&d_values);
  release(&d_sdeg);
  release(&d_offsets);
  release(&d_linked);
  free(disc);
  free(spatial);
  free(line);
  free(sdeg);
  if (kernel_seconds)
    *kernel_seconds = seconds;
  return status;
}

/* ---- the link masks ---- */

int spmv_cl_links(spmv_cl_image *im, const spmv_dia *N, float threshold, spmv_links *L)
{
  cl_mem values = spmv_cl_dia_device_values(N, im->rt.ctx);
  cl_mem d_offsets = NULL, d_upper = NULL, d_lower = NULL, d_bits = NULL;
  cl_kernel k = NULL;
  batch b = {0, 0, {NULL}, {NULL}};
  double seconds = 0.0;
  int status, finished;

  memset(L, 0, sizeof(*L));
  if (!values)
    return dsg_error_set(DSG_ERR_INVALID, "the matrix has no copy on %s to find its links in",
                         im->rt.dev.name);
  if (!im->affinity) {
    status = spmv_cl_build(&im->rt, "affinity", "-cl-std=CL1.2", &im->affinity);
    if (status != DSG_OK) {
      im->affinity = NULL;
      return status;
    }
  }
  status = spmv_links_create(L, N);
  if (status != DSG_OK || L->count == 0)
    return status;
  const unsigned long long bits = (unsigned long long)L->count * L->words * sizeof(*L->bits);
  const size_t table = (size_t)L->count * sizeof(int);
  d_offsets = buffer(im, CL_MEM_READ_ONLY, table, L->offsets, "the link offsets", &status);
  d_upper = buffer(im, CL_MEM_READ_ONLY, table, L->upper, "the link diagonals", &status);
  d_lower = buffer(im, CL_MEM_READ_ONLY, table, L->lower, "the link diagonals", &status);
  d_bits = buffer(im, CL_MEM_WRITE_ONLY, bits, NULL, "the links", &status);
  const int rows = N->rows, count = L->count, pitch = (int)N->pitch, words = (int)L->words;
  if (status == DSG_OK)
    status = kernel(im, im->affinity, "affinity_links", &k, 10, sizeof(int), &rows, sizeof(int),
                    &count, sizeof(cl_mem), &d_offsets, sizeof(cl_mem), &d_upper, sizeof(cl_mem),
                    &d_lower, sizeof(cl_mem), &values, sizeof(int), &pitch, sizeof(float),
                    &threshold, sizeof(int), &words, sizeof(cl_mem), &d_bits);
  if (status == DSG_OK)
    status = launch(im, k, "affinity_links", (size_t)count * L->words, 0, 1, &b);
  if (status == DSG_OK)
    status = read_back(im, d_bits, (size_t)bits, L->bits, "the links");
  finished = batch_finish(im, &b, "the links", &seconds);
  if (status == DSG_OK)
    status = finished;
  if (k)
    clReleaseKernel(k);
  release(&d_offsets);
  release(&d_upper);
  release(&d_lower);
  release(&d_bits);
  if (status != DSG_OK)
    spmv_links_free(L);
  return status;
}

/* ---- the edge forest ---- */

static void forest_model_release(spmv_cl_image *im)
{
  release(&im->model.tree);
  release(&im->model.node);
  release(&im->model.leaf);
  release(&im->model.segs);
  im->model.key = NULL;
}

/* F's trees on the device, uploaded unless they are there under F->key already: nodes as
 * (feature | threshold << 16, child), leaves as (segments, patch), the patches' packed labels as
 * they come. The trees are checked as the parser checks them (every child in its own tree after
 * its parent, every leaf in range), so that no descent can leave the arrays or loop. */
static int forest_model_upload(spmv_cl_image *im, const spmv_forest_model *F)
{
  const size_t patch = SPMV_FOREST_OUT * SPMV_FOREST_OUT / 2;
  cl_uint2 *node = NULL, *leaf = NULL;
  uint32_t max_fid = 0;
  int status = DSG_OK;
  if (F->key && F->key == im->model.key)
    return DSG_OK;
  forest_model_release(im);
  /* uploaded by another runtime of the process on this context (dsg_prepare's, a run before) */
  cl_mem kept[SPMV_CL_CACHE_DATA] = {NULL, NULL, NULL, NULL};
  int info[SPMV_CL_CACHE_DATA] = {-1, 0, 0, 0};
  if (F->key && spmv_cl_cache_data_get(im->rt.ctx, F->key, kept, info) &&
      (info[0] != F->ntrees || (uint32_t)info[1] != F->nleaves ||
       (uint32_t)info[3] != F->nnodes)) { /* another model at the same address */
    for (int k = 0; k < SPMV_CL_CACHE_DATA; k++)
      release(&kept[k]);
    info[0] = -1;
  }
  if (F->key && info[0] >= 0 && kept[0]) {
    im->model.tree = kept[0];
    im->model.node = kept[1];
    im->model.leaf = kept[2];
    im->model.segs = kept[3];
    im->model.key = F->key;
    im->model.max_fid = (uint32_t)info[2];
    return DSG_OK;
  }
  if (F->ntrees < 1 || F->ntrees > SPMV_FOREST_MAX_TREES || !F->tree || F->nnodes < 1 || !F->fid ||
      !F->thr || !F->child || F->nleaves < 1 || !F->nsegs || !F->seg_at ||
      (F->nmulti > 0 && !F->segs) || F->tree[0] != 0 || F->tree[F->ntrees] != F->nnodes)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the forest model is incomplete (%d trees, %u nodes, %u leaves)",
                         F->ntrees, F->nnodes, F->nleaves);
  node = malloc((size_t)F->nnodes * sizeof(*node));
  leaf = malloc((size_t)F->nleaves * sizeof(*leaf));
  if (!node || !leaf) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the forest's %u nodes", F->nnodes);
    goto out;
  }
  for (int t = 0; t < F->ntrees && status == DSG_OK; t++) {
    if (F->tree[t + 1] <= F->tree[t]) {
      status = dsg_error_set(DSG_ERR_INVALID, "the forest's tree %d has no nodes", t);
      break;
    }
    for (uint32_t k = F->tree[t]; k < F->tree[t + 1]; k++) {
      const uint32_t c = F->child[k],
                     word = (uint32_t)F->fid[k] | (uint32_t)(uint16_t)F->thr[k] << 16;
      if (c ? c <= k || c + 1 >= F->tree[t + 1] : word >= F->nleaves) {
        status = dsg_error_set(DSG_ERR_INVALID, "the forest's node %u has %s %u out of range", k,
                               c ? "child" : "leaf", c ? c : word);
        break;
      }
      if (c && F->fid[k] > max_fid)
        max_fid = F->fid[k];
      node[k].s[0] = word;
      node[k].s[1] = c;
    }
  }
  for (uint32_t l = 0; l < F->nleaves && status == DSG_OK; l++) {
    const int m = F->nsegs[l];
    if (m < 1 || m > SPMV_FOREST_MAX_SEGS || (m > 1 && F->seg_at[l] >= F->nmulti)) {
      status = dsg_error_set(DSG_ERR_INVALID, "the forest's leaf %u has %d segments at patch %u", l,
                             m, F->seg_at[l]);
      break;
    }
    leaf[l].s[0] = (cl_uint)m;
    leaf[l].s[1] = m > 1 ? F->seg_at[l] : 0;
  }
  if (status != DSG_OK)
    goto out;
  im->model.tree = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(F->ntrees + 1) * 4, F->tree,
                          "the forest's trees", &status);
  im->model.node = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)F->nnodes * sizeof(*node), node,
                          "the forest's nodes", &status);
  im->model.leaf = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)F->nleaves * sizeof(*leaf),
                          leaf, "the forest's leaves", &status);
  im->model.segs =
      buffer(im, CL_MEM_READ_ONLY, F->nmulti ? (unsigned long long)F->nmulti * patch : 1,
             F->nmulti ? F->segs : NULL, "the forest's patches", &status);
  if (status != DSG_OK) {
    forest_model_release(im);
    goto out;
  }
  im->model.key = F->key;
  im->model.max_fid = max_fid;
  if (F->key) {
    const cl_mem keep[SPMV_CL_CACHE_DATA] = {im->model.tree, im->model.node, im->model.leaf,
                                             im->model.segs};
    const int what[SPMV_CL_CACHE_DATA] = {F->ntrees, (int)F->nleaves, (int)max_fid, (int)F->nnodes};
    spmv_cl_cache_data_keep(im->rt.ctx, F->key, keep, what);
  }
out:
  free(node);
  free(leaf);
  return status;
}

/* The grid and the recipe against the image and the model. */
static int check_forest(const spmv_forest_params *p, int width, int height, int channels,
                        const spmv_forest_model *F)
{
  const int P = SPMV_FOREST_PATCH, S = SPMV_FOREST_STRIDE, q = 2 * SPMV_FOREST_SHRINK;
  if (width < 1 || height < 1 || channels < 1 || channels > 4)
    return dsg_error_set(DSG_ERR_INVALID, "the forest's image is %d x %d with %d channels", width,
                         height, channels);
  if (p->pad < 0 || p->pw < P || p->ph < P || p->pw % q || p->ph % q || p->pw < width + p->pad ||
      p->ph < height + p->pad || (long long)p->pw * p->ph > INT_MAX / SPMV_FOREST_CHANNELS ||
      p->rows != (p->ph - P) / S + 1 || p->cols != (p->pw - P) / S + 1)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the forest's grid (%d x %d padded by %d, %d x %d places) does not fit "
                         "a %d x %d image",
                         p->pw, p->ph, p->pad, p->cols, p->rows, width, height);
  const int r[4] = {p->norm_radius, p->reg_radius, p->sim_radius, p->color_radius};
  for (int k = 0; k < 4; k++)
    if (r[k] < 0 || r[k] > 16)
      return dsg_error_set(DSG_ERR_INVALID, "the forest's triangle radius %d is outside [0, 16]",
                           r[k]);
  for (int k = 0; k < 3; k++)
    if (!(p->hi[k] > p->lo[k]))
      return dsg_error_set(DSG_ERR_INVALID, "the forest's colour range %d is [%g, %g]", k, p->lo[k],
                           p->hi[k]);
  if (p->trees_eval < 1 || p->trees_eval > F->ntrees || p->sharpen < 0 ||
      p->sharpen > SPMV_FOREST_SHARPEN_MAX || !(p->gain > 0.0f))
    return dsg_error_set(DSG_ERR_INVALID,
                         "the forest reads %d of its %d trees, sharpens %d rings (0 to %d) with "
                         "gain %g",
                         p->trees_eval, F->ntrees, p->sharpen, SPMV_FOREST_SHARPEN_MAX, p->gain);
  if (!p->linear || !p->feat_a || !p->feat_b || p->nregular < 0 || p->nregular > p->nfeatures)
    return dsg_error_set(DSG_ERR_INVALID, "the forest's %d features (%d regular) lack a table",
                         p->nfeatures, p->nregular);
  /* every feature inside the channels from every place */
  const long long cw = p->pw / SPMV_FOREST_SHRINK, ch = p->ph / SPMV_FOREST_SHRINK,
                  last = (long long)(p->rows - 1) * cw + p->cols - 1,
                  planes = SPMV_FOREST_CHANNELS * cw * ch;
  for (int f = 0; f < p->nfeatures; f++) {
    const long long a = p->feat_a[f], b = f < p->nregular ? 0 : p->feat_b[f];
    if (a < 0 || a + last >= planes || b < 0 || b + last >= planes)
      return dsg_error_set(DSG_ERR_INVALID,
                           "the forest's feature %d reads offset %lld, outside the %lld codes "
                           "from place (%d, %d)",
                           f, a < 0 || a + last >= planes ? a : b, planes, p->rows - 1,
                           p->cols - 1);
  }
  return DSG_OK;
}

/* Kernel `name` of the forest's program over items x dim1 work-items, its `count` arguments as
 * kernel()'s, enqueued into b; nothing when *status is already an error. */
static void forest_run(spmv_cl_image *im, const char *name, size_t items, size_t dim1, batch *b,
                       int *status, int count, ...)
{
  cl_kernel k = NULL;
  va_list ap;
  if (*status != DSG_OK)
    return;
  va_start(ap, count);
  *status = kernel_va(im, im->forest, name, &k, count, ap);
  va_end(ap);
  if (*status == DSG_OK)
    *status = launch(im, k, name, items, 0, dim1, b);
  if (k)
    clReleaseKernel(k);
}

/* The separable triangle of radius r over `planes` planes of w x h: src (from element so) ->
 * tmp (from to) by rows -> dst (from dof) by columns. */
static void forest_triangle(spmv_cl_image *im, cl_mem src, int so, cl_mem tmp, int to, cl_mem dst,
                            int dof, int w, int h, int r, int planes, batch *b, int *status)
{
  const size_t n = (size_t)w * h;
  const int rows = 0, columns = 1;
  forest_run(im, "forest_tri", n, (size_t)planes, b, status, 8, sizeof(cl_mem), &src, sizeof(int),
             &so, sizeof(cl_mem), &tmp, sizeof(int), &to, sizeof(int), &w, sizeof(int), &h,
             sizeof(int), &r, sizeof(int), &rows);
  forest_run(im, "forest_tri", n, (size_t)planes, b, status, 8, sizeof(cl_mem), &tmp, sizeof(int),
             &to, sizeof(cl_mem), &dst, sizeof(int), &dof, sizeof(int), &w, sizeof(int), &h,
             sizeof(int), &r, sizeof(int), &columns);
}

/* The gradient of the 3 planes img (from element io; w x h) into mag (normalised by its
 * triangle mean of radius nr, made in tmp's first two planes of w h) and ori. */
static void forest_gradient(spmv_cl_image *im, cl_mem img, int io, int w, int h, int nr, cl_mem mag,
                            cl_mem ori, cl_mem tmp, batch *b, int *status)
{
  const int n = w * h;
  forest_run(im, "forest_gradient", (size_t)n, 1, b, status, 6, sizeof(cl_mem), &img, sizeof(int),
             &io, sizeof(int), &w, sizeof(int), &h, sizeof(cl_mem), &mag, sizeof(cl_mem), &ori);
  forest_triangle(im, mag, 0, tmp, 0, tmp, n, w, h, nr, 1, b, status);
  forest_run(im, "forest_normalise", (size_t)n, 1, b, status, 4, sizeof(cl_mem), &mag,
             sizeof(cl_mem), &tmp, sizeof(int), &n, sizeof(int), &n);
}

/* The 4-orientation histogram of (mag, ori) (w x h) in bin x bin cells into hist's planes from
 * element ho. */
static void forest_hist(spmv_cl_image *im, cl_mem mag, cl_mem ori, int w, int h, int bin,
                        cl_mem hist, int ho, batch *b, int *status)
{
  forest_run(im, "forest_hist", (size_t)(w / bin) * (h / bin), 1, b, status, 7, sizeof(cl_mem),
             &mag, sizeof(cl_mem), &ori, sizeof(int), &w, sizeof(int), &h, sizeof(int), &bin,
             sizeof(cl_mem), &hist, sizeof(int), &ho);
}

/* The means of 2 x 2 blocks of `planes` planes of w x h. */
static void forest_halve(spmv_cl_image *im, cl_mem src, int so, cl_mem dst, int dof, int w, int h,
                         int planes, batch *b, int *status)
{
  forest_run(im, "forest_halve", (size_t)(w / 2) * (h / 2), (size_t)planes, b, status, 6,
             sizeof(cl_mem), &src, sizeof(int), &so, sizeof(cl_mem), &dst, sizeof(int), &dof,
             sizeof(int), &w, sizeof(int), &h);
}

/* A copy of `bytes` from src (at byte so) to dst (at byte d) in the queue. */
static void forest_copy(spmv_cl_image *im, cl_mem src, size_t so, cl_mem dst, size_t d,
                        size_t bytes, int *status)
{
  if (*status != DSG_OK)
    return;
  const cl_int err = clEnqueueCopyBuffer(im->rt.queue, src, dst, so, d, bytes, 0, NULL, NULL);
  if (err != CL_SUCCESS)
    *status = spmv_cl_fail(err, "copying the forest's channels", im->rt.dev.name);
}
/* What every forest call starts with for a width x height image of `channels` bytes a pixel and
 * its grid p: the checks, the model on the device, the program built. */
static int forest_ready(spmv_cl_image *im, const spmv_forest_model *F, const spmv_forest_params *p,
                        int width, int height, int channels)
{
  int status = check_forest(p, width, height, channels, F);
  if (status == DSG_OK)
    status = forest_model_upload(im, F);
  if (status == DSG_OK && im->model.max_fid >= (uint32_t)p->nfeatures)
    status = dsg_error_set(DSG_ERR_INVALID, "the forest reads feature %u of %d", im->model.max_fid,
                           p->nfeatures);
  if (status == DSG_OK && !im->forest) {
    char options[160];
    snprintf(options, sizeof(options),
             "-cl-std=CL1.2 -DPATCH=%d -DOUT=%d -DSTRIDE=%d -DNCHAN=%d -DMAX_SEGS=%d "
             "-DSHARPEN_MAX=%d",
             SPMV_FOREST_PATCH, SPMV_FOREST_OUT, SPMV_FOREST_STRIDE, SPMV_FOREST_CHANNELS,
             SPMV_FOREST_MAX_SEGS, SPMV_FOREST_SHARPEN_MAX);
    status = spmv_cl_build(&im->rt, "forest", options, &im->forest);
    if (status != DSG_OK)
      im->forest = NULL;
  }
  return status;
}

/* A scale's own buffers: the caller releases them (scale_release) once its batch has finished. */
typedef struct forest_buffers {
  cl_mem full, color, mag, ori, tmp, chn, ctmp, smooth, reg, sim, linear, scale, fa, fb, acc;
} forest_buffers;

static void scale_release(forest_buffers *s)
{
  cl_mem *all[] = {&s->full,   &s->color, &s->mag,    &s->ori, &s->tmp,
                   &s->chn,    &s->ctmp,  &s->smooth, &s->reg, &s->sim,
                   &s->linear, &s->scale, &s->fa,     &s->fb,  &s->acc};
  for (size_t k = 0; k < sizeof(all) / sizeof(all[0]); k++)
    release(all[k]);
}

/* One scale (forest_ready done): the map of the width x height image d_pix into d_E's first
 * width height floats (d_E holds twice that: the rest is scratch), enqueued into b with its
 * buffers in *bufs (zeroed by the caller); the probe's codes read back when asked for. */
static int forest_scale(spmv_cl_image *im, const spmv_forest_model *F, const spmv_forest_params *p,
                        cl_mem d_pix, int channels, int width, int height, cl_mem d_E,
                        const spmv_forest_probe *probe, batch *b, forest_buffers *bufs)
{
  enum { NC = SPMV_FOREST_CHANNELS, G = SPMV_FOREST_OUT, S = SPMV_FOREST_STRIDE };
  int status = DSG_OK;
  const int pw = p->pw, ph = p->ph, cw = pw / SPMV_FOREST_SHRINK, ch = ph / SPMV_FOREST_SHRINK;
  const int pn = pw * ph, cn = cw * ch, n = width * height, pad = p->pad;
  const int aw = (p->cols - 1) * S + G, ah = (p->rows - 1) * S + G;
  const int want_color = p->sharpen > 0, te = p->trees_eval, ntrees = F->ntrees;
  const int off = pad - (SPMV_FOREST_PATCH - G) / 2, sharpen = p->sharpen;
  const unsigned long long fl = sizeof(float);
  const cl_float4 lo = {{p->lo[0], p->lo[1], p->lo[2], 0.0f}},
                  span = {{p->hi[0] - p->lo[0], p->hi[1] - p->lo[1], p->hi[2] - p->lo[2], 1.0f}};
  if (off < 0 || off + height > ah || off + width > aw)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the forest's padding %d leaves the image's pixels "
                         "without votes",
                         pad);
  cl_mem d_full, d_color, d_mag, d_ori, d_tmp, d_chn, d_ctmp, d_smooth, d_reg, d_sim, d_linear,
      d_scale, d_fa, d_fb, d_acc;
  bufs->full = d_full =
      buffer(im, CL_MEM_READ_WRITE, 3 * fl * pn, NULL, "the forest's colours", &status);
  bufs->color = d_color = buffer(im, CL_MEM_READ_WRITE, want_color ? 3 * fl * pn : 1, NULL,
                                 "the forest's sharpening colours", &status);
  bufs->mag = d_mag =
      buffer(im, CL_MEM_READ_WRITE, fl * pn, NULL, "the forest's gradient", &status);
  bufs->ori = d_ori =
      buffer(im, CL_MEM_READ_WRITE, fl * pn, NULL, "the forest's orientations", &status);
  bufs->tmp = d_tmp =
      buffer(im, CL_MEM_READ_WRITE, 4 * fl * pn, NULL, "the forest's scratch", &status);
  bufs->chn = d_chn =
      buffer(im, CL_MEM_READ_WRITE, NC * fl * cn, NULL, "the forest's channels", &status);
  bufs->ctmp = d_ctmp =
      buffer(im, CL_MEM_READ_WRITE, NC * fl * cn, NULL, "the forest's scratch", &status);
  bufs->smooth = d_smooth =
      buffer(im, CL_MEM_READ_WRITE, NC * fl * cn, NULL, "the forest's channels", &status);
  bufs->reg = d_reg =
      buffer(im, CL_MEM_READ_WRITE, (unsigned long long)NC * cn,
             probe && probe->reg_in ? probe->reg_in : NULL, "the forest's codes", &status);
  bufs->sim = d_sim =
      buffer(im, CL_MEM_READ_WRITE, (unsigned long long)NC * cn,
             probe && probe->sim_in ? probe->sim_in : NULL, "the forest's codes", &status);
  bufs->linear = d_linear =
      buffer(im, CL_MEM_READ_ONLY, 256 * fl, p->linear, "the linear table", &status);
  bufs->scale = d_scale =
      buffer(im, CL_MEM_READ_ONLY, NC * fl, p->scale, "the channels' scales", &status);
  bufs->fa = d_fa = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)p->nfeatures * sizeof(int),
                           p->feat_a, "the forest's features", &status);
  bufs->fb = d_fb = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)p->nfeatures * sizeof(int),
                           p->feat_b, "the forest's features", &status);
  bufs->acc = d_acc = buffer(im, CL_MEM_READ_WRITE, (unsigned long long)aw * ah * sizeof(int), NULL,
                             "the forest's votes", &status);
  if (status == DSG_OK) {
    const int zero = 0;
    status = fill(im, d_acc, &zero, sizeof(zero), (size_t)aw * ah * sizeof(int),
                  "zeroing the forest's votes");
  }
  if (status != DSG_OK)
    goto out;

  /* the channels (app_forest_channels) */
  forest_run(im, "forest_lab_pad", (size_t)pn, 1, b, &status, 13, sizeof(cl_mem), &d_pix,
             sizeof(int), &channels, sizeof(int), &width, sizeof(int), &height, sizeof(int), &pad,
             sizeof(int), &pw, sizeof(int), &ph, sizeof(cl_mem), &d_linear, sizeof(cl_float4), &lo,
             sizeof(cl_float4), &span, sizeof(cl_mem), &d_full, sizeof(int), &want_color,
             sizeof(cl_mem), &d_color);
  if (want_color)
    forest_triangle(im, d_color, 0, d_tmp, 0, d_color, 0, pw, ph, p->color_radius, 3, b, &status);
  if (!probe || !probe->reg_in) {
    const int q = SPMV_FOREST_SHRINK; /* the full resolution's histogram cells */
    /* the colours halved: channels 0 .. 2 */
    forest_halve(im, d_full, 0, d_chn, 0, pw, ph, 3, b, &status);
    /* the full-resolution gradient: its magnitude halved (3), its histogram in 2 x 2 cells
     * (4 .. 7) */
    forest_gradient(im, d_full, 0, pw, ph, p->norm_radius, d_mag, d_ori, d_tmp, b, &status);
    forest_halve(im, d_mag, 0, d_chn, 3 * cn, pw, ph, 1, b, &status);
    forest_hist(im, d_mag, d_ori, pw, ph, q, d_chn, 4 * cn, b, &status);
    /* and at half resolution, from channels 0 .. 2: magnitude (8) and histogram (9 .. 12) */
    forest_gradient(im, d_chn, 0, cw, ch, p->norm_radius, d_mag, d_ori, d_tmp, b, &status);
    forest_copy(im, d_mag, 0, d_chn, 8 * (size_t)cn * sizeof(float), (size_t)cn * sizeof(float),
                &status);
    forest_hist(im, d_mag, d_ori, cw, ch, 1, d_chn, 9 * cn, b, &status);
    /* the regular and the self-similarity channels, coded */
    const int radius[2] = {p->reg_radius, p->sim_radius};
    cl_mem code[2] = {d_reg, d_sim};
    for (int k = 0; k < 2; k++) {
      forest_triangle(im, d_chn, 0, d_ctmp, 0, d_smooth, 0, cw, ch, radius[k], NC, b, &status);
      forest_run(im, "forest_quantise", (size_t)cn, NC, b, &status, 4, sizeof(cl_mem), &d_smooth,
                 sizeof(int), &cn, sizeof(cl_mem), &d_scale, sizeof(cl_mem), &code[k]);
    }
    if (status == DSG_OK && probe)
      status = read_back(im, d_reg, (size_t)NC * cn, probe->reg_out, "the forest's codes");
    if (status == DSG_OK && probe)
      status = read_back(im, d_sim, (size_t)NC * cn, probe->sim_out, "the forest's codes");
  }
  /* the trees, their leaves' votes and the map */
  {
    const int rows = p->rows, cols = p->cols, nreg = p->nregular;
    const float norm = p->gain / (float)(te * (G / S) * (G / S));
    forest_run(im, "forest_detect", (size_t)rows * cols * te, 1, b, &status, 20, sizeof(cl_mem),
               &d_reg, sizeof(cl_mem), &d_sim, sizeof(int), &cw, sizeof(int), &rows, sizeof(int),
               &cols, sizeof(int), &te, sizeof(int), &ntrees, sizeof(cl_mem), &im->model.tree,
               sizeof(cl_mem), &im->model.node, sizeof(cl_mem), &im->model.leaf, sizeof(cl_mem),
               &im->model.segs, sizeof(cl_mem), &d_fa, sizeof(cl_mem), &d_fb, sizeof(int), &nreg,
               sizeof(cl_mem), &d_color, sizeof(int), &pw, sizeof(int), &pn, sizeof(int), &sharpen,
               sizeof(cl_mem), &d_acc, sizeof(int), &aw);
    forest_run(im, "forest_map", (size_t)n, 1, b, &status, 7, sizeof(cl_mem), &d_acc, sizeof(int),
               &aw, sizeof(int), &off, sizeof(int), &width, sizeof(int), &height, sizeof(float),
               &norm, sizeof(cl_mem), &d_E);
    forest_triangle(im, d_E, 0, d_E, n, d_E, 0, width, height, 1, 1, b, &status);
  }
out:
  return status;
}

int spmv_cl_forest(spmv_cl_image *im, const spmv_forest_model *F, const spmv_forest_params *p,
                   const unsigned char *pixels, int channels, int width, int height, float *E,
                   const spmv_forest_probe *probe, double *kernel_seconds)
{
  cl_mem d_pix = NULL, d_E = NULL;
  forest_buffers bufs = {NULL};
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  double seconds = 0.0;
  int status;

  if (kernel_seconds)
    *kernel_seconds = 0.0;
  if (!F || !p || !pixels || !E)
    return dsg_error_set(DSG_ERR_INVALID, "the forest needs its model, grid, pixels and map");
  status = forest_ready(im, F, p, width, height, channels);
  if (status == DSG_OK && probe && (!probe->reg_in != !probe->sim_in))
    status = dsg_error_set(DSG_ERR_INVALID, "the forest's probe gives one kind of channel only");
  if (status != DSG_OK)
    return status;
  const size_t n = (size_t)width * height;
  d_pix =
      buffer(im, CL_MEM_READ_ONLY, (unsigned long long)n * channels, pixels, "the pixels", &status);
  d_E = buffer(im, CL_MEM_READ_WRITE, 2ull * sizeof(float) * n, NULL, "the forest's map", &status);
  if (status == DSG_OK)
    status = forest_scale(im, F, p, d_pix, channels, width, height, d_E, probe, &b, &bufs);
  if (status == DSG_OK)
    status = read_back(im, d_E, n * sizeof(float), E, "the forest's map");
  {
    const int finished = batch_finish(im, &b, "the forest", &seconds);
    if (status == DSG_OK)
      status = finished;
  }
  scale_release(&bufs);
  release(&d_pix);
  release(&d_E);
  if (kernel_seconds)
    *kernel_seconds = seconds;
  return status;
}

/* The checks of spmv_cl_forest_contours' thinning. */
static int check_thinning(const spmv_forest_thinning *t)
{
  if (t->norient < 1 || t->norient > SPMV_CONTOUR_MAX_ORIENT || t->reach < 1 ||
      t->reach > SPMV_CONTOUR_MAX_REACH || t->radius < 0 || t->radius > 16 || t->border < 0 ||
      !(t->top > 0.0f))
    return dsg_error_set(DSG_ERR_INVALID,
                         "the forest's thinning (%d orientations, reach %d, radius %d, border %d, "
                         "top %g) is out of range",
                         t->norient, t->reach, t->radius, t->border, (double)t->top);
  return DSG_OK;
}

int spmv_cl_forest_contours(spmv_cl_image *im, const spmv_forest_model *F,
                            const spmv_forest_params *p, int scales, const unsigned char *pixels,
                            const unsigned char *half, int channels, int width, int height,
                            const spmv_forest_thinning *t, float *strength, float *soft,
                            double *kernel_seconds)
{
  cl_mem d_pix = NULL, d_half = NULL, d_twice = NULL, d_E = NULL, d_Eh = NULL, d_Et = NULL;
  cl_mem d_s = NULL, d_or = NULL, d_normal = NULL, d_strength = NULL;
  forest_buffers bufs[3] = {{NULL}, {NULL}, {NULL}};
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  double seconds = 0.0;
  const int hw = width / 2, hh = height / 2, with_half = scales == 3 && hw > 0 && hh > 0;
  const size_t n = (size_t)width * height, fl = sizeof(float);
  int status = DSG_OK;

  if (kernel_seconds)
    *kernel_seconds = 0.0;
  if (!F || !p || !pixels || (strength && !t) || (!strength && !soft) ||
      (scales != 1 && scales != 3) || (with_half && !half))
    return dsg_error_set(DSG_ERR_INVALID,
                         "the forest's contours need the model, 1 or 3 scales' grids, the pixels "
                         "(and the half image), and the thinning and a strength or a map");
  status = strength ? check_thinning(t) : DSG_OK;
  if (status == DSG_OK)
    status = forest_ready(im, F, &p[0], width, height, channels);
  if (status == DSG_OK && with_half)
    status = forest_ready(im, F, &p[1], hw, hh, channels);
  if (status == DSG_OK && scales == 3 && (width > INT_MAX / 2 || height > INT_MAX / 2))
    status =
        dsg_error_set(DSG_ERR_LIMIT, "the forest cannot double a %d x %d image", width, height);
  if (status == DSG_OK && scales == 3)
    status = forest_ready(im, F, &p[2], 2 * width, 2 * height, channels);
  if (status != DSG_OK)
    return status;

  d_pix =
      buffer(im, CL_MEM_READ_ONLY, (unsigned long long)n * channels, pixels, "the pixels", &status);
  d_E = buffer(im, CL_MEM_READ_WRITE, 2ull * fl * n, NULL, "the forest's map", &status);
  if (status == DSG_OK)
    status = forest_scale(im, F, &p[0], d_pix, channels, width, height, d_E, NULL, &b, &bufs[0]);
  if (status == DSG_OK && with_half) {
    const size_t hn = (size_t)hw * hh;
    d_half = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)hn * channels, half, "the half image",
                    &status);
    d_Eh = buffer(im, CL_MEM_READ_WRITE, 2ull * fl * hn, NULL, "the forest's map", &status);
    if (status == DSG_OK)
      status = forest_scale(im, F, &p[1], d_half, channels, hw, hh, d_Eh, NULL, &b, &bufs[1]);
  }
  if (status == DSG_OK && scales == 3) {
    const int W = 2 * width, H = 2 * height;
    d_twice =
        buffer(im, CL_MEM_READ_WRITE, 4ull * n * channels, NULL, "the doubled image", &status);
    d_Et = buffer(im, CL_MEM_READ_WRITE, 8ull * fl * n, NULL, "the forest's map", &status);
    forest_run(im, "forest_double", 4 * n, 1, &b, &status, 5, sizeof(cl_mem), &d_pix, sizeof(int),
               &channels, sizeof(int), &width, sizeof(int), &height, sizeof(cl_mem), &d_twice);
    if (status == DSG_OK)
      status = forest_scale(im, F, &p[2], d_twice, channels, W, H, d_Et, NULL, &b, &bufs[2]);
    cl_mem d_h = with_half ? d_Eh : d_Et; /* not read without the half scale */
    const int qw = with_half ? hw : 0, qh = with_half ? hh : 0;
    forest_run(im, "forest_combine", n, 1, &b, &status, 7, sizeof(cl_mem), &d_E, sizeof(int),
               &width, sizeof(int), &height, sizeof(cl_mem), &d_h, sizeof(int), &qw, sizeof(int),
               &qh, sizeof(cl_mem), &d_Et);
  }
  /* the thinning: the direction from the smoothed map, the suppression across it, the taper */
  if (strength) {
    cl_float4 normal[2 * SPMV_CONTOUR_MAX_REACH * SPMV_CONTOUR_MAX_ORIENT];
    const float step = (float)(M_PI / t->norient);
    thin_normals(t->norient, t->reach, normal);
    d_s = buffer(im, CL_MEM_READ_WRITE, 2ull * fl * n, NULL, "the forest's smoothed map", &status);
    d_or = buffer(im, CL_MEM_READ_WRITE, n, NULL, "the forest's orientations", &status);
    d_normal =
        buffer(im, CL_MEM_READ_ONLY, sizeof(normal), normal, "the thinning's normals", &status);
    d_strength = buffer(im, CL_MEM_READ_WRITE, fl * n, NULL, "the forest's strength", &status);
    forest_triangle(im, d_E, 0, d_s, (int)n, d_s, 0, width, height, t->radius, 1, &b, &status);
    forest_run(im, "forest_orient", n, 1, &b, &status, 6, sizeof(cl_mem), &d_s, sizeof(int), &width,
               sizeof(int), &height, sizeof(int), &t->norient, sizeof(float), &step, sizeof(cl_mem),
               &d_or);
    forest_run(im, "forest_thin", n, 1, &b, &status, 10, sizeof(cl_mem), &d_E, sizeof(cl_mem),
               &d_or, sizeof(int), &width, sizeof(int), &height, sizeof(cl_mem), &d_normal,
               sizeof(int), &t->norient, sizeof(int), &t->reach, sizeof(int), &t->border,
               sizeof(float), &t->top, sizeof(cl_mem), &d_strength);
  }
  if (status == DSG_OK)
    status = read_back(im, d_strength, n * fl, strength, "the forest's strength");
  if (status == DSG_OK)
    status = read_back(im, d_E, n * fl, soft, "the forest's map");
  {
    const int finished = batch_finish(im, &b, "the forest's contours", &seconds);
    if (status == DSG_OK)
      status = finished;
  }
  for (int k = 0; k < 3; k++)
    scale_release(&bufs[k]);
  release(&d_pix);
  release(&d_half);
  release(&d_twice);
  release(&d_E);
  release(&d_Eh);
  release(&d_Et);
  release(&d_s);
  release(&d_or);
  release(&d_normal);
  release(&d_strength);
  if (kernel_seconds)
    *kernel_seconds = seconds;
  return status;
}

/* ---- the boundary network ---- */

static int check_net(const spmv_cl_image *im, const spmv_net *net, int width, int height)
{
  if (!net || net->inputs < 1 || net->inputs > SPMV_NET_MAX_INPUTS || net->channels < 1 ||
      net->channels > SPMV_NET_MAX_CHANNELS || net->layers < 1 ||
      net->layers > SPMV_NET_MAX_LAYERS || !net->dilation || !net->weight || !net->bias ||
      !net->out_weight)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the network's shape is out of range: %d inputs (1 to %d), %d channels "
                         "(1 to %d), %d layers (1 to %d), or a table missing",
                         net ? net->inputs : 0, SPMV_NET_MAX_INPUTS, net ? net->channels : 0,
                         SPMV_NET_MAX_CHANNELS, net ? net->layers : 0, SPMV_NET_MAX_LAYERS);
  for (int l = 0; l < net->layers; l++)
    if (net->dilation[l] < 1 || !net->weight[l] || !net->bias[l])
      return dsg_error_set(DSG_ERR_INVALID,
                           "the network's layer %d has dilation %d (>= 1 needed) or no weights", l,
                           net->dilation[l]);
  const unsigned long long layer = (unsigned long long)net->channels *
                                   (net->inputs > net->channels ? net->inputs : net->channels) * 9 *
                                   sizeof(float);
  if (layer > im->max_constant)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "the network's layer of %llu bytes of weights is over %s's constant "
                         "buffer of %llu bytes",
                         layer, im->rt.dev.name, im->max_constant);
  if (width < 1 || height < 1 || (unsigned long long)width * height > INT_MAX / 2)
    return dsg_error_set(DSG_ERR_INVALID, "the network's image of %d x %d pixels is out of range",
                         width, height);
  return DSG_OK;
}

int spmv_cl_net(spmv_cl_image *im, const spmv_net *net, const float *x, int width, int height,
                float *M, double *kernel_seconds)
{
  cl_mem d_x = NULL, d_a = NULL, d_b = NULL, d_m = NULL, d_out = NULL;
  cl_mem d_w[SPMV_NET_MAX_LAYERS] = {NULL}, d_bias[SPMV_NET_MAX_LAYERS] = {NULL};
  cl_kernel k[SPMV_NET_MAX_LAYERS + 1] = {NULL};
  batch b = {kernel_seconds != NULL, 0, {NULL}, {NULL}};
  double seconds = 0.0;
  int status = check_net(im, net, width, height), finished;

  if (status != DSG_OK)
    return status;
  if (!im->net || im->net_channels != net->channels) {
    char options[64];
    if (im->net)
      clReleaseProgram(im->net);
    im->net = NULL;
    snprintf(options, sizeof(options), "-cl-std=CL1.2 -DNET_CHANNELS=%d", net->channels);
    status = spmv_cl_build(&im->rt, "net", options, &im->net);
    if (status != DSG_OK) {
      im->net = NULL;
      return status;
    }
    im->net_channels = net->channels;
  }
  const int n = width * height, nc = net->channels, inputs = net->inputs;
  const unsigned long long plane = (unsigned long long)n * sizeof(float);
  d_x = buffer(im, CL_MEM_READ_ONLY, plane * inputs, x, "the network's input", &status);
  d_a = buffer(im, CL_MEM_READ_WRITE, plane * nc, NULL, "the network's channels", &status);
  d_b = buffer(im, CL_MEM_READ_WRITE, plane * nc, NULL, "the network's channels", &status);
  d_m = buffer(im, CL_MEM_WRITE_ONLY, plane, NULL, "the network's map", &status);
  d_out = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)(nc + inputs) * sizeof(float),
                 net->out_weight, "the network's output weights", &status);
  for (int l = 0; l < net->layers; l++) {
    const int cin = l ? nc : inputs;
    d_w[l] = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)nc * cin * 9 * sizeof(float),
                    net->weight[l], "the network's weights", &status);
    d_bias[l] = buffer(im, CL_MEM_READ_ONLY, (unsigned long long)nc * sizeof(float), net->bias[l],
                       "the network's biases", &status);
  }
  cl_mem in = d_x;
  for (int l = 0; l < net->layers && status == DSG_OK; l++) {
    const int cin = l ? nc : inputs, d = net->dilation[l];
    cl_mem out = l % 2 ? d_b : d_a;
    status = kernel(im, im->net, "net_layer", &k[l], 8, sizeof(int), &width, sizeof(int), &height,
                    sizeof(int), &cin, sizeof(int), &d, sizeof(cl_mem), &in, sizeof(cl_mem),
                    &d_w[l], sizeof(cl_mem), &d_bias[l], sizeof(cl_mem), &out);
    if (status == DSG_OK)
      status = launch(im, k[l], "net_layer", (size_t)width, 0, (size_t)height, &b);
    in = out;
  }
  const int L = net->layers;
  const float ob = net->out_bias;
  if (status == DSG_OK)
    status = kernel(im, im->net, "net_out", &k[L], 7, sizeof(int), &n, sizeof(int), &inputs,
                    sizeof(cl_mem), &in, sizeof(cl_mem), &d_x, sizeof(cl_mem), &d_out,
                    sizeof(float), &ob, sizeof(cl_mem), &d_m);
  if (status == DSG_OK)
    status = launch(im, k[L], "net_out", (size_t)n, 0, 1, &b);
  if (status == DSG_OK)
    status = read_back(im, d_m, (size_t)plane, M, "the network's map");
  finished = batch_finish(im, &b, "the boundary network", &seconds);
  if (status == DSG_OK)
    status = finished;
  if (kernel_seconds)
    *kernel_seconds = seconds;
  for (int l = 0; l <= SPMV_NET_MAX_LAYERS && l <= net->layers; l++)
    if (k[l])
      clReleaseKernel(k[l]);
  for (int l = 0; l < net->layers; l++) {
    release(&d_w[l]);
    release(&d_bias[l]);
  }
  release(&d_x);
  release(&d_a);
  release(&d_b);
  release(&d_m);
  release(&d_out);
  return status;
}
