/* cmd_analyze: hvt analyze (listings, nesting, summaries of a trace file; profiles and flame
 * graphs of a collector's samples) and hvt bench (decode+symbolize+nest rate against
 * capstone's raw rate). See hvt_cmd.h and view.h. */
#include "export.h"
#include "hvt_cmd.h"
#include "kinfo.h"
#include "trace_reader.h"
#include "view.h"
#include "probe_live.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BENCH_LIMIT = 6000000 };

static int usage_analyze(void)
{
    fprintf(stderr,
            "usage: hvt analyze [--vmlinuz VMLINUZ] [--slide N | --lstar ADDR] [--view V[,V...]] [--file-order]\n"
            "                   [--from TSC] [--to TSC] [--hide GLOB[,GLOB]] [-o FILE] TRACE\n"
            "views: list nest summary funcs folded all (default: list). The slide defaults to the\n"
            "trace header's LSTAR; symbols need --vmlinuz. Records of all CPUs are merged by time\n"
            "unless --file-order. --hide leaves matching functions, and all they call, out of nest.\n"
            "       hvt analyze --vmlinuz VMLINUZ [--slide N] --view profile|flame|speedscope [--ustack] [-o FILE] DIR\n"
            "the whole-system profile of the samples stored in a collector boot directory (hvt -n\n"
            "'profile:::profile-N'): kernel stacks unwound with the image's ORC tables, folded per\n"
            "process (profile: folded lines), drawn as an SVG flame graph (flame) or written in\n"
            "speedscope's file format (speedscope). The slide\n"
            "defaults to the one the hypervisor reported when the probes were armed (control.log).\n");
    return HVT_EXIT_USAGE;
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

/* See hvt_cmd.h. */
int hvt_trace_syms(const char *vmlinuz, const char *slide_s, const char *lstar_s, const char *trace, kinfo *ki,
                   int *have, int64_t *slide)
{
    *have = 0;
    *slide = 0;
    if (!vmlinuz) return 0;
    if (kinfo_open(ki, vmlinuz, 1) != 0) return -1;
    *have = 1;
    if (slide_s || lstar_s) return hvt_get_slide(ki, slide_s, lstar_s, slide);
    util_err_quiet = 1; /* a damaged trace is reported once, by the view that reads it */
    tr_reader *r = tr_open(trace);
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
        fprintf(stderr, "hvt: %s was traced on kernel build %s, but %s is build %s\n", trace, want, vmlinuz,
                ki->build_id);
        return -1;
    }
    return lstar ? kinfo_slide_from_lstar(ki, lstar, slide) : 0;
}

static int setup_syms(const analyze_args *a, kinfo *ki, int *have, int64_t *slide)
{
    return hvt_trace_syms(a->vmlinuz, a->slide_s, a->lstar_s, a->trace, ki, have, slide);
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

static int write_svg(const flame *f, FILE *out) { return flame_write_svg(f, out, "hvtrace profile"); }
static int write_speedscope(const flame *f, FILE *out)
{
    return export_speedscope_write(f, out, "hvtrace profile samples", "none");
}
enum { PROFILE_FOLDED, PROFILE_SVG, PROFILE_SPEEDSCOPE };

/* hvt analyze --view profile|flame|speedscope DIR: the stacks of the samples a collector stored. */
static int analyze_profile(const analyze_args *a, int format)
{
    if (!a->vmlinuz) {
        fprintf(stderr, "hvt: --view %s needs --vmlinuz (symbols and ORC tables)\n",
                format == PROFILE_SVG ? "flame" : format == PROFILE_SPEEDSCOPE ? "speedscope" : "profile");
        return HVT_EXIT_USAGE;
    }
    kinfo ki;
    if (kinfo_open(&ki, a->vmlinuz, 1) != 0) return HVT_EXIT_BAD;
    int64_t slide = dir_slide(a->trace);
    if (a->slide_s || a->lstar_s) {
        if (hvt_get_slide(&ki, a->slide_s, a->lstar_s, &slide) != 0) {
            kinfo_close(&ki);
            return HVT_EXIT_BAD;
        }
    }
    FILE *out = a->out_s ? fopen(a->out_s, "w") : stdout;
    int rc = HVT_EXIT_BAD;
    if (!out)
        perror(a->out_s);
    else if (probe_stacks_from_dir(a->trace, a->vmlinuz, &ki.syms, slide, a->ustack, out,
                                   format == PROFILE_SVG          ? write_svg
                                   : format == PROFILE_SPEEDSCOPE ? write_speedscope
                                                                  : flame_write_folded) == 0)
        rc = 0;
    if (out && a->out_s && fclose(out) != 0) rc = HVT_EXIT_BAD;
    kinfo_close(&ki);
    return rc;
}

int cmd_analyze(int argc, char **argv)
{
    analyze_args a;
    if (parse_analyze(argc, argv, &a) != 0) return usage_analyze();
    if (a.views_s && !strcmp(a.views_s, "profile")) return analyze_profile(&a, PROFILE_FOLDED);
    if (a.views_s && !strcmp(a.views_s, "flame")) return analyze_profile(&a, PROFILE_SVG);
    if (a.views_s && !strcmp(a.views_s, "speedscope")) return analyze_profile(&a, PROFILE_SPEEDSCOPE);
    int views = parse_views(a.views_s ? a.views_s : "list");
    if (views <= 0) return usage_analyze();
    kinfo ki;
    int have;
    int64_t slide;
    if (setup_syms(&a, &ki, &have, &slide) != 0) {
        if (have) kinfo_close(&ki);
        return HVT_EXIT_BAD;
    }
    FILE *out = a.out_s ? fopen(a.out_s, "w") : stdout;
    if (!out) {
        perror(a.out_s);
        if (have) kinfo_close(&ki);
        return HVT_EXIT_BAD;
    }
    uint64_t from = 0, to = UINT64_MAX;
    if ((a.from_s && hvt_parse_u64(a.from_s, &from)) || (a.to_s && hvt_parse_u64(a.to_s, &to))) {
        if (a.out_s) fclose(out);
        if (have) kinfo_close(&ki);
        return usage_analyze();
    }
    view_opts o = {have ? &ki.syms : NULL, slide, views, a.file_order, from, to, a.hide, out, NULL};
    int rc = view_run(a.trace, &o);
    if (a.out_s && fclose(out) != 0) rc = HVT_EXIT_BAD;
    if (have) kinfo_close(&ki);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    analyze_args a;
    if (parse_analyze(argc, argv, &a) != 0) {
        fprintf(stderr, "usage: hvt bench [--vmlinuz VMLINUZ] [--slide N | --lstar ADDR] TRACE\n");
        return HVT_EXIT_USAGE;
    }
    kinfo ki;
    int have;
    int64_t slide;
    if (setup_syms(&a, &ki, &have, &slide) != 0) return HVT_EXIT_BAD;
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
