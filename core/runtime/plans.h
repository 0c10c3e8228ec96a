/* plans.h — what ops and kernels agree on: element pointers and the layouts of fused kernels. */
#ifndef PR_PLANS_H
#define PR_PLANS_H

#include <string.h>

/* The element pointer of a float32 tensor's first element (device memory of its backend). */
float *pr_f32(const pr_Tensor *t);

/*
** How a norm groups a contiguous x viewed as [N, C, S]: statistics per channel over the batch
** (groups 0: batch_norm) or per sample and group of C / groups channels (instance norm: groups
** C; group norm; layer and RMS norm: rows N, normalised elements C, S 1, groups 1).
*/
typedef struct pr_NormPlan {
  int64_t N, C, S, groups;
  int rms;                     /* x·rsqrt(mean(x²) + eps): no mean */
  double eps;
} pr_NormPlan;

/* The number of statistics cells (means and rstds) of a plan. */
int64_t pr_norm_cells(const pr_NormPlan *p);

/* cross_entropy and nll_loss over a contiguous input viewed as [N, C, S] (rows N·S). */
typedef struct pr_ClassLoss {
  int64_t N, C, S;
  int32_t reduction;           /* prof_Reduction */
  int64_t ignore_index;
  double smoothing;            /* label smoothing, 0 for nll_loss */
  int soft;                    /* probability targets, shaped like the input */
  int nll;                     /* the input holds log-probabilities (nll_loss) */
} pr_ClassLoss;

/* A stack of recurrent layers (layout helpers in cpu_rnn.c); cells are T = L = D = 1. */
typedef struct pr_RnnPlan {
  int cell;                    /* 0 RNN, 1 GRU (r, z, n), 2 LSTM (i, f, g, o) */
  int relu;                    /* RNN's nonlinearity */
  int bias;
  int64_t T, N, In, H, L, D;   /* steps, batch, input and hidden sizes, layers, directions */
  double dropout;              /* between layers; > 0: the workspace ends with the L − 1 masks */
} pr_RnnPlan;

/* Floats of the flat weights (PyTorch's _flat_weights order) and of the forward's workspace. */
int64_t pr_rnn_weights_size(const pr_RnnPlan *p);
int64_t pr_rnn_workspace_size(const pr_RnnPlan *p);

const float *pr_rnn_output(const pr_RnnPlan *p, const float *ws);
/* Gates per cell (1, 3, 4), a layer's input size, where the dropout masks start in the
   workspace (-1: no masks). */
int64_t pr_rnn_gates(const pr_RnnPlan *p);
int64_t pr_rnn_in_size(const pr_RnnPlan *p, int64_t l);
int64_t pr_rnn_masks_offset(const pr_RnnPlan *p);

/*
** One convolution's geometry with its spatial axes padded to three from the front (size 1, kernel
** 1, stride 1, no padding), so 1-D to 3-D share one kernel. c and in[] describe the conv's input,
** cout and out[] its output; pad is the left padding (the right side follows from out).
*/
typedef struct pr_ConvGeom {
  int64_t n, c, cout, groups;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
} pr_ConvGeom;

/* A pooling's geometry over planes (N·C) of three padded axes; k, stride, pad, dil unused by
   the adaptive pools. */
typedef struct pr_PoolGeom {
  int64_t planes;
  int64_t in[3], out[3], k[3], stride[3], pad[3], dil[3];
  int count_include_pad;
  int64_t divisor_override;    /* avg pool; 0: none */
} pr_PoolGeom;

/* interpolate's geometry: planes (N·C) of three padded axes; scale[] the factor the caller gave
   per axis (0: a size was given); align_corners 1 or 0. */
typedef struct pr_ResampleGeom {
  int64_t planes;
  int64_t in[3], out[3];
  double scale[3];
  int32_t mode;                /* prof_InterpMode */
  int align_corners;
} pr_ResampleGeom;

/* interpolate's area mode is adaptive average pooling over the same planes (both devices) */
static inline pr_PoolGeom pr_resample_area_geom(const pr_ResampleGeom *g) {
  pr_PoolGeom p;
  memset(&p, 0, sizeof p);
  p.planes = g->planes;
  for (int a = 0; a < 3; a++) {
    p.in[a] = g->in[a];
    p.out[a] = g->out[a];
  }
  return p;
}

#endif
