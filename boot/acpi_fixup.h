/*
 * acpi_fixup.h - TEST-PLATFORM STEP: give Linux ACPI tables when the firmware has none.
 *
 * Why: OVMF builds its ACPI tables from QEMU's fw_cfg; under Bochs there is no fw_cfg, so the
 * firmware installs no tables at all, and Linux then sees a single CPU and cannot power off
 * (docs/platform-acpi.md). This is a property of the test machine, not of hvtrace: on real
 * hardware and under QEMU the firmware's tables are present and this step does nothing.
 *
 * Contract: acpi_fixup_run() runs on the BSP with boot services up.
 *  - If the system table holds an ACPI 2.0 or 1.0 configuration table, nothing is built; the
 *    PM1a/PM1b control ports are read from the firmware's FADT.
 *  - Else, if `enabled`, it builds RSDP/XSDT/FADT/MADT/DSDT (acpi_tables.h) for the PIIX4 PM
 *    block found on PCI 00:01.3, one local APIC per enabled CPU (APIC IDs from MP services,
 *    `mp` may be NULL: BSP only), and the I/O APIC at 0xFEC00000 (its ID read from the I/O
 *    APIC itself), in EfiACPIReclaimMemory below 4 GiB, and installs it with
 *    InstallConfigurationTable(ACPI 2.0 GUID).
 * It always fills *r (ports 0 = unknown) and prints one line saying what it did; it never
 * fails the boot.
 */
#ifndef HVT_ACPI_FIXUP_H
#define HVT_ACPI_FIXUP_H
#include <efi.h>
#include "efi_mp.h"

struct acpi_fixup_result {
    BOOLEAN firmware_tables;   /* the firmware had ACPI tables */
    BOOLEAN installed;         /* we installed ours */
    UINT32 cpus;               /* CPUs listed in our MADT */
    UINT16 pm1a_cnt_port, pm1b_cnt_port;
    const UINT8 *mcfg;         /* the firmware's MCFG (PCI Express ECAM), NULL if none */
    UINT32 mcfg_len;
};

void acpi_fixup_run(BOOLEAN enabled, hvt_efi_mp_services *mp, struct acpi_fixup_result *r);

#endif
