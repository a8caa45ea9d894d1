/* task_base.c - the per-CPU base decision; see task_base.h. */
#include "task_base.h"

struct task_base task_base_pick(unsigned cpl, uint64_t gs, uint64_t kgs, uint64_t trusted)
{
    struct task_base r = { 0, false };
    if (cpl == 3) {
        if (kgs >= TASK_KERNEL_HALF)
            r = (struct task_base){ kgs, true };
        return r;
    }
    uint64_t b = gs >= TASK_KERNEL_HALF ? gs : kgs >= TASK_KERNEL_HALF ? kgs : 0;
    if (b)
        r = (struct task_base){ b, trusted && b == trusted };
    return r;
}
