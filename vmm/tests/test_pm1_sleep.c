/*
 * test_pm1_sleep.c - host unit test of pm1_sleep_decide (vmm/pm1_sleep.h): every 16-bit PM1
 * control value under QEMU's sleep types (S3 1, S4 2, S5 0), a platform whose S5 is type 7,
 * and an unknown S5.
 */
#include <stdio.h>
#include "pm1_sleep.h"
#include "check.h"

int main(void)
{
    unsigned bad = 0, refused = 0, off = 0;
    for (uint32_t v = 0; v < 0x10000; v++) {
        enum pm1_action a = pm1_sleep_decide(v, true, 0);
        enum pm1_action want = !(v & ACPI_PM1_SLP_EN) ? PM1_PASS :
                               ((v >> 10) & 7) == 0 ? PM1_POWER_OFF : PM1_REFUSE;
        bad += a != want;
        refused += a == PM1_REFUSE;
        off += a == PM1_POWER_OFF;
    }
    CHECK(bad == 0, "S5 = 0: %u of 65536 values decided wrong", bad);
    CHECK(off == 0x8000 / 8 && refused == 0x8000 / 8 * 7, "power-off %u, refused %u", off, refused);
    CHECK(pm1_sleep_decide(ACPI_PM1_SLP_EN | 1u << 10, true, 0) == PM1_REFUSE, "S3 (type 1) refused");
    CHECK(pm1_sleep_decide(ACPI_PM1_SLP_EN | 2u << 10, true, 0) == PM1_REFUSE, "S4 (type 2) refused");
    CHECK(pm1_sleep_decide(ACPI_PM1_SLP_EN | 7u << 10, true, 7) == PM1_POWER_OFF, "S5 of type 7");
    CHECK(pm1_sleep_decide(ACPI_PM1_SLP_EN, true, 7) == PM1_REFUSE, "type 0 where S5 is 7: refused");
    CHECK(pm1_sleep_decide(1u << 10, true, 0) == PM1_PASS, "SLP_TYP without SLP_EN: passed");
    CHECK(pm1_sleep_decide(ACPI_PM1_SLP_EN | 1u << 10, false, 0) == PM1_POWER_OFF,
          "S5 unknown: every SLP_EN is power-off");
    return check_summary("test_pm1_sleep");
}
