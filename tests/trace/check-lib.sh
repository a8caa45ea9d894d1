# check-lib.sh - what the trace-run judges (check-*.sh) share; source it after setting 'run'.
#   run_start PATTERN   read RUN/serial.log into $serial, show the workload's lines (PATTERN)
#   need_status0        the workload (hvt_mode=cmd) must have said status=0
#   need_poweroff       the run must have ended by a clean ACPI power-off
#   need_regs_checked   the run traced with checkregs=on and no decoded write set missed a
#                       register change (every HVT-STEPSTAT line: checkregs=1 wregs_misses=0)
#   need_record N       every window recorded in mode N (hvt_rec_mode: 0 full, 1 flow, 2 regs;
#                       every HVT-STEPSTAT line: record=N)
#   need_getpid_nest HVT VMLINUZ TRACE PID   the nesting view holds PID's getpid-loop making
#                       at least 1000 getpid calls (nest-check.py, the syscall's names by address)
#   verdict NAME [TAG]  print "NAME: PASS [TAG]" or "NAME: FAIL: reasons" (exit 1); a CPU
#                       the tracer parked in HLT and found running is a reason of its own
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
need_regs_checked() {
  local st; st=$(grep -a "^HVT-STEPSTAT" "$run/e9.log")
  [ -n "$st" ] || { why+=("no HVT-STEPSTAT line"); return; }
  grep -qv "checkregs=1" <<< "$st" && why+=("a CPU traced without checkregs=on")
  local miss; miss=$(sed -n 's/.* wregs_misses=\([0-9]*\).*/\1/p' <<< "$st" | awk '{n += $1} END {print n + 0}')
  echo "wregs_misses=$miss"
  [ "$miss" = 0 ] || why+=("decoded write sets missed $miss register changes")
}
need_record() {
  local st; st=$(grep -a "^HVT-STEPSTAT" "$run/e9.log")
  [ -n "$st" ] || { why+=("no HVT-STEPSTAT line"); return; }
  grep -qv " record=$1\b" <<< "$st" && why+=("a CPU's window was not recorded in mode $1")
}
need_getpid_nest() {
  local hvt=$1 vmlinuz=$2 trace=$3 pid=$4 addr aliases nest n
  addr=$("$hvt" syms "$vmlinuz" --name __x64_sys_getpid | awk '{print $1}')
  aliases=$("$hvt" syms "$vmlinuz" | awk -v a="$addr" '$1 == a {print $3}' | paste -sd, -)
  nest=$("$hvt" analyze --vmlinuz "$vmlinuz" --view nest "$trace" |
         python3 "$(dirname "${BASH_SOURCE[0]}")/nest-check.py" "${pid:-?}" getpid-loop "${aliases:-__x64_sys_getpid}")
  echo "$nest (names: $aliases)"
  n=$(sed -n 's/nest_getpid_calls=\([0-9]*\).*/\1/p' <<< "$nest")
  [ "${n:-0}" -ge 1000 ] || why+=("nesting view shows ${n:-0} getpid calls for ${pid:-?}/getpid-loop, want >= 1000")
}
verdict() {
  # A CPU parked in HLT found running: its instructions since went unrecorded (step.c).
  local silent; silent=$(grep -a -c "woke from a parked HLT unheard of" "$run/e9.log" 2>/dev/null)
  [ "${silent:-0}" = 0 ] || why+=("$silent wake-ups from a parked HLT went unheard: instructions unrecorded")
  if [ ${#why[@]} -gt 0 ]; then
    echo "--- serial tail:"; tail -n 12 <<< "$serial"
    printf '%s: FAIL: %s\n' "$1" "$(IFS=';'; echo "${why[*]}")"
    exit 1
  fi
  echo "$1: PASS${2:+ $2}"
}
