#!/usr/bin/env bash
# test-net.sh - the dedicated NIC end to end in Bochs: the hypervisor drives the e1000 (slirp, loopback
# only) and streams to hvtrace-collector on this host, while Linux boots without seeing the NIC.
#
# Run 1 (Debian's cloud kernel, 2 CPUs): collector started with ping, status, an unauthenticated
# ping and a replayed request; killed (SIGKILL) mid-stream and restarted on the same directory.
# Checks: HELLO metadata; console.log byte-for-byte equal to Bochs's serial file from the
# hypervisor's start on; guest kernel identity; ping answered; unauthenticated and replayed
# requests refused and counted; NIC absent from the guest's /sys/bus/pci/devices while the rest
# of the bus is there; no sequence gaps; resume after the restart; every filler record intact
# (selftest_kb); BYE and "collector has everything" at power-off.
# Run 2 (TEST_NET_GENERIC=1, default on): Debian's generic amd64 kernel, whose e1000 driver is
# loaded (insmod) in the guest and must find no device; an enrolled machine: the stream key
# only in the firmware's boot-services variable, hvtrace.cfg sealed, the collector pinned to it.
#
# Needs: the core calls net_attach(bi) and the loader copies hvtrace.cfg's `net = ...` line into
# hvt_boot_info.net_config. Without them the hypervisor never starts net/ and this test FAILS
# saying so (it does not skip).
# Knobs: TEST_EFI_BUILD (default "make efi"; "true" to use build/hvtrace.efi as it is),
#   TEST_CPUS (2), NET_PORT (random), NET_KEY (random), NET_SELFTEST_KB (65536),
#   TEST_NET_GENERIC (1), BOCHS_TEST_TIMEOUT (400; the generic kernel's run gets 3x: it is
#   XZ-compressed, ~6.5x more instructions to boot: docs/references.md), BUILD (build), OUT ($BUILD/test/net).
# Closing line: "test-net: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"
OUT="${OUT:-$BUILD/test/net}"
CPUS="${TEST_CPUS:-2}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
SELFTEST_KB="${NET_SELFTEST_KB:-65536}"
TIMEOUT="${BOCHS_TEST_TIMEOUT:-400}"
COLL="$BUILD/host/hvtrace-collector"
source "$(dirname "$0")/test-lib.sh"

${TEST_EFI_BUILD:-make BUILD=$BUILD efi} >/dev/null || { echo "test-net: building hvtrace.efi failed"; exit 1; }
make -s BUILD="$BUILD" collector "$BUILD/guest/hvtrace-guest" >/dev/null || exit 1
mkdir -p "$OUT"
CLOUD=$(bash tests/platform/fetch-kernel.sh)
GENERIC=$(bash tests/platform/fetch-kernel.sh linux-image-6.1.0-47-amd64-unsigned 6.1.170-3)

# initramfs: busybox, hvtrace-guest (drain, shutdown), tests/net/guest-init, optional e1000.ko
mkinitrd() { # out [e1000.ko]
  local extra=()
  [ -n "${2:-}" ] && extra=("file:e1000.ko:644:$2")
  python3 tests/guest/mkcpio.py "$1" dir:dev:755 dir:proc:755 dir:sys:755 dir:bin:755 \
    dir:sbin:755 dir:tmp:1777 dir:root:700 dir:etc:755 chr:dev/console:600:5:1 \
    chr:dev/null:666:1:3 file:bin/busybox:755:/bin/busybox sym:bin/sh:busybox \
    "file:bin/hvtrace-guest:755:$BUILD/guest/hvtrace-guest" file:init:755:tests/net/guest-init \
    "${extra[@]}"
}
# pci=noacpi: the loader's ACPI tables have no PCI root bridge, so without it Linux enumerates
# no PCI device at all on this platform and "the NIC is absent" would prove nothing.
CMDLINE="console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init pci=noacpi"
NETCFG="nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000"
vm() { # name vmlinuz initrd extra-cmdline net-config timeout: boot (vm-run.sh), run in $OUT/name/run
  BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$6" --kernel "$2" --initrd "$3" \
    --append "$4" --net "$5" ${VM_SEAL:+--seal "$VM_SEAL"} ${VM_ESP_ONLY:+--esp-only} "$OUT/$1"
}

# ---------------------------------------------------------------- run 1: cloud kernel
mkinitrd "$OUT/initrd-cloud.img"
rm -rf "$OUT/trace" "$OUT/cloud"
start_coll "$OUT/trace" "$OUT/collector-a.log" --ctl ping,status,badauth,replay
vm cloud "$CLOUD" "$OUT/initrd-cloud.img" "hvt_net_lines=2000" "$NETCFG selftest_kb=$SELFTEST_KB" "$TIMEOUT" \
  > "$OUT/bochs-cloud.out" 2>&1 &
BPID=$!; PIDS+=("$BPID")
# kill the collector once a quarter of the filler has arrived, then restart it
killed_at=""
# (checked 5 times a second: the filler streams at several MB/s once connected)
for _ in $(seq $(( TIMEOUT * 5 ))); do
  sleep 0.2
  b=$(hdr "$OUT/trace/current" bytes)
  if [ -n "$b" ] && [ "$b" -gt $(( SELFTEST_KB * 256 )) ]; then killed_at=$b; break; fi
  kill -0 "$BPID" 2>/dev/null || break
done
kill -9 "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
sleep 2
start_coll "$OUT/trace" "$OUT/collector-b.log" --ctl status --exit-on-bye
wait "$BPID"
for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
R="$OUT/cloud/run"; D="$OUT/trace/current"
echo "test-net: run 1 ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s; collector killed at ${killed_at:-never} bytes"
check "hypervisor started net/ (e1000 found)" grep -aq "^net: e1000" "$R/e9.log"
if ! grep -aq "^net: e1000" "$R/e9.log"; then
  echo "test-net: the hypervisor never started net/: does the core call net_attach() and does the"
  echo "          loader copy hvtrace.cfg's 'net = ...' into hvt_boot_info.net_config?"
fi
check "connected to the collector" grep -aq "^net: connected to the collector" "$R/e9.log"
check "HELLO: boot directory with cpu_count=$CPUS" test "$(hdr "$D" cpu_count)" = "$CPUS"
check "HELLO: NIC and MAC in the metadata" grep -q "^mac=52:54:00:12:34:56" "$D/header.txt"
check "guest kernel identity recorded" bash -c "grep -q '^guest_kernel=Linux version 6.1' '$D/header.txt'"
check "console.log non-empty and reaches init's last line" grep -aq "HVT-NET: init done" "$D/console.log"
check "console.log == Bochs serial file from the hypervisor's start (byte for byte)" \
  python3 -c "import sys; c=open('$D/console.log','rb').read(); s=open('$R/serial.log','rb').read(); sys.exit(0 if c and s.endswith(c) else 1)"
check "ping answered" grep -q "cmd=ping status=ok tag=ok data=ping" "$D/control.log"
check "unauthenticated request refused" grep -q "status=refused-auth" "$D/control.log"
check "replayed request refused" grep -q "status=refused-replay" "$D/control.log"
check "refusals counted by the hypervisor (status after restart)" \
  grep -q "cmd=status status=ok tag=ok.*ctl_bad_auth=1 ctl_replayed=1" "$D/control.log"
check "guest enumerated its PCI bus (host bridge seen)" grep -aq "HVT-NET: pci .* 0x8086:0x1237" "$R/serial.log"
check "NIC absent from the guest's /sys/bus/pci/devices" bash -c "! grep -aq 'HVT-NET: pci .*0x8086:0x100e' '$R/serial.log'"
check "collector was killed mid-stream (during the filler)" \
  test -n "$killed_at" -a "${killed_at:-0}" -lt $(( SELFTEST_KB * 1024 ))
check "restarted collector resumed the same boot" grep -q "resumed boot" "$OUT/collector-b.log"
check "hypervisor reconnected (connections >= 2)" test "$(hdr "$D" connections)" -ge 2
check "sequence gaps = 0" test "$(hdr "$D" gap_events)" = 0 -a "$(hdr "$D" gap_msgs)" = 0
check "trace directory verifies, all $(( SELFTEST_KB * 128 )) filler records in order" \
  bash -c "out=\$($COLL --verify '$D'); echo \"\$out\"; echo \"\$out\" | grep -q 'filler_records=$(( SELFTEST_KB * 128 ))'"
check "BYE received" test "$(hdr "$D" bye)" = 1
check "hypervisor: collector has everything at power-off" grep -aq "collector has everything" "$R/e9.log"

# ---------------------------------------------------------------- run 2: generic kernel
if [ "${TEST_NET_GENERIC:-1}" = 1 ]; then
  KO=$(find "$(dirname "$(dirname "$GENERIC")")/lib/modules" -name e1000.ko | head -1)
  mkinitrd "$OUT/initrd-generic.img" "$KO"
  rm -rf "$OUT/trace-generic" "$OUT/generic" "$OUT/keys"
  # An enrolled machine (docs/install.md): keys from `hvt cfg keys`, hvtrace.cfg sealed, its net
  # line without key= (the loader puts in the enrolled stream key), the collector keyed with
  # stream.key and pinned to the configuration's hash. (The seal is deterministic: the ESP made
  # first only tells the hash.)
  mkdir -p "$OUT/keys" && "$BUILD/host/hvt" cfg keys "$OUT/keys" > /dev/null
  KEY=$(cat "$OUT/keys/stream.key")
  NETCFG_ENROLLED=$(echo "$NETCFG" | sed 's/ key=[0-9a-f]*//')
  VM_SEAL="$OUT/keys" VM_ESP_ONLY=1 vm generic "$GENERIC" "$OUT/initrd-generic.img" "hvt_net_lines=20 hvt_net_insmod=1" \
    "$NETCFG_ENROLLED" $(( TIMEOUT * 3 ))
  PIN=$(sha256sum "$OUT/generic/hvtrace.cfg" | cut -d' ' -f1)
  start_coll "$OUT/trace-generic" "$OUT/collector-g.log" --exit-on-bye --pin-cfg "$PIN"
  VM_SEAL="$OUT/keys" vm generic "$GENERIC" "$OUT/initrd-generic.img" "hvt_net_lines=20 hvt_net_insmod=1" \
    "$NETCFG_ENROLLED" $(( TIMEOUT * 3 )) > "$OUT/bochs-generic.out" 2>&1
  for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
  kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
  R="$OUT/generic/run"; D="$OUT/trace-generic/current"
  echo "test-net: run 2 ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s"
  check "generic kernel: e1000 driver loaded in the guest" grep -aq "HVT-NET: e1000 module loaded" "$R/serial.log"
  check "generic kernel: guest PCI bus enumerated" grep -aq "HVT-NET: pci .* 0x8086:0x1237" "$R/serial.log"
  check "generic kernel: NIC absent from /sys/bus/pci/devices" bash -c "! grep -aq 'HVT-NET: pci .*0x8086:0x100e' '$R/serial.log'"
  check "generic kernel: e1000 bound to nothing (no eth device)" \
    bash -c "grep -a 'HVT-NET: netdevs' '$R/serial.log' | grep -q lo && ! grep -a 'HVT-NET: netdevs' '$R/serial.log' | grep -q eth"
  check "enrolled: the loader stored the keys and verified the seal" \
    bash -c "grep -aq 'hvtrace: keys enrolled in EFI variable HvtraceKeys' '$R/serial.log' && grep -aq 'hvtrace.cfg seal verified' '$R/serial.log'"
  check "enrolled: no key on the ESP's configuration" bash -c "! grep -q 'key=' '$OUT/generic/hvtrace.cfg'"
  check "enrolled: the stream is authenticated and encrypted under the enrolled key" \
    grep -aq "stream authenticated and encrypted" "$R/e9.log"
  check "enrolled: HELLO names the pinned configuration, sealed" \
    bash -c "grep -q '^cfg_sha256=$PIN\$' '$D/header.txt' && grep -q '^cfg_seal=sealed\$' '$D/header.txt'"
  check "generic kernel: console streamed byte for byte" \
    python3 -c "import sys; c=open('$D/console.log','rb').read(); s=open('$R/serial.log','rb').read(); sys.exit(0 if c and s.endswith(c) else 1)"
fi

echo "test-net: $pass passed, $fail failed"
[ "$fail" = 0 ]
