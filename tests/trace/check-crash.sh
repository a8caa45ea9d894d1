#!/usr/bin/env bash
# check-crash.sh RUN_DIR HVT_IMPORT HVT_CHECK HVT VMLINUZ - judge the flight-recorder run
# (flight=1 only=kernel stop_at=panic; the crash workload panics the kernel via sysrq):
#  - the kernel panicked (sysrq) and the crashing CPU stopped tracing with reason "stop
#    address reached" (10), its ring dumped, its last record the call into panic;
#  - the ring overwrote records, and the trace says how many: the GAP's lost instructions plus
#    the instructions kept equal what that CPU recorded (HVT-STEPSTAT recorded=);
#  - only kernel instructions are recorded (only=kernel), and hvt-check finds no violation
#    (--allow-gaps: the overwritten past is the one expected gap).
set -uo pipefail
run=$1; import=$2; check=$3; hvt=$4; vmlinuz=$5
source "$(dirname "$0")/check-lib.sh"
run_start "^crash:\|Kernel panic"
grep -q "Kernel panic - not syncing: sysrq triggered crash" <<< "$serial" || why+=("the kernel did not panic through sysrq")
grep -a "^hvtrace: \(cpu .*flight\|flight\|cpu .*mark\|cpu .*stop_at\)\|^HVT-STEPSTAT" "$run/e9.log" | head -20
# The crashing CPU is the one that reached the stop_at address (the others stop with the same
# reason when the request reaches them, possibly first).
cpu=$(grep -a "^hvtrace: cpu [0-9]*: stop_at address" "$run/e9.log" | head -1 | sed 's/^hvtrace: cpu \([0-9]*\):.*/\1/')
[ -n "$cpu" ] || why+=("no CPU reported reaching the stop_at address")
stat=$(grep -a "^HVT-STEPSTAT cpu=${cpu:-x} .* reason=10" "$run/e9.log" | head -1)
[ -n "$stat" ] || why+=("cpu ${cpu:-?} did not stop at the stop_at address (reason 10)")
recorded=$(sed -n 's/.* recorded=\([0-9]*\).*/\1/p' <<< "$stat")
if "$import" "$run/e9.log" "$run/trace.hvt"; then
  out=$("$check" --allow-gaps "$run/trace.hvt"); st=$?
  echo "$out"
  [ $st = 0 ] || why+=("continuity check failed")
  line=$(grep "^cpu ${cpu:-x}:" <<< "$out")
  kept=$(sed -n 's/.* insns=\([0-9]*\) .*/\1/p' <<< "$line")
  lost=$(sed -n 's/.* lost_insns=\([0-9]*\).*/\1/p' <<< "$line")
  user=$(grep -o " user=[0-9]*" <<< "$out" | awk -F= '{s += $2} END {print s + 0}')
  echo "cpu $cpu: recorded=$recorded kept=$kept lost(overwritten)=$lost user_insns=$user"
  [ "${lost:-0}" -gt 0 ] || why+=("the ring overwrote nothing: the test needs a longer workload")
  [ -n "$recorded" ] && [ $(( ${kept:-0} + ${lost:-0} )) = "$recorded" ] ||
    why+=("kept ${kept:-?} + lost ${lost:-?} != recorded ${recorded:-?}")
  [ "$user" = 0 ] || why+=("$user user-mode instructions recorded under only=kernel")
  grep -q " stop=10 " <<< "$line" || why+=("cpu $cpu's trace does not end with reason 10")
  last=$(sed -n 's/.* last=\(0x[0-9a-f]*\).*/\1/p' <<< "$line")
  lstar=$(grep -a "^HVT-META lstar=" "$run/e9.log" | head -1 | sed 's/.*lstar=\([0-9a-f]*\).*/\1/')
  sym=$("$hvt" syms --lstar "0x$lstar" "$vmlinuz" --addr "$last" | awk '{print $2}')
  echo "last instruction on cpu $cpu: $last = $sym"
  [[ "$sym" == sysrq_handle_crash+* ]] || why+=("last record is $sym, not the call in sysrq_handle_crash")
else
  why+=("trace import failed")
fi
verdict check-crash violations=0
