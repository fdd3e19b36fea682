/* The command line: one option table drives parsing and --help. */
#include "cli.h"
#include "eigensolver.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define CMD_BIT(c) (1u << (c))
#define APP_STR_(x) #x
#define APP_STR(x) APP_STR_(x) /* a number's macro as the help text spells it */
#define SOLVE_CMDS (CMD_BIT(APP_CMD_SEGMENT) | CMD_BIT(APP_CMD_EIGS))
#define IMAGE_CMDS (SOLVE_CMDS | CMD_BIT(APP_CMD_AFFINITY))
#define CONTOURS_CMD CMD_BIT(APP_CMD_CONTOURS)
#define BENCH_CMD CMD_BIT(APP_CMD_BENCH)
#define DEVICES_CMD CMD_BIT(APP_CMD_DEVICES)

enum opt_id {
  OPT_K,
  OPT_OUT,
  OPT_COLORMAP,
  OPT_PICTURES,
  OPT_NEV,
  OPT_NCV,
  OPT_TOL,
  OPT_MAX_ITER,
  OPT_RADIUS,
  OPT_SIGMA_I,
  OPT_SIGMA_X,
  OPT_SIGMA_C,
  OPT_GROUPING,
  OPT_SPECTRAL_WEIGHT,
  OPT_REGION_WEIGHT,
  OPT_ARC_WEIGHT,
  OPT_NET_WEIGHT,
  OPT_FOREST_WEIGHT,
  OPT_MIN_REGION,
  OPT_THRESHOLD,
  OPT_PARTS,
  OPT_AFFINITY,
  OPT_DETECTOR,
  OPT_MATVEC,
  OPT_SEED,
  OPT_RESTARTS,
  OPT_JSON,
  OPT_MAX_PIXELS,
  OPT_QUIET,
  OPT_PROGRESS,
  OPT_HELP,
  OPT_VERSION,
  OPT_SOLVER,
  OPT_CL_DEVICE,
  OPT_KERNEL,
  OPT_LOCAL_SIZE,
  OPT_KERNEL_DIR,
  OPT_CL_MAX_ALLOC,
  OPT_CL_MAX_MEM,
  OPT_MAX_MEMORY,
  OPT_KEEP_SPECKS,
  OPT_NO_COARSE_START,
  OPT_RESIZE,
  OPT_MAX_SIDE,
  OPT_WORK_PIXELS,
  OPT_FULL_RESOLUTION,
  OPT_EXPORT,
  OPT_SIZE,
  OPT_REPEAT,
  OPT_SPMV_ONLY,
  OPT_CSV,
  OPT_CHART,
  OPT_BUDGET,
  OPT_E2E
};

typedef struct opt_def {
  const char *name;    /* long name without "--" */
  char short_name;     /* 0 if none */
  const char *metavar; /* NULL for flags */
  enum opt_id id;
  unsigned commands; /* CMD_BIT mask */
  const char *help;
} opt_def;

static const opt_def options[] = {
    {"k", 'k', "K", OPT_K, CMD_BIT(APP_CMD_SEGMENT),
     "segments: auto (default: the hierarchy cut at level " APP_STR(
         DSG_AUTO_THRESHOLD) ", best on BSDS500 train; kmeans: the largest eigengap), a number (up "
                             "to 9999 for the "
                             "hierarchy, 64 for kmeans: --nev follows), or a list 2,4,8 (one "
                             "solve, 64 values at most)"},
    {"output", 'o', "DIR", OPT_OUT, (SOLVE_CMDS | CONTOURS_CMD),
     "output folder, created with its parents if missing (default out)"},
    {"colormap", 0, "NAME", OPT_COLORMAP, SOLVE_CMDS,
     "eigenvector pictures' colours: viridis (default), magma, inferno, gray, coolwarm, RdBu"},
    {"pictures", 0, "N", OPT_PICTURES, SOLVE_CMDS,
     "eigenvector pictures: the first N non-constant vectors (default 4), 0 none, or all"},
    {"nev", 0, "N", OPT_NEV, (SOLVE_CMDS | BENCH_CMD),
     "eigenpairs to compute, 1 <= N < pixels (default 16)"},
    {"ncv", 0, "M", OPT_NCV, (SOLVE_CMDS | BENCH_CMD),
     "Lanczos basis size, nev < M <= pixels (default max(2 nev + 1, 32)); chfsi: block size "
     "(default nev + max(8, nev / 2), at most 64)"},
    {"tol", 0, "T", OPT_TOL, (SOLVE_CMDS | BENCH_CMD),
     "relative residual tolerance of the eigensolver, " APP_STR(
         DSG_MIN_TOL) " <= T < 1 (default: " APP_STR(DSG_TOL_HIERARCHY) " where the eigenvectors "
                                                                        "only draw "
                                                                        "pictures beside the "
                                                                        "hierarchy's "
                                                                        "labels, " APP_STR(
                                                                            DSG_TOL_VECTORS) " for "
                                                                                             "kmean"
                                                                                             "s "
                                                                                             "and "
                                                                                             "eigs"
                                                                                             ")"},
    {"max-iter", 0, "M", OPT_MAX_ITER, (SOLVE_CMDS | BENCH_CMD),
     "Lanczos restart limit (default 1000)"},
    {"radius", 0, "R", OPT_RADIUS, (IMAGE_CMDS | BENCH_CMD),
     "neighbourhood disc radius in pixels, 1..30 (default 5: 81 diagonals)"},
    {"sigma-i", 0, "S", OPT_SIGMA_I, (IMAGE_CMDS | BENCH_CMD),
     "feature scale of the intensity and color cues, in [0, 1] units: raise it (0.2) for fewer, "
     "larger segments, lower it (0.05) to split by finer differences (default 0.1)"},
    {"sigma-x", 0, "S", OPT_SIGMA_X, (IMAGE_CMDS | BENCH_CMD),
     "spatial scale in pixels: how fast a neighbour's weight falls with its distance within the "
     "--radius disc; keep it near radius / 1.25 (default 4.0)"},
    {"sigma-c", 0, "S", OPT_SIGMA_C, (IMAGE_CMDS | BENCH_CMD),
     "contour scale of the contour cues: exp(-max contour / S) (default 0.1)"},
    {"affinity", 0, "KIND", OPT_AFFINITY, (IMAGE_CMDS | BENCH_CMD),
     "cue: contour (default), contour+color, intensity, color"},
    {"detector", 0, "NAME", OPT_DETECTOR, (IMAGE_CMDS | BENCH_CMD | CONTOURS_CMD),
     "boundary detector: auto (default: forest for contours without --parts, gradients for the "
     "contour cues), forest (a structured edge forest learnt from BSDS500 train: the sharper "
     "map), gradients (oriented histogram gradients of brightness, colour and texture, mPb)"},
    {"matvec", 0, "BACKEND", OPT_MATVEC, (SOLVE_CMDS | BENCH_CMD | CONTOURS_CMD),
     "auto (default: first OpenCL GPU, else cpu), cpu, opencl"},
    {"solver", 0, "NAME", OPT_SOLVER, (SOLVE_CMDS | BENCH_CMD),
     "auto (default: chfsi for the hierarchy's labels of an image of 116 pixels a side or more, "
     "else lanczos), lanczos (diaseg's own, "
     "device-resident on OpenCL), chfsi (diaseg's block solver: each product reads the matrix "
     "once for a block of vectors) or arpack"},
    {"no-coarse-start", 0, NULL, OPT_NO_COARSE_START, (SOLVE_CMDS | BENCH_CMD),
     "chfsi: start from the random block, not from the image shrunk 5x solved first"},
    {"cl-device", 0, "DEV", OPT_CL_DEVICE, (SOLVE_CMDS | BENCH_CMD | DEVICES_CMD | CONTOURS_CMD),
     "OpenCL device: index or name substring (see 'diaseg devices'; $DIASEG_CL_DEVICE)"},
    {"kernel", 0, "NAME", OPT_KERNEL, (SOLVE_CMDS | BENCH_CMD),
     "DIA kernel: naive, aligned, local, vector, image, auto (default: chosen for the device)"},
    {"local-size", 0, "N", OPT_LOCAL_SIZE, (SOLVE_CMDS | BENCH_CMD),
     "OpenCL work-group size (default 128)"},
    {"kernel-dir", 0, "DIR", OPT_KERNEL_DIR, (SOLVE_CMDS | BENCH_CMD),
     "load dia_spmv.cl from DIR instead of the built-in copy ($DIASEG_KERNEL_DIR)"},
    {"cl-max-alloc", 0, "BYTES", OPT_CL_MAX_ALLOC, (SOLVE_CMDS | BENCH_CMD),
     "pretend the device's largest allocation is BYTES ($DIASEG_CL_MAX_ALLOC)"},
    {"cl-max-mem", 0, "BYTES", OPT_CL_MAX_MEM, SOLVE_CMDS,
     "pretend the device's memory is BYTES ($DIASEG_CL_MAX_MEM)"},
    {"max-memory", 0, "BYTES", OPT_MAX_MEMORY, (IMAGE_CMDS | BENCH_CMD),
     "refuse runs needing more host memory than BYTES (default: what the machine has "
     "available)"},
    {"grouping", 0, "HOW", OPT_GROUPING, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy (default: cuts of the region hierarchy) or kmeans (of the eigenvectors)"},
    {"spectral-weight", 0, "W", OPT_SPECTRAL_WEIGHT, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: weight of the eigenvectors' oriented gradients joining the contours (gPb; 0: the "
     "contours alone; default 0.2)"},
    {"region-weight", 0, "W", OPT_REGION_WEIGHT, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: weight of the regions' colour and texture difference in the merge order (0: "
     "the boundary alone; default 0.2)"},
    {"forest-weight", 0, "W", OPT_FOREST_WEIGHT, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: weight of the edge forest's map joining gPb in the map the regions are made "
     "from (0: gPb alone; default 0.25)"},
    {"arc-weight", 0, "W", OPT_ARC_WEIGHT, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: share in [0, 1] of each base boundary's strength learnt from BSDS500's humans "
     "(0: the map alone; default 0; fit without the boundary network, 0.3 with --net-weight 0)"},
    {"net-weight", 0, "W", OPT_NET_WEIGHT, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: share in [0, 1] of the boundary network's map (fit on BSDS500 train from gPb, "
     "the forest's map and the colours) in the map the regions are made from (0: gPb alone; "
     "default 1)"},
    {"min-region", 0, "PIXELS", OPT_MIN_REGION, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: smaller regions merge first (default 0: max(pixels / 1500, 32))"},
    {"threshold", 0, "T", OPT_THRESHOLD, CMD_BIT(APP_CMD_SEGMENT),
     "hierarchy: cut at level T in (0, 1) instead of at -k regions (BSDS500 val: best at "
     "0.41-0.50)"},
    {"seed", 0, "S", OPT_SEED, CMD_BIT(APP_CMD_SEGMENT), "k-means++ seed (default 1)"},
    {"restarts", 0, "R", OPT_RESTARTS, CMD_BIT(APP_CMD_SEGMENT),
     "k-means restarts; the best is kept (default 8)"},
    {"resize", 0, "SIZE", OPT_RESIZE, (IMAGE_CMDS | CONTOURS_CMD),
     "resample the image first (bilinear): WxH, Wx or xH (the other side keeps the aspect), or "
     "N% (both sides)"},
    {"max-side", 0, "N", OPT_MAX_SIDE, (IMAGE_CMDS | CONTOURS_CMD),
     "shrink the image first so that its longer side is at most N pixels (after --resize)"},
    {"work-pixels", 0, "N", OPT_WORK_PIXELS, (SOLVE_CMDS | CONTOURS_CMD),
     "solve images of more pixels at the largest size within N pixels; labels and contours "
     "come back at the image's size (default " APP_STR(DSG_WORK_PIXELS) ", BSDS500's photos "
                                                                        "whole; docs/QUALITY.md)"},
    {"full-resolution", 0, NULL, OPT_FULL_RESOLUTION, (SOLVE_CMDS | CONTOURS_CMD),
     "no working resolution: solve at the image's own size (says what it costs first)"},
    {"export", 0, "DIR", OPT_EXPORT, CMD_BIT(APP_CMD_AFFINITY),
     "folder for the matrix files (default matrix)"},
    {"keep-specks", 0, NULL, OPT_KEEP_SPECKS, (SOLVE_CMDS | BENCH_CMD),
     "no speck handling: the plain top of the spectrum (docs/PIPELINE.md)"},
    {"parts", 0, NULL, OPT_PARTS, CONTOURS_CMD,
     "also write contour_parts.npy: each gradient before the combination (12 x H x W)"},
    {"json", 0, "FILE", OPT_JSON, (SOLVE_CMDS | BENCH_CMD | DEVICES_CMD),
     "also write the report to FILE ('-': standard output)"},
    {"max-pixels", 0, "N", OPT_MAX_PIXELS, (IMAGE_CMDS | BENCH_CMD | CONTOURS_CMD),
     "refuse images with more pixels, 1 <= N <= 1073741823 (default 134217728)"},
    {"quiet", 'q', NULL, OPT_QUIET, ~0u, "no progress or summary on standard error"},
    {"progress", 0, "HOW", OPT_PROGRESS, (SOLVE_CMDS | CONTOURS_CMD),
     "auto (default: a line on a terminal), bar (the line always), json (a line per report), "
     "none"},
    {"size", 0, "WxH", OPT_SIZE, BENCH_CMD,
     "bench the sample image resampled to W x H (repeatable)"},
    {"repeat", 0, "R", OPT_REPEAT, BENCH_CMD,
     "timed SpMV runs after warm-up, within --budget (default 20)"},
    {"budget", 0, "S", OPT_BUDGET, BENCH_CMD,
     "seconds one configuration may take, 0: no limit (default 30; see below)"},
    {"e2e", 0, NULL, OPT_E2E, BENCH_CMD,
     "time the whole segment stage by stage per backend instead (image in memory)"},
    {"spmv-only", 0, NULL, OPT_SPMV_ONLY, BENCH_CMD, "time the SpMV only, no eigensolve"},
    {"csv", 0, "FILE", OPT_CSV, BENCH_CMD, "write the results as CSV"},
    {"chart", 0, "FILE", OPT_CHART, BENCH_CMD,
     "draw solve time and SpMV throughput per backend, or --e2e's stages (.svg or .png)"},
    {"help", 'h', NULL, OPT_HELP, ~0u, "show this help"},
    {"version", 'V', NULL, OPT_VERSION, ~0u, "show the version"},
};
#define NOPTIONS (sizeof(options) / sizeof(options[0]))

/* An option's help for one command where that command's defaults differ from the line above
 * (--help shows this line instead): bench's, set in app_cli_parse's bench block. */
static const struct {
  enum opt_id id;
  app_command cmd;
  const char *help;
} command_help[] = {
    {OPT_NEV, APP_CMD_BENCH,
     "eigenpairs to compute, 1 <= N < pixels (default 16; --e2e: segment's)"},
    {OPT_TOL, APP_CMD_BENCH,
     "relative residual tolerance, " APP_STR(DSG_MIN_TOL) " <= T < 1 (default 1e-3; --e2e: "
                                                          "segment's)"},
    {OPT_MATVEC, APP_CMD_BENCH,
     "cpu, opencl (the device it takes), all (every device); default: cpu and opencl"},
    {OPT_SOLVER, APP_CMD_BENCH, "lanczos (default), arpack, or all"},
    {OPT_KERNEL, APP_CMD_BENCH,
     "DIA kernel: naive, aligned, local, vector, image, auto (default: the device's), all, or a "
     "list a,b"},
};
#define NCOMMAND_HELP (sizeof(command_help) / sizeof(command_help[0]))

/* The help line of o for cmd. */
static const char *option_help(const opt_def *o, app_command cmd)
{
  for (size_t i = 0; i < NCOMMAND_HELP; i++)
    if (command_help[i].id == o->id && command_help[i].cmd == cmd)
      return command_help[i].help;
  return o->help;
}

static const struct {
  const char *name;
  app_command cmd;
  const char *args;
  const char *summary;
} commands[] = {
    {"segment", APP_CMD_SEGMENT, "[IMAGE|FOLDER ...]",
     "segment images (default: the sample image) into -k regions; several: a folder each in -o"},
    {"eigs", APP_CMD_EIGS, "IMAGE|FOLDER ...",
     "eigenvectors, their pictures and the report, no clustering"},
    {"affinity", APP_CMD_AFFINITY, "[IMAGE]",
     "export the normalised affinity N (DIA offsets and diagonals) as .npy files"},
    {"bench", APP_CMD_BENCH, "[IMAGE ... | --size WxH ...]",
     "time the SpMV and the eigensolve per backend against the measured bandwidth"},
    {"contours", APP_CMD_CONTOURS, "IMAGE|FOLDER ...",
     "the boundary detector alone: contours.npy and contours.png (16-bit)"},
    {"devices", APP_CMD_DEVICES, "",
     "list the OpenCL platforms and devices, and which diaseg picks"},
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const char *app_command_name(app_command cmd)
{
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (commands[i].cmd == cmd)
      return commands[i].name;
  return "diaseg";
}

void app_config_init(app_config *cfg)
{
  memset(cfg, 0, sizeof(*cfg));
  dsg_options_init(&cfg->opt); /* the library's defaults are the command's */
  cfg->out_dir = "out";
  cfg->pictures = APP_DEFAULT_PICTURES;
  cfg->max_pixels = APP_DEFAULT_MAX_PIXELS;
  cfg->repeat = 20;
}

/* A number as the user wrote it: strtoll and strtod skip leading white space and take a '+', which
 * would accept " 5" and "+5" where "5 " is refused; diaseg takes the digits alone. */
static int plain_number(const char *s) { return *s && !isspace((unsigned char)*s) && *s != '+'; }

/* An integer in [lo, hi]; `what` names it in the message (a flag or an environment variable),
 * `note` ends the out-of-range message ("" for none). */
static int parse_range(const char *what, const char *s, long long lo, long long hi,
                       const char *note, long long *out)
{
  char *end;
  long long v;
  if (!plain_number(s))
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not an integer%s", what, s,
                         *s ? " (write the digits alone: no leading space or '+')" : "");
  errno = 0;
  v = strtoll(s, &end, 10);
  if (end == s || *end)
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not an integer", what, s);
  if (errno == ERANGE || v < lo || v > hi)
    return dsg_error_set(DSG_ERR_INVALID, "%s: %s is out of range [%lld, %lld]%s", what, s, lo, hi,
                         note);
  *out = v;
  return DSG_OK;
}

static int parse_long(const char *what, const char *s, long long lo, long long hi, long long *out)
{
  return parse_range(what, s, lo, hi, "", out);
}

/* A finite double, neither overflowing nor underflowing (1e-400, 1e-320). */
static int parse_double(const char *what, const char *s, double *out)
{
  char *end;
  double v;
  if (!plain_number(s))
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not a number%s", what, s,
                         *s ? " (write the number alone: no leading space or '+')" : "");
  errno = 0;
  v = strtod(s, &end);
  if (end == s || *end)
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not a number", what, s);
  if (errno == ERANGE)
    return dsg_error_set(DSG_ERR_INVALID, "%s: %s is %s", what, s,
                         fabs(v) > 1.0 ? "out of the range of a double"
                                       : "too small for a double (it underflows)");
  if (!isfinite(v))
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not finite", what, s);
  *out = v;
  return DSG_OK;
}

static int parse_size(const char *flag, const char *v, int *w_out, int *h_out)
{
  char *end;
  long w, h;
  errno = 0;
  w = strtol(v, &end, 10);
  if (!isdigit((unsigned char)v[0]) || (*end != 'x' && *end != 'X'))
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not WIDTHxHEIGHT", flag, v);
  const char *hs = end + 1;
  h = strtol(hs, &end, 10);
  if (!isdigit((unsigned char)hs[0]) || *end || errno == ERANGE || w < 1 || h < 1 || w > 65536 ||
      h > 65536)
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not WIDTHxHEIGHT with sides in [1, 65536]",
                         flag, v);
  *w_out = (int)w;
  *h_out = (int)h;
  return DSG_OK;
}

/* v as one of the names of a library table (count, name: its accessors), matched exactly or
 * without regard to case, into *out (the table's own string); else an error listing them. */
static int pick_name(const char *flag, const char *v, int (*count)(void), const char *(*name)(int),
                     int any_case, const char **out)
{
  char names[256] = "";
  for (int i = 0; i < count(); i++)
    if (any_case ? strcasecmp(v, name(i)) == 0 : strcmp(v, name(i)) == 0) {
      *out = name(i);
      return DSG_OK;
    }
  for (int i = 0; i < count(); i++)
    snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "", name(i));
  return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not one of %s", flag, v, names);
}

/* --resize: WxH, Wx, xH (a side 0 follows the other, keeping the aspect) or N% (0 < N <= 1000). */
static int parse_resize(app_config *cfg, const char *flag, const char *v)
{
  const size_t len = strlen(v);
  char side[16];
  long long w = 0, h = 0;
  int status;
  cfg->resize_w = cfg->resize_h = 0;
  cfg->resize_percent = 0.0;
  if (len > 1 && v[len - 1] == '%') {
    double pct;
    char num[32];
    if (len >= sizeof(num))
      return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not a percentage", flag, v);
    memcpy(num, v, len - 1);
    num[len - 1] = '\0';
    status = parse_double(flag, num, &pct);
    if (status == DSG_OK && !(pct > 0.0 && pct <= 1000.0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is out of range: a percentage in (0, 1000]",
                           flag, v);
    cfg->resize_percent = pct;
    return status;
  }
  const char *x = strpbrk(v, "xX");
  const size_t wlen = x ? (size_t)(x - v) : 0;
  if (!x || (wlen == 0 && !x[1]) || wlen >= sizeof(side) || strlen(x + 1) >= sizeof(side))
    return dsg_error_set(DSG_ERR_INVALID,
                         "%s: '%s' is not WIDTHxHEIGHT, WIDTHx, xHEIGHT or a percentage N%%", flag,
                         v);
  memcpy(side, v, wlen);
  side[wlen] = '\0';
  if (wlen > 0 && (status = parse_range(flag, side, 1, 65536, "", &w)) != DSG_OK)
    return status;
  if (x[1] && (status = parse_range(flag, x + 1, 1, 65536, "", &h)) != DSG_OK)
    return status;
  cfg->resize_w = (int)w;
  cfg->resize_h = (int)h;
  return DSG_OK;
}

/* -k 2,4,8: several k from one eigensolve (cfg->ks, opt.ks; opt.k is the first). Each value is
 * parsed as a lone -k is, and a value given twice is refused: each k names its own output files.
 * Messages quote the list and the value ("-k 2,x: 'x' is not an integer"). */
static int parse_ks(app_config *cfg, const char *flag, const char *v)
{
  char what[128], item[24];
  int nks = 0;
  snprintf(what, sizeof(what), "%s %.*s%s", flag, 48, v, strlen(v) > 48 ? "..." : "");
  for (const char *p = v;; p++) {
    const size_t len = strcspn(p, ",");
    long long k = 0;
    int status;
    if (len >= sizeof(item))
      return dsg_error_set(DSG_ERR_INVALID, "%s: '%.*s...' is not an integer in [1, %d]", what, 16,
                           p, DSG_MAX_CUT);
    if (nks == APP_MAX_K)
      return dsg_error_set(DSG_ERR_INVALID, "%s: a list holds at most %d values", what, APP_MAX_K);
    memcpy(item, p, len);
    item[len] = '\0';
    status = parse_range(what, item, 1, DSG_MAX_CUT, "", &k);
    if (status != DSG_OK)
      return status;
    for (int i = 0; i < nks; i++)
      if (cfg->ks[i] == (int)k)
        return dsg_error_set(DSG_ERR_INVALID, "%s: %lld is in the list twice (give each k once)",
                             what, k);
    cfg->ks[nks++] = (int)k; /* at most APP_MAX_K of them (checked above) */
    p += len;
    if (!*p)
      break;
  }
  cfg->opt.ks = cfg->ks;
  cfg->opt.nks = nks;
  cfg->opt.k = cfg->ks[0];
  return DSG_OK;
}

static int apply_option(app_config *cfg, const opt_def *o, const char *flag, const char *v)
{
  long long iv = 0;
  int status = DSG_OK;
  switch (o->id) {
  case OPT_K:
    cfg->opt.ks = NULL; /* the last -k counts */
    cfg->opt.nks = 0;
    if (strchr(v, ','))
      return parse_ks(cfg, flag, v);
    if (strcmp(v, "auto") == 0) {
      cfg->opt.k = DSG_K_AUTO;
      break;
    }
    status = parse_range(flag, v, 1, DSG_MAX_CUT, " (or auto)", &iv);
    cfg->opt.k = (int)iv;
    break;
  case OPT_OUT:
    if (!*v)
      return dsg_error_set(DSG_ERR_INVALID, "%s: the folder name is empty", flag);
    cfg->out_dir = v;
    break;
  case OPT_NEV:
    status = parse_long(flag, v, 1, 1000, &iv);
    cfg->opt.nev = (int)iv;
    break;
  case OPT_NCV:
    status = parse_long(flag, v, 2, 4000, &iv);
    cfg->opt.ncv = (int)iv;
    break;
  case OPT_TOL:
    status = parse_double(flag, v, &cfg->opt.tol);
    if (status == DSG_OK) { /* the range is the library's: [DSG_MIN_TOL, 1), its own message */
      dsg_options probe;
      dsg_options_init(&probe);
      probe.tol = cfg->opt.tol;
      status = dsg_options_check(&probe);
    }
    break;
  case OPT_MAX_ITER:
    status = parse_long(flag, v, 1, INT_MAX, &iv);
    cfg->opt.max_iter = (int)iv;
    break;
  case OPT_RADIUS:
    status = parse_range(flag, v, 1, DSG_MAX_RADIUS, " (radius 0 gives no neighbours)", &iv);
    cfg->opt.radius = (int)iv;
    break;
  case OPT_SIGMA_I:
  case OPT_SIGMA_X:
  case OPT_SIGMA_C: {
    double *dst = o->id == OPT_SIGMA_I   ? &cfg->opt.sigma_i
                  : o->id == OPT_SIGMA_X ? &cfg->opt.sigma_x
                                         : &cfg->opt.sigma_c;
    status = parse_double(flag, v, dst);
    if (status == DSG_OK && !(*dst > 0.0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be > 0", flag, v);
    break;
  }
  case OPT_AFFINITY:
    return pick_name(flag, strcmp(v, "colour") == 0 ? "color" : v, dsg_cue_count, dsg_cue_name, 0,
                     &cfg->opt.affinity);
  case OPT_DETECTOR:
    return pick_name(flag, v, dsg_detector_count, dsg_detector_name, 0, &cfg->opt.detector);
  case OPT_MATVEC:
    if (strcmp(v, "cpu") != 0 && strcmp(v, "opencl") != 0 && strcmp(v, "auto") != 0 &&
        (cfg->command != APP_CMD_BENCH || strcmp(v, "all") != 0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not one of auto, cpu, opencl%s", flag, v,
                           cfg->command == APP_CMD_BENCH ? ", all" : "");
    cfg->opt.matvec = v;
    break;
  case OPT_SOLVER:
    if ((cfg->command != APP_CMD_BENCH || strcmp(v, "all") != 0) && strcmp(v, "auto") != 0) {
      const eig_solver *solver;
      if (eig_solver_find(v, &solver) != DSG_OK) {
        char names[128] = "";
        for (int s = 0; s < eig_solver_count(); s++)
          snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", s ? ", " : "",
                   eig_solver_at(s)->name);
        return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not one of auto, %s%s", flag, v, names,
                             cfg->command == APP_CMD_BENCH ? ", all" : "");
      }
    }
    cfg->opt.solver = v;
    break;
  case OPT_CL_DEVICE: cfg->opt.cl_device = v; break;
  case OPT_KERNEL:
    cfg->kernel_mask = 0;
    if (cfg->command == APP_CMD_BENCH && strcmp(v, "all") == 0) {
      cfg->all_kernels = 1;
      cfg->opt.kernel = NULL;
      break;
    }
    cfg->all_kernels = 0;
    if (cfg->command == APP_CMD_BENCH && strchr(v, ',')) { /* a list */
      char name[32];
      for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        spmv_kernel k;
        snprintf(name, sizeof(name), "%.*s", (int)(len < 31 ? len : 31), p);
        status = spmv_kernel_parse(name, &k);
        if (status != DSG_OK)
          return status;
        if (k != SPMV_KERNEL_AUTO)
          cfg->kernel_mask |= 1u << k;
        p += len + (p[len] == ',');
      }
      break;
    }
    {
      spmv_kernel k;
      status = spmv_kernel_parse(v, &k);
      cfg->opt.kernel = v;
    }
    break;
  case OPT_LOCAL_SIZE:
    status = parse_long(flag, v, 1, 4096, &iv);
    cfg->opt.local_size = (size_t)iv;
    break;
  case OPT_KERNEL_DIR: cfg->opt.kernel_dir = v; break;
  case OPT_CL_MAX_ALLOC:
    status = parse_long(flag, v, 1, LLONG_MAX, &iv);
    cfg->opt.cl_max_alloc = (unsigned long long)iv;
    break;
  case OPT_CL_MAX_MEM:
    status = parse_long(flag, v, 1, LLONG_MAX, &iv);
    cfg->opt.cl_max_mem = (unsigned long long)iv;
    break;
  case OPT_MAX_MEMORY:
    status = parse_long(flag, v, 1, LLONG_MAX, &iv);
    cfg->opt.max_memory = (unsigned long long)iv;
    break;
  case OPT_SEED:
    status = parse_long(flag, v, 0, LLONG_MAX, &iv);
    cfg->opt.seed = (uint64_t)iv;
    break;
  case OPT_RESTARTS:
    status = parse_long(flag, v, 1, 1000, &iv);
    cfg->opt.restarts = (int)iv;
    break;
  case OPT_JSON:
    if (!*v)
      return dsg_error_set(DSG_ERR_INVALID, "%s: the file name is empty", flag);
    cfg->json = v;
    break;
  case OPT_MAX_PIXELS:
    status = parse_long(flag, v, 1, INT_MAX / 2, &iv);
    cfg->max_pixels = (size_t)iv;
    break;
  case OPT_RESIZE: return parse_resize(cfg, flag, v);
  case OPT_MAX_SIDE:
    status = parse_long(flag, v, 1, 65536, &iv);
    cfg->max_side = (int)iv;
    break;
  case OPT_WORK_PIXELS:
    status =
        parse_range(flag, v, DSG_MIN_WORK_PIXELS, INT_MAX / 2, " (--full-resolution: none)", &iv);
    cfg->opt.work_pixels = iv;
    cfg->full_resolution = 0;
    break;
  case OPT_FULL_RESOLUTION:
    cfg->opt.work_pixels = 0;
    cfg->full_resolution = 1;
    break;
  case OPT_SIZE:
    if (cfg->nsizes >= APP_MAX_INPUTS)
      return dsg_error_set(DSG_ERR_INVALID, "%s: at most %d sizes", flag, APP_MAX_INPUTS);
    status = parse_size(flag, v, &cfg->sizes[cfg->nsizes][0], &cfg->sizes[cfg->nsizes][1]);
    cfg->nsizes += status == DSG_OK;
    break;
  case OPT_REPEAT:
    status = parse_long(flag, v, 1, 100000, &iv);
    cfg->repeat = (int)iv;
    break;
  case OPT_SPMV_ONLY: cfg->no_solve = 1; break;
  case OPT_BUDGET: /* 0: no limit */
    status = parse_double(flag, v, &cfg->budget);
    if (status == DSG_OK && !(cfg->budget >= 0.0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be >= 0", flag, v);
    if (cfg->budget == 0.0)
      cfg->budget = INFINITY;
    break;
  case OPT_E2E: cfg->e2e = 1; break;
  case OPT_CSV:
  case OPT_CHART:
    if (!*v)
      return dsg_error_set(DSG_ERR_INVALID, "%s: the file name is empty", flag);
    *(o->id == OPT_CSV ? &cfg->csv : &cfg->chart) = v;
    break;
  case OPT_EXPORT:
    if (!*v)
      return dsg_error_set(DSG_ERR_INVALID, "%s: the folder name is empty", flag);
    cfg->out_dir = v;
    break;
  case OPT_QUIET: cfg->quiet = 1; break;
  case OPT_PROGRESS: {
    static const char *const modes[] = {"auto", "bar", "json", "none"}; /* app_progress_mode */
    for (int m = 0; m < 4; m++)
      if (strcmp(v, modes[m]) == 0) {
        cfg->progress = (app_progress_mode)m;
        return DSG_OK;
      }
    return dsg_error_set(DSG_ERR_INVALID, "%s: '%s' is not one of auto, bar, json, none", flag, v);
  }
  case OPT_KEEP_SPECKS: cfg->opt.keep_specks = 1; break;
  case OPT_NO_COARSE_START: cfg->opt.coarse_start = 0; break;
  case OPT_PARTS: cfg->parts = 1; break;
  case OPT_COLORMAP:
    return pick_name(flag, v, dsg_colormap_count, dsg_colormap_name, 1, &cfg->colormap);
  case OPT_PICTURES:
    if (strcmp(v, "all") == 0) {
      cfg->pictures = -1;
      break;
    }
    status = parse_long(flag, v, 0, INT_MAX, &iv);
    cfg->pictures = (int)iv;
    break;
  case OPT_GROUPING:
    return pick_name(flag, v, dsg_grouping_count, dsg_grouping_name, 0, &cfg->opt.grouping);
  case OPT_THRESHOLD:
    status = parse_double(flag, v, &cfg->opt.threshold);
    if (status == DSG_OK && !(cfg->opt.threshold > 0.0 && isfinite(cfg->opt.threshold)))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be finite and > 0", flag,
                           v);
    break;
  case OPT_MIN_REGION:
    status = parse_long(flag, v, 0, INT_MAX, &iv);
    cfg->opt.min_region = (int)iv;
    break;
  case OPT_SPECTRAL_WEIGHT:
    status = parse_double(flag, v, &cfg->opt.spectral_weight);
    if (status == DSG_OK && !(cfg->opt.spectral_weight >= 0.0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be >= 0", flag, v);
    break;
  case OPT_REGION_WEIGHT:
  case OPT_FOREST_WEIGHT: {
    double *w = o->id == OPT_REGION_WEIGHT ? &cfg->opt.region_weight : &cfg->opt.forest_weight;
    status = parse_double(flag, v, w);
    if (status == DSG_OK && !(*w >= 0.0 && isfinite(*w)))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be finite and >= 0", flag,
                           v);
    break;
  }
  case OPT_ARC_WEIGHT:
    status = parse_double(flag, v, &cfg->opt.arc_weight);
    if (status == DSG_OK && !(cfg->opt.arc_weight >= 0.0 && cfg->opt.arc_weight <= 1.0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be in [0, 1]", flag, v);
    break;
  case OPT_NET_WEIGHT:
    status = parse_double(flag, v, &cfg->opt.net_weight);
    if (status == DSG_OK && !(cfg->opt.net_weight >= 0.0 && cfg->opt.net_weight <= 1.0))
      return dsg_error_set(DSG_ERR_INVALID, "%s: %s is invalid: it must be in [0, 1]", flag, v);
    break;
  case OPT_HELP: cfg->help = 1; break;
  case OPT_VERSION: cfg->version = 1; break;
  }
  return status;
}

static const opt_def *find_long(const char *name, size_t len, app_command cmd)
{
  for (size_t i = 0; i < NOPTIONS; i++)
    if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0 &&
        (options[i].commands & CMD_BIT(cmd)))
      return &options[i];
  return NULL;
}

static const opt_def *find_short(char c, app_command cmd)
{
  for (size_t i = 0; i < NOPTIONS; i++)
    if (options[i].short_name == c && (options[i].commands & CMD_BIT(cmd)))
      return &options[i];
  return NULL;
}

/* An image name: bench collects them, the others take one. */
static int add_positional(app_config *cfg, const char *arg, int *positional)
{
  if (cfg->command == APP_CMD_NONE || cfg->command == APP_CMD_DEVICES)
    return dsg_error_set(DSG_ERR_INVALID, "unexpected argument '%s'", arg);
  if (cfg->command == APP_CMD_BENCH) {
    if (cfg->ninputs >= APP_MAX_INPUTS)
      return dsg_error_set(DSG_ERR_INVALID, "bench takes at most %d images", APP_MAX_INPUTS);
    cfg->inputs[cfg->ninputs++] = arg;
    return DSG_OK;
  }
  if (cfg->command == APP_CMD_AFFINITY && (*positional)++ > 0)
    return dsg_error_set(DSG_ERR_INVALID,
                         "unexpected extra argument '%s': affinity takes one image", arg);
  if (cfg->nimages >= APP_MAX_IMAGES)
    return dsg_error_set(DSG_ERR_INVALID,
                         "more than %d images: give a folder instead (its images are all taken)",
                         APP_MAX_IMAGES);
  cfg->images[cfg->nimages++] = arg;
  cfg->image = cfg->images[0];
  return DSG_OK;
}

/* The environment, read here and nowhere else: a variable sets what no option did, parsed as
 * strictly as the option (an empty variable is no setting); a message names the variable. */
static int take_environment(app_config *cfg)
{
  const char *v;
  long long iv = 0;
  int status = DSG_OK;
  if ((!cfg->opt.cl_device || !*cfg->opt.cl_device) && (v = getenv("DIASEG_CL_DEVICE")) && *v) {
    cfg->opt.cl_device = v;
    cfg->cl_device_from_env = 1;
  }
  if ((!cfg->opt.kernel_dir || !*cfg->opt.kernel_dir) && (v = getenv("DIASEG_KERNEL_DIR")) && *v)
    cfg->opt.kernel_dir = v;
  if (!cfg->opt.cl_max_alloc && (v = getenv("DIASEG_CL_MAX_ALLOC")) && *v) { /* --cl-max-alloc */
    status = parse_long("DIASEG_CL_MAX_ALLOC", v, 1, LLONG_MAX, &iv);
    if (status != DSG_OK)
      return status;
    cfg->opt.cl_max_alloc = (unsigned long long)iv;
  }
  if (!cfg->opt.cl_max_mem && (v = getenv("DIASEG_CL_MAX_MEM")) && *v) { /* --cl-max-mem */
    status = parse_long("DIASEG_CL_MAX_MEM", v, 1, LLONG_MAX, &iv);
    if (status != DSG_OK)
      return status;
    cfg->opt.cl_max_mem = (unsigned long long)iv;
  }
  if ((v = getenv("DIASEG_LANCZOS_GROUPS")) && *v) { /* for tuning: G,T, each in [1, 65536] */
    char g[32];
    long long groups = 0, rows = 0;
    const size_t len = strcspn(v, ",");
    if (!v[len] || len >= sizeof(g))
      return dsg_error_set(DSG_ERR_INVALID,
                           "DIASEG_LANCZOS_GROUPS: '%s' is not G,T (two integers in [1, 65536])",
                           v);
    memcpy(g, v, len);
    g[len] = '\0';
    status = parse_long("DIASEG_LANCZOS_GROUPS (G of G,T)", g, 1, 65536, &groups);
    if (status == DSG_OK)
      status = parse_long("DIASEG_LANCZOS_GROUPS (T of G,T)", v + len + 1, 1, 65536, &rows);
    if (status != DSG_OK)
      return status;
    cfg->opt.basis_groups = (size_t)groups;
    cfg->opt.basis_row_groups = (size_t)rows;
  }
  if ((v = getenv("DIASEG_LANCZOS_UNFUSED")) && *v) { /* for measuring the fusion */
    if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
      return dsg_error_set(DSG_ERR_INVALID, "DIASEG_LANCZOS_UNFUSED: '%s' is not 0 or 1", v);
    cfg->opt.lanczos_unfused = v[0] == '1';
  }
  return DSG_OK;
}

const char *app_cli_spell(const char *param, void *data)
{
  static _Thread_local char flag[64];
  size_t i = 0;
  (void)data;
  if (!param[0] || strlen(param) > 40)
    return NULL;
  if (!param[1]) { /* a one-letter option: -k */
    snprintf(flag, sizeof(flag), "-%s", param);
    return flag;
  }
  flag[i++] = '-';
  flag[i++] = '-';
  for (; *param; param++)
    flag[i++] = *param == '_' ? '-' : *param;
  flag[i] = '\0';
  return flag;
}

/* Prints "diaseg: PREFIX: text" (prefix NULL: "diaseg: text") on one line: a message may quote
 * a file name or an argument holding control characters (a newline, an escape sequence), which
 * are written as \n, \t, \r or \xNN. */
static void print_line(const char *prefix, const char *raw)
{
  char text[2048], line[4 * sizeof(text) + 64];
  size_t len;
  dsg_error_render(raw, text, sizeof(text), app_cli_spell, NULL);
  len = (size_t)snprintf(line, sizeof(line), "diaseg: %s%s", prefix ? prefix : "",
                         prefix ? ": " : "");
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) {
    if (*c >= 0x20 && *c != 0x7f)
      line[len++] = (char)*c;
    else if (*c == '\n' || *c == '\t' || *c == '\r')
      len += (size_t)snprintf(line + len, 3, "\\%c", *c == '\n' ? 'n' : *c == '\t' ? 't' : 'r');
    else
      len += (size_t)snprintf(line + len, 5, "\\x%02x", *c);
  }
  line[len++] = '\n';
  fwrite(line, 1, len, stderr);
}

void app_cli_say(const char *prefix, const char *raw) { print_line(prefix, raw); }

void app_cli_log(void *data, int level, const char *message)
{
  const app_config *cfg = data;
  if (level == DSG_LOG_DETAIL) { /* several lines on purpose: an OpenCL build log */
    fprintf(stderr, "%s\n", message);
    return;
  }
  if (level == DSG_LOG_INFO && cfg && cfg->quiet)
    return;
  print_line(level == DSG_LOG_WARNING ? "warning" : NULL, message);
}

int app_cli_parse(int argc, char **argv, app_config *cfg)
{
  int i = 1, positional = 0, status, explicit_out = 0, explicit_nev = 0, explicit_tol = 0;
  int explicit_matvec = 0, explicit_k = 0;

  if (argc < 2)
    return DSG_OK; /* no command: the caller shows the overview */
  for (size_t c = 0; c < NCOMMANDS; c++)
    if (strcmp(argv[1], commands[c].name) == 0)
      cfg->command = commands[c].cmd;
  if (cfg->command == APP_CMD_NONE) {
    if (strcmp(argv[1], "help") == 0) {
      cfg->help = 1;
      for (size_t c = 0; argc > 2 && c < NCOMMANDS; c++)
        if (strcmp(argv[2], commands[c].name) == 0)
          cfg->command = commands[c].cmd;
      return DSG_OK;
    }
    if (argv[1][0] != '-')
      return dsg_error_set(DSG_ERR_INVALID, "unknown command '%s' (try 'diaseg --help')", argv[1]);
  } else {
    i = 2;
  }

  for (; i < argc; i++) {
    const char *arg = argv[i], *value = NULL;
    const opt_def *o = NULL;
    char flag[64];
    if (strcmp(arg, "--") == 0) { /* everything after is an image name */
      for (i++; i < argc; i++) {
        status = add_positional(cfg, argv[i], &positional);
        if (status != DSG_OK)
          return status;
      }
      break;
    }
    if (arg[0] == '-' && arg[1] == '-') {
      const char *eq = strchr(arg + 2, '=');
      size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
      o = find_long(arg + 2, len, cfg->command);
      snprintf(flag, sizeof(flag), "--%.*s", (int)(len < 40 ? len : 40), arg + 2);
      if (!o)
        return dsg_error_set(
            DSG_ERR_INVALID, "unknown option '%s'%s%s (try 'diaseg%s%s --help')", flag,
            cfg->command ? " for " : "", cfg->command ? app_command_name(cfg->command) : "",
            cfg->command ? " " : "", cfg->command ? app_command_name(cfg->command) : "");
      if (eq && !o->metavar)
        return dsg_error_set(DSG_ERR_INVALID, "%s takes no value", flag);
      value = eq ? eq + 1 : NULL;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      o = find_short(arg[1], cfg->command);
      snprintf(flag, sizeof(flag), "-%c", arg[1]);
      if (!o)
        return dsg_error_set(DSG_ERR_INVALID, "unknown option '%s'%s%s", flag,
                             cfg->command ? " for " : "",
                             cfg->command ? app_command_name(cfg->command) : "");
      if (arg[2] != '\0') {
        if (!o->metavar)
          return dsg_error_set(DSG_ERR_INVALID, "%s takes no value ('%s')", flag, arg);
        value = arg + 2; /* -k5 */
      }
    } else {
      status = add_positional(cfg, arg, &positional);
      if (status != DSG_OK)
        return status;
      continue;
    }
    if (o->metavar && !value) {
      if (i + 1 >= argc)
        return dsg_error_set(DSG_ERR_INVALID, "%s needs a value (%s)", flag, o->metavar);
      value = argv[++i];
    }
    explicit_out |= o->id == OPT_EXPORT;
    explicit_nev |= o->id == OPT_NEV;
    explicit_k |= o->id == OPT_K;
    explicit_tol |= o->id == OPT_TOL;
    explicit_matvec |= o->id == OPT_MATVEC;
    status = apply_option(cfg, o, flag, value ? value : "");
    if (status != DSG_OK)
      return status;
  }
  if (cfg->help || cfg->version)
    return DSG_OK;
  if (cfg->command == APP_CMD_NONE)
    return DSG_OK;
  if (cfg->command == APP_CMD_AFFINITY && !explicit_out)
    cfg->out_dir = "matrix";
  if (cfg->command == APP_CMD_BENCH) {
    /* bench's defaults finish in about two minutes on two cores (docs/CLI.md, "bench"): the C
     * path and the device --matvec opencl takes, its own kernel (auto), the default solver, and
     * a budget per configuration; --matvec all --kernel all --solver all measure everything */
    const char *load = getenv("DIASEG_BENCH_LOAD_OVERRIDE"); /* for testing: a busy host */
    cfg->all_devices = explicit_matvec && strcmp(cfg->opt.matvec, "all") == 0;
    if (!explicit_matvec)
      cfg->opt.matvec = "all";
    if (!explicit_nev && !cfg->e2e) /* --e2e: segment's nev and tol, what it times */
      cfg->opt.nev = 16;
    if (!explicit_tol && !cfg->e2e)
      cfg->opt.tol = 1e-3;
    if (cfg->budget == 0.0) /* not given (--budget 0 is INFINITY) */
      cfg->budget = 30.0;
    if (cfg->e2e && cfg->no_solve)
      return dsg_error_set(
          DSG_ERR_INVALID,
          "--e2e times the whole segment and --spmv-only the SpMV alone: give one");
    cfg->load_override = -1.0;
    if (load && *load) {
      status = parse_double("DIASEG_BENCH_LOAD_OVERRIDE", load, &cfg->load_override);
      if (status != DSG_OK)
        return status;
      if (!(cfg->load_override >= 0.0))
        return dsg_error_set(DSG_ERR_INVALID,
                             "DIASEG_BENCH_LOAD_OVERRIDE: %s is invalid: it must be >= 0", load);
    }
  }
  if (cfg->command == APP_CMD_EIGS && !cfg->image)
    return dsg_error_set(DSG_ERR_INVALID, "eigs needs an IMAGE (try 'diaseg eigs --help')");
  if (cfg->opt.threshold > 0.0 && explicit_k)
    return dsg_error_set(DSG_ERR_INVALID,
                         "-k and --threshold both say where to cut the hierarchy: give one");
  if (cfg->opt.threshold > 0.0 && strcmp(cfg->opt.grouping, "hierarchy") != 0)
    return dsg_error_set(DSG_ERR_INVALID,
                         "--threshold cuts the hierarchy: it needs --grouping hierarchy, not '%s'",
                         cfg->opt.grouping);
  if (cfg->command == APP_CMD_CONTOURS && !cfg->image)
    return dsg_error_set(DSG_ERR_INVALID, "contours needs an IMAGE (try 'diaseg contours --help')");
  if (cfg->command == APP_CMD_SEGMENT && strcmp(cfg->opt.grouping, "kmeans") == 0) {
    int max_k = cfg->opt.k; /* k-means needs k eigenvectors: nev follows k unless given */
    for (int k = 0; k < cfg->opt.nks; k++)
      max_k = cfg->ks[k] > max_k ? cfg->ks[k] : max_k;
    if (max_k > DSG_MAX_K)
      return dsg_error_set(DSG_ERR_INVALID,
                           "-k %d is out of range for --grouping kmeans: %d at most", max_k,
                           DSG_MAX_K);
    if (max_k > cfg->opt.nev && !explicit_nev)
      cfg->opt.nev = max_k;
    else if (max_k > cfg->opt.nev)
      return dsg_error_set(DSG_ERR_INVALID,
                           "-k %d needs k <= nev, and --nev is %d: raise --nev to %d or leave it "
                           "out (it follows k)",
                           max_k, cfg->opt.nev, max_k);
  }
  if (cfg->json && cfg->nimages > 1)
    return dsg_error_set(DSG_ERR_INVALID,
                         "--json takes one image: with %d, each image's report is report.json in "
                         "its folder",
                         cfg->nimages);
  if (cfg->opt.ncv && cfg->opt.ncv <= cfg->opt.nev)
    return dsg_error_set(DSG_ERR_INVALID, "--ncv %d is out of range: it must be > nev = %d",
                         cfg->opt.ncv, cfg->opt.nev);
  if (cfg->command != APP_CMD_SEGMENT) {
    cfg->opt.k = 0; /* eigenpairs only */
    cfg->opt.ks = NULL;
    cfg->opt.nks = 0;
  }
  return take_environment(cfg);
}

void app_cli_usage(FILE *f, app_command cmd)
{
  if (cmd == APP_CMD_NONE) {
    fprintf(f,
            "diaseg %s - spectral image segmentation (normalized cuts) with a DIA Lanczos "
            "eigensolver\n\nUsage: diaseg COMMAND [OPTIONS] [ARGS]\n\nCommands:\n",
            DIASEG_VERSION);
    for (size_t c = 0; c < NCOMMANDS; c++)
      fprintf(f, "  %-9s %s\n", commands[c].name, commands[c].summary);
    fprintf(f, "\nOptions:\n  -h, --help     show help (also: diaseg COMMAND --help)\n"
               "  -V, --version  show the version\n\n"
               "Example: diaseg segment data/coffee.png -k 5 -o out\n"
               "Outputs, formulas and exit codes: CLI.md and PIPELINE.md, in docs/ of the source\n"
               "and in " DIASEG_INSTALL_DOC_DIR " once installed\n");
    return;
  }
  for (size_t c = 0; c < NCOMMANDS; c++)
    if (commands[c].cmd == cmd)
      fprintf(f, "Usage: diaseg %s [OPTIONS] %s\n\n%c%s.\n\nOptions:\n", commands[c].name,
              commands[c].args, toupper((unsigned char)commands[c].summary[0]),
              commands[c].summary + 1);
  for (size_t i = 0; i < NOPTIONS; i++) {
    char left[64];
    const opt_def *o = &options[i];
    if (!(o->commands & CMD_BIT(cmd)))
      continue;
    if (o->short_name)
      snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name, o->metavar ? " " : "",
               o->metavar ? o->metavar : "");
    else
      snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->metavar ? " " : "",
               o->metavar ? o->metavar : "");
    fprintf(f, "  %-24s %s\n", left, option_help(o, cmd));
  }
  if (cmd == APP_CMD_BENCH)
    fprintf(
        f,
        "\nbench's own defaults, chosen to finish in about two minutes on two cores: the C path\n"
        "and the OpenCL device --matvec opencl takes, with its own kernel (auto); the lanczos\n"
        "solver; --nev 16 --tol 1e-3 for every backend; --repeat 20; --budget 30.\n"
        "--matvec all --kernel all --solver all --budget 0 measure everything, however long.\n"
        "The budget: a configuration's SpMV runs stop once they took a sixth of it (3 at least);\n"
        "a solve that takes longer is stopped and its row says so, and the solves of a backend\n"
        "with a slower SpMV are then skipped on that input.\n"
        "--e2e: dsg_segment as segment runs it (segment's -k, --nev and --tol), from the\n"
        "image in memory, once per backend: contours, affinity, setup, solve, grouping,\n"
        "resolution and the write of the default outputs (to a temporary folder), and the total.\n"
        "Without inputs it benches the sample image. Results: a table on standard output,\n"
        "--json / --csv / --chart files; progress and warnings on standard error: a busy host\n"
        "(1-minute load average over half the cores), a copy bandwidth that moved over 20%%\n"
        "between repeats, an SpMV over its copy bound (%%bw > 100, marked ?).\n"
        "Ctrl-C stops it: the table and files hold what was measured, marked interrupted (exit\n"
        "130). DIASEG_BENCH_LOAD_OVERRIDE=L (for testing) assumes the load average L.\n");
  if (cmd == APP_CMD_SEGMENT)
    fprintf(f, "\nA list of k (-k 2,4,8) solves once and groups once per k, with the same --seed\n"
               "and --restarts: labels_kK.npy, labels_kK.png (16-bit labels), labels_color_kK.png\n"
               "and overlay_kK.png for each K (a single k: labels.npy, labels.png,\n"
               "labels_color.png and overlay.png).\n");
  if (CMD_BIT(cmd) & SOLVE_CMDS)
    fprintf(f, "\nExit codes: 0 ok, 1 runtime error, 2 bad arguments or input, 3 not converged "
               "(partial results, flagged in report.json), 130 interrupted.\n");
  else
    fprintf(f, "\nExit codes: 0 ok, 1 runtime error, 2 bad arguments or input, 130 "
               "interrupted.\n");
}
