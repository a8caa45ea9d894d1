/*
 * iommu_hw.h - program one VT-d remapping unit (a DRHD's register set) to use the tables
 * iommu_tables.c built. RUNS ONLY ON REAL HARDWARE WITH VT-d (QEMU's intel-iommu also
 * implements these registers); nothing calls it by default: the core decides, per platform
 * with a DMAR, whether to enable DMA remapping. Host-tested against a register model
 * (vmm/tests/test_iommu_hw.c), which checks the order of operations, not real hardware.
 *
 * Register layout and sequences: Intel VT-d spec rev 3.3, 10.4 (register descriptions:
 * 10.4.2 CAP, 10.4.3 ECAP, 10.4.4 GCMD, 10.4.5 GSTS, 10.4.6 RTADDR, 10.4.7 CCMD, 10.4.8
 * IOTLB, 10.4.9 FSTS, 10.4.10 FECTL, 10.4.14 fault recording), 6.5 (invalidation of the
 * translation caches).
 *
 * Contract:
 *  - All register access goes through ops (MMIO at the DRHD's register base, mapped
 *    uncached by the caller). Every wait on hardware is bounded by ops->spin_limit polls;
 *    a unit that never answers gives IOMMU_HW_E_TIMEOUT, never a hang.
 *  - iommu_hw_enable(): refuses a unit whose translation is already on (firmware's or a
 *    previous kernel's: its tables are unknown) or with queued invalidation enabled
 *    (register-based invalidation is then not allowed), and a unit of major version 6 or
 *    later, which no longer implements register-based invalidation (6.5): those need queued
 *    invalidation, not built here (IOMMU_HW_E_UNSUPPORTED). Otherwise it sets the root table
 *    (legacy mode), flushes the write buffer when CAP.RWBF asks, invalidates the context
 *    cache and the IOTLB globally, and turns translation on. Fault interrupts stay masked:
 *    faults are polled with iommu_hw_next_fault().
 *  - Before enabling, the caller writes the tables back from its caches when ECAP.C = 0
 *    (iommu_hw_coherent() says so): the unit then reads memory without snooping.
 *  - Not built: interrupt remapping (a guest-driven device can still send any MSI), queued
 *    invalidation, scalable mode.
 */
#ifndef HVT_IOMMU_HW_H
#define HVT_IOMMU_HW_H
#include <stdint.h>
#include <stdbool.h>

/* Register offsets (10.4) */
#define VTD_REG_VER     0x00
#define VTD_VER_MAJOR(v) (((v) >> 4) & 0xfu)
#define VTD_VER_NO_REG_INVAL 6u         /* first major version without register invalidation */
#define VTD_REG_CAP     0x08
#define VTD_REG_ECAP    0x10
#define VTD_REG_GCMD    0x18
#define VTD_REG_GSTS    0x1c
#define VTD_REG_RTADDR  0x20
#define VTD_REG_CCMD    0x28
#define VTD_REG_FSTS    0x34
#define VTD_REG_PMEN    0x64            /* protected memory enable (10.4.16) */
#define VTD_REG_IQH     0x80            /* invalidation queue head / tail (10.4.22-23) */
#define VTD_REG_IQT     0x88
#define VTD_REG_FECTL   0x38

/* GCMD / GSTS bits (10.4.4, 10.4.5) */
#define VTD_GCMD_TE     (1u << 31)      /* translation enable / status */
#define VTD_GCMD_SRTP   (1u << 30)      /* set root table pointer / status RTPS */
#define VTD_GCMD_WBF    (1u << 27)      /* write buffer flush / status WBFS */
#define VTD_GCMD_QIE    (1u << 26)
/* One-shot status bits (RTPS 30, FLS 29, WBFS 27, IRTPS 24) are cleared from GSTS before
 * it is reused as a GCMD value; the spec's sample code masks with 0x96FFFFFF. */
#define VTD_GSTS_PERSISTENT_MASK 0x96ffffffu

/* CCMD (10.4.7) */
#define VTD_CCMD_ICC        (1ull << 63)
#define VTD_CCMD_GLOBAL     (1ull << 61)        /* CIRG = 01 */
/* IOTLB invalidate register (10.4.8), at ECAP.IRO * 16 + 8 */
#define VTD_IOTLB_IVT       (1ull << 63)
#define VTD_IOTLB_GLOBAL    (1ull << 60)        /* IIRG = 01 */
#define VTD_IOTLB_DR        (1ull << 49)
#define VTD_IOTLB_DW        (1ull << 48)
/* CAP / ECAP fields */
#define VTD_CAP_RWBF        (1ull << 4)
#define VTD_CAP_PLMR        (1ull << 5)         /* protected low-memory region */
#define VTD_CAP_PHMR        (1ull << 6)         /* protected high-memory region */
#define VTD_PMEN_EPM        (1u << 31)          /* enable protected memory */
#define VTD_PMEN_PRS        (1u << 0)           /* protected region status */
#define VTD_CAP_FRO(c)      ((unsigned)(((c) >> 24) & 0x3ff) * 16u)
#define VTD_CAP_NFR(c)      ((unsigned)(((c) >> 40) & 0xff) + 1u)
#define VTD_ECAP_C          (1ull << 0)
#define VTD_ECAP_IRO(e)     ((unsigned)(((e) >> 8) & 0x3ff) * 16u)
/* FSTS / FECTL (10.4.9, 10.4.10) and a fault record's high quadword (10.4.14) */
#define VTD_FSTS_PFO        (1u << 0)
#define VTD_FSTS_PPF        (1u << 1)
#define VTD_FECTL_IM        (1u << 31)
#define VTD_FRCD_F          (1ull << 63)        /* in the record's upper quadword */

struct iommu_hw_ops {
    uint32_t (*read32)(void *ctx, unsigned off);
    uint64_t (*read64)(void *ctx, unsigned off);
    void     (*write32)(void *ctx, unsigned off, uint32_t v);
    void     (*write64)(void *ctx, unsigned off, uint64_t v);
    void     *ctx;
    unsigned spin_limit;                /* polls before a wait gives up */
};

struct iommu_fault {
    uint16_t source_id;                 /* bus << 8 | dev << 3 | fn */
    uint8_t  reason;                    /* fault reason (appendix A of the spec) */
    bool     read;                      /* request type: true = read */
    uint64_t addr;                      /* the faulting page address */
};

enum {
    IOMMU_HW_OK = 0,
    IOMMU_HW_E_TIMEOUT = -1,
    IOMMU_HW_E_BUSY = -2,               /* (no longer returned: a unit left on is taken over) */
    IOMMU_HW_E_UNSUPPORTED = -3,        /* needs queued invalidation (VER major >= 6) */
};

int  iommu_hw_enable(const struct iommu_hw_ops *hw, uint64_t root_table_addr);
bool iommu_hw_coherent(const struct iommu_hw_ops *hw);
/* Take the next recorded fault, clearing it; false when none is pending. Also clears the
 * overflow flag (faults were lost) and reports it in *overflow. */
bool iommu_hw_next_fault(const struct iommu_hw_ops *hw, struct iommu_fault *f, bool *overflow);

#endif
