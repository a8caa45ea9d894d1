/*
 * exit_reg.c - the registries behind hv_exit.h: which module handles which exit reason, port,
 * MSR, hypercall and EPT range, and who observes exits or is told of power-off. vmx_exit.c
 * looks handlers up here (exit_reg.h); nothing here knows who registers.
 */
#include "exit_reg.h"
#include "hv_core.h"
#include "hvt_hypercall.h"
#include "hv_guest.h"
#include "msr_policy.h"

#define IO_BITMAP_PORTS_PER_PAGE 0x8000u   /* bitmap A: ports 0-0x7fff, B: 0x8000-0xffff */

#define IO_SLOTS      16
#define MSR_SLOTS     16
#define EPT_SLOTS     16
#define NOTIFIERS     8

struct exit_reg exit_reg;

/* The exit reasons vmm/ lends to modules (hv_exit.h); all others are vmm/'s own. */
static bool lendable(unsigned reason)
{
    switch (reason) {
    case EXIT_MTF: case EXIT_HLT: case EXIT_EXTERNAL_INTR: case EXIT_RDTSC: case EXIT_RDTSCP:
    case EXIT_PREEMPTION_TIMER: case EXIT_INVLPG: case EXIT_INVPCID: case EXIT_EXCEPTION_NMI:
        return true;
    }
    return false;
}

hv_exit_fn hv_exit_register(unsigned reason, hv_exit_fn fn, bool *ok)
{
    bool can = reason < EXIT_REASON_COUNT && lendable(reason);
    if (ok)
        *ok = can;
    if (!can)
        return 0;
    hv_exit_fn prev = exit_reg.exit[reason];
    exit_reg.exit[reason] = fn;
    return prev;
}

hv_exit_fn hv_exit_register_quick(unsigned reason, hv_exit_fn fn, bool *ok)
{
    bool can = reason < EXIT_REASON_COUNT && lendable(reason);
    if (ok)
        *ok = can;
    if (!can)
        return 0;
    hv_exit_fn prev = exit_reg.quick[reason];
    exit_reg.quick[reason] = fn;
    return prev;
}

/* Make port accesses to [port, port + width) exit (SDM 25.6.4 "I/O-Bitmap Addresses"). */
void exit_reg_io_intercept(uint16_t port, unsigned width)
{
    for (unsigned p = port; p < (unsigned)port + width && p <= 0xffff; p++) {
        uint8_t *bm = p < IO_BITMAP_PORTS_PER_PAGE ? hv.io_bitmap_a : hv.io_bitmap_b;
        unsigned bit = p % IO_BITMAP_PORTS_PER_PAGE;
        bm[bit / 8] |= (uint8_t)(1u << (bit % 8));
    }
}

static struct { uint16_t port, width; hv_io_fn fn; } io_slots[IO_SLOTS];

hv_io_fn hv_io_register(uint16_t port, unsigned width, hv_io_fn fn)
{
    for (unsigned i = 0; i < IO_SLOTS; i++) {
        if (io_slots[i].fn && io_slots[i].port == port && io_slots[i].width == width) {
            hv_io_fn prev = io_slots[i].fn;
            io_slots[i].fn = fn;
            return prev;
        }
        if (!io_slots[i].fn) {
            io_slots[i].port = port;
            io_slots[i].width = (uint16_t)width;
            io_slots[i].fn = fn;
            exit_reg_io_intercept(port, width);
            return 0;
        }
    }
    hv_panic("hv_io_register: more than %u port ranges\n", IO_SLOTS);
}

hv_io_fn exit_reg_io(uint16_t port)
{
    for (unsigned i = 0; i < IO_SLOTS && io_slots[i].fn; i++)
        if (port >= io_slots[i].port && port < io_slots[i].port + io_slots[i].width)
            return io_slots[i].fn;
    return 0;
}

static struct { uint32_t msr; hv_msr_fn fn; } msr_slots[MSR_SLOTS];

hv_msr_fn hv_msr_register(uint32_t msr, bool read, bool write, hv_msr_fn fn)
{
    msr_bitmap_mark(hv.msr_bitmap, msr, read, write, true);
    for (unsigned i = 0; i < MSR_SLOTS; i++) {
        if (msr_slots[i].fn && msr_slots[i].msr == msr) {
            hv_msr_fn prev = msr_slots[i].fn;
            msr_slots[i].fn = fn;
            return prev;
        }
        if (!msr_slots[i].fn) {
            msr_slots[i].msr = msr;
            msr_slots[i].fn = fn;
            return 0;
        }
    }
    hv_panic("hv_msr_register: more than %u MSRs\n", MSR_SLOTS);
}

hv_msr_fn exit_reg_msr(uint32_t msr)
{
    for (unsigned i = 0; i < MSR_SLOTS && msr_slots[i].fn; i++)
        if (msr_slots[i].msr == msr)
            return msr_slots[i].fn;
    return 0;
}

hv_hypercall_fn hv_hypercall_register(unsigned func, hv_hypercall_fn fn, enum hv_hc_priv priv, bool *ok)
{
    /* VERSION and HV_RANGE are vmm/'s own. */
    bool can = func < HV_HYPERCALL_MAX && func != HVT_HC_VERSION && func != HVT_HC_HV_RANGE;
    if (ok)
        *ok = can;
    if (!can)
        return 0;
    hv_hypercall_fn prev = exit_reg.hypercall[func];
    exit_reg.hypercall[func] = fn;
    exit_reg.hc_priv[func] = priv;
    return prev;
}

void hv_hypercall_admin(hv_hc_admin_fn fn) { exit_reg.hc_admin = fn; }

uint64_t hv_hypercall_refused(unsigned func)
{
    return func < HV_HYPERCALL_MAX ? __atomic_load_n(&exit_reg.hc_refused[func], __ATOMIC_RELAXED) : 0;
}

static struct { uint64_t gpa, size; hv_ept_fault_fn fn; } ept_slots[EPT_SLOTS];
static unsigned ept_nslots;
static struct spinlock ept_slots_lock;

int hv_ept_fault_register(uint64_t gpa, uint64_t size, hv_ept_fault_fn fn)
{
    int rc = -1;
    spin_lock(&ept_slots_lock);
    unsigned n = ept_nslots;
    if (n < EPT_SLOTS) {
        ept_slots[n].gpa = gpa;
        ept_slots[n].size = size;
        ept_slots[n].fn = fn;
        __atomic_store_n(&ept_nslots, n + 1, __ATOMIC_RELEASE);   /* published when complete */
        rc = 0;
    }
    spin_unlock(&ept_slots_lock);
    return rc;
}

bool exit_reg_ept(uint64_t gpa, uint64_t qualification)
{
    /* The most recent registration first; a handler that declines passes it on. */
    for (unsigned i = __atomic_load_n(&ept_nslots, __ATOMIC_ACQUIRE); i-- > 0;)
        if (gpa - ept_slots[i].gpa < ept_slots[i].size && ept_slots[i].fn(gpa, qualification))
            return true;
    return false;
}

void hv_exception_intercept(unsigned vector, bool on)
{
    if (vector >= 32)
        return;
    if (on)
        __atomic_or_fetch(&hv.exception_bitmap, 1u << vector, __ATOMIC_RELEASE);
    else
        __atomic_and_fetch(&hv.exception_bitmap, ~(1u << vector), __ATOMIC_RELEASE);
    /* Each CPU writes its own VMCS at its next full exit (vmx_exit_dispatch). */
    __atomic_add_fetch(&hv.ctl_epoch, 1, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < hv.cpu_count; i++)
        hv_cpu_kick(i);
}

int hv_exit_observe(hv_observer_fn pre, hv_observer_fn post)
{
    if (exit_reg.nobservers == EXIT_REG_OBSERVERS)
        return -1;
    exit_reg.pre[exit_reg.nobservers] = pre;
    exit_reg.post[exit_reg.nobservers] = post;
    exit_reg.nobservers++;
    return 0;
}

static void (*power_off_fns[NOTIFIERS])(void);
static void (*fatal_fns[NOTIFIERS])(const char *why);
static void (*tsc_moved_fns[NOTIFIERS])(int64_t delta);
static void (*wake_fns[NOTIFIERS])(void);
static unsigned npower_off, nfatal, ntsc_moved, nwake;

int hv_on_wake(void (*fn)(void))
{
    if (nwake == NOTIFIERS)
        return -1;
    wake_fns[nwake++] = fn;
    return 0;
}

void exit_reg_wake(void)
{
    for (unsigned i = 0; i < nwake; i++)
        wake_fns[i]();
}

int hv_on_tsc_moved(void (*fn)(int64_t delta))
{
    if (ntsc_moved == NOTIFIERS)
        return -1;
    tsc_moved_fns[ntsc_moved++] = fn;
    return 0;
}

void exit_reg_tsc_moved(int64_t delta)
{
    for (unsigned i = 0; i < ntsc_moved; i++)
        tsc_moved_fns[i](delta);
}

int hv_on_power_off(void (*fn)(void))
{
    if (npower_off == NOTIFIERS)
        return -1;
    power_off_fns[npower_off++] = fn;
    return 0;
}

int hv_on_fatal(void (*fn)(const char *why))
{
    if (nfatal == NOTIFIERS)
        return -1;
    fatal_fns[nfatal++] = fn;
    return 0;
}

void exit_reg_power_off(void)
{
    for (unsigned i = npower_off; i-- > 0;)
        power_off_fns[i]();
}

void exit_reg_fatal(const char *why)
{
    for (unsigned i = nfatal; i-- > 0;)
        fatal_fns[i](why);
}

void *hv_mtf_fast;

void hv_mtf_fast_register(void (*entry)(void)) { hv_mtf_fast = (void *)entry; }
