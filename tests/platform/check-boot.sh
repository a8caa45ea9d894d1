#!/usr/bin/env bash
# check-boot.sh - judge a test-machine run from its run directory (bochs-run.sh, qemu-run.sh).
# usage: check-boot.sh MODE RUN_DIR [CPUS]
#   MODE all       every HVT-RESULT ok, the summary line present, cpus = CPUS (default 2), and
#                  a clean power-off (end = poweroff): the hypervisor test (test-boot)
#   MODE platform  the platform alone (hypervisor = off): cpus check ok, summary present,
#                  clean power-off; the checks that need hvtrace may FAIL (they are shown)
#   MODE novtx     the loader printed the no-VT-x message and init ran (test-qemu-novtx)
# Prints the guest's result lines, cpus=N, the hypervisor's "hvtrace:" lines from the 0xE9
# log, and on failure the tail of the serial log. Closing line: "check-boot: PASS|FAIL ...".
set -uo pipefail
mode="$1"; run="$2"; want_cpus="${3:-2}"
serial="$run/serial.log"; e9="$run/e9.log"
end=$(cat "$run/end" 2>/dev/null || echo unknown)
# The serial log has CRLF line ends and firmware escape sequences: clean what we grep.
clean() { tr -d '\r' < "$1" 2>/dev/null | sed 's/\x1b\[[0-9;]*[A-Za-z]//g'; }
log=$(clean "$serial")
results=$(grep "^HVT-RESULT: " <<< "$log")
summary=$(grep "^HVT-SUMMARY: " <<< "$log" | tail -n1)
cpus=$(sed -n 's/.*cpus=\([0-9]*\).*/\1/p' <<< "$summary")
why=()

[ -n "$results" ] && echo "$results"
[ -n "$summary" ] && echo "$summary"
echo "cpus=${cpus:-unknown}"
if [ -s "$e9" ]; then
  echo "--- hypervisor (port 0xE9):"
  clean "$e9" | grep "^hvtrace:" | tail -n 40
fi
echo "end=$end wall_seconds=$(cat "$run/wall_seconds" 2>/dev/null || echo ?)"

case "$mode" in
  all)
    [ "$end" = poweroff ] || why+=("run ended by $end, not a clean power-off")
    [ -n "$summary" ] || why+=("no HVT-SUMMARY line")
    [ "${cpus:-}" = "$want_cpus" ] || why+=("cpus=${cpus:-?}, want $want_cpus")
    grep -q " FAIL" <<< "$results" && why+=("failed checks: $(grep ' FAIL' <<< "$results" | sed 's/.*name=\([^ ]*\).*/\1/' | tr '\n' ' ')")
    [ -n "$results" ] || why+=("no HVT-RESULT lines")
    # the hypervisor says what it did with the IOMMU (no DMAR on Bochs: one line saying so)
    [ "$(clean "$e9" | grep -c "^hvtrace: IOMMU")" -gt 0 ] || why+=("no IOMMU line in the hypervisor's log")
    for n in ${CHECK_BOOT_NEED:-}; do     # checks that must have run (and passed)
      grep -q "^HVT-RESULT: name=$n ok" <<< "$results" || why+=("check $n missing")
    done
    ;;
  platform)
    [ "$end" = poweroff ] || why+=("run ended by $end, not a clean power-off")
    [ -n "$summary" ] || why+=("no HVT-SUMMARY line")
    grep -q "^HVT-RESULT: name=cpus ok" <<< "$results" || why+=("cpus check failed (cpus=${cpus:-?})")
    ;;
  novtx)
    grep -q "hvtrace: VT-x not available: .*; booting Linux untraced" <<< "$log" || why+=("no 'VT-x not available' message")
    grep -q "^HVT-INIT: start" <<< "$log" || why+=("init did not run")
    grep "hvtrace: VT-x not available" <<< "$log" | head -n1
    ;;
  *) echo "check-boot: unknown mode $mode" >&2; exit 2 ;;
esac

if [ ${#why[@]} -eq 0 ]; then
  echo "check-boot: PASS ($mode)"
  exit 0
fi
echo "--- serial log tail ($serial):"
tail -n 40 <<< "$log"
printf 'check-boot: FAIL (%s): %s\n' "$mode" "$(IFS=';'; echo "${why[*]}")"
exit 1
