/* task_base.c - the per-CPU base decision; see task_base.h. */
#include "task_base.h"

/* Today's rule, extracted unchanged: whichever holds a kernel-half address, GS first. */
struct task_base task_base_pick(unsigned cpl, uint64_t gs, uint64_t kgs, uint64_t trusted)
{
    if (gs >= TASK_KERNEL_HALF)
        return (struct task_base){ gs, true };
    return (struct task_base){ kgs >= TASK_KERNEL_HALF ? kgs : 0, kgs >= TASK_KERNEL_HALF };
}
