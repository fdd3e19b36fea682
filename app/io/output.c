/* Staged output files (temporary file + rename, committed all or nothing) and the PNG / .npy /
 * text writers. */
/* Linux's sync_file_range: a written file's writeback starts at once (flush_staged) */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE
#endif
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
#include <sys/uio.h>
#include <unistd.h>

#include <png.h>
#include <pthread.h>
#include <setjmp.h>
#include <zlib.h>

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
  char **made; /* the folders app_out_begin created, outermost first: removed again (deepest
                * first) if nothing is committed */
  int nmade;
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

/* Removes the folders app_out_begin made, deepest first (async-signal-safe: rmdir only; one
 * that is no longer empty stays). */
static void remove_made(const app_out *o)
{
  for (int i = o->nmade - 1; i >= 0; i--)
    rmdir(o->made[i]);
}

/* Creates `dir` and every missing folder above it (mkdir -p), each one made recorded in o->made.
 * Something other than a folder in the way, or a mkdir that fails, is an error. */
static int make_folders(app_out *o, const char *dir)
{
  struct stat st;
  size_t levels = 1;
  char *path = strdup(dir);
  int status = DSG_OK;
  if (!path)
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
  for (const char *c = dir; *c; c++)
    levels += *c == '/';
  o->made = calloc(levels, sizeof(*o->made));
  if (!o->made) {
    free(path);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
  }
  /* each prefix that ends a component: "a", "a/b", "a/b/c" (a leading '/' and doubled or trailing
   * slashes end none) */
  for (char *p = path + 1;; p++) {
    const char c = *p;
    if (c != '/' && c != '\0')
      continue;
    if (p[-1] != '/') {
      *p = '\0';
      if (stat(path, &st) == 0) {
        if (!S_ISDIR(st.st_mode))
          status = strcmp(path, dir) == 0
                       ? dsg_error_set(DSG_ERR_IO,
                                       "the output path '%s' exists and is not a folder", dir)
                       : dsg_error_set(DSG_ERR_IO,
                                       "cannot create the output folder '%s': '%s' is a file, "
                                       "not a folder",
                                       dir, path);
      } else if (errno != ENOENT) {
        status = dsg_error_set(DSG_ERR_IO, "cannot create the output folder '%s': %s", dir,
                               strerror(errno));
      } else if (mkdir(path, 0777) == 0) {
        if (!(o->made[o->nmade] = strdup(path)))
          status = dsg_error_set(DSG_ERR_NOMEM, "cannot allocate a path");
        else
          o->nmade++;
      } else if (errno != EEXIST || stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        /* (EEXIST and a folder: another process made it meanwhile) */
        status = strcmp(path, dir) == 0
                     ? dsg_error_set(DSG_ERR_IO, "cannot create the output folder '%s': %s", dir,
                                     strerror(errno))
                     : dsg_error_set(DSG_ERR_IO, "cannot create the output folder '%s': '%s': %s",
                                     dir, path, strerror(errno));
      }
      *p = c;
    }
    if (!c || status != DSG_OK)
      break;
  }
  free(path);
  /* the whole path, however it is spelled ("/", "a/", "a/."): a folder */
  if (status == DSG_OK && (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)))
    status = dsg_error_set(DSG_ERR_IO, "the output path '%s' is not a folder", dir);
  return status;
}

int app_out_begin(app_out **out, const char *dir)
{
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
  status = make_folders(o, dir);
  if (status != DSG_OK)
    goto out_fail;
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
  remove_made(o);
  for (int i = 0; i < o->nmade; i++)
    free(o->made[i]);
  free(o->made);
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

/* Flushes staged file s and starts the writeback of its bytes to the disk without waiting for it
 * (Linux; elsewhere the sync does it all), so that settle() later finds little left to wait for:
 * the files of a run are written by several threads, their disk time overlapping the encoding of
 * the others, and synced on one thread at the end. Returns 0, or the errno of the first failure
 * (the file is then closed and removed). Touches s alone. */
static int flush_staged(staged *s)
{
  FILE *fp = s->fp;
  int bad = ferror(fp);
  int e = bad ? (errno ? errno : EIO) : 0;
  if (fflush(fp) != 0 && !bad) {
    bad = 1;
    e = errno;
  }
  if (bad) {
    fclose(fp);
    s->fp = NULL;
    unlink(s->tmp);
    return e ? e : EIO;
  }
#ifdef SYNC_FILE_RANGE_WRITE
  sync_file_range(fileno(fp), 0, 0, SYNC_FILE_RANGE_WRITE); /* a failure shows in the fsync */
#endif
  return 0;
}

/* Syncs and closes staged file s, flushed: 0, or the errno of the first failure (the file is
 * then removed). The one place a staged file is synced, always on the thread that stages the
 * files (a signal that a test injects at the Nth sync meets one thread's count). */
static int settle(staged *s)
{
  FILE *fp = s->fp;
  int bad = 0, e = 0;
  if (fsync(fileno(fp)) != 0 && errno != EINVAL && errno != EROFS) {
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
    return e ? e : EIO;
  }
  s->done = 1;
  return 0;
}

/* Flushes, syncs and closes staged file s: 0, or the errno of the first failure (the file is then
 * removed). */
static int finish(staged *s)
{
  const int e = flush_staged(s);
  return e ? e : settle(s);
}

/* Drops staged file s without a message: closed and removed, never committed (done stays 0). */
static void discard(staged *s)
{
  if (s->fp)
    fclose(s->fp);
  s->fp = NULL;
  unlink(s->tmp);
}

/* The staged entry of fp, or NULL. */
static staged *find_staged(app_out *o, FILE *fp)
{
  for (int i = 0; i < o->nfiles; i++)
    if (o->files[i].fp == fp)
      return &o->files[i];
  return NULL;
}

int app_out_close(app_out *o, FILE *fp)
{
  staged *s = fp ? find_staged(o, fp) : NULL;
  int e;
  if (!s)
    return dsg_error_set(DSG_ERR_INVALID, "app_out_close: not a staged file");
  e = finish(s);
  if (e)
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", s->final, strerror(e));
  return DSG_OK;
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
  if (!o->committed)
    remove_made(o);
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
  for (int i = 0; i < o->nmade; i++)
    free(o->made[i]);
  free(o->made);
  free(o->dir);
  free(o);
}

/* ---- writers ---- */

/* One picture's encoding into its staged file: 0, or an errno (a write that failed) with `why`
 * empty, or -1 with libpng's reason in `why`. */
typedef struct png_job {
  staged *file;
  int err;
  char why[128];
  struct png_band *bands; /* a picture deflated in bands (encode_bands), or NULL (libpng) */
  int nbands;
} png_job;

static void png_fail(png_structp png, png_const_charp msg)
{
  png_job *job = png_get_error_ptr(png);
  if (!job->why[0] && !job->err)
    snprintf(job->why, sizeof(job->why), "%s", msg);
  png_longjmp(png, 1);
}

static void png_quiet(png_structp png, png_const_charp msg)
{
  (void)png;
  (void)msg;
}

static void png_put(png_structp png, png_bytep data, png_size_t len)
{
  png_job *job = png_get_io_ptr(png);
  if (fwrite(data, 1, len, job->file->fp) != len) {
    job->err = errno ? errno : EIO;
    png_error(png, "write error");
  }
}

static void png_flush_none(png_structp png) { (void)png; }

/* Encodes pic into job->file with libpng. zlib level 1; 8-bit pictures with the Up filter and
 * run-length matches (Z_RLE), 16-bit ones unfiltered with the default strategy: on 1920 x 1080
 * pictures of a run (an eigenvector, the overlay, the colour labels, ucm.png, contours.png, the
 * 16-bit labels) 4 to 10 times faster than stb_image_write's level 8 with its per-row filter
 * search, and as small or smaller (docs/CLI.md, "Output files"). */
static void encode_png(png_job *job, const app_png *pic)
{
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, job, png_fail, png_quiet);
  png_infop info = png ? png_create_info_struct(png) : NULL;
  const size_t stride = (size_t)pic->width * (size_t)pic->channels * (size_t)(pic->depth / 8);
  const unsigned char *rows = pic->data;
  if (!png || !info) {
    snprintf(job->why, sizeof(job->why), "out of memory");
    job->err = -1;
    goto out;
  }
  if (setjmp(png_jmpbuf(png))) {
    if (!job->err)
      job->err = -1;
    goto out;
  }
  png_set_write_fn(png, job, png_put, png_flush_none);
  png_set_IHDR(png, info, (png_uint_32)pic->width, (png_uint_32)pic->height, pic->depth,
               pic->channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_set_compression_level(png, Z_BEST_SPEED);
  if (pic->depth == 8) {
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_UP);
    png_set_compression_strategy(png, Z_RLE);
  } else {
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  }
  png_write_info(png, info);
  if (pic->depth == 16) {
    const uint16_t one = 1;
    if (*(const unsigned char *)&one)
      png_set_swap(png); /* PNG is big-endian */
  }
  for (int y = 0; y < pic->height; y++)
    png_write_row(png, (png_const_bytep)(rows + (size_t)y * stride));
  png_write_end(png, NULL);
out:
  if (png)
    png_destroy_write_struct(&png, info ? &info : NULL);
}

/* Pictures of at least this many pixels are deflated in bands in parallel, the smaller ones by
 * libpng on one thread each. A run's pictures are encoded together, so its slowest picture is
 * its write stage's floor: a 481 x 321 overlay alone took 12 ms on the H200 machine's host, its 8
 * other pictures 35 ms together on other threads (docs/PERFORMANCE.md). */
#define APP_PNG_BANDS_MIN_PIXELS ((size_t)1 << 16)
/* Filtered bytes per band: a picture's bytes over APP_PNG_BANDS, at least APP_PNG_BAND_MIN_BYTES
 * and APP_PNG_BAND_MIN_ROWS rows, whole rows. A function of the picture's size alone, so that a
 * file's bytes do not depend on the number of threads. */
#define APP_PNG_BANDS 16
#define APP_PNG_BAND_MIN_BYTES ((size_t)1 << 16)
#define APP_PNG_BAND_MIN_ROWS 16
/* The largest IDAT chunk written. */
#define APP_PNG_IDAT_BYTES ((size_t)1 << 20)

/* One band of rows [y0, y1) of a picture, deflated on its own: its raw deflate bytes and the
 * Adler-32 of its filtered rows, or `why` (a constant string) when that failed. */
typedef struct png_band {
  int y0, y1;
  unsigned char *z;
  size_t zlen;
  uLong adler;
  size_t raw; /* filtered bytes */
  const char *why;
} png_band;

/* The bytes of one filtered row (filter byte first) of pic. */
static size_t png_line(const app_png *pic)
{
  return (size_t)pic->width * (size_t)pic->channels * (size_t)(pic->depth / 8) + 1;
}

/* Whether pic is deflated in bands, and how many (0: written by libpng). */
static int png_band_count(const app_png *pic, int *rows_per_band)
{
  size_t line = png_line(pic), rows;
  if ((size_t)pic->width * (size_t)pic->height < APP_PNG_BANDS_MIN_PIXELS)
    return 0;
  const size_t total = line * (size_t)pic->height;
  const size_t bytes = total / APP_PNG_BANDS > APP_PNG_BAND_MIN_BYTES ? total / APP_PNG_BANDS
                                                                      : APP_PNG_BAND_MIN_BYTES;
  rows = (bytes + line - 1) / line;
  if (rows < APP_PNG_BAND_MIN_ROWS)
    rows = APP_PNG_BAND_MIN_ROWS;
  if (rows > (size_t)pic->height)
    rows = (size_t)pic->height;
  *rows_per_band = (int)rows;
  return (int)(((size_t)pic->height + rows - 1) / rows);
}

/* Filters rows [b->y0, b->y1) of pic as encode_png does (8-bit: Up, the first row None; 16-bit:
 * None, big-endian) and deflates them as a raw deflate stream, zlib level 1, ending with a sync
 * flush (the last band: the end of the stream) so that the bands concatenate into one stream.
 * Each band starts with an empty dictionary. */
static void deflate_band(png_band *b, const app_png *pic, int last)
{
  const size_t line = png_line(pic), stride = line - 1;
  const unsigned char *rows = pic->data;
  const size_t step = (size_t)1 << 30; /* at most this much input per deflate call (uInt) */
  unsigned char *f, *z = NULL;
  size_t cap, fed = 0;
  z_stream zs;
  int ret, flush;
  b->raw = (size_t)(b->y1 - b->y0) * line;
  f = malloc(b->raw);
  if (!f) {
    b->why = "out of memory";
    return;
  }
  for (int y = b->y0; y < b->y1; y++) {
    unsigned char *d = f + (size_t)(y - b->y0) * line;
    const unsigned char *r = rows + (size_t)y * stride;
    if (pic->depth == 16) {
      const uint16_t *v = (const uint16_t *)(const void *)r;
      d[0] = 0; /* None */
      for (size_t i = 0; i < stride / 2; i++) {
        d[1 + 2 * i] = (unsigned char)(v[i] >> 8);
        d[2 + 2 * i] = (unsigned char)(v[i] & 0xff);
      }
    } else if (y == 0) {
      d[0] = 0; /* None: Up against the zero row above the picture */
      memcpy(d + 1, r, stride);
    } else {
      const unsigned char *up = r - stride;
      d[0] = 2; /* Up */
      for (size_t i = 0; i < stride; i++)
        d[1 + i] = (unsigned char)(r[i] - up[i]);
    }
  }
  b->adler = adler32_z(adler32(0L, Z_NULL, 0), f, b->raw);
  memset(&zs, 0, sizeof(zs));
  ret = deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, -15, 8,
                     pic->depth == 8 ? Z_RLE : Z_DEFAULT_STRATEGY);
  if (ret != Z_OK) {
    b->why = ret == Z_MEM_ERROR ? "out of memory" : "zlib deflateInit2 failed";
    free(f);
    return;
  }
  cap = (size_t)deflateBound(&zs, (uLong)b->raw) + 64; /* + the sync flush's marker */
  z = malloc(cap);
  if (!z) {
    b->why = "out of memory";
    goto out;
  }
  zs.next_out = z;
  zs.avail_out = (uInt)(cap > step ? step : cap);
  for (;;) {
    size_t used = (size_t)(zs.next_out - z);
    if (zs.avail_in == 0 && fed < b->raw) {
      size_t take = b->raw - fed > step ? step : b->raw - fed;
      zs.next_in = f + fed;
      zs.avail_in = (uInt)take;
      fed += take;
    }
    flush = fed < b->raw ? Z_NO_FLUSH : last ? Z_FINISH : Z_SYNC_FLUSH;
    if (zs.avail_out == 0) {
      if (used == cap) {
        unsigned char *bigger = cap > SIZE_MAX / 2 ? NULL : realloc(z, cap * 2);
        if (!bigger) {
          b->why = "out of memory";
          goto out;
        }
        z = bigger;
        cap *= 2;
      }
      zs.next_out = z + used;
      zs.avail_out = (uInt)(cap - used > step ? step : cap - used);
    }
    ret = deflate(&zs, flush);
    if (ret != Z_OK && ret != Z_STREAM_END && ret != Z_BUF_ERROR) {
      b->why = "zlib deflate failed";
      goto out;
    }
    if (flush == Z_FINISH ? ret == Z_STREAM_END : flush == Z_SYNC_FLUSH && zs.avail_out > 0)
      break; /* all of the band is out */
  }
  b->zlen = (size_t)(zs.next_out - z);
  b->z = z;
  z = NULL;
out:
  deflateEnd(&zs);
  free(z);
  free(f);
}

/* Appends len bytes to the staged file of job: 0 or an errno (also kept in job->err). */
static int png_out(png_job *job, const void *data, size_t len)
{
  if (!job->err && len && fwrite(data, 1, len, job->file->fp) != len)
    job->err = errno ? errno : EIO;
  return job->err;
}

static void put_be32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

/* Writes a whole chunk (length, type, data, CRC-32 of type and data). */
static int png_chunk(png_job *job, const char *type, const unsigned char *data, size_t len)
{
  unsigned char head[8], tail[4];
  uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)type, 4);
  put_be32(head, (uint32_t)len);
  memcpy(head + 4, type, 4);
  if (len) /* crc32_z(crc, NULL, 0) would restart the CRC */
    crc = crc32_z(crc, data, len);
  put_be32(tail, (uint32_t)crc);
  png_out(job, head, 8);
  png_out(job, data, len);
  return png_out(job, tail, 4);
}

/* Writes pic as a PNG from its deflated bands (deflate_band): the signature, IHDR as libpng
 * writes it, one zlib stream (header 78 01, the bands in order, the Adler-32 of all the filtered
 * rows combined from the bands') in IDAT chunks of at most APP_PNG_IDAT_BYTES, IEND. Like
 * encode_png: job->err is 0, an errno, or -1 with the reason in job->why. */
static void encode_bands(png_job *job, const app_png *pic)
{
  static const unsigned char signature[8] = {137, 'P', 'N', 'G', '\r', '\n', 26, '\n'};
  static const unsigned char zhead[2] = {0x78, 0x01}; /* deflate, 32 KiB window, fastest */
  unsigned char ihdr[13], ztail[4];
  size_t total = sizeof(zhead) + sizeof(ztail);
  uLong adler = adler32(0L, Z_NULL, 0);
  int part = -1; /* the piece being written: -1 the zlib header, nbands the Adler-32 */
  size_t at = 0;
  for (int i = 0; i < job->nbands; i++) {
    if (job->bands[i].why) {
      job->err = -1;
      snprintf(job->why, sizeof(job->why), "%s", job->bands[i].why);
      return;
    }
    adler = adler32_combine(adler, job->bands[i].adler, (z_off_t)job->bands[i].raw);
    total += job->bands[i].zlen;
  }
  put_be32(ztail, (uint32_t)adler);
  put_be32(ihdr, (uint32_t)pic->width);
  put_be32(ihdr + 4, (uint32_t)pic->height);
  ihdr[8] = (unsigned char)pic->depth;
  ihdr[9] = pic->channels == 3 ? 2 : 0; /* RGB, gray */
  ihdr[10] = ihdr[11] = ihdr[12] = 0;   /* deflate, adaptive filters, no interlace */
  png_out(job, signature, sizeof(signature));
  png_chunk(job, "IHDR", ihdr, sizeof(ihdr));
  /* the stream, cut into IDAT chunks: each is written piece by piece with its CRC-32 */
  while (total > 0 && !job->err) {
    size_t len = total > APP_PNG_IDAT_BYTES ? APP_PNG_IDAT_BYTES : total, left = len;
    unsigned char head[8], tail[4];
    uLong crc = crc32(crc32(0L, Z_NULL, 0), (const Bytef *)"IDAT", 4);
    put_be32(head, (uint32_t)len);
    memcpy(head + 4, "IDAT", 4);
    png_out(job, head, 8);
    while (left > 0 && !job->err) {
      const unsigned char *seg = part < 0 ? zhead : part < job->nbands ? job->bands[part].z : ztail;
      size_t seglen = part < 0 ? sizeof(zhead) : part < job->nbands ? job->bands[part].zlen : 4;
      size_t take = seglen - at < left ? seglen - at : left;
      crc = crc32_z(crc, seg + at, take);
      png_out(job, seg + at, take);
      at += take;
      left -= take;
      if (at == seglen) {
        part++;
        at = 0;
      }
    }
    put_be32(tail, (uint32_t)crc);
    png_out(job, tail, 4);
    total -= len;
  }
  png_chunk(job, "IEND", NULL, 0);
}

/* One unit of app_out_png_many's parallel work: picture `pic` whole (band -1), or one band. */
typedef struct png_task {
  int pic, band;
} png_task;

int app_out_png_many(app_out *o, const app_png *pics, int n)
{
  png_job *jobs;
  png_task *tasks;
  png_band *bands;
  int status = DSG_OK, staged_count = 0, ntasks = 0, nbands = 0;
  if (n <= 0)
    return DSG_OK;
  for (int i = 0; i < n; i++) {
    const app_png *p = &pics[i];
    if (p->width < 1 || p->height < 1 || (p->channels != 1 && p->channels != 3) ||
        (p->depth != 8 && p->depth != 16) || !p->data ||
        (size_t)p->width * (size_t)p->channels * (size_t)(p->depth / 8) > (size_t)INT_MAX)
      return dsg_error_set(DSG_ERR_LIMIT,
                           "cannot write %s: a %d x %d PNG of %d channel(s) of %d bits is beyond "
                           "the PNG writer",
                           p->name, p->width, p->height, p->channels, p->depth);
  }
  /* the tasks: a picture for libpng, or one band of a picture deflated in bands */
  for (int i = 0; i < n; i++) {
    int rows;
    int nb = png_band_count(&pics[i], &rows);
    ntasks += nb ? nb : 1;
    nbands += nb;
  }
  jobs = calloc((size_t)n, sizeof(*jobs));
  tasks = malloc((size_t)ntasks * sizeof(*tasks));
  bands = nbands ? calloc((size_t)nbands, sizeof(*bands)) : NULL;
  if (!jobs || !tasks || (nbands && !bands)) {
    free(jobs);
    free(tasks);
    free(bands);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate %d PNG encoders", n);
  }
  for (int i = 0, t = 0, b = 0; i < n; i++) {
    int rows = 0;
    int nb = png_band_count(&pics[i], &rows);
    if (!nb) {
      tasks[t++] = (png_task){i, -1};
      continue;
    }
    jobs[i].bands = bands + b;
    jobs[i].nbands = nb;
    for (int k = 0; k < nb; k++, b++) {
      bands[b].y0 = k * rows;
      bands[b].y1 = k == nb - 1 ? pics[i].height : (k + 1) * rows;
      tasks[t++] = (png_task){i, k};
    }
  }
  /* staged one after the other (the set and the signal handler see each entry whole) */
  for (; staged_count < n && status == DSG_OK; staged_count++) {
    FILE *fp;
    status = app_out_open(o, pics[staged_count].name, &fp);
    if (status != DSG_OK)
      break;
    jobs[staged_count].file = &o->files[o->nfiles - 1];
  }
  if (status != DSG_OK) {
    for (int i = 0; i < staged_count; i++)
      discard(jobs[i].file);
    goto out;
  }
  /* the small pictures encoded, written and closed, the large ones' bands deflated, in parallel:
   * each task touches its own picture's entry or its own band only */
#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < ntasks; t++) {
    png_job *job = &jobs[tasks[t].pic];
    if (tasks[t].band >= 0) {
      deflate_band(&job->bands[tasks[t].band], &pics[tasks[t].pic],
                   tasks[t].band == job->nbands - 1);
      continue;
    }
    encode_png(job, &pics[tasks[t].pic]);
    if (job->err)
      discard(job->file);
    else
      job->err = flush_staged(job->file);
  }
  /* then the large pictures written from their bands and closed, in parallel */
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < n; i++) {
    if (!jobs[i].nbands)
      continue;
    encode_bands(&jobs[i], &pics[i]);
    if (jobs[i].err)
      discard(jobs[i].file);
    else
      jobs[i].err = flush_staged(jobs[i].file);
  }
  /* synced and closed here, one after the other (their writeback started as each was done) */
  for (int i = 0; i < n; i++)
    if (!jobs[i].err)
      jobs[i].err = settle(jobs[i].file);
  for (int i = 0; i < n && status == DSG_OK; i++) {
    if (!jobs[i].err)
      continue;
    if (jobs[i].err > 0)
      status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", jobs[i].file->final,
                             strerror(jobs[i].err));
    else
      status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': PNG encoder: %s", jobs[i].file->final,
                             jobs[i].why);
  }
out:
  for (int b = 0; b < nbands; b++)
    free(bands[b].z);
  free(bands);
  free(tasks);
  free(jobs);
  return status;
}

int app_out_png(app_out *o, const char *name, int width, int height, int comp,
                const unsigned char *data)
{
  const app_png pic = {name, width, height, comp, 8, data};
  return app_out_png_many(o, &pic, 1);
}

int app_out_png16(app_out *o, const char *name, int width, int height, const uint16_t *data)
{
  const app_png pic = {name, width, height, 1, 16, data};
  return app_out_png_many(o, &pic, 1);
}

/* Writes the iovecs whole to fd (partial writes and EINTR resumed): 0 or an errno. */
static int write_all(int fd, struct iovec *iov, int count)
{
  while (count > 0) {
    ssize_t w = writev(fd, iov, count);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return w < 0 ? errno : EIO;
    while (count > 0 && (size_t)w >= iov->iov_len) {
      w -= (ssize_t)iov->iov_len;
      iov++;
      count--;
    }
    if (count > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return 0;
}

/* The .npy header of an array of `count` elements of type `descr` ("f4", "i4", "f8") and shape
 * (magic, version, length, the dictionary padded with spaces to a multiple of 64 bytes with its
 * '\n') into buf (at least APP_NPY_HEADER_MAX bytes); returns its length. */
#define APP_NPY_HEADER_MAX 512
static size_t npy_header(char *buf, const char *descr, int ndim, const size_t *shape)
{
  char *header = buf + 10, dims[160] = "";
  int hl;
  const uint16_t one = 1;
  const char order = *(const unsigned char *)&one ? '<' : '>'; /* the data is written as is */
  for (int i = 0; i < ndim; i++) {
    size_t used = strlen(dims);
    /* "(a, b, c)"; one dimension keeps Python's trailing comma: "(a,)" */
    snprintf(dims + used, sizeof(dims) - used, "%zu%s", shape[i],
             i + 1 < ndim ? ", "
             : ndim == 1  ? ","
                          : "");
  }
  hl = snprintf(header, APP_NPY_HEADER_MAX - 10 - 64,
                "{'descr': '%c%s', 'fortran_order': False, 'shape': (%s), }", order, descr, dims);
  /* pad with spaces so that magic (6) + version (2) + length (2) + header + '\n' is a multiple of
   * 64 */
  while ((10 + hl + 1) % 64 != 0)
    header[hl++] = ' ';
  header[hl++] = '\n';
  memcpy(buf, "\x93NUMPY\x01\x00", 8);
  buf[8] = (char)(hl & 0xff);
  buf[9] = (char)(hl >> 8);
  return 10 + (size_t)hl;
}

static size_t npy_count(int ndim, const size_t *shape)
{
  size_t count = 1;
  for (int i = 0; i < ndim; i++)
    count *= shape[i];
  return count;
}

/* Writes header and data into staged file s in one system call (writev: the stream has nothing
 * buffered) and starts its writeback (flush_staged): 0, or an errno (the file is then dropped).
 * Touches s alone: the background writers run it beside the caller's own staging. */
static int npy_put(staged *s, const char *header, size_t header_len, const void *data, size_t bytes)
{
  struct iovec iov[2] = {{(void *)header, header_len}, {(void *)data, bytes}};
  int e = write_all(fileno(s->fp), iov, bytes > 0 ? 2 : 1);
  if (e) {
    discard(s);
    return e;
  }
  return flush_staged(s);
}

static int write_npy(app_out *o, const char *name, const char *descr, size_t elem, const void *data,
                     int ndim, const size_t *shape)
{
  char header[APP_NPY_HEADER_MAX];
  const size_t header_len = npy_header(header, descr, ndim, shape);
  staged *s;
  FILE *fp;
  int status, e;
  status = app_out_open(o, name, &fp);
  if (status != DSG_OK)
    return status;
  s = &o->files[o->nfiles - 1];
  e = npy_put(s, header, header_len, data, elem * npy_count(ndim, shape));
  if (!e)
    e = settle(s);
  if (e)
    return dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", s->final, strerror(e));
  return DSG_OK;
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

/* ---- arrays written in the background ---- */

/* One array of the writer: its staged file, header and bytes, and the errno its write met. */
typedef struct npy_entry {
  staged *file;
  char header[APP_NPY_HEADER_MAX];
  size_t header_len;
  const void *data;
  size_t bytes;
  int err;
} npy_entry;

/* Threads of a writer at most: the arrays are shared out among them (array i to thread i mod
 * their number), so that one's copy into the page cache overlaps another's wait for the disk */
#define APP_NPY_WRITERS 4

/* One thread of a writer: the arrays part, part + parts, ... */
typedef struct npy_part {
  struct app_out_writer *w;
  int part;
  pthread_t thread;
  int running; /* started (and to be joined) */
} npy_part;

struct app_out_writer {
  npy_entry *entries;
  int n;
  int parts;
  npy_part part[APP_NPY_WRITERS];
};

static void *writer_main(void *arg)
{
  npy_part *p = arg;
  app_out_writer *w = p->w;
  for (int i = p->part; i < w->n; i += w->parts)
    w->entries[i].err = npy_put(w->entries[i].file, w->entries[i].header, w->entries[i].header_len,
                                w->entries[i].data, w->entries[i].bytes);
  return NULL;
}

int app_out_npy_start(app_out *o, const app_npy *arrays, int n, app_out_writer **out)
{
  static const struct {
    const char *descr;
    size_t elem;
  } types[] = {{"f4", sizeof(float)}, {"f8", sizeof(double)}, {"i4", sizeof(int32_t)}};
  app_out_writer *w;
  int status = DSG_OK, staged_count = 0;

  *out = NULL;
  if (n <= 0)
    return DSG_OK;
  w = calloc(1, sizeof(*w));
  if (w)
    w->entries = calloc((size_t)n, sizeof(*w->entries));
  if (!w || !w->entries) {
    free(w);
    return dsg_error_set(DSG_ERR_NOMEM, "cannot allocate the writer of %d arrays", n);
  }
  w->n = n;
  /* staged one after the other on this thread (the set and the signal handler see each entry
   * whole) */
  for (; staged_count < n && status == DSG_OK; staged_count++) {
    const app_npy *a = &arrays[staged_count];
    npy_entry *e = &w->entries[staged_count];
    FILE *fp;
    if ((unsigned)a->type >= sizeof(types) / sizeof(types[0]) || a->ndim < 1 || a->ndim > 3) {
      status =
          dsg_error_set(DSG_ERR_INVALID, "cannot write %s: an array of type %d and %d dimensions",
                        a->name, (int)a->type, a->ndim);
      break;
    }
    status = app_out_open(o, a->name, &fp);
    if (status != DSG_OK)
      break;
    e->file = &o->files[o->nfiles - 1];
    e->header_len = npy_header(e->header, types[a->type].descr, a->ndim, a->shape);
    e->data = a->data;
    e->bytes = types[a->type].elem * npy_count(a->ndim, a->shape);
  }
  if (status != DSG_OK) {
    for (int i = 0; i < staged_count; i++)
      discard(w->entries[i].file);
    free(w->entries);
    free(w);
    return status;
  }
  w->parts = n < APP_NPY_WRITERS ? n : APP_NPY_WRITERS;
  for (int t = 0; t < w->parts; t++) {
    w->part[t].w = w;
    w->part[t].part = t;
    w->part[t].running = pthread_create(&w->part[t].thread, NULL, writer_main, &w->part[t]) == 0;
    if (!w->part[t].running) /* no thread to be had: that part written now, on this thread */
      writer_main(&w->part[t]);
  }
  *out = w;
  return DSG_OK;
}

int app_out_npy_wait(app_out_writer *w, int status)
{
  if (!w)
    return status;
  for (int t = 0; t < w->parts; t++)
    if (w->part[t].running)
      pthread_join(w->part[t].thread, NULL);
  /* synced and closed on this thread (their writeback started on the writers'); after the
   * caller's failure, dropped */
  for (int i = 0; i < w->n; i++) {
    if (w->entries[i].err)
      continue;
    if (status == DSG_OK)
      w->entries[i].err = settle(w->entries[i].file);
    else
      discard(w->entries[i].file);
  }
  for (int i = 0; i < w->n && status == DSG_OK; i++)
    if (w->entries[i].err)
      status = dsg_error_set(DSG_ERR_IO, "cannot write '%s': %s", w->entries[i].file->final,
                             strerror(w->entries[i].err));
  free(w->entries);
  free(w);
  return status;
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
