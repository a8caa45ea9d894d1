/* probe_budget.c - decode work per arming request (see probe_budget.h). */
#include "probe_budget.h"

#define INSN_COST 16                       /* one instruction: x86's longest */

uint64_t probe_spec_cost(const struct hvt_probe_spec *sp)
{
    unsigned kind = sp->kind & HVT_PROBE_KIND_MASK;
    if (sp->kind & HVT_PROBE_F_MODULE)
        return PROBE_MODULE_SPEC_COST;     /* a walk of the module list and one symbol table */
    if (kind != 2 || (sp->kind & HVT_PROBE_F_USER) || sp->hi <= sp->lo)
        return INSN_COST;
    uint64_t span = sp->hi - sp->lo;
    return span < PROBE_RETURN_SPAN_MAX ? span : PROBE_RETURN_SPAN_MAX;
}

bool probe_budget_take(uint64_t *left, const struct hvt_probe_spec *sp, bool first)
{
    uint64_t cost = probe_spec_cost(sp);
    if (!first && cost > *left)
        return false;
    *left = *left > cost ? *left - cost : 0;
    return true;
}
