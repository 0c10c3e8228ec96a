#!/bin/sh
# deps.sh — installs the Debian packages profrun needs, only those missing (idempotent).
set -eu

PACKAGES="gcc make pkg-config lua5.4 liblua5.4-dev libcjson-dev lua-busted lua-check
libopenblas-dev zlib1g-dev valgrind time binutils"

missing=""
for p in $PACKAGES; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0

echo "deps.sh: installing$missing"
if [ "$(id -u)" = 0 ]; then
  SUDO=""
elif command -v sudo >/dev/null 2>&1; then
  SUDO="sudo"
else
  echo "deps.sh: missing packages:$missing; run as root or install them yourself" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq || true
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
