/*
 * test_vmx_caps.c - host unit test of vmx_caps_decide (vmm/vmx_caps.h): a capability set with
 * every feature the hypervisor uses, then each taken away in turn (the refusal names it, or
 * the fallback is taken), and a nested hypervisor's kind of set (no execute-only EPT, no
 * preemption timer), and every required control taken away alone. The sets are built from
 * the SDM's bit definitions (appendix A), not read from machines (hvt check-host's recordings,
 * host-tools/checkhost/tests, run real ones through the same function).
 */
#include <stdio.h>
#include <string.h>
#include "vmx_caps.h"
#include "vmx_arch.h"
#include "check.h"

static const struct vmx_caps_in full = {
    .pinbased = (uint64_t)(PIN_EXTINT_EXITING | PIN_NMI_EXITING | PIN_PREEMPTION_TIMER) << 32 | 0x16,
    .procbased = (uint64_t)(PROC_MTF | VMX_CAPS_PROC_NEED) << 32,
    .procbased2 = (uint64_t)(VMX_CAPS_PROC2_NEED | PROC2_ENABLE_VPID) << 32,
    .exit = (uint64_t)VMX_CAPS_EXIT_NEED << 32 | 0x36dff,
    .entry = (uint64_t)VMX_CAPS_ENTRY_NEED << 32 | 0x11ff,
    .misc = 5 | VMX_MISC_ACT_HLT | VMX_MISC_ACT_WAIT_SIPI,
    .ept_vpid_cap = EPT_CAP_EXEC_ONLY | EPT_CAP_WALK4 | EPT_CAP_WB | EPT_CAP_INVEPT |
                    EPT_CAP_INVEPT_SINGLE | EPT_CAP_INVEPT_ALL | EPT_CAP_INVVPID |
                    EPT_CAP_INVVPID_SINGLE | EPT_CAP_INVVPID_ALL,
};

static const char *refusal(struct vmx_caps_in in)
{
    struct vmx_caps c;
    vmx_caps_decide(&in, &c);
    return c.refuse ? c.refuse : "";
}

int main(void)
{
    struct vmx_caps c;
    vmx_caps_decide(&full, &c);
    CHECK(!c.refuse && c.invept_type == 1 && c.exec_only && c.preempt_shift == 5, "the full set starts");
    CHECK(c.vpid && c.invvpid_type == 1, "the full set: VPIDs, single-context INVVPID");
    struct vmx_caps_in in = full;
    in.ept_vpid_cap &= ~EPT_CAP_INVEPT_SINGLE;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && c.invept_type == 2, "no single-context INVEPT: all-context instead");
    in.ept_vpid_cap &= ~EPT_CAP_INVEPT_ALL;
    CHECK(strstr(refusal(in), "INVEPT"), "neither INVEPT type: %s", refusal(in));
    in = full; in.ept_vpid_cap &= ~EPT_CAP_INVEPT;
    CHECK(strstr(refusal(in), "INVEPT"), "no INVEPT at all: %s", refusal(in));
    in = full; in.misc &= ~VMX_MISC_ACT_HLT;
    CHECK(strstr(refusal(in), "HLT activity"), "no HLT activity state: %s", refusal(in));
    in = full; in.misc &= ~VMX_MISC_ACT_WAIT_SIPI;
    CHECK(strstr(refusal(in), "wait-for-SIPI"), "no wait-for-SIPI: %s", refusal(in));
    in = full; in.pinbased &= ~((uint64_t)PIN_PREEMPTION_TIMER << 32);
    CHECK(strstr(refusal(in), "preemption timer"), "no preemption timer: %s", refusal(in));
    in = full; in.procbased &= ~((uint64_t)PROC_MTF << 32);
    CHECK(strstr(refusal(in), "monitor trap flag"), "no MTF: %s", refusal(in));
    /* An allowed-0 bit (the low half) is not an allowed-1 one. */
    in = full; in.procbased = (uint64_t)VMX_CAPS_PROC_NEED << 32 | PROC_MTF;
    CHECK(strstr(refusal(in), "monitor trap flag"), "MTF only in the allowed-0 half: %s", refusal(in));
    in = full; in.ept_vpid_cap &= ~EPT_CAP_EXEC_ONLY;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && !c.exec_only, "no execute-only EPT: starts, probes unavailable");
    /* VPIDs: used only with an INVVPID type to invalidate them; their absence is no refusal. */
    in = full; in.ept_vpid_cap &= ~EPT_CAP_INVVPID_SINGLE;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && c.vpid && c.invvpid_type == 2, "no single-context INVVPID: all-context");
    in.ept_vpid_cap &= ~EPT_CAP_INVVPID_ALL;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && !c.vpid && !c.invvpid_type, "neither INVVPID type: no VPIDs, starts");
    in = full; in.ept_vpid_cap &= ~EPT_CAP_INVVPID;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && !c.vpid, "no INVVPID: no VPIDs");
    in = full; in.procbased2 &= ~((uint64_t)PROC2_ENABLE_VPID << 32);
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && !c.vpid && !c.invvpid_type, "enable-VPID not allowed: no VPIDs");
    in = full; in.procbased2 = PROC2_ENABLE_VPID;
    vmx_caps_decide(&in, &c);
    CHECK(!c.vpid, "enable-VPID only in the allowed-0 half: no VPIDs");
    /* Each required control alone: refused, and the refusal is the control's own words. */
    const struct { uint64_t *field; uint32_t mask; } need[] = {
        { &in.procbased, VMX_CAPS_PROC_NEED }, { &in.procbased2, VMX_CAPS_PROC2_NEED },
        { &in.exit, VMX_CAPS_EXIT_NEED }, { &in.entry, VMX_CAPS_ENTRY_NEED } };
    int refused = 0, bits = 0;
    const char *last = "";
    for (unsigned i = 0; i < sizeof need / sizeof need[0]; i++)
        for (uint32_t b = 1; b; b <<= 1) {
            if (!(need[i].mask & b))
                continue;
            in = full;
            *need[i].field &= ~((uint64_t)b << 32);
            bits++;
            const char *r = refusal(in);
            refused += *r && strcmp(r, last) && strstr(r, "missing");
            last = r;
        }
    CHECK(bits == 15 && refused == bits, "every required control refused alone, each in its own words (%d of %d)",
          refused, bits);
    in = full; in.procbased2 &= ~((uint64_t)PROC2_ENABLE_EPT << 32);
    CHECK(!strcmp(refusal(in), "EPT is missing"), "no EPT: %s", refusal(in));
    in = full; in.ept_vpid_cap &= ~EPT_CAP_WALK4;
    CHECK(strstr(refusal(in), "4-level"), "no 4-level EPT walk: %s", refusal(in));
    in = full; in.ept_vpid_cap &= ~EPT_CAP_WB;
    CHECK(strstr(refusal(in), "write-back"), "no WB EPT structures: %s", refusal(in));
    /* Which MSRs may be read at all. */
    CHECK(vmx_caps_has_procbased2(full.procbased) && !vmx_caps_has_procbased2(0x0401e172),
          "PROCBASED_CTLS2 exists with the secondary controls' allowed-1 bit only");
    CHECK(vmx_caps_has_ept_vpid_cap(full.procbased2) && !vmx_caps_has_ept_vpid_cap(0),
          "EPT_VPID_CAP exists with EPT or VPID allowed only");
    /* Virtual NMIs: NMI exiting, virtual NMIs and NMI-window exiting, all three allowed-1 */
    CHECK(!c.virtual_nmis, "the full set without virtual NMIs / NMI-window exiting: NMIs go to the guest directly");
    in = full;
    in.pinbased |= (uint64_t)PIN_VIRTUAL_NMIS << 32;
    in.procbased |= (uint64_t)PROC_NMI_WINDOW_EXITING << 32;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && c.virtual_nmis, "all three: NMIs exit and are injected at an NMI window");
    in.procbased &= ~((uint64_t)PROC_NMI_WINDOW_EXITING << 32);
    vmx_caps_decide(&in, &c);
    CHECK(!c.virtual_nmis, "no NMI-window exiting: no virtual NMIs (nothing would say when to inject)");
    in.procbased |= (uint64_t)PROC_NMI_WINDOW_EXITING << 32;
    in.pinbased &= ~((uint64_t)PIN_NMI_EXITING << 32);
    vmx_caps_decide(&in, &c);
    CHECK(!c.virtual_nmis, "no NMI exiting: no virtual NMIs");
    in = full;
    vmx_caps_decide(&in, &c);
    /* IA32_LBR_CTL switched only with both controls (clear at exit, load at entry): the full
     * set has neither (Bochs, pre-Sapphire Rapids parts); either alone is not enough */
    CHECK(!c.lbr_ctl, "no LBR_CTL controls: the guest's writes refused");
    in = full;
    in.exit |= (uint64_t)EXIT_CLEAR_LBR_CTL << 32;
    in.entry |= (uint64_t)ENTRY_LOAD_LBR_CTL << 32;
    vmx_caps_decide(&in, &c);
    CHECK(!c.refuse && c.lbr_ctl, "both LBR_CTL controls: the guest's LBR_CTL switched");
    in.exit &= ~((uint64_t)EXIT_CLEAR_LBR_CTL << 32);
    vmx_caps_decide(&in, &c);
    CHECK(!c.lbr_ctl, "load at entry without clear at exit: not switched (the LBRs would record the hypervisor)");
    in = full;
    in.exit |= (uint64_t)EXIT_CLEAR_LBR_CTL << 32;
    in.entry |= ENTRY_LOAD_LBR_CTL;          /* allowed-0 half only */
    vmx_caps_decide(&in, &c);
    CHECK(!c.lbr_ctl, "load-LBR_CTL only in the allowed-0 half: not switched");
    /* A nested hypervisor's kind of set: no execute-only EPT, no preemption timer. */
    in = full;
    in.ept_vpid_cap &= ~EPT_CAP_EXEC_ONLY;
    in.pinbased &= ~((uint64_t)PIN_PREEMPTION_TIMER << 32);
    CHECK(strstr(refusal(in), "preemption timer"), "nested set: %s", refusal(in));
    return check_summary("test_vmx_caps");
}
