/*
 * net_layer.c - the dedicated NIC as a layer of the hypervisor image (hv_layer.h): one call,
 * after vmm/ has started and before any CPU is virtualized:
 *
 *     net_layer_init(bi, &transport);
 *
 * It parses bi->net_config (empty: nothing happens, no NIC is touched), runs net_init,
 * registers net's handlers with vmm/ (the PCI configuration ports and COM1's data/LCR ports,
 * a poll at every exit, the end of the stream at power-off and in the fatal path), hides
 * every memory BAR of the NIC from the guest (hv_ept_hide: the guest reads junk, never the
 * device), and fills the transport table the image hands to the policy. Tested end to end in
 * Bochs by tests/net/test-net.sh. The only file of net/ that talks to vmm/'s registration API.
 */
#include "hv_api.h"
#include "hv_exit.h"
#include "hv_ept.h"
#include "hvt_bootinfo.h"
#include "net.h"
#include "pci_mcfg.h"

#define NET_SHUTDOWN_MAX_TSC 20000000000ull   /* ~400 s of Bochs instructions at most */

static bool layer_io(struct guest_regs *g, uint16_t port, unsigned size, bool in)
{
    return net_io_exit(port, size, in, &g->r[GPR_RAX]);
}

static void layer_pre_exit(struct guest_regs *g, unsigned reason) { net_poll(); }

/* Registered before the policy, so called after it (hv_exit.h): its last records are in
 * the ring before BYE. */
static void layer_power_off(void) { net_shutdown(NET_SHUTDOWN_MAX_TSC); }
static void layer_fatal(const char *why) { net_fatal(why); }

/* PCI Express configuration space (ECAM, from the firmware's MCFG) reaches the NIC's function
 * without the 0xCF8/0xCFC ports: its 4 KiB page goes to the dummy page in EPT (the guest reads
 * zeros, a vendor id Linux takes for "no device"; writes are lost). An MCFG that does not
 * check out, or a page that cannot be hidden, gives up the NIC: never a NIC the guest can
 * reset under us. Bridges above the NIC are not write-protected yet. */
static int hide_ecam(const struct hvt_boot_info *bi)
{
    if (!bi->mcfg_len)
        return 0;                              /* no ECAM: the ports are the only way in */
    static struct mcfg_info m;
    int rc = bi->mcfg_len <= HVT_MCFG_MAX ? mcfg_parse(bi->mcfg, bi->mcfg_len, &m) : MCFG_E_LIMIT;
    if (rc) {
        hv_log("net: the firmware's MCFG does not check out (%d): giving up the NIC\n", rc);
        return -1;
    }
    struct mcfg_bdf nic = { 0, 0, 0, 0 };
    net_nic_bdf(&nic.bus, &nic.dev, &nic.fn);
    uint64_t page;
    if (!mcfg_function_page(&m, nic, &page)) {
        hv_log("net: ECAM (%u windows) does not cover the NIC's bus\n", m.n);
        return 0;
    }
    if (hv_ept_hide(page, MCFG_FUNC_SPACE)) {
        hv_log("net: cannot hide the NIC's ECAM page at %lx: giving up the NIC\n", page);
        return -1;
    }
    hv_log("net: NIC's ECAM page [%lx, %lx) hidden from the guest\n", page, page + MCFG_FUNC_SPACE);
    return 0;
}

int net_layer_init(struct hvt_boot_info *bi, struct hv_transport *t)
{
    size_t len = 0;
    while (len < HVT_NET_CONFIG_LEN && bi->net_config[len])
        len++;
    if (len == 0)
        return 0;                       /* no net configuration: no NIC is touched */
    struct net_config cfg;
    char err[160];
    if (net_config_parse(&cfg, bi->net_config, len, err, sizeof err) < 0) {
        hv_log("net: %s: running without a stream\n", err);
        return -1;
    }
    if (net_init(&cfg) < 0 || !net_active())
        return -1;
    uint64_t base, size;
    if (hide_ecam(bi))
        return -1;
    for (int i = 0; net_hidden_mmio(&base, &size, i) == 0; i++) {
        if (hv_ept_hide(base, size)) {
            hv_log("net: cannot hide the NIC's BAR at %lx: giving up the NIC\n", base);
            return -1;
        }
        hv_log("net: NIC BAR [%lx, %lx) hidden from the guest\n", base, base + size);
    }
    hv_io_register(NET_IO_PCI_FIRST, NET_IO_PCI_COUNT, layer_io);
    hv_io_register(NET_IO_COM1_DATA, 1, layer_io);
    hv_io_register(NET_IO_COM1_LCR, 1, layer_io);
    if (hv_exit_observe(layer_pre_exit, 0) || hv_on_power_off(layer_power_off) ||
        hv_on_fatal(layer_fatal))
        return -1;
    t->active = net_active;
    t->send = stream_send;
    t->link_failed = net_link_failed;
    t->set_ctl_handler = net_set_ctl_handler;
    return 0;
}
