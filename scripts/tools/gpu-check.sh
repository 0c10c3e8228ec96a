#!/bin/sh
# gpu-check.sh — the one prepared check for a machine with a GPU: the GPU specs (every op family
# on cuda against the cpu), cuBLAS peaks and the runtime's GEMMs against them, AlexNet and BERT on
# cuda, their training step times; prints one table. Needs no Lua, cJSON or OpenBLAS there: it
# unpacks build/gpu-bundle.tar.gz (make gpu-bundle) when carried, else builds with make.
#   scripts/tools/gpu-check.sh             exit 0 all passed, 1 a check failed, 2 cannot run,
#                                          3 no GPU (the table says why)
#   scripts/tools/gpu-check.sh --dry-run   on a machine without a GPU: every step runs with the
#                                          cpu standing in for cuda and nothing timed (tests this
#                                          script's own logic)
set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT" || exit 2
DRY=0
case "${1:-}" in
  --dry-run) DRY=1 ;;
  "") ;;
  *) echo "usage: scripts/tools/gpu-check.sh [--dry-run]" >&2; exit 2 ;;
esac
OUT=build/gpu-check
mkdir -p "$OUT" && rm -f "$OUT"/*
say() { echo "gpu-check: $*" >&2; }
now() { date +%s.%N; }

# {=================== the build and the interpreter ===================}

# The carried tarball is unpacked where there is no build yet, or when it is newer than the build
# (never over a fresher local build).
BUNDLE=build/gpu-bundle
if [ -f build/gpu-bundle.tar.gz ] && { [ ! -x build/bin/profrun ] ||
     [ build/gpu-bundle.tar.gz -nt build/bin/profrun ]; }; then
  tar -xzf build/gpu-bundle.tar.gz || { say "cannot unpack build/gpu-bundle.tar.gz"; exit 2; }
  touch build/bin/profrun
fi
if [ -x "$BUNDLE/bin/lua5.4" ]; then
  B="$ROOT/$BUNDLE"
  LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  LUA_PATH="$B/share/lua/5.4/?.lua;$B/share/lua/5.4/?/init.lua;;"
  LUA_CPATH="$B/lib/lua/5.4/?.so;;"
  export LD_LIBRARY_PATH LUA_PATH LUA_CPATH
  LUA="$B/bin/lua5.4"
  BUSTED="$B/bin/busted"
  HOW="bundle (build/gpu-bundle.tar.gz)"
elif command -v lua5.4 >/dev/null 2>&1 && command -v busted >/dev/null 2>&1; then
  LUA=lua5.4
  BUSTED=$(command -v busted)
  if [ ! -x build/bin/profrun ]; then
    say "building (make all)"
    make -j"$(nproc)" all > "$OUT/build.log" 2>&1 || { say "make all failed: $OUT/build.log"; exit 2; }
  fi
  HOW="local build"
else
  say "no build/gpu-bundle.tar.gz and no lua5.4/busted here: run 'make gpu-bundle' where they"
  say "exist and carry build/gpu-bundle.tar.gz"
  exit 2
fi
PROFRUN=build/bin/profrun
"$PROFRUN" --version > /dev/null 2>&1 || { say "$PROFRUN does not run ($HOW)"; exit 2; }

# {=================== is there a GPU? ===================}

STATUS=$("$PROFRUN" scripts/tools/gpu_check.lua --status 2>&1)
STATE=$(printf '%s' "$STATUS" | cut -f1)
DEVICE=$(printf '%s' "$STATUS" | cut -f2)
SMI=""
command -v nvidia-smi > /dev/null 2>&1 && SMI=$(nvidia-smi -L 2>/dev/null | head -1)
if [ "$STATE" != "available" ] && [ "$DRY" = 0 ]; then
  echo "GPU check: no GPU: $DEVICE"
  [ -n "$SMI" ] && echo "  nvidia-smi: $SMI"
  echo "  (run with --dry-run to check this script's steps on the cpu)"
  exit 3
fi
[ "$DRY" = 1 ] && DEVICE="dry run: cpu stands in for cuda (${DEVICE})"

# {=================== the steps ===================}

SPEC_ENV=""
[ "$DRY" = 1 ] && SPEC_ENV="PROF_GPU_SPEC_DEVICE=cpu"
t0=$(now)
env $SPEC_ENV PROF_GPU_RESULTS="$OUT/specs.tsv" "$LUA" "$BUSTED" --run=gpu -o plainTerminal spec/gpu \
  > "$OUT/specs.log" 2>&1
SPEC_RC=$?
t_specs=$(echo "$(now) $t0" | awk '{ printf "%.1f", $1 - $2 }')
say "GPU specs: exit $SPEC_RC in ${t_specs} s ($OUT/specs.log)"

# examples/host_cuda (cuBLAS + NVTX, no profrun code) for the prof.launch row: built here when
# it was not carried and nvcc exists
if [ "$DRY" = 0 ] && [ ! -x examples/host_cuda/mlp ] && command -v "${NVCC:-/usr/local/cuda/bin/nvcc}" \
     > /dev/null 2>&1; then
  make -C examples/host_cuda > "$OUT/host_cuda.log" 2>&1 || say "examples/host_cuda did not build"
fi

MEASURE_ARG=""
[ "$DRY" = 1 ] && MEASURE_ARG="--quick"
PROF_GPU_CHECK_OUT="$OUT" "$PROFRUN" scripts/tools/gpu_check.lua $MEASURE_ARG > "$OUT/measure.tsv" \
  2> "$OUT/measure.err"
MEASURE_RC=$?
say "measurements: exit $MEASURE_RC ($OUT/measure.tsv)"

EX_DEVICE=cuda
[ "$DRY" = 1 ] && EX_DEVICE=meta
for ex in alexnet bert; do
  t0=$(now)
  timeout 300 "$PROFRUN" --device "$EX_DEVICE" configs/default.json "examples/$ex.lua" \
    > "$OUT/$ex.log" 2>&1
  rc=$?
  printf 'example\t%s on %s\t%s\t%s\n' "$ex" "$EX_DEVICE" "$rc" \
    "$(echo "$(now) $t0" | awk '{ printf "%.2f", $1 - $2 }')" >> "$OUT/examples.tsv"
  say "example $ex on $EX_DEVICE: exit $rc ($OUT/$ex.log)"
done

# {=================== the table ===================}

SPEC_LINE=$(grep -oE '[0-9]+ successes? / [0-9]+ failures? / [0-9]+ errors?' "$OUT/specs.log" | tail -1)
[ -z "$SPEC_LINE" ] && SPEC_LINE="busted gave no summary (exit $SPEC_RC)"
[ -f "$OUT/specs.tsv" ] || : > "$OUT/specs.tsv"

awk -F'\t' -v device="$DEVICE" -v how="$HOW" -v smi="$SMI" -v specs="$SPEC_LINE" \
    -v spec_rc="$SPEC_RC" -v measure_rc="$MEASURE_RC" -v dry="$DRY" '
function row(a, b, c, d) { printf "| %-44s | %-22s | %-22s | %-8s |\n", a, b, c, d }
function rule() { print "+" sep(46) "+" sep(24) "+" sep(24) "+" sep(10) "+" }
function sep(n,   s) { s = ""; while (n-- > 0) s = s "-"; return s }
function tf(x) { return x >= 1e12 ? sprintf("%.1f TFLOP/s", x / 1e12) : sprintf("%.1f GFLOP/s", x / 1e9) }
FILENAME ~ /specs.tsv$/ {
  fam = $1; if (!(fam in worst) || $3 + 0 > worst[fam]) { worst[fam] = $3 + 0; tol[fam] = $4 }
  if (!(fam in seen)) { order[++nf] = fam; seen[fam] = 1 }
  n[fam]++; next
}
FILENAME ~ /measure.tsv$/ {
  if ($1 == "peak") peak[$2] = $3
  else if ($1 == "gemm") { gd[++ng] = $2; gv[$2] = $3; gn[$2] = $4 }
  else if ($1 == "correct") { cn[++nc] = $2; cv[$2] = $3; ct[$2] = $4 }
  else if ($1 == "step") { sn[++ns] = $2; sb[$2] = $3; sm[$2] = $4 }
  else if ($1 == "launch") { ln = $2; lm = $3; lk = $4; la = $5; ld = $6; lo = $7 }
  else if ($1 == "cupti") { cupti[$2] = 1; c3[$2] = $3; c4[$2] = $4; c5[$2] = $5; c6[$2] = $6 }
  else if ($1 == "error") { err = err $2 ": " $3 " " }
  next
}
FILENAME ~ /examples.tsv$/ { en[++ne] = $2; erc[$2] = $3; et[$2] = $4; next }
END {
  fail = 0
  printf "GPU check: %s\n  build: %s%s\n", device, how, smi != "" ? "\n  nvidia-smi: " smi : ""
  rule(); row("check", "measured", "reference", "verdict"); rule()
  row("GPU specs (spec/gpu, cuda vs cpu)", "", "", spec_rc == 0 ? "pass" : "FAIL")
  if (spec_rc != 0) fail = 1
  row("  " specs, "", "", "")
  for (i = 1; i <= nf; i++) {
    f = order[i]; ok = worst[f] <= tol[f]
    row("  " f " (" n[f] " cases, worst rel. error)", sprintf("%.2g", worst[f]), "<= " tol[f], ok ? "pass" : "FAIL")
  }
  rule()
  for (i = 1; i <= ng; i++) {
    d = gd[i]; p = peak[d] + 0
    pct = p > 0 ? sprintf("%.0f%% of peak", 100 * gv[d] / p) : "-"
    target = (d == "bfloat16" && p > 0) ? (gv[d] >= 0.85 * p ? "pass" : "FAIL") : ""
    if (target == "FAIL") fail = 1
    row("GEMM " d " " gn[d] "^3 via the runtime", tf(gv[d]), p > 0 ? "cuBLAS peak " tf(p) : "-", target)
    row("", pct, d == "bfloat16" ? "target >= 85%" : "", "")
  }
  if ("copy" in peak) row("device copy bandwidth (read + written)", sprintf("%.0f GB/s", peak["copy"] / 1e9), "", "")
  rule()
  for (i = 1; i <= nc; i++) {
    c = cn[i]; ok = cv[c] <= ct[c]; if (!ok) fail = 1
    row(c " vs cpu", sprintf("%.2g rel.", cv[c]), "<= " ct[c], ok ? "pass" : "FAIL")
  }
  for (i = 1; i <= ns; i++) {
    s = sn[i]; row(s, sprintf("%.1f ms best", sb[s] * 1e3), sprintf("%.1f ms median", sm[s] * 1e3), "")
  }
  for (i = 1; i <= ne; i++) {
    e = en[i]; ok = erc[e] == 0; if (!ok) fail = 1
    row("example " e, "exit " erc[e], et[e] " s wall", ok ? "pass" : "FAIL")
  }
  if (measure_rc != 0) { fail = 1; row("measurements (gpu_check.lua)", "exit " measure_rc, "", "FAIL") }
  if (err != "") { fail = 1; row("measurement errors: " err, "", "", "FAIL") }
  rule()
  # CUPTI capture (the cupti rows of gpu_check.lua): BERT-base steps, a bf16 GEMM, a step trace
  if ("attribution" in cupti) {
    rate = c5["attribution"] > 0 ? c4["attribution"] / c5["attribution"] : 0
    ok = rate >= 1; if (!ok) fail = 1
    row("CUPTI kernels " c3["attribution"] ", device ops attributed to ops", sprintf("%d of %d (%.1f%%)", c4["attribution"], c5["attribution"], 100 * rate), "target 100%", ok ? "pass" : "FAIL")
  } else row("CUPTI kernels attributed to ops", "not measured", "target 100%", dry ? "" : "FAIL")
  if ("overhead" in cupti) {
    ok = c3["overhead"] <= c4["overhead"]; if (!ok) fail = 1
    row("CUPTI overhead (profiled / plain BERT step)", sprintf("%.3f (median of 3)", c3["overhead"]), "target <= " c4["overhead"], ok ? "pass" : "FAIL")
  } else row("CUPTI overhead (profiled / plain step)", "not measured", "target <= 1.05", dry ? "" : "FAIL")
  if ("tflops" in cupti) {
    d = c4["tflops"] > 0 ? (c3["tflops"] - c4["tflops"]) / c4["tflops"] : 1
    ok = d <= 0.02 && d >= -0.02; if (!ok) fail = 1
    row("bf16 GEMM TFLOP/s reported (CUPTI)", tf(c3["tflops"]), "CUDA events " tf(c4["tflops"]), ok ? "pass" : "FAIL")
    row("", sprintf("%+.1f%%", 100 * d), "target within 2%", "")
  }
  if (ln != "") {
    ok = lk > 0 && la == ld; if (!ok) fail = 1
    row("prof.launch examples/host_cuda (unmodified)", lm " modules, " lk " kernels", sprintf("%d of %d attributed", la, ld), ok ? "pass" : "FAIL")
    row("", sprintf("%.2fx wall (median of 3)", lo), "under / plain run", "")
  }
  if ("trace" in cupti)
    row("trace events (kernel / memcpy / memset)", c3["trace"] " / " c4["trace"] " / " c5["trace"], c6["trace"] " ac2g flow ends", "")
  rule()
  if (dry) print "dry run: nothing above was computed on a GPU"
  exit fail
}' "$OUT/specs.tsv" "$OUT/measure.tsv" "$OUT/examples.tsv" > "$OUT/table.txt"
rc=$?
cat "$OUT/table.txt"
exit "$rc"
