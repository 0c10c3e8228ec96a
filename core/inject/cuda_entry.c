/* cuda_entry.c — InitializeInjection: the CUDA driver's entry into libprof_inject.so (CUDA_INJECTION64_PATH). */
#include "inject_main.h"

#define INJ_EXPORT __attribute__((visibility("default")))

/*
** The driver calls this once, inside cuInit, when CUDA_INJECTION64_PATH names this library.
** When the program's NVTX calls made the context first, its CUPTI capture is already open (made
** before the session started). Otherwise the context, and with it the capture, is made on a
** helper thread: the capture's driver check calls cuInit, which must not run inside cuInit.
** Returns 1 (the driver ignores the value).
*/
INJ_EXPORT int InitializeInjection(void);

INJ_EXPORT int InitializeInjection(void) {
  injM_Ctx *c = injM_peek();
  if (c == NULL) injM_get_later();
  else if (c->cuda_attached) injM_attach_cublas(c); /* cuBLAS may have come since */
  return 1;
}
