/*
 * test_mc_decide.c - host unit test of mc_decide.h: a machine check in VMX root handed to the
 * guest only where the interrupted code can restart (RIPV), injected only where the guest has
 * CR4.MCE and the entry has room, over every combination of the inputs that matter.
 */
#include <stdio.h>
#include "mc_decide.h"
#include "check.h"

int main(void)
{
    /* IA32_MCG_STATUS: RIPV decides; EIPV and MCIP do not. */
    unsigned bad = 0;
    for (uint64_t st = 0; st < 8; st++)
        bad += mc_root_action(st) != ((st & MCG_STATUS_RIPV) ? MC_ROOT_REFLECT : MC_ROOT_FATAL);
    CHECK(bad == 0, "root: %u of 8 MCG_STATUS values decided wrong", bad);
    CHECK(mc_root_action(MCG_STATUS_MCIP | MCG_STATUS_EIPV) == MC_ROOT_FATAL,
          "MCIP|EIPV without RIPV: the hypervisor cannot resume");
    /* The entry: pending x guest CR4.MCE x the entry's event slot. */
    const uint64_t cr4s[] = { 0x668, 0x668 & ~CR4_MCE, CR4_MCE, 0 };
    const uint32_t slots[] = { 0, VMX_INTR_INFO_VALID | VMX_INTR_TYPE_NMI | VEC_NMI,
                               VMX_INTR_INFO_VALID | VMX_INTR_TYPE_HW_EXC | VEC_PF | VMX_INTR_INFO_ERRCODE,
                               VMX_INTR_TYPE_NMI | VEC_NMI /* not valid: room */ };
    bad = 0;
    unsigned n = 0;
    for (int p = 0; p < 2; p++)
        for (unsigned c = 0; c < 4; c++)
            for (unsigned s = 0; s < 4; s++, n++) {
                enum mc_action want = !p ? MC_NOTHING : !(cr4s[c] & CR4_MCE) ? MC_SHUTDOWN :
                                      (slots[s] & VMX_INTR_INFO_VALID) ? MC_WAIT_ONE_STEP : MC_INJECT;
                enum mc_action got = mc_decide(p, VMX_ACTIVITY_ACTIVE, cr4s[c], slots[s]);
                if (got != want) {
                    bad++;
                    printf("  pending %d cr4 %#lx slot %#x: got %d want %d\n", p,
                           (unsigned long)cr4s[c], slots[s], got, want);
                }
            }
    CHECK(bad == 0, "entry: %u of %u combinations decided wrong", bad, n);
    CHECK(mc_decide(true, VMX_ACTIVITY_ACTIVE, 0x668, 0) == MC_INJECT, "the usual case: injected");
    CHECK(mc_decide(true, VMX_ACTIVITY_ACTIVE, 0x628, 0) == MC_SHUTDOWN, "guest CR4.MCE clear: shutdown");
    CHECK(mc_decide(true, VMX_ACTIVITY_HLT, 0x668, 0) == MC_INJECT, "HLT takes #MC: injected");
    CHECK(mc_decide(true, VMX_ACTIVITY_WAIT_SIPI, 0x668, 0) == MC_DROP, "wait-for-SIPI takes no event");
    CHECK(mc_decide(false, VMX_ACTIVITY_WAIT_SIPI, 0x668, 0) == MC_NOTHING, "nothing pending");
    return check_summary("test_mc_decide");
}
