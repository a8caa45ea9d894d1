/* probe_stack.c - what a firing leaves when no D action takes it: a sample with the CPU's
 * stack (HVT_PROBE_F_STACK, and every profile-N/tick-N sample), collected per CPU and sent in
 * blocks like the firing records; and the hook through which a D action takes firings
 * instead (probe_set_action). See probe.h. */
#include "probe.h"
#include "task.h"
#include "trace.h"
#include "hv_api.h"
#include "hv_guest.h"
#include "gmem.h"
#include "hvt_stream.h"
#include "hvt_bootinfo.h"

#define SAMPLE_BUF   (64u << 10)           /* a CPU's samples before a block (7+ samples) */
/* x86-64 kernel stacks (THREAD_SIZE without KASAN) are 16 KiB and aligned to their size, so
 * the top of the stack a kernel RSP is on is the next 16 KiB boundary. */
#define KSTACK_SIZE  (16u << 10)
#define ALIGN8(x)    (((x) + 7u) & ~7u)

static struct {
    uint8_t *buf;
    size_t len;
    unsigned count;
    uint64_t first_tsc;
} pcpu[HVT_MAX_CPUS];

static uint64_t samples, samples_lost;

probe_action_fn probe_action_cur;
void probe_set_action(probe_action_fn fn) { __atomic_store_n(&probe_action_cur, fn, __ATOMIC_RELEASE); }
bool probe_action_need_args = true;
void probe_set_action_args(bool need)
{
    __atomic_store_n(&probe_action_need_args, need, __ATOMIC_RELEASE);
}

int probe_stack_init(void)
{
    for (unsigned c = 0; c < hv_cpu_count(); c++)
        if (!(pcpu[c].buf = hv_alloc_pages(HV_PAGES(SAMPLE_BUF))))
            return -1;
    return 0;
}

void probe_stack_counters(uint64_t *made, uint64_t *lost)
{
    *made = __atomic_load_n(&samples, __ATOMIC_RELAXED);
    *lost = __atomic_load_n(&samples_lost, __ATOMIC_RELAXED);
}

void probe_stack_flush(unsigned cpu)
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

bool probe_stack_pending(unsigned cpu, uint64_t now, uint64_t age)
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
        probe_stack_flush(cpu);
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
