/*
 * vmm_init.c - vmm/'s start (hv_layer.h): vmm_init once on the BSP (memory, VMX capabilities,
 * EPT, per-CPU state), vmm_start_cpu on every CPU (VMXON and VMLAUNCH into the CPU's own
 * state). Which modules run on top, and in what order, is the image's business (hv/).
 */
#include "hv_layer.h"
#include "hv_core.h"
#include "hv_ept_int.h"
#include "exit_reg.h"
#include "vmx_setup.h"
#include "vmx_exit.h"
#include "hvt_hypercall.h"
#include "cpu.h"
#include "msr_policy.h"
#include "hv_iommu.h"

static struct vcpu vcpus[HVT_MAX_CPUS];

struct vcpu *vcpu_get(unsigned index) { return &vcpus[index]; }

#define CANARY_MIX 0x68767472616365ull     /* "hvtrace" */

/* Index 0 at HV_CPU_ID_GS_OFFSET (zero-filled): what hv_cpu_id() reads while no vcpu exists. */
static uint8_t services_percpu[64] __attribute__((aligned(64)));
static uint64_t services_saved_gs;

static int services_start(struct hvt_boot_info *bi)
{
    if (bi->magic != HVT_BOOTINFO_MAGIC)
        return -1;
    hv_core_init(bi);
    hv_log("hvtrace: hypervisor %u.%u.%u starting on %u CPU(s)\n", HVT_VERSION_MAJOR,
           HVT_VERSION_MINOR, HVT_VERSION_PATCH, bi->cpu_count);
    if (bi->cpu_count == 0 || bi->cpu_count > HVT_MAX_CPUS)
        return -2;
    return 0;
}

int vmm_init_services(struct hvt_boot_info *bi)
{
    int rc = services_start(bi);
    if (rc)
        return rc;
    _Static_assert(HV_CPU_ID_GS_OFFSET + sizeof(unsigned) <= sizeof services_percpu, "percpu");
    services_saved_gs = hv_rdmsr(MSR_IA32_GS_BASE);
    hv_wrmsr(MSR_IA32_GS_BASE, (uint64_t)services_percpu);
    return 0;
}

void vmm_services_end(void)
{
    hv_wrmsr(MSR_IA32_GS_BASE, services_saved_gs);
}

int vmm_init(struct hvt_boot_info *bi)
{
    int rc = services_start(bi);
    if (rc)
        return rc;
    if (vmx_check_caps())
        return -3;
    mtrr_read(&hv.mtrr, hv_rdmsr, hv.phys_bits);
    hv.dummy_page = hv_alloc_pages(1);
    hv.canary_page = hv_alloc_pages(1);
    hv.io_bitmap_a = hv_alloc_pages(1);
    hv.io_bitmap_b = hv_alloc_pages(1);
    hv.msr_bitmap = hv_alloc_pages(1);
    if (!hv.dummy_page || !hv.canary_page || !hv.io_bitmap_a || !hv.io_bitmap_b || !hv.msr_bitmap)
        return -4;
    msr_policy_fill(hv.msr_bitmap);            /* every MSR exits but the allow-list's */
    /* The canary: a per-boot value filling one page of hypervisor memory. The guest-side
     * test (hvtrace-guest memcheck) must never find it. */
    hv.selftest = bi->hv_flags & HVT_HVF_SELFTEST;
    hv.canary = hv.selftest ? (hv_rdtsc() * 0x9e3779b97f4a7c15ull) ^ CANARY_MIX : 0;
    for (unsigned i = 0; i < X86_PAGE_SIZE / 8; i++)
        hv.canary_page[i] = hv.canary;
    if (hv_ept_build())
        return -5;
    /* Before any layer maps ECAM pages its own way (the NIC's, the bridges above it). */
    if (bi->mcfg_len)
        hv_ept_ecam_guard(bi->mcfg, bi->mcfg_len);
    /* The I/O exits vmm/ needs: the power-off write (the exit summary, the trace's end) and
     * the two PC reset requests, 0xCF9 and the keyboard controller's command port (the trace
     * ends before the machine does: vmx_exit.c machine_end). The 32-bit PCI configuration
     * address writes to 0xCF8 overlap 0xCF9 and exit too: they are rare after boot. */
    if (bi->pm1a_cnt_port)
        exit_reg_io_intercept(bi->pm1a_cnt_port, 2);
    exit_reg_io_intercept(0xcf9, 1);
    exit_reg_io_intercept(0x64, 1);
    if (bi->pm1b_cnt_port)
        exit_reg_io_intercept(bi->pm1b_cnt_port, 2);
    for (unsigned i = 0; i < bi->cpu_count; i++)
        if (vmx_alloc_cpu(&vcpus[i], i, bi->apic_ids[i]))
            return -4;
    if (hv_ept_views_init())
        return -5;
    return 0;
}

/* The IOMMU last: every layer has registered its own devices and DMA ranges by now. */
void vmm_init_done(void)
{
    hv_iommu_start();
    hv_mem_start_done();
    hv_mem_report();
}

int vmm_start_cpu(struct hvt_boot_info *bi, struct hvt_cpu_launch *l)
{
    if (l->cpu_index >= hv.cpu_count)
        return -1;
    struct vcpu *v = &vcpus[l->cpu_index];
    hv.started = true;
    int r = vmx_start_cpu(v, l);                /* returns only on failure */
    return r;
}
