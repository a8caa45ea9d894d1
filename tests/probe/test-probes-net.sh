#!/usr/bin/env bash
# test-probes-net.sh - live probes through the dedicated link, end to end in Bochs (2 CPUs):
# the hypervisor streams its firing records as HVT_MSG_PROBE through its own e1000 to
# hvtrace-collector on this host; `hvt -n` arms through the collector, prints each firing as it
# is stored, and on SIGINT disarms, waits for the last records and prints the counts.
# One boot runs them all: the guest's tests/guest/probe-suite starts each run's workload in
# turn (tests/guest/probe-net.c and its kin), which waits until the host's probes fire, runs,
# says so on its console (streamed to the collector) and waits for the disarm; the test then
# stops hvt. The runs go in this file's order.
# Run count: exactly N getppid() calls on each CPU at once: CPUs x N getppid:entry firings,
#   one line each.
# Run profile: profile:::profile-997 while md5sum hashes an 8 MiB file; hvt unwinds every
#   sample's kernel stack with the image's ORC tables and writes folded stacks and an SVG flame
#   graph: md5sum's samples are mostly user-mode hashing and its system-call samples sit under
#   the read path (entry_SYSCALL_64 ... ksys_read/vfs_read); `hvt analyze --view profile|flame`
#   on the collector's directory afterwards gives the same stacks and picture, and `hvt export
#   --speedscope` the same stacks in speedscope's format (valid against speedscope's schema).
# Run dstack (after profile: the samples the collector stored before it are left out): D's stack keys
#   on the profile workload (a quarter of its file): `profile-997 { @k[stack()] = count(); }`,
#   each kernel stack unwound in the hypervisor with the guest's own resident ORC tables; the
#   same firings also leave the sample path's records (hvt --samples), which `hvt analyze
#   --view profile` unwinds on the host: the aggregation's folded stacks (hvt --folded) equal
#   that folding (cut to stack()'s 20 frames); the commonest stacks name the read path;
#   `@u[ustack()]` of probe-ustack names its functions in call order.
# Run user: addr:pid<N>:0x<fn>: on a function of a guest process whose forked children share
#   the text page, and addr:probe-uchild:0x<fn>: on the same address by the name one child gives
#   itself: exactly the parent's calls fire the first, exactly the named child's the second, the
#   other child's run unprobed and right (that address space steps over the INT3 without a
#   firing), the parent reads its code unchanged.
# Run d: a D program (aggregations by key and CPU, a thread-local timestamp matched at the
#   return, printf under predicates) over the count run's workload: exact counts, every
#   thread-local met, the getpriority() arguments and errno, nothing lost.
# Run dwork: D programs over a workload that knows its own counts (tests/guest/d-work.c):
#   quantize, copyinstr, fbt against the guest's kprobe, stack(), invalid addresses, step().
# Run forks: 20 children forked and exited back to back on one CPU: D's pid and tid at each
#   one's getppid() are that child's own; with -x probecost, hvt prints the hypervisor's time
#   per firing by phase at the end.
# Run sdt: static tracepoints (tests/d/programs/sdt-work.d) over a workload that knows its own
#   counts (tests/guest/sdt-work.c): sched_process_fork/exec/exit per fork, exec and exit it
#   made, half of them while the guest's own ftrace has the tracepoints on (the kernel patched
#   the sites under the probes: its trace buffer has them too), sched_switch with prev_state set
#   and no preemption = its voluntary switches (getrusage), sched_wakeup of it as many,
#   inet_sock_set_state: both ends of each of its loopback TCP connections established.
# Run stable: DTrace's proc and sched providers (tests/d/programs/stable-work.d) over a workload
#   that knows what they should see (tests/guest/stable-work.c): proc:::exec-success's
#   curpsinfo->pr_psargs are the argument lists it exec'ed; create, start, exec, exec-failure
#   and exit count its forks, execs, failed exec and exits; sched:::on-cpu/off-cpu time summed
#   the self->ts way is within 5% of its own CLOCK_THREAD_CPUTIME_ID; lockstat's
#   adaptive-acquire/release see its pipe's mutex taken and given back exactly as often as it did.
# Run dcmd: hvt -c through the guest tool's agent ($target, the run ends with the command).
# Run dread: hvt -c of a command that reads a known number of bytes: at syscall::read:return
#   sum(arg0) (DTrace's arg0 = the return value) is exactly those bytes, and $target's reads are
#   the command's own from its exec on (none of the agent's, such as a 1-byte go read).
# All: records received = made with none lost; nothing went to port 0xE9; the disarm restored
# every page (HVT-PROBESTAT shown=0 armed=0); the guest saw the disarm; after the last run a
# clean power-off.
# Needs: make efi, the kernel, the host tools; `make test-probes-net` builds them. Knobs: BUILD
# (build), TRACE_CPUS (2), PROBE_NET_CALLS (1000), PROBE_NET_TIMEOUT (Bochs wall s, 900),
# Run dglobal: a kernel global by name (*(unsigned long *)&`jiffies) read at a command's read of
#   /proc/uptime: the link address plus the KASLR slide, so the value is the guest's jiffies
#   (INITIAL_JIFFIES plus uptime x HZ, within 0.1 s of what the command prints).
# Run modio: fbt:brd:brd_submit_bio:entry and :return armed before the guest loads brd (the kernel
#   package's RAM disk module, in the initramfs), which it loads, writes with O_DIRECT and unloads
#   twice (tests/guest/mod-work.c, tests/d/programs/mod-work.d): firings = its writes, in both
#   loads; null_blk's own tracepoints (sdt:nullb::nullb_zone_op, nullb_report_zones) = its zoned
#   writes, zone resets and zone report;
#   sdt block_bio_queue/block_bio_complete of its writes: count and bytes = its own; the guest
#   goes on after each rmmod (the later runs).
# PROBE_NET_RUNS ("count profile dstack d dwork forks sdt stable modio user dcmd dread dglobal"; make test-d
# runs "d dwork dcmd dread dglobal"),
# PROBE_PROFILE_MB (8), PROBE_VMLINUZ (another kernel), PROBE_NET_EFI (another loader),
# PROBE_NET_OUT (where the runs go).
# Closing line: "test-probes-net: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${BUILD:-build}"
OUT="${PROBE_NET_OUT:-$BUILD/test/probe-net}"
H="$BUILD/host"
COLL="$H/hvtrace-collector"; HVT="$H/hvt"
VMLINUZ="${PROBE_VMLINUZ:-$BUILD/test/vmlinuz}"; INITRD="$BUILD/test/probe-net/initrd.img"; EFI="${PROBE_NET_EFI:-$BUILD/hvtrace.efi}"
mkdir -p "$OUT"
CPUS="${TRACE_CPUS:-2}"; TIMEOUT="${PROBE_NET_TIMEOUT:-900}"; N="${PROBE_NET_CALLS:-1000}"
RUNS="${PROBE_NET_RUNS:-count profile dstack d dwork forks sdt stable modio user dcmd dread dglobal}"; PROFILE_MB="${PROBE_PROFILE_MB:-8}"
CMDLINE="${TEST_CMDLINE:-console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$CPUS}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
source tests/net/test-lib.sh
for f in "$COLL" "$HVT" "$VMLINUZ" "$INITRD" "$EFI"; do
  [ -e "$f" ] || { echo "test-probes-net: missing $f (run make test-probes-net)"; exit 1; }
done
# Offsets of the push/sub probes: IBT kernels start functions with endbr64 (4 bytes) before
# the fentry NOP, which shifts the prologue; hvt refuses an offset inside an instruction.
SHIFT=0
"$HVT" -l -n 'addr:kernel:__x64_sys_getppid+5:' --vmlinuz "$VMLINUZ" >/dev/null 2>&1 || SHIFT=4
NETCFG="nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000"

# One boot for every run: the guest runs tests/guest/probe-suite, each run's workload in turn;
# the collector stores the whole boot in $OUT/coll. Each run's part of the console and of the
# hypervisor's log is cut out into $OUT/NAME.console and $OUT/NAME.e9 for its checks.
D="$OUT/coll/current"; R="$OUT/vm/run"
# the runs in this file's order (the guest runs them in the order it is given)
SUITE=""; for r in ibt count shstk profile dstack d dwork forks sdt stable modio user dcmd dread dglobal; do [[ " $RUNS " == *" $r "* ]] && SUITE+="${SUITE:+,}$r"; done
rm -rf "$OUT/coll" "$OUT/vm"
start_coll "$OUT/coll" "$OUT/collector.log" --exit-on-bye || { echo "test-probes-net: the collector did not start"; exit 1; }
BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --kernel "$VMLINUZ" \
  --initrd "$INITRD" --efi "$EFI" --cmd "/bin/probe-suite,$N,$PROFILE_MB,$SUITE" --trace '' --net "$NETCFG" \
  "$OUT/vm" > "$OUT/bochs.out" 2>&1 &
BPID=$!; PIDS+=("$BPID")
t_boot=$(date +%s.%N)
# the console from the line "suite: run NAME" to the next "suite: run" line
slice() { tr -d '\r' < "$D/console.log" 2>/dev/null | awk -v m="suite: run $1" '$0 == m { on = 1; next } on && /^suite: run / { exit } on'; }
in_run() { slice "$1" | grep -aq -- "$2"; }
e9size() { stat -c %s "$R/e9.log" 2>/dev/null || echo 0; }
alive() { kill -0 "$BPID" 2>/dev/null && ! grep -q "rejecting stream" "$OUT/collector.log"; }

# run NAME DESC [hvt args...]: when the guest starts NAME's workload and says "probe-net:
# waiting", start hvt -n DESC; when it says "workload done", SIGINT hvt (disarm, drain,
# counts); then wait until the guest has seen the disarm. Leaves $OUT/NAME.{out,err,rc,console,e9}.
# RUN_READY (default "probe-net: waiting") is the line that starts hvt; RUN_UNTIL=hvt lets hvt
# end by itself (hvt -c ends with its command) instead of a SIGINT at "workload done".
run() {
  local name="$1" desc="$2"; shift 2
  local hpid="" t0 t1 t2 e0
  rm -f "$OUT/$name".{out,err,rc,console,e9}
  for _ in $(seq $(( TIMEOUT * 5 ))); do
    tr -d '\r' < "$D/console.log" 2>/dev/null | grep -aqx "suite: run $name" && break
    alive || break
    sleep 0.2
  done
  e0=$(e9size)
  for _ in $(seq $(( TIMEOUT * 5 ))); do
    if in_run "$name" "${RUN_READY:-probe-net: waiting}"; then
      t0=$(date +%s.%N)
      # a user probe: the process and address the guest printed
      local who=$(slice "$name" | sed -n 's/^probe-user: pid=\([0-9]*\) fn=\(0x[0-9a-f]*\).*/\1 \2/p' | head -1)
      desc=${desc//@PID@/${who%% *}}; desc=${desc//@FN@/${who##* }}
      "$HVT" -n "$desc" --vmlinuz "$VMLINUZ" -d "$OUT/coll" --drain 300 "$@" > "$OUT/$name.out" 2> "$OUT/$name.err" &
      hpid=$!; PIDS+=("$hpid")
      break
    fi
    alive || break
    sleep 0.2
  done
  if [ -n "$hpid" ]; then
    for _ in $(seq $(( TIMEOUT * 5 ))); do
      [ "${RUN_UNTIL:-}" != hvt ] && in_run "$name" "probe-net: workload done" && break
      alive || break
      kill -0 "$hpid" 2>/dev/null || break
      sleep 0.2
    done
    t1=$(date +%s.%N)
    kill -INT "$hpid" 2>/dev/null
    wait "$hpid"; echo $? > "$OUT/$name.rc"
    t2=$(date +%s.%N)
  fi
  # the guest sees the disarm (its polls stop firing) and ends the workload
  for _ in $(seq 750); do
    tr -d '\r' < "$D/console.log" 2>/dev/null | grep -aq "^suite: $name status" && break
    alive || break
    sleep 0.2
  done
  slice "$name" > "$OUT/$name.console"
  tail -c +$((e0 + 1)) "$R/e9.log" 2>/dev/null | tr -d '\r' > "$OUT/$name.e9"
  echo "test-probes-net: $name: $(grep -a "^suite: $name status" "$OUT/$name.console" || echo 'the guest did not end the run')"
  [ -n "$hpid" ] && awk -v a="$t0" -v b="$t1" -v c="$t2" -v n="$name" 'BEGIN { printf "test-probes-net: %s: hvt ran %.1f s until the workload ended; disarm and drain took %.1f s\n", n, b - a, c - b }'
  cat "$OUT/$name.err" 2>/dev/null
}
# common checks of a run: all records arrived, nothing on port 0xE9, pages restored, the
# guest saw the disarm
common() {
  local name="$1" stat
  check "$name: every record made arrived, none lost ($(grep -h 'firing records received' "$OUT/$name.err" 2>/dev/null)); hvt exit 0" \
    bash -c "grep -qE 'hvt: ([0-9]+) firing records received, \1 made, 0 lost' '$OUT/$name.err' && test \"\$(cat '$OUT/$name.rc')\" = 0"
  check "$name: no firing record on port 0xE9 (they went over the link)" \
    bash -c "! grep -aq '^HVT-\(FIRE\|STACK\)B' '$OUT/$name.e9'"
  stat=$(grep -a '^HVT-PROBESTAT' "$OUT/$name.e9" | tail -1)
  check "$name: after the disarm every page is restored: ${stat:0:60}" \
    bash -c "grep -q 'armed=0 ' <<< '$stat' && grep -q ' shown=0 ' <<< '$stat'"
  check "$name: the guest saw the disarm and ended the run" \
    bash -c "grep -q 'probe-net: disarmed, exiting' '$OUT/$name.console' && grep -q '^suite: $name status 0' '$OUT/$name.console'"
}

# dwork's step()/unstep(): every instruction from getpgid's entry to its return, in the
# collector's trace file (judged once the machine is off and the file finished)
dwork_trace() {
  T="$OUT/coll/current/trace.hvt"
  "$HVT" analyze --vmlinuz "$VMLINUZ" --view funcs "$T" > "$OUT/dwork-funcs.txt" 2>&1
  "$HVT" analyze --vmlinuz "$VMLINUZ" "$T" 2>/dev/null | grep -i 'start (\|stop (' > "$OUT/dwork-marks.txt"
  head -8 "$OUT/dwork-funcs.txt"; cat "$OUT/dwork-marks.txt"
  check "dwork: step() at getpgid's entry, unstep() at its return: the trace holds its instructions (do_getpgid or __x64_sys_getpgid), started by D" \
    bash -c "test -s '$T' && grep -qE 'do_getpgid|__x64_sys_getpgid' '$OUT/dwork-funcs.txt' && grep -q 'D step' '$OUT/dwork-marks.txt'"
  nent=$(awk '$3 == "do_getpgid" { print $2 }' "$OUT/dwork-funcs.txt" | head -1)
  nstop=$(grep -c 'stop (D stop()' "$OUT/dwork-marks.txt")
  check "dwork: stop() at the 2nd of 3 getpgid returns: do_getpgid traced ${nent:-0} times (want 2: the 3rd step() did nothing), $nstop 'D stop()' markers (want >= 1)" \
    bash -c "test '${nent:-0}' = 2 && test '$nstop' -ge 1"
}

# ---- ibt: entry and return probes on a function the kernel reaches only by an indirect call
# (read_zero, through /dev/zero's f_op->read). Not in the default runs: make test-cet runs it
# on the IBT kernel in Bochs's tigerlake model (CET), where an INT3 over the function's ENDBR64
# is a control-protection fault ("Missing ENDBR", a kernel BUG).
if [[ " $RUNS " == *" ibt "* ]]; then
  run ibt 'syscall::getpid:entry,fbt::read_zero:entry,fbt::read_zero:return'
  want=$(( CPUS * N ))
  tail -4 "$OUT/ibt.out" 2>/dev/null
  ze=$(awk '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 == "fbt:kernel:read_zero:entry" { print $3 }' "$OUT/ibt.out" 2>/dev/null)
  zr=$(awk '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 == "fbt:kernel:read_zero:return" { print $3 }' "$OUT/ibt.out" 2>/dev/null)
  check "ibt: the guest read /dev/zero $N times on each CPU (status ok)" \
    grep -q "probe-net: workload done calls=$N cpus=$CPUS ok" "$OUT/ibt.console"
  check "ibt: read_zero:entry count: ${ze:-none}, want $want" test "${ze:-0}" = "$want"
  check "ibt: read_zero:return count: ${zr:-none}, want $want" test "${zr:-0}" = "$want"
  check "ibt: no control-protection fault, missing ENDBR or kernel BUG in the guest" \
    bash -c "! tr -d '\r' < '$R/serial.log' | grep -aqiE 'Missing ENDBR|control protection|kernel BUG|Oops'"
  if [ -n "${PROBE_NET_EXPECT_IBT:-}" ]; then
    check "ibt: the kernel enforces IBT ($(tr -d '\r' < "$R/serial.log" | grep -ao 'CET detected: [A-Za-z ]*' | head -1))" \
      grep -aq "CET detected: Indirect Branch Tracking enabled" "$R/serial.log"
  fi
  common ibt
fi

# ---- count: exact firing counts of a probe nothing else fires
if [[ " $RUNS " == *" count "* ]]; then
  run count 'syscall::getpid:entry,syscall::getppid:entry,addr:kernel:__x64_sys_getppid+'$((5 + SHIFT))':,syscall::getpriority:entry,syscall::getpriority:return' --args
  tail -7 "$OUT/count.out" 2>/dev/null
  grep -m2 'getpriority:' "$OUT/count.out"
  want=$(( CPUS * N ))
  nlines=$(grep -cE '^ +[0-9]+ +[0-9]+ +getppid:entry( |$)' "$OUT/count.out" 2>/dev/null)
  count=$(awk '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 == "syscall:kernel:getppid:entry" { print $3 }' "$OUT/count.out" 2>/dev/null)
  check "count: the guest waited for the host and the workload ran (status ok)" \
    grep -q "probe-net: workload done calls=$N cpus=$CPUS ok" "$OUT/count.console"
  check "count: arming through the collector answered ($(grep -h "getppid:entry' matched" "$OUT/count.err" 2>/dev/null))" \
    grep -q "hvt: description 'syscall::getppid:entry' matched 1 probe" "$OUT/count.err"
  check "count: getppid:entry lines: $nlines, want $want (CPUs x N)" test "${nlines:-0}" = "$want"
  check "count: getppid:entry count: ${count:-none}, want $want" test "${count:-0}" = "$want"
  check "count: getpid:entry fired too (the guest's polls)" grep -qE '^ +[0-9]+ +[0-9]+ +getpid:entry( |$)' "$OUT/count.out"
  # the arguments as the user passed them (read from the wrapper's pt_regs), the return value and errno
  pe=$(grep -cE ' getpriority:entry 0x7ac1 0x7ac2 ' "$OUT/count.out"); pr=$(grep -cE ' getpriority:return rv=-22 errno=22$' "$OUT/count.out")
  check "count: syscall arguments as passed (getpriority 0x7ac1 0x7ac2: $pe of 3) and return value with errno (rv=-22 errno=22: $pr of 3)" \
    bash -c "test $pe = 3 && test $pr = 3"
  # __x64_sys_getppid+5 is a PUSH: emulated in the #BP exit like the entry NOPs
  pcount=$(awk -v p="addr:kernel:__x64_sys_getppid+$((5 + SHIFT)):" '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 == p { print $3 }' "$OUT/count.out" 2>/dev/null)
  stat=$(grep -a '^HVT-PROBESTAT' "$OUT/count.e9" 2>/dev/null | tail -1)
  check "count: the probe on getppid's push fired as often (${pcount:-none}), every firing resumed in its exit ($(grep -o 'step_overs=[0-9]*' <<< "$stat"))" \
    bash -c "test '${pcount:-0}' = '${count:-x}' && grep -q ' step_overs=0 ' <<< '$stat'"
  common count
fi

# ---- shstk: a user probe on a RET in a process with a CET shadow stack (tests/guest/shstk-user.c):
# the RET must run on the CPU (an emulated one leaves the shadow stack a frame deep: #CP at the
# caller's return). Not in the default runs: make test-cet runs it.
if [[ " $RUNS " == *" shstk "* ]]; then
  run shstk 'addr:pid@PID@:@FN@:'
  cons=$(tr -d '\r' < "$OUT/shstk.console" 2>/dev/null)
  scount=$(awk '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 ~ /^addr:pid/ { print $3 }' "$OUT/shstk.out" 2>/dev/null)
  grep -a "shstk:\|probe-user:" <<< "$cons"
  check "shstk: the process runs with its shadow stack on" grep -q "^shstk: enabled" <<< "$cons"
  check "shstk: the probe on the RET fired for every call: ${scount:-none}, want $((N + 1)) (N + the call that showed it armed)" \
    test "${scount:-0}" = $((N + 1))
  check "shstk: every call returned right through its caller, no #CP" \
    bash -c "grep -q 'probe-net: workload done calls=$N ok' <<< '$cons' && ! tr -d '\r' < '$R/serial.log' | grep -aqi 'control protection'"
  common shstk
fi

# ---- profile: profile-997 over md5sum, stacks unwound on the host, a flame graph
if [[ " $RUNS " == *" profile "* ]]; then
  run profile "profile:::profile-997,addr:kernel:ksys_read+$((5 + SHIFT)):,addr:kernel:ksys_read+$((17 + SHIFT)):" -q \
    --ustack --folded "$OUT/profile.folded" --flame "$OUT/profile.svg"
  F="$OUT/profile.folded"
  tot() { awk -v re="$1" '$0 ~ re { s += $NF } END { print s + 0 }' "$F" 2>/dev/null; }
  all=$(tot '.'); md5=$(tot '^md5sum;'); md5user=$(tot '^md5sum;\[user\]( |;0x)'); md5sys=$(tot '^md5sum;\[user\];entry_SYSCALL')
  md5read=$(tot '^md5sum;\[user\];entry_SYSCALL.*;(ksys_read|vfs_read)(;| )')
  echo "test-profile: samples=$all md5sum=$md5 user=$md5user syscalls=$md5sys under read=$md5read"
  grep '^md5sum;' "$F" 2>/dev/null | sort -t' ' -k2 -nr | head -5 | cut -c1-200
  check "profile: $all samples received ($(grep -c . "$F" 2>/dev/null) distinct stacks)" \
    bash -c "test $all -ge 100"
  check "profile: md5sum has samples ($md5), most of them hashing in user mode ($md5user)" \
    bash -c "test $md5 -ge 20 && test $((md5user * 2)) -ge $md5"
  # what md5sum's system calls did: the frame below do_syscall_64 (the dispatcher skipped)
  top=$(awk '/^md5sum;\[user\];entry_SYSCALL_64[a-z_]*;do_syscall_64;/ {
           split($1, f, ";"); k = f[5]; if (k == "x64_sys_call" && f[6] != "") k = f[6]
           if (k == "__x64_sys_read") k = "ksys_read"; c[k] += $NF }
         END { for (k in c) print c[k], k }' "$F" 2>/dev/null | sort -nr | head -3 | paste -sd, -)
  echo "test-profile: md5sum's system calls by function: $top"
  check "profile: md5sum's system-call samples unwind from entry_SYSCALL_64 and sit mostly under read ($md5read of $md5sys; top: ${top%%,*})" \
    bash -c "test $md5sys -ge 1 && test $((md5read * 10)) -ge $((md5sys * 6)) && grep -q ' ksys_read$' <<< '${top%%,*}'"
  # user stacks by frame pointers: probe-ustack's samples, their addresses named with its symbols
  ubin="$BUILD/test/guest/probe-ustack"
  uchain=$(python3 - "$F" "$ubin" <<'PY' 2>&1
import bisect, collections, subprocess, sys
syms = sorted((int(a, 16), n) for a, t, n in (l.split()[:3] for l in subprocess.run(
    ["nm", sys.argv[2]], capture_output=True, text=True).stdout.splitlines() if len(l.split()) == 3)
    if t in "tTwW")
def name(a):
    i = bisect.bisect_right([s[0] for s in syms], a) - 1
    return syms[i][1] if i >= 0 else "?"
count = collections.Counter()
for line in open(sys.argv[1]):
    stack, n = line.rsplit(" ", 1)
    f = stack.split(";")
    if f[:2] == ["probe-ustack", "[user]"] and len(f) > 2 and f[2].startswith("0x"):
        count[";".join(name(int(a, 16)) for a in f[2:])] += int(n)
print(count.most_common(1)[0][0] + ";" if count else "none")
PY
)
  echo "test-profile: probe-ustack's commonest user stack: $uchain"
  check "profile: probe-ustack's user stacks unwind by frame pointers (top: ${uchain:-none})" \
    grep -q 'main;ustack_outer;ustack_middle;ustack_inner;$' <<< "$uchain"
  "$HVT" analyze --vmlinuz "$VMLINUZ" --view profile --ustack -o "$OUT/profile-dir.folded" "$OUT/coll/current" 2>&1 | tail -1
  "$HVT" analyze --vmlinuz "$VMLINUZ" --view flame --ustack -o "$OUT/profile-dir.svg" "$OUT/coll/current" 2>/dev/null
  check "profile: hvt analyze --view profile on the stored samples gives the live run's folded stacks" \
    cmp "$OUT/profile-dir.folded" "$F"
  check "profile: hvt analyze --view flame draws the same graph" cmp "$OUT/profile-dir.svg" "$OUT/profile.svg"
  # the same samples in speedscope's format: valid against speedscope's own schema, and the
  # same stacks and counts (tests/analyze/export_checks.py, readers: export-readers.sh)
  "$HVT" export --speedscope --vmlinuz "$VMLINUZ" --ustack -o "$OUT/profile-dir.speedscope" "$OUT/coll/current" 2>/dev/null
  NM=$(bash tests/analyze/export-readers.sh) &&
    /usr/bin/python3 tests/analyze/export_checks.py speedscope "$OUT/profile-dir.speedscope" \
      "$NM/speedscope/dist/release/file-format-schema.json" "$F" > "$OUT/profile-dir.speedscope.checks" 2>&1
  check "profile: hvt export --speedscope writes the stored samples in speedscope's format (its schema; samples x weights = the folded stacks)" \
    test $? = 0
  ssw=$(NODE_PATH="$NM" node tests/analyze/export_read.js speedscope "$NM/speedscope/dist/release" \
          "$OUT/profile-dir.speedscope" 2>&1 | awk '$1 == "weight" { w = $2 } $1 == "warnings" { n = $2 } END { print w + 0, n + 0 }')
  check "profile: speedscope's own importer weighs that file at the $all samples, without a warning (${ssw:-nothing})" \
    test "$ssw" = "$all 0"
  # ksys_read+5 is PUSH r13 and +17 SUB $0x10,%rsp: emulated at every read md5sum makes
  stat=$(grep -a '^HVT-PROBESTAT' "$OUT/profile.e9" 2>/dev/null | tail -1)
  pushes=$(awk -v p="addr:kernel:ksys_read+$((5 + SHIFT)):" '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 == p { print $3 }' "$OUT/profile.out" 2>/dev/null)
  subs=$(awk -v p="addr:kernel:ksys_read+$((17 + SHIFT)):" '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 == p { print $3 }' "$OUT/profile.out" 2>/dev/null)
  sum=$(( PROFILE_MB << 20 )); zeros=$(head -c "$sum" /dev/zero | md5sum | cut -d' ' -f1)
  check "profile: push and sub probes on ksys_read fired (${pushes:-0}, ${subs:-0}) and resumed in their exits ($(grep -o 'step_overs=[0-9]*' <<< "$stat")); md5sum still right" \
    bash -c "test '${pushes:-0}' -gt 0 && test '${pushes:-0}' = '${subs:-x}' && grep -q ' step_overs=0 ' <<< '$stat' && grep -q '$zeros  /tmp/data' '$OUT/profile.console'"
  check "profile: the flame graph is well-formed SVG showing md5sum" \
    python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(0 if 'md5sum' in d.toxml() else 1)" "$OUT/profile.svg"
  common profile
fi
# ---- dstack: stack() and ustack() as aggregation keys, against the sample path's stacks
if [[ " $RUNS " == *" dstack "* ]]; then
  # (getpid: the guest's polls, which tell it the host armed and, later, disarmed)
  # what the collector stored before this run (the profile run's samples): left out below
  "$HVT" analyze --vmlinuz "$VMLINUZ" --view profile -o "$OUT/dstack-before.folded" "$OUT/coll/current" >/dev/null 2>&1 ||
    : > "$OUT/dstack-before.folded"
  btot=$(awk '{ s += $NF } END { print s + 0 }' "$OUT/dstack-before.folded" 2>/dev/null)
  run dstack 'profile-997 { @k[stack()] = count(); } profile-997 /execname == "probe-ustack"/ { @u[ustack()] = count(); }
    syscall::getpid:entry { @polls = count(); }' \
    --samples --folded "$OUT/dstack.folded" --flame "$OUT/dstack.svg"
  F="$OUT/dstack.folded"
  dtot=$(awk '{ s += $NF } END { print s + 0 }' "$F" 2>/dev/null)
  # the sample path's folding of the same firings (its records may still be on their way)
  for _ in $(seq 60); do
    "$HVT" analyze --vmlinuz "$VMLINUZ" --view profile -o "$OUT/dstack-samples.folded" "$OUT/coll/current" >/dev/null 2>&1
    stot=$(awk -v b="${btot:-0}" '{ s += $NF } END { print s - b }' "$OUT/dstack-samples.folded" 2>/dev/null)
    [ "${stot:-0}" -ge "${dtot:-1}" ] && break
    sleep 1
  done
  echo "test-dstack: $dtot samples aggregated by D, $stot sampled; commonest stacks:"
  sort -t' ' -k2 -nr "$F" 2>/dev/null | head -5 | cut -c1-200
  # the sample path's lines without the process name, cut to the 20 frames stack() keeps (a
  # stack cut there cannot say it reached user space), added up as the aggregation does
  cmp_out=$(python3 - "$OUT/dstack-samples.folded" "$F" "$OUT/dstack-before.folded" <<'PY' 2>&1
import collections, sys
def load(path, drop_comm):
    c = collections.Counter()
    for line in open(path):
        stack, n = line.rstrip("\n").rsplit(" ", 1)
        f = stack.split(";")[1 if drop_comm else 0:]
        user = f[:1] == ["[user]"]
        k = f[1:] if user else f
        if drop_comm and len(k) >= 20:
            k, user = k[-20:], False
        c[";".join((["[user]"] if user else []) + k)] += int(n)
    return c
s, d = load(sys.argv[1], True) - load(sys.argv[3], True), load(sys.argv[2], False)
diff = [(k, s[k], d[k]) for k in sorted(set(s) | set(d)) if s[k] != d[k]]
print("%d stacks, %d differ" % (len(d), len(diff)))
for k, a, b in diff[:5]:
    print("  sampled %d, D %d: %s" % (a, b, k[-160:]))
PY
)
  echo "test-dstack: folded from D vs the sample path: $cmp_out"
  check "dstack: D aggregated $dtot samples, the sample path recorded the same firings ($stot)" \
    bash -c "test '${dtot:-0}' -gt 100 && test '${dtot:-0}' = '${stot:-x}'"
  check "dstack: the folded stacks of @[stack()] equal the sample path's folding of the same samples ($cmp_out)" \
    grep -q ' 0 differ$' <<< "$(head -1 <<< "$cmp_out")"
  nread=$(grep -v '^\[user\] ' "$F" 2>/dev/null | sort -t' ' -k2 -nr | head -10 | grep -cE ';(ksys_read|vfs_read)(;| )')
  check "dstack: the commonest kernel stacks name the read path ($nread of the top 10 under ksys_read/vfs_read)" \
    test "${nread:-0}" -ge 1
  check "dstack: the aggregation printed as dtrace does: frames indented 14, e.g. vmlinux\`ksys_read+0x..." \
    grep -qE '^ {14}vmlinux`ksys_read\+0x[0-9a-f]+$' "$OUT/dstack.out"
  # @u: probe-ustack's commonest user stack (printed leaf first), named with its symbols
  ubin="$BUILD/test/guest/probe-ustack"
  uorder=$(python3 - "$OUT/dstack.out" "$ubin" <<'PY' 2>&1
import bisect, re, subprocess, sys
syms = sorted((int(a, 16), n) for a, t, n in (l.split()[:3] for l in subprocess.run(
    ["nm", sys.argv[2]], capture_output=True, text=True).stdout.splitlines() if len(l.split()) == 3)
    if t in "tTwW")
def name(a):
    i = bisect.bisect_right([s[0] for s in syms], a) - 1
    return syms[i][1] if i >= 0 else "?"
best = None
for m in re.finditer(r"((?: {14}0x[0-9a-f]+\n)+) +(\d+)\n", open(sys.argv[1]).read()):
    pcs = [int(x, 16) for x in m.group(1).split()]
    if best is None or int(m.group(2)) > best[1]:
        best = (pcs, int(m.group(2)))
print(";".join(name(a - (i > 0)) for i, a in enumerate(best[0])) if best else "none")
PY
)
  echo "test-dstack: probe-ustack's commonest @[ustack()] key, leaf first: $uorder"
  check "dstack: @[ustack()] names probe-ustack's functions in call order (${uorder:0:100})" \
    grep -q '^ustack_inner;ustack_middle;ustack_outer;main;' <<< "$uorder;"
  check "dstack: the flame graph from the aggregation is well-formed SVG showing ksys_read" \
    python3 -c "import sys, xml.dom.minidom as m; d = m.parse(sys.argv[1]); sys.exit(0 if 'ksys_read' in d.toxml() else 1)" "$OUT/dstack.svg"
  check "dstack: exit 0, nothing lost or dropped ($(grep -hE 'lost|drop|error' "$OUT/dstack.err" | head -2 | tr '\n' ' '))" \
    bash -c "test \"\$(cat '$OUT/dstack.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive|error' '$OUT/dstack.err'"
  stat=$(grep -a '^HVT-PROBESTAT' "$OUT/dstack.e9" 2>/dev/null | tail -1)
  check "dstack: after the disarm every page is restored, the guest ended the run" \
    bash -c "grep -q 'armed=0 ' <<< '$stat' && grep -q '^suite: dstack status 0' '$OUT/dstack.console'"
fi

# ---- d: a D program on the same workload: aggregations, thread-locals, printf, predicates
if [[ " $RUNS " == *" d "* ]]; then
  tail -n +2 tests/d/programs/probe-net.d > "$OUT/d.d"    # without its /* vm: */ line
  run d "$(cat "$OUT/d.d")" -q
  cat "$OUT/d.out"
  want=$(( CPUS * N ))
  check "d: the workload ran (status ok)" \
    grep -q "probe-net: workload done calls=$N cpus=$CPUS ok" "$OUT/d.console"
  check "d: @calls[getppid] = $want (CPUs x N)" \
    bash -c "awk '\$1 == \"getppid\" && \$2 == $want' '$OUT/d.out' | grep -q ."
  check "d: @percpu: $N on each CPU" \
    bash -c "test \"\$(awk 'NF == 2 && \$1 ~ /^[01]\$/ && \$2 == $N' '$OUT/d.out' | wc -l)\" = $CPUS"
  qsum=$(awk '/Distribution/ { t = 1; next } t && /\|/ { s += $NF } t && !/\|/ { t = 0 } END { print s + 0 }' "$OUT/d.out")
  check "d: every entry's thread-local met its return: quantize of the latency holds $qsum, want $want" \
    test "$qsum" = "$want"
  check "d: printf with predicates: 3 getpriority(7ac1, 7ac2) by probe-net, 3 returned -22 errno 22" \
    bash -c "test \$(grep -cx 'getpriority(7ac1, 7ac2) by probe-net' '$OUT/d.out') = 3 && test \$(grep -cx 'getpriority returned -22 errno 22' '$OUT/d.out') = 3"
  # ustack(): each record's frames (14 spaces, an address) are user addresses inside
  # probe-net's static text: the first one right after its syscall instruction
  PNB="$BUILD/test/guest/probe-net"
  read -r ta tsz < <(readelf -SW "$PNB" 2>/dev/null | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 2), $(i + 4) }')
  tlo=$((0x${ta:-1})); thi=$((0x${ta:-0} + 0x${tsz:-0}))
  nus=$(grep -c '^ustack:' "$OUT/d.out")
  frames=$(grep -E '^ {14}0x[0-9a-f]+$' "$OUT/d.out" | tr -d ' ')
  nfr=$(echo "$frames" | grep -c . ); nin=0; nsys=0
  for f in $frames; do
    a=$((f)); (( a >= tlo && a < thi )) && nin=$((nin + 1))
  done
  firsts=$(awk '/^ustack:/ { getline; gsub(/ /, ""); print }' "$OUT/d.out")
  for f in $firsts; do
    b=$(objdump -d --start-address=$((f - 2)) --stop-address=$((f)) "$PNB" 2>/dev/null | grep -c 'syscall')
    [ "$b" -ge 1 ] && nsys=$((nsys + 1))
  done
  check "d: ustack() at getpriority: $nus stacks, $nfr frames, $nin inside probe-net's text, $nsys first frames right after a syscall instruction" \
    bash -c "test '$nus' = 3 && test '$nfr' -ge 3 && test '$nin' = '$nfr' && test '$nsys' = 3"
  # ppid, uid, gid through the kernel's types (curthread->real_parent->tgid, ->cred->uid/gid)
  # against what probe-net says of itself; walltimestamp against this host's clock
  self_ids=$(tr -d '\r' < "$OUT/d.console" 2>/dev/null | sed -n 's/^probe-net: waiting for the host to arm (\(.*\))$/\1/p' | head -1)
  d_ids=$(sed -n 's/^ids: //p' "$OUT/d.out" | sort -u)
  check "d: pid, ppid, uid, gid in D ($d_ids) = probe-net's own ($self_ids), 3 times" \
    bash -c "test -n '$self_ids' && test '$d_ids' = '$self_ids' && test \$(grep -c '^ids: ' '$OUT/d.out') = 3"
  wall=$(sed -n 's/^wall: //p' "$OUT/d.out"); hostnow=$(date +%s)
  check "d: walltimestamp at BEGIN ($wall) within the run's time on this host (<= $hostnow, > $((hostnow - 900)))" \
    bash -c "test -n '$wall' && test '$wall' -le '$hostnow' && test '$wall' -gt $((hostnow - 900))"
  check "d: exit 0, nothing lost or dropped ($(grep -hE 'lost|drop|error' "$OUT/d.err" | head -2 | tr '\n' ' '))" \
    bash -c "test \"\$(cat '$OUT/d.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive|error' '$OUT/d.err'"
  check "d: no record on port 0xE9 (they went over the link)" \
    bash -c "! grep -aq '^HVT-D' '$OUT/d.e9'"
  stat=$(grep -a '^HVT-PROBESTAT' "$OUT/d.e9" 2>/dev/null | tail -1)
  check "d: after the disarm every page is restored: ${stat:0:60}" \
    bash -c "grep -q 'armed=0 ' <<< '$stat' && grep -q ' shown=0 ' <<< '$stat'"
  check "d: the guest saw the disarm and ended the run" \
    bash -c "grep -q 'probe-net: disarmed, exiting' '$OUT/d.console' && grep -q '^suite: d status 0' '$OUT/d.console'"
fi
# ---- dwork: D programs measuring a workload that knows its own counts (tests/guest/d-work.c)
if [[ " $RUNS " == *" dwork "* ]]; then
  tail -n +2 tests/d/programs/d-work.d > "$OUT/dwork.d"  # without its /* vm: */ line
  run dwork "$(cat "$OUT/dwork.d")"
  O="$OUT/dwork.out"; E="$OUT/dwork.err"; C="$OUT/dwork.console"
  cat "$O" | grep -v '^ *[0-9]* *[0-9]* *vfs_read:entry *$' | grep -v '`' | head -60; cat "$E"
  grep -a 'd-work:' "$C"
  check "dwork: the workload ran and checked itself (ok)" grep -aq "probe-net: workload done calls=800 ok" "$C"
  agg1() { awk -v k="$1" '$1 == k && NF == 2 { print $2 }' "$O"; }
  check "dwork: per-process counts: dw-one $(agg1 dw-one) of 300, dw-two $(agg1 dw-two) of 500" \
    bash -c "test '$(agg1 dw-one)' = 300 && test '$(agg1 dw-two)' = 500"
  kp=$(sed -n 's/.*d-work: getppid .* kprobe=\([0-9]*\).*/\1/p' "$C" | tr -d '\r')
  fbt=$(awk '/^ +[0-9]+$/ { print $1 }' "$O" | sed -n 2p)
  check "dwork: fbt::__x64_sys_getppid:entry count 800 = the guest's own kprobe hits (${kp:-none})" \
    bash -c "test '${kp:-x}' = 800 && test '${fbt:-x}' = 800"
  qgot=$(awk '/Distribution/ { t = 1; next } t && /\|/ { gsub(/\|[@ ]*/, " "); if ($2 > 0) printf "%s:%s ", $1, $2; next } t && !/\|/ { t = 0 }' "$O" | sed 's/ $//')
  # the workload's reads: 1 x 10, 100 x 20, 5000 x 5, 70000 x 3, and two 8-byte reads of the
  # kprobe counts its reader child hands back
  check "dwork: quantize(read size) = the sizes used: $qgot (want 1:10 8:2 64:20 4096:5 65536:3)" \
    test "$qgot" = "1:10 8:2 64:20 4096:5 65536:3"
  # single-value aggregations print in their order: @polls, @fbt, @latmin, @latmax
  one=($(awk '/^ +[0-9]+$/ { print $1 }' "$O"))
  check "dwork: self-> latency of read (entry to return): min ${one[2]:-?} ns, max ${one[3]:-?} ns: positive, bounded (< 1 s)" \
    bash -c "test ${#one[@]} = 4 && test ${one[2]:-0} -gt 0 && test ${one[2]:-0} -le ${one[3]:-0} && test ${one[3]:-0} -lt 1000000000"
  for pth in "/tmp/dw-a 1" "/tmp/dw-bb 2" "/tmp/dw-ccc 3"; do
    check "dwork: copyinstr of openat's path: ${pth% *} counted ${pth#* }" \
      bash -c "awk '\$1 == \"${pth% *}\" && \$2 == ${pth#* }' '$O' | grep -q ."
  done
  ninv=$(grep -c 'invalid address' "$E")
  check "dwork: NULL (3), a user pointer (5) and an unmapped kernel address (3): 11 'invalid address' errors ($ninv)" \
    bash -c "test \$(grep -c 'invalid address (0x0)' '$E') = 3 && test \$(grep -c 'invalid address (0xffff800000001000)' '$E') = 3 && test \$(grep -c 'invalid address (0x[0-7][0-9a-f]\{1,11\})' '$E') = 5 && test $ninv = 11"
  # stack(): every frame's return address follows a call instruction in the image
  frames=$(grep -o 'vmlinux`[A-Za-z0-9_.]*+0x[0-9a-f]*' "$O" | sed 's/vmlinux`//' | sort -u)
  nst=$(grep -c 'vfs_read:entry' "$O")
  bad=0; nf=0
  for f in $frames; do nf=$((nf + 1)); "$HVT" syms "$VMLINUZ" --call-before "$f" >/dev/null || { bad=$((bad + 1)); echo "not after a call: $f"; }; done
  check "dwork: stack() at vfs_read: 20 stacks, $nf distinct return addresses, each right after a call ($bad not)" \
    bash -c "test $nst = 20 && test $nf -ge 2 && test $bad = 0"
  check "dwork: exit 0, nothing lost" \
    bash -c "test \"\$(cat '$OUT/dwork.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$E'"
  check "dwork: the guest saw the disarm and ended the run" \
    bash -c "grep -aq 'probe-net: disarmed, exiting' '$C' && grep -aq '^suite: dwork status 0' '$C'"
fi
# ---- forks: processes forked and exited back to back: each firing's pid is its own process's
if [[ " $RUNS " == *" forks "* ]]; then
  run forks 'syscall::getpid:entry { @polls = count(); } syscall::getppid:entry /execname == "fork-pid"/ { printf("fp pid=%d tid=%d\n", pid, tid); }' -q -x probecost
  kids=$(sed -n 's/^fork-pids: child pid=\([0-9]*\)$/\1/p' "$OUT/forks.console" | sort -n | tr '\n' ' ')
  seen=$(sed -n 's/^fp pid=\([0-9]*\) tid=[0-9]*$/\1/p' "$OUT/forks.out" | sort -n | tr '\n' ' ')
  same=$(awk '/^fp pid=/ { split($2, a, "="); split($3, b, "="); n += a[2] == b[2] } END { print n + 0 }' "$OUT/forks.out")
  check "forks: 20 children forked and exited back to back, each seen with its own pid (D: ${seen:-none}; the children: ${kids:-none}), tid = pid ($same)" \
    bash -c "test \$(wc -w <<< '$kids') = 20 && test '$seen' = '$kids' && test '$same' = 20"
  # -x probecost: the hypervisor timed every firing by phase; hvt printed it at the end
  pc=$(sed -n 's/^hvt: \([0-9]*\) firings timed, \([0-9]*\) ticks taken from the guest in all$/\1 \2/p' "$OUT/forks.err")
  rows=$(awk '/^hvt: probe effect/ { on = 1; next } on && /^hvt: / { on = 0 } on && $1 ~ /^[0-9]+$/ && $2 > 0 && $NF > 0 { n++ } END { print n + 0 }' "$OUT/forks.err")
  check "forks: -x probecost: $rows probe(s) with firings timed by phase, ${pc:-none} (firings, ticks) in all" \
    bash -c "test '$rows' -ge 1 && test '${pc%% *}' -gt 0 2>/dev/null && test '${pc##* }' -gt 0"
  check "forks: exit 0, nothing lost; the guest saw the disarm and ended the run" \
    bash -c "test \"\$(cat '$OUT/forks.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$OUT/forks.err' && grep -q 'probe-net: disarmed, exiting' '$OUT/forks.console' && grep -q '^suite: forks status 0' '$OUT/forks.console'"
fi
# ---- sdt: static tracepoints against the workload's own counts
if [[ " $RUNS " == *" sdt "* ]]; then
  tail -n +2 tests/d/programs/sdt-work.d > "$OUT/sdt.d"    # without its /* vm: */ line
  run sdt "$(cat "$OUT/sdt.d")" -q
  O="$OUT/sdt.out"; C="$OUT/sdt.console"
  cat "$O"; grep -a 'sdt-work:' "$C"
  said=$(tr -d '\r' < "$C" | sed -n 's/^sdt-work: kids=\([0-9]*\) nvcsw=\([0-9]*\) .*/\1 \2/p' | head -1)
  kids=${said% *}; nv=${said#* }
  got() { awk -v k="$1" '$1 == "sdt" && $2 == k { print $3 }' "$O"; }
  check "sdt: the workload ran, with the guest's own ftrace on the same tracepoints for half of it (its buffer: $(grep -ao 'ftrace_execs=[0-9]*' "$C"), want 10)" \
    grep -aq "probe-net: workload done calls=20 ok" "$C"
  check "sdt: sched_process_fork $(got fork) = the workload's forks ($(( ${kids:-0} + 1 )): $kids children and a pipe partner)" \
    test "$(got fork)" = "$(( ${kids:-0} + 1 ))"
  check "sdt: sched_process_exec $(got exec) = its execs ($kids), old_pid (args[1]) = pid" test "$(got exec)" = "${kids:-x}"
  check "sdt: sched_process_exit $(got exit) = its children's exits ($kids)" test "$(got exit)" = "${kids:-x}"
  check "sdt: sched_switch with prev_state set, not preempted, prev (args[1]) itself, next another: $(got vol) = its voluntary switches (getrusage: ${nv:-?})" \
    test "$(got vol)" = "${nv:-x}"
  check "sdt: sched_wakeup of it: $(got wake) = its voluntary switches (${nv:-?})" test "$(got wake)" = "${nv:-x}"
  check "sdt: sched_switch's args[1] (prev) is the running task every time ($(got badprev) not)" test -z "$(got badprev)"
  nc=$(tr -d '\r' < "$C" | sed -n 's/^sdt-work: .* conns=\([0-9]*\) .*/\1/p' | head -1)
  est=$(awk '$1 == "sdt" && $2 == "est" { printf "%s:%s ", $3, $4 }' "$O" | sed 's/ $//')
  check "sdt: inet_sock_set_state to ESTABLISHED on its loopback connections, by the state left: $est (want 2:${nc:-?} 3:${nc:-?}: each client from SYN_SENT, each server end from SYN_RECV)" \
    test "$est" = "2:${nc:-x} 3:${nc:-x}"
  # the engine's counters run from its start: this run's are its last line's less its first's
  # (the one logged when the program was armed)
  rd=($(grep -a '^HVT-PROBESTAT' "$OUT/sdt.e9" | sed -n '1p;$p' | grep -o 'redecodes=[0-9]*' | cut -d= -f2))
  check "sdt: the guest's ftrace patched the probed sites (NOP to JMP and back) and the engine followed: $(( ${rd[1]:-0} - ${rd[0]:-0} )) probes decoded again" \
    test "$(( ${rd[1]:-0} - ${rd[0]:-0} ))" -gt 0
  check "sdt: exit 0, nothing lost; the guest saw the disarm and ended the run" \
    bash -c "test \"\$(cat '$OUT/sdt.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$OUT/sdt.err' && grep -q 'probe-net: disarmed, exiting' '$C' && grep -q '^suite: sdt status 0' '$C'"
fi
# ---- stable: DTrace's proc and sched providers against the workload's own counts and clock
if [[ " $RUNS " == *" stable "* ]]; then
  tail -n +2 tests/d/programs/stable-work.d > "$OUT/stable.d"    # without its /* vm: */ line
  run stable "$(cat "$OUT/stable.d")" -q
  O="$OUT/stable.out"; C="$OUT/stable.console"
  cat "$O"; grep -a 'stable-work:' "$C"
  said() { tr -d '\r' < "$C" | sed -n "s/^stable-work: pid=.* $1=\([0-9]*\).*/\1/p" | head -1; }
  got() { awk -v k="$1" '$1 == "stable" && $2 == k { print $NF }' "$O" | head -1; }
  forks=$(said forks); execs=$(said execs); fails=$(said execfail); exits=$(said exits); wcpu=$(said cpu_ns)
  want=$(tr -d '\r' < "$C" | sed -n 's/^stable-work: psargs //p')
  gotps=$(sed -n 's/^stable psargs //p' "$O")
  check "stable: proc:::exec-success's curpsinfo->pr_psargs are the argument lists the workload exec'ed, in order ($(echo "$want" | wc -l) lists: $(echo "$want" | tr '\n' '|'))" \
    test -n "$want" -a "$gotps" = "$want"
  check "stable: proc:::exec-success's pr_fname stable-kid for each (${execs:-?}): $(awk '$2 == "fname" { printf "%s ", $0 }' "$O")" \
    test "$(awk '$2 == "fname" && $3 == "stable-kid" { print $4 }' "$O")" = "${execs:-x}"
  check "stable: proc:::create $(got create) = the workload's forks (${forks:-?}), each child's pr_ppid the workload's ($(awk '$2 == "create_parent" { printf "%s:%s ", $3, $4 }' "$O"))" \
    bash -c "test '$(got create)' = '${forks:-x}' && test '$(awk '$2 == "create_parent" && $3 == 1 { print $4 }' "$O")' = '${forks:-x}'"
  check "stable: proc:::start $(got start) = its forks (${forks:-?})" test "$(got start)" = "${forks:-x}"
  check "stable: proc:::exec args[0] /bin/stable-kid ${execs:-?} and /bin/no-such-program ${fails:-?} times, no error: $(awk '$2 == "exec" { printf "%s:%s ", $3, $4 }' "$O")" \
    bash -c "test '$(awk '$2 == "exec" && $3 == "/bin/stable-kid" { print $4 }' "$O")' = '${execs:-x}' && test '$(awk '$2 == "exec" && $3 == "/bin/no-such-program" { print $4 }' "$O")' = '${fails:-x}' && ! grep -q 'error on enabled probe' '$OUT/stable.err'"
  check "stable: proc:::exec-failure once (${fails:-?}), args[0] -2 (ENOENT: $(awk '$2 == "execfail" { printf "%s:%s ", $3, $4 }' "$O"))" \
    test "$(awk '$2 == "execfail" && $3 == -2 { print $4 }' "$O")" = "${fails:-x}"
  check "stable: proc:::exit $(awk '$2 == "exit" { s += $4 } END { print s + 0 }' "$O") = its children's exits (${exits:-?}), each CLD_EXITED (args[0] 1)" \
    test "$(awk '$2 == "exit" && $3 == 1 { print $4 }' "$O")" = "${exits:-x}"
  # timestamp is nanoseconds at the collector's tsc_khz (50000, NETCFG), the guest's clock at the
  # TSC rate its kernel took (CPUID's 3.5 GHz on Bochs; the workload measures it): both count the
  # same TSC, so the two are compared in TSC ticks
  dcpu=$(got cpu); gkhz=$(said tsc_khz)
  dt=$(awk -v d="${dcpu:-0}" 'BEGIN { printf "%.0f", d * 50000 / 1e6 }'); wt=$(awk -v w="${wcpu:-0}" -v k="${gkhz:-0}" 'BEGIN { printf "%.0f", w * k / 1e6 }')
  check "stable: sched:::on-cpu/off-cpu time of the workload between its markers, $dt TSC ticks (${dcpu:-?} ns at 50 MHz), within 5% of its own CLOCK_THREAD_CPUTIME_ID, $wt ticks (${wcpu:-?} ns at the guest's ${gkhz:-?} kHz) ($(got oncpu) on-cpu, $(got offcpu) off-cpu)" \
    awk -v d="$dt" -v w="$wt" 'BEGIN { exit !(w > 0 && d > 0 && (d - w < 0 ? w - d : d - w) <= 0.05 * w) }'
  check "stable: sched:::off-cpu's args[1] is the process coming on, never the one leaving ($(awk '$2 == "next_self" { printf "%s:%s ", $3, $4 }' "$O"))" \
    test -z "$(awk '$2 == "next_self" && $3 == 1' "$O")" -a -n "$(got offcpu)"
  pl=$(said pipe_locks)
  lacq=$(awk '$2 == "lacq" { printf "%s:%s ", $3, $4 }' "$O"); lrel=$(awk '$2 == "lrel" { printf "%s:%s ", $3, $4 }' "$O")
  check "stable: lockstat:::adaptive-acquire and adaptive-release between its lock markers: one mutex, ${pl:-?} times each (its pipe's: acquired $lacq, released $lrel)" \
    bash -c "test '$(awk '$2 == "lacq"' "$O" | wc -l)' = 1 && test '$lacq' = '$lrel' && test '$(awk '$2 == "lacq" { print $4 }' "$O")' = '${pl:-x}'"
  check "stable: exit 0, nothing lost; the guest saw the disarm and ended the run" \
    bash -c "test \"\$(cat '$OUT/stable.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$OUT/stable.err' && grep -q 'probe-net: disarmed, exiting' '$C' && grep -q '^suite: stable status 0' '$C'"
fi
# ---- modio: probes in a module loaded after arming, unloaded twice; bio byte totals
if [[ " $RUNS " == *" modio "* ]]; then
  MODDIR="${PROBE_MODULES:-$(dirname "$(bash tests/platform/fetch-kernel.sh)")/../lib/modules}"
  MODDIR=$(ls -d "$MODDIR"/*/ 2>/dev/null | head -1)
  tail -n +2 tests/d/programs/mod-work.d > "$OUT/modio.d"    # without its /* vm: */ line
  run modio "$(cat "$OUT/modio.d")" -q --modules "$MODDIR"
  O="$OUT/modio.out"; C="$OUT/modio.console"
  cat "$O"; grep -a 'mod-work:' "$C"
  said=$(tr -d '\r' < "$C" | sed -n 's/^mod-work: writes=\([0-9]*\) bytes=\([0-9]*\) rounds=[0-9]* loop_writes=\([0-9]*\) loop_bytes=\([0-9]*\) syncs=\([0-9]*\) .*null_writes=\([0-9]*\) null_resets=\([0-9]*\) null_report=\([0-9]*\) null_bytes=\([0-9]*\).*/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' | head -1)
  read -r nw nb lw lb ns zw zr zn zb <<< "$said"
  got() { awk -v k="$1" '$1 == "mod" && $2 == k { print $3 }' "$O"; }
  dev() { awk -v k="$1" -v d="$2" '$1 == "mod" && $2 == k && $3 == d { print $4 }' "$O"; }
  # at each load of a wanted module the hypervisor logs the sites it armed: brd's entry and
  # returns (twice), kyber's block_rq_insert site, null_blk's tracepoint sites (3
  # nullb_zone_op, 1 nullb_report_zones)
  loads=$(grep -ao 'module at .* loaded: [0-9]* probe site' "$OUT/modio.e9" | awk '{ print $(NF-2) }' | tr '\n' ' ')
  read -r l1 l2 l3 l4 l5 <<< "$loads"
  check "modio: brd loaded twice after arming, written and unloaded each time, loop and kyber once, null_blk once, the guest went on (workload ok; sites armed at the loads: ${loads:-none}: want brd's entry and its returns twice, kyber's block_rq_insert site, null_blk's 4 tracepoint sites)" \
    bash -c "grep -aq 'probe-net: workload done calls=${nw:-x} ok' '$C' && test -n '$l1' && test '$l1' = '${l2:-x}' && test '$l1' -gt 1 && test '${l3:-x}' = 1 && test '${l4:-x}' = 4 && test -z '$l5'"
  check "modio: sdt:block::block_rq_insert (the kernel's tracepoint) at its site in kyber's code (a module loaded after arming): loop0 $(dev rin loop0) requests $(dev rib loop0) bytes = its ${lw:-?} writes ${lb:-?} bytes" \
    test "$(dev rin loop0) $(dev rib loop0)" = "${lw:-x} ${lb:-x}"
  check "modio: a translator of the program's own (wbio_t < struct bio *B >) read by xlate at brd_submit_bio, from its args[0] typed by brd's own BTF: $(got tb) bytes written = the workload's ${nb:-?}" \
    test "$(got tb)" = "${nb:-x}"
  check "modio: sdt:nullb::nullb_zone_op's args[0]->rq->__data_len (struct nullb_cmd, null_blk's own type) summed: $(got zb) bytes = its zoned writes' ${zb:-?} (the resets move none)" \
    test "$(got zb)" = "${zb:-x}"
  check "modio: fbt:brd:brd_submit_bio:return fired $(got subr) times = its entries ($(( ${nw:-0} + 2 )): the return sites the hypervisor found at each load)" \
    test "$(got subr)" = "$(( ${nw:-0} + 2 ))"
  zops=$(awk '$1 == "mod" && $2 == "zop" { printf "%s:%s ", $3, $4 }' "$O")
  rzs=$(awk '$1 == "mod" && $2 == "rz" { printf "%s:%s ", $3, $4 }' "$O")
  check "modio: sdt:nullb::nullb_zone_op (null_blk's own tracepoint, loaded after arming) by zone: ${zops:-none}= its ${zw:-?} zoned writes + ${zr:-?} resets, all in zone 0" \
    test "$zops" = "0:$(( ${zw:-0} + ${zr:-0} )) "
  check "modio: sdt:nullb::nullb_report_zones by zones reported: ${rzs:-none}; its one BLKREPORTZONE of ${zn:-?} zones among them" \
    bash -c "grep -qw '${zn:-x}:1' <<< '$rzs'"
  check "modio: fbt:brd:brd_submit_bio:entry fired for $(got sub1) writes = the workload's (${nw:-?}: one bio each, both loads), and $(got sub0) reads (the kernel's partition scan at each load: 2)" \
    test "$(got sub1) $(got sub0)" = "${nw:-x} 2"
  check "modio: sdt block_bio_queue of its writes: ram0 $(dev qn ram0) bios $(dev qb ram0) bytes, loop0 $(dev qn loop0) bios $(dev qb loop0) bytes = the workload's (${nw:-?} ${nb:-?}, ${lw:-?} ${lb:-?})" \
    test "$(dev qn ram0) $(dev qb ram0) $(dev qn loop0) $(dev qb loop0)" = "${nw:-x} ${nb:-x} ${lw:-x} ${lb:-x}"
  check "modio: sdt block_bio_complete of its writes: ram0 $(dev cn ram0) bios $(dev cb ram0) bytes = ${nw:-?} ${nb:-?}; none on loop0 (blk-mq completes requests: $(dev cn loop0))" \
    test "$(dev cn ram0) $(dev cb ram0) $(dev cn loop0)" = "${nw:-x} ${nb:-x} "
  check "modio: sdt block_rq_issue/complete of loop0's writes: $(dev rqn loop0)/$(dev rcn loop0) requests, $(dev rqb loop0)/$(dev rcb loop0) bytes = ${lw:-?} writes, ${lb:-?} bytes (none on ram0: brd is bio-based: $(dev rqn ram0))" \
    test "$(dev rqn loop0) $(dev rcn loop0) $(dev rqb loop0) $(dev rcb loop0) $(dev rqn ram0)" = "${lw:-x} ${lw:-x} ${lb:-x} ${lb:-x} "
  check "modio: io:::start B_WRITE by dev_statname: ram0 $(dev isn ram0) bufs $(dev isb ram0) bytes, loop0 $(dev isn loop0) bufs $(dev isb loop0) bytes = the workload's (${nw:-?} ${nb:-?}, ${lw:-?} ${lb:-?})" \
    test "$(dev isn ram0) $(dev isb ram0) $(dev isn loop0) $(dev isb loop0)" = "${nw:-x} ${nb:-x} ${lw:-x} ${lb:-x}"
  check "modio: io:::done B_WRITE by dev_statname: ram0 $(dev idn ram0) bufs $(dev idb ram0) bytes (block_bio_complete), loop0 $(dev idn loop0) bufs $(dev idb loop0) bytes (block_rq_complete's bio) = the workload's" \
    test "$(dev idn ram0) $(dev idb ram0) $(dev idn loop0) $(dev idb loop0)" = "${nw:-x} ${nb:-x} ${lw:-x} ${lb:-x}"
  check "modio: io:::wait-start (submit_bio_wait: its synchronous O_DIRECT writes and its fsync()s' flushes): ram0 $(dev wsn ram0) bufs $(dev wsb ram0) bytes, loop0 $(dev wsn loop0) bufs $(dev wsb loop0) bytes (want $(( ${nw:-0} + ${ns:-0} )) ${nb:-?}, ${lw:-?} ${lb:-?})" \
    test "$(dev wsn ram0) $(dev wsb ram0) $(dev wsn loop0) $(dev wsb loop0)" = "$(( ${nw:-0} + ${ns:-0} )) ${nb:-x} ${lw:-x} ${lb:-x}"
  # at the return the bio is as its driver left it: brd copies the iterator (b_bcount intact),
  # blk-mq advances it as the request completes (b_bcount 0)
  check "modio: io:::wait-done, args[] from the bio its wait-start saw: ram0 $(dev wdn ram0) bufs $(dev wdb ram0) bytes, loop0 $(dev wdn loop0) bufs $(dev wdb loop0) bytes (want $(( ${nw:-0} + ${ns:-0} )) ${nb:-?}, ${lw:-?} 0: blk-mq advanced those bios to their end)" \
    test "$(dev wdn ram0) $(dev wdb ram0) $(dev wdn loop0) $(dev wdb loop0)" = "$(( ${nw:-0} + ${ns:-0} )) ${nb:-x} ${lw:-x} 0"
  check "modio: exit 0, nothing lost; the guest saw the disarm and ended the run" \
    bash -c "test \"\$(cat '$OUT/modio.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$OUT/modio.err' && grep -q 'probe-net: disarmed, exiting' '$C' && grep -q '^suite: modio status 0' '$C'"
fi
# ---- user: a probe on one process's function, on a text page it shares with its child
if [[ " $RUNS " == *" user "* ]]; then
  run user 'addr:pid@PID@:@FN@:,addr:probe-uchild:@FN@:'
  tail -4 "$OUT/user.out" 2>/dev/null
  cons=$(tr -d '\r' < "$OUT/user.console" 2>/dev/null)
  ucount=$(awk '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 ~ /^addr:pid/ { print $3 }' "$OUT/user.out" 2>/dev/null)
  ncount=$(awk '/^ID +PROBE +COUNT/ { t = 1; next } t && $2 ~ /^addr:probe-uchild:/ { print $3 }' "$OUT/user.out" 2>/dev/null)
  stat=$(grep -a '^HVT-PROBESTAT' "$OUT/user.e9" 2>/dev/null | tail -1)
  grep -a "probe-user:" <<< "$cons"
  late=$(sed -n "s/^probe-user: calls of the disarm wait that fired: \([0-9]*\)$/\1/p" <<< "$cons")
  check "user: the probe fired exactly for the parent's calls: ${ucount:-none}, want $((N + 1 + ${late:-0})) (N + the call that showed it armed + ${late:-?} calls of the disarm wait before the disarm)" \
    test "${ucount:-0}" = $((N + 1 + ${late:-0})) -a -n "$late"
  check "user: the probe by name fired exactly in the child so named: ${ncount:-none}, want $((N + 1)); the child counted its own $N" \
    bash -c "test '${ncount:-0}' = $((N + 1)) && grep -q 'probe-user: child probe-uchild ok (its $N calls: $N firings)' <<< '$cons'"
  check "user: the other child, sharing the page, ran its $N calls unprobed and right ($(grep -o 'other_space=[0-9]*' <<< "$stat"))" \
    bash -c "grep -q 'probe-user: child ok (its $N calls: 0 firings)' <<< '$cons' && ! grep -q ' other_space=0' <<< '$stat'"
  check "user: the process reads its own code unchanged" grep -q "own code read back the same" <<< "$cons"
  check "user: workload ok" grep -q "probe-net: workload done calls=$N ok" <<< "$cons"
  common user
fi

# ---- dcmd: hvt -c runs a command in the guest through the guest tool's agent: the command is
# held stopped at its exec until the probes are armed, $target is its pid, the run ends when it exits
if [[ " $RUNS " == *" dcmd "* ]]; then
  NC=3000
  RUN_READY="hvtrace-guest: agent ready" RUN_UNTIL=hvt \
    run dcmd \
    'syscall::getpid:entry { @[pid == $target ? "target" : "other"] = count(); }' \
    -q -c "/bin/getpid-loop $NC nomark"
  O="$OUT/dcmd.out"; E="$OUT/dcmd.err"; C="$OUT/dcmd.console"
  cat "$O" 2>/dev/null
  cpid=$(tr -d '\r' < "$C" 2>/dev/null | sed -n 's/^hvtrace-guest: agent: command [0-9]* is pid \([0-9]*\): .*/\1/p' | head -1)
  lpid=$(tr -d '\r' < "$C" 2>/dev/null | sed -n 's/^getpid-loop: start pid=\([0-9]*\).*/\1/p' | head -1)
  check "dcmd: the agent ran the command as pid ${cpid:-?}, the command says pid ${lpid:-?}, hvt said it exited" \
    bash -c "test -n '$cpid' && test '$cpid' = '$lpid' && grep -q 'hvt: pid $cpid has exited' '$E'"
  got=$(awk '$1 == "target" { print $2 }' "$O" 2>/dev/null)
  check "dcmd: pid == \$target counted the command's getpid calls exactly: ${got:-none}, want $((NC + 1)) ($NC and its own pid)" \
    test "${got:-0}" = "$((NC + 1))"
  check "dcmd: the run ended by itself with the command (exit 0), nothing lost; the agent ended" \
    bash -c "test \"\$(cat '$OUT/dcmd.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$E' && grep -aq '^suite: dcmd status 0' '$C'"
fi
# ---- dread: hvt -c of a command reading a known number of bytes (getpid-loop's read=B: reads
# of at most 4096 bytes, its only reads). At syscall::read:return arg0 is the return value, so
# sum(arg0) is the bytes read; $target's life starts at its exec, so its reads are its own
if [[ " $RUNS " == *" dread "* ]]; then
  NB=10000
  RUN_READY="hvtrace-guest: agent ready" RUN_UNTIL=hvt \
    run dread \
    'syscall::read:return /pid == $target/ { @ = sum(arg0); @sizes = quantize(arg0); }' \
    -q -c "/bin/getpid-loop 10 nomark read=$NB"
  O="$OUT/dread.out"; E="$OUT/dread.err"; C="$OUT/dread.console"
  cat "$O" 2>/dev/null
  said=$(tr -d '\r' < "$C" 2>/dev/null | sed -n 's/^getpid-loop: read \([0-9]*\) bytes in \([0-9]*\) reads$/\1 \2/p' | head -1)
  check "dread: the command read $NB bytes in 3 reads (it says: ${said:-nothing})" test "$said" = "$NB 3"
  got=$(awk '/^ +-?[0-9]+$/ { print $1 }' "$O" 2>/dev/null | head -1)
  check "dread: syscall::read:return /pid == \$target/ { @ = sum(arg0); } = the bytes read: ${got:-none}, want $NB" \
    test "${got:-x}" = "$NB"
  qgot=$(awk '/Distribution/ { t = 1; next } t && /\|/ { gsub(/\|[@ ]*/, " "); if ($2 > 0) printf "%s:%s ", $1, $2; next } t && !/\|/ { t = 0 }' "$O" | sed 's/ $//')
  check "dread: quantize(arg0) of \$target's reads = the command's own, from its exec: $qgot (want 1024:1 4096:2, no 1-byte read of the agent's)" \
    test "$qgot" = "1024:1 4096:2"
  check "dread: the run ended by itself with the command (exit 0), nothing lost; the agent ended" \
    bash -c "test \"\$(cat '$OUT/dread.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$E' && grep -aq '^suite: dread status 0' '$C'"
fi
# ---- dglobal: `jiffies through its address at the command's first read (of /proc/uptime): the
# guest's own jiffies, which started at INITIAL_JIFFIES (2^32 - 300 x HZ, HZ = 250 here) at boot
if [[ " $RUNS " == *" dglobal "* ]]; then
  RUN_READY="hvtrace-guest: agent ready" RUN_UNTIL=hvt \
    run dglobal \
    'int done; syscall::read:entry /pid == $target && !done/ { printf("jiffies %d\n", *(unsigned long *)&`jiffies); done = 1; }' \
    -q -c "/bin/head -n 1 /proc/uptime"
  O="$OUT/dglobal.out"; E="$OUT/dglobal.err"; C="$OUT/dglobal.console"
  cat "$O" 2>/dev/null
  j=$(sed -n 's/^jiffies \([0-9]*\)$/\1/p' "$O" | head -1)
  up=$(tr -d '\r' < "$C" 2>/dev/null | awk 'NF == 2 && $1 ~ /^[0-9]+\.[0-9]+$/ { print $1; exit }')
  check "dglobal: \`jiffies = INITIAL_JIFFIES + uptime x 250 within 0.1 s (jiffies ${j:-none}, uptime ${up:-none})" \
    awk -v j="${j:-0}" -v u="${up:--1}" 'BEGIN { d = (j - 4294892296) / 250 - u; exit !(u >= 0 && d > -0.1 && d < 0.1) }'
  check "dglobal: the run ended with the command, nothing lost" \
    bash -c "test \"\$(cat '$OUT/dglobal.rc')\" = 0 && ! grep -qE 'lost|drops|did not arrive' '$E'"
fi
# the end of the boot: the guest powers off after the last run, the collector finishes the file
wait "$BPID"
for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
awk -v a="$t_boot" -v b="$(date +%s.%N)" -v r="$RUNS" 'BEGIN { printf "test-probes-net: one boot for %s: %.0f s\n", r, b - a }'
echo "test-probes-net: Bochs ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s wall"
[[ " $RUNS " == *" dwork "* ]] && dwork_trace
check "every run ended ok ($(tr -d '\r' < "$D/console.log" 2>/dev/null | grep -a '^suite: ' | grep -v '^suite: run' | tr '\n' ' ')), then a clean power-off" \
  bash -c "tr -d '\r' < '$D/console.log' | grep -aqx 'suite: done' && [ \"\$(cat '$R/end' 2>/dev/null)\" = poweroff ]"
echo "test-probes-net: $pass passed, $fail failed"
[ "$fail" = 0 ]
