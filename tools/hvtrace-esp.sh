#!/usr/bin/env bash
# hvtrace-esp.sh - put hvtrace on an EFI system partition (make esp; installed as
# $PREFIX/lib/hvtrace/hvtrace-esp; docs/install.md).
# usage: hvtrace-esp [-e EFI_APP] [-t CFG_TEMPLATE] [-k KERNEL -i INITRD] [-c CMDLINE] DEST
#   -e, -t  default: hvtrace.efi and hvtrace.cfg.template beside this script (the installed
#           layout); make esp passes this tree's build/hvtrace.efi and boot/hvtrace.cfg.template
#   DEST a directory (a mounted ESP, e.g. /boot/efi): writes
#          DEST/EFI/hvtrace/hvtrace.efi
#          DEST/hvtrace.cfg            from the template; an existing one is kept and the
#                                      template goes to DEST/hvtrace.cfg.new instead
#          DEST/EFI/hvtrace/vmlinuz, initrd.img   only with -k and -i
#   DEST ending in .img: a new FAT32 image (no partition table; firmware and QEMU/OVMF take it
#        as a removable disk) with the same files plus \EFI\BOOT\BOOTX64.EFI (the removable-
#        media boot path, UEFI 2.9 3.5.1.1), so it boots without a boot entry.
#   -c CMDLINE replaces the template's cmdline line.
# The loader reads \hvtrace.cfg from the root of the volume it was started from, and the
# template names \EFI\hvtrace\vmlinuz and \EFI\hvtrace\initrd.img.
# The image form needs mtools and dosfstools (no root, no loop device).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
app="$here/hvtrace.efi"; tmpl="$here/hvtrace.cfg.template"; kernel=""; initrd=""; cmdline=""
while getopts "e:t:k:i:c:" opt; do
  case "$opt" in
    e) app="$OPTARG" ;; t) tmpl="$OPTARG" ;; k) kernel="$OPTARG" ;; i) initrd="$OPTARG" ;;
    c) cmdline="$OPTARG" ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
dest="$1"
for f in "$app" "$tmpl" ${kernel:+"$kernel"} ${initrd:+"$initrd"}; do
  [ -f "$f" ] || { echo "hvtrace-esp: missing $f" >&2; exit 1; }
done
if { [ -n "$kernel" ] && [ -z "$initrd" ]; } || { [ -z "$kernel" ] && [ -n "$initrd" ]; }; then
  echo "hvtrace-esp: give both -k KERNEL and -i INITRD, or neither (then copy your own)" >&2; exit 2
fi

# The configuration: the template, with the command line given (no '#' allowed in values).
write_cfg() {
  if [ -n "$cmdline" ]; then
    case "$cmdline" in *'#'*) echo "hvtrace-esp: CMDLINE may not contain '#'" >&2; return 1 ;; esac
    awk -v c="$cmdline" '/^cmdline =/ { print "cmdline = " c; next } { print }' "$tmpl" > "$1"
  else
    cp "$tmpl" "$1"
  fi
}

# Lay the tree out in STAGE: the same layout for both forms. Plain cp, not install -m: FAT
# has no modes, and chmod on a vfat mount fails.
lay_out() {
  local stage="$1"
  mkdir -p "$stage/EFI/hvtrace"
  cp "$app" "$stage/EFI/hvtrace/hvtrace.efi"
  if [ -n "$kernel" ]; then
    cp "$kernel" "$stage/EFI/hvtrace/vmlinuz"
    cp "$initrd" "$stage/EFI/hvtrace/initrd.img"
  fi
}

case "$dest" in
  *.img)
    stage="$(mktemp -d)"; trap 'rm -rf "$stage"' EXIT
    lay_out "$stage"
    mkdir -p "$stage/EFI/BOOT"
    cp "$app" "$stage/EFI/BOOT/BOOTX64.EFI"
    write_cfg "$stage/hvtrace.cfg"
    # FAT32 needs >= 65525 clusters: 64 MiB at least with 512-byte clusters; more if the
    # files need it (plus 4 MiB for the FAT and directories).
    need=$(( $(du -sb "$stage" | cut -f1) + (4 << 20) ))
    bytes=$(( 64 << 20 )); [ "$need" -le "$bytes" ] || bytes=$(( (need + (1 << 20) - 1) >> 20 << 20 ))
    tmp="$dest.tmp"; rm -f "$tmp"
    truncate -s "$bytes" "$tmp"
    mkfs.vfat -F 32 -S 512 -s 1 -n HVTRACE "$tmp" >/dev/null
    export MTOOLS_SKIP_CHECK=1
    mcopy -s -i "$tmp" "$stage"/EFI "$stage"/hvtrace.cfg ::/
    mv "$tmp" "$dest"
    echo "hvtrace-esp: wrote $dest ($((bytes >> 20)) MiB FAT32: \\EFI\\hvtrace\\hvtrace.efi, \\EFI\\BOOT\\BOOTX64.EFI, \\hvtrace.cfg${kernel:+, kernel and initrd})"
    ;;
  *)
    [ -d "$dest" ] || { echo "hvtrace-esp: $dest is not a directory (mount the ESP first)" >&2; exit 1; }
    lay_out "$dest"
    cfg="$dest/hvtrace.cfg"
    if [ -e "$cfg" ]; then
      cfg="$dest/hvtrace.cfg.new"
      echo "hvtrace-esp: kept your $dest/hvtrace.cfg; the new template is $cfg"
    fi
    write_cfg "$cfg"
    echo "hvtrace-esp: wrote $dest/EFI/hvtrace/hvtrace.efi${kernel:+, vmlinuz, initrd.img} and $cfg"
    [ -n "$kernel" ] || echo "hvtrace-esp: now copy your kernel and initramfs to $dest/EFI/hvtrace/vmlinuz and initrd.img and edit $dest/hvtrace.cfg"
    ;;
esac
