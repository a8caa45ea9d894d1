/*
 * mem_budget.h - how the hypervisor's region (hv_mem_mb in hvtrace.cfg, 4..4096 MiB) is shared
 * out: the arithmetic, and the bump allocator and budget counters it runs on. Pure C, no
 * locks of its own beyond atomics: host-testable.
 *
 * Contract:
 *  - The region holds the image, what the image takes while it starts (vmm/'s EPT and per-CPU
 *    state, the layers' fixed tables, the IOMMU's tables), vmm/'s reserve, and the rest.
 *  - vmm/'s reserve (mem_plan_make) is for what vmm/ itself allocates after start, on any
 *    guest's behaviour: the EPT tables on-demand MMIO mappings need (mmio_tables), the tables
 *    of the per-CPU EPT views (view_tables, per CPU) and the IOMMU's translation tables
 *    (iommu_pages, built at the end of the start). Each part has a cap vmm/ enforces where it
 *    allocates, so the parts never outgrow the reserve. (The base EPT's own edits after start,
 *    a trigger page made non-executable, split at most a few large pages: up to three tables
 *    each, from what the reserve's parts leave unused and the unbudgeted eighths.) Each cap is the smaller of a fixed
 *    count (what a PC needs: see the constants) and a fraction of the region (1/16 each for
 *    MMIO and IOMMU, 1/8 for all views together), so the reserve is at most 1/4 of any region.
 *  - mem_pool_take() hands out the region bottom up; an allocation that is not vmm/'s own
 *    (vmm = false: every module's hv_alloc_pages) never reaches into the last `reserve`
 *    bytes, so no module, however the guest drives it, leaves vmm/ without its reserve.
 *  - Budgets: what is left once the image has started (`avail`: region minus the bytes used
 *    at start minus the reserve) is divided in MEM_PARTS parts; a module that allocates at
 *    the guest's or the operator's request gets some parts (mem_plan_share) and charges every
 *    such allocation (mem_budget_charge: all or nothing; refused past the limit). The parts
 *    given out (hv_api.h says to whom: the caller decides, vmm/ does not know its users) add
 *    up to less than MEM_PARTS, so budgets cannot take each other's memory, and what is left
 *    covers allocations nobody budgets (a CPU's stream stage taken at first use).
 */
#ifndef HVT_MEM_BUDGET_H
#define HVT_MEM_BUDGET_H
#include <stdint.h>
#include <stdbool.h>

#define MEM_PAGE            4096u
#define MEM_PARTS           8u      /* hv_api.h HV_BUDGET_PARTS: the same parts */
/* Fixed counts of the reserve's parts, in pages. On-demand MMIO: 16 MiB of device pages in at
 * most 64 regions of 2 MiB need a page table each plus their directories (three tables at
 * most per page: SDM Vol. 3C 29.3.2 "EPT Translation Mechanism"). A view: the kernel's text
 * (tens of MiB: one page table per 2 MiB) and user pages in a few dozen places. The IOMMU:
 * identity maps of RAM in 2 MiB / 1 GiB pages need a few tens of tables on a large machine. */
#define MEM_MMIO_TABLES     192u
#define MEM_VIEW_TABLES     64u
#define MEM_IOMMU_PAGES     128u

struct mem_plan {
    uint64_t region;              /* bytes */
    uint64_t used_at_start;       /* bytes the image and its start took */
    uint64_t reserve;             /* bytes kept for vmm/: the three caps below, in pages */
    uint64_t avail;               /* bytes left to share out: region - used_at_start - reserve */
    unsigned mmio_tables;         /* EPT tables on-demand MMIO may take */
    unsigned view_tables;         /* tables each CPU's view may hold (its root included) */
    unsigned iommu_pages;         /* pages the IOMMU's tables may take */
};

void     mem_plan_make(struct mem_plan *p, uint64_t region, unsigned cpus, uint64_t used_at_start);
/* `parts` of MEM_PARTS of p->avail, in bytes (whole pages). */
uint64_t mem_plan_share(const struct mem_plan *p, unsigned parts);

/* The region's bump allocator: [next, end), the last `reserve` bytes vmm/'s. */
struct mem_pool { uint64_t next, end, reserve; };
/* Take `bytes` (a multiple of MEM_PAGE): true and *at = its start, or false (nothing taken). */
bool mem_pool_take(struct mem_pool *p, uint64_t bytes, bool vmm, uint64_t *at);

/* Charge `bytes` to a budget of `limit` whose count is *used: true, or false (nothing
 * charged) when the charge would pass the limit. Safe from several CPUs at once. */
bool mem_budget_charge(uint64_t *used, uint64_t limit, uint64_t bytes);
void mem_budget_uncharge(uint64_t *used, uint64_t bytes);

#endif
