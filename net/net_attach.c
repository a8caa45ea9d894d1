/*
 * net_attach.c - wiring net/ into the core in one call, for hv_entry_init() (after EPT is built,
 * before any CPU is virtualized):
 *
 *     net_attach(bi);
 *
 * It parses bi->net_config (empty: nothing happens, no NIC is touched), runs net_init, asks the
 * core to intercept the PCI configuration ports and COM1's data/LCR ports, maps every memory
 * BAR of the NIC to the core's dummy page in EPT (the way the core hides its own region: the
 * guest reads junk, never the device), and chains net's handlers in front of whatever hooks
 * were installed before (trace/ keeps working). Tested end to end in Bochs by tests/net/test-net.sh.
 * This file is the only one in net/ that knows the core's internals (hv_core.h, hv_hooks.h).
 */
#include "hv_core.h"
#include "hv_hooks.h"
#include "vmx_exit.h"
#include "mtrr.h"
#include "hvt_bootinfo.h"
#include "net.h"

/* vmm/hv_main.c: make accesses to [port, port + width) exit. */
void hv_io_intercept(uint16_t port, unsigned width);

#define NET_SHUTDOWN_MAX_TSC 20000000000ull   /* ~400 s of Bochs instructions at most */
#define NET_PAGE 4096ull

static struct hv_hooks prev;

static bool attach_io(struct guest_regs *g, uint16_t port, unsigned size, bool in)
{
    if (net_io_exit(port, size, in, &g->r[GPR_RAX])) {
        vmx_skip_instruction();
        return true;
    }
    return prev.io ? prev.io(g, port, size, in) : false;
}

static void attach_pre_exit(struct guest_regs *g, unsigned reason)
{
    net_poll();
    if (prev.pre_exit)
        prev.pre_exit(g, reason);
}

static void attach_power_off(void)
{
    if (prev.power_off)
        prev.power_off();             /* trace/ first: its last records go out with BYE */
    net_shutdown(NET_SHUTDOWN_MAX_TSC);
}

static void attach_fatal(const char *why)
{
    if (prev.fatal)
        prev.fatal(why);
    net_shutdown(NET_SHUTDOWN_MAX_TSC);
}

int net_attach(struct hvt_boot_info *bi)
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
    hv_io_intercept(NET_IO_PCI_FIRST, NET_IO_PCI_COUNT);
    hv_io_intercept(NET_IO_COM1_DATA, 1);
    hv_io_intercept(NET_IO_COM1_LCR, 1);
    uint64_t dummy = hv_virt_to_phys(hv.dummy_page), base, size;
    for (int i = 0; net_hidden_mmio(&base, &size, i) == 0; i++) {
        for (uint64_t pa = base & ~(NET_PAGE - 1); pa < base + size; pa += NET_PAGE)
            if (ept_map_4k(&hv.ept, pa, dummy, EPT_RWX, MTRR_WB)) {
                hv_log("net: cannot hide the NIC's BAR at %lx: giving up the NIC\n", pa);
                return -1;
            }
        hv_log("net: NIC BAR [%lx, %lx) hidden from the guest\n", base, base + size);
    }
    /* ECAM (only when the core told net_set_ecam() about an MCFG window; Bochs's i440fx has
     * none): the NIC's configuration page shows all ones, i.e. no device. Writable so a stray
     * guest write cannot fault the hypervisor; Linux writes only to devices it found. */
    uint64_t ecam_page;
    if (net_hidden_ecam(&ecam_page, 0) == 0) {
        uint8_t *ones = hv_alloc_pages(1);
        if (!ones || ept_map_4k(&hv.ept, ecam_page, hv_virt_to_phys(ones), EPT_READ | EPT_WRITE,
                                MTRR_WB)) {
            hv_log("net: cannot hide the NIC's ECAM page at %lx: giving up the NIC\n", ecam_page);
            return -1;
        }
        memset(ones, 0xff, NET_PAGE);
        hv_log("net: NIC ECAM page %lx hidden from the guest\n", ecam_page);
    }
    prev = hv_hooks;
    hv_hooks.io = attach_io;
    hv_hooks.pre_exit = attach_pre_exit;
    hv_hooks.power_off = attach_power_off;
    hv_hooks.fatal = attach_fatal;
    return 0;
}
