/*
 * vmx_exit.h - VM-exit dispatch. One handle_* function per exit reason the guest can cause
 * (firmware and Linux); anything else is reported and stops the hypervisor loudly.
 *
 * Contract: vmx_exit_dispatch() is called by vmx_stub.asm with the guest's GPRs saved; it
 * counts the exit per CPU and reason, handles it, and returns to VMRESUME. Policy modules
 * (trace/, net/) hook in through struct hv_hooks (hv_hooks.h), never by editing handlers.
 */
#ifndef HVT_VMX_EXIT_H
#define HVT_VMX_EXIT_H
#include "vcpu.h"

void vmx_exit_dispatch(struct guest_regs *regs, struct vcpu *v);
void vmx_inject_exception(unsigned vector, bool has_error, uint32_t error);
void vmx_skip_instruction(void);
const char *vmx_exit_name(unsigned reason);
/* Print every CPU's exit counts by reason (called at guest power-off). */
void vmx_print_exit_summary(const char *why);

#endif
