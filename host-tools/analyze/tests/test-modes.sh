#!/usr/bin/env bash
# test-modes.sh - the record modes end to end on the host: mode_trace writes the same walk of a
# small real program (REP STOSB, a counted loop, a call, interrupts) with the host trace writer
# in FULL, FLOW and REGS modes; hvt-check and `hvt analyze` must read every one alike:
#   - hvt-check: violations=0, the same instruction count, modes= naming the mode;
#   - the listing (file order) is the FULL one's without registers (FLOW) or with only the
#     set's registers (REGS), plus the "record mode" marker line; nesting identical;
#   - a broken walk (one call falling through) is a violation in every mode, at the same place;
#   - hvt export's CTF (read back by babeltrace2: one insn event per instruction), Perfetto
#     JSON and speedscope files are the FULL trace's in every mode;
#   - FLOW is smaller than FULL.
# Usage: test-modes.sh BUILD_HOST_DIR. Closing line: "test-modes: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"
GEN="$B/mode_trace"; CHECK="$B/hvt-check"; HVT="$B/hvt"
W=$(mktemp -d /tmp/hvt-modes.XXXXXX)
trap 'rm -rf "$W"' EXIT
pass=0; fail=0
ok()   { pass=$((pass+1)); echo "ok   $*"; }
bad()  { fail=$((fail+1)); echo "FAIL $*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
field() { tail -1 "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

for m in full flow regs=rax:rcx; do
  f="$W/${m%%=*}"
  "$GEN" --mode "$m" "$f.hvt" >/dev/null || bad "mode_trace --mode $m"
  "$GEN" --mode "$m" --break "$f-broken.hvt" >/dev/null || bad "mode_trace --mode $m --break"
  "$CHECK" "$f.hvt" > "$f.check"; echo $? > "$f.rc"
  "$CHECK" "$f-broken.hvt" > "$f-broken.check"; echo $? > "$f-broken.rc"
  "$HVT" analyze --view list --file-order "$f.hvt" > "$f.list" 2>"$f.err"; echo $? >> "$f.rc"
  "$HVT" analyze --view nest --file-order "$f.hvt" > "$f.nest" 2>>"$f.err"
  "$HVT" analyze --view summary "$f.hvt" > "$f.summary" 2>>"$f.err"
done
n=$(field "$W/full.check" insns)
check "full: hvt-check passes (violations=0 over ${n:-?} instructions), modes=full:$n" \
  test "$(cat "$W/full.rc" | tr '\n' ' ')" = "0 0 " -a "$(field "$W/full.check" modes)" = "full:$n"
check "flow: hvt-check passes, the same ${n:-?} instructions, modes=flow:$n" \
  test "$(cat "$W/flow.rc" | tr '\n' ' ')" = "0 0 " -a "$(field "$W/flow.check" insns)" = "$n" -a \
       "$(field "$W/flow.check" modes)" = "flow:$n"
check "regs: hvt-check passes, the same instructions, says the set (modes=regs:$n regs=rax:rcx)" \
  bash -c "test '$(tr '\n' ' ' < "$W/regs.rc")' = '0 0 ' && tail -1 '$W/regs.check' | grep -q ' insns=$n .*modes=regs:$n regs=rax:rcx'"
check "the walk has REP iterations, a loop, calls and interrupts (full listing: stos, jne, call, ret, iretq)" \
  bash -c "for w in stos jne call ret iretq; do grep -q \" \$w\" '$W/full.list' || exit 1; done"
# The FULL listing with its register annotations cut is every mode's instruction listing (the
# CONTEXT restatements differ: each mode's chunks end elsewhere).
insns_of() { grep -v -e '^# .* record mode ' -e '^# [0-9]* [0-9]* context ' "$1" | sed 's/  ;.*//'; }
check "flow: listing = full's without registers" cmp <(insns_of "$W/full.list") <(insns_of "$W/flow.list")
check "flow: no register shown (all stale), one mode line" \
  bash -c "! grep -q '  ;' '$W/flow.list' && test \$(grep -c '^# .* record mode flow\$' '$W/flow.list') = 1"
check "regs: listing = full's, instructions the same" cmp <(insns_of "$W/full.list") <(insns_of "$W/regs.list")
check "regs: only rax and rcx shown, as full shows them" \
  bash -c "cmp <(grep -v '^#' '$W/full.list' | sed -n 's/.*  ;//p' | tr ' ' '\n' | grep -E '^(rax|rcx)=' ) \
               <(grep -v '^#' '$W/regs.list' | sed -n 's/.*  ;//p' | tr ' ' '\n' | grep . )"
check "regs: the mode line names the set" grep -q '^# .* record mode regs=rax:rcx$' "$W/regs.list"
check "nesting identical in every mode" bash -c "cmp '$W/full.nest' '$W/flow.nest' && cmp '$W/full.nest' '$W/regs.nest'"
check "summary says the mode (record modes: flow $n insns)" grep -q "^record modes: flow $n insns\$" "$W/flow.summary"
check "no errors from hvt analyze" bash -c "! test -s '$W/full.err' && ! test -s '$W/flow.err' && ! test -s '$W/regs.err'"
v=$(grep '^violation:' "$W/full-broken.check")
check "broken walk: full finds the violation (${v:-none})" \
  test "$(cat "$W/full-broken.rc")" = 1 -a "$(field "$W/full-broken.check" violations)" = 1
check "broken walk: flow finds the same violation (the instruction inside a RUN)" \
  bash -c "test '$(cat "$W/flow-broken.rc")' = 1 && test '$(grep '^violation:' "$W/flow-broken.check")' = '$v'"
check "broken walk: regs finds the same violation" \
  bash -c "test '$(cat "$W/regs-broken.rc")' = 1 && test '$(grep '^violation:' "$W/regs-broken.check")' = '$v'"
# The mode changed halfway, mid-chunk: full then flow, flow then full.
"$GEN" --mode full --then flow "$W/full-flow.hvt" >/dev/null
"$GEN" --mode flow --then full "$W/flow-full.hvt" >/dev/null
for m in full-flow flow-full; do
  "$CHECK" "$W/$m.hvt" > "$W/$m.check"; echo $? > "$W/$m.rc"
  "$HVT" analyze --view list --file-order "$W/$m.hvt" > "$W/$m.list" 2>>"$W/$m.err"
done
a=$(field "$W/full-flow.check" modes)
check "full then flow: hvt-check passes, modes=$a add up to $n" \
  bash -c "test '$(cat "$W/full-flow.rc")' = 0 && echo '$a' | grep -qE '^full:[0-9]+,flow:[0-9]+\$' && \
           test \$(( $(echo "$a" | sed 's/full:\([0-9]*\),flow:\([0-9]*\)/\1 + \2/') )) = $n"
# half_regs LIST MODE_LINE: the instructions before the mode line with registers, after it
half_regs() { sed -n "1,/$2/p" "$1" | grep -c '  ;'; sed -n "/$2/,\$p" "$1" | grep -c '  ;'; }
check "full then flow: listing = full's, one mode line, registers before the switch only" \
  test "$(cmp <(insns_of "$W/full.list") <(insns_of "$W/full-flow.list")) $(grep -c 'record mode' "$W/full-flow.list") \
$(half_regs "$W/full-flow.list" 'record mode flow' | sed 's/^[1-9][0-9]*$/some/' | tr '\n' ' ')" = " 1 some 0 "
check "flow then full: hvt-check passes; listing says flow, then full; registers after the switch only" \
  test "$(cat "$W/flow-full.rc") $(cmp <(insns_of "$W/full.list") <(insns_of "$W/flow-full.list"))\
$(grep -o 'record mode .*' "$W/flow-full.list" | tr '\n' ' ')\
$(half_regs "$W/flow-full.list" 'record mode full' | sed 's/^[1-9][0-9]*$/some/' | tr '\n' ' ')" = \
       "0 record mode flow record mode full 0 some "

# The exports (hvt export) from every mode: babeltrace2 reads the CTF back with one insn event
# per instruction, and every format's output is the FULL trace's (they show no registers).
for m in full flow regs; do
  "$HVT" export --ctf -o "$W/$m.ctf" "$W/$m.hvt" 2>>"$W/export.err"
  "$HVT" export --perfetto -o "$W/$m.json" "$W/$m.hvt" 2>>"$W/export.err"
  "$HVT" export --speedscope -o - "$W/$m.hvt" 2>>"$W/export.err" | sed "s/$m\.hvt/TRACE/g" > "$W/$m.ss"
  babeltrace2 "$W/$m.ctf" > "$W/$m.bt" 2>>"$W/export.err"
done
check "ctf: babeltrace2 reads $n insn events from the full, flow and regs exports" \
  test "$(grep -c ' insn: ' "$W/full.bt") $(grep -c ' insn: ' "$W/flow.bt") $(grep -c ' insn: ' "$W/regs.bt")" = "$n $n $n"
check "ctf, perfetto, speedscope: flow's and regs' exports equal full's" \
  bash -c "for m in flow regs; do cmp '$W/full.bt' '$W/'\$m.bt && cmp '$W/full.json' '$W/'\$m.json && cmp '$W/full.ss' '$W/'\$m.ss || exit 1; done"
check "exports: no errors" test ! -s "$W/export.err"
fs=$(stat -c %s "$W/full.hvt"); ws=$(stat -c %s "$W/flow.hvt")
check "flow file smaller than full ($ws < $fs bytes)" test "$ws" -lt "$fs"
echo "test-modes: $pass passed, $fail failed"
[ "$fail" = 0 ]
