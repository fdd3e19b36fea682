/* A small JSON writer: enough for report.json and the bench output. */
#include "json.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_json_init(app_json *j)
{
  memset(j, 0, sizeof(*j));
  j->first[0] = 1;
}

static void put(app_json *j, const char *s, size_t n)
{
  if (j->failed)
    return;
  if (j->len + n + 1 > j->cap) {
    size_t cap = j->cap ? j->cap : 1024;
    while (cap < j->len + n + 1)
      cap *= 2;
    char *b = realloc(j->buf, cap);
    if (!b) {
      j->failed = 1;
      return;
    }
    j->buf = b;
    j->cap = cap;
  }
  memcpy(j->buf + j->len, s, n);
  j->len += n;
  j->buf[j->len] = '\0';
}

static void puts_(app_json *j, const char *s) { put(j, s, strlen(s)); }

static void putf(app_json *j, const char *fmt, ...)
{
  char tmp[64];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
  va_end(ap);
  put(j, tmp, n < 0 ? 0 : (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void quoted(app_json *j, const char *s)
{
  put(j, "\"", 1);
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      put(j, e, 2);
    } else if (c < 0x20) {
      putf(j, "\\u%04x", c);
    } else {
      put(j, (const char *)&c, 1);
    }
  }
  put(j, "\"", 1);
}

/* comma, newline + indent, and "key": when inside an object */
static void item(app_json *j, const char *key)
{
  if (!j->first[j->depth])
    put(j, ",", 1);
  j->first[j->depth] = 0;
  if (j->depth > 0 && !j->compact) {
    put(j, "\n", 1);
    for (int i = 0; i < j->depth; i++)
      put(j, "  ", 2);
  }
  if (key && j->depth > 0 && !j->array[j->depth]) {
    quoted(j, key);
    put(j, j->compact ? ":" : ": ", j->compact ? 1 : 2);
  }
}

static void open_(app_json *j, const char *key, const char *bracket)
{
  item(j, key);
  puts_(j, bracket);
  if (j->depth + 1 < 32)
    j->depth++;
  else
    j->failed = 1; /* deeper than any document diaseg writes */
  j->first[j->depth] = 1;
  j->array[j->depth] = bracket[0] == '[';
}

static void close_(app_json *j, const char *bracket)
{
  int empty = j->first[j->depth];
  if (j->depth > 0)
    j->depth--;
  if (!empty && !j->compact) {
    put(j, "\n", 1);
    for (int i = 0; i < j->depth; i++)
      put(j, "  ", 2);
  }
  puts_(j, bracket);
}

void app_json_begin_object(app_json *j, const char *key) { open_(j, key, "{"); }
void app_json_end_object(app_json *j) { close_(j, "}"); }
void app_json_begin_array(app_json *j, const char *key) { open_(j, key, "["); }
void app_json_end_array(app_json *j) { close_(j, "]"); }

void app_json_string(app_json *j, const char *key, const char *value)
{
  item(j, key);
  if (value)
    quoted(j, value);
  else
    puts_(j, "null");
}

void app_json_number(app_json *j, const char *key, double value)
{
  item(j, key);
  if (isfinite(value))
    putf(j, "%.15g", value);
  else
    puts_(j, "null");
}

void app_json_int(app_json *j, const char *key, long long value)
{
  item(j, key);
  putf(j, "%lld", value);
}

void app_json_bool(app_json *j, const char *key, int value)
{
  item(j, key);
  puts_(j, value ? "true" : "false");
}

void app_json_null(app_json *j, const char *key)
{
  item(j, key);
  puts_(j, "null");
}

int app_json_finish(app_json *j)
{
  put(j, "\n", 1);
  if (j->failed)
    return dsg_error_set(DSG_ERR_NOMEM, "out of memory while writing JSON");
  return DSG_OK;
}

void app_json_free(app_json *j)
{
  free(j->buf);
  memset(j, 0, sizeof(*j));
}
