/*
 * pci_mcfg.c - MCFG parser and ECAM access policy (contract in pci_mcfg.h).
 */
#include "pci_mcfg.h"
#include "le_bytes.h"

#define ACPI_HDR_LEN     36u
#define MCFG_HDR_LEN     44u      /* ACPI header + 8 reserved bytes */
#define MCFG_ALLOC_LEN   16u      /* base(8) segment(2) start bus(1) end bus(1) reserved(4) */
#define ECAM_BUS_SHIFT   20u
#define ECAM_DEV_SHIFT   15u
#define ECAM_FN_SHIFT    12u
#define ECAM_BUS_SPACE   (1ull << ECAM_BUS_SHIFT)
#define ECAM_ADDR_LIMIT  (1ull << 52)   /* architectural physical address limit */


const char *mcfg_strerror(int err)
{
    switch (err) {
    case MCFG_OK:          return "ok";
    case MCFG_E_SHORT:     return "MCFG: table shorter than its header or its length field";
    case MCFG_E_SIGNATURE: return "MCFG: signature is not \"MCFG\"";
    case MCFG_E_LENGTH:    return "MCFG: length is not the header plus whole 16-byte allocations";
    case MCFG_E_CHECKSUM:  return "MCFG: checksum does not sum to zero";
    case MCFG_E_LIMIT:     return "MCFG: more allocations than supported";
    case MCFG_E_ALLOC:     return "MCFG: allocation with reversed bus range, unaligned base or overflowing window";
    case MCFG_E_OVERLAP:   return "MCFG: two allocations overlap";
    default:               return "MCFG: unknown error";
    }
}

static uint64_t window_lo(const struct mcfg_alloc *a)
{
    return a->base + ((uint64_t)a->bus_start << ECAM_BUS_SHIFT);
}

static uint64_t window_hi(const struct mcfg_alloc *a)    /* exclusive */
{
    return a->base + (((uint64_t)a->bus_end + 1) << ECAM_BUS_SHIFT);
}

static int check_alloc(const struct mcfg_alloc *a)
{
    if (a->bus_start > a->bus_end || (a->base & (ECAM_BUS_SPACE - 1)))
        return MCFG_E_ALLOC;
    if (a->base >= ECAM_ADDR_LIMIT || window_hi(a) > ECAM_ADDR_LIMIT)
        return MCFG_E_ALLOC;
    return MCFG_OK;
}

static bool overlaps(const struct mcfg_alloc *a, const struct mcfg_alloc *b)
{
    if (window_lo(a) < window_hi(b) && window_lo(b) < window_hi(a))
        return true;
    return a->segment == b->segment && a->bus_start <= b->bus_end && b->bus_start <= a->bus_end;
}

int mcfg_parse(const void *buf, size_t len, struct mcfg_info *out)
{
    const uint8_t *t = buf;
    out->n = 0;
    if (!t || len < MCFG_HDR_LEN)
        return MCFG_E_SHORT;
    if (t[0] != 'M' || t[1] != 'C' || t[2] != 'F' || t[3] != 'G')
        return MCFG_E_SIGNATURE;
    uint32_t tlen = le32(t + 4);
    if (tlen > len)
        return MCFG_E_SHORT;
    if (tlen < MCFG_HDR_LEN || (tlen - MCFG_HDR_LEN) % MCFG_ALLOC_LEN)
        return MCFG_E_LENGTH;
    uint8_t sum = 0;
    for (uint32_t i = 0; i < tlen; i++)
        sum = (uint8_t)(sum + t[i]);
    if (sum)
        return MCFG_E_CHECKSUM;
    unsigned n = (tlen - MCFG_HDR_LEN) / MCFG_ALLOC_LEN;
    if (n > MCFG_MAX_ALLOCS)
        return MCFG_E_LIMIT;
    for (unsigned i = 0; i < n; i++) {
        const uint8_t *p = t + MCFG_HDR_LEN + i * MCFG_ALLOC_LEN;
        struct mcfg_alloc *a = &out->alloc[i];
        a->base = le64(p);
        a->segment = le16(p + 8);
        a->bus_start = p[10];
        a->bus_end = p[11];
        int rc = check_alloc(a);
        if (rc)
            return rc;
        for (unsigned j = 0; j < i; j++)
            if (overlaps(a, &out->alloc[j]))
                return MCFG_E_OVERLAP;
    }
    out->n = n;
    return MCFG_OK;
}

bool mcfg_classify(const struct mcfg_info *m, uint64_t gpa, struct mcfg_target *t)
{
    for (unsigned i = 0; i < m->n; i++) {
        const struct mcfg_alloc *a = &m->alloc[i];
        if (gpa < window_lo(a) || gpa >= window_hi(a))
            continue;
        uint64_t rel = gpa - a->base;
        t->bdf.segment = a->segment;
        t->bdf.bus = (uint8_t)(rel >> ECAM_BUS_SHIFT);
        t->bdf.dev = (uint8_t)((rel >> ECAM_DEV_SHIFT) & 0x1f);
        t->bdf.fn = (uint8_t)((rel >> ECAM_FN_SHIFT) & 7);
        t->offset = (uint16_t)(rel & (MCFG_FUNC_SPACE - 1));
        t->alloc = i;
        return true;
    }
    return false;
}

static bool same_bdf(struct mcfg_bdf a, struct mcfg_bdf b)
{
    return a.segment == b.segment && a.bus == b.bus && a.dev == b.dev && a.fn == b.fn;
}

enum mcfg_action mcfg_decide(const struct mcfg_info *m, const struct mcfg_hidden *h,
                             uint64_t gpa, unsigned size, struct mcfg_target *t)
{
    if (!mcfg_classify(m, gpa, t))
        return MCFG_NOT_ECAM;
    /* An access spilling into the next function's page (or past the window) could touch the
     * hidden one; no driver does that, so refuse it whole. */
    if (size == 0 || size > MCFG_FUNC_SPACE || t->offset + (uint64_t)size > MCFG_FUNC_SPACE)
        return MCFG_HIDE;
    if (same_bdf(t->bdf, h->nic))
        return MCFG_HIDE;
    unsigned nb = h->nbridges < MCFG_MAX_BRIDGES ? h->nbridges : MCFG_MAX_BRIDGES;
    for (unsigned i = 0; i < nb; i++)
        if (same_bdf(t->bdf, h->bridges[i]))
            return MCFG_READ_ONLY;
    return MCFG_PASS;
}

/* CardBus bridges (header type 2, PC Card Standard 8.0, "CardBus bridge configuration
 * header") keep their PCI, CardBus and subordinate bus numbers at the same offsets. */
#define HDR_CARDBUS 2u

unsigned mcfg_write_mask(uint8_t header_type, uint16_t offset, unsigned size)
{
    if (size == 0 || size > MCFG_WRITE_MAX)
        return 0;
    unsigned mask = (1u << size) - 1, layout = header_type & MCFG_HDR_LAYOUT_MASK;
    if (layout != MCFG_HDR_BRIDGE && layout != HDR_CARDBUS)
        return mask;
    for (unsigned i = 0; i < size; i++) {
        unsigned o = offset + i;
        if (o >= MCFG_REG_BUS_NUMBERS && o <= MCFG_REG_BUS_LAST)
            mask &= ~(1u << i);
    }
    return mask;
}

unsigned mcfg_guarded_write(uint8_t header_type, uint16_t offset, unsigned size, uint64_t val,
                            mcfg_store_fn store, void *ctx)
{
    unsigned mask = mcfg_write_mask(header_type, offset, size), n = 0;
    if (mask && mask == (1u << size) - 1) {
        store(ctx, offset, size, val);
        return 1;
    }
    for (unsigned i = 0; i < size; i++)
        if (mask & (1u << i)) {
            store(ctx, (uint16_t)(offset + i), 1, (val >> (8 * i)) & 0xff);
            n++;
        }
    return n;
}

bool mcfg_function_page(const struct mcfg_info *m, struct mcfg_bdf f, uint64_t *gpa)
{
    if (f.dev > 31 || f.fn > 7)
        return false;
    for (unsigned i = 0; i < m->n; i++) {
        const struct mcfg_alloc *a = &m->alloc[i];
        if (a->segment != f.segment || f.bus < a->bus_start || f.bus > a->bus_end)
            continue;
        *gpa = a->base + ((uint64_t)f.bus << ECAM_BUS_SHIFT | (uint64_t)f.dev << ECAM_DEV_SHIFT |
                          (uint64_t)f.fn << ECAM_FN_SHIFT);
        return true;
    }
    return false;
}

/* Type 1 header registers (PCI-to-PCI Bridge Architecture Specification 1.2, 3.2). */
#define CFG_ID           0x00u
#define CFG_HEADER_DWORD 0x0cu           /* header type in bits 23:16 */
#define HDR_TYPE(d)      (((d) >> 16) & MCFG_HDR_LAYOUT_MASK)
#define HDR_MULTIFN(d)   (((d) >> 16) & MCFG_HDR_MULTIFN)

/* The bridge on `bus` whose range holds `target`; false if none. */
static bool bridge_toward(uint8_t bus, uint8_t target, mcfg_cfg_read_fn rd, void *ctx,
                          struct mcfg_bdf *b, uint8_t *sec)
{
    for (unsigned dev = 0; dev < 32; dev++) {
        for (unsigned fn = 0; fn < 8; fn++) {
            uint32_t id = rd(ctx, bus, (uint8_t)dev, (uint8_t)fn, CFG_ID);
            if ((id & 0xffffu) == 0xffffu || (id & 0xffffu) == 0) {
                if (fn == 0)
                    break;              /* no function 0: no device */
                continue;
            }
            uint32_t hdr = rd(ctx, bus, (uint8_t)dev, (uint8_t)fn, CFG_HEADER_DWORD);
            if (HDR_TYPE(hdr) == MCFG_HDR_BRIDGE) {
                uint32_t bn = rd(ctx, bus, (uint8_t)dev, (uint8_t)fn, MCFG_REG_BUS_NUMBERS);
                uint8_t s = (uint8_t)(bn >> 8), sub = (uint8_t)(bn >> 16);
                if (s > bus && s <= target && target <= sub) {
                    *b = (struct mcfg_bdf){ 0, bus, (uint8_t)dev, (uint8_t)fn };
                    *sec = s;
                    return true;
                }
            }
            if (fn == 0 && !HDR_MULTIFN(hdr))
                break;
        }
    }
    return false;
}

int mcfg_path_bridges(struct mcfg_bdf target, mcfg_cfg_read_fn rd, void *ctx,
                      struct mcfg_bdf *out, unsigned max)
{
    if (target.segment != 0)
        return -1;
    unsigned n = 0;
    for (uint8_t bus = 0; bus != target.bus;) {
        uint8_t sec;
        if (n >= max || !bridge_toward(bus, target.bus, rd, ctx, &out[n], &sec))
            return -1;
        n++;
        bus = sec;                      /* strictly increasing: the walk ends */
    }
    return (int)n;
}
