/* ops_shape.c — views and copies that change shape: reshape, transpose, select, cat, split, ... */
#include <stdlib.h>
#include <string.h>

#include "backward.h"

/*
** Records a view or copy of x and, when x needs a gradient, attaches its backward. The node keeps
** a shape-only description of x (a view sharing nothing the backward would read).
*/
static pr_Tensor *shape_grad(pr_Runtime *rt, const pr_Tensor *x, pr_Tensor *out, int vk,
                             const int64_t *args, int nargs) {
  if (out == NULL || !pr_needs_grad(rt, x, NULL, NULL)) return out;
  pr_Node *n = pr_node_attach(rt, out, PR_BW_VIEW, "view", 1, &x);
  if (n == NULL) {
    pr_tensor_release(out);
    return NULL;
  }
  pr_node_save(n, 0, (pr_Tensor *)x);
  n->args.i[0] = vk;
  for (int i = 0; i < nargs && i < 15; i++) n->args.i[1 + i] = args[i];
  return out;
}

/* A view (no kernel) named as torch names the call: recorded as an op of its own (reshape and
   flatten with torch's aten::_reshape_alias inside), then its gradient. */
static pr_Tensor *shape_result(pr_Runtime *rt, const pr_Tensor *x, pr_Tensor *out, const char *name,
                               int vk, const int64_t *args, int nargs) {
  prof_Op op;
  pr_op_begin(&op, PROF_OP_VIEW, x, NULL, NULL);
  op.name = name;
  int alias = name[0] == 'r' || name[0] == 'f';   /* reshape, flatten */
  if (out == NULL || rt->rec == NULL || !alias)
    return shape_grad(rt, x, pr_op_finish(rt, &op, out), vk, args, nargs);
  if (pr_op_open(rt, &op, out->ndim, out->shape, out->dtype) != 0) {
    pr_tensor_release(out);
    return NULL;
  }
  prof_Operand in;
  pr_operand(x, &in);
  pr_part_mark(rt, "_reshape_alias", 1, &in);
  return shape_grad(rt, x, pr_op_end(rt, &op, out, 0), vk, args, nargs);
}

/* x's values in logical order into a new contiguous [ndim, shape] tensor of dtype on device: the
   op around the cast kernel. */
/*
** x's values onto c, another backend's tensor, through the host: x's logical order copied out by
** its backend, converted by the host device's cast kernel when the dtypes differ, copied in by
** c's backend.
*/
static int cross_device(pr_Runtime *rt, const pr_Tensor *x, pr_Tensor *c) {
  pr_Tensor *xc = pr_contiguous_data(rt, x);
  pr_Tensor *hx = xc ? pr_tensor_new(rt, x->ndim, x->shape, x->dtype, rt->host_device) : NULL;
  pr_Tensor *hc = NULL;
  int rc = PR_ERR;
  if (hx == NULL) goto end;
  size_t es = (size_t)prof_dtype_size(x->dtype);
  const char *src = (const char *)xc->storage->data + es * (size_t)xc->offset;
  if (xc->be->to_host(xc->be, rt, hx->storage->data, src, hx->storage->nbytes) != 0) {
    pr_error_wrap(rt, "to: could not copy values from %s", x->be->name);
    goto end;
  }
  hc = c->dtype == x->dtype ? pr_tensor_retain(hx)
                            : pr_tensor_new(rt, c->ndim, c->shape, c->dtype, rt->host_device);
  if (hc == NULL || (hc != hx && PR_K(hc)->cast(rt, hx, hc) != 0)) goto end;
  if (c->be->from_host(c->be, rt, c->storage->data, hc->storage->data, c->storage->nbytes) != 0) {
    pr_error_wrap(rt, "to: could not copy values to %s", c->be->name);
    goto end;
  }
  rc = 0;
end:
  pr_tensor_release(xc);
  pr_tensor_release(hx);
  pr_tensor_release(hc);
  return rc;
}

static int is_half(int dtype) { return dtype == PROF_F16 || dtype == PROF_BF16; }

/*
** cross_device for a cast to or from a half dtype, which the host's cast kernel refuses: the
** device end converts (its cast kernel rounds to nearest even), the values cross in one dtype.
*/
static int cross_device_half(pr_Runtime *rt, const pr_Tensor *x, pr_Tensor *c) {
  int on_c = c->device != rt->host_device;
  pr_Tensor *t = on_c ? pr_tensor_new(rt, x->ndim, x->shape, x->dtype, c->device)
                      : pr_tensor_new(rt, c->ndim, c->shape, c->dtype, x->device);
  int rc = t == NULL ? PR_ERR
           : on_c    ? (cross_device(rt, x, t) != 0 ? PR_ERR : PR_K(c)->cast(rt, t, c))
                     : (PR_K(x)->cast(rt, x, t) != 0 ? PR_ERR : cross_device(rt, t, c));
  pr_tensor_release(t);
  return rc;
}

/* The copy named as the call (contiguous, reshape, to: their torch children are work parts). */
static pr_Tensor *copy_op(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int64_t *shape,
                          int dtype, int device, int vk, const char *name) {
  prof_Op op;
  pr_op_begin(&op, PROF_OP_COPY, x, NULL, NULL);
  op.name = name;
  pr_Tensor *c = pr_op_alloc(rt, &op, ndim, shape, dtype, device);
  if (c == NULL) return NULL;
  int rc = c->be == x->be || !pr_holds_values(c) ? PR_K(c)->cast(rt, x, c)
           : c->dtype != x->dtype && (is_half(c->dtype) || is_half(x->dtype))
               ? cross_device_half(rt, x, c)
               : cross_device(rt, x, c);
  c = pr_op_end(rt, &op, c, rc);
  return shape_grad(rt, x, c, vk, NULL, 0);
}

/* Views cost nothing; they are still recorded so the activity view can show them. */
static pr_Tensor *view_result(pr_Runtime *rt, const pr_Tensor *x, pr_Tensor *v, const char *name) {
  return shape_result(rt, x, v, name, PR_VK_RESHAPE, NULL, 0);
}

/* A copy in the same element order (contiguous, reshape of a strided tensor), values included. */
static pr_Tensor *copy_result(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int64_t *shape,
                              const char *name) {
  return copy_op(rt, x, ndim, shape, x->dtype, x->device, PR_VK_RESHAPE, name);
}

pr_Tensor *pr_contiguous(pr_Runtime *rt, const pr_Tensor *x) {
  if (pr_is_contiguous(x))
    return pr_tensor_view(rt, x, x->ndim, x->shape, x->stride, x->offset);
  return copy_result(rt, x, x->ndim, x->shape, "contiguous");
}

/*
** Strides for viewing x as shape without copying, or 0 when impossible: the new dims must split or
** merge runs of x's dims that are contiguous with each other (PyTorch's rule for view).
*/
static int view_strides(const pr_Tensor *x, int ndim, const int64_t *shape, int64_t *stride) {
  int64_t numel = pr_numel(x);
  if (numel == 0 || x->ndim == 0) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
      stride[i] = s;
      s *= shape[i] > 0 ? shape[i] : 1;
    }
    return 1;
  }
  int view_d = ndim - 1;
  int64_t base = x->stride[x->ndim - 1], tensor_numel = 1, view_numel = 1;
  for (int d = x->ndim - 1; d >= 0; d--) {
    tensor_numel *= x->shape[d];
    if (d == 0 || (x->shape[d - 1] != 1 && x->stride[d - 1] != tensor_numel * base)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        stride[view_d] = view_numel * base;
        view_numel *= shape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return 0;
      if (d > 0) {
        base = x->stride[d - 1];
        tensor_numel = view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

/* view, reshape and flatten, by name (require_view: view's rule, no copy). */
static pr_Tensor *reshape_named(pr_Runtime *rt, const pr_Tensor *x, int ndim,
                                const int64_t *shape_in, int require_view, const char *name) {
  char sx[96];
  int64_t shape[PR_MAX_DIMS];
  int infer = -1;
  int64_t known = 1, numel = pr_numel(x);
  if (ndim > PR_MAX_DIMS) return pr_fail(rt, "view: at most %d dimensions", PR_MAX_DIMS);
  for (int i = 0; i < ndim; i++) {
    shape[i] = shape_in[i];
    if (shape[i] == -1) {
      if (infer >= 0) return pr_fail(rt, "view: only one dimension can be inferred (-1)");
      infer = i;
    } else if (shape[i] < 0) {
      return pr_fail(rt, "view: invalid dimension %lld", (long long)shape[i]);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      return pr_fail(rt, "view: shape with -1 is invalid for input %s of %lld elements",
                     pr_shape_str(x, sx, sizeof sx), (long long)numel);
    shape[infer] = numel / known;
    known *= shape[infer];
  }
  if (known != numel)
    return pr_fail(rt, "view: shape of %lld elements is invalid for input %s of %lld elements",
                   (long long)known, pr_shape_str(x, sx, sizeof sx), (long long)numel);
  int64_t stride[PR_MAX_DIMS];
  if (!view_strides(x, ndim, shape, stride)) {
    if (require_view)
      return pr_fail(rt, "view: the size and stride of input %s are not compatible with the new "
                     "shape; use reshape or contiguous() first", pr_shape_str(x, sx, sizeof sx));
    return copy_result(rt, x, ndim, shape, name);
  }
  return view_result(rt, x, pr_tensor_view(rt, x, ndim, shape, stride, x->offset), name);
}

pr_Tensor *pr_reshape(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int64_t *shape,
                      int require_view) {
  return reshape_named(rt, x, ndim, shape, require_view, require_view ? "view" : "reshape");
}

pr_Tensor *pr_flatten(pr_Runtime *rt, const pr_Tensor *x, int start, int end) {
  char sx[96];
  if (x->ndim == 0) return reshape_named(rt, x, 1, (int64_t[]){1}, 0, "flatten");
  int s = pr_dim(start, x->ndim), e = pr_dim(end, x->ndim);
  if (s < 0 || e < 0 || s > e)
    return pr_fail(rt, "flatten: start_dim %d and end_dim %d are invalid for input %s", start, end,
                   pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < s; i++) shape[n++] = x->shape[i];
  int64_t m = 1;
  for (int i = s; i <= e; i++) m *= x->shape[i];
  shape[n++] = m;
  for (int i = e + 1; i < x->ndim; i++) shape[n++] = x->shape[i];
  return reshape_named(rt, x, n, shape, 0, "flatten");
}

static pr_Tensor *permute_named(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int *dims,
                                const char *name) {
  char sx[96];
  if (ndim != x->ndim)
    return pr_fail(rt, "permute: %d dims given for input %s", ndim, pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS], stride[PR_MAX_DIMS], perm[PR_MAX_DIMS];
  int seen[PR_MAX_DIMS] = {0};
  for (int i = 0; i < ndim; i++) {
    int d = pr_dim(dims[i], x->ndim);
    if (d < 0 || seen[d])
      return pr_fail(rt, "permute: dims are not a permutation of %d dimensions", x->ndim);
    seen[d] = 1;
    shape[i] = x->shape[d];
    stride[i] = x->stride[d];
    perm[i] = d;
  }
  return shape_result(rt, x, pr_tensor_view(rt, x, ndim, shape, stride, x->offset), name,
                      PR_VK_PERMUTE, perm, ndim);
}

pr_Tensor *pr_permute(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int *dims) {
  return permute_named(rt, x, ndim, dims, "permute");
}

pr_Tensor *pr_transpose(pr_Runtime *rt, const pr_Tensor *x, int d0, int d1) {
  char sx[96];
  int a = pr_dim(d0, x->ndim), b = pr_dim(d1, x->ndim);
  if (a < 0 || b < 0)
    return pr_fail(rt, "transpose: dims %d, %d out of range for input %s", d0, d1,
                   pr_shape_str(x, sx, sizeof sx));
  int dims[PR_MAX_DIMS];
  for (int i = 0; i < x->ndim; i++) dims[i] = i;
  if (x->ndim > 0) {
    dims[a] = b;
    dims[b] = a;
  }
  return permute_named(rt, x, x->ndim, dims, "transpose");
}

pr_Tensor *pr_unsqueeze(pr_Runtime *rt, const pr_Tensor *x, int dim) {
  char sx[96];
  int d = dim < 0 ? dim + x->ndim + 1 : dim;
  if (d < 0 || d > x->ndim || x->ndim == PR_MAX_DIMS)
    return pr_fail(rt, "unsqueeze: dim %d out of range for input %s", dim,
                   pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS], stride[PR_MAX_DIMS];
  int n = 0;
  for (int i = 0; i <= x->ndim; i++) {
    if (i == d) {
      shape[n] = 1;
      stride[n++] = i < x->ndim ? x->stride[i] * x->shape[i] : 1;
    }
    if (i < x->ndim) {
      shape[n] = x->shape[i];
      stride[n++] = x->stride[i];
    }
  }
  return view_result(rt, x, pr_tensor_view(rt, x, n, shape, stride, x->offset), "unsqueeze");
}

pr_Tensor *pr_squeeze(pr_Runtime *rt, const pr_Tensor *x, int dim, int all) {
  char sx[96];
  int d = all ? -1 : pr_dim(dim, x->ndim);
  if (!all && d < 0)
    return pr_fail(rt, "squeeze: dim %d out of range for input %s", dim, pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS], stride[PR_MAX_DIMS];
  int n = 0;
  for (int i = 0; i < x->ndim; i++) {
    if (x->shape[i] == 1 && (all || i == d)) continue;
    shape[n] = x->shape[i];
    stride[n++] = x->stride[i];
  }
  return view_result(rt, x, pr_tensor_view(rt, x, n, shape, stride, x->offset), "squeeze");
}

pr_Tensor *pr_expand(pr_Runtime *rt, const pr_Tensor *x, int ndim, const int64_t *shape_in) {
  char sx[96];
  if (ndim < x->ndim || ndim > PR_MAX_DIMS)
    return pr_fail(rt, "expand: %d sizes given for input %s", ndim, pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS], stride[PR_MAX_DIMS];
  for (int i = 0; i < ndim; i++) {
    int j = x->ndim - ndim + i;
    int64_t have = j >= 0 ? x->shape[j] : 1;
    int64_t want = shape_in[i] == -1 ? have : shape_in[i];
    if (j >= 0 && have != want && have != 1)
      return pr_fail(rt, "expand: input %s cannot be expanded: dimension %d is %lld, not 1",
                     pr_shape_str(x, sx, sizeof sx), i, (long long)have);
    shape[i] = want;
    stride[i] = (j >= 0 && have == want) ? x->stride[j] : 0;
  }
  return shape_result(rt, x, pr_tensor_view(rt, x, ndim, shape, stride, x->offset), "expand",
                      PR_VK_EXPAND, NULL, 0);
}

pr_Tensor *pr_select(pr_Runtime *rt, const pr_Tensor *x, int dim, int64_t index) {
  char sx[96];
  int d = pr_dim(dim, x->ndim);
  if (x->ndim == 0 || d < 0)
    return pr_fail(rt, "select: dim %d out of range for input %s", dim, pr_shape_str(x, sx, sizeof sx));
  int64_t i = index < 0 ? index + x->shape[d] : index;
  if (i < 0 || i >= x->shape[d])
    return pr_fail(rt, "select: index %lld out of range for dimension %d of input %s",
                   (long long)index, d, pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS], stride[PR_MAX_DIMS];
  int n = 0;
  for (int k = 0; k < x->ndim; k++) {
    if (k == d) continue;
    shape[n] = x->shape[k];
    stride[n++] = x->stride[k];
  }
  int64_t args[2] = {d, i};
  return shape_result(rt, x, pr_tensor_view(rt, x, n, shape, stride, x->offset + i * x->stride[d]),
                      "select", PR_VK_SELECT, args, 2);
}

pr_Tensor *pr_narrow(pr_Runtime *rt, const pr_Tensor *x, int dim, int64_t start, int64_t len) {
  char sx[96];
  int d = pr_dim(dim, x->ndim);
  if (x->ndim == 0 || d < 0)
    return pr_fail(rt, "narrow: dim %d out of range for input %s", dim, pr_shape_str(x, sx, sizeof sx));
  int64_t s = start < 0 ? start + x->shape[d] : start;
  if (s < 0 || len < 0 || s + len > x->shape[d])
    return pr_fail(rt, "narrow: [%lld, %lld) is outside dimension %d of input %s", (long long)s,
                   (long long)(s + len), d, pr_shape_str(x, sx, sizeof sx));
  int64_t shape[PR_MAX_DIMS];
  memcpy(shape, x->shape, sizeof shape);
  shape[d] = len;
  int64_t args[2] = {d, s};
  return shape_result(rt, x, pr_tensor_view(rt, x, x->ndim, shape, x->stride, x->offset + s * x->stride[d]),
                      "narrow", PR_VK_NARROW, args, 2);
}

/* {====================== cat and stack: values and nodes ======================} */

/*
** Attaches a cat/stack node (PR_BW_JOIN) to target for m parts of the given sizes along d. A node
** holds at most PR_NODE_MAX inputs, so more parts are grouped under shape-only (meta) stand-ins
** of their joined shape, each with its own node: the gradient is sliced down a tree, and nothing
** is copied.
*/
static int join_attach(pr_Runtime *rt, pr_Tensor *target, const pr_Tensor *const *parts,
                       const int64_t *sizes, int m, int d, int stacked) {
  if (m <= PR_NODE_MAX) {
    pr_Node *node = pr_node_attach(rt, target, PR_BW_JOIN, stacked ? "stack" : "cat", m, parts);
    if (node == NULL) return PR_ERR;
    node->args.i[0] = d;
    node->args.i[1] = stacked;
    for (int i = 0; i < m; i++) node->args.i[2 + i] = sizes[i];
    return 0;
  }
  pr_Tensor *groups[PR_NODE_MAX] = {NULL};
  int64_t gsizes[PR_NODE_MAX];
  int per = (m + PR_NODE_MAX - 1) / PR_NODE_MAX, ng = 0, rc = 0;
  for (int s = 0; s < m && rc == 0; s += per, ng++) {
    int k = m - s < per ? m - s : per, needs = 0;
    int64_t shape[PR_MAX_DIMS];
    memcpy(shape, target->shape, sizeof shape);
    shape[d] = 0;
    for (int j = 0; j < k; j++) {
      shape[d] += sizes[s + j];
      needs |= pr_needs_grad(rt, parts[s + j], NULL, NULL);
    }
    gsizes[ng] = shape[d];
    groups[ng] = pr_tensor_new(rt, target->ndim, shape, target->dtype, PR_SHAPES_DEVICE);
    if (groups[ng] == NULL) rc = PR_ERR;
    else if (needs) rc = join_attach(rt, groups[ng], parts + s, sizes + s, k, d, stacked);
  }
  if (rc == 0)
    rc = join_attach(rt, target, (const pr_Tensor *const *)groups, gsizes, ng, d, 0);
  for (int i = 0; i < ng; i++) pr_tensor_release(groups[i]);
  return rc;
}

/* The values and the gradient of cat or stack, out allocated inside the open op, which closes
   after the values; on failure releases out. */
static pr_Tensor *join_result(pr_Runtime *rt, prof_Op *op, int n, const pr_Tensor *const *xs,
                              int d, int stacked, pr_Tensor *out) {
  if (out == NULL) return NULL;
  int rc = PR_K(out)->join(rt, n, xs, d, stacked, out);
  if ((out = pr_op_end(rt, op, out, rc)) == NULL) return NULL;
  int needs = 0;
  for (int k = 0; k < n; k++) needs |= pr_needs_grad(rt, xs[k], NULL, NULL);
  if (!needs) return out;
  int64_t *sizes = malloc(sizeof *sizes * (size_t)n);
  if (sizes == NULL) {
    pr_error(rt, "%s: out of memory", stacked ? "stack" : "cat");
    goto fail;
  }
  for (int k = 0; k < n; k++) sizes[k] = stacked ? 1 : xs[k]->shape[d];
  rc = join_attach(rt, out, xs, sizes, n, d, stacked);
  free(sizes);
  if (rc == 0) return out;
fail:
  pr_tensor_release(out);
  return NULL;
}

pr_Tensor *pr_cat(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int dim) {
  char s0[96], si[96];
  if (n < 1) return pr_fail(rt, "cat: expected at least one tensor");
  const pr_Tensor *a = xs[0];
  int d = pr_dim(dim, a->ndim);
  if (a->ndim == 0 || d < 0)
    return pr_fail(rt, "cat: dim %d out of range for input %s", dim, pr_shape_str(a, s0, sizeof s0));
  int64_t shape[PR_MAX_DIMS];
  memcpy(shape, a->shape, sizeof shape);
  shape[d] = 0;
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = PROF_OP_COPY;
  op.name = "cat";
  for (int k = 0; k < n; k++) {
    const pr_Tensor *x = xs[k];
    if (pr_check_same(rt, "cat", a, x, NULL) != 0) return NULL;
    int ok = x->ndim == a->ndim;
    for (int i = 0; ok && i < a->ndim; i++) ok = i == d || x->shape[i] == a->shape[i];
    if (!ok)
      return pr_fail(rt, "cat: tensor %d of shape %s does not match %s outside dimension %d", k,
                     pr_shape_str(x, si, sizeof si), pr_shape_str(a, s0, sizeof s0), d);
    shape[d] += x->shape[d];
  }
  /* cat reads exactly what it writes; one operand of the output's shape says so for any n */
  op.in[0].ndim = a->ndim;
  op.in[0].dtype = a->dtype;
  memcpy(op.in[0].dim, shape, sizeof *shape * (size_t)a->ndim);
  op.ninputs = 1;
  return join_result(rt, &op, n, xs, d, 0, pr_op_alloc(rt, &op, a->ndim, shape, a->dtype,
                                                         a->device));
}

pr_Tensor *pr_to(pr_Runtime *rt, const pr_Tensor *x, int dtype, int device) {
  if (dtype < 0) dtype = x->dtype;
  if (device < 0) device = x->device;
  if (dtype == x->dtype && device == x->device)
    return pr_tensor_view(rt, x, x->ndim, x->shape, x->stride, x->offset);
  const pr_Backend *to = pr_device_backend(rt, device);
  if (to == NULL) return pr_fail(rt, "to: unknown device %d", device);
  if (to->unavailable != NULL) return pr_fail(rt, "to: %s", to->unavailable);
  if (device != x->device && (!to->holds_values || !pr_holds_values(x)))
    return pr_fail(rt, "to: cannot move a tensor between %s and %s (%s tensors have no values)",
                   x->be->name, to->name, to->holds_values ? x->be->name : to->name);
  return copy_op(rt, x, x->ndim, x->shape, dtype, device, PR_VK_CAST, "to");
}

/* {====================== chunk, split, stack ======================} */

int64_t pr_split_plan(pr_Runtime *rt, const pr_Tensor *x, int dim, int by_chunks, int64_t n,
                      int64_t *sizes, int64_t max) {
  char sx[96];
  const char *name = by_chunks ? "chunk" : "split";
  int d = pr_dim(dim, x->ndim);
  if (x->ndim == 0 || d < 0)
    return pr_error(rt, "%s: dim %d is out of range for input %s", name, dim,
                    pr_shape_str(x, sx, sizeof sx));
  int64_t len = x->shape[d], piece, count;
  if (by_chunks) {
    if (n < 1) return pr_error(rt, "chunk: chunks must be positive, got %lld", (long long)n);
    piece = (len + n - 1) / n;
    count = piece == 0 ? n : (len + piece - 1) / piece;  /* PyTorch: n empty pieces of [0] */
  } else {
    if (n < 0 || (n == 0 && len != 0))
      return pr_error(rt, "split: split_size %lld is invalid for dim %d of input %s", (long long)n,
                      d, pr_shape_str(x, sx, sizeof sx));
    piece = n;
    count = n == 0 ? 1 : (len + n - 1) / n;
    if (count == 0) count = 1;
  }
  for (int64_t i = 0; i < count && i < max; i++)
    sizes[i] = len - i * piece < piece ? len - i * piece : piece;
  return count;
}

int pr_split(pr_Runtime *rt, const pr_Tensor *x, int dim, int64_t n, const int64_t *sizes,
             pr_Tensor **out) {
  char sx[96];
  int d = pr_dim(dim, x->ndim);
  if (x->ndim == 0 || d < 0)
    return pr_error(rt, "split: dim %d is out of range for input %s", dim,
                    pr_shape_str(x, sx, sizeof sx));
  int64_t sum = 0;
  for (int64_t i = 0; i < n; i++) {
    if (sizes[i] < 0)
      return pr_error(rt, "split: negative size %lld", (long long)sizes[i]);
    sum += sizes[i];
  }
  if (sum != x->shape[d])
    return pr_error(rt, "split: sizes sum to %lld but dim %d of input %s has size %lld",
                    (long long)sum, d, pr_shape_str(x, sx, sizeof sx), (long long)x->shape[d]);
  int64_t start = 0;
  for (int64_t i = 0; i < n; i++) {
    out[i] = pr_narrow(rt, x, d, start, sizes[i]);   /* recorded as a view */
    if (out[i] == NULL) {
      while (i > 0) pr_tensor_release(out[--i]);
      return PR_ERR;
    }
    start += sizes[i];
  }
  return 0;
}

pr_Tensor *pr_stack(pr_Runtime *rt, int n, const pr_Tensor *const *xs, int dim) {
  char s0[96], si[96];
  if (n < 1) return pr_fail(rt, "stack: expected a non-empty list of tensors");
  const pr_Tensor *a = xs[0];
  int d = dim < 0 ? dim + a->ndim + 1 : dim;
  if (d < 0 || d > a->ndim || a->ndim == PR_MAX_DIMS)
    return pr_fail(rt, "stack: dim %d is out of range for inputs %s", dim,
                   pr_shape_str(a, s0, sizeof s0));
  for (int k = 1; k < n; k++) {
    const pr_Tensor *x = xs[k];
    if (pr_check_same(rt, "stack", a, x, NULL) != 0) return NULL;
    int ok = x->ndim == a->ndim;
    for (int i = 0; ok && i < a->ndim; i++) ok = x->shape[i] == a->shape[i];
    if (!ok)
      return pr_fail(rt, "stack: tensor %d of shape %s differs from tensor 0 of shape %s", k,
                     pr_shape_str(x, si, sizeof si), pr_shape_str(a, s0, sizeof s0));
  }
  int64_t shape[PR_MAX_DIMS];
  for (int i = 0, j = 0; i <= a->ndim; i++) shape[i] = i == d ? n : a->shape[j++];
  /* as cat: reads exactly what it writes, which one operand of the output's shape says */
  prof_Op op;
  memset(&op, 0, sizeof op);
  op.kind = PROF_OP_COPY;
  op.name = "stack";
  op.in[0].ndim = a->ndim + 1;
  op.in[0].dtype = a->dtype;
  memcpy(op.in[0].dim, shape, sizeof *shape * (size_t)(a->ndim + 1));
  op.ninputs = 1;
  return join_result(rt, &op, n, xs, d, 1, pr_op_alloc(rt, &op, a->ndim + 1, shape, a->dtype,
                                                         a->device));
}
