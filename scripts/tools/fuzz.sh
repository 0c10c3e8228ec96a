#!/bin/sh
# fuzz.sh — `make check`/`make fuzz`: each libFuzzer harness for FUZZ_SECONDS (default 30; 60 in all for the
# two) on a scratch copy of its committed corpus (spec/fuzz/corpus/NAME), sanitized; prints executions
# per second and corpus sizes, and fails on any crash, leak, sanitizer report or invalid JSON written.
# Usage: fuzz.sh build/fuzz/fuzz_config build/fuzz/fuzz_json
root=$(cd "$(dirname "$0")/../.." && pwd)
secs=${FUZZ_SECONDS:-30}
status=0
for bin in "$@"; do
  name=$(basename "$bin")
  seeds=$root/spec/fuzz/corpus/${name#fuzz_}
  work=$(mktemp -d)
  mkdir "$work/corpus"
  cp "$seeds"/* "$work/corpus/"
  n_seeds=$(ls "$seeds" | wc -l)
  log=$work/log
  "$bin" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$work/" "$work/corpus" >"$log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  n_corpus=$(ls "$work/corpus" | wc -l)
  if [ "$rc" -eq 0 ]; then
    echo "$name: ${secs} s clean, ${execs:-?} executions (${rate:-?}/s), corpus $n_seeds seeds -> $n_corpus inputs"
  else
    status=1
    echo "$name: FAILED (exit $rc) after ${execs:-?} executions; the input that failed:"
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null | sed 's/^/  /'
    grep -m 30 -E 'ERROR|SUMMARY|#[0-9]+ |runtime error' "$log" | sed 's/^/  /'
    # keep the failing input where it can be read after the scratch directory goes
    mkdir -p "$root/build/fuzz/failures" && cp "$work"/crash-* "$work"/leak-* "$root/build/fuzz/failures/" 2>/dev/null
  fi
  rm -rf "$work"
done
exit $status
