/* nvtx_tree.c — NVTX range calls (push/pop, start/end, per domain and thread) -> module calls and op events. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"

#define MAX_OPS 64          /* open op ranges per thread (emit_nvtx nests a few: linear > addmm) */
#define MAX_DOMAINS 64
#define MAX_CATEGORIES 256
#define TYPE_SIZE 256
#define SEQ_SLOTS 65536     /* forward ops remembered by sequence number, for their backward */
#define CACHE_SLOTS 256     /* per thread: (parent, message) -> module, the common re-entry */
#define CACHE_TEXT 96       /* longer messages are not cached */

typedef struct Frame {
  uint8_t kind;             /* INJT_MODULE or INJT_OP */
  uint8_t done;             /* ended; closes when the frames opened after it have */
  uint8_t counted;          /* an op the formulas counted: ops inside it count zero */
  uint8_t phase_set;        /* opened the backward phase; saved_phase comes back at its close */
  int32_t saved_phase;
  uint32_t domain;
  uint64_t range_id;        /* nvtxRangeStart's id; 0 for a push */
  prof_ModuleId module;
  int32_t op;               /* index into the thread's ops, -1 for a module */
} Frame;

/* A module range seen before under the same parent: entered again without parsing its message. */
typedef struct CacheEntry {
  int valid;
  prof_ModuleId parent, module;
  uint32_t domain, category;
  char text[CACHE_TEXT];
} CacheEntry;

struct injT_Thread {
  injT_Thread *next;        /* the tree's list, for stats */
  injT_Tree *tree;
  int32_t index;            /* 0, 1, ... in order of first range */
  int entered;              /* the root is open on this thread */
  int32_t sp, nops, counted_depth, overflow;
  uint64_t next_range;
  injT_Stats stats;
  Frame frames[INJT_MAX_FRAMES];
  prof_Op ops[MAX_OPS];
  CacheEntry cache[CACHE_SLOTS];
};

typedef struct Category {
  uint32_t domain, id;
  const char *name;         /* interned */
} Category;

struct injT_Tree {
  prof_State *S;
  prof_ModuleId root;
  pthread_key_t key;
  pthread_mutex_t lock;     /* threads, domains, categories: all cold */
  injT_Thread *threads;
  int32_t nthreads;
  atomic_int closed;        /* injT_close_all ran: later calls are ignored (any thread reads it) */
  const char *domains[MAX_DOMAINS]; /* [0] unused: NVTX's default domain */
  int32_t ndomains;
  Category categories[MAX_CATEGORIES];
  int32_t ncategories;
  /* emit_nvtx's seq -> the module its forward op ran in: (seq << 24) | (module + 1), so that
     the autograd node with that seq runs its backward in the same module (any thread) */
  _Atomic uint64_t seq_module[SEQ_SLOTS];
};

static void close_frames(injT_Tree *T, injT_Thread *th);

/* A thread that ends closes its open ranges on its own recorder (pthread's key destructor). */
static void thread_exit(void *p) {
  injT_Thread *th = p;
  if (th->tree != NULL) injT_thread_done(th->tree, th);
}

int injT_new(prof_State *S, const char *root_type, injT_Tree **out) {
  *out = NULL;
  injT_Tree *T = calloc(1, sizeof *T);
  if (T == NULL) return PROF_ERRMEM;
  T->S = S;
  T->ndomains = 1;
  int rc = prof_module_add(S, PROF_NO_MODULE, "", root_type, 0, &T->root);
  if (rc != PROF_OK) {
    free(T);
    return rc;
  }
  if (pthread_key_create(&T->key, thread_exit) != 0) {
    free(T);
    return PROF_ERRMEM;
  }
  pthread_mutex_init(&T->lock, NULL);
  *out = T;
  return PROF_OK;
}

void injT_close_all(injT_Tree *T) {
  injT_Thread *th = pthread_getspecific(T->key);
  if (th != NULL) injT_thread_done(T, th);
  T->closed = 1;
}

void injT_free(injT_Tree *T) {
  if (T == NULL) return;
  pthread_key_delete(T->key);
  for (injT_Thread *th = T->threads, *next; th != NULL; th = next) {
    next = th->next;
    free(th);
  }
  pthread_mutex_destroy(&T->lock);
  free(T);
}

injT_Thread *injT_thread(injT_Tree *T) {
  injT_Thread *th = pthread_getspecific(T->key);
  if (th != NULL) return th;
  th = calloc(1, sizeof *th);
  if (th == NULL) return NULL;
  th->tree = T;
  pthread_mutex_lock(&T->lock);
  th->index = T->nthreads++;
  th->next = T->threads;
  T->threads = th;
  pthread_mutex_unlock(&T->lock);
  pthread_setspecific(T->key, th);
  return th;
}

void injT_thread_done(injT_Tree *T, injT_Thread *th) {
  if (T->closed) return;
  close_frames(T, th);
  th->overflow = 0;
  if (th->entered) prof_module_exit(T->S, T->root);
  th->entered = 0;
}

/* {====================== domains and categories ======================} */

uint32_t injT_domain(injT_Tree *T, const char *name) {
  const char *s = prof_intern(T->S, name != NULL ? name : "");
  if (s == NULL) return INJT_DEFAULT_DOMAIN;
  uint32_t d = INJT_DEFAULT_DOMAIN;
  pthread_mutex_lock(&T->lock);
  for (int32_t i = 1; i < T->ndomains; i++)
    if (T->domains[i] == s) d = (uint32_t)i; /* interned: equal strings, equal pointers */
  if (d == INJT_DEFAULT_DOMAIN && T->ndomains < MAX_DOMAINS) {
    d = (uint32_t)T->ndomains;
    T->domains[T->ndomains++] = s;
  }
  pthread_mutex_unlock(&T->lock);
  return d;
}

void injT_name_category(injT_Tree *T, uint32_t domain, uint32_t category, const char *name) {
  const char *s = prof_intern(T->S, name != NULL ? name : "");
  if (s == NULL) return;
  pthread_mutex_lock(&T->lock);
  int32_t i = 0;
  while (i < T->ncategories &&
         !(T->categories[i].domain == domain && T->categories[i].id == category))
    i++;
  if (i < MAX_CATEGORIES) {
    T->categories[i] = (Category){domain, category, s};
    if (i == T->ncategories) T->ncategories++;
  }
  pthread_mutex_unlock(&T->lock);
}

/* "domain::Category/Type" for a module's type; the plain type in the default domain. */
static void module_type(injT_Tree *T, uint32_t domain, uint32_t category, const char *type,
                        char *buf, size_t size) {
  const char *dname = NULL, *cname = NULL;
  if (domain != INJT_DEFAULT_DOMAIN || category != 0) {
    pthread_mutex_lock(&T->lock);
    if (domain < (uint32_t)T->ndomains) dname = T->domains[domain];
    for (int32_t i = 0; i < T->ncategories; i++)
      if (T->categories[i].domain == domain && T->categories[i].id == category)
        cname = T->categories[i].name;
    pthread_mutex_unlock(&T->lock);
  }
  snprintf(buf, size, "%s%s%s%s%s", dname ? dname : "", dname ? "::" : "", cname ? cname : "",
           cname ? "/" : "", type);
}

/* {====================== opening and closing ======================} */

static void close_top(injT_Tree *T, injT_Thread *th) {
  Frame *f = &th->frames[--th->sp];
  if (f->kind == INJT_MODULE) {
    prof_module_exit(T->S, f->module);
  } else {
    prof_op_end(T->S, &th->ops[f->op]);
    th->nops--;
    if (f->counted) th->counted_depth--;
  }
  if (f->phase_set) prof_set_phase(T->S, (prof_Phase)f->saved_phase);
}

static void close_frames(injT_Tree *T, injT_Thread *th) {
  while (th->sp > 0) close_top(T, th);
}

/* The innermost module frame's path into buf ("" for the root). */
static void parent_path(injT_Tree *T, char *buf, size_t size) {
  prof_ModuleId cur = prof_module_current(T->S);
  buf[0] = '\0';
  if (cur != PROF_NO_MODULE && cur != T->root) prof_module_path(T->S, cur, buf, size);
}

static int open_module(injT_Tree *T, injT_Thread *th, Frame *f, const injN_Range *r,
                       uint32_t category) {
  char type[TYPE_SIZE], ppath[TYPE_SIZE];
  module_type(T, f->domain, category, r->type, type, sizeof type);
  const char *name = r->type;
  if (r->name[0] != '\0') {
    /* "encoder.layer.0:BertLayer" inside "encoder": the attribute name is "layer.0" */
    parent_path(T, ppath, sizeof ppath);
    size_t n = strlen(ppath);
    name = r->name;
    if (n > 0 && strncmp(r->name, ppath, n) == 0 && r->name[n] == '.') name = r->name + n + 1;
  }
  prof_ModuleId id;
  if (prof_module_enter_named(T->S, name, type, &id) != PROF_OK) return 0;
  f->kind = INJT_MODULE;
  f->module = id;
  f->op = -1;
  th->stats.ranges++;
  return 1;
}

static int open_op(injT_Tree *T, injT_Thread *th, Frame *f, const injN_Range *r) {
  if (th->nops >= MAX_OPS) return 0;
  prof_Op *op = &th->ops[th->nops];
  int countable = injA_fill(r, op) && th->counted_depth == 0;
  if (!countable) {
    /* timed, not counted; its shapes still go to the trace (record_shapes) */
    memset(op, 0, sizeof *op);
    op->size = sizeof *op;
    op->kind = PROF_OP_CUSTOM;
    op->device = PROF_DEVICE_CUDA;
    for (int32_t i = 0; i < r->nsizes && op->ninputs < PROF_MAX_OPERANDS; i++)
      if (r->sizes[i].ndim >= 0) op->in[op->ninputs++] = r->sizes[i];
  }
  op->name = prof_intern(T->S, r->name);
  if (prof_op_begin(T->S, op) != PROF_OK) {
    th->stats.op_errors++;
    countable = 0;
    op->kind = PROF_OP_CUSTOM;
    op->macs = op->flops = op->bytes_read = op->bytes_written = 0;
    prof_op_begin(T->S, op);
  }
  f->kind = INJT_OP;
  f->op = th->nops++;
  f->module = PROF_NO_MODULE;
  f->counted = (uint8_t)countable;
  if (countable) {
    th->counted_depth++;
    th->stats.counted_ops++;
  }
  th->stats.ops++;
  return 1;
}

/*
** An autograd node whose forward op ran in module m: m opens again, in the backward phase, as a
** frame that closes with the node (an ended frame under it), so the backward lands in m.
*/
static void backward_module(injT_Tree *T, injT_Thread *th, const injN_Range *r) {
  uint64_t v = atomic_load_explicit(&T->seq_module[r->seq % SEQ_SLOTS], memory_order_relaxed);
  if (v == 0 || (int64_t)(v >> 24) != r->seq) return;
  prof_ModuleId m = (prof_ModuleId)(v & 0xffffff) - 1;
  if (m == PROF_NO_MODULE || m == prof_module_current(T->S) || m == T->root) return;
  Frame *f = &th->frames[th->sp++];
  memset(f, 0, sizeof *f);
  f->kind = INJT_MODULE;
  f->done = 1;
  f->module = m;
  f->op = -1;
  f->domain = UINT32_MAX; /* no pop matches it */
  prof_module_enter(T->S, m);
}

/* The cache slot of msg under parent: by the message's address (NVTX names are mostly string
   literals); its text is compared on every hit, so a reused buffer only misses. */
static CacheEntry *cache_slot(injT_Thread *th, const char *msg, prof_ModuleId parent,
                              uint32_t domain, uint32_t category) {
  uintptr_t h = (uintptr_t)msg ^ ((uintptr_t)msg >> 9) ^ ((uintptr_t)parent * 0x9e3779b1u) ^
                ((uintptr_t)domain << 5) ^ ((uintptr_t)category << 11);
  return &th->cache[h % CACHE_SLOTS];
}

static Frame *cached_module(injT_Tree *T, injT_Thread *th, uint32_t domain, uint32_t category,
                            const char *msg, uint64_t range_id) {
  if (!th->entered || th->sp >= INJT_MAX_FRAMES || msg == NULL) return NULL;
  prof_ModuleId parent = prof_module_current(T->S);
  const CacheEntry *e = cache_slot(th, msg, parent, domain, category);
  if (!e->valid || e->parent != parent || e->domain != domain || e->category != category ||
      strcmp(e->text, msg) != 0)
    return NULL;
  Frame *f = &th->frames[th->sp++];
  memset(f, 0, sizeof *f);
  f->kind = INJT_MODULE;
  f->module = e->module;
  f->op = -1;
  f->domain = domain;
  f->range_id = range_id;
  prof_module_enter(T->S, e->module);
  th->stats.ranges++;
  return f;
}

static void cache_put(injT_Thread *th, const char *msg, prof_ModuleId parent, uint32_t domain,
                      uint32_t category, prof_ModuleId module) {
  size_t n = msg != NULL ? strlen(msg) : CACHE_TEXT;
  if (n >= CACHE_TEXT) return;
  CacheEntry *e = cache_slot(th, msg, parent, domain, category);
  *e = (CacheEntry){.valid = 1, .parent = parent, .module = module, .domain = domain,
                    .category = category};
  memcpy(e->text, msg, n + 1);
}

/* Opens a frame for msg; returns it, or NULL when it could not be (counted in the stats). */
static Frame *open_frame(injT_Tree *T, injT_Thread *th, uint32_t domain, uint32_t category,
                         const char *msg, uint64_t range_id) {
  if (T->closed) return NULL;
  Frame *hit = cached_module(T, th, domain, category, msg, range_id);
  if (hit != NULL) return hit;
  injN_Range r;
  injN_parse(msg, &r);
  int32_t saved_phase = (int32_t)prof_get_phase(T->S);
  int phase_set = r.backward && saved_phase != PROF_PHASE_BACKWARD;
  /* a thread whose first range is a backward one (autograd's) enters the root in that phase */
  if (phase_set) prof_set_phase(T->S, PROF_PHASE_BACKWARD);
  if (!th->entered) {
    prof_module_enter(T->S, T->root);
    th->entered = 1;
  }
  if (r.backward && r.seq >= 0 && th->sp + 1 < INJT_MAX_FRAMES) backward_module(T, th, &r);
  if (th->sp >= INJT_MAX_FRAMES) {
    if (phase_set) prof_set_phase(T->S, (prof_Phase)saved_phase);
    th->stats.too_deep++;
    if (range_id == 0) th->overflow++; /* its pop is absorbed, so the open ones stay matched */
    return NULL;
  }
  Frame *f = &th->frames[th->sp];
  memset(f, 0, sizeof *f);
  f->domain = domain;
  f->range_id = range_id;
  f->phase_set = (uint8_t)phase_set;
  f->saved_phase = saved_phase;
  if (r.is_op && !r.backward && r.seq >= 0) {
    prof_ModuleId m = prof_module_current(T->S);
    atomic_store_explicit(&T->seq_module[r.seq % SEQ_SLOTS],
                          ((uint64_t)r.seq << 24) | (uint64_t)(m + 1), memory_order_relaxed);
  }
  prof_ModuleId parent = prof_module_current(T->S);
  int ok = r.is_op ? open_op(T, th, f, &r) : open_module(T, th, f, &r, category);
  if (ok && !r.is_op) cache_put(th, msg, parent, domain, category, f->module);
  if (!ok) {
    if (f->phase_set) prof_set_phase(T->S, (prof_Phase)f->saved_phase);
    th->stats.too_deep++;
    if (range_id == 0) th->overflow++;
    return NULL;
  }
  th->sp++;
  return f;
}

/* Ranges of domain open on th. */
static int domain_depth(const injT_Thread *th, uint32_t domain) {
  int n = 0;
  for (int32_t i = 0; i < th->sp; i++)
    n += th->frames[i].domain == domain && th->frames[i].range_id == 0 && !th->frames[i].done;
  return n;
}

/* Closes the frames that are done from the top down. */
static void unwind(injT_Tree *T, injT_Thread *th) {
  while (th->sp > 0 && th->frames[th->sp - 1].done) close_top(T, th);
}

int injT_push(injT_Tree *T, injT_Thread *th, uint32_t domain, uint32_t category, const char *msg) {
  open_frame(T, th, domain, category, msg, 0);
  return domain_depth(th, domain);
}

int injT_pop(injT_Tree *T, injT_Thread *th, uint32_t domain) {
  if (T->closed) return -1;
  if (th->overflow > 0) {
    th->overflow--;
    return domain_depth(th, domain);
  }
  int32_t i = th->sp - 1;
  while (i >= 0 && !(th->frames[i].domain == domain && th->frames[i].range_id == 0 &&
                     !th->frames[i].done))
    i--;
  if (i < 0) {
    th->stats.unmatched_pops++;
    return -1;
  }
  th->frames[i].done = 1;
  unwind(T, th);
  return domain_depth(th, domain);
}

uint64_t injT_start(injT_Tree *T, injT_Thread *th, uint32_t domain, uint32_t category,
                    const char *msg) {
  /* the thread in the high bits: an end finds its thread without a shared table */
  uint64_t id = ((uint64_t)(th->index + 1) << 40) | ++th->next_range;
  open_frame(T, th, domain, category, msg, id); /* one that could not open ends as unmatched */
  return id;
}

void injT_end(injT_Tree *T, injT_Thread *th, uint64_t id) {
  if (T->closed || id == 0) return;
  if ((int64_t)(id >> 40) != (int64_t)th->index + 1) {
    th->stats.foreign_ends++;
    return;
  }
  int32_t i = th->sp - 1;
  while (i >= 0 && th->frames[i].range_id != id) i--;
  if (i < 0) {
    th->stats.unmatched_pops++;
    return;
  }
  th->frames[i].done = 1;
  unwind(T, th);
}

void injT_record(injT_Tree *T, injT_Thread *th, prof_Op *op) {
  if (T->closed) return;
  if (!th->entered) {
    prof_module_enter(T->S, T->root);
    th->entered = 1;
  }
  if (th->counted_depth > 0 || prof_op_count(T->S, op) != PROF_OK) {
    op->kind = PROF_OP_CUSTOM;
    op->macs = op->flops = op->bytes_read = op->bytes_written = 0;
  } else {
    th->stats.counted_ops++;
  }
  th->stats.ops++;
  prof_op_record(T->S, op);
}

void injT_mark(injT_Tree *T, injT_Thread *th, const char *msg) {
  (void)th;
  if (T->closed) return;
  const char *s = prof_intern(T->S, msg != NULL ? msg : "");
  if (s != NULL) prof_instant(T->S, s);
}

void injT_stats(injT_Tree *T, injT_Stats *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&T->lock);
  for (const injT_Thread *th = T->threads; th != NULL; th = th->next) {
    out->ranges += th->stats.ranges;
    out->ops += th->stats.ops;
    out->counted_ops += th->stats.counted_ops;
    out->unmatched_pops += th->stats.unmatched_pops;
    out->foreign_ends += th->stats.foreign_ends;
    out->too_deep += th->stats.too_deep;
    out->op_errors += th->stats.op_errors;
  }
  pthread_mutex_unlock(&T->lock);
}
