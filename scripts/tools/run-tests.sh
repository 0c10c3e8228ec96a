#!/bin/sh
# run-tests.sh — every test (C unit tests plain, under ASan+UBSan and TSan; busted plain and on the ASan+UBSan
# prof.core; the sanitized CLI over the examples, the zoo and the hostile suite; luacheck), then one line
# "N passed, N failed" summing them all (CI reads it).
# The include boundaries between core/'s products are one more check (scripts/tools/check-deps.lua).
# Usage: run-tests.sh TESTS ASAN_TESTS TSAN_TESTS [ASAN_PROFRUN]   (each list space-separated)
#        run-tests.sh --lua-asan                    (the sanitized busted pass alone: make test-lua-asan)
# ASAN_PRELOAD (from make) is the compiler's libasan.so.

# The whole busted suite runs on the sanitized build: it takes about 3x the plain pass, well inside
# make test's budget, so no spec is left out. lua5.4 itself is not instrumented, so ASan's runtime is
# preloaded; Lua's interpreter frees lazily at exit, so leak detection is off here (the C tests keep
# it); any other report halts the run. build/asan-lua holds the sanitized prof.core (spec/helpers.lua).
busted_asan() {
  [ -n "${ASAN_PRELOAD:-}" ] && [ -f "$ASAN_PRELOAD" ] || { echo "run-tests.sh: ASAN_PRELOAD is not libasan.so"; echo "0 passed, 1 failed"; return 1; }
  LD_PRELOAD="$ASAN_PRELOAD" ASAN_OPTIONS=detect_leaks=0:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 PROF_SPEC_LUA_DIR=build/asan-lua \
    lua5.4 "$(command -v busted)" -o plainTerminal 2>&1 | scripts/tools/busted-summary.sh
}

if [ "${1:-}" = "--lua-asan" ]; then
  busted_asan
  exit
fi

tests=$1
asan_tests=$2
tsan_tests=$3
asan_profrun=${4:-build/asan-cli/profrun}
total_p=0
total_f=0
add() {
  line=$(printf '%s\n' "$1" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  [ -n "$line" ] || line="0 passed, 1 failed"
  p=${line%% passed*}
  f=${line#*passed, }
  f=${f%% failed}
  total_p=$((total_p + p))
  total_f=$((total_f + f))
}
echo "== C unit tests"
out=$(scripts/tools/run-c-tests.sh $tests 2>&1); printf '%s\n' "$out"; add "$out"
echo "== C unit tests under AddressSanitizer + UndefinedBehaviorSanitizer"
out=$(ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 scripts/tools/run-c-tests.sh $asan_tests 2>&1)
printf '%s\n' "$out"; add "$out"
echo "== C thread tests under ThreadSanitizer"
if [ -n "$tsan_tests" ]; then
  out=$(TSAN_OPTIONS=halt_on_error=1 scripts/tools/run-c-tests.sh $tsan_tests 2>&1); printf '%s\n' "$out"; add "$out"
else
  # spec/c/test_threads*.c is part of the tree; none found means the build lost it
  echo "no spec/c/test_threads*.c"; add "0 passed, 1 failed"
fi
echo "== busted specs"
out=$(lua5.4 "$(command -v busted)" -o plainTerminal 2>&1 | scripts/tools/busted-summary.sh); printf '%s\n' "$out"; add "$out"
echo "== busted specs on prof.core built with AddressSanitizer + UndefinedBehaviorSanitizer"
out=$(busted_asan); printf '%s\n' "$out"; add "$out"
echo "== profrun built with AddressSanitizer + UndefinedBehaviorSanitizer: examples, zoo on meta, overflow"
out=$(scripts/tools/run-cli-asan.sh "$asan_profrun" 2>&1); printf '%s\n' "$out"; add "$out"
echo "== the hostile suite (spec/hostile) again, on that sanitized profrun"
# Leaks count here too (profrun closes its Lua state). The signal cases send SEGV, BUS, ABRT and
# FPE to the child: ASan must leave those to profrun's own handlers, or their exit codes change.
case $asan_profrun in /*) bin=$asan_profrun ;; *) bin=$(pwd)/$asan_profrun ;; esac
if [ -x "$bin" ]; then
  out=$(PROFRUN_BIN="$bin" ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:handle_segv=0:handle_sigbus=0:handle_abort=0:handle_sigfpe=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    lua5.4 "$(command -v busted)" -o plainTerminal spec/hostile 2>&1 | scripts/tools/busted-summary.sh)
else
  out="run-tests.sh: $bin is not built
0 passed, 1 failed"
fi
printf '%s\n' "$out"; add "$out"
echo "== include boundaries between core/'s products (make check-includes)"
if out=$(lua5.4 scripts/tools/check-deps.lua --includes 2>&1); then add "1 passed, 0 failed"; else printf '%s\n' "$out"; add "0 passed, 1 failed"; fi
echo "== luacheck (Lua style and globals)"
if out=$(luacheck -q lua scripts examples spec 2>&1); then add "1 passed, 0 failed"; else printf '%s\n' "$out"; add "0 passed, 1 failed"; fi
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
