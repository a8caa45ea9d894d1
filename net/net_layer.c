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
 * device), hides its ECAM page and protects the bridges above it, registers the NIC and its
 * DMA ranges with the IOMMU (hv_dma.h), and fills the transport table the image hands to the
 * policy. When it gives up the NIC the image runs without a stream: the policy's chunks go
 * to port 0xE9 (the serial fallback, trace/sink.c). Tested end to end in
 * Bochs by tests/net/test-net.sh. net_layer_selftest() runs the transport alone, without
 * VT-x, for an image that tests the NIC drivers (tests/net/test-net-qemu.sh). The only file of net/ that talks to vmm/'s registration API.
 */
#include "hv_api.h"
#include "hv_exit.h"
#include "hv_ept.h"
#include "hvt_bootinfo.h"
#include "net.h"
#include "pci_mcfg.h"
#include "hv_dma.h"
#include "pci.h"

#define NET_SHUTDOWN_MAX_TSC 20000000000ull   /* ~400 s of Bochs instructions at most */

static bool layer_io(struct guest_regs *g, uint16_t port, unsigned size, bool in)
{
    return net_io_exit(port, size, in, &g->r[GPR_RAX]);
}

/* The console is polled after the network (never under net's lock: its lock comes first). */
static void layer_pre_exit(struct guest_regs *g, unsigned reason)
{
    if (net_poll())
        net_console_poll();
}

/* Registered before the policy, so called after it (hv_exit.h): its last records are in
 * the ring before BYE. */
static void layer_power_off(void)
{
    net_console_flush();                /* the console's last bytes before BYE */
    net_shutdown(NET_SHUTDOWN_MAX_TSC);
}
static void layer_fatal(const char *why)
{
    net_console_poll();                 /* what the console has aged enough, as a poll would */
    net_fatal(why);
}

/* The guest's configuration accesses through the ports, for mcfg_path_bridges. */
static uint32_t cfg_read(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    return pci_cfg_read32((struct pci_addr){ bus, dev, fn }, (uint8_t)off);
}

/* The bridges between the root bus and the NIC: the guest must not renumber buses (the NIC
 * would move to a BDF nobody hides), move their windows, reset the secondary bus or disable
 * the link. Their writes through 0xCF8/0xCFC are dropped (net_hide.c) and, with ECAM, their
 * whole configuration page is read-only to the guest with writes dropped
 * (hv_ept_drop_writes; the choice is explained in pci_mcfg.h). A path that cannot be found,
 * or a page that cannot be protected, gives up the NIC. */
static int protect_bridges(const struct mcfg_info *m, struct mcfg_bdf nic)
{
    struct mcfg_bdf b[MCFG_MAX_BRIDGES];
    int n = mcfg_path_bridges(nic, cfg_read, NULL, b, MCFG_MAX_BRIDGES);
    if (n < 0) {
        hv_log("net: no bridge path from bus 0 to the NIC's bus %02x: giving up the NIC\n", nic.bus);
        return -1;
    }
    struct pci_addr pb[MCFG_MAX_BRIDGES];
    for (int i = 0; i < n; i++) {
        pb[i] = (struct pci_addr){ b[i].bus, b[i].dev, b[i].fn };
        uint64_t page;
        if (m && mcfg_function_page(m, b[i], &page)) {
            if (hv_ept_drop_writes(page, MCFG_FUNC_SPACE, NULL)) {
                hv_log("net: cannot make bridge %02x:%02x.%x's ECAM page read-only: giving up "
                       "the NIC\n", b[i].bus, b[i].dev, b[i].fn);
                return -1;
            }
            hv_log("net: bridge %02x:%02x.%x above the NIC: ECAM page [%lx, %lx) read-only to "
                   "the guest\n", b[i].bus, b[i].dev, b[i].fn, page, page + MCFG_FUNC_SPACE);
        } else {
            hv_log("net: bridge %02x:%02x.%x above the NIC: configuration writes dropped\n",
                   b[i].bus, b[i].dev, b[i].fn);
        }
    }
    net_pci_protect_bridges(pb, (unsigned)n);
    return 0;
}

/* PCI Express configuration space (ECAM, from the firmware's MCFG) reaches the NIC's function
 * without the 0xCF8/0xCFC ports: its 4 KiB page goes to the dummy page in EPT (the guest reads
 * zeros, a vendor id Linux takes for "no device"; writes are lost). An MCFG that does not
 * check out, or a page that cannot be hidden, gives up the NIC: never a NIC the guest can
 * reset under us. Then the bridges above it (protect_bridges). */
static struct mcfg_info mcfg;

/* Before the NIC is touched: a platform with ECAM whose MCFG does not check out could not
 * hide the NIC's configuration page, so the NIC is never brought up. */
static int check_mcfg(const struct hvt_boot_info *bi)
{
    if (!bi->mcfg_len)
        return 0;
    int rc = bi->mcfg_len <= HVT_MCFG_MAX ? mcfg_parse(bi->mcfg, bi->mcfg_len, &mcfg) : MCFG_E_LIMIT;
    if (rc) {
        hv_log("net: the platform has ECAM but its MCFG does not check out (%s): the NIC's "
               "configuration page could not be hidden: NIC not brought up (trace records go "
               "to port 0xE9)\n", mcfg_strerror(rc));
        return -1;
    }
    return 0;
}

static int hide_ecam(const struct hvt_boot_info *bi)
{
    struct mcfg_bdf nic = { 0, 0, 0, 0 };
    net_nic_bdf(&nic.bus, &nic.dev, &nic.fn);
    if (!bi->mcfg_len)
        return protect_bridges(NULL, nic);     /* no ECAM: the ports are the only way in */
    const struct mcfg_info *m = &mcfg;
    uint64_t page;
    if (!mcfg_function_page(m, nic, &page)) {
        hv_log("net: ECAM (%u windows) does not cover the NIC's bus\n", m->n);
        return protect_bridges(m, nic);
    }
    if (hv_ept_hide(page, MCFG_FUNC_SPACE)) {
        hv_log("net: the platform has ECAM and the NIC's page at %lx cannot be hidden: giving "
               "up the NIC\n", page);
        return -1;
    }
    hv_log("net: NIC's ECAM page [%lx, %lx) hidden from the guest\n", page, page + MCFG_FUNC_SPACE);
    return protect_bridges(m, nic);
}

/* With an IOMMU (vmm/include/hv_dma.h) the NIC reaches its rings and buffers only, and the
 * guest's devices never reach them. A NIC that cannot be registered would fault there. */
static int register_dma(void)
{
    uint8_t bus, dev, fn;
    net_nic_bdf(&bus, &dev, &fn);
    if (hv_dma_own_device(bus, dev, fn)) {
        hv_log("net: cannot register the NIC with the IOMMU: giving up the NIC\n");
        return -1;
    }
    uint64_t base, size;
    for (int i = 0; net_dma_range(&base, &size, i) == 0; i++)
        if (hv_dma_own_range(base, size)) {
            hv_log("net: cannot register the NIC's DMA range %lx: giving up the NIC\n", base);
            return -1;
        }
    return 0;
}

/* The loader's net text parsed: 1 (none: touch no NIC), 0, or -1 (logged). */
static int layer_config(struct hvt_boot_info *bi, struct net_config *cfg)
{
    size_t len = 0;
    while (len < HVT_NET_CONFIG_LEN && bi->net_config[len])
        len++;
    if (len == 0)
        return 1;
    char err[160];
    if (net_config_parse(cfg, bi->net_config, len, err, sizeof err) < 0) {
        hv_log("net: %s: running without a stream\n", err);
        return -1;
    }
    memcpy(cfg->cfg_sha256, bi->cfg_sha256, sizeof cfg->cfg_sha256);
    cfg->cfg_state = bi->cfg_state;
    return 0;
}

int net_layer_init(struct hvt_boot_info *bi, struct hv_transport *t)
{
    struct net_config cfg;
    int c = layer_config(bi, &cfg);
    if (c)
        return c > 0 ? 0 : -1;          /* no net configuration: no NIC is touched */
    if (check_mcfg(bi) || net_init(&cfg) < 0 || !net_active())
        return -1;
    uint64_t base, size;
    if (hide_ecam(bi) || register_dma())
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

/* The transport on its own, before (and without) any guest: the selftest load streamed and
 * acknowledged, then BYE, all by polling on this CPU. What the guest would see is not set up
 * (no EPT, no exits): nothing runs after this but the loader. */
int net_layer_selftest(struct hvt_boot_info *bi, uint64_t max_tsc)
{
    struct net_config cfg;
    if (layer_config(bi, &cfg))
        return -1;
    if (cfg.selftest_kb == 0) {
        hv_log("net: standalone run needs selftest_kb=N\n");
        return -1;
    }
    if (net_init(&cfg) < 0 || !net_active())
        return -1;
    uint64_t end = hv_rdtsc() + max_tsc;
    while (!net_selftest_finished() && hv_rdtsc() < end)
        net_poll();
    bool done = net_selftest_finished();
    hv_log("net: standalone selftest %s\n", done ? "finished" : "did NOT finish in time");
    net_shutdown(max_tsc);
    return done ? 0 : -1;
}
