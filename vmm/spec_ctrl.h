/*
 * spec_ctrl.h - what the hypervisor does at every VM exit and entry so that the guest (root
 * included) can neither steer its speculation nor sample its data, and so that the guest's
 * performance counters do not count the hypervisor, decided from the CPU's own capability
 * bits.
 *
 * Sources: Intel SDM (the edition docs/references.md names) Vol. 2A CPUID "Structured
 * Extended Feature Flags Enumeration Leaf"; Vol. 4 table 2-2 (IA32_SPEC_CTRL,
 * IA32_ARCH_CAPABILITIES, IA32_FLUSH_CMD); Vol. 3C 25.7.1 "VM-Exit Controls", 28.4 "Saving
 * MSRs", 27.4 "Loading MSRs"; Vol. 3B 21.2.2 "Architectural Performance Monitoring Version
 * 2". Intel's guidance, by title: "Speculative Execution Side Channel Mitigations" (IBRS,
 * enhanced IBRS, the RSB after a VM exit), "Retpoline: A Branch Target Injection
 * Mitigation" (RSB stuffing), "Post-barrier Return Stack Buffer Predictions", "Deep Dive:
 * Intel Analysis of L1 Terminal Fault" (L1D flush before VM entry, SKIP_L1DFL_VMENTRY),
 * "Deep Dive: Intel Analysis of Microarchitectural Data Sampling" (VERW, MD_CLEAR; an L1D
 * flush also overwrites the buffers VERW clears), "Intel TSX Asynchronous Abort", "Processor
 * MMIO Stale Data Vulnerabilities" (FB_CLEAR), "Register File Data Sampling" (RFDS_CLEAR).
 *
 * Contract:
 *  - spec_ctrl_decide() is pure (no hardware access): the caller reads the capabilities, the
 *    host unit test (vmm/tests/test_spec_ctrl.c) feeds recorded values of real CPUs.
 *  - A CPU that enumerates none of the speculation controls (CPUID.(EAX=7,ECX=0):EDX bits 26,
 *    27, 29 and 31 all clear: microcode older than 2018, or an emulator such as Bochs) gets an
 *    all-off plan: nothing is switched, written or flushed, exits run as they did. Such a CPU
 *    is reported as unmitigated (spec_ctrl_unmitigated), never silently trusted.
 *  - Everything the plan asks for is an MSR write, an instruction (VERW) or an RSB refill that
 *    the capability bits say exists on this CPU: the plan never names an MSR the CPU lacks.
 */
#ifndef HVT_SPEC_CTRL_H
#define HVT_SPEC_CTRL_H
#include <stdint.h>
#include <stdbool.h>

/* What the CPU says about itself, read once at start (vmx_check_caps). */
struct spec_caps {
    uint32_t cpuid7_ebx, cpuid7_edx;   /* CPUID.(EAX=07H,ECX=0):EBX, EDX */
    uint64_t arch_caps;                /* IA32_ARCH_CAPABILITIES; 0 unless CPUID_7_EDX_ARCH_CAPS */
    uint32_t pmu_version;              /* CPUID.0AH:EAX[7:0] */
    bool exit_load_perf_global;        /* the "load IA32_PERF_GLOBAL_CTRL" VM-exit control may be 1 */
};

/* How the RSB is overwritten after a VM exit. */
enum spec_rsb {
    SPEC_RSB_NONE,   /* enhanced IBRS without post-barrier RSB predictions (PBRSB_NO) */
    SPEC_RSB_LITE,   /* enhanced IBRS, PBRSB affected: one CALL and LFENCE before any RET */
    SPEC_RSB_FULL,   /* legacy IBRS: all 32 entries */
};

struct spec_plan {
    bool switch_spec_ctrl;        /* read the guest's IA32_SPEC_CTRL at exit, write host_spec_ctrl,
                                     put the guest's back before entry */
    bool spec_ctrl_write_always;  /* legacy IBRS acts when written: write it at every exit even
                                     when the guest's value is the same */
    uint64_t host_spec_ctrl;      /* IA32_SPEC_CTRL in VMX root */
    enum spec_rsb rsb;            /* after every exit, before the first RET */
    bool l1d_flush;               /* IA32_FLUSH_CMD.L1D_FLUSH before every entry */
    bool verw;                    /* VERW before every entry (not needed where l1d_flush) */
    bool pmu_switch;              /* IA32_PERF_GLOBAL_CTRL: the guest's stored at exit, 0 loaded
                                     for the host, the guest's loaded again at entry */
    /* Affected, with no means on this CPU (reported at start, not silently trusted): */
    bool l1tf_unmitigated;        /* L1TF and no IA32_FLUSH_CMD */
    bool mds_unmitigated;         /* MDS/TAA/MMIO/RFDS and no VERW that clears (no MD_CLEAR...) */
    bool spectre_v2_unmitigated;  /* no IBRS at all */
    bool per_exit;                /* spec_ctrl_per_exit(): any of the above at every exit/entry
                                     (one test on the path when there is none) */
};

void spec_ctrl_decide(const struct spec_caps *c, struct spec_plan *p);

/* Any per-exit or per-entry work at all (the fast MTF path does none, so it is held off). */
bool spec_ctrl_per_exit(const struct spec_plan *p);

#endif
