/* The image loader: every format decodes to the pixels that were written (PNG gray, RGB, RGBA,
 * 16-bit and with a tRNS colour key; JPEG, upright in each EXIF orientation; TIFF by hand, both
 * byte orders, in each orientation; lossless WebP, RGB and RGBA; BMP bottom-up and top-down; TGA
 * raw and run-length; PNM P5 and P6; a PNG on standard input), libjpeg-turbo and stb agreeing on
 * JPEGs, every truncation and the stb_image
 * defects of tests/fuzz/regressions are refused with DSG_ERR_FORMAT and a message, and absurd sizes
 * with DSG_ERR_LIMIT. Also the features of docs/PIPELINE.md section 1. */
#include "diaseg_internal.h"
#include "io_internal.h"
#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <stb_image_write.h>

/* stb_image_write's deflate, compiled into diaseg_app (app/io/stb_impl.c) */
unsigned char *stbi_zlib_compress(unsigned char *data, int data_len, int *out_len, int quality);

static unsigned long crc32_png(unsigned long crc, const unsigned char *p, size_t n)
{
  crc = ~crc & 0xffffffffUL;
  for (size_t i = 0; i < n; i++) {
    crc ^= p[i];
    for (int k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xedb88320UL & (0UL - (crc & 1)));
  }
  return ~crc & 0xffffffffUL;
}

enum { W = 13, H = 7 };

typedef struct buf {
  unsigned char *p;
  size_t len, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
  if (b->len + n > b->cap) {
    b->cap = (b->len + n) * 2 + 64;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->len, d, n);
  b->len += n;
}

static void sink(void *ctx, void *data, int size) { put(ctx, data, (size_t)size); }

static void be32(unsigned char *p, unsigned long v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static void png_chunk(buf *b, const char *type, const unsigned char *data, size_t n)
{
  unsigned char hdr[8], crc[4];
  be32(hdr, (unsigned long)n);
  memcpy(hdr + 4, type, 4);
  put(b, hdr, 8);
  if (n)
    put(b, data, n);
  unsigned long c = crc32_png(0, (const unsigned char *)type, 4);
  c = crc32_png(c, data, n);
  be32(crc, c);
  put(b, crc, 4);
}

/* A PNG written by hand: 16-bit gray, or 8-bit RGB with a tRNS key. */
static buf png_by_hand(int sixteen, const unsigned char *pix)
{
  buf b = {0};
  static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  unsigned char ihdr[13] = {0};
  const int c = sixteen ? 1 : 3, bytes = sixteen ? 2 : 1, row = W * c * bytes + 1;
  unsigned char raw[(W * 3 * 2 + 1) * H];
  put(&b, sig, 8);
  be32(ihdr, W);
  be32(ihdr + 4, H);
  ihdr[8] = (unsigned char)(8 * bytes);
  ihdr[9] = sixteen ? 0 : 2;
  png_chunk(&b, "IHDR", ihdr, 13);
  if (!sixteen) {
    unsigned char key[6] = {0, pix[0], 0, pix[1], 0, pix[2]};
    png_chunk(&b, "tRNS", key, 6);
  }
  for (int y = 0; y < H; y++) {
    raw[y * row] = 0;
    for (int x = 0; x < W * c; x++) {
      unsigned char v = pix[(y * W) * c + x];
      if (sixteen) {
        raw[y * row + 1 + 2 * x] = v;
        raw[y * row + 2 + 2 * x] = 0x80;
      } else {
        raw[y * row + 1 + x] = v;
      }
    }
  }
  int zl = 0;
  unsigned char *z = stbi_zlib_compress(raw, row * H, &zl, 8);
  png_chunk(&b, "IDAT", z, (size_t)zl);
  png_chunk(&b, "IEND", NULL, 0);
  free(z);
  return b;
}

static buf pnm(int channels, const unsigned char *pix)
{
  buf b = {0};
  char hdr[64];
  int n = snprintf(hdr, sizeof(hdr), "P%d\n# diaseg\n%d %d\n255\n", channels == 3 ? 6 : 5, W, H);
  put(&b, hdr, (size_t)n);
  put(&b, pix, (size_t)W * H * channels);
  return b;
}

static int decode(const buf *b, const char *name, dsg_image *img)
{
  return app_image_decode(b->p, b->len, name, 1 << 22, img);
}

/* Decodes b, a w x h image, and compares its first min(src, decoded) channels with pix (src
 * channels a pixel); then truncations are refused: at 23 points, or every one (`every_cut`). */
static void expect_image(const buf *b, const char *name, int w, int h, int channels, int src,
                         const unsigned char *pix, int tolerance, int every_cut)
{
  dsg_image img;
  int status = decode(b, name, &img);
  CHECK(status == DSG_OK, "%s: %s", name, dsg_error_message());
  if (status != DSG_OK)
    return;
  CHECK(img.width == w && img.height == h && img.channels == channels, "%s: %d x %d x %d", name,
        img.width, img.height, img.channels);
  int worst = 0;
  const int cmp = src < img.channels ? src : img.channels;
  for (int px = 0; px < w * h && img.width == w && img.height == h; px++)
    for (int ch = 0; ch < cmp; ch++) {
      int d = abs((int)img.pixels[px * img.channels + ch] - (int)pix[px * src + ch]);
      worst = d > worst ? d : worst;
    }
  CHECK(worst <= tolerance, "%s: pixels differ by up to %d", name, worst);
  /* every truncation is refused */
  for (size_t cut = 1; cut < b->len; cut += every_cut ? 1 : (b->len / 23) + 1) {
    dsg_image t;
    int st = app_image_decode(b->p, cut, name, 1 << 22, &t);
    CHECK(st == DSG_ERR_FORMAT && !t.pixels && strlen(dsg_error_message()) > 10,
          "%s truncated to %zu of %zu bytes: status %d", name, cut, b->len, st);
    dsg_image_free(&t);
  }
  dsg_image_free(&img);
}

static void expect_pixels(const buf *b, const char *name, int channels, int src,
                          const unsigned char *pix, int tolerance)
{
  expect_image(b, name, W, H, channels, src, pix, tolerance, 0);
}

/* ---- orientation, EXIF, TIFF, WebP, standard input ---------------------------------------- */

/* app_image_orient on a 3 x 2 image of two channels (v, 10 v), pixels 1..6 row by row, against
 * the eight pictures a viewer shows, written out by hand. */
static void test_orient(void)
{
  static const struct {
    int w, h;
    unsigned char v[6];
  } want[9] = {{0, 0, {0}},
               {3, 2, {1, 2, 3, 4, 5, 6}},  /* 1: as stored */
               {3, 2, {3, 2, 1, 6, 5, 4}},  /* 2: mirrored left-right */
               {3, 2, {6, 5, 4, 3, 2, 1}},  /* 3: turned 180 degrees */
               {3, 2, {4, 5, 6, 1, 2, 3}},  /* 4: mirrored top-bottom */
               {2, 3, {1, 4, 2, 5, 3, 6}},  /* 5: transposed */
               {2, 3, {4, 1, 5, 2, 6, 3}},  /* 6: turned 90 degrees clockwise */
               {2, 3, {6, 3, 5, 2, 4, 1}},  /* 7: transposed across the other diagonal */
               {2, 3, {3, 6, 2, 5, 1, 4}}}; /* 8: turned 90 degrees counter-clockwise */
  const unsigned char px[12] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60};
  for (int o = 0; o <= 9; o++) {
    dsg_image img;
    dsg_image_from_pixels(&img, 3, 2, 2, px);
    CHECK(app_image_orient(&img, o) == DSG_OK, "orientation %d: %s", o, dsg_error_message());
    const int k = o >= 1 && o <= 8 ? o : 1; /* 0 and 9: not orientations, left as stored */
    int same = img.width == want[k].w && img.height == want[k].h && img.channels == 2;
    for (int i = 0; same && i < 6; i++)
      same = img.pixels[2 * i] == want[k].v[i] && img.pixels[2 * i + 1] == 10 * want[k].v[i];
    CHECK(same, "orientation %d: %d x %d, first pixels %d %d %d", o, img.width, img.height,
          img.pixels[0], img.pixels[2], img.pixels[4]);
    dsg_image_free(&img);
  }
}

static void at16(unsigned char *p, int be, unsigned v)
{
  p[be ? 0 : 1] = (unsigned char)(v >> 8);
  p[be ? 1 : 0] = (unsigned char)v;
}

static void at32(unsigned char *p, int be, unsigned long v)
{
  at16(p + (be ? 0 : 2), be, (unsigned)(v >> 16) & 0xffff);
  at16(p + (be ? 2 : 0), be, (unsigned)v & 0xffff);
}

/* One directory entry: SHORT (3) values fit in the field, LONG (4) too when count is 1. */
static void tiff_entry(unsigned char *e, int be, unsigned tag, unsigned type, unsigned long count,
                       unsigned long value)
{
  at16(e, be, tag);
  at16(e + 2, be, type);
  at32(e + 4, be, count);
  if (type == 3 && count == 1) {
    at16(e + 8, be, (unsigned)value);
    at16(e + 10, be, 0);
  } else {
    at32(e + 8, be, value);
  }
}

/* A TIFF written by hand: w x h, 1 (gray) or 3 (RGB) 8-bit samples a pixel, uncompressed, one
 * strip; little-endian with the pixels before the directory, big-endian with the directory first;
 * an Orientation tag when orientation > 0. */
static buf tiff_by_hand(int be, int w, int h, int spp, const unsigned char *pix, int orientation)
{
  const unsigned long npix = (unsigned long)w * h * spp;
  const int n = orientation > 0 ? 11 : 10;
  const unsigned long ifd_bytes = 2 + 12 * n + 4, extra_bytes = spp > 1 ? 6 : 0;
  unsigned long pix_off, ifd_off, extra_off;
  if (be) {
    ifd_off = 8;
    extra_off = ifd_off + ifd_bytes;
    pix_off = extra_off + extra_bytes;
  } else {
    pix_off = 8;
    ifd_off = 8 + npix + (npix & 1);
    extra_off = ifd_off + ifd_bytes;
  }
  const unsigned long total = (be ? pix_off + npix : extra_off + extra_bytes);
  buf b = {calloc(1, total), total, total};
  unsigned char *p = b.p, *e = p + ifd_off + 2;
  memcpy(p, be ? "MM\0*" : "II*\0", 4);
  at32(p + 4, be, ifd_off);
  memcpy(p + pix_off, pix, npix);
  at16(p + ifd_off, be, (unsigned)n);
  tiff_entry(e, be, 256, 4, 1, (unsigned long)w), e += 12;
  tiff_entry(e, be, 257, 4, 1, (unsigned long)h), e += 12;
  tiff_entry(e, be, 258, 3, (unsigned long)spp, spp > 1 ? extra_off : 8), e += 12;
  tiff_entry(e, be, 259, 3, 1, 1), e += 12;               /* no compression */
  tiff_entry(e, be, 262, 3, 1, spp > 1 ? 2 : 1), e += 12; /* RGB, or gray (0 black) */
  tiff_entry(e, be, 273, 4, 1, pix_off), e += 12;         /* the strip */
  if (orientation > 0)
    tiff_entry(e, be, 274, 3, 1, (unsigned long)orientation), e += 12;
  tiff_entry(e, be, 277, 3, 1, (unsigned long)spp), e += 12;
  tiff_entry(e, be, 278, 4, 1, (unsigned long)h), e += 12; /* rows per strip */
  tiff_entry(e, be, 279, 4, 1, npix), e += 12;             /* the strip's bytes */
  tiff_entry(e, be, 284, 3, 1, 1), e += 12;                /* samples interleaved */
  at32(e, be, 0);                                          /* no next directory */
  for (int i = 0; i < spp && spp > 1; i++)
    at16(p + extra_off + 2 * i, be, 8);
  return b;
}

/* The picture a viewer shows of the stored W x H image `stored` (c channels) in orientation o: a
 * copy turned by app_image_orient (tested on its own above). */
static dsg_image upright(const unsigned char *stored, int c, int o)
{
  dsg_image img;
  dsg_image_from_pixels(&img, W, H, c, stored);
  app_image_orient(&img, o);
  return img;
}

static int same_image(const dsg_image *a, const dsg_image *b)
{
  return a->width == b->width && a->height == b->height && a->channels == b->channels &&
         memcmp(a->pixels, b->pixels, (size_t)a->width * a->height * a->channels) == 0;
}

/* The stored corner that shows at the top left, per orientation: 0 top left, 1 top right, 2
 * bottom right, 3 bottom left. */
static const int corner_shown[9] = {0, 0, 1, 2, 3, 0, 3, 2, 1};

static const unsigned char *corner(const unsigned char *stored, int c, int which)
{
  const int x = which == 1 || which == 2 ? W - 1 : 0, y = which >= 2 ? H - 1 : 0;
  return stored + ((size_t)y * W + x) * c;
}

static void test_tiff(const unsigned char *gray, const unsigned char *rgb)
{
  buf le = tiff_by_hand(0, W, H, 3, rgb, 0), be = tiff_by_hand(1, W, H, 1, gray, 0);
  dsg_image img;
#ifdef DIASEG_HAVE_TIFF
  expect_image(&le, "rgb.tif", W, H, 3, 3, rgb, 0, 1);
  expect_image(&be, "gray-mm.tif", W, H, 1, 1, gray, 0, 1);
  /* the Orientation tag: upright, all eight (libtiff flips; diaseg also transposes 5 to 8) */
  for (int o = 1; o <= 8; o++) {
    buf t = tiff_by_hand(o & 1, W, H, 3, rgb, o);
    const int st = decode(&t, "oriented.tif", &img);
    dsg_image want = upright(rgb, 3, o);
    CHECK(st == DSG_OK && same_image(&img, &want) &&
              memcmp(img.pixels, corner(rgb, 3, corner_shown[o]), 3) == 0,
          "TIFF orientation %d: status %d (%s), %d x %d", o, st, st ? dsg_error_message() : "",
          img.width, img.height);
    dsg_image_free(&img);
    dsg_image_free(&want);
    free(t.p);
  }
  /* garbled: each refused with one line that says what is wrong, no crash */
  {
    static const struct {
      size_t at; /* byte of le to overwrite with 4 little-endian bytes */
      unsigned long v;
      const char *expect;
    } bad[] = {{4, 0xfffffff0UL, "first directory lies outside"},  /* IFD offset */
               {4, 3, "first directory lies outside"},             /* inside the header */
               {0, 0x002b4949UL, "first directory lies outside"}}; /* BigTIFF, no header */
    const unsigned long ifd = (unsigned long)W * H * 3 + ((W * H * 3) & 1) + 8;
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      buf t = tiff_by_hand(0, W, H, 3, rgb, 0);
      t.p[bad[i].at] = (unsigned char)bad[i].v, t.p[bad[i].at + 1] = (unsigned char)(bad[i].v >> 8);
      t.p[bad[i].at + 2] = (unsigned char)(bad[i].v >> 16);
      t.p[bad[i].at + 3] = (unsigned char)(bad[i].v >> 24);
      const int st = decode(&t, "bad.tif", &img);
      CHECK(st == DSG_ERR_FORMAT && strstr(dsg_error_message(), bad[i].expect) &&
                !strchr(dsg_error_message(), '\n'),
            "garbled TIFF %zu: status %d, '%s'", i, st, dsg_error_message());
      dsg_image_free(&img);
      free(t.p);
    }
    /* entries by number: 5 the strip offset, 2 the sample depth, 3 the compression, 4 the
     * photometric interpretation */
    static const struct {
      int entry;
      unsigned long value;
      const char *expect;
    } fields[] = {{5, 0x7ffffff0UL, "strip 0 declares"},
                  {5, 100000, "strip 0 declares"},
                  {3, 12345, "libtiff"},
                  {4, 77, "libtiff"},
                  {0, 0, "at least one pixel"}};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
      buf t = tiff_by_hand(0, W, H, 3, rgb, 0);
      unsigned char *e = t.p + ifd + 2 + 12 * fields[i].entry;
      if (fields[i].entry == 3 || fields[i].entry == 4)
        at16(e + 8, 0, (unsigned)fields[i].value);
      else
        at32(e + 8, 0, fields[i].value);
      const int st = decode(&t, "field.tif", &img);
      CHECK(st == DSG_ERR_FORMAT && !img.pixels && strstr(dsg_error_message(), fields[i].expect) &&
                !strchr(dsg_error_message(), '\n'),
            "TIFF entry %d = %lu: status %d, '%s'", fields[i].entry, fields[i].value, st,
            dsg_error_message());
      dsg_image_free(&img);
      free(t.p);
    }
    /* 60000 x 60000 declared: the cap, before libtiff sees it */
    buf t = tiff_by_hand(0, W, H, 3, rgb, 0);
    at32(t.p + ifd + 2 + 8, 0, 60000);
    at32(t.p + ifd + 2 + 12 + 8, 0, 60000);
    CHECK(decode(&t, "huge.tif", &img) == DSG_ERR_INVALID &&
              strstr(dsg_error_message(), "--max-pixels"),
          "a 60000 x 60000 TIFF: '%s'", dsg_error_message());
    free(t.p);
  }
#else
  CHECK(decode(&le, "rgb.tif", &img) == DSG_ERR_FORMAT && strstr(dsg_error_message(), "libtiff"),
        "TIFF without libtiff: '%s'", dsg_error_message());
#endif
  free(le.p);
  free(be.p);
}

/* Lossless WebPs (cwebp -lossless -z 9 of a 4 x 3 PPM; Pillow's lossless=True, exact=True of a
 * 2 x 2 RGBA), and their pixels. */
static const unsigned char webp_rgb[] = {
    0x52, 0x49, 0x46, 0x46, 0x36, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56, 0x50, 0x38, 0x4c,
    0x29, 0x00, 0x00, 0x00, 0x2f, 0x03, 0x80, 0x00, 0x00, 0x89, 0x8c, 0xe8, 0x7f, 0x18, 0x14, 0xb4,
    0x6d, 0xc3, 0x74, 0x8f, 0xe4, 0xf8, 0x83, 0x4a, 0xc4, 0x82, 0x29, 0xee, 0x4b, 0x6a, 0x02, 0x01,
    0xc2, 0x89, 0x13, 0xfd, 0xb2, 0x22, 0xae, 0x03, 0xf8, 0x09, 0x95, 0x48, 0x01, 0x00};
#ifdef DIASEG_HAVE_WEBP
static const unsigned char webp_rgba[] = {
    0x52, 0x49, 0x46, 0x46, 0x2c, 0x00, 0x00, 0x00, 0x57, 0x45, 0x42, 0x50, 0x56,
    0x50, 0x38, 0x4c, 0x1f, 0x00, 0x00, 0x00, 0x2f, 0x01, 0x40, 0x00, 0x10, 0x1f,
    0x70, 0x0a, 0x8f, 0x2b, 0x78, 0xd4, 0x43, 0x20, 0x40, 0xac, 0x73, 0xe7, 0x4a,
    0xf0, 0xce, 0x81, 0x6c, 0x80, 0x32, 0x55, 0x98, 0x45, 0xf4, 0x3f, 0x76, 0x00};
static const unsigned char webp_rgba_pixels[16] = {10, 20, 30, 255, 40,  50,  60,  128,
                                                   70, 80, 90, 0,   100, 110, 120, 200};
#endif

static void test_webp(void)
{
  buf b = {0};
  dsg_image img;
  put(&b, webp_rgb, sizeof(webp_rgb));
#ifdef DIASEG_HAVE_WEBP
  unsigned char pix[4 * 3 * 3];
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 4; x++) {
      pix[3 * (y * 4 + x)] = (unsigned char)((x * 60 + y * 7) % 256);
      pix[3 * (y * 4 + x) + 1] = (unsigned char)((y * 90 + 5) % 256);
      pix[3 * (y * 4 + x) + 2] = (unsigned char)((x * y * 31 + 200) % 256);
    }
  expect_image(&b, "rgb.webp", 4, 3, 3, 3, pix, 0, 1);
  {
    buf a = {0};
    put(&a, webp_rgba, sizeof(webp_rgba));
    expect_image(&a, "rgba.webp", 2, 2, 4, 4, webp_rgba_pixels, 0, 1);
    free(a.p);
  }
  /* every byte of the bitstream after its header flipped: decoded or refused, never a crash */
  for (size_t i = 25; i < b.len; i++) {
    b.p[i] ^= 0xff;
    const int st = decode(&b, "flipped.webp", &img);
    CHECK((st == DSG_OK && img.width == 4 && img.height == 3) ||
              (st == DSG_ERR_FORMAT && !img.pixels && dsg_error_message()[0]),
          "rgb.webp with byte %zu flipped: status %d, '%s'", i, st, dsg_error_message());
    dsg_image_free(&img);
    b.p[i] ^= 0xff;
  }
  /* a RIFF size past the end; a lossless header of 16384 x 16384 (over the cap); animation */
  {
    buf t = {0};
    put(&t, webp_rgb, sizeof(webp_rgb));
    t.p[4] = 0xf0;
    CHECK(decode(&t, "riff.webp", &img) == DSG_ERR_FORMAT &&
              strstr(dsg_error_message(), "RIFF header declares"),
          "RIFF size: '%s'", dsg_error_message());
    t.p[4] = webp_rgb[4];
    t.p[21] = 0xff, t.p[22] = 0xff, t.p[23] = 0xff, t.p[24] = 0x0f; /* 14 + 14 bits of ones */
    CHECK(decode(&t, "huge.webp", &img) == DSG_ERR_INVALID &&
              strstr(dsg_error_message(), "16384 x 16384"),
          "16384 x 16384 WebP: '%s'", dsg_error_message());
    free(t.p);
    static const unsigned char anim[] = {'R', 'I', 'F', 'F', 22,  0,   0,  0, 'W', 'E',
                                         'B', 'P', 'V', 'P', '8', 'X', 10, 0, 0,   0,
                                         2,   0,   0,   0,   3,   0,   0,  2, 0,   0};
    CHECK(app_image_decode(anim, sizeof(anim), "anim.webp", 1 << 22, &img) == DSG_ERR_FORMAT &&
              strstr(dsg_error_message(), "animated WebP"),
          "animated WebP: '%s'", dsg_error_message());
  }
#else
  CHECK(decode(&b, "rgb.webp", &img) == DSG_ERR_FORMAT && strstr(dsg_error_message(), "libwebp"),
        "WebP without libwebp: '%s'", dsg_error_message());
#endif
  free(b.p);
}

/* An APP1 segment "Exif\0\0" whose IFD0 holds Orientation (0x0112) = o as a SHORT, in either byte
 * order; 36 bytes. */
static size_t exif_app1(unsigned char *out, int be, unsigned o)
{
  static const unsigned char head[10] = {0xff, 0xe1, 0x00, 0x22, 'E', 'x', 'i', 'f', 0, 0};
  unsigned char *t = out + 10; /* the TIFF header: offsets count from here */
  memcpy(out, head, 10);
  memcpy(t, be ? "MM\0*" : "II*\0", 4);
  at32(t + 4, be, 8);
  at16(t + 8, be, 1);
  tiff_entry(t + 10, be, 0x0112, 3, 1, o);
  at32(t + 22, be, 0);
  return 36;
}

/* SOI, the segment, and the rest of the JPEG j after its SOI. */
static buf splice(const buf *j, const unsigned char *seg, size_t n)
{
  buf b = {0};
  put(&b, j->p, 2);
  put(&b, seg, n);
  put(&b, j->p + 2, j->len - 2);
  return b;
}

static void test_exif(const unsigned char *rgb)
{
  buf jpeg = {0};
  dsg_image ref, img;
  unsigned char seg[64];
  stbi_write_jpg_to_func(sink, &jpeg, W, H, 3, rgb, 100);
  CHECK(decode(&jpeg, "plain.jpg", &ref) == DSG_OK, "plain JPEG: %s", dsg_error_message());
  /* each orientation, both byte orders: the size and the corner shown top left */
  for (int be = 0; be <= 1; be++)
    for (int o = 1; o <= 8; o++) {
      buf b = splice(&jpeg, seg, exif_app1(seg, be, (unsigned)o));
      const int st = decode(&b, "exif.jpg", &img);
      dsg_image want = upright(ref.pixels, 3, o);
      CHECK(st == DSG_OK && img.width == (o >= 5 ? H : W) && img.height == (o >= 5 ? W : H) &&
                memcmp(img.pixels, corner(ref.pixels, 3, corner_shown[o]), 3) == 0 &&
                same_image(&img, &want),
            "EXIF orientation %d (%s): status %d (%s), %d x %d", o, be ? "MM" : "II", st,
            st ? dsg_error_message() : "", img.width, img.height);
      CHECK(app_exif_orientation(b.p, b.len) == o, "app_exif_orientation %d", o);
      /* every prefix of the header and the block, in a buffer of exactly that size (so that
       * AddressSanitizer sees a read past it): an orientation, never a crash */
      for (size_t cut = 0; cut <= 2 + 36 + 4; cut++) {
        unsigned char *p = malloc(cut ? cut : 1);
        memcpy(p, b.p, cut);
        const int got = app_exif_orientation(p, cut);
        CHECK(got == (cut >= 2 + 36 ? o : 1), "EXIF %d cut to %zu: %d", o, cut, got);
        free(p);
      }
      /* after an XMP APP1 segment: still found */
      {
        static const unsigned char xmp[] = {0xff, 0xe1, 0x00, 0x0c, 'h', 't', 't',
                                            'p',  ':',  '/',  '/',  'n', 's', '.'};
        buf x = splice(&b, xmp, sizeof(xmp));
        CHECK(app_exif_orientation(x.p, x.len) == o, "EXIF %d after XMP", o);
        free(x.p);
      }
      dsg_image_free(&img);
      dsg_image_free(&want);
      free(b.p);
    }
  /* malformed blocks: the picture as stored, no error */
  {
    static const struct {
      size_t at; /* byte of the segment to set */
      unsigned char v;
      const char *what;
    } bad[] = {{11, 'M', "byte order IM"},
               {12, 43, "BigTIFF magic without its header"},
               {17, 0xf0, "IFD0 offset past the block"},
               {14, 4, "IFD0 inside the TIFF header"},
               {19, 0x7f, "entry count past the block"},
               {22, 4, "type LONG"},
               {22, 0, "type 0"},
               {24, 0xff, "count 255, values past the block"},
               {28, 0, "orientation 0"},
               {28, 9, "orientation 9"},
               {29, 0xff, "orientation 0xff06"},
               {3, 0x08, "segment of 8 bytes"},
               {20, 0x13, "another tag"},
               {7, 'g', "Exig"}};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
      exif_app1(seg, 0, 6);
      seg[bad[i].at] = bad[i].v;
      buf b = splice(&jpeg, seg, 36);
      int st = decode(&b, "badexif.jpg", &img);
      /* a segment shortened to 8 bytes leaves the rest as garbage before the frame: refused */
      if (bad[i].at == 3)
        CHECK(app_exif_orientation(b.p, b.len) == 1, "%s", bad[i].what);
      else
        CHECK(st == DSG_OK && same_image(&img, &ref) && app_exif_orientation(b.p, b.len) == 1,
              "EXIF with %s: status %d (%s), %d x %d", bad[i].what, st,
              st ? dsg_error_message() : "", img.width, img.height);
      dsg_image_free(&img);
      free(b.p);
    }
  }
  dsg_image_free(&ref);
  free(jpeg.p);
}

/* app_image_load("-"): standard input through a pipe holding `b` (small: the pipe's buffer
 * takes it whole), then restored. */
static int load_stdin(const unsigned char *data, size_t len, dsg_image *img)
{
  int fds[2], saved = dup(STDIN_FILENO), st;
  if (pipe(fds) != 0 || saved < 0)
    return 99;
  if (len && write(fds[1], data, len) != (ssize_t)len)
    return 98;
  close(fds[1]);
  dup2(fds[0], STDIN_FILENO);
  close(fds[0]);
  st = app_image_load("-", 1 << 22, img);
  dup2(saved, STDIN_FILENO);
  close(saved);
  return st;
}

/* The two JPEG decoders agree (issue 17): with libjpeg-turbo in the build, every JPEG seed of the
 * fuzz corpus (gray baseline and progressive, 4:2:0, 4:2:2, 4:4:4, optimised, progressive, restart
 * intervals, EXIF orientations, CMYK) and JPEGs stb writes (4:4:4 at quality 100, 4:2:0 at 75)
 * decode through app_image_decode to the shape stb gives (1 channel for gray, 3 for colour, the
 * same orientation) and to the same pixels within 3 levels, half a level on average (measured: 2
 * and 0.18 at most here; 3 and 0.02 on a 12-megapixel photo): the IDCTs and the chroma upsampling
 * round differently. CMYK stays stb's: equal.
 * Every byte of a file's scan data flipped: decoded or refused with a message, never a crash.
 * Without libjpeg-turbo both calls are stb's and agree exactly. */
static void compare_jpeg_decoders(const unsigned char *b, size_t len, const char *name,
                                  int tolerance)
{
  dsg_image a, s;
  long diff = 0, most = 0;
  const int sa = app_image_decode(b, len, name, 1 << 22, &a);
  const int ss = app_image_decode_stb(b, len, name, 1 << 22, &s);
  CHECK(sa == DSG_OK && ss == DSG_OK, "%s: status %d (%s) and stb %d", name, sa,
        dsg_error_message(), ss);
  if (sa == DSG_OK && ss == DSG_OK) {
    CHECK(a.width == s.width && a.height == s.height && a.channels == s.channels,
          "%s: %d x %d x %d, stb %d x %d x %d", name, a.width, a.height, a.channels, s.width,
          s.height, s.channels);
    if (a.width == s.width && a.height == s.height && a.channels == s.channels) {
      const size_t n = (size_t)a.width * (size_t)a.height * (size_t)a.channels;
      for (size_t i = 0; i < n; i++) {
        const long d = labs((long)a.pixels[i] - (long)s.pixels[i]);
        diff += d;
        most = d > most ? d : most;
      }
      CHECK(most <= tolerance && (double)diff <= 0.5 * (double)n,
            "%s: the decoders differ by up to %ld levels (mean %.3f; tolerance %d)", name, most,
            (double)diff / (double)n, tolerance);
    }
  }
  dsg_image_free(&a);
  dsg_image_free(&s);
}

static void test_jpeg_decoders(const unsigned char *rgb)
{
  DIR *d = opendir(TEST_FUZZ_DIR "/corpus_image");
  struct dirent *e;
  int count = 0;
  CHECK(d != NULL, "corpus folder");
  while (d && (e = readdir(d))) {
    char path[1024];
    unsigned char data[1 << 16];
    size_t n;
    FILE *f;
    if (strncmp(e->d_name, "jpeg-", 5) != 0)
      continue;
    snprintf(path, sizeof(path), "%s/corpus_image/%s", TEST_FUZZ_DIR, e->d_name);
    f = fopen(path, "rb");
    n = f ? fread(data, 1, sizeof(data), f) : 0;
    if (f)
      fclose(f);
    CHECK(n > 1, "%s: unreadable", path);
    if (n <= 1)
      continue;
    /* the corpus's byte 0 picks the harness's name; CMYK is stb's on both paths */
    compare_jpeg_decoders(data + 1, n - 1, e->d_name, strstr(e->d_name, "cmyk") ? 0 : 3);
    count++;
  }
  if (d)
    closedir(d);
  CHECK(count >= 10, "only %d JPEG seeds", count);
  for (int q = 0; q < 2; q++) {
    buf b = {0};
    dsg_image img;
    size_t scan = 0;
    stbi_write_jpg_to_func(sink, &b, W, H, 3, rgb, q ? 75 : 100);
    compare_jpeg_decoders(b.p, b.len, q ? "q75.jpg" : "q100.jpg", 3);
    for (size_t i = 2; i + 1 < b.len; i++) /* after the last SOS header: the scan data */
      if (b.p[i] == 0xff && b.p[i + 1] == 0xda)
        scan = i + 2 + ((size_t)b.p[i + 2] << 8 | b.p[i + 3]);
    CHECK(scan > 0 && scan + 2 < b.len, "q%d: no scan", q ? 75 : 100);
    for (size_t i = scan; i + 2 < b.len; i++) {
      b.p[i] ^= 0x5a;
      const int st = decode(&b, "flipped.jpg", &img);
      CHECK((st == DSG_OK && img.width == W && img.height == H && img.channels == 3) ||
                (st == DSG_ERR_FORMAT && !img.pixels && dsg_error_message()[0] &&
                 !strchr(dsg_error_message(), '\n')),
            "a JPEG with byte %zu flipped: status %d, '%s'", i, st, dsg_error_message());
      dsg_image_free(&img);
      b.p[i] ^= 0x5a;
    }
    free(b.p);
  }
}

static void test_stdin(const unsigned char *rgb)
{
  buf png = {0};
  dsg_image img;
  stbi_write_png_to_func(sink, &png, W, H, 3, rgb, W * 3);
  int st = load_stdin(png.p, png.len, &img);
  CHECK(st == DSG_OK && img.width == W && img.height == H && img.channels == 3 &&
            memcmp(img.pixels, rgb, W * H * 3) == 0,
        "a PNG on standard input: status %d, '%s'", st, dsg_error_message());
  dsg_image_free(&img);
  st = load_stdin(NULL, 0, &img);
  CHECK(st == DSG_ERR_FORMAT && !img.pixels &&
            strstr(dsg_error_message(), "standard input is empty"),
        "empty standard input: status %d, '%s'", st, dsg_error_message());
  st = load_stdin((const unsigned char *)"not an image\n", 13, &img);
  CHECK(st == DSG_ERR_FORMAT && !img.pixels && strstr(dsg_error_message(), "'<stdin>'"),
        "text on standard input: status %d, '%s'", st, dsg_error_message());
  st = load_stdin(png.p, png.len / 2, &img);
  CHECK(st == DSG_ERR_FORMAT && !img.pixels && strstr(dsg_error_message(), "truncated"),
        "half a PNG on standard input: status %d, '%s'", st, dsg_error_message());
  free(png.p);
}

int main(void)
{
  unsigned char gray[W * H], rgb[W * H * 3], rgba[W * H * 4];
  for (int i = 0; i < W * H; i++) {
    gray[i] = (unsigned char)(i * 7 % 251);
    for (int c = 0; c < 3; c++)
      rgb[3 * i + c] = (unsigned char)((i * 13 + c * 71) % 256);
    for (int c = 0; c < 4; c++)
      rgba[4 * i + c] = (unsigned char)((i * 5 + c * 40) % 256);
  }
  buf b = {0};
  stbi_write_png_to_func(sink, &b, W, H, 1, gray, W);
  expect_pixels(&b, "gray.png", 1, 1, gray, 0);
  b.len = 0;
  stbi_write_png_to_func(sink, &b, W, H, 3, rgb, W * 3);
  expect_pixels(&b, "rgb.png", 3, 3, rgb, 0);
  b.len = 0;
  stbi_write_png_to_func(sink, &b, W, H, 4, rgba, W * 4);
  expect_pixels(&b, "rgba.png", 4, 4, rgba, 0);
  b.len = 0;
  stbi_write_bmp_to_func(sink, &b, W, H, 3, rgb);
  expect_pixels(&b, "rgb.bmp", 3, 3, rgb, 0);
  { /* the same BMP stored top-down: negative height, rows reversed */
    buf t = {0};
    put(&t, b.p, b.len);
    unsigned long off = t.p[10] | t.p[11] << 8, stride = ((W * 24 + 31) / 32) * 4;
    int32_t neg = -H;
    memcpy(t.p + 22, &neg, 4);
    for (int y = 0; y < H / 2; y++) {
      unsigned char tmp[64];
      memcpy(tmp, t.p + off + y * stride, stride);
      memcpy(t.p + off + y * stride, t.p + off + (H - 1 - y) * stride, stride);
      memcpy(t.p + off + (H - 1 - y) * stride, tmp, stride);
    }
    expect_pixels(&t, "topdown.bmp", 3, 3, rgb, 0);
    free(t.p);
  }
  b.len = 0;
  stbi_write_tga_with_rle = 0;
  stbi_write_tga_to_func(sink, &b, W, H, 3, rgb);
  expect_pixels(&b, "raw.tga", 3, 3, rgb, 0);
  b.len = 0;
  stbi_write_tga_with_rle = 1;
  stbi_write_tga_to_func(sink, &b, W, H, 3, rgb);
  expect_pixels(&b, "rle.tga", 3, 3, rgb, 0);
  b.len = 0;
  stbi_write_jpg_to_func(sink, &b, W, H, 3, rgb, 100);
  expect_pixels(&b, "rgb.jpg", 3, 3, rgb, 40); /* lossy */
  free(b.p);
  buf p5 = pnm(1, gray), p6 = pnm(3, rgb), p16 = png_by_hand(1, gray), key = png_by_hand(0, rgb);
  expect_pixels(&p5, "gray.pgm", 1, 1, gray, 0);
  expect_pixels(&p6, "rgb.ppm", 3, 3, rgb, 0);
  expect_pixels(&p16, "gray16.png", 1, 1, gray, 1); /* 16 bits, the high byte kept */
  expect_pixels(&key, "trns.png", 4, 3, rgb, 0);    /* the colour key adds an alpha channel */
  free(p5.p);
  free(p6.p);
  free(p16.p);
  free(key.p);

  /* stb_image's defects that crafted files reach: refused before stb sees them */
  {
    DIR *d = opendir(TEST_FUZZ_DIR "/regressions/image");
    struct dirent *e;
    int count = 0;
    CHECK(d != NULL, "regressions folder");
    while (d && (e = readdir(d))) {
      char path[1024];
      if (e->d_name[0] == '.')
        continue;
      snprintf(path, sizeof(path), "%s/regressions/image/%s", TEST_FUZZ_DIR, e->d_name);
      FILE *f = fopen(path, "rb");
      unsigned char data[1 << 16];
      size_t n = fread(data, 1, sizeof(data), f);
      fclose(f);
      dsg_image img;
      /* the harness: byte 0 picks the name */
      int st =
          app_image_decode(data + 1, n - 1, data[0] & 1 ? "fuzz.tga" : "fuzz.png", 1 << 22, &img);
      CHECK(st == DSG_ERR_FORMAT || st == DSG_ERR_LIMIT, "%s: status %d (%s)", e->d_name, st,
            dsg_error_message());
      dsg_image_free(&img);
      count++;
    }
    if (d)
      closedir(d);
    CHECK(count >= 6, "only %d regression files", count);
  }

  /* absurd sizes: the cap, before any decoding */
  {
    buf big = {0};
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13] = {0}, z[8] = {0x78, 0x9c, 3, 0, 0, 0, 0, 1};
    put(&big, sig, 8);
    be32(ihdr, 60000);
    be32(ihdr + 4, 60000);
    ihdr[8] = 8;
    png_chunk(&big, "IHDR", ihdr, 13);
    png_chunk(&big, "IDAT", z, 8);
    png_chunk(&big, "IEND", NULL, 0);
    dsg_image img;
    CHECK(decode(&big, "big.png", &img) == DSG_ERR_INVALID &&
              strstr(dsg_error_message(), "--max-pixels"),
          "60000 x 60000: %s", dsg_error_message());
    free(big.p);
  }

  /* a decoder that fails without a reason of its own (stb's inflate on a block of the reserved
   * type 3): the message names the PNG, not the reason the JPEG probe of stbi_info left behind
   * ("no SOI") */
  {
    buf bad = {0};
    static const unsigned char sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    unsigned char ihdr[13] = {0}, z[8] = {0x78, 0x01, 0x07, 0, 0, 0, 0, 0};
    put(&bad, sig, 8);
    be32(ihdr, W);
    be32(ihdr + 4, H);
    ihdr[8] = 8;
    png_chunk(&bad, "IHDR", ihdr, 13);
    png_chunk(&bad, "IDAT", z, sizeof(z));
    png_chunk(&bad, "IEND", NULL, 0);
    dsg_image img;
    const int st = decode(&bad, "reserved-block.png", &img);
    const char *msg = dsg_error_message();
    CHECK(st == DSG_ERR_FORMAT && !img.pixels && strstr(msg, "corrupt PNG") &&
              !strstr(msg, "SOI") && !strstr(msg, "()"),
          "PNG with a reserved deflate block: status %d, '%s'", st, msg);
    dsg_image_free(&img);
    free(bad.p);
  }

  /* issue 16: JPEG frames stb does not decode (arithmetic coding, lossless, hierarchical) are
   * named as such, not "a scan header before any frame"; a BMP's negative width is invalid (only
   * its height may be negative) */
  {
    static const struct {
      unsigned char sof;
      const char *expect;
    } frames[] = {{0xc9, "arithmetic-coded JPEG (SOF9)"},  {0xca, "arithmetic-coded JPEG (SOF10)"},
                  {0xcb, "arithmetic-coded JPEG (SOF11)"}, {0xcd, "arithmetic-coded JPEG (SOF13)"},
                  {0xce, "arithmetic-coded JPEG (SOF14)"}, {0xcf, "arithmetic-coded JPEG (SOF15)"},
                  {0xc3, "lossless JPEG (SOF3)"},          {0xc5, "hierarchical JPEG (SOF5)"},
                  {0xc7, "hierarchical JPEG (SOF7)"}};
    for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
      const unsigned char jpeg[] = {0xff, 0xd8, 0xff, frames[f].sof, 0x00, 0x0b, 0x08, 0x00,
                                    0x07, 0x00, 0x0d, 0x01,          0x01, 0x11, 0x00, 0xff,
                                    0xda, 0x00, 0x08, 0x01,          0x01, 0x00, 0x00, 0x3f,
                                    0x00, 0x12, 0x34, 0xff,          0xd9};
      dsg_image img;
      const int st = app_image_decode(jpeg, sizeof(jpeg), "arith.jpg", 1 << 22, &img);
      CHECK(st == DSG_ERR_FORMAT && !img.pixels && strstr(dsg_error_message(), frames[f].expect) &&
                strstr(dsg_error_message(), "does not decode"),
            "SOF 0x%02x: status %d, '%s'", frames[f].sof, st, dsg_error_message());
      dsg_image_free(&img);
    }
    buf bmp = {0};
    stbi_write_bmp_to_func(sink, &bmp, W, H, 3, rgb);
    int32_t neg = -W;
    memcpy(bmp.p + 18, &neg, 4);
    dsg_image img;
    int st = decode(&bmp, "negwidth.bmp", &img);
    CHECK(st == DSG_ERR_FORMAT && !img.pixels && strstr(dsg_error_message(), "width -13") &&
              !strstr(dsg_error_message(), "declares 13"),
          "BMP of width -13: status %d, '%s'", st, dsg_error_message());
    dsg_image_free(&img);
    neg = INT32_MIN; /* the height: -INT32_MIN does not fit an int32 */
    memcpy(bmp.p + 18, &(int32_t){W}, 4);
    memcpy(bmp.p + 22, &neg, 4);
    st = decode(&bmp, "minheight.bmp", &img);
    CHECK((st == DSG_ERR_FORMAT || st == DSG_ERR_LIMIT) && !img.pixels,
          "BMP of height INT32_MIN: status %d, '%s'", st, dsg_error_message());
    dsg_image_free(&img);
    free(bmp.p);
  }

  /* issue 16: special files are refused by what they are, without blocking (a FIFO with no
   * writer), and a long name keeps the reason in the message */
  {
    char dir[] = "/tmp/diaseg-test-image-XXXXXX", path[4096];
    unsigned char *data = NULL;
    size_t len = 0;
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof(path), "%s/fifo.png", dir);
    CHECK(mkfifo(path, 0600) == 0, "mkfifo");
    CHECK(app_read_file(path, &data, &len) == DSG_ERR_IO && !data &&
              strstr(dsg_error_message(), "FIFO"),
          "a FIFO: '%s'", dsg_error_message());
    unlink(path);
    CHECK(app_read_file("/dev/zero", &data, &len) == DSG_ERR_IO && !data &&
              strstr(dsg_error_message(), "device"),
          "/dev/zero: '%s'", dsg_error_message());
    CHECK(app_read_file("/proc/self/status", &data, &len) != DSG_OK && !data &&
              strstr(dsg_error_message(), "size"),
          "/proc/self/status: '%s'", dsg_error_message());
    CHECK(app_read_file(dir, &data, &len) == DSG_ERR_IO && !data &&
              strstr(dsg_error_message(), "directory"),
          "a folder: '%s'", dsg_error_message());
    memset(path, 'x', 3000);
    path[0] = '/';
    path[3000] = '\0';
    CHECK(app_read_file(path, &data, &len) == DSG_ERR_IO && !data &&
              strstr(dsg_error_message(), "File name too long") &&
              strlen(dsg_error_message()) < 600,
          "a 3000-character name: '%.80s...'", dsg_error_message());
    rmdir(dir);
  }

  /* orientation, EXIF, TIFF, WebP, standard input */
  test_orient();
  test_exif(rgb);
  test_tiff(gray, rgb);
  test_webp();
  test_jpeg_decoders(rgb);
  test_stdin(rgb);

  /* features */
  {
    unsigned char px[6] = {255, 0, 0, 10, 20, 30};
    dsg_image img;
    float *f = NULL;
    int nf = 0;
    dsg_image_from_pixels(&img, 2, 1, 3, px);
    CHECK(app_features(&img, test_cue("intensity"), &f, &nf) == DSG_OK && nf == 1 &&
              CLOSE(f[0], 0.299, 1e-6, 0) &&
              CLOSE(f[1], (0.299 * 10 + 0.587 * 20 + 0.114 * 30) / 255, 1e-6, 0),
          "intensity %g %g", f[0], f[1]);
    free(f);
    CHECK(app_features(&img, test_cue("color"), &f, &nf) == DSG_OK && nf == 3 && f[0] == 1.0f &&
              f[1] == 0.0f && CLOSE(f[5], 30 / 255.0, 1e-6, 0),
          "color");
    free(f);
    dsg_image_free(&img);
  }
  return check_report("test_image");
}
