/* bench_trace.c — trace export throughput (events/s) and size (bytes/event), plain JSON and gzip. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
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

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
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
  double t_mem[RUNS], t_plain[RUNS], t_gz[RUNS];
  int64_t bytes = 0;
  for (int r = 0; r < RUNS; r++) {
    bytes = 0;
    int64_t t0 = prof_now_ns();
    int rc = prof_write_chrome_trace(S, NULL, count_bytes, &bytes);
    int64_t t1 = prof_now_ns();
    rc |= prof_write_chrome_trace_file(S, NULL, plain);
    int64_t t2 = prof_now_ns();
    rc |= prof_write_chrome_trace_file(S, NULL, gz);
    int64_t t3 = prof_now_ns();
    if (rc != PROF_OK) {
      fprintf(stderr, "bench_trace: %s\n", prof_errmsg(S));
      return 1;
    }
    t_mem[r] = (double)(t1 - t0);
    t_plain[r] = (double)(t2 - t1);
    t_gz[r] = (double)(t3 - t2);
  }
  qsort(t_mem, RUNS, sizeof(double), cmp);
  qsort(t_plain, RUNS, sizeof(double), cmp);
  qsort(t_gz, RUNS, sizeof(double), cmp);
  long gz_bytes = file_size(gz);
  printf("trace export, %lld events (medians of %d): writer alone %.2f M events/s; "
         "plain file %.2f M events/s (target >= 3), %.1f bytes/event; "
         "gzip file %.2f M events/s (target >= 1), %.1f bytes/event\n",
         (long long)n, RUNS, n / t_mem[RUNS / 2] * 1e3, n / t_plain[RUNS / 2] * 1e3,
         (double)bytes / (double)n, n / t_gz[RUNS / 2] * 1e3, (double)gz_bytes / (double)n);
  remove(plain);
  remove(gz);
  rmdir(dir);
  prof_close(S);
  return 0;
}
