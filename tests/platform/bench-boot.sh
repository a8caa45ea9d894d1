#!/usr/bin/env bash
# bench-boot.sh - what the hypervisor costs a boot: the guest TSC at the start of init (in
# Bochs one tick per instruction and CPU round, see bench-ratio.sh), with and without it, in
# the same Bochs, side by side.
# With 2 CPUs a boot's length is chaotic in its inputs: changing one byte of the kernel command
# line moves it by up to 4% either way (the moment timer ticks land against the other CPU's
# work decides how long some waits last), with or without the hypervisor. So each side is
# booted RUNS times with command lines that differ only in a dummy argument (hvt_v=1..RUNS),
# and the ratio is that of the means; each pair is shown. 1 CPU is nearly steady: RUNS1 pairs.
# The hypervisor's own start-up is printed by the loader ("start-up took N TSC ticks"; with 1
# CPU exactly its instructions).
# usage: bench-boot.sh EFI VMLINUZ INITRD OUTDIR RUNS RUNS1 TIMEOUT CMDLINE...
#   last line: ratio=<2-CPU mean with / mean without>
set -uo pipefail
efi=$1; vmlinuz=$2; initrd=$3; out=$4; runs=$5; runs1=$6; timeout=$7; shift 7
cmdline="$*"
here=$(dirname "$0")
mkdir -p "$out"
tsc() { tr -d '\r' < "$1/serial.log" 2>/dev/null | sed -n 's/^HVT-INIT: start tsc=\([0-9]*\).*/\1/p' | head -n1; }
startup() { tr -d '\r' < "$1/serial.log" 2>/dev/null | sed -n 's/^hvtrace: start-up took \([0-9]*\) TSC ticks.*/\1/p' | head -n1; }
exits() { grep -a "exits through the full dispatch" "$1/e9.log" 2>/dev/null | awk '{ n += $6 } END { print n + 0 }'; }
boot() { # NAME on|off CPUS V: the machine (vm-run.sh), its run in $out/NAME/run
  TEST_CMDLINE="$cmdline" bash "$here/vm-run.sh" -c "$3" -t "$timeout" --efi "$efi" --kernel "$vmlinuz" \
    --initrd "$initrd" --append "hvt_cpus=$3 hvt_mode=bench hvt_v=$4" --hv "$2" --advertise - "$out/$1" >/dev/null 2>&1
}
declare -A with without
bad=0
for cpus in 2 1; do
  n=$runs; [ "$cpus" = 1 ] && n=$runs1
  for v in $(seq 1 "$n"); do
    # the two sides at once: Bochs is single-threaded
    boot "off-$cpus-$v" off "$cpus" "$v" &
    boot "on-$cpus-$v" on "$cpus" "$v"
    wait
    a=$(tsc "$out/on-$cpus-$v/run"); b=$(tsc "$out/off-$cpus-$v/run")
    if [ -z "$a" ] || [ -z "$b" ]; then echo "bench-boot: $cpus CPU(s) run $v did not reach init"; bad=1; continue; fi
    with[$cpus]+=" $a"; without[$cpus]+=" $b"
    awk -v c="$cpus" -v v="$v" -v a="$a" -v b="$b" -v s="$(startup "$out/on-$cpus-$v/run")" -v e="$(exits "$out/on-$cpus-$v/run")" \
      'BEGIN { printf "%d CPU(s) hvt_v=%d: init tsc with %.0f without %.0f ratio %.4f (start-up %s ticks, %s exits)\n", c, v, a, b, a / b, s, e }'
  done
done
[ "$bad" = 0 ] || { echo "ratio=unknown"; exit 1; }
mean() { tr ' ' '\n' <<< "$1" | awk 'NF { s += $1; n++ } END { printf "%.0f", s / n }'; }
s1=$(startup "$out/on-1-1/run")
awk -v a2="$(mean "${with[2]}")" -v b2="$(mean "${without[2]}")" -v a1="$(mean "${with[1]}")" -v b1="$(mean "${without[1]}")" \
    -v s1="$s1" -v n="$runs" -v n1="$runs1" 'BEGIN {
  r2 = a2 / b2; r1 = a1 / b1
  printf "2 CPUs, mean of %d: with %.0f without %.0f: ratio %.4f (goal <= 1.02: %s)\n", n, a2, b2, r2, r2 <= 1.02 ? "met" : "NOT met"
  printf "1 CPU, mean of %d: with %.0f without %.0f: ratio %.4f (goal <= 1.01: %s)\n", n1, a1, b1, r1, r1 <= 1.01 ? "met" : "NOT met"
  printf "hypervisor start-up: %.0f instructions (1 CPU), %.2f%% of the 1-CPU boot\n", s1, 100 * s1 / b1
  printf "ratio_1cpu=%.4f\nratio=%.4f\n", r1, r2 }'
