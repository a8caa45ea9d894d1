/* step.h - MTF stepping (step.c). Called from the hooks trace_main.c installs. */
#ifndef HVT_STEP_H
#define HVT_STEP_H
#include <stdbool.h>
#include <stdint.h>
#include "hv_guest.h"

struct trace_stats { uint64_t steps, bytes, fast_steps; };  /* closed windows, all CPUs */
extern struct trace_stats trace_stats;

int  step_init(unsigned ncpu);
void step_request(bool on);                         /* reason: hypercall mark */
void step_request_reason(bool on, unsigned reason); /* HVT_REASON_*; the first stop reason wins */
bool step_active(void);
/* D's step(): the window steps this thread (its tid) from now up to the instruction at end_rip
 * with RSP = end_rsp on it (the firing function's return; end_rip 0: until unstep() or stop());
 * several threads may be stepped at once, each up to its own end, and the window ends with the
 * last. False: refused, the table of threads stepped at once is full (scope_threads.h). A
 * window of another kind already open goes on with its own scope. */
bool step_request_thread(uint32_t tid, uint64_t end_rip, uint64_t end_rsp, unsigned reason);
/* No CPU should step, and this one does not (its exits need no stepping work: the quick #BP
 * exit, trace_main.c). Inline: every quick exit asks. */
extern volatile int trace_want;
extern bool step_stepping[];
static inline bool step_cpu_idle(unsigned cpu)
{
    return !__atomic_load_n(&trace_want, __ATOMIC_ACQUIRE) && !step_stepping[cpu];
}
bool step_cpus_stepping(void);                     /* is any CPU still stepping? */
void step_stop_now(unsigned reason);                /* stop this CPU at once (power-off) */
/* The fatal path: end every stepping CPU's window whose state is whole, from this CPU. */
void step_fatal_flush(unsigned reason);
struct trace_opts;
/* Filters and budget of the next window (not while any CPU steps: the caller checks). */
void step_configure(const struct trace_opts *o);
void step_flight(uint64_t mb);                      /* flight recorder of 'mb' MB, once */
void step_post_exit(struct guest_regs *g, unsigned reason);
bool step_mtf_exit(struct guest_regs *g);
bool step_hlt_exit(struct guest_regs *g);
bool step_extint_exit(struct guest_regs *g);
/* The MTF fast path (step_fast.asm), registered as hv_mtf_fast. */
void step_fast_entry(void);
void step_fast_entry_check(void);                   /* the same with checkregs=on */
void step_fast_entry_flow(void);                    /* the same for the FLOW record mode */
/* Instructions this CPU retired under stepping so far (the SOFT clock of time_dilate.h). */
uint64_t step_retired_now(unsigned cpu);
/* The next MTF exit of this CPU must take the full path (a trigger's step-over owns it). */
void step_no_fast(void);

#endif
