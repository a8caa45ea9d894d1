/* stable-work - the guest side of the stable run of test-probes-net (tests/probe/test-probes-net.sh,
 * its D program tests/d/programs/stable-work.d): a workload that knows what DTrace's proc and
 * sched providers should see of it. It says "probe-net: waiting" and makes a getpid() call every
 * 0.2 s until the engine's firing counter moves (the host's program is armed: it probes getpid),
 * then, between two getppid() calls (the program's window):
 *   1. one child per argument list of `lists` forked one after the other, each exec'ing
 *      /bin/stable-kid (this program under another name: it exits at once) with that list, and
 *      one more whose exec fails (no such file) and which exits with status 3; each waited for;
 *   2. on-CPU time measured by itself: between two getsid() calls with markers (0x57a1, 0x57a2)
 *      it spins SLICES times, sleeping 2 ms after each spin (a switch off the CPU and back),
 *      and reads CLOCK_THREAD_CPUTIME_ID right after the first marker and right before the
 *      second;
 *   3. between two more markers (0x57a3, 0x57a4), PIPES one-byte writes to a pipe of its own,
 *      each read back at once: pipe_write and pipe_read each take the pipe's mutex once
 *      (mutex_lock), 2 x PIPES acquisitions and releases of one lock, no other mutex;
 * and prints its pid, its forks, execs, failed execs and exits, each argument list as ps shows
 * it ("stable-work: psargs stable-kid alpha"), the on-CPU nanoseconds it measured and the guest
 * kernel's TSC rate as it reads it (rdtsc against CLOCK_MONOTONIC over the spins). Then "probe-net:
 * workload done" and waits for the disarm ("probe-net: disarmed"). As stable-kid it just exits. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <x86intrin.h>
#include "hvt_guest.h"
#include "probe_wait.h"

#define SLICES 12
#define SPIN   400000                      /* loop turns a spin: some 3 ms of guest time */
#define PIPES  40

static char *const lists[][6] = {
    { "stable-kid", NULL },
    { "stable-kid", "alpha", NULL },
    { "stable-kid", "two words", "3", NULL },
    { "stable-kid", "-x", "--long=yes", "last", NULL },
    { "stable-kid", "a", "b", "c", "d", NULL },
};
#define NLISTS (int)(sizeof lists / sizeof lists[0])

static int64_t ns(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static volatile uint64_t sink;

int main(int argc, char **argv)
{
    (void)argc;
    if (strstr(argv[0], "stable-kid"))
        return 0;
    if (!hvt_present())
        return 2;
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    if (probe_wait_armed(probe_poke_getpid))
        return 1;
    int ok = 1, forks = 0, execs = 0, fails = 0, exits = 0;
    syscall(SYS_getppid);                  /* the window opens */
    for (int i = 0; i <= NLISTS; i++) {
        pid_t c = fork();
        if (c == 0) {
            if (i < NLISTS)
                execv("/bin/stable-kid", lists[i]);
            else
                execv("/bin/no-such-program", lists[0]);
            _exit(3);
        }
        int st = 0;
        forks += c > 0;
        ok &= c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == (i < NLISTS ? 0 : 3);
        exits += c > 0;
        execs += i < NLISTS;
        fails += i == NLISTS;
    }
    syscall(SYS_getsid, 0x57a1);           /* the on-CPU measure */
    int64_t c0 = ns(CLOCK_THREAD_CPUTIME_ID), m0 = ns(CLOCK_MONOTONIC);
    uint64_t t0 = __rdtsc();
    for (int s = 0; s < SLICES; s++) {
        for (int i = 0; i < SPIN; i++)
            sink += (uint64_t)i * 7;
        usleep(2000);
    }
    uint64_t t1 = __rdtsc();
    int64_t c1 = ns(CLOCK_THREAD_CPUTIME_ID), m1 = ns(CLOCK_MONOTONIC);
    syscall(SYS_getsid, 0x57a2);
    int fds[2];                            /* the locks: a pipe's mutex, 2 x PIPES times */
    char b = 'x';
    ok &= pipe(fds) == 0;
    syscall(SYS_getsid, 0x57a3);
    for (int i = 0; i < PIPES; i++)
        ok &= write(fds[1], &b, 1) == 1 && read(fds[0], &b, 1) == 1;
    syscall(SYS_getsid, 0x57a4);
    close(fds[0]);
    close(fds[1]);
    syscall(SYS_getppid);                  /* and closes */
    for (int i = 0; i < NLISTS; i++) {
        printf("stable-work: psargs");
        for (int k = 0; lists[i][k]; k++)
            printf(" %s", lists[i][k]);
        printf("\n");
    }
    printf("stable-work: pid=%d forks=%d execs=%d execfail=%d exits=%d pipe_locks=%d cpu_ns=%lld tsc_khz=%lld\n",
           (int)getpid(), forks, execs, fails, exits, 2 * PIPES, (long long)(c1 - c0),
           (long long)((t1 - t0) * 1000000 / (uint64_t)(m1 - m0)));
    printf("probe-net: workload done calls=%d %s\n", forks, ok ? "ok" : "FAIL");
    fflush(stdout);
    probe_wait_disarmed(probe_poke_getpid);
    return 0;
}
