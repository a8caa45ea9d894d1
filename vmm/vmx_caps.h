/*
 * vmx_caps.h - which of the VMX features the hypervisor uses a CPU has, and what it does
 * without each: refuse to start (with the reason), or do without. The one statement of these
 * rules: the hypervisor's start (vmx_setup.c) and `hvt check-host` on a Linux machine both
 * decide with vmx_caps_decide.
 *
 * Required controls (the VMX_CAPS_*_NEED masks, which vmx_setup.c also sets): I/O and MSR
 * bitmaps, TSC offsetting and the secondary controls; EPT and unrestricted guest; 64-bit host,
 * debug-control, PAT and EFER save/load at exit and entry. EPT must walk 4 levels with
 * write-back paging structures. Used beyond those: INVEPT of one context (without it, of all
 * contexts; without both the EPT edits of probes and views could not be made visible:
 * refuse), the HLT and wait-for-SIPI activity states (a traced CPU's HLT, an AP waiting for its
 * SIPI: refuse without them), the VMX-preemption timer (the periodic poll of the NIC and of
 * sampling probes: refuse without it), the monitor trap flag (single-step tracing and probe
 * step-overs: refuse without it) and execute-only EPT entries (hidden probes: without them
 * probes are refused, tracing still runs); and VPIDs, with INVVPID of one context or of all
 * (without them every VM entry and exit flushes the guest's TLB: slower, not wrong; so VPIDs
 * are used only where the CPU can also invalidate them); NMI exiting with virtual NMIs and
 * NMI-window exiting (every NMI exits, and the hypervisor injects it when the guest can take
 * it, where a traced CPU sees it; without all three NMIs go to the guest directly); and the controls that clear
 * IA32_LBR_CTL at exit and load the guest's at entry (with both, the guest's architectural
 * LBRs record its branches and never the hypervisor's; without, its writes are refused). Sources: SDM appendix A "VMX
 * Capability Reporting Facility" (A.3 "VM-Execution Controls", A.4 "VM-Exit Controls", A.5
 * "VM-Entry Controls", A.6 "Miscellaneous Data", A.10 "VPID and EPT Capabilities").
 *
 * Contract: vmx_caps_decide(in, out) is pure (host-tested): `in` holds the capability MSRs as
 * read (the TRUE_ ones where IA32_VMX_BASIC[55] says they exist; 0 for an MSR that does not
 * exist, see vmx_caps_has_*), `out` the verdict. out->refuse is NULL when the hypervisor can
 * start, else the first missing requirement, in words.
 */
#ifndef HVT_VMX_CAPS_H
#define HVT_VMX_CAPS_H
#include <stdbool.h>
#include <stdint.h>
#include "vmx_arch.h"

struct vmx_caps_in {
    uint64_t pinbased;        /* IA32_VMX_(TRUE_)PINBASED_CTLS: allowed-1 settings in bits 63:32 */
    uint64_t procbased;       /* IA32_VMX_(TRUE_)PROCBASED_CTLS */
    uint64_t procbased2;      /* IA32_VMX_PROCBASED_CTLS2 */
    uint64_t exit;            /* IA32_VMX_(TRUE_)EXIT_CTLS */
    uint64_t entry;           /* IA32_VMX_(TRUE_)ENTRY_CTLS */
    uint64_t misc;            /* IA32_VMX_MISC */
    uint64_t ept_vpid_cap;    /* IA32_VMX_EPT_VPID_CAP */
};

struct vmx_caps {
    const char *refuse;       /* NULL: the hypervisor can start */
    uint32_t invept_type;     /* INVEPT type to use: 1 single-context, 2 all-context */
    bool exec_only;           /* execute-only EPT entries: hidden probes possible */
    unsigned preempt_shift;   /* the preemption timer counts at TSC >> this */
    bool vpid;                /* tag the guest's translations with a VPID */
    uint32_t invvpid_type;    /* with vpid: INVVPID type, 1 single-context, 2 all-context */
    bool virtual_nmis;        /* NMI exiting, virtual NMIs and NMI-window exiting: every NMI
                                 exits and is given to the guest when it can take it */
    bool lbr_ctl;             /* IA32_LBR_CTL cleared at exit, the guest's loaded at entry: the
                                 guest may use architectural LBRs (else its writes are refused) */
};

/* The controls the hypervisor cannot run without (it sets them; vmx_setup.c). */
#define VMX_CAPS_PROC_NEED  (PROC_USE_IO_BITMAPS | PROC_USE_MSR_BITMAPS | PROC_SECONDARY_CONTROLS | \
                             PROC_USE_TSC_OFFSET)
#define VMX_CAPS_PROC2_NEED (PROC2_ENABLE_EPT | PROC2_UNRESTRICTED)
#define VMX_CAPS_EXIT_NEED  (EXIT_HOST_ADDR64 | EXIT_SAVE_DEBUG | EXIT_SAVE_PAT | EXIT_LOAD_PAT | \
                             EXIT_SAVE_EFER | EXIT_LOAD_EFER)
#define VMX_CAPS_ENTRY_NEED (ENTRY_LOAD_DEBUG | ENTRY_LOAD_PAT | ENTRY_LOAD_EFER)

/* IA32_VMX_MISC (SDM A.6) */
#define VMX_MISC_PREEMPT_SHIFT(m)  ((unsigned)((m) & 0x1f))
#define VMX_MISC_ACT_HLT           (1ull << 6)
#define VMX_MISC_ACT_WAIT_SIPI     (1ull << 8)

/* Which capability MSRs exist (SDM A.3.3, A.10): reading a missing one faults. */
static inline bool vmx_caps_has_procbased2(uint64_t procbased)
{
    return (procbased >> 32) & PROC_SECONDARY_CONTROLS;
}
static inline bool vmx_caps_has_ept_vpid_cap(uint64_t procbased2)
{
    return (procbased2 >> 32) & (PROC2_ENABLE_EPT | PROC2_ENABLE_VPID);
}

void vmx_caps_decide(const struct vmx_caps_in *in, struct vmx_caps *out);

#endif
