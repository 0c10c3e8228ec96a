/* kernels.h — the kernel table every backend fills; included by runtime.h, never on its own. */
#ifndef PR_KERNELS_H
#define PR_KERNELS_H

/*
** One entry per op kind (and per fused backward). Kernels are pure: they compute into tensors the
** op layer allocated, never record, never attach gradients and never call ops. Tensor operands
** live on the backend's device; raw pointers (norms, losses, attention, RNNs) point into its
** storage. The contracts are the cpu kernels' (cpu.h). A shapes-only backend fills every entry
** with a no-op that returns 0.
**
** PR_KERNEL_LIST(X) lists them as X(ret, name, params, args) so a backend that wraps another
** (a counting one in a spec) can generate its entries.
*/
#define PR_KERNEL_LIST(X)                                                                        \
  X(int, mm, (pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,           \
               float alpha, float beta), (rt, a, b, out, alpha, beta))                           \
  X(int, batched_mm, (pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,   \
                       float alpha, float beta), (rt, a, b, out, alpha, beta))                   \
  X(int, linear, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,   \
                   pr_Tensor *out), (rt, x, w, b, out))                                          \
  X(int, binary, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,     \
                   double s, int scalar_first, pr_Tensor *out),                                  \
    (rt, kind, a, b, s, scalar_first, out))                                                      \
  X(int, copy_into, (pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src), (rt, dst, src))     \
  X(int, contiguous, (pr_Runtime *rt, const pr_Tensor *t, pr_Tensor *c), (rt, t, c))             \
  X(int, cast, (pr_Runtime *rt, const pr_Tensor *src, pr_Tensor *dst), (rt, src, dst))          \
  X(int, join, (pr_Runtime *rt, int n, const pr_Tensor *const *xs, int d, int stacked,          \
                 pr_Tensor *out), (rt, n, xs, d, stacked, out))                                  \
  X(void, triangle, (pr_Tensor *out, int64_t diagonal, int upper), (out, diagonal, upper))       \
  X(int, dropout, (pr_Runtime *rt, const pr_Tensor *x, double p, pr_Tensor *mask,               \
                    pr_Tensor *out), (rt, x, p, mask, out))                                      \
  X(int, accumulate, (pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src), (rt, dst, src))    \
  X(int, reduce, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const int *reduced,     \
                   double correction, pr_Tensor *out), (rt, kind, x, reduced, correction, out))  \
  X(int, reduce_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,                \
                           const pr_Tensor *stat, const int *reduced, double dof, pr_Tensor *e), \
    (rt, kind, x, stat, reduced, dof, e))                                                        \
  X(int, unary, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,      \
                  pr_Tensor *out), (rt, kind, x, a, b, out))                                     \
  X(int, unary_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,                 \
                           const pr_Tensor *y, const pr_Tensor *g, double a, double b,           \
                           pr_Tensor *gx), (rt, kind, x, y, g, a, b, gx))                        \
  X(int, softmax, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int d, pr_Tensor *out),\
    (rt, kind, x, d, out))                                                                       \
  X(int, softmax_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *y,               \
                             const pr_Tensor *g, int d, pr_Tensor *gx), (rt, kind, y, g, d, gx)) \
  X(int, prelu, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, pr_Tensor *out),       \
    (rt, x, w, out))                                                                             \
  X(int, prelu_backward, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,               \
                           const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gwx),                   \
    (rt, x, w, g, gx, gwx))                                                                      \
  X(int, extremum_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,              \
                              const pr_Tensor *b, double s, const pr_Tensor *g, pr_Tensor *ga,   \
                              pr_Tensor *gb), (rt, kind, a, b, s, g, ga, gb))                    \
  X(int, where, (pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b, \
                  double sa, double sb, pr_Tensor *out), (rt, cond, a, b, sa, sb, out))          \
  X(int, conv, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,     \
                 const pr_ConvGeom *g, pr_Tensor *out), (rt, x, w, b, g, out))                   \
  X(int, conv_input_grad, (pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,             \
                            const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx),            \
    (rt, gy, w, b, g, gx))                                                                       \
  X(int, conv_weight_grad, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,            \
                             const pr_ConvGeom *g, pr_Tensor *gw), (rt, x, gy, g, gw))           \
  X(int, pool, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolGeom *g,     \
                 pr_Tensor *out, pr_Tensor *indices), (rt, kind, x, g, out, indices))            \
  X(int, pool_backward, (pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *gy,                 \
                          const pr_Tensor *indices, const pr_PoolGeom *g, pr_Tensor *gx),        \
    (rt, kind, gy, indices, g, gx))                                                              \
  X(int, interpolate, (pr_Runtime *rt, const pr_Tensor *x, const pr_ResampleGeom *g,            \
                        pr_Tensor *out), (rt, x, g, out))                                        \
  X(int, interpolate_backward, (pr_Runtime *rt, const pr_Tensor *gy, const pr_ResampleGeom *g,  \
                                 pr_Tensor *gx), (rt, gy, g, gx))                                \
  X(int, embedding, (pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *w, pr_Tensor *out), \
    (rt, idx, w, out))                                                                           \
  X(int, embedding_check, (pr_Runtime *rt, const pr_Tensor *idx, int64_t vocab), (rt, idx, vocab))\
  X(int, embedding_backward, (pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *g,         \
                              int64_t pad, pr_Tensor *gw), (rt, idx, g, pad, gw))                \
  X(int, norm, (pr_Runtime *rt, const pr_NormPlan *p, int input_stats, pr_Tensor *run_mean,     \
                 pr_Tensor *run_var, double momentum, const pr_Tensor *xc, const pr_Tensor *w,   \
                 const pr_Tensor *b, pr_Tensor *mean, pr_Tensor *rstd, pr_Tensor *out),          \
    (rt, p, input_stats, run_mean, run_var, momentum, xc, w, b, mean, rstd, out))               \
  X(int, norm_backward, (pr_Runtime *rt, const pr_NormPlan *p, const pr_Tensor *x,              \
                         const pr_Tensor *g, const pr_Tensor *w, const pr_Tensor *mean,          \
                         const pr_Tensor *rstd, int input_stats, pr_Tensor *gx, pr_Tensor *gw,   \
                         pr_Tensor *gb), (rt, p, x, g, w, mean, rstd, input_stats, gx, gw, gb))  \
  X(int, class_targets_check, (pr_Runtime *rt, const char *name, const pr_Tensor *t,            \
                               int64_t classes, int64_t ignore), (rt, name, t, classes, ignore)) \
  X(void, class_loss, (const pr_ClassLoss *p, const pr_Tensor *x, const pr_Tensor *t,          \
                       const pr_Tensor *w, pr_Tensor *logp, pr_Tensor *out, double *divisor),    \
    (p, x, t, w, logp, out, divisor))                                                            \
  X(void, class_loss_backward, (const pr_ClassLoss *p, const pr_Tensor *logp, const pr_Tensor *t, \
                                const pr_Tensor *w, const pr_Tensor *g, double divisor,          \
                                pr_Tensor *gx, pr_Tensor *gt),                                   \
    (p, logp, t, w, g, divisor, gx, gt))                                                         \
  X(int, mse, (pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *t, int reduction,           \
                pr_Tensor *d, pr_Tensor *out), (rt, x, t, reduction, d, out))                    \
  X(int, mse_backward, (pr_Runtime *rt, const pr_Tensor *d, const pr_Tensor *g, int reduction,  \
                        pr_Tensor *gd, pr_Tensor *neg), (rt, d, g, reduction, gd, neg))          \
  X(void, attn_softmax, (pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask, int causal,  \
                         double dropout_p, pr_Tensor *A), (rt, scores, mask, causal, dropout_p, A)) \
  X(void, attn_softmax_backward, (const pr_Tensor *P, const pr_Tensor *A, const pr_Tensor *gA,  \
                                  int64_t rows, int64_t S, double dropout_p, double scale,       \
                                  pr_Tensor *gS), (P, A, gA, rows, S, dropout_p, scale, gS))     \
  X(void, sgd, (float *p, const float *grad, float *buf, int64_t n, int fresh,                 \
                 const pr_SgdArgs *a), (p, grad, buf, n, fresh, a))                              \
  X(void, adam, (float *p, const float *grad, float *m, float *v, float *vmax, int64_t n,       \
                  int64_t step, const pr_AdamArgs *a), (p, grad, m, v, vmax, n, step, a))        \
  X(int, rnn_forward, (pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *x, \
                       const pr_Tensor *h0, const pr_Tensor *c0, const pr_Tensor *W,             \
                       pr_Tensor *ws, pr_Tensor *R), (rt, p, batch_first, x, h0, c0, W, ws, R))  \
  X(int, rnn_backward, (pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *W,\
                        const pr_Tensor *ws, const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gh0,  \
                        pr_Tensor *gc0, pr_Tensor *gw), (rt, p, batch_first, W, ws, g, gx, gh0,  \
                                                         gc0, gw))

#define PR_KERNEL_FIELD(ret, name, params, args) ret(*name) params;
struct pr_Kernels {
  PR_KERNEL_LIST(PR_KERNEL_FIELD)
};
#undef PR_KERNEL_FIELD

/* The kernels of t's device. */
#define PR_K(t) ((t)->be->k)

/* True when t's device holds values (every device but a shapes-only one). */
static inline int pr_holds_values(const pr_Tensor *t) { return t->be->holds_values; }

#endif
