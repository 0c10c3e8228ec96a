#!/bin/sh
# run-cli-asan.sh — the CLI built with ASan+UBSan (build/asan-cli/profrun) over the examples, the model
# zoo on meta and a few overflow cases: each must exit as expected with no sanitizer report (leaks
# included: profrun closes its Lua state). Prints failures, then "N passed, N failed".
# Usage: run-cli-asan.sh PROFRUN
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$bin" ] || { echo "run-cli-asan.sh: $1 is not built"; echo "0 passed, 1 failed"; exit 1; }
# a scratch working directory: trace_loop writes ./log, outputs go nowhere else
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
# case EXPECTED_CODE ARGS...: one run; a sanitizer report fails it whatever the exit code
case_() {
  want=$1
  shift
  err="$work/stderr"
  (cd "$work" && ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 timeout 300 "$bin" "$@" >/dev/null 2>"$err")
  code=$?
  if [ "$code" -eq "$want" ] && ! grep -qE 'AddressSanitizer|LeakSanitizer|runtime error:' "$err"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL (exit $code, expected $want): profrun $*"
    grep -m 20 -E 'Sanitizer|runtime error|#[0-9]+ |profrun:' "$err" | sed 's/^/  /'
  fi
}
c=$root/configs
e=$root/examples
# the examples as the README runs them (lenet5 and the training loops on cpu: real kernels)
case_ 0 "$c/default.json" "$e/alexnet.lua" --device meta
case_ 0 --device cpu "$c/flops.json" "$e/lenet5.lua"
case_ 0 --device meta "$c/default.json" "$e/bert.lua"
case_ 0 --device meta "$c/megatron.json" "$e/megatron_gpt2.lua"
case_ 0 --device cpu "$c/train.json" "$e/train_engine.lua"
case_ 0 --device cpu "$c/default.json" "$e/train_loop.lua"
case_ 0 --device cpu "$c/default.json" "$e/trace_loop.lua"
case_ 0 --device meta --set flops_profiler.format=json "$c/default.json" "$e/bert.lua"
# the zoo on meta, every model
for m in $("$root/build/bin/profrun" "$c/default.json" "$e/model_profile.lua" --list); do
  case_ 0 --device meta --set flops_profiler.format=summary "$c/default.json" "$e/model_profile.lua" --model "$m"
done
# overflow: an impossible shape is an error (exit 1), counts past 2^63 - 1 saturate (exit 0)
case_ 1 "$c/default.json" "$root/spec/fixtures/scale/huge_shape.lua"
case_ 0 --device meta --set parallel.model_parallel_size=4611686018427387904 "$c/default.json" \
  "$root/spec/fixtures/scale/huge_counts.lua"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
