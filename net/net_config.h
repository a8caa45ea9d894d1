/*
 * net_config.h - the network part of the boot configuration: a key=value string the loader
 * passes through unchanged (separators: space, tab, comma, semicolon, newline).
 *
 *   net=on|off             default on (off: the hypervisor never touches a NIC)
 *   nic=auto | BB:DD.F | aa:bb:cc:dd:ee:ff
 *                          which NIC to take: auto = the first supported Intel PRO/1000 id
 *                          (net/e1000_models.c's table) found by bus scan, in bus, device,
 *                          function order; a PCI address (hex; it must hold a supported id);
 *                          or the MAC address in the NIC's receive address registers
 *   ip=A.B.C.D             own address        default 10.0.2.15 (Bochs/QEMU slirp's guest)
 *   netmask=A.B.C.D        default 255.255.255.0
 *   gw=A.B.C.D             default 10.0.2.2 (slirp's host alias)
 *   collector=A.B.C.D:PORT default 10.0.2.2:7207 (HVT_STREAM_DEFAULT_PORT)
 *   key=HEX                control key, 16..64 bytes in hex; absent: control refused
 *   auth=on|off            with a key: tag every stream message in both directions (default
 *                          on; off: no tags and no encryption, only control messages are
 *                          authenticated)
 *   encrypt=on|off         with a key and auth on: also encrypt payloads (default on)
 *   overflow=block|drop    full ring: wait (default, lossless) or drop and count (HVT_MSG_LOSS)
 *   link_timeout_ms=N      overflow=block waits at most this long without the collector
 *                          freeing any ring space (ACKs); then the link has failed: sends are
 *                          dropped and counted (HVT_MSG_LOSS, reason LINK) until space frees
 *                          up again, and tracing stops (reason LINK). Default 60000; 0 = wait
 *                          for ever (a dead collector then stalls the guest for good)
 *   ring_kb=N              send ring size in KiB, rounded up to a power of two: 2048 (it must
 *                          hold the largest message, HVT_STREAM_MAX_PAYLOAD) to 262144; 4096 by
 *                          default
 *   selftest_kb=N          after connecting, stream N KiB of filler TRACE batches (format
 *                          HVT_TRACE_FORMAT_FILLER): the end-to-end test and benchmark load
 *   tsc_khz=N              TSC rate for lwIP's clock (0 = from CPUID 15h/16h; Bochs: its ips/1000,
 *                          because there the TSC counts instructions: docs/references.md)
 * Unknown keys are kept aside (first one in cfg->unknown) so the caller can warn; malformed
 * values are errors with a message. Portable: built for the hypervisor and the host tests.
 */
#ifndef HVT_NET_CONFIG_H
#define HVT_NET_CONFIG_H
#include "net_port.h"
#include "ctl.h"

#define NET_DEFAULT_LINK_TIMEOUT_MS 60000u   /* a collector restart must fit (test-net) */

enum net_nic_sel { NET_NIC_AUTO, NET_NIC_PCI, NET_NIC_MAC };

struct net_config {
    bool     enabled;
    enum net_nic_sel nic_sel;
    uint8_t  pci_bus, pci_dev, pci_fn;
    uint8_t  mac[6];
    uint8_t  ip[4], netmask[4], gw[4], collector_ip[4];
    uint16_t collector_port;
    struct ctl_key key;
    bool     auth, encrypt;
    bool     overflow_drop;
    uint32_t link_timeout_ms;
    uint32_t ring_kb;
    uint32_t tsc_khz;
    uint32_t selftest_kb;
    unsigned unknown_count;
    char     unknown[32];          /* first unknown key (truncated) */
    /* Not from the string: what the loader verified of its configuration file (boot info),
     * sent in HELLO so the collector can show and pin it. */
    uint8_t  cfg_sha256[32];
    uint32_t cfg_state;            /* HVT_CFG_* of hvt_bootinfo.h */
};

void net_config_defaults(struct net_config *cfg);
/* Defaults, then the string's settings. 0, or -1 with a message in err. */
int  net_config_parse(struct net_config *cfg, const char *text, size_t len, char *err,
                      size_t errlen);

#endif
