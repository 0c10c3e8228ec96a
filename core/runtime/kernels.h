/* kernels.h — the kernel table every backend fills; included by runtime.h, never on its own. */
#ifndef PR_KERNELS_H
#define PR_KERNELS_H

/*
** One entry per op kind (and per fused backward). Kernels are pure: they compute into tensors the
** op layer allocated, never record, never attach gradients and never call ops. Tensor operands
** live on the backend's device; raw pointers (norms, losses, attention, RNNs) point into its
** storage. The contracts are the cpu kernels' (cpu.h). Every kernel takes the runtime and returns
** 0, or PR_ERR with the runtime's message set where it failed (pr_error): one way to fail, so a
** device whose launches are asynchronous reports at the kernel that found the error, never at a
** later one. A shapes-only backend fills every entry with a no-op that returns 0.
**
** PR_KERNEL_LIST(X) lists them as X(name, params, args) so a backend that wraps another (a
** counting one in a spec) can generate its entries.
*/
#define PR_KERNEL_LIST(X)                                                                        \
  X(mm, (pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,           \
               float alpha, float beta), (rt, a, b, out, alpha, beta))                           \
  X(batched_mm, (pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,   \
                       float alpha, float beta), (rt, a, b, out, alpha, beta))                   \
  X(linear, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,   \
                   pr_Tensor *out), (rt, x, w, b, out))                                          \
  X(binary, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,     \
                   double s, int scalar_first, pr_Tensor *out),                                  \
    (rt, kind, a, b, s, scalar_first, out))                                                      \
  X(copy_into, (pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src), (rt, dst, src))     \
  X(contiguous, (pr_Runtime *rt, const pr_Tensor *t, pr_Tensor *c), (rt, t, c))             \
  X(cast, (pr_Runtime *rt, const pr_Tensor *src, pr_Tensor *dst), (rt, src, dst))          \
  X(join, (pr_Runtime *rt, int n, const pr_Tensor *const *xs, int d, int stacked,          \
                 pr_Tensor *out), (rt, n, xs, d, stacked, out))                                  \
  X(triangle, (pr_Runtime *rt, pr_Tensor *out, int64_t diagonal, int upper),               \
    (rt, out, diagonal, upper))                                                                  \
  X(dropout, (pr_Runtime *rt, const pr_Tensor *x, double p, pr_Tensor *mask,               \
                    pr_Tensor *out), (rt, x, p, mask, out))                                      \
  X(accumulate, (pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src), (rt, dst, src))    \
  X(reduce, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const int *reduced,     \
                   double correction, pr_Tensor *out), (rt, kind, x, reduced, correction, out))  \
  X(reduce_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,                \
                           const pr_Tensor *stat, const int *reduced, double dof, pr_Tensor *e), \
    (rt, kind, x, stat, reduced, dof, e))                                                        \
  X(unary, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,      \
                  pr_Tensor *out), (rt, kind, x, a, b, out))                                     \
  X(unary_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,                 \
                           const pr_Tensor *y, const pr_Tensor *g, double a, double b,           \
                           pr_Tensor *gx), (rt, kind, x, y, g, a, b, gx))                        \
  X(softmax, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int d, pr_Tensor *out),\
    (rt, kind, x, d, out))                                                                       \
  X(softmax_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *y,               \
                             const pr_Tensor *g, int d, pr_Tensor *gx), (rt, kind, y, g, d, gx)) \
  X(prelu, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, pr_Tensor *out),       \
    (rt, x, w, out))                                                                             \
  X(prelu_backward, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,               \
                           const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gwx),                   \
    (rt, x, w, g, gx, gwx))                                                                      \
  X(extremum_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,              \
                              const pr_Tensor *b, double s, const pr_Tensor *g, pr_Tensor *ga,   \
                              pr_Tensor *gb), (rt, kind, a, b, s, g, ga, gb))                    \
  X(where, (pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b, \
                  double sa, double sb, pr_Tensor *out), (rt, cond, a, b, sa, sb, out))          \
  X(conv, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,     \
                 const pr_ConvGeom *g, pr_Tensor *out), (rt, x, w, b, g, out))                   \
  X(conv_input_grad, (pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,             \
                            const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx),            \
    (rt, gy, w, b, g, gx))                                                                       \
  X(conv_weight_grad, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,            \
                             const pr_ConvGeom *g, pr_Tensor *gw), (rt, x, gy, g, gw))           \
  X(pool, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolGeom *g,     \
                 pr_Tensor *out, pr_Tensor *indices), (rt, kind, x, g, out, indices))            \
  X(pool_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *gy,                 \
                          const pr_Tensor *indices, const pr_PoolGeom *g, pr_Tensor *gx),        \
    (rt, kind, gy, indices, g, gx))                                                              \
  X(interpolate, (pr_Runtime *rt, const pr_Tensor *x, const pr_ResampleGeom *g,            \
                        pr_Tensor *out), (rt, x, g, out))                                        \
  X(interpolate_backward, (pr_Runtime *rt, const pr_Tensor *gy, const pr_ResampleGeom *g,  \
                                 pr_Tensor *gx), (rt, gy, g, gx))                                \
  X(embedding, (pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *w, pr_Tensor *out), \
    (rt, idx, w, out))                                                                           \
  X(embedding_check, (pr_Runtime *rt, const pr_Tensor *idx, int64_t vocab), (rt, idx, vocab))\
  X(embedding_backward, (pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *g,         \
                              int64_t pad, pr_Tensor *gw), (rt, idx, g, pad, gw))                \
  X(norm, (pr_Runtime *rt, const pr_NormPlan *p, int input_stats, pr_Tensor *run_mean,     \
                 pr_Tensor *run_var, double momentum, const pr_Tensor *xc, const pr_Tensor *w,   \
                 const pr_Tensor *b, pr_Tensor *mean, pr_Tensor *rstd, pr_Tensor *out),          \
    (rt, p, input_stats, run_mean, run_var, momentum, xc, w, b, mean, rstd, out))               \
  X(norm_backward, (pr_Runtime *rt, const pr_NormPlan *p, const pr_Tensor *x,              \
                         const pr_Tensor *g, const pr_Tensor *w, const pr_Tensor *mean,          \
                         const pr_Tensor *rstd, int input_stats, pr_Tensor *gx, pr_Tensor *gw,   \
                         pr_Tensor *gb), (rt, p, x, g, w, mean, rstd, input_stats, gx, gw, gb))  \
  X(class_targets_check, (pr_Runtime *rt, const char *name, const pr_Tensor *t,            \
                               int64_t classes, int64_t ignore), (rt, name, t, classes, ignore)) \
  X(class_loss, (pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *x,               \
                      const pr_Tensor *t, const pr_Tensor *w, pr_Tensor *logp, pr_Tensor *out,   \
                      double *divisor), (rt, p, x, t, w, logp, out, divisor))                    \
  X(class_loss_backward, (pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *logp,    \
                               const pr_Tensor *t, const pr_Tensor *w, const pr_Tensor *g,       \
                               double divisor, pr_Tensor *gx, pr_Tensor *gt),                    \
    (rt, p, logp, t, w, g, divisor, gx, gt))                                                     \
  X(mse, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *t, int reduction,           \
                pr_Tensor *d, pr_Tensor *out), (rt, x, t, reduction, d, out))                    \
  X(mse_backward, (pr_Runtime *rt, const pr_Tensor *d, const pr_Tensor *g, int reduction,  \
                        pr_Tensor *gd, pr_Tensor *neg), (rt, d, g, reduction, gd, neg))          \
  X(attn_softmax, (pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask, int causal,   \
                        double dropout_p, pr_Tensor *A), (rt, scores, mask, causal, dropout_p, A))  \
  X(attn_softmax_backward, (pr_Runtime *rt, const pr_Tensor *P, const pr_Tensor *A,        \
                                 const pr_Tensor *gA, int64_t rows, int64_t S, double dropout_p, \
                                 double scale, pr_Tensor *gS),                                   \
    (rt, P, A, gA, rows, S, dropout_p, scale, gS))                                               \
  X(sgd, (pr_Runtime *rt, float *p, const float *grad, float *buf, int64_t n, int fresh,   \
                const pr_SgdArgs *a), (rt, p, grad, buf, n, fresh, a))                           \
  X(adam, (pr_Runtime *rt, float *p, const float *grad, float *m, float *v, float *vmax,   \
                 int64_t n, int64_t step, const pr_AdamArgs *a),                                 \
    (rt, p, grad, m, v, vmax, n, step, a))                                                       \
  X(rnn_forward, (pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *x, \
                       const pr_Tensor *h0, const pr_Tensor *c0, const pr_Tensor *W,             \
                       pr_Tensor *ws, pr_Tensor *R), (rt, p, batch_first, x, h0, c0, W, ws, R))  \
  X(rnn_backward, (pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *W,\
                        const pr_Tensor *ws, const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gh0,  \
                        pr_Tensor *gc0, pr_Tensor *gw), (rt, p, batch_first, W, ws, g, gx, gh0,  \
                                                         gc0, gw))

#define PR_KERNEL_FIELD(name, params, args) int(*name) params;
struct pr_Kernels {
  PR_KERNEL_LIST(PR_KERNEL_FIELD)
};
#undef PR_KERNEL_FIELD

/* The kernels of t's device. */
#define PR_K(t) ((t)->be->k)

/* True when t's device holds values (every device but a shapes-only one). */
static inline int pr_holds_values(const pr_Tensor *t) { return t->be->holds_values; }

#endif
