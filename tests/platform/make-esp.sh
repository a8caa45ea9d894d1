#!/usr/bin/env bash
# make-esp.sh - make the test machine's EFI system partition: an unpartitioned FAT32 image
# ("superfloppy"; OVMF mounts it as is) holding
#   \EFI\BOOT\BOOTX64.EFI   the EFI app (the removable-media boot path, UEFI 2.9 3.5.1.1)
#   \vmlinuz  \initrd.img  \hvtrace.cfg
# usage: make-esp.sh OUT.img EFI_APP VMLINUZ INITRD CFG
#   env ESP_CYLINDERS (default 130): the image is CYLINDERS x 16 heads x 63 sectors x 512 bytes
#   (a whole number of cylinders, so Bochs's flat-disk geometry matches the file exactly;
#   130 -> 64 MiB, the smallest comfortable FAT32 volume: FAT32 needs >= 65525 clusters).
# Needs mtools and dosfstools; no root, no loop devices.
set -euo pipefail
[ $# -eq 5 ] || { sed -n '2,10p' "$0" >&2; exit 2; }
out="$1"; app="$2"; kernel="$3"; initrd="$4"; cfg="$5"
for f in "$app" "$kernel" "$initrd" "$cfg"; do [ -f "$f" ] || { echo "make-esp: missing $f" >&2; exit 1; }; done
cyl="${ESP_CYLINDERS:-130}"
bytes=$((cyl * 16 * 63 * 512))
need=$(( $(stat -c %s "$app") + $(stat -c %s "$kernel") + $(stat -c %s "$initrd") + (2 << 20) ))
[ "$need" -lt "$bytes" ] || { echo "make-esp: files need $need bytes; raise ESP_CYLINDERS" >&2; exit 1; }
tmp="$out.tmp"
rm -f "$tmp"
truncate -s "$bytes" "$tmp"
mkfs.vfat -F 32 -S 512 -s 1 -n HVTESP "$tmp" >/dev/null
export MTOOLS_SKIP_CHECK=1
mmd -i "$tmp" ::/EFI ::/EFI/BOOT
mcopy -i "$tmp" "$app" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$tmp" "$kernel" ::/vmlinuz
mcopy -i "$tmp" "$initrd" ::/initrd.img
mcopy -i "$tmp" "$cfg" ::/hvtrace.cfg
mv "$tmp" "$out"
