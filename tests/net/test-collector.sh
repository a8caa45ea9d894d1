#!/usr/bin/env bash
# Host integration test of hvtrace-collector against fake_hv (which runs the hypervisor's own
# protocol code): hello, console byte-for-byte, volume, control (ping answered, unauthenticated
# and replayed requests refused and counted), collector killed mid-stream and restarted (resume
# without gap), a fresh collector joining late (explicit counted gap), malformed streams
# rejected without crashing, two boots never mixed, SIGINT summary, no progress when not a tty.
# Usage: test-collector.sh BUILD_HOST_DIR. Closing line: "test-collector: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"
W=$(mktemp -d /tmp/hvt-coll-test.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/test-lib.sh"
CLEANUP_DIR="$W"


# console text with every byte value, like a real serial log would never have, plus lines
head -c 3000 /dev/urandom > "$W/console.txt"
for i in $(seq 400); do echo "[    $i.000000] line $i of the guest boot log"; done >> "$W/console.txt"

# 1. a whole run: hello, console, 30 MB, control
start_coll "$W/o1" "$W/c1.log" --ctl ping,status,badauth,replay --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --console "$W/console.txt" --trace-bytes 30000000 \
        --cpus 4 --loss 7 --timeout 60 >"$W/f1.out" 2>&1
check "fake hypervisor finished with everything acknowledged" grep -q "fake_hv: done" "$W/f1.out"
wait "$CPID"
D="$W/o1/current"
check "console.log byte-for-byte equal" cmp -s "$W/console.txt" "$D/console.log"
check "HELLO metadata in header.txt (cpu_count=4, guest kernel)" \
      test "$(hdr "$D" cpu_count)" = 4 -a "$(hdr "$D" guest_kernel)" = "fake-linux 6.1.0-test"
check "no sequence gaps" test "$(hdr "$D" gap_events)" = 0 -a "$(hdr "$D" gap_msgs)" = 0
check "reported loss counted (lost_msgs=7)" test "$(hdr "$D" lost_msgs)" = 7
check "ping answered with a valid tag" grep -q "cmd=ping status=ok tag=ok data=ping" "$D/control.log"
check "status answered" grep -q "cmd=status status=ok tag=ok" "$D/control.log"
check "unauthenticated request refused" grep -q "status=refused-auth" "$D/control.log"
check "replayed request refused" grep -q "status=refused-replay" "$D/control.log"
check "refusals counted by the hypervisor side" grep -q "ctl_bad_auth=1 ctl_replayed=1" "$W/f1.out"
check "trace directory verifies" "$COLL" --verify "$D"
check "no progress output when stderr is not a terminal" bash -c "! grep -q 'MB/s' '$W/c1.log'"
check "summary printed" grep -q "summary:.*gap_events=0" "$W/c1.log"

# 2. collector killed (SIGKILL) mid-stream and restarted on the same directory: no gap
start_coll "$W/o2" "$W/c2a.log"
"$FAKE" --port "$PORT" --key "$KEY" --console "$W/console.txt" --trace-bytes 40000000 \
        --rate-kbps 20000 --timeout 60 >"$W/f2.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 0.8; kill -9 "$CPID"; wait "$CPID" 2>/dev/null
sleep 0.5
start_coll "$W/o2" "$W/c2b.log" --exit-on-bye
wait "$FPID"; frc=$?
wait "$CPID"
D="$W/o2/current"
check "fake hypervisor survived the collector's death (rc $frc)" test "$frc" = 0
check "it reconnected" grep -Eq "connections=([2-9]|[1-9][0-9])" "$W/f2.out"
check "restarted collector resumed the same boot" grep -q "resumed boot" "$W/c2b.log"
check "no gap after the restart" test "$(hdr "$D" gap_events)" = 0 -a "$(hdr "$D" gap_msgs)" = 0
check "console complete after the restart" cmp -s "$W/console.txt" "$D/console.log"
check "restarted trace verifies" "$COLL" --verify "$D"
check "all 40 MB there" test "$(hdr "$D" trace_bytes)" = 40000000

# 3. a fresh collector (empty directory) joins a boot whose early data was already
#    acknowledged to a dead one: the gap is explicit and counted
start_coll "$W/o3a" "$W/c3a.log"
"$FAKE" --port "$PORT" --key "$KEY" --trace-bytes 20000000 --rate-kbps 20000 --timeout 60 \
        >"$W/f3.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 0.6; kill -9 "$CPID"; wait "$CPID" 2>/dev/null
start_coll "$W/o3b" "$W/c3b.log" --exit-on-bye
wait "$FPID"; wait "$CPID"
D="$W/o3b/current"
check "late collector counted the gap (gap_events=1)" test "$(hdr "$D" gap_events)" = 1
check "gap bytes > 0" test "$(hdr "$D" gap_bytes)" -gt 0
check "late collector warned about the gap" grep -q "gap will be counted" "$W/c3b.log"
check "late trace verifies" "$COLL" --verify "$D"

# 4. malformed input: rejected with a clear error, collector stays up and still works
start_coll "$W/o4" "$W/c4.log"
for kind in magic version bigmsg nohello rewind badcpu shorthello midmsg; do
  check "malformed '$kind' refused" "$FAKE" --port "$PORT" --malformed "$kind"
done
check "collector still alive after malformed input" kill -0 "$CPID"
check "errors explained" test "$(grep -c 'rejecting stream' "$W/c4.log")" = 8
check "bad magic explained" grep -q "bad magic" "$W/c4.log"
# 5. two boots on the same collector: two directories, never mixed
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 11111111111111111111111111111111 --trace-bytes 100000 \
        --timeout 30 >"$W/f5a.out" 2>&1
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 22222222222222222222222222222222 --trace-bytes 200000 \
        --timeout 30 >"$W/f5b.out" 2>&1
sleep 0.2
check "first boot in its own directory" test "$(hdr "$W/o4/11111111111111111111111111111111" trace_bytes)" = 100000
check "second boot in its own directory" test "$(hdr "$W/o4/22222222222222222222222222222222" trace_bytes)" = 200000
check "boot 1 verifies" "$COLL" --verify "$W/o4/11111111111111111111111111111111"
check "boot 2 verifies" "$COLL" --verify "$W/o4/22222222222222222222222222222222"
# 6. SIGINT: clean stop with a summary
kill -INT "$CPID"; wait "$CPID"; rc=$?
check "SIGINT exits 0" test "$rc" = 0
check "SIGINT prints the summary" grep -q "summary:" "$W/c4.log"

echo "test-collector: $pass passed, $fail failed"
[ "$fail" = 0 ]
