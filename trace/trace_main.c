/*
 * trace_main.c - the policy's entry (hv_policy_init, called by vmm/) and its hooks: MTF steps,
 * the HVT_HC_MARK hypercall trigger, and a periodic preemption-timer exit on every CPU so
 * that a request to start or stop reaches CPUs that would otherwise not exit (idle ones).
 */
#include "trace.h"
#include "step.h"
#include "dilate.h"
#include "task.h"
#include "hv_api.h"
#include "hv_core.h"
#include "hv_hooks.h"
#include "hv_guest.h"
#include "hvt_hypercall.h"
#include "cpu.h"

static bool timer_armed[HVT_MAX_CPUS];

static void hook_post_exit(struct guest_regs *g, unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    if (!timer_armed[cpu]) {
        hv_set_preemption_timer(TRACE_POLL_TICKS);
        timer_armed[cpu] = true;
    }
    step_post_exit(g, reason);
}

static bool hook_other_exit(struct guest_regs *g, unsigned reason)
{
    switch (reason) {
    case EXIT_MTF:
        return step_mtf_exit(g);
    case EXIT_PREEMPTION_TIMER:
        return true;                         /* post_exit does the rest */
    case EXIT_HLT:
        return step_hlt_exit(g);
    case EXIT_EXTERNAL_INTR:
        return step_extint_exit(g);
    }
    return false;
}

static int64_t hook_hypercall(struct guest_regs *g)
{
    if ((g->r[GPR_RAX] & HVT_HC_FUNC_MASK) != HVT_HC_MARK)
        return HVT_HC_ENOSYS;
    uint64_t what = g->r[GPR_RBX];
    if (what != TRACE_MARK_START && what != TRACE_MARK_STOP)
        return HVT_HC_EINVAL;
    if (what == TRACE_MARK_START)   /* the guest's syscall entry: the host's KASLR slide */
        hv_log("HVT-META lstar=%lx cpus=%u\n", cpu_rdmsr(MSR_IA32_LSTAR), hv_cpu_count());
    step_request(what == TRACE_MARK_START);
    hv_log("hvtrace: cpu %u: trace %s (mark)\n", hv_cpu_id(), what ? "start" : "stop");
    return HVT_HC_OK;
}

static void hook_power_off(void)
{
    hv_log("hvtrace: trace totals: %lu steps, %lu record bytes\n", trace_stats.steps, trace_stats.bytes);
}

int hv_policy_init(struct hvt_boot_info *bi)
{
    if (task_config(bi->trace_config))
        hv_log("hvtrace: bad trace options '%s': tracing without process attribution\n", bi->trace_config);
    else if (task_enabled())
        hv_log("hvtrace: process attribution on (%s)\n", bi->trace_config);
    if (step_init(bi->cpu_count))
        return -10;
    trace_sink_init();
    trace_ctl_init();
    hv_hooks.post_exit = hook_post_exit;
    hv_hooks.other_exit = hook_other_exit;
    hv_hooks.hypercall = hook_hypercall;
    hv_hooks.power_off = hook_power_off;
    hv_hooks.msr = dilate_msr;
    dilate_init();
    return 0;
}
