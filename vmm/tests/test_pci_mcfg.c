/*
 * test_pci_mcfg.c - host unit test of vmm/pci_mcfg.c: the MCFG of QEMU q35
 * (vmm/tests/data/q35-MCFG.bin; iasl -d: base 0xB0000000, segment 0, buses 0-0xFF),
 * ECAM address decoding against the PCIe layout computed independently, the hiding policy
 * (NIC hidden, bridges above it read-only, page-crossing accesses hidden), malformed tables,
 * every truncation and random corruption (run under ASan/UBSan too).
 * Usage: test_pci_mcfg [DATA_DIR]   Prints failed checks and "test_pci_mcfg: N passed, N failed".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pci_mcfg.h"
#include "check.h"


static struct mcfg_info m;

struct tb { uint8_t b[1024]; size_t n; };
static void put(struct tb *t, const void *p, size_t n) { memcpy(t->b + t->n, p, n); t->n += n; }
static void fix(struct tb *t)
{
    uint32_t len = (uint32_t)t->n;
    memcpy(t->b + 4, &len, 4);
    t->b[9] = 0;
    uint8_t s = 0;
    for (size_t i = 0; i < t->n; i++) s = (uint8_t)(s + t->b[i]);
    t->b[9] = (uint8_t)-s;
}
static void header(struct tb *t)
{
    static const uint8_t h[44] = "MCFG\0\0\0\0\1\0HVTESTSYNTHMCF\1\0\0\0HVT \1\0\0\0";
    t->n = 0;
    put(t, h, sizeof h);
}
static void alloc(struct tb *t, uint64_t base, uint16_t seg, uint8_t b0, uint8_t b1)
{
    put(t, &base, 8); put(t, &seg, 2); put(t, &b0, 1); put(t, &b1, 1);
    uint32_t z = 0; put(t, &z, 4);
}

static uint64_t ecam(uint64_t base, unsigned bus, unsigned dev, unsigned fn, unsigned off)
{
    return base + bus * 0x100000ull + dev * 0x8000ull + fn * 0x1000ull + off;
}

static void test_q35(const char *dir)
{
    char path[512];
    static uint8_t buf[4096];
    snprintf(path, sizeof path, "%s/q35-MCFG.bin", dir);
    FILE *f = fopen(path, "rb");
    if (!f) { printf("FAIL cannot open %s\n", path); check_failed++; return; }
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    int rc = mcfg_parse(buf, n, &m);
    CHECK(rc == MCFG_OK, "q35 MCFG: %s", mcfg_strerror(rc));
    CHECK(m.n == 1 && m.alloc[0].base == 0xb0000000ull && m.alloc[0].segment == 0 &&
          m.alloc[0].bus_start == 0 && m.alloc[0].bus_end == 0xff, "q35 allocation");

    struct mcfg_target t;
    CHECK(!mcfg_classify(&m, 0xaffffffcull, &t), "below the window");
    CHECK(!mcfg_classify(&m, 0xc0000000ull, &t), "above the window");
    CHECK(mcfg_classify(&m, 0xbfffffffull, &t) && t.bdf.bus == 0xff && t.bdf.dev == 31 &&
          t.bdf.fn == 7 && t.offset == 0xfff, "last byte");
    /* every function, a few offsets, against the PCIe formula */
    unsigned bad = 0;
    for (unsigned bus = 0; bus < 256; bus += 17)
        for (unsigned dev = 0; dev < 32; dev++)
            for (unsigned fn = 0; fn < 8; fn++) {
                unsigned off = (bus * 7 + dev * 13 + fn * 251) & 0xffc;
                if (!mcfg_classify(&m, ecam(0xb0000000ull, bus, dev, fn, off), &t) ||
                    t.bdf.bus != bus || t.bdf.dev != dev || t.bdf.fn != fn || t.offset != off)
                    bad++;
                uint64_t pg;
                if (!mcfg_function_page(&m, (struct mcfg_bdf){0, (uint8_t)bus, (uint8_t)dev, (uint8_t)fn}, &pg) ||
                    pg != ecam(0xb0000000ull, bus, dev, fn, 0))
                    bad++;
            }
    CHECK(bad == 0, "%u ECAM decodings wrong", bad);

    /* The capture's e1000e at 01:00.0 behind the root port 00:03.0 (iasl: bridge scope 03,00). */
    struct mcfg_hidden h = { .nic = {0, 1, 0, 0}, .nbridges = 1, .bridges = {{0, 0, 3, 0}} };
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 1, 0, 0, 0), 4, &t) == MCFG_HIDE, "NIC vendor id");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 1, 0, 0, 0x100), 4, &t) == MCFG_HIDE, "NIC extended cap");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 1, 0, 1, 0), 4, &t) == MCFG_PASS, "NIC's fn 1 not hidden");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 3, 0, 0x18), 4, &t) == MCFG_READ_ONLY, "bridge bus numbers");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 3, 0, 0x3e), 2, &t) == MCFG_READ_ONLY, "bridge control");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 2, 0, 0), 4, &t) == MCFG_PASS, "VGA passes");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 0x1f, 0, 0), 1, &t) == MCFG_PASS, "LPC passes");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 31, 7, 0xffc), 8, &t) == MCFG_HIDE, "crosses into bus 1");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 0, 0, 0xffe), 4, &t) == MCFG_HIDE, "crosses a page");
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 0, 0, 0, 0xffc), 4, &t) == MCFG_PASS, "last dword");
    CHECK(mcfg_decide(&m, &h, 0xfec00000ull, 4, &t) == MCFG_NOT_ECAM, "IOAPIC not ECAM");
    h.nic.segment = 1;
    CHECK(mcfg_decide(&m, &h, ecam(0xb0000000ull, 1, 0, 0, 0), 4, &t) == MCFG_PASS, "other segment's BDF");
}

static void test_multi(void)
{
    struct tb t;
    header(&t);
    alloc(&t, 0xe0000000ull, 0, 0, 0x3f);
    alloc(&t, 0x3f0000000ull, 1, 0x80, 0x8f);      /* base is bus 0: window starts at bus 0x80 */
    fix(&t);
    int rc = mcfg_parse(t.b, t.n, &m);
    CHECK(rc == MCFG_OK && m.n == 2, "two allocations: %s", mcfg_strerror(rc));
    struct mcfg_target tg;
    CHECK(!mcfg_classify(&m, ecam(0xe0000000ull, 0x40, 0, 0, 0), &tg), "past bus 0x3f");
    CHECK(!mcfg_classify(&m, ecam(0x3f0000000ull, 0x7f, 31, 7, 0), &tg), "below start bus");
    CHECK(mcfg_classify(&m, ecam(0x3f0000000ull, 0x85, 2, 3, 0x40), &tg) && tg.bdf.segment == 1 &&
          tg.bdf.bus == 0x85 && tg.bdf.dev == 2 && tg.bdf.fn == 3 && tg.offset == 0x40 && tg.alloc == 1,
          "segment 1 decode");
    uint64_t pg;
    CHECK(!mcfg_function_page(&m, (struct mcfg_bdf){1, 0x7f, 0, 0}, &pg), "no page below start bus");
    CHECK(!mcfg_function_page(&m, (struct mcfg_bdf){2, 0, 0, 0}, &pg), "no segment 2");
    CHECK(!mcfg_function_page(&m, (struct mcfg_bdf){0, 0, 32, 0}, &pg), "dev 32");
}

static void expect(struct tb *t, int want, const char *what)
{
    int rc = mcfg_parse(t->b, t->n, &m);
    CHECK(rc == want, "%s: got %d (%s), want %d", what, rc, mcfg_strerror(rc), want);
}

static void test_malformed(void)
{
    struct tb t;
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0xff); fix(&t);
    CHECK(mcfg_parse(t.b, 43, &m) == MCFG_E_SHORT, "shorter than header");
    CHECK(mcfg_parse(t.b, t.n - 1, &m) == MCFG_E_SHORT, "shorter than length");
    t.b[1] = 'X'; expect(&t, MCFG_E_SIGNATURE, "signature");
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0xff); fix(&t); t.b[50] ^= 4; expect(&t, MCFG_E_CHECKSUM, "checksum");
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0xff); t.n -= 4; fix(&t); expect(&t, MCFG_E_LENGTH, "partial allocation");
    header(&t); fix(&t); expect(&t, MCFG_OK, "no allocation");
    header(&t); alloc(&t, 0xb0000000ull, 0, 9, 8); fix(&t); expect(&t, MCFG_E_ALLOC, "reversed buses");
    header(&t); alloc(&t, 0xb0080000ull, 0, 0, 8); fix(&t); expect(&t, MCFG_E_ALLOC, "unaligned base");
    header(&t); alloc(&t, 0xfffffffffff00000ull, 0, 0, 0xff); fix(&t); expect(&t, MCFG_E_ALLOC, "wraps");
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0x7f); alloc(&t, 0xb0000000ull, 1, 0x7f, 0xff); fix(&t);
    expect(&t, MCFG_E_OVERLAP, "address overlap at bus 0x7f");
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0x7f); alloc(&t, 0xc0000000ull, 0, 0x70, 0x7f); fix(&t);
    expect(&t, MCFG_E_OVERLAP, "bus overlap on one segment");
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0x7f); alloc(&t, 0xb0000000ull, 1, 0x80, 0xff); fix(&t);
    expect(&t, MCFG_OK, "adjacent windows, two segments");
    header(&t);
    for (int i = 0; i < MCFG_MAX_ALLOCS + 1; i++) alloc(&t, 0x100000000ull * (i + 1), (uint16_t)i, 0, 0xff);
    fix(&t); expect(&t, MCFG_E_LIMIT, "too many allocations");
}

static void test_fuzz(void)
{
    struct tb t;
    header(&t); alloc(&t, 0xb0000000ull, 0, 0, 0x7f); alloc(&t, 0x400000000ull, 1, 0, 0xff); fix(&t);
    unsigned ok = 0, err = 0;
    for (size_t k = 0; k < t.n; k++) {
        uint8_t *c = malloc(k ? k : 1);
        memcpy(c, t.b, k);
        CHECK(mcfg_parse(c, k, &m) < 0, "truncation to %zu accepted", k);
        free(c);
    }
    srand(777);
    struct mcfg_hidden h = { .nic = {0, 1, 0, 0}, .nbridges = 1, .bridges = {{0, 0, 3, 0}} };
    for (int it = 0; it < 20000; it++) {
        uint8_t *c = malloc(t.n);
        memcpy(c, t.b, t.n);
        for (int f = 0; f < 3; f++) c[rand() % t.n] = (uint8_t)rand();
        c[9] = 0;
        uint8_t s = 0;
        for (size_t i = 0; i < t.n; i++) s = (uint8_t)(s + c[i]);
        c[9] = (uint8_t)-s;
        int rc = mcfg_parse(c, t.n, &m);
        if (rc == MCFG_OK) {
            ok++;
            /* whatever was accepted decodes within its window and never as a wrong BDF */
            for (unsigned a = 0; a < m.n; a++) {
                struct mcfg_target tg;
                uint64_t g = m.alloc[a].base + (((uint64_t)m.alloc[a].bus_end + 1) << 20) - 4;
                enum mcfg_action act = mcfg_decide(&m, &h, g, 4, &tg);
                CHECK(act != MCFG_NOT_ECAM && tg.bdf.bus == m.alloc[a].bus_end && tg.bdf.dev == 31 &&
                      tg.bdf.fn == 7 && tg.offset == 0xffc && tg.alloc == a, "accepted table decodes wrong");
            }
        } else {
            err++;
        }
        free(c);
    }
    CHECK(ok > 0 && err > 0, "fuzz: %u accepted, %u refused", ok, err);
    printf("test_pci_mcfg: fuzz %u accepted, %u refused\n", ok, err);
}

/* A fake configuration space: functions with IDs, header types and bus-number registers. */
struct fake_fn { uint8_t bus, dev, fn; uint32_t id, hdr, busnr; };
struct fake_pci { const struct fake_fn *f; unsigned n; unsigned reads; };
static uint32_t fake_rd(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    struct fake_pci *p = ctx;
    p->reads++;
    for (unsigned i = 0; i < p->n; i++) {
        const struct fake_fn *f = &p->f[i];
        if (f->bus != bus || f->dev != dev || f->fn != fn) continue;
        return off == 0 ? f->id : off == 0x0c ? f->hdr : off == 0x18 ? f->busnr : 0;
    }
    return 0xffffffffu;
}
#define BR(b, d, f, pri, sec, sub) { b, d, f, 0x12348086u, 0x00010000u, (uint32_t)(pri) | (sec) << 8 | (sub) << 16 }
#define EP(b, d, f, mf) { b, d, f, 0x100e8086u, (mf) ? 0x00800000u : 0, 0 }

/* The bridges above the NIC: found hop by hop, nearest the root first; hostile bus numbers
 * (a loop back to a lower bus, a range that does not hold the target) give -1. */
static void test_path_bridges(void)
{
    /* bus 0: host bridge 00:00.0, a multi-function device 00:01 with a bridge at fn 2
     * (-> bus 1-3), a root port 00:1c.0 (-> bus 4-4). bus 1: switch port 01:00.0 (-> 2-3).
     * bus 2: bridge 02:03.0 (-> 3-3). bus 3: the NIC 03:00.0. */
    static const struct fake_fn topo[] = {
        EP(0, 0, 0, 0), EP(0, 1, 0, 1), BR(0, 1, 2, 0, 1, 3), BR(0, 0x1c, 0, 0, 4, 4),
        BR(1, 0, 0, 1, 2, 3), BR(2, 3, 0, 2, 3, 3), EP(3, 0, 0, 0), EP(4, 0, 0, 0),
    };
    struct fake_pci p = { topo, sizeof topo / sizeof topo[0], 0 };
    struct mcfg_bdf out[MCFG_MAX_BRIDGES];
    int n = mcfg_path_bridges((struct mcfg_bdf){ 0, 3, 0, 0 }, fake_rd, &p, out, MCFG_MAX_BRIDGES);
    CHECK(n == 3, "3 bridges above 03:00.0, got %d", n);
    CHECK(n == 3 && out[0].bus == 0 && out[0].dev == 1 && out[0].fn == 2 && out[1].bus == 1 &&
          out[1].dev == 0 && out[2].bus == 2 && out[2].dev == 3, "the path 00:01.2 -> 01:00.0 -> 02:03.0");
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 4, 0, 0 }, fake_rd, &p, out, MCFG_MAX_BRIDGES);
    CHECK(n == 1 && out[0].dev == 0x1c, "root port above bus 4: %d", n);
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 0, 3, 0 }, fake_rd, &p, out, MCFG_MAX_BRIDGES);
    CHECK(n == 0, "a function on the root bus: no bridge (%d)", n);
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 3, 0, 0 }, fake_rd, &p, out, 2);
    CHECK(n == -1, "more hops than the caller holds: -1 (%d)", n);
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 9, 0, 0 }, fake_rd, &p, out, MCFG_MAX_BRIDGES);
    CHECK(n == -1, "no bridge leads to bus 9: -1 (%d)", n);
    n = mcfg_path_bridges((struct mcfg_bdf){ 1, 3, 0, 0 }, fake_rd, &p, out, MCFG_MAX_BRIDGES);
    CHECK(n == -1, "segment 1 unknown: -1");
    /* A bridge whose secondary bus is its own or a lower one would loop: never taken. */
    static const struct fake_fn loop[] = { BR(0, 2, 0, 0, 0, 9), BR(0, 3, 0, 0, 5, 5), BR(5, 0, 0, 5, 5, 9) };
    struct fake_pci q = { loop, 3, 0 };
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 7, 0, 0 }, fake_rd, &q, out, MCFG_MAX_BRIDGES);
    CHECK(n == -1 && q.reads < 2000, "looping bus numbers end the walk: %d after %u reads", n, q.reads);
    /* A hostile bridge claiming its own bus comes first on the bus; the real one after it. */
    static const struct fake_fn decoy[] = { BR(0, 2, 0, 0, 0, 9), BR(0, 3, 0, 0, 7, 7), EP(7, 0, 0, 0) };
    struct fake_pci dq = { decoy, 3, 0 };
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 7, 0, 0 }, fake_rd, &dq, out, MCFG_MAX_BRIDGES);
    CHECK(n == 1 && out[0].dev == 3, "the decoy 00:02.0 (secondary = its own bus) is passed over: %d", n);
    /* Function 0 absent: functions 1-7 of that device are not looked at. */
    static const struct fake_fn nofn0[] = { BR(0, 4, 1, 0, 1, 1) };
    struct fake_pci r = { nofn0, 1, 0 };
    n = mcfg_path_bridges((struct mcfg_bdf){ 0, 1, 0, 0 }, fake_rd, &r, out, MCFG_MAX_BRIDGES);
    CHECK(n == -1, "a bridge at fn 1 without fn 0 is not a device (%d)", n);
    /* Every bridge the walk returns is read-only to the guest's ECAM accesses. */
    struct mcfg_hidden h = { .nic = { 0, 3, 0, 0 } };
    h.nbridges = (unsigned)mcfg_path_bridges(h.nic, fake_rd, &p, h.bridges, MCFG_MAX_BRIDGES);
    struct mcfg_info q35 = { 1, { { 0xb0000000ull, 0, 0, 255 } } };
    struct mcfg_target t;
    for (unsigned i = 0; i < h.nbridges; i++) {
        uint64_t page;
        CHECK(mcfg_function_page(&q35, h.bridges[i], &page) &&
              mcfg_decide(&q35, &h, page + 0x18, 4, &t) == MCFG_READ_ONLY &&
              mcfg_decide(&q35, &h, page + 0x3e, 2, &t) == MCFG_READ_ONLY &&
              mcfg_decide(&q35, &h, page + 0x100, 4, &t) == MCFG_READ_ONLY, "bridge %u page read-only", i);
    }
    uint64_t other;
    CHECK(mcfg_function_page(&q35, (struct mcfg_bdf){ 0, 0, 0x1c, 0 }, &other) &&
          mcfg_decide(&q35, &h, other + 0x18, 4, &t) == MCFG_PASS, "a bridge off the path passes");
}

/* A function's configuration space as the stores of mcfg_guarded_write reach it. */
struct model { uint8_t *space; unsigned stores, widest; };
static void model_store(void *ctx, uint16_t off, unsigned size, uint64_t val)
{
    struct model *m = ctx;
    m->stores++;
    if (size > m->widest)
        m->widest = size;
    for (unsigned i = 0; i < size; i++)
        m->space[off + i] = (uint8_t)(val >> (8 * i));
}
static unsigned last_stores, last_widest;
static void guarded_write(uint8_t *space, uint16_t off, unsigned size, uint64_t val)
{
    struct model m = { space, 0, 0 };
    unsigned n = mcfg_guarded_write(space[MCFG_REG_HEADER_TYPE], off, size, val, model_store, &m);
    last_stores = m.stores == n ? n : ~0u;
    last_widest = m.widest;
}

/* Every bridge's bus numbers (0x18-0x1A) stay what the firmware set, whatever the width and
 * alignment of the write that covers them; every other byte a write covers lands (the
 * secondary latency timer at 0x1B, the I/O base beyond it, a type-0 function's BAR 2). */
static void test_bus_guard(void)
{
    static const uint8_t types[] = { 0x00, 0x80, 0x01, 0x81, 0x02, 0x82 };
    static const unsigned sizes[] = { 1, 2, 4, 8 };
    for (unsigned ti = 0; ti < sizeof types; ti++) {
        /* bridges: type 1 (PCI-to-PCI) and type 2 (CardBus, the same three bus numbers) */
        bool bridge = (types[ti] & MCFG_HDR_LAYOUT_MASK) == MCFG_HDR_BRIDGE ||
                      (types[ti] & MCFG_HDR_LAYOUT_MASK) == 2;
        unsigned wrong = 0, cases = 0;
        for (unsigned si = 0; si < 4; si++) {
            for (unsigned off = 0x10; off <= 0x20; off++) {
                unsigned size = sizes[si];
                uint8_t space[0x40], before[0x40];
                for (unsigned i = 0; i < sizeof space; i++)
                    space[i] = (uint8_t)(0x30 + i);
                space[MCFG_REG_HEADER_TYPE] = types[ti];
                space[0x18] = 0x00; space[0x19] = 0x05; space[0x1a] = 0x07; space[0x1b] = 0x40;
                memcpy(before, space, sizeof space);
                uint64_t val = 0xa1b2c3d4e5f60718ull;
                guarded_write(space, (uint16_t)off, size, val);
                cases++;
                /* A write that holds nothing back goes out whole, as the guest made it (a
                 * BAR written in one dword); one that does, a byte at a time. */
                bool touches = bridge && off <= MCFG_REG_BUS_LAST && off + size > MCFG_REG_BUS_NUMBERS;
                unsigned held = 0;
                for (unsigned i = 0; i < size; i++)
                    held += bridge && off + i >= MCFG_REG_BUS_NUMBERS && off + i <= MCFG_REG_BUS_LAST;
                if (touches ? last_stores != size - held || last_widest > 1
                            : last_stores != 1 || last_widest != size) {
                    wrong++;
                    continue;
                }
                for (unsigned i = 0; i < size; i++) {
                    unsigned o = off + i;
                    bool bus = o >= MCFG_REG_BUS_NUMBERS && o <= MCFG_REG_BUS_LAST;
                    uint8_t want = bridge && bus ? before[o] : (uint8_t)(val >> (8 * i));
                    if (space[o] != want) {
                        wrong++;
                        break;
                    }
                }
            }
        }
        CHECK(wrong == 0, "header type %#x: %u of %u writes over 0x10-0x27 land wrong (%s)",
              types[ti], wrong, cases, bridge ? "bus numbers must stay" : "every byte lands");
    }
    /* The forms Linux uses, one by one, on a bridge. */
    CHECK(mcfg_write_mask(0x01, 0x18, 4) == 0x8, "dword at 0x18: only the latency timer (%#x)",
          mcfg_write_mask(0x01, 0x18, 4));
    CHECK(mcfg_write_mask(0x01, 0x1b, 1) == 0x1, "byte at 0x1B passes");
    CHECK(mcfg_write_mask(0x01, 0x19, 1) == 0, "byte at 0x19 (secondary) dropped");
    CHECK(mcfg_write_mask(0x81, 0x1a, 2) == 0x2, "word at 0x1A: 0x1B only");
    CHECK(mcfg_write_mask(0x01, 0x18, 2) == 0, "word at 0x18: nothing");
    CHECK(mcfg_write_mask(0x01, 0x14, 8) == 0x8f, "qword at 0x14: BAR 1 and 0x1B (%#x)",
          mcfg_write_mask(0x01, 0x14, 8));
    CHECK(mcfg_write_mask(0x01, 0x1c, 4) == 0xf && mcfg_write_mask(0x01, 0x04, 2) == 0x3,
          "I/O base and command pass");
    CHECK(mcfg_write_mask(0x00, 0x18, 4) == 0xf, "a type-0 function's BAR 2 passes");
    CHECK(mcfg_write_mask(0x01, 0x18, 0) == 0 && mcfg_write_mask(0x01, 0x18, 9) == 0 &&
          mcfg_write_mask(0x00, 0x10, 16) == 0, "no width 0 or above 8");
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "vmm/tests/data";
    test_q35(dir);
    test_multi();
    test_malformed();
    test_path_bridges();
    test_bus_guard();
    test_fuzz();
    return check_summary("test_pci_mcfg");
}
