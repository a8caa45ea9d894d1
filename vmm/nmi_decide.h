/*
 * nmi_decide.h - when an NMI the host caught may be given to the guest.
 *
 * An NMI that arrives while a CPU is in VMX root belongs to the guest (NMI exiting is off: the
 * guest takes the others itself), so it is injected at a VM entry. Not every entry may carry
 * it (SDM 27.3.1.5 "Checks on Guest Non-Register State", 27.6 "Event Injection"): with
 * blocking by MOV SS the entry fails, with blocking by NMI (the guest inside its own NMI
 * handler, "virtual NMIs" off) it fails, with blocking by STI a processor may fail it (Bochs
 * does); and while another event is being injected at this entry there is no room. In those cases the NMI waits and the guest
 * runs one instruction under the monitor trap flag (an MTF exit also comes right after an
 * injected event's delivery, SDM 27.7.8 "Pending MTF VM Exits"), after which the decision is
 * taken again: a shadow lasts one instruction, an NMI handler until its IRET. A CPU in the
 * wait-for-SIPI activity state may be given no event at all (27.3.1.5, the activity-state
 * checks; its processor would not take an NMI before its SIPI either): the NMI is dropped.
 *
 * Contract: nmi_decide(pending, activity, interruptibility, entry_intr_info) - the guest
 * activity-state field, the guest interruptibility-state field and the VM-entry interruption-information field as they will
 * be at the entry. Pure: unit-tested on the host over every combination.
 */
#ifndef HVT_NMI_DECIDE_H
#define HVT_NMI_DECIDE_H
#include <stdbool.h>
#include <stdint.h>
#include "vmx_arch.h"

enum nmi_action { NMI_NOTHING, NMI_INJECT, NMI_WAIT_ONE_STEP, NMI_DROP };

#define NMI_BLOCKING (VMX_INTR_BLOCK_STI | VMX_INTR_BLOCK_MOVSS | VMX_INTR_BLOCK_NMI)

static inline enum nmi_action nmi_decide(bool pending, uint32_t activity, uint32_t interruptibility,
                                         uint32_t entry_intr_info)
{
    if (!pending)
        return NMI_NOTHING;
    if (activity == VMX_ACTIVITY_WAIT_SIPI)
        return NMI_DROP;
    if ((entry_intr_info & VMX_INTR_INFO_VALID) || (interruptibility & NMI_BLOCKING))
        return NMI_WAIT_ONE_STEP;
    return NMI_INJECT;
}

#endif
