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
/* Every bridge's bus numbers in ECAM stay the firmware's (pci_mcfg.h mcfg_write_mask): at
 * start, before any layer edits EPT, every page of the MCFG's windows is made read-only to
 * the guest; a write there exits and hv_ept_ecam_write_fault performs it on the device
 * without the bus-number bytes of a type-1 or CardBus header (a MOV store; #GP otherwise,
 * as for dropped writes). Pages a layer maps otherwise later (the NIC's hidden page, the
 * read-only bridges above it) follow that layer's mapping. 0, or -1 when the table cannot be
 * guarded (then nothing is). */
int hv_ept_ecam_guard(const void *mcfg, uint32_t len);
struct guest_regs;
bool hv_ept_ecam_write_fault(struct guest_regs *g, uint64_t gpa, uint64_t qualification);

#endif
