/* io: files for the drivers (the command line, bench, the fuzzers): image files in, output
 * files out, all or nothing. The library (diaseg.h) never touches a file; this module does.
 *
 * image_load.c    reading (size-capped, regular files) and decoding (hardened stb_image)
 * image_format.c  walking each container's header before stb sees it (io_internal.h)
 * output.c        staged (atomic) output files, PNG and .npy writers
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
#define APP_DEFAULT_MAX_PIXELS ((size_t)1 << 25) /* 33,554,432 pixels, e.g. 8192 x 4096 */
/* Largest file diaseg reads, in bytes. */
#define APP_MAX_FILE_BYTES ((size_t)1 << 30)

/* Loads a PNG, JPEG, BMP, TGA (by .tga extension only: the format has no signature) or PNM
 * (P5/P6) file. Checks the header's dimensions against max_pixels in size_t before decoding.
 * Returns DSG_OK, DSG_ERR_IO (missing, unreadable, a directory), DSG_ERR_FORMAT (not an image,
 * truncated or corrupt) or DSG_ERR_LIMIT. Free with dsg_image_free. */
int app_image_load(const char *path, size_t max_pixels, dsg_image *img);
/* The same checks and decoding on a file already in memory; `name` is used in messages and to
 * recognise TGA by its extension. The entry point of the image fuzzer. */
int app_image_decode(const unsigned char *file, size_t len, const char *name, size_t max_pixels,
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

/* Creates the folder if missing (one level) and checks it is writable. */
int app_out_begin(app_out **out, const char *dir);
/* Opens a staged file for the final name `name` (no path separators). */
int app_out_open(app_out *o, const char *name, FILE **fp);
/* Closes a staged file, checking every write, flush and close; on failure the file is dropped. */
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

/* Writers into a staged file. They check their sizes (stbi_write_png computes in int). */
int app_out_png(app_out *o, const char *name, int width, int height, int comp,
                const unsigned char *data);
/* One 16-bit gray channel (libpng), width * height samples row-major. */
int app_out_png16(app_out *o, const char *name, int width, int height, const uint16_t *data);
int app_out_npy_f32(app_out *o, const char *name, const float *data, int ndim, const size_t *shape);
int app_out_npy_f64(app_out *o, const char *name, const double *data, int ndim,
                    const size_t *shape);
int app_out_npy_i32(app_out *o, const char *name, const int32_t *data, int ndim,
                    const size_t *shape);
int app_out_text(app_out *o, const char *name, const char *text, size_t len);

/* ---- text in pictures ------------------------------------------------------------------ */

/* stb_easy_font (io/stb_impl.c): the quads that draw text at (0, 0), 4 vertices of 16 bytes
 * (x, y, z floats, rgba) each; returns the count. And the text's width in font pixels. */
int app_font_quads(char *text, void *buffer, int bytes);
int app_font_width(char *text);

#endif /* DIASEG_IO_H */
