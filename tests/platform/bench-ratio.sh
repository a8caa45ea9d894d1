#!/usr/bin/env bash
# bench-ratio.sh - compare two bench runs (hvt_mode=bench): the guest TSC printed by init at
# its start ("HVT-INIT: start tsc=N"). In Bochs the TSC counts retired instructions: with one
# CPU exactly; with N CPUs it advances by the average per CPU in each scheduling round (a
# halted CPU counts as the SMP quantum, 16) - so a CPU that spins instead of halting shows.
# Also shown: the part after the loader started ("hvtrace: loader started (tsc N)"), i.e.
# without the firmware's ~1.07e9 instructions, which the hypervisor cannot affect.
# usage: bench-ratio.sh RUN_WITH RUN_WITHOUT      last line: ratio=<with/without> (whole boot)
set -uo pipefail
with="$1"; without="$2"
tsc() { tr -d '\r' < "$1/serial.log" 2>/dev/null | sed -n 's/^HVT-INIT: start tsc=\([0-9]*\).*/\1/p' | head -n1; }
loader_tsc() { tr -d '\r' < "$1/serial.log" 2>/dev/null | sed -n 's/^hvtrace: loader started (tsc \([0-9]*\)).*/\1/p' | head -n1; }
a=$(tsc "$with"); b=$(tsc "$without")
for r in "$with" "$without"; do
  echo "$(basename "$r"): loader_tsc=$(loader_tsc "$r") init_tsc=$(tsc "$r") end=$(cat "$r/end" 2>/dev/null) wall_seconds=$(cat "$r/wall_seconds" 2>/dev/null)"
done
if [ -z "$a" ] || [ -z "$b" ]; then
  echo "bench-ratio: a run did not reach init"; echo "ratio=unknown"; exit 1
fi
la=$(loader_tsc "$with"); lb=$(loader_tsc "$without")
if [ -n "$la" ] && [ -n "$lb" ]; then
  awk -v a="$a" -v b="$b" -v la="$la" -v lb="$lb" \
    'BEGIN { printf "loader-to-init: with %d without %d instructions, ratio %.4f\n", a - la, b - lb, (a - la) / (b - lb) }'
fi
awk -v a="$a" -v b="$b" 'BEGIN { r = a / b; printf "goal ratio <= 1.05: %s\nratio=%.4f\n", (r <= 1.05 ? "met" : "NOT met"), r }'
