/* test_ept_view.c - EPT views (vmm/ept.c ept_view_*) on the host: heap pages stand in for
 * physical memory. A view must translate exactly like the base everywhere but on the pages it
 * maps itself, follow base edits (shared tables at once, its own copies after a sync), keep
 * its own pages through a sync, and give a page back on unmap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ept.h"
#include "check.h"


static void *alloc_page(void) { void *p = aligned_alloc(4096, 4096); memset(p, 0, 4096); return p; }
static uint64_t v2p(const void *v) { return (uint64_t)v; }
static void *p2v(uint64_t p) { return (void *)p; }
/* WB everywhere but an uncached hole at [3 GiB, 3 GiB + 16 MiB) and a mixed first 2 MiB. */
static int memtype(uint64_t b, uint64_t s)
{
    const uint64_t hole = 3ull << 30, hole_end = hole + (16u << 20);
    if (b < (2u << 20) && s > 4096)
        return -1;
    if (b < hole_end && b + s > hole)
        return (b >= hole && b + s <= hole_end) ? 0 : -1;
    return 6;
}
static const struct ept_ops ops = { alloc_page, v2p, p2v, memtype };

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; return rng; }

struct xl { bool ok; uint64_t hpa, perms; unsigned mt; };
static struct xl base_xl(const struct ept *e, uint64_t gpa)
{
    struct xl x; x.ok = ept_translate(e, gpa, &x.hpa, &x.perms, &x.mt); return x;
}
static struct xl view_xl(const struct ept_view *v, uint64_t gpa)
{
    struct xl x; x.ok = ept_view_translate(v, gpa, &x.hpa, &x.perms, &x.mt); return x;
}
static bool same(struct xl a, struct xl b)
{
    return a.ok == b.ok && (!a.ok || (a.hpa == b.hpa && a.perms == b.perms && a.mt == b.mt));
}

/* Every sampled address translates alike in the view and the base, but for 'skip' pages. */
static void sweep(const struct ept *e, const struct ept_view *v, const uint64_t *skip, int nskip,
                  const char *what)
{
    int bad = 0;
    for (int i = 0; i < 20000; i++) {
        uint64_t gpa = rnd() % (4ull << 30);
        if (i < 64 && nskip)
            gpa = skip[i % nskip] + ((i & 1) ? 4096 : -4096) + (rnd() & 0xfff);   /* neighbours */
        bool skipped = false;
        for (int k = 0; k < nskip; k++)
            skipped |= (gpa >> 12) == (skip[k] >> 12);
        if (!skipped && !same(base_xl(e, gpa), view_xl(v, gpa)))
            bad++;
    }
    CHECK(bad == 0, "%s: %d addresses translate differently", what, bad);
}

int main(void)
{
    struct ept e;
    CHECK(ept_init(&e, &ops, true, true) == 0, "init");
    CHECK(ept_map_identity(&e, 0, 4ull << 30) == 0, "identity 4 GiB");
    unsigned base_tables = e.tables;
    struct ept_view v0, v1;
    CHECK(ept_view_init(&v0, &e) == 0 && ept_view_init(&v1, &e) == 0, "two views");
    CHECK(ept_view_eptp(&v0) != ept_eptp(&e) && ept_view_eptp(&v0) != ept_view_eptp(&v1), "own EPTPs");
    sweep(&e, &v0, 0, 0, "fresh view");

    /* A shadow page for a probed kernel page inside a 1 GiB page, execute-only. */
    uint64_t x = 0x41234000ull, *shadow = alloc_page();
    CHECK(ept_view_map_4k(&v0, x, v2p(shadow), EPT_EXEC, 6) == 0, "view map");
    struct xl t = view_xl(&v0, x + 0x10);
    CHECK(t.ok && t.hpa == v2p(shadow) + 0x10 && t.perms == EPT_EXEC && t.mt == 6, "view page");
    CHECK(same(base_xl(&e, x), (struct xl){ true, x, EPT_RWX, 6 }), "base untouched");
    CHECK(same(view_xl(&v1, x), base_xl(&e, x)), "other view untouched");
    CHECK(e.tables == base_tables, "base not split by a view edit (%u -> %u)", base_tables, e.tables);
    CHECK(v0.tables <= 4, "view copies one path only (%u pages)", v0.tables);
    sweep(&e, &v0, &x, 1, "view with one page");
    sweep(&e, &v1, 0, 0, "untouched view");

    /* A second page in the same 2 MiB, one in the uncached hole, one across the first 2 MiB. */
    uint64_t pages[4] = { x, x + 0x5000, (3ull << 30) + 0x3000, 0x1000 };
    for (int i = 1; i < 4; i++)
        CHECK(ept_view_map_4k(&v0, pages[i], v2p(alloc_page()), EPT_READ | EPT_WRITE, 0) == 0, "map %d", i);
    CHECK(view_xl(&v0, pages[2]).perms == (EPT_READ | EPT_WRITE), "hole page");
    CHECK(v0.own == 4 && v1.own == 0, "own pages counted (%u)", v0.own);
    CHECK(ept_view_map_4k(&v0, x, v2p(shadow), EPT_EXEC, 6) == 0 && v0.own == 4, "a remap is not a new page");
    sweep(&e, &v0, pages, 4, "view with four pages");

    /* A base edit: seen at once by a view that shares the base's tables there (v1), by one
     * with its own copy of the path (v0: the PDPT of the low 512 GiB) after a sync. */
    uint64_t y = 0x80000000ull + 0x7000;
    CHECK(ept_map_4k(&e, y, y, EPT_READ, 6) == 0, "base edit");
    CHECK(same(view_xl(&v1, y), base_xl(&e, y)) && view_xl(&v1, y).perms == EPT_READ, "shared: at once");
    CHECK(view_xl(&v0, y).perms == EPT_RWX, "own path: not before a sync");
    ept_view_sync(&v0, y);
    CHECK(same(view_xl(&v0, y), base_xl(&e, y)), "own path: after a sync");
    /* ...and after a sync where the view has its own copy of the path. */
    uint64_t z = x + 0x9000;
    CHECK(ept_map_4k(&e, z, z, EPT_READ | EPT_WRITE, 6) == 0, "base edit (own path)");
    CHECK(view_xl(&v0, z).perms == EPT_RWX, "own copy: not yet");
    ept_view_sync(&v0, z);
    CHECK(same(view_xl(&v0, z), base_xl(&e, z)), "own copy: after sync");
    ept_view_sync(&v0, x);
    CHECK(view_xl(&v0, x).hpa == v2p(shadow), "sync keeps the view's own page");
    CHECK(same(view_xl(&v1, z), base_xl(&e, z)), "the other view follows (shared)");
    sweep(&e, &v0, pages, 4, "after base edits and syncs");

    /* Unmap: the base's page again; the rest as it was. */
    ept_view_unmap_4k(&v0, x);
    CHECK(same(view_xl(&v0, x), base_xl(&e, x)), "unmapped page is the base's");
    ept_view_unmap_4k(&v0, 0x90000000ull);                /* never mapped: harmless */
    sweep(&e, &v0, pages + 1, 3, "after unmap");
    for (int i = 1; i < 4; i++)
        ept_view_unmap_4k(&v0, pages[i]);
    sweep(&e, &v0, 0, 0, "all unmapped");
    CHECK(v0.own == 0, "no own page left (%u)", v0.own);
    CHECK(ept_view_map_4k(&v0, x, v2p(shadow), EPT_EXEC, 6) == 0 && view_xl(&v0, x).hpa == v2p(shadow),
          "map again reuses the view's tables");

    /* Leaf permissions the CPU can hold (SDM Vol. 3C 29.3.3.1 "EPT Misconfigurations"): write
     * without read never; execute-only only where IA32_VMX_EPT_VPID_CAP bit 0 says so */
    CHECK(ept_perms_ok(EPT_READ | EPT_WRITE | EPT_EXEC, 0) && ept_perms_ok(EPT_READ, 0) &&
          ept_perms_ok(0, 0), "RWX, R, none: always");
    CHECK(!ept_perms_ok(EPT_WRITE, EPT_CAP_EXEC_ONLY) && !ept_perms_ok(EPT_WRITE | EPT_EXEC, EPT_CAP_EXEC_ONLY),
          "write without read: never");
    CHECK(ept_perms_ok(EPT_EXEC, EPT_CAP_EXEC_ONLY) && !ept_perms_ok(EPT_EXEC, 0),
          "execute-only: only with the capability");

    /* High MMIO on first touch (ept_map_empty): the largest page nothing maps yet, never over
     * a mapping made before (a hidden device page), and views see it. */
    uint64_t hpa2, p2; unsigned mt2;
    uint64_t hi = 0x3000000000ull;             /* 192 GiB, above the identity map */
    CHECK(ept_map_4k(&e, hi + 0x40005000, 0x7000, EPT_READ, 6) == 0, "a hidden page at 193 GiB + 20 KiB");
    CHECK(ept_map_empty(&e, hi + 0x123000, EPT_RWX, 0) == (int64_t)EPT_PAGE_1G, "an empty 1 GiB: one 1 GiB page");
    CHECK(ept_translate(&e, hi + 0x3fffffff, &hpa2, &p2, &mt2) && hpa2 == hi + 0x3fffffff && mt2 == 0,
          "its last byte maps itself, uncached");
    CHECK(ept_map_empty(&e, hi + 0x123000, EPT_RWX, 0) == 0, "touching it again: mapped already");
    CHECK(ept_map_empty(&e, hi + 0x40100000, EPT_RWX, 0) == 0x1000,
          "next to the hidden page (same 2 MiB): a 4 KiB page");
    CHECK(ept_translate(&e, hi + 0x40005000, &hpa2, &p2, &mt2) && hpa2 == 0x7000 && p2 == EPT_READ,
          "the hidden page unchanged");
    CHECK(ept_map_empty(&e, hi + 0x40300000, EPT_RWX, 0) == (int64_t)EPT_PAGE_2M,
          "the next 2 MiB of that GiB: one 2 MiB page");
    ept_view_sync(&v0, hi + 0x40300000);
    CHECK(ept_view_translate(&v0, hi + 0x40300000, &hpa2, &p2, &mt2) && hpa2 == hi + 0x40300000, "a view sees it");
    struct ept small;
    CHECK(ept_init(&small, &ops, true, false) == 0 && ept_map_empty(&small, hi, EPT_RWX, 0) == (int64_t)EPT_PAGE_2M,
          "without 1 GiB pages: 2 MiB");
    return check_summary("ept_view");
}
