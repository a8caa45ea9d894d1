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

int64_t ept_map_empty(struct ept *e, uint64_t gpa, uint64_t perms, unsigned memtype)
{
    int top = e->has_1g ? 2 : e->has_2m ? 1 : 0;
    uint64_t *t = e->pml4;
    for (int level = 3; level >= 0; level--) {
        uint64_t *ent = &t[INDEX(gpa, level)];
        if (*ent & EPT_RWX) {
            if (level == 0 || (*ent & EPT_LARGE))
                return 0;                    /* mapped already */
            t = table_of(e, *ent);           /* something below: a smaller page, then */
            continue;
        }
        if (level <= top) {                  /* an empty slot a page of this size may take */
            uint64_t base = gpa & ~((1ull << LEVEL_SHIFT(level)) - 1);
            *ent = leaf(base, perms, memtype, level > 0);
            return (int64_t)1 << LEVEL_SHIFT(level);
        }
        uint64_t *n = new_table(e);
        if (!n)
            return -1;
        *ent = e->ops->virt_to_phys(n) | EPT_RWX;
        t = n;
    }
    return -1;
}

static bool walk(const struct ept *e, const uint64_t *t, uint64_t gpa, uint64_t *hpa,
                 uint64_t *perms, unsigned *memtype)
{
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

bool ept_translate(const struct ept *e, uint64_t gpa, uint64_t *hpa, uint64_t *perms,
                   unsigned *memtype)
{
    return walk(e, e->pml4, gpa, hpa, perms, memtype);
}

/* --- views --------------------------------------------------------------------------------
 * A view is a root of its own over the base's tables. Its entries are the base's (shared
 * subtrees) except on the paths to the pages the view maps itself: there its tables are its
 * own copies (EPT_VIEW_MARK on the entry that points to them) and the leaf it set carries the
 * mark too. The mark is bit 11, which the CPU ignores in every EPT entry (SDM 29.3.2, tables
 * 29-1 to 29-6). */
#define EPT_VIEW_MARK (1ull << 11)
#define LEVEL_MASK(l) ((1ull << LEVEL_SHIFT(l)) - 1)

/* The entry the base has, or would have if split down to 'level', for the range of that level
 * holding gpa: a table pointer, a leaf, or 0. */
static uint64_t base_entry_at(const struct ept *e, uint64_t gpa, int level)
{
    const uint64_t *t = e->pml4;
    for (int l = 3;; l--) {
        uint64_t ent = t[INDEX(gpa, l)];
        if (l == level || !(ent & EPT_RWX))
            return l == level ? ent : 0;
        if (ent & EPT_LARGE) {               /* a large leaf above 'level': derive the part */
            uint64_t hpa = (ent & EPT_ADDR_MASK & ~LEVEL_MASK(l)) | (gpa & LEVEL_MASK(l) & ~LEVEL_MASK(level));
            return hpa | (ent & (EPT_RWX | EPT_MEMTYPE_MASK | EPT_IGNORE_PAT)) | (level > 0 ? EPT_LARGE : 0);
        }
        t = table_of(e, ent);
    }
}

int ept_view_init(struct ept_view *v, struct ept *base)
{
    v->base = base;
    v->pml4 = base->ops->alloc_page();
    if (!v->pml4)
        return -1;
    v->tables = 1;
    v->own = 0;
    for (int i = 0; i < ENTRIES; i++)
        v->pml4[i] = base->pml4[i];
    return 0;
}

uint64_t ept_view_eptp(const struct ept_view *v)
{
    return v->base->ops->virt_to_phys(v->pml4) | EPTP_WALK_4 | EPTP_MEMTYPE_WB;
}

/* The view's own table below entry (level 'level' > 0, for gpa): copied from the base's
 * (split from its large leaf) the first time. */
static uint64_t *own_table(struct ept_view *v, uint64_t *entry, int level, uint64_t gpa)
{
    const struct ept *e = v->base;
    if (*entry & EPT_VIEW_MARK)
        return table_of(e, *entry);
    uint64_t *t = e->ops->alloc_page();
    if (!t)
        return 0;
    v->tables++;
    uint64_t first = gpa & ~LEVEL_MASK(level);
    for (int i = 0; i < ENTRIES; i++)
        t[i] = base_entry_at(e, first + ((uint64_t)i << LEVEL_SHIFT(level - 1)), level - 1);
    /* Linked once filled: another CPU may be walking this view. */
    __atomic_store_n(entry, e->ops->virt_to_phys(t) | EPT_RWX | EPT_VIEW_MARK, __ATOMIC_RELEASE);
    return t;
}

int ept_view_map_4k(struct ept_view *v, uint64_t gpa, uint64_t hpa, uint64_t perms, unsigned memtype)
{
    uint64_t *t = v->pml4;
    for (int level = 3; level > 0; level--) {
        t = own_table(v, &t[INDEX(gpa, level)], level, gpa);
        if (!t)
            return -1;
    }
    if (!(t[INDEX(gpa, 0)] & EPT_VIEW_MARK))
        v->own++;
    t[INDEX(gpa, 0)] = leaf(hpa, perms & EPT_RWX, memtype, false) | EPT_VIEW_MARK;
    return 0;
}

/* Walk the view's own tables towards gpa: the table at the lowest level reached and that
 * level (its entry for gpa is not one of the view's tables). */
static uint64_t *own_path(const struct ept_view *v, uint64_t gpa, int *level)
{
    uint64_t *t = v->pml4;
    int l = 3;
    while (l > 0 && (t[INDEX(gpa, l)] & EPT_VIEW_MARK)) {
        t = table_of(v->base, t[INDEX(gpa, l)]);
        l--;
    }
    *level = l;
    return t;
}

void ept_view_unmap_4k(struct ept_view *v, uint64_t gpa)
{
    int l;
    uint64_t *t = own_path(v, gpa, &l);
    if (l == 0 && (t[INDEX(gpa, 0)] & EPT_VIEW_MARK))
        v->own--;
    if (l == 0)
        t[INDEX(gpa, 0)] = base_entry_at(v->base, gpa, 0);
}

void ept_view_sync(struct ept_view *v, uint64_t gpa)
{
    int l;
    uint64_t *t = own_path(v, gpa, &l);
    if (l == 0 && (t[INDEX(gpa, 0)] & EPT_VIEW_MARK))
        return;                               /* the view's own page stays */
    t[INDEX(gpa, l)] = base_entry_at(v->base, gpa, l);
}

bool ept_view_translate(const struct ept_view *v, uint64_t gpa, uint64_t *hpa, uint64_t *perms,
                        unsigned *memtype)
{
    return walk(v->base, v->pml4, gpa, hpa, perms, memtype);
}

bool ept_perms_ok(uint64_t perms, uint64_t ept_cap)
{
    uint64_t p = perms & (EPT_READ | EPT_WRITE | EPT_EXEC);
    if ((p & EPT_WRITE) && !(p & EPT_READ))
        return false;
    if (p == EPT_EXEC && !(ept_cap & EPT_CAP_EXEC_ONLY))
        return false;
    return true;
}
