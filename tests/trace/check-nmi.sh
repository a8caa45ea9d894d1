#!/usr/bin/env bash
# check-nmi.sh RUN_DIR HVT_IMPORT HVT_CHECK - judge the NMI run: the whole system traced while
# nmi-storm has the kernel send NMIs to the other CPU (sysrq 'l'):
#  - the workload ran and the machine powered off cleanly (a VM entry that injects an NMI
#    under blocking by STI or MOV SS fails: the hypervisor would stop the machine);
#  - the trace passes hvt-check (violations=0).
# It prints how many NMIs the hypervisor caught in VMX root and how many entries held one back
# (the power-off summary's counts). Not required: in Bochs the other CPU takes them in VMX
# non-root (none reached root in the runs so far); test_nmi_decide proves the decision.
set -uo pipefail
run=$1; import=$2; check=$3
source "$(dirname "$0")/check-lib.sh"
run_start "^nmi-storm:\|^trace-run:\|^HVT-CMD"
need_status0
need_poweroff
grep -q "^nmi-storm: [0-9]* rounds" <<< "$serial" || why+=("nmi-storm did not finish")
nmi=$(grep -a "NMIs taken in VMX root and given to the guest" "$run/e9.log")
echo "$nmi"
given=$(sed -n 's/.*given to the guest: \([0-9]*\) (\([0-9]*\) entries.*/\1/p' <<< "$nmi" | awk '{n += $1} END {print n + 0}')
held=$(sed -n 's/.*given to the guest: \([0-9]*\) (\([0-9]*\) entries.*/\2/p' <<< "$nmi" | awk '{n += $1} END {print n + 0}')
echo "NMIs given to the guest from VMX root: $given; entries that held one back: $held"
if "$import" "$run/e9.log" "$run/trace.hvt"; then
  out=$("$check" "$run/trace.hvt"); st=$?
  grep "^violations=" <<< "$out"
  [ $st = 0 ] || why+=("continuity check failed")
else
  why+=("hvt-import failed")
fi
verdict test-trace-nmi
