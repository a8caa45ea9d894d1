/*
 * hv_guest.h - what policy modules may read and control of the current CPU's guest, without
 * touching the VMCS themselves. All functions act on the calling CPU, in VMX root operation.
 */
#ifndef HVT_HV_GUEST_H
#define HVT_HV_GUEST_H
#include <stdint.h>
#include <stdbool.h>
#include "gmem.h"
#include "vmx.h"

enum hv_guest_reg {
    HV_GUEST_RIP, HV_GUEST_RSP, HV_GUEST_RFLAGS, HV_GUEST_CR0, HV_GUEST_CR3, HV_GUEST_CR4,
    HV_GUEST_EFER, HV_GUEST_GS_BASE, HV_GUEST_FS_BASE, HV_GUEST_IDTR_BASE, HV_GUEST_IDTR_LIMIT,
    HV_GUEST_CS_SEL, HV_GUEST_CS_AR, HV_GUEST_REG_COUNT
};

/* Inline: read at every single-step, so no call. */
extern const uint16_t hv_guest_fields[HV_GUEST_REG_COUNT];
static inline uint64_t hv_guest_read(enum hv_guest_reg r) { return vmx_read(hv_guest_fields[r]); }
/* The guest's paging state, for gmem_walk / gmem_read_gva. */
void     hv_guest_paging(struct gmem_paging *p);
/* Monitor trap flag (SDM 26.5.2): a VM exit after every guest instruction on this CPU. */
void     hv_set_mtf(bool on);
/* Exits on INVLPG/INVPCID and CR3 loads, so a policy can keep its own caches of guest
 * translations coherent (it must then call hv_complete_cr3_load/hv_skip_insn itself). */
void     hv_set_translation_exits(bool on);
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
 * offset 8 of the per-CPU block %gs points to (vcpu.h asserts it). Inline: every step reads it. */
static inline uint64_t hv_exit_tsc(void)
{
    uint64_t t;
    __asm__ volatile("movq %%gs:8, %0" : "=r"(t));
    return t;
}
static inline int64_t hv_tsc_offset(void) { return (int64_t)vmx_read(VMCS_TSC_OFFSET); }
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
/* MTF fast path on this CPU (hv_hooks.h hv_mtf_fast): MTF exits jump to the registered
 * handler first while on, with 'ctx' in RCX. */
void     hv_set_mtf_fast(bool on, void *ctx);
/* RDTSC exiting (SDM 25.6.2; RDTSCP too when the guest may use it): the exits reach
 * hv_hooks.other_exit (EXIT_RDTSC, EXIT_RDTSCP), which must emulate them. For a policy that
 * keeps the guest's time itself. */
void     hv_set_rdtsc_exiting(bool on);
/* Set the TSC offset (SDM 25.6.5: guest TSC = host TSC + offset) from this exit on. */
void     hv_set_tsc_offset(int64_t off);
/* Make CPU 'cpu's next VM exit take the full dispatch (and so every hook), from any CPU. */
void     hv_cpu_kick(unsigned cpu);
/* Invisible execute breakpoints (SDM 29.3.3.2): forbid or allow guest instruction fetches from
 * the 4 KiB guest-physical page holding gpa. A forbidden fetch is an EPT violation that reaches
 * hv_hooks.ept_violation (qualification bit EPT_QUAL_EXEC). Guest RAM only; returns -1 else.
 * The calling CPU flushes its EPT TLB at once, the others at their next VM exit (a policy
 * that needs it sooner keeps a periodic exit, e.g. the preemption timer). Reads and writes of
 * the page are unaffected: the guest cannot see the breakpoint. */
int      hv_ept_set_exec(uint64_t gpa, bool exec);
#define  EPT_QUAL_EXEC (1ull << 2)   /* SDM Table 28-7: the access was an instruction fetch */

#endif
