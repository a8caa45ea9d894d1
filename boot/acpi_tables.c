/*
 * acpi_tables.c - minimal ACPI tables for OVMF-on-Bochs (see acpi_tables.h).
 * Section numbers refer to the ACPI Specification 6.3. Table layouts are packed structs
 * whose sizes are checked at compile time against the spec.
 */
#include "acpi_tables.h"

#define ACPI_OEM_ID        "HVTRCE"      /* 6 bytes */
#define ACPI_OEM_TABLE_ID  "HVTPLAT "    /* 8 bytes */
#define ACPI_OEM_REVISION  1u
#define ACPI_CREATOR_ID    "HVTR"
#define ACPI_CREATOR_REV   1u

/* Table revisions (the ones defined by ACPI 6.3). */
#define ACPI_RSDP_REVISION  2   /* 5.2.5.3: 2 = ACPI 2.0+ RSDP with XSDT */
#define ACPI_RSDT_REVISION  1
#define ACPI_XSDT_REVISION  1
#define ACPI_FADT_REVISION  6   /* 5.2.9: major version 6 ... */
#define ACPI_FADT_MINOR     3   /* ... minor version 3 */
#define ACPI_MADT_REVISION  5
#define ACPI_DSDT_REVISION  2   /* >= 2: AML integers are 64-bit (5.2.11.1) */
#define ACPI_FACS_VERSION   2

/* 5.2.9, table 5-34: fixed feature flags. */
#define FADT_F_WBINVD        (1u << 0)
#define FADT_F_PROC_C1       (1u << 2)
#define FADT_F_PWR_BUTTON    (1u << 4)   /* set: no fixed-hardware power button */
#define FADT_F_SLP_BUTTON    (1u << 5)   /* set: no fixed-hardware sleep button */
#define FADT_F_RESET_REG_SUP (1u << 10)
/* 5.2.9.3, table 5-35: IA-PC boot architecture flags. */
#define FADT_BOOT_LEGACY_DEVICES (1u << 0)
#define FADT_BOOT_8042           (1u << 1)
/* 5.2.9: P_LVL2_LAT > 100 and P_LVL3_LAT > 1000 mean "C2/C3 not supported". */
#define FADT_NO_C2_LATENCY   101u
#define FADT_NO_C3_LATENCY   1001u
/* PIIX3/4 reset control register (as in QEMU's and SeaBIOS's FADT): write 6 to 0xCF9. */
#define FADT_RESET_PORT      0xcf9u
#define FADT_RESET_VALUE     0x06u
/* Register block lengths of a PIIX4 PM block (5.2.9; PIIX4 datasheet 7.2). */
#define FADT_PM1_EVT_LEN     4u
#define FADT_PM1_CNT_LEN     2u
#define FADT_PM_TMR_LEN      4u

/* 5.2.3.2, table 5-25: Generic Address Structure. */
#define GAS_SPACE_SYSTEM_IO  1u
#define GAS_ACCESS_BYTE      1u
#define GAS_ACCESS_WORD      2u
#define GAS_ACCESS_DWORD     3u

/* 5.2.12, table 5-43/5-44: MADT flags and structure types. */
#define MADT_F_PCAT_COMPAT        (1u << 0)  /* dual 8259s present (Bochs has them) */
#define MADT_TYPE_LOCAL_APIC      0u
#define MADT_TYPE_IO_APIC         1u
#define MADT_TYPE_INT_OVERRIDE    2u
#define MADT_TYPE_LOCAL_X2APIC    9u
#define MADT_LAPIC_ENABLED        (1u << 0)
#define MADT_XAPIC_MAX_ID         0xfeu      /* 0xff is the broadcast ID: use x2APIC entries */
/* 5.2.12.5, table 5-51: MPS INTI flags. */
#define MPS_INTI_POLARITY_CONFORMS   0x0u
#define MPS_INTI_POLARITY_HIGH       0x1u
#define MPS_INTI_TRIGGER_CONFORMS    (0x0u << 2)
#define MPS_INTI_TRIGGER_LEVEL       (0x3u << 2)
#define ISA_BUS                      0u
#define ISA_IRQ_PIT                  0u
#define IOAPIC_PIN_PIT               2u  /* the PIT is wired to I/O APIC pin 2 on PCs */

/* AML opcodes (20.2.5) used by the DSDT's \_S5 object. */
#define AML_NAME_OP      0x08u
#define AML_PACKAGE_OP   0x12u
#define AML_ZERO_OP      0x00u
#define AML_BYTE_PREFIX  0x0au
#define ACPI_S5_ELEMENTS 4u     /* SLP_TYPa, SLP_TYPb, two reserved (as ACPI BIOSes emit) */

#define ACPI_RSDP_ALIGN  16u    /* 5.2.5.1: the RSDP sits on a 16-byte boundary */
#define ACPI_FACS_ALIGN  64u    /* 5.2.10: the FACS is 64-byte aligned */
#define ACPI_TABLE_ALIGN 16u
#define ACPI_RSDP_V1_LEN 20u    /* the ACPI 1.0 checksum covers only the first 20 bytes */
#define ACPI_4GIB        0x100000000ull

struct __attribute__((packed)) acpi_header {          /* 5.2.6, table 5-29 */
    char signature[4];
    uint32_t length;
    uint8_t revision, checksum;
    char oem_id[6], oem_table_id[8];
    uint32_t oem_revision;
    char creator_id[4];
    uint32_t creator_revision;
};

struct __attribute__((packed)) acpi_rsdp {             /* 5.2.5.3, table 5-27 */
    char signature[8];
    uint8_t checksum;
    char oem_id[6];
    uint8_t revision;
    uint32_t rsdt_address;
    uint32_t length;
    uint64_t xsdt_address;
    uint8_t extended_checksum, reserved[3];
};

struct __attribute__((packed)) acpi_gas {              /* 5.2.3.2 */
    uint8_t space_id, bit_width, bit_offset, access_size;
    uint64_t address;
};

struct __attribute__((packed)) acpi_fadt {             /* 5.2.9, table 5-33 */
    struct acpi_header h;
    uint32_t firmware_ctrl, dsdt;
    uint8_t reserved0, preferred_pm_profile;
    uint16_t sci_int;
    uint32_t smi_cmd;
    uint8_t acpi_enable, acpi_disable, s4bios_req, pstate_cnt;
    uint32_t pm1a_evt_blk, pm1b_evt_blk, pm1a_cnt_blk, pm1b_cnt_blk, pm2_cnt_blk, pm_tmr_blk;
    uint32_t gpe0_blk, gpe1_blk;
    uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len, gpe0_blk_len, gpe1_blk_len;
    uint8_t gpe1_base, cst_cnt;
    uint16_t p_lvl2_lat, p_lvl3_lat, flush_size, flush_stride;
    uint8_t duty_offset, duty_width, day_alrm, mon_alrm, century;
    uint16_t iapc_boot_arch;
    uint8_t reserved1;
    uint32_t flags;
    struct acpi_gas reset_reg;
    uint8_t reset_value;
    uint16_t arm_boot_arch;
    uint8_t fadt_minor_version;
    uint64_t x_firmware_ctrl, x_dsdt;
    struct acpi_gas x_pm1a_evt_blk, x_pm1b_evt_blk, x_pm1a_cnt_blk, x_pm1b_cnt_blk;
    struct acpi_gas x_pm2_cnt_blk, x_pm_tmr_blk, x_gpe0_blk, x_gpe1_blk;
    struct acpi_gas sleep_control_reg, sleep_status_reg;
    uint64_t hypervisor_vendor_identity;
};

struct __attribute__((packed)) acpi_facs {             /* 5.2.10, table 5-37 */
    char signature[4];
    uint32_t length, hardware_signature, firmware_waking_vector, global_lock, flags;
    uint64_t x_firmware_waking_vector;
    uint8_t version, reserved0[3];
    uint32_t ospm_flags;
    uint8_t reserved1[24];
};

struct __attribute__((packed)) acpi_madt {             /* 5.2.12, table 5-43 */
    struct acpi_header h;
    uint32_t local_apic_address, flags;
};

struct __attribute__((packed)) madt_local_apic {       /* 5.2.12.2, table 5-45 */
    uint8_t type, length, processor_uid, apic_id;
    uint32_t flags;
};

struct __attribute__((packed)) madt_local_x2apic {     /* 5.2.12.12, table 5-61 */
    uint8_t type, length;
    uint16_t reserved;
    uint32_t x2apic_id, flags, processor_uid;
};

struct __attribute__((packed)) madt_io_apic {          /* 5.2.12.3, table 5-46 */
    uint8_t type, length, io_apic_id, reserved;
    uint32_t address, gsi_base;
};

struct __attribute__((packed)) madt_int_override {     /* 5.2.12.5, table 5-47 */
    uint8_t type, length, bus, source;
    uint32_t gsi;
    uint16_t flags;
};

_Static_assert(sizeof(struct acpi_header) == 36, "ACPI header is 36 bytes");
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP 2.0 is 36 bytes");
_Static_assert(sizeof(struct acpi_gas) == 12, "GAS is 12 bytes");
_Static_assert(sizeof(struct acpi_fadt) == 276, "ACPI 6.x FADT is 276 bytes");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT Flags at 112");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT at 140");
_Static_assert(offsetof(struct acpi_fadt, x_pm_tmr_blk) == 208, "FADT X_PM_TMR_BLK at 208");
_Static_assert(sizeof(struct acpi_facs) == 64, "FACS is 64 bytes");
_Static_assert(sizeof(struct acpi_madt) == 44, "MADT fixed part is 44 bytes");
_Static_assert(sizeof(struct madt_local_apic) == 8, "Local APIC entry is 8 bytes");
_Static_assert(sizeof(struct madt_local_x2apic) == 16, "Local x2APIC entry is 16 bytes");
_Static_assert(sizeof(struct madt_io_apic) == 12, "I/O APIC entry is 12 bytes");
_Static_assert(sizeof(struct madt_int_override) == 10, "Interrupt override entry is 10 bytes");

static void acpi_zero(void *p, size_t n) { uint8_t *b = p; while (n--) *b++ = 0; }
static void acpi_put(char *dst, const char *src, size_t n) { while (n--) *dst++ = *src++; }
static size_t acpi_align(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

uint8_t acpi_checksum(const void *data, size_t len)
{
    const uint8_t *b = data;
    uint8_t sum = 0;
    while (len--) sum = (uint8_t)(sum + *b++);
    return sum;
}

#define SDT_HDR_LEN      36u
#define SDT_OFF_LENGTH   4u
#define SDT_OFF_CHECKSUM 9u

static uint64_t sdt_entry(const uint8_t *e, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = size; i-- > 0;)
        v = v << 8 | e[i];
    return v;
}

int acpi_sdt_remove(uint8_t *sdt, size_t cap, unsigned entry_size, uint64_t table_addr)
{
    if ((entry_size != 4 && entry_size != 8) || cap < SDT_HDR_LEN)
        return -1;
    uint32_t len = (uint32_t)sdt_entry(sdt + SDT_OFF_LENGTH, 4);
    if (len < SDT_HDR_LEN || len > cap || (len - SDT_HDR_LEN) % entry_size)
        return -1;
    uint32_t out = SDT_HDR_LEN;
    int removed = 0;
    for (uint32_t o = SDT_HDR_LEN; o < len; o += entry_size) {
        if (sdt_entry(sdt + o, entry_size) == table_addr) {
            removed++;
            continue;
        }
        for (unsigned i = 0; i < entry_size; i++)
            sdt[out + i] = sdt[o + i];
        out += entry_size;
    }
    if (!removed)
        return 0;
    for (uint32_t o = out; o < len; o++)
        sdt[o] = 0;                     /* the freed tail: no stale pointer left behind */
    for (unsigned i = 0; i < 4; i++)
        sdt[SDT_OFF_LENGTH + i] = (uint8_t)(out >> (8 * i));
    sdt[SDT_OFF_CHECKSUM] = 0;
    sdt[SDT_OFF_CHECKSUM] = (uint8_t)(0u - acpi_checksum(sdt, out));
    return removed;
}

static void acpi_header_init(struct acpi_header *h, const char *sig, uint32_t len, uint8_t rev)
{
    acpi_put(h->signature, sig, 4);
    h->length = len;
    h->revision = rev;
    h->checksum = 0;
    acpi_put(h->oem_id, ACPI_OEM_ID, 6);
    acpi_put(h->oem_table_id, ACPI_OEM_TABLE_ID, 8);
    h->oem_revision = ACPI_OEM_REVISION;
    acpi_put(h->creator_id, ACPI_CREATOR_ID, 4);
    h->creator_revision = ACPI_CREATOR_REV;
}

static void acpi_header_seal(struct acpi_header *h)
{
    h->checksum = 0;
    h->checksum = (uint8_t)(0u - acpi_checksum(h, h->length));
}

static struct acpi_gas acpi_io_gas(uint16_t port, uint8_t len_bytes, uint8_t access)
{
    struct acpi_gas g;
    acpi_zero(&g, sizeof g);
    if (port) {
        g.space_id = GAS_SPACE_SYSTEM_IO;
        g.bit_width = (uint8_t)(len_bytes * 8u);
        g.access_size = access;
        g.address = port;
    }
    return g;
}

/* AML integer (20.2.3): ZeroOp for 0, else BytePrefix + value. Returns the bytes written
 * (out may be NULL to measure). */
static size_t acpi_aml_byte_const(uint8_t *out, uint8_t v)
{
    if (v == 0) {
        if (out) out[0] = AML_ZERO_OP;
        return 1;
    }
    if (out) { out[0] = AML_BYTE_PREFIX; out[1] = v; }
    return 2;
}

/* One sleep state in the DSDT's AML body, Name(_Sx, Package(4){SLP_TYPa, SLP_TYPb, 0, 0})
 * (7.4.2): NameOp "_Sx_" PackageOp PkgLength NumElements elements. SLP_TYPb repeats SLP_TYPa
 * (there is no PM1b block); the last two elements are reserved. out may be NULL to measure. */
static size_t acpi_sx_aml(uint8_t *out, char x, uint8_t slp_typ)
{
    const uint8_t elems[ACPI_S5_ELEMENTS] = { slp_typ, slp_typ, 0, 0 };
    size_t elems_len = 0;
    for (unsigned i = 0; i < ACPI_S5_ELEMENTS; i++) elems_len += acpi_aml_byte_const(NULL, elems[i]);
    size_t pkg_len = 1 /* the PkgLength byte itself */ + 1 /* NumElements */ + elems_len;
    size_t total = 1 /* NameOp */ + 4 /* "_S5_" */ + 1 /* PackageOp */ + pkg_len;
    if (!out) return total;
    size_t k = 0;
    out[k++] = AML_NAME_OP;
    const char name[4] = { '_', 'S', x, '_' };
    acpi_put((char *)out + k, name, 4);
    k += 4;
    out[k++] = AML_PACKAGE_OP;
    out[k++] = (uint8_t)pkg_len;    /* < 64: a one-byte PkgLength (20.2.4) */
    out[k++] = ACPI_S5_ELEMENTS;
    for (unsigned i = 0; i < ACPI_S5_ELEMENTS; i++) k += acpi_aml_byte_const(out + k, elems[i]);
    return k;
}

int acpi_tables_build(const struct acpi_platform *p, void *buf, size_t cap, uint64_t buf_phys,
                      struct acpi_tables_layout *out)
{
    if (!p || !buf || !out || p->cpu_count == 0 || p->cpu_count > ACPI_MAX_CPUS) return -1;
    if (buf_phys % ACPI_FACS_ALIGN) return -1;

    /* Lay the tables out first; everything is addressed as buf_phys + offset. */
    size_t madt_len = sizeof(struct acpi_madt) + sizeof(struct madt_io_apic) +
                      2 * sizeof(struct madt_int_override);
    for (uint32_t i = 0; i < p->cpu_count; i++)
        madt_len += p->apic_ids[i] > MADT_XAPIC_MAX_ID ? sizeof(struct madt_local_x2apic)
                                                       : sizeof(struct madt_local_apic);
    size_t s3_len = p->has_s3 ? acpi_sx_aml(NULL, '3', p->s3_slp_typ) : 0;
    size_t dsdt_len = sizeof(struct acpi_header) + s3_len + acpi_sx_aml(NULL, '5', p->s5_slp_typ);
    const unsigned n_tables = 2;   /* FADT, MADT */
    size_t rsdt_len = sizeof(struct acpi_header) + 4 * n_tables;
    size_t xsdt_len = sizeof(struct acpi_header) + 8 * n_tables;

    struct acpi_tables_layout l;
    acpi_zero(&l, sizeof l);
    size_t off = 0;
    l.facs = off;  off = acpi_align(off + sizeof(struct acpi_facs), ACPI_TABLE_ALIGN);
    l.rsdp = off;  off = acpi_align(off + sizeof(struct acpi_rsdp), ACPI_TABLE_ALIGN);
    l.rsdt = off;  off = acpi_align(off + rsdt_len, ACPI_TABLE_ALIGN);
    l.xsdt = off;  off = acpi_align(off + xsdt_len, ACPI_TABLE_ALIGN);
    l.fadt = off;  off = acpi_align(off + sizeof(struct acpi_fadt), ACPI_TABLE_ALIGN);
    l.dsdt = off;  off = acpi_align(off + dsdt_len, ACPI_TABLE_ALIGN);
    l.madt = off;  off += madt_len;
    l.used = off;
    if (off > cap || buf_phys + off > ACPI_4GIB) return -1;   /* 32-bit pointers below */

    uint8_t *b = buf;
    acpi_zero(b, off);
#define PHYS(o) ((uint32_t)(buf_phys + (o)))

    /* FACS (5.2.10): no checksum; 64-byte aligned (offset 0 of an aligned buffer). */
    struct acpi_facs *facs = (struct acpi_facs *)(b + l.facs);
    acpi_put(facs->signature, "FACS", 4);
    facs->length = sizeof *facs;
    facs->version = ACPI_FACS_VERSION;

    /* DSDT: header, \_S3 where asked, \_S5. */
    struct acpi_header *dsdt = (struct acpi_header *)(b + l.dsdt);
    acpi_header_init(dsdt, "DSDT", (uint32_t)dsdt_len, ACPI_DSDT_REVISION);
    if (p->has_s3)
        acpi_sx_aml(b + l.dsdt + sizeof *dsdt, '3', p->s3_slp_typ);
    acpi_sx_aml(b + l.dsdt + sizeof *dsdt + s3_len, '5', p->s5_slp_typ);
    acpi_header_seal(dsdt);

    /* FADT (5.2.9): the PM1a blocks, the PM timer and the SCI; both 32- and 64-bit forms
     * filled and consistent (ACPICA warns when they differ). */
    struct acpi_fadt *f = (struct acpi_fadt *)(b + l.fadt);
    acpi_header_init(&f->h, "FACP", sizeof *f, ACPI_FADT_REVISION);
    f->fadt_minor_version = ACPI_FADT_MINOR;
    f->firmware_ctrl = PHYS(l.facs);
    f->dsdt = PHYS(l.dsdt);
    f->x_firmware_ctrl = 0;        /* 5.2.9: only one of FIRMWARE_CTRL / X_ may be non-zero */
    f->x_dsdt = PHYS(l.dsdt);
    f->sci_int = p->sci_irq;
    f->smi_cmd = p->smi_cmd;
    f->pm1a_evt_blk = p->pm1a_evt_port;
    f->pm1a_cnt_blk = p->pm1a_cnt_port;
    f->pm_tmr_blk = p->pm_tmr_port;
    f->pm1_evt_len = FADT_PM1_EVT_LEN;
    f->pm1_cnt_len = FADT_PM1_CNT_LEN;
    f->pm_tmr_len = FADT_PM_TMR_LEN;
    f->p_lvl2_lat = FADT_NO_C2_LATENCY;
    f->p_lvl3_lat = FADT_NO_C3_LATENCY;
    f->iapc_boot_arch = FADT_BOOT_LEGACY_DEVICES | FADT_BOOT_8042;
    f->flags = FADT_F_WBINVD | FADT_F_PROC_C1 | FADT_F_PWR_BUTTON | FADT_F_SLP_BUTTON |
               FADT_F_RESET_REG_SUP;
    f->reset_reg = acpi_io_gas(FADT_RESET_PORT, 1, GAS_ACCESS_BYTE);
    f->reset_value = FADT_RESET_VALUE;
    f->x_pm1a_evt_blk = acpi_io_gas(p->pm1a_evt_port, FADT_PM1_EVT_LEN, GAS_ACCESS_WORD);
    f->x_pm1a_cnt_blk = acpi_io_gas(p->pm1a_cnt_port, FADT_PM1_CNT_LEN, GAS_ACCESS_WORD);
    f->x_pm_tmr_blk = acpi_io_gas(p->pm_tmr_port, FADT_PM_TMR_LEN, GAS_ACCESS_DWORD);
    acpi_header_seal(&f->h);

    /* MADT (5.2.12): one local APIC per CPU, the I/O APIC, and the two ISA overrides a PC
     * needs: PIT IRQ0 -> GSI2, and the SCI level-triggered active-high (the PIIX4 SCI is
     * level/high, unlike the ISA default of edge/high). */
    struct acpi_madt *m = (struct acpi_madt *)(b + l.madt);
    acpi_header_init(&m->h, "APIC", (uint32_t)madt_len, ACPI_MADT_REVISION);
    m->local_apic_address = p->lapic_base;
    m->flags = MADT_F_PCAT_COMPAT;
    uint8_t *e = b + l.madt + sizeof *m;
    for (uint32_t i = 0; i < p->cpu_count; i++) {
        if (p->apic_ids[i] > MADT_XAPIC_MAX_ID) {
            struct madt_local_x2apic *x = (struct madt_local_x2apic *)e;
            x->type = MADT_TYPE_LOCAL_X2APIC;
            x->length = sizeof *x;
            x->x2apic_id = p->apic_ids[i];
            x->flags = MADT_LAPIC_ENABLED;
            x->processor_uid = i;
            e += sizeof *x;
        } else {
            struct madt_local_apic *a = (struct madt_local_apic *)e;
            a->type = MADT_TYPE_LOCAL_APIC;
            a->length = sizeof *a;
            a->processor_uid = (uint8_t)i;
            a->apic_id = (uint8_t)p->apic_ids[i];
            a->flags = MADT_LAPIC_ENABLED;
            e += sizeof *a;
        }
    }
    struct madt_io_apic *io = (struct madt_io_apic *)e;
    io->type = MADT_TYPE_IO_APIC;
    io->length = sizeof *io;
    io->io_apic_id = p->ioapic_id;
    io->address = p->ioapic_base;
    io->gsi_base = p->ioapic_gsi_base;
    e += sizeof *io;
    struct madt_int_override *o = (struct madt_int_override *)e;
    o->type = MADT_TYPE_INT_OVERRIDE;
    o->length = sizeof *o;
    o->bus = ISA_BUS;
    o->source = ISA_IRQ_PIT;
    o->gsi = p->ioapic_gsi_base + IOAPIC_PIN_PIT;
    o->flags = MPS_INTI_POLARITY_CONFORMS | MPS_INTI_TRIGGER_CONFORMS;
    o++;
    o->type = MADT_TYPE_INT_OVERRIDE;
    o->length = sizeof *o;
    o->bus = ISA_BUS;
    o->source = (uint8_t)p->sci_irq;
    o->gsi = p->ioapic_gsi_base + p->sci_irq;
    o->flags = MPS_INTI_POLARITY_HIGH | MPS_INTI_TRIGGER_LEVEL;
    acpi_header_seal(&m->h);

    /* RSDT / XSDT (5.2.7, 5.2.8): FADT and MADT. */
    struct acpi_header *rsdt = (struct acpi_header *)(b + l.rsdt);
    acpi_header_init(rsdt, "RSDT", (uint32_t)rsdt_len, ACPI_RSDT_REVISION);
    uint32_t r32[2] = { PHYS(l.fadt), PHYS(l.madt) };
    acpi_put((char *)(rsdt + 1), (const char *)r32, sizeof r32);
    acpi_header_seal(rsdt);
    struct acpi_header *xsdt = (struct acpi_header *)(b + l.xsdt);
    acpi_header_init(xsdt, "XSDT", (uint32_t)xsdt_len, ACPI_XSDT_REVISION);
    uint64_t x64[2] = { PHYS(l.fadt), PHYS(l.madt) };
    acpi_put((char *)(xsdt + 1), (const char *)x64, sizeof x64);   /* unaligned on purpose:
                                                                     XSDT entries sit at 36 */
    acpi_header_seal(xsdt);

    /* RSDP (5.2.5.3): two checksums, the first over the ACPI 1.0 part. */
    struct acpi_rsdp *r = (struct acpi_rsdp *)(b + l.rsdp);
    acpi_put(r->signature, "RSD PTR ", 8);
    acpi_put(r->oem_id, ACPI_OEM_ID, 6);
    r->revision = ACPI_RSDP_REVISION;
    r->rsdt_address = PHYS(l.rsdt);
    r->length = sizeof *r;
    r->xsdt_address = PHYS(l.xsdt);
    r->checksum = (uint8_t)(0u - acpi_checksum(r, ACPI_RSDP_V1_LEN));
    r->extended_checksum = (uint8_t)(0u - acpi_checksum(r, sizeof *r));
#undef PHYS
    *out = l;
    return 0;
}
