/* probe-user N - the guest side of the user-probe test (tests/probe/test-probes-net.sh, run
 * user). Prints "probe-user: pid=P fn=0xADDR" (the process and the function the host probes
 * with addr:pidP:0xADDR:), then, like probe-net, "probe-net: waiting" and calls the function
 * every 0.2 s until the engine's firing counter moves (that call fired: the probe is armed),
 * then exactly N more calls. A child forked before arming shares the function's page; once the
 * parent is done it makes N calls of its own that must not fire and must compute right (it
 * runs the page the parent's probe is planted on). The parent then compares the function's
 * bytes with a copy taken before arming (a process reads its own code, not the probe).
 * Says "probe-net: workload done calls=N ok" (or FAIL), then waits for the disarm. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "hvt_guest.h"

__attribute__((noinline)) long user_target(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

static uint64_t fires(void)
{
    uint64_t b = 2, c = 0, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    return b;
}

static long calls(long n)
{
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += user_target(i) != i * 3 + 1;
    return bad;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    if (!hvt_present())
        return 2;
    unsigned char before[32], after[32];
    memcpy(before, (const void *)user_target, sizeof before);
    int go[2];
    if (pipe(go))
        return 2;
    pid_t child = fork();
    if (child == 0) {                      /* shares the text page; waits for the parent */
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(3);
        _exit(calls(n) ? 1 : 0);
    }
    printf("probe-user: pid=%d fn=%p\n", getpid(), (void *)user_target);
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    uint64_t f0 = fires();
    int polls = 0;
    while (user_target(polls), fires() == f0) {
        usleep(200000);
        if (++polls == 3000) {
            printf("probe-user: never armed\n");
            return 1;
        }
    }
    long bad = calls(n);
    uint64_t f1 = fires();
    if (write(go[1], "g", 1) != 1)
        return 2;
    int st = 0;
    waitpid(child, &st, 0);
    uint64_t f2 = fires();
    int child_ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    memcpy(after, (const void *)user_target, sizeof after);
    int same = !memcmp(before, after, sizeof before);
    printf("probe-user: child %s (its %ld calls: %llu firings)\n", child_ok ? "ok" : "FAIL", n,
           (unsigned long long)(f2 - f1));
    printf("probe-user: own code read back %s\n", same ? "the same" : "CHANGED");
    printf("probe-net: workload done calls=%ld %s\n", n, !bad && child_ok && same && f2 == f1 ? "ok" : "FAIL");
    fflush(stdout);
    uint64_t last = fires();
    for (int still = 0, i = 0; still < 3 && i < 600; i++) {
        usleep(200000);
        uint64_t f = fires();
        still = f == last ? still + 1 : 0;
        last = f;
        user_target(i);
    }
    printf("probe-net: disarmed, exiting\n");
    return 0;
}
