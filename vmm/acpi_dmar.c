/*
 * acpi_dmar.c - DMAR table parser (see acpi_dmar.h for the contract; VT-d spec rev 3.3
 * chapter 8 for the layouts quoted below).
 *
 * Every read goes through rd8/le16/le64 on a (base, length) window already checked to lie
 * inside the caller's buffer, so a lying length field can only produce an error.
 */
#include "acpi_dmar.h"
#include "le_bytes.h"

#define ACPI_HDR_LEN        36u
#define DMAR_HDR_LEN        48u     /* ACPI header + HAW(1) + flags(1) + reserved(10) */
#define DMAR_STRUCT_HDR     4u      /* type(2) + length(2) */
#define DMAR_HAW_MAX        64u

enum {                              /* remapping structure types (8.2) */
    DMAR_TYPE_DRHD = 0, DMAR_TYPE_RMRR = 1, DMAR_TYPE_ATSR = 2, DMAR_TYPE_RHSA = 3,
    DMAR_TYPE_ANDD = 4, DMAR_TYPE_SATC = 5,
};

/* Fixed part of each structure, before its device scopes or name. */
#define DRHD_FIXED  16u             /* type, len, flags, size, segment, base(8) */
#define RMRR_FIXED  24u             /* type, len, reserved(2), segment, base(8), limit(8) */
#define ATSR_FIXED  8u              /* type, len, flags, reserved, segment */
#define RHSA_FIXED  20u             /* type, len, reserved(4), base(8), proximity domain(4) */
#define ANDD_FIXED  8u              /* type, len, reserved(3), ACPI device number; name follows */
#define SATC_FIXED  8u              /* type, len, flags, reserved, segment */

#define SCOPE_FIXED 6u              /* type, length, reserved(2), enumeration id, start bus */
#define PAGE_MASK_4K 0xfffull

#define DRHD_INCLUDE_PCI_ALL 0x1u

static uint8_t rd8(const uint8_t *p) { return p[0]; }

const char *dmar_strerror(int err)
{
    switch (err) {
    case DMAR_OK:            return "ok";
    case DMAR_E_SHORT:       return "DMAR: table shorter than its header or its length field";
    case DMAR_E_SIGNATURE:   return "DMAR: signature is not \"DMAR\"";
    case DMAR_E_CHECKSUM:    return "DMAR: checksum does not sum to zero";
    case DMAR_E_STRUCT_LEN:  return "DMAR: remapping structure length too small or past the table";
    case DMAR_E_SCOPE_LEN:   return "DMAR: device scope length bad or past its structure";
    case DMAR_E_LIMIT:       return "DMAR: more units, RMRRs, scopes or path hops than supported";
    case DMAR_E_DRHD:        return "DMAR: DRHD register base zero, unaligned or repeated, or two INCLUDE_PCI_ALL units on a segment";
    case DMAR_E_RMRR:        return "DMAR: RMRR range unaligned or empty, or without a device scope";
    case DMAR_E_SCOPE_DUP:   return "DMAR: one PCI device in the scope of two DRHDs";
    case DMAR_E_HAW:         return "DMAR: host address width out of range";
    default:                 return "DMAR: unknown error";
    }
}

/*
 * Device scopes fill [p, end) exactly (8.3.1): each is 6 bytes plus 2 per path hop, so its
 * length is even, at least 8, and inside the structure.
 */
static int parse_scopes(const uint8_t *p, const uint8_t *end, struct dmar_info *d,
                        uint8_t owner, uint8_t owner_idx, uint16_t *first, uint16_t *count)
{
    *first = d->nscopes;
    *count = 0;
    while (p < end) {
        size_t room = (size_t)(end - p);
        if (room < SCOPE_FIXED)
            return DMAR_E_SCOPE_LEN;
        uint8_t slen = rd8(p + 1);
        if (slen < SCOPE_FIXED + 2 || (slen - SCOPE_FIXED) % 2 || slen > room)
            return DMAR_E_SCOPE_LEN;
        unsigned hops = (slen - SCOPE_FIXED) / 2u;
        if (hops > DMAR_MAX_PATH || d->nscopes >= DMAR_MAX_SCOPES)
            return DMAR_E_LIMIT;
        struct dmar_scope *s = &d->scopes[d->nscopes++];
        s->type = rd8(p);
        s->enum_id = rd8(p + 4);
        s->start_bus = rd8(p + 5);
        s->npath = (uint8_t)hops;
        for (unsigned i = 0; i < hops; i++) {
            s->path[i].dev = rd8(p + SCOPE_FIXED + 2 * i);
            s->path[i].fn = rd8(p + SCOPE_FIXED + 2 * i + 1);
        }
        s->owner = owner;
        s->owner_idx = owner_idx;
        (*count)++;
        p += slen;
    }
    return DMAR_OK;
}

static int parse_drhd(const uint8_t *p, uint16_t len, struct dmar_info *d)
{
    if (len < DRHD_FIXED)
        return DMAR_E_STRUCT_LEN;
    if (d->nunits >= DMAR_MAX_UNITS)
        return DMAR_E_LIMIT;
    struct dmar_unit *u = &d->units[d->nunits];
    u->flags = rd8(p + 4);
    u->size = rd8(p + 5);
    u->segment = le16(p + 6);
    u->reg_base = le64(p + 8);
    u->include_pci_all = u->flags & DRHD_INCLUDE_PCI_ALL;
    /* The register set is at least one 4 KiB page, page aligned (10.4). */
    if (u->reg_base == 0 || (u->reg_base & PAGE_MASK_4K))
        return DMAR_E_DRHD;
    for (unsigned i = 0; i < d->nunits; i++) {
        if (d->units[i].reg_base == u->reg_base)
            return DMAR_E_DRHD;
        if (u->include_pci_all && d->units[i].include_pci_all && d->units[i].segment == u->segment)
            return DMAR_E_DRHD;
    }
    int rc = parse_scopes(p + DRHD_FIXED, p + len, d, DMAR_OWNER_DRHD, (uint8_t)d->nunits,
                          &u->first_scope, &u->nscopes);
    if (rc)
        return rc;
    d->nunits++;
    return DMAR_OK;
}

static int parse_rmrr(const uint8_t *p, uint16_t len, struct dmar_info *d)
{
    if (len < RMRR_FIXED)
        return DMAR_E_STRUCT_LEN;
    if (d->nrmrrs >= DMAR_MAX_RMRRS)
        return DMAR_E_LIMIT;
    struct dmar_rmrr *r = &d->rmrrs[d->nrmrrs];
    r->segment = le16(p + 6);
    r->base = le64(p + 8);
    r->limit = le64(p + 16);
    /* 8.4: base 4 KiB aligned, limit + 1 4 KiB aligned; the region is what stays mapped. */
    if ((r->base & PAGE_MASK_4K) || (~r->limit & PAGE_MASK_4K) || r->limit < r->base)
        return DMAR_E_RMRR;
    int rc = parse_scopes(p + RMRR_FIXED, p + len, d, DMAR_OWNER_RMRR, (uint8_t)d->nrmrrs,
                          &r->first_scope, &r->nscopes);
    if (rc)
        return rc;
    if (r->nscopes == 0)
        return DMAR_E_RMRR;
    d->nrmrrs++;
    return DMAR_OK;
}

/* ATSR and SATC share a layout: flags, reserved, segment, then scopes (8.5, 8.8). */
static int parse_scoped_other(const uint8_t *p, uint16_t len, uint16_t fixed, uint8_t owner,
                              uint16_t *counter, struct dmar_info *d)
{
    if (len < fixed)
        return DMAR_E_STRUCT_LEN;
    if (*counter == UINT8_MAX)          /* owner_idx is 8 bits wide */
        return DMAR_E_LIMIT;
    uint16_t first, n;
    int rc = parse_scopes(p + fixed, p + len, d, owner, (uint8_t)*counter, &first, &n);
    if (rc)
        return rc;
    (*counter)++;
    return DMAR_OK;
}

static bool same_pci_scope(const struct dmar_scope *a, const struct dmar_scope *b)
{
    if (a->start_bus != b->start_bus || a->npath != b->npath)
        return false;
    for (unsigned i = 0; i < a->npath; i++)
        if (a->path[i].dev != b->path[i].dev || a->path[i].fn != b->path[i].fn)
            return false;
    return true;
}

static bool is_pci_scope(const struct dmar_scope *s)
{
    return s->type == DMAR_SCOPE_PCI_ENDPOINT || s->type == DMAR_SCOPE_PCI_BRIDGE;
}

/* 8.3: each PCI device is reported under at most one DRHD; two claims leave it unclear which
 * unit's tables it uses. Compared as written (start bus + path), same segment only. */
static int check_scope_overlap(const struct dmar_info *d)
{
    for (unsigned i = 0; i < d->nscopes; i++) {
        const struct dmar_scope *a = &d->scopes[i];
        if (a->owner != DMAR_OWNER_DRHD || !is_pci_scope(a))
            continue;
        for (unsigned j = i + 1; j < d->nscopes; j++) {
            const struct dmar_scope *b = &d->scopes[j];
            if (b->owner != DMAR_OWNER_DRHD || !is_pci_scope(b))
                continue;
            if (d->units[a->owner_idx].segment != d->units[b->owner_idx].segment)
                continue;
            if (same_pci_scope(a, b))
                return DMAR_E_SCOPE_DUP;
        }
    }
    return DMAR_OK;
}

static int parse_struct(const uint8_t *p, uint16_t type, uint16_t len, struct dmar_info *d)
{
    switch (type) {
    case DMAR_TYPE_DRHD: return parse_drhd(p, len, d);
    case DMAR_TYPE_RMRR: return parse_rmrr(p, len, d);
    case DMAR_TYPE_ATSR: return parse_scoped_other(p, len, ATSR_FIXED, DMAR_OWNER_ATSR, &d->natsr, d);
    case DMAR_TYPE_SATC: return parse_scoped_other(p, len, SATC_FIXED, DMAR_OWNER_SATC, &d->nsatc, d);
    case DMAR_TYPE_RHSA:
        if (len < RHSA_FIXED)
            return DMAR_E_STRUCT_LEN;
        if (d->nrhsa == UINT16_MAX)
            return DMAR_E_LIMIT;
        d->nrhsa++;
        return DMAR_OK;
    case DMAR_TYPE_ANDD:
        if (len <= ANDD_FIXED)      /* the object name holds at least its terminator */
            return DMAR_E_STRUCT_LEN;
        if (d->nandd == UINT16_MAX)
            return DMAR_E_LIMIT;
        d->nandd++;
        return DMAR_OK;
    default:
        if (d->n_unknown == UINT16_MAX)
            return DMAR_E_LIMIT;
        d->n_unknown++;
        return DMAR_OK;
    }
}

static void clear_info(struct dmar_info *d)
{
    uint8_t *b = (uint8_t *)d;
    for (size_t i = 0; i < sizeof *d; i++)
        b[i] = 0;
}

int dmar_parse(const void *buf, size_t len, struct dmar_info *out)
{
    const uint8_t *t = buf;
    clear_info(out);
    if (!t || len < DMAR_HDR_LEN)
        return DMAR_E_SHORT;
    if (t[0] != 'D' || t[1] != 'M' || t[2] != 'A' || t[3] != 'R')
        return DMAR_E_SIGNATURE;
    uint32_t tlen = le32(t + 4);
    if (tlen < DMAR_HDR_LEN || tlen > len)
        return DMAR_E_SHORT;
    uint8_t sum = 0;
    for (uint32_t i = 0; i < tlen; i++)
        sum = (uint8_t)(sum + t[i]);
    if (sum)
        return DMAR_E_CHECKSUM;
    unsigned haw = rd8(t + ACPI_HDR_LEN) + 1u;
    if (haw < 32 || haw > DMAR_HAW_MAX)   /* DMA below 4 GiB is always addressable */
        return DMAR_E_HAW;
    out->host_addr_width = (uint8_t)haw;
    out->flags = rd8(t + ACPI_HDR_LEN + 1);

    uint32_t off = DMAR_HDR_LEN;
    while (off < tlen) {
        if (tlen - off < DMAR_STRUCT_HDR)
            return DMAR_E_STRUCT_LEN;
        uint16_t type = le16(t + off), slen = le16(t + off + 2);
        if (slen < DMAR_STRUCT_HDR || slen > tlen - off)
            return DMAR_E_STRUCT_LEN;
        int rc = parse_struct(t + off, type, slen, out);
        if (rc)
            return rc;
        off += slen;
    }
    return check_scope_overlap(out);
}

/* Follow the path from start_bus; the last hop is the device itself. */
static bool scope_target(const struct dmar_scope *s, dmar_bus_fn sec_bus, void *ctx,
                         uint8_t *bus, uint8_t *dev, uint8_t *fn)
{
    uint8_t b = s->start_bus;
    for (unsigned i = 0; i + 1 < s->npath; i++) {
        if (!sec_bus)
            return false;
        int nb = sec_bus(ctx, b, s->path[i].dev, s->path[i].fn);
        if (nb < 0 || nb > 255)
            return false;
        b = (uint8_t)nb;
    }
    *bus = b;
    *dev = s->path[s->npath - 1].dev;
    *fn = s->path[s->npath - 1].fn;
    return true;
}

bool dmar_scope_matches(const struct dmar_scope *s, uint8_t bus, uint8_t dev, uint8_t fn,
                        dmar_bus_fn sec_bus, dmar_bus_fn sub_bus, void *ctx)
{
    uint8_t tb, td, tf;
    if (!is_pci_scope(s) || s->npath == 0 || !scope_target(s, sec_bus, ctx, &tb, &td, &tf))
        return false;
    if (tb == bus && td == dev && tf == fn)
        return true;
    if (s->type != DMAR_SCOPE_PCI_BRIDGE || !sec_bus || !sub_bus)
        return false;
    /* Everything on the bridge's secondary..subordinate buses is behind it (8.3.1). */
    int sec = sec_bus(ctx, tb, td, tf), sub = sub_bus(ctx, tb, td, tf);
    return sec > 0 && sub >= sec && bus >= sec && bus <= sub;
}

int dmar_unit_for(const struct dmar_info *d, uint16_t segment, uint8_t bus, uint8_t dev,
                  uint8_t fn, dmar_bus_fn sec_bus, dmar_bus_fn sub_bus, void *ctx)
{
    int all = -1;
    for (unsigned u = 0; u < d->nunits; u++) {
        const struct dmar_unit *un = &d->units[u];
        if (un->segment != segment)
            continue;
        if (un->include_pci_all) {
            all = (int)u;
            continue;
        }
        for (unsigned i = 0; i < un->nscopes; i++)
            if (dmar_scope_matches(&d->scopes[un->first_scope + i], bus, dev, fn,
                                   sec_bus, sub_bus, ctx))
                return (int)u;
    }
    return all;
}
