/* kbuiltin.c - built-in code named by its object (see kbuiltin.h). */
#include "kbuiltin.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t lo, hi; size_t names; } range;   /* names: offset in the pool */

static int cmp_lo(const void *a, const void *b)
{
    const range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

int probe_list_name_builtin(probe_list *l, const ksym_table *syms, const char *dir, char *err, size_t errlen)
{
    char path[4096], line[4096];
    snprintf(path, sizeof path, "%s/modules.builtin.ranges", dir);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: none (the kernel was built without CONFIG_BUILTIN_MODULE_RANGES): "
                 "built-in code is fbt:kernel: only", path);
        return 0;
    }
    range *r = NULL;
    size_t nr = 0, cap = 0, plen = 0, pcap = 0;
    char *pool = NULL;
    uint64_t base = 0;
    int have_base = 0, rc = -1, ln = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        char sec[64], names[4000];
        unsigned long long a, b;
        line[strcspn(line, "\n")] = 0;
        if (!line[0])
            continue;
        if (sscanf(line, "%63s %llx-%llx %3999[^\n]", sec, &a, &b, names) != 4 || b < a) {
            snprintf(err, errlen, "%s:%d: not \"SECTION START-END NAMES\"", path, ln);
            goto out;
        }
        if (strcmp(sec, ".text"))
            continue;                      /* fbt probes are code */
        if (names[0] == '=') {             /* the anchor: its symbol is at offset a */
            const char *sym = names + 1 + strspn(names + 1, " ");
            int64_t si = ksym_find(syms, sym);
            if (si < 0) {
                snprintf(err, errlen, "%s:%d: the kernel has no symbol %s", path, ln, sym);
                goto out;
            }
            base = syms->syms[si].addr - a;
            have_base = 1;
            continue;
        }
        if (!have_base) {
            snprintf(err, errlen, "%s:%d: a range before its section's anchor line", path, ln);
            goto out;
        }
        size_t nl = strlen(names) + 1;
        if (nr == cap) {
            cap = cap ? cap * 2 : 256;
            range *nr2 = realloc(r, cap * sizeof *r);
            if (!nr2)
                goto nomem;
            r = nr2;
        }
        if (plen + nl > pcap) {
            pcap = (plen + nl) * 2 + 4096;
            char *np = realloc(pool, pcap);
            if (!np)
                goto nomem;
            pool = np;
        }
        memcpy(pool + plen, names, nl);
        r[nr++] = (range){ base + a, base + b, plen };
        plen += nl;
    }
    qsort(r, nr, sizeof *r, cmp_lo);
    /* the pool moves no more: the list keeps it, each named probe points into it */
    free(l->builtin_pool);
    l->builtin_pool = pool;
    pool = NULL;
    rc = 0;
    for (size_t i = 0; i < l->n; i++) {
        probe_desc *d = &l->p[i];
        if (strcmp(d->provider, "fbt") || strcmp(d->module, "kernel") || d->modprobe)
            continue;
        size_t lo = 0, hi = nr;            /* past the last range starting at or below it */
        while (lo < hi) {
            size_t m = (lo + hi) / 2;
            if (r[m].lo <= d->lo)
                lo = m + 1;
            else
                hi = m;
        }
        if (lo && d->lo < r[lo - 1].hi) {
            d->builtin = l->builtin_pool + r[lo - 1].names;
            rc++;
        }
    }
    goto out;
nomem:
    snprintf(err, errlen, "out of memory");
out:
    free(r);
    free(pool);
    fclose(f);
    return rc;
}

int kbuiltin_hint(const char *dir, const char *desc, char *buf, size_t n)
{
    /* the module field: the second of four, or of three (m:f:n) */
    char f[4][256] = { "", "", "", "" };
    int nf = 0;
    for (const char *p = desc; nf < 4;) {
        size_t k = strcspn(p, ":");
        if (k >= sizeof f[0])
            return 0;
        memcpy(f[nf], p, k);
        f[nf++][k] = 0;
        if (!p[k])
            break;
        p += k + 1;
    }
    const char *mod = nf == 4 ? f[1] : nf == 3 ? f[0] : "";
    if (!dir || !mod[0] || strpbrk(mod, "*?[\\"))
        return 0;
    char path[4096], line[512];
    snprintf(path, sizeof path, "%s/modules.builtin.ranges", dir);
    FILE *fp = fopen(path, "r");
    if (fp) {                              /* the ranges are there: no hint needed */
        fclose(fp);
        return 0;
    }
    snprintf(path, sizeof path, "%s/modules.builtin", dir);
    if (!(fp = fopen(path, "r")))
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = 0;
        const char *b = strrchr(line, '/');
        char name[256];
        snprintf(name, sizeof name, "%s", b ? b + 1 : line);
        char *dot = strstr(name, ".ko");
        if (dot)
            *dot = 0;
        for (char *c = name; *c; c++)
            if (*c == '-')
                *c = '_';
        found = !strcmp(name, mod);
    }
    fclose(fp);
    if (found)
        snprintf(buf, n, "%s is built into this kernel (modules.builtin), which does not record which functions "
                 "are its (no modules.builtin.ranges: CONFIG_BUILTIN_MODULE_RANGES): its code is fbt:kernel:",
                 mod);
    return found;
}
