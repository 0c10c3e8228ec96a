/* host.c — a C host that owns its lua_State: it records through prof.h and reports through a Lua script. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <prof.h>
#include <stdio.h>
#include <string.h>

/*
** Net = fc1 Linear(8, 16) -> act GELU -> fc2 Linear(16, 4), CALLS forwards of a BATCH x 8 input
** computed here, recorded through C. Then the host opens prof (the Lua package installed under
** PROF_PREFIX) in its own lua_State, lends it the session (prof.core.borrow) and runs SCRIPT,
** which renders it with a report script. Usage: host SCRIPT OUTDIR [FORMAT]: writes
** OUTDIR/report_lua.txt (the script's text) and OUTDIR/report_c.txt (prof_write_deepspeed_report).
*/
#ifndef PROF_PREFIX
#error "build with -DPROF_PREFIX=\"$(pkg-config --variable=prefix prof)\" (see Makefile)"
#endif

enum { IN = 8, HID = 16, OUT = 4, BATCH = 2, CALLS = 5 };

static void linear(prof_State *S, int n_in, int n_out, const float *x, float *y) {
  for (int r = 0; r < BATCH; r++)
    for (int o = 0; o < n_out; o++) {
      float acc = 0.1f * (float)o;
      for (int i = 0; i < n_in; i++) acc += x[r * n_in + i] * (float)((o + i) % 3 - 1);
      y[r * n_out + o] = acc;
    }
  prof_Op op = {.kind = PROF_OP_LINEAR, .flags = PROF_OPF_BIAS, .ninputs = 3};
  op.in[0] = (prof_Operand){2, PROF_F32, {BATCH, n_in}};
  op.in[1] = (prof_Operand){2, PROF_F32, {n_out, n_in}};
  op.in[2] = (prof_Operand){1, PROF_F32, {n_out}};
  op.out = (prof_Operand){2, PROF_F32, {BATCH, n_out}};
  prof_op_record(S, &op);
}

static int record(prof_State *S) {
  prof_ModuleId net, fc1, act, fc2;
  if (prof_module_add(S, PROF_NO_MODULE, "", "Net", (IN + 1) * HID + (HID + 1) * OUT, &net) ||
      prof_module_add(S, net, "fc1", "Linear", (IN + 1) * HID, &fc1) ||
      prof_module_add(S, net, "act", "GELU", 0, &act) ||
      prof_module_add(S, net, "fc2", "Linear", (HID + 1) * OUT, &fc2) || prof_start(S))
    return 1;
  float x[BATCH * IN], h[BATCH * HID], y[BATCH * OUT];
  for (int c = 0; c < CALLS; c++) {
    for (int i = 0; i < BATCH * IN; i++) x[i] = (float)(i % 5 + c) * 0.25f;
    prof_module_enter(S, net);
    prof_module_enter(S, fc1), linear(S, IN, HID, x, h), prof_module_exit(S, fc1);
    prof_module_enter(S, act);
    for (int i = 0; i < BATCH * HID; i++) h[i] = h[i] > 0 ? h[i] : 0.01f * h[i];  /* GELU-ish */
    prof_Op g = {.kind = PROF_OP_GELU, .ninputs = 1};
    g.in[0] = g.out = (prof_Operand){2, PROF_F32, {BATCH, HID}};
    prof_op_record(S, &g);
    prof_module_exit(S, act);
    prof_module_enter(S, fc2), linear(S, HID, OUT, h, y), prof_module_exit(S, fc2);
    prof_module_exit(S, net);
  }
  return prof_stop(S) != PROF_OK || prof_check(S) != PROF_OK;
}

static int write_file(void *ud, const char *data, size_t len) {
  return fwrite(data, 1, len, ud) == len ? 0 : 1;
}

static int save(const char *dir, const char *name, const char *text, size_t len) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (f == NULL || fwrite(text, 1, len, f) != len || fclose(f) != 0) return perror(path), 1;
  return 0;
}

/* Runs script(S, format) in L; its text is left on L's stack. */
static int render(lua_State *L, prof_State *S, const char *script, const char *format) {
  const char *paths = "package.path = '" PROF_PREFIX "/share/profrun/lua/?.lua;" PROF_PREFIX
                      "/share/profrun/lua/?/init.lua;' .. package.path\n"
                      "package.cpath = '" PROF_PREFIX "/lib/profrun/?.so;' .. package.cpath\n";
  if (luaL_dostring(L, paths) != LUA_OK || luaL_loadfile(L, script) != LUA_OK) return 1;
  lua_getglobal(L, "require");               /* core.borrow(S): the session, lent to Lua */
  lua_pushliteral(L, "prof.core");
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) return 1;
  lua_getfield(L, -1, "borrow");
  lua_pushlightuserdata(L, S);
  if (lua_pcall(L, 1, 1, 0) != LUA_OK) return 1;
  lua_remove(L, -2);                         /* the module table */
  lua_pushstring(L, format);
  return lua_pcall(L, 2, 1, 0) != LUA_OK || !lua_isstring(L, -1);
}

int main(int argc, char **argv) {
  if (argc < 3) return fprintf(stderr, "usage: host SCRIPT OUTDIR [FORMAT]\n"), 2;
  const char *script = argv[1], *dir = argv[2], *format = argc > 3 ? argv[3] : "deepspeed";
  int rc = 1;
  prof_State *S = prof_new(NULL, NULL);
  lua_State *L = luaL_newstate();
  if (S == NULL || L == NULL) {
    fprintf(stderr, "host: out of memory\n");
    goto end;
  }
  if (record(S) != 0) {
    fprintf(stderr, "host: %s\n", prof_errmsg(S));
    goto end;
  }
  luaL_openlibs(L);
  if (render(L, S, script, format) != 0) {
    fprintf(stderr, "host: %s\n", lua_tostring(L, -1));
    goto end;
  }
  size_t len;
  const char *text = lua_tolstring(L, -1, &len);
  if (save(dir, "report_lua.txt", text, len) != 0) goto end;
  char path[4096];
  snprintf(path, sizeof path, "%s/report_c.txt", dir);
  FILE *f = fopen(path, "w");
  if (f == NULL) return perror(path), 1;
  int wrc = prof_write_deepspeed_report(S, NULL, write_file, f);
  if (fclose(f) != 0 || wrc != PROF_OK) {
    fprintf(stderr, "host: %s: %s\n", path, prof_errmsg(S));
    goto end;
  }
  fwrite(text, 1, len, stdout);
  rc = 0;
end:
  if (L != NULL) lua_close(L);   /* first: the Lua handle only borrows S */
  prof_close(S);
  return rc;
}
