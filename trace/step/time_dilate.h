/*
 * time_dilate.h - time dilation: while a CPU is single-stepped, the guest's clock advances with
 * the guest's own instructions, not with the hypervisor's work.
 *
 * Two clocks matter to Linux: the TSC and the local APIC timer, which is dilated in TSC-deadline
 * mode only. Linux uses that mode unless its CPU model has a TSC-deadline erratum and old
 * microcode (it skips that check when CPUID says "hypervisor", which hvtrace.cfg's advertise
 * = on shows); otherwise the APIC timer counts real time and is not dilated.
 *  - TSC, stepped (DILATE_SOFT): the guest's clock counts instructions - one tick per
 *    instruction this CPU retired (like an icount clock), so a trace's time stamps are exact
 *    and the hypervisor's cost never shows. RDTSC, RDTSCP and RDMSR of IA32_TSC exit and read
 *    it (dilate_rdtsc_exit); the fast path (step_fast.asm) then never touches the TSC offset,
 *    and every full exit sets the offset from this clock (dilate_pre_exit), so the guest's TSC
 *    continues from it when stepping stops or parks.
 *  - TSC, parked in HLT (DILATE_HARD): every VM exit subtracts the ticks the hypervisor spent
 *    from the TSC offset (SDM 25.6.5; done by vmm/'s exit stub, HV_DILATE_TSC), so the guest's
 *    TSC only moves while the guest waits. It never goes backwards: the offset only shrinks by
 *    time that has really passed, measured at the last moment before VM entry.
 *  - TSC deadline: the guest writes deadlines in its own (offset) TSC; the LAPIC compares
 *    them with the raw TSC (Bochs ignores the offset here; real CPUs apply the offset at the
 *    write, but not to later offset changes). So IA32_TSC_DEADLINE is intercepted and kept in
 *    guest terms per CPU, and served in one of three modes:
 *      DILATE_OFF   not dilated: the real MSR holds guest_deadline - offset (a constant offset).
 *      DILATE_SOFT  stepped: the real MSR stays disarmed; the full step lets the fast path take
 *                   exactly as many exits as the guest's clock needs to reach the deadline
 *                   (dilate_fast_left), and the full step at that exit fires it: the real
 *                   deadline is set to the past, so the LAPIC raises the interrupt at once - at
 *                   the exact guest instruction, with no per-step cost.
 *      DILATE_HARD  stepped but parked in HLT (no steps to count): the real MSR holds
 *                   guest_deadline - offset, disarmed by the stub at every exit and re-armed,
 *                   moved by that exit's ticks, at its end (dilate_exit()).
 *    After stepping stops the offset stays where it is: time resumes smoothly from there.
 */
#ifndef HVT_DILATE_H
#define HVT_DILATE_H
#include <stdint.h>
#include <stdbool.h>
#include "hv_api.h"

enum dilate_mode { DILATE_OFF, DILATE_SOFT, DILATE_HARD };

/* 'retired': the instructions CPU 'cpu' retired under stepping so far (the stepper's count,
 * SOFT mode's clock). Registers the TSC and TSC-deadline MSR handlers with vmm/. */
void dilate_init(uint64_t (*retired)(unsigned cpu));
/* This CPU's mode, switched during an exit (SOFT while stepped, HARD while parked). */
void dilate_set(enum dilate_mode m);
/* Called at the end of every exit of a dilated CPU: fires a SOFT deadline that is due, moves a
 * HARD one along. */
void dilate_exit(void);
bool dilate_msr(uint32_t msr, bool write, uint64_t *val);
/* First thing in every full exit (SOFT: the TSC offset follows the guest's own clock). */
void dilate_pre_exit(void);
/* RDTSC / RDTSCP exit (SOFT mode has RDTSC exiting on): emulated from the guest's clock. */
struct guest_regs;
bool dilate_rdtsc_exit(struct guest_regs *g, bool rdtscp);
/* SOFT: how many exits the fast path may take before this CPU's deadline needs a full step
 * (at most 'max'); 0 in the other modes. */
uint32_t dilate_fast_left(unsigned cpu, uint32_t max);

/* SOFT mode: the guest TSC at which this CPU's deadline fires (~0: none pending). */
extern uint64_t dilate_soft_deadline[];
/* Is a SOFT deadline due at guest TSC 'guest_tsc'? (dilate_exit() then fires it.) */
static inline bool dilate_due(unsigned cpu, uint64_t guest_tsc)
{
    return guest_tsc >= dilate_soft_deadline[cpu];
}

/* Timer interrupts seen and deadlines programmed, for the bench. */
struct dilate_stats { uint64_t deadlines, exits, fired_in_exit, soft_fired; };
extern struct dilate_stats dilate_stats[];

#endif
