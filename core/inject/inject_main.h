/* inject_main.h — the injection's process-wide context, shared by its NVTX and CUDA entry points. */
#ifndef INJECT_MAIN_H
#define INJECT_MAIN_H

#include <stdatomic.h>

#include "inject.h"

/*
** Environment (prof.launch sets these):
**   PROFRUN_INJECT_OUT     directory of the outputs (default "."): profile.<pid>.json (the
**                          "profrun.profile/1" document), trace.<pid>.json (Chrome trace) and,
**                          written last, inject.<pid>.json (what the mapping counted and missed)
**   PROFRUN_INJECT_CONFIG  a profrun config file: its flops_profiler.conventions apply
**   PROFRUN_INJECT_EVENTS  events buffered per thread for the trace (default 262144)
*/
typedef struct injM_Ctx {
  prof_State *S;
  injT_Tree *tree;
  int64_t pid;
  int record_shapes;
  int cuda_attached;             /* InitializeInjection ran and CUPTI took the subscription */
  _Atomic int64_t kernels;       /* kernels attributed (the CUDA side counts them) */
  atomic_int finished;
  void (*before_finish)(struct injM_Ctx *c); /* the CUDA side flushes its activity buffers */
  void *cuda;                    /* the CUDA side's state */
  char program[256];
  char outdir[PROF_PATH_SIZE - 64];
  char error[1024];              /* the first failure, for inject.<pid>.json */
} injM_Ctx;

/* The context, made on first use (NULL when out of memory); atexit writes it out. */
injM_Ctx *injM_get(void);

/* The context if it exists, else NULL (never makes it). */
injM_Ctx *injM_peek(void);

/* Closes the calling thread's ranges, stops the session and writes the outputs. Once. */
void injM_finish(injM_Ctx *c);

#endif
