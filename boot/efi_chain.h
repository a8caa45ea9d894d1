/*
 * efi_chain.h - start the Linux kernel through its EFI stub.
 * Contract: efi_chain_boot() loads `kernel` (an ESP path) from `device` with LoadImage
 * (UEFI 2.9, 7.4), sets the child's LoadOptions to the UCS-2 string "initrd=<initrd> <cmdline>"
 * (Linux's EFI stub loads the initrd named there from the same volume; no initrd= when
 * `initrd` is empty) and calls StartImage. It only returns on failure (or if the kernel
 * exits), with the status.
 */
#ifndef HVT_EFI_CHAIN_H
#define HVT_EFI_CHAIN_H
#include <efi.h>

EFI_STATUS efi_chain_boot(EFI_HANDLE parent, EFI_HANDLE device, const char *kernel,
                          const char *initrd, const char *cmdline);

#endif
