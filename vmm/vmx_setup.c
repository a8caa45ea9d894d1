/* vmx_setup.c - VMXON, VMCS set-up and VMLAUNCH (Intel SDM ch. 24-27). */
#include "vmx_setup.h"
#include "host_cr4.h"
#include "vmx_caps.h"
#include "hv_core.h"
#include "cpu.h"
#include "spec_ctrl.h"

extern void vmx_exit_stub(void);
extern int vmx_launch(void);
extern const uint64_t host_exc_table[33];

#define IDT_ENTRIES 256
#define IDT_GATE_INTR64 0x8e00u     /* present, DPL0, 64-bit interrupt gate (SDM 6.14.1) */

struct __attribute__((packed)) idt_gate {
    uint16_t off0, sel, flags, off1;
    uint32_t off2, reserved;
};
static struct idt_gate host_idt[IDT_ENTRIES] __attribute__((aligned(16)));

/* Desired control value adjusted to what the CPU allows (SDM A.3-A.5): bits set in the low
 * half of the capability MSR must be 1, bits clear in the high half must be 0. What is
 * wanted and not allowed was refused before (vmx_caps_decide). */
static uint32_t adjust_ctls(uint32_t want, uint64_t cap)
{
    return (want | (uint32_t)cap) & (uint32_t)(cap >> 32);
}

static void build_host_idt(void)
{
    for (int i = 0; i < IDT_ENTRIES; i++) {
        uint64_t h = host_exc_table[i < 32 ? i : 32];
        host_idt[i] = (struct idt_gate){ (uint16_t)h, HOST_SEL_CODE, IDT_GATE_INTR64,
                                         (uint16_t)(h >> 16), (uint32_t)(h >> 32), 0 };
    }
}

/* Speculation and PMU isolation (spec_ctrl.h): read what the CPU enumerates, decide, and say
 * what was decided and what stays open. IA32_ARCH_CAPABILITIES is read only where CPUID.7:EDX
 * bit 29 says it exists. */
static void spec_ctrl_setup(uint32_t exit_cap_msr)
{
    uint32_t r[4];
    struct spec_caps c = {0};
    cpu_cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    if (max_leaf >= 7) {
        cpu_cpuid(7, 0, r);
        c.cpuid7_ebx = r[1];
        c.cpuid7_edx = r[3];
    }
    if (c.cpuid7_edx & CPUID_7_EDX_ARCH_CAPS)
        c.arch_caps = hv_rdmsr(MSR_IA32_ARCH_CAPABILITIES);
    if (max_leaf >= 0xa) {
        cpu_cpuid(0xa, 0, r);
        c.pmu_version = CPUID_A_EAX_PMU_VERSION(r[0]);
    }
    c.exit_load_perf_global = (hv_rdmsr(exit_cap_msr) >> 32) & EXIT_LOAD_PERF_GLOBAL;
    spec_ctrl_decide(&c, &hv.spec);
    hv.spec_per_exit = spec_ctrl_per_exit(&hv.spec);
    if (hv.spec.pmu_switch)
        hv.exit_ctls |= EXIT_LOAD_PERF_GLOBAL;
    const struct spec_plan *p = &hv.spec;
    hv_log("hvtrace: speculation: cpuid7 edx %x arch_caps %lx: spec_ctrl %s (root %lx), rsb %s, "
           "%s before entry, PMU %s\n", c.cpuid7_edx, c.arch_caps,
           p->switch_spec_ctrl ? "switched" : "untouched", p->host_spec_ctrl,
           p->rsb == SPEC_RSB_FULL ? "filled" : p->rsb == SPEC_RSB_LITE ? "guarded" : "as is",
           p->l1d_flush ? "L1D flush" : p->verw ? "VERW" : "nothing",
           p->pmu_switch ? "switched at exit/entry" : "shared with the guest");
    if (p->spectre_v2_unmitigated || p->l1tf_unmitigated || p->mds_unmitigated)
        hv_log("hvtrace: speculation: NOT mitigated on this CPU:%s%s%s\n",
               p->spectre_v2_unmitigated ? " branch target injection (no IBRS)" : "",
               p->l1tf_unmitigated ? " L1TF (no IA32_FLUSH_CMD)" : "",
               p->mds_unmitigated ? " buffer sampling (no MD_CLEAR/FB_CLEAR)" : "");
}

int vmx_check_caps(void)
{
    uint32_t r[4];
    cpu_cpuid(1, 0, r);
    if (!(r[2] & CPUID_1_ECX_VMX)) {
        hv_log("hvtrace: CPUID.1:ECX.VMX=0\n");
        return -1;
    }
    hv.has_xsave = r[2] & CPUID_1_ECX_XSAVE;
    cpu_cpuid(0x80000008, 0, r);
    hv.phys_bits = r[0] & 0xff;
    uint64_t basic = hv_rdmsr(MSR_IA32_VMX_BASIC);
    bool true_ctls = basic & VMX_BASIC_TRUE_CTLS;
    /* What the hypervisor needs and refuses without, and what it does without (vmx_caps.h):
     * the same decision as `hvt check-host` on Linux. */
    struct vmx_caps_in ci = {
        .pinbased = hv_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_PINBASED : MSR_IA32_VMX_PINBASED_CTLS),
        .procbased = hv_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_PROCBASED : MSR_IA32_VMX_PROCBASED_CTLS),
        .exit = hv_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_EXIT : MSR_IA32_VMX_EXIT_CTLS),
        .entry = hv_rdmsr(true_ctls ? MSR_IA32_VMX_TRUE_ENTRY : MSR_IA32_VMX_ENTRY_CTLS),
        .misc = hv_rdmsr(MSR_IA32_VMX_MISC) };
    if (vmx_caps_has_procbased2(ci.procbased))
        ci.procbased2 = hv_rdmsr(MSR_IA32_VMX_PROCBASED_CTLS2);
    if (vmx_caps_has_ept_vpid_cap(ci.procbased2))
        ci.ept_vpid_cap = hv_rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
    struct vmx_caps caps;
    vmx_caps_decide(&ci, &caps);
    if (caps.refuse) {
        hv_log("hvtrace: cannot start: %s (VMX proc %lx proc2 %lx exit %lx entry %lx misc %lx ept_vpid_cap %lx)\n",
               caps.refuse, ci.procbased, ci.procbased2, ci.exit, ci.entry, ci.misc, ci.ept_vpid_cap);
        return -1;
    }
    hv.pin_ctls = adjust_ctls(0, ci.pinbased);
    hv.proc_ctls = adjust_ctls(VMX_CAPS_PROC_NEED, ci.procbased);
    /* Wanted when available, because without them the guest would get #UD for instructions
     * its CPUID advertises: RDTSCP, INVPCID, XSAVES. */
    uint32_t opt2 = PROC2_ENABLE_RDTSCP | PROC2_ENABLE_INVPCID | PROC2_ENABLE_XSAVES | PROC2_ENABLE_USER_WAIT;
    hv.proc2_ctls = adjust_ctls(VMX_CAPS_PROC2_NEED, ci.procbased2) | (opt2 & (uint32_t)(ci.procbased2 >> 32));
    hv.exit_ctls = adjust_ctls(VMX_CAPS_EXIT_NEED, ci.exit);
    hv.entry_ctls = adjust_ctls(VMX_CAPS_ENTRY_NEED, ci.entry);
    spec_ctrl_setup(true_ctls ? MSR_IA32_VMX_TRUE_EXIT : MSR_IA32_VMX_EXIT_CTLS);
    /* IA32_MISC_ENABLE as the firmware left it: the guest may not set these two later
     * (msr_policy.h); set already, they limit what the hypervisor sees (no NX in its own
     * tables, CPUID cut at leaf 2): said, not refused, since the firmware setup chose them. */
    uint64_t misc = hv_rdmsr(MSR_IA32_MISC_ENABLE);
    if (misc & (MISC_ENABLE_XD_DISABLE | MISC_ENABLE_LIMIT_CPUID))
        hv_log("hvtrace: IA32_MISC_ENABLE %lx:%s%s (set by the firmware)\n", misc,
               misc & MISC_ENABLE_XD_DISABLE ? " XD disabled" : "",
               misc & MISC_ENABLE_LIMIT_CPUID ? " CPUID limited to leaf 2" : "");
    uint64_t ept_cap = ci.ept_vpid_cap;
    hv.ept_cap = ept_cap;
    hv.invept_type = caps.invept_type;
    hv.preempt_shift = caps.preempt_shift;
    /* Architectural LBRs (SDM Vol. 3B 18.1.2 "Architectural Last Branch Records"): the guest's
     * IA32_LBR_CTL loaded at entry, cleared at exit, so the LBRs never record the hypervisor's
     * branches (its addresses would be the guest's to read in the LBR stack). */
    hv.lbr_ctl = caps.lbr_ctl;
    /* NMIs (SDM Vol. 3C 26.2 "Other Causes of VM Exits", 25.6.1 "Pin-Based VM-Execution
     * Controls", 27.6.1.2 "... Virtual-NMI Blocking"): every NMI exits; the hypervisor gives it
     * to the guest at an entry where nothing blocks it, waiting for an NMI window (26.2) where
     * something does, so a traced CPU sees every NMI the way it sees an interrupt, and a CPU
     * parked in HLT by a policy learns that it woke. Without these controls NMIs go to the
     * guest directly (NMI exiting off). */
    hv.virtual_nmis = caps.virtual_nmis;
    if (caps.virtual_nmis)
        hv.pin_ctls |= PIN_NMI_EXITING | PIN_VIRTUAL_NMIS;
    if (caps.lbr_ctl) {
        hv.exit_ctls |= EXIT_CLEAR_LBR_CTL;
        hv.entry_ctls |= ENTRY_LOAD_LBR_CTL;
    }
    /* VPIDs (SDM 29.1 "Virtual Processor Identifiers (VPIDs)"): without them every VM entry and
     * exit invalidates the guest's linear and combined mappings (29.4.3.1 "Operations that
     * Invalidate Cached Mappings"), two full TLB flushes per single-stepped instruction. */
    hv.invvpid_type = caps.vpid ? caps.invvpid_type : 0;
    if (caps.vpid)
        hv.proc2_ctls |= PROC2_ENABLE_VPID;
    else
        hv_log("hvtrace: no VPIDs (or no INVVPID): the guest's TLB is flushed at every exit\n");
    if (caps.invept_type != INVEPT_SINGLE_CONTEXT)
        hv_log("hvtrace: INVEPT of one context missing: every EPT flush is of all contexts\n");
    if (!caps.exec_only)
        hv_log("hvtrace: EPT has no execute-only entries: invisible probes are unavailable\n");
    hv.cr0_fixed0 = hv_rdmsr(MSR_IA32_VMX_CR0_FIXED0);
    hv.cr0_fixed1 = hv_rdmsr(MSR_IA32_VMX_CR0_FIXED1);
    hv.cr4_fixed0 = hv_rdmsr(MSR_IA32_VMX_CR4_FIXED0);
    hv.cr4_fixed1 = hv_rdmsr(MSR_IA32_VMX_CR4_FIXED1);
    build_host_idt();
    hv_log("hvtrace: VMX basic %lx pin %x proc %x proc2 %x exit %x entry %x ept_cap %lx\n",
           basic, hv.pin_ctls, hv.proc_ctls, hv.proc2_ctls, hv.exit_ctls, hv.entry_ctls, ept_cap);
    return 0;
}

int vmx_alloc_cpu(struct vcpu *v, unsigned index, uint32_t apic_id)
{
    v->self = v;
    v->index = index;
    v->apic_id = apic_id;
    v->dilate_fixed = VCPU_DILATE_FIXED;
    v->exit_untimed = VCPU_EXIT_UNTIMED;
    v->vmxon_region = hv_alloc_pages(1);
    v->vmcs = hv_alloc_pages(1);
    v->stack = hv_alloc_pages(VCPU_STACK_PAGES);
    if (!v->vmxon_region || !v->vmcs || !v->stack)
        return -1;
    if (hv.spec.pmu_switch && !(v->pmu_msr = hv_alloc_pages(1)))
        return -1;
    v->vmxon_phys = hv_virt_to_phys(v->vmxon_region);
    v->vmcs_phys = hv_virt_to_phys(v->vmcs);
    /* Host stack: the vcpu pointer sits at host RSP, which stays 16-byte aligned. */
    uint64_t top = (uint64_t)v->stack + VCPU_STACK_PAGES * X86_PAGE_SIZE;
    v->host_rsp = top - 16;
    *(struct vcpu **)v->host_rsp = v;
    /* Host GDT (SDM 3.4.5 "Segment Descriptors", 8.2.3 "TSS Descriptor in 64-bit mode"): flat 64-bit code, data, and a 64-bit TSS. */
    v->gdt[0] = 0;
    v->gdt[1] = 0x00209a0000000000ull;          /* code: P, DPL0, exec/read, L=1 */
    v->gdt[2] = 0x0000920000000000ull;          /* data: P, DPL0, read/write */
    uint64_t tss = (uint64_t)&v->tss, lim = sizeof v->tss - 1;
    v->gdt[3] = (lim & 0xffff) | ((tss & 0xffffff) << 16) | (0x89ull << 40) |
                (((tss >> 24) & 0xff) << 56);   /* P, 64-bit TSS (available) */
    v->gdt[4] = tss >> 32;
    v->tss.iomap_base = sizeof v->tss;
    return 0;
}

/* --- guest state capture (SDM 25.4, checks in 27.3.1) --- */

static uint32_t seg_ar(const struct cpu_dtr *gdt, uint16_t sel)
{
    if ((sel & ~3u) == 0)
        return VMX_AR_UNUSABLE;
    uint64_t d = *(uint64_t *)(gdt->base + (sel & ~7u));
    /* access byte (descriptor bits 47:40) and flags (55:52) -> AR bits 7:0 and 15:12 */
    return (uint32_t)((d >> 40) & 0xf0ff);
}

static uint64_t seg_base(const struct cpu_dtr *gdt, uint16_t sel)
{
    if ((sel & ~3u) == 0)
        return 0;
    uint64_t d = *(uint64_t *)(gdt->base + (sel & ~7u));
    uint64_t base = ((d >> 16) & 0xffffff) | (((d >> 56) & 0xff) << 24);
    if (!(d & (1ull << 44)))                   /* system descriptor: 16 bytes, upper base */
        base |= (*(uint64_t *)(gdt->base + (sel & ~7u) + 8) & 0xffffffff) << 32;
    return base;
}

static uint32_t seg_limit(uint16_t sel)
{
    if ((sel & ~3u) == 0)
        return 0;
    uint32_t lim;
    __asm__ volatile("lsl %1, %0" : "=r"(lim) : "r"((uint32_t)sel));
    return lim;
}

static void write_seg(enum vmx_seg s, uint16_t sel, const struct cpu_dtr *gdt)
{
    vmx_write(VMCS_GUEST_ES_SEL + 2 * s, sel);
    vmx_write(VMCS_GUEST_ES_LIMIT + 2 * s, seg_limit(sel));
    vmx_write(VMCS_GUEST_ES_AR + 2 * s, seg_ar(gdt, sel));
    vmx_write(VMCS_GUEST_ES_BASE + 2 * s, seg_base(gdt, sel));
}

static void write_guest_state(const struct hvt_cpu_launch *l)
{
    struct cpu_dtr gdt, idt;
    cpu_sgdt(&gdt);
    cpu_sidt(&idt);
    write_seg(VMX_SEG_ES, cpu_read_es(), &gdt);
    write_seg(VMX_SEG_CS, cpu_read_cs(), &gdt);
    write_seg(VMX_SEG_SS, cpu_read_ss(), &gdt);
    write_seg(VMX_SEG_DS, cpu_read_ds(), &gdt);
    write_seg(VMX_SEG_FS, cpu_read_fs(), &gdt);
    write_seg(VMX_SEG_GS, cpu_read_gs(), &gdt);
    write_seg(VMX_SEG_LDTR, cpu_read_ldtr(), &gdt);
    uint16_t tr = cpu_read_tr();
    if ((tr & ~3u) == 0) {
        /* UEFI firmware runs without a task register; VM entry needs a usable busy 64-bit
         * TSS in TR (SDM 27.3.1.2). The firmware never switches stacks through a TSS, so a
         * zero-based one is never used; Linux loads its own with LTR. */
        vmx_write(VMCS_GUEST_TR_SEL, 0);
        vmx_write(VMCS_GUEST_TR_BASE, 0);
        vmx_write(VMCS_GUEST_TR_LIMIT, 0x67);
        vmx_write(VMCS_GUEST_TR_AR, 0x8b);      /* present, busy 64-bit TSS */
    } else {
        write_seg(VMX_SEG_TR, tr, &gdt);
    }
    vmx_write(VMCS_GUEST_FS_BASE, hv_rdmsr(MSR_IA32_FS_BASE));
    vmx_write(VMCS_GUEST_GS_BASE, hv_rdmsr(MSR_IA32_GS_BASE));
    vmx_write(VMCS_GUEST_GDTR_BASE, gdt.base);
    vmx_write(VMCS_GUEST_GDTR_LIMIT, gdt.limit);
    vmx_write(VMCS_GUEST_IDTR_BASE, idt.base);
    vmx_write(VMCS_GUEST_IDTR_LIMIT, idt.limit);

    uint64_t cr0 = cpu_read_cr0(), cr4 = cpu_read_cr4();
    vmx_write(VMCS_GUEST_CR0, cr0);
    vmx_write(VMCS_GUEST_CR3, l->guest_cr3);
    vmx_write(VMCS_GUEST_CR4, cr4);
    /* The guest must not see VMXE (we set it) nor be able to clear the bits VMX fixes
     * (SDM 24.8, A.7-A.8): those bits are owned by the hypervisor and read from shadows.
     * With unrestricted guest, PE and PG are the guest's (SDM 25.6.6). */
    uint64_t cr0_mask = (hv.cr0_fixed0 | ~hv.cr0_fixed1) & ~(CR0_PE | CR0_PG);
    uint64_t cr4_mask = hv.cr4_fixed0 | ~hv.cr4_fixed1;
    vmx_write(VMCS_CR0_MASK, cr0_mask);
    vmx_write(VMCS_CR0_READ_SHADOW, cr0);
    vmx_write(VMCS_CR4_MASK, cr4_mask);
    vmx_write(VMCS_CR4_READ_SHADOW, cr4 & ~CR4_VMXE);
    vmx_write(VMCS_GUEST_DR7, cpu_read_dr7());
    vmx_write(VMCS_GUEST_RSP, l->guest_rsp);
    vmx_write(VMCS_GUEST_RIP, l->guest_rip);
    vmx_write(VMCS_GUEST_RFLAGS, l->guest_rflags);
    vmx_write(VMCS_GUEST_SYSENTER_CS, hv_rdmsr(MSR_IA32_SYSENTER_CS));
    vmx_write(VMCS_GUEST_SYSENTER_ESP, hv_rdmsr(MSR_IA32_SYSENTER_ESP));
    vmx_write(VMCS_GUEST_SYSENTER_EIP, hv_rdmsr(MSR_IA32_SYSENTER_EIP));
    vmx_write(VMCS_GUEST_DEBUGCTL, hv_rdmsr(MSR_IA32_DEBUGCTL));
    vmx_write(VMCS_GUEST_PAT, hv_rdmsr(MSR_IA32_PAT));
    vmx_write(VMCS_GUEST_EFER, hv_rdmsr(MSR_IA32_EFER));
    if (hv.lbr_ctl)
        vmx_write(VMCS_GUEST_LBR_CTL, hv_rdmsr(MSR_IA32_LBR_CTL));
    vmx_write(VMCS_LINK_POINTER, ~0ull);        /* no shadow VMCS (SDM 27.3.1.5) */
    vmx_write(VMCS_GUEST_INTERRUPTIBILITY, 0);
    vmx_write(VMCS_GUEST_ACTIVITY_STATE, VMX_ACTIVITY_ACTIVE);
    vmx_write(VMCS_GUEST_PENDING_DBG, 0);
}

static void write_host_state(struct vcpu *v, uint64_t host_cr4)
{
    vmx_write(VMCS_HOST_CS_SEL, HOST_SEL_CODE);
    vmx_write(VMCS_HOST_SS_SEL, HOST_SEL_DATA);
    vmx_write(VMCS_HOST_DS_SEL, HOST_SEL_DATA);
    vmx_write(VMCS_HOST_ES_SEL, HOST_SEL_DATA);
    vmx_write(VMCS_HOST_FS_SEL, 0);
    vmx_write(VMCS_HOST_GS_SEL, 0);
    vmx_write(VMCS_HOST_TR_SEL, HOST_SEL_TSS);
    vmx_write(VMCS_HOST_FS_BASE, 0);
    vmx_write(VMCS_HOST_GS_BASE, (uint64_t)v);  /* %gs:0 = struct vcpu (vcpu_current) */
    vmx_write(VMCS_HOST_TR_BASE, (uint64_t)&v->tss);
    vmx_write(VMCS_HOST_GDTR_BASE, (uint64_t)v->gdt);
    vmx_write(VMCS_HOST_IDTR_BASE, (uint64_t)host_idt);
    vmx_write(VMCS_HOST_CR0, cpu_read_cr0());
    vmx_write(VMCS_HOST_CR3, hv.bi->host_cr3);
    vmx_write(VMCS_HOST_CR4, host_cr4);
    vmx_write(VMCS_HOST_RSP, v->host_rsp);
    vmx_write(VMCS_HOST_RIP, (uint64_t)vmx_exit_stub);
    vmx_write(VMCS_HOST_SYSENTER_CS, 0);
    vmx_write(VMCS_HOST_SYSENTER_ESP, 0);
    vmx_write(VMCS_HOST_SYSENTER_EIP, 0);
    /* Host PAT: the architectural power-up value (WB, WT, UC-, UC repeated), so our direct
     * map's PCD/PWT bits mean what hv_api.h says. */
    vmx_write(VMCS_HOST_PAT, 0x0007040600070406ull);
    vmx_write(VMCS_HOST_EFER, hv_rdmsr(MSR_IA32_EFER));
}

static void write_controls(const struct vcpu *v)
{
    vmx_write(VMCS_PIN_CONTROLS, hv.pin_ctls);
    vmx_write(VMCS_PROC_CONTROLS, hv.proc_ctls);
    vmx_write(VMCS_PROC_CONTROLS2, hv.proc2_ctls);
    vmx_write(VMCS_EXIT_CONTROLS, hv.exit_ctls);
    uint32_t entry = hv.entry_ctls;
    if (hv_rdmsr(MSR_IA32_EFER) & EFER_LMA)
        entry |= ENTRY_IA32E_GUEST;
    vmx_write(VMCS_ENTRY_CONTROLS, entry);
    vmx_write(VMCS_EXCEPTION_BITMAP, hv.exception_bitmap);
    vmx_write(VMCS_PF_ERROR_MASK, 0);
    vmx_write(VMCS_PF_ERROR_MATCH, 0);
    vmx_write(VMCS_CR3_TARGET_COUNT, 0);
    vmx_write(VMCS_EXIT_MSR_STORE_COUNT, 0);
    vmx_write(VMCS_EXIT_MSR_LOAD_COUNT, 0);
    vmx_write(VMCS_ENTRY_MSR_LOAD_COUNT, 0);
    if (hv.spec.pmu_switch) {
        /* The guest's IA32_PERF_GLOBAL_CTRL is stored by every exit before the host's (0) is
         * loaded (SDM Vol. 3C 28.4 "Saving MSRs" precedes 28.5 "Loading Host State"), and loaded
         * back from the same entry by every entry (27.4 "Loading MSRs"): the guest keeps its
         * counters, the hypervisor's instructions are never counted. */
        v->pmu_msr->index = MSR_IA32_PERF_GLOBAL_CTRL;
        v->pmu_msr->reserved = 0;
        v->pmu_msr->data = hv_rdmsr(MSR_IA32_PERF_GLOBAL_CTRL);
        vmx_write(VMCS_EXIT_MSR_STORE_ADDR, hv_virt_to_phys(v->pmu_msr));
        vmx_write(VMCS_EXIT_MSR_STORE_COUNT, 1);
        vmx_write(VMCS_ENTRY_MSR_LOAD_ADDR, hv_virt_to_phys(v->pmu_msr));
        vmx_write(VMCS_ENTRY_MSR_LOAD_COUNT, 1);
        vmx_write(VMCS_HOST_PERF_GLOBAL_CTRL, 0);
    }
    vmx_write(VMCS_ENTRY_INTR_INFO, 0);
    vmx_write(VMCS_IO_BITMAP_A, hv_virt_to_phys(hv.io_bitmap_a));
    vmx_write(VMCS_IO_BITMAP_B, hv_virt_to_phys(hv.io_bitmap_b));
    vmx_write(VMCS_MSR_BITMAP, hv_virt_to_phys(hv.msr_bitmap));
    vmx_write(VMCS_EPT_POINTER, v->eptp);
    vmx_write(VMCS_TSC_OFFSET, 0);
    if (hv.proc2_ctls & PROC2_ENABLE_VPID)
        vmx_write(VMCS_VPID, VMX_GUEST_VPID);   /* nonzero: SDM 27.2.1.1 */
    /* With XSAVES/XRSTORS enabled the XSS-exiting bitmap decides which of their IA32_XSS
     * components exit (SDM 25.6.20 "XSS-Exiting Bitmap"); it must not be left to whatever the
     * VMCS region held: none exit, as the guest owns its XSAVE state. */
    if (hv.proc2_ctls & PROC2_ENABLE_XSAVES)
        vmx_write(VMCS_XSS_EXIT_BITMAP, 0);
}

void vmx_flush_guest_tlb(void)
{
    if (hv.invvpid_type)
        vmx_invvpid(hv.invvpid_type, VMX_GUEST_VPID);
}

int vmx_start_cpu(struct vcpu *v, struct hvt_cpu_launch *launch)
{
    uint64_t fc = hv_rdmsr(MSR_IA32_FEATURE_CONTROL);
    if (!(fc & FEATURE_CONTROL_LOCK) || !(fc & FEATURE_CONTROL_VMX_OUTSIDE_SMX)) {
        hv_log("hvtrace: cpu %u: IA32_FEATURE_CONTROL %lx does not allow VMXON\n", v->index, fc);
        return -1;
    }
    /* Capture what the guest will resume with before we change anything (SDM 25.11.5 "VMXON Region" step 1:
     * CR0/CR4 must satisfy the fixed bits before VMXON). */
    uint64_t old_cr0 = cpu_read_cr0(), old_cr4 = cpu_read_cr4();
    cpu_write_cr0((old_cr0 | hv.cr0_fixed0) & hv.cr0_fixed1);
    cpu_write_cr4(host_cr4_pick(old_cr4, hv.cr4_fixed0, hv.cr4_fixed1, false));
    uint32_t rev = (uint32_t)(hv_rdmsr(MSR_IA32_VMX_BASIC) & VMX_BASIC_REVISION_MASK);
    *(uint32_t *)v->vmxon_region = rev;
    *(uint32_t *)v->vmcs = rev;
    if (!vmx_on(&v->vmxon_phys)) {
        hv_log("hvtrace: cpu %u: VMXON failed\n", v->index);
        goto fail_cr;
    }
    if (!vmx_clear(&v->vmcs_phys) || !vmx_ptrld(&v->vmcs_phys)) {
        hv_log("hvtrace: cpu %u: VMCLEAR/VMPTRLD failed\n", v->index);
        goto fail_off;
    }
    write_controls(v);
    /* Translations a former user of this VPID left in this CPU's TLB (firmware, a previous
     * hypervisor) are not the guest's. */
    vmx_flush_guest_tlb();
    write_guest_state(launch);
    uint64_t host_cr4 = host_cr4_pick(cpu_read_cr4(), hv.cr4_fixed0, hv.cr4_fixed1, hv.has_xsave);
    write_host_state(v, host_cr4);
    /* What the guest starts with is the firmware's IA32_SPEC_CTRL; the first exit switches. */
    if (hv.spec.switch_spec_ctrl)
        v->guest_spec_ctrl = hv_rdmsr(MSR_IA32_SPEC_CTRL);
    /* From here on the host runs on its own GS base: vcpu_current() works. */
    hv_wrmsr(MSR_IA32_GS_BASE, (uint64_t)v);
    launch->result = 0;
    v->launched = true;
    vmx_launch();                               /* returns only on failure */
    v->launched = false;
    launch->result = -(int)vmx_read(VMCS_VM_INSTR_ERROR);
    hv_log("hvtrace: cpu %u: VMLAUNCH failed, VM-instruction error %d\n", v->index, -launch->result);
    hv_wrmsr(MSR_IA32_GS_BASE, vmx_read(VMCS_GUEST_GS_BASE));
fail_off:
    vmx_off();
fail_cr:
    cpu_write_cr4(old_cr4);
    cpu_write_cr0(old_cr0);
    return -1;
}

/* SDM 10.1.1 "Processor State After Reset", table 10-1, as the state after INIT (not power-up): what a CPU waiting for SIPI
 * looks like. The guest then runs in real mode under unrestricted guest (SDM 25.6.2). */
void vmx_guest_reset_to_init(void)
{
    static const uint64_t init_cr0 = 0x60000010ull;   /* CD, NW, ET */
    vmx_write(VMCS_GUEST_CR0, (init_cr0 | hv.cr0_fixed0) & hv.cr0_fixed1 & ~(CR0_PE | CR0_PG) );
    vmx_write(VMCS_CR0_READ_SHADOW, init_cr0);
    vmx_write(VMCS_GUEST_CR3, 0);
    vmx_write(VMCS_GUEST_CR4, hv.cr4_fixed0);
    vmx_write(VMCS_CR4_READ_SHADOW, 0);
    vmx_flush_guest_tlb();                     /* INIT empties the TLBs (SDM 10.1.1) */
    vmx_write(VMCS_GUEST_EFER, 0);
    vmx_write(VMCS_ENTRY_CONTROLS, vmx_read(VMCS_ENTRY_CONTROLS) & ~ENTRY_IA32E_GUEST);
    for (int s = VMX_SEG_ES; s <= VMX_SEG_GS; s++) {
        vmx_write(VMCS_GUEST_ES_SEL + 2 * s, 0);
        vmx_write(VMCS_GUEST_ES_BASE + 2 * s, 0);
        vmx_write(VMCS_GUEST_ES_LIMIT + 2 * s, 0xffff);
        vmx_write(VMCS_GUEST_ES_AR + 2 * s, 0x93);    /* present, read/write, accessed */
    }
    vmx_write(VMCS_GUEST_CS_SEL, 0xf000);
    vmx_write(VMCS_GUEST_CS_BASE, 0xffff0000);
    vmx_write(VMCS_GUEST_CS_AR, 0x9b);                /* present, exec/read, accessed */
    vmx_write(VMCS_GUEST_LDTR_SEL, 0);
    vmx_write(VMCS_GUEST_LDTR_BASE, 0);
    vmx_write(VMCS_GUEST_LDTR_LIMIT, 0xffff);
    vmx_write(VMCS_GUEST_LDTR_AR, 0x82);
    vmx_write(VMCS_GUEST_TR_SEL, 0);
    vmx_write(VMCS_GUEST_TR_BASE, 0);
    vmx_write(VMCS_GUEST_TR_LIMIT, 0xffff);
    vmx_write(VMCS_GUEST_TR_AR, 0x8b);
    vmx_write(VMCS_GUEST_GDTR_BASE, 0);
    vmx_write(VMCS_GUEST_GDTR_LIMIT, 0xffff);
    vmx_write(VMCS_GUEST_IDTR_BASE, 0);
    vmx_write(VMCS_GUEST_IDTR_LIMIT, 0xffff);
    vmx_write(VMCS_GUEST_RIP, 0xfff0);
    vmx_write(VMCS_GUEST_RSP, 0);
    vmx_write(VMCS_GUEST_RFLAGS, RFLAGS_FIXED1);
    vmx_write(VMCS_GUEST_DR7, 0x400);
    vmx_write(VMCS_GUEST_PAT, 0x0007040600070406ull);
    vmx_write(VMCS_GUEST_DEBUGCTL, 0);
    if (hv.lbr_ctl)
        vmx_write(VMCS_GUEST_LBR_CTL, 0);       /* its reset value */
    vmx_write(VMCS_GUEST_SYSENTER_CS, 0);
    vmx_write(VMCS_GUEST_SYSENTER_ESP, 0);
    vmx_write(VMCS_GUEST_SYSENTER_EIP, 0);
    vmx_write(VMCS_GUEST_FS_BASE, 0);
    vmx_write(VMCS_GUEST_GS_BASE, 0);
    vmx_write(VMCS_GUEST_INTERRUPTIBILITY, 0);
    vmx_write(VMCS_GUEST_PENDING_DBG, 0);
    vmx_write(VMCS_ENTRY_INTR_INFO, 0);
    vmx_write(VMCS_GUEST_ACTIVITY_STATE, VMX_ACTIVITY_WAIT_SIPI);
}
