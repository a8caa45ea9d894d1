/*
 * hv_api.h (host fuzz shim) - vmm/include/hv_api.h for hypervisor code built into a host
 * libFuzzer target, force-included first (-include: a header in vmm/include that includes
 * "hv_api.h" would find its neighbour, not this file). The real header is included underneath,
 * by its path, so every declaration, constant and contract stays
 * the hypervisor's own; only the inline functions whose instructions a host process cannot run
 * (RDTSC as the harness's deterministic clock, the %gs CPU index, port I/O, MSRs) become plain
 * functions the harness defines. The renamed inline originals are never called.
 */
#ifndef HVT_FUZZ_HV_API_H
#define HVT_FUZZ_HV_API_H
#define hv_rdtsc  hvfuzz_unused_rdtsc
#define hv_rdmsr  hvfuzz_unused_rdmsr
#define hv_wrmsr  hvfuzz_unused_wrmsr
#define hv_cpu_id hvfuzz_unused_cpu_id
#define hv_outb   hvfuzz_unused_outb
#define hv_outw   hvfuzz_unused_outw
#define hv_outl   hvfuzz_unused_outl
#define hv_inb    hvfuzz_unused_inb
#define hv_inw    hvfuzz_unused_inw
#define hv_inl    hvfuzz_unused_inl
#include "../../../vmm/include/hv_api.h"
#undef hv_rdtsc
#undef hv_rdmsr
#undef hv_wrmsr
#undef hv_cpu_id
#undef hv_outb
#undef hv_outw
#undef hv_outl
#undef hv_inb
#undef hv_inw
#undef hv_inl
/* hv_log_host.c: hv_log, hv_snprintf, hv_panic (abort) for every host target; this says
 * whether HVT_FUZZ_VERBOSE asks for the hypervisor's log and the harness's own lines */
bool     hv_host_verbose(void);
/* hv_budget_host.c: what the target's start took, the budgets' base */
extern uint64_t hv_host_start_used;
uint64_t hv_rdtsc(void);
uint64_t hv_rdmsr(uint32_t msr);
void     hv_wrmsr(uint32_t msr, uint64_t v);
unsigned hv_cpu_id(void);
void     hv_outb(uint16_t port, uint8_t v);
void     hv_outw(uint16_t port, uint16_t v);
void     hv_outl(uint16_t port, uint32_t v);
uint8_t  hv_inb(uint16_t port);
uint16_t hv_inw(uint16_t port);
uint32_t hv_inl(uint16_t port);
#endif
