/* inject_main.h — the injection's process-wide context, shared by its NVTX and CUDA entry points. */
#ifndef INJECT_MAIN_H
#define INJECT_MAIN_H

#include <pthread.h>
#include <stdatomic.h>

#include "inject.h"

/*
** Environment (prof.launch sets these):
**   PROFRUN_INJECT_OUT     directory of the outputs (default "."): profile.<pid>.json (the
**                          "profrun.profile/1" document), trace.<pid>.json (Chrome trace) and,
**                          written last, inject.<pid>.json (what the mapping counted and missed)
**   PROFRUN_INJECT_CONFIG  a profrun config file: its flops_profiler.conventions apply
**   PROFRUN_INJECT_CONVENTIONS  "exact" or "deepspeed": wins over the config's
**   PROFRUN_INJECT_CUDA    "0": no CUPTI capture even when CUDA_INJECTION64_PATH loads this
**   PROFRUN_INJECT_CUBLAS  "0": no cuBLAS logger callback
**   PROFRUN_INJECT_EVENTS  events buffered per thread for the trace (default 262144)
*/
typedef struct injM_Ctx {
  prof_State *S;
  injT_Tree *tree;
  int64_t pid;
  int record_shapes;
  int cuda_attached;             /* InitializeInjection ran and CUPTI took the subscription */
  atomic_int finished;
  int cublas_attached;           /* the cuBLAS logger callback is installed (cublas_hook.c) */
  pthread_key_t cublas_key;      /* each thread's injC_Parser */
  int cublas_key_made;
  char program[256];
  char outdir[PROF_PATH_SIZE - 64];
  char error[1024];              /* the first failure, for inject.<pid>.json */
  char cuda_error[512];          /* why no CUPTI capture runs ("" when one does or none was asked) */
} injM_Ctx;

/* The context, made on first use (NULL when out of memory); atexit writes it out. */
injM_Ctx *injM_get(void);

/*
** For the CUDA driver's InitializeInjection (inside cuInit): makes the context on a helper thread,
** so that the capture's own driver check runs once cuInit has returned, never inside it. NVTX
** calls made meanwhile are dropped. 0 when the thread could not start.
*/
int injM_get_later(void);

/*
** Installs the cuBLAS logger callback when the program has loaded libcublas (13 or 12) and
** PROFRUN_INJECT_CUBLAS is not "0": each cuBLAS GEMM is then an op, with m, n, k from the log,
** in the innermost NVTX range. Returns whether it is installed; call it again later (a program
** may load cuBLAS after cuInit).
*/
int injM_attach_cublas(injM_Ctx *c);

/* The context if it exists, else NULL (never makes it). */
injM_Ctx *injM_peek(void);

/* Closes the calling thread's ranges, stops the session and writes the outputs. Once. */
void injM_finish(injM_Ctx *c);

#endif
