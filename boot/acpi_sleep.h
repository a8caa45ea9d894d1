/*
 * acpi_sleep.h - the firmware's sleep states, as its AML names them, and hiding the ones the
 * hypervisor cannot survive.
 *
 * Why: a machine that enters S3 (suspend to RAM) or S4 (hibernation through the firmware)
 * loses the hypervisor: VMX operation and every CPU's state are gone, and on resume the
 * firmware jumps to the OS's waking vector with the guest running bare and the hypervisor's
 * memory readable. So the loader hides \_S1_ to \_S4_ from the guest (Linux then offers no
 * such state: no "deep" in /sys/power/mem_sleep, no ACPI platform hibernation), and gives the
 * hypervisor \_S5_'s SLP_TYP values: a PM1 control write with SLP_EN and any other sleep type
 * is refused there (vmm/pm1_sleep.h), whoever makes it.
 *
 * The AML form (ACPI 6.4, 7.4.2 "\_Sx (System States)" and 20.2 "AML Grammar Definition"):
 * NameOp (0x08) [RootChar '\'] NameSeg "_Sx_" PackageOp (0x12) PkgLength NumElements, then
 * SLP_TYPa and SLP_TYPb as data objects (ZeroOp, OneOp, OnesOp, or Byte/Word/DWord prefix and
 * value). A state is "present" when its package is found in the DSDT or an SSDT.
 *
 * Contract: pure (no I/O, no allocation), host-tested on QEMU's and the test platform's tables.
 *  - acpi_sleep_scan(table, len, info) reads one definition block (header included) and adds
 *    what it finds to *info (call it for the DSDT and every SSDT); returns how many \_Sx_
 *    packages it found, -1 for a block too short or whose length field exceeds len.
 *  - acpi_sleep_hide(table, len, mask) renames the NameSeg of every \_Sx_ package whose bit
 *    x is set in mask to "XSx_" (so the name no longer resolves) and recomputes the block's
 *    checksum; returns how many it renamed, -1 as above.
 */
#ifndef HVT_ACPI_SLEEP_H
#define HVT_ACPI_SLEEP_H
#include <stddef.h>
#include <stdint.h>

#define ACPI_SLEEP_STATES 6                 /* \_S0_ .. \_S5_ */
#define ACPI_SLEEP_HIDE_MASK 0x1eu          /* S1-S4: what the hypervisor cannot survive */

struct acpi_sleep_info {
    uint8_t present;                        /* bit x: \_Sx_ found */
    uint8_t typ_a[ACPI_SLEEP_STATES];       /* its SLP_TYPa (3 bits), where present */
    uint8_t typ_b[ACPI_SLEEP_STATES];       /* its SLP_TYPb */
};

int acpi_sleep_scan(const uint8_t *table, size_t len, struct acpi_sleep_info *info);
int acpi_sleep_hide(uint8_t *table, size_t len, uint8_t mask);

#endif
