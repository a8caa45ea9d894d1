/*
 * e1000_models.h - which Intel PRO/1000 parts the NIC driver (e1000.c) takes, and what differs
 * between their families. Portable (net_port.h): the hypervisor and the host tests build it.
 *
 * Contract:
 *  - e1000_model_of(vendor, device) is the one table of supported PCI ids: the model, or NULL.
 *    The driver takes nothing else; `nic=auto` takes the first supported id the bus scan finds.
 *  - Every per-family decision the driver makes is a field of struct e1000_family, so a family
 *    is added here and in the driver's switch on these fields, nowhere else.
 *  - e1000_eerd_start()/e1000_eerd_data() encode and decode the EEPROM Read register in the
 *    family's layout: the 8254x keeps DONE in bit 4 and the word address from bit 8; the
 *    82571 and later parts (82574, igb) have DONE in bit 1 and the address from bit 2.
 *  - verified says how far the family's path was exercised: by the emulators the tests run
 *    (Bochs's e1000, QEMU's e1000e), or only written from datasheets and other drivers.
 */
#ifndef HVT_E1000_MODELS_H
#define HVT_E1000_MODELS_H
#include "net_port.h"

enum e1000_fam_id {
    E1000_FAM_8254X,        /* 82540/82545: conventional PCI, the 8254x SDM */
    E1000_FAM_82574,        /* 82574L/82583V (Linux e1000e, non-PCH): PCIe, one port */
    E1000_FAM_IGB,          /* 82576, I350, I210, I211 (Linux igb): per-queue enables */
    E1000_FAM_PCH,          /* I217/I218/I219 (PCH LAN): MAC in the chipset, PHY outside */
    E1000_FAM_COUNT
};

/* How the MAC address is found after reset. */
enum e1000_mac_src {
    E1000_MAC_EERD,         /* EEPROM words 0-2 through EERD */
    E1000_MAC_RAL,          /* receive address 0, which the part loads from its NVM at reset
                               (no EERD on PCH LAN; an I210 without flash has iNVM only) */
};

/* What to wait for after CTRL.RST before touching the part again. */
enum e1000_reset_wait {
    E1000_WAIT_RST_CLEAR,   /* CTRL.RST self-clears (8254x) */
    E1000_WAIT_AUTO_RD,     /* and EECD.AUTO_RD: the NVM's auto-read is done (82574, igb) */
    E1000_WAIT_LAN_INIT,    /* and STATUS.LAN_INIT_DONE (PCH LAN) */
};

enum e1000_verified {
    E1000_RUN_BOCHS_QEMU,   /* run in Bochs (VT-x tests) and QEMU */
    E1000_RUN_QEMU,         /* run in QEMU without VT-x */
    E1000_READ_ONLY,        /* written from datasheets and other drivers; never run here */
};

struct e1000_family {
    enum e1000_fam_id id;
    const char *name;
    uint32_t eerd_done, eerd_addr_shift;  /* EERD layout; eerd_done 0: no EERD */
    enum e1000_mac_src mac_src;
    enum e1000_reset_wait reset_wait;
    bool gio_master_disable;  /* PCIe: stop bus mastering before the reset */
    bool swflag;              /* PCH: own EXTCNF_CTRL.SWFLAG across the reset */
    bool unforce_smbus;       /* PCH: the MAC-PHY link leaves SMBus mode for PCIe-like K1 */
    bool ext_irq_mask;        /* igb: the extended causes have their own mask (EIMC) */
    bool queue_enable;        /* igb: RXDCTL/TXDCTL.ENABLE before the rings run, SRRCTL */
    bool adv_desc;            /* igb: advanced descriptors (the legacy ones are optional on
                                 igb parts, and QEMU's igb model has none) */
    bool txdctl_82574;        /* 82574: TXDCTL bit 22 and GRAN, TARC0 enable */
    uint8_t  phy_addr;        /* the internal PHY's MDIO address; 0: the PHY is left alone */
    uint32_t tipg;            /* 0: keep the reset value */
    uint32_t tctl_cold;       /* collision distance, full duplex */
    enum e1000_verified verified;
};

struct e1000_model {
    uint16_t device;          /* vendor is always Intel, 8086 */
    const char *name;
    const struct e1000_family *fam;
};

const struct e1000_model *e1000_model_of(uint16_t vendor, uint16_t device);
/* The table itself, for the tests and the documentation's list. */
const struct e1000_model *e1000_model_at(unsigned i);   /* NULL past the end */
const struct e1000_family *e1000_family_of(enum e1000_fam_id id);

uint32_t e1000_eerd_start(const struct e1000_family *f, uint16_t word);
/* true and *data when the value read shows DONE; false while the read is in progress */
bool e1000_eerd_data(const struct e1000_family *f, uint32_t eerd, uint16_t *data);

#endif
