/* atomic_file.c — writing an output file so that a failed run never leaves half of it behind. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "prof_internal.h"

/* Creates the directories above path, as DeepSpeed does for its output_file. */
int profI_make_parents(prof_State *S, const char *path) {
  char dir[4096];
  size_t n = strlen(path);
  if (n >= sizeof dir) return profI_error(S, PROF_ERRIO, "%s: path too long", path);
  memcpy(dir, path, n + 1);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
      return profI_error(S, PROF_ERRIO, "%s: cannot create directory %s: %s", path, dir,
                         strerror(errno));
    *p = '/';
  }
  return PROF_OK;
}

int prof_write_file_atomic(prof_State *S, const char *path, const char *data, size_t len) {
  char tmp[4096];
  if (profI_make_parents(S, path) != PROF_OK) return PROF_ERRIO;
  int n = snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
  if (n < 0 || (size_t)n >= sizeof tmp)
    return profI_error(S, PROF_ERRIO, "%s: path too long", path);
  FILE *f = fopen(tmp, "wb");
  if (f == NULL) return profI_error(S, PROF_ERRIO, "%s: cannot write: %s", path, strerror(errno));
  int ok = fwrite(data, 1, len, f) == len;
  ok = (fclose(f) == 0) && ok;
  if (!ok || rename(tmp, path) != 0) {
    int e = errno;
    remove(tmp);
    return profI_error(S, PROF_ERRIO, "%s: cannot write: %s", path, strerror(e));
  }
  return PROF_OK;
}
