/*
 * test_mem_budget.c - host unit test of vmm/mem_budget.c: vmm/'s reserve and the budgets for
 * the default region (64 MiB, 2 CPUs), the smallest (4 MiB) and the largest (4096 MiB) that
 * hvtrace.cfg accepts, and many CPUs; invariants over a sweep of sizes; and the allocator:
 * budgeted allocations refused at their limit, each budget reaching its limit whatever the
 * other took, and unbudgeted allocations stopping short of the reserve, which vmm/ can still
 * take whole. Expected figures are worked out by hand from the contract in mem_budget.h.
 * Prints failed checks and "test_mem_budget: N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include "mem_budget.h"
#include "check.h"

#define MiB (1ull << 20)
#define KiB (1ull << 10)

struct want { const char *what; uint64_t region; unsigned cpus; uint64_t used;
              unsigned mmio, view, iommu; uint64_t reserve, avail, share3; };
static const struct want cases[] = {
    /* 16384 pages: MMIO min(192, 1024), views min(64, 16384/8/2), IOMMU min(128, 1024);
     * 192 + 2 x 64 + 128 = 448 pages = 1.75 MiB; 64 - 19 - 1.75 = 43.25 MiB; 3/8 of it
     * 16.21875 MiB. 19 MiB is about what a 2-CPU Bochs boot takes at start. */
    { "64 MiB, 2 CPUs (the default)", 64 * MiB, 2, 19 * MiB, 192, 64, 128, 1792 * KiB,
      43 * MiB + 256 * KiB, 16 * MiB + 224 * KiB },
    /* 1024 pages: MMIO min(192, 64), views min(64, 1024/8/2), IOMMU min(128, 64): 256 pages;
     * 4 - 1 - 1 = 2 MiB (vmm/ alone took 1 MiB); 3/8: 768 KiB. */
    { "4 MiB, 2 CPUs (the smallest)", 4 * MiB, 2, 1 * MiB, 64, 64, 64, 1 * MiB, 2 * MiB, 768 * KiB },
    /* Every cap at its fixed count: 448 pages; 4096 - 19 - 1.75 = 4075.25 MiB; 3/8:
     * 1528.21875 MiB. */
    { "4096 MiB, 2 CPUs (the largest)", 4096 * MiB, 2, 19 * MiB, 192, 64, 128, 1792 * KiB,
      4075 * MiB + 256 * KiB, 1528 * MiB + 224 * KiB },
    /* 64 CPUs: views min(64, 16384/8/64 = 32): 192 + 64 x 32 + 128 = 2368 pages = 9.25 MiB. */
    { "64 MiB, 64 CPUs", 64 * MiB, 64, 40 * MiB, 192, 32, 128, 9 * MiB + 256 * KiB,
      14 * MiB + 768 * KiB, 5 * MiB + 544 * KiB },
    /* The start took more than leaves room for the reserve: nothing to share out. */
    { "64 MiB, start took 63 MiB", 64 * MiB, 2, 63 * MiB, 192, 64, 128, 1792 * KiB, 0, 0 },
};

static void test_plans(void)
{
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const struct want *w = &cases[i];
        struct mem_plan p;
        mem_plan_make(&p, w->region, w->cpus, w->used);
        CHECK(p.mmio_tables == w->mmio && p.view_tables == w->view && p.iommu_pages == w->iommu,
              "%s: caps %u %u %u, want %u %u %u", w->what, p.mmio_tables, p.view_tables,
              p.iommu_pages, w->mmio, w->view, w->iommu);
        CHECK(p.reserve == w->reserve && p.avail == w->avail, "%s: reserve %llu avail %llu, want %llu %llu",
              w->what, (unsigned long long)p.reserve, (unsigned long long)p.avail,
              (unsigned long long)w->reserve, (unsigned long long)w->avail);
        uint64_t s = mem_plan_share(&p, 3);
        CHECK(s == w->share3, "%s: 3 parts %llu, want %llu", w->what, (unsigned long long)s,
              (unsigned long long)w->share3);
    }
    /* Every size hvtrace.cfg accepts, 1 to 64 CPUs, starts taking 1/8 to 7/8 of the region:
     * the reserve is at most a quarter, pays for its caps, and the reserve, the start and two
     * budgets of 3 parts never add up to more than the region. */
    unsigned bad = 0, n = 0;
    for (uint64_t mb = 4; mb <= 4096; mb += mb < 128 ? 1 : 61)
        for (unsigned cpus = 1; cpus <= 64; cpus *= 2)
            for (unsigned eighths = 1; eighths < 8; eighths += 2) {
                uint64_t region = mb * MiB, used = region / 8 * eighths;
                struct mem_plan p;
                mem_plan_make(&p, region, cpus, used);
                uint64_t caps = ((uint64_t)p.mmio_tables + (uint64_t)p.view_tables * cpus + p.iommu_pages) * MEM_PAGE;
                uint64_t s = mem_plan_share(&p, 3);
                n++;
                if (p.reserve > region / 4 || p.reserve != caps || p.mmio_tables > MEM_MMIO_TABLES ||
                    p.view_tables > MEM_VIEW_TABLES || p.iommu_pages > MEM_IOMMU_PAGES ||
                    p.view_tables == 0 || s % MEM_PAGE ||
                    (used + p.reserve <= region && used + p.reserve + 2 * s > region))
                    bad++;
            }
    CHECK(bad == 0, "%u of %u plans break the invariants", bad, n);
}

/* The default region at some address: two budgets of 3 parts each, then unbudgeted
 * allocations, then vmm/'s own. */
static void test_pool(void)
{
    const uint64_t base = 0x17e00000ull, region = 64 * MiB, used = 19 * MiB;
    struct mem_plan p;
    mem_plan_make(&p, region, 2, used);
    struct mem_pool pool = { base + used, base + region, p.reserve };
    uint64_t probes = 0, d = 0, at;
    uint64_t lim = mem_plan_share(&p, 3);
    unsigned got_p = 0, got_d = 0, refused_at = 0;
    /* The guest arms probes until its budget says no. */
    for (;;) {
        if (!mem_budget_charge(&probes, lim, MEM_PAGE)) {
            refused_at = got_p;
            break;
        }
        if (!mem_pool_take(&pool, MEM_PAGE, false, &at)) {
            mem_budget_uncharge(&probes, MEM_PAGE);
            break;
        }
        got_p++;
    }
    CHECK(got_p == 16 * 256 + 56 && refused_at == got_p && probes == lim,
          "probes: %u pages then refused by the budget (want 4152), charged %llu of %llu", got_p,
          (unsigned long long)probes, (unsigned long long)lim);
    /* The operator's D program still has all of its own budget. */
    for (;;) {
        if (!mem_budget_charge(&d, lim, MEM_PAGE))
            break;
        if (!mem_pool_take(&pool, MEM_PAGE, false, &at)) {
            mem_budget_uncharge(&d, MEM_PAGE);
            break;
        }
        got_d++;
    }
    CHECK(got_d == got_p && d == lim, "D: %u pages after the probes took theirs (want %u)", got_d, got_p);
    /* A charge that would pass the limit takes nothing. */
    uint64_t before = d;
    CHECK(!mem_budget_charge(&d, lim, 1) && d == before, "one byte over the limit: refused, nothing charged");
    /* Unbudgeted module allocations stop short of vmm/'s reserve... */
    unsigned rest = 0;
    while (mem_pool_take(&pool, MEM_PAGE, false, &at))
        rest++;
    CHECK(pool.end - pool.next == 1792 * KiB, "modules stopped with %llu bytes left (want the reserve, 1792 KiB)",
          (unsigned long long)(pool.end - pool.next));
    CHECK(!mem_pool_take(&pool, 2 * MEM_PAGE, false, &at), "a module's larger request fails too");
    /* ...which vmm/ takes whole, and not a page more. */
    unsigned vmm = 0;
    while (mem_pool_take(&pool, MEM_PAGE, true, &at))
        vmm++;
    CHECK(vmm == 448 && pool.next == pool.end, "vmm/ took %u reserve pages (want 448)", vmm);
    CHECK(rest > 0, "room was left between the budgets and the reserve (%u pages)", rest);
}

int main(void)
{
    test_plans();
    test_pool();
    return check_summary("test_mem_budget");
}
