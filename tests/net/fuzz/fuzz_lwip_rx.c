/*
 * fuzz_lwip_rx.c - libFuzzer target for the hypervisor's receive path from the wire: frames
 * the e1000 writes into its receive ring, net/e1000.c's descriptor handling, net/e1000_netif.c
 * into lwIP (Debian's lwIP 2.1.3 built with the hypervisor's own net/lwip/lwipopts.h, ASan and
 * UBSan), ARP/IPv4/ICMP/TCP, net/net.c's connection to the collector and its receive callback
 * into net/stream_core.c (WELCOME, ACK, authenticated control requests) and the replies going
 * back out through tcp_write and the transmit ring; with the session (net/aead.c) when keyed. The hypervisor's net/ files are compiled
 * unchanged; around them the harness is the machine:
 *  - vmm/'s services (tests/fuzz/host_hv/hv_api.h): a deterministic clock (every RDTSC moves
 *    it 1 us; frames move it further), page allocations as separate heap blocks (ASan sees
 *    an overrun of each), logging dropped unless HVT_FUZZ_VERBOSE is set and hv_panic (lwIP's
 *    assertions) = abort (both tests/fuzz/host_hv/hv_log_host.c);
 *  - a PCI configuration space holding one 82540EM with a 128 KiB memory BAR0;
 *  - the NIC's register file: plain memory plus what the device does at each clock read:
 *    CTRL.RST clears, transmit descriptors between TDH and TDT are consumed (DD set). The
 *    EEPROM never answers (EERD.DONE stays 0: the driver's bounded wait runs out and reads
 *    ff:ff:ff:ff:ff:ff), so the harness gives the NIC a unicast MAC after net_init.
 *    net/e1000.c allocates the 256 receive buffers as one block; the harness re-points each
 *    descriptor at its own 2 KiB heap block so that reading past one buffer is an ASan report
 *    (the driver assumes no contiguity: one address per descriptor);
 *  - the collector, as far as a fuzzer cannot guess it: see "setup" and the per-frame flags.
 * Every input starts from a fresh hypervisor network state: the previous connection is
 * aborted, the interface removed, lwIP's timeout list emptied (LWIP_TESTMODE's accessor; the
 * only thing LWIP_TESTMODE changes in lwIP 2.1.3), then net_init runs again (lwip_init resets
 * lwIP's pools and heap). Left over between inputs, inside lwIP: the initial sequence number
 * counter and the IP id (the harness's sequence fix-up makes segments independent of the
 * first) - so a finding replays the same, give or take an ISN.
 *
 * Input: byte 0 = setup: bit 0 the harness plays ARP + the TCP handshake with the collector
 * first (else the input starts at boot, the connect attempt due), bit 1 then also a WELCOME
 * (the stream is up), bit 2 overflow=drop, bit 3 no key (no control, no session), bit 4
 * selftest load (selftest_kb=64: the send side busy), bit 5 auth=off (no session tags), bit 6
 * encrypt=on. Then frames, each:
 *   flags (1 byte): bit 0 TCP fix-up: IPv4/TCP frames get the collector's and our addresses
 *     and ports, and seq/ack taken as offsets from the connection's rcv_nxt/snd_nxt; bit 1
 *     checksums fixed (IPv4 header, TCP, ICMP); bit 2 stream fix-up: the TCP payload walked
 *     as stream messages (each followed by its session tag's room when the session is on),
 *     WELCOME given the boot id, CTL_REQ a valid tag under the key, each message its session
 *     tag (and encryption) as the next message the hypervisor receives on the connection;
 *     bit 3 device fields from the input: status (DD forced), errors, a 16-bit length that
 *     may exceed the bytes written and the buffer (device input too); bit 4 no poll after
 *     this frame (frames pile up in the ring: wrap, full ring, the per-poll budget);
 *   time (1 byte): milliseconds the clock moves before the frame (x 32 when bit 7 is set:
 *     TCP retransmission, keepalive, ARP expiry);
 *   length (2 bytes, big-endian, modulo 2049), then the frame bytes.
 * Checks besides the sanitizers: after the setup the connection is up (and the stream UP
 * with a WELCOME), the stream ring's offsets stay ordered, each transmitted frame fits its
 * buffer and the maximum frame size.
 */
#include <limits.h>             /* SSIZE_MAX: lwIP then takes the C library's ssize_t */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdarg.h>
#include "net_internal.h"
#include "e1000_regs.h"
#include "net_config.h"
#include "lwip/init.h"
#include "lwip/timeouts.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/etharp.h"

/* ---- vmm/'s services ---------------------------------------------------------------------- */
#define TSC_KHZ        1000000u          /* 1 GHz: one ms = 1e6 ticks */
#define TSC_PER_RDTSC  1000u             /* each clock read moves it 1 us */
static uint64_t fake_tsc;
static void dev_step(void);

uint64_t hv_rdtsc(void)
{
    fake_tsc += TSC_PER_RDTSC;
    dev_step();
    return fake_tsc;
}
unsigned hv_cpu_id(void) { return 0; }
unsigned hv_cpu_count(void) { return 2; }
uint64_t hv_rdmsr(uint32_t msr) { abort(); }
void hv_wrmsr(uint32_t msr, uint64_t v) { abort(); }

#define MAX_ALLOCS 1024
static void *allocs[MAX_ALLOCS];
static unsigned nallocs;
static void *track(void *p)
{
    if (!p || nallocs == MAX_ALLOCS)
        abort();
    return allocs[nallocs++] = p;
}
static void free_all(void)
{
    while (nallocs)
        free(allocs[--nallocs]);
}
/* calloc, not aligned_alloc + memset: the sanitizer's allocator hands large blocks out as
 * fresh zero pages without touching them (the 2 MiB ring, lwIP's heap). */
void *hv_alloc_pages(size_t npages)
{
    uint8_t *p = track(calloc(1, npages * 4096 + 4096));
    return p + (-(uintptr_t)p & 4095);
}
void *hv_alloc(size_t bytes) { return track(calloc(1, bytes ? bytes : 1)); }
/* Physical addresses are the host's virtual ones, except the NIC's BAR0. */
#define BAR0_PHYS 0xfebc0000ull
#define BAR0_SIZE 0x20000u
static uint32_t regs[BAR0_SIZE / 4];
uint64_t hv_virt_to_phys(const void *va) { return (uint64_t)(uintptr_t)va; }
void *hv_phys_to_virt(uint64_t pa)
{
    if (pa >= BAR0_PHYS && pa < BAR0_PHYS + BAR0_SIZE)
        return (uint8_t *)regs + (pa - BAR0_PHYS);
    return (void *)(uintptr_t)pa;
}
void *hv_phys_to_virt_uc(uint64_t pa) { return hv_phys_to_virt(pa); }

bool hv_fatal_active(void) { return false; }   /* the fatal path is not what is fuzzed here */

/* ---- PCI configuration mechanism #1: one 82540EM at 00:03.0 ----------------------------- */
static uint32_t cfg_addr, nic_cmd, nic_bar0 = (uint32_t)BAR0_PHYS;
static uint32_t *cfg_reg(uint32_t addr)
{
    static uint32_t zero;
    zero = 0;
    if ((addr & 0x80ffff00u) != (0x80000000u | 3u << 11))
        return NULL;                               /* no device there */
    switch (addr & 0xfc) {
    case PCI_COMMAND: return &nic_cmd;
    case PCI_BAR0:    return &nic_bar0;
    default:          return &zero;
    }
}
static uint32_t cfg_read(void)
{
    uint32_t off = cfg_addr & 0xfc, *r = cfg_reg(cfg_addr);
    if (!r)
        return 0xffffffffu;
    if (off == PCI_VENDOR_ID)
        return E1000_VENDOR_INTEL | (uint32_t)E1000_DEV_82540EM << 16;
    return *r;
}
static void cfg_write(uint32_t v, uint32_t mask)
{
    uint32_t *r = cfg_reg(cfg_addr);
    if (!r)
        return;
    if ((cfg_addr & 0xfc) == PCI_BAR0)             /* sizing: the low 17 bits are fixed 0 */
        v = (v & ~(BAR0_SIZE - 1u)) & 0xfffffff0u;
    *r = (*r & ~mask) | (v & mask);
}
void hv_outl(uint16_t port, uint32_t v)
{
    if (port == PCI_CFG_ADDR_PORT)
        cfg_addr = v;
    else if (port == PCI_CFG_DATA_PORT)
        cfg_write(v, 0xffffffffu);
    else
        abort();
}
void hv_outw(uint16_t port, uint16_t v)
{
    if (port < PCI_CFG_DATA_PORT || port > PCI_CFG_DATA_PORT + 2)
        abort();
    unsigned sh = (port - PCI_CFG_DATA_PORT) * 8;
    cfg_write((uint32_t)v << sh, 0xffffu << sh);
}
void hv_outb(uint16_t port, uint8_t v) { abort(); }
uint32_t hv_inl(uint16_t port)
{
    if (port != PCI_CFG_DATA_PORT)
        abort();
    return cfg_read();
}
uint16_t hv_inw(uint16_t port) { abort(); }
uint8_t hv_inb(uint16_t port) { abort(); }

/* ---- the NIC: register file + what the device does between the driver's accesses -------- */
#define R(reg) regs[(reg) / 4]
static uint32_t dev_rdh, dev_tdh;
static unsigned long frames_out, rx_missed;
static uint8_t *rx_bufs[E1000_RX_DESCS];

static void dev_step(void)
{
    R(E1000_CTRL) &= ~E1000_CTRL_RST;              /* the reset completes at once */
    uint32_t tdlen = R(E1000_TDLEN) / sizeof(struct e1000_tx_desc);
    if (!(R(E1000_TCTL) & E1000_TCTL_EN) || !tdlen)
        return;
    struct e1000_tx_desc *tx = hv_phys_to_virt((uint64_t)R(E1000_TDBAH) << 32 | R(E1000_TDBAL));
    while (dev_tdh != R(E1000_TDT) % tdlen) {
        struct e1000_tx_desc *d = &tx[dev_tdh];
        if (d->length > E1000_MAX_FRAME)
            abort();                               /* the driver asked to send beyond a frame */
        const volatile uint8_t *f = hv_phys_to_virt(d->addr);
        uint8_t sum = 0;
        for (unsigned i = 0; i < d->length; i++)   /* the device reads the frame: ASan checks */
            sum += f[i];
        (void)sum;
        d->status |= E1000_TXD_STAT_DD;
        frames_out++;
        dev_tdh = (dev_tdh + 1) % tdlen;
        R(E1000_TDH) = dev_tdh;
    }
}

struct rx_dev { bool set; uint8_t status, errors; uint16_t length; };

/* The device receives one frame: into the descriptor at its head if the driver gave it
 * (RDH != RDT), else it is missed, as a full ring does. */
static void dev_receive(const uint8_t *frame, size_t len, const struct rx_dev *dv)
{
    uint32_t n = R(E1000_RDLEN) / sizeof(struct e1000_rx_desc);
    if (!(R(E1000_RCTL) & E1000_RCTL_EN) || !n || dev_rdh == R(E1000_RDT) % n) {
        rx_missed++;
        return;
    }
    struct e1000_rx_desc *rx = hv_phys_to_virt((uint64_t)R(E1000_RDBAH) << 32 | R(E1000_RDBAL));
    struct e1000_rx_desc *d = &rx[dev_rdh];
    memcpy(hv_phys_to_virt(d->addr), frame, len);  /* len <= E1000_BUF_SIZE: the buffer size */
    d->length = dv->set ? dv->length : (uint16_t)len;
    d->errors = dv->set ? dv->errors : 0;
    d->status = (uint8_t)((dv->set ? dv->status : E1000_RXD_STAT_EOP) | E1000_RXD_STAT_DD);
    dev_rdh = (dev_rdh + 1) % n;
    R(E1000_RDH) = dev_rdh;
}

/* ---- frames: builders and the collector-side fix-ups ------------------------------------ */
static const uint8_t COLL_MAC[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };
static const uint8_t OUR_MAC[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t OUR_IP[4] = { 10, 0, 2, 15 }, COLL_IP[4] = { 10, 0, 2, 2 };
#define COLL_PORT 7207
#define PEER_ISN  0x1000u
static const char KEY_HEX[] = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, (uint16_t)(v >> 16)); put16(p + 2, (uint16_t)v); }

static uint32_t csum_add(uint32_t s, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        s += be16(p + i);
    if (n & 1)
        s += (uint32_t)p[n - 1] << 8;
    return s;
}
static uint16_t csum_fold(uint32_t s)
{
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

/* Offsets of a frame's IPv4 header and its payload, if it has a plausible one. */
static bool ipv4_of(uint8_t *f, size_t len, size_t *ip, size_t *l4, size_t *l4len)
{
    if (len < 14 + 20 || be16(f + 12) != 0x0800 || (f[14] >> 4) != 4)
        return false;
    size_t ihl = (size_t)(f[14] & 15) * 4, tot = be16(f + 16);
    if (ihl < 20 || 14 + ihl > len)
        return false;
    if (tot < ihl || 14 + tot > len)
        tot = len - 14;                             /* the checksums cover what is there */
    *ip = 14;
    *l4 = 14 + ihl;
    *l4len = tot - ihl;
    return true;
}

static void fix_checksums(uint8_t *f, size_t len)
{
    size_t ip, l4, n;
    if (!ipv4_of(f, len, &ip, &l4, &n))
        return;
    f[ip + 10] = f[ip + 11] = 0;
    put16(f + ip + 10, csum_fold(csum_add(0, f + ip, l4 - ip)));
    if (f[ip + 9] == 6 && n >= 20) {                /* TCP: with the pseudo header */
        f[l4 + 16] = f[l4 + 17] = 0;
        uint32_t s = csum_add(0, f + ip + 12, 8) + 6 + (uint32_t)n;
        put16(f + l4 + 16, csum_fold(csum_add(s, f + l4, n)));
    } else if (f[ip + 9] == 1 && n >= 4) {          /* ICMP */
        f[l4 + 2] = f[l4 + 3] = 0;
        put16(f + l4 + 2, csum_fold(csum_add(0, f + l4, n)));
    }
}

/* TCP fix-up: from the collector to us, on the current connection, seq/ack relative. */
static void fix_tcp(uint8_t *f, size_t len)
{
    size_t ip, l4, n;
    if (!ipv4_of(f, len, &ip, &l4, &n) || f[ip + 9] != 6 || n < 20)
        return;
    memcpy(f, OUR_MAC, 6);
    memcpy(f + 6, COLL_MAC, 6);
    memcpy(f + ip + 12, COLL_IP, 4);
    memcpy(f + ip + 16, OUR_IP, 4);
    put16(f + l4, COLL_PORT);
    struct tcp_pcb *pcb = net.pcb;
    if (!pcb)
        return;
    put16(f + l4 + 2, pcb->local_port);
    put32(f + l4 + 4, be32(f + l4 + 4) + pcb->rcv_nxt);
    put32(f + l4 + 8, be32(f + l4 + 8) + pcb->snd_nxt);
}

/* The collector's side of a stream message at p (header, body, and with the session its tag
 * room after the body): the boot id in WELCOME, a CTL_REQ's tag under the key, and the session
 * tag (encrypting the body first if the session does) as message 'index' of this connection. */
static void seal_message(uint8_t *p, uint32_t index)
{
    struct hvt_msg_hdr h;
    memcpy(&h, p, sizeof h);
    uint8_t *body = p + sizeof h;
    if (h.type == HVT_MSG_WELCOME && h.len >= HVT_BOOT_ID_LEN)
        memcpy(body, net.sc.boot_id, HVT_BOOT_ID_LEN);
    else if (h.type == HVT_MSG_CTL_REQ && h.len >= sizeof(struct hvt_ctl) + HVT_MAC_LEN)
        ctl_tag(&net.sc.key, net.sc.boot_id, &h, body, h.len - HVT_MAC_LEN, body + h.len - HVT_MAC_LEN);
    if (!net.sc.auth_flags)
        return;
    ctl_seal(net.sc.skey, HVT_NONCE_TO_HV, net.sc.conn_no, index, p, h.len,
             net.sc.auth_flags & HVT_HELLO_ENCRYPT);
}

/* Stream fix-up: the TCP payload walked as whole messages from its first byte (meaningful when
 * the hypervisor holds no partial message), each sealed as the next one it will receive. */
static void fix_stream(uint8_t *f, size_t len)
{
    size_t ip, l4, n;
    if (!ipv4_of(f, len, &ip, &l4, &n) || f[ip + 9] != 6 || n < 20)
        return;
    size_t doff = (size_t)(f[l4 + 12] >> 4) * 4;
    if (doff < 20 || doff > n)
        return;
    uint8_t *p = f + l4 + doff;
    size_t left = n - doff, tl = net.sc.auth_flags ? HVT_STREAM_TAG_LEN : 0;
    uint32_t index = net.sc.rx_index;
    while (left >= sizeof(struct hvt_msg_hdr)) {
        struct hvt_msg_hdr h;
        memcpy(&h, p, sizeof h);
        if (h.len > left - sizeof h || left - sizeof h - h.len < tl)
            break;
        seal_message(p, index++);
        p += sizeof h + h.len + tl;
        left -= sizeof h + h.len + tl;
    }
}

static size_t build_tcp(uint8_t *f, uint8_t flags, const void *payload, size_t plen)
{
    memset(f, 0, 54);
    put16(f + 12, 0x0800);
    f[14] = 0x45;
    put16(f + 16, (uint16_t)(40 + plen));
    f[22] = 64;
    f[23] = 6;
    f[14 + 20 + 12] = 5 << 4;
    f[14 + 20 + 13] = flags;
    put16(f + 14 + 20 + 14, 0xffff);                /* window */
    if (plen)
        memcpy(f + 54, payload, plen);
    size_t len = 54 + plen;
    fix_tcp(f, len);                                /* addresses, ports, seq/ack at offset 0 */
    if (flags & 0x02)                               /* SYN: our ISN is not rcv_nxt yet */
        put32(f + 14 + 20 + 4, PEER_ISN);
    fix_checksums(f, len);
    return len;
}

static void poll_once(uint64_t ms)
{
    fake_tsc += ms * (TSC_KHZ) + 200 * (TSC_KHZ / 1000);   /* + 200 us: past net_poll's gate */
    net_poll();
}

static void deliver(uint8_t *f, size_t len)
{
    struct rx_dev dv = { 0 };
    dev_receive(f, len, &dv);
    poll_once(1);
}

/* The collector's side of ARP and of the handshake; false if the hypervisor did not follow. */
static bool setup_connection(bool welcome)
{
    poll_once(1);                                   /* connect attempt: ARP request out */
    uint8_t f[2048];
    memset(f, 0, 42);
    memcpy(f, OUR_MAC, 6);
    memcpy(f + 6, COLL_MAC, 6);
    put16(f + 12, 0x0806);
    put16(f + 14, 1);
    put16(f + 16, 0x0800);
    f[18] = 6;
    f[19] = 4;
    put16(f + 20, 2);                               /* reply */
    memcpy(f + 22, COLL_MAC, 6);
    memcpy(f + 28, COLL_IP, 4);
    memcpy(f + 32, OUR_MAC, 6);
    memcpy(f + 38, OUR_IP, 4);
    deliver(f, 60);                                 /* the queued SYN goes out */
    if (!net.pcb || net.pcb->state != SYN_SENT)
        return false;
    deliver(f, build_tcp(f, 0x12, NULL, 0));        /* SYN+ACK */
    if (!net.connected)
        return false;
    poll_once(1);                                   /* HELLO out */
    if (!welcome)
        return true;
    struct { struct hvt_msg_hdr h; struct hvt_welcome w; uint8_t tag[HVT_STREAM_TAG_LEN]; }
        __attribute__((packed)) m;
    memset(&m, 0, sizeof m);
    m.h.magic = HVT_STREAM_MAGIC;
    m.h.version = HVT_STREAM_VERSION;
    m.h.hdr_len = sizeof m.h;
    m.h.type = HVT_MSG_WELCOME;
    m.h.len = sizeof m.w;
    m.h.cpu = HVT_CPU_NONE;
    seal_message((uint8_t *)&m, net.sc.rx_index);
    deliver(f, build_tcp(f, 0x18, &m, sizeof m - (net.sc.auth_flags ? 0 : sizeof m.tag)));
    return net.sc.state == STREAM_UP;
}

/* ---- per input: the previous state torn down, a fresh one brought up --------------------- */
static void teardown(void)
{
    if (!net.active)
        return;
    struct tcp_pcb **lists[] = { &tcp_active_pcbs, &tcp_tw_pcbs, &tcp_bound_pcbs };
    for (unsigned i = 0; i < sizeof lists / sizeof lists[0]; i++)
        while (*lists[i])
            tcp_abort(*lists[i]);
    netif_remove(&net.netif);
    /* The TCP timer deactivates itself once it finds no pcb; then forget every timeout. */
    fake_tsc += 1000ull * TSC_KHZ;
    sys_check_timeouts();
    *sys_timeouts_get_next_timeout() = NULL;
    net.active = false;
    free_all();
}

static bool bring_up(uint8_t setup)
{
    memset(regs, 0, sizeof regs);
    R(E1000_STATUS) = E1000_STATUS_LU;
    dev_rdh = dev_tdh = 0;
    nic_cmd = 0;
    nic_bar0 = (uint32_t)BAR0_PHYS;
    fake_tsc = 1ull << 32;
    char text[256];
    snprintf(text, sizeof text, "ip=10.0.2.15 collector=10.0.2.2:%u tsc_khz=%u ring_kb=2048%s%s%s%s%s%s",
             COLL_PORT, TSC_KHZ, setup & 4 ? " overflow=drop" : "",
             setup & 8 ? "" : " key=", setup & 8 ? "" : KEY_HEX, setup & 16 ? " selftest_kb=64" : "",
             setup & 32 ? " auth=off" : "", setup & 64 ? " encrypt=on" : "");
    struct net_config cfg;
    char err[128];
    if (net_config_parse(&cfg, text, strlen(text), err, sizeof err) != 0 || net_init(&cfg) != 0)
        abort();                                   /* the harness's machine is wrong */
    memcpy(net.nic.mac, OUR_MAC, 6);                /* see the header: the EEPROM is silent */
    memcpy(net.netif.hwaddr, OUR_MAC, 6);
    for (unsigned i = 0; i < E1000_RX_DESCS; i++) {
        if (!rx_bufs[i])
            rx_bufs[i] = malloc(E1000_BUF_SIZE);
        net.nic.rx_buf[i] = rx_bufs[i];
        net.nic.rx[i].addr = hv_virt_to_phys(rx_bufs[i]);
    }
    if (setup & 1)
        return setup_connection(setup & 2);
    return true;
}

static void check_invariants(void)
{
    struct stream_core *sc = &net.sc;
    if (sc->tail > sc->head || sc->head - sc->tail > sc->size || sc->send > sc->head ||
        (sc->state == STREAM_UP && sc->send < sc->tail))
        abort();
    if (net.connected && !net.pcb)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t frame[E1000_BUF_SIZE];
    teardown();
    rx_missed = frames_out = 0;
    uint8_t setup = size ? data[0] : 0;
    if (!bring_up(setup)) {
        fprintf(stderr, "fuzz_lwip_rx: the scripted setup (ARP, handshake%s) failed\n",
                setup & 2 ? ", WELCOME" : "");
        abort();
    }
    size_t pos = 1;
    while (size - pos >= 4 && pos < size) {
        uint8_t flags = data[pos], t = data[pos + 1];
        size_t len = be16(data + pos + 2) % (E1000_BUF_SIZE + 1);
        pos += 4;
        struct rx_dev dv = { 0 };
        if (flags & 8) {
            if (size - pos < 4)
                break;
            dv.set = true;
            dv.status = data[pos];
            dv.errors = data[pos + 1];
            dv.length = be16(data + pos + 2);
            pos += 4;
        }
        if (len > size - pos)
            len = size - pos;
        memcpy(frame, data + pos, len);
        pos += len;
        if (flags & 1)
            fix_tcp(frame, len);
        if (flags & 4)
            fix_stream(frame, len);
        if (flags & 2)
            fix_checksums(frame, len);
        fake_tsc += (uint64_t)(t & 0x7f) * (t & 0x80 ? 32 : 1) * TSC_KHZ;
        dev_receive(frame, len, &dv);
        if (!(flags & 16))
            poll_once(0);
        check_invariants();
    }
    poll_once(1);
    check_invariants();
    if (hv_host_verbose())
        fprintf(stderr, "fuzz_lwip_rx: rx %lu frames (%lu errors, %lu missed), tx %lu; stream %d, "
                "ctl accepted %lu bad-auth %lu replayed %lu malformed %lu, protocol errors %lu, bad tags %lu\n",
                (unsigned long)net.nic.cnt.rx_frames, (unsigned long)net.nic.cnt.rx_errors, rx_missed,
                frames_out, net.sc.state, (unsigned long)net.sc.cnt.ctl_accepted,
                (unsigned long)net.sc.cnt.ctl_bad_auth, (unsigned long)net.sc.cnt.ctl_replayed,
                (unsigned long)net.sc.cnt.ctl_malformed, (unsigned long)net.protocol_errors,
                (unsigned long)net.sc.cnt.bad_tags);
    return 0;
}
