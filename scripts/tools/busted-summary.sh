#!/bin/sh
# busted-summary.sh — passes busted's output through and ends it with "N passed, N failed".
out=$(cat)
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^[0-9]+ successes? / [0-9]+ failures? / [0-9]+ errors? / [0-9]+ pending' | tail -n 1)
if [ -z "$line" ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
set -- $line
passed=$1
failed=$(($4 + $7))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
