#!/usr/bin/env bash
# check-probes.sh RUN_DIR CALLS CPUS - judge a test-probes run (tests/probe/probe.mk).
# Independent counts: probe-check made CALLS getpid() calls on each of CPUS CPUs, so the entry
# probe (id 1) and the return probe (id 2) on __x64_sys_getpid must each have fired exactly
# CALLS x CPUS times for the process "probe-check". The engine's counters logged right after
# the workload (HVT-PROBESTAT, 2nd line) must show no EPT read or write exit and no foreign
# INT3 (unprobed code on the probed page ran from the shadow without exits); the last ones
# (at disarm) must show the /proc/kcore read served by the EPT path, the user INT3 passed
# back to the guest and ftrace's patching resynced into the shadow; after probe-stress's
# cycles no page may stay in any CPU's view. Prints "N passed, N failed".
set -uo pipefail
run=$1 calls=$2 cpus=$3 cycles=${4:-0}
serial="$run/serial.log" e9="$run/e9.log"
clean() { tr -d '\r' < "$1" 2>/dev/null | sed 's/\x1b\[[0-9;]*[A-Za-z]//g'; }
log=$(clean "$serial"); hv=$(clean "$e9")
pass=0 fail=0
check() { # name condition-status detail
    if [ "$2" = 0 ]; then pass=$((pass + 1)); echo "ok   $1: $3"; else fail=$((fail + 1)); echo "FAIL $1: $3"; fi
}
grep "^HVT-RESULT: name=probe" <<< "$log"
grep -E "^(hvtrace: cpu [0-9]+: probe|HVT-PROBE)" <<< "$hv"
for r in probe-arm probe-workload probe-kprobe-ftrace probe-kcore probe-textsum probe-own-int3 probe-disarm \
         probe-cycles probe-page-sets probe-after-disarm probe-stress-workload; do
    grep -q "^HVT-RESULT: name=$r ok" <<< "$log"; check "$r" $? "guest says $(grep -o "name=$r [A-Za-z]*" <<< "$log" | head -1)"
done
want=$((2 * calls * cpus))      # probe-check's two workloads (alone, then beside the kprobe)
for id in 1 2; do
    n=$(grep "^HVT-PROBE-COMM id=$id " <<< "$hv" | grep " comm=probe-check " | tail -1 | sed 's/.*count=//')
    [ "${n:-x}" = "$want" ]; check "probe $id count" $? "probe-check fired ${n:-none}, want $want (2 x $calls calls x $cpus CPUs)"
done
field() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<< "$2"; }
stats=$(grep "^HVT-PROBESTAT " <<< "$hv")
after=$(sed -n 1p <<< "$stats") last=$(tail -n1 <<< "$stats")
[ "$(field ept_reads "$after")" = 0 ] && [ "$(field ept_writes "$after")" = 0 ]
check "no EPT exit during the workload" $? "$(field ept_reads "$after") reads, $(field ept_writes "$after") writes"
[ "$(field foreign_bp "$after")" = 0 ]; check "no foreign #BP during the workload" $? "$(field foreign_bp "$after")"
[ "$(field fires "$after")" = $((want)) ]; check "fires counted" $? "$(field fires "$after") = $want (first workload, both probes)"
disarm=$(grep "^HVT-PROBESTAT armed=0 " <<< "$stats" | head -1)
[ "$(field ept_reads "$disarm")" -ge 1 ] 2>/dev/null; check "kcore read served from the original" $? "ept_reads=$(field ept_reads "$disarm")"
[ "$(field foreign_bp "$disarm")" -ge 1 ] 2>/dev/null; check "user INT3 passed back" $? "foreign_bp=$(field foreign_bp "$disarm")"
[ "$(field resyncs "$disarm")" -ge 1 ] 2>/dev/null; check "ftrace's writes resynced the shadow" $? "resyncs=$(field resyncs "$disarm") redecodes=$(field redecodes "$disarm")"
[ "$(field shown "$last")" = 0 ] && [ "$(field armed "$last")" = 0 ]; check "every page restored" $? "after the last disarm: shown=$(field shown "$last") armed=$(field armed "$last")"
grep -q "^probe-stress: cycles=$cycles " <<< "$log"; check "stress cycles ran" $? "$(grep '^probe-stress: cycles' <<< "$log")"
[ "$(cat "$run/end" 2>/dev/null)" = poweroff ]; check "clean power-off" $? "end=$(cat "$run/end" 2>/dev/null)"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
