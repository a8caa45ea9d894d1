/* test_e1000_models.c - the NIC driver's per-family decisions on the host (net/e1000_models.c):
 * the id table (one entry per id, Intel only, the families the datasheets put each part in),
 * the EEPROM Read register in each layout, and the 8254x family's fields, which keep the
 * register sequence Bochs's e1000 runs in the VT-x tests. */
#include <stdio.h>
#include "e1000_models.h"
#include "e1000_regs.h"
#include "check.h"

static enum e1000_fam_id fam(uint16_t device)
{
    const struct e1000_model *m = e1000_model_of(E1000_VENDOR_INTEL, device);
    return m ? m->fam->id : E1000_FAM_COUNT;
}

int main(void)
{
    /* the table: unique ids, each with a family the family table knows */
    unsigned n = 0;
    for (const struct e1000_model *m; (m = e1000_model_at(n)); n++) {
        CHECK(m->fam && e1000_family_of(m->fam->id) == m->fam, "model %04x has a known family", m->device);
        CHECK(e1000_model_of(E1000_VENDOR_INTEL, m->device) == m, "id %04x listed once", m->device);
        CHECK(m->name && m->name[0], "model %04x named", m->device);
    }
    CHECK(n >= 20, "the table lists the families' parts (%u)", n);
    CHECK(e1000_model_at(n) == NULL && e1000_family_of(E1000_FAM_COUNT) == NULL);

    /* the parts the emulators model, and one of each family (their datasheets) */
    CHECK(fam(E1000_DEV_82540EM) == E1000_FAM_8254X, "82540EM (Bochs, QEMU e1000): 8254x");
    CHECK(fam(E1000_DEV_82574L) == E1000_FAM_82574, "82574L (QEMU e1000e): 82574");
    CHECK(fam(E1000_DEV_82576) == E1000_FAM_IGB, "82576 (QEMU igb): igb");
    CHECK(fam(0x1533) == E1000_FAM_IGB && fam(0x1539) == E1000_FAM_IGB && fam(0x1521) == E1000_FAM_IGB,
          "I210, I211, I350: igb");
    CHECK(fam(0x153a) == E1000_FAM_PCH && fam(0x15b8) == E1000_FAM_PCH, "I217-LM, I219-V: PCH LAN");
    CHECK(fam(0x1011) == E1000_FAM_COUNT, "82545EM fibre: not taken (copper only)");
    CHECK(fam(0x10fb) == E1000_FAM_COUNT, "82599 (10 GbE, ixgbe): not taken");
    CHECK(e1000_model_of(0x10ec, E1000_DEV_82540EM) == NULL, "another vendor's 100e: not taken");

    /* EERD: the start command and DONE in each layout (8254x SDM 13.4.4; 82574 DS EERD) */
    const struct e1000_family *old = e1000_family_of(E1000_FAM_8254X);
    const struct e1000_family *pcie = e1000_family_of(E1000_FAM_82574);
    const struct e1000_family *igb = e1000_family_of(E1000_FAM_IGB);
    const struct e1000_family *pch = e1000_family_of(E1000_FAM_PCH);
    for (uint16_t w = 0; w < 3; w++) {
        CHECK(e1000_eerd_start(old, w) == (1u | (uint32_t)w << 8), "8254x: word %u at bits 15:8", w);
        CHECK(e1000_eerd_start(pcie, w) == (1u | (uint32_t)w << 2), "82574: word %u at bits 15:2", w);
        CHECK(e1000_eerd_start(igb, w) == e1000_eerd_start(pcie, w), "igb: the 82574's layout");
    }
    uint16_t d = 0;
    CHECK(e1000_eerd_data(old, 0xabcd0010u, &d) && d == 0xabcd, "8254x: DONE bit 4, data 31:16");
    CHECK(!e1000_eerd_data(old, 0xabcd0002u, &d), "8254x: bit 1 is not DONE");
    CHECK(e1000_eerd_data(pcie, 0x12340002u, &d) && d == 0x1234, "82574: DONE bit 1");
    CHECK(!e1000_eerd_data(pcie, 0x12340011u, &d), "82574: bit 4 (an 8254x DONE) is not DONE");
    CHECK(!e1000_eerd_data(pcie, e1000_eerd_start(pcie, 2), &d), "82574: the start command alone is not DONE");
    CHECK(pch->mac_src == E1000_MAC_RAL && !pch->eerd_done, "PCH LAN: no EERD, MAC from RAL0");
    CHECK(igb->mac_src == E1000_MAC_RAL, "igb: MAC from RAL0 (an I210 without flash has no EEPROM)");

    /* the 8254x path: none of the PCIe steps, the 8254x SDM's TIPG and collision distance */
    CHECK(!old->gio_master_disable && !old->swflag && !old->unforce_smbus && !old->ext_irq_mask &&
          !old->queue_enable && !old->adv_desc && !old->txdctl_82574, "8254x: no PCIe, igb or PCH step");
    CHECK(old->mac_src == E1000_MAC_EERD && old->reset_wait == E1000_WAIT_RST_CLEAR, "8254x: EERD, RST only");
    CHECK(old->phy_addr == 0, "8254x: the PHY is left alone");
    CHECK(pcie->phy_addr == 1 && igb->phy_addr == 1 && pch->phy_addr == 2,
          "internal PHY at MDIO address 1 (82574, igb), 2 (PCH LAN's external PHY)");
    CHECK(old->tipg == (10u | 8u << 10 | 6u << 20) && old->tctl_cold == 0x40, "8254x: TIPG 10/8/6, COLD 40h");
    /* the PCIe parts: bus mastering stopped before reset; igb alone enables queues */
    for (int f = E1000_FAM_82574; f < E1000_FAM_COUNT; f++) {
        const struct e1000_family *p = e1000_family_of(f);
        CHECK(p->gio_master_disable, "%s: GIO master disable before reset", p->name);
        CHECK(p->queue_enable == (f == E1000_FAM_IGB), "%s: queue enables only on igb", p->name);
        CHECK(p->adv_desc == (f == E1000_FAM_IGB), "%s: advanced descriptors only on igb", p->name);
        CHECK(p->reset_wait != E1000_WAIT_RST_CLEAR, "%s: waits for the NVM load after reset", p->name);
    }
    CHECK(pcie->txdctl_82574 && !igb->txdctl_82574 && !pch->txdctl_82574, "82574 alone: TXDCTL bit 22, TARC");
    return check_summary("test_e1000_models");
}
