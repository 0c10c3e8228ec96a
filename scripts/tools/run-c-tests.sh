#!/bin/sh
# run-c-tests.sh — runs C test binaries (optionally under valgrind) and prints one summed line.
valgrind=""
if [ "${1:-}" = "--valgrind" ]; then
  valgrind="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
  shift
fi
passed=0
failed=0
for t in "$@"; do
  out=$($valgrind "$t" 2>&1)
  rc=$?
  line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed$' | tail -n 1)
  if [ -z "$line" ]; then
    printf '%s\n' "$out"
    echo "FAIL $t: exited $rc without a summary"
    failed=$((failed + 1))
    continue
  fi
  p=${line%% passed*}
  f=${line#*passed, }
  f=${f%% failed}
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  [ "$f" -ne 0 ] && printf '%s\n' "$out"
  echo "  $t: $line"
  passed=$((passed + p))
  failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
