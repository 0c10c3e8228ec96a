/* lpeaks.c — Lua bindings of the machine-peak measurements: peak_gemm_flops, peak_copy_bandwidth, blas_threads. */
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

void lbind_open_peaks(lua_State *L) {
  static const luaL_Reg funcs[] = {
      {"peak_gemm_flops", l_peak_gemm_flops}, {"peak_copy_bandwidth", l_peak_copy_bandwidth},
      {"blas_threads", l_blas_threads}, {NULL, NULL}};
  lbind_register(L, funcs);
}
