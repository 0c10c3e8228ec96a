/* atomic_file.c — writing an output file so that a failed run never leaves half of it behind. */
#define _DEFAULT_SOURCE   /* realpath, fchmod */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

#define SHORT_HEAD 60     /* a long path in a message keeps its first and last characters */
#define SHORT_TAIL 100
#define TMP_NAME_MAX 200  /* of the target's name in the temporary's (NAME_MAX is 255) */
#define TMP_TRIES 1000

const char *profI_short_path(const char *path, char *buf, size_t size) {
  size_t n = strlen(path);
  if (n <= SHORT_HEAD + SHORT_TAIL + 3 || size < SHORT_HEAD + SHORT_TAIL + 32) return path;
  /* the reason after the path must survive PROF_ERRMSG_SIZE: cut the middle, say how much */
  snprintf(buf, size, "%.*s...(%zu characters)...%s", SHORT_HEAD, path, n - SHORT_HEAD - SHORT_TAIL,
           path + n - SHORT_TAIL);
  return buf;
}

/* profI_error with the (shortened) path first: "PATH: what". */
static int path_error(prof_State *S, const char *path, const char *what, int err) {
  char b[SHORT_HEAD + SHORT_TAIL + 64];
  const char *p = profI_short_path(path, b, sizeof b);
  if (err == 0) return profI_error(S, PROF_ERRIO, "%s: %s", p, what);
  return profI_error(S, PROF_ERRIO, "%s: %s: %s", p, what, strerror(err));
}

/* Creates the directories above path, as DeepSpeed does for its output_file; the topmost one it
   created goes to made ("" when none), so that a failed run can remove them again. */
static int make_parents(prof_State *S, const char *path, char *made, size_t made_size) {
  char dir[PROF_PATH_SIZE];
  size_t n = strlen(path);
  if (made != NULL) made[0] = '\0';
  if (n >= sizeof dir) return path_error(S, path, "path too long", ENAMETOOLONG);
  memcpy(dir, path, n + 1);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/' || p[-1] == '/') continue;
    *p = '\0';
    if (mkdir(dir, 0777) == 0) {
      if (made != NULL && made[0] == '\0') snprintf(made, made_size, "%s", dir);
    } else {
      int e = errno;
      struct stat st;
      if (e != EEXIST || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        char b[SHORT_HEAD + SHORT_TAIL + 64], what[PROF_ERRMSG_SIZE];
        snprintf(what, sizeof what, "cannot create directory %s",
                 profI_short_path(dir, b, sizeof b));
        if (e == EEXIST) snprintf(what + strlen(what), sizeof what - strlen(what),
                                  ": it exists and is not a directory");
        if (made != NULL && made[0] != '\0') {
          prof_Staged drop = {.tmp = "", .existed = 0};
          snprintf(drop.target, sizeof drop.target, "%s", path);
          snprintf(drop.made, sizeof drop.made, "%s", made);
          prof_discard_file(&drop);
          made[0] = '\0';
        }
        return path_error(S, path, what, e == EEXIST ? 0 : e);
      }
    }
    *p = '/';
  }
  return PROF_OK;
}

int profI_make_parents(prof_State *S, const char *path) {
  return make_parents(S, path, NULL, 0);
}

/* The pid in a temporary's name ".<name>.profrun-<pid>-<n>", or 0 when name is not one. */
static long tmp_pid(const char *name) {
  const char *mark = NULL;
  for (const char *p = strstr(name, ".profrun-"); p != NULL; p = strstr(p + 1, ".profrun-"))
    mark = p;
  if (name[0] != '.' || mark == NULL) return 0;
  char *end;
  long pid = strtol(mark + 9, &end, 10);
  if (end == mark + 9 || *end != '-' || pid <= 0) return 0;
  const char *n = end + 1;
  if (*n == '\0') return 0;
  for (; *n; n++)
    if (*n < '0' || *n > '9') return 0;
  return pid;
}

/* Removes the temporaries in dir left by runs that are gone (SIGKILL cannot be caught), whatever
   output they were for; a live process's temporaries, this one's included, are left alone. */
static void sweep_leftovers(const char *dir) {
  DIR *d = opendir(dir);
  if (d == NULL) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    long pid = tmp_pid(e->d_name);
    if (pid == 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    char full[PROF_PATH_SIZE];
    if (snprintf(full, sizeof full, "%s/%s", dir, e->d_name) < (int)sizeof full) unlink(full);
  }
  closedir(d);
}

static int write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    data += n;
    len -= (size_t)n;
  }
  return 0;
}

/* Where path leads: into st->target (a symbolic link resolved), st->existed; *direct when it is a
   device or FIFO to write in place. Refuses what must never be replaced nor written. */
static int classify(prof_State *S, const char *path, prof_Staged *st, int *direct) {
  struct stat ls, fs;
  *direct = 0;
  snprintf(st->target, sizeof st->target, "%s", path);
  if (lstat(path, &ls) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) return PROF_OK;   /* make_parents says which part */
    return path_error(S, path, "cannot write", errno);
  }
  fs = ls;
  if (S_ISLNK(ls.st_mode)) {
    if (stat(path, &fs) != 0)
      return path_error(S, path, "is a symbolic link to a missing file", 0);
    /* renaming over the link would replace the link: replace the file it names instead */
    if (S_ISREG(fs.st_mode) && realpath(path, st->target) == NULL)
      return path_error(S, path, "cannot resolve the symbolic link", errno);
  }
  if (S_ISREG(fs.st_mode)) {
    st->existed = 1;
    return PROF_OK;
  }
  if (S_ISCHR(fs.st_mode) || S_ISFIFO(fs.st_mode)) {
    *direct = 1;
    return PROF_OK;
  }
  if (S_ISDIR(fs.st_mode)) return path_error(S, path, "is a directory", 0);
  if (S_ISBLK(fs.st_mode))
    return path_error(S, path, "is a block device (refused: writing would overwrite it)", 0);
  return path_error(S, path, "is not a regular file, device or FIFO", 0);
}

void prof_set_output_watch(prof_State *S, const prof_OutputWatch *watch) {
  S->watch = watch != NULL ? *watch : (prof_OutputWatch){NULL, NULL};
}

static void tell(prof_State *S, prof_OutputEvent event, const prof_Staged *st) {
  if (S->watch.fn != NULL && st->tmp[0] != '\0') S->watch.fn(S->watch.ud, event, st);
}

void prof_abandon_file(prof_State *S, const prof_Staged *st) {
  prof_discard_file(st);
  tell(S, PROF_OUTPUT_DONE, st);
}

/* Opens the temporary for st->target, O_EXCL under a name unique to this process. */
static int open_tmp(prof_State *S, const char *path, prof_Staged *st, mode_t mode, int *fd) {
  char dir[PROF_PATH_SIZE], prefix[TMP_NAME_MAX + 16];
  const char *slash = strrchr(st->target, '/');
  const char *name = slash ? slash + 1 : st->target;
  if (slash == NULL) snprintf(dir, sizeof dir, ".");
  else if (slash == st->target) snprintf(dir, sizeof dir, "/");
  else snprintf(dir, sizeof dir, "%.*s", (int)(slash - st->target), st->target);
  if (*name == '\0') return path_error(S, path, "names a directory (it ends with '/')", 0);
  snprintf(prefix, sizeof prefix, ".%.*s.profrun-", TMP_NAME_MAX, name);
  sweep_leftovers(dir);
  for (unsigned k = 0; k < TMP_TRIES; k++) {
    int n = snprintf(st->tmp, sizeof st->tmp, "%s/%s%ld-%u", dir, prefix, (long)getpid(), k);
    if (n < 0 || (size_t)n >= sizeof st->tmp) {
      st->tmp[0] = '\0';
      return path_error(S, path, "path too long", ENAMETOOLONG);
    }
    *fd = open(st->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (*fd >= 0) {
      if (st->existed) (void)fchmod(*fd, mode);   /* a replaced file keeps its permissions */
      tell(S, PROF_OUTPUT_STAGED, st);
      return PROF_OK;
    }
    if (errno != EEXIST) break;
  }
  int e = errno;
  st->tmp[0] = '\0';
  return path_error(S, path, "cannot write", e);
}

/* Opens a device or FIFO to write in place. A FIFO whose reader is still starting (`profrun … &
   cat fifo`) gets a second; O_NONBLOCK so that one nobody reads fails instead of hanging. */
static int open_direct(prof_State *S, const char *path, int *fd) {
  for (int tries = 0;; tries++) {
    *fd = open(path, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (*fd >= 0 || errno != ENXIO || tries == 100) break;
    struct timespec ten_ms = {0, 10 * 1000 * 1000};
    nanosleep(&ten_ms, NULL);
  }
  if (*fd < 0) {
    int e = errno;
    if (e == ENXIO) return path_error(S, path, "cannot write: nothing reads from it", 0);
    return path_error(S, path, "cannot write", e);
  }
  (void)fcntl(*fd, F_SETFL, fcntl(*fd, F_GETFL) & ~O_NONBLOCK);
  return PROF_OK;
}

/* Prepares path for writing: *fd is a fresh temporary (st->tmp) beside a regular or missing
   target, its parents made; for a device or FIFO st->tmp is "" and *fd is -1 (open_direct). */
static int prepare(prof_State *S, const char *path, prof_Staged *st, int *fd) {
  int direct;
  memset(st, 0, sizeof *st);
  *fd = -1;
  if (path == NULL || path[0] == '\0') return profI_error(S, PROF_ERRIO, "empty output path");
  if (strlen(path) >= PROF_PATH_SIZE) {
    char b[SHORT_HEAD + SHORT_TAIL + 64];
    return profI_error(S, PROF_ERRIO, "%s: path too long (%zu characters; the limit is %d)",
                       profI_short_path(path, b, sizeof b), strlen(path), PROF_PATH_SIZE - 1);
  }
  int rc = classify(S, path, st, &direct);
  if (rc != PROF_OK || direct) return rc;
  if (path[strlen(path) - 1] == '/')
    return path_error(S, path, "names a directory (it ends with '/')", 0);
  struct stat fs;
  mode_t mode = st->existed && stat(st->target, &fs) == 0 ? fs.st_mode & 07777 : 0666;
  rc = make_parents(S, st->target, st->made, sizeof st->made);
  if (rc == PROF_OK) rc = open_tmp(S, path, st, mode, fd);
  if (rc != PROF_OK) prof_discard_file(st);
  return rc;
}

int profI_out_open(prof_State *S, const char *path, prof_Staged *st, int *fd) {
  int rc = prepare(S, path, st, fd);
  if (rc == PROF_OK && *fd < 0) rc = open_direct(S, path, fd);
  return rc;
}

int profI_out_write(prof_State *S, const char *path, int fd, const char *data, size_t len) {
  int e = write_all(fd, data, len);
  return e == 0 ? PROF_OK : path_error(S, path, "cannot write", e);
}

int profI_out_close(prof_State *S, const char *path, int fd) {
  return close(fd) == 0 ? PROF_OK : path_error(S, path, "cannot write", errno);
}

int prof_stage_file(prof_State *S, const char *path, const char *data, size_t len,
                    prof_Staged *st) {
  int fd;
  /* a device or FIFO is not even opened now (a FIFO's reader would see the end of its input) */
  int rc = prepare(S, path, st, &fd);
  if (rc != PROF_OK || fd < 0) return rc;
  rc = profI_out_write(S, path, fd, data, len);
  int crc = profI_out_close(S, path, fd);
  if (rc == PROF_OK) rc = crc;
  if (rc != PROF_OK) prof_abandon_file(S, st);
  return rc;
}

int prof_commit_file(prof_State *S, const char *path, const prof_Staged *st) {
  if (st->tmp[0] == '\0') return PROF_OK;
  if (rename(st->tmp, st->target) == 0) {
    tell(S, PROF_OUTPUT_DONE, st);
    return PROF_OK;
  }
  int e = errno;
  prof_abandon_file(S, st);
  return path_error(S, path, "cannot write", e);
}

int prof_commit_new_file(prof_State *S, const char *path, const prof_Staged *st) {
  if (st->tmp[0] == '\0') return PROF_OK;
  /* link fails with EEXIST where a file is (atomically, whoever made it); a file system without
     hard links gets the name reserved by O_EXCL, then the rename over the empty reservation */
  int rc = link(st->tmp, st->target) == 0 ? 0 : errno;
  if (rc == EPERM || rc == ENOTSUP || rc == EOPNOTSUPP || rc == EMLINK) {
    int fd = open(st->target, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    rc = fd >= 0 ? 0 : errno;
    if (fd >= 0) close(fd);
    if (rc == 0) return prof_commit_file(S, path, st);
  } else if (rc == 0) {
    unlink(st->tmp);
    tell(S, PROF_OUTPUT_DONE, st);
    return PROF_OK;
  }
  prof_abandon_file(S, st);
  if (rc == EEXIST) {
    char b[SHORT_HEAD + SHORT_TAIL + 64];
    return profI_error(S, PROF_ERREXIST, "%s: exists (kept)", profI_short_path(path, b, sizeof b));
  }
  return path_error(S, path, "cannot write", rc);
}

void prof_discard_file(const prof_Staged *st) {
  char dir[PROF_PATH_SIZE];
  if (st->tmp[0] != '\0') unlink(st->tmp);
  if (st->made[0] == '\0') return;
  size_t n = strlen(st->target);
  if (n >= sizeof dir) return;
  memcpy(dir, st->target, n + 1);
  /* the target's parents, deepest first, up to the topmost one this run made */
  for (;;) {
    size_t p = n;
    while (p > 0 && dir[p - 1] != '/') p--;
    if (p <= 1) return;                          /* no parent left, or the root */
    p--;                                         /* dir[p] is the slash */
    while (p > 0 && dir[p - 1] == '/') p--;      /* "a//b" */
    if (p == 0) return;
    dir[p] = '\0';
    if (rmdir(dir) != 0 || strcmp(dir, st->made) == 0) return;
    n = p;
  }
}

int prof_write_file_atomic(prof_State *S, const char *path, const char *data, size_t len) {
  prof_Staged st;
  int fd;
  int rc = profI_out_open(S, path, &st, &fd);
  if (rc != PROF_OK) return rc;
  rc = profI_out_write(S, path, fd, data, len);
  int crc = profI_out_close(S, path, fd);
  if (rc == PROF_OK) rc = crc;
  if (rc == PROF_OK) return prof_commit_file(S, path, &st);
  prof_abandon_file(S, &st);
  return rc;
}
