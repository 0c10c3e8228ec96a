#!/bin/sh
# bench.sh — `make bench`: the profiler's hot-path costs from C and from Lua, on this machine.
set -e
cd "$(dirname "$0")/../.."
echo "== $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
build/bin/bench_core
lua5.4 -e 'package.path="./lua/?.lua;./lua/?/init.lua;"..package.path; package.cpath="./build/lua/?.so;"..package.cpath' \
  scripts/tools/bench_lua.lua
