/* test_ept_mtrr.c - the EPT builder (vmm/ept.c) and MTRR typing (vmm/mtrr.c) on the host,
 * with heap pages standing in for physical memory and a synthetic MSR file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ept.h"
#include "mtrr.h"
#include "cpu.h"
#include "check.h"


/* "Physical" addresses are the heap pointers themselves. */
static void *alloc_page(void) { void *p = aligned_alloc(4096, 4096); memset(p, 0, 4096); return p; }
static uint64_t v2p(const void *v) { return (uint64_t)v; }
static void *p2v(uint64_t p) { return (void *)p; }

static struct mtrr_state mtrr;
static int memtype(uint64_t b, uint64_t s) { return mtrr_type_range(&mtrr, b, s); }
static const struct ept_ops ops = { alloc_page, v2p, p2v, memtype };

/* A typical firmware MTRR set-up: default UC; WB 0-2 GiB (var 0: base 0, 2 GiB);
 * UC hole 0xC0000000-0xFFFFFFFF is default; fixed: 0-0x9FFFF WB, A0000-BFFFF UC, C0000+ WP. */
static uint64_t msr_file(uint32_t msr)
{
    const uint64_t wb8 = 0x0606060606060606ull, uc8 = 0, wp8 = 0x0505050505050505ull;
    switch (msr) {
    case MSR_IA32_MTRRCAP: return (1u << 8) | 8;              /* fixed supported, 8 var */
    case MSR_IA32_MTRR_DEF_TYPE: return (1u << 11) | (1u << 10) | MTRR_UC;
    case MSR_IA32_MTRR_FIX64K_00000: return wb8;
    case MSR_IA32_MTRR_FIX16K_80000: return wb8;
    case MSR_IA32_MTRR_FIX16K_A0000: return uc8;
    case MSR_IA32_MTRR_PHYSBASE0: return 0 | MTRR_WB;
    case MSR_IA32_MTRR_PHYSMASK0: return (~(0x80000000ull - 1) & 0xfffffffff000ull) | (1u << 11);
    case MSR_IA32_MTRR_PHYSBASE0 + 2: return 0x7f000000ull | MTRR_UC;   /* a 16 MiB UC hole */
    case MSR_IA32_MTRR_PHYSMASK0 + 2: return (~(0x1000000ull - 1) & 0xfffffffff000ull) | (1u << 11);
    }
    if (msr >= MSR_IA32_MTRR_FIX4K_C0000 && msr < MSR_IA32_MTRR_FIX4K_C0000 + 8) return wp8;
    return 0;
}

int main(void)
{
    mtrr_read(&mtrr, msr_file, 48);
    CHECK(mtrr_type_at(&mtrr, 0x1000) == MTRR_WB, "low RAM WB");
    CHECK(mtrr_type_at(&mtrr, 0xa0000) == MTRR_UC, "VGA UC");
    CHECK(mtrr_type_at(&mtrr, 0xc8000) == MTRR_WP, "ROM WP");
    CHECK(mtrr_type_at(&mtrr, 0x7f800000) == MTRR_UC, "UC wins over WB (SDM 12.11.4.1)");
    CHECK(mtrr_type_at(&mtrr, 0x90000000) == MTRR_UC, "default type");
    CHECK(mtrr_type_range(&mtrr, 0, 0x200000) == MTRR_MIXED, "first 2 MiB mixed");
    CHECK(mtrr_type_range(&mtrr, 0x200000, 0x200000) == MTRR_WB, "2 MiB WB");
    CHECK(mtrr_type_range(&mtrr, 0x40000000, 0x40000000) == MTRR_MIXED, "1 GiB with a UC hole");
    CHECK(mtrr_type_range(&mtrr, 0x7f000000, 0x200000) == MTRR_UC, "2 MiB in the hole");
    CHECK(mtrr_type_range(&mtrr, 0xc0000000, 0x40000000) == MTRR_UC, "MMIO GiB");

    struct ept e;
    CHECK(ept_init(&e, &ops, true, true) == 0, "init");
    CHECK(ept_map_identity(&e, 0, 4ull << 30) == 0, "identity 4 GiB");
    uint64_t hpa, perms; unsigned mt;
    struct { uint64_t gpa; unsigned type; } probes[] = {
        { 0x1234, MTRR_WB }, { 0xa0000, MTRR_UC }, { 0xc9000, MTRR_WP }, { 0x200000, MTRR_WB },
        { 0x7f123000, MTRR_UC }, { 0x81000000, MTRR_UC }, { 0x3fffffff, MTRR_WB },
        { 0xfee00000, MTRR_UC },
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++) {
        bool ok = ept_translate(&e, probes[i].gpa, &hpa, &perms, &mt);
        CHECK(ok && hpa == probes[i].gpa && perms == EPT_RWX && mt == probes[i].type,
              "identity gpa %llx: ok=%d hpa %llx perms %llx type %u want %u", (unsigned long long)probes[i].gpa,
              ok, (unsigned long long)hpa, (unsigned long long)perms, mt, probes[i].type);
    }
    unsigned before = e.tables;
    /* Hide a 4 MiB "hypervisor region" behind one dummy page, as hv_main.c does. */
    uint64_t dummy = 0x5555000, region = 0x10000000;
    for (uint64_t pa = region; pa < region + (4u << 20); pa += 4096)
        CHECK(ept_map_4k(&e, pa, dummy, EPT_RWX, MTRR_WB) == 0, "map 4k");
    CHECK(ept_translate(&e, region + 0x1234, &hpa, &perms, &mt) && hpa == dummy + 0x234,
          "hidden page -> dummy (got %llx)", (unsigned long long)hpa);
    CHECK(ept_translate(&e, region + (4u << 20) - 1, &hpa, &perms, &mt) && hpa == dummy + 0xfff, "last hidden byte");
    CHECK(ept_translate(&e, region - 1, &hpa, &perms, &mt) && hpa == region - 1, "byte before region still identity");
    CHECK(ept_translate(&e, region + (4u << 20), &hpa, &perms, &mt) && hpa == region + (4u << 20),
          "byte after region still identity");
    CHECK(e.tables > before, "splitting allocated tables");
    CHECK(!ept_translate(&e, 5ull << 30, &hpa, &perms, &mt), "beyond the map: not present");
    CHECK((ept_eptp(&e) & 0xfff) == (EPTP_WALK_4 | EPTP_MEMTYPE_WB), "EPTP low bits");
    return check_summary("test_ept_mtrr");
}
