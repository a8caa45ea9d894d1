/*
 * pm1_sleep.h - what the hypervisor does with the guest's write to an ACPI PM1 control register.
 *
 * Writing SLP_EN (ACPI 6.4, 4.8.3.2.1 "PM1 Control Registers", bit 13) puts the machine into
 * the sleep state whose SLP_TYP (bits 12:10) the write carries. Power-off (S5) is the guest's
 * to ask for: the hypervisor ends the trace and lets it through. Every other state (S1-S4)
 * would lose the hypervisor (S3 and S4 power the CPUs down; the firmware resumes the OS
 * without it, its memory readable), so the write is dropped and said: the loader hid those
 * states from the guest (boot/acpi_sleep.h), so only a guest writing the register itself
 * gets here. Where the loader found no \_S5 in the DSDT the type is unknown and every
 * SLP_EN write is taken for power-off, as before the types were known.
 *
 * Contract: pm1_sleep_decide(val, s5_known, s5_typ) is pure (host-tested); s5_typ is \_S5's
 * SLP_TYPa for PM1a, SLP_TYPb for PM1b.
 */
#ifndef HVT_PM1_SLEEP_H
#define HVT_PM1_SLEEP_H
#include <stdbool.h>
#include <stdint.h>

#define ACPI_PM1_SLP_EN        (1u << 13)
#define ACPI_PM1_SLP_TYP(v)    (((v) >> 10) & 7u)

enum pm1_action { PM1_PASS, PM1_POWER_OFF, PM1_REFUSE };

static inline enum pm1_action pm1_sleep_decide(uint64_t val, bool s5_known, uint8_t s5_typ)
{
    if (!(val & ACPI_PM1_SLP_EN))
        return PM1_PASS;
    if (!s5_known || ACPI_PM1_SLP_TYP(val) == (s5_typ & 7u))
        return PM1_POWER_OFF;
    return PM1_REFUSE;
}

#endif
