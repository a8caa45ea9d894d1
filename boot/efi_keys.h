/*
 * efi_keys.h - the machine's enrolled keys (struct cfg_keys, cfg_seal.h) in an EFI variable
 * only boot-time code can reach.
 *
 * The variable HvtraceKeys (vendor GUID EFI_KEYS_GUID below) is created NON_VOLATILE |
 * BOOTSERVICE_ACCESS, without RUNTIME_ACCESS: after ExitBootServices() GetVariable and
 * SetVariable do not reach it (UEFI 2.9, 8.2 "Variable Services"), so Linux, root included,
 * can neither read the keys nor change or delete them. A variable of that name with other
 * attributes was not made by this loader (Linux can only create RUNTIME_ACCESS ones) and is
 * never trusted.
 *
 * Contract (boot services only):
 * - efi_keys_read(): 1 and *k filled when the machine is enrolled; 0 when it is not (a
 *   foreign variable of that name is reported and deleted).
 * - efi_keys_enroll_file(): handles \hvtrace.enroll (written by `hvt cfg keys` at install
 *   time). Not enrolled: its keys are stored, read back and compared, then the file is
 *   overwritten and deleted; returns 1 and fills *k. Enrolled already: the file is refused
 *   and shredded (whoever can write the ESP must not be able to replace the keys); returns 0.
 *   No file: returns 0 silently. Every outcome but "no file" is printed on ConOut.
 * - efi_keys_forget(): deletes the variable (a sealed configuration's `keys = forget`).
 */
#ifndef HVT_EFI_KEYS_H
#define HVT_EFI_KEYS_H
#include <efi.h>
#include "cfg_seal.h"

#define EFI_KEYS_VAR_NAME  L"HvtraceKeys"
#define EFI_KEYS_ENROLL    L"\\hvtrace.enroll"
/* 5254e286-268b-4be2-a5c5-806bda927b47 */
#define EFI_KEYS_GUID { 0x5254e286, 0x268b, 0x4be2, { 0xa5, 0xc5, 0x80, 0x6b, 0xda, 0x92, 0x7b, 0x47 } }
#define EFI_KEYS_ATTRS (EFI_VARIABLE_NON_VOLATILE | EFI_VARIABLE_BOOTSERVICE_ACCESS)

int efi_keys_read(struct cfg_keys *k);
int efi_keys_enroll_file(EFI_HANDLE device, int enrolled, struct cfg_keys *k);
EFI_STATUS efi_keys_forget(void);

#endif
