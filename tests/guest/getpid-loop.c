/* getpid-loop N [nomark] - the trace test's workload: N getpid() system calls between two
 * hvtrace marks (start before the first, stop after the last), so the trace window holds
 * exactly this program's loop, the kernel's syscall path, and whatever interrupts arrive. It
 * pins itself to the CPU it starts on. With "nomark" it sets no marks and says
 * "getpid-loop: start pid=P" before the loop instead, so the host can start and stop tracing
 * (hvt trace) while the loop runs. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "hvt_guest.h"

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
    if (mark) {
        hvt_mark(1);
    } else {
        printf("getpid-loop: start pid=%ld calls=%ld\n", pid, n);
        fflush(stdout);
    }
    for (long i = 0; i < n; i++)
        bad += syscall(SYS_getpid) != pid;       /* the raw syscall: no libc caching */
    if (mark)
        hvt_mark(0);
    printf("getpid-loop: pid=%ld calls=%ld mismatches=%ld\n", pid, n, bad);
    return bad != 0;
}
