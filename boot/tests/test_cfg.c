/*
 * test_cfg.c - host unit test of boot/cfg.c (the hvtrace.cfg parser).
 * Prints one line per failed check and a closing "N passed, N failed".
 */
#include <stdio.h>
#include <string.h>
#include "cfg.h"
#include "check.h"


static unsigned reports[16], n_reports;
static const char *last_msg;
static void report(void *ctx, unsigned line, const char *msg)
{
    (void)ctx;
    if (n_reports < 16) reports[n_reports] = line;
    n_reports++;
    last_msg = msg;
}

static unsigned parse(struct cfg *c, const char *text)
{
    n_reports = 0;
    last_msg = NULL;
    cfg_defaults(c);
    return cfg_parse(c, text, strlen(text), report, NULL);
}

int main(void)
{
    struct cfg c;

    cfg_defaults(&c);
    CHECK(!strcmp(c.kernel, "\\vmlinuz") && !strcmp(c.initrd, "\\initrd.img"), "default paths");
    CHECK(c.hypervisor == 1 && c.hv_mem_mb == 0 && c.log == CFG_LOG_E9 &&
          c.acpi_fixup == CFG_ACPI_FIXUP_AUTO && c.advertise == 0 && c.selftest == 0, "default values");

    CHECK(parse(&c, "") == 0 && n_reports == 0, "empty file");
    CHECK(parse(&c, "# only a comment\n\n   \n\t# indented comment\n") == 0, "comments and blanks");

    const char *full =
        "\xef\xbb\xbf" "kernel = /boot/vmlinuz-6.1\r\n"
        "initrd=\\boot\\initrd.img   # trailing comment\r\n"
        "cmdline =  console=ttyS0 quiet  hvt_cpus=2 \n"
        "hypervisor = off\n"
        "hv_mem_mb = 128\n"
        "log = both\n"
        "advertise = on\n"
        "selftest = on\n"
        "acpi_fixup = off";                     /* no final newline */
    CHECK(parse(&c, full) == 0 && n_reports == 0, "full file parses cleanly (%s)", last_msg ? last_msg : "");
    CHECK(!strcmp(c.kernel, "\\boot\\vmlinuz-6.1"), "kernel path with / converted: %s", c.kernel);
    CHECK(!strcmp(c.initrd, "\\boot\\initrd.img"), "initrd: %s", c.initrd);
    CHECK(!strcmp(c.cmdline, "console=ttyS0 quiet  hvt_cpus=2"), "cmdline trimmed: '%s'", c.cmdline);
    CHECK(c.hypervisor == 0 && c.hv_mem_mb == 128 && c.log == CFG_LOG_BOTH &&
          c.acpi_fixup == CFG_ACPI_FIXUP_OFF && c.advertise == 1 && c.selftest == 1, "values");
    CHECK(parse(&c, "advertise = yes\n") == 1 && c.advertise == 0, "advertise: bad value reported, default kept");
    CHECK(parse(&c, "advertise = off\n") == 0 && c.advertise == 0, "advertise = off");

    /* Bad lines: reported with their number, field kept, parsing goes on. */
    const char *bad =
        "hypervisor = maybe\n"       /* 1: bad value */
        "colour = blue\n"            /* 2: unknown key */
        "hv_mem_mb = 2\n"            /* 3: out of range */
        "hv_mem_mb = 12x\n"          /* 4: not a number */
        "kernel = vmlinuz\n"         /* 5: not an ESP path */
        "just some words\n"          /* 6: no '=' */
        " = value\n"                 /* 7: no key */
        "log = none\n";              /* 8: fine */
    CHECK(parse(&c, bad) == 7 && n_reports == 7, "7 bad lines reported (%u)", n_reports);
    CHECK(reports[0] == 1 && reports[1] == 2 && reports[2] == 3 && reports[3] == 4 &&
          reports[4] == 5 && reports[5] == 6 && reports[6] == 7, "line numbers");
    CHECK(c.hypervisor == 1 && c.hv_mem_mb == 0 && !strcmp(c.kernel, "\\vmlinuz"),
          "defaults kept after bad values");
    CHECK(c.log == CFG_LOG_NONE, "good line after bad ones applied");

    CHECK(parse(&c, "initrd =\n") == 0 && c.initrd[0] == 0, "empty initrd = no initrd");
    CHECK(parse(&c, "kernel =\n") == 1 && !strcmp(c.kernel, "\\vmlinuz"), "empty kernel refused");
    CHECK(parse(&c, "hv_mem_mb = 99999999999\n") == 1 && c.hv_mem_mb == 0, "huge number refused");
    CHECK(parse(&c, "Kernel = \\x\n") == 1, "keys are case-sensitive");

    char longline[2 * CFG_CMDLINE_MAX];
    memset(longline, 'a', sizeof longline);
    memcpy(longline, "cmdline=", 8);
    longline[sizeof longline - 1] = 0;
    CHECK(parse(&c, longline) == 1 && !strcmp(c.cmdline, CFG_DEFAULT_CMDLINE), "too-long cmdline refused");

    /* NULL report callback is allowed; the count is still returned. */
    cfg_defaults(&c);
    CHECK(cfg_parse(&c, "x = 1\n", 6, NULL, NULL) == 1, "NULL callback");

    return check_summary("test_cfg");
}
