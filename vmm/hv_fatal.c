/*
 * hv_fatal.c - the one fatal path (hv_api.h hv_panic, hv_exit.h hv_on_fatal). The first CPU
 * that panics owns it: it stops every other CPU, runs the users' fatal hooks (last registered
 * first: the tracer flushes into the transport, then the transport pushes it out), writes the
 * reason to the log ports and resets the machine. Nothing in it waits without a bound: a lock
 * a stopped CPU held is taken anyway after FATAL_LOCK_TSC (spin_lock), a CPU that does not
 * stop is reported and left running.
 *
 * Stopping the others. An NMI sent to a CPU that runs the guest exits only where the CPU has
 * virtual NMIs (vmx_caps.h; else the "NMI exiting" pin-based control is 0 and the NMI goes to
 * the guest: Intel SDM Vol. 3C 25.6.1 "Pin-Based VM-Execution Controls"), so NMIs alone cannot
 * be relied on to stop a CPU in the guest. INIT can: in VMX non-root operation INIT always causes
 * a VM exit (SDM 26.2 "Other Causes of VM Exits"), and in VMX root operation it stays pending
 * until the next VM entry, right after which it exits (SDM 24.8 "Restrictions on VMX
 * Operation": INIT is blocked in VMX root operation). So, in two rounds:
 *   1. every other CPU is kicked (its next exit takes the full dispatch) and sent INIT: a CPU
 *      in the guest exits at once, one in the hypervisor finishes its exit and exits again at
 *      its next entry; either way it stops at the top of the dispatch (hv_fatal_at_exit),
 *      between exits, where its users' per-CPU state is whole (HV_CPU_STOPPED_AT_EXIT);
 *   2. those still running after FATAL_EXIT_WAIT_TSC are in the hypervisor and not leaving it
 *      (e.g. spinning on a lock the panicking CPU holds): an NMI, which the host IDT takes
 *      (host_exception) and which parks them where they are (HV_CPU_STOPPED_IN_HV: their
 *      state may be half-updated: hooks must not trust it).
 * A stopped CPU loops on HLT with interrupts off (and, in the NMI handler, NMIs blocked until
 * an IRET that never comes): only the reset ends it.
 *
 * Re-entrancy: a second CPU that panics while the path is owned records that it stopped and
 * parks (its reason is logged, bounded); the owner panicking again (a hook failed) skips the
 * remaining hooks and goes straight to the reset; a third time resets at once.
 *
 * Before any CPU runs a guest (a panic while the image starts) the machine is not reset: the
 * same configuration would panic again at every boot. The CPU halts after the log line, as
 * the loader's own errors do.
 */
#include "hv_core.h"
#include "exit_reg.h"
#include "vcpu.h"
#include "cpu.h"
#include "format.h"

#define FATAL_NO_CPU        0xffffffffu
#define FATAL_UNKNOWN_CPU   0xfffffffeu   /* not on a vcpu's GS base (the image starting) */
/* TSC ticks. In Bochs one tick is one instruction (~50 M per wall second on the project's
 * machine); on hardware the TSC runs at GHz, so these are a few ms to tens of ms there. */
#define FATAL_EXIT_WAIT_TSC 40000000ull   /* round 1: others reach an exit */
#define FATAL_NMI_WAIT_TSC  20000000ull   /* round 2: the NMI'd ones park */
#define FATAL_LOCK_TSC      20000000ull   /* a lock a stopped CPU holds: taken anyway */
#define FATAL_ICR_WAIT      100000u       /* xAPIC ICR delivery-status polls */

static volatile uint32_t owner = FATAL_NO_CPU;
static volatile uint32_t depth;                 /* the owner's panics: 1 = the first */
static volatile uint8_t stop_state[HVT_MAX_CPUS];   /* enum hv_cpu_stop */
static volatile uint64_t locks_broken;
static char why[HV_FATAL_WHY_MAX];
volatile bool hv_fatal_stopping;                /* the path is owned: read at every full exit */
unsigned hv_fatal_selftest;                     /* self-test boots: HV_FATAL_TEST_* */

/* Which CPU this is, without trusting %gs: a CPU still starting runs on the firmware's. */
static unsigned self_index(void)
{
    uint64_t gs = hv_rdmsr(MSR_IA32_GS_BASE);
    for (unsigned i = 0; i < hv.cpu_count; i++)
        if (gs == (uint64_t)vcpu_get(i))
            return i;
    return FATAL_UNKNOWN_CPU;
}

bool hv_fatal_active(void) { return __atomic_load_n(&owner, __ATOMIC_ACQUIRE) != FATAL_NO_CPU; }

enum hv_cpu_stop hv_fatal_cpu_stop(unsigned cpu)
{
    if (cpu >= hv.cpu_count || !hv_fatal_active())
        return HV_CPU_RUNNING;
    return (enum hv_cpu_stop)__atomic_load_n(&stop_state[cpu], __ATOMIC_ACQUIRE);
}

static __attribute__((noreturn)) void park(unsigned me, enum hv_cpu_stop how)
{
    /* The first way it stopped stands: an NMI reaching a CPU parked at an exit does not make
     * its state doubtful. */
    uint8_t none = HV_CPU_RUNNING;
    if (me < HVT_MAX_CPUS)
        __atomic_compare_exchange_n(&stop_state[me], &none, (uint8_t)how, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    for (;;)
        __asm__ volatile("cli; hlt");
}

void hv_fatal_at_exit(void)
{
    if (hv_fatal_active() && owner != hv_cpu_id())
        park(hv_cpu_id(), HV_CPU_STOPPED_AT_EXIT);
}

bool hv_fatal_nmi(void)
{
    if (!hv_fatal_active())
        return false;
    unsigned me = self_index();
    if (me == owner)
        return false;                           /* the owner's NMIs are the guest's as ever */
    park(me, HV_CPU_STOPPED_IN_HV);
}

bool hv_fatal_lock_expired(uint64_t *t0)
{
    if (!hv_fatal_active() || owner != self_index())
        return false;
    uint64_t now = hv_rdtsc();
    if (!*t0) {
        *t0 = now;
        return false;
    }
    if (now - *t0 < FATAL_LOCK_TSC)
        return false;
    __atomic_add_fetch(&locks_broken, 1, __ATOMIC_RELAXED);
    return true;
}

/* --- IPIs through this CPU's local APIC (SDM Vol. 3A 11.6.1 "Interrupt Command Register
 * (ICR)", 11.12.9 "ICR Operation in x2APIC Mode"). The guest owns the APIC: the mode is
 * whatever it chose; its base never moves (vmm/msr_policy.c refuses it). --- */
#define APIC_BASE_ENABLE     (1ull << 11)
#define APIC_ICR_LO          0x300
#define APIC_ICR_HI          0x310
#define ICR_DM_NMI           (4u << 8)
#define ICR_DM_INIT          (5u << 8)
#define ICR_BUSY             (1u << 12)      /* delivery status: send pending (xAPIC) */
#define ICR_LEVEL_ASSERT     (1u << 14)
#define ICR_ALL_BUT_SELF     (3u << 18)      /* destination shorthand */

static bool ipi_others(uint32_t icr)
{
    uint64_t base = hv_rdmsr(MSR_IA32_APIC_BASE);
    if (!(base & APIC_BASE_ENABLE))
        return false;                           /* the guest turned the APIC off: no IPIs */
    if (base & APIC_BASE_X2APIC) {
        hv_wrmsr(X2APIC_MSR(APIC_ICR_LO), icr);
        return true;
    }
    volatile uint32_t *apic = hv_phys_to_virt_uc(base & APIC_BASE_ADDR_MASK);
    for (unsigned i = 0; i < FATAL_ICR_WAIT && (apic[APIC_ICR_LO / 4] & ICR_BUSY); i++)
        cpu_pause();
    apic[APIC_ICR_HI / 4] = 0;
    apic[APIC_ICR_LO / 4] = icr;
    for (unsigned i = 0; i < FATAL_ICR_WAIT && (apic[APIC_ICR_LO / 4] & ICR_BUSY); i++)
        cpu_pause();
    return true;
}

static unsigned running_others(unsigned me)
{
    unsigned n = 0;
    for (unsigned i = 0; i < hv.cpu_count; i++)
        if (i != me && !__atomic_load_n(&stop_state[i], __ATOMIC_ACQUIRE))
            n++;
    return n;
}

static void wait_stopped(unsigned me, uint64_t max_tsc)
{
    for (uint64_t t0 = hv_rdtsc(); running_others(me) && hv_rdtsc() - t0 < max_tsc;)
        cpu_pause();
}

static void stop_others(unsigned me)
{
    if (hv.cpu_count < 2)
        return;
    bool sent = true;
    /* The NMI-only self-test: no kick and no INIT, so a CPU stops where the NMI finds it. */
    if (hv_fatal_selftest != HV_FATAL_TEST_NMI_ONLY) {
        for (unsigned i = 0; i < hv.cpu_count; i++)
            if (i != me)
                hv_cpu_kick(i);
        sent = ipi_others(ICR_ALL_BUT_SELF | ICR_DM_INIT | ICR_LEVEL_ASSERT);
        wait_stopped(me, FATAL_EXIT_WAIT_TSC);
    }
    if (running_others(me) && sent) {
        ipi_others(ICR_ALL_BUT_SELF | ICR_DM_NMI);
        wait_stopped(me, FATAL_NMI_WAIT_TSC);
    }
    for (unsigned i = 0; i < hv.cpu_count; i++) {
        if (i == me)
            continue;
        enum hv_cpu_stop s = hv_fatal_cpu_stop(i);
        hv_log("hvtrace: fatal: cpu %u %s\n", i,
               s == HV_CPU_STOPPED_AT_EXIT ? "stopped at a VM exit" :
               s == HV_CPU_STOPPED_IN_HV ? "stopped inside the hypervisor (NMI)" :
               sent ? "did NOT stop (left running)" : "did NOT stop (the APIC is disabled: no IPI)");
    }
}

/* --- the reset (the PC's ways; the SDM leaves the platform's reset to the platform) --- */
#define PORT_RESET_CTL   0xcf9
#define RESET_CTL_SYS    0x02        /* 0xCF9 bit 1: system (hard) reset on the next bit 2 */
#define RESET_CTL_HARD   0x06        /* bits 1 and 2: do a hard reset */
#define PORT_KBC_CMD     0x64
#define KBC_CMD_RESET    0xfe        /* pulse the CPU reset line */
#define RESET_SETTLE_TSC 50000000ull /* time each way gets before the next is tried */

static void settle(void)
{
    for (uint64_t t0 = hv_rdtsc(); hv_rdtsc() - t0 < RESET_SETTLE_TSC;)
        cpu_pause();
}

/* Bochs 3.0's PIIX4 ACPI function (00:01.3, 8086:7113) keeps PMREGMISC (config 0x80, bit 0:
 * PM I/O space enabled) across a hardware reset while its PM base (0x40) goes back to 0
 * (iodev/acpi.cc reset). OVMF then sees the PM I/O space enabled, does not program the base,
 * and waits on a PM timer it reads at port 0x0008 (base 0 + 8), which reads all ones for good:
 * the machine never boots again (measured: Bochs's log fills with 32-bit reads of port 8).
 * Clearing the bit first makes the firmware program the function as at power-on; on a real
 * PIIX4 the reset clears it anyway. 0xCF8/0xCFC configuration mechanism #1 (PCI Local Bus
 * spec 3.0, 3.2.2.3.2). */
#define PCI_CFG_ADDR      0xcf8
#define PCI_CFG_DATA      0xcfc
#define PIIX4_ACPI_CFG(o) (0x80000000u | (1u << 11) | (3u << 8) | (o))   /* bus 0, dev 1, fn 3 */
#define PIIX4_ACPI_ID     0x71138086u
#define PIIX4_PMREGMISC   0x80

void hv_reset_prepare(void)
{
    hv_outl(PCI_CFG_ADDR, PIIX4_ACPI_CFG(0));
    if (hv_inl(PCI_CFG_DATA) != PIIX4_ACPI_ID)
        return;
    hv_outl(PCI_CFG_ADDR, PIIX4_ACPI_CFG(PIIX4_PMREGMISC));
    hv_outl(PCI_CFG_DATA, hv_inl(PCI_CFG_DATA) & ~1u);
}

void hv_machine_reset(void)
{
    hv_reset_prepare();
    hv_outb(PORT_RESET_CTL, RESET_CTL_SYS);
    hv_outb(PORT_RESET_CTL, RESET_CTL_HARD);
    settle();
    hv_outb(PORT_KBC_CMD, KBC_CMD_RESET);
    settle();
    /* Last: a triple fault in VMX root operation is a shutdown, which PC chipsets turn into a
     * reset (an empty IDT: the #BP, then #DF, cannot be delivered). */
    struct cpu_dtr none = { 0, 0 };
    __asm__ volatile("lidt %0; int3" :: "m"(none));
    for (;;)
        __asm__ volatile("cli; hlt");
}

static __attribute__((noreturn)) void finish(void)
{
    hv_log("hvtrace: fatal: %s%s", why, why[0] && why[strlen(why) - 1] == '\n' ? "" : "\n");
    if (locks_broken)
        hv_log("hvtrace: fatal: %lu locks held by stopped CPUs were taken anyway\n", locks_broken);
    hv_log("hvtrace: fatal: resetting the machine\n");
    hv_machine_reset();
    __builtin_unreachable();
}

void hv_panic(const char *fmt, ...)
{
    unsigned me = self_index();
    uint32_t none = FATAL_NO_CPU;
    va_list ap;
    va_start(ap, fmt);
    if (!__atomic_compare_exchange_n(&owner, &none, me, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (none != me) {
            /* Another CPU owns the fatal path: say why this one stopped too, then stop. */
            char r[HV_FATAL_WHY_MAX];
            hv_vsnprintf(r, sizeof r, fmt, ap);
            hv_log("hvtrace: PANIC: cpu %u (while cpu %u is in the fatal path): %s", me, none, r);
            park(me, HV_CPU_STOPPED_IN_HV);
        }
        /* The owner again: a hook (or the path itself) failed. */
        if (__atomic_add_fetch(&depth, 1, __ATOMIC_ACQ_REL) > 2)
            hv_machine_reset();
        char r[HV_FATAL_WHY_MAX];
        hv_vsnprintf(r, sizeof r, fmt, ap);
        hv_log("hvtrace: PANIC inside the fatal path (the hooks left are skipped): %s", r);
        finish();
    }
    depth = 1;
    /* The NMI-only self-test sends its NMI before anything else, so that it finds the others
     * where they happen to be (a stepping CPU: mostly inside the hypervisor) rather than parked
     * at an exit they reached while this CPU writes its first log line. */
    if (hv_fatal_selftest == HV_FATAL_TEST_NMI_ONLY && hv.started && hv.cpu_count > 1)
        ipi_others(ICR_ALL_BUT_SELF | ICR_DM_NMI);
    /* From here: others park at their next exit, and this CPU's lock waits are bounded (it may
     * hold a lock itself: a panic inside the log or an EPT edit). */
    __atomic_store_n(&hv_fatal_stopping, true, __ATOMIC_RELEASE);
    hv_vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    hv_log("hvtrace: PANIC: %s%s", why, why[0] && why[strlen(why) - 1] == '\n' ? "" : "\n");
    if (!hv.started) {
        hv_log("hvtrace: fatal: before any CPU ran the guest: halting (no reset)\n");
        for (;;)
            __asm__ volatile("cli; hlt");
    }
    if (me < HVT_MAX_CPUS)
        stop_state[me] = HV_CPU_FATAL;
    stop_others(me);
    if (hv_fatal_selftest == HV_FATAL_TEST_NESTED)
        hv_panic("self-test: a second panic inside the fatal path\n");
    exit_reg_fatal(why);
    finish();
}
