/* step_fast_test_asm.c - TV_* for step_fast.asm's HOST_TEST build (hv_asm.h). */
#include "hv_asm.h"
#include "step_fast_test.h"

void step_fast_test_constants(void);
void step_fast_test_constants(void)
{
    HV_ASM_CONST(TV_CR3, TV_CR3 * 8);
    HV_ASM_CONST(TV_IDTR, TV_IDTR * 8);
    HV_ASM_CONST(TV_RIP, TV_RIP * 8);
    HV_ASM_CONST(TV_RSP, TV_RSP * 8);
    HV_ASM_CONST(TV_RFLAGS, TV_RFLAGS * 8);
}
