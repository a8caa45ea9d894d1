#!/usr/bin/env bash
# Host test of D programs end to end (no Bochs): hvt compiles the program, loads it through
# hvtrace-collector into fake_hv, whose D engine is the hypervisor's own verifier and
# interpreter (trace/dvm/dif_*.c) fired by synthetic firings (tests/net/fake_hv_d.c: firing k has
# arg0 = k, arg1 = 2k, arg2 = k % 7, pid 100 + k % 3, execname alpha/beta/gamma by k % 3, and
# curthread points at the string "fake-string"); hvt prints what the records and aggregation
# snapshots say. Every expected figure below is computed from that definition.
# The programs are tests/d/programs/NAME.d, each run once (those the sections below do not name
# too). Their first line says how: /* fires: N  [env: VAR=VALUE]  [args: hvt options] */ (in
# args, ${P} is the programs' folder, ${W} the test's scratch folder and ${AT} vfs_read+5's
# address in the kernel); a program
# for the Bochs tests says /* vm: SCRIPT ... */ instead and is not run here. NAME.r beside a
# program is its whole expected output, compared exactly after the checks below.
# D_COLL_SAVE=DIR keeps every program's output in DIR/NAME.out (to write a new NAME.r).
# Usage: test-d-coll.sh BUILD_HOST_DIR VMLINUZ. Closing line: "test-d-coll: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"; VMLINUZ="${2:-build/test/vmlinuz}"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"; HVT="$B/hvt"
P="$(cd "$(dirname "$0")" && pwd)/programs"
W=$(mktemp -d /tmp/hvt-d-coll.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/../net/test-lib.sh"
CLEANUP_DIR="$W"
AT=""
declare -A RAN

# run NAME: fake_hv --d FIRES + hvt -s programs/NAME.d [args], as its first line says; output in
# $W/NAME.{out,err,rc}
run() {
  local name="$1" f="$P/$1.d" hdr fires="" env="" args=""
  local re_fires='fires: *([0-9]+)' re_env='env: *([^ ]+)' re_args='args: *(.*[^ ]) *\*/'
  hdr=$(head -1 "$f")
  [[ $hdr =~ $re_fires ]] && fires=${BASH_REMATCH[1]}
  [[ $hdr =~ $re_env ]] && env=${BASH_REMATCH[1]}
  [[ $hdr =~ $re_args ]] && args=${BASH_REMATCH[1]}
  args=${args//'${P}'/$P}; args=${args//'${AT}'/$AT}; args=${args//'${W}'/$W}
  RAN[$name]=1
  if [ -z "$fires" ]; then
    echo "FAIL $name: $f has no '/* fires: N ... */' first line"; fail=$((fail + 1)); return
  fi
  start_coll "$W/$name" "$W/$name-coll.log" --exit-on-bye
  "$FAKE" --port "$PORT" --key "$KEY" --cpus 2 --d "$fires" --timeout 60 >"$W/$name-fake.out" 2>&1 &
  FPID=$!; PIDS+=("$FPID")
  for _ in $(seq 50); do grep -q "connection" "$W/$name-coll.log" && break; sleep 0.1; done
  # shellcheck disable=SC2086  # args: one hvt option per word
  env $env "$HVT" -s "$f" --vmlinuz "$VMLINUZ" -d "$W/$name" --duration 3 --drain 20 $args \
    >"$W/$name.out" 2>"$W/$name.err"
  echo $? > "$W/$name.rc"
  wait "$FPID"; wait "$CPID" 2>/dev/null
  [ -n "${D_COLL_SAVE:-}" ] && mkdir -p "$D_COLL_SAVE" && cp "$W/$name.out" "$D_COLL_SAVE/$name.out"
}
# the value printed for key K of a one-key aggregation (DTrace's "  key   value" lines)
val() { awk -v k="$2" '$1 == k && NF == 2 { print $2 }' "$1"; }

# 1. aggregations over 3000 firings on 2 CPUs: count, sum, min, max, avg by key, quantize
N=3000
run agg
cat "$W/agg.out"
sum_of() { python3 -c "print(sum(k for k in range($N) if k % 3 == $1))"; }
check "agg: matched 1 probe ($(head -1 "$W/agg.err"))" grep -q "hvt: script .* matched 1 probe" "$W/agg.err"
check "agg: count per execname 1000 each ($(val "$W/agg.out" alpha | head -1), ...)" \
  bash -c "test \"\$(awk '\$1 ~ /^(alpha|beta|gamma)\$/ && \$2 == 1000' '$W/agg.out' | wc -l)\" = 3"
for i in 0 1 2; do
  name=(alpha beta gamma); want=$(sum_of $i)
  check "agg: sum(arg0) for ${name[$i]} = $want" \
    bash -c "awk '\$1 == \"${name[$i]}\" && \$2 == $want' '$W/agg.out' | grep -q ."
done
want_avg=$(python3 -c "print(sum(k % 7 for k in range($N)) // $N)")
check "agg: max(arg0) = $((N - 1)), min(arg1) = 0, avg(arg2) = $want_avg" \
  bash -c "grep -qE '^ +$((N - 1))\$' '$W/agg.out' && grep -qE '^ +0\$' '$W/agg.out' && grep -qE '^ +$want_avg\$' '$W/agg.out'"
# quantize: the count in each power-of-two bucket, from the definition
qwant=$(python3 -c "
import collections
c = collections.Counter(0 if k == 0 else 1 << (k.bit_length() - 1) for k in range($N))
print(' '.join('%d:%d' % (b, c[b]) for b in sorted(c)))")
qgot=$(awk '/Distribution/ { t = 1; next } t && /\|/ { gsub(/\|[@ ]*/, " "); if ($2 > 0) printf "%s:%s ", $1, $2 }' "$W/agg.out" | sed 's/ $//')
check "agg: quantize(arg0) buckets: $qgot" test "$qgot" = "$qwant"
check "agg: the distribution is drawn DTrace's way (header and 40-column bars)" \
  bash -c "grep -qE '^ +value +-+ Distribution -+ count *\$' '$W/agg.out' && grep -qE '^ +1024 \|@{14} {26} 1024 *\$' '$W/agg.out'"
check "agg: exit 0, every record arrived" test "$(cat "$W/agg.rc")" = 0
check "agg: the collector loaded the program and ran END" \
  bash -c "grep -q 'command: d load' '$W/agg-coll.log' && grep -q 'command: d end' '$W/agg-coll.log'"

# 2. a predicate, printf with a guest string, -q, BEGIN
run printf
cat "$W/printf.out"
want=$(python3 -c "
n = ['alpha', 'beta', 'gamma']
print('\n'.join('k=%d name=%s s=fake-string' % (k, n[k % 3]) for k in range(5)))")
check "printf: BEGIN ran first" bash -c "head -1 '$W/printf.out' | grep -qx 'hello from BEGIN'"
check "printf: 5 lines, exactly the firings the predicate lets through" \
  test "$(grep '^k=' "$W/printf.out" | sort)" = "$(sort <<< "$want")"

# 3. a bad address ends that action with DTrace's error, the others go on
run fault
cat "$W/fault.out" "$W/fault.err"
check "fault: two 'invalid address' errors, for 0x7 and 0x9" \
  bash -c "grep -c 'error on enabled probe ID .* invalid address (0x[79])' '$W/fault.err' | grep -qx 2"
check "fault: the other clause printed its value (16)" grep -qE ' 16$' "$W/fault.out"

# 4. exit(): END runs, the status is exit's
run exit
check "exit: status 3 and END ran ($(cat "$W/exit.rc"))" \
  bash -c "test \$(cat '$W/exit.rc') = 3 && grep -qx 'end ran' '$W/exit.out'"

# 5. a full buffer: drops are counted and printed, never silent
run drops
shown=$(grep -cE '^[0-9]+ (alpha|beta|gamma)$' "$W/drops.out")
dropped=$(sed -n 's/^hvt: \([0-9]*\) drops on CPU [0-9]*$/\1/p' "$W/drops.err" | paste -sd+ | bc)
echo "drops: shown $shown, dropped ${dropped:-0}"
check "drops: printed + dropped = 2000 ($shown + ${dropped:-0}), drops reported" \
  bash -c "test '${dropped:-0}' -gt 0 && test $((shown + ${dropped:-0})) = 2000"

# 6. a compile error names the line and column, with a caret; nothing is loaded
printf 'syscall::getpid:entry\n{\n    x = ;\n}\n' > "$W/bad.d"
"$HVT" -s "$W/bad.d" --vmlinuz "$VMLINUZ" -d "$W/none" >"$W/bad.out" 2>"$W/bad.err"; rc=$?
cat "$W/bad.err"
check "compile error: status 1, 'bad.d:3:9: error:' and a caret under column 9" \
  bash -c "test $rc = 1 && grep -q 'bad.d:3:9: error:' '$W/bad.err' && grep -qx '        \\^' '$W/bad.err'"
"$HVT" -n 'syscall::nosuchcall:entry { trace(1); }' --vmlinuz "$VMLINUZ" -d "$W/none" >/dev/null 2>"$W/nomatch.err"; rc=$?
check "no match: DTrace's message, status 1" \
  bash -c "test $rc = 1 && grep -q 'probe description syscall::nosuchcall:entry does not match any probes' '$W/nomatch.err'"
# DTrace options hvt does not do are refused with a reason, never accepted and ignored (the
# program would print other results than it asked for): as -x, as a pragma, as setopt(); the
# one value that is hvt's own behaviour (bufpolicy=switch, bufresize=manual, evaltime=exec) passes
for x in cpu=1 bufpolicy=ring bufpolicy=fill bufresize=auto aggpack grabanon temporal droptags errtags \
         scratchsize=1m evaltime=main; do
  "$HVT" -n 'syscall::getpid:entry { @ = count(); }' -x "$x" --vmlinuz "$VMLINUZ" -d "$W/none" >/dev/null 2>"$W/opt.err"; rc=$?
  check "option $x: refused, status 1 ($(head -1 "$W/opt.err"))" \
    bash -c "test $rc = 1 && grep -q 'error: option $x is not supported by hvtrace: ' '$W/opt.err'"
done
printf '#pragma D option cpu=0\nsyscall::getpid:entry { @ = count(); }\n' > "$W/optcpu.d"
"$HVT" -s "$W/optcpu.d" --vmlinuz "$VMLINUZ" -d "$W/none" >/dev/null 2>"$W/optcpu.err"; rc=$?
check "#pragma D option cpu=0: refused at its line, status 1 ($(head -1 "$W/optcpu.err"))" \
  bash -c "test $rc = 1 && grep -q 'optcpu.d:1:.*option cpu=0 is not supported by hvtrace' '$W/optcpu.err'"
"$HVT" -n 'syscall::getpid:entry { setopt("aggpack"); }' --vmlinuz "$VMLINUZ" -d "$W/none" >/dev/null 2>"$W/optset.err"; rc=$?
check "setopt(\"aggpack\"): refused, status 1 ($(head -1 "$W/optset.err"))" \
  bash -c "test $rc = 1 && grep -q 'option aggpack is not supported by hvtrace' '$W/optset.err'"
for x in bufpolicy=switch bufresize=manual evaltime=exec; do
  "$HVT" -n 'syscall::getpid:entry { @ = count(); }' -x "$x" -e --vmlinuz "$VMLINUZ" >/dev/null 2>"$W/opt.err"; rc=$?
  check "option $x (what hvt does): accepted" test "$rc" = 0
done

# 7. speculations. The classic: speculate at entry, commit at return only for an "error"
# (here arg0 % 10 == 3), discard otherwise. fake_hv arms entry then return, so entry fires at
# even k on CPU 0 and return at odd k on CPU 1: each commit moves both CPUs' parts.
run spec
want=$(python3 -c "
print('\n'.join(l for k in range(0, 1000, 2) if (k + 1) % 10 == 3 for l in ('entry %d' % k, 'return %d' % (k + 1))))")
echo "spec: $(grep -c . "$W/spec.out") lines, e.g. $(head -2 "$W/spec.out" | paste -sd' ')"
check "spec: exactly the 200 committed records (entry k, return k+1 for k+1 = 3 mod 10), none discarded" \
  test "$(grep . "$W/spec.out" | sort)" = "$(sort <<< "$want")"
check "spec: no loss reported, exit 0" bash -c "! grep -q . '$W/spec.err' && test \$(cat '$W/spec.rc') = 0"
# nspec=1 (the default), overlapping: firing k takes the speculation iff k % 5 == 0 (it is
# committed at k % 5 == 4, after that firing's speculation() failed): 200 records, 800 failed
run specfail
failed=$(sed -n 's/^hvt: \([0-9]*\) failed speculations\{0,1\} (no speculative buffer available)$/\1/p' "$W/specfail.err" | paste -sd+ | bc)
echo "specfail: $(grep -c . "$W/specfail.out") committed, ${failed:-0} failed"
check "specfail: the 200 firings k % 5 == 0 committed" \
  test "$(grep . "$W/specfail.out" | sort)" = "$(python3 -c "print('\n'.join(str(k) for k in range(0, 1000, 5)))" | sort)"
check "specfail: 800 failed speculations (no speculative buffer available)" test "${failed:-0}" = 800
# specsize=256 holds 4 records of 56 bytes per CPU: of each 10 firings (5 per CPU) between
# speculation() and commit(), k % 10 <= 7 are kept and 2 are speculative drops
run specdrop
sdrops=$(sed -n 's/^hvt: \([0-9]*\) speculative drops\{0,1\}$/\1/p' "$W/specdrop.err" | paste -sd+ | bc)
echo "specdrop: $(grep -c . "$W/specdrop.out") committed, ${sdrops:-0} speculative drops"
check "specdrop: the 800 firings k % 10 <= 7 committed" \
  test "$(grep . "$W/specdrop.out" | sort)" = "$(python3 -c "print('\n'.join(str(k) for k in range(1000) if k % 10 <= 7))" | sort)"
check "specdrop: 200 speculative drops reported" test "${sdrops:-0}" = 200

# 8. ustack(): fake_hv's firing k has user pc 0x400000 + k and a frame-pointer chain giving the
# return addresses 0x401100 + 0x100 * i for i = k % 4 .. 3 (tests/net/fake_hv_d.c); DTrace
# prints each frame without symbols as 14 blanks and 0x...
run ustack
want=$(python3 -c "
out = []
for k in range(8):
    pcs = [0x400000 + k] + [0x401100 + 0x100 * i for i in range(k % 4, 4)]
    out.append('k=%d\n' % k + ''.join(' ' * 14 + '0x%x\n' % pc for pc in pcs))
    if k == 5:
        out.append('two=5\n' + ''.join(' ' * 14 + '0x%x\n' % pc for pc in pcs[:2]))
print(''.join(sorted(out)), end='')")
got=$(python3 -c "
import re, sys
t = open(sys.argv[1]).read()
print(''.join(sorted(re.findall(r'(?:k|two)=\d+\n(?: {14}0x[0-9a-f]+\n)*', t))), end='')" "$W/ustack.out")
head -6 "$W/ustack.out"
check "ustack: every firing's user pc and frame-pointer chain, ustack(2) cut at 2 frames" test "$got" = "$want"
check "ustack: no malformed record, exit 0" bash -c "! grep -q malformed '$W/ustack.err' && test \$(cat '$W/ustack.rc') = 0"

# 9. printf %T (RFC 822, local time: TZ=UTC), %S (escaped, with the string's NUL as DTrace's
# whole-record escape gives it), %C, and length modifiers; firing 2's execname is gamma
run pfconv
cat "$W/pfconv.out"
check "printf %T %S %C %hx %hhx %lx %i" \
  test "$(cat "$W/pfconv.out")" = '[Tue, 14 Nov 2023 22:13:20 UTC] [gamma\0] [A] [\n] [ffff] [ff] [ff] [3]'

# 10. epid and id as DTrace numbers them: clause by clause (BEGIN 1, getpid 2, its second
# clause 3, END 4); BEGIN's id 1, END's 2; the default prefix shows those ids; the error message
# names the enabled probe (epid 2) and ERROR's arg1 the faulting probe's id, as dtrace-utils does
run epid
cat "$W/epid.out"
check "epid/id: BEGIN 1/1, getpid 2 (4 times), second clause 3, END 4/2" \
  test "$(grep . "$W/epid.out" | sort | uniq -c | sed 's/^ *//' | paste -sd'|')" = \
  "1 BEGIN epid=1 id=1|1 END epid=4 id=2|4 getpid epid=2|1 second epid=3"
run prefix
cat "$W/prefix.out"
check "prefix: BEGIN and END print as IDs 1 and 2" \
  bash -c "grep -qE '^ +[0-9]+ +1 +:BEGIN +1 *\$' '$W/prefix.out' && grep -qE '^ +[0-9]+ +2 +:END +2 *\$' '$W/prefix.out'"
run errarg
cat "$W/errarg.out" "$W/errarg.err"
check "ERROR's arg1 = the faulting probe's id, arg2 its clause; the message's enabled probe ID = 2" \
  bash -c "grep -qx \"ERROR arg1 is the faulting probe's id: 1, arg2 its clause: 1\" '$W/errarg.out' && grep -q 'error on enabled probe ID 2 (ID [0-9]*: syscall:kernel:getpid:entry)' '$W/errarg.err'"

# 11. several -s: one program, in their order (twos.d, then twos/a.d and twos/b.d); 'matched'
# counts BEGIN, END and ERROR
run twos
cat "$W/twos.out" "$W/twos.err"
check "three -s: BEGIN, a's 3 firings, b's END" \
  bash -c "grep -q 'from -n' '$W/twos.out' && test \$(grep -c ' a [0-2]\$' '$W/twos.out') = 3 && grep -q 'b end' '$W/twos.out'"
check "three -s: matched 3 probes (BEGIN, getpid, END)" grep -q "matched 3 probes" "$W/twos.err"
"$HVT" -n 'BEGIN { exit(0); }' -e --vmlinuz "$VMLINUZ" 2>"$W/begin.err"
check "BEGIN alone: matched 1 probe ($(cat "$W/begin.err"))" grep -qx "hvt: description 'BEGIN' matched 1 probe" "$W/begin.err"

# 12. the addr provider in D: SYM+OFF and the same instruction as 0xADDRESS are one probe
VR=$("$HVT" syms "$VMLINUZ" vfs_read | awk '$3 == "vfs_read" { print $1; exit }')
AT=$(printf '0x%x' $((0x$VR + 5)))
run addr
cat "$W/addr.out" "$W/addr.err"
check "addr: vfs_read+5 ($AT) fired 4 times, one probe" \
  bash -c "test \"\$(grep -c '^addr:vfs_read+5 [0-3]\$' '$W/addr.out')\" = 4 && ! grep -q . '$W/addr.err'"
"$HVT" -n "addr:kernel:$AT: { trace(arg0); }" -e --vmlinuz "$VMLINUZ" 2>"$W/addr0x.err"
check "addr: 0xADDRESS alone resolves ($(cat "$W/addr0x.err"))" grep -q "matched 1 probe" "$W/addr0x.err"
"$HVT" -n 'addr:kernel:vfs_read+6: { trace(arg0); }' -e --vmlinuz "$VMLINUZ" 2>"$W/addr6.err"; rc=$?
check "addr: an offset inside an instruction is refused" \
  bash -c "test $rc = 1 && grep -q 'inside an instruction of vfs_read' '$W/addr6.err'"

# 13. built-in variables: the fake's stack page gives caller and arg6.. at fbt entry (word i of
# the page is 0xc0de00 + i: [rsp] = caller, [rsp+8] = arg6, ...); syscall probes have 0 there
run vfbt
cat "$W/vfbt.out" "$W/vfbt.err"
want=$(for k in 0 1 2; do echo "k=$k caller=c0de00 a6=c0de01 a7=c0de02 a8=c0de03 a9=c0de04 p6=c0de01"; done)
check "vars: fbt entry caller = [rsp], arg6..arg9 and args[6] = [rsp+8..]" \
  test "$(grep '^k=' "$W/vfbt.out" | sort)" = "$want"
run vsys
check "vars: syscall arg6 = arg9 = 0, caller = [rsp]" \
  test "$(grep '^k=' "$W/vsys.out" | sort)" = "$(printf 'k=0 a6=0 a9=0 caller=c0de00\nk=1 a6=0 a9=0 caller=c0de00')"
# walltimestamp: the host's clock at the load plus the fake's elapsed time (k ns at firing k)
before=$(date +%s%N)
run vwall
after=$(date +%s%N)
wall=$(grep -E '^[0-9]+$' "$W/vwall.out" | sort -u)
echo "walltimestamp - k: $wall (host clock $before .. $after)"
check "vars: walltimestamp - k is one value, the host's clock at the load" \
  bash -c "test \$(echo '$wall' | wc -l) = 1 && test '${wall:-0}' -ge $before && test '${wall:-0}' -le $after"
# self->a[k]: per thread (tid = 100 + k % 3): the value left by firing k - 15 (same k % 3, k % 5);
# the first clause never runs: it gives self->a its types before the clause that reads it
run vself
cat "$W/vself.out" "$W/vself.err"
check "vars: self->a[k, s] per thread: firing k reads k - 15's value" \
  test "$(grep '^k=' "$W/vself.out" | sort)" = "$(python3 -c "print('\n'.join('k=%d prev=%d' % (k, k - 15) for k in range(290, 300)))" | sort)"
check "vars: this->p[i] indexes the pointer (\"fake-string\"[0, 5, 7])" grep -qx 'fsr' "$W/vself.out"
# ppid = curthread->real_parent->tgid: the fake task's real_parent is 0, so the second load
# faults at tgid's offset, which the compiled code names
run vppid
tgid=$("$HVT" -n 'syscall::getpid:entry { trace(ppid); }' -e -S --vmlinuz "$VMLINUZ" 2>&1 | awk '$3 == "addi" { n++; if (n == 2) print $6 }')
cat "$W/vppid.err"
check "vars: ppid loads curthread->real_parent->tgid (invalid address 0x$(printf %x "${tgid:-0}"))" \
  grep -q "invalid address (0x$(printf %x "${tgid:-0}"))" "$W/vppid.err"

# 14. printa() in a clause prints the aggregation as it stood after that firing (a snapshot taken
# after the record): the 10th firing sees all 10
run stale
cat "$W/stale.out"
check "stale: printa() at the 10th firing prints 10 ($(head -1 "$W/stale.out"))" \
  bash -c "head -1 '$W/stale.out' | grep -qx 'after 10 firings: 10'"
# the per-interval idiom: printa(@c); clear(@c) at a tick. fake_hv fires getpid (even k) and
# tick-1s (odd k) in turn; the predicate keeps one tick in 20,000 firings. Every getpid firing
# is printed once: the ticks' counts and END's add up to @total, and the first tick (k = 1)
# saw the getpid firing k = 0 at least
N=200000
run interval
cat "$W/interval.out"
ticks=$(grep -c '^tick at k=[0-9]*: [0-9][0-9]*$' "$W/interval.out")
tsum=$(sed -n 's/^tick at k=[0-9]*: \([0-9]*\)$/\1/p; s/^end: \([0-9]*\)$/\1/p' "$W/interval.out" | paste -sd+ | bc)
total=$(sed -n 's/^total: //p' "$W/interval.out")
check "interval: 10 ticks each printed a count ($ticks)" test "$ticks" = 10
check "interval: the ticks' counts and END's sum to @total = $((N / 2)) (${tsum:-none}, ${total:-none})" \
  bash -c "test '${tsum:-x}' = '$((N / 2))' && test '${total:-y}' = '$((N / 2))'"
check "interval: exit 0, nothing on stderr" bash -c "test \$(cat '$W/interval.rc') = 0 && ! grep -q . '$W/interval.err'"

# 15. aggsortkeypos=2: sorted on key 2, then keys 0 and 1 (DTrace's rotation of the keys)
run keypos
want=$(awk 'NF == 4 { print $1, $2, $3 }' "$W/keypos.out" | sort -k3,3n -k1,1 -k2,2n)
check "keypos: 12 keys in the order of key 2, then 0, then 1" \
  bash -c "test \"\$(awk 'NF == 4 { print \$1, \$2, \$3 }' '$W/keypos.out')\" = '$want' && test \$(grep -c . '$W/keypos.out') = 12"

# 16. the quantizations' increment: each value's bucket gains the weight
run weight
dist() { awk -v n="$2" '/Distribution/ { t++; next } t == n && /\|/ { gsub(/\|[@ ]*/, " "); if ($1 ~ /^-?[0-9]+$/ && $2 != 0) printf "%s:%s ", $1, $2 }' "$1" | sed 's/ $//'; }
qwant=$(python3 -c "
import collections
c = collections.Counter()
for k in range(300): c[0 if k == 0 else 1 << (k.bit_length() - 1)] += 3
print(' '.join('%d:%d' % (b, c[b]) for b in sorted(c)))")
lwant=$(python3 -c "print(' '.join('%d:%d' % (b, sum(k for k in range(300) if k % 7 == b)) for b in range(7)))")
check "weight: quantize(arg0, 3) buckets $(dist "$W/weight.out" 1)" test "$(dist "$W/weight.out" 1)" = "$qwant"
check "weight: lquantize(arg2, 0, 7, 1, arg0) buckets $(dist "$W/weight.out" 2)" test "$(dist "$W/weight.out" 2)" = "$lwant"

# 17. printa(fmt, @c, @s, @m, @b): joined on the key, 0 where an aggregation lacks it (@b has
# no gamma, @m only the firings k % 7 == 3)
run multi
want=$(python3 -c "
n = ['alpha', 'beta', 'gamma']
for i in range(3):
    ks = [k for k in range(300) if k % 3 == i]
    m = max([k for k in ks if k % 7 == 3] or [0])
    b = min(ks) if i < 2 else 0
    print('%-8s %d %d %d %d' % (n[i], len(ks), sum(ks), m, b))")
cat "$W/multi.out"
check "multi: one line per key, the four values in order, 0 for the missing" \
  test "$(grep . "$W/multi.out")" = "$want"

# 18. clear() after speculate(): done at the commit, not at a discard
for how in commit discard; do
  run "spclear-$how"
done
check "spclear: committed clear() zeroed @c ($(grep . "$W/spclear-commit.out" | xargs)), discarded left 10 ($(grep . "$W/spclear-discard.out" | xargs))" \
  bash -c "test \"\$(grep . '$W/spclear-commit.out' | xargs)\" = 0 && test \"\$(grep . '$W/spclear-discard.out' | xargs)\" = 10"

# 19. stack keys folded (hvt --folded / --flame from @[execname, stack()] = count()): firing k
# runs as alpha/beta/gamma (k % 3) on a 4-frame kernel stack when k is even, 3 frames when odd
# (tests/net/fake_hv_d.c), having come from user space: each line is the execname, [user],
# then the functions from the outermost to the leaf, with its count
run stackfold
want=$(python3 -c "
import collections
c = collections.Counter()
frames = ['vfs_read', 'ksys_read', '__x64_sys_read', 'do_syscall_64']
for k in range(12):
    c[';'.join([('alpha', 'beta', 'gamma')[k % 3], '[user]'] + frames[k % 2:][::-1])] += 1
print('\n'.join('%s %d' % (s, n) for s, n in sorted(c.items())))")
cat "$W/stackfold.folded" 2>/dev/null
check "stackfold: the folded file is the aggregation's stacks, root first, with their counts" \
  test "$(cat "$W/stackfold.folded" 2>/dev/null)" = "$want"
check "stackfold: the flame graph names the leaf (2 samples under each name) of 12 samples" \
  bash -c "grep -q '<title>vfs_read (2 samples' '$W/stackfold.svg' && grep -q 'all (12 samples' '$W/stackfold.svg'"

# 21. storing 0 deletes and takes no room: dynvarsize=20 holds one element, no drop reported
run storezero
cat "$W/storezero.out" "$W/storezero.err"
check "storezero: no dynamic variable drop reported" bash -c "! grep -q 'drop' '$W/storezero.err'"

# 22. scalar arrays: an index out of bounds at run time is DTrace's error, with the index
run arrays
cat "$W/arrays.out" "$W/arrays.err"
check "arrays: index out of bounds (8), (4), (5), (20) reported" \
  test "$(sed -n 's/.*: index out of bounds (\([0-9]*\)) in action.*/\1/p' "$W/arrays.err" | paste -sd' ')" = "8 4 5 20"

# 20. every other program, then each NAME.r: the whole output, exactly
for f in "$P"/*.d; do
  name=$(basename "$f" .d)
  [ -n "${RAN[$name]:-}" ] && continue
  if head -1 "$f" | grep -q 'vm: '; then continue; fi
  run "$name"
  check "$name: exit 0" test "$(cat "$W/$name.rc" 2>/dev/null)" = 0
done
for r in "$P"/*.r; do
  [ -e "$r" ] || continue
  name=$(basename "$r" .r)
  check "$name: the output is $name.r's" cmp "$r" "$W/$name.out"
done

echo "test-d-coll: $pass passed, $fail failed"
[ "$fail" = 0 ]
