/*
 * mc_decide.h - what becomes of a machine check that reaches the hypervisor.
 *
 * The machine and its error-reporting banks are the guest's (Linux's MCE handler reads and
 * clears them; IA32_MCG_STATUS and the banks pass through), so a machine-check exception taken
 * in VMX root is handed to the guest, as an NMI is: the hypervisor runs with CR4.MCE set
 * (host_cr4.h; with it clear a machine check shuts the processor down, SDM Vol. 3A 6.15
 * "Exception and Interrupt Reference", interrupt 18), notes the event in the handler and
 * injects #MC at the next VM entry. Two cases cannot be handed over:
 *  - in root, IA32_MCG_STATUS.RIPV clear (SDM Vol. 3B 17.3.1.2 "IA32_MCG_STATUS MSR"): the
 *    interrupted hypervisor code cannot be restarted reliably, so the hypervisor stops (the
 *    fatal path, which resets the machine);
 *  - at the entry, the guest's CR4.MCE clear: the guest's own processor would have shut down,
 *    so the machine ends as for the guest's triple fault.
 * An exit for a machine check during VM entry (SDM Vol. 3C 27.9 "Machine-Check Events During VM
 * Entry", exit reason 41) is the same event: the guest state was not taken up, the entry is
 * made again with #MC. An #MC waits while the entry already carries another event (the one
 * whose delivery the exit interrupted): the guest runs one instruction under the monitor trap
 * flag, which exits right after that event's delivery (SDM 27.7.8 "Pending MTF VM Exits"). A CPU in
 * the wait-for-SIPI activity state may be given no event (27.3.1.5 "Checks on Guest Non-Register
 * State"): the #MC is dropped there (the banks keep the error for the guest's other CPUs).
 *
 * Contract: mc_root_action(mcg_status) and mc_decide(pending, activity, guest_cr4, entry_intr_info) are
 * pure (unit-tested on the host); mc_decide takes
 * the guest's activity-state field as well.
 */
#ifndef HVT_MC_DECIDE_H
#define HVT_MC_DECIDE_H
#include <stdbool.h>
#include <stdint.h>
#include "x86_arch.h"
#include "vmx_arch.h"

#define MCG_STATUS_RIPV (1ull << 0)   /* restart IP valid */
#define MCG_STATUS_EIPV (1ull << 1)   /* error IP valid */
#define MCG_STATUS_MCIP (1ull << 2)   /* machine check in progress */

enum mc_root_action { MC_ROOT_REFLECT, MC_ROOT_FATAL };

static inline enum mc_root_action mc_root_action(uint64_t mcg_status)
{
    return (mcg_status & MCG_STATUS_RIPV) ? MC_ROOT_REFLECT : MC_ROOT_FATAL;
}

enum mc_action { MC_NOTHING, MC_INJECT, MC_WAIT_ONE_STEP, MC_SHUTDOWN, MC_DROP };

static inline enum mc_action mc_decide(bool pending, uint32_t activity, uint64_t guest_cr4,
                                       uint32_t entry_intr_info)
{
    if (!pending)
        return MC_NOTHING;
    if (activity == VMX_ACTIVITY_WAIT_SIPI)
        return MC_DROP;
    if (!(guest_cr4 & CR4_MCE))
        return MC_SHUTDOWN;
    if (entry_intr_info & VMX_INTR_INFO_VALID)
        return MC_WAIT_ONE_STEP;
    return MC_INJECT;
}

#endif
