/*
 * efi_file.h - read a whole file from a FAT volume through EFI_SIMPLE_FILE_SYSTEM_PROTOCOL
 * (UEFI 2.9, 13.4/13.5).
 * Contract: efi_file_read() opens `path` (backslash-separated, from the volume's root) on the
 * file system of `device`, allocates a pool buffer of the file's size + 1 (NUL terminated
 * for convenience) and reads it all. On success the caller owns *data (FreePool).
 * efi_file_shred() overwrites the file's bytes with zeros, flushes, then deletes it (a FAT
 * delete only marks the directory entry: the clusters would keep what the file held).
 * Boot services only.
 */
#ifndef HVT_EFI_FILE_H
#define HVT_EFI_FILE_H
#include <efi.h>

EFI_STATUS efi_file_read(EFI_HANDLE device, const CHAR16 *path, VOID **data, UINTN *size);
EFI_STATUS efi_file_shred(EFI_HANDLE device, const CHAR16 *path);

#endif
