/*
 * test_iommu_hw.c - host unit test of vmm/iommu_hw.c against a model of a VT-d unit's
 * registers (VT-d spec rev 3.3, 10.4): the model acts on GCMD commands like the hardware
 * (latching the root table on SRTP, setting TES on TE, one-shot status bits), completes
 * invalidations, and logs every register write so the test checks the order the spec
 * requires (root table set before translation is enabled, context cache invalidated before
 * the IOTLB, both before TE; persistent GCMD bits carried, one-shot ones not). Also: units
 * that never answer (timeouts, no hang), units already translating, version 6 units, and
 * fault records. This checks the sequence, not real hardware.
 * Prints failed checks and "test_iommu_hw: N passed, N failed".
 */
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "iommu_hw.h"
#include "check.h"


#define IRO_UNITS 0x50u                 /* ECAP.IRO: IOTLB registers at 0x500 */
#define FRO_UNITS 0x40u                 /* CAP.FRO: fault records at 0x400 */
#define NFR       4u

enum ev { EV_RTADDR, EV_SRTP, EV_WBF, EV_CCMD, EV_IOTLB, EV_TE, EV_FECTL, EV_TE_OFF, EV_QI_OFF, EV_PMEN, EV_OTHER };
struct model {
    uint32_t ver, gsts, fsts, fectl, pmen;
    uint64_t cap, ecap, rtaddr, root_latched, ccmd, iotlb, iqh, iqt;
    bool stuck_te_off;
    uint64_t frcd[NFR][2];
    bool stuck_rtps, stuck_icc;
    enum ev log[64]; unsigned nlog;
    uint32_t gcmd_values[16]; unsigned ngcmd;
    unsigned bad_access;
};

static void logev(struct model *m, enum ev e) { if (m->nlog < 64) m->log[m->nlog++] = e; }

static uint32_t m_read32(void *c, unsigned off)
{
    struct model *m = c;
    switch (off) {
    case VTD_REG_VER: return m->ver;
    case VTD_REG_GSTS: return m->gsts;
    case VTD_REG_FSTS: {
        uint32_t s = m->fsts & VTD_FSTS_PFO;
        for (unsigned i = 0; i < NFR; i++)
            if (m->frcd[i][1] & VTD_FRCD_F) { s |= VTD_FSTS_PPF | i << 8; break; }
        return s;
    }
    case VTD_REG_FECTL: return m->fectl;
    case VTD_REG_PMEN: return m->pmen;
    default: m->bad_access++; return 0;
    }
}
static uint64_t m_read64(void *c, unsigned off)
{
    struct model *m = c;
    if (off == VTD_REG_CAP) return m->cap;
    if (off == VTD_REG_ECAP) return m->ecap;
    if (off == VTD_REG_CCMD) return m->ccmd;
    if (off == VTD_REG_IQH) { if (m->iqh != m->iqt) m->iqh += 16; return m->iqh; }   /* the queue drains */
    if (off == VTD_REG_IQT) return m->iqt;
    if (off == IRO_UNITS * 16 + 8) return m->iotlb;
    if (off >= FRO_UNITS * 16 && off < FRO_UNITS * 16 + NFR * 16 && !(off & 7))
        return m->frcd[(off - FRO_UNITS * 16) / 16][(off / 8) & 1];
    m->bad_access++;
    return 0;
}
static void m_write32(void *c, unsigned off, uint32_t v)
{
    struct model *m = c;
    if (off == VTD_REG_GCMD) {
        if (m->ngcmd < 16) m->gcmd_values[m->ngcmd++] = v;
        /* persistent bits in the command must match the state, except the one changed */
        if (v & VTD_GCMD_SRTP) { logev(m, EV_SRTP); m->root_latched = m->rtaddr; if (!m->stuck_rtps) m->gsts |= VTD_GCMD_SRTP; }
        if (v & VTD_GCMD_WBF) logev(m, EV_WBF);          /* completes at once: WBFS stays 0 */
        if (v & VTD_GCMD_TE) { logev(m, EV_TE); m->gsts |= VTD_GCMD_TE; }
        else if ((m->gsts & VTD_GCMD_TE) && !m->stuck_te_off) { logev(m, EV_TE_OFF); m->gsts &= ~VTD_GCMD_TE; }
        if (!(v & VTD_GCMD_QIE) && (m->gsts & VTD_GCMD_QIE)) {
            if (m->iqh != m->iqt) m->bad_access++;           /* QI off with work queued: a bug */
            logev(m, EV_QI_OFF); m->gsts &= ~VTD_GCMD_QIE;
        }
        return;
    }
    if (off == VTD_REG_FECTL) { logev(m, EV_FECTL); m->fectl = v; return; }
    if (off == VTD_REG_PMEN) { logev(m, EV_PMEN); m->pmen = v & VTD_PMEN_EPM ? VTD_PMEN_EPM | VTD_PMEN_PRS : 0; return; }
    if (off == VTD_REG_FSTS) { m->fsts &= ~(v & VTD_FSTS_PFO); return; }
    m->bad_access++;
}
static void m_write64(void *c, unsigned off, uint64_t v)
{
    struct model *m = c;
    if (off == VTD_REG_RTADDR) { logev(m, EV_RTADDR); m->rtaddr = v; return; }
    if (off == VTD_REG_CCMD) { logev(m, EV_CCMD); m->ccmd = m->stuck_icc ? v : v & ~VTD_CCMD_ICC; return; }
    if (off == IRO_UNITS * 16 + 8) { logev(m, EV_IOTLB); m->iotlb = v & ~VTD_IOTLB_IVT; return; }
    if (off >= FRO_UNITS * 16 && off < FRO_UNITS * 16 + NFR * 16 && (off & 8)) {
        uint64_t *hi = &m->frcd[(off - FRO_UNITS * 16) / 16][1];
        *hi &= ~(v & VTD_FRCD_F);                        /* RW1C */
        return;
    }
    m->bad_access++;
}

static void model_init(struct model *m, bool rwbf)
{
    memset(m, 0, sizeof *m);
    m->ver = 0x10;                                       /* 1.0, as QEMU reports */
    m->cap = (uint64_t)FRO_UNITS << 24 | (uint64_t)(NFR - 1) << 40 | (rwbf ? VTD_CAP_RWBF : 0) | 4ull << 8;
    m->ecap = (uint64_t)IRO_UNITS << 8;
}

static struct iommu_hw_ops ops_for(struct model *m)
{
    return (struct iommu_hw_ops){ m_read32, m_read64, m_write32, m_write64, m, 1000 };
}

static unsigned find(const struct model *m, enum ev e)
{
    for (unsigned i = 0; i < m->nlog; i++) if (m->log[i] == e) return i;
    return 999;
}

static void test_enable(bool rwbf)
{
    struct model m;
    model_init(&m, rwbf);
    m.gsts = 1u << 23;                                   /* a persistent bit (CFIS) already set */
    struct iommu_hw_ops hw = ops_for(&m);
    int rc = iommu_hw_enable(&hw, 0x12345000ull);
    CHECK(rc == IOMMU_HW_OK, "enable rc %d (rwbf %d)", rc, rwbf);
    CHECK(m.root_latched == 0x12345000ull, "root latched %#llx", (unsigned long long)m.root_latched);
    CHECK(m.gsts & VTD_GCMD_TE, "translation on");
    CHECK(m.fectl & VTD_FECTL_IM, "fault interrupt masked");
    unsigned rt = find(&m, EV_RTADDR), srtp = find(&m, EV_SRTP), cc = find(&m, EV_CCMD),
             tlb = find(&m, EV_IOTLB), te = find(&m, EV_TE), wbf = find(&m, EV_WBF);
    CHECK(rt < srtp && srtp < cc && cc < tlb && tlb < te && te == m.nlog - 1,
          "order rtaddr %u srtp %u ccmd %u iotlb %u te %u of %u", rt, srtp, cc, tlb, te, m.nlog);
    CHECK(rwbf ? (wbf > srtp && wbf < cc) : wbf == 999, "write-buffer flush %u (rwbf %d)", wbf, rwbf);
    for (unsigned i = 0; i < m.ngcmd; i++) {
        uint32_t v = m.gcmd_values[i], cmd = v & (VTD_GCMD_SRTP | VTD_GCMD_WBF | VTD_GCMD_TE);
        CHECK((v & (1u << 23)) && __builtin_popcount(cmd) == 1, "GCMD %#x: persistent bit kept, one command", v);
    }
    CHECK(m.bad_access == 0, "%u accesses to unmodelled registers", m.bad_access);
}

static void test_refusals(void)
{
    struct model m;
    struct iommu_hw_ops hw;
    /* Left on by the firmware: taken over (translation off first, queued invalidation off once
     * its queue drained, then the usual order); protected memory regions off after TE. */
    model_init(&m, false); m.gsts = VTD_GCMD_TE | (1u << 23); hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_OK && m.root_latched == 0x1000 && (m.gsts & VTD_GCMD_TE),
          "already translating: taken over");
    CHECK(find(&m, EV_TE_OFF) < find(&m, EV_RTADDR) && find(&m, EV_RTADDR) < find(&m, EV_TE),
          "translation off (%u) before the root table (%u), on again last (%u)", find(&m, EV_TE_OFF),
          find(&m, EV_RTADDR), find(&m, EV_TE));
    CHECK(m.gcmd_values[0] == (1u << 23), "the disable kept the persistent bit, cleared TE: %#x", m.gcmd_values[0]);
    model_init(&m, false); m.gsts = VTD_GCMD_QIE; m.iqh = 0x100; m.iqt = 0x180; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_OK && find(&m, EV_QI_OFF) < find(&m, EV_RTADDR) &&
          !(m.gsts & VTD_GCMD_QIE) && m.bad_access == 0, "queued invalidation on: drained, off, then set up");
    model_init(&m, false); m.gsts = VTD_GCMD_TE; m.stuck_te_off = true; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_E_TIMEOUT && find(&m, EV_RTADDR) == 999,
          "translation that never goes off: time-out, tables untouched");
    model_init(&m, false); m.cap |= VTD_CAP_PLMR; m.pmen = VTD_PMEN_EPM | VTD_PMEN_PRS; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_OK && m.pmen == 0 && find(&m, EV_PMEN) > find(&m, EV_TE),
          "protected memory regions off, after translation is on");
    model_init(&m, false); m.pmen = VTD_PMEN_EPM | VTD_PMEN_PRS; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_OK && find(&m, EV_PMEN) == 999,
          "no PLMR/PHMR in CAP: PMEN not touched");
    model_init(&m, false); m.ver = 0x60; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_E_UNSUPPORTED && m.nlog == 0, "version 6");
    model_init(&m, false); m.stuck_rtps = true; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_E_TIMEOUT && find(&m, EV_TE) == 999, "RTPS never set");
    model_init(&m, false); m.stuck_icc = true; hw = ops_for(&m);
    CHECK(iommu_hw_enable(&hw, 0x1000) == IOMMU_HW_E_TIMEOUT && find(&m, EV_TE) == 999, "ICC never clears");
}

static void test_faults(void)
{
    struct model m;
    model_init(&m, false);
    struct iommu_hw_ops hw = ops_for(&m);
    struct iommu_fault f;
    bool ovf;
    CHECK(!iommu_hw_next_fault(&hw, &f, &ovf) && !ovf, "no fault");
    /* record 2: write by 01:00.0 to 0x7000abc (reason 5), record 3: read by 00:1f.2 */
    m.frcd[2][0] = 0x7000abcull;
    m.frcd[2][1] = VTD_FRCD_F | 5ull << 32 | 0x0100;
    m.frcd[3][0] = 0xfed00000ull;
    m.frcd[3][1] = VTD_FRCD_F | 1ull << 62 | 6ull << 32 | 0x00fa;
    m.fsts = VTD_FSTS_PFO;
    CHECK(iommu_hw_next_fault(&hw, &f, &ovf) && ovf && f.source_id == 0x0100 && f.reason == 5 &&
          !f.read && f.addr == 0x7000000ull, "first fault sid %#x reason %u read %d addr %#llx",
          f.source_id, f.reason, f.read, (unsigned long long)f.addr);
    CHECK(!(m.fsts & VTD_FSTS_PFO), "overflow cleared");
    CHECK(iommu_hw_next_fault(&hw, &f, &ovf) && !ovf && f.source_id == 0x00fa && f.reason == 6 &&
          f.read && f.addr == 0xfed00000ull, "second fault");
    CHECK(!iommu_hw_next_fault(&hw, &f, &ovf), "records consumed");
    CHECK(m.bad_access == 0, "%u accesses to unmodelled registers", m.bad_access);
}

int main(void)
{
    test_enable(false);
    test_enable(true);
    test_refusals();
    test_faults();
    return check_summary("test_iommu_hw");
}
