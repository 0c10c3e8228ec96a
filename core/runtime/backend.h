/* backend.h — a device as a table: allocator, copies and one kernel per op kind; included by runtime.h. */
#ifndef PR_BACKEND_H
#define PR_BACKEND_H

/*
** A backend owns a device's memory and arithmetic. Ops and bindings reach it only through this
** table (t->be), so adding a device means adding a backend and registering it on the runtime
** (pr_device_register); no op, autograd or binding file names a device.
*/
typedef struct pr_Kernels pr_Kernels;
struct pr_Runtime;                        /* runtime.h: where a failing copy leaves its message */
typedef struct pr_SgdArgs pr_SgdArgs;     /* the sgd and adam kernels' arguments (ops.h) */
typedef struct pr_AdamArgs pr_AdamArgs;

typedef struct pr_Backend {
  const char *name;            /* "cpu": what users pass as device= */
  int32_t prof_device;         /* PROF_DEVICE_* of its ops and memory events */
  int32_t holds_values;        /* 0: shapes only (nothing allocated, every kernel a no-op) */
  const char *unavailable;     /* non-NULL: the message that refuses tensors on it in this build */
  void *ud;                    /* the backend's own state (a wrapping backend's counters) */
  /* Memory: zero-filled blocks of nbytes (> 0); NULL when out of memory. free is NULL-safe.
     (All of these and k are NULL on an unavailable backend, which no tensor reaches.) */
  void *(*alloc)(const struct pr_Backend *be, size_t nbytes);
  void (*free)(const struct pr_Backend *be, void *p, size_t nbytes);
  /* Copies of n bytes: device to host, host to device, device to device; and n bytes at dev set
     to zero. 0, or PR_ERR with rt's message saying why (the kernels' one way to fail). */
  int (*to_host)(const struct pr_Backend *be, struct pr_Runtime *rt, void *host, const void *dev,
                 size_t n);
  int (*from_host)(const struct pr_Backend *be, struct pr_Runtime *rt, void *dev, const void *host,
                   size_t n);
  int (*copy)(const struct pr_Backend *be, struct pr_Runtime *rt, void *dst, const void *src,
              size_t n);
  int (*zero)(const struct pr_Backend *be, struct pr_Runtime *rt, void *dev, size_t n);
  const pr_Kernels *k;         /* the kernels (kernels.h); NULL only where unavailable is set */
} pr_Backend;

/* The built-in backends (meta/, cpu/, cuda/). */
const pr_Backend *pr_backend_meta(void);
const pr_Backend *pr_backend_cpu(void);
const pr_Backend *pr_backend_cuda(void);

#define PR_MAX_DEVICES 8

#endif
