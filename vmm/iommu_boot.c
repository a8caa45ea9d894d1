/*
 * iommu_boot.c - the boot-time VT-d sequence (contract in iommu_boot.h; VT-d spec rev 3.3).
 */
#include "iommu_boot.h"

#define CAP_SAGAW_FIELD  (0x1full << 8)     /* 10.4.2 bits 12:8 */
#define CAP_MGAW_FIELD   (0x3full << 16)    /* bits 21:16, MGAW - 1 */
#define CAP_SLLPS_FIELD  (0xfull << 34)     /* bits 37:34 */

uint64_t iommu_boot_common_cap(const uint64_t *caps, unsigned n)
{
    if (n == 0)
        return 0;
    uint64_t sagaw = CAP_SAGAW_FIELD, sllps = CAP_SLLPS_FIELD, mgaw = CAP_MGAW_FIELD;
    for (unsigned i = 0; i < n; i++) {
        sagaw &= caps[i];
        sllps &= caps[i];
        if ((caps[i] & CAP_MGAW_FIELD) < mgaw)
            mgaw = caps[i] & CAP_MGAW_FIELD;
    }
    return sagaw | sllps | mgaw;
}

unsigned iommu_boot_unit_pages(const struct dmar_unit *u)
{
    /* 8.3: size is 2^N pages (N <= 15 in practice); a 0 means one page (older tables). */
    return u->size > 15 ? 1u << 15 : 1u << u->size;
}

static enum iommu_boot_state fail(struct iommu_boot_result *r, enum iommu_boot_stage s, int err)
{
    r->stage = s;
    r->err = err;
    return r->state = IOMMU_BOOT_FAILED;
}

enum iommu_boot_state iommu_boot(const void *dmar, size_t len, const struct iommu_layout *l,
                                 const struct iommu_ops *ops, const struct iommu_boot_unit_ops *u,
                                 struct dmar_info *di, struct iommu_boot_result *r)
{
    *r = (struct iommu_boot_result){ .state = IOMMU_BOOT_NO_DMAR };
    if (!dmar || len == 0)
        return r->state;
    int rc = dmar_parse(dmar, len, di);
    if (rc)
        return fail(r, IOMMU_STAGE_PARSE, rc);
    r->nunits = di->nunits;
    if (di->nunits == 0)
        return fail(r, IOMMU_STAGE_PARSE, DMAR_E_DRHD);
    /* Every unit's registers, and their common capabilities. */
    static struct iommu_hw_ops hw[DMAR_MAX_UNITS];
    uint64_t caps[DMAR_MAX_UNITS];
    unsigned nopen = 0;
    bool coherent = true;
    for (unsigned i = 0; i < di->nunits; i++) {
        const struct dmar_unit *du = &di->units[i];
        if (!u->open(u->ctx, du->reg_base, iommu_boot_unit_pages(du), &hw[i])) {
            r->unit_rc[i] = IOMMU_BOOT_E_OPEN;
            continue;
        }
        caps[nopen++] = hw[i].read64(hw[i].ctx, VTD_REG_CAP);
        coherent = coherent && iommu_hw_coherent(&hw[i]);
    }
    if (nopen == 0)
        return fail(r, IOMMU_STAGE_MAP, IOMMU_BOOT_E_OPEN);
    r->cap = iommu_boot_common_cap(caps, nopen);
    /* The caller's layout with the DMAR's RMRRs (inclusive limits made sizes). */
    static struct iommu_range rmrr[DMAR_MAX_RMRRS];
    for (unsigned i = 0; i < di->nrmrrs; i++)
        rmrr[i] = (struct iommu_range){ di->rmrrs[i].base,
                                        di->rmrrs[i].limit - di->rmrrs[i].base + 1 };
    struct iommu_layout lay = *l;
    lay.rmrr = rmrr;
    lay.nrmrr = di->nrmrrs;
    rc = iommu_tables_build(&r->tables, ops, r->cap, &lay);
    if (rc)
        return fail(r, IOMMU_STAGE_BUILD, rc);
    if (!coherent && u->flush_tables)
        u->flush_tables(u->ctx);
    uint64_t root = iommu_root_table_addr(&r->tables);
    for (unsigned i = 0; i < di->nunits; i++) {
        if (r->unit_rc[i])
            continue;
        r->unit_rc[i] = iommu_hw_enable(&hw[i], root);
        if (r->unit_rc[i] == IOMMU_HW_OK)
            r->units_on++;
    }
    for (unsigned i = 0; i < di->nunits; i++)
        if (r->unit_rc[i] && r->stage == IOMMU_STAGE_NONE) {
            r->stage = IOMMU_STAGE_UNIT;
            r->err = r->unit_rc[i];
        }
    r->state = r->units_on == di->nunits ? IOMMU_BOOT_ON :
               r->units_on ? IOMMU_BOOT_PARTIAL : IOMMU_BOOT_FAILED;
    return r->state;
}
