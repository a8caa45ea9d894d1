#!/usr/bin/env bash
# check-triggers.sh RUN_DIR HVT_IMPORT HVT_CHECK HVT VMLINUZ BUDGET - judge the trigger run
# (start=entry at=__x64_sys_getpid comm=getpid-loop budget=BUDGET, getpid-loop's marks ignored):
#  - the workload ran and the machine powered off cleanly;
#  - the EPT trigger fired and the trace passes hvt-check (violations=0, no gap);
#  - one CPU started with reason "function entry" (6) and its first instruction record is
#    __x64_sys_getpid+0x0, in task getpid-loop;
#  - the trace holds exactly BUDGET instructions and stopped with reason "budget" (7).
# env TRIGGER_START_REASON (default 6; 5 = passes) and TRIGGER_PASSES (the pass count the
# hypervisor must report when it fires; default 1).
set -uo pipefail
start_reason=${TRIGGER_START_REASON:-6}; passes=${TRIGGER_PASSES:-1}
run=$1; import=$2; check=$3; hvt=$4; vmlinuz=$5; budget=$6
source "$(dirname "$0")/check-lib.sh"
run_start "^getpid-loop:\|^HVT-CMD"
need_status0
need_poweroff
grep -a "^hvtrace: \(.*trigger\|KASLR\|cpu .*mark\)\|^HVT-STEPSTAT" "$run/e9.log" | head -20
grep -qa "^hvtrace: cpu [0-9]*: trigger fired at [0-9a-f]* after $passes pass(es)" "$run/e9.log" ||
  why+=("the trigger did not fire after $passes pass(es)")
if "$import" "$run/e9.log" "$run/trace.hvt"; then
  out=$("$check" "$run/trace.hvt"); st=$?
  echo "$out"
  [ $st = 0 ] || why+=("continuity check failed")
  total=$(sed -n 's/^violations=[0-9]* insns=\([0-9]*\).*/\1/p' <<< "$out")
  [ "${total:-0}" = "$budget" ] || why+=("trace holds ${total:-0} instructions, budget was $budget")
  # The CPU that hit the trap starts at the trigger address; the others at their next exit.
  cpu=$(grep -a "^hvtrace: cpu [0-9]*: trigger fired" "$run/e9.log" | head -1 | sed 's/^hvtrace: cpu \([0-9]*\):.*/\1/')
  line=$(grep "^cpu ${cpu:-x}:.* start=$start_reason " <<< "$out" | head -1)
  if [ -z "$line" ]; then
    why+=("the firing CPU ${cpu:-?} did not start with reason $start_reason")
  else
    first=$(sed -n 's/.* first=\(0x[0-9a-f]*\).*/\1/p' <<< "$line")
    lstar=$(grep -a "^HVT-META lstar=" "$run/e9.log" | head -1 | sed 's/.*lstar=\([0-9a-f]*\).*/\1/')
    sym=$("$hvt" syms --lstar "0x$lstar" "$vmlinuz" --addr "$first" | awk '{print $2}')
    want=$("$hvt" syms --lstar "0x$lstar" "$vmlinuz" --name __x64_sys_getpid | awk '{print $1}')
    echo "first instruction on cpu $cpu: $first = $sym; __x64_sys_getpid at runtime = 0x$want"
    # (an alias such as __do_sys_getpid may share the address: compare addresses)
    if [ "$((first))" != "$((0x${want:-0}))" ]; then
      # An interrupt may be delivered before the trapped instruction runs: then the window
      # opens with that interrupt's entry, and __x64_sys_getpid runs right after its return.
      "$hvt" analyze --file-order --view list "$run/trace.hvt" 2>/dev/null |
        awk -v c="$cpu" '($1 == "#" && $3 == c) || $2 == c' | head -n 20000 > "$run/trigger-cpu.list"
      verdict=$(python3 - "$want" "$run/trigger-cpu.list" <<'PY'
import sys
want = int(sys.argv[1], 16)
seen_event, verdict = False, "never"
for line in open(sys.argv[2]):
    f = line.split()
    if f[0] == "#":
        if len(f) > 3 and f[3] in ("interrupt", "exception"):
            seen_event = True
        continue
    rip = int(f[3], 16)
    if not seen_event:                       # the first instruction is not a handler's
        verdict = "first" if rip == want else "other"
        break
    if rip == want:
        verdict = "after-interrupt"
        break
print(verdict)
PY
)
      echo "first instruction is $sym: $verdict"
      [ "$verdict" = after-interrupt ] || why+=("the window does not open at __x64_sys_getpid ($sym, $verdict)")
    fi
    task=$("$hvt" analyze --file-order "$run/trace.hvt" 2>/dev/null | awk -v c="$cpu" '$1 == "#" && $3 == c && /switch to|context/ {print; exit}')
    echo "first task on cpu $cpu: $task"
    grep -q "/getpid-loop" <<< "$task" || why+=("trace on cpu $cpu does not start in getpid-loop")
    # Syscalls the trace saw on that CPU: a passes trigger starts late in the loop.
    echo "getpid syscall markers after the start on cpu $cpu: $(grep "^cpu $cpu:" <<< "$out" | sed 's/.*syscalls=\([0-9]*\).*/\1/')"
  fi
  grep -q "^cpu [0-9]*:.* stop=7 " <<< "$out" || why+=("no CPU stopped with reason budget (7)")
else
  why+=("trace import failed")
fi
verdict check-triggers violations=0
