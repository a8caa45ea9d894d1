/* vmx_caps.c - see vmx_caps.h. */
#include "vmx_caps.h"

/* A control's allowed-1 setting: bits 63:32 of its capability MSR (SDM A.3). */
static bool allowed1(uint64_t msr, uint32_t bit) { return (msr >> 32) & bit; }

enum vmx_ctl_msr { CTL_PROC, CTL_PROC2, CTL_EXIT, CTL_ENTRY };

/* Every bit of the VMX_CAPS_*_NEED masks, in words, in the order they are checked. */
static const struct vmx_need {
    enum vmx_ctl_msr msr;
    uint32_t bit;
    const char *missing;
} needs[] = {
    { CTL_PROC,  PROC_USE_IO_BITMAPS,     "the I/O-bitmap control is missing" },
    { CTL_PROC,  PROC_USE_MSR_BITMAPS,    "the MSR-bitmap control is missing" },
    { CTL_PROC,  PROC_SECONDARY_CONTROLS, "the secondary processor-based controls are missing" },
    { CTL_PROC,  PROC_USE_TSC_OFFSET,     "TSC offsetting is missing (time dilation)" },
    { CTL_PROC2, PROC2_ENABLE_EPT,        "EPT is missing" },
    { CTL_PROC2, PROC2_UNRESTRICTED,      "unrestricted guest is missing (the firmware's real mode, APs' start-up)" },
    { CTL_EXIT,  EXIT_HOST_ADDR64,        "the 64-bit host exit control is missing" },
    { CTL_EXIT,  EXIT_SAVE_DEBUG,         "saving debug controls at VM exit is missing" },
    { CTL_EXIT,  EXIT_SAVE_PAT,           "saving IA32_PAT at VM exit is missing" },
    { CTL_EXIT,  EXIT_LOAD_PAT,           "loading IA32_PAT at VM exit is missing" },
    { CTL_EXIT,  EXIT_SAVE_EFER,          "saving IA32_EFER at VM exit is missing" },
    { CTL_EXIT,  EXIT_LOAD_EFER,          "loading IA32_EFER at VM exit is missing" },
    { CTL_ENTRY, ENTRY_LOAD_DEBUG,        "loading debug controls at VM entry is missing" },
    { CTL_ENTRY, ENTRY_LOAD_PAT,          "loading IA32_PAT at VM entry is missing" },
    { CTL_ENTRY, ENTRY_LOAD_EFER,         "loading IA32_EFER at VM entry is missing" },
};

static const char *missing_control(const struct vmx_caps_in *in)
{
    const uint64_t msr[] = { [CTL_PROC] = in->procbased, [CTL_PROC2] = in->procbased2,
                             [CTL_EXIT] = in->exit, [CTL_ENTRY] = in->entry };
    for (const struct vmx_need *n = needs; n < needs + sizeof needs / sizeof needs[0]; n++)
        if (!allowed1(msr[n->msr], n->bit))
            return n->missing;
    return 0;
}

void vmx_caps_decide(const struct vmx_caps_in *in, struct vmx_caps *out)
{
    out->refuse = missing_control(in);
    out->exec_only = in->ept_vpid_cap & EPT_CAP_EXEC_ONLY;
    out->preempt_shift = VMX_MISC_PREEMPT_SHIFT(in->misc);
    out->invept_type = in->ept_vpid_cap & EPT_CAP_INVEPT_SINGLE ? 1 :
                       in->ept_vpid_cap & EPT_CAP_INVEPT_ALL ? 2 : 0;
    out->invvpid_type = in->ept_vpid_cap & EPT_CAP_INVVPID_SINGLE ? 1 :
                        in->ept_vpid_cap & EPT_CAP_INVVPID_ALL ? 2 : 0;
    out->vpid = allowed1(in->procbased, PROC_SECONDARY_CONTROLS) &&
                allowed1(in->procbased2, PROC2_ENABLE_VPID) &&
                (in->ept_vpid_cap & EPT_CAP_INVVPID) && out->invvpid_type;
    if (!out->vpid)
        out->invvpid_type = 0;
    out->virtual_nmis = allowed1(in->pinbased, PIN_NMI_EXITING) && allowed1(in->pinbased, PIN_VIRTUAL_NMIS) &&
                        allowed1(in->procbased, PROC_NMI_WINDOW_EXITING);
    out->lbr_ctl = allowed1(in->exit, EXIT_CLEAR_LBR_CTL) && allowed1(in->entry, ENTRY_LOAD_LBR_CTL);
    if (out->refuse)
        return;
    if (!(in->ept_vpid_cap & EPT_CAP_WALK4))
        out->refuse = "EPT has no 4-level page walk";
    else if (!(in->ept_vpid_cap & EPT_CAP_WB))
        out->refuse = "EPT paging structures cannot be write-back";
    else if (!(in->ept_vpid_cap & EPT_CAP_INVEPT) || !out->invept_type)
        out->refuse = "INVEPT of a single context or of all contexts is missing";
    else if (!(in->misc & VMX_MISC_ACT_HLT))
        out->refuse = "the HLT activity state is missing (a traced CPU's HLT)";
    else if (!(in->misc & VMX_MISC_ACT_WAIT_SIPI))
        out->refuse = "the wait-for-SIPI activity state is missing (APs started by Linux)";
    else if (!allowed1(in->pinbased, PIN_PREEMPTION_TIMER))
        out->refuse = "the VMX-preemption timer is missing (the NIC's and the sampling probes' poll)";
    else if (!allowed1(in->procbased, PROC_MTF))
        out->refuse = "the monitor trap flag is missing (single-step tracing, probe step-overs)";
}
