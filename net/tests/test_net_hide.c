/*
 * test_net_hide.c - host unit test of net/net_hide.c, the guest's PCI configuration accesses
 * through 0xCF8/0xCFC, against a model of configuration mechanism #1 (PCI Local Bus
 * Specification 3.0, 3.2.2.3.2): a CONFIG_ADDRESS latch and byte-enabled CONFIG_DATA over the
 * configuration space of a few functions. What the guest does goes to net_io_exit() as vmm/
 * hands it over; an access it declines goes to the model's ports as the CPU would send it,
 * unaligned ones split into bytes (SDM vol. 1, "I/O Address Space"), with the address the
 * real latch holds. Checked: the bus numbers of a bridge off the NIC's path stay the
 * firmware's whatever the width and port of a write (the latency timer beside them is
 * written), bits 27:24 of the address do not carry a write past, a type-0 function's BAR 2
 * at the same offset is written whole, an access only partly in CONFIG_DATA reaches nothing,
 * the NIC stays hidden and the bridge above it read-only.
 * Prints failed checks and "test_net_hide: N passed, N failed".
 */
#include <limits.h>             /* SSIZE_MAX: lwIP then takes the C library's ssize_t */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "net_internal.h"
#include "pci.h"
#include "check.h"

struct net_state net;
net_spinlock pci_cfg_lock;
void net_console_byte(uint8_t b) { (void)b; }

/* ---- the hardware: functions, the real latch, the data port ---------------------------- */
struct fn { uint8_t bus, dev, fn; uint8_t space[256]; };
static struct fn fns[5];
static uint32_t real_cf8;

static struct fn *fn_at(uint32_t addr)
{
    if (!(addr & PCI_CFG_ENABLE))
        return NULL;
    for (unsigned i = 0; i < sizeof fns / sizeof fns[0]; i++)
        if (fns[i].bus == ((addr >> 16) & 0xff) && fns[i].dev == ((addr >> 11) & 0x1f) &&
            fns[i].fn == ((addr >> 8) & 7))
            return &fns[i];
    return NULL;
}
/* One byte lane of CONFIG_DATA; the chipset decodes bits 7:2 and ignores 30:24 (Intel's). */
static void data_out8(unsigned lane, uint8_t v)
{
    struct fn *f = fn_at(real_cf8);
    if (f)
        f->space[(real_cf8 & 0xfc) + lane] = v;
}
static uint8_t data_in8(unsigned lane)
{
    struct fn *f = fn_at(real_cf8);
    return f ? f->space[(real_cf8 & 0xfc) + lane] : 0xff;
}
/* A port access as the CPU sends it: byte by byte over ports [port, port + size). */
static void real_io(bool in, unsigned size, uint16_t port, uint64_t *rax)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++) {
        unsigned p = port + i;
        if (p >= PCI_CFG_DATA_PORT && p < PCI_CFG_DATA_PORT + 4) {
            if (in)
                v |= (uint64_t)data_in8(p - PCI_CFG_DATA_PORT) << (8 * i);
            else
                data_out8(p - PCI_CFG_DATA_PORT, (uint8_t)(*rax >> (8 * i)));
        } else if (p >= PCI_CFG_ADDR_PORT && p < PCI_CFG_ADDR_PORT + 4) {
            if (size == 4 && port == PCI_CFG_ADDR_PORT) {      /* only a dword is the latch */
                if (in)
                    v = real_cf8;
                else
                    real_cf8 = (uint32_t)*rax;
                break;
            }
            if (in)
                v |= 0xffull << (8 * i);
        } else if (in) {
            v |= 0xffull << (8 * i);
        }
    }
    if (in) {
        uint64_t m = size == 4 ? 0xffffffffull : (1ull << (8 * size)) - 1;
        *rax = size == 4 ? v : (*rax & ~m) | (v & m);
    }
}
void hv_port_io(bool in, unsigned size, uint16_t port, uint64_t *rax) { real_io(in, size, port, rax); }
void hv_outl(uint16_t port, uint32_t v) { uint64_t x = v; real_io(false, 4, port, &x); }
uint32_t hv_inl(uint16_t port) { uint64_t x = 0; real_io(true, 4, port, &x); return (uint32_t)x; }
void hv_outw(uint16_t port, uint16_t v) { uint64_t x = v; real_io(false, 2, port, &x); }
uint16_t hv_inw(uint16_t port) { uint64_t x = 0; real_io(true, 2, port, &x); return (uint16_t)x; }
void hv_outb(uint16_t port, uint8_t v) { uint64_t x = v; real_io(false, 1, port, &x); }
uint8_t hv_inb(uint16_t port) { uint64_t x = 0; real_io(true, 1, port, &x); return (uint8_t)x; }

/* ---- the guest: its accesses exit to net_io_exit; declined ones reach the ports -------- */
static void guest_io(bool in, unsigned size, uint16_t port, uint64_t *rax)
{
    if (!net_io_exit(port, size, in, rax))
        real_io(in, size, port, rax);
}
static void guest_out(unsigned size, uint16_t port, uint64_t v) { guest_io(false, size, port, &v); }
static uint64_t guest_in(unsigned size, uint16_t port)
{
    uint64_t v = 0;
    guest_io(true, size, port, &v);
    return v;
}
static void guest_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t reg)
{
    guest_out(4, PCI_CFG_ADDR_PORT, pci_cfg_address(bus, dev, fn, reg));
}

#define BRIDGE   0            /* 00:01.0, a root port off the NIC's path: buses 1-1 */
#define PATH     1            /* 00:02.0, the root port above the NIC: buses 2-2 */
#define NIC      2            /* 02:00.0 */
#define EP       3            /* 00:03.0, a type-0 function: BAR 2 at 0x18 */
#define CARDBUS  4            /* 00:04.0, a CardBus bridge: buses 3-3 */

static void reset(void)
{
    static const uint8_t where[5][3] = { { 0, 1, 0 }, { 0, 2, 0 }, { 2, 0, 0 }, { 0, 3, 0 }, { 0, 4, 0 } };
    static const uint8_t hdr[5] = { 0x01, 0x01, 0x00, 0x80, 0x02 };
    for (unsigned i = 0; i < 5; i++) {
        struct fn *f = &fns[i];
        f->bus = where[i][0]; f->dev = where[i][1]; f->fn = where[i][2];
        for (unsigned o = 0; o < sizeof f->space; o++)
            f->space[o] = (uint8_t)(0x40 + o);
        f->space[0] = 0x86; f->space[1] = 0x80;          /* vendor 8086 */
        f->space[0x0e] = hdr[i];
    }
    /* primary, secondary, subordinate, latency timer */
    memcpy(fns[BRIDGE].space + 0x18, (uint8_t[]){ 0, 1, 1, 0x20 }, 4);
    memcpy(fns[PATH].space + 0x18, (uint8_t[]){ 0, 2, 2, 0x20 }, 4);
    memcpy(fns[CARDBUS].space + 0x18, (uint8_t[]){ 0, 3, 3, 0x20 }, 4);
    real_cf8 = 0;
}

static uint32_t dw(unsigned f, unsigned off)
{
    uint32_t v;
    memcpy(&v, fns[f].space + off, 4);
    return v;
}
static bool bus_numbers_kept(unsigned f, uint8_t pri, uint8_t sec, uint8_t sub)
{
    return fns[f].space[0x18] == pri && fns[f].space[0x19] == sec && fns[f].space[0x1a] == sub;
}

static void test_bridges(void)
{
    /* Every width at every data port: the bus numbers stay, the latency timer is written
     * whenever the write covers it. */
    static const unsigned widths[] = { 1, 2, 4 };
    for (unsigned b = 0; b < 2; b++) {
        unsigned f = b ? CARDBUS : BRIDGE;
        uint8_t sec = b ? 3 : 1;
        for (unsigned wi = 0; wi < 3; wi++)
            for (unsigned lane = 0; lane + widths[wi] <= 4; lane++) {
                unsigned w = widths[wi];
                reset();
                guest_addr(0, fns[f].dev, 0, 0x18);
                guest_out(w, (uint16_t)(PCI_CFG_DATA_PORT + lane), 0x99887766u);
                bool latency = lane + w > 3;
                uint8_t want_lat = latency ? (uint8_t)(0x99887766u >> (8 * (3 - lane))) : 0x20;
                CHECK(bus_numbers_kept(f, 0, sec, sec) && fns[f].space[0x1b] == want_lat,
                      "%s: %u-byte write at 0xCFC+%u: buses %02x/%02x/%02x latency %02x (want 00/%02x/%02x %02x)",
                      b ? "CardBus bridge" : "bridge", w, lane, fns[f].space[0x18], fns[f].space[0x19],
                      fns[f].space[0x1a], fns[f].space[0x1b], sec, sec, want_lat);
            }
    }
    /* Linux's own sequence when it renumbers: read the dword, write it back changed. */
    reset();
    guest_addr(0, 1, 0, 0x18);
    uint32_t buses = (uint32_t)guest_in(4, PCI_CFG_DATA_PORT);
    guest_out(4, PCI_CFG_DATA_PORT, (buses & 0xff000000u) | 0x00 | 0x02 << 8 | 0x02 << 16);
    CHECK(bus_numbers_kept(BRIDGE, 0, 1, 1), "a bridge renumbered onto the NIC's bus 2: kept at 1 (%08x)",
          dw(BRIDGE, 0x18));
    /* The reserved bits 27:24 of CONFIG_ADDRESS do not carry a write past the check. */
    reset();
    guest_out(4, PCI_CFG_ADDR_PORT, pci_cfg_address(0, 1, 0, 0x18) | 0x0f000000u);
    guest_out(4, PCI_CFG_DATA_PORT, 0x20020200u);
    CHECK(bus_numbers_kept(BRIDGE, 0, 1, 1), "address bits 27:24 set: bus numbers kept (%08x)", dw(BRIDGE, 0x18));
    /* Other registers of the bridge are the guest's: the I/O base at 0x1C, the command. */
    reset();
    guest_addr(0, 1, 0, 0x1c);
    guest_out(4, PCI_CFG_DATA_PORT, 0x11223344u);
    guest_addr(0, 1, 0, 0x04);
    guest_out(2, PCI_CFG_DATA_PORT, 0x0407u);
    CHECK(dw(BRIDGE, 0x1c) == 0x11223344u && fns[BRIDGE].space[4] == 0x07 && fns[BRIDGE].space[5] == 0x04,
          "a bridge's I/O base and command are written");
    /* A type-0 function's BAR 2 sits at 0x18: written whole. */
    reset();
    guest_addr(0, 3, 0, 0x18);
    guest_out(4, PCI_CFG_DATA_PORT, 0xfebf0000u);
    CHECK(dw(EP, 0x18) == 0xfebf0000u, "type-0 BAR 2 written whole: %08x", dw(EP, 0x18));
    /* The bridge above the NIC: no write at all; reads pass. */
    reset();
    guest_addr(0, 2, 0, 0x1c);
    guest_out(4, PCI_CFG_DATA_PORT, 0x11223344u);
    guest_addr(0, 2, 0, 0x18);
    guest_out(1, PCI_CFG_DATA_PORT + 3, 0x55);
    uint32_t r = (uint32_t)guest_in(4, PCI_CFG_DATA_PORT);
    CHECK(dw(PATH, 0x1c) == 0x5f5e5d5cu && fns[PATH].space[0x1b] == 0x20 && r == dw(PATH, 0x18),
          "the bridge above the NIC: writes dropped, reads pass");
    /* The NIC: reads all ones, writes dropped. */
    reset();
    guest_addr(2, 0, 0, 0x00);
    uint32_t id = (uint32_t)guest_in(4, PCI_CFG_DATA_PORT);
    guest_addr(2, 0, 0, 0x04);
    guest_out(2, PCI_CFG_DATA_PORT, 0x0000);
    CHECK(id == 0xffffffffu && fns[NIC].space[4] == 0x44, "the NIC: id %08x, command untouched", id);
}

/* Accesses only partly in CONFIG_DATA: the real latch holds the last address replayed (the
 * guest's own, a moment before), and the CPU would split them onto the data port. */
static void test_straddling(void)
{
    static const struct { uint16_t port; unsigned size; } cases[] = {
        { 0xcfd, 4 }, { 0xcfe, 4 }, { 0xcff, 4 }, { 0xcff, 2 }, { 0xcfb, 2 }, { 0xcfb, 4 },
        { 0xcf9, 4 }, { 0xcfa, 4 },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        reset();
        guest_addr(0, 1, 0, 0x18);
        (void)guest_in(4, PCI_CFG_DATA_PORT);                 /* the real latch: 00:01.0 0x18 */
        uint32_t before = dw(BRIDGE, 0x18);
        guest_out(cases[i].size, cases[i].port, 0xffffffffu);
        CHECK(dw(BRIDGE, 0x18) == before, "%u bytes at %#x: dword 0x18 %08x, was %08x",
              cases[i].size, cases[i].port, dw(BRIDGE, 0x18), before);
        uint64_t v = guest_in(cases[i].size, cases[i].port);
        uint64_t ones = cases[i].size == 4 ? 0xffffffffull : 0xffff;
        CHECK((v & ones) == ones || cases[i].port < PCI_CFG_DATA_PORT,
              "%u bytes read at %#x: %#llx", cases[i].size, cases[i].port, (unsigned long long)v);
    }
}

int main(void)
{
    net.active = true;
    net.nic.pci = (struct pci_addr){ 2, 0, 0 };
    net_pci_protect_bridges(&(struct pci_addr){ 0, 2, 0 }, 1);
    test_bridges();
    test_straddling();
    return check_summary("test_net_hide");
}
