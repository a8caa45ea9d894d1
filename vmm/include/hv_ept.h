/*
 * hv_ept.h - guest-physical memory as the guest sees it, edited by modules through vmm/: hide a
 * range, change a page's permissions, put a hypervisor page in place of a guest page, flush.
 * (Intel SDM 29.3 "The Extended Page Table Mechanism (EPT)".)
 *
 * Contract:
 *  - Every call runs on any CPU in VMX root operation; edits are serialized by vmm/.
 *  - An edit is visible to the calling CPU at once (INVEPT) and to the other CPUs at their next
 *    VM exit through the full dispatch, which every edit forces (hv_cpu_kick): a module that
 *    needs it sooner keeps a periodic exit (e.g. the preemption timer).
 *  - Hidden and substituted pages never expose hypervisor memory: a hidden page shows the guest
 *    one shared junk page; a substituted page must come from hv_alloc_pages().
 *  - Guest accesses a module forbade here reach its hv_ept_fault_register() handler (hv_exit.h).
 */
#ifndef HVT_HV_EPT_H
#define HVT_HV_EPT_H
#include <stdint.h>
#include <stdbool.h>
#include "vmx_arch.h"     /* EPT_READ, EPT_WRITE, EPT_EXEC, EPT_QUAL_* */

/* Invisible execute breakpoints (SDM 29.3.3.2 "EPT Violations"): forbid or allow instruction
 * fetches from the 4 KiB guest RAM page holding gpa. Reads and writes are unaffected: the
 * guest cannot see the breakpoint. Guest RAM only (identity-mapped pages); -1 otherwise. */
int hv_ept_set_exec(uint64_t gpa, bool exec);
/* Hide [gpa, gpa + size) (page-rounded): every page shows the guest the junk page; reads return
 * junk, writes land there and are lost. For device memory the guest must not reach. */
int hv_ept_hide(uint64_t gpa, uint64_t size);
/* Show the guest 'page' (4 KiB, from hv_alloc_pages) at the page holding gpa, with 'perms'
 * (EPT_READ | EPT_WRITE | EPT_EXEC), write-back cached. */
int hv_ept_map_page(uint64_t gpa, void *page, uint64_t perms);
/* Show the guest [gpa, gpa + size) (page-rounded) read-only with writes dropped: 'page' (from
 * hv_alloc_pages, e.g. filled with all ones) in place of every page, or, page NULL, the
 * device's own pages, uncached (reads reach the device). A write exits; vmm/ skips it when it
 * is a plain MOV store (vmm/insn_store.h: what Linux's MMIO and ECAM accessors use) and gives
 * the guest #GP(0) for any other writing instruction, so no write ever reaches the pages. */
int hv_ept_drop_writes(uint64_t gpa, uint64_t size, void *page);

/* Per-CPU views. Every CPU runs on its own EPT view: the shared map above, except for pages
 * mapped in that CPU's view alone. hv_ept_view_map() shows CPU 'cpu' 'page' (from
 * hv_alloc_pages; NULL: the guest's own page) at the guest RAM page holding gpa, with 'perms'
 * and the page's memory type: e.g. an execute-only shadow copy on some CPUs while another
 * CPU reads or runs the original. hv_ept_view_unmap() gives the CPU the shared mapping back.
 * Both act at once on the calling CPU and at the next exit of 'cpu' (kicked) otherwise.
 * A view's tables come from vmm/'s reserve, at most a fixed number per CPU (hv_api.h's
 * budgets; about one per 2 MiB of guest memory the view maps pages in): a page that would
 * need more is refused (-1); a page in a place the view already maps never is. */
/* Can a view map a page execute-only (IA32_VMX_EPT_VPID_CAP bit 0)? hv_ept_view_map() and
 * hv_ept_map_page() refuse (-1) permissions the CPU cannot hold. */
bool hv_ept_exec_only(void);
int  hv_ept_view_map(unsigned cpu, uint64_t gpa, void *page, uint64_t perms);
void hv_ept_view_unmap(unsigned cpu, uint64_t gpa);
/* Wait until every CPU has taken up the EPT edits made so far (each does at its next full
 * exit, which needs a periodic exit on idle CPUs: e.g. the preemption timer), at most max_tsc
 * TSC ticks. true when all have. Do not call it holding a lock another CPU's exit takes. */
bool hv_ept_wait_all(uint64_t max_tsc);

#endif
