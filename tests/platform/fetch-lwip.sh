#!/usr/bin/env bash
# Fetch Debian bookworm's lwip source package (2.1.3+dfsg1-2) and unpack it into a cache folder
# outside the repo (lwIP is built at build time, never copied into hvtrace). Reuses the cache.
# Prints the unpacked source directory (the one holding src/core) on stdout.
set -euo pipefail
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"
# Pinned to bookworm's version (2.1.3, the one measured to build freestanding: docs/references.md); trixie deb-src may also be configured.
LWIP_VERSION=2.1.3+dfsg1-2
WORK="$CACHE/lwip-src"
STAMP="$WORK/.unpacked-v1"
if [ -f "$STAMP" ]; then cat "$STAMP"; exit 0; fi
SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
SRC_LIST=/etc/apt/sources.list.d/hvtrace-bookworm-src.sources
if [ ! -f "$SRC_LIST" ]; then
  # deb-src for bookworm with the same mirror as the machine's existing entries.
  uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
  [ -n "$uri" ] || uri=http://deb.debian.org/debian
  printf 'Types: deb-src\nURIs: %s\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uri" | $SUDO tee "$SRC_LIST" >/dev/null
  $SUDO apt-get update -qq >&2
fi
mkdir -p "$WORK"
cd "$WORK"
if ! ls lwip_${LWIP_VERSION%-*}.orig.tar.* >/dev/null 2>&1; then
  apt-get source --download-only "lwip=$LWIP_VERSION" >&2 || true
  ls lwip_${LWIP_VERSION%-*}.orig.tar.* >/dev/null 2>&1 || { echo "fetch-lwip: could not fetch the lwip source package" >&2; exit 1; }
fi
rm -rf unpacked && mkdir unpacked
tar -C unpacked -xf lwip_${LWIP_VERSION%-*}.orig.tar.*
dir=$(dirname "$(find "$WORK/unpacked" -path '*/src/core/tcp.c' | head -1)")
dir=$(cd "$dir/../.." && pwd)
[ -f "$dir/src/include/lwip/opt.h" ] || { echo "fetch-lwip: unexpected source layout" >&2; exit 1; }
echo "$dir" > "$STAMP"
echo "$dir"
