/*
 * gmem.h - safe access to guest memory from the hypervisor.
 *
 * Contract:
 *  - Never faults the hypervisor and never touches device memory: every guest-physical page
 *    goes through gmem_ops.map_gpa, which returns a host pointer only for guest RAM (after
 *    EPT, so the hypervisor's own hidden memory is never exposed) and NULL otherwise.
 *  - gmem_walk() translates a guest-virtual address the way the guest's MMU would (SDM 4.3
 *    32-bit, 4.5 4-/5-level paging; paging off = identity), reading the guest's own tables
 *    through map_gpa. PAE paging outside long mode is not supported (GMEM_EUNSUPPORTED).
 *  - Copies are bounded and partial: they return how many bytes were copied, stopping at the
 *    first page that is not present or not RAM. Nothing here changes guest state (accessed
 *    and dirty bits are not set).
 *  - Host-testable: the unit test supplies a fake physical memory.
 */
#ifndef HVT_GMEM_H
#define HVT_GMEM_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#define GMEM_OK            0
#define GMEM_ENOTPRESENT  (-1)
#define GMEM_ENOTRAM      (-2)
#define GMEM_EUNSUPPORTED (-3)
#define GMEM_ENONCANONICAL (-4)

/* What a walk needs of the guest's paging state (read from the VMCS by the caller). */
struct gmem_paging {
    uint64_t cr0, cr3, cr4, efer;
};

struct gmem_ops {
    /* Host pointer to the 4 KiB guest-physical page holding gpa, or NULL if not guest RAM. */
    void *(*map_gpa)(uint64_t gpa_page);
};

struct gmem_xlat {
    uint64_t gpa;
    bool writable, user, nx;
    bool ad_set;                  /* long mode: every level's accessed bit and the leaf's dirty
                                     bit are set, so a write by the CPU would change none
                                     (SDM Vol. 3A 4.8, "Accessed and Dirty Flags") */
    unsigned page_shift;          /* 12, 21, 22, 30 */
};

void   gmem_set_ops(const struct gmem_ops *ops);
int    gmem_walk(const struct gmem_paging *p, uint64_t gva, struct gmem_xlat *out);
/* Host pointer to the guest RAM page holding gpa (NULL if not RAM): for translation caches. */
void  *gmem_map_gpa(uint64_t gpa);
size_t gmem_read_gpa(uint64_t gpa, void *buf, size_t len);
size_t gmem_read_gva(const struct gmem_paging *p, uint64_t gva, void *buf, size_t len);

#endif
