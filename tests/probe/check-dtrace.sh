#!/usr/bin/env bash
# check-dtrace.sh OUT HVT VMLINUZ - judge test-dtrace (tests/probe/probe.mk): the output of
# make dtrace with tests/probe/dtrace-getpid.d over getpid-loop 100, then the refusals hvt
# makes on the host before any boot.
set -uo pipefail
out=$1 hvt=$2 vmlinuz=$3
pass=0 fail=0
check() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1: $3"; else fail=$((fail + 1)); echo "FAIL $1: $3"; fi; }
tr -d '\r' < "$out" | grep -aE '^(entry|return|calls|dtrace|hvt)' | sort | uniq -c | sort -rn | head -8
entry=$(grep -Ec '^entry [0-9]+$' "$out")
pids=$(sed -n 's/^entry \([0-9]*\)$/\1/p' "$out" | sort -u | tr '\n' ' ')
[ "$entry" = 101 ] && [ "$(wc -w <<< "$pids")" = 1 ]; check "entries" $? "$entry lines (want 101), pids: $pids"
ret=$(awk '$1 == "return" && NF == 3 && $2 == $3' "$out" | wc -l)
[ "$ret" = 101 ]; check "returns with the caller's pid" $? "$ret of 101"
grep -qx "calls 101" "$out"; check "the aggregation" $? "$(grep -a '^calls' "$out" || echo none)"
grep -q "hvt exited 0" "$out"; check "hvt ended with the command" $? "$(grep -a 'hvt exited' "$out")"
! grep -qE 'lost|drops|did not arrive' "$out"; check "nothing lost" $? "$(grep -aE 'lost|drops|did not arrive' "$out" | head -2)"
msg=$("$hvt" -n 'fbt::no_such_function_hvt:entry' --vmlinuz "$vmlinuz" --specs /dev/null 2>&1); st=$?
[ $st = 1 ] && grep -q "does not match any probes" <<< "$msg"; check "no match is an error" $? "exit $st: $msg"
msg=$("$hvt" -n 'a:b:c:d:e' --vmlinuz "$vmlinuz" --specs /dev/null 2>&1); st=$?
[ $st = 1 ]; check "five fields refused" $? "exit $st: $msg"
msg=$(make -s dtrace SCRIPT='syscall::getpid:entry { @ = count( }' 2>&1); st=$?
[ $st != 0 ] && grep -qE 'line 1|1:[0-9]+' <<< "$msg" && ! grep -q "booting Linux" <<< "$msg"
check "a bad script: its line and column, no boot" $? "exit $st: $(grep -aE 'error|line' <<< "$msg" | head -1)"
n=$("$hvt" -l -n 'fbt::vfs_read:entry' --vmlinuz "$vmlinuz" | grep -c ' vfs_read entry$'); [ "$n" = 1 ]
check "hvt -l -n" $? "$n line for fbt::vfs_read:entry"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
