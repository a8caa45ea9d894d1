#!/usr/bin/env bash
# Capture the ground truth for `make test-analyze` from a real boot of each pinned kernel
# (tests/analyze/kernels.txt) under QEMU TCG (no KVM here; Bochs is reserved for the hypervisor).
# KASLR stays on. The guest runs guest_probe (static) from a busybox initramfs, which sends
# /proc/kallsyms, /sys/kernel/btf/vmlinux and raw task_struct/init_mm memory out of the second serial
# port; this script unpacks that into tests/analyze/fixtures/<release>/ (xz-compressed).
# Usage: capture-fixtures.sh [PACKAGE VERSION]   (default: every kernel in kernels.txt)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

gcc -static -O2 -Wall -o "$WORK/hvtprobe" "$HERE/guest_probe.c"
mkdir -p "$WORK/initrd/bin" "$WORK/initrd/proc" "$WORK/initrd/sys" "$WORK/initrd/dev"
cp /bin/busybox "$WORK/initrd/bin/busybox"
cp "$WORK/hvtprobe" "$WORK/initrd/hvtprobe"
cat > "$WORK/initrd/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev 2>/dev/null
/hvtprobe /dev/ttyS1 && echo HVT_PROBE_OK
poweroff -f
INIT
chmod +x "$WORK/initrd/init"
( cd "$WORK/initrd" && find . | cpio -o -H newc --quiet ) > "$WORK/initrd.cpio"

capture_one() {
  local pkg="$1" ver="$2" vmlinuz rel out
  vmlinuz="$(bash "$ROOT/tests/platform/fetch-kernel.sh" "$pkg" "$ver")"
  rel="${vmlinuz##*/vmlinuz-}"
  out="$HERE/fixtures/$rel"
  echo "capture: $rel ($pkg $ver)" >&2
  rm -f "$WORK/serial1.bin"
  timeout 600 qemu-system-x86_64 -machine q35 -cpu max -smp 1 -m 512 -display none -monitor none -no-reboot \
    -kernel "$vmlinuz" -initrd "$WORK/initrd.cpio" \
    -append 'console=ttyS0 quiet panic=-1 cryptomgr.notests' \
    -serial file:"$WORK/console.log" -serial file:"$WORK/serial1.bin" \
    < /dev/null > "$WORK/qemu.log" 2>&1 || true
  grep -q HVT_PROBE_OK "$WORK/console.log" || { cat "$WORK/qemu.log" "$WORK/console.log" >&2; echo "capture: probe failed" >&2; return 1; }
  mkdir -p "$out"
  python3 - "$WORK/serial1.bin" "$out" <<'PY'
import sys, os
data = open(sys.argv[1], 'rb').read(); out = sys.argv[2]; pos = data.index(b'HVTF ')
while True:
    nl = data.index(b'\n', pos); head = data[pos:nl].split()
    if head[0] == b'HVTEND': break
    name, size = head[1].decode(), int(head[2]); body = data[nl + 1:nl + 1 + size]
    assert len(body) == size, name
    open(os.path.join(out, name), 'wb').write(body); pos = nl + 1 + size
PY
  for f in kallsyms btf task_self.bin init_task.bin init_mm.bin; do xz -9e -f "$out/$f"; done
  printf '%s %s\n' "$pkg" "$ver" > "$out/kernel.txt"
  ls -la "$out" >&2
}

if [ $# -ge 2 ]; then capture_one "$1" "$2"; exit; fi
grep -v '^#' "$HERE/kernels.txt" | while read -r pkg ver; do [ -n "$pkg" ] && capture_one "$pkg" "$ver"; done
