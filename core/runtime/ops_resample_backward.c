/* ops_resample_backward.c — interpolate's gradient (autograd_table.c). */
#include "backward.h"

/*
** The backward records one custom op carrying the forward's count (each weighted tap read has its
** weighted add back; nearest counts 0 as it does forward), reading gy and writing gx.
*/
int pr_interpolate_backward(pr_Runtime *rt, pr_Node *n, const pr_Tensor *g, pr_Tensor **gin) {
  const pr_Tensor *x = n->saved[0];
  const int64_t *v = n->args.i;
  prof_Op op;
  pr_op_begin(&op, PROF_OP_CUSTOM, g, NULL, NULL);
  if (rt->rec != NULL) {
    prof_Op fwd;
    pr_interp_op(&fwd, x, (int)v[0], (int)v[2], (int)v[3], (int)v[4], n->args.f + 3);
    pr_operand(g, &fwd.out);
    if (prof_op_count(rt->rec, &fwd) != PROF_OK)
      return pr_error(rt, "interpolate backward: %s", prof_errmsg(rt->rec));
    op.name = pr_backward_name(rt, fwd.name);   /* upsample_nearest2d_backward */
    op.flops = fwd.flops;
    op.bytes_read = fwd.bytes_written;
    op.bytes_written = fwd.bytes_read;
  }
  pr_Tensor *gx = pr_op_alloc(rt, &op, x->ndim, x->shape, g->dtype, g->device);
  if (gx == NULL) return PR_ERR;
  pr_ResampleGeom geo;
  pr_resample_geom(&geo, x, g, (int)v[0], (int)v[1], n->args.f);
  gx = pr_op_end(rt, &op, gx, PR_K(gx)->interpolate_backward(rt, g, &geo, gx));
  gin[0] = gx;
  return gx != NULL ? 0 : PR_ERR;
}
