/*
 * step_fast.c - the MTF fast path: one single-step of the plain case, called by vmm/'s exit
 * stub straight away (hv_hooks.h hv_mtf_fast), without the full exit dispatch.
 *
 * Under tracing every guest instruction is a VM exit, so this is where hvtrace spends its
 * time. The plain case: the pending instruction retired normally and the next one is known.
 * Every condition that needs more (an event, a task switch, a CR3 or IDT change, a due timer
 * deadline, a cache miss, a full chunk, a periodic full step for polling) returns false
 * before anything is changed, and the full step (step.c) handles the same exit.
 *
 * What it does not need to check, because the full step only sets p_fast when it holds:
 * stepping on, filters and budget off, the pending instruction kept and neither SYSCALL
 * (needs its marker) nor INT n/INT3 (retire by an event).
 */
#include "step_cpu.h"
#include "step.h"
#include "dilate.h"
#include "hv_guest.h"
#include "vmx.h"

/* checkregs=on: compare every register as well and count each step whose decoded write set
 * (x86_wregs.h) missed a change; the record then uses the full compare, so stays exact. */
static uint32_t check_cand(struct trace_cpu *t, const struct rec_enc *e, const uint64_t *gpr,
                           uint32_t cand)
{
    uint32_t missed = 0;
    for (int i = 0; i < HVT_REG_RFLAGS; i++)
        if (gpr[i] != e->regs[i] && !(cand & 1u << i) && i != HVT_REG_RSP)   /* RSP: always */
            missed |= 1u << i;
    if (missed && !e->cand_all && t->wregs_misses++ < 5)
        hv_log("hvtrace: cpu %u: write set missed registers %x at rip %lx (code id %u)\n",
               hv_cpu_id(), missed, t->p_rip, t->p_id);
    return REC_REGS_ALL;
}

bool step_fast(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    struct trace_cpu *t = &step_cpus[cpu];
    /* A stop request reaches this CPU as a kick (hv_cpu_kick): the stub then skips us. */
    if (!t->p_fast || !--t->fast_left)
        return false;
    uint64_t rip = vmx_read(VMCS_GUEST_RIP), cr3 = vmx_read(VMCS_GUEST_CR3);
    /* Same process: the software TLB (stlb) still holds; IDT unchanged: so do the events. */
    if ((cr3 & CR3_PROC_MASK) != t->stlb_cr3 || vmx_read(VMCS_GUEST_IDTR_BASE) != t->idt_base)
        return false;
    /* The guest's timer deadline, checked in software while stepping (dilate.h, SOFT). */
    if (dilate_due(cpu, hv_exit_guest_tsc()))
        return false;
    if (!task_same(cpu))
        return false;
    /* The instruction at RIP: decoded before, not an interrupt or exception handler entry nor
     * an auto-stop address (P_SPECIAL), and its bytes in guest memory still the same
     * (self-modifying code, or another program at this address, misses here). */
    const struct icache_entry *ic = &t->icache[icache_slot(rip)];
    const struct stlb_entry *s = &t->stlb[(rip >> 12) & (STLB_SLOTS - 1)];
    unsigned off = (unsigned)(rip & (STEP_PAGE - 1));
    if (ic->rip != rip || (ic->flags & P_SPECIAL) || s->tag != rip - off || off > STEP_PAGE - 16)
        return false;
    uint64_t lo = *(const uint64_t *)(s->page + off), hi = *(const uint64_t *)(s->page + off + 8);
    if (((lo ^ ic->lo) & ic->mlo) | ((hi ^ ic->hi) & ic->mhi))
        return false;
    struct rec_enc *e = t->enc;
    if (!rec_room(e))
        return false;                       /* the full step sends the chunk */
    /* Commit: the pending instruction's record, then RIP becomes pending. */
    g->r[GPR_RSP] = vmx_read(VMCS_GUEST_RSP);
    uint32_t cand = t->p_cand;
    if (__builtin_expect(t->checkregs, 0))
        cand = check_cand(t, e, g->r, cand);
    (void)rec_insn(e, t->p_rip, t->p_id, t->p_len, t->p_cr3, g->r, vmx_read(VMCS_GUEST_RFLAGS), cand);
    t->recorded++;
    t->steps++;
    t->fast_steps++;
    pending_set(t, ic, rip, cr3);
    t->p_flags = ic->flags;                 /* P_SPECIAL is not set here */
    t->p_fast = !ic->flags;
    return true;
}
