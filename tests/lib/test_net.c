/* The boundary network's C reference (app/lib/net.c) against answers known without it:
 *  - the reflection at the edges on hand-counted indices (PyTorch's "reflect", repeated);
 *  - small random networks (several shapes, dilations past the image's side) against a direct
 *    evaluation written here in double, pixel by pixel, with its own reflection;
 *  - the library's network against PyTorch: the map tests/bsds/fit_net.py computed with PyTorch
 *    for a fixed input and wrote beside the weights (app/lib/net/boundary.inc);
 *  - the input planes of a tiny image and the blend's values. */
#include "check.h"
#include "diaseg_internal.h"
#include "net_random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/boundary.inc" /* the check: app_net_check_input, app_net_check_map */

/* mirror without repeating the edge, by walking: an independent form of app_net_reflect */
static int walk_reflect(int i, int n)
{
  if (n == 1)
    return 0;
  while (i < 0 || i >= n)
    i = i < 0 ? -i : 2 * (n - 1) - i;
  return i;
}

/* the network at one pixel in double, straight from its definition */
static double direct(const app_net *net, const float *x, int w, int h, int px, int py)
{
  const int nc = net->channels;
  const size_t n = (size_t)w * h;
  /* every layer at every pixel: small images only */
  double *a = malloc((size_t)nc * n * sizeof(double)), *b = malloc((size_t)nc * n * sizeof(double));
  double *in = NULL;
  int cin = net->inputs;
  for (int l = 0; l < net->layers; l++) {
    double *out = l % 2 ? b : a;
    const int d = net->dilation[l];
    for (int o = 0; o < nc; o++)
      for (int y = 0; y < h; y++)
        for (int xx = 0; xx < w; xx++) {
          double s = net->bias[l][o];
          for (int c = 0; c < cin; c++)
            for (int ky = 0; ky < 3; ky++)
              for (int kx = 0; kx < 3; kx++) {
                const size_t j = (size_t)walk_reflect(y + (ky - 1) * d, h) * w +
                                 (size_t)walk_reflect(xx + (kx - 1) * d, w);
                const double v = l == 0 ? (double)x[(size_t)c * n + j] : in[(size_t)c * n + j];
                s += (double)net->weight[l][((o * cin + c) * 3 + ky) * 3 + kx] * v;
              }
          out[(size_t)o * n + (size_t)y * w + xx] = s > 0.0 ? s : 0.0;
        }
    in = out;
    cin = nc;
  }
  const size_t i = (size_t)py * w + px;
  double z = net->out_bias;
  for (int o = 0; o < nc; o++)
    z += (double)net->out_weight[o] * in[(size_t)o * n + i];
  for (int c = 0; c < net->inputs; c++)
    z += (double)net->out_weight[nc + c] * (double)x[(size_t)c * n + i];
  free(a);
  free(b);
  return 1.0 / (1.0 + exp(-z));
}

static void random_case(int inputs, int channels, int layers, const int *dilation, int w, int h)
{
  float *wt[8], *bias[8], out[64];
  app_net net;
  const size_t n = (size_t)w * h;
  test_random_net(inputs, channels, layers, dilation, 0.6, 0.1f, &net, wt, bias, out);
  float *x = malloc((size_t)inputs * n * sizeof(*x)), *M = malloc(n * sizeof(*M));
  for (size_t k = 0; k < (size_t)inputs * n; k++)
    x[k] = test_uniform_in(-1.0, 1.5);
  CHECK(app_net_run(&net, x, w, h, M) == DSG_OK, "run: %s", dsg_error_message());
  double worst = 0.0;
  for (int y = 0; y < h; y++)
    for (int xx = 0; xx < w; xx++) {
      const double e = fabs((double)M[(size_t)y * w + xx] - direct(&net, x, w, h, xx, y));
      worst = e > worst ? e : worst;
    }
  CHECK(worst <= 2e-6, "%d inputs, %d channels, %d layers on %d x %d: |M - direct| %g", inputs,
        channels, layers, w, h, worst);
  test_free_net(layers, wt, bias);
  free(x);
  free(M);
}

int main(void)
{
  /* the reflection: -i reads i, n - 1 + i reads n - 1 - i, again where still outside */
  const int refl[][3] = {{-1, 5, 1}, {-4, 5, 4}, {5, 5, 3},  {8, 5, 0}, {12, 5, 4}, {-9, 5, 1},
                         {0, 5, 0},  {4, 5, 4},  {-3, 2, 1}, {7, 1, 0}, {-8, 3, 0}, {9, 3, 1}};
  for (size_t k = 0; k < sizeof(refl) / sizeof(refl[0]); k++)
    CHECK(app_net_reflect(refl[k][0], refl[k][1]) == refl[k][2], "reflect(%d, %d) = %d, not %d",
          refl[k][0], refl[k][1], app_net_reflect(refl[k][0], refl[k][1]), refl[k][2]);
  for (int n = 1; n < 12; n++)
    for (int i = -40; i < 40; i++)
      CHECK(app_net_reflect(i, n) == walk_reflect(i, n), "reflect(%d, %d)", i, n);

  /* random networks against the direct evaluation, dilations past the side included */
  const int d1[] = {1}, d3[] = {1, 3, 2}, d7[] = {1, 2, 4, 8, 4, 2, 1};
  random_case(1, 1, 1, d1, 4, 3);
  random_case(2, 3, 3, d3, 7, 5);
  random_case(5, 4, 7, d7, 11, 6);
  random_case(3, 5, 3, d3, 1, 9);
  random_case(2, 2, 7, d7, 2, 2);

  /* the library's network reproduces PyTorch's map of the check input */
  const app_net *net = app_net_default();
  CHECK(net->inputs == APP_NET_INPUTS && net->layers >= 1 && net->channels >= 1,
        "the library's network: %d inputs, %d layers", net->inputs, net->layers);
  const int cw = APP_NET_CHECK_W, ch = APP_NET_CHECK_H;
  float M[APP_NET_CHECK_W * APP_NET_CHECK_H];
  CHECK(app_net_run(net, app_net_check_input, cw, ch, M) == DSG_OK, "run: %s", dsg_error_message());
  double worst = 0.0, spread = 0.0;
  for (int i = 0; i < cw * ch; i++) {
    const double e = fabs((double)M[i] - (double)app_net_check_map[i]);
    worst = e > worst ? e : worst;
    spread += fabs((double)app_net_check_map[i] - (double)app_net_check_map[0]);
  }
  CHECK(worst <= 2e-5, "the library's network against PyTorch's map: |M - torch| %g", worst);
  CHECK(spread > 1e-3, "the check map is flat (%g): it tests nothing", spread);

  /* the input planes: gPb, the forest's map held to the cap, the colours scaled (gray: one
   * byte three times; alpha unread) */
  const unsigned char rgba[8] = {255, 0, 51, 7, 0, 255, 102, 200};
  const float gpb[2] = {0.25f, 0.5f}, forest[2] = {2.0f, 0.75f};
  float x[10];
  app_net_input(rgba, 4, gpb, forest, 2, x);
  const float want[10] = {0.25f, 0.5f, 1.5f, 0.75f, 2.2f, -1.8f, -1.8f, 2.2f, -1.0f, -0.2f};
  for (int k = 0; k < 10; k++)
    CHECK(CLOSE(x[k], want[k], 1e-6, 1e-6), "input %d: %g, not %g", k, x[k], want[k]);
  const unsigned char gray[2] = {0, 255};
  app_net_input(gray, 1, gpb, forest, 2, x);
  CHECK(x[4] == x[6] && x[6] == x[8] && x[5] == x[7] && x[7] == x[9] &&
            CLOSE(x[4], -1.8, 1e-6, 1e-6) && CLOSE(x[5], 2.2, 1e-6, 1e-6),
        "gray input: %g %g %g / %g %g %g", x[4], x[6], x[8], x[5], x[7], x[9]);

  /* the blend: (1 - w) E + w sqrt(M) */
  float E[3] = {0.2f, 0.8f, 0.0f};
  const float Mb[3] = {0.25f, 0.0f, 1.0f};
  app_net_blend(E, Mb, 0.5, 3);
  CHECK(CLOSE(E[0], 0.35, 1e-6, 1e-7) && CLOSE(E[1], 0.4, 1e-6, 1e-7) &&
            CLOSE(E[2], 0.5, 1e-6, 1e-7),
        "blend: %g %g %g", E[0], E[1], E[2]);
  return check_report("test_net");
}
