/* hvt: the host command-line tool.
 *   hvt syms VMLINUZ [GLOB]            symbol table, /proc/kallsyms format
 *   hvt analyze [opts] TRACE           listings, nesting, summaries (see view.h)
 *   hvt gen [opts] VMLINUZ OUT.hvt     test traces from real kernel code (see tracegen.h)
 *   hvt bench [opts] TRACE             decode+symbolize+nest rate vs capstone's raw rate
 *   hvt options VMLINUZ [ITEM ...]     the hypervisor's "trace =" line for a kernel (hvt_options.c)
 *   hvt trace start|stop|status [opts] tracing driven from the host via hvtrace-collector (hvt_trace.h)
 * Every command prints its usage with -h. Exit status: 0 ok, 1 bad input, 2 usage. */
#include "hvt_trace.h"
#include "hvt_probes.h"
#include "d_run.h"
#include "kimg.h"
#include "x86_len.h"
#include "kinfo.h"
#include "trace_reader.h"
#include "tracegen.h"
#include "view.h"
#include "probe_live.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_BAD = 1, EXIT_USAGE = 2, BENCH_LIMIT = 6000000 };

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    *out = strtoull(s, &end, 0);
    return errno || end == s || *end ? -1 : 0;
}

static int usage_syms(void)
{
    fprintf(stderr,
            "usage: hvt syms [--slide N | --lstar ADDR] [--no-cache] VMLINUZ [GLOB]\n"
            "       hvt syms [...] VMLINUZ --addr ADDR      address -> sym+off\n"
            "       hvt syms [...] VMLINUZ --name SYM[+OFF] symbol -> address\n"
            "       hvt syms VMLINUZ --call-before SYM+OFF  is SYM+OFF a return address (after a call)?\n"
            "       hvt syms VMLINUZ --struct NAME          field offsets from BTF\n"
            "       hvt syms VMLINUZ --layout               what the tracer reads from tasks\n"
            "       hvt syms VMLINUZ --btf-out FILE         write the raw BTF blob\n"
            "       hvt syms VMLINUZ --info                 build id, counts, cache\n"
            "Addresses are link-time unless a slide (or LSTAR, the runtime entry_SYSCALL_64) is given.\n");
    return EXIT_USAGE;
}

static void print_member(const btf_member *m, void *ctx)
{
    const btf_info *b = ctx;
    char t[160];
    btf_type_str(b, m->type_id, t, sizeof t);
    if (m->bit_size)
        printf("%6llu:%-2llu %6s  %-32s %s (bitfield %u)\n", (unsigned long long)(m->bit_offset / 8),
               (unsigned long long)(m->bit_offset % 8), "", m->name, t, m->bit_size);
    else
        printf("%6llu    %6llu  %-32s %s\n", (unsigned long long)(m->bit_offset / 8), (unsigned long long)m->size,
               m->name, t);
}

static int get_slide(const kinfo *ki, const char *slide_s, const char *lstar_s, int64_t *slide)
{
    uint64_t v;
    *slide = 0;
    if (slide_s) {
        if (parse_u64(slide_s, &v)) return -1;
        *slide = (int64_t)v;
    } else if (lstar_s) {
        if (parse_u64(lstar_s, &v) || kinfo_slide_from_lstar(ki, v, slide)) return -1;
    }
    return 0;
}

int cmd_options(int argc, char **argv);   /* hvt_options.c */

/* --call-before SYM+OFF: is the instruction that ends at SYM+OFF a call (so SYM+OFF is a
 * return address)? The function is decoded from its start, as the image has it. Prints the
 * call and its direct target; 0 a call, 1 not (or not decodable). */
static int call_before(const kinfo *ki, const char *vmlinuz, const char *at)
{
    char nm[512];
    snprintf(nm, sizeof nm, "%s", at);
    char *plus = strchr(nm, '+');
    uint64_t off = 0;
    if (!plus || parse_u64(plus + 1, &off) || !off)
        return usage_syms();
    *plus = 0;
    int64_t s = ksym_find(&ki->syms, nm);
    kimg k;
    if (s < 0 || kimg_load(&k, vmlinuz) != 0) {
        fprintf(stderr, "hvt: %s: no symbol %s\n", vmlinuz, nm);
        return EXIT_BAD;
    }
    uint64_t fn = ki->syms.syms[s].addr;
    const uint8_t *code = kimg_ptr(&k, fn, off);
    int rc = 1;
    uint64_t pos = 0, last = 0;
    while (code && pos < off) {
        unsigned n = x86_insn_len(code + pos, off - pos);
        if (!n)
            break;
        last = pos;
        pos += n;
    }
    if (code && pos == off) {
        const uint8_t *p = code + last;
        while (p < code + off && (*p == 0x2e || *p == 0x3e || *p == 0x66 || (*p & 0xf0) == 0x40))
            p++;                           /* segment, operand-size, REX prefixes */
        if (p < code + off && *p == 0xe8 && code + off - p == 5) {
            int32_t rel;
            memcpy(&rel, p + 1, 4);
            uint64_t t = fn + off + (uint64_t)(int64_t)rel, toff;
            int64_t ts = ksym_lookup(&ki->syms, t, &toff);
            printf("%s: call %s+0x%llx\n", at, ts >= 0 ? ksym_name(&ki->syms, (uint32_t)ts) : "?",
                   (unsigned long long)toff);
            rc = 0;
        } else if (p + 1 < code + off && *p == 0xff && ((p[1] >> 3) & 7) == 2) {
            printf("%s: call (indirect)\n", at);
            rc = 0;
        }
    }
    if (rc)
        printf("%s: not after a call\n", at);
    kimg_free(&k);
    return rc;
}

static int cmd_syms(int argc, char **argv)
{
    const char *vmlinuz = NULL, *glob = NULL, *slide_s = NULL, *lstar_s = NULL, *addr_s = NULL, *name_s = NULL;
    const char *struct_s = NULL, *btf_out = NULL, *callb_s = NULL;
    int use_cache = 1, layout = 0, info = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) return usage_syms();
        else if (!strcmp(a, "--no-cache")) use_cache = 0;
        else if (!strcmp(a, "--layout")) layout = 1;
        else if (!strcmp(a, "--info")) info = 1;
        else if (next && !strcmp(a, "--slide")) { slide_s = next; i++; }
        else if (next && !strcmp(a, "--lstar")) { lstar_s = next; i++; }
        else if (next && !strcmp(a, "--addr")) { addr_s = next; i++; }
        else if (next && !strcmp(a, "--name")) { name_s = next; i++; }
        else if (next && !strcmp(a, "--struct")) { struct_s = next; i++; }
        else if (next && !strcmp(a, "--call-before")) { callb_s = next; i++; }
        else if (next && !strcmp(a, "--btf-out")) { btf_out = next; i++; }
        else if (a[0] == '-') return usage_syms();
        else if (!vmlinuz) vmlinuz = a;
        else if (!glob) glob = a;
        else return usage_syms();
    }
    if (!vmlinuz) return usage_syms();
    kinfo ki;
    if (kinfo_open(&ki, vmlinuz, use_cache) != 0) return EXIT_BAD;
    int64_t slide;
    int rc = 0;
    if (get_slide(&ki, slide_s, lstar_s, &slide) != 0) {
        fprintf(stderr, "hvt: bad --slide/--lstar value\n");
        rc = EXIT_USAGE;
    } else if (info) {
        printf("build_id %s\nsource %s\nsymbols %u\nbtf_bytes %zu\nbtf_types %u\n", ki.build_id, ki.source,
               ki.syms.count, ki.btf_blob.len, ki.btf.ntypes ? ki.btf.ntypes - 1 : 0);
    } else if (btf_out) {
        if (!ki.btf_blob.len) {
            fprintf(stderr, "hvt: %s: the kernel has no BTF\n", vmlinuz);
            rc = EXIT_BAD;
        } else {
            rc = util_write_file(btf_out, ki.btf_blob.data, ki.btf_blob.len) ? EXIT_BAD : 0;
        }
    } else if (layout) {
        kinfo_layout l;
        if (kinfo_layout_get(&ki, &l) != 0) rc = EXIT_BAD;
        else
            printf("task_struct.pid %u\ntask_struct.tgid %u\ntask_struct.comm %u %u\ntask_struct.mm %u\n"
                   "mm_struct.pgd %u\ntask_struct.cred %u\ncred.euid %u\npercpu_current 0x%llx %s\n",
                   l.task_pid, l.task_tgid, l.task_comm, l.task_comm_len, l.task_mm, l.mm_pgd,
                   l.task_cred, l.cred_euid,
                   (unsigned long long)l.percpu_current, l.uses_pcpu_hot ? "pcpu_hot.current_task" : "current_task");
    } else if (struct_s) {
        uint32_t sid = btf_find_struct(&ki.btf, struct_s);
        if (!sid) {
            fprintf(stderr, "hvt: %s: no struct or union %s in BTF\n", vmlinuz, struct_s);
            rc = EXIT_BAD;
        } else {
            printf("struct %s size %llu\n%6s %6s %6s  %-32s %s\n", struct_s,
                   (unsigned long long)btf_type_size(&ki.btf, sid), "offset", "", "size", "field", "type");
            btf_members_each(&ki.btf, sid, print_member, &ki.btf);
        }
    } else if (callb_s) {
        rc = call_before(&ki, vmlinuz, callb_s);
    } else if (addr_s) {
        uint64_t a, off;
        if (parse_u64(addr_s, &a)) rc = usage_syms();
        else {
            int64_t s = ksym_lookup(&ki.syms, a - (uint64_t)slide, &off);
            if (s < 0) {
                fprintf(stderr, "hvt: %s: no symbol at 0x%llx\n", vmlinuz, (unsigned long long)a);
                rc = EXIT_BAD;
            } else {
                printf("%016llx %s+0x%llx\n", (unsigned long long)a, ksym_name(&ki.syms, (uint32_t)s),
                       (unsigned long long)off);
            }
        }
    } else if (name_s) {
        char nm[512];
        snprintf(nm, sizeof nm, "%s", name_s);
        uint64_t off = 0;
        char *plus = strchr(nm, '+');
        if (plus) {
            *plus = 0;
            if (parse_u64(plus + 1, &off)) return usage_syms();
        }
        int64_t s = ksym_find(&ki.syms, nm);
        if (s < 0) {
            fprintf(stderr, "hvt: %s: no symbol %s\n", vmlinuz, nm);
            rc = EXIT_BAD;
        } else {
            const ksym_entry *e = &ki.syms.syms[s];
            printf("%016llx %c %s\n", (unsigned long long)(e->addr + (e->abs ? 0 : (uint64_t)slide) + off), e->type,
                   name_s);
        }
    } else {
        for (uint32_t i = 0; i < ki.syms.count; i++) {
            const ksym_entry *e = &ki.syms.syms[i];
            const char *n = ksym_name(&ki.syms, i);
            if (glob && !util_glob(glob, n)) continue;
            printf("%016llx %c %s\n", (unsigned long long)(e->addr + (e->abs ? 0 : (uint64_t)slide)), e->type, n);
        }
    }
    kinfo_close(&ki);
    return rc;
}

static int usage_analyze(void)
{
    fprintf(stderr,
            "usage: hvt analyze [--vmlinuz VMLINUZ] [--slide N | --lstar ADDR] [--view V[,V...]] [--file-order]\n"
            "                   [--from TSC] [--to TSC] [--hide GLOB[,GLOB]] [-o FILE] TRACE\n"
            "views: list nest summary funcs folded all (default: list). The slide defaults to the\n"
            "trace header's LSTAR; symbols need --vmlinuz. Records of all CPUs are merged by time\n"
            "unless --file-order. --hide leaves matching functions, and all they call, out of nest.\n"
            "       hvt analyze --vmlinuz VMLINUZ [--slide N] --view profile|flame [--ustack] [-o FILE] DIR\n"
            "the whole-system profile of the samples stored in a collector boot directory (hvt -n\n"
            "'profile:::profile-N'): kernel stacks unwound with the image's ORC tables, folded per\n"
            "process (profile: folded lines) or drawn as an SVG flame graph (flame). The slide\n"
            "defaults to the one the hypervisor reported when the probes were armed (control.log).\n");
    return EXIT_USAGE;
}

static int parse_views(const char *s)
{
    int v = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
        if (!strcmp(t, "list")) v |= VIEW_LIST;
        else if (!strcmp(t, "nest")) v |= VIEW_NEST;
        else if (!strcmp(t, "summary")) v |= VIEW_SUMMARY;
        else if (!strcmp(t, "funcs")) v |= VIEW_FUNCS;
        else if (!strcmp(t, "folded")) v |= VIEW_FOLDED;
        else if (!strcmp(t, "all")) v |= VIEW_LIST | VIEW_NEST | VIEW_SUMMARY | VIEW_FUNCS | VIEW_FOLDED;
        else return -1;
    }
    return v;
}

typedef struct {
    const char *vmlinuz, *slide_s, *lstar_s, *views_s, *out_s, *trace, *from_s, *to_s, *hide;
    int file_order;
    int ustack;                            /* profile, flame: user stacks by frame pointers */
} analyze_args;

static int parse_analyze(int argc, char **argv, analyze_args *a)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (next && !strcmp(s, "--vmlinuz")) { a->vmlinuz = next; i++; }
        else if (next && !strcmp(s, "--slide")) { a->slide_s = next; i++; }
        else if (next && !strcmp(s, "--lstar")) { a->lstar_s = next; i++; }
        else if (next && !strcmp(s, "--view")) { a->views_s = next; i++; }
        else if (next && !strcmp(s, "-o")) { a->out_s = next; i++; }
        else if (!strcmp(s, "--file-order")) a->file_order = 1;
        else if (!strcmp(s, "--ustack")) a->ustack = 1;
        else if (next && !strcmp(s, "--from")) { a->from_s = next; i++; }
        else if (next && !strcmp(s, "--hide")) { a->hide = next; i++; }
        else if (next && !strcmp(s, "--to")) { a->to_s = next; i++; }
        else if (s[0] == '-' || a->trace) return -1;
        else a->trace = s;
    }
    return a->trace ? 0 : -1;
}

/* Symbols + slide for a trace: explicit options first, else the trace header's LSTAR. */
static int setup_syms(const analyze_args *a, kinfo *ki, int *have, int64_t *slide)
{
    *have = 0;
    *slide = 0;
    if (!a->vmlinuz) return 0;
    if (kinfo_open(ki, a->vmlinuz, 1) != 0) return -1;
    *have = 1;
    if (a->slide_s || a->lstar_s) return get_slide(ki, a->slide_s, a->lstar_s, slide);
    util_err_quiet = 1; /* a damaged trace is reported once, by the view that reads it */
    tr_reader *r = tr_open(a->trace);
    util_err_quiet = 0;
    if (!r) return 0;
    const hvt_trace_file_hdr *h = tr_header(r);
    uint64_t lstar = h->lstar;
    char want[2 * HVT_BUILD_ID_MAX + 1];
    for (int i = 0; i < h->build_id_len; i++) snprintf(want + 2 * i, 3, "%02x", h->build_id[i]);
    want[2 * h->build_id_len] = 0;
    int mismatch = h->build_id_len && strcmp(want, ki->build_id) != 0;
    tr_close(r);
    if (mismatch) { /* symbols of another build would be silently wrong */
        fprintf(stderr, "hvt: %s was traced on kernel build %s, but %s is build %s\n", a->trace, want, a->vmlinuz,
                ki->build_id);
        return -1;
    }
    return lstar ? kinfo_slide_from_lstar(ki, lstar, slide) : 0;
}

/* The KASLR slide the hypervisor last reported in a boot directory's control.log (probe
 * replies carry it), or 0. */
static int64_t dir_slide(const char *dir)
{
    char path[4200], line[2048];
    snprintf(path, sizeof path, "%s/control.log", dir);
    FILE *f = fopen(path, "r");
    long long v = 0;
    while (f && fgets(line, sizeof line, f)) {
        const char *p = strstr(line, " slide=");
        if (p)
            v = strtoll(p + 7, NULL, 0);
    }
    if (f)
        fclose(f);
    return v;
}

/* hvt analyze --view profile|flame DIR: the stacks of the samples a collector stored. */
static int analyze_profile(const analyze_args *a, int svg)
{
    if (!a->vmlinuz) {
        fprintf(stderr, "hvt: --view %s needs --vmlinuz (symbols and ORC tables)\n", svg ? "flame" : "profile");
        return EXIT_USAGE;
    }
    kinfo ki;
    if (kinfo_open(&ki, a->vmlinuz, 1) != 0) return EXIT_BAD;
    int64_t slide = dir_slide(a->trace);
    if (a->slide_s || a->lstar_s) {
        if (get_slide(&ki, a->slide_s, a->lstar_s, &slide) != 0) {
            kinfo_close(&ki);
            return EXIT_BAD;
        }
    }
    FILE *out = a->out_s ? fopen(a->out_s, "w") : stdout;
    int rc = EXIT_BAD;
    if (!out)
        perror(a->out_s);
    else if (probe_stacks_from_dir(a->trace, a->vmlinuz, &ki.syms, slide, a->ustack, out, svg) == 0)
        rc = 0;
    if (out && a->out_s && fclose(out) != 0) rc = EXIT_BAD;
    kinfo_close(&ki);
    return rc;
}

static int cmd_analyze(int argc, char **argv)
{
    analyze_args a;
    if (parse_analyze(argc, argv, &a) != 0) return usage_analyze();
    if (a.views_s && (!strcmp(a.views_s, "profile") || !strcmp(a.views_s, "flame")))
        return analyze_profile(&a, !strcmp(a.views_s, "flame"));
    int views = parse_views(a.views_s ? a.views_s : "list");
    if (views <= 0) return usage_analyze();
    kinfo ki;
    int have;
    int64_t slide;
    if (setup_syms(&a, &ki, &have, &slide) != 0) {
        if (have) kinfo_close(&ki);
        return EXIT_BAD;
    }
    FILE *out = a.out_s ? fopen(a.out_s, "w") : stdout;
    if (!out) {
        perror(a.out_s);
        if (have) kinfo_close(&ki);
        return EXIT_BAD;
    }
    uint64_t from = 0, to = UINT64_MAX;
    if ((a.from_s && parse_u64(a.from_s, &from)) || (a.to_s && parse_u64(a.to_s, &to))) {
        if (a.out_s) fclose(out);
        if (have) kinfo_close(&ki);
        return usage_analyze();
    }
    view_opts o = {have ? &ki.syms : NULL, slide, views, a.file_order, from, to, a.hide, out};
    int rc = view_run(a.trace, &o);
    if (a.out_s && fclose(out) != 0) rc = EXIT_BAD;
    if (have) kinfo_close(&ki);
    return rc;
}

static int cmd_bench(int argc, char **argv)
{
    analyze_args a;
    if (parse_analyze(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: hvt bench [--vmlinuz VMLINUZ] [--slide N | --lstar ADDR] TRACE\n");
        return EXIT_USAGE;
    }
    kinfo ki;
    int have;
    int64_t slide;
    if (setup_syms(&a, &ki, &have, &slide) != 0) return EXIT_BAD;
    view_bench_result res;
    int rc = view_bench(a.trace, have ? &ki.syms : NULL, slide, BENCH_LIMIT, &res);
    if (rc == 0) {
        double rps = res.seconds > 0 ? (double)res.records / res.seconds : 0;
        double cps = res.cs_seconds > 0 ? (double)res.cs_insns / res.cs_seconds : 0;
        double fps = res.file_seconds > 0 ? (double)res.file_records / res.file_seconds : 0;
        printf("bench: whole file: %llu records read+decoded+symbolized+nested in %.3f s\n",
               (unsigned long long)res.file_records, res.file_seconds);
        printf("bench: first %llu records (%llu instructions) in memory: decode+symbolize+nest %.3f s, capstone "
               "alone %.3f s (%llu undecodable)\n",
               (unsigned long long)res.records, (unsigned long long)res.insns, res.seconds, res.cs_seconds,
               (unsigned long long)res.cs_bad);
        printf("recs_per_s=%.0f capstone_per_s=%.0f speedup=%.1f file_recs_per_s=%.0f\n", rps, cps,
               cps > 0 ? rps / cps : 0, fps);
    }
    if (have) kinfo_close(&ki);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "syms")) return cmd_syms(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "options")) return cmd_options(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "analyze")) return cmd_analyze(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "gen")) return tracegen_main(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "bench")) return cmd_bench(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "trace")) return cmd_trace(argc - 2, argv + 2);
    if (argc >= 2 && d_run_wanted(argc - 1, argv + 1))     /* a D program: -s, or -n with a clause */
        return d_run_main(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-lv") || !strcmp(argv[1], "-n")))
        return hvt_probes_main(argc - 1, argv + 1);
    fprintf(stderr, "usage: hvt {syms|analyze|gen|bench|options|trace} ... (-h for each)\n"
                    "       hvt -l | -n DESC ...   probes (hvt -l -h)\n"
                    "       hvt -s FILE.d | -n 'D PROGRAM' ...   D programs (dtrace's options)\n");
    return EXIT_USAGE;
}
