/*
 * e1000_regs.h - the subset of the Intel 8254x (82540EM) programming interface hvtrace uses.
 * Section numbers refer to the "PCI/PCI-X Family of Gigabit Ethernet Controllers Software
 * Developer's Manual" (8254x SDM, rev. 4.0): 13.x register descriptions, 3.2/3.3 descriptors.
 */
#ifndef HVT_E1000_REGS_H
#define HVT_E1000_REGS_H

#define E1000_VENDOR_INTEL   0x8086u
#define E1000_DEV_82540EM    0x100eu   /* what Bochs (--enable-e1000) and QEMU emulate */

/* Register offsets in BAR0 (13.4) */
#define E1000_CTRL    0x00000u   /* 13.4.1 Device Control */
#define E1000_STATUS  0x00008u   /* 13.4.2 Device Status */
#define E1000_EERD    0x00014u   /* 13.4.4 EEPROM Read (82540EM) */
#define E1000_ICR     0x000c0u   /* 13.4.17 Interrupt Cause Read */
#define E1000_IMC     0x000d8u   /* 13.4.21 Interrupt Mask Clear */
#define E1000_RCTL    0x00100u   /* 13.4.22 Receive Control */
#define E1000_TCTL    0x00400u   /* 13.4.33 Transmit Control */
#define E1000_TIPG    0x00410u   /* 13.4.34 Transmit IPG */
#define E1000_RDBAL   0x02800u   /* 13.4.25-29 receive descriptor ring */
#define E1000_RDBAH   0x02804u
#define E1000_RDLEN   0x02808u
#define E1000_RDH     0x02810u
#define E1000_RDT     0x02818u
#define E1000_TDBAL   0x03800u   /* 13.4.36-40 transmit descriptor ring */
#define E1000_TDBAH   0x03804u
#define E1000_TDLEN   0x03808u
#define E1000_TDH     0x03810u
#define E1000_TDT     0x03818u
#define E1000_MTA     0x05200u   /* 13.5.1 Multicast Table Array, 128 dwords */
#define E1000_MTA_COUNT 128u
#define E1000_RAL0    0x05400u   /* 13.5.2 Receive Address Low/High */
#define E1000_RAH0    0x05404u

/* CTRL bits (13.4.1) */
#define E1000_CTRL_ASDE      (1u << 5)    /* auto-speed detection */
#define E1000_CTRL_SLU       (1u << 6)    /* set link up */
#define E1000_CTRL_RST       (1u << 26)   /* device reset, self-clearing */
#define E1000_CTRL_PHY_RST   (1u << 31)
/* STATUS bits (13.4.2) */
#define E1000_STATUS_LU      (1u << 1)    /* link up */
/* EERD (13.4.4, 82540EM layout) */
#define E1000_EERD_START     (1u << 0)
#define E1000_EERD_DONE      (1u << 4)
#define E1000_EERD_ADDR_SHIFT 8
#define E1000_EERD_DATA_SHIFT 16
#define E1000_EEPROM_MAC_WORD0 0          /* words 0-2: Ethernet address (5.6.1) */
/* RAH (13.5.2) */
#define E1000_RAH_AV         (1u << 31)   /* address valid */
/* RCTL bits (13.4.22) */
#define E1000_RCTL_EN        (1u << 1)
#define E1000_RCTL_BAM       (1u << 15)   /* accept broadcast (ARP requests) */
#define E1000_RCTL_BSIZE_2048 (0u << 16)  /* BSIZE 00 with BSEX 0: 2048-byte buffers */
#define E1000_RCTL_SECRC     (1u << 26)   /* strip the Ethernet CRC */
/* TCTL bits (13.4.33) */
#define E1000_TCTL_EN        (1u << 1)
#define E1000_TCTL_PSP       (1u << 3)    /* pad short packets */
#define E1000_TCTL_CT_SHIFT  4
#define E1000_TCTL_CT_DEFAULT 0x0fu       /* collision threshold, recommended 0Fh */
#define E1000_TCTL_COLD_SHIFT 12
#define E1000_TCTL_COLD_FD   0x40u        /* collision distance, full duplex: 40h */
/* TIPG recommended values for 802.3 copper (13.4.34): IPGT 10, IPGR1 8, IPGR2 6 */
#define E1000_TIPG_DEFAULT   (10u | 8u << 10 | 6u << 20)

/* Legacy receive descriptor (3.2.3) */
struct e1000_rx_desc {
    uint64_t addr;
    uint16_t length;
    uint16_t csum;
    uint8_t  status;
    uint8_t  errors;
    uint16_t special;
} __attribute__((packed));
#define E1000_RXD_STAT_DD    (1u << 0)    /* descriptor done */
#define E1000_RXD_STAT_EOP   (1u << 1)    /* end of packet */

/* Legacy transmit descriptor (3.3.3) */
struct e1000_tx_desc {
    uint64_t addr;
    uint16_t length;
    uint8_t  cso;
    uint8_t  cmd;
    uint8_t  status;
    uint8_t  css;
    uint16_t special;
} __attribute__((packed));
#define E1000_TXD_CMD_EOP    (1u << 0)    /* end of packet */
#define E1000_TXD_CMD_IFCS   (1u << 1)    /* insert FCS */
#define E1000_TXD_CMD_RS     (1u << 3)    /* report status (sets DD) */
#define E1000_TXD_STAT_DD    (1u << 0)

/* Ring lengths must be multiples of 128 bytes (13.4.27, 13.4.38). */
#define E1000_RING_ALIGN     128u

#endif
