/* json: a small JSON text writer, shared by the library's report and the drivers' outputs. */
#ifndef DIASEG_JSON_H
#define DIASEG_JSON_H

#include <stddef.h>

#include "dsg_base.h"

/* A growing JSON text with automatic commas. Keys are ignored inside arrays. Errors (out of
 * memory) are sticky and reported by app_json_finish. */
typedef struct app_json {
  char *buf;
  size_t len, cap;
  int depth;
  int first[32];           /* no comma needed before the next item at this depth */
  unsigned char array[32]; /* the container at this depth is an array */
  int failed;
  int compact; /* 1: one line, no indentation (JSON lines); 0 (app_json_init): indented */
} app_json;

void app_json_init(app_json *j);
void app_json_begin_object(app_json *j, const char *key);
void app_json_end_object(app_json *j);
void app_json_begin_array(app_json *j, const char *key);
void app_json_end_array(app_json *j);
void app_json_string(app_json *j, const char *key, const char *value);
void app_json_number(app_json *j, const char *key, double value); /* non-finite -> null */
void app_json_int(app_json *j, const char *key, long long value);
void app_json_bool(app_json *j, const char *key, int value);
void app_json_null(app_json *j, const char *key);
/* Terminates the text (newline); returns DSG_OK or DSG_ERR_NOMEM. */
int app_json_finish(app_json *j);
void app_json_free(app_json *j);

#endif
