#!/usr/bin/env bash
# Seed corpora for the net fuzzers: valid streams and control requests written by the unit
# test binary (NET_SEED_DIR), so the fuzzers start from inputs that pass framing and tags.
set -euo pipefail
B="$1"
mkdir -p "$B/fuzz/seeds/coll_parse" "$B/fuzz/seeds/ctl"
make -s "$B/test_net" >/dev/null
NET_SEED_DIR="$B/fuzz/seeds" "$B/test_net" >/dev/null

# coll_trace: a CODE batch (2 entries), a RECORDS batch (START, one instruction, STOP), a META
# and a BYE, in fuzz_coll_trace.c's message encoding {selector, cpu, u16 length, payload}.
mkdir -p "$B/fuzz/seeds/coll_trace"
python3 - "$B/fuzz/seeds/coll_trace/valid" <<'PY'
import struct, sys
meta = b"lstar=ffffffff81c00080\ncpus=2\n"
msgs = [(19, 0, bytes([1, 0x90, 3, 0x48, 0x89, 0xd8])),
        (24, 1, bytes([0x85, 1, 0x03, 0x80, 0x40, 0, 0x86, 0])),
        (3, 0, meta), (5, 0, b"")]
open(sys.argv[1], "wb").write(b"".join(struct.pack("<BBH", s, c, len(p)) + p for s, c, p in msgs))
PY
# coll_trace, version 4's records (hvt_trace_format.h): selector 84 = a RECORDS batch of 10
# records, 5 instructions: START, rip 0x1000 (code 0), 0x1001 (code 1, packed RFLAGS CF|ZF),
# back to 0x1000 moving RCX RSI RDI and a wide RFLAGS, REPEAT 1 (its deltas again), a short U32
# RAX with bit 31 set and packed RFLAGS, SYSCALL, TIME, VMEXIT, STOP.
python3 - "$B/fuzz/seeds/coll_trace/v4" <<'PY'
import struct, sys
rec = bytes([0x85, 1, 0x03, 0x80, 0x40, 0, 0x22, 1, 0x09,
             0x31, 7, 0xc2, 0x01, 1, 2, 2, 0x40, 0x84, 0x08, 0x8c, 1, 0,
             0x70, 0xef, 0xcd, 0xab, 0x89, 0x3f, 0x82, 39, 0x88, 0xf4, 0x03, 0x83, 48, 0, 0x86, 0])
msgs = [(19, 0, bytes([1, 0x90, 3, 0x48, 0x89, 0xd8])), (84, 1, rec), (5, 0, b"")]
open(sys.argv[1], "wb").write(b"".join(struct.pack("<BBH", s, c, len(p)) + p for s, c, p in msgs))
PY
