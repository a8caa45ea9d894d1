/*
 * hv_iommu.h - vmm/'s own side of hv_dma.h. Contract: hv_iommu_start() runs once on the BSP
 * at the end of the image's start (vmm_init_done), after every layer registered its own
 * devices and ranges, before any CPU is virtualized; it never fails the start: what it did is
 * logged and kept for hv_iommu_state().
 */
#ifndef HVT_HV_IOMMU_H
#define HVT_HV_IOMMU_H

void hv_iommu_start(void);

#endif
