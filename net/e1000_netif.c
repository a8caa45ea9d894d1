/* e1000_netif.c - the lwIP network interface over the polled e1000 (net/e1000.h). Its
 * NIC and clock come through netif->state (struct e1000_netif, net_internal.h), not net's
 * global: the interface does not depend on the transport above it. */
#include "net_internal.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#define NET_MTU 1500
/* How long linkoutput waits for a transmit descriptor before giving the frame back to TCP
 * (which retransmits): in ms of lwIP's clock. */
#define NET_TX_WAIT_MS 20

static uint8_t tx_frame[E1000_MAX_FRAME];

static err_t e1000_linkoutput(struct netif *netif, struct pbuf *p)
{
    if (p->tot_len > sizeof tx_frame)
        return ERR_BUF;
    const void *frame = p->payload;
    if (p->next) {                      /* chains are flattened: one descriptor per frame */
        pbuf_copy_partial(p, tx_frame, p->tot_len, 0);
        frame = tx_frame;
    }
    struct e1000_netif *e = netif->state;
    uint64_t deadline = hv_rdtsc() + NET_TX_WAIT_MS * e->tsc_per_ms;
    while (e1000_tx(e->nic, frame, p->tot_len) == -1) {
        if (hv_rdtsc() > deadline)
            return ERR_MEM;
        __asm__ volatile("pause");
    }
    return ERR_OK;
}

err_t e1000_netif_init(struct netif *netif)
{
    netif->name[0] = 'e';
    netif->name[1] = '0';
    netif->mtu = NET_MTU;
    netif->hwaddr_len = ETH_HWADDR_LEN;
    struct e1000_netif *e = netif->state;
    memcpy(netif->hwaddr, e->nic->mac, ETH_HWADDR_LEN);
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    netif->output = etharp_output;
    netif->linkoutput = e1000_linkoutput;
    return ERR_OK;
}

void e1000_netif_input(void *ctx, const uint8_t *frame, size_t len)
{
    struct netif *netif = ctx;
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    if (!p) {
        ((struct e1000_netif *)netif->state)->nic->cnt.rx_errors++;  /* TCP retransmits: not a stream loss */
        return;
    }
    pbuf_take(p, frame, (u16_t)len);
    if (netif->input(p, netif) != ERR_OK)
        pbuf_free(p);
}
