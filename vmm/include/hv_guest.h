/*
 * hv_guest.h - what modules may read and control of the current CPU's guest, without touching
 * the VMCS themselves.
 *
 * Contract: every function acts on the calling CPU, in VMX root operation, during a VM exit.
 * The guest's general registers are the struct guest_regs the exit handlers receive; the rest
 * of its state is read through hv_guest_read(). Reads are cheap (one VMREAD: inline, since
 * the single-step path reads several per instruction).
 */
#ifndef HVT_HV_GUEST_H
#define HVT_HV_GUEST_H
#include <stdint.h>
#include <stdbool.h>
#include "gmem.h"
#include "vmx_arch.h"

/* Guest general registers as the exit stub saves them, indexed by the SDM's GPR numbering
 * (SDM 28.2.1, table 28-3: 0 RAX, 1 RCX, 2 RDX, 3 RBX, 4 RSP, 5 RBP, 6 RSI, 7 RDI, 8-15
 * R8-R15). Slot 4 is a placeholder: the guest RSP lives in the VMCS (HV_GUEST_RSP). */
enum gpr { GPR_RAX, GPR_RCX, GPR_RDX, GPR_RBX, GPR_RSP, GPR_RBP, GPR_RSI, GPR_RDI,
           GPR_R8, GPR_R9, GPR_R10, GPR_R11, GPR_R12, GPR_R13, GPR_R14, GPR_R15, GPR_COUNT };
struct guest_regs { uint64_t r[GPR_COUNT]; };

/* VMREAD of the current VMCS (SDM 31.3 "VMREAD"): the one VMX instruction modules reach,
 * through hv_guest_read() and the register contract of the MTF fast path. */
static inline uint64_t hv_vmread(enum vmcs_field f)
{
    uint64_t v;
    __asm__ volatile("vmread %1, %0" : "=r"(v) : "r"((uint64_t)f) : "cc");
    return v;
}

enum hv_guest_reg {
    HV_GUEST_RIP, HV_GUEST_RSP, HV_GUEST_RFLAGS, HV_GUEST_CR0, HV_GUEST_CR3, HV_GUEST_CR4,
    HV_GUEST_EFER, HV_GUEST_GS_BASE, HV_GUEST_FS_BASE, HV_GUEST_IDTR_BASE, HV_GUEST_IDTR_LIMIT,
    HV_GUEST_CS_SEL, HV_GUEST_CS_AR,
    HV_GUEST_CR4_ACTIVE,      /* the CR4 the CPU runs the guest with (HV_GUEST_CR4: the guest's
                                 view, from the read shadow, which only the bits the hypervisor
                                 owns keep up to date) */
    HV_GUEST_ACTIVITY,        /* the activity state (VMX_ACTIVITY_*, SDM 25.4.2) */
    HV_GUEST_REG_COUNT
};

/* Inline: read at every single-step, so no call. */
extern const uint16_t hv_guest_fields[HV_GUEST_REG_COUNT];
static inline uint64_t hv_guest_read(enum hv_guest_reg r) { return hv_vmread(hv_guest_fields[r]); }
/* Write RIP, RSP or RFLAGS (the registers an emulated instruction changes besides the GPRs). */
void     hv_guest_write(enum hv_guest_reg r, uint64_t v);
/* The current exit's information (SDM 28.2.1 "Basic VM-Exit Information", 28.2.2
 * "Information for VM Exits Due to Vectored Events"): qualification, interruption information
 * (vector bits 7:0, type bits 10:8, VMX_INTR_* of vmx_arch.h), instruction length. */
static inline uint64_t hv_exit_qualification(void) { return hv_vmread(VMCS_EXIT_QUALIFICATION); }
static inline uint32_t hv_exit_intr_info(void) { return (uint32_t)hv_vmread(VMCS_EXIT_INTR_INFO); }
static inline uint32_t hv_exit_insn_len(void) { return (uint32_t)hv_vmread(VMCS_EXIT_INSTR_LEN); }
/* Deliver the exception that caused this exit to the guest as the CPU would have (SDM 27.6
 * "Event Injection"): same vector, type and error code; a software exception (INT3, INTO)
 * with its instruction length, so the guest sees RIP after it. */
void     hv_reinject_exception(void);
/* Hold off maskable interrupts for the guest's next instruction (on), or no longer (off): the
 * "blocking by STI" state (SDM 25.4.2 "Guest Non-Register State", table 25-3), set only while
 * RFLAGS.IF = 1 as VM entry requires (SDM 27.3.1.5). For one instruction run under MTF that
 * must not be split by an interrupt. */
void     hv_guest_hold_interrupts(bool on);
/* The guest's paging state, for gmem_walk / gmem_read_gva. */
void     hv_guest_paging(struct gmem_paging *p);
/* Monitor trap flag (SDM 26.5.2): a VM exit after every guest instruction on this CPU. */
void     hv_set_mtf(bool on);
/* HLT exiting (SDM 25.6.2) and external-interrupt exiting (SDM 25.6.1, acknowledge-on-exit
 * stays off: the interrupt remains pending in the local APIC and is delivered at the next VM
 * entry once the control is off again). */
void     hv_set_hlt_exiting(bool on);
void     hv_set_extint_exiting(bool on);
/* The guest's activity state (VMX_ACTIVITY_*, SDM 25.4.2). */
void     hv_set_activity(unsigned state);
/* Advance the guest RIP past the instruction that caused this exit. */
void     hv_skip_insn(void);
/* VMX-preemption timer (SDM 26.5.1): an exit after about 'ticks' TSC ticks; 0 = off. */
void     hv_set_preemption_timer(uint64_t ticks);
/* TSC when the current VM exit entered the hypervisor (taken first thing in the exit stub): at
 * a fixed offset of the per-CPU block %gs points to (vcpu.h asserts it). Inline: every step
 * reads it. */
#define HV_EXIT_TSC_GS_OFFSET 8
static inline uint64_t hv_exit_tsc(void)
{
    uint64_t t;
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(t) : "i"(HV_EXIT_TSC_GS_OFFSET));
    return t;
}
/* TSC when this CPU's previous exit ended (taken last thing in the exit stub before VM entry;
 * not taken for a dilated exit, HV_DILATE_TSC: then an older value, before hv_exit_tsc()). */
uint64_t hv_last_entry_tsc(void);
/* Ticks of a (not dilated) exit that neither hv_exit_tsc() nor that stamp sees - the stub's
 * last instructions, VMRESUME, the VM entry, the next exit's transition and the stub's first
 * instructions - as this CPU measured them at start (vmx_exit.c's calibration burst,
 * dilate_calib.h): a VM exit and entry cost a real processor hundreds of cycles or more. */
uint64_t hv_exit_untimed(void);
static inline int64_t hv_tsc_offset(void) { return (int64_t)hv_vmread(VMCS_TSC_OFFSET); }
/* The guest's TSC when this exit began (SDM 25.6.5: guest TSC = host TSC + offset). */
static inline uint64_t hv_exit_guest_tsc(void) { return hv_exit_tsc() + (uint64_t)hv_tsc_offset(); }
/* Time dilation for this CPU, HV_DILATE_* flags (0 = off):
 *  HV_DILATE_TSC     every VM exit's ticks, measured in the exit stub just before VM entry, are
 *                    subtracted from the TSC offset, so the guest's TSC counts only the guest's
 *                    own time. hv_dilated_offset() predicts the offset the current exit leaves.
 *  HV_DILATE_DISARM  the stub also writes 0 to IA32_TSC_DEADLINE first thing in every exit, so
 *                    the hardware deadline (host time) cannot fire while the hypervisor runs;
 *                    the policy re-arms it before VM entry. */
#define  HV_DILATE_TSC    1u
#define  HV_DILATE_DISARM 2u
void     hv_set_dilation(unsigned flags);
int64_t  hv_dilated_offset(void);
/* MTF fast path on this CPU (hv_exit.h hv_mtf_fast_register): MTF exits jump to the
 * registered handler first while on, with 'ctx' as the FS base. */
void     hv_set_mtf_fast(bool on, void *ctx);
/* RDTSC exiting (SDM 25.6.2; RDTSCP too when the guest may use it): the exits reach the
 * EXIT_RDTSC and EXIT_RDTSCP handlers (hv_exit.h), which must emulate them. For a policy that
 * keeps the guest's time itself. */
void     hv_set_rdtsc_exiting(bool on);
/* Set the TSC offset (SDM 25.6.5: guest TSC = host TSC + offset) from this exit on. */
void     hv_set_tsc_offset(int64_t off);
/* Make CPU 'cpu's next VM exit take the full dispatch (and so every observer), from any CPU. */
void     hv_cpu_kick(unsigned cpu);

#endif
