/* Staged output files (temporary file + rename, committed all or nothing) and the PNG / .npy /
 * text writers. */
#include "io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <png.h>
#include <setjmp.h>
#include <stb_image_write.h>

#define APP_OUT_MAX_FILES 1024

typedef struct staged {
  char *tmp;    /* hidden temporary path beside the final one */
  char *final;  /* the path it gets on commit */
  char *backup; /* the earlier file at `final` while the commit runs (NULL: none) */
  FILE *fp;     /* open while being written */
  int done;     /* 1: closed successfully; 2: committed */
  int outside;  /* staged by app_out_open_path: not one of the folder's outputs */
} staged;

struct app_out {
  char *dir;
  int created_dir; /* the folder did not exist: remove it again if nothing is committed */
  staged files[APP_OUT_MAX_FILES];
  volatile sig_atomic_t nfiles; /* entries below nfiles are fully initialised */
  int committed;
};

static char *join(const char *dir, const char *prefix, const char *name, const char *suffix)
{
  size_t len = strlen(dir) + strlen(prefix) + strlen(name) + strlen(suffix) + 2;
  char *s = malloc(len);
  if (s)
    snprintf(s, len, "%s/%s%s%s", dir, prefix, name, suffix);
  return s;
}

int app_out_begin(app_out **out, const char *dir)
{
  struct stat st;
  app_out *o;
  char *probe = NULL;
  FILE *f;
  char suffix[32];
  int status;

  *out = NULL;
  if (!dir || !*dir)
    return dsg_error_set(DSG_ERR_INVALID, "the output folder name is empty");
  o = calloc(1, sizeof(*o));
  if (!o || !(o->dir = strdup(dir))) {
    free(o);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the output set");
  }
  if (stat(dir, &st) != 0) {
    if (errno != ENOENT || mkdir(dir, 0777) != 0) {
      status = dsg_error_set(DSG_ERR_IO, "cannot create the output folder '%s': %s", dir,
                             strerror(errno));
      goto out_fail;
    }
    o->created_dir = 1;
  } else if (!S_ISDIR(st.st_mode)) {
    status = dsg_error_set(DSG_ERR_IO, "the output path '%s' exists and is not a folder", dir);
    goto out_fail;
  }
  /* A real probe: permissions alone say nothing for root or read-only mounts. */
  snprintf(suffix, sizeof(suffix), ".%ld", (long)getpid());
  probe = join(dir, ".diaseg-probe", suffix, "");
  if (!probe) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
    goto out_fail;
  }
  f = fopen(probe, "wb");
  if (!f || fclose(f) != 0) {
    status = dsg_error_set(DSG_ERR_IO, "the output folder '%s' is not writable: %s", dir,
                           strerror(errno));
    unlink(probe);
    goto out_fail;
  }
  unlink(probe);
  free(probe);
  *out = o;
  return DSG_OK;

out_fail:
  free(probe);
  if (o->created_dir)
    rmdir(dir);
  free(o->dir);
  free(o);
  return status;
}

const char *app_out_dir(const app_out *o) { return o->dir; }

/* Stages a file that commit renames to `final` (taken over by the entry) through the temporary
 * `tmp` (likewise). */
static int stage(app_out *o, char *tmp, char *final, int outside, FILE **fp)
{
  staged *s;
  *fp = NULL;
  if (!tmp || !final) {
    free(tmp);
    free(final);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate output paths");
  }
  if (o->nfiles >= APP_OUT_MAX_FILES) {
    free(tmp);
    free(final);
    return dsg_error_set(DSG_ERR_LIMIT, "more than %d output files", APP_OUT_MAX_FILES);
  }
  s = &o->files[o->nfiles];
  memset(s, 0, sizeof(*s));
  s->tmp = tmp;
  s->final = final;
  s->outside = outside;
  s->fp = fopen(s->tmp, "wb");
  if (!s->fp) {
    int e = errno;
    if (outside)
      dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", s->final, strerror(e));
    else
      dsg_error_set(DSG_ERR_IO, "cannot create '%s' in '%s': %s", strrchr(s->final, '/') + 1,
                    o->dir, strerror(e));
    free(s->tmp);
    free(s->final);
    s->tmp = s->final = NULL;
    return DSG_ERR_IO;
  }
  o->nfiles++; /* the handler may now see (and unlink) this entry */
  *fp = s->fp;
  return DSG_OK;
}

int app_out_open(app_out *o, const char *name, FILE **fp)
{
  char suffix[32];
  *fp = NULL;
  if (strchr(name, '/'))
    return dsg_error_set(DSG_ERR_INVALID, "output name '%s' must not contain '/'", name);
  snprintf(suffix, sizeof(suffix), ".tmp-%ld", (long)getpid());
  return stage(o, join(o->dir, ".", name, suffix), join(o->dir, "", name, ""), 0, fp);
}

int app_out_open_path(app_out *o, const char *path, FILE **fp, int *direct)
{
  struct stat st;
  const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
  char *dir, suffix[48];
  int status;
  *fp = NULL;
  *direct = 0;
  if (!*path || !*base)
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': it names a folder, not a file", path);
  if (lstat(path, &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return dsg_error_set(DSG_ERR_IO, "cannot write '%s': it is a folder, not a file", path);
    if (!S_ISREG(st.st_mode)) {
      *direct = 1; /* a device, a FIFO, a link such as /dev/stdout: written, never renamed over */
      return DSG_OK;
    }
  } else if (errno != ENOENT) {
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  }
  dir = !slash ? strdup(".") : slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
  if (!dir)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
  /* the slot number keeps it apart from a folder output of the same name */
  snprintf(suffix, sizeof(suffix), ".tmp-%ld-%d", (long)getpid(), (int)o->nfiles);
  status = stage(o, join(dir, ".", base, suffix), strdup(path), 1, fp);
  free(dir);
  return status;
}

int app_write_direct(const char *path, const char *buf, size_t len)
{
  int fd, e = 0;
  if (strcmp(path, "-") == 0) {
    if (fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0)
      return dsg_error_set(DSG_ERR_IO, "cannot write the report to standard output: %s",
                           strerror(errno));
    return DSG_OK;
  }
  fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOCTTY, 0666); /* like `>` in a shell */
  if (fd < 0)
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
  while (len > 0 && !e) {
    ssize_t w = write(fd, buf, len);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      e = w < 0 ? errno : EIO;
    else {
      buf += w;
      len -= (size_t)w;
    }
  }
  if (close(fd) != 0 && !e && errno != EINTR)
    e = errno;
  if (e)
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", path, strerror(e));
  return DSG_OK;
}

int app_out_close(app_out *o, FILE *fp)
{
  for (int i = 0; i < o->nfiles; i++) {
    staged *s = &o->files[i];
    if (s->fp != fp)
      continue;
    int bad = ferror(fp);
    int e = bad ? errno : 0;
    if (fflush(fp) != 0 && !bad) {
      bad = 1;
      e = errno;
    }
    if (!bad && fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS) {
      bad = 1;
      e = errno;
    }
    if (fclose(fp) != 0 && !bad) {
      bad = 1;
      e = errno;
    }
    s->fp = NULL;
    if (bad) {
      unlink(s->tmp);
      return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", s->final,
                           e ? strerror(e) : "write error");
    }
    s->done = 1;
    return DSG_OK;
  }
  return dsg_error_set(DSG_ERR_INVALID, "app_out_close: not a staged file");
}

/* Removes the files matching `stale` that this set did not commit. */
static void remove_stale(app_out *o, const char *const *stale)
{
  DIR *d = opendir(o->dir);
  struct dirent *e;
  if (!d)
    return;
  while ((e = readdir(d))) {
    int ours = 0, match = 0;
    for (int p = 0; stale[p] && !match; p++)
      match = fnmatch(stale[p], e->d_name, 0) == 0;
    if (!match)
      continue;
    for (int i = 0; i < o->nfiles && !ours; i++) {
      const char *base = strrchr(o->files[i].final, '/');
      ours = !o->files[i].outside && strcmp(base ? base + 1 : o->files[i].final, e->d_name) == 0;
    }
    if (!ours) {
      char *path = join(o->dir, "", e->d_name, "");
      if (path)
        unlink(path);
      free(path);
    }
  }
  closedir(d);
}

/* The backup name of staged file i: beside its final path, hidden. */
static char *backup_path(const app_out *o, int i)
{
  const char *final = o->files[i].final, *slash = strrchr(final, '/');
  char suffix[48];
  size_t dirlen = slash ? (size_t)(slash - final) + 1 : 0;
  char *s, *dir = strndup(final, dirlen);
  if (!dir)
    return NULL;
  snprintf(suffix, sizeof(suffix), ".old-%ld-%d", (long)getpid(), i);
  s = malloc(strlen(final) + strlen(suffix) + 2);
  if (s)
    sprintf(s, "%s.%s%s", dir, final + dirlen, suffix);
  free(dir);
  return s;
}

/* Undoes a commit that failed midway: the new files go, the earlier ones come back. In reverse
 * order, so that two entries for one path (--json naming an output) unwind too. A backup that is
 * a second link to the file still in place is a no-op rename: then the link just goes. */
static void roll_back(app_out *o)
{
  for (int i = o->nfiles - 1; i >= 0; i--) {
    staged *s = &o->files[i];
    if (s->done == 2) {
      if (!s->backup)
        unlink(s->final);
      char *tmp = s->tmp;
      s->done = 1;   /* its temporary is gone: nothing is left to remove */
      s->tmp = NULL; /* before the free: the signal handler reads it */
      free(tmp);
    }
    if (s->backup) {
      if (rename(s->backup, s->final) == 0)
        unlink(s->backup);
      free(s->backup);
      s->backup = NULL;
    }
  }
}

/* Whether `entry` is a name diaseg stages or keeps: ".NAME.tmp-PID" (a file of the output
 * folder), ".NAME.tmp-PID-I" (--json FILE) or ".NAME.old-PID-I" (a backup during a commit). Puts
 * NAME's length in *namelen, the PID in *pid and whether it is a backup in *backup. */
static int leftover_name(const char *entry, size_t *namelen, long *pid, int *backup)
{
  const size_t len = strlen(entry);
  const char *mark = NULL, *num;
  char *end;
  size_t i;
  if (entry[0] != '.' || len < 8)
    return 0;
  for (i = len - 6; i >= 2 && !mark; i--)
    if (memcmp(entry + i, ".tmp-", 5) == 0 || memcmp(entry + i, ".old-", 5) == 0)
      mark = entry + i;
  if (!mark)
    return 0;
  *namelen = (size_t)(mark - entry) - 1;
  *backup = mark[1] == 'o';
  num = mark + 5;
  if (*num < '0' || *num > '9')
    return 0;
  errno = 0;
  *pid = strtol(num, &end, 10);
  if (errno != 0 || *pid <= 0)
    return 0;
  if (*end == '\0')
    return !*backup; /* a backup always has its index */
  if (*end != '-' || end[1] < '0' || end[1] > '9')
    return 0;
  strtol(end + 1, &end, 10);
  return *end == '\0';
}

/* Whether the name `name` (namelen bytes) in folder `dir` is one of this set's: a staged file's
 * final name there, or (in the output folder) a match of `stale`. */
static int is_ours(const app_out *o, const char *dir, const char *name, size_t namelen,
                   const char *const *stale)
{
  char buf[NAME_MAX + 1];
  if (namelen > NAME_MAX)
    return 0;
  memcpy(buf, name, namelen);
  buf[namelen] = '\0';
  for (int i = 0; i < o->nfiles; i++) {
    const char *final = o->files[i].final, *slash = strrchr(final, '/');
    int here;
    if (!slash)
      here = strcmp(dir, ".") == 0;
    else if (slash == final)
      here = strcmp(dir, "/") == 0;
    else
      here = strlen(dir) == (size_t)(slash - final) && strncmp(dir, final, strlen(dir)) == 0;
    if (here && strcmp(slash ? slash + 1 : final, buf) == 0)
      return 1;
  }
  if (stale && strcmp(dir, o->dir) == 0)
    for (int p = 0; stale[p]; p++)
      if (fnmatch(stale[p], buf, 0) == 0)
        return 1;
  return 0;
}

/* Removes from `dir` what diaseg processes that are gone left behind (SIGKILL, a crash, a power
 * cut: what no handler could remove): the staged files and backups of this set's names, and the
 * output folder's write probes, whose PID is no live process (kill(pid, 0) fails with ESRCH). A
 * backup whose final name is missing is the earlier file itself, moved away by a rename: it is
 * put back. */
static void sweep(const app_out *o, const char *dir, const char *const *stale)
{
  DIR *d = opendir(dir);
  struct dirent *e;
  const long self = (long)getpid();
  if (!d)
    return;
  while ((e = readdir(d))) {
    size_t namelen;
    long pid;
    int backup;
    char *path, *final;
    if (strncmp(e->d_name, ".diaseg-probe.", 14) == 0 && strcmp(dir, o->dir) == 0) {
      char *end;
      pid = strtol(e->d_name + 14, &end, 10);
      if (*end != '\0' || pid <= 0)
        continue;
      namelen = 0;
      backup = 0;
    } else if (!leftover_name(e->d_name, &namelen, &pid, &backup) ||
               !is_ours(o, dir, e->d_name + 1, namelen, stale)) {
      continue;
    }
    if (pid == self || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
      continue; /* alive (or not ours to signal): its files are its own */
    path = join(dir, "", e->d_name, "");
    final = backup ? strndup(e->d_name + 1, namelen) : NULL;
    if (final) {
      char *to = join(dir, "", final, "");
      struct stat st;
      if (to && lstat(to, &st) != 0 && errno == ENOENT)
        rename(path, to); /* the only copy of the earlier file */
      free(to);
      free(final);
    }
    if (path)
      unlink(path); /* fails harmlessly where it was put back */
    free(path);
  }
  closedir(d);
}

/* Sweeps the output folder and every other folder a file of the set goes to (--json FILE). */
static void sweep_all(const app_out *o, const char *const *stale)
{
  sweep(o, o->dir, stale);
  for (int i = 0; i < o->nfiles; i++) {
    const char *final = o->files[i].final, *slash = strrchr(final, '/');
    char *dir;
    if (!o->files[i].outside)
      continue;
    dir = !slash           ? strdup(".")
          : slash == final ? strdup("/")
                           : strndup(final, (size_t)(slash - final));
    if (dir && strcmp(dir, o->dir) != 0)
      sweep(o, dir, NULL);
    free(dir);
  }
}

int app_out_commit(app_out *o, const char *const *stale)
{
  struct stat st;
  int status = DSG_OK, i;
  for (i = 0; i < o->nfiles; i++)
    if (o->files[i].done != 1)
      return dsg_error_set(DSG_ERR_IO, "'%s' was not completely written", o->files[i].final);
  /* 0. what killed runs left behind goes (or comes back, for an earlier file) */
  sweep_all(o, stale);
  /* 1. every target is free or a regular file: anything else in the way fails before a rename */
  for (i = 0; i < o->nfiles; i++) {
    const char *final = o->files[i].final;
    if (lstat(final, &st) != 0) {
      if (errno != ENOENT)
        return dsg_error_set(DSG_ERR_IO, "cannot replace '%s': %s", final, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
      return dsg_error_set(DSG_ERR_IO,
                           "cannot replace '%s': it is %s, not a regular file; nothing was "
                           "written (move it away)",
                           final,
                           S_ISDIR(st.st_mode)   ? "a folder"
                           : S_ISLNK(st.st_mode) ? "a symbolic link"
                                                 : "a special file");
    }
  }
  /* 2. the earlier files stay reachable under backup names (a hard link, else a rename) until
   * every new file is in place */
  for (i = 0; i < o->nfiles && status == DSG_OK; i++) {
    staged *s = &o->files[i];
    if (lstat(s->final, &st) != 0)
      continue; /* nothing to keep */
    s->backup = backup_path(o, i);
    if (!s->backup) {
      status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
    } else if (link(s->final, s->backup) != 0 && rename(s->final, s->backup) != 0) {
      status = dsg_error_set(DSG_ERR_IO, "cannot keep the earlier '%s' while replacing it: %s",
                             s->final, strerror(errno));
      free(s->backup);
      s->backup = NULL;
    }
  }
  /* 3. the new files into place; on a failure the earlier ones come back */
  for (i = 0; i < o->nfiles && status == DSG_OK; i++) {
    if (rename(o->files[i].tmp, o->files[i].final) != 0)
      status = dsg_error_set(DSG_ERR_IO,
                             "cannot move '%s' into place: %s; the earlier files "
                             "were kept",
                             o->files[i].final, strerror(errno));
    else
      o->files[i].done = 2; /* committed */
  }
  if (status != DSG_OK) {
    roll_back(o);
    return status;
  }
  /* 4. the backups go */
  for (i = 0; i < o->nfiles; i++) {
    if (o->files[i].backup)
      unlink(o->files[i].backup);
    free(o->files[i].backup);
    o->files[i].backup = NULL;
  }
  o->committed = 1;
  if (stale)
    remove_stale(o, stale);
  return DSG_OK;
}

void app_out_abort_signal_safe(app_out *o)
{
  if (!o)
    return;
  for (int i = 0; i < o->nfiles; i++)
    if (o->files[i].done != 2 && o->files[i].tmp)
      unlink(o->files[i].tmp);
  if (o->created_dir && !o->committed)
    rmdir(o->dir);
}

void app_out_destroy(app_out *o)
{
  if (!o)
    return;
  for (int i = 0; i < o->nfiles; i++)
    if (o->files[i].fp)
      fclose(o->files[i].fp);
  app_out_abort_signal_safe(o);
  for (int i = 0; i < o->nfiles; i++) {
    free(o->files[i].tmp);
    free(o->files[i].final);
    free(o->files[i].backup);
  }
  free(o->dir);
  free(o);
}

/* ---- writers ---- */

typedef struct png_sink {
  FILE *fp;
  int failed;
} png_sink;

static void png_write(void *ctx, void *data, int size)
{
  png_sink *sink = ctx;
  if (!sink->failed && fwrite(data, 1, (size_t)size, sink->fp) != (size_t)size)
    sink->failed = 1;
}

int app_out_png(app_out *o, const char *name, int width, int height, int comp,
                const unsigned char *data)
{
  png_sink sink = {0};
  int status;
  /* stb_image_write sizes its buffers in int: keep every product well inside INT_MAX. */
  if (width < 1 || height < 1 || comp < 1 || comp > 4 ||
      (size_t)width * (size_t)height * (size_t)(comp + 1) > (size_t)INT_MAX / 2)
    return dsg_error_set(DSG_ERR_LIMIT,
                         "cannot write %s: %d x %d x %d is beyond the PNG writer's "
                         "limit (%d bytes)",
                         name, width, height, comp, INT_MAX / 2);
  status = app_out_open(o, name, &sink.fp);
  if (status != DSG_OK)
    return status;
  if (!stbi_write_png_to_func(png_write, &sink, width, height, comp, data, width * comp) ||
      sink.failed) {
    int e = errno;
    app_out_close(o, sink.fp);
    /* the staged file is dropped at destroy; report the real cause */
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", name,
                         sink.failed ? strerror(e) : "PNG encoder failed (out of memory)");
  }
  return app_out_close(o, sink.fp);
}

/* libpng's errors: the message kept for ours, then back to the setjmp in app_out_png16 */
static void png16_error(png_structp png, png_const_charp msg)
{
  char *keep = png_get_error_ptr(png);
  snprintf(keep, 128, "%s", msg);
  png_longjmp(png, 1);
}

static void png16_warning(png_structp png, png_const_charp msg)
{
  (void)png;
  (void)msg;
}

int app_out_png16(app_out *o, const char *name, int width, int height, const uint16_t *data)
{
  char why[128] = "";
  png_structp png = NULL;
  png_infop info = NULL;
  FILE *fp = NULL;
  int status;
  if (width < 1 || height < 1 || width > 0x7fffffff / 2)
    return dsg_error_set(DSG_ERR_LIMIT, "cannot write %s: a %d x %d 16-bit PNG", name, width,
                         height);
  status = app_out_open(o, name, &fp);
  if (status != DSG_OK)
    return status;
  png = png_create_write_struct(PNG_LIBPNG_VER_STRING, why, png16_error, png16_warning);
  info = png ? png_create_info_struct(png) : NULL;
  if (!png || !info) {
    status = dsg_error_set(DSG_ERR_NOMEM, "cannot write '%s': out of memory", name);
    goto out;
  }
  if (setjmp(png_jmpbuf(png))) {
    int e = errno;
    status =
        dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", name, ferror(fp) ? strerror(e) : why);
    goto out;
  }
  png_init_io(png, fp);
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 16, PNG_COLOR_TYPE_GRAY,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  {
    const uint16_t one = 1;
    if (*(const unsigned char *)&one)
      png_set_swap(png); /* PNG is big-endian */
  }
  for (int y = 0; y < height; y++)
    png_write_row(png, (png_const_bytep)(data + (size_t)y * (size_t)width));
  png_write_end(png, NULL);
  if (fflush(fp) != 0 || ferror(fp))
    status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", name, strerror(errno));
out:
  if (png)
    png_destroy_write_struct(&png, info ? &info : NULL);
  {
    int st = app_out_close(o, fp);
    if (status == DSG_OK)
      status = st;
  }
  return status;
}

static int write_npy(app_out *o, const char *name, const char *descr, size_t elem, const void *data,
                     int ndim, const size_t *shape)
{
  char header[256], dims[160] = "";
  size_t count = 1;
  FILE *fp;
  int status, hl;
  const uint16_t one = 1;
  const char order = *(const unsigned char *)&one ? '<' : '>'; /* the data is written as is */
  for (int i = 0; i < ndim; i++) {
    size_t used = strlen(dims);
    /* "(a, b, c)"; one dimension keeps Python's trailing comma: "(a,)" */
    snprintf(dims + used, sizeof(dims) - used, "%zu%s", shape[i],
             i + 1 < ndim ? ", "
             : ndim == 1  ? ","
                          : "");
    count *= shape[i];
  }
  hl = snprintf(header, sizeof(header),
                "{'descr': '%c%s', 'fortran_order': False, 'shape': (%s), }", order, descr, dims);
  /* pad with spaces so that magic (6) + version (2) + length (2) + header + '\n' is a multiple of
   * 64 */
  while ((10 + hl + 1) % 64 != 0)
    header[hl++] = ' ';
  header[hl++] = '\n';
  status = app_out_open(o, name, &fp);
  if (status != DSG_OK)
    return status;
  unsigned char pre[10] = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hl & 0xff), (unsigned char)(hl >> 8)};
  fwrite(pre, 1, sizeof(pre), fp);
  fwrite(header, 1, (size_t)hl, fp);
  fwrite(data, elem, count, fp);
  return app_out_close(o, fp);
}

int app_out_npy_f32(app_out *o, const char *name, const float *data, int ndim, const size_t *shape)
{
  return write_npy(o, name, "f4", sizeof(float), data, ndim, shape);
}

int app_out_npy_f64(app_out *o, const char *name, const double *data, int ndim, const size_t *shape)
{
  return write_npy(o, name, "f8", sizeof(double), data, ndim, shape);
}

int app_out_npy_i32(app_out *o, const char *name, const int32_t *data, int ndim,
                    const size_t *shape)
{
  return write_npy(o, name, "i4", sizeof(int32_t), data, ndim, shape);
}

int app_out_text(app_out *o, const char *name, const char *text, size_t len)
{
  FILE *fp;
  int status = app_out_open(o, name, &fp);
  if (status != DSG_OK)
    return status;
  fwrite(text, 1, len, fp);
  return app_out_close(o, fp);
}
