/* io: files for the drivers (the command line, bench, the fuzzers): image files in, output
 * files out, all or nothing. The library (diaseg.h) never touches a file; this module does.
 *
 * image_load.c    reading (size-capped, regular files or standard input) and decoding by content
 * image_format.c  walking each container's header before a decoder sees it (io_internal.h)
 * image_orient.c  EXIF orientation of JPEGs; turning pixels upright
 * image_jpeg.c    JPEG through libjpeg-turbo (optional; stb decodes JPEGs without it)
 * image_tiff.c    TIFF through libtiff, image_webp.c WebP through libwebp (each optional)
 * output.c        staged (atomic) output files, PNG (libpng / zlib, in parallel) and .npy writers
 * stb_impl.c      the stb implementations, compiled with diaseg's limits
 */
#ifndef DIASEG_IO_H
#define DIASEG_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diaseg.h"

/* ---- images ------------------------------------------------------------------------------ */

/* Default cap on width * height; --max-pixels raises it. */
#define APP_DEFAULT_MAX_PIXELS ((size_t)1 << 27) /* 134,217,728 pixels, e.g. 16384 x 8192 */
/* Largest file diaseg reads, in bytes. */
#define APP_MAX_FILE_BYTES ((size_t)1 << 30)

/* Loads a PNG, JPEG, TIFF (first page), WebP (still), BMP, TGA (by .tga extension only: the format
 * has no signature) or PNM (P5/P6) file, recognised by its content, not its name; path "-" reads
 * standard input whole (a pipe or a redirection, up to APP_MAX_FILE_BYTES). Checks the header's
 * dimensions against max_pixels in size_t before decoding. A JPEG's EXIF orientation and a TIFF's
 * Orientation tag are applied: the image is upright, as a viewer shows it. The image is gray,
 * gray+alpha, RGB or RGBA as the file holds it. TIFF and WebP need libtiff and libwebp at build
 * time (DIASEG_HAVE_TIFF, DIASEG_HAVE_WEBP); without them those files are refused, naming the
 * library. JPEG goes to libjpeg-turbo where diaseg was built with it (DIASEG_HAVE_TURBOJPEG; CMYK
 * and YCCK to stb), else to stb. Returns DSG_OK, DSG_ERR_IO (missing, unreadable, a directory),
 * DSG_ERR_FORMAT (not an image, truncated or corrupt, empty standard input), DSG_ERR_INVALID ("-"
 * with standard input closed or a terminal; more pixels than max_pixels, the caller's cap),
 * DSG_ERR_LIMIT (over the file limit or a decoder's) or DSG_ERR_NOMEM. Free with dsg_image_free. */
int app_image_load(const char *path, size_t max_pixels, dsg_image *img);
/* The same checks and decoding on a file already in memory; `name` is used in messages and to
 * recognise TGA by its extension. The entry point of the image fuzzer. */
int app_image_decode(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                     dsg_image *img);
/* app_image_decode with every JPEG decoded by stb_image, also in a build with libjpeg-turbo
 * (which then decodes gray, YCbCr and RGB JPEGs): for the fuzz harness and the tests, which try
 * both decoders. */
int app_image_decode_stb(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
                         dsg_image *img);

/* A regular file's bytes into *data (malloc'd, caller frees) and *len, up to
 * APP_MAX_FILE_BYTES. Returns DSG_OK, or DSG_ERR_IO / _FORMAT (empty) / _LIMIT / _NOMEM with a
 * message. */
int app_read_file(const char *path, unsigned char **data, size_t *len);

/* ---- output files ------------------------------------------------------------------------ */

/* A set of output files written atomically: each is staged as a hidden temporary file in the
 * output folder and renamed into place by app_out_commit; app_out_destroy without a commit
 * removes every staged file, so an error or interrupt leaves no partial output behind. */
typedef struct app_out app_out;

/* Creates the folder and the folders above it where missing (like mkdir -p) and checks it is
 * writable. Something other than a folder on the path (a file, as in FILE/sub) or a folder that
 * cannot be made or written is DSG_ERR_IO with the reason; what it made is removed again then,
 * and by app_out_destroy when nothing was committed. */
int app_out_begin(app_out **out, const char *dir);
/* Opens a staged file for the final name `name` (no path separators). */
int app_out_open(app_out *o, const char *name, FILE **fp);
/* Closes a staged file, checking every write, flush, fsync and close; on failure the file is
 * dropped. */
int app_out_close(app_out *o, FILE *fp);
/* Stages a file at any path, its temporary beside it, committed with the set (--json FILE); a
 * missing parent folder or one that cannot be written fails here. A folder at `path` is an error.
 * A path that exists and is not a regular file (a device such as /dev/full, a FIFO, a symbolic
 * link such as /dev/stdout) is never staged or renamed over: *fp stays NULL and *direct is 1;
 * write it with app_write_direct. */
int app_out_open_path(app_out *o, const char *path, FILE **fp, int *direct);
/* Writes len bytes to path ("-": standard output) in place: open (creating, truncating, like `>`
 * in a shell), write and close, each checked. Returns DSG_OK or DSG_ERR_IO with the reason. */
int app_write_direct(const char *path, const char *buf, size_t len);
/* Puts every staged file in place, all or nothing: first checks that no target is a folder or
 * anything else but a regular file (an error, nothing renamed), keeps each earlier file under a
 * hidden backup name (a hard link, else a rename) until every new one is renamed into place, and
 * on a failure midway removes the new ones and restores the earlier ones. Then removes the
 * backups, and the files of an earlier run that this one did not write: names in the folder that
 * match one of the fnmatch patterns in `stale` (NULL terminated; NULL: none), e.g. eigvec_07.png
 * after a run with --nev 4. Other files stay. */
int app_out_commit(app_out *o, const char *const *stale);
/* Removes staged files that were not committed, frees o (NULL is allowed). */
void app_out_destroy(app_out *o);
/* Removes staged files now (async-signal-safe: unlink only). For signal handlers. */
void app_out_abort_signal_safe(app_out *o);
/* The folder. */
const char *app_out_dir(const app_out *o);

/* Writers into staged files (a writer that fails leaves no file of its own staged). PNGs are
 * written with fast settings (zlib level 1, a cheap row filter: see output.c): by libpng, or, for
 * pictures of 1 MP and more, deflated in bands in parallel by zlib (standard PNGs all the same). */

/* A picture for app_out_png_many: width * height pixels row-major, `channels` samples each
 * (1 gray, 3 RGB) of `depth` bits (8: unsigned char; 16: uint16_t in the machine's order). */
typedef struct app_png {
  const char *name; /* the output's name in the folder */
  int width, height;
  int channels; /* 1 or 3 */
  int depth;    /* 8 or 16 */
  const void *data;
} app_png;
/* Stages the n pictures, then encodes and writes them in parallel (OpenMP): a small picture on
 * one thread, a large one's bands of rows on several; then syncs and closes them on the calling
 * thread. Returns DSG_OK, or the first failing picture's error (DSG_ERR_LIMIT for a size beyond
 * the writer, DSG_ERR_IO naming the file and the reason); a picture that failed is not left
 * staged, the others are (app_out_destroy drops them). */
int app_out_png_many(app_out *o, const app_png *pics, int n);
/* One picture of 1 (gray) or 3 (RGB) 8-bit channels. */
int app_out_png(app_out *o, const char *name, int width, int height, int comp,
                const unsigned char *data);
/* One 16-bit gray channel, width * height samples row-major. */
int app_out_png16(app_out *o, const char *name, int width, int height, const uint16_t *data);
int app_out_npy_f32(app_out *o, const char *name, const float *data, int ndim, const size_t *shape);
int app_out_npy_f64(app_out *o, const char *name, const double *data, int ndim,
                    const size_t *shape);
int app_out_npy_i32(app_out *o, const char *name, const int32_t *data, int ndim,
                    const size_t *shape);
int app_out_text(app_out *o, const char *name, const char *text, size_t len);

/* Arrays written beside the caller's work (the 48 MB label and contour maps of a 12-megapixel
 * photo take a third of its write stage, most of it waiting for the disk). */
typedef enum app_npy_type { APP_NPY_F32, APP_NPY_F64, APP_NPY_I32 } app_npy_type;
typedef struct app_npy {
  const char *name; /* the output's name in the folder */
  app_npy_type type;
  const void *data; /* the product of shape's elements, row-major */
  int ndim;         /* 1 to 3 */
  size_t shape[3];
} app_npy;
typedef struct app_out_writer app_out_writer;
/* Stages the n arrays now, in order, on the calling thread (as app_out_npy_f32 and the others
 * would), then writes them on threads of their own (up to 4, the arrays shared out among them;
 * the disk's writeback starts as each is written) while the caller goes on staging and writing
 * other files of the set; app_out_npy_wait syncs and closes them. *w is NULL for n = 0. The data
 * must stay allocated and unchanged until app_out_npy_wait. Returns DSG_OK, or the staging's error
 * (nothing of it left staged, *w NULL). */
int app_out_npy_start(app_out *o, const app_npy *arrays, int n, app_out_writer **w);
/* Waits for the writer's arrays, syncs and closes them on the calling thread, and frees w (NULL:
 * nothing to wait for); call it before the set is committed or destroyed. `status` is the
 * caller's own so far: when it is an error, it is returned and its message kept; else DSG_OK, or
 * the first failed array's DSG_ERR_IO naming its file and the reason. A failed file is not left
 * staged, the others are (app_out_destroy drops them). */
int app_out_npy_wait(app_out_writer *w, int status);

/* ---- text in pictures ------------------------------------------------------------------ */

/* stb_easy_font (io/stb_impl.c): the quads that draw text at (0, 0), 4 vertices of 16 bytes
 * (x, y, z floats, rgba) each; returns the count. And the text's width in font pixels. */
int app_font_quads(char *text, void *buffer, int bytes);
int app_font_width(char *text);

#endif /* DIASEG_IO_H */
