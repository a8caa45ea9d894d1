/*
 * msr_class.c - the reviewed MSR allow-list and the MSR bitmap it makes (msr_policy.h). Pure:
 * no hardware access, so the host unit test runs it as it is.
 *
 * How to read the list: an MSR is here because Linux uses it in normal running and what it
 * does stays inside the guest (VMX switches it, or it is the guest's own state the hypervisor
 * never relies on); MSR numbers and names from the SDM, Vol. 4 "Model-Specific Registers",
 * chapter 2 "MSRs in Intel Processors" (architectural MSRs, table 2-2). What is not here is
 * read through an exit and refused on write.
 */
#include "msr_policy.h"
#include "x86_arch.h"

/* MSR bitmap layout (SDM Vol. 3C 25.6.9): read-low, read-high, write-low, write-high, 1 KiB
 * each, one bit per MSR of 0-0x1fff and 0xc0000000-0xc0001fff. */
#define BITMAP_READ_LOW   0
#define BITMAP_READ_HIGH  1024
#define BITMAP_WRITE_LOW  2048
#define BITMAP_WRITE_HIGH 3072
#define BITMAP_BYTES      4096
#define HIGH_BASE         0xc0000000u
#define RANGE             0x2000u

struct msr_rule { uint32_t first, last; enum msr_class cls; };

static const struct msr_rule rules[] = {
    /* Switched by VM entry/exit or the guest's own execution state */
    {0x00000048, 0x00000049, MSR_PASS},        /* IA32_SPEC_CTRL, IA32_PRED_CMD */
    {0x0000010b, 0x0000010b, MSR_PASS},        /* IA32_FLUSH_CMD */
    {0x00000174, 0x00000176, MSR_PASS},        /* IA32_SYSENTER_CS/ESP/EIP (VMCS guest state) */
    {0x000001d9, 0x000001d9, MSR_PASS},        /* IA32_DEBUGCTL (VMCS guest state) */
    {0x00000277, 0x00000277, MSR_PASS},        /* IA32_PAT (loaded and saved by VMX) */
    {0x00000da0, 0x00000da0, MSR_PASS},        /* IA32_XSS: the guest's XSAVES state */
    {0x000006e1, 0x000006e1, MSR_PASS},        /* IA32_PKRS */
    {0x000006a0, 0x000006a8, MSR_PASS},        /* CET: U_CET, S_CET, PLx_SSP, INT_SSP_TABLE */
    {0xc0000080, 0xc0000080, MSR_PASS},        /* IA32_EFER (loaded and saved by VMX) */
    {0xc0000081, 0xc0000084, MSR_PASS},        /* STAR, LSTAR, CSTAR, FMASK: the guest's syscall */
    {0xc0000100, 0xc0000103, MSR_PASS},        /* FS/GS/KERNEL_GS base, TSC_AUX */
    {0x00000800, 0x000008ff, MSR_PASS},        /* x2APIC registers: the guest owns its APIC (the
                                                  INIT/SIPI it sends still exit) */
    /* Performance monitoring, counters and their controls (not DS/PEBS/PT: below) */
    {0x000000c1, 0x000000c8, MSR_PASS},        /* IA32_PMC0-7 */
    {0x00000186, 0x0000018d, MSR_PASS},        /* IA32_PERFEVTSEL0-7 */
    {0x00000309, 0x0000030c, MSR_PASS},        /* IA32_FIXED_CTR0-3 */
    {0x00000345, 0x00000345, MSR_READ_ONLY},   /* IA32_PERF_CAPABILITIES */
    {0x0000038d, 0x00000390, MSR_PASS},        /* FIXED_CTR_CTRL, PERF_GLOBAL_STATUS/CTRL/OVF_CTRL */
    {0x000004c1, 0x000004c8, MSR_PASS},        /* IA32_A_PMC0-7 */
    {0x000001a6, 0x000001a7, MSR_PASS},        /* MSR_OFFCORE_RSP_0/1: event filters */
    {0x000001c8, 0x000001c9, MSR_PASS},        /* MSR_LBR_SELECT, MSR_LASTBRANCH_TOS */
    {0x00000680, 0x0000069f, MSR_PASS},        /* MSR_LASTBRANCH_n_FROM_IP */
    {0x000006c0, 0x000006df, MSR_PASS},        /* MSR_LASTBRANCH_n_TO_IP */
    {0x00000dc0, 0x00000ddf, MSR_PASS},        /* MSR_LBR_INFO_n */
    {0x000003f6, 0x000003f7, MSR_PASS},        /* MSR_PEBS_LD_LAT, MSR_PEBS_FRONTEND: thresholds
                                                  only; PEBS itself stays off (PEBS_ENABLE) */
    /* Machine check architecture */
    {0x00000179, 0x00000179, MSR_READ_ONLY},   /* IA32_MCG_CAP */
    {0x0000017a, 0x0000017b, MSR_PASS},        /* IA32_MCG_STATUS, IA32_MCG_CTL */
    {0x00000280, 0x0000029f, MSR_PASS},        /* IA32_MC0-31_CTL2 */
    {0x00000400, 0x0000047f, MSR_PASS},        /* IA32_MCi_CTL/STATUS/ADDR/MISC */
    /* Power and thermal: the guest's frequency and temperature requests */
    {0x000000e7, 0x000000e8, MSR_READ_ONLY},   /* IA32_MPERF, IA32_APERF */
    {0x000000ce, 0x000000ce, MSR_READ_ONLY},   /* MSR_PLATFORM_INFO */
    {0x00000198, 0x00000198, MSR_READ_ONLY},   /* IA32_PERF_STATUS */
    {0x00000199, 0x0000019c, MSR_PASS},        /* PERF_CTL, CLOCK_MODULATION, THERM_INTERRUPT/STATUS */
    {0x000001a0, 0x000001a0, MSR_MISC_ENABLE}, /* IA32_MISC_ENABLE: writes checked */
    {0x000001a2, 0x000001a2, MSR_READ_ONLY},   /* MSR_TEMPERATURE_TARGET */
    {0x000001ad, 0x000001ad, MSR_READ_ONLY},   /* MSR_TURBO_RATIO_LIMIT */
    {0x000001b0, 0x000001b2, MSR_PASS},        /* ENERGY_PERF_BIAS, PACKAGE_THERM_STATUS/INTERRUPT */
    {0x00000606, 0x00000606, MSR_READ_ONLY},   /* MSR_RAPL_POWER_UNIT */
    {0x00000611, 0x00000611, MSR_READ_ONLY},   /* MSR_PKG_ENERGY_STATUS */
    {0x00000639, 0x00000639, MSR_READ_ONLY},   /* MSR_PP0_ENERGY_STATUS */
    {0x00000641, 0x00000641, MSR_READ_ONLY},   /* MSR_PP1_ENERGY_STATUS */
    {0x00000770, 0x00000777, MSR_PASS},        /* IA32_PM_ENABLE, HWP_CAPABILITIES/REQUEST/STATUS */
    /* Features the guest turns on for itself */
    {0x00000140, 0x00000140, MSR_PASS},        /* MISC_FEATURE_ENABLES (CPUID faulting: CPUID
                                                  exits to us unconditionally anyway) */
    {0x000000e1, 0x000000e1, MSR_PASS},        /* IA32_UMWAIT_CONTROL */
    {0x00000122, 0x00000123, MSR_PASS},        /* IA32_TSX_CTRL, IA32_MCU_OPT_CTRL */
    {0x000001c4, 0x000001c5, MSR_PASS},        /* IA32_XFD, IA32_XFD_ERR: the guest's XSAVE
                                                  state (AMX first use); the hypervisor uses
                                                  no XFD-able component */
    {0x000004d0, 0x000004d0, MSR_PASS},        /* IA32_MCG_EXT_CTL: local machine checks, the
                                                  guest's (machine checks are handed to it) */
    {0x000014cf, 0x000014cf, MSR_PASS},        /* IA32_LBR_DEPTH (architectural LBRs; not
                                                  IA32_LBR_CTL: no VMX control switches it here) */
    {0x000017d1, 0x000017d1, MSR_PASS},        /* IA32_HW_FEEDBACK_CONFIG */
    {0x0000008b, 0x0000008b, MSR_PASS},        /* IA32_BIOS_SIGN_ID: Linux writes 0, reads the
                                                  microcode revision */
    {0x0000010a, 0x0000010a, MSR_READ_ONLY},   /* IA32_ARCH_CAPABILITIES */
    {0x000000fe, 0x000000fe, MSR_READ_ONLY},   /* IA32_MTRRCAP */
    {0x00000017, 0x00000017, MSR_READ_ONLY},   /* IA32_PLATFORM_ID */
    {0x0000004e, 0x0000004e, MSR_PASS},        /* MSR_PPIN_CTL */
    {0x0000004f, 0x0000004f, MSR_READ_ONLY},   /* MSR_PPIN */
    {0x00000035, 0x00000035, MSR_READ_ONLY},   /* MSR_CORE_THREAD_COUNT */
    {0x0000003a, 0x0000003a, MSR_READ_ONLY},   /* IA32_FEATURE_CONTROL (locked by the loader) */
    {0x00000010, 0x00000010, MSR_READ_ONLY},   /* IA32_TSC: the clock the hypervisor keeps */
    {0x000014ce, 0x000014ce, MSR_LBR_CTL},     /* IA32_LBR_CTL: switched by VMX where it can */
    {0x0000003b, 0x0000003b, MSR_TSC_ADJUST},  /* IA32_TSC_ADJUST: the guest's copy; a write
                                                  moves the guest's TSC only */
    {0x000006e0, 0x000006e0, MSR_PASS},        /* IA32_TSC_DEADLINE (a module may intercept it) */
    /* Checked or kept per CPU: they reach past the guest */
    {0x0000001b, 0x0000001b, MSR_APIC_BASE},   /* IA32_APIC_BASE */
    {0x00000200, 0x0000021f, MSR_SHADOW},      /* IA32_MTRR_PHYSBASE0-PHYSMASK15 */
    {0x00000250, 0x00000250, MSR_SHADOW},      /* IA32_MTRR_FIX64K_00000 */
    {0x00000258, 0x00000259, MSR_SHADOW},      /* IA32_MTRR_FIX16K_80000/A0000 */
    {0x00000268, 0x0000026f, MSR_SHADOW},      /* IA32_MTRR_FIX4K_C0000-F8000 */
    {0x000002ff, 0x000002ff, MSR_SHADOW},      /* IA32_MTRR_DEF_TYPE */
    {0x00000480, 0x00000493, MSR_GP},          /* IA32_VMX_*: CPUID says no VMX */
    {0x000017d0, 0x000017d0, MSR_HFI_PTR},     /* IA32_HW_FEEDBACK_PTR: memory the CPU writes */
    /* Written by Linux, dropped (KVM does the same) */
    {0x00000079, 0x00000079, MSR_WRITE_IGNORE}, /* IA32_BIOS_UPDT_TRIG: a microcode update */
};

enum msr_class msr_policy_class(uint32_t msr)
{
    for (unsigned i = 0; i < sizeof rules / sizeof rules[0]; i++)
        if (msr >= rules[i].first && msr <= rules[i].last)
            return rules[i].cls;
    return MSR_READ_PASS;
}

bool msr_hfi_ptr_ok(uint64_t val, unsigned pages, uint64_t rbase, uint64_t rsize)
{
    if (!(val & MSR_HFI_PTR_VALID))
        return true;
    if (val & ~(MSR_HFI_PTR_ADDR | MSR_HFI_PTR_VALID))
        return false;                        /* reserved bits: #GP, as the CPU gives */
    uint64_t lo = val & MSR_HFI_PTR_ADDR, hi = lo + (uint64_t)pages * 0x1000;
    return hi <= rbase || lo >= rbase + rsize;
}

bool msr_misc_enable_write_ok(uint64_t now, uint64_t val)
{
    uint64_t set = val & ~now;
    return !(set & (MISC_ENABLE_XD_DISABLE | MISC_ENABLE_LIMIT_CPUID));
}

void msr_bitmap_mark(uint8_t *bitmap, uint32_t msr, bool read, bool write, bool exits)
{
    unsigned r, w;
    uint32_t bit;
    if (msr < RANGE) {
        r = BITMAP_READ_LOW; w = BITMAP_WRITE_LOW; bit = msr;
    } else if (msr - HIGH_BASE < RANGE) {
        r = BITMAP_READ_HIGH; w = BITMAP_WRITE_HIGH; bit = msr - HIGH_BASE;
    } else {
        return;                              /* outside the bitmap: always exits */
    }
    uint8_t m = (uint8_t)(1u << (bit % 8));
    if (read)
        bitmap[r + bit / 8] = exits ? bitmap[r + bit / 8] | m : bitmap[r + bit / 8] & (uint8_t)~m;
    if (write)
        bitmap[w + bit / 8] = exits ? bitmap[w + bit / 8] | m : bitmap[w + bit / 8] & (uint8_t)~m;
}

void msr_policy_fill(uint8_t *bitmap)
{
    for (unsigned i = 0; i < BITMAP_BYTES; i++)
        bitmap[i] = 0xff;
    for (unsigned i = 0; i < sizeof rules / sizeof rules[0]; i++) {
        bool rd = rules[i].cls == MSR_PASS || rules[i].cls == MSR_READ_ONLY || rules[i].cls == MSR_APIC_BASE ||
                  rules[i].cls == MSR_MISC_ENABLE || rules[i].cls == MSR_HFI_PTR;
        bool wr = rules[i].cls == MSR_PASS;
        for (uint32_t m = rules[i].first; m <= rules[i].last; m++)
            msr_bitmap_mark(bitmap, m, rd, wr, false);
    }
}
