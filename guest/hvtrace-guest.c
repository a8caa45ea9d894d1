/*
 * hvtrace-guest - guest-side probe of the hvtrace hypercall ABI (include/hvt_hypercall.h).
 * Static Linux program run by the test initramfs.
 *
 *   hvtrace-guest detect     the VERSION hypercall, SIGILL caught: exit 1 unless hvtrace
 *                            answers; also prints what CPUID shows (the hypervisor bit and
 *                            leaf 0x40000000's signature: none unless hvtrace.cfg says
 *                            advertise = on)
 *   hvtrace-guest cpuid      dump CPUID leaves 0..max, 0x40000000 and 0x80000000..max
 *                            (subleaves where the leaf has them), one "cpuid LEAF SUB: EAX EBX
 *                            ECX EDX" line each, on the CPU it runs on
 *   hvtrace-guest version    hypercall VERSION (only after a successful detect)
 *   hvtrace-guest range      hypercall HV_RANGE: prints base, size, canary
 *   hvtrace-guest memcheck [BASE SIZE CANARY]
 *                            read [BASE, BASE+SIZE) through /dev/mem; fail if the canary qword
 *                            is found at any 8-byte aligned offset, or if /dev/mem cannot be
 *                            read there. Without arguments the range comes from HV_RANGE.
 *   hvtrace-guest tsc        print the TSC (decimal)
 *   hvtrace-guest ud         VMCALL without the magic: must raise #UD (SIGILL); prints ok
 *   hvtrace-guest drain      wait until /dev/console has sent everything (before poweroff)
 *   hvtrace-guest bochs-shutdown
 *                            write "Shutdown" to Bochs's port 0x8900 (ends Bochs; only for a
 *                            platform without ACPI, where poweroff cannot end the run)
 *   hvtrace-guest agent [once]
 *                            run the commands hvt -c posts (HVT_HC_CMD): each one is split on
 *                            blanks, forked, exec'd and held stopped at its first instruction
 *                            (guest/hvt_agent.h) until the host has armed its probes, then
 *                            let go; its exit status goes back to the host. "once":
 *                            end after one command, once the host is done with it (at most
 *                            a minute after it ended).
 * Exit status: 0 success, 1 check failed, 2 usage.
 * version/range/memcheck issue their hypercall only after detect's (caught) one answered: on
 * bare metal or another hypervisor VMCALL raises #UD.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <termios.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/io.h>
#include <sys/wait.h>
#include <unistd.h>
#include "hvt_hypercall.h"
#include "hvt_agent.h"

#define CPUID_LEAF_FEATURES       1u
#define CPUID_1_ECX_HYPERVISOR    (1u << 31)
#define SIGNATURE_LEN             12
#define MEMCHECK_CHUNK            (1u << 20)
#define QWORD                     8u

struct hc_regs { uint64_t rax, rbx, rcx, rdx; };

static void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
    __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}

static void vmcall(struct hc_regs *r)
{
    __asm__ volatile("vmcall"
                     : "+a"(r->rax), "+b"(r->rbx), "+c"(r->rcx), "+d"(r->rdx)
                     : : "memory");
}

/* What CPUID shows: the hypervisor bit, and leaf 0x40000000's signature (13 bytes) and max. */
static void cpuid_view(char sig[SIGNATURE_LEN + 1], uint32_t *max_leaf, int *hv_bit)
{
    uint32_t a, b, c, d;
    cpuid(CPUID_LEAF_FEATURES, &a, &b, &c, &d);
    *hv_bit = (c & CPUID_1_ECX_HYPERVISOR) != 0;
    memset(sig, 0, SIGNATURE_LEN + 1);
    cpuid(HVT_CPUID_LEAF_BASE, &a, &b, &c, &d);
    *max_leaf = a;
    memcpy(sig, &b, 4);
    memcpy(sig + 4, &c, 4);
    memcpy(sig + 8, &d, 4);
}

/* The VERSION hypercall with SIGILL (and SIGSEGV) caught: 1 when hvtrace answers (its version in *version). */
static sigjmp_buf detect_jmp;
static void detect_handler(int sig) { siglongjmp(detect_jmp, sig); }
static int detect(uint64_t *version)
{
    struct sigaction sa, old_ill, old_segv;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = detect_handler;
    sigaction(SIGILL, &sa, &old_ill);
    sigaction(SIGSEGV, &sa, &old_segv);   /* some hypervisors answer a user VMCALL with #GP */
    volatile int found = 0;
    if (!sigsetjmp(detect_jmp, 1)) {
        struct hc_regs r = { HVT_HC_MAGIC | HVT_HC_VERSION, 0, 0, 0 };
        vmcall(&r);
        found = r.rax == HVT_HC_OK && r.rcx == HVT_HC_ABI_REVISION;
        *version = r.rbx;
    }
    sigaction(SIGILL, &old_ill, NULL);
    sigaction(SIGSEGV, &old_segv, NULL);
    return found;
}

static int require_hvtrace(void)
{
    uint64_t v;
    if (detect(&v)) return 1;
    fprintf(stderr, "hvtrace-guest: hvtrace not detected (its VERSION hypercall faulted)\n");
    return 0;
}

static int hypercall(uint32_t func, struct hc_regs *r)
{
    memset(r, 0, sizeof *r);
    r->rax = HVT_HC_MAGIC | func;
    vmcall(r);
    return (int)(int64_t)r->rax;
}

static int cmd_detect(void)
{
    char sig[SIGNATURE_LEN + 1], shown[SIGNATURE_LEN + 1];
    uint32_t max;
    int hv;
    uint64_t version = 0;
    int ok = detect(&version);
    cpuid_view(sig, &max, &hv);
    for (int i = 0; i < SIGNATURE_LEN; i++)
        shown[i] = sig[i] >= 0x20 && sig[i] < 0x7f ? sig[i] : '.';
    shown[SIGNATURE_LEN] = 0;
    printf("detect: hypercall: %s; CPUID.1:ECX.hypervisor = %d, leaf 0x40000000 \"%s\" max 0x%" PRIx32 "%s\n",
           ok ? "hvtrace" : "faulted (no hvtrace)", hv, shown, max,
           hv && !memcmp(sig, HVT_CPUID_SIGNATURE, SIGNATURE_LEN) ? " (advertised)" : "");
    if (ok)
        printf("detect: hvtrace version %" PRIu64 ".%" PRIu64 ".%" PRIu64 "\n", version >> 16 & 0xff,
               version >> 8 & 0xff, version & 0xff);
    return ok ? 0 : 1;
}

/* Subleaves worth dumping: the leaves whose ECX input selects what they describe. */
static uint32_t cpuid_subleaves(uint32_t leaf)
{
    switch (leaf) {
    case 4: case 0xb: case 0x1f: case 0x8000001d: return 6;   /* caches, topology levels */
    case 7: case 0x14: case 0x17: case 0x18: return 3;
    case 0xd: case 0xf: case 0x10: case 0x12: return 16;         /* XSAVE components, RDT, SGX */
    default: return 1;
    }
}

static void cpuid_dump_range(uint32_t first)
{
    uint32_t max, b, c, d;
    cpuid(first, &max, &b, &c, &d);
    if (max < first || max - first > 0x100) max = first;   /* a bogus range: the base leaf only */
    for (uint32_t leaf = first; leaf <= max; leaf++)
        for (uint32_t sub = 0; sub < cpuid_subleaves(leaf); sub++) {
            uint32_t r[4];
            __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
            printf("cpuid %08" PRIx32 " %" PRIu32 ": %08" PRIx32 " %08" PRIx32 " %08" PRIx32 " %08" PRIx32 "\n",
                   leaf, sub, r[0], r[1], r[2], r[3]);
        }
}

static int cmd_cpuid(void)
{
    cpu_set_t one;                  /* CPU 0: the APIC id fields then compare between boots */
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    if (sched_setaffinity(0, sizeof one, &one))
        fprintf(stderr, "hvtrace-guest: cannot run on CPU 0: APIC ids may differ\n");
    cpuid_dump_range(0);
    cpuid_dump_range(HVT_CPUID_LEAF_BASE);
    cpuid_dump_range(0x80000000u);
    return 0;
}

static int cmd_version(void)
{
    struct hc_regs r;
    if (!require_hvtrace()) return 1;
    int st = hypercall(HVT_HC_VERSION, &r);
    if (st != HVT_HC_OK) { printf("version: hypercall failed: %d\n", st); return 1; }
    printf("version: %" PRIu64 ".%" PRIu64 ".%" PRIu64 " abi %" PRIu64 "\n", (r.rbx >> 16) & 0xff,
           (r.rbx >> 8) & 0xff, r.rbx & 0xff, r.rcx);
    return r.rbx == HVT_VERSION && r.rcx == HVT_HC_ABI_REVISION ? 0 : 1;
}

static int get_range(uint64_t *base, uint64_t *size, uint64_t *canary)
{
    struct hc_regs r;
    if (!require_hvtrace()) return 0;
    int st = hypercall(HVT_HC_HV_RANGE, &r);
    if (st != HVT_HC_OK) { printf("range: hypercall failed: %d\n", st); return 0; }
    *base = r.rbx; *size = r.rcx; *canary = r.rdx;
    return 1;
}

static int cmd_range(void)
{
    uint64_t base, size, canary;
    if (!get_range(&base, &size, &canary)) return 1;
    printf("range: base=0x%" PRIx64 " size=0x%" PRIx64 " canary=0x%016" PRIx64 "\n", base, size, canary);
    return size != 0 && canary != 0 ? 0 : 1;
}

static int cmd_memcheck(int argc, char **argv)
{
    uint64_t base, size, canary;
    if (argc == 5) {
        base = strtoull(argv[2], NULL, 0);
        size = strtoull(argv[3], NULL, 0);
        canary = strtoull(argv[4], NULL, 0);
    } else if (!get_range(&base, &size, &canary)) {
        return 1;
    }
    if (size == 0 || base % QWORD || size % QWORD) {
        printf("memcheck: bad range base=0x%" PRIx64 " size=0x%" PRIx64 "\n", base, size);
        return 1;
    }
    int fd = open("/dev/mem", O_RDONLY | O_CLOEXEC);
    if (fd < 0) { printf("memcheck: open /dev/mem: %s\n", strerror(errno)); return 1; }
    static uint64_t buf[MEMCHECK_CHUNK / QWORD];
    uint64_t found = 0, first = 0;
    for (uint64_t off = 0; off < size;) {
        size_t want = size - off < MEMCHECK_CHUNK ? (size_t)(size - off) : MEMCHECK_CHUNK;
        ssize_t got = pread(fd, buf, want, (off_t)(base + off));
        if (got <= 0 || got % QWORD) {
            printf("memcheck: cannot read /dev/mem at 0x%" PRIx64 ": %s\n", base + off,
                   got < 0 ? strerror(errno) : "short read");
            close(fd);
            return 1;
        }
        for (size_t i = 0; i < (size_t)got / QWORD; i++)
            if (buf[i] == canary && found++ == 0) first = base + off + i * QWORD;
        off += (uint64_t)got;
    }
    close(fd);
    if (found) {
        printf("memcheck: canary visible %" PRIu64 " times, first at 0x%" PRIx64 "\n", found, first);
        return 1;
    }
    printf("memcheck: read 0x%" PRIx64 " bytes at 0x%" PRIx64 ": canary never seen\n", size, base);
    return 0;
}

static int cmd_tsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    printf("%" PRIu64 "\n", ((uint64_t)hi << 32) | lo);
    return 0;
}

static sigjmp_buf ud_jmp;
static void ud_handler(int sig) { siglongjmp(ud_jmp, sig); }

static int cmd_ud(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = ud_handler;
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGSEGV, &sa, NULL);
    int sig = sigsetjmp(ud_jmp, 1);
    if (sig == 0) {
        struct hc_regs r = { 0, 0, 0, 0 };   /* RAX without HVT_HC_MAGIC */
        vmcall(&r);
        printf("ud: FAIL: VMCALL without the magic returned (rax=0x%" PRIx64 ")\n", r.rax);
        return 1;
    }
    if (sig == SIGILL) { printf("ud: ok (#UD delivered as SIGILL)\n"); return 0; }
    printf("ud: FAIL: got signal %d instead of SIGILL\n", sig);
    return 1;
}

static int cmd_drain(void)
{
    int fd = open("/dev/console", O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return 1;
    int rc = tcdrain(fd);
    close(fd);
    return rc == 0 ? 0 : 1;
}

/* Bochs's iodev/unmapped.cc: the string "Shutdown" written byte by byte ends the simulation. */
#define BOCHS_SHUTDOWN_PORT 0x8900u
static int cmd_bochs_shutdown(void)
{
    static const char magic[] = "Shutdown";
    if (ioperm(BOCHS_SHUTDOWN_PORT, 1, 1) != 0) { perror("ioperm"); return 1; }
    for (const char *p = magic; *p; p++) outb((unsigned char)*p, BOCHS_SHUTDOWN_PORT);
    return 1;   /* still running: this is not Bochs */
}

/* probe-arm FILE: arm the probes of a spec file (hvt -n DESC --specs FILE: struct
 * hvt_probe_spec records, link-time addresses the hypervisor slides), waiting until every CPU
 * runs with them. probe-disarm: disarm them all (the hypervisor logs their counts). */
static int cmd_probe_arm(const char *path)
{
    static struct hvt_probe_spec spec[HVT_PROBE_SPECS_MAX];
    int fd = open(path, O_RDONLY);
    if (fd < 0) { perror(path); return 1; }
    /* HVT_PROBE_SPECS_MAX at a time; every call but the last returns without waiting for the
     * CPUs (the last one's wait covers them all). */
    uint64_t total = 0, taken = 0, sites = 0;
    int st = HVT_HC_OK;
    struct stat sb;
    if (fstat(fd, &sb) == 0)
        total = (uint64_t)sb.st_size / sizeof spec[0];
    for (;;) {
        ssize_t n = read(fd, spec, sizeof spec);
        if (n < 0 || n % (ssize_t)sizeof spec[0]) { fprintf(stderr, "%s: not a spec file\n", path); close(fd); return 1; }
        if (n == 0)
            break;
        uint64_t k = (uint64_t)n / sizeof spec[0], done = 0, got;
        /* a static tracepoint's spec travels with its recipe, the spec(s) after it: a block
         * that ends inside one leaves it to the next */
        uint64_t fit = (uint64_t)n / sizeof spec[0] == sizeof spec / sizeof spec[0]
                       ? hvt_probe_spec_batch(spec, k, k) : k;   /* (the file's end: all of it) */
        if (fit < k && lseek(fd, -(off_t)((k - fit) * sizeof spec[0]), SEEK_CUR) >= 0)
            k = fit;
        char more;
        int last = pread(fd, &more, 1, lseek(fd, 0, SEEK_CUR)) != 1;
        /* EBUSY: the hypervisor bounds the code one call decodes; the rest goes again */
        do {
            struct hc_regs r = { HVT_HC_MAGIC | HVT_HC_PROBE, HVT_HC_PROBE_ARM_SPECS, (uint64_t)(spec + done),
                                 (k - done) | (last ? 0 : HVT_PROBE_NOWAIT) };
            vmcall(&r);                    /* (hypercall() would clear the arguments) */
            st = (int)(int64_t)r.rax;
            taken += r.rcx;
            sites += r.rbx;
            done += got = r.rcx;
        } while (st == HVT_HC_EBUSY && got && done < k);
        if (st != HVT_HC_OK || done != k)
            break;
    }
    close(fd);
    printf("hvtrace-guest: probe-arm: %llu of %llu probes taken, %llu sites armed (status %d)\n",
           (unsigned long long)taken, (unsigned long long)total, (unsigned long long)sites, st);
    return st == HVT_HC_OK && taken == total ? 0 : 1;
}

static int cmd_probe_disarm(void)
{
    struct hc_regs r = { HVT_HC_MAGIC | HVT_HC_PROBE, HVT_HC_PROBE_DISARM_LOG, 0, 0 };
    vmcall(&r);
    return (int64_t)r.rax == HVT_HC_OK ? 0 : 1;
}

/* One HVT_HC_CMD call: RBX op, RCX seq, RDX arg; out in r. */
static int hc_cmd(enum hvt_hc_cmd_op op, uint64_t seq, uint64_t arg, struct hc_regs *r)
{
    r->rax = HVT_HC_MAGIC | HVT_HC_CMD;
    r->rbx = op;
    r->rcx = seq;
    r->rdx = arg;
    vmcall(r);
    return (int)(int64_t)r->rax;
}

static void nap_ms(long ms)
{
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000 };
    nanosleep(&t, 0);
}

/* Take one posted command: its text into buf (NUL-terminated); its seq, or 0 (none). */
static uint64_t agent_take(char *buf, size_t cap)
{
    struct hc_regs r;
    if (hc_cmd(HVT_HC_CMD_TAKE, 0, 0, &r) != HVT_HC_OK)
        return 0;
    uint64_t seq = r.rbx, len = r.rcx;
    if (len >= cap)
        len = cap - 1;
    for (uint64_t off = 0; off < len; off += HVT_HC_CMD_READ_LEN) {
        if (hc_cmd(HVT_HC_CMD_READ, seq, off, &r) != HVT_HC_OK)
            return 0;
        char w[HVT_HC_CMD_READ_LEN];
        memcpy(w, &r.rbx, 8);
        memcpy(w + 8, &r.rcx, 8);
        memcpy(w + 16, &r.rdx, 8);
        memcpy(buf + off, w, len - off < sizeof w ? len - off : sizeof w);
    }
    buf[len] = 0;
    return seq;
}

static int cmd_agent(int once)
{
    if (!require_hvtrace())
        return 1;
    signal(SIGPIPE, SIG_IGN);
    printf("hvtrace-guest: agent ready\n");
    for (;;) {
        char line[1024];
        uint64_t seq = agent_take(line, sizeof line);
        if (!seq) {
            nap_ms(100);
            continue;
        }
        struct hc_regs r;
        struct agent_cmd c;
        if (agent_cmd_start(&c, line) < 0) {
            hc_cmd(HVT_HC_CMD_EXITED, seq, 127 << 8, &r);
            continue;
        }
        hc_cmd(HVT_HC_CMD_STARTED, seq, (uint64_t)c.pid, &r);
        printf("hvtrace-guest: agent: command %" PRIu64 " is pid %d: %s\n", seq, (int)c.pid, line);
        for (;;) {                         /* held until the host armed its probes */
            if (hc_cmd(HVT_HC_CMD_MAY_RUN, seq, 0, &r) != HVT_HC_OK || r.rbx == HVT_HC_CMD_CANCELLED) {
                agent_cmd_cancel(&c);
                break;
            }
            if (r.rbx == HVT_HC_CMD_GO) {
                agent_cmd_go(&c);
                break;
            }
            nap_ms(20);
        }
        int status = agent_cmd_wait(&c);
        hc_cmd(HVT_HC_CMD_EXITED, seq, (uint64_t)(uint32_t)status, &r);
        printf("hvtrace-guest: agent: command %" PRIu64 " ended, status %d\n", seq, status);
        if (once) {                        /* stay until the host is done with it (its END) */
            for (int i = 0; i < 1200 && hc_cmd(HVT_HC_CMD_MAY_RUN, seq, 0, &r) == HVT_HC_OK &&
                            r.rbx != HVT_HC_CMD_CANCELLED; i++)
                nap_ms(50);
            return 0;
        }
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2) goto usage;
    const char *c = argv[1];
    if (!strcmp(c, "detect")) return cmd_detect();
    if (!strcmp(c, "cpuid")) return cmd_cpuid();
    if (!strcmp(c, "version")) return cmd_version();
    if (!strcmp(c, "range")) return cmd_range();
    if (!strcmp(c, "memcheck") && (argc == 2 || argc == 5)) return cmd_memcheck(argc, argv);
    if (!strcmp(c, "tsc")) return cmd_tsc();
    if (!strcmp(c, "ud")) return cmd_ud();
    if (!strcmp(c, "drain")) return cmd_drain();
    if (!strcmp(c, "bochs-shutdown")) return cmd_bochs_shutdown();
    if (!strcmp(c, "probe-arm") && argc == 3) return cmd_probe_arm(argv[2]);
    if (!strcmp(c, "probe-disarm")) return cmd_probe_disarm();
    if (!strcmp(c, "agent") && argc <= 3) return cmd_agent(argc == 3 && !strcmp(argv[2], "once"));
usage:
    fprintf(stderr, "usage: hvtrace-guest detect|cpuid|version|range|memcheck [BASE SIZE CANARY]|tsc|ud|drain|bochs-shutdown|\n"
                    "                     probe-arm SPECFILE|probe-disarm|agent [once]\n");
    return 2;
}
