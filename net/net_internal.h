/*
 * net_internal.h - state shared by the hypervisor-side net/ files (net.c, net_hide.c,
 * net_console.c, e1000_netif.c, lwip_port.c). Not for the core: it uses net.h.
 *
 * Locks, always taken in this order and never the other way round:
 *   console.lock (net_console.c) -> net.lock (NIC + lwIP + transport) -> sc.lock (ring, inside
 *   stream_core) ; pci_cfg_lock is a leaf.
 * stream_send() takes no lock while it waits: it polls, and net_poll() uses a trylock.
 */
#ifndef HVT_NET_INTERNAL_H
#define HVT_NET_INTERNAL_H
#include "net.h"
#include "e1000.h"
#include "stream_core.h"
#include "lwip/netif.h"
#include "lwip/tcp.h"

struct net_state {
    bool     active;
    struct net_config cfg;
    struct e1000 nic;
    struct netif netif;
    struct stream_core sc;
    net_spinlock lock;
    struct tcp_pcb *pcb;
    bool     connected;
    uint64_t next_connect_tsc, backoff_ms;
    uint64_t tsc_per_ms, start_tsc;
    uint64_t polls;
    uint64_t last_poll_tsc, poll_interval_tsc;   /* net_poll's rate gate */
    uint64_t selftest_left, selftest_counter;
    uint64_t selftest_tsc0, selftest_bytes;  /* when the load began, its bytes; 0 once reported */
    /* counters for STATUS */
    uint64_t backpressure_waits, dropped_msgs, dropped_bytes, reported_msgs, reported_bytes;
    uint64_t backpressure_tsc, backpressure_max_tsc;   /* time sends waited: all, longest */
    /* link failure (link_timeout_ms): sends drop until the collector frees ring space */
    volatile bool link_failed;
    bool     link_drops;                 /* drops since the last LOSS came from a failure */
    uint64_t link_fail_free, link_failures, link_timeout_tsc;
    uint64_t console_bytes, protocol_errors;
    net_ctl_handler ctl_fn;
};
extern struct net_state net;
extern net_spinlock pci_cfg_lock;

/* What the lwIP interface over the e1000 needs: its netif->state (netif_add's state). */
struct e1000_netif {
    struct e1000 *nic;
    uint64_t tsc_per_ms;
};
err_t e1000_netif_init(struct netif *netif);
void  e1000_netif_input(void *ctx, const uint8_t *frame, size_t len);
void  net_lwip_port_init(uint64_t tsc_per_ms, void *heap);

#endif
