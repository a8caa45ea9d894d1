#!/usr/bin/env bash
# Capture the ACPI DMAR and MCFG tables QEMU builds for q35 + intel-iommu, as Linux sees them
# (/sys/firmware/acpi/tables/), by booting the pinned Debian kernel under TCG with a one-shot
# busybox initramfs that hex-dumps them on the serial console and powers off.
# Usage: capture-q35-acpi.sh OUTDIR   (writes OUTDIR/q35-DMAR.bin, OUTDIR/q35-MCFG.bin, OUTDIR/serial.log)
set -euo pipefail
OUT="${1:?usage: capture-q35-acpi.sh OUTDIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
KERNEL="$(bash "$HERE/../../platform/fetch-kernel.sh")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/root/bin" "$WORK/root/sys" "$WORK/root/proc" "$OUT"
cp "$(command -v busybox)" "$WORK/root/bin/busybox"   # Debian's busybox is static
cat > "$WORK/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t sysfs sysfs /sys
for t in DMAR MCFG; do
  echo "BEGIN $t"
  /bin/busybox od -An -v -tx1 /sys/firmware/acpi/tables/$t
  echo "END $t"
done
/bin/busybox poweroff -f
INIT
chmod +x "$WORK/root/init"
( cd "$WORK/root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$WORK/initrd.img"
timeout 300 qemu-system-x86_64 -machine q35,accel=tcg -device intel-iommu,device-iotlb=on -m 512 \
  -device pcie-root-port,id=rp1,chassis=1 -device e1000e,bus=rp1 -nographic \
  -no-reboot -kernel "$KERNEL" -initrd "$WORK/initrd.img" \
  -append "console=ttyS0 panic=-1 quiet" > "$OUT/serial.log" 2>&1 || true
for t in DMAR MCFG; do
  # The console's escape sequences may precede BEGIN on its line: match it anywhere.
  tr -d '\r' < "$OUT/serial.log" | sed -n "/BEGIN $t\$/,/^END $t\$/p" | sed '1d;$d' | xxd -r -p > "$OUT/q35-$t.bin"
  echo "$t: $(stat -c %s "$OUT/q35-$t.bin") bytes"
done
qemu-system-x86_64 --version | head -n1
