/* vmx_caps.c - see vmx_caps.h. */
#include "vmx_caps.h"
#include "vmx_arch.h"

/* A control's allowed-1 setting: bits 63:32 of its capability MSR (SDM A.3). */
static bool allowed1(uint64_t msr, uint32_t bit) { return (msr >> 32) & bit; }

void vmx_caps_decide(const struct vmx_caps_in *in, struct vmx_caps *out)
{
    out->refuse = 0;
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
    if (!(in->ept_vpid_cap & EPT_CAP_INVEPT) || !out->invept_type)
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
