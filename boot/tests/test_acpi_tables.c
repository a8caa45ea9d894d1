/*
 * test_acpi_tables.c - host unit test of boot/acpi_tables.c: structure, pointers and
 * checksums of the generated RSDP/RSDT/XSDT/FADT/FACS/DSDT/MADT, and (when Debian's
 * acpica-tools is installed) a disassembly of every table by `iasl -d` with no errors.
 * Prints one line per failed check and a closing "N passed, N failed".
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "acpi_tables.h"
#include "check.h"


static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static uint16_t rd16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return v; }

static const uint64_t PHYS = 0x7f00000;   /* where the "firmware" put the buffer */
static _Alignas(64) uint8_t buf[ACPI_TABLES_BUF_SIZE];

static const uint8_t *at(uint64_t phys) { return buf + (phys - PHYS); }

static void platform_bochs(struct acpi_platform *p, uint32_t ncpu)
{
    memset(p, 0, sizeof *p);
    p->cpu_count = ncpu;
    for (uint32_t i = 0; i < ncpu; i++) p->apic_ids[i] = i;
    p->lapic_base = ACPI_LAPIC_DEFAULT_BASE;
    p->ioapic_id = (uint8_t)ncpu;
    p->ioapic_base = ACPI_IOAPIC_DEFAULT_BASE;
    p->pm1a_evt_port = 0xb000;
    p->pm1a_cnt_port = 0xb004;
    p->pm_tmr_port = 0xb008;
    p->sci_irq = 9;
    p->s5_slp_typ = 0;
}

static void check_table(const uint8_t *t, const char *sig)
{
    CHECK(memcmp(t, sig, 4) == 0, "signature %.4s != %s", (const char *)t, sig);
    CHECK(acpi_checksum(t, rd32(t + 4)) == 0, "%s checksum", sig);
}

static int dump_and_disassemble(const char *dir, const char *name, const uint8_t *t)
{
    char path[512], cmd[1200];
    snprintf(path, sizeof path, "%s/%s.dat", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    fwrite(t, 1, rd32(t + 4), f);
    fclose(f);
    /* iasl -d exits non-zero on errors; also reject any "Error" line in its output. */
    snprintf(cmd, sizeof cmd, "cd %s && iasl -d %s.dat > %s.log 2>&1 && ! grep -qi 'error [0-9]\\|[1-9][0-9]* Errors' %s.log",
             dir, name, name, name);
    int rc = system(cmd);
    if (rc != 0) {
        snprintf(cmd, sizeof cmd, "cat %s/%s.log", dir, name);
        if (system(cmd)) {}
    }
    return rc;
}

/* An XSDT/RSDT with the given entries, valid checksum. */
static size_t make_sdt(uint8_t *t, size_t cap, const char *sig, unsigned esz, const uint64_t *e, unsigned n)
{
    memset(t, 0xee, cap);
    memcpy(t, sig, 4);
    uint32_t len = 36 + esz * n;
    memcpy(t + 4, &len, 4);
    t[8] = 1;
    for (unsigned i = 0; i < n; i++)
        memcpy(t + 36 + esz * i, &e[i], esz);     /* little-endian host */
    t[9] = 0;
    t[9] = (uint8_t)(0u - acpi_checksum(t, len));
    return len;
}

/* acpi_sdt_remove: the DMAR leaves the guest's RSDT/XSDT, everything else stays in order. */
static void test_sdt_remove(void)
{
    static uint8_t t[256];
    const uint64_t x[4] = { 0x7fe10000ull, 0x17fe20000ull, 0x7fe30000ull, 0x17fe20000ull };
    make_sdt(t, sizeof t, "XSDT", 8, x, 4);
    CHECK(acpi_sdt_remove(t, sizeof t, 8, 0x17fe20000ull) == 2, "XSDT: both DMAR entries removed");
    CHECK(rd32(t + 4) == 36 + 16 && acpi_checksum(t, rd32(t + 4)) == 0, "XSDT: length %u, checksum", rd32(t + 4));
    CHECK(rd64(t + 36) == x[0] && rd64(t + 44) == x[2], "XSDT: others kept in order");
    CHECK(rd64(t + 52) == 0 && rd64(t + 60) == 0, "XSDT: freed tail zeroed");
    CHECK(acpi_sdt_remove(t, sizeof t, 8, 0x17fe20000ull) == 0 && rd32(t + 4) == 52, "XSDT: absent: nothing changes");
    const uint64_t r[3] = { 0x7fe10000ull, 0x7fe20000ull, 0x7fe30000ull };
    make_sdt(t, sizeof t, "RSDT", 4, r, 3);
    CHECK(acpi_sdt_remove(t, sizeof t, 4, 0x7fe30000ull) == 1, "RSDT: last entry removed");
    CHECK(rd32(t + 4) == 44 && acpi_checksum(t, 44) == 0 && rd32(t + 36) == r[0] && rd32(t + 40) == r[1],
          "RSDT: 2 entries left, checksum");
    /* Hostile headers change nothing. */
    size_t len = make_sdt(t, sizeof t, "XSDT", 8, x, 4);
    uint32_t bad = (uint32_t)len + 3;
    memcpy(t + 4, &bad, 4);
    CHECK(acpi_sdt_remove(t, sizeof t, 8, x[0]) == -1, "length not header + whole entries");
    bad = 300;
    memcpy(t + 4, &bad, 4);
    CHECK(acpi_sdt_remove(t, sizeof t, 8, x[0]) == -1, "length past the buffer");
    bad = 20;
    memcpy(t + 4, &bad, 4);
    CHECK(acpi_sdt_remove(t, sizeof t, 8, x[0]) == -1 && rd64(t + 36) == x[0], "length below the header");
    CHECK(acpi_sdt_remove(t, sizeof t, 6, x[0]) == -1, "entry size 6");
}

int main(void)
{
    struct acpi_platform p;
    struct acpi_tables_layout l;

    /* Argument checks. */
    platform_bochs(&p, 0);
    CHECK(acpi_tables_build(&p, buf, sizeof buf, PHYS, &l) == -1, "0 CPUs rejected");
    platform_bochs(&p, 2);
    CHECK(acpi_tables_build(&p, buf, 100, PHYS, &l) == -1, "small buffer rejected");
    CHECK(acpi_tables_build(&p, buf, sizeof buf, 0x100000000ull, &l) == -1, "buffer above 4 GiB rejected");
    CHECK(acpi_tables_build(&p, buf, sizeof buf, PHYS + 8, &l) == -1, "misaligned buffer rejected");

    /* Maximum CPUs fits in ACPI_TABLES_BUF_SIZE (with x2APIC IDs, the larger entries). */
    platform_bochs(&p, ACPI_MAX_CPUS);
    for (uint32_t i = 0; i < ACPI_MAX_CPUS; i++) p.apic_ids[i] = 0x100 + i;
    CHECK(acpi_tables_build(&p, buf, sizeof buf, PHYS, &l) == 0, "%d x2APIC CPUs fit", ACPI_MAX_CPUS);

    /* The Bochs platform with 2 CPUs. */
    platform_bochs(&p, 2);
    memset(buf, 0xcc, sizeof buf);
    CHECK(acpi_tables_build(&p, buf, sizeof buf, PHYS, &l) == 0, "build ok");
    CHECK(l.used <= sizeof buf, "used %zu", l.used);

    const uint8_t *rsdp = buf + l.rsdp;
    CHECK(memcmp(rsdp, "RSD PTR ", 8) == 0, "RSDP signature");
    CHECK((PHYS + l.rsdp) % 16 == 0, "RSDP 16-byte aligned");
    CHECK(acpi_checksum(rsdp, 20) == 0, "RSDP 1.0 checksum");
    CHECK(rsdp[15] == 2, "RSDP revision 2");
    CHECK(rd32(rsdp + 20) == 36, "RSDP length 36");
    CHECK(acpi_checksum(rsdp, 36) == 0, "RSDP extended checksum");

    const uint8_t *rsdt = at(rd32(rsdp + 16));
    const uint8_t *xsdt = at(rd64(rsdp + 24));
    check_table(rsdt, "RSDT");
    check_table(xsdt, "XSDT");
    CHECK(rd32(rsdt + 4) == 36 + 2 * 4, "RSDT has 2 entries");
    CHECK(rd32(xsdt + 4) == 36 + 2 * 8, "XSDT has 2 entries");
    CHECK(rd32(rsdt + 36) == rd64(xsdt + 36) && rd32(rsdt + 40) == rd64(xsdt + 44),
          "RSDT and XSDT agree");

    const uint8_t *fadt = at(rd64(xsdt + 36));
    const uint8_t *madt = at(rd64(xsdt + 44));
    check_table(fadt, "FACP");
    check_table(madt, "APIC");
    CHECK(rd32(fadt + 4) == 276 && fadt[8] == 6, "FADT 6.x length/revision");
    CHECK(rd16(fadt + 46) == 9, "SCI_INT 9");
    CHECK(rd32(fadt + 48) == 0, "SMI_CMD 0 (always in ACPI mode)");
    CHECK(rd32(fadt + 56) == 0xb000 && rd32(fadt + 64) == 0xb004 && rd32(fadt + 76) == 0xb008,
          "PM1a_EVT/PM1a_CNT/PM_TMR ports");
    CHECK(fadt[88] == 4 && fadt[89] == 2 && fadt[91] == 4, "PM block lengths");
    CHECK(rd64(fadt + 172 + 4) == 0xb004 && fadt[172] == 1 && fadt[173] == 16, "X_PM1a_CNT_BLK GAS");
    CHECK(rd64(fadt + 208 + 4) == 0xb008 && fadt[209] == 32, "X_PM_TMR_BLK GAS");
    CHECK(rd32(fadt + 40) == rd64(fadt + 140), "DSDT == X_DSDT");
    CHECK(rd32(fadt + 68) == 0 && rd32(fadt + 60) == 0, "no PM1b blocks");

    const uint8_t *facs = at(rd32(fadt + 36));
    CHECK(memcmp(facs, "FACS", 4) == 0 && rd32(facs + 4) == 64, "FACS");
    CHECK((PHYS + (uint64_t)(facs - buf)) % 64 == 0, "FACS 64-byte aligned");

    const uint8_t *dsdt = at(rd32(fadt + 40));
    check_table(dsdt, "DSDT");
    static const uint8_t s5[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0, 0, 0, 0 };
    CHECK(rd32(dsdt + 4) == 36 + sizeof s5 && memcmp(dsdt + 36, s5, sizeof s5) == 0,
          "DSDT is exactly Name(_S5, Package(4){0,0,0,0})");

    /* MADT entries. */
    CHECK(rd32(madt + 36) == ACPI_LAPIC_DEFAULT_BASE && rd32(madt + 40) == 1, "MADT LAPIC base/PCAT_COMPAT");
    unsigned n_lapic = 0, n_ioapic = 0, n_iso = 0, iso_pit = 0, iso_sci = 0;
    uint32_t end = rd32(madt + 4);
    for (uint32_t o = 44; o < end;) {
        const uint8_t *e = madt + o;
        CHECK(e[1] >= 2 && o + e[1] <= end, "MADT entry %u length %u", o, e[1]);
        if (e[1] < 2) break;
        if (e[0] == 0) {
            CHECK(e[1] == 8 && e[3] == n_lapic && e[2] == n_lapic && rd32(e + 4) == 1,
                  "LAPIC entry %u", n_lapic);
            n_lapic++;
        } else if (e[0] == 1) {
            CHECK(e[1] == 12 && e[2] == 2 && rd32(e + 4) == 0xfec00000 && rd32(e + 8) == 0,
                  "I/O APIC entry");
            n_ioapic++;
        } else if (e[0] == 2) {
            n_iso++;
            if (e[3] == 0) iso_pit = rd32(e + 4) == 2 && rd16(e + 8) == 0;
            if (e[3] == 9) iso_sci = rd32(e + 4) == 9 && rd16(e + 8) == 0xd;
        }
        o += e[1];
    }
    CHECK(n_lapic == 2 && n_ioapic == 1 && n_iso == 2, "MADT counts %u %u %u", n_lapic, n_ioapic, n_iso);
    CHECK(iso_pit, "IRQ0 -> GSI2 override");
    CHECK(iso_sci, "SCI IRQ9 level/active-high override");

    /* x2APIC IDs get type-9 entries. */
    platform_bochs(&p, 2);
    p.apic_ids[1] = 300;
    CHECK(acpi_tables_build(&p, buf, sizeof buf, PHYS, &l) == 0, "x2APIC build");
    madt = buf + l.madt;
    CHECK(madt[44] == 0 && madt[52] == 9 && madt[53] == 16 && rd32(madt + 56) == 300,
          "second CPU as Local x2APIC");
    CHECK(acpi_checksum(madt, rd32(madt + 4)) == 0, "x2APIC MADT checksum");

    /* A non-zero SLP_TYP is encoded with BytePrefix (QEMU's PIIX4 uses 0 too, other chipsets
     * do not). */
    platform_bochs(&p, 2);
    p.s5_slp_typ = 5;
    CHECK(acpi_tables_build(&p, buf, sizeof buf, PHYS, &l) == 0, "build with SLP_TYP 5");
    static const uint8_t s5b[] = { 0x08, '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0a, 5, 0x0a, 5, 0, 0 };
    dsdt = buf + l.dsdt;
    CHECK(rd32(dsdt + 4) == 36 + sizeof s5b && memcmp(dsdt + 36, s5b, sizeof s5b) == 0,
          "DSDT _S5 with BytePrefix-encoded SLP_TYP");
    CHECK(acpi_checksum(dsdt, rd32(dsdt + 4)) == 0, "DSDT checksum with SLP_TYP 5");

    /* iasl round trip on the 2-CPU Bochs tables. */
    platform_bochs(&p, 2);
    acpi_tables_build(&p, buf, sizeof buf, PHYS, &l);
    if (system("command -v iasl > /dev/null 2>&1") == 0) {
        char dir[] = "/tmp/hvt-acpi-XXXXXX";
        if (mkdtemp(dir)) {
            static const char *names[] = { "facp", "apic", "dsdt", "xsdt", "rsdt" };
            size_t offs[] = { l.fadt, l.madt, l.dsdt, l.xsdt, l.rsdt };
            for (int i = 0; i < 5; i++)
                CHECK(dump_and_disassemble(dir, names[i], buf + offs[i]) == 0, "iasl -d %s", names[i]);
            char cmd[600];
            snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
            if (system(cmd)) {}
        }
    } else {
        printf("note: iasl not installed (acpica-tools): disassembly check skipped\n");
    }

    test_sdt_remove();
    return check_summary("test_acpi_tables");
}
