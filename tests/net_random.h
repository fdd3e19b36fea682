/* Random boundary networks for the tests of the network's C reference (tests/lib/test_net.c)
 * and of its kernel (tests/spmv/test_cl_net.c): test_random_net fills w, bias (layers entries,
 * malloc'd; test_free_net frees them) and out (channels + inputs floats) from check.h's
 * deterministic randomness, the weights in [-spread, spread], the biases in [-0.2, 0.3], the
 * output's weights in [-1, 1], and points *net at them. */
#ifndef DIASEG_TEST_NET_RANDOM_H
#define DIASEG_TEST_NET_RANDOM_H

#include "check.h"
#include "diaseg_internal.h"

#include <stdlib.h>

static inline float test_uniform_in(double lo, double hi)
{
  return (float)(lo + (hi - lo) * test_uniform());
}

static inline void test_random_net(int inputs, int channels, int layers, const int *dilation,
                                   double spread, float out_bias, app_net *net, float **w,
                                   float **bias, float *out)
{
  for (int l = 0; l < layers; l++) {
    const int cin = l ? channels : inputs;
    w[l] = malloc((size_t)channels * cin * 9 * sizeof(float));
    bias[l] = malloc((size_t)channels * sizeof(float));
    for (int k = 0; k < channels * cin * 9; k++)
      w[l][k] = test_uniform_in(-spread, spread);
    for (int k = 0; k < channels; k++)
      bias[l][k] = test_uniform_in(-0.2, 0.3);
  }
  for (int k = 0; k < channels + inputs; k++)
    out[k] = test_uniform_in(-1.0, 1.0);
  net->inputs = inputs;
  net->channels = channels;
  net->layers = layers;
  net->dilation = dilation;
  net->weight = (const float *const *)w;
  net->bias = (const float *const *)bias;
  net->out_weight = out;
  net->out_bias = out_bias;
}

static inline void test_free_net(int layers, float **w, float **bias)
{
  for (int l = 0; l < layers; l++) {
    free(w[l]);
    free(bias[l]);
  }
}

#endif /* DIASEG_TEST_NET_RANDOM_H */
