#!/usr/bin/env python3
"""make-lwip-seeds.py OUTDIR - seed inputs for fuzz_lwip_rx (input format: the header of
tests/net/fuzz/fuzz_lwip_rx.c): the frames a collector and a LAN send the hypervisor's NIC -
ARP, ping, the stream's WELCOME / ACK / control requests (PING, STATUS) over an established
connection, FIN, RST, out-of-window data, long idle times (retransmission, keepalive), frames
piled up past the per-poll budget, and device-written descriptor fields (a length beyond the
buffer, error bits, no EOP). The harness fixes addresses, seq/ack, checksums, boot id and tags
when a frame's flags ask it to, so the seeds stay valid whatever the ISN or the boot id.
Stream messages carry room for their session tag (filled in by the harness) unless the seed's
setup has no session (no key, auth=off). The stream's numbers come from include/hvt_stream.h
through build/gen/hvt_abi.py (tools/gen.mk; HVT_GEN_DIR says where it is)."""
import os, struct, sys

sys.path.insert(0, os.environ.get("HVT_GEN_DIR") or
                os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../build/gen"))
import hvt_abi as abi

OUR_MAC = bytes([0x52, 0x54, 0x00, 0x12, 0x34, 0x56])
COLL_MAC = bytes([0x52, 0x55, 0x0a, 0x00, 0x02, 0x02])
OUR_IP, COLL_IP = bytes([10, 0, 2, 15]), bytes([10, 0, 2, 2])
TCP_FIX, CSUM_FIX, STREAM_FIX, DEV_FIELDS, NO_POLL = 1, 2, 4, 8, 16
MAGIC, VERSION, CPU_NONE = abi.HVT_STREAM_MAGIC, abi.HVT_STREAM_VERSION, abi.HVT_CPU_NONE
WELCOME, ACK, CTL_REQ = abi.HVT_MSG_WELCOME, abi.HVT_MSG_ACK, abi.HVT_MSG_CTL_REQ
CTL_PING, CTL_STATUS, CTL_TRACE_STATUS = abi.HVT_CTL_PING, abi.HVT_CTL_STATUS, abi.HVT_CTL_TRACE_STATUS

def frame(flags, payload, t=0, dev=None):
    out = bytes([flags | (DEV_FIELDS if dev else 0), t]) + struct.pack(">H", len(payload))
    if dev:
        out += bytes([dev[0], dev[1]]) + struct.pack(">H", dev[2])
    return out + payload

def eth(ethertype, body, dst=OUR_MAC, src=COLL_MAC):
    f = dst + src + struct.pack(">H", ethertype) + body
    return f + bytes(max(0, 60 - len(f)))

def ipv4(proto, body, src=COLL_IP, dst=OUR_IP):
    return struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(body), 1, 0, 64, proto, 0, src, dst) + body

def tcp(flags, payload=b"", seq=0, ack=0, win=0xffff):
    return eth(0x0800, ipv4(6, struct.pack(">HHIIBBHHH", abi.HVT_STREAM_DEFAULT_PORT, 0, seq, ack, 5 << 4, flags, win, 0, 0) + payload))

TAG_LEN = abi.HVT_STREAM_TAG_LEN   # the session tag after each message (with a key, auth=on: the default)

def msg(mtype, body, tag=True):
    return struct.pack("<IBBHIHHQQ", MAGIC, VERSION, abi.HVT_MSG_HDR_SIZE, mtype, len(body), CPU_NONE, 0, 0, 0) + body + \
        bytes(TAG_LEN if tag else 0)

def welcome(resume=0):
    return msg(WELCOME, bytes(16) + struct.pack("<Q", resume))

def ctl(seq, cmd, data=b"", tag=True):
    return msg(CTL_REQ, struct.pack("<QHhI", seq, cmd, 0, len(data)) + data + bytes(32), tag)

def arp(op, sha, spa, tha, tpa, dst):
    return eth(0x0806, struct.pack(">HHBBH", 1, 0x0800, 6, 4, op) + sha + spa + tha + tpa, dst=dst)

PSH_ACK, ACK_F, FIN_ACK, RST, SYN_ACK = 0x18, 0x10, 0x11, 0x04, 0x12
ALL = TCP_FIX | CSUM_FIX | STREAM_FIX
seeds = {
    # established + WELCOME (setup 3): the stream's messages from the collector
    "ack": (3, [frame(ALL, tcp(PSH_ACK, msg(ACK, struct.pack("<Q", 0))))]),
    "ctl-status": (3, [frame(ALL, tcp(PSH_ACK, ctl(1, CTL_STATUS))), frame(ALL, tcp(ACK_F), t=5)]),
    "ctl-ping-twice": (3, [frame(ALL, tcp(PSH_ACK, ctl(1, CTL_PING, b"hello") + ctl(2, CTL_PING, b"again")))]),
    "ctl-replay": (3, [frame(ALL, tcp(PSH_ACK, ctl(5, CTL_TRACE_STATUS))),
                       frame(ALL, tcp(PSH_ACK, ctl(5, CTL_TRACE_STATUS)))]),
    "ctl-badtag": (3, [frame(TCP_FIX | CSUM_FIX, tcp(PSH_ACK, ctl(1, CTL_STATUS)))]),
    "fin": (3, [frame(ALL, tcp(FIN_ACK)), frame(0, b"", t=0x85)]),
    "rst": (3, [frame(ALL, tcp(RST))]),
    "garbage-stream": (3, [frame(ALL, tcp(PSH_ACK, b"\x00" * 40))]),
    "split-message": (3, [frame(ALL, tcp(PSH_ACK, ctl(1, CTL_STATUS)[:20])),
                          frame(TCP_FIX | CSUM_FIX, tcp(PSH_ACK, ctl(1, CTL_STATUS)[20:]))]),
    "out-of-window": (3, [frame(ALL, tcp(PSH_ACK, msg(ACK, struct.pack("<Q", 0)), seq=0x40000000))]),
    "old-ack": (3, [frame(ALL, tcp(ACK_F, ack=0xfffff000))]),
    "zero-window": (3, [frame(ALL, tcp(ACK_F, win=0)), frame(0, b"", t=0x90), frame(ALL, tcp(ACK_F))]),
    "idle-keepalive": (3, [frame(0, b"", t=0xff), frame(0, b"", t=0xff), frame(ALL, tcp(ACK_F))]),
    # established, no WELCOME yet (setup 1)
    "welcome": (1, [frame(ALL, tcp(PSH_ACK, welcome()))]),
    "welcome-resume": (1, [frame(ALL, tcp(PSH_ACK, welcome(1 << 20)))]),
    "welcome-then-ack": (1, [frame(ALL, tcp(PSH_ACK, welcome() + msg(ACK, struct.pack("<Q", 64))))]),
    # the selftest load keeps the send side busy (setup 3 | 16), overflow=drop (| 4), no key (| 8)
    "selftest-acks": (0x13, [frame(ALL, tcp(ACK_F), t=2), frame(ALL, tcp(ACK_F), t=2),
                             frame(ALL, tcp(PSH_ACK, msg(ACK, struct.pack("<Q", 4096))), t=2)]),
    "nokey-ctl": (0x0b, [frame(ALL, tcp(PSH_ACK, ctl(1, CTL_STATUS, tag=False)))]),
    # the session off (auth=off, setup | 32) and encrypted (encrypt=on, | 64)
    "auth-off": (0x23, [frame(ALL, tcp(PSH_ACK, ctl(1, CTL_STATUS, tag=False) + msg(ACK, struct.pack("<Q", 0), tag=False)))]),
    "encrypted": (0x43, [frame(ALL, tcp(PSH_ACK, ctl(1, CTL_PING, b"secret") + msg(ACK, struct.pack("<Q", 0))))]),
    "bad-session-tag": (3, [frame(TCP_FIX | CSUM_FIX, tcp(PSH_ACK, msg(ACK, struct.pack("<Q", 0))))]),
    "drop-mode": (0x07, [frame(ALL, tcp(ACK_F))]),
    # from boot (setup 0): ARP and ICMP, a handshake the fuzzer must complete itself
    "arp-request": (0, [frame(0, arp(1, COLL_MAC, COLL_IP, bytes(6), OUR_IP, b"\xff" * 6))]),
    "arp-reply": (0, [frame(0, arp(2, COLL_MAC, COLL_IP, OUR_MAC, OUR_IP, OUR_MAC)),
                      frame(TCP_FIX | CSUM_FIX, tcp(SYN_ACK))]),
    "ping": (3, [frame(CSUM_FIX, eth(0x0800, ipv4(1, struct.pack(">BBHHH", 8, 0, 0, 1, 1) + b"ping" * 8)))]),
    "ip-options": (3, [frame(CSUM_FIX, eth(0x0800, struct.pack(">BBHHHBBH4s4s", 0x46, 0, 32, 1, 0, 64, 6, 0, COLL_IP, OUR_IP) + b"\x01\x01\x01\x00" + bytes(8)))]),
    "ip-fragment": (3, [frame(CSUM_FIX, eth(0x0800, struct.pack(">BBHHHBBH4s4s", 0x45, 0, 28, 1, 0x2000, 64, 1, 0, COLL_IP, OUR_IP) + bytes(8)))]),
    "broadcast": (3, [frame(CSUM_FIX, eth(0x0800, ipv4(1, struct.pack(">BBHHH", 8, 0, 0, 1, 1), dst=bytes([10, 0, 2, 255])), dst=b"\xff" * 6))]),
    # device-written descriptor fields
    "dev-long-length": (3, [frame(ALL, tcp(ACK_F), dev=(0x03, 0, 0xffff))]),
    "dev-max-buffer": (3, [frame(ALL, tcp(ACK_F), dev=(0x03, 0, 2048)), frame(ALL, tcp(ACK_F), dev=(0x03, 0, 2049))]),
    "dev-errors-no-eop": (3, [frame(ALL, tcp(ACK_F), dev=(0x01, 0x80, 60)), frame(ALL, tcp(ACK_F), dev=(0x03, 0x01, 60))]),
    "dev-short": (3, [frame(ALL, tcp(ACK_F), dev=(0x03, 0, 10)), frame(0, b"", dev=(0x03, 0, 0))]),
    # frames piled up without a poll: more than a poll's budget (64), the ring's end
    "pile-up": (3, [frame(ALL | NO_POLL, tcp(ACK_F)) for _ in range(70)] + [frame(ALL, tcp(ACK_F))]),
}

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name, (setup, frames) in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([setup]) + b"".join(frames))
print(f"make-lwip-seeds: {len(seeds)} seeds in {out}")
