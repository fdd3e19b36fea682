/* WebP through libwebp (Debian's libwebp-dev; optional at build time: DIASEG_HAVE_WEBP).
 *
 * The container is already walked (image_format.c: RIFF and chunk sizes inside the file, the
 * canvas within the pixel cap, no animation). libwebp reads the features, then decodes into the
 * image's own buffer: RGB, or RGBA when the file has alpha (kept, as a PNG's is; not
 * premultiplied). Lossy, lossless and extended (VP8X) stills. */
#include "io_internal.h"

#include <string.h>

#ifdef DIASEG_HAVE_WEBP

#include <webp/decode.h>

/* libwebp's status codes, in words */
static const char *webp_reason(VP8StatusCode s)
{
  static const char *const reason[] = {"ok",
                                       "out of memory",
                                       "an invalid parameter",
                                       "a corrupt bitstream",
                                       "an unsupported feature",
                                       "suspended",
                                       "user abort",
                                       "not enough data (truncated)"};
  return (unsigned)s < sizeof(reason) / sizeof(reason[0]) ? reason[s] : "an unknown error";
}

int app_webp_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img)
{
  WebPBitstreamFeatures features;
  VP8StatusCode st;
  int status, c;
  size_t stride, bytes;
  uint8_t *out;

  (void)fmt;
  memset(img, 0, sizeof(*img));
  st = WebPGetFeatures(b, len, &features);
  if (st != VP8_STATUS_OK)
    return dsg_error_set(DSG_ERR_FORMAT,
                         "'%s' has a corrupt or unsupported WebP header (libwebp: "
                         "%s)",
                         name, webp_reason(st));
  if (features.has_animation)
    return dsg_error_set(DSG_ERR_FORMAT,
                         "'%s' is an animated WebP, which diaseg does not decode: save the frame "
                         "you want as a still image (PNG, WebP)",
                         name);
  if ((long)features.width != w || (long)features.height != h)
    return dsg_error_set(DSG_ERR_FORMAT, "'%s' declares %ld x %ld pixels but libwebp reads %d x %d",
                         name, w, h, features.width, features.height);
  c = features.has_alpha ? 4 : 3;
  status = dsg_image_from_pixels(img, (int)w, (int)h, c, NULL);
  if (status != DSG_OK)
    return status;
  stride = (size_t)w * (size_t)c;
  bytes = stride * (size_t)h;
  out = c == 4 ? WebPDecodeRGBAInto(b, len, img->pixels, bytes, (int)stride)
               : WebPDecodeRGBInto(b, len, img->pixels, bytes, (int)stride);
  if (!out) {
    dsg_image_free(img);
    return dsg_error_set(DSG_ERR_FORMAT,
                         "cannot decode '%s': a truncated or corrupt WebP (its image data does "
                         "not decode)",
                         name);
  }
  return DSG_OK;
}

#else /* !DIASEG_HAVE_WEBP */

int app_webp_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img)
{
  (void)fmt, (void)b, (void)len, (void)w, (void)h;
  memset(img, 0, sizeof(*img));
  return dsg_error_set(DSG_ERR_FORMAT,
                       "'%s' is a WebP, and this diaseg was built without libwebp: install it "
                       "(Debian: libwebp-dev) and build diaseg again, or convert the image to PNG",
                       name);
}

#endif
