/*
 * test_pending_dbg.c - host unit test of pending_dbg_in_shadow (vmm/pending_dbg.h): for every
 * TF/BTF combination and prior BS value, the field satisfies the VM-entry check that applies
 * under blocking by STI (SDM 27.3.1.5: BS = 1 exactly when TF = 1 and BTF = 0), and the other
 * pending bits (B0-B3, enabled breakpoint, RTM) are kept.
 */
#include <stdio.h>
#include "pending_dbg.h"
#include "check.h"

int main(void)
{
    unsigned bad = 0, n = 0;
    const uint64_t others[] = { 0, 0xf, 1ull << 12, 1ull << 16, 0xf | (1ull << 12) };
    for (int tf = 0; tf < 2; tf++)
        for (int btf = 0; btf < 2; btf++)
            for (int bs = 0; bs < 2; bs++)
                for (unsigned o = 0; o < sizeof others / sizeof others[0]; o++) {
                    uint64_t pend = others[o] | (bs ? PENDING_DBG_BS : 0);
                    uint64_t rflags = 0x202 | (tf ? RFLAGS_TF : 0), dbgctl = btf ? DEBUGCTL_BTF : 0;
                    uint64_t r = pending_dbg_in_shadow(pend, rflags, dbgctl);
                    int want_bs = tf && !btf;
                    bad += !!(r & PENDING_DBG_BS) != want_bs;
                    bad += (r & ~PENDING_DBG_BS) != others[o];
                    n++;
                }
    CHECK(bad == 0, "%u of %u combinations break the entry check or lose a bit", bad, n);
    CHECK(pending_dbg_in_shadow(0, 0x302, 0) == PENDING_DBG_BS, "a guest single-stepping itself: BS set");
    CHECK(pending_dbg_in_shadow(PENDING_DBG_BS, 0x202, 0) == 0, "TF clear: BS cleared");
    return check_summary("test_pending_dbg");
}
