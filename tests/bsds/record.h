/* The record programs' output files (arc_data.c, net_data.c): written to PATH.tmp and renamed
 * over PATH once whole, so that a record is there whole or not at all (fit_arcs.py and
 * fit_net.py skip the images whose record exists). */
#ifndef DIASEG_BSDS_RECORD_H
#define DIASEG_BSDS_RECORD_H

#include <stdio.h>

/* PATH.tmp opened for writing (tmp receives its name, size bytes at most), or NULL. */
static FILE *record_open(const char *path, char *tmp, size_t size)
{
  snprintf(tmp, size, "%s.tmp", path);
  return fopen(tmp, "wb");
}

/* Closes f (NULL allowed) and renames tmp over path when ok and everything was written; else
 * removes tmp and says so on stderr in tool's name. Returns 0 (written) or 1. */
static int record_close(FILE *f, int ok, const char *tmp, const char *path, const char *tool)
{
  if (f && fclose(f) != 0)
    ok = 0;
  if (!f)
    ok = 0;
  if (ok && rename(tmp, path) != 0)
    ok = 0;
  if (!ok) {
    remove(tmp);
    fprintf(stderr, "%s: cannot write %s\n", tool, path);
  }
  return ok ? 0 : 1;
}

#endif /* DIASEG_BSDS_RECORD_H */
