/* test_nvtx_cublas.c — cuBLAS logger lines -> GEMM shapes -> FLOPs by the core's formulas, recorded in the innermost NVTX range. */
#include <stdlib.h>
#include <string.h>

#include "inject/inject.h"
#include "t.h"

/*
** Lines in the shape cuBLAS's logger writes them (CUBLAS_LOGINFO_DBG=1, as the cuBLAS guide's
** "cuBLAS Logging" section shows: a header naming the function, one "name: type=T; val=V" line
** per parameter, then Time and Process lines). Written by hand from that description: they have
** not been compared with a real GPU's log yet (no GPU here).
*/
static const char *const SGEMM =
    "I! cuBLAS (v13.0) function cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t, "
    "cublasOperation_t, int, int, int, const float*, const float*, int, const float*, int, const "
    "float*, float*, int) called:\n"
    "i!  handle: type=cublasHandle_t; val=POINTER (IN HEX:0x0x5583c5a0)\n"
    "i!  transa: type=cublasOperation_t; val=CUBLAS_OP_N(0)\n"
    "i!  transb: type=cublasOperation_t; val=CUBLAS_OP_T(1)\n"
    "i!  m: type=int; val=128\n"
    "i!  n: type=int; val=64\n"
    "i!  k: type=int; val=32\n"
    "i!  alpha: type=float; val=POINTER (IN HEX:0x0x7ffd)\n"
    "i!  lda: type=int; val=128\n"
    "i! Time: 2026-12-02T00:40:00 elapsed from start 0.000000 minutes or 0.000000 seconds\n"
    "i!Process=1234; Thread=5678; GPU=0; Handle=POINTER (IN HEX:0x0x5583c5a0); StreamId=0\n";

static const char *const GEMM_EX_BATCHED =
    "I! cuBLAS (v13.0) function cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t, ...) called:\n"
    "i!  m: type=int; val=16\n"
    "i!  n: type=int; val=8\n"
    "i!  k: type=int; val=4\n"
    "i!  Atype: type=cudaDataType_t; val=CUDA_R_16BF(14)\n"
    "i!  batchCount: type=int; val=3\n";

static const char *const ZGEMM =
    "I! cuBLAS (v13.0) function cublasStatus_t cublasZgemm_v2(cublasHandle_t, ...) called:\n"
    "i!  m: type=int; val=2\n"
    "i!  n: type=int; val=3\n"
    "i!  k: type=int; val=5\n";

static const char *const NOT_GEMM =
    "I! cuBLAS (v13.0) function cublasStatus_t cublasSaxpy_v2(cublasHandle_t, int, ...) called:\n"
    "i!  n: type=int; val=1000\n";

static void test_sgemm_block(void) {
  injC_Parser p;
  memset(&p, 0, sizeof p);
  injC_Gemm g[4];
  T_EQ_INT(injC_feed(&p, SGEMM, g, 4), 1); /* the Time line ends it */
  T_EQ_STR(g[0].func, "cublasSgemm_v2");
  T_EQ_INT(g[0].m, 128);
  T_EQ_INT(g[0].n, 64);
  T_EQ_INT(g[0].k, 32);
  T_EQ_INT(g[0].batch, 1);
  T_EQ_INT(g[0].dtype, PROF_F32);
  T_EQ_INT(injC_flush(&p, &g[1]), 0);       /* nothing left open */
  prof_State *S = prof_new(NULL, NULL);
  prof_Op op;
  injC_op(&g[0], &op);
  T_EQ_INT(op.kind, PROF_OP_MM);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  T_EQ_INT(op.macs, 128 * 64 * 32);         /* m n k */
  T_EQ_INT(op.flops, 2 * 128 * 64 * 32);
  prof_close(S);
}

static void test_line_by_line_and_kinds(void) {
  /* a logger that hands one line per call: a call ends at the next header or at flush */
  injC_Parser p;
  memset(&p, 0, sizeof p);
  injC_Gemm g[4];
  int n = 0;
  const char *const blocks[] = {GEMM_EX_BATCHED, NOT_GEMM, ZGEMM};
  for (int b = 0; b < 3; b++) {
    char buf[2048];
    snprintf(buf, sizeof buf, "%s", blocks[b]);
    for (char *line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n"))
      n += injC_feed(&p, line, g + n, 4 - n);
  }
  n += injC_flush(&p, g + n);
  T_EQ_INT(n, 2); /* the batched Ex and the Zgemm; saxpy is no GEMM */
  T_EQ_STR(g[0].func, "cublasGemmStridedBatchedEx");
  T_EQ_INT(g[0].batch, 3);
  T_EQ_INT(g[0].dtype, PROF_BF16);
  T_EQ_STR(g[1].func, "cublasZgemm_v2");
  T_CHECK(g[1].complex_);
  prof_State *S = prof_new(NULL, NULL);
  prof_Op op;
  injC_op(&g[0], &op);
  T_EQ_INT(op.kind, PROF_OP_BMM);
  T_EQ_INT(op.in[0].dim[0], 3);
  T_EQ_INT(op.in[0].dtype, PROF_BF16);
  T_EQ_INT(prof_op_count(S, &op), PROF_OK);
  T_EQ_INT(op.macs, 3 * 16 * 8 * 4);
  T_EQ_INT(op.bytes_read, (3 * 16 * 4 + 3 * 4 * 8) * 2); /* bf16 operands, 2 bytes each */
  injC_op(&g[1], &op);
  /* complex: (a+bi)(c+di) is 4 real multiplies and 4 adds per complex MAC */
  T_EQ_INT(op.macs, 4 * 2 * 3 * 5);
  T_EQ_INT(op.flops, 8 * 2 * 3 * 5);
  prof_close(S);
}

static void test_recorded_in_innermost_range(void) {
  prof_State *S = prof_new(NULL, NULL);
  injT_Tree *T;
  injT_new(S, "app", &T);
  prof_start(S);
  injT_Thread *th = injT_thread(T);
  injC_Parser p;
  memset(&p, 0, sizeof p);
  injC_Gemm g[2];
  injT_push(T, th, 0, 0, "decoder:Decoder");
  T_EQ_INT(injC_feed(&p, SGEMM, g, 2), 1);
  prof_Op op;
  injC_op(&g[0], &op);
  op.name = "cublasSgemm_v2";
  injT_record(T, th, &op);
  /* inside an op range the formulas counted (aten::mm over its cublasSgemm): not twice */
  injT_push(T, th, 0, 0, "aten::mm, sizes = [[128, 32], [32, 64]]");
  injC_op(&g[0], &op);
  injT_record(T, th, &op);
  injT_pop(T, th, 0);
  injT_pop(T, th, 0);
  injT_close_all(T);
  prof_stop(S);
  prof_ModuleInfo mi = {.size = sizeof mi};
  prof_module_info(S, 1, &mi);
  T_EQ_STR(mi.type, "Decoder");
  /* the GEMM logged outside every op, plus aten::mm's own count: 2 x 128*64*32 */
  T_EQ_INT(mi.phase[PROF_PHASE_FORWARD].macs, 2 * 128 * 64 * 32);
  injT_free(T);
  prof_close(S);
}

int main(void) {
  T_RUN(test_sgemm_block);
  T_RUN(test_line_by_line_and_kinds);
  T_RUN(test_recorded_in_innermost_range);
  return T_DONE();
}
