#!/bin/sh
# bench.sh — `make bench`: the profiler's hot-path costs from C and from Lua, on this machine.
set -e
[ -x /usr/bin/time ] || { echo "bench.sh: /usr/bin/time is missing (Debian package: time)" >&2; exit 1; }
cd "$(dirname "$0")/../.."
echo "== $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
build/bin/bench_core
build/bin/bench_trace
lua5.4 -e 'package.path="./lua/?.lua;./lua/?/init.lua;"..package.path; package.cpath="./build/lua/?.so;"..package.cpath' \
  scripts/tools/bench_lua.lua
lua5.4 -e 'package.path="./lua/?.lua;./lua/?/init.lua;"..package.path; package.cpath="./build/lua/?.so;"..package.cpath' \
  scripts/tools/bench_profiler.lua

# A whole profrun run on GPT-3 175B (meta, batch 1, seq 2048) against an empty script's run:
# wall seconds and peak resident memory (medians of 5).
run_stats() {
  for i in 1 2 3 4 5; do
    /usr/bin/time -f "%e %M" build/bin/profrun --device meta --set flops_profiler.format=summary \
      configs/default.json "$@" 2>&1 >/dev/null | tail -n 1
  done | sort -n | sed -n 3p
}
base=$(run_stats scripts/tools/empty.lua)
gpt3=$(run_stats examples/model_profile.lua --model gpt3-175B --seq 2048)
set -- $base $gpt3
awk -v bw="$1" -v bm="$2" -v w="$3" -v m="$4" 'BEGIN {
  printf "profrun GPT-3 175B (meta, seq 2048): %.2f s wall, %.1f MB peak RSS (empty script: %.2f s, %.1f MB)\n",
    w, m / 1024, bw, bm / 1024 }'

# Scale: a million modules (blocks of 1,000 ReLUs, meta) with a JSON profile, and a chain of
# 1,000 nested Sequentials with DeepSpeed's text report: wall seconds, peak RSS, the JSON's size.
scale_dir=$(mktemp -d)
scale_run() {
  /usr/bin/time -f "%e %M" build/bin/profrun --device meta --set flops_profiler.output_file="$scale_dir/$1" \
    configs/default.json scripts/tools/bench_modules.lua "$2" "$3" 2>&1 >/dev/null | tail -n 1
}
set -- $(scale_run million.json --modules 1000000)
bytes=$(wc -c < "$scale_dir/million.json")
awk -v w="$1" -v m="$2" -v b="$bytes" 'BEGIN {
  printf "profrun 1,000,000 modules (meta, JSON profile): %.1f s wall, %.0f MB peak RSS, JSON %.1f MB (%.0f bytes per module)\n",
    w, m / 1024, b / 1e6, b / 1e6 }'
set -- $(scale_run chain.txt --depth 1000)
awk -v w="$1" -v m="$2" 'BEGIN {
  printf "profrun 1,000 nested Sequentials (meta, text report): %.2f s wall, %.1f MB peak RSS\n", w, m / 1024 }'
rm -rf "$scale_dir"

# profrun against PyTorch 1.13 on the same models, batch and thread count (cpu), and the flops
# profiler's own overhead. Skipped pieces say why.
THREADS=$(nproc)
LUA="lua5.4 -e package.path='./lua/?.lua;./lua/?/init.lua;'..package.path;package.cpath='./build/lua/?.so;'..package.cpath"
echo "== cpu training, $THREADS threads (OpenBLAS for profrun, torch.set_num_threads for PyTorch)"
ours=$(OPENBLAS_NUM_THREADS=$THREADS $LUA scripts/tools/bench_train.lua --model resnet18 --batch 16 --iters 3;
       OPENBLAS_NUM_THREADS=$THREADS $LUA scripts/tools/bench_train.lua --model bert-base --batch 8 --seq 128 --iters 3;
       OPENBLAS_NUM_THREADS=$THREADS $LUA scripts/tools/bench_train.lua --model resnet18 --batch 1 --iters 41 --overhead)
printf '%s\n' "$ours"
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  theirs=$(/usr/bin/python3 scripts/tools/bench_torch.py "$THREADS")
  printf '%s\n' "$theirs" | sed 's/^/torch /'
  printf '%s\n%s\n' "$ours" "$theirs" | awk '
    $2 == "forward" && !($1 in f) { f[$1] = $3; s[$1] = $5; next }
    $2 == "forward" { printf "%-10s forward profrun/torch %.2fx, step %.2fx\n", $1, f[$1] / $3, s[$1] / $5 }'
else
  echo "PyTorch 1.13 is not installed for /usr/bin/python3 (apt-get install python3-torch python3-torchvision): no comparison"
fi
printf '%s\n' "$ours" | awk '$2 == "overhead" { printf "%s batch 1: flops profiler overhead on a forward %+.1f %% (plain %.4f s)\n", $1, ($6 / $4 - 1) * 100, $4 }'
OPENBLAS_NUM_THREADS=$THREADS $LUA scripts/tools/bench_mlp.lua

# The activity profiler beside torch.profiler on the same step and thread count: overhead on a
# ResNet-18 batch-1 training step with activities cpu + record_shapes (target <= 3 %), the trace
# export on 100,000 events (targets >= 3 M events/s plain, >= 1 M gzip); bench_profiler.lua
# above gives record_function's cost (target <= 300 ns), torch's is printed here.
echo "== activity profiler, cpu, $THREADS threads"
act=$(OPENBLAS_NUM_THREADS=$THREADS $LUA scripts/tools/bench_activity.lua --rounds 16)
printf '%s\n' "$act"
printf '%s\n' "$act" | awk '$2 == "overhead" { printf "profrun activity profiler overhead on the step: %+.1f %%\n", ($14 - 1) * 100 }'
if /usr/bin/python3 -c "import torch, torchvision" 2>/dev/null; then
  tp=$(/usr/bin/python3 scripts/tools/bench_torch_profiler.py "$THREADS" 16 2>/dev/null)
  printf '%s\n' "$tp"
  printf '%s\n' "$tp" | awk '$2 == "overhead" { printf "torch.profiler overhead on the step: %+.1f %%\n", ($14 - 1) * 100 }'
fi
$LUA scripts/tools/bench_long_run.lua
