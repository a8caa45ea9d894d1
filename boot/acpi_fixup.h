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
    const UINT8 *dmar;         /* the firmware's DMAR (Intel VT-d units), NULL if none */
    UINT32 dmar_len;
    UINT8 *rsdt, *xsdt;        /* the firmware's system description tables (NULL: none) */
};

void acpi_fixup_run(BOOLEAN enabled, hvt_efi_mp_services *mp, struct acpi_fixup_result *r);

/* The hypervisor owns the VT-d units (vmm/include/hv_dma.h): the guest must not find them.
 * acpi_fixup_hide_dmar() removes the DMAR from the firmware's RSDT and XSDT in place
 * (acpi_sdt_remove), keeping a copy of each; TRUE when no table lists it any more.
 * acpi_fixup_restore_dmar() puts the copies back (the hypervisor did not start: Linux then
 * boots untraced with its own IOMMU). Linux finds ACPI tables through the RSDP's XSDT (or
 * RSDT) only, so a table no longer listed there does not exist for it. */
BOOLEAN acpi_fixup_hide_dmar(struct acpi_fixup_result *r);
void acpi_fixup_restore_dmar(struct acpi_fixup_result *r);

/* The sleep states the hypervisor cannot survive (acpi_sleep.h): acpi_fixup_hide_sleep() finds
 * the DSDT (through the FADT of whichever tables are installed, the firmware's or ours) and
 * every SSDT, fills *sleep with what they define (before hiding) and renames \_S1_-\_S4_ in
 * place; prints one line. Run before the hypervisor starts; not undone if it then fails to
 * (Linux boots untraced without those states). */
#include "acpi_sleep.h"
void acpi_fixup_hide_sleep(struct acpi_sleep_info *sleep);

#endif
