/*
 * msr_policy.c - msr_policy.h's exit side: what a RDMSR/WRMSR that exited gets when no module
 * registered for it. The classes come from msr_class.c.
 */
#include "msr_policy.h"
#include "hv_core.h"
#include "cpu.h"
#include "vmx.h"
#include "exit_reg.h"

int msr_safe_read(uint32_t msr, uint64_t *val);    /* vmx_stub.asm: 0, or -1 on #GP */
int msr_safe_write(uint32_t msr, uint64_t val);

/* The MTRRs a guest may set (SDM Vol. 3A 12.11 "Memory Type Range Registers"): up to 16
 * variable pairs at 0x200, the 11 fixed-range ones, the default type. With EPT the guest's
 * memory types come from EPT and its PAT (SDM 29.3.7.2), never from the MTRRs, while the real
 * MTRRs also rule the hypervisor's own accesses: the guest gets its own copy, per CPU, which
 * starts as the firmware's. */
#define MTRR_VAR_FIRST 0x200u
#define MTRR_VAR_COUNT 32u
#define MTRR_SLOTS     (MTRR_VAR_COUNT + 12u)
#define APIC_BASE_RESERVED (0xffull | (1ull << 9))       /* bits 0-7 and 9 are reserved */

static int mtrr_slot(uint32_t msr)
{
    if (msr >= MTRR_VAR_FIRST && msr < MTRR_VAR_FIRST + MTRR_VAR_COUNT)
        return (int)(msr - MTRR_VAR_FIRST);
    switch (msr) {
    case 0x250: return MTRR_VAR_COUNT;
    case 0x258: return MTRR_VAR_COUNT + 1;
    case 0x259: return MTRR_VAR_COUNT + 2;
    case 0x2ff: return MTRR_VAR_COUNT + 11;
    }
    if (msr >= 0x268 && msr <= 0x26f)
        return (int)(MTRR_VAR_COUNT + 3 + (msr - 0x268));
    return -1;
}

static struct {
    uint64_t val[MTRR_SLOTS];
    uint64_t have;                   /* bit per slot: val[] holds the guest's copy */
} mtrr_shadow[HVT_MAX_CPUS];

/* The guest's IA32_TSC_ADJUST per CPU (MSR_TSC_ADJUST), read from the real MSR at first use. */
static struct { uint64_t val; bool have; } tsc_adjust[HVT_MAX_CPUS];

static bool tsc_adjust_get(unsigned cpu, uint64_t *val)
{
    if (cpu >= HVT_MAX_CPUS)
        return false;
    if (!tsc_adjust[cpu].have) {
        if (msr_safe_read(MSR_IA32_TSC_ADJUST, &tsc_adjust[cpu].val))
            return false;                    /* a CPU without it: #GP, as it would give */
        tsc_adjust[cpu].have = true;
    }
    *val = tsc_adjust[cpu].val;
    return true;
}

/* Refusals by MSR, for the exit summary: the first MSR_REFUSED_KINDS distinct MSRs get a
 * count each (a slot is claimed with a compare-and-swap: exits run on every CPU at once). */
static struct { uint32_t msr; uint32_t used; uint64_t reads, writes; } refused_by[MSR_REFUSED_KINDS];
static uint64_t refused_other;

static bool refuse(uint32_t msr, bool write)
{
    for (unsigned i = 0; i < MSR_REFUSED_KINDS; i++) {
        uint32_t used = __atomic_load_n(&refused_by[i].used, __ATOMIC_ACQUIRE);
        if (used == 2 && refused_by[i].msr != msr)
            continue;
        if (used != 2) {
            uint32_t want = 0;
            if (!__atomic_compare_exchange_n(&refused_by[i].used, &want, 1, false, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE)) {
                while (__atomic_load_n(&refused_by[i].used, __ATOMIC_ACQUIRE) != 2)
                    ;                        /* another CPU is filling it in */
                if (refused_by[i].msr != msr)
                    continue;
            } else {
                refused_by[i].msr = msr;
                __atomic_store_n(&refused_by[i].used, 2, __ATOMIC_RELEASE);
            }
        }
        __atomic_add_fetch(write ? &refused_by[i].writes : &refused_by[i].reads, 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_add_fetch(&refused_other, 1, __ATOMIC_RELAXED);
    return false;
}

uint64_t msr_policy_refused(unsigned i, uint32_t *msr, uint64_t *reads, uint64_t *writes)
{
    if (i >= MSR_REFUSED_KINDS)
        return __atomic_load_n(&refused_other, __ATOMIC_RELAXED);
    if (__atomic_load_n(&refused_by[i].used, __ATOMIC_ACQUIRE) != 2)
        return 0;
    *msr = refused_by[i].msr;
    *reads = __atomic_load_n(&refused_by[i].reads, __ATOMIC_RELAXED);
    *writes = __atomic_load_n(&refused_by[i].writes, __ATOMIC_RELAXED);
    return *reads + *writes;
}

bool msr_policy_read(unsigned cpu, uint32_t msr, uint64_t *val)
{
    switch (msr_policy_class(msr)) {
    case MSR_GP:
        return refuse(msr, false);
    case MSR_SHADOW: {
        int s = mtrr_slot(msr);
        if (s < 0 || cpu >= HVT_MAX_CPUS)
            return false;
        if (!(mtrr_shadow[cpu].have >> s & 1)) {
            if (msr_safe_read(msr, &mtrr_shadow[cpu].val[s]))
                return false;                /* not on this CPU (fewer variable pairs) */
            mtrr_shadow[cpu].have |= 1ull << s;
        }
        *val = mtrr_shadow[cpu].val[s];
        return true;
    }
    case MSR_TSC_ADJUST:
        return tsc_adjust_get(cpu, val);
    case MSR_LBR_CTL:
        if (!hv.lbr_ctl)
            return msr_safe_read(msr, val) == 0;
        *val = vmx_read(VMCS_GUEST_LBR_CTL);
        return true;
    default:
        return msr_safe_read(msr, val) == 0;
    }
}

bool msr_policy_write(unsigned cpu, uint32_t msr, uint64_t val)
{
    switch (msr_policy_class(msr)) {
    case MSR_PASS:
        return msr_safe_write(msr, val) == 0;
    case MSR_SHADOW: {
        int s = mtrr_slot(msr);
        uint64_t now;
        if (s < 0 || cpu >= HVT_MAX_CPUS || msr_safe_read(msr, &now))
            return false;                    /* an MTRR this CPU does not have: #GP */
        mtrr_shadow[cpu].val[s] = val;
        mtrr_shadow[cpu].have |= 1ull << s;
        return true;
    }
    case MSR_APIC_BASE: {
        /* The mode bits (enable, x2APIC) are the guest's; the base is where the hypervisor
         * reads the APIC and must stay inside what it maps: it may not move. */
        uint64_t now = hv_rdmsr(MSR_IA32_APIC_BASE);
        if ((val & APIC_BASE_RESERVED) || (val & APIC_BASE_ADDR_MASK) != (now & APIC_BASE_ADDR_MASK))
            return refuse(msr, true);
        return msr_safe_write(msr, val) == 0;   /* the CPU checks the mode change itself */
    }
    case MSR_MISC_ENABLE: {
        uint64_t now;
        if (msr_safe_read(msr, &now))
            return false;
        if (!msr_misc_enable_write_ok(now, val))
            return refuse(msr, true);
        return msr_safe_write(msr, val) == 0;
    }
    case MSR_WRITE_IGNORE:
        return true;
    case MSR_LBR_CTL:
        if (!hv.lbr_ctl || !msr_lbr_ctl_ok(val))
            return refuse(msr, true);
        vmx_write(VMCS_GUEST_LBR_CTL, val);
        return true;
    case MSR_TSC_ADJUST: {
        uint64_t old;
        if (!tsc_adjust_get(cpu, &old))
            return false;
        tsc_adjust[cpu].val = val;
        vmx_write(VMCS_TSC_OFFSET, msr_tsc_adjust_offset(vmx_read(VMCS_TSC_OFFSET), old, val));
        exit_reg_tsc_moved((int64_t)(val - old));
        return true;
    }
    case MSR_HFI_PTR: {
        uint32_t r[4];
        cpu_cpuid(6, 0, r);
        unsigned pages = ((r[3] >> 8) & 0xf) + 1;
        uint64_t lo = val & MSR_HFI_PTR_ADDR;
        if (!msr_hfi_ptr_ok(val, pages, hv.bi->region_phys, hv.bi->region_size) ||
            ((val & MSR_HFI_PTR_VALID) && !hv_gpa_is_ram(lo, (uint64_t)pages * X86_PAGE_SIZE)))
            return refuse(msr, true);
        return msr_safe_write(msr, val) == 0;
    }
    default:                                 /* MSR_GP, and what is only read through */
        return refuse(msr, true);
    }
}
