/* Files for messages and readers: long names shortened, special files said for what they are,
 * whole reads. */
#include "dsg_base.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

int dsg_read_exact(int fd, void *buf, size_t len)
{
  size_t got = 0;
  while (got < len) {
    const ssize_t n = read(fd, (char *)buf + got, len - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return errno;
    if (n == 0)
      return -1;
    got += (size_t)n;
  }
  return 0;
}
