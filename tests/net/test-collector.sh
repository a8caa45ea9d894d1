#!/usr/bin/env bash
# Host integration test of hvtrace-collector against fake_hv (which runs the hypervisor's own
# protocol code): hello, console byte-for-byte, volume, control (ping answered, unauthenticated
# and replayed requests refused and counted), collector killed mid-stream and restarted (resume
# without gap), a fresh collector joining late (explicit counted gap), malformed streams
# rejected without crashing, two boots never mixed, SIGINT summary, no progress when not a tty,
# a full disk (ulimit -f, and a tiny tmpfs when mount works): the failure is sticky and reported,
# nothing unstored is acknowledged and a restart on a working disk loses nothing; directories
# 0700 and files 0600 under umask 022 and 000.
# Usage: test-collector.sh BUILD_HOST_DIR. Closing line: "test-collector: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"
W=$(mktemp -d /tmp/hvt-coll-test.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/test-lib.sh"
CLEANUP_DIR="$W"; [ -n "${KEEP:-}" ] && CLEANUP_DIR=""


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

# 7. a full disk (ulimit -f: write returns EFBIG): the failure is sticky, said on stderr and in
#    the status answer, nothing past the stored bytes is acknowledged (fake_hv prints what it
#    was acked when the link drops), the connection stays, and a collector restarted on a
#    working disk gets the rest from the hypervisor: nothing lost.
HVT="$B/hvt"
# start_limited OUT LOG FSIZE_KB: the collector with a file size limit, SIGXFSZ ignored
start_limited() {
  ( trap '' XFSZ; ulimit -f "$3"; exec "$COLL" --port "$PORT" --out "$1" --key "$KEY" ) 2>"$2" &
  CPID=$!; PIDS+=("$CPID")
  for _ in $(seq 50); do grep -q listening "$2" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
stored_bytes() { cat "$1"/chunk-*.hvts 2>/dev/null | wc -c; }
start_limited "$W/o7" "$W/c7a.log" 256
"$FAKE" --port "$PORT" --key "$KEY" --console "$W/console.txt" --trace-bytes 3000000 \
        --timeout 60 >"$W/f7.out" 2>"$W/f7.err" &
FPID=$!; PIDS+=("$FPID")
for _ in $(seq 100); do grep -q "STORE FAILED" "$W/c7a.log" && break; sleep 0.1; done
sleep 1                                   # the hypervisor side runs into its full ring
check "full disk reported with the file and errno" \
      grep -q "STORE FAILED: write $W/o7/[0-9a-f]*/chunk-000000.hvts: File too large (EFBIG)" "$W/c7a.log"
check "collector still running, connection kept" kill -0 "$CPID"
"$HVT" trace status -d "$W/o7" --raw >"$W/s7.txt" 2>&1
check "status answer says store_failed=EFBIG" grep -qx "store_failed=EFBIG" "$W/s7.txt"
"$HVT" trace status -d "$W/o7" >"$W/s7h.txt" 2>&1
check "hvt trace status shows the failure" grep -q "^STORE FAILED: write .*File too large" "$W/s7h.txt"
"$HVT" trace stop -d "$W/o7" --timeout 20 >"$W/stop7.txt" 2>&1; src=$?
check "hvt trace stop fails at once, saying the store failed (rc $src)" \
      bash -c "[ $src != 0 ] && grep -q \"the collector's store failed: write .*File too large\" '$W/stop7.txt'"
check "fake hypervisor not finished (its data is not acknowledged)" kill -0 "$FPID"
kill -TERM "$CPID"; wait "$CPID"; crc=$?
check "collector exits 1 after a store failure (rc $crc)" test "$crc" = 1
for _ in $(seq 50); do grep -q "disconnected: acked=" "$W/f7.err" && break; sleep 0.1; done
acked=$(grep -o 'disconnected: acked=[0-9]*' "$W/f7.err" | head -1 | cut -d= -f2)
head7=$(grep -o 'disconnected: acked=[0-9]* head=[0-9]*' "$W/f7.err" | head -1 | sed 's/.*head=//')
D="$W/o7/current"
stored=$(stored_bytes "$D")
echo "     full disk: hypervisor acked=$acked head=$head7, stored chunk bytes=$stored, checkpoint next_off=$(hdr "$D" next_off)"
check "something was acknowledged before the disk filled" test "${acked:-0}" -gt 0
check "acked ($acked) <= bytes stored ($stored)" test "${acked:-1}" -le "$stored"
check "acked = the stored checkpoint ($(hdr "$D" next_off))" test "${acked:-x}" = "$(hdr "$D" next_off)"
check "the hypervisor still holds the rest (head $head7 > acked $acked)" test "${head7:-0}" -gt "${acked:-0}"
start_coll "$W/o7" "$W/c7b.log" --exit-on-bye
wait "$FPID"; frc=$?; wait "$CPID"
check "with room again, the same boot resumes at the checkpoint ($acked)" \
      grep -q "resumed boot .* resuming at offset $acked\$" "$W/c7b.log"
check "the hypervisor finished: everything acknowledged (rc $frc)" test "$frc" = 0
check "nothing lost: all 3000000 trace bytes, no gap" \
      test "$(hdr "$D" trace_bytes)" = 3000000 -a "$(hdr "$D" gap_events)" = 0 -a "$(hdr "$D" gap_msgs)" = 0
check "nothing lost: console byte-for-byte" cmp -s "$W/console.txt" "$D/console.log"
check "nothing lost: the directory verifies" "$COLL" --verify "$D"
# 7b. the same, but the link drops and the hypervisor reconnects to the collector whose store
#    failed: its WELCOME must resume at the stored checkpoint, not at what it had parsed
start_limited "$W/o7b" "$W/c7c.log" 256
"$FAKE" --port "$PORT" --key "$KEY" --trace-bytes 3000000 --drop-after-ms 1500 \
        --timeout 60 >"$W/f7b.out" 2>"$W/f7b.err" &
FPID=$!; PIDS+=("$FPID")
for _ in $(seq 50); do grep -q "resumed boot" "$W/c7c.log" && break; sleep 0.1; done
sleep 0.5                                 # WELCOMEd again, ring full again
kill -TERM "$CPID"; wait "$CPID"
for _ in $(seq 50); do [ "$(grep -c 'disconnected: acked=' "$W/f7b.err")" -ge 2 ] && break; sleep 0.1; done
kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null
D="$W/o7b/current"
acks=$(grep -o 'disconnected: acked=[0-9]*' "$W/f7b.err" | cut -d= -f2 | head -2 | tr '\n' ' ')
ack2=$(echo $acks | cut -d' ' -f2)
stored=$(stored_bytes "$D")
echo "     reconnect after the failure: acked at the two drops: $acks; stored chunk bytes=$stored, checkpoint $(hdr "$D" next_off)"
check "the collector took the reconnect of the same boot" grep -q "resumed boot .* connection 1, resuming at offset $(hdr "$D" next_off)\$" "$W/c7c.log"
check "after the reconnect's WELCOME, acked ($ack2) is still the stored checkpoint" \
      test "${ack2:-x}" = "$(hdr "$D" next_off)" -a "${ack2:-1}" -le "$stored"

# 8. a full file system (a 256 KiB tmpfs: ENOSPC), when this machine lets us mount one
mkdir -p "$W/tiny"
if mount -t tmpfs -o size=256k tmpfs "$W/tiny" 2>/dev/null; then
  start_coll "$W/tiny/o" "$W/c8.log"
  "$FAKE" --port "$PORT" --key "$KEY" --trace-bytes 3000000 --timeout 4 >"$W/f8.out" 2>"$W/f8.err"
  frc=$?
  check "tmpfs full: fake hypervisor not finished (rc $frc)" test "$frc" = 1
  check "tmpfs full: ENOSPC reported" grep -q "STORE FAILED: .*No space left on device (ENOSPC)" "$W/c8.log"
  "$HVT" trace status -d "$W/tiny/o" --raw >"$W/s8.txt" 2>&1
  check "tmpfs full: status says store_failed=ENOSPC" grep -qx "store_failed=ENOSPC" "$W/s8.txt"
  acked=$(grep -o 'timeout: .*acked=[0-9]*' "$W/f8.err" | grep -o 'acked=[0-9]*' | cut -d= -f2)
  stored=$(stored_bytes "$W/tiny/o/current")
  echo "     tmpfs full: hypervisor acked=$acked, stored chunk bytes=$stored"
  check "tmpfs full: acked ($acked) <= stored ($stored)" test "${acked:-1}" -le "$stored"
  kill -TERM "$CPID"; wait "$CPID"
  umount "$W/tiny"
else
  echo "skip tmpfs full-disk check: mount refused (the ulimit -f check above covers it)"
fi

# 9. permissions: directories 0700, files 0600, whatever the umask (trace data holds every
#    guest register); the command socket 0600
"$B/gen_e9" --cpus 2 --insns 20000 --windows 1 --chunk-kb 32 "$W/perm.e9" >/dev/null
for um in 022 000; do
  ( umask "$um"; exec "$COLL" --port "$PORT" --out "$W/p$um" --key "$KEY" --exit-on-bye ) 2>"$W/cp$um.log" &
  CPID=$!; PIDS+=("$CPID")
  for _ in $(seq 50); do grep -q listening "$W/cp$um.log" 2>/dev/null && break; sleep 0.1; done
  check "umask $um: control.sock is 0600" test "$(stat -c %a "$W/p$um/control.sock")" = 600
  "$FAKE" --port "$PORT" --key "$KEY" --console "$W/console.txt" --e9 "$W/perm.e9" --timeout 30 >"$W/fp$um.out" 2>&1
  wait "$CPID"
  bd="$W/p$um/$(readlink "$W/p$um/current")"
  check "umask $um: trace.hvt made" test -s "$bd/trace.hvt"
  dirs=$(find "$W/p$um" -type d ! -perm 700 | wc -l)
  files=$(find "$W/p$um" -type f ! -perm 600 | wc -l)
  nfiles=$(find "$W/p$um" -type f | wc -l)
  check "umask $um: every directory 0700 ($dirs not)" test "$dirs" = 0
  check "umask $um: all $nfiles files 0600 ($files not: $(find "$W/p$um" -type f ! -perm 600 -printf '%m %p ' | head -c 300))" test "$files" = 0 -a "$nfiles" -ge 7
done

# 9. the session: every message tagged (the default with a key)
OTHER=ff0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
# 9a. strangers while a trace streams: one without the key, one replaying the live session's
#     HELLO byte for byte (recorded off the wire): both refused, the stream untouched (one
#     connection, no gap)
start_coll "$W/s1" "$W/s1.log" --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 11111111111111111111111111111111 \
        --console "$W/console.txt" --trace-bytes 45000000 --rate-kbps 15000 --timeout 60 \
        --save-hello "$W/hello.bin" >"$W/s1f.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 0.5
python3 - "$PORT" "$W/hello.bin" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read())
time.sleep(0.5)
PY
"$FAKE" --port "$PORT" --key "$OTHER" --trace-bytes 1000 --timeout 1 >"$W/s1x.out" 2>&1
# the replayed HELLO's refusal may still be on its way when the stranger's is in: ask until
# both are counted (the genuine stream runs for seconds more)
for i in $(seq 50); do
  "$HVT" trace status -d "$W/s1" > "$W/s1-status.txt" 2>&1
  grep -Eq "([2-9]|[1-9][0-9]+) connection\(s\) refused" "$W/s1-status.txt" && break
  sleep 0.1
done
wait "$FPID"; frc=$?
wait "$CPID"
D="$W/s1/current"
check "session: hvt trace status shows the session and the refusals" \
      grep -Eq "^session: encrypted with 127.0.0.1:[0-9]+, ([2-9]|[1-9][0-9]+) connection\(s\) refused, 0 message" "$W/s1-status.txt"
check "session: the genuine stream finished (rc $frc) on one connection" \
      bash -c "[ $frc = 0 ] && grep -q 'connections=1 ' '$W/s1f.out'"
check "session: the stranger without the key was refused" grep -q "refused connection from .*HELLO: tag does not verify" "$W/s1.log"
check "session: the replayed HELLO was refused" grep -q "refused connection from .*not newer" "$W/s1.log"
check "session: refusals counted" grep -Eq "summary:.* refused=([2-9]|[1-9][0-9]+) " "$W/s1.log"
check "session: no gap, console byte-for-byte" \
      bash -c "[ '$(hdr "$D" gap_events)' = 0 ] && cmp -s '$W/console.txt' '$D/console.log'"
check "session: the directory verifies" "$COLL" --verify "$D"
# 9b. a forged message from the hypervisor's side (one bit changed on the wire): rejected,
#     counted; the hypervisor resends it on its next connection and nothing is lost
start_coll "$W/s2" "$W/s2.log" --exit-on-bye
"$FAKE" --port "$PORT" --key "$KEY" --console "$W/console.txt" --trace-bytes 3000000 \
        --flip-byte 6000 --timeout 60 >"$W/s2f.out" 2>&1
wait "$CPID"
D="$W/s2/current"
check "session: forged message rejected" grep -q "tag does not verify (forged or damaged)" "$W/s2.log"
check "session: counted (bad_tags=1)" grep -q "summary:.* bad_tags=1 " "$W/s2.log"
check "session: after it, nothing lost (no gap, console equal, verifies)" \
      bash -c "[ '$(hdr "$D" gap_events)' = 0 ] && cmp -s '$W/console.txt' '$D/console.log' && '$COLL' --verify '$D' >/dev/null"
# 9c. a forged ACK from the collector's side: the hypervisor refuses and counts it, drops the
#     connection, resumes on the next one
start_coll "$W/s3" "$W/s3.log" --exit-on-bye --ctl status,badtag
"$FAKE" --port "$PORT" --key "$KEY" --console "$W/console.txt" --trace-bytes 3000000 \
        --timeout 60 >"$W/s3f.out" 2>&1
wait "$CPID"
D="$W/s3/current"
check "session: forged ACK refused and counted by the hypervisor (bad_tags=1)" grep -q "bad_tags=1$" "$W/s3f.out"
check "session: the status reply reports the session" grep -q "bad_tags=.* session=encrypted" "$D/control.log"
check "session: nothing lost after the forged ACK" \
      bash -c "[ '$(hdr "$D" gap_events)' = 0 ] && cmp -s '$W/console.txt' '$D/console.log'"
# 9d. tags only (encrypt=off): the same files as encrypted payloads (9a-9c) give
start_coll "$W/s4" "$W/s4.log" --exit-on-bye --ctl status
"$FAKE" --port "$PORT" --key "$KEY" --auth on --console "$W/console.txt" --trace-bytes 3000000 \
        --timeout 60 >"$W/s4f.out" 2>&1
wait "$CPID"
D="$W/s4/current"
check "session: tags-only stream stored the same (console equal, verifies)" \
      bash -c "cmp -s '$W/console.txt' '$D/console.log' && '$COLL' --verify '$D' >/dev/null"
check "session: the status reply says authenticated (not encrypted)" grep -q "session=authenticated" "$D/control.log"
# 9e. a hypervisor that does not tag (auth=off) is refused by a collector with a key, unless
#     --insecure
start_coll "$W/s5" "$W/s5.log"
"$FAKE" --port "$PORT" --key "$KEY" --auth off --trace-bytes 1000 --timeout 2 >"$W/s5f.out" 2>&1
kill -INT "$CPID"; wait "$CPID"
check "session: untagged stream refused by a keyed collector" grep -q "does not authenticate its stream" "$W/s5.log"
start_coll "$W/s6" "$W/s6.log" --exit-on-bye --insecure
"$FAKE" --port "$PORT" --key "$KEY" --auth off --trace-bytes 100000 --timeout 20 >"$W/s6f.out" 2>&1
wait "$CPID"
check "session: accepted with --insecure" grep -q "fake_hv: done" "$W/s6f.out"

echo "test-collector: $pass passed, $fail failed"
[ "$fail" = 0 ]
