/* The boundary network on the device (spmv/opencl/cl_image.c, spmv_cl_net). The C reference is
 * app_net_run (app/lib/net.c); spmv/spmv_image.h states the network and the tolerances.
 *
 * net_layer: one work-item per pixel (x, y), all of the layer's filters: NET_CHANNELS
 * accumulators start at the bias and take, for each input plane c and tap (ky, kx), the weight
 * times the plane at (y + (ky - 1) d, x + (kx - 1) d) reflected at the edges; then max(0, .).
 * The weights' index depends only on the loop, the same for every work-item at the same time:
 * their loads are broadcasts from the constant cache. The sums run in the reference's order and
 * without fused multiply-adds (FP_CONTRACT OFF), so a layer is the reference's bit for bit.
 *
 * net_out: one work-item per pixel: the 1 x 1 filter over the last layer's channels and then the
 * inputs, plus the bias, and the logistic. NET_CHANNELS is a build option (-D). */
#pragma OPENCL FP_CONTRACT OFF

/* i in a row of n reflected at the edges: -i reads i, repeatedly where i is far out */
static int net_reflect(int i, const int n)
{
  if (n <= 1)
    return 0;
  const int period = 2 * (n - 1);
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - i;
}

__kernel void net_layer(const int w, const int h, const int cin, const int d,
                        __global const float *in, __constant const float *weight,
                        __constant const float *bias, __global float *out)
{
  const int x = get_global_id(0), y = get_global_id(1);
  if (x >= w || y >= h)
    return;
  const size_t n = (size_t)w * h;
  float acc[NET_CHANNELS];
  for (int o = 0; o < NET_CHANNELS; o++)
    acc[o] = bias[o];
  int sx[3], sy[3];
  for (int k = 0; k < 3; k++) {
    sx[k] = net_reflect(x + (k - 1) * d, w);
    sy[k] = net_reflect(y + (k - 1) * d, h);
  }
  for (int c = 0; c < cin; c++)
    for (int ky = 0; ky < 3; ky++) {
      __global const float *row = in + (size_t)c * n + (size_t)sy[ky] * w;
      for (int kx = 0; kx < 3; kx++) {
        const float v = row[sx[kx]];
        __constant const float *wk = weight + (c * 3 + ky) * 3 + kx;
        for (int o = 0; o < NET_CHANNELS; o++)
          acc[o] += wk[o * cin * 9] * v;
      }
    }
  const size_t i = (size_t)y * w + x;
  for (int o = 0; o < NET_CHANNELS; o++)
    out[(size_t)o * n + i] = acc[o] > 0.0f ? acc[o] : 0.0f;
}

__kernel void net_out(const int n, const int inputs, __global const float *last,
                      __global const float *x, __constant const float *weight, const float bias,
                      __global float *M)
{
  const int i = get_global_id(0);
  if (i >= n)
    return;
  float z = bias;
  for (int o = 0; o < NET_CHANNELS; o++)
    z += weight[o] * last[(size_t)o * n + i];
  for (int c = 0; c < inputs; c++)
    z += weight[NET_CHANNELS + c] * x[(size_t)c * n + i];
  M[i] = 1.0f / (1.0f + exp(-z));
}
