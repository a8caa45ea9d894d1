/* probe_list.c - the probes of one kernel (see probe_list.h). */
#include "probe_list.h"
#include "util.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <stdbool.h>
#include "x86_len.h"

#define SYSCALL_PREFIX "__x64_sys_"

static int push(probe_list *l, size_t *cap, probe_desc d)
{
    if (l->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 4096;
        probe_desc *np = realloc(l->p, nc * sizeof *np);
        if (!np)
            return -1;
        l->p = np;
        *cap = nc;
    }
    d.id = (uint32_t)l->n + 1;
    l->p[l->n++] = d;
    return 0;
}

/* A function's pair of probes: entry, then return (d holds the entry). */
static int push_pair(probe_list *l, size_t *cap, probe_desc d)
{
    if (push(l, cap, d))
        return -1;
    d.name = "return";
    d.kind = PL_RETURN;
    return push(l, cap, d);
}

/* Why a text symbol is no place for a probe, or NULL. */
static const char *unsafe_reason(const char *name, uint64_t lo, uint64_t hi, uint64_t init_lo, uint64_t init_hi)
{
    if (hi <= lo)
        return "no extent (an alias of the next symbol)";
    if (init_lo && lo >= init_lo && lo < init_hi)
        return "init text: freed after boot";
    if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
        return "padding before a function, not code";
    if (strstr(name, ".cold"))
        return "the cold part of a function: no entry, no return of its own";
    return NULL;
}

static uint64_t sym_addr(const ksym_table *t, const char *name)
{
    int64_t i = ksym_find(t, name);
    return i < 0 ? 0 : t->syms[i].addr;
}

int probe_list_build(const ksym_table *t, probe_list *out)
{
    size_t cap = 0;
    out->p = NULL;
    out->n = 0;
    out->modpre = NULL;
    out->modsdt = NULL;
    out->nmodsdt = 0;
    out->modsdt_free = NULL;
    out->builtin_pool = NULL;
    uint64_t init_lo = sym_addr(t, "_sinittext"), init_hi = sym_addr(t, "_einittext");
    uint64_t text_lo = sym_addr(t, "_stext"), text_hi = sym_addr(t, "_etext");
    /* fbt: every text function, in address order; aliases (names sharing an address, e.g.
     * __x64_sys_getpid and __ia32_sys_getpid) each have their probes, on the same site. */
    for (uint32_t k = 0; k < t->by_addr_count; k++) {
        const ksym_entry *e = &t->syms[t->by_addr[k]];
        if (e->type != 'T' && e->type != 't')
            continue;
        const char *name = ksym_name(t, t->by_addr[k]);
        if (name[0] == '.' || (text_lo && (e->addr < text_lo || e->addr >= text_hi)))
            continue;
        uint64_t hi = 0;
        for (uint32_t j = k + 1; j < t->by_addr_count && !hi; j++)
            if (t->syms[t->by_addr[j]].addr > e->addr)
                hi = t->syms[t->by_addr[j]].addr;
        const char *why = unsafe_reason(name, e->addr, hi, init_lo, init_hi);
        probe_desc d = { .provider = "fbt", .module = "kernel", .function = name, .name = "entry",
                          .kind = PL_ENTRY, .lo = e->addr, .hi = hi, .unsafe = why };
        if (push_pair(out, &cap, d))
            return -1;
    }
    /* syscall: the 64-bit system calls, through their __x64_sys_ wrappers (the arguments as
     * the user passed them are in the pt_regs the wrapper receives). */
    size_t nfbt = out->n;
    for (size_t i = 0; i < nfbt; i += 2) {
        const probe_desc *f = &out->p[i];
        if (strncmp(f->function, SYSCALL_PREFIX, strlen(SYSCALL_PREFIX)) || f->unsafe)
            continue;
        probe_desc d = *f;
        d.provider = "syscall";
        d.function = f->function + strlen(SYSCALL_PREFIX);
        if (push_pair(out, &cap, d))
            return -1;
    }
    return 0;
}

int probe_list_add_sdt(probe_list *l, const sdt_table *t)
{
    size_t cap = l->n;
    for (size_t i = 0; i < t->n; i++) {
        const sdt_point *p = &t->p[i];
        if (!p->nsites && !p->group)
            continue;                      /* neither a site nor a trace event: nothing to name */
        probe_desc d = { .provider = "sdt", .module = p->group ? p->group : "", .function = "",
                         .name = p->event, .kind = PL_ADDR, .lo = p->nsites ? p->sites[0].site : 0,
                         .hi = p->nsites ? p->sites[0].site + 1 : 0, .unsafe = p->unsafe, .sdt = p };
        if (push(l, &cap, d))
            return -1;
    }
    return 0;
}

/* Does some probe of l (not a stable one) match desc? */
static int any_match(const probe_list *l, size_t n, const char *desc)
{
    for (size_t k = 0; k < n; k++)
        if (!(l->p[k].kind & PL_STABLE) && probe_desc_match(&l->p[k], desc))
            return 1;
    return 0;
}

int probe_list_add_stable(probe_list *l)
{
    size_t cap = l->n, n0 = l->n, nr;
    const stable_row *r = stable_rows(&nr);
    for (size_t i = 0; i < nr;) {
        size_t j = i, used = 0, primary = 0;
        for (; j < nr && !strcmp(r[j].prov, r[i].prov) && !strcmp(r[j].name, r[i].name); j++)
            if (!r[j].helper && !(r[j].fallback && primary) && any_match(l, n0, r[j].under)) {
                used++;
                primary += !r[j].fallback;
            }
        size_t m = i;                      /* its first row with arguments (not a helper) */
        while (m + 1 < j && r[m].helper)
            m++;
        probe_desc d = { .provider = r[i].prov, .module = "vmlinux", .function = "", .name = r[i].name,
                          .kind = PL_STABLE, .stable = &r[m] };
        if (!used) {
            char why[600];
            int w = snprintf(why, sizeof why, "no probe of this kernel for it:");
            for (size_t k = i; k < j && w > 0 && (size_t)w < sizeof why; k++)
                w += snprintf(why + w, sizeof why - (size_t)w, " %s", r[k].under);
            if (!(d.own = strdup(why)))
                return -1;
            d.unsafe = d.own;
        }
        if (push(l, &cap, d)) {
            free(d.own);
            return -1;
        }
        i = j;
    }
    return 0;
}

void probe_list_free(probe_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->p[i].own);
        for (struct probe_modsite *x = l->p[i].msites, *nx; x; x = nx) {
            nx = x->next;
            free(x);
        }
    }
    free(l->p);
    free(l->modpre);
    for (size_t i = 0; i < l->nmodsdt; i++) {
        l->modsdt_free(l->modsdt[i]);
        free(l->modsdt[i]);
    }
    free(l->modsdt);
    free(l->builtin_pool);
    l->builtin_pool = NULL;
    l->p = NULL;
    l->modpre = NULL;
    l->modsdt = NULL;
    l->nmodsdt = 0;
    l->n = 0;
}

/* Split a description into its fields, right-aligned (the last field is the name).
 * bpftrace's tracepoint:GROUP:EVENT is dtrace-utils' sdt:GROUP::EVENT. */
static int split_fields(const char *desc, char f[4][256]);
static int split(const char *desc, char f[4][256])
{
    const char *c1 = !strncmp(desc, "tracepoint:", 11) ? strchr(desc + 11, ':') : NULL;
    if (c1 && !strchr(c1 + 1, ':')) {
        char alt[600];
        snprintf(alt, sizeof alt, "sdt:%.*s::%s", (int)(c1 - desc - 11), desc + 11, c1 + 1);
        return split_fields(alt, f);
    }
    return split_fields(desc, f);
}

static int split_fields(const char *desc, char f[4][256])
{
    const char *parts[4];
    size_t lens[4];
    int n = 0;
    const char *p = desc;
    for (;;) {
        const char *c = strchr(p, ':');
        if (n == 4)
            return -1;
        parts[n] = p;
        lens[n] = c ? (size_t)(c - p) : strlen(p);
        if (lens[n] >= 256)
            return -1;
        n++;
        if (!c)
            break;
        p = c + 1;
    }
    for (int i = 0; i < 4; i++)
        f[i][0] = 0;
    for (int i = 0; i < n; i++) {
        memcpy(f[4 - n + i], parts[i], lens[i]);
        f[4 - n + i][lens[i]] = 0;
    }
    return 0;
}

int probe_desc_check(const char *desc)
{
    char f[4][256];
    return *desc && split(desc, f) == 0 ? 0 : -1;
}

static int field_match(const char *pat, const char *s) { return !pat[0] || util_glob(pat, s); }

int probe_desc_match(const probe_desc *d, const char *desc)
{
    return !d->unsafe && probe_desc_names(d, desc);
}

/* A module field against a built-in function's objects (any one of them). */
static int builtin_match(const char *pat, const char *names)
{
    if (!names || !pat[0])
        return 0;
    for (const char *p = names; *p;) {
        size_t n = strcspn(p, " ");
        char w[128];
        if (n < sizeof w) {
            memcpy(w, p, n);
            w[n] = 0;
            if (util_glob(pat, w))
                return 1;
        }
        p += n;
        p += *p == ' ';
    }
    return 0;
}

int probe_desc_names(const probe_desc *d, const char *desc)
{
    char f[4][256];
    if (split(desc, f))
        return 0;
    return field_match(f[0], d->provider) && (field_match(f[1], d->module) || builtin_match(f[1], d->builtin)) &&
           field_match(f[2], d->function) && field_match(f[3], d->name);
}

/* "N" + unit -> nanoseconds between samples (DTrace's profile provider units). */
static uint64_t period_ns(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || v == 0)
        return 0;
    static const struct { const char *unit; uint64_t ns; } units[] = {
        { "ns", 1 }, { "nsec", 1 }, { "us", 1000 }, { "usec", 1000 }, { "ms", 1000000 },
        { "msec", 1000000 }, { "s", 1000000000ull }, { "sec", 1000000000ull },
        { "m", 60000000000ull }, { "min", 60000000000ull }, { "h", 3600000000000ull },
        { "hour", 3600000000000ull }, { "d", 86400000000000ull }, { "day", 86400000000000ull } };
    if (!*end || !strcmp(end, "hz"))
        return 1000000000ull / v ? 1000000000ull / v : 1;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (!strcmp(end, units[i].unit))
            return v * units[i].ns;
    return 0;
}

int probe_list_add_profile(probe_list *l, const char *desc)
{
    char f[4][256];
    if (split(desc, f) || (f[0][0] && strcmp(f[0], "profile")) || f[1][0] || f[2][0])
        return 0;
    int tick = !strncmp(f[3], "tick-", 5);
    if (!tick && strncmp(f[3], "profile-", 8))
        return 0;
    uint64_t ns = period_ns(f[3] + (tick ? 5 : 8));
    if (!ns)
        return -1;
    for (size_t i = 0; i < l->n; i++)
        if (l->p[i].own && !strcmp(l->p[i].name, f[3]))
            return 0;
    char *name = strdup(f[3]);
    probe_desc *np = name ? realloc(l->p, (l->n + 1) * sizeof *np) : NULL;
    if (!np) {
        free(name);
        return -1;
    }
    l->p = np;
    l->p[l->n] = (probe_desc){ .id = (uint32_t)l->n + 1, .provider = "profile", .module = "",
                               .function = "", .name = name, .own = name,
                               .kind = tick ? PL_TICK : PL_PROFILE, .lo = ns };
    l->n++;
    return 1;
}

int probe_list_add_addr(probe_list *l, const ksym_table *syms, const kimg *k, const char *desc,
                        char *err, size_t errlen)
{
    return probe_list_add_addr_id(l, syms, k, desc, NULL, err, errlen);
}

int probe_list_add_addr_id(probe_list *l, const ksym_table *syms, const kimg *k, const char *desc,
                           uint32_t *id, char *err, size_t errlen)
{
    char f[4][256];
    if (id)
        *id = 0;
    if (split(desc, f) || strcmp(f[0], "addr") || f[3][0])
        return 0;
    /* a user address of one process, named by pid<N> or by its name (comm: what the kernel
     * keeps, at most 15 bytes) */
    bool by_pid = !strncmp(f[1], "pid", 3) && f[1][3] >= '0' && f[1][3] <= '9';
    if (by_pid || (f[1][0] && strcmp(f[1], "kernel"))) {
        char *end;
        unsigned long pid = by_pid ? strtoul(f[1] + 3, &end, 10) : 0;
        unsigned long long va = strtoull(f[2], &end, 16);
        if (by_pid && (!pid || pid > 0x3fffff || *(f[1] + 3 + strspn(f[1] + 3, "0123456789")))) {
            snprintf(err, errlen, "'%s' is not pid<N>", f[1]);
            return -1;
        }
        if (!by_pid && strlen(f[1]) > 15) {
            snprintf(err, errlen, "'%s' is not a process name (a name has at most 15 bytes)", f[1]);
            return -1;
        }
        if (strncmp(f[2], "0x", 2) || *end || !va || va >= 0x800000000000ull) {
            snprintf(err, errlen, "'%s' is not a user-space address (0x...)", f[2]);
            return -1;
        }
        for (size_t i = 0; i < l->n; i++)
            if (l->p[i].kind == PL_ADDR && l->p[i].pid == pid && l->p[i].lo == va &&
                (by_pid || (l->p[i].by_comm && !strcmp(l->p[i].module, f[1])))) {
                if (id)
                    *id = l->p[i].id;
                return 0;
            }
        /* module and function names in one allocation the list owns: "pidN\0ADDRESS" */
        size_t ml = strlen(f[1]) + 1, fl = strlen(f[2]) + 1;
        char *both = malloc(ml + fl);
        probe_desc *np = both ? realloc(l->p, (l->n + 1) * sizeof *np) : NULL;
        if (!np) {
            free(both);
            return -1;
        }
        l->p = np;
        memcpy(both, f[1], ml);
        memcpy(both + ml, f[2], fl);
        l->p[l->n] = (probe_desc){ .id = (uint32_t)l->n + 1, .provider = "addr", .module = both,
                                   .function = both + ml, .name = "", .own = both,
                                   .kind = PL_ADDR, .lo = va, .hi = va + 1, .pid = (uint32_t)pid,
                                   .by_comm = !by_pid };
        if (id)
            *id = l->p[l->n].id;
        l->n++;
        return 1;
    }
    uint64_t at, off = 0, fn = 0;
    char field[256];
    snprintf(field, sizeof field, "%s", f[2]);
    char *plus = strrchr(f[2], '+'), *end;
    if (f[2][0] == '0' && f[2][1] == 'x') {
        at = strtoull(f[2], &end, 16);
        if (*end) {
            snprintf(err, errlen, "'%s' is not an address", f[2]);
            return -1;
        }
        uint64_t o;
        int64_t i = ksym_lookup(syms, at, &o);
        if (i >= 0) {
            fn = syms->syms[i].addr;
            off = o;
        }
    } else {
        if (plus) {
            *plus = 0;
            off = strtoull(plus + 1, &end, 0);
            if (*end || end == plus + 1) {
                snprintf(err, errlen, "'+%s' is not an offset", plus + 1);
                return -1;
            }
        }
        int64_t i = ksym_find(syms, f[2]);
        if (i < 0) {
            snprintf(err, errlen, "no symbol '%s' in the kernel", f[2]);
            return -1;
        }
        fn = syms->syms[i].addr;
        at = fn + off;
    }
    /* Decode from the function's start: the probe must sit on an instruction boundary. */
    if (fn) {
        uint64_t a = fn;
        while (a < at) {
            const uint8_t *b = kimg_ptr(k, a, 15);
            unsigned n = b ? x86_insn_len(b, 15) : 0;
            if (!n)
                break;
            a += n;
        }
        if (a != at) {
            uint64_t o;
            int64_t i = ksym_lookup(syms, fn, &o);
            snprintf(err, errlen, "+%llu is inside an instruction of %s (decoded from its start)",
                     (unsigned long long)off, i >= 0 ? ksym_name(syms, (uint32_t)i) : "the function");
            return -1;
        }
    }
    if (!kimg_ptr(k, at, 1)) {
        snprintf(err, errlen, "0x%llx is not in the kernel image", (unsigned long long)at);
        return -1;
    }
    for (size_t i = 0; i < l->n; i++)
        if (l->p[i].kind == PL_ADDR && !l->p[i].pid && !l->p[i].by_comm && l->p[i].lo == at) {
            if (id)
                *id = l->p[i].id;
            return 0;
        }
    /* the function field as written, so that the description matches it */
    char *full = strdup(field);
    probe_desc *np = full ? realloc(l->p, (l->n + 1) * sizeof *np) : NULL;
    if (!np) {
        free(full);
        return -1;
    }
    l->p = np;
    l->p[l->n] = (probe_desc){ .id = (uint32_t)l->n + 1, .provider = "addr", .module = "kernel",
                               .function = full, .name = "", .own = full, .kind = PL_ADDR,
                               .lo = at, .hi = at + 1 };
    if (id)
        *id = l->p[l->n].id;
    l->n++;
    return 1;
}

/* A system call's wrapper that ends in a tail call (jmp __do_sys_X) has its return value only
 * in the function it jumps to: its return probe goes there. */
int probe_list_follow_tail(probe_list *l, const ksym_table *syms, const kimg *k, char **descs, int nd)
{
    int moved = 0;
    for (size_t i = 0; i < l->n; i++) {
        probe_desc *d = &l->p[i];
        int match = 0;
        for (int j = 0; j < nd && !match; j++)
            match = probe_desc_match(d, descs[j]);
        if (!match || d->kind != PL_RETURN || strcmp(d->provider, "syscall"))
            continue;
        for (uint64_t a = d->lo; a < d->hi;) {
            const uint8_t *b = kimg_ptr(k, a, 15);
            unsigned n = b ? x86_insn_len(b, 15) : 0;
            if (!n)
                break;
            if (n == 5 && b[0] == 0xe9) {
                int32_t rel;
                memcpy(&rel, b + 1, 4);
                uint64_t t = a + 5 + (int64_t)rel, off;
                int64_t si = ksym_lookup(syms, t, &off);
                if (si >= 0 && off == 0 && !strstr(ksym_name(syms, (uint32_t)si), "thunk")) {
                    uint64_t hi = 0;
                    for (uint32_t x = 0; x < syms->by_addr_count && !hi; x++)
                        if (syms->syms[syms->by_addr[x]].addr > t)
                            hi = syms->syms[syms->by_addr[x]].addr;
                    if (hi) {
                        d->lo = t;
                        d->hi = hi;
                        moved++;
                    }
                    break;
                }
            }
            a += n;
        }
    }
    return moved;
}
