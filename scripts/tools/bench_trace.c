/* bench_trace.c — trace export throughput (events/s) and size (bytes/event), plain JSON and gzip. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "prof.h"

#define EVENTS 1000000
#define RUNS 3

/* Counts bytes only: the writer's own cost, without a disk. */
static int count_bytes(void *ud, const char *data, size_t len) {
  (void)data;
  *(int64_t *)ud += (int64_t)len;
  return 0;
}

static long file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/*
** A training-loop-like mix, 10 events per iteration: module Net { range "step" { module
** layers.N (Linear) { 4 ops, one of them allocating and freeing } }, a counter }.
*/
static void record(prof_State *S, prof_ModuleId root, prof_ModuleId *layers, int n_layers) {
  static char block[64];
  for (int64_t i = 0; i < EVENTS / 10; i++) {
    prof_module_enter(S, root);
    prof_range_push(S, "step");
    prof_module_enter(S, layers[i % n_layers]);
    for (int k = 0; k < 4; k++) {
      prof_Op op = {.kind = PROF_OP_CUSTOM, .macs = 4096, .flops = 8192 + k, .bytes_read = 1024,
                    .name = k == 0 ? "aten::linear" : k == 1 ? "aten::relu" : "aten::add"};
      prof_op_begin(S, &op);
      if (k == 0) {
        prof_mem_alloc(S, PROF_DEVICE_CPU, block, 4096);
        prof_mem_free(S, PROF_DEVICE_CPU, block, 4096);
      }
      prof_op_end(S, &op);
    }
    prof_module_exit(S, layers[i % n_layers]);
    prof_counter(S, "tokens", i);
    prof_range_pop(S);
    prof_module_exit(S, root);
  }
}

/* The process's CPU time: on a machine shared with other jobs, wall time also counts theirs. */
static int64_t cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double med(double *v) {
  qsort(v, RUNS, sizeof *v, cmp);
  return v[RUNS / 2];
}

int main(void) {
  prof_State *S = prof_new(NULL, NULL);
  prof_ModuleId root, layers[8];
  prof_module_add(S, PROF_NO_MODULE, "", "Net", 0, &root);
  for (int i = 0; i < 8; i++) {
    char name[32];
    snprintf(name, sizeof name, "layers.%d", i);
    prof_module_add(S, root, name, "Linear", 0, &layers[i]);
  }
  prof_set_event_capacity(S, EVENTS + 16);
  prof_set_memory_events(S, 1);
  prof_start(S);
  record(S, root, layers, 8);
  prof_stop(S);
  int64_t n = prof_event_count(S);
  char dir[] = "/tmp/bench_trace.XXXXXX", plain[64], gz[64];
  if (mkdtemp(dir) == NULL) return 1;
  snprintf(plain, sizeof plain, "%s/t.pt.trace.json", dir);
  snprintf(gz, sizeof gz, "%s/t.pt.trace.json.gz", dir);
  /* [0] wall, [1] CPU time, of: the writer into a byte counter, a plain file, a gzip file */
  double t[3][2][RUNS];
  int64_t bytes = 0;
  const char *paths[3] = {NULL, plain, gz};
  for (int r = 0; r < RUNS; r++) {
    for (int k = 0; k < 3; k++) {
      if (k == 0) bytes = 0;
      else remove(paths[k]);   /* replacing the last run's file would time the unlink of 170 MB */
      int64_t w0 = prof_now_ns(), c0 = cpu_ns();
      int rc = k == 0 ? prof_write_chrome_trace(S, NULL, count_bytes, &bytes)
                      : prof_write_chrome_trace_file(S, NULL, paths[k]);
      t[k][0][r] = (double)(prof_now_ns() - w0);
      t[k][1][r] = (double)(cpu_ns() - c0);
      if (rc != PROF_OK) {
        fprintf(stderr, "bench_trace: %s\n", prof_errmsg(S));
        return 1;
      }
    }
  }
  long sizes[3] = {(long)bytes, file_size(plain), file_size(gz)};
  const char *what[3] = {"writer alone", "plain file  ", "gzip file   "};
  const char *target[3] = {"", " (target >= 3)", " (target >= 1)"};
  printf("trace export of %lld events (medians of %d), M events/s by wall time / by CPU time:\n",
         (long long)n, RUNS);
  for (int k = 0; k < 3; k++)
    printf("  %s %.2f / %.2f%s, %.1f bytes/event\n", what[k], n / med(t[k][0]) * 1e3,
           n / med(t[k][1]) * 1e3, target[k],
           (double)sizes[k] / (double)n);
  remove(plain);
  remove(gz);
  rmdir(dir);
  prof_close(S);
  return 0;
}
