#!/usr/bin/env bash
# check-big.sh RUN_DIR HVT_IMPORT HVT_CHECK MIN_INSNS - a long trace-run trace: the program
# exited 0, the trace imports without damage, has >= MIN_INSNS instructions, no GAP marker and
# no continuity violation, and (traced with checkregs=on) no register change escaped the fast
# path's decoded write sets.
set -uo pipefail
run=$1; import=$2; check=$3; min=$4
source "$(dirname "$0")/check-lib.sh"
run_start "^trace-run:\|^HVT-CMD: status"
need_status0
grep -a "^HVT-STEPSTAT" "$run/e9.log"
need_regs_checked
if "$import" "$run/e9.log" "$run/trace.hvt"; then
  out=$("$check" "$run/trace.hvt"); st=$?
  echo "$out" | tail -n 4
  [ $st = 0 ] || why+=("continuity check failed (or trace damaged)")
  n=$(sed -n 's/^violations=[0-9]* insns=\([0-9]*\).*/\1/p' <<< "$out")
  [ "${n:-0}" -ge "$min" ] || why+=("only ${n:-0} instructions traced, want >= $min")
  echo "trace_insns=${n:-0}"
else
  why+=("trace import failed")
fi
verdict check-big
