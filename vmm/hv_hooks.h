/*
 * hv_hooks.h - how policy modules (trace/, net/) attach to the mechanism without vmm/ knowing
 * what they do. Every hook is optional (NULL = not used); hooks run in VMX root operation on
 * the exiting CPU with the guest's registers at hand.
 *
 * Contract: a hook that returns true has fully handled the event (including advancing the
 * guest RIP where that applies); false lets vmm/ do its default.
 */
#ifndef HVT_HV_HOOKS_H
#define HVT_HV_HOOKS_H
#include "vcpu.h"
#include "hvt_bootinfo.h"

struct hv_hooks {
    void    (*pre_exit)(struct guest_regs *g, unsigned reason);   /* every exit, first */
    void    (*post_exit)(struct guest_regs *g, unsigned reason);  /* every exit, last */
    int64_t (*hypercall)(struct guest_regs *g);  /* magic VMCALLs vmm/ does not know */
    bool    (*io)(struct guest_regs *g, uint16_t port, unsigned size, bool in);
    /* RDMSR/WRMSR of an MSR registered with hv_msr_intercept(): *val is the value written,
     * or receives the value read. true = handled (vmm/ advances RIP); false = pass through. */
    bool    (*msr)(uint32_t msr, bool write, uint64_t *val);
    bool    (*ept_violation)(uint64_t gpa, uint64_t qualification);
    bool    (*other_exit)(struct guest_regs *g, unsigned reason); /* MTF, timer, exceptions */
    void    (*power_off)(void);                  /* the guest is about to power off */
    void    (*fatal)(const char *why);           /* the guest died (triple fault) */
};
extern struct hv_hooks hv_hooks;

/* The MTF fast path: a policy that single-steps registers a raw handler here (assembly) and
 * enables it per CPU with hv_set_mtf_fast(). The exit stub then jumps to it for MTF exits
 * straight away, before saving the guest's registers and before the full dispatch, without
 * any of the hooks above (no exit counting, no pre/post hooks, no dilation of the exit's
 * ticks, no event re-injection: the stub takes the path only when vmm/ has nothing pending
 * for this CPU). Register contract, on entry:
 *     RCX      the ctx given to hv_set_mtf_fast()
 *     [RSP]    the guest's RCX, [RSP+8] the guest's RAX, [RSP+16] the struct vcpu *
 *     others   the guest's values (RSP, RIP, RFLAGS: in the VMCS)
 * It leaves by jumping to hv_fast_resume (handled: the guest resumes) or to hv_fast_decline
 * (the full dispatch handles the same exit: other_exit with EXIT_MTF, then post_exit), with
 * RSP as it found it and every register but RAX and RCX holding the guest's value. It must
 * decline before changing any state. */
extern void *hv_mtf_fast;
void hv_fast_resume(void);
void hv_fast_decline(void);

/* The policy's set-up, called once on the BSP at the end of hv_entry_init (after EPT and the
 * per-CPU state exist, before any CPU is virtualized). Weak: a build without policy has none. */
int hv_policy_init(struct hvt_boot_info *bi);
/* Make guest accesses to [port, port+width) exit (they reach hv_hooks.io). */
void hv_io_intercept(uint16_t port, unsigned width);
/* Make guest RDMSR and/or WRMSR of 'msr' exit (they reach hv_hooks.msr). Low MSR range only
 * (0-0x1fff) or 0xc0000000-0xc0001fff (SDM 25.6.9). */
void hv_msr_intercept(uint32_t msr, bool read, bool write);

#endif
