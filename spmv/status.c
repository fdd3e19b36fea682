/* Project-wide status codes, the per-thread error message, and the clock. */
#include "spmv.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static _Thread_local char dsg_message[1024];

int dsg_error_set(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dsg_message, sizeof(dsg_message), fmt, ap);
  va_end(ap);
  return status;
}

const char *dsg_error_message(void) { return dsg_message; }

void dsg_error_clear(void) { dsg_message[0] = '\0'; }

const char *dsg_status_name(int status)
{
  switch (status) {
  case DSG_OK: return "ok";
  case DSG_ERR_INVALID: return "invalid argument";
  case DSG_ERR_NOMEM: return "out of memory";
  case DSG_ERR_IO: return "i/o error";
  case DSG_ERR_FORMAT: return "bad image";
  case DSG_ERR_LIMIT: return "size limit";
  case DSG_ERR_OPENCL: return "opencl error";
  case DSG_ERR_NODEVICE: return "no opencl device";
  case DSG_ERR_SOLVER: return "eigensolver error";
  case DSG_ERR_NOCONV: return "not converged";
  case DSG_ERR_INTERRUPTED: return "interrupted";
  default: return "unknown error";
  }
}

double dsg_seconds(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
