/*
 * kaslr.h - the guest kernel's KASLR slide, learnt from the hardware: once the kernel has
 * written its system-call entry to IA32_LSTAR, slide = that value - its link-time address
 * (the trace option lstar=, from the vmlinuz). Used to move link-time addresses of the options
 * (trigger addresses, ranges, stop addresses) to where the running kernel has them.
 *
 * Contract: kaslr_init(lstar_link) once (0: no lstar= option; addresses are used as given and
 * the slide is 0); kaslr_poll() at VM exits until kaslr_known(); kaslr_slide() is 0 until then.
 * Needs only hv_api.h (the guest's LSTAR: VMX does not switch it, so hv_rdmsr reads it).
 */
#ifndef HVT_KASLR_H
#define HVT_KASLR_H
#include <stdint.h>
#include <stdbool.h>

void     kaslr_init(uint64_t lstar_link);
bool     kaslr_poll(void);          /* true once the slide is known */
bool     kaslr_known(void);
uint64_t kaslr_slide(void);

#endif
