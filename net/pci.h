/*
 * pci.h - PCI configuration access for the hypervisor's own use (configuration mechanism #1:
 * ports 0xCF8/0xCFC, PCI Local Bus Specification 3.0 section 3.2.2.3.2), bus scan, BAR sizing.
 *
 * Contract: callers hold no lock of the guest's; pci_cfg_* write the address latch 0xCF8 and
 * so must never run while a guest access is half done on this CPU. The guest's own accesses
 * are emulated by net_hide.c, which re-writes the guest's latched address before each data
 * access, so the hypervisor using the latch in between is invisible to the guest.
 */
#ifndef HVT_NET_PCI_H
#define HVT_NET_PCI_H
#include "net_port.h"

#define PCI_CFG_ADDR_PORT     0xcf8u
#define PCI_CFG_DATA_PORT     0xcfcu
#define PCI_CFG_ENABLE        0x80000000u   /* bit 31 of CONFIG_ADDRESS */
#define PCI_CFG_REG_MASK      0xfcu         /* bits 7:2: the dword register */
#define PCI_CFG_FN_MASK       0x80ffff00u   /* enable, bus, device, function */

/* Type 0 configuration header offsets (PCI 3.0 section 6.1) */
#define PCI_VENDOR_ID         0x00
#define PCI_DEVICE_ID         0x02
#define PCI_COMMAND           0x04
#define PCI_HEADER_TYPE       0x0e
#define PCI_BAR0              0x10
#define PCI_BAR_COUNT         6
#define PCI_ROM_BAR           0x30
#define PCI_CMD_IO            0x0001u
#define PCI_CMD_MEMORY        0x0002u
#define PCI_CMD_BUS_MASTER    0x0004u
#define PCI_CMD_INTX_DISABLE  0x0400u
#define PCI_HEADER_MULTIFUNC  0x80u
#define PCI_BAR_IO            0x1u          /* bit 0: I/O space BAR */
#define PCI_BAR_MEM_TYPE_MASK 0x6u          /* bits 2:1: 00 32-bit, 10 64-bit */
#define PCI_BAR_MEM_TYPE_64   0x4u
#define PCI_BAR_MEM_MASK      (~0xfull)
#define PCI_VENDOR_NONE       0xffffu

struct pci_addr { uint8_t bus, dev, fn; };

static inline uint32_t pci_cfg_address(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return PCI_CFG_ENABLE | (uint32_t)bus << 16 | (uint32_t)(dev & 0x1f) << 11 |
           (uint32_t)(fn & 7) << 8 | (off & 0xfc);
}

uint32_t pci_cfg_read32(struct pci_addr a, uint8_t off);
uint16_t pci_cfg_read16(struct pci_addr a, uint8_t off);
void     pci_cfg_write32(struct pci_addr a, uint8_t off, uint32_t v);
void     pci_cfg_write16(struct pci_addr a, uint8_t off, uint16_t v);

/* Visit every present function; stop early when fn returns true. Returns true if stopped. */
bool pci_scan(bool (*fn)(struct pci_addr a, uint16_t vendor, uint16_t device, void *ctx), void *ctx);

struct pci_bar {
    uint64_t base, size;
    bool     io, is64;
};
/* Size BAR i (decoding is switched off while sizing). Returns the index of the next BAR
 * (i + 2 after a 64-bit BAR), or PCI_BAR_COUNT. size 0: BAR not implemented. */
int pci_bar_probe(struct pci_addr a, int i, struct pci_bar *bar);

#endif
