#!/usr/bin/env bash
# Capture the DSDT QEMU builds for its two PC machines (q35: ICH9; pc: i440FX + PIIX4), as
# Linux sees it (/sys/firmware/acpi/tables/DSDT), by booting the pinned Debian kernel under TCG
# with a one-shot busybox initramfs that hex-dumps it on the serial console and powers off.
# Usage: capture-dsdt.sh OUTDIR   (writes OUTDIR/q35-DSDT.bin, OUTDIR/pc-DSDT.bin)
set -euo pipefail
OUT="${1:?usage: capture-dsdt.sh OUTDIR}"
HERE="$(cd "$(dirname "$0")" && pwd)"
KERNEL="$(bash "$HERE/../../../tests/platform/fetch-kernel.sh")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/root/bin" "$WORK/root/sys" "$WORK/root/proc" "$OUT"
cp "$(command -v busybox)" "$WORK/root/bin/busybox"   # Debian's busybox is static
cat > "$WORK/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t sysfs sysfs /sys
echo "BEGIN DSDT"
/bin/busybox od -An -v -tx1 /sys/firmware/acpi/tables/DSDT
echo "END DSDT"
/bin/busybox poweroff -f
INIT
chmod +x "$WORK/root/init"
( cd "$WORK/root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$WORK/initrd.img"
for m in q35 pc; do
  timeout 300 qemu-system-x86_64 -machine $m,accel=tcg -m 512 -nographic -no-reboot \
    -kernel "$KERNEL" -initrd "$WORK/initrd.img" \
    -append "console=ttyS0 panic=-1 quiet" > "$WORK/serial-$m.log" 2>&1 || true
  tr -d '\r' < "$WORK/serial-$m.log" | sed -n "/BEGIN DSDT\$/,/^END DSDT\$/p" | sed '1d;$d' | xxd -r -p > "$OUT/$m-DSDT.bin"
  echo "$m DSDT: $(stat -c %s "$OUT/$m-DSDT.bin") bytes"
done
qemu-system-x86_64 --version | head -n1
