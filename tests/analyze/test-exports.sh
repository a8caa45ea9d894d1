#!/usr/bin/env bash
# make test-exports: hvt export's three formats read back by readers hvtrace did not write, with
# counts equal to the analyzer's own on the same trace (a trace `hvt gen` walks from the pinned
# cloud kernel's code: system calls, an interrupt, an exception, context switches, 2 CPUs):
#   --ctf         babeltrace2 (Debian) prints every event back: per event type as many lines as
#                 the analyzer's listing and nesting have (insn, call/ret/resume = "->"/"<-"/"=>",
#                 syscall_entry, syscall_exit = sysret instructions, irq_entry, sched_switch), and
#                 the insn events are the listing's instructions, per CPU in order
#   --perfetto    Chrome JSON: TracerBench's trace model (npm) pairs every B with its E per thread
#                 (slices = "->" + "=>" lines, function names equal), names every thread, and has
#                 the instants of the listing's markers; speedscope's own importer (npm) takes it
#                 without a warning and finds as many calls
#   --speedscope  valid against speedscope's published schema, folds back to hvt's folded view,
#                 and speedscope's importer weighs it at the trace's instruction count
# Then a truncated trace (generated one only): every export exits 1 naming the damage, and what it
# wrote still reads.
# env EXPORT_TRACE=FILE EXPORT_VMLINUZ=VMLINUZ: the same checks on that trace (a real one from a
#   Bochs run: make test-trace) instead of a generated one; EXPORT_MARKS=1: PASS/FAIL lines only,
#   no summary line (inside another test's output, whose own marks a summary would replace).
# Prints PASS/FAIL lines and ends with "test-exports: N passed, N failed"; exits 0 only if
# nothing failed.
set -uo pipefail
HVT="$(realpath "${1:-build/host/hvt}")"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY=/usr/bin/python3   # Debian's, with python3-jsonschema
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok()   { echo "PASS $*"; pass=$((pass + 1)); }
bad()  { echo "FAIL $*"; fail=$((fail + 1)); }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
same()  { check "$1: $2 = $3" [ "$2" = "$3" ]; }   # what, reader's count, analyzer's count
pyrun() { local line; while IFS= read -r line; do
            case "$line" in PASS*) ok "${line#PASS }";; FAIL*) bad "${line#FAIL }";; *) echo "$line";; esac
          done < <("$PY" "$HERE/export_checks.py" "$@" 2>&1; echo "EXIT $?") ; }
finish() { [ "${EXPORT_MARKS:-0}" = 1 ] || echo "test-exports: $pass passed, $fail failed"; [ "$fail" = 0 ]; exit; }

if [ -n "${EXPORT_TRACE:-}" ]; then
  V="${EXPORT_VMLINUZ:?EXPORT_TRACE needs EXPORT_VMLINUZ}"
else
  read -r pkg ver < <(grep -v '^#' "$ROOT/tests/analyze/kernels.txt" | head -1)
  V="$(bash "$ROOT/tests/platform/fetch-kernel.sh" "$pkg" "$ver")" || { bad "fetch $pkg $ver"; finish; }
fi
NM="$(bash "$HERE/export-readers.sh")" || { bad "install the npm readers (export-readers.sh)"; finish; }
SS="$NM/speedscope/dist/release"
command -v babeltrace2 > /dev/null || { bad "babeltrace2 installed (tests/platform/deps.sh)"; finish; }
read_js() { NODE_PATH="$NM" node "$HERE/export_read.js" "$@"; }

# the trace and the analyzer's own counts
if [ -n "${EXPORT_TRACE:-}" ]; then
  cp "$EXPORT_TRACE" "$T/g.hvt"; what="trace $(basename "$(dirname "$(dirname "$EXPORT_TRACE")")")/${EXPORT_TRACE##*/}"
else
  "$HVT" gen --seed 5 --insns 100000 --cpus 2 "$V" "$T/g.hvt" 2> /dev/null; what="generated trace"
fi
check "exports: $what to read" [ -s "$T/g.hvt" ]
A=("$HVT" analyze --vmlinuz "$V")
"${A[@]}" --view list "$T/g.hvt" > "$T/list"
"${A[@]}" --view nest "$T/g.hvt" > "$T/nest"
"${A[@]}" --view folded "$T/g.hvt" > "$T/folded"
# one pass over each view: instruction lines, "# tsc cpu what" markers by their first word,
# sysret/sysexit instructions, CPUs; the nest's arrows
awk '$1 == "#" { print "mark_" $4; next } { print "insn"; print "cpu_" $2 } $7 ~ /^sys(ret|exit)/ { print "sysret" }' \
  "$T/list" | sort | uniq -c | awk '{ print $2, $1 }' > "$T/list.counts"
awk '$2 == "->" || $2 == "<-" || $2 == "=>" { print $2 }' "$T/nest" | sort | uniq -c | awk '{ print $2, $1 }' > "$T/nest.counts"
key() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$2"; }
marks() { key "mark_$1" "$T/list.counts"; }
arrows() { key "$1" "$T/nest.counts"; }
insns=$(key insn "$T/list.counts")
n_sys=$(marks syscall); n_int=$(marks interrupt); n_exc=$(marks exception); n_nmi=$(marks nmi)
n_sw=$(marks switch); n_state=$(( $(marks start) + $(marks stop) + $(marks gap:) )); n_vmx=$(marks vm)
ncpus=$(grep -c '^cpu_' "$T/list.counts")
n_call=$(arrows '->'); n_ret=$(arrows '<-'); n_res=$(arrows '=>')
n_sysret=$(key sysret "$T/list.counts")
echo "test-exports: trace: $insns instructions, $n_call calls, $n_ret returns, $n_res restated frames," \
     "$n_sys syscalls, $n_sysret sysrets, $n_int interrupts, $n_exc exceptions, $n_sw switches"
[ -n "${EXPORT_TRACE:-}" ] ||
  check "the trace has each kind of event (instructions, calls, syscalls, interrupts, exceptions, switches)" \
    [ "$insns" -gt 10000 -a "$n_call" -gt 0 -a "$n_sys" -gt 0 -a "$n_int" -gt 0 -a "$n_exc" -gt 0 -a "$n_sw" -gt 0 ]

# 1. CTF, read back by babeltrace2
"$HVT" export --ctf --vmlinuz "$V" -o "$T/ctf" "$T/g.hvt"
check "hvt export --ctf: exit 0, metadata and one stream per CPU ($ncpus)" \
  [ $? = 0 -a -s "$T/ctf/metadata" -a "$(ls "$T/ctf" | grep -c '^stream_')" = "$ncpus" ]
babeltrace2 --log-level=WARNING --clock-cycles "$T/ctf" > "$T/bt" 2> "$T/bt.err"
check "babeltrace2 reads the CTF trace (exit 0, $(wc -l < "$T/bt") lines), no warning ($(head -c 200 "$T/bt.err"))" \
  [ $? = 0 -a -s "$T/bt" -a ! -s "$T/bt.err" ]
npk=$(babeltrace2 -c source.ctf.fs --params="inputs=[\"$T/ctf\"]" -c sink.utils.counter 2>&1 |
      awk '$2 == "Packet" && $3 == "beginning" { n = $1 } END { print n + 0 }')   # its last (total) count
if [ -n "${EXPORT_TRACE:-}" ]; then
  check "babeltrace2 reads the packets: $npk" [ "$npk" -ge "$ncpus" ]
else   # the generated trace's streams are larger than one 1 MiB packet
  check "babeltrace2 reads the packets: $npk, more than one per CPU" [ "$npk" -gt "$ncpus" ]
fi
# "[cycles] (+delta) NAME: { cpu_id = N }, { fields }"
awk '$3 ~ /^[a-z_]+:$/ && $4 == "{" { n[substr($3, 1, length($3) - 1)]++ } END { for (k in n) print k, n[k] }' \
  "$T/bt" > "$T/bt.counts"
check "babeltrace2: every line is an event" [ "$(awk '{ s += $2 } END { print s + 0 }' "$T/bt.counts")" = "$(wc -l < "$T/bt")" ]
same "babeltrace2 insn events = listing instructions" "$(key insn "$T/bt.counts")" "$insns"
same "babeltrace2 call events = nest '->'" "$(key call "$T/bt.counts")" "$n_call"
same "babeltrace2 ret events = nest '<-'" "$(key ret "$T/bt.counts")" "$n_ret"
same "babeltrace2 resume events = nest '=>'" "$(key resume "$T/bt.counts")" "$n_res"
same "babeltrace2 syscall_entry events = syscall markers" "$(key syscall_entry "$T/bt.counts")" "$n_sys"
same "babeltrace2 syscall_exit events = sysret instructions" "$(key syscall_exit "$T/bt.counts")" "$n_sysret"
same "babeltrace2 irq_entry events = interrupt+exception+nmi markers" "$(key irq_entry "$T/bt.counts")" \
  "$((n_int + n_exc + n_nmi))"
same "babeltrace2 sched_switch events = switch markers" "$(key sched_switch "$T/bt.counts")" "$n_sw"
same "babeltrace2 trace_state events = start+stop+gap markers" "$(key trace_state "$T/bt.counts")" "$n_state"
same "babeltrace2 vm_exit events = vm exit markers" "$(key vm_exit "$T/bt.counts")" "$n_vmx"
pyrun ctf-insns "$T/bt" "$T/list"

# 2. Chrome JSON (Perfetto), read by TracerBench's model and speedscope's importer
"$HVT" export --perfetto --vmlinuz "$V" -o "$T/g.json" "$T/g.hvt"
check "hvt export --perfetto: exit 0" [ $? = 0 -a -s "$T/g.json" ]
read_js model "$T/g.json" "$T/json.names" > "$T/model" 2>&1
check "TracerBench's trace model reads the file" [ $? = 0 ]
same "model: call and resumed slices (paired B/E) = nest '->' + '=>'" \
  "$(( $(key slices_call "$T/model") + $(key slices_resumed "$T/model") ))" "$((n_call + n_res))"
same "model: unpaired B or E events" "$(key unpaired "$T/model")" 0
same "model: threads without a name" "$(key unnamed_threads "$T/model")" 0
same "model: syscall instants = syscall markers" "$(key instant_syscall "$T/model")" "$n_sys"
same "model: interrupt instants = interrupt markers" "$(key instant_interrupt "$T/model")" "$n_int"
same "model: exception instants = exception markers" "$(key instant_exception "$T/model")" "$n_exc"
same "model: nmi instants = nmi markers" "$(key instant_nmi "$T/model")" "$n_nmi"
same "model: trace state instants = start+stop+gap markers" "$(key instant_trace "$T/model")" "$n_state"
same "model: CPU-track slices at a switch = switch markers" "$(key slices_switch "$T/model")" "$n_sw"
awk '$2 == "->" || $2 == "=>" { print $3 }' "$T/nest" | sort > "$T/nest.names"
check "model: the slices' function names are the nest's, one for one" cmp -s "$T/json.names" "$T/nest.names"
read_js speedscope "$SS" "$T/g.json" > "$T/ss.json.out" 2>&1
check "speedscope's importer reads the Chrome JSON" [ $? = 0 ]
same "speedscope: warnings while importing the Chrome JSON" "$(key warnings "$T/ss.json.out")" 0
same "speedscope: calls on the thread tracks = nest '->' + '=>'" "$(key calls "$T/ss.json.out")" "$((n_call + n_res))"

# 3. speedscope's file format
"$HVT" export --speedscope --vmlinuz "$V" -o "$T/g.ss.json" "$T/g.hvt"
check "hvt export --speedscope: exit 0" [ $? = 0 -a -s "$T/g.ss.json" ]
pyrun speedscope "$T/g.ss.json" "$SS/file-format-schema.json" "$T/folded"
read_js speedscope "$SS" "$T/g.ss.json" > "$T/ss.out" 2>&1
check "speedscope's importer reads the speedscope file" [ $? = 0 ]
same "speedscope: total weight = the trace's instructions" "$(key weight "$T/ss.out")" "$insns"
same "speedscope: warnings while importing" "$(key warnings "$T/ss.out")" 0

# 4. a damaged trace: exit 1 naming the damage, what was written still reads (once, here);
#    an earlier export's directory is reused without its stale streams, any other is refused
[ -n "${EXPORT_TRACE:-}" ] && finish
mkdir -p "$T/old" "$T/mine"; touch "$T/old/metadata" "$T/old/stream_5" "$T/mine/notes" "$T/mine/stream_0"
"$HVT" export --ctf --vmlinuz "$V" -o "$T/old" "$T/g.hvt" 2> /dev/null
check "--ctf into an earlier export's directory: its stale stream_5 is gone, babeltrace2 reads it" \
  bash -c "[ ! -e '$T/old/stream_5' ] && babeltrace2 '$T/old' > /dev/null"
"$HVT" export --ctf --vmlinuz "$V" -o "$T/mine" "$T/g.hvt" 2> "$T/mine.err"; rc=$?
check "--ctf into a directory holding other files: exit 1, nothing removed" \
  bash -c "[ $rc = 1 ] && [ -e '$T/mine/notes' ] && [ -e '$T/mine/stream_0' ] && grep -q 'not a CTF export' '$T/mine.err'"
size=$(stat -c %s "$T/g.hvt")
head -c $((size * 2 / 3)) "$T/g.hvt" > "$T/cut.hvt"
for fmt in ctf perfetto speedscope; do
  out="$T/cut.$fmt"
  "$HVT" export --$fmt --vmlinuz "$V" -o "$out" "$T/cut.hvt" > /dev/null 2> "$T/cut.err"; rc=$?
  check "truncated trace: --$fmt exits 1 and names the file and offset" \
    bash -c "[ $rc = 1 ] && grep -q 'cut.hvt: offset' '$T/cut.err'"
done
babeltrace2 "$T/cut.ctf" > /dev/null 2>&1
check "truncated trace: babeltrace2 still reads the CTF written" [ $? = 0 ]
read_js model "$T/cut.perfetto" > "$T/cut.model" 2>&1
check "truncated trace: the JSON written still reads, every B with its E" \
  bash -c "[ \$(awk '\$1 == \"unpaired\"' '$T/cut.model' | wc -l) = 0 ] && grep -q slices_call '$T/cut.model'"
finish
