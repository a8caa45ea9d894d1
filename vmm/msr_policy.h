/*
 * msr_policy.h - which guest RDMSR/WRMSR reach the real MSRs. The guest (root included) is not
 * trusted, and MSRs reach past it: a relocated IA32_APIC_BASE moves what the hypervisor reads
 * through, IA32_DS_AREA and Intel PT name memory the CPU writes by itself, MTRRs set the memory
 * types the hypervisor runs with, IA32_TSC and IA32_TSC_ADJUST move the clock it keeps time by,
 * a microcode update changes the CPU under it.
 *
 * Contract:
 *  - Denied by default (SDM Vol. 3C 25.6.9 "MSR-Bitmap Address", 26.1.3 "Instructions That
 *    Cause VM Exits Conditionally"): msr_policy_fill() sets every bit of the MSR bitmap, then
 *    clears those of the reviewed allow-list in msr_policy.c, whose accesses then never exit.
 *  - An access that exits and no registered handler (hv_msr_register) takes is decided by
 *    msr_policy_class(): MSR_READ_PASS reads (read the real MSR for the guest, #GP if it does
 *    not exist), MSR_SHADOW (the guest's own copy: MTRRs, which EPT makes moot for guest
 *    accesses, SDM 29.3.7.2, but which rule the hypervisor's own), MSR_APIC_BASE (the mode
 *    bits may change, the base may not: #GP, as for a reserved bit), MSR_GP (#GP: the VMX
 *    capabilities of a CPU that says it has no VMX), and for writes MSR_WRITE_DENY (#GP,
 *    counted) for everything not on the list.
 *  - A write of IA32_TSC_ADJUST that the policy takes moves the guest's TSC offset and then
 *    runs the hooks registered with hv_on_tsc_moved() (hv_exit.h) with the change.
 *  - msr_policy_class() is pure (no hardware access): unit-tested on the host.
 */
#ifndef HVT_MSR_POLICY_H
#define HVT_MSR_POLICY_H
#include <stdint.h>
#include <stdbool.h>

enum msr_class {
    MSR_PASS = 1,          /* reads and writes go to the real MSR without an exit */
    MSR_READ_ONLY,         /* reads without an exit; writes exit and are refused (#GP) */
    MSR_READ_PASS,         /* reads exit and are served from the real MSR; writes refused */
    MSR_SHADOW,            /* reads and writes exit: the guest's copy, per CPU */
    MSR_APIC_BASE,         /* reads without an exit; writes exit and are checked */
    MSR_GP,                /* reads and writes: #GP */
    MSR_MISC_ENABLE,       /* reads without an exit; writes exit and are checked
                              (msr_misc_enable_write_ok) */
    MSR_WRITE_IGNORE,      /* reads exit and are served from the real MSR; writes exit and are
                              dropped, as KVM drops them (a microcode update: the CPU under the
                              hypervisor does not change, the guest is not faulted for asking) */
    MSR_HFI_PTR,           /* reads without an exit; writes exit and are checked: the address
                              the CPU writes its feedback table to (msr_hfi_ptr_ok) */
    MSR_LBR_CTL,           /* reads and writes exit: with the VMX controls that switch it
                              (hv.lbr_ctl), the guest's value in the VMCS, checked
                              (msr_lbr_ctl_ok); without, read through and writes refused */
    MSR_TSC_ADJUST,        /* reads and writes exit: the guest's own copy, per CPU, which starts
                              as the real one; a write moves the guest's TSC by the change
                              (the TSC offset, SDM Vol. 3B 18.17.3 "Time-Stamp Counter
                              Adjustment"), never the real TSC the hypervisor keeps time by,
                              as KVM emulates it */
};

/* Bits a write of IA32_LBR_CTL may set (SDM Vol. 4 table 2-2: LBREn, OS, USR, CALL_STACK, and
 * the branch-type filters in bits 22:16); others are reserved and #GP, as the CPU gives. */
#define MSR_LBR_CTL_VALID 0x7f000full
static inline bool msr_lbr_ctl_ok(uint64_t val) { return !(val & ~MSR_LBR_CTL_VALID); }

/* The guest's TSC offset after it writes 'val' to its IA32_TSC_ADJUST, which held 'old':
 * the TSC moves by the change (wrapping, as the counter does). Pure. */
static inline uint64_t msr_tsc_adjust_offset(uint64_t offset, uint64_t old, uint64_t val)
{
    return offset + (val - old);
}

/* May the guest point the hardware feedback interface's table (IA32_HW_FEEDBACK_PTR: bit 0
 * valid, bits 51:12 the table's address; Intel SDM Vol. 3B 15.6 "Hardware Feedback Interface
 * and Intel Thread Director") at 'val', a table of 'pages' pages (CPUID.06H:EDX[11:8] + 1)?
 * Not into the hypervisor's region [rbase, rbase + rsize): the processor writes the table
 * itself, past EPT. Off (bit 0 clear) is always allowed. Pure; the caller also requires RAM. */
bool msr_hfi_ptr_ok(uint64_t val, unsigned pages, uint64_t rbase, uint64_t rsize);
#define MSR_HFI_PTR_VALID   1ull
#define MSR_HFI_PTR_ADDR    0x000ffffffffff000ull

/* May the guest write IA32_MISC_ENABLE from 'now' to 'val'? Not if it sets XD disable (bit
 * 34: EFER.NXE becomes reserved, SDM Vol. 4 table 2-2, and the host EFER every exit loads
 * would fail the next VM entry's host-state checks) or the CPUID limit (bit 22: the
 * hypervisor's own CPUID would stop at leaf 2); clearing them, and every other bit, is the
 * guest's. Pure. */
bool msr_misc_enable_write_ok(uint64_t now, uint64_t val);

/* What the policy does with 'msr' (the allow-list's entry, or the default MSR_READ_PASS). */
enum msr_class msr_policy_class(uint32_t msr);

/* Make RDMSR (read) and/or WRMSR (write) of 'msr' exit (exits) or not, in the bitmap's 4 KiB;
 * MSRs outside its two ranges always exit whatever it says. */
void msr_bitmap_mark(uint8_t *bitmap, uint32_t msr, bool read, bool write, bool exits);

/* The bitmap's 4 KiB: every bit set, then the exits the allow-list removes cleared. */
void msr_policy_fill(uint8_t *bitmap);

/* The exit handlers' fallback when no registered handler took the access. Returns true with
 * *val read (for reads) or the write done; false: inject #GP. */
bool msr_policy_read(unsigned cpu, uint32_t msr, uint64_t *val);
bool msr_policy_write(unsigned cpu, uint32_t msr, uint64_t val);

/* Refused accesses so far (all CPUs), by MSR: slot i < MSR_REFUSED_KINDS fills *msr, *reads,
 * *writes and returns their sum (0: slot unused); i = MSR_REFUSED_KINDS returns the refusals of
 * MSRs beyond the table. For the exit summary. */
#define MSR_REFUSED_KINDS 16
uint64_t msr_policy_refused(unsigned i, uint32_t *msr, uint64_t *reads, uint64_t *writes);

#endif
