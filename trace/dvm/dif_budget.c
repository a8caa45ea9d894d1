/* dif_budget.c - the per-firing budget's slow path (dif.h, dif_impl.h dif_charge): apart from
 * the interpreter so that the string operations, which charge bytes, depend on it alone. */
#include "dif_impl.h"

/* The budget's slow path, reached when the units granted at the last look are used up
 * (r->left below zero): charge them, end the firing if the total is spent or the deadline
 * passed, else grant the next chunk. The clock is first read here, so a firing shorter than
 * one chunk never reads it; its time is measured from that first reading. */
bool dif_budget_more(struct dif_run *r)
{
    const struct dif_env *e = &r->st->env;
    r->spent += (uint64_t)((int64_t)r->grant - r->left);
    if (r->spent > r->budget) {
        r->over = true;
        return dif_fault(r, HVT_DIF_F_BUDGET, HVT_DIF_BUDGET_INSNS);
    }
    if (e->clock && e->deadline) {
        uint64_t now = e->clock(e->env_ctx);
        if (!r->clock_started) {
            r->t0 = now;
            r->clock_started = true;
        } else if (now - r->t0 >= e->deadline) {
            r->over = true;
            return dif_fault(r, HVT_DIF_F_BUDGET, HVT_DIF_BUDGET_TIME);
        }
    }
    uint64_t rest = r->budget - r->spent;
    r->grant = rest < DIF_BUDGET_CHUNK ? rest : DIF_BUDGET_CHUNK;
    r->left = (int64_t)r->grant;
    return true;
}
