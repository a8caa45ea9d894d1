/*
 * cfg.c - hvtrace.cfg parser (see cfg.h). Works on a bounded buffer, copies values with
 * explicit bounds, and keeps each key's validation next to its name in one table.
 */
#include "cfg.h"

static size_t cfg_strlen(const char *s) { size_t n = 0; while (s[n]) n++; return n; }

static int cfg_eq(const char *a, size_t alen, const char *b)
{
    size_t blen = cfg_strlen(b);
    if (alen != blen) return 0;
    for (size_t i = 0; i < alen; i++) if (a[i] != b[i]) return 0;
    return 1;
}

/* Copy [v, v+len) into dst (capacity cap, NUL terminated); 0 when it does not fit. */
static int cfg_copy(char *dst, size_t cap, const char *v, size_t len)
{
    if (len + 1 > cap) return 0;
    for (size_t i = 0; i < len; i++) dst[i] = v[i];
    dst[len] = 0;
    return 1;
}

static int cfg_is_space(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

/* An ESP path: must start with a backslash; forward slashes are accepted and converted.
 * Validated before anything is written, so a bad value leaves the field unchanged. */
static const char *cfg_set_path(char *dst, const char *v, size_t len, int empty_ok)
{
    if (len == 0) {
        if (!empty_ok) return "empty path";
        dst[0] = 0;
        return NULL;
    }
    if (v[0] != '\\' && v[0] != '/') return "path must start with \\ (a path on the ESP)";
    if (len + 1 > CFG_PATH_MAX) return "path too long";
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)v[i] < 0x20 || (unsigned char)v[i] > 0x7e) return "path must be printable ASCII";
    cfg_copy(dst, CFG_PATH_MAX, v, len);
    for (size_t i = 0; i < len; i++) if (dst[i] == '/') dst[i] = '\\';
    return NULL;
}

static const char *cfg_set_u32(uint32_t *dst, const char *v, size_t len, uint32_t lo, uint32_t hi)
{
    uint64_t n = 0;
    if (len == 0 || len > 10) return "expected a decimal number";
    for (size_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return "expected a decimal number";
        n = n * 10 + (uint64_t)(v[i] - '0');
    }
    if (n < lo || n > hi) return "number out of range (4..4096)";
    *dst = (uint32_t)n;
    return NULL;
}

static const char *cfg_apply(struct cfg *c, const char *k, size_t klen, const char *v, size_t vlen)
{
    if (cfg_eq(k, klen, "kernel")) return cfg_set_path(c->kernel, v, vlen, 0);
    if (cfg_eq(k, klen, "initrd")) return cfg_set_path(c->initrd, v, vlen, 1);
    if (cfg_eq(k, klen, "cmdline"))
        return cfg_copy(c->cmdline, sizeof c->cmdline, v, vlen) ? NULL : "cmdline too long";
    /* Options handed through to the hypervisor's tracer and NIC (checked there). */
    if (cfg_eq(k, klen, "trace"))
        return cfg_copy(c->trace, sizeof c->trace, v, vlen) ? NULL : "trace options too long";
    if (cfg_eq(k, klen, "net"))
        return cfg_copy(c->net, sizeof c->net, v, vlen) ? NULL : "net options too long";
    if (cfg_eq(k, klen, "hypervisor")) {
        if (cfg_eq(v, vlen, "on")) { c->hypervisor = 1; return NULL; }
        if (cfg_eq(v, vlen, "off")) { c->hypervisor = 0; return NULL; }
        return "expected on or off";
    }
    if (cfg_eq(k, klen, "selftest")) {
        if (cfg_eq(v, vlen, "on")) { c->selftest = 1; return NULL; }
        if (cfg_eq(v, vlen, "off")) { c->selftest = 0; return NULL; }
        return "expected on or off";
    }
    if (cfg_eq(k, klen, "advertise")) {
        if (cfg_eq(v, vlen, "on")) { c->advertise = 1; return NULL; }
        if (cfg_eq(v, vlen, "off")) { c->advertise = 0; return NULL; }
        return "expected on or off";
    }
    if (cfg_eq(k, klen, "hv_mem_mb"))
        return cfg_set_u32(&c->hv_mem_mb, v, vlen, CFG_HV_MEM_MB_MIN, CFG_HV_MEM_MB_MAX);
    if (cfg_eq(k, klen, "log")) {
        if (cfg_eq(v, vlen, "e9")) { c->log = CFG_LOG_E9; return NULL; }
        if (cfg_eq(v, vlen, "com1")) { c->log = CFG_LOG_COM1; return NULL; }
        if (cfg_eq(v, vlen, "both")) { c->log = CFG_LOG_BOTH; return NULL; }
        if (cfg_eq(v, vlen, "none")) { c->log = CFG_LOG_NONE; return NULL; }
        return "expected e9, com1, both or none";
    }
    if (cfg_eq(k, klen, "acpi_fixup")) {
        if (cfg_eq(v, vlen, "auto")) { c->acpi_fixup = CFG_ACPI_FIXUP_AUTO; return NULL; }
        if (cfg_eq(v, vlen, "off")) { c->acpi_fixup = CFG_ACPI_FIXUP_OFF; return NULL; }
        return "expected auto or off";
    }
    if (cfg_eq(k, klen, "keys")) {
        if (cfg_eq(v, vlen, "keep")) { c->keys_forget = 0; return NULL; }
        if (cfg_eq(v, vlen, "forget")) { c->keys_forget = 1; return NULL; }
        return "expected keep or forget";
    }
    if (cfg_eq(k, klen, "seal"))
        return NULL;                  /* checked over the whole file by cfg_seal.c */
    return "unknown key";
}

void cfg_defaults(struct cfg *c)
{
    cfg_copy(c->kernel, sizeof c->kernel, CFG_DEFAULT_KERNEL, cfg_strlen(CFG_DEFAULT_KERNEL));
    cfg_copy(c->initrd, sizeof c->initrd, CFG_DEFAULT_INITRD, cfg_strlen(CFG_DEFAULT_INITRD));
    cfg_copy(c->cmdline, sizeof c->cmdline, CFG_DEFAULT_CMDLINE, cfg_strlen(CFG_DEFAULT_CMDLINE));
    c->hypervisor = 1;
    c->hv_mem_mb = CFG_DEFAULT_HV_MEM_MB;
    c->log = CFG_LOG_E9;
    c->acpi_fixup = CFG_ACPI_FIXUP_AUTO;
    c->advertise = 0;
    c->selftest = 0;
    c->trace[0] = 0;
    c->net[0] = 0;
    c->keys_forget = 0;
}

unsigned cfg_parse(struct cfg *c, const char *text, size_t len, cfg_report_fn report, void *ctx)
{
    unsigned bad = 0, line = 0;
    size_t pos = 0;
    /* A UTF-8 byte order mark (editors on other systems add one) is not part of the first key. */
    if (len >= 3 && (unsigned char)text[0] == 0xef && (unsigned char)text[1] == 0xbb &&
        (unsigned char)text[2] == 0xbf)
        pos = 3;
    while (pos < len) {
        size_t start = pos, end;
        while (pos < len && text[pos] != '\n') pos++;
        end = pos;
        if (pos < len) pos++; /* the '\n' */
        line++;
        /* Strip a comment, then surrounding blanks. */
        for (size_t i = start; i < end; i++) if (text[i] == '#') { end = i; break; }
        while (start < end && cfg_is_space(text[start])) start++;
        while (end > start && cfg_is_space(text[end - 1])) end--;
        if (start == end) continue;
        size_t eq = start;
        while (eq < end && text[eq] != '=') eq++;
        const char *msg;
        if (eq == end) {
            msg = "expected key = value";
        } else {
            size_t kend = eq, vstart = eq + 1;
            while (kend > start && cfg_is_space(text[kend - 1])) kend--;
            while (vstart < end && cfg_is_space(text[vstart])) vstart++;
            msg = kend == start ? "missing key"
                                : cfg_apply(c, text + start, kend - start, text + vstart, end - vstart);
        }
        if (msg) {
            bad++;
            if (report) report(ctx, line, msg);
        }
    }
    return bad;
}
