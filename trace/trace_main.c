/*
 * trace_main.c - the policy's entry (hv_policy_init, called by vmm/) and its hooks: MTF steps,
 * the triggers (HVT_HC_MARK hypercall, start=boot, EPT address triggers in trigger.c), auto-stop
 * on a guest triple fault and at power-off, and a periodic preemption-timer exit on every CPU
 * so that a request to start or stop reaches CPUs that would otherwise not exit (idle ones).
 */
#include "trace.h"
#include "step.h"
#include "dilate.h"
#include "task.h"
#include "trigger.h"
#include "trace_opts.h"
#include "hvt_trace_format.h"
#include "hv_api.h"
#include "hv_core.h"
#include "hv_hooks.h"
#include "hv_guest.h"
#include "hvt_hypercall.h"
#include "cpu.h"

static bool timer_armed[HVT_MAX_CPUS];
static struct trace_opts opts;

const struct trace_opts *trace_boot_opts(void) { return &opts; }

static void hook_post_exit(struct guest_regs *g, unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    if (!timer_armed[cpu]) {
        hv_set_preemption_timer(TRACE_POLL_TICKS);
        timer_armed[cpu] = true;
    }
    trigger_poll();
    step_post_exit(g, reason);
    trace_sink_poll(cpu);                    /* a STOP chunk held while the link was down */
}

static void hook_pre_exit(struct guest_regs *g, unsigned reason) { dilate_pre_exit(); }

static bool hook_other_exit(struct guest_regs *g, unsigned reason)
{
    switch (reason) {
    case EXIT_MTF:
        if (trigger_mtf() && !step_active())
            hv_set_mtf(false);              /* the trigger's step-over is done */
        return step_mtf_exit(g);
    case EXIT_PREEMPTION_TIMER:
        return true;                         /* post_exit does the rest */
    case EXIT_RDTSC:
    case EXIT_RDTSCP:
        return dilate_rdtsc_exit(g, reason == EXIT_RDTSCP);
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
    if (opts.start != TRACE_START_MARK) {
        hv_log("hvtrace: cpu %u: mark ignored (the trace starts on another trigger)\n", hv_cpu_id());
        return HVT_HC_OK;
    }
    if (what == TRACE_MARK_START && trace_sink_link_failed()) {
        hv_log("hvtrace: cpu %u: start mark refused: the link has failed (the guest may retry)\n", hv_cpu_id());
        return HVT_HC_EBUSY;
    }
    step_request(what == TRACE_MARK_START);
    hv_log("hvtrace: cpu %u: trace %s (mark)\n", hv_cpu_id(), what ? "start" : "stop");
    return HVT_HC_OK;
}

static bool hook_ept(uint64_t gpa, uint64_t qual) { return trigger_ept(gpa, qual); }

static void hook_fatal(const char *why)
{
    step_stop_now(HVT_REASON_TRIPLE_FAULT);
}

/* Power-off while tracing: stop every CPU and let each flush its records before the machine
 * goes away (stepping CPUs exit at their next instruction, parked ones at their next
 * preemption-timer exit). Bounded: a CPU that never exits again cannot hold power-off. */
static void hook_power_off(void)
{
    if (step_active()) {
        step_stop_now(HVT_REASON_END);
        uint64_t t0 = hv_rdtsc();
        while (step_cpus_stepping() && hv_rdtsc() - t0 < 4 * TRACE_POLL_TICKS)
            __asm__ volatile("pause");
        if (step_cpus_stepping())
            hv_log("hvtrace: power-off: a CPU did not stop tracing: its last records are lost\n");
    }
    /* The fast path's MTF exits are not in vmm/'s exit summary (they skip the full dispatch). */
    hv_log("hvtrace: trace totals: %lu steps (%lu on the MTF fast path), %lu record bytes\n",
           trace_stats.steps, trace_stats.fast_steps, trace_stats.bytes);
}

int hv_policy_init(struct hvt_boot_info *bi)
{
    char err[160];
    if (trace_opts_parse(bi->trace_config, &opts, err, sizeof err)) {
        /* Bad options never take the guest down: say why and trace nothing. */
        hv_log("hvtrace: %s\nhvtrace: tracing is off for this boot\n", err);
        return 0;
    }
    if (opts.task_set) {
        task_set_layout(opts.task);
        hv_log("hvtrace: process attribution on\n");
    }
    if (step_init(bi->cpu_count))
        return -10;
    step_configure(&opts);
    step_flight(opts.flight_mb);
    trigger_init(&opts);
    trace_sink_init();
    trace_ctl_init();
    hv_hooks.pre_exit = hook_pre_exit;
    hv_hooks.post_exit = hook_post_exit;
    hv_hooks.other_exit = hook_other_exit;
    hv_hooks.hypercall = hook_hypercall;
    hv_hooks.power_off = hook_power_off;
    hv_hooks.ept_violation = hook_ept;
    hv_hooks.fatal = hook_fatal;
    hv_hooks.msr = dilate_msr;
    hv_mtf_fast = (void *)step_fast_entry;
    dilate_init();
    if (opts.start == TRACE_START_BOOT)
        step_request_reason(true, HVT_REASON_BOOT);
    return 0;
}
