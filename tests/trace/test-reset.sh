#!/usr/bin/env bash
# test-reset.sh - the guest ends the machine while it is traced; the hypervisor must end the
# trace with the reason, whole (hvt-check clean), then reset the machine instead of hanging.
# Run cf9: reset (guest tool) starts tracing with a mark, makes 200 getpid calls and writes
#   0x06 to 0xCF9: every CPU's trace stops with reason 16 (guest reset).
# Run triple: Linux with reboot=t reboots by triple-faulting; tracing starts at the entry of
#   native_machine_restart (start=entry): the traced CPU's trace stops with reason 8 (guest
#   triple fault) and ends in the kernel's restart path.
# Run cf9-net: cf9 again with the trace streamed to the collector over the hypervisor's NIC
#   (encrypted session): the collector's file is whole and clean (it verifies, hvt-check
#   passes, every CPU stopped with reason 16) after the reset.
# All: the hypervisor resets the machine (Bochs logs a second hardware reset, the first is its
# power-on) and the machine boots again (the loader's banner twice: BOCHS_END_ON_RESET).
# Knobs: BUILD, TRACE_CPUS (2), TEST_CMDLINE, RESET_TIMEOUT (Bochs wall seconds, 300).
# Closing line: "test-reset: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
source tests/net/test-lib.sh        # start_coll, PIDS (check and the counters: below)
BUILD="${BUILD:-build}"; OUT="$BUILD/test/reset"
H="$BUILD/host"; HVT="$H/hvt"; COLL="$H/hvtrace-collector"; CHECK="$H/hvt-check"; IMPORT="$H/hvt-import"
VMLINUZ="$BUILD/test/vmlinuz"; INITRD="$BUILD/test/trace/initrd.img"; EFI="$BUILD/hvtrace.efi"
CPUS="${TRACE_CPUS:-2}"; TIMEOUT="${RESET_TIMEOUT:-300}"
CMDLINE="${TEST_CMDLINE:-console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$CPUS}"
pass=0; fail=0
check() { local what=$1; shift; if "$@"; then echo "ok   $what"; pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); fi; }
mkdir -p "$OUT"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
NET=""          # one(): a net = line for the boot (the collector's run)
one() { # name hvt_cmd extra-cmdline trace-option-items...
  local name=$1 cmd=$2 extra=$3; shift 3
  local R="$OUT/$name"; rm -rf "$R"; mkdir -p "$R"
  if [ -n "$NET" ]; then
    start_coll "$R/coll" "$R/collector.log" || { echo "test-reset: the collector did not start"; return 1; }
  fi
  BOCHS_END_ON_RESET=1 BOCHS_INFO="ignore, pc_system=report, pci2isa=report" BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" \
    bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --efi "$EFI" --kernel "$VMLINUZ" --initrd "$INITRD" \
    --cmd "$cmd" ${extra:+--append "$extra"} --trace "$*" ${NET:+--net "$NET"} "$R" > "$R/bochs.out" 2>&1
  echo "test-reset: $name ended by $(cat "$R/run/end" 2>/dev/null) after $(cat "$R/run/wall_seconds" 2>/dev/null) s"
  grep -a "^hvtrace: \(.*resetting\|cpu .*TRIPLE\|cpu .*trace s\)\|^net: shutdown" "$R/run/e9.log" | head -5
  "$IMPORT" "$R/run/e9.log" "$R/trace.hvt" > "$R/import.out" 2>&1
  out=$("$CHECK" "$R/trace.hvt" 2>&1); st=$?
  echo "$out" | tail -3
  echo "$out" > "$R/check.out"
  return $st
}

# ---- cf9
one cf9 "/bin/reset,cf9" ""; st=$?
R="$OUT/cf9"
hw_resets() { cat "$1/bochs.log" "$1/bochs.log.tail" 2>/dev/null | grep -a 'Reset(HARDWARE) called' | sort -u | wc -l; }
check "cf9: the machine reset ($(hw_resets "$R/run") hardware resets: power-on's and one more) and booted again, not a hang" \
  test "$(cat "$R/run/end" 2>/dev/null)" = reset -a "$(hw_resets "$R/run")" -ge 2
check "cf9: the hypervisor ended the trace, then reset" grep -aq "^hvtrace: guest reset through port 0xCF9: resetting the machine" "$R/run/e9.log"
check "cf9: the trace imports and passes hvt-check (violations=0, no gap)" test "$st" = 0
n=$(grep -c '^cpu [0-9]*:.* start=1 ' "$R/check.out"); r=$(grep -cE '^cpu [0-9]*:.* stop_reasons=(.*,)?16$' "$R/check.out")
check "cf9: every CPU that traced stopped with reason 16, guest reset ($r of $n)" test "$n" -ge 1 -a "$r" = "$n"
check "cf9: the workload's 200 getpid calls are in it" bash -c "grep -q 'syscalls=[1-9]' '$R/check.out'"

# ---- triple fault (reboot=t)
one triple "/bin/reset,reboot" "reboot=t" start=entry at=native_machine_restart; st=$?
R="$OUT/triple"
check "triple: the machine reset ($(hw_resets "$R/run") hardware resets: power-on's and one more) and booted again, not a hang" \
  test "$(cat "$R/run/end" 2>/dev/null)" = reset -a "$(hw_resets "$R/run")" -ge 2
check "triple: the hypervisor saw the triple fault, ended the trace, then reset" \
  bash -c "grep -aq 'guest TRIPLE FAULT' '$R/run/e9.log' && grep -aq '^hvtrace: guest triple fault: resetting the machine' '$R/run/e9.log'"
check "triple: the trace imports and passes hvt-check (violations=0, no gap)" test "$st" = 0
r=$(grep -cE '^cpu [0-9]*:.* stop_reasons=(.*,)?8$' "$R/check.out")
check "triple: the traced CPU stopped with reason 8, guest triple fault ($r CPUs)" test "$r" -ge 1
# ---- cf9 with the trace over the NIC to the collector
R="$OUT/cf9-net"
NET="nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000"
one cf9-net "/bin/reset,cf9" ""
NET=""
for _ in $(seq 20); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
# the machine boots again after the reset and connects anew: the traced boot is the first one
D="$R/coll/$(sed -n 's/.*: new boot \([0-9a-f]*\) .*/\1/p' "$R/collector.log" | head -1)"
check "cf9-net: the machine reset and booted again" test "$(cat "$R/run/end" 2>/dev/null)" = reset
check "cf9-net: the stream was encrypted" grep -q "boot .* encrypted session" "$R/collector.log"
check "cf9-net: the collector's directory verifies (trace.hvt == its messages)" "$COLL" --verify "$D"
"$CHECK" "$D/trace.hvt" > "$R/check-coll.out" 2>&1; st=$?
check "cf9-net: the collector's trace passes hvt-check (violations=0, no gap)" test "$st" = 0
n=$(grep -c '^cpu [0-9]*:.* start=1 ' "$R/check-coll.out"); r=$(grep -cE '^cpu [0-9]*:.* stop_reasons=(.*,)?16$' "$R/check-coll.out")
check "cf9-net: every CPU that traced stopped with reason 16 in the collector's file ($r of $n)" test "$n" -ge 1 -a "$r" = "$n"
echo "test-reset: $pass passed, $fail failed"
[ "$fail" = 0 ]
