#!/usr/bin/env bash
# test-net-qemu.sh - the NIC drivers without VT-x: QEMU TCG (q35 + OVMF) boots the nettest image
# (make hv-nettest: the loader, vmm/'s services and net/ built exactly as for the hypervisor, no
# VMX), which takes QEMU's NIC, streams its selftest load to hvtrace-collector on this host
# through QEMU's user network (loopback only) and sends BYE; the loader then powers off.
# Midway the NIC's link is taken down and up again (QEMU monitor `set_link`).
#
# Checks: the net/ code in the nettest image is the hypervisor's (the objects' code is the same
# bytes); the driver took the expected part and family; link down and up seen by the driver;
# connected; the collector verifies every filler record in order, no sequence gap, BYE; the
# driver's selftest finished and "collector has everything".
# Knobs: NIC (QEMU device, default e1000e), NIC_MODEL (the driver's name for it, default
#   82574L), NET_SELFTEST_KB (131072), QEMU_TIMEOUT (100 s), NET_PORT, NET_KEY,
#   BUILD (build), OUT ($BUILD/test/net-qemu-$NIC), QEMU (qemu-system-x86_64), QEMU_EXTRA (more
#   QEMU arguments, e.g. "-trace enable=memory_region_ops_write,file=F"), NETTEST_EFI (another
#   nettest hvtrace.efi to boot instead of this tree's).
# Closing line: "test-net-qemu: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"
NIC="${NIC:-e1000e}"
NIC_MODEL="${NIC_MODEL:-82574L}"
OUT="${OUT:-$BUILD/test/net-qemu-$NIC}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
SELFTEST_KB="${NET_SELFTEST_KB:-131072}"
TIMEOUT="${QEMU_TIMEOUT:-100}"
QEMU="${QEMU:-qemu-system-x86_64}"
COLL="$BUILD/host/hvtrace-collector"
source "$(dirname "$0")/test-lib.sh"

make -s BUILD="$BUILD" hv-nettest net-hv collector >/dev/null || { echo "test-net-qemu: build failed"; exit 1; }
EFI="${NETTEST_EFI:-$BUILD/nettest/hvtrace.efi}"
rm -rf "$OUT"; mkdir -p "$OUT"

# The same code in both images: every net/ object's sections but debug info (whose include
# paths name the build directory) are byte-identical.
same_objs() {
  local f n=0
  for f in "$BUILD"/hv/net/*.o; do
    objcopy --strip-debug "$f" "$OUT/a.o" && objcopy --strip-debug "$BUILD/nettest/hv/net/${f##*/}" "$OUT/b.o" &&
      cmp -s "$OUT/a.o" "$OUT/b.o" || { echo "  differs: ${f##*/}"; return 1; }
    n=$((n + 1))
  done
  rm -f "$OUT/a.o" "$OUT/b.o"
  [ "$n" -gt 5 ]
}
check "net/ objects of the nettest image == the hypervisor's (code and data)" same_objs

# The ESP: the loader reads hvtrace.cfg; kernel and initrd are never booted (placeholders).
printf 'placeholder\n' > "$OUT/none"
TSC_KHZ=$(awk -F: '/^cpu MHz/ { printf "%d", $2 * 1000; exit }' /proc/cpuinfo)
cat > "$OUT/hvtrace.cfg" <<EOF
kernel = \\vmlinuz
initrd = \\initrd.img
hypervisor = on
log = e9
net = nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=${TSC_KHZ:-0} selftest_kb=$SELFTEST_KB
EOF
bash tests/platform/make-esp.sh "$OUT/esp.img" "$EFI" "$OUT/none" "$OUT/none" "$OUT/hvtrace.cfg" >/dev/null ||
  { echo "test-net-qemu: make-esp failed"; exit 1; }

start_coll "$OUT/trace" "$OUT/collector.log" --exit-on-bye || { echo "test-net-qemu: collector did not start"; exit 1; }
cp /usr/share/OVMF/OVMF_VARS.fd "$OUT/OVMF_VARS.fd"
# romfile= : no option ROM, so the firmware's network stack leaves the NIC alone.
start=$(date +%s.%N)
timeout --kill-after=5 "$TIMEOUT" "$QEMU" -machine q35 -accel tcg -cpu max -smp 1 -m 512 \
  -drive if=pflash,format=raw,unit=0,readonly=on,file=/usr/share/OVMF/OVMF_CODE.fd \
  -drive if=pflash,format=raw,unit=1,file="$OUT/OVMF_VARS.fd" \
  -drive file="$OUT/esp.img",format=raw,if=ide,snapshot=on \
  -nodefaults -display none -no-reboot -vga none \
  -netdev user,id=n0 -device "$NIC",netdev=n0,romfile= \
  -monitor unix:"$OUT/monitor.sock",server,nowait \
  -serial file:"$OUT/serial.log" -debugcon file:"$OUT/e9.log" ${QEMU_EXTRA:-} \
  < /dev/null > "$OUT/qemu.out" 2>&1 &
QPID=$!; PIDS+=("$QPID")

monitor() { # one monitor command
  python3 - "$OUT/monitor.sock" "$1" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(2)
try:
    s.recv(4096)
except OSError:
    pass
s.sendall(sys.argv[2].encode() + b"\n"); time.sleep(0.3); s.close()
PY
}
# Link down once a quarter of the load has arrived, for 2 s, then up again (checked 20 times a
# second: the load streams at tens of MB/s).
down_at=""
for _ in $(seq $(( TIMEOUT * 20 ))); do
  sleep 0.05
  b=$(hdr "$OUT/trace/current" bytes)
  if [ -n "$b" ] && [ "$b" -gt $(( SELFTEST_KB * 1024 / 4 )) ]; then
    down_at=$b; monitor "set_link n0 off"; sleep 2; monitor "set_link n0 on"; break
  fi
  kill -0 "$QPID" 2>/dev/null || break
done
rc=0; wait "$QPID" || rc=$?
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
D="$OUT/trace/current"
echo "test-net-qemu: QEMU ($NIC) exited $rc after $wall s; link taken down at ${down_at:-never} bytes"
check "QEMU powered off (exit 0) within ${TIMEOUT}s" test "$rc" = 0
check "driver took the $NIC as $NIC_MODEL" grep -aq "^net: e1000 .*($NIC_MODEL, " "$OUT/e9.log"
check "connected to the collector" grep -aq "^net: connected to the collector" "$OUT/e9.log"
check "HELLO names the model (nic_model=$NIC_MODEL)" grep -q "^nic_model=$NIC_MODEL\$" "$D/header.txt"
check "HELLO: the MAC QEMU gave the NIC (52:54:00:12:34:56)" grep -q "^mac=52:54:00:12:34:56" "$D/header.txt"
check "link taken down mid-stream" test -n "$down_at" -a "${down_at:-0}" -lt $(( SELFTEST_KB * 1024 ))
check "driver saw the link go down" grep -aq "^net: link down" "$OUT/e9.log"
check "driver saw the link come back" grep -aq "^net: link up" "$OUT/e9.log"
check "sequence gaps = 0" test "$(hdr "$D" gap_events)" = 0 -a "$(hdr "$D" gap_msgs)" = 0
check "trace directory verifies, all $(( SELFTEST_KB * 128 )) filler records in order" \
  bash -c "out=\$($COLL --verify '$D'); echo \"\$out\"; echo \"\$out\" | grep -q 'filler_records=$(( SELFTEST_KB * 128 ))'"
check "BYE received" test "$(hdr "$D" bye)" = 1
check "driver: selftest finished, collector has everything" \
  bash -c "grep -aq '^net: standalone selftest finished' '$OUT/e9.log' && grep -aq 'collector has everything' '$OUT/e9.log'"
grep -a "^net: selftest:" "$OUT/e9.log" | sed 's/^/  /'
echo "  $(hdr "$D" bytes) bytes received by the collector"
echo "test-net-qemu: $pass passed, $fail failed"
[ "$fail" = 0 ]
