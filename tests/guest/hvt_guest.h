/*
 * hvt_guest.h - guest-side helpers for hvtrace's hypercall ABI (include/hvt_hypercall.h):
 * detect hvtrace with CPUID first (VMCALL elsewhere raises #UD), then call it.
 */
#ifndef HVT_GUEST_H
#define HVT_GUEST_H
#include <stdint.h>
#include <string.h>
#include <cpuid.h>
#include "hvt_hypercall.h"

static inline int hvt_present(void)
{
    unsigned a, b, c, d;
    __cpuid(1, a, b, c, d);
    if (!(c & (1u << 31)))
        return 0;
    __cpuid(HVT_CPUID_LEAF_BASE, a, b, c, d);
    char sig[12];
    memcpy(sig, &b, 4); memcpy(sig + 4, &c, 4); memcpy(sig + 8, &d, 4);
    return memcmp(sig, HVT_CPUID_SIGNATURE, 12) == 0;
}

static inline int64_t hvt_hypercall(uint64_t func, uint64_t *rbx, uint64_t *rcx, uint64_t *rdx)
{
    uint64_t rax = HVT_HC_MAGIC | func;
    __asm__ volatile("vmcall" : "+a"(rax), "+b"(*rbx), "+c"(*rcx), "+d"(*rdx) :: "memory");
    return (int64_t)rax;
}

#ifdef _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
/* Stay on the CPU we run on: a trace window judged per CPU (the oracle counts per CPU from the
 * start mark to the stop mark) must not be split by a migration. */
static inline void hvt_pin_cpu(const char *who)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof one, &one))
        fprintf(stderr, "%s: sched_setaffinity failed\n", who);
}
#endif

/* Start (1) or stop (0) tracing: the HVT_HC_MARK hypercall. */
static inline int64_t hvt_mark(uint64_t what)
{
    uint64_t b = what, c = 0, d = 0;
    return hvt_hypercall(HVT_HC_MARK, &b, &c, &d);
}
#endif
