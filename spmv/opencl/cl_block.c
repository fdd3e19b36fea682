/* The OpenCL blocks: every slot in one device buffer (column v of slot s at (s * b + v) * ld
 * floats), the operations queued as kernels of kernels/block.cl (built once per block width b)
 * with no host synchronisation but where the host needs numbers: set and get (through pinned
 * staging buffers), gram and residuals (one blocking read each). Every command is timed with
 * events, collected at those sync points. The product reads the matvec's device matrix
 * (cl_dia.h) directly: a DIA SpMM over the b columns with the Chebyshev epilogue fused. */
#include "cl_block.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_LOCAL 256           /* work-group size (64 on devices that take less) */
#define BLOCK_RC 8                /* columns a reduction sums at a time (-DRC) */
#define BLOCK_CHUNK 4096          /* most rows of one known-vector chunk: a work-group's share */
#define BLOCK_GROUPS 4            /* work-groups of the reductions per compute unit */
#define BLOCK_GRAM_PART (1 << 20) /* the most doubles of Gram partial sums (8 MiB) */
#define BLOCK_GRAM_LOCAL 4096     /* floats of local memory for the Gram kernel's two tiles */
#define BLOCK_STAGES 4            /* host copies of M / theta in flight */
#define BLOCK_EVENTS 1024         /* events kept before the older half is timed */
#define BLOCK_STAGE ((size_t)1 << 21)      /* floats per pinned staging buffer (8 MiB) */
#define BLOCK_COPY_BLOCK ((size_t)1 << 16) /* floats per thread's memcpy */
#define BLOCK_RUN 16 /* the most diagonals of one run of blk_product4 (a multiple of 4) */
#define BLOCK_VC 8   /* the most columns of one work-group of blk_product4 */

/* The product's kernel: 4 (blk_product4: four rows per work-item, runs of consecutive offsets
 * staged in local memory, BLOCK_VC columns per work-group) or 1 (blk_product: one row per
 * work-item, all b columns). 4 falls back to 1 where a work-group of 64 does not fit the
 * device's local memory. The default is 1: on the H200 (b = 24) it took 5.0 ms a product at
 * 3840x2160 and 1.3 ms at 1920x1080 against 4's 7.7 and 1.9 ms (docs/PERFORMANCE.md). */
#ifndef BLOCK_PRODUCT_ROWS
#define BLOCK_PRODUCT_ROWS 1
#endif

/* 1: on a pixel stencil (the matrix's width > 0, every offset dy W + dx with |dx|, |dy| <=
 * BLOCK_HALO) the product is blk_product_tile (tiles of BLOCK_TX x BLOCK_TY pixels staged with
 * their halo in local memory, in chunks of columns), where the device takes it; 0: always the
 * kernel of BLOCK_PRODUCT_ROWS (for timing the two). */
#ifndef BLOCK_PRODUCT_TILE
#define BLOCK_PRODUCT_TILE 1
#endif
#define BLOCK_TX 32            /* blk_product_tile's tile: pixels across (-DTX) */
#define BLOCK_TY 8             /* and down (-DTY): BLOCK_TX * BLOCK_TY work-items */
#define BLOCK_HALO 8           /* the largest stencil reach it takes, in pixels */
#define BLOCK_TILE_BYTES 40960 /* the most local memory of its staged tile */
#define BLOCK_TILE_VC 16       /* the most columns it stages at a time */

enum { K_MATVEC, K_VECTOR, K_REDUCE, K_TRANSFER, K_KINDS };

typedef struct cl_block {
  const spmv_cl_runtime *rt; /* the matvec's device, context and queue */
  const spmv_cl_dia *dia;    /* the matvec's matrix */
  cl_program program;        /* kernels/block.cl for NB = b */
  cl_kernel product, axpby, gram, residuals, sum, transform, kdot, ksum, kapply, fill;
  cl_mem data;         /* slots * b columns of ld floats, rows n .. ld - 1 zero */
  cl_mem part;         /* partial sums of the reductions, group-major */
  cl_mem result;       /* b * b doubles: the reductions' sums */
  cl_mem coef;         /* b * b doubles: M (transform) or theta (residuals), uploaded */
  cl_mem label, value; /* the known vectors' n labels and values, as given */
  cl_mem rows, vals;   /* the labelled rows sorted by label, and their values */
  cl_mem chunk, first; /* chunk q: rows[chunk[q] .. chunk[q + 1]); label c: chunks first[c]
                        * .. first[c + 1] */
  cl_mem chunkdot, kd; /* nchunks * b and count * b doubles */
  cl_mem runs;         /* blk_product4's runs of diagonals: (first diagonal, length) */
  int nruns;
  size_t plocal;          /* blk_product4's work-group size (0: blk_product, a row per item) */
  size_t pgroups;         /* blk_product4's work-groups: row blocks times column chunks */
  int vc, nch;            /* blk_product4's columns per work-group and column chunks */
  int tile;               /* 1: the product is blk_product_tile */
  int halo, tvc;          /* its stencil reach in pixels and columns staged at a time */
  int tgx;                /* its tiles across the image */
  size_t tgroups;         /* its work-groups: one per tile */
  cl_mem tdelta;          /* its diagonals' positions in the staged tile: dy (TX + 2 halo) + dx */
  cl_mem stage_buf[2];    /* pinned staging buffers of set and get (NULL: not made yet) */
  float *stage_host[2];   /* their mappings */
  size_t stage_floats;    /* floats each */
  size_t ld;              /* floats per column: >= n, base-address aligned */
  size_t local;           /* work-group size of every kernel */
  size_t groups, ggroups; /* work-groups of blk_residuals and of blk_gram */
  int trows;              /* rows of blk_gram's tiles (-DTROWS) */
  size_t nchunks;         /* known-vector chunks (0: no labelled row) */
  double *stage;          /* BLOCK_STAGES host copies of b * b doubles, for non-blocking writes */
  cl_event stage_ev[BLOCK_STAGES]; /* the write of each copy (NULL: free) */
  int next_stage;
  cl_event *ev;
  int *ev_kind;
  int nev;
} cl_block;

/* Adds the times of the first `count` kept events (all complete) and forgets them. */
static void drain_first(spmv_block *k, int count)
{
  cl_block *c = k->impl;
  double *slot[K_KINDS] = {&k->timing.matvec_s, &k->timing.vector_s, &k->timing.reduce_s,
                           &k->timing.transfer_s};
  for (int i = 0; i < count; i++) {
    *slot[c->ev_kind[i]] += spmv_cl_event_seconds(c->ev[i]);
    clReleaseEvent(c->ev[i]);
  }
  memmove(c->ev, c->ev + count, (size_t)(c->nev - count) * sizeof(*c->ev));
  memmove(c->ev_kind, c->ev_kind + count, (size_t)(c->nev - count) * sizeof(*c->ev_kind));
  c->nev -= count;
}

static void drain_events(spmv_block *k)
{
  cl_block *c = k->impl;
  drain_first(k, c->nev);
}

/* Keeps the next command's event for timing: returns where to put it. */
static cl_event *track(spmv_block *k, int kind)
{
  cl_block *c = k->impl;
  if (c->nev == BLOCK_EVENTS) {
    /* a long queue without a sync point: time its older half, leaving the rest queued (the
     * queue is in order: the last of them done means all are) */
    clWaitForEvents(1, &c->ev[BLOCK_EVENTS / 2 - 1]);
    drain_first(k, BLOCK_EVENTS / 2);
  }
  c->ev_kind[c->nev] = kind;
  return &c->ev[c->nev++];
}

static void untrack_failed(cl_block *c) { c->nev--; }

/* Queues kernel over `global` work-items (rounded up to whole groups of `local`). */
static int launch_local(spmv_block *k, cl_kernel kernel, size_t global, size_t local, int kind,
                        const char *what)
{
  cl_block *c = k->impl;
  cl_event *ev = track(k, kind);
  global = (global + local - 1) / local * local;
  cl_int err = clEnqueueNDRangeKernel(c->rt->queue, kernel, 1, NULL, &global, &local, 0, NULL, ev);
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, what, c->rt->dev.name);
  }
  k->timing.launches++;
  return DSG_OK;
}

static int launch(spmv_block *k, cl_kernel kernel, size_t global, int kind, const char *what)
{
  const cl_block *c = k->impl;
  return launch_local(k, kernel, global, c->local, kind, what);
}

/* The float offset of slot s in data. */
static cl_ulong slot_at(const spmv_block *k, int s)
{
  const cl_block *c = k->impl;
  return (cl_ulong)s * (cl_ulong)k->b * (cl_ulong)c->ld;
}

/* coef := src (count doubles), queued without blocking from a host copy of the block's own, so
 * that the caller may free src at once. */
static int upload(spmv_block *k, const double *src, size_t count, int kind, const char *what)
{
  cl_block *c = k->impl;
  const int s = c->next_stage;
  double *copy = c->stage + (size_t)s * (size_t)k->b * (size_t)k->b;
  cl_event *ev;
  cl_int err = CL_SUCCESS;
  if (c->stage_ev[s]) { /* the copy's previous write, long done as a rule */
    err = clWaitForEvents(1, &c->stage_ev[s]);
    clReleaseEvent(c->stage_ev[s]);
    c->stage_ev[s] = NULL;
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, what, c->rt->dev.name);
  }
  memcpy(copy, src, count * sizeof(double));
  ev = track(k, kind);
  err = clEnqueueWriteBuffer(c->rt->queue, c->coef, CL_FALSE, 0, count * sizeof(double), copy, 0,
                             NULL, ev);
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, what, c->rt->dev.name);
  }
  clRetainEvent(*ev);
  c->stage_ev[s] = *ev;
  c->next_stage = (s + 1) % BLOCK_STAGES;
  return DSG_OK;
}

/* out := the first `count` doubles of result, after blk_sum_groups has added `groups` partials
 * of count entries each: one blocking read. */
static int sum_and_read(spmv_block *k, size_t groups, int count, double *out, const char *what)
{
  cl_block *c = k->impl;
  const int g = (int)groups;
  cl_int err = clSetKernelArg(c->sum, 0, sizeof(cl_mem), &c->part);
  err |= clSetKernelArg(c->sum, 1, sizeof(int), &g);
  err |= clSetKernelArg(c->sum, 2, sizeof(int), &count);
  err |= clSetKernelArg(c->sum, 3, sizeof(cl_mem), &c->result);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_sum_groups's arguments", c->rt->dev.name);
  int status = launch(k, c->sum, (size_t)count, K_REDUCE, "blk_sum_groups");
  if (status != DSG_OK)
    return status;
  err = clEnqueueReadBuffer(c->rt->queue, c->result, CL_TRUE, 0, (size_t)count * sizeof(double),
                            out, 0, NULL, track(k, K_REDUCE));
  if (err != CL_SUCCESS) {
    untrack_failed(c);
    return spmv_cl_fail(err, what, c->rt->dev.name);
  }
  return DSG_OK;
}

#define ARG(kern, i, v) clSetKernelArg(kern, i, sizeof(v), &(v))

/* dst = src, count floats, by the OpenMP threads */
static void copy_floats(float *dst, const float *src, size_t count)
{
  const long blocks = (long)((count + BLOCK_COPY_BLOCK - 1) / BLOCK_COPY_BLOCK);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < blocks; i++) {
    const size_t at = (size_t)i * BLOCK_COPY_BLOCK;
    memcpy(dst + at, src + at,
           (count - at < BLOCK_COPY_BLOCK ? count - at : BLOCK_COPY_BLOCK) * sizeof(float));
  }
}

/* Makes the two pinned (CL_MEM_ALLOC_HOST_PTR) staging buffers of min(n, BLOCK_STAGE) floats
 * and maps them, once per block (they stay mapped until destroy). */
static int make_stage(spmv_block *k)
{
  cl_block *c = k->impl;
  cl_int err = CL_SUCCESS;
  if (c->stage_buf[1])
    return DSG_OK;
  c->stage_floats = (size_t)k->n < BLOCK_STAGE ? (size_t)k->n : BLOCK_STAGE;
  for (int s = 0; s < 2 && err == CL_SUCCESS; s++) {
    if (!c->stage_buf[s])
      c->stage_buf[s] = clCreateBuffer(c->rt->ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                                       c->stage_floats * sizeof(float), NULL, &err);
    if (err == CL_SUCCESS && !c->stage_host[s])
      c->stage_host[s] =
          clEnqueueMapBuffer(c->rt->queue, c->stage_buf[s], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0,
                             c->stage_floats * sizeof(float), 0, NULL, NULL, &err);
  }
  if (err != CL_SUCCESS) {
    for (int s = 0; s < 2; s++) {
      if (c->stage_host[s])
        clEnqueueUnmapMemObject(c->rt->queue, c->stage_buf[s], c->stage_host[s], 0, NULL, NULL);
      clFinish(c->rt->queue);
      if (c->stage_buf[s])
        clReleaseMemObject(c->stage_buf[s]);
      c->stage_buf[s] = NULL;
      c->stage_host[s] = NULL;
    }
    return spmv_cl_fail(err, "allocating the pinned staging buffers of a block", c->rt->dev.name);
  }
  return DSG_OK;
}

/* The first `cols` columns of slot s into out, or from in where out is NULL (column v at
 * out + v * n or in + v * n), in pieces of at most BLOCK_STAGE floats through the two pinned
 * staging buffers in turn, so that the host's copy of one piece overlaps the transfer of the other.
 * Transfers straight from or into the caller's pageable memory ran at about 2 GB/s on the H200
 * machine (cl_basis.c's read_columns). Returns when every transfer is done. */
static int transfer(spmv_block *k, int s, int cols, const float *in, float *out, const char *what)
{
  const int write = out == NULL;
  cl_block *c = k->impl;
  cl_command_queue q = c->rt->queue;
  const size_t n = (size_t)k->n, total = n * (size_t)cols;
  cl_event ev[2] = {NULL, NULL}; /* the pending transfer of each staging buffer */
  size_t pos[2] = {0, 0}, len[2] = {0, 0};
  cl_int err = CL_SUCCESS;
  int status = make_stage(k);
  /* piece i goes through buffer i % 2: reads queue one piece ahead of the copy out; writes
   * copy in while the previous piece is transferred */
  for (size_t next = 0, i = 0; status == DSG_OK && next < total; i++) {
    const int b = (int)(i % 2);
    const size_t col = next / n, row = next % n;
    const size_t at = (((size_t)s * (size_t)k->b + col) * c->ld + row) * sizeof(float);
    if (ev[b]) { /* the buffer's previous piece */
      err = clWaitForEvents(1, &ev[b]);
      clReleaseEvent(ev[b]);
      ev[b] = NULL;
      if (err != CL_SUCCESS)
        break;
      if (!write)
        copy_floats(out + pos[b], c->stage_host[b], len[b]);
    }
    pos[b] = next;
    len[b] = n - row < c->stage_floats ? n - row : c->stage_floats;
    if (write)
      copy_floats(c->stage_host[b], in + pos[b], len[b]);
    cl_event *tev = track(k, K_TRANSFER);
    err = write ? clEnqueueWriteBuffer(q, c->data, CL_FALSE, at, len[b] * sizeof(float),
                                       c->stage_host[b], 0, NULL, tev)
                : clEnqueueReadBuffer(q, c->data, CL_FALSE, at, len[b] * sizeof(float),
                                      c->stage_host[b], 0, NULL, tev);
    if (err != CL_SUCCESS) {
      untrack_failed(c);
      break;
    }
    ev[b] = *tev;
    clRetainEvent(ev[b]); /* track() may release its copy before this one is waited for */
    next += len[b];
  }
  /* the last pieces, older first */
  const int older = ev[0] && ev[1] && pos[1] < pos[0];
  for (int t = 0; t < 2; t++) {
    const int b = older ? 1 - t : t;
    if (!ev[b])
      continue;
    cl_int e = clWaitForEvents(1, &ev[b]);
    clReleaseEvent(ev[b]);
    ev[b] = NULL;
    if (e != CL_SUCCESS && err == CL_SUCCESS)
      err = e;
    if (err == CL_SUCCESS && !write)
      copy_floats(out + pos[b], c->stage_host[b], len[b]);
  }
  if (status == DSG_OK && err != CL_SUCCESS)
    status = spmv_cl_fail(err, what, c->rt->dev.name);
  return status;
}

int spmv_cl_block_set(spmv_block *k, int s, const float *x)
{
  cl_block *c = k->impl;
  int status = transfer(k, s, k->b, x, NULL, "writing a block");
  clFinish(c->rt->queue);
  drain_events(k);
  return status;
}

int spmv_cl_block_get(spmv_block *k, int s, int cols, float *out)
{
  cl_block *c = k->impl;
  int status = cols > 0 ? transfer(k, s, cols, NULL, out, "reading a block") : DSG_OK;
  clFinish(c->rt->queue);
  drain_events(k);
  return status;
}

int spmv_cl_block_fill_random(spmv_block *k, int s, unsigned long long seed)
{
  cl_block *c = k->impl;
  const cl_ulong so = slot_at(k, s), sd = (cl_ulong)seed;
  const int n = k->n, ld = (int)c->ld;
  cl_kernel f = c->fill;
  cl_int err = ARG(f, 0, c->data) | ARG(f, 1, so) | ARG(f, 2, n) | ARG(f, 3, ld) | ARG(f, 4, sd);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_fill_random's arguments", c->rt->dev.name);
  return launch(k, f, (size_t)n, K_VECTOR, "blk_fill_random");
}

int spmv_cl_block_product(spmv_block *k, int dst, int src, int prev, double alpha, double beta,
                          double gamma)
{
  cl_block *c = k->impl;
  const int has_prev = prev >= 0;
  const cl_ulong xo = slot_at(k, src), yo = slot_at(k, dst), po = slot_at(k, has_prev ? prev : src);
  cl_kernel p = c->product;
  /* the matrix, the data and the sizes are set once (set_product_args) */
  cl_int err = ARG(p, 1, xo) | ARG(p, 2, yo) | ARG(p, 3, po) | ARG(p, 4, has_prev) |
               ARG(p, 5, alpha) | ARG(p, 6, beta) | ARG(p, 7, gamma);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_product's arguments", c->rt->dev.name);
  if (c->tile)
    return launch_local(k, p, c->tgroups * BLOCK_TX * BLOCK_TY, BLOCK_TX * BLOCK_TY, K_MATVEC,
                        "blk_product_tile (the block product)");
  if (c->plocal)
    return launch_local(k, p, c->pgroups * c->plocal, c->plocal, K_MATVEC,
                        "blk_product4 (the block product)");
  return launch(k, p, (size_t)k->n, K_MATVEC, "blk_product (the block product)");
}

int spmv_cl_block_axpby(spmv_block *k, int dst, double alpha, int x, double beta, int y)
{
  cl_block *c = k->impl;
  const cl_ulong d = slot_at(k, dst), xo = slot_at(k, x), yo = slot_at(k, y);
  const cl_ulong count4 = (cl_ulong)k->b * (cl_ulong)c->ld / 4;
  cl_kernel a = c->axpby;
  cl_int err = ARG(a, 0, c->data) | ARG(a, 1, d) | ARG(a, 2, alpha) | ARG(a, 3, xo) |
               ARG(a, 4, beta) | ARG(a, 5, yo) | ARG(a, 6, count4);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_axpby's arguments", c->rt->dev.name);
  return launch(k, a, (size_t)count4, K_VECTOR, "blk_axpby");
}

int spmv_cl_block_gram(spmv_block *k, int x, int y, double *G)
{
  cl_block *c = k->impl;
  const cl_ulong xo = slot_at(k, x), yo = slot_at(k, y);
  const int n = k->n, ld = (int)c->ld;
  cl_kernel g = c->gram;
  int status;
  cl_int err = ARG(g, 0, c->data) | ARG(g, 1, xo) | ARG(g, 2, yo) | ARG(g, 3, n) | ARG(g, 4, ld) |
               ARG(g, 5, c->part);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_gram's arguments", c->rt->dev.name);
  status = launch(k, g, c->ggroups * c->local, K_REDUCE, "blk_gram (X^T Y)");
  if (status == DSG_OK)
    status = sum_and_read(k, c->ggroups, k->b * k->b, G, "reading a Gram matrix");
  clFinish(c->rt->queue);
  drain_events(k);
  return status;
}

int spmv_cl_block_transform(spmv_block *k, int s, const double *M)
{
  cl_block *c = k->impl;
  const cl_ulong so = slot_at(k, s);
  const int n = k->n, ld = (int)c->ld;
  cl_kernel t = c->transform;
  int status = upload(k, M, (size_t)k->b * (size_t)k->b, K_VECTOR, "uploading a transform");
  if (status != DSG_OK)
    return status;
  cl_int err =
      ARG(t, 0, c->data) | ARG(t, 1, so) | ARG(t, 2, n) | ARG(t, 3, ld) | ARG(t, 4, c->coef);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_transform's arguments", c->rt->dev.name);
  return launch(k, t, (size_t)n, K_VECTOR, "blk_transform (X M)");
}

int spmv_cl_block_residuals(spmv_block *k, int ax, int x, const double *theta, double *out)
{
  cl_block *c = k->impl;
  const cl_ulong ao = slot_at(k, ax), xo = slot_at(k, x);
  const int n = k->n, ld = (int)c->ld;
  cl_kernel r = c->residuals;
  int status = upload(k, theta, (size_t)k->b, K_REDUCE, "uploading the Ritz values");
  if (status == DSG_OK) {
    cl_int err = ARG(r, 0, c->data) | ARG(r, 1, ao) | ARG(r, 2, xo) | ARG(r, 3, n) | ARG(r, 4, ld) |
                 ARG(r, 5, c->coef) | ARG(r, 6, c->part);
    status = err == CL_SUCCESS
                 ? launch(k, r, c->groups * c->local, K_REDUCE, "blk_residuals")
                 : spmv_cl_fail(err, "setting blk_residuals's arguments", c->rt->dev.name);
  }
  if (status == DSG_OK)
    status = sum_and_read(k, c->groups, k->b, out, "reading the residuals");
  clFinish(c->rt->queue);
  drain_events(k);
  return status;
}

int spmv_cl_block_project(spmv_block *k, int s)
{
  cl_block *c = k->impl;
  const cl_ulong so = slot_at(k, s);
  const int n = k->n, ld = (int)c->ld, count = k->known.count;
  int status;
  cl_int err;
  if (count <= 0 || c->nchunks == 0)
    return DSG_OK; /* no known vector, or none with a row: nothing to remove */
  err = ARG(c->kdot, 0, c->data) | ARG(c->kdot, 1, so) | ARG(c->kdot, 2, ld) |
        ARG(c->kdot, 3, c->rows) | ARG(c->kdot, 4, c->vals) | ARG(c->kdot, 5, c->chunk) |
        ARG(c->kdot, 6, c->chunkdot);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_known_dot's arguments", c->rt->dev.name);
  status = launch(k, c->kdot, c->nchunks * c->local, K_VECTOR, "blk_known_dot");
  if (status != DSG_OK)
    return status;
  err = ARG(c->ksum, 0, c->chunkdot) | ARG(c->ksum, 1, c->first) | ARG(c->ksum, 2, count) |
        ARG(c->ksum, 3, c->kd);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_known_sum's arguments", c->rt->dev.name);
  status = launch(k, c->ksum, (size_t)count * (size_t)k->b, K_VECTOR, "blk_known_sum");
  if (status != DSG_OK)
    return status;
  err = ARG(c->kapply, 0, c->data) | ARG(c->kapply, 1, so) | ARG(c->kapply, 2, n) |
        ARG(c->kapply, 3, ld) | ARG(c->kapply, 4, c->label) | ARG(c->kapply, 5, c->value) |
        ARG(c->kapply, 6, c->kd);
  if (err != CL_SUCCESS)
    return spmv_cl_fail(err, "setting blk_known_apply's arguments", c->rt->dev.name);
  return launch(k, c->kapply, (size_t)n, K_VECTOR, "blk_known_apply");
}

void spmv_cl_block_destroy(spmv_block *k)
{
  cl_block *c = k->impl;
  if (!c)
    return;
  if (c->rt && c->rt->queue)
    clFinish(c->rt->queue);
  if (c->ev)
    drain_events(k);
  for (int s = 0; s < BLOCK_STAGES; s++)
    if (c->stage_ev[s])
      clReleaseEvent(c->stage_ev[s]);
  for (int s = 0; s < 2; s++)
    if (c->stage_host[s])
      clEnqueueUnmapMemObject(c->rt->queue, c->stage_buf[s], c->stage_host[s], 0, NULL, NULL);
  if (c->stage_host[0] || c->stage_host[1])
    clFinish(c->rt->queue);
  cl_kernel ks[] = {c->product,   c->axpby, c->gram, c->residuals, c->sum,
                    c->transform, c->kdot,  c->ksum, c->kapply,    c->fill};
  for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++)
    if (ks[i])
      clReleaseKernel(ks[i]);
  cl_mem ms[] = {c->data, c->part,         c->result,       c->coef,  c->label,    c->value,
                 c->rows, c->vals,         c->chunk,        c->first, c->chunkdot, c->kd,
                 c->runs, c->stage_buf[0], c->stage_buf[1], c->tdelta};
  for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++)
    if (ms[i])
      clReleaseMemObject(ms[i]);
  if (c->program)
    clReleaseProgram(c->program);
  free(c->stage);
  free(c->ev);
  free(c->ev_kind);
  free(c);
  k->impl = NULL;
}

/* Floats per column: n rounded up to the device's base-address alignment (at least 32 floats). */
static size_t column_floats(const spmv_cl_runtime *rt, int n)
{
  cl_uint align_bits = 1024;
  size_t align;
  clGetDeviceInfo(rt->device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof(align_bits), &align_bits, NULL);
  align = align_bits / 32 > 32 ? align_bits / 32 : 32;
  return ((size_t)n + align - 1) / align * align;
}

/* The known vectors' device tables, built on the host: the labelled rows sorted by label (in row
 * order within a label) with their values, cut into chunks of at most BLOCK_CHUNK rows within
 * one label, the chunks' bounds and each label's first chunk. Sets c->nchunks. */
static int upload_known(spmv_block *k)
{
  cl_block *c = k->impl;
  const cl_context ctx = c->rt->ctx;
  const int n = k->n, count = k->known.count;
  const int *label = k->known.label;
  size_t *at = calloc((size_t)count + 1, sizeof(*at)); /* label c's rows start at at[c] */
  int *first = malloc(((size_t)count + 1) * sizeof(*first));
  int *rows = NULL, *chunk = NULL;
  float *vals = NULL;
  size_t labelled = 0, nchunks = 0;
  cl_int err = CL_SUCCESS;
  int status = DSG_OK;

  if (!at || !first) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the tables of %d known vectors", count);
    goto out;
  }
  for (int r = 0; r < n; r++)
    if (label[r] >= 0)
      at[label[r] + 1]++;
  for (int l = 0; l < count; l++) {
    first[l] = (int)nchunks;
    nchunks += (at[l + 1] + BLOCK_CHUNK - 1) / BLOCK_CHUNK;
    at[l + 1] += at[l];
  }
  first[count] = (int)nchunks;
  labelled = at[count];
  rows = malloc((labelled ? labelled : 1) * sizeof(*rows));
  vals = malloc((labelled ? labelled : 1) * sizeof(*vals));
  chunk = malloc((nchunks + 1) * sizeof(*chunk));
  if (!rows || !vals || !chunk) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the tables of %d known vectors", count);
    goto out;
  }
  {
    size_t q = 0;
    for (int l = 0; l < count; l++) /* label l's chunks, before at[] becomes the fill position */
      for (size_t i = at[l]; i < at[l + 1]; i += BLOCK_CHUNK)
        chunk[q++] = (int)i;
    chunk[nchunks] = (int)labelled;
  }
  for (int r = 0; r < n; r++)
    if (label[r] >= 0) {
      const size_t i = at[label[r]]++;
      rows[i] = r;
      vals[i] = k->known.value[r];
    }
  c->nchunks = nchunks;
  {
    const cl_mem_flags in = CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR;
    c->label = clCreateBuffer(ctx, in, (size_t)n * sizeof(int), (void *)label, &err);
    if (err == CL_SUCCESS)
      c->value = clCreateBuffer(ctx, in, (size_t)n * sizeof(float), (void *)k->known.value, &err);
    if (err == CL_SUCCESS)
      c->rows = clCreateBuffer(ctx, in, (labelled ? labelled : 1) * sizeof(int), rows, &err);
    if (err == CL_SUCCESS)
      c->vals = clCreateBuffer(ctx, in, (labelled ? labelled : 1) * sizeof(float), vals, &err);
    if (err == CL_SUCCESS)
      c->chunk = clCreateBuffer(ctx, in, (nchunks + 1) * sizeof(int), chunk, &err);
    if (err == CL_SUCCESS)
      c->first = clCreateBuffer(ctx, in, ((size_t)count + 1) * sizeof(int), first, &err);
    if (err == CL_SUCCESS)
      c->chunkdot =
          clCreateBuffer(ctx, CL_MEM_READ_WRITE,
                         (nchunks ? nchunks : 1) * (size_t)k->b * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS)
      c->kd = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)count * (size_t)k->b * sizeof(double),
                             NULL, &err);
    if (err != CL_SUCCESS)
      status = spmv_cl_fail(err, "uploading the known vectors' tables", c->rt->dev.name);
  }
out:
  free(at);
  free(first);
  free(rows);
  free(vals);
  free(chunk);
  return status;
}

/* Checks fp64, the labels and every size against rt's device; sets c->ld and the group counts. */
static int plan(spmv_block *k, cl_block *c)
{
  const spmv_cl_runtime *rt = c->rt;
  const spmv_cl_dia *dia = c->dia;
  const size_t n = (size_t)k->n, b = (size_t)k->b,
               count = (size_t)(k->known.count > 0 ? k->known.count : 0);
  const size_t cu = (size_t)(rt->dev.compute_units > 0 ? rt->dev.compute_units : 1);
  size_t row_groups, tiles;
  unsigned long long data, part, known, matrix;
  cl_ulong constant = 0;
  char need[32], cap[32], mat[32];

  if (!rt->dev.fp64)
    return dsg_error_set(DSG_ERR_NODEVICE,
                         "the block solver on %s needs double precision (cl_khr_fp64), which the "
                         "device lacks (use " DSG_PARAM("solver") " lanczos or arpack)",
                         rt->dev.name);
  for (size_t r = 0; r < n && count > 0; r++)
    if (k->known.label[r] < -1 || (size_t)(k->known.label[r] + 1) > count)
      return dsg_error_set(DSG_ERR_INVALID, "known vector label %d of row %zu is outside [-1, %zu)",
                           k->known.label[r], r, count);
  clGetDeviceInfo(rt->device, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, sizeof(constant), &constant,
                  NULL);
  if (constant > 0 && constant < b * b * sizeof(double))
    return dsg_error_set(DSG_ERR_LIMIT,
                         "blocks of %d columns need %zu bytes of constant memory, over %s's %llu "
                         "(try a smaller " DSG_PARAM("ncv") ")",
                         k->b, b * b * sizeof(double), rt->dev.name, (unsigned long long)constant);
  /* the Gram tiles: two of trows x b floats in BLOCK_GRAM_LOCAL, 32 to 256 rows */
  c->trows = BLOCK_GRAM_LOCAL / 2 / k->b / 32 * 32;
  c->trows = c->trows < 32 ? 32 : c->trows > 256 ? 256 : c->trows;
  c->ld = column_floats(rt, k->n);
  row_groups = (n + c->local - 1) / c->local;
  tiles = (n + (size_t)c->trows - 1) / (size_t)c->trows;
  c->groups = BLOCK_GROUPS * cu < row_groups ? BLOCK_GROUPS * cu : row_groups;
  c->ggroups = BLOCK_GROUPS * cu < tiles ? BLOCK_GROUPS * cu : tiles;
  if (c->ggroups * b * b > BLOCK_GRAM_PART)
    c->ggroups = BLOCK_GRAM_PART / (b * b) > 0 ? BLOCK_GRAM_PART / (b * b) : 1;
  if (c->groups < 1)
    c->groups = 1;
  if (c->ggroups < 1)
    c->ggroups = 1;
  /* blk_product4: b in nch chunks of at most BLOCK_VC columns, work-groups of 256 work-items
   * (1024 rows) where the device's local memory takes vc staged windows of 4 plocal + BLOCK_RUN
   * floats, else 128 or 64; plocal 0: blk_product */
  c->nch = (k->b + BLOCK_VC - 1) / BLOCK_VC;
  c->vc = (k->b + c->nch - 1) / c->nch;
  c->plocal = 0;
  for (size_t pl = 256; BLOCK_PRODUCT_ROWS == 4 && pl >= 64 && !c->plocal; pl /= 2)
    if (pl <= rt->dev.max_work_group &&
        (size_t)c->vc * (4 * pl + BLOCK_RUN) * sizeof(float) <= rt->dev.local_mem)
      c->plocal = pl;
  if (c->plocal)
    c->pgroups = (n + 4 * c->plocal - 1) / (4 * c->plocal) * (size_t)c->nch;

  data = (unsigned long long)k->slots * b * c->ld * sizeof(float);
  part = (c->ggroups * b * b > c->groups * b ? c->ggroups * b * b : c->groups * b) * sizeof(double);
  /* label, value, rows, vals (n each at most), chunk bounds and dots, first, kd */
  known = count ? 4ull * n * 4 + (n / BLOCK_CHUNK + count + 1) * (4 + b * 8) + (count + 1) * 4 +
                      count * b * 8
                : 0;
  matrix = (unsigned long long)dia->ndiag * (dia->kernel->packed ? (size_t)dia->rows : dia->pitch) *
           sizeof(float);
  if (data > rt->max_alloc || count * b * 8 > rt->max_alloc) {
    const int blocks = data > rt->max_alloc;
    return dsg_error_set(DSG_ERR_LIMIT,
                         "%s need one buffer of %s, over %s's largest allocation of %s%s "
                         "(try a smaller " DSG_PARAM("ncv") ")",
                         blocks ? "the block slots" : "the known vectors' dots",
                         spmv_cl_bytes(blocks ? data : count * b * 8, need), rt->dev.name,
                         spmv_cl_bytes(rt->max_alloc, cap),
                         rt->max_alloc_capped ? " (the " DSG_PARAM("cl_max_alloc") " cap)" : "");
  }
  if (data + part + known + matrix > rt->dev.global_mem)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "%d block slots of %d columns of %d floats and their tables need %s "
                         "beside the matrix's %s, over %s's %s of global memory "
                         "(try a smaller " DSG_PARAM("ncv") ")",
                         k->slots, k->b, k->n, spmv_cl_bytes(data + part + known, need),
                         spmv_cl_bytes(matrix, mat), rt->dev.name,
                         spmv_cl_bytes(rt->dev.global_mem, cap));
  return DSG_OK;
}

/* Builds kernels/block.cl for b columns (or takes it from the cache) and creates the kernels. */
static int build(spmv_block *k, cl_block *c)
{
  const spmv_cl_runtime *rt = c->rt;
  const int side = c->local >= 256 ? 16 : 8; /* side * side <= local */
  char opts[320];
  cl_int err = CL_SUCCESS;
  int status;
  snprintf(opts, sizeof(opts),
           "-cl-std=CL1.2 -DNB=%d -DLOCAL=%d -DSIDE=%d -DTROWS=%d -DRC=%d -DPLOCAL=%d -DVC=%d "
           "-DNCH=%d -DRUN=%d -DTX=%d -DTY=%d -DHALO=%d -DTVC=%d",
           k->b, (int)c->local, side, c->trows, BLOCK_RC, c->plocal ? (int)c->plocal : 64, c->vc,
           c->nch, BLOCK_RUN, BLOCK_TX, c->tile ? BLOCK_TY : 2, c->tile ? c->halo : 1,
           c->tile ? c->tvc : 1);
  status = spmv_cl_build(rt, "block", opts, &c->program);
  if (status != DSG_OK)
    return status;
  if (c->tile) { /* blk_product_tile, unless the device runs fewer work-items of it per group or
                  * has not the local memory it needs */
    size_t most = 0;
    cl_ulong lmem = 0;
    c->product = clCreateKernel(c->program, "blk_product_tile", &err);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "creating the block kernels", rt->dev.name);
    err = clGetKernelWorkGroupInfo(c->product, rt->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(most),
                                   &most, NULL);
    if (err == CL_SUCCESS)
      err = clGetKernelWorkGroupInfo(c->product, rt->device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof(lmem),
                                     &lmem, NULL);
    if (err == CL_SUCCESS && (most < BLOCK_TX * BLOCK_TY || lmem > rt->dev.local_mem)) {
      clReleaseKernel(c->product);
      c->product = NULL;
      c->tile = 0;
    }
  }
  if (c->plocal) { /* blk_product4, unless the device runs fewer work-items of it per group */
    size_t most = 0;
    c->product = clCreateKernel(c->program, "blk_product4", &err);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "creating the block kernels", rt->dev.name);
    err = clGetKernelWorkGroupInfo(c->product, rt->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(most),
                                   &most, NULL);
    if (err == CL_SUCCESS && most < c->plocal) {
      clReleaseKernel(c->product);
      c->product = NULL;
      c->plocal = 0;
    }
  }
  static const char *fn[] = {"blk_product",     "blk_axpby",      "blk_gram",      "blk_residuals",
                             "blk_sum_groups",  "blk_transform",  "blk_known_dot", "blk_known_sum",
                             "blk_known_apply", "blk_fill_random"};
  cl_kernel *dst[] = {&c->product,   &c->axpby, &c->gram, &c->residuals, &c->sum,
                      &c->transform, &c->kdot,  &c->ksum, &c->kapply,    &c->fill};
  for (size_t i = 0; i < sizeof(fn) / sizeof(fn[0]); i++) {
    size_t most = 0;
    if (*dst[i])
      continue; /* blk_product4 or blk_product_tile */
    *dst[i] = clCreateKernel(c->program, fn[i], &err);
    if (err != CL_SUCCESS)
      return spmv_cl_fail(err, "creating the block kernels", rt->dev.name);
    err = clGetKernelWorkGroupInfo(*dst[i], rt->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(most),
                                   &most, NULL);
    if (err == CL_SUCCESS && most < c->local)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "%s for blocks of %d columns runs at most %zu work-items per group on "
                           "%s, fewer than the %zu it needs (try a smaller " DSG_PARAM("ncv") ")",
                           fn[i], k->b, most, rt->dev.name, c->local);
  }
  return DSG_OK;
}

/* blk_product4's runs: the diagonals cut into runs of consecutive offsets (offsets[d + 1] ==
 * offsets[d] + 1), at most BLOCK_RUN diagonals each, from the device's copy of the offsets. */
static int upload_runs(spmv_block *k)
{
  cl_block *c = k->impl;
  const int ndiag = c->dia->ndiag;
  int *off = malloc((size_t)(ndiag > 0 ? ndiag : 1) * sizeof(*off));
  cl_int *runs = malloc(2 * (size_t)(ndiag > 0 ? ndiag : 1) * sizeof(*runs));
  cl_int err = CL_SUCCESS;
  int status = DSG_OK, nruns = 0;
  if (!off || !runs) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the runs of %d diagonals", ndiag);
    goto out;
  }
  err = clEnqueueReadBuffer(c->rt->queue, c->dia->offsets, CL_TRUE, 0, (size_t)ndiag * sizeof(int),
                            off, 0, NULL, NULL);
  for (int d = 0; d < ndiag && err == CL_SUCCESS;) {
    int len = 1;
    while (d + len < ndiag && len < BLOCK_RUN && off[d + len] == off[d + len - 1] + 1)
      len++;
    runs[2 * nruns] = d;
    runs[2 * nruns + 1] = len;
    nruns++;
    d += len;
  }
  if (err == CL_SUCCESS)
    c->runs = clCreateBuffer(c->rt->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             2 * (size_t)(nruns > 0 ? nruns : 1) * sizeof(cl_int), runs, &err);
  if (err != CL_SUCCESS) {
    status =
        spmv_cl_fail(err, "uploading the runs of the block product's diagonals", c->rt->dev.name);
    goto out;
  }
  c->nruns = nruns;
out:
  free(off);
  free(runs);
  return status;
}

/* blk_product_tile's plan where the matrix is a pixel stencil of reach <= BLOCK_HALO and the
 * device has the work-items and the local memory: the offsets (read back from the device)
 * decomposed as dy W + dx (spmv_dia_validate's decomposition, |dx| < W / 2), the reach, the
 * columns staged at a time (as many as BLOCK_TILE_BYTES or the device's local memory take, the
 * b columns cut into equal chunks) and each diagonal's position in the staged tile, uploaded.
 * Sets c->tile (0: not a stencil this kernel takes; not an error) and turns blk_product4 off. */
static int plan_tile(spmv_block *k)
{
  cl_block *c = k->impl;
  const spmv_cl_dia *dia = c->dia;
  const int ndiag = dia->ndiag, W = dia->width;
  const size_t items = BLOCK_TX * BLOCK_TY;
  int *off = NULL, *dx = NULL, *dy = NULL;
  cl_int err = CL_SUCCESS;
  int status = DSG_OK, halo = 0;
  size_t budget, per_col, vcmax;

  c->tile = 0;
  if (!BLOCK_PRODUCT_TILE || W <= 0 || ndiag <= 0 || c->rt->dev.max_work_group < items)
    return DSG_OK;
  off = malloc((size_t)ndiag * sizeof(*off));
  dx = malloc((size_t)ndiag * sizeof(*dx));
  dy = malloc((size_t)ndiag * sizeof(*dy));
  if (!off || !dx || !dy) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the stencil of %d diagonals", ndiag);
    goto out;
  }
  err = clEnqueueReadBuffer(c->rt->queue, dia->offsets, CL_TRUE, 0, (size_t)ndiag * sizeof(int),
                            off, 0, NULL, NULL);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "reading the block product's offsets", c->rt->dev.name);
    goto out;
  }
  for (int d = 0; d < ndiag; d++) {
    const int o = off[d];
    dy[d] = (o >= 0 ? o + W / 2 : o - (W - 1) / 2) / W;
    dx[d] = o - dy[d] * W;
    const int ax = dx[d] < 0 ? -dx[d] : dx[d], ay = dy[d] < 0 ? -dy[d] : dy[d];
    halo = ax > halo ? ax : halo;
    halo = ay > halo ? ay : halo;
  }
  if (halo > BLOCK_HALO)
    goto out; /* a reach the tile does not take: blk_product */
  per_col = (size_t)(BLOCK_TX + 2 * halo) * (size_t)(BLOCK_TY + 2 * halo) * sizeof(float);
  budget = c->rt->dev.local_mem > 1024 ? (size_t)c->rt->dev.local_mem - 1024 : 0;
  budget = budget < BLOCK_TILE_BYTES ? budget : BLOCK_TILE_BYTES;
  vcmax = budget / per_col;
  vcmax = vcmax < BLOCK_TILE_VC ? vcmax : BLOCK_TILE_VC;
  if (vcmax < 1)
    goto out;
  {
    const int nch = (k->b + (int)vcmax - 1) / (int)vcmax;
    const int height = (int)(((size_t)k->n + (size_t)W - 1) / (size_t)W);
    c->tvc = (k->b + nch - 1) / nch;
    c->halo = halo;
    c->tgx = (W + BLOCK_TX - 1) / BLOCK_TX;
    c->tgroups = (size_t)c->tgx * (size_t)((height + BLOCK_TY - 1) / BLOCK_TY);
  }
  for (int d = 0; d < ndiag; d++) /* off := the positions in the staged tile */
    off[d] = dy[d] * (BLOCK_TX + 2 * halo) + dx[d];
  c->tdelta = clCreateBuffer(c->rt->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                             (size_t)ndiag * sizeof(int), off, &err);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "uploading the block product's stencil", c->rt->dev.name);
    goto out;
  }
  c->tile = 1;
  c->plocal = 0;
out:
  free(off);
  free(dx);
  free(dy);
  return status;
}

/* The product's arguments that stay: the matrix, the sizes (blk_product's or blk_product4's). */
static int set_product_args(spmv_block *k)
{
  cl_block *c = k->impl;
  const spmv_cl_dia *dia = c->dia;
  const int stride = dia->kernel->packed ? dia->rows : (int)dia->pitch, n = k->n;
  const int ld = (int)c->ld;
  cl_kernel p = c->product;
  cl_int err =
      ARG(p, 0, c->data) | ARG(p, 8, ld) | ARG(p, 9, dia->A) | ARG(p, 10, stride) | ARG(p, 11, n);
  if (c->tile)
    err |= ARG(p, 12, dia->ndiag) | ARG(p, 13, c->tdelta) | ARG(p, 14, dia->width) |
           ARG(p, 15, c->tgx);
  else if (c->plocal)
    err |= ARG(p, 12, dia->offsets) | ARG(p, 13, c->runs) | ARG(p, 14, c->nruns);
  else
    err |= ARG(p, 12, dia->ndiag) | ARG(p, 13, dia->offsets);
  return err == CL_SUCCESS ? DSG_OK
                           : spmv_cl_fail(err, "setting blk_product's arguments", c->rt->dev.name);
}

int spmv_cl_block_create(spmv_block *k, const spmv_cl_runtime *rt, const spmv_cl_dia *dia)
{
  cl_block *c = calloc(1, sizeof(*c));
  const size_t bb = (size_t)k->b * (size_t)k->b;
  cl_int err = CL_SUCCESS;
  int status;

  k->impl = c;
  if (!c)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a block");
  c->rt = rt;
  c->dia = dia;
  c->local = rt->dev.max_work_group >= BLOCK_LOCAL ? BLOCK_LOCAL : 64;
  status = plan(k, c);
  if (status != DSG_OK)
    goto fail;
  c->ev = malloc(BLOCK_EVENTS * sizeof(*c->ev));
  c->ev_kind = malloc(BLOCK_EVENTS * sizeof(*c->ev_kind));
  c->stage = malloc(BLOCK_STAGES * bb * sizeof(double));
  if (!c->ev || !c->ev_kind || !c->stage) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the block bookkeeping");
    goto fail;
  }
  status = plan_tile(k);
  if (status != DSG_OK)
    goto fail;
  status = build(k, c);
  if (status != DSG_OK)
    goto fail;
  {
    const size_t data = (size_t)k->slots * (size_t)k->b * c->ld * sizeof(float);
    const size_t part =
        (c->ggroups * bb > c->groups * (size_t)k->b ? c->ggroups * bb : c->groups * (size_t)k->b) *
        sizeof(double);
    const float zero = 0.0f;
    c->data = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, data, NULL, &err);
    if (err == CL_SUCCESS)
      c->part = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, part, NULL, &err);
    if (err == CL_SUCCESS)
      c->result = clCreateBuffer(rt->ctx, CL_MEM_READ_WRITE, bb * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS)
      c->coef = clCreateBuffer(rt->ctx, CL_MEM_READ_ONLY, bb * sizeof(double), NULL, &err);
    if (err == CL_SUCCESS)
      err = clEnqueueFillBuffer(rt->queue, c->data, &zero, sizeof(zero), 0, data, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "allocating the blocks", rt->dev.name);
      goto fail;
    }
  }
  if (k->known.count > 0) {
    status = upload_known(k);
    if (status != DSG_OK)
      goto fail;
  }
  if (c->plocal) {
    status = upload_runs(k);
    if (status != DSG_OK)
      goto fail;
  }
  status = set_product_args(k);
  if (status != DSG_OK)
    goto fail;
  err = clFinish(rt->queue);
  if (err != CL_SUCCESS) {
    status = spmv_cl_fail(err, "zeroing the blocks", rt->dev.name);
    goto fail;
  }
  return DSG_OK;

fail:
  spmv_cl_block_destroy(k);
  return status;
}
