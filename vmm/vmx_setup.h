/*
 * vmx_setup.h - bringing one CPU into VMX operation with a VMCS whose guest state is the CPU's
 * own current state (the "blue pill"), and the VMX capability checks done once on the BSP.
 *
 * Contract: vmx_check_caps() runs on the BSP and fills the control words in 'hv'; it returns
 * 0 or a negative error with a log line saying what is missing. vmx_start_cpu() runs on the CPU
 * being virtualized; on success it does not return (the CPU continues as the guest at
 * 'launch'); on failure it leaves VMX operation and returns a negative error.
 */
#ifndef HVT_VMX_SETUP_H
#define HVT_VMX_SETUP_H
#include "vcpu.h"
#include "hvt_bootinfo.h"

int  vmx_check_caps(void);
int  vmx_alloc_cpu(struct vcpu *v, unsigned index, uint32_t apic_id);
int  vmx_start_cpu(struct vcpu *v, struct hvt_cpu_launch *launch);
/* The guest's translations are tagged with this VPID on every CPU (each CPU's TLB is its own,
 * and a guest CPU never moves to another physical one). */
#define VMX_GUEST_VPID 1
/* Invalidate this CPU's cached translations of the guest (its VPID), as the guest's own
 * instruction would have when the hypervisor emulates one that does (MOV to CR0/CR3/CR4, INIT).
 * Without VPIDs every VM entry does it already. */
void vmx_flush_guest_tlb(void);
/* Put the guest into the architectural state after INIT (SDM 10.1.1, table 10-1). */
void vmx_guest_reset_to_init(void);

#endif
