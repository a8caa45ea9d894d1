/*
 * hv_budget_host.c - vmm/'s memory budgets (vmm/include/hv_api.h) for host targets built from
 * the hypervisor's modules: vmm/mem_budget.c's own arithmetic and counters over the default
 * region (64 MiB, 2 CPUs), allocating with the target's hv_alloc_pages/hv_alloc.
 * hv_host_start_used is what the target's start took (it sets it after its init; 0 before).
 */
#include "mem_budget.h"

#define HOST_REGION (64ull << 20)
#define HOST_CPUS   2u

uint64_t hv_host_start_used;

uint64_t hv_budget_limit(const struct hv_budget *b)
{
    struct mem_plan p;
    mem_plan_make(&p, HOST_REGION, HOST_CPUS, hv_host_start_used);
    return mem_plan_share(&p, b->parts);
}

void *hv_budget_pages(struct hv_budget *b, size_t npages)
{
    uint64_t bytes = (uint64_t)npages * MEM_PAGE;
    if (!mem_budget_charge(&b->used, hv_budget_limit(b), bytes))
        return 0;
    void *p = hv_alloc_pages(npages);
    if (!p)
        mem_budget_uncharge(&b->used, bytes);
    return p;
}

void *hv_budget_alloc(struct hv_budget *b, size_t bytes)
{
    uint64_t charged = bytes >= MEM_PAGE ? (bytes + MEM_PAGE - 1) / MEM_PAGE * MEM_PAGE
                                         : (bytes + 15) & ~(uint64_t)15;
    if (!mem_budget_charge(&b->used, hv_budget_limit(b), charged))
        return 0;
    void *p = hv_alloc(bytes);
    if (!p)
        mem_budget_uncharge(&b->used, charged);
    return p;
}
