/* vmx_exit.c - VM-exit handlers (Intel SDM ch. 26 "VMX Non-Root Operation", ch. 28 "VM
 * Exits"), dispatched through one table indexed by the basic exit reason. */
#include "vmx_exit.h"
#include "vmx_setup.h"
#include "exit_reg.h"
#include "hv_ept_int.h"
#include "hv_core.h"
#include "cpu.h"
#include "hvt_hypercall.h"
#include "msr_policy.h"
#include "nmi_decide.h"
#include "mc_decide.h"
#include "pm1_sleep.h"
#include "io_watch.h"
#include "xcr0.h"

/* vmx_stub.asm: MSR accesses that fail softly (see host_exception). */
extern char msr_read_insn[], msr_read_fault[], msr_write_insn[], msr_write_fault[];
int msr_safe_read(uint32_t msr, uint64_t *val);
int msr_safe_write(uint32_t msr, uint64_t val);


static const char *const exit_names[EXIT_REASON_COUNT] = {
    [EXIT_EXCEPTION_NMI] = "exception/NMI", [EXIT_EXTERNAL_INTR] = "external-interrupt",
    [EXIT_TRIPLE_FAULT] = "triple-fault", [EXIT_INIT] = "INIT", [EXIT_SIPI] = "SIPI",
    [EXIT_TASK_SWITCH] = "task-switch", [EXIT_CPUID] = "CPUID", [EXIT_GETSEC] = "GETSEC",
    [EXIT_HLT] = "HLT", [EXIT_INVD] = "INVD", [EXIT_VMCALL] = "VMCALL",
    [EXIT_VMCLEAR] = "VMCLEAR", [EXIT_VMLAUNCH] = "VMLAUNCH", [EXIT_VMPTRLD] = "VMPTRLD",
    [EXIT_VMPTRST] = "VMPTRST", [EXIT_VMREAD] = "VMREAD", [EXIT_VMRESUME] = "VMRESUME",
    [EXIT_VMWRITE] = "VMWRITE", [EXIT_VMXOFF] = "VMXOFF", [EXIT_VMXON] = "VMXON",
    [EXIT_CR_ACCESS] = "CR-access", [EXIT_DR_ACCESS] = "DR-access", [EXIT_IO] = "I/O",
    [EXIT_RDMSR] = "RDMSR", [EXIT_WRMSR] = "WRMSR", [EXIT_ENTRY_FAIL_GUEST] = "entry-fail-guest",
    [EXIT_MTF] = "MTF", [EXIT_EPT_VIOLATION] = "EPT-violation",
    [EXIT_EPT_MISCONFIG] = "EPT-misconfig", [EXIT_INVEPT] = "INVEPT",
    [EXIT_PREEMPTION_TIMER] = "preemption-timer", [EXIT_INVVPID] = "INVVPID",
    [EXIT_WBINVD] = "WBINVD", [EXIT_XSETBV] = "XSETBV", [EXIT_VMFUNC] = "VMFUNC",
};

const char *vmx_exit_name(unsigned r)
{
    return (r < EXIT_REASON_COUNT && exit_names[r]) ? exit_names[r] : "other";
}

void vmx_skip_instruction(void)
{
    vmx_write(VMCS_GUEST_RIP, vmx_read(VMCS_GUEST_RIP) + vmx_read(VMCS_EXIT_INSTR_LEN));
    /* Skipping an instruction ends STI/MOV-SS blocking (SDM 26.3 on instruction retirement). */
    uint64_t intr = vmx_read(VMCS_GUEST_INTERRUPTIBILITY);
    if (intr & (VMX_INTR_BLOCK_STI | VMX_INTR_BLOCK_MOVSS))
        vmx_write(VMCS_GUEST_INTERRUPTIBILITY, intr & ~(uint64_t)(VMX_INTR_BLOCK_STI | VMX_INTR_BLOCK_MOVSS));
}

void vmx_inject_exception(unsigned vector, bool has_error, uint32_t error)
{
    /* SDM 27.6 event injection: a hardware exception delivered as if the instruction faulted. */
    uint32_t info = VMX_INTR_INFO_VALID | VMX_INTR_TYPE_HW_EXC | vector;
    if (has_error) {
        info |= VMX_INTR_INFO_ERRCODE;
        vmx_write(VMCS_ENTRY_EXCEPTION_ERRCODE, error);
    }
    vmx_write(VMCS_ENTRY_INTR_INFO, info);
}

static uint64_t ept_refused;          /* guest accesses nothing maps (ept_refuse) */

void vmx_print_exit_summary(const char *why)
{
    hv_log("hvtrace: exit summary (%s)\n", why);
    for (unsigned f = 0; f < HV_HYPERCALL_MAX; f++) {
        uint64_t n = hv_hypercall_refused(f);
        if (n)
            hv_log("hvtrace: hypercall %u refused (#UD): %lu callers\n", f, n);
    }
    for (unsigned i = 0; i <= MSR_REFUSED_KINDS; i++) {
        uint32_t msr;
        uint64_t rd, wr, n = msr_policy_refused(i, &msr, &rd, &wr);
        if (n && i < MSR_REFUSED_KINDS)
            hv_log("hvtrace: MSR %x refused (#GP): %lu reads, %lu writes\n", msr, rd, wr);
        else if (n)
            hv_log("hvtrace: MSR accesses refused (#GP) beyond these: %lu\n", n);
    }
    unsigned mp, mt, mr;
    hv_ept_mmio_usage(&mp, &mt, &mr);
    if (mp || mr)
        hv_log("hvtrace: high MMIO mapped on demand: %u mappings (1 GiB, 2 MiB or 4 KiB each), %u EPT tables; %u refused past the bound\n",
               mp, mt, mr);
    if (ept_refused)
        hv_log("hvtrace: guest accesses nothing maps refused (#GP): %lu\n", ept_refused);
    for (unsigned c = 0; c < hv.cpu_count; c++) {
        struct vcpu *v = vcpu_get(c);
        /* MTF exits the policy's fast handler took are the policy's to count (hv_exit.h). */
        hv_log("hvtrace: cpu %u (apic %u): %lu exits through the full dispatch\n", c, v->apic_id, v->exits);
        for (unsigned r = 0; r < EXIT_REASON_COUNT; r++)
            if (v->exit_counts[r])
                hv_log("hvtrace:   cpu %u %-18s %lu\n", c, vmx_exit_name(r), v->exit_counts[r]);
        for (unsigned i = 0; i < 8 && v->io_ports[i].count; i++)
            hv_log("hvtrace:   cpu %u   I/O port %x: %lu\n", c, v->io_ports[i].port, v->io_ports[i].count);
        if (v->nmi_injected || v->nmi_waits)
            hv_log("hvtrace:   cpu %u NMIs given to the guest: %lu (%lu exited from it, the rest taken in VMX root; "
                   "%lu entries held one back for the guest's STI/MOV SS/NMI blocking or another event)\n", c,
                   v->nmi_injected, v->nmi_exits, v->nmi_waits);
        if (v->nmi_dropped)
            hv_log("hvtrace:   cpu %u NMIs dropped while the CPU waited for its SIPI: %lu\n", c, v->nmi_dropped);
        if (v->mc_injected)
            hv_log("hvtrace:   cpu %u machine checks given to the guest: %lu\n", c, v->mc_injected);
        if (v->io_watch_fast)
            hv_log("hvtrace:   cpu %u port accesses done at once (0xCF8 dwords, 0x64 status): %lu\n", c,
                   v->io_watch_fast);
        if (v->sleep_refused)
            hv_log("hvtrace:   cpu %u ACPI sleep requests refused (not S5): %lu\n", c, v->sleep_refused);
    }
}

/* --- handlers --- */

/* CPUID (SDM Vol. 2A, "CPUID-CPU Identification"): the guest sees the bare CPU's answer, so
 * it behaves as it would without us (Linux takes other paths when it sees a hypervisor: its
 * TSC calibration and errata checks). Hidden: VMX (no nested VMX: VMX instructions get #UD)
 * and MONITOR/MWAIT (an idle CPU then uses HLT, which stays halted under the monitor trap
 * flag, where MWAIT would wake at every step and a traced idle CPU would spin through its
 * idle loop; KVM hides it too). The hypervisor bit and our leaves at 0x40000000 only when the
 * configuration asks to advertise us: guest tools find hvtrace by its hypercall instead. */
static void handle_cpuid(struct guest_regs *g, struct vcpu *v)
{
    uint32_t leaf = (uint32_t)g->r[GPR_RAX], sub = (uint32_t)g->r[GPR_RCX], r[4];
    bool advertise = hv.bi->hv_flags & HVT_HVF_ADVERTISE;
    if (advertise && leaf >= HVT_CPUID_LEAF_BASE && leaf <= HVT_CPUID_LEAF_BASE + 0xff) {
        /* The range is reserved for hypervisors (SDM Vol. 2A, CPUID, "Hypervisor Use"). */
        r[0] = r[1] = r[2] = r[3] = 0;
        if (leaf == HVT_CPUID_LEAF_BASE) {
            const char *sig = HVT_CPUID_SIGNATURE;
            r[0] = HVT_CPUID_LEAF_MAX;
            memcpy(&r[1], sig, 4);
            memcpy(&r[2], sig + 4, 4);
            memcpy(&r[3], sig + 8, 4);
        } else if (leaf == HVT_CPUID_LEAF_MAX) {
            r[0] = HVT_VERSION;
        }
    } else {
        cpu_cpuid(leaf, sub, r);
        if (leaf == 1) {
            r[2] &= ~(CPUID_1_ECX_VMX | CPUID_1_ECX_MONITOR);
            if (advertise)
                r[2] |= CPUID_1_ECX_HYPERVISOR;
        }
    }
    g->r[GPR_RAX] = r[0];
    g->r[GPR_RBX] = r[1];
    g->r[GPR_RCX] = r[2];
    g->r[GPR_RDX] = r[3];
    vmx_skip_instruction();
}

/* May the caller make this hypercall (hv_exit.h)? CPL is SS.DPL (SDM Vol. 3A 5.5 "Privilege
 * Levels"; with VMX, VMCS guest SS access rights bits 6:5). */
static bool hypercall_allowed(uint64_t func, unsigned cpu)
{
    enum hv_hc_priv need;
    if (func == HVT_HC_VERSION)
        need = HV_HC_ANY;                     /* how guest tools find hvtrace: it tells nothing */
    else if (func == HVT_HC_HV_RANGE)         /* where our memory is: kernel only, but for the */
        need = !hv.selftest ? HV_HC_KERNEL :     /* guest's own memory checks in self-tests, */
               exit_reg.hc_admin ? HV_HC_ADMIN : HV_HC_ANY;   /* root if it can be told */
    else if (func < HV_HYPERCALL_MAX)
        need = (enum hv_hc_priv)exit_reg.hc_priv[func];
    else
        need = HV_HC_KERNEL;
    if (need == HV_HC_ANY)
        return true;
    unsigned cpl = (unsigned)(vmx_read(VMCS_GUEST_SS_AR) >> 5) & 3;
    if (cpl == 0)
        return true;
    return need == HV_HC_ADMIN && exit_reg.hc_admin && exit_reg.hc_admin(cpu);
}

static void handle_vmcall(struct guest_regs *g, struct vcpu *v)
{
    uint64_t rax = g->r[GPR_RAX];
    uint64_t func = rax & HVT_HC_FUNC_MASK;
    if ((rax & HVT_HC_MAGIC_MASK) != HVT_HC_MAGIC) {
        vmx_inject_exception(VEC_UD, false, 0);   /* as on bare metal (SDM VMCALL: #UD) */
        return;
    }
    if (!hypercall_allowed(func, v->index)) {
        if (func < HV_HYPERCALL_MAX)
            __atomic_add_fetch(&exit_reg.hc_refused[func], 1, __ATOMIC_RELAXED);
        vmx_inject_exception(VEC_UD, false, 0);   /* what this caller would get on bare metal */
        return;
    }
    int64_t status = HVT_HC_OK;
    switch (func) {
    case HVT_HC_VERSION:
        g->r[GPR_RBX] = HVT_VERSION;
        g->r[GPR_RCX] = HVT_HC_ABI_REVISION;
        break;
    case HVT_HC_HV_RANGE:
        /* The test of the fatal path (self-test boots only: never a way for a guest). */
        if (hv.selftest && g->r[GPR_RBX] == HVT_HC_RANGE_PANIC) {
            hv_fatal_selftest = (unsigned)g->r[GPR_RCX];
            hv_panic("self-test: the guest asked for the fatal path (cpu %u, rip %lx)\n", v->index,
                     vmx_read(VMCS_GUEST_RIP));
        }
        g->r[GPR_RBX] = hv.bi->region_phys;
        g->r[GPR_RCX] = hv.bi->region_size;
        g->r[GPR_RDX] = hv.selftest ? hv.canary : 0;
        break;
    default: {
        hv_hypercall_fn fn = func < HV_HYPERCALL_MAX ? exit_reg.hypercall[func] : 0;
        status = fn ? fn(g) : HVT_HC_ENOSYS;
    }
    }
    g->r[GPR_RAX] = (uint64_t)status;
    vmx_skip_instruction();
}

/* MOV to CR0 (SDM 26.1.3, 25.6.6): the guest owns every bit but those VMX fixes; keep the
 * fixed ones set underneath and show the guest its own value. With unrestricted guest the
 * guest may turn paging on or off, so maintain EFER.LMA and the IA-32e-mode entry control
 * the way the CPU would (SDM 10.8.5, "IA-32e mode activation"). */
#define CS_AR_L (1ull << 13)                   /* CS access rights: 64-bit code segment */

/* The #GP(0) cases of MOV to CR0 (SDM Vol. 2B "MOV-Move to/from Control Registers", 64-bit
 * mode exceptions): without them a guest's bad value would fail the next VM entry (SDM Vol. 3C
 * 27.3.1.1 "Checks on Guest Control Registers") instead of faulting in the guest. */
static bool cr0_faults(uint64_t old, uint64_t val)
{
    uint64_t cr4 = vmx_read(VMCS_CR4_READ_SHADOW), efer = vmx_read(VMCS_GUEST_EFER);
    return (val >> 32) || (val & ~hv.cr0_fixed1 & 0xffffffffull) ||
           ((val & CR0_PG) && !(val & CR0_PE)) || ((val & CR0_NW) && !(val & CR0_CD)) ||
           ((val & CR0_PG) && !(old & CR0_PG) && (efer & EFER_LME) && !(cr4 & CR4_PAE)) ||
           ((old & CR0_PG) && !(val & CR0_PG) && (vmx_read(VMCS_GUEST_CS_AR) & CS_AR_L));
}

static void write_cr0(uint64_t val)
{
    uint64_t old = vmx_read(VMCS_GUEST_CR0);
    uint64_t fixed0 = hv.cr0_fixed0 & ~(CR0_PE | CR0_PG);
    if (cr0_faults(old, val)) {
        vmx_inject_exception(VEC_GP, true, 0);
        return;
    }
    vmx_write(VMCS_CR0_READ_SHADOW, val);
    vmx_write(VMCS_GUEST_CR0, (val | fixed0) & hv.cr0_fixed1);
    uint64_t efer = vmx_read(VMCS_GUEST_EFER);
    uint64_t entry = vmx_read(VMCS_ENTRY_CONTROLS);
    if (!(old & CR0_PG) && (val & CR0_PG) && (efer & EFER_LME)) {
        vmx_write(VMCS_GUEST_EFER, efer | EFER_LMA);
        vmx_write(VMCS_ENTRY_CONTROLS, entry | ENTRY_IA32E_GUEST);
    } else if ((old & CR0_PG) && !(val & CR0_PG)) {
        vmx_write(VMCS_GUEST_EFER, efer & ~EFER_LMA);
        vmx_write(VMCS_ENTRY_CONTROLS, entry & ~ENTRY_IA32E_GUEST);
    }
    vmx_flush_guest_tlb();          /* as the instruction may (paging on/off, WP) */
    vmx_skip_instruction();
}

static void write_cr4(uint64_t val)
{
    /* The guest believes VMX is absent (CPUID), so CR4.VMXE=1 faults as on such a CPU; the
     * rest are MOV to CR4's own #GP(0) cases (SDM Vol. 2B): PAE cleared in IA-32e mode, PCIDE
     * set outside it or with a nonzero PCID in CR3. */
    uint64_t old = vmx_read(VMCS_CR4_READ_SHADOW);
    bool lma = vmx_read(VMCS_GUEST_EFER) & EFER_LMA;
    if ((val & CR4_VMXE) || (val & ~hv.cr4_fixed1) || (lma && !(val & CR4_PAE)) ||
        ((val & CR4_PCIDE) && !(old & CR4_PCIDE) && (!lma || (vmx_read(VMCS_GUEST_CR3) & 0xfff)))) {
        vmx_inject_exception(VEC_GP, true, 0);
        return;
    }
    vmx_write(VMCS_CR4_READ_SHADOW, val);
    vmx_write(VMCS_GUEST_CR4, (val | hv.cr4_fixed0) & hv.cr4_fixed1);
    vmx_flush_guest_tlb();          /* as the instruction may (PGE, PAE, PSE, PCIDE, SMEP...) */
    vmx_skip_instruction();
}

static uint64_t gpr_get(struct guest_regs *g, unsigned n)
{
    return n == GPR_RSP ? vmx_read(VMCS_GUEST_RSP) : g->r[n];
}

static void gpr_set(struct guest_regs *g, unsigned n, uint64_t val)
{
    if (n == GPR_RSP)
        vmx_write(VMCS_GUEST_RSP, val);
    else
        g->r[n] = val;
}

/* MOV to/from CR3 and CR8 exit only where the CPU forces CR3-load/store or CR8-load/store
 * exiting on (no "true" control MSRs, SDM Vol. 3C A.3.2 "Primary Processor-Based
 * VM-Execution Controls"): do what the instruction does (SDM Vol. 2B "MOV-Move to/from
 * Control Registers"): a CR3 load invalidates the guest's translations (all of them: more than
 * the PCID no-flush hint, bit 63, asks, which the architecture allows; bit 63 is not part of
 * CR3); CR8 is the local APIC's TPR, the
 * same register in VMX root (the guest owns the APIC). Reserved CR3 bits get #GP. Not done:
 * reloading the VMCS guest PDPTEs for PAE paging (SDM Vol. 3C 27.3.2.4 "Loading Page-Directory-
 * Pointer-Table Entries"); every CPU with EPT has the true controls, so this is a fallback. */
static void mov_cr3_cr8(struct guest_regs *g, unsigned cr, bool to, unsigned gpr)
{
    if (to) {
        uint64_t val = gpr_get(g, gpr);
        if (cr == 3) {
            val &= ~(1ull << 63);
            if (val >> hv.phys_bits) {
                vmx_inject_exception(VEC_GP, true, 0);
                return;
            }
            vmx_write(VMCS_GUEST_CR3, val);
            vmx_flush_guest_tlb();
        } else {
            if (val >> 4) {
                vmx_inject_exception(VEC_GP, true, 0);
                return;
            }
            __asm__ volatile("mov %0, %%cr8" :: "r"(val));
        }
    } else {
        uint64_t val;
        if (cr == 3)
            val = vmx_read(VMCS_GUEST_CR3);
        else
            __asm__ volatile("mov %%cr8, %0" : "=r"(val));
        gpr_set(g, gpr, val);
    }
    vmx_skip_instruction();
}

static void handle_cr_access(struct guest_regs *g, struct vcpu *v)
{
    uint64_t q = vmx_read(VMCS_EXIT_QUALIFICATION);
    unsigned cr = CRQ_NUM(q);
    switch (CRQ_TYPE(q)) {
    case CRQ_TYPE_MOV_TO:
        if (cr == 0)
            write_cr0(gpr_get(g, CRQ_GPR(q)));
        else if (cr == 4)
            write_cr4(gpr_get(g, CRQ_GPR(q)));
        else if (cr == 3 || cr == 8)
            mov_cr3_cr8(g, cr, true, CRQ_GPR(q));
        else
            vmx_inject_exception(VEC_UD, false, 0);   /* no such register (SDM MOV CR: #UD) */
        return;
    case CRQ_TYPE_MOV_FROM:
        if (cr == 3 || cr == 8)
            mov_cr3_cr8(g, cr, false, CRQ_GPR(q));
        else
            vmx_inject_exception(VEC_UD, false, 0);
        return;
    case CRQ_TYPE_LMSW: {
        /* LMSW writes CR0 bits 3:0 (PE, MP, EM, TS) and cannot clear PE (SDM LMSW). */
        uint64_t shadow = vmx_read(VMCS_CR0_READ_SHADOW);
        uint64_t src = CRQ_LMSW_SRC(q) & CR0_LMSW_BITS;
        write_cr0((shadow & ~(CR0_LMSW_BITS & ~CR0_PE)) | src | (shadow & CR0_PE));
        return;
    }
    case CRQ_TYPE_CLTS:
        vmx_write(VMCS_CR0_READ_SHADOW, vmx_read(VMCS_CR0_READ_SHADOW) & ~CR0_TS);
        vmx_write(VMCS_GUEST_CR0, vmx_read(VMCS_GUEST_CR0) & ~CR0_TS);
        vmx_skip_instruction();
        return;
    }
}

static void handle_xsetbv(struct guest_regs *g, struct vcpu *v)
{
    uint32_t idx = (uint32_t)g->r[GPR_RCX];
    uint64_t val = (g->r[GPR_RDX] << 32) | (uint32_t)g->r[GPR_RAX];
    uint32_t r[4];
    cpu_cpuid(0xd, 0, r);
    uint64_t supported = ((uint64_t)r[3] << 32) | r[0];
    /* Validate as XSETBV would (xcr0.h): a bad value must #GP in the guest, not here. */
    if (!xcr0_valid(idx, val, supported)) {
        vmx_inject_exception(VEC_GP, true, 0);
        return;
    }
    __asm__ volatile("xsetbv" :: "c"(idx), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)));
    vmx_skip_instruction();
}

void hv_port_io(bool in, unsigned size, uint16_t port, uint64_t *rax)
{
    if (in) {
        uint64_t v = size == 1 ? hv_inb(port) : size == 2 ? hv_inw(port) : hv_inl(port);
        uint64_t mask = size == 4 ? 0xffffffffull : (1ull << (8 * size)) - 1;
        /* A 32-bit IN zero-extends into RAX; 8/16-bit ones keep the upper bits. */
        *rax = size == 4 ? v : ((*rax & ~mask) | v);
    } else if (size == 1) {
        hv_outb(port, (uint8_t)*rax);
    } else if (size == 2) {
        hv_outw(port, (uint16_t)*rax);
    } else {
        hv_outl(port, (uint32_t)*rax);
    }
}

/* The guest resets the machine (or triple-faults, which on a PC resets it: the chipset
 * turns the CPU's shutdown cycle into a reset): end what is running the way power-off does
 * (the trace closed and flushed, the collector told), then do the guest's own request and
 * reset the machine the PC ways (hv_machine_reset: 0xCF9, the keyboard controller, a triple
 * fault). Only once. */
#define PORT_RESET_CTL   0xcf9
#define RESET_CTL_RST    0x04        /* 0xCF9 bit 2: do the reset (bit 1: hard) */
#define PORT_KBC_CMD     0x64
#define KBC_CMD_RESET    0xfe        /* pulse the CPU reset line */
static volatile uint32_t machine_ending;

static void machine_end(struct vcpu *v, enum hv_end why, const char *what, uint16_t port, uint64_t val)
{
    if (__atomic_exchange_n(&machine_ending, 1, __ATOMIC_ACQ_REL))
        for (;;)
            __asm__ volatile("cli; hlt");       /* another CPU is doing it */
    hv.end_reason = why;
    v->powering_off = true;
    vmx_print_exit_summary(what);
    exit_reg_power_off();
    hv_log("hvtrace: %s: resetting the machine\n", what);
    hv_reset_prepare();
    if (port)
        hv_port_io(false, 1, port, &val);       /* the guest's own request */
    hv_machine_reset();
}

enum hv_end hv_end_reason(void) { return hv.end_reason; }

/* One port access for the guest: a module's handler, else the power-off watch and the real
 * port. *val is RAX's part for IN (filled) and OUT (given). */
static void port_access(struct guest_regs *g, struct vcpu *v, uint16_t port, unsigned size, bool in,
                        uint64_t *val)
{
    /* A reset the guest asks for ends the trace first, whoever else watches the port. */
    if (!in && port == PORT_RESET_CTL && size == 1 && (*val & RESET_CTL_RST))
        machine_end(v, HV_END_RESET, "guest reset through port 0xCF9", port, *val);
    if (!in && port == PORT_KBC_CMD && size == 1 && (*val & 0xff) == KBC_CMD_RESET)
        machine_end(v, HV_END_RESET, "guest reset through the keyboard controller", port, *val);
    hv_io_fn fn = exit_reg_io(port);
    if (fn) {
        uint64_t rax = g->r[GPR_RAX];
        g->r[GPR_RAX] = *val;
        bool done = fn(g, port, size, in);
        *val = g->r[GPR_RAX];
        g->r[GPR_RAX] = rax;
        if (done)
            return;                             /* a module performed or emulated it */
    }
    /* The PM1 control register is 16 bits wide; SLP_EN and SLP_TYP are in its high byte,
     * which a byte write to the port after it reaches alone. */
    uint16_t a_port = hv.bi->pm1a_cnt_port, b_port = hv.bi->pm1b_cnt_port;
    bool pm1a = a_port && (port == a_port || port == a_port + 1);
    bool pm1b = b_port && (port == b_port || port == b_port + 1);
    if (!in && (pm1a || pm1b)) {
        uint64_t reg = (port == (pm1a ? a_port : b_port)) ? *val & (size == 1 ? 0xffu : 0xffffu)
                                                         : (*val & 0xffu) << 8;
        enum pm1_action a = pm1_sleep_decide(reg, hv.bi->s5_known,
                                             pm1a ? hv.bi->s5_slp_typ_a : hv.bi->s5_slp_typ_b);
        if (a == PM1_REFUSE) {
            /* A sleep state the hypervisor would not survive (pm1_sleep.h): not entered. */
            hv_log("hvtrace: cpu %u: guest asked for ACPI sleep type %u on port %x (not S5): "
                   "refused, the hypervisor does not survive S1-S4\n", v->index,
                   (unsigned)ACPI_PM1_SLP_TYP(reg), port);
            v->sleep_refused++;
            return;
        }
        if (a == PM1_POWER_OFF && !v->powering_off) {
            v->powering_off = true;
            vmx_print_exit_summary("guest entering ACPI sleep state (power-off)");
            exit_reg_power_off();
        }
    }
    hv_port_io(in, size, port, val);
}

/* INS/OUTS to an intercepted port (SDM Vol. 3C 28.2.1 "Basic VM-Exit Information": the
 * exit qualification and the guest-linear address of the memory operand; Vol. 2B INS/OUTS):
 * one element per exit. The registers advance as the CPU would (RSI/RDI by the element size,
 * backwards with RFLAGS.DF; RCX down for REP, masked to the address size), and a REP with
 * elements left does not advance RIP, so the instruction exits again for the next one. A
 * memory operand the guest's page tables do not map (or map read-only, for INS) gets #GP: the
 * guest asked for I/O through memory it cannot use. */
#define RFLAGS_DF (1ull << 10)
static void string_io(struct guest_regs *g, struct vcpu *v, uint64_t q, uint16_t port, unsigned size, bool in)
{
    uint32_t info = (uint32_t)vmx_read(VMCS_EXIT_INSTR_INFO);
    unsigned asize = (info >> 7) & 7;           /* 0: 16-bit, 1: 32-bit, 2: 64-bit addresses */
    uint64_t amask = asize == 0 ? 0xffffull : asize == 1 ? 0xffffffffull : ~0ull;
    bool rep = q & IOQ_REP;
    if (rep && !(g->r[GPR_RCX] & amask)) {
        vmx_skip_instruction();                 /* nothing to move */
        return;
    }
    uint64_t lin = vmx_read(VMCS_GUEST_LINEAR_ADDR), val = 0;
    struct gmem_paging pg;
    struct gmem_xlat x;
    hv_guest_paging(&pg);
    uint8_t *page = 0;
    if (gmem_walk(&pg, lin, &x) == 0 && (lin & 0xfff) + size <= 0x1000 && !hv_in_region(x.gpa))
        page = gmem_map_gpa(x.gpa & ~0xfffull);
    if (!page || (in && !x.writable)) {
        vmx_inject_exception(VEC_GP, true, 0);
        return;
    }
    uint8_t *mem = page + (x.gpa & 0xfff);
    if (!in)
        memcpy(&val, mem, size);
    port_access(g, v, port, size, in, &val);
    if (in)
        memcpy(mem, &val, size);
    unsigned idx = in ? GPR_RDI : GPR_RSI;
    uint64_t step = vmx_read(VMCS_GUEST_RFLAGS) & RFLAGS_DF ? (uint64_t)-size : size;
    g->r[idx] = (g->r[idx] & ~amask) | ((g->r[idx] + step) & amask);
    if (rep) {
        g->r[GPR_RCX] = (g->r[GPR_RCX] & ~amask) | ((g->r[GPR_RCX] - 1) & amask);
        if (g->r[GPR_RCX] & amask)
            return;                             /* more to do: the same instruction again */
    }
    vmx_skip_instruction();
}

static void handle_io(struct guest_regs *g, struct vcpu *v)
{
    uint64_t q = vmx_read(VMCS_EXIT_QUALIFICATION);
    uint16_t port = IOQ_PORT(q);
    unsigned size = IOQ_SIZE(q);
    bool in = q & IOQ_IN;
    for (unsigned i = 0; i < 8; i++)
        if (v->io_ports[i].port == port || v->io_ports[i].count == 0) {
            v->io_ports[i].port = port;
            v->io_ports[i].count++;
            break;
        }
    if (q & IOQ_STRING) {
        string_io(g, v, q, port, size, in);
        return;
    }
    uint64_t val = g->r[GPR_RAX];
    port_access(g, v, port, size, in, &val);
    g->r[GPR_RAX] = val;
    vmx_skip_instruction();
}

/* RDMSR/WRMSR that exit (SDM Vol. 3C 25.6.9; every MSR but the allow-list's,
 * msr_policy.h): a module that registered for the MSR first, then the policy; a refused access
 * gets the #GP real hardware gives for a bad MSR access. */
static void handle_rdmsr(struct guest_regs *g, struct vcpu *v)
{
    uint64_t val;
    uint32_t msr = (uint32_t)g->r[GPR_RCX];
    hv_msr_fn fn = exit_reg_msr(msr);
    if (!(fn && fn(msr, false, &val)) && !msr_policy_read(v->index, msr, &val)) {
        vmx_inject_exception(VEC_GP, true, 0);
        return;
    }
    g->r[GPR_RAX] = (uint32_t)val;
    g->r[GPR_RDX] = val >> 32;
    vmx_skip_instruction();
}

static void handle_wrmsr(struct guest_regs *g, struct vcpu *v)
{
    uint64_t val = (g->r[GPR_RDX] << 32) | (uint32_t)g->r[GPR_RAX];
    uint32_t msr = (uint32_t)g->r[GPR_RCX];
    hv_msr_fn fn = exit_reg_msr(msr);
    if (!(fn && fn(msr, true, &val)) && !msr_policy_write(v->index, msr, val)) {
        vmx_inject_exception(VEC_GP, true, 0);
        return;
    }
    vmx_skip_instruction();
}

static void handle_init(struct guest_regs *g, struct vcpu *v)
{
    /* SDM 26.2 / 28.2: INIT in VMX non-root operation is a VM exit and nothing else. Do what
     * the CPU would have done: reset to the INIT state and wait for a SIPI. */
    v->init_count++;
    vmx_guest_reset_to_init();
}

static void handle_sipi(struct guest_regs *g, struct vcpu *v)
{
    /* SIPI exit qualification bits 7:0 = vector; start at vector*0x1000 in real mode. */
    uint64_t vec = vmx_read(VMCS_EXIT_QUALIFICATION) & 0xff;
    v->sipi_count++;
    vmx_write(VMCS_GUEST_CS_SEL, vec << 8);
    vmx_write(VMCS_GUEST_CS_BASE, vec << 12);
    vmx_write(VMCS_GUEST_RIP, 0);
    vmx_write(VMCS_GUEST_ACTIVITY_STATE, VMX_ACTIVITY_ACTIVE);
}

static void handle_triple_fault(struct guest_regs *g, struct vcpu *v)
{
    hv_log("hvtrace: cpu %u: guest TRIPLE FAULT at rip %lx cr3 %lx\n", v->index,
           vmx_read(VMCS_GUEST_RIP), vmx_read(VMCS_GUEST_CR3));
    machine_end(v, HV_END_TRIPLE_FAULT, "guest triple fault", 0, 0);
}

/* A guest access nothing maps and nobody handles (an address past the MMIO bound, hv_ept.c,
 * or a permission no module claims): the access faults in the guest, #GP(0) as for a
 * non-canonical or otherwise refused access; during the delivery of an event it is the
 * double fault the CPU gives for a fault in delivery, and during a double fault's delivery a
 * triple fault (SDM Vol. 3A 6.15 "Exception and Interrupt Reference", Interrupt 8). Counted,
 * the first one logged (a guest must not make the hypervisor write to a port at will). */
static void ept_refuse(struct guest_regs *g, struct vcpu *v, uint64_t gpa, uint64_t q)
{
    if (__atomic_fetch_add(&ept_refused, 1, __ATOMIC_RELAXED) == 0)
        hv_log("hvtrace: cpu %u: guest access to gpa %lx (qual %lx) at rip %lx refused (#GP); "
               "later ones are only counted\n", v->index, gpa, q, vmx_read(VMCS_GUEST_RIP));
    uint32_t idt = (uint32_t)vmx_read(VMCS_IDT_VECTORING_INFO);
    if (!(idt & VMX_INTR_INFO_VALID)) {
        vmx_inject_exception(VEC_GP, true, 0);
    } else if ((idt & VMX_INTR_TYPE_MASK) == VMX_INTR_TYPE_HW_EXC && (idt & 0xff) == VEC_DF) {
        vmx_write(VMCS_ENTRY_INTR_INFO, 0);
        handle_triple_fault(g, v);
    } else {
        vmx_inject_exception(VEC_DF, true, 0);
    }
}

static void handle_ept_violation(struct guest_regs *g, struct vcpu *v)
{
    uint64_t gpa = vmx_read(VMCS_GUEST_PHYS_ADDR);
    uint64_t q = vmx_read(VMCS_EXIT_QUALIFICATION);
    if (hv_ept_drop_write_fault(gpa, q) || hv_ept_ecam_write_fault(g, gpa, q) || exit_reg_ept(gpa, q))
        return;
    /* Beyond the identity map we built (high MMIO): extend it on demand, uncached, within
     * its bound. */
    if (hv_ept_map_mmio(gpa) == 0)
        return;
    ept_refuse(g, v, gpa, q);
}

/* UMWAIT and TPAUSE exit when RDTSC exiting (the tracer's) and "enable user wait and pause"
 * are both on (SDM Vol. 3C 26.1.3): an early wake-up is allowed by the instructions (SDM
 * Vol. 2B UMWAIT, TPAUSE): return at once, CF = 0 (the OS time limit did not expire), ZF,
 * PF, AF, OF, SF cleared. */
#define EXIT_UMWAIT 67
#define EXIT_TPAUSE 68
static void handle_user_wait(struct guest_regs *g, struct vcpu *v)
{
    uint64_t fl = vmx_read(VMCS_GUEST_RFLAGS);
    fl &= ~(RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | (1ull << 11) /* OF */);
    vmx_write(VMCS_GUEST_RFLAGS, fl);
    vmx_skip_instruction();
}

void vmx_resume_failed(struct vcpu *v)
{
    hv_panic("cpu %u: VMRESUME failed, VM-instruction error %lu\n", v->index,
             vmx_read(VMCS_VM_INSTR_ERROR));
}

/* An exception or NMI taken in the hypervisor itself. */
struct exc_frame { uint64_t vector, error, rip, cs, rflags, rsp, ss; };

void host_exception(struct exc_frame *f)
{
    if (f->vector == VEC_GP && f->rip == (uint64_t)msr_read_insn) {
        f->rip = (uint64_t)msr_read_fault;      /* the MSR does not exist: report, don't die */
        return;
    }
    if (f->vector == VEC_GP && f->rip == (uint64_t)msr_write_insn) {
        f->rip = (uint64_t)msr_write_fault;
        return;
    }
    if (f->vector == VEC_NMI) {
        hv_fatal_nmi();                         /* the fatal path stopping this CPU: parks */
        /* NMIs belong to the guest: remember it and inject it at the next VM entry (through
         * the full dispatch: the fast MTF path does not inject). */
        vcpu_current()->nmi_pending = true;
        vcpu_current()->fast_block = 1;
        return;
    }
    if (f->vector == VEC_MC) {
        /* The guest's, like an NMI (mc_decide.h), where the interrupted code can go on. */
        uint64_t st = hv_rdmsr(MSR_IA32_MCG_STATUS);
        if (mc_root_action(st) == MC_ROOT_FATAL)
            hv_panic("machine check in VMX root at rip %lx, IA32_MCG_STATUS %lx: cannot resume\n",
                     f->rip, st);
        vcpu_current()->mc_pending = true;
        vcpu_current()->fast_block = 1;
        return;
    }
    hv_panic("host exception %lu error %lx at rip %lx rsp %lx cr2 %lx\n", f->vector, f->error,
             f->rip, f->rsp, ({ uint64_t c; __asm__ volatile("mov %%cr2, %0" : "=r"(c)); c; }));
}

static void handle_invd(struct guest_regs *g, struct vcpu *v)
{
    cpu_wbinvd();        /* INVD would drop our own dirty lines too: write back instead */
    vmx_skip_instruction();
}

/* CPUID says no VMX and no SMX: these are undefined opcodes for the guest (SDM 31.1 "Basic
 * VMX Operation", and GETSEC's #UD when CR4.SMXE = 0). */
static void handle_vmx_insn(struct guest_regs *g, struct vcpu *v)
{
    vmx_inject_exception(VEC_UD, false, 0);
}

/* The exits vmm/ handles itself, indexed by basic exit reason (SDM appendix C). The others
 * are lent to modules (exit_reg.c, hv_exit.h). */
typedef void (*exit_handler_fn)(struct guest_regs *g, struct vcpu *v);
static const exit_handler_fn exit_handlers[EXIT_REASON_COUNT] = {
    [EXIT_CPUID] = handle_cpuid,           [EXIT_VMCALL] = handle_vmcall,
    [EXIT_CR_ACCESS] = handle_cr_access,   [EXIT_XSETBV] = handle_xsetbv,
    [EXIT_IO] = handle_io,                 [EXIT_RDMSR] = handle_rdmsr,
    [EXIT_WRMSR] = handle_wrmsr,           [EXIT_INIT] = handle_init,
    [EXIT_SIPI] = handle_sipi,             [EXIT_EPT_VIOLATION] = handle_ept_violation,
    [EXIT_TRIPLE_FAULT] = handle_triple_fault, [EXIT_INVD] = handle_invd,
    [EXIT_GETSEC] = handle_vmx_insn,       [EXIT_VMCLEAR] = handle_vmx_insn,
    [EXIT_VMLAUNCH] = handle_vmx_insn,     [EXIT_VMPTRLD] = handle_vmx_insn,
    [EXIT_VMPTRST] = handle_vmx_insn,      [EXIT_VMREAD] = handle_vmx_insn,
    [EXIT_VMRESUME] = handle_vmx_insn,     [EXIT_VMWRITE] = handle_vmx_insn,
    [EXIT_VMXOFF] = handle_vmx_insn,       [EXIT_VMXON] = handle_vmx_insn,
    [EXIT_INVEPT] = handle_vmx_insn,       [EXIT_INVVPID] = handle_vmx_insn,
    [EXIT_VMFUNC] = handle_vmx_insn,
    [EXIT_UMWAIT] = handle_user_wait,      [EXIT_TPAUSE] = handle_user_wait,
};

/* What any CPU changed for all of them since this one last looked: at the start of an exit
 * (edits made while it ran the guest) and again before it resumes (edits its own handlers and
 * observers made, which must hold from its next guest instruction: an INT3 planted in a view
 * must never run with #BP not intercepted). */
static void apply_shared_edits(struct vcpu *v)
{
    /* EPT was edited (hv_ept.h, any CPU): drop this CPU's stale translations. */
    if (v->ept_epoch != hv.ept_epoch)
        hv_ept_refresh(v);
    if (v->ctl_epoch != hv.ctl_epoch) {      /* hv_exception_intercept on some CPU */
        v->ctl_epoch = hv.ctl_epoch;
        vmx_write(VMCS_EXCEPTION_BITMAP, hv.exception_bitmap);
    }
}

/* Exits caused by an instruction the guest executed (SDM Vol. 3C 26.1.2 "Instructions That
 * Cause VM Exits Unconditionally", 26.1.3 "... Conditionally"): one that no handler took gets
 * #UD, what a CPU without that feature gives, rather than stopping the hypervisor (the guest
 * can reach these). */
static bool insn_exit(unsigned basic)
{
    switch (basic) {
    case EXIT_RDPMC: case EXIT_MWAIT: case EXIT_MONITOR: case EXIT_PAUSE: case EXIT_INVEPT:
    case EXIT_INVVPID: case EXIT_WBINVD: case EXIT_RDRAND: case EXIT_INVPCID: case EXIT_VMFUNC:
    case EXIT_ENCLS: case EXIT_RDSEED: case EXIT_XSAVES: case EXIT_XSAVES + 1 /* XRSTORS */:
        return true;
    }
    return false;
}

/* A VM entry that failed on the guest's state (SDM Vol. 3C 27.8 "VM-Entry Failures During or
 * After Loading Guest State", exit reason 33): every guest write that reaches the VMCS is
 * checked first (CR0/CR4 above, XSETBV, the MSR policy), so this is a state no real CPU would
 * hold; the nearest the CPU does with an impossible state is shutdown: the guest's triple
 * fault, which resets the machine with the trace ended. A failure on MSR loading (34) is the
 * hypervisor's: fatal. A machine check during the entry (41) returns: the entry is made again. */
static void entry_failed(struct guest_regs *g, struct vcpu *v, unsigned basic)
{
    uint64_t q = vmx_read(VMCS_EXIT_QUALIFICATION);
    if (basic == EXIT_ENTRY_FAIL_MCE) {
        /* The machine check is the guest's (mc_decide.h); its state was not taken up: enter
         * again, with #MC. */
        hv_log("hvtrace: cpu %u: machine check during VM entry: given to the guest\n", v->index);
        v->mc_pending = true;
        return;
    }
    if (basic != EXIT_ENTRY_FAIL_GUEST)
        hv_panic("cpu %u: VM entry failed, reason %u qual %lx\n", v->index, basic, q);
    hv_log("hvtrace: cpu %u: VM entry failed on the guest's state (qual %lx, rip %lx): "
           "treated as the guest's triple fault\n", v->index, q, vmx_read(VMCS_GUEST_RIP));
    machine_end(v, HV_END_TRIPLE_FAULT, "guest state invalid at VM entry", 0, 0);
}

/* An exit nobody handles that is not an instruction: with the controls vmm/ and its users set,
 * the guest reaches only task switches this way (they exit unconditionally, SDM Vol. 3C
 * 26.1.2; only legacy protected mode has them) and SMIs with the dual-monitor treatment (not
 * used). Emulating a task switch is not done: the machine ends as for a triple fault (the
 * guest could reset it itself). Any other reason is a control vmm/ or a user set without a
 * handler, or an EPT misconfiguration (the hypervisor's own EPT): fatal. */
static void unhandled_exit(struct guest_regs *g, struct vcpu *v, unsigned basic)
{
    bool guest_event = basic == EXIT_TASK_SWITCH || basic == EXIT_IO_SMI || basic == EXIT_OTHER_SMI;
    if (!guest_event)
        hv_panic("cpu %u: unhandled VM exit %u (%s) qual %lx rip %lx\n", v->index, basic,
                 vmx_exit_name(basic), vmx_read(VMCS_EXIT_QUALIFICATION), vmx_read(VMCS_GUEST_RIP));
    hv_log("hvtrace: cpu %u: VM exit %u (%s) at rip %lx is not emulated: treated as the "
           "guest's triple fault\n", v->index, basic, vmx_exit_name(basic), vmx_read(VMCS_GUEST_RIP));
    machine_end(v, HV_END_TRIPLE_FAULT, "guest event not emulated", 0, 0);
}

/* Speculation isolation at the edges of an exit (spec_ctrl.h has the decision and its
 * sources). Inline, before anything else the dispatch does: the RSB must be refilled before
 * the first RET of VMX root, and IBRS set before its first indirect branch. Every action is
 * one the capability bits said exists; on a CPU without them the plan is all off. */
static inline __attribute__((always_inline)) void spec_after_exit(struct vcpu *v)
{
    const struct spec_plan *p = &hv.spec;
    if (__builtin_expect(!p->per_exit, 1))
        return;
    if (p->switch_spec_ctrl) {
        uint64_t g = hv_rdmsr(MSR_IA32_SPEC_CTRL);
        v->guest_spec_ctrl = g;
        if (p->spec_ctrl_write_always || g != p->host_spec_ctrl)
            hv_wrmsr(MSR_IA32_SPEC_CTRL, p->host_spec_ctrl);
    }
    if (p->rsb == SPEC_RSB_FULL) {
        /* 32 CALLs whose return addresses point at a speculation trap ("Retpoline: A Branch
         * Target Injection Mitigation", RSB stuffing), then the stack put back. No red zone in
         * the hypervisor (-mno-red-zone), so the pushes below RSP clobber nothing. */
        __asm__ volatile(".rept 32\n\tcall 1f\n\tint3\n1:\n\t.endr\n\t"
                         "add $256, %%rsp\n\tlfence" ::: "memory");
    } else if (p->rsb == SPEC_RSB_LITE) {
        /* One CALL before the first RET ("Post-barrier Return Stack Buffer Predictions"). */
        __asm__ volatile("call 1f\n\tint3\n1:\n\tadd $8, %%rsp\n\tlfence" ::: "memory");
    }
}

static inline __attribute__((always_inline)) void spec_before_entry(struct vcpu *v)
{
    const struct spec_plan *p = &hv.spec;
    if (__builtin_expect(!p->per_exit, 1))
        return;
    if (p->switch_spec_ctrl && v->guest_spec_ctrl != p->host_spec_ctrl)
        hv_wrmsr(MSR_IA32_SPEC_CTRL, v->guest_spec_ctrl);
    if (p->l1d_flush) {
        hv_wrmsr(MSR_IA32_FLUSH_CMD, FLUSH_CMD_L1D);
    } else if (p->verw) {
        /* VERW with a memory operand naming a writable data segment overwrites the buffers
         * where MD_CLEAR/FB_CLEAR say so (the MDS deep dive, "Software sequences"). */
        static const uint16_t verw_sel = HOST_SEL_DATA;
        __asm__ volatile("verw %0" :: "m"(verw_sel) : "cc");
    }
}

/* Did this exit interrupt an IRET that unblocked NMIs? Bit 12 of the exit interruption
 * information (a hardware exception) or of the EPT-violation qualification says so (SDM 28.2.1
 * "Basic VM-Exit Information", 28.2.3). */
#define NMI_UNBLOCKED_BY_IRET (1u << 12)
static bool nmi_unblocked_by_iret(uint32_t basic)
{
    if (basic == EXIT_EPT_VIOLATION)
        return vmx_read(VMCS_EXIT_QUALIFICATION) & NMI_UNBLOCKED_BY_IRET;
    if (basic != EXIT_EXCEPTION_NMI)
        return false;
    uint32_t info = (uint32_t)vmx_read(VMCS_EXIT_INTR_INFO);
    return (info & VMX_INTR_INFO_VALID) && (info & VMX_INTR_TYPE_MASK) == VMX_INTR_TYPE_HW_EXC &&
           (info & NMI_UNBLOCKED_BY_IRET);
}

/* An event vmm/ injects for its own reasons into a halted guest wakes it at this entry (SDM
 * Vol. 3C 27.7.2 "Activity State"): the policy hears of it (hv_on_wake), as it hears of a
 * wake-up that exits. */
static void entry_wakes(void)
{
    if (vmx_read(VMCS_GUEST_ACTIVITY_STATE) == VMX_ACTIVITY_HLT)
        exit_reg_wake();
}

/* The NMI-window exiting control, for a pending NMI the guest cannot take yet. */
static void nmi_set_window(struct vcpu *v, bool on)
{
    if (v->nmi_window == on)
        return;
    v->nmi_window = on;
    vcpu_set_proc_bits(PROC_NMI_WINDOW_EXITING, on);
}

/* An NMI for the guest - one that exited (virtual NMIs) or one the host caught in VMX root -
 * goes to it at an entry that may carry it (nmi_decide.h); until then the CPU waits for an NMI
 * window (virtual NMIs), else the guest runs an instruction at a time (the monitor trap flag,
 * off again once the NMI is in unless the policy steps this CPU itself), each exit through the
 * full dispatch. */
static void nmi_entry(struct vcpu *v)
{
    if (!v->nmi_pending)
        return;                            /* the common case: no VMCS read */
    switch (nmi_decide(true, (uint32_t)vmx_read(VMCS_GUEST_ACTIVITY_STATE),
                       (uint32_t)vmx_read(VMCS_GUEST_INTERRUPTIBILITY),
                       (uint32_t)vmx_read(VMCS_ENTRY_INTR_INFO))) {
    case NMI_INJECT:
        v->nmi_pending = false;
        v->nmi_injected++;
        vmx_write(VMCS_ENTRY_INTR_INFO, VMX_INTR_INFO_VALID | VMX_INTR_TYPE_NMI | VEC_NMI);
        nmi_set_window(v, false);
        entry_wakes();
        if (v->nmi_mtf) {
            v->nmi_mtf = false;
            vcpu_sync_mtf(v);
        }
        break;
    case NMI_WAIT_ONE_STEP:
        v->nmi_waits++;
        if (hv.virtual_nmis) {
            nmi_set_window(v, true);       /* an NMI-window exit comes when it can be taken */
            break;
        }
        if (!v->nmi_mtf) {
            v->nmi_mtf = true;
            vcpu_sync_mtf(v);
        }
        v->fast_block = 1;                 /* the next exit comes back here */
        break;
    case NMI_DROP:
        v->nmi_pending = false;
        v->nmi_dropped++;
        nmi_set_window(v, false);
        break;
    case NMI_NOTHING:
        break;
    }
}

/* A machine check for the guest (mc_decide.h), as an NMI above: at an entry with room for it,
 * else after one monitor-trap-flag step. */
static void mc_entry(struct vcpu *v)
{
    if (!v->mc_pending)
        return;
    switch (mc_decide(true, (uint32_t)vmx_read(VMCS_GUEST_ACTIVITY_STATE), vmx_read(VMCS_GUEST_CR4),
                      (uint32_t)vmx_read(VMCS_ENTRY_INTR_INFO))) {
    case MC_INJECT:
        v->mc_pending = false;
        v->mc_injected++;
        vmx_write(VMCS_ENTRY_INTR_INFO, VMX_INTR_INFO_VALID | VMX_INTR_TYPE_HW_EXC | VEC_MC);
        entry_wakes();
        if (v->mc_mtf) {
            v->mc_mtf = false;
            vcpu_sync_mtf(v);
        }
        break;
    case MC_WAIT_ONE_STEP:
        if (!v->mc_mtf) {
            v->mc_mtf = true;
            vcpu_sync_mtf(v);
        }
        v->fast_block = 1;
        break;
    case MC_DROP:
        v->mc_pending = false;
        hv_log("hvtrace: cpu %u: machine check while waiting for SIPI: not delivered\n", v->index);
        break;
    case MC_SHUTDOWN:
        v->mc_pending = false;
        machine_end(v, HV_END_TRIPLE_FAULT, "machine check with the guest's CR4.MCE clear", 0, 0);
        break;
    case MC_NOTHING:
        break;
    }
}

/* An exit's untimed ticks, measured on this CPU (dilate_calib.h): a burst of VM entries with
 * the VMX-preemption timer at zero, begun at the end of an exit that leaves the guest active
 * with nothing to deliver and nothing stepping or dilating it, so the guest executes nothing
 * until the burst ends. Its first half ends each exit dilated (the stub records when it
 * resumed: time dilation's remainder, dilate_fixed), its second half undilated (the stub's
 * stamp: hv_exit_untimed's, for the accounting of whole exits); the next exit says when it
 * came back. Another exit in the middle (INIT, SMI) ends the burst early; a later exit begins
 * another, at most DILATE_CALIB_TRIES. What the burst changed is put back at its end. */
#define DILATE_CALIB_TRIES 8

static void calib_restore(struct vcpu *v)
{
    vmx_write(VMCS_PIN_CONTROLS, v->calib_saved_pin);
    vmx_write(VMCS_PREEMPTION_TIMER, v->calib_saved_timer);
    vmx_write(VMCS_TSC_OFFSET, v->calib_saved_offset);   /* the guest ran nothing meanwhile */
    v->dilate = 0;                          /* calib_begin ran only where nothing dilated */
    v->calib_left = 0;
}

/* The smallest of the CPUs' measures, which every CPU then uses: taking out more ticks than an
 * exit really cost would run the guest's clock backwards across it, and one CPU's round trip
 * can measure long at one moment (Bochs: while the other CPUs wait for SIPI) and run short at
 * another. A CPU whose exits are slower (a hybrid part's efficient cores) lets its guest see a
 * few of their ticks; never a clock that goes back. */
static uint64_t calib_global = ~0ull;

static void calib_finish(struct vcpu *v)
{
    bool ok, ok_stamp;
    uint64_t mine = dilate_calib_result(&v->calib, VCPU_DILATE_FIXED, &ok);
    __atomic_store_n(&v->exit_untimed, dilate_calib_result(&v->calib_stamp, VCPU_EXIT_UNTIMED, &ok_stamp),
                     __ATOMIC_RELAXED);
    v->calib_done = true;
    if (ok) {
        uint64_t g = __atomic_load_n(&calib_global, __ATOMIC_RELAXED);
        while (mine < g && !__atomic_compare_exchange_n(&calib_global, &g, mine, false, __ATOMIC_ACQ_REL,
                                                        __ATOMIC_RELAXED))
            ;
        g = __atomic_load_n(&calib_global, __ATOMIC_ACQUIRE);
        for (unsigned i = 0; i < hv.cpu_count; i++) {    /* one aligned word each */
            struct vcpu *o = vcpu_get(i);
            if (o->calib_done)                 /* this CPU's own included */
                __atomic_store_n(&o->dilate_fixed, g, __ATOMIC_RELEASE);
        }
        hv_log("hvtrace: cpu %u: an exit's untimed ticks measured: %lu (smallest of %u zero-length "
               "guest runs, largest %lu); time dilation takes %lu out (the smallest of the CPUs'); "
               "undilated %lu (%s)\n", v->index, mine, v->calib.samples, v->calib.max, g, v->exit_untimed,
               ok_stamp ? "measured" : "not measured: the stub's instruction count");
    } else {
        hv_log("hvtrace: cpu %u: time dilation not calibrated (%u runs, smallest %lu ticks): %lu ticks "
               "per exit assumed\n", v->index, v->calib.samples, v->calib.samples ? v->calib.min : 0,
               v->dilate_fixed);
    }
}

static void calib_begin(struct vcpu *v)
{
    if (v->calib_done || v->dilate || v->policy_mtf || v->nmi_mtf || v->mc_mtf || v->nmi_pending ||
        v->mc_pending || vmx_read(VMCS_GUEST_ACTIVITY_STATE) != VMX_ACTIVITY_ACTIVE ||
        (vmx_read(VMCS_ENTRY_INTR_INFO) & VMX_INTR_INFO_VALID))
        return;
    if (v->calib_tries++ == DILATE_CALIB_TRIES) {
        calib_finish(v);
        return;
    }
    v->calib_saved_pin = vmx_read(VMCS_PIN_CONTROLS);
    v->calib_saved_timer = vmx_read(VMCS_PREEMPTION_TIMER);
    v->calib_saved_offset = vmx_read(VMCS_TSC_OFFSET);
    v->calib_left = 2 * DILATE_CALIB_EXITS;
    v->calib_prev = false;
    v->dilate = HV_DILATE_TSC;
    vmx_write(VMCS_PREEMPTION_TIMER, 0);
    vmx_write(VMCS_PIN_CONTROLS, v->calib_saved_pin | PIN_PREEMPTION_TIMER);
}

/* An exit while a burst runs: true if it was the burst's (handled). */
static bool calib_exit(struct vcpu *v, uint32_t reason)
{
    if (reason != EXIT_PREEMPTION_TIMER) {
        calib_restore(v);                   /* cut short: this exit goes on as usual */
        return false;
    }
    if (v->calib_prev) {                    /* how the previous exit ended says which */
        if (v->dilate & HV_DILATE_TSC)
            dilate_calib_add(&v->calib, v->exit_tsc - v->resume_tsc);
        else
            dilate_calib_add(&v->calib_stamp, v->exit_tsc - v->entry_tsc);
    }
    v->calib_prev = true;
    if (--v->calib_left) {
        if (v->calib_left == DILATE_CALIB_EXITS)
            v->dilate = 0;                  /* the second half: this exit ends stamped */
        vmx_write(VMCS_PREEMPTION_TIMER, 0);
        return true;
    }
    calib_restore(v);
    calib_finish(v);
    return true;
}

/* A port access vmm/ watches but that cannot be what it watches for, done at once
 * (io_watch.h). false: the full dispatch takes it. */
static bool io_watch_exit(struct guest_regs *g, struct vcpu *v)
{
    if (v->dilate || v->policy_mtf || v->fast_block || v->nmi_pending || v->mc_pending ||
        v->ept_epoch != hv.ept_epoch || v->ctl_epoch != hv.ctl_epoch)
        return false;
    uint64_t q = vmx_read(VMCS_EXIT_QUALIFICATION);
    uint16_t port = IOQ_PORT(q);
    unsigned size = IOQ_SIZE(q);
    bool in = q & IOQ_IN;
    if (!io_watch_fast(port, size, in, q & IOQ_STRING, exit_reg_io(port) != 0))
        return false;
    uint64_t val = g->r[GPR_RAX];
    hv_port_io(in, size, port, &val);
    g->r[GPR_RAX] = val;
    vmx_skip_instruction();
    v->io_watch_fast++;
    return true;
}

void vmx_exit_dispatch(struct guest_regs *g, struct vcpu *v)
{
    spec_after_exit(v);
    if (hv_fatal_stopping)
        hv_fatal_at_exit();                     /* another CPU is in the fatal path: stop here */
    uint32_t reason = (uint32_t)vmx_read(VMCS_EXIT_REASON);
    uint32_t basic = reason & EXIT_REASON_BASIC_MASK;
    if (basic == EXIT_IO && io_watch_exit(g, v)) {
        spec_before_entry(v);
        return;
    }
    v->exits++;
    if (basic < EXIT_REASON_COUNT)
        v->exit_counts[basic]++;
    if (v->calib_left && calib_exit(v, reason)) {
        spec_before_entry(v);
        return;
    }
    /* What blocked the fast MTF path is handled below (an NMI set it again meanwhile). */
    v->fast_block = 0;
    apply_shared_edits(v);
    if (reason & EXIT_REASON_ENTRY_FAIL) {
        entry_failed(g, v, basic);              /* returns for a machine check only */
        mc_entry(v);
        spec_before_entry(v);
        return;
    }
    /* An exit in the middle of delivering an event (SDM 28.2.4: IDT-vectoring information)
     * loses that event unless the VMM re-injects it (SDM 27.6): do so; a handler that injects
     * something itself overwrites this. */
    uint32_t idt_info = (uint32_t)vmx_read(VMCS_IDT_VECTORING_INFO);
    if (idt_info & VMX_INTR_INFO_VALID) {
        vmx_write(VMCS_ENTRY_INTR_INFO, idt_info & ~VMX_IDT_INFO_UNDEFINED_BIT12);
        if (idt_info & VMX_INTR_INFO_ERRCODE)
            vmx_write(VMCS_ENTRY_EXCEPTION_ERRCODE, vmx_read(VMCS_IDT_VECTORING_ERRCODE));
        uint32_t type = idt_info & VMX_INTR_TYPE_MASK;
        if (type == VMX_INTR_TYPE_SW_INT || type == VMX_INTR_TYPE_PRIV_SW_EXC || type == VMX_INTR_TYPE_SW_EXC)
            vmx_write(VMCS_ENTRY_INSTR_LEN, vmx_read(VMCS_EXIT_INSTR_LEN));
    } else if (hv.virtual_nmis && nmi_unblocked_by_iret(basic)) {
        /* The exit came in the middle of an IRET that had ended the guest's virtual-NMI
         * blocking (a fault or EPT violation while it read the stack): the IRET runs again,
         * so the blocking is put back first (SDM 28.2.3 "Information About NMI Unblocking Due
         * to IRET"), else an NMI could be injected before the handler has returned. */
        vmx_write(VMCS_GUEST_INTERRUPTIBILITY, vmx_read(VMCS_GUEST_INTERRUPTIBILITY) | VMX_INTR_BLOCK_NMI);
    }
    hv_exit_fn quick = basic < EXIT_REASON_COUNT ? exit_reg.quick[basic] : 0;
    if (quick && !(basic == EXIT_MTF && (v->nmi_mtf || v->mc_mtf)) && quick(g, basic))
        goto entry;                             /* taken whole: no observer (hv_exit.h) */
    for (unsigned i = 0; i < exit_reg.nobservers; i++)
        if (exit_reg.pre[i])
            exit_reg.pre[i](g, basic);
    exit_handler_fn own = basic < EXIT_REASON_COUNT ? exit_handlers[basic] : 0;
    if (basic == EXIT_MTF && (v->nmi_mtf || v->mc_mtf) && !v->policy_mtf) {
        /* vmm/'s own step for a pending NMI or #MC (below): not the policy's to see */
    } else if (basic == EXIT_EXCEPTION_NMI &&
               (vmx_read(VMCS_EXIT_INTR_INFO) & VMX_INTR_TYPE_MASK) == VMX_INTR_TYPE_NMI) {
        /* An NMI that arrived in the guest (virtual NMIs): the guest's, given to it below at
         * an entry that may carry it. Observers see the exit (a parked CPU has woken). */
        v->nmi_pending = true;
        v->nmi_exits++;
    } else if (basic == EXIT_NMI_WINDOW) {
        nmi_set_window(v, false);          /* the window is open: nmi_entry injects below */
    } else if (own) {
        own(g, v);
    } else {
        hv_exit_fn fn = basic < EXIT_REASON_COUNT ? exit_reg.exit[basic] : 0;
        bool done = fn && fn(g, basic);
        if (!done && insn_exit(basic))
            vmx_inject_exception(VEC_UD, false, 0);   /* an instruction nobody emulates */
        else if (!done)
            unhandled_exit(g, v, basic);
    }
    for (unsigned i = 0; i < exit_reg.nobservers; i++)
        if (exit_reg.post[i])
            exit_reg.post[i](g, basic);
entry:
    apply_shared_edits(v);
    mc_entry(v);                                /* first: it takes the entry's event slot */
    nmi_entry(v);
    if (!v->calib_done)
        calib_begin(v);
    /* Last: after this only the stub's register restore and VMRESUME run. */
    spec_before_entry(v);
}
