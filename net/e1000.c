/* e1000.c - polled PRO/1000 driver, one path with a switch on the family's fields
 * (e1000_models.h); see e1000.h. Register names/sections: e1000_regs.h. The 8254x path's
 * register sequence is the one Bochs's e1000 runs in the VT-x tests: every family step is
 * guarded so that path stays exactly as it was. */
#include "e1000.h"
#include "e1000_regs.h"

static inline uint32_t rd(struct e1000 *n, uint32_t reg)
{
    return *(volatile uint32_t *)(n->regs + reg);
}

static inline void wr(struct e1000 *n, uint32_t reg, uint32_t v)
{
    *(volatile uint32_t *)(n->regs + reg) = v;
}

/* A short busy wait counted in TSC ticks (exact instruction counts in Bochs). */
static void delay_tsc(uint64_t ticks)
{
    uint64_t end = hv_rdtsc() + ticks;
    while (hv_rdtsc() < end)
        __asm__ volatile("pause");
}

struct find_ctx {
    const struct net_config *cfg;
    struct pci_addr found;
};

/* The MAC a NIC carries after power-on: the EEPROM load fills RAL0/RAH0 (13.5.2). */
static bool mac_of(struct pci_addr a, uint8_t mac[6])
{
    struct pci_bar bar;
    pci_bar_probe(a, 0, &bar);
    if (bar.io || bar.size == 0 || bar.base == 0)
        return false;
    uint16_t cmd = pci_cfg_read16(a, PCI_COMMAND);
    pci_cfg_write16(a, PCI_COMMAND, (uint16_t)(cmd | PCI_CMD_MEMORY));
    volatile uint8_t *r = hv_phys_to_virt_uc(bar.base);
    uint32_t lo = *(volatile uint32_t *)(r + E1000_RAL0), hi = *(volatile uint32_t *)(r + E1000_RAH0);
    pci_cfg_write16(a, PCI_COMMAND, cmd);
    for (int i = 0; i < 4; i++)
        mac[i] = (uint8_t)(lo >> (8 * i));
    mac[4] = (uint8_t)hi;
    mac[5] = (uint8_t)(hi >> 8);
    return true;
}

static bool find_cb(struct pci_addr a, uint16_t vendor, uint16_t device, void *vctx)
{
    struct find_ctx *c = vctx;
    if (!e1000_model_of(vendor, device))
        return false;
    switch (c->cfg->nic_sel) {
    case NET_NIC_AUTO:
        break;
    case NET_NIC_PCI:
        if (a.bus != c->cfg->pci_bus || a.dev != c->cfg->pci_dev || a.fn != c->cfg->pci_fn)
            return false;
        break;
    case NET_NIC_MAC: {
        uint8_t mac[6];
        if (!mac_of(a, mac) || memcmp(mac, c->cfg->mac, 6) != 0)
            return false;
        break;
    }
    }
    c->found = a;
    return true;
}

int e1000_find(const struct net_config *cfg, struct pci_addr *a)
{
    struct find_ctx c = { .cfg = cfg };
    if (!pci_scan(find_cb, &c))
        return -1;
    *a = c.found;
    return 0;
}

static uint16_t eeprom_read(struct e1000 *n, uint16_t word)
{
    const struct e1000_family *f = n->model->fam;
    wr(n, E1000_EERD, e1000_eerd_start(f, word));
    for (int i = 0; i < 100000; i++) {
        uint16_t data;
        if (e1000_eerd_data(f, rd(n, E1000_EERD), &data))
            return data;
    }
    return 0xffff;
}

/* Poll until (reg & mask) == want, at most 'tries' waits of 1000 TSC ticks; true when it got there. */
static bool wait_bits(struct e1000 *n, uint32_t reg, uint32_t mask, uint32_t want, int tries)
{
    for (int i = 0; i < tries; i++) {
        if ((rd(n, reg) & mask) == want)
            return true;
        delay_tsc(1000);
    }
    return (rd(n, reg) & mask) == want;
}

#define E1000_WAIT_TRIES 100000       /* 10^8 TSC ticks: tens of ms on hardware */

/* The PCIe parts' reset preamble (82574 DS "Software Reset"; Linux's e1000e and igb do the
 * same): no DMA may be in flight when the function resets, or a completion lands in a reset
 * device. Bus mastering is stopped, receive and transmit are switched off, and what was under
 * way gets time to drain. */
#define E1000_QUIESCE_TSC 30000000ull     /* ~10 ms at 3 GHz */
static void quiesce(struct e1000 *n)
{
    wr(n, E1000_CTRL, rd(n, E1000_CTRL) | E1000_CTRL_GIO_MASTER_DISABLE);
    if (!wait_bits(n, E1000_STATUS, E1000_STATUS_GIO_MASTER_ENABLE, 0, E1000_WAIT_TRIES))
        hv_log("net: %s: bus mastering still active before reset; resetting anyway\n",
               n->model->name);
    wr(n, E1000_RCTL, 0);
    wr(n, E1000_TCTL, E1000_TCTL_PSP);
    (void)rd(n, E1000_STATUS);          /* flush the posted writes */
    delay_tsc(E1000_QUIESCE_TSC);
}

/* igb: switch a queue off (RXDCTL/TXDCTL.ENABLE) and wait until it reads back off. */
static void queue_off(struct e1000 *n, uint32_t xdctl)
{
    wr(n, xdctl, rd(n, xdctl) & ~E1000_XDCTL_ENABLE);
    if (!wait_bits(n, xdctl, E1000_XDCTL_ENABLE, 0, E1000_WAIT_TRIES))
        hv_log("net: %s: queue control %x still enabled\n", n->model->name, xdctl);
}

/* PCH LAN: the software flag keeps the management engine off the PHY and NVM while the MAC
 * resets (the hardware grants it by letting the bit stick). */
static void swflag_take(struct e1000 *n)
{
    for (int i = 0; i < 100; i++) {
        wr(n, E1000_EXTCNF_CTRL, rd(n, E1000_EXTCNF_CTRL) | E1000_EXTCNF_CTRL_SWFLAG);
        if (wait_bits(n, E1000_EXTCNF_CTRL, E1000_EXTCNF_CTRL_SWFLAG, E1000_EXTCNF_CTRL_SWFLAG, 1000))
            return;
    }
    hv_log("net: %s: software flag not granted; resetting anyway\n", n->model->name);
}

static void swflag_release(struct e1000 *n)
{
    wr(n, E1000_EXTCNF_CTRL, rd(n, E1000_EXTCNF_CTRL) & ~E1000_EXTCNF_CTRL_SWFLAG);
}

/* One PHY register through MDIC: 0 and *v (read) or the write done, -1 on error or time-out. */
static int phy_access(struct e1000 *n, uint32_t op, uint32_t reg, uint16_t *v)
{
    wr(n, E1000_MDIC, op | reg << E1000_MDIC_REG_SHIFT |
                      (uint32_t)n->model->fam->phy_addr << E1000_MDIC_PHY_SHIFT | *v);
    if (!wait_bits(n, E1000_MDIC, E1000_MDIC_READY, E1000_MDIC_READY, E1000_WAIT_TRIES))
        return -1;
    uint32_t m = rd(n, E1000_MDIC);
    if (m & E1000_MDIC_ERROR)
        return -1;
    *v = (uint16_t)m;
    return 0;
}

/* The PHY keeps its settings across the MAC's reset and normally still has its link. When
 * auto-negotiation is off or has not completed, it is (re)started as Linux's e1000e and igb
 * do, so the link comes up by itself (QEMU's igb model drops it on every MAC reset). */
static void phy_autoneg(struct e1000 *n)
{
    uint16_t bmcr = 0, bmsr = 0;
    if (phy_access(n, E1000_MDIC_OP_READ, E1000_PHY_BMCR, &bmcr) ||
        phy_access(n, E1000_MDIC_OP_READ, E1000_PHY_BMSR, &bmsr)) {
        hv_log("net: %s: the PHY does not answer on MDIO address %u\n", n->model->name,
               n->model->fam->phy_addr);
        return;
    }
    if ((bmcr & E1000_BMCR_AUTOEN) && (bmsr & E1000_BMSR_AN_COMP))
        return;
    bmcr |= E1000_BMCR_AUTOEN | E1000_BMCR_ANRESTART;
    if (phy_access(n, E1000_MDIC_OP_WRITE, E1000_PHY_BMCR, &bmcr))
        hv_log("net: %s: restarting auto-negotiation failed\n", n->model->name);
}

/* The MAC address, from where the family keeps it; false when there is none. */
static bool read_mac(struct e1000 *n)
{
    const struct e1000_family *f = n->model->fam;
    if (f->mac_src == E1000_MAC_EERD) {
        for (int i = 0; i < 3; i++) {
            uint16_t w = eeprom_read(n, (uint16_t)(E1000_EEPROM_MAC_WORD0 + i));
            n->mac[2 * i] = (uint8_t)w;
            n->mac[2 * i + 1] = (uint8_t)(w >> 8);
        }
        return true;
    }
    uint32_t lo = rd(n, E1000_RAL0), hi = rd(n, E1000_RAH0);
    if (!(hi & E1000_RAH_AV))
        return false;                   /* the NVM load gave no address: nothing to send from */
    for (int i = 0; i < 4; i++)
        n->mac[i] = (uint8_t)(lo >> (8 * i));
    n->mac[4] = (uint8_t)hi;
    n->mac[5] = (uint8_t)(hi >> 8);
    return true;
}

/* Every DMA target is noted: with an IOMMU these are the only pages the NIC may reach. */
static void *alloc_dma(struct e1000 *n, size_t bytes)
{
    void *p = hv_alloc_pages(HV_PAGES(bytes));
    if (p && n->ndma < E1000_DMA_RANGES) {
        n->dma[n->ndma].pa = hv_virt_to_phys(p);
        n->dma[n->ndma++].size = HV_PAGES(bytes) * X86_PAGE_SIZE;
    } else if (p) {
        return NULL;                    /* a range nobody would register: unusable */
    }
    return p;
}

int e1000_init(struct e1000 *n, struct pci_addr a)
{
    memset(n, 0, sizeof *n);
    n->pci = a;
    uint32_t id = pci_cfg_read32(a, PCI_VENDOR_ID);
    n->model = e1000_model_of((uint16_t)id, (uint16_t)(id >> 16));
    if (!n->model)
        return -1;
    const struct e1000_family *f = n->model->fam;
    if (f->verified == E1000_READ_ONLY)
        hv_log("net: %s (%s family): this family's path was written from documentation and "
               "never run; a failure here says where it differs\n", n->model->name, f->name);
    /* every BAR, to hide from the guest (EPT for memory, nothing decodes I/O once off) */
    for (int i = 0; i < PCI_BAR_COUNT && n->nbars < E1000_MAX_BARS; ) {
        struct pci_bar b;
        int next = pci_bar_probe(a, i, &b);
        if (b.size)
            n->bars[n->nbars++] = b;
        if (i == 0) {
            n->bar0_phys = b.base;
            n->bar0_size = b.size;
            if (b.io || b.size == 0 || b.base == 0)
                return -1;                      /* BAR0 must be the register window */
        }
        i = next;
    }
    /* memory decode + bus mastering on; I/O decode and legacy interrupts off: polled */
    uint16_t cmd = pci_cfg_read16(a, PCI_COMMAND);
    cmd = (uint16_t)((cmd | PCI_CMD_MEMORY | PCI_CMD_BUS_MASTER | PCI_CMD_INTX_DISABLE) & ~PCI_CMD_IO);
    pci_cfg_write16(a, PCI_COMMAND, cmd);
    n->regs = hv_phys_to_virt_uc(n->bar0_phys);

    /* reset (13.4.1: RST self-clears; wait at least 1 us before touching registers) */
    wr(n, E1000_IMC, 0xffffffffu);
    if (f->ext_irq_mask)
        wr(n, E1000_EIMC, 0xffffffffu);
    if (f->gio_master_disable)
        quiesce(n);
    if (f->swflag)
        swflag_take(n);
    wr(n, E1000_CTRL, rd(n, E1000_CTRL) | E1000_CTRL_RST);
    delay_tsc(100000);
    for (int i = 0; i < 100000 && (rd(n, E1000_CTRL) & E1000_CTRL_RST); i++)
        delay_tsc(1000);
    /* the NVM is read again after a reset; RAL0 and the PHY settings come from it */
    if (f->reset_wait == E1000_WAIT_AUTO_RD &&
        !wait_bits(n, E1000_EECD, E1000_EECD_AUTO_RD, E1000_EECD_AUTO_RD, E1000_WAIT_TRIES))
        hv_log("net: %s: NVM auto-read not done after reset\n", n->model->name);
    if (f->reset_wait == E1000_WAIT_LAN_INIT &&
        !wait_bits(n, E1000_STATUS, E1000_STATUS_LAN_INIT_DONE, E1000_STATUS_LAN_INIT_DONE, E1000_WAIT_TRIES))
        hv_log("net: %s: LAN init not done after reset\n", n->model->name);
    if (f->swflag)
        swflag_release(n);
    wr(n, E1000_IMC, 0xffffffffu);              /* reset re-enables nothing, but be explicit */
    if (f->ext_irq_mask)
        wr(n, E1000_EIMC, 0xffffffffu);
    (void)rd(n, E1000_ICR);                     /* clear pending causes */
    /* No PHY reset through CTRL on any family: on the 82579 and later it forces the link to
     * 10 Mb/s; the PHY comes out of the MAC's reset auto-negotiating. */
    wr(n, E1000_CTRL, (rd(n, E1000_CTRL) | E1000_CTRL_SLU | E1000_CTRL_ASDE) & ~E1000_CTRL_PHY_RST);
    if (f->unforce_smbus)
        wr(n, E1000_CTRL_EXT, rd(n, E1000_CTRL_EXT) & ~E1000_CTRL_EXT_FORCE_SMBUS);
    if (f->phy_addr) {
        if (f->swflag)                  /* PCH LAN: the PHY is shared with the ME as well */
            swflag_take(n);
        phy_autoneg(n);
        if (f->swflag)
            swflag_release(n);
    }

    /* MAC from the NVM, programmed as receive address 0 */
    if (!read_mac(n)) {
        hv_log("net: %s: no valid MAC address in receive address 0 after reset\n", n->model->name);
        return -1;
    }
    wr(n, E1000_RAL0, n->mac[0] | n->mac[1] << 8 | n->mac[2] << 16 | (uint32_t)n->mac[3] << 24);
    wr(n, E1000_RAH0, n->mac[4] | n->mac[5] << 8 | E1000_RAH_AV);
    for (uint32_t i = 0; i < E1000_MTA_COUNT; i++)
        wr(n, E1000_MTA + 4 * i, 0);

    /* receive ring: every descriptor owns a 2 KiB buffer (two per page) */
    n->rx = alloc_dma(n, E1000_RX_DESCS * sizeof *n->rx);
    n->tx = alloc_dma(n, E1000_TX_DESCS * sizeof *n->tx);
    uint8_t *rxb = alloc_dma(n, E1000_RX_DESCS * E1000_BUF_SIZE);
    uint8_t *txb = alloc_dma(n, E1000_TX_DESCS * E1000_BUF_SIZE);
    if (!n->rx || !n->tx || !rxb || !txb)
        return -1;
    for (uint32_t i = 0; i < E1000_RX_DESCS; i++) {
        n->rx_buf[i] = rxb + i * E1000_BUF_SIZE;
        n->rx[i].addr = hv_virt_to_phys(n->rx_buf[i]);   /* per buffer: no contiguity assumed */
        n->rx[i].status = 0;            /* advanced: the read format's header address, 0 */
    }
    for (uint32_t i = 0; i < E1000_TX_DESCS; i++) {
        n->tx_buf[i] = txb + i * E1000_BUF_SIZE;
        n->tx[i].addr = hv_virt_to_phys(n->tx_buf[i]);
        n->tx[i].status = E1000_TXD_STAT_DD;              /* free */
    }
    _Static_assert(E1000_RX_DESCS * sizeof(struct e1000_rx_desc) % E1000_RING_ALIGN == 0, "RDLEN");
    _Static_assert(E1000_TX_DESCS * sizeof(struct e1000_tx_desc) % E1000_RING_ALIGN == 0, "TDLEN");
    uint64_t rxp = hv_virt_to_phys(n->rx), txp = hv_virt_to_phys(n->tx);
    if (f->queue_enable) {
        /* igb: a ring is (re)based only while its queue is off (Linux's igb does the same);
         * queue 0 comes out of reset enabled */
        queue_off(n, E1000_RXDCTL0);
        queue_off(n, E1000_TXDCTL0);
    }
    wr(n, E1000_RDBAL, (uint32_t)rxp);
    wr(n, E1000_RDBAH, (uint32_t)(rxp >> 32));
    wr(n, E1000_RDLEN, E1000_RX_DESCS * sizeof *n->rx);
    wr(n, E1000_RDH, 0);
    if (f->queue_enable) {
        /* igb: one-buffer advanced descriptors with 2 KiB buffers in queue 0's own control,
         * then the queue enabled; the tail is honoured only once the queue runs (igb DS
         * "Receive Queue Enable"). */
        uint32_t srr = rd(n, E1000_SRRCTL0) & ~(E1000_SRRCTL_DESCTYPE_MASK | E1000_SRRCTL_BSIZEPKT_MASK);
        wr(n, E1000_SRRCTL0, srr | E1000_SRRCTL_DESCTYPE_ADV_ONEBUF |
                             E1000_BUF_SIZE >> E1000_SRRCTL_BSIZEPKT_SHIFT);
        wr(n, E1000_RXDCTL0, rd(n, E1000_RXDCTL0) | E1000_XDCTL_ENABLE);
        if (!wait_bits(n, E1000_RXDCTL0, E1000_XDCTL_ENABLE, E1000_XDCTL_ENABLE, E1000_WAIT_TRIES))
            hv_log("net: %s: receive queue 0 did not enable\n", n->model->name);
    }
    wr(n, E1000_RDT, E1000_RX_DESCS - 1);       /* all but one descriptor owned by hardware */
    n->rx_next = 0;
    wr(n, E1000_RCTL, E1000_RCTL_EN | E1000_RCTL_BAM | E1000_RCTL_BSIZE_2048 | E1000_RCTL_SECRC);

    wr(n, E1000_TDBAL, (uint32_t)txp);
    wr(n, E1000_TDBAH, (uint32_t)(txp >> 32));
    wr(n, E1000_TDLEN, E1000_TX_DESCS * sizeof *n->tx);
    wr(n, E1000_TDH, 0);
    wr(n, E1000_TDT, 0);
    n->tx_tail = n->tx_clean = 0;
    if (f->txdctl_82574) {
        /* 82574 DS TXDCTL: bit 22 must be set; write-back per descriptor (WTHRESH 1, GRAN) */
        uint32_t t = rd(n, E1000_TXDCTL0) & ~E1000_TXDCTL_WTHRESH_MASK;
        wr(n, E1000_TXDCTL0, t | E1000_TXDCTL_BIT22 | E1000_TXDCTL_GRAN | E1000_TXDCTL_WTHRESH_1);
        wr(n, E1000_TARC0, rd(n, E1000_TARC0) | E1000_TARC_ENABLE);
    }
    if (f->queue_enable) {
        wr(n, E1000_TXDCTL0, rd(n, E1000_TXDCTL0) | E1000_XDCTL_ENABLE);
        if (!wait_bits(n, E1000_TXDCTL0, E1000_XDCTL_ENABLE, E1000_XDCTL_ENABLE, E1000_WAIT_TRIES))
            hv_log("net: %s: transmit queue 0 did not enable\n", n->model->name);
    }
    if (f->tipg)
        wr(n, E1000_TIPG, f->tipg);
    uint32_t tctl = E1000_TCTL_EN | E1000_TCTL_PSP | E1000_TCTL_CT_DEFAULT << E1000_TCTL_CT_SHIFT |
                    f->tctl_cold << E1000_TCTL_COLD_SHIFT;
    if (f->gio_master_disable)          /* PCIe parts: keep the reset value's other bits */
        tctl |= (rd(n, E1000_TCTL) & ~(E1000_TCTL_CT_MASK | E1000_TCTL_COLD_MASK)) | E1000_TCTL_RTLC;
    wr(n, E1000_TCTL, tctl);
    n->link_up = (rd(n, E1000_STATUS) & E1000_STATUS_LU) != 0;
    return 0;
}

int e1000_tx(struct e1000 *n, const void *frame, size_t len)
{
    if (len > E1000_MAX_FRAME)
        return -2;
    /* reclaim descriptors the hardware has finished (DD set because we ask for RS) */
    while (n->tx_clean != n->tx_tail && (n->tx[n->tx_clean].status & E1000_TXD_STAT_DD))
        n->tx_clean = (n->tx_clean + 1) % E1000_TX_DESCS;
    uint32_t next = (n->tx_tail + 1) % E1000_TX_DESCS;
    if (next == n->tx_clean) {
        n->cnt.tx_ring_full++;
        return -1;
    }
    struct e1000_tx_desc *d = &n->tx[n->tx_tail];
    memcpy(n->tx_buf[n->tx_tail], frame, len);
    if (n->model->fam->adv_desc) {
        struct e1000_adv_tx_desc *a = (struct e1000_adv_tx_desc *)d;
        a->addr = hv_virt_to_phys(n->tx_buf[n->tx_tail]);     /* the write-back may clobber it */
        a->olinfo_status = (uint32_t)len << E1000_ADVTXD_PAYLEN_SHIFT;
        a->cmd_type_len = (uint32_t)len | E1000_ADVTXD_DTYP_DATA | E1000_ADVTXD_DCMD_EOP |
                          E1000_ADVTXD_DCMD_IFCS | E1000_ADVTXD_DCMD_RS | E1000_ADVTXD_DCMD_DEXT;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* descriptor before the tail write */
        n->tx_tail = next;
        wr(n, E1000_TDT, next);
        n->cnt.tx_frames++;
        return 0;
    }
    d->length = (uint16_t)len;
    d->cso = 0;
    d->css = 0;
    d->special = 0;
    d->status = 0;
    d->cmd = E1000_TXD_CMD_EOP | E1000_TXD_CMD_IFCS | E1000_TXD_CMD_RS;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);        /* descriptor before the tail write */
    n->tx_tail = next;
    wr(n, E1000_TDT, next);
    n->cnt.tx_frames++;
    return 0;
}

/* Has the part filled descriptor i? Then its frame's length, and whether it is whole and clean. */
static bool rx_done(struct e1000 *n, uint32_t i, uint16_t *len, bool *good)
{
    if (n->model->fam->adv_desc) {
        union e1000_adv_rx_desc *a = (union e1000_adv_rx_desc *)&n->rx[i];
        uint32_t st = a->wb.status_error;
        if (!(st & E1000_ADVRXD_STAT_DD))
            return false;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* status before the data */
        *len = a->wb.length;
        *good = (st & E1000_ADVRXD_STAT_EOP) && !(st & E1000_ADVRXD_ERR_FRAME);
        return true;
    }
    struct e1000_rx_desc *d = &n->rx[i];
    if (!(d->status & E1000_RXD_STAT_DD))
        return false;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);        /* status before the data */
    *len = d->length;
    *good = (d->status & E1000_RXD_STAT_EOP) && d->errors == 0;
    return true;
}

/* Descriptor i back to the part's side (the tail write follows). */
static void rx_rearm(struct e1000 *n, uint32_t i)
{
    if (n->model->fam->adv_desc) {
        union e1000_adv_rx_desc *a = (union e1000_adv_rx_desc *)&n->rx[i];
        a->read.pkt_addr = hv_virt_to_phys(n->rx_buf[i]);
        a->read.hdr_addr = 0;
    } else {
        n->rx[i].status = 0;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

unsigned e1000_rx_poll(struct e1000 *n, void (*cb)(void *ctx, const uint8_t *frame, size_t len),
                       void *ctx, unsigned budget)
{
    unsigned got = 0;
    while (got < budget) {
        uint16_t len;
        bool good;
        if (!rx_done(n, n->rx_next, &len, &good))
            break;
        if (good && len <= E1000_BUF_SIZE) {
            n->cnt.rx_frames++;
            cb(ctx, n->rx_buf[n->rx_next], len);
        } else {
            n->cnt.rx_errors++;     /* multi-buffer frames cannot happen at MTU 1500 */
        }
        rx_rearm(n, n->rx_next);
        wr(n, E1000_RDT, n->rx_next);               /* give the descriptor back */
        n->rx_next = (n->rx_next + 1) % E1000_RX_DESCS;
        got++;
    }
    return got;
}

bool e1000_link_poll(struct e1000 *n)
{
    bool up = (rd(n, E1000_STATUS) & E1000_STATUS_LU) != 0;
    if (up == n->link_up)
        return false;
    n->link_up = up;
    n->cnt.link_changes++;
    return true;
}
