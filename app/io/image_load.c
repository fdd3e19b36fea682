/* Image files: reading (size-capped, regular files only, or standard input for the name "-") and
 * decoding by content: a table of formats (below), each container walked first (image_format.c),
 * then hardened stb_image, libjpeg-turbo, libtiff or libwebp; JPEG's EXIF orientation applied
 * (image_orient.c). */
#include "io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stb_image.h>

/* The file is opened without blocking (a FIFO with no writer would wait forever) and checked
 * again once open, so that something put in the place of the regular file stat saw is refused
 * too, not read. */
int app_read_file(const char *path, unsigned char **data, size_t *len)
{
  char shown[DSG_SHORT_NAME];
  const char *name = dsg_short_name(path, shown);
  struct stat st;
  unsigned char *buf = NULL;
  int fd = -1, rc, status = DSG_OK;

  *data = NULL;
  if (stat(path, &st) != 0)
    return dsg_error_set(DSG_ERR_IO, "cannot read '%s': %s", name, strerror(errno));
  if (S_ISREG(st.st_mode)) {
    fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
      return dsg_error_set(DSG_ERR_IO, "cannot open '%s': %s", name, strerror(errno));
    if (fstat(fd, &st) != 0) {
      status = dsg_error_set(DSG_ERR_IO, "cannot read '%s': %s", name, strerror(errno));
      goto out_close;
    }
  }
  if (S_ISDIR(st.st_mode)) {
    status = dsg_error_set(DSG_ERR_IO, "'%s' is a directory, not an image", name);
    goto out_close;
  }
  if (!S_ISREG(st.st_mode)) {
    status = dsg_error_set(DSG_ERR_IO, "'%s' is %s, not a regular file", name,
                           dsg_file_kind(st.st_mode));
    goto out_close;
  }
  if (st.st_size == 0) { /* files of /proc and /sys say 0 whatever they hold */
    status = dsg_error_set(DSG_ERR_FORMAT,
                           "'%s' has a size of 0 bytes: it is empty (or a file of /proc or /sys, "
                           "whose size is not known), not an image",
                           name);
    goto out_close;
  }
  if ((unsigned long long)st.st_size > APP_MAX_FILE_BYTES) {
    status = dsg_error_set(DSG_ERR_LIMIT, "'%s' has %lld bytes, over diaseg's %zu-byte file limit",
                           name, (long long)st.st_size, APP_MAX_FILE_BYTES);
    goto out_close;
  }
  buf = malloc((size_t)st.st_size);
  if (!buf) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %lld bytes to read '%s'",
                           (long long)st.st_size, name);
    goto out_close;
  }
  rc = dsg_read_exact(fd, buf, (size_t)st.st_size);
  if (rc != 0) {
    status = dsg_error_set(DSG_ERR_IO, "cannot read '%s': %s", name,
                           rc > 0 ? strerror(rc) : "the file shrank while reading");
    free(buf);
    goto out_close;
  }
  *data = buf;
  *len = (size_t)st.st_size;
out_close:
  if (fd >= 0)
    close(fd);
  return status;
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

static const char *format_name(app_image_format fmt);

/* PNG, JPEG, BMP, TGA, PNM: hardened stb_image (its header read again by stbi_info and compared
 * with the walk's, then the decoded shape with the header's). */
static int decode_stb(app_image_format fmt, const unsigned char *file, size_t len, const char *name,
                      long dw, long dh, dsg_image *img)
{
  unsigned char *pixels = NULL;
  int w = 0, h = 0, comp = 0, w2 = 0, h2 = 0, c2 = 0, status;
  const char *why, *stale;

  if (len > (size_t)INT32_MAX)
    return dsg_error_set(DSG_ERR_LIMIT, "'%s' is too large for the image decoder", name);
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
  status = dsg_image_from_pixels(img, w2, h2, c2, pixels);
  stbi_image_free(pixels);
  return status;
}

/* JPEG: libjpeg-turbo when diaseg was built with it and it takes the frame (gray, YCbCr, RGB:
 * image_jpeg.c), else stb (CMYK and YCCK frames, builds without it). */
static int decode_jpeg(app_image_format fmt, const unsigned char *file, size_t len,
                       const char *name, long dw, long dh, dsg_image *img)
{
  if (app_jpeg_turbo_takes(file, len))
    return app_jpeg_decode(fmt, file, len, name, dw, dh, img);
  return decode_stb(fmt, file, len, name, dw, dh, img);
}

/* The formats: recognised by their signature (app_image_sniff), walked (app_image_check), then
 * decoded by their row's decoder. `exif`: the JPEG's EXIF orientation is applied afterwards
 * (neither stb nor libjpeg-turbo reads it; TIFF's decoder applies the TIFF's own). */
static const struct image_codec {
  app_image_format fmt;
  const char *name;
  app_image_decoder decode;
  int exif;
} codecs[] = {
    {APP_FMT_PNG, "PNG", decode_stb, 0},        {APP_FMT_JPEG, "JPEG", decode_jpeg, 1},
    {APP_FMT_BMP, "BMP", decode_stb, 0},        {APP_FMT_TGA, "TGA", decode_stb, 0},
    {APP_FMT_PNM, "PNM", decode_stb, 0},        {APP_FMT_TIFF, "TIFF", app_tiff_decode, 0},
    {APP_FMT_WEBP, "WebP", app_webp_decode, 0},
};

static const struct image_codec *codec_of(app_image_format fmt)
{
  for (size_t i = 0; i < sizeof(codecs) / sizeof(codecs[0]); i++)
    if (codecs[i].fmt == fmt)
      return &codecs[i];
  return NULL;
}

static const char *format_name(app_image_format fmt)
{
  const struct image_codec *c = codec_of(fmt);
  return c ? c->name : "image";
}

/* app_image_decode; stb_jpeg: a JPEG goes to stb whatever the build has */
static int decode_file(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                       int stb_jpeg, dsg_image *img)
{
  const struct image_codec *codec;
  int status;
  long dw = -1, dh = -1;
  char shown[DSG_SHORT_NAME];

  memset(img, 0, sizeof(*img));
  codec = codec_of(app_image_sniff(file, len, name)); /* the whole name: TGA is known by it */
  name = dsg_short_name(name, shown);
  if (len == 0)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is empty, not an image", name);
  /* the container first: no decoder sees a file whose structure is broken */
  status = app_image_check(codec ? codec->fmt : APP_FMT_UNKNOWN, file, len, name, &dw, &dh);
  if (status != DSG_OK)
    return status;
  if (dw < 1 || dh < 1)
    return dsg_error_set(DSG_ERR_FORMAT,
                         "'%s' declares a %ld x %ld image: it needs at least one "
                         "pixel",
                         name, dw, dh);
  if ((size_t)dw > max_pixels / (size_t)dh) /* the caller's cap, an option: a usage error */
    return dsg_error_set(DSG_ERR_INVALID,
                         "'%s' is %ld x %ld = %.0f pixels, over the cap of %zu "
                         "(raise it with --max-pixels)",
                         name, dw, dh, (double)dw * (double)dh, max_pixels);
  if (stb_jpeg && codec->fmt == APP_FMT_JPEG)
    status = decode_stb(codec->fmt, file, len, name, dw, dh, img);
  else
    status = codec->decode(codec->fmt, file, len, name, dw, dh, img);
  if (status == DSG_OK && codec->exif)
    status = app_image_orient(img, app_exif_orientation(file, len));
  if (status != DSG_OK)
    dsg_image_free(img);
  return status;
}

int app_image_decode(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                     dsg_image *img)
{
  return decode_file(file, len, name, max_pixels, 0, img);
}

int app_image_decode_stb(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                         dsg_image *img)
{
  return decode_file(file, len, name, max_pixels, 1, img);
}

/* Standard input, read whole up to APP_MAX_FILE_BYTES (a pipe or a redirection: its size is not
 * known before the end). */
static int read_stdin(unsigned char **data, size_t *len)
{
  struct stat st;
  unsigned char *buf = NULL, *grown;
  size_t cap = 0, n = 0;
  int status = DSG_OK;

  *data = NULL;
  if (fstat(STDIN_FILENO, &st) != 0)
    return dsg_error_set(DSG_ERR_INVALID,
                         "the image '-' is standard input, which is not open (%s): pipe or "
                         "redirect an image into diaseg",
                         strerror(errno));
  if (isatty(STDIN_FILENO))
    return dsg_error_set(DSG_ERR_INVALID,
                         "the image '-' is standard input, which is a terminal: pipe or redirect "
                         "an image into diaseg (diaseg segment - < photo.jpg)");
  for (;;) {
    if (n == cap) {
      if (cap > APP_MAX_FILE_BYTES) {
        status = dsg_error_set(DSG_ERR_LIMIT,
                               "standard input holds more than %zu bytes, over diaseg's file "
                               "limit",
                               APP_MAX_FILE_BYTES);
        goto out_free;
      }
      cap = cap ? 2 * cap : (size_t)1 << 16;
      if (cap > APP_MAX_FILE_BYTES + 1)
        cap = APP_MAX_FILE_BYTES + 1; /* one byte more: enough to see the limit passed */
      grown = realloc(buf, cap);
      if (!grown) {
        status =
            dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu bytes to read standard input", cap);
        goto out_free;
      }
      buf = grown;
    }
    const ssize_t got = read(STDIN_FILENO, buf + n, cap - n);
    if (got > 0) {
      n += (size_t)got;
    } else if (got == 0) {
      break;
    } else if (errno == EAGAIN || errno == EWOULDBLOCK) { /* a non-blocking pipe: wait for it */
      struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
      poll(&p, 1, -1);
    } else if (errno != EINTR) {
      status = dsg_error_set(DSG_ERR_IO, "cannot read standard input: %s", strerror(errno));
      goto out_free;
    }
  }
  if (n == 0) {
    status = dsg_error_set(DSG_ERR_FORMAT,
                           "standard input is empty: the image '-' is read from it, and nothing "
                           "was piped or redirected into diaseg");
    goto out_free;
  }
  *data = buf;
  *len = n;
  return DSG_OK;
out_free:
  free(buf);
  return status;
}

int app_image_load(const char *path, size_t max_pixels, dsg_image *img)
{
  unsigned char *file = NULL;
  size_t len = 0;
  int status;
  const int from_stdin = strcmp(path, "-") == 0;
  memset(img, 0, sizeof(*img));
  status = from_stdin ? read_stdin(&file, &len) : app_read_file(path, &file, &len);
  if (status == DSG_OK)
    status = app_image_decode(file, len, from_stdin ? "<stdin>" : path, max_pixels, img);
  free(file);
  return status;
}
