/* The bodies of the two fuzz targets, shared by the libFuzzer harnesses (fuzz_image.c,
 * fuzz_cli.c) and the plain replay program (replay.c), so that a file replays exactly as the
 * fuzzer ran it.
 *
 * Each function runs one input through an entry point of diaseg and checks its contract. It
 * returns 0 when the contract holds, 1 when it is broken, with a one-line reason in why[]. Memory
 * errors, leaks and undefined behaviour are left to the sanitizers.
 *
 * Input encodings (also in README.md):
 *  - image: byte 0 picks the file name ("fuzz.png" if even, "fuzz.tga" if odd: the name enables
 *    the TGA decoder, the only format without a signature); bytes 1.. are the file. An empty input
 *    is an empty file named "fuzz.png".
 *  - cli: the argument list, each argument terminated by a NUL byte (a last argument without its
 *    NUL counts too); argv[0] is "diaseg"; at most FUZZ_CLI_MAX_ARGS arguments are used.
 */
#ifndef DIASEG_FUZZ_TARGETS_H
#define DIASEG_FUZZ_TARGETS_H

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "diaseg.h"
#include "io.h"
#include "spmv.h"

/* Cap on width * height for the image target: large enough for every real header path, small
 * enough that the fuzzer does not spend its time allocating huge images. */
#define FUZZ_IMAGE_MAX_PIXELS ((size_t)1 << 22)
#define FUZZ_CLI_MAX_ARGS 64

static int fuzz_fail(char *why, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fuzz_fail(char *why, size_t cap, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  if (why && cap)
    vsnprintf(why, cap, fmt, ap);
  va_end(ap);
  return 1;
}

/* What the last call returned, in words, when fuzz_want_outcome is set (replay's --show). */
static char fuzz_outcome[512];
static int fuzz_want_outcome;

/* ---- "never prints" ----------------------------------------------------------------------- */

/* app_cli_parse must not print. Everything diaseg prints goes through stdio, so give stdout and
 * stderr (once) a large full buffer of their own, flush them before the call and see whether the
 * call left anything in them. libFuzzer flushes after each of its own messages, and the sanitizers
 * write their reports with write(2), so neither is affected. glibc only (it reads FILE's write
 * pointers); elsewhere the check is skipped. */
#if defined(__GLIBC__)
#define FUZZ_CAN_CHECK_PRINTS 1
static char fuzz_stdout_buf[1 << 16], fuzz_stderr_buf[1 << 16];
static void fuzz_print_check_begin(void)
{
  static int ready;
  if (!ready) {
    fflush(stdout);
    fflush(stderr);
    setvbuf(stdout, fuzz_stdout_buf, _IOFBF, sizeof(fuzz_stdout_buf));
    setvbuf(stderr, fuzz_stderr_buf, _IOFBF, sizeof(fuzz_stderr_buf));
    ready = 1;
  }
  fflush(stdout);
  fflush(stderr);
}
/* Bytes printed since fuzz_print_check_begin (at least; a buffer overflow would have flushed). */
static size_t fuzz_print_check_end(void)
{
  size_t n = 0;
  if (stdout->_IO_write_ptr && stdout->_IO_write_base)
    n += (size_t)(stdout->_IO_write_ptr - stdout->_IO_write_base);
  if (stderr->_IO_write_ptr && stderr->_IO_write_base)
    n += (size_t)(stderr->_IO_write_ptr - stderr->_IO_write_base);
  return n;
}
#else
#define FUZZ_CAN_CHECK_PRINTS 0
static void fuzz_print_check_begin(void) {}
static size_t fuzz_print_check_end(void) { return 0; }
#endif

/* ---- image -------------------------------------------------------------------------------- */

/* Known, reported stb_image 2.27 bugs that diaseg does not guard against yet (README.md,
 * "Findings"; reproducers in regressions/image/). Returns the finding's name when the file
 * (without the selector byte) would trigger one, NULL otherwise. The libFuzzer harness skips such
 * inputs when DIASEG_FUZZ_SKIP_KNOWN=1 (run_fuzz.sh: SKIP_KNOWN=1), so that a shallow known bug
 * does not stop or flood a run; replay never skips, so the regressions keep failing until fixed.
 * Over-approximations are fine here: they only make the fuzzer skip a few more inputs. */
static const char *fuzz_image_known_issue(const unsigned char *b, size_t len)
{
  /* F1: a JPEG DHT table whose 16 code-length counts add up to more than 256 overflows
   * stbi__huffman.size[257] / values[256] in stbi__build_huffman and stbi__process_marker. */
  if (len >= 3 && b[0] == 0xff && b[1] == 0xd8) {
    for (size_t p = 2; p + 4 < len; p++) {
      if (b[p] != 0xff || b[p + 1] != 0xc4)
        continue;
      size_t seg = (size_t)b[p + 2] << 8 | b[p + 3], q = p + 4, end = p + 2 + seg;
      if (end > len)
        end = len;
      while (q < end) { /* stb reads zeros past the end of the data */
        unsigned n = 0;
        for (size_t i = 0; i < 16 && q + 1 + i < len; i++)
          n += b[q + 1 + i];
        if (n > 256)
          return "stb-jpeg-dht-over-256-codes";
        q += 17 + n;
      }
    }
  }
  /* F2: a P5/P6 header integer above INT_MAX overflows int in stbi__pnm_getinteger (signed
   * overflow: undefined behaviour) */
  if (len >= 2 && b[0] == 'P' && (b[1] == '5' || b[1] == '6')) {
    unsigned long long v = 0;
    for (size_t p = 2; p < len && p < 4096; p++) {
      if (b[p] >= '0' && b[p] <= '9') {
        v = v * 10 + (unsigned)(b[p] - '0');
        if (v > 2147483647ULL)
          return "stb-pnm-header-int-overflow";
      } else {
        v = 0;
      }
    }
  }
  /* F3: an empty IDAT chunk before any data: stbi__parse_png_file computes z->idata + 0 with
   * idata == NULL (undefined behaviour; harmless in practice).
   * F5: IDAT lengths that add up to gigabytes: stbi__parse_png_file reallocates its IDAT buffer
   * to the declared total before reading it (up to 2 GiB from a file of a few bytes). */
  if (len >= 8 && memcmp(b, "\x89PNG\r\n\x1a\n", 8) == 0) {
    unsigned long long idat = 0;
    for (size_t p = 8; p + 8 <= len;) {
      size_t n = (size_t)b[p] << 24 | (size_t)b[p + 1] << 16 | (size_t)b[p + 2] << 8 | b[p + 3];
      if (memcmp(b + p + 4, "IDAT", 4) == 0) {
        if (n == 0 && idat == 0)
          return "stb-png-empty-first-idat";
        idat += n;
        if (idat > ((unsigned long long)1 << 28))
          return "stb-png-idat-huge-allocation";
      }
      if (n > len)
        break;
      p += 12 + n;
    }
  }
  /* F4: a JPEG scan that uses a Huffman table no DHT defined: stbi__jpeg is malloc'd without being
   * cleared, so stbi__jpeg_huff_decode reads uninitialised tables (out-of-bounds reads of
   * maxcode[18] and values[256] at garbage indices, bad shifts), depending on the heap's
   * contents */
  if (len >= 4 && b[0] == 0xff && b[1] == 0xd8) {
    unsigned defined = 0; /* bit th: DC table th; bit 4 + th: AC table th */
    size_t p = 2;
    while (p + 4 <= len) {
      unsigned m = b[p + 1];
      if (b[p] != 0xff || m == 0xff) { /* entropy-coded data, fill bytes */
        p++;
        continue;
      }
      if (m == 0x00 || m == 0x01 || m == 0xd8 || (m >= 0xd0 && m <= 0xd7)) {
        p += 2;
        continue;
      }
      if (m == 0xd9)
        break;
      size_t seg = (size_t)b[p + 2] << 8 | b[p + 3], end = p + 2 + seg;
      if (end > len)
        end = len;
      if (m == 0xc4) {
        for (size_t q = p + 4; q < end;) {
          unsigned tc = b[q] >> 4, th = b[q] & 15, n = 0;
          for (size_t i = 0; i < 16 && q + 1 + i < len; i++)
            n += b[q + 1 + i];
          if (tc <= 1 && th <= 3)
            defined |= 1u << (tc * 4 + th);
          q += 17 + n;
        }
      } else if (m == 0xda && p + 4 < len) {
        size_t ns = b[p + 4], ss_at = p + 5 + 2 * ns;
        unsigned ss = ss_at < len ? b[ss_at] : 0, se = ss_at + 1 < len ? b[ss_at + 1] : 0;
        for (size_t i = 0; i < ns && p + 6 + 2 * i < len; i++) {
          unsigned td = b[p + 6 + 2 * i] >> 4, ta = b[p + 6 + 2 * i] & 15;
          if ((ss == 0 && td <= 3 && !(defined & (1u << td))) ||
              ((ss > 0 || se > 0) && ta <= 3 && !(defined & (1u << (4 + ta)))))
            return "stb-jpeg-undefined-huffman-table";
        }
      }
      p = end > p + 2 ? end : p + 2;
    }
  }
  return NULL;
}

static int fuzz_image_status_ok(int status)
{
  /* io.h: DSG_ERR_IO, DSG_ERR_FORMAT or DSG_ERR_LIMIT; DSG_ERR_INVALID over max_pixels (the
   * caller's cap); DSG_ERR_NOMEM when an allocation fails */
  return status == DSG_ERR_FORMAT || status == DSG_ERR_LIMIT || status == DSG_ERR_INVALID ||
         status == DSG_ERR_NOMEM || status == DSG_ERR_IO;
}

/* One decode of the input and its contract; stb: every JPEG through stb_image
 * (app_image_decode_stb) instead of the build's choice. */
static int fuzz_image_decode(const uint8_t *data, size_t size, int stb, char *why, size_t cap)
{
  const char *name = size > 0 && (data[0] & 1) ? "fuzz.tga" : "fuzz.png";
  const unsigned char *file = size > 0 ? data + 1 : data;
  size_t len = size > 0 ? size - 1 : 0;
  dsg_image img;
  int status, bad = 0;

  /* poison the output so that a path which forgets to set it shows */
  memset(&img, 0xa5, sizeof(img));
  dsg_error_clear();
  status = stb ? app_image_decode_stb(file, len, name, FUZZ_IMAGE_MAX_PIXELS, &img)
               : app_image_decode(file, len, name, FUZZ_IMAGE_MAX_PIXELS, &img);
  if (status == DSG_OK) {
    if (img.width < 1 || img.height < 1 || img.channels < 1 || img.channels > 4)
      bad = fuzz_fail(why, cap, "%s: DSG_OK with shape %d x %d x %d", name, img.width, img.height,
                      img.channels);
    else if ((size_t)img.width * (size_t)img.height > FUZZ_IMAGE_MAX_PIXELS)
      bad = fuzz_fail(why, cap, "%s: DSG_OK with %d x %d pixels, over the cap of %zu", name,
                      img.width, img.height, FUZZ_IMAGE_MAX_PIXELS);
    else if (!img.pixels)
      bad = fuzz_fail(why, cap, "%s: DSG_OK with no pixels", name);
    else {
      /* touch the first and the last of the width * height * channels bytes: AddressSanitizer
       * reports a buffer that is shorter than the contract says */
      size_t bytes = (size_t)img.width * (size_t)img.height * (size_t)img.channels;
      volatile unsigned char sink = img.pixels[0];
      sink ^= img.pixels[bytes - 1];
      (void)sink;
    }
  } else {
    const char *msg = dsg_error_message();
    if (status > 0 || !fuzz_image_status_ok(status))
      bad = fuzz_fail(why, cap,
                      "%s: status %d is not DSG_OK, _FORMAT, _LIMIT, _NOMEM or _IO "
                      "(message: '%s')",
                      name, status, msg ? msg : "(null)");
    else if (!msg || !msg[0])
      bad = fuzz_fail(why, cap, "%s: status %d (%s) with an empty message", name, status,
                      dsg_status_name(status));
    else if (img.pixels)
      bad = fuzz_fail(why, cap, "%s: status %d (%s) but img.pixels = %p is not NULL", name, status,
                      dsg_status_name(status), (void *)img.pixels);
  }
  if (fuzz_want_outcome && !stb) {
    const char *known = fuzz_image_known_issue(file, len);
    if (status == DSG_OK)
      snprintf(fuzz_outcome, sizeof(fuzz_outcome), "%s: ok, %d x %d x %d%s%s", name, img.width,
               img.height, img.channels, known ? "; known issue " : "", known ? known : "");
    else
      snprintf(fuzz_outcome, sizeof(fuzz_outcome), "%s: %s: %s%s%s", name, dsg_status_name(status),
               dsg_error_message(), known ? "; known issue " : "", known ? known : "");
  }
  if (status == DSG_OK || !img.pixels)
    dsg_image_free(&img); /* (a non-NULL pixels after a failure may be garbage: don't free it) */
  return bad;
}

/* The image target: the input decoded as diaseg decodes it; a JPEG in a build with libjpeg-turbo
 * (which then decodes it) also through stb_image, the JPEG decoder of builds without it and of
 * CMYK files, so that both stay fuzzed. */
__attribute__((unused)) static int fuzz_image_one(const uint8_t *data, size_t size, char *why,
                                                  size_t cap)
{
  int bad = fuzz_image_decode(data, size, 0, why, cap);
#ifdef DIASEG_HAVE_TURBOJPEG
  if (!bad && size > 3 && data[1] == 0xff && data[2] == 0xd8 && data[3] == 0xff)
    bad = fuzz_image_decode(data, size, 1, why, cap);
#endif
  return bad;
}

/* ---- command line ------------------------------------------------------------------------- */

/* Splits data at NUL bytes into argv[1..] (copies, NUL-terminated); argv[0] = "diaseg". Returns
 * argc; argv has room for FUZZ_CLI_MAX_ARGS + 2 pointers and ends with NULL. */
static int fuzz_cli_split(const uint8_t *data, size_t size, char **argv)
{
  static char prog[] = "diaseg";
  int argc = 1;
  size_t i = 0;
  argv[0] = prog;
  while (i < size && argc <= FUZZ_CLI_MAX_ARGS) {
    const uint8_t *nul = memchr(data + i, 0, size - i);
    size_t n = nul ? (size_t)(nul - (data + i)) : size - i;
    char *a = malloc(n + 1);
    if (!a)
      abort();
    memcpy(a, data + i, n);
    a[n] = '\0';
    argv[argc++] = a;
    i += n + 1; /* past the NUL (or past the end) */
  }
  argv[argc] = NULL;
  return argc;
}

/* s is NULL or a string readable to its NUL (AddressSanitizer checks the read). */
static size_t fuzz_strlen(const char *s) { return s ? strlen(s) : 0; }

/* Invariants of a configuration that app_cli_parse accepted (app.h, docs/CLI.md, the --help
 * text). The cross-option checks hold only when neither --help nor --version was given. */
static int fuzz_cli_check_config(const app_config *c, char *why, size_t cap)
{
  size_t total = fuzz_strlen(c->image) + fuzz_strlen(c->out_dir) + fuzz_strlen(c->opt.matvec) +
                 fuzz_strlen(c->opt.solver) + fuzz_strlen(c->opt.cl_device) +
                 fuzz_strlen(c->opt.kernel_dir) + fuzz_strlen(c->opt.kernel) +
                 fuzz_strlen(c->opt.affinity) + fuzz_strlen(c->opt.grouping) +
                 fuzz_strlen(c->json) + fuzz_strlen(c->csv) + fuzz_strlen(c->chart);
  (void)total;
  if (c->command < APP_CMD_NONE || c->command > APP_CMD_CONTOURS)
    return fuzz_fail(why, cap, "command %d", (int)c->command);
  /* the parser takes k up to DSG_MAX_CUT (a cut of the hierarchy); k-means' 64 is the library's
   * check, made with the grouping known */
  if ((c->opt.k < 0 && c->opt.k != DSG_K_AUTO) || c->opt.k > DSG_MAX_CUT)
    return fuzz_fail(why, cap, "k = %d outside {auto} u [0, %d]", c->opt.k, DSG_MAX_CUT);
  if (c->opt.nks < 0 || c->opt.nks > DSG_MAX_K || (c->opt.nks > 0) != (c->opt.ks != NULL) ||
      (c->opt.nks > 0 && (c->opt.ks != c->ks || c->opt.k != c->ks[0])))
    return fuzz_fail(why, cap, "a list of k: nks = %d, ks %s, k = %d", c->opt.nks,
                     c->opt.ks ? "set" : "NULL", c->opt.k);
  for (int i = 0; i < c->opt.nks; i++) /* -k 2,4,8: each in range, none twice */
    for (int j = 0; j <= i; j++)
      if (c->ks[i] < 1 || c->ks[i] > DSG_MAX_CUT || (j < i && c->ks[j] == c->ks[i]))
        return fuzz_fail(why, cap, "ks[%d] = %d (ks[%d] = %d)", i, c->ks[i], j, c->ks[j]);
  if (c->opt.nev < 1 || c->opt.nev > 1000)
    return fuzz_fail(why, cap, "nev = %d outside [1, 1000]", c->opt.nev);
  if (c->opt.ncv != 0 && (c->opt.ncv < 2 || c->opt.ncv > 4000))
    return fuzz_fail(why, cap, "ncv = %d outside {0} u [2, 4000]", c->opt.ncv);
  if (!(c->opt.tol == DSG_TOL_AUTO || (c->opt.tol > 0.0 && c->opt.tol < 1.0)))
    return fuzz_fail(why, cap, "tol = %g outside {auto} u (0, 1)", c->opt.tol);
  if (c->opt.work_pixels != 0 && c->opt.work_pixels < DSG_MIN_WORK_PIXELS)
    return fuzz_fail(why, cap, "work_pixels = %lld", c->opt.work_pixels);
  if (c->nimages < 0 || c->nimages > APP_MAX_IMAGES || (c->nimages > 0) != (c->image != NULL))
    return fuzz_fail(why, cap, "nimages = %d", c->nimages);
  if (c->opt.max_iter < 1)
    return fuzz_fail(why, cap, "max_iter = %d", c->opt.max_iter);
  if (c->opt.radius < 1 || c->opt.radius > DSG_MAX_RADIUS)
    return fuzz_fail(why, cap, "radius = %d outside [1, %d]", c->opt.radius, DSG_MAX_RADIUS);
  if (!(c->opt.sigma_i > 0.0) || !isfinite(c->opt.sigma_i) || !(c->opt.sigma_x > 0.0) ||
      !isfinite(c->opt.sigma_x))
    return fuzz_fail(why, cap, "sigma_i = %g, sigma_x = %g: not finite and > 0", c->opt.sigma_i,
                     c->opt.sigma_x);
  {
    int cue = 0, grouping = 0; /* the names are rows of the library's tables */
    while (c->opt.affinity && dsg_cue_name(cue) && strcmp(c->opt.affinity, dsg_cue_name(cue)) != 0)
      cue++;
    if (!c->opt.affinity || !dsg_cue_name(cue))
      return fuzz_fail(why, cap, "affinity = '%s'", c->opt.affinity ? c->opt.affinity : "(null)");
    while (c->opt.grouping && dsg_grouping_name(grouping) &&
           strcmp(c->opt.grouping, dsg_grouping_name(grouping)) != 0)
      grouping++;
    if (!c->opt.grouping || !dsg_grouping_name(grouping))
      return fuzz_fail(why, cap, "grouping = '%s'", c->opt.grouping ? c->opt.grouping : "(null)");
  }
  if (!(c->opt.sigma_c > 0.0) || !isfinite(c->opt.sigma_c) || !(c->opt.spectral_weight >= 0.0) ||
      !isfinite(c->opt.spectral_weight) || c->opt.min_region < 0 ||
      !(c->opt.region_weight >= 0.0) || !isfinite(c->opt.region_weight) ||
      !(c->opt.forest_weight >= 0.0) || !isfinite(c->opt.forest_weight) ||
      !(c->opt.arc_weight >= 0.0 && c->opt.arc_weight <= 1.0) ||
      !(c->opt.net_weight >= 0.0 && c->opt.net_weight <= 1.0))
    return fuzz_fail(why, cap,
                     "sigma_c = %g, spectral_weight = %g, min_region = %d, region_weight = %g, "
                     "forest_weight = %g, arc_weight = %g, net_weight = %g",
                     c->opt.sigma_c, c->opt.spectral_weight, c->opt.min_region,
                     c->opt.region_weight, c->opt.forest_weight, c->opt.arc_weight,
                     c->opt.net_weight);
  if (!c->opt.matvec || (strcmp(c->opt.matvec, "auto") != 0 && strcmp(c->opt.matvec, "cpu") != 0 &&
                         strcmp(c->opt.matvec, "opencl") != 0 &&
                         (c->command != APP_CMD_BENCH || strcmp(c->opt.matvec, "all") != 0)))
    return fuzz_fail(why, cap, "matvec = '%s'", c->opt.matvec ? c->opt.matvec : "(null)");
  if (!c->opt.solver ||
      (strcmp(c->opt.solver, "auto") != 0 && strcmp(c->opt.solver, "lanczos") != 0 &&
       strcmp(c->opt.solver, "arpack") != 0 && strcmp(c->opt.solver, "chfsi") != 0 &&
       (c->command != APP_CMD_BENCH || strcmp(c->opt.solver, "all") != 0)))
    return fuzz_fail(why, cap, "solver = '%s'", c->opt.solver ? c->opt.solver : "(null)");
  if (c->opt.kernel) {
    spmv_kernel k;
    if (spmv_kernel_parse(c->opt.kernel, &k) != DSG_OK)
      return fuzz_fail(why, cap, "kernel = '%s'", c->opt.kernel);
  }
  if (c->kernel_mask & ~((((unsigned)1 << SPMV_KERNEL_COUNT) - 1) & ~(1u << SPMV_KERNEL_AUTO)))
    return fuzz_fail(why, cap, "kernel_mask = 0x%x: bits outside the named kernels",
                     c->kernel_mask);
  if (c->kernel_mask && c->command != APP_CMD_BENCH)
    return fuzz_fail(why, cap, "a kernel list accepted outside bench");
  if (c->opt.local_size > 4096)
    return fuzz_fail(why, cap, "local_size = %zu", c->opt.local_size);
  if (c->opt.restarts < 1 || c->opt.restarts > 1000)
    return fuzz_fail(why, cap, "restarts = %d", c->opt.restarts);
  if (c->max_pixels < 1 || c->max_pixels > (size_t)(INT32_MAX / 2))
    return fuzz_fail(why, cap, "max_pixels = %zu", c->max_pixels);
  /* --resize WxH, Wx or xH (a side 0 follows the other), or N% alone; --max-side N */
  if (c->resize_w < 0 || c->resize_w > 65536 || c->resize_h < 0 || c->resize_h > 65536 ||
      (c->resize_percent != 0.0 && (c->resize_w || c->resize_h)) ||
      !(c->resize_percent == 0.0 || (c->resize_percent > 0.0 && c->resize_percent <= 1000.0)) ||
      c->max_side < 0 || c->max_side > 65536)
    return fuzz_fail(why, cap, "resize = %d x %d, %g%%, max side %d", c->resize_w, c->resize_h,
                     c->resize_percent, c->max_side);
  if (c->ninputs < 0 || c->ninputs > APP_MAX_INPUTS || c->nsizes < 0 || c->nsizes > APP_MAX_INPUTS)
    return fuzz_fail(why, cap, "ninputs = %d, nsizes = %d", c->ninputs, c->nsizes);
  for (int i = 0; i < c->ninputs; i++)
    if (!c->inputs[i])
      return fuzz_fail(why, cap, "inputs[%d] is NULL", i);
    else
      (void)fuzz_strlen(c->inputs[i]);
  for (int i = 0; i < c->nsizes; i++)
    if (c->sizes[i][0] < 1 || c->sizes[i][0] > 65536 || c->sizes[i][1] < 1 ||
        c->sizes[i][1] > 65536)
      return fuzz_fail(why, cap, "sizes[%d] = %d x %d", i, c->sizes[i][0], c->sizes[i][1]);
  if (c->repeat < 1 || c->repeat > 100000)
    return fuzz_fail(why, cap, "repeat = %d", c->repeat);
  if (!c->out_dir || !c->out_dir[0])
    return fuzz_fail(why, cap, "empty output folder");
  if ((c->json && !c->json[0]) || (c->csv && !c->csv[0]) || (c->chart && !c->chart[0]))
    return fuzz_fail(why, cap, "an empty --json, --csv or --chart file name was accepted");
  if (c->help || c->version || c->command == APP_CMD_NONE)
    return 0;
  if ((c->command == APP_CMD_EIGS || c->command == APP_CMD_CONTOURS) && !c->image)
    return fuzz_fail(why, cap, "%s accepted without an IMAGE", app_command_name(c->command));
  if (c->parts && c->command != APP_CMD_CONTOURS)
    return fuzz_fail(why, cap, "--parts accepted by %s", app_command_name(c->command));
  /* k <= nev for k-means (nev follows k unless given); a cut of the hierarchy needs no
   * eigenvector per segment; k auto */
  if (c->command == APP_CMD_SEGMENT &&
      ((c->opt.k < 1 && c->opt.k != DSG_K_AUTO) ||
       (c->opt.k > c->opt.nev && strcmp(c->opt.grouping, "hierarchy") != 0)))
    return fuzz_fail(why, cap, "segment accepted k = %d outside [1, nev = %d] (grouping %s)",
                     c->opt.k, c->opt.nev, c->opt.grouping);
  for (int i = 0; c->command == APP_CMD_SEGMENT && i < c->opt.nks; i++)
    if (c->ks[i] > c->opt.nev && strcmp(c->opt.grouping, "hierarchy") != 0)
      return fuzz_fail(why, cap, "segment accepted ks[%d] = %d > nev = %d (grouping %s)", i,
                       c->ks[i], c->opt.nev, c->opt.grouping);
  if (c->command != APP_CMD_SEGMENT && c->opt.k != 0)
    return fuzz_fail(why, cap, "%s asks for k = %d segments", app_command_name(c->command),
                     c->opt.k);
  if (c->opt.ncv != 0 && c->opt.ncv <= c->opt.nev)
    return fuzz_fail(why, cap, "accepted ncv = %d <= nev = %d", c->opt.ncv, c->opt.nev);
  return 0;
}

__attribute__((unused)) static int fuzz_cli_one(const uint8_t *data, size_t size, char *why,
                                                size_t cap)
{
  char *argv[FUZZ_CLI_MAX_ARGS + 2];
  app_config cfg;
  int argc = fuzz_cli_split(data, size, argv), status, bad = 0;
  size_t printed;

  app_config_init(&cfg);
  dsg_error_clear();
  fuzz_print_check_begin();
  status = app_cli_parse(argc, argv, &cfg);
  printed = fuzz_print_check_end();
  if (printed)
    bad = fuzz_fail(why, cap, "app_cli_parse printed %zu bytes (status %d)", printed, status);
  else if (status != DSG_OK) {
    const char *msg = dsg_error_message();
    if (status > 0 || status != DSG_ERR_INVALID)
      bad = fuzz_fail(why, cap, "status %d is not DSG_OK or DSG_ERR_INVALID (message: '%s')",
                      status, msg ? msg : "(null)");
    else if (!msg || !msg[0])
      bad = fuzz_fail(why, cap, "status %d (%s) with an empty message", status,
                      dsg_status_name(status));
  } else {
    /* the configuration's strings must still be readable here, before argv is freed */
    bad = fuzz_cli_check_config(&cfg, why, cap);
  }
  if (fuzz_want_outcome && status == DSG_OK)
    snprintf(fuzz_outcome, sizeof(fuzz_outcome), "%d arguments: ok, command %s%s%s", argc - 1,
             app_command_name(cfg.command), cfg.help ? ", help" : "",
             cfg.version ? ", version" : "");
  else if (fuzz_want_outcome)
    snprintf(fuzz_outcome, sizeof(fuzz_outcome), "%d arguments: %s: %s", argc - 1,
             dsg_status_name(status), dsg_error_message());
  for (int i = 1; i < argc; i++)
    free(argv[i]);
  return bad;
}

#endif /* DIASEG_FUZZ_TARGETS_H */
