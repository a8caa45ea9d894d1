/* scope.c - what a scoped trace steps (see scope.h). */
#include "scope.h"
#include "kaslr.h"
#include "hv_api.h"
#include "hv_guest.h"
#include "hvt_bootinfo.h"
#include "gmem.h"

#define KERNEL_HALF 0xffff800000000000ull

enum trace_scope scope_kind;
static struct {
    enum trace_scope kind, boot_kind;      /* this window's, and the configuration's */
    uint64_t id, boot_id;
    char comm[TRACE_COMM_MAX];
    bool irq_out;
    uint64_t switch_at;                    /* link-time */
} sc;
static struct spinlock lock;               /* the windows open, the probe's arming, the threads */
static struct scope_threads thr;           /* step()'s threads (thr_on: this window's scope) */
static bool thr_on;
static unsigned open_windows;
static uint64_t armed_at;                  /* runtime address armed, 0: none */
static unsigned armed_gen;                 /* the engine's disarm-all count when it was armed */
static uint8_t next_seen[HVT_MAX_CPUS];
static struct scope_probe_ops pops;
static uint64_t fires[HVT_MAX_CPUS];

/* The switch probe fired on this CPU: __switch_to(prev, next) is about to run. */
void scope_switch_hook(unsigned cpu, const struct guest_regs *g)
{
    if (cpu >= HVT_MAX_CPUS || !scope_on())
        return;
    fires[cpu]++;
    next_seen[cpu] = scope_task_wants(g->r[GPR_RSI]) ? SCOPE_NEXT_WANTED : SCOPE_NEXT_OTHER;
}

void scope_configure(const struct trace_opts *o)
{
    spin_lock(&lock);
    sc.boot_kind = o->scope;
    sc.boot_id = o->scope_id;
    if (!thr_on) {                          /* (a step() asked for a window that has not begun) */
        sc.kind = scope_kind = o->scope;
        sc.id = o->scope_id;
    }
    spin_unlock(&lock);
    __builtin_memcpy(sc.comm, o->scope_comm, TRACE_COMM_MAX);
    sc.irq_out = o->irq_out;
    sc.switch_at = o->switch_at;
}

void scope_set_probe_ops(const struct scope_probe_ops *ops) { pops = *ops; }

bool scope_irq_out(void) { return sc.irq_out; }

bool scope_wants(const struct task_info *ti)
{
    switch (sc.kind) {
    case TRACE_SCOPE_PID:
        return ti->tgid == sc.id;
    case TRACE_SCOPE_TID:
        return thr_on ? scope_threads_live(&thr, ti->pid) : ti->pid == sc.id;
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

/* The switch probe at __switch_to (slid): armed once the kernel's slide is known (a window
 * may open before that: start=boot), by the first window or, later, scope_poll. Under lock. */
static bool arm_failed;
static void arm_locked(void)
{
    if (armed_at || arm_failed || !pops.arm || !kaslr_known() || !sc.switch_at)
        return;                             /* (no switch_at=: a window runs on the CPUs that
                                               run the wanted task when they exit) */
    uint64_t va = sc.switch_at + kaslr_slide();
    unsigned gen = pops.disarm_all_count ? pops.disarm_all_count() : 0;
    int rc = pops.arm(va, SCOPE_PROBE_ID);
    if (rc > 0) {
        armed_at = va;
        armed_gen = gen;
        return;
    }
    arm_failed = true;                     /* said once: the next window tries again */
    hv_log("hvtrace: scope: the switch probe at %lx could not be armed (%d): a CPU starts "
           "stepping the wanted task only at its next other exit\n", va, rc);
}

void scope_window_open(void)
{
    if (!scope_on())
        return;
    spin_lock(&lock);
    if (open_windows++ == 0)
        arm_failed = false;
    arm_locked();
    spin_unlock(&lock);
}

/* A disarm of every probe (a D program's unload) took the switch probe with the rest. */
static bool lost(void)
{
    return pops.disarm_all_count && __atomic_load_n(&armed_at, __ATOMIC_RELAXED) &&
           pops.disarm_all_count() != __atomic_load_n(&armed_gen, __ATOMIC_RELAXED);
}

void scope_poll(void)
{
    if ((__atomic_load_n(&armed_at, __ATOMIC_RELAXED) && !lost()) || arm_failed || !kaslr_known())
        return;
    spin_lock(&lock);
    if (lost()) {
        armed_at = 0;                       /* re-armed below */
        hv_log("hvtrace: scope: the switch probe was disarmed with every probe: armed again\n");
    }
    if (open_windows)
        arm_locked();
    spin_unlock(&lock);
}

void scope_window_close(void)
{
    if (!scope_on())
        return;
    spin_lock(&lock);
    if (open_windows && --open_windows == 0) {
        if (armed_at && pops.disarm)
            pops.disarm(armed_at);
        armed_at = 0;
        /* A step() window's threads end - but one that joined while the window closed is the
         * next window's (asked for already): it keeps the thread scope. */
        if (!thr_on || !scope_threads_sweep(&thr)) {
            thr_on = false;
            sc.kind = scope_kind = sc.boot_kind;
            sc.id = sc.boot_id;
        }
    }
    spin_unlock(&lock);
}

int scope_begin_thread(uint32_t tid, uint64_t end_rip, uint64_t end_rsp, bool window_wanted)
{
    spin_lock(&lock);
    int r = SCOPE_BEGIN_OTHER;
    if (!thr_on && !open_windows && !window_wanted) {
        thr_on = true;                      /* no window: this one is step()'s */
        sc.kind = scope_kind = TRACE_SCOPE_TID;
    }
    if (thr_on)
        switch (scope_threads_add(&thr, tid, end_rip, end_rsp)) {
        case SCOPE_ADD_NEW: r = SCOPE_BEGIN_ADDED; break;
        case SCOPE_ADD_LIVE: r = SCOPE_BEGIN_LIVE; break;
        default: r = SCOPE_BEGIN_FULL; break;
        }
    spin_unlock(&lock);
    return r;
}

int scope_thread_end(uint32_t tid, uint64_t rip, uint64_t rsp)
{
    if (!__atomic_load_n(&thr_on, __ATOMIC_ACQUIRE) || !scope_threads_is_end_rip(&thr, rip))
        return SCOPE_END_NO;                /* (every full step asks: the common answer is quick) */
    spin_lock(&lock);
    int r = thr_on ? scope_threads_end(&thr, tid, rip, rsp) : SCOPE_END_NO;
    spin_unlock(&lock);
    return r;
}

unsigned scope_threads_left(void)
{
    spin_lock(&lock);
    unsigned n = thr_on ? scope_threads_nlive(&thr) : 0;
    spin_unlock(&lock);
    return n;
}

void scope_end_threads(void)
{
    spin_lock(&lock);
    if (thr_on)
        scope_threads_end_all(&thr);
    spin_unlock(&lock);
}

uint32_t scope_ends_gen(void) { return __atomic_load_n(&thr.gen, __ATOMIC_ACQUIRE); }

unsigned scope_ends(uint64_t *rips, unsigned max)
{
    unsigned n = 0;
    for (unsigned i = 0; i < SCOPE_MAX_THREADS && n < max; i++) {
        uint64_t r = __atomic_load_n(&thr.t[i].end_rip, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&thr.t[i].state, __ATOMIC_ACQUIRE) == SCOPE_THR_LIVE && r)
            rips[n++] = r;
    }
    return n;
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
