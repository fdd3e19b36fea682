/* Private to io/: image containers (image_format.c), used by the loader (image_load.c). */
#ifndef DIASEG_IO_INTERNAL_H
#define DIASEG_IO_INTERNAL_H

#include "io.h"

typedef enum app_image_format {
  APP_FMT_UNKNOWN,
  APP_FMT_PNG,
  APP_FMT_JPEG,
  APP_FMT_BMP,
  APP_FMT_TGA, /* recognised by the .tga extension only: the format has no signature */
  APP_FMT_PNM  /* binary P5 and P6 */
} app_image_format;

/* The format of a file from its signature (and, for TGA, its name). */
app_image_format app_image_sniff(const unsigned char *b, size_t len, const char *name);
/* Walks the container of a file of format fmt (see image_format.c for what is checked) and
 * reports the dimensions its header declares in *w, *h. Returns DSG_OK or DSG_ERR_FORMAT with a
 * message naming the file and the defect. */
int app_image_check(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long *w, long *h);

#endif
