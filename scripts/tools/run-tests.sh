#!/bin/sh
# run-tests.sh — every test: C unit tests, the same under ASan+UBSan, the busted specs and luacheck; then one
# line "N passed, N failed" summing them all (CI reads it).
tests=$1
asan_tests=$2
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
out=$(ASAN_OPTIONS=detect_leaks=1 scripts/tools/run-c-tests.sh $asan_tests 2>&1); printf '%s\n' "$out"; add "$out"
echo "== busted specs"
out=$(lua5.4 "$(command -v busted)" -o plainTerminal 2>&1 | scripts/tools/busted-summary.sh); printf '%s\n' "$out"; add "$out"
echo "== luacheck (Lua style and globals)"
if out=$(luacheck -q lua scripts examples spec 2>&1); then add "1 passed, 0 failed"; else printf '%s\n' "$out"; add "0 passed, 1 failed"; fi
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
