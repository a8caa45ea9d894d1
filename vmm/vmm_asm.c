/* vmm_asm.c - the constants vmx_stub.asm uses (hv_asm.h: compiled with -S, never linked). */
#include "hv_asm.h"
#include "vcpu.h"
#include "hv_guest.h"
#include "vmx_arch.h"
#include "x86_arch.h"

void vmm_asm_constants(void);
void vmm_asm_constants(void)
{
    HV_ASM_OFFSET(VCPU_EXIT_TSC_OFFSET, struct vcpu, exit_tsc);
    HV_ASM_OFFSET(VCPU_ENTRY_TSC_OFFSET, struct vcpu, entry_tsc);
    HV_ASM_OFFSET(VCPU_DILATE_OFFSET, struct vcpu, dilate);
    HV_ASM_OFFSET(VCPU_FAST_MTF_OFFSET, struct vcpu, fast_mtf);
    /* fast_mtf and fast_block, read as one little-endian word: fast_mtf = 1, fast_block = 0 */
    HV_ASM_CONST(FAST_MTF_GO, 1);
    HV_ASM_CONST(HV_DILATE_TSC, HV_DILATE_TSC);
    HV_ASM_CONST(HV_DILATE_DISARM, HV_DILATE_DISARM);
    HV_ASM_CONST(VMCS_TSC_OFFSET, VMCS_TSC_OFFSET);
    HV_ASM_CONST(VMCS_EXIT_REASON, VMCS_EXIT_REASON);
    HV_ASM_CONST(EXIT_MTF, EXIT_MTF);
    HV_ASM_CONST(MSR_IA32_TSC_DEADLINE, MSR_IA32_TSC_DEADLINE);
    HV_ASM_OFFSET(VCPU_DILATE_FIXED_OFFSET, struct vcpu, dilate_fixed);
    HV_ASM_OFFSET(VCPU_RESUME_TSC_OFFSET, struct vcpu, resume_tsc);
}
