/* The signals that end a process by default (SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, ...):
 * the first asks the run to stop (the library checks app_cancel between stages and inside the
 * solve); a second removes the staged outputs at once and exits. SIGPIPE and SIGXFSZ are ignored,
 * so that a closed pipe or a file-size limit fails the write that meets it (EPIPE, EFBIG) and the
 * run's error path cleans up.
 *
 * The commit of the outputs runs whole: app_signals_hold blocks the handled signals in the thread
 * that commits, and a handler that runs meanwhile on another thread (OpenMP's, PoCL's: the kernel
 * hands a process's signal to any thread that does not block it) defers its exit to
 * app_signals_release. A signal after a successful commit changes nothing: the run is complete. */
#include "cli.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

/* Where the output set stands, for the handlers (lock-free, so async-signal-safe). */
enum {
  SIG_STATE_IDLE,     /* a second signal cleans up and exits */
  SIG_STATE_HELD,     /* the commit (or a change of the guarded set) runs: exits wait for it */
  SIG_STATE_EXITING,  /* a handler is removing the staged files and exits */
  SIG_STATE_COMMITTED /* the outputs are in place: the run ends by itself */
};

/* The signals whose default action ends the process and that a person or a supervisor sends
 * (a terminal, a dropped ssh session, kill, timeout, a batch system, a CPU-time limit). Not
 * SIGPROF (profilers use it); SIGKILL and SIGSTOP cannot be caught. */
static const int handled[] = {
    SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGXCPU,
#ifdef SIGPWR
    SIGPWR,
#endif
};
#define NHANDLED ((int)(sizeof(handled) / sizeof(handled[0])))

volatile sig_atomic_t app_cancel = 0;
static app_out *volatile active_out = NULL; /* what a second signal cleans up */
static atomic_int state = SIG_STATE_IDLE;
static atomic_int deferred = 0;        /* a second signal that came while HELD */
static int held_from = SIG_STATE_IDLE; /* the state app_signals_hold found */
static sigset_t held_set;              /* the handled signals */
static sigset_t saved_mask;            /* the committing thread's mask before the hold */

static void on_signal(int sig)
{
  if (!app_cancel) {
    app_cancel = sig;
    return;
  }
  for (;;) {
    int expected = SIG_STATE_IDLE;
    if (atomic_compare_exchange_strong(&state, &expected, SIG_STATE_EXITING)) {
      app_out_abort_signal_safe(active_out);
      _exit(128 + sig);
    }
    if (expected != SIG_STATE_HELD)
      return; /* COMMITTED: the run is complete; EXITING: another thread is exiting */
    /* the commit runs: app_signals_release exits once it is whole, unless it has released
     * already, which the second look at the state sees */
    atomic_store(&deferred, sig);
    if (atomic_load(&state) == SIG_STATE_HELD)
      return;
  }
}

void app_signals_install(void)
{
  struct sigaction sa, old;
  sigemptyset(&held_set);
  for (int i = 0; i < NHANDLED; i++)
    sigaddset(&held_set, handled[i]);
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sa.sa_mask = held_set; /* one handler at a time in a thread; no SA_RESTART: a first signal
                          * interrupts a blocked open or write (a FIFO nobody reads) */
  for (int i = 0; i < NHANDLED; i++) {
    /* a signal ignored on entry stays ignored: nohup (SIGHUP), a background job (SIGINT) */
    if (sigaction(handled[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
      continue;
    sigaction(handled[i], &sa, NULL);
  }
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = SIG_IGN;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPIPE, &sa, NULL);
  sigaction(SIGXFSZ, &sa, NULL);
}

void app_signals_hold(void)
{
  int expected = SIG_STATE_IDLE;
  pthread_sigmask(SIG_BLOCK, &held_set, &saved_mask);
  while (!atomic_compare_exchange_strong(&state, &expected, SIG_STATE_HELD) &&
         expected == SIG_STATE_EXITING) {
    pause(); /* a handler on another thread removes the staged files and ends the process */
    expected = SIG_STATE_IDLE;
  }
  held_from = expected == SIG_STATE_COMMITTED ? SIG_STATE_COMMITTED : SIG_STATE_IDLE;
}

void app_signals_release(int committed)
{
  int sig;
  committed = committed || held_from == SIG_STATE_COMMITTED;
  atomic_store(&state, committed ? SIG_STATE_COMMITTED : SIG_STATE_IDLE);
  sig = atomic_exchange(&deferred, 0);
  pthread_sigmask(SIG_SETMASK, &saved_mask, NULL); /* a pending signal runs its handler now */
  if (sig && !committed)
    raise(sig); /* a second signal came during the hold: clean up and exit now */
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
