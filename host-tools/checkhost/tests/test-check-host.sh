#!/usr/bin/env bash
# make test-check-host: `hvt check-host` on the recorded machines beside this script (each
# MACHINE/root is the tree the command reads, MACHINE/expected.txt its output and exit status,
# checked in), then red cases made by changing one fact of the qualifying machine.
# Usage: test-check-host.sh HVT.   Ends with "test-check-host: N passed, N failed".
set -uo pipefail
HVT="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
HERE="$(cd "$(dirname "$0")" && pwd)"
pass=0; fail=0
ok()  { echo "ok   $*"; pass=$((pass + 1)); }
bad() { echo "FAIL $*"; fail=$((fail + 1)); }

run() {   # run DIR: the output and exit status, as expected.txt holds them
  (cd "$1" && "$HVT" check-host --root root; echo "exit status $?")
}

for m in skylake-desktop broadwell-laptop kvm-nested; do
  if diff -u "$HERE/$m/expected.txt" <(run "$HERE/$m") > /tmp/check-host-$$.diff; then
    ok "$m: output and exit status as in $m/expected.txt ($(tail -n1 "$HERE/$m/expected.txt"))"
  else
    bad "$m: differs from $m/expected.txt"; cat /tmp/check-host-$$.diff
  fi
done
rm -f /tmp/check-host-$$.diff

# Red cases: a copy of the qualifying machine with one fact changed; the verdict must turn.
T="$(mktemp -d)"; trap 'rm -rf "$T"' EXIT
variant() {   # variant NAME: a fresh copy in $T/NAME
  rm -rf "$T/$1"; mkdir -p "$T/$1"; cp -a "$HERE/skylake-desktop/root" "$T/$1/root"
}
expect() {    # expect NAME STATUS GREP-PATTERN WHAT
  local out; out="$(run "$T/$1")"
  if [ "$(tail -n1 <<< "$out")" = "exit status $2" ] && grep -qE -- "$3" <<< "$out"; then
    ok "$4"
  else
    bad "$4 (wanted exit $2 and /$3/)"; echo "$out" | sed 's/^/    /'
  fi
}
msr() { echo "$T/$1/root/dev/cpu/0/msr"; }

variant no-mtf       # monitor trap flag's allowed-1 bit (bit 27 of the high half) cleared
sed -i 's/^0x48e 0xfff9fffe04006172/0x48e 0xf7f9fffe04006172/' "$(msr no-mtf)"
expect no-mtf 1 '^FAIL   vmx .*monitor trap flag' "no MTF in TRUE_PROCBASED_CTLS: FAIL vmx, exit 1"
variant no-true      # the TRUE_ controls are read only where IA32_VMX_BASIC[55] says so
sed -i 's/^0x480 0x00da040000000004/0x480 0x005a040000000004/; s/^0x482 0xfff9fffe/0x482 0xf7f9fffe/' "$(msr no-true)"
expect no-true 1 '^FAIL   vmx .*monitor trap flag' "BASIC[55] clear: the non-TRUE controls decide (MTF cleared there): exit 1"
variant no-sipi
sed -i 's/^0x485 0x000000007004c1e7/0x485 0x000000007004c0e7/' "$(msr no-sipi)"
expect no-sipi 1 '^FAIL   vmx .*wait-for-SIPI' "no wait-for-SIPI state: FAIL vmx, exit 1"
variant no-xonly
sed -i 's/^0x48c 0x00000f0106334141/0x48c 0x00000f0106334140/' "$(msr no-xonly)"
expect no-xonly 0 '^warn   probes .*execute-only' "no execute-only EPT: qualifies, probes warned, exit 0"
variant no-vpid      # INVVPID and its types cleared: VPIDs unused, slower, still qualifies
sed -i 's/^0x48c 0x00000f0106334141/0x48c 0x0000000006334141/' "$(msr no-vpid)"
expect no-vpid 0 '^warn   vpid ' "no INVVPID: qualifies, VPIDs warned, exit 0"
variant vtx-off
sed -i 's/^0x03a 0x0000000000000005/0x03a 0x0000000000000001/' "$(msr vtx-off)"
expect vtx-off 1 'enable Intel Virtualization Technology' "VT-x locked off by the firmware: FAIL, to do: enable it"
variant no-msr-driver; rm "$(msr no-msr-driver)"
expect no-msr-driver 2 'modprobe msr' "no /dev/cpu/0/msr: could not decide, exit 2, to do: modprobe msr"
variant chardev; ln -sf /dev/zero "$(msr chardev)"   # the device path: pread at the MSR's address
expect chardev 1 '^FAIL   vmx .*I/O-bitmap control is missing' "a character device read with pread (/dev/zero: every MSR 0): FAIL vmx"
dmar() { echo "$T/$1/root/sys/firmware/acpi/tables/DMAR"; }
variant dmar-bad; printf '\x00' | dd of="$(dmar dmar-bad)" bs=1 seek=9 conv=notrunc 2>/dev/null   # checksum byte
expect dmar-bad 0 "^warn   iommu .*parser refuses.*checksum" "a DMAR with a wrong checksum: the hypervisor's parser refuses it, warned"
variant dmar-optin   # flags |= DMA_CTRL_PLATFORM_OPT_IN, checksum kept right
python3 -c "import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[0x25]|=4; b[9]=(b[9]-4)&0xff; open(p,'wb').write(b)" "$(dmar dmar-optin)"
expect dmar-optin 0 "^warn   iommu .*DMA_CTRL_PLATFORM_OPT_IN" "a DMAR asking for DMA protection from boot: accepted, warned as never tried"
variant dmar-big; head -c 5000 /dev/zero >> "$(dmar dmar-big)"
expect dmar-big 0 "^warn   iommu .*more than the loader passes \(4096\)" "a DMAR over 4 KiB: the loader does not pass it, warned"
variant bios; rm -r "$T/bios/root/sys/firmware/efi"
expect bios 1 '^FAIL   firmware .*legacy BIOS' "no /sys/firmware/efi: FAIL firmware, exit 1"
variant many-cpus; echo 0-79 > "$T/many-cpus/root/sys/devices/system/cpu/present"
expect many-cpus 1 '^FAIL   cpus .*at most 64' "80 CPUs: FAIL cpus (the loader refuses more than 64), exit 1"
variant no-card; rm -r "$T/no-card/root/sys/bus/pci/devices/0000:03:00.0"
expect no-card 0 'Linux uses 0000:00:1f.6 \(eno1, link up\)' "only the on-board I219 left: it is taken, and Linux loses eno1"
variant no-nic; rm -r "$T/no-nic/root/sys/bus/pci/devices/"*
expect no-nic 1 '^FAIL   nic +no NIC' "no NIC at all: FAIL nic, exit 1"
variant amd; sed -i 's/GenuineIntel/AuthenticAMD/' "$T/amd/root/proc/cpuinfo"
expect amd 1 '^FAIL   cpu .*Intel CPU' "an AMD CPU: FAIL cpu, exit 1"

echo "test-check-host: $pass passed, $fail failed"
[ "$fail" = 0 ]
