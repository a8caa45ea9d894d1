/*
 * hvt_bootinfo.h - the hand-off from the EFI loader (boot/) to the hypervisor image (vmm/).
 *
 * Contract:
 *  - The hypervisor image is a flat binary linked at HVT_IMAGE_LINK_BASE (linker.ld) whose first
 *    bytes are a struct hvt_image_header. The loader copies it to the start of the hypervisor's
 *    physical region, zeroes up to mem_size, and maps the region at HVT_IMAGE_LINK_BASE.
 *  - The loader builds the host page tables: physical memory [0, direct_map_limit) identity
 *    mapped write-back, the same range again uncached at HVT_UC_ALIAS_BASE, and the region at
 *    HVT_IMAGE_LINK_BASE. Everything in the region past 'free_phys' is the hypervisor's to
 *    allocate; nothing in the region is ever handed to the guest (EPT hides it).
 *  - entry_init(bi) runs once on the BSP under the host page tables with interrupts off, before
 *    any CPU is virtualized; it returns 0 or a negative error (the loader then boots untraced).
 *  - entry_cpu(bi, launch) runs on each CPU (BSP first) under the host page tables with
 *    interrupts off; on success it does not return: the CPU continues as a guest at
 *    launch->guest_rip/rsp with CR3 = launch->guest_cr3 and RFLAGS = launch->guest_rflags. On
 *    failure it leaves VMX operation and returns a negative error.
 */
#ifndef HVT_BOOTINFO_H
#define HVT_BOOTINFO_H
#include <stdint.h>

#define HVT_IMAGE_MAGIC       0x454d49545648ull   /* "HVTIME" */
#define HVT_BOOTINFO_MAGIC    0x4f464e4954564855ull /* "UHVTINFO" */
#define HVT_IMAGE_LINK_BASE   0xffffffff80000000ul /* top 2 GiB: -mcmodel=kernel */
#define HVT_UC_ALIAS_BASE     0xffff800000000000ul /* uncached alias of the direct map */
#define HVT_MAX_CPUS          64
#define HVT_MAX_MEM_RANGES    256
#define HVT_NET_CONFIG_LEN    512
#define HVT_TRACE_CONFIG_LEN  512

struct hvt_image_header {
    uint64_t magic;
    uint64_t link_base;
    uint64_t file_size;    /* bytes of the flat image */
    uint64_t mem_size;     /* bytes including .bss, from link_base */
    uint64_t entry_init;   /* int entry_init(struct hvt_boot_info *) (SysV ABI) */
    uint64_t entry_cpu;    /* int entry_cpu(struct hvt_boot_info *, struct hvt_cpu_launch *) */
};

/* Physical memory kinds, from the firmware's memory map. */
enum hvt_mem_kind {
    HVT_MEM_RAM = 1,       /* ordinary RAM the guest may use (incl. boot/loader/ACPI reclaim) */
    HVT_MEM_FIRMWARE = 2,  /* runtime services, ACPI NVS, reserved: RAM, but not the OS's */
    HVT_MEM_MMIO = 3,      /* memory-mapped I/O described by the firmware */
};

struct hvt_mem_range {
    uint64_t base, size;
    uint32_t kind;         /* enum hvt_mem_kind */
    uint32_t pad;
};

/* The ACPI MCFG table (PCI Express ECAM windows) passed as found: header and up to 16
 * allocations fit. The hypervisor parses and checks it (vmm/include/pci_mcfg.h). */
#define HVT_MCFG_MAX 512
/* The ACPI DMAR table (Intel VT-d remapping units) likewise: the hypervisor owns the units
 * (vmm/include/hv_dma.h); a larger table is passed as its length alone and refused. */
#define HVT_DMAR_MAX 4096

struct hvt_boot_info {
    uint64_t magic;
    uint64_t region_phys, region_size;  /* the hypervisor's whole reserved region */
    uint64_t free_phys;                 /* first byte of the region free for allocation */
    uint64_t host_cr3;                  /* physical address of the host PML4 */
    uint64_t direct_map_limit;          /* [0, limit) is identity mapped */
    uint32_t cpu_count;                 /* CPUs the loader will start (BSP is index 0) */
    uint32_t log_flags;                 /* HVL_LOG_* */
#define HVL_LOG_E9    0x1u   /* hypervisor log to I/O port 0xE9 (Bochs, QEMU debugcon) */
#define HVL_LOG_COM1  0x2u   /* hypervisor log to COM1 (shared with the guest console) */
    uint32_t apic_ids[HVT_MAX_CPUS];
    uint16_t pm1a_cnt_port, pm1b_cnt_port;
    uint32_t mem_range_count;
    struct hvt_mem_range mem[HVT_MAX_MEM_RANGES];
    char net_config[HVT_NET_CONFIG_LEN];  /* key=value text for net/ (empty: no NIC) */
    char trace_config[HVT_TRACE_CONFIG_LEN]; /* key=value,... for trace/ (empty: defaults) */
    uint32_t hv_flags;                  /* HVT_HVF_* */
    uint32_t mcfg_len;                  /* the firmware's ACPI MCFG table, as found (0: none, */
    uint8_t  mcfg[HVT_MCFG_MAX];        /* or larger than HVT_MCFG_MAX: mcfg_len says so) */
#define HVT_HVF_ADVERTISE 0x1u   /* show the guest the CPUID hypervisor bit and our leaves */
#define HVT_HVF_SELFTEST  0x2u   /* test boots: a canary in hypervisor memory, and the memory
                                    range for the guest's administrator (memory checks) */
#define HVT_HVF_DMAR_HIDDEN 0x4u /* the loader removed the DMAR from the guest's RSDT/XSDT */
    uint32_t dmar_len;                  /* the firmware's ACPI DMAR, as found (0: none, or */
    uint8_t  dmar[HVT_DMAR_MAX];        /* larger than HVT_DMAR_MAX: dmar_len says so) */
    uint8_t  cfg_sha256[32];            /* SHA-256 of hvtrace.cfg as the loader read it */
    uint32_t cfg_state;                 /* HVT_CFG_*: how far the loader could trust it */
#define HVT_CFG_NOT_ENROLLED 0u  /* no enrolled keys: every line honoured, as written */
#define HVT_CFG_SEALED       1u  /* its seal verified under the enrolled key */
#define HVT_CFG_UNSEALED     2u  /* enrolled, seal missing or wrong: security lines not honoured */
#define HVT_CFG_NO_FILE      3u  /* no hvtrace.cfg: defaults */
    uint8_t  s5_known;                  /* the DSDT defines \_S5: the two values below hold */
    uint8_t  s5_slp_typ_a, s5_slp_typ_b; /* its SLP_TYP for PM1a and PM1b: the only sleep type
                                           the hypervisor lets through (power-off) */
};

/* What a CPU resumes as when it becomes a guest (captured by the loader's trampoline). */
struct hvt_cpu_launch {
    uint64_t guest_rip, guest_rsp, guest_cr3, guest_rflags;
    uint32_t cpu_index;
    int32_t  result;        /* written by the hypervisor before it launches or fails */
};

#endif
