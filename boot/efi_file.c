/* efi_file.c - see efi_file.h. */
#include <efi.h>
#include <efilib.h>
#include "efi_file.h"

EFI_STATUS efi_file_read(EFI_HANDLE device, const CHAR16 *path, VOID **data, UINTN *size)
{
    EFI_FILE_HANDLE root = LibOpenRoot(device), file = NULL;
    EFI_FILE_INFO *info = NULL;
    EFI_STATUS st;
    *data = NULL;
    *size = 0;
    if (!root) return EFI_NOT_FOUND;
    st = root->Open(root, &file, (CHAR16 *)path, EFI_FILE_MODE_READ, 0);
    if (EFI_ERROR(st)) goto out;
    info = LibFileInfo(file);
    if (!info) { st = EFI_DEVICE_ERROR; goto out; }
    UINTN len = (UINTN)info->FileSize;
    UINT8 *buf = AllocatePool(len + 1);
    if (!buf) { st = EFI_OUT_OF_RESOURCES; goto out; }
    UINTN got = len;
    st = file->Read(file, &got, buf);
    if (EFI_ERROR(st) || got != len) {
        FreePool(buf);
        if (!EFI_ERROR(st)) st = EFI_DEVICE_ERROR;
        goto out;
    }
    buf[len] = 0;
    *data = buf;
    *size = len;
out:
    if (info) FreePool(info);
    if (file) file->Close(file);
    root->Close(root);
    return st;
}

EFI_STATUS efi_file_shred(EFI_HANDLE device, const CHAR16 *path)
{
    EFI_FILE_HANDLE root = LibOpenRoot(device), file = NULL;
    EFI_FILE_INFO *info = NULL;
    EFI_STATUS st;
    if (!root) return EFI_NOT_FOUND;
    st = root->Open(root, &file, (CHAR16 *)path, EFI_FILE_MODE_READ | EFI_FILE_MODE_WRITE, 0);
    root->Close(root);
    if (EFI_ERROR(st)) return st;
    info = LibFileInfo(file);
    if (info) {
        static UINT8 zeros[512];
        UINT64 left = info->FileSize;
        FreePool(info);
        st = file->SetPosition(file, 0);
        while (!EFI_ERROR(st) && left) {
            UINTN n = left < sizeof zeros ? (UINTN)left : sizeof zeros;
            st = file->Write(file, &n, zeros);
            left -= n;
        }
        if (!EFI_ERROR(st)) st = file->Flush(file);
    }
    /* Delete closes the handle whatever it returns. */
    EFI_STATUS del = file->Delete(file);
    return EFI_ERROR(st) ? st : del;
}
