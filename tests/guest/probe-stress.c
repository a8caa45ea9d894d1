/* probe-stress CYCLES NPROBES - arm and disarm NPROBES entry probes (HVT_HC_PROBE_ARM_SPECS) CYCLES
 * times while a workload runs on every CPU, then check that no probe fires after the last
 * disarm. The functions are kernel text symbols from /proc/kallsyms, spread over the text
 * (every k-th), with the guest's own runtime addresses. Besides them every cycle arms one of
 * two overlapping sets of the functions that share __x64_sys_getpid's page (getpid itself in
 * both, the page's other functions alternating), which the workload's getpid loop fires on
 * every CPU: a probe slot or shadow page reused under a CPU still stepping over the old probe
 * would resume it at another probe's address (an oops, or getpid returning another value,
 * which the workload checks). Prints HVT-RESULT lines and "probe-stress: cycles=C probes=P
 * armed_last=A page_set=N". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <x86intrin.h>
#include "hvt_guest.h"

#define MAX_SYMS 200000

static uint64_t syms[MAX_SYMS];

static uint64_t getpid_fn;

static int text_symbols(void)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], name[256], type;
    unsigned long long a;
    int n = 0;
    while (f && fgets(line, sizeof line, f) && n < MAX_SYMS)
        if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 && (type == 'T' || type == 't') &&
            !strchr(line, '[') && a >= 0xffffffff80000000ull) {
            /* __pfx_ symbols are padding before a function, not code to probe */
            if (!strncmp(name, "__pfx_", 6))
                continue;
            if (!strcmp(name, "__x64_sys_getpid"))
                getpid_fn = a;
            syms[n++] = a;
        }
    if (f)
        fclose(f);
    return n;
}

static void counters(uint64_t *fires)
{
    uint64_t b = HVT_HC_PROBE_STATS, c = 0, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    *fires = b;
}

static void workload(int cpu)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    sched_setaffinity(0, sizeof one, &one);
    char buf[256];
    pid_t me = getpid();
    for (;;) {
        for (int i = 0; i < 100; i++)
            if (syscall(SYS_getpid) != me)
                _exit(3);               /* the probed getpid answered wrong */
        int fd = open("/proc/self/stat", O_RDONLY);
        if (fd >= 0) {
            if (read(fd, buf, sizeof buf) < 0)
                _exit(1);
            close(fd);
        }
    }
}

int main(int argc, char **argv)
{
    long cycles = argc > 1 ? atol(argv[1]) : 1000;
    long want = argc > 2 ? atol(argv[2]) : 300;
    if (!hvt_present())
        return 2;
    int n = text_symbols();
    static struct hvt_probe_spec spec[HVT_PROBE_SPECS_MAX];
    long np = 0;
    for (int i = n / 4; i < n && np < want && np < HVT_PROBE_SPECS_MAX - 64; i += n / 2 / (want + 1) + 1)
        if ((syms[i] & ~0xfffull) != (getpid_fn & ~0xfffull))      /* the page sets' own page */
            spec[np] = (struct hvt_probe_spec){ .id = (uint32_t)np + 1, .kind = 1, .lo = syms[i], .hi = syms[i] + 1 }, np++;
    /* The page sets: getpid in both, its page's other functions alternating. */
    static struct hvt_probe_spec page_set[2][64];
    long npage[2] = { 0, 0 }, others = 0;
    for (int i = 0; getpid_fn && i < n; i++) {
        if ((syms[i] & ~0xfffull) != (getpid_fn & ~0xfffull))
            continue;
        for (int s = 0; s < 2; s++) {
            if (npage[s] >= 64 || (syms[i] != getpid_fn && (others & 1) != s))
                continue;
            page_set[s][npage[s]] = (struct hvt_probe_spec){ .id = (uint32_t)(100000 + i), .kind = 1,
                                                             .lo = syms[i], .hi = syms[i] + 1 };
            npage[s]++;
        }
        if (syms[i] != getpid_fn)
            others++;
    }
    printf("probe-stress: %d text symbols, %ld probes, page sets of %ld and %ld functions\n", n, np,
           npage[0], npage[1]);
    fflush(stdout);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t kids[64];
    for (long c = 0; c < ncpu && c < 64; c++)
        if ((kids[c] = fork()) == 0)
            workload((int)c);
    uint64_t armed = 0, bad = 0;
    uint64_t fired0, fired1;
    counters(&fired0);
    static struct hvt_probe_spec all[HVT_PROBE_SPECS_MAX + 64];
    memcpy(all, spec, (size_t)np * sizeof spec[0]);
    for (long k = 0; k < cycles; k++) {
        long s = k & 1, total = np;
        for (long j = 0; j < npage[s] && total < HVT_PROBE_SPECS_MAX; j++)
            all[total++] = page_set[s][j];
        uint64_t b = HVT_HC_PROBE_ARM_SPECS, c = (uint64_t)all, d = (uint64_t)total | HVT_PROBE_NOWAIT;
        uint64_t t0 = __rdtsc();
        if (hvt_hypercall(HVT_HC_PROBE, &b, &c, &d) != HVT_HC_OK || c != (uint64_t)total)
            bad++;
        uint64_t t1 = __rdtsc();
        armed = b;
        b = HVT_HC_PROBE_DISARM, c = 0, d = 0;
        if (hvt_hypercall(HVT_HC_PROBE, &b, &c, &d) != HVT_HC_OK)
            bad++;
        uint64_t t2 = __rdtsc();
        if (k % 100 == 0 || k == cycles - 1) {
            printf("probe-stress: cycle %ld armed %llu (arm %llu ticks, disarm %llu)\n", k,
                   (unsigned long long)armed, (unsigned long long)(t1 - t0), (unsigned long long)(t2 - t1));
            fflush(stdout);
        }
    }
    counters(&fired1);
    printf("HVT-RESULT: name=probe-cycles %s bad=%llu armed_last=%llu\n", bad || !armed ? "FAIL" : "ok",
           (unsigned long long)bad, (unsigned long long)armed);
    /* Disarmed: the workload goes on; nothing may fire. */
    uint64_t f0, f1;
    counters(&f0);
    for (long i = 0; i < 100000; i++)        /* a workload here too, beside the children's */
        syscall(SYS_getpid);
    counters(&f1);                          /* (also logs the engine's counters: shown=0) */
    printf("HVT-RESULT: name=probe-after-disarm %s fires=%llu\n", f1 == f0 ? "ok" : "FAIL",
           (unsigned long long)(f1 - f0));
    for (long c = 0; c < ncpu && c < 64; c++)
        kill(kids[c], SIGKILL);
    int ok = 1;
    for (long c = 0; c < ncpu && c < 64; c++) {
        int st = 0;
        waitpid(kids[c], &st, 0);
        ok &= WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;   /* killed by us, nothing else */
    }
    printf("HVT-RESULT: name=probe-stress-workload %s\n", ok ? "ok" : "FAIL");
    printf("HVT-RESULT: name=probe-page-sets %s getpid=%s sets=%ld,%ld fired_while_cycling=%llu\n",
           getpid_fn && npage[0] >= 2 && npage[1] >= 2 && fired1 > fired0 ? "ok" : "FAIL",
           getpid_fn ? "found" : "missing", npage[0], npage[1], (unsigned long long)(fired1 - fired0));
    printf("probe-stress: cycles=%ld probes=%ld armed_last=%llu page_set=%ld\n", cycles, np,
           (unsigned long long)armed, npage[0] + npage[1]);
    return 0;
}
