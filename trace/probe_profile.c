/* probe_profile.c - profile-N and tick-N (samples at a fixed period of guest time) and the
 * stack a sample carries. See probe.h.
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
#include "gmem.h"
#include "hvt_stream.h"
#include "hvt_bootinfo.h"

#define PROFILE_MAX  4
#define SAMPLE_BUF   (64u << 10)           /* a CPU's samples before a block (7+ samples) */
/* x86-64 kernel stacks (THREAD_SIZE without KASAN) are 16 KiB and aligned to their size, so
 * the top of the stack a kernel RSP is on is the next 16 KiB boundary. */
#define KSTACK_SIZE  (16u << 10)
#define ALIGN8(x)    (((x) + 7u) & ~7u)

struct profile { uint64_t period; uint32_t id; uint8_t kind, armed, action; };
static struct profile profiles[PROFILE_MAX];
static unsigned nprofiles;                 /* armed */
static uint64_t gen;                       /* bumped at every arm/disarm */
static struct spinlock lock;

static struct {
    uint64_t gen, deadline[PROFILE_MAX];
    bool timer_mine;                       /* the preemption timer runs at a profile's pace */
    uint8_t *buf;
    size_t len;
    unsigned count;
    uint64_t first_tsc;
} pcpu[HVT_MAX_CPUS];

static uint64_t samples, samples_lost;

int probe_profile_init(void)
{
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        if (!(pcpu[c].buf = hv_alloc_pages(HV_PAGES(SAMPLE_BUF))))
            return -1;
    return 0;
}

int probe_profile_arm(enum probe_kind kind, uint64_t period, uint32_t id, uint32_t flags)
{
    if (period < HVT_PROBE_PERIOD_MIN)
        return PROBE_EINVAL;
    spin_lock(&lock);
    int rc = PROBE_ENOMEM;
    for (unsigned i = 0; i < PROFILE_MAX; i++)
        if (!profiles[i].armed) {
            profiles[i] = (struct profile){ .period = period, .id = id, .kind = (uint8_t)kind, .armed = 1,
                                            .action = !!(flags & HVT_PROBE_F_ACTION) };
            nprofiles++;
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
    nprofiles = 0;
    __atomic_add_fetch(&gen, 1, __ATOMIC_RELEASE);
    spin_unlock(&lock);
}

unsigned probe_profile_armed(void) { return __atomic_load_n(&nprofiles, __ATOMIC_RELAXED); }

void probe_profile_counters(uint64_t *made, uint64_t *lost)
{
    *made = __atomic_load_n(&samples, __ATOMIC_RELAXED);
    *lost = __atomic_load_n(&samples_lost, __ATOMIC_RELAXED);
}

void probe_profile_flush(unsigned cpu)
{
    if (!pcpu[cpu].count)
        return;
    enum trace_sink_sent s = trace_sink_message(cpu, HVT_MSG_PROBE_STACK, pcpu[cpu].buf, pcpu[cpu].len);
    if (s == TRACE_SINK_DROPPED) {
        __atomic_add_fetch(&samples_lost, pcpu[cpu].count, __ATOMIC_RELAXED);
    } else if (s == TRACE_SINK_NO_STREAM) {
        char head[64];
        hv_snprintf(head, sizeof head, HVT_STACKB_TAG "%u %u %lu\n", cpu, pcpu[cpu].count,
                    (uint64_t)pcpu[cpu].len);
        trace_sink_debug_blob(head, pcpu[cpu].buf, pcpu[cpu].len);
    }
    pcpu[cpu].len = 0;
    pcpu[cpu].count = 0;
}

bool probe_profile_pending(unsigned cpu, uint64_t now, uint64_t age)
{
    return pcpu[cpu].count && now - pcpu[cpu].first_tsc >= age;
}

void probe_sample(uint32_t id, unsigned kind, uint64_t pc, const uint64_t *arg,
                  const struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    struct hvt_probe_sample s = { 0 };
    s.rsp = hv_guest_read(HV_GUEST_RSP);
    s.rbp = g->r[GPR_RBP];
    s.rdi = g->r[GPR_RDI];
    s.rdx = g->r[GPR_RDX];
    s.r10 = g->r[GPR_R10];
    s.r13 = g->r[GPR_R13];
    s.cs = (uint16_t)hv_guest_read(HV_GUEST_CS_SEL);
    struct gmem_paging pg;
    size_t want;
    if ((s.cs & 3) == 0) {
        probe_kernel_paging(&pg);
        uint64_t top = (s.rsp & ~(uint64_t)(KSTACK_SIZE - 1)) + KSTACK_SIZE;
        want = top - s.rsp < HVT_PROBE_STACK_MAX ? top - s.rsp : HVT_PROBE_STACK_MAX;
    } else {
        hv_guest_paging(&pg);
        want = HVT_PROBE_USTACK_MAX;
    }
    if (pcpu[cpu].len + sizeof s + ALIGN8(want) > SAMPLE_BUF)
        probe_profile_flush(cpu);
    if (!pcpu[cpu].count)
        pcpu[cpu].first_tsc = hv_rdtsc();
    uint8_t *at = pcpu[cpu].buf + pcpu[cpu].len;
    size_t got = gmem_read_gva(&pg, s.rsp, at + sizeof s, want);   /* stops at a hole */
    s.stack_len = (uint32_t)got;
    struct hvt_probe_fire *f = &s.fire;
    f->id = id;
    f->cpu = (uint16_t)cpu;
    f->kind = (uint16_t)kind;
    f->tsc = hv_exit_guest_tsc();
    f->pc = pc;
    const char *comm = probe_current(cpu, &f->pid, &f->tid);
    for (unsigned i = 0; i < HVT_PROBE_COMM_LEN && comm[i]; i++)
        f->comm[i] = comm[i];
    for (unsigned i = 0; i < 6; i++)
        f->arg[i] = arg[i];
    __builtin_memcpy(at, &s, sizeof s);
    for (size_t i = got; i < ALIGN8(got); i++)
        at[sizeof s + i] = 0;
    pcpu[cpu].len += sizeof s + ALIGN8(got);
    pcpu[cpu].count++;
    __atomic_add_fetch(&samples, 1, __ATOMIC_RELAXED);
}

void probe_profile_exit(struct guest_regs *g)
{
    unsigned cpu = hv_cpu_id();
    uint64_t gnow = __atomic_load_n(&gen, __ATOMIC_ACQUIRE);
    if (pcpu[cpu].gen == gnow && !pcpu[cpu].timer_mine && !__atomic_load_n(&nprofiles, __ATOMIC_RELAXED))
        return;                            /* the common case: no profile, nothing to undo */
    uint64_t now = hv_rdtsc();
    if (pcpu[cpu].gen != gnow) {           /* profiles armed or disarmed since: start afresh */
        pcpu[cpu].gen = gnow;
        for (unsigned i = 0; i < PROFILE_MAX; i++)
            pcpu[cpu].deadline[i] = now + profiles[i].period;
    }
    if (!__atomic_load_n(&nprofiles, __ATOMIC_RELAXED)) {
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
                act(p->id, p->kind, cpu, rip, arg, &who, g);
            }
            else
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
