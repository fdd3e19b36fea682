/* Project-wide status codes, the per-thread error message, and the clock. */
#include "dsg_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define MESSAGE_BYTES 1024

static _Thread_local char dsg_raw[MESSAGE_BYTES];
static _Thread_local char dsg_plain[MESSAGE_BYTES];

int dsg_error_set(int status, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dsg_raw, sizeof(dsg_raw), fmt, ap);
  va_end(ap);
  dsg_error_render(dsg_raw, dsg_plain, sizeof(dsg_plain), NULL, NULL);
  return status;
}

const char *dsg_error_message(void) { return dsg_plain; }

const char *dsg_error_raw(void) { return dsg_raw; }

void dsg_error_clear(void)
{
  dsg_raw[0] = '\0';
  dsg_plain[0] = '\0';
}

void dsg_error_render(const char *raw, char *buf, size_t cap, dsg_spell_fn spell, void *data)
{
  size_t len = 0;
  if (cap == 0)
    return;
  while (*raw && len + 1 < cap) {
    const char *end = *raw == '\001' ? strchr(raw, '\002') : NULL;
    if (end) {
      char name[64];
      const char *text;
      size_t nlen = (size_t)(end - raw - 1);
      if (nlen >= sizeof(name))
        nlen = sizeof(name) - 1;
      memcpy(name, raw + 1, nlen);
      name[nlen] = '\0';
      text = spell ? spell(name, data) : NULL;
      for (text = text ? text : name; *text && len + 1 < cap; text++)
        buf[len++] = *text;
      raw = end + 1;
    } else if (*raw == '\001' || *raw == '\002') {
      raw++; /* a stray mark (cut off by the message's length) */
    } else {
      buf[len++] = *raw++;
    }
  }
  buf[len] = '\0';
}

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
