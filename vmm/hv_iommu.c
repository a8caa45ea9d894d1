/*
 * hv_iommu.c - the hypervisor owns the platform's VT-d units (contract in hv_dma.h): collects
 * the own devices and ranges modules register, then, at the end of the image's start
 * (hv_iommu_start, from vmm_init_done), runs the shared boot-time sequence (iommu_boot.h)
 * on the DMAR the loader passed, with the guest's RAM (the firmware map's RAM and firmware
 * kinds: firmware drivers DMA into both until the OS takes over) minus the hypervisor's
 * region and the own ranges, and hides every unit's register pages from the guest.
 *
 * Why the register pages read as all ones: a guest that finds a unit anyway (a DMAR the
 * loader could not remove, a scan of MMIO) reads capability and extended capability
 * registers of all ones, which Linux takes for absent hardware (drivers/iommu/intel/dmar.c
 * map_iommu: "DMAR hardware is malfunctioning"), and its writes never reach the unit, so it
 * can neither turn translation off nor load its own root table.
 */
#include "hv_core.h"
#include "hv_dma.h"
#include "hv_ept.h"
#include "iommu_boot.h"
#include "hv_iommu.h"

static struct iommu_bdf own_dev[HV_DMA_MAX_DEVICES];
static struct iommu_range own_range[HV_DMA_MAX_RANGES];
static unsigned n_own_dev, n_own_range;
static struct iommu_boot_result result;
static bool done;

int hv_dma_own_device(uint8_t bus, uint8_t dev, uint8_t fn)
{
    if (done || n_own_dev >= HV_DMA_MAX_DEVICES || dev > 31 || fn > 7)
        return -1;
    own_dev[n_own_dev++] = (struct iommu_bdf){ bus, dev, fn };
    return 0;
}

int hv_dma_own_range(uint64_t pa, uint64_t size)
{
    if (done || n_own_range >= HV_DMA_MAX_RANGES || size == 0 || pa + size < pa)
        return -1;
    own_range[n_own_range++] = (struct iommu_range){ pa, size };
    return 0;
}

enum hv_iommu_state hv_iommu_state(unsigned *units_on, unsigned *units)
{
    if (units_on)
        *units_on = result.units_on;
    if (units)
        *units = result.nunits;
    return (enum hv_iommu_state)result.state;
}

/* The tables are vmm/'s own: from the reserve if need be, within its IOMMU cap (mem_budget.h);
 * past it the build fails and is reported as any failed build. Built once, on the BSP. */
static unsigned tbl_pages;
static void *tbl_alloc(void)
{
    if (tbl_pages >= hv.plan.iommu_pages)
        return 0;
    void *p = vmm_alloc_pages(1);
    tbl_pages += p != 0;
    return p;
}
static const struct iommu_ops tbl_ops = { tbl_alloc, hv_virt_to_phys, hv_phys_to_virt };

/* Unit registers through the uncached alias of the direct map. */
static uint32_t reg_r32(void *c, unsigned o) { return *(volatile uint32_t *)((uint8_t *)c + o); }
static uint64_t reg_r64(void *c, unsigned o) { return *(volatile uint64_t *)((uint8_t *)c + o); }
static void reg_w32(void *c, unsigned o, uint32_t v) { *(volatile uint32_t *)((uint8_t *)c + o) = v; }
static void reg_w64(void *c, unsigned o, uint64_t v) { *(volatile uint64_t *)((uint8_t *)c + o) = v; }

/* Polls of a register before a wait gives up: each read of an uncached register costs well
 * over 100 ns on real hardware, so this waits about a second at least. */
#define IOMMU_SPIN_LIMIT 10000000u

static bool unit_open(void *ctx, uint64_t reg_base, unsigned pages, struct iommu_hw_ops *hw)
{
    uint64_t end = reg_base + (uint64_t)pages * X86_PAGE_SIZE;
    if (end < reg_base || end > hv.bi->direct_map_limit || hv_in_region(reg_base) ||
        hv_gpa_is_ram(reg_base, end - reg_base))
        return false;
    *hw = (struct iommu_hw_ops){ reg_r32, reg_r64, reg_w32, reg_w64,
                                 hv_phys_to_virt_uc(reg_base), IOMMU_SPIN_LIMIT };
    return true;
}

/* A unit without ECAP.C reads the tables from memory, not from the caches (10.4.3). */
static void flush_tables(void *ctx) { __asm__ volatile("wbinvd" ::: "memory"); }

static const struct iommu_boot_unit_ops unit_ops = { unit_open, flush_tables, NULL };

/* The guest's RAM for the identity map: RAM and firmware kinds of the loader's map. */
static unsigned guest_ram(struct iommu_range *r, unsigned max)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < hv.bi->mem_range_count && n < max; i++)
        if (hv.bi->mem[i].kind == HVT_MEM_RAM || hv.bi->mem[i].kind == HVT_MEM_FIRMWARE)
            r[n++] = (struct iommu_range){ hv.bi->mem[i].base, hv.bi->mem[i].size };
    return n;
}

static const char *state_name(enum iommu_boot_state s)
{
    switch (s) {
    case IOMMU_BOOT_NO_DMAR: return "no DMAR";
    case IOMMU_BOOT_ON:      return "on";
    case IOMMU_BOOT_PARTIAL: return "partial";
    case IOMMU_BOOT_FAILED:  return "FAILED";
    default:                 return "unknown";
    }
}

/* Every unit's register pages: all ones to the guest, its writes dropped. */
static void hide_units(const struct dmar_info *di)
{
    uint64_t *ones = vmm_alloc_pages(1);
    if (!ones) {
        hv_log("hvtrace: IOMMU: no page to hide the units' registers behind\n");
        return;
    }
    for (unsigned i = 0; i < X86_PAGE_SIZE / 8; i++)
        ones[i] = ~0ull;
    for (unsigned i = 0; i < di->nunits; i++) {
        uint64_t base = di->units[i].reg_base;
        uint64_t size = (uint64_t)iommu_boot_unit_pages(&di->units[i]) * X86_PAGE_SIZE;
        if (hv_ept_drop_writes(base, size, ones))
            hv_log("hvtrace: IOMMU: cannot hide unit %u's registers [%lx, %lx) from the guest\n",
                   i, base, base + size);
    }
}

void hv_iommu_start(void)
{
    static struct dmar_info di;
    static struct iommu_range ram[HVT_MAX_MEM_RANGES];
    struct hvt_boot_info *bi = hv.bi;
    done = true;
    if (bi->dmar_len == 0) {
        result.state = IOMMU_BOOT_NO_DMAR;
        hv_log("hvtrace: IOMMU: the firmware has no DMAR (no VT-d): device DMA is NOT confined; "
               "the hypervisor's memory is open to any PCI device the guest programs\n");
        return;
    }
    struct iommu_range excl = { bi->region_phys, bi->region_size };
    struct iommu_layout l = { ram, guest_ram(ram, HVT_MAX_MEM_RANGES), &excl, 1, NULL, 0,
                              own_dev, n_own_dev, own_range, n_own_range };
    size_t len = bi->dmar_len <= HVT_DMAR_MAX ? bi->dmar_len : 0;
    if (len)
        iommu_boot(bi->dmar, len, &l, &tbl_ops, &unit_ops, &di, &result);
    else
        result = (struct iommu_boot_result){ .state = IOMMU_BOOT_FAILED, .stage = IOMMU_STAGE_PARSE,
                                             .err = DMAR_E_LIMIT };
    if (result.stage != IOMMU_STAGE_PARSE)
        hide_units(&di);
    hv_log("hvtrace: IOMMU %s: %u of %u VT-d units translate (%u own devices, %u own ranges, "
           "%u RMRRs, %u table pages); DMAR %s the guest\n", state_name(result.state),
           result.units_on, result.nunits, n_own_dev, n_own_range, di.nrmrrs, result.tables.pages,
           bi->hv_flags & HVT_HVF_DMAR_HIDDEN ? "hidden from" : "still visible to");
    if (result.state != IOMMU_BOOT_ON)
        hv_log("hvtrace: IOMMU: first failure at stage %u, error %d%s%s\n", result.stage, result.err,
               result.stage == IOMMU_STAGE_PARSE ? ": " : "",
               result.stage == IOMMU_STAGE_PARSE ? dmar_strerror(result.err) :
               result.stage == IOMMU_STAGE_BUILD ? iommu_strerror(result.err) : "");
}
