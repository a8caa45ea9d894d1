/* dilate.c - TSC offsetting and TSC-deadline virtualization (see dilate.h). */
#include "dilate.h"
#include "hv_api.h"
#include "hv_core.h"
#include "hv_hooks.h"
#include "hv_guest.h"
#include "cpu.h"

#define MSR_IA32_TSC_DEADLINE 0x6e0
#define MSR_IA32_APIC_BASE    0x1b
#define APIC_BASE_X2APIC      (1ull << 10)       /* SDM 10.12.1 */
#define APIC_BASE_ADDR_MASK   0x000ffffffffff000ull
#define APIC_LVT_TIMER        0x320              /* xAPIC register offsets (SDM Table 10-1) */
#define APIC_IRR              0x200
#define X2APIC_MSR(off)       (0x800 + ((off) >> 4))   /* SDM 10.12.1.2 */
#define VECTOR_MASK           0xff
/* How soon after an exit began a deadline may have fired without the exit's first TSC read
 * showing it: Bochs raises timers at its time-sync points, which can come after the stub's
 * rdtsc (and after its disarm took the deadline off). Generous: only an IRR read is at stake. */
#define DEADLINE_SYNC_WINDOW  4096

struct dl_cpu { uint64_t guest_deadline, host_deadline; };
static struct dl_cpu dl[HVT_MAX_CPUS];
struct dilate_stats dilate_stats[HVT_MAX_CPUS];

void dilate_init(void)
{
    hv_msr_intercept(MSR_IA32_TSC_DEADLINE, true, true);
}

static void program(struct dl_cpu *d)
{
    if (!d->guest_deadline) {
        d->host_deadline = 0;
        cpu_wrmsr(MSR_IA32_TSC_DEADLINE, 0);
        return;
    }
    /* guest TSC = host TSC + offset  =>  host deadline = guest deadline - offset */
    uint64_t host = d->guest_deadline - (uint64_t)hv_dilated_offset();
    d->host_deadline = host ? host : 1;
    cpu_wrmsr(MSR_IA32_TSC_DEADLINE, d->host_deadline);
}

bool dilate_msr(uint32_t msr, bool write, uint64_t *val)
{
    if (msr != MSR_IA32_TSC_DEADLINE)
        return false;
    unsigned c = hv_cpu_id();
    struct dl_cpu *d = &dl[c];
    if (write) {
        d->guest_deadline = *val;
        dilate_stats[c].deadlines++;
        program(d);
    } else {
        /* Reads as 0 once the deadline has passed (SDM 10.5.4.1). */
        *val = (d->host_deadline && hv_exit_tsc() < d->host_deadline) ? d->guest_deadline : 0;
    }
    return true;
}

void dilate_set(bool on) { hv_set_dilation(on); }

/* Is the local APIC timer's interrupt pending (requested, not yet delivered)? The guest owns
 * the APIC; the hypervisor only reads it: IRR bit of the LVT timer's vector. */
static bool timer_irq_pending(void)
{
    uint64_t base = cpu_rdmsr(MSR_IA32_APIC_BASE);
    uint32_t vec, irr;
    if (base & APIC_BASE_X2APIC) {
        vec = (uint32_t)cpu_rdmsr(X2APIC_MSR(APIC_LVT_TIMER)) & VECTOR_MASK;
        irr = (uint32_t)cpu_rdmsr(X2APIC_MSR(APIC_IRR + 0x10 * (vec / 32)));
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
    /* The exit stub disarmed the timer when this exit began (hv_set_dilation). A deadline
     * that was still ahead then is re-armed, moved by this exit's ticks, which the stub is
     * about to take out of the TSC; one already passed has fired in the guest. */
    bool armed = d->host_deadline && hv_exit_tsc() < d->host_deadline;
    /* A deadline just ahead of the exit's start may have fired anyway (see
     * DEADLINE_SYNC_WINDOW): re-arming it then requests the same interrupt twice (measured:
     * every timer interrupt came in a pair, tick_ratio 2.13). */
    if (armed && d->host_deadline - hv_exit_tsc() < DEADLINE_SYNC_WINDOW && timer_irq_pending()) {
        armed = false;
        dilate_stats[c].fired_in_exit++;
    }
    uint64_t host = d->guest_deadline - (uint64_t)hv_dilated_offset();
    d->host_deadline = armed ? (host ? host : 1) : 0;
    if (armed)
        cpu_wrmsr(MSR_IA32_TSC_DEADLINE, d->host_deadline);
    dilate_stats[c].exits++;
}
