/*
 * test_iommu_boot.c - host unit test of vmm/iommu_boot.c, the boot-time sequence the
 * hypervisor and the QEMU check share: parsed DMARs (QEMU q35's captured table and synthetic
 * two-unit tables with an RMRR) driven into a model of VT-d units' registers (VT-d spec
 * rev 3.3, 10.4: GCMD acted on like the hardware, invalidations completing). Checks: no DMAR
 * touches nothing; a corrupt one touches no unit; the tables fit every unit's common
 * capabilities (depth, large pages, MGAW); the RMRRs are mapped; the own device's context
 * entry points at the own domain; a non-snooping unit gets the caches written back before
 * any translation is on; units that refuse (already on, unreachable) are counted and the
 * others still enabled; a build failure enables no unit.
 * Usage: test_iommu_boot [DATA_DIR]   Prints failed checks and "test_iommu_boot: N passed, N failed".
 */
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "iommu_boot.h"
#include "check.h"


/* --- heap pages, "physical" address = host pointer --- */
#define MAX_PAGES 8192
static void *pages[MAX_PAGES];
static unsigned pages_alloced;
static void *page_alloc(void)
{
    if (pages_alloced >= MAX_PAGES) return NULL;
    void *p = aligned_alloc(4096, 4096);
    if (p) { memset(p, 0, 4096); pages[pages_alloced++] = p; }
    return p;
}
static void pages_free(void)
{
    while (pages_alloced) free(pages[--pages_alloced]);
}
static uint64_t v2p(const void *v) { return (uint64_t)(uintptr_t)v; }
static void *p2v(uint64_t pa) { return (void *)(uintptr_t)pa; }
static const struct iommu_ops ops = { page_alloc, v2p, p2v };

/* --- a model of a unit's registers --- */
#define IRO_UNITS 0x50u
struct unit {
    uint64_t base, cap, ecap, rtaddr, root_latched, ccmd, iotlb;
    uint32_t ver, gsts;
    bool te_off_seen;
    bool unreachable;
    unsigned te_at_event;               /* event counter value when TE was set */
};
static struct unit units[4];
static unsigned nunits_model, events, flush_at, flushes, opens;

static struct unit *unit_at(uint64_t base)
{
    for (unsigned i = 0; i < nunits_model; i++) if (units[i].base == base) return &units[i];
    return NULL;
}
static uint32_t r32(void *c, unsigned off)
{
    struct unit *u = c;
    return off == VTD_REG_VER ? u->ver : off == VTD_REG_GSTS ? u->gsts : 0;
}
static uint64_t r64(void *c, unsigned off)
{
    struct unit *u = c;
    if (off == VTD_REG_CAP) return u->cap;
    if (off == VTD_REG_ECAP) return u->ecap;
    if (off == VTD_REG_CCMD) return u->ccmd;
    if (off == IRO_UNITS * 16 + 8) return u->iotlb;
    return 0;
}
static void w32(void *c, unsigned off, uint32_t v)
{
    struct unit *u = c;
    events++;
    if (off != VTD_REG_GCMD) return;
    if (v & VTD_GCMD_SRTP) { u->root_latched = u->rtaddr; u->gsts |= VTD_GCMD_SRTP; }
    if ((v & VTD_GCMD_TE) && !(u->gsts & VTD_GCMD_TE)) { u->gsts |= VTD_GCMD_TE; u->te_at_event = events; }
    if (!(v & VTD_GCMD_TE) && (u->gsts & VTD_GCMD_TE)) { u->gsts &= ~VTD_GCMD_TE; u->te_off_seen = true; }
}
static void w64(void *c, unsigned off, uint64_t v)
{
    struct unit *u = c;
    events++;
    if (off == VTD_REG_RTADDR) u->rtaddr = v;
    /* invalidations complete at once: ICC / IVT read back as 0 */
}
static bool unit_open(void *ctx, uint64_t base, unsigned pages, struct iommu_hw_ops *hw)
{
    opens++;
    struct unit *u = unit_at(base);
    if (!u || u->unreachable || pages == 0) return false;
    *hw = (struct iommu_hw_ops){ r32, r64, w32, w64, u, 1000 };
    return true;
}
static void flush(void *ctx) { flushes++; flush_at = ++events; }
static const struct iommu_boot_unit_ops uops = { unit_open, flush, NULL };

/* 10.4.2: SAGAW bits 12:8 (bit 1 = 39-bit, bit 2 = 48-bit), MGAW - 1 in 21:16, SLLPS 37:34. */
static uint64_t cap_of(unsigned sagaw, unsigned mgaw, unsigned sllps)
{
    return (uint64_t)sagaw << 8 | (uint64_t)(mgaw - 1) << 16 | (uint64_t)sllps << 34;
}
static void model_reset(unsigned n, const uint64_t *bases)
{
    memset(units, 0, sizeof units);
    nunits_model = n;
    for (unsigned i = 0; i < n; i++) {
        units[i].base = bases[i];
        units[i].ver = 0x10;
        units[i].cap = cap_of(0x6, 48, 0x3);
        units[i].ecap = (uint64_t)IRO_UNITS << 8 | VTD_ECAP_C;
    }
    events = flush_at = flushes = opens = 0;
}

/* Is gpa mapped (read and write) in the second-level table at top? */
static bool mapped(const struct iommu_tables *t, const uint64_t *top, uint64_t gpa)
{
    const uint64_t *tbl = top;
    for (unsigned lvl = t->levels; lvl >= 1; lvl--) {
        uint64_t e = tbl[(gpa >> (12 + 9 * (lvl - 1))) & 511];
        if ((e & 3) != 3) return false;
        if (lvl == 1 || (e & IOMMU_SL_PS)) return true;
        tbl = p2v(e & IOMMU_ADDR_MASK);
    }
    return false;
}

/* --- synthetic DMARs --- */
struct tb { uint8_t b[1024]; size_t n; };
static void put(struct tb *t, const void *p, size_t n) { memcpy(t->b + t->n, p, n); t->n += n; }
static void put8(struct tb *t, uint8_t v) { put(t, &v, 1); }
static void put16(struct tb *t, uint16_t v) { put(t, &v, 2); }
static void put32(struct tb *t, uint32_t v) { put(t, &v, 4); }
static void put64(struct tb *t, uint64_t v) { put(t, &v, 8); }
static void fix_header(struct tb *t)
{
    uint32_t len = (uint32_t)t->n;
    memcpy(t->b + 4, &len, 4);
    t->b[9] = 0;
    uint8_t s = 0;
    for (size_t i = 0; i < t->n; i++) s = (uint8_t)(s + t->b[i]);
    t->b[9] = (uint8_t)-s;
}
/* Two units (00:02.0's and the INCLUDE_PCI_ALL one, 2 register pages) and an RMRR
 * [rmrr_base, rmrr_base + 2 MiB) for 00:14.0. */
static void two_units(struct tb *t, uint64_t rmrr_base)
{
    t->n = 0;
    put(t, "DMAR", 4); put32(t, 0); put8(t, 1); put8(t, 0);
    put(t, "HVTEST", 6); put(t, "SYNTHDMR", 8); put32(t, 1); put(t, "HVT ", 4); put32(t, 1);
    put8(t, 38); put8(t, 1);
    for (int i = 0; i < 10; i++) put8(t, 0);
    put16(t, 0); put16(t, 16 + 8); put8(t, 0); put8(t, 0); put16(t, 0); put64(t, 0xfed91000ull);
    put8(t, 1); put8(t, 8); put16(t, 0); put8(t, 0); put8(t, 0); put8(t, 2); put8(t, 0);
    put16(t, 0); put16(t, 16); put8(t, 1); put8(t, 1); put16(t, 0); put64(t, 0xfed90000ull);
    put16(t, 1); put16(t, 24 + 8); put16(t, 0); put16(t, 0); put64(t, rmrr_base); put64(t, rmrr_base + 0x1fffff);
    put8(t, 1); put8(t, 8); put16(t, 0); put8(t, 0); put8(t, 0); put8(t, 0x14); put8(t, 0);
    fix_header(t);
}

static struct dmar_info di;
static struct iommu_boot_result r;
static const struct iommu_range ram[2] = { { 0, 0x7b800000ull }, { 0x100000000ull, 0x40000000ull } };
static const struct iommu_range excl[1] = { { 0x40000000ull, 0x4000000ull } };   /* "the hypervisor" */
static const struct iommu_range own[1] = { { 0x40100000ull, 0x8000 } };
static const struct iommu_bdf own_dev[1] = { { 3, 0, 0 } };

static struct iommu_layout layout(void)
{
    return (struct iommu_layout){ ram, 2, excl, 1, NULL, 0, own_dev, 1, own, 1 };
}

static void test_none_and_corrupt(void)
{
    struct iommu_layout l = layout();
    model_reset(0, NULL);
    CHECK(iommu_boot(NULL, 0, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_NO_DMAR && opens == 0,
          "no DMAR: state %d, %u opens", r.state, opens);
    struct tb t;
    two_units(&t, 0x7b800000ull);
    t.b[40] ^= 0x10;                    /* checksum no longer holds */
    const uint64_t b[2] = { 0xfed91000ull, 0xfed90000ull };
    model_reset(2, b);
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_FAILED &&
          r.stage == IOMMU_STAGE_PARSE && r.err == DMAR_E_CHECKSUM && opens == 0 && events == 0,
          "corrupt DMAR: state %d stage %d err %d, %u opens", r.state, r.stage, r.err, opens);
}

static void test_q35(const char *dir)
{
    static uint8_t buf[8192];
    char path[512];
    snprintf(path, sizeof path, "%s/q35-DMAR.bin", dir);
    FILE *f = fopen(path, "rb");
    if (!f) { check_failed++; printf("FAIL cannot open %s\n", path); return; }
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    const uint64_t b[1] = { 0xfed90000ull };
    model_reset(1, b);
    struct iommu_layout l = layout();
    CHECK(iommu_boot(buf, n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_ON && r.units_on == 1 &&
          r.nunits == 1 && r.stage == IOMMU_STAGE_NONE, "q35: state %d, %u of %u on", r.state,
          r.units_on, r.nunits);
    CHECK((units[0].gsts & VTD_GCMD_TE) && units[0].root_latched == iommu_root_table_addr(&r.tables),
          "q35: TE on, root table %#llx latched", (unsigned long long)units[0].root_latched);
    CHECK(flushes == 0, "q35: a snooping unit needs no write-back (%u)", flushes);
    CHECK(mapped(&r.tables, r.tables.sl_guest, 0x1000) && mapped(&r.tables, r.tables.sl_guest, 0x13fffffffull) &&
          !mapped(&r.tables, r.tables.sl_guest, 0x40000000ull) && !mapped(&r.tables, r.tables.sl_guest, 0x40100000ull) &&
          !mapped(&r.tables, r.tables.sl_guest, 0x7b800000ull),
          "q35: guest domain = RAM minus the hypervisor and own ranges");
    CHECK(mapped(&r.tables, r.tables.sl_own, 0x40100000ull) && mapped(&r.tables, r.tables.sl_own, 0x40107000ull) &&
          !mapped(&r.tables, r.tables.sl_own, 0x40108000ull) && !mapped(&r.tables, r.tables.sl_own, 0x1000),
          "q35: own domain = the own range only");
    const uint64_t *ctx3 = p2v(r.tables.root[2 * 3] & IOMMU_ADDR_MASK);
    const uint64_t *ctx0 = p2v(r.tables.root[2 * 0] & IOMMU_ADDR_MASK);
    CHECK(((ctx3[1] >> IOMMU_CTX_DID_SHIFT) & 0xffff) == IOMMU_DID_OWN &&
          ((ctx3[2 * 8 + 1] >> IOMMU_CTX_DID_SHIFT) & 0xffff) == IOMMU_DID_GUEST &&
          ((ctx0[1] >> IOMMU_CTX_DID_SHIFT) & 0xffff) == IOMMU_DID_GUEST,
          "q35: 03:00.0 in the own domain, 03:01.0 and 00:00.0 in the guest's");
}

static void test_two_units(void)
{
    const uint64_t b[2] = { 0xfed91000ull, 0xfed90000ull };
    struct tb t;
    two_units(&t, 0x7b800000ull);
    struct iommu_layout l = layout();
    /* Unit 0 offers 3- and 4-level, 2M+1G, MGAW 48; unit 1 3-level, 2M, MGAW 39 and does
     * not snoop: the tables must be 3-level without 1G pages, limit 2^39, written back. */
    model_reset(2, b);
    units[1].cap = cap_of(0x2, 39, 0x1);
    units[1].ecap &= ~VTD_ECAP_C;
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_ON && r.units_on == 2,
          "two units: state %d, %u on", r.state, r.units_on);
    CHECK(r.tables.levels == 3 && !r.tables.has_1g && r.tables.has_2m && r.tables.limit == 1ull << 39,
          "common caps: %u levels, 1G %d, 2M %d, limit %#llx", r.tables.levels, r.tables.has_1g,
          r.tables.has_2m, (unsigned long long)r.tables.limit);
    CHECK(flushes == 1 && flush_at < units[0].te_at_event && flush_at < units[1].te_at_event,
          "written back once (%u), before either TE", flushes);
    CHECK(units[0].root_latched == units[1].root_latched && units[0].root_latched,
          "one root table for both units");
    CHECK(mapped(&r.tables, r.tables.sl_guest, 0x7b800000ull) && mapped(&r.tables, r.tables.sl_guest, 0x7b9ff000ull) &&
          !mapped(&r.tables, r.tables.sl_guest, 0x7ba00000ull), "the RMRR past RAM is mapped, no more");
    CHECK(iommu_boot_common_cap((const uint64_t[]){ units[0].cap, units[1].cap }, 2) ==
          cap_of(0x2, 39, 0x1), "iommu_boot_common_cap");
    CHECK(iommu_boot_unit_pages(&di.units[0]) == 1 && iommu_boot_unit_pages(&di.units[1]) == 2,
          "register pages 1 and 2^1");

    /* Unit 1 already translating (firmware's tables): taken over, both units on ours. */
    model_reset(2, b);
    units[1].gsts = VTD_GCMD_TE;
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_ON && r.units_on == 2 &&
          r.unit_rc[0] == 0 && r.unit_rc[1] == 0 && units[1].te_off_seen &&
          units[1].root_latched == iommu_root_table_addr(&r.tables) && (units[1].gsts & VTD_GCMD_TE),
          "unit 1 left translating: taken over (state %d, rc %d/%d)", r.state, r.unit_rc[0], r.unit_rc[1]);
    /* Unit 0 unreachable: the tables come from unit 1's capabilities alone. */
    model_reset(2, b);
    units[0].unreachable = true;
    units[1].cap = cap_of(0x4, 48, 0x3);
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_PARTIAL &&
          r.unit_rc[0] == IOMMU_BOOT_E_OPEN && r.unit_rc[1] == 0 && r.tables.levels == 4,
          "unit 0 unreachable: state %d, levels %u", r.state, r.tables.levels);
    /* Version 6 everywhere: no unit on. */
    model_reset(2, b);
    units[0].ver = units[1].ver = 0x60;
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_FAILED && r.units_on == 0 &&
          r.err == IOMMU_HW_E_UNSUPPORTED, "version 6 units: state %d err %d", r.state, r.err);
    /* An RMRR inside the hypervisor's region: nothing sound can be built, no unit touched. */
    two_units(&t, 0x40000000ull);
    model_reset(2, b);
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_FAILED &&
          r.stage == IOMMU_STAGE_BUILD && r.err == IOMMU_E_RMRR && !(units[0].gsts & VTD_GCMD_TE) &&
          !(units[1].gsts & VTD_GCMD_TE) && units[0].rtaddr == 0,
          "RMRR over the hypervisor: state %d stage %d err %d", r.state, r.stage, r.err);
    /* No paging depth in common (4-level only vs 3-level only). */
    two_units(&t, 0x7b800000ull);
    model_reset(2, b);
    units[0].cap = cap_of(0x4, 48, 0);
    units[1].cap = cap_of(0x2, 39, 0);
    CHECK(iommu_boot(t.b, t.n, &l, &ops, &uops, &di, &r) == IOMMU_BOOT_FAILED &&
          r.err == IOMMU_E_CAP && units[0].rtaddr == 0, "no common depth: err %d", r.err);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "vmm/tests/data";
    test_none_and_corrupt();
    test_q35(dir);
    test_two_units();
    pages_free();
    return check_summary("test_iommu_boot");
}
