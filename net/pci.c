/* pci.c - configuration mechanism #1 access, bus scan, BAR sizing; see pci.h. */
#include "pci.h"

/* The hypervisor's own accesses take this lock so two CPUs never interleave on the latch
 * (net_hide.c takes it too for the guest's emulated accesses). */
net_spinlock pci_cfg_lock;

uint32_t pci_cfg_read32(struct pci_addr a, uint8_t off)
{
    net_lock(&pci_cfg_lock);
    hv_outl(PCI_CFG_ADDR_PORT, pci_cfg_address(a.bus, a.dev, a.fn, off));
    uint32_t v = hv_inl(PCI_CFG_DATA_PORT);
    net_unlock(&pci_cfg_lock);
    return v;
}

uint16_t pci_cfg_read16(struct pci_addr a, uint8_t off)
{
    return (uint16_t)(pci_cfg_read32(a, off) >> ((off & 2) * 8));
}

void pci_cfg_write32(struct pci_addr a, uint8_t off, uint32_t v)
{
    net_lock(&pci_cfg_lock);
    hv_outl(PCI_CFG_ADDR_PORT, pci_cfg_address(a.bus, a.dev, a.fn, off));
    hv_outl(PCI_CFG_DATA_PORT, v);
    net_unlock(&pci_cfg_lock);
}

void pci_cfg_write16(struct pci_addr a, uint8_t off, uint16_t v)
{
    net_lock(&pci_cfg_lock);
    hv_outl(PCI_CFG_ADDR_PORT, pci_cfg_address(a.bus, a.dev, a.fn, off));
    hv_outw((uint16_t)(PCI_CFG_DATA_PORT + (off & 2)), v);
    net_unlock(&pci_cfg_lock);
}

bool pci_scan(bool (*fn)(struct pci_addr a, uint16_t vendor, uint16_t device, void *ctx), void *ctx)
{
    for (unsigned bus = 0; bus < 256; bus++) {
        for (uint8_t dev = 0; dev < 32; dev++) {
            struct pci_addr a = { (uint8_t)bus, dev, 0 };
            uint32_t id = pci_cfg_read32(a, PCI_VENDOR_ID);
            if ((id & 0xffff) == PCI_VENDOR_NONE)
                continue;
            uint8_t nfn = (pci_cfg_read32(a, PCI_HEADER_TYPE & 0xfc) >> 16) & PCI_HEADER_MULTIFUNC ? 8 : 1;
            for (uint8_t f = 0; f < nfn; f++) {
                a.fn = f;
                id = pci_cfg_read32(a, PCI_VENDOR_ID);
                if ((id & 0xffff) == PCI_VENDOR_NONE)
                    continue;
                if (fn(a, (uint16_t)id, (uint16_t)(id >> 16), ctx))
                    return true;
            }
        }
    }
    return false;
}

int pci_bar_probe(struct pci_addr a, int i, struct pci_bar *bar)
{
    uint8_t off = (uint8_t)(PCI_BAR0 + 4 * i);
    memset(bar, 0, sizeof *bar);
    uint16_t cmd = pci_cfg_read16(a, PCI_COMMAND);
    /* no decoding while the BAR holds the all-ones sizing pattern */
    pci_cfg_write16(a, PCI_COMMAND, (uint16_t)(cmd & ~(PCI_CMD_IO | PCI_CMD_MEMORY)));
    uint32_t lo = pci_cfg_read32(a, off);
    pci_cfg_write32(a, off, 0xffffffffu);
    uint32_t lo_mask = pci_cfg_read32(a, off);
    pci_cfg_write32(a, off, lo);
    int next = i + 1;
    if (lo & PCI_BAR_IO) {
        bar->io = true;
        bar->base = lo & ~0x3u;
        uint32_t m = lo_mask & ~0x3u & 0xffffu;
        bar->size = m ? (uint64_t)(~m & 0xffffu) + 1 : 0;
    } else {
        uint64_t base = lo & PCI_BAR_MEM_MASK, mask = (lo_mask & PCI_BAR_MEM_MASK) | 0xffffffff00000000ull;
        if ((lo & PCI_BAR_MEM_TYPE_MASK) == PCI_BAR_MEM_TYPE_64 && i + 1 < PCI_BAR_COUNT) {
            uint32_t hi = pci_cfg_read32(a, (uint8_t)(off + 4));
            pci_cfg_write32(a, (uint8_t)(off + 4), 0xffffffffu);
            uint32_t hi_mask = pci_cfg_read32(a, (uint8_t)(off + 4));
            pci_cfg_write32(a, (uint8_t)(off + 4), hi);
            base |= (uint64_t)hi << 32;
            mask = (mask & 0xffffffffull) | (uint64_t)hi_mask << 32;
            bar->is64 = true;
            next = i + 2;
        }
        bar->base = base;
        bar->size = (lo_mask & PCI_BAR_MEM_MASK) ? ~mask + 1 : 0;
    }
    pci_cfg_write16(a, PCI_COMMAND, cmd);
    return next;
}
