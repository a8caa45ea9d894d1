#!/usr/bin/env bash
# check-step-scope.sh OUT HVT HVT_CHECK VMLINUZ - judge make test-step-scope (step-openat.d over
# step-two-run: cat and tee in openat at once, each one's step() firing while the other's
# window is open): the collector's trace of the step() window
#  - passes the continuity check (violations=0) and holds instructions;
#  - holds two threads alone (hvt analyze's per-process summary: two lines), cat's and tee's;
#  - for each of them: starts in __x64_sys_openat (the firing's function) and ends with its
#    return: its last record is a RET that pops its firing's return address (RSP after it = RSP
#    at the firing + 8: the function's own RET, or the return thunk's it jumps to under
#    retbleed/ITS mitigations), so the instruction it returns to is not in the window;
#  - holds the call trees below them (do_sys_openat2 entered twice in the nesting view);
#  - the D program reported no error and no drop (a refused step() is an error).
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
echo "$sum" | head -5
procs=$(awk '$1 ~ /^[0-9]+$/ && $4 ~ /^[0-9]+$/ && $4 > 0' <<< "$sum")
[ "$(wc -l <<< "$procs")" = 2 ] && [ "$(awk '{print $3}' <<< "$procs" | sort | tr '\n' ' ')" = "cat tee " ]
ok "two threads alone" $? "$(tr '\n' ';' <<< "$procs")"
list=$("$hvt" analyze --vmlinuz "$vmlinuz" --view list "$t" 2>/dev/null | grep -E '^ *[0-9a-f]+ ' )
for comm in cat tee; do
  pid=$(awk -v c=$comm '$3 == c {print $1}' <<< "$procs" | head -1)
  mine=$(awk -v w="${pid:-none}/$comm" '$3 == w' <<< "$list")
  first=$(head -1 <<< "$mine"); last=$(tail -1 <<< "$mine")
  echo "$comm first: $(cut -c1-160 <<< "$first")"; echo "$comm last:  $(cut -c1-160 <<< "$last")"
  grep -q "__x64_sys_openat" <<< "$first"; ok "$comm starts at its firing" $? "$(cut -c1-110 <<< "$first")"
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
  ok "$comm ends with its own return" $? "last: $(cut -c1-110 <<< "$last"); want a ret leaving rsp=$want (its firing's ${rsp0:-?} + 8)"
done
nest=$("$hvt" analyze --vmlinuz "$vmlinuz" --view nest "$t" 2>/dev/null)
k=$(grep -c -- "-> do_sys_openat2" <<< "$nest")
[ "$k" -ge 2 ]
ok "the call trees" $? "do_sys_openat2 entered $k times below __x64_sys_openat ($(grep -c -- '-> ' <<< "$nest") calls in all)"
log=$(dirname "$out")/$(basename "$out").out
e=$(grep -E "^(hvt|dtrace): (error|[0-9]+ [a-z ]*(drop|failed))" "$log" 2>/dev/null)
[ -z "$e" ]; ok "no D errors or drops" $? "${e:-none in $log}"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
