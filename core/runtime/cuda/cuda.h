/* cuda.h — the cuda backend's internal interface: its context (cuda_ctx.cu) and kernels (*.cu). */
#ifndef PR_CUDA_H
#define PR_CUDA_H

/*
** Included by backend_cuda.c (C) and by the .cu files (C++, through cuda_util.cuh). Every kernel
** here has the signature of its pr_Kernels entry (kernels.h) and the contract of its cpu twin
** (cpu.h); what differs is listed next to it. Kernels run on the calling thread's stream
** (cudaStreamPerThread: one stream per recorder thread, no state of ours) and return without
** waiting, except where a value must reach the host.
*/
#ifdef __cplusplus
extern "C" {
#endif

#include "runtime.h"

/* {====================== the context (cuda_ctx.cu) ======================} */

/* NULL when a device is usable, else why not ("no CUDA driver found (cudaGetDeviceCount: ...)").
   The first call probes (once per process, thread-safe); later calls return the same answer. */
const char *pr_cuda_probe(void);

/* The caching allocator: zero-filled device blocks; freed blocks wait in size-class lists for
   the next request of their class from the same thread. NULL: out of device memory. */
void *pr_cuda_alloc(size_t nbytes);
void pr_cuda_free(void *p, size_t nbytes);

/* The allocator's size class of a request of n bytes and the bytes its blocks hold (512, then
   four steps per octave: 640, 768, 896, 1024, 1280, ...); -1 past the largest class. */
int pr_cuda_size_class(size_t n, size_t *bytes);

/* Copies and memset on the calling thread's stream; the two that touch host memory wait for it
   (the host buffer is read or written when they return). 0, or PR_ERR with rt->err "<what> on
   cuda: <CUDA's error>". */
int pr_cuda_to_host(pr_Runtime *rt, void *host, const void *dev, size_t n);
int pr_cuda_from_host(pr_Runtime *rt, void *dev, const void *host, size_t n);
int pr_cuda_copy(pr_Runtime *rt, void *dst, const void *src, size_t n);
int pr_cuda_zero(pr_Runtime *rt, void *dev, size_t n);

/* After launches: 0, or PR_ERR with rt->err "<op> on cuda: <CUDA's error>" (a launch error, or
   an asynchronous one of earlier work on the stream, which CUDA reports at the next call). */
int pr_cuda_check(pr_Runtime *rt, const char *op);

/* Refuses an op this backend does not compute: PR_ERR, "<op>: not implemented on device 'cuda'
   (...)". */
int pr_cuda_refuse(pr_Runtime *rt, const char *op, const char *why);

/* Waits for the calling thread's stream: 0, or PR_ERR with what failed in it. */
int pr_cuda_sync(pr_Runtime *rt);

/* TF32 tensor cores for float32 GEMMs (off by default: float32 results as the cpu's). */
void pr_cuda_set_tf32(int on);
int pr_cuda_tf32(void);

/*
** Row-major C[m, n] = alpha · op(A) · op(B) + beta · C for `batch` products at element strides
** sa, sb, sc between them; ta/tb: A/B stored transposed (A^T is [k, m] with row stride lda).
** dtype PROF_F32, PROF_F16 or PROF_BF16 for A and B; C is float32 when dtype is float32, else
** dtype. Through cuBLAS (cublasGemmStridedBatchedEx, float accumulation) when it loaded, else the
** backend's own tiled kernel. 0 or PR_ERR (rt->err).
*/
int pr_cuda_gemm(pr_Runtime *rt, const char *op, int dtype, int ta, int tb, int64_t m, int64_t n,
                 int64_t k, float alpha, const void *A, int64_t lda, int64_t sa, const void *B,
                 int64_t ldb, int64_t sb, float beta, void *C, int64_t ldc, int64_t sc,
                 int64_t batch);

/* 1 when cuBLAS was loaded (libcublas.so.13 found at the first use), else 0 and *why says why. */
int pr_cuda_have_cublas(const char **why);

/* The peaks of peaks.c on the device: best of `runs` n×n×n cuBLAS GEMMs in dtype (tf32: float32
   on TF32 tensor cores), timed by CUDA events after one warm-up; and device-to-device copy
   bandwidth (read + write bytes per second). 0 or PR_ERR (rt->err). */
int pr_cuda_peak_gemm(pr_Runtime *rt, int dtype, int tf32, int n, int runs, double *flops_per_s);
int pr_cuda_peak_copy(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s);

/* The device's name ("NVIDIA H200") into buf; "" when none. */
const char *pr_cuda_device_name(char *buf, size_t size);

/* {====================== kernels (signatures of kernels.h) ======================} */

#define PR_CUDA_DECL(name, params, args) int pr_cuda_##name params;
PR_KERNEL_LIST(PR_CUDA_DECL)
#undef PR_CUDA_DECL

#ifdef __cplusplus
}
#endif

#endif
