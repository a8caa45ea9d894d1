#!/usr/bin/env bash
# test-trace-net.sh - the trace streamed over the dedicated link, end to end in Bochs:
# the hypervisor sends every trace chunk as an HVT_MSG_TRACE batch through its own e1000 to
# hvtrace-collector on this host, which writes trace.hvt live; nothing goes to port 0xE9.
#
# Run A (marks, the oracle Bochs): getpid-loop 1000 between two hvtrace marks, as test-trace.
#   The collector's trace.hvt is judged by tests/trace/check-trace.sh exactly like the imported
#   one of test-trace: workload status 0, clean power-off, hvt-check violations=0 (and no gap),
#   the workload CPU's record count == the Bochs oracle's instruction count, >= 1000 getpid calls
#   in the nesting view. Also: no HVT-CHUNK line on port 0xE9, the file is finished (footer), no
#   stream gap, no refused batch, the directory verifies (trace.hvt == what its messages make).
# Run B (host-driven): getpid-loop N nomark runs; when its start line reaches the collector's
#   console.log, `hvt trace start --kernel-only --regs B_REGS` (a register set: REGS mode); when the collector has received TRACE_NET_HOST_INSNS
#   instructions, `hvt trace stop -o host.hvt` (waits for every window to close). Checks: stop
#   finished in time, the copy passes hvt-check (violations=0, no gap), holds >= 100 getpid calls
#   of the workload (nesting view), START/STOP on every CPU that started, the workload ran on
#   after the stop (status 0), and nothing was traced after the stop (the collector's file at
#   power-off == the copy taken at the stop).
# Run C (link failure): getpid-loop N between marks with a 2 MiB ring (the smallest) and link_timeout_ms=2000;
#   once tracing has started the collector is frozen (SIGSTOP: no ACKs). The hypervisor must
#   declare the link failed, stop tracing (reason LINK) and let the guest go on; the collector is
#   then thawed. Checks: failure and recovery logged, the workload finished (status 0) and the
#   machine powered off, the collector's trace records the loss (LOSS -> GAP), every CPU in the
#   trace has a STOP with reason "link failure" (its held STOP chunk; its START may have
#   been dropped), hvt-check violations=0 with the gaps allowed (a LOSS reaches the collector
#   before anything sent after the drop), and a second window of M calls (again=M), marked 3 s
#   after the first ended, is in the trace and decodes: code ids lost with the link are not
#   used again (TRACE_NET_LINK_AGAIN, 300).
# Run D (link down a while): the same workload with the collector frozen TRACE_NET_STALL_S
#   (30) seconds, less than link_timeout_ms: the guest waits, nothing is dropped (no LOSS, no
#   gap, every message acknowledged at power-off), the trace passes hvt-check without gaps;
#   prints the seconds frozen, the hypervisor's waiting time and the bytes sent and stored.
#
# Needs: make efi, the trace initramfs ($BUILD/test/trace/initrd.img), the kernel, the host
# tools; `make test-trace-net` builds them. Knobs: BUILD (build), TRACE_CPUS (2),
# TRACE_NET_TIMEOUT (Bochs wall seconds per run, 900), TRACE_NET_LOOP (getpid calls of run B,
# 3000000), TRACE_NET_HOST_INSNS (300000), TEST_CMDLINE, TRACE_NET_RUNS ("A B").
# Closing line: "test-trace-net: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
B_REGS=rax:rcx:rsp:rdi:rflags                 # run B's record mode (hvt-check prints it so)
BUILD="${BUILD:-build}"
OUT="$BUILD/test/trace-net"
H="$BUILD/host"
COLL="$H/hvtrace-collector"; HVT="$H/hvt"; CHECK="$H/hvt-check"; IMPORT="$H/hvt-import"
VMLINUZ="$BUILD/test/vmlinuz"; INITRD="$BUILD/test/trace/initrd.img"; EFI="$BUILD/hvtrace.efi"
CPUS="${TRACE_CPUS:-2}"; TIMEOUT="${TRACE_NET_TIMEOUT:-900}"
LOOP="${TRACE_NET_LOOP:-3000000}"; HOST_INSNS="${TRACE_NET_HOST_INSNS:-300000}"
RUNS="${TRACE_NET_RUNS:-A B C D}"
LINK_LOOP="${TRACE_NET_LINK_LOOP:-20000}"
LINK_AGAIN="${TRACE_NET_LINK_AGAIN:-300}"
CMDLINE="${TEST_CMDLINE:-console=ttyS0 quiet cryptomgr.notests initcall_blacklist=trace_eval_init hvt_cpus=$CPUS}"
PORT="${NET_PORT:-$(( 20000 + RANDOM % 20000 ))}"
KEY="${NET_KEY:-$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')}"
source "$(dirname "$0")/test-lib.sh"
calc() { awk "BEGIN { print $1 }"; }   # arithmetic on fractional seconds (no bc needed)
for f in "$COLL" "$HVT" "$CHECK" "$IMPORT" "$VMLINUZ" "$INITRD" "$EFI"; do
  [ -e "$f" ] || { echo "test-trace-net: missing $f (run make test-trace-net)"; exit 1; }
done
mkdir -p "$OUT"
NETCFG="nic=auto ip=10.0.2.15 netmask=255.255.255.0 gw=10.0.2.2 collector=10.0.2.2:$PORT key=$KEY tsc_khz=50000"

vm() { # name hvt_cmd [extra net settings]: boot the machine (tests/platform/vm-run.sh), run in $OUT/name/run
  BUILD="$BUILD" TEST_CMDLINE="$CMDLINE" bash tests/platform/vm-run.sh -c "$CPUS" -t "$TIMEOUT" --efi "$EFI" \
    --kernel "$VMLINUZ" --initrd "$INITRD" --cmd "$2" --trace '' --net "$NETCFG${3:+ $3}" "$OUT/$1"
}
finish_coll() { # wait for the collector (it exits at BYE), then stop it anyway
  for _ in $(seq 30); do kill -0 "$CPID" 2>/dev/null || break; sleep 1; done
  kill -INT "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null
}
footer() { [ "$(tail -c 32 "$1" 2>/dev/null | head -c 7)" = HVTFOOT ]; }
now() { date +%s.%N; }

# ---------------------------------------------------------------- run A: marks, oracle
if [[ " $RUNS " == *" A "* ]]; then
  R="$OUT/a/run"; rm -rf "$R" "$OUT/coll-a"
  start_coll "$OUT/coll-a" "$OUT/collector-a.log" --exit-on-bye
  t0=$(now)
  BOCHS_PREFIX=$(HVT_BOCHS_ORACLE=1 bash tests/platform/build-bochs.sh) \
    vm a "/bin/getpid-loop,1000" > "$OUT/bochs-a.out" 2>&1
  finish_coll
  D="$OUT/coll-a/current"
  echo "test-trace-net: run A ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s wall ($(printf '%.0f' "$(calc "$(now) - $t0")") s with set-up)"
  grep -a "^hvtrace-collector: \(summary\|trace\):" "$OUT/collector-a.log"
  check "A: hypervisor connected to the collector" grep -aq "^net: connected to the collector" "$R/e9.log"
  check "A: no chunk went to port 0xE9 (all streamed)" bash -c "! grep -aq '^HVT-CHUNK' '$R/e9.log'"
  check "A: trace.hvt finished (index and footer)" footer "$D/trace.hvt"
  check "A: no stream gap, no refused batch, no GAP record" \
    test "$(hdr "$D" gap_events)/$(hdr "$D" trace_bad_batches)/$(hdr "$D" trace_gaps)" = 0/0/0
  check "A: the guest's LSTAR reached the trace header" bash -c "[ '$(hdr "$D" trace_lstar)' != 0x0 ]"
  check "A: trace directory verifies (trace.hvt == what its messages make)" "$COLL" --verify "$D"
  check "A: check-trace.sh on the collector's file (hvt-check, oracle count, nesting)" \
    env TRACE_FILE="$D/trace.hvt" bash tests/trace/check-trace.sh "$R" "$IMPORT" "$CHECK" "$HVT" "$VMLINUZ"
  ls -l "$D/trace.hvt" 2>/dev/null
fi

# ---------------------------------------------------------------- run B: host start/stop
if [[ " $RUNS " == *" B "* ]]; then
  R="$OUT/b/run"; rm -rf "$R" "$OUT/coll-b" "$OUT/host.hvt"
  start_coll "$OUT/coll-b" "$OUT/collector-b.log" --exit-on-bye
  t0=$(now)
  vm b "/bin/getpid-loop,$LOOP,nomark" > "$OUT/bochs-b.out" 2>&1 &
  BPID=$!; PIDS+=("$BPID")
  D="$OUT/coll-b/current"
  seen=""; started=""; stopped=""; insns=0
  # the loop's start line arrives through the streamed console
  for _ in $(seq $(( TIMEOUT * 5 ))); do
    if grep -aq "getpid-loop: start pid=" "$D/console.log" 2>/dev/null; then
      t_seen=$(now); seen=1
      "$HVT" trace start --kernel-only --regs "$B_REGS" -d "$OUT/coll-b" && started=1
      t_req=$(now)
      "$HVT" trace status --hv -d "$OUT/coll-b" > "$OUT/hvstatus-b.txt" 2>&1
      break
    fi
    kill -0 "$BPID" 2>/dev/null || break
    sleep 0.2
  done
  if [ -n "$started" ]; then
    for _ in $(seq $(( TIMEOUT * 5 ))); do
      insns=$("$HVT" trace status -d "$OUT/coll-b" --raw | awk -F'[ =]' '/^cpu=/{s += $6} END {print s + 0}')
      [ "$insns" -ge "$HOST_INSNS" ] && break
      kill -0 "$BPID" 2>/dev/null || break
      sleep 0.5
    done
    t_traced=$(now)
    "$HVT" trace stop -d "$OUT/coll-b" -o "$OUT/host.hvt" --timeout 300 > "$OUT/stop.out" 2>&1 && stopped=1
    t_stopped=$(now)
    cat "$OUT/stop.out"
  fi
  wait "$BPID"
  finish_coll
  echo "test-trace-net: run B ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s wall"
  [ -n "$started" ] && printf 'test-trace-net: start answered in %.2f s; %s instructions received %.1f s later; stop + finish took %.2f s\n' \
    "$(calc "$t_req - $t_seen")" "$insns" "$(calc "$t_traced - $t_req")" "$(calc "$t_stopped - $t_traced")"
  grep -a "^hvtrace-collector: \(summary\|trace\|command\):" "$OUT/collector-b.log"
  serial=$(tr -d '\r' < "$R/serial.log" 2>/dev/null)
  pid=$(sed -n 's/^getpid-loop: start pid=\([0-9]*\).*/\1/p' <<< "$serial" | head -1)
  check "B: the workload announced itself on the streamed console" test -n "$seen"
  check "B: hvt trace start accepted" test -n "$started"
  sed 's/^/    /' "$OUT/hvstatus-b.txt" 2>/dev/null
  # Bochs has no DMAR: the hypervisor says so in its status, refusals as counted (any number)
  check "B: hvt trace status --hv: hv_iommu=no-DMAR, the refusal fields present" \
    bash -c "grep -q '^hv_iommu=no-DMAR\$' '$OUT/hvstatus-b.txt' && grep -q '^hv_iommu_units=0\$' '$OUT/hvstatus-b.txt' && grep -q '^hv_hc_refused_total=[0-9]*\$' '$OUT/hvstatus-b.txt' && grep -q '^hv_hc_refused=' '$OUT/hvstatus-b.txt'"
  check "B: at least $HOST_INSNS instructions arrived while tracing ($insns)" test "${insns:-0}" -ge "$HOST_INSNS"
  check "B: hvt trace stop: every window closed, trace finished, copy written" test -n "$stopped" -a -s "$OUT/host.hvt"
  check "B: the workload went on after the stop and finished (status 0), clean power-off" \
    bash -c "grep -q '^HVT-CMD: status=0' <<< \"\$(tr -d '\r' < '$R/serial.log')\" && [ \"\$(cat '$R/end')\" = poweroff ]"
  out=$("$CHECK" "$OUT/host.hvt" 2>&1); st=$?
  echo "$out" | tail -3
  check "B: hvt-check on the host-started trace: violations=0, no gap" test $st = 0
  nuser=$(grep -o " user=[0-9]*" <<< "$out" | awk -F= '{s += $2} END {print s + 0}')
  nkern=$(grep -o " kernel=[0-9]*" <<< "$out" | awk -F= '{s += $2} END {print s + 0}')
  check "B: --kernel-only: $nkern kernel instructions, $nuser user ones" test "$nuser" = 0 -a "$nkern" -gt 0
  # --regs: every instruction recorded in REGS mode with that set (hvt-check's modes=)
  modes=$(grep "^violations=" <<< "$out" | grep -o " modes=.*" | sed 's/ damaged=1//')
  check "B: --regs $B_REGS: every instruction in that record mode ($modes)" \
    bash -c "[[ '$modes' =~ ^\ modes=regs:[0-9]+\ regs=$B_REGS\$ ]]"
  lst=$("$HVT" analyze --view list --file-order "$OUT/host.hvt" | grep '^# ')
  # (a filter's suspend/resume pairs are not window ends)
  n_start=$(grep ' start (' <<< "$lst" | grep -vc '(filter)'); n_stop=$(grep ' stop (' <<< "$lst" | grep -vc '(filter)')
  check "B: every CPU that started stopped (START $n_start, STOP $n_stop)" test "$n_start" -ge 1 -a "$n_start" = "$n_stop"
  n_host=$(grep -c ' \(start\|stop\) (host command)' <<< "$lst")
  check "B: the markers say the host started and stopped it ($n_host of $((n_start + n_stop)))" \
    test "$n_host" = $((n_start + n_stop))
  addr=$("$HVT" syms "$VMLINUZ" --name __x64_sys_getpid | awk '{print $1}')
  aliases=$("$HVT" syms "$VMLINUZ" | awk -v a="$addr" '$1 == a {print $3}' | paste -sd, -)
  nest=$("$HVT" analyze --vmlinuz "$VMLINUZ" --view nest "$OUT/host.hvt" |
         python3 tests/trace/nest-check.py "${pid:-?}" getpid-loop "${aliases:-__x64_sys_getpid}")
  echo "$nest"
  n=$(sed -n 's/nest_getpid_calls=\([0-9]*\).*/\1/p' <<< "$nest")
  check "B: the trace holds the running workload's getpid calls (${n:-0} >= 100)" test "${n:-0}" -ge 100
  check "B: nothing traced after the stop (file at power-off == copy at the stop)" cmp "$OUT/host.hvt" "$D/trace.hvt"
  check "B: trace directory verifies" "$COLL" --verify "$D"
  ls -l "$OUT/host.hvt" 2>/dev/null
fi

# ---------------------------------------------------------------- run C: link failure
if [[ " $RUNS " == *" C "* ]]; then
  R="$OUT/c/run"; rm -rf "$R" "$OUT/coll-c"
  start_coll "$OUT/coll-c" "$OUT/collector-c.log" --exit-on-bye
  vm c "/bin/getpid-loop,$LINK_LOOP,again=$LINK_AGAIN" "ring_kb=2048 link_timeout_ms=2000" > "$OUT/bochs-c.out" 2>&1 &
  BPID=$!; PIDS+=("$BPID")
  frozen=""; failed=""
  for _ in $(seq $(( TIMEOUT * 5 ))); do
    if grep -aq "trace start (mark)" "$R/e9.log" 2>/dev/null; then
      kill -STOP "$CPID" && frozen=1
      break
    fi
    kill -0 "$BPID" 2>/dev/null || break
    sleep 0.2
  done
  if [ -n "$frozen" ]; then
    for _ in $(seq $(( TIMEOUT * 5 ))); do
      grep -aq "^net: link failure" "$R/e9.log" 2>/dev/null && { failed=1; break; }
      kill -0 "$BPID" 2>/dev/null || break
      sleep 0.2
    done
    kill -CONT "$CPID"
  fi
  wait "$BPID"
  finish_coll
  D="$OUT/coll-c/current"
  echo "test-trace-net: run C ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s wall"
  grep -a "^net: link\|^hvtrace: cpu .*\(held\|trace s\)" "$R/e9.log" | head -8
  grep -a "^hvtrace-collector: \(summary\|trace\):" "$OUT/collector-c.log"
  check "C: the collector was frozen while tracing" test -n "$frozen"
  check "C: the hypervisor declared the link failed" test -n "$failed"
  check "C: ... and saw it recover once the collector was thawed" grep -aq "^net: link recovered" "$R/e9.log"
  check "C: the workload finished (status 0) and the machine powered off: the guest was not held" \
    bash -c "grep -q '^HVT-CMD: status=0' <<< \"\$(tr -d '\r' < '$R/serial.log')\" && [ \"\$(cat '$R/end')\" = poweroff ]"
  check "C: the collector's trace records the loss (GAP records: $(hdr "$D" trace_gaps))" \
    bash -c "[ '$(hdr "$D" trace_gaps)' -ge 1 ] 2>/dev/null"
  out=$("$CHECK" --allow-gaps "$D/trace.hvt" 2>&1); st=$?
  echo "$out" | tail -3
  check "C: hvt-check --allow-gaps: violations=0" test $st = 0
  # Every CPU with records has a STOP for link failure (reason 11); its START may have been in
  # a chunk the failure dropped.
  ncpu=$(grep -c '^cpu [0-9]*:' <<< "$out"); nlink=$(grep -cE '^cpu [0-9]*:.* stop_reasons=([0-9]+,)*11(,|$)' <<< "$out")
  check "C: every CPU in the trace stopped for link failure ($nlink of $ncpu)" test "$ncpu" -ge 1 -a "$nlink" = "$ncpu"
  # The guest's second window, once the link was back, is in the trace and decodes (code ids
  # from the first window may have been lost with it: the dictionary starts afresh).
  grep -a "^hvtrace: code batches were lost" "$R/e9.log" | head -1
  check "C: a second window after the recovery ran (2 start marks) and is in the trace" \
    bash -c "[ \$(grep -ac 'trace start (mark)' '$R/e9.log') -ge 2 ] && grep -qE '^cpu [0-9]*:.* stop_reasons=1,11' <<< '$out'"
fi

# ---------------------------------------------------------------- run D: the link down a while
# The collector frozen (SIGSTOP: it reads and ACKs nothing, as with its port blocked) for
# TRACE_NET_STALL_S seconds while a trace streams, well within link_timeout_ms: the guest waits
# (backpressure), nothing is dropped, and streaming resumes by itself when it is thawed.
if [[ " $RUNS " == *" D "* ]]; then
  STALL="${TRACE_NET_STALL_S:-30}"
  R="$OUT/d/run"; rm -rf "$R" "$OUT/coll-d"
  start_coll "$OUT/coll-d" "$OUT/collector-d.log" --exit-on-bye
  vm d "/bin/getpid-loop,${TRACE_NET_STALL_LOOP:-6000}" "ring_kb=2048" > "$OUT/bochs-d.out" 2>&1 &
  BPID=$!; PIDS+=("$BPID")
  frozen=""
  for _ in $(seq $(( TIMEOUT * 5 ))); do
    if grep -aq "trace start (mark)" "$R/e9.log" 2>/dev/null; then
      kill -STOP "$CPID" && frozen=$(now)
      break
    fi
    kill -0 "$BPID" 2>/dev/null || break
    sleep 0.2
  done
  if [ -n "$frozen" ]; then
    sleep "$STALL"
    kill -CONT "$CPID"
    thawed=$(now)
  fi
  wait "$BPID"
  finish_coll
  D="$OUT/coll-d/current"
  echo "test-trace-net: run D ended by $(cat "$R/end" 2>/dev/null) after $(cat "$R/wall_seconds" 2>/dev/null) s wall"
  grep -a "^net: \(link\|shutdown\|backpressure\)\|^hvtrace: trace totals" "$R/e9.log" | head -6
  grep -a "^hvtrace-collector: \(summary\|trace\):" "$OUT/collector-d.log"
  bp=$(grep -a "^net: backpressure:" "$R/e9.log" | tail -1)
  waited=$(sed -n 's/.* \([0-9]*\) ms waited in all.*/\1/p' <<< "$bp"); longest=$(sed -n 's/.*the longest \([0-9]*\) ms.*/\1/p' <<< "$bp")
  dropped=$(sed -n 's/.*; \([0-9]*\) messages dropped.*/\1/p' <<< "$bp")
  sent=$(sed -n 's/^hvtrace: trace totals: .*, \([0-9]*\) record bytes.*/\1/p' "$R/e9.log" | tail -1)
  recs=$(sed -n 's/.*trace: .* records=\([0-9]*\).*/\1/p' "$OUT/collector-d.log" | tail -1)
  [ -n "$frozen" ] && printf 'test-trace-net: D: collector frozen %.1f s; the guest waited %s ms in all (longest %s ms, hypervisor TSC time); record bytes sent %s; records stored %s\n' \
    "$(calc "$thawed - $frozen")" "${waited:-?}" "${longest:-?}" "${sent:-?}" "${recs:-?}"
  check "D: the collector was frozen for $STALL s while tracing" test -n "$frozen"
  check "D: no link failure declared; the hypervisor waited (backpressure: ${longest:-0} ms the longest)" \
    bash -c "! grep -aq '^net: link failure' '$R/e9.log' && [ '${longest:-0}' -gt 0 ]"
  check "D: nothing dropped (${dropped:-?} messages), the collector has everything at power-off" \
    bash -c "[ '${dropped:-x}' = 0 ] && grep -aq '^net: shutdown, collector has everything' '$R/e9.log'"
  check "D: the workload finished (status 0), clean power-off" \
    bash -c "grep -q '^HVT-CMD: status=0' <<< \"\$(tr -d '\r' < '$R/serial.log')\" && [ \"\$(cat '$R/end')\" = poweroff ]"
  check "D: no stream gap, no refused batch, no GAP record" \
    test "$(hdr "$D" gap_events)/$(hdr "$D" trace_bad_batches)/$(hdr "$D" trace_gaps)" = 0/0/0
  out=$("$CHECK" "$D/trace.hvt" 2>&1); st=$?
  echo "$out" | tail -3
  check "D: hvt-check (no gaps allowed): violations=0" test $st = 0
  check "D: trace directory verifies" "$COLL" --verify "$D"
fi

echo "test-trace-net: $pass passed, $fail failed"
[ "$fail" = 0 ]
