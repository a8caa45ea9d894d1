/* hv_ept.c - the guest's EPT (Intel SDM 29.3 "The Extended Page Table Mechanism (EPT)"): built
 * once at start, then edited through hv_ept.h's services. */
#include "hv_ept_int.h"
#include "hv_core.h"
#include "hv_guest.h"
#include "vcpu.h"
#include "vmx.h"
#include "cpu.h"
#include "vmx_exit.h"
#include "insn_store.h"
#include "pci_mcfg.h"

/* EPT tables are vmm/'s own: they may take the reserve (mem_budget.h), within the caps of
 * hv.plan: on-demand MMIO's (hv_ept_map_mmio) and, while a view is edited, what that CPU's
 * view may still hold (view_left; -1: no view edit, no limit). Under hv.ept_lock. */
static long view_left = -1;
static void *ept_alloc(void)
{
    if (view_left == 0)
        return 0;
    void *p = vmm_alloc_pages(1);
    if (p && view_left > 0)
        view_left--;
    return p;
}
static int ept_memtype(uint64_t base, uint64_t size) { return mtrr_type_range(&hv.mtrr, base, size); }
static const struct ept_ops ept_ops = {
    .alloc_page = ept_alloc, .virt_to_phys = hv_virt_to_phys, .phys_to_virt = hv_phys_to_virt,
    .memtype = ept_memtype,
};

/* After an edit of the base at gpa: every CPU's view follows it; every CPU's next exit goes
 * through the full dispatch, which flushes its EPT TLB when the epoch moved; this CPU flushes
 * now (flush_here). Called with ept_lock held. */
static void edit_done_locked(uint64_t gpa)
{
    for (unsigned i = 0; i < hv.cpu_count; i++)
        if (vcpu_get(i)->view.pml4)
            ept_view_sync(&vcpu_get(i)->view, gpa);
    __atomic_add_fetch(&hv.ept_epoch, 1, __ATOMIC_RELEASE);
    for (unsigned i = 0; i < hv.cpu_count; i++)
        hv_cpu_kick(i);
}

/* This CPU takes up its EPT edits: the view or the shared map as eptp_next says, a flush. */
void hv_ept_refresh(struct vcpu *v)
{
    v->ept_epoch = hv.ept_epoch;
    if (v->eptp != v->eptp_next) {
        v->eptp = v->eptp_next;
        vmx_write(VMCS_EPT_POINTER, v->eptp);
    }
    vmx_invept(hv.invept_type, v->eptp);
}

static void flush_here(void)
{
    if (!hv.started)
        return;                       /* edits while the image starts: no CPU has an EPT TLB */
    hv_ept_refresh(vcpu_current());
}

/* After an edit of CPU cpu's view (ept_lock held, released here): the root it should run on
 * (its view only while that maps pages of its own), taken up at its next full exit, or now. */
static void view_edit_done_unlock(unsigned cpu)
{
    struct vcpu *v = vcpu_get(cpu);
    v->eptp_next = v->view.own ? ept_view_eptp(&v->view) : ept_eptp(&hv.ept);
    __atomic_add_fetch(&hv.ept_epoch, 1, __ATOMIC_RELEASE);   /* before the kick it must see */
    hv_cpu_kick(cpu);
    spin_unlock(&hv.ept_lock);
    if (hv.started && cpu == hv_cpu_id())
        flush_here();
}

int hv_ept_set_exec(uint64_t gpa, bool exec)
{
    uint64_t page = gpa & X86_PAGE_MASK, hpa, perms;
    unsigned memtype;
    if (!hv_gpa_is_ram(page, X86_PAGE_SIZE))
        return -1;
    spin_lock(&hv.ept_lock);
    int rc = -1;
    /* Only the identity map of RAM: never the dummy page standing in for our region. */
    if (ept_translate(&hv.ept, page, &hpa, &perms, &memtype) && hpa == page) {
        perms = exec ? perms | EPT_EXEC : perms & ~EPT_EXEC;
        rc = ept_map_4k(&hv.ept, page, page, perms, memtype);
        edit_done_locked(page);
    }
    spin_unlock(&hv.ept_lock);
    if (!rc)
        flush_here();
    return rc;
}

static int map_pages(uint64_t gpa, uint64_t size, uint64_t hpa, uint64_t perms, unsigned memtype)
{
    int rc = 0;
    spin_lock(&hv.ept_lock);
    for (uint64_t pa = gpa & X86_PAGE_MASK; pa < gpa + size && !rc; pa += X86_PAGE_SIZE) {
        rc = ept_map_4k(&hv.ept, pa, hpa ? hpa : pa, perms, memtype);
        edit_done_locked(pa);
    }
    spin_unlock(&hv.ept_lock);
    flush_here();
    return rc;
}

bool hv_ept_wait_all(uint64_t max_tsc)
{
    uint64_t want = __atomic_load_n(&hv.ept_epoch, __ATOMIC_ACQUIRE);
    unsigned me = hv_cpu_id();
    flush_here();
    for (uint64_t t0 = hv_rdtsc();;) {
        bool all = true;
        for (unsigned i = 0; i < hv.cpu_count; i++)
            if (i != me && __atomic_load_n(&vcpu_get(i)->ept_epoch, __ATOMIC_ACQUIRE) < want)
                all = false;
        if (all)
            return true;
        if (hv_rdtsc() - t0 > max_tsc)
            return false;
        __asm__ volatile("pause");
    }
}

/* High MMIO beyond the map built at start, on first touch: identity, uncached, with the largest
 * page (1 GiB, else 2 MiB, else 4 KiB) whose range nothing maps yet (ept_map_empty), so a
 * device's BAR of gigabytes (a GPU's resizable BAR) costs a handful of mappings and no page
 * mapped before (a hidden NIC's BAR) is covered. Any address below MAXPHYADDR reaches here (a
 * guest's page tables may point anywhere); everything above the start-up map is device space
 * (the map ends at the top of RAM), so mapping it is no leak. The bound: HV_MMIO_PAGES
 * mappings, and the tables they need, at most hv.plan.mmio_tables (a mapping can need three: a
 * page-directory-pointer table, a page directory, a page table; SDM Vol. 3C 29.3.2 "EPT
 * Translation Mechanism"), which vmm/'s reserve holds (mem_budget.h: MEM_MMIO_TABLES, fewer in
 * a small region). Past it the access is refused (the caller gives the guest #GP). */
#define HV_MMIO_PAGES  4096u
static struct { unsigned pages, tables, refused; uint64_t bytes; } mmio;   /* under hv.ept_lock */

int hv_ept_map_mmio(uint64_t gpa)
{
    uint64_t page = gpa & X86_PAGE_MASK, hpa, perms;
    unsigned memtype;
    if (hv_in_region(gpa) || gpa < hv.ept_limit || (hv.phys_bits < 64 && (gpa >> hv.phys_bits)))
        return -1;
    spin_lock(&hv.ept_lock);
    int rc = 0;
    if (ept_translate(&hv.ept, page, &hpa, &perms, &memtype)) {
        /* Another CPU mapped it meanwhile (or it is mapped and this was a permission fault:
         * the identity map of MMIO is RWX, so that is not one of ours). */
        rc = hpa == page && (perms & EPT_RWX) == EPT_RWX ? 0 : -1;
        spin_unlock(&hv.ept_lock);
        return rc;
    }
    if (mmio.pages >= HV_MMIO_PAGES || mmio.tables + 3 > hv.plan.mmio_tables) {
        mmio.refused++;
        spin_unlock(&hv.ept_lock);
        return -1;
    }
    unsigned before = hv.ept.tables;
    int64_t mapped = ept_map_empty(&hv.ept, page, EPT_RWX, MTRR_UC);
    mmio.tables += hv.ept.tables - before;     /* also when a later level's allocation failed */
    rc = mapped > 0 ? 0 : -1;
    if (!rc) {
        mmio.pages++;
        mmio.bytes += (uint64_t)mapped;
        edit_done_locked(page);
    }
    spin_unlock(&hv.ept_lock);
    flush_here();
    return rc;
}

void hv_ept_mmio_usage(unsigned *pages, unsigned *tables, unsigned *refused)
{
    spin_lock(&hv.ept_lock);
    *pages = mmio.pages;
    *tables = mmio.tables;
    *refused = mmio.refused;
    spin_unlock(&hv.ept_lock);
}

int hv_ept_views_init(void)
{
    for (unsigned i = 0; i < hv.cpu_count; i++) {
        struct vcpu *v = vcpu_get(i);
        if (ept_view_init(&v->view, &hv.ept))
            return -1;
        v->eptp = v->eptp_next = ept_eptp(&hv.ept);
    }
    return 0;
}

int hv_ept_view_map(unsigned cpu, uint64_t gpa, void *page, uint64_t perms)
{
    uint64_t hpa, p;
    unsigned memtype;
    uint64_t gpage = gpa & X86_PAGE_MASK;
    if (cpu >= hv.cpu_count || !hv_gpa_is_ram(gpage, X86_PAGE_SIZE) || !ept_perms_ok(perms, hv.ept_cap))
        return -1;
    if (page && !hv_in_region(hpa = hv_virt_to_phys(page)))
        return -1;                              /* only hypervisor pages stand in for guest ones */
    spin_lock(&hv.ept_lock);
    int rc = -1;
    /* A view holds at most hv.plan.view_tables tables (the reserve's share per CPU): a map
     * that needs more is refused; one whose tables exist (a step-over) never is. */
    struct ept_view *view = &vcpu_get(cpu)->view;
    view_left = view->tables < hv.plan.view_tables ? (long)(hv.plan.view_tables - view->tables) : 0;
    /* The guest's own page, or a page in its place, with the base's memory type. */
    if (ept_translate(&hv.ept, gpage, &p, &(uint64_t){ 0 }, &memtype) && p == gpage)
        rc = ept_view_map_4k(view, gpage, page ? hpa : gpage, perms & EPT_RWX, memtype);
    view_left = -1;
    view_edit_done_unlock(cpu);
    return rc;
}

void hv_ept_view_unmap(unsigned cpu, uint64_t gpa)
{
    if (cpu >= hv.cpu_count)
        return;
    spin_lock(&hv.ept_lock);
    ept_view_unmap_4k(&vcpu_get(cpu)->view, gpa & X86_PAGE_MASK);
    view_edit_done_unlock(cpu);
}

int hv_ept_hide(uint64_t gpa, uint64_t size)
{
    return map_pages(gpa, size, hv_virt_to_phys(hv.dummy_page), EPT_RWX, MTRR_WB);
}

bool hv_ept_exec_only(void) { return hv.ept_cap & EPT_CAP_EXEC_ONLY; }

int hv_ept_map_page(uint64_t gpa, void *page, uint64_t perms)
{
    uint64_t hpa = hv_virt_to_phys(page);
    if (!hv_in_region(hpa) || !ept_perms_ok(perms, hv.ept_cap))
        return -1;                              /* only hypervisor pages stand in for guest ones */
    return map_pages(gpa, X86_PAGE_SIZE, hpa, perms & EPT_RWX, MTRR_WB);
}

/* Pages shown read-only with writes dropped (hv_ept_drop_writes): vmm/'s own table, asked
 * before any module's EPT handler (hv_ept_drop_write_fault), so a module's catch-all handler
 * never sees these writes and they take no module slot. Appended while the image starts. */
#define DROP_RANGES 64
static struct { uint64_t lo, hi; } drop_ranges[DROP_RANGES];
static unsigned n_drop;

/* A write there: skip a MOV store, #GP for anything else (64-bit code only: the firmware
 * and Linux run there; CS.L is bit 13 of the access rights, SDM 25.4.1). */
#define CS_AR_L        (1u << 13)
#define VEC_GP_FAULT   13u
/* The MOV store that faulted (64-bit code only: the firmware and Linux run there; CS.L is bit
 * 13 of the access rights, SDM 25.4.1): its length, 0 for anything else. */
static unsigned faulting_store(struct insn_store *st)
{
    uint8_t insn[15];
    size_t len = 0;
    if (hv_guest_read(HV_GUEST_CS_AR) & CS_AR_L) {
        struct gmem_paging p;
        hv_guest_paging(&p);
        len = gmem_read_gva(&p, hv_guest_read(HV_GUEST_RIP), insn, sizeof insn);
    }
    return len ? insn_store_decode(insn, len, st) : 0;
}

bool hv_ept_drop_write_fault(uint64_t gpa, uint64_t qual)
{
    unsigned n = __atomic_load_n(&n_drop, __ATOMIC_ACQUIRE), i;
    for (i = 0; i < n && !(gpa >= drop_ranges[i].lo && gpa < drop_ranges[i].hi); i++)
        ;
    if (i == n || !(qual & EPT_QUAL_WRITE))
        return false;                           /* not ours; reads and fetches are allowed */
    struct insn_store st;
    unsigned len = faulting_store(&st);
    if (len)
        hv_guest_write(HV_GUEST_RIP, hv_guest_read(HV_GUEST_RIP) + len);
    else
        vmx_inject_exception(VEC_GP_FAULT, true, 0);
    return true;
}

/* ECAM windows guarded since start (hv_ept_ecam_guard); read-only afterwards. */
static struct mcfg_info ecam;

int hv_ept_ecam_guard(const void *mcfg, uint32_t len)
{
    int rc = len <= HVT_MCFG_MAX ? mcfg_parse(mcfg, len, &ecam) : MCFG_E_LIMIT;
    if (rc) {
        ecam.n = 0;
        hv_log("hvtrace: the MCFG does not check out (%s): ECAM writes not guarded\n",
               mcfg_strerror(rc));
        return -1;
    }
    /* The windows must be device memory the direct map reaches (the hypervisor performs the
     * guest's writes through its uncached alias), outside RAM and the region. */
    for (unsigned i = 0; i < ecam.n; i++) {
        const struct mcfg_alloc *a = &ecam.alloc[i];
        uint64_t lo = a->base + ((uint64_t)a->bus_start << 20), hi = a->base + (((uint64_t)a->bus_end + 1) << 20);
        bool bad = hi > hv.bi->direct_map_limit;
        for (uint64_t pa = lo; pa < hi && !bad; pa += X86_PAGE_SIZE)
            bad = hv_in_region(pa) || hv_gpa_is_ram(pa, X86_PAGE_SIZE);
        if (bad) {
                hv_log("hvtrace: ECAM window [%lx, %lx) overlaps RAM, the hypervisor or lies beyond "
                       "the direct map: ECAM writes not guarded\n", lo, hi);
                ecam.n = 0;
                return -1;
            }
    }
    unsigned before = hv.ept.tables;
    spin_lock(&hv.ept_lock);
    for (unsigned i = 0; i < ecam.n && !rc; i++) {
        const struct mcfg_alloc *a = &ecam.alloc[i];
        uint64_t lo = a->base + ((uint64_t)a->bus_start << 20), hi = a->base + (((uint64_t)a->bus_end + 1) << 20);
        for (uint64_t pa = lo; pa < hi && !rc; pa += X86_PAGE_SIZE)
            rc = ept_map_4k(&hv.ept, pa, pa, EPT_READ | EPT_EXEC, MTRR_UC);
    }
    spin_unlock(&hv.ept_lock);
    if (rc) {
        /* Half guarded: the pages done stay read-only and their writes are still performed. */
        hv_log("hvtrace: out of memory for the EPT tables of the ECAM windows: ECAM writes "
               "only partly guarded\n");
        return -1;
    }
    hv_log("hvtrace: ECAM: %u window(s) read-only to the guest, writes performed without any "
           "bridge's bus numbers (%u EPT pages)\n", ecam.n, hv.ept.tables - before);
    return 0;
}

/* mcfg_guarded_write's store: ctx is the function's page through the uncached alias. */
static void ecam_store(void *ctx, uint16_t off, unsigned size, uint64_t v)
{
    volatile uint8_t *dst = (volatile uint8_t *)ctx + off;
    switch (size) {
    case 1: *dst = (uint8_t)v; break;
    case 2: *(volatile uint16_t *)dst = (uint16_t)v; break;
    case 4: *(volatile uint32_t *)dst = (uint32_t)v; break;
    default: *(volatile uint64_t *)dst = v; break;
    }
}

bool hv_ept_ecam_write_fault(struct guest_regs *g, uint64_t gpa, uint64_t qual)
{
    struct mcfg_target t;
    if (!(qual & EPT_QUAL_WRITE) || !mcfg_classify(&ecam, gpa, &t))
        return false;
    struct insn_store st;
    unsigned len = faulting_store(&st);
    if (!len || t.offset + st.size > MCFG_FUNC_SPACE) {
        vmx_inject_exception(VEC_GP_FAULT, true, 0);   /* not a MOV, or across two functions */
        return true;
    }
    uint64_t regs[GPR_COUNT];
    for (unsigned i = 0; i < GPR_COUNT; i++)
        regs[i] = g->r[i];
    regs[GPR_RSP] = hv_guest_read(HV_GUEST_RSP);
    uint64_t v = insn_store_value(&st, regs);
    volatile uint8_t *page = hv_phys_to_virt_uc(gpa - t.offset);
    mcfg_guarded_write(page[MCFG_REG_HEADER_TYPE], t.offset, st.size, v, ecam_store, (void *)page);
    hv_guest_write(HV_GUEST_RIP, hv_guest_read(HV_GUEST_RIP) + len);
    return true;
}

int hv_ept_drop_writes(uint64_t gpa, uint64_t size, void *page)
{
    uint64_t hpa = 0;
    if (page && !hv_in_region(hpa = hv_virt_to_phys(page)))
        return -1;                              /* only hypervisor pages stand in for guest ones */
    uint64_t lo = gpa & X86_PAGE_MASK, hi = (gpa + size + X86_PAGE_SIZE - 1) & X86_PAGE_MASK;
    if (size == 0 || hi <= lo || hv_in_region(lo) || hv_in_region(hi - 1) ||
        hv_gpa_is_ram(lo, hi - lo) || n_drop >= DROP_RANGES)
        return -1;                              /* device memory only, and room to note it */
    for (uint64_t pa = lo; pa < hi; pa += X86_PAGE_SIZE)
        if (hv_gpa_is_ram(pa, X86_PAGE_SIZE))
            return -1;
    drop_ranges[n_drop].lo = lo;
    drop_ranges[n_drop].hi = hi;
    __atomic_store_n(&n_drop, n_drop + 1, __ATOMIC_RELEASE);
    int rc = 0;
    spin_lock(&hv.ept_lock);
    for (uint64_t pa = lo; pa < hi && !rc; pa += X86_PAGE_SIZE) {
        rc = ept_map_4k(&hv.ept, pa, page ? hpa : pa, EPT_READ | EPT_EXEC, page ? MTRR_WB : MTRR_UC);
        edit_done_locked(pa);
    }
    spin_unlock(&hv.ept_lock);
    flush_here();
    return rc;
}

/* Guest RAM only (after EPT: the hidden region reads as the dummy page). */
static void *gmem_map(uint64_t gpa)
{
    if (hv_in_region(gpa))
        return hv.dummy_page;
    return hv_gpa_is_ram(gpa, X86_PAGE_SIZE) ? hv_phys_to_virt(gpa) : 0;
}
static const struct gmem_ops gmem_ops = { .map_gpa = gmem_map };

int hv_ept_build(void)
{
    uint64_t ept_cap = hv_rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
    if (ept_init(&hv.ept, &ept_ops, ept_cap & EPT_CAP_2MB, ept_cap & EPT_CAP_1GB))
        return -1;
    /* Identity map everything the guest may touch: RAM and MMIO up to the top of the
     * firmware's map, at least 4 GiB (local APIC, I/O APIC, flash); higher MMIO is mapped on
     * first touch (handle_ept_violation). */
    uint64_t top = 1ull << 32;
    for (uint32_t i = 0; i < hv.bi->mem_range_count; i++) {
        uint64_t end = hv.bi->mem[i].base + hv.bi->mem[i].size;
        if (end > top)
            top = end;
    }
    hv.ept_limit = (top + EPT_PAGE_1G - 1) & ~(EPT_PAGE_1G - 1);
    if (ept_map_identity(&hv.ept, 0, hv.ept_limit))
        return -1;
    /* Hide the hypervisor: every page of its region shows the guest one dummy page, so the
     * guest (even through /dev/mem) can neither read nor corrupt hypervisor memory. */
    uint64_t dummy = hv_virt_to_phys(hv.dummy_page);
    for (uint64_t pa = hv.bi->region_phys; pa < hv.bi->region_phys + hv.bi->region_size; pa += X86_PAGE_SIZE)
        if (ept_map_4k(&hv.ept, pa, dummy, EPT_RWX, MTRR_WB))
            return -1;
    gmem_set_ops(&gmem_ops);
    return 0;
}
