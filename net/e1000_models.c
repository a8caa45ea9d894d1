/* e1000_models.c - the supported PRO/1000 ids and their families; see e1000_models.h.
 * Register bits: e1000_regs.h. */
#include "e1000_models.h"
#include "e1000_regs.h"

static const struct e1000_family families[E1000_FAM_COUNT] = {
    [E1000_FAM_8254X] = {
        .id = E1000_FAM_8254X, .name = "8254x",
        .eerd_done = E1000_EERD_DONE, .eerd_addr_shift = E1000_EERD_ADDR_SHIFT,
        .mac_src = E1000_MAC_EERD, .reset_wait = E1000_WAIT_RST_CLEAR,
        .tipg = E1000_TIPG_DEFAULT, .tctl_cold = E1000_TCTL_COLD_FD,
        .verified = E1000_RUN_BOCHS_QEMU,
    },
    /* The EEPROM is read through EERD on purpose although RAL0 holds the same address: it is
     * the part's documented NVM path, and QEMU's model checks it. */
    [E1000_FAM_82574] = {
        .id = E1000_FAM_82574, .name = "82574",
        .eerd_done = E1000_EERD_DONE_PCIE, .eerd_addr_shift = E1000_EERD_ADDR_SHIFT_PCIE,
        .mac_src = E1000_MAC_EERD, .reset_wait = E1000_WAIT_AUTO_RD,
        .gio_master_disable = true, .txdctl_82574 = true, .phy_addr = 1,
        .tipg = E1000_TIPG_PCIE, .tctl_cold = E1000_TCTL_COLD_FD_PCIE,
        .verified = E1000_RUN_QEMU,
    },
    /* An I210 without flash keeps its address in iNVM, which EERD does not read: RAL0, which
     * every igb part loads at reset, is the one source they share. */
    [E1000_FAM_IGB] = {
        .id = E1000_FAM_IGB, .name = "igb",
        .eerd_done = E1000_EERD_DONE_PCIE, .eerd_addr_shift = E1000_EERD_ADDR_SHIFT_PCIE,
        .mac_src = E1000_MAC_RAL, .reset_wait = E1000_WAIT_AUTO_RD,
        .gio_master_disable = true, .ext_irq_mask = true, .queue_enable = true, .adv_desc = true,
        .phy_addr = 1,
        .tipg = 0, .tctl_cold = E1000_TCTL_COLD_FD_PCIE,
        .verified = E1000_RUN_QEMU,
    },
    /* No EERD: the NVM is a region of the platform's SPI flash. */
    [E1000_FAM_PCH] = {
        .id = E1000_FAM_PCH, .name = "PCH LAN",
        .eerd_done = 0, .eerd_addr_shift = 0,
        .mac_src = E1000_MAC_RAL, .reset_wait = E1000_WAIT_LAN_INIT,
        .gio_master_disable = true, .swflag = true, .unforce_smbus = true, .phy_addr = 2,
        .tipg = E1000_TIPG_PCIE, .tctl_cold = E1000_TCTL_COLD_FD_PCIE,
        .verified = E1000_READ_ONLY,
    },
};

#define F(x) (&families[E1000_FAM_##x])
/* Copper parts only: a fibre or SerDes port needs another link bring-up. */
static const struct e1000_model models[] = {
    { 0x100e, "82540EM",        F(8254X) },
    { 0x1015, "82540EM (LOM)",  F(8254X) },
    { 0x1016, "82540EP (LOM)",  F(8254X) },
    { 0x1017, "82540EP",        F(8254X) },
    { 0x101e, "82540EP (LP)",   F(8254X) },
    { 0x100f, "82545EM",        F(8254X) },
    { 0x10d3, "82574L",         F(82574) },
    { 0x10f6, "82574LA",        F(82574) },
    { 0x150c, "82583V",         F(82574) },
    { 0x10c9, "82576",          F(IGB) },
    { 0x1521, "I350",           F(IGB) },
    { 0x1533, "I210",           F(IGB) },
    { 0x157b, "I210 (no flash)", F(IGB) },
    { 0x1539, "I211",           F(IGB) },
    { 0x153a, "I217-LM",        F(PCH) },
    { 0x153b, "I217-V",         F(PCH) },
    { 0x155a, "I218-LM",        F(PCH) },
    { 0x1559, "I218-V",         F(PCH) },
    { 0x156f, "I219-LM",        F(PCH) },
    { 0x1570, "I219-V",         F(PCH) },
    { 0x15b7, "I219-LM",    F(PCH) },
    { 0x15b8, "I219-V",     F(PCH) },
    { 0x15d7, "I219-LM",    F(PCH) },
    { 0x15d8, "I219-V",     F(PCH) },
    { 0x15e3, "I219-LM",    F(PCH) },
};
#undef F

const struct e1000_model *e1000_model_at(unsigned i)
{
    return i < sizeof models / sizeof models[0] ? &models[i] : NULL;
}

const struct e1000_model *e1000_model_of(uint16_t vendor, uint16_t device)
{
    if (vendor != E1000_VENDOR_INTEL)
        return NULL;
    for (const struct e1000_model *m = models; m < models + sizeof models / sizeof models[0]; m++)
        if (m->device == device)
            return m;
    return NULL;
}

const struct e1000_family *e1000_family_of(enum e1000_fam_id id)
{
    return id < E1000_FAM_COUNT ? &families[id] : NULL;
}

uint32_t e1000_eerd_start(const struct e1000_family *f, uint16_t word)
{
    return E1000_EERD_START | (uint32_t)word << f->eerd_addr_shift;
}

bool e1000_eerd_data(const struct e1000_family *f, uint32_t eerd, uint16_t *data)
{
    if (!(eerd & f->eerd_done))
        return false;
    *data = (uint16_t)(eerd >> E1000_EERD_DATA_SHIFT);
    return true;
}
