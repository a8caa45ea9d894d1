/*
 * test_dmap.c - host unit test of the direct-map builder (boot/dmap.c) with the MTRR typing the
 * hypervisor uses (vmm/mtrr.c): a firmware-like MTRR set (fixed ranges below 1 MiB, WB 0-2 GiB
 * with a 16 MiB UC hole and a 1 MiB UC range not 2 MiB aligned, UC default) and RAM below
 * 2 GiB and at 4-6 GiB. Every leaf of the write-back map spans one memory type and maps its own
 * address; the uncached alias maps every non-RAM page up to MAXPHYADDR and no RAM page.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dmap.h"
#include "mtrr.h"
#include "x86_arch.h"
#include "check.h"

static struct mtrr_state mtrr;
static uint64_t msr_file(uint32_t msr)
{
    const uint64_t wb8 = 0x0606060606060606ull, uc8 = 0, wp8 = 0x0505050505050505ull;
    const uint64_t mask_bits = 0xfffffffff000ull, valid = 1u << 11;
    switch (msr) {
    case MSR_IA32_MTRRCAP: return (1u << 8) | 8;
    case MSR_IA32_MTRR_DEF_TYPE: return (1u << 11) | (1u << 10) | MTRR_UC;
    case MSR_IA32_MTRR_FIX64K_00000: return wb8;
    case MSR_IA32_MTRR_FIX16K_80000: return wb8;
    case MSR_IA32_MTRR_FIX16K_A0000: return uc8;
    case MSR_IA32_MTRR_PHYSBASE0: return 0 | MTRR_WB;
    case MSR_IA32_MTRR_PHYSMASK0: return (~(0x80000000ull - 1) & mask_bits) | valid;
    case MSR_IA32_MTRR_PHYSBASE0 + 2: return 0x7f000000ull | MTRR_UC;
    case MSR_IA32_MTRR_PHYSMASK0 + 2: return (~(0x1000000ull - 1) & mask_bits) | valid;
    case MSR_IA32_MTRR_PHYSBASE0 + 4: return 0x5ff00000ull | MTRR_UC;   /* 1 MiB at an odd place */
    case MSR_IA32_MTRR_PHYSMASK0 + 4: return (~(0x100000ull - 1) & mask_bits) | valid;
    case MSR_IA32_MTRR_PHYSBASE0 + 6: return 0x100000000ull | MTRR_WB;  /* 4-6 GiB RAM: WB 4-8 */
    case MSR_IA32_MTRR_PHYSMASK0 + 6: return (~(0x100000000ull - 1) & mask_bits) | valid;
    }
    if (msr >= MSR_IA32_MTRR_FIX4K_C0000 && msr < MSR_IA32_MTRR_FIX4K_C0000 + 8) return wp8;
    return 0;
}

/* RAM: [0, 0x9f000), [0x100000, 0x7f000000), [4 GiB, 6 GiB). */
static const struct { uint64_t b, e; } ram[] = { { 0, 0x9f000 }, { 0x100000, 0x7f000000 },
                                                 { 0x100000000ull, 0x180000000ull } };
static enum dmap_ram ram_of(void *ctx, uint64_t base, uint64_t size)
{
    (void)ctx;
    uint64_t in = 0;
    for (unsigned i = 0; i < sizeof ram / sizeof ram[0]; i++) {
        uint64_t lo = base > ram[i].b ? base : ram[i].b, hi = base + size < ram[i].e ? base + size : ram[i].e;
        if (hi > lo) in += hi - lo;
    }
    return in == 0 ? DMAP_RAM_NONE : in == size ? DMAP_RAM_ALL : DMAP_RAM_SOME;
}
static int memtype(void *ctx, uint64_t base, uint64_t size) { (void)ctx; return mtrr_type_range(&mtrr, base, size); }
static unsigned ntables;
static uint64_t *alloc_table(void *ctx)
{
    (void)ctx;
    ntables++;
    uint64_t *t = aligned_alloc(4096, 4096);
    memset(t, 0, 4096);
    return t;
}

static uint64_t *alloc_limited(void *ctx)
{
    unsigned *left = ctx;
    return *left ? (--*left, alloc_table(0)) : 0;
}

/* Walk like the MMU: the leaf mapping va, its size and entry; 0 if unmapped. */
static uint64_t walk(const uint64_t *pml4, uint64_t va, uint64_t *size)
{
    uint64_t e = pml4[(va >> 39) & 511];
    for (int shift = 30; shift >= 12; shift -= 9) {
        if (!(e & DMAP_PTE_P)) return 0;
        const uint64_t *t = (const uint64_t *)(uintptr_t)(e & ~0xfffull);
        e = t[(va >> shift) & 511];
        if (!(e & DMAP_PTE_P)) return 0;
        if (shift == 12 || (e & DMAP_PTE_PS)) { *size = 1ull << shift; return e; }
    }
    return 0;
}

int main(void)
{
    mtrr_read(&mtrr, msr_file, 39);
    uint64_t *pml4 = alloc_table(0);
    struct dmap_ops ops = { 0, alloc_table, memtype, ram_of };
    struct dmap_stats st;
    const uint64_t limit = 8ull << 30, uc_base = 0xffff800000000000ull, uc_limit = 1ull << 39;
    CHECK(dmap_build(pml4, limit, uc_base, uc_limit, true, &ops, &st) == 0, "built");
    printf("  leaves: %lu x 1 GiB, %lu x 2 MiB, %lu x 4 KiB; %u tables\n", (unsigned long)st.pages_1g,
           (unsigned long)st.pages_2m, (unsigned long)st.pages_4k, ntables);
    /* The write-back map: every address maps itself, every leaf has one type. */
    unsigned bad_addr = 0, mixed = 0, n = 0;
    for (uint64_t pa = 0; pa < limit; pa += pa < (4u << 20) ? 0x1000 : 0x1ff000) {
        uint64_t size, e = walk(pml4, pa, &size);
        n++;
        if (!e || (e & ~0xfffull & ~(size - 1) & ((1ull << 52) - 1)) != (pa & ~(size - 1)) ||
            (e & (DMAP_PTE_PCD | DMAP_PTE_PWT))) { bad_addr++; continue; }
        mixed += mtrr_type_range(&mtrr, pa & ~(size - 1), size) == MTRR_MIXED;
    }
    CHECK(bad_addr == 0, "write-back map: %u of %u addresses not mapped to themselves", bad_addr, n);
    CHECK(mixed == 0, "write-back map: %u leaves span several memory types", mixed);
    uint64_t size;
    CHECK(walk(pml4, 0x5ff00000, &size) && size == 0x1000, "the odd 1 MiB UC range: 4 KiB pages (%#lx)",
          (unsigned long)size);
    CHECK(walk(pml4, 0x100000000ull, &size) && size == (1ull << 30), "4-5 GiB (all WB): one 1 GiB page");
    CHECK(walk(pml4, 0x40000000, &size) && size == 0x200000, "1-2 GiB (the UC hole inside): 2 MiB pages");
    /* The old builder's 1 GiB pages, for the record: how many spanned several types. */
    unsigned old_mixed = 0;
    for (uint64_t pa = 0; pa < limit; pa += 1ull << 30)
        old_mixed += mtrr_type_range(&mtrr, pa, 1ull << 30) == MTRR_MIXED;
    printf("  (one 1 GiB page per GiB, as before: %u of %lu span several types)\n", old_mixed,
           (unsigned long)(limit >> 30));
    /* The uncached alias: no RAM, every other page up to uc_limit, PCD|PWT. */
    unsigned ram_mapped = 0, mmio_missing = 0, not_uc = 0;
    n = 0;
    for (uint64_t pa = 0; pa < uc_limit; pa += pa < (8ull << 30) ? (pa < (4u << 20) ? 0x1000 : 0x7f000) : (1ull << 33) - 0x3000) {
        uint64_t e = walk(pml4, uc_base + pa, &size);
        bool is_ram = ram_of(0, pa, 1) == DMAP_RAM_ALL;
        n++;
        if (is_ram) { ram_mapped += e != 0; continue; }
        if (!e) { mmio_missing++; continue; }
        not_uc += (e & (DMAP_PTE_PCD | DMAP_PTE_PWT)) != (DMAP_PTE_PCD | DMAP_PTE_PWT) ||
                  (e & ~0xfffull & ~(size - 1) & ((1ull << 52) - 1)) != (pa & ~(size - 1));
    }
    CHECK(ram_mapped == 0, "alias: %u RAM addresses mapped uncached", ram_mapped);
    CHECK(mmio_missing == 0, "alias: %u non-RAM addresses unmapped (of %u)", mmio_missing, n);
    CHECK(not_uc == 0, "alias: %u leaves not uncached or not their own address", not_uc);
    CHECK(walk(pml4, uc_base + 0xfee00000, &size) != 0, "alias: the local APIC's page");
    CHECK(walk(pml4, uc_base + (300ull << 30), &size) && size == (1ull << 30), "alias: a BAR at 300 GiB (1 GiB page)");
    CHECK(walk(pml4, uc_base + 0x9f000, &size) && size == 0x1000 && !walk(pml4, uc_base + 0x9e000, &size),
          "alias: the page after low RAM mapped, the last RAM page not");
    /* Without 1 GiB pages: 2 MiB leaves, the same answers. */
    uint64_t *pml4b = alloc_table(0);
    CHECK(dmap_build(pml4b, limit, uc_base, 8ull << 30, false, &ops, &st) == 0 && st.pages_1g == 0,
          "without 1 GiB pages: built with 2 MiB ones (%lu)", (unsigned long)st.pages_2m);
    CHECK(walk(pml4b, 0x100000000ull, &size) && size == 0x200000 && walk(pml4b, 0x5ff00000, &size) && size == 0x1000,
          "without 1 GiB pages: 2 MiB where uniform, 4 KiB where mixed");
    /* Tables that run out: an error, not a crash. */
    unsigned left = 5;
    uint64_t *pml4c = alloc_table(0);
    struct dmap_ops tight = { &left, alloc_limited, memtype, ram_of };
    CHECK(dmap_build(pml4c, limit, uc_base, uc_limit, true, &tight, &st) == -1, "out of tables: -1");
    return check_summary("test_dmap");
}
