#!/usr/bin/env bash
# Host integration test of the collector's trace file (trace.hvt) and of `hvt trace`, against
# fake_hv replaying debug-port trace logs as the real HVT_MSG_TRACE batches the hypervisor's
# sink sends. The same log goes to hvt-import (file path) and through the network path; the
# collector's trace.hvt must be identical byte for byte. Scenarios: a real recorded log
# (tests/net/fixtures: getpid-loop 1000 in Bochs, 2 CPUs) and synthetic ones (gen_e9); the
# collector killed and restarted mid-stream; dropped batches (LOSS) and a refused batch (GAP
# records, hvt-check fails on them); a collector joining late; host start/stop with hvt trace;
# FLOW and REGS record modes.
# Usage: test-trace-coll.sh BUILD_HOST_DIR. Closing line: "test-trace-coll: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"
HERE="$(cd "$(dirname "$0")" && pwd)"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"; GEN="$B/gen_e9"; IMPORT="$B/hvt-import"
CHECK="$B/hvt-check"; HVT="$B/hvt"
W=$(mktemp -d /tmp/hvt-trace-coll.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/test-lib.sh"
CLEANUP_DIR="$W"

listing() { "$HVT" analyze --view list --file-order "$1"; }
# hvt-check's summary field
chk() { "$CHECK" "$1" | tail -1 | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# 1. a real recording: same bytes as hvt-import, and continuity holds on the real records
xz -dc "$HERE/fixtures/getpid-loop-e9.log.xz" > "$W/real.e9"
"$IMPORT" "$W/real.e9" "$W/real-import.hvt" 2>/dev/null
start_coll "$W/o1" "$W/c1.log" --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --cpus 2 --e9 "$W/real.e9" --ring-kb 1024 --timeout 60 >"$W/f1.out" 2>&1
wait "$CPID"
D="$W/o1/current"
check "real log: collector's trace.hvt == hvt-import's, byte for byte" cmp "$W/real-import.hvt" "$D/trace.hvt"
check "real log: hvt-check violations=0 gaps=0 over $(chk "$D/trace.hvt" insns) instructions" \
  "$CHECK" "$D/trace.hvt"
check "real log: header carries the guest's LSTAR" test "$(hdr "$D" trace_lstar)" = 0xffffffff81c00080
check "real log: directory verifies (trace rebuilt from the messages matches)" "$COLL" --verify "$D"

# 2. synthetic: 4 CPUs, 3 windows, small chunks; records compared through the reader too
"$GEN" --cpus 4 --insns 1200000 --windows 3 --chunk-kb 32 "$W/syn.e9"
"$IMPORT" "$W/syn.e9" "$W/syn-import.hvt" 2>/dev/null
start_coll "$W/o2" "$W/c2.log" --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --cpus 4 --e9 "$W/syn.e9" --console "$W/syn.e9" --timeout 60 >"$W/f2.out" 2>&1
wait "$CPID"
D="$W/o2/current"
check "synthetic: trace.hvt == hvt-import's, byte for byte" cmp "$W/syn-import.hvt" "$D/trace.hvt"
check "synthetic: same records in the same order (hvt analyze listings equal)" \
  bash -c "cmp <('$HVT' analyze --view list --file-order '$W/syn-import.hvt') <('$HVT' analyze --view list --file-order '$D/trace.hvt')"
check "synthetic: hvt-check violations=0 gaps=0" "$CHECK" "$D/trace.hvt"
check "synthetic: every instruction arrived (1200000)" test "$(hdr "$D" trace_insns)" = 1200000
check "synthetic: all windows closed, file finished (footer)" \
  bash -c "tail -c 32 '$D/trace.hvt' | head -c 7 | grep -q HVTFOOT"

# 3. the collector is killed (SIGKILL) mid-stream and restarted: the file is the same
start_coll "$W/o3" "$W/c3a.log"
"$FAKE" --port "$PORT" --key "$KEY" --cpus 4 --e9 "$W/syn.e9" --rate-kbps 2000 --timeout 60 >"$W/f3.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 1.5; kill -9 "$CPID"; wait "$CPID" 2>/dev/null
cut_at=$(hdr "$W/o3/current" trace_bytes_on_disk)
sleep 0.5
start_coll "$W/o3" "$W/c3b.log" --exit-on-bye
wait "$FPID"; wait "$CPID"
D="$W/o3/current"
check "restart: the collector died with part of the trace written (${cut_at:-0} bytes checkpointed)" \
  test "${cut_at:-0}" -gt 128 -a "${cut_at:-0}" -lt "$(stat -c %s "$W/syn-import.hvt")"
check "restart: resumed the same boot" grep -q "resumed boot" "$W/c3b.log"
check "restart: trace.hvt == hvt-import's, byte for byte" cmp "$W/syn-import.hvt" "$D/trace.hvt"
check "restart: directory verifies" "$COLL" --verify "$D"

# 4. overflow=drop: batches left out and reported (LOSS) become GAPs, never silence
start_coll "$W/o4" "$W/c4.log" --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --cpus 4 --e9 "$W/syn.e9" --drop-every 7 --timeout 60 >"$W/f4.out" 2>&1
wait "$CPID"
D="$W/o4/current"
dropped=$(sed -n 's/.*dropped=\([0-9]*\).*/\1/p' "$W/f4.out")
check "drops: fake hypervisor dropped batches (${dropped:-0})" test "${dropped:-0}" -gt 0
check "drops: one GAP event per LOSS (trace_gaps=$(hdr "$D" trace_gaps))" test "$(hdr "$D" trace_gaps)" = "${dropped:-x}"
check "drops: hvt-check fails and counts the GAP records ($((${dropped:-0} * 4)) = 4 CPUs each)" \
  bash -c "! '$CHECK' '$D/trace.hvt' >/dev/null && test \"\$('$CHECK' '$D/trace.hvt' | tail -1 | sed -n 's/.*gaps=\([0-9]*\).*/\1/p')\" = $((${dropped:-0} * 4))"
check "drops: no continuity violation around the gaps" test "$(chk "$D/trace.hvt" violations)" = 0
check "drops: directory verifies" "$COLL" --verify "$D"

# 5. a batch whose header does not match its payload: refused, explained, counted, GAP
start_coll "$W/o5" "$W/c5.log" --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --cpus 4 --e9 "$W/syn.e9" --corrupt-at 3 --timeout 60 >"$W/f5.out" 2>&1
wait "$CPID"
D="$W/o5/current"
check "bad batch: refused and counted (trace_bad_batches=1)" test "$(hdr "$D" trace_bad_batches)" = 1
check "bad batch: the log says why" grep -q "refused: header says .* records" "$W/c5.log"
check "bad batch: a GAP marks it (trace_gaps=1), hvt-check fails" \
  bash -c "test '$(hdr "$D" trace_gaps)' = 1 && ! '$CHECK' '$D/trace.hvt' >/dev/null"
check "bad batch: the rest of the trace still decodes" bash -c "'$HVT' analyze --view list --file-order '$D/trace.hvt' >/dev/null"

# 6. a fresh collector joins late (the early data went to one that died): GAP, not silence
start_coll "$W/o6a" "$W/c6a.log"
"$FAKE" --port "$PORT" --key "$KEY" --cpus 4 --e9 "$W/syn.e9" --rate-kbps 2000 --timeout 60 >"$W/f6.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 1.5; kill -9 "$CPID"; wait "$CPID" 2>/dev/null
start_coll "$W/o6b" "$W/c6b.log" --exit-on-bye
wait "$FPID"; wait "$CPID"
D="$W/o6b/current"
check "late: the sequence gap became one GAP event (trace_gaps=$(hdr "$D" trace_gaps))" test "$(hdr "$D" trace_gaps)" = 1
check "late: hvt-check refuses the trace" bash -c "! '$CHECK' '$D/trace.hvt' >/dev/null 2>&1"
check "late: directory verifies" "$COLL" --verify "$D"

# 7. host-driven: hvt trace start / status / stop through the collector's socket
"$GEN" --cpus 2 --insns 400000 --windows 1 --open-end "$W/open.e9"
out=$("$HVT" trace status -d "$W/nowhere" 2>&1); rc=$?
check "cli: no collector -> exit 1 and says so" bash -c "test $rc = 1 && echo '$out' | grep -q 'cannot reach the collector'"
start_coll "$W/o7" "$W/c7.log"
out=$("$HVT" trace start -d "$W/o7" 2>&1); rc=$?
check "cli: start with no hypervisor connected -> refused" bash -c "test $rc = 1 && echo '$out' | grep -q 'no hypervisor is connected'"
"$FAKE" --port "$PORT" --key "$KEY" --cpus 2 --e9 "$W/open.e9" --wait-start --rate-kbps 400 --timeout 90 >"$W/f7.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 0.5
check "cli: status before start: no trace yet" bash -c "'$HVT' trace status -d '$W/o7' | grep -q 'none yet'"
out=$("$HVT" trace start -d "$W/o7" --range 0x2000:0x1000 2>&1); rc=$?
check "cli: arguments the hypervisor refuses (an empty range) -> EINVAL, nothing started" \
  bash -c "test $rc = 1 && echo '$out' | grep -q 'refused the arguments'"
check "cli: start accepted" "$HVT" trace start -d "$W/o7"
for _ in $(seq 100); do
  n=$("$HVT" trace status -d "$W/o7" --raw | sed -n 's/^cpu=0 records=[0-9]* insns=\([0-9]*\).*/\1/p')
  [ "${n:-0}" -gt 50000 ] && break; sleep 0.1
done
check "cli: status shows instructions arriving per CPU (cpu 0: ${n:-0})" test "${n:-0}" -gt 50000
check "cli: windows open while tracing" bash -c "'$HVT' trace status -d '$W/o7' --raw | grep -q '^windows_open=[12]'"
check "cli: hypervisor-side status answered" bash -c "'$HVT' trace status -d '$W/o7' --hv | grep -q '^hv_starts=1'"
"$HVT" trace status -d "$W/o7" --hv >"$W/hv7.txt" 2>&1
# fake_hv reports no IOMMU state and no refusals: the appended fields, printed as such
check "cli: hypervisor-side status has the IOMMU and refusal fields" \
  bash -c "grep -q '^hv_iommu=unknown\$' '$W/hv7.txt' && grep -q '^hv_iommu_units=0\$' '$W/hv7.txt' && grep -q '^hv_hc_refused=none\$' '$W/hv7.txt'"
"$HVT" trace stop -d "$W/o7" -o "$W/host.hvt" >"$W/stop.out" 2>&1; rc=$?
check "cli: stop waited for every window to close and the file to be finished (rc $rc)" test $rc = 0
wait "$FPID"
D="$W/o7/current"
check "cli: -o copy equals the collector's trace.hvt" cmp "$W/host.hvt" "$D/trace.hvt"
check "cli: the copy passes hvt-check (violations=0 gaps=0)" "$CHECK" "$W/host.hvt"
check "cli: every CPU's window ends with a STOP marker" \
  test "$(listing "$W/host.hvt" | grep -c '^# [0-9]* [01] stop')" = 2
sent=$(sed -n 's/.*sent_insns=\([0-9]*\).*/\1/p' "$W/f7.out")
check "cli: all $sent instructions sent before the stop are in the file" \
  test "$(chk "$W/host.hvt" insns)" = "${sent:-x}"
check "cli: the stop came before the log ran out (a partial trace)" test "${sent:-0}" -lt 400000
kill -INT "$CPID"; wait "$CPID"
check "cli: the collector removed its socket on exit" test ! -e "$W/o7/control.sock"

# 8. record modes: the same synthetic walk recorded in FLOW (RUN markers, the mode restated at
# every chunk) and in REGS: the collector's batch check counts a RUN as its instructions, the
# file equals hvt-import's, continuity and the instruction count are the FULL log's
"$GEN" --cpus 2 --insns 300000 --windows 2 --chunk-kb 16 "$W/full8.e9"
"$IMPORT" "$W/full8.e9" "$W/full8.hvt" 2>/dev/null
for m in flow regs; do
  "$GEN" --cpus 2 --insns 300000 --windows 2 --chunk-kb 16 --mode $m --regs 0x11 "$W/$m.e9"
  "$IMPORT" "$W/$m.e9" "$W/$m-import.hvt" 2>/dev/null
  start_coll "$W/o8$m" "$W/c8$m.log" --exit-on-bye
  "$FAKE" --port "$PORT" --key "$KEY" --cpus 2 --e9 "$W/$m.e9" --timeout 60 >"$W/f8$m.out" 2>&1
  wait "$CPID"
  D="$W/o8$m/current"
  check "$m: every batch accepted (trace_bad_batches=$(hdr "$D" trace_bad_batches), gaps $(hdr "$D" trace_gaps))" \
    test "$(hdr "$D" trace_bad_batches)" = 0 -a "$(hdr "$D" trace_gaps)" = 0
  check "$m: trace.hvt == hvt-import's, byte for byte" cmp "$W/$m-import.hvt" "$D/trace.hvt"
  check "$m: hvt-check violations=0 gaps=0 over the full log's $(chk "$W/full8.hvt" insns) instructions" \
    bash -c "'$CHECK' '$D/trace.hvt' >/dev/null && test '$(chk "$D/trace.hvt" insns)' = '$(chk "$W/full8.hvt" insns)'"
  check "$m: the collector counted them (trace_insns=$(hdr "$D" trace_insns))" \
    test "$(hdr "$D" trace_insns)" = "$(chk "$W/full8.hvt" insns)"
done
check "flow: hvt-check names the mode (modes=$(chk "$W/o8flow/current/trace.hvt" modes))" \
  test "$(chk "$W/o8flow/current/trace.hvt" modes)" = "flow:$(chk "$W/full8.hvt" insns)"
fsz=$(stat -c %s "$W/full8.hvt"); wsz=$(stat -c %s "$W/o8flow/current/trace.hvt")
check "flow: smaller than full ($wsz < $fsz bytes)" test "$wsz" -lt "$fsz"

echo "test-trace-coll: $pass passed, $fail failed"
[ "$fail" = 0 ]
