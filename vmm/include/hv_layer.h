/*
 * hv_layer.h - how a hypervisor image is put together from vmm/ and the layers above it.
 *
 * Contract:
 *  - The image's entry points (include/hvt_bootinfo.h: hv_entry_init once on the BSP,
 *    hv_entry_cpu on every CPU) belong to the image, not to vmm/: hv/ composes them.
 *  - vmm_init() runs first: memory, VMX capabilities, EPT, per-CPU state. Layers then start in
 *    the image's stated order, each registering what it handles (hv_exit.h); then
 *    vmm_init_done(). No CPU is virtualized before that, so registration needs no locks.
 *  - vmm_start_cpu() virtualizes the calling CPU; it returns only on failure.
 */
#ifndef HVT_HV_LAYER_H
#define HVT_HV_LAYER_H
#include "hvt_bootinfo.h"

int  vmm_init(struct hvt_boot_info *bi);
/* The services alone (memory, logging, hv_cpu_id() = 0 on the calling CPU), no VMX: for an
 * image that runs a layer's code on a machine without VT-x (make hv-nettest). Nothing is
 * virtualized; vmm_services_end() gives the caller its %gs back before the image returns. */
int  vmm_init_services(struct hvt_boot_info *bi);
void vmm_services_end(void);
void vmm_init_done(void);
int  vmm_start_cpu(struct hvt_boot_info *bi, struct hvt_cpu_launch *l);

/* A layer's start: 0, or a negative error (the image decides whether that is fatal). */
typedef int (*hv_layer_init_fn)(struct hvt_boot_info *bi);

#endif
