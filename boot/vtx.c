/* vtx.c - see vtx.h. Intel SDM vol. 3C chapter 23 and vol. 4 (MSR 0x3A). */
#include <efi.h>
#include <efilib.h>
#include "vtx.h"

#define CPUID_LEAF_FEATURES        1u
#define CPUID_1_ECX_VMX            (1u << 5)
#define MSR_IA32_FEATURE_CONTROL   0x3au
#define FEATURE_CONTROL_LOCK       (1ull << 0)
#define FEATURE_CONTROL_VMX_IN_SMX (1ull << 1)
#define FEATURE_CONTROL_VMX_OUTSIDE_SMX (1ull << 2)
#define VTX_AP_TIMEOUT_US          2000000u   /* StartupAllAPs: never wait forever */
#define VTX_MAX_CPUS               256u

enum vtx_cpu_state {
    VTX_CPU_NOT_RUN = 0,    /* the AP procedure never ran on it */
    VTX_CPU_OK,             /* was usable, or made usable (locked with VMXON outside SMX) */
    VTX_CPU_NO_VMX,         /* CPUID.1:ECX.VMX = 0 */
    VTX_CPU_LOCKED_OFF,     /* locked with VMXON outside SMX clear */
    VTX_CPU_WRITE_FAILED,   /* wrote the MSR but it did not stick */
};

struct vtx_shared {
    hvt_efi_mp_services *mp;
    UINT8 state[VTX_MAX_CPUS];       /* by MP services processor number */
    UINT64 msr_before[VTX_MAX_CPUS];
};

static inline void vtx_cpuid(UINT32 leaf, UINT32 *a, UINT32 *b, UINT32 *c, UINT32 *d)
{
    __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}

static inline UINT64 vtx_rdmsr(UINT32 msr)
{
    UINT32 lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((UINT64)hi << 32) | lo;
}

static inline void vtx_wrmsr(UINT32 msr, UINT64 v)
{
    __asm__ volatile("wrmsr" : : "c"(msr), "a"((UINT32)v), "d"((UINT32)(v >> 32)));
}

/* Runs on any CPU: no boot services, no Print. */
static enum vtx_cpu_state vtx_enable_this_cpu(UINT64 *before)
{
    UINT32 a, b, c, d;
    vtx_cpuid(CPUID_LEAF_FEATURES, &a, &b, &c, &d);
    if (!(c & CPUID_1_ECX_VMX)) return VTX_CPU_NO_VMX;
    UINT64 fc = vtx_rdmsr(MSR_IA32_FEATURE_CONTROL);
    *before = fc;
    if (fc & FEATURE_CONTROL_LOCK)
        return (fc & FEATURE_CONTROL_VMX_OUTSIDE_SMX) ? VTX_CPU_OK : VTX_CPU_LOCKED_OFF;
    vtx_wrmsr(MSR_IA32_FEATURE_CONTROL, fc | FEATURE_CONTROL_LOCK | FEATURE_CONTROL_VMX_OUTSIDE_SMX);
    fc = vtx_rdmsr(MSR_IA32_FEATURE_CONTROL);
    return (fc & FEATURE_CONTROL_LOCK) && (fc & FEATURE_CONTROL_VMX_OUTSIDE_SMX)
               ? VTX_CPU_OK : VTX_CPU_WRITE_FAILED;
}

static VOID EFIAPI vtx_ap_procedure(VOID *arg)
{
    struct vtx_shared *s = arg;
    UINTN me = 0;
    /* WhoAmI may be called from an AP (PI spec vol. 2, MP Services). */
    if (s->mp->who_am_i(s->mp, &me) != EFI_SUCCESS || me >= VTX_MAX_CPUS) return;
    UINT64 before = 0;
    s->state[me] = (UINT8)vtx_enable_this_cpu(&before);
    s->msr_before[me] = before;
}

static const CHAR16 *vtx_state_text(UINT8 st)
{
    switch (st) {
    case VTX_CPU_NO_VMX: return L"CPUID.1:ECX.VMX = 0 (the CPU has no VMX)";
    case VTX_CPU_LOCKED_OFF:
        return L"IA32_FEATURE_CONTROL is locked with VMX outside SMX disabled (enable VT-x in the firmware setup)";
    case VTX_CPU_WRITE_FAILED: return L"IA32_FEATURE_CONTROL did not accept lock + VMX outside SMX";
    case VTX_CPU_NOT_RUN: return L"an AP did not run the VT-x check";
    default: return L"ok";
    }
}

EFI_STATUS vtx_prepare(hvt_efi_mp_services *mp, CHAR16 *why, UINTN why_chars)
{
    static struct vtx_shared s;
    UINTN n = 1, enabled = 1, bsp = 0;
    SetMem(&s, sizeof s, 0);
    s.mp = mp;

    /* The BSP first: if it has no VMX, no AP is disturbed at all. */
    if (mp) {
        if (mp->get_number_of_processors(mp, &n, &enabled) != EFI_SUCCESS) n = enabled = 1;
        if (mp->who_am_i(mp, &bsp) != EFI_SUCCESS) bsp = 0;
    }
    if (n > VTX_MAX_CPUS) {
        SPrint(why, why_chars * sizeof(CHAR16), L"%d CPUs, more than the %d supported", n, VTX_MAX_CPUS);
        return EFI_UNSUPPORTED;
    }
    UINT64 before = 0;
    s.state[bsp] = (UINT8)vtx_enable_this_cpu(&before);
    s.msr_before[bsp] = before;
    if (s.state[bsp] != VTX_CPU_OK) {
        SPrint(why, why_chars * sizeof(CHAR16), L"%s", vtx_state_text(s.state[bsp]));
        return EFI_UNSUPPORTED;
    }
    Print(L"hvtrace: BSP: CPUID.1:ECX.VMX = 1, IA32_FEATURE_CONTROL 0x%lx -> 0x%lx\n", before,
          vtx_rdmsr(MSR_IA32_FEATURE_CONTROL));

    if (mp && enabled > 1) {
        EFI_STATUS st = mp->startup_all_aps(mp, vtx_ap_procedure, FALSE, NULL, VTX_AP_TIMEOUT_US,
                                            &s, NULL);
        if (st != EFI_SUCCESS) {
            SPrint(why, why_chars * sizeof(CHAR16), L"MP services StartupAllAPs failed: %r", st);
            return EFI_UNSUPPORTED;
        }
        for (UINTN i = 0; i < n; i++) {
            hvt_efi_processor_info info;
            if (i == bsp) continue;
            if (mp->get_processor_info(mp, i, &info) != EFI_SUCCESS ||
                !(info.status_flag & HVT_PROCESSOR_ENABLED_BIT))
                continue;
            if (s.state[i] != VTX_CPU_OK) {
                SPrint(why, why_chars * sizeof(CHAR16), L"CPU %d (APIC ID %d): %s", i,
                       (UINTN)info.processor_id, vtx_state_text(s.state[i]));
                return EFI_UNSUPPORTED;
            }
        }
        Print(L"hvtrace: %d APs: IA32_FEATURE_CONTROL locked with VMX outside SMX\n", enabled - 1);
    }
    return EFI_SUCCESS;
}
