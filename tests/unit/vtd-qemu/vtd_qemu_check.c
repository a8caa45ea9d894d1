/*
 * vtd_qemu_check.c - runs as root inside a Linux guest of QEMU q35 with intel-iommu and two
 * "edu" PCI devices (QEMU's teaching device with a DMA engine), Linux booted with
 * intel_iommu=off iomem=relaxed so the remapping unit is ours. It runs the hypervisor's own
 * boot-time sequence, vmm/iommu_boot.c iommu_boot() (the function hv_iommu.c calls), on the
 * live DMAR against QEMU's VT-d model:
 *   - iommu_boot parses the DMAR (vmm/acpi_dmar.c), opens the unit through /dev/mem, builds
 *     the tables (vmm/iommu_tables.c) in locked pages (physical addresses from
 *     /proc/self/pagemap): guest domain = System RAM (from /sys/firmware/memmap) minus an
 *     excluded page X (standing for the hypervisor's region) and minus the own range; own
 *     domain = two pages O1, O2 for edu #2 (standing for the NIC); and enables translation
 *     (vmm/iommu_hw.c);
 *   - makes each edu DMA into pages and checks which writes land and which fault, reading
 *     the fault records with iommu_hw_next_fault();
 *   - parses the live MCFG with vmm/pci_mcfg.c and checks, for every PCI function Linux
 *     lists, that the ECAM page mcfg_function_page() names holds the same configuration
 *     header as sysfs shows, and that mcfg_classify() maps addresses in it back to the BDF.
 * Prints "vtd-qemu: N passed, M failed". Test harness only: not part of the hypervisor.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "acpi_dmar.h"
#include "iommu_tables.h"
#include "iommu_hw.h"
#include "pci_mcfg.h"
#include "iommu_boot.h"
#include "check.h"


/* --- physical memory for tables and DMA targets --- */
#define POOL 96
static uint8_t *pool;
static uint64_t pool_pa[POOL];
static unsigned pool_next;

static uint64_t pagemap_pa(const void *va)
{
    static int fd = -1;
    if (fd < 0) fd = open("/proc/self/pagemap", O_RDONLY);
    uint64_t e = 0;
    if (pread(fd, &e, 8, (off_t)((uintptr_t)va / 4096) * 8) != 8 || !(e & (1ull << 63))) {
        printf("FAIL pagemap for %p\n", va); exit(1);
    }
    return (e & ((1ull << 55) - 1)) * 4096;
}
static void *page_alloc(void)
{
    if (pool_next >= POOL) return NULL;
    void *p = pool + (size_t)pool_next++ * 4096;
    memset(p, 0, 4096);
    return p;
}
static uint64_t v2p(const void *v) { return pool_pa[((const uint8_t *)v - pool) / 4096]; }
static void *p2v(uint64_t pa)
{
    for (unsigned i = 0; i < POOL; i++) if (pool_pa[i] == pa) return pool + (size_t)i * 4096;
    printf("FAIL p2v %#llx\n", (unsigned long long)pa); exit(1);
}
static const struct iommu_ops ops = { page_alloc, v2p, p2v };

/* --- the unit's registers through /dev/mem --- */
static volatile uint8_t *regs;
static uint32_t r32(void *c, unsigned o) { return *(volatile uint32_t *)((volatile uint8_t *)c + o); }
static uint64_t r64(void *c, unsigned o) { return *(volatile uint64_t *)((volatile uint8_t *)c + o); }
static void w32(void *c, unsigned o, uint32_t v) { *(volatile uint32_t *)((volatile uint8_t *)c + o) = v; }
static void w64(void *c, unsigned o, uint64_t v) { *(volatile uint64_t *)((volatile uint8_t *)c + o) = v; }

static void *map_phys(uint64_t pa, size_t len)
{
    int fd = open("/dev/mem", O_RDWR | O_SYNC);
    void *p = fd < 0 ? MAP_FAILED : mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)pa);
    if (p == MAP_FAILED) { printf("FAIL cannot map %#llx from /dev/mem\n", (unsigned long long)pa); exit(1); }
    return p;
}

/* --- edu devices --- */
struct edu { char name[288]; unsigned bus, dev, fn; volatile uint8_t *bar; };
static unsigned find_edus(struct edu *e, unsigned max)
{
    unsigned n = 0;
    DIR *d = opendir("/sys/bus/pci/devices");
    struct dirent *de;
    char path[512], buf[64];
    while (d && (de = readdir(d)) && n < max) {
        if (de->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        unsigned ven = 0, devid = 0;
        if (fscanf(f, "%x", &ven) != 1) ven = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/device", de->d_name);
        if ((f = fopen(path, "r"))) { if (fscanf(f, "%x", &devid) != 1) devid = 0; fclose(f); }
        if (ven != 0x1234 || devid != 0x11e8) continue;
        struct edu *x = &e[n];
        snprintf(x->name, sizeof x->name, "%s", de->d_name);
        unsigned seg;
        sscanf(de->d_name, "%x:%x:%x.%x", &seg, &x->bus, &x->dev, &x->fn);
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/resource", de->d_name);
        unsigned long long start = 0;
        if ((f = fopen(path, "r"))) { if (fscanf(f, "%llx", &start) != 1) start = 0; fclose(f); }
        /* memory decode and bus mastering on (PCI command register bits 1 and 2) */
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/config", de->d_name);
        int fd = open(path, O_RDWR);
        uint16_t cmd = 0;
        if (fd >= 0 && pread(fd, &cmd, 2, 4) == 2) { cmd |= 6; if (pwrite(fd, &cmd, 2, 4) != 2) printf("FAIL command write\n"); }
        if (fd >= 0) close(fd);
        x->bar = map_phys(start, 0x100000);
        snprintf(buf, sizeof buf, "%08x", *(volatile uint32_t *)x->bar);
        printf("vtd-qemu: edu %s id %s bar %#llx\n", x->name, buf, start);
        n++;
    }
    if (d) closedir(d);
    return n;
}

#define EDU_DMA_SRC 0x80
#define EDU_DMA_DST 0x88
#define EDU_DMA_CNT 0x90
#define EDU_DMA_CMD 0x98
#define EDU_BUF     0x40000ull
static void edu_dma(struct edu *e, uint64_t src, uint64_t dst, uint64_t cnt, unsigned dir)
{
    *(volatile uint64_t *)(e->bar + EDU_DMA_SRC) = src;
    *(volatile uint64_t *)(e->bar + EDU_DMA_DST) = dst;
    *(volatile uint64_t *)(e->bar + EDU_DMA_CNT) = cnt;
    *(volatile uint64_t *)(e->bar + EDU_DMA_CMD) = 1 | dir << 1;
    for (int i = 0; i < 300 && (*(volatile uint64_t *)(e->bar + EDU_DMA_CMD) & 1); i++) usleep(10000);
}

static struct iommu_hw_ops hw = { r32, r64, w32, w64, NULL, 100000 };
static void *map_phys(uint64_t pa, size_t len);

/* iommu_boot's way to the units: /dev/mem (the hypervisor uses its uncached direct map). */
static unsigned opened;
static bool unit_open(void *ctx, uint64_t reg_base, unsigned pages, struct iommu_hw_ops *h)
{
    (void)ctx;
    regs = map_phys(reg_base, (size_t)pages * 4096);
    *h = (struct iommu_hw_ops){ r32, r64, w32, w64, (void *)regs, 100000 };
    hw = *h;                            /* the fault checks below read the same unit */
    opened++;
    return true;
}
static void flush_tables(void *ctx) { (void)ctx; __sync_synchronize(); }   /* QEMU's model reads memory */
static const struct iommu_boot_unit_ops unit_ops = { unit_open, flush_tables, NULL };

/* Load the edu's buffer from src, write it to dst; true if dst received the pattern. */
static bool dma_write_test(struct edu *e, const uint8_t *src, uint64_t src_pa, uint8_t *dst, uint64_t dst_pa, uint8_t pat)
{
    memset((void *)src, pat, 64);
    memset(dst, 0, 64);
    __sync_synchronize();
    edu_dma(e, src_pa, EDU_BUF, 64, 0);
    edu_dma(e, EDU_BUF, dst_pa, 64, 1);
    __sync_synchronize();
    for (int i = 0; i < 64; i++) if (dst[i] != pat) return false;
    return true;
}

static void expect_fault(struct edu *e, uint64_t pa, const char *what)
{
    struct iommu_fault f;
    bool ovf;
    bool got = iommu_hw_next_fault(&hw, &f, &ovf);
    CHECK(got && f.source_id == (e->bus << 8 | e->dev << 3 | e->fn) && f.addr == (pa & ~0xfffull),
          "%s: fault %d sid %#x addr %#llx reason %u read %d", what, got, got ? f.source_id : 0,
          got ? (unsigned long long)f.addr : 0ull, got ? f.reason : 0, got ? f.read : 0);
    if (got) printf("vtd-qemu: %s: fault sid %#x addr %#llx reason %#x %s\n", what, f.source_id,
                    (unsigned long long)f.addr, f.reason, f.read ? "read" : "write");
    while (iommu_hw_next_fault(&hw, &f, &ovf)) ;
}

static unsigned read_ram(struct iommu_range *r, unsigned max)
{
    unsigned n = 0;
    char path[256], type[64];
    for (int i = 0; i < 128 && n < max; i++) {
        unsigned long long s, e;
        snprintf(path, sizeof path, "/sys/firmware/memmap/%d/type", i);
        FILE *f = fopen(path, "r");
        if (!f) break;
        if (!fgets(type, sizeof type, f)) type[0] = 0;
        fclose(f);
        if (strncmp(type, "System RAM", 10)) continue;
        snprintf(path, sizeof path, "/sys/firmware/memmap/%d/start", i);
        if (!(f = fopen(path, "r")) || fscanf(f, "%llx", &s) != 1) return n;
        fclose(f);
        snprintf(path, sizeof path, "/sys/firmware/memmap/%d/end", i);
        if (!(f = fopen(path, "r")) || fscanf(f, "%llx", &e) != 1) return n;
        fclose(f);
        r[n++] = (struct iommu_range){ s, e + 1 - s };
        printf("vtd-qemu: RAM %#llx-%#llx\n", s, e);
    }
    return n;
}

/* Configuration reads through ECAM (the live MCFG), for mcfg_path_bridges. */
static const struct mcfg_info *live_mcfg;
static uint32_t ecam_read(void *ctx, uint8_t bus, uint8_t dev, uint8_t fn, uint16_t off)
{
    (void)ctx;
    uint64_t page;
    if (!mcfg_function_page(live_mcfg, (struct mcfg_bdf){ 0, bus, dev, fn }, &page))
        return 0xffffffffu;
    volatile uint32_t *e = map_phys(page, 4096);
    uint32_t v = e[off / 4];
    munmap((void *)e, 4096);
    return v;
}

/* The bridges above the e1000e (behind root port rp1), found the way net/ finds the ones
 * above its NIC, must be exactly the e1000e's parent in sysfs. */
static void check_path(const struct mcfg_info *m)
{
    live_mcfg = m;
    DIR *d = opendir("/sys/bus/pci/devices");
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char path[512], link[512];
        unsigned ven = 0, devid = 0, seg, bus, dev, fn;
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/vendor", de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fscanf(f, "%x", &ven) != 1) ven = 0;
        fclose(f);
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/device", de->d_name);
        if ((f = fopen(path, "r"))) { if (fscanf(f, "%x", &devid) != 1) devid = 0; fclose(f); }
        if (ven != 0x8086 || devid != 0x10d3) continue;           /* e1000e (82574) */
        if (sscanf(de->d_name, "%x:%x:%x.%x", &seg, &bus, &dev, &fn) != 4) continue;
        /* sysfs: the device's real path names its parent bridge just before it */
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s", de->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        link[k > 0 ? k : 0] = 0;
        char *me = strrchr(link, '/');
        if (me) *me = 0;
        char *parent = strrchr(link, '/');
        unsigned ps, pb, pd, pf;
        bool have = parent && sscanf(parent + 1, "%x:%x:%x.%x", &ps, &pb, &pd, &pf) == 4;
        struct mcfg_bdf out[MCFG_MAX_BRIDGES];
        int n = mcfg_path_bridges((struct mcfg_bdf){ 0, (uint8_t)bus, (uint8_t)dev, (uint8_t)fn },
                                  ecam_read, NULL, out, MCFG_MAX_BRIDGES);
        /* q35's own e1000e sits on the root bus (parent pci0000:00): no bridge */
        CHECK(have ? n == 1 && out[0].bus == pb && out[0].dev == pd && out[0].fn == pf : n == 0,
              "bridges above e1000e %s: %d (sysfs parent %s)", de->d_name, n, parent ? parent + 1 : "?");
        printf("vtd-qemu: e1000e %s: %d bridge(s) above it%s (sysfs parent %s)\n", de->d_name, n,
               n >= 1 ? ", the first:" : "", parent ? parent + 1 : "?");
        if (n >= 1)
            printf("vtd-qemu:   %02x:%02x.%x\n", out[0].bus, out[0].dev, out[0].fn);
    }
    if (d) closedir(d);
}

static void check_ecam(void)
{
    static uint8_t tbl[4096];
    int fd = open("/sys/firmware/acpi/tables/MCFG", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, tbl, sizeof tbl);
    if (fd >= 0) close(fd);
    static struct mcfg_info m;
    int rc = n > 0 ? mcfg_parse(tbl, (size_t)n, &m) : -100;
    CHECK(rc == MCFG_OK && m.n >= 1, "live MCFG: %d", rc);
    if (rc) return;
    DIR *d = opendir("/sys/bus/pci/devices");
    struct dirent *de;
    unsigned same = 0, total = 0;
    while (d && (de = readdir(d))) {
        if (de->d_name[0] == '.') continue;
        unsigned seg, bus, dev, fn;
        if (sscanf(de->d_name, "%x:%x:%x.%x", &seg, &bus, &dev, &fn) != 4) continue;
        char path[512];
        uint8_t cfg[64];
        snprintf(path, sizeof path, "/sys/bus/pci/devices/%s/config", de->d_name);
        int cf = open(path, O_RDONLY);
        if (cf < 0 || pread(cf, cfg, 64, 0) != 64) { if (cf >= 0) close(cf); continue; }
        close(cf);
        uint64_t page;
        total++;
        struct mcfg_bdf b = { (uint16_t)seg, (uint8_t)bus, (uint8_t)dev, (uint8_t)fn };
        if (!mcfg_function_page(&m, b, &page)) { printf("FAIL no ECAM page for %s\n", de->d_name); continue; }
        volatile uint32_t *e = map_phys(page, 4096);
        bool ok = true;
        /* the command/status dword (4) and BARs may change under us: compare IDs, class, header */
        for (unsigned i = 0; i < 16; i++) {
            uint32_t want;
            memcpy(&want, cfg + 4 * i, 4);
            if ((i == 0 || i == 2 || i == 11) && e[i] != want) ok = false;
        }
        struct mcfg_target t;
        ok = ok && mcfg_classify(&m, page + 0x44, &t) && t.bdf.bus == bus && t.bdf.dev == dev &&
             t.bdf.fn == fn && t.offset == 0x44;
        if (ok) same++; else printf("FAIL ECAM of %s differs (vendor %08x)\n", de->d_name, e[0]);
        munmap((void *)e, 4096);
    }
    if (d) closedir(d);
    CHECK(total > 0 && same == total, "ECAM matches sysfs for %u of %u functions", same, total);
    printf("vtd-qemu: ECAM at %#llx: %u of %u functions' headers match sysfs\n",
           (unsigned long long)m.alloc[0].base, same, total);
    check_path(&m);
}

int main(void)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    check_ecam();
    /* 1. the live DMAR, read as the loader passes it to the hypervisor */
    static uint8_t tbl[65536];
    int fd = open("/sys/firmware/acpi/tables/DMAR", O_RDONLY);
    ssize_t n = fd < 0 ? -1 : read(fd, tbl, sizeof tbl);
    CHECK(n > 0, "live DMAR readable");
    if (n <= 0) return 1;

    /* 2. pages */
    pool = mmap(NULL, POOL * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED, -1, 0);
    if (pool == MAP_FAILED) { printf("FAIL pool\n"); return 1; }
    for (unsigned i = 0; i < POOL; i++) pool_pa[i] = pagemap_pa(pool + (size_t)i * 4096);
    uint8_t *X = page_alloc(), *O1 = page_alloc(), *O2 = page_alloc(), *G1 = page_alloc(), *G2 = page_alloc();
    uint64_t xp = v2p(X), o1 = v2p(O1), o2 = v2p(O2), g1 = v2p(G1), g2 = v2p(G2);
    printf("vtd-qemu: pages X %#llx O1 %#llx O2 %#llx G1 %#llx G2 %#llx\n", (unsigned long long)xp,
           (unsigned long long)o1, (unsigned long long)o2, (unsigned long long)g1, (unsigned long long)g2);

    struct edu edus[2];
    unsigned ne = find_edus(edus, 2);
    CHECK(ne == 2, "%u edu devices", ne);
    if (ne != 2) return 1;
    struct edu *guest = &edus[0], *own = &edus[1];

    /* Before translation: both devices reach every page (the test's own baseline). */
    CHECK(dma_write_test(guest, G1, g1, X, xp, 0x11), "baseline: guest edu -> X without translation");

    /* 3. tables and translation: the hypervisor's boot-time sequence */
    static struct iommu_range ram[64];
    unsigned nram = read_ram(ram, 64);
    struct iommu_range excl[1] = { { xp, 4096 } }, ownr[2] = { { o1, 4096 }, { o2, 4096 } };
    struct iommu_bdf ownd[1] = { { (uint8_t)own->bus, (uint8_t)own->dev, (uint8_t)own->fn } };
    struct iommu_layout l = { ram, nram, excl, 1, NULL, 0, ownd, 1, ownr, 2 };
    static struct dmar_info di;
    static struct iommu_boot_result br;
    enum iommu_boot_state bs = iommu_boot(tbl, (size_t)n, &l, &ops, &unit_ops, &di, &br);
    CHECK(bs == IOMMU_BOOT_ON && br.units_on == 1 && br.nunits == 1 && opened == 1,
          "iommu_boot: state %d, %u of %u units on, stage %d err %d", bs, br.units_on, br.nunits,
          br.stage, br.err);
    if (bs != IOMMU_BOOT_ON) return 1;
    uint64_t cap = r64((void *)regs, VTD_REG_CAP), ecap = r64((void *)regs, VTD_REG_ECAP);
    printf("vtd-qemu: iommu_boot: unit %#llx ver %#x cap %#llx ecap %#llx; tables: %u levels, "
           "%u pages, 2M %d 1G %d; gsts %#x\n", (unsigned long long)di.units[0].reg_base,
           r32((void *)regs, VTD_REG_VER), (unsigned long long)cap, (unsigned long long)ecap,
           br.tables.levels, br.tables.pages, br.tables.has_2m, br.tables.has_1g,
           r32((void *)regs, VTD_REG_GSTS));
    CHECK(r32((void *)regs, VTD_REG_GSTS) & VTD_GCMD_TE, "translation enabled (GSTS.TES)");

    /* 4. what lands and what faults */
    CHECK(dma_write_test(guest, G1, g1, G2, g2, 0x22), "guest edu -> RAM page G2 lands");
    CHECK(!dma_write_test(guest, G1, g1, X, xp, 0x33), "guest edu -> excluded page X blocked");
    expect_fault(guest, xp, "guest edu -> X");
    CHECK(!dma_write_test(guest, G1, g1, O1, o1, 0x44), "guest edu -> own page O1 blocked");
    expect_fault(guest, o1, "guest edu -> O1");
    CHECK(dma_write_test(own, O2, o2, O1, o1, 0x55), "own edu -> own page O1 lands");
    CHECK(!dma_write_test(own, O2, o2, G2, g2, 0x66), "own edu -> RAM page G2 blocked");
    expect_fault(own, g2, "own edu -> G2");
    return check_summary("vtd-qemu");
}
