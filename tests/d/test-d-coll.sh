#!/usr/bin/env bash
# Host test of D programs end to end (no Bochs): hvt compiles the program, loads it through
# hvtrace-collector into fake_hv, whose D engine is the hypervisor's own verifier and
# interpreter (trace/dif_*.c) fired by synthetic firings (tests/net/fake_hv_d.c: firing k has
# arg0 = k, arg1 = 2k, arg2 = k % 7, pid 100 + k % 3, execname alpha/beta/gamma by k % 3, and
# curthread points at the string "fake-string"); hvt prints what the records and aggregation
# snapshots say. Every expected figure below is computed from that definition.
# Usage: test-d-coll.sh BUILD_HOST_DIR VMLINUZ. Closing line: "test-d-coll: N passed, N failed".
set -uo pipefail
B="${1:-build/host}"; VMLINUZ="${2:-build/test/vmlinuz}"
COLL="$B/hvtrace-collector"; FAKE="$B/fake_hv"; HVT="$B/hvt"
W=$(mktemp -d /tmp/hvt-d-coll.XXXXXX)
KEY=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
PORT=$(( 20000 + RANDOM % 20000 ))
source "$(dirname "$0")/../net/test-lib.sh"
CLEANUP_DIR="$W"

# run NAME FIRES PROGRAM [hvt args...]: fake_hv --d FIRES + hvt -n PROGRAM; output in $W/NAME.*
run() {
  local name="$1" fires="$2" prog="$3"; shift 3
  start_coll "$W/$name" "$W/$name-coll.log" --exit-on-bye
  "$FAKE" --port "$PORT" --key "$KEY" --cpus 2 --d "$fires" --timeout 60 >"$W/$name-fake.out" 2>&1 &
  FPID=$!; PIDS+=("$FPID")
  for _ in $(seq 50); do grep -q "connection" "$W/$name-coll.log" && break; sleep 0.1; done
  "$HVT" -n "$prog" --vmlinuz "$VMLINUZ" -d "$W/$name" --duration 3 --drain 20 "$@" \
    >"$W/$name.out" 2>"$W/$name.err"
  echo $? > "$W/$name.rc"
  wait "$FPID"; wait "$CPID" 2>/dev/null
}
# the value printed for key K of a one-key aggregation (DTrace's "  key   value" lines)
val() { awk -v k="$2" '$1 == k && NF == 2 { print $2 }' "$1"; }

# 1. aggregations over 3000 firings on 2 CPUs: count, sum, min, max, avg by key, quantize
N=3000
run agg $N 'syscall::getpid:entry { @c[execname] = count(); @s[execname] = sum(arg0); @mx = max(arg0); @mn = min(arg1); @a = avg(arg2); @q = quantize(arg0); }'
cat "$W/agg.out"
sum_of() { python3 -c "print(sum(k for k in range($N) if k % 3 == $1))"; }
check "agg: matched 1 probe ($(head -1 "$W/agg.err"))" grep -q "hvt: description .* matched 1 probe" "$W/agg.err"
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
run printf 300 'BEGIN { printf("hello from BEGIN\n"); } syscall::getpid:entry /arg0 < 5/ { printf("k=%d name=%s s=%s\n", arg0, execname, stringof(copyinstr(curthread))); }' -q
cat "$W/printf.out"
want=$(python3 -c "
n = ['alpha', 'beta', 'gamma']
print('\n'.join('k=%d name=%s s=fake-string' % (k, n[k % 3]) for k in range(5)))")
check "printf: BEGIN ran first" bash -c "head -1 '$W/printf.out' | grep -qx 'hello from BEGIN'"
check "printf: 5 lines, exactly the firings the predicate lets through" \
  test "$(grep '^k=' "$W/printf.out" | sort)" = "$(sort <<< "$want")"

# 3. a bad address ends that action with DTrace's error, the others go on
run fault 100 'syscall::getpid:entry /arg0 == 7 || arg0 == 9/ { trace(*(int *)arg0); } syscall::getpid:entry /arg0 == 8/ { trace(arg1); }'
cat "$W/fault.out" "$W/fault.err"
check "fault: two 'invalid address' errors, for 0x7 and 0x9" \
  bash -c "grep -c 'error on enabled probe ID .* invalid address (0x[79])' '$W/fault.err' | grep -qx 2"
check "fault: the other clause printed its value (16)" grep -qE ' 16$' "$W/fault.out"

# 4. exit(): END runs, the status is exit's
run exit 1000 'syscall::getpid:entry /arg0 == 100/ { exit(3); } END { printf("end ran\n"); }' -q
check "exit: status 3 and END ran ($(cat "$W/exit.rc"))" \
  bash -c "test \$(cat '$W/exit.rc') = 3 && grep -qx 'end ran' '$W/exit.out'"

# 5. a full buffer: drops are counted and printed, never silent
run drops 2000 'syscall::getpid:entry { printf("%d %s\n", arg0, execname); }' -q -x bufsize=512
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

# 7. speculations. The classic: speculate at entry, commit at return only for an "error"
# (here arg0 % 10 == 3), discard otherwise. fake_hv arms entry then return, so entry fires at
# even k on CPU 0 and return at odd k on CPU 1: each commit moves both CPUs' parts.
run spec 1000 'syscall::getpid:entry { s = speculation(); speculate(s); printf("entry %d\n", arg0); }
  syscall::getpid:return /s/ { speculate(s); printf("return %d\n", arg0); }
  syscall::getpid:return /s && arg0 % 10 == 3/ { commit(s); s = 0; }
  syscall::getpid:return /s/ { discard(s); s = 0; }' -q
want=$(python3 -c "
print('\n'.join(l for k in range(0, 1000, 2) if (k + 1) % 10 == 3 for l in ('entry %d' % k, 'return %d' % (k + 1))))")
echo "spec: $(grep -c . "$W/spec.out") lines, e.g. $(head -2 "$W/spec.out" | paste -sd' ')"
check "spec: exactly the 200 committed records (entry k, return k+1 for k+1 = 3 mod 10), none discarded" \
  test "$(grep . "$W/spec.out" | sort)" = "$(sort <<< "$want")"
check "spec: no loss reported, exit 0" bash -c "! grep -q . '$W/spec.err' && test \$(cat '$W/spec.rc') = 0"
# nspec=1 (the default), overlapping: firing k takes the speculation iff k % 5 == 0 (it is
# committed at k % 5 == 4, after that firing's speculation() failed): 200 records, 800 failed
run specfail 1000 'syscall::getpid:entry { this->s = speculation(); speculate(this->s); printf("%d\n", arg0); }
  syscall::getpid:entry /arg0 % 5 == 4/ { commit(1); }' -q
failed=$(sed -n 's/^hvt: \([0-9]*\) failed speculations\{0,1\} (no speculative buffer available)$/\1/p' "$W/specfail.err" | paste -sd+ | bc)
echo "specfail: $(grep -c . "$W/specfail.out") committed, ${failed:-0} failed"
check "specfail: the 200 firings k % 5 == 0 committed" \
  test "$(grep . "$W/specfail.out" | sort)" = "$(python3 -c "print('\n'.join(str(k) for k in range(0, 1000, 5)))" | sort)"
check "specfail: 800 failed speculations (no speculative buffer available)" test "${failed:-0}" = 800
# specsize=256 holds 4 records of 56 bytes per CPU: of each 10 firings (5 per CPU) between
# speculation() and commit(), k % 10 <= 7 are kept and 2 are speculative drops
run specdrop 1000 'syscall::getpid:entry /arg0 % 10 == 0/ { s = speculation(); }
  syscall::getpid:entry /s/ { speculate(s); printf("%d\n", arg0); }
  syscall::getpid:entry /arg0 % 10 == 9/ { commit(s); s = 0; }' -q -x specsize=256
sdrops=$(sed -n 's/^hvt: \([0-9]*\) speculative drops\{0,1\}$/\1/p' "$W/specdrop.err" | paste -sd+ | bc)
echo "specdrop: $(grep -c . "$W/specdrop.out") committed, ${sdrops:-0} speculative drops"
check "specdrop: the 800 firings k % 10 <= 7 committed" \
  test "$(grep . "$W/specdrop.out" | sort)" = "$(python3 -c "print('\n'.join(str(k) for k in range(1000) if k % 10 <= 7))" | sort)"
check "specdrop: 200 speculative drops reported" test "${sdrops:-0}" = 200

# 10. built-in variables: the fake's stack page gives caller and arg6.. at fbt entry (word i of
# the page is 0xc0de00 + i: [rsp] = caller, [rsp+8] = arg6, ...); syscall probes have 0 there
run vfbt 10 'fbt::do_mmap:entry /arg0 < 3/ { printf("k=%d caller=%x a6=%x a7=%x a8=%x a9=%x p6=%x\n", arg0, caller, arg6, arg7, arg8, arg9, (uint64_t)args[6]); }' -q
cat "$W/vfbt.out" "$W/vfbt.err"
want=$(for k in 0 1 2; do echo "k=$k caller=c0de00 a6=c0de01 a7=c0de02 a8=c0de03 a9=c0de04 p6=c0de01"; done)
check "vars: fbt entry caller = [rsp], arg6..arg9 and args[6] = [rsp+8..]" \
  test "$(grep '^k=' "$W/vfbt.out" | sort)" = "$want"
run vsys 10 'syscall::getpid:entry /arg0 < 2/ { printf("k=%d a6=%d a9=%d caller=%x\n", arg0, arg6, arg9, caller); }' -q
check "vars: syscall arg6 = arg9 = 0, caller = [rsp]" \
  test "$(grep '^k=' "$W/vsys.out" | sort)" = "$(printf 'k=0 a6=0 a9=0 caller=c0de00\nk=1 a6=0 a9=0 caller=c0de00')"
# walltimestamp: the host's clock at the load plus the fake's elapsed time (k ns at firing k)
before=$(date +%s%N)
run vwall 10 'syscall::getpid:entry /arg0 < 3/ { printf("%d\n", walltimestamp - arg0); }' -q
after=$(date +%s%N)
wall=$(grep -E '^[0-9]+$' "$W/vwall.out" | sort -u)
echo "walltimestamp - k: $wall (host clock $before .. $after)"
check "vars: walltimestamp - k is one value, the host's clock at the load" \
  bash -c "test \$(echo '$wall' | wc -l) = 1 && test '${wall:-0}' -ge $before && test '${wall:-0}' -le $after"
# self->a[k]: per thread (tid = 100 + k % 3): the value left by firing k - 15 (same k % 3, k % 5);
# the first clause never runs: it gives self->a its types before the clause that reads it
run vself 300 'syscall::getpid:entry /arg0 < 0/ { self->a[0, ""] = 0; } syscall::getpid:entry /arg0 >= 290/ { printf("k=%d prev=%d\n", arg0, self->a[arg0 % 5, execname]); } syscall::getpid:entry { self->a[arg0 % 5, execname] = arg0; } syscall::getpid:entry /arg0 == 0/ { this->p = (char *)curthread; printf("%c%c%c\n", this->p[0], this->p[5], this->p[7]); }' -q
cat "$W/vself.out" "$W/vself.err"
check "vars: self->a[k, s] per thread: firing k reads k - 15's value" \
  test "$(grep '^k=' "$W/vself.out" | sort)" = "$(python3 -c "print('\n'.join('k=%d prev=%d' % (k, k - 15) for k in range(290, 300)))" | sort)"
check "vars: this->p[i] indexes the pointer (\"fake-string\"[0, 5, 7])" grep -qx 'fsr' "$W/vself.out"
# ppid = curthread->real_parent->tgid: the fake task's real_parent is 0, so the second load
# faults at tgid's offset, which the compiled code names
run vppid 10 'syscall::getpid:entry /arg0 == 0/ { trace(ppid); }'
tgid=$("$HVT" -n 'syscall::getpid:entry { trace(ppid); }' -e -S --vmlinuz "$VMLINUZ" 2>&1 | awk '$3 == "addi" { n++; if (n == 2) print $6 }')
cat "$W/vppid.err"
check "vars: ppid loads curthread->real_parent->tgid (invalid address 0x$(printf %x "${tgid:-0}"))" \
  grep -q "invalid address (0x$(printf %x "${tgid:-0}"))" "$W/vppid.err"

echo "test-d-coll: $pass passed, $fail failed"
[ "$fail" = 0 ]
