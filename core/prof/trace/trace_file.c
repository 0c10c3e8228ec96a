/* trace_file.c — a trace written to a file atomically, gzip-compressed as it streams for ".gz". */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace_internal.h"

typedef struct FileSink {
  FILE *f;
  int err;                       /* errno of the first failed write */
} FileSink;

static int file_write(void *ud, const char *data, size_t len) {
  FileSink *fs = ud;
  if (fwrite(data, 1, len, fs->f) == len) return 0;
  fs->err = errno;
  return 1;
}

static int ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n >= m && strcmp(s + n - m, suffix) == 0;
}

int prof_write_chrome_trace_file(prof_State *S, const prof_TraceInfo *info, const char *path) {
  char shown[256];
  if (path == NULL || path[0] == '\0') return profI_error(S, PROF_ERRARG, "trace: no path");
  const char *p = profI_short_path(path, shown, sizeof shown);
  prof_TraceInfo in;
  prof_traceinfo_init(&in);
  if (info != NULL) {
    size_t n = info->size != 0 && info->size < sizeof in ? info->size : sizeof in;
    memcpy(&in, info, n);
  }
  if (in.trace_name == NULL) in.trace_name = path;
  /* the same staging as every output: a unique temporary renamed over a regular file at the end,
     a device or FIFO written in place, nothing left behind on failure */
  prof_Staged *st = profI_alloc(S, sizeof *st);
  if (st == NULL) return profI_error(S, PROF_ERRMEM, "%s: out of memory", p);
  int fd, rc = profI_out_open(S, path, st, &fd);
  if (rc != PROF_OK) goto end;
  FileSink fs = {.f = fdopen(fd, "wb"), .err = 0};
  if (fs.f == NULL) {
    rc = profI_error(S, PROF_ERRIO, "%s: cannot write: %s", p, strerror(errno));
    close(fd);
    prof_abandon_file(S, st);
    goto end;
  }
  if (ends_with(path, ".gz")) {
    profX_Gzip *g = profX_gzip_open(S, fs.f);
    rc = g == NULL ? PROF_ERRMEM : prof_write_chrome_trace(S, &in, profX_gzip_write, g);
    int zrc = profX_gzip_close(g, rc == PROF_OK);
    if (rc == PROF_OK || (rc == PROF_ERRIO && zrc != PROF_OK)) {
      char why[PROF_ERRMSG_SIZE];
      snprintf(why, sizeof why, "%s", prof_errmsg(S));
      if (zrc != PROF_OK) profI_error(S, zrc, "%s: %s", p, why);
      rc = zrc;
    }
  } else {
    rc = prof_write_chrome_trace(S, &in, file_write, &fs);
    if (rc == PROF_ERRIO && fs.err != 0)
      profI_error(S, PROF_ERRIO, "%s: cannot write: %s", p, strerror(fs.err));
  }
  if (fclose(fs.f) != 0 && rc == PROF_OK)
    rc = profI_error(S, PROF_ERRIO, "%s: cannot write: %s", p, strerror(errno));
  if (rc == PROF_OK) rc = in.keep_existing ? prof_commit_new_file(S, path, st) : prof_commit_file(S, path, st);
  else prof_abandon_file(S, st);
end:
  profI_free(S, st, sizeof *st);
  return rc;
}
