/*
 * msr-attack - run as root in the guest (test-boot): writes through /dev/cpu/0/msr (the msr
 * module) the MSRs that would reach past the guest under a hypervisor that passed them
 * through, and checks what it gets. The kernel's wrmsr on behalf of /dev/cpu/N/msr turns a #GP
 * into EIO. Expected under hvtrace:
 *   IA32_APIC_BASE moved above 4 GiB      EIO, and the base reads as before
 *   IA32_TSC written to 0                 EIO, and the TSC did not go back
 *   IA32_TSC_ADJUST written               accepted: reads back, and the guest's TSC (on that
 *                                         CPU) moved by as much; written back, it moves back
 *   IA32_DS_AREA, IA32_PEBS_ENABLE        EIO
 *   IA32_RTIT_CTL (Intel PT on)           EIO
 *   IA32_BIOS_UPDT_TRIG (microcode load)  accepted and dropped (as KVM drops it: Linux's
 *                                         loader is not faulted), the revision unchanged
 *   IA32_MTRR_DEF_TYPE changed            accepted and read back (the guest's own copy;
 *                                         the hypervisor's memory types do not change), restored
 * Prints one line per check; exit 0 when all are as expected, 1 otherwise, 2 when the msr
 * device is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int fd, bad;

static int rd(uint32_t msr, uint64_t *v) { return pread(fd, v, 8, msr) == 8 ? 0 : -errno; }
static int wr(uint32_t msr, uint64_t v) { return pwrite(fd, &v, 8, msr) == 8 ? 0 : -errno; }

static void expect_refused(const char *what, uint32_t msr, uint64_t v)
{
    int r = wr(msr, v);
    int ok = r == -EIO;
    bad += !ok;
    printf("msr-attack: %s (MSR %#x = %#" PRIx64 "): %s%s\n", what, msr, v,
           r == 0 ? "ACCEPTED" : r == -EIO ? "refused (#GP)" : strerror(-r), ok ? " ok" : " FAIL");
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}

/* IA32_TSC_ADJUST is the guest's (emulated as KVM does): a write of a0 + D reads back as such
 * and moves this CPU's TSC forward by D (the process runs on CPU 0, whose MSR it writes);
 * writing a0 back moves it back. D is small: the kernel's clock sees a short stall at most. */
static void tsc_adjust(void)
{
    const uint64_t d = 1ull << 20;
    uint64_t a0, a1 = 0, a2 = 0;
    if (rd(0x3b, &a0)) {
        printf("msr-attack: IA32_TSC_ADJUST: cannot read FAIL\n");
        bad++;
        return;
    }
    uint64_t t0 = rdtsc();
    int w1 = wr(0x3b, a0 + d);
    uint64_t t1 = rdtsc();
    rd(0x3b, &a1);
    int w2 = wr(0x3b, a0);
    uint64_t t2 = rdtsc();
    rd(0x3b, &a2);
    int ok = w1 == 0 && w2 == 0 && a1 == a0 + d && a2 == a0 && t1 - t0 >= d && t2 - t0 < t1 - t0;
    bad += !ok;
    printf("msr-attack: IA32_TSC_ADJUST %#" PRIx64 " -> +%#" PRIx64 ": %s, read %#" PRIx64 ", TSC +%" PRIu64
           "; back: %s, read %#" PRIx64 ", TSC +%" PRIu64 " from the start:%s\n", a0, d,
           w1 == 0 ? "accepted" : strerror(-w1), a1, t1 - t0, w2 == 0 ? "accepted" : strerror(-w2), a2,
           t2 - t0, ok ? " ok (the guest's TSC moved, and back)" : " FAIL");
}

int main(void)
{
    cpu_set_t cpu0;
    CPU_ZERO(&cpu0);
    CPU_SET(0, &cpu0);
    sched_setaffinity(0, sizeof cpu0, &cpu0);   /* rdtsc on the CPU whose MSRs it writes */
    fd = open("/dev/cpu/0/msr", O_RDWR);
    if (fd < 0) {
        printf("msr-attack: /dev/cpu/0/msr: %s (is the msr module loaded?)\n", strerror(errno));
        return 2;
    }
    uint64_t apic, apic2;
    if (rd(0x1b, &apic)) { printf("msr-attack: cannot read IA32_APIC_BASE\n"); return 1; }
    expect_refused("IA32_APIC_BASE above 4 GiB", 0x1b, (apic & 0xfff) | 0x100000000ull);
    rd(0x1b, &apic2);
    printf("msr-attack: IA32_APIC_BASE %#" PRIx64 " before, %#" PRIx64 " after:%s\n", apic, apic2,
           apic == apic2 ? " ok" : " FAIL");
    bad += apic != apic2;
    uint64_t t0 = rdtsc();
    expect_refused("IA32_TSC to 0", 0x10, 0);
    uint64_t t1 = rdtsc();
    printf("msr-attack: TSC %" PRIu64 " -> %" PRIu64 ":%s\n", t0, t1, t1 > t0 ? " ok" : " FAIL");
    bad += t1 <= t0;
    tsc_adjust();
    expect_refused("IA32_DS_AREA", 0x600, 0x1000);
    expect_refused("IA32_PEBS_ENABLE", 0x3f1, 1);
    expect_refused("IA32_RTIT_CTL (Intel PT)", 0x570, 1);
    uint64_t rev0 = 0, rev1 = 0;
    rd(0x8b, &rev0);
    int ur = wr(0x79, 0x1000);
    rd(0x8b, &rev1);
    int uok = ur == 0 && rev1 == rev0;
    bad += !uok;
    printf("msr-attack: IA32_BIOS_UPDT_TRIG (microcode) (MSR 0x79 = 0x1000): %s, revision %#" PRIx64 " -> %#" PRIx64 ":%s\n",
           ur == 0 ? "accepted" : strerror(-ur), rev0, rev1, uok ? " ok (dropped)" : " FAIL");
    uint64_t def, def2, def3;
    if (rd(0x2ff, &def) == 0) {
        uint64_t uc = def & ~0xffull;              /* default type UC: a real machine would crawl */
        int r = wr(0x2ff, uc);
        rd(0x2ff, &def2);
        wr(0x2ff, def);
        rd(0x2ff, &def3);
        int ok = r == 0 && def2 == uc && def3 == def;
        bad += !ok;
        printf("msr-attack: IA32_MTRR_DEF_TYPE %#" PRIx64 " -> %#" PRIx64 " (read %#" PRIx64 "), restored %#" PRIx64 ":%s\n",
               def, uc, def2, def3, ok ? " ok (the guest's copy)" : " FAIL");
    }
    printf("msr-attack: %s\n", bad ? "FAIL" : "all refused or contained");
    return bad ? 1 : 0;
}
