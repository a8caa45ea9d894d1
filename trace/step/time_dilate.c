/* time_dilate.c - TSC offsetting and TSC-deadline virtualization (see time_dilate.h). */
#include "time_dilate.h"
#include "hv_api.h"
#include "hvt_bootinfo.h"
#include "hv_exit.h"
#include "hv_guest.h"

#define VECTOR_MASK           0xff
/* How soon after an exit began a deadline may have fired without the exit's first TSC read
 * showing it: Bochs raises timers at its time-sync points, which can come after the stub's
 * rdtsc (and after its disarm took the deadline off). Generous: only an IRR read is at stake. */
#define DEADLINE_SYNC_WINDOW  4096

/* vt_base: SOFT mode's guest TSC is vt_base + the instructions this CPU retired since. */
struct dl_cpu { uint64_t guest_deadline, host_deadline, vt_base; enum dilate_mode mode; };
static struct dl_cpu dl[HVT_MAX_CPUS];
uint64_t dilate_soft_deadline[HVT_MAX_CPUS];
struct dilate_stats dilate_stats[HVT_MAX_CPUS];
#define SOFT_NONE (~0ull)

static uint64_t (*retired_now)(unsigned cpu);

static void arm_host(struct dl_cpu *d);

/* The guest wrote its IA32_TSC_ADJUST: its TSC jumped by delta (the offset already holds it).
 * SOFT's clock jumps with it; a deadline armed on the real MSR is re-armed at the new offset, so
 * it still falls due at the guest's TSC value. */
static void dilate_tsc_moved(int64_t delta)
{
    struct dl_cpu *d = &dl[hv_cpu_id()];
    if (d->mode == DILATE_SOFT)
        d->vt_base += (uint64_t)delta;
    else if (d->host_deadline)
        arm_host(d);
}

void dilate_init(uint64_t (*retired)(unsigned cpu))
{
    hv_on_tsc_moved(dilate_tsc_moved);
    retired_now = retired;
    for (unsigned c = 0; c < HVT_MAX_CPUS; c++)
        dilate_soft_deadline[c] = SOFT_NONE;
    hv_msr_register(MSR_IA32_TSC_DEADLINE, true, true, dilate_msr);
    hv_msr_register(MSR_IA32_TSC, true, false, dilate_msr);
}

/* SOFT mode: the guest's TSC counts one tick per instruction this CPU retired (steps), whatever
 * the hypervisor costs: RDTSC, RDTSCP and RDMSR of the TSC exit and read this clock, so the fast
 * path need not touch the TSC offset. Every full exit sets the offset from it first thing, so
 * hv_exit_guest_tsc() is this clock during the exit and the guest resumes from it should the
 * mode change (the stub's dilation then takes the exit's own ticks out, as in HARD mode). */
static uint64_t soft_tsc(unsigned c) { return dl[c].vt_base + retired_now(c); }

void dilate_pre_exit(void)
{
    unsigned c = hv_cpu_id();
    if (dl[c].mode == DILATE_SOFT)
        hv_set_tsc_offset((int64_t)(soft_tsc(c) - hv_exit_tsc()));
}

bool dilate_rdtsc_exit(struct guest_regs *g, bool rdtscp)
{
    uint64_t tsc = hv_exit_guest_tsc();
    g->r[GPR_RAX] = (uint32_t)tsc;
    g->r[GPR_RDX] = tsc >> 32;
    if (rdtscp)
        g->r[GPR_RCX] = (uint32_t)hv_rdmsr(MSR_IA32_TSC_AUX);   /* the guest's: not switched */
    hv_skip_insn();
    return true;
}

uint32_t dilate_fast_left(unsigned cpu, uint32_t max)
{
    if (dl[cpu].mode != DILATE_SOFT)
        return 0;
    uint64_t dl_at = dilate_soft_deadline[cpu], now = hv_exit_guest_tsc();
    if (dl_at == SOFT_NONE)
        return max;
    if (dl_at <= now)
        return 1;
    return dl_at - now < max ? (uint32_t)(dl_at - now) : max;
}

/* Program the real MSR for the guest's deadline at the offset this exit leaves (never 0:
 * that would disarm it; a value in the past fires at once, SDM 11.5.4.1 "TSC-Deadline Mode"). */
static void arm_host(struct dl_cpu *d)
{
    uint64_t host = d->guest_deadline - (uint64_t)hv_dilated_offset();
    d->host_deadline = host ? host : 1;
    hv_wrmsr(MSR_IA32_TSC_DEADLINE, d->host_deadline);
}

static void disarm_host(struct dl_cpu *d)
{
    d->host_deadline = 0;
    hv_wrmsr(MSR_IA32_TSC_DEADLINE, 0);
}

static bool timer_irq_pending(void);

/* HARD mode, the stub having disarmed the real MSR at this exit's start: was the deadline still
 * ahead then? One just ahead of the exit's start may have fired anyway (see
 * DEADLINE_SYNC_WINDOW): re-arming it would request the same interrupt twice (measured: every
 * timer interrupt came in a pair, tick_ratio 2.13). */
static bool hard_pending(struct dl_cpu *d, unsigned c)
{
    bool armed = d->host_deadline && hv_exit_tsc() < d->host_deadline;
    if (armed && d->host_deadline - hv_exit_tsc() < DEADLINE_SYNC_WINDOW && timer_irq_pending()) {
        armed = false;
        dilate_stats[c].fired_in_exit++;
    }
    return armed;
}

bool dilate_msr(uint32_t msr, bool write, uint64_t *val)
{
    if (msr == MSR_IA32_TSC && !write) {
        *val = hv_exit_guest_tsc();
        return true;
    }
    if (msr != MSR_IA32_TSC_DEADLINE)
        return false;
    unsigned c = hv_cpu_id();
    struct dl_cpu *d = &dl[c];
    if (write) {
        d->guest_deadline = *val;
        dilate_stats[c].deadlines++;
        if (d->mode == DILATE_SOFT)
            dilate_soft_deadline[c] = *val ? *val : SOFT_NONE;   /* dilate_exit fires it */
        else if (*val)
            arm_host(d);
        else
            disarm_host(d);
    } else if (d->mode == DILATE_SOFT) {
        *val = dilate_soft_deadline[c] != SOFT_NONE ? d->guest_deadline : 0;
    } else {
        /* Reads as 0 once the deadline has passed (SDM 11.5.4.1). */
        *val = (d->host_deadline && hv_exit_tsc() < d->host_deadline) ? d->guest_deadline : 0;
    }
    return true;
}

void dilate_set(enum dilate_mode m)
{
    unsigned c = hv_cpu_id();
    struct dl_cpu *d = &dl[c];
    if (m == d->mode)
        return;
    bool pending;
    if (d->mode == DILATE_SOFT) {
        pending = dilate_soft_deadline[c] != SOFT_NONE;
    } else if (d->mode == DILATE_HARD) {
        pending = hard_pending(d, c);
    } else {
        /* OFF: the real deadline kept running through this exit. One that is close or past
         * is left to fire on its own (the guest sees it at most a sync window early). */
        pending = d->host_deadline && hv_rdtsc() + DEADLINE_SYNC_WINDOW < d->host_deadline;
        if (!pending)
            d->host_deadline = 0;
    }
    /* SOFT's clock starts where the guest's TSC is now, and hands over to the offset (set at
     * this exit's start by dilate_pre_exit) when SOFT ends. */
    hv_set_rdtsc_exiting(m == DILATE_SOFT);
    if (m == DILATE_SOFT)
        d->vt_base = hv_exit_guest_tsc() - retired_now(c);
    d->mode = m;
    dilate_soft_deadline[c] = SOFT_NONE;
    if (m == DILATE_SOFT) {
        if (pending) {
            dilate_soft_deadline[c] = d->guest_deadline;
            disarm_host(d);
        } else {
            d->host_deadline = 0;
        }
        hv_set_dilation(HV_DILATE_TSC);
        return;
    }
    /* HARD or OFF: the real MSR carries the deadline, at the offset this exit leaves. */
    hv_set_dilation(m == DILATE_HARD ? HV_DILATE_TSC | HV_DILATE_DISARM : 0);
    if (pending)
        arm_host(d);
    else
        d->host_deadline = 0;
}

/* Is the local APIC timer's interrupt pending (requested, not yet delivered)? The guest owns
 * the APIC; the hypervisor only reads it: IRR bit of the LVT timer's vector. */
static bool timer_irq_pending(void)
{
    uint64_t base = hv_rdmsr(MSR_IA32_APIC_BASE);
    uint32_t vec, irr;
    if (base & APIC_BASE_X2APIC) {
        vec = (uint32_t)hv_rdmsr(X2APIC_MSR(APIC_LVT_TIMER)) & VECTOR_MASK;
        irr = (uint32_t)hv_rdmsr(X2APIC_MSR(APIC_IRR + 0x10 * (vec / 32)));
    } else {
        volatile uint32_t *apic = hv_phys_to_virt_uc(base & APIC_BASE_ADDR_MASK);
        vec = apic[APIC_LVT_TIMER / 4] & VECTOR_MASK;
        irr = apic[(APIC_IRR + 0x10 * (vec / 32)) / 4];
    }
    return (irr >> (vec % 32)) & 1;
}

void dilate_exit(void)
{
    unsigned c = hv_cpu_id();
    struct dl_cpu *d = &dl[c];
    dilate_stats[c].exits++;
    if (d->mode == DILATE_SOFT) {
        /* Due at the guest's TSC as this exit found it: raise it now, so the interrupt is
         * recognised before the guest's next instruction. */
        if (dilate_due(c, hv_exit_guest_tsc())) {
            dilate_soft_deadline[c] = SOFT_NONE;
            hv_wrmsr(MSR_IA32_TSC_DEADLINE, 1);
            dilate_stats[c].soft_fired++;
        }
        return;
    }
    if (d->mode != DILATE_HARD)
        return;
    /* The exit stub disarmed the timer when this exit began. A deadline that was still ahead
     * then is re-armed, moved by this exit's ticks, which the stub is about to take out of the
     * TSC; one already passed has fired in the guest. */
    if (hard_pending(d, c))
        arm_host(d);
    else
        d->host_deadline = 0;
}
