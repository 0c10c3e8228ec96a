/* clock.c — the host's monotonic nanosecond clock. */
#define _POSIX_C_SOURCE 200809L
#include <time.h>

#include "prof_internal.h"

int64_t profI_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t prof_now_ns(void) { return profI_now_ns(); }
