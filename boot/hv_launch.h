/*
 * hv_launch.h - the loader's one entry into the hypervisor.
 *
 * Contract: hvl_start() is called once, on the BSP, with boot services still up and after
 * VT-x was found usable (CPUID.1:ECX.VMX = 1 and IA32_FEATURE_CONTROL locked with "VMXON
 * outside SMX" set on every CPU). It allocates the hypervisor's memory (a type Linux leaves
 * alone), loads the hypervisor image embedded in hvtrace.efi, builds its page tables, and
 * virtualizes every enabled CPU: the BSP in place and the APs through the firmware's MP
 * services. On success it returns EFI_SUCCESS *as a guest*: the firmware, the loader and then
 * Linux keep running, now under hvtrace. On failure nothing was virtualized and every CPU is
 * back where it was (VMX off): the caller reports `why` and boots Linux untraced.
 */
#ifndef HVT_HV_LAUNCH_H
#define HVT_HV_LAUNCH_H
#include <efi.h>
#include "efi_mp.h"

#include "hvt_bootinfo.h"     /* HVL_LOG_* */

struct hvl_params {
    hvt_efi_mp_services *mp;   /* NULL: no MP services, BSP only */
    UINT32 hv_mem_mb;          /* size of the hypervisor's memory; 0 = default */
    UINT32 log_flags;          /* HVL_LOG_* */
    UINT32 hv_flags;           /* HVT_HVF_* (include/hvt_bootinfo.h) */
    const UINT8 *mcfg;         /* the firmware's ACPI MCFG, copied into the boot info (NULL: none) */
    UINT32 mcfg_len;
    const UINT8 *dmar;         /* the firmware's ACPI DMAR, copied into the boot info (NULL: none) */
    UINT32 dmar_len;
    UINT16 pm1a_cnt_port;      /* ACPI PM1a control port from the FADT (0 = unknown): the
                                  hypervisor prints its exit summary when the guest powers off */
    UINT16 pm1b_cnt_port;      /* 0 = none */
    UINT8 s5_known, s5_slp_typ_a, s5_slp_typ_b;  /* \_S5's SLP_TYP values (s5_known: found) */
    const char *trace_config;  /* tracer options (cfg "trace"), may be NULL */
    const char *net_config;    /* NIC options (cfg "net"), may be NULL */
    const uint8_t *cfg_sha256; /* SHA-256 of hvtrace.cfg (32 bytes), may be NULL */
    uint32_t cfg_state;        /* HVT_CFG_* (hvt_bootinfo.h) */
};

EFI_STATUS hvl_start(const struct hvl_params *p, CHAR16 *why, UINTN why_chars);

#endif
