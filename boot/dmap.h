/*
 * dmap.h - the hypervisor's direct map: its page tables for physical memory, built by the loader.
 *
 * Two maps, each with the largest pages that keep one memory type:
 *  - write-back at virtual 0 over [0, limit) (RAM and what lies between); a large page spans
 *    one MTRR memory type only: a page whose range the MTRRs give several types is undefined
 *    (SDM Vol. 3A 12.11.9 "Large Page Size Considerations"), so such a 1 GiB range is split
 *    into 2 MiB pages and such a 2 MiB range into 4 KiB pages (the MTRRs' fixed ranges below
 *    1 MiB and variable ranges not 2 MiB aligned);
 *  - uncached (PCD|PWT with the host's PAT) at HVT_UC_ALIAS_BASE over [0, uc_limit), the
 *    physical-address space up to MAXPHYADDR (capped at 64 TiB), for device registers (MMIO
 *    above RAM included: a 64-bit BAR anywhere), leaving out every page that holds RAM: RAM
 *    mapped both write-back and uncached is an alias the architecture does not support
 *    (12.12.4 "Programming the PAT"). A range partly RAM is split like a mixed one.
 * Contract: pure, host-tested (boot/tests/test_dmap.c): tables come from ops->alloc_table (a
 * zeroed 4 KiB table; its address is also its physical address, as in the loader's identity
 * map); ops->memtype(base, size) is mtrr_type_range's answer; ops->ram(base, size) says how
 * much of the range is RAM (DMAP_RAM_NONE, _SOME, _ALL). dmap_build() returns 0, or -1 when a
 * table could not be had. Counts of the leaves go to *st.
 */
#ifndef HVT_DMAP_H
#define HVT_DMAP_H
#include <stdbool.h>
#include <stdint.h>

#define DMAP_PAGE_4K  0x1000ull
#define DMAP_PAGE_2M  0x200000ull
#define DMAP_PAGE_1G  0x40000000ull
#define DMAP_PTE_P    (1ull << 0)
#define DMAP_PTE_W    (1ull << 1)
#define DMAP_PTE_PWT  (1ull << 3)
#define DMAP_PTE_PCD  (1ull << 4)
#define DMAP_PTE_PS   (1ull << 7)
#define DMAP_UC_MAX   (1ull << 46)   /* the alias's cap: 128 PML4 entries below the image's */

enum dmap_ram { DMAP_RAM_NONE, DMAP_RAM_SOME, DMAP_RAM_ALL };

struct dmap_ops {
    void *ctx;
    uint64_t *(*alloc_table)(void *ctx);
    int (*memtype)(void *ctx, uint64_t base, uint64_t size);
    enum dmap_ram (*ram)(void *ctx, uint64_t base, uint64_t size);
};

struct dmap_stats { uint64_t pages_1g, pages_2m, pages_4k, tables; };

int dmap_build(uint64_t *pml4, uint64_t limit, uint64_t uc_base, uint64_t uc_limit, bool big,
               const struct dmap_ops *ops, struct dmap_stats *st);

#endif
