#!/usr/bin/env bash
# demo-net.sh - the main job (README: make run), the way a user runs hvtrace on a real machine:
# hvtrace-collector listens on this host; the machine (Bochs, 2 CPUs, OVMF) boots hvtrace with
# its dedicated e1000 and Linux as the guest; a workload runs in the guest; the host starts
# tracing with `hvt trace start`, stops it with `hvt trace stop` once enough has arrived over
# the NIC, and the analyzer shows the trace: instructions per function, per process, and one
# getpid system call as a nesting diagram. Every user command is echoed with a "$ " prompt.
# Nothing goes through port 0xE9 (checked at the end). Knobs: BUILD, DEMO_CPUS (2),
# DEMO_INSNS (instructions to trace, 300000), DEMO_TIMEOUT (Bochs wall seconds, 900).
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"
OUT="$BUILD/demo"
H="$BUILD/host"
COLL="$H/hvtrace-collector"; HVT="$H/hvt"
VMLINUZ="$BUILD/test/vmlinuz"; INITRD="$BUILD/test/trace/initrd.img"; EFI="$BUILD/hvtrace.efi"
CPUS="${DEMO_CPUS:-2}"; INSNS="${DEMO_INSNS:-300000}"; TIMEOUT="${DEMO_TIMEOUT:-900}"
CMDLINE="console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$CPUS"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
source tests/net/test-lib.sh
say() { printf '$ %s\n' "$*"; }
for f in "$COLL" "$HVT" "$VMLINUZ" "$INITRD" "$EFI"; do
  [ -e "$f" ] || { echo "demo: missing $f"; exit 1; }
done
rm -rf "$OUT"; mkdir -p "$OUT"

echo "=== 1. the ESP: hvtrace.efi, the kernel, an initramfs, hvtrace.cfg (make esp does this for a real disk) ==="
say "hvt options $VMLINUZ        # the task layout and symbols from the kernel's own BTF and kallsyms"
NETCFG="nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000"
machine() { # the test machine (tests/platform/vm-run.sh): its hvtrace.cfg and ESP in $OUT, the run in $OUT/run
  BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --efi "$EFI" \
    --kernel "$VMLINUZ" --initrd "$INITRD" --cmd /bin/getpid-loop,3000000,nomark --trace '' --net "$NETCFG" "$@" "$OUT"
}
machine --esp-only || exit 1
sed "s/key=[0-9a-f]*/key=.../" "$OUT/hvtrace.cfg" | grep -v '^#' | sed 's/^\(trace = .\{60\}\).*/\1.../' | sed 's/^/    /' 

echo "=== 2. the collector on this host ==="
say "hvtrace-collector --port $PORT --out $OUT/collector --key ... &"
start_coll "$OUT/collector" "$OUT/collector.log" --exit-on-bye || { echo "demo: the collector did not start"; exit 1; }

echo "=== 3. boot the machine (Bochs, $CPUS CPUs, OVMF): hvtrace, then Linux running getpid-loop ==="
machine > "$OUT/bochs.out" 2>&1 &
BPID=$!; PIDS+=("$BPID")
D="$OUT/collector/current"
started=""
for _ in $(seq $(( TIMEOUT * 5 ))); do
  if grep -aq "getpid-loop: start pid=" "$D/console.log" 2>/dev/null; then
    grep -a "getpid-loop: start" "$D/console.log" | head -1 | sed 's/^/    guest console (over the NIC): /'
    say "hvt trace start -d $OUT/collector"
    "$HVT" trace start -d "$OUT/collector" && started=1
    break
  fi
  kill -0 "$BPID" 2>/dev/null || break
  sleep 0.2
done
[ -n "$started" ] || { echo "demo: the workload did not start or tracing was refused (see $OUT/run)"; exit 1; }
insns=0
for _ in $(seq $(( TIMEOUT * 2 ))); do
  insns=$("$HVT" trace status -d "$OUT/collector" --raw | awk -F'[ =]' '/^cpu=/{s += $6} END {print s + 0}')
  [ "$insns" -ge "$INSNS" ] && break
  kill -0 "$BPID" 2>/dev/null || break
  sleep 0.5
done
say "hvt trace status -d $OUT/collector"
"$HVT" trace status -d "$OUT/collector" | sed 's/^/    /'
say "hvt trace stop -d $OUT/collector -o $OUT/trace.hvt"
"$HVT" trace stop -d "$OUT/collector" -o "$OUT/trace.hvt" --timeout 300 | sed 's/^/    /'
wait "$BPID"
for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
grep -a "^hvtrace-collector: \(summary\|trace\):" "$OUT/collector.log" | sed 's/^/    /'
[ -s "$OUT/trace.hvt" ] || { echo "demo: no trace written"; exit 1; }

echo "=== 4. what the trace holds ==="
say "hvt analyze --vmlinuz $VMLINUZ --view funcs $OUT/trace.hvt | head -16"
"$HVT" analyze --vmlinuz "$VMLINUZ" --view funcs "$OUT/trace.hvt" | head -n 16
say "hvt analyze --vmlinuz $VMLINUZ --view summary $OUT/trace.hvt"
"$HVT" analyze --vmlinuz "$VMLINUZ" --view summary "$OUT/trace.hvt" 2>&1 | head -n 12
say "hvt analyze --vmlinuz $VMLINUZ --view nest $OUT/trace.hvt    # one getpid system call"
"$HVT" analyze --vmlinuz "$VMLINUZ" --view nest "$OUT/trace.hvt" | grep -m1 -A40 -- "-> entry_SYSCALL_64" | head -n 40
e9=$(grep -ac '^HVT-CHUNK' "$OUT/run/e9.log" 2>/dev/null)
echo "trace file: $OUT/trace.hvt, $(stat -c %s "$OUT/trace.hvt") bytes, all over the NIC (${e9:-0} chunks on port 0xE9)"
[ "${e9:-0}" = 0 ]
