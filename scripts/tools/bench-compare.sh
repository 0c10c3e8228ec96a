#!/bin/sh
# bench-compare.sh — `make bench` of two built trees, alternated A B A B ..., with the median of the paired ratios.
# Usage: scripts/tools/bench-compare.sh BASE_TREE NEW_TREE [ROUNDS]   (both trees already built,
# e.g. a `git worktree add --detach /tmp/base <rev>` of the commit before a reshaping, then make).
# Shared machines drift: each figure of the new tree is divided by the base's of the same round, and
# the median of those ratios is reported, so the drift hits both sides alike.
set -e
base=$1
new=$2
rounds=${3:-3}
[ -d "$base" ] && [ -d "$new" ] || { echo "usage: $0 BASE_TREE NEW_TREE [ROUNDS]" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# One line per figure: "name value" from one bench.sh output (lines either tree prints).
extract() {
  awk '
    /^C   module enter\+exit/      { print "c_enter_exit_ns", $4 }
    /^C   op record \(linear\)/    { print "c_op_linear_ns", $5 }
    /^C   op record \(custom\)/    { print "c_op_custom_ns", $5 }
    /^Lua module call:/            { print "lua_call_plain_ns", $4; print "lua_call_profiled_extra_ns", $8 }
    /^profrun GPT-3 175B/          { print "gpt3_wall_s", $7; print "gpt3_rss_mb", $10 }
    /^resnet18 forward [0-9]/      { print "resnet18_fwd_s", $3; print "resnet18_step_s", $5 }
    /^bert-base forward [0-9]/     { print "bert_fwd_s", $3; print "bert_step_s", $5 }
    /^torch resnet18 forward/      { print "torch_resnet18_fwd_s", $4; print "torch_resnet18_step_s", $6 }
    /^torch bert-base forward/     { print "torch_bert_fwd_s", $4; print "torch_bert_step_s", $6 }
    /flops profiler overhead on a forward/ { v = $10; sub(/^\+/, "", v); print "resnet18_overhead_pct", v }
    /^mlp200 /                     { print "mlp200_per_call_us", $7 }
    /^resnet18 forward [0-9]/      { rf = $3; rs = $5 }
    /^bert-base forward [0-9]/     { bf = $3; bs = $5 }
    /^torch resnet18 forward/      { if (rf) { print "resnet18_fwd_over_torch", rf / $4; print "resnet18_step_over_torch", rs / $6 } }
    /^torch bert-base forward/     { if (bf) { print "bert_fwd_over_torch", bf / $4; print "bert_step_over_torch", bs / $6 } }
  ' | sort
}

i=1
while [ "$i" -le "$rounds" ]; do
  for side in base new; do
    eval dir=\$$side
    (cd "$dir" && scripts/tools/bench.sh 2>&1) | extract > "$out/$side.$i"
    echo "round $i $side done" >&2
  done
  i=$((i + 1))
done

# Paired ratios new/base per figure and round, then the median per figure.
for f in "$out"/new.*; do
  r=${f##*.}
  join "$out/base.$r" "$f" 2>/dev/null || true
done | awk '
  $2 + 0 != 0 { n[$1]++; v[$1, n[$1]] = $3 / $2; b[$1, n[$1]] = $2; w[$1, n[$1]] = $3 }
  END {
    printf "%-28s %12s %12s %10s  (median of %s)\n", "figure", "base", "new", "new/base", "paired rounds"
    for (k in n) {
      m = n[k]
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++)
        if (v[k, j] < v[k, i]) { t = v[k, i]; v[k, i] = v[k, j]; v[k, j] = t }
      med = (m % 2) ? v[k, (m + 1) / 2] : (v[k, m / 2] + v[k, m / 2 + 1]) / 2
      printf "%-28s %12s %12s %9.3fx  (%d)\n", k, b[k, 1], w[k, 1], med, m
    }
  }' | sort
