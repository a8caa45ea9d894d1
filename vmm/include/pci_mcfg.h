/*
 * pci_mcfg.h - PCI Express memory-mapped configuration (ECAM): parse the ACPI MCFG table
 * (PCI Firmware Specification 3.2, section 4.1.2 "MCFG Table Description") and decide, for a
 * guest access to an ECAM window, whether it must be hidden because it reaches the
 * hypervisor's NIC or a bridge on the path to it.
 *
 * Contract:
 *  - mcfg_parse() treats the table as hostile: reads stay in [buf, buf + len); signature,
 *    length (header + whole 16-byte allocations), checksum, each allocation's bus range and
 *    alignment, address overflow, and overlap between allocations (in address or in
 *    segment/bus) are checked; the first violation returns a negative MCFG_E_*.
 *  - ECAM layout (PCIe Base Specification 4.0, 7.2.2): an allocation's base is the address of
 *    bus 0 even when its start bus is higher; function (bus, dev, fn) owns the 4 KiB page at
 *    base + (bus << 20 | dev << 15 | fn << 12), the offset in the page is the register.
 *  - mcfg_classify(gpa) says whether gpa lies in some allocation's window and which function
 *    and offset it reaches.
 *  - mcfg_decide() is the policy, matching the legacy 0xCF8/0xCFC hiding in net/net_hide.c:
 *    the hidden function itself reads as all ones and ignores writes (a master abort, as if
 *    no device answered: PCI 3.0 section 6.1); each bridge on the path to it stays visible
 *    but read-only (MCFG_READ_ONLY), so the guest cannot renumber buses (which would move the
 *    NIC to a BDF nobody hides), move its windows, reset the secondary bus or disable the
 *    link. An access that crosses a 4 KiB function page is treated as hidden. The caller
 *    traps the pages mcfg_function_page() gives (the NIC's and the bridges') in EPT and
 *    emulates: all-ones/drop for MCFG_HIDE, pass reads and drop writes for MCFG_READ_ONLY.
 *  - Why whole bridge pages read-only rather than single registers: the registers that move
 *    the NIC (bus numbers 0x18, windows 0x1C-0x2F, bridge control 0x3E) are in the first
 *    64 bytes, but the PCIe capability's link control (link disable, retrain, secondary bus
 *    reset through slot power control) and vendor registers elsewhere in the page do as much;
 *    EPT protects whole pages anyway. The guest loses its writes to those bridges (command,
 *    status clearing, ASPM, AER setup): the hypervisor's NIC sits below them.
 *  - Bus numbers of every bridge are the firmware's: mcfg_write_mask() says which bytes of a
 *    guest configuration write may reach a function, on either access path (ECAM, and
 *    0xCF8/0xCFC). The primary, secondary and subordinate bus numbers of any type-1 header
 *    (offsets 0x18-0x1A) never do; every other byte does (the secondary latency timer at 0x1B
 *    included), so a write of the dword at 0x18 keeps working for its last byte. Why: the
 *    IOMMU's domains are chosen by requester ID (bus/device/function), and a function takes
 *    its bus number from the configuration writes that reach it through the bridges above it
 *    (PCI Express Base Specification 4.0, 2.2.6.2 "Transaction Descriptor - Transaction ID
 *    Field"); a guest free to renumber any bridge could route the NIC's bus number to a
 *    device it drives and so give that device the NIC's own DMA domain.
 *  - Pure C, freestanding, no allocation: host-testable.
 */
#ifndef HVT_PCI_MCFG_H
#define HVT_PCI_MCFG_H
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define MCFG_MAX_ALLOCS   16
#define MCFG_MAX_BRIDGES  8       /* bridges between the root bus and the hidden function */
#define MCFG_FUNC_SPACE   0x1000u /* 4 KiB of configuration space per function */

/* Configuration header registers (PCI Local Bus Specification 3.0, 6.1 "Configuration Space
 * Organization"; type 1: PCI-to-PCI Bridge Architecture Specification 1.2, 3.2 "PCI-to-PCI
 * Bridge Configuration Space Header Format"). */
#define MCFG_REG_HEADER_TYPE   0x0eu   /* bits 6:0 the layout, bit 7 multi-function */
#define MCFG_HDR_LAYOUT_MASK   0x7fu
#define MCFG_HDR_MULTIFN       0x80u
#define MCFG_HDR_BRIDGE        1u      /* type 1: PCI-to-PCI bridge */
#define MCFG_REG_BUS_NUMBERS   0x18u   /* primary 0x18, secondary 0x19, subordinate 0x1A */
#define MCFG_REG_BUS_LAST      0x1au   /* 0x1B is the secondary latency timer: the guest's */
#define MCFG_WRITE_MAX         8u      /* widest store a guest can make (a 64-bit MOV) */

struct mcfg_alloc {
    uint64_t base;                /* ECAM address of bus 0 of this segment */
    uint16_t segment;
    uint8_t  bus_start, bus_end;
};

struct mcfg_info {
    unsigned n;
    struct mcfg_alloc alloc[MCFG_MAX_ALLOCS];
};

struct mcfg_bdf { uint16_t segment; uint8_t bus, dev, fn; };

struct mcfg_target {
    struct mcfg_bdf bdf;
    uint16_t offset;              /* register offset within the function's 4 KiB */
    unsigned alloc;               /* index in mcfg_info.alloc */
};

/* The function to hide and the bridges above it (any order). */
struct mcfg_hidden {
    struct mcfg_bdf nic;
    unsigned nbridges;
    struct mcfg_bdf bridges[MCFG_MAX_BRIDGES];
};

enum mcfg_action {
    MCFG_NOT_ECAM = 0,            /* gpa is outside every ECAM window */
    MCFG_PASS,                    /* ECAM of a function the guest owns (its writes still lose
                                     a bridge's bus numbers: mcfg_write_mask) */
    MCFG_HIDE,                    /* reads all ones, writes dropped */
    MCFG_READ_ONLY,               /* reads pass, writes dropped */
};

enum {
    MCFG_OK = 0,
    MCFG_E_SHORT = -1,            /* buffer shorter than the header or than its length */
    MCFG_E_SIGNATURE = -2,
    MCFG_E_LENGTH = -3,           /* length not header + a whole number of allocations */
    MCFG_E_CHECKSUM = -4,
    MCFG_E_LIMIT = -5,            /* more allocations than MCFG_MAX_ALLOCS */
    MCFG_E_ALLOC = -6,            /* bus range reversed, base unaligned or window overflows */
    MCFG_E_OVERLAP = -7,          /* two allocations share addresses or segment/bus numbers */
};

int mcfg_parse(const void *buf, size_t len, struct mcfg_info *out);
const char *mcfg_strerror(int err);

/* true if gpa is in an ECAM window; then *t says which function and register. */
bool mcfg_classify(const struct mcfg_info *m, uint64_t gpa, struct mcfg_target *t);

/* The policy for an access of `size` bytes at gpa (see the contract); *t is filled when the
 * result is not MCFG_NOT_ECAM. */
enum mcfg_action mcfg_decide(const struct mcfg_info *m, const struct mcfg_hidden *h,
                             uint64_t gpa, unsigned size, struct mcfg_target *t);

/* Which bytes of a guest write of `size` bytes (1..MCFG_WRITE_MAX) at register `offset` of a
 * function whose header-type register (MCFG_REG_HEADER_TYPE) reads `header_type` may reach
 * the device: bit i stands for byte offset + i. The bus numbers of a type-1 header never do
 * (see the contract); size 0 or above MCFG_WRITE_MAX gives 0 (nothing is written). */
unsigned mcfg_write_mask(uint8_t header_type, uint16_t offset, unsigned size);

/* Perform a guest write of `size` bytes of `val` at register `offset` of a function whose
 * header type is `header_type`, through store(ctx, offset, width, value) (the path's own
 * access: an ECAM store, an OUT to 0xCFC-0xCFF): in one store as the guest made it when
 * mcfg_write_mask holds nothing back, else one byte store per byte it lets through, in
 * address order. Both access paths use it. Returns the number of stores made. */
typedef void (*mcfg_store_fn)(void *ctx, uint16_t offset, unsigned size, uint64_t val);
unsigned mcfg_guarded_write(uint8_t header_type, uint16_t offset, unsigned size, uint64_t val,
                            mcfg_store_fn store, void *ctx);

/* The guest-physical address of a function's 4 KiB ECAM page; false if no window covers it. */
bool mcfg_function_page(const struct mcfg_info *m, struct mcfg_bdf f, uint64_t *gpa);

/* The bridges between root bus 0 and `target` (segment 0), nearest the root first: on each
 * bus, the PCI-to-PCI bridge (header type 1, PCI-to-PCI Bridge Architecture Specification 1.2,
 * 3.2: bus numbers at 0x18, primary 7:0, secondary 15:8, subordinate 23:16) whose
 * secondary..subordinate range holds the target's bus, then its secondary bus, until the
 * target's bus. rd(ctx, bus, dev, fn, off) reads one dword of configuration space (all ones
 * when nothing answers). The walk trusts nothing: a secondary bus must lie above the bus the
 * bridge sits on (so it always ends), and a bus without such a bridge, or more than max
 * hops, gives -1 (the path is unknown: the caller must not count on the NIC staying put).
 * Returns the number of bridges written to out. */
typedef uint32_t (*mcfg_cfg_read_fn)(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off);
int mcfg_path_bridges(struct mcfg_bdf target, mcfg_cfg_read_fn rd, void *ctx,
                      struct mcfg_bdf *out, unsigned max);

#endif
