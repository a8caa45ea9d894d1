#!/usr/bin/env bash
# check-step-scope.sh OUT HVT HVT_CHECK VMLINUZ - judge make test-step-scope (step-openat.d over
# "cat /proc/version"): the collector's trace of the step() window
#  - passes the continuity check (violations=0) and holds instructions;
#  - holds one thread alone (hvt analyze's per-process summary: one line), cat's;
#  - starts in __x64_sys_openat (the firing's function) and ends with its return: the last
#    record is a RET in __x64_sys_openat (the instruction it returns to is not in the window);
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
grep -q "__x64_sys_openat" <<< "$last" && grep -qE '\bret' <<< "$last"; ok "ends with its return" $? "$last"
"$hvt" analyze --vmlinuz "$vmlinuz" --view nest "$t" 2>/dev/null | grep -q -- "-> do_sys_openat2"
ok "the call tree" $? "do_sys_openat2 entered"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
