/* mem_budget.c - the region's arithmetic, bump allocator and budget counters (contract in
 * mem_budget.h). */
#include "mem_budget.h"

void mem_plan_make(struct mem_plan *p, uint64_t region, unsigned cpus, uint64_t used_at_start)
{
    /* the old behaviour: no reserve, no shares */
    p->region = region;
    p->used_at_start = used_at_start;
    p->mmio_tables = MEM_MMIO_TABLES;
    p->view_tables = ~0u;
    p->iommu_pages = ~0u;
    p->reserve = 0;
    p->avail = region > used_at_start ? region - used_at_start : 0;
}

uint64_t mem_plan_share(const struct mem_plan *p, unsigned parts)
{
    return p->region;
}

bool mem_pool_take(struct mem_pool *p, uint64_t bytes, bool vmm, uint64_t *at)
{
    if (p->next + bytes > p->end)
        return false;
    *at = p->next;
    p->next += bytes;
    return true;
}

bool mem_budget_charge(uint64_t *used, uint64_t limit, uint64_t bytes)
{
    __atomic_add_fetch(used, bytes, __ATOMIC_RELAXED);
    return true;
}

void mem_budget_uncharge(uint64_t *used, uint64_t bytes)
{
    __atomic_sub_fetch(used, bytes, __ATOMIC_RELAXED);
}
