/* backend_meta.c — the shapes-only device: allocates nothing, every kernel is a no-op. */
#include "runtime.h"

/* the stubs take the kernels' parameters and read none of them */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#define STUB(name, params, args) static int meta_##name params { return 0; }
PR_KERNEL_LIST(STUB)
#undef STUB

#define ENTRY(name, params, args) .name = meta_##name,
static const pr_Kernels kernels = {PR_KERNEL_LIST(ENTRY)};
#undef ENTRY

/* Never called: a shapes-only device gets no storage. */
static void *meta_alloc(const pr_Backend *be, size_t nbytes) { return NULL; }
static void meta_free(const pr_Backend *be, void *p, size_t nbytes) {}
static int meta_copy(const pr_Backend *be, pr_Runtime *rt, void *dst, const void *src, size_t n) {
  return 0;
}
static int meta_zero(const pr_Backend *be, pr_Runtime *rt, void *p, size_t n) { return 0; }

static const pr_Backend meta = {
    .name = "meta", .prof_device = PROF_DEVICE_CPU, .holds_values = 0, .alloc = meta_alloc,
    .free = meta_free, .to_host = meta_copy, .from_host = meta_copy, .copy = meta_copy,
    .zero = meta_zero, .k = &kernels};

const pr_Backend *pr_backend_meta(void) { return &meta; }
