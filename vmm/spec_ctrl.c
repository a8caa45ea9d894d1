/* spec_ctrl.c - spec_ctrl.h's decision: pure, from the capability bits alone. */
#include "spec_ctrl.h"
#include "x86_arch.h"

void spec_ctrl_decide(const struct spec_caps *c, struct spec_plan *p)
{
    *p = (struct spec_plan){ .rsb = SPEC_RSB_NONE };
    uint32_t edx = c->cpuid7_edx;
    /* IA32_ARCH_CAPABILITIES exists only where CPUID says so (SDM Vol. 4 table 2-2): otherwise
     * every "not affected" bit reads as clear, i.e. affected. */
    uint64_t ac = (edx & CPUID_7_EDX_ARCH_CAPS) ? c->arch_caps : 0;
    bool spec_if = edx & (CPUID_7_EDX_IBRS_IBPB | CPUID_7_EDX_STIBP | CPUID_7_EDX_ARCH_CAPS | CPUID_7_EDX_SSBD);
    bool ibrs = edx & CPUID_7_EDX_IBRS_IBPB, eibrs = ibrs && (ac & ARCH_CAP_IBRS_ALL);
    bool md_clear = edx & CPUID_7_EDX_MD_CLEAR, l1d_cmd = edx & CPUID_7_EDX_L1D_FLUSH;

    p->spectre_v2_unmitigated = !ibrs;
    if (!spec_if)
        return;      /* no speculation-control interface at all: nothing is touched (contract) */

    /* Branch target injection ("Speculative Execution Side Channel Mitigations"): IBRS set in
     * VMX root keeps predictions the guest trained from steering the hypervisor's indirect
     * branches. The guest may write IA32_SPEC_CTRL directly (it is passed through), so its value
     * is switched at every exit and entry; legacy IBRS acts only when written, enhanced IBRS
     * (IBRS_ALL) once set, so it is written only when the guest's value differs. */
    if (ibrs) {
        p->switch_spec_ctrl = true;
        p->host_spec_ctrl = SPEC_CTRL_IBRS;
        p->spec_ctrl_write_always = !eibrs;
    }
    /* The RSB after a VM exit holds the guest's entries, which IBRS does not cover: overwrite all
     * of them ("Retpoline: A Branch Target Injection Mitigation"); with enhanced IBRS only the
     * post-barrier prediction of the first RET remains ("Post-barrier Return Stack Buffer
     * Predictions"), closed by one CALL and LFENCE, and nothing where PBRSB_NO. */
    p->rsb = !eibrs ? SPEC_RSB_FULL : (ac & ARCH_CAP_PBRSB_NO) ? SPEC_RSB_NONE : SPEC_RSB_LITE;

    /* L1 terminal fault ("Deep Dive: Intel Analysis of L1 Terminal Fault"): a guest can read
     * what the hypervisor left in L1D through a not-present guest PTE; flush L1D before every
     * entry unless the part is not affected (RDCL_NO) or does it itself (SKIP_L1DFL_VMENTRY,
     * set by a VMM nested under another that flushes). */
    bool l1tf = !(ac & ARCH_CAP_RDCL_NO) && !(ac & ARCH_CAP_SKIP_L1DFL_VMENTRY);
    p->l1d_flush = l1tf && l1d_cmd;
    p->l1tf_unmitigated = l1tf && !l1d_cmd;

    /* Buffers VERW clears before entry:
     *  - MDS (not MDS_NO) and TAA (RTM present, not TAA_NO): the store, fill and load buffers,
     *    where MD_CLEAR says VERW overwrites them ("Deep Dive: ... Microarchitectural Data
     *    Sampling", "Intel TSX Asynchronous Abort");
     *  - MMIO stale data (not all of SBDR_SSDP_NO, FBSDP_NO, PSDP_NO) on a part not affected by
     *    MDS: the fill buffers, only where FB_CLEAR says VERW clears them ("Processor MMIO Stale
     *    Data Vulnerabilities"; on MDS-affected parts MD_CLEAR's VERW already clears them). The
     *    guest drives every device, so this applies;
     *  - RFDS: where RFDS_CLEAR says VERW clears the register file ("Register File Data
     *    Sampling"; the parts that lack RFDS_CLEAR and RFDS_NO are not told apart here).
     * With MD_CLEAR, the L1D flush command overwrites the same buffers (the MDS deep dive), so
     * a CPU that flushes L1D needs no VERW besides. */
    bool mds = !(ac & ARCH_CAP_MDS_NO);
    bool taa = (c->cpuid7_ebx & CPUID_7_EBX_RTM) && !(ac & ARCH_CAP_TAA_NO);
    bool mmio = !mds && (ac & (ARCH_CAP_SBDR_SSDP_NO | ARCH_CAP_FBSDP_NO | ARCH_CAP_PSDP_NO)) !=
                        (ARCH_CAP_SBDR_SSDP_NO | ARCH_CAP_FBSDP_NO | ARCH_CAP_PSDP_NO);
    bool rfds = (ac & ARCH_CAP_RFDS_CLEAR) && !(ac & ARCH_CAP_RFDS_NO);
    bool need_md = mds || taa, need_fb = mmio, fb_clear = ac & ARCH_CAP_FB_CLEAR;
    bool verw = (need_md && md_clear) || (need_fb && fb_clear) || rfds;
    p->mds_unmitigated = (need_md && !md_clear) || (need_fb && !fb_clear);
    p->verw = verw && !(p->l1d_flush && md_clear);

    /* The PMU is the guest's (its MSRs are passed through), and with OS=1 its counters would
     * count the hypervisor's instructions: a precise signal of what the hypervisor does.
     * IA32_PERF_GLOBAL_CTRL exists from architectural performance monitoring version 2 (SDM
     * Vol. 3B 21.2.2); the VM-exit control loads the host's value (0: nothing counts in VMX root,
     * SDM Vol. 3C 28.5.1 "Loading Host Control Registers, Debug Registers, MSRs"). Only on
     * a CPU with the speculation interface (the contract: Bochs claims a PMU it does not
     * implement, and runs as before). */
    p->pmu_switch = c->exit_load_perf_global && c->pmu_version >= 2;
    p->per_exit = spec_ctrl_per_exit(p);
}

bool spec_ctrl_per_exit(const struct spec_plan *p)
{
    return p->switch_spec_ctrl || p->rsb != SPEC_RSB_NONE || p->l1d_flush || p->verw;
}
