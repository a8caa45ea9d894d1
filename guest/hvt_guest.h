/*
 * hvt_guest.h - guest-side helpers for hvtrace's hypercall ABI (include/hvt_hypercall.h):
 * detect hvtrace by its VERSION hypercall (the guest's CPUID is the bare CPU's by default, so
 * it says nothing); on bare metal that VMCALL raises #UD, which a process sees as SIGILL
 * (another hypervisor may raise #GP: SIGSEGV): caught here, and the answer is "absent".
 */
#ifndef HVT_GUEST_H
#define HVT_GUEST_H
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <signal.h>
#include "hvt_hypercall.h"

static inline int64_t hvt_hypercall(uint64_t func, uint64_t *rbx, uint64_t *rcx, uint64_t *rdx)
{
    uint64_t rax = HVT_HC_MAGIC | func;
    __asm__ volatile("vmcall" : "+a"(rax), "+b"(*rbx), "+c"(*rcx), "+d"(*rdx) :: "memory");
    return (int64_t)rax;
}

static sigjmp_buf hvt_probe_jmp;
static inline void hvt_probe_sigill(int sig)
{
    (void)sig;
    siglongjmp(hvt_probe_jmp, 1);
}

/* 1 when hvtrace answers its VERSION hypercall (fills *version when not NULL), 0 when the
 * VMCALL faults (SIGILL, or SIGSEGV under a hypervisor that raises #GP: no hvtrace) or
 * answers something else. */
static inline int hvt_detect(uint64_t *version)
{
    struct sigaction sa, old_ill, old_segv;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = hvt_probe_sigill;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGILL, &sa, &old_ill))
        return 0;
    sigaction(SIGSEGV, &sa, &old_segv);   /* some hypervisors answer a user VMCALL with #GP */
    volatile int found = 0;
    if (!sigsetjmp(hvt_probe_jmp, 1)) {
        uint64_t b = 0, c = 0, d = 0;
        int64_t st = hvt_hypercall(HVT_HC_VERSION, &b, &c, &d);
        found = st == HVT_HC_OK && c == HVT_HC_ABI_REVISION;
        if (found && version)
            *version = b;
    }
    sigaction(SIGILL, &old_ill, NULL);
    sigaction(SIGSEGV, &old_segv, NULL);
    return found;
}

static inline int hvt_present(void) { return hvt_detect(NULL); }

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
