/* How messages name files: long names shortened, special files said for what they are. */
#include "dsg_base.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *dsg_short_name(const char *name, char buf[DSG_SHORT_NAME])
{
  const size_t len = strlen(name);
  if (len <= DSG_SHORT_NAME - 8)
    return name;
  snprintf(buf, DSG_SHORT_NAME, "%.100s...%s", name, name + len - 100);
  return buf;
}

const char *dsg_file_kind(unsigned mode)
{
  if (S_ISFIFO(mode))
    return "a FIFO (named pipe)";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  if (S_ISDIR(mode))
    return "a folder";
  return "a special file";
}
