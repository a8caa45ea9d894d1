/*
 * hv_launch.c - load the hypervisor image and start it on every CPU (see hv_launch.h).
 *
 * Steps: (1) allocate the hypervisor's region as EfiReservedMemoryType, 2 MiB aligned (Linux
 * leaves reserved memory alone and shows it as "Reserved"); (2) copy the embedded image to its
 * start and clear its .bss; (3) build the host page tables in the region; (4) fill the boot
 * info (memory map, CPUs); (5) run the image's init on the BSP; (6) virtualize the BSP in
 * place, then each AP through MP services.
 */
#include <efi.h>
#include <efilib.h>
#include "hv_launch.h"
#include "hvt_bootinfo.h"
#include "dmap.h"
#include "mtrr.h"

extern const UINT8 hvl_image_start[], hvl_image_end[];
long hvl_call_hv(UINT64 fn, UINT64 hv_cr3, void *a0, void *a1);
long hvl_virtualize(UINT64 fn, UINT64 hv_cr3, void *bi, struct hvt_cpu_launch *l);

#define PAGE_4K      0x1000ull
#define PAGE_2M      0x200000ull
#define PAGE_1G      0x40000000ull
#define PTE_P        (1ull << 0)
#define PTE_W        (1ull << 1)
#define PTE_PS       (1ull << 7)
#define PTE_G        (1ull << 8)
#define PML4_INDEX(va) (((va) >> 39) & 511)
#define PDPT_INDEX(va) (((va) >> 30) & 511)
/* hv_mem_mb=0 (auto): the tracer keeps about 3.5 MiB per CPU (decoded-instruction cache,
 * chunk, stream stage) beside ~40 MiB shared (code dictionary, send ring, EPT, lwIP). */
#define AUTO_HV_MEM_MB(ncpu) ((ncpu) <= 2 ? 64 : 48 + 6 * (ncpu))
#define AP_TIMEOUT_US 5000000

static struct hvt_cpu_launch launches[HVT_MAX_CPUS];
static struct hvt_boot_info *boot_info;
static UINT64 hv_cr3, hv_entry_cpu;

/* A bump allocator over the region during set-up. */
struct region { UINT64 phys, size, next; };

static UINT64 *region_page(struct region *r)
{
    UINT64 pa = r->next;
    if (pa + PAGE_4K > r->phys + r->size)
        return NULL;
    r->next += PAGE_4K;
    UINT64 *p = (UINT64 *)pa;
    for (int i = 0; i < 512; i++)
        p[i] = 0;
    return p;
}

static BOOLEAN cpu_has_1g_pages(void)
{
    UINT32 a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
    if (a < 0x80000001u)
        return FALSE;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000001u), "c"(0));
    return (d >> 26) & 1;
}

/* The direct map's inputs (dmap.h): tables from the region, the MTRRs' types, and what the
 * firmware's memory map calls memory (RAM or firmware-owned: never in the uncached alias). */
static struct mtrr_state host_mtrr;
static UINT64 host_rdmsr(UINT32 msr)
{
    UINT32 lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return (UINT64)hi << 32 | lo;
}
struct dmap_ctx { struct region *r; const struct hvt_boot_info *bi; };
static uint64_t *dmap_table(void *ctx) { return region_page(((struct dmap_ctx *)ctx)->r); }
static int dmap_memtype(void *ctx, uint64_t base, uint64_t size) { return mtrr_type_range(&host_mtrr, base, size); }
static enum dmap_ram dmap_ram_of(void *ctx, uint64_t base, uint64_t size)
{
    const struct hvt_boot_info *bi = ((struct dmap_ctx *)ctx)->bi;
    uint64_t in = 0;
    for (UINT32 i = 0; i < bi->mem_range_count; i++) {
        const struct hvt_mem_range *m = &bi->mem[i];
        if (m->kind == HVT_MEM_MMIO)
            continue;
        uint64_t lo = base > m->base ? base : m->base;
        uint64_t hi = base + size < m->base + m->size ? base + size : m->base + m->size;
        if (hi > lo)
            in += hi - lo;
    }
    return in == 0 ? DMAP_RAM_NONE : in >= size ? DMAP_RAM_ALL : DMAP_RAM_SOME;
}

static UINT32 cpu_phys_bits(void)
{
    UINT32 a, b, c, d;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
    if (a < 0x80000008u)
        return 36;
    __asm__ volatile("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000008u), "c"(0));
    return a & 0xff;
}

static EFI_STATUS build_page_tables(struct region *r, const struct hvt_boot_info *bi, UINT64 limit,
                                    UINT64 *cr3)
{
    BOOLEAN big = cpu_has_1g_pages();
    UINT32 phys_bits = cpu_phys_bits();
    UINT64 *pml4 = region_page(r);
    if (!pml4) return EFI_OUT_OF_RESOURCES;
    mtrr_read(&host_mtrr, host_rdmsr, phys_bits);
    /* The uncached alias reaches every device register the hypervisor may drive (a 64-bit BAR
     * anywhere below MAXPHYADDR) where 1 GiB pages keep its tables small; else [0, limit). */
    UINT64 uc_limit = big ? 1ull << phys_bits : limit;
    struct dmap_ctx ctx = { r, bi };
    struct dmap_ops ops = { &ctx, dmap_table, dmap_memtype, dmap_ram_of };
    struct dmap_stats st;
    if (dmap_build(pml4, limit, HVT_UC_ALIAS_BASE, uc_limit, big, &ops, &st))
        return EFI_OUT_OF_RESOURCES;
    Print(L"hvtrace: direct map: %ld x 1 GiB, %ld x 2 MiB, %ld x 4 KiB pages (one memory type "
          L"each), %ld tables; uncached alias to %ld GiB, without RAM\n", st.pages_1g, st.pages_2m,
          st.pages_4k, st.tables, (uc_limit < DMAP_UC_MAX ? uc_limit : DMAP_UC_MAX) >> 30);
    /* The region at the image's link address, 2 MiB pages (the region is 2 MiB aligned). */
    UINT64 va = HVT_IMAGE_LINK_BASE;
    UINT64 *pdpt = region_page(r), *pd = region_page(r);
    if (!pdpt || !pd) return EFI_OUT_OF_RESOURCES;
    pml4[PML4_INDEX(va)] = (UINT64)pdpt | PTE_P | PTE_W;
    pdpt[PDPT_INDEX(va)] = (UINT64)pd | PTE_P | PTE_W;
    for (UINT64 off = 0; off < r->size; off += PAGE_2M)
        pd[off / PAGE_2M] = (r->phys + off) | PTE_P | PTE_W | PTE_PS | PTE_G;
    *cr3 = (UINT64)pml4;
    return EFI_SUCCESS;
}

static UINT32 mem_kind(UINT32 efi_type)
{
    switch (efi_type) {
    case EfiLoaderCode: case EfiLoaderData: case EfiBootServicesCode: case EfiBootServicesData:
    case EfiConventionalMemory: case EfiACPIReclaimMemory:
        return HVT_MEM_RAM;
    case EfiRuntimeServicesCode: case EfiRuntimeServicesData: case EfiACPIMemoryNVS:
    case EfiReservedMemoryType:
        return HVT_MEM_FIRMWARE;
    case EfiMemoryMappedIO: case EfiMemoryMappedIOPortSpace: case EfiPalCode:
        return HVT_MEM_MMIO;
    default:
        return 0;
    }
}

/* The firmware's memory map, merged into ranges of one kind, and its top address. */
static EFI_STATUS read_memory_map(struct hvt_boot_info *bi, UINT64 *top)
{
    UINTN size = 0, key, desc_size;
    UINT32 desc_ver;
    EFI_MEMORY_DESCRIPTOR *map = NULL;
    EFI_STATUS s = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, map, &key, &desc_size, &desc_ver);
    if (s != EFI_BUFFER_TOO_SMALL) return s;
    size += 8 * desc_size;
    s = uefi_call_wrapper(BS->AllocatePool, 3, EfiLoaderData, size, (void **)&map);
    if (EFI_ERROR(s)) return s;
    s = uefi_call_wrapper(BS->GetMemoryMap, 5, &size, map, &key, &desc_size, &desc_ver);
    if (EFI_ERROR(s)) { uefi_call_wrapper(BS->FreePool, 1, map); return s; }
    bi->mem_range_count = 0;
    *top = 0;
    for (UINTN off = 0; off < size; off += desc_size) {
        EFI_MEMORY_DESCRIPTOR *d = (EFI_MEMORY_DESCRIPTOR *)((UINT8 *)map + off);
        UINT32 kind = mem_kind(d->Type);
        UINT64 base = d->PhysicalStart, len = d->NumberOfPages * PAGE_4K;
        if (!kind || !len) continue;
        if (base + len > *top && kind != HVT_MEM_MMIO) *top = base + len;
        struct hvt_mem_range *last = bi->mem_range_count ? &bi->mem[bi->mem_range_count - 1] : NULL;
        if (last && last->kind == kind && last->base + last->size == base) {
            last->size += len;
        } else if (bi->mem_range_count < HVT_MAX_MEM_RANGES) {
            bi->mem[bi->mem_range_count++] = (struct hvt_mem_range){ base, len, kind, 0 };
        }
    }
    uefi_call_wrapper(BS->FreePool, 1, map);
    return EFI_SUCCESS;
}

static VOID HVT_MSABI ap_virtualize(VOID *arg)
{
    hvt_efi_mp_services *mp = arg;
    UINTN me = 0;
    if (EFI_ERROR(mp->who_am_i(mp, &me)) || me >= HVT_MAX_CPUS)
        return;
    launches[me].cpu_index = (UINT32)me;
    launches[me].result = -1;
    long r = hvl_virtualize(hv_entry_cpu, hv_cr3, boot_info, &launches[me]);
    launches[me].result = (INT32)r;
}

static void say(CHAR16 *why, UINTN n, const CHAR16 *fmt, UINT64 a, UINT64 b)
{
    if (why && n)
        SPrint(why, n * sizeof(CHAR16), (CHAR16 *)fmt, a, b);
}

/* Copy and clear the image a quadword at a time: gnu-efi's CopyMem/SetMem go byte by byte,
 * and for the ~5 MiB .bss that was most of the hypervisor's start-up (measured in Bochs, where
 * the TSC counts instructions: 54 M of 67 M). */
static void hvl_copy(void *d, const void *s, UINT64 n)
{
    UINT64 q = n / 8, b = n % 8;
    __asm__ volatile("rep movsq" : "+D"(d), "+S"(s), "+c"(q) :: "memory");
    __asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(b) :: "memory");
}

static void hvl_zero(void *d, UINT64 n)
{
    UINT64 q = n / 8, b = n % 8;
    __asm__ volatile("rep stosq" : "+D"(d), "+c"(q) : "a"(0ull) : "memory");
    __asm__ volatile("rep stosb" : "+D"(d), "+c"(b) : "a"(0ull) : "memory");
}

static UINT64 rdtsc(void)
{
    UINT32 lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((UINT64)hi << 32) | lo;
}

EFI_STATUS hvl_start(const struct hvl_params *p, CHAR16 *why, UINTN why_chars)
{
    UINT64 tsc0 = rdtsc();
    UINT64 image_len = (UINT64)(hvl_image_end - hvl_image_start);
    const struct hvt_image_header *h = (const struct hvt_image_header *)hvl_image_start;
    if (image_len < sizeof *h || h->magic != HVT_IMAGE_MAGIC || h->link_base != HVT_IMAGE_LINK_BASE ||
        h->file_size > image_len) {
        say(why, why_chars, L"embedded hypervisor image is corrupt", 0, 0);
        return EFI_LOAD_ERROR;
    }
    /* CPUs: MP services numbering; the BSP is the caller. */
    UINTN ncpu = 1, nenabled = 1, bsp = 0;
    if (p->mp) {
        if (EFI_ERROR(p->mp->get_number_of_processors(p->mp, &ncpu, &nenabled)) || ncpu == 0)
            ncpu = 1;
        p->mp->who_am_i(p->mp, &bsp);
    }
    /* Every CPU or none: a CPU left outside VMX operation would run with the guest's INIT/SIPI
     * (the guest owns the local APICs) outside EPT, the hypervisor's memory in reach. */
    if (ncpu > HVT_MAX_CPUS) {
        say(why, why_chars, L"the machine has %ld CPUs and hvtrace supports at most %ld: disable "
            L"CPUs (or SMT) in the firmware setup", ncpu, HVT_MAX_CPUS);
        return EFI_UNSUPPORTED;
    }
    /* (1) The region: reserved memory, 2 MiB aligned; give back the alignment slack. */
    UINT64 mb = p->hv_mem_mb ? p->hv_mem_mb : AUTO_HV_MEM_MB(ncpu);
    UINT64 size = mb << 20, want = size + PAGE_2M;
    EFI_PHYSICAL_ADDRESS raw = 0;
    EFI_STATUS s = uefi_call_wrapper(BS->AllocatePages, 4, AllocateAnyPages, EfiReservedMemoryType,
                                     want / PAGE_4K, &raw);
    if (EFI_ERROR(s)) {
        say(why, why_chars, L"cannot allocate %ld MiB for the hypervisor: %r", mb, s);
        return s;
    }
    UINT64 base = (raw + PAGE_2M - 1) & ~(PAGE_2M - 1);
    if (base > raw)
        uefi_call_wrapper(BS->FreePages, 2, raw, (base - raw) / PAGE_4K);
    if (raw + want > base + size)
        uefi_call_wrapper(BS->FreePages, 2, base + size, (raw + want - base - size) / PAGE_4K);
    /* (2) The image, then .bss cleared. */
    if (h->mem_size + 64 * PAGE_4K > size) {
        say(why, why_chars, L"hypervisor image (%ld bytes) does not fit", h->mem_size, 0);
        return EFI_BUFFER_TOO_SMALL;
    }
    hvl_copy((void *)base, (void *)hvl_image_start, h->file_size);
    hvl_zero((UINT8 *)base + h->file_size, h->mem_size - h->file_size);
    struct region r = { base, size, (base + h->mem_size + PAGE_4K - 1) & ~(PAGE_4K - 1) };
    /* (4 first: the boot info lives in the region and the memory map sets the map limit) */
    UINTN bi_pages = (sizeof(struct hvt_boot_info) + PAGE_4K - 1) / PAGE_4K;
    struct hvt_boot_info *bi = (struct hvt_boot_info *)r.next;
    r.next += bi_pages * PAGE_4K;
    hvl_zero(bi, bi_pages * PAGE_4K);
    UINT64 top = 0;
    s = read_memory_map(bi, &top);
    if (EFI_ERROR(s)) {
        say(why, why_chars, L"GetMemoryMap failed: %r", s, 0);
        return s;
    }
    UINT64 limit = top > (1ull << 32) ? top : (1ull << 32);
    limit = (limit + PAGE_1G - 1) & ~(PAGE_1G - 1);
    /* (3) Host page tables. */
    s = build_page_tables(&r, bi, limit, &hv_cr3);
    if (EFI_ERROR(s)) {
        say(why, why_chars, L"cannot build the hypervisor page tables: %r", s, 0);
        return s;
    }
    bi->magic = HVT_BOOTINFO_MAGIC;
    bi->region_phys = base;
    bi->region_size = size;
    bi->free_phys = r.next;
    bi->host_cr3 = hv_cr3;
    bi->direct_map_limit = limit;
    bi->log_flags = p->log_flags;
    bi->hv_flags = p->hv_flags;
    bi->mcfg_len = p->mcfg ? p->mcfg_len : 0;
    if (p->mcfg && p->mcfg_len <= HVT_MCFG_MAX)   /* larger: mcfg_len alone says it exists */
        hvl_copy(bi->mcfg, p->mcfg, p->mcfg_len);
    bi->dmar_len = p->dmar ? p->dmar_len : 0;
    if (p->dmar && p->dmar_len <= HVT_DMAR_MAX)   /* larger: dmar_len alone says it exists */
        hvl_copy(bi->dmar, p->dmar, p->dmar_len);
    bi->pm1a_cnt_port = p->pm1a_cnt_port;
    bi->pm1b_cnt_port = p->pm1b_cnt_port;
    bi->s5_known = p->s5_known;
    bi->s5_slp_typ_a = p->s5_slp_typ_a;
    bi->s5_slp_typ_b = p->s5_slp_typ_b;
    for (UINTN i = 0; p->trace_config && p->trace_config[i] && i + 1 < HVT_TRACE_CONFIG_LEN; i++)
        bi->trace_config[i] = p->trace_config[i];
    for (UINTN i = 0; p->net_config && p->net_config[i] && i + 1 < HVT_NET_CONFIG_LEN; i++)
        bi->net_config[i] = p->net_config[i];
    for (UINTN i = 0; p->cfg_sha256 && i < sizeof bi->cfg_sha256; i++)
        bi->cfg_sha256[i] = p->cfg_sha256[i];
    bi->cfg_state = p->cfg_state;
    bi->cpu_count = (UINT32)ncpu;
    for (UINTN i = 0; i < ncpu; i++) {
        hvt_efi_processor_info info;
        if (p->mp && !EFI_ERROR(p->mp->get_processor_info(p->mp, i, &info)))
            bi->apic_ids[i] = (UINT32)info.processor_id;
    }
    boot_info = bi;
    hv_entry_cpu = h->entry_cpu;
    /* (5) Init on the BSP. */
    long rc = hvl_call_hv(h->entry_init, hv_cr3, bi, NULL);
    if (rc) {
        say(why, why_chars, L"hypervisor init failed (%ld): see its log on port 0xE9/COM1", (UINT64)rc, 0);
        uefi_call_wrapper(BS->FreePages, 2, base, size / PAGE_4K);
        return EFI_DEVICE_ERROR;
    }
    /* (6) The BSP in place... */
    launches[bsp].cpu_index = (UINT32)bsp;
    rc = hvl_virtualize(hv_entry_cpu, hv_cr3, bi, &launches[bsp]);
    if (rc) {
        say(why, why_chars, L"VMLAUNCH on the BSP failed (%ld)", (UINT64)rc, 0);
        return EFI_DEVICE_ERROR;
    }
    /* ...we are a guest now. Then every AP, one at a time. */
    if (p->mp && ncpu > 1) {
        s = p->mp->startup_all_aps(p->mp, ap_virtualize, TRUE, NULL, AP_TIMEOUT_US, p->mp, NULL);
        UINTN ok = 1;
        for (UINTN i = 0; i < ncpu; i++)
            if (i != bsp && launches[i].result == 0 && launches[i].cpu_index == i)
                ok++;
        if (EFI_ERROR(s) || ok != ncpu)
            Print(L"hvtrace: warning: %ld of %ld CPUs virtualized (StartupAllAPs: %r)\n", ok, ncpu, s);
        else
            Print(L"hvtrace: hypervisor running on %ld CPUs\n", ncpu);
    } else {
        Print(L"hvtrace: hypervisor running on 1 CPU\n");
    }
    /* Bochs's TSC ticks once per instruction: this is the start-up cost, exactly. */
    Print(L"hvtrace: start-up took %ld TSC ticks\n", rdtsc() - tsc0);
    return EFI_SUCCESS;
}
