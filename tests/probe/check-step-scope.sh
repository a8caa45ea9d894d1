#!/usr/bin/env bash
# check-step-scope.sh OUT HVT HVT_CHECK VMLINUZ - judge make test-step-scope (step-openat.d over
# step-two-run: cat and tee in openat at once, each one's step() firing while the other's
# window is open; then nine heads in openat at once, one more than the tracer steps at once):
# the collector's trace of the step() windows
#  - passes the continuity check (violations=0) and holds instructions;
#  - holds those threads alone (hvt analyze's per-process summary): cat's, tee's and eight
#    heads';
#  - for each of them: starts in __x64_sys_openat (the firing's function) and ends with its
#    return: its last record is a RET that pops its firing's return address (RSP after it = RSP
#    at the firing + 8: the function's own RET, or the return thunk's it jumps to under
#    retbleed/ITS mitigations), so the instruction it returns to is not in the window;
#  - holds the call trees below them (do_sys_openat2 entered ten times in the nesting view);
#  - the ninth head's step() was refused: one error saying so, and no other error or drop.
set -uo pipefail
out=$1 hvt=$2 check=$3 vmlinuz=$4
pass=0 fail=0
ok() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1: $3"; else fail=$((fail + 1)); echo "FAIL $1: $3"; fi; }
t=$(ls -d "$out"/coll/*/trace.hvt 2>/dev/null | head -1)
[ -s "${t:-/nonexistent}" ]; ok "trace file" $? "${t:-none}"
c=$("$check" "$t" 2>&1); st=$?
echo "$c"
n=$(sed -n 's/^violations=0 insns=\([0-9]*\).*/\1/p' <<< "$c")
[ $st = 0 ] && [ "${n:-0}" -gt 100 ]; ok "continuity" $? "hvt-check exit $st, ${n:-0} instructions"
sum=$("$hvt" analyze --vmlinuz "$vmlinuz" --view summary "$t" 2>&1)
echo "$sum" | head -12
procs=$(awk '$1 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/ && $4 > 0' <<< "$sum")
comms=$(awk '{print $3}' <<< "$procs" | sort | uniq -c | awk '{printf "%s*%s ", $2, $1}')
[ "$(wc -l <<< "$procs")" = 10 ] && [ "$comms" = "cat*1 head*8 tee*1 " ]
ok "those threads alone" $? "$comms(want cat*1 head*8 tee*1)"
list=$("$hvt" analyze --vmlinuz "$vmlinuz" --view list "$t" 2>/dev/null | grep -E '^ *[0-9a-f]+ ' )
while read -r pid comm; do
  mine=$(awk -v w="$pid/$comm" '$3 == w' <<< "$list")
  first=$(head -1 <<< "$mine"); last=$(tail -1 <<< "$mine")
  echo "$pid/$comm first: $(cut -c1-140 <<< "$first")"; echo "$pid/$comm last:  $(cut -c1-140 <<< "$last")"
  grep -q "__x64_sys_openat" <<< "$first"; ok "$pid/$comm starts at its firing" $? "$(cut -c1-110 <<< "$first")"
  # The firing's RSP: the first record shows every register after the first instruction (the
  # window starts after the probe's own), which is "sub rsp, N" or "push": undo it.
  rsp0=$(python3 - "$first" <<'PY'
import re, sys
l = sys.argv[1]
m = re.search(r"rsp=([0-9a-f]+)", l)
if m:
    rsp = int(m.group(1), 16)
    m = re.search(r"sub rsp, (0x[0-9a-f]+|\d+)", l)
    rsp += int(m.group(1), 0) if m else 8 if re.search(r"\bpush\b", l) else 0
    print(f"{rsp:x}")
PY
)
  want=$(printf '%x' $((0x${rsp0:-0} + 8)))
  [ -n "$rsp0" ] && grep -qE ' ret ' <<< "$last" && grep -q "rsp=0*$want\b" <<< "$last"
  ok "$pid/$comm ends with its own return" $? "last: $(cut -c1-110 <<< "$last"); want a ret leaving rsp=$want (its firing's ${rsp0:-?} + 8)"
done < <(awk '{print $1, $3}' <<< "$procs")
nest=$("$hvt" analyze --vmlinuz "$vmlinuz" --view nest "$t" 2>/dev/null)
k=$(grep -c -- "-> do_sys_openat2" <<< "$nest")
[ "$k" -ge 10 ]
ok "the call trees" $? "do_sys_openat2 entered $k times below __x64_sys_openat (want 10; $(grep -c -- '-> ' <<< "$nest") calls in all)"
log=$(dirname "$out")/$(basename "$out").out
refused=$(grep -cE "^hvt: error on enabled probe .*step\(\) refused" "$log" 2>/dev/null)
[ "$refused" = 1 ]; ok "the ninth step() refused" $? "$refused 'step() refused' errors (want 1: eight threads stepped at once)"
e=$(grep -E "^(hvt|dtrace): (error|[0-9]+ [a-z ]*(drop|failed))" "$log" 2>/dev/null | grep -v "step() refused")
[ -z "$e" ]; ok "no other D errors or drops" $? "${e:-none in $log}"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
