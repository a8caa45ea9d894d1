/*
 * iommu_hw.c - VT-d unit programming (contract in iommu_hw.h). Runs only on hardware with
 * VT-d; host-tested against a register model.
 */
#include "iommu_hw.h"

#define VTD_GSTS_TES    VTD_GCMD_TE
#define VTD_GSTS_RTPS   VTD_GCMD_SRTP
#define VTD_GSTS_WBFS   VTD_GCMD_WBF
#define VTD_GSTS_QIES   VTD_GCMD_QIE
#define VTD_FSTS_FRI(s) (((s) >> 8) & 0xffu)
#define FRCD_SID(hi)    ((uint16_t)((hi) & 0xffff))          /* record bits 79:64 */
#define FRCD_REASON(hi) ((uint8_t)((hi) >> 32))              /* record bits 103:96 */
#define FRCD_TYPE_READ  (1ull << 62)                         /* record bit 126: 1 = read */
#define FRCD_ADDR_MASK  (~0xfffull)

/* Poll until (reg & mask) == want, at most spin_limit times. */
static bool wait32(const struct iommu_hw_ops *hw, unsigned off, uint32_t mask, uint32_t want)
{
    for (unsigned i = 0; i <= hw->spin_limit; i++)
        if ((hw->read32(hw->ctx, off) & mask) == want)
            return true;
    return false;
}

static bool wait64_clear(const struct iommu_hw_ops *hw, unsigned off, uint64_t bit)
{
    for (unsigned i = 0; i <= hw->spin_limit; i++)
        if (!(hw->read64(hw->ctx, off) & bit))
            return true;
    return false;
}

/* GCMD takes the persistent state along with one command bit (10.4.4). */
static void gcmd(const struct iommu_hw_ops *hw, uint32_t cmd)
{
    uint32_t sts = hw->read32(hw->ctx, VTD_REG_GSTS) & VTD_GSTS_PERSISTENT_MASK;
    hw->write32(hw->ctx, VTD_REG_GCMD, sts | cmd);
}

bool iommu_hw_coherent(const struct iommu_hw_ops *hw)
{
    return hw->read64(hw->ctx, VTD_REG_ECAP) & VTD_ECAP_C;
}

int iommu_hw_enable(const struct iommu_hw_ops *hw, uint64_t root_table_addr)
{
    uint64_t cap = hw->read64(hw->ctx, VTD_REG_CAP), ecap = hw->read64(hw->ctx, VTD_REG_ECAP);
    if (VTD_VER_MAJOR(hw->read32(hw->ctx, VTD_REG_VER)) >= VTD_VER_NO_REG_INVAL)
        return IOMMU_HW_E_UNSUPPORTED;
    /* A unit the firmware left on (pre-boot DMA protection, a firmware driver's tables) is
     * taken over as Linux takes one over: translation off (10.4.4: GCMD without TE), queued
     * invalidation off once its queue is drained (6.5.2: head equal to tail), then set up as
     * if it had been off. Its protected memory regions go after translation is on (below). */
    uint32_t sts = hw->read32(hw->ctx, VTD_REG_GSTS);
    if (sts & VTD_GSTS_TES) {
        hw->write32(hw->ctx, VTD_REG_GCMD, (sts & VTD_GSTS_PERSISTENT_MASK) & ~VTD_GCMD_TE);
        if (!wait32(hw, VTD_REG_GSTS, VTD_GSTS_TES, 0))
            return IOMMU_HW_E_TIMEOUT;
        sts = hw->read32(hw->ctx, VTD_REG_GSTS);
    }
    if (sts & VTD_GSTS_QIES) {
        unsigned i = 0;
        while (hw->read64(hw->ctx, VTD_REG_IQH) != hw->read64(hw->ctx, VTD_REG_IQT))
            if (i++ >= hw->spin_limit)
                return IOMMU_HW_E_TIMEOUT;
        hw->write32(hw->ctx, VTD_REG_GCMD, (sts & VTD_GSTS_PERSISTENT_MASK) & ~VTD_GCMD_QIE);
        if (!wait32(hw, VTD_REG_GSTS, VTD_GSTS_QIES, 0))
            return IOMMU_HW_E_TIMEOUT;
    }
    hw->write32(hw->ctx, VTD_REG_FECTL, VTD_FECTL_IM);       /* faults are polled */

    hw->write64(hw->ctx, VTD_REG_RTADDR, root_table_addr);   /* TTM 00: legacy mode */
    gcmd(hw, VTD_GCMD_SRTP);
    if (!wait32(hw, VTD_REG_GSTS, VTD_GSTS_RTPS, VTD_GSTS_RTPS))
        return IOMMU_HW_E_TIMEOUT;
    if (cap & VTD_CAP_RWBF) {           /* the unit may buffer writes: flush them first */
        gcmd(hw, VTD_GCMD_WBF);
        if (!wait32(hw, VTD_REG_GSTS, VTD_GSTS_WBFS, 0))
            return IOMMU_HW_E_TIMEOUT;
    }
    /* Register-based invalidation (6.5): context cache first, then the IOTLB. */
    hw->write64(hw->ctx, VTD_REG_CCMD, VTD_CCMD_ICC | VTD_CCMD_GLOBAL);
    if (!wait64_clear(hw, VTD_REG_CCMD, VTD_CCMD_ICC))
        return IOMMU_HW_E_TIMEOUT;
    unsigned iotlb = VTD_ECAP_IRO(ecap) + 8u;
    hw->write64(hw->ctx, iotlb, VTD_IOTLB_IVT | VTD_IOTLB_GLOBAL | VTD_IOTLB_DR | VTD_IOTLB_DW);
    if (!wait64_clear(hw, iotlb, VTD_IOTLB_IVT))
        return IOMMU_HW_E_TIMEOUT;

    gcmd(hw, VTD_GCMD_TE);
    if (!wait32(hw, VTD_REG_GSTS, VTD_GSTS_TES, VTD_GSTS_TES))
        return IOMMU_HW_E_TIMEOUT;
    /* Protected memory regions (10.4.16-20) block DMA to ranges the firmware chose, whatever
     * the tables say (the NIC's buffers may lie in one): off, now that the tables protect
     * what must be, as Linux turns them off once its translation is on. */
    if ((cap & (VTD_CAP_PLMR | VTD_CAP_PHMR)) && (hw->read32(hw->ctx, VTD_REG_PMEN) & (VTD_PMEN_EPM | VTD_PMEN_PRS))) {
        hw->write32(hw->ctx, VTD_REG_PMEN, 0);
        if (!wait32(hw, VTD_REG_PMEN, VTD_PMEN_PRS, 0))
            return IOMMU_HW_E_TIMEOUT;
    }
    return IOMMU_HW_OK;
}

bool iommu_hw_next_fault(const struct iommu_hw_ops *hw, struct iommu_fault *f, bool *overflow)
{
    uint32_t fsts = hw->read32(hw->ctx, VTD_REG_FSTS);
    *overflow = fsts & VTD_FSTS_PFO;
    if (*overflow)
        hw->write32(hw->ctx, VTD_REG_FSTS, VTD_FSTS_PFO);    /* RW1C */
    if (!(fsts & VTD_FSTS_PPF))
        return false;
    uint64_t cap = hw->read64(hw->ctx, VTD_REG_CAP);
    unsigned fro = VTD_CAP_FRO(cap), nfr = VTD_CAP_NFR(cap), first = VTD_FSTS_FRI(fsts);
    /* Records are a ring: start at the index FSTS names. */
    for (unsigned k = 0; k < nfr; k++) {
        unsigned off = fro + ((first + k) % nfr) * 16u;
        uint64_t hi = hw->read64(hw->ctx, off + 8);
        if (!(hi & VTD_FRCD_F))
            continue;
        uint64_t lo = hw->read64(hw->ctx, off);
        f->source_id = FRCD_SID(hi);
        f->reason = FRCD_REASON(hi);
        f->read = hi & FRCD_TYPE_READ;
        f->addr = lo & FRCD_ADDR_MASK;
        hw->write64(hw->ctx, off + 8, VTD_FRCD_F);           /* F is RW1C */
        return true;
    }
    return false;
}
