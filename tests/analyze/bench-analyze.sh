#!/usr/bin/env bash
# make bench-analyze, one core (pinned): on a trace walked from the pinned cloud kernel's own code
# (hvt gen, BENCH_INSNS instructions, cached under build/host/bench/):
#   recs_per_s       decode (capstone behind the cache) + symbolize + nest (with folded-stack
#                    counts) over the first 6 M records, already in memory, fresh cache
#   capstone_per_s   capstone alone (detail off, cs_disasm_iter) on the same instructions
#   file_recs_per_s  the whole file end to end: read, CRC, zstd, decode, symbolize, nest
# Last line: "recs_per_s=<n> capstone_per_s=<n> speedup=<x> file_recs_per_s=<n>".
set -euo pipefail
HVT="$(realpath "${1:-build/host/hvt}")"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
N="${BENCH_INSNS:-30000000}"
OUT="$ROOT/build/host/bench"
mkdir -p "$OUT"
V="$(bash "$ROOT/tests/platform/fetch-kernel.sh")"
TRACE="$OUT/bench-$N.hvt"
[ -s "$TRACE" ] || "$HVT" gen --seed 42 --insns "$N" "$V" "$TRACE"
echo "trace: $TRACE ($(stat -c %s "$TRACE") bytes)"
CPU="$(taskset -pc $$ 2>/dev/null | awk -F': ' '{ print $2 }' | cut -d, -f1 | cut -d- -f1)"
taskset -c "${CPU:-0}" "$HVT" bench --vmlinuz "$V" "$TRACE"
