/*
 * ept.h - extended page tables (Intel SDM 29.3): build and edit the guest-physical ->
 * host-physical map.
 *
 * Contract:
 *  - The tables live in pages from ops->alloc_page (zeroed); entries hold host-physical
 *    addresses, converted with ops->virt_to_phys / phys_to_virt. Host-testable: the unit
 *    test passes ordinary heap pages.
 *  - ept_map_identity() maps [base, base+size) to itself RWX with the memory type the
 *    callback gives, using 1 GiB / 2 MiB pages where the range is aligned, uniformly typed
 *    and the CPU supports them, 4 KiB pages otherwise.
 *  - ept_map_4k() maps one 4 KiB guest page anywhere (splitting a large page that covers it,
 *    keeping the rest of it as it was); ept_translate() walks like the CPU does.
 *  - ept_map_empty() maps gpa identity with the largest page (1 GiB, 2 MiB, else 4 KiB, as
 *    the CPU allows) whose whole range nothing maps yet, so that no mapping already made is
 *    covered or changed; returns that page's size, 0 when gpa is mapped already, -1 when a
 *    table could not be had.
 *  - Callers flush with INVEPT after editing live tables (ept_eptp() gives the EPTP).
 */
#ifndef HVT_EPT_H
#define HVT_EPT_H
#include <stdint.h>
#include <stdbool.h>

#include "vmx_arch.h"

#define EPT_MEMTYPE_SHIFT 3
#define EPT_MEMTYPE_MASK  (7ull << EPT_MEMTYPE_SHIFT)
#define EPT_IGNORE_PAT  (1ull << 6)
#define EPT_LARGE       (1ull << 7)
#define EPT_ADDR_MASK   0x000ffffffffff000ull
#define EPTP_MEMTYPE_WB 6ull
#define EPTP_WALK_4     (3ull << 3)     /* page-walk length minus one, bits 5:3 */

#define EPT_PAGE_4K  0x1000ull
#define EPT_PAGE_2M  0x200000ull
#define EPT_PAGE_1G  0x40000000ull

struct ept_ops {
    void    *(*alloc_page)(void);
    uint64_t (*virt_to_phys)(const void *va);
    void    *(*phys_to_virt)(uint64_t pa);
    /* memory type of an aligned range, or -1 if mixed */
    int      (*memtype)(uint64_t base, uint64_t size);
};

struct ept {
    const struct ept_ops *ops;
    uint64_t *pml4;
    bool has_2m, has_1g;
    unsigned tables;              /* pages used by the tables */
};

int      ept_init(struct ept *e, const struct ept_ops *ops, bool has_2m, bool has_1g);
int      ept_map_identity(struct ept *e, uint64_t base, uint64_t size);
int      ept_map_4k(struct ept *e, uint64_t gpa, uint64_t hpa, uint64_t perms, unsigned memtype);
int64_t  ept_map_empty(struct ept *e, uint64_t gpa, uint64_t perms, unsigned memtype);
uint64_t ept_eptp(const struct ept *e);
/* Returns true and the host-physical address, permissions and memory type of gpa if mapped. */
bool     ept_translate(const struct ept *e, uint64_t gpa, uint64_t *hpa, uint64_t *perms,
                       unsigned *memtype);

/* Views (per-CPU EPTs): a view is a root of its own that shares the base's tables except on
 * the paths to pages it maps itself, which it copies on first use (a large base page is split
 * in the view only). ept_view_map_4k() maps one page in the view alone; ept_view_unmap_4k()
 * gives the page back the base's mapping; ept_view_sync() makes the view follow an edit of
 * the base at gpa (pages the view maps itself keep its mapping). Each view has its own EPTP:
 * callers flush each CPU's with INVEPT after editing the view it runs on. */
struct ept_view {
    struct ept *base;
    uint64_t *pml4;
    unsigned tables;              /* pages the view owns */
    unsigned own;                 /* pages it maps itself (0: it translates like the base) */
};
int      ept_view_init(struct ept_view *v, struct ept *base);
int      ept_view_map_4k(struct ept_view *v, uint64_t gpa, uint64_t hpa, uint64_t perms,
                         unsigned memtype);
void     ept_view_unmap_4k(struct ept_view *v, uint64_t gpa);
void     ept_view_sync(struct ept_view *v, uint64_t gpa);
uint64_t ept_view_eptp(const struct ept_view *v);
bool     ept_view_translate(const struct ept_view *v, uint64_t gpa, uint64_t *hpa,
                            uint64_t *perms, unsigned *memtype);

/* May a leaf hold 'perms' (EPT_READ/WRITE/EXEC) on a CPU whose IA32_VMX_EPT_VPID_CAP is
 * 'ept_cap'? Write without read is an EPT misconfiguration always, execute-only unless
 * EPT_CAP_EXEC_ONLY (SDM Vol. 3C 29.3.3.1 "EPT Misconfigurations"; A.10): a misconfiguration
 * exits with reason 49, which is fatal. Pure. */
bool ept_perms_ok(uint64_t perms, uint64_t ept_cap);

#endif
