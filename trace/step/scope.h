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
 *    switch probe, the last disarms it;
 *  - scope_next_take(cpu): what the switch probe saw on this CPU since the last call
 *    (SCOPE_NEXT_*), cleared;
 *  - scope_irq_frame(): where an interrupted context resumes (for irq=out).
 */
#ifndef HVT_SCOPE_H
#define HVT_SCOPE_H
#include <stdbool.h>
#include <stdint.h>
#include "task.h"
#include "trace_opts.h"

enum { SCOPE_NEXT_NONE, SCOPE_NEXT_WANTED, SCOPE_NEXT_OTHER };
/* The switch probe's id in the probe engine's reports (HVT-PROBE lines). */
#define SCOPE_PROBE_ID 0xfffffff0u

void scope_configure(const struct trace_opts *o);
bool scope_on(void);
bool scope_irq_out(void);
bool scope_wants(const struct task_info *ti);
bool scope_task_wants(uint64_t task);
void scope_window_open(void);
void scope_window_close(void);
unsigned scope_next_take(unsigned cpu);
/* Switch probe firings so far on this CPU. */
uint64_t scope_fires(unsigned cpu);
/* An interrupt was delivered at this exit (RSP: the guest's now) to code that was about to run
 * the instruction at ret_rip: the RSP it resumes with (the interrupt frame's), or false when the
 * frame is not where the delivery left it. */
bool scope_irq_frame(uint64_t rsp, uint64_t ret_rip, uint64_t *ret_rsp);

#endif
