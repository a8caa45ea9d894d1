/*
 * probe_wait.h - the probe runs' guest workloads wait for the host as one: the host arms its
 * program after the workload says "probe-net: waiting for the host to arm", and disarms it
 * after "probe-net: workload done"; the workload sees both in the probe engine's firing
 * counter (the HVT_HC_PROBE_STATS hypercall), poking the probed code every 0.2 s meanwhile.
 */
#ifndef HVT_PROBE_WAIT_H
#define HVT_PROBE_WAIT_H
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include "hvt_guest.h"

#define PROBE_WAIT_US         200000
#define PROBE_WAIT_ARM_POLLS  3000     /* 10 minutes */
#define PROBE_WAIT_DONE_POLLS 600      /* 2 minutes */

/* Firings the probe engine has counted, every probe and CPU. */
static uint64_t fires(void)
{
    uint64_t b = HVT_HC_PROBE_STATS, c = 0, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    return b;
}

/* Poke (with the poll's number) until a firing shows the host's program armed: 0, or -1
 * after PROBE_WAIT_ARM_POLLS polls. */
static inline int probe_wait_armed(void (*poke)(int))
{
    uint64_t f0 = fires();
    for (int polls = 0; poke(polls), fires() == f0; polls++) {
        usleep(PROBE_WAIT_US);
        if (polls == PROBE_WAIT_ARM_POLLS)
            return -1;
    }
    return 0;
}

/* Until the counter stands still for three polls (the host disarmed), poking after each (poke
 * may be NULL), at most PROBE_WAIT_DONE_POLLS; then says so. */
static inline void probe_wait_disarmed(void (*poke)(int))
{
    uint64_t last = fires();
    for (int still = 0, i = 0; still < 3 && i < PROBE_WAIT_DONE_POLLS; i++) {
        usleep(PROBE_WAIT_US);
        uint64_t f = fires();
        still = f == last ? still + 1 : 0;
        last = f;
        if (poke)
            poke(i);
    }
    printf("probe-net: disarmed, exiting\n");
}

/* The usual poke: a system call, which the runs' syscall and fbt probes see. */
static inline void probe_poke_getpid(int i)
{
    (void)i;
    getpid();
}

#endif
