#!/usr/bin/env bash
# Run the hypervisor's boot-time IOMMU sequence (vmm/iommu_boot.c: acpi_dmar, iommu_tables,
# iommu_hw) against QEMU's VT-d model, and vmm/pci_mcfg.c
# against its ECAM: boot the pinned Debian
# kernel (TCG) on q35 + intel-iommu + two edu DMA devices (and an e1000e behind a root port,
# so ECAM is checked off bus 0), with intel_iommu=off so the unit
# is free (intremap=off too: interrupt remapping would turn on queued invalidation), and
# iomem=relaxed so /dev/mem reaches its registers; the initramfs runs
# vtd_qemu_check (see its header) and powers off.
# Usage: [VTD_OPTS=,aw-bits=48] run-vtd-qemu.sh [OUTDIR]   (VTD_OPTS: intel-iommu properties;
# aw-bits=48 gives 4-level tables.) Exit status 0 iff the check printed "0 failed".
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
OUT="${1:-$ROOT/build/test/vtd-qemu}"
KERNEL="$(bash "$ROOT/tests/platform/fetch-kernel.sh")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/root/bin" "$WORK/root/sys" "$WORK/root/proc" "$WORK/root/dev" "$OUT"
gcc -std=gnu11 -O2 -Wall -Wextra -static -I"$ROOT/tests/lib" -I"$ROOT/vmm" -I"$ROOT/vmm/include" -o "$WORK/root/bin/vtd_qemu_check" \
  "$ROOT/tests/unit/vtd-qemu/vtd_qemu_check.c" "$ROOT/vmm/acpi_dmar.c" "$ROOT/vmm/iommu_tables.c" "$ROOT/vmm/iommu_hw.c" "$ROOT/vmm/pci_mcfg.c" "$ROOT/vmm/iommu_boot.c"
cp "$(command -v busybox)" "$WORK/root/bin/busybox"
cat > "$WORK/root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox mount -t sysfs sysfs /sys
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t devtmpfs dev /dev
/bin/vtd_qemu_check
echo "vtd-qemu: exit $?"
/bin/busybox poweroff -f
INIT
chmod +x "$WORK/root/init"
( cd "$WORK/root" && find . | cpio -o -H newc --quiet | gzip -1 ) > "$WORK/initrd.img"
timeout 300 qemu-system-x86_64 -machine q35,accel=tcg -device "intel-iommu${VTD_OPTS:-}" -m 256 -nographic \
  -no-reboot -device edu -device edu -device pcie-root-port,id=rp1,chassis=1 -device e1000e,bus=rp1 -kernel "$KERNEL" -initrd "$WORK/initrd.img" \
  -append "console=ttyS0 panic=-1 quiet intel_iommu=off intremap=off iomem=relaxed" > "$OUT/serial.log" 2>&1 || true
tr -d '\r' < "$OUT/serial.log" | grep -a 'vtd-qemu\|FAIL' || true
grep -aq 'vtd-qemu: [0-9]* passed, 0 failed' "$OUT/serial.log"
