/* autograd_table.c — backward ids to backward functions: the one file that knows them all. */
#include "backward.h"

static const pr_BackwardFn backwards[PR_BW_COUNT] = {
    [PR_BW_BINARY] = pr_binary_backward,
    [PR_BW_UNARY] = pr_unary_backward,
    [PR_BW_PRELU] = pr_prelu_backward,
    [PR_BW_SOFTMAX] = pr_softmax_backward,
    [PR_BW_REDUCE] = pr_reduce_backward,
    [PR_BW_VIEW] = pr_view_backward,
    [PR_BW_JOIN] = pr_join_backward,
    [PR_BW_SELECT] = pr_select_backward,
    [PR_BW_TRIANGLE] = pr_triangle_backward,
    [PR_BW_MATMUL] = pr_matmul_backward,
    [PR_BW_ADDMM] = pr_addmm_backward,
    [PR_BW_LINEAR] = pr_linear_backward,
    [PR_BW_EINSUM] = pr_einsum_backward,
    [PR_BW_CONV] = pr_conv_backward,
    [PR_BW_CONV_TRANSPOSE] = pr_conv_transpose_backward,
    [PR_BW_POOL] = pr_pool_backward,
    [PR_BW_NORM] = pr_norm_backward,
    [PR_BW_EMBEDDING] = pr_embedding_backward,
    [PR_BW_DROPOUT] = pr_dropout_backward,
    [PR_BW_CLASS_LOSS] = pr_class_loss_backward,
    [PR_BW_MSE_LOSS] = pr_mse_loss_backward,
    [PR_BW_INTERPOLATE] = pr_interpolate_backward,
    [PR_BW_SDPA] = pr_sdpa_backward,
    [PR_BW_RNN] = pr_rnn_backward,
    [PR_BW_RNN_PACK] = pr_rnn_pack_backward,
    [PR_BW_RNN_UNPACK] = pr_rnn_unpack_backward,
};

pr_BackwardFn pr_backward_fn(int id) {
  return id > PR_BW_NONE && id < PR_BW_COUNT ? backwards[id] : NULL;
}
