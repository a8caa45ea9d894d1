/* probe-net N | wait | settle - the guest side of the live-probe tests over the NIC
 * (tests/probe/test-probes-net.sh). With N:
 *   1. says "probe-net: waiting" and makes a getpid() call every 0.2 s until the engine's
 *      firing counter (HVT_HC_PROBE_STATS) moves: the host has armed its probes through the
 *      collector (syscall::getpid:entry among them);
 *   2. runs exactly N getppid() calls on each CPU at once (one child pinned to each; nothing
 *      else in the guest makes that call), then 3 getpriority(0x7ac1, 0x7ac2) calls (EINVAL),
 *      says "probe-net: workload done calls=N cpus=C";
 *   3. waits until the counter stops moving (the host disarmed: getpid() no longer fires), at
 *      most 600 polls, and exits (init powers the machine off).
 * "wait" does step 1 alone, "settle" step 3 alone (a script runs its own workload between).
 * probe-net N zero: step 2 reads one byte of /dev/zero N times on each CPU instead (the read
 * reaches the driver's read_zero through the file's f_op->read, an indirect call: with IBT on,
 * the CPU checks that it lands on an ENDBR64). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "hvt_guest.h"

static uint64_t fires(void)
{
    uint64_t b = HVT_HC_PROBE_STATS, c = 0, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    return b;
}

static void getppid_on(int cpu, long n)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one))
        _exit(3);
    long pp = syscall(SYS_getppid), bad = 0;    /* the first of exactly n calls */
    for (long i = 1; i < n; i++)
        bad += syscall(SYS_getppid) != pp;
    _exit(bad != 0);
}

static void zero_on(int cpu, long n)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    int fd = open("/dev/zero", O_RDONLY);
    if (sched_setaffinity(0, sizeof one, &one) || fd < 0)
        _exit(3);
    long bad = 0;
    for (long i = 0; i < n; i++) {
        char c = 1;
        bad += read(fd, &c, 1) != 1 || c != 0;
    }
    _exit(bad != 0);
}

static int settle(void)
{
    uint64_t last = fires();
    for (int still = 0, i = 0; still < 3 && i < 600; i++) {
        syscall(SYS_getpid);
        usleep(200000);
        uint64_t f = fires();
        still = f == last ? still + 1 : 0;
        last = f;
    }
    printf("probe-net: disarmed, exiting\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "1000";
    long n = atol(mode);
    if (!hvt_present()) {
        fprintf(stderr, "probe-net: hvtrace not detected\n");
        return 2;
    }
    if (!strcmp(mode, "settle"))
        return settle();
    printf("probe-net: waiting for the host to arm (pid %d ppid %d uid %d gid %d)\n", (int)getpid(), (int)getppid(),
           (int)getuid(), (int)getgid());
    fflush(stdout);
    uint64_t f0 = fires();
    int polls = 0;
    while (fires() == f0) {
        syscall(SYS_getpid);
        usleep(200000);
        if (++polls == 3000) {
            printf("probe-net: never armed\n");
            return 1;
        }
    }
    if (!strcmp(mode, "wait")) {
        printf("probe-net: armed\n");
        return 0;
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t kids[64];
    int zero = argc > 2 && !strcmp(argv[2], "zero");
    for (long c = 0; c < ncpu && c < 64; c++)
        if ((kids[c] = fork()) == 0) {
            if (zero)
                zero_on((int)c, n);
            getppid_on((int)c, n);
        }
    int ok = 1;
    for (long c = 0; c < ncpu && c < 64; c++) {
        int s = 0;
        waitpid(kids[c], &s, 0);
        ok &= WIFEXITED(s) && WEXITSTATUS(s) == 0;
    }
    /* three calls with known arguments that fail with EINVAL (no such 'which') */
    for (int i = 0; i < 3; i++)
        ok &= syscall(SYS_getpriority, 0x7ac1, 0x7ac2) == -1;
    printf("probe-net: workload done calls=%ld cpus=%ld %s\n", n, ncpu, ok ? "ok" : "FAIL");
    fflush(stdout);
    settle();
    return ok ? 0 : 1;
}
