/* trigger.c - start the trace at an address through an EPT execute trap (see trigger.h). */
#include "trigger.h"
#include "hvt_trace_format.h"
#include "trace.h"
#include "step.h"
#include "task.h"
#include "kaslr.h"
#include "hv_api.h"
#include "hvt_bootinfo.h"
#include "hv_guest.h"
#include "hv_exit.h"
#include "hv_ept.h"
#include "gmem.h"

enum trig_state { TRIG_OFF, TRIG_WAIT_SLIDE, TRIG_ARMED, TRIG_FIRED };

static struct {
    enum trig_state state;
    bool entry;                        /* start=entry (else start=passes) */
    uint64_t at_link, at, gpa, passes_wanted;
    bool pid_set;
    uint64_t pid;
    char comm[TRACE_COMM_MAX];
    struct spinlock lock;
    uint64_t passes, step_overs, task_misses;
} tg;
static bool stepping_over[HVT_MAX_CPUS];

void trigger_init(const struct trace_opts *o)
{
    if (o->start != TRACE_START_PASSES && o->start != TRACE_START_ENTRY)
        return;
    tg.entry = o->start == TRACE_START_ENTRY;
    tg.at_link = o->at;
    tg.passes_wanted = tg.entry ? 1 : o->passes;
    tg.pid_set = o->pid_set;
    tg.pid = o->pid;
    memcpy(tg.comm, o->comm, sizeof tg.comm);
    tg.state = TRIG_WAIT_SLIDE;
}

static void arm(void)
{
    struct gmem_paging pg;
    struct gmem_xlat x;
    tg.at = tg.at_link + kaslr_slide();
    hv_guest_paging(&pg);
    if (gmem_walk(&pg, tg.at, &x))
        return;                                   /* not mapped yet: try at a later exit */
    tg.gpa = x.gpa;
    /* The handler first, so the first fetch of the page finds it. */
    if (hv_ept_fault_register(tg.gpa & X86_PAGE_MASK, X86_PAGE_SIZE, trigger_ept) ||
        hv_ept_set_exec(tg.gpa, false)) {
        hv_log("hvtrace: trigger: cannot trap gpa %lx: trigger off\n", tg.gpa);
        tg.state = TRIG_OFF;
        return;
    }
    tg.state = TRIG_ARMED;
    hv_log("hvtrace: trigger armed: %s %lx (gpa %lx), %lu pass(es)\n",
           tg.entry ? "entry of" : "passes of", tg.at, tg.gpa, tg.passes_wanted);
}

void trigger_poll(void)
{
    if (tg.state != TRIG_WAIT_SLIDE || !kaslr_known())
        return;
    spin_lock(&tg.lock);
    if (tg.state == TRIG_WAIT_SLIDE)
        arm();
    spin_unlock(&tg.lock);
}

static bool task_matches(void)
{
    if (!tg.pid_set && !tg.comm[0])
        return true;
    struct task_info ti;
    if (!task_now(hv_cpu_id(), &ti))
        return false;
    if (tg.pid_set && ti.pid != tg.pid)
        return false;
    return !tg.comm[0] || !strcmp(ti.comm, tg.comm);
}

bool trigger_ept(uint64_t gpa, uint64_t qual)
{
    if ((tg.state != TRIG_ARMED && tg.state != TRIG_FIRED) || (gpa >> X86_PAGE_SHIFT) != (tg.gpa >> X86_PAGE_SHIFT) ||
        !(qual & EPT_QUAL_EXEC))
        return false;
    spin_lock(&tg.lock);
    if (tg.state == TRIG_FIRED) {
        /* Another CPU fired and unprotected the page; our TLB was stale. Nothing to do. */
        spin_unlock(&tg.lock);
        return true;
    }
    bool fire = false;
    if (hv_guest_read(HV_GUEST_RIP) == tg.at && task_matches())
        fire = ++tg.passes >= tg.passes_wanted;
    else if (hv_guest_read(HV_GUEST_RIP) == tg.at)
        tg.task_misses++;
    if (fire) {
        tg.state = TRIG_FIRED;
        hv_ept_set_exec(tg.gpa, true);
        spin_unlock(&tg.lock);
        hv_log("hvtrace: cpu %u: trigger fired at %lx after %lu pass(es)\n", hv_cpu_id(), tg.at, tg.passes);
        step_request_reason(true, tg.entry ? HVT_REASON_ENTRY : HVT_REASON_PASSES);
        return true;                /* post_exit starts this CPU with RIP = at pending */
    }
    /* Step over this one instruction with the page executable. */
    tg.step_overs++;
    hv_ept_set_exec(tg.gpa, true);
    spin_unlock(&tg.lock);
    stepping_over[hv_cpu_id()] = true;
    step_no_fast();
    hv_set_mtf(true);
    return true;
}

bool trigger_mtf(void)
{
    unsigned cpu = hv_cpu_id();
    if (!stepping_over[cpu])
        return false;
    stepping_over[cpu] = false;
    spin_lock(&tg.lock);
    if (tg.state == TRIG_ARMED)
        hv_ept_set_exec(tg.gpa, false);
    spin_unlock(&tg.lock);
    return true;                    /* the caller decides whether MTF stays on (tracing) */
}
