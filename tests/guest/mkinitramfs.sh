#!/usr/bin/env bash
# mkinitramfs.sh - build the test initramfs: Debian's busybox-static, tests/guest/init and
# the guest tools, as an uncompressed cpio newc archive (uncompressed on purpose: in Bochs
# every decompressed byte costs emulated instructions; the archive is ~3 MB).
# usage: mkinitramfs.sh OUT.cpio HVTRACE_GUEST_BINARY [EXTRA_SRC:DEST ...]
#   env BUSYBOX  (default /bin/busybox, must be static: Debian's busybox-static)
#   env COMPRESS (none|gzip|lz4; default none)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$1"; guest="$2"; shift 2
busybox="${BUSYBOX:-/bin/busybox}"
file -L "$busybox" 2>/dev/null | grep -q "statically linked" || {
  echo "mkinitramfs: $busybox is not a static busybox (install busybox-static)" >&2; exit 1; }
entries=(dir:dev:755 dir:proc:755 dir:sys:755 dir:bin:755 dir:sbin:755 dir:lib:755 dir:tmp:1777
         dir:root:700 dir:etc:755 chr:dev/console:600:5:1 chr:dev/null:666:1:3
         "file:bin/busybox:755:$busybox" sym:bin/sh:busybox
         "file:bin/hvtrace-guest:755:$guest" "file:init:755:$here/init")
for extra in "$@"; do entries+=("file:${extra#*:}:755:${extra%%:*}"); done
tmp="$out.tmp"
python3 "$here/mkcpio.py" "$tmp" "${entries[@]}"
case "${COMPRESS:-none}" in
  none) mv "$tmp" "$out" ;;
  gzip) gzip -9 -n -c "$tmp" > "$out"; rm -f "$tmp" ;;
  lz4)  lz4 -l -9 -q -f "$tmp" "$out"; rm -f "$tmp" ;;   # -l: legacy frame, what the kernel reads
  *) echo "mkinitramfs: COMPRESS must be none, gzip or lz4" >&2; exit 1 ;;
esac
