/*
 * hv_core.h - the hypervisor's global state and memory: one place that says where everything
 * lives (the memory map of the hypervisor region is printed at start by hv_mem_report()).
 *
 * Contract: hv_core_init() runs once on the BSP before anything else; after it, hv_alloc_pages
 * and hv_log work (hv_log serializes CPUs with a spinlock).
 */
#ifndef HVT_HV_CORE_H
#define HVT_HV_CORE_H
#include "hvt_bootinfo.h"
#include "hv_api.h"
#include "ept.h"
#include "mtrr.h"
#include "spec_ctrl.h"
#include "mem_budget.h"

struct hv_globals {
    struct hvt_boot_info *bi;
    struct mem_pool pool;                /* physical bump allocator inside the region, the
                                            last pool.reserve bytes vmm/'s (mem_budget.h) */
    struct mem_plan plan;                /* the reserve's caps; once started, the budgets' base */
    bool start_done;                     /* plan.used_at_start is what the start took */
    uint64_t canary;                     /* kept in hv memory; the guest must never see it
                                            (self-test boots only: 0 otherwise) */
    unsigned end_reason;                 /* enum hv_end, once the machine is going away */
    bool selftest;                       /* hvtrace.cfg selftest = on: the canary, and the
                                            memory range for the guest's administrator */
    uint64_t *canary_page;
    void *dummy_page;                    /* what the guest sees in place of hv memory */
    struct ept ept;
    struct mtrr_state mtrr;
    unsigned phys_bits;
    uint64_t ept_limit;
    uint64_t cr0_fixed0, cr0_fixed1, cr4_fixed0, cr4_fixed1;
    uint32_t pin_ctls, proc_ctls, proc2_ctls, exit_ctls, entry_ctls;
    uint8_t *io_bitmap_a, *io_bitmap_b, *msr_bitmap;
    bool has_xsave;
    uint64_t ept_cap;                    /* IA32_VMX_EPT_VPID_CAP */
    uint32_t invept_type;                /* INVEPT_SINGLE_CONTEXT, else ALL_CONTEXT (vmx_caps.h) */
    unsigned preempt_shift;              /* the preemption timer counts at TSC >> this */
    uint32_t invvpid_type;               /* 0: no VPID; else the INVVPID type (vmx_caps.h) */
    bool lbr_ctl;                        /* IA32_LBR_CTL switched at exit and entry (vmx_caps.h) */
    bool virtual_nmis;                   /* NMIs exit; injected at an NMI window (vmx_caps.h) */
    struct spec_plan spec;               /* speculation and PMU isolation (spec_ctrl.h) */
    bool spec_per_exit;                  /* spec has per-exit work: the fast MTF path is held off */
    unsigned cpu_count;
    struct spinlock ept_lock;            /* edits of live EPT tables */
    volatile uint64_t ept_epoch;         /* bumped by every permission edit */
    volatile bool started;               /* some CPU has entered VMX operation */
    volatile uint32_t exception_bitmap;  /* guest exceptions that exit (hv_exception_intercept) */
    volatile uint64_t ctl_epoch;         /* bumped when a VMCS control every CPU holds changes */
};
extern struct hv_globals hv;

void hv_core_init(struct hvt_boot_info *bi);
void hv_mem_report(void);
/* vmm/'s own pages after start (EPT tables, the IOMMU's tables): may take the reserve, which
 * hv_alloc_pages() leaves alone; each user keeps to its cap in hv.plan. */
void *vmm_alloc_pages(size_t npages);
/* The image has started (every layer set up, the IOMMU's tables built): what it took is the
 * budgets' base from now on. */
void hv_mem_start_done(void);
/* Is [gpa, gpa+len) ordinary guest RAM (not MMIO, not the hypervisor's region)? */
bool hv_gpa_is_ram(uint64_t gpa, uint64_t len);
bool hv_in_region(uint64_t pa);

/* The fatal path's mechanism (hv_fatal.c; hv_panic is the way in). */
extern volatile bool hv_fatal_stopping;   /* the fatal path is owned: others stop at their next exit */
void hv_fatal_at_exit(void);               /* top of a full exit: park here if asked */
bool hv_fatal_nmi(void);                   /* host NMI: parks (never returns) if it is a stop */
bool hv_fatal_lock_expired(uint64_t *t0);  /* spin_lock: the fatal CPU's wait is over */
void hv_machine_reset(void) __attribute__((noreturn));   /* 0xCF9, the KBC, a triple fault */
void hv_reset_prepare(void);               /* what a platform needs before its reset */
/* Self-test boots: how the next panic runs (HVT_HC_HV_RANGE's RCX, include/hvt_hypercall.h). */
enum { HV_FATAL_TEST_NONE, HV_FATAL_TEST_NMI_ONLY, HV_FATAL_TEST_NESTED };
extern unsigned hv_fatal_selftest;

#endif
