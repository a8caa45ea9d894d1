#!/usr/bin/env bash
# Fetch one exact, pinned Debian kernel package and unpack it (never modified) into the cache.
# Usage: fetch-kernel.sh [PACKAGE VERSION]   Prints the path of the vmlinuz on stdout.
set -euo pipefail
PKG="${1:-linux-image-6.1.0-50-cloud-amd64-unsigned}"
VER="${2:-6.1.176-1}"
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"
DIR="$CACHE/kernels/${PKG}_${VER}"
if [ ! -d "$DIR/root/boot" ]; then
  mkdir -p "$DIR"
  ( cd "$DIR" && apt-get download "$PKG=$VER" >&2 )
  dpkg-deb -x "$DIR"/*.deb "$DIR/root"
fi
ls "$DIR"/root/boot/vmlinuz-* | head -n1
