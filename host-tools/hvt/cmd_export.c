/* cmd_export: hvt export --perfetto|--ctf|--speedscope: a trace file in formats other tools
 * read (export.h); --speedscope also takes a collector boot directory's profile samples. */
#include "export.h"
#include "hvt_cmd.h"
#include "probe_live.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int usage_export(void)
{
    fprintf(stderr,
            "usage: hvt export --perfetto|--ctf|--speedscope [--vmlinuz VMLINUZ] [--slide N | --lstar ADDR]\n"
            "                  [--from TSC] [--to TSC] [--hide GLOB[,GLOB]] -o OUT TRACE\n"
            "       hvt export --speedscope --vmlinuz VMLINUZ [--slide N] [--ustack] -o OUT DIR\n"
            "--perfetto: Chrome's JSON trace event format (ui.perfetto.dev, chrome://tracing): a call\n"
            "timeline per thread and per CPU, instants for system calls and interrupts; OUT a file.\n"
            "--ctf: CTF 1.8 for babeltrace2; OUT a directory (metadata, stream_CPU).\n"
            "--speedscope: speedscope's file format: the trace's instructions per call stack, or the\n"
            "profile samples of a collector boot directory DIR. OUT \"-\" is stdout (not for --ctf).\n");
    return HVT_EXIT_USAGE;
}

int cmd_export(int argc, char **argv)
{
    const char *fmt = NULL, *vmlinuz = NULL, *slide_s = NULL, *lstar_s = NULL, *out = NULL, *in = NULL;
    const char *from_s = NULL, *to_s = NULL, *hide = NULL;
    int ustack = 0;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(s, "--perfetto") || !strcmp(s, "--ctf") || !strcmp(s, "--speedscope")) {
            if (fmt) return usage_export();
            fmt = s + 2;
        } else if (next && !strcmp(s, "--vmlinuz")) vmlinuz = argv[++i];
        else if (next && !strcmp(s, "--slide")) slide_s = argv[++i];
        else if (next && !strcmp(s, "--lstar")) lstar_s = argv[++i];
        else if (next && !strcmp(s, "-o")) out = argv[++i];
        else if (next && !strcmp(s, "--from")) from_s = argv[++i];
        else if (next && !strcmp(s, "--to")) to_s = argv[++i];
        else if (next && !strcmp(s, "--hide")) hide = argv[++i];
        else if (!strcmp(s, "--ustack")) ustack = 1;
        else if (s[0] == '-' || in) return usage_export();
        else in = s;
    }
    if (!fmt || !in || !out || (!strcmp(fmt, "ctf") && !strcmp(out, "-"))) return usage_export();
    struct stat st;
    if (stat(in, &st) != 0) {
        perror(in);
        return HVT_EXIT_BAD;
    }
    if (S_ISDIR(st.st_mode)) { /* a collector boot directory: its profile samples */
        if (strcmp(fmt, "speedscope") != 0) {
            fprintf(stderr, "hvt: %s is a directory: only --speedscope exports a collector's samples\n", in);
            return HVT_EXIT_USAGE;
        }
        char *args[12];
        int n = 0;
        args[n++] = "--view";
        args[n++] = "speedscope";
        if (vmlinuz) { args[n++] = "--vmlinuz"; args[n++] = (char *)vmlinuz; }
        if (slide_s) { args[n++] = "--slide"; args[n++] = (char *)slide_s; }
        if (lstar_s) { args[n++] = "--lstar"; args[n++] = (char *)lstar_s; }
        if (ustack) args[n++] = "--ustack";
        if (strcmp(out, "-") != 0) { args[n++] = "-o"; args[n++] = (char *)out; }
        args[n++] = (char *)in;
        return cmd_analyze(n, args);
    }
    export_opts o = {NULL, 0, 0, UINT64_MAX, hide, out};
    if ((from_s && hvt_parse_u64(from_s, &o.from)) || (to_s && hvt_parse_u64(to_s, &o.to))) return usage_export();
    kinfo ki;
    int have;
    if (hvt_trace_syms(vmlinuz, slide_s, lstar_s, in, &ki, &have, &o.slide) != 0) {
        if (have) kinfo_close(&ki);
        return HVT_EXIT_BAD;
    }
    if (have) o.syms = &ki.syms;
    int rc = !strcmp(fmt, "perfetto") ? export_json(in, &o)
           : !strcmp(fmt, "ctf")      ? export_ctf(in, &o)
                                      : export_speedscope_trace(in, &o);
    if (have) kinfo_close(&ki);
    return rc ? HVT_EXIT_BAD : 0;
}
