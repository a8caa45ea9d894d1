/*
 * e1000_regs.h - the subset of the Intel PRO/1000 programming interface hvtrace uses. The
 * common core is the 8254x's: section numbers without a title refer to the "PCI/PCI-X Family of
 * Gigabit Ethernet Controllers Software Developer's Manual" (8254x SDM, rev. 4.0): 13.x register
 * descriptions, 3.2/3.3 descriptors. The later parts keep those offsets and the legacy
 * descriptors for queue 0; what they add is below, named after the "Intel 82574 GbE Controller
 * Family Datasheet" (82574 DS), the "Intel 82576EB GbE Controller Datasheet" and "Intel Ethernet
 * Controller I210 Datasheet" (igb DS), and the PCH LAN parts' register set as the Linux e1000e
 * driver's ich8lan code programs it (no public I219 MAC datasheet describes it).
 */
#ifndef HVT_E1000_REGS_H
#define HVT_E1000_REGS_H

#define E1000_VENDOR_INTEL   0x8086u
#define E1000_DEV_82540EM    0x100eu   /* what Bochs (--enable-e1000) and QEMU's e1000 emulate */
#define E1000_DEV_82574L     0x10d3u   /* what QEMU's e1000e emulates (q35's default NIC) */
#define E1000_DEV_82576      0x10c9u   /* what QEMU 8.0's igb emulates */

/* Register offsets in BAR0 (13.4) */
#define E1000_CTRL    0x00000u   /* 13.4.1 Device Control */
#define E1000_STATUS  0x00008u   /* 13.4.2 Device Status */
#define E1000_EECD    0x00010u   /* 13.4.3 EEPROM/Flash Control */
#define E1000_EERD    0x00014u   /* 13.4.4 EEPROM Read (82540EM) */
#define E1000_CTRL_EXT 0x00018u  /* 13.4.6 Extended Device Control */
#define E1000_MDIC    0x00020u   /* 13.4.7 MDI Control: the PHY's registers */
#define E1000_EXTCNF_CTRL 0x00f00u  /* PCH LAN: extended configuration control (software flag) */
#define E1000_ICR     0x000c0u   /* 13.4.17 Interrupt Cause Read */
#define E1000_IMC     0x000d8u   /* 13.4.21 Interrupt Mask Clear */
#define E1000_EIMC    0x01528u   /* igb DS: Extended Interrupt Mask Clear */
#define E1000_RCTL    0x00100u   /* 13.4.22 Receive Control */
#define E1000_TCTL    0x00400u   /* 13.4.33 Transmit Control */
#define E1000_TIPG    0x00410u   /* 13.4.34 Transmit IPG */
#define E1000_RDBAL   0x02800u   /* 13.4.25-29 receive descriptor ring */
#define E1000_RDBAH   0x02804u
#define E1000_RDLEN   0x02808u
#define E1000_RDH     0x02810u
#define E1000_RDT     0x02818u
#define E1000_SRRCTL0 0x0280cu   /* igb DS: Split and Replication Receive Control, queue 0 */
#define E1000_RXDCTL0 0x02828u   /* 13.4.31 / igb DS: Receive Descriptor Control, queue 0 */
#define E1000_TDBAL   0x03800u   /* 13.4.36-40 transmit descriptor ring */
#define E1000_TDBAH   0x03804u
#define E1000_TDLEN   0x03808u
#define E1000_TDH     0x03810u
#define E1000_TDT     0x03818u
#define E1000_TXDCTL0 0x03828u   /* 13.4.42 / igb DS: Transmit Descriptor Control, queue 0 */
#define E1000_TARC0   0x03840u   /* 82574 DS: Transmit Arbitration Count, queue 0 */
#define E1000_MTA     0x05200u   /* 13.5.1 Multicast Table Array, 128 dwords */
#define E1000_MTA_COUNT 128u
#define E1000_RAL0    0x05400u   /* 13.5.2 Receive Address Low/High */
#define E1000_RAH0    0x05404u

/* CTRL bits (13.4.1) */
#define E1000_CTRL_GIO_MASTER_DISABLE (1u << 2)   /* 82574 DS CTRL: stop issuing PCIe requests */
#define E1000_CTRL_ASDE      (1u << 5)    /* auto-speed detection */
#define E1000_CTRL_SLU       (1u << 6)    /* set link up */
#define E1000_CTRL_RST       (1u << 26)   /* device reset, self-clearing */
#define E1000_CTRL_PHY_RST   (1u << 31)
/* STATUS bits (13.4.2) */
#define E1000_STATUS_LU      (1u << 1)    /* link up */
#define E1000_STATUS_LAN_INIT_DONE (1u << 9)   /* PCH LAN: NVM loaded after reset */
#define E1000_STATUS_GIO_MASTER_ENABLE (1u << 19)  /* 82574 DS STATUS: requests outstanding */
/* EECD (13.4.3; 82574 DS EECD): the NVM auto-read after reset is complete */
#define E1000_EECD_AUTO_RD   (1u << 9)
/* MDIC (13.4.7): data 15:0, PHY register 20:16, PHY address 25:21, op 27:26, ready, error */
#define E1000_MDIC_REG_SHIFT 16
#define E1000_MDIC_PHY_SHIFT 21
#define E1000_MDIC_OP_WRITE  (1u << 26)
#define E1000_MDIC_OP_READ   (2u << 26)
#define E1000_MDIC_READY     (1u << 28)
#define E1000_MDIC_ERROR     (1u << 30)
/* PHY registers (IEEE 802.3 clause 22, as the parts' datasheets list them) */
#define E1000_PHY_BMCR       0u           /* control */
#define E1000_PHY_BMSR       1u           /* status */
#define E1000_BMCR_ANRESTART (1u << 9)
#define E1000_BMCR_AUTOEN    (1u << 12)
#define E1000_BMSR_AN_COMP   (1u << 5)
/* CTRL_EXT (82574 DS / PCH LAN): force the MAC-PHY interconnect into SMBus mode */
#define E1000_CTRL_EXT_FORCE_SMBUS (1u << 11)
/* EXTCNF_CTRL (PCH LAN): software owns the PHY and NVM while set (hardware grants it) */
#define E1000_EXTCNF_CTRL_SWFLAG (1u << 5)
/* EERD (13.4.4, 82540EM layout) */
#define E1000_EERD_START     (1u << 0)
#define E1000_EERD_DONE      (1u << 4)
#define E1000_EERD_ADDR_SHIFT 8
#define E1000_EERD_DATA_SHIFT 16
/* EERD, 82574 DS and igb DS layout: DONE moves to bit 1, the word address starts at bit 2 */
#define E1000_EERD_DONE_PCIE  (1u << 1)
#define E1000_EERD_ADDR_SHIFT_PCIE 2
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
#define E1000_TCTL_CT_MASK   (0xffu << 4)
#define E1000_TCTL_COLD_MASK (0x3ffu << 12)
#define E1000_TCTL_RTLC      (1u << 24)   /* 82574 DS TCTL: retransmit on late collision */
#define E1000_TCTL_CT_DEFAULT 0x0fu       /* collision threshold, recommended 0Fh */
#define E1000_TCTL_COLD_SHIFT 12
#define E1000_TCTL_COLD_FD   0x40u        /* collision distance, full duplex: 40h */
/* TXDCTL (82574 DS TXDCTL): GRAN (thresholds count descriptors), bit 22 must be 1, WTHRESH */
#define E1000_TXDCTL_GRAN    (1u << 24)
#define E1000_TXDCTL_BIT22   (1u << 22)
#define E1000_TXDCTL_WTHRESH_MASK (0x3fu << 16)
#define E1000_TXDCTL_WTHRESH_1 (1u << 16)
/* RXDCTL/TXDCTL (igb DS): the queue runs only while ENABLE is set; it reads back 1 once it does */
#define E1000_XDCTL_ENABLE   (1u << 25)
/* SRRCTL (igb DS): buffer size in KiB units (bits 6:0); DESCTYPE (bits 27:25) 001 = advanced
 * descriptors, one buffer */
#define E1000_SRRCTL_BSIZEPKT_SHIFT 10
#define E1000_SRRCTL_BSIZEPKT_MASK 0x7fu
#define E1000_SRRCTL_DESCTYPE_MASK (7u << 25)
#define E1000_SRRCTL_DESCTYPE_ADV_ONEBUF (1u << 25)
/* TARC0 (82574 DS TARC): bit 10 enables the queue's arbitration (QEMU's e1000e only starts a
 * queue on a TCTL write when it is set) */
#define E1000_TARC_ENABLE    (1u << 10)
/* TIPG recommended values for 802.3 copper (13.4.34): IPGT 10, IPGR1 8, IPGR2 6 */
#define E1000_TIPG_DEFAULT   (10u | 8u << 10 | 6u << 20)
/* 82574 DS TIPG (and PCH LAN): IPGT 8 for copper, IPGR1 8, IPGR2 6 */
#define E1000_TIPG_PCIE      (8u | 8u << 10 | 6u << 20)
/* Collision distance, full duplex, of the PCIe parts (82574 DS TCTL: 3Fh) */
#define E1000_TCTL_COLD_FD_PCIE 0x3fu

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

/* Advanced receive descriptor, one buffer (igb DS "Advanced Receive Descriptors"): the driver
 * writes the read format; the part writes the write-back format over the whole descriptor, so
 * the buffer address is written again before each reuse. */
struct e1000_adv_rx_read {
    uint64_t pkt_addr;
    uint64_t hdr_addr;          /* bit 0 of it is DD in the write-back: 0 hands it over */
} __attribute__((packed));
struct e1000_adv_rx_wb {
    uint32_t info, rss;
    uint32_t status_error;      /* status bits 19:0, extended errors 31:20 */
    uint16_t length;
    uint16_t vlan;
} __attribute__((packed));
union e1000_adv_rx_desc {
    struct e1000_adv_rx_read read;
    struct e1000_adv_rx_wb wb;
};
#define E1000_ADVRXD_STAT_DD  (1u << 0)
#define E1000_ADVRXD_STAT_EOP (1u << 1)
/* frame errors: CRC (CE), symbol (SE), sequence (SEQ), carrier extension (CXE), RX data (RXE);
 * the checksum errors (IPE, TCPE) are left to the IP stack, which checks every checksum */
#define E1000_ADVRXD_ERR_FRAME (1u << 24 | 1u << 25 | 1u << 26 | 1u << 28 | 1u << 31)

/* Advanced transmit data descriptor (igb DS "Advanced Transmit Data Descriptor"); its
 * write-back sets DD in bit 0 of olinfo_status, the byte where the legacy one keeps status. */
struct e1000_adv_tx_desc {
    uint64_t addr;
    uint32_t cmd_type_len;      /* length 15:0, DTYP 23:20, DCMD 31:24 */
    uint32_t olinfo_status;     /* STA 3:0 (write-back), PAYLEN 31:14 */
} __attribute__((packed));
#define E1000_ADVTXD_DTYP_DATA (3u << 20)
#define E1000_ADVTXD_DCMD_EOP  (1u << 24)
#define E1000_ADVTXD_DCMD_IFCS (1u << 25)
#define E1000_ADVTXD_DCMD_RS   (1u << 27)
#define E1000_ADVTXD_DCMD_DEXT (1u << 29)
#define E1000_ADVTXD_PAYLEN_SHIFT 14
_Static_assert(sizeof(union e1000_adv_rx_desc) == sizeof(struct e1000_rx_desc), "rx desc");
_Static_assert(sizeof(struct e1000_adv_tx_desc) == sizeof(struct e1000_tx_desc), "tx desc");

/* Ring lengths must be multiples of 128 bytes (13.4.27, 13.4.38). */
#define E1000_RING_ALIGN     128u

#endif
