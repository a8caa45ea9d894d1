/* d-work - the guest side of test-d (tests/d/test-d-net.sh): a workload that knows its own
 * counts, for D programs to measure. It says "probe-net: waiting" and makes a getpid() call
 * every 0.2 s until the engine's firing counter moves (the host's program is armed: it
 * probes getpid), then, each step printing what it did:
 *   1. a kprobe event on __x64_sys_getppid (the guest's own count, tracefs), then two children
 *      renamed dw-one and dw-two make 300 and 500 getppid() calls; the kprobe's hits;
 *   2. reads of /dev/zero of known sizes: 1 byte x 10, 100 x 20, 5000 x 5, 70000 x 3;
 *   3. opens of known paths (created): /tmp/dw-a once, /tmp/dw-bb twice, /tmp/dw-ccc 3 times;
 *   4. three getpgid(0) calls (the program dereferences bad pointers there) and checks that
 *      its own memory and results are still right;
 * then "probe-net: workload done ... ok" and waits for the disarm ("probe-net: disarmed").
 * Nothing else in the guest calls getppid() or getpgid(). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "hvt_guest.h"
#include "probe_wait.h"

/* Read in a child named dw-reader: d-work's own reads are only the ones it counts. */
static unsigned long long kprobe_hits(const char *name)
{
    int p[2];
    unsigned long long found = 0;
    if (pipe(p))
        return 0;
    if (fork() == 0) {
        prctl(PR_SET_NAME, "dw-reader");
        FILE *f = fopen("/sys/kernel/tracing/kprobe_profile", "r");
        char line[512], ev[256];
        unsigned long long hits = 0, miss;
        while (f && fgets(line, sizeof line, f))
            if (sscanf(line, "%255s %llu %llu", ev, &hits, &miss) == 3 && !strcmp(ev, name))
                found = hits;
        _exit(write(p[1], &found, sizeof found) != sizeof found);
    }
    close(p[1]);
    if (read(p[0], &found, sizeof found) != sizeof found)   /* counted: 8 bytes, bucket 8 */
        found = 0;
    close(p[0]);
    wait(NULL);
    return found;
}

static int getppids(const char *name, long n)
{
    pid_t c = fork();
    if (c == 0) {
        prctl(PR_SET_NAME, name);
        pid_t pp = (pid_t)syscall(SYS_getppid);
        long bad = 0;
        for (long i = 1; i < n; i++)
            bad += syscall(SYS_getppid) != pp;
        _exit(bad != 0);
    }
    int st = 0;
    waitpid(c, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int main(void)
{
    if (!hvt_present())
        return 2;
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    if (probe_wait_armed(probe_poke_getpid))
        return 1;
    int ok = 1;
    /* 1. per-process counts, and the guest's own kprobe count of the same function */
    int kp = !system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; "
                     "echo 'p:dwork __x64_sys_getppid' > /sys/kernel/tracing/kprobe_events && "
                     "echo 1 > /sys/kernel/tracing/events/kprobes/dwork/enable");
    unsigned long long k0 = kprobe_hits("dwork");
    ok &= getppids("dw-one", 300) & getppids("dw-two", 500);
    unsigned long long k1 = kprobe_hits("dwork");
    if (kp && system("echo 0 > /sys/kernel/tracing/events/kprobes/dwork/enable; "
                     "echo > /sys/kernel/tracing/kprobe_events"))
        ok = 0;
    printf("d-work: getppid dw-one=300 dw-two=500 kprobe=%llu%s\n", k1 - k0, kp ? "" : " (no kprobe)");
    /* 2. reads of known sizes */
    static char buf[70000];
    static const struct { long size, times; } reads[] = { { 1, 10 }, { 100, 20 }, { 5000, 5 }, { 70000, 3 } };
    int z = open("/dev/zero", O_RDONLY);
    for (unsigned i = 0; i < sizeof reads / sizeof reads[0]; i++)
        for (long t = 0; t < reads[i].times; t++)
            ok &= read(z, buf, (size_t)reads[i].size) == reads[i].size;
    close(z);
    printf("d-work: reads 1x10 100x20 5000x5 70000x3\n");
    /* 3. opens of known paths */
    static const char *paths[] = { "/tmp/dw-a", "/tmp/dw-bb", "/tmp/dw-ccc" };
    for (int i = 0; i < 3; i++)
        for (int t = 0; t <= i; t++) {
            int fd = open(paths[i], O_CREAT | O_RDWR, 0600);
            ok &= fd >= 0;
            if (fd >= 0)
                close(fd);
        }
    printf("d-work: opens /tmp/dw-a=1 /tmp/dw-bb=2 /tmp/dw-ccc=3\n");
    /* 4. where the program reads bad pointers: this process goes on unharmed */
    static volatile long canary = 0x5eed;
    for (int i = 0; i < 3; i++)
        ok &= syscall(SYS_getpgid, 0) == getpgrp();
    ok &= canary == 0x5eed;
    printf("probe-net: workload done calls=800 %s\n", ok ? "ok" : "FAIL");
    fflush(stdout);
    probe_wait_disarmed(probe_poke_getpid);
    return 0;
}
