/*
 * hvt -l / hvt -n - DTrace's probe listing and enabling, for hvtrace's hidden probes.
 *   hvt -l [-v] [-n DESC ...] [--vmlinuz VMLINUZ]
 *       list the probes (ID PROVIDER MODULE FUNCTION NAME, dtrace -l's columns); with -n only
 *       those matching; -v also lists the functions that cannot be probed, with the reason.
 *   hvt -n DESC [-n DESC ...] [--vmlinuz VMLINUZ] [--count] [--tsc-khz N] --specs FILE
 *       resolve the descriptions to probes and write them as struct hvt_probe_spec records
 *       (link-time addresses, every firing recorded, or only counted with --count) for the
 *       guest tool (hvtrace-guest probe-arm FILE), the way probes are armed in Bochs without
 *       the NIC.
 *   hvt -n DESC [...] [--vmlinuz VMLINUZ] [-q] --e9 E9LOG
 *       print the firings a run recorded (include/hvt_probe.h blocks in the hypervisor's debug
 *       log) in DTrace's default format - CPU, ID, FUNCTION:NAME, one line a firing, in time
 *       order - then a count per probe.
 * VMLINUZ defaults to $HVT_VMLINUZ. A description that matches nothing is an error (exit 1),
 * with dtrace's wording; arming writes "hvt: description 'DESC' matched N probes".
 */
#include "hvt_probes.h"
#include "probe_list.h"
#include "kmod.h"
#include "kmod_sdt.h"
#include "kbuiltin.h"
#include "io_prov.h"
#include "probe_live.h"
#include "kinfo.h"
#include "util.h"
#include "hvt_hypercall.h"
#include "hvt_probe.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DESCS 64

static int usage(void)
{
    fprintf(stderr,
            "usage: hvt -l [-v] [-n DESC ... | -P PROVIDER | -m MODULE] [--vmlinuz VMLINUZ]   (-lv -n: argument types, from BTF)\n"
            "       hvt -n DESC [-n DESC ...] [--vmlinuz VMLINUZ] [--count] [--tsc-khz N] --specs FILE\n"
            "       hvt -n DESC [-n DESC ...] [--vmlinuz VMLINUZ] [-q] [-d DIR | --socket SOCK]\n"
            "           [--duration S] [--drain S] [--args] [--stack] [--ustack] [--folded FILE] [--flame FILE.svg]\n"
            "           [--tsc-khz N]                    (live, through hvtrace-collector)\n"
            "       hvt -n DESC [-n DESC ...] [--vmlinuz VMLINUZ] [-q] --e9 E9LOG\n"
            "  DESC: provider:module:function:name with globs, e.g. 'fbt::vfs_*:entry',\n"
            "        several separated by commas,\n"
            "        'syscall::getpid:entry', 'profile:::profile-997', 'tick-1s',\n"
            "        'addr:kernel:vfs_read+5:', 'addr:pid123:0x401a50:', 'addr:bash:0x4e1f0:'\n"
            "  --ustack: profile samples in user mode unwound by frame pointers (addresses)\n"
            "  --modules DIR: the kernel's lib/modules/RELEASE: fbt:MODULE:F:entry in its modules,\n"
            "        armed whenever the guest has the module loaded (default $HVT_MODULES)\n"
            "        (VMLINUZ defaults to $HVT_VMLINUZ)\n");
    return 2;
}

static int names_any(const probe_desc *d, char **descs, int nd)
{
    for (int i = 0; i < nd; i++)
        if (probe_desc_names(d, descs[i]))
            return 1;
    return 0;
}

static void list_line(const probe_desc *d)
{
    printf("%5u %10s %20s %32s %s", d->id, d->provider, d->module, d->function, d->name);
    if (d->unsafe)
        printf("    (not probeable: %s)", d->unsafe);
    printf("\n");
}

/* The kernel's functions by name, from BTF: FUNC ids sorted by name (for -lv). */
typedef struct { const char *name; uint32_t id; } func_ent;
static int func_cmp(const void *a, const void *b)
{
    return strcmp(((const func_ent *)a)->name, ((const func_ent *)b)->name);
}
static func_ent *funcs_by_name(const btf_info *b, size_t *n)
{
    func_ent *f = malloc((b->ntypes + 1) * sizeof *f);
    *n = 0;
    for (uint32_t id = 1; f && id < b->ntypes; id++) {
        btf_type t;
        if (btf_type_get(b, id, &t) == 0 && t.kind == 12 /* FUNC */ && t.name[0])
            f[(*n)++] = (func_ent){ t.name, id };
    }
    if (f)
        qsort(f, *n, sizeof *f, func_cmp);
    return f;
}

/* dtrace -lv's "Argument Types": fbt entry args[] by the function's prototype, return
 * args[0] the offset and args[1] the return type (the kernel's own BTF; a module's function's
 * from the module's own, split over the kernel's, read from its file under moddir). */
static void list_args(const probe_desc *d, const btf_info *b, const func_ent *f, size_t nf, const char *moddir)
{
    printf("\n\tArgument Types\n");
    if (d->kind & PL_STABLE) {            /* the stable probe's, the same in each of its rows */
        int n = 0;
        for (; n < STABLE_MAXARGS && d->stable->types[n]; n++)
            printf("\t\targs[%d]: %s\n", n, d->stable->types[n]);
        printf(n ? "\n" : "\t\tNone\n\n");
        return;
    }
    if (!strcmp(d->provider, "io")) {      /* translated from the bio (io_prov.h) */
        printf("\t\targs[0]: bufinfo_t *\n\t\targs[1]: devinfo_t *\n\t\targs[2]: fileinfo_t *\n\n");
        return;
    }
    if (d->sdt) {                         /* btf_trace_EVENT without its void *__data */
        char ty[256];
        uint32_t t;
        const char *pn;
        if (d->modsdt)                     /* a module's: its proto is in its own BTF */
            b = &d->modsdt->btf;
        for (unsigned i = 1; d->sdt->proto && btf_param(b, d->sdt->proto, i, &t, &pn) == 0; i++) {
            btf_type_str(b, t, ty, sizeof ty);
            printf("\t\targs[%u]: %s\n", i - 1, ty);
        }
        printf(d->sdt->proto ? "\n" : "\t\tNone\n\n");
        return;
    }
    func_ent key = { d->function, 0 }, *e = NULL;
    uint32_t fid = 0;
    if (d->modprobe) {                     /* a module's function: its own BTF (split) */
        static kmod_btf mb;
        static char mname[64];
        static int have;
        if (strcmp(mname, d->module)) {
            char path[4096], err[300];
            kmod_btf_free(&mb);
            snprintf(mname, sizeof mname, "%s", d->module);
            have = moddir && kmod_find(moddir, d->module, path, sizeof path) == 0 &&
                   kmod_btf_read(path, b, &mb, err, sizeof err) == 0;
        }
        for (uint32_t id = have ? mb.split : 0; have && id < mb.btf.ntypes && !fid; id++) {
            btf_type t;
            if (btf_type_get(&mb.btf, id, &t) == 0 && t.kind == 12 /* FUNC */ && !strcmp(t.name, d->function))
                fid = id;
        }
        b = &mb.btf;
    } else if (f && !strcmp(d->provider, "fbt") && (e = bsearch(&key, f, nf, sizeof *f, func_cmp))) {
        fid = e->id;
    }
    btf_type fn, proto;
    char ty[256];
    if (!fid || btf_type_get(b, fid, &fn) || btf_type_get(b, fn.type, &proto)) {
        printf("\t\tNone\n\n");
        return;
    }
    if (d->kind == PL_RETURN) {
        btf_type_str(b, proto.type, ty, sizeof ty);
        printf("\t\targs[0]: int\n\t\targs[1]: %s\n\n", proto.type ? ty : "void");
        return;
    }
    uint32_t t;
    const char *pn;
    for (unsigned i = 0; btf_param(b, fn.type, i, &t, &pn) == 0; i++) {
        btf_type_str(b, t, ty, sizeof ty);
        printf("\t\targs[%u]: %s\n", i, t ? ty : "...");
    }
    printf("\n");
}

static int write_specs(const probe_list *l, char **descs, int nd, uint64_t tsc_khz, int count_only,
                       const char *path)
{
    size_t n;
    struct hvt_probe_spec *s = probe_specs_for(l, descs, nd, tsc_khz, 0, &n);
    if (!s)
        return -1;
    for (size_t i = 0; i < n && count_only; i++)
        s[i].kind &= ~HVT_PROBE_F_RECORD;     /* counted in the hypervisor, no record each */
    int rc = util_write_file(path, s, n * sizeof *s);
    free(s);
    return rc;
}

struct fire_vec { struct hvt_probe_fire *f; size_t n, cap; };

/* The HVT-FIREB blocks of a debug log. Malformed blocks are reported and skipped. */
static int read_fires(const char *path, struct fire_vec *v, uint64_t *bad)
{
    util_buf b;
    if (util_read_file(path, &b))
        return -1;
    size_t tag = strlen(HVT_FIREB_TAG);
    for (size_t off = 0; off + tag < b.len;) {
        uint8_t *p = memmem(b.data + off, b.len - off, HVT_FIREB_TAG, tag);
        if (!p)
            break;
        size_t at = (size_t)(p - b.data);
        unsigned cpu, count;
        unsigned long long bytes;
        uint8_t *nl = memchr(p, '\n', b.len - at);
        if (!nl || sscanf((char *)p + tag, "%u %u %llu", &cpu, &count, &bytes) != 3 ||
            bytes != (unsigned long long)count * sizeof(struct hvt_probe_fire) ||
            !util_fits(b.len, (uint64_t)(nl + 1 - b.data), bytes)) {
            (*bad)++;
            off = at + tag;
            continue;
        }
        for (unsigned i = 0; i < count; i++) {
            if (v->n == v->cap) {
                v->cap = v->cap ? v->cap * 2 : 1024;
                struct hvt_probe_fire *nf = realloc(v->f, v->cap * sizeof *nf);
                if (!nf) { util_buf_free(&b); return -1; }
                v->f = nf;
            }
            memcpy(&v->f[v->n++], nl + 1 + (size_t)i * sizeof(struct hvt_probe_fire), sizeof(struct hvt_probe_fire));
        }
        off = (size_t)(nl + 1 - b.data) + bytes;
    }
    util_buf_free(&b);
    return 0;
}

static int by_tsc(const void *a, const void *b)
{
    const struct hvt_probe_fire *x = a, *y = b;
    return x->tsc < y->tsc ? -1 : x->tsc > y->tsc ? 1 : x->cpu - y->cpu;
}

static int print_fires(const probe_list *l, char **descs, int nd, const char *e9, int quiet, int args)
{
    struct fire_vec v = { 0 };
    uint64_t bad = 0;
    if (read_fires(e9, &v, &bad))
        return 1;
    qsort(v.f, v.n, sizeof *v.f, by_tsc);
    uint64_t *count = calloc(l->n + 1, sizeof *count), foreign = 0;
    if (!count)
        return 1;
    if (!quiet)
        probe_print_header(stdout);
    for (size_t i = 0; i < v.n; i++) {
        const struct hvt_probe_fire *f = &v.f[i];
        if (!f->id || f->id > l->n || !probe_matches_any(&l->p[f->id - 1], descs, nd)) {
            foreign++;                          /* armed by another description */
            continue;
        }
        count[f->id]++;
        if (!quiet)
            probe_print_fire(stdout, &l->p[f->id - 1], f, args);
    }
    probe_print_counts(stdout, l, count);
    if (bad)
        printf("hvt: %llu malformed firing blocks in %s\n", (unsigned long long)bad, e9);
    if (foreign)
        printf("hvt: %llu firings of probes outside the descriptions\n", (unsigned long long)foreign);
    free(count);
    free(v.f);
    return bad ? 1 : 0;
}

int hvt_probes_main(int argc, char **argv)
{
    char *descs[MAX_DESCS];
    int nd = 0, list = 0, verbose = 0, quiet = 0, count_only = 0;
    const char *vmlinuz = getenv("HVT_VMLINUZ"), *specs = NULL, *e9 = NULL, *moddir = getenv("HVT_MODULES");
    struct probe_live_opts live = { .dir = "trace-out", .drain_s = 120 };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-l")) list = 1;
        else if (!strcmp(a, "-lv") || !strcmp(a, "-v")) { verbose = 1; list |= a[1] == 'l'; }
        else if (!strcmp(a, "-q")) quiet = 1;
        else if (!strcmp(a, "-n") && i + 1 < argc) {
            /* "d1,d2": several descriptions, as in a D clause's probe list */
            for (char *d = strtok(argv[++i], ","); d; d = strtok(NULL, ","))
                if (nd < MAX_DESCS)
                    descs[nd++] = d;
        }
        else if (!strcmp(a, "-P") && i + 1 < argc) {
            /* dtrace -P PROVIDER: every probe of the provider */
            static char pdesc[MAX_DESCS][72];
            if (nd < MAX_DESCS && strlen(argv[i + 1]) < 64) {
                snprintf(pdesc[nd], sizeof pdesc[nd], "%s:::", argv[i + 1]);
                descs[nd] = pdesc[nd];
                nd++;
            }
            i++;
        }
        else if (!strcmp(a, "-m") && i + 1 < argc) {
            /* dtrace -m MODULE: every probe of the module */
            static char mdesc[MAX_DESCS][72];
            if (nd < MAX_DESCS && strlen(argv[i + 1]) < 64) {
                snprintf(mdesc[nd], sizeof mdesc[nd], "%s::", argv[i + 1]);
                descs[nd] = mdesc[nd];
                nd++;
            }
            i++;
        }
        else if (!strcmp(a, "--modules") && i + 1 < argc) moddir = argv[++i];
        else if (!strcmp(a, "--vmlinuz") && i + 1 < argc) vmlinuz = argv[++i];
        else if (!strcmp(a, "--specs") && i + 1 < argc) specs = argv[++i];
        else if (!strcmp(a, "--e9") && i + 1 < argc) e9 = argv[++i];
        else if (!strcmp(a, "-d") && i + 1 < argc) live.dir = argv[++i];
        else if (!strcmp(a, "--socket") && i + 1 < argc) live.sock = argv[++i];
        else if (!strcmp(a, "--duration") && i + 1 < argc) live.duration_s = atof(argv[++i]);
        else if (!strcmp(a, "--drain") && i + 1 < argc) live.drain_s = atof(argv[++i]);
        else if (!strcmp(a, "--tsc-khz") && i + 1 < argc) live.tsc_khz = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(a, "--stack")) live.stack = 1;
        else if (!strcmp(a, "--ustack")) live.ustack = 1;
        else if (!strcmp(a, "--args")) live.args = 1;
        else if (!strcmp(a, "--count")) count_only = 1;
        else if (!strcmp(a, "--folded") && i + 1 < argc) live.folded = argv[++i];
        else if (!strcmp(a, "--flame") && i + 1 < argc) live.flame = argv[++i];
        else return usage();
    }
    if (!vmlinuz || (!list && !nd))
        return usage();
    live.quiet = quiet;
    for (int i = 0; i < nd; i++)
        if (probe_desc_check(descs[i])) {
            fprintf(stderr, "hvt: invalid probe description \"%s\": more than four fields\n", descs[i]);
            return 1;
        }
    kinfo ki;
    if (kinfo_open(&ki, vmlinuz, 1) != 0)
        return 1;
    probe_list l;
    if (probe_list_build(&ki.syms, &l)) {
        fprintf(stderr, "hvt: out of memory\n");
        kinfo_close(&ki);
        return 1;
    }
    int rc = 0;
    /* addr and return probes and the static tracepoints (sdt): decoded in the image */
    kimg k;
    sdt_table sdt = { 0 };
    io_table io = { 0 };
    if (!rc) {
        if (kimg_load(&k, vmlinuz) != 0) {
            rc = 1;
        } else {
            char serr[300] = "out of memory";
            if (ki.btf.ntypes && (sdt_build(&k, &ki.syms, &ki.btf, &sdt, serr, sizeof serr) ||
                                  probe_list_add_sdt(&l, &sdt) ||
                                  probe_list_add_io(&l, &sdt, &ki.btf, &io, serr, sizeof serr)))
                fprintf(stderr, "hvt: no sdt probes: %s\n", serr);
            if (probe_list_add_stable(&l)) {
                fprintf(stderr, "hvt: out of memory\n");
                rc = 1;
            }
            for (int i = 0; i < nd && !rc; i++) {
                char err[400];
                if (probe_list_add_addr(&l, &ki.syms, &k, descs[i], err, sizeof err) < 0) {
                    fprintf(stderr, "hvt: invalid probe specifier %s: %s\n", descs[i], err);
                    rc = 1;
                }
            }
            probe_list_follow_tail(&l, &ki.syms, &k, descs, nd);
            kimg_free(&k);
        }
    }
    if (!rc && moddir && *moddir) {
        char merr[400];
        if (probe_list_add_kmods(&l, &ki.btf, &ki.syms, moddir, merr, sizeof merr) < 0) {
            fprintf(stderr, "hvt: no module probes: %s\n", merr);
            rc = 1;
        }
    }
    for (int i = 0; i < nd && !rc; i++)
        if (probe_list_add_profile(&l, descs[i]) < 0) {
            fprintf(stderr, "hvt: invalid probe description %s: a rate or period of 0\n", descs[i]);
            rc = 1;
        }
    live.vmlinuz = vmlinuz;
    live.syms = &ki.syms;
    for (int i = 0; i < nd && !rc; i++) {
        size_t m = 0;
        for (size_t k = 0; k < l.n && !m; k++)
            m = list && verbose ? probe_desc_names(&l.p[k], descs[i]) : probe_desc_match(&l.p[k], descs[i]);
        char hint[400];
        if (!m && moddir && *moddir && kbuiltin_hint(moddir, descs[i], hint, sizeof hint)) {
            fprintf(stderr, "hvt: invalid probe specifier %s: %s\n", descs[i], hint);
            rc = 1;
        } else if (!m) {
            fprintf(stderr, "hvt: invalid probe specifier %s: probe description %s does not match any probes\n",
                    descs[i], descs[i]);
            rc = 1;
        }
    }
    /* a stable probe (proc, sched) is its rows' probes under D's clauses: only hvt -s/-n with
     * clauses (the D compiler) can run it */
    for (int i = 0; i < nd && !rc && !list; i++)
        for (size_t k = 0; k < l.n && !rc; k++)
            if ((l.p[k].kind & PL_STABLE) && probe_desc_match(&l.p[k], descs[i])) {
                fprintf(stderr, "hvt: %s: %s:%s::%s is a stable probe, run by D: give it a clause ('%s { }')\n",
                        descs[i], l.p[k].provider, l.p[k].module, l.p[k].name, descs[i]);
                rc = 1;
            }
    if (!rc && list) {
        printf("%5s %10s %20s %32s %s\n", "ID", "PROVIDER", "MODULE", "FUNCTION", "NAME");
        size_t nf = 0;
        func_ent *f = verbose && nd && ki.btf.ntypes ? funcs_by_name(&ki.btf, &nf) : NULL;
        for (size_t i = 0; i < l.n; i++)
            if (nd ? probe_matches_any(&l.p[i], descs, nd) || (verbose && names_any(&l.p[i], descs, nd))
                   : (!l.p[i].unsafe || verbose)) {
                list_line(&l.p[i]);
                if (verbose && nd)
                    list_args(&l.p[i], &ki.btf, f, nf, moddir);
            }
        free(f);
    } else if (!rc && specs) {
        rc = write_specs(&l, descs, nd, live.tsc_khz, count_only, specs) ? 1 : 0;
        if (!rc)
            for (int i = 0; i < nd; i++) {
                size_t m = 0;
                for (size_t k = 0; k < l.n; k++)
                    m += probe_desc_match(&l.p[k], descs[i]);
                fprintf(stderr, "hvt: description '%s' matched %zu probe%s\n", descs[i], m, m == 1 ? "" : "s");
            }
    } else if (!rc && e9) {
        rc = print_fires(&l, descs, nd, e9, quiet, live.args);
    } else if (!rc) {
        rc = probe_live_run(&l, descs, nd, &live);
    }
    probe_list_free(&l);
    io_free(&io);
    sdt_free(&sdt);
    kinfo_close(&ki);
    return rc;
}
