/*
 * efi_mp.h - EFI_MP_SERVICES_PROTOCOL (UEFI PI spec, vol. 2, "MP Services Protocol"), which
 * gnu-efi does not define. Every member is an EFIAPI (ms_abi) function pointer.
 * Contract: boot services (and so this protocol) may only be called from the BSP.
 * The members carry an explicit ms_abi attribute (not EFIAPI, which gnu-efi leaves empty
 * unless GNU_EFI_USE_MS_ABI is defined), so calling them directly is right in either mode.
 */
#ifndef HVT_EFI_MP_H
#define HVT_EFI_MP_H
#include <efi.h>

#define HVT_MSABI __attribute__((ms_abi))

#define HVT_EFI_MP_SERVICES_PROTOCOL_GUID \
    { 0x3fdda605, 0xa76e, 0x4f46, { 0xad, 0x29, 0x12, 0xf4, 0x53, 0x1b, 0x3d, 0x08 } }

#define HVT_PROCESSOR_AS_BSP_BIT      0x00000001
#define HVT_PROCESSOR_ENABLED_BIT     0x00000002
#define HVT_PROCESSOR_HEALTH_BIT      0x00000004

typedef struct {
    UINT32 package, core, thread;
} hvt_efi_cpu_location;

typedef struct {
    UINT64 processor_id;          /* the local APIC ID */
    UINT32 status_flag;
    hvt_efi_cpu_location location;
    /* PI 1.7 adds an extended location here; we never read past 'location'. */
    UINT8 extended[24];
} hvt_efi_processor_info;

typedef VOID (HVT_MSABI *hvt_efi_ap_procedure)(VOID *arg);

struct hvt_efi_mp_services;
typedef struct hvt_efi_mp_services {
    EFI_STATUS (HVT_MSABI *get_number_of_processors)(struct hvt_efi_mp_services *self,
                                                 UINTN *number, UINTN *enabled);
    EFI_STATUS (HVT_MSABI *get_processor_info)(struct hvt_efi_mp_services *self, UINTN number,
                                           hvt_efi_processor_info *info);
    EFI_STATUS (HVT_MSABI *startup_all_aps)(struct hvt_efi_mp_services *self,
                                        hvt_efi_ap_procedure proc, BOOLEAN single_thread,
                                        EFI_EVENT wait_event, UINTN timeout_us, VOID *arg,
                                        UINTN **failed_cpu_list);
    EFI_STATUS (HVT_MSABI *startup_this_ap)(struct hvt_efi_mp_services *self,
                                        hvt_efi_ap_procedure proc, UINTN cpu,
                                        EFI_EVENT wait_event, UINTN timeout_us, VOID *arg,
                                        BOOLEAN *finished);
    EFI_STATUS (HVT_MSABI *switch_bsp)(struct hvt_efi_mp_services *self, UINTN cpu,
                                   BOOLEAN enable_old_bsp);
    EFI_STATUS (HVT_MSABI *enable_disable_ap)(struct hvt_efi_mp_services *self, UINTN cpu,
                                          BOOLEAN enable, UINT32 *health);
    EFI_STATUS (HVT_MSABI *who_am_i)(struct hvt_efi_mp_services *self, UINTN *cpu);
} hvt_efi_mp_services;

#endif
