/*
 * e1000.h - a polled driver for the Intel PRO/1000 families inside the hypervisor: the 8254x
 *   (82540EM, what Bochs emulates), the 82574 (QEMU's e1000e), igb (82576, I350, I210, I211)
 *   and PCH LAN (I217-I219); the ids and what differs per family are e1000_models.h.
 *
 * Contract:
 *  - e1000_find() picks the NIC the boot configuration names (PCI address, MAC, or the first
 *    supported id the bus scan finds), e1000_init() takes it over: memory decoding + bus
 *    mastering on, I/O decoding and INTx off, all interrupts masked (the hypervisor takes
 *    none: it polls), reset (PCIe parts: bus mastering stopped first, and the PHY's
 *    auto-negotiation restarted after it when incomplete), MAC from the NVM (EERD
 *    or receive address 0, per family), queue 0's rx/tx descriptor rings (legacy descriptors;
 *    advanced ones on igb) and buffers in
 *    hypervisor memory (hv_alloc_pages, so EPT keeps the guest away from them).
 *  - Single-threaded: callers serialize (net.c's lock). No allocation after init.
 *  - e1000_tx() copies the frame into a transmit buffer; it returns -1 when the ring is full
 *    (the caller retries after polling; nothing is dropped here).
 *  - e1000_rx_poll() hands each received frame to the callback (buffer valid during the call).
 */
#ifndef HVT_E1000_H
#define HVT_E1000_H
#include "net_port.h"
#include "pci.h"
#include "net_config.h"
#include "e1000_models.h"

#define E1000_RX_DESCS  256u
#define E1000_TX_DESCS  256u
#define E1000_BUF_SIZE  2048u        /* one frame per buffer (RCTL BSIZE 2048) */
#define E1000_MAX_FRAME 1518u        /* no jumbo frames: MTU 1500 */
#define E1000_MAX_BARS  PCI_BAR_COUNT
#define E1000_DMA_RANGES 4              /* rx/tx descriptor rings, rx/tx buffers */

struct e1000_counters {
    uint64_t rx_frames, tx_frames, rx_errors, tx_ring_full, link_changes;
};

struct e1000 {
    struct pci_addr pci;
    const struct e1000_model *model;   /* the part and its family */
    uint64_t bar0_phys, bar0_size;
    volatile uint8_t *regs;
    uint8_t  mac[6];
    struct e1000_rx_desc *rx;
    struct e1000_tx_desc *tx;
    uint8_t  *rx_buf[E1000_RX_DESCS];
    uint8_t  *tx_buf[E1000_TX_DESCS];
    uint32_t rx_next;                 /* next descriptor the hardware will fill */
    uint32_t tx_tail, tx_clean;       /* next free, oldest not yet reclaimed */
    bool     link_up;
    struct pci_bar bars[E1000_MAX_BARS];  /* memory and I/O ranges to keep from the guest */
    int      nbars;
    struct { uint64_t pa, size; } dma[E1000_DMA_RANGES];   /* what the NIC reads and writes */
    int      ndma;
    struct e1000_counters cnt;
};

/* 0 and *a set, or -1 (no matching NIC). */
int  e1000_find(const struct net_config *cfg, struct pci_addr *a);
int  e1000_init(struct e1000 *nic, struct pci_addr a);
int  e1000_tx(struct e1000 *nic, const void *frame, size_t len);
unsigned e1000_rx_poll(struct e1000 *nic, void (*cb)(void *ctx, const uint8_t *frame, size_t len),
                       void *ctx, unsigned budget);
/* Re-reads STATUS.LU; returns true when the link state changed. */
bool e1000_link_poll(struct e1000 *nic);

#endif
