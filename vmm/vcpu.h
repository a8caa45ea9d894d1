/*
 * vcpu.h - per-CPU hypervisor state. One struct vcpu per physical CPU, allocated on the BSP
 * before any CPU is virtualized; a CPU only ever touches its own (others read its counters).
 * The host GS base points at the CPU's struct vcpu while in VMX root operation.
 */
#ifndef HVT_VCPU_H
#define HVT_VCPU_H
#include <stdint.h>
#include <stdbool.h>
#include "vmx.h"
#include "hv_api.h"
#include "hv_guest.h"     /* struct guest_regs: what vmx_stub.asm saves */
#include "ept.h"
#include "dilate_calib.h"

struct __attribute__((packed)) host_tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3, iomap_base;
};

#define VCPU_STACK_PAGES 8
#define HOST_GDT_ENTRIES 5   /* null, code64, data, TSS (two slots) */
#define HOST_SEL_CODE    0x08
#define HOST_SEL_DATA    0x10
#define HOST_SEL_TSS     0x18

struct vcpu {
    struct vcpu *self;            /* at offset 0: %gs:0 gives the current vcpu */
    uint64_t exit_tsc;            /* at offset 8: TSC when this exit entered the stub */
    uint8_t dilate;               /* at offset 16: HV_DILATE_* flags (hv_guest.h) */
    /* At offsets 17 and 18, read as one word by the exit stub: an MTF exit takes the policy's
     * fast handler (hv_mtf_fast) only while fast_mtf is 1 and fast_block is 0. */
    uint8_t fast_mtf;             /* set by the policy (hv_set_mtf_fast) */
    volatile uint8_t fast_block;  /* set by vmm/ when the full dispatch has work (NMI, EPT edit) */
    unsigned index;
    uint32_t apic_id;
    uint64_t entry_tsc;           /* TSC just before the last VM entry the stub timed (hv_guest.h
                                     hv_last_entry_tsc; not taken when the exit was dilated) */
    void *vmxon_region, *vmcs;
    uint64_t vmxon_phys, vmcs_phys;
    uint8_t *stack;
    uint64_t host_rsp;
    uint64_t gdt[HOST_GDT_ENTRIES];
    struct host_tss tss;
    bool launched;
    bool nmi_pending;             /* an NMI hit the host: re-inject into the guest */
    bool nmi_mtf;                 /* the monitor trap flag is on for the pending NMI (nmi_decide.h) */
    bool nmi_window;              /* NMI-window exiting is on for it (hv.virtual_nmis) */
    bool mc_pending;              /* a machine check hit the host or a VM entry: to the guest */
    bool mc_mtf;                  /* the monitor trap flag is on for the pending #MC (mc_decide.h) */
    bool policy_mtf;              /* ... and for the policy (hv_set_mtf): its MTF exits are its own */
    bool powering_off;
    uint64_t ept_epoch;           /* hv.ept_epoch this CPU's EPT TLB reflects */
    uint64_t ctl_epoch;           /* hv.ctl_epoch this CPU's VMCS controls reflect */
    /* This CPU's EPT: the shared map, or its own view of it while the view maps pages of its
     * own (a view costs the emulator a little per VM entry: none is used while not needed). */
    struct ept_view view;
    uint64_t eptp;                /* in the VMCS */
    volatile uint64_t eptp_next;  /* to load at the next full exit (hv_ept.c) */
    uint64_t exits;               /* VM exits through the full dispatch (vmx_exit_dispatch) */
    uint64_t exit_counts[EXIT_REASON_COUNT];
    uint64_t sipi_count, init_count;
    uint64_t nmi_waits;           /* entries that held an NMI back for the guest's blocking */
    uint64_t nmi_injected;        /* NMIs the host caught, given to the guest */
    uint64_t nmi_dropped;         /* ... not given: the CPU waited for its SIPI */
    uint64_t nmi_exits;           /* NMIs that arrived in the guest and exited (hv.virtual_nmis) */
    uint64_t mc_injected;         /* machine checks given to the guest */
    uint64_t sleep_refused;       /* PM1 writes for a sleep state other than S5, dropped */
    uint64_t io_watch_fast;       /* port accesses done ahead of the full dispatch (io_watch.h) */
    struct { uint16_t port; uint64_t count; } io_ports[8];   /* intercepted ports seen */
    /* Time dilation's ticks per exit the stub cannot time (dilate_calib.h): measured on this
     * CPU by a burst of zero-length guest runs (calib_*), VCPU_DILATE_FIXED until then. */
    uint64_t dilate_fixed;
    /* The same for an exit that ends undilated, from the stub's stamp (entry_tsc) to the next
     * exit's first read (hv_exit_untimed): the second half of the burst; VCPU_EXIT_UNTIMED
     * until then. */
    uint64_t exit_untimed;
    uint64_t resume_tsc;          /* the stub's last TSC read before VMRESUME (dilated exits) */
    struct dilate_calib calib, calib_stamp;
    unsigned calib_left;          /* preemption-timer exits left in the burst (0: none running) */
    unsigned calib_tries;         /* bursts begun (one another exit cut short ends) */
    bool calib_prev;              /* the previous exit was the burst's: a sample's start */
    bool calib_done;
    uint64_t calib_saved_pin, calib_saved_timer, calib_saved_offset;
    uint64_t guest_spec_ctrl;     /* the guest's IA32_SPEC_CTRL while in VMX root (spec_ctrl.h) */
    /* The guest's IA32_PERF_GLOBAL_CTRL, one MSR-list entry (SDM Vol. 3C 25.7.2 "VM-Exit
     * Controls for MSRs", table 25-15 "Format of an MSR Entry"): stored by every exit, loaded by
     * every entry, where hv.spec.pmu_switch. */
    struct vmx_msr_entry { uint32_t index, reserved; uint64_t data; } *pmu_msr;
};

/* The offsets vmx_stub.asm uses are generated from this struct (vmm_asm.c). These are the
 * ones inline assembly in C reads through %gs, and the stub's one-word read of the gate. */
_Static_assert(__builtin_offsetof(struct vcpu, self) == 0, "vcpu_current() reads %gs:0");
_Static_assert(__builtin_offsetof(struct vcpu, exit_tsc) == HV_EXIT_TSC_GS_OFFSET, "hv_exit_tsc()");
_Static_assert(__builtin_offsetof(struct vcpu, index) == HV_CPU_ID_GS_OFFSET, "hv_cpu_id() reads %gs:20");
_Static_assert(__builtin_offsetof(struct vcpu, fast_block) == __builtin_offsetof(struct vcpu, fast_mtf) + 1,
               "vmx_stub.asm reads fast_mtf and fast_block as one word");
/* Ticks of an exit the exit stub cannot time (vmx_stub.asm), subtracted on top: each CPU
 * measures its own at start (vcpu.dilate_fixed, dilate_calib.h); this is the value until then,
 * and where the measurement fails. Measured by hand in Bochs (one tick per instruction): with
 * it the guest's TSC advances exactly one tick per traced instruction. 30 measured before the
 * fast gate existed, plus its two instructions (compare, branch) that now precede the first
 * rdtsc of an exit whose CPU has the fast path off (counted; the only
 * dilated exits whose CPU has it on are in SOFT mode, where the policy sets the offset from
 * its own clock: hv_set_tsc_offset). */
#define VCPU_DILATE_FIXED    32
/* What an undilated exit's stamps do not see, until measured: instructions counted in
 * vmx_stub.asm (Bochs's TSC counts instructions): before the first read, the fast gate
 * (compare, branch), sixteen pushes and the vcpu load; after the stamp, shift, or, store,
 * fifteen pops, the RSP skip and VMRESUME; and the VM exit itself. */
#define VCPU_EXIT_UNTIMED    (2 + 16 + 1 + 3 + 15 + 1 + 1 + 1)
/* Upper bound of the ticks from hv_dilated_offset() to the stub's last rdtsc: a deadline set
 * from the prediction then fires a few ticks late at worst, never early. */
#define VCPU_DILATE_TAIL_MAX 64
struct vcpu *vcpu_get(unsigned index);
/* PROC_MTF in this CPU's VMCS from policy_mtf and nmi_mtf (hv_guest.c). */
void vcpu_sync_mtf(struct vcpu *v);
/* Set or clear primary processor-based controls in this CPU's VMCS (hv_guest.c). */
void vcpu_set_proc_bits(uint32_t bits, bool on);
static inline struct vcpu *vcpu_current(void)
{
    struct vcpu *v;
    __asm__ volatile("mov %%gs:0, %0" : "=r"(v));
    return v;
}

#endif
