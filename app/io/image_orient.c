/* Orientation: the EXIF Orientation of a JPEG (a phone's rotated photo), and turning decoded
 * pixels upright for any of the eight TIFF/EXIF orientations (JPEG's EXIF tag, TIFF's own tag).
 *
 * stb_image ignores EXIF. The parser below reads only what it needs (the segments before the first
 * scan, the APP1 "Exif\0\0" header, the TIFF header and IFD0 through image_format.c's directory
 * reader, tag 0x0112) and checks every offset against the segment: a malformed block means
 * "as stored" (1), never an error, since the pixels themselves are intact. */
#include "io_internal.h"

#include <stdlib.h>
#include <string.h>

int app_exif_orientation(const unsigned char *b, size_t len)
{
  size_t pos = 2;
  if (len < 4 || b[0] != 0xff || b[1] != 0xd8)
    return 1;
  while (pos + 4 <= len && b[pos] == 0xff) {
    const unsigned m = b[pos + 1];
    const size_t slen = (size_t)b[pos + 2] << 8 | b[pos + 3];
    if (m == 0xda || m == 0xd9 || m == 0xff || m == 0x00 || (m >= 0xd0 && m <= 0xd8) || m == 0x01)
      return 1; /* the first scan, the end, fill bytes or a standalone marker: no EXIF block */
    if (slen < 2 || slen > len - pos - 2)
      return 1;
    if (m == 0xe1 && slen >= 8 && memcmp(b + pos + 4, "Exif\0\0", 6) == 0) {
      app_tiff_dir d;
      app_tiff_field f;
      /* offsets inside the block count from its TIFF header, 6 bytes after "Exif" */
      if (!app_tiff_dir_open(b + pos + 10, slen - 8, &d) || !app_tiff_dir_field(&d, 0x0112, &f) ||
          f.type != 3 || f.count < 1)
        return 1;
      const uint64_t o = app_tiff_field_value(&d, &f, 0);
      return o >= 1 && o <= 8 ? (int)o : 1;
    }
    pos += 2 + slen;
  }
  return 1;
}

int app_image_orient(dsg_image *img, int o)
{
  const size_t w = (size_t)img->width, h = (size_t)img->height, c = (size_t)img->channels;
  const int swap = o >= 5 && o <= 8;
  const size_t ow = swap ? h : w, oh = swap ? w : h;
  unsigned char *out;
  if (o < 2 || o > 8 || !img->pixels)
    return DSG_OK;
  out = malloc(w * h * c); /* the same size as img->pixels, which exists */
  if (!out)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %zu bytes to turn a %zu x %zu image",
                         w * h * c, w, h);
  /* each output pixel (x, y) of the upright picture, from the stored pixel (sx, sy) */
  for (size_t y = 0; y < oh; y++)
    for (size_t x = 0; x < ow; x++) {
      size_t sx, sy;
      switch (o) {
      case 2: sx = w - 1 - x, sy = y; break;
      case 3: sx = w - 1 - x, sy = h - 1 - y; break;
      case 4: sx = x, sy = h - 1 - y; break;
      case 5: sx = y, sy = x; break;
      case 6: sx = y, sy = h - 1 - x; break;
      case 7: sx = w - 1 - y, sy = h - 1 - x; break;
      default: sx = w - 1 - y, sy = x; break; /* 8 */
      }
      memcpy(out + (y * ow + x) * c, img->pixels + (sy * w + sx) * c, c);
    }
  free(img->pixels);
  img->pixels = out;
  img->width = (int)ow;
  img->height = (int)oh;
  return DSG_OK;
}
