/*
 * host_cr4.h - the CR4 the hypervisor runs with in VMX root.
 *
 * Contract: host_cr4_pick(cr4, fixed0, fixed1, xsave) is the firmware's CR4 (what the CPU had
 * when the hypervisor started on it) made fit for VMX operation (SDM Vol. 3C 24.8 "Restrictions
 * on VMX Operation": the bits IA32_VMX_CR4_FIXED0 sets and FIXED1 clears, and VMXE), with
 * OSXSAVE when the CPU has XSAVE (the exit path uses XGETBV), and without what the firmware may
 * have turned on for its own code but the hypervisor is not built for, and with MCE whatever the
 * firmware had (with CR4.MCE clear a machine check in VMX root shuts the processor down instead
 * of reaching the hypervisor's handler, which hands it to the guest: mc_decide.h): CET (its shadow stack
 * would check the hypervisor's returns, IBT its indirect calls: the hypervisor is not compiled
 * with ENDBR or shadow-stack support) and PKS (supervisor protection keys would govern the
 * hypervisor's own data accesses by the firmware's IA32_PKRS). Pure: unit-tested on the host.
 */
#ifndef HVT_HOST_CR4_H
#define HVT_HOST_CR4_H
#include <stdbool.h>
#include <stdint.h>
#include "x86_arch.h"

static inline uint64_t host_cr4_pick(uint64_t cr4, uint64_t fixed0, uint64_t fixed1, bool xsave)
{
    return ((cr4 | fixed0 | CR4_VMXE | CR4_MCE | (xsave ? CR4_OSXSAVE : 0)) & fixed1) & ~(CR4_CET | CR4_PKS);
}

#endif
