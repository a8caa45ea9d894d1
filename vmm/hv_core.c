/* hv_core.c - globals, memory allocator, address conversion and logging (the fatal path,
 * hv_panic, is hv_fatal.c). */
#include "hv_core.h"
#include "cpu.h"
#include "format.h"
#include "vcpu.h"

struct hv_globals hv;

#define LOG_PORT_E9     0xe9
#define COM1_BASE       0x3f8
#define COM1_LSR        (COM1_BASE + 5)
#define COM1_LSR_THRE   0x20

static struct spinlock log_lock;

/* Writers of whole lines to the log ports (trace's debug-port sink) hold this too, so a log
 * line of one CPU never lands inside another CPU's line. */
void hv_log_lock(void) { spin_lock(&log_lock); }
void hv_log_unlock(void) { spin_unlock(&log_lock); }

void spin_lock(struct spinlock *l)
{
    uint64_t t0 = 0;
    while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE))
        while (l->v) {
            cpu_pause();
            /* The fatal path's CPU never waits for good on a CPU it stopped (hv_fatal.c). */
            if (hv_fatal_stopping && hv_fatal_lock_expired(&t0))
                return;
        }
}

void spin_unlock(struct spinlock *l) { __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE); }

void hv_core_init(struct hvt_boot_info *bi)
{
    hv.bi = bi;
    hv.cpu_count = bi->cpu_count;
    uint64_t next = (bi->free_phys + X86_PAGE_SIZE - 1) & ~(X86_PAGE_SIZE - 1);
    mem_plan_make(&hv.plan, bi->region_size, hv.cpu_count, next - bi->region_phys);
    hv.pool = (struct mem_pool){ next, bi->region_phys + bi->region_size, hv.plan.reserve };
}

bool hv_in_region(uint64_t pa)
{
    return pa >= hv.bi->region_phys && pa < hv.bi->region_phys + hv.bi->region_size;
}

uint64_t hv_virt_to_phys(const void *va)
{
    uint64_t v = (uint64_t)va;
    if (v >= HVT_IMAGE_LINK_BASE)
        return hv.bi->region_phys + (v - HVT_IMAGE_LINK_BASE);
    if (v >= HVT_UC_ALIAS_BASE)
        return v - HVT_UC_ALIAS_BASE;
    return v;                                   /* the identity-mapped direct map */
}

void *hv_phys_to_virt(uint64_t pa)
{
    if (hv_in_region(pa))                       /* our own memory: through the image map */
        return (void *)(HVT_IMAGE_LINK_BASE + (pa - hv.bi->region_phys));
    return (void *)pa;
}

void *hv_phys_to_virt_uc(uint64_t pa) { return (void *)(HVT_UC_ALIAS_BASE + pa); }

static struct spinlock alloc_lock;
_Static_assert(HV_BUDGET_PARTS == MEM_PARTS, "hv_api.h's parts are mem_budget.h's");

static void *pool_alloc(size_t npages, bool vmm)
{
    uint64_t pa;
    spin_lock(&alloc_lock);
    bool ok = mem_pool_take(&hv.pool, (uint64_t)npages * X86_PAGE_SIZE, vmm, &pa);
    spin_unlock(&alloc_lock);
    if (!ok)
        return 0;
    void *va = hv_phys_to_virt(pa);
    memset(va, 0, npages * X86_PAGE_SIZE);
    return va;
}

void *hv_alloc_pages(size_t npages) { return pool_alloc(npages, false); }
void *vmm_alloc_pages(size_t npages) { return pool_alloc(npages, true); }

void hv_mem_start_done(void)
{
    spin_lock(&alloc_lock);
    mem_plan_make(&hv.plan, hv.bi->region_size, hv.cpu_count, hv.pool.next - hv.bi->region_phys);
    hv.start_done = true;
    spin_unlock(&alloc_lock);
}

/* Before the start is done (a layer setting up) the base is what is taken so far. */
uint64_t hv_budget_limit(const struct hv_budget *b)
{
    struct mem_plan p = hv.plan;
    if (!hv.start_done)
        mem_plan_make(&p, hv.bi->region_size, hv.cpu_count, hv.pool.next - hv.bi->region_phys);
    return mem_plan_share(&p, b->parts);
}

void *hv_budget_pages(struct hv_budget *b, size_t npages)
{
    uint64_t bytes = (uint64_t)npages * X86_PAGE_SIZE;
    if (!mem_budget_charge(&b->used, hv_budget_limit(b), bytes))
        return 0;
    void *p = hv_alloc_pages(npages);
    if (!p)
        mem_budget_uncharge(&b->used, bytes);
    return p;
}

void *hv_budget_alloc(struct hv_budget *b, size_t bytes)
{
    uint64_t charged = bytes >= X86_PAGE_SIZE ? HV_PAGES(bytes) * X86_PAGE_SIZE : (bytes + 15) & ~(uint64_t)15;
    if (!mem_budget_charge(&b->used, hv_budget_limit(b), charged))
        return 0;
    void *p = hv_alloc(bytes);
    if (!p)
        mem_budget_uncharge(&b->used, charged);
    return p;
}

/* Small allocations are carved from pages taken as needed (never freed, like the pages). */
void *hv_alloc(size_t bytes)
{
    static uint8_t *cur;
    static size_t left;
    bytes = (bytes + 15) & ~(size_t)15;
    if (bytes >= X86_PAGE_SIZE)
        return hv_alloc_pages((bytes + X86_PAGE_SIZE - 1) / X86_PAGE_SIZE);
    spin_lock(&alloc_lock);
    if (left < bytes) {
        spin_unlock(&alloc_lock);
        uint8_t *page = hv_alloc_pages(1);
        if (!page)
            return 0;
        spin_lock(&alloc_lock);
        cur = page;
        left = X86_PAGE_SIZE;
    }
    void *p = cur;
    cur += bytes;
    left -= bytes;
    spin_unlock(&alloc_lock);
    return p;
}

bool hv_gpa_is_ram(uint64_t gpa, uint64_t len)
{
    /* Called for every guest page-table level a walk reads: remember the last RAM range hit
     * (per CPU would be tidier; a shared hint is only ever a correct range or a miss). */
    static const struct hvt_mem_range *last;
    if (hv_in_region(gpa) || hv_in_region(gpa + len - 1))
        return false;
    const struct hvt_mem_range *r = last;
    if (r && gpa >= r->base && gpa + len <= r->base + r->size)
        return true;
    for (uint32_t i = 0; i < hv.bi->mem_range_count; i++) {
        r = &hv.bi->mem[i];
        if (r->kind != HVT_MEM_MMIO && gpa >= r->base && gpa + len <= r->base + r->size) {
            last = r;
            return true;
        }
    }
    return false;
}

unsigned hv_cpu_count(void) { return hv.cpu_count; }

static void log_emit(const char *s, size_t n)
{
    uint32_t f = hv.bi ? hv.bi->log_flags : HVL_LOG_E9;
    for (size_t i = 0; i < n; i++) {
        if (f & HVL_LOG_E9)
            hv_outb(LOG_PORT_E9, (uint8_t)s[i]);
        if (f & HVL_LOG_COM1) {
            for (int spin = 0; spin < 100000 && !(hv_inb(COM1_LSR) & COM1_LSR_THRE); spin++)
                cpu_pause();
            hv_outb(COM1_BASE, (uint8_t)s[i]);
        }
    }
}

void hv_vlog(const char *fmt, va_list ap)
{
    char buf[512];
    int n = hv_vsnprintf(buf, sizeof buf, fmt, ap);
    if (n > (int)sizeof buf - 1)
        n = sizeof buf - 1;
    spin_lock(&log_lock);
    log_emit(buf, (size_t)n);
    spin_unlock(&log_lock);
}

void hv_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hv_vlog(fmt, ap);
    va_end(ap);
}

void hv_mem_report(void)
{
    const struct hvt_boot_info *bi = hv.bi;
    hv_log("hvtrace: memory map of the hypervisor region [%lx, %lx) (%lu MiB):\n",
           bi->region_phys, bi->region_phys + bi->region_size, bi->region_size >> 20);
    hv_log("hvtrace:   image + loader page tables [%lx, %lx), mapped at %lx\n",
           bi->region_phys, bi->free_phys, HVT_IMAGE_LINK_BASE);
    hv_log("hvtrace:   allocated [%lx, %lx): EPT %u pages, per-CPU state, bitmaps, the layers' "
           "tables\n", bi->free_phys, hv.pool.next, hv.ept.tables);
    hv_log("hvtrace:   free [%lx, %lx), of which vmm/'s reserve %lu KiB (on-demand MMIO: %u EPT "
           "tables, views: %u tables per CPU, IOMMU: %u pages); budgets share out %lu KiB\n",
           hv.pool.next, hv.pool.end, hv.plan.reserve >> 10, hv.plan.mmio_tables,
           hv.plan.view_tables, hv.plan.iommu_pages, hv.plan.avail >> 10);
    hv_log("hvtrace:   direct map [0, %lx), uncached alias at %lx; EPT covers [0, %lx)\n",
           bi->direct_map_limit, HVT_UC_ALIAS_BASE, hv.ept_limit);
}
