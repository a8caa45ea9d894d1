#!/usr/bin/env bash
# check-step-scope.sh OUT HVT HVT_CHECK VMLINUZ - judge make test-step-scope (step-openat.d over
# "cat /proc/version"): the collector's trace of the step() window
#  - passes the continuity check (violations=0) and holds instructions;
#  - holds one thread alone (hvt analyze's per-process summary: one line), cat's;
#  - starts in __x64_sys_openat (the firing's function) and ends with its return: the last
#    record is a RET that pops the firing's return address (RSP after it = RSP at the firing
#    + 8: the function's own RET, or the return thunk's it jumps to under retbleed/ITS
#    mitigations), so the instruction it returns to is not in the window;
#  - holds the call tree below it (do_sys_openat2 in the nesting view).
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
[ "$(wc -l <<< "$procs")" = 1 ] && [ "$(awk '{print $3}' <<< "$procs")" = cat ]
ok "one thread" $? "$(tr '\n' ';' <<< "$procs")"
list=$("$hvt" analyze --vmlinuz "$vmlinuz" --view list "$t" 2>/dev/null | grep -E '^ *[0-9a-f]+ ' )
first=$(head -1 <<< "$list"); last=$(tail -1 <<< "$list")
echo "first: $first"; echo "last:  $last"
grep -q "__x64_sys_openat" <<< "$first"; ok "starts at the firing" $? "$first"
# The firing's RSP: the first record shows every register after the first instruction (the
# window starts after the probe's own), which is "sub rsp, N" or "push": undo it.
rsp0=$(python3 - "$first" <<'PY'
import re, sys
l = sys.argv[1]
rsp = int(re.search(r"rsp=([0-9a-f]+)", l).group(1), 16)
m = re.search(r"sub rsp, (0x[0-9a-f]+|\d+)", l)
rsp += int(m.group(1), 0) if m else 8 if re.search(r"\bpush\b", l) else 0
print(f"{rsp:x}")
PY
)
want=$(printf '%x' $((0x$rsp0 + 8)))
grep -qE ' ret ' <<< "$last" && grep -q "rsp=0*$want\b" <<< "$last"
ok "ends with its return" $? "last: $(cut -c1-110 <<< "$last"); want a ret leaving rsp=$want (the firing's $rsp0 + 8)"
nest=$("$hvt" analyze --vmlinuz "$vmlinuz" --view nest "$t" 2>/dev/null)
grep -q -- "-> do_sys_openat2" <<< "$nest"
ok "the call tree" $? "do_sys_openat2 entered below __x64_sys_openat ($(grep -c -- '-> ' <<< "$nest") calls in all)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
