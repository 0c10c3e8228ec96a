/* fuzz_config.c — libFuzzer harness for the config parser: any bytes as a config file and --set overrides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "prof.h"

/*
** Input: the config file's text, then optionally a NUL and up to 8 NUL-separated overrides
** ("a.b=value"). prof_config_load reads a path, so the text goes to one file per process (its name
** holds the pid: parallel workers never share it). The parser must return PROF_OK with a config,
** or an error code with a non-empty message; either way nothing leaks (ASan checks).
*/
int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  /* one session for every input: the parser only allocates through it and sets its message, and
     prof_new's clock calibration would cost more than a parse */
  static prof_State *S;
  static char path[64];
  if (S == NULL && (S = prof_new(NULL, NULL)) == NULL) abort();
  if (path[0] == '\0')
    snprintf(path, sizeof path, "%s/profrun-fuzz-config-%d.json",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (int)getpid());
  const unsigned char *nul = memchr(data, '\0', size);
  size_t text_len = nul != NULL ? (size_t)(nul - data) : size;
  FILE *f = fopen(path, "wb");
  if (f == NULL) abort();
  if (text_len > 0 && fwrite(data, 1, text_len, f) != text_len) abort();
  fclose(f);
  /* the overrides: NUL-terminated copies of the pieces after the text */
  char *rest = NULL;
  const char *ov[8];
  int32_t n = 0;
  if (nul != NULL) {
    size_t rlen = size - text_len - 1;
    rest = malloc(rlen + 1);
    if (rest == NULL) abort();
    memcpy(rest, nul + 1, rlen);
    rest[rlen] = '\0';
    for (char *p = rest; n < 8 && p <= rest + rlen; p += strlen(p) + 1) ov[n++] = p;
  }
  prof_Config *cfg = NULL;
  int rc = prof_config_load(S, path, ov, n, &cfg);
  if (rc == PROF_OK && cfg == NULL) abort();                      /* success gives a config */
  if (rc != PROF_OK && (cfg != NULL || prof_errmsg(S)[0] == '\0')) abort();  /* failure says why */
  prof_config_free(S, cfg);
  free(rest);
  return 0;
}
