/* tensor.c — tensor metadata, cpu storage and views; reference counted, owned by C. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static const char *const device_names[PR_DEVICE_COUNT] = {"meta", "cpu", "cuda"};

void pr_runtime_init(pr_Runtime *rt) {
  memset(rt, 0, sizeof *rt);
  rt->default_device = PR_META;
  rt->default_dtype = PROF_F32;
  rt->grad_enabled = 1;
  rt->live = &rt->live_bytes;   /* copies of rt (internal quiet runtimes) count into this one */
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  rt->memory_bytes = pages > 0 && page > 0 ? (int64_t)pages * page : 0;
  pr_manual_seed(rt, 0);
}

int pr_error(pr_Runtime *rt, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rt->err, sizeof rt->err, fmt, ap);
  va_end(ap);
  return PR_ERR;
}

const char *pr_device_name(int device) {
  return device >= 0 && device < PR_DEVICE_COUNT ? device_names[device] : "?";
}

int pr_device_parse(const char *name) {
  for (int i = 0; i < PR_DEVICE_COUNT; i++)
    if (strcmp(name, device_names[i]) == 0) return i;
  return -1;
}

static pr_Tensor *alloc_tensor(pr_Runtime *rt) {
  pr_Tensor *t = calloc(1, sizeof *t);
  if (t == NULL) pr_error(rt, "out of memory");
  else t->refs = 1;
  return t;
}

static void contiguous_strides(pr_Tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    t->stride[i] = s;
    s *= t->shape[i];
  }
}

pr_Tensor *pr_tensor_new(pr_Runtime *rt, int ndim, const int64_t *shape, int dtype, int device) {
  if (ndim < 0 || ndim > PR_MAX_DIMS) {
    pr_error(rt, "tensors have at most %d dimensions, got %d", PR_MAX_DIMS, ndim);
    return NULL;
  }
  if (dtype < 0 || dtype >= PROF_DTYPE_COUNT || device < 0 || device >= PR_DEVICE_COUNT) {
    pr_error(rt, "unknown dtype %d or device %d", dtype, device);
    return NULL;
  }
  if (device == PR_CUDA) {
    pr_error(rt, "device 'cuda' is not available in this build; use 'meta' or 'cpu'");
    return NULL;
  }
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0) {
      pr_error(rt, "negative dimension %lld in a tensor shape", (long long)shape[i]);
      return NULL;
    }
  pr_Tensor *t = alloc_tensor(rt);
  if (t == NULL) return NULL;
  t->ndim = ndim;
  t->dtype = dtype;
  t->device = device;
  if (ndim > 0) memcpy(t->shape, shape, sizeof *shape * (size_t)ndim);
  contiguous_strides(t);
  if (device == PR_CPU) {
    size_t nbytes = (size_t)pr_numel(t) * (size_t)prof_dtype_size(dtype);
    /* the kernel would promise it lazily and kill the process on first touch: say so instead */
    int64_t live = rt->live != NULL ? *rt->live : 0;
    if (rt->memory_bytes > 0 && live + (int64_t)nbytes > rt->memory_bytes) {
      free(t);
      pr_error(rt, "cpu tensors would need %.1f GB, more than this machine's %.1f GB of memory; "
               "use device 'meta' to count a model without allocating it",
               (double)(live + (int64_t)nbytes) / 1e9, (double)rt->memory_bytes / 1e9);
      return NULL;
    }
    t->storage = calloc(1, sizeof *t->storage);
    void *data = t->storage ? calloc(nbytes ? nbytes : 1, 1) : NULL;
    if (data == NULL) {
      free(t->storage);
      free(t);
      pr_error(rt, "out of memory allocating %zu bytes", nbytes);
      return NULL;
    }
    t->storage->refs = 1;
    t->storage->nbytes = nbytes;
    t->storage->data = data;
    t->storage->live = rt->live;
    rt->allocated += (int64_t)nbytes;
    if (rt->live != NULL) *rt->live += (int64_t)nbytes;
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
  pr_Tensor *t = alloc_tensor(rt);
  if (t == NULL) return NULL;
  t->ndim = ndim;
  t->dtype = base->dtype;
  t->device = base->device;
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

void pr_tensor_release(pr_Tensor *t) {
  if (t == NULL || --t->refs > 0) return;
  pr_node_release(t->grad_fn);
  pr_tensor_release(t->grad);
  if (t->storage && --t->storage->refs == 0) {
    if (t->storage->live != NULL) *t->storage->live -= (int64_t)t->storage->nbytes;
    free(t->storage->data);
    free(t->storage);
  }
  free(t);
}

int64_t pr_numel(const pr_Tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}

int pr_is_contiguous(const pr_Tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] != 1 && t->stride[i] != s) return 0;
    s *= t->shape[i];
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
  if (prof_op_record(rt->rec, op) != PROF_OK)
    return pr_error(rt, "%s", prof_errmsg(rt->rec));
  return 0;
}
