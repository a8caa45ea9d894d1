/*
 * iommu_boot.h - the boot-time sequence that gives the hypervisor every VT-d remapping unit
 * the firmware's DMAR lists: parse the table (acpi_dmar.c), build one set of translation
 * tables fitting every unit (iommu_tables.c: the identity map of guest RAM minus the
 * exclusions, plus the DMAR's RMRRs; the own domain for the hypervisor's devices), write
 * them back from the CPU caches when some unit does not snoop, and turn translation on in
 * every unit (iommu_hw.c). Intel Virtualization Technology for Directed I/O Architecture
 * Specification, revision 3.3: 8.3 DRHD, 8.4 RMRR, 10.4.2 capability register.
 *
 * The hypervisor runs it once on the BSP before any CPU is virtualized (vmm/hv_iommu.c) and
 * the QEMU check (tests/unit/vtd-qemu) runs it from a Linux guest of QEMU q35 + intel-iommu:
 * both call this one function, so that test proves the code the hypervisor runs (QEMU's TCG
 * has no VMX, the hypervisor itself cannot run there).
 *
 * Contract:
 *  - The DMAR is hostile firmware data: dmar_parse() checks it; a table that does not check
 *    out leaves every unit as it was (IOMMU_BOOT_FAILED, stage PARSE).
 *  - The tables are built once for all units from their common capabilities
 *    (iommu_boot_common_cap: the paging depths and large pages every unit offers, the
 *    smallest MGAW), so one root table serves them all. The caller's layout gives RAM,
 *    exclusions and the own devices/ranges; its rmrr fields are ignored: the RMRRs come from
 *    the DMAR (every unit maps all of them, whatever their device scopes: the identity map of
 *    an RMRR hands a device nothing it could not already reach as guest RAM).
 *  - Units are enabled in table order; a unit that refuses (translation already on, queued
 *    invalidation only, a timeout) is counted and the others are still enabled: the result
 *    says IOMMU_BOOT_ON (all), IOMMU_BOOT_PARTIAL or IOMMU_BOOT_FAILED (none), and which.
 *    Nothing is ever turned off again: a unit that is on has correct tables.
 *  - Pure C, freestanding: register access and page memory come from the caller's ops.
 */
#ifndef HVT_IOMMU_BOOT_H
#define HVT_IOMMU_BOOT_H
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "acpi_dmar.h"
#include "iommu_tables.h"
#include "iommu_hw.h"

/* The same numbers as the trace status's iommu field (include/hvt_stream.h HVT_IOMMU_*). */
enum iommu_boot_state {
    IOMMU_BOOT_UNKNOWN = 0,            /* not run */
    IOMMU_BOOT_NO_DMAR = 1,            /* the firmware has no DMAR: DMA is not remapped */
    IOMMU_BOOT_ON = 2,                 /* every unit translates */
    IOMMU_BOOT_PARTIAL = 3,            /* some units translate, others refused */
    IOMMU_BOOT_FAILED = 4,             /* a DMAR, but no unit translates */
};
enum iommu_boot_stage { IOMMU_STAGE_NONE, IOMMU_STAGE_PARSE, IOMMU_STAGE_MAP, IOMMU_STAGE_BUILD,
                        IOMMU_STAGE_UNIT };

struct iommu_boot_unit_ops {
    /* Register access for the unit whose registers are at reg_base (pages of 4 KiB); false
     * when they cannot be reached (then the unit counts as refused). */
    bool (*open)(void *ctx, uint64_t reg_base, unsigned pages, struct iommu_hw_ops *hw);
    /* Write the CPU caches back to memory: some unit reads the tables without snooping. */
    void (*flush_tables)(void *ctx);
    void *ctx;
};

struct iommu_boot_result {
    enum iommu_boot_state state;
    enum iommu_boot_stage stage;       /* where the first failure happened */
    int err;                           /* its DMAR_E_*, IOMMU_E_* or IOMMU_HW_E_* (-100: open) */
    unsigned nunits, units_on;
    int unit_rc[DMAR_MAX_UNITS];       /* per unit: 0 on, else its error */
    uint64_t cap;                      /* the common capabilities the tables were built for */
    struct iommu_tables tables;
};

#define IOMMU_BOOT_E_OPEN (-100)

/* Capabilities every unit has: SAGAW and SLLPS bits all share, the smallest MGAW. */
uint64_t iommu_boot_common_cap(const uint64_t *caps, unsigned n);

/* dmar/len: the firmware's table (NULL or 0: none). di: scratch for the parsed table. */
enum iommu_boot_state iommu_boot(const void *dmar, size_t len, const struct iommu_layout *l,
                                 const struct iommu_ops *ops, const struct iommu_boot_unit_ops *u,
                                 struct dmar_info *di, struct iommu_boot_result *r);
/* Register pages of a DRHD (2^size, at least 1). */
unsigned iommu_boot_unit_pages(const struct dmar_unit *u);

#endif
