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
  char tmp[4096];
  if (path == NULL || path[0] == '\0') return profI_error(S, PROF_ERRARG, "trace: no path");
  prof_TraceInfo in;
  prof_traceinfo_init(&in);
  if (info != NULL) {
    size_t n = info->size != 0 && info->size < sizeof in ? info->size : sizeof in;
    memcpy(&in, info, n);
  }
  if (in.trace_name == NULL) in.trace_name = path;
  int rc = profI_make_parents(S, path);
  if (rc != PROF_OK) return rc;
  int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof tmp) return profI_error(S, PROF_ERRIO, "%s: path too long", path);
  FileSink fs = {.f = fopen(tmp, "wb"), .err = 0};
  if (fs.f == NULL) return profI_error(S, PROF_ERRIO, "%s: cannot write: %s", path, strerror(errno));
  if (ends_with(path, ".gz")) {
    profX_Gzip *g = profX_gzip_open(S, fs.f);
    rc = g == NULL ? PROF_ERRMEM : prof_write_chrome_trace(S, &in, profX_gzip_write, g);
    int zrc = profX_gzip_close(g, rc == PROF_OK);
    if (rc == PROF_OK || (rc == PROF_ERRIO && zrc != PROF_OK)) {
      char why[PROF_ERRMSG_SIZE];
      snprintf(why, sizeof why, "%s", prof_errmsg(S));
      if (zrc != PROF_OK) profI_error(S, zrc, "%s: %s", path, why);
      rc = zrc;
    }
  } else {
    rc = prof_write_chrome_trace(S, &in, file_write, &fs);
    if (rc == PROF_ERRIO && fs.err != 0)
      profI_error(S, PROF_ERRIO, "%s: cannot write: %s", path, strerror(fs.err));
  }
  if (fclose(fs.f) != 0 && rc == PROF_OK)
    rc = profI_error(S, PROF_ERRIO, "%s: cannot write: %s", path, strerror(errno));
  if (rc == PROF_OK && rename(tmp, path) != 0)
    rc = profI_error(S, PROF_ERRIO, "%s: cannot write: %s", path, strerror(errno));
  if (rc != PROF_OK) remove(tmp);
  return rc;
}
