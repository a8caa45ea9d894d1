#!/usr/bin/env bash
# dtrace-net.sh SCRIPT WORKLOAD - `make dtrace`: a D program over the path a user takes on a real
# machine, for anyone without VT-x. hvtrace-collector starts on this host; Bochs boots Linux
# under hvtrace with its own e1000 streaming to it; the guest's agent (hvtrace-guest agent once)
# waits; `hvt -s SCRIPT` (a D file) or `hvt -n SCRIPT` (a one-liner or a probe description)
# with `-c WORKLOAD` arms through the collector, the agent runs WORKLOAD held at its exec until
# the probes are armed ($target is its pid), and hvt prints dtrace's output and ends with the
# command; the guest then powers off. Exit status: hvt's.
# Knobs: BUILD (build), TRACE_CPUS (2), DTRACE_TIMEOUT (Bochs wall s, 900), DTRACE_OUT
# (where the run goes: the collector's store, the console, Bochs's logs), HVT_ARGS (more hvt
# flags, e.g. -q).
set -uo pipefail
cd "$(dirname "$0")/../.."
SCRIPT="${1:?usage: dtrace-net.sh SCRIPT WORKLOAD}"; WORKLOAD="${2:?usage: dtrace-net.sh SCRIPT WORKLOAD}"
BUILD="${BUILD:-build}"
OUT="${DTRACE_OUT:-$BUILD/dtrace}"
H="$BUILD/host"; COLL="$H/hvtrace-collector"; HVT="$H/hvt"
VMLINUZ="$BUILD/test/vmlinuz"; INITRD="$BUILD/test/probe-net/initrd.img"; EFI="$BUILD/hvtrace.efi"
CPUS="${TRACE_CPUS:-2}"; TIMEOUT="${DTRACE_TIMEOUT:-900}"
CMDLINE="${TEST_CMDLINE:-console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$CPUS}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
source tests/net/test-lib.sh
for f in "$COLL" "$HVT" "$VMLINUZ" "$INITRD" "$EFI"; do
  [ -e "$f" ] || { echo "dtrace: missing $f (run make dtrace)" >&2; exit 2; }
done
# A D file is given to -s, anything else to -n (dtrace's own two forms).
if [ -f "$SCRIPT" ]; then FORM=(-s "$SCRIPT")
elif [[ "$SCRIPT" == *[{/]* ]]; then FORM=(-n "$SCRIPT")
else FORM=(-n "$SCRIPT {}"); fi   # bare descriptions: DTrace's default action
# Compile first, on the host alone: a bad script is a clear error (line and column) before any boot.
# ($target is the command's pid once it runs: any pid stands in for it here.)
"$HVT" "${FORM[@]}" --vmlinuz "$VMLINUZ" -e -p 1 || exit $?
rm -rf "$OUT/coll" "$OUT/vm"; mkdir -p "$OUT"
start_coll "$OUT/coll" "$OUT/collector.log" --exit-on-bye || { echo "dtrace: the collector did not start" >&2; exit 2; }
echo "dtrace: booting Linux under hvtrace in Bochs ($CPUS CPUs, the NIC streaming to the collector on port $PORT)" >&2
BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --kernel "$VMLINUZ" \
  --initrd "$INITRD" --efi "$EFI" --cmd "/bin/probe-suite,0,0,dcmd" --trace '' \
  --net "nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000" \
  "$OUT/vm" > "$OUT/bochs.out" 2>&1 &
BPID=$!; PIDS+=("$BPID")
CONS="$OUT/coll/current/console.log"
ready=0
for _ in $(seq $(( TIMEOUT * 5 ))); do
  tr -d '\r' < "$CONS" 2>/dev/null | grep -aq "hvtrace-guest: agent ready" && { ready=1; break; }
  kill -0 "$BPID" 2>/dev/null || break
  sleep 0.2
done
if [ "$ready" != 1 ]; then
  echo "dtrace: the guest's agent never became ready (Bochs: $(cat "$OUT/vm/run/end" 2>/dev/null || echo running)); see $OUT" >&2
  exit 2
fi
echo "dtrace: the guest is up; running: hvt ${FORM[*]} -c '$WORKLOAD'" >&2
# shellcheck disable=SC2086
"$HVT" "${FORM[@]}" --vmlinuz "$VMLINUZ" -d "$OUT/coll" --drain 120 ${HVT_ARGS:-} -c "$WORKLOAD"
rc=$?
wait "$BPID"
for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
echo "dtrace: hvt exited $rc; Bochs ended by $(cat "$OUT/vm/run/end" 2>/dev/null) after $(cat "$OUT/vm/run/wall_seconds" 2>/dev/null) s; the guest's console: $CONS" >&2
exit "$rc"
