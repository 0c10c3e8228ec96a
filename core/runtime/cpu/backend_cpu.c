/* backend_cpu.c — the cpu device: host memory from calloc, OpenBLAS and plain C kernels. */
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "cpu.h"

/* the memory functions of host memory need no backend state */
#pragma GCC diagnostic ignored "-Wunused-parameter"

static void *cpu_alloc(const pr_Backend *be, size_t nbytes) { return calloc(nbytes, 1); }
static void cpu_free(const pr_Backend *be, void *p, size_t nbytes) { free(p); }

static int cpu_copy(const pr_Backend *be, pr_Runtime *rt, void *dst, const void *src, size_t n) {
  if (n > 0) memcpy(dst, src, n);
  return 0;
}

static int cpu_zero(const pr_Backend *be, pr_Runtime *rt, void *p, size_t n) {
  if (n > 0) memset(p, 0, n);
  return 0;
}

static const pr_Kernels kernels = {
    /* dense algebra, copies, reductions */
    .mm = pr_cpu_mm, .batched_mm = pr_cpu_batched_mm, .linear = pr_cpu_linear,
    .binary = pr_cpu_binary, .copy_into = pr_cpu_copy_into, .contiguous = pr_cpu_contiguous,
    .cast = pr_cpu_cast, .join = pr_cpu_join, .triangle = pr_cpu_triangle,
    .dropout = pr_cpu_dropout, .accumulate = pr_cpu_accumulate, .reduce = pr_cpu_reduce,
    .reduce_backward = pr_cpu_reduce_backward,
    /* pointwise */
    .unary = pr_cpu_unary, .unary_backward = pr_cpu_unary_backward, .softmax = pr_cpu_softmax,
    .softmax_backward = pr_cpu_softmax_backward, .prelu = pr_cpu_prelu,
    .prelu_backward = pr_cpu_prelu_backward, .extremum_backward = pr_cpu_extremum_backward,
    .where = pr_cpu_where,
    /* convolution, pooling, resampling */
    .conv = pr_cpu_conv, .conv_input_grad = pr_cpu_conv_input_grad,
    .conv_weight_grad = pr_cpu_conv_weight_grad, .pool = pr_cpu_pool,
    .pool_backward = pr_cpu_pool_backward, .interpolate = pr_cpu_interpolate,
    .interpolate_backward = pr_cpu_interpolate_backward,
    /* embedding, norms, losses, attention */
    .embedding = pr_cpu_embedding, .embedding_check = pr_cpu_embedding_check,
    .embedding_backward = pr_cpu_embedding_grad, .norm = pr_cpu_norm,
    .norm_backward = pr_cpu_norm_grad, .class_targets_check = pr_cpu_class_targets_check,
    .class_loss = pr_cpu_class_loss, .class_loss_backward = pr_cpu_class_loss_backward,
    .mse = pr_cpu_mse, .mse_backward = pr_cpu_mse_backward, .attn_softmax = pr_cpu_attn_softmax,
    .attn_softmax_backward = pr_cpu_attn_softmax_backward,
    /* optimizers, recurrent layers */
    .sgd = pr_cpu_sgd, .adam = pr_cpu_adam, .rnn_forward = pr_cpu_rnn,
    .rnn_backward = pr_cpu_rnn_grad};

static const pr_Backend cpu = {
    .name = "cpu", .prof_device = PROF_DEVICE_CPU, .holds_values = 1, .alloc = cpu_alloc,
    .free = cpu_free, .to_host = cpu_copy, .from_host = cpu_copy, .copy = cpu_copy,
    .zero = cpu_zero, .k = &kernels};

const pr_Backend *pr_backend_cpu(void) { return &cpu; }
