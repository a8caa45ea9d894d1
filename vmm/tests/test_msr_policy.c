/* test_msr_policy.c - the MSR allow-list and bitmap (vmm/msr_class.c) on the host. */
#include <stdio.h>
#include <string.h>
#include "msr_policy.h"
#include "check.h"


/* Does an access exit? (SDM Vol. 3C 25.6.9: a set bit, or an MSR outside both ranges) */
static int exits(const uint8_t *bm, uint32_t msr, int write)
{
    unsigned base;
    uint32_t bit;
    if (msr < 0x2000) { base = write ? 2048 : 0; bit = msr; }
    else if (msr - 0xc0000000u < 0x2000) { base = write ? 3072 : 1024; bit = msr - 0xc0000000u; }
    else return 1;
    return bm[base + bit / 8] >> (bit % 8) & 1;
}

int main(void)
{
    uint8_t bm[4096];
    memset(bm, 0, sizeof bm);
    msr_policy_fill(bm);
    /* the hot guest-state MSRs never exit */
    const uint32_t pass_rw[] = {0xc0000080, 0xc0000082, 0xc0000100, 0xc0000101, 0xc0000102, 0xc0000103,
                                0x48, 0x49, 0x174, 0x277, 0x80b, 0x838, 0x830, 0x6e0, 0x38f, 0x186};
    for (unsigned i = 0; i < sizeof pass_rw / sizeof pass_rw[0]; i++)
        CHECK(!exits(bm, pass_rw[i], 0) && !exits(bm, pass_rw[i], 1), "MSR %x passes both ways", pass_rw[i]);
    /* what reaches past the guest exits on write */
    const uint32_t guarded[] = {0x1b /* APIC_BASE */, 0x10 /* TSC */, 0x3b /* TSC_ADJUST */, 0x600 /* DS_AREA */,
                                0x3f1 /* PEBS_ENABLE */, 0x570 /* RTIT_CTL */, 0x560 /* RTIT_OUTPUT_BASE */,
                                0x79 /* BIOS_UPDT_TRIG */, 0x200, 0x20f, 0x250, 0x26f, 0x2ff /* MTRRs */,
                                0x3a /* FEATURE_CONTROL */, 0x9b /* SMM_MONITOR_CTL */, 0x480 /* VMX_BASIC */,
                                0x1fff, 0xc0001fff, 0x4b564d00 /* another hypervisor's */, 0xc0010117};
    for (unsigned i = 0; i < sizeof guarded / sizeof guarded[0]; i++)
        CHECK(exits(bm, guarded[i], 1), "a write to MSR %x exits", guarded[i]);
    /* reads of the MTRRs exit (the guest's copy), of the APIC base do not */
    CHECK(exits(bm, 0x200, 0) && exits(bm, 0x2ff, 0) && !exits(bm, 0x1b, 0), "MTRR reads exit, APIC_BASE's do not");
    /* classes */
    CHECK(msr_policy_class(0x1b) == MSR_APIC_BASE, "APIC_BASE checked");
    CHECK(msr_policy_class(0x200) == MSR_SHADOW && msr_policy_class(0x21f) == MSR_SHADOW &&
          msr_policy_class(0x220) == MSR_READ_PASS && msr_policy_class(0x268) == MSR_SHADOW &&
          msr_policy_class(0x2ff) == MSR_SHADOW, "MTRRs kept per CPU, and only they");
    CHECK(msr_policy_class(0x600) == MSR_READ_PASS && msr_policy_class(0x3f1) == MSR_READ_PASS &&
          msr_policy_class(0x570) == MSR_READ_PASS,
          "DS_AREA, PEBS_ENABLE, RTIT_CTL: read through, writes refused");
    /* What Linux writes on real CPUs beyond the ones above (KVM's handling): a microcode
     * update dropped without a fault, XFD/XFD_ERR (AMX), LMCE, the arch-LBR depth and the HFI
     * configuration passed, the HFI table's address checked. */
    CHECK(msr_policy_class(0x79) == MSR_WRITE_IGNORE && exits(bm, 0x79, 1), "BIOS_UPDT_TRIG: writes exit, dropped");
    CHECK(msr_policy_class(0x1c4) == MSR_PASS && msr_policy_class(0x1c5) == MSR_PASS &&
          !exits(bm, 0x1c4, 1) && !exits(bm, 0x1c5, 1), "XFD and XFD_ERR pass");
    CHECK(msr_policy_class(0x4d0) == MSR_PASS && msr_policy_class(0x14cf) == MSR_PASS &&
          msr_policy_class(0x17d1) == MSR_PASS, "MCG_EXT_CTL, LBR_DEPTH, HW_FEEDBACK_CONFIG pass");
    CHECK(msr_policy_class(0x14ce) == MSR_LBR_CTL && exits(bm, 0x14ce, 0) && exits(bm, 0x14ce, 1),
          "LBR_CTL: reads and writes exit (the VMCS holds the guest's where VMX switches it)");
    CHECK(msr_lbr_ctl_ok(0) && msr_lbr_ctl_ok(0x7f0007) && msr_lbr_ctl_ok(1 | 2 | 4 | 8),
          "LBR_CTL: LBREn, OS, USR, CALL_STACK and every branch filter allowed");
    CHECK(!msr_lbr_ctl_ok(0x10) && !msr_lbr_ctl_ok(1ull << 23) && !msr_lbr_ctl_ok(1ull << 32),
          "LBR_CTL: reserved bits 4, 23, 32 refused");
    CHECK(msr_policy_class(0x17d0) == MSR_HFI_PTR && !exits(bm, 0x17d0, 0) && exits(bm, 0x17d0, 1),
          "HW_FEEDBACK_PTR: reads pass, writes exit");
    const uint64_t rb = 0x17e00000, rs = 64ull << 20;
    CHECK(msr_hfi_ptr_ok(0, 1, rb, rs) && msr_hfi_ptr_ok(rb, 1, rb, rs), "HFI off: allowed (bit 0 clear)");
    CHECK(msr_hfi_ptr_ok(0x1000000 | 1, 2, rb, rs), "HFI table in guest memory: allowed");
    CHECK(!msr_hfi_ptr_ok(rb | 1, 1, rb, rs) && !msr_hfi_ptr_ok((rb + rs - 0x1000) | 1, 1, rb, rs),
          "HFI table inside the hypervisor's region: refused");
    CHECK(!msr_hfi_ptr_ok((rb - 0x1000) | 1, 2, rb, rs), "HFI table of 2 pages running into the region: refused");
    CHECK(msr_hfi_ptr_ok((rb - 0x2000) | 1, 2, rb, rs) && msr_hfi_ptr_ok((rb + rs) | 1, 4, rb, rs),
          "HFI table right below or right above the region: allowed");
    CHECK(!msr_hfi_ptr_ok(0x1000000 | 1 | 0x10, 1, rb, rs), "HFI pointer with reserved bits: refused");
    CHECK(msr_policy_class(0x10) == MSR_READ_ONLY, "TSC read-only");
    /* IA32_TSC_ADJUST: the guest's copy (reads exit too: the real one never changes), and a
     * write moves the guest's TSC offset by the change, wrapping as the counter does */
    CHECK(msr_policy_class(0x3b) == MSR_TSC_ADJUST && exits(bm, 0x3b, 0) && exits(bm, 0x3b, 1),
          "TSC_ADJUST: reads and writes exit");
    CHECK(msr_tsc_adjust_offset(1000, 0, 1ull << 20) == 1000 + (1ull << 20), "TSC_ADJUST +2^20: offset +2^20");
    CHECK(msr_tsc_adjust_offset(1000 + (1ull << 20), 1ull << 20, 0) == 1000, "TSC_ADJUST back to 0: offset back");
    CHECK(msr_tsc_adjust_offset((uint64_t)-5, 7, (uint64_t)-3) == (uint64_t)-15,
          "TSC_ADJUST to a negative value: the offset moves down by 10 (two's complement)");
    CHECK(msr_policy_class(0x480) == MSR_GP && msr_policy_class(0x493) == MSR_GP && msr_policy_class(0x494) == MSR_READ_PASS,
          "VMX capability MSRs #GP");
    /* IA32_MISC_ENABLE: reads pass, writes exit and may not set XD disable (bit 34: EFER.NXE
     * then becomes reserved and the host EFER loaded at every exit fails the next entry) or
     * the CPUID limit (bit 22: the hypervisor's own CPUID shrinks); the rest is the guest's */
    CHECK(!exits(bm, 0x1a0, 0) && exits(bm, 0x1a0, 1), "MISC_ENABLE: reads pass, writes exit");
    CHECK(msr_policy_class(0x1a0) == MSR_MISC_ENABLE, "MISC_ENABLE checked");
    uint64_t now = 0x850089;                 /* fast strings, TM, BTS/PEBS unavailable, ... */
    CHECK(msr_misc_enable_write_ok(now, now), "unchanged: allowed");
    CHECK(msr_misc_enable_write_ok(now, now & ~1ull), "fast strings off: allowed");
    CHECK(msr_misc_enable_write_ok(now, now | (1ull << 38)), "turbo disable: allowed");
    CHECK(!msr_misc_enable_write_ok(now, now | (1ull << 34)), "XD disable set: refused");
    CHECK(!msr_misc_enable_write_ok(now, now | (1ull << 22)), "CPUID limit set: refused");
    CHECK(msr_misc_enable_write_ok(now | (1ull << 22), now), "CPUID limit cleared (Linux does): allowed");
    CHECK(msr_misc_enable_write_ok(now | (1ull << 34), now), "XD disable cleared (Linux does): allowed");
    /* every byte outside the allow-list's bits stays set */
    unsigned clear = 0;
    for (unsigned i = 0; i < sizeof bm; i++)
        clear += 8 - __builtin_popcount(bm[i]);
    CHECK(clear > 300 && clear < 1400, "%u cleared bits of 32768: the allow-list only", clear);
    return check_summary("test_msr_policy");
}
