#!/usr/bin/env bash
# Install every Debian package hvtrace needs to build and test, on a fresh Debian 12 machine.
# Idempotent: packages already present are skipped by apt.
set -euo pipefail
PKGS=(build-essential g++ make nasm gnu-efi mtools dosfstools ovmf qemu-system-x86
      busybox-static cpio xz-utils lz4 zstd seabios vgabios acpica-tools file
      libcapstone-dev liblz4-dev libzstd-dev liblzma-dev zlib1g-dev python3 dpkg-dev clang python3-capstone libclang-rt-14-dev
      systemd     # systemd-analyze verify of the collector's unit (make test-install)
      babeltrace2 python3-jsonschema)   # the exports' readers (make test-exports)
# node and npm for the exports' readers (tests/analyze/export-readers.sh): Debian's, unless
# the machine already has a node of its own
command -v npm > /dev/null || PKGS+=(nodejs npm)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# One line here; apt's own output goes to a log (shown only if it fails).
LOG="${DEPS_LOG:-${BUILD:-build}/deps.log}"
if [ ${#missing[@]} -gt 0 ]; then
  mkdir -p "$(dirname "$LOG")"
  echo "deps: installing ${#missing[@]} Debian package(s): ${missing[*]} (log: $LOG)"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"; } > "$LOG" 2>&1; then
    tail -20 "$LOG" >&2; echo "deps: apt-get failed (log: $LOG)" >&2; exit 1
  fi
else
  echo "deps: every Debian package needed is installed"
fi
