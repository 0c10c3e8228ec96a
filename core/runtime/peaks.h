/* peaks.h — the machine-peak measurements of peaks.c (achievable GEMM FLOP/s, copy bandwidth). */
#ifndef PR_PEAKS_H
#define PR_PEAKS_H

#include <stddef.h>

#include "runtime.h"

/*
** Achievable float32 FLOP/s: C = A·B (n x n, OpenBLAS sgemm, 2·n³ FLOPs per product), one warm-up
** product then the best of `runs`. The three matrices are allocated and freed inside the call.
** Returns 0 and *flops_per_s, or PR_ERR (rt->err says why: bad size, out of memory).
*/
int pr_peak_gemm_flops(pr_Runtime *rt, int n, int runs, double *flops_per_s);

/*
** Achievable memory bandwidth: memcpy of `bytes` between two fresh buffers, counted as bytes read
** plus bytes written (2·bytes per copy, as STREAM's copy counts it), one warm-up copy then the best
** of `runs`. Buffers are allocated and freed inside the call. Returns 0 or PR_ERR (rt->err).
*/
int pr_peak_copy_bandwidth(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s);

/* The number of threads OpenBLAS runs sgemm on (the peaks depend on it). */
int pr_blas_threads(void);

/*
** The GPU's peaks (cuda builds; elsewhere PR_ERR saying the build has no cuda): the best of
** `runs` n×n×n cuBLAS GEMMs in dtype ("float32", "tf32", "bfloat16", "float16"), timed by CUDA
** events after a warm-up, 2·n³ FLOPs each; and device-to-device copy bandwidth of `bytes`,
** read + written. 0 or PR_ERR (rt->err: no device, no cuBLAS, bad size, out of device memory).
*/
int pr_peak_gpu_gemm(pr_Runtime *rt, const char *dtype, int n, int runs, double *flops_per_s);
int pr_peak_gpu_copy(pr_Runtime *rt, size_t bytes, int runs, double *bytes_per_s);

/* NULL when a GPU is usable, else why not; name gets the device's name ("" when none),
   *have_blas whether cuBLAS loaded (else *blas_why says why). */
const char *pr_gpu_status(char *name, size_t size, int *have_blas, const char **blas_why);

/* TF32 tensor cores for float32 GEMMs on the GPU (off by default); a no-op without cuda. */
void pr_gpu_set_tf32(int on);

/* Waits until the calling thread's GPU work is done (timing a step from the host needs it);
   0 at once without a GPU. PR_ERR (rt->err) when that work failed. */
int pr_gpu_synchronize(pr_Runtime *rt);

#endif
