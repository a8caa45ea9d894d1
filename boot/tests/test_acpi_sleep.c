/*
 * test_acpi_sleep.c - host unit test of acpi_sleep.c: the sleep states in QEMU's DSDTs (q35 and
 * pc, captured from QEMU 7.2: boot/tests/data/README.md) and in the test platform's own
 * (acpi_tables.c with \_S3), found with their SLP_TYP values, S1-S4 hidden with the checksum
 * right and \_S5 kept, and malformed or truncated blocks refused without reading past them.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acpi_sleep.h"
#include "acpi_tables.h"
#include "check.h"

static uint8_t *load(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) { printf("cannot open %s\n", path); exit(1); }
    static uint8_t buf[2][65536];
    static int k;
    uint8_t *b = buf[k++ & 1];
    *len = fread(b, 1, sizeof buf[0], f);
    fclose(f);
    return b;
}

static uint8_t sum(const uint8_t *t, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++) s = (uint8_t)(s + t[i]);
    return s;
}

static void qemu_dsdt(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s-DSDT.bin", dir, name);
    size_t len;
    uint8_t *t = load(path, &len);
    CHECK(sum(t, len) == 0, "%s: the captured DSDT's checksum holds", name);
    struct acpi_sleep_info in = { 0 };
    int n = acpi_sleep_scan(t, len, &in);
    CHECK(n == 3 && in.present == 0x38, "%s: S3, S4, S5 found (%d, present %#x)", name, n, in.present);
    CHECK(in.typ_a[3] == 1 && in.typ_b[3] == 1 && in.typ_a[4] == 2 && in.typ_b[4] == 2 &&
          in.typ_a[5] == 0 && in.typ_b[5] == 0, "%s: SLP_TYP S3 %u/%u S4 %u/%u S5 %u/%u", name,
          in.typ_a[3], in.typ_b[3], in.typ_a[4], in.typ_b[4], in.typ_a[5], in.typ_b[5]);
    int h = acpi_sleep_hide(t, len, ACPI_SLEEP_HIDE_MASK);
    struct acpi_sleep_info out = { 0 };
    acpi_sleep_scan(t, len, &out);
    CHECK(h == 2 && out.present == 0x20 && out.typ_a[5] == 0, "%s: S3 and S4 hidden, S5 kept (%d, %#x)",
          name, h, out.present);
    CHECK(sum(t, len) == 0, "%s: checksum right after hiding", name);
    CHECK(memmem(t, len, "XS3_", 4) && memmem(t, len, "XS4_", 4) && !memmem(t, len, "_S3_", 4),
          "%s: the names renamed", name);
    CHECK(acpi_sleep_hide(t, len, ACPI_SLEEP_HIDE_MASK) == 0, "%s: hiding twice renames nothing", name);
    /* Truncated copies: refused by the length check, or scanned without reading past. */
    unsigned bad = 0;
    for (size_t cut = 0; cut < len; cut += 97) {
        uint8_t *c = malloc(cut ? cut : 1);
        memcpy(c, t, cut);
        struct acpi_sleep_info x = { 0 };
        bad += acpi_sleep_scan(c, cut, &x) != -1;   /* the header's length is longer */
        free(c);
    }
    CHECK(bad == 0, "%s: %u truncated copies not refused", name, bad);
}

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "boot/tests/data";
    qemu_dsdt(dir, "q35");
    qemu_dsdt(dir, "pc");

    /* The test platform's tables (Bochs): \_S3 with PIIX4's type 1, \_S5 with 0. */
    static struct acpi_platform p;
    p.cpu_count = 1;
    p.lapic_base = ACPI_LAPIC_DEFAULT_BASE;
    p.ioapic_base = ACPI_IOAPIC_DEFAULT_BASE;
    p.pm1a_evt_port = 0xb000; p.pm1a_cnt_port = 0xb004; p.pm_tmr_port = 0xb008; p.sci_irq = 9;
    p.has_s3 = 1; p.s3_slp_typ = 1; p.s5_slp_typ = 0;
    static uint8_t buf[ACPI_TABLES_BUF_SIZE] __attribute__((aligned(64)));
    struct acpi_tables_layout l;
    CHECK(acpi_tables_build(&p, buf, sizeof buf, 0x7f000000, &l) == 0, "test platform tables built");
    uint8_t *dsdt = buf + l.dsdt;
    size_t dlen = (size_t)dsdt[4] | (size_t)dsdt[5] << 8;
    struct acpi_sleep_info in = { 0 };
    CHECK(acpi_sleep_scan(dsdt, dlen, &in) == 2 && in.present == 0x28 && in.typ_a[3] == 1 &&
          in.typ_a[5] == 0, "test platform: S3 (1) and S5 (0), present %#x", in.present);
    CHECK(acpi_sleep_hide(dsdt, dlen, ACPI_SLEEP_HIDE_MASK) == 1 && sum(dsdt, dlen) == 0,
          "test platform: S3 hidden, checksum right");

    /* Hand-made blocks: what is not a sleep package is left alone. */
    uint8_t t[64] = { 'S', 'S', 'D', 'T', 64 };
    static const uint8_t one_elem[] = { 0x08, '_', 'S', '3', '_', 0x12, 0x03, 0x01, 0x01 };
    static const uint8_t s6[] = { 0x08, '_', 'S', '6', '_', 0x12, 0x04, 0x02, 0x01, 0x01 };
    static const uint8_t root_word[] = { 0x08, '\\', '_', 'S', '1', '_', 0x12, 0x08, 0x02, 0x0b, 0x05, 0x00, 0x0a, 0x0d };
    memcpy(t + 36, one_elem, sizeof one_elem);
    struct acpi_sleep_info x = { 0 };
    CHECK(acpi_sleep_scan(t, sizeof t, &x) == 0 && acpi_sleep_hide(t, sizeof t, 0xff) == 0,
          "a package of one element is no sleep state");
    memset(t + 36, 0, 28);
    memcpy(t + 36, s6, sizeof s6);
    CHECK(acpi_sleep_scan(t, sizeof t, &x) == 0, "\\_S6_ is no sleep state");
    memset(t + 36, 0, 28);
    memcpy(t + 36, root_word, sizeof root_word);
    CHECK(acpi_sleep_scan(t, sizeof t, &x) == 1 && x.present == 0x02 && x.typ_a[1] == 5 && x.typ_b[1] == 5,
          "\\\\_S1_ with a root prefix, WordPrefix 5 and BytePrefix 13 (3 bits: 5): %#x %u %u",
          x.present, x.typ_a[1], x.typ_b[1]);
    /* The package running past the block: not read. */
    uint8_t short_t[36 + 8] = { 'S', 'S', 'D', 'T', 36 + 8 };
    memcpy(short_t + 36, root_word, 8);
    CHECK(acpi_sleep_scan(short_t, sizeof short_t, &x) == 0, "a package cut by the block's end is skipped");
    CHECK(acpi_sleep_scan(t, 20, &x) == -1, "a block shorter than its header: refused");
    return check_summary("test_acpi_sleep");
}
