# check-lib.sh - what the trace-run judges (check-*.sh) share; source it after setting 'run'.
#   run_start PATTERN   read RUN/serial.log into $serial, show the workload's lines (PATTERN)
#   need_status0        the workload (hvt_mode=cmd) must have said status=0
#   need_poweroff       the run must have ended by a clean ACPI power-off
#   verdict NAME [TAG]  print "NAME: PASS [TAG]" or "NAME: FAIL: reasons" (exit 1)
# Reasons accumulate in the array 'why'.
why=()
run_start() {
  serial=$(tr -d '\r' < "$run/serial.log" 2>/dev/null)
  grep -a "$1" <<< "$serial"
  end=$(cat "$run/end" 2>/dev/null || echo unknown)
  echo "end=$end wall_seconds=$(cat "$run/wall_seconds" 2>/dev/null || echo ?)"
}
need_status0() { grep -q "^HVT-CMD: status=0" <<< "$serial" || why+=("workload did not finish with status 0"); }
need_poweroff() { [ "$end" = poweroff ] || why+=("run ended by $end, not a clean power-off"); }
verdict() {
  if [ ${#why[@]} -gt 0 ]; then
    echo "--- serial tail:"; tail -n 12 <<< "$serial"
    printf '%s: FAIL: %s\n' "$1" "$(IFS=';'; echo "${why[*]}")"
    exit 1
  fi
  echo "$1: PASS${2:+ $2}"
}
