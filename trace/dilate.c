/* dilate.c - TSC offsetting and TSC-deadline virtualization (see dilate.h). */
#include "dilate.h"
#include "hv_api.h"
#include "hv_core.h"
#include "hv_hooks.h"
#include "hv_guest.h"
#include "cpu.h"

#define MSR_IA32_TSC_DEADLINE 0x6e0

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

void dilate_exit(void)
{
    unsigned c = hv_cpu_id();
    struct dl_cpu *d = &dl[c];
    /* The exit stub disarmed the timer when this exit began (hv_set_dilation). A deadline
     * that was still ahead then is re-armed, moved by this exit's ticks, which the stub is
     * about to take out of the TSC; one already passed has fired in the guest. */
    bool armed = d->host_deadline && hv_exit_tsc() < d->host_deadline;
    uint64_t host = d->guest_deadline - (uint64_t)hv_dilated_offset();
    d->host_deadline = armed ? (host ? host : 1) : 0;
    if (armed)
        cpu_wrmsr(MSR_IA32_TSC_DEADLINE, d->host_deadline);
    dilate_stats[c].exits++;
}
