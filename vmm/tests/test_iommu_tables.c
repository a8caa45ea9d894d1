/*
 * test_iommu_tables.c - host unit test of vmm/iommu_tables.c. Builds the VT-d tables for
 * several layouts and capability registers, then translates every 4 KiB page of the address
 * space in use through them with a walker written here from the VT-d spec (rev 3.3: 9.1 root
 * entry, 9.3 context entry, 9.8 second-level entries), for guest devices and for the
 * hypervisor's own NIC, comparing with the expectation computed independently from the
 * layout: a guest device reaches, read/write and at the same address, exactly the RAM and
 * RMRR pages outside the exclusions and own ranges; the NIC reaches exactly its own ranges.
 * Also: large pages where allowed (and never where not), depth from SAGAW, MGAW limits, and
 * refusals (no depth, RMRR over an exclusion, overflowing ranges, allocator exhaustion).
 * Prints failed checks and "test_iommu_tables: N passed, N failed".
 */
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "iommu_tables.h"
#include "check.h"


/* --- a page pool whose "physical" addresses differ from the pointers --- */
#define POOL_PAGES 4096
#define POOL_PHYS  0x3f00000000ull
static uint8_t *pool;
static unsigned pool_used, pool_cap;
static void *pool_alloc(void)
{
    if (pool_used >= pool_cap) return NULL;
    void *p = pool + (size_t)pool_used++ * 4096;
    memset(p, 0, 4096);
    return p;
}
static uint64_t pool_v2p(const void *v) { return POOL_PHYS + (uint64_t)((const uint8_t *)v - pool); }
static void *pool_p2v(uint64_t pa)
{
    if (pa < POOL_PHYS || pa >= POOL_PHYS + (uint64_t)POOL_PAGES * 4096) { printf("FAIL bad table pa %#llx\n", (unsigned long long)pa); exit(1); }
    return pool + (pa - POOL_PHYS);
}
static const struct iommu_ops ops = { pool_alloc, pool_v2p, pool_p2v };
static void pool_reset(unsigned cap) { pool_used = 0; pool_cap = cap; }

static uint64_t make_cap(unsigned sagaw, unsigned mgaw, unsigned sllps)
{
    return (uint64_t)sagaw << 8 | (uint64_t)(mgaw - 1) << 16 | (uint64_t)sllps << 34;
}

/* --- the walker: what the hardware does for an untranslated DMA request --- */
struct walk { bool ok; uint64_t pa; unsigned leaf_level; unsigned did; };
static unsigned leaves[6];      /* leaf counts per level seen by the walks */

static struct walk translate(uint64_t root_pa, unsigned bus, unsigned devfn, uint64_t addr, uint64_t sllps)
{
    struct walk w = {0};
    const uint64_t *root = pool_p2v(root_pa);
    uint64_t re = root[2 * bus];
    if (!(re & 1) || root[2 * bus + 1]) return w;                 /* 9.1: P, upper reserved */
    const uint64_t *ctx = pool_p2v(re & 0x000ffffffffff000ull);
    uint64_t lo = ctx[2 * devfn], hi = ctx[2 * devfn + 1];
    if (!(lo & 1) || ((lo >> 2) & 3) != 0 || (lo & 2)) return w;  /* P, TT 00, FPD clear */
    unsigned aw = hi & 7, levels = aw + 2;
    if (aw < 1 || aw > 3) return w;
    w.did = (hi >> 8) & 0xffff;
    unsigned width = 12 + 9 * levels;
    if (width < 64 && (addr >> width)) return w;
    const uint64_t *tbl = pool_p2v(lo & 0x000ffffffffff000ull);
    for (unsigned lvl = levels; lvl >= 1; lvl--) {
        unsigned shift = 12 + 9 * (lvl - 1);
        uint64_t e = tbl[(addr >> shift) & 511];
        if ((e & 3) != 3) return w;                               /* need R and W at every level */
        bool ps = lvl > 1 && (e & (1ull << 7));
        if (ps && !((lvl == 2 && (sllps & 1)) || (lvl == 3 && (sllps & 2)))) return w;
        if (lvl == 1 || ps) {
            uint64_t base = e & 0x000ffffffffff000ull & ~((1ull << shift) - 1);
            w.ok = true;
            w.pa = base | (addr & ((1ull << shift) - 1));
            w.leaf_level = lvl;
            return w;
        }
        tbl = pool_p2v(e & 0x000ffffffffff000ull);
    }
    return w;
}

/* --- the expectation, from the layout alone --- */
static bool in_pages(const struct iommu_range *r, unsigned n, uint64_t page)
{
    for (unsigned i = 0; i < n; i++) {
        if (!r[i].size) continue;
        uint64_t lo = r[i].base & ~0xfffull, hi = (r[i].base + r[i].size + 0xfff) & ~0xfffull;
        if (page >= lo && page < hi) return true;
    }
    return false;
}
static bool guest_expect(const struct iommu_layout *l, uint64_t page)
{
    if (in_pages(l->exclude, l->nexclude, page) || in_pages(l->own, l->nown, page)) return false;
    return in_pages(l->ram, l->nram, page) || in_pages(l->rmrr, l->nrmrr, page);
}

struct dev { unsigned bus, dev, fn; bool own; };

static void check_layout(const char *name, const struct iommu_layout *l, uint64_t cap,
                         uint64_t top, const struct dev *devs, unsigned ndevs, unsigned want_levels)
{
    struct iommu_tables t;
    pool_reset(POOL_PAGES);
    int rc = iommu_tables_build(&t, &ops, cap, l);
    CHECK(rc == IOMMU_OK, "%s: build: %s", name, iommu_strerror(rc));
    if (rc) return;
    CHECK(t.levels == want_levels, "%s: levels %u want %u", name, t.levels, want_levels);
    CHECK(t.pages == pool_used, "%s: pages %u, allocated %u", name, t.pages, pool_used);
    uint64_t rta = iommu_root_table_addr(&t);
    CHECK(rta == pool_v2p(t.root) && !(rta & 0xfff), "%s: RTADDR %#llx", name, (unsigned long long)rta);
    memset(leaves, 0, sizeof leaves);
    uint64_t sllps = (cap >> 34) & 0xf;
    for (unsigned d = 0; d < ndevs; d++) {
        unsigned bad = 0, mapped = 0, devfn = devs[d].dev << 3 | devs[d].fn;
        for (uint64_t a = 0; a < top; a += 0x1000) {
            bool want = devs[d].own ? in_pages(l->own, l->nown, a) : guest_expect(l, a);
            /* probe a byte inside the page too: offsets must carry through large leaves */
            uint64_t probe = a + ((a >> 12) * 37 & 0xfff);
            struct walk w = translate(rta, devs[d].bus, devfn, probe, sllps);
            if (w.ok) { mapped++; leaves[w.leaf_level]++; }
            if (w.ok != want || (w.ok && w.pa != probe) ||
                (w.ok && w.did != (devs[d].own ? IOMMU_DID_OWN : IOMMU_DID_GUEST))) {
                if (bad++ < 5)
                    printf("  %s %02x:%02x.%x addr %#llx: ok %d pa %#llx did %u, want %d\n", name,
                           devs[d].bus, devs[d].dev, devs[d].fn, (unsigned long long)probe, w.ok,
                           (unsigned long long)w.pa, w.did, want);
            }
        }
        CHECK(bad == 0, "%s: %02x:%02x.%x: %u pages wrong (%u mapped)", name, devs[d].bus,
              devs[d].dev, devs[d].fn, bad, mapped);
    }
    /* beyond the tested space nothing is mapped (sampled every 1 GiB up to the width) */
    unsigned stray = 0;
    for (uint64_t a = (top + 0x3fffffffull) & ~0x3fffffffull; a < t.limit && a < (1ull << 48); a += 0x40000000ull)
        stray += translate(rta, devs[0].bus, devs[0].dev << 3 | devs[0].fn, a, sllps).ok;
    CHECK(stray == 0, "%s: %u stray mappings above the layout", name, stray);
    if (!(sllps & 1)) CHECK(leaves[2] == 0 && leaves[3] == 0, "%s: large pages without SLLPS", name);
    if (!(sllps & 2)) CHECK(leaves[3] == 0, "%s: 1 GiB pages without SLLPS bit 1", name);
    printf("test_iommu_tables: %s: %u table pages, leaves 4K %u 2M %u 1G %u (page visits)\n",
           name, t.pages, leaves[1], leaves[2], leaves[3]);
}

/* A PC-like layout: low RAM, a hole, RAM to just below 2 GiB (unaligned end), RAM above
 * 4 GiB; the hypervisor in the middle (2 MiB aligned), the NIC's rings unaligned to pages. */
static const struct iommu_range ram[] = {
    {0x0, 0x9f000}, {0x100000, 0x7fee0000 - 0x100000}, {0x100000000ull, 0x80000000ull + 0x3000},
};
static const struct iommu_range excl[] = {
    {0x7000000, 0x400000},          /* the hypervisor's region */
    {0x7500800, 0x1000},            /* NIC rings: partial pages round out to two */
    {0x120000000ull, 0x1000},       /* a single page inside a 1 GiB-aligned stretch */
};
static const struct iommu_range rmrr[] = { {0x7c000000, 0x200000}, {0x200000, 0x1000}, {0xfed00000, 0x4000} };
static const struct iommu_range own[] = { {0x7600000, 0x20000}, {0x7640000, 0x800} };
static const struct iommu_bdf own_dev[] = { {1, 0, 0}, {3, 4, 5} };
static const struct dev devs[] = {
    {0, 2, 0, false}, {1, 0, 0, true}, {1, 0, 1, false}, {5, 31, 7, false}, {3, 4, 5, true}, {3, 4, 4, false},
};

static void test_layouts(void)
{
    struct iommu_layout l = { ram, 3, excl, 3, rmrr, 3, own_dev, 2, own, 2 };
    uint64_t top = 0x190000000ull;
    check_layout("4-level 2M+1G", &l, make_cap(0x6, 48, 0x3), top, devs, 6, 4);
    unsigned l1g = leaves[3], l2m = leaves[2];
    CHECK(l1g > 0 && l2m > 0, "large pages used: 2M %u 1G %u", l2m, l1g);
    check_layout("4-level 2M", &l, make_cap(0x4, 48, 0x1), top, devs, 6, 4);
    CHECK(leaves[2] > 0, "2M pages used");
    check_layout("3-level 4K only", &l, make_cap(0x2, 39, 0x0), top, devs, 6, 3);
    check_layout("5-level 2M+1G", &l, make_cap(0x8, 57, 0x3), top, devs, 6, 5);
    /* no own device: every function on bus 1 is a guest device */
    struct iommu_layout l2 = { ram, 3, excl, 3, rmrr, 3, NULL, 0, NULL, 0 };
    static const struct dev gdevs[] = { {1, 0, 0, false}, {0xff, 31, 7, false} };
    check_layout("no own device", &l2, make_cap(0x4, 48, 0x3), top, gdevs, 2, 4);
}

static void test_errors(void)
{
    struct iommu_tables t;
    struct iommu_layout l = { ram, 3, excl, 3, rmrr, 3, own_dev, 2, own, 2 };
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x0, 48, 3), &l) == IOMMU_E_CAP, "no SAGAW");
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x11, 48, 3), &l) == IOMMU_E_CAP, "only reserved SAGAW bits");
    static const struct iommu_range high[] = { {1ull << 39, 0x1000} };
    struct iommu_layout lh = { high, 1, NULL, 0, NULL, 0, NULL, 0, NULL, 0 };
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x2, 39, 0), &lh) == IOMMU_E_RANGE, "RAM at 2^39, 3-level");
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x4, 39, 0), &lh) == IOMMU_E_RANGE, "RAM at 2^39, MGAW 39");
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x4, 48, 0), &lh) == IOMMU_OK, "RAM at 2^39, 4-level");
    static const struct iommu_range wrap[] = { {0xfffffffffffff000ull, 0x2000} };
    struct iommu_layout lw = { ram, 1, wrap, 1, NULL, 0, NULL, 0, NULL, 0 };
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x4, 48, 3), &lw) == IOMMU_E_RANGE, "wrapping exclusion refused");
    static const struct iommu_range bad_rmrr[] = { {0x7300000, 0x200000} };
    struct iommu_layout lr = { ram, 3, excl, 3, bad_rmrr, 1, own_dev, 1, own, 2 };
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x4, 48, 3), &lr) == IOMMU_E_RMRR, "RMRR over the hypervisor");
    static const struct iommu_range own_rmrr[] = { {0x7640000, 0x1000} };
    lr.rmrr = own_rmrr;
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x4, 48, 3), &lr) == IOMMU_E_RMRR, "RMRR over an own range");
    static const struct iommu_bdf many[9] = {{0}};
    struct iommu_layout lm = { ram, 1, NULL, 0, NULL, 0, many, 9, NULL, 0 };
    pool_reset(POOL_PAGES);
    CHECK(iommu_tables_build(&t, &ops, make_cap(0x4, 48, 3), &lm) == IOMMU_E_OWN, "9 own devices");
    /* running out of pages at every point of the build fails cleanly */
    unsigned nomem = 0;
    for (unsigned cap = 0; cap < 40; cap++) {
        pool_reset(cap);
        int rc = iommu_tables_build(&t, &ops, make_cap(0x4, 48, 0x1), &l);
        if (rc == IOMMU_E_NOMEM) nomem++;
        else CHECK(rc == IOMMU_OK && pool_used <= cap, "pool %u: rc %d", cap, rc);
    }
    CHECK(nomem >= 3, "allocator exhaustion seen %u times", nomem);
}

int main(void)
{
    pool = aligned_alloc(4096, (size_t)POOL_PAGES * 4096);
    if (!pool) return 2;
    test_layouts();
    test_errors();
    free(pool);
    return check_summary("test_iommu_tables");
}
