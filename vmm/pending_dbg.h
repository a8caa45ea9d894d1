/*
 * pending_dbg.h - the pending-debug-exceptions field when the hypervisor puts the guest in an
 * interrupt shadow itself.
 *
 * A probe's step-over runs one instruction with "blocking by STI" set so no interrupt can split
 * it (hv_guest_hold_interrupts). A VM entry checks (SDM 27.3.1.5 "Checks on Guest Non-Register
 * State"): with blocking by STI or MOV SS, bit 14 (BS) of the pending debug exceptions must be 1
 * if RFLAGS.TF is 1 and IA32_DEBUGCTL.BTF is 0, and 0 otherwise; else the entry fails. A guest
 * that single-steps itself (a debugger, ptrace) through a probed instruction meets exactly
 * that (Xen's XSA-308 was this check). With TF set the guest is owed a single-step #DB after
 * the instruction anyway: BS set delivers it then, once.
 *
 * Contract: pending_dbg_in_shadow(pending, rflags, debugctl) is the field to write once the
 * hypervisor has set blocking by STI or MOV SS. Pure (host-tested).
 */
#ifndef HVT_PENDING_DBG_H
#define HVT_PENDING_DBG_H
#include <stdint.h>
#include "x86_arch.h"

#define PENDING_DBG_BS  (1ull << 14)   /* single-step (SDM 25.4.2, table 25-4) */
#define DEBUGCTL_BTF    (1ull << 1)    /* single-step on branches */

static inline uint64_t pending_dbg_in_shadow(uint64_t pending, uint64_t rflags, uint64_t debugctl)
{
    return (rflags & RFLAGS_TF) && !(debugctl & DEBUGCTL_BTF) ? pending | PENDING_DBG_BS
                                                             : pending & ~PENDING_DBG_BS;
}

#endif
