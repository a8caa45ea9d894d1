/* hv_guest.c - guest state accessors and per-CPU control knobs for policy modules. */
#include "hv_guest.h"
#include "hv_core.h"
#include "vmx.h"
#include "cpu.h"
#include "vmx_exit.h"
#include "vcpu.h"
#include "pending_dbg.h"
#include "exit_reg.h"

const uint16_t hv_guest_fields[HV_GUEST_REG_COUNT] = {
    [HV_GUEST_RIP] = VMCS_GUEST_RIP, [HV_GUEST_RSP] = VMCS_GUEST_RSP,
    [HV_GUEST_RFLAGS] = VMCS_GUEST_RFLAGS, [HV_GUEST_CR0] = VMCS_CR0_READ_SHADOW,
    [HV_GUEST_CR3] = VMCS_GUEST_CR3, [HV_GUEST_CR4] = VMCS_CR4_READ_SHADOW,
    [HV_GUEST_EFER] = VMCS_GUEST_EFER, [HV_GUEST_GS_BASE] = VMCS_GUEST_GS_BASE,
    [HV_GUEST_FS_BASE] = VMCS_GUEST_FS_BASE, [HV_GUEST_IDTR_BASE] = VMCS_GUEST_IDTR_BASE,
    [HV_GUEST_IDTR_LIMIT] = VMCS_GUEST_IDTR_LIMIT, [HV_GUEST_CS_SEL] = VMCS_GUEST_CS_SEL,
    [HV_GUEST_CS_AR] = VMCS_GUEST_CS_AR, [HV_GUEST_CR4_ACTIVE] = VMCS_GUEST_CR4,
    [HV_GUEST_ACTIVITY] = VMCS_GUEST_ACTIVITY_STATE,
};


void hv_guest_write(enum hv_guest_reg r, uint64_t v)
{
    if (r == HV_GUEST_RIP || r == HV_GUEST_RSP || r == HV_GUEST_RFLAGS)
        vmx_write(hv_guest_fields[r], v);
}

void hv_guest_hold_interrupts(bool on)
{
    uint64_t intr = vmx_read(VMCS_GUEST_INTERRUPTIBILITY);
    uint64_t rflags = vmx_read(VMCS_GUEST_RFLAGS);
    if (on && (rflags & RFLAGS_IF)) {
        intr |= VMX_INTR_BLOCK_STI;
        /* The shadow makes the entry check the single-step bit (pending_dbg.h). */
        vmx_write(VMCS_GUEST_PENDING_DBG, pending_dbg_in_shadow(vmx_read(VMCS_GUEST_PENDING_DBG),
                                                                rflags, vmx_read(VMCS_GUEST_DEBUGCTL)));
    } else if (!on) {
        intr &= ~(uint64_t)VMX_INTR_BLOCK_STI;
    }
    vmx_write(VMCS_GUEST_INTERRUPTIBILITY, intr);
}

void hv_reinject_exception(void)
{
    uint32_t info = (uint32_t)vmx_read(VMCS_EXIT_INTR_INFO);
    uint32_t type = info & VMX_INTR_TYPE_MASK;
    /* Bits 30:12 of the exit's information are not the entry field's (SDM 25.9.2, 25.8.3). */
    uint32_t entry = info & (VMX_INTR_INFO_VALID | VMX_INTR_INFO_ERRCODE | VMX_INTR_TYPE_MASK | VMX_INTR_VECTOR_MASK);
    if (info & VMX_INTR_INFO_ERRCODE)
        vmx_write(VMCS_ENTRY_EXCEPTION_ERRCODE, vmx_read(VMCS_EXIT_INTR_ERRCODE));
    if (type == VMX_INTR_TYPE_SW_EXC || type == VMX_INTR_TYPE_SW_INT || type == VMX_INTR_TYPE_PRIV_SW_EXC)
        vmx_write(VMCS_ENTRY_INSTR_LEN, vmx_read(VMCS_EXIT_INSTR_LEN));
    vmx_write(VMCS_ENTRY_INTR_INFO, entry);
}

void hv_guest_paging(struct gmem_paging *p)
{
    p->cr0 = vmx_read(VMCS_GUEST_CR0);
    p->cr3 = vmx_read(VMCS_GUEST_CR3);
    p->cr4 = vmx_read(VMCS_GUEST_CR4);
    p->efer = vmx_read(VMCS_GUEST_EFER);
}

void vcpu_set_proc_bits(uint32_t bits, bool on)
{
    uint32_t v = (uint32_t)vmx_read(VMCS_PROC_CONTROLS);
    vmx_write(VMCS_PROC_CONTROLS, on ? (v | bits) : (v & ~bits));
}

/* The monitor trap flag is on while the policy or a pending NMI (nmi_decide.h) wants it. */
void vcpu_sync_mtf(struct vcpu *v) { vcpu_set_proc_bits(PROC_MTF, v->policy_mtf || v->nmi_mtf || v->mc_mtf); }

void hv_set_mtf(bool on)
{
    struct vcpu *v = vcpu_current();
    v->policy_mtf = on;
    vcpu_sync_mtf(v);
}

void hv_set_hlt_exiting(bool on) { vcpu_set_proc_bits(PROC_HLT_EXITING, on); }

void hv_set_extint_exiting(bool on)
{
    uint32_t pin = (uint32_t)vmx_read(VMCS_PIN_CONTROLS);
    vmx_write(VMCS_PIN_CONTROLS, on ? (pin | PIN_EXTINT_EXITING) : (pin & ~PIN_EXTINT_EXITING));
}

void hv_set_activity(unsigned state) { vmx_write(VMCS_GUEST_ACTIVITY_STATE, state); }

void hv_skip_insn(void) { vmx_skip_instruction(); }

void hv_set_preemption_timer(uint64_t ticks)
{
    uint32_t pin = (uint32_t)vmx_read(VMCS_PIN_CONTROLS);
    if (!ticks) {
        vmx_write(VMCS_PIN_CONTROLS, pin & ~PIN_PREEMPTION_TIMER);
        return;
    }
    /* The timer counts down at TSC >> IA32_VMX_MISC[4:0] (SDM A.6; read once at start). */
    uint64_t v = ticks >> hv.preempt_shift;
    vmx_write(VMCS_PREEMPTION_TIMER, v > 0xffffffffu ? 0xffffffffu : (v ? v : 1));
    vmx_write(VMCS_PIN_CONTROLS, pin | PIN_PREEMPTION_TIMER);
}

void hv_set_dilation(unsigned flags) { vcpu_current()->dilate = (uint8_t)flags; }

void hv_set_mtf_fast(bool on, void *ctx)
{
    struct vcpu *v = vcpu_current();
    /* The context the handler finds as its FS base from the next exit on (the hypervisor
     * uses FS for nothing else: its C code is built without TLS or stack protector). */
    vmx_write(VMCS_HOST_FS_BASE, (uint64_t)ctx);
    /* The fast path (the policy's assembly) does none of spec_ctrl.h's per-exit work: where the
     * CPU needs any, every exit takes the full dispatch. */
    v->fast_mtf = on && hv_mtf_fast && !hv.spec_per_exit;
}

void hv_set_rdtsc_exiting(bool on) { vcpu_set_proc_bits(PROC_RDTSC_EXITING, on); }

void hv_set_tsc_offset(int64_t off) { vmx_write(VMCS_TSC_OFFSET, (uint64_t)off); }

uint64_t hv_last_entry_tsc(void) { return vcpu_current()->entry_tsc; }

uint64_t hv_exit_untimed(void) { return __atomic_load_n(&vcpu_current()->exit_untimed, __ATOMIC_RELAXED); }

void hv_cpu_kick(unsigned cpu) { vcpu_get(cpu)->fast_block = 1; }

/* What the offset will be when the stub is done with this exit, erring low (see
 * VCPU_DILATE_TAIL_MAX): an error here only moves a timer deadline by as much, never the TSC. */
int64_t hv_dilated_offset(void)
{
    struct vcpu *v = vcpu_current();
    int64_t off = (int64_t)vmx_read(VMCS_TSC_OFFSET);
    return (v->dilate & HV_DILATE_TSC) ? off - (int64_t)(hv_rdtsc() - v->exit_tsc) - (int64_t)v->dilate_fixed - VCPU_DILATE_TAIL_MAX
                     : off;
}

