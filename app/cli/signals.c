/* SIGINT and SIGTERM: the first asks the run to stop (the library checks app_cancel between
 * stages and inside the solve); a second removes the staged outputs at once and exits. */
#include "cli.h"

#include <string.h>
#include <unistd.h>

volatile sig_atomic_t app_cancel = 0;
static app_out *volatile active_out = NULL; /* what a second signal cleans up */

static void on_signal(int sig)
{
  if (app_cancel) {
    app_out_abort_signal_safe(active_out);
    _exit(128 + sig);
  }
  app_cancel = sig;
}

void app_signals_install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void app_signals_guard(app_out *out) { active_out = out; }

int app_exit_code(int status)
{
  switch (status) {
  case DSG_OK: return APP_EXIT_OK;
  case DSG_ERR_INVALID:
  case DSG_ERR_FORMAT: return APP_EXIT_USAGE;
  case DSG_ERR_NOCONV: return APP_EXIT_NOCONV;
  case DSG_ERR_INTERRUPTED: return app_cancel ? 128 + app_cancel : APP_EXIT_INTERRUPTED;
  default: return APP_EXIT_ERROR;
  }
}
