/* test_cuda.c — the cuda backend's host-side logic, on any machine: the allocator's size
   classes and the device's registration when no driver answers. */
#include <string.h>

#include "runtime.h"
#include "t.h"
#ifdef PR_HAVE_CUDA
#include "cuda/cuda.h"
#endif

#ifdef PR_HAVE_CUDA
/* By hand: 512 bytes for small requests, then 2^k + q·2^(k-2) for q = 1..4 above 2^k, so a
   block is at most a quarter larger than its request (past 512). */
static void test_size_classes(void) {
  size_t b;
  T_EQ_INT(pr_cuda_size_class(1, &b), 0);
  T_EQ_INT((int64_t)b, 512);
  T_EQ_INT(pr_cuda_size_class(512, &b), 0);
  T_EQ_INT((int64_t)b, 512);
  T_EQ_INT(pr_cuda_size_class(513, &b), 1);
  T_EQ_INT((int64_t)b, 640);
  T_EQ_INT(pr_cuda_size_class(640, &b), 1);
  T_EQ_INT(pr_cuda_size_class(641, &b), 2);
  T_EQ_INT((int64_t)b, 768);
  T_EQ_INT(pr_cuda_size_class(1024, &b), 4);
  T_EQ_INT((int64_t)b, 1024);
  T_EQ_INT(pr_cuda_size_class(1025, &b), 5);
  T_EQ_INT((int64_t)b, 1280);
  T_EQ_INT(pr_cuda_size_class(((size_t)1 << 30) + 1, &b), 1 + (30 - 9) * 4);
  T_EQ_INT((int64_t)b, ((int64_t)1 << 30) + ((int64_t)1 << 28));
  /* every request fits its block, the waste stays under a quarter, classes never go back */
  int prev = -1;
  for (size_t n = 1; n < ((size_t)1 << 22); n += n / 7 + 1) {
    int c = pr_cuda_size_class(n, &b);
    T_CHECK(c >= prev && b >= n && (n <= 512 || (double)b <= 1.25 * (double)n));
    prev = c;
  }
}
#endif

/* Without a driver the device is registered but refuses tensors, naming the reason; with one it
   holds values (a GPU machine runs spec/gpu for the rest). */
static void test_registration(void) {
  pr_Runtime rt;
  pr_runtime_init(&rt);
  int dev = pr_device_parse(&rt, "cuda");
  const pr_Backend *be = pr_device_backend(&rt, dev);
  T_CHECK(be != NULL && strcmp(be->name, "cuda") == 0 && be->prof_device == PROF_DEVICE_CUDA);
  int64_t shape[1] = {4};
  pr_Tensor *t = pr_tensor_new(&rt, 1, shape, PROF_F32, dev);
  if (be->unavailable != NULL) {
    T_CHECK(t == NULL);
    T_EQ_STR(rt.err, be->unavailable);
    T_CHECK(strncmp(be->unavailable, "device 'cuda'", 13) == 0);
  } else {
    T_CHECK(t != NULL && pr_holds_values(t));
    pr_tensor_release(t);
  }
  T_EQ_INT(rt.live_bytes, 0);
}

int main(void) {
#ifdef PR_HAVE_CUDA
  T_RUN(test_size_classes);
#endif
  T_RUN(test_registration);
  return T_DONE();
}
