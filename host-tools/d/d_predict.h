/*
 * d_predict.h - the probe effect predicted before a program runs (hvt -e with a firing rate):
 * DTrace's performance model of a firing, priced with costs measured on the machine.
 *
 * The model: a firing costs the VM exit and entry, the probe's lookup and, when the probe runs
 * D, the enabling walk (once per firing, once per clause), then each clause's instructions,
 * each priced by its class (plain instructions, variables, built-ins, subroutines, each
 * aggregating function, records). The classes are the keys of a calibration table
 * (struct d_cal): TSC ticks per unit, measured by `make bench-probe` on the machine
 * (bench/predict-cal.py fits them to the firings it times) and stored by the host as a text
 * file of key=value lines. Nothing here knows a cost of its own.
 *
 * Contract:
 *  - d_cal_parse(): a table from its text: `key=value` lines (value a number >= 0, ticks per
 *    unit), `#` comments and blank lines; an unknown key, a bad number or a key twice is an
 *    error naming the line. tsc_khz (the calibrated machine's TSC rate, 0 unknown) may be
 *    given. d_cal_load() reads a file (NULL: $HVT_PROBECOST_CAL, else
 *    ${XDG_CONFIG_HOME:-$HOME/.config}/hvtrace/probecost.cal).
 *  - d_model_probe(): the counts of one firing of the image's probes[pi]: the units of each
 *    class it pays (a probe with no clause: the exit and the lookup alone; a system call's
 *    entry probe with clauses also its arguments' reads, sysargs). Every instruction
 *    of every clause is counted, so a clause whose predicate is false or that branches past
 *    code costs less than this says (an upper bound); a predicate's instructions (the code up
 *    to its branch to the clause's RET, as the interpreter times it) are counted apart. The
 *    image must have passed the compiler (its sections in bounds: checked again here).
 *    The lean path (the hypervisor's dif_lean.c: a clause of built-in integers, execname and
 *    kernel stacks as keys, aggregations and nothing else) is told from the interpreter by the
 *    same rule, instruction by instruction; an interpreted clause also pays interp. Each
 *    aggregation update's key is classified by what it is made of (keys[]).
 *  - d_model_mix(): the counts that depend on the workload, from a counting run's mix: newtask
 *    (the fraction of firings in a new task) and keynew (per update, the fraction of firings
 *    whose key changes: a key of the probe's names changes with the probe, one of the task's
 *    ids with the task, one of both with either; constants never; one of the firing's data
 *    is unknown and counted as repeating, as the calibration's do).
 *  - d_model_cost(): ticks per firing by phase (enum hvt_probe_phase) from the counts and the
 *    table. A class the table lacks is priced as the class it falls back to (d_cal_fallback:
 *    an aggregating function as count() or quantize(), a variable as a plain instruction)
 *    and its bit set in *estimated; -1 when the table lacks even the last fallback (exit,
 *    lookup, dfire, clause, sysargs or op_insn), with the key named. newtask, keynew and
 *    interp a table lacks are priced 0, their bit set in *estimated.
 *  - d_predict_rate(): firings per tick of the workload alone from a counting run that saw
 *    fires firings in ticks ticks of elapsed time, each firing costing plain ticks (its own
 *    probe effect taken out): fires / (ticks - fires * plain); -1 when that leaves no time.
 *  - d_predict_slowdown(): the workload's time traced over untraced at rate firings per tick
 *    of its own time, each costing cost ticks: 1 + rate * cost.
 */
#ifndef HVT_D_PREDICT_H
#define HVT_D_PREDICT_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "hvt_probe.h"

enum d_cal_key {
    D_CAL_EXIT = 0,        /* per firing: the VM exit and entry */
    D_CAL_LOOKUP,          /* per firing: the probe and the process found */
    D_CAL_DFIRE,           /* per firing of a probe with D clauses: the walk's fixed part */
    D_CAL_CLAUSE,          /* per clause run: its setup and end */
    D_CAL_SYSARGS,         /* per firing of a system call's entry probe with D clauses: the
                              user's arguments read from the pt_regs in guest memory */
    D_CAL_OP_INSN,         /* per plain instruction: arithmetic, constants, branches, tuple */
    D_CAL_OP_VAR,          /* per global, clause-local or scalar-array load or store */
    D_CAL_OP_TVAR,         /* per thread-local (self->) load or store */
    D_CAL_OP_ASSOC,        /* per associative-array load or store */
    D_CAL_OP_TPUSH,        /* per key pushed to a tuple */
    D_CAL_OP_LDG,          /* per guest-memory load */
    D_CAL_OP_BUILTIN,      /* per integer built-in read (arg0, pid, timestamp, ...) */
    D_CAL_OP_BUILTIN_STR,  /* per string built-in read (execname, probefunc, ...) */
    D_CAL_OP_SUBR,         /* per string subroutine, copyin, speculation op */
    D_CAL_OP_STACK,        /* per stack key (stack(), ustack() as a key) */
    D_CAL_AGG_COUNT,       /* per aggregation update, by function */
    D_CAL_AGG_SUM, D_CAL_AGG_MIN, D_CAL_AGG_MAX, D_CAL_AGG_AVG, D_CAL_AGG_STDDEV,
    D_CAL_AGG_QUANTIZE, D_CAL_AGG_LQUANTIZE, D_CAL_AGG_LLQUANTIZE,
    D_CAL_ACT,             /* per recording action begun */
    D_CAL_EMIT,            /* per value recorded */
    D_CAL_REC_STACK,       /* per stack recorded (stack(), ustack()) */
    /* What a firing's counts alone do not show; absent from a table (one from before them),
     * they are priced 0 and said to be missing: */
    D_CAL_NEWTASK,         /* per firing in another task than the CPU's last firing: the
                              task's name and ids found anew in guest memory (struct d_mix) */
    D_CAL_KEYNEW,          /* per aggregation update whose key is not the one the CPU last
                              updated that aggregation with: the key hashed and looked up
                              (or inserted) instead of compared in place (struct d_mix) */
    D_CAL_INTERP,          /* per clause the interpreter runs (one the lean path does not
                              take): its per-clause state, over the lean path's (a lean
                              clause has no arithmetic: op_insn is the interpreter's) */
    D_CAL_KEYS
};
_Static_assert(D_CAL_KEYS <= 32, "the table's keys are bits of a uint32_t");

/* What a counting run saw of its firings besides their number (the hypervisor's tally of a
 * timed run, struct hvt_probe_cost): the fraction in another task than the CPU's last firing
 * (newtask) and of another probe than it (switched). known 0: not measured (none assumed). */
struct d_mix {
    int known;
    double newtask, switched;
};

struct d_cal {
    double v[D_CAL_KEYS];
    uint32_t have;          /* bit k: v[k] given */
    double tsc_khz;         /* 0: unknown */
};

/* One firing's units of each class; pred[k]: of them, in predicates. keys[]: the
 * aggregation updates by what their key is made of (D_KEY_*: constants only, the probe's
 * names, the task's ids, both, or the firing's data), what d_model_mix prices keynew by. */
enum { D_KEY_CONST, D_KEY_PROBE, D_KEY_TASK, D_KEY_BOTH, D_KEY_DATA, D_KEY_KINDS };
struct d_model {
    double n[D_CAL_KEYS];
    double pred[D_CAL_KEYS];
    uint32_t nclauses;
    uint32_t lean;                 /* clauses the lean path runs (the rest: the interpreter) */
    double keys[D_KEY_KINDS];
};

const char *d_cal_name(enum d_cal_key k);
enum d_cal_key d_cal_fallback(enum d_cal_key k);   /* itself: no fallback */
int d_cal_parse(const char *text, struct d_cal *cal, char *err, size_t errlen);
int d_cal_load(const char *path, struct d_cal *cal, char *used, size_t usedlen, char *err, size_t errlen);

int d_model_probe(const uint8_t *image, size_t len, uint32_t pi, struct d_model *m, char *err, size_t errlen);
void d_model_mix(struct d_model *m, const struct d_mix *mix);
int d_model_cost(const struct d_cal *cal, const struct d_model *m, double phase[HVT_PH_COUNT],
                 uint32_t *estimated, char *err, size_t errlen);

double d_predict_rate(double fires, double ticks, double plain);
double d_predict_slowdown(double rate, double cost);

/* hvt -e's report: each probe's predicted ticks per firing by phase, the mean over the probes
 * (their firings taken as equally likely), and, given a rate (firings per tick; < 0: none),
 * the slowdown; the last line key=value (cost_per_firing=, and predicted_slowdown= with a
 * rate). models != 0: the counts too. cal NULL: only the counts, one line a probe,
 * `model probe=P:M:F:N KEY=N...` (what bench/predict-cal.py fits the table to). 0, or -1 with
 * the message on err. */
int d_predict_report(FILE *out, FILE *err, const uint8_t *image, size_t len, const struct d_cal *cal,
                     const char *calname, double rate, const struct d_mix *mix, int models);

/* hvt -e's prediction (its options): the counts alone (models, no table, no rate), else the
 * table from calpath (d_cal_load) and the report at rate_s firings a second (>= 0; the TSC's
 * rate tsc_khz, 0: the table's) or at a counting run's rate: count_run "FIRES:TICKS" (its own
 * plain firings at the table's exit + lookup taken out) or, from a timed counting run,
 * "FIRES:TICKS:OWN:NEWTASK:SWITCHED" (OWN its firings' own ticks as the hypervisor timed
 * them, taken out; of the firings NEWTASK in a new task and SWITCHED of another probe than
 * the CPU's last: the mix). 0; 1 the table or the run does not allow it; 2 a bad argument
 * (said on err). */
int d_predict_main(FILE *out, FILE *err, const uint8_t *image, size_t len, const char *calpath, double rate_s,
                   const char *count_run, double tsc_khz, int models);

#endif
