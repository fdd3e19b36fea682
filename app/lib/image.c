/* Images in memory: copies, bilinear resampling. */
#include "diaseg_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int dsg_image_from_pixels(dsg_image *img, int width, int height, int channels,
                          const unsigned char *pixels)
{
  size_t bytes;
  memset(img, 0, sizeof(*img));
  if (width < 1 || height < 1 || channels < 1 || channels > 4)
    return dsg_error_set(DSG_ERR_INVALID, "bad image shape %d x %d x %d", width, height, channels);
  if ((size_t)width > SIZE_MAX / (size_t)height / (size_t)channels)
    return dsg_error_set(DSG_ERR_LIMIT, "image %d x %d x %d overflows size_t", width, height,
                         channels);
  bytes = (size_t)width * (size_t)height * (size_t)channels;
  img->pixels = malloc(bytes);
  if (!img->pixels)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu bytes of pixels", bytes);
  if (pixels)
    memcpy(img->pixels, pixels, bytes);
  else
    memset(img->pixels, 0, bytes);
  img->width = width;
  img->height = height;
  img->channels = channels;
  return DSG_OK;
}

int dsg_image_resize(const dsg_image *src, int width, int height, dsg_image *dst)
{
  const int c = src->channels;
  int status = dsg_image_from_pixels(dst, width, height, c, NULL);
  if (status != DSG_OK)
    return status;
#pragma omp parallel for schedule(static)
  for (int y = 0; y < height; y++) {
    /* pixel centres map onto pixel centres */
    double sy = ((double)y + 0.5) * src->height / height - 0.5;
    int y0 = sy < 0 ? 0 : (int)sy;
    int y1 = y0 + 1 < src->height ? y0 + 1 : src->height - 1;
    double fy = sy < 0 ? 0.0 : sy - y0;
    for (int x = 0; x < width; x++) {
      double sx = ((double)x + 0.5) * src->width / width - 0.5;
      int x0 = sx < 0 ? 0 : (int)sx;
      int x1 = x0 + 1 < src->width ? x0 + 1 : src->width - 1;
      double fx = sx < 0 ? 0.0 : sx - x0;
      for (int k = 0; k < c; k++) {
        const unsigned char *p = src->pixels;
        double a = p[((size_t)y0 * src->width + x0) * c + k],
               b = p[((size_t)y0 * src->width + x1) * c + k];
        double e = p[((size_t)y1 * src->width + x0) * c + k],
               f = p[((size_t)y1 * src->width + x1) * c + k];
        double v = (a * (1 - fx) + b * fx) * (1 - fy) + (e * (1 - fx) + f * fx) * fy;
        dst->pixels[((size_t)y * width + x) * c + k] = (unsigned char)(v + 0.5);
      }
    }
  }
  return DSG_OK;
}

int app_image_same(const dsg_image *a, const dsg_image *b)
{
  return a->width == b->width && a->height == b->height && a->channels == b->channels &&
         memcmp(a->pixels, b->pixels, (size_t)a->width * (size_t)a->height * (size_t)a->channels) ==
             0;
}

void dsg_image_free(dsg_image *img)
{
  if (!img)
    return;
  free(img->pixels);
  memset(img, 0, sizeof(*img));
}
