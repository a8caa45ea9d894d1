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
