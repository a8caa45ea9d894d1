/*
 * hv_ept_int.h - vmm/'s own side of hv_ept.h: building the guest's EPT at start.
 * Contract: hv_ept_build() runs once on the BSP after the dummy page exists: it identity-maps
 * guest RAM and MMIO, hides the hypervisor's region, and sets gmem's ops (guest RAM only).
 */
#ifndef HVT_HV_EPT_INT_H
#define HVT_HV_EPT_INT_H
#include "hv_ept.h"

int hv_ept_build(void);
/* One view per CPU over the base (after the per-CPU state exists): each CPU runs on its own. */
int hv_ept_views_init(void);
/* Make this CPU take up EPT edits (its root, INVEPT): at a full exit when hv.ept_epoch moved. */
struct vcpu;
void hv_ept_refresh(struct vcpu *v);
/* Identity-map the high MMIO page holding gpa (beyond the start-up map, below MAXPHYADDR),
 * uncached, within a fixed budget of pages and EPT tables (hv_ept.c): -1 past it. Safe from
 * any CPU (hv.ept_lock). */
int hv_ept_map_mmio(uint64_t gpa);
/* What on-demand MMIO took so far: pages mapped, EPT tables, accesses refused. */
void hv_ept_mmio_usage(unsigned *pages, unsigned *tables, unsigned *refused);
/* An EPT violation on a hv_ept_drop_writes page: the write skipped or refused (#GP); true
 * when handled (false: not such a page, or not a write). */
bool hv_ept_drop_write_fault(uint64_t gpa, uint64_t qualification);

#endif
