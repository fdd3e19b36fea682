/* cli: the diaseg command. Parses the command line and the environment (the only place either
 * is read), then drives the library (diaseg.h) and the file I/O (io.h).
 *
 * main.c     the entry point: parse, dispatch, print the one error line, exit code
 * options.c  the option table: parsing, --help, and how each library parameter is spelled
 * signals.c  SIGINT, SIGTERM, SIGHUP, ...: cancel the run, a second signal removes staged
 *            outputs; the commit runs whole; exit codes
 * run.c      segment, eigs, affinity: load -> library -> outputs -> report
 * devices.c  diaseg devices
 * The bench command is its own module (app/bench, bench.h).
 */
#ifndef DIASEG_CLI_H
#define DIASEG_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diaseg.h"
#include "io.h"
#include "spmv.h"

typedef enum app_command {
  APP_CMD_NONE,
  APP_CMD_SEGMENT,  /* image -> segments, pictures, report */
  APP_CMD_EIGS,     /* image -> eigenvectors, pictures, report (no clustering) */
  APP_CMD_AFFINITY, /* image -> the normalised matrix as .npy files (for other solvers) */
  APP_CMD_BENCH,    /* SpMV and solve timings per backend, against the bandwidth bound */
  APP_CMD_DEVICES,  /* list the OpenCL platforms and devices */
  APP_CMD_CONTOURS  /* image -> the boundary detector's strength (contours.npy, contours.png) */
} app_command;

/* --progress: how a run shows its progress (dsg_progress) on standard error */
typedef enum app_progress_mode {
  APP_PROGRESS_AUTO, /* the line for people when standard error is a terminal (the default) */
  APP_PROGRESS_BAR,  /* the line for people, terminal or not */
  APP_PROGRESS_JSON, /* one JSON object a line per report, for programs */
  APP_PROGRESS_NONE
} app_progress_mode;

#define APP_MAX_INPUTS 16
#define APP_MAX_IMAGES 4096 /* IMAGE arguments of segment, eigs and contours (a batch) */
#define APP_MAX_K DSG_MAX_K
#define APP_DEFAULT_PICTURES 4 /* eigenvector pictures a run writes (--pictures) */

/* Everything a run needs; app_cli_parse fills it from argv and the environment, starting from
 * app_config_init. */
typedef struct app_config {
  app_command command;
  int help;          /* --help given: print app_cli_usage and exit 0 */
  int version;       /* --version given */
  dsg_options opt;   /* the library's options: -k, --nev, --sigma-i, --matvec, ... */
  int ks[APP_MAX_K]; /* -k 2,4,8: the list opt.ks points to (opt.k is its first k) */
  const char *image; /* NULL: the sample image (app_find_sample) */
  const char *images[APP_MAX_IMAGES]; /* every IMAGE of segment, eigs, contours (image: the 1st) */
  int nimages;
  int full_resolution;    /* --full-resolution: opt.work_pixels 0, with an estimate first */
  const char *out_dir;    /* -o (segment, eigs; default "out") or --export (affinity; "matrix") */
  int resize_w, resize_h; /* --resize WxH, Wx, xH: resample the image first (0: from the other
                           * side, keeping the aspect; both 0: keep) */
  double resize_percent;  /* --resize N%: both sides times N / 100 (0: not given) */
  int max_side;           /* --max-side N: the longer side at most N pixels (0: no limit) */
  const char *json;       /* --json FILE or "-" */
  int parts;              /* contours --parts: also contour_parts.npy (for fitting the weights) */
  const char *colormap;   /* --colormap: the eigenvector pictures' colour map (NULL: viridis) */
  int pictures;           /* --pictures: eigenvector pictures (-1: all; APP_DEFAULT_PICTURES) */
  size_t max_pixels;      /* --max-pixels */
  int quiet;              /* --quiet: no progress or summary on stderr */
  app_progress_mode progress; /* --progress (with --quiet: none, unless json) */
  int cl_device_from_env;     /* opt.cl_device is $DIASEG_CL_DEVICE, not --cl-device */
  /* bench */
  int all_kernels;      /* --kernel all (default: the device's own, auto) */
  unsigned kernel_mask; /* --kernel a,b,...: bit k for spmv_kernel k (0: see above) */
  int all_devices; /* --matvec all: every OpenCL device (default: the one --matvec opencl takes) */
  const char *inputs[APP_MAX_INPUTS]; /* IMAGE ... */
  int ninputs;
  int sizes[APP_MAX_INPUTS][2]; /* --size WxH ... (the sample image resampled) */
  int nsizes;
  int repeat;        /* --repeat: timed SpMV runs (median and min are reported) */
  int no_solve;      /* --spmv-only */
  const char *csv;   /* --csv FILE */
  const char *chart; /* --chart FILE.svg */
  double budget;     /* --budget: seconds a configuration may take; INFINITY: no limit */
  int e2e;           /* --e2e: the whole segment, stage by stage, instead of SpMV and solve */
  /* $DIASEG_BENCH_LOAD_OVERRIDE (for testing): the 1-minute load average to assume; < 0: none */
  double load_override;
} app_config;

void app_config_init(app_config *cfg);
/* Parses argv (argv[0] is the program) into cfg, then takes what the environment sets
 * (DIASEG_CL_DEVICE, DIASEG_KERNEL_DIR, DIASEG_CL_MAX_ALLOC, DIASEG_LANCZOS_GROUPS,
 * DIASEG_LANCZOS_UNFUSED) where no option did. Returns DSG_OK or DSG_ERR_INVALID with a message
 * naming the offending argument. Never prints, never exits. */
int app_cli_parse(int argc, char **argv, app_config *cfg);
/* Prints the help of cmd (APP_CMD_NONE: the overview) to f. */
void app_cli_usage(FILE *f, app_command cmd);
/* Name of a command ("segment", ...). */
const char *app_command_name(app_command cmd);
/* How the command line spells a library parameter: "sigma_x" -> "--sigma-x" (a dsg_spell_fn). */
const char *app_cli_spell(const char *param, void *data);
/* Prints a library message (with DSG_PARAM marks) to stderr as "diaseg: PREFIX: text". */
void app_cli_say(const char *prefix, const char *raw);
/* The dsg_log_fn of the command: notes unless quiet (data: the config), warnings and build logs
 * always. */
void app_cli_log(void *data, int level, const char *message);

/* Finds the sample image (DIASEG_DATA_DIR, the source tree, the install prefix, next to the
 * executable) and writes its path into buf. Returns DSG_OK or DSG_ERR_IO. */
int app_find_sample(char *buf, size_t cap);

/* Set by the signal handlers to the first signal's number; the run checks it between stages and
 * in the solver. */
extern volatile sig_atomic_t app_cancel;
/* Installs the handlers of SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM,
 * SIGVTALRM, SIGXCPU and SIGPWR (one ignored on entry, as under nohup, stays ignored): the first
 * signal sets app_cancel, a second one removes the staged outputs at once and exits 128 + signal.
 * Ignores SIGPIPE and SIGXFSZ: a closed pipe or a file-size limit fails the write (EPIPE, EFBIG).
 */
void app_signals_install(void);
/* The output set a second signal removes (NULL: none). Clear it, and destroy the set, between
 * app_signals_hold and app_signals_release. */
void app_signals_guard(app_out *out);
/* Around the commit (and nothing that can block for long): app_signals_hold blocks the handled
 * signals in the calling thread and makes a second signal that another thread takes wait;
 * app_signals_release(committed) lets them run. After a successful commit (committed 1) a signal
 * changes nothing, the run is complete; otherwise a second signal that came meanwhile removes the
 * staged files and exits now. */
void app_signals_hold(void);
void app_signals_release(int committed);

/* Exit codes of the diaseg command (docs/CLI.md). */
enum app_exit {
  APP_EXIT_OK = 0,
  APP_EXIT_ERROR = 1,  /* a runtime failure: I/O, memory, OpenCL, solver */
  APP_EXIT_USAGE = 2,  /* bad command line or bad input image */
  APP_EXIT_NOCONV = 3, /* the eigensolver hit its iteration limit: partial results, flagged */
  APP_EXIT_INTERRUPTED = 130
};
/* Maps a status to the exit code above. */
int app_exit_code(int status);

/* diaseg devices: the platforms and devices, and which one diaseg would pick. */
int app_devices(const app_config *cfg);
/* Runs cfg->command (segment, eigs or affinity). Returns a status; prints nothing on error (the
 * caller prints the message), progress and the summary on stderr unless cfg->quiet. */
int app_run(const app_config *cfg);

#endif /* DIASEG_CLI_H */
