/*
 * cpu.h - the instructions that read and write x86-64 system state (MSRs, control registers,
 * descriptor tables), as inline wrappers for vmm/ itself; the constants are x86_arch.h's.
 * Contract: no state; modules outside vmm/ use hv_api.h's hv_rdmsr/hv_wrmsr instead.
 */
#ifndef HVT_CPU_H
#define HVT_CPU_H
#include <stdint.h>

#include "x86_arch.h"
#include "hv_api.h"    /* hv_rdmsr, hv_wrmsr, hv_rdtsc: this CPU's MSRs and TSC */

static inline void cpu_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}
#define CPU_CR_ACCESSORS(n) \
    static inline uint64_t cpu_read_cr##n(void) { uint64_t v; __asm__ volatile("mov %%cr" #n ", %0" : "=r"(v)); return v; } \
    static inline void cpu_write_cr##n(uint64_t v) { __asm__ volatile("mov %0, %%cr" #n :: "r"(v) : "memory"); }
CPU_CR_ACCESSORS(0)
CPU_CR_ACCESSORS(3)
CPU_CR_ACCESSORS(4)
static inline uint64_t cpu_read_dr7(void) { uint64_t v; __asm__ volatile("mov %%dr7, %0" : "=r"(v)); return v; }
static inline uint64_t cpu_read_rflags(void) { uint64_t v; __asm__ volatile("pushfq; popq %0" : "=r"(v)); return v; }
struct __attribute__((packed)) cpu_dtr { uint16_t limit; uint64_t base; };
static inline void cpu_sgdt(struct cpu_dtr *d) { __asm__ volatile("sgdt %0" : "=m"(*d)); }
static inline void cpu_sidt(struct cpu_dtr *d) { __asm__ volatile("sidt %0" : "=m"(*d)); }
#define CPU_SEG_READER(s) \
    static inline uint16_t cpu_read_##s(void) { uint16_t v; __asm__ volatile("mov %%" #s ", %0" : "=r"(v)); return v; }
CPU_SEG_READER(cs)
CPU_SEG_READER(ss)
CPU_SEG_READER(ds)
CPU_SEG_READER(es)
CPU_SEG_READER(fs)
CPU_SEG_READER(gs)
static inline uint16_t cpu_read_tr(void) { uint16_t v; __asm__ volatile("str %0" : "=r"(v)); return v; }
static inline uint16_t cpu_read_ldtr(void) { uint16_t v; __asm__ volatile("sldt %0" : "=r"(v)); return v; }
static inline void cpu_pause(void) { __asm__ volatile("pause"); }
static inline void cpu_wbinvd(void) { __asm__ volatile("wbinvd" ::: "memory"); }

#endif
