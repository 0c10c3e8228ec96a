# Makefile — one build for profrun: the core library, the Lua binding, the CLI, tests and benchmarks.
# `make run` and `make test` install missing Debian packages first (scripts/tools/deps.sh).

PREFIX   ?= /usr/local
CC       ?= cc
BUILD    := build
DEPS_OK  := $(BUILD)/.deps-ok

WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
OPT      ?= -O2 -g
CSTD     := -std=c11 -D_POSIX_C_SOURCE=200809L
CJSON_CFLAGS = $(shell pkg-config --cflags libcjson 2>/dev/null)
CJSON_LIBS   = $(shell pkg-config --libs libcjson 2>/dev/null || echo -lcjson)
LUA_CFLAGS   = $(shell pkg-config --cflags lua5.4 2>/dev/null)
LUA_LIBS     = $(shell pkg-config --libs lua5.4 2>/dev/null || echo -llua5.4)
BLAS_CFLAGS  = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS    = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)

# The profiler core is compiled WITHOUT the Lua include path, so it cannot grow a Lua dependency.
CORE_CFLAGS    = $(CSTD) $(OPT) $(WARN) -fPIC -fvisibility=hidden -Icore $(CJSON_CFLAGS)
RUNTIME_CFLAGS = $(CSTD) $(OPT) $(WARN) -fPIC -fvisibility=hidden -Icore -Icore/runtime $(BLAS_CFLAGS)
BIND_CFLAGS    = $(CSTD) $(OPT) $(WARN) -fPIC -fvisibility=hidden -Icore -Icore/runtime $(LUA_CFLAGS)
SAN_FLAGS      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

CORE_SRC    := $(filter-out core/profrun.c,$(wildcard core/*.c))
RUNTIME_SRC := $(wildcard core/runtime/*.c core/runtime/*/*.c)
BIND_SRC    := $(wildcard core/lua/*.c)
TEST_SRC    := $(wildcard spec/c/test_*.c)
CORE_OBJ    := $(CORE_SRC:%.c=$(BUILD)/obj/%.o)
RUNTIME_OBJ := $(RUNTIME_SRC:%.c=$(BUILD)/obj/%.o)
BIND_OBJ    := $(BIND_SRC:%.c=$(BUILD)/obj/%.o)
TESTS       := $(TEST_SRC:spec/c/%.c=$(BUILD)/tests/%)
ASAN_TESTS  := $(TEST_SRC:spec/c/%.c=$(BUILD)/asan/%)
HEADERS     := $(wildcard core/*.h core/runtime/*.h core/lua/*.h)

LIBPROF_A   := $(BUILD)/lib/libprof.a
LIBPROF_SO  := $(BUILD)/lib/libprof.so
LIBRT_A     := $(BUILD)/lib/libprofrt.a
LUA_MOD     := $(BUILD)/lua/prof/core.so
PROFRUN     := $(BUILD)/bin/profrun
BENCH_C     := $(BUILD)/bin/bench_core

.PHONY: all run test test-c test-asan test-lua check bench install clean deps lint
all: $(LIBPROF_A) $(LIBPROF_SO) $(LUA_MOD) $(PROFRUN) $(BUILD)/prof.pc

deps: $(DEPS_OK)
$(DEPS_OK): scripts/tools/deps.sh
	@scripts/tools/deps.sh
	@mkdir -p $(BUILD) && touch $@

$(BUILD)/obj/core/%.o: core/%.c $(HEADERS) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(CORE_CFLAGS) -c $< -o $@
$(BUILD)/obj/core/runtime/%.o: core/runtime/%.c $(HEADERS) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(RUNTIME_CFLAGS) -c $< -o $@
$(BUILD)/obj/core/lua/%.o: core/lua/%.c $(HEADERS) | $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(BIND_CFLAGS) -c $< -o $@

$(LIBPROF_A): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(LIBPROF_SO): $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $^ $(CJSON_LIBS) -lm
$(LIBRT_A): $(RUNTIME_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^
$(LUA_MOD): $(BIND_OBJ) $(LIBRT_A) $(LIBPROF_A)
	@mkdir -p $(dir $@)
	$(CC) -shared -o $@ $(BIND_OBJ) $(LIBRT_A) $(LIBPROF_A) $(CJSON_LIBS) $(BLAS_LIBS) -lm
$(PROFRUN): core/profrun.c $(BIND_OBJ) $(LIBRT_A) $(LIBPROF_A) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(BIND_CFLAGS) -o $@ core/profrun.c $(BIND_OBJ) $(LIBRT_A) $(LIBPROF_A) \
	  $(LUA_LIBS) $(CJSON_LIBS) $(BLAS_LIBS) -lm -ldl -Wl,-E
$(BUILD)/prof.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: prof\nDescription: profrun profiler core\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -lprof\nLibs.private: %s -lm\n' \
	  '$(PREFIX)' "$$(sed -n 's/^#define PROF_VERSION "\(.*\)"/\1/p' core/prof.h)" '$(CJSON_LIBS)' > $@

# C unit tests: one binary per spec/c/test_*.c; also built with ASan + UBSan.
$(BUILD)/tests/%: spec/c/%.c spec/c/t.h spec/c/op_builder.h $(LIBPROF_A) $(LIBRT_A)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(OPT) $(WARN) -Icore -Icore/runtime -Ispec/c $(CJSON_CFLAGS) -o $@ $< \
	  $(LIBRT_A) $(LIBPROF_A) $(CJSON_LIBS) $(BLAS_LIBS) -lm
$(BUILD)/asan/%: spec/c/%.c spec/c/t.h spec/c/op_builder.h $(CORE_SRC) $(RUNTIME_SRC) $(HEADERS)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O1 -g $(WARN) $(SAN_FLAGS) -Icore -Icore/runtime -Ispec/c $(CJSON_CFLAGS) \
	  $(BLAS_CFLAGS) -o $@ $< $(CORE_SRC) $(RUNTIME_SRC) $(CJSON_LIBS) $(BLAS_LIBS) -lm

test-c: $(TESTS)
	@scripts/tools/run-c-tests.sh $(TESTS)
test-asan: $(ASAN_TESTS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 scripts/tools/run-c-tests.sh $(ASAN_TESTS)
test-lua: all
	@lua5.4 "$$(command -v busted)" -o plainTerminal 2>&1 | scripts/tools/busted-summary.sh
test: all $(TESTS) $(ASAN_TESTS)
	@scripts/tools/run-tests.sh "$(TESTS)" "$(ASAN_TESTS)"
check: $(TESTS)
	@scripts/tools/run-c-tests.sh --valgrind $(TESTS)
lint:
	luacheck lua scripts spec examples

run: all
	$(PROFRUN) configs/default.json examples/alexnet.lua

$(BENCH_C): scripts/tools/bench_core.c $(LIBPROF_A)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 $(WARN) -Icore -o $@ $< $(LIBPROF_A) $(CJSON_LIBS) -lm
bench: all $(BENCH_C)
	@scripts/tools/bench.sh

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/profrun/prof $(DESTDIR)$(PREFIX)/share/profrun
	install -m 755 $(PROFRUN) $(DESTDIR)$(PREFIX)/bin/profrun
	install -m 644 core/prof.h $(DESTDIR)$(PREFIX)/include/prof.h
	install -m 644 $(LIBPROF_A) $(DESTDIR)$(PREFIX)/lib/libprof.a
	install -m 755 $(LIBPROF_SO) $(DESTDIR)$(PREFIX)/lib/libprof.so
	sed 's|^prefix=.*|prefix=$(PREFIX)|' $(BUILD)/prof.pc > $(DESTDIR)$(PREFIX)/lib/pkgconfig/prof.pc
	install -m 755 $(LUA_MOD) $(DESTDIR)$(PREFIX)/lib/profrun/prof/core.so
	cp -R lua scripts configs examples $(DESTDIR)$(PREFIX)/share/profrun/

clean:
	rm -rf $(BUILD)
