#!/bin/sh
# gpu-bundle.sh — packs what gpu-check.sh needs on a GPU machine without Lua, cJSON or OpenBLAS:
# the build (profrun, prof/core.so, libprof), the lua5.4 interpreter, the shared libraries they
# load, and busted with its Lua modules, into build/gpu-bundle.tar.gz (make gpu-bundle).
# The device tool carries up to 64 MiB of ignored files: the script fails above LIMIT_MIB.
set -eu

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${GPU_BUNDLE_OUT:-"$ROOT/build/gpu-bundle.tar.gz"}
STAGE="$OUT.stage"
LIMIT_MIB=${GPU_BUNDLE_LIMIT_MIB:-60}
LUA=$(command -v lua5.4)
BUSTED=$(command -v busted)

for f in "$ROOT/build/bin/profrun" "$ROOT/build/lua/prof/core.so" "$ROOT/build/lib/libprof.so.0"; do
  [ -e "$f" ] || { echo "gpu-bundle: $f is missing; run make all first" >&2; exit 1; }
done

rm -rf "$STAGE"
mkdir -p "$STAGE/build/bin" "$STAGE/build/lua/prof" "$STAGE/build/lib" \
  "$STAGE/build/gpu-bundle/bin" "$STAGE/build/gpu-bundle/lib/lua" "$STAGE/build/gpu-bundle/share/lua"

# The build, stripped of debug sections (they are most of its size).
cp "$ROOT/build/bin/profrun" "$STAGE/build/bin/"
cp "$ROOT/build/lua/prof/core.so" "$STAGE/build/lua/prof/"
cp -P "$ROOT"/build/lib/libprof.so* "$STAGE/build/lib/"
# the injection library and examples/host_cuda's program, for gpu-check.sh's prof.launch row
if [ -f "$ROOT/build/lib/libprof_inject.so" ]; then
  cp "$ROOT/build/lib/libprof_inject.so" "$STAGE/build/lib/"
fi
if [ ! -x "$ROOT/examples/host_cuda/mlp" ] && [ -x "${NVCC:-/usr/local/cuda/bin/nvcc}" ]; then
  make -s -C "$ROOT/examples/host_cuda" >&2 || echo "gpu-bundle: examples/host_cuda did not build" >&2
fi
if [ -x "$ROOT/examples/host_cuda/mlp" ]; then
  mkdir -p "$STAGE/examples/host_cuda"
  cp "$ROOT/examples/host_cuda/mlp" "$STAGE/examples/host_cuda/"
fi
strip --strip-debug "$STAGE/build/bin/profrun" "$STAGE/build/lua/prof/core.so" \
  "$STAGE/build/lib/libprof.so.0".* 2>/dev/null || true

# The interpreter, busted's entry point and the Lua modules busted loads (copied through the
# alternatives' links), and their C modules.
cp "$LUA" "$STAGE/build/gpu-bundle/bin/lua5.4"
cp "$BUSTED" "$STAGE/build/gpu-bundle/bin/busted"
cp -RL /usr/share/lua/5.4 "$STAGE/build/gpu-bundle/share/lua/"
cp -RL /usr/lib/x86_64-linux-gnu/lua/5.4 "$STAGE/build/gpu-bundle/lib/lua/"

# Every shared library the binaries need except the C library's own (the GPU machine has those).
libs=$( (ldd "$LUA"; ldd "$ROOT/build/bin/profrun"; ldd "$ROOT/build/lua/prof/core.so";
         for so in $(find "$STAGE/build/gpu-bundle/lib/lua" -name '*.so'); do ldd "$so"; done) |
       awk '/=> \// { print $3 }' | sort -u)
for lib in $libs; do
  case $(basename "$lib") in
    libc.so.*|libm.so.*|libdl.so.*|librt.so.*|libpthread.so.*|ld-linux*|libprof.so.*) continue ;;
  esac
  cp -L "$lib" "$STAGE/build/gpu-bundle/lib/"
done

tar -C "$STAGE" -czf "$OUT" $(cd "$STAGE" && ls -d build examples 2>/dev/null)
rm -rf "$STAGE"
size=$(wc -c < "$OUT")
mib=$(( (size + 1048575) / 1048576 ))
if [ "$mib" -gt "$LIMIT_MIB" ]; then
  echo "gpu-bundle: $OUT is $mib MiB, over the $LIMIT_MIB MiB the device tool carries" >&2
  exit 1
fi
echo "gpu-bundle: $OUT ($mib MiB): carry build/gpu-bundle.tar.gz; run scripts/tools/gpu-check.sh"
