/*
 * efi_main.c - hvtrace.efi, the loader: read \hvtrace.cfg, give the platform ACPI tables if
 * it has none (test-platform step, acpi_fixup.c), make VT-x usable on every CPU (vtx.c),
 * start the hypervisor under the running firmware (hvl_start, boot/hv_launch.h), then
 * chain-load Linux through its EFI stub (efi_chain.c). Whatever fails before the chain-load
 * is reported on ConOut and Linux boots untraced: the loader never hangs or stops the boot.
 */
#include <efi.h>
#include <efilib.h>
#include "acpi_fixup.h"
#include "cfg.h"
#include "efi_chain.h"
#include "efi_file.h"
#include "efi_keys.h"
#include "efi_mp.h"
#include "hv_launch.h"
#include "hvt_bootinfo.h"
#include "sha256.h"
#include "vtx.h"

#define EFI_MAIN_CFG_PATH  L"\\hvtrace.cfg"
#define EFI_MAIN_WHY_CHARS 256

static EFI_GUID mp_services_guid = HVT_EFI_MP_SERVICES_PROTOCOL_GUID;

static void efi_main_cfg_report(void *ctx, unsigned line, const char *message)
{
    (void)ctx;
    Print(L"hvtrace: hvtrace.cfg line %d: %a; line ignored (default kept)\n", line, message);
}

/* Zero memory the compiler may not drop as a dead store. */
static void efi_main_wipe(VOID *p, UINTN n)
{
    volatile UINT8 *b = p;
    for (UINTN i = 0; i < n; i++)
        b[i] = 0;
}

/* What the loader could verify of hvtrace.cfg: passed to the hypervisor, which reports it to
 * the collector (HELLO), so a changed configuration is seen on the host. */
static UINT8 efi_main_cfg_sha256[SHA256_DIGEST_LEN];
static UINT32 efi_main_cfg_state = HVT_CFG_NO_FILE;

/* On an enrolled machine a configuration without a valid seal keeps its harmless lines only
 * (cfg_seal.h); the enrolled stream key replaces any key= of the net line. */
static void efi_main_apply_keys(struct cfg *c, const struct cfg_keys *k, const char *text, UINTN size)
{
    enum cfg_seal_state seal = cfg_seal_check(k->seal_key, text ? text : "", text ? size : 0);
    if (seal != CFG_SEAL_OK) {
        efi_main_cfg_state = HVT_CFG_UNSEALED;
        unsigned dropped = cfg_seal_enforce(c);
        Print(L"hvtrace: hvtrace.cfg is not sealed with this machine's key (%a): its security "
              L"lines are not honoured:%s%s%s%s%s%s\n", cfg_seal_state_name(seal),
              dropped & CFG_SEAL_DROP_HYPERVISOR ? L" hypervisor (on)" : L"",
              dropped & CFG_SEAL_DROP_SELFTEST ? L" selftest (off)" : L"",
              dropped & CFG_SEAL_DROP_TRACE ? L" trace (defaults)" : L"",
              dropped & CFG_SEAL_DROP_NET ? L" net (no NIC)" : L"",
              dropped & CFG_SEAL_DROP_KEYS ? L" keys (kept)" : L"",
              dropped ? L"" : L" none was set");
    } else {
        efi_main_cfg_state = HVT_CFG_SEALED;
        Print(L"hvtrace: hvtrace.cfg seal verified\n");
        if (c->keys_forget) {
            EFI_STATUS st = efi_keys_forget();
            Print(L"hvtrace: keys = forget: enrolled keys deleted (%r); the next \\hvtrace.enroll "
                  L"is accepted\n", st);
        }
    }
    if (c->net[0] && k->stream_key_len) {
        if (cfg_net_set_key(c->net, k->stream_key, k->stream_key_len) != 0) {
            Print(L"hvtrace: net options too long for the enrolled stream key: no NIC\n");
            efi_main_wipe(c->net, sizeof c->net);
        }
    }
}

static void efi_main_load_cfg(EFI_HANDLE device, struct cfg *c)
{
    static struct cfg_keys keys;
    VOID *text = NULL;
    UINTN size = 0;
    cfg_defaults(c);
    int enrolled = efi_keys_read(&keys);
    EFI_STATUS st = efi_file_read(device, EFI_MAIN_CFG_PATH, &text, &size);
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: no %s (%r): using defaults\n", EFI_MAIN_CFG_PATH, st);
        text = NULL;
        size = 0;
    } else {
        struct sha256_ctx h;
        sha256_init(&h);
        sha256_update(&h, text, size);
        sha256_final(&h, efi_main_cfg_sha256);
        efi_main_cfg_state = HVT_CFG_NOT_ENROLLED;
        cfg_parse(c, text, size, efi_main_cfg_report, NULL);
    }
    /* Keys enrolled at this boot come with the configuration sealed under them. */
    if (efi_keys_enroll_file(device, enrolled, &keys))
        enrolled = 1;
    if (enrolled)
        efi_main_apply_keys(c, &keys, text, size);
    else if (c->keys_forget)
        c->keys_forget = 0;
    efi_main_wipe(&keys, sizeof keys);
    /* the file may hold the stream key: pool memory goes to Linux, so nothing of it stays */
    if (text) {
        efi_main_wipe(text, size);
        FreePool(text);
    }
}

static const CHAR16 *efi_main_log_name(enum cfg_log l)
{
    switch (l) {
    case CFG_LOG_E9: return L"e9";
    case CFG_LOG_COM1: return L"com1";
    case CFG_LOG_BOTH: return L"both";
    default: return L"none";
    }
}

static UINT32 efi_main_log_flags(enum cfg_log l)
{
    return (l == CFG_LOG_E9 || l == CFG_LOG_BOTH ? HVL_LOG_E9 : 0) |
           (l == CFG_LOG_COM1 || l == CFG_LOG_BOTH ? HVL_LOG_COM1 : 0);
}

/* Start the hypervisor if configured and possible; every "no" is explained on ConOut. */
static void efi_main_start_hv(const struct cfg *c, hvt_efi_mp_services *mp,
                              struct acpi_fixup_result *acpi)
{
    static CHAR16 why[EFI_MAIN_WHY_CHARS];
    if (!c->hypervisor) {
        Print(L"hvtrace: hypervisor = off in hvtrace.cfg; booting Linux untraced\n");
        return;
    }
    why[0] = 0;
#ifndef HVT_LOADER_NETTEST
    if (vtx_prepare(mp, why, EFI_MAIN_WHY_CHARS) != EFI_SUCCESS) {
        Print(L"hvtrace: VT-x not available: %s; booting Linux untraced\n", why);
        return;
    }
#endif
    struct hvl_params p;
    SetMem(&p, sizeof p, 0);
    p.mp = mp;
    p.hv_mem_mb = c->hv_mem_mb;
    p.log_flags = efi_main_log_flags(c->log);
    p.hv_flags = (c->advertise ? HVT_HVF_ADVERTISE : 0) | (c->selftest ? HVT_HVF_SELFTEST : 0);
    p.pm1a_cnt_port = acpi->pm1a_cnt_port;
    p.mcfg = acpi->mcfg;
    p.mcfg_len = acpi->mcfg_len;
    p.dmar = acpi->dmar;
    p.dmar_len = acpi->dmar_len;
    /* Before the start: the firmware's drivers run on as the hypervisor's guest, and none
     * must find the VT-d units the hypervisor now owns. */
    if (acpi_fixup_hide_dmar(acpi) && acpi->dmar)
        p.hv_flags |= HVT_HVF_DMAR_HIDDEN;
    p.pm1b_cnt_port = acpi->pm1b_cnt_port;
    /* S1-S4 out of the guest's sight, and S5's type for the hypervisor's PM1 check. */
    struct acpi_sleep_info sleep;
    acpi_fixup_hide_sleep(&sleep);
    p.s5_known = (sleep.present >> 5) & 1;
    p.s5_slp_typ_a = sleep.typ_a[5];
    p.s5_slp_typ_b = sleep.typ_b[5];
    p.trace_config = c->trace;
    p.net_config = c->net;
    p.cfg_sha256 = efi_main_cfg_sha256;
    p.cfg_state = efi_main_cfg_state;
    why[0] = 0;
    EFI_STATUS st = hvl_start(&p, why, EFI_MAIN_WHY_CHARS);
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: hypervisor not started (%r): %s; booting Linux untraced\n", st, why);
        acpi_fixup_restore_dmar(acpi);
        return;
    }
    Print(L"hvtrace: hypervisor running; the firmware, this loader and Linux are now its guest\n");
}

/* Not EFIAPI: gnu-efi's crt0 (crt0-efi-x86_64.o) calls efi_main with the SysV ABI. */
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    InitializeLib(image, systab);
    /* The TSC here splits a boot's cost into firmware and loader+Linux (in Bochs the TSC
     * counts retired instructions). */
    UINT32 tsc_lo, tsc_hi;
    __asm__ volatile("rdtsc" : "=a"(tsc_lo), "=d"(tsc_hi));
    Print(L"hvtrace: loader started (tsc %ld)\n", ((UINT64)tsc_hi << 32) | tsc_lo);

    EFI_LOADED_IMAGE *self = NULL;
    EFI_STATUS st = BS->HandleProtocol(image, &LoadedImageProtocol, (VOID **)&self);
    if (EFI_ERROR(st)) {
        Print(L"hvtrace: no LoadedImage protocol for the loader itself: %r\n", st);
        return st;
    }
    EFI_HANDLE device = self->DeviceHandle;

    static struct cfg c;
    efi_main_load_cfg(device, &c);
    Print(L"hvtrace: kernel=%a initrd=%a hypervisor=%s hv_mem_mb=%d%s log=%s acpi_fixup=%s\n",
          c.kernel, c.initrd[0] ? c.initrd : "(none)", c.hypervisor ? L"on" : L"off",
          c.hv_mem_mb, c.hv_mem_mb ? L"" : L" (auto)", efi_main_log_name(c.log),
          c.acpi_fixup == CFG_ACPI_FIXUP_OFF ? L"off" : L"auto");
    Print(L"hvtrace: cmdline=%a\n", c.cmdline);
    /* What the seal decided, visible (never the net line itself: it may hold the key). */
    Print(L"hvtrace: selftest=%s trace=%s net=%s\n", c.selftest ? L"on" : L"off",
          c.trace[0] ? L"set" : L"(defaults)", c.net[0] ? L"set" : L"(none)");

    hvt_efi_mp_services *mp = NULL;
    if (EFI_ERROR(LibLocateProtocol(&mp_services_guid, (VOID **)&mp))) {
        Print(L"hvtrace: no MP services protocol: the BSP only\n");
        mp = NULL;
    } else {
        UINTN n = 0, enabled = 0;
        if (mp->get_number_of_processors(mp, &n, &enabled) == EFI_SUCCESS)
            Print(L"hvtrace: MP services: %d CPUs, %d enabled\n", n, enabled);
    }

    /* Test-platform step (see acpi_fixup.h): only acts when the firmware has no ACPI. */
    struct acpi_fixup_result acpi;
    acpi_fixup_run(c.acpi_fixup != CFG_ACPI_FIXUP_OFF, mp, &acpi);

    efi_main_start_hv(&c, mp, &acpi);
#ifdef HVT_LOADER_NETTEST
    /* The nettest image has run its test inside "init" and virtualized nothing (its log
     * says how it went): no Linux to boot. */
    Print(L"hvtrace: nettest image done; powering off\n");
    uefi_call_wrapper(RT->ResetSystem, 4, EfiResetShutdown, EFI_SUCCESS, 0, NULL);
#endif
    /* The hypervisor has its own copy of the net options (the key among them) in its own
     * memory; this loader's memory becomes Linux's. */
    efi_main_wipe(c.net, sizeof c.net);

    st = efi_chain_boot(image, device, c.kernel, c.initrd, c.cmdline);
    Print(L"hvtrace: could not boot %a: %r\n", c.kernel, st);
    return st;
}
