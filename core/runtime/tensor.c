/* tensor.c — tensors (metadata, storage from the device's backend, views) and their backward nodes:
   both lifetimes, since a tensor owns its grad_fn and a node owns tensors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime.h"
#include "saturate.h"

static pr_Tensor *alloc_tensor(pr_Runtime *rt) {
  pr_Tensor *t = calloc(1, sizeof *t);
  if (t == NULL) pr_error(rt, "out of memory");
  else t->refs = 1;
  return t;
}

static void contiguous_strides(pr_Tensor *t) {
  /* saturating: with a zero dim the product of the dims after it may pass int64 unchecked */
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    t->stride[i] = s;
    s = prof_sat_mul(s, t->shape[i]);
  }
}

/* A shape whose bytes pass int64 cannot be addressed on any device: refused with the shape and
   the limit, never wrapped into a small buffer. */
static int check_size(pr_Runtime *rt, int ndim, const int64_t *shape, int dtype) {
  int64_t numel, bytes;
  if (prof_checked_prod(shape, ndim, &numel) == 0 &&
      !__builtin_mul_overflow(numel, (int64_t)prof_dtype_size(dtype), &bytes))
    return 0;
  char buf[256];
  size_t len = 0;
  len += (size_t)snprintf(buf, sizeof buf, "[");
  for (int i = 0; i < ndim && len < sizeof buf; i++)
    len += (size_t)snprintf(buf + len, sizeof buf - len, i ? ", %lld" : "%lld", (long long)shape[i]);
  if (len < sizeof buf) snprintf(buf + len, sizeof buf - len, "]");
  pr_error(rt, "tensor of shape %s (%s) is too large: its %s passes the limit of 2^63 - 1 = %lld",
           buf, prof_dtype_name(dtype),
           prof_checked_prod(shape, ndim, &numel) != 0 ? "element count" : "size in bytes",
           (long long)INT64_MAX);
  return -1;
}

/* Storage of nbytes from be's allocator, counted by the home runtime and told to its recorder. */
static pr_Storage *storage_new(pr_Runtime *rt, const pr_Backend *be, size_t nbytes) {
  pr_Runtime *home = rt->home != NULL ? rt->home : rt;
  /* the kernel would promise it lazily and kill the process on first touch: say so instead */
  if (home->memory_bytes > 0 && be->prof_device == PROF_DEVICE_CPU &&
      home->live_bytes + (int64_t)nbytes > home->memory_bytes) {
    pr_error(rt, "%s tensors would need %.1f GB, more than this machine's %.1f GB of memory; "
             "use device 'meta' to count a model without allocating it", be->name,
             (double)(home->live_bytes + (int64_t)nbytes) / 1e9, (double)home->memory_bytes / 1e9);
    return NULL;
  }
  pr_Storage *st = calloc(1, sizeof *st);
  void *data = st != NULL ? be->alloc(be, nbytes ? nbytes : 1) : NULL;
  if (data == NULL) {
    free(st);
    pr_error(rt, "out of memory allocating %zu bytes on %s", nbytes, be->name);
    return NULL;
  }
  st->refs = 1;
  st->nbytes = nbytes;
  st->data = data;
  st->be = be;
  st->home = home;
  st->rec = home->rec;
  home->allocated += (int64_t)nbytes;
  home->live_bytes += (int64_t)nbytes;
  if (st->rec != NULL) prof_mem_alloc(st->rec, be->prof_device, data, (int64_t)nbytes);
  return st;
}

static void storage_free(pr_Storage *st) {
  pr_Runtime *home = st->home;
  home->live_bytes -= (int64_t)st->nbytes;
  /* only a recorder that heard of the block hears of its end, so its balance stays exact */
  if (st->rec != NULL && st->rec == home->rec)
    prof_mem_free(st->rec, st->be->prof_device, st->data, (int64_t)st->nbytes);
  st->be->free(st->be, st->data, st->nbytes);
  free(st);
}

pr_Tensor *pr_tensor_new(pr_Runtime *rt, int ndim, const int64_t *shape, int dtype, int device) {
  if (ndim < 0 || ndim > PR_MAX_DIMS) {
    pr_error(rt, "tensors have at most %d dimensions, got %d", PR_MAX_DIMS, ndim);
    return NULL;
  }
  const pr_Backend *be = pr_device_backend(rt, device);
  if (dtype < 0 || dtype >= PROF_DTYPE_COUNT || be == NULL) {
    pr_error(rt, "unknown dtype %d or device %d", dtype, device);
    return NULL;
  }
  if (be->unavailable != NULL) {
    pr_error(rt, "%s", be->unavailable);
    return NULL;
  }
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) {
      pr_error(rt, "negative dimension %lld in a tensor shape", (long long)shape[i]);
      return NULL;
    }
  if (check_size(rt, ndim, shape, dtype) != 0) return NULL;
  pr_Tensor *t = alloc_tensor(rt);
  if (t == NULL) return NULL;
  t->ndim = ndim;
  t->dtype = dtype;
  t->device = device;
  t->be = be;
  if (ndim > 0) memcpy(t->shape, shape, sizeof *shape * (size_t)ndim);
  contiguous_strides(t);
  if (be->holds_values) {
    size_t nbytes = (size_t)pr_numel(t) * (size_t)prof_dtype_size(dtype);
    if ((t->storage = storage_new(rt, be, nbytes)) == NULL) {
      free(t);
      return NULL;
    }
  }
  return t;
}

pr_Tensor *pr_tensor_like(pr_Runtime *rt, const pr_Tensor *like) {
  return pr_tensor_new(rt, like->ndim, like->shape, like->dtype, like->device);
}

pr_Tensor *pr_tensor_view(pr_Runtime *rt, const pr_Tensor *base, int ndim, const int64_t *shape,
                          const int64_t *stride, int64_t offset) {
  if (ndim < 0 || ndim > PR_MAX_DIMS) {
    pr_error(rt, "tensors have at most %d dimensions, got %d", PR_MAX_DIMS, ndim);
    return NULL;
  }
  /* an expanded view (stride 0) holds no more bytes, but its element count must still fit */
  if (check_size(rt, ndim, shape, base->dtype) != 0) return NULL;
  pr_Tensor *t = alloc_tensor(rt);
  if (t == NULL) return NULL;
  t->ndim = ndim;
  t->dtype = base->dtype;
  t->device = base->device;
  t->be = base->be;
  if (ndim > 0) {
    memcpy(t->shape, shape, sizeof *shape * (size_t)ndim);
    memcpy(t->stride, stride, sizeof *stride * (size_t)ndim);
  }
  t->offset = offset;
  t->storage = base->storage;
  if (t->storage) t->storage->refs++;
  return t;
}

pr_Tensor *pr_tensor_retain(pr_Tensor *t) {
  t->refs++;
  return t;
}

void pr_tensor_tag(const pr_Tensor *t, int category) {
  const pr_Storage *st = t != NULL ? t->storage : NULL;
  /* the recorder now, not the one at allocation: a block made before the window is tagged too */
  if (st != NULL && st->home->rec != NULL)
    prof_mem_tag(st->home->rec, st->be->prof_device, st->data, category);
}

void pr_tensor_release(pr_Tensor *t) {
  if (t == NULL || --t->refs > 0) return;
  pr_node_release(t->grad_fn);
  pr_tensor_release(t->grad);
  if (t->storage && --t->storage->refs == 0) storage_free(t->storage);
  free(t);
}

void pr_node_clear(pr_Node *n) {
  for (int i = 0; i < PR_NODE_MAX; i++) {
    pr_tensor_release(n->inputs[i]);
    pr_tensor_release(n->saved[i]);
    n->inputs[i] = n->saved[i] = NULL;
  }
  pr_tensor_release(n->grad);
  n->grad = NULL;
  n->backward = PR_BW_NONE;
}

void pr_node_release(pr_Node *n) {
  if (n == NULL || --n->refs > 0) return;
  pr_node_clear(n);
  free(n);
}

int64_t pr_numel(const pr_Tensor *t) {
  /* every tensor's shape passed check_size, so the product fits */
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

int pr_is_contiguous(const pr_Tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->stride[i] != s) return 0;
    s = prof_sat_mul(s, t->shape[i]);
  }
  return 1;
}

const char *pr_shape_str(const pr_Tensor *t, char *buf, size_t size) {
  size_t len = 0;
  len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "[");
  for (int i = 0; i < t->ndim; i++)
    len += (size_t)snprintf(buf + len, len < size ? size - len : 0, i ? ", %lld" : "%lld",
                            (long long)t->shape[i]);
  snprintf(buf + len, len < size ? size - len : 0, "]");
  return buf;
}

int pr_dim(int dim, int ndim) {
  int n = ndim > 0 ? ndim : 1;
  if (dim < 0) dim += n;
  return dim >= 0 && dim < n ? dim : -1;
}

void pr_operand(const pr_Tensor *t, prof_Operand *o) {
  o->ndim = t->ndim;
  o->dtype = t->dtype;
  for (int i = 0; i < t->ndim; i++) o->dim[i] = t->shape[i];
}

int pr_record(pr_Runtime *rt, prof_Op *op, const pr_Tensor *out) {
  if (rt->rec == NULL) return 0;
  if (out != NULL) pr_operand(out, &op->out);
  if (prof_op_begin(rt->rec, op) != PROF_OK) return pr_error(rt, "%s", prof_errmsg(rt->rec));
  prof_op_end(rt->rec, op);
  return 0;
}
