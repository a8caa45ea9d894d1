#!/usr/bin/env bash
# check-dtrace.sh OUT HVT VMLINUZ - judge test-dtrace (tests/probe/probe.mk).
set -uo pipefail
out=$1 hvt=$2 vmlinuz=$3
pass=0 fail=0
check() { if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1: $3"; else fail=$((fail + 1)); echo "FAIL $1: $3"; fi; }
grep -a "probe-arm:" "$out"
entry=$(grep -Ec '^ +[0-9]+ +[0-9]+ +getpid:entry$' "$out")
ret=$(grep -Ec '^ +[0-9]+ +[0-9]+ +getpid:return$' "$out")
[ "$entry" -ge 101 ] && [ "$ret" = "$entry" ]; check "one line a firing" $? "$entry entry lines, $ret return lines (>= 101: getpid-loop's own, others may call getpid too)"
grep -Eq '^[0-9]+ +syscall:kernel:getpid:entry +'"$entry"'$' "$out"; check "count per probe" $? "$(grep -a 'syscall:kernel:getpid:entry' "$out")"
grep -q "matched 1 probe" "$out"; check "matched message" $? "$(grep -a 'matched' "$out" | head -1)"
msg=$("$hvt" -n 'fbt::no_such_function_hvt:entry' --vmlinuz "$vmlinuz" --specs /dev/null 2>&1); st=$?
[ $st = 1 ] && grep -q "does not match any probes" <<< "$msg"; check "no match is an error" $? "exit $st: $msg"
msg=$("$hvt" -n 'a:b:c:d:e' --vmlinuz "$vmlinuz" --specs /dev/null 2>&1); st=$?
[ $st = 1 ]; check "five fields refused" $? "exit $st: $msg"
n=$("$hvt" -l -n 'fbt::vfs_read:entry' --vmlinuz "$vmlinuz" | grep -c ' vfs_read entry$'); [ "$n" = 1 ]
check "hvt -l -n" $? "$n line for fbt::vfs_read:entry"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
