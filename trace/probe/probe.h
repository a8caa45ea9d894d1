/*
 * probe.h - hidden breakpoints on guest kernel code: the probe engine.
 *
 * A probe is an INT3 (0xCC) the guest cannot see: it sits in a shadow copy of the code page,
 * which every CPU's EPT view maps execute-only in place of the original (vmm's hv_ept_view_map).
 * The guest's reads and writes of that page fault to the hypervisor, which lets the one CPU
 * access the original for one instruction (MTF) and, after a write, copies the page into the
 * shadow again and re-plants the probes (code the kernel patches - ftrace, static keys, text_poke
 * - stays what the kernel wrote). Code on a probed page that has no probe runs from the shadow
 * without exits; with no probe armed nothing is intercepted at all.
 *
 * Contract:
 *  - probe_init() once (the policy's start); probe_arm()/probe_disarm_all() at VM exits, on any
 *    CPU; they take the engine's lock.
 *  - probe_arm(kind, lo, hi, id): kernel addresses (runtime, KASLR slide applied by the caller).
 *    PROBE_ENTRY and PROBE_ADDR plant one probe at lo; PROBE_RETURN decodes the function
 *    [lo, hi) as the guest has it now and plants one at every return site: RET, RET imm16, and
 *    JMP out of the function (a return thunk, or a tail call: DTrace counts those as returns).
 *    Returns the number of sites armed, or a negative PROBE_E* (nothing armed then).
 *  - A firing (probe_bp_exit, the EXIT_EXCEPTION_NMI handler for #BP) counts the probe on this
 *    CPU and for the current process name, then resumes: the displaced instruction is emulated
 *    where that is exact (a NOP, ENDBR64, RET, a direct JMP), else executed from the original page
 *    with MTF on this CPU alone (probe_mtf). A #BP the guest raised itself (its own INT3 in the
 *    original) goes back to the guest exactly as the CPU would have delivered it.
 *  - probe_report() prints every probe's counts (HVT-PROBE lines on the hypervisor's log).
 */
#ifndef HVT_PROBE_H
#define HVT_PROBE_H
#include <stdint.h>
#include <stdbool.h>
#include "hv_guest.h"
#include "hv_exit.h"
#include "hvt_probe.h"
#include "hvt_hypercall.h"

enum probe_kind { PROBE_ENTRY = 1, PROBE_RETURN = 2, PROBE_ADDR = 3, PROBE_PROFILE = 4, PROBE_TICK = 5 };
#define PROBE_ENOMEM   HVT_PROBE_ENOMEM
#define PROBE_EFAULT   HVT_PROBE_EFAULT
#define PROBE_ENOSITE  HVT_PROBE_ENOSITE
#define PROBE_EINVAL   HVT_PROBE_EINVAL

int  probe_init(void);
/* flags: HVT_PROBE_F_RECORD reports every firing (include/hvt_probe.h), DTrace's default
 * action; HVT_PROBE_F_STACK with the stack (struct hvt_probe_sample). */
int  probe_arm(enum probe_kind kind, uint64_t lo, uint64_t hi, uint32_t id, uint32_t flags);
/* A probe on a static tracepoint's site (PROBE_ADDR) whose firings carry the arguments
 * the recipe (hvt_hypercall.h, checked here) computes from the registers there. */
int  probe_arm_sdt(uint64_t va, uint32_t id, uint32_t flags, const uint64_t recipe[3]);
/* One spec as the guest tool or the host hands it over (untrusted: checked here; link-time
 * addresses slid). Sites armed (0: a return probe with no return site), or PROBE_E*. */
int  probe_arm_spec(const struct hvt_probe_spec *sp);
/* The same for an HVT_PROBE_F_SDT spec and the HVT_PROBE_KIND_ARGS records after it (args NULL:
 * the request ended early: PROBE_EINVAL): hvt_probe_spec_records(sp) of them, 2 for a site in
 * a module (HVT_PROBE_F_MODULE). */
int  probe_arm_spec_sdt(const struct hvt_probe_spec *sp, const struct hvt_probe_spec *args);
/* A probe on the user-space instruction at va of process pid (its tgid) only - or, with pid 0,
 * of the first process whose name has hvt_comm_hash() comm: taken now, armed at the first exit
 * that finds that process running with va mapped (0, or PROBE_ENOMEM when PENDING_MAX wait
 * already), and from then on in that process alone. Other processes sharing the page (a
 * second process of the same name included) run it unprobed. */
int  probe_arm_user(uint64_t va, uint32_t pid, uint64_t comm, uint32_t id, uint32_t flags);
/* Probes armed with HVT_PROBE_F_ACTION run the action registered here at every firing, on the
 * CPU that fired, in its exit: id and kind the probe's, pc its site (profile, tick: the
 * guest's RIP), arg its arguments as a record would carry them, who the task running (the
 * engine looked it up already: the action need not do it again). One action for the engine
 * (the D programs' runner); NULL: such firings are counted only. */
struct probe_who {
    const char *comm;               /* NUL-terminated, HVT_PROBE_COMM_LEN bytes readable */
    uint32_t pid, tid;              /* 0 when per-CPU data is not reachable yet */
    uint64_t task;                  /* the task_struct's address, or 0 */
    uint64_t *cost;                 /* the firing is timed by phase: the action adds the ticks of
                                       the phases it splits (HVT_PH_PREDICATE on) here; NULL: not */
};
typedef void (*probe_action_fn)(uint32_t id, unsigned kind, unsigned cpu, uint64_t pc,
                                const uint64_t arg[6], const struct probe_who *who,
                                struct guest_regs *g);
void probe_set_action(probe_action_fn fn);
/* Whether the action reads a firing's arguments (default true). False: it is handed arg NULL
 * and no argument is computed (an sdt recipe's guest loads, a system call's user registers):
 * the D runner says so for a program that reads neither args nor errno. */
void probe_set_action_args(bool need);
/* Both read inline at every firing (probe_stack.c keeps them). */
extern probe_action_fn probe_action_cur;
extern bool probe_action_need_args;
static inline probe_action_fn probe_action(void)
{
    return __atomic_load_n(&probe_action_cur, __ATOMIC_ACQUIRE);
}
static inline bool probe_action_args(void)
{
    return __atomic_load_n(&probe_action_need_args, __ATOMIC_ACQUIRE);
}
/* The engine's counters, and the sites armed now (the ARM fields are left alone). */
void probe_status(struct hvt_probe_status *st);
/* Every CPU hands its records on at its next exit (for callers that must not send). */
void probe_flush_request(void);
/* The host's HVT_CTL_PROBE_* commands (trace_ctl.c hands them on): HVT_CTL_* status. */
int  probe_ctl_handle(uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                      uint32_t *out_len);
/* The guest tool's HVT_HC_PROBE hypercall (probe_ctl.c), registered at the layer's start with
 * the privilege the options give: opts' probes are the ones op 1 arms; load_d takes a D
 * program's image from guest memory (op 6). 0, or -1 if the hypercall was taken. */
struct trace_opts;
int  probe_ctl_init(const struct trace_opts *opts, enum hv_hc_priv priv,
                    int (*load_d)(uint64_t va, uint32_t len));
/* This CPU's firing records not yet handed on go out now (at a disarm, at the end). */
void probe_flush(void);
/* At any exit of this CPU: hand its records on if some CPU asked for it (probe_flush). */
void probe_poll(void);
void probe_flush_all(void);                /* every CPU's, at power-off */
void probe_disarm_all(void);
/* How many times probe_disarm_all() ran: it takes the engine's own hook probes too (the
 * scope's switch probe), so their owner re-arms them when this moves. */
unsigned probe_disarm_all_count(void);
/* Every kernel probe whose site is in [lo, hi) disarmed, its byte restored in the shadow and
 * the shadow unmapped once it holds none (a module's text about to be freed). */
void probe_disarm_range(uint64_t lo, uint64_t hi);
/* The same for the probes of one id alone (the engine's own, e.g. the scope's switch probe,
 * sharing a site with a D program's: that one stays armed). */
void probe_disarm_id(uint64_t lo, uint64_t hi, uint32_t id);
unsigned probe_armed(void);
/* Probes in loadable modules (probe_ctl.c over probe_module.c registers the hook): the
 * engine's own probes on the module load and unload paths (armed with these internal flags,
 * never a spec's) report to it with the struct module the kernel passes, and a disarm of
 * everything tells it to forget the wanted module probes (mod 0). Called without the engine's
 * lock (the hook arms and disarms). */
#define PROBE_F_MODHOOK_LOAD (1u << 30)
#define PROBE_F_MODHOOK_FREE (1u << 31)
enum probe_modev { PROBE_MODEV_LOAD = 1, PROBE_MODEV_FREE, PROBE_MODEV_FORGET };
typedef void (*probe_module_fn)(enum probe_modev ev, uint64_t mod);
void probe_set_module_hook(probe_module_fn fn);
/* The tracer's own probe on the scheduler's switch point (step.c, "Scope"): armed with this
 * internal flag (never a spec's), a firing is counted and then calls the hook registered here
 * with this CPU's registers (the task switched to is an argument there), and nothing else. */
#define PROBE_F_SWITCH_HOOK (1u << 29)
typedef void (*probe_switch_fn)(unsigned cpu, const struct guest_regs *g);
void probe_set_switch_hook(probe_switch_fn fn);
bool probe_bp_exit(struct guest_regs *g);
/* The same for an exit whose vector the caller saw was #BP already. */
bool probe_bp_exit_known(struct guest_regs *g);
/* An MTF exit of this CPU: true if it ended a probe's step-over (the caller does nothing else
 * with it unless the CPU is also being traced). */
bool probe_mtf(void);
void probe_report(void);
/* Per-phase accounting of firings (include/hvt_probe.h enum hvt_probe_phase): on or off for
 * every CPU at their next exit; probe_cost_sum adds up the probes armed now (their counts
 * start at 0 when they are armed). */
void probe_cost_set(bool on);
bool probe_cost_enabled(void);
/* newtask, switched: of the firings, those in another task than their CPU's last timed one
 * (its name and ids found anew), those of another probe id than it (struct hvt_probe_cost). */
void probe_cost_sum(uint64_t ticks[HVT_PH_COUNT], uint64_t *fires, uint64_t *newtask, uint64_t *switched);
/* The same by probe id, at most max of them into out (a return probe's sites added up): how
 * many went in; *total how many ids are armed. */
unsigned probe_cost_list(struct hvt_probe_cost *out, unsigned max, unsigned *total);
void probe_report_stats(void);             /* the HVT-PROBESTAT line alone */
/* Firings so far (profile samples included), the VM exits the engine caused (#BP, step-over
 * MTF, EPT) and the EPT ones. */
void probe_counters(uint64_t *fires, uint64_t *exits, uint64_t *ept_exits);

/* --- profile-N / tick-N (probe_profile.c); for the engine's own files --- */
/* A sample every 'period' TSC ticks on every CPU (PROBE_PROFILE) or on CPU 0 (PROBE_TICK). */
int  probe_profile_arm(enum probe_kind kind, uint64_t period, uint32_t id, uint32_t flags);
void probe_profile_disarm_all(void);
extern unsigned probe_nprofiles;
static inline unsigned probe_profile_armed(void)   /* inline: every quick exit asks */
{
    return __atomic_load_n(&probe_nprofiles, __ATOMIC_RELAXED);
}
/* At every exit (the post-exit observer): a sample if a deadline passed; the timer re-set. */
void probe_profile_exit(struct guest_regs *g);
/* --- samples with their stack (probe_stack.c); for the engine's own files --- */
int  probe_stack_init(void);
/* Record a firing with this CPU's stack (collected, sent in blocks like the firings). */
void probe_sample(uint32_t id, unsigned kind, uint64_t pc, const uint64_t *arg,
                  const struct guest_regs *g);
void probe_stack_flush(unsigned cpu);
bool probe_stack_pending(unsigned cpu, uint64_t now, uint64_t age);
void probe_stack_counters(uint64_t *made, uint64_t *lost);
/* The current process and the kernel's page-table root are task.c's (task.h). */

#endif
