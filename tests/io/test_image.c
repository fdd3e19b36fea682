/* The image loader: every format decodes to the pixels that were written (PNG gray, RGB, RGBA,
 * 16-bit and with a tRNS colour key; JPEG; BMP bottom-up and top-down; TGA raw and run-length;
 * PNM P5 and P6), every truncation and the stb_image defects of tests/fuzz/regressions are
 * refused with DSG_ERR_FORMAT and a message, and absurd sizes with DSG_ERR_LIMIT. Also the
 * features of docs/PIPELINE.md section 1. */
#include "diaseg_internal.h"
#include "io.h"
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

/* Decodes b and compares its first min(src, decoded) channels with pix (src channels a pixel). */
static void expect_pixels(const buf *b, const char *name, int channels, int src,
                          const unsigned char *pix, int tolerance)
{
  dsg_image img;
  int status = decode(b, name, &img);
  CHECK(status == DSG_OK, "%s: %s", name, dsg_error_message());
  if (status != DSG_OK)
    return;
  CHECK(img.width == W && img.height == H && img.channels == channels, "%s: %d x %d x %d", name,
        img.width, img.height, img.channels);
  int worst = 0;
  const int cmp = src < img.channels ? src : img.channels;
  for (int px = 0; px < W * H; px++)
    for (int ch = 0; ch < cmp; ch++) {
      int d = abs((int)img.pixels[px * img.channels + ch] - (int)pix[px * src + ch]);
      worst = d > worst ? d : worst;
    }
  CHECK(worst <= tolerance, "%s: pixels differ by up to %d", name, worst);
  /* every truncation is refused */
  for (size_t cut = 1; cut < b->len; cut += (b->len / 23) + 1) {
    dsg_image t;
    int st = app_image_decode(b->p, cut, name, 1 << 22, &t);
    CHECK(st == DSG_ERR_FORMAT && !t.pixels && strlen(dsg_error_message()) > 10,
          "%s truncated to %zu of %zu bytes: status %d", name, cut, b->len, st);
    dsg_image_free(&t);
  }
  dsg_image_free(&img);
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
    CHECK(decode(&big, "big.png", &img) == DSG_ERR_LIMIT &&
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
