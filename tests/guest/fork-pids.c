/* fork-pids N - N children forked and exited one after another on one CPU, each named
 * "fork-pid", saying its pid and then making one getppid() call: what a probe says of each
 * call's pid must be that child's own (a new task often takes the slab object, so the
 * address, of the task that exited before it: 100 ms apart, an RCU grace period has freed it). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 20;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof one, &one);   /* the children too: one CPU's view throughout */
    int bad = 0;
    for (long i = 0; i < n; i++) {
        fflush(stdout);
        pid_t p = fork();
        if (p == 0) {
            prctl(PR_SET_NAME, "fork-pid");
            printf("fork-pids: child pid=%d\n", (int)getpid());
            fflush(stdout);
            syscall(SYS_getppid);
            _exit(0);
        }
        int s = 0;
        if (p < 0 || waitpid(p, &s, 0) != p || !WIFEXITED(s))
            bad++;
        usleep(100000);
    }
    printf("fork-pids: %ld children, %d failed\n", n, bad);
    return bad != 0;
}
