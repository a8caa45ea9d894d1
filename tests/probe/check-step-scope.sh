#!/usr/bin/env bash
# check-step-scope.sh OUT HVT HVT_CHECK VMLINUZ - judge make test-step-scope (step-openat.d over
# step-two-run: cat and tee in openat at once, each one's step() firing while the other's
# window is open; then nine heads in openat at once, one more than the tracer steps at once):
# the collector's trace of the step() windows
#  - passes the continuity check (violations=0) and holds instructions;
#  - holds those threads alone (hvt analyze's per-process summary): cat's, tee's and eight
#    heads';
#  - for each of them: starts in __x64_sys_openat (the firing's function) and ends with its
#    return, once: the record before the STOP(D step()) of its CPU is a RET that pops its
#    firing's return address (RSP after it = RSP at the firing + 8: the function's own RET, or
#    the return thunk's it jumps to under retbleed/ITS mitigations), so the instruction it
#    returns to is not in the window;
#  - holds the call trees below them (do_sys_openat2 entered ten times in the nesting view);
#  - the ninth head's step() was refused: one error saying so, and no other error or drop;
#  - the program's own probe at __switch_to (where every window's switch probe sits) still
#    fires after the last window closed (switches_after_windows > 0).
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
# Each thread judged in its CPUs' own order (--file-order): records of one CPU are in the order
# they ran, but time stamps of two CPUs do not compare (each stepped CPU's clock is dilated on
# its own), so a merged listing may put a thread's earlier stretch on one CPU after its later
# one on another.
"$hvt" analyze --vmlinuz "$vmlinuz" --view list --file-order "$t" 2>/dev/null > "$out/list.txt"
nthreads=0
while read -r res name why; do
  [ "$res" = starts ] && nthreads=$((nthreads + 1))
  ok "$name $res" "$([ "$why" = ok ] && echo 0 || echo 1)" "$why"
done < <(python3 - "$out/list.txt" <<'PY'
import re, sys
# The firing's RSP: its first record shows every register after the function's first
# instruction (the window starts after the probe's own), "sub rsp, N" or "push": undo it.
first, end, ends, last = {}, {}, {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    if line.startswith("#"):
        # Another task runs on this CPU now: a later stop there is the window closing on a
        # CPU that paused (the thread left it, blocked or preempted), not that thread's end.
        if len(f) > 3 and f[3] == "switch":
            last[f[2]] = None
        if len(f) > 3 and f[3] == "stop" and "(D step()" in line:
            c = f[2]
            if last.get(c):
                who, l = last[c]
                ends[who] = ends.get(who, 0) + 1
                end[who] = l
            last[c] = None
        continue
    if len(f) < 6 or "/" not in f[2]:
        continue
    who = f[2]
    last[f[1]] = (who, line)
    # Its first record is the firing function's first after the probe: the lowest offset in
    # __x64_sys_openat (file order is each CPU's own: a thread that moved to another CPU may
    # show its return through __x64_sys_openat before its start).
    m = re.search(r"__x64_sys_openat\+(0x[0-9a-f]+)", line)
    if m and (who not in first or int(m.group(1), 16) < first[who][0]):
        first[who] = (int(m.group(1), 16), line)
for who in sorted(set(first) | set(end)):
    fl, el = first.get(who, (0, ""))[1], end.get(who, "")
    m = re.search(r"rsp=([0-9a-f]+)", fl)
    if not fl or not m:
        print("starts", who, "no record at __x64_sys_openat with its registers")
        continue
    print("starts", who, "ok")
    rsp = int(m.group(1), 16)
    m = re.search(r"sub rsp, (0x[0-9a-f]+|\d+)", fl)
    rsp += int(m.group(1), 0) if m else 8 if re.search(r"\bpush\b", fl) else 0
    want = rsp + 8
    m = re.search(r"rsp=([0-9a-f]+)", el)
    good = ends.get(who) == 1 and " ret " in el and m and int(m.group(1), 16) == want
    print("ends_at_its_own_return", who, "ok" if good else
          f"{ends.get(who, 0)} ends (want 1), the record before the last: {el[:110].strip()}; want a ret leaving rsp={want:x}")
PY
)
[ "$nthreads" = 10 ]; ok "threads judged" $? "$nthreads (want 10)"
nest=$("$hvt" analyze --vmlinuz "$vmlinuz" --view nest "$t" 2>/dev/null)
k=$(grep -c -- "-> do_sys_openat2" <<< "$nest")
[ "$k" -ge 10 ]
ok "the call trees" $? "do_sys_openat2 entered $k times below __x64_sys_openat (want 10; $(grep -c -- '-> ' <<< "$nest") calls in all)"
log=$(dirname "$out")/$(basename "$out").out
refused=$(grep -cE "^hvt: error on enabled probe .*step\(\) refused" "$log" 2>/dev/null)
[ "$refused" = 1 ]; ok "the ninth step() refused" $? "$refused 'step() refused' errors (want 1: eight threads stepped at once)"
e=$(grep -E "^(hvt|dtrace): (error|[0-9]+ [a-z ]*(drop|failed))" "$log" 2>/dev/null | grep -v "step() refused")
[ -z "$e" ]; ok "no other D errors or drops" $? "${e:-none in $log}"
sw=$(sed -n 's/^switches_after_windows \([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -1)
[ "${sw:-0}" -gt 0 ]
ok "the program's own __switch_to probe outlived the windows" $? "${sw:-no} switches counted after the last window (want > 0)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
