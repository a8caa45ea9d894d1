/* dmap.c - see dmap.h. */
#include "dmap.h"

#define MTRR_MIXED_TYPE (-1)
#define IDX(va, shift) (((va) >> (shift)) & 511)

struct walk {
    uint64_t *pml4;
    const struct dmap_ops *ops;
    struct dmap_stats *st;
    bool uc;                  /* the uncached alias: leave RAM out, split where partly RAM */
    uint64_t attr, va_base;
};

/* The table an entry points to, made if absent. */
static uint64_t *table_at(struct walk *w, uint64_t *entry)
{
    if (!*entry) {
        uint64_t *t = w->ops->alloc_table(w->ops->ctx);
        if (!t)
            return 0;
        w->st->tables++;
        *entry = (uint64_t)(uintptr_t)t | DMAP_PTE_P | DMAP_PTE_W;
    }
    return (uint64_t *)(uintptr_t)(*entry & ~0xfffull);
}

/* May [pa, pa + size) be one leaf? Not if the MTRRs give it several types; in the alias, not
 * if part of it is RAM. *skip: it is all RAM (the alias maps none of it). */
static bool one_leaf(struct walk *w, uint64_t pa, uint64_t size, bool *skip)
{
    *skip = false;
    if (w->uc) {
        enum dmap_ram r = w->ops->ram(w->ops->ctx, pa, size);
        if (r == DMAP_RAM_ALL) {
            *skip = true;
            return true;
        }
        if (r == DMAP_RAM_SOME)
            return false;
        return true;          /* no RAM: uncached whatever the MTRRs say (UC wins over all) */
    }
    return w->ops->memtype(w->ops->ctx, pa, size) != MTRR_MIXED_TYPE;
}

static int map_2m(struct walk *w, uint64_t *pd, uint64_t pa)
{
    bool skip;
    uint64_t *e = &pd[IDX(w->va_base + pa, 21)];
    if (one_leaf(w, pa, DMAP_PAGE_2M, &skip)) {
        if (!skip) {
            *e = pa | DMAP_PTE_P | DMAP_PTE_W | DMAP_PTE_PS | w->attr;
            w->st->pages_2m++;
        }
        return 0;
    }
    uint64_t *pt = table_at(w, e);
    if (!pt)
        return -1;
    for (uint64_t off = 0; off < DMAP_PAGE_2M; off += DMAP_PAGE_4K) {
        if (w->uc && w->ops->ram(w->ops->ctx, pa + off, DMAP_PAGE_4K) != DMAP_RAM_NONE)
            continue;
        pt[off / DMAP_PAGE_4K] = (pa + off) | DMAP_PTE_P | DMAP_PTE_W | w->attr;
        w->st->pages_4k++;
    }
    return 0;
}

static int map_1g(struct walk *w, uint64_t pa, bool big)
{
    uint64_t va = w->va_base + pa;
    uint64_t *pdpt = table_at(w, &w->pml4[IDX(va, 39)]);
    if (!pdpt)
        return -1;
    bool skip;
    uint64_t *e = &pdpt[IDX(va, 30)];
    if (big && one_leaf(w, pa, DMAP_PAGE_1G, &skip)) {
        if (!skip) {
            *e = pa | DMAP_PTE_P | DMAP_PTE_W | DMAP_PTE_PS | w->attr;
            w->st->pages_1g++;
        }
        return 0;
    }
    if (w->uc && w->ops->ram(w->ops->ctx, pa, DMAP_PAGE_1G) == DMAP_RAM_ALL)
        return 0;
    uint64_t *pd = table_at(w, e);
    if (!pd)
        return -1;
    for (uint64_t off = 0; off < DMAP_PAGE_1G; off += DMAP_PAGE_2M)
        if (map_2m(w, pd, pa + off))
            return -1;
    return 0;
}

int dmap_build(uint64_t *pml4, uint64_t limit, uint64_t uc_base, uint64_t uc_limit, bool big,
               const struct dmap_ops *ops, struct dmap_stats *st)
{
    *st = (struct dmap_stats){ 0 };
    struct walk w = { pml4, ops, st, false, 0, 0 };
    for (uint64_t pa = 0; pa < limit; pa += DMAP_PAGE_1G)
        if (map_1g(&w, pa, big))
            return -1;
    if (uc_limit > DMAP_UC_MAX)
        uc_limit = DMAP_UC_MAX;
    w.uc = true;
    w.attr = DMAP_PTE_PCD | DMAP_PTE_PWT;
    w.va_base = uc_base;
    for (uint64_t pa = 0; pa < uc_limit; pa += DMAP_PAGE_1G)
        if (map_1g(&w, pa, big))
            return -1;
    return 0;
}
