#!/usr/bin/env bash
# qemu-run.sh - boot a hvtrace ESP image (tests/platform/make-esp.sh) under QEMU + OVMF.
#
# usage: qemu-run.sh [options] ESP.img RUN_DIR
#   -c N    CPUs                    env QEMU_CPUS     default 2
#   -m MB   guest RAM               env QEMU_MEM      default 512
#   -t S    wall-clock timeout (s)  env QEMU_TIMEOUT  default 300
#   -a A    accelerator: auto | kvm | tcg | kvm-or-tcg env QEMU_ACCEL default auto
#   -V F    keep the firmware's variables in F across runs (made from OVMF_VARS.fd when absent)
#   -w      the image is written (the loader's own writes stay: default is snapshot=on)
#
# Acceleration: with "auto", KVM with nested VT-x (-enable-kvm -cpu host) is used only when it
# can work: /dev/kvm opens, the host CPU is Intel, kvm_intel's "nested" parameter is on, and a
# probe QEMU with -accel kvm -cpu host starts. Otherwise TCG, which has no VMX at all (docs/references.md):
# the loader must then print "hvtrace: VT-x not available: ...; booting Linux untraced".
# On these machines /dev/kvm is a paravirtual kvm_pvm and the CPU exposes no VMX: TCG is chosen.
# (kvm_pvm runs SeaBIOS but stops OVMF with "KVM internal error": should KVM be chosen and then
# fail that way, the run is restarted under TCG.)
#
# Firmware: Debian 12's /usr/share/OVMF/OVMF_CODE.fd (read-only pflash) + a private copy of
# OVMF_VARS.fd (or -V's file). The image is attached read-only-in-effect (snapshot=on) unless
# -w: runs never modify it.
# RUN_DIR receives: serial.log (COM1), e9.log (debugcon, port 0xE9), qemu.stderr, accel,
# end (poweroff | timeout | exit-N), wall_seconds.
# Exit status: 0 when the guest powered off (QEMU exits 0 on ACPI S5), 124 on timeout, else 1.
set -euo pipefail
CPUS="${QEMU_CPUS:-2}"; MEM="${QEMU_MEM:-512}"; TIMEOUT="${QEMU_TIMEOUT:-300}"; ACCEL="${QEMU_ACCEL:-auto}"
KEEP_VARS=""; SNAPSHOT=on
while getopts "c:m:t:a:V:w" opt; do
  case "$opt" in
    c) CPUS="$OPTARG" ;; m) MEM="$OPTARG" ;; t) TIMEOUT="$OPTARG" ;; a) ACCEL="$OPTARG" ;;
    V) KEEP_VARS="$OPTARG" ;; w) SNAPSHOT=off ;;
    *) sed -n '2,14p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,14p' "$0" >&2; exit 2; }
IMG="$1"; RUN="$2"
[ -f "$IMG" ] || { echo "qemu-run: no image $IMG" >&2; exit 2; }
QEMU=qemu-system-x86_64
CODE=/usr/share/OVMF/OVMF_CODE.fd; VARS=/usr/share/OVMF/OVMF_VARS.fd
mkdir -p "$RUN"
RUN="$(cd "$RUN" && pwd)"
rm -f "$RUN"/{serial.log,e9.log,qemu.stderr,accel,end,wall_seconds}
kvm_usable() {
  [ -r /dev/kvm ] && [ -w /dev/kvm ] || { echo "no usable /dev/kvm"; return 1; }
  grep -q '^vendor_id.*GenuineIntel' /proc/cpuinfo || { echo "host CPU is not Intel"; return 1; }
  grep -qw vmx /proc/cpuinfo || { echo "the host CPU does not expose VMX"; return 1; }
  local nested
  nested=$(cat /sys/module/kvm_intel/parameters/nested 2>/dev/null || echo N)
  case "$nested" in Y|y|1) ;; *) echo "kvm_intel nested VMX is off or kvm_intel is not loaded"; return 1 ;; esac
  # The probe: does a KVM guest with -cpu host actually run (SeaBIOS, 5 s)? timeout's 124
  # means QEMU was still running; anything else is an abort or an error.
  local rc=0
  timeout 5 "$QEMU" -accel kvm -cpu host -machine pc -nodefaults -display none -no-reboot \
    < /dev/null > /dev/null 2>&1 || rc=$?
  [ "$rc" -eq 124 ] || { echo "QEMU cannot run a guest with -accel kvm -cpu host (status $rc)"; return 1; }
  return 0
}

AUTO=no
case "$ACCEL" in
  auto)
    AUTO=yes
    if why=$(kvm_usable); then ACCEL=kvm; else ACCEL=tcg; echo "qemu-run: TCG ($why)" >&2; fi ;;
  kvm-or-tcg) AUTO=yes; ACCEL=kvm ;;   # skip the checks: try KVM, fall back on a KVM error
  kvm|tcg) ;;
  *) echo "qemu-run: -a must be auto, kvm, tcg or kvm-or-tcg" >&2; exit 2 ;;
esac
if [ "$ACCEL" = kvm ]; then ACCEL_ARGS=(-enable-kvm -cpu host); else ACCEL_ARGS=(-accel tcg,thread=multi -cpu max); fi
echo "$ACCEL" > "$RUN/accel"

# One QEMU run; a KVM that cannot run OVMF ("KVM internal error", e.g. kvm_pvm) stops the run
# early with status 250 so that "auto" can fall back to TCG.
run_qemu() {
  local pid rc
  local vars="$RUN/OVMF_VARS.fd"
  if [ -n "$KEEP_VARS" ]; then vars="$KEEP_VARS"; [ -f "$vars" ] || cp "$VARS" "$vars"
  else cp "$VARS" "$vars"; fi
  rm -f "$RUN/serial.log" "$RUN/e9.log"
  timeout --kill-after=5 "$TIMEOUT" "$QEMU" -machine pc "${ACCEL_ARGS[@]}" -smp "$CPUS" -m "$MEM" \
    -drive if=pflash,format=raw,unit=0,readonly=on,file="$CODE" \
    -drive if=pflash,format=raw,unit=1,file="$vars" \
    -drive file="$IMG",format=raw,if=ide,snapshot=$SNAPSHOT \
    -net none -display none -no-reboot \
    -serial file:"$RUN/serial.log" -debugcon file:"$RUN/e9.log" \
    < /dev/null > /dev/null 2> "$RUN/qemu.stderr" &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 1
    if [ "$ACCEL" = kvm ] && grep -qs "KVM internal error" "$RUN/qemu.stderr"; then
      kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; return 250
    fi
  done
  rc=0; wait "$pid" || rc=$?
  return "$rc"
}

start=$(date +%s.%N)
set +e
run_qemu
rc=$?
if [ "$rc" -eq 250 ] && [ "$AUTO" = yes ]; then
  echo "qemu-run: KVM internal error under OVMF: falling back to TCG" >&2
  ACCEL=tcg; ACCEL_ARGS=(-accel tcg,thread=multi -cpu max); echo "tcg (kvm failed)" > "$RUN/accel"
  run_qemu
  rc=$?
fi
set -e
end=$(date +%s.%N)
awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' > "$RUN/wall_seconds"
if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then how=timeout
elif [ "$rc" -eq 250 ]; then how=kvm-error
elif [ "$rc" -eq 0 ]; then how=poweroff
else how="exit-$rc"
fi
echo "$how" > "$RUN/end"
echo "qemu-run: $ACCEL, ended by $how after $(cat "$RUN/wall_seconds") s (run dir $RUN)" >&2
case "$how" in poweroff) exit 0 ;; timeout) exit 124 ;; *) exit 1 ;; esac
