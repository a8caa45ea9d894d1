#!/usr/bin/env python3
"""tcp_sink.py - the host end of bench-net's Linux baseline: accept one TCP connection on
127.0.0.1:PORT, read BYTES bytes, close, and print the rate between the first and the last byte:
    sink: bytes=N seconds=S MB_per_s=R
usage: tcp_sink.py PORT BYTES TIMEOUT_S"""
import socket, sys, time
port, want, timeout = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", port))
ls.listen(1)
ls.settimeout(timeout)
print("sink: listening", flush=True)
try:
    c, _ = ls.accept()
except socket.timeout:
    print("sink: no connection"); sys.exit(1)
c.settimeout(timeout)
got, first, last = 0, None, None
while got < want:
    try:
        b = c.recv(1 << 20)
    except socket.timeout:
        break
    if not b:
        break
    now = time.monotonic()
    if first is None:
        first = now
    last = now
    got += len(b)
c.close()
dt = (last - first) if first is not None and last > first else 0.0
print("sink: bytes=%d seconds=%.3f MB_per_s=%.3f" % (got, dt, got / dt / 1e6 if dt else 0.0))
sys.exit(0 if got >= want else 1)
