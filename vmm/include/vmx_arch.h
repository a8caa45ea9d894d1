/*
 * vmx_arch.h - VMX architectural definitions, defined once: VMCS field encodings (Intel SDM
 * Vol. 3D appendix B "Field Encoding in VMCS"), VM-execution, exit and entry control bits (SDM
 * 25.6-25.8), exit reasons (appendix C "VMX Basic Exit Reasons") and exit-qualification
 * layouts (SDM 28.2.1 "Basic VM-Exit Information").
 *
 * Contract: numbers only, no code and no state. Modules use them to name exits when they
 * register handlers (hv_exit.h) and to read guest state through hv_guest.h; only vmm/ executes
 * VMX instructions (vmx.h).
 */
#ifndef HVT_VMX_ARCH_H
#define HVT_VMX_ARCH_H

/* --- VMCS field encodings (SDM appendix B) --- */
enum vmcs_field {
    VMCS_VPID                     = 0x0000,
    VMCS_GUEST_ES_SEL = 0x0800, VMCS_GUEST_CS_SEL = 0x0802, VMCS_GUEST_SS_SEL = 0x0804,
    VMCS_GUEST_DS_SEL = 0x0806, VMCS_GUEST_FS_SEL = 0x0808, VMCS_GUEST_GS_SEL = 0x080a,
    VMCS_GUEST_LDTR_SEL = 0x080c, VMCS_GUEST_TR_SEL = 0x080e,
    VMCS_HOST_ES_SEL = 0x0c00, VMCS_HOST_CS_SEL = 0x0c02, VMCS_HOST_SS_SEL = 0x0c04,
    VMCS_HOST_DS_SEL = 0x0c06, VMCS_HOST_FS_SEL = 0x0c08, VMCS_HOST_GS_SEL = 0x0c0a,
    VMCS_HOST_TR_SEL = 0x0c0c,
    VMCS_IO_BITMAP_A = 0x2000, VMCS_IO_BITMAP_B = 0x2002, VMCS_MSR_BITMAP = 0x2004,
    VMCS_EXIT_MSR_STORE_ADDR = 0x2006, VMCS_EXIT_MSR_LOAD_ADDR = 0x2008, VMCS_ENTRY_MSR_LOAD_ADDR = 0x200a,
    VMCS_TSC_OFFSET = 0x2010, VMCS_EPT_POINTER = 0x201a, VMCS_XSS_EXIT_BITMAP = 0x202c,
    VMCS_GUEST_PHYS_ADDR = 0x2400,
    VMCS_LINK_POINTER = 0x2800, VMCS_GUEST_DEBUGCTL = 0x2802, VMCS_GUEST_PAT = 0x2804,
    VMCS_GUEST_EFER = 0x2806, VMCS_GUEST_PERF_GLOBAL_CTRL = 0x2808, VMCS_GUEST_LBR_CTL = 0x2816,
    VMCS_HOST_PAT = 0x2c00, VMCS_HOST_EFER = 0x2c02, VMCS_HOST_PERF_GLOBAL_CTRL = 0x2c04,
    VMCS_PIN_CONTROLS = 0x4000, VMCS_PROC_CONTROLS = 0x4002, VMCS_EXCEPTION_BITMAP = 0x4004,
    VMCS_PF_ERROR_MASK = 0x4006, VMCS_PF_ERROR_MATCH = 0x4008, VMCS_CR3_TARGET_COUNT = 0x400a,
    VMCS_EXIT_CONTROLS = 0x400c, VMCS_EXIT_MSR_STORE_COUNT = 0x400e,
    VMCS_EXIT_MSR_LOAD_COUNT = 0x4010, VMCS_ENTRY_CONTROLS = 0x4012,
    VMCS_ENTRY_MSR_LOAD_COUNT = 0x4014, VMCS_ENTRY_INTR_INFO = 0x4016,
    VMCS_ENTRY_EXCEPTION_ERRCODE = 0x4018, VMCS_ENTRY_INSTR_LEN = 0x401a,
    VMCS_PROC_CONTROLS2 = 0x401e,
    VMCS_VM_INSTR_ERROR = 0x4400, VMCS_EXIT_REASON = 0x4402, VMCS_EXIT_INTR_INFO = 0x4404,
    VMCS_EXIT_INTR_ERRCODE = 0x4406, VMCS_IDT_VECTORING_INFO = 0x4408,
    VMCS_IDT_VECTORING_ERRCODE = 0x440a, VMCS_EXIT_INSTR_LEN = 0x440c,
    VMCS_EXIT_INSTR_INFO = 0x440e,
    VMCS_GUEST_ES_LIMIT = 0x4800, VMCS_GUEST_CS_LIMIT = 0x4802, VMCS_GUEST_SS_LIMIT = 0x4804,
    VMCS_GUEST_DS_LIMIT = 0x4806, VMCS_GUEST_FS_LIMIT = 0x4808, VMCS_GUEST_GS_LIMIT = 0x480a,
    VMCS_GUEST_LDTR_LIMIT = 0x480c, VMCS_GUEST_TR_LIMIT = 0x480e,
    VMCS_GUEST_GDTR_LIMIT = 0x4810, VMCS_GUEST_IDTR_LIMIT = 0x4812,
    VMCS_GUEST_ES_AR = 0x4814, VMCS_GUEST_CS_AR = 0x4816, VMCS_GUEST_SS_AR = 0x4818,
    VMCS_GUEST_DS_AR = 0x481a, VMCS_GUEST_FS_AR = 0x481c, VMCS_GUEST_GS_AR = 0x481e,
    VMCS_GUEST_LDTR_AR = 0x4820, VMCS_GUEST_TR_AR = 0x4822,
    VMCS_GUEST_INTERRUPTIBILITY = 0x4824, VMCS_GUEST_ACTIVITY_STATE = 0x4826,
    VMCS_GUEST_SYSENTER_CS = 0x482a, VMCS_PREEMPTION_TIMER = 0x482e,
    VMCS_HOST_SYSENTER_CS = 0x4c00,
    VMCS_CR0_MASK = 0x6000, VMCS_CR4_MASK = 0x6002,
    VMCS_CR0_READ_SHADOW = 0x6004, VMCS_CR4_READ_SHADOW = 0x6006,
    VMCS_EXIT_QUALIFICATION = 0x6400, VMCS_GUEST_LINEAR_ADDR = 0x640a,
    VMCS_GUEST_CR0 = 0x6800, VMCS_GUEST_CR3 = 0x6802, VMCS_GUEST_CR4 = 0x6804,
    VMCS_GUEST_ES_BASE = 0x6806, VMCS_GUEST_CS_BASE = 0x6808, VMCS_GUEST_SS_BASE = 0x680a,
    VMCS_GUEST_DS_BASE = 0x680c, VMCS_GUEST_FS_BASE = 0x680e, VMCS_GUEST_GS_BASE = 0x6810,
    VMCS_GUEST_LDTR_BASE = 0x6812, VMCS_GUEST_TR_BASE = 0x6814,
    VMCS_GUEST_GDTR_BASE = 0x6816, VMCS_GUEST_IDTR_BASE = 0x6818,
    VMCS_GUEST_DR7 = 0x681a, VMCS_GUEST_RSP = 0x681c, VMCS_GUEST_RIP = 0x681e,
    VMCS_GUEST_RFLAGS = 0x6820, VMCS_GUEST_PENDING_DBG = 0x6822,
    VMCS_GUEST_SYSENTER_ESP = 0x6824, VMCS_GUEST_SYSENTER_EIP = 0x6826,
    VMCS_HOST_CR0 = 0x6c00, VMCS_HOST_CR3 = 0x6c02, VMCS_HOST_CR4 = 0x6c04,
    VMCS_HOST_FS_BASE = 0x6c06, VMCS_HOST_GS_BASE = 0x6c08, VMCS_HOST_TR_BASE = 0x6c0a,
    VMCS_HOST_GDTR_BASE = 0x6c0c, VMCS_HOST_IDTR_BASE = 0x6c0e,
    VMCS_HOST_SYSENTER_ESP = 0x6c10, VMCS_HOST_SYSENTER_EIP = 0x6c12,
    VMCS_HOST_RSP = 0x6c14, VMCS_HOST_RIP = 0x6c16,
};
/* The guest segment fields are laid out with a stride of 2 from ES (SDM B.1.2, B.3.3, B.4.3). */
enum vmx_seg { VMX_SEG_ES, VMX_SEG_CS, VMX_SEG_SS, VMX_SEG_DS, VMX_SEG_FS, VMX_SEG_GS,
               VMX_SEG_LDTR, VMX_SEG_TR, VMX_SEG_COUNT };

/* --- Pin-based controls (SDM 25.6.1) --- */
#define PIN_EXTINT_EXITING      (1u << 0)
#define PIN_NMI_EXITING         (1u << 3)
#define PIN_VIRTUAL_NMIS        (1u << 5)
#define PIN_PREEMPTION_TIMER    (1u << 6)
/* --- Primary processor-based controls (SDM 25.6.2) --- */
#define PROC_USE_TSC_OFFSET     (1u << 3)
#define PROC_HLT_EXITING        (1u << 7)
#define PROC_INVLPG_EXITING     (1u << 9)
#define PROC_RDTSC_EXITING      (1u << 12)
#define PROC_NMI_WINDOW_EXITING (1u << 22)
#define PROC_CR3_LOAD_EXITING   (1u << 15)
#define PROC_CR3_STORE_EXITING  (1u << 16)
#define PROC_UNCOND_IO_EXITING  (1u << 24)
#define PROC_USE_IO_BITMAPS     (1u << 25)
#define PROC_MTF                (1u << 27)
#define PROC_USE_MSR_BITMAPS    (1u << 28)
#define PROC_SECONDARY_CONTROLS (1u << 31)
/* --- Secondary processor-based controls (SDM 25.6.2, table 25-7) --- */
#define PROC2_ENABLE_EPT        (1u << 1)
#define PROC2_ENABLE_RDTSCP     (1u << 3)
#define PROC2_ENABLE_VPID       (1u << 5)
#define PROC2_UNRESTRICTED      (1u << 7)
#define PROC2_ENABLE_INVPCID    (1u << 12)
#define PROC2_ENABLE_XSAVES     (1u << 20)
#define PROC2_ENABLE_USER_WAIT  (1u << 26)
/* --- VM-exit controls (SDM 25.7.1) --- */
#define EXIT_SAVE_DEBUG         (1u << 2)
#define EXIT_HOST_ADDR64        (1u << 9)
#define EXIT_LOAD_PERF_GLOBAL   (1u << 12)
#define EXIT_ACK_INTR           (1u << 15)
#define EXIT_SAVE_PAT           (1u << 18)
#define EXIT_LOAD_PAT           (1u << 19)
#define EXIT_SAVE_EFER          (1u << 20)
#define EXIT_LOAD_EFER          (1u << 21)
#define EXIT_CLEAR_LBR_CTL      (1u << 26)
/* --- VM-entry controls (SDM 25.8.1) --- */
#define ENTRY_LOAD_DEBUG        (1u << 2)
#define ENTRY_IA32E_GUEST       (1u << 9)
#define ENTRY_LOAD_PERF_GLOBAL  (1u << 13)
#define ENTRY_LOAD_PAT          (1u << 14)
#define ENTRY_LOAD_EFER         (1u << 15)
#define ENTRY_LOAD_LBR_CTL      (1u << 21)

/* IA32_VMX_BASIC (SDM A.1) */
#define VMX_BASIC_REVISION_MASK 0x7fffffffull
#define VMX_BASIC_TRUE_CTLS     (1ull << 55)
/* IA32_VMX_EPT_VPID_CAP (SDM A.10 "VPID and EPT Capabilities") */
#define EPT_CAP_EXEC_ONLY       (1ull << 0)    /* execute-only EPT entries allowed */
#define EPT_CAP_WALK4           (1ull << 6)
#define EPT_CAP_WB              (1ull << 14)
#define EPT_CAP_2MB             (1ull << 16)
#define EPT_CAP_1GB             (1ull << 17)
#define EPT_CAP_INVEPT          (1ull << 20)
#define EPT_CAP_INVEPT_SINGLE   (1ull << 25)
#define EPT_CAP_INVEPT_ALL      (1ull << 26)
#define EPT_CAP_INVVPID         (1ull << 32)   /* INVVPID supported */
#define EPT_CAP_INVVPID_SINGLE  (1ull << 41)   /* single-context INVVPID */
#define EPT_CAP_INVVPID_ALL     (1ull << 42)   /* all-context INVVPID */

/* Guest activity states (SDM 25.4.2) */
#define VMX_ACTIVITY_ACTIVE     0
#define VMX_ACTIVITY_HLT        1
#define VMX_ACTIVITY_WAIT_SIPI  3
/* Segment access-rights "unusable" bit (SDM 25.4.1) */
#define VMX_AR_UNUSABLE         (1u << 16)
/* Interruptibility state (SDM 25.4.2, table 25-3) */
#define VMX_INTR_BLOCK_STI      (1u << 0)
#define VMX_INTR_BLOCK_MOVSS    (1u << 1)
#define VMX_INTR_BLOCK_SMI      (1u << 2)
#define VMX_INTR_BLOCK_NMI      (1u << 3)

/* VM-entry interruption information (SDM 25.8.3) */
#define VMX_INTR_INFO_VALID     (1u << 31)
#define VMX_INTR_VECTOR_MASK    0xffu
#define VMX_INTR_INFO_ERRCODE   (1u << 11)
#define VMX_INTR_TYPE_EXT       (0u << 8)
#define VMX_INTR_TYPE_NMI       (2u << 8)
#define VMX_INTR_TYPE_HW_EXC    (3u << 8)
#define VMX_INTR_TYPE_SW_INT    (4u << 8)
#define VMX_INTR_TYPE_PRIV_SW_EXC (5u << 8)
#define VMX_INTR_TYPE_SW_EXC    (6u << 8)
#define VMX_INTR_TYPE_MASK      (7u << 8)
#define VMX_IDT_INFO_UNDEFINED_BIT12 (1u << 12)  /* IDT-vectoring bit 12 is undefined (SDM 25.9.3) */

/* Exit reasons (SDM appendix C) */
enum vmx_exit_reason {
    EXIT_EXCEPTION_NMI = 0, EXIT_EXTERNAL_INTR = 1, EXIT_TRIPLE_FAULT = 2, EXIT_INIT = 3,
    EXIT_SIPI = 4, EXIT_IO_SMI = 5, EXIT_OTHER_SMI = 6, EXIT_INTR_WINDOW = 7,
    EXIT_NMI_WINDOW = 8, EXIT_TASK_SWITCH = 9, EXIT_CPUID = 10, EXIT_GETSEC = 11,
    EXIT_HLT = 12, EXIT_INVD = 13, EXIT_INVLPG = 14, EXIT_RDPMC = 15, EXIT_RDTSC = 16,
    EXIT_RSM = 17, EXIT_VMCALL = 18, EXIT_VMCLEAR = 19, EXIT_VMLAUNCH = 20,
    EXIT_VMPTRLD = 21, EXIT_VMPTRST = 22, EXIT_VMREAD = 23, EXIT_VMRESUME = 24,
    EXIT_VMWRITE = 25, EXIT_VMXOFF = 26, EXIT_VMXON = 27, EXIT_CR_ACCESS = 28,
    EXIT_DR_ACCESS = 29, EXIT_IO = 30, EXIT_RDMSR = 31, EXIT_WRMSR = 32,
    EXIT_ENTRY_FAIL_GUEST = 33, EXIT_ENTRY_FAIL_MSR = 34, EXIT_MWAIT = 36, EXIT_MTF = 37,
    EXIT_MONITOR = 39, EXIT_PAUSE = 40, EXIT_ENTRY_FAIL_MCE = 41, EXIT_TPR_BELOW = 43,
    EXIT_APIC_ACCESS = 44, EXIT_VIRT_EOI = 45, EXIT_GDTR_IDTR = 46, EXIT_LDTR_TR = 47,
    EXIT_EPT_VIOLATION = 48, EXIT_EPT_MISCONFIG = 49, EXIT_INVEPT = 50, EXIT_RDTSCP = 51,
    EXIT_PREEMPTION_TIMER = 52, EXIT_INVVPID = 53, EXIT_WBINVD = 54, EXIT_XSETBV = 55,
    EXIT_APIC_WRITE = 56, EXIT_RDRAND = 57, EXIT_INVPCID = 58, EXIT_VMFUNC = 59,
    EXIT_ENCLS = 60, EXIT_RDSEED = 61, EXIT_PML_FULL = 62, EXIT_XSAVES = 63,
    EXIT_XRSTORS = 64, EXIT_REASON_COUNT = 80
};
#define EXIT_REASON_BASIC_MASK   0xffffu
#define EXIT_REASON_ENTRY_FAIL   (1u << 31)

/* Exit qualification for control-register accesses (SDM 28.2.1, table 28-3) */
#define CRQ_NUM(q)       ((q) & 0xf)
#define CRQ_TYPE(q)      (((q) >> 4) & 3)
#define CRQ_TYPE_MOV_TO  0
#define CRQ_TYPE_MOV_FROM 1
#define CRQ_TYPE_CLTS    2
#define CRQ_TYPE_LMSW    3
#define CRQ_GPR(q)       (((q) >> 8) & 0xf)
#define CRQ_LMSW_SRC(q)  (((q) >> 16) & 0xffff)
/* Exit qualification for I/O instructions (SDM 28.2.1, table 28-5) */
#define IOQ_SIZE(q)      (((q) & 7) + 1)
#define IOQ_IN           (1u << 3)
#define IOQ_STRING       (1u << 4)
#define IOQ_REP          (1u << 5)
#define IOQ_PORT(q)      (((q) >> 16) & 0xffff)

/* EPT entry permission bits (SDM 29.3.2 "EPT Translation Mechanism", tables 29-1 to 29-6) */
#define EPT_READ        (1ull << 0)
#define EPT_WRITE       (1ull << 1)
#define EPT_EXEC        (1ull << 2)
#define EPT_RWX         (EPT_READ | EPT_WRITE | EPT_EXEC)
/* Exit qualification for EPT violations (SDM 28.2.1, table 28-7): the access was a fetch */
#define EPT_QUAL_READ   (1ull << 0)
#define EPT_QUAL_WRITE  (1ull << 1)
#define EPT_QUAL_EXEC   (1ull << 2)

#endif
