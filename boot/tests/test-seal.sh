#!/usr/bin/env bash
# test-seal.sh - the enrolled keys and the sealed hvtrace.cfg, through the real loader under
# QEMU + OVMF (no VT-x: the loader's decisions are printed before it finds VT-x missing, and
# Linux boots untraced). One firmware variable store and one writable ESP image across boots:
#   1. hvtrace.enroll + a configuration sealed with its key: the keys are enrolled, the file
#      leaves the ESP, the seal verifies and selftest/trace/net are honoured; Linux (efivarfs)
#      sees the firmware's variables but not the keys
#   2. the configuration changed by "guest root" (selftest/trace kept, seal now wrong): those
#      lines are not honoured
#   3. a new hvtrace.enroll with other keys ("guest root" again): refused, shredded; the
#      machine's keys unchanged (the original seal still verifies)
#   4. the sealed configuration with keys = forget: the keys are deleted
#   5. unsealed again: nothing enrolled now, so every line is honoured (as before enrollment)
# Usage: test-seal.sh BUILD. Closing line: "test-seal: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/../.."
BUILD="${1:-build}"
HVT="$BUILD/host/hvt"
D="$BUILD/test/seal"
rm -rf "$D"; mkdir -p "$D"
pass=0; fail=0
check() { local what="$1"; shift; if "$@" >/dev/null 2>&1; then echo "ok   $what"; pass=$((pass + 1)); else echo "FAIL $what"; fail=$((fail + 1)); fi; }

# The test initrd plus efivarfs.ko of the same kernel (a second archive: Linux unpacks both).
kver=$(file -L "$BUILD/test/vmlinuz" | sed -n 's/.*version \([^ ]*\) .*/\1/p')
ko=$(find "${HVT_CACHE:-$HOME/.cache/hvtrace}/kernels" -path "*/lib/modules/$kver/kernel/fs/efivarfs/efivarfs.ko" | head -1)
[ -n "$ko" ] || { echo "test-seal: no efivarfs.ko for kernel $kver in the kernel cache"; exit 1; }
python3 tests/guest/mkcpio.py "$D/extra.cpio" dir:lib:755 "file:lib/efivarfs.ko:644:$ko"
cat "$BUILD/test/initrd.img" "$D/extra.cpio" > "$D/initrd.img"

# Keys and the configuration, as docs/install.md has the administrator make them.
"$HVT" cfg keys "$D" > /dev/null || { echo "test-seal: hvt cfg keys failed"; exit 1; }
NET='nic=auto ip=10.0.2.15 collector=10.0.2.2:7207'
bash tests/platform/vm-run.sh --esp-only --qemu --hv on --selftest --append hvt_mode=efivars \
     --cfg "trace = hc_user=all" --cfg "net = $NET" --initrd "$D/initrd.img" "$D/m" > /dev/null
cp "$D/m/hvtrace.cfg" "$D/sealed.cfg"
"$HVT" cfg seal --key-file "$D/seal.key" "$D/sealed.cfg" > /dev/null
IMG="$D/m/esp.img"
put() { mcopy -o -i "$IMG" "$1" "::/$2"; }
has() { mdir -b -i "$IMG" "::/" 2>/dev/null | grep -qi "/$1\$"; }
boot() {   # boot N: one boot, its console in $D/bootN.log
  bash tests/platform/qemu-run.sh -a tcg -w -V "$D/vars.fd" -t 240 "$IMG" "$D/run$1" > /dev/null 2>&1
  cp "$D/run$1/serial.log" "$D/boot$1.log" 2>/dev/null || : > "$D/boot$1.log"
}
L() { grep -q "$2" "$D/boot$1.log"; }

put "$D/sealed.cfg" hvtrace.cfg
put "$D/hvtrace.enroll" hvtrace.enroll
boot 1
check "1: keys enrolled" L 1 "hvtrace: keys enrolled in EFI variable HvtraceKeys"
check "1: hvtrace.enroll overwritten and deleted (loader)" L 1 'hvtrace.enroll overwritten and deleted (Success)'
check "1: hvtrace.enroll no longer on the ESP" bash -c "! mdir -b -i '$IMG' ::/ | grep -qi hvtrace.enroll"
check "1: seal verified" L 1 "hvtrace: hvtrace.cfg seal verified"
check "1: sealed lines honoured" L 1 "hvtrace: selftest=on trace=set net=set"
check "1: Linux reads firmware variables" bash -c "grep -q 'HVT-EFIVAR: Boot' '$D/boot1.log' && grep -q 'mode=efivars count=[1-9]' '$D/boot1.log'"
check "1: Linux does not see the keys' variable" bash -c "grep -q 'HVT-SUMMARY: mode=efivars' '$D/boot1.log' && ! grep -qi 'HVT-EFIVAR: HvtraceKeys' '$D/boot1.log'"

# 2. "guest root" edits the file: the seal line stays, another line changes.
sed 's/^advertise = on$/advertise = off/' "$D/sealed.cfg" > "$D/tampered.cfg"
put "$D/tampered.cfg" hvtrace.cfg
boot 2
check "2: changed configuration: not sealed" L 2 "hvtrace.cfg is not sealed with this machine's key (the seal does not match"
check "2: selftest, trace and net not honoured" L 2 "not honoured: selftest (off) trace (defaults) net (no NIC)"
check "2: the loader's summary agrees" L 2 "hvtrace: selftest=off trace=(defaults) net=(none)"
check "2: Linux still boots" L 2 "HVT-SUMMARY: mode=efivars"

# 3. "guest root" writes its own keys to enroll.
mkdir -p "$D/evil" && "$HVT" cfg keys "$D/evil" > /dev/null
put "$D/evil/hvtrace.enroll" hvtrace.enroll
put "$D/sealed.cfg" hvtrace.cfg
boot 3
check "3: a second enrollment is refused" L 3 "hvtrace.enroll refused: this machine's keys are enrolled already"
check "3: and shredded" bash -c "grep -q 'hvtrace.enroll overwritten and deleted (Success)' '$D/boot3.log' && ! mdir -b -i '$IMG' ::/ | grep -qi hvtrace.enroll"
check "3: the machine's own seal still verifies" L 3 "hvtrace: hvtrace.cfg seal verified"

# 4. the administrator's sealed keys = forget.
cp "$D/m/hvtrace.cfg" "$D/forget.cfg"; echo "keys = forget" >> "$D/forget.cfg"
"$HVT" cfg seal --key-file "$D/seal.key" "$D/forget.cfg" > /dev/null
put "$D/forget.cfg" hvtrace.cfg
boot 4
check "4: keys = forget deletes the keys" L 4 "keys = forget: enrolled keys deleted (Success)"

# 5. no keys: the unsealed file is honoured as written (a machine never enrolled).
put "$D/tampered.cfg" hvtrace.cfg
boot 5
check "5: not enrolled: no seal check" bash -c "! grep -q 'not sealed with this machine' '$D/boot5.log' && grep -q 'HVT-SUMMARY: mode=efivars' '$D/boot5.log'"
check "5: every line honoured" L 5 "hvtrace: selftest=on trace=set net=set"

echo "test-seal: $pass passed, $fail failed"
[ "$fail" = 0 ]
