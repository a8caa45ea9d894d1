#!/usr/bin/env bash
# Host test of live probes through the collector (no Bochs): fake_hv plays the hypervisor's
# probe engine (HVT_CTL_PROBE_* answered, HVT_MSG_PROBE firing records sent from 2 CPUs),
# hvtrace-collector holds the link, `hvt -n` arms through the collector's command socket,
# prints each firing as it is stored and, at the end (--duration), disarms, waits for the last
# records and prints the counts; losses are reported, never hidden. `hvt -e --count-for` makes
# its counting run the same way (armed counted only) and predicts from it.
# Usage: test-probe-coll.sh BUILD_HOST_DIR VMLINUZ. Closing line: "test-probe-coll: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"; VMLINUZ="${2:-build/test/vmlinuz}"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"; HVT="$B/hvt"
W=$(mktemp -d /tmp/hvt-probe-coll.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/../net/test-lib.sh"
CLEANUP_DIR="$W"
DESC='syscall::getpid:entry,syscall::getpid:return,fbt::vfs_read:entry'

run() { # name fires lose [desc [hvt args]]: fake_hv + hvt -n; hvt's stdout/stderr in $W/name.*
  local name="$1" fires="$2" lose="$3" desc="${4:-$DESC}"
  start_coll "$W/$name" "$W/$name-coll.log" --exit-on-bye
  "$FAKE" --port "$PORT" --key "$KEY" --cpus 2 --probes "$fires" --probe-lose "$lose" --timeout 60 \
    >"$W/$name-fake.out" 2>&1 &
  FPID=$!; PIDS+=("$FPID")
  for _ in $(seq 50); do grep -q "connection" "$W/$name-coll.log" && break; sleep 0.1; done
  shift 4 2>/dev/null || shift $#
  "$HVT" -n "$desc" --vmlinuz "$VMLINUZ" -d "$W/$name" --duration 3 --drain 20 "$@" \
    >"$W/$name.out" 2>"$W/$name.err"
  echo $? > "$W/$name.rc"
  wait "$FPID"; wait "$CPID" 2>/dev/null
}
lines() { grep -cE '^ +[01] +[0-9]+ +(getpid|vfs_read):(entry|return)$' "$1"; }
countsum() { awk '/^ID +PROBE +COUNT/ { t = 1; next } t && NF == 3 { s += $3 } END { print s + 0 }' "$1"; }

# 1. every record arrives: 3000 firings over 2 CPUs, 3 probes round-robin
run full 3000 0
check "arming through the collector: 'matched' lines for each description" \
  grep -q "hvt: description 'fbt::vfs_read:entry' matched 1 probe" "$W/full.err"
check "one line per firing: $(lines "$W/full.out") of 3000" test "$(lines "$W/full.out")" = 3000
check "counts per probe sum to 3000 ($(countsum "$W/full.out")), 1000 each" \
  bash -c "test $(countsum "$W/full.out") = 3000 && test \$(grep -cE ' 1000$' '$W/full.out') = 3"
check "both CPUs' records shown" bash -c "grep -qE '^  0 ' '$W/full.out' && grep -qE '^  1 ' '$W/full.out'"
check "exit status 0, received = made (stderr: $(tail -1 "$W/full.err"))" \
  bash -c "test \$(cat '$W/full.rc') = 0 && grep -q 'hvt: 3000 firing records received, 3000 made, 0 lost' '$W/full.err'"
check "disarmed at the end (fake_hv saw the DISARM)" grep -q "disarmed=1" "$W/full-fake.out"
check "the collector logged the probe commands" \
  bash -c "grep -q 'command: probe arm' '$W/full-coll.log' && grep -q 'command: probe disarm' '$W/full-coll.log'"

# 2. records lost on the link are reported and fail the run
run lose 3000 640 
check "lost records reported: $(grep -h 'lost on the link' "$W/lose.out")" \
  grep -q "hvt: 640 firing records lost on the link" "$W/lose.out"
check "lost records: exit status 1" test "$(cat "$W/lose.rc")" = 1
check "lost records: the rest printed ($(lines "$W/lose.out") of 2360)" test "$(lines "$W/lose.out")" = 2360

# 3. more specs than one control request carries: the collector sends them 42 at a time
run many 500 0 'fbt::vfs_*:entry'
n=$(sed -n "s/^hvt: description 'fbt::vfs_\*:entry' matched \([0-9]*\) probes$/\1/p" "$W/many.err")
replies=$(grep -c 'cmd=probe-arm status=ok' "$W/many-coll.log")
check "many: $n probes armed in $replies requests of <= 42 (fake_hv: $(grep -o 'records_made=[0-9]*' "$W/many-fake.out"))" \
  bash -c "test '${n:-0}' -gt 42 && test $replies = $(( (${n:-0} + 41) / 42 )) && test \$(cat '$W/many.rc') = 0"
vl=$(grep -cE '^ +[01] +[0-9]+ +vfs_[a-z_0-9]+:entry$' "$W/many.out")
check "many: 500 firings printed over the probes ($vl)" test "$vl" = 500

# 4. --args at return probes: a system call's return value (and errno when it failed), as
# DTrace's arg0 = arg1 carries it, with no site offset; fbt's the site's offset and the value.
# The fake's record k (the two probes in turn) returns k, or -11 when k % 100 == 99.
run args 400 0 'syscall::getpid:return,fbt::vfs_read:return' --args
sys=$(grep -cE '^ +[01] +[0-9]+ +getpid:return rv=([0-9]+|-11 errno=11)$' "$W/args.out")
fbt=$(grep -cE '^ +[01] +[0-9]+ +vfs_read:return \+0x2a rv=-?[0-9]+$' "$W/args.out")
neg=$(grep -cE ' rv=-11( errno=11)?$' "$W/args.out")
check "args: getpid:return 'rv=K' or 'rv=-11 errno=11' ($sys of 200), vfs_read:return '+0x2a rv=K' ($fbt of 200), -11 4 times ($neg)" \
  bash -c "test $sys = 200 && test $fbt = 200 && test $neg = 4"
want=$(python3 -c "print(sum(-11 if k % 100 == 99 else k for k in range(400)))")
got=$(sed -n 's/.* rv=\([0-9-]*\).*/\1/p' "$W/args.out" | paste -sd+ | bc)
check "args: the return values are the records' (sum ${got:-none}, want $want)" test "${got:-x}" = "$want"

# 6. hvt -e --count-for: the rate from a counting run through the collector (the program's
# probes armed plain: the fake refuses an action's spec without a D program), then the probe
# effect predicted from a calibration table at that rate
printf 'exit=300\nlookup=100\ndfire=200\nclause=100\nsysargs=5000\nop_insn=20\nop_tpush=80\nop_builtin_str=120\nagg_count=180\nnewtask=400\nkeynew=60\n' > "$W/t.cal"
run count 3000 0 'syscall::getpid:entry,fbt::vfs_read:entry { @[probefunc] = count(); }' \
  -e --count-for 1 --tsc-khz 1000000 --cal "$W/t.cal"
cat "$W/count.out"
said=$(sed -n 's/^hvt: counting run: \([0-9]*\) firings in [0-9.]* s (\([0-9]*\) ticks at 1000000 kHz)$/\1 \2/p' "$W/count.err")
f=${said% *}; t=${said#* }
check "count: the counting run saw the fake's 3000 firings in about a second (${said:-none}), armed without an action, disarmed" \
  bash -c "test '${f:-0}' = 3000 && test '${t:-0}' -ge 1000000000 && test '${t:-0}' -lt 3000000000 && grep -q 'disarmed=1' '$W/count-fake.out' && test \$(cat '$W/count.rc') = 0"
# the counting run timed: the fake's 3000 firings 400 ticks each, one in four in a new task,
# each of another probe than the last (the two ids take turns)
check "count: the counting run timed, its mix said ($(grep 'timed' "$W/count.err"))" \
  grep -q '^hvt: of them 3000 timed, 1200000 ticks their own; 750 in a new task, 3000 of another probe than the last$' "$W/count.err"
# the table: 300+100+200+100 + RET 20 + tpush 80 + probefunc 120 + count 180 = 1100 for each
# probe (the program reads no argument, so the system call's entry pays no sysargs: the engine
# reads none; unit_predict checks the other case), and the mix: a quarter of newtask's 400, and
# keynew's 60 at every firing (the key is the probe's name); the interpreter is not in the
# table (said, priced 0); the rate 3000 / (T - 1200000)
want=$(awk -v f="${f:-0}" -v t="${t:-1}" 'BEGIN { r = f / (t - 1200000); printf "cost_per_firing=1260.0 rate_per_tick=%.6g predicted_slowdown=%.4f", r, 1 + r * 1260 }')
check "count: the prediction from it: $(grep -o 'cost_per_firing=.*' "$W/count.out") (want $want)" \
  grep -qx "$want" "$W/count.out"

# 5. no collector: a clear error, status 1
"$HVT" -n "$DESC" --vmlinuz "$VMLINUZ" -d "$W/none" --duration 1 >"$W/none.out" 2>"$W/none.err"
rc=$?
check "no collector: exit 1 and says so ($(head -1 "$W/none.err"))" \
  bash -c "test $rc = 1 && grep -q 'cannot reach the collector' '$W/none.err'"

echo "test-probe-coll: $pass passed, $fail failed"
[ "$fail" = 0 ]
