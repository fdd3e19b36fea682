/* The boundary network on a device (spmv_cl_net, kernels/net.cl) against the library's C
 * reference (app_net_run): the library's network on a synthetic photo's planes and on sizes
 * down to one pixel, and small random networks of other shapes (other -DNET_CHANNELS builds,
 * dilations past the image's side). The kernel sums in the reference's order without fused
 * multiply-adds: the map agrees within the logistic's exp (1e-6; spmv_image.h). The device is
 * $DIASEG_CL_DEVICE, else device 0; without a device the test is skipped (exit code 77). */
#include "check.h"
#include "diaseg_internal.h"
#include "net_random.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TEST_SKIP 77
#define MAP_TOL 1e-6

static const char *device_spec(void)
{
  const char *env = getenv("DIASEG_CL_DEVICE");
  return env && *env ? env : "0";
}

static void compare(spmv_cl_image *im, const app_net *net, const float *x, int w, int h,
                    const char *what)
{
  const size_t n = (size_t)w * h;
  float *ref = malloc(n * sizeof(*ref)), *dev = malloc(n * sizeof(*dev));
  double seconds = -1.0, worst = 0.0;
  CHECK(app_net_run(net, x, w, h, ref) == DSG_OK, "%s: C: %s", what, dsg_error_message());
  CHECK(spmv_cl_net(im, net, x, w, h, dev, &seconds) == DSG_OK, "%s: device: %s", what,
        dsg_error_message());
  for (size_t i = 0; i < n; i++) {
    const double e = fabs((double)ref[i] - (double)dev[i]);
    worst = e > worst || isnan(e) ? e : worst;
  }
  CHECK(worst <= MAP_TOL, "%s (%d x %d): |device - C| %g", what, w, h, worst);
  CHECK(seconds >= 0.0, "%s: kernel seconds %g", what, seconds);
  printf("test_cl_net: %-28s %4d x %-4d |device - C| %.2g\n", what, w, h, worst);
  free(ref);
  free(dev);
}

/* the library's planes from synthetic pixels, gPb and forest maps: edges of a disc and a bar */
static float *synthetic_planes(int w, int h)
{
  const size_t n = (size_t)w * h;
  unsigned char *px = malloc(3 * n);
  float *gpb = malloc(n * sizeof(float)), *forest = malloc(n * sizeof(float));
  float *x = malloc(APP_NET_INPUTS * n * sizeof(float));
  for (int y = 0; y < h; y++)
    for (int xx = 0; xx < w; xx++) {
      const size_t i = (size_t)y * w + xx;
      const double r = hypot(xx - 0.4 * w, y - 0.5 * h) - 0.25 * (w < h ? w : h);
      const int in = r<0.0, bar = xx> 0.7 * w;
      px[3 * i] = (unsigned char)(in ? 200 : bar ? 40 : 120);
      px[3 * i + 1] = (unsigned char)(in ? 60 : 130 + (xx * 7 + y * 3) % 20);
      px[3 * i + 2] = (unsigned char)(bar ? 220 : 90);
      gpb[i] = (float)exp(-r * r / 4.0) * 0.8f + test_uniform_in(0.0, 0.05);
      forest[i] = (float)exp(-r * r / 2.0) * 1.8f + (fabs(xx - 0.7 * w) < 1.0 ? 1.0f : 0.0f);
    }
  app_net_input(px, 3, gpb, forest, n, x);
  free(px);
  free(gpb);
  free(forest);
  return x;
}

int main(void)
{
  spmv_cl_device *list = NULL;
  spmv_cl_image *im = NULL;
  int count = 0;
  if (spmv_cl_devices(&list, &count) != DSG_OK) {
    printf("test_cl_net: skipped: no OpenCL device (%s)\n", dsg_error_message());
    return TEST_SKIP;
  }
  free(list);
  CHECK(spmv_cl_image_create(&im, device_spec(), NULL) == DSG_OK, "create: %s",
        dsg_error_message());
  if (!im)
    return check_report("test_cl_net");
  printf("test_cl_net: device %s\n", spmv_cl_image_device(im));
  const app_net *net = app_net_default();
  const int size[][2] = {{96, 64}, {1, 1}, {17, 3}, {5, 40}};
  for (size_t k = 0; k < sizeof(size) / sizeof(size[0]); k++) {
    float *x = synthetic_planes(size[k][0], size[k][1]);
    compare(im, net, x, size[k][0], size[k][1], "the library's network");
    free(x);
  }
  /* other shapes: random weights */
  const int d3[] = {1, 3, 2}, d1[] = {5};
  const int shape[][4] = {{2, 3, 3, 0}, {1, 32, 1, 1}, {7, 5, 3, 0}};
  for (size_t s = 0; s < sizeof(shape) / sizeof(shape[0]); s++) {
    const int inputs = shape[s][0], nc = shape[s][1], layers = shape[s][2];
    const int *dil = shape[s][3] ? d1 : d3;
    float *wt[3], *bias[3], out[64];
    app_net rnet;
    test_random_net(inputs, nc, layers, dil, 0.5, -0.1f, &rnet, wt, bias, out);
    const int w = 23, h = 4;
    float *x = malloc((size_t)inputs * w * h * sizeof(float));
    for (int k = 0; k < inputs * w * h; k++)
      x[k] = test_uniform_in(-1.0, 1.0);
    char what[64];
    snprintf(what, sizeof(what), "random, %d in, %d channels", inputs, nc);
    compare(im, &rnet, x, w, h, what);
    free(x);
    test_free_net(layers, wt, bias);
  }
  /* shapes out of range are refused with a message */
  app_net bad = *net;
  bad.channels = SPMV_NET_MAX_CHANNELS + 1;
  float one[APP_NET_INPUTS] = {0}, m1;
  CHECK(spmv_cl_net(im, &bad, one, 1, 1, &m1, NULL) == DSG_ERR_INVALID &&
            strstr(dsg_error_message(), "channels"),
        "33 channels: %s", dsg_error_message());
  spmv_cl_image_destroy(im);
  return check_report("test_cl_net");
}
