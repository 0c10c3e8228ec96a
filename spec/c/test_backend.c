/* test_backend.c — a third device defined in a test: counting kernels over cpu's run models. */
#include <stdlib.h>

#include "runtime.h"
#include "t.h"

/* {====================== the counting backend ======================} */

enum {
#define KERNEL_ID(name, params, args) K_##name,
  PR_KERNEL_LIST(KERNEL_ID)
#undef KERNEL_ID
  K_COUNT
};

typedef struct Counting {
  pr_Backend be;
  pr_Kernels k;
  int64_t calls[K_COUNT];
  int64_t allocs, frees, bytes_allocated, bytes_freed;
} Counting;

/* Kernels receive no backend pointer (cpu's need none), so the wrappers find their counts here;
   one test at a time sets it. */
static Counting *counting;

#define WRAP(name, params, args)                                                               \
  static int count_##name params {                                                             \
    counting->calls[K_##name]++;                                                               \
    return pr_backend_cpu()->k->name args;                                                     \
  }
PR_KERNEL_LIST(WRAP)
#undef WRAP

static void *count_alloc(const pr_Backend *be, size_t nbytes) {
  Counting *c = be->ud;
  c->allocs++;
  c->bytes_allocated += (int64_t)nbytes;
  return calloc(nbytes, 1);
}

static void count_free(const pr_Backend *be, void *p, size_t nbytes) {
  Counting *c = be->ud;
  if (p == NULL) return;
  c->frees++;
  c->bytes_freed += (int64_t)nbytes;
  free(p);
}

static void counting_init(Counting *c) {
  memset(c, 0, sizeof *c);
  const pr_Backend *cpu = pr_backend_cpu();
  c->be = *cpu;                /* host memory: cpu's copies work unchanged */
  c->be.name = "counting";
  c->be.ud = c;
  c->be.alloc = count_alloc;
  c->be.free = count_free;
#define ENTRY(name, params, args) c->k.name = count_##name;
  PR_KERNEL_LIST(ENTRY)
#undef ENTRY
  c->be.k = &c->k;
  counting = c;
}

/* {====================== helpers ======================} */

/* Deterministic values: element i of a tensor is a small irrational-looking number. */
static pr_Tensor *values(pr_Runtime *rt, int ndim, const int64_t *shape, int device, double seed,
                         int requires_grad) {
  double v[64];
  int64_t n = 1;
  for (int i = 0; i < ndim; i++) n *= shape[i];
  for (int64_t i = 0; i < n && i < 64; i++) v[i] = sin(seed + 0.7 * (double)i) * 0.5;
  pr_Tensor *t = pr_tensor_from(rt, ndim, shape, v, NULL, PROF_F32, device);
  if (t != NULL && requires_grad) t->flags |= PR_T_REQUIRES_GRAD;
  return t;
}

static int same_bits(const pr_Tensor *a, const pr_Tensor *b) {
  if (a == NULL || b == NULL || pr_numel(a) != pr_numel(b) || !pr_is_contiguous(a) ||
      !pr_is_contiguous(b))
    return 0;
  return memcmp(pr_f32(a), pr_f32(b), sizeof(float) * (size_t)pr_numel(a)) == 0;
}

/* {====================== an MLP, forward and backward ======================} */

typedef struct Mlp {
  pr_Tensor *x, *w1, *b1, *w2, *b2, *loss;
} Mlp;

/* loss = sum(linear(relu(linear(x, w1, b1)), w2, b2)), then its backward. */
static int mlp_run(pr_Runtime *rt, int device, Mlp *m) {
  int64_t xs[2] = {4, 3}, w1s[2] = {5, 3}, b1s[1] = {5}, w2s[2] = {2, 5}, b2s[1] = {2};
  m->x = values(rt, 2, xs, device, 0.1, 0);
  m->w1 = values(rt, 2, w1s, device, 1.3, 1);
  m->b1 = values(rt, 1, b1s, device, 2.9, 1);
  m->w2 = values(rt, 2, w2s, device, 4.1, 1);
  m->b2 = values(rt, 1, b2s, device, 5.7, 1);
  pr_Tensor *h = pr_linear(rt, m->x, m->w1, m->b1);
  pr_Tensor *a = h ? pr_unary(rt, PROF_OP_RELU, h, 0) : NULL;
  pr_Tensor *y = a ? pr_linear(rt, a, m->w2, m->b2) : NULL;
  m->loss = y ? pr_reduce(rt, PROF_OP_SUM, y, 0, NULL, 0, 0) : NULL;
  pr_tensor_release(h);
  pr_tensor_release(a);
  pr_tensor_release(y);
  if (m->loss == NULL) return PR_ERR;
  return pr_backward(rt, m->loss, NULL, 0);
}

static void mlp_release(Mlp *m) {
  pr_tensor_release(m->x);
  pr_tensor_release(m->w1);
  pr_tensor_release(m->b1);
  pr_tensor_release(m->w2);
  pr_tensor_release(m->b2);
  pr_tensor_release(m->loss);
}

/* What the session's op events (buffered since prof_start) allocated and freed, and the last. */
typedef struct Watch {
  int64_t ops, allocated, freed;
  prof_Event last;
} Watch;

static Watch watched(prof_State *S) {
  Watch w = {0};
  prof_snapshot(S);
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if (e.kind != PROF_EVENT_OP) continue;
    w.ops++;
    w.allocated += e.bytes_allocated;
    w.freed += e.bytes_freed;
    w.last = e;
  }
  return w;
}

/* The last op event named name (the runtime's name, before torch's spelling). */
static prof_Event op_named(prof_State *S, const char *name) {
  prof_Event found = {0};
  prof_snapshot(S);
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if (e.kind == PROF_EVENT_OP && e.name != NULL && strcmp(e.name, name) == 0) found = e;
  }
  return found;
}

static void test_mlp_counting(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  Counting c;
  counting_init(&c);
  int dev = pr_device_register(&rt, &c.be);
  T_CHECK(dev > 0);
  T_EQ_INT(pr_device_parse(&rt, "counting"), dev);
  prof_State *S = prof_new(NULL, NULL);
  T_CHECK(S != NULL && prof_set_event_capacity(S, 1 << 16) == PROF_OK && prof_start(S) == PROF_OK);
  rt.rec = S;
  Mlp m = {0};
  T_EQ_INT(mlp_run(&rt, dev, &m), 0);
  /*
  ** Kernel calls, by hand. Forward: linear twice, relu once (unary), sum once (reduce).
  ** Backward, from the root: the implicit gradient 1 is built on the host (no kernel).
  **  - sum: the gradient spread back to y's shape is a reshape and an expand (views) and a
  **    contiguous copy: 1 cast.
  **  - linear 2 (a [4, 5] -> y [4, 2]): da = g·W2 is a matmul (1 batched_mm), dW2 = gᵀ·a an mm
  **    (1 batched_mm; the transposed view and rows are views), db2 = sum over rows (1 reduce).
  **  - relu: 1 unary_backward.
  **  - linear 1: x needs no gradient, so dW1 (1 batched_mm) and db1 (1 reduce) only.
  **  Every leaf gets one gradient: no accumulate.
  ** Totals: linear 2, unary 1, reduce 1 + 2 = 3, cast 1, batched_mm 3, unary_backward 1.
  */
  T_EQ_INT(c.calls[K_linear], 2);
  T_EQ_INT(c.calls[K_unary], 1);
  T_EQ_INT(c.calls[K_reduce], 3);
  T_EQ_INT(c.calls[K_cast], 1);
  T_EQ_INT(c.calls[K_batched_mm], 3);
  T_EQ_INT(c.calls[K_unary_backward], 1);
  T_EQ_INT(c.calls[K_accumulate], 0);
  T_EQ_INT(c.calls[K_mm], 0);
  int64_t total = 0;
  for (int k = 0; k < K_COUNT; k++) total += c.calls[k];
  T_EQ_INT(total, 2 + 1 + 3 + 1 + 3 + 1);

  /* the same model on cpu gives the same bits */
  Mlp ref = {0};
  int cpu = pr_device_parse(&rt, "cpu");
  T_EQ_INT(mlp_run(&rt, cpu, &ref), 0);
  T_CHECK(same_bits(m.loss, ref.loss));
  T_CHECK(same_bits(m.w1->grad, ref.w1->grad));
  T_CHECK(same_bits(m.b1->grad, ref.b1->grad));
  T_CHECK(same_bits(m.w2->grad, ref.w2->grad));
  T_CHECK(same_bits(m.b2->grad, ref.b2->grad));
  T_CHECK(c.calls[K_linear] == 2);   /* the cpu run did not go through the counting kernels */
  mlp_release(&ref);

  /* every block the counting allocator handed out comes back; the runtime agrees */
  mlp_release(&m);
  T_CHECK(c.allocs > 0);
  T_EQ_INT(c.frees, c.allocs);
  T_EQ_INT(c.bytes_freed, c.bytes_allocated);
  T_EQ_INT(rt.live_bytes, 0);
  /* the op events saw allocations (outputs and their temporaries) and no more than were made */
  Watch w = watched(S);
  T_CHECK(w.ops > 0);
  T_CHECK(w.allocated > 0 && w.allocated <= 2 * c.bytes_allocated);
  prof_close(S);
}

/* {====================== a conv net on the counting device ======================} */

static void test_conv_counting(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  Counting c;
  counting_init(&c);
  int dev = pr_device_register(&rt, &c.be), cpu = pr_device_parse(&rt, "cpu");
  pr_Tensor *out[2] = {NULL, NULL}, *gw[2] = {NULL, NULL};
  int devs[2] = {dev, cpu};
  for (int r = 0; r < 2; r++) {
    int64_t xs[4] = {1, 2, 5, 5}, ws[4] = {3, 2, 3, 3};
    pr_Tensor *x = values(&rt, 4, xs, devs[r], 0.3, 0), *w = values(&rt, 4, ws, devs[r], 2.2, 1);
    pr_ConvArgs a = {.nsp = 2, .stride = {1, 1, 1}, .padding = {1, 1, 0},
                     .dilation = {1, 1, 1}, .groups = 1};
    pr_PoolArgs p = {.nsp = 2, .kernel = {2, 2, 1}, .stride = {2, 2, 1},
                     .dilation = {1, 1, 1}};
    pr_Tensor *y = pr_conv(&rt, x, w, NULL, &a);
    pr_Tensor *z = y ? pr_pool(&rt, PROF_OP_MAX_POOL, y, &p) : NULL;
    pr_Tensor *s = z ? pr_reduce(&rt, PROF_OP_SUM, z, 0, NULL, 0, 0) : NULL;
    T_CHECK(s != NULL);
    T_EQ_INT(s ? pr_backward(&rt, s, NULL, 0) : PR_ERR, 0);
    out[r] = z;
    gw[r] = w->grad ? pr_tensor_retain(w->grad) : NULL;
    pr_tensor_release(x);
    pr_tensor_release(w);
    pr_tensor_release(y);
    pr_tensor_release(s);
  }
  /*
  ** By hand, on the counting device only: forward conv 1, pool 1 (max, with its argmax
  ** indices), sum 1 (reduce). Backward: sum's spread is 1 cast (contiguous copy); the pool's
  ** backward 1 pool_backward; the conv's weight gradient 1 conv_weight_grad (x needs none, so
  ** no conv_input_grad).
  */
  T_EQ_INT(c.calls[K_conv], 1);
  T_EQ_INT(c.calls[K_pool], 1);
  T_EQ_INT(c.calls[K_reduce], 1);
  T_EQ_INT(c.calls[K_cast], 1);
  T_EQ_INT(c.calls[K_pool_backward], 1);
  T_EQ_INT(c.calls[K_conv_weight_grad], 1);
  T_EQ_INT(c.calls[K_conv_input_grad], 0);
  T_CHECK(same_bits(out[0], out[1]));
  T_CHECK(same_bits(gw[0], gw[1]));
  for (int r = 0; r < 2; r++) {
    pr_tensor_release(out[r]);
    pr_tensor_release(gw[r]);
  }
  T_EQ_INT(c.frees, c.allocs);
  T_EQ_INT(c.bytes_freed, c.bytes_allocated);
  T_EQ_INT(rt.live_bytes, 0);
}

/* {====================== values between devices ======================} */

static void test_cross_device(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  Counting c;
  counting_init(&c);
  int dev = pr_device_register(&rt, &c.be), cpu = pr_device_parse(&rt, "cpu");
  int64_t s[2] = {3, 4};
  pr_Tensor *x = values(&rt, 2, s, cpu, 0.5, 0);
  pr_Tensor *xt = pr_transpose(&rt, x, 0, 1);                /* a strided view */
  pr_Tensor *y = xt ? pr_to(&rt, xt, -1, dev) : NULL;        /* cpu -> counting */
  pr_Tensor *z = y ? pr_to(&rt, y, PROF_F64, cpu) : NULL;    /* counting -> cpu, as float64 */
  pr_Tensor *ref = xt ? pr_contiguous(&rt, xt) : NULL;
  T_CHECK(y != NULL && y->device == dev && same_bits(y, ref));
  T_CHECK(z != NULL && z->dtype == PROF_F64 && z->device == cpu);
  for (int64_t i = 0; z != NULL && ref != NULL && i < 12; i++)
    T_CHECK(((const double *)z->storage->data)[i] == (double)pr_f32(ref)[i]);
  /* the values crossed by the backends' host copies; no counting kernel ran */
  int64_t total = 0;
  for (int k = 0; k < K_COUNT; k++) total += c.calls[k];
  T_EQ_INT(total, 0);
  T_EQ_INT(c.allocs, 1);
  pr_tensor_release(x);
  pr_tensor_release(xt);
  pr_tensor_release(y);
  pr_tensor_release(z);
  pr_tensor_release(ref);
  T_EQ_INT(c.frees, 1);
  T_EQ_INT(rt.live_bytes, 0);
}

/* {====================== op events: bytes allocated and counts ======================} */

static void test_op_event_bytes(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  int cpu = pr_device_parse(&rt, "cpu");
  prof_State *S = prof_new(NULL, NULL);
  T_CHECK(S != NULL && prof_set_event_capacity(S, 1 << 16) == PROF_OK && prof_start(S) == PROF_OK);
  int64_t xs[2] = {4, 3}, ws[2] = {5, 3}, bs[1] = {5};
  pr_Tensor *x = values(&rt, 2, xs, cpu, 0.1, 0), *w = values(&rt, 2, ws, cpu, 1.3, 0);
  pr_Tensor *b = values(&rt, 1, bs, cpu, 2.9, 0);
  rt.rec = S;
  pr_Tensor *y = pr_linear(&rt, x, w, b);
  T_CHECK(y != NULL);
  /* torch's three events: linear over t (a mark) and addmm, the GEMM that allocates the output
     [4, 5] float32, 4·5·4 = 80 bytes (x, w, b contiguous: the kernel needs no temporary) */
  Watch wa = watched(S);
  T_EQ_INT(wa.ops, 3);
  T_EQ_INT(wa.last.op_kind, PROF_OP_LINEAR);
  T_EQ_INT(wa.last.bytes_allocated, 0);
  T_EQ_INT(wa.allocated, 80);
  T_EQ_INT(wa.freed, 0);
  T_CHECK(wa.last.correlation > 0);
  prof_Event addmm = op_named(S, "addmm");
  T_EQ_INT(addmm.bytes_allocated, 80);
  T_CHECK(addmm.correlation > 0 && addmm.correlation != wa.last.correlation);
  /* counts as before ops became events (exact conventions), on the GEMM's event: MACs 4·5·3 =
     60, FLOPs 2·60 + the bias adds 4·5 = 140; linear's keeps none, so the events sum to them */
  T_EQ_INT(addmm.macs, 60);
  T_EQ_INT(addmm.flops, 140);
  T_EQ_INT(wa.last.macs, 0);
  T_EQ_INT(wa.last.flops, 0);
  T_EQ_INT(op_named(S, "t").flops, 0);
  prof_Counts tot;
  prof_totals(S, PROF_PHASE_FORWARD, &tot);   /* as of watched()'s snapshot */
  T_EQ_INT(tot.macs, 60);
  T_EQ_INT(tot.flops, 140);
  T_EQ_INT(tot.calls, 1);                      /* the parts are events only: one op counted */
  /* relu of y over clamp_min: 20 elements, one comparison each; 80 bytes of output */
  pr_Tensor *r = pr_unary(&rt, PROF_OP_RELU, y, 0);
  wa = watched(S);
  T_EQ_INT(wa.ops, 5);
  T_EQ_INT(wa.last.flops, 0);
  T_EQ_INT(op_named(S, "clamp_min").bytes_allocated, 80);
  T_EQ_INT(op_named(S, "clamp_min").flops, 20);
  /* a kernel failure after the output exists closes the op and frees what it allocated; after
     more failures than ops can nest, ops are still open for memory */
  int64_t is[1] = {3}, iv[3] = {1, 2, 3};
  pr_Tensor *ints = pr_tensor_from(&rt, 1, is, NULL, iv, PROF_I64, cpu);
  for (int k = 0; k < PROF_OP_NEST_MAX + 4; k++)
    T_CHECK(pr_unary(&rt, PROF_OP_TANH, ints, 0) == NULL);
  pr_Tensor *r2 = pr_unary(&rt, PROF_OP_RELU, y, 0);
  T_EQ_INT(op_named(S, "clamp_min").bytes_allocated, 80);
  wa = watched(S);
  rt.rec = NULL;
  /* without a recorder nothing is recorded */
  int64_t before = wa.ops;
  pr_Tensor *r3 = pr_unary(&rt, PROF_OP_RELU, y, 0);
  T_EQ_INT(watched(S).ops, before);
  pr_tensor_release(r3);
  pr_tensor_release(r2);
  pr_tensor_release(ints);
  pr_tensor_release(r);
  pr_tensor_release(y);
  pr_tensor_release(x);
  pr_tensor_release(w);
  pr_tensor_release(b);
  T_EQ_INT(rt.live_bytes, 0);
  prof_close(S);
}

/* {====================== the registry ======================} */

static void test_registry(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  char buf[128];
  T_EQ_STR(pr_device_list(&rt, buf, sizeof buf), "meta, cpu or cuda");
  T_EQ_INT(pr_device_parse(&rt, "tpu"), -1);
  int64_t shape[1] = {2};
  /* an unavailable cuda refuses tensors with its reason: the build's (no nvcc), or the driver
     probe's (spec/cli_usage_spec.lua checks that text where no driver is installed) */
  const pr_Backend *cu = pr_device_backend(&rt, pr_device_parse(&rt, "cuda"));
#ifndef PR_HAVE_CUDA
  T_EQ_STR(cu->unavailable, "device 'cuda' is not available in this build; use 'meta' or 'cpu'");
#endif
  if (cu->unavailable != NULL) {
    T_CHECK(pr_tensor_new(&rt, 1, shape, PROF_F32, pr_device_parse(&rt, "cuda")) == NULL);
    T_EQ_STR(rt.err, cu->unavailable);
  }
  pr_Tensor *m = pr_tensor_new(&rt, 1, shape, PROF_F32, pr_device_parse(&rt, "meta"));
  T_CHECK(m != NULL && m->storage == NULL && !pr_holds_values(m));
  pr_tensor_release(m);
  T_EQ_INT(rt.live_bytes, 0);
}

/* Writes over depth KiB of the stack below the caller. */
__attribute__((noinline)) static void clobber_stack(int depth) {
  volatile char buf[1024];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = 'x';
  if (depth > 0) clobber_stack(depth - 1);
  (void)buf[0];
}

/* A fused backward's event is named "<forward>_backward"; the name must stay readable after the
   backward returned (it once pointed into the backward's stack frame). */
static void test_fused_backward_names_outlive_the_op(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  int cpu = pr_device_parse(&rt, "cpu");
  prof_State *S = prof_new(NULL, NULL);
  T_CHECK(S != NULL && prof_set_event_capacity(S, 256) == PROF_OK && prof_start(S) == PROF_OK);
  int64_t xs[2] = {2, 4}, last[1] = {4};
  pr_Tensor *x = values(&rt, 2, xs, cpu, 0.3, 1);
  rt.rec = S;
  rt.grad_enabled = 1;
  pr_Tensor *y = pr_layer_norm(&rt, x, 1, last, NULL, NULL, 1e-5);
  pr_Tensor *loss = y ? pr_reduce(&rt, PROF_OP_SUM, y, 0, NULL, 0, 0) : NULL;
  T_CHECK(loss != NULL && pr_backward(&rt, loss, NULL, 0) == 0);
  clobber_stack(16);                   /* write over the stack the backward ran on */
  prof_stop(S);
  int found = 0;
  for (int64_t i = 0; i < prof_event_count(S); i++) {
    prof_Event e = {.size = sizeof e};
    prof_event_at(S, i, &e);
    if (e.kind == PROF_EVENT_OP && strcmp(e.name, "layer_norm_backward") == 0) found++;
  }
  T_EQ_INT(found, 1);
  rt.rec = NULL;
  pr_tensor_release(loss);
  pr_tensor_release(y);
  pr_tensor_release(x);
  prof_close(S);
}

/* {====================== a failing kernel ======================} */

/* Kernels that fail as a device would (a launch error, a dtype it lacks): each says why. */
static int fail_triangle(pr_Runtime *rt, pr_Tensor *out, int64_t diagonal, int upper) {
  (void)out, (void)diagonal, (void)upper;
  return pr_error(rt, "triangle kernel failed");
}

static int fail_sgd(pr_Runtime *rt, float *p, const float *grad, float *buf, int64_t n, int fresh,
                    const pr_SgdArgs *a) {
  (void)p, (void)grad, (void)buf, (void)n, (void)fresh, (void)a;
  return pr_error(rt, "sgd kernel failed");
}

static int fail_attn_softmax(pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask, int causal,
                             double dropout_p, pr_Tensor *A) {
  (void)scores, (void)mask, (void)causal, (void)dropout_p, (void)A;
  return pr_error(rt, "softmax kernel failed");
}

static int fail_from_host(const pr_Backend *be, pr_Runtime *rt, void *dev, const void *host,
                          size_t n) {
  (void)be, (void)dev, (void)host, (void)n;
  return pr_error(rt, "a copy from the host on counting: device lost");
}

/* Every kernel returns its failure: the op that ran it fails at once, with the kernel's message
   (a kernel could once fail silently, its message kept for whichever op checked next). */
static void test_failing_kernels_fail_their_op(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  Counting c;
  counting_init(&c);
  c.k.triangle = fail_triangle;
  c.k.sgd = fail_sgd;
  c.k.attn_softmax = fail_attn_softmax;
  int dev = pr_device_register(&rt, &c.be);
  T_CHECK(dev > 0);
  int64_t sq[2] = {3, 3};
  pr_Tensor *x = values(&rt, 2, sq, dev, 0.3, 0);
  T_CHECK(x != NULL);
  rt.err[0] = '\0';
  T_CHECK(pr_triangle(&rt, x, 0, 1) == NULL);
  T_EQ_STR(rt.err, "triangle kernel failed");

  pr_Tensor *g = values(&rt, 2, sq, dev, 0.9, 0);
  pr_OptimSlot slot = {.param = x, .grad = g, .step = 1};
  pr_SgdArgs sgd = {.lr = 0.1};
  rt.err[0] = '\0';
  T_EQ_INT(pr_sgd_step(&rt, 1, &slot, &sgd), PR_ERR);
  T_EQ_STR(rt.err, "sgd kernel failed");

  int64_t qs[3] = {1, 2, 4};
  pr_Tensor *q = values(&rt, 3, qs, dev, 1.1, 0);
  pr_SdpaArgs sd = {.scale = NAN};
  rt.err[0] = '\0';
  T_CHECK(pr_sdpa(&rt, q, q, q, &sd) == NULL);
  T_EQ_STR(rt.err, "softmax kernel failed");
  /* a failed copy: the op says what it was doing, then the backend's reason */
  c.be.from_host = fail_from_host;
  rt.err[0] = '\0';
  T_CHECK(values(&rt, 2, sq, dev, 0.5, 0) == NULL);
  T_EQ_STR(rt.err, "could not copy values to counting: a copy from the host on counting: device lost");
  /* every tensor the failed ops made is freed */
  pr_tensor_release(q);
  pr_tensor_release(g);
  pr_tensor_release(x);
  T_EQ_INT(c.allocs, c.frees);
}

int main(void) {
  T_RUN(test_mlp_counting);
  T_RUN(test_conv_counting);
  T_RUN(test_cross_device);
  T_RUN(test_op_event_bytes);
  T_RUN(test_fused_backward_names_outlive_the_op);
  T_RUN(test_registry);
  T_RUN(test_failing_kernels_fail_their_op);
  return T_DONE();
}
