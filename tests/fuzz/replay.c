/* Replays files through the fuzz targets without libFuzzer: the seed corpora and the regression
 * inputs in ctest, or a crash file from a fuzz run under a debugger.
 *
 *   fuzz_replay [-v] [--show] [--no-fork] [--timeout S] image|cli PATH...
 *
 * PATH is a file or a folder (read recursively; names starting with '.' are skipped). Each file
 * runs through the same function as the libFuzzer harness (fuzz_targets.h), in a process of its
 * own (this program again) unless --no-fork, so that a crash, a sanitizer report, a leak or a hang
 * (--timeout, default 60 s) is charged to that file and the others still run. --show prints what
 * each call returned (status and message, or the image's shape). Exit status: 0 when every file
 * kept the contract, 1 when any did not, 2 on a usage error or when no file was found. */
#include "fuzz_targets.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

typedef int (*fuzz_fn)(const uint8_t *data, size_t size, char *why, size_t cap);

typedef struct path_list {
  char **v;
  size_t n, cap;
} path_list;

static int push_path(path_list *l, const char *p)
{
  if (l->n == l->cap) {
    size_t cap = l->cap ? 2 * l->cap : 64;
    char **v = realloc(l->v, cap * sizeof(*v));
    if (!v)
      return -1;
    l->v = v;
    l->cap = cap;
  }
  if (!(l->v[l->n] = strdup(p)))
    return -1;
  l->n++;
  return 0;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the regular files under path (a file or a folder). Returns 0, or -1 with a message. */
static int collect(path_list *l, const char *path)
{
  struct stat st;
  if (stat(path, &st) != 0) {
    fprintf(stderr, "fuzz_replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  if (S_ISREG(st.st_mode))
    return push_path(l, path);
  if (!S_ISDIR(st.st_mode))
    return 0;
  DIR *d = opendir(path);
  if (!d) {
    fprintf(stderr, "fuzz_replay: %s: %s\n", path, strerror(errno));
    return -1;
  }
  path_list sub = {0};
  struct dirent *e;
  int status = 0;
  while (status == 0 && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    size_t n = strlen(path) + strlen(e->d_name) + 2;
    char *p = malloc(n);
    if (!p) {
      status = -1;
      break;
    }
    snprintf(p, n, "%s/%s", path, e->d_name);
    status = push_path(&sub, p);
    free(p);
  }
  closedir(d);
  if (sub.n > 1)
    qsort(sub.v, sub.n, sizeof(*sub.v), cmp_str);
  for (size_t i = 0; i < sub.n; i++) {
    if (status == 0)
      status = collect(l, sub.v[i]);
    free(sub.v[i]);
  }
  free(sub.v);
  return status;
}

static int read_all(const char *path, uint8_t **data, size_t *size)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t n = 0, cap = 0;
  if (!f)
    return -1;
  for (;;) {
    if (n == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *b = realloc(buf, cap);
      if (!b) {
        free(buf);
        fclose(f);
        return -1;
      }
      buf = b;
    }
    size_t got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    return -1;
  }
  *data = buf;
  *size = n;
  return 0;
}

#define EXIT_CONTRACT 3

/* Runs one input in this process. Returns 0 or 1 (contract broken, reason printed). */
static int show;

static int run_here(fuzz_fn fn, const char *path, const uint8_t *data, size_t size)
{
  char why[512];
  int bad = fn(data, size, why, sizeof(why));
  if (show) {
    fflush(stderr);
    printf("%s: %s\n", path, fuzz_outcome);
    fflush(stdout);
  }
  if (bad) {
    fprintf(stderr, "FAIL %s: contract broken: %s\n", path, why);
    fflush(stderr);
  }
  return bad;
}

/* Runs one input in a fresh process: this program again, with --child. A fresh process rather
 * than a fork, so that runtime state is not inherited: after a fork the OpenMP runtime's thread
 * pool (started by OpenBLAS in the parent) is gone, and LeakSanitizer would report what its
 * threads held. Returns 0 or 1 (printed why). */
static int run_child(const char *self, const char *target, const char *path, unsigned timeout)
{
  char tbuf[32];
  int ws;
  pid_t pid;
  snprintf(tbuf, sizeof(tbuf), "%u", timeout);
  fflush(stdout);
  fflush(stderr);
  pid = fork();
  if (pid < 0) {
    fprintf(stderr, "FAIL %s: fork: %s\n", path, strerror(errno));
    return 1;
  }
  if (pid == 0) {
    char *args[8];
    int n = 0;
    args[n++] = (char *)self;
    args[n++] = "--child";
    args[n++] = "--timeout";
    args[n++] = tbuf;
    if (show)
      args[n++] = "--show";
    args[n++] = (char *)target;
    args[n++] = (char *)path;
    args[n] = NULL;
    execv("/proc/self/exe", args);
    execvp(self, args);
    fprintf(stderr, "FAIL %s: cannot run %s: %s\n", path, self, strerror(errno));
    _exit(127);
  }
  while (waitpid(pid, &ws, 0) < 0)
    if (errno != EINTR) {
      fprintf(stderr, "FAIL %s: waitpid: %s\n", path, strerror(errno));
      return 1;
    }
  if (WIFEXITED(ws)) {
    int code = WEXITSTATUS(ws);
    if (code == 0 || code == EXIT_CONTRACT)
      return code != 0;
    if (code != 127)
      fprintf(stderr, "FAIL %s: exit status %d (a sanitizer report or a leak, above)\n", path,
              code);
    return 1;
  }
  if (WIFSIGNALED(ws)) {
    int sig = WTERMSIG(ws);
    if (sig == SIGALRM)
      fprintf(stderr, "FAIL %s: timed out after %u s\n", path, timeout);
    else
      fprintf(stderr, "FAIL %s: crashed with signal %d (%s)\n", path, sig, strsignal(sig));
    return 1;
  }
  fprintf(stderr, "FAIL %s: wait status 0x%x\n", path, ws);
  return 1;
}

static void usage(FILE *f)
{
  fprintf(f, "Usage: fuzz_replay [-v] [--show] [--no-fork] [--timeout SECONDS] image|cli PATH...\n"
             "Replays files (folders recursively) through a fuzz target's contract checks.\n"
             "  -v          name each file before running it\n"
             "  --show      print what each call returned\n"
             "  --no-fork   run every file in this process (for a debugger)\n"
             "  --timeout S limit per file, forked mode (default 60)\n");
}

int main(int argc, char **argv)
{
  int verbose = 0, fork_each = 1, child = 0, i = 1;
  unsigned timeout = 60;
  fuzz_fn fn = NULL;
  path_list files = {0};

  for (; i < argc && argv[i][0] == '-'; i++) {
    if (strcmp(argv[i], "-v") == 0)
      verbose = 1;
    else if (strcmp(argv[i], "--show") == 0)
      show = fuzz_want_outcome = 1;
    else if (strcmp(argv[i], "--no-fork") == 0)
      fork_each = 0;
    else if (strcmp(argv[i], "--child") == 0) /* one file, run by the parent replay */
      child = 1, fork_each = 0;
    else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
      timeout = (unsigned)strtoul(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
      usage(stdout);
      return 0;
    } else {
      usage(stderr);
      return 2;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  if (strcmp(argv[i], "image") == 0)
    fn = fuzz_image_one;
  else if (strcmp(argv[i], "cli") == 0)
    fn = fuzz_cli_one;
  else {
    fprintf(stderr, "fuzz_replay: unknown target '%s' (image or cli)\n", argv[i]);
    return 2;
  }
  const char *target = argv[i++];
  if (i >= argc) {
    usage(stderr);
    return 2;
  }
  for (; i < argc; i++)
    if (collect(&files, argv[i]) != 0)
      return 2;
  if (files.n == 0) {
    fprintf(stderr, "fuzz_replay: no files to replay\n");
    return 2;
  }

  size_t failed = 0;
  if (child)
    alarm(timeout);
  for (size_t f = 0; f < files.n; f++) {
    uint8_t *data = NULL;
    size_t size = 0;
    if (verbose)
      fprintf(stderr, "%s\n", files.v[f]);
    if (fork_each) {
      failed += run_child(argv[0], target, files.v[f], timeout) != 0;
      continue;
    }
    if (read_all(files.v[f], &data, &size) != 0) {
      fprintf(stderr, "FAIL %s: cannot read: %s\n", files.v[f], strerror(errno));
      failed++;
      continue;
    }
    failed += run_here(fn, files.v[f], data, size) != 0;
    free(data);
  }
  if (child) {
    for (size_t f = 0; f < files.n; f++)
      free(files.v[f]);
    free(files.v);
    fflush(stdout);
    fflush(stderr);
    return failed ? EXIT_CONTRACT : 0; /* LeakSanitizer checks at exit */
  }
  printf("fuzz_replay %s: %zu files, %zu kept the contract, %zu failed%s\n", target, files.n,
         files.n - failed, failed,
         FUZZ_CAN_CHECK_PRINTS || fn != fuzz_cli_one
             ? ""
             : " (the 'never prints' check needs glibc: skipped)");
  for (size_t f = 0; f < files.n; f++)
    free(files.v[f]);
  free(files.v);
  return failed ? 1 : 0;
}
