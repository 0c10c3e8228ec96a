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
BLAS_LIBS    = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas) $(CUDA_LIBS)
# CUPTI's headers, when present, compile the CUPTI capture source (core/prof/capture/ only); libcupti
# itself is dlopen'ed at run time, so nothing links against CUDA and everything loads without it.
CUDA_HOME      ?= /usr/local/cuda
CAPTURE_CFLAGS := $(if $(wildcard $(CUDA_HOME)/include/cupti.h),-isystem $(CUDA_HOME)/include -DPROF_HAVE_CUPTI=1)

# The cuda backend (core/runtime/cuda/*.cu) is built when nvcc exists; without it backend_cuda.c
# is the placeholder that refuses the device. CUDA=0 forces the placeholder. cudart is linked
# statically (it finds the driver at the first CUDA call, so the libraries load without one);
# cuBLAS is opened at run time (README, "The cuda device").
NVCC      ?= $(CUDA_HOME)/bin/nvcc
CUDA      ?= $(if $(wildcard $(NVCC)),1,0)
ifeq ($(CUDA),1)
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=[sm_90,compute_90]
NVCC_FLAGS = -std=c++17 -O2 --extended-lambda $(CUDA_ARCH) -Werror all-warnings \
             -Xcompiler -fPIC,-fvisibility=hidden,-Wall,-Wextra,-Werror -Icore/prof -Icore/runtime
CUDA_SRC  := $(wildcard core/runtime/cuda/*.cu)
CUDA_LIBS := -L$(CUDA_HOME)/lib64 -lcudart_static -lstdc++ -ldl -lrt
CUDA_DEF  := -DPR_HAVE_CUDA
endif
CUDA_OBJ  := $(patsubst %.cu,$(BUILD)/cuda-obj/%.o,$(CUDA_SRC))

# The library's version comes from core/prof/prof.h, the one place it is written.
version_part = $(shell sed -n 's/^\#define PROF_VERSION_$(1) \([0-9]*\).*/\1/p' core/prof/prof.h)
VMAJOR   := $(call version_part,MAJOR)
VERSION  := $(VMAJOR).$(call version_part,MINOR).$(call version_part,PATCH)
SONAME   := libprof.so.$(VMAJOR)

# One folder per product under core/ (core/README.md): prof (libprof), runtime (libprofrt), bind
# (the Lua module prof.core), inject (libprof_inject.so) and cli (profrun). Each is compiled with
# the include paths it needs; which headers of another product a file may include is checked by
# `make check-includes` (scripts/tools/check-deps.lua), part of `make test`.
# The profiler core is compiled WITHOUT the Lua include path, so it cannot grow a Lua dependency.
# -MMD -MP: each object depends on exactly the headers it includes (the .d files included below).
CORE_CFLAGS    = $(CSTD) $(OPT) $(WARN) -MMD -MP -fPIC -fvisibility=hidden -Icore/prof $(CJSON_CFLAGS)
RUNTIME_CFLAGS = $(CSTD) $(OPT) $(WARN) -MMD -MP -fPIC -fvisibility=hidden -Icore/prof -Icore/runtime \
                 $(BLAS_CFLAGS) $(CUDA_DEF)
BIND_CFLAGS    = $(CSTD) $(OPT) $(WARN) -MMD -MP -fPIC -fvisibility=hidden -Icore/prof -Icore/runtime \
                 $(LUA_CFLAGS)
# NVTX's and CUPTI's headers come from the CUDA toolkit.
INJECT_CFLAGS  = $(CSTD) $(OPT) $(WARN) -MMD -MP -fPIC -fvisibility=hidden -Icore/prof -I$(CUDA_HOME)/include
TEST_CFLAGS    = $(CSTD) $(OPT) $(WARN) -MMD -MP -Icore -Icore/prof -Icore/runtime -Ispec/c $(CJSON_CFLAGS) \
                 $(CAPTURE_CFLAGS) $(CUDA_DEF)
# Sanitized flavours trade speed for checks; -O1 keeps their stacks readable.
ASAN_FLAGS     := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
TSAN_FLAGS     := -O1 -g -fsanitize=thread

# Sources, one list per product.
CORE_SRC    := $(wildcard core/prof/*.c core/prof/*/*.c)
RUNTIME_SRC := $(wildcard core/runtime/*.c core/runtime/*/*.c)
BIND_SRC    := $(wildcard core/bind/*.c)
CLI_SRC     := $(wildcard core/cli/*.c)
INJECT_SRC  := $(wildcard core/inject/*.c)
TEST_SRC    := $(wildcard spec/c/test_*.c)
# test_trace.c too: its gzip traces of many pieces run the compressor thread (trace_gzip.c)
TSAN_SRC    := $(wildcard spec/c/test_threads*.c) spec/c/test_trace.c

# Objects, once per flavour: normal (build/obj), ASan+UBSan (build/asan-obj), TSan (build/tsan-obj).
objs = $(patsubst %.c,$(BUILD)/$(1)/%.o,$(2))
CORE_OBJ       := $(call objs,obj,$(CORE_SRC))
RUNTIME_OBJ    := $(call objs,obj,$(RUNTIME_SRC))
BIND_OBJ       := $(call objs,obj,$(BIND_SRC))
ASAN_CORE_OBJ  := $(call objs,asan-obj,$(CORE_SRC))
ASAN_RT_OBJ    := $(call objs,asan-obj,$(RUNTIME_SRC))
ASAN_BIND_OBJ  := $(call objs,asan-obj,$(BIND_SRC))
TSAN_CORE_OBJ  := $(call objs,tsan-obj,$(CORE_SRC))
TSAN_RT_OBJ    := $(call objs,tsan-obj,$(RUNTIME_SRC))
TEST_OBJ       := $(call objs,obj,$(TEST_SRC)) $(call objs,asan-obj,$(TEST_SRC)) \
                  $(call objs,tsan-obj,$(TSAN_SRC))
CLI_OBJ        := $(call objs,obj,$(CLI_SRC))
ASAN_CLI_OBJ   := $(call objs,asan-obj,$(CLI_SRC))
INJECT_OBJ     := $(call objs,obj,$(INJECT_SRC))
ASAN_INJECT_OBJ:= $(call objs,asan-obj,$(INJECT_SRC))
ALL_OBJ        := $(CORE_OBJ) $(RUNTIME_OBJ) $(BIND_OBJ) $(CLI_OBJ) $(ASAN_CORE_OBJ) $(ASAN_RT_OBJ) \
                  $(ASAN_BIND_OBJ) $(ASAN_CLI_OBJ) $(TSAN_CORE_OBJ) $(TSAN_RT_OBJ) $(INJECT_OBJ) \
                  $(ASAN_INJECT_OBJ) $(TEST_OBJ) $(CUDA_OBJ)

TESTS       := $(TEST_SRC:spec/c/%.c=$(BUILD)/tests/%)
ASAN_TESTS  := $(TEST_SRC:spec/c/%.c=$(BUILD)/asan/%)
TSAN_TESTS  := $(TSAN_SRC:spec/c/%.c=$(BUILD)/tsan/%)

LIBPROF_A   := $(BUILD)/lib/libprof.a
LIBPROF_SO  := $(BUILD)/lib/libprof.so.$(VERSION)
LIBPROF_LN  := $(BUILD)/lib/$(SONAME) $(BUILD)/lib/libprof.so
LIBRT_A     := $(BUILD)/lib/libprofrt.a
LUA_MOD     := $(BUILD)/lua/prof/core.so
LUA_MOD_INST:= $(BUILD)/lua-install/prof/core.so
PROFRUN     := $(BUILD)/bin/profrun
BENCH_C     := $(BUILD)/bin/bench_core
BENCH_TRACE := $(BUILD)/bin/bench_trace
ASAN_LIBPROF_A  := $(BUILD)/asan-lib/libprof.a
ASAN_LIBPROF_SO := $(BUILD)/asan-lib/libprof.so.$(VERSION)
ASAN_LIBRT_A    := $(BUILD)/asan-lib/libprofrt.a
ASAN_LUA_MOD    := $(BUILD)/asan-lua/prof/core.so
ASAN_PROFRUN    := $(BUILD)/asan-cli/profrun
FUZZ_BIN        := $(BUILD)/fuzz/fuzz_config $(BUILD)/fuzz/fuzz_json
TSAN_LIBPROF_A  := $(BUILD)/tsan-lib/libprof.a
TSAN_LIBRT_A    := $(BUILD)/tsan-lib/libprofrt.a

.PHONY: all run test gpu-bundle test-c test-asan test-tsan test-lua test-lua-asan test-cli-asan check fuzz bench \
        install clean deps lint check-includes
all: $(LIBPROF_A) $(LIBPROF_SO) $(LIBPROF_LN) $(LUA_MOD) $(PROFRUN) $(BUILD)/prof.pc

deps: $(DEPS_OK)
$(DEPS_OK): scripts/tools/deps.sh
	@scripts/tools/deps.sh
	@mkdir -p $(BUILD) && touch $@

# Compile rules of one flavour: $(1) is its object folder, $(2) the flags it adds. A product's folder
# picks its flags (make prefers the rule with the shortest stem: core/prof/capture/ before core/prof/).
define flavour_rules
$(BUILD)/$(1)/core/prof/%.o: core/prof/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(CORE_CFLAGS) $(2) -c $$< -o $$@
$(BUILD)/$(1)/core/prof/capture/%.o: core/prof/capture/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(CORE_CFLAGS) $$(CAPTURE_CFLAGS) $(2) -c $$< -o $$@
$(BUILD)/$(1)/core/runtime/%.o: core/runtime/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(RUNTIME_CFLAGS) $(2) -c $$< -o $$@
$(BUILD)/$(1)/core/bind/%.o: core/bind/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(BIND_CFLAGS) $(2) -c $$< -o $$@
$(BUILD)/$(1)/core/cli/%.o: core/cli/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(BIND_CFLAGS) $(2) -c $$< -o $$@
$(BUILD)/$(1)/core/inject/%.o: core/inject/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(INJECT_CFLAGS) $(2) -c $$< -o $$@
$(BUILD)/$(1)/spec/c/%.o: spec/c/%.c | $(DEPS_OK)
	@mkdir -p $$(@D)
	$$(CC) $$(TEST_CFLAGS) $(2) -c $$< -o $$@
endef
$(eval $(call flavour_rules,obj,))
$(eval $(call flavour_rules,asan-obj,$(ASAN_FLAGS)))
$(eval $(call flavour_rules,tsan-obj,$(TSAN_FLAGS)))
# The cuda kernels: one object each, shared by every flavour (sanitizers do not instrument nvcc's code).
$(BUILD)/cuda-obj/%.o: %.cu | $(DEPS_OK)
	@mkdir -p $(@D)
	$(NVCC) $(NVCC_FLAGS) -MD -MP -MF $(@:.o=.d) -c $< -o $@
-include $(ALL_OBJ:.o=.d)
# Objects and library links made on the way to a target are kept, so a rebuild redoes nothing.
.SECONDARY:

# Static archives, one pair per flavour: libprof (the core) and libprofrt (the runtime).
$(LIBPROF_A): $(CORE_OBJ)
$(LIBRT_A): $(RUNTIME_OBJ) $(CUDA_OBJ)
$(ASAN_LIBPROF_A): $(ASAN_CORE_OBJ)
$(ASAN_LIBRT_A): $(ASAN_RT_OBJ) $(CUDA_OBJ)
$(TSAN_LIBPROF_A): $(TSAN_CORE_OBJ)
$(TSAN_LIBRT_A): $(TSAN_RT_OBJ) $(CUDA_OBJ)
$(BUILD)/%.a:
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^

# libprof.so.X.Y.Z with SONAME libprof.so.X and its two links. -Bsymbolic-functions keeps the
# core's calls to its own API direct (no PLT hop on the hot path).
$(LIBPROF_SO): $(CORE_OBJ)
$(ASAN_LIBPROF_SO): $(ASAN_CORE_OBJ)
$(ASAN_LIBPROF_SO): LDSAN := -fsanitize=address,undefined
$(BUILD)/%.so.$(VERSION):
	@mkdir -p $(@D)
	$(CC) -shared $(LDSAN) -Wl,-soname,$(SONAME) -Wl,-Bsymbolic-functions -o $@ $^ \
	  $(CJSON_LIBS) -lz -lm -pthread
$(BUILD)/%.so.$(VMAJOR): $(BUILD)/%.so.$(VERSION)
	ln -sf $(<F) $@
$(BUILD)/%/libprof.so: $(BUILD)/%/$(SONAME)
	ln -sf $(<F) $@

# The Lua module prof.core: one copy of the core, libprof.so, found through a relative rpath (the
# build tree's build/lua/prof -> build/lib; the installed lib/profrun/prof -> lib). The runtime is
# linked in statically; --exclude-libs hides its symbols and the version script exports luaopen_*
# alone, so a host that links libprof.so and loads prof.core still has one core.
$(BUILD)/core.map: Makefile
	@mkdir -p $(@D)
	printf '{\n  global: luaopen_*;\n  local: *;\n};\n' > $@
MODULE_LINK = $(CC) -shared $(LDSAN) -o $@ $(filter %.o %.a,$^) -L$(LIBDIR) -lprof \
  -Wl,-rpath,'$$ORIGIN/$(RPATH)' -Wl,--exclude-libs,ALL -Wl,--version-script,$(BUILD)/core.map \
  $(BLAS_LIBS) -lm -pthread
$(LUA_MOD) $(LUA_MOD_INST): LIBDIR := $(BUILD)/lib
$(LUA_MOD) $(LUA_MOD_INST): $(BIND_OBJ) $(LIBRT_A) $(LIBPROF_LN) $(BUILD)/core.map
	@mkdir -p $(@D)
	$(MODULE_LINK)
$(LUA_MOD): RPATH := ../../lib
$(LUA_MOD_INST): RPATH := ../..
$(ASAN_LUA_MOD): LIBDIR := $(BUILD)/asan-lib
$(ASAN_LUA_MOD): RPATH := ../../asan-lib
$(ASAN_LUA_MOD): LDSAN := -fsanitize=address,undefined
$(ASAN_LUA_MOD): $(ASAN_BIND_OBJ) $(ASAN_LIBRT_A) $(BUILD)/asan-lib/libprof.so $(BUILD)/core.map
	@mkdir -p $(@D)
	$(MODULE_LINK)

# The CLI links the core statically and exports Lua's API (-Wl,-E) for C modules scripts load.
$(PROFRUN): $(CLI_OBJ) $(BIND_OBJ) $(LIBRT_A) $(LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(LUA_LIBS) $(CJSON_LIBS) $(BLAS_LIBS) -lz -lm -ldl -pthread -Wl,-E
# The same CLI built with ASan+UBSan (make test runs it over the examples and the zoo on meta;
# scripts/tools/run-cli-asan.sh). It finds the Lua package from build/asan-cli as from build/bin.
$(ASAN_PROFRUN): $(ASAN_CLI_OBJ) $(ASAN_BIND_OBJ) $(ASAN_LIBRT_A) $(ASAN_LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -fsanitize=address,undefined -o $@ $^ $(LUA_LIBS) $(CJSON_LIBS) $(BLAS_LIBS) -lz -lm -ldl \
	  -pthread -Wl,-E
# Libs carries the rpath: a host built against an installed prefix runs without LD_LIBRARY_PATH.
$(BUILD)/prof.pc: Makefile
	@mkdir -p $(dir $@)
	printf 'prefix=%s\nincludedir=$${prefix}/include\nlibdir=$${prefix}/lib\n\nName: prof\nDescription: profrun profiler core\nVersion: %s\nCflags: -I$${includedir}\nLibs: -L$${libdir} -Wl,-rpath,$${libdir} -lprof\nLibs.private: %s -lz -lm -pthread\n' \
	  '$(PREFIX)' '$(VERSION)' '$(CJSON_LIBS)' > $@

# libprof_inject.so (core/inject/): NVTX and CUDA injection for unmodified programs, with its own
# hidden copy of the core; it exports the two injection entry points alone. spec/c/test_nvtx*.c
# link the same objects (libprofinject.a).
INJECT_SO   := $(BUILD)/lib/libprof_inject.so
INJECT_A    := $(BUILD)/lib/libprofinject.a
ASAN_INJECT_A := $(BUILD)/asan-lib/libprofinject.a
# the Lua binding's NVTX hook (profiler.emit_nvtx) includes NVTX's header-only API
$(BUILD)/obj/core/bind/lnvtx.o $(BUILD)/asan-obj/core/bind/lnvtx.o: BIND_CFLAGS += -I$(CUDA_HOME)/include
$(INJECT_A): $(INJECT_OBJ)
$(ASAN_INJECT_A): $(ASAN_INJECT_OBJ)
$(BUILD)/inject.map: Makefile
	@mkdir -p $(@D)
	printf '{\n  global: InitializeInjection; InitializeInjectionNvtx2;\n  local: *;\n};\n' > $@
$(INJECT_SO): $(INJECT_OBJ) $(LIBPROF_A) $(BUILD)/inject.map
	@mkdir -p $(@D)
	$(CC) -shared -o $@ $(filter %.o %.a,$^) -Wl,--exclude-libs,ALL -Wl,-Bsymbolic \
	  -Wl,--version-script,$(BUILD)/inject.map $(CJSON_LIBS) -lz -lm -ldl -pthread
$(BUILD)/tests/test_nvtx%: $(BUILD)/obj/spec/c/test_nvtx%.o $(INJECT_A) $(LIBRT_A) $(LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(TEST_LIBS) -ldl
$(BUILD)/asan/test_nvtx%: $(BUILD)/asan-obj/spec/c/test_nvtx%.o $(ASAN_INJECT_A) $(ASAN_LIBRT_A) $(ASAN_LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -fsanitize=address,undefined -o $@ $^ $(TEST_LIBS) -ldl
# spec/fixtures/nvtx/*.c: CPU-only programs that call NVTX v3 (header-only) and nothing else
$(BUILD)/fixtures/nvtx/%: spec/fixtures/nvtx/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	$(CC) $(CSTD) $(OPT) $(WARN) -I$(CUDA_HOME)/include -o $@ $< -ldl -pthread
NVTX_FIXTURES := $(patsubst spec/fixtures/nvtx/%.c,$(BUILD)/fixtures/nvtx/%,$(wildcard spec/fixtures/nvtx/*.c))
all: $(INJECT_SO) $(NVTX_FIXTURES)

# C unit tests: one binary per spec/c/test_*.c, linked against its flavour's static libraries
# (tests reach internal headers, so never the shared one). test_threads*.c also run under TSan.
TEST_LIBS = $(CJSON_LIBS) $(BLAS_LIBS) -lz -lm -pthread
$(BUILD)/tests/%: $(BUILD)/obj/spec/c/%.o $(LIBRT_A) $(LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -o $@ $^ $(TEST_LIBS)
$(BUILD)/asan/%: $(BUILD)/asan-obj/spec/c/%.o $(ASAN_LIBRT_A) $(ASAN_LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -fsanitize=address,undefined -o $@ $^ $(TEST_LIBS)
$(BUILD)/tsan/%: $(BUILD)/tsan-obj/spec/c/%.o $(TSAN_LIBRT_A) $(TSAN_LIBPROF_A)
	@mkdir -p $(@D)
	$(CC) -fsanitize=thread -o $@ $^ $(TEST_LIBS)

# Test targets. The sanitized busted pass preloads ASan's runtime into lua5.4 (uninstrumented);
# Lua's own allocations at exit are not ours, so leak checks stay with the C tests.
ASAN_PRELOAD = $(shell $(CC) -print-file-name=libasan.so)
test-c: $(TESTS)
	@scripts/tools/run-c-tests.sh $(TESTS)
test-asan: $(ASAN_TESTS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 scripts/tools/run-c-tests.sh $(ASAN_TESTS)
test-tsan: $(TSAN_TESTS)
	@scripts/tools/run-c-tests.sh $(TSAN_TESTS)
test-lua: all
	@lua5.4 "$$(command -v busted)" -o plainTerminal 2>&1 | scripts/tools/busted-summary.sh
test-lua-asan: all $(ASAN_LUA_MOD)
	@ASAN_PRELOAD=$(ASAN_PRELOAD) scripts/tools/run-tests.sh --lua-asan
test: all $(TESTS) $(ASAN_TESTS) $(TSAN_TESTS) $(ASAN_LUA_MOD) $(ASAN_PROFRUN)
	@ASAN_PRELOAD=$(ASAN_PRELOAD) scripts/tools/run-tests.sh "$(TESTS)" "$(ASAN_TESTS)" "$(TSAN_TESTS)" \
	  "$(ASAN_PROFRUN)"
test-cli-asan: all $(ASAN_PROFRUN)
	@scripts/tools/run-cli-asan.sh $(ASAN_PROFRUN)
check: $(TESTS) $(FUZZ_BIN)
	@scripts/tools/run-c-tests.sh --valgrind $(TESTS)
	@scripts/tools/fuzz.sh $(FUZZ_BIN)
fuzz: $(FUZZ_BIN)
	@scripts/tools/fuzz.sh $(FUZZ_BIN)

# libFuzzer harnesses (clang): the config parser, and the JSON profile and trace writers, each
# linked with its own ASan+UBSan build of the core's sources. spec/fuzz/corpus/ holds the seeds.
FUZZ_CC     ?= clang
FUZZ_CFLAGS := $(CSTD) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
               -Icore/prof $(CJSON_CFLAGS)
$(BUILD)/fuzz/fuzz_%: spec/fuzz/fuzz_%.c $(CORE_SRC) core/prof/prof.h | $(DEPS_OK)
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $< $(CORE_SRC) $(CJSON_LIBS) -lz -lm -pthread
lint:
	luacheck lua scripts spec examples
# No file includes a header of another product but those core/README.md lists (run by make test too).
check-includes: $(DEPS_OK)
	@lua5.4 scripts/tools/check-deps.lua --includes

run: all
	$(PROFRUN) configs/default.json examples/alexnet.lua

# build/gpu-bundle.tar.gz: the build with lua5.4, busted and the libraries it loads, for
# scripts/tools/gpu-check.sh on a GPU machine that has none of them (README, "The cuda device").
gpu-bundle: all
	@scripts/tools/gpu-bundle.sh

$(BENCH_C): scripts/tools/bench_core.c core/prof/prof.h $(LIBPROF_A)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 $(WARN) -Icore/prof -o $@ $< $(LIBPROF_A) $(CJSON_LIBS) -lm -pthread
$(BENCH_TRACE): scripts/tools/bench_trace.c core/prof/prof.h $(LIBPROF_A)
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) -O2 $(WARN) -Icore/prof -o $@ $< $(LIBPROF_A) $(CJSON_LIBS) -lz -lm -pthread
bench: all $(BENCH_C) $(BENCH_TRACE)
	@scripts/tools/bench.sh

# Installed layout: bin/profrun, include/prof.h, lib/libprof.{a,so*}, lib/pkgconfig/prof.pc,
# lib/profrun/prof/core.so (relinked with the installed rpath), share/profrun/{lua,scripts,...}.
install: all $(LUA_MOD_INST)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/include \
	  $(DESTDIR)$(PREFIX)/lib/profrun/prof $(DESTDIR)$(PREFIX)/share/profrun
	install -m 755 $(PROFRUN) $(DESTDIR)$(PREFIX)/bin/profrun
	install -m 644 core/prof/prof.h $(DESTDIR)$(PREFIX)/include/prof.h
	install -m 644 $(LIBPROF_A) $(DESTDIR)$(PREFIX)/lib/libprof.a
	install -m 755 $(LIBPROF_SO) $(DESTDIR)$(PREFIX)/lib/libprof.so.$(VERSION)
	ln -sf libprof.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(PREFIX)/lib/libprof.so
	sed 's|^prefix=.*|prefix=$(PREFIX)|' $(BUILD)/prof.pc > $(DESTDIR)$(PREFIX)/lib/pkgconfig/prof.pc
	install -m 755 $(LUA_MOD_INST) $(DESTDIR)$(PREFIX)/lib/profrun/prof/core.so
	install -m 755 $(INJECT_SO) $(DESTDIR)$(PREFIX)/lib/libprof_inject.so
	cp -R lua scripts configs examples $(DESTDIR)$(PREFIX)/share/profrun/

clean:
	rm -rf $(BUILD)
