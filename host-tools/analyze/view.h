/* view: the analyzer's outputs over a trace file.
 *   VIEW_LIST     per-instruction listing, one line each:
 *                 "tsc cpu pid/comm address sym+off bytes  text[  ; reg=value...]"
 *                 (blanks in comm become '_'; text is capstone's; registers are those whose
 *                 value changed, in hex, among those the record mode carries: none in FLOW,
 *                 the set in REGS), markers as "# tsc cpu description" lines; before the
 *                 first instruction of a CPU in another record mode than its last (a trace
 *                 starts in full), "# tsc cpu record mode flow" (MODE markers: no line)
 *   VIEW_NEST     call-nesting diagram, DTrace flowindent style ("->"/"<-", two spaces per
 *                 level), levels as nest.h defines
 *   VIEW_SUMMARY  per process: instruction counts (kernel/user), CR3 values, user code pages;
 *                 then "record modes: full N insns flow N insns regs=rax:... N insns"
 *   VIEW_FUNCS    instructions and entries per function
 *   VIEW_FOLDED   folded stacks "a;b;c count" for flame graphs
 * Contract: view_run() returns 0 on success, 1 if the trace is malformed (after printing what
 * it could and an error naming file and offset). Progress goes to stderr only when stderr is a
 * terminal and the trace is long. Symbols: ksym table (may be NULL) with the given slide. */
#ifndef HVT_VIEW_H
#define HVT_VIEW_H
#include "disasm.h"
#include "ksym.h"
#include "trace_reader.h"
#include <stdio.h>

enum { VIEW_LIST = 1, VIEW_NEST = 2, VIEW_SUMMARY = 4, VIEW_FUNCS = 8, VIEW_FOLDED = 16 };

/* The task a CPU runs, as the context-switch and CONTEXT markers told (pid -1: not known yet). */
typedef struct {
    int64_t pid, tgid;
    const char *comm;
} view_task;

/* Hooks for the exports (export.h): view_run's one pass, in its order (merged by time unless
 * file_order), calls them with the task the CPU runs. marker: every marker, before it takes
 * effect (a switch's task is still the outgoing one); insn: every instruction; flow and level:
 * the nesting's calls (enter 1), returns (0), restated frames (2) and new levels (nest.h), with
 * the time of the instruction that caused them, after --hide. Any may be NULL. */
typedef struct {
    void *ctx;
    void (*marker)(void *ctx, const tr_rec *r, const view_task *t);
    void (*insn)(void *ctx, const tr_rec *r, const view_task *t, const disasm_entry *e);
    void (*flow)(void *ctx, unsigned cpu, uint64_t tsc, const view_task *t, int enter, int depth, const char *fn);
    void (*level)(void *ctx, unsigned cpu, uint64_t tsc, const view_task *t, const char *reason);
} view_hooks;

typedef struct {
    const ksym_table *syms;
    int64_t slide;
    int views;
    int file_order; /* 0: records of all CPUs merged by time (default); 1: file order */
    uint64_t from, to; /* tsc range to show (0, UINT64_MAX: all) */
    const char *hide;  /* nest: comma-separated globs of functions left out of the diagram
                          together with everything they call (e.g. "__fentry__"); NULL: none */
    FILE *out;
    const view_hooks *hooks; /* NULL: none */
} view_opts;

int view_run(const char *trace_path, const view_opts *o);

typedef struct {
    uint64_t file_records;   /* 1. the whole file, end to end */
    double file_seconds;     /*    read + CRC + zstd + decode + symbolize + nest */
    uint64_t records, insns; /* 2. the first records, already in memory: */
    double seconds;          /*    decode (fresh cache) + symbolize + nest + folded counts */
    uint64_t cs_insns, cs_bad;
    double cs_seconds;       /*    capstone alone (detail off) on the same instructions */
} view_bench_result;
/* Benchmark, one thread: the whole file end to end, then the first `limit` records from memory
 * through hvt's pipeline and through capstone alone. */
int view_bench(const char *trace_path, const ksym_table *syms, int64_t slide, uint64_t limit,
               view_bench_result *res);
const char *hvt_reason_name(uint64_t reason);

#endif
