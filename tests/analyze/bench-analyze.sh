#!/usr/bin/env bash
# make bench-analyze: records/s of decode + symbolize + nest (hvt's pipeline, from the trace
# file: read, decompress, decode through the cache, symbolize, nest, fold stacks) next to
# capstone's raw decode rate (detail off, cs_disasm_iter) on the same records, same run, one core.
# The trace is walked from the pinned cloud kernel's own code (hvt gen), BENCH_INSNS long.
# Last line: "recs_per_s=<n> capstone_per_s=<n> ...".
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
