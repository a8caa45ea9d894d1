/* scope.c - what a scoped trace steps (see scope.h). */
#include "scope.h"
#include "probe.h"
#include "kaslr.h"
#include "hv_api.h"
#include "hv_guest.h"
#include "hvt_bootinfo.h"
#include "gmem.h"

#define KERNEL_HALF 0xffff800000000000ull

static struct {
    enum trace_scope kind;
    uint64_t id;
    char comm[TRACE_COMM_MAX];
    bool irq_out;
    uint64_t switch_at;                    /* link-time */
} sc;
static struct spinlock lock;               /* the windows open and the probe's arming */
static unsigned open_windows;
static uint64_t armed_at;                  /* runtime address armed, 0: none */
static uint8_t next_seen[HVT_MAX_CPUS];
static uint64_t fires[HVT_MAX_CPUS];

/* The switch probe fired on this CPU: __switch_to(prev, next) is about to run. */
static void switch_hook(unsigned cpu, const struct guest_regs *g)
{
    if (cpu >= HVT_MAX_CPUS || sc.kind == TRACE_SCOPE_ALL)
        return;
    fires[cpu]++;
    next_seen[cpu] = scope_task_wants(g->r[GPR_RSI]) ? SCOPE_NEXT_WANTED : SCOPE_NEXT_OTHER;
}

void scope_configure(const struct trace_opts *o)
{
    sc.kind = o->scope;
    sc.id = o->scope_id;
    __builtin_memcpy(sc.comm, o->scope_comm, TRACE_COMM_MAX);
    sc.irq_out = o->irq_out;
    sc.switch_at = o->switch_at;
    probe_set_switch_hook(switch_hook);
}

bool scope_on(void) { return sc.kind != TRACE_SCOPE_ALL; }
bool scope_irq_out(void) { return sc.irq_out; }

bool scope_wants(const struct task_info *ti)
{
    switch (sc.kind) {
    case TRACE_SCOPE_PID:
        return ti->tgid == sc.id;
    case TRACE_SCOPE_TID:
        return ti->pid == sc.id;
    case TRACE_SCOPE_COMM:
        for (unsigned i = 0; i < TRACE_COMM_MAX - 1; i++) {
            if (ti->comm[i] != sc.comm[i])
                return false;
            if (!sc.comm[i])
                return true;
        }
        return true;
    default:
        return true;
    }
}

bool scope_task_wants(uint64_t task)
{
    struct task_info ti;
    return task >= KERNEL_HALF && task_read(task, &ti) && scope_wants(&ti);
}

/* The first window arms the switch probe (at __switch_to, slid), the last one disarms it. */
void scope_window_open(void)
{
    if (!scope_on())
        return;
    spin_lock(&lock);
    if (open_windows++ == 0 && !armed_at) {
        uint64_t va = sc.switch_at + kaslr_slide();
        int rc = probe_arm(PROBE_ENTRY, va, va + 1, SCOPE_PROBE_ID, PROBE_F_SWITCH_HOOK);
        if (rc > 0)
            armed_at = va;
        else
            hv_log("hvtrace: scope: the switch probe at %lx could not be armed (%d): only CPUs "
                   "running the wanted task at the start are stepped\n", va, rc);
    }
    spin_unlock(&lock);
}

void scope_window_close(void)
{
    if (!scope_on())
        return;
    spin_lock(&lock);
    if (open_windows && --open_windows == 0 && armed_at) {
        probe_disarm_range(armed_at, armed_at + 1);
        armed_at = 0;
    }
    spin_unlock(&lock);
}

unsigned scope_next_take(unsigned cpu)
{
    unsigned v = next_seen[cpu];
    next_seen[cpu] = SCOPE_NEXT_NONE;
    return v;
}

uint64_t scope_fires(unsigned cpu) { return fires[cpu]; }

/* The 64-bit interrupt frame (SDM Vol. 3A 6.14.2 "64-Bit Mode Stack Frame"): RIP, CS, RFLAGS,
 * RSP, SS at the new RSP - or one slot up where the handler's first instruction already ran
 * and pushed (Bochs takes the MTF exit after it; Linux's IRQ stubs begin with a push). */
bool scope_irq_frame(uint64_t rsp, uint64_t ret_rip, uint64_t *ret_rsp)
{
    struct gmem_paging pg;
    uint64_t f[6];
    hv_guest_paging(&pg);
    if (gmem_read_gva(&pg, rsp, f, sizeof f) != sizeof f)
        return false;
    for (unsigned o = 0; o < 2; o++)
        if (f[o] == ret_rip && f[o + 1] < 0x10000) {    /* RIP, then a selector */
            *ret_rsp = f[o + 3];
            return true;
        }
    return false;
}
