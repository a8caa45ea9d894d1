/*
 * hv_dma.h - DMA remapping as modules see it: the hypervisor's own devices and the memory
 * they may reach, and what vmm/ did with the platform's IOMMU.
 *
 * Contract:
 *  - Where the firmware has a DMAR (Intel VT-d), vmm/ owns every remapping unit from the end
 *    of the image's start (vmm_init_done), before any CPU is virtualized: every PCI function
 *    the guest drives reaches guest RAM (identity: guest-physical = host-physical) and the
 *    firmware's RMRRs, never the hypervisor's region nor the ranges registered here; the
 *    functions registered here reach those ranges only. The units' register pages read as
 *    all ones to the guest and its writes there are dropped (hv_ept_drop_writes), and the
 *    loader removed the DMAR from the guest's ACPI tables: the guest runs without an IOMMU.
 *  - Registration happens while the image starts (before vmm_init_done); later calls and
 *    more than HV_DMA_MAX_* return -1. A module that cannot register its device must not
 *    use it: on a platform with an IOMMU its DMA would fault.
 *  - hv_iommu_state() is HV_IOMMU_* (the same numbers as include/hvt_stream.h's
 *    HVT_IOMMU_*), with the counts of units that translate and of all units.
 */
#ifndef HVT_HV_DMA_H
#define HVT_HV_DMA_H
#include <stdint.h>

#define HV_DMA_MAX_DEVICES 8
#define HV_DMA_MAX_RANGES  16

int hv_dma_own_device(uint8_t bus, uint8_t dev, uint8_t fn);   /* PCI segment 0 */
int hv_dma_own_range(uint64_t pa, uint64_t size);

enum hv_iommu_state {
    HV_IOMMU_UNKNOWN = 0,       /* not started yet */
    HV_IOMMU_NO_DMAR = 1,       /* the firmware has no DMAR: device DMA is not confined */
    HV_IOMMU_ON = 2,            /* every unit translates */
    HV_IOMMU_PARTIAL = 3,       /* some units refused: devices behind them are not confined */
    HV_IOMMU_FAILED = 4,        /* a DMAR, but no unit translates */
};
enum hv_iommu_state hv_iommu_state(unsigned *units_on, unsigned *units);

#endif
