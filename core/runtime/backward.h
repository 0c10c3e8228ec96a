/* backward.h — the backward functions autograd_table.c lists, and what op files share with them. */
#ifndef PR_BACKWARD_H
#define PR_BACKWARD_H

#include "runtime.h"

/*
** Each is a pr_BackwardFn (runtime.h) run by the engine through the table, never called by
** forward code: a node's backward id names it (PR_BW_<NAME> -> pr_<name>_backward). Saved
** tensors and args are those the forward op put on its node.
*/
/* ops_pointwise_backward.c */
int pr_binary_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_unary_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_prelu_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_softmax_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_reduce_backward.c */
int pr_reduce_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_shape_backward.c */
int pr_view_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_join_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_select_backward.c */
int pr_select_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_triangle_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_linalg_backward.c */
int pr_matmul_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_addmm_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_dense_backward.c */
int pr_linear_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_einsum_backward.c */
int pr_einsum_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_conv_backward.c */
int pr_conv_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_conv_transpose_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_pool_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_norm_backward.c */
int pr_norm_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_embedding_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_dropout_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_loss_backward.c */
int pr_class_loss_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_mse_loss_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_resample_backward.c */
int pr_interpolate_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_sequence_backward.c */
int pr_sdpa_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
/* ops_rnn_backward.c */
int pr_rnn_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_rnn_pack_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);
int pr_rnn_unpack_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin);

/* {====================== what forward files share with their backward ======================} */

/* ops_shape.c: how a view's gradient goes back to its input (its node's args.i[0]). */
enum { PR_VK_RESHAPE, PR_VK_PERMUTE, PR_VK_EXPAND, PR_VK_SELECT, PR_VK_NARROW, PR_VK_CAST };

/* ops_loss.c: the int64 class indices of a target. */
static inline const int64_t *pr_i64(const pr_Tensor *t) {
  return (const int64_t *)t->storage->data + t->offset;
}

/* ops_conv.c: x's batched twin in *tmp when x is unbatched (nsp + 1 dims), else x; a product of
   n sizes; the 3-D geometry of a conv from [n, c, *in] to [n, cout, *out]; op's window fields. */
const pr_Tensor *pr_conv_add_batch(const pr_Tensor *x, int nsp, pr_Tensor *tmp);
int64_t pr_conv_prod(int n, const int64_t *v);
void pr_conv_geom(pr_ConvGeom *g, int nsp, int64_t n, int64_t c, int64_t cout, const int64_t *in,
                  const int64_t *out, const int64_t *k, const pr_ConvArgs *a);
void pr_conv_op(prof_Op *op, const pr_ConvArgs *a, const int64_t *kernel);
/* ops_conv.c: the pools' kinds, geometry and op fields from the args their nodes keep. */
int pr_is_max_pool(prof_OpKind kind);
void pr_pool_geom(pr_PoolGeom *g, const pr_Tensor *x, const pr_Tensor *out, int nsp,
                  const int64_t *args);
void pr_pool_fields(prof_Op *op, int nsp, const int64_t *args);

/* ops_resample.c: interpolate's op as the forward records it, and its kernel geometry. */
void pr_interp_op(prof_Op *op, const pr_Tensor *x, int mode, int size_given, int size_scalar,
                  int nscale, const double *scale);
void pr_resample_geom(pr_ResampleGeom *g, const pr_Tensor *x, const pr_Tensor *out, int mode,
                      int align_corners, const double *scale);

/* ops_sequence.c: attention's views (a contiguous view at an offset; heads split by group; how
   the products see q, k, v under grouped-query attention) and a release of three. */
pr_Tensor *pr_contig_view(pr_Runtime *rt, const pr_Tensor *base, int nd, const int64_t *shape,
                          int64_t offset);
int pr_split_heads(int nb, const int64_t *shape, int64_t group, int64_t *out);
int pr_attn_views(pr_Runtime *rt, const pr_Tensor *q, const pr_Tensor *k, const pr_Tensor *v,
                  int64_t group, pr_Tensor **qv, pr_Tensor **kv, pr_Tensor **vv);
void pr_release3(pr_Tensor *a, pr_Tensor *b, pr_Tensor *c);

/* ops_einsum.c: an equation's term as ids (letters, then ellipsis dims), packed into node args;
   x viewed with one dim per distinct id; terms written back as an equation. */
typedef struct pr_EinTerm {
  int n;
  int id[PR_MAX_DIMS];
} pr_EinTerm;
pr_EinTerm pr_ein_term_unpack(int64_t v);
int pr_ein_term_has(const pr_EinTerm *t, int id);
pr_Tensor *pr_ein_distinct(pr_Runtime *rt, const pr_Tensor *x, const pr_EinTerm *t, pr_EinTerm *u);
void pr_ein_render(int nin, const pr_EinTerm *in, const pr_EinTerm *out, char *buf);

/*
** The dtype of a new gradient for t, or of what a forward saves from t for its backward: float32
** where the device holds values (its kernels compute in float32), t's own where it holds none
** (meta), so that a float16 model's gradients meet its float16 weights in the backward's matmuls
** and count 2-byte elements. A float16/bfloat16 t that holds values is cuda's (the cpu computes
** no half op) and keeps its dtype: cuda's half kernels take one dtype for values and gradients.
*/
static inline int pr_grad_dtype(const pr_Tensor *t) {
  int half = t->dtype == PROF_F16 || t->dtype == PROF_BF16;
  return pr_holds_values(t) && !half ? PROF_F32 : t->dtype;
}

#endif
