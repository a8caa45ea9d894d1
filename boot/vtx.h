/*
 * vtx.h - find out whether VT-x can be used, and make it usable, on every CPU.
 *
 * Contract: vtx_prepare() runs on the BSP with boot services up. In this order (Intel SDM
 * vol. 3C, 23.6 "Discovering support for VMX" and 23.7 "Enabling and entering VMX
 * operation"):
 *  1. CPUID.1:ECX.VMX[bit 5] must be 1. When it is 0 nothing else is touched: no MSR access
 *     (IA32_FEATURE_CONTROL #GPs on CPUs without VMX) and never CR4.VMXE (setting it hangs
 *     QEMU 7.2 TCG instead of raising #GP).
 *  2. IA32_FEATURE_CONTROL (MSR 0x3A) on EVERY CPU - the BSP directly, the APs through MP
 *     services StartupAllAPs: if unlocked, set lock + "VMXON outside SMX" (0x5, other bits
 *     kept); if locked with "VMXON outside SMX" clear, VT-x is off on that CPU for good (until
 *     reset) and vtx_prepare() fails.
 * Returns EFI_SUCCESS when every enabled CPU can execute VMXON (as far as these two checks
 * tell); otherwise EFI_UNSUPPORTED with a one-line reason in `why`. `mp` may be NULL (BSP only).
 */
#ifndef HVT_VTX_H
#define HVT_VTX_H
#include <efi.h>
#include "efi_mp.h"

EFI_STATUS vtx_prepare(hvt_efi_mp_services *mp, CHAR16 *why, UINTN why_chars);

#endif
