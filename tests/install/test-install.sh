#!/usr/bin/env bash
# test-install.sh - follow docs/install.md on a fresh virtual machine (make test-install).
# The blocks of docs/install.md marked "<!-- test-install: NAME -->" are extracted and run with
# what only a real machine has replaced (each replacement is printed):
#   sudo                 runs the command as is (a shell function)
#   make install         make -s install DESTDIR=$STAGE (staged: no root, nothing outside)
#   /usr/local/          $STAGE/usr/local/ (the staged install)
#   /boot/efi            an ESP folder ($ESPD)
#   /boot/vmlinuz-$(uname -r), /boot/initrd.img-$(uname -r)   the pinned test kernel and the
#                        test initramfs (build/test/vmlinuz, build/test/initrd.img)
#   /proc/cmdline        a file holding "BOOT_IMAGE=... $TEST_CMDLINE" (the test init's options)
#   ~                    a fresh home folder; the collector listens on 127.0.0.1:<free port>
# Then the ESP folder's files go into a FAT image (plus \EFI\BOOT\BOOTX64.EFI: a fresh VM has
# no boot entry), QEMU + OVMF boots it under TCG (no VT-x: qemu-run.sh -a tcg) and the run must
# show the loader reading hvtrace.cfg without complaint, "hvtrace: VT-x not available: ...;
# booting Linux untraced", and Linux's init running (tests/platform/check-boot.sh novtx).
# Last: make uninstall must leave no file behind. Closing line: "N passed, N failed".
# Env: BUILD (build), TEST_CMDLINE (from tests/tests.mk), INSTALL_QEMU_TIMEOUT (300 s).
set -uo pipefail
cd "$(dirname "$0")/../.."
ROOT="$PWD"
BUILD="${BUILD:-build}"
WORK="$ROOT/$BUILD/test/install"
STAGE="$WORK/stage"; ESPD="$WORK/esp"; HOMED="$WORK/home"
KERNEL="$ROOT/$BUILD/test/vmlinuz"; INITRD="$ROOT/$BUILD/test/initrd.img"
CMDLINE="${TEST_CMDLINE:-console=ttyS0 quiet hvt_cpus=2}"
PORT="$(( 20000 + RANDOM % 20000 ))"
DOC=docs/install.md
pass=0; fail=0
ok()  { pass=$((pass+1)); echo "ok   $*"; }
bad() { fail=$((fail+1)); echo "FAIL $*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
CPID=""
cleanup() { [ -z "$CPID" ] || kill "$CPID" 2>/dev/null; }
trap cleanup EXIT

for f in "$KERNEL" "$INITRD"; do [ -f "$f" ] || { echo "test-install: missing $f (make test-guest-inputs)"; exit 1; }; done
rm -rf "$WORK"; mkdir -p "$STAGE" "$ESPD" "$HOMED"
printf 'BOOT_IMAGE=/boot/vmlinuz-test %s\n' "$CMDLINE" > "$WORK/cmdline"

# The block after "<!-- test-install: NAME -->" (its fence lines excluded).
doc_block() {
  awk -v want="<!-- test-install: $1 -->" '
    $0 == want { armed = 1; next }
    armed && /^```/ { if (inside) exit; inside = 1; next }
    inside { print }' "$DOC"
}
# The real machine's paths -> this test's (the list in the header).
adapt() {
  sed -e "s#make install#make -s install DESTDIR=$STAGE#" \
      -e "s#/usr/local/#$STAGE/usr/local/#g" \
      -e "s#/boot/efi#$ESPD#g" \
      -e "s#/boot/vmlinuz-\$(uname -r)#$KERNEL#g" \
      -e "s#/boot/initrd.img-\$(uname -r)#$INITRD#g" \
      -e "s#/proc/cmdline#$WORK/cmdline#g" \
      -e "s#--listen 192.168.7.1 --port 7207#--listen 127.0.0.1 --port $PORT#"
}
# Run one block as the doc's reader would, in a shell where sudo is a no-op and the staged
# install comes first in PATH.
run_block() {
  local name="$1" text
  text="$(doc_block "$name")"
  [ -n "$text" ] || { bad "docs/install.md has a block '$name'"; return 1; }
  echo "--- docs/install.md block '$name', as run:"
  adapt <<< "$text" | sed 's/^/    /'
  HOME="$HOMED" PATH="$STAGE/usr/local/bin:$STAGE/usr/local/sbin:$PATH" \
    bash -c "set -eo pipefail; sudo() { \"\$@\"; }; $(adapt <<< "$text")"
}

echo "=== 1. install (staged in $STAGE)"
if run_block install > "$WORK/install.log" 2>&1; then ok "block install ran"; else bad "block install ran"; tail -20 "$WORK/install.log"; fi
sed -n '1,3p' "$WORK/install.log"
P="$STAGE/usr/local"
for f in bin/hvt bin/hvt-import bin/hvt-check bin/hvtrace-guest bin/hvtrace-mark sbin/hvtrace-collector \
         lib/hvtrace/hvtrace.efi lib/hvtrace/hvtrace.cfg.template lib/hvtrace/hvtrace-esp \
         share/man/man1/hvt.1 share/man/man8/hvtrace-collector.8 share/doc/hvtrace/install.md \
         share/doc/hvtrace/README.md; do
  [ -f "$P/$f" ] || bad "installed $f"
done
check "every file installed" [ "$(find "$STAGE" -type f | wc -l)" -ge 13 ]
check "hvtrace-guest statically linked" bash -c "file -L '$P/bin/hvtrace-guest' | grep -q 'statically linked'"
check "hvtrace-mark statically linked" bash -c "file -L '$P/bin/hvtrace-mark' | grep -q 'statically linked'"
check "installed programs executable" bash -c "[ -x '$P/bin/hvt' ] && [ -x '$P/sbin/hvtrace-collector' ] && [ -x '$P/lib/hvtrace/hvtrace-esp' ]"
for m in man1/hvt.1 man8/hvtrace-collector.8; do
  groff -man -Tutf8 -ww "$P/share/man/$m" > "$WORK/man.txt" 2> "$WORK/man.err"
  check "man page $m renders without groff warnings" [ ! -s "$WORK/man.err" ]
  cat "$WORK/man.err"
  check "man page $m has NAME and SYNOPSIS" bash -c "grep -q '^NAME' <(sed 's/.\x08//g' '$WORK/man.txt') && grep -q '^SYNOPSIS' <(sed 's/.\x08//g' '$WORK/man.txt')"
done

# The collector's systemd unit. systemd-analyze verify reads it as systemd would (no running
# systemd needed) and prints what it would complain about; a copy naming the staged collector
# lets it check that ExecStart's program exists, MANPATH that Documentation= resolves.
U="$P/lib/systemd/system/hvtrace-collector.service"
check "the collector's unit installed, ExecStart is PREFIX's collector" grep -q '^ExecStart=/usr/local/sbin/hvtrace-collector ' "$U"
check "the unit: DynamicUser, StateDirectory, the key as a credential, --listen from collector.env" \
  bash -c "grep -qx DynamicUser=yes '$U' && grep -qx StateDirectory=hvtrace-collector '$U' && grep -q '^LoadCredential=key:/etc/hvtrace/collector.key' '$U' && grep -qF -- '--listen \${HVT_LISTEN}' '$U' && grep -q '^HVT_LISTEN=' '$P/lib/hvtrace/collector.env.example'"
mkdir -p "$WORK/unit"; sed "s#/usr/local/#$STAGE/usr/local/#g" "$U" > "$WORK/unit/hvtrace-collector.service"
MANPATH="$P/share/man" systemd-analyze verify "$WORK/unit/hvtrace-collector.service" > "$WORK/verify.log" 2>&1
rc=$?
check "systemd-analyze verify: clean (exit $rc, $(wc -l < "$WORK/verify.log") lines of complaint)" [ "$rc" = 0 -a ! -s "$WORK/verify.log" ]
cat "$WORK/verify.log"
exposure=$(systemd-analyze security --offline=yes "$WORK/unit/hvtrace-collector.service" 2>/dev/null | grep -o 'Overall exposure level.*')
check "systemd-analyze security: ${exposure:-no answer}" grep -qE ' (SAFE|OK) ' <<< "$exposure "

echo "=== 2. the ESP ($ESPD) and hvtrace.cfg"
run_block esp || bad "block esp ran"
run_block key || bad "block key ran"
if run_block cfg > "$WORK/cfg.log" 2>&1; then ok "block cfg ran"; else bad "block cfg ran"; cat "$WORK/cfg.log"; fi
check "ESP has EFI/hvtrace/hvtrace.efi (the installed one)" cmp -s "$ESPD/EFI/hvtrace/hvtrace.efi" "$P/lib/hvtrace/hvtrace.efi"
check "ESP has the kernel and the initramfs" bash -c "cmp -s '$ESPD/EFI/hvtrace/vmlinuz' '$KERNEL' && cmp -s '$ESPD/EFI/hvtrace/initrd.img' '$INITRD'"
C="$ESPD/hvtrace.cfg"
check "hvtrace.cfg cmdline is /proc/cmdline without BOOT_IMAGE=" bash -c "grep -qxF 'cmdline = $CMDLINE' '$C'"
check "hvtrace.cfg has hvt options' trace line (task layout, lstar)" bash -c "grep -Eq '^trace = task=0x[0-9a-f]+:.*,lstar=0x[0-9a-f]+$' '$C'"
check "hvtrace.cfg has the net line with the key" bash -c "grep -q \"^net = .*key=\$(cat '$HOMED/hvtrace.key')\$\" '$C'"
check "the key is 32 bytes of hex, mode 600" bash -c "grep -Eqx '[0-9a-f]{64}' '$HOMED/hvtrace.key' && [ \"\$(stat -c %a '$HOMED/hvtrace.key')\" = 600 ]"
grep -v '^#' "$C" | grep . | sed 's/key=[0-9a-f]*/key=.../; s/^\(trace = .\{50\}\).*/\1.../; s/^/    /'
# Every key the loader's parser knows is documented in the template ("# KEY: ...").
T="$P/lib/hvtrace/hvtrace.cfg.template"
keys="$(grep -o 'cfg_eq(k, klen, "[a-z_0-9]*")' boot/cfg.c | sed 's/.*"\(.*\)")/\1/')"
undoc=""; for k in $keys; do grep -q "^# $k:" "$T" || undoc="$undoc $k"; done
check "the template documents every key of boot/cfg.c ($(echo $keys | wc -w) keys)${undoc:+; not:$undoc}" [ -n "$keys" -a -z "$undoc" ]
# A second run keeps the user's hvtrace.cfg.
run_block esp > /dev/null 2>&1
check "a second hvtrace-esp keeps hvtrace.cfg (template to hvtrace.cfg.new)" bash -c "grep -q '^net = ' '$C' && [ -f '$ESPD/hvtrace.cfg.new' ]"
rm -f "$ESPD/hvtrace.cfg.new"

# make esp from the source tree, with the installed loader: the same files (and the same
# template, as the doc's command wrote it before the trace and net lines were added).
mkdir -p "$WORK/esp-make"   # a mounted ESP exists already: make esp writes into it
make -s esp DEST="$WORK/esp-make" ESP_EFI="$P/lib/hvtrace/hvtrace.efi" KERNEL="$KERNEL" INITRD="$INITRD" \
  CMDLINE="$CMDLINE" > /dev/null || bad "make esp DEST=DIR ran"
check "make esp DEST=DIR writes the same loader, kernel and initramfs" bash -c "for f in EFI/hvtrace/hvtrace.efi EFI/hvtrace/vmlinuz EFI/hvtrace/initrd.img; do cmp -s '$ESPD/'\$f '$WORK/esp-make/'\$f || exit 1; done"
check "make esp DEST=DIR writes the same hvtrace.cfg before the added lines" bash -c "grep -v '^trace = \|^net = ' '$C' | cmp -s - '$WORK/esp-make/hvtrace.cfg'"

echo "=== 3. the collector (127.0.0.1:$PORT)"
text="$(doc_block collector)"
adapt <<< "$text" | sed 's/^/    /'
HOME="$HOMED" PATH="$P/bin:$P/sbin:$PATH" bash -c "exec $(adapt <<< "$text")" 2> "$WORK/collector.log" &
CPID=$!
for _ in $(seq 50); do grep -q listening "$WORK/collector.log" 2>/dev/null && break; sleep 0.1; done
check "the collector listens with the doc's options" grep -q listening "$WORK/collector.log"
check "the collector's command socket exists" test -S "$HOMED/hvtrace-out/control.sock"
kill "$CPID" 2>/dev/null; wait "$CPID" 2>/dev/null; CPID=""
cat "$WORK/collector.log" | sed 's/^/    /' | head -5

echo "=== 4. boot the ESP in QEMU (TCG: no VT-x)"
IMG="$WORK/esp.img"
"$P/lib/hvtrace/hvtrace-esp" -k "$KERNEL" -i "$INITRD" "$IMG" || bad "hvtrace-esp image form"
export MTOOLS_SKIP_CHECK=1
# The folder the doc made, file for file, into the image (its hvtrace.cfg with trace and net).
mcopy -o -i "$IMG" "$C" ::/hvtrace.cfg
same=1
while IFS= read -r f; do
  rel="${f#$ESPD/}"
  mcopy -n -i "$IMG" "::/$rel" "$WORK/from-img" 2>/dev/null && cmp -s "$f" "$WORK/from-img" || { same=0; echo "    differs: $rel"; }
  rm -f "$WORK/from-img"
done < <(find "$ESPD" -type f)
check "the image holds the ESP folder's files unchanged" [ "$same" = 1 ]
check "the image boots from the removable path too" bash -c "mcopy -n -i '$IMG' ::/EFI/BOOT/BOOTX64.EFI '$WORK/bootx64' && cmp -s '$WORK/bootx64' '$P/lib/hvtrace/hvtrace.efi'"
bash tests/platform/qemu-run.sh -a tcg -t "${INSTALL_QEMU_TIMEOUT:-300}" "$IMG" "$WORK/run" > "$WORK/qemu.out" 2>&1 || true
bash tests/platform/check-boot.sh novtx "$WORK/run" > "$WORK/check.out" 2>&1
rc=$?
grep -v '^HVT-RESULT' "$WORK/check.out" | sed 's/^/    /' | tail -6   # untraced: the checks that need hvtrace fail, as expected
check "check-boot novtx (VT-x not available message, init ran)" [ "$rc" = 0 ]
SER="$(tr -d '\r' < "$WORK/run/serial.log" 2>/dev/null | sed 's/\x1b\[[0-9;]*[A-Za-z]//g')"
check "the loader read the kernel path from hvtrace.cfg" grep -qF 'hvtrace: kernel=\EFI\hvtrace\vmlinuz initrd=\EFI\hvtrace\initrd.img hypervisor=on' <<< "$SER"
check "the loader passed the command line" grep -qF "hvtrace: cmdline=$CMDLINE" <<< "$SER"
check "no hvtrace.cfg line rejected" bash -c "! grep -q 'hvtrace.cfg line' <<< \"\$1\"" _ "$SER"
grep -a "^hvtrace: \(kernel=\|VT-x\)\|^HVT-INIT" <<< "$SER" | head -4 | sed 's/^/    /'

echo "=== 5. make uninstall"
make -s uninstall DESTDIR="$STAGE" PREFIX=/usr/local
left="$(find "$STAGE" -type f | wc -l)"
check "make uninstall leaves no file ($left left)" [ "$left" = 0 ]
find "$STAGE" -type f | sed 's/^/    left: /'

echo "test-install: $pass passed, $fail failed"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
