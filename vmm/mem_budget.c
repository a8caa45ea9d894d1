/* mem_budget.c - the region's arithmetic, bump allocator and budget counters (contract in
 * mem_budget.h). */
#include "mem_budget.h"

static unsigned min_u(uint64_t a, uint64_t b) { return (unsigned)(a < b ? a : b); }

void mem_plan_make(struct mem_plan *p, uint64_t region, unsigned cpus, uint64_t used_at_start)
{
    uint64_t pages = region / MEM_PAGE;
    if (cpus == 0)
        cpus = 1;
    p->region = region;
    p->used_at_start = used_at_start;
    p->mmio_tables = min_u(MEM_MMIO_TABLES, pages / 16);
    p->iommu_pages = min_u(MEM_IOMMU_PAGES, pages / 16);
    p->view_tables = min_u(MEM_VIEW_TABLES, pages / 8 / cpus);
    if (p->view_tables == 0)
        p->view_tables = 1;             /* a view's root: only a region far too small for
                                           its CPUs gets here, and then the reserve says so */
    p->reserve = ((uint64_t)p->mmio_tables + (uint64_t)p->view_tables * cpus + p->iommu_pages) * MEM_PAGE;
    uint64_t taken = used_at_start + p->reserve;
    p->avail = region > taken ? region - taken : 0;
}

uint64_t mem_plan_share(const struct mem_plan *p, unsigned parts)
{
    if (parts > MEM_PARTS)
        parts = MEM_PARTS;
    /* avail is at most 4 GiB (hv_mem_mb <= 4096): the product cannot overflow */
    return p->avail * parts / MEM_PARTS / MEM_PAGE * MEM_PAGE;
}

bool mem_pool_take(struct mem_pool *p, uint64_t bytes, bool vmm, uint64_t *at)
{
    uint64_t end = p->end;
    if (!vmm)
        end = p->end - p->reserve > p->next ? p->end - p->reserve : p->next;
    if (bytes > end - p->next)
        return false;
    *at = p->next;
    p->next += bytes;
    return true;
}

bool mem_budget_charge(uint64_t *used, uint64_t limit, uint64_t bytes)
{
    uint64_t old = __atomic_load_n(used, __ATOMIC_RELAXED);
    do {
        if (bytes > limit || old > limit - bytes)
            return false;
    } while (!__atomic_compare_exchange_n(used, &old, old + bytes, false, __ATOMIC_RELAXED,
                                          __ATOMIC_RELAXED));
    return true;
}

void mem_budget_uncharge(uint64_t *used, uint64_t bytes)
{
    __atomic_sub_fetch(used, bytes, __ATOMIC_RELAXED);
}
