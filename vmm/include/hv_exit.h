/*
 * hv_exit.h - how modules built on vmm/ (a transport, a tracing policy) take part in VM exits
 * without vmm/ knowing them: they register handlers; vmm/ never calls anyone by name.
 *
 * Contract:
 *  - Registration happens while the image starts (on the BSP, before any CPU is virtualized);
 *    handlers then run in VMX root operation on the exiting CPU with interrupts off.
 *  - Ownership is explicit. Each registration that replaces something returns what it
 *    replaced (NULL: vmm/'s default, which is "not handled"): a handler that declines an exit
 *    calls the handler it replaced itself, the way BitVisor's set_iofunc chains. No second
 *    dispatch on the exit reason is needed anywhere: vmm/ dispatches through one table indexed
 *    by the basic exit reason (Intel SDM appendix C "VMX Basic Exit Reasons").
 *  - Exits vmm/ handles itself (CPUID, CR access, XSETBV, INIT/SIPI, VMX instructions, the
 *    hypervisor's own hypercalls) are not open to registration; an exit reason with no handler
 *    is fatal (there is no safe default for an exit nobody asked for).
 *  - Observers see every exit through the full dispatch: pre observers in registration order
 *    before the handler, post observers in registration order after it. Not through it: the
 *    MTF fast path (below) and, while the CPU's policy neither steps it nor times its exits
 *    (MTF and dilation off), the port accesses vmm/ only watches for a reset request (0xCF8
 *    dwords, 0x64 status reads: vmm/io_watch.h).
 *  - Shutdown notifiers (power-off, the fatal path) run in reverse registration order: the
 *    layer registered last (the policy, above the transport) finishes first, so its last data
 *    still reaches the transport.
 */
#ifndef HVT_HV_EXIT_H
#define HVT_HV_EXIT_H
#include <stdint.h>
#include <stdbool.h>
#include "hv_guest.h"
#include "vmx_arch.h"

/* One exit reason. true = handled (the handler advanced RIP where that applies). */
typedef bool (*hv_exit_fn)(struct guest_regs *g, unsigned reason);
/* Take over 'reason' (one of EXIT_MTF, EXIT_HLT, EXIT_EXTERNAL_INTR, EXIT_RDTSC, EXIT_RDTSCP,
 * EXIT_PREEMPTION_TIMER, EXIT_INVLPG, EXIT_INVPCID, EXIT_EXCEPTION_NMI); returns the previous
 * handler, or NULL. A reason vmm/ keeps for itself is refused: *ok = false. */
hv_exit_fn hv_exit_register(unsigned reason, hv_exit_fn fn, bool *ok);
/* A quick handler for a lent reason: it runs before the observers (after vmm/'s own work at
 * every exit: counters, EPT edits, an event being delivered re-injected); true: it took the
 * exit whole and no observer runs for it (the per-exit polls wait for the next exit that is not
 * quick: the module must bound that wait itself); false: the exit goes on as usual (it must
 * decline before changing any state). NULL removes it. The same reasons as hv_exit_register. */
hv_exit_fn hv_exit_register_quick(unsigned reason, hv_exit_fn fn, bool *ok);

/* Guest port I/O on [port, port + width): the accesses exit from now on. The handler performs
 * or emulates the access (RAX in g) and returns true; vmm/ then advances RIP. false: the
 * handler it replaced (or, for none, the real port) gets it. String I/O is never passed on. */
typedef bool (*hv_io_fn)(struct guest_regs *g, uint16_t port, unsigned size, bool in);
hv_io_fn hv_io_register(uint16_t port, unsigned width, hv_io_fn fn);

/* RDMSR (read) and/or WRMSR (write) of 'msr' exit from now on (low range 0-0x1fff or
 * 0xc0000000-0xc0001fff, SDM 25.6.9 "MSR-Bitmap Address"). *val is the value written, or
 * receives the value read. true = handled (vmm/ advances RIP); false = vmm/'s MSR policy
 * decides, as for an MSR nobody registered (the allow-list passes it to the MSR, the rest is
 * read through or refused with #GP: vmm/msr_policy.h). */
typedef bool (*hv_msr_fn)(uint32_t msr, bool write, uint64_t *val);
hv_msr_fn hv_msr_register(uint32_t msr, bool read, bool write, hv_msr_fn fn);

/* A hypercall function number of include/hvt_hypercall.h (RAX = HVT_HC_MAGIC | func). The
 * handler returns the status vmm/ puts in RAX; vmm/ advances RIP. Unclaimed: HVT_HC_ENOSYS.
 * Who may call it is checked first: HV_HC_KERNEL only from kernel mode (CPL 0), HV_HC_ADMIN
 * also from user mode when the admin check says the caller is the guest's administrator
 * (hv_hypercall_admin; without one, kernel mode only), HV_HC_ANY from anywhere. A caller
 * that may not gets #UD, as VMCALL gives on bare metal, and is counted, never logged. */
typedef int64_t (*hv_hypercall_fn)(struct guest_regs *g);
#define HV_HYPERCALL_MAX 16
enum hv_hc_priv { HV_HC_KERNEL = 0, HV_HC_ADMIN = 1, HV_HC_ANY = 2 };
hv_hypercall_fn hv_hypercall_register(unsigned func, hv_hypercall_fn fn, enum hv_hc_priv priv, bool *ok);
/* The admin check: true when the guest's current user-mode caller may use HV_HC_ADMIN
 * hypercalls (a module that knows the guest's tasks provides it: e.g. effective uid 0). */
typedef bool (*hv_hc_admin_fn)(unsigned cpu);
void hv_hypercall_admin(hv_hc_admin_fn fn);
/* Hypercalls refused so far for function 'func' (all CPUs). */
uint64_t hv_hypercall_refused(unsigned func);

/* EPT violations on guest-physical [gpa, gpa + size) (after the module removed permissions
 * there, e.g. with hv_ept_set_exec or an execute-only view page). true = handled. Ranges may
 * overlap: the handlers that cover an address are asked newest first until one handles it.
 * May be called while CPUs run; returns -1 when the table is full. */
typedef bool (*hv_ept_fault_fn)(uint64_t gpa, uint64_t qualification);
int hv_ept_fault_register(uint64_t gpa, uint64_t size, hv_ept_fault_fn fn);

/* Guest exception 'vector' (0-31) exits, to the EXIT_EXCEPTION_NMI handler, or no longer
 * (SDM 25.6.3 "Exception Bitmap"). Each CPU takes the change at its next full exit (kicked):
 * until then an exception may still be delivered to the guest directly, or still exit. */
void hv_exception_intercept(unsigned vector, bool on);

/* Every exit through the full dispatch. Either may be NULL. */
typedef void (*hv_observer_fn)(struct guest_regs *g, unsigned reason);
int hv_exit_observe(hv_observer_fn pre, hv_observer_fn post);

/* The machine is going away: the guest powers off (ACPI sleep), resets it (0xCF9, the keyboard
 * controller) or triple-faults (the hypervisor then resets it, as the platform would). The
 * power-off hooks run for all three, last registered first, before the machine goes; a hook
 * asks hv_end_reason() which. */
enum hv_end { HV_END_POWER_OFF, HV_END_RESET, HV_END_TRIPLE_FAULT };
int hv_on_power_off(void (*fn)(void));
enum hv_end hv_end_reason(void);

/* The fatal path (hv_panic, a hypervisor error the guest did not cause): the fatal hooks run
 * on the panicking CPU, last registered first, with 'why' (the panic's text, at most
 * HV_FATAL_WHY_MAX bytes with its NUL), after every other CPU was stopped, before the reset.
 * A hook must bound every wait (hv_fatal_active() says it is in the fatal path), may not rely
 * on any other CPU, and asks hv_fatal_cpu_stop() how each CPU stopped before it touches that
 * CPU's state: only HV_CPU_STOPPED_AT_EXIT (between two exits) and HV_CPU_FATAL (the running
 * CPU, which panicked wherever it was) are worth reading; a CPU stopped inside the
 * hypervisor (NMI) may have been half-way through an update. A hook that panics ends the
 * hooks: the machine resets. */
#define HV_FATAL_WHY_MAX 256
enum hv_cpu_stop {
    HV_CPU_RUNNING = 0,          /* not stopped (or no fatal path): its state is live */
    HV_CPU_STOPPED_AT_EXIT = 1,  /* at the start of a VM exit, before any handler */
    HV_CPU_STOPPED_IN_HV = 2,    /* anywhere in the hypervisor: by NMI, or its own panic */
    HV_CPU_FATAL = 3,            /* the CPU running the fatal path */
};
int hv_on_fatal(void (*fn)(const char *why));

/* The guest moved its own TSC (a write of IA32_TSC_ADJUST, which vmm/ emulates: SDM Vol. 3B
 * 18.17.3 "Time-Stamp Counter Adjustment"): the TSC offset already includes 'delta' when a
 * hook runs, in that CPU's exit, first registered first. A policy that keeps the guest's time
 * itself moves its own clock by as much. */
int hv_on_tsc_moved(void (*fn)(int64_t delta));

/* vmm/ gives the guest an event of its own (an NMI or a machine check it held for it) at an
 * entry that finds the guest halted: the delivery takes it out of the HLT state (SDM Vol. 3C
 * 27.7.2 "Activity State"), without the exit a wake-up by an interrupt or an NMI arriving in
 * the guest would give. The hooks run on that CPU before the entry, first registered first,
 * with the event already in the VMCS: a policy that treats a halted guest differently (one
 * that stops stepping it until it wakes) takes it up again here. */
int hv_on_wake(void (*fn)(void));
enum hv_cpu_stop hv_fatal_cpu_stop(unsigned cpu);

/* The MTF fast path: a policy that single-steps registers a raw handler (assembly) and enables
 * it per CPU with hv_set_mtf_fast() (hv_guest.h). The exit stub then jumps to it for MTF exits
 * straight away, before saving the guest's registers and before the full dispatch: no
 * observers, no exit counting, no dilation of the exit's ticks, no event re-injection (the
 * stub takes the path only when vmm/ has nothing pending for this CPU). Register contract, on
 * entry:
 *     FS base  the ctx given to hv_set_mtf_fast() (addressed as [fs:offset], no register)
 *     [RSP]    the guest's RAX, [RSP+8] the per-CPU block
 *     others   the guest's values (RSP, RIP, RFLAGS: in the VMCS)
 * It leaves by jumping to hv_fast_resume (handled: the guest resumes) or to hv_fast_decline
 * (the full dispatch handles the same exit through the EXIT_MTF handler), with RSP as it found
 * it and every register but RAX holding the guest's value. It must decline before changing
 * any state. */
void hv_mtf_fast_register(void (*entry)(void));
void hv_fast_resume(void);
void hv_fast_decline(void);

#endif
