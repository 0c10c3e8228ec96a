/* mlp.c — a plain C host (no Lua): a small MLP inference on several threads, profiled through prof.h. */
#include <prof.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
** Net = fc1 Linear(16, 32) -> act ReLU -> fc2 Linear(32, 8) -> head Scale (y = 0.5 x + 1, a custom
** op: its counts are given, not derived). THREADS workers each run CALLS forwards of a BATCH x 16
** input, with their own loops, on the one session: the tree is registered once, and what the
** threads record merges into it. Writes OUTDIR/report.txt (DeepSpeed's text), OUTDIR/profile.json
** and OUTDIR/trace.json (Chrome / Perfetto); prints one line per module.
*/
enum { IN = 16, HID = 32, OUT = 8, BATCH = 4, THREADS = 4, CALLS = 3 };

typedef struct Net {
  prof_State *S;
  prof_ModuleId net, fc1, act, fc2, head;
  float w1[HID][IN], b1[HID], w2[OUT][HID], b2[OUT];
} Net;

typedef struct Worker {
  Net *net;
  int index;
  double checksum;
} Worker;

static prof_Operand shape2(int64_t a, int64_t b) { return (prof_Operand){2, PROF_F32, {a, b}}; }
static prof_Operand shape1(int64_t a) { return (prof_Operand){1, PROF_F32, {a}}; }

/* y[BATCH][n_out] = x[BATCH][n_in] W^T + b, recorded as a linear op with its bias. */
static void linear(Net *n, int n_in, int n_out, const float *w, const float *b, const float *x,
                   float *y) {
  for (int r = 0; r < BATCH; r++)
    for (int o = 0; o < n_out; o++) {
      float acc = b[o];
      for (int i = 0; i < n_in; i++) acc += x[r * n_in + i] * w[o * n_in + i];
      y[r * n_out + o] = acc;
    }
  prof_Op op = {.kind = PROF_OP_LINEAR, .flags = PROF_OPF_BIAS, .ninputs = 3};
  op.in[0] = shape2(BATCH, n_in);
  op.in[1] = shape2(n_out, n_in);
  op.in[2] = shape1(n_out);
  op.out = shape2(BATCH, n_out);
  if (prof_op_record(n->S, &op) != PROF_OK) fprintf(stderr, "mlp: %s\n", prof_errmsg(n->S));
}

static void forward(Net *n, const float *x, float *out) {
  float h[BATCH * HID], y[BATCH * OUT];
  prof_module_enter(n->S, n->net);
  prof_module_enter(n->S, n->fc1);
  linear(n, IN, HID, &n->w1[0][0], n->b1, x, h);
  prof_module_exit(n->S, n->fc1);

  prof_module_enter(n->S, n->act);
  for (int i = 0; i < BATCH * HID; i++) h[i] = h[i] > 0 ? h[i] : 0;
  prof_Op relu = {.kind = PROF_OP_RELU, .ninputs = 1};
  relu.in[0] = relu.out = shape2(BATCH, HID);
  prof_op_record(n->S, &relu);
  prof_module_exit(n->S, n->act);

  prof_module_enter(n->S, n->fc2);
  linear(n, HID, OUT, &n->w2[0][0], n->b2, h, y);
  prof_module_exit(n->S, n->fc2);

  /* a custom op: the host knows its cost (one multiply and one add per element) */
  prof_module_enter(n->S, n->head);
  for (int i = 0; i < BATCH * OUT; i++) out[i] = 0.5f * y[i] + 1.0f;
  prof_Op scale = {.kind = PROF_OP_CUSTOM, .name = "scale", .flops = 2 * BATCH * OUT,
                   .bytes_read = 4 * BATCH * OUT, .bytes_written = 4 * BATCH * OUT};
  prof_op_record(n->S, &scale);
  prof_module_exit(n->S, n->head);
  prof_module_exit(n->S, n->net);
}

static void *work(void *arg) {
  Worker *w = arg;
  float x[BATCH * IN], out[BATCH * OUT];
  for (int c = 0; c < CALLS; c++) {
    for (int i = 0; i < BATCH * IN; i++) x[i] = (float)((i + w->index + c) % 7) / 7.0f - 0.5f;
    prof_range_push(w->net->S, "forward");
    forward(w->net, x, out);
    prof_range_pop(w->net->S);
    for (int i = 0; i < BATCH * OUT; i++) w->checksum += out[i];
  }
  return NULL;
}

static int write_file(void *ud, const char *data, size_t len) {
  return fwrite(data, 1, len, ud) == len ? 0 : 1;
}

/* fn(S, ..., write_file, f) into dir/name; returns 0 on success. */
static int write_to(prof_State *S, const char *dir, const char *name, int json) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL) return perror(path), 1;
  prof_RunInfo info;
  prof_runinfo_init(&info);
  int rc = json ? prof_write_profile_json(S, &info, write_file, f)
                : prof_write_deepspeed_report(S, NULL, write_file, f);
  if (fclose(f) != 0 || rc != PROF_OK) return fprintf(stderr, "mlp: %s: %s\n", path, prof_errmsg(S)), 1;
  return 0;
}

static int build(Net *n) {
  prof_State *S = n->S;
  for (int o = 0; o < HID; o++) {
    n->b1[o] = 0.01f * (float)o;
    for (int i = 0; i < IN; i++) n->w1[o][i] = (float)((o * IN + i) % 5) / 10.0f - 0.2f;
  }
  for (int o = 0; o < OUT; o++) {
    n->b2[o] = -0.02f * (float)o;
    for (int i = 0; i < HID; i++) n->w2[o][i] = (float)((o + i) % 3) / 10.0f - 0.1f;
  }
  int64_t p1 = HID * IN + HID, p2 = OUT * HID + OUT;
  if (prof_module_add(S, PROF_NO_MODULE, "", "Net", p1 + p2, &n->net) != PROF_OK ||
      prof_module_add(S, n->net, "fc1", "Linear", p1, &n->fc1) != PROF_OK ||
      prof_module_add(S, n->net, "act", "ReLU", 0, &n->act) != PROF_OK ||
      prof_module_add(S, n->net, "fc2", "Linear", p2, &n->fc2) != PROF_OK ||
      prof_module_add(S, n->net, "head", "Scale", 0, &n->head) != PROF_OK)
    return 1;
  return 0;
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  static Net net;
  Worker workers[THREADS];
  pthread_t tid[THREADS];
  int rc = 1;
  net.S = prof_new(NULL, NULL);
  if (net.S == NULL) return fprintf(stderr, "mlp: out of memory\n"), 1;
  if (build(&net) != 0 || prof_set_event_capacity(net.S, 256) != PROF_OK || prof_start(net.S) != PROF_OK) {
    fprintf(stderr, "mlp: %s\n", prof_errmsg(net.S));
    goto end;
  }
  for (int t = 0; t < THREADS; t++) {
    workers[t] = (Worker){&net, t, 0.0};
    if (pthread_create(&tid[t], NULL, work, &workers[t]) != 0) return fprintf(stderr, "mlp: pthread_create\n"), 1;
  }
  double checksum = 0;
  for (int t = 0; t < THREADS; t++) {
    pthread_join(tid[t], NULL);
    checksum += workers[t].checksum;
  }
  if (prof_stop(net.S) != PROF_OK || prof_check(net.S) != PROF_OK) {
    fprintf(stderr, "mlp: %s\n", prof_errmsg(net.S));
    goto end;
  }
  prof_ModuleId ids[5];
  int32_t n = prof_module_preorder(net.S, ids, 5);
  for (int32_t i = 0; i < n && i < 5; i++) {
    prof_ModuleInfo info = {.size = sizeof info};
    char path[64];
    prof_module_info(net.S, ids[i], &info);
    prof_module_path(net.S, ids[i], path, sizeof path);
    const prof_Counts *f = &info.phase[PROF_PHASE_FORWARD];
    printf("%-5s %-6s calls %lld macs %lld flops %lld\n", i == 0 ? "(net)" : path, info.type,
           (long long)f->calls, (long long)f->macs, (long long)f->flops);
  }
  printf("checksum %.4f\n", checksum);
  if (write_to(net.S, dir, "report.txt", 0) || write_to(net.S, dir, "profile.json", 1)) goto end;
  char trace[4096];
  snprintf(trace, sizeof trace, "%s/trace.json", dir);
  if (prof_write_chrome_trace_file(net.S, NULL, trace) != PROF_OK) {
    fprintf(stderr, "mlp: %s\n", prof_errmsg(net.S));
    goto end;
  }
  rc = 0;
end:
  prof_close(net.S);
  return rc;
}
