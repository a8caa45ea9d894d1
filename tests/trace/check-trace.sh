#!/usr/bin/env bash
# check-trace.sh RUN_DIR HVT_IMPORT HVT_CHECK HVT VMLINUZ - judge a getpid-loop trace run:
#  - the workload ran and said status=0;
#  - the trace imports and passes hvt-check on every record (violations=0);
#  - the nesting view shows entry_SYSCALL_64 -> ... do_syscall_64 -> __x64_sys_getpid (or an
#    alias of it: same address) at least 1000 times for the workload's pid and comm;
#  - the CPU that ran the workload has exactly as many instruction records in the window as
#    the Bochs oracle (tests/platform/bochs-oracle.cc) counted guest instructions retiring.
# env TRACE_FILE: judge this trace file (the collector's, streamed over the NIC) instead of
#    importing RUN_DIR/e9.log.
# env CHECKREGS=1: the run traced with checkregs=on; no decoded write set may have missed a
#    register change (HVT-STEPSTAT wregs_misses=0 on every CPU).
set -uo pipefail
run=$1; import=$2; check=$3; hvt=$4; vmlinuz=$5
trace="${TRACE_FILE:-$run/trace.hvt}"
source "$(dirname "$0")/check-lib.sh"
run_start "^getpid-loop:\|^HVT-CMD"
need_status0
need_poweroff
[ "${CHECKREGS:-0}" = 1 ] && need_regs_checked     # the run traced with checkregs=on
pid=$(sed -n 's/^getpid-loop: pid=\([0-9]*\).*/\1/p' <<< "$serial")
grep -a "^hvtrace: \(cpu .*trace\|trace totals\|PANIC\|process\)" "$run/e9.log" | head -20
if [ -n "${TRACE_FILE:-}" ] || "$import" "$run/e9.log" "$trace"; then
  out=$("$check" "$trace"); st=$?
  echo "$out"
  [ $st = 0 ] || why+=("continuity check failed")
  oracle=$(grep -a "^HVT-ORACLE" "$run/bochs.stderr" | tail -1)
  if [ -z "$oracle" ]; then
    why+=("no HVT-ORACLE line: run under the oracle Bochs build (HVT_BOCHS_ORACLE=1)")
  else
    ocpu=$(sed -n 's/.*cpu=\([0-9]*\).*/\1/p' <<< "$oracle"); on=$(sed -n 's/.*insns=\([0-9]*\).*/\1/p' <<< "$oracle")
    tn=$(awk -v c="cpu $ocpu:" '$1" "$2 == c {sub("insns=", "", $3); print $3}' <<< "$out")
    echo "oracle: cpu $ocpu retired $on guest instructions in the window; trace has ${tn:-0} records for it"
    [ "${tn:-x}" = "$on" ] || why+=("record count ${tn:-0} != oracle count $on on cpu $ocpu")
  fi
  need_getpid_nest "$hvt" "$vmlinuz" "$trace" "$pid"
else
  why+=("trace import failed")
fi
verdict check-trace
