/*
 * iommu_tables.h - build Intel VT-d DMA-remapping translation structures in legacy mode
 * (Intel Virtualization Technology for Directed I/O Architecture Specification, revision 3.3:
 * 3.4.2 legacy-mode device-to-domain mapping, 9.1 root entry, 9.3 context entry, 9.8
 * second-level paging entries, 10.4.2 capability register for SAGAW/MGAW/SLLPS).
 *
 * Contract:
 *  - Pure builder: no register access, no caches flushed. Pages come from ops->alloc_page
 *    (zeroed, 4 KiB, 4 KiB aligned); entries hold physical addresses converted with
 *    ops->virt_to_phys / phys_to_virt. Host-testable with heap pages.
 *  - Two domains. The guest domain (domain id IOMMU_DID_GUEST) identity-maps, read/write,
 *    every RAM range and every RMRR range, minus every exclusion and every "own" range; each
 *    PCI function on every bus uses it, except the hypervisor's own devices, which use the
 *    own domain (IOMMU_DID_OWN) that identity-maps the own ranges only (the NIC's rings and
 *    buffers). So a guest-driven device can reach neither the hypervisor nor the NIC's
 *    memory, and the NIC reaches nothing else.
 *  - Ranges are rounded out to 4 KiB (an exclusion covering part of a page excludes all of
 *    it; a RAM range covering part of a page maps all of it) and exclusions win over RAM.
 *    An RMRR that overlaps an exclusion is refused (IOMMU_E_RMRR): the device would need the
 *    excluded memory, and nothing sound can be built.
 *  - Context entries use translation type 00 (untranslated requests only: a device's ATS
 *    "translated" requests, which would bypass the tables, are blocked) and the deepest
 *    second-level paging the capability register's SAGAW offers among 4-, 3- and 5-level
 *    (48/39/57-bit). Every mapped address must lie below min(2^AGAW, 2^MGAW)
 *    (else IOMMU_E_RANGE). Large pages (2 MiB, 1 GiB) are used where the range is aligned,
 *    holds no exclusion and SLLPS offers them.
 *  - Root entries of all buses share one context table; the buses of own devices get their
 *    own copy, whose own devices' entries point at the own domain. Pages used: t->pages.
 *  - The caller programs the hardware (iommu_hw.c) and, when ECAP.C is 0 (the unit does not
 *    snoop), flushes the tables from the CPU caches first.
 */
#ifndef HVT_IOMMU_TABLES_H
#define HVT_IOMMU_TABLES_H
#include <stdint.h>
#include <stdbool.h>

#define IOMMU_PAGE_4K   0x1000ull
#define IOMMU_PAGE_2M   0x200000ull
#define IOMMU_PAGE_1G   0x40000000ull

/* Second-level paging entry bits (9.8) */
#define IOMMU_SL_R      (1ull << 0)
#define IOMMU_SL_W      (1ull << 1)
#define IOMMU_SL_PS     (1ull << 7)     /* leaf at the 2 MiB / 1 GiB level */
#define IOMMU_ADDR_MASK 0x000ffffffffff000ull
/* Root entry (9.1) and context entry (9.3), low and high quadwords */
#define IOMMU_PRESENT   (1ull << 0)
#define IOMMU_CTX_TT_SHIFT 2             /* low bits 3:2, 00 = untranslated via second level */
#define IOMMU_CTX_AW_MASK  7ull          /* high bits 2:0 (entry bits 66:64) */
#define IOMMU_CTX_DID_SHIFT 8            /* high bits 23:8 (entry bits 87:72) */
/* Capability register fields (10.4.2) */
#define IOMMU_CAP_SAGAW(c)  (((c) >> 8) & 0x1f)
#define IOMMU_CAP_MGAW(c)   ((unsigned)(((c) >> 16) & 0x3f) + 1)
#define IOMMU_CAP_SLLPS(c)  (((c) >> 34) & 0xf)

#define IOMMU_DID_GUEST 1
#define IOMMU_DID_OWN   2

struct iommu_ops {
    void    *(*alloc_page)(void);
    uint64_t (*virt_to_phys)(const void *va);
    void    *(*phys_to_virt)(uint64_t pa);
};

struct iommu_range { uint64_t base, size; };
struct iommu_bdf { uint8_t bus, dev, fn; };

struct iommu_layout {
    const struct iommu_range *ram;     unsigned nram;
    const struct iommu_range *exclude; unsigned nexclude;   /* the hypervisor's region, ... */
    const struct iommu_range *rmrr;    unsigned nrmrr;      /* from the DMAR's RMRRs */
    const struct iommu_bdf   *own_dev; unsigned nown_dev;   /* the hypervisor's NIC */
    const struct iommu_range *own;     unsigned nown;       /* what own devices may reach */
};

struct iommu_tables {
    const struct iommu_ops *ops;
    unsigned levels;                   /* 3, 4 or 5 */
    unsigned agaw_code;                /* context entry AW: 1 = 39-bit, 2 = 48, 3 = 57 */
    uint64_t limit;                    /* first address that cannot be mapped */
    bool has_2m, has_1g;
    uint64_t *root;                    /* 256 root entries (2 quadwords each) */
    uint64_t *ctx_shared;              /* context table of buses without own devices */
    uint64_t *sl_guest, *sl_own;       /* top-level second-level tables of the domains */
    unsigned pages;
};

enum {
    IOMMU_OK = 0,
    IOMMU_E_NOMEM = -1,
    IOMMU_E_CAP = -2,                  /* SAGAW offers no 3-, 4- or 5-level table */
    IOMMU_E_RANGE = -3,                /* a range overflows or (if mapped) lies past the limit */
    IOMMU_E_RMRR = -4,                 /* an RMRR overlaps an exclusion */
    IOMMU_E_OWN = -5,                  /* too many own devices (more than 8) */
};

int iommu_tables_build(struct iommu_tables *t, const struct iommu_ops *ops, uint64_t cap,
                       const struct iommu_layout *l);
const char *iommu_strerror(int err);

/* The value for the Root Table Address register (10.4.6): legacy mode, the root's address. */
uint64_t iommu_root_table_addr(const struct iommu_tables *t);

#endif
