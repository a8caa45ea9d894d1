/* hvt: the host command-line tool. One table of subcommands (below); the probe and D
 * front ends are chosen by dtrace's flags instead:
 *   hvt -l | -n DESC ...              probes (hvt_probes.h)
 *   hvt -s FILE.d | -n 'D PROGRAM'    D programs (d_run.h)
 * Every command prints its usage with -h. Exit status: 0 ok, 1 bad input, 2 usage. */
#include "hvt_cmd.h"
#include "hvt_probes.h"
#include "d_run.h"
#include "tracegen.h"
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *usage;
} hvt_subcmd;

static const hvt_subcmd subcmds[] = {
    { "syms",    cmd_syms,     "VMLINUZ [GLOB]             symbol table, /proc/kallsyms format" },
    { "analyze", cmd_analyze,  "[opts] TRACE               listings, nesting, summaries (view.h)" },
    { "export",  cmd_export,   "--perfetto|--ctf|--speedscope -o OUT TRACE  for Perfetto, babeltrace2, speedscope" },
    { "gen",     tracegen_main, "[opts] VMLINUZ OUT.hvt     test traces from real kernel code (tracegen.h)" },
    { "bench",   cmd_bench,    "[opts] TRACE               decode+symbolize+nest rate vs capstone's" },
    { "options", cmd_options,  "VMLINUZ [ITEM ...]         the hypervisor's \"trace =\" line for a kernel" },
    { "cfg",     cmd_cfg,      "keys DIR | seal|check --key-file F CFG  enrolled keys, sealed hvtrace.cfg" },
    { "check-host", cmd_check_host, "[--root DIR]             can hvtrace run on this machine (docs/hardware.md)" },
    { "trace",   cmd_trace,    "start|stop|status [opts]   tracing driven from the host via hvtrace-collector" },
};
enum { NSUBCMDS = sizeof subcmds / sizeof subcmds[0] };

static int usage(void)
{
    fprintf(stderr, "usage: hvt {");
    for (int i = 0; i < NSUBCMDS; i++) fprintf(stderr, "%s%s", i ? "|" : "", subcmds[i].name);
    fprintf(stderr, "} ... (-h for each)\n"
                    "       hvt -l | -n DESC ...   probes (hvt -l -h)\n"
                    "       hvt -s FILE.d | -n 'D PROGRAM' ...   D programs (dtrace's options)\n");
    for (int i = 0; i < NSUBCMDS; i++) fprintf(stderr, "  hvt %-8s %s\n", subcmds[i].name, subcmds[i].usage);
    return HVT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    for (int i = 0; argc >= 2 && i < NSUBCMDS; i++)
        if (!strcmp(argv[1], subcmds[i].name)) return subcmds[i].fn(argc - 2, argv + 2);
    if (argc >= 2 && d_run_wanted(argc - 1, argv + 1))     /* a D program: -s, or -n with a clause */
        return d_run_main(argc - 1, argv + 1);
    if (argc >= 2 && (!strcmp(argv[1], "-l") || !strcmp(argv[1], "-lv") || !strcmp(argv[1], "-n")))
        return hvt_probes_main(argc - 1, argv + 1);
    return usage();
}
