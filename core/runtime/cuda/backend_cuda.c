/* backend_cuda.c — the cuda device of a build without CUDA: registered so that asking for it is
   refused with a clear message rather than "unknown device". */
#include "runtime.h"

/* No tensor is ever made on an unavailable device, so it needs no allocator and no kernels. */
static const pr_Backend cuda = {
    .name = "cuda", .prof_device = PROF_DEVICE_CUDA, .holds_values = 1,
    .unavailable = "device 'cuda' is not available in this build; use 'meta' or 'cpu'"};

const pr_Backend *pr_backend_cuda(void) { return &cuda; }
