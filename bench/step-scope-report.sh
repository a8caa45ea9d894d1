#!/usr/bin/env bash
# step-scope-report.sh RUN_DIR HVT_IMPORT HVT_CHECK HVT VMLINUZ - bench-step's scoped figures
# from one test-trace-scope run (tests/trace/check-scope.sh judges it and computes them):
#   exits_per_traced_insn  every VM exit of every CPU in the window (the fast path's too) per
#                          instruction recorded for getpid-loop (scope=comm:getpid-loop)
#   context_switches       switches into getpid-loop that resumed stepping (switch probe)
#   extra_exits_per_switch (exits - traced instructions) / context switches
#   other_rate_ratio       the other CPU's guest share (its spinner) traced / untraced
set -uo pipefail
out=$(bash "$(dirname "$0")/../tests/trace/check-scope.sh" "$@" 2>&1); st=$?
figs=$(grep -E "^(exits_per_traced_insn|other_rate_ratio)=" <<< "$out")
echo "$figs"; grep "^check-scope" <<< "$out"
kv() { tr ' ' '\n' <<< "$figs" | sed -n "s/^$1=\([0-9.a-z]*\)$/\1/p" | head -1; }
echo "exits_per_traced_insn=$(kv exits_per_traced_insn) context_switches=$(kv context_switches)" \
     "extra_exits_per_switch=$(kv extra_exits_per_switch) other_rate_ratio=$(kv other_rate_ratio)" \
     "traced_insns=$(kv traced_insns)"
exit $st
