/* probe_profile.c - profile-N and tick-N: samples at a fixed period of guest time (the sample
 * and its stack are probe_stack.c's). See probe.h.
 *
 * The period runs on the VMX-preemption timer, which this build reloads from the VMCS at every
 * VM entry (the exit control that saves its value is off): so at each exit of a CPU that
 * profiles, the timer is set to the time left until that CPU's next deadline, and the CPU
 * exits then whatever else it does - idle in HLT included (SDM Vol. 3C 26.5.1, "VMX-Preemption
 * Timer": it counts down in C0-C2). A sample is taken at the first exit at or after the
 * deadline; the next deadline is one period later. */
#include "probe.h"
#include "task.h"
#include "trace.h"
#include "hv_api.h"
#include "hv_guest.h"
#include "hvt_bootinfo.h"

#define PROFILE_MAX  4

struct profile { uint64_t period; uint32_t id; uint8_t kind, armed, action, stack; };
static struct profile profiles[PROFILE_MAX];
unsigned probe_nprofiles;                  /* armed (probe_profile_armed) */
static uint64_t gen;                       /* bumped at every arm/disarm */
static struct spinlock lock;

static struct {
    uint64_t gen, deadline[PROFILE_MAX];
    bool timer_mine;                       /* the preemption timer runs at a profile's pace */
} pcpu[HVT_MAX_CPUS];

int probe_profile_arm(enum probe_kind kind, uint64_t period, uint32_t id, uint32_t flags)
{
    if (period < HVT_PROBE_PERIOD_MIN)
        return PROBE_EINVAL;
    spin_lock(&lock);
    int rc = PROBE_ENOMEM;
    for (unsigned i = 0; i < PROFILE_MAX; i++)
        if (!profiles[i].armed) {
            profiles[i] = (struct profile){ .period = period, .id = id, .kind = (uint8_t)kind, .armed = 1,
                                            .action = !!(flags & HVT_PROBE_F_ACTION),
                                            .stack = !!(flags & HVT_PROBE_F_STACK) };
            probe_nprofiles++;
            __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
            rc = 1;
            break;
        }
    spin_unlock(&lock);
    return rc;
}

void probe_profile_disarm_all(void)
{
    spin_lock(&lock);
    for (unsigned i = 0; i < PROFILE_MAX; i++)
        profiles[i].armed = 0;
    probe_nprofiles = 0;
    __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
    spin_unlock(&lock);
}


void probe_profile_exit(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    uint64_t gnow = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    if (pcpu[cpu].gen == gnow && !pcpu[cpu].timer_mine && !__atomic_load_n(&probe_nprofiles, __ATOMIC_RELAXED))
        return;                            /* the common case: no profile, nothing to undo */
    uint64_t now = hv_rdtsc();
    if (pcpu[cpu].gen != gnow) {           /* profiles armed or disarmed since: start afresh */
        pcpu[cpu].gen = gnow;
        for (unsigned i = 0; i < PROFILE_MAX; i++)
            pcpu[cpu].deadline[i] = now + profiles[i].period;
    }
    if (!__atomic_load_n(&probe_nprofiles, __ATOMIC_RELAXED)) {
        if (pcpu[cpu].timer_mine) {        /* back to the policy's periodic poll */
            hv_set_preemption_timer(TRACE_POLL_TICKS);
            pcpu[cpu].timer_mine = false;
        }
        return;
    }
    uint64_t next = now + TRACE_POLL_TICKS;
    for (unsigned i = 0; i < PROFILE_MAX; i++) {
        const struct profile *p = &profiles[i];
        if (!p->armed || (p->kind == PROBE_TICK && cpu != 0))
            continue;
        if (now >= pcpu[cpu].deadline[i]) {
            uint64_t rip = hv_guest_read(HV_GUEST_RIP);
            bool user = hv_guest_read(HV_GUEST_CS_SEL) & 3;
            /* DTrace's: arg0 = the kernel PC (0 in user mode), arg1 = the user PC (0 in kernel) */
            const uint64_t arg[6] = { user ? 0 : rip, user ? rip : 0, 0, 0, 0, 0 };
            probe_action_fn act = p->action ? probe_action() : NULL;
            if (act) {
                struct probe_who who;
                who.comm = probe_current(cpu, &who.pid, &who.tid);
                who.task = task_current(cpu);
                who.cost = NULL;           /* samples are not timed by phase */
                act(p->id, p->kind, cpu, rip, arg, &who, g);
            }
            if (!act || p->stack)           /* both: the host compares the two paths */
                probe_sample(p->id, p->kind, rip, arg, g);
            pcpu[cpu].deadline[i] += p->period;
            if (pcpu[cpu].deadline[i] <= now)  /* fell behind (a long exit): no burst */
                pcpu[cpu].deadline[i] = now + p->period;
        }
        if (pcpu[cpu].deadline[i] < next)
            next = pcpu[cpu].deadline[i];
    }
    hv_set_preemption_timer(next > now ? next - now : 1);
    pcpu[cpu].timer_mine = true;
}
