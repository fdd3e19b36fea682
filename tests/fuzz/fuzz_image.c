/* libFuzzer harness: app_image_decode (PNG, JPEG, BMP, TGA, PNM through the hardened stb_image;
 * JPEG through libjpeg-turbo too, TIFF through libtiff and WebP through libwebp when the build
 * found them; a JPEG's EXIF block). A JPEG goes through both JPEG decoders (fuzz_image_one).
 * Formats are recognised by content, so the corpus's TIFF, WebP and EXIF seeds reach their code.
 * Input: byte 0 picks the name (even: "fuzz.png", odd: "fuzz.tga"), the rest is the file.
 * A broken contract (fuzz_targets.h) aborts with the reason on stderr.
 * DIASEG_FUZZ_SKIP_KNOWN=1 in the environment skips inputs that would trigger an already reported
 * stb_image bug (fuzz_image_known_issue), so that the run gets past them. */
#include "fuzz_targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int skip_known = -1;
  char why[512];
  if (skip_known < 0) {
    const char *e = getenv("DIASEG_FUZZ_SKIP_KNOWN");
    skip_known = e && *e && strcmp(e, "0") != 0;
  }
  if (skip_known && size > 0 && fuzz_image_known_issue(data + 1, size - 1))
    return -1; /* not added to the corpus */
  if (fuzz_image_one(data, size, why, sizeof(why))) {
    fprintf(stderr, "\nfuzz_image: contract broken: %s\n", why);
    fflush(stderr);
    __builtin_trap();
  }
  return 0;
}
