/* Image loading (hardened stb_image), synthetic images, resampling and features. */
#include "app_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <stb_image.h>

int app_read_file(const char *path, unsigned char **data, size_t *len)
{
  struct stat st;
  FILE *f = NULL;
  unsigned char *buf = NULL;
  int status = DSG_OK;

  *data = NULL;
  if (stat(path, &st) != 0)
    return dsg_error_set(DSG_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
  if (S_ISDIR(st.st_mode))
    return dsg_error_set(DSG_ERR_IO, "'%s' is a directory, not an image", path);
  if (!S_ISREG(st.st_mode))
    return dsg_error_set(DSG_ERR_IO, "'%s' is not a regular file", path);
  if (st.st_size == 0)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is empty, not an image", path);
  if ((unsigned long long)st.st_size > APP_MAX_FILE_BYTES)
    return dsg_error_set(DSG_ERR_LIMIT, "'%s' has %lld bytes, over diaseg's %zu-byte file limit",
                         path, (long long)st.st_size, APP_MAX_FILE_BYTES);
  f = fopen(path, "rb");
  if (!f)
    return dsg_error_set(DSG_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
  buf = malloc((size_t)st.st_size);
  if (!buf) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %lld bytes to read '%s'",
                           (long long)st.st_size, path);
    goto out_close;
  }
  if (fread(buf, 1, (size_t)st.st_size, f) != (size_t)st.st_size) {
    status = dsg_error_set(DSG_ERR_IO, "cannot read '%s': %s", path,
                           ferror(f) ? strerror(errno) : "the file shrank while reading");
    free(buf);
    goto out_close;
  }
  *data = buf;
  *len = (size_t)st.st_size;
out_close:
  fclose(f);
  return status;
}

static const char *format_name(app_image_format fmt)
{
  switch (fmt) {
  case APP_FMT_PNG: return "PNG";
  case APP_FMT_JPEG: return "JPEG";
  case APP_FMT_BMP: return "BMP";
  case APP_FMT_TGA: return "TGA";
  case APP_FMT_PNM: return "PNM";
  default: return "image";
  }
}

/* stb keeps its last failure reason until the next failure, and stbi_info probes every format
 * (the JPEG probe of a PNG leaves "no SOI"); some decoder paths fail without a reason. A probe
 * of one zero byte fails in every format and leaves one known reason: the one returned here. A
 * reason still equal to it after a decode is not the decoder's. */
static const char *stb_reason_reset(void)
{
  static const unsigned char zero[1] = {0};
  int w, h, c;
  stbi_info_from_memory(zero, 1, &w, &h, &c);
  return stbi_failure_reason();
}

int app_image_decode(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                     app_image *img)
{
  unsigned char *pixels = NULL;
  int w = 0, h = 0, comp = 0, w2 = 0, h2 = 0, c2 = 0, status;
  long dw = -1, dh = -1;
  app_image_format fmt;
  const char *why, *stale;

  memset(img, 0, sizeof(*img));
  if (len == 0)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is empty, not an image", name);
  if (len > (size_t)INT32_MAX)
    return dsg_error_set(DSG_ERR_LIMIT, "'%s' is too large for the image decoder", name);
  fmt = app_image_sniff(file, len, name);
  /* the container first: no stb decoder sees a file whose structure is broken */
  status = app_image_check(fmt, file, len, name, &dw, &dh);
  if (status != DSG_OK)
    return status;
  if (dw < 1 || dh < 1)
    return dsg_error_set(DSG_ERR_FORMAT,
                         "'%s' declares a %ld x %ld image: it needs at least one "
                         "pixel",
                         name, dw, dh);
  if ((size_t)dw > max_pixels / (size_t)dh)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "'%s' is %ld x %ld = %.0f pixels, over the cap of %zu "
                         "(raise it with --max-pixels)",
                         name, dw, dh, (double)dw * (double)dh, max_pixels);
  if (!stbi_info_from_memory(file, (int)len, &w, &h, &comp)) /* its reason is a probe's */
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' has a corrupt or unsupported %s header", name,
                         format_name(fmt));
  if (fmt == APP_FMT_BMP && h < 0)
    h = -h; /* stb reports a top-down BMP's height as negative */
  if (w != dw || h != dh || comp < 1 || comp > 4)
    return dsg_error_set(DSG_ERR_FORMAT,
                         "'%s' declares %ld x %ld pixels but decodes its header "
                         "as %d x %d x %d",
                         name, dw, dh, w, h, comp);
  stale = stb_reason_reset();
  pixels = stbi_load_from_memory(file, (int)len, &w2, &h2, &c2, 0);
  if (!pixels) {
    why = stbi_failure_reason();
    if (!why || why == stale || !*why)
      why = "its image data does not decode";
    return dsg_error_set(DSG_ERR_FORMAT, "cannot decode '%s': a truncated or corrupt %s (%s)", name,
                         format_name(fmt), why);
  }
  /* a PNG colour key (tRNS) makes stb add an alpha channel */
  if (w2 != w || h2 != h || !(c2 == comp || (fmt == APP_FMT_PNG && c2 == comp + 1 && c2 <= 4))) {
    stbi_image_free(pixels);
    return dsg_error_set(DSG_ERR_FORMAT,
                         "'%s' decoded as %d x %d x %d, its header said %d x %d x "
                         "%d",
                         name, w2, h2, c2, w, h, comp);
  }
  status = app_image_from_pixels(img, w2, h2, c2, pixels);
  stbi_image_free(pixels);
  return status;
}

int app_image_load(const char *path, size_t max_pixels, app_image *img)
{
  unsigned char *file = NULL;
  size_t len = 0;
  int status;
  memset(img, 0, sizeof(*img));
  status = app_read_file(path, &file, &len);
  if (status == DSG_OK)
    status = app_image_decode(file, len, path, max_pixels, img);
  free(file);
  return status;
}

int app_image_from_pixels(app_image *img, int width, int height, int channels,
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

int app_image_resize(const app_image *src, int width, int height, app_image *dst)
{
  const int c = src->channels;
  int status = app_image_from_pixels(dst, width, height, c, NULL);
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

void app_image_free(app_image *img)
{
  if (!img)
    return;
  free(img->pixels);
  memset(img, 0, sizeof(*img));
}

int app_features(const app_image *img, app_feature kind, float **out, int *nfeat)
{
  const size_t n = (size_t)img->width * (size_t)img->height;
  const int c = img->channels, nf = kind == APP_FEATURE_COLOR ? 3 : 1;
  float *f = malloc(n * (size_t)nf * sizeof(*f));
  *out = NULL;
  if (!f)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate features for %zu pixels", n);
  for (size_t i = 0; i < n; i++) {
    const unsigned char *p = img->pixels + i * (size_t)c;
    double r = p[0], g = c >= 3 ? p[1] : p[0], b = c >= 3 ? p[2] : p[0];
    if (kind == APP_FEATURE_COLOR) {
      f[3 * i + 0] = (float)(r / 255.0);
      f[3 * i + 1] = (float)(g / 255.0);
      f[3 * i + 2] = (float)(b / 255.0);
    } else if (c >= 3) {
      f[i] = (float)((0.299 * r + 0.587 * g + 0.114 * b) / 255.0);
    } else {
      f[i] = (float)(r / 255.0);
    }
  }
  *out = f;
  *nfeat = nf;
  return DSG_OK;
}
