/* The stb_image / stb_image_write implementations, compiled from Debian's libstb-dev headers with
 * the limits and the format selection diaseg needs (docs/RELIABILITY.md):
 *  - only PNG, JPEG, BMP, TGA and PNM are decoded (no GIF: its decoder has an open double free;
 *    no PSD/PIC/HDR: not needed);
 *  - STBI_MAX_DIMENSIONS caps each side before any size arithmetic;
 *  - allocations are zeroed (calloc);
 *  - app/io/image_format.c checks every container before stb sees it (stb 2.27's defects
 *    that crafted files reach are listed there and kept as regressions in tests/fuzz);
 *  - no stdio: diaseg reads files itself (size-capped) and writes PNGs through a callback that
 *    checks every write. */
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_JPEG
#define STBI_ONLY_BMP
#define STBI_ONLY_TGA
#define STBI_ONLY_PNM
#define STBI_NO_STDIO
#define STBI_NO_LINEAR
#define STBI_MAX_DIMENSIONS (1 << 20)
/* zeroed allocations: what a defective decoder path reads uninitialised is zero, not stale heap */
#define STBI_MALLOC(sz) calloc(1, (sz))
#define STBI_REALLOC(p, sz) realloc((p), (sz))
#define STBI_FREE(p) free(p)
#include <stdlib.h>
#include <stb_image.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO
#include <stb_image_write.h>

/* stb_easy_font for bench's PNG charts (its functions are static: wrapped here, where stb's own
 * warnings are off) */
#include <stb_easy_font.h>

int app_font_quads(char *text, void *buffer, int bytes);
int app_font_width(char *text);

int app_font_quads(char *text, void *buffer, int bytes)
{
  return stb_easy_font_print(0, 0, text, NULL, buffer, bytes);
}

int app_font_width(char *text) { return stb_easy_font_width(text); }
