#!/usr/bin/env bash
# check-trace.sh RUN_DIR HVT_IMPORT HVT_CHECK HVT - judge a getpid-loop trace run:
# the workload ran and said status=0, the trace imports, passes hvt-check (violations=0),
# and holds at least 1000 getpid system calls (syscall markers with nr 39).
set -uo pipefail
run=$1; import=$2; check=$3; hvt=$4
serial=$(tr -d '\r' < "$run/serial.log" 2>/dev/null)
why=()
grep -a "^getpid-loop:\|^HVT-CMD" <<< "$serial"
grep -q "^HVT-CMD: status=0" <<< "$serial" || why+=("workload did not finish with status 0")
grep -a "^hvtrace: \(cpu .*trace\|trace totals\|PANIC\)" "$run/e9.log" | head -20
if "$import" "$run/e9.log" "$run/trace.hvt"; then
  out=$("$check" "$run/trace.hvt"); st=$?
  echo "$out"
  [ $st = 0 ] || why+=("continuity check failed")
  n=$("$hvt" analyze --view syscalls "$run/trace.hvt" 2>/dev/null | awk '$1 == 39 || $2 == "getpid" {print $NF}' | head -1)
else
  why+=("trace import failed")
fi
if [ ${#why[@]} -gt 0 ]; then
  echo "--- serial tail:"; tail -n 20 <<< "$serial"
  printf 'check-trace: FAIL: %s\n' "$(IFS=';'; echo "${why[*]}")"
  exit 1
fi
echo "check-trace: PASS"
