/* getpid-loop N [nomark | again=M | sleep=K] [read=B] - the trace test's workload: N getpid() system calls
 * between two hvtrace marks (start before the first, stop after the last), so the trace window
 * holds exactly this program's loop, the kernel's syscall path, and whatever interrupts
 * arrive. It pins itself to the CPU it starts on. With "nomark" it sets no marks and says
 * "getpid-loop: start pid=P" before the loop instead, so the host can start and stop tracing
 * (hvt trace) while the loop runs. With "again=M" a second marked window of M calls follows,
 * after a 3 s pause, as soon as the hypervisor takes its start mark (test-trace-net run C: a
 * window after the link came back). With "read=B" it then reads B bytes of /dev/zero, 4096 at
 * most a call, and says "getpid-loop: read B bytes in R reads": the only reads it makes (it is
 * linked statically: no loader reads a library), for D sums of read's return values. With
 * "sleep=K" it sleeps 200 us after every K calls, inside the window: the scoped trace's test
 * (scope-spin) has a spinner on the same CPU, so the window holds context switches out of and
 * back into this process (sched_yield would not switch: the spinner's vruntime is far ahead). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "hvt_guest.h"

static long sleep_every;

static long window(long n, long pid, int mark)
{
    long bad = 0;
    /* A start mark is refused (EBUSY) while the trace's link is down: wait for it. */
    for (int tries = 0; mark && hvt_mark(1) == HVT_HC_EBUSY && tries < 600; tries++) {
        struct timespec wait = { 0, 100000000 };
        nanosleep(&wait, 0);
    }
    for (long i = 0; i < n; i++) {
        bad += syscall(SYS_getpid) != pid;       /* the raw syscall: no libc caching */
        if (sleep_every && i % sleep_every == sleep_every - 1) {
            struct timespec nap = { 0, 200000 };
            nanosleep(&nap, 0);
        }
    }
    if (mark)
        hvt_mark(0);
    return bad;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    if (!hvt_present()) {
        fprintf(stderr, "getpid-loop: hvtrace not detected\n");
        return 2;
    }
    hvt_pin_cpu("getpid-loop");
    long pid = getpid(), bad = 0;
    int mark = !(argc > 2 && !strcmp(argv[2], "nomark"));
    long again = argc > 2 && !strncmp(argv[2], "again=", 6) ? atol(argv[2] + 6) : 0;
    sleep_every = argc > 2 && !strncmp(argv[2], "sleep=", 6) ? atol(argv[2] + 6) : 0;
    if (!mark) {
        printf("getpid-loop: start pid=%ld calls=%ld\n", pid, n);
        fflush(stdout);
    }
    bad = window(n, pid, mark);
    printf("getpid-loop: pid=%ld calls=%ld mismatches=%ld\n", pid, n, bad);
    if (again > 0) {
        struct timespec pause = { 3, 0 };
        nanosleep(&pause, 0);
        long bad2 = window(again, pid, 1);
        printf("getpid-loop: second window: calls=%ld mismatches=%ld\n", again, bad2);
        bad += bad2;
    }
    long want = argc > 3 && !strncmp(argv[3], "read=", 5) ? atol(argv[3] + 5) : 0;
    if (want > 0) {
        static char buf[4096];
        long got = 0, reads = 0;
        int fd = open("/dev/zero", O_RDONLY);
        while (fd >= 0 && got < want) {
            ssize_t r = read(fd, buf, want - got < (long)sizeof buf ? (size_t)(want - got) : sizeof buf);
            if (r <= 0)
                break;
            got += r;
            reads++;
        }
        printf("getpid-loop: read %ld bytes in %ld reads\n", got, reads);
        bad += got != want;
    }
    return bad != 0;
}
