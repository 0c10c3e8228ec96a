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

#endif
