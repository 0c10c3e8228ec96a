/* profrun.c — the profrun command: a Lua 5.4 host that finds its package and hands over to prof.cli. */
#define _DEFAULT_SOURCE   /* realpath, sigaction's SA_* */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "prof.h"

int luaopen_prof_core(lua_State *L);

static int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* The synopsis and options: printed by --help, which works even where the package is missing. */
static const char USAGE[] =
    "usage: profrun [--set KEY=VALUE]... [--device cpu|cuda|meta] [--verbose] CONFIG.json SCRIPT.lua [ARGS...]\n"
    "       profrun [OPTIONS] SCRIPT.lua [ARGS...]     (no config: the built-in defaults)\n"
    "\n"
    "Runs a Lua script under a DeepSpeed-style JSON config and profiles what it runs.\n"
    "\n"
    "  --set KEY=VALUE  override a config key (dotted path; VALUE parsed as JSON, else a string)\n"
    "  --device NAME    the device of every tensor the script creates: meta, cpu or cuda\n"
    "  --verbose        list the DeepSpeed keys of the config that profrun accepts but does not use,\n"
    "                   and show profrun's own frames in tracebacks\n"
    "  --help-config    list every config key profrun reads (type, default, what it does) and exit\n"
    "  --peaks          measure this machine's peak FLOP/s and bandwidth again, cache and show them\n"
    "  --version        print the version and exit\n"
    "  --help           print this help and exit\n"
    "\n"
    "Exit status: 0 success, 1 script error (traceback on stderr), 2 usage or config error.\n"
    "Settings: built-in defaults < config file < arguments in the script < --set/--device.\n";

/*
** --help or --version among the options before the config and the script (after them an
** argument is the script's): 'h', 'v' or 0. The options that take a value skip it, as prof.cli
** parses them.
*/
static int help_or_version(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) return 'h';
    if (strcmp(a, "--version") == 0) return 'v';
    if (strcmp(a, "--set") == 0 || strcmp(a, "--device") == 0) {
      i++;
      continue;
    }
    if (strcmp(a, "--") == 0 || a[0] != '-' || strcmp(a, "-") == 0) return 0;
  }
  return 0;
}

/*
** The package lives beside the binary: <prefix>/share/profrun/lua once installed, or <repo>/lua
** when run from the build tree (<repo>/build/bin/profrun). No environment variable is needed.
** On failure, tried says where it looked.
*/
#define ROOTS 2
static int find_root(char *root, size_t size, char tried[ROOTS][PATH_MAX + 64]) {
  char exe[PATH_MAX];
  for (int i = 0; i < ROOTS; i++) tried[i][0] = '\0';
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) return -1;
  exe[n] = '\0';
  char *slash = strrchr(exe, '/');
  if (slash == NULL) return -1;
  *slash = '\0';   /* exe is now the binary's directory */
  static const char *const suffixes[ROOTS] = {"/../share/profrun", "/../.."};
  for (size_t i = 0; i < ROOTS; i++) {
    if (snprintf(root, size, "%s%s", exe, suffixes[i]) >= (int)size) continue;
    char *probe = tried[i];
    if (snprintf(probe, PATH_MAX + 64, "%s/lua/prof/init.lua", root) >= PATH_MAX + 64) continue;
    /* the message shows where that is, not "bin/../.." */
    char resolved[PATH_MAX];
    if (realpath(root, resolved) != NULL)
      snprintf(probe, PATH_MAX + 64, "%s/lua/prof/init.lua", strcmp(resolved, "/") == 0 ? "" : resolved);
    if (!file_exists(probe)) continue;
    /* tracebacks read better without "bin/../.." in every path */
    if (realpath(root, resolved) != NULL && strlen(resolved) < size) strcpy(root, resolved);
    return 0;
  }
  return -1;
}

static void set_paths(lua_State *L, const char *root) {
  lua_getglobal(L, "package");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;", root, root);
  lua_getfield(L, -2, "path");
  lua_concat(L, 2);
  lua_setfield(L, -2, "path");
  /* the binding is linked in; require "prof.core" must not load a second copy from disk */
  lua_getfield(L, -1, "preload");
  lua_pushcfunction(L, luaopen_prof_core);
  lua_setfield(L, -2, "prof.core");
  lua_pop(L, 2);
}

/* {====================== the exit guard: no staged output outlives the run ======================} */

/*
** Every output is written to a temporary beside it and renamed into place once complete. A
** signal or an exit() while one is being written would leave its temporary behind, so the guard
** keeps a copy of each temporary the core tells it of (its output watch) where a signal handler
** (which gets no user data, hence the one static pointer below) can reach it, and removes them
** on every catchable way out: the signals below (then re-raised with the disposition they had,
** so the exit status still tells the signal) and exit() (atexit). Outputs already complete stay.
** A SIGKILLed run's temporaries carry its pid; the next staging beside them removes them
** (atomic_file.c).
*/
/* One staged file as the handler needs it: its three paths in one allocation. */
typedef struct GuardFile {
  const char *target, *tmp, *made;
} GuardFile;

typedef struct Guard {
  GuardFile **files;               /* in staging order; NULL: committed or discarded */
  int n, cap;                      /* slots used (back to 0 when all are free), allocated */
  prof_Staged scratch;             /* the handler's copy: prof_discard_file takes a prof_Staged */
  sigset_t caught;                 /* the signals with our handler */
  struct sigaction old[NSIG];      /* the dispositions they had */
} Guard;

static Guard *the_guard;

static const int async_signals[] = {SIGTERM, SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,
                                    SIGUSR2, SIGXCPU, SIGXFSZ, SIGVTALRM, SIGPROF};
static const int fault_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

/* Async-signal-safe: unlink and rmdir through prof_discard_file, latest first (a directory made
   for an earlier file may hold a later one). */
static void copy_path(char *dst, const char *src) {
  size_t n = strlen(src);
  if (n >= PROF_PATH_SIZE) n = 0;
  memcpy(dst, src, n);
  dst[n] = '\0';
}

static void guard_discard_all(Guard *g) {
  for (int i = g->n - 1; i >= 0; i--) {
    const GuardFile *f = g->files[i];
    if (f == NULL) continue;
    copy_path(g->scratch.target, f->target);
    copy_path(g->scratch.tmp, f->tmp);
    copy_path(g->scratch.made, f->made);
    prof_discard_file(&g->scratch);
  }
}

static void on_signal(int sig, siginfo_t *info, void *uctx) {
  (void)uctx;
  int saved = errno;
  Guard *g = the_guard;
  if (g != NULL) {
    guard_discard_all(g);
    g->n = 0;
    sigaction(sig, &g->old[sig], NULL);
  }
  /* a real fault re-executes and reaches the old handler (a sanitizer's, or the default's core
     dump); anything sent by kill() or raise() is raised again */
  int fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL;
  if (!(fault && info != NULL && info->si_code > 0)) raise(sig);
  errno = saved;
}

static void guard_atexit(void) {
  if (the_guard != NULL) guard_discard_all(the_guard);
}

static void guard_install(Guard *g) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_signal;
  sa.sa_flags = SA_SIGINFO;
  sigfillset(&sa.sa_mask);   /* one handler at a time: the list is walked once */
  sigemptyset(&g->caught);
  the_guard = g;
  for (size_t k = 0; k < 2; k++) {
    const int *sigs = k == 0 ? async_signals : fault_signals;
    size_t n = k == 0 ? sizeof async_signals / sizeof *sigs : sizeof fault_signals / sizeof *sigs;
    for (size_t i = 0; i < n; i++) {
      int sig = sigs[i];
      if (sigaction(sig, NULL, &g->old[sig]) != 0) continue;
      if (g->old[sig].sa_handler == SIG_IGN) continue;   /* nohup's HUP stays ignored */
      if (sigaction(sig, &sa, NULL) == 0) sigaddset(&g->caught, sig);
    }
  }
  atexit(guard_atexit);
}

/* Blocks (or unblocks) the caught signals: the list changes only while none can arrive. */
static void guard_block(Guard *g, int on, sigset_t *prev) {
  sigprocmask(on ? SIG_BLOCK : SIG_SETMASK, on ? &g->caught : prev, on ? prev : NULL);
}

/* Copies the three paths of st where the handler can reach them; NULL when out of memory. */
static GuardFile *guard_file(const prof_Staged *st) {
  size_t len[3] = {strlen(st->target), strlen(st->tmp), strlen(st->made)};
  GuardFile *f = malloc(sizeof *f + len[0] + len[1] + len[2] + 3);
  if (f == NULL) return NULL;
  char *p = (char *)(f + 1);
  const char *src[3] = {st->target, st->tmp, st->made};
  const char **dst[3] = {&f->target, &f->tmp, &f->made};
  for (int k = 0; k < 3; k++) {
    memcpy(p, src[k], len[k] + 1);
    *dst[k] = p;
    p += len[k] + 1;
  }
  return f;
}

/* A temporary that now exists: kept until it is done (renamed into place or removed). */
static void guard_add(Guard *g, const prof_Staged *st) {
  GuardFile *f = guard_file(st);
  if (f == NULL) return;   /* out of memory: the next run's sweep removes it if this one dies */
  GuardFile **grown = NULL, **old = NULL;
  int cap = g->cap > 0 ? 2 * g->cap : 16;
  if (g->n == g->cap) {
    /* a new array swapped in while no signal can come: the handler never sees a freed one */
    grown = malloc((size_t)cap * sizeof *grown);
    if (grown == NULL) {
      free(f);
      return;
    }
    if (g->n > 0) memcpy(grown, g->files, (size_t)g->n * sizeof *grown);
  }
  sigset_t prev;
  guard_block(g, 1, &prev);
  if (grown != NULL) {
    old = g->files;
    g->files = grown;
    g->cap = cap;
  }
  g->files[g->n++] = f;
  guard_block(g, 0, &prev);
  free(old);
}

/* The temporary st->tmp is done with: forgotten (the newest first: it is the one just written). */
static void guard_remove(Guard *g, const prof_Staged *st) {
  for (int i = g->n - 1; i >= 0; i--) {
    GuardFile *f = g->files[i];
    if (f == NULL || strcmp(f->tmp, st->tmp) != 0) continue;
    sigset_t prev;
    guard_block(g, 1, &prev);
    g->files[i] = NULL;
    while (g->n > 0 && g->files[g->n - 1] == NULL) g->n--;
    guard_block(g, 0, &prev);
    free(f);
    return;
  }
}

/* The core's output watch (prof_set_output_watch): every temporary, while it exists. */
static void guard_watch(void *ud, prof_OutputEvent event, const prof_Staged *st) {
  if (event == PROF_OUTPUT_STAGED) guard_add(ud, st);
  else guard_remove(ud, st);
}

/* guard.stdout_error() -> nil | message: whether everything written to stdout reached it. */
static int g_stdout_error(lua_State *L) {
  errno = 0;
  if (fflush(stdout) == 0 && !ferror(stdout)) return 0;
  lua_pushstring(L, errno != 0 ? strerror(errno) : "write error");
  return 1;
}

/* package.loaded["prof.exit_guard"]: only a profrun process has one (prof.cli looks for it). */
static void guard_open(lua_State *L) {
  static const luaL_Reg funcs[] = {{"stdout_error", g_stdout_error}, {NULL, NULL}};
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
  luaL_newlib(L, funcs);
  lua_setfield(L, -2, "prof.exit_guard");
  lua_pop(L, 1);
}

/* Hands watch to prof.core: every session it makes tells the guard of its output temporaries. */
static int watch_outputs(lua_State *L) {
  const prof_OutputWatch *watch = lua_touserdata(L, 1);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "prof.core");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "set_output_watch");
  lua_pushlightuserdata(L, (void *)watch);
  lua_call(L, 1, 0);
  return 0;
}

/* status, or 1 when what was written to stdout did not all reach it (a full disk, a closed pipe). */
static int finish_stdout(int status) {
  errno = 0;
  if ((fflush(stdout) != 0 || ferror(stdout)) && status == 0) {
    fprintf(stderr, "profrun: cannot write standard output: %s\n",
            errno != 0 ? strerror(errno) : "write error");
    status = 1;
  }
  return status;
}

static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  luaL_traceback(L, L, msg ? msg : "(error object is not a string)", 1);
  return 1;
}

/* Runs require("prof.cli").main(argv) and returns its exit status. */
static int run(lua_State *L, int argc, char **argv) {
  lua_pushcfunction(L, traceback);
  int h = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "prof.cli");
  if (lua_pcall(L, 1, 1, h) != LUA_OK) goto fail;
  lua_getfield(L, -1, "main");
  lua_createtable(L, argc, 0);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  if (lua_pcall(L, 1, 1, h) != LUA_OK) goto fail;
  return (int)luaL_optinteger(L, -1, 0);
fail:
  fprintf(stderr, "profrun: internal error: %s\n", lua_tostring(L, -1));
  return 1;
}

int main(int argc, char **argv) {
  switch (help_or_version(argc, argv)) {
    case 'h':
      fputs(USAGE, stdout);
      return finish_stdout(0);
    case 'v':
      printf("profrun %s (Lua %s.%s)\n", PROF_VERSION, LUA_VERSION_MAJOR, LUA_VERSION_MINOR);
      return finish_stdout(0);
  }
  char root[PATH_MAX], tried[ROOTS][PATH_MAX + 64];
  if (find_root(root, sizeof root, tried) != 0) {
    fprintf(stderr, "profrun: cannot find its Lua package: no %s", tried[0][0] ? tried[0] : "(no path)");
    if (tried[1][0]) fprintf(stderr, " nor %s", tried[1]);
    fprintf(stderr, " (the package lives beside the binary: PREFIX/share/profrun once installed with "
            "make install PREFIX=..., or the source tree above build/bin)\n");
    return 2;
  }
  lua_State *L = luaL_newstate();
  if (L == NULL) {
    fprintf(stderr, "profrun: out of memory\n");
    return 1;
  }
  luaL_openlibs(L);
  set_paths(L, root);
  static Guard guard;   /* static: it must outlive main for atexit; ~1 KB plus NSIG sigactions */
  static prof_OutputWatch watch = {guard_watch, &guard};
  guard_install(&guard);
  guard_open(L);
  lua_pushcfunction(L, watch_outputs);
  lua_pushlightuserdata(L, &watch);
  if (lua_pcall(L, 1, 0, 0) != LUA_OK) {
    fprintf(stderr, "profrun: internal error: %s\n", lua_tostring(L, -1));
    lua_close(L);
    return 1;
  }
  int status = run(L, argc, argv);
  lua_close(L);
  /* prof.cli checked stdout at the script's end; this catches what was written after */
  return finish_stdout(status);
}
