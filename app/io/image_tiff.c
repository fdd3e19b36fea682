/* TIFF through libtiff (Debian's libtiff-dev; optional at build time: DIASEG_HAVE_TIFF).
 *
 * The file is already in memory and its directory walked (image_format.c: the size is within the
 * pixel cap, every strip or tile inside the file). libtiff reads it through client procedures
 * over that buffer, never a file of its own; its error and warning handlers are replaced so that
 * it never prints, and its first error becomes the one-line message. The first page only (a
 * multi-page TIFF's later pages are ignored). Samples of any depth libtiff's RGBA interface takes
 * (1 to 16 bits, palette, gray, RGB, CMYK, YCbCr, the codecs Debian's libtiff has) arrive as 8-bit
 * RGBA; the image keeps gray or RGB, and alpha when the file has it (as a PNG's is kept). */
#include "io_internal.h"

#include <string.h>

#ifdef DIASEG_HAVE_TIFF

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <tiffio.h>

/* libtiff's messages: the first error of the current decode on this thread (libtiff's global
 * handlers have no per-file context before 4.5; the calls are all made from one thread). */
static _Thread_local char tiff_error[256];

static void tiff_on_error(const char *module, const char *fmt, va_list ap)
{
  (void)module;
  if (tiff_error[0])
    return;
  vsnprintf(tiff_error, sizeof(tiff_error), fmt, ap);
  for (char *c = tiff_error; *c; c++) /* one line */
    if ((unsigned char)*c < 0x20)
      *c = ' ';
}

static void tiff_quiet_once(void)
{
  TIFFSetErrorHandler(tiff_on_error);
  TIFFSetWarningHandler(NULL); /* warnings (unknown tags, ...) are not failures: silent */
}

/* The client procedures: reads and seeks over the buffer, no writes, the buffer as the mapping. */
typedef struct tiff_memory {
  const unsigned char *b;
  size_t len, pos;
} tiff_memory;

static tmsize_t tiff_read(thandle_t h, void *buf, tmsize_t size)
{
  tiff_memory *m = (tiff_memory *)h;
  size_t n = size < 0 ? 0 : (size_t)size;
  if (m->pos >= m->len)
    return 0;
  if (n > m->len - m->pos)
    n = m->len - m->pos;
  memcpy(buf, m->b + m->pos, n);
  m->pos += n;
  return (tmsize_t)n;
}

static tmsize_t tiff_write(thandle_t h, void *buf, tmsize_t size)
{
  (void)h, (void)buf, (void)size;
  return -1;
}

static toff_t tiff_seek(thandle_t h, toff_t off, int whence)
{
  tiff_memory *m = (tiff_memory *)h;
  uint64_t base = whence == SEEK_CUR ? m->pos : whence == SEEK_END ? m->len : 0;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END)
    return (toff_t)-1;
  /* off is unsigned: libtiff passes negative offsets as their two's complement */
  const uint64_t to = base + (uint64_t)off;
  if (to > m->len)
    return (toff_t)-1;
  m->pos = (size_t)to;
  return (toff_t)to;
}

static int tiff_close(thandle_t h)
{
  (void)h;
  return 0;
}

static toff_t tiff_size(thandle_t h) { return (toff_t)((tiff_memory *)h)->len; }

static int tiff_map(thandle_t h, void **base, toff_t *size)
{
  tiff_memory *m = (tiff_memory *)h;
  *base = (void *)m->b; /* read-only: the file is opened "r" */
  *size = (toff_t)m->len;
  return 1;
}

static void tiff_unmap(thandle_t h, void *base, toff_t size) { (void)h, (void)base, (void)size; }

/* What libtiff said (without the file name some of its messages start with), or `fallback`. */
static const char *tiff_reason(const char *name, const char *fallback)
{
  const size_t n = strlen(name);
  if (!tiff_error[0])
    return fallback;
  return strncmp(tiff_error, name, n) == 0 && strncmp(tiff_error + n, ": ", 2) == 0
             ? tiff_error + n + 2
             : tiff_error;
}

int app_tiff_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img)
{
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  tiff_memory m = {b, len, 0};
  TIFF *tif = NULL;
  TIFFRGBAImage rgba;
  uint32_t *raster = NULL;
  uint16_t orientation = ORIENTATION_TOPLEFT;
  char why[1024] = "";
  int status = DSG_OK, began = 0;
  const size_t n = (size_t)w * (size_t)h;

  (void)fmt;
  pthread_once(&once, tiff_quiet_once);
  tiff_error[0] = '\0';
  memset(img, 0, sizeof(*img));
#if defined(TIFFLIB_AT_LEAST) && TIFFLIB_AT_LEAST(4, 5, 0)
  /* no single libtiff allocation larger than a whole image of four 32-bit samples a pixel: a
   * crafted directory cannot make it reserve more than the pixel cap implies */
  TIFFOpenOptions *opts = TIFFOpenOptionsAlloc();
  if (!opts)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate libtiff's options to read '%s'", name);
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts, (tmsize_t)(16 * n + ((size_t)1 << 24)));
  tif = TIFFClientOpenExt(name, "r", (thandle_t)&m, tiff_read, tiff_write, tiff_seek, tiff_close,
                          tiff_size, tiff_map, tiff_unmap, opts);
  TIFFOpenOptionsFree(opts);
#else
  tif = TIFFClientOpen(name, "r", (thandle_t)&m, tiff_read, tiff_write, tiff_seek, tiff_close,
                       tiff_size, tiff_map, tiff_unmap);
#endif
  if (!tif)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' is a corrupt TIFF (libtiff: %s)", name,
                         tiff_reason(name, "it does not open"));
  if (!TIFFRGBAImageOK(tif, why) || !TIFFRGBAImageBegin(&rgba, tif, 1, why)) {
    status = dsg_error_set(DSG_ERR_FORMAT, "'%s' is a TIFF diaseg cannot read (libtiff: %s)", name,
                           why[0] ? why : tiff_reason(name, "unsupported"));
    goto out_close;
  }
  began = 1;
  if ((long)rgba.width != w || (long)rgba.height != h) {
    status =
        dsg_error_set(DSG_ERR_FORMAT, "'%s' declares %ld x %ld pixels but libtiff reads %u x %u",
                      name, w, h, (unsigned)rgba.width, (unsigned)rgba.height);
    goto out_close;
  }
  /* read as stored (no flip: the orientation requested is the file's own), then turned upright
   * below: libtiff's RGBA reader flips but does not transpose, so orientations 5-8 need us */
  TIFFGetFieldDefaulted(tif, TIFFTAG_ORIENTATION, &orientation);
  if (orientation < ORIENTATION_TOPLEFT || orientation > ORIENTATION_LEFTBOT)
    orientation = ORIENTATION_TOPLEFT;
  rgba.req_orientation = orientation;
  raster = malloc(n * sizeof(*raster));
  if (!raster) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu bytes to decode '%s'",
                           n * sizeof(*raster), name);
    goto out_close;
  }
  if (!TIFFRGBAImageGet(&rgba, raster, (uint32_t)w, (uint32_t)h)) {
    status = dsg_error_set(DSG_ERR_FORMAT,
                           "cannot decode '%s': a truncated or corrupt TIFF (libtiff: %s)", name,
                           tiff_reason(name, "libtiff gives no reason"));
    goto out_free;
  }
  {
    const int gray =
        rgba.photometric == PHOTOMETRIC_MINISBLACK || rgba.photometric == PHOTOMETRIC_MINISWHITE;
    /* libtiff multiplies an RGB colour by an unassociated alpha (not a gray one) */
    const int alpha = rgba.alpha != 0;
    const int unassociated =
        rgba.alpha == EXTRASAMPLE_UNASSALPHA && rgba.photometric == PHOTOMETRIC_RGB;
    const int c = (gray ? 1 : 3) + alpha;
    status = dsg_image_from_pixels(img, (int)w, (int)h, c, NULL);
    if (status != DSG_OK)
      goto out_free;
    for (size_t i = 0; i < n; i++) {
      const uint32_t p = raster[i];
      const unsigned a = TIFFGetA(p);
      unsigned v[4] = {TIFFGetR(p), TIFFGetG(p), TIFFGetB(p), a};
      unsigned char *out = img->pixels + i * (size_t)c;
      if (unassociated) /* undone, to within rounding */
        for (int k = 0; k < 3; k++)
          v[k] = a ? (v[k] * 255 + a / 2) / a : 0;
      for (int k = 0; k < 3; k++)
        v[k] = v[k] > 255 ? 255 : v[k];
      if (gray) {
        out[0] = (unsigned char)v[0];
      } else {
        out[0] = (unsigned char)v[0];
        out[1] = (unsigned char)v[1];
        out[2] = (unsigned char)v[2];
      }
      if (alpha)
        out[c - 1] = (unsigned char)a;
    }
  }
  status = app_image_orient(img, orientation);
  if (status != DSG_OK)
    dsg_image_free(img);
out_free:
  free(raster);
out_close:
  if (began)
    TIFFRGBAImageEnd(&rgba);
  TIFFClose(tif);
  return status;
}

#else /* !DIASEG_HAVE_TIFF */

int app_tiff_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img)
{
  (void)fmt, (void)b, (void)len, (void)w, (void)h;
  memset(img, 0, sizeof(*img));
  return dsg_error_set(DSG_ERR_FORMAT,
                       "'%s' is a TIFF, and this diaseg was built without libtiff: install it "
                       "(Debian: libtiff-dev) and build diaseg again, or convert the image to PNG",
                       name);
}

#endif
