/*
 * lwipopts.h - lwIP configuration for hvtrace's stream: NO_SYS (no threads: the hypervisor
 * polls from VM exits), raw API, IPv4 + ARP + ICMP (so the collector's host can ping us) + TCP,
 * one netif (the e1000). No DHCP/DNS/UDP: addressing is static from the boot configuration.
 * Sizes favour a fast one-way bulk stream: a large send buffer and queue, a small receive
 * window (only ACKs and control requests come back).
 */
#ifndef HVT_LWIPOPTS_H
#define HVT_LWIPOPTS_H

#define NO_SYS                     1
#define SYS_LIGHTWEIGHT_PROT       0   /* one CPU at a time under net.c's lock */
#define LWIP_SOCKET                0
#define LWIP_NETCONN               0
#define LWIP_ALTCP                 0
#define LWIP_TIMERS                1
#define LWIP_SINGLE_NETIF          1

#define LWIP_IPV4                  1
#define LWIP_IPV6                  0
#define LWIP_ARP                   1
#define LWIP_ETHERNET              1
#define LWIP_ICMP                  1
#define LWIP_RAW                   0
#define LWIP_UDP                   0
#define LWIP_TCP                   1
#define LWIP_DHCP                  0
#define LWIP_AUTOIP                0
#define LWIP_DNS                   0
#define LWIP_IGMP                  0
#define IP_REASSEMBLY              0
#define IP_FRAG                    0
#define LWIP_HAVE_LOOPIF           0
#define LWIP_NETIF_LOOPBACK        0
#define LWIP_NETIF_LINK_CALLBACK   0
#define LWIP_NETIF_STATUS_CALLBACK 0
#define ETHARP_SUPPORT_STATIC_ENTRIES 0

/* memory: lwIP's heap (PBUF_RAM, tcp_write copies) lives in pages from hv_alloc_pages */
#define MEM_LIBC_MALLOC            0
#define MEMP_MEM_MALLOC            0
#define MEM_ALIGNMENT              8
#define MEM_SIZE                   (768 * 1024)
#define LWIP_RAM_HEAP_POINTER      net_lwip_heap
extern unsigned char *net_lwip_heap;
#define MEMP_NUM_PBUF              64
#define MEMP_NUM_TCP_PCB           2
#define MEMP_NUM_TCP_PCB_LISTEN    1
#define MEMP_NUM_TCP_SEG           512
#define MEMP_NUM_SYS_TIMEOUT       8
#define PBUF_POOL_SIZE             128
#define PBUF_POOL_BUFSIZE          1536

/* TCP: 1460-byte segments, 256 KiB of unacknowledged data in flight at most */
#define TCP_MSS                    1460
#define TCP_WND                    (16 * TCP_MSS)
#define TCP_SND_BUF                (176 * TCP_MSS)
#define TCP_SND_QUEUELEN           (2 * TCP_SND_BUF / TCP_MSS)
#define TCP_SNDLOWAT               (16 * TCP_MSS)   /* lwIP: below 0xffff - 4 MSS */
#define TCP_OVERSIZE               TCP_MSS
#define TCP_QUEUE_OOSEQ            0
#define LWIP_TCP_KEEPALIVE         1   /* notice a silently vanished collector */
#define TCP_KEEPIDLE_DEFAULT       5000
#define TCP_KEEPINTVL_DEFAULT      1000
#define TCP_KEEPCNT_DEFAULT        5
#define LWIP_TCP_TIMESTAMPS        0
#define LWIP_WND_SCALE             1   /* 32-bit windows: a send buffer above 64 KiB */
#define TCP_RCV_SCALE              0

#define CHECKSUM_GEN_IP            1
#define CHECKSUM_GEN_TCP           1
#define CHECKSUM_CHECK_IP          1
#define CHECKSUM_CHECK_TCP         1
#define LWIP_CHECKSUM_ON_COPY      1

#define LWIP_STATS                 0
#define LWIP_DEBUG                 0
#define LWIP_ERRNO_STDINCLUDE      0
#define LWIP_PROVIDE_ERRNO         1

#endif
