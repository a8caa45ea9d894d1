/*
 * dilate_calib.h - how many TSC ticks of a VM exit the exit stub cannot time, measured on each
 * CPU at start.
 *
 * Time dilation (hv_set_dilation) takes every tick of an exit out of the guest's TSC: the stub
 * reads the TSC as the exit reaches it (exit_tsc) and again as late as it can before VMRESUME
 * (resume_tsc), and moves the TSC offset back by the difference plus what neither read can
 * see - the stub's last instructions, VMRESUME, the VM entry and the next VM exit's own
 * transition up to the first read. That remainder depends on the processor (a few tens of
 * instructions in Bochs, whose TSC counts instructions; several hundred to over a thousand
 * cycles for a VM exit and entry on real processors), so each CPU measures it: a burst of VM
 * entries with the VMX-preemption timer at zero, each of which exits before the guest executes
 * any instruction (SDM Vol. 3C 27.7.4 "VMX-Preemption Timer"; 26.5.1 "VMX-Preemption Timer").
 * For each pair of such exits, exit_tsc - resume_tsc is exactly the untimed remainder plus
 * noise (an interrupt or a cache miss only adds): the calibrated value is the smallest sample.
 *
 * Contract: dilate_calib_add() takes one sample; dilate_calib_result() gives the smallest, or
 * 'fallback' when there were too few samples or the smallest is beyond DILATE_CALIB_MAX (a
 * timer that did not fire at once: the guest ran meanwhile). Pure: unit-tested on the host.
 */
#ifndef HVT_DILATE_CALIB_H
#define HVT_DILATE_CALIB_H
#include <stdbool.h>
#include <stdint.h>

#define DILATE_CALIB_EXITS   32        /* preemption-timer exits per CPU (the first has no pair) */
#define DILATE_CALIB_MIN_OK  8         /* samples needed for a result */
#define DILATE_CALIB_MAX     200000u   /* ticks: no exit and entry takes this long */

struct dilate_calib {
    unsigned samples;
    uint64_t min, max;
};

static inline void dilate_calib_add(struct dilate_calib *c, uint64_t ticks)
{
    if (!c->samples || ticks < c->min)
        c->min = ticks;
    if (!c->samples || ticks > c->max)
        c->max = ticks;
    c->samples++;
}

static inline uint64_t dilate_calib_result(const struct dilate_calib *c, uint64_t fallback, bool *calibrated)
{
    *calibrated = c->samples >= DILATE_CALIB_MIN_OK && c->min <= DILATE_CALIB_MAX;
    return *calibrated ? c->min : fallback;
}

#endif
