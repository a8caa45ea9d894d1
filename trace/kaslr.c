/* kaslr.c - the guest kernel's KASLR slide from IA32_LSTAR (see kaslr.h). */
#include "kaslr.h"
#include "trace_opts.h"
#include "hv_api.h"

static uint64_t lstar_link, slide;
static bool known;

void kaslr_init(uint64_t link)
{
    lstar_link = link;
    known = !link;
    slide = 0;
}

bool kaslr_known(void) { return __atomic_load_n(&known, __ATOMIC_ACQUIRE); }

uint64_t kaslr_slide(void) { return kaslr_known() ? slide : 0; }

bool kaslr_poll(void)
{
    if (kaslr_known())
        return true;
    uint64_t lstar = hv_rdmsr(MSR_IA32_LSTAR);   /* not switched by VMX: the guest's */
    if (!trace_opts_is_kernel(lstar))
        return false;
    slide = lstar - lstar_link;
    __atomic_store_n(&known, true, __ATOMIC_RELEASE);
    hv_log("hvtrace: KASLR slide %lx (LSTAR %lx)\n", slide, lstar);
    return true;
}
