/* scope-spin N - the scoped trace's workload (make test-trace-scope, make bench-step): two
 * spinners, one pinned to this CPU and one to the next, count loop iterations; then
 * getpid-loop N runs on this CPU between its own hvtrace marks while they spin, sleeping
 * 200 us every 100 calls (sleep=100: the window holds switches out of it and back). A spinner reads
 * its own CPU's TSC (never dilated while it is not stepped) every 4096 iterations and keeps the
 * latest (tsc, count) pair, so its rate is measured on its own clock:
 *   scope-spin: untraced other=R same=R   iterations per TSC tick over an untraced second
 *   scope-spin: traced other=R same=R     the same over getpid-loop's run
 *   scope-spin: other_rate_ratio=X same_rate_ratio=Y   traced / untraced
 * (one iteration is a fixed number of instructions: the ratios are instruction-rate ratios).
 * The untraced second is also a reference window for the oracle Bochs (HVT_HC_VERSION with
 * RBX = "ORCL" 1 / 0: the hypervisor ignores RBX there), which counts each CPU's own
 * instructions: in Bochs a spinner's TSC rate also moves with the other CPU's work
 * (tests/platform/bochs-oracle.cc). */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "hvt_guest.h"

static void oracle_ref(uint64_t on)
{
    uint64_t b = 0x4f52434c00ull | on, c = 0, d = 0;
    hvt_hypercall(HVT_HC_VERSION, &b, &c, &d);
}

struct snap { volatile uint64_t tsc, count, seq; };

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s))
        fprintf(stderr, "scope-spin: cannot pin to cpu %d\n", cpu);
}

static pid_t spinner(struct snap *sn, int cpu)
{
    pid_t p = fork();
    if (p)
        return p;
    pin(cpu);
    for (uint64_t n = 0;; n++)
        if (!(n & 4095)) {
            sn->seq++;
            sn->tsc = rdtsc();
            sn->count = n;
            sn->seq++;
        }
}

static void take(const struct snap *sn, uint64_t *tsc, uint64_t *count)
{
    uint64_t s;
    do {
        s = sn->seq;
        *tsc = sn->tsc;
        *count = sn->count;
    } while ((s & 1) || s != sn->seq);
}

static double rate(const struct snap *sn, uint64_t t0, uint64_t c0)
{
    uint64_t t1, c1;
    take(sn, &t1, &c1);
    return t1 > t0 ? (double)(c1 - c0) / (double)(t1 - t0) : 0;
}

int main(int argc, char **argv)
{
    const char *n = argc > 1 ? argv[1] : "1000";
    int here = sched_getcpu(), ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
    pin(here);
    struct snap *sn = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sn == MAP_FAILED || ncpu < 2) {
        fprintf(stderr, "scope-spin: needs shared memory and 2 CPUs\n");
        return 2;
    }
    struct snap *other = &sn[0], *same = &sn[1];
    pid_t po = spinner(other, (here + 1) % ncpu), ps = spinner(same, here);
    struct timespec settle = { 0, 300000000 }, second = { 1, 0 };
    nanosleep(&settle, 0);
    uint64_t ot, oc, st, scnt;
    take(other, &ot, &oc);
    take(same, &st, &scnt);
    oracle_ref(1);
    nanosleep(&second, 0);
    oracle_ref(0);
    double ou = rate(other, ot, oc), su = rate(same, st, scnt);
    printf("scope-spin: untraced other=%.4f same=%.4f\n", ou, su);
    fflush(stdout);
    take(other, &ot, &oc);
    take(same, &st, &scnt);
    pid_t g = fork();
    if (!g) {
        execl("/bin/getpid-loop", "getpid-loop", n, "sleep=100", (char *)0);
        _exit(127);
    }
    int status = 0;
    waitpid(g, &status, 0);
    double ot_r = rate(other, ot, oc), st_r = rate(same, st, scnt);
    kill(po, SIGKILL);
    kill(ps, SIGKILL);
    waitpid(po, 0, 0);
    waitpid(ps, 0, 0);
    printf("scope-spin: traced other=%.4f same=%.4f\n", ot_r, st_r);
    printf("scope-spin: other_rate_ratio=%.4f same_rate_ratio=%.4f getpid-loop status=%d\n",
           ou > 0 ? ot_r / ou : 0, su > 0 ? st_r / su : 0, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
