#!/usr/bin/env bash
# Build Bochs 3.0 (the VT-x test machine, with a working monitor trap flag) from Debian
# trixie's source package into a cache folder outside the repo; reuse it when already built.
# See ../shared/FACTS.md: Debian 12's Bochs 2.7 has no working MTF and must not be used.
# Prints the install prefix on stdout.
set -euo pipefail
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"
PREFIX="$CACHE/bochs-3.0"
STAMP="$PREFIX/.built-v2"
if [ -x "$PREFIX/bin/bochs" ] && [ -f "$STAMP" ]; then echo "$PREFIX"; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
SRC_LIST=/etc/apt/sources.list.d/hvtrace-trixie-src.sources
if [ ! -f "$SRC_LIST" ]; then
  # deb-src for trixie with the same mirror as the machine's existing entries.
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" | $SUDO tee "$SRC_LIST" >/dev/null
  $SUDO apt-get update -qq >&2
fi
WORK="$CACHE/bochs-src"
mkdir -p "$WORK"
cd "$WORK"
if [ ! -f bochs_3.0+dfsg.orig.tar.xz ]; then
  # The .dsc 404s (FACTS.md) but the tarballs arrive; do not fail on apt's exit status.
  apt-get source --download-only bochs=3.0+dfsg-1 >&2 || true
  [ -f bochs_3.0+dfsg.orig.tar.xz ] || { echo "build-bochs: could not fetch bochs 3.0 source" >&2; exit 1; }
fi
rm -rf build && mkdir build && tar -C build -xf bochs_3.0+dfsg.orig.tar.xz
cd build/*/
# --enable-instrumentation gives us an independent count of guest instructions (a test oracle);
# the instrument/ folder is filled in by tests/platform/instrument (hvtrace's own hooks).
INSTR=()
if [ -n "${HVT_BOCHS_INSTR:-}" ] && [ -d "$HVT_BOCHS_INSTR" ]; then
  rm -rf instrument/hvtrace && cp -r "$HVT_BOCHS_INSTR" instrument/hvtrace
  INSTR=(--enable-instrumentation=instrument/hvtrace)
fi
./configure --prefix="$PREFIX" --enable-x86-64 --enable-vmx=2 --enable-cpu-level=6 --enable-pci \
  --enable-e1000 --enable-smp --with-nogui --enable-all-optimizations --enable-avx --enable-evex \
  --disable-debugger "${INSTR[@]}" >&2
make -j"$(nproc)" >&2
make install >&2
touch "$STAMP"
echo "$PREFIX"
