/*
 * acpi_dmar.h - parse the ACPI DMAR table (Intel Virtualization Technology for Directed I/O
 * Architecture Specification, revision 3.3, chapter 8 "BIOS Considerations": 8.1 the DMA
 * Remapping Reporting Structure, 8.3 DRHD and 8.3.1 Device Scope, 8.4 RMRR, 8.5 ATSR,
 * 8.6 RHSA, 8.7 ANDD, 8.8 SATC).
 *
 * Contract:
 *  - The table comes from firmware and is treated as hostile: dmar_parse() reads only inside
 *    [buf, buf + len), checks the signature, the header's length against len and the checksum,
 *    every structure's and every device scope's length against its parent, and returns a
 *    negative DMAR_E_* on the first violation (dmar_strerror names it); *out is then
 *    unspecified. No allocation: everything lands in struct dmar_info's fixed arrays; a table
 *    with more units, RMRRs, scopes or path hops than those hold (or more than 255 ATSRs or
 *    SATCs, or 65535 of another type) is refused (DMAR_E_LIMIT),
 *    never silently truncated, since a missing unit or RMRR would leave DMA unconfined.
 *  - Beyond lengths it refuses what would make the remapping setup ambiguous: a DRHD whose
 *    register base is zero, unaligned or repeated; two INCLUDE_PCI_ALL units on one segment;
 *    a PCI endpoint/bridge scope claimed by two DRHDs; an RMRR whose range is unaligned or
 *    empty, or that has no device scope.
 *  - Structure types the revision reserves are skipped (the spec asks software to ignore
 *    them) and counted in n_unknown. Pure C, freestanding: host-testable.
 */
#ifndef HVT_ACPI_DMAR_H
#define HVT_ACPI_DMAR_H
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define DMAR_MAX_UNITS   16
#define DMAR_MAX_RMRRS   16
#define DMAR_MAX_SCOPES  128     /* all structures' device scopes together */
#define DMAR_MAX_PATH    8       /* hops of one scope's path */

/* Device scope types (8.3.1) */
enum dmar_scope_type {
    DMAR_SCOPE_PCI_ENDPOINT = 1,
    DMAR_SCOPE_PCI_BRIDGE   = 2,
    DMAR_SCOPE_IOAPIC       = 3,
    DMAR_SCOPE_HPET         = 4,
    DMAR_SCOPE_ACPI_NAMESPACE = 5,
};

/* Which structure a scope belongs to. */
enum dmar_owner { DMAR_OWNER_DRHD, DMAR_OWNER_RMRR, DMAR_OWNER_ATSR, DMAR_OWNER_SATC };

struct dmar_scope {
    uint8_t type;                /* enum dmar_scope_type */
    uint8_t enum_id;             /* IOAPIC/HPET id, ACPI device number */
    uint8_t start_bus;
    uint8_t npath;               /* >= 1 */
    struct { uint8_t dev, fn; } path[DMAR_MAX_PATH];
    uint8_t owner;               /* enum dmar_owner */
    uint8_t owner_idx;           /* index in units/rmrrs, or ATSR/SATC ordinal */
};

struct dmar_unit {               /* DRHD */
    uint64_t reg_base;
    uint16_t segment;
    uint8_t  flags;              /* raw; bit 0 INCLUDE_PCI_ALL */
    uint8_t  size;               /* register set: 2^size 4 KiB pages (0 before rev 2.x tables) */
    bool     include_pci_all;
    uint16_t first_scope, nscopes;
};

struct dmar_rmrr {
    uint64_t base, limit;        /* inclusive limit, as in the table */
    uint16_t segment;
    uint16_t first_scope, nscopes;
};

struct dmar_info {
    uint8_t  host_addr_width;    /* the table's field + 1: DMA address bits */
    uint8_t  flags;              /* bit 0 INTR_REMAP, 1 X2APIC_OPT_OUT, 2 DMA_CTRL_PLATFORM_OPT_IN */
    uint16_t nunits, nrmrrs, nscopes;
    uint16_t natsr, nrhsa, nandd, nsatc, n_unknown;
    struct dmar_unit  units[DMAR_MAX_UNITS];
    struct dmar_rmrr  rmrrs[DMAR_MAX_RMRRS];
    struct dmar_scope scopes[DMAR_MAX_SCOPES];
};

/* struct dmar_info's flags (VT-d spec 8.1) */
#define DMAR_FLAG_INTR_REMAP          (1u << 0)
#define DMAR_FLAG_X2APIC_OPT_OUT      (1u << 1)
#define DMAR_FLAG_DMA_CTRL_OPT_IN     (1u << 2)   /* the platform asks for DMA protection from boot */

enum {
    DMAR_OK = 0,
    DMAR_E_SHORT = -1,           /* buffer shorter than the header or than its length */
    DMAR_E_SIGNATURE = -2,
    DMAR_E_CHECKSUM = -3,
    DMAR_E_STRUCT_LEN = -4,      /* a remapping structure's length is too small or overruns */
    DMAR_E_SCOPE_LEN = -5,       /* a device scope's length is bad or overruns its structure */
    DMAR_E_LIMIT = -6,           /* more than struct dmar_info holds */
    DMAR_E_DRHD = -7,            /* bad or duplicate register base, second INCLUDE_PCI_ALL */
    DMAR_E_RMRR = -8,            /* unaligned/empty range or no scope */
    DMAR_E_SCOPE_DUP = -9,       /* one PCI device under two DRHDs */
    DMAR_E_HAW = -10,            /* host address width out of range */
};

int dmar_parse(const void *buf, size_t len, struct dmar_info *out);
const char *dmar_strerror(int err);

/* Does this PCI function (its bus/dev/fn on `segment`, as the first hop of a scope path sees
 * it) appear in scope s? Only single-hop scopes can be matched without reading bridges'
 * secondary bus numbers; for longer paths, sec_bus(ctx, bus, dev, fn) must return the
 * secondary bus of the bridge at each hop (or -1). A bridge scope also matches every
 * function below it, which needs sec_bus and sub_bus alike; sub_bus may be NULL for
 * endpoint-only matching. */
typedef int (*dmar_bus_fn)(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn);
bool dmar_scope_matches(const struct dmar_scope *s, uint8_t bus, uint8_t dev, uint8_t fn,
                        dmar_bus_fn sec_bus, dmar_bus_fn sub_bus, void *ctx);

/* The unit that remaps (segment, bus, dev, fn): the DRHD with a matching scope, else that
 * segment's INCLUDE_PCI_ALL unit; -1 if none (the device's DMA is not remapped at all). */
int dmar_unit_for(const struct dmar_info *d, uint16_t segment, uint8_t bus, uint8_t dev,
                  uint8_t fn, dmar_bus_fn sec_bus, dmar_bus_fn sub_bus, void *ctx);

#endif
