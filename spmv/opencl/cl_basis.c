/* The OpenCL Lanczos basis: V, w and the coefficient log live in device memory; a Lanczos step
 * is a queue of kernels (kernels/lanczos.cl) with no host synchronisation; the host reads the
 * coefficients once per restart. Every kernel is timed with events, read at the sync points.
 * The product is the matvec's DIA kernel (cl_dia.h), an object of the basis's own, bound by
 * cl_dia's binder with x a column of the basis (or the DIA's image) and y = w. */
#include "cl_basis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASIS_LOCAL 256
#define BASIS_TILE 8
#define BASIS_DENSE_KNOWN 8 /* up to this many known vectors live as dense columns before V */
#define BASIS_HMAX 256      /* coefficients a work-group sums into local memory at a time */
#define BASIS_GROUPS 8      /* work-groups of the row-parallel kernels per compute unit */
#define BASIS_ROW_GROUPS 1  /* row groups of V^T w per compute unit */
#define BASIS_STAGE ((size_t)1 << 21)      /* floats per pinned staging buffer (8 MiB) */
#define BASIS_COPY_BLOCK ((size_t)1 << 16) /* floats per thread's memcpy */

enum { K_MATVEC, K_PROJECT, K_ORTH, K_NORMALIZE, K_RESTART, K_TRANSFER, K_KINDS };

typedef struct cl_basis {
  const spmv_cl_runtime *rt; /* the matvec's device, context and queue */
  const spmv_cl_dia *dia;    /* the matvec's matrix and DIA kernel */
  cl_kernel product, gemvt, gemvn, norm2, scale, kdot, kapply, rotate;
  cl_mem all, V, tmp, w, part, wpart, coef, Y, label, value, flag;
  cl_mem *col; /* sub-buffers: column i of V (the DIA kernel's x) */
  int kc;      /* known vectors held as dense columns of `all` before V (fused projection) */
  int stride;  /* doubles per step in the coefficient log: kc + m + 2 */
  size_t ld;   /* floats per column: >= n, >= the image's size, base-address aligned */
  size_t local;
  size_t groups;  /* work-groups of the row-parallel kernels; partials of |w|^2, known dots */
  size_t tgroups; /* row groups of lz_gemvt (each takes every column tile): partials of V^T w */
  int ycap;       /* doubles Y can hold */
  double *yhost;  /* the host copy of the last restart matrix, written without waiting: the
                   * caller's Y may be gone once the call returns */
  cl_event yev;   /* that write (NULL: none pending) */
  cl_event *ev;
  int *ev_kind;
  int nev, evcap;
} cl_basis;

static void drain_events(spmv_basis *b)
{
  cl_basis *c = b->impl;
  double *slot[K_KINDS] = {&b->timing.matvec_s,    &b->timing.project_s, &b->timing.orth_s,
                           &b->timing.normalize_s, &b->timing.restart_s, &b->timing.transfer_s};
  for (int i = 0; i < c->nev; i++) {
    *slot[c->ev_kind[i]] += spmv_cl_event_seconds(c->ev[i]);
    clReleaseEvent(c->ev[i]);
  }
  c->nev = 0;
}

/* Keeps the event for timing; returns a slot for the next one. */
static cl_event *track(spmv_basis *b, int kind)
{
  cl_basis *c = b->impl;
  if (c->nev == c->evcap) {
    clFinish(c->rt->queue); /* a long queue without a sync point: time what is done */
    drain_events(b);
  }
  c->ev_kind[c->nev] = kind;
  return &c->ev[c->nev++];
}

static void untrack_failed(cl_basis *c) { c->nev--; }

static int launch(spmv_basis *b, cl_kernel k, size_t global, size_t local, int kind,
                  const char *what)
{
  cl_basis *c = b->impl;
  cl_event *ev = track(b, kind);
  cl_int err = clEnqueueNDRangeKernel(c->rt->queue, k, 1, NULL, &global, &local, 0, NULL, ev);
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, what, c->rt->dev.name);
  }
  b->timing.launches++;
  return DSG_OK;
}

#define ARG(k, i, v) clSetKernelArg(k, i, sizeof(v), &(v))

/* w -= sum_c (v_c . w) v_c */
static int project(spmv_basis *b)
{
  cl_basis *c = b->impl;
  const int n = b->n, nk = b->known.count;
  int status = DSG_OK;
  if (nk <= 0 || c->kc > 0)
    return DSG_OK; /* none, or folded into the Gram-Schmidt passes */
  for (int c0 = 0; c0 < nk && status == DSG_OK; c0 += BASIS_TILE) {
    cl_int err = ARG(c->kdot, 0, c->label) | ARG(c->kdot, 1, c->value) | ARG(c->kdot, 2, n) |
                 ARG(c->kdot, 3, nk) | ARG(c->kdot, 4, c0) | ARG(c->kdot, 5, c->w) |
                 ARG(c->kdot, 6, c->part);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "setting lz_known_dot's arguments", c->rt->dev.name);
    status = launch(b, c->kdot, c->groups * c->local, c->local, K_PROJECT, "lz_known_dot");
  }
  if (status == DSG_OK) {
    const int groups = (int)c->groups;
    cl_int err = ARG(c->kapply, 0, c->label) | ARG(c->kapply, 1, c->value) | ARG(c->kapply, 2, n) |
                 ARG(c->kapply, 3, nk) | ARG(c->kapply, 4, c->part) | ARG(c->kapply, 5, groups) |
                 ARG(c->kapply, 6, c->w);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "setting lz_known_apply's arguments", c->rt->dev.name);
    status = launch(b, c->kapply, c->groups * c->local, c->local, K_PROJECT, "lz_known_apply");
  }
  return status;
}

/* Classical Gram-Schmidt of w against V[:, 0..nc) with a DGKS test: the second pass runs (on
 * the device, without the host) only when the first one cancelled more than half of |w|^2.
 * Coefficients go into the log at coef_off (-1: not logged). A pass is two launches: lz_gemvt
 * leaves partial sums of V^T w, lz_gemvn adds them up and updates w. When fused, the updates
 * leave the |w|^2 partials for normalize(). */
static int cgs2(spmv_basis *b, int nc, int coef_off, int fuse)
{
  cl_basis *c = b->impl;
  const int n = b->n, ld = (int)c->ld, tgroups = (int)c->tgroups;
  int status = DSG_OK;
  nc += c->kc; /* the dense known columns come first; their coefficients land before V's */
  const size_t tiles = ((size_t)nc + BASIS_TILE) / BASIS_TILE; /* columns 0..nc: nc is w . w */
  for (int pass = 1; pass <= 2 && nc > 0 && status == DSG_OK; pass++) {
    const int off = coef_off < 0 ? 0 : coef_off, mode = coef_off < 0 ? 0 : pass;
    cl_int err = ARG(c->gemvt, 0, c->all) | ARG(c->gemvt, 1, ld) | ARG(c->gemvt, 2, n) |
                 ARG(c->gemvt, 3, nc) | ARG(c->gemvt, 4, c->w) | ARG(c->gemvt, 5, c->part) |
                 ARG(c->gemvt, 6, pass) | ARG(c->gemvt, 7, c->flag);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "setting lz_gemvt's arguments", c->rt->dev.name);
    status =
        launch(b, c->gemvt, c->tgroups * tiles * c->local, c->local, K_ORTH, "lz_gemvt (V^T w)");
    if (status != DSG_OK)
      break;
    err = ARG(c->gemvn, 0, c->all) | ARG(c->gemvn, 1, ld) | ARG(c->gemvn, 2, n) |
          ARG(c->gemvn, 3, nc) | ARG(c->gemvn, 4, c->part) | ARG(c->gemvn, 5, tgroups) |
          ARG(c->gemvn, 6, c->w) | ARG(c->gemvn, 7, c->coef) | ARG(c->gemvn, 8, off) |
          ARG(c->gemvn, 9, mode) | ARG(c->gemvn, 10, fuse) | ARG(c->gemvn, 11, c->wpart) |
          ARG(c->gemvn, 12, pass) | ARG(c->gemvn, 13, c->flag);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "setting lz_gemvn's arguments", c->rt->dev.name);
    status = launch(b, c->gemvn, c->groups * c->local, c->local, K_ORTH, "lz_gemvn (w - V h)");
  }
  return status;
}

/* beta = |w| into the log (coef_off), then V[:, dst] = w / beta. `have_partials`: the fused
 * update already left the |w|^2 partials in wpart. */
static int normalize(spmv_basis *b, int coef_off, int dst, int have_partials)
{
  cl_basis *c = b->impl;
  const int n = b->n, groups = (int)c->groups;
  int status = DSG_OK;
  cl_int err;
  if (!have_partials) {
    err = ARG(c->norm2, 0, c->w) | ARG(c->norm2, 1, n) | ARG(c->norm2, 2, c->wpart);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "setting lz_norm2's arguments", c->rt->dev.name);
    status = launch(b, c->norm2, c->groups * c->local, c->local, K_NORMALIZE, "lz_norm2");
  }
  if (status != DSG_OK)
    return status;
  err = ARG(c->scale, 0, c->w) | ARG(c->scale, 1, n) | ARG(c->scale, 2, c->wpart) |
        ARG(c->scale, 3, groups) | ARG(c->scale, 4, c->coef) | ARG(c->scale, 5, coef_off) |
        ARG(c->scale, 6, c->col[dst]);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting lz_scale's arguments", c->rt->dev.name);
  return launch(b, c->scale, c->groups * c->local, c->local, K_NORMALIZE, "lz_scale");
}

int spmv_cl_basis_set(spmv_basis *b, int col, const float *x, double *norm)
{
  cl_basis *c = b->impl;
  const int slot = b->m * c->stride; /* the log's spare slot */
  int status;
  cl_int err = clEnqueueWriteBuffer(c->rt->queue, c->w, CL_FALSE, 0, (size_t)b->n * sizeof(float),
                                    x, 0, NULL, track(b, K_TRANSFER));
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, "uploading a start vector", c->rt->dev.name);
  }
  status = project(b);
  if (status == DSG_OK)
    status = cgs2(b, col, -1, 0);
  if (status == DSG_OK)
    status = normalize(b, slot, col, 0); /* a start vector: col may be 0, the partials unset */
  if (status == DSG_OK) {
    err = clEnqueueReadBuffer(c->rt->queue, c->coef, CL_TRUE, (size_t)slot * sizeof(double),
                              sizeof(double), norm, 0, NULL, track(b, K_TRANSFER));
    if (err != CL_SUCCESS) {
      untrack_failed(c);
      status = spmv_cl_fail(err, "reading a norm", c->rt->dev.name);
    }
  }
  if (status != DSG_OK)
    clFinish(c->rt->queue); /* the upload of the caller's x may still be queued */
  drain_events(b);
  return status;
}

int spmv_cl_basis_expand(spmv_basis *b, int j)
{
  cl_basis *c = b->impl;
  const spmv_cl_dia *dia = c->dia;
  const int slot = j * c->stride;
  int status;

  /* w = A V[:, j]: the DIA kernel, with x the column (or the DIA's image) and y = w */
  if (dia->kernel->x_image) {
    size_t origin[3] = {0, 0, 0}, region[3] = {dia->image_width, dia->image_height, 1};
    /* from the parent buffer at column j's offset (PoCL 3.1 crashes copying from a sub-buffer) */
    cl_int err = clEnqueueCopyBufferToImage(c->rt->queue, c->all, dia->ximage,
                                            ((size_t)c->kc + (size_t)j) * c->ld * sizeof(float),
                                            origin, region, 0, NULL, track(b, K_MATVEC));
    if (err != CL_SUCCESS) {
      untrack_failed(c);
      return spmv_cl_fail(err, "copying x into the image", c->rt->dev.name);
    }
  } else {
    status = spmv_cl_dia_set_x(c->rt, dia, c->product, c->col[j]);
    if (status != DSG_OK)
      return status;
  }
  status = launch(b, c->product, dia->global, dia->local, K_MATVEC, "the DIA kernel");
  if (status == DSG_OK)
    status = project(b);
  if (status == DSG_OK)
    status = cgs2(b, j + 1, slot, b->fuse);
  if (status == DSG_OK)
    status = normalize(b, slot + c->kc + j + 1, j + 1, b->fuse);
  return status;
}

int spmv_cl_basis_coefficients(spmv_basis *b, int j0, int j1, double *coef)
{
  cl_basis *c = b->impl;
  const size_t stride = (size_t)c->stride, out = (size_t)b->m + 2;
  double *raw = c->kc ? malloc((size_t)(j1 - j0) * stride * sizeof(double)) : coef;
  cl_int err;
  int status = DSG_OK;
  if (!raw)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the coefficient log");
  err = clEnqueueReadBuffer(c->rt->queue, c->coef, CL_TRUE, (size_t)j0 * stride * sizeof(double),
                            (size_t)(j1 - j0) * stride * sizeof(double), raw, 0, NULL,
                            track(b, K_TRANSFER));
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    status = spmv_cl_fail(err, "reading the Lanczos coefficients", c->rt->dev.name);
  } else if (c->kc) { /* drop the known columns' coefficients: the caller's layout is V's */
    for (int j = 0; j < j1 - j0; j++)
      memcpy(coef + (size_t)j * out, raw + (size_t)j * stride + c->kc, out * sizeof(double));
  }
  if (status == DSG_OK) {
    int flags[2] = {0, 0};
    if (clEnqueueReadBuffer(c->rt->queue, c->flag, CL_TRUE, 0, sizeof(flags), flags, 0, NULL,
                            NULL) == CL_SUCCESS)
      b->timing.second_passes = flags[1];
  }
  if (raw != coef)
    free(raw);
  clFinish(c->rt->queue);
  drain_events(b);
  return status;
}

/* tmp[:, 0..k) = V[:, 0..mcur) Y */
static int rotate(spmv_basis *b, const double *Y, int ldy, int mcur, int k)
{
  cl_basis *c = b->impl;
  const int n = b->n, ld = (int)c->ld;
  cl_int err;
  if ((size_t)ldy * (size_t)k > (size_t)c->ycap)
    return dsg_error_set(DSG_ERR_INVALID, "restart matrix of %d x %d is too large", ldy, k);
  if (c->yev) { /* the copy's previous write, long done as a rule */
    err = clWaitForEvents(1, &c->yev);
    clReleaseEvent(c->yev);
    c->yev = NULL;
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "uploading the restart matrix", c->rt->dev.name);
  }
  memcpy(c->yhost, Y, (size_t)ldy * (size_t)k * sizeof(double));
  cl_event *ev = track(b, K_TRANSFER);
  err = clEnqueueWriteBuffer(c->rt->queue, c->Y, CL_FALSE, 0,
                             (size_t)ldy * (size_t)k * sizeof(double), c->yhost, 0, NULL, ev);
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, "uploading the restart matrix", c->rt->dev.name);
  }
  clRetainEvent(*ev);
  c->yev = *ev;
  err = ARG(c->rotate, 0, c->V) | ARG(c->rotate, 1, ld) | ARG(c->rotate, 2, n) |
        ARG(c->rotate, 3, mcur) | ARG(c->rotate, 4, c->Y) | ARG(c->rotate, 5, ldy) |
        ARG(c->rotate, 6, k) | ARG(c->rotate, 7, c->tmp) | ARG(c->rotate, 8, ld);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting lz_rotate's arguments", c->rt->dev.name);
  return launch(b, c->rotate, c->groups * c->local, c->local, K_RESTART, "lz_rotate (V Y)");
}

int spmv_cl_basis_restart(spmv_basis *b, const double *Y, int ldy, int mcur, int k)
{
  cl_basis *c = b->impl;
  const size_t col = c->ld * sizeof(float);
  int status = rotate(b, Y, ldy, mcur, k);
  cl_int err = CL_SUCCESS;
  if (status != DSG_OK)
    return status;
  err = clEnqueueCopyBuffer(c->rt->queue, c->tmp, c->V, 0, 0, (size_t)k * col, 0, NULL,
                            track(b, K_RESTART));
  if (err == CL_SUCCESS)
    err = clEnqueueCopyBuffer(c->rt->queue, c->V, c->V, (size_t)mcur * col, (size_t)k * col, col, 0,
                              NULL, track(b, K_RESTART));
  else
    untrack_failed(c);
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, "restarting the basis", c->rt->dev.name);
  }
  return DSG_OK;
}

/* dst = src, count floats, by the OpenMP threads */
static void copy_floats(float *dst, const float *src, size_t count)
{
  const long blocks = (long)((count + BASIS_COPY_BLOCK - 1) / BASIS_COPY_BLOCK);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < blocks; i++) {
    const size_t at = (size_t)i * BASIS_COPY_BLOCK;
    memcpy(dst + at, src + at,
           (count - at < BASIS_COPY_BLOCK ? count - at : BASIS_COPY_BLOCK) * sizeof(float));
  }
}

/* out[c * n + r] = tmp[c * ld + r] for c < k, in pieces of at most BASIS_STAGE floats through
 * two pinned (CL_MEM_ALLOC_HOST_PTR) staging buffers in turn, so that copying one piece out
 * overlaps the transfer of the next. Reads straight into the caller's pageable memory ran at
 * about 2 GB/s on the H200 machine, a tenth of the solve at 3840x2160. */
static int read_columns(spmv_basis *b, int k, float *out)
{
  cl_basis *c = b->impl;
  cl_command_queue q = c->rt->queue;
  const size_t n = (size_t)b->n, total = n * (size_t)k;
  const size_t piece = n < BASIS_STAGE ? n : BASIS_STAGE;
  cl_mem stage[2] = {NULL, NULL};
  float *host[2] = {NULL, NULL};
  cl_event ev[2] = {NULL, NULL};
  size_t pos[2] = {0, 0}, len[2] = {0, 0}, next = 0;
  cl_int err = CL_SUCCESS;
  int status = DSG_OK;
  for (int s = 0; s < 2 && err == CL_SUCCESS; s++) {
    stage[s] = clCreateBuffer(c->rt->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                              piece * sizeof(float), NULL, &err);
    if (err == CL_SUCCESS)
      host[s] = clEnqueueMapBuffer(q, stage[s], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                                   piece * sizeof(float), 0, NULL, NULL, &err);
  }
  if (err != CL_SUCCESS) {
    status =
        spmv_cl_fail(err, "allocating the staging buffers for the Ritz vectors", c->rt->dev.name);
    goto out_release;
  }
  /* piece `s` goes into host[s]: enqueue the next one before copying out the current one */
  for (int s = 0; status == DSG_OK; s ^= 1) {
    for (int t = next == 0 ? 0 : 1; t < 2 && next < total; t++) {
      const int slot = s ^ t;
      const size_t col = next / n, row = next % n;
      len[slot] = n - row < piece ? n - row : piece;
      pos[slot] = next;
      err = clEnqueueReadBuffer(q, c->tmp, CL_FALSE, (col * c->ld + row) * sizeof(float),
                                len[slot] * sizeof(float), host[slot], 0, NULL, &ev[slot]);
      if (err != CL_SUCCESS) {
        status = spmv_cl_fail(err, "reading the Ritz vectors", c->rt->dev.name);
        break;
      }
      next += len[slot];
    }
    if (status != DSG_OK || !ev[s])
      break;
    err = clWaitForEvents(1, &ev[s]);
    b->timing.transfer_s += spmv_cl_event_seconds(ev[s]);
    clReleaseEvent(ev[s]);
    ev[s] = NULL;
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "reading the Ritz vectors", c->rt->dev.name);
      break;
    }
    copy_floats(out + pos[s], host[s], len[s]);
    if (pos[s] + len[s] == total)
      break;
  }
out_release:
  clFinish(q);
  for (int s = 0; s < 2; s++) {
    if (ev[s])
      clReleaseEvent(ev[s]);
    if (host[s])
      clEnqueueUnmapMemObject(q, stage[s], host[s], 0, NULL, NULL);
  }
  clFinish(q);
  for (int s = 0; s < 2; s++)
    if (stage[s])
      clReleaseMemObject(stage[s]);
  return status;
}

int spmv_cl_basis_ritz(spmv_basis *b, const double *Y, int ldy, int mcur, int k, float *out)
{
  cl_basis *c = b->impl;
  int status = rotate(b, Y, ldy, mcur, k);
  if (status == DSG_OK)
    status = read_columns(b, k, out);
  clFinish(c->rt->queue);
  drain_events(b);
  return status;
}

void spmv_cl_basis_destroy(spmv_basis *b)
{
  cl_basis *c = b->impl;
  if (!c)
    return;
  if (c->rt && c->rt->queue)
    clFinish(c->rt->queue);
  drain_events(b);
  cl_kernel ks[] = {c->product, c->gemvt, c->gemvn,  c->norm2,
                    c->scale,   c->kdot,  c->kapply, c->rotate};
  for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
    if (ks[i])
      clReleaseKernel(ks[i]);
  for (int i = 0; c->col && i <= b->m; i++)
    if (c->col[i])
      clReleaseMemObject(c->col[i]);
  cl_mem ms[] = {c->V,    c->all, c->tmp,   c->w,     c->part, c->wpart,
                 c->coef, c->Y,   c->label, c->value, c->flag};
  for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
    if (ms[i])
      clReleaseMemObject(ms[i]);
  if (c->yev)
    clReleaseEvent(c->yev);
  free(c->yhost);
  free(c->col);
  free(c->ev);
  free(c->ev_kind);
  free(c);
  b->impl = NULL;
}

/* Floats per basis column: at least n and x's image (the image kernel copies a column into
 * it), rounded up to the device's base-address alignment, so every column can be a sub-buffer. */
static size_t column_floats(const spmv_cl_runtime *rt, const spmv_cl_dia *dia)
{
  const size_t n = (size_t)dia->rows, image = dia->image_width * dia->image_height * 4;
  cl_uint align_bits = 1024;
  size_t align;
  clGetDeviceInfo(rt->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, NULL);
  align = align_bits / 32 > 32 ? align_bits / 32 : 32;
  return ((n > image ? n : image) + align - 1) / align * align;
}

int spmv_cl_basis_prepare(const spmv_cl_runtime *rt, const spmv_cl_dia *dia,
                          spmv_cl_basis_kernels *bk, int m_cols, int kc)
{
  const unsigned long long col = (unsigned long long)column_floats(rt, dia) * sizeof(float);
  const unsigned long long bytes = ((unsigned long long)m_cols + 1) * col;
  char opts[128], need[32], cap[32];
  if (!rt->dev.fp64)
    return dsg_error_set(
        DSG_ERR_NODEVICE,
        "the Lanczos solver on %s needs double precision "
        "(cl_khr_fp64), which the device lacks (use " DSG_PARAM("solver") " arpack)",
        rt->dev.name);
  if (bytes + (unsigned long long)kc * col > rt->max_alloc ||
      2 * bytes + (unsigned long long)dia->ndiag * dia->pitch * sizeof(float) > rt->dev.global_mem)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "a Lanczos basis of %d x %d floats (%s, twice) does not fit %s's memory "
                         "(largest allocation %s; try a smaller %s or %s arpack)",
                         m_cols + 1, dia->rows, spmv_cl_bytes(bytes, need), rt->dev.name,
                         spmv_cl_bytes(rt->max_alloc, cap), DSG_PARAM("ncv"), DSG_PARAM("solver"));
  if (bk->program)
    return DSG_OK;
  bk->local = rt->dev.max_work_group >= BASIS_LOCAL ? BASIS_LOCAL : 64;
  snprintf(opts, sizeof(opts), "-cl-std=CL1.2 -DLOCAL=%d -DTILE=%d -DHMAX=%d", (int)bk->local,
           BASIS_TILE, BASIS_HMAX);
  return spmv_cl_build(rt, "lanczos", opts, &bk->program);
}

void spmv_cl_basis_kernels_release(spmv_cl_basis_kernels *bk)
{
  if (bk->program)
    clReleaseProgram(bk->program);
  bk->program = NULL;
}

int spmv_cl_basis_create(spmv_basis *b, const spmv_cl_runtime *rt, const spmv_cl_dia *dia,
                         spmv_cl_basis_kernels *bk)
{
  cl_basis *c;
  cl_int err = CL_SUCCESS;
  const size_t cols = (size_t)b->m + 1, n = (size_t)b->n;
  const int kc = b->fuse && b->known.count <= BASIS_DENSE_KNOWN ? b->known.count : 0;
  size_t bytes;
  int status = spmv_cl_basis_prepare(rt, dia, bk, b->m, kc);

  if (status != DSG_OK)
    return status;
  c = calloc(1, sizeof(*c));
  if (!c)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a basis");
  b->impl = c;
  c->rt = rt;
  c->dia = dia;
  c->kc = kc;
  c->stride = c->kc + b->m + 2;
  c->local = bk->local;
  /* work-items take four rows each. The row-parallel kernels: 8 work-groups per compute unit
   * (at 2 the Gram-Schmidt kernels ran at a fifth of the H200's bandwidth at 3840x2160); V^T w:
   * one row group per compute unit, each launching a work-group per column tile, so its partial
   * sums, which every group of lz_gemvn adds up, stay few (1 per unit beat 2 and 4 on the H200:
   * docs/PERFORMANCE.md).
   * Never more groups than there are blocks of four rows to give them. The options
   * (basis_groups, basis_row_groups), when set, replace either count as given. */
  {
    const size_t cu = (size_t)(rt->dev.compute_units > 0 ? rt->dev.compute_units : 1);
    const size_t most = ((n + 3) / 4 + c->local - 1) / c->local;
    c->groups = BASIS_GROUPS * cu < most ? BASIS_GROUPS * cu : most;
    c->tgroups = BASIS_ROW_GROUPS * cu < most ? BASIS_ROW_GROUPS * cu : most;
    if (bk->groups)
      c->groups = bk->groups;
    if (bk->row_groups)
      c->tgroups = bk->row_groups;
  }
  c->ld = column_floats(rt, dia);
  bytes = cols * c->ld * sizeof(float);
  c->evcap = 4096;
  c->ev = malloc((size_t)c->evcap * sizeof(*c->ev));
  c->ev_kind = malloc((size_t)c->evcap * sizeof(*c->ev_kind));
  c->col = calloc(cols, sizeof(*c->col));
  if (!c->ev || !c->ev_kind || !c->col) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the basis bookkeeping");
    goto fail;
  }
  {
    static const char *fn[] = {"lz_gemvt",     "lz_gemvn",       "lz_norm2", "lz_scale",
                               "lz_known_dot", "lz_known_apply", "lz_rotate"};
    cl_kernel *dst[] = {&c->gemvt, &c->gemvn,  &c->norm2, &c->scale,
                        &c->kdot,  &c->kapply, &c->rotate};
    for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]) && err == CL_SUCCESS; i++)
      *dst[i] = clCreateKernel(bk->program, fn[i], &err);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "creating the Lanczos kernels", rt->dev.name);
      goto fail;
    }
  }
  {
    const int ycap = (b->m + 1) * (b->m + 1);
    const size_t logd = ((size_t)b->m + 1) * (size_t)c->stride;
    const size_t vtw = c->tgroups * ((size_t)c->kc + (size_t)b->m + 1); /* V^T w and w . w */
    const size_t kdots = c->groups * (size_t)b->known.count;
    const size_t partd = vtw > kdots ? vtw : kdots;
    const size_t kbytes = (size_t)c->kc * c->ld * sizeof(float);
    c->ycap = ycap;
    c->all = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, kbytes + bytes, NULL, &err);
    if (err == CL_SUCCESS) {
      cl_buffer_region vr = {kbytes, bytes};
      c->V = clCreateSubBuffer(c->all, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &vr, &err);
    }
    if (err == CL_SUCCESS)
      c->tmp = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err == CL_SUCCESS)
      c->w =
          clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, (n + 3) / 4 * 4 * sizeof(float), NULL, &err);
    if (err == CL_SUCCESS)
      c->part = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, partd * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS)
      c->wpart = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, c->groups * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS)
      c->coef = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, logd * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS)
      c->flag = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, 2 * sizeof(int), NULL, &err);
    if (err == CL_SUCCESS)
      c->Y = clCreateBuffer(rt->ctx, CL_MEM_READ_ONLY, (size_t)ycap * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS && !(c->yhost = malloc((size_t)ycap * sizeof(double))))
      err = CL_OUT_OF_HOST_MEMORY;
    if (err == CL_SUCCESS && b->known.count > 0) {
      c->label = clCreateBuffer(rt->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof(int),
                                (void *)b->known.label, &err);
      if (err == CL_SUCCESS)
        c->value = clCreateBuffer(rt->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                  n * sizeof(float), (void *)b->known.value, &err);
    }
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "allocating the Lanczos basis", rt->dev.name);
      goto fail;
    }
    const float zero = 0.0f;
    const double dzero = 0.0;
    err = clEnqueueFillBuffer(rt->queue, c->all, &zero, sizeof(zero), 0, kbytes + bytes, 0, NULL,
                              NULL);
    if (err == CL_SUCCESS) {
      const int izero = 0;
      err = clEnqueueFillBuffer(rt->queue, c->flag, &izero, sizeof(izero), 0, 2 * sizeof(int), 0,
                                NULL, NULL);
    }
    if (err == CL_SUCCESS)
      err = clEnqueueFillBuffer(rt->queue, c->tmp, &zero, sizeof(zero), 0, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS) /* rows n .. n4 stay zero: the kernels read w four rows at a time */
      err = clEnqueueFillBuffer(rt->queue, c->w, &zero, sizeof(zero), 0,
                                (n + 3) / 4 * 4 * sizeof(float), 0, NULL, NULL);
    if (err == CL_SUCCESS)
      err = clEnqueueFillBuffer(rt->queue, c->coef, &dzero, sizeof(dzero), 0, logd * sizeof(double),
                                0, NULL, NULL);
    for (size_t i = 0; i < cols && err == CL_SUCCESS; i++) { /* views of `all`: no nesting */
      cl_buffer_region region = {((size_t)c->kc + i) * c->ld * sizeof(float),
                                 c->ld * sizeof(float)};
      c->col[i] =
          clCreateSubBuffer(c->all, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    }
    /* the dense known columns: vector c is label == c's values, zero elsewhere */
    if (err == CL_SUCCESS && c->kc > 0) {
      float *dense = calloc((size_t)c->kc * c->ld, sizeof(float));
      if (!dense) {
        status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the known columns");
        goto fail;
      }
      for (size_t r = 0; r < n; r++)
        if (b->known.label[r] >= 0)
          dense[(size_t)b->known.label[r] * c->ld + r] = b->known.value[r];
      err = clEnqueueWriteBuffer(rt->queue, c->all, CL_TRUE, 0, kbytes, dense, 0, NULL, NULL);
      free(dense);
    }
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "setting up the Lanczos basis", rt->dev.name);
      goto fail;
    }
  }
  /* the product: the matvec's DIA kernel, y = w, x set per step (or the DIA's image) */
  status = spmv_cl_dia_kernel_create(rt, dia, NULL, c->w, &c->product);
  if (status != DSG_OK)
    goto fail;
  clFinish(rt->queue);
  return DSG_OK;

fail:
  spmv_cl_basis_destroy(b);
  return status;
}
