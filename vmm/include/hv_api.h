/*
 * hv_api.h - the basic services the hypervisor core (vmm/) offers to the modules built on it:
 * memory, logging, CPUs, locks, port I/O and MSRs of this CPU, a freestanding C library.
 * With hv_guest.h (the current guest), hv_exit.h (taking part in VM exits), hv_ept.h (guest-
 * physical memory views) and gmem.h (safe guest-memory reads) it is the whole public API of
 * vmm/ (vmm/include/): modules are compiled with that include path only.
 *
 * Contract:
 *  - Runs in VMX root operation, 64-bit, CPL0, interrupts off, no SSE/FPU (the hypervisor is
 *    built -mgeneral-regs-only so the guest's FPU/SSE state is never touched).
 *  - Memory: hv_alloc_pages() hands out zeroed, 4 KiB-aligned pages from the hypervisor's own
 *    reserved region (hidden from the guest by EPT); hv_alloc() zeroed bytes, 16-byte
 *    aligned, from the same region; nothing is ever freed. Both return NULL when it is full
 *    (short of vmm/'s reserve, which they never hand out: see the budgets below). All physical memory
 *    and MMIO below the mapped limit is reachable through hv_phys_to_virt() (a direct map that
 *    is write-back cacheable: for device registers rely on the MTRRs/PAT and use volatile
 *    accesses; hv_phys_to_virt_uc() gives an uncached alias).
 *  - Time: hv_rdtsc() is the raw TSC (in Bochs it ticks once per instruction: docs/hypervisor.md).
 *  - MSRs: hv_rdmsr()/hv_wrmsr() act on this CPU. VMX root operation keeps the guest's values
 *    of every MSR the VM-exit controls do not switch (LSTAR, KERNEL_GS_BASE, TSC_AUX, the
 *    TSC deadline, ...), so reading one gives the guest's value.
 *  - Locks: spin locks, for data shared between CPUs; hold them briefly, never across a wait
 *    on a device. In the fatal path the CPU running it takes a lock that stays held (by a CPU
 *    stopped while holding it) after a bounded wait: what it protects may be half-updated.
 *  - Logging: hv_log() is printf-like (%s %c %d %u %x %lx %llx %p %%, widths and 0-padding),
 *    goes to the hypervisor's log sinks (port 0xE9 and/or COM1), and is serialized across CPUs.
 *  - hv_cpu_id(): dense index 0..hv_cpu_count()-1 of the calling CPU.
 */
#ifndef HVT_HV_API_H
#define HVT_HV_API_H
#include <stdint.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdbool.h>
#include "x86_arch.h"

void    *hv_alloc_pages(size_t npages);
#define  HV_PAGES(bytes) (((bytes) + X86_PAGE_SIZE - 1) / X86_PAGE_SIZE)   /* pages to hold bytes */
void    *hv_alloc(size_t bytes);

/* Memory budgets. The region's size is hvtrace.cfg's hv_mem_mb. vmm/ keeps part of it for
 * what it must allocate after start, whatever the guest does (EPT tables for on-demand MMIO
 * and for the per-CPU views, the IOMMU's tables): hv_alloc_pages() and hv_alloc() never hand
 * that reserve out. What the start leaves beyond it is shared out in HV_BUDGET_PARTS parts:
 * a module that allocates at the guest's or the operator's request (probe shadows, D
 * program state) keeps a struct hv_budget with the parts it was given ({ .parts = N }; who
 * gets how many is the image's choice, not vmm/'s: the parts handed out add up to less than
 * HV_BUDGET_PARTS, so what is left covers allocations nobody budgets) and allocates through
 * it. An allocation that would pass the budget returns NULL and takes nothing, so such a user
 * cannot take another's memory, nor vmm/'s. hv_budget_limit() is the budget in bytes: from
 * the end of the start, a fixed figure; before it, computed from what is taken so far.
 * vmm/mem_budget.h has the arithmetic. Callers of one budget need no lock (atomic counts). */
#define HV_BUDGET_PARTS 8
struct hv_budget { unsigned parts; uint64_t used; };
uint64_t hv_budget_limit(const struct hv_budget *b);
void    *hv_budget_pages(struct hv_budget *b, size_t npages);
void    *hv_budget_alloc(struct hv_budget *b, size_t bytes);

uint64_t hv_virt_to_phys(const void *va);
void    *hv_phys_to_virt(uint64_t pa);
void    *hv_phys_to_virt_uc(uint64_t pa);

static inline uint64_t hv_rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline uint64_t hv_rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}
static inline void hv_wrmsr(uint32_t msr, uint64_t v)
{
    __asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

struct spinlock { volatile uint32_t v; };
void spin_lock(struct spinlock *l);
void spin_unlock(struct spinlock *l);

void     hv_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void     hv_vlog(const char *fmt, va_list ap);
int      hv_snprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The one fatal path (vmm/hv_fatal.c): the first CPU to panic stops every other CPU, runs the
 * fatal hooks (hv_exit.h hv_on_fatal), logs the reason and resets the machine. Never returns;
 * safe from any CPU, at any time, also inside the fatal path itself (skips to the reset). */
void     hv_panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Is the machine in its fatal path? Code that waits (for a device, for ring space) bounds its
 * wait then, and expects no other CPU to run: they are stopped. */
bool     hv_fatal_active(void);
/* The log's lock, for a module that writes whole lines to the log ports itself (so no CPU's
 * line lands inside another's). hv_log takes it too: never call hv_log while holding it. */
void     hv_log_lock(void);
void     hv_log_unlock(void);

/* On every single-step's path, so inline: the index sits at a fixed offset of the per-CPU block
 * that %gs points to in the hypervisor (vcpu.h asserts the offset). */
#define HV_CPU_ID_GS_OFFSET 20
static inline unsigned hv_cpu_id(void)
{
    unsigned id;
    __asm__("movl %%gs:%c1, %0" : "=r"(id) : "i"(HV_CPU_ID_GS_OFFSET));
    return id;
}
unsigned hv_cpu_count(void);

/* Port I/O from the hypervisor itself. */
static inline void hv_outb(uint16_t port, uint8_t v)  { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline void hv_outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline void hv_outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t  hv_inb(uint16_t port) { uint8_t v;  __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t hv_inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t hv_inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }

/* Perform a guest's intercepted IN/OUT of 'size' bytes on the real port, with the guest's RAX:
 * an 8/16-bit IN keeps RAX's upper bits, a 32-bit IN zero-extends (SDM IN). */
void hv_port_io(bool in, unsigned size, uint16_t port, uint64_t *rax);

/* Freestanding C library subset (vmm/lib). */
void  *memcpy(void *d, const void *s, size_t n);
void  *memmove(void *d, const void *s, size_t n);
void  *memset(void *d, int c, size_t n);
int    memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
int    strcmp(const char *a, const char *b);
int    strncmp(const char *a, const char *b, size_t n);
int    atoi(const char *s);

#endif
