#!/usr/bin/env bash
# bochs-run.sh - run the VT-x test machine: Bochs 3.0, headless, under OVMF, booting an ESP
# image (tests/platform/make-esp.sh), and capture everything into a run directory.
#
# usage: bochs-run.sh [options] ESP.img RUN_DIR
#   -c N   CPUs                     env BOCHS_CPUS     default 2
#   -m MB  guest RAM                env BOCHS_MEM      default 512
#   -t S   wall-clock timeout (s)   env BOCHS_TIMEOUT  default 150
#   -n     add an e1000 NIC (slirp, loopback only: guest 10.0.2.2:P -> host 127.0.0.1:P)
#                                   env BOCHS_NIC=slirp
#   env BOCHS_END_ON_RESET=1  stop when the machine resets (the loader starts again): end=reset
#   env BOCHS_EXPECT_PANIC=1  a hypervisor PANIC does not end the run (its fatal path is tested)
#   env BOCHS_IPS       emulated instructions per second (default 50000000, see below)
#   env BOCHS_LOG_MAX   bytes of Bochs's log kept from the start (default 20000000); the last
#                       64 KiB of the rest go to bochs.log.tail
#   env BOCHS_ERROR     action for Bochs "error" events: report (default) | ignore
#   env BOCHS_INFO      action for Bochs "info" events: ignore (default) | report. Not report by
#                       default: Bochs 3.0 (built with show-ips, the default) logs "ips = ..." from
#                       its SIGALRM handler, which takes the log mutex (logio.cc, a plain
#                       pthread mutex); when the alarm interrupts the simulator thread inside the
#                       logger, Bochs deadlocks for good (measured: ~1 run in 6 hung, silently,
#                       until the timeout). With info ignored the handler returns before locking.
#                       Use report only for short debugging runs.
#   env BOCHS_PREFIX    Bochs 3.0 install prefix (default: tests/platform/build-bochs.sh)
#   env BOCHS_CPU_MODEL the CPU model (default corei7_skylake_x; tigerlake needs a Bochs built
#                       with CET: HVT_BOCHS_CET=1 build-bochs.sh)
#   env BOCHS_IGNORE_BAD_MSRS  1 (default): an MSR Bochs does not model reads 0 and ignores
#                       writes; 0: #GP as on a real CPU. With Debian's OVMF 0 does not boot:
#                       the firmware reads IA32_PLATFORM_ID (0x17), which Bochs does not model,
#                       and stops in its exception handler before the loader runs.
#   env BOCHS_REPRODUCIBLE  1 (default): run Bochs with tests/platform/bochs-fixed-time.c
#                       preloaded, so its RDRAND seed (srand(time(NULL))) is the same in every
#                       run and runs are instruction-for-instruction reproducible; 0: host time
#   env HVT_BOCHS_TIME  the fixed time() value (default 946684800)
#   env HVT_CACHE       cache folder (default ~/.cache/hvtrace): holds the OVMF 4 MiB ROM
#
# RUN_DIR receives:
#   bochsrc          the configuration used
#   serial.log       COM1 (firmware ConOut, the loader, Linux's console)
#   e9.log           bytes written to port 0xE9 (Bochs's stdout; the hypervisor's log)
#   bochs.log(.tail) Bochs's own log, capped; bochs.stderr
#   end              how the run ended: poweroff | shutdown-port | timeout | panic | exit-N |
#                    guest-crash (firmware exception or kernel panic on COM1, or hvtrace: PANIC
#                    on 0xE9: the run is stopped early)
#   wall_seconds     wall-clock duration
# Exit status: 0 when the machine powered off (ACPI S5) or used the 0x8900 shutdown port,
# 124 on timeout, 1 otherwise. (Bochs itself exits 1 on power-off and on panic alike, so the
# end is read from its log.) Judge the guest's own success from serial.log, not from this.
#
# ips: Bochs runs with "clock: sync=none", so emulated time is instructions / ips, and the
# TSC ticks once per instruction whatever ips is. Default 50 M. Measured (2 CPUs, hypervisor
# off, instructions from reset to init = init's TSC; wall times are noisy):
#     ips   10 M: 1.965e9 instr (196 s emulated)   25 M: 2.001e9   50 M: 2.001-2.011e9 (40 s)
#          100 M: 2.222e9                          200 M: 2.510e9
# Above 50 M the guest's busy-waits (calibration loops, udelay), which last a fixed emulated
# time, cost proportionally more instructions (+11% at 100 M, +25% at 200 M). Below 25 M
# nothing is gained (-2% at 10 M) while every timer-based watchdog (RCU stall after 21 s,
# soft lockup, hung tasks) fires after 5x fewer instructions - exactly what a hypervisor that
# adds work per guest instruction must not provoke. 50 M is also what the measurements in docs/references.md used.
#
# Stopping: SIGINT, not SIGTERM (timeout -s INT, and the crash watcher): Bochs turns SIGINT
# into a panic that exits through its normal path, so its buffered log and stdout are flushed
# (a SIGTERM loses the last few KB of the log: exactly the part that shows a hang).
#
# Each run boots a private copy of the image (Bochs leaves IMAGE.lock behind when killed by
# timeout; a copy per run makes stale locks harmless) and removes it afterwards.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
CPUS="${BOCHS_CPUS:-2}"; MEM="${BOCHS_MEM:-512}"; TIMEOUT="${BOCHS_TIMEOUT:-150}"
NIC="${BOCHS_NIC:-none}"; IPS="${BOCHS_IPS:-50000000}"; LOG_MAX="${BOCHS_LOG_MAX:-20000000}"
ERROR_ACTION="${BOCHS_ERROR:-report}"; INFO_ACTION="${BOCHS_INFO:-ignore}"
while getopts "c:m:t:n" opt; do
  case "$opt" in
    c) CPUS="$OPTARG" ;; m) MEM="$OPTARG" ;; t) TIMEOUT="$OPTARG" ;; n) NIC=slirp ;;
    *) sed -n '2,20p' "$0" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || { sed -n '2,20p' "$0" >&2; exit 2; }
IMG="$1"; RUN="$2"
[ -f "$IMG" ] || { echo "bochs-run: no image $IMG" >&2; exit 2; }
PREFIX="${BOCHS_PREFIX:-$(bash "$here/build-bochs.sh")}"
BOCHS="$PREFIX/bin/bochs"
CACHE="${HVT_CACHE:-$HOME/.cache/hvtrace}"

# OVMF as one 4 MiB ROM: the variable store then the code, as the flash layout expects
# (Bochs 3.0 accepts a 4 MiB ROM at 0xffc00000: docs/references.md).
ROM="$CACHE/ovmf/OVMF-4M.fd"
if [ ! -f "$ROM" ]; then
  mkdir -p "$CACHE/ovmf"
  # $$: concurrent runs (bench-boot starts two) each write their own file; the rename is atomic.
  cat /usr/share/OVMF/OVMF_VARS_4M.fd /usr/share/OVMF/OVMF_CODE_4M.fd > "$ROM.$$"
  [ "$(stat -c %s "$ROM.$$")" -eq $((4 << 20)) ] || { echo "bochs-run: OVMF ROM is not 4 MiB" >&2; exit 1; }
  mv -f "$ROM.$$" "$ROM"
fi

PRELOAD=""
if [ "${BOCHS_REPRODUCIBLE:-1}" = 1 ]; then
  SHIM="$CACHE/bochs-fixed-time.so"
  if [ ! -f "$SHIM" ] || [ "$here/bochs-fixed-time.c" -nt "$SHIM" ]; then
    mkdir -p "$CACHE"
    gcc -O2 -shared -fPIC -o "$SHIM.$$" "$here/bochs-fixed-time.c" && mv -f "$SHIM.$$" "$SHIM"
  fi
  PRELOAD="$SHIM"
fi

mkdir -p "$RUN"
RUN="$(cd "$RUN" && pwd)"
rm -f "$RUN"/{stamps,serial.log,e9.log,bochs.log,bochs.log.tail,bochs.stderr,end,wall_seconds,disk.img,disk.img.lock,log.fifo}
cp --sparse=always "$IMG" "$RUN/disk.img"

NIC_CFG=""; PCI_SLOTS=""
if [ "$NIC" = slirp ]; then
  # restricted = 0: the guest may reach the host's loopback through 10.0.2.2 (docs/references.md).
  printf '# slirp config\nrestricted = 0\n' > "$RUN/slirp.conf"   # first line mandatory (eth_slirp.cc)
  PCI_SLOTS=", slot1=e1000"
  NIC_CFG="e1000: enabled=1, mac=52:54:00:12:34:56, ethmod=slirp, script=$RUN/slirp.conf"
fi

cat > "$RUN/bochsrc" <<EOF
# generated by tests/platform/bochs-run.sh
display_library: nogui
megs: $MEM
cpu: model=${BOCHS_CPU_MODEL:-corei7_skylake_x}, count=$CPUS, ips=$IPS, reset_on_triple_fault=0, ignore_bad_msrs=${BOCHS_IGNORE_BAD_MSRS:-1}
romimage: file=$ROM, address=0xffc00000
vgaromimage: file=/usr/share/vgabios/vgabios.bin
pci: enabled=1, chipset=i440fx$PCI_SLOTS
ata0: enabled=1, ioaddr1=0x1f0, ioaddr2=0x3f0, irq=14
ata0-master: type=disk, path=$RUN/disk.img, mode=flat
boot: disk
clock: sync=none, time0=946684800
com1: enabled=1, mode=file, dev=$RUN/serial.log
port_e9_hack: enabled=1
speaker: enabled=0
mouse: enabled=0
$NIC_CFG
log: $RUN/log.fifo
panic: action=fatal
error: action=$ERROR_ACTION
info: action=$INFO_ACTION
debug: action=ignore
EOF

# Bochs's log goes through a FIFO so its size is capped without ever blocking Bochs.
mkfifo "$RUN/log.fifo"
{ head -c "$LOG_MAX"; tail -c 65536 > "$RUN/bochs.log.tail"; } < "$RUN/log.fifo" > "$RUN/bochs.log" &
logger_pid=$!

start=$(date +%s.%N)
set +e
LD_PRELOAD="$PRELOAD" timeout -s INT --kill-after=10 "$TIMEOUT" "$BOCHS" -q -f "$RUN/bochsrc" < /dev/null > "$RUN/e9.log" 2> "$RUN/bochs.stderr" &
bochs_pid=$!
# A crash that leaves the machine spinning (a firmware exception dump, a kernel panic, the
# hypervisor's "hvtrace: PANIC" on port 0xE9) would
# otherwise cost the whole timeout: watch the serial log and stop the run early.
crashed=""; reset_seen=""
# env BOCHS_STAMP="REGEX": write the wall-clock second (0.2 s steps) at which each line
# matching REGEX first appears in serial.log or e9.log to RUN/stamps ("SECONDS LINE"), for
# benchmarks that need Bochs's own cost (bench-step).
t_start=$(date +%s.%N); declare -A stamped=([serial.log]=0 [e9.log]=0)
stamp() {
  [ -n "${BOCHS_STAMP:-}" ] || return 0
  local now f lines n
  now=$(date +%s.%N)
  for f in serial.log e9.log; do   # each file on its own: their lines interleave in time
    # One snapshot of the file, its first 'size' bytes: Bochs goes on writing meanwhile.
    local size
    size=$(stat -c %s "$RUN/$f" 2>/dev/null || echo 0)
    [ "$size" -gt 0 ] || continue
    lines=$(head -c "$size" "$RUN/$f" | grep -a -E "$BOCHS_STAMP" | tr -d '\r\000')
    # A line still being written (no newline yet at the snapshot's end) waits until it is
    # whole: stamped half, it would not match what a report looks for ("TICKBENCH-PHASE untra").
    if [ "$(tail -c +"$size" "$RUN/$f" | head -c 1 | wc -l)" = 0 ] &&
       [ "$(head -c "$size" "$RUN/$f" | tail -n 1 | tr -d '\r\000')" = "$(printf '%s\n' "$lines" | tail -n 1)" ]; then
      lines=$(printf '%s\n' "$lines" | head -n -1)
    fi
    n=$(printf '%s' "$lines" | grep -c . || true)
    if [ "$n" -gt "${stamped[$f]}" ]; then
      printf '%s\n' "$lines" | tail -n +$((stamped[$f] + 1)) | while IFS= read -r l; do
        awk -v a="$now" -v b="$t_start" -v l="$l" 'BEGIN { printf "%.1f %s\n", a - b, l }'; done >> "$RUN/stamps"
      stamped[$f]=$n
    fi
  done
}
while kill -0 "$bochs_pid" 2>/dev/null; do
  if [ -n "${BOCHS_STAMP:-}" ]; then for _ in 1 2 3 4 5; do sleep 0.2; stamp; done; else sleep 1; fi
  # env BOCHS_END_ON_RESET=1: the machine reset (the loader starts a second time): stop there
  if [ "${BOCHS_END_ON_RESET:-0}" = 1 ] && [ "$(grep -ac 'hvtrace: loader started' "$RUN/serial.log" 2>/dev/null)" -ge 2 ]; then
    sleep 1
    reset_seen=yes
    kill -INT "$bochs_pid" 2>/dev/null
    break
  fi
  if grep -qas "!!!! X64 Exception\|Kernel panic - not syncing" "$RUN/serial.log" ||
     { [ "${BOCHS_EXPECT_PANIC:-0}" != 1 ] && grep -qas "^hvtrace: PANIC" "$RUN/e9.log"; }; then
    sleep 2   # let the rest of the dump reach the log
    crashed=yes
    kill -INT "$bochs_pid" 2>/dev/null
    break
  fi
done
wait "$bochs_pid"
rc=$?
set -e
end=$(date +%s.%N)
# If Bochs died before opening its log, the reader still blocks in open(): release it.
if kill -0 "$logger_pid" 2>/dev/null; then timeout 2 bash -c "exec 3>'$RUN/log.fifo'" 2>/dev/null || true; fi
wait "$logger_pid" 2>/dev/null || true
rm -f "$RUN/log.fifo" "$RUN/disk.img" "$RUN/disk.img.lock"
awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f\n", b - a }' > "$RUN/wall_seconds"

logs=("$RUN/bochs.log" "$RUN/bochs.log.tail")
if [ -n "$reset_seen" ]; then how=reset
elif [ -n "$crashed" ]; then how=guest-crash
elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then how=timeout
elif grep -qs "ACPI control: soft power off" "${logs[@]}"; then how=poweroff
elif grep -qs "Shutdown port: shutdown requested" "${logs[@]}"; then how=shutdown-port
elif grep -qs "PANIC\|FATAL\|triple fault" "${logs[@]}"; then how=panic
else how="exit-$rc"
fi
echo "$how" > "$RUN/end"
echo "bochs-run: ended by $how after $(cat "$RUN/wall_seconds") s (run dir $RUN)" >&2
case "$how" in
  poweroff|shutdown-port|reset) exit 0 ;;
  timeout) exit 124 ;;
  *) exit 1 ;;
esac
