/*
 * net_hide.c - keeping the NIC out of the guest's sight, and watching COM1.
 *
 * PCI configuration mechanism #1: the guest's CONFIG_ADDRESS (0xCF8, 32-bit) is latched here
 * instead of in the chipset; each CONFIG_DATA access (0xCFC-0xCFF) is either answered as "no
 * device" (reads all ones, writes ignored: PCI 3.0 section 6.1, a master abort) when the latch
 * selects the NIC, or replayed on the real ports with the guest's latch value, under the same
 * lock the hypervisor's own accesses take. So the hypervisor may use the latch at any time.
 * 0xCF9 (the PIIX reset control register) and other sizes pass through untouched.
 * Bridges: writes to those above the NIC are dropped whole; on every other function a write
 * reaching the dword at 0x18 goes through vmm/'s mcfg_write_mask (pci_mcfg.h): the bus
 * numbers of a type-1 or CardBus header are never written, the latency timer at 0x1B is.
 * Memory: every BAR of the NIC is listed for the layer to hide in EPT (net_layer.c).
 */
#include "net_internal.h"
#include "pci.h"
#include "pci_mcfg.h"

#define UART_LCR_DLAB 0x80u             /* 16550 LCR bit 7: divisor latch access */
#define PCI_CFG_ADDR_SIZE 4u

static uint32_t guest_cf8;              /* the guest's CONFIG_ADDRESS (one latch, as in HW) */
#define NET_MAX_BRIDGES 8
static struct pci_addr bridges[NET_MAX_BRIDGES];   /* above the NIC: read-only to the guest */
static unsigned nbridges;
static uint8_t guest_lcr;

void net_nic_bdf(uint8_t *bus, uint8_t *dev, uint8_t *fn)
{
    *bus = net.nic.pci.bus;
    *dev = net.nic.pci.dev;
    *fn = net.nic.pci.fn;
}

int net_dma_range(uint64_t *base, uint64_t *size, int idx)
{
    if (!net.active || idx < 0 || idx >= net.nic.ndma)
        return -1;
    *base = net.nic.dma[idx].pa;
    *size = net.nic.dma[idx].size;
    return 0;
}

/* Set while the image starts, before any CPU runs the guest. */
void net_pci_protect_bridges(const struct pci_addr *b, unsigned n)
{
    nbridges = n < NET_MAX_BRIDGES ? n : NET_MAX_BRIDGES;
    for (unsigned i = 0; i < nbridges; i++)
        bridges[i] = b[i];
}

static bool is_protected_bridge(uint8_t bus, uint8_t dev, uint8_t fn)
{
    for (unsigned i = 0; i < nbridges; i++)
        if (bridges[i].bus == bus && bridges[i].dev == dev && bridges[i].fn == fn)
            return true;
    return false;
}

bool net_pci_is_hidden(uint8_t bus, uint8_t dev, uint8_t fn)
{
    return net.active && bus == net.nic.pci.bus && dev == net.nic.pci.dev && fn == net.nic.pci.fn;
}

static uint64_t size_mask(unsigned size)
{
    return size >= 8 ? ~0ull : (1ull << (8 * size)) - 1;
}

/* IN's effect on RAX: a 32-bit IN zero-extends (like any 32-bit register write in 64-bit
 * mode, SDM vol. 1 3.4.1.1); 8- and 16-bit INs keep the upper bits. */
static uint64_t in_result(uint64_t rax, unsigned size, uint64_t v)
{
    uint64_t m = size_mask(size);
    return size == 4 ? (v & m) : ((rax & ~m) | (v & m));
}

/* mcfg_guarded_write's store: an OUT to the data port byte the register falls on (the
 * guest's address is in the latch). */
static void port_store(void *ctx, uint16_t off, unsigned size, uint64_t val)
{
    hv_port_io(false, size, (uint16_t)(PCI_CFG_DATA_PORT + (off & 3)), &val);
}

/* A guest write to the dword at 0x18 of a function not hidden: mcfg_guarded_write, for the
 * header type the function has (read from the device itself, not from anything the guest
 * could have written). */
static bool bus_numbers_write(uint32_t addr, uint16_t port, unsigned size, uint64_t rax)
{
    unsigned off = MCFG_REG_BUS_NUMBERS + (port - PCI_CFG_DATA_PORT);
    net_lock(&pci_cfg_lock);
    hv_outl(PCI_CFG_ADDR_PORT, (addr & PCI_CFG_FN_MASK) | (MCFG_REG_HEADER_TYPE & PCI_CFG_REG_MASK));
    uint8_t hdr = (uint8_t)(hv_inl(PCI_CFG_DATA_PORT) >> (8 * (MCFG_REG_HEADER_TYPE & 3)));
    hv_outl(PCI_CFG_ADDR_PORT, addr);
    mcfg_guarded_write(hdr, (uint16_t)off, size, rax, port_store, 0);
    net_unlock(&pci_cfg_lock);
    return true;
}

static bool pci_data(uint16_t port, unsigned size, bool in, uint64_t *rax)
{
    uint32_t addr = __atomic_load_n(&guest_cf8, __ATOMIC_RELAXED);
    if (!(addr & PCI_CFG_ENABLE))
        return false;                   /* not a configuration cycle: ordinary I/O */
    uint8_t bus = (uint8_t)(addr >> 16), dev = (addr >> 11) & 0x1f, fn = (addr >> 8) & 7;
    if (net_pci_is_hidden(bus, dev, fn)) {
        if (in)
            *rax = in_result(*rax, size, 0xffffffffull);   /* master abort: all ones */
        return true;
    }
    if (!in && is_protected_bridge(bus, dev, fn))
        return true;                    /* bus numbers, windows, bridge control: not the guest's */
    /* The register is CONFIG_ADDRESS bits 7:2 (PCI 3.0, 3.2.2.3.2); bits 27:24, which some
     * chipsets take as extended register bits and others ignore, are ignored here too, so a
     * guest cannot reach 0x18 past the check by setting them (a write to 0x118-0x11A where
     * they do mean something is held back as well). */
    if (!in && (addr & PCI_CFG_REG_MASK) == MCFG_REG_BUS_NUMBERS)
        return bus_numbers_write(addr, port, size, *rax);
    net_lock(&pci_cfg_lock);
    hv_outl(PCI_CFG_ADDR_PORT, addr);
    hv_port_io(in, size, port, rax);
    net_unlock(&pci_cfg_lock);
    return true;
}

bool net_io_exit(uint16_t port, unsigned size, bool in, uint64_t *rax)
{
    if (port == NET_IO_COM1_DATA && !in && !(guest_lcr & UART_LCR_DLAB)) {
        net_console_byte((uint8_t)*rax);
        return false;                   /* the core still writes it to the UART */
    }
    if (port == NET_IO_COM1_LCR && !in) {
        guest_lcr = (uint8_t)*rax;
        return false;
    }
    if (!net.active)
        return false;
    if (port == PCI_CFG_ADDR_PORT && size == PCI_CFG_ADDR_SIZE) {
        if (in)
            *rax = in_result(*rax, 4, guest_cf8);
        else
            __atomic_store_n(&guest_cf8, (uint32_t)*rax, __ATOMIC_RELAXED);
        return true;
    }
    if (port >= PCI_CFG_DATA_PORT && port + size <= PCI_CFG_DATA_PORT + 4)
        return pci_data(port, size, in, rax);
    /* Partly in CONFIG_DATA (a dword at 0xCFD, a word at 0xCFB, a dword at 0xCF9): the CPU
     * splits an unaligned port access into aligned ones (SDM vol. 1, "I/O Address Space"),
     * so passed on it would reach the data port with whatever address the real latch last
     * held, past every check above. No driver does it: reads see all ones, writes go
     * nowhere. */
    if (port < PCI_CFG_DATA_PORT + 4 && port + size > PCI_CFG_DATA_PORT) {
        if (in)
            *rax = in_result(*rax, size, 0xffffffffull);
        return true;
    }
    return false;
}

int net_hidden_mmio(uint64_t *base, uint64_t *size, int idx)
{
    if (!net.active)
        return -1;
    int k = 0;
    for (int i = 0; i < net.nic.nbars; i++) {
        if (net.nic.bars[i].io)
            continue;                   /* I/O decoding is off; nothing to unmap */
        if (k++ == idx) {
            *base = net.nic.bars[i].base;
            *size = net.nic.bars[i].size;
            return 0;
        }
    }
    return -1;
}
