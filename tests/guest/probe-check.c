/* probe-check N SYMBOL - the probe test's guest side (tests/probe/test-probes.sh):
 *   1. finds SYMBOL in /proc/kallsyms and reads its first 64 bytes through /proc/kcore;
 *   2. arms the boot configuration's probes (HVT_HC_PROBE_ARM_CFG);
 *   3. runs exactly N getpid() system calls on each CPU at once (one child pinned to each;
 *      nothing else in the child makes one);
 *   4. asks for the engine's counters (HVT_HC_PROBE_STATS), reads the 64 bytes again through
 *      /proc/kcore (the guest must see its own code, not the probes), and a checksum of the
 *      whole kernel text [_stext, _etext): equal to the one taken before arming;
 *   5. runs the workload again with the guest's own kprobe on SYMBOL while ftrace patches its
 *      fentry site on and off: our two probes must fire exactly twice per kprobe hit;
 *   6. checks a user program's own INT3 still raises SIGTRAP in it;
 *   7. disarms (HVT_HC_PROBE_DISARM_LOG), which logs every probe's counts.
 * Prints HVT-RESULT lines (init's format) and "probe-check: calls=N cpus=C". */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "hvt_guest.h"

static uint64_t kallsyms(const char *name)
{
    FILE *f = fopen("/proc/kallsyms", "r");
    char line[512], sym[256], type;
    unsigned long long a;
    uint64_t found = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%llx %c %255s", &a, &type, sym) == 3 && !strcmp(sym, name)) {
            found = a;
            break;
        }
    if (f)
        fclose(f);
    return found;
}

/* len bytes of kernel virtual memory at va, through /proc/kcore (an ELF core file). */
static int kcore_read(uint64_t va, void *buf, size_t len)
{
    int fd = open("/proc/kcore", O_RDONLY);
    if (fd < 0)
        return -1;
    Elf64_Ehdr eh;
    int rc = -1;
    if (pread(fd, &eh, sizeof eh, 0) == sizeof eh)
        for (int i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof ph, eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof ph)
                break;
            if (ph.p_type == PT_LOAD && va >= ph.p_vaddr && va + len <= ph.p_vaddr + ph.p_filesz) {
                rc = pread(fd, buf, len, (off_t)(ph.p_offset + va - ph.p_vaddr)) == (ssize_t)len ? 0 : -1;
                break;
            }
        }
    close(fd);
    return rc;
}

/* FNV-1a over the kernel text [_stext, _etext) read through /proc/kcore; 0 if unreadable. */
static uint64_t text_sum(void)
{
    uint64_t lo = kallsyms("_stext"), hi = kallsyms("_etext"), h = 0xcbf29ce484222325ull;
    static unsigned char buf[1 << 16];
    if (!lo || hi <= lo)
        return 0;
    for (uint64_t a = lo; a < hi; a += sizeof buf) {
        size_t n = hi - a < sizeof buf ? hi - a : sizeof buf;
        if (kcore_read(a, buf, n))
            return 0;
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
    }
    return h;
}

static int64_t probe_call(enum hvt_hc_probe_op what, uint64_t *armed)
{
    uint64_t b = what, c = 0, d = 0;
    int64_t st = hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    if (armed)
        *armed = b;
    return st;
}

static void loop_on(int cpu, long n)
{
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one))
        _exit(3);
    long pid = syscall(SYS_getpid), bad = 0;     /* the first of exactly n calls */
    for (long i = 1; i < n; i++)
        bad += syscall(SYS_getpid) != pid;
    _exit(bad != 0);
}

static volatile sig_atomic_t trapped;
static void on_trap(int sig) { (void)sig; trapped = 1; }

static int own_int3(void)
{
    pid_t c = fork();
    if (c == 0) {
        signal(SIGTRAP, on_trap);
        __asm__ volatile("int3");
        _exit(trapped ? 0 : 1);
    }
    int st = 0;
    waitpid(c, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static uint64_t kprobe_hits(const char *name)
{
    FILE *f = fopen("/sys/kernel/tracing/kprobe_profile", "r");
    char line[512], ev[256];
    unsigned long long hits = 0, miss;
    uint64_t found = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%255s %llu %llu", ev, &hits, &miss) == 3 && !strcmp(ev, name))
            found = hits;
    if (f)
        fclose(f);
    return found;
}

static void engine_fires(uint64_t *fires)
{
    uint64_t b = 2, c = 0, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    *fires = b;
}

/* The guest's own kprobe on the probed function at the same time, with ftrace turning the
 * function's fentry site on and off meanwhile (text_poke_bp on the probed page): our entry
 * and return probes must fire exactly twice per kprobe hit. */
static int coexist(long n, const char *sym)
{
    char cmd[512];
    if (system("mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; test -e /sys/kernel/tracing/kprobe_events"))
        return -1;
    /* hvtcheck counts; hvttoggle, on the same function, is switched on and off meanwhile:
     * each switch makes ftrace re-patch the fentry call (text_poke_bp on the probed page). */
    snprintf(cmd, sizeof cmd, "echo 'p:hvtcheck %s' > /sys/kernel/tracing/kprobe_events && "
             "echo 'p:hvttoggle %s' >> /sys/kernel/tracing/kprobe_events && "
             "echo 1 > /sys/kernel/tracing/events/kprobes/hvtcheck/enable", sym, sym);
    if (system(cmd)) {
        printf("probe-check: coexist: '%s' failed\n", cmd);
        return -1;
    }
    uint64_t k0 = kprobe_hits("hvtcheck"), f0, f1;
    engine_fires(&f0);
    pid_t toggler = fork();
    if (toggler == 0) {
        for (int i = 0; i < 4; i++) {
            if (system("echo 1 > /sys/kernel/tracing/events/kprobes/hvttoggle/enable") ||
                system("echo 0 > /sys/kernel/tracing/events/kprobes/hvttoggle/enable"))
                _exit(1);
        }
        _exit(0);
    }
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t kids[64];
    for (long c = 0; c < ncpu && c < 64; c++)
        if ((kids[c] = fork()) == 0)
            loop_on((int)c, n);
    int ok = 1, st = 0;
    for (long c = 0; c < ncpu && c < 64; c++) {
        waitpid(kids[c], &st, 0);
        ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    }
    waitpid(toggler, &st, 0);
    ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
    engine_fires(&f1);
    uint64_t k1 = kprobe_hits("hvtcheck");
    if (system("echo 0 > /sys/kernel/tracing/events/kprobes/hvtcheck/enable; echo > /sys/kernel/tracing/kprobe_events"))
        ok = 0;
    printf("probe-check: coexist: kprobe hits %llu, our firings %llu, workload %s\n",
           (unsigned long long)(k1 - k0), (unsigned long long)(f1 - f0), ok ? "ok" : "FAILED");
    return ok && k1 - k0 >= (uint64_t)(n * ncpu) && f1 - f0 == 2 * (k1 - k0);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    const char *sym = argc > 2 ? argv[2] : "__x64_sys_getpid";
    if (!hvt_present()) {
        fprintf(stderr, "probe-check: hvtrace not detected\n");
        return 2;
    }
    uint64_t va = kallsyms(sym);
    unsigned char before[64], after[64];
    int have = va && kcore_read(va, before, sizeof before) == 0;
    printf("probe-check: %s at %llx%s\n", sym, (unsigned long long)va, have ? "" : " (kcore unreadable)");
    uint64_t sum_before = text_sum();       /* the whole kernel text, nothing armed */
    uint64_t armed = 0;
    int64_t st = probe_call(HVT_HC_PROBE_ARM_CFG, &armed);
    printf("HVT-RESULT: name=probe-arm %s status=%lld armed=%llu\n", st == HVT_HC_OK && armed ? "ok" : "FAIL",
           (long long)st, (unsigned long long)armed);
    fflush(stdout);
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    pid_t kids[64];
    for (long c = 0; c < ncpu && c < 64; c++)
        if ((kids[c] = fork()) == 0)
            loop_on((int)c, n);
    int ok = 1;
    for (long c = 0; c < ncpu && c < 64; c++) {
        int s = 0;
        waitpid(kids[c], &s, 0);
        ok &= WIFEXITED(s) && WEXITSTATUS(s) == 0;
    }
    printf("HVT-RESULT: name=probe-workload %s\n", ok ? "ok" : "FAIL");
    probe_call(HVT_HC_PROBE_STATS, 0);                      /* the counters after the workload */
    int same = have && kcore_read(va, after, sizeof after) == 0 && !memcmp(before, after, sizeof before);
    printf("HVT-RESULT: name=probe-kcore %s\n", same ? "ok" : "FAIL");
    uint64_t sum_armed = text_sum();
    printf("HVT-RESULT: name=probe-textsum %s before=%016llx armed=%016llx\n",
           sum_before && sum_before == sum_armed ? "ok" : "FAIL", (unsigned long long)sum_before,
           (unsigned long long)sum_armed);
    int co = coexist(n, sym);
    printf("HVT-RESULT: name=probe-kprobe-ftrace %s\n", co > 0 ? "ok" : "FAIL");
    printf("HVT-RESULT: name=probe-own-int3 %s\n", own_int3() ? "ok" : "FAIL");
    st = probe_call(HVT_HC_PROBE_DISARM_LOG, 0);
    printf("HVT-RESULT: name=probe-disarm %s\n", st == HVT_HC_OK ? "ok" : "FAIL");
    printf("probe-check: calls=%ld cpus=%ld\n", n, ncpu);
    return 0;
}
