/* The boundary network: a small convolutional network that refines the hierarchy's boundary map
 * from gPb, the edge forest's map and the photo's colours (docs/PIPELINE.md "7c"). Its weights
 * (app/lib/net/boundary.inc) were fit by tests/bsds/fit_net.py on BSDS500 train to the persons'
 * majority boundaries; this file is the network's C reference (the OpenCL kernels in
 * kernels/net.cl compute the same sums in the same order) and the input the library hands it.
 *
 * The network: APP_NET_LAYERS layers of 3 x 3 convolutions of `channels` filters with dilations
 * 1, 2, 4, 8, 4, 2, 1 (a receptive field of 45 pixels) and ReLU, the image reflected at its edges
 * (the pixel at -i reads i, PyTorch's "reflect"); then one 1 x 1 filter over the last layer's
 * channels and the inputs, and the logistic: M in (0, 1). */
#include "diaseg_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "net/boundary.inc" /* app_net_boundary */

const app_net *app_net_default(void) { return &app_net_boundary; }

int app_net_reflect(int i, int n)
{
  if (n <= 1)
    return 0;
  const int period = 2 * (n - 1);
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - i;
}

void app_net_input(const unsigned char *pixels, int channels, const float *gpb, const float *forest,
                   size_t n, float *x)
{
  const int gray = channels < 3; /* 1 gray, 2 gray + alpha */
  for (size_t i = 0; i < n; i++) {
    const unsigned char *p = pixels + i * (size_t)channels;
    x[i] = gpb[i];
    x[n + i] = forest[i] < APP_NET_FOREST_CAP ? forest[i] : APP_NET_FOREST_CAP;
    for (int c = 0; c < 3; c++)
      x[(2 + (size_t)c) * n + i] =
          ((float)p[gray ? 0 : c] / 255.0f - APP_NET_COLOUR_MEAN) / APP_NET_COLOUR_SPREAD;
  }
}

/* One layer: out[o] = max(0, bias[o] + sum over c, ky, kx of weight[o][c][ky][kx] x
 * in[c] at (y + (ky - 1) d, x + (kx - 1) d), reflected), the sum in that order. acc: the thread's
 * channels x w floats. */
static void layer_row(const app_net *net, int l, const float *in, int cin, int w, int h, int y,
                      float *acc, float *out)
{
  const int nc = net->channels, d = net->dilation[l];
  const size_t n = (size_t)w * h;
  const float *weight = net->weight[l], *bias = net->bias[l];
  for (int o = 0; o < nc; o++)
    for (int x = 0; x < w; x++)
      acc[(size_t)o * w + x] = bias[o];
  /* the columns each tap reads: x + (kx - 1) d, reflected at the edges */
  for (int c = 0; c < cin; c++)
    for (int ky = 0; ky < 3; ky++) {
      const float *row = in + (size_t)c * n + (size_t)app_net_reflect(y + (ky - 1) * d, h) * w;
      for (int kx = 0; kx < 3; kx++) {
        const int dx = (kx - 1) * d;
        /* the interior [lo, hi) reads row[x + dx] directly */
        const int lo = dx < 0 ? (-dx < w ? -dx : w) : 0,
                  hi = dx > 0 ? (w - dx > 0 ? w - dx : 0) : w;
        for (int o = 0; o < nc; o++) {
          const float wv = weight[((size_t)(o * cin + c) * 3 + ky) * 3 + kx];
          float *a = acc + (size_t)o * w;
          for (int x = 0; x < lo && x < w; x++)
            a[x] += wv * row[app_net_reflect(x + dx, w)];
#pragma omp simd
          for (int x = lo; x < hi; x++)
            a[x] += wv * row[x + dx];
          for (int x = hi > lo ? hi : lo; x < w; x++)
            a[x] += wv * row[app_net_reflect(x + dx, w)];
        }
      }
    }
  for (int o = 0; o < nc; o++)
    for (int x = 0; x < w; x++) {
      const float v = acc[(size_t)o * w + x];
      out[(size_t)o * n + (size_t)y * w + x] = v > 0.0f ? v : 0.0f;
    }
}

float app_net_logistic(float z) { return 1.0f / (1.0f + expf(-z)); }

int app_net_run(const app_net *net, const float *x, int w, int h, float *M)
{
  const size_t n = (size_t)w * h, nc = (size_t)net->channels;
  const int threads = omp_get_max_threads();
  float *a = malloc(nc * n * sizeof(*a)), *b = malloc(nc * n * sizeof(*b));
  float *acc = malloc((size_t)threads * nc * (size_t)w * sizeof(*acc));
  int status = DSG_OK;
  if (!a || !b || !acc) {
    status = dsg_error_set(DSG_ERR_NOMEM,
                           "cannot allocate the boundary network's %zu channels of %zu pixels", nc,
                           n);
    goto out;
  }
  const float *in = x;
  int cin = net->inputs;
  for (int l = 0; l < net->layers; l++) {
    float *out = l % 2 ? b : a;
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++)
      layer_row(net, l, in, cin, w, h, y, acc + (size_t)omp_get_thread_num() * nc * w, out);
    in = out;
    cin = net->channels;
  }
  /* the 1 x 1 output over the last layer's channels, then the inputs */
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) {
    float z = net->out_bias;
    for (size_t o = 0; o < nc; o++)
      z += net->out_weight[o] * in[o * n + i];
    for (int c = 0; c < net->inputs; c++)
      z += net->out_weight[nc + (size_t)c] * x[(size_t)c * n + i];
    M[i] = app_net_logistic(z);
  }
out:
  free(a);
  free(b);
  free(acc);
  return status;
}

void app_net_blend(float *E, const float *M, double weight, size_t n)
{
  for (size_t i = 0; i < n; i++)
    E[i] = (float)((1.0 - weight) * (double)E[i] + weight * sqrt((double)M[i]));
}
