/* dsg_base: what every diaseg module shares — status codes, the per-thread error message, the
 * clock. It depends on nothing; every other module (spmv, eigensolver, the library, the drivers)
 * includes it through its own public header.
 *
 * Every function that can fail returns an int: DSG_OK (0) or one of the negative codes below.
 * The function that detects the error writes a one-line message with dsg_error_set(); callers
 * only pass the status up, and the front end (the command line, the Python package) shows it once.
 *
 * A message names a parameter, never a command-line flag: DSG_PARAM("sigma_x") marks the name in
 * the format string, dsg_error_message() shows it as written (sigma_x), and a front end shows it
 * its own way through dsg_error_render() (the command line as --sigma-x).
 */
#ifndef DIASEG_DSG_BASE_H
#define DIASEG_DSG_BASE_H

#include <stddef.h>

enum dsg_status {
  DSG_OK = 0,
  DSG_ERR_INVALID = -1,     /* an argument or option value is out of range */
  DSG_ERR_NOMEM = -2,       /* an allocation failed */
  DSG_ERR_IO = -3,          /* a file could not be read or written */
  DSG_ERR_FORMAT = -4,      /* an input file is not a (supported, intact) image */
  DSG_ERR_LIMIT = -5,       /* a size exceeds a documented cap or a device limit */
  DSG_ERR_OPENCL = -6,      /* an OpenCL call failed (the cl_int is in the message) */
  DSG_ERR_NODEVICE = -7,    /* no OpenCL platform/device matches the request */
  DSG_ERR_SOLVER = -8,      /* the eigensolver failed (ARPACK info < 0, breakdown) */
  DSG_ERR_NOCONV = -9,      /* the eigensolver stopped at its iteration limit */
  DSG_ERR_INTERRUPTED = -10 /* a cancel request (SIGINT/SIGTERM) stopped the work */
};

/* Marks a parameter's name inside a message format: DSG_PARAM("nev") " %d is out of range". */
#define DSG_PARAM(name) "\001" name "\002"

/* Records `fmt` (printf-style) as this thread's last error message and returns `status`,
 * so that detectors can write `return dsg_error_set(DSG_ERR_INVALID, "...", ...);`. */
int dsg_error_set(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The last message recorded on this thread ("" if none), parameters shown by their names.
 * Valid until the next dsg_error_set on this thread. */
const char *dsg_error_message(void);
/* The same message with its parameter marks kept: for embedding it in another message (the
 * marks survive a "%s") and for dsg_error_render. */
const char *dsg_error_raw(void);
/* Clears this thread's message. */
void dsg_error_clear(void);

/* How a front end spells a parameter: returns the text to show for `param` ("--sigma-x"), or NULL
 * to show the name itself. */
typedef const char *(*dsg_spell_fn)(const char *param, void *data);
/* Writes `raw` (a message with DSG_PARAM marks) into buf (cap bytes, always terminated), each
 * marked name replaced by spell's text (spell NULL: the name). */
void dsg_error_render(const char *raw, char *buf, size_t cap, dsg_spell_fn spell, void *data);

/* How a message names a file: `name` itself, or when longer than DSG_SHORT_NAME - 8 characters
 * its first and last 100 in buf (the message keeps room for the reason after it). */
#define DSG_SHORT_NAME 208
const char *dsg_short_name(const char *name, char buf[DSG_SHORT_NAME]);
/* What a file of st_mode `mode` is when it is not a regular file: "a FIFO (named pipe)",
 * "a character device", "a block device", "a socket", "a folder", "a special file". */
const char *dsg_file_kind(unsigned mode);

/* Reads exactly len bytes from fd into buf, retrying interrupted reads. Returns 0, an errno value
 * for a failed read, or -1 when the file ended first (it shrank while being read). */
int dsg_read_exact(int fd, void *buf, size_t len);

/* A short name for a status code, e.g. "invalid argument". */
const char *dsg_status_name(int status);

/* Monotonic wall clock in seconds (CLOCK_MONOTONIC). */
double dsg_seconds(void);

#endif /* DIASEG_DSG_BASE_H */
