#!/usr/bin/env bash
# check-nmi.sh RUN_DIR HVT_IMPORT HVT_CHECK - judge the NMI run: the whole system traced while
# nmi-storm has the kernel send NMIs to the other CPU (sysrq 'l'):
#  - the workload ran and the machine powered off cleanly (a VM entry that injects an NMI
#    under blocking by STI or MOV SS fails: the hypervisor would stop the machine);
#  - the trace passes hvt-check (violations=0).
# It prints how many NMIs the hypervisor gave the guest (the power-off summary's counts): with
# virtual NMIs (Bochs has them) every NMI reaches the hypervisor (an exit, or its IDT in VMX root)
# and is injected when the guest can take it, so at least one per round must have been;
# test_nmi_decide proves the decision.
set -uo pipefail
run=$1; import=$2; check=$3
source "$(dirname "$0")/check-lib.sh"
run_start "^nmi-storm:\|^trace-run:\|^HVT-CMD"
need_status0
need_poweroff
grep -q "^nmi-storm: [0-9]* rounds" <<< "$serial" || why+=("nmi-storm did not finish")
nmi=$(grep -a "NMIs given to the guest" "$run/e9.log")
echo "$nmi"
sum() { sed -n "s/$1/\1/p" <<< "$nmi" | awk '{n += $1} END {print n + 0}'; }
given=$(sum '.*given to the guest: \([0-9]*\) .*')
exited=$(sum '.*(\([0-9]*\) exited from it.*')
held=$(sum '.*; \([0-9]*\) entries held.*')
echo "NMIs given to the guest: $given ($exited exited from it); entries that held one back: $held"
# With virtual NMIs (pin-based bit 5 in the hypervisor's VMX line) every NMI passes through the
# hypervisor - an exit from the guest, or its own IDT when the CPU was in VMX root (a stepped CPU
# mostly is) - and is given to the guest by it: at least one per round.
pin=$(grep -a -o "VMX basic [0-9a-f]* pin [0-9a-f]*" "$run/e9.log" | head -1 | awk '{print $NF}')
if [ -n "$pin" ] && (( 0x$pin & 0x20 )); then
  rounds=${NMI_ROUNDS:-8}
  [ "$given" -ge "$rounds" ] || why+=("virtual NMIs on, but $given NMIs given to the guest for $rounds rounds")
fi
if "$import" "$run/e9.log" "$run/trace.hvt"; then
  out=$("$check" "$run/trace.hvt"); st=$?
  grep "^violations=" <<< "$out"
  [ $st = 0 ] || why+=("continuity check failed")
else
  why+=("hvt-import failed")
fi
verdict test-trace-nmi
