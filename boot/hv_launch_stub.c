/*
 * hv_launch_stub.c - TEMPORARY weak stand-in for hvl_start() (boot/hv_launch.h) so the
 * loader links and its untraced path can be tested before boot/hv_launch.c exists.
 * The real hvl_start() in boot/hv_launch.c is a strong symbol and overrides this one.
 * TO BE REMOVED (by the hypervisor's author) once boot/hv_launch.c is committed.
 */
#include <efi.h>
#include <efilib.h>
#include "hv_launch.h"

__attribute__((weak)) EFI_STATUS hvl_start(const struct hvl_params *p, CHAR16 *why, UINTN why_chars)
{
    (void)p;
    SPrint(why, why_chars * sizeof(CHAR16), L"this build has no hypervisor (weak hvl_start stub)");
    return EFI_UNSUPPORTED;
}
