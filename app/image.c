/* Image loading (hardened stb_image), synthetic images, resampling and features. */
#include "app.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <stb_image.h>

enum image_format { FMT_UNKNOWN, FMT_PNG, FMT_JPEG, FMT_BMP, FMT_TGA, FMT_PNM };

static enum image_format sniff(const unsigned char *b, size_t len, const char *path)
{
  static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const char *dot = strrchr(path, '.');
  if (len >= 8 && memcmp(b, png, 8) == 0)
    return FMT_PNG;
  if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
    return FMT_JPEG;
  if (len >= 2 && b[0] == 'B' && b[1] == 'M')
    return FMT_BMP;
  if (len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6'))
    return FMT_PNM;
  /* TGA has no signature: only trust it when the name says so. */
  if (dot && strcasecmp(dot, ".tga") == 0)
    return FMT_TGA;
  return FMT_UNKNOWN;
}

static unsigned rd16le(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static unsigned long rd32le(const unsigned char *p)
{
  return p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 | (unsigned long)p[3] << 24;
}

/* stb's JPEG, BMP and TGA decoders read zeros past the end of the data instead of failing, so a
 * truncated file would decode into a partly black image. Catch truncation from the containers. */
static int check_complete(enum image_format fmt, const unsigned char *b, size_t len, int w, int h,
                          const char *path)
{
  if (fmt == FMT_JPEG) {
    /* The end-of-image marker FF D9 must be near the end; entropy-coded data stuffs FF as FF 00. */
    size_t lo = len > 4096 ? len - 4096 : 0;
    for (size_t i = len - 1; i > lo; i--)
      if (b[i - 1] == 0xff && b[i] == 0xd9)
        return DSG_OK;
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is a truncated JPEG: no end-of-image marker", path);
  }
  if (fmt == FMT_BMP && len >= 54) {
    unsigned long declared = rd32le(b + 2), data = rd32le(b + 10), compression = rd32le(b + 30);
    unsigned bpp = rd16le(b + 28);
    if (declared > len)
      return dsg_error_set(DSG_ERR_FORMAT, "'%s' is a truncated BMP: %zu of %lu bytes", path, len,
                           declared);
    if (compression == 0 && bpp >= 1) {
      size_t stride = (((size_t)w * bpp + 31) / 32) * 4;
      if (data > len || stride * (size_t)h > len - data)
        return dsg_error_set(DSG_ERR_FORMAT, "'%s' is a truncated BMP: pixel data needs %zu bytes "
                             "after offset %lu, the file has %zu", path, stride * (size_t)h, data,
                             len);
    }
  }
  if (fmt == FMT_TGA && len >= 18 && (b[2] == 1 || b[2] == 2 || b[2] == 3)) {
    /* uncompressed: id, colour map, then w * h pixels */
    size_t need = 18 + (size_t)b[0] + (size_t)rd16le(b + 5) * ((b[7] + 7u) / 8u) +
                  (size_t)w * (size_t)h * ((b[16] + 7u) / 8u);
    if (need > len)
      return dsg_error_set(DSG_ERR_FORMAT, "'%s' is a truncated TGA: %zu of %zu bytes", path, len,
                           need);
  }
  return DSG_OK;
}

static unsigned rd16be(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned long rd32be(const unsigned char *p)
{
  return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* PNM header integer: skips whitespace and # comments. Returns -1 if absent or too large. */
static long pnm_int(const unsigned char *b, size_t len, size_t *pos)
{
  long v = -1;
  while (*pos < len) {
    if (b[*pos] == '#')
      while (*pos < len && b[*pos] != '\n')
        (*pos)++;
    else if (b[*pos] == ' ' || b[*pos] == '\t' || b[*pos] == '\r' || b[*pos] == '\n')
      (*pos)++;
    else
      break;
  }
  while (*pos < len && b[*pos] >= '0' && b[*pos] <= '9') {
    v = (v < 0 ? 0 : v) * 10 + (b[*pos] - '0');
    if (v > 100000000L)
      return -1;
    (*pos)++;
  }
  return v;
}

/* The dimensions the file's header declares, read before any decoder runs so that absurd sizes
 * get diaseg's message (stb reports some of them only as "unknown image type").
 * Returns 1 when found, 0 when the header is too short or malformed. */
static int declared_size(enum image_format fmt, const unsigned char *b, size_t len, long *w, long *h)
{
  switch (fmt) {
  case FMT_PNG:
    if (len < 24 || memcmp(b + 12, "IHDR", 4) != 0)
      return 0;
    *w = (long)(rd32be(b + 16) & 0x7fffffffUL);
    *h = (long)(rd32be(b + 20) & 0x7fffffffUL);
    return 1;
  case FMT_BMP: {
    if (len < 26)
      return 0;
    long bw = (long)(int32_t)rd32le(b + 18), bh = (long)(int32_t)rd32le(b + 22);
    *w = bw < 0 ? -bw : bw;
    *h = bh < 0 ? -bh : bh; /* negative height: top-down rows */
    return 1;
  }
  case FMT_TGA:
    if (len < 18)
      return 0;
    *w = rd16le(b + 12);
    *h = rd16le(b + 14);
    return 1;
  case FMT_PNM: {
    size_t pos = 2;
    *w = pnm_int(b, len, &pos);
    *h = pnm_int(b, len, &pos);
    return *w >= 0 && *h >= 0;
  }
  case FMT_JPEG:
    /* walk the marker segments up to the first start-of-frame */
    for (size_t p = 2; p + 9 < len;) {
      if (b[p] != 0xff)
        return 0;
      unsigned m = b[p + 1];
      if (m == 0xff) {
        p++;
        continue;
      }
      if (m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
        *h = rd16be(b + p + 5);
        *w = rd16be(b + p + 7);
        return 1;
      }
      p += 2 + rd16be(b + p + 2);
    }
    return 0;
  default:
    return 0;
  }
}

static int read_file(const char *path, unsigned char **data, size_t *len)
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

int app_image_decode(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                     app_image *img)
{
  unsigned char *pixels = NULL;
  int w = 0, h = 0, comp = 0, status;
  enum image_format fmt;

  memset(img, 0, sizeof(*img));
  if (len == 0)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is empty, not an image", name);
  if (len > (size_t)INT32_MAX)
    return dsg_error_set(DSG_ERR_LIMIT, "'%s' is too large for the image decoder", name);
  fmt = sniff(file, len, name);
  if (fmt == FMT_UNKNOWN)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is not a supported image (PNG, JPEG, BMP, TGA, "
                         "PNM P5/P6)", name);
  {
    long dw = 0, dh = 0;
    if (declared_size(fmt, file, len, &dw, &dh)) {
      if (dw < 1 || dh < 1)
        return dsg_error_set(DSG_ERR_FORMAT, "'%s' declares a %ld x %ld image: it needs at least "
                             "one pixel", name, dw, dh);
      if ((size_t)dw > max_pixels / (size_t)dh)
        return dsg_error_set(DSG_ERR_LIMIT, "'%s' is %ld x %ld = %.0f pixels, over the cap of %zu "
                             "(raise it with --max-pixels)", name, dw, dh, (double)dw * (double)dh,
                             max_pixels);
    }
  }
  if (!stbi_info_from_memory(file, (int)len, &w, &h, &comp))
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' has a corrupt or unsupported header (%s)", name,
                         stbi_failure_reason() ? stbi_failure_reason() : "unknown");
  if (w < 1 || h < 1 || comp < 1 || comp > 4)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' declares a %d x %d image with %d channels: it "
                         "needs at least one pixel and 1 to 4 channels", name, w, h, comp);
  if ((size_t)w > max_pixels / (size_t)h)
    return dsg_error_set(DSG_ERR_LIMIT, "'%s' is %d x %d = %zu pixels, over the cap of %zu "
                         "(raise it with --max-pixels)", name, w, h, (size_t)w * (size_t)h,
                         max_pixels);
  status = check_complete(fmt, file, len, w, h, name);
  if (status != DSG_OK)
    return status;
  {
    int w2 = 0, h2 = 0, c2 = 0;
    pixels = stbi_load_from_memory(file, (int)len, &w2, &h2, &c2, 0);
    if (!pixels)
      return dsg_error_set(DSG_ERR_FORMAT, "cannot decode '%s' (%s): truncated or corrupt", name,
                           stbi_failure_reason() ? stbi_failure_reason() : "unknown");
    if (w2 != w || h2 != h || c2 != comp) {
      stbi_image_free(pixels);
      return dsg_error_set(DSG_ERR_FORMAT, "'%s' decoded as %d x %d x %d, its header said %d x "
                           "%d x %d", name, w2, h2, c2, w, h, comp);
    }
  }
  status = app_image_from_pixels(img, w, h, comp, pixels);
  stbi_image_free(pixels);
  return status;
}

int app_image_load(const char *path, size_t max_pixels, app_image *img)
{
  unsigned char *file = NULL;
  size_t len = 0;
  int status;
  memset(img, 0, sizeof(*img));
  status = read_file(path, &file, &len);
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
        double a = p[((size_t)y0 * src->width + x0) * c + k], b = p[((size_t)y0 * src->width + x1) * c + k];
        double e = p[((size_t)y1 * src->width + x0) * c + k], f = p[((size_t)y1 * src->width + x1) * c + k];
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
