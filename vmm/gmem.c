/* gmem.c - guest page walks and bounded copies (Intel SDM 4.3, 4.5). */
#include "gmem.h"
#include "cpu.h"
#include "hv_api.h"

#define PTE_P    (1ull << 0)
#define PTE_W    (1ull << 1)
#define PTE_U    (1ull << 2)
#define PTE_A    (1ull << 5)
#define PTE_D    (1ull << 6)
#define PTE_PS   (1ull << 7)
#define PTE_NX   (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull
#define PAGE     0x1000ull
#define CR4_PSE  (1ull << 4)

static const struct gmem_ops *ops;

void gmem_set_ops(const struct gmem_ops *o) { ops = o; }

static void *map(uint64_t gpa) { return ops->map_gpa(gpa & ~(PAGE - 1)); }
void *gmem_map_gpa(uint64_t gpa) { return map(gpa); }

static int read_entry64(uint64_t table, unsigned index, uint64_t *out)
{
    uint64_t *t = map(table);
    if (!t)
        return GMEM_ENOTRAM;
    *out = t[index];
    return GMEM_OK;
}

static int walk_long(const struct gmem_paging *p, uint64_t gva, struct gmem_xlat *x)
{
    int levels = (p->cr4 & CR4_LA57) ? 5 : 4;
    unsigned va_bits = 12 + 9 * levels;
    /* Canonical check (SDM 3.3.7.1): bits above va_bits-1 equal bit va_bits-1. */
    int64_t sx = (int64_t)(gva << (64 - va_bits)) >> (64 - va_bits);
    if ((uint64_t)sx != gva)
        return GMEM_ENONCANONICAL;
    uint64_t table = p->cr3 & PTE_ADDR;
    bool w = true, u = true, nx = false, a = true;
    for (int l = levels - 1; l >= 0; l--) {
        unsigned shift = 12 + 9 * l;
        uint64_t e;
        int r = read_entry64(table, (gva >> shift) & 511, &e);
        if (r)
            return r;
        if (!(e & PTE_P))
            return GMEM_ENOTPRESENT;
        w &= !!(e & PTE_W);
        u &= !!(e & PTE_U);
        nx |= (p->efer & EFER_NXE) && (e & PTE_NX);
        a &= !!(e & PTE_A);
        if (l == 0 || ((l == 1 || l == 2) && (e & PTE_PS))) {
            uint64_t off = (1ull << shift) - 1;
            x->gpa = (e & PTE_ADDR & ~off) | (gva & off);
            x->writable = w; x->user = u; x->nx = nx;
            x->ad_set = a && (e & PTE_D);
            x->page_shift = shift;
            return GMEM_OK;
        }
        table = e & PTE_ADDR;
    }
    return GMEM_ENOTPRESENT;
}

static int walk_32(const struct gmem_paging *p, uint64_t gva, struct gmem_xlat *x)
{
    uint32_t va = (uint32_t)gva;
    uint32_t *pd = map(p->cr3 & 0xfffff000u);
    if (!pd)
        return GMEM_ENOTRAM;
    uint32_t pde = pd[va >> 22];
    if (!(pde & PTE_P))
        return GMEM_ENOTPRESENT;
    if ((pde & PTE_PS) && (p->cr4 & CR4_PSE)) {
        /* 4 MiB page; bits 20:13 of the PDE are physical-address bits 39:32 (SDM table 4-4) */
        uint64_t hi = ((uint64_t)(pde >> 13) & 0xff) << 32;
        x->gpa = hi | (pde & 0xffc00000u) | (va & 0x3fffff);
        x->writable = pde & PTE_W; x->user = pde & PTE_U; x->nx = false;
        x->ad_set = false;                 /* not needed outside long mode: not computed */
        x->page_shift = 22;
        return GMEM_OK;
    }
    uint32_t *pt = map(pde & 0xfffff000u);
    if (!pt)
        return GMEM_ENOTRAM;
    uint32_t pte = pt[(va >> 12) & 1023];
    if (!(pte & PTE_P))
        return GMEM_ENOTPRESENT;
    x->gpa = (pte & 0xfffff000u) | (va & 0xfff);
    x->writable = (pde & pte) & PTE_W; x->user = (pde & pte) & PTE_U; x->nx = false;
    x->ad_set = false;
    x->page_shift = 12;
    return GMEM_OK;
}

int gmem_walk(const struct gmem_paging *p, uint64_t gva, struct gmem_xlat *x)
{
    if (!(p->cr0 & CR0_PG)) {
        x->gpa = gva; x->writable = x->user = true; x->nx = false; x->page_shift = 12;
        x->ad_set = true;                  /* no paging: no bits to set */
        return GMEM_OK;
    }
    if (p->efer & EFER_LMA)
        return walk_long(p, gva, x);
    if (p->cr4 & CR4_PAE)
        return GMEM_EUNSUPPORTED;
    return walk_32(p, gva, x);
}

static size_t copy_gpa(uint64_t gpa, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        uint64_t a = gpa + done;
        size_t chunk = PAGE - (a & (PAGE - 1));
        if (chunk > len - done)
            chunk = len - done;
        uint8_t *page = map(a);
        if (!page)
            break;
        uint8_t *h = page + (a & (PAGE - 1));
        memcpy((uint8_t *)buf + done, h, chunk);
        done += chunk;
    }
    return done;
}

size_t gmem_read_gpa(uint64_t gpa, void *buf, size_t len) { return copy_gpa(gpa, buf, len); }

size_t gmem_read_gva(const struct gmem_paging *p, uint64_t gva, void *buf, size_t len)
{
    size_t done = 0;
    while (done < len) {
        uint64_t a = gva + done;
        struct gmem_xlat x;
        if (gmem_walk(p, a, &x))
            break;
        size_t chunk = PAGE - (a & (PAGE - 1));
        if (chunk > len - done)
            chunk = len - done;
        size_t got = gmem_read_gpa(x.gpa, (uint8_t *)buf + done, chunk);
        done += got;
        if (got < chunk)
            break;
    }
    return done;
}
