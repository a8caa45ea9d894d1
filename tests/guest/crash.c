/* crash N - the flight-recorder test's workload: start tracing with an hvtrace mark, make N
 * getpid() calls (enough records to overwrite the recorder's ring), then crash the kernel
 * through /proc/sysrq-trigger ('c': panic). The trace must end at panic's entry (stop_at),
 * dumped from the ring, with what the ring overwrote counted. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "hvt_guest.h"

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000;
    if (!hvt_present()) {
        fprintf(stderr, "crash: hvtrace not detected\n");
        return 2;
    }
    hvt_pin_cpu("crash");
    int fd = open("/proc/sysrq-trigger", O_WRONLY);
    if (fd < 0) {
        perror("crash: /proc/sysrq-trigger");
        return 1;
    }
    printf("crash: %ld getpid calls, then sysrq c on cpu %d\n", n, sched_getcpu());
    fflush(stdout);
    hvt_mark(1);
    for (long i = 0; i < n; i++)
        syscall(SYS_getpid);
    if (write(fd, "c", 1) != 1)
        perror("crash: write");
    printf("crash: still alive?\n");
    return 1;
}
