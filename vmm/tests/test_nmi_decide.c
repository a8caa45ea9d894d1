/*
 * test_nmi_decide.c - host unit test of nmi_decide (vmm/nmi_decide.h): every combination of
 * the guest's interruptibility bits, an event already being injected, and a pending NMI,
 * against the VM-entry checks an NMI injection must pass (SDM 27.3.1.5: no blocking by MOV SS,
 * no blocking by NMI without virtual NMIs, and - model-specific, Bochs enforces it - no
 * blocking by STI; one event per entry).
 */
#include <stdio.h>
#include "nmi_decide.h"
#include "check.h"

/* Would a VM entry that injects an NMI in this state pass its checks? */
static int entry_ok(uint32_t intr, uint32_t info)
{
    if (info & VMX_INTR_INFO_VALID)
        return 0;                               /* the field holds another event */
    return !(intr & (VMX_INTR_BLOCK_MOVSS | VMX_INTR_BLOCK_NMI | VMX_INTR_BLOCK_STI));
}

int main(void)
{
    unsigned injected = 0, waited = 0, bad = 0;
    for (uint32_t intr = 0; intr < 16; intr++)
        for (int valid = 0; valid < 2; valid++)
            for (int pending = 0; pending < 2; pending++) {
                uint32_t info = valid ? (VMX_INTR_INFO_VALID | VMX_INTR_TYPE_HW_EXC | 14) : 0;
                enum nmi_action a = nmi_decide(pending, VMX_ACTIVITY_ACTIVE, intr, info);
                if (!pending) {
                    bad += a != NMI_NOTHING;
                    continue;
                }
                if (a == NMI_INJECT) {
                    injected++;
                    bad += !entry_ok(intr, info);       /* would fail the entry */
                } else if (a == NMI_WAIT_ONE_STEP) {
                    waited++;
                    bad += entry_ok(intr, info);        /* held back for nothing */
                } else {
                    bad++;                              /* a pending NMI dropped */
                }
            }
    CHECK(bad == 0, "%u of 64 combinations decided wrong", bad);
    /* Blocking by SMI (bit 2) alone does not hold an NMI back: 2 of 16 states inject. */
    CHECK(injected == 2, "injected in %u states, want 2 (none or SMI blocking only)", injected);
    CHECK(waited == 30, "waited in %u states, want 30", waited);
    CHECK(nmi_decide(true, VMX_ACTIVITY_ACTIVE, VMX_INTR_BLOCK_STI, 0) == NMI_WAIT_ONE_STEP, "STI shadow: wait");
    CHECK(nmi_decide(true, VMX_ACTIVITY_ACTIVE, VMX_INTR_BLOCK_MOVSS, 0) == NMI_WAIT_ONE_STEP, "MOV SS shadow: wait");
    CHECK(nmi_decide(true, VMX_ACTIVITY_ACTIVE, VMX_INTR_BLOCK_NMI, 0) == NMI_WAIT_ONE_STEP, "inside the guest's NMI handler: wait");
    CHECK(nmi_decide(true, VMX_ACTIVITY_ACTIVE, 0, 0) == NMI_INJECT, "nothing blocks: inject");
    /* HLT takes an NMI (it wakes the CPU); wait-for-SIPI takes no event at all (SDM 27.3.1.5). */
    CHECK(nmi_decide(true, VMX_ACTIVITY_HLT, 0, 0) == NMI_INJECT, "HLT: inject");
    unsigned sipi_bad = 0;
    for (uint32_t intr = 0; intr < 16; intr++)
        sipi_bad += nmi_decide(true, VMX_ACTIVITY_WAIT_SIPI, intr, 0) != NMI_DROP;
    CHECK(sipi_bad == 0, "wait-for-SIPI: %u of 16 states not dropped", sipi_bad);
    CHECK(nmi_decide(false, VMX_ACTIVITY_WAIT_SIPI, 0, 0) == NMI_NOTHING, "wait-for-SIPI, nothing pending");
    return check_summary("test_nmi_decide");
}
