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
 *  - d_model_cost(): ticks per firing by phase (enum hvt_probe_phase) from the counts and the
 *    table. A class the table lacks is priced as the class it falls back to (d_cal_fallback:
 *    an aggregating function as count() or quantize(), a variable as a plain instruction)
 *    and its bit set in *estimated; -1 when the table lacks even the last fallback (exit,
 *    lookup, dfire, clause, sysargs or op_insn), with the key named.
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
    D_CAL_KEYS
};

struct d_cal {
    double v[D_CAL_KEYS];
    uint32_t have;          /* bit k: v[k] given */
    double tsc_khz;         /* 0: unknown */
};

/* One firing's units of each class; pred[k]: of them, in predicates. */
struct d_model {
    double n[D_CAL_KEYS];
    double pred[D_CAL_KEYS];
    uint32_t nclauses;
};

const char *d_cal_name(enum d_cal_key k);
enum d_cal_key d_cal_fallback(enum d_cal_key k);   /* itself: no fallback */
int d_cal_parse(const char *text, struct d_cal *cal, char *err, size_t errlen);
int d_cal_load(const char *path, struct d_cal *cal, char *used, size_t usedlen, char *err, size_t errlen);

int d_model_probe(const uint8_t *image, size_t len, uint32_t pi, struct d_model *m, char *err, size_t errlen);
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
                     const char *calname, double rate, int models);

/* hvt -e's prediction (its options): the counts alone (models, no table, no rate), else the
 * table from calpath (d_cal_load) and the report at rate_s firings a second (>= 0; the TSC's
 * rate tsc_khz, 0: the table's) or at a counting run's rate (count_run "FIRES:TICKS", its own
 * plain firings at the table's exit + lookup taken out). 0; 1 the table or the run does not
 * allow it; 2 a bad argument (said on err). */
int d_predict_main(FILE *out, FILE *err, const uint8_t *image, size_t len, const char *calpath, double rate_s,
                   const char *count_run, double tsc_khz, int models);

#endif
