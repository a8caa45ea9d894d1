/*
 * trace_main.c - the policy layer's start (trace_layer_init, called by the image) and the
 * handlers it registers with vmm/: MTF steps, the triggers (HVT_HC_MARK hypercall, start=boot,
 * EPT address triggers in trigger.c), auto-stop on a guest triple fault and at power-off, and a
 * periodic preemption-timer exit on every CPU so that a request to start or stop reaches CPUs
 * that would otherwise not exit (idle ones).
 */
#include "trace.h"
#include "step.h"
#include "time_dilate.h"
#include "task.h"
#include "trigger.h"
#include "kaslr.h"
#include "probe.h"
#include "d_runtime.h"
#include "guest_cmd.h"
#include "trace_opts.h"
#include "hvt_trace_format.h"
#include "hv_api.h"
#include "hv_exit.h"
#include "hv_guest.h"
#include "gmem.h"
#include "hv_ept.h"
#include "hvt_hypercall.h"
#include "hvt_bootinfo.h"
#include "scope.h"

static bool timer_armed[HVT_MAX_CPUS];
static uint64_t last_full[HVT_MAX_CPUS];   /* hv_exit_tsc() of each CPU's last full exit */
static struct trace_opts opts;

/* The sink found the link failed: tracing stops, with that reason in every CPU's STOP. */
static void sink_link_failed(void) { step_request_reason(false, HVT_REASON_LINK); }

static void hook_post_exit(struct guest_regs *g, unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    last_full[cpu] = hv_exit_tsc();
    if (!timer_armed[cpu]) {
        hv_set_preemption_timer(TRACE_POLL_TICKS);
        timer_armed[cpu] = true;
    }
    kaslr_poll();
    trigger_poll();
    probe_poll();
    probe_profile_exit(g);
    dprobe_poll(g);
    step_post_exit(g, reason);
    trace_sink_poll(cpu);                    /* a STOP chunk held while the link was down */
}

static void hook_pre_exit(struct guest_regs *g, unsigned reason) { dilate_pre_exit(); }

/* A probe's #BP exit taken whole, without the observers above (hv_exit_register_quick): their
 * polls run at this CPU's next full exit, which comes at most a poll period later because a
 * quick exit past it declines (the preemption timer cannot bound that: it restarts at every
 * VM entry). Never on a CPU being stepped, or one that should start or stop (the observers are
 * its instruction trace and its clock), nor while profile-N/tick-N sample (their samples are
 * taken by the observer at the first exit past each deadline: a deferred one would land
 * elsewhere in the guest). A firing that asks for the tracer (D's step(), stop()) gets this
 * layer's post-exit work at once: the trace starts at the probe. */
static bool quick_bp(struct guest_regs *g, unsigned reason)
{
    unsigned cpu = hv_cpu_id();
    if (!timer_armed[cpu] || hv_exit_tsc() - last_full[cpu] >= TRACE_POLL_TICKS ||
        (hv_exit_intr_info() & VMX_INTR_VECTOR_MASK) != VEC_BP || !step_cpu_idle(cpu) ||
        probe_profile_armed())
        return false;
    probe_bp_exit_known(g);
    if (__atomic_load_n(&trace_want, __ATOMIC_ACQUIRE))   /* the firing asked for the tracer */
        hook_post_exit(g, reason);         /* (D's step()): it starts here, at the probe */
    return true;
}

static bool handle_mtf(struct guest_regs *g, unsigned reason)
{
    probe_mtf();                            /* a probe's step-over on this CPU ends here */
    if (trigger_mtf() && !step_active())
        hv_set_mtf(false);                  /* the trigger's step-over is done */
    return step_mtf_exit(g);
}

/* Its work (the periodic poll) is the post observer's. */
static bool handle_timer(struct guest_regs *g, unsigned reason) { return true; }

static bool handle_rdtsc(struct guest_regs *g, unsigned reason)
{
    return dilate_rdtsc_exit(g, reason == EXIT_RDTSCP);
}

static bool handle_hlt(struct guest_regs *g, unsigned reason) { return step_hlt_exit(g); }
static bool handle_extint(struct guest_regs *g, unsigned reason) { return step_extint_exit(g); }

static int64_t hook_hypercall(struct guest_regs *g)
{
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

/* The hypervisor's fatal path (every other CPU stopped, hv_exit.h): what the CPUs hold goes
 * into the transport's ring, ended with STOP(hypervisor panic); the transport's own hook
 * (registered earlier, so run next) sends the reason and pushes the ring out. */
static void hook_fatal(const char *why)
{
    step_fatal_flush(HVT_REASON_HV_PANIC);
}

/* Power-off while tracing: stop every CPU and let each flush its records before the machine
 * goes away (stepping CPUs exit at their next instruction, parked ones at their next
 * preemption-timer exit). Bounded: a CPU that never exits again cannot hold power-off. */
static void hook_power_off(void)
{
    enum hv_end why = hv_end_reason();
    if (step_active()) {
        step_stop_now(why == HV_END_RESET ? HVT_REASON_RESET :
                      why == HV_END_TRIPLE_FAULT ? HVT_REASON_TRIPLE_FAULT : HVT_REASON_END);
        uint64_t t0 = hv_rdtsc();
        while (step_cpus_stepping() && hv_rdtsc() - t0 < 4 * TRACE_POLL_TICKS)
            __asm__ volatile("pause");
        if (step_cpus_stepping())
            hv_log("hvtrace: power-off: a CPU did not stop tracing: its last records are lost\n");
    }
    probe_flush_all();
    dprobe_flush_all();
    if (probe_armed())
        probe_report();
    /* The fast path's MTF exits are not in vmm/'s exit summary (they skip the full dispatch). */
    hv_log("hvtrace: trace totals: %lu steps (%lu on the MTF fast path), %lu record bytes\n",
           trace_stats.steps, trace_stats.fast_steps, trace_stats.bytes);
}

/* The exits this layer takes over from vmm/ (hv_exit.h), each with its own handler. */
static const struct { unsigned reason; hv_exit_fn fn; } exits[] = {
    { EXIT_MTF, handle_mtf }, { EXIT_PREEMPTION_TIMER, handle_timer },
    { EXIT_RDTSC, handle_rdtsc }, { EXIT_RDTSCP, handle_rdtsc },
    { EXIT_HLT, handle_hlt }, { EXIT_EXTERNAL_INTR, handle_extint },
};

/* The scope's switch probe (trace/step/scope.h) is one of the probe engine's. */
static int scope_probe_arm(uint64_t va, uint32_t id)
{
    return probe_arm(PROBE_ENTRY, va, va + 1, id, PROBE_F_SWITCH_HOOK);
}
/* Its own probe alone: a D program's probe at the same function stays armed. */
static void scope_probe_disarm(uint64_t va) { probe_disarm_id(va, va + 1, SCOPE_PROBE_ID); }
static const struct scope_probe_ops scope_ops = { scope_probe_arm, scope_probe_disarm, probe_disarm_all_count };

/* User-mode callers of the control hypercalls: effective uid 0 of the current task. */
static bool admin_check(unsigned cpu)
{
    uint32_t euid;
    return task_euid(cpu, &euid) && euid == 0;
}

int trace_layer_init(struct hvt_boot_info *bi, const struct hv_transport *t)
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
    scope_set_probe_ops(&scope_ops);
    probe_set_switch_hook(scope_switch_hook);
    step_flight(opts.flight_mb);
    kaslr_init(opts.lstar);
    trigger_init(&opts);
    trace_sink_init(t, sink_link_failed);
    trace_ctl_init(t, &opts);
    bool ok = true, one;
    for (unsigned i = 0; i < sizeof exits / sizeof exits[0]; i++) {
        hv_exit_fn prev = hv_exit_register(exits[i].reason, exits[i].fn, &one);
        ok = ok && one && !prev;             /* these are this layer's alone */
    }
    /* Trace control from user mode: the guest's root only, unless the options say otherwise. */
    enum hv_hc_priv priv = opts.hc_user == TRACE_HC_ALL ? HV_HC_ANY :
                           opts.hc_user == TRACE_HC_NONE ? HV_HC_KERNEL : HV_HC_ADMIN;
    if (priv == HV_HC_ADMIN)
        hv_hypercall_admin(admin_check);
    if (priv == HV_HC_ADMIN && !(opts.task_set && opts.task[4]))
        hv_log("hvtrace: no task_struct.cred offsets in task=: trace control from kernel mode "
               "only (write the trace line with hvt options)\n");
    hv_hypercall_register(HVT_HC_MARK, hook_hypercall, priv, &one);
    ok = ok && one;
    ok = ok && !probe_ctl_init(&opts, priv, dprobe_load_guest) && !probe_init() && !dprobe_init() && !dcmd_init(priv);
    ok = ok && !hv_exit_observe(hook_pre_exit, hook_post_exit);
    hv_exit_register_quick(EXIT_EXCEPTION_NMI, quick_bp, &one);
    ok = ok && one;
    ok = ok && !hv_on_power_off(hook_power_off) && !hv_on_fatal(hook_fatal);
    if (!ok) {
        hv_log("hvtrace: the policy could not register its exit handlers\n");
        return -11;
    }
    dilate_init(step_retired_now);
    if (opts.start == TRACE_START_BOOT)
        step_request_reason(true, HVT_REASON_BOOT);
    return 0;
}
