/* Image containers, checked before any decoder sees a byte.
 *
 * TIFF and WebP go to libtiff and libwebp (image_tiff.c, image_webp.c): their walks below read the
 * declared size for the pixel cap and refuse a file whose header, directory, strips or chunks lie
 * outside it, so that a truncated file gets a message of its own. The TIFF directory reader here
 * also reads the EXIF block of a JPEG (image_orient.c).
 *
 * stb_image 2.27 (Debian 12's libstb-dev) has defects that a crafted file reaches (found by
 * tests/fuzz, kept in tests/fuzz/regressions/image): a JPEG Huffman table of more than 256 codes
 * overflows its arrays, a scan that uses an undefined table decodes from uninitialised memory, a
 * PNG chunk length of 2 GiB makes it allocate 2 GiB, an empty first IDAT does arithmetic on NULL,
 * a PNM header number past INT_MAX overflows. Its JPEG, BMP, TGA and PNM decoders also read zeros
 * (or stale heap) past the end of a truncated file instead of failing. Every one of these shows in
 * the container structure, which the walks below verify: chunk and segment lengths inside the
 * file, Huffman tables complete and defined before use, declared data present. The pixel data
 * itself stays stb's job. */
#include "io_internal.h"

#include <stdint.h>
#include <string.h>
#include <strings.h>

app_image_format app_image_sniff(const unsigned char *b, size_t len, const char *name)
{
  static const unsigned char png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const char *dot = strrchr(name, '.');
  if (len >= 8 && memcmp(b, png, 8) == 0)
    return APP_FMT_PNG;
  if (len >= 3 && b[0] == 0xff && b[1] == 0xd8 && b[2] == 0xff)
    return APP_FMT_JPEG;
  if (len >= 2 && b[0] == 'B' && b[1] == 'M')
    return APP_FMT_BMP;
  if (len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6'))
    return APP_FMT_PNM;
  if (len >= 4 && ((b[0] == 'I' && b[1] == 'I' && (b[2] == 42 || b[2] == 43) && b[3] == 0) ||
                   (b[0] == 'M' && b[1] == 'M' && b[2] == 0 && (b[3] == 42 || b[3] == 43))))
    return APP_FMT_TIFF;
  if (len >= 12 && memcmp(b, "RIFF", 4) == 0 && memcmp(b + 8, "WEBP", 4) == 0)
    return APP_FMT_WEBP;
  /* TGA has no signature: only trust it when the name says so */
  if (dot && strcasecmp(dot, ".tga") == 0)
    return APP_FMT_TGA;
  return APP_FMT_UNKNOWN;
}

static unsigned long be32(const unsigned char *p)
{
  return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}
static unsigned be16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }
static unsigned le16(const unsigned char *p) { return p[0] | (unsigned)p[1] << 8; }
static unsigned long le32(const unsigned char *p)
{
  return p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16 | (unsigned long)p[3] << 24;
}

#define BAD(...) dsg_error_set(DSG_ERR_FORMAT, __VA_ARGS__)

/* PNG: IHDR first, every chunk inside the file, IDAT present and not empty first, IEND last. */
static int check_png(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  size_t pos = 8;
  int first = 1, idat = 0;
  while (pos + 12 <= len) {
    const unsigned long clen = be32(b + pos);
    const unsigned char *type = b + pos + 4;
    for (int i = 0; i < 4; i++)
      if (!((type[i] >= 'A' && type[i] <= 'Z') || (type[i] >= 'a' && type[i] <= 'z')))
        return BAD("'%s' is a corrupt PNG: a chunk type at byte %zu is not four letters", name,
                   pos);
    if (clen > len - pos - 12)
      return BAD(
          "'%s' is a truncated or corrupt PNG: its %.4s chunk declares %lu bytes, %zu remain", name,
          (const char *)type, clen, len - pos - 12);
    if (first) {
      if (memcmp(type, "IHDR", 4) != 0 || clen != 13)
        return BAD("'%s' is a corrupt PNG: it does not start with a 13-byte IHDR chunk", name);
      *w = (long)(be32(b + pos + 8) & 0x7fffffffUL);
      *h = (long)(be32(b + pos + 12) & 0x7fffffffUL);
      first = 0;
    } else if (memcmp(type, "IDAT", 4) == 0) {
      if (clen == 0 && !idat)
        return BAD("'%s' has an empty first IDAT chunk, which diaseg's PNG decoder does not "
                   "handle",
                   name);
      idat = 1;
    } else if (memcmp(type, "IEND", 4) == 0) {
      if (!idat)
        return BAD("'%s' is a PNG without image data (no IDAT chunk)", name);
      return DSG_OK;
    }
    pos += 12 + clen;
  }
  return BAD("'%s' is a truncated PNG: it ends before its IEND chunk", name);
}

/* A JPEG Huffman table segment: classes and ids in range, at most 256 codes, code lengths that
 * fit a binary code (the check stb makes only after writing past its arrays). */
static int check_dht(const unsigned char *p, const unsigned char *end, const char *name,
                     int defined[2][4])
{
  while (p < end) {
    if (end - p < 17)
      return BAD("'%s' is a corrupt JPEG: a Huffman table is cut short", name);
    const int tc = p[0] >> 4, th = p[0] & 15;
    long total = 0, avail = 1;
    if (tc > 1 || th > 3)
      return BAD("'%s' is a corrupt JPEG: Huffman table class %d id %d", name, tc, th);
    for (int l = 1; l <= 16; l++) {
      total += p[l];
      avail = avail * 2 - p[l];
      if (avail < 0)
        return BAD("'%s' is a corrupt JPEG: a Huffman table has more codes of %d bits than fit",
                   name, l);
    }
    if (total > 256)
      return BAD("'%s' is a corrupt JPEG: a Huffman table declares %ld codes (at most 256)", name,
                 total);
    if (end - p < 17 + total)
      return BAD("'%s' is a corrupt JPEG: a Huffman table's symbols are cut short", name);
    defined[tc][th] = 1;
    p += 17 + total;
  }
  return DSG_OK;
}

/* JPEG: segments inside the file, a frame before any scan, every Huffman table a scan uses
 * defined before it, entropy-coded data that ends in a marker, and an EOI. */
static int check_jpeg(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  size_t pos = 2;
  int defined[2][4] = {{0}}, frame = 0, progressive = 0, scans = 0;
  while (pos + 1 < len) {
    if (b[pos] != 0xff)
      return BAD("'%s' is a corrupt JPEG: no marker at byte %zu", name, pos);
    while (pos + 1 < len && b[pos + 1] == 0xff) /* fill bytes */
      pos++;
    if (pos + 1 >= len)
      break;
    const unsigned m = b[pos + 1];
    pos += 2;
    if (m == 0xd9) { /* EOI */
      if (!frame || !scans)
        return BAD("'%s' is a JPEG without %s", name, frame ? "a scan" : "a frame");
      return DSG_OK;
    }
    if (m == 0xd8 || m == 0x00)
      return BAD("'%s' is a corrupt JPEG: marker 0x%02x at byte %zu", name, m, pos - 2);
    if (m == 0x01 || (m >= 0xd0 && m <= 0xd7))
      continue; /* standalone markers */
    if (pos + 2 > len)
      break;
    const size_t slen = be16(b + pos);
    if (slen < 2 || slen > len - pos)
      return BAD("'%s' is a truncated or corrupt JPEG: a 0x%02x segment of %zu bytes at byte %zu",
                 name, m, slen, pos);
    const unsigned char *p = b + pos + 2, *end = b + pos + slen;
    if (m == 0xc4) {
      int status = check_dht(p, end, name, defined);
      if (status != DSG_OK)
        return status;
    } else if (m == 0xc0 || m == 0xc1 || m == 0xc2) { /* the frames stb decodes */
      if (slen < 8 || slen < 8 + 3u * p[5])
        return BAD("'%s' is a corrupt JPEG: a frame header of %zu bytes", name, slen);
      *h = (long)be16(p + 1);
      *w = (long)be16(p + 3);
      frame = 1;
      progressive = m == 0xc2;
    } else if (m >= 0xc3 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc) {
      /* the other frames (SOF3, SOF5..7, SOF9..11, SOF13..15): valid JPEG that stb (baseline and
       * progressive Huffman only) does not decode; 0xc4 is DHT, 0xc8 reserved, 0xcc DAC */
      return BAD("'%s' is %s JPEG (SOF%u), which diaseg does not decode: convert it to a "
                 "baseline JPEG or a PNG",
                 name,
                 m >= 0xc9   ? "an arithmetic-coded"
                 : m == 0xc3 ? "a lossless"
                             : "a hierarchical",
                 m - 0xc0);
    } else if (m == 0xda) { /* SOS */
      const int ns = slen >= 3 ? p[0] : 0;
      if (!frame || ns < 1 || ns > 4 || slen != 6 + 2u * (unsigned)ns)
        return BAD("'%s' is a corrupt JPEG: a scan header %s", name,
                   frame ? "of the wrong size" : "before any frame");
      const int ss = p[1 + 2 * ns], se = p[2 + 2 * ns], ah = p[3 + 2 * ns] >> 4;
      for (int c = 0; c < ns; c++) {
        const int td = p[2 + 2 * c] >> 4, ta = p[2 + 2 * c] & 15;
        const int need_dc = !progressive || (ss == 0 && ah == 0);
        const int need_ac = !progressive || se > 0;
        if ((need_dc && (td > 3 || !defined[0][td])) || (need_ac && (ta > 3 || !defined[1][ta])))
          return BAD("'%s' is a corrupt JPEG: a scan uses a Huffman table that was never "
                     "defined",
                     name);
      }
      scans++;
      /* the entropy-coded data: up to the next marker that is not a stuffed byte or a restart */
      pos += slen;
      while (pos + 1 < len &&
             !(b[pos] == 0xff && b[pos + 1] != 0x00 && !(b[pos + 1] >= 0xd0 && b[pos + 1] <= 0xd7)))
        pos++;
      continue;
    }
    pos += slen;
  }
  return BAD("'%s' is a truncated JPEG: it ends before its end-of-image marker", name);
}

/* PNM header integer: whitespace and # comments before it; -1 if absent or over 2^24. The
 * grammar is stb_image's (stbi__pnm_skip_whitespace), so that the integers checked here are
 * those stb reads: whitespace is isspace's six, and a comment ends at '\n' or '\r' (ended at
 * '\n' only, a comment could hide from this check a number stb reads and overflows on). */
static long pnm_int(const unsigned char *b, size_t len, size_t *pos)
{
  long v = -1;
  while (*pos < len) {
    if (b[*pos] == '#') {
      while (*pos < len && b[*pos] != '\n' && b[*pos] != '\r')
        (*pos)++;
    } else if (b[*pos] == ' ' || (b[*pos] >= '\t' && b[*pos] <= '\r')) {
      (*pos)++;
    } else {
      break;
    }
  }
  while (*pos < len && b[*pos] >= '0' && b[*pos] <= '9') {
    v = (v < 0 ? 0 : v) * 10 + (b[*pos] - '0');
    if (v > (1L << 24))
      return -1;
    (*pos)++;
  }
  return v;
}

/* PNM (P5, P6): a well-formed header and all the pixel data it declares. */
static int check_pnm(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  size_t pos = 2;
  const int channels = b[1] == '6' ? 3 : 1;
  long maxval;
  *w = pnm_int(b, len, &pos);
  *h = pnm_int(b, len, &pos);
  maxval = pnm_int(b, len, &pos);
  if (*w < 0 || *h < 0 || maxval < 1 || maxval > 65535 || pos >= len ||
      !(b[pos] == ' ' || b[pos] == '\t' || b[pos] == '\r' || b[pos] == '\n'))
    return BAD("'%s' has a corrupt PNM header (width, height and maxval 1..65535 expected)", name);
  pos++;
  if (*w >= 1 && *h >= 1) {
    const size_t need = (size_t)*w * (size_t)*h * (size_t)channels * (maxval > 255 ? 2 : 1);
    if (need > len - pos)
      return BAD("'%s' is a truncated PNM: %zu bytes of pixels declared, %zu present", name, need,
                 len - pos);
  }
  return DSG_OK;
}

/* TGA: a valid header, and pixel data (raw, or run-length packets) for every pixel. */
static int check_tga(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  if (len < 18)
    return BAD("'%s' is too short for a TGA header", name);
  const int type = b[2], bpp = b[16], cmap = b[1];
  const size_t cmap_bytes = cmap ? (size_t)le16(b + 5) * ((b[7] + 7u) / 8u) : 0;
  const size_t pixel = (size_t)(bpp + 7) / 8;
  size_t pos = 18 + (size_t)b[0] + cmap_bytes;
  *w = (long)le16(b + 12);
  *h = (long)le16(b + 14);
  if (!(type == 1 || type == 2 || type == 3 || type == 9 || type == 10 || type == 11) || cmap > 1 ||
      !(bpp == 8 || bpp == 15 || bpp == 16 || bpp == 24 || bpp == 32))
    return BAD("'%s' is not a TGA diaseg reads (type %d, %d bits per pixel)", name, type, bpp);
  if (pos > len)
    return BAD("'%s' is a truncated TGA: its header and colour map need %zu bytes", name, pos);
  const size_t pixels = (size_t)*w * (size_t)*h;
  if (type < 9) {
    if (pixels * pixel > len - pos)
      return BAD("'%s' is a truncated TGA: %zu bytes of pixels declared, %zu present", name,
                 pixels * pixel, len - pos);
    return DSG_OK;
  }
  for (size_t done = 0; done < pixels;) { /* run-length packets */
    if (pos >= len)
      return BAD("'%s' is a truncated TGA: its run-length data stops after %zu of %zu pixels", name,
                 done, pixels);
    const size_t count = (size_t)(b[pos] & 0x7f) + 1, body = b[pos] & 0x80 ? pixel : count * pixel;
    pos++;
    if (body > len - pos)
      return BAD("'%s' is a truncated TGA: a run-length packet is cut short", name);
    pos += body;
    done += count;
  }
  return DSG_OK;
}

/* BMP: the declared file size and, uncompressed, the pixel rows. */
static int check_bmp(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  if (len < 26)
    return BAD("'%s' is too short for a BMP header", name);
  const unsigned long declared = le32(b + 2), data = le32(b + 10), dib = le32(b + 14);
  long bw, bh;
  unsigned bpp = 0;
  unsigned long compression = 0;
  if (dib == 12) { /* OS/2 */
    bw = (long)le16(b + 18);
    bh = (long)le16(b + 20);
    bpp = len >= 26 ? le16(b + 24) : 0;
  } else {
    if (len < 34)
      return BAD("'%s' is too short for its BMP header", name);
    bw = (long)(int32_t)le32(b + 18);
    bh = (long)(int32_t)le32(b + 22);
    bpp = le16(b + 28);
    compression = le32(b + 30);
  }
  if (bw < 0) /* stb takes the sign for a size and fails later: say what is wrong */
    return BAD("'%s' is a corrupt BMP: its width %ld is negative (only the height may be: rows "
               "top-down)",
               name, bw);
  *w = bw;
  *h = bh < 0 ? -bh : bh; /* negative height: rows top-down */
  if (declared > len)
    return BAD("'%s' is a truncated BMP: %zu of %lu bytes", name, len, declared);
  if ((compression == 0 || compression == 3) && bpp >= 1 && bpp <= 32 && *w >= 1 && *h >= 1) {
    const size_t stride = (((size_t)*w * bpp + 31) / 32) * 4;
    if (data > len || stride * (size_t)*h > len - data)
      return BAD("'%s' is a truncated BMP: pixel data needs %zu bytes after offset %lu, the file "
                 "has %zu",
                 name, stride * (size_t)*h, data, len);
  }
  return DSG_OK;
}

/* ---- TIFF directories: TIFF files, and the EXIF block of a JPEG (image_orient.c) ------------ */

/* An unsigned integer of `bytes` bytes at b + at in the directory's byte order (the callers have
 * checked that the bytes are inside the buffer). */
static uint64_t tiff_get(const app_tiff_dir *d, size_t at, unsigned bytes)
{
  uint64_t v = 0;
  for (unsigned i = 0; i < bytes; i++)
    v |= (uint64_t)d->b[at + (d->big_endian ? bytes - 1 - i : i)] << (8 * i);
  return v;
}

/* Bytes per value of a TIFF field type; 0 for a type that does not exist. */
static unsigned tiff_type_size(unsigned type)
{
  /* BYTE ASCII SHORT LONG RATIONAL SBYTE UNDEFINED SSHORT SLONG SRATIONAL FLOAT DOUBLE IFD - -
   * LONG8 SLONG8 IFD8 */
  static const unsigned char size[19] = {0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4, 0, 0, 8, 8, 8};
  return type < 19 ? size[type] : 0;
}

int app_tiff_dir_open(const unsigned char *b, size_t len, app_tiff_dir *d)
{
  uint64_t ifd, count;
  size_t count_bytes, entry_bytes;
  memset(d, 0, sizeof(*d));
  if (len < 8 || !((b[0] == 'I' && b[1] == 'I') || (b[0] == 'M' && b[1] == 'M')))
    return 0;
  d->b = b;
  d->len = len;
  d->big_endian = b[0] == 'M';
  switch (tiff_get(d, 2, 2)) {
  case 42: ifd = tiff_get(d, 4, 4); break;
  case 43: /* BigTIFF: offsets of 8 bytes */
    if (len < 16 || tiff_get(d, 4, 2) != 8 || tiff_get(d, 6, 2) != 0)
      return 0;
    d->bigtiff = 1;
    ifd = tiff_get(d, 8, 8);
    break;
  default: return 0;
  }
  count_bytes = d->bigtiff ? 8 : 2;
  entry_bytes = d->bigtiff ? 20 : 12;
  if (ifd < 8 || ifd > len || len - ifd < count_bytes)
    return 0;
  count = tiff_get(d, (size_t)ifd, (unsigned)count_bytes);
  if (count > (len - (size_t)ifd - count_bytes) / entry_bytes)
    return 0;
  d->entries = (size_t)ifd + count_bytes;
  d->count = (size_t)count;
  return 1;
}

int app_tiff_dir_field(const app_tiff_dir *d, unsigned tag, app_tiff_field *f)
{
  const size_t entry_bytes = d->bigtiff ? 20 : 12;
  const unsigned inline_bytes = d->bigtiff ? 8 : 4;
  for (size_t i = 0; i < d->count; i++) {
    const size_t e = d->entries + i * entry_bytes;
    if (tiff_get(d, e, 2) != tag)
      continue;
    const unsigned type = (unsigned)tiff_get(d, e + 2, 2), size = tiff_type_size(type);
    const uint64_t count = tiff_get(d, e + 4, inline_bytes);
    uint64_t at = e + 4 + inline_bytes;
    if (!size || count > d->len / size)
      return 0;
    if (count * size > inline_bytes) { /* the values are elsewhere in the file */
      at = tiff_get(d, (size_t)at, inline_bytes);
      if (at > d->len || count * size > d->len - at)
        return 0;
    }
    f->type = type;
    f->count = count;
    f->data = (size_t)at;
    return 1;
  }
  return 0;
}

uint64_t app_tiff_field_value(const app_tiff_dir *d, const app_tiff_field *f, uint64_t i)
{
  const unsigned t = f->type;
  if (i >= f->count || !(t == 1 || t == 3 || t == 4 || t == 13 || t == 16 || t == 18))
    return 0;
  return tiff_get(d, f->data + (size_t)i * tiff_type_size(t), tiff_type_size(t));
}

/* TIFF: the header and the first directory inside the file, a width and a height, and every strip
 * or tile the directory lists inside the file. The rest (codecs, sample layouts) is libtiff's. */
static int check_tiff(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  app_tiff_dir d;
  app_tiff_field fw, fh, offsets, counts;
  int tiled;
  if (!app_tiff_dir_open(b, len, &d))
    return BAD("'%s' is a truncated or corrupt TIFF: its header or first directory lies outside "
               "the file",
               name);
  /* the fields decoding needs, their values inside the file (others, such as metadata, are
   * libtiff's to ignore) */
  static const unsigned short needed[] = {256, 257, 258, 259, 262, 273, 277, 278, 279, 284,
                                          317, 320, 322, 323, 324, 325, 338, 339, 347, 530};
  for (size_t i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
    app_tiff_field f;
    for (size_t k = 0; k < d.count; k++) {
      const size_t e = d.entries + k * (d.bigtiff ? 20 : 12);
      if (tiff_get(&d, e, 2) == needed[i] && tiff_type_size((unsigned)tiff_get(&d, e + 2, 2)) &&
          !app_tiff_dir_field(&d, needed[i], &f))
        return BAD("'%s' is a truncated or corrupt TIFF: the values of its tag %u lie outside the "
                   "file",
                   name, needed[i]);
    }
  }
  if (!app_tiff_dir_field(&d, 256, &fw) || !app_tiff_dir_field(&d, 257, &fh))
    return BAD("'%s' is a corrupt TIFF: its first directory has no image width or height", name);
  const uint64_t vw = app_tiff_field_value(&d, &fw, 0), vh = app_tiff_field_value(&d, &fh, 0);
  *w = vw > 0x7fffffffu ? 0x7fffffffL : (long)vw;
  *h = vh > 0x7fffffffu ? 0x7fffffffL : (long)vh;
  tiled = app_tiff_dir_field(&d, 324, &offsets); /* TileOffsets, else StripOffsets */
  if ((tiled || app_tiff_dir_field(&d, 273, &offsets)) &&
      app_tiff_dir_field(&d, tiled ? 325 : 279, &counts)) {
    if (offsets.count != counts.count)
      return BAD("'%s' is a corrupt TIFF: %llu %s offsets but %llu byte counts", name,
                 (unsigned long long)offsets.count, tiled ? "tile" : "strip",
                 (unsigned long long)counts.count);
    for (uint64_t i = 0; i < offsets.count; i++) {
      const uint64_t at = app_tiff_field_value(&d, &offsets, i);
      const uint64_t n = app_tiff_field_value(&d, &counts, i);
      if (at > len || n > len - at)
        return BAD("'%s' is a truncated or corrupt TIFF: %s %llu declares %llu bytes at byte "
                   "%llu, the file has %zu",
                   name, tiled ? "tile" : "strip", (unsigned long long)i, (unsigned long long)n,
                   (unsigned long long)at, len);
    }
  }
  return DSG_OK;
}

/* ---- WebP -------------------------------------------------------------------------------- */

static unsigned long le24(const unsigned char *p)
{
  return p[0] | (unsigned long)p[1] << 8 | (unsigned long)p[2] << 16;
}

/* WebP: the RIFF size inside the file, every chunk inside it, a first chunk that declares the
 * canvas (VP8, VP8L or VP8X), no animation, and a bitstream chunk. The bitstream is libwebp's. */
static int check_webp(const unsigned char *b, size_t len, const char *name, long *w, long *h)
{
  const unsigned long riff = le32(b + 4);
  size_t pos = 12, end;
  int image = 0;
  if (riff < 4 || riff > len - 8)
    return BAD("'%s' is a truncated or corrupt WebP: its RIFF header declares %lu bytes, %zu "
               "follow it",
               name, riff, len - 8);
  end = 8 + (size_t)riff;
  while (pos < end) {
    if (end - pos < 8)
      return BAD("'%s' is a truncated WebP: a chunk header at byte %zu is cut short", name, pos);
    const unsigned char *type = b + pos, *p = b + pos + 8;
    const unsigned long clen = le32(b + pos + 4);
    for (int i = 0; i < 4; i++)
      if (type[i] < 0x20 || type[i] > 0x7e)
        return BAD("'%s' is a corrupt WebP: a chunk type at byte %zu is not four characters", name,
                   pos);
    if (clen > end - pos - 8)
      return BAD("'%s' is a truncated or corrupt WebP: its %.4s chunk declares %lu bytes, %zu "
                 "remain",
                 name, (const char *)type, clen, end - pos - 8);
    const int vp8 = memcmp(type, "VP8 ", 4) == 0, vp8l = memcmp(type, "VP8L", 4) == 0;
    if (pos == 12) { /* the first chunk says the size */
      if (memcmp(type, "VP8X", 4) == 0) {
        if (clen < 10)
          return BAD("'%s' is a corrupt WebP: a VP8X chunk of %lu bytes", name, clen);
        if (p[0] & 0x02) /* the animation flag */
          return BAD("'%s' is an animated WebP, which diaseg does not decode: save the frame "
                     "you want as a still image (PNG, WebP)",
                     name);
        *w = (long)le24(p + 4) + 1;
        *h = (long)le24(p + 7) + 1;
      } else if (vp8) {
        if (clen < 10 || (p[0] & 1) || p[3] != 0x9d || p[4] != 0x01 || p[5] != 0x2a)
          return BAD("'%s' is a corrupt WebP: its VP8 chunk does not start with a key frame", name);
        *w = (long)(le16(p + 6) & 0x3fff);
        *h = (long)(le16(p + 8) & 0x3fff);
      } else if (vp8l) {
        if (clen < 5 || p[0] != 0x2f)
          return BAD("'%s' is a corrupt WebP: its VP8L chunk has no lossless signature", name);
        *w = (long)(le32(p + 1) & 0x3fff) + 1;
        *h = (long)((le32(p + 1) >> 14) & 0x3fff) + 1;
      } else {
        return BAD("'%s' is a corrupt WebP: its first chunk is '%.4s', not VP8, VP8L or VP8X", name,
                   (const char *)type);
      }
    }
    image |= vp8 || vp8l;
    pos += 8 + clen + (clen & 1); /* chunks are padded to an even size */
  }
  if (!image)
    return BAD("'%s' is a WebP without image data (no VP8 or VP8L chunk)", name);
  return DSG_OK;
}

int app_image_check(app_image_format fmt, const unsigned char *b, size_t len, const char *name,
                    long *w, long *h)
{
  *w = *h = -1;
  switch (fmt) {
  case APP_FMT_PNG: return check_png(b, len, name, w, h);
  case APP_FMT_JPEG: return check_jpeg(b, len, name, w, h);
  case APP_FMT_PNM: return check_pnm(b, len, name, w, h);
  case APP_FMT_TGA: return check_tga(b, len, name, w, h);
  case APP_FMT_BMP: return check_bmp(b, len, name, w, h);
  case APP_FMT_TIFF: return check_tiff(b, len, name, w, h);
  case APP_FMT_WEBP: return check_webp(b, len, name, w, h);
  default:
    return BAD("'%s' is not a supported image (PNG, JPEG, TIFF, WebP, BMP, TGA, PNM P5/P6)", name);
  }
}
