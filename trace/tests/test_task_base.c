/* test_task_base.c - trace/task_base.c's choice of the guest kernel's per-CPU base at a VM
 * exit: from user mode only IA32_KERNEL_GS_BASE (a GS base the user set with WRGSBASE, kernel
 * half or not, is never taken), from kernel mode GS or the kernel-half one, cached only when
 * it equals the base seen at a user-mode exit. */
#include <stdio.h>
#include "task_base.h"
#include "check.h"

#define KBASE  0xffff88807dc00000ull      /* a per-CPU area in the direct map */
#define FORGED 0xffffffff82a0b000ull      /* &init_task.group_leader - current_off, say */
#define USER   0x00007f0012340000ull

static void expect(const char *what, unsigned cpl, uint64_t gs, uint64_t kgs, uint64_t trusted,
                   uint64_t base, int cacheable)
{
    struct task_base r = task_base_pick(cpl, gs, kgs, trusted);
    if (r.base == base && r.cacheable == cacheable) {
        check_passed++;
        return;
    }
    check_failed++;
    printf("FAIL %s: cpl %u gs %#llx kgs %#llx trusted %#llx: base %#llx cacheable %d, want %#llx %d\n",
           what, cpl, (unsigned long long)gs, (unsigned long long)kgs, (unsigned long long)trusted,
           (unsigned long long)r.base, r.cacheable, (unsigned long long)base, cacheable);
}

int main(void)
{
    /* user mode: the kernel's base is the swapped one */
    expect("user, ordinary GS", 3, USER, KBASE, 0, KBASE, 1);
    expect("user, GS 0", 3, 0, KBASE, 0, KBASE, 1);
    expect("user, WRGSBASE to a kernel address", 3, FORGED, KBASE, 0, KBASE, 1);
    expect("user, WRGSBASE to a kernel address, trusted known", 3, FORGED, KBASE, KBASE, KBASE, 1);
    expect("user, no kernel base yet (early boot)", 3, FORGED, 0, 0, 0, 0);
    expect("user, kernel GS base not a kernel address", 3, KBASE, USER, 0, 0, 0);
    /* kernel mode after SWAPGS: GS is the kernel's */
    expect("kernel, trusted known", 0, KBASE, USER, KBASE, KBASE, 1);
    expect("kernel, nothing trusted yet: used, not cached", 0, KBASE, USER, 0, KBASE, 0);
    /* kernel mode in the entry code before SWAPGS: GS is still the user's */
    expect("kernel entry, user's forged GS: not cached", 0, FORGED, KBASE, KBASE, FORGED, 0);
    expect("kernel entry, user's ordinary GS: the kernel's from KGS", 0, USER, KBASE, KBASE, KBASE, 1);
    expect("kernel entry, user's ordinary GS, nothing trusted", 0, USER, KBASE, 0, KBASE, 0);
    expect("kernel, neither a kernel address", 0, USER, USER, KBASE, 0, 0);
    expect("CPL 1 as kernel", 1, KBASE, USER, KBASE, KBASE, 1);
    return check_summary("test_task_base");
}
