/* probe-user N [NAME] - the guest side of the user-probe test (tests/probe/test-probes-net.sh,
 * run user). Prints "probe-user: pid=P fn=0xADDR" (the process and the function the host probes
 * with addr:pidP:0xADDR:), then, like probe-net, "probe-net: waiting" and calls the function
 * every 0.2 s until the engine's firing counter moves (that call fired: the probe is armed),
 * then exactly N more calls. A child forked before arming shares the function's page; once the
 * parent is done it makes N calls of its own that must compute right (it runs the page the
 * parent's probe is planted on) and must not fire the parent's probe. With NAME the child
 * renames itself NAME (prctl) and the host also probes the same address by that name
 * (addr:NAME:0xADDR:): the child then waits until its probe is armed the same way and its N
 * calls must fire N times; without NAME they must fire none. The parent then compares the
 * function's bytes with a copy taken before arming (a process reads its own code, not the
 * probe). Says "probe-net: workload done calls=N ok" (or FAIL), then waits for the disarm and
 * says how many of that wait's calls fired (the host disarms some time after "done"). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "hvt_guest.h"
#include "probe_wait.h"

__attribute__((noinline)) long user_target(long x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

/* The probed function as the waits' poke. */
static void poke_target(int i) { user_target(i); }

static long calls(long n)
{
    long bad = 0;
    for (long i = 0; i < n; i++)
        bad += user_target(i) != i * 3 + 1;
    return bad;
}

/* Call the function every 0.2 s until a firing shows the probe armed (that call fired). */
static int wait_armed(void) { return probe_wait_armed(poke_target); }

/* A child that shares the text page and, on the parent's word, makes n calls: renamed
 * 'name' first if given (then it waits for its own probe to be armed), it reports how many
 * firings its n calls made. */
struct kid { pid_t pid; int go, back; };
static int spawn(struct kid *k, long n, const char *name)
{
    int go[2], back[2];
    if (pipe(go) || pipe(back) || (k->pid = fork()) < 0)
        return -1;
    if (k->pid == 0) {
        char c;
        if (name && prctl(PR_SET_NAME, name))
            _exit(4);
        if (read(go[0], &c, 1) != 1 || (name && wait_armed()))
            _exit(3);
        uint64_t fa = fires();             /* only this process calls the function now */
        long bad = calls(n);
        uint64_t fb = fires() - fa;
        _exit(write(back[1], &fb, sizeof fb) != sizeof fb || bad ? 1 : 0);
    }
    k->go = go[1];
    k->back = back[0];
    return 0;
}

/* Let the child run; its firings (~0: it failed). */
static uint64_t run_kid(const struct kid *k)
{
    uint64_t cf = ~0ull;
    int st = 0;
    if (write(k->go, "g", 1) != 1 || waitpid(k->pid, &st, 0) != k->pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != 0 || read(k->back, &cf, sizeof cf) != sizeof cf)
        return ~0ull;
    return cf;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    const char *name = argc > 2 ? argv[2] : NULL;
    if (!hvt_present())
        return 2;
    unsigned char before[32], after[32];
    memcpy(before, (const void *)user_target, sizeof before);
    struct kid plain, named;
    if (spawn(&plain, n, NULL) || (name && spawn(&named, n, name)))
        return 2;
    printf("probe-user: pid=%d fn=%p\n", getpid(), (void *)user_target);
    printf("probe-net: waiting for the host to arm\n");
    fflush(stdout);
    if (wait_armed()) {
        printf("probe-user: never armed\n");
        return 1;
    }
    long bad = calls(n);
    uint64_t f1 = fires();
    int child_ok = 1;
    if (name) {                            /* its calls and the one that showed its probe armed */
        uint64_t cf = run_kid(&named);
        child_ok = cf == (uint64_t)n;
        printf("probe-user: child %s %s (its %ld calls: %llu firings)\n", name, child_ok ? "ok" : "FAIL",
               n, (unsigned long long)cf);
    }
    uint64_t f2 = fires(), cf = run_kid(&plain), f3 = fires();
    child_ok &= cf == 0 && f3 == f2;
    printf("probe-user: child %s (its %ld calls: %llu firings)\n", cf == 0 ? "ok" : "FAIL", n,
           (unsigned long long)cf);
    memcpy(after, (const void *)user_target, sizeof after);
    int same = !memcmp(before, after, sizeof before);
    printf("probe-user: own code read back %s\n", same ? "the same" : "CHANGED");
    int all_ok = !bad && child_ok && same && f2 - f1 == (name ? (uint64_t)n + 1 : 0);
    printf("probe-net: workload done calls=%ld %s\n", n, all_ok ? "ok" : "FAIL");
    fflush(stdout);
    uint64_t f_done = fires();
    probe_wait_disarmed(poke_target);
    /* The wait's pokes call the function: those made before the host's disarm fired the
     * probe it counts, and its count (taken after the disarm) holds them. (No apostrophe in
     * the line: the test quotes the console in single quotes.) */
    printf("probe-user: calls of the disarm wait that fired: %llu\n", (unsigned long long)(fires() - f_done));
    return 0;
}
