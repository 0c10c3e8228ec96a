/* cublas_hook.c — installs a cuBLAS logger callback in the program's libcublas, so each GEMM call is an op with its shapes. */
#define _GNU_SOURCE /* RTLD_NOLOAD: only a libcublas the program already loaded */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "inject_main.h"

#define MAX_GEMMS 8

/* cuBLAS's logger callback takes no user data, so the hook keeps the context it was attached
   with; the context calls the hook, never the other way round. */
static _Atomic(injM_Ctx *) hooked;

/* The calling thread's parser (made on first use), under the context's key. */
static injC_Parser *parser_of(injM_Ctx *c) {
  injC_Parser *p = pthread_getspecific(c->cublas_key);
  if (p != NULL) return p;
  p = calloc(1, sizeof *p);
  if (p != NULL) pthread_setspecific(c->cublas_key, p);
  return p;
}

/* cuBLAS calls it on the thread of the API call, before the call's kernels are launched. */
static void on_log(const char *msg) {
  injM_Ctx *c = atomic_load_explicit(&hooked, memory_order_acquire);
  if (c == NULL || msg == NULL) return;
  injC_Parser *p = parser_of(c);
  injT_Thread *th = injT_thread(c->tree);
  if (p == NULL || th == NULL) return;
  injC_Gemm g[MAX_GEMMS + 1];
  int n = injC_feed(p, msg, g, MAX_GEMMS);
  /* a message that holds a whole call (header and parameters) ends it */
  if (strstr(msg, ") called") != NULL && injC_flush(p, &g[n])) n++;
  for (int i = 0; i < n; i++) {
    prof_Op op;
    injC_op(&g[i], &op);
    op.name = prof_intern(c->S, g[i].func);
    injT_record(c->tree, th, &op);
  }
}

int injM_attach_cublas(injM_Ctx *c) {
  const char *off = getenv("PROFRUN_INJECT_CUBLAS");
  if (c->cublas_attached || (off != NULL && strcmp(off, "0") == 0)) return c->cublas_attached;
  static const char *const libs[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
  for (size_t i = 0; i < sizeof libs / sizeof libs[0] && !c->cublas_attached; i++) {
    void *h = dlopen(libs[i], RTLD_NOW | RTLD_NOLOAD);
    if (h == NULL) continue;
    int (*configure)(int, int, int, const char *) =
        (int (*)(int, int, int, const char *))dlsym(h, "cublasLoggerConfigure");
    int (*set_callback)(void (*)(const char *)) =
        (int (*)(void (*)(const char *)))dlsym(h, "cublasSetLoggerCallback");
    /* logging on, to no stream and no file: the callback alone sees it */
    atomic_store_explicit(&hooked, c, memory_order_release);
    if (configure != NULL && set_callback != NULL && configure(1, 0, 0, NULL) == 0 &&
        set_callback(on_log) == 0)
      c->cublas_attached = 1;
    dlclose(h); /* the program's own reference keeps it loaded */
  }
  return c->cublas_attached;
}
