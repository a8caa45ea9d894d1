/*
 * iommu_tables.c - VT-d legacy-mode root/context tables and identity second-level page
 * tables (contract in iommu_tables.h; VT-d spec rev 3.3 sections cited there).
 *
 * A second-level entry is present when R or W is set (9.8: there is no present bit); access
 * rights are the AND of every level's, so non-leaf entries carry R and W and the leaves
 * decide. Table entries and leaves are never removed: mapping an address that is already
 * mapped (RAM overlapping an RMRR) finds the identity leaf and moves on.
 */
#include <stddef.h>
#include "iommu_tables.h"

#define ENTRIES        512u
#define TABLE_QWORDS   512u            /* root and context tables: 256 x 128-bit entries */
#define MAX_OWN_DEVS   8u
#define SL_RW          (IOMMU_SL_R | IOMMU_SL_W)

enum install_rc { INSTALLED, COVERED, BLOCKED, NOMEM };

const char *iommu_strerror(int err)
{
    switch (err) {
    case IOMMU_OK:      return "ok";
    case IOMMU_E_NOMEM: return "IOMMU: out of pages for the tables";
    case IOMMU_E_CAP:   return "IOMMU: no supported second-level paging depth (SAGAW)";
    case IOMMU_E_RANGE: return "IOMMU: range overflows or lies past the address width";
    case IOMMU_E_RMRR:  return "IOMMU: an RMRR overlaps memory that must stay unmapped";
    case IOMMU_E_OWN:   return "IOMMU: too many hypervisor-owned devices";
    default:            return "IOMMU: unknown error";
    }
}

static unsigned level_shift(unsigned lvl) { return 12u + 9u * (lvl - 1u); }
static uint64_t level_size(unsigned lvl) { return 1ull << level_shift(lvl); }

static uint64_t *new_table(struct iommu_tables *t)
{
    uint64_t *p = t->ops->alloc_page();
    if (p)
        t->pages++;
    return p;
}

/* Pick the paging depth from SAGAW (10.4.2 bits 12:8: bit 1 = 39-bit 3-level, bit 2 =
 * 48-bit 4-level, bit 3 = 57-bit 5-level); 4-level first, as every current part has it. */
static int choose_depth(struct iommu_tables *t, uint64_t cap)
{
    static const struct { unsigned bit, levels, code; } pref[3] = { {2, 4, 2}, {1, 3, 1}, {3, 5, 3} };
    uint64_t sagaw = IOMMU_CAP_SAGAW(cap);
    for (unsigned i = 0; i < 3; i++) {
        if (!(sagaw & (1ull << pref[i].bit)))
            continue;
        t->levels = pref[i].levels;
        t->agaw_code = pref[i].code;
        unsigned bits = 12u + 9u * t->levels, mgaw = IOMMU_CAP_MGAW(cap);
        if (mgaw < bits)
            bits = mgaw;
        t->limit = 1ull << bits;
        t->has_2m = IOMMU_CAP_SLLPS(cap) & 1;
        t->has_1g = (IOMMU_CAP_SLLPS(cap) & 2) && t->levels >= 3;
        return IOMMU_OK;
    }
    return IOMMU_E_CAP;
}

/* [lo, hi) rounded out to 4 KiB; false when it overflows or passes limit. */
static bool page_bounds(const struct iommu_range *r, uint64_t limit, uint64_t *lo, uint64_t *hi)
{
    if (r->size == 0) {
        *lo = *hi = 0;
        return true;
    }
    uint64_t end = r->base + r->size;
    if (end < r->base || end > UINT64_MAX - (IOMMU_PAGE_4K - 1))
        return false;
    *lo = r->base & ~(IOMMU_PAGE_4K - 1);
    *hi = (end + IOMMU_PAGE_4K - 1) & ~(IOMMU_PAGE_4K - 1);
    return *hi <= limit;
}

static enum install_rc install(struct iommu_tables *t, uint64_t *top, uint64_t a, unsigned k,
                               uint64_t *covered)
{
    uint64_t *tbl = top;
    for (unsigned lvl = t->levels;; lvl--) {
        unsigned idx = (unsigned)(a >> level_shift(lvl)) & (ENTRIES - 1);
        uint64_t e = tbl[idx];
        if (lvl == k) {
            if (!(e & SL_RW)) {
                tbl[idx] = a | SL_RW | (k > 1 ? IOMMU_SL_PS : 0);
                return INSTALLED;
            }
            if (k == 1 || (e & IOMMU_SL_PS)) {
                *covered = level_size(k);
                return COVERED;
            }
            return BLOCKED;             /* a smaller-page table is already below */
        }
        if (e & SL_RW) {
            if (e & IOMMU_SL_PS) {      /* inside a large identity leaf */
                *covered = level_size(lvl) - (a & (level_size(lvl) - 1));
                return COVERED;
            }
            tbl = t->ops->phys_to_virt(e & IOMMU_ADDR_MASK);
            continue;
        }
        uint64_t *n = new_table(t);
        if (!n)
            return NOMEM;
        tbl[idx] = t->ops->virt_to_phys(n) | SL_RW;
        tbl = n;
    }
}

static unsigned best_level(const struct iommu_tables *t, uint64_t a, uint64_t hi)
{
    if (t->has_1g && !(a & (IOMMU_PAGE_1G - 1)) && hi - a >= IOMMU_PAGE_1G)
        return 3;
    if (t->has_2m && !(a & (IOMMU_PAGE_2M - 1)) && hi - a >= IOMMU_PAGE_2M)
        return 2;
    return 1;
}

static int map_identity(struct iommu_tables *t, uint64_t *top, uint64_t lo, uint64_t hi)
{
    uint64_t a = lo;
    while (a < hi) {
        unsigned k = best_level(t, a, hi);
        uint64_t cov = 0;
        enum install_rc rc;
        while ((rc = install(t, top, a, k, &cov)) == BLOCKED)
            k--;                        /* BLOCKED only happens for k > 1 */
        if (rc == NOMEM)
            return IOMMU_E_NOMEM;
        a += rc == COVERED ? cov : level_size(k);
    }
    return IOMMU_OK;
}

/* The exclusions of the guest domain: the caller's, and the own ranges. */
struct excl { const struct iommu_range *a; unsigned na; const struct iommu_range *b; unsigned nb; };

static const struct iommu_range *excl_at(const struct excl *x, unsigned i)
{
    return i < x->na ? &x->a[i] : &x->b[i - x->na];
}

/* Map [lo, hi) minus the exclusions: walk it in pieces that start outside every exclusion
 * and end at the next exclusion's start. */
static int map_minus(struct iommu_tables *t, uint64_t *top, uint64_t lo, uint64_t hi,
                     const struct excl *x)
{
    uint64_t a = lo;
    while (a < hi) {
        uint64_t next = hi;
        bool inside = false;
        for (unsigned i = 0; i < x->na + x->nb; i++) {
            uint64_t el, eh;
            if (!page_bounds(excl_at(x, i), UINT64_MAX, &el, &eh) || el == eh)
                continue;
            if (a >= el && a < eh) {
                a = eh;
                inside = true;
                break;
            }
            if (el > a && el < next)
                next = el;
        }
        if (inside)
            continue;
        int rc = map_identity(t, top, a, next);
        if (rc)
            return rc;
        a = next;
    }
    return IOMMU_OK;
}

static bool overlaps_excl(uint64_t lo, uint64_t hi, const struct excl *x)
{
    for (unsigned i = 0; i < x->na + x->nb; i++) {
        uint64_t el, eh;
        if (!page_bounds(excl_at(x, i), UINT64_MAX, &el, &eh) || el == eh)
            continue;
        if (lo < eh && el < hi)
            return true;
    }
    return false;
}

static int map_list(struct iommu_tables *t, uint64_t *top, const struct iommu_range *r,
                    unsigned n, const struct excl *x, bool refuse_overlap)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t lo, hi;
        if (!page_bounds(&r[i], t->limit, &lo, &hi))
            return IOMMU_E_RANGE;
        if (refuse_overlap && overlaps_excl(lo, hi, x))
            return IOMMU_E_RMRR;
        int rc = x ? map_minus(t, top, lo, hi, x) : map_identity(t, top, lo, hi);
        if (rc)
            return rc;
    }
    return IOMMU_OK;
}

static void set_context(uint64_t *ctx, unsigned devfn, uint64_t sl_pa, unsigned aw, unsigned did)
{
    ctx[2 * devfn] = (sl_pa & IOMMU_ADDR_MASK) | 0ull << IOMMU_CTX_TT_SHIFT | IOMMU_PRESENT;
    ctx[2 * devfn + 1] = (aw & IOMMU_CTX_AW_MASK) | (uint64_t)did << IOMMU_CTX_DID_SHIFT;
}

static int build_contexts(struct iommu_tables *t, const struct iommu_layout *l)
{
    uint64_t guest_pa = t->ops->virt_to_phys(t->sl_guest), own_pa = t->ops->virt_to_phys(t->sl_own);
    if (!(t->ctx_shared = new_table(t)))
        return IOMMU_E_NOMEM;
    for (unsigned devfn = 0; devfn < 256; devfn++)
        set_context(t->ctx_shared, devfn, guest_pa, t->agaw_code, IOMMU_DID_GUEST);
    uint64_t shared_pa = t->ops->virt_to_phys(t->ctx_shared);
    for (unsigned bus = 0; bus < 256; bus++)
        t->root[2 * bus] = shared_pa | IOMMU_PRESENT;
    /* Buses with own devices: a copy of the shared table with those entries switched. */
    for (unsigned i = 0; i < l->nown_dev; i++) {
        const struct iommu_bdf *d = &l->own_dev[i];
        if (d->dev > 31 || d->fn > 7)
            return IOMMU_E_OWN;
        uint64_t *ctx;
        if ((t->root[2 * d->bus] & IOMMU_ADDR_MASK) == shared_pa) {
            if (!(ctx = new_table(t)))
                return IOMMU_E_NOMEM;
            for (unsigned q = 0; q < TABLE_QWORDS; q++)
                ctx[q] = t->ctx_shared[q];
            t->root[2 * d->bus] = t->ops->virt_to_phys(ctx) | IOMMU_PRESENT;
        } else {
            ctx = t->ops->phys_to_virt(t->root[2 * d->bus] & IOMMU_ADDR_MASK);
        }
        set_context(ctx, (unsigned)d->dev << 3 | d->fn, own_pa, t->agaw_code, IOMMU_DID_OWN);
    }
    return IOMMU_OK;
}

int iommu_tables_build(struct iommu_tables *t, const struct iommu_ops *ops, uint64_t cap,
                       const struct iommu_layout *l)
{
    *t = (struct iommu_tables){ .ops = ops };
    int rc = choose_depth(t, cap);
    if (rc)
        return rc;
    if (l->nown_dev > MAX_OWN_DEVS)
        return IOMMU_E_OWN;
    if (!(t->root = new_table(t)) || !(t->sl_guest = new_table(t)) || !(t->sl_own = new_table(t)))
        return IOMMU_E_NOMEM;
    struct excl x = { l->exclude, l->nexclude, l->own, l->nown };
    /* An exclusion that cannot be represented must fail the build, never be skipped. */
    for (unsigned i = 0; i < x.na + x.nb; i++) {
        uint64_t lo, hi;
        if (!page_bounds(excl_at(&x, i), UINT64_MAX, &lo, &hi))
            return IOMMU_E_RANGE;
    }
    /* RMRRs first, so an RMRR touching an exclusion fails before anything else is built. */
    if ((rc = map_list(t, t->sl_guest, l->rmrr, l->nrmrr, &x, true)) ||
        (rc = map_list(t, t->sl_guest, l->ram, l->nram, &x, false)) ||
        (rc = map_list(t, t->sl_own, l->own, l->nown, NULL, false)))
        return rc;
    return build_contexts(t, l);
}

uint64_t iommu_root_table_addr(const struct iommu_tables *t)
{
    /* 10.4.6: bits 63:12 root table address; TTM (bits 11:10) 00 = legacy mode. */
    return t->ops->virt_to_phys(t->root) & IOMMU_ADDR_MASK;
}
