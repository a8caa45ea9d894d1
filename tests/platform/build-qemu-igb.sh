#!/usr/bin/env bash
# build-qemu-igb.sh - a QEMU with the igb model (82576; QEMU 8.0 and later) for
# `make test-net-qemu-igb`, built from Debian trixie's qemu source package into a cache folder
# outside the repo; reused when already built. Debian 12's QEMU 7.2 has e1000e but no igb.
# Not part of the default test run: the build takes tens of minutes on 2 cores.
# Only x86_64-softmmu with TCG and slirp (user networking); no firmware blobs are installed (the
# tests use Debian's OVMF).
# QEMU 10 needs meson >= 1.5 and pycotap, which bookworm does not have: trixie's binary packages
# of both are fetched with a private apt configuration (the machine's sources stay as they are)
# and unpacked into the cache, not installed.
# Needs (apt-get install): libglib2.0-dev libpixman-1-dev libslirp-dev dpkg-dev ninja-build bzip2.
# Prints the path of qemu-system-x86_64 on stdout.
set -euo pipefail
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"
QVER=10.0.13
QDEB="1:$QVER+ds-0+deb13u1"
WORK="$CACHE/qemu-igb"
BIN="$WORK/qemu-$QVER/build/qemu-system-x86_64"
STAMP="$WORK/.built-v1"
if [ -x "$BIN" ] && [ -f "$STAMP" ]; then echo "$BIN"; exit 0; fi
mkdir -p "$WORK"
cd "$WORK"

# meson and pycotap from trixie's binary index, through a private apt state in the cache.
APT="$WORK/apt"
mkdir -p "$APT/lists/partial" "$APT/cache/archives/partial"
uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=http://deb.debian.org/debian
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri trixie main" > "$APT/sources.list"
AOPT=(-o Dir::Etc::SourceList="$APT/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o Dir::State::Lists="$APT/lists" -o Dir::Cache="$APT/cache" -o APT::Architecture=amd64)
if ! ls meson_*_all.deb python3-pycotap_*_all.deb >/dev/null 2>&1; then
  apt-get "${AOPT[@]}" update -qq >&2
  apt-get "${AOPT[@]}" download meson python3-pycotap >&2
fi
rm -rf pyroot && for d in meson_*_all.deb python3-pycotap_*_all.deb; do dpkg-deb -x "$d" pyroot; done
PYDIR="$WORK/pyroot/usr/lib/python3/dist-packages"
[ -d "$PYDIR/mesonbuild" ] || { echo "build-qemu-igb: no meson in $PYDIR" >&2; exit 1; }

# the source, from the deb-src entry build-bochs.sh keeps for trixie
if [ ! -f "qemu_$QVER+ds.orig.tar.xz" ]; then
  apt-get source --download-only "qemu=$QDEB" >&2 || true
  [ -f "qemu_$QVER+ds.orig.tar.xz" ] || { echo "build-qemu-igb: could not fetch qemu $QVER source" >&2; exit 1; }
fi
rm -rf "qemu-$QVER" && tar -xf "qemu_$QVER+ds.orig.tar.xz"
cd "qemu-$QVER"
# Debian's repacked source drops the firmware blobs; meson would still unpack the EDK2 ones.
sed -i 's/^\( *\)unpack_edk2_blobs = bzip2.found()/\1unpack_edk2_blobs = false/' meson.build
mkdir build && cd build
export PYTHONPATH="$PYDIR"
PATH="$WORK/pyroot/usr/bin:$PATH" ../configure --python=/usr/bin/python3 --target-list=x86_64-softmmu \
  --without-default-features --enable-slirp --enable-tcg --disable-werror --disable-download \
  --disable-rust --disable-install-blobs >&2
ninja -j"$(nproc)" qemu-system-x86_64 >&2
[ -x "$BIN" ] || { echo "build-qemu-igb: no $BIN" >&2; exit 1; }
touch "$STAMP"
echo "$BIN"
