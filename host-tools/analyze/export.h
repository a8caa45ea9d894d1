/* export: a trace, or a profile's stacks, in formats that other people's viewers read
 * (`hvt export`, docs/analyze.md "Exports").
 *   export_json        Chrome's JSON trace event format (ui.perfetto.dev, chrome://tracing,
 *                      speedscope): per thread (pid = tgid, tid = pid) a B/E slice per function
 *                      the nesting (nest.h) enters, instants ("i") for system calls,
 *                      interrupts, exceptions and trace start/stop/gap, and per CPU a track of
 *                      the task it runs; "M" events name processes and threads.
 *   export_ctf         CTF 1.8 (babeltrace2): DIR/metadata (TSDL) and DIR/stream_CPU, one
 *                      stream per CPU; events insn, call, ret, resume, syscall_entry,
 *                      syscall_exit, irq_entry, sched_switch, trace_state, vm_exit.
 *   export_speedscope  speedscope's file format: one "sampled" profile of folded stacks
 *                      (weights: instructions for a trace, samples for a profile).
 * Contract: every export goes through view_run's single pass (the trace reader, the nesting,
 * --from/--to, --hide), so its counts are the analyzer's: B events = the nest view's "->" and
 * "=>" lines (each B is closed by an E: at its "<-", at the next level, at a context switch
 * or at the end), CTF call/ret/resume events = "->", "<-", "=>" lines, insn events = list
 * lines, marker events = the list view's "#" lines of that kind. Time stamps are the records'
 * TSC values: under time dilation one tick per retired guest instruction (said in each file's
 * metadata). Functions return 0, or 1 after printing why (a malformed trace: what was
 * read is still written, well formed). */
#ifndef HVT_EXPORT_H
#define HVT_EXPORT_H
#include "flame.h"
#include "ksym.h"
#include <stdint.h>
#include <stdio.h>

typedef struct {
    const ksym_table *syms; /* may be NULL: functions are [unknown]/[user] */
    int64_t slide;
    uint64_t from, to;      /* tsc window (0, UINT64_MAX: all) */
    const char *hide;       /* nest globs left out with their callees (view.h), or NULL */
    const char *out;        /* JSON/speedscope: a file ("-": stdout); CTF: a directory */
} export_opts;

int export_json(const char *trace_path, const export_opts *o);
int export_ctf(const char *trace_path, const export_opts *o);
/* The trace's folded stacks (the folded view: instructions per stack) as speedscope's file. */
int export_speedscope_trace(const char *trace_path, const export_opts *o);
/* Any folded stacks (e.g. a collector's profile samples) as speedscope's file; name and unit
 * ("none", "nanoseconds", ...) go into the profile. 0 or -1. */
int export_speedscope_write(const flame *f, FILE *out, const char *name, const char *unit);

/* A JSON string literal (quotes included) for any bytes: '"', '\\' and control characters
 * escaped; bytes that are not valid UTF-8 become U+FFFD, so the output always parses. */
void export_json_str(FILE *out, const char *s);
#endif
