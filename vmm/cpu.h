/*
 * cpu.h - x86-64 architectural registers, MSR numbers and accessor instructions used by the
 * hypervisor (Intel SDM Vol. 3A ch. 2 and Vol. 4). Inline wrappers only; no state.
 */
#ifndef HVT_CPU_H
#define HVT_CPU_H
#include <stdint.h>

/* CR0 (SDM 2.5) */
#define CR0_PE   (1ull << 0)
#define CR0_NE   (1ull << 5)
#define CR0_WP   (1ull << 16)
#define CR0_NW   (1ull << 29)
#define CR0_CD   (1ull << 30)
#define CR0_PG   (1ull << 31)
/* CR4 */
#define CR4_PAE        (1ull << 5)
#define CR4_PGE        (1ull << 7)
#define CR4_VMXE       (1ull << 13)
#define CR4_PCIDE      (1ull << 17)
#define CR4_OSXSAVE    (1ull << 18)
#define CR4_LA57       (1ull << 12)
/* EFER (SDM 2.2.1) */
#define EFER_SCE  (1ull << 0)
#define EFER_LME  (1ull << 8)
#define EFER_LMA  (1ull << 10)
#define EFER_NXE  (1ull << 11)
/* RFLAGS */
#define RFLAGS_CF (1ull << 0)
#define RFLAGS_FIXED1 (1ull << 1)
#define RFLAGS_ZF (1ull << 6)
#define RFLAGS_TF (1ull << 8)
#define RFLAGS_IF (1ull << 9)
#define RFLAGS_RF (1ull << 16)

/* MSRs (SDM Vol. 4) */
#define MSR_IA32_FEATURE_CONTROL   0x03a
#define   FEATURE_CONTROL_LOCK            (1ull << 0)
#define   FEATURE_CONTROL_VMX_OUTSIDE_SMX (1ull << 2)
#define MSR_IA32_SYSENTER_CS       0x174
#define MSR_IA32_SYSENTER_ESP      0x175
#define MSR_IA32_SYSENTER_EIP      0x176
#define MSR_IA32_DEBUGCTL          0x1d9
#define MSR_IA32_PAT               0x277
#define MSR_IA32_MTRRCAP           0x0fe
#define MSR_IA32_MTRR_PHYSBASE0    0x200
#define MSR_IA32_MTRR_PHYSMASK0    0x201
#define MSR_IA32_MTRR_FIX64K_00000 0x250
#define MSR_IA32_MTRR_FIX16K_80000 0x258
#define MSR_IA32_MTRR_FIX16K_A0000 0x259
#define MSR_IA32_MTRR_FIX4K_C0000  0x268
#define MSR_IA32_MTRR_DEF_TYPE     0x2ff
#define MSR_IA32_VMX_BASIC         0x480
#define MSR_IA32_VMX_PINBASED_CTLS 0x481
#define MSR_IA32_VMX_PROCBASED_CTLS 0x482
#define MSR_IA32_VMX_EXIT_CTLS     0x483
#define MSR_IA32_VMX_ENTRY_CTLS    0x484
#define MSR_IA32_VMX_MISC          0x485
#define MSR_IA32_VMX_CR0_FIXED0    0x486
#define MSR_IA32_VMX_CR0_FIXED1    0x487
#define MSR_IA32_VMX_CR4_FIXED0    0x488
#define MSR_IA32_VMX_CR4_FIXED1    0x489
#define MSR_IA32_VMX_PROCBASED_CTLS2 0x48b
#define MSR_IA32_VMX_EPT_VPID_CAP  0x48c
#define MSR_IA32_VMX_TRUE_PINBASED 0x48d
#define MSR_IA32_VMX_TRUE_PROCBASED 0x48e
#define MSR_IA32_VMX_TRUE_EXIT     0x48f
#define MSR_IA32_VMX_TRUE_ENTRY    0x490
#define MSR_IA32_EFER              0xc0000080
#define MSR_IA32_LSTAR             0xc0000082
#define MSR_IA32_FS_BASE           0xc0000100
#define MSR_IA32_GS_BASE           0xc0000101

/* CPUID bits */
#define CPUID_1_ECX_MONITOR    (1u << 3)
#define CPUID_1_ECX_VMX        (1u << 5)
#define CPUID_1_ECX_XSAVE      (1u << 26)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_80000001_EDX_PDPE1GB (1u << 26)

/* Exception vectors (SDM 6.3.1) */
enum { VEC_DE = 0, VEC_DB = 1, VEC_NMI = 2, VEC_BP = 3, VEC_UD = 6, VEC_DF = 8, VEC_GP = 13, VEC_PF = 14 };

static inline uint64_t cpu_rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}
static inline void cpu_wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}
static inline void cpu_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}
#define CPU_CR_ACCESSORS(n) \
    static inline uint64_t cpu_read_cr##n(void) { uint64_t v; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); return v; } \
    static inline void cpu_write_cr##n(uint64_t v) { __asm__ volatile("mov %0, %%cr" #n :: "r"(v) : "memory"); }
CPU_CR_ACCESSORS(0)
CPU_CR_ACCESSORS(3)
CPU_CR_ACCESSORS(4)
static inline uint64_t cpu_read_dr7(void) { uint64_t v; __asm__ volatile("mov %%dr7, %0" : "=r"(v)); return v; }
static inline uint64_t cpu_read_rflags(void) { uint64_t v; __asm__ volatile("pushfq; popq %0" : "=r"(v)); return v; }
static inline uint64_t cpu_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
struct __attribute__((packed)) cpu_dtr { uint16_t limit; uint64_t base; };
static inline void cpu_sgdt(struct cpu_dtr *d) { __asm__ volatile("sgdt %0" : "=m"(*d)); }
static inline void cpu_sidt(struct cpu_dtr *d) { __asm__ volatile("sidt %0" : "=m"(*d)); }
#define CPU_SEG_READER(s) \
    static inline uint16_t cpu_read_##s(void) { uint16_t v; __asm__ volatile("mov %%" #s ", %0" : "=r"(v)); return v; }
CPU_SEG_READER(cs)
CPU_SEG_READER(ss)
CPU_SEG_READER(ds)
CPU_SEG_READER(es)
CPU_SEG_READER(fs)
CPU_SEG_READER(gs)
static inline uint16_t cpu_read_tr(void) { uint16_t v; __asm__ volatile("str %0" : "=r"(v)); return v; }
static inline uint16_t cpu_read_ldtr(void) { uint16_t v; __asm__ volatile("sldt %0" : "=r"(v)); return v; }
static inline void cpu_pause(void) { __asm__ volatile("pause"); }
static inline void cpu_wbinvd(void) { __asm__ volatile("wbinvd" ::: "memory"); }

#endif
