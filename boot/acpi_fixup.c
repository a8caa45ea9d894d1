/*
 * acpi_fixup.c - see acpi_fixup.h. A test-platform step, kept apart from the loader's main
 * path: everything Bochs-specific (PIIX4 PM block, I/O APIC) is discovered here, and the
 * tables themselves come from the pure builder in acpi_tables.c.
 */
#include <efi.h>
#include <efilib.h>
#include "acpi_fixup.h"
#include "acpi_tables.h"

/* UEFI 2.9, 4.6.1.1: ACPI configuration table GUIDs. */
static EFI_GUID acpi20_guid = { 0x8868e871, 0xe4f1, 0x11d3, { 0xbc, 0x22, 0x00, 0x80, 0xc7, 0x3c, 0x88, 0x81 } };
static EFI_GUID acpi10_guid = { 0xeb9d2d30, 0x2d88, 0x11d3, { 0x9a, 0x16, 0x00, 0x90, 0x27, 0x3f, 0xc1, 0x4d } };

/* PCI configuration mechanism #1 (PCI Local Bus 3.0, 3.2.2.3.2). */
#define PCI_CONFIG_ADDRESS     0xcf8u
#define PCI_CONFIG_DATA        0xcfcu
#define PCI_CONFIG_ENABLE      0x80000000u
/* The PIIX4 power-management function, PCI 00:01.3 (Intel 82371AB datasheet, 3.1/7.1). */
#define PIIX4_PM_BUS           0u
#define PIIX4_PM_DEV           1u
#define PIIX4_PM_FUNC          3u
#define PIIX4_PM_VENDOR_DEVICE 0x71138086u
#define PIIX4_PMBA             0x40u        /* PM base address, bits 15:6, bit 0 = I/O space */
#define PIIX4_PMBA_MASK        0xffc0u
#define PIIX4_PMREGMISC        0x80u        /* bit 0: PM I/O space enable */
#define PIIX4_PMIOSE           0x01u
#define PIIX4_PM_DEFAULT_BASE  0xb000u      /* what OVMF (PcdAcpiPmBaseAddress) and Bochs's
                                               BIOS program */
#define PIIX4_SCI_IRQ          9u           /* hard-wired on PIIX4 / Bochs */
/* Offsets in the PM block (82371AB datasheet, 7.2): PM1a_EVT, PM1a_CNT, PM_TMR. */
#define PM_OFF_PM1_EVT         0x0u
#define PM_OFF_PM1_CNT         0x4u
#define PM_OFF_PM_TMR          0x8u
/* Bochs's iodev/acpi.cc: SUS_TYP 0 with SUS_EN = "soft power off" (exits Bochs). */
#define PIIX4_S5_SLP_TYP       0u
#define PIIX4_S3_SLP_TYP       1u           /* SUS_TYP 1: suspend to RAM (iodev/acpi.cc) */
/* 82093AA I/O APIC: IOREGSEL at +0, IOWIN at +0x10; register 0 = ID in bits 27:24. */
#define IOAPIC_IOWIN_OFFSET    0x10u
#define IOAPIC_REG_ID          0x00u
#define IOAPIC_ID_SHIFT        24u
#define IOAPIC_ID_MASK         0x0fu
/* CPUID.1:EBX[31:24] = initial APIC ID (SDM vol. 2A, CPUID). */
#define CPUID_1_EBX_APIC_ID_SHIFT 24u
/* FADT offsets (ACPI 6.3, 5.2.9) read from a firmware FADT; 32-bit forms suffice here. */
#define FADT_OFF_PM1A_CNT_BLK  64u
#define FADT_OFF_PM1B_CNT_BLK  68u
#define FADT_OFF_X_PM1A_CNT    172u
#define FADT_OFF_X_PM1B_CNT    184u
#define FADT_OFF_DSDT          40u
#define FADT_OFF_X_DSDT        140u
#define GAS_OFF_ADDRESS        4u
#define GAS_SPACE_SYSTEM_IO    1u
#define ACPI_HDR_LEN           36u
#define ACPI_4GIB_MINUS_1      0xffffffffull

static inline void io_out32(UINT16 port, UINT32 v) { __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port)); }
static inline UINT32 io_in32(UINT16 port) { UINT32 v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

static UINT32 pci_read32(UINT32 bus, UINT32 dev, UINT32 fn, UINT32 reg)
{
    io_out32(PCI_CONFIG_ADDRESS, PCI_CONFIG_ENABLE | bus << 16 | dev << 11 | fn << 8 | (reg & 0xfc));
    return io_in32(PCI_CONFIG_DATA);
}

static void pci_write32(UINT32 bus, UINT32 dev, UINT32 fn, UINT32 reg, UINT32 v)
{
    io_out32(PCI_CONFIG_ADDRESS, PCI_CONFIG_ENABLE | bus << 16 | dev << 11 | fn << 8 | (reg & 0xfc));
    io_out32(PCI_CONFIG_DATA, v);
}

static UINT32 rd32(const UINT8 *p) { UINT32 v; CopyMem(&v, (VOID *)p, 4); return v; }
static UINT64 rd64(const UINT8 *p) { UINT64 v; CopyMem(&v, (VOID *)p, 8); return v; }

/* Find the FADT through RSDP -> XSDT (or RSDT) and take its PM1 control ports; note the MCFG
 * on the way (it may come before or after the FADT: the walk goes on until both are seen). */
static void acpi_fixup_read_fadt(const UINT8 *rsdp, struct acpi_fixup_result *r)
{
    const UINT8 *sdt;
    UINTN entry = 4;
    if (rsdp[15] >= 2 && rd64(rsdp + 24)) { sdt = (const UINT8 *)(UINTN)rd64(rsdp + 24); entry = 8; }
    else sdt = (const UINT8 *)(UINTN)rd32(rsdp + 16);
    if (!sdt) return;
    if (entry == 8) r->xsdt = (UINT8 *)sdt;
    else r->rsdt = (UINT8 *)sdt;
    if (entry == 8 && rd32(rsdp + 16)) r->rsdt = (UINT8 *)(UINTN)rd32(rsdp + 16);
    UINT32 len = rd32(sdt + 4);
    for (UINT32 o = ACPI_HDR_LEN; o + entry <= len; o += entry) {
        const UINT8 *t = (const UINT8 *)(UINTN)(entry == 8 ? rd64(sdt + o) : rd32(sdt + o));
        if (t && CompareMem((VOID *)t, "MCFG", 4) == 0) {    /* for the NIC's hiding */
            r->mcfg = t;
            r->mcfg_len = rd32(t + 4);
            continue;
        }
        if (t && CompareMem((VOID *)t, "DMAR", 4) == 0) {    /* the hypervisor's IOMMU */
            r->dmar = t;
            r->dmar_len = rd32(t + 4);
            continue;
        }
        if (!t || CompareMem((VOID *)t, "FACP", 4) != 0) continue;
        UINT32 flen = rd32(t + 4);
        r->pm1a_cnt_port = (UINT16)rd32(t + FADT_OFF_PM1A_CNT_BLK);
        r->pm1b_cnt_port = (UINT16)rd32(t + FADT_OFF_PM1B_CNT_BLK);
        /* A 64-bit X_PM1x_CNT_BLK in I/O space wins when present (5.2.9). */
        if (flen >= FADT_OFF_X_PM1A_CNT + 12 && t[FADT_OFF_X_PM1A_CNT] == GAS_SPACE_SYSTEM_IO &&
            rd64(t + FADT_OFF_X_PM1A_CNT + GAS_OFF_ADDRESS))
            r->pm1a_cnt_port = (UINT16)rd64(t + FADT_OFF_X_PM1A_CNT + GAS_OFF_ADDRESS);
        if (flen >= FADT_OFF_X_PM1B_CNT + 12 && t[FADT_OFF_X_PM1B_CNT] == GAS_SPACE_SYSTEM_IO &&
            rd64(t + FADT_OFF_X_PM1B_CNT + GAS_OFF_ADDRESS))
            r->pm1b_cnt_port = (UINT16)rd64(t + FADT_OFF_X_PM1B_CNT + GAS_OFF_ADDRESS);
    }
}

/* Copies of the RSDT and XSDT as the firmware made them, for acpi_fixup_restore_dmar. */
#define ACPI_FIXUP_SDT_COPY 4096u
static UINT8 rsdt_copy[ACPI_FIXUP_SDT_COPY], xsdt_copy[ACPI_FIXUP_SDT_COPY];
static UINT32 rsdt_copy_len, xsdt_copy_len;

static BOOLEAN acpi_fixup_sdt_drop(UINT8 *sdt, unsigned entry, UINT8 *copy, UINT32 *copy_len,
                                   UINT64 addr)
{
    if (!sdt) return TRUE;
    UINT32 len = rd32(sdt + 4);
    if (len > ACPI_FIXUP_SDT_COPY) return FALSE;
    CopyMem(copy, sdt, len);
    *copy_len = len;
    return acpi_sdt_remove(sdt, len, entry, addr) >= 0;
}

BOOLEAN acpi_fixup_hide_dmar(struct acpi_fixup_result *r)
{
    if (!r->dmar) return TRUE;
    UINT64 addr = (UINT64)(UINTN)r->dmar;
    BOOLEAN ok = acpi_fixup_sdt_drop(r->xsdt, 8, xsdt_copy, &xsdt_copy_len, addr);
    /* An RSDT entry is 32 bits: a DMAR above 4 GiB cannot be listed there. */
    if (addr <= ACPI_4GIB_MINUS_1)
        ok = acpi_fixup_sdt_drop(r->rsdt, 4, rsdt_copy, &rsdt_copy_len, addr) && ok;
    Print(L"hvtrace: ACPI DMAR at 0x%lx (%d bytes) %s the guest's RSDT/XSDT: the hypervisor "
          L"owns the VT-d units\n", addr, r->dmar_len, ok ? L"removed from" : L"NOT removed from");
    return ok;
}

void acpi_fixup_restore_dmar(struct acpi_fixup_result *r)
{
    if (r->xsdt && xsdt_copy_len) CopyMem(r->xsdt, xsdt_copy, xsdt_copy_len);
    if (r->rsdt && rsdt_copy_len) CopyMem(r->rsdt, rsdt_copy, rsdt_copy_len);
    xsdt_copy_len = rsdt_copy_len = 0;
}

static VOID *acpi_fixup_find_config_table(EFI_GUID *guid)
{
    for (UINTN i = 0; i < ST->NumberOfTableEntries; i++)
        if (CompareGuid(&ST->ConfigurationTable[i].VendorGuid, guid) == 0)
            return ST->ConfigurationTable[i].VendorTable;
    return NULL;
}

/* One definition block: what it defines, then S1-S4 renamed. */
static UINTN acpi_fixup_sleep_block(UINT8 *t, struct acpi_sleep_info *sleep)
{
    if (!t) return 0;
    UINT32 len = rd32(t + 4);
    acpi_sleep_scan(t, len, sleep);
    int n = acpi_sleep_hide(t, len, ACPI_SLEEP_HIDE_MASK);
    return n > 0 ? (UINTN)n : 0;
}

void acpi_fixup_hide_sleep(struct acpi_sleep_info *sleep)
{
    SetMem(sleep, sizeof *sleep, 0);
    const UINT8 *rsdp = acpi_fixup_find_config_table(&acpi20_guid);
    if (!rsdp) rsdp = acpi_fixup_find_config_table(&acpi10_guid);
    if (!rsdp) return;
    const UINT8 *sdt;
    UINTN entry = 4, hidden = 0;
    if (rsdp[15] >= 2 && rd64(rsdp + 24)) { sdt = (const UINT8 *)(UINTN)rd64(rsdp + 24); entry = 8; }
    else sdt = (const UINT8 *)(UINTN)rd32(rsdp + 16);
    if (!sdt) return;
    UINT32 len = rd32(sdt + 4);
    for (UINT32 o = ACPI_HDR_LEN; o + entry <= len; o += entry) {
        UINT8 *t = (UINT8 *)(UINTN)(entry == 8 ? rd64(sdt + o) : rd32(sdt + o));
        if (t && CompareMem(t, "SSDT", 4) == 0) {
            hidden += acpi_fixup_sleep_block(t, sleep);
        } else if (t && CompareMem(t, "FACP", 4) == 0) {
            /* The 64-bit X_DSDT wins where present (ACPI 6.4, 5.2.9). */
            UINT32 flen = rd32(t + 4);
            UINT64 d = flen >= FADT_OFF_X_DSDT + 8 ? rd64(t + FADT_OFF_X_DSDT) : 0;
            if (!d) d = rd32(t + FADT_OFF_DSDT);
            if (d && CompareMem((VOID *)(UINTN)d, "DSDT", 4) == 0)
                hidden += acpi_fixup_sleep_block((UINT8 *)(UINTN)d, sleep);
        }
    }
    Print(L"hvtrace: ACPI sleep states S0-S5 defined: %x; S1-S4 hidden from the guest (%d renamed): "
          L"the hypervisor does not survive them; S5 SLP_TYP %d/%d\n", sleep->present, hidden,
          sleep->typ_a[5], sleep->typ_b[5]);
}

/* The PIIX4 PM block's I/O base; programs the default if the firmware left it disabled. */
static UINT16 acpi_fixup_pm_base(void)
{
    UINT32 id = pci_read32(PIIX4_PM_BUS, PIIX4_PM_DEV, PIIX4_PM_FUNC, 0);
    if (id != PIIX4_PM_VENDOR_DEVICE) return 0;
    UINT32 pmba = pci_read32(PIIX4_PM_BUS, PIIX4_PM_DEV, PIIX4_PM_FUNC, PIIX4_PMBA) & PIIX4_PMBA_MASK;
    UINT32 misc = pci_read32(PIIX4_PM_BUS, PIIX4_PM_DEV, PIIX4_PM_FUNC, PIIX4_PMREGMISC);
    if (!pmba || !(misc & PIIX4_PMIOSE)) {
        pmba = PIIX4_PM_DEFAULT_BASE;
        pci_write32(PIIX4_PM_BUS, PIIX4_PM_DEV, PIIX4_PM_FUNC, PIIX4_PMBA, pmba | 1u);
        pci_write32(PIIX4_PM_BUS, PIIX4_PM_DEV, PIIX4_PM_FUNC, PIIX4_PMREGMISC, misc | PIIX4_PMIOSE);
        Print(L"hvtrace: acpi_fixup: PIIX4 PM block was disabled: enabled at 0x%x\n", pmba);
    }
    return (UINT16)pmba;
}

static UINT8 acpi_fixup_ioapic_id(UINT32 fallback)
{
    volatile UINT32 *sel = (volatile UINT32 *)(UINTN)ACPI_IOAPIC_DEFAULT_BASE;
    volatile UINT32 *win = (volatile UINT32 *)(UINTN)(ACPI_IOAPIC_DEFAULT_BASE + IOAPIC_IOWIN_OFFSET);
    *sel = IOAPIC_REG_ID;
    UINT32 v = *win;
    if (v == 0xffffffffu) return (UINT8)fallback;  /* nothing decodes there */
    return (UINT8)((v >> IOAPIC_ID_SHIFT) & IOAPIC_ID_MASK);
}

static void acpi_fixup_cpus(hvt_efi_mp_services *mp, struct acpi_platform *p)
{
    UINTN n = 0, enabled = 0;
    p->cpu_count = 0;
    if (mp && mp->get_number_of_processors(mp, &n, &enabled) == EFI_SUCCESS) {
        /* The BSP first: Linux takes the first MADT entry as the boot CPU's. */
        for (int pass = 0; pass < 2; pass++) {
            for (UINTN i = 0; i < n && p->cpu_count < ACPI_MAX_CPUS; i++) {
                hvt_efi_processor_info info;
                if (mp->get_processor_info(mp, i, &info) != EFI_SUCCESS) continue;
                if (!(info.status_flag & HVT_PROCESSOR_ENABLED_BIT)) continue;
                BOOLEAN is_bsp = (info.status_flag & HVT_PROCESSOR_AS_BSP_BIT) != 0;
                if ((pass == 0) != is_bsp) continue;
                p->apic_ids[p->cpu_count++] = (UINT32)info.processor_id;
            }
        }
    }
    if (p->cpu_count == 0) {
        UINT32 a, b, c, d;
        __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
        p->apic_ids[0] = b >> CPUID_1_EBX_APIC_ID_SHIFT;
        p->cpu_count = 1;
    }
}

void acpi_fixup_run(BOOLEAN enabled, hvt_efi_mp_services *mp, struct acpi_fixup_result *r)
{
    SetMem(r, sizeof *r, 0);
    const UINT8 *rsdp = acpi_fixup_find_config_table(&acpi20_guid);
    if (!rsdp) rsdp = acpi_fixup_find_config_table(&acpi10_guid);
    if (rsdp) {
        r->firmware_tables = TRUE;
        acpi_fixup_read_fadt(rsdp, r);
        Print(L"hvtrace: firmware ACPI tables present (PM1a_CNT 0x%x): no ACPI fixup\n", r->pm1a_cnt_port);
        return;
    }
    if (!enabled) {
        Print(L"hvtrace: no ACPI tables from the firmware and acpi_fixup = off: "
              L"Linux will see 1 CPU and cannot power off\n");
        return;
    }
    UINT16 pm = acpi_fixup_pm_base();
    if (!pm) {
        Print(L"hvtrace: no ACPI tables from the firmware and no PIIX4 PM device at 00:01.3: "
              L"no ACPI fixup for this platform\n");
        return;
    }
    static struct acpi_platform p;
    SetMem(&p, sizeof p, 0);
    acpi_fixup_cpus(mp, &p);
    p.lapic_base = ACPI_LAPIC_DEFAULT_BASE;
    p.ioapic_base = ACPI_IOAPIC_DEFAULT_BASE;
    /* Bochs numbers its I/O APIC after the CPUs (iodev/ioapic.cc: BX_IOAPIC_DEFAULT_ID =
     * CPU count); read it from the chip rather than assume. */
    p.ioapic_id = acpi_fixup_ioapic_id(p.cpu_count);
    p.ioapic_gsi_base = 0;
    p.pm1a_evt_port = (UINT16)(pm + PM_OFF_PM1_EVT);
    p.pm1a_cnt_port = (UINT16)(pm + PM_OFF_PM1_CNT);
    p.pm_tmr_port = (UINT16)(pm + PM_OFF_PM_TMR);
    p.sci_irq = PIIX4_SCI_IRQ;
    p.smi_cmd = 0;      /* no SMM on Bochs: the PM block is always in ACPI mode */
    p.s5_slp_typ = PIIX4_S5_SLP_TYP;
    p.has_s3 = 1;       /* as PC firmware does: the hypervisor's loader then hides it */
    p.s3_slp_typ = PIIX4_S3_SLP_TYP;

    EFI_PHYSICAL_ADDRESS addr = ACPI_4GIB_MINUS_1;  /* 32-bit table pointers: stay below 4 GiB */
    UINTN pages = EFI_SIZE_TO_PAGES(ACPI_TABLES_BUF_SIZE);
    EFI_STATUS st = BS->AllocatePages(AllocateMaxAddress, EfiACPIReclaimMemory, pages, &addr);
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: acpi_fixup: AllocatePages failed: %r\n", st);
        return;
    }
    struct acpi_tables_layout l;
    if (acpi_tables_build(&p, (VOID *)(UINTN)addr, ACPI_TABLES_BUF_SIZE, addr, &l) != 0) {
        Print(L"hvtrace: acpi_fixup: building the tables failed\n");
        BS->FreePages(addr, pages);
        return;
    }
    st = BS->InstallConfigurationTable(&acpi20_guid, (VOID *)(UINTN)(addr + l.rsdp));
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: acpi_fixup: InstallConfigurationTable failed: %r\n", st);
        BS->FreePages(addr, pages);
        return;
    }
    r->installed = TRUE;
    r->cpus = p.cpu_count;
    r->pm1a_cnt_port = p.pm1a_cnt_port;
    Print(L"hvtrace: firmware has no ACPI tables: installed test-platform tables at 0x%lx "
          L"(%d CPUs, I/O APIC id %d, PM1a_CNT 0x%x, SCI %d)\n",
          addr + l.rsdp, p.cpu_count, p.ioapic_id, p.pm1a_cnt_port, p.sci_irq);
}
