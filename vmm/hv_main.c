/*
 * hv_main.c - the hypervisor image's two entry points (see include/hvt_bootinfo.h):
 *   hv_entry_init: once, on the BSP: memory, VMX capabilities, EPT, per-CPU state.
 *   hv_entry_cpu:  on every CPU: VMXON and VMLAUNCH into the CPU's own state.
 */
#include "hv_core.h"
#include "hv_hooks.h"
#include "hv_guest.h"
#include "vmx_setup.h"
#include "vmx_exit.h"
#include "gmem.h"
#include "cpu.h"
#include "hvt_hypercall.h"

int hv_entry_init(struct hvt_boot_info *bi);
int hv_entry_cpu(struct hvt_boot_info *bi, struct hvt_cpu_launch *l);

struct hv_hooks hv_hooks;
static struct vcpu vcpus[HVT_MAX_CPUS];

struct vcpu *vcpu_get(unsigned index) { return &vcpus[index]; }

__attribute__((weak)) int hv_policy_init(struct hvt_boot_info *bi) { return 0; }
/* The dedicated NIC (net/net_attach.c) when it is linked in (HVT_NET != 0). It chains its
 * hooks in front of the policy's, so it is attached after hv_policy_init. */
__attribute__((weak)) int net_attach(struct hvt_boot_info *bi);

#define IO_BITMAP_PORTS_PER_PAGE 0x8000u   /* bitmap A: ports 0-0x7fff, B: 0x8000-0xffff */
#define PAGE_SIZE 4096ull
#define CANARY_MIX 0x68767472616365ull     /* "hvtrace" */

/* Make port accesses to 'port' (and the width of the access) exit (SDM 25.6.4). */
static void io_intercept(uint16_t port, unsigned width)
{
    for (unsigned p = port; p < (unsigned)port + width && p <= 0xffff; p++) {
        uint8_t *bm = p < IO_BITMAP_PORTS_PER_PAGE ? hv.io_bitmap_a : hv.io_bitmap_b;
        unsigned bit = p % IO_BITMAP_PORTS_PER_PAGE;
        bm[bit / 8] |= (uint8_t)(1u << (bit % 8));
    }
}

void hv_io_intercept(uint16_t port, unsigned width) { io_intercept(port, width); }

/* MSR bitmap layout (SDM 25.6.9): read-low, read-high, write-low, write-high, 1 KiB each. */
#define MSR_BITMAP_READ_LOW   0
#define MSR_BITMAP_READ_HIGH  1024
#define MSR_BITMAP_WRITE_LOW  2048
#define MSR_BITMAP_WRITE_HIGH 3072
#define MSR_HIGH_BASE         0xc0000000u
#define MSR_RANGE             0x2000u

void hv_msr_intercept(uint32_t msr, bool read, bool write)
{
    unsigned rd, wr, bit;
    if (msr < MSR_RANGE) {
        rd = MSR_BITMAP_READ_LOW; wr = MSR_BITMAP_WRITE_LOW; bit = msr;
    } else if (msr - MSR_HIGH_BASE < MSR_RANGE) {
        rd = MSR_BITMAP_READ_HIGH; wr = MSR_BITMAP_WRITE_HIGH; bit = msr - MSR_HIGH_BASE;
    } else {
        return;                                 /* outside the bitmap: always exits */
    }
    if (read)
        hv.msr_bitmap[rd + bit / 8] |= (uint8_t)(1u << (bit % 8));
    if (write)
        hv.msr_bitmap[wr + bit / 8] |= (uint8_t)(1u << (bit % 8));
}

static void *ept_alloc(void) { return hv_alloc_pages(1); }
static int ept_memtype(uint64_t base, uint64_t size) { return mtrr_type_range(&hv.mtrr, base, size); }
static const struct ept_ops ept_ops = {
    .alloc_page = ept_alloc, .virt_to_phys = hv_virt_to_phys, .phys_to_virt = hv_phys_to_virt,
    .memtype = ept_memtype,
};

int hv_ept_set_exec(uint64_t gpa, bool exec)
{
    uint64_t page = gpa & ~(PAGE_SIZE - 1), hpa, perms;
    unsigned memtype;
    if (!hv_gpa_is_ram(page, PAGE_SIZE))
        return -1;
    spin_lock(&hv.ept_lock);
    int rc = -1;
    /* Only the identity map of RAM: never the dummy page standing in for our region. */
    if (ept_translate(&hv.ept, page, &hpa, &perms, &memtype) && hpa == page) {
        perms = exec ? perms | EPT_EXEC : perms & ~EPT_EXEC;
        rc = ept_map_4k(&hv.ept, page, page, perms, memtype);
        __atomic_add_fetch(&hv.ept_epoch, 1, __ATOMIC_RELEASE);
        /* Every CPU's next exit goes through the full dispatch, which flushes its EPT TLB. */
        for (unsigned i = 0; i < hv.cpu_count; i++)
            hv_cpu_kick(i);
    }
    spin_unlock(&hv.ept_lock);
    if (!rc) {
        vmx_invept(INVEPT_SINGLE_CONTEXT, ept_eptp(&hv.ept));
        vcpu_current()->ept_epoch = hv.ept_epoch;
    }
    return rc;
}

/* Guest RAM only (after EPT: the hidden region reads as the dummy page). */
static void *gmem_map(uint64_t gpa)
{
    if (hv_in_region(gpa))
        return hv.dummy_page;
    return hv_gpa_is_ram(gpa, PAGE_SIZE) ? hv_phys_to_virt(gpa) : 0;
}
static const struct gmem_ops gmem_ops = { .map_gpa = gmem_map };

static int build_ept(void)
{
    uint64_t ept_cap = cpu_rdmsr(MSR_IA32_VMX_EPT_VPID_CAP);
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
    for (uint64_t pa = hv.bi->region_phys; pa < hv.bi->region_phys + hv.bi->region_size; pa += PAGE_SIZE)
        if (ept_map_4k(&hv.ept, pa, dummy, EPT_RWX, MTRR_WB))
            return -1;
    return 0;
}

int hv_entry_init(struct hvt_boot_info *bi)
{
    if (bi->magic != HVT_BOOTINFO_MAGIC)
        return -1;
    hv_core_init(bi);
    hv_log("hvtrace: hypervisor %u.%u.%u starting on %u CPU(s)\n", HVT_VERSION_MAJOR,
           HVT_VERSION_MINOR, HVT_VERSION_PATCH, bi->cpu_count);
    if (bi->cpu_count == 0 || bi->cpu_count > HVT_MAX_CPUS)
        return -2;
    if (vmx_check_caps())
        return -3;
    mtrr_read(&hv.mtrr, cpu_rdmsr, hv.phys_bits);
    hv.dummy_page = hv_alloc_pages(1);
    hv.canary_page = hv_alloc_pages(1);
    hv.io_bitmap_a = hv_alloc_pages(1);
    hv.io_bitmap_b = hv_alloc_pages(1);
    hv.msr_bitmap = hv_alloc_pages(1);         /* all zero: no MSR exits */
    if (!hv.dummy_page || !hv.canary_page || !hv.io_bitmap_a || !hv.io_bitmap_b || !hv.msr_bitmap)
        return -4;
    /* The canary: a per-boot value filling one page of hypervisor memory. The guest-side
     * test (hvtrace-guest memcheck) must never find it. */
    hv.canary = (cpu_rdtsc() * 0x9e3779b97f4a7c15ull) ^ CANARY_MIX;
    for (unsigned i = 0; i < PAGE_SIZE / 8; i++)
        hv.canary_page[i] = hv.canary;
    if (build_ept())
        return -5;
    gmem_set_ops(&gmem_ops);
    /* The one I/O exit we need: the power-off write, to print the exit summary. (Not 0xcf9:
     * every 32-bit PCI config address write to 0xcf8 overlaps it and would exit.) */
    if (bi->pm1a_cnt_port)
        io_intercept(bi->pm1a_cnt_port, 2);
    if (bi->pm1b_cnt_port)
        io_intercept(bi->pm1b_cnt_port, 2);
    for (unsigned i = 0; i < bi->cpu_count; i++)
        if (vmx_alloc_cpu(&vcpus[i], i, bi->apic_ids[i]))
            return -4;
    int rc = hv_policy_init(bi);
    if (rc)
        return rc;
    if (net_attach && net_attach(bi))
        hv_log("hvtrace: dedicated NIC not attached: running without a stream\n");
    hv_mem_report();
    return 0;
}

int hv_entry_cpu(struct hvt_boot_info *bi, struct hvt_cpu_launch *l)
{
    if (l->cpu_index >= hv.cpu_count)
        return -1;
    struct vcpu *v = &vcpus[l->cpu_index];
    int r = vmx_start_cpu(v, l);                /* returns only on failure */
    return r;
}
