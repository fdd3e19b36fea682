/* diaseg: the command-line entry point. */
#include "bench.h"
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A standard descriptor closed on entry (`>&-`) is reopened on /dev/null, so that no file diaseg
 * opens gets its number (and messages or the --json - report into an output file): standard input
 * and output read-only, so that writing to a closed standard output still fails (EBADF). */
static void open_standard_fds(void)
{
  for (int fd = 0; fd <= 2; fd++)
    if (fcntl(fd, F_GETFD) == -1 && errno == EBADF) {
      int got = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
      if (got >= 0 && got != fd) {
        dup2(got, fd);
        close(got);
      }
    }
}

/* Standard output, flushed and closed, every step checked: a full disk or device, a closed pipe
 * (SIGPIPE is ignored: EPIPE), a write error at any earlier point. A closed descriptor that was
 * never written to is no error. Returns DSG_OK or DSG_ERR_IO with the reason. */
static int close_stdout(void)
{
  int bad = ferror(stdout), e = bad ? errno : 0;
  if (fflush(stdout) != 0) {
    bad = 1;
    e = errno;
  }
  if (fclose(stdout) != 0 && !bad && errno != EBADF) {
    bad = 1;
    e = errno;
  }
  if (bad)
    return dsg_error_set(DSG_ERR_IO, "cannot write to standard output: %s",
                         e ? strerror(e) : "write error");
  return DSG_OK;
}

/* OpenMP threads that wait for work sleep instead of spinning: on a machine that other programs
 * use, spinning threads take the cores from the working ones (a 481x321 solve on 2 busy cores: 25 s
 * spinning, 5 s passive; docs/PERFORMANCE.md). libgomp reads OMP_WAIT_POLICY once, when it is
 * loaded, so the program sets it and starts itself again, once; a policy the user set is kept, and
 * where the restart fails the run goes on as it is. */
static void passive_openmp(char **argv)
{
  if (getenv("OMP_WAIT_POLICY") || setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
    return;
  execv("/proc/self/exe", argv);
}

/* The heap keeps what the run frees for the run's later buffers: by default glibc maps a block
 * of a few megabytes on its own and gives it back on free, so that each stage's buffers (the
 * start block, the eigenvectors, the products, the maps) are new pages, each faulted in and
 * zeroed by the kernel. Blocks up to 32 MB (a 481x321 run's largest but the matrix) now come from
 * the heap, which is trimmed only past 1 GB free and grows 64 MB at a time. On the H200 machine's
 * host the default segment's stages after the device's opening, with the load, took 0.128 s
 * against 0.141 s on average with these settings given as GLIBC_TUNABLES, 0.139 s against
 * 0.143 s with this function on another lease, with 8% fewer page faults (docs/PERFORMANCE.md);
 * a 3840 x 2160 photo's peak RSS grew 4%. glibc only, and not where the user tunes its allocator
 * (GLIBC_TUNABLES). */
static void keep_freed_memory(void)
{
#ifdef __GLIBC__
  if (getenv("GLIBC_TUNABLES"))
    return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  mallopt(M_TOP_PAD, 64 << 20);
#endif
}

int main(int argc, char **argv)
{
  app_config cfg;
  int status;

  open_standard_fds();
  passive_openmp(argv);
  keep_freed_memory();
  app_config_init(&cfg);
  status = app_cli_parse(argc, argv, &cfg);
  if (status != DSG_OK) {
    app_cli_say("error", dsg_error_raw());
    return app_exit_code(status);
  }
  if (cfg.version) {
    printf("diaseg %s\n", dsg_version());
  } else if (cfg.help || cfg.command == APP_CMD_NONE) {
    app_cli_usage(cfg.help ? stdout : stderr, cfg.command);
    if (!cfg.help)
      return APP_EXIT_USAGE;
  } else {
    app_signals_install();
    if (cfg.command == APP_CMD_DEVICES)
      status = app_devices(&cfg);
    else if (cfg.command == APP_CMD_BENCH)
      status = app_bench(&cfg);
    else
      status = app_run(&cfg);
  }
  /* what went to standard output must have arrived: else the results are lost (exit 1) */
  if (status == DSG_OK)
    status = close_stdout();
  if (status != DSG_OK)
    app_cli_say(status == DSG_ERR_NOCONV ? "warning" : "error", dsg_error_raw());
  return app_exit_code(status);
}
