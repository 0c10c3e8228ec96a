/* lpeaks.c — Lua bindings of the machine-peak measurements: peak_gemm_flops, peak_copy_bandwidth,
   blas_threads, and the GPU's: peak_gpu_gemm, peak_gpu_copy, gpu_status, gpu_set_tf32, gpu_sync. */
#include "lbind.h"
#include "peaks.h"

/* core.peak_gemm_flops{n=1024, runs=3} -> FLOP/s | nil, message */
static int l_peak_gemm_flops(lua_State *L) {
  lua_Integer n = lbind_opt_int(L, 1, "n", 1024);
  lua_Integer runs = lbind_opt_int(L, 1, "runs", 3);
  luaL_argcheck(L, n >= 1 && n <= 16384, 1, "n must be in 1..16384");
  luaL_argcheck(L, runs >= 1 && runs <= 1000, 1, "runs must be in 1..1000");
  double v;
  if (pr_peak_gemm_flops(lbind_rt(L), (int)n, (int)runs, &v) != 0) {
    luaL_pushfail(L);
    lua_pushstring(L, lbind_rt(L)->err);
    return 2;
  }
  lua_pushnumber(L, v);
  return 1;
}

/* core.peak_copy_bandwidth{bytes=64 MiB, runs=3} -> bytes/s (read + written) | nil, message */
static int l_peak_copy_bandwidth(lua_State *L) {
  lua_Integer bytes = lbind_opt_int(L, 1, "bytes", (lua_Integer)64 << 20);
  lua_Integer runs = lbind_opt_int(L, 1, "runs", 3);
  luaL_argcheck(L, bytes >= 1 && bytes <= ((lua_Integer)1 << 40), 1, "bytes must be in 1..2^40");
  luaL_argcheck(L, runs >= 1 && runs <= 1000, 1, "runs must be in 1..1000");
  double v;
  if (pr_peak_copy_bandwidth(lbind_rt(L), (size_t)bytes, (int)runs, &v) != 0) {
    luaL_pushfail(L);
    lua_pushstring(L, lbind_rt(L)->err);
    return 2;
  }
  lua_pushnumber(L, v);
  return 1;
}

/* core.blas_threads() -> the number of threads OpenBLAS uses */
static int l_blas_threads(lua_State *L) {
  lua_pushinteger(L, pr_blas_threads());
  return 1;
}

/* core.peak_gpu_gemm{dtype="bfloat16", n=8192, runs=5} -> FLOP/s | nil, message */
static int l_peak_gpu_gemm(lua_State *L) {
  const char *dtype = lbind_opt_str(L, 1, "dtype", "float32");
  lua_Integer n = lbind_opt_int(L, 1, "n", 8192);
  lua_Integer runs = lbind_opt_int(L, 1, "runs", 5);
  luaL_argcheck(L, n >= 1 && n <= 32768, 1, "n must be in 1..32768");
  luaL_argcheck(L, runs >= 1 && runs <= 1000, 1, "runs must be in 1..1000");
  double v;
  if (pr_peak_gpu_gemm(lbind_rt(L), dtype, (int)n, (int)runs, &v) != 0) {
    luaL_pushfail(L);
    lua_pushstring(L, lbind_rt(L)->err);
    return 2;
  }
  lua_pushnumber(L, v);
  return 1;
}

/* core.peak_gpu_copy{bytes=1 GiB, runs=5} -> bytes/s (read + written) | nil, message */
static int l_peak_gpu_copy(lua_State *L) {
  lua_Integer bytes = lbind_opt_int(L, 1, "bytes", (lua_Integer)1 << 30);
  lua_Integer runs = lbind_opt_int(L, 1, "runs", 5);
  luaL_argcheck(L, bytes >= 1 && bytes <= ((lua_Integer)1 << 40), 1, "bytes must be in 1..2^40");
  luaL_argcheck(L, runs >= 1 && runs <= 1000, 1, "runs must be in 1..1000");
  double v;
  if (pr_peak_gpu_copy(lbind_rt(L), (size_t)bytes, (int)runs, &v) != 0) {
    luaL_pushfail(L);
    lua_pushstring(L, lbind_rt(L)->err);
    return 2;
  }
  lua_pushnumber(L, v);
  return 1;
}

/* core.gpu_status() -> {available=, why=, name=, cublas=, cublas_why=} */
static int l_gpu_status(lua_State *L) {
  char name[256];
  int blas = 0;
  const char *blas_why = "";
  const char *why = pr_gpu_status(name, sizeof name, &blas, &blas_why);
  lua_createtable(L, 0, 5);
  lua_pushboolean(L, why == NULL);
  lua_setfield(L, -2, "available");
  if (why != NULL) {
    lua_pushstring(L, why);
    lua_setfield(L, -2, "why");
  }
  lua_pushstring(L, name);
  lua_setfield(L, -2, "name");
  lua_pushboolean(L, blas);
  lua_setfield(L, -2, "cublas");
  if (!blas) {
    lua_pushstring(L, blas_why);
    lua_setfield(L, -2, "cublas_why");
  }
  return 1;
}

/* core.gpu_set_tf32(on): float32 GEMMs on TF32 tensor cores (device_options.tf32) */
static int l_gpu_set_tf32(lua_State *L) {
  pr_gpu_set_tf32(lua_toboolean(L, 1));
  return 0;
}

/* core.gpu_sync(): waits for this thread's GPU work (a host timing of GPU work needs it) */
static int l_gpu_sync(lua_State *L) {
  if (pr_gpu_synchronize(lbind_rt(L)) != 0) return luaL_error(L, "%s", lbind_rt(L)->err);
  return 0;
}

void lbind_open_peaks(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"peak_gemm_flops", l_peak_gemm_flops}, {"peak_copy_bandwidth", l_peak_copy_bandwidth},
      {"blas_threads", l_blas_threads}, {"peak_gpu_gemm", l_peak_gpu_gemm},
      {"peak_gpu_copy", l_peak_gpu_copy}, {"gpu_status", l_gpu_status},
      {"gpu_set_tf32", l_gpu_set_tf32}, {"gpu_sync", l_gpu_sync}, {NULL, NULL}};
  lbind_register(L, funcs);
}
