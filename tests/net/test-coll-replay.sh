#!/usr/bin/env bash
# Replayed HELLOs against hvtrace-collector (fake_hv runs the hypervisor's protocol code): a
# HELLO recorded off the wire and sent again, of an earlier boot or an earlier connection of
# the same boot, to a collector with a live session, an idle one, and a restarted one on the
# same directory. Each is refused with no WELCOME or ACK (an answer would reuse the session's
# nonces: a man in the middle could then forge an ACK and make the hypervisor free what was
# never stored), and a live session goes on, on its one connection.
# Usage: test-coll-replay.sh BUILD_HOST_DIR. Closing line: "test-coll-replay: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"
W=$(mktemp -d /tmp/hvt-coll-replay.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/test-lib.sh"
CLEANUP_DIR="$W"; [ -n "${KEEP:-}" ] && CLEANUP_DIR=""
B1=11111111111111111111111111111111
B2=22222222222222222222222222222222

# replay FILE: send a recorded HELLO, print how many bytes came back before the close (or 1 s)
replay() {
  python3 - "$PORT" "$1" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(open(sys.argv[2], "rb").read())
s.settimeout(0.3)
got, end = b"", time.time() + 1.0
while time.time() < end:
    try:
        b = s.recv(65536)
    except socket.timeout:
        continue
    except OSError:
        break
    if not b:
        break
    got += b
print(len(got))
PY
}

# 1. boot 1 streams and ends; the collector stays up
start_coll "$W/o" "$W/c.log"
"$FAKE" --port "$PORT" --key "$KEY" --boot-id $B1 --trace-bytes 100000 --timeout 30 \
        --save-hello "$W/h1.bin" >"$W/f1.out" 2>&1
check "boot 1 streamed" grep -q "fake_hv: done" "$W/f1.out"
# 2. idle collector: boot 1's HELLO again (same boot, an old connection)
n=$(replay "$W/h1.bin")
check "idle, same boot: the replayed HELLO gets no answer ($n bytes)" test "$n" = 0
check "idle, same boot: refused as a replay" grep -q "refused connection from .*not newer than connection" "$W/c.log"
# 3. boot 2 streams (live) while boot 1's HELLO is replayed (an earlier boot)
"$FAKE" --port "$PORT" --key "$KEY" --boot-id $B2 --trace-bytes 30000000 --rate-kbps 15000 \
        --timeout 60 --save-hello "$W/h2.bin" >"$W/f2.out" 2>&1 &
FPID=$!; PIDS+=("$FPID")
sleep 0.5
n=$(replay "$W/h1.bin")
wait "$FPID"; frc=$?
check "live, earlier boot: the replayed HELLO gets no answer ($n bytes)" test "$n" = 0
check "live, earlier boot: refused as a replay" grep -q "refused connection from .*not the newest boot" "$W/c.log"
check "live, earlier boot: the live stream finished (rc $frc) on one connection" \
      bash -c "[ $frc = 0 ] && grep -q 'connections=1 ' '$W/f2.out'"
check "live, earlier boot: boot 2 has no gap" test "$(hdr "$W/o/$B2" gap_events)" = 0
# 4. a restarted collector on the same directory: both HELLOs refused
kill -INT "$CPID"; wait "$CPID"
start_coll "$W/o" "$W/c2.log"
n1=$(replay "$W/h2.bin"); n2=$(replay "$W/h1.bin")
check "restarted, same boot: no answer ($n1 bytes)" test "$n1" = 0
check "restarted, same boot: refused (the accepted connection was persisted)" \
      grep -q "refused connection from .*not newer than connection" "$W/c2.log"
check "restarted, earlier boot: no answer ($n2 bytes)" test "$n2" = 0
# 5. a new boot is still taken after the refusals
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 33333333333333333333333333333333 --trace-bytes 1000 \
        --timeout 10 >"$W/f3.out" 2>&1
check "a new boot after the replays streams" grep -q "fake_hv: done" "$W/f3.out"
kill -INT "$CPID"; wait "$CPID"
check "both directories verify" bash -c "'$COLL' --verify '$W/o/$B1' >/dev/null && '$COLL' --verify '$W/o/$B2' >/dev/null"
# 6. a pinned configuration (--pin-cfg): a boot started from another hvtrace.cfg, or from one
#    that names none, is refused before anything is stored; the pinned one streams.
PIN=$(printf 'net = ip=10.0.2.15\n' | sha256sum | cut -d' ' -f1)
OTHER=$(printf 'net = ip=10.0.2.15,auth=off\n' | sha256sum | cut -d' ' -f1)
start_coll "$W/p" "$W/c3.log" --pin-cfg "$PIN"
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 44444444444444444444444444444444 --trace-bytes 1000 \
        --timeout 3 --hello-text "hv_build=fake_hv
cfg_sha256=$OTHER
cfg_seal=unsealed
" >"$W/f4.out" 2>&1
check "pinned: another configuration is refused" \
      grep -q "refused connection from .*cfg_sha256=$OTHER) is not the pinned one" "$W/c3.log"
check "pinned: nothing of it stored" test ! -e "$W/p/44444444444444444444444444444444"
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 55555555555555555555555555555555 --trace-bytes 1000 \
        --timeout 3 >"$W/f5.out" 2>&1
check "pinned: a HELLO without a configuration hash is refused" \
      grep -q "refused connection from .*names no configuration hash" "$W/c3.log"
"$FAKE" --port "$PORT" --key "$KEY" --boot-id 66666666666666666666666666666666 --trace-bytes 1000 \
        --timeout 10 --hello-text "hv_build=fake_hv
cfg_sha256=${PIN^^}
cfg_seal=sealed
" >"$W/f6.out" 2>&1
check "pinned: the pinned configuration streams" grep -q "fake_hv: done" "$W/f6.out"
check "pinned: its hash and seal state are in header.txt" \
      bash -c "grep -qi '^cfg_sha256=$PIN\$' '$W/p/66666666666666666666666666666666/header.txt' && grep -q '^cfg_seal=sealed\$' '$W/p/66666666666666666666666666666666/header.txt'"
kill -INT "$CPID"; wait "$CPID"
echo "test-coll-replay: $pass passed, $fail failed"
[ "$fail" = 0 ]
