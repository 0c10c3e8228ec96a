/* ops_resample.c — interpolate (up/downsampling): sizes, PyTorch's checks, values, node. */
#include <math.h>
#include <string.h>

#include "backward.h"

static const char *const mode_names[] = {"nearest", "linear", "bilinear", "bicubic", "trilinear",
                                         "area"};

/* Spatial dims each mode needs (0: any of 1 to 3), as PyTorch checks them. */
static const int mode_nsp[] = {0, 1, 2, 2, 3, 0};

/* The upsampling op a mode runs on nsp spatial dims, as torch names it ("upsample_nearest2d";
   area is an adaptive average pool). */
static const char *upsample_name(int mode, int nsp) {
  static const char *const nearest[] = {"upsample_nearest1d", "upsample_nearest2d",
                                        "upsample_nearest3d"};
  static const char *const area[] = {"adaptive_avg_pool1d", "adaptive_avg_pool2d",
                                     "adaptive_avg_pool3d"};
  if (nsp < 1 || nsp > 3) return "interpolate";
  switch (mode) {
    case PROF_INTERP_NEAREST: return nearest[nsp - 1];
    case PROF_INTERP_AREA: return area[nsp - 1];
    case PROF_INTERP_LINEAR: return "upsample_linear1d";
    case PROF_INTERP_BILINEAR: return "upsample_bilinear2d";
    case PROF_INTERP_BICUBIC: return "upsample_bicubic2d";
    case PROF_INTERP_TRILINEAR: return "upsample_trilinear3d";
    default: return "interpolate";
  }
}

/* The op as the forward records it (the backward reuses it to count the forward's work). */
void pr_interp_op(prof_Op *op, const pr_Tensor *x, int mode, int size_given, int size_scalar,
                  int nscale, const double *scale) {
  pr_op_begin(op, PROF_OP_INTERPOLATE, x, NULL, NULL);
  op->name = upsample_name(mode, x->ndim - 2);
  op->mode = mode;
  if (size_given) {
    op->flags |= PROF_OPF_SIZE_GIVEN;
    if (size_scalar) op->flags |= PROF_OPF_SIZE_SCALAR;
  } else {
    op->scale_count = nscale;
    for (int i = 0; i < nscale; i++) op->scale[i] = scale[i];
  }
}

/* Planes N·C of x to out, spatial axes padded to three from the front. */
void pr_resample_geom(pr_ResampleGeom *g, const pr_Tensor *x, const pr_Tensor *out, int mode,
                      int align_corners, const double *scale) {
  int nsp = x->ndim - 2;
  memset(g, 0, sizeof *g);
  g->planes = x->shape[0] * x->shape[1];
  g->mode = mode;
  g->align_corners = align_corners;
  for (int i = 0; i < 3; i++) {
    int j = i - (3 - nsp);
    g->in[i] = j >= 0 ? x->shape[2 + j] : 1;
    g->out[i] = j >= 0 ? out->shape[2 + j] : 1;
    g->scale[i] = j >= 0 ? scale[j] : 0;
  }
}

pr_Tensor *pr_interpolate(pr_Runtime *rt, const pr_Tensor *x, const pr_InterpArgs *a) {
  char sx[96];
  if (a->mode < PROF_INTERP_NEAREST || a->mode > PROF_INTERP_AREA)
    return pr_fail(rt, "interpolate: unknown mode %d", (int)a->mode);
  const char *mode = mode_names[a->mode];
  if (x->ndim < 3 || x->ndim > 5)
    return pr_fail(rt, "interpolate: expected a 3-D, 4-D or 5-D input [N, C, ...], got %s",
                   pr_shape_str(x, sx, sizeof sx));
  int nsp = x->ndim - 2;
  if (mode_nsp[a->mode] != 0 && mode_nsp[a->mode] != nsp)
    return pr_fail(rt, "interpolate: mode '%s' needs a %d-D input, got %s", mode,
                   mode_nsp[a->mode] + 2, pr_shape_str(x, sx, sizeof sx));
  if (a->align_corners >= 0 && (a->mode == PROF_INTERP_NEAREST || a->mode == PROF_INTERP_AREA))
    return pr_fail(rt, "interpolate: align_corners can only be set with the interpolating modes "
                   "linear, bilinear, bicubic and trilinear, not '%s'", mode);
  if (a->nsize > 0 && a->nscale > 0)
    return pr_fail(rt, "interpolate: give only one of size and scale_factor");
  if (a->nsize == 0 && a->nscale == 0)
    return pr_fail(rt, "interpolate: give either size or scale_factor");
  if (!pr_is_float(x->dtype) && !(a->mode == PROF_INTERP_NEAREST && x->dtype == PROF_U8))
    return pr_fail(rt, "interpolate: expected a floating-point input, got %s",
                   prof_dtype_name(x->dtype));
  /* a number applies to every spatial dim; a list needs one entry per spatial dim */
  int n = a->nsize > 0 ? a->nsize : a->nscale;
  int scalar = a->nsize > 0 ? a->size_scalar : a->scale_scalar;
  if (scalar ? n != 1 : n != nsp)
    return pr_fail(rt, "interpolate: input %s has %d spatial dims but %d %s given",
                   pr_shape_str(x, sx, sizeof sx), nsp, n,
                   a->nsize > 0 ? "sizes were" : "scale factors were");
  int64_t shape[PR_MAX_DIMS] = {x->shape[0], x->shape[1]};
  for (int i = 0; i < nsp; i++) {
    if (a->nsize > 0) {
      shape[2 + i] = a->size[scalar ? 0 : i];
    } else {
      /* PyTorch: floor(float(in) * scale), computed in double */
      double s = a->scale[scalar ? 0 : i], v = floor((double)x->shape[2 + i] * s);
      shape[2 + i] = isfinite(v) && v > -1e18 && v < 1e18 ? (int64_t)v : -1;
    }
    if (shape[2 + i] <= 0 || x->shape[2 + i] <= 0)
      return pr_fail(rt, "interpolate: input and output sizes must be positive, got output size "
                     "%lld for spatial dim %d of input %s", (long long)shape[2 + i], i,
                     pr_shape_str(x, sx, sizeof sx));
  }
  prof_Op op;
  pr_interp_op(&op, x, a->mode, a->nsize > 0, a->size_scalar, a->nscale, a->scale);
  pr_Tensor *out = pr_op_alloc(rt, &op, x->ndim, shape, x->dtype, x->device);
  if (out == NULL) return NULL;
  /* the kernels get the factor per axis (PyTorch passes the caller's factors on unless
     recompute_scale_factor, or area mode, asks for sizes) */
  pr_ResampleGeom geo;
  double scale[3] = {0, 0, 0};
  for (int i = 0; i < nsp && a->nsize == 0 && a->mode != PROF_INTERP_AREA; i++)
    scale[i] = a->scale[a->scale_scalar ? 0 : i];
  pr_resample_geom(&geo, x, out, a->mode, a->align_corners > 0, scale);
  out = pr_op_end(rt, &op, out, PR_K(out)->interpolate(rt, x, &geo, out));
  if (out == NULL) return NULL;
  if (!pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *node = pr_node_attach(rt, out, PR_BW_INTERPOLATE, op.name, 1, &x);
  if (node == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  pr_node_save_shape(rt, node, 0, x);
  node->args.i[0] = a->mode;
  node->args.i[1] = a->align_corners > 0;
  node->args.i[2] = a->nsize > 0;
  node->args.i[3] = a->size_scalar;
  node->args.i[4] = a->nscale;
  for (int i = 0; i < 3; i++) {
    node->args.f[i] = scale[i];
    node->args.f[3 + i] = a->scale[i];
  }
  return out;
}
