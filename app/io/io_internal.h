/* Private to io/: image containers (image_format.c), orientation (image_orient.c) and the decoders
 * that are not stb's (image_jpeg.c, image_tiff.c, image_webp.c), used by the loader
 * (image_load.c). */
#ifndef DIASEG_IO_INTERNAL_H
#define DIASEG_IO_INTERNAL_H

#include "io.h"

typedef enum app_image_format {
  APP_FMT_UNKNOWN,
  APP_FMT_PNG,
  APP_FMT_JPEG,
  APP_FMT_BMP,
  APP_FMT_TGA,  /* recognised by the .tga extension only: the format has no signature */
  APP_FMT_PNM,  /* binary P5 and P6 */
  APP_FMT_TIFF, /* classic and BigTIFF, either byte order (libtiff) */
  APP_FMT_WEBP  /* RIFF WEBP: lossy, lossless, extended (libwebp) */
} app_image_format;

/* The format of a file from its signature (and, for TGA, its name). */
app_image_format app_image_sniff(const unsigned char *b, size_t len, const char *name);
/* Walks the container of a file of format fmt (see image_format.c for what is checked) and
 * reports the dimensions its header declares in *w, *h. Returns DSG_OK or DSG_ERR_FORMAT with a
 * message naming the file and the defect. */
int app_image_check(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long *w, long *h);

/* ---- TIFF directories (image_format.c): TIFF files and the EXIF block of a JPEG ------------- */

/* The first directory (IFD0) of a TIFF structure that starts at b[0] ("II*\0", "MM\0*", or
 * BigTIFF's "II+\0", "MM\0+"); offsets in it count from b. */
typedef struct app_tiff_dir {
  const unsigned char *b;
  size_t len;
  int big_endian;
  int bigtiff;
  size_t entries; /* the offset of the first 12-byte (BigTIFF: 20-byte) entry */
  size_t count;   /* entries in the directory, all of them inside b */
} app_tiff_dir;

/* One field of the directory: count values of type (1 BYTE, 3 SHORT, 4 LONG, 16 LONG8, ...),
 * stored at b + data, all inside b. */
typedef struct app_tiff_field {
  unsigned type;
  uint64_t count;
  size_t data;
} app_tiff_field;

/* Reads the header and IFD0 of the TIFF structure in b[0..len). Returns 1 when they are there and
 * inside the buffer, 0 otherwise (no message: the callers decide what a malformed one means). */
int app_tiff_dir_open(const unsigned char *b, size_t len, app_tiff_dir *d);
/* Finds the field `tag` in d. Returns 1 when it is there with a type of known size and all its
 * values inside the buffer, 0 otherwise. */
int app_tiff_dir_field(const app_tiff_dir *d, unsigned tag, app_tiff_field *f);
/* Value i (< f->count) of an integer field (BYTE, SHORT, LONG, LONG8, IFD, IFD8); 0 for other
 * types. */
uint64_t app_tiff_field_value(const app_tiff_dir *d, const app_tiff_field *f, uint64_t i);

/* ---- orientation (image_orient.c) --------------------------------------------------------- */

/* The EXIF Orientation (tag 0x0112 of IFD0 in the first APP1 "Exif\0\0" segment before the first
 * scan) of the JPEG in b[0..len): 1..8. Anything absent, out of range or malformed is 1 (as
 * stored); never reads outside b. */
int app_exif_orientation(const unsigned char *b, size_t len);
/* Turns the pixels of *img, stored as orientation o (1..8, TIFF/EXIF numbering) describes, into
 * the picture a viewer shows: 2 mirrored left-right, 3 turned 180 degrees, 4 mirrored top-bottom,
 * 5 transposed, 6 turned 90 degrees clockwise, 7 transposed across the other diagonal, 8 turned
 * 90 degrees counter-clockwise; 5 to 8 swap width and height. Other values leave it as it is.
 * Returns DSG_OK or DSG_ERR_NOMEM (img unchanged). */
int app_image_orient(dsg_image *img, int o);

/* ---- decoders besides stb ------------------------------------------------------------------ */

/* A decoder of the loader's table (image_load.c): decodes the file b[0..len) of format fmt, whose
 * container app_image_check walked and whose declared w x h is within the pixel cap, into *img
 * (gray, gray+alpha, RGB or RGBA as the file holds it). Returns DSG_OK, DSG_ERR_FORMAT (corrupt,
 * unsupported, or its library was not found when diaseg was built: the message says which),
 * DSG_ERR_LIMIT or DSG_ERR_NOMEM; *img is empty on failure. */
typedef int (*app_image_decoder)(app_image_format fmt, const unsigned char *b, size_t len,
                                 const char *name, long w, long h, dsg_image *img);
/* A TIFF's first page, upright by its Orientation tag (image_tiff.c, libtiff). */
int app_tiff_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img);
/* A JPEG of gray, YCbCr or RGB colours (image_jpeg.c, libjpeg-turbo), 1 or 3 channels, when
 * app_jpeg_turbo_takes(b, len); DSG_ERR_FORMAT with libjpeg-turbo's reason for data it cannot
 * decode. */
int app_jpeg_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img);
/* Whether app_jpeg_decode takes the JPEG b[0..len): 1 when diaseg was built with libjpeg-turbo
 * (DIASEG_HAVE_TURBOJPEG) and its header reader reads a gray, YCbCr or RGB frame; 0 otherwise
 * (CMYK, YCCK, a header it refuses, a build without it: stb decodes those). No message. */
int app_jpeg_turbo_takes(const unsigned char *b, size_t len);
/* A still WebP (image_webp.c, libwebp). */
int app_webp_decode(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long w, long h, dsg_image *img);

#endif
