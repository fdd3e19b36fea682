/* The process-wide cache of OpenCL contexts, queues and built programs (cl_cache.h). */
#include "cl_cache.h"

#include "cl_runtime.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* One device, opened: the cache holds one reference to ctx and to queue. */
typedef struct cache_device {
  struct cache_device *next;
  cl_device_id device;
  cl_context ctx;
  cl_command_queue queue;
} cache_device;

/* One built program: the cache holds one reference to prog. Or one being built (building 1,
 * prog NULL): claimed by the thread that builds it, which keeps or abandons it; the others that
 * want it wait for that (built). */
typedef struct cache_program {
  struct cache_program *next;
  cl_context ctx;
  cl_device_id device;
  uint64_t hash; /* of source */
  size_t length; /* of source */
  char *source;  /* the text it was built from (compared in full after the hash) */
  char *options;
  cl_program prog;
  int building;
} cache_program;

/* One context's kept data (spmv_cl_cache_data_keep): the cache holds one reference to each
 * buffer. */
typedef struct cache_data {
  struct cache_data *next;
  cl_context ctx;
  const void *key;
  cl_mem mem[SPMV_CL_CACHE_DATA];
  int info[SPMV_CL_CACHE_DATA];
} cache_data;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t built = PTHREAD_COND_INITIALIZER; /* a claim kept, abandoned or forgotten */
static cache_device *devices;
static cache_program *programs;
static cache_data *datas;
static spmv_cl_cache_counts counts;
static int exit_hook; /* clear_at_exit is registered */

/* FNV-1a, 64 bits. */
static uint64_t text_hash(const char *s, size_t *length)
{
  uint64_t h = 14695981039346656037ull;
  const char *p = s;
  for (; *p; p++)
    h = (h ^ (unsigned char)*p) * 1099511628211ull;
  *length = (size_t)(p - s);
  return h;
}

static void free_program(cache_program *p)
{
  if (p->prog)
    clReleaseProgram(p->prog);
  if (!p->building)
    counts.programs--;
  free(p->source);
  free(p->options);
  free(p);
}

static void free_data(cache_data *d)
{
  for (int k = 0; k < SPMV_CL_CACHE_DATA; k++)
    if (d->mem[k])
      clReleaseMemObject(d->mem[k]);
  free(d);
}

/* Drops every program and the data of ctx, and with them, ctx's device. Under the lock. */
static void forget_locked(cl_context ctx)
{
  for (cache_data **pp = &datas; *pp;) {
    cache_data *d = *pp;
    if (ctx && d->ctx != ctx) {
      pp = &d->next;
      continue;
    }
    *pp = d->next;
    free_data(d);
  }
  for (cache_program **pp = &programs; *pp;) {
    cache_program *p = *pp;
    if (ctx && p->ctx != ctx) {
      pp = &p->next;
      continue;
    }
    *pp = p->next;
    free_program(p);
  }
  for (cache_device **dp = &devices; *dp;) {
    cache_device *d = *dp;
    if (ctx && d->ctx != ctx) {
      dp = &d->next;
      continue;
    }
    *dp = d->next;
    clReleaseCommandQueue(d->queue);
    clReleaseContext(d->ctx);
    free(d);
    counts.contexts--;
  }
  pthread_cond_broadcast(&built); /* claims dropped: their waiters look again */
}

/* At exit the cache is released, so that leak checkers see nothing held; when another thread
 * holds the lock (exit() called in the middle of a run elsewhere), it is left to the system
 * rather than waited for. */
static void clear_at_exit(void)
{
  if (pthread_mutex_trylock(&cache_lock) != 0)
    return;
  forget_locked(NULL);
  pthread_mutex_unlock(&cache_lock);
}

int spmv_cl_cache_queue(cl_device_id device, const char *dev_name, cl_context *ctx,
                        cl_command_queue *queue)
{
  cache_device *d;
  cl_int err;
  int status = DSG_OK;

  *ctx = NULL;
  *queue = NULL;
  pthread_mutex_lock(&cache_lock);
  for (d = devices; d; d = d->next)
    if (d->device == device)
      break;
  if (!d) {
    d = calloc(1, sizeof(*d));
    if (!d) {
      status =
          dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the OpenCL cache's entry for %s", dev_name);
      goto out_unlock;
    }
    d->device = device;
    d->ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "clCreateContext", dev_name);
      goto out_free;
    }
    d->queue = clCreateCommandQueue(d->ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    if (err != CL_SUCCESS) {
      status = spmv_cl_fail(err, "clCreateCommandQueue", dev_name);
      goto out_release_context;
    }
    if (!exit_hook)
      exit_hook = atexit(clear_at_exit) == 0;
    d->next = devices;
    devices = d;
    counts.contexts++;
  }
  clRetainContext(d->ctx);
  clRetainCommandQueue(d->queue);
  *ctx = d->ctx;
  *queue = d->queue;
  goto out_unlock;

out_release_context:
  clReleaseContext(d->ctx);
out_free:
  free(d);
out_unlock:
  pthread_mutex_unlock(&cache_lock);
  return status;
}

/* The link to the entry of (ctx, device, source, options), built or claimed, or NULL: at most
 * one, since a program is claimed only where there is none. Under the lock. */
static cache_program **slot_locked(cl_context ctx, cl_device_id device, uint64_t hash,
                                   size_t length, const char *source, const char *options)
{
  for (cache_program **pp = &programs; *pp; pp = &(*pp)->next) {
    const cache_program *p = *pp;
    if (p->ctx == ctx && p->device == device && p->hash == hash && p->length == length &&
        strcmp(p->options, options) == 0 && memcmp(p->source, source, length) == 0)
      return pp;
  }
  return NULL;
}

/* The link to the claim of (ctx, device, source, options), or NULL when there is none
 * (forgotten, or never made). Under the lock. */
static cache_program **claim_locked(cl_context ctx, cl_device_id device, const char *source,
                                    const char *options)
{
  size_t length;
  const uint64_t hash = text_hash(source, &length);
  cache_program **pp = slot_locked(ctx, device, hash, length, source, options);
  return pp && (*pp)->building ? pp : NULL;
}

int spmv_cl_cache_program_claim(cl_context ctx, cl_device_id device, const char *source,
                                const char *options, cl_program *prog)
{
  size_t length;
  const uint64_t hash = text_hash(source, &length);
  cache_program **pp, *p;

  *prog = NULL;
  pthread_mutex_lock(&cache_lock);
  /* a build of the same program in flight on another thread: wait for it rather than build it
   * twice (the CLI's warm-up and its run, both at the device's first programs) */
  while ((pp = slot_locked(ctx, device, hash, length, source, options)) && (*pp)->building)
    pthread_cond_wait(&built, &cache_lock);
  if (pp) {
    clRetainProgram((*pp)->prog);
    counts.reuses++;
    *prog = (*pp)->prog;
  } else { /* the caller builds it: claimed, so that others wait (out of memory: unclaimed) */
    p = calloc(1, sizeof(*p));
    if (p) {
      p->source = malloc(length + 1);
      p->options = strdup(options);
    }
    if (p && p->source && p->options) {
      p->ctx = ctx;
      p->device = device;
      p->hash = hash;
      p->length = length;
      memcpy(p->source, source, length + 1);
      p->building = 1;
      p->next = programs;
      programs = p;
    } else if (p) {
      free(p->source);
      free(p->options);
      free(p);
    }
  }
  pthread_mutex_unlock(&cache_lock);
  return *prog != NULL;
}

/* Unlinks and frees the entry *pp links to. Under the lock. */
static void drop_locked(cache_program **pp)
{
  cache_program *p = *pp;
  *pp = p->next;
  free_program(p);
}

void spmv_cl_cache_program_abandon(cl_context ctx, cl_device_id device, const char *source,
                                   const char *options)
{
  pthread_mutex_lock(&cache_lock);
  cache_program **pp = claim_locked(ctx, device, source, options);
  if (pp)
    drop_locked(pp);
  pthread_cond_broadcast(&built);
  pthread_mutex_unlock(&cache_lock);
}

void spmv_cl_cache_program_keep(cl_context ctx, cl_device_id device, const char *source,
                                const char *options, cl_program prog)
{
  cache_device *d;

  pthread_mutex_lock(&cache_lock);
  counts.builds++;
  cache_program **pp = claim_locked(ctx, device, source, options);
  for (d = devices; d; d = d->next)
    if (d->ctx == ctx)
      break;
  if (pp && d) {
    /* the claim becomes the program; a context the cache no longer holds (cleared or forgotten
     * since the caller opened it) keeps nothing, nor does a build that was never claimed (out of
     * memory at the claim) */
    clRetainProgram(prog);
    (*pp)->prog = prog;
    (*pp)->building = 0;
    counts.programs++;
  } else if (pp) {
    drop_locked(pp);
  }
  pthread_cond_broadcast(&built);
  pthread_mutex_unlock(&cache_lock);
}

int spmv_cl_cache_data_get(cl_context ctx, const void *key, cl_mem *mem, int *info)
{
  int found = 0;
  pthread_mutex_lock(&cache_lock);
  for (cache_data *d = datas; d && !found; d = d->next)
    if (d->ctx == ctx && d->key == key) {
      for (int k = 0; k < SPMV_CL_CACHE_DATA; k++) {
        mem[k] = d->mem[k];
        if (mem[k])
          clRetainMemObject(mem[k]);
        info[k] = d->info[k];
      }
      found = 1;
    }
  pthread_mutex_unlock(&cache_lock);
  return found;
}

void spmv_cl_cache_data_keep(cl_context ctx, const void *key, const cl_mem *mem, const int *info)
{
  cache_data *d = calloc(1, sizeof(*d));
  if (!d)
    return;
  d->ctx = ctx;
  d->key = key;
  for (int k = 0; k < SPMV_CL_CACHE_DATA; k++) {
    d->mem[k] = mem[k];
    if (mem[k])
      clRetainMemObject(mem[k]);
    d->info[k] = info[k];
  }
  pthread_mutex_lock(&cache_lock);
  int held = 0; /* only for a context the cache holds, as programs */
  for (cache_device *dev = devices; dev && !held; dev = dev->next)
    held = dev->ctx == ctx;
  for (cache_data **pp = &datas; held && *pp; pp = &(*pp)->next)
    if ((*pp)->ctx == ctx) { /* the entry before goes */
      cache_data *old = *pp;
      *pp = old->next;
      free_data(old);
      break;
    }
  if (held) {
    d->next = datas;
    datas = d;
    d = NULL;
  }
  pthread_mutex_unlock(&cache_lock);
  if (d)
    free_data(d);
}

void spmv_cl_cache_forget(cl_context ctx)
{
  if (!ctx)
    return;
  pthread_mutex_lock(&cache_lock);
  forget_locked(ctx);
  pthread_mutex_unlock(&cache_lock);
}

void spmv_cl_cache_clear(void)
{
  pthread_mutex_lock(&cache_lock);
  forget_locked(NULL);
  memset(&counts, 0, sizeof(counts));
  pthread_mutex_unlock(&cache_lock);
}

spmv_cl_cache_counts spmv_cl_cache_stats(void)
{
  spmv_cl_cache_counts c;
  pthread_mutex_lock(&cache_lock);
  c = counts;
  pthread_mutex_unlock(&cache_lock);
  return c;
}
