/*
 * cfg.h - parser of hvtrace.cfg, the loader's configuration file on the ESP.
 *
 * Contract: cfg_defaults() fills every field with its default; cfg_parse() then applies the
 * lines of an ASCII/UTF-8 text buffer (not NUL terminated, any of LF / CRLF line ends):
 *   key = value        # comment
 * Blank lines and lines starting with '#' are ignored; a '#' after the value starts a comment
 * (so values cannot contain '#'). Keys are case-sensitive. For an unknown key or a bad value
 * the parser calls report(ctx, line_number, message) once, leaves that field at its previous
 * value and goes on with the next line: a bad line never stops the boot. It returns the number
 * of lines reported. The `seal` line is read by cfg_seal.c, not here (accepted, ignored).
 * Pure code (no EFI, no libc beyond <stdint.h>/<stddef.h>): unit-tested on the host.
 */
#ifndef HVT_CFG_H
#define HVT_CFG_H
#include <stddef.h>
#include <stdint.h>

#define CFG_PATH_MAX     256     /* ESP paths, ASCII, with backslashes */
#define CFG_CMDLINE_MAX  1024
#define CFG_OPT_MAX      512     /* trace = ..., net = ...: passed to the hypervisor */

enum cfg_log { CFG_LOG_NONE = 0, CFG_LOG_E9 = 1, CFG_LOG_COM1 = 2, CFG_LOG_BOTH = 3 };
enum cfg_acpi_fixup { CFG_ACPI_FIXUP_AUTO = 0, CFG_ACPI_FIXUP_OFF = 1 };

#define CFG_DEFAULT_KERNEL    "\\vmlinuz"
#define CFG_DEFAULT_INITRD    "\\initrd.img"
#define CFG_DEFAULT_CMDLINE   "console=ttyS0 quiet"
#define CFG_DEFAULT_HV_MEM_MB 0u    /* auto: hv_launch.c sizes the region by CPU count */
#define CFG_HV_MEM_MB_MIN     4u
#define CFG_HV_MEM_MB_MAX     4096u

struct cfg {
    char kernel[CFG_PATH_MAX];
    char initrd[CFG_PATH_MAX];    /* "" = no initrd */
    char cmdline[CFG_CMDLINE_MAX];
    int hypervisor;               /* 1 = on, 0 = off */
    int selftest;                 /* 1: test boots: hypervisor canary, memory range for guest root */
    int advertise;                /* 1: CPUID shows the guest a hypervisor (default 0: the bare CPU's view) */
    uint32_t hv_mem_mb;
    enum cfg_log log;
    enum cfg_acpi_fixup acpi_fixup;
    char trace[CFG_OPT_MAX];      /* tracer options, "key=value,..." ("" = defaults) */
    char net[CFG_OPT_MAX];        /* dedicated NIC options ("" = no NIC) */
    int keys_forget;              /* keys = forget: delete the enrolled keys (cfg_seal.h; only
                                     a sealed configuration can ask it) */
};

typedef void (*cfg_report_fn)(void *ctx, unsigned line, const char *message);

void cfg_defaults(struct cfg *c);
unsigned cfg_parse(struct cfg *c, const char *text, size_t len, cfg_report_fn report, void *ctx);

#endif
