/* probe-bench N - bench-probe's guest side (bench/probe.mk), on 1 CPU, where the TSC counts
 * every instruction retired, the hypervisor's included (docs/references.md). For each phase it
 * times N getpid() system calls with RDTSC and reads the probe engine's counters
 * (HVT_HC_PROBE_STATS: firings, the VM exits it caused):
 *   base      no probe
 *   entry     probe 1 (entry of __x64_sys_getpid) armed
 *   return    probe 2 (its return sites)
 *   addr      probe 3 (an address inside it)
 *   unprobed  probe 1 armed, N getppid() calls instead (same code page, no probe on its path)
 *   kprobe    no probe of ours; the guest's own kprobe on __x64_sys_getpid (tracefs)
 * and, timing N one-byte read()s of /dev/zero instead:
 *   rbase     no probe
 *   dcount    the D program /dcount.img (fbt::vfs_read:entry { @[execname] = count(); }),
 *             loaded with HVT_HC_PROBE_LOAD_D and armed with its specs (/dcount.specs)
 *   dquant    /dquant.img (fbt::vfs_read:entry { @ = quantize(arg2); })
 *   dstack    /dstack.img (fbt::vfs_read:entry { @[stack(10)] = count(); }: a kernel stack
 *             key, unwound in the hypervisor)
 *   dstack1   /dstack1.img (the same with stack(1): the key without the unwind)
 *   rkprobe   the guest's own kprobe on vfs_read
 * and, timing N kill(getpid(), SIGUSR1) with SIGUSR1 ignored (the kernel generates it and
 * drops it: one signal_generate tracepoint pass each):
 *   sbase     no probe
 *   sdt       /dsdt.img (sdt:signal::signal_generate { @[execname] = count(); }): the static
 *             tracepoint's site, its arguments computed by the recipe
 *   sfbt      /dsfbt.img (fbt::__send_signal_locked:entry, the same clause): the function the
 *             site is in, entered once per signal too
 * and entry, dcount, dquant and dstack again as entry_t, dcount_t, ... with the hypervisor timing
 * every firing by phase (HVT_HC_PROBE_COST), each then also printing the probes' phases;
 * then the performance model's calibration (cc1, cc4cl, cc4ag, ckey, calu, cvar, ci1, ci2: D
 * programs on vfs_read over the same reads; csys on read()'s system call entry: bench/probe.mk;
 * rbase2 and ckeyalt: no probe and ckey over reads of one and two bytes in turn, so its key
 * changes at every firing; pbase and pswitch: a ping-pong between two processes over pipes,
 * untraced and with vfs_read's entry armed plain and timed, every firing in a new task:
 * PROBEBENCH-TALLY name=P newtask=N switched=S) and its check: three workloads (wsys n
 * getpid()s, wmd5 md5sum of busybox, wfork a fork/exec loop), each untraced, then in rounds
 * with its program's probes armed plain and timed (a counting run), traced, untraced again:
 * PROBEBENCH-PREDICT name=P round=R u0=T tc=T fc=F own=T newtask=N switched=S t1=T f1=F u1=T ok=1.
 * One line a phase: PROBEBENCH-PHASE n=N name=P tsc=T fires=F exits=X
 * (timed phases also PROBEBENCH-COST name=P fires=F exit=TICKS lookup=TICKS ...) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <x86intrin.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "hvt_guest.h"
#include "hvt_probe.h"

static long n;
static int timed;                          /* the phases now are timed by phase (HVT_HC_PROBE_COST) */

static void cost_set(int on)
{
    uint64_t b = HVT_HC_PROBE_COST, c = (uint64_t)on, d = 0;
    if (hvt_hypercall(HVT_HC_PROBE, &b, &c, &d) != HVT_HC_OK)
        fprintf(stderr, "probe-bench: HVT_HC_PROBE_COST %d failed\n", on);
    timed = on;
}

/* The armed probes' firings by phase: PROBEBENCH-COST name=P fires=F PHASE=TICKS... */
static void cost_print(const char *name)
{
    static const char *const names[] = HVT_PH_NAMES;
    if (!timed)
        return;
    printf("PROBEBENCH-COST name=%s", name);
    for (unsigned ph = 0; ph < HVT_PH_COUNT; ph++) {
        uint64_t b = HVT_HC_PROBE_COST, c = 2 + ph, d = 0;
        hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
        if (ph == 0)
            printf(" fires=%llu", (unsigned long long)c);
        printf(" %s=%llu", names[ph], (unsigned long long)b);
    }
    printf("\n");
    uint64_t b = HVT_HC_PROBE_COST, c = 2 + HVT_PH_COUNT, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    printf("PROBEBENCH-TALLY name=%s newtask=%llu switched=%llu\n", name, (unsigned long long)b,
           (unsigned long long)c);
}

/* The sum of the armed probes' ticks over the phases (what the timed firings took). */
static uint64_t cost_total(void)
{
    uint64_t sum = 0;
    for (unsigned ph = 0; ph < HVT_PH_COUNT; ph++) {
        uint64_t b = HVT_HC_PROBE_COST, c = 2 + ph, d = 0;
        hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
        sum += b;
    }
    return sum;
}

static void counters(uint64_t *fires, uint64_t *exits)
{
    uint64_t b = HVT_HC_PROBE_STATS, c = 0, d = 0;
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &d);
    *fires = b;
    *exits = c;
}

static void arm(uint64_t mask)
{
    uint64_t b = mask ? HVT_HC_PROBE_ARM_CFG : HVT_HC_PROBE_DISARM_LOG, c = mask, d = 0;
    if (hvt_hypercall(HVT_HC_PROBE, &b, &c, &d) != HVT_HC_OK)
        fprintf(stderr, "probe-bench: arming %llx failed\n", (unsigned long long)mask);
}

/* T = TSC ticks for n calls; F, X = firings and engine exits during them. */
static void phase(const char *name, uint64_t mask, long nr)
{
    uint64_t f0, x0, f1, x1;
    if (mask)
        arm(mask);
    counters(&f0, &x0);
    uint64_t t0 = __rdtsc();
    for (long i = 0; i < n; i++)
        syscall(nr);
    uint64_t t1 = __rdtsc();
    counters(&f1, &x1);
    cost_print(name);
    if (mask)
        arm(0);
    printf("PROBEBENCH-PHASE n=%ld name=%s tsc=%llu fires=%llu exits=%llu\n", n, name,
           (unsigned long long)(t1 - t0), (unsigned long long)(f1 - f0), (unsigned long long)(x1 - x0));
    fflush(stdout);
}

static void *slurp(const char *path, uint64_t *len)
{
    FILE *f = fopen(path, "rb");
    static char bufs[2][1 << 16];
    static int which;
    char *b = bufs[which++ & 1];
    *len = f ? fread(b, 1, sizeof bufs[0], f) : 0;
    if (f)
        fclose(f);
    return b;
}

/* Arm the probes of D program name's specs: with its action, or (action 0) plain, each
 * firing only counted (a counting run). 0, or -1 said why. */
static int arm_specs(const char *name, int action)
{
    char path[64];
    uint64_t slen;
    snprintf(path, sizeof path, "/%s.specs", name);
    struct hvt_probe_spec *specs = slurp(path, &slen);
    uint64_t ns = slen / sizeof(struct hvt_probe_spec);
    if (!action)
        for (uint64_t i = 0; i < ns; i++)
            specs[i].kind &= ~HVT_PROBE_F_ACTION;
    uint64_t b = HVT_HC_PROBE_ARM_SPECS, c = (uint64_t)(uintptr_t)specs, d = ns;
    if (!slen || hvt_hypercall(HVT_HC_PROBE, &b, &c, &d) != HVT_HC_OK || !b) {
        fprintf(stderr, "probe-bench: arming %s failed\n", name);
        return -1;
    }
    return 0;
}

/* Load a D program and arm its probes (0), or say why not. */
static int load_d(const char *name)
{
    char path[64];
    uint64_t ilen;
    snprintf(path, sizeof path, "/%s.img", name);
    void *img = slurp(path, &ilen);
    uint64_t b = HVT_HC_PROBE_LOAD_D, c = (uint64_t)(uintptr_t)img, d = ilen;
    if (!ilen || hvt_hypercall(HVT_HC_PROBE, &b, &c, &d) != HVT_HC_OK) {
        fprintf(stderr, "probe-bench: loading %s failed (%lld)\n", name, (long long)b);
        return -1;
    }
    return arm_specs(name, 1);
}

/* The same as phase() over n one-byte reads of /dev/zero, with the D program 'd' (or none);
 * alt: reads of one and two bytes in turn (a key made of the size changes at every firing). */
static void read_phase_alt(const char *name, const char *d, int alt)
{
    static char buf[2];
    int fd = open("/dev/zero", O_RDONLY);
    uint64_t f0, x0, f1, x1;
    if (d && load_d(d))
        return;
    counters(&f0, &x0);
    uint64_t t0 = __rdtsc();
    for (long i = 0; i < n; i++) {
        size_t len = alt ? 1 + (size_t)(i & 1) : 1;
        if (read(fd, buf, len) != (ssize_t)len)
            break;
    }
    uint64_t t1 = __rdtsc();
    counters(&f1, &x1);
    cost_print(name);
    if (d) {
        uint64_t b = HVT_HC_PROBE_DISARM, c = 0, e = 0;      /* disarm quietly: the program stays loaded */
        hvt_hypercall(HVT_HC_PROBE, &b, &c, &e);
    }
    close(fd);
    printf("PROBEBENCH-PHASE n=%ld name=%s tsc=%llu fires=%llu exits=%llu\n", n, name,
           (unsigned long long)(t1 - t0), (unsigned long long)(f1 - f0), (unsigned long long)(x1 - x0));
    fflush(stdout);
}

static void read_phase(const char *name, const char *d) { read_phase_alt(name, d, 0); }

/* n/10 round trips of one byte between this process and a child over two pipes, so that each
 * read() (vfs_read) runs in the other task than the last one: untraced (d NULL), or with the D
 * program d's probes armed plain and each firing timed (the tally says how many firings were
 * in a new task): the cost of a firing in a task other than the CPU's last one's. */
static void switch_phase(const char *name, const char *d)
{
    int p1[2], p2[2];
    char b = 0;
    long rounds = n / 10;
    uint64_t f0, x0, f1, x1;
    if (pipe(p1) || pipe(p2))
        return;
    pid_t child = fork();
    if (child == 0) {
        for (long i = 0; i < rounds; i++)
            if (read(p1[0], &b, 1) != 1 || write(p2[1], &b, 1) != 1)
                break;
        _exit(0);
    }
    if (d && arm_specs(d, 0))
        return;
    if (d)
        cost_set(1);
    counters(&f0, &x0);
    uint64_t t0 = __rdtsc();
    for (long i = 0; i < rounds; i++)
        if (write(p1[1], &b, 1) != 1 || read(p2[0], &b, 1) != 1)
            break;
    uint64_t t1 = __rdtsc();
    counters(&f1, &x1);
    cost_print(name);
    if (d) {
        cost_set(0);
        uint64_t hb = HVT_HC_PROBE_DISARM, hc = 0, he = 0;
        hvt_hypercall(HVT_HC_PROBE, &hb, &hc, &he);
    }
    waitpid(child, NULL, 0);
    close(p1[0]); close(p1[1]); close(p2[0]); close(p2[1]);
    printf("PROBEBENCH-PHASE n=%ld name=%s tsc=%llu fires=%llu exits=%llu\n", rounds, name,
           (unsigned long long)(t1 - t0), (unsigned long long)(f1 - f0), (unsigned long long)(x1 - x0));
    fflush(stdout);
}

/* The same over n kill(getpid(), SIGUSR1) with SIGUSR1 ignored. */
static void signal_phase(const char *name, const char *d)
{
    uint64_t f0, x0, f1, x1;
    pid_t me = getpid();
    signal(SIGUSR1, SIG_IGN);
    if (d && load_d(d))
        return;
    counters(&f0, &x0);
    uint64_t t0 = __rdtsc();
    for (long i = 0; i < n; i++)
        if (kill(me, SIGUSR1))
            break;
    uint64_t t1 = __rdtsc();
    counters(&f1, &x1);
    if (d) {
        uint64_t b = HVT_HC_PROBE_DISARM, c = 0, e = 0;
        hvt_hypercall(HVT_HC_PROBE, &b, &c, &e);
    }
    printf("PROBEBENCH-PHASE n=%ld name=%s tsc=%llu fires=%llu exits=%llu\n", n, name,
           (unsigned long long)(t1 - t0), (unsigned long long)(f1 - f0), (unsigned long long)(x1 - x0));
    fflush(stdout);
}

/* --- the model checked: three workloads, untraced, counted and traced, in guest TSC --- */

/* Run argv to its end (its output to /dev/null); 0 when it exited 0. */
static int run_wait(char *const argv[])
{
    pid_t p = fork();
    if (p == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    return p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* One workload pass: w 0 the system-call loop (n getpid()s), 1 md5sum of busybox (twice),
 * 2 the fork/exec loop (20 children that exec busybox true). */
static int workload(int w)
{
    static char *md5[] = { "/bin/busybox", "md5sum", "/bin/busybox", NULL };
    static char *tru[] = { "/bin/busybox", "true", NULL };
    int bad = 0;
    if (w == 0)
        for (long i = 0; i < n; i++)
            syscall(SYS_getpid);
    for (int i = 0; w == 1 && i < 2; i++)
        bad |= run_wait(md5);
    for (int i = 0; w == 2 && i < 20; i++)
        bad |= run_wait(tru);
    return bad;
}

/* The workload untraced, then rounds times: its probes armed plain with each firing timed
 * (the counting run: its own cost is the hypervisor's timed ticks, and its tally says how many
 * firings were in a new task or of another probe than the last), with the D program d
 * (traced), untraced again. Each round's line: PROBEBENCH-PREDICT name=P round=R u0=T tc=T
 * fc=F own=T newtask=N switched=S t1=T f1=F u1=T ok=1 (u0, u1 the untraced runs around it:
 * the host takes the untraced time at each run's place between them, as the untraced time
 * drifts from one run to the next). */
static void predict_phase(const char *name, int w, const char *d, int rounds)
{
    uint64_t x, f0, b, c, e;
    int bad = 0;
    if (load_d(d))
        return;
    b = HVT_HC_PROBE_DISARM, c = 0, e = 0;                  /* the program stays loaded */
    hvt_hypercall(HVT_HC_PROBE, &b, &c, &e);
    uint64_t t0 = __rdtsc();
    bad |= workload(w);
    uint64_t u0 = __rdtsc() - t0;
    for (int r = 0; r < rounds; r++) {
        uint64_t t[3], f[3] = { 0 }, own = 0, nt = 0, sw = 0;
        for (int k = 0; k < 3; k++) {
            b = HVT_HC_PROBE_DISARM, c = 0, e = 0;
            hvt_hypercall(HVT_HC_PROBE, &b, &c, &e);
            if (k < 2 && arm_specs(d, k == 1))
                return;
            if (k == 0)
                cost_set(1);
            counters(&f0, &x);
            t0 = __rdtsc();
            bad |= workload(w);
            t[k] = __rdtsc() - t0;
            counters(&f[k], &x);
            f[k] -= f0;
            if (k == 0) {
                own = cost_total();
                b = HVT_HC_PROBE_COST, c = 2 + HVT_PH_COUNT, e = 0;
                hvt_hypercall(HVT_HC_PROBE, &b, &c, &e);
                nt = b;
                sw = c;
                cost_set(0);
            }
        }
        printf("PROBEBENCH-PREDICT name=%s round=%d u0=%llu tc=%llu fc=%llu own=%llu newtask=%llu "
               "switched=%llu t1=%llu f1=%llu u1=%llu ok=%d\n", name, r, (unsigned long long)u0,
               (unsigned long long)t[0], (unsigned long long)f[0], (unsigned long long)own,
               (unsigned long long)nt, (unsigned long long)sw, (unsigned long long)t[1],
               (unsigned long long)f[1], (unsigned long long)t[2], !bad);
        fflush(stdout);
        u0 = t[2];
    }
}

static int sh(const char *cmd)
{
    int rc = system(cmd);
    if (rc)
        fprintf(stderr, "probe-bench: '%s' failed (%d)\n", cmd, rc);
    return rc;
}

int main(int argc, char **argv)
{
    n = argc > 1 ? atol(argv[1]) : 10000;
    if (!hvt_present())
        return 2;
    for (long i = 0; i < 1000; i++)                      /* warm the path */
        syscall(SYS_getpid);
    phase("base", 0, SYS_getpid);
    phase("entry", 1, SYS_getpid);
    phase("return", 2, SYS_getpid);
    phase("addr", 4, SYS_getpid);
    phase("unprobed", 1, SYS_getppid);
    int kp = sh("mount -t tracefs nodev /sys/kernel/tracing") == 0 &&
             sh("echo 'p:hvtbench __x64_sys_getpid' > /sys/kernel/tracing/kprobe_events") == 0 &&
             sh("echo 1 > /sys/kernel/tracing/events/kprobes/hvtbench/enable") == 0;
    if (kp) {
        phase("kprobe", 0, SYS_getpid);
        sh("echo 0 > /sys/kernel/tracing/events/kprobes/hvtbench/enable");
        sh("grep hvtbench /sys/kernel/tracing/kprobe_profile");
    }
    read_phase("rbase", NULL);
    read_phase("dcount", "dcount");
    read_phase("dquant", "dquant");
    read_phase("dstack", "dstack");
    read_phase("dstack1", "dstack1");
    signal_phase("sbase", NULL);
    signal_phase("sdt", "dsdt");
    signal_phase("sfbt", "dsfbt");
    /* The same phases again with each firing timed by phase: the phases beside the measured
     * total (the stamps' own cost in both), and the stamps' cost against the untimed run. */
    cost_set(1);
    phase("entry_t", 1, SYS_getpid);
    read_phase("dcount_t", "dcount");
    read_phase("dquant_t", "dquant");
    read_phase("dstack_t", "dstack");
    cost_set(0);
    /* The calibration: each a D program whose firings differ from another's in one class of
     * the model (bench/predict-cal.py fits the table to them, dcount and dquant included). */
    read_phase("cc1", "cc1");
    read_phase("cc4cl", "cc4cl");
    read_phase("cc4ag", "cc4ag");
    read_phase("ckey", "ckey");
    read_phase("calu", "calu");
    read_phase("cvar", "cvar");
    read_phase("csys", "csys");
    read_phase("ci1", "ci1");
    read_phase("ci2", "ci2");
    read_phase_alt("rbase2", NULL, 1);
    read_phase_alt("ckeyalt", "ckey", 1);
    switch_phase("pbase", NULL);
    switch_phase("pswitch", "cc1");
    predict_phase("wsys", 0, "wsys", 2);
    predict_phase("wmd5", 1, "wmd5", 2);
    predict_phase("wfork", 2, "wfork", 4);
    int rk = kp && sh("echo 'p:hvtread vfs_read' >> /sys/kernel/tracing/kprobe_events") == 0 &&
             sh("echo 1 > /sys/kernel/tracing/events/kprobes/hvtread/enable") == 0;
    if (rk) {
        read_phase("rkprobe", NULL);
        sh("echo 0 > /sys/kernel/tracing/events/kprobes/hvtread/enable");
    }
    return kp && rk ? 0 : 1;
}
