/* efi_chain.c - see efi_chain.h. */
#include <efi.h>
#include <efilib.h>
#include "efi_chain.h"

/* ASCII -> UCS-2 append, bounded; returns the new length. */
static UINTN chain_append(CHAR16 *dst, UINTN at, UINTN cap, const char *src)
{
    while (*src && at + 1 < cap) dst[at++] = (CHAR16)(unsigned char)*src++;
    dst[at] = 0;
    return at;
}

EFI_STATUS efi_chain_boot(EFI_HANDLE parent, EFI_HANDLE device, const char *kernel,
                          const char *initrd, const char *cmdline)
{
    static CHAR16 path[260];
    static CHAR16 options[1400];
    EFI_STATUS st;
    chain_append(path, 0, sizeof path / sizeof path[0], kernel);

    UINTN n = 0, cap = sizeof options / sizeof options[0];
    if (initrd[0]) {
        n = chain_append(options, n, cap, "initrd=");
        n = chain_append(options, n, cap, initrd);
        n = chain_append(options, n, cap, " ");
    }
    n = chain_append(options, n, cap, cmdline);

    EFI_DEVICE_PATH *dp = FileDevicePath(device, path);
    if (!dp) return EFI_OUT_OF_RESOURCES;
    EFI_HANDLE child = NULL;
    st = BS->LoadImage(FALSE, parent, dp, NULL, 0, &child);
    FreePool(dp);
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: LoadImage(%s) failed: %r\n", path, st);
        return st;
    }
    EFI_LOADED_IMAGE *li = NULL;
    st = BS->HandleProtocol(child, &LoadedImageProtocol, (VOID **)&li);
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: the kernel image has no LoadedImage protocol: %r\n", st);
        BS->UnloadImage(child);
        return st;
    }
    li->LoadOptions = options;
    li->LoadOptionsSize = (UINT32)((n + 1) * sizeof(CHAR16));
    Print(L"hvtrace: starting %s with \"%s\"\n", path, options);
    st = BS->StartImage(child, NULL, NULL);
    Print(L"hvtrace: the kernel returned: %r\n", st);
    return st;
}
