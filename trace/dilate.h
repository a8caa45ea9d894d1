/*
 * dilate.h - time dilation: while a CPU is single-stepped, the guest's clock advances with
 * the guest's own instructions, not with the hypervisor's work.
 *
 * Two clocks matter to Linux: the TSC and the local APIC timer, which under hvtrace runs in
 * TSC-deadline mode (Linux skips its TSC-deadline errata check when CPUID says "hypervisor").
 *  - TSC: every VM exit while stepping subtracts the ticks the hypervisor spent from the TSC
 *    offset (SDM 25.6.5; done by vmm/'s exit stub, hv_set_dilation), so the guest's TSC only
 *    moves while the guest runs. It never goes backwards: the offset only shrinks by time that
 *    has really passed, measured at the last moment before VM entry.
 *  - TSC deadline: the guest writes deadlines in its own (offset) TSC; the LAPIC compares
 *    them with the raw TSC (Bochs ignores the offset here; real CPUs apply the offset at the
 *    write, but not to later offset changes). So IA32_TSC_DEADLINE is intercepted and kept in
 *    guest terms per CPU; the real MSR gets guest_deadline - offset, re-programmed whenever
 *    the offset moves. After stepping stops the offset stays where it is: time resumes
 *    smoothly from there.
 */
#ifndef HVT_DILATE_H
#define HVT_DILATE_H
#include <stdint.h>
#include <stdbool.h>

void dilate_init(void);
/* Dilation on or off for this CPU (on while it is stepped). */
void dilate_set(bool on);
/* Called at the end of every exit of a dilated CPU: moves a pending TSC deadline along. */
void dilate_exit(void);
bool dilate_msr(uint32_t msr, bool write, uint64_t *val);
/* Timer interrupts seen and deadlines programmed, for the bench. */
struct dilate_stats { uint64_t deadlines, exits, fired_in_exit; };
extern struct dilate_stats dilate_stats[];

#endif
