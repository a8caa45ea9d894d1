#!/usr/bin/env bash
# bench-net.sh - throughput of the dedicated-NIC stream.
#  1. collector ingest on loopback: fake_hv (the hypervisor's protocol code) sends 5 M messages
#     of 48 bytes (16-byte TRACE batches) as fast as it can; the collector's msgs/s, with the
#     session's tags only, without them, and encrypted (the default), one after the other.
#  2. hvtrace -> collector in Bochs: the hypervisor streams NET_BENCH_KB KiB of filler
#     (selftest_kb) through the e1000 and slirp; the collector's TRACE MB/s: tags only
#     (encrypt=off), neither (auth=off) and encrypted (the default), side by side.
#  3. Linux -> host through the same Bochs NIC: Debian's generic kernel with its e1000 driver
#     (hvtrace on, net=off) sends the same amount with busybox nc to a host sink; the sink's MB/s.
# Last lines: ratio=<hvtrace/linux>, auth_ratio=<tagged/untagged MB/s>, encrypt_ratio=
# <encrypted/untagged>, hv_insn_per_byte_* (the hypervisor's TSC ticks per streamed byte, from
# its first filler message to the ACK of the last: in Bochs the TSC counts instructions),
# ingest_msgs_per_s=<n> (tagged; goal >= 1000000), ingest_auth_ratio.
# NET_BENCH_LINUX=0 skips 3 (the generic kernel's slow boot) when only the auth costs matter.
# Needs (for 2) the core to call net_attach() and the loader to pass hvtrace.cfg's `net = ...`.
# Knobs: NET_BENCH_KB (32768), NET_BENCH_MSGS (5000000), TEST_EFI_BUILD (make efi),
#        NET_PORT / NET_KEY (random), BOCHS_TEST_TIMEOUT (900), OUT (build/bench/net).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-build/bench/net}"
KB="${NET_BENCH_KB:-32768}"
MSGS="${NET_BENCH_MSGS:-5000000}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
TIMEOUT="${BOCHS_TEST_TIMEOUT:-900}"
COLL=build/host/hvtrace-collector
mkdir -p "$OUT"
make -s collector build/guest/hvtrace-guest >/dev/null || exit 1
summary_field() { grep -o " $2=[0-9.]*" "$1" | tail -1 | cut -d= -f2; }

# ---- 1. ingest
ingest_run() {   # $1 = fake_hv --auth mode; $2 = extra collector flags
  rm -rf "$OUT/ingest"
  "$COLL" --port "$PORT" --out "$OUT/ingest" --key "$KEY" --exit-on-bye $2 2>"$OUT/ingest-collector-$1.log" &
  cpid=$!
  sleep 0.3
  build/host/fake_hv --port "$PORT" --key "$KEY" --auth "$1" --msg-size 16 --trace-bytes $(( MSGS * 16 )) \
    --ring-kb 65536 --timeout 120 > "$OUT/ingest-fake-$1.log" 2>&1
  wait "$cpid"
  rm -rf "$OUT/ingest"
}
ingest_run on ""; ingest_run off --insecure; ingest_run encrypt ""
ingest=$(summary_field "$OUT/ingest-collector-on.log" msgs_per_s)
ingest_mb=$(summary_field "$OUT/ingest-collector-on.log" MB_per_s)
ingest_off=$(summary_field "$OUT/ingest-collector-off.log" msgs_per_s)
ingest_enc=$(summary_field "$OUT/ingest-collector-encrypt.log" msgs_per_s)
echo "bench-net: collector ingest ${ingest:-?} msgs/s tagged (${ingest_mb:-?} MB/s), ${ingest_off:-?} untagged, ${ingest_enc:-?} encrypted (48-byte messages, loopback)"

# ---- 2. hvtrace -> collector in Bochs
${TEST_EFI_BUILD:-make efi} >/dev/null || { echo "bench-net: building hvtrace.efi failed"; exit 1; }
CLOUD=$(bash tests/platform/fetch-kernel.sh)
GENERIC=$(bash tests/platform/fetch-kernel.sh linux-image-6.1.0-47-amd64-unsigned 6.1.170-3)
KO=$(find "$(dirname "$(dirname "$GENERIC")")/lib/modules" -name e1000.ko | head -1)
mkinitrd() {
  python3 tests/guest/mkcpio.py "$1" dir:dev:755 dir:proc:755 dir:sys:755 dir:bin:755 \
    dir:sbin:755 dir:tmp:1777 dir:root:700 dir:etc:755 chr:dev/console:600:5:1 \
    chr:dev/null:666:1:3 file:bin/busybox:755:/bin/busybox sym:bin/sh:busybox \
    file:bin/hvtrace-guest:755:build/guest/hvtrace-guest file:init:755:tests/net/guest-init \
    "file:e1000.ko:644:$KO"
}
mkinitrd "$OUT/initrd.img"
CMDLINE="console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init pci=noacpi"
hv_run() {   # $1 = name, $2 = net options for the session; sets hv_mbs
  rm -rf "$OUT/trace-$1"
  local flags=""; [ "$1" = off ] && flags=--insecure
  "$COLL" --port "$PORT" --out "$OUT/trace-$1" --key "$KEY" --exit-on-bye $flags 2>"$OUT/hv-collector-$1.log" &
  local cpid=$!
  TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -t "$TIMEOUT" --kernel "$CLOUD" --initrd "$OUT/initrd.img" \
    --append hvt_net_lines=4000 --net "collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000 selftest_kb=$KB $2" \
    "$OUT/hv-$1" > "$OUT/run-hv-$1.out" 2>&1
  for _ in $(seq 30); do kill -0 "$cpid" 2>/dev/null || break; sleep 1; done
  kill -INT "$cpid" 2>/dev/null; wait "$cpid" 2>/dev/null
  hv_mbs=$(summary_field "$OUT/hv-collector-$1.log" trace_MB_per_s)
  local got; got=$(grep -s '^trace_bytes=' "$OUT/trace-$1/current/header.txt" | cut -d= -f2)
  hv_tpb=$(tr -d '\r' < "$OUT/hv-$1/run/e9.log" | sed -n 's/.*TSC ticks: \([0-9.]*\) ticks per byte.*/\1/p' | tail -1)
  echo "bench-net: hvtrace -> collector ($1) ${hv_mbs:-?} MB/s, ${hv_tpb:-?} hypervisor instructions per byte" \
       "(${got:-0} of $((KB * 1024)) filler bytes arrived, bad_tags $(summary_field "$OUT/hv-collector-$1.log" bad_tags))"
}
hv_run on "encrypt=off"; hv_on=$hv_mbs; tpb_on=$hv_tpb
hv_run off "auth=off"; hv_off=$hv_mbs; tpb_off=$hv_tpb
hv_run encrypt "encrypt=on"; hv_enc=$hv_mbs; tpb_enc=$hv_tpb
hv=$hv_on

ratio_of() { awk -v a="${1:-0}" -v b="${2:-0}" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "nan" }'; }
linux=0
if [ "${NET_BENCH_LINUX:-1}" = 1 ]; then
# ---- 3. Linux -> host through the same NIC: hvtrace on with net=off, so the NIC is Linux's and
# the hypervisor never touches it. The generic kernel is XZ-compressed: ~6.5x more instructions
# to boot than the cloud one (docs/references.md), so on a busy machine give it a long timeout.
python3 bench/net/tcp_sink.py "$PORT" $((KB * 1024)) "$TIMEOUT" > "$OUT/linux-sink.log" 2>&1 &
spid=$!
TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -t "$TIMEOUT" --kernel "$GENERIC" --initrd "$OUT/initrd.img" \
  --append "hvt_net_lines=0 hvt_net_insmod=1 hvt_net_send=10.0.2.2:$PORT:$((KB * 1024))" --net net=off \
  "$OUT/linux" > "$OUT/run-linux.out" 2>&1
wait "$spid"
linux=$(summary_field "$OUT/linux-sink.log" MB_per_s)
echo "bench-net: Linux e1000 -> host ${linux:-?} MB/s ($(summary_field "$OUT/linux-sink.log" bytes) bytes)"

fi
echo "ratio=$(ratio_of "$hv" "$linux")"
echo "auth_ratio=$(ratio_of "$hv_on" "$hv_off")"
echo "encrypt_ratio=$(ratio_of "$hv_enc" "$hv_off")"
echo "hv_insn_per_byte_off=${tpb_off:-?} hv_insn_per_byte_auth=${tpb_on:-?} hv_insn_per_byte_encrypt=${tpb_enc:-?}"
echo "ingest_msgs_per_s=${ingest:-0}"
echo "ingest_auth_ratio=$(ratio_of "$ingest" "$ingest_off")"
