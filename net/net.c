/* net.c - bring-up, polling, TCP connection to the collector, stream_send; see net.h. */
#include "net_internal.h"
#include "sha256.h"
#include "boot_rand.h"
#include "hv_rand.h"
#include "hvt_hypercall.h"
#include "lwip/init.h"
#include "lwip/timeouts.h"
#include "lwip/ip4_addr.h"
#include "netif/ethernet.h"

struct net_state net;

#define NET_BACKOFF_MIN_MS   100
#define NET_BACKOFF_MAX_MS   2000
#define NET_LINK_POLL_EVERY  64         /* polls between reads of STATUS.LU */
#define NET_RX_BUDGET        64         /* frames per poll: bounds the time one exit spends */
#define NET_SEND_POLL_EVERY  16         /* stream_send polls once per this many messages */
#define NET_DEFAULT_TSC_KHZ  1000000u   /* 1 GHz when neither config nor CPUID tell */
#define NET_LWIP_HEAP_BYTES  (MEM_SIZE + 4096)
/* net_poll() from VM exits does real work at most this often: under MTF every guest
 * instruction exits, and a full poll costs hundreds of instructions; the rate gate costs ~10. */
#define NET_POLL_INTERVAL_US 100

static void cpuid(uint32_t leaf, uint32_t *a, uint32_t *b, uint32_t *c, uint32_t *d)
{
    __asm__ volatile("cpuid" : "=a"(*a), "=b"(*b), "=c"(*c), "=d"(*d) : "a"(leaf), "c"(0));
}

/* TSC kHz: configuration first, then CPUID 15h (TSC/crystal ratio) and 16h (base MHz). */
static uint64_t tsc_khz(const struct net_config *cfg)
{
    if (cfg->tsc_khz)
        return cfg->tsc_khz;
    uint32_t a, b, c, d, max;
    cpuid(0, &max, &b, &c, &d);
    if (max >= 0x15) {
        cpuid(0x15, &a, &b, &c, &d);
        if (a && b && c)
            return (uint64_t)c / 1000 * b / a;
    }
    if (max >= 0x16) {
        cpuid(0x16, &a, &b, &c, &d);
        if (a & 0xffff)
            return (uint64_t)(a & 0xffff) * 1000;
    }
    hv_log("net: TSC rate unknown, assuming %u kHz (set tsc_khz=)\n", NET_DEFAULT_TSC_KHZ);
    return NET_DEFAULT_TSC_KHZ;
}

/* One boot id per hypervisor start: hash of hardware randomness (boot_rand.h), the TSC, the
 * NIC's MAC and the configuration. Returns how many random words went in. */
static unsigned make_boot_id(uint8_t out[HVT_BOOT_ID_LEN])
{
    uint64_t r[BOOT_RAND_WORDS] = {0};
    unsigned got = hv_rand_words(r, BOOT_RAND_WORDS);
    struct sha256_ctx h;
    uint8_t dg[SHA256_DIGEST_LEN];
    uint64_t t = hv_rdtsc();
    sha256_init(&h);
    sha256_update(&h, &t, sizeof t);
    sha256_update(&h, r, sizeof r);
    sha256_update(&h, net.nic.mac, sizeof net.nic.mac);
    sha256_update(&h, &net.cfg, sizeof net.cfg);
    t = hv_rdtsc();
    sha256_update(&h, &t, sizeof t);
    sha256_final(&h, dg);
    memcpy(out, dg, HVT_BOOT_ID_LEN);
    return got;
}

/* ---- transport over the lwIP pcb ---- */
static size_t tcp_room(void *ctx)
{
    if (!net.pcb || !net.connected)
        return 0;
    /* keep a few queue slots for lwIP's own segments (FIN, ACK-only) */
    if (tcp_sndqueuelen(net.pcb) + 4 >= TCP_SND_QUEUELEN)
        return 0;
    return tcp_sndbuf(net.pcb);
}

static size_t tcp_put(void *ctx, const void *p, size_t n)
{
    if (n > 0xffff)
        n = 0xffff;                     /* tcp_write takes a u16_t length */
    if (tcp_write(net.pcb, p, (u16_t)n, TCP_WRITE_FLAG_COPY | TCP_WRITE_FLAG_MORE) != ERR_OK)
        return 0;
    return n;
}

static const struct stream_transport net_transport = { .room = tcp_room, .write = tcp_put };

static void schedule_reconnect(void)
{
    net.backoff_ms = net.backoff_ms ? net.backoff_ms * 2 : NET_BACKOFF_MIN_MS;
    if (net.backoff_ms > NET_BACKOFF_MAX_MS)
        net.backoff_ms = NET_BACKOFF_MAX_MS;
    net.next_connect_tsc = hv_rdtsc() + net.backoff_ms * net.tsc_per_ms;
}

static void on_tcp_err(void *arg, err_t err)
{
    /* lwIP has freed the pcb already */
    if (net.connected)
        hv_log("net: connection to the collector lost (lwIP error %d)\n", err);
    net.pcb = NULL;
    net.connected = false;
    stream_core_disconnected(&net.sc);
    schedule_reconnect();
}

static void drop_connection(struct tcp_pcb *pcb, const char *why)
{
    hv_log("net: closing the collector connection: %s\n", why);
    net.connected = false;
    tcp_abort(pcb);                     /* calls on_tcp_err (ERR_ABRT), which cleans up */
}

static err_t on_tcp_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err)
{
    if (!p) {
        drop_connection(pcb, "collector closed it");
        return ERR_ABRT;
    }
    for (struct pbuf *q = p; q; q = q->next) {
        if (stream_core_rx(&net.sc, q->payload, q->len) < 0) {
            net.protocol_errors++;
            tcp_recved(pcb, p->tot_len);
            pbuf_free(p);
            drop_connection(pcb, "protocol error from the collector");
            return ERR_ABRT;
        }
    }
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t on_tcp_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    net.connected = true;
    net.backoff_ms = 0;
    stream_core_connected(&net.sc);
    hv_log("net: connected to the collector (connection %u)\n", (unsigned)net.sc.cnt.connections - 1);
    return ERR_OK;
}

static void try_connect(void)
{
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb) {
        schedule_reconnect();
        return;
    }
    ip_addr_t ip;
    IP4_ADDR(ip_2_ip4(&ip), net.cfg.collector_ip[0], net.cfg.collector_ip[1],
             net.cfg.collector_ip[2], net.cfg.collector_ip[3]);
    tcp_arg(pcb, NULL);
    tcp_err(pcb, on_tcp_err);
    tcp_recv(pcb, on_tcp_recv);
    tcp_nagle_disable(pcb);             /* control replies and console lines go out at once */
    pcb->so_options |= SOF_KEEPALIVE;
    net.pcb = pcb;
    if (tcp_connect(pcb, &ip, net.cfg.collector_port, on_tcp_connected) != ERR_OK) {
        tcp_abort(pcb);
        return;
    }
    schedule_reconnect();               /* next attempt only if this one fails */
}

/* ---- control ---- */
static int net_ctl(void *ctx, uint16_t cmd, const uint8_t *args, uint32_t len, uint8_t *out,
                   uint32_t *out_len)
{
    if (cmd == HVT_CTL_STATUS) {
        struct hvt_ctl_status s;
        stream_core_status(&net.sc, &s);
        s.uptime_tsc = hv_rdtsc() - net.start_tsc;
        s.rx_frames = net.nic.cnt.rx_frames;
        s.tx_frames = net.nic.cnt.tx_frames;
        s.rx_errors = net.nic.cnt.rx_errors;
        s.tx_stalls = net.nic.cnt.tx_ring_full;
        s.console_bytes = net.console_bytes;
        s.lost_messages += net.dropped_msgs;
        s.backpressure_waits = net.backpressure_waits;
        memcpy(out, &s, sizeof s);
        *out_len = sizeof s;
        return HVT_CTL_OK;
    }
    if (net.ctl_fn)
        return net.ctl_fn(cmd, args, len, out, out_len);
    return HVT_CTL_ENOSYS;
}

void net_set_ctl_handler(net_ctl_handler fn) { net.ctl_fn = fn; }

/* ---- bring-up ---- */
static void fmt_ip(char *b, size_t n, const uint8_t ip[4])
{
    hv_snprintf(b, n, "%u.%u.%u.%u", ip[0], ip[1], ip[2], ip[3]);
}

int net_init(const struct net_config *cfg)
{
    net_ctl_handler ctl_fn = net.ctl_fn;   /* the policy may register before net_init runs */
    memset(&net, 0, sizeof net);
    net.ctl_fn = ctl_fn;
    net.cfg = *cfg;
    if (!cfg->enabled) {
        hv_log("net: disabled by the boot configuration\n");
        return 0;
    }
    if (cfg->unknown_count)
        hv_log("net: ignoring %u unknown configuration key(s), first '%s'\n", cfg->unknown_count,
               cfg->unknown);
    struct pci_addr a;
    if (e1000_find(cfg, &a) < 0) {
        hv_log("net: no supported Intel PRO/1000 NIC matching nic= found: running without a stream\n");
        return -1;
    }
    if (e1000_init(&net.nic, a) < 0) {
        hv_log("net: e1000 at %02x:%02x.%x unusable (BAR0, or no MAC address)\n", a.bus, a.dev, a.fn);
        return -1;
    }
    net.tsc_per_ms = tsc_khz(cfg);
    net.start_tsc = hv_rdtsc();
    void *heap = hv_alloc_pages(HV_PAGES(NET_LWIP_HEAP_BYTES));
    uint64_t ring_bytes = (uint64_t)cfg->ring_kb * 1024;
    void *ring = hv_alloc_pages(HV_PAGES(ring_bytes));
    if (!heap || !ring) {
        hv_log("net: out of hypervisor memory for the ring (%u KiB)\n", cfg->ring_kb);
        return -1;
    }
    net_lwip_port_init(net.tsc_per_ms, heap);
    lwip_init();
    ip4_addr_t ip, mask, gw;
    IP4_ADDR(&ip, cfg->ip[0], cfg->ip[1], cfg->ip[2], cfg->ip[3]);
    IP4_ADDR(&mask, cfg->netmask[0], cfg->netmask[1], cfg->netmask[2], cfg->netmask[3]);
    IP4_ADDR(&gw, cfg->gw[0], cfg->gw[1], cfg->gw[2], cfg->gw[3]);
    static struct e1000_netif netif_state;
    netif_state = (struct e1000_netif){ &net.nic, net.tsc_per_ms };
    if (!netif_add(&net.netif, &ip, &mask, &gw, &netif_state, e1000_netif_init, ethernet_input)) {
        hv_log("net: lwIP refused the interface\n");
        return -1;
    }
    netif_set_default(&net.netif);
    netif_set_up(&net.netif);
    if (net.nic.link_up)
        netif_set_link_up(&net.netif);

    uint8_t boot_id[HVT_BOOT_ID_LEN];
    unsigned rand_words = make_boot_id(boot_id);
    bool keyed_auth = cfg->key.len && cfg->auth;
    if (!boot_rand_may_start(keyed_auth, rand_words)) {
        /* The session key and every nonce derive from the boot id: without hardware
         * randomness it could repeat across boots, so an authenticated stream is not started. */
        hv_log("net: no hardware random number (RDSEED/RDRAND gave %u of %u words): an "
               "authenticated stream needs one; NIC not used\n", rand_words, BOOT_RAND_WORDS);
        return -1;
    }
    unsigned ncpu = hv_cpu_count();
    if (ncpu > STREAM_MAX_CPUS)
        ncpu = STREAM_MAX_CPUS;
    if (stream_core_init(&net.sc, ring, ring_bytes, (uint16_t)ncpu, boot_id, &cfg->key,
                         HVT_VERSION, net.tsc_per_ms * 1000) != 0) {
        hv_log("net: bad ring size %u KiB\n", cfg->ring_kb);
        return -1;
    }
    stream_core_set_ctl(&net.sc, net_ctl, NULL);
    stream_core_set_auth(&net.sc, cfg->auth, cfg->auth && cfg->encrypt);
    char ipb[16], colb[16], hello[STREAM_HELLO_TEXT_MAX];
    fmt_ip(ipb, sizeof ipb, cfg->ip);
    fmt_ip(colb, sizeof colb, cfg->collector_ip);
    const uint8_t *m = net.nic.mac;
    int n = hv_snprintf(hello, sizeof hello,
                        "hv_build=hvtrace %u.%u.%u\nnic=%02x:%02x.%x\nnic_model=%s\n"
                        "mac=%02x:%02x:%02x:%02x:%02x:%02x\nip=%s\ncollector=%s:%u\n"
                        "overflow=%s\ntsc_khz=%lu\n", HVT_VERSION_MAJOR, HVT_VERSION_MINOR,
                        HVT_VERSION_PATCH, a.bus, a.dev, a.fn, net.nic.model->name, m[0], m[1], m[2], m[3], m[4], m[5],
                        ipb, colb, cfg->collector_port, cfg->overflow_drop ? "drop" : "block",
                        (unsigned long)net.tsc_per_ms);
    /* The loader's configuration: its hash and whether a seal vouched for it. */
    static const char *const cfg_states[] = { "not-enrolled", "sealed", "unsealed", "none" };
    if (n > 0 && (size_t)n + 12 + 64 + 12 + 16 < sizeof hello) {
        n += hv_snprintf(hello + n, sizeof hello - (size_t)n, "cfg_sha256=");
        for (unsigned i = 0; i < sizeof cfg->cfg_sha256; i++)
            n += hv_snprintf(hello + n, sizeof hello - (size_t)n, "%02x", cfg->cfg_sha256[i]);
        n += hv_snprintf(hello + n, sizeof hello - (size_t)n, "\ncfg_seal=%s\n",
                         cfg->cfg_state < 4 ? cfg_states[cfg->cfg_state] : "unknown");
    }
    if (n > 0)
        stream_core_set_hello_text(&net.sc, hello, (size_t)n < sizeof hello ? (size_t)n : sizeof hello - 1);
    hv_log("net: e1000 %02x:%02x.%x (%s, %s family) mac %02x:%02x:%02x:%02x:%02x:%02x link %s, %s -> collector %s:%u, "
           "ring %u KiB, control %s, stream %s\n", a.bus, a.dev, a.fn, net.nic.model->name,
           net.nic.model->fam->name, m[0], m[1], m[2], m[3], m[4],
           m[5], net.nic.link_up ? "up" : "down", ipb, colb, cfg->collector_port, cfg->ring_kb,
           cfg->key.len ? "keyed" : "refused (no key)",
           (net.sc.auth_flags & HVT_HELLO_ENCRYPT) ? "authenticated and encrypted" :
           net.sc.auth_flags ? "authenticated" : "NOT authenticated (no key, or auth=off)");
    net.selftest_left = (uint64_t)cfg->selftest_kb * 1024;
    net.poll_interval_tsc = net.tsc_per_ms * NET_POLL_INTERVAL_US / 1000;
    net.link_timeout_tsc = net.tsc_per_ms * cfg->link_timeout_ms;
    net.next_connect_tsc = hv_rdtsc();
    net.active = true;
    return 0;
}

bool net_active(void) { return net.active; }

bool net_selftest_finished(void)
{
    return net.active && net.cfg.selftest_kb && !net.selftest_left && !net.selftest_tsc0 &&
           net.selftest_bytes;
}

/* The selftest load: filler TRACE batches of NET_SELFTEST_BATCH records, enqueued from the
 * poll (never blocking: a full ring just means "later"). */
#define NET_SELFTEST_BATCH 508u          /* 16 + 508 * 8 = 4080 bytes of payload */
static void selftest_fill(void)
{
    static uint64_t batch[2 + NET_SELFTEST_BATCH];
    while (net.selftest_left && net.sc.state == STREAM_UP) {
        uint64_t n = NET_SELFTEST_BATCH;
        if (n * 8 > net.selftest_left)
            n = (net.selftest_left + 7) / 8;
        struct hvt_trace_batch tb = { .format = HVT_TRACE_FORMAT_FILLER, .nrecords = (uint32_t)n,
                                      .first_tsc = hv_rdtsc() };
        memcpy(batch, &tb, sizeof tb);
        for (uint64_t i = 0; i < n; i++)
            batch[2 + i] = net.selftest_counter + i;
        if (stream_core_append(&net.sc, 0, HVT_MSG_TRACE, batch, sizeof tb + n * 8) != 0)
            break;
        if (!net.selftest_tsc0)
            net.selftest_tsc0 = tb.first_tsc;
        net.selftest_bytes += sizeof(struct hvt_msg_hdr) + sizeof tb + n * 8;
        net.selftest_counter += n;
        net.selftest_left = n * 8 >= net.selftest_left ? 0 : net.selftest_left - n * 8;
    }
}

/* The load's cost: TSC ticks from its first message to the collector's ACK of its last, per
 * byte (in Bochs the TSC counts instructions: the hypervisor's cost of a streamed byte). */
static void selftest_report(void)
{
    uint64_t ticks = hv_rdtsc() - net.selftest_tsc0;
    uint64_t b = net.selftest_bytes ? net.selftest_bytes : 1;
    hv_log("net: selftest: %lu bytes sent and acknowledged in %lu TSC ticks: %lu.%02lu ticks per "
           "byte (stream %s)\n", net.selftest_bytes, ticks, ticks / b, ticks % b * 100 / b,
           (net.sc.auth_flags & HVT_HELLO_ENCRYPT) ? "encrypted" : net.sc.auth_flags ?
           "authenticated" : "not authenticated");
    net.selftest_tsc0 = 0;
}

/* Emit one LOSS for what was dropped (overflow=drop, or a failed link) since the last report
 * (if it fits now). */
static void report_drops(void)
{
    if (net.dropped_msgs == net.reported_msgs)
        return;
    struct hvt_loss l = { .reason = net.link_drops ? HVT_LOSS_LINK : HVT_LOSS_DROPPED, .msg_type = 0,
                          .messages = net.dropped_msgs - net.reported_msgs,
                          .bytes = net.dropped_bytes - net.reported_bytes };
    if (stream_core_append(&net.sc, 0, HVT_MSG_LOSS, &l, sizeof l) == 0) {
        net.reported_msgs += l.messages;
        net.reported_bytes += l.bytes;
        net.link_drops = false;
    }
}

static void poll_now(void);
static void link_check_recovery(void);

bool net_poll(void)
{
    if (!net.active)
        return false;
    uint64_t now = hv_rdtsc();
    if (now - __atomic_load_n(&net.last_poll_tsc, __ATOMIC_RELAXED) < net.poll_interval_tsc)
        return false;
    __atomic_store_n(&net.last_poll_tsc, now, __ATOMIC_RELAXED);
    poll_now();
    return true;
}

/* The whole poll, ungated: also what a sender waiting under backpressure spins on. */
static void poll_now(void)
{
    if (!net_trylock(&net.lock))
        return;                         /* another CPU is polling: it does the work */
    net.polls++;
    e1000_rx_poll(&net.nic, e1000_netif_input, &net.netif, NET_RX_BUDGET);
    if (net.polls % NET_LINK_POLL_EVERY == 0 && e1000_link_poll(&net.nic)) {
        hv_log("net: link %s\n", net.nic.link_up ? "up" : "down");
        if (net.nic.link_up)
            netif_set_link_up(&net.netif);
        else
            netif_set_link_down(&net.netif);
    }
    sys_check_timeouts();
    if (!net.pcb && net.nic.link_up && hv_rdtsc() >= net.next_connect_tsc)
        try_connect();
    link_check_recovery();
    report_drops();                     /* overflow=drop, or what a failed link dropped */
    if (net.selftest_left)
        selftest_fill();
    else if (net.selftest_tsc0 && stream_core_all_acked(&net.sc))
        selftest_report();
    if (net.pcb && net.connected) {
        stream_core_tx(&net.sc, &net_transport);
        tcp_output(net.pcb);
    }
    net_unlock(&net.lock);
}

/* A failed link recovers once the collector frees ring space again (ACKs). */
static void link_check_recovery(void)
{
    if (net.link_failed && stream_core_free(&net.sc) > net.link_fail_free &&
        __atomic_exchange_n(&net.link_failed, false, __ATOMIC_ACQ_REL))
        hv_log("net: link recovered: sending again (dropped so far: %lu messages)\n",
               net.dropped_msgs);
}

/* Drops not yet reported must be reported before anything sent after them: the collector
 * places its GAP where the LOSS arrives, so a message overtaking it would look continuous
 * with what came before the loss. True when the LOSS is (now) in the ring. */
static bool drops_reported(void)
{
    if (__atomic_load_n(&net.dropped_msgs, __ATOMIC_ACQUIRE) == net.reported_msgs)
        return true;
    net_lock(&net.lock);                /* stream_send never runs under net's lock */
    link_check_recovery();
    report_drops();
    bool done = net.dropped_msgs == net.reported_msgs;
    net_unlock(&net.lock);
    return done;
}

static void count_drop(size_t len)
{
    __atomic_add_fetch(&net.dropped_msgs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&net.dropped_bytes, len, __ATOMIC_RELAXED);
}

bool net_link_failed(void) { return net.active && net.link_failed; }

/* The time a send waited for ring space (backpressure): in all, and the longest wait. */
static void count_wait(uint64_t tsc)
{
    __atomic_add_fetch(&net.backpressure_tsc, tsc, __ATOMIC_RELAXED);
    uint64_t m = __atomic_load_n(&net.backpressure_max_tsc, __ATOMIC_RELAXED);
    while (tsc > m && !__atomic_compare_exchange_n(&net.backpressure_max_tsc, &m, tsc, false,
                                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

/* --- the hypervisor's fatal path (hv_exit.h hv_on_fatal): every other CPU is stopped, maybe
 * while it held net's lock or the ring's. Before the first send of the fatal path each lock
 * is tried for NET_FATAL_LOCK_MS: one still held belongs to a stopped CPU, and the state it
 * guards may be half-updated, so net gives up sending (and says so) rather than wait for
 * good or break it. Waits for ring space are bounded by NET_FATAL_SEND_MS, the final push of
 * the ring by NET_FATAL_PUSH_MS. --- */
#define NET_FATAL_LOCK_MS  50
#define NET_FATAL_SEND_MS  2000
#define NET_FATAL_PUSH_MS  5000
enum { FATAL_UNCHECKED, FATAL_USABLE, FATAL_UNUSABLE };
static int fatal_net = FATAL_UNCHECKED;

static bool lock_free_within(net_spinlock *l, uint64_t max_tsc)
{
    for (uint64_t t0 = hv_rdtsc(); hv_rdtsc() - t0 < max_tsc;) {
        if (net_trylock(l)) {
            net_unlock(l);
            return true;
        }
        __asm__ volatile("pause");
    }
    return false;
}

static bool fatal_usable(void)
{
    if (fatal_net == FATAL_UNCHECKED) {
        uint64_t max = NET_FATAL_LOCK_MS * net.tsc_per_ms;
        bool nl = lock_free_within(&net.lock, max), rl = lock_free_within(&net.sc.lock, max);
        fatal_net = nl && rl ? FATAL_USABLE : FATAL_UNUSABLE;
        if (!nl || !rl)
            hv_log("net: fatal: the %s lock is held by a stopped CPU: nothing more is sent\n",
                   !nl ? "NIC's" : "ring's");
    }
    return fatal_net == FATAL_USABLE;
}

int stream_send(unsigned cpu, uint16_t type, const void *data, size_t len)
{
    static uint32_t sends;
    if (!net.active)
        return -1;
    bool fatal = hv_fatal_active();
    if (fatal && !fatal_usable())
        return -1;
    bool waited = false;
    uint64_t wait_start = 0, wait_free = 0, first_wait = 0;
    for (;;) {
        link_check_recovery();
        int r = drops_reported() ? stream_core_append(&net.sc, cpu, type, data, len) : STREAM_EAGAIN;
        if (r == 0) {
            if (waited)
                count_wait(hv_rdtsc() - first_wait);
            break;
        }
        if (r != STREAM_EAGAIN)
            return -1;                  /* bad cpu or too large: the caller's bug, not a loss */
        if (net.cfg.overflow_drop) {
            count_drop(len);
            return -1;
        }
        if (net.link_failed) {          /* no waiting: counted, reported as LOSS (LINK) */
            net.link_drops = true;
            count_drop(len);
            return NET_SEND_LINK_FAILED;
        }
        /* Waiting is lossless, but only while the collector makes progress: the clock
         * restarts whenever ring space frees up. */
        uint64_t now = hv_rdtsc(), fr = stream_core_free(&net.sc);
        if (!waited || fr > wait_free) {
            wait_start = now;
            wait_free = fr;
        }
        if (!waited) {
            __atomic_add_fetch(&net.backpressure_waits, 1, __ATOMIC_RELAXED);
            first_wait = now;
        }
        waited = true;
        if (fatal && now - first_wait > NET_FATAL_SEND_MS * net.tsc_per_ms) {
            count_drop(len);
            return NET_SEND_LINK_FAILED;        /* the machine resets next: no waiting for good */
        }
        if (net.link_timeout_tsc && now - wait_start > net.link_timeout_tsc) {
            net.link_fail_free = fr;
            net.link_failures++;
            net.link_failed = true;
            net.link_drops = true;
            count_drop(len);
            count_wait(now - first_wait);
            hv_log("net: link failure: the collector freed no ring space for %u ms; dropping "
                   "(counted) until it does\n", net.cfg.link_timeout_ms);
            return NET_SEND_LINK_FAILED;
        }
        poll_now();                     /* backpressure: move data out, wait for ACKs */
    }
    if (__atomic_add_fetch(&sends, 1, __ATOMIC_RELAXED) % NET_SEND_POLL_EVERY == 0)
        net_poll();
    return 0;
}

int net_meta(const char *text)
{
    return stream_send(hv_cpu_id(), HVT_MSG_META, text, strlen(text));
}

void net_fatal(const char *why)
{
    if (!net.active || !fatal_usable())
        return;
    size_t n = strlen(why);
    while (n && why[n - 1] == '\n')
        n--;
    if (n > 255)
        n = 255;
    if (!n) {
        why = "(no reason given)";
        n = strlen(why);
    }
    int rc = stream_send(hv_cpu_id(), HVT_MSG_PANIC, why, n);
    if (rc == 0)
        rc = stream_send(hv_cpu_id(), HVT_MSG_BYE, NULL, 0);
    uint64_t end = hv_rdtsc() + NET_FATAL_PUSH_MS * net.tsc_per_ms;
    while (!stream_core_all_acked(&net.sc) && hv_rdtsc() < end)
        poll_now();
    hv_log("net: fatal: PANIC %s; %s\n", rc == 0 ? "and BYE queued" : "could not be queued",
           stream_core_all_acked(&net.sc) ? "the collector has everything"
                                          : "the collector did NOT acknowledge everything");
}

void net_shutdown(uint64_t max_tsc)
{
    if (!net.active)
        return;
    stream_send(hv_cpu_id(), HVT_MSG_BYE, NULL, 0);
    uint64_t end = hv_rdtsc() + max_tsc;
    while (!stream_core_all_acked(&net.sc) && hv_rdtsc() < end)
        poll_now();
    hv_log("net: shutdown, %s\n", stream_core_all_acked(&net.sc) ? "collector has everything"
                                                                  : "collector did NOT acknowledge everything");
    uint64_t ms = net.tsc_per_ms ? net.tsc_per_ms : 1;
    hv_log("net: backpressure: %lu waits, %lu ms waited in all, the longest %lu ms; %lu messages dropped\n",
           net.backpressure_waits, net.backpressure_tsc / ms, net.backpressure_max_tsc / ms, net.dropped_msgs);
}
