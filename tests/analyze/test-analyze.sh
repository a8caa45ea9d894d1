#!/usr/bin/env bash
# make test-analyze: the host analysis tools against real Debian kernels (tests/analyze/kernels.txt,
# fetched pinned and cached) and the fixtures captured from real boots (capture-fixtures.sh).
# Prints PASS/FAIL lines and ends with "N passed, N failed"; exits 0 only if nothing failed.
set -uo pipefail
HVT="$(realpath "${1:-build/host/hvt}")"
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
PY=/usr/bin/python3   # Debian's, which has python3-capstone
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
export HVT_KINFO_CACHE="$T/kinfo"   # a fresh symbol cache: the first run extracts, the second reads it
pass=0; fail=0
ok()   { echo "PASS $*"; pass=$((pass + 1)); }
bad()  { echo "FAIL $*"; fail=$((fail + 1)); }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
pyrun() { local line; while IFS= read -r line; do
            case "$line" in PASS*) ok "${line#PASS }";; FAIL*) bad "${line#FAIL }";; *) echo "$line";; esac
          done < <("$PY" "$HERE/checks.py" "$@" 2>&1; echo "EXIT $?") ; }
# exit status of a command that must fail cleanly: 1, not a signal
clean_fail() { local rc=0; "$@" > /dev/null 2> "$T/err" || rc=$?; [ "$rc" = 1 ]; }
START=$(date +%s)

while read -r pkg ver; do
  case "$pkg" in ''|'#'*) continue;; esac
  V="$(bash "$ROOT/tests/platform/fetch-kernel.sh" "$pkg" "$ver")" || { bad "fetch $pkg $ver"; continue; }
  rel="${V##*/vmlinuz-}"; F="$HERE/fixtures/$rel"
  echo "== $rel ($pkg $ver)"
  [ -d "$F" ] || { bad "$rel: no fixtures (run tests/analyze/capture-fixtures.sh)"; continue; }
  xzcat "$F/kallsyms.xz" > "$T/kallsyms.guest"
  LSTAR=$(awk '$3 == "entry_SYSCALL_64" { print "0x" $1; exit }' "$T/kallsyms.guest")

  # 1. symbols: every line equals the guest's /proc/kallsyms once slid by the LSTAR-derived slide
  "$HVT" syms --lstar "$LSTAR" "$V" > "$T/kallsyms.hvt"
  n=$(wc -l < "$T/kallsyms.guest")
  check "$rel: all $n symbols (address, type, name) equal the guest's /proc/kallsyms" cmp -s "$T/kallsyms.hvt" "$T/kallsyms.guest"
  "$HVT" syms --info "$V" > "$T/info2"
  grep -q '^source cache' "$T/info2" && "$HVT" syms --lstar "$LSTAR" "$V" | cmp -s - "$T/kallsyms.guest"
  check "$rel: a second run reads the build-id cache and gives the same symbols" [ $? = 0 ]
  link=$("$HVT" syms --name entry_SYSCALL_64 "$V" | awk '{ print "0x" $1 }')
  SLIDE=$(printf '0x%x' $(( LSTAR - link )))
  check "$rel: slide $SLIDE is a 2 MiB multiple" [ $(( SLIDE % 0x200000 )) = 0 ]
  # address -> sym+off -> address, at runtime addresses
  a=$(awk '$3 == "schedule" { print "0x" $1; exit }' "$T/kallsyms.guest")
  r=$("$HVT" syms --lstar "$LSTAR" --addr $((a + 0x21)) "$V" | awk '{ print $2 }')
  check "$rel: --addr resolves schedule+0x21" [ "$r" = "schedule+0x21" ]
  r=$("$HVT" syms --lstar "$LSTAR" --name schedule+0x21 "$V" | awk '{ print "0x" $1 }')
  check "$rel: --name schedule+0x21 gives its runtime address" [ $((r)) = $((a + 0x21)) ]
  "$HVT" syms "$V" 'sys_getpp*' | awk '{ print $3 }' > "$T/glob"
  grep -E ' (__x64_)?sys_getpp' "$T/kallsyms.guest" | awk '$3 ~ /^sys_getpp/ { print $3 }' > "$T/glob.want"
  check "$rel: glob filter" cmp -s "$T/glob" "$T/glob.want"

  # the gzip and zstd paths on this real kernel: its payload recompressed, same symbols and BTF
  for fmt in gzip zstd; do
    "$PY" "$HERE/recompress.py" "$V" $fmt "$T/re.vmlinuz" &&
      "$HVT" syms --no-cache --lstar "$LSTAR" "$T/re.vmlinuz" > "$T/re.syms" &&
      "$HVT" syms --no-cache --btf-out "$T/re.btf" "$T/re.vmlinuz"
    check "$rel: payload recompressed with $fmt: same symbols and BTF" \
      bash -c "cmp -s \"$T/re.syms\" \"$T/kallsyms.guest\" && cmp -s \"$T/re.btf\" <(xzcat \"$F/btf.xz\")"
  done
  # 2. BTF: byte-identical to /sys/kernel/btf/vmlinux; offsets right against guest memory
  "$HVT" syms --btf-out "$T/btf" "$V"
  check "$rel: BTF blob is byte-identical to the guest's /sys/kernel/btf/vmlinux" cmp -s "$T/btf" <(xzcat "$F/btf.xz")
  "$HVT" syms --layout "$V" > "$T/layout"
  it=$("$HVT" syms --lstar "$LSTAR" --name init_task "$V" | awk '{ print $1 }')
  pyrun layout "$F" "$T/layout" "$it"
  "$HVT" syms --struct task_struct "$V" > "$T/ts"
  check "$rel: --struct task_struct shows pid at the layout's offset" \
    grep -qE "^ +$(awk '$1 == "task_struct.pid" { print $2 }' "$T/layout") +4 +pid +pid_t" "$T/ts"

  # 3. views on traces generated from the kernel's own code, at the guest's real slide
  for seed in 1 2 3; do
    "$HVT" gen --seed $seed --slide "$SLIDE" --truth "$T/truth" "$V" "$T/g.hvt" 2> /dev/null
    "$HVT" analyze --vmlinuz "$V" --view nest "$T/g.hvt" > "$T/nest"
    same=1
    for cpu in 0 1; do
      cmp -s <(grep -E "^ +$cpu  " "$T/truth") <(grep -E "^ +$cpu  " "$T/nest") || same=0
    done
    check "$rel seed $seed: nesting equals the generator's own control flow ($(wc -l < "$T/nest") lines)" [ $same = 1 ]
    cp "$T/nest" "$T/nest.$seed"
    "$HVT" analyze --vmlinuz "$V" --view nest --hide '__fentry__,__x86_return_thunk,*rcu_read_*' "$T/g.hvt" > "$T/nest.hide"
    pyrun hide "$T/truth" "$T/nest.hide" '__fentry__,__x86_return_thunk,*rcu_read_*'
    "$HVT" analyze --vmlinuz "$V" --view list "$T/g.hvt" > "$T/list"
    pyrun listing "$T/list" "$F/kallsyms.xz"
    for v in summary funcs folded; do "$HVT" analyze --vmlinuz "$V" --view $v "$T/g.hvt" > "$T/$v"; done
    pyrun views "$T/list" "$T/summary" "$T/funcs" "$T/folded"
  done
  pyrun known-path "$T/nest.1" "$T/nest.2" "$T/nest.3"
  # the same walk recorded in FLOW and in REGS: same nesting, same continuity, the listing's
  # instructions the same (registers: none in FLOW, the set's in REGS)
  "$HVT" gen --seed 3 --slide "$SLIDE" "$V" "$T/full.hvt" 2> /dev/null
  "$HVT" gen --seed 3 --slide "$SLIDE" --record flow "$V" "$T/flow.hvt" 2> /dev/null
  "$HVT" gen --seed 3 --slide "$SLIDE" --regs rsp:rflags "$V" "$T/regs.hvt" 2> /dev/null
  for m in full flow regs; do
    "$HVT" analyze --vmlinuz "$V" --view nest "$T/$m.hvt" > "$T/nest-$m"
    "$HVT" analyze --vmlinuz "$V" --view list --file-order "$T/$m.hvt" | grep -v -e ' record mode ' -e '^# [0-9]* [0-9]* context ' > "$T/list-$m"
  done
  check "$rel: flow and regs traces nest like the full one ($(wc -l < "$T/nest-full") lines)" \
    bash -c "cmp -s '$T/nest-full' '$T/nest-flow' && cmp -s '$T/nest-full' '$T/nest-regs'"
  check "$rel: flow listing = full's without registers" cmp -s <(sed 's/  ;.*//' "$T/list-full") "$T/list-flow"
  check "$rel: regs listing shows rsp and rflags only, as full does" \
    cmp -s <(sed -n 's/.*  ;//p' "$T/list-full" | tr ' ' '\n' | grep -E '^(rsp|rflags)=') \
           <(sed -n 's/.*  ;//p' "$T/list-regs" | tr ' ' '\n' | grep .)
  check "$rel: flow trace smaller than full ($(stat -c %s "$T/flow.hvt") < $(stat -c %s "$T/full.hvt") bytes)" \
    test "$(stat -c %s "$T/flow.hvt")" -lt "$(stat -c %s "$T/full.hvt")"

  # 4. bad kernel images: a clean error naming the file and an offset, never a crash
  size=$(stat -c %s "$V")
  for cut in 100 600 $((size / 3)) $((size - 5000)); do
    head -c $cut "$V" > "$T/trunc.vmlinuz"
    "$HVT" syms --no-cache "$T/trunc.vmlinuz" > /dev/null 2> "$T/err"; rc=$?
    check "$rel: vmlinuz truncated to $cut bytes: exit 1 ($rc), error names file and offset" \
      bash -c "[ $rc = 1 ] && grep -q 'trunc.vmlinuz: offset 0x' \"$T/err\""
  done
  # inside the payload (from the boot header), at its size trailer, and the image CRC
  read -r poff plen < <("$PY" -c "import struct,sys; d=open(sys.argv[1],'rb').read(1024); s=d[0x1f1] or 4; print((s+1)*512+struct.unpack_from('<I',d,0x248)[0], struct.unpack_from('<I',d,0x24c)[0])" "$V")
  for where in 0x202 $((poff + plen / 2)) $((poff + plen - 4)) $((size - 2)); do
    cp "$V" "$T/corrupt.vmlinuz"
    printf '\x55\xaa' | dd of="$T/corrupt.vmlinuz" bs=1 seek=$((where)) conv=notrunc 2> /dev/null
    check "$rel: vmlinuz corrupted at $where fails cleanly with file and offset" \
      bash -c "\"$HVT\" syms --no-cache \"$T/corrupt.vmlinuz\" > /dev/null 2> \"$T/err\"; [ \$? = 1 ] && grep -q 'corrupt.vmlinuz: offset 0x' \"$T/err\""
  done
  # the same payload corruption with the CRC made consistent again: the decompressor must catch it
  cp "$V" "$T/corrupt.vmlinuz"
  "$PY" -c "
import sys, zlib, struct
p = sys.argv[1]; d = bytearray(open(p, 'rb').read()); at = int(sys.argv[2])
d[at:at + 2] = b'\\x55\\xaa'; struct.pack_into('<I', d, len(d) - 4, ~zlib.crc32(bytes(d[:-4])) & 0xffffffff)
open(p, 'wb').write(d)" "$T/corrupt.vmlinuz" $((poff + plen / 2))
  "$HVT" syms --no-cache "$T/corrupt.vmlinuz" > /dev/null 2> "$T/err"; rc=$?
  if head -c $((poff + 4)) "$V" | tail -c 4 | od -An -tx1 | grep -q '02 21 4c 18'; then
    # LZ4's legacy frame has no checksum: such a payload can decode "successfully"
    check "$rel: payload (LZ4, unchecksummed) corrupted under a valid CRC: no crash (exit $rc)" [ $rc -le 1 ]
  else
    check "$rel: payload corrupted under a valid CRC fails cleanly with file and offset" \
      bash -c "[ $rc = 1 ] && grep -q 'corrupt.vmlinuz: offset 0x' \"$T/err\""
  fi
done < "$HERE/kernels.txt"

# 5. bad trace files
V="$(bash "$ROOT/tests/platform/fetch-kernel.sh")"
"$HVT" gen --seed 7 --insns 1500000 "$V" "$T/t.hvt" 2> /dev/null   # several chunks per CPU
size=$(stat -c %s "$T/t.hvt")
for cut in 10 200 $((size / 2)) $((size - 40)); do
  head -c $cut "$T/t.hvt" > "$T/cut.hvt"
  "$HVT" analyze --vmlinuz "$V" --view nest "$T/cut.hvt" > /dev/null 2> "$T/err"; rc=$?
  check "trace truncated to $cut bytes: exit 1 and an error naming file and offset" \
    bash -c "[ $rc = 1 ] && grep -q 'cut.hvt: offset 0x' \"$T/err\""
done
for where in 130 $((size / 3)) $((size / 2)); do
  cp "$T/t.hvt" "$T/bad.hvt"
  printf '\xff\x00\xff\x00' | dd of="$T/bad.hvt" bs=1 seek=$where conv=notrunc 2> /dev/null
  "$HVT" analyze --vmlinuz "$V" --view list "$T/bad.hvt" > /dev/null 2> "$T/err"; rc=$?
  check "trace corrupted at $where: exit 1 and an error naming file and offset" \
    bash -c "[ $rc = 1 ] && grep -q 'bad.hvt: offset 0x' \"$T/err\""
done
# seeking by time: a --from/--to window equals the same lines of the whole listing
"$HVT" analyze --vmlinuz "$V" --view list "$T/t.hvt" > "$T/full.list"
"$HVT" analyze --vmlinuz "$V" --view list --from 600000 --to 600400 "$T/t.hvt" > "$T/win.list"
check "later chunks restate their CPU's task (CONTEXT markers)" grep -qE '^# [0-9]+ [0-9]+ context [0-9]+/' "$T/full.list"
# (changed registers differ on each CPU's first line: a reader that starts mid-trace has no previous values)
strip() { grep -v '^#' | awk '$1 >= 600000 && $1 <= 600400' | sed 's/  ;.*//'; }
strip < "$T/full.list" > "$T/full.win"; strip < "$T/win.list" > "$T/win.win"
check "time window ($(wc -l < "$T/win.win") lines) equals the whole listing's lines in that window, pid/comm included" \
  bash -c "[ \$(wc -l < \"$T/win.win\") -gt 100 ] && cmp -s \"$T/full.win\" \"$T/win.win\""
# a trace from one kernel build analyzed with another build's vmlinuz: refused, not mis-symbolized
OTHER="$(grep -v '^#' "$HERE/kernels.txt" | sed -n 2p)"
V2="$(bash "$ROOT/tests/platform/fetch-kernel.sh" $OTHER)"
"$HVT" analyze --vmlinuz "$V2" --view funcs "$T/t.hvt" > /dev/null 2> "$T/err"; rc=$?
check "trace analyzed with another kernel build's vmlinuz: exit 1, both build ids named" \
  bash -c "[ $rc = 1 ] && grep -q 'traced on kernel build' \"$T/err\""
echo "test-analyze: $(( $(date +%s) - START )) s"
echo "$pass passed, $fail failed"
[ $fail = 0 ]
