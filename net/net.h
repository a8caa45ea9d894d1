/*
 * net.h - hvtrace's dedicated NIC, the image's transport layer. Everything else in net/ is
 * internal. Protocol: include/hvt_stream.h, docs/stream-protocol.md. Needs vmm/'s public API
 * (hv_api.h; net_layer.c also hv_exit.h and hv_ept.h) and hv/hv_transport.h, nothing else.
 *
 * Contract:
 *  - Wiring: the image calls net_layer_init(bi, &transport) once (net_layer.c does everything
 *    listed below: config, init, registration with vmm/, EPT, the transport table). The rest
 *    of this contract is what it relies on.
 *  - Boot: net_config_parse() the loader's text (hvt_boot_info.net_config; empty text: do not
 *    call net_init at all, no NIC is touched), then net_init() once on the BSP after memory
 *    services work and before the guest runs. It finds and takes over the e1000, starts lwIP and
 *    the send ring. It never fails the boot: on error it logs why and the hypervisor runs
 *    without a stream (every other net_* call is then a cheap no-op, and stream_send() returns
 *    -1: nothing is accepted that could be lost).
 *  - net_poll(): call often from any CPU in VMX root operation (every VM exit is fine: it is
 *    rate-gated to one real poll per 100 us of TSC time, ~10 instructions otherwise, and costs
 *    one failed trylock when another CPU is polling). The guest may run long without exits (HLT
 *    without HLT exiting, tight loops): some layer must keep a periodic exit (the policy's
 *    VMX preemption timer) or the stream, the control channel and backpressure waits stall. It receives frames, runs lwIP's timers,
 *    (re)connects to the collector, and moves ring data into TCP. Nothing is sent or received
 *    between calls: the NIC raises no interrupt the hypervisor takes.
 *  - stream_send(): enqueue one sequenced message from CPU `cpu` (hv_cpu_id()). With the default
 *    overflow=block it never drops: while the ring is full it polls (net_poll) until the
 *    collector has ACKed space - so a slow collector stalls the caller, and with it the guest,
 *    by design (lossless). A dead one does for link_timeout_ms without progress at most: then
 *    the link has failed, the message is dropped and counted, and so is every one after it
 *    without waiting (NET_SEND_LINK_FAILED) until the collector frees ring space again; the
 *    count goes out as an HVT_MSG_LOSS (reason LINK). overflow=drop instead counts what it
 *    could not enqueue at once and reports it in an HVT_MSG_LOSS. Safe from any CPU; must not be called with net's own locks held (i.e.
 *    not from inside a control handler).
 *  - Hiding the NIC from the guest: the core intercepts I/O ports NET_IO_PORTS (0xCF8-0xCFF for
 *    PCI configuration, COM1's 0x3F8 and 0x3FB to observe the console) and hands each access to
 *    net_io_exit(); it maps every range net_hidden_mmio() returns to a harmless page in the
 *    guest's EPT (the dummy page, as for the hypervisor's own region); net_layer.c hides its
 *    ECAM page (PCI Express memory-mapped configuration). Through the ports, a guest write
 *    reaching the dword at 0x18 of any function never changes a bridge's bus numbers
 *    (vmm/include/pci_mcfg.h mcfg_write_mask; vmm/ does the same for ECAM).
 *    net_pci_is_hidden() answers for the core's own checks.
 *  - Console: net_io_exit() sees the guest's writes to COM1's data port (DLAB clear) and
 *    forwards them; it returns false for them so the core still performs the write (the guest
 *    sees no difference). The core may also call net_console_byte() directly.
 *  - Control: requests arrive in net_poll(), authenticated (HMAC-SHA256, boot-config key) and
 *    replay-checked in net/; PING and STATUS are answered here, commands >= 16 go to the handler
 *    set with net_set_ctl_handler() (it runs inside net_poll with net's lock held: it must not
 *    call stream_send; it fills the reply instead). The handler may be set before or after
 *    net_init: net_init keeps it.
 *  - Shutdown: net_shutdown() (guest power-off) sends BYE and polls until the collector has
 *    everything or max_tsc ticks pass. net_fatal() (the hypervisor's fatal path) sends PANIC and
 *    BYE the same way, with every lock and wait bounded; stream_send() bounds its waits for
 *    ring space while hv_fatal_active().
 */
#ifndef HVT_NET_H
#define HVT_NET_H
#include "net_port.h"
#include "net_config.h"
#include "hvt_stream.h"
#include "hv_transport.h"

/* Ports the core must intercept for net_io_exit (first, count). */
#define NET_IO_PCI_FIRST   0xcf8u
#define NET_IO_PCI_COUNT   8u       /* 0xCF8-0xCFB address, 0xCFC-0xCFF data */
#define NET_IO_COM1_DATA   0x3f8u   /* THR when DLAB = 0 */
#define NET_IO_COM1_LCR    0x3fbu   /* line control: bit 7 = DLAB */

int  net_init(const struct net_config *cfg);
bool net_active(void);
bool net_poll(void);                    /* true when it polled now (not rate-gated away) */
int  stream_send(unsigned cpu, uint16_t type, const void *data, size_t len);
/* stream_send's answer when the link has failed (link_timeout_ms without progress): the
 * message was dropped and counted (HVT_MSG_LOSS, reason LINK, once the link recovers). */
#define NET_SEND_LINK_FAILED HV_TRANSPORT_LINK_FAILED
/* Has the link failed (and not recovered yet)? */
bool net_link_failed(void);
void net_console_byte(uint8_t b);
/* The console's buffered bytes: sent once older than NET_CONSOLE_MAX_AGE_MS (no wait; call
 * after a net_poll() that polled, outside net's locks: the console lock comes first), or now
 * (waiting while the ring is full; before net_shutdown's BYE). */
void net_console_poll(void);
void net_console_flush(void);
/* key=value text for a HVT_MSG_META (e.g. "guest_kernel=..."); same rules as stream_send */
int  net_meta(const char *text);
void net_shutdown(uint64_t max_tsc);
/* The hypervisor's fatal path (the other CPUs stopped): PANIC with 'why', BYE, then the ring
 * pushed out for a bounded time; nothing if a lock a stopped CPU held is still taken. */
void net_fatal(const char *why);

/* Guest I/O intercept. *rax is the guest's RAX (in: result goes to its low `size` bytes).
 * Returns true when fully emulated (the core advances RIP and does nothing else), false when
 * the core should perform the access itself as usual. */
bool net_io_exit(uint16_t port, unsigned size, bool in, uint64_t *rax);
bool net_pci_is_hidden(uint8_t bus, uint8_t dev, uint8_t fn);
/* idx = 0, 1, ...: 0 and the range, or -1 past the last one. */
int  net_hidden_mmio(uint64_t *base, uint64_t *size, int idx);
/* The NIC's PCI function (segment 0), for hiding its ECAM page. */
void net_nic_bdf(uint8_t *bus, uint8_t *dev, uint8_t *fn);
/* idx = 0, 1, ...: 0 and a physical range the NIC reads or writes by DMA (its rings and
 * buffers), or -1 past the last one: for the IOMMU's own domain (vmm/include/hv_dma.h). */
int  net_dma_range(uint64_t *base, uint64_t *size, int idx);
/* The bridges between the root bus and the NIC: the guest's configuration writes to them
 * through 0xCF8/0xCFC are dropped (reads pass), as their ECAM pages are read-only. */
struct pci_addr;
void net_pci_protect_bridges(const struct pci_addr *b, unsigned n);

typedef hv_transport_ctl_fn net_ctl_handler;
void net_set_ctl_handler(net_ctl_handler fn);

/* The layer's start (net_layer.c): registers with vmm/ and fills the transport table. */
struct hvt_boot_info;
int  net_layer_init(struct hvt_boot_info *bi, struct hv_transport *t);
/* The transport alone, no guest (an image without VT-x, make hv-nettest): net_init from the
 * boot configuration (selftest_kb required), its selftest load streamed and acknowledged, BYE.
 * 0 when the collector acknowledged the whole load within max_tsc, else -1. */
int  net_layer_selftest(struct hvt_boot_info *bi, uint64_t max_tsc);
/* The selftest load (selftest_kb) was all sent and acknowledged. */
bool net_selftest_finished(void);

#endif
