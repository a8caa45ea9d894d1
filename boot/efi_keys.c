/* efi_keys.c - see efi_keys.h. */
#include <efi.h>
#include <efilib.h>
#include "efi_file.h"
#include "efi_keys.h"

static EFI_GUID efi_keys_guid = EFI_KEYS_GUID;

static void efi_keys_wipe(VOID *p, UINTN n)
{
    volatile UINT8 *b = p;
    for (UINTN i = 0; i < n; i++) b[i] = 0;
}

int efi_keys_read(struct cfg_keys *k)
{
    UINT32 attrs = 0;
    UINTN size = sizeof *k;
    EFI_STATUS st = RT->GetVariable(EFI_KEYS_VAR_NAME, &efi_keys_guid, &attrs, &size, k);
    if (st == EFI_NOT_FOUND)
        return 0;
    if (!EFI_ERROR(st) && attrs == EFI_KEYS_ATTRS && cfg_keys_valid(k, size))
        return 1;
    efi_keys_wipe(k, sizeof *k);
    /* Made at runtime (so by Linux), or not ours: never a key. */
    Print(L"hvtrace: EFI variable %s is not one this loader made (%r, attributes 0x%x, %d bytes):"
          L" deleted, the machine is not enrolled\n", EFI_KEYS_VAR_NAME, st, attrs, size);
    RT->SetVariable(EFI_KEYS_VAR_NAME, &efi_keys_guid, attrs, 0, NULL);
    return 0;
}

int efi_keys_enroll_file(EFI_HANDLE device, int enrolled, struct cfg_keys *k)
{
    VOID *text = NULL;
    UINTN size = 0;
    if (EFI_ERROR(efi_file_read(device, EFI_KEYS_ENROLL, &text, &size)))
        return 0;
    int stored = 0;
    static struct cfg_keys fresh, back;
    if (enrolled) {
        Print(L"hvtrace: %s refused: this machine's keys are enrolled already (a sealed"
              L" configuration's keys = forget removes them)\n", EFI_KEYS_ENROLL);
    } else {
        const char *err = cfg_keys_parse(&fresh, text, size);
        if (err) {
            Print(L"hvtrace: %s: %a; nothing enrolled\n", EFI_KEYS_ENROLL, err);
        } else {
            EFI_STATUS st = RT->SetVariable(EFI_KEYS_VAR_NAME, &efi_keys_guid, EFI_KEYS_ATTRS,
                                            sizeof fresh, &fresh);
            UINT32 attrs = 0;
            UINTN n = sizeof back;
            if (!EFI_ERROR(st))
                st = RT->GetVariable(EFI_KEYS_VAR_NAME, &efi_keys_guid, &attrs, &n, &back);
            if (!EFI_ERROR(st) && (attrs != EFI_KEYS_ATTRS || n != sizeof back ||
                                   CompareMem(&back, &fresh, sizeof back)))
                st = EFI_VOLUME_CORRUPTED;
            if (EFI_ERROR(st)) {
                Print(L"hvtrace: keys of %s not stored in the firmware (%r); nothing enrolled\n",
                      EFI_KEYS_ENROLL, st);
            } else {
                CopyMem(k, &fresh, sizeof fresh);
                stored = 1;
                Print(L"hvtrace: keys enrolled in EFI variable %s (boot services only: Linux"
                      L" cannot read it)%s\n", EFI_KEYS_VAR_NAME,
                      fresh.stream_key_len ? L", stream key included" : L"");
            }
        }
    }
    efi_keys_wipe(&fresh, sizeof fresh);
    efi_keys_wipe(&back, sizeof back);
    efi_keys_wipe(text, size);
    FreePool(text);
    /* Whatever happened, the key material leaves the ESP. */
    EFI_STATUS st = efi_file_shred(device, EFI_KEYS_ENROLL);
    Print(L"hvtrace: %s overwritten and deleted (%r)\n", EFI_KEYS_ENROLL, st);
    return stored;
}

EFI_STATUS efi_keys_forget(void)
{
    return RT->SetVariable(EFI_KEYS_VAR_NAME, &efi_keys_guid, EFI_KEYS_ATTRS, 0, NULL);
}
