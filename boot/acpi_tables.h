/*
 * acpi_tables.h - build a minimal ACPI table set for a PC whose firmware provides none
 * (OVMF under Bochs: see docs/platform-acpi.md).
 *
 * Contract: acpi_tables_build() is a pure function. Given a description of the platform
 * (CPUs' local APIC IDs, the I/O APIC, the PIIX4-style PM block) it writes, into the
 * caller's buffer, which will live at physical address buf_phys (below 4 GiB, 16-byte
 * aligned):
 *   RSDP 2.0 (ACPI 6.3 5.2.5.3) -> RSDT + XSDT (5.2.7, 5.2.8) -> FADT (5.2.9) -> FACS
 *   (5.2.10) and DSDT (5.2.11.1); the RSDT/XSDT also list the MADT (5.2.12).
 * Every table carries a valid checksum. The DSDT defines \_S5 (7.4.2), whose SLP_TYPa is
 * p->s5_slp_typ, and \_S3 before it where p->has_s3 (SLP_TYPa p->s3_slp_typ). The result gives the offset of the RSDP (what goes into the EFI
 * configuration table) and of each table. No allocation, no I/O, no libc: unit-tested on the
 * host (boot/tests/test_acpi_tables.c).
 * Returns 0 on success, -1 if the buffer is too small or an argument is out of range
 * (no CPU, more than ACPI_MAX_CPUS, buffer at or above 4 GiB, misaligned).
 */
#ifndef HVT_ACPI_TABLES_H
#define HVT_ACPI_TABLES_H
#include <stddef.h>
#include <stdint.h>

#define ACPI_MAX_CPUS          256
#define ACPI_TABLES_BUF_SIZE   8192u   /* always enough for ACPI_MAX_CPUS */

/* Well-known PC addresses (Intel SDM vol. 3, 10.4.1; 82093AA I/O APIC datasheet). */
#define ACPI_LAPIC_DEFAULT_BASE   0xfee00000u
#define ACPI_IOAPIC_DEFAULT_BASE  0xfec00000u

struct acpi_platform {
    uint32_t cpu_count;
    uint32_t apic_ids[ACPI_MAX_CPUS];  /* local APIC ID of CPU i; the BSP first */
    uint32_t lapic_base;
    uint8_t  ioapic_id;
    uint32_t ioapic_base;
    uint32_t ioapic_gsi_base;
    uint16_t pm1a_evt_port;            /* PM1a event block, 4 bytes (status + enable) */
    uint16_t pm1a_cnt_port;            /* PM1a control block, 2 bytes */
    uint16_t pm_tmr_port;              /* PM timer, 4 bytes, 24-bit counter */
    uint16_t sci_irq;                  /* ISA IRQ of the SCI (level, active high) */
    uint32_t smi_cmd;                  /* 0: the chipset is always in ACPI mode */
    uint8_t  s5_slp_typ;               /* SLP_TYP value that means "soft off" (S5) */
    uint8_t  has_s3;                   /* also define \_S3 (suspend to RAM), as PC firmware does */
    uint8_t  s3_slp_typ;               /* its SLP_TYP value */
};

struct acpi_tables_layout {
    size_t used;                       /* bytes of the buffer used */
    size_t rsdp, rsdt, xsdt, fadt, facs, dsdt, madt;   /* offsets into the buffer */
};

int acpi_tables_build(const struct acpi_platform *p, void *buf, size_t cap, uint64_t buf_phys,
                      struct acpi_tables_layout *out);

/* Remove every entry that points at table_addr from an RSDT (entry_size 4) or XSDT (8)
 * (ACPI 6.3 5.2.7, 5.2.8) held in sdt[0..cap): later entries move down, the length shrinks
 * and the checksum is made valid again. Returns the entries removed, or -1 when the header's
 * length is below the header, past cap or not header + whole entries (nothing is changed). */
int acpi_sdt_remove(uint8_t *sdt, size_t cap, unsigned entry_size, uint64_t table_addr);

/* Sum of bytes mod 256; a valid table sums to 0 (5.2.6). Exposed for tests. */
uint8_t acpi_checksum(const void *data, size_t len);

#endif
