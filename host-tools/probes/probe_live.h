/* probe_live: hvt -n against a running hypervisor, through hvtrace-collector (DTrace's way of
 * enabling probes: arm, print every firing as it arrives, Ctrl-C ends).
 * Contract:
 *  - probe_live_run() writes the specs to a private file, asks the collector to arm them
 *    ("probe arm FILE" on its command socket: coll_cmd.c), then follows the collector's boot
 *    directory: every HVT_MSG_PROBE message after the arming reply's stream offset is printed
 *    as it is stored (chunk-NNNNNN.hvts, the messages verbatim), one line per firing in
 *    DTrace's default format. SIGINT or SIGTERM (or the duration) ends it: the probes are
 *    disarmed, the records every CPU still holds are awaited until received + lost = made
 *    (the hypervisor's counters) or drain_s passes, then the counts per probe and any loss
 *    are printed. Nothing is lost silently: records lost on the link, records missing at the
 *    end and malformed messages are each reported and make the exit status 1.
 *  - Firings with a stack (profile-N, tick-N, and any probe with --stack) are unwound with
 *    the kernel image's ORC tables and the hypervisor's KASLR slide, symbolized, and folded
 *    per process (comm;[user];kernel frames root first) into --folded / --flame (an SVG).
 *  - The printing helpers are shared with hvt -n --e9 (firings from a debug-port log). */
#ifndef HVT_PROBE_LIVE_H
#define HVT_PROBE_LIVE_H
#include <stdint.h>
#include <stdio.h>
#include "flame.h"
#include "probe_list.h"
#include "hvt_probe.h"
#include "hvt_hypercall.h"

struct probe_live_opts {
    const char *dir, *sock;           /* the collector's --out (and socket, if not DIR's) */
    int quiet;                        /* no line per firing */
    int args;                         /* each line with the firing's arguments */
    double duration_s;                /* 0: until SIGINT/SIGTERM */
    double drain_s;                   /* wait this long for the last records after disarming */
    uint64_t tsc_khz;                 /* 0: the hypervisor's (the collector's HELLO) */
    int stack;                        /* every firing carries its kernel stack */
    int ustack;                       /* samples in user mode: frames by frame pointers */
    const char *folded, *flame;       /* write the samples' stacks there (folded, SVG) */
    const char *vmlinuz;              /* for the ORC tables (stacks) */
    const ksym_table *syms;
};

/* One probe's spec (link-time, recorded; profile/tick period in TSC ticks at tsc_khz). */
struct hvt_probe_spec probe_spec_of(const probe_desc *d, uint64_t tsc_khz, int stack);
/* Append probe d's specs to *s (*n of *cap): one, or for a static tracepoint two per site (the
 * HVT_PROBE_F_SDT spec and its recipe). action: the D program's probes (HVT_PROBE_F_ACTION
 * instead of a record). 0, or -1 on no memory. */
int  probe_specs_add(const probe_desc *d, uint64_t tsc_khz, int stack, int action,
                     struct hvt_probe_spec **s, size_t *n, size_t *cap);
/* The specs of every probe of l that matches one of descs (link-time, recorded; profile and
 * tick periods in TSC ticks at tsc_khz; stack: HVT_PROBE_F_STACK on the others). */
struct hvt_probe_spec *probe_specs_for(const probe_list *l, char **descs, int nd,
                                       uint64_t tsc_khz, int stack, size_t *n);
int  probe_matches_any(const probe_desc *d, char **descs, int nd);
void probe_print_header(FILE *out);
/* args: also the firing's arguments (entry, addr: arg0..arg5 in hex; fbt return: the site's
 * offset and the return value; syscall return: the return value, and errno if it failed). */
void probe_print_fire(FILE *out, const probe_desc *d, const struct hvt_probe_fire *f, int args);
/* count[id] for ids 1..l->n: the end-of-run table, probes with firings only. */
void probe_print_counts(FILE *out, const probe_list *l, const uint64_t *count);
int  probe_live_run(const probe_list *l, char **descs, int nd, const struct probe_live_opts *o);
/* The stacks stored in a collector boot directory (every HVT_MSG_PROBE_STACK of its chunks),
 * unwound and folded like probe_live_run's (ustack: as its --ustack), written to out by
 * `write` (folded lines, an SVG flame graph, speedscope's format: hvt analyze --view
 * profile|flame|speedscope DIR). 0, or -1 (said why). */
typedef int (*probe_stacks_writer)(const flame *f, FILE *out);
int  probe_stacks_from_dir(const char *dir, const char *vmlinuz, const ksym_table *syms,
                           int64_t slide, int ustack, FILE *out, probe_stacks_writer write);

#endif
