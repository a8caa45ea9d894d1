/* ept.c - EPT builder (Intel SDM 29.3.2: EPT translation, tables 29-1..29-6). */
#include "ept.h"

#define ENTRIES 512
#define LEVEL_SHIFT(l) (12 + 9 * (l))          /* level 0 = PT, 1 = PD, 2 = PDPT, 3 = PML4 */
#define INDEX(gpa, l) (((gpa) >> LEVEL_SHIFT(l)) & (ENTRIES - 1))

static uint64_t *table_of(const struct ept *e, uint64_t entry)
{
    return e->ops->phys_to_virt(entry & EPT_ADDR_MASK);
}

static uint64_t *new_table(struct ept *e)
{
    uint64_t *t = e->ops->alloc_page();
    if (t)
        e->tables++;
    return t;
}

int ept_init(struct ept *e, const struct ept_ops *ops, bool has_2m, bool has_1g)
{
    e->ops = ops;
    e->has_2m = has_2m;
    e->has_1g = has_1g;
    e->tables = 0;
    e->pml4 = new_table(e);
    return e->pml4 ? 0 : -1;
}

uint64_t ept_eptp(const struct ept *e)
{
    return e->ops->virt_to_phys(e->pml4) | EPTP_WALK_4 | EPTP_MEMTYPE_WB;
}

static uint64_t leaf(uint64_t hpa, uint64_t perms, unsigned memtype, bool large)
{
    return (hpa & EPT_ADDR_MASK) | perms | ((uint64_t)memtype << EPT_MEMTYPE_SHIFT) |
           (large ? EPT_LARGE : 0);
}

/* Replace a large leaf at 'level' (1 or 2) by a table of the next level holding the same map. */
static uint64_t *split(struct ept *e, uint64_t *entry, int level)
{
    uint64_t *t = new_table(e);
    if (!t)
        return 0;
    uint64_t old = *entry, step = 1ull << LEVEL_SHIFT(level - 1);
    uint64_t base = old & EPT_ADDR_MASK & ~((1ull << LEVEL_SHIFT(level)) - 1);
    uint64_t attrs = old & (EPT_RWX | EPT_MEMTYPE_MASK | EPT_IGNORE_PAT);
    for (int i = 0; i < ENTRIES; i++)
        t[i] = (base + i * step) | attrs | (level - 1 > 0 ? EPT_LARGE : 0);
    *entry = e->ops->virt_to_phys(t) | EPT_RWX;
    return t;
}

/* The table at 'level' - 1 below entry, created or split as needed. */
static uint64_t *descend(struct ept *e, uint64_t *entry, int level)
{
    if (!(*entry & EPT_RWX)) {
        uint64_t *t = new_table(e);
        if (!t)
            return 0;
        *entry = e->ops->virt_to_phys(t) | EPT_RWX;
        return t;
    }
    if (*entry & EPT_LARGE)
        return split(e, entry, level);
    return table_of(e, *entry);
}

/* Map one page of size 4K << (9*level) at gpa (aligned) identity with the given memtype. */
static int map_one(struct ept *e, uint64_t gpa, uint64_t hpa, int target_level, uint64_t perms,
                   unsigned memtype)
{
    uint64_t *t = e->pml4;
    for (int level = 3; level > target_level; level--) {
        t = descend(e, &t[INDEX(gpa, level)], level);
        if (!t)
            return -1;
    }
    t[INDEX(gpa, target_level)] = leaf(hpa, perms, memtype, target_level > 0);
    return 0;
}

int ept_map_identity(struct ept *e, uint64_t base, uint64_t size)
{
    uint64_t a = base, end = base + size;
    while (a < end) {
        int level = 0;
        uint64_t len = EPT_PAGE_4K;
        int type = -1;
        if (e->has_1g && !(a & (EPT_PAGE_1G - 1)) && end - a >= EPT_PAGE_1G &&
            (type = e->ops->memtype(a, EPT_PAGE_1G)) >= 0) {
            level = 2;
            len = EPT_PAGE_1G;
        } else if (e->has_2m && !(a & (EPT_PAGE_2M - 1)) && end - a >= EPT_PAGE_2M &&
                   (type = e->ops->memtype(a, EPT_PAGE_2M)) >= 0) {
            level = 1;
            len = EPT_PAGE_2M;
        } else {
            type = e->ops->memtype(a, EPT_PAGE_4K);
            if (type < 0)
                return -1;
        }
        if (map_one(e, a, a, level, EPT_RWX, (unsigned)type))
            return -1;
        a += len;
    }
    return 0;
}

int ept_map_4k(struct ept *e, uint64_t gpa, uint64_t hpa, uint64_t perms, unsigned memtype)
{
    return map_one(e, gpa & ~(EPT_PAGE_4K - 1), hpa, 0, perms, memtype);
}

bool ept_translate(const struct ept *e, uint64_t gpa, uint64_t *hpa, uint64_t *perms,
                   unsigned *memtype)
{
    const uint64_t *t = e->pml4;
    for (int level = 3; level >= 0; level--) {
        uint64_t ent = t[INDEX(gpa, level)];
        if (!(ent & EPT_RWX))
            return false;
        if (level == 0 || (ent & EPT_LARGE)) {
            uint64_t off_mask = (1ull << LEVEL_SHIFT(level)) - 1;
            *hpa = (ent & EPT_ADDR_MASK & ~off_mask) | (gpa & off_mask);
            *perms = ent & EPT_RWX;
            *memtype = (ent & EPT_MEMTYPE_MASK) >> EPT_MEMTYPE_SHIFT;
            return true;
        }
        t = table_of(e, ent);
    }
    return false;
}
