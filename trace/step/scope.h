/*
 * scope.h - what a scoped trace single-steps (trace_opts.h scope=): one process by pid with its
 * threads, one thread, or every task of a name; the rest of the machine runs unstepped.
 *
 * Which task a CPU runs is the kernel's own notion: its per-CPU current task pointer, which
 * changes inside the scheduler's __switch_to. The stepper (step.c) sees it change at every step
 * of a stepped CPU; a CPU that is not stepped is watched by one hidden probe (probe.h) at
 * __switch_to's entry, whose firing reads the task switched to (its second argument, RSI) and
 * says here whether that one is wanted. Page-table roots play no part, so threads sharing an
 * address space, PCIDs and lazy-TLB switches (a kernel thread running on the previous task's
 * tables) are told apart exactly.
 *
 * Contract:
 *  - scope_configure() with the window's options (not while any CPU steps);
 *  - scope_wants() / scope_task_wants(): is this task in scope (guest memory read through gmem);
 *  - scope_window_open()/scope_window_close() around each CPU's window: the first arms the
 *    switch probe (once the kernel's slide is known: scope_poll() retries), the last
 *    disarms it;
 *  - scope_next_take(cpu): what the switch probe saw on this CPU since the last call
 *    (SCOPE_NEXT_*), cleared;
 *  - scope_irq_frame(): where an interrupted context resumes (for irq=out);
 *  - scope_begin_thread(): D's step() (d_runtime.c) scopes the window to the firing's thread
 *    from the firing up to the instruction its function returns to (end_rip, with RSP =
 *    end_rsp: that call's return, not a recursive one's); several threads may be stepped at
 *    once, each up to its own end (scope_threads.h: a small table, a full one refuses);
 *  - scope_thread_end(): a stepped CPU's thread reached (rip, rsp): is that its end, and was
 *    it the last thread's; scope_threads_left() says whether any is still stepped, and
 *    scope_end_threads() ends them all (the window is ended for all: unstep(), stop());
 *  - scope_ends(), scope_ends_gen(): where the live threads' ends are (a CPU keeps them as
 *    addresses its fast path leaves to the full step) and a count of their changes;
 *  - the boot configuration's scope comes back when the window's last CPU closes it, with
 *    no thread left that joined while it closed.
 */
#ifndef HVT_SCOPE_H
#define HVT_SCOPE_H
#include <stdbool.h>
#include <stdint.h>
#include "task.h"
#include "trace_opts.h"
#include "scope_threads.h"

enum { SCOPE_NEXT_NONE, SCOPE_NEXT_WANTED, SCOPE_NEXT_OTHER };
/* The switch probe's id in the probe engine's reports (HVT-PROBE lines). */
#define SCOPE_PROBE_ID 0xfffffff0u

void scope_configure(const struct trace_opts *o);
/* How the switch probe is armed and disarmed (the probe engine's calls: probe_arm with
 * PROBE_F_SWITCH_HOOK, probe_disarm_range), and the hook its firings call (for the engine's
 * probe_set_switch_hook): wired by the layer's start (trace_main.c), so that this module and
 * the probe engine, which calls into the stepper, do not depend on each other. */
struct scope_probe_ops {
    int (*arm)(uint64_t va, uint32_t id);
    void (*disarm)(uint64_t va);
    /* Moves when the engine disarmed every probe (a D program's unload): re-arm then. */
    unsigned (*disarm_all_count)(void);
};
void scope_set_probe_ops(const struct scope_probe_ops *ops);
struct guest_regs;
void scope_switch_hook(unsigned cpu, const struct guest_regs *g);
extern enum trace_scope scope_kind;         /* this window's (TRACE_SCOPE_ALL: none) */
static inline bool scope_on(void) { return scope_kind != TRACE_SCOPE_ALL; }
/* scope_begin_thread's answers. OTHER: a window of another kind is open (or asked for), which
 * goes on as it is. */
enum { SCOPE_BEGIN_ADDED, SCOPE_BEGIN_LIVE, SCOPE_BEGIN_FULL, SCOPE_BEGIN_OTHER };
/* end_rip 0: the thread has no end of its own (until unstep(), stop()). window_wanted: a window
 * is asked for or still stepping (the caller's view, under its own lock). */
int scope_begin_thread(uint32_t tid, uint64_t end_rip, uint64_t end_rsp, bool window_wanted);
/* SCOPE_END_NO, _MORE (that thread is done, others go on), _LAST (no thread is left). */
int scope_thread_end(uint32_t tid, uint64_t rip, uint64_t rsp);
unsigned scope_threads_left(void);
void scope_end_threads(void);
unsigned scope_ends(uint64_t *rips, unsigned max);
uint32_t scope_ends_gen(void);
bool scope_irq_out(void);
bool scope_wants(const struct task_info *ti);
bool scope_task_wants(uint64_t task);
void scope_window_open(void);
void scope_window_close(void);
/* At a paused CPU's exits: arms the switch probe if a window opened before the slide was known. */
void scope_poll(void);
unsigned scope_next_take(unsigned cpu);
/* Switch probe firings so far on this CPU. */
uint64_t scope_fires(unsigned cpu);
/* An interrupt was delivered at this exit (RSP: the guest's now) to code that was about to run
 * the instruction at ret_rip: the RSP it resumes with (the interrupt frame's), or false when the
 * frame is not where the delivery left it. */
bool scope_irq_frame(uint64_t rsp, uint64_t ret_rip, uint64_t *ret_rsp);

#endif
