/*
 * x86_arch.h - x86-64 architectural constants the hypervisor and its modules use, defined once:
 * control-register and RFLAGS bits, MSR numbers, CPUID feature bits, exception vectors, the
 * page size. Intel SDM (the edition docs/hypervisor.md names) Vol. 3A ch. 2 "System
 * Architecture Overview", ch. 6 "Interrupt and Exception Handling", Vol. 4 "Model-Specific
 * Registers".
 *
 * Contract: numbers only, no code and no state; usable from C and (through the generated
 * assembly constants) from NASM.
 */
#ifndef HVT_X86_ARCH_H
#define HVT_X86_ARCH_H

/* Paging (SDM 4.1 "Paging Modes and Control Bits") */
#define X86_PAGE_SHIFT 12
#define X86_PAGE_SIZE  (1ull << X86_PAGE_SHIFT)
#define X86_PAGE_MASK  (~(X86_PAGE_SIZE - 1))

/* CR0 (SDM 2.5) */
#define CR0_PE   (1ull << 0)
#define CR0_MP   (1ull << 1)
#define CR0_EM   (1ull << 2)
#define CR0_TS   (1ull << 3)
#define CR0_NE   (1ull << 5)
#define CR0_WP   (1ull << 16)
#define CR0_NW   (1ull << 29)
#define CR0_CD   (1ull << 30)
#define CR0_PG   (1ull << 31)
#define CR0_LMSW_BITS (CR0_PE | CR0_MP | CR0_EM | CR0_TS)   /* what LMSW can write */
/* CR4 */
#define CR4_PAE        (1ull << 5)
#define CR4_MCE        (1ull << 6)    /* machine-check exception enabled */
#define CR4_PGE        (1ull << 7)
#define CR4_VMXE       (1ull << 13)
#define CR4_PCIDE      (1ull << 17)
#define CR4_OSXSAVE    (1ull << 18)
#define CR4_LA57       (1ull << 12)
#define CR4_PKE        (1ull << 22)   /* protection keys, user pages */
#define CR4_CET        (1ull << 23)   /* control-flow enforcement (SDM Vol. 1 17 "Control-flow
                                         Enforcement Technology (CET)") */
#define CR4_PKS        (1ull << 24)   /* protection keys, supervisor pages */
/* EFER (SDM 2.2.1) */
#define EFER_SCE  (1ull << 0)
#define EFER_LME  (1ull << 8)
#define EFER_LMA  (1ull << 10)
#define EFER_NXE  (1ull << 11)
/* XCR0 (SDM 13.3 "Enabling the XSAVE Feature Set and XSAVE-Enabled Features") */
#define XCR0_X87  (1ull << 0)
#define XCR0_SSE  (1ull << 1)
#define XCR0_AVX  (1ull << 2)
#define XCR0_BNDREGS   (1ull << 3)      /* MPX */
#define XCR0_BNDCSR    (1ull << 4)
#define XCR0_OPMASK    (1ull << 5)      /* AVX-512: k0-k7 */
#define XCR0_ZMM_HI256 (1ull << 6)
#define XCR0_HI16_ZMM  (1ull << 7)
#define XCR0_TILECFG   (1ull << 17)     /* AMX */
#define XCR0_TILEDATA  (1ull << 18)
/* RFLAGS */
#define RFLAGS_CF (1ull << 0)
#define RFLAGS_FIXED1 (1ull << 1)
#define RFLAGS_PF (1ull << 2)
#define RFLAGS_AF (1ull << 4)
#define RFLAGS_ZF (1ull << 6)
#define RFLAGS_SF (1ull << 7)
#define RFLAGS_TF (1ull << 8)
#define RFLAGS_IF (1ull << 9)
#define RFLAGS_RF (1ull << 16)
#define RFLAGS_OF (1ull << 11)
#define RFLAGS_ARITH (RFLAGS_CF | RFLAGS_PF | RFLAGS_AF | RFLAGS_ZF | RFLAGS_SF | RFLAGS_OF)

/* MSRs (SDM Vol. 4) */
#define MSR_IA32_TSC               0x010
#define MSR_IA32_APIC_BASE         0x01b
#define MSR_IA32_FEATURE_CONTROL   0x03a
#define MSR_IA32_TSC_ADJUST        0x03b
#define MSR_IA32_LBR_CTL           0x14ce
#define   FEATURE_CONTROL_LOCK            (1ull << 0)
#define   FEATURE_CONTROL_VMX_OUTSIDE_SMX (1ull << 2)
#define MSR_IA32_SYSENTER_CS       0x174
#define MSR_IA32_MCG_STATUS        0x17a
#define MSR_IA32_SYSENTER_ESP      0x175
#define MSR_IA32_SYSENTER_EIP      0x176
#define MSR_IA32_DEBUGCTL          0x1d9
#define MSR_IA32_PAT               0x277
#define MSR_IA32_TSC_DEADLINE      0x6e0
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
#define MSR_IA32_KERNEL_GS_BASE    0xc0000102
#define MSR_IA32_TSC_AUX           0xc0000103
/* Speculation control (SDM Vol. 4 table 2-2; Intel, "Speculative Execution Side Channel
 * Mitigations"): IA32_SPEC_CTRL, IA32_PRED_CMD, IA32_FLUSH_CMD, IA32_ARCH_CAPABILITIES */
#define MSR_IA32_SPEC_CTRL         0x048
#define   SPEC_CTRL_IBRS                  (1ull << 0)
#define   SPEC_CTRL_STIBP                 (1ull << 1)
#define   SPEC_CTRL_SSBD                  (1ull << 2)
#define MSR_IA32_PRED_CMD          0x049
#define MSR_IA32_FLUSH_CMD         0x10b
#define   FLUSH_CMD_L1D                   (1ull << 0)
#define MSR_IA32_ARCH_CAPABILITIES 0x10a
#define   ARCH_CAP_RDCL_NO                (1ull << 0)
#define   ARCH_CAP_IBRS_ALL               (1ull << 1)
#define   ARCH_CAP_RSBA                   (1ull << 2)
#define   ARCH_CAP_SKIP_L1DFL_VMENTRY     (1ull << 3)
#define   ARCH_CAP_SSB_NO                 (1ull << 4)
#define   ARCH_CAP_MDS_NO                 (1ull << 5)
#define   ARCH_CAP_IF_PSCHANGE_MC_NO      (1ull << 6)
#define   ARCH_CAP_TSX_CTRL               (1ull << 7)
#define   ARCH_CAP_TAA_NO                 (1ull << 8)
#define   ARCH_CAP_SBDR_SSDP_NO           (1ull << 13)
#define   ARCH_CAP_FBSDP_NO               (1ull << 14)
#define   ARCH_CAP_PSDP_NO                (1ull << 15)
#define   ARCH_CAP_FB_CLEAR               (1ull << 17)
#define   ARCH_CAP_PBRSB_NO               (1ull << 24)
#define   ARCH_CAP_GDS_NO                 (1ull << 26)
#define   ARCH_CAP_RFDS_NO                (1ull << 27)
#define   ARCH_CAP_RFDS_CLEAR             (1ull << 28)
/* Performance monitoring (SDM Vol. 3B 21.2.2 "Architectural Performance Monitoring Version 2") */
#define MSR_IA32_PERF_GLOBAL_CTRL  0x38f
/* CET (SDM Vol. 1 17.2 "Shadow Stacks", 17.3 "Indirect Branch Tracking"; Vol. 4 table 2-2):
 * IA32_U_CET for CPL 3, IA32_S_CET for CPL 0-2 */
#define MSR_IA32_U_CET             0x6a0
#define MSR_IA32_S_CET             0x6a2
#define   CET_SH_STK_EN                   (1ull << 0)
#define   CET_ENDBR_EN                    (1ull << 2)
/* IA32_MISC_ENABLE (SDM Vol. 4 table 2-2) */
#define MSR_IA32_MISC_ENABLE       0x1a0
#define   MISC_ENABLE_FAST_STRINGS        (1ull << 0)
#define   MISC_ENABLE_LIMIT_CPUID         (1ull << 22)
#define   MISC_ENABLE_XD_DISABLE          (1ull << 34)

/* Local APIC (SDM 11.4.4 "Local APIC Status and Location", table 11-1 "Local APIC Register
 * Address Map", 11.12.1 "Detecting and Enabling x2APIC Mode") */
#define APIC_BASE_X2APIC      (1ull << 10)
#define APIC_BASE_ADDR_MASK   0x000ffffffffff000ull
#define APIC_LVT_TIMER        0x320
#define APIC_IRR              0x200
#define X2APIC_MSR(off)       (0x800 + ((off) >> 4))

/* CPUID bits */
#define CPUID_1_ECX_MONITOR    (1u << 3)
#define CPUID_1_ECX_VMX        (1u << 5)
#define CPUID_1_ECX_XSAVE      (1u << 26)
#define CPUID_1_ECX_RDRAND     (1u << 30)
#define CPUID_1_ECX_HYPERVISOR (1u << 31)
#define CPUID_80000001_EDX_PDPE1GB (1u << 26)
/* CPUID.(EAX=07H,ECX=0) (SDM Vol. 2A, CPUID, "Structured Extended Feature Flags Enumeration
 * Leaf"; Intel, "Speculative Execution Side Channel Mitigations", "Enumeration") */
#define CPUID_7_EBX_RTM            (1u << 11)
#define CPUID_7_EBX_RDSEED         (1u << 18)
#define CPUID_7_EDX_MD_CLEAR       (1u << 10)
#define CPUID_7_EDX_IBRS_IBPB      (1u << 26)   /* IA32_SPEC_CTRL.IBRS and IA32_PRED_CMD */
#define CPUID_7_EDX_STIBP          (1u << 27)
#define CPUID_7_EDX_L1D_FLUSH      (1u << 28)   /* IA32_FLUSH_CMD */
#define CPUID_7_EDX_ARCH_CAPS      (1u << 29)   /* IA32_ARCH_CAPABILITIES */
#define CPUID_7_EDX_SSBD           (1u << 31)
/* CPUID.0AH:EAX[7:0]: the architectural performance monitoring version (SDM Vol. 3B 21.2) */
#define CPUID_A_EAX_PMU_VERSION(eax) ((eax) & 0xffu)

/* Exception vectors (SDM 6.3.1) */
enum { VEC_DE = 0, VEC_DB = 1, VEC_NMI = 2, VEC_BP = 3, VEC_UD = 6, VEC_DF = 8, VEC_GP = 13, VEC_PF = 14,
       VEC_MC = 18 };

#endif
