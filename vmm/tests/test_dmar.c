/*
 * test_dmar.c - host unit test of vmm/acpi_dmar.c: the DMAR QEMU q35 + intel-iommu really
 * reports (vmm/tests/data/q35-DMAR.bin, values as `iasl -d` decodes them, see its README),
 * a synthetic table with every structure type, malformed tables (truncated, bad lengths, bad
 * checksum, overlapping scopes, limits), every truncation and random byte corruption of the
 * real table (run under ASan/UBSan too: no read past the buffer, no crash), and scope
 * matching through bridges.
 * Usage: test_dmar [DATA_DIR]   Prints failed checks and "test_dmar: N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acpi_dmar.h"
#include "check.h"


static struct dmar_info info;

static size_t load(const char *dir, const char *name, uint8_t *buf, size_t cap)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) { printf("FAIL cannot open %s\n", path); check_failed++; return 0; }
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

/* --- a tiny table writer for synthetic DMARs --- */
struct tb { uint8_t b[4096]; size_t n; };
static void put(struct tb *t, const void *p, size_t n) { memcpy(t->b + t->n, p, n); t->n += n; }
static void put8(struct tb *t, uint8_t v) { put(t, &v, 1); }
static void put16(struct tb *t, uint16_t v) { put(t, &v, 2); }
static void put32(struct tb *t, uint32_t v) { put(t, &v, 4); }
static void put64(struct tb *t, uint64_t v) { put(t, &v, 8); }
static void set16(struct tb *t, size_t at, uint16_t v) { memcpy(t->b + at, &v, 2); }
static void fix_header(struct tb *t)
{
    uint32_t len = (uint32_t)t->n;
    memcpy(t->b + 4, &len, 4);
    t->b[9] = 0;
    uint8_t s = 0;
    for (size_t i = 0; i < t->n; i++) s = (uint8_t)(s + t->b[i]);
    t->b[9] = (uint8_t)-s;
}
static void dmar_header(struct tb *t, uint8_t haw_m1, uint8_t flags)
{
    t->n = 0;
    put(t, "DMAR", 4); put32(t, 0); put8(t, 1); put8(t, 0);
    put(t, "HVTEST", 6); put(t, "SYNTHDMR", 8); put32(t, 1); put(t, "HVT ", 4); put32(t, 1);
    put8(t, haw_m1); put8(t, flags);
    for (int i = 0; i < 10; i++) put8(t, 0);
}
static size_t struct_begin(struct tb *t, uint16_t type) { size_t at = t->n; put16(t, type); put16(t, 0); return at; }
static void struct_end(struct tb *t, size_t at) { set16(t, at + 2, (uint16_t)(t->n - at)); }
static void scope(struct tb *t, uint8_t type, uint8_t enum_id, uint8_t bus, int hops, const uint8_t *path)
{
    put8(t, type); put8(t, (uint8_t)(6 + 2 * hops)); put16(t, 0); put8(t, enum_id); put8(t, bus);
    put(t, path, 2 * (size_t)hops);
}
static void drhd(struct tb *t, uint8_t flags, uint16_t seg, uint64_t base, size_t *at)
{
    *at = struct_begin(t, 0); put8(t, flags); put8(t, 0); put16(t, seg); put64(t, base);
}

/* --- QEMU q35 + intel-iommu, device-iotlb=on, root port 00:03.0 --- */
static void test_q35(const char *dir)
{
    static uint8_t buf[8192];
    size_t n = load(dir, "q35-DMAR.bin", buf, sizeof buf);
    if (!n) return;
    int rc = dmar_parse(buf, n, &info);
    CHECK(rc == DMAR_OK, "q35 DMAR parse: %s", dmar_strerror(rc));
    CHECK(info.host_addr_width == 0x26 + 1, "HAW %u", info.host_addr_width);
    CHECK(info.flags == 0x01, "flags %#x", info.flags);
    CHECK(info.nunits == 1 && info.nrmrrs == 0 && info.natsr == 1 && info.nrhsa == 0 &&
          info.nandd == 0 && info.nsatc == 0 && info.n_unknown == 0,
          "counts units %u rmrr %u atsr %u", info.nunits, info.nrmrrs, info.natsr);
    const struct dmar_unit *u = &info.units[0];
    CHECK(u->reg_base == 0xfed90000ull && u->segment == 0 && !u->include_pci_all && u->flags == 0,
          "DRHD base %#llx seg %u flags %#x", (unsigned long long)u->reg_base, u->segment, u->flags);
    CHECK(u->nscopes == 8, "DRHD scopes %u", u->nscopes);
    /* iasl: IOAPIC 0 bus FF 00,00; EP 00,00; EP 01,00; EP 02,00; bridge 03,00; EP 1F,00/02/03 */
    static const struct { uint8_t type, id, bus, dev, fn; } want[8] = {
        {3, 0, 0xff, 0, 0}, {1, 0, 0, 0, 0}, {1, 0, 0, 1, 0}, {1, 0, 0, 2, 0},
        {2, 0, 0, 3, 0}, {1, 0, 0, 0x1f, 0}, {1, 0, 0, 0x1f, 2}, {1, 0, 0, 0x1f, 3},
    };
    for (unsigned i = 0; i < 8 && i < u->nscopes; i++) {
        const struct dmar_scope *s = &info.scopes[u->first_scope + i];
        CHECK(s->type == want[i].type && s->enum_id == want[i].id && s->start_bus == want[i].bus &&
              s->npath == 1 && s->path[0].dev == want[i].dev && s->path[0].fn == want[i].fn &&
              s->owner == DMAR_OWNER_DRHD, "scope %u: type %u bus %#x path %02x,%02x", i,
              s->type, s->start_bus, s->path[0].dev, s->path[0].fn);
    }
    /* The e1000e sits on the root port's secondary bus 1: remapped by unit 0 via the bridge. */
    CHECK(dmar_unit_for(&info, 0, 0, 0x1f, 2, NULL, NULL, NULL) == 0, "00:1f.2 unit");
    CHECK(dmar_unit_for(&info, 0, 0, 4, 0, NULL, NULL, NULL) == -1, "00:04.0 has no unit");
    CHECK(dmar_unit_for(&info, 1, 0, 0x1f, 2, NULL, NULL, NULL) == -1, "segment 1 has no unit");
}

static int q35_sec(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn)
{ (void)ctx; return bus == 0 && dev == 3 && fn == 0 ? 1 : bus == 1 && dev == 0 ? 2 : -1; }
static int q35_sub(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn)
{ (void)ctx; return bus == 0 && dev == 3 && fn == 0 ? 2 : bus == 1 && dev == 0 ? 2 : -1; }

static void test_q35_bridge(void)
{
    /* Relies on test_q35's parse: the bridge 00:03.0 covers buses 1..2 per q35_sec/sub. */
    if (info.nunits != 1) return;
    CHECK(dmar_unit_for(&info, 0, 1, 0, 0, q35_sec, q35_sub, NULL) == 0, "01:00.0 behind bridge");
    CHECK(dmar_unit_for(&info, 0, 2, 5, 1, q35_sec, q35_sub, NULL) == 0, "02:05.1 behind bridge");
    CHECK(dmar_unit_for(&info, 0, 3, 0, 0, q35_sec, q35_sub, NULL) == -1, "03:00.0 outside");
    CHECK(dmar_unit_for(&info, 0, 1, 0, 0, NULL, NULL, NULL) == -1, "no bus callback: no match");
}

/* --- the same layouts as ACPICA's compiler encodes them (an independent encoder) --- */
static void test_acpica(const char *dir)
{
    static uint8_t buf[4096];
    size_t n = load(dir, "acpica-template-DMAR.bin", buf, sizeof buf);
    if (n) {
        int rc = dmar_parse(buf, n, &info);
        CHECK(rc == DMAR_E_DRHD, "ACPICA template (register base 0): %s", dmar_strerror(rc));
    }
    n = load(dir, "acpica-andd-DMAR.bin", buf, sizeof buf);
    if (!n) return;
    int rc = dmar_parse(buf, n, &info);
    CHECK(rc == DMAR_OK, "ACPICA DMAR with ANDD: %s", dmar_strerror(rc));
    CHECK(info.host_addr_width == 0x2f + 1 && info.flags == 1, "haw %u flags %u", info.host_addr_width, info.flags);
    CHECK(info.nunits == 1 && info.nrmrrs == 1 && info.natsr == 1 && info.nrhsa == 1 &&
          info.nandd == 1 && info.nsatc == 0 && info.n_unknown == 0, "ACPICA counts");
    const struct dmar_unit *u = &info.units[0];
    CHECK(u->include_pci_all && u->reg_base == 0xfed90000ull && u->nscopes == 1, "ACPICA DRHD");
    const struct dmar_scope *s = &info.scopes[u->first_scope];
    CHECK(s->type == DMAR_SCOPE_IOAPIC && s->enum_id == 8 && s->start_bus == 0 && s->npath == 1 &&
          s->path[0].dev == 0 && s->path[0].fn == 1, "ACPICA IOAPIC scope");
    const struct dmar_rmrr *r = &info.rmrrs[0];
    CHECK(r->base == 0 && r->limit == 0xfff && r->segment == 0 && r->nscopes == 1, "ACPICA RMRR");
    s = &info.scopes[r->first_scope];
    CHECK(s->type == DMAR_SCOPE_PCI_ENDPOINT && s->path[0].dev == 0 && s->path[0].fn == 2 &&
          s->owner == DMAR_OWNER_RMRR, "ACPICA RMRR scope");
    s = &info.scopes[info.nscopes - 1];
    CHECK(info.nscopes == 3 && s->type == DMAR_SCOPE_PCI_BRIDGE && s->path[0].fn == 3 &&
          s->owner == DMAR_OWNER_ATSR, "ACPICA ATSR scope");
}

/* --- every structure type, a multi-hop path, an INCLUDE_PCI_ALL unit, an unknown type --- */
static void build_full(struct tb *t)
{
    size_t at;
    dmar_header(t, 47, 0x5);
    drhd(t, 0, 0, 0xfed91000ull, &at);
    uint8_t p2[4] = {0x1c, 0, 0, 0};           /* 00:1c.0 -> secondary bus -> 00.0 */
    scope(t, 1, 0, 0, 2, p2);
    uint8_t p1[2] = {2, 0};
    scope(t, 1, 0, 0, 1, p1);
    struct_end(t, at);
    drhd(t, 1, 0, 0xfed90000ull, &at);
    uint8_t pi[2] = {0x1f, 0};
    scope(t, 3, 8, 0xf0, 1, pi);               /* IOAPIC id 8 */
    scope(t, 4, 0, 0, 1, pi);                  /* HPET 0 */
    struct_end(t, at);
    at = struct_begin(t, 1); put16(t, 0); put16(t, 0); put64(t, 0x7b800000ull); put64(t, 0x7b9fffffull);
    uint8_t pu[2] = {0x14, 0};
    scope(t, 1, 0, 0, 1, pu);
    struct_end(t, at);
    at = struct_begin(t, 2); put8(t, 0); put8(t, 0); put16(t, 0);
    uint8_t pr[2] = {0x1c, 0};
    scope(t, 2, 0, 0, 1, pr);
    struct_end(t, at);
    at = struct_begin(t, 3); put32(t, 0); put64(t, 0xfed91000ull); put32(t, 1); struct_end(t, at);
    at = struct_begin(t, 4); put8(t, 0); put8(t, 0); put8(t, 0); put8(t, 1); put(t, "\\_SB.PC00.UA00", 15); struct_end(t, at);
    at = struct_begin(t, 5); put8(t, 1); put8(t, 0); put16(t, 0);
    uint8_t ps[2] = {0x02, 0};
    scope(t, 1, 0, 0, 1, ps);
    struct_end(t, at);
    at = struct_begin(t, 0x77); put32(t, 0xdeadbeef); struct_end(t, at);
    fix_header(t);
}

static int full_sec(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn)
{ (void)ctx; return bus == 0 && dev == 0x1c && fn == 0 ? 5 : -1; }

static void test_full(void)
{
    struct tb t;
    build_full(&t);
    int rc = dmar_parse(t.b, t.n, &info);
    CHECK(rc == DMAR_OK, "full parse: %s", dmar_strerror(rc));
    CHECK(info.host_addr_width == 48 && info.flags == 5, "haw %u flags %u", info.host_addr_width, info.flags);
    CHECK(info.nunits == 2 && info.nrmrrs == 1 && info.natsr == 1 && info.nrhsa == 1 &&
          info.nandd == 1 && info.nsatc == 1 && info.n_unknown == 1, "counts");
    CHECK(info.units[1].include_pci_all && !info.units[0].include_pci_all, "include_pci_all");
    CHECK(info.nscopes == 7, "scopes %u", info.nscopes);
    const struct dmar_scope *s = &info.scopes[info.units[0].first_scope];
    CHECK(s->npath == 2 && s->path[0].dev == 0x1c && s->path[1].dev == 0, "two-hop path");
    CHECK(info.rmrrs[0].base == 0x7b800000ull && info.rmrrs[0].limit == 0x7b9fffffull &&
          info.rmrrs[0].nscopes == 1, "rmrr");
    CHECK(info.scopes[info.rmrrs[0].first_scope].owner == DMAR_OWNER_RMRR, "rmrr scope owner");
    /* 05:00.0 is behind 00:1c.0: unit 0 with the bus callback; catch-all unit 1 without. */
    CHECK(dmar_unit_for(&info, 0, 5, 0, 0, full_sec, NULL, NULL) == 0, "two-hop match");
    CHECK(dmar_unit_for(&info, 0, 5, 0, 0, NULL, NULL, NULL) == 1, "falls to INCLUDE_PCI_ALL");
    CHECK(dmar_unit_for(&info, 0, 0, 2, 0, NULL, NULL, NULL) == 0, "00:02.0 explicit");
    CHECK(dmar_unit_for(&info, 0, 0, 0x14, 0, NULL, NULL, NULL) == 1, "00:14.0 catch-all");
}

/* --- malformed tables: each must give its specific error --- */
static void expect(struct tb *t, int want, const char *what)
{
    int rc = dmar_parse(t->b, t->n, &info);
    CHECK(rc == want, "%s: got %d (%s), want %d", what, rc, dmar_strerror(rc), want);
}

static void test_malformed(void)
{
    struct tb t;
    size_t at;
    build_full(&t);
    CHECK(dmar_parse(t.b, 47, &info) == DMAR_E_SHORT, "shorter than header");
    CHECK(dmar_parse(t.b, t.n - 1, &info) == DMAR_E_SHORT, "buffer shorter than length");
    CHECK(dmar_parse(NULL, 0, &info) == DMAR_E_SHORT, "NULL");
    t.b[0] = 'X'; expect(&t, DMAR_E_SIGNATURE, "signature");
    build_full(&t); t.b[60] ^= 1; expect(&t, DMAR_E_CHECKSUM, "checksum");
    build_full(&t); t.b[36] = 20; fix_header(&t); expect(&t, DMAR_E_HAW, "haw 21");

    /* structure length 0 (would loop forever if trusted), 3, past the end */
    dmar_header(&t, 38, 0); at = struct_begin(&t, 0); put(&t, "\0\0\0\0\0\0\0\0\0\0\0\0", 12); fix_header(&t);
    set16(&t, at + 2, 0); fix_header(&t); expect(&t, DMAR_E_STRUCT_LEN, "struct len 0");
    set16(&t, at + 2, 3); fix_header(&t); expect(&t, DMAR_E_STRUCT_LEN, "struct len 3");
    set16(&t, at + 2, 17); fix_header(&t); expect(&t, DMAR_E_STRUCT_LEN, "struct len past end");
    set16(&t, at + 2, 12); t.n = at + 12; fix_header(&t); expect(&t, DMAR_E_STRUCT_LEN, "DRHD under 16");
    dmar_header(&t, 38, 0); put16(&t, 0); fix_header(&t); expect(&t, DMAR_E_STRUCT_LEN, "2 trailing bytes");

    /* device scope lengths: odd, 6 (no path), past the structure */
    uint8_t p[2] = {1, 0};
    for (int bad = 0; bad < 3; bad++) {
        dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90000ull, &at);
        size_t sat = t.n;
        scope(&t, 1, 0, 0, 1, p);
        struct_end(&t, at);
        t.b[sat + 1] = bad == 0 ? 7 : bad == 1 ? 6 : 10;
        fix_header(&t);
        expect(&t, DMAR_E_SCOPE_LEN, bad == 0 ? "scope len odd" : bad == 1 ? "scope without path" : "scope past struct");
    }
    /* scope with 5 bytes left in its structure */
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90000ull, &at); put(&t, "\1\10\0\0\0", 5); struct_end(&t, at);
    fix_header(&t); expect(&t, DMAR_E_SCOPE_LEN, "scope header cut");

    /* DRHD: zero base, unaligned base, repeated base, two INCLUDE_PCI_ALL on one segment */
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0, &at); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_E_DRHD, "DRHD base 0");
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90800ull, &at); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_E_DRHD, "DRHD base unaligned");
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90000ull, &at); struct_end(&t, at);
    drhd(&t, 0, 1, 0xfed90000ull, &at); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_E_DRHD, "DRHD base repeated");
    dmar_header(&t, 38, 0); drhd(&t, 1, 0, 0xfed90000ull, &at); struct_end(&t, at);
    drhd(&t, 1, 0, 0xfed91000ull, &at); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_E_DRHD, "two INCLUDE_PCI_ALL");
    dmar_header(&t, 38, 0); drhd(&t, 1, 0, 0xfed90000ull, &at); struct_end(&t, at);
    drhd(&t, 1, 1, 0xfed91000ull, &at); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_OK, "INCLUDE_PCI_ALL on two segments");

    /* overlapping scopes: 00:01.0 under two units; the same under one unit's other segment is fine */
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90000ull, &at); scope(&t, 1, 0, 0, 1, p); struct_end(&t, at);
    drhd(&t, 0, 0, 0xfed91000ull, &at); scope(&t, 2, 0, 0, 1, p); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_E_SCOPE_DUP, "scope in two DRHDs");
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90000ull, &at); scope(&t, 1, 0, 0, 1, p); struct_end(&t, at);
    drhd(&t, 0, 1, 0xfed91000ull, &at); scope(&t, 1, 0, 0, 1, p); struct_end(&t, at); fix_header(&t);
    expect(&t, DMAR_OK, "same path on two segments");

    /* RMRR: unaligned base, unaligned limit, limit < base, no scope */
    static const uint64_t rr[4][2] = {{0x1000800, 0x1001fff}, {0x1000000, 0x1000ffe},
                                      {0x2000000, 0x1000fff}, {0x1000000, 0x1000fff}};
    for (int i = 0; i < 4; i++) {
        dmar_header(&t, 38, 0); drhd(&t, 1, 0, 0xfed90000ull, &at); struct_end(&t, at);
        at = struct_begin(&t, 1); put16(&t, 0); put16(&t, 0); put64(&t, rr[i][0]); put64(&t, rr[i][1]);
        if (i < 3) scope(&t, 1, 0, 0, 1, p);
        struct_end(&t, at); fix_header(&t);
        expect(&t, DMAR_E_RMRR, "bad RMRR");
    }
    /* short RHSA, ANDD without a name, short ATSR */
    static const struct { uint16_t type; uint16_t len; } sh[3] = {{3, 16}, {4, 8}, {2, 6}};
    for (int i = 0; i < 3; i++) {
        dmar_header(&t, 38, 0); at = struct_begin(&t, sh[i].type);
        for (unsigned k = 4; k < sh[i].len; k++) put8(&t, 0);
        struct_end(&t, at); fix_header(&t);
        expect(&t, DMAR_E_STRUCT_LEN, "short RHSA/ANDD/ATSR");
    }
    /* limits: 17 units; a 9-hop path */
    dmar_header(&t, 38, 0);
    for (int i = 0; i < DMAR_MAX_UNITS + 1; i++) { drhd(&t, 0, 0, 0xfed00000ull + 0x1000ull * i, &at); struct_end(&t, at); }
    fix_header(&t); expect(&t, DMAR_E_LIMIT, "too many units");
    dmar_header(&t, 38, 0);
    for (int i = 0; i < 256; i++) { at = struct_begin(&t, 2); put32(&t, 0); struct_end(&t, at); }
    fix_header(&t); expect(&t, DMAR_E_LIMIT, "256 ATSRs");
    t.n -= 8; fix_header(&t); expect(&t, DMAR_OK, "255 ATSRs");
    uint8_t long_path[2 * (DMAR_MAX_PATH + 1)] = {0};
    dmar_header(&t, 38, 0); drhd(&t, 0, 0, 0xfed90000ull, &at); scope(&t, 1, 0, 0, DMAR_MAX_PATH + 1, long_path);
    struct_end(&t, at); fix_header(&t); expect(&t, DMAR_E_LIMIT, "path too long");
}

/* Every prefix and many random corruptions of a table: parse must return, never crash or read
 * outside the buffer (ASan catches that: each case gets its own exactly-sized heap copy). */
static void fuzz_one(const uint8_t *src, size_t n, unsigned *ok, unsigned *err)
{
    uint8_t *c = malloc(n ? n : 1);
    memcpy(c, src, n);
    int rc = dmar_parse(c, n, &info);
    if (rc == DMAR_OK) (*ok)++; else (*err)++;
    CHECK(rc <= 0 && rc >= DMAR_E_HAW, "rc %d out of range", rc);
    free(c);
}

static void test_fuzz(const char *dir)
{
    static uint8_t buf[8192];
    struct tb t;
    build_full(&t);
    size_t n = load(dir, "q35-DMAR.bin", buf, sizeof buf);
    const uint8_t *srcs[2] = {buf, t.b};
    size_t lens[2] = {n, t.n};
    unsigned ok = 0, err = 0, trunc_ok = 0;
    for (int s = 0; s < 2; s++) {
        for (size_t k = 0; k < lens[s]; k++) {
            unsigned before = ok;
            fuzz_one(srcs[s], k, &ok, &err);
            trunc_ok += ok - before;
        }
        srand(12345);
        static uint8_t m[8192];
        for (int it = 0; it < 20000; it++) {
            memcpy(m, srcs[s], lens[s]);
            int nflip = 1 + rand() % 4;
            for (int f = 0; f < nflip; f++) m[rand() % lens[s]] = (uint8_t)rand();
            /* keep the checksum right so the structure checks are what is exercised */
            m[9] = 0;
            uint8_t sum = 0;
            for (size_t i = 0; i < lens[s]; i++) sum = (uint8_t)(sum + m[i]);
            m[9] = (uint8_t)-sum;
            fuzz_one(m, lens[s], &ok, &err);
        }
    }
    CHECK(trunc_ok == 0, "%u truncated tables accepted", trunc_ok);
    CHECK(err > 0 && ok > 0, "fuzz: %u accepted, %u refused", ok, err);
    printf("test_dmar: fuzz %u accepted, %u refused\n", ok, err);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "vmm/tests/data";
    test_q35(dir);
    test_q35_bridge();
    test_acpica(dir);
    test_full();
    test_malformed();
    test_fuzz(dir);
    return check_summary("test_dmar");
}
