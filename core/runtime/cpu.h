/* cpu.h — the cpu backend's kernels (cpu/); included after runtime.h by cpu/ files only. */
#ifndef PR_CPU_H
#define PR_CPU_H

/* {====================== cpu helpers (cpu.c) ======================} */

/* c (contiguous, t's shape and dtype) = t's values in logical order (any strides). */
int pr_cpu_contiguous(pr_Runtime *rt, const pr_Tensor *t, pr_Tensor *c);

/* dst += src elementwise (same shape; any strides). */
int pr_cpu_accumulate(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src);

/* Reductions (cpu_reduce.c): out = kind (SUM, MEAN, AMAX, VAR with correction) of x over the dims
   flagged in reduced; the backward scales the spread gradient e in place (amax: shares of the
   maxima, var: 2 (x - mean) / dof; stat the output or the mean). */
int pr_cpu_reduce(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const int *reduced,
                  double correction, pr_Tensor *out);
int pr_cpu_reduce_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                           const pr_Tensor *stat, const int *reduced, double dof, pr_Tensor *e);

/* out = x w^T + b (b NULL: none) for x [..., in] of any layout the rows view allows, w [out, in],
   out contiguous [..., out] (cpu_gemm.c). */
int pr_cpu_linear(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                  pr_Tensor *out);

/* out[m, n] = alpha · a[m, k] · b[k, n] + beta · out (2-D float32 views, any strides; out
   row-major). The batched form broadcasts leading dims right-aligned into a contiguous out. */
int pr_cpu_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out, float alpha,
              float beta);
int pr_cpu_batched_mm(pr_Runtime *rt, const pr_Tensor *a, const pr_Tensor *b, pr_Tensor *out,
                      float alpha, float beta);

/* out = a op b elementwise with broadcasting (b NULL: scalar s, scalar_first: s op a); out is
   contiguous of the broadcast shape, float32 or int64 (operands already of out's dtype). */
int pr_cpu_binary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a, const pr_Tensor *b,
                  double s, int scalar_first, pr_Tensor *out);

/* dst (a view of any strides) = src's values in logical order (same dtype and numel). */
int pr_cpu_copy_into(pr_Runtime *rt, pr_Tensor *dst, const pr_Tensor *src);

/* cat and stack (cpu_select.c): the inputs into their slices of the contiguous out along dim d
   (stacked: d is the new dim); triu/tril: zeroes what lies outside the triangle of every matrix of
   the contiguous out. */
int pr_cpu_join(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int d, int stacked,
                pr_Tensor *out);
int pr_cpu_triangle(pr_Runtime *rt, pr_Tensor *out, int64_t diagonal, int upper);

/* out = x · mask, mask (contiguous, x's shape) drawn first: 0 or 1/(1 − p) (cpu_binary.c). */
int pr_cpu_dropout(pr_Runtime *rt, const pr_Tensor *x, double p, pr_Tensor *mask, pr_Tensor *out);

/* dst (contiguous, same numel) = src converted to dst's dtype. */
int pr_cpu_cast(pr_Runtime *rt, const pr_Tensor *src, pr_Tensor *dst);

/* The optimizers' updates of n contiguous float32 elements (cpu_optim.c): SGD with its momentum
   buffer (NULL: none; fresh: the first step), Adam/AdamW with m, v and vmax (NULL: no amsgrad). */
int pr_cpu_sgd(pr_Runtime *rt, float *p, const float *grad, float *buf, int64_t n, int fresh,
               const pr_SgdArgs *a);
int pr_cpu_adam(pr_Runtime *rt, float *p, const float *grad, float *m, float *v, float *vmax,
                int64_t n, int64_t step, const pr_AdamArgs *a);

/* {========= cpu kernels of the nn ops (cpu_norm.c, cpu_loss.c, cpu_attn.c, cpu_rnn.c) ========} */

/* mean and rstd per cell; var (NULL: not wanted) gets the biased variances. */
void pr_cpu_norm_stats(const pr_NormPlan *p, const float *x, float *mean, float *rstd, double *var);
/* y = (x − mean)·rstd·w[c] + b[c]; w, b NULL: none. */
void pr_cpu_norm_apply(const pr_NormPlan *p, const float *x, const float *mean, const float *rstd,
                       const float *w, const float *b, float *y);
/* gx (NULL: not wanted) by the statistics-from-input formula when input_stats, else g·w·rstd;
   gw_acc, gb_acc (double [C], NULL: not wanted) accumulate Σ g·x̂ and Σ g. */
void pr_cpu_norm_backward(const pr_NormPlan *p, const float *x, const float *g, const float *w,
                          const float *mean, const float *rstd, int input_stats, float *gx,
                          double *gw_acc, double *gb_acc);

/*
** A norm op's values (x contiguous): mean and rstd per cell from x (input_stats, updating the
** running buffers that are not NULL with momentum, as torch does) or from the running buffers;
** then out. The gradient: gx, gw, gb (each NULL: not wanted) from g and the saved statistics.
*/
int pr_cpu_norm(pr_Runtime *rt, const pr_NormPlan *p, int input_stats, pr_Tensor *run_mean,
                pr_Tensor *run_var, double momentum, const pr_Tensor *xc, const pr_Tensor *w,
                const pr_Tensor *b, pr_Tensor *mean, pr_Tensor *rstd, pr_Tensor *out);
int pr_cpu_norm_grad(pr_Runtime *rt, const pr_NormPlan *p, const pr_Tensor *x, const pr_Tensor *g,
                     const pr_Tensor *w, const pr_Tensor *mean, const pr_Tensor *rstd,
                     int input_stats, pr_Tensor *gx, pr_Tensor *gw, pr_Tensor *gb);

/* Embedding rows: the check (PR_ERR naming the index and the vocabulary size), the gather into a
   contiguous out, and the scatter-add of g [numel(idx), d] into gw (idx contiguous; rows equal
   to pad skipped). */
int pr_cpu_embedding_check(pr_Runtime *rt, const pr_Tensor *idx, int64_t vocab);
int pr_cpu_embedding(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *w, pr_Tensor *out);
void pr_cpu_embedding_backward(const pr_Tensor *idx, const float *g, int64_t d, int64_t pad,
                               float *gw);
/* The backward as a kernel: g (any layout) scatter-added into the contiguous gw [V, D]. */
int pr_cpu_embedding_grad(pr_Runtime *rt, const pr_Tensor *idx, const pr_Tensor *g, int64_t pad,
                          pr_Tensor *gw);

/* PR_ERR naming the first class-index target outside [0, classes) that is not ignore. */
int pr_cpu_class_targets_check(pr_Runtime *rt, const char *name, const pr_Tensor *t,
                               int64_t classes, int64_t ignore);
/* out: one value per row (reduction none) or one; logp (cross_entropy; NULL for nll_loss) gets
   the log-softmax; *divisor what mean divides the nll term by. t: class indices (N·S, int64) or
   probabilities (p->soft); every tensor contiguous. */
int pr_cpu_class_loss(pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *x, const pr_Tensor *t,
                      const pr_Tensor *w, pr_Tensor *logp, pr_Tensor *out, double *divisor);
/* gx (input-shaped) and, for probabilities, gt (NULL: not wanted) from g (N·S values for none,
   else one) and the forward's logp and divisor. */
int pr_cpu_class_loss_backward(pr_Runtime *rt, const pr_ClassLoss *p, const pr_Tensor *logp,
                               const pr_Tensor *t, const pr_Tensor *w, const pr_Tensor *g,
                               double divisor, pr_Tensor *gx, pr_Tensor *gt);

/* mse_loss over d's (the broadcast) shape: d = x − t, out = (x − t)² per element (reduction none)
   or their sum or mean, summed in double; the backward gd = 2·d·g (·1/n for mean; g one value
   unless none) and neg = −gd (NULL: not wanted). */
int pr_cpu_mse(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *t, int reduction,
               pr_Tensor *d, pr_Tensor *out);
int pr_cpu_mse_backward(pr_Runtime *rt, const pr_Tensor *d, const pr_Tensor *g, int reduction,
                        pr_Tensor *gd, pr_Tensor *neg);

/* Attention scores [..., L, S] (contiguous, scaled) to probabilities in place: mask (a view
   expanded to the scores' shape, bool keep or additive float; NULL: none), is_causal, softmax;
   dropout_p > 0 writes the dropped and rescaled probabilities into A (cpu_attn.c). */
int pr_cpu_attn_softmax(pr_Runtime *rt, pr_Tensor *scores, const pr_Tensor *mask, int causal,
                        double dropout_p, pr_Tensor *A);
/* The scores' gradient gS [rows, S] from the probabilities P, the dropped A (NULL: no dropout)
   and their gradient gA (all contiguous, of one dtype). */
int pr_cpu_attn_softmax_backward(pr_Runtime *rt, const pr_Tensor *P, const pr_Tensor *A,
                                 const pr_Tensor *gA, int64_t rows, int64_t S, double dropout_p,
                                 double scale, pr_Tensor *gS);

/* x [T, N, I] time-major; h0, c0 [L·D, N, H] or NULL (zeros); fills ws (the last layer's output
   [T, N, D·H] at pr_rnn_output(ws)), hn and cn (NULL: not wanted). With dropout the masks
   (0 or 1/(1 − p) per element of each inner layer's output) must already be in ws, drawn by
   pr_rnn_values. PR_ERR: out of memory. */
int pr_cpu_rnn_forward(const pr_RnnPlan *p, const float *x, const float *h0, const float *c0,
                       const float *w, float *ws, float *hn, float *cn);
/* Backpropagation through time from the gradients of the output (time-major), h_n and c_n (each
   NULL: zero) into gx, gh0, gc0 and the flat gw (each NULL: not wanted). PR_ERR: out of memory. */
int pr_cpu_rnn_backward(const pr_RnnPlan *p, const float *w, const float *ws, const float *gout,
                        const float *ghn, const float *gcn, float *gx, float *gh0, float *gc0,
                        float *gw);

/* The recurrent ops' kernels on tensors: x [T, N, I] ([N, T, I] batch first, any layout), h0, c0
   or NULL, the flat weights W; ws the workspace, R = [out | h_n | c_n]; the backward from R's
   gradient g into gx, gh0, gc0, gw (each NULL: not wanted). */
int pr_cpu_rnn(pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *x,
               const pr_Tensor *h0, const pr_Tensor *c0, const pr_Tensor *W, pr_Tensor *ws,
               pr_Tensor *R);
int pr_cpu_rnn_grad(pr_Runtime *rt, const pr_RnnPlan *p, int batch_first, const pr_Tensor *W,
                    const pr_Tensor *ws, const pr_Tensor *g, pr_Tensor *gx_out, pr_Tensor *gh0,
                    pr_Tensor *gc0, pr_Tensor *gw);

/* {====================== unary, softmax, prelu and selection kernels (cpu_unary.c) ===========} */

/*
** out (contiguous, x's shape) = f(x) for the unary kinds RELU … MISH and NEG … CLAMP; x float32 of
** any strides. a, b: leaky_relu's slope, elu's alpha, softplus's beta and threshold, gelu's form
** (a != 0: the tanh approximation), clamp's bounds. Fails (PR_ERR) on other dtypes.
*/
int pr_cpu_unary(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, double a, double b,
                 pr_Tensor *out);

/* gx (contiguous) = g · f'(x) for the same kinds; y = f(x), read by exp, tanh, sigmoid, sqrt,
   rsqrt and reciprocal (NULL for the others). */
int pr_cpu_unary_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x,
                          const pr_Tensor *y, const pr_Tensor *g, double a, double b,
                          pr_Tensor *gx);

/* SOFTMAX or LOG_SOFTMAX along dim d (out contiguous), and the gradient from its output y. */
int pr_cpu_softmax(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, int d, pr_Tensor *out);
int pr_cpu_softmax_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *y,
                            const pr_Tensor *g, int d, pr_Tensor *gx);

/* prelu with w per channel (dim 1) or of one element; the backward writes gx = dL/dx and
   gwx = x > 0 ? 0 : x·g (w's gradient before summing to w's shape); either may be NULL. */
int pr_cpu_prelu(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, pr_Tensor *out);
int pr_cpu_prelu_backward(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w,
                          const pr_Tensor *g, pr_Tensor *gx, pr_Tensor *gwx);

/* maximum/minimum's gradients in g's (the broadcast) shape: the winner takes g, ties g/2 each, as
   PyTorch; b NULL: the number s. ga or gb may be NULL. */
int pr_cpu_extremum_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *a,
                             const pr_Tensor *b, double s, const pr_Tensor *g, pr_Tensor *ga,
                             pr_Tensor *gb);

/* out (contiguous, the broadcast shape) = cond ? a : b; a or b NULL: the number sa or sb. cond
   bool; a, b and out of one dtype (any cpu dtype). */
int pr_cpu_where(pr_Runtime *rt, const pr_Tensor *cond, const pr_Tensor *a, const pr_Tensor *b,
                 double sa, double sb, pr_Tensor *out);

/* {====================== cpu convolution, pooling, resampling (cpu_conv/pool/resample.c) ======} */

/*
** Float32 kernels (operands of any strides; results contiguous and fully overwritten):
** out = conv(x, w) + b; gx = the adjoint of conv applied to gy (+ b per input channel: this is
** conv_transpose's forward); gw = the weight gradient of conv at x for output gradient gy.
** w is [cout, c/groups, *k] in all three. Returns 0 or PR_ERR (rt->err set).
*/
int pr_cpu_conv(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *w, const pr_Tensor *b,
                const pr_ConvGeom *g, pr_Tensor *out);
int pr_cpu_conv_input_grad(pr_Runtime *rt, const pr_Tensor *gy, const pr_Tensor *w,
                           const pr_Tensor *b, const pr_ConvGeom *g, pr_Tensor *gx);
int pr_cpu_conv_weight_grad(pr_Runtime *rt, const pr_Tensor *x, const pr_Tensor *gy,
                            const pr_ConvGeom *g, pr_Tensor *gw);

/*
** kind: PROF_OP_MAX_POOL, _AVG_POOL, _ADAPTIVE_AVG_POOL or _ADAPTIVE_MAX_POOL. The max pools
** write each window's argmax (plane-local flat index, int64, out's shape) into indices when it is
** not NULL; their backward reads them. gx is overwritten.
*/
int pr_cpu_pool(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *x, const pr_PoolGeom *g,
                pr_Tensor *out, pr_Tensor *indices);
int pr_cpu_pool_backward(pr_Runtime *rt, prof_OpKind kind, const pr_Tensor *gy,
                         const pr_Tensor *indices, const pr_PoolGeom *g, pr_Tensor *gx);

/* out = interpolate(x); gx = its adjoint applied to gy (overwritten). */
int pr_cpu_interpolate(pr_Runtime *rt, const pr_Tensor *x, const pr_ResampleGeom *g,
                       pr_Tensor *out);
int pr_cpu_interpolate_backward(pr_Runtime *rt, const pr_Tensor *gy, const pr_ResampleGeom *g,
                                pr_Tensor *gx);

#endif
