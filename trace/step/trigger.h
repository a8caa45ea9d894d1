/*
 * trigger.h - starting the trace at an address: after N passes of it, or on entry of a kernel
 * function (optionally only for one pid or comm). STDB's "after N passes", made invisible:
 * an EPT execute trap on the address's page (vmm's hv_ept_set_exec), so the guest's code is
 * never modified and, while no trigger is armed, nothing costs anything.
 *
 * Contract:
 *  - trigger_init(opts) remembers the trigger (start=passes / start=entry); nothing else.
 *  - trigger_poll() runs at every VM exit: once the KASLR slide is known (kaslr.h), it arms
 *    the trap on the page of 'at'.
 *  - trigger_ept() (registered with hv_ept_fault_register for the page) claims execute violations on that page: a fetch
 *    at 'at' counts a pass; when the count is reached (and the task matches) the trap is
 *    removed and tracing starts on this CPU with that very instruction (step_request), the
 *    others at their next exit. Any other fetch from the page is stepped over: the page is made
 *    executable for one instruction (MTF) and protected again in trigger_mtf().
 *  - Limitation: while one CPU steps over the page, another CPU may run code on it unseen; a
 *    pass of 'at' in that window is missed (per-CPU EPTs would close it).
 */
#ifndef HVT_TRIGGER_H
#define HVT_TRIGGER_H
#include <stdint.h>
#include <stdbool.h>
#include "trace_opts.h"

void     trigger_init(const struct trace_opts *o);
void     trigger_poll(void);
bool     trigger_ept(uint64_t gpa, uint64_t qual);
bool     trigger_mtf(void);

#endif
