/*
 * hvt options - build the hypervisor's "trace =" line (trace/trace_opts.h) for one kernel:
 *   hvt options VMLINUZ [ITEM ...]
 * Always adds task= (the task_struct layout from the kernel's BTF), switch_at= (link-time
 * __switch_to: where scope= and D's step() watch which task a CPU switches to) and lstar=
 * (link-time entry_SYSCALL_64, from which the hypervisor learns the KASLR slide). Items are the
 * hypervisor's key=value options; where an address is wanted a symbol may stand instead:
 *   at=__x64_sys_getpid   stop_at=panic:oops_begin   range=do_sys_openat2  (the function's
 *   extent, up to the next symbol)   range=SYM1-SYM2
 * The result is checked with the hypervisor's own parser (trace_opts.c, compiled in here), so
 * a bad item is reported now, with its column, not at boot.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hvt_cmd.h"
#include "kinfo.h"
#include "trace_opts.h"

#define LINE_MAX_LEN 2048

static int usage(void)
{
    fprintf(stderr, "usage: hvt options VMLINUZ [ITEM ...]\n"
                    "  items: start=mark|boot|host|passes|entry at=SYM|ADDR passes=N pid=N comm=NAME\n"
                    "         budget=N only=kernel|user cr3=ADDR range=SYM|SYM1-SYM2|LO-HI\n"
                    "         stop_at=SYM[:SYM...] flight=MB checkregs=on|off\n"
                    "         record=full|flow regs=REG[:REG...] (rax..r15, rflags)\n"
                    "         scope=pid:N|tid:N|comm:NAME irq=in|out\n"
                    "         probe=entry:SYM|return:SYM|addr:SYM+OFF (armed by the HVT_HC_PROBE hypercall)\n"
                    "  prints the 'trace =' value for hvtrace.cfg (task=, switch_at= and lstar= included)\n");
    return 2;
}

static int is_number(const char *s, size_t n)
{
    if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        for (size_t i = 2; i < n; i++)
            if (!strchr("0123456789abcdefABCDEF", s[i])) return 0;
        return 1;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return 0;
    return n > 0;
}

/* Append one address (number as given, or symbol -> link-time address); end: the symbol's end. */
static int put_addr(const kinfo *ki, const char *s, size_t n, int end, char *out, size_t cap)
{
    char name[256];
    if (is_number(s, n)) {
        snprintf(out + strlen(out), cap - strlen(out), "%.*s", (int)n, s);
        return 0;
    }
    if (n >= sizeof name) return -1;
    memcpy(name, s, n);
    name[n] = 0;
    int64_t i = ksym_find(&ki->syms, name);
    if (i < 0) {
        fprintf(stderr, "hvt options: no symbol '%s' in this kernel\n", name);
        return -1;
    }
    uint64_t a = ki->syms.syms[i].addr;
    if (end) {
        /* The next higher address among the sorted symbols: the function's end. */
        uint64_t next = 0;
        for (uint32_t k = 0; k < ki->syms.by_addr_count; k++) {
            uint64_t b = ki->syms.syms[ki->syms.by_addr[k]].addr;
            if (b > a) { next = b; break; }
        }
        if (!next) return -1;
        a = next;
    }
    snprintf(out + strlen(out), cap - strlen(out), "0x%" PRIx64, a);
    return 0;
}

static int put_item(const kinfo *ki, const char *item, char *out, size_t cap)
{
    const char *eq = strchr(item, '=');
    if (!eq) {
        fprintf(stderr, "hvt options: '%s': wants key=value\n", item);
        return -1;
    }
    size_t kn = (size_t)(eq - item);
    const char *v = eq + 1;
    snprintf(out + strlen(out), cap - strlen(out), ",%.*s=", (int)kn, item);
    if (kn == 2 && !strncmp(item, "at", 2))
        return put_addr(ki, v, strlen(v), 0, out, cap);
    if (kn == 7 && !strncmp(item, "stop_at", 7)) {
        for (const char *p = v; *p;) {
            const char *c = strchr(p, ':');
            size_t n = c ? (size_t)(c - p) : strlen(p);
            if (put_addr(ki, p, n, 0, out, cap)) return -1;
            if (!c) break;
            snprintf(out + strlen(out), cap - strlen(out), ":");
            p = c + 1;
        }
        return 0;
    }
    if (kn == 5 && !strncmp(item, "probe", 5)) {
        /* entry:SYM, addr:SYM[+OFF] or addr:ADDR, return:SYM (its extent) */
        const char *colon = strchr(v, ':');
        if (!colon) {
            fprintf(stderr, "hvt options: '%s': wants probe=entry:SYM, return:SYM or addr:SYM+OFF\n", item);
            return -1;
        }
        size_t kl = (size_t)(colon - v) + 1;
        snprintf(out + strlen(out), cap - strlen(out), "%.*s", (int)kl, v);
        const char *s = colon + 1;
        if (kl == 7 && !strncmp(v, "return:", 7)) {
            if (put_addr(ki, s, strlen(s), 0, out, cap)) return -1;
            snprintf(out + strlen(out), cap - strlen(out), "-");
            return put_addr(ki, s, strlen(s), 1, out, cap);
        }
        const char *plus = strchr(s, '+');
        if (!plus)
            return put_addr(ki, s, strlen(s), 0, out, cap);
        char base[64] = "";
        if (put_addr(ki, s, (size_t)(plus - s), 0, base, sizeof base)) return -1;
        uint64_t off = strtoull(plus + 1, 0, 0);
        snprintf(out + strlen(out), cap - strlen(out), "0x%" PRIx64, (uint64_t)(strtoull(base, 0, 16) + off));
        return 0;
    }
    if (kn == 5 && !strncmp(item, "range", 5)) {
        const char *dash = strchr(v, '-');
        size_t lo_n = dash ? (size_t)(dash - v) : strlen(v);
        if (put_addr(ki, v, lo_n, 0, out, cap)) return -1;
        snprintf(out + strlen(out), cap - strlen(out), "-");
        if (!dash)      /* one symbol: its whole extent */
            return put_addr(ki, v, lo_n, 1, out, cap);
        snprintf(out + strlen(out), cap - strlen(out), "-");
        return put_addr(ki, dash + 1, strlen(dash + 1), 0, out, cap);
    }
    snprintf(out + strlen(out), cap - strlen(out), "%s", v);
    return 0;
}

int cmd_options(int argc, char **argv)
{
    if (argc < 1 || argv[0][0] == '-') return usage();
    kinfo ki;
    if (kinfo_open(&ki, argv[0], 1) != 0) return 1;
    kinfo_layout l;
    int64_t lstar = ksym_find(&ki.syms, "entry_SYSCALL_64");
    if (kinfo_layout_get(&ki, &l) != 0 || lstar < 0) {
        fprintf(stderr, "hvt options: %s: no task layout or no entry_SYSCALL_64\n", argv[0]);
        kinfo_close(&ki);
        return 1;
    }
    static char line[LINE_MAX_LEN];
    snprintf(line, sizeof line, "task=0x%llx:%u:%u:%u:%u:%u",
             (unsigned long long)l.percpu_current, l.task_pid, l.task_tgid, l.task_comm,
             l.task_cred, l.cred_euid);
    int64_t sw = ksym_find(&ki.syms, "__switch_to");
    if (sw >= 0)
        snprintf(line + strlen(line), sizeof line - strlen(line), ",switch_at=0x%" PRIx64,
                 ki.syms.syms[sw].addr);
    snprintf(line + strlen(line), sizeof line - strlen(line), ",lstar=0x%" PRIx64,
             ki.syms.syms[lstar].addr);
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++)
        if (put_item(&ki, argv[i], line, sizeof line)) rc = 1;
    kinfo_close(&ki);
    if (rc) return 1;
    struct trace_opts o;
    char err[200];
    if (trace_opts_parse(line, &o, err, sizeof err)) {
        fprintf(stderr, "hvt options: %s\n  in: %s\n", err, line);
        return 1;
    }
    printf("%s\n", line);
    return 0;
}
