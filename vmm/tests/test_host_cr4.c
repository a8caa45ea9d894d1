/*
 * test_host_cr4.c - host unit test of host_cr4_pick (vmm/host_cr4.h): the CR4 VMX root runs
 * with, from firmware CR4 values with and without CET/PKS and the fixed-bit MSRs of real
 * CPUs and Bochs.
 */
#include <stdio.h>
#include "host_cr4.h"
#include "check.h"

int main(void)
{
    /* IA32_VMX_CR4_FIXED0/FIXED1: 0x2000 (VMXE) and, per CPU, the bits it allows. */
    const uint64_t f0 = 0x2000;
    const uint64_t f1_skylake = 0x3727ff, f1_tigerlake = 0x1f727ff, f1_sapphire = 0x1ff77ff;
    /* OVMF on a CET-less CPU: PAE, PGE, OSFXSR, OSXMMEXCPT (0x668). */
    uint64_t r = host_cr4_pick(0x668, f0, f1_skylake, true);
    CHECK(r == (0x668 | CR4_VMXE | CR4_OSXSAVE), "skylake: %#lx", (unsigned long)r);
    /* Firmware that turned on CET (its own shadow stack) and PKS: both gone, the rest kept. */
    uint64_t fw = 0x668 | CR4_CET | CR4_PKS | CR4_OSXSAVE | CR4_PCIDE;
    r = host_cr4_pick(fw, f0, f1_sapphire, true);
    CHECK(!(r & CR4_CET) && !(r & CR4_PKS), "CET and PKS off: %#lx", (unsigned long)r);
    CHECK((r & (0x668 | CR4_OSXSAVE | CR4_PCIDE | CR4_VMXE)) == (0x668 | CR4_OSXSAVE | CR4_PCIDE | CR4_VMXE),
          "the rest kept: %#lx", (unsigned long)r);
    r = host_cr4_pick(0x668 | CR4_CET, f0, f1_tigerlake, false);
    CHECK(r == (0x668 | CR4_VMXE), "tigerlake without XSAVE: %#lx", (unsigned long)r);
    /* Firmware that left machine checks off (CR4.MCE clear): on in VMX root. */
    r = host_cr4_pick(0x668 & ~CR4_MCE, f0, f1_skylake, true);
    CHECK(r == (0x668 | CR4_VMXE | CR4_OSXSAVE), "MCE forced on: %#lx", (unsigned long)r);
    /* A bit FIXED1 forbids is cleared, one FIXED0 requires is set. */
    r = host_cr4_pick(0x668 | CR4_LA57, f0 | 0x20, f1_skylake, false);
    CHECK(!(r & CR4_LA57) && (r & 0x20), "fixed bits: %#lx", (unsigned long)r);
    /* Always within FIXED0/FIXED1 and VMXE set, whatever the firmware's value. */
    unsigned bad = 0;
    for (uint64_t v = 0; v < (1u << 25); v += 0x1357) {
        uint64_t x = host_cr4_pick(v, f0, f1_sapphire, v & 1);
        bad += (x & f0) != f0 || (x & ~f1_sapphire) || !(x & CR4_VMXE) || !(x & CR4_MCE) ||
               (x & (CR4_CET | CR4_PKS));
    }
    CHECK(bad == 0, "%u of the sweep broke a rule", bad);
    return check_summary("test_host_cr4");
}
