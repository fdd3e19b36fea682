/* JPEG through libjpeg-turbo's TurboJPEG API (Debian's libturbojpeg0-dev; optional at build time:
 * DIASEG_HAVE_TURBOJPEG). About twice as fast as stb_image on a 12-megapixel photo
 * (docs/PERFORMANCE.md, issue 17); without it, or for a file it does not take, stb decodes.
 *
 * The container is already walked (image_format.c: every segment inside the file, a baseline,
 * extended or progressive Huffman frame, Huffman tables defined before use, an EOI; the size
 * within the pixel cap). libjpeg-turbo takes the frames whose colours it turns into what stb
 * gives: gray (1 channel) and YCbCr or RGB (3 channels), decoded straight into the image's own
 * buffer with its accurate integer IDCT and smooth chroma upsampling (stb's choices too: the two
 * agree to within a few levels, tests/io/test_image.c). CMYK and YCCK frames (4 channels: stb
 * turns them into RGB its own way) and anything its header reader refuses (2 components, unusual
 * sampling factors) stay stb's, so that every JPEG decodes as it did before libjpeg-turbo came.
 * The EXIF orientation is applied afterwards by the loader, as for stb. */
#include "io_internal.h"

#include <string.h>

#ifdef DIASEG_HAVE_TURBOJPEG

#include <turbojpeg.h>

#ifndef TJFLAG_LIMITSCANS /* libjpeg-turbo before 2.1 */
#define TJFLAG_LIMITSCANS 0
#endif

/* The frame's size and colours when libjpeg-turbo decodes it here: 1 on success with *w, *h and
 * *channels (1 or 3) set, 0 when the file stays stb's. */
static int turbo_header(tjhandle tj, const unsigned char *b, size_t len, int *w, int *h,
                        int *channels)
{
  int subsamp = 0, colorspace = -1;
  if (tjDecompressHeader3(tj, b, (unsigned long)len, w, h, &subsamp, &colorspace) != 0)
    return 0;
  if (colorspace == TJCS_GRAY)
    *channels = 1;
  else if (colorspace == TJCS_YCbCr || colorspace == TJCS_RGB)
    *channels = 3;
  else
    return 0; /* CMYK, YCCK */
  return 1;
}

int app_jpeg_turbo_takes(const unsigned char *b, size_t len)
{
  tjhandle tj;
  int w, h, c, takes;
  if (len > (size_t)UINT32_MAX)
    return 0;
  tj = tjInitDecompress();
  if (!tj)
    return 0; /* out of memory: stb's path says so */
  takes = turbo_header(tj, b, len, &w, &h, &c);
  tjDestroy(tj);
  return takes;
}

int app_jpeg_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img)
{
  char why[200];
  tjhandle tj;
  int tw = 0, th = 0, c = 0, status = DSG_OK;

  (void)fmt;
  memset(img, 0, sizeof(*img));
  if (len > (size_t)UINT32_MAX)
    return dsg_error_set(DSG_ERR_LIMIT, "'%s' is too large for the JPEG decoder", name);
  tj = tjInitDecompress();
  if (!tj)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a JPEG decoder for '%s'", name);
  if (!turbo_header(tj, b, len, &tw, &th, &c)) {
    status = dsg_error_set(DSG_ERR_FORMAT, "'%s' has a corrupt or unsupported JPEG header", name);
    goto out_destroy;
  }
  if ((long)tw != w || (long)th != h) {
    status = dsg_error_set(DSG_ERR_FORMAT,
                           "'%s' declares %ld x %ld pixels but libjpeg-turbo reads %d x %d", name,
                           w, h, tw, th);
    goto out_destroy;
  }
  status = dsg_image_from_pixels(img, tw, th, c, NULL);
  if (status != DSG_OK)
    goto out_destroy;
  /* TJFLAG_LIMITSCANS: a progressive file of hundreds of scans (a denial-of-service pattern)
   * fails instead of taking minutes. A warning (corrupt data it recovered from: stray bytes
   * before a marker, a bad Huffman code) keeps the decoded pixels, as stb keeps them. */
  if (tjDecompress2(tj, b, (unsigned long)len, img->pixels, tw, 0, th,
                    c == 1 ? TJPF_GRAY : TJPF_RGB, TJFLAG_LIMITSCANS) != 0 &&
      tjGetErrorCode(tj) != TJERR_WARNING) {
    snprintf(why, sizeof(why), "%s", tjGetErrorStr2(tj));
    for (char *p = why; *p; p++) /* one line */
      if ((unsigned char)*p < 0x20)
        *p = ' ';
    dsg_image_free(img);
    status = dsg_error_set(DSG_ERR_FORMAT,
                           "cannot decode '%s': a truncated or corrupt JPEG (libjpeg-turbo: %s)",
                           name, why[0] ? why : "its image data does not decode");
  }
out_destroy:
  tjDestroy(tj);
  return status;
}

#else /* !DIASEG_HAVE_TURBOJPEG */

int app_jpeg_turbo_takes(const unsigned char *b, size_t len)
{
  (void)b, (void)len;
  return 0;
}

int app_jpeg_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img)
{
  (void)fmt, (void)b, (void)len, (void)w, (void)h;
  memset(img, 0, sizeof(*img));
  return dsg_error_set(DSG_ERR_FORMAT,
                       "cannot decode '%s' with libjpeg-turbo: this diaseg was built without it",
                       name);
}

#endif
