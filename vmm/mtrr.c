/* mtrr.c - MTRR snapshot and type lookup (Intel SDM 12.11.4 fixed, 12.11.2.3 variable,
 * 12.11.4.1 precedence of overlapping variable ranges). */
#include "mtrr.h"
#include "cpu.h"

#define MTRRCAP_VCNT_MASK   0xffu
#define MTRRCAP_FIX         (1u << 8)
#define DEF_TYPE_E          (1u << 11)
#define DEF_TYPE_FE         (1u << 10)
#define DEF_TYPE_TYPE_MASK  0xffu
#define PHYSMASK_VALID      (1ull << 11)
#define PAGE_4K             0x1000ull
#define FIXED_LIMIT         0x100000ull

void mtrr_read(struct mtrr_state *m, mtrr_rdmsr_fn rdmsr, unsigned phys_bits)
{
    uint64_t cap = rdmsr(MSR_IA32_MTRRCAP), def = rdmsr(MSR_IA32_MTRR_DEF_TYPE);
    m->addr_mask = ((1ull << phys_bits) - 1) & ~(PAGE_4K - 1);
    m->enabled = def & DEF_TYPE_E;
    m->fixed_enabled = m->enabled && (cap & MTRRCAP_FIX) && (def & DEF_TYPE_FE);
    m->def_type = def & DEF_TYPE_TYPE_MASK;
    m->nvar = cap & MTRRCAP_VCNT_MASK;
    if (m->nvar > MTRR_MAX_VAR)
        m->nvar = MTRR_MAX_VAR;
    if (m->fixed_enabled) {
        /* 11 MSRs of 8 one-byte types each: 64K x8 at 0, 16K x16 at 0x80000, 4K x64 at 0xC0000 */
        static const uint32_t msrs[11] = {
            MSR_IA32_MTRR_FIX64K_00000, MSR_IA32_MTRR_FIX16K_80000, MSR_IA32_MTRR_FIX16K_A0000,
            MSR_IA32_MTRR_FIX4K_C0000, MSR_IA32_MTRR_FIX4K_C0000 + 1, MSR_IA32_MTRR_FIX4K_C0000 + 2,
            MSR_IA32_MTRR_FIX4K_C0000 + 3, MSR_IA32_MTRR_FIX4K_C0000 + 4, MSR_IA32_MTRR_FIX4K_C0000 + 5,
            MSR_IA32_MTRR_FIX4K_C0000 + 6, MSR_IA32_MTRR_FIX4K_C0000 + 7 };
        for (int i = 0; i < 11; i++) {
            uint64_t v = rdmsr(msrs[i]);
            for (int b = 0; b < 8; b++)
                m->fixed[i * 8 + b] = (v >> (8 * b)) & 0xff;
        }
    }
    for (unsigned i = 0; i < m->nvar; i++) {
        uint64_t base = rdmsr(MSR_IA32_MTRR_PHYSBASE0 + 2 * i);
        uint64_t mask = rdmsr(MSR_IA32_MTRR_PHYSMASK0 + 2 * i);
        m->var[i].valid = mask & PHYSMASK_VALID;
        m->var[i].type = base & 0xff;
        m->var[i].base = base & m->addr_mask;
        m->var[i].mask = mask & m->addr_mask;
    }
}

static int fixed_type(const struct mtrr_state *m, uint64_t a)
{
    if (a < 0x80000)
        return m->fixed[a >> 16];
    if (a < 0xc0000)
        return m->fixed[8 + ((a - 0x80000) >> 14)];
    return m->fixed[24 + ((a - 0xc0000) >> 12)];
}

int mtrr_type_at(const struct mtrr_state *m, uint64_t a)
{
    if (!m->enabled)
        return MTRR_UC;
    if (m->fixed_enabled && a < FIXED_LIMIT)
        return fixed_type(m, a);
    int type = -2;
    for (unsigned i = 0; i < m->nvar; i++) {
        if (!m->var[i].valid || ((a & m->var[i].mask) != (m->var[i].base & m->var[i].mask)))
            continue;
        int t = m->var[i].type;
        if (type == -2 || type == t)
            type = t;
        else if (t == MTRR_UC || type == MTRR_UC)
            type = MTRR_UC;
        else if ((t == MTRR_WT && type == MTRR_WB) || (t == MTRR_WB && type == MTRR_WT))
            type = MTRR_WT;
        else
            type = MTRR_UC;   /* undefined combination: be safe */
    }
    return type == -2 ? m->def_type : type;
}

/* Does variable range i cover all, none, or part of [base, base+size)? */
static int var_overlap(const struct mtrr_state *m, unsigned i, uint64_t base, uint64_t size)
{
    uint64_t mask = m->var[i].mask;
    uint64_t span = size - 1;
    /* Range bits above the range's own size decide in/out only if the mask has no bits
     * inside the range's offset bits; otherwise the MTRR is finer than the range. */
    if ((mask & span & m->addr_mask) == 0)
        return ((base & mask) == (m->var[i].base & mask)) ? 1 : 0;
    /* The MTRR is smaller than the range: does it touch it at all? For the usual contiguous
     * masks, it touches iff its base lies inside. */
    uint64_t vb = m->var[i].base & mask;
    return (vb >= base && vb <= base + span) ? 2 : 0;
}

int mtrr_type_range(const struct mtrr_state *m, uint64_t base, uint64_t size)
{
    if (!m->enabled)
        return MTRR_UC;
    if (m->fixed_enabled && base < FIXED_LIMIT) {
        int t = fixed_type(m, base);
        uint64_t end = base + size < FIXED_LIMIT ? base + size : FIXED_LIMIT;
        for (uint64_t a = base; a < end; a += PAGE_4K)
            if (fixed_type(m, a) != t)
                return MTRR_MIXED;
        if (base + size <= FIXED_LIMIT)
            return t;
        return MTRR_MIXED;   /* straddles the fixed/variable boundary */
    }
    for (unsigned i = 0; i < m->nvar; i++)
        if (m->var[i].valid && var_overlap(m, i, base, size) == 2)
            return MTRR_MIXED;
    return mtrr_type_at(m, base);
}
