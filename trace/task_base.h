/*
 * task_base.h - which GS base holds the guest kernel's per-CPU area at a VM exit, and whether
 * a slot derived from it may be cached (task.c's current-task slot).
 *
 * Why it is a decision: SWAPGS exchanges IA32_GS_BASE with IA32_KERNEL_GS_BASE on kernel
 * entry and exit (SDM vol. 2, "SWAPGS"), and with CR4.FSGSBASE user code sets its own GS base
 * with WRGSBASE (SDM vol. 2, "WRFSBASE/WRGSBASE"), any canonical value, kernel-half included.
 * So "the one that holds a kernel-half address" is not the kernel's: a user process can
 * point GS at memory where `current` reads as another task.
 * Contract: task_base_pick(cpl, gs, kgs, trusted) with cpl the guest's CPL at the exit (SS.DPL),
 * gs the guest-state GS base, kgs the guest's IA32_KERNEL_GS_BASE, trusted the base taken at
 * an earlier user-mode exit on this CPU (0: none yet). It returns the base to use (0: none)
 * and whether a slot derived from it may be cached:
 *  - CPL 3: the kernel's base is in IA32_KERNEL_GS_BASE, which only the kernel writes (WRMSR
 *    is privileged): kgs if it is a kernel-half address, cacheable. GS is never used.
 *  - CPL 0-2: normally GS (after SWAPGS), but in the entry and exit paths around SWAPGS the
 *    user's GS is still (or again) in one of the two, and single-stepping exits there. The
 *    kernel-half one is used for this exit only; it is cacheable only when it equals the
 *    trusted base.
 * Pure: no state, no hardware access (host unit test trace/tests/test_task_base.c).
 */
#ifndef HVT_TASK_BASE_H
#define HVT_TASK_BASE_H
#include <stdbool.h>
#include <stdint.h>

#define TASK_KERNEL_HALF 0xffff800000000000ull

struct task_base { uint64_t base; bool cacheable; };

struct task_base task_base_pick(unsigned cpl, uint64_t gs, uint64_t kgs, uint64_t trusted);

#endif
