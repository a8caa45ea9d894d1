/*
 * trace_opts.h - the tracer's options: the boot configuration's "trace =" line (and, later,
 * the same text in a host control command), parsed once into struct trace_opts.
 *
 * Syntax: comma-separated key=value items, e.g.
 *   task=0x22040:0x9a0:0x9a4:0xbd0,start=entry,at=0xffffffff81234560,pid=42,budget=5000000,
 *   only=user,stop_at=0xffffffff81111110:0xffffffff81222220,lstar=0xffffffff82000080
 * Keys:
 *   task=C:P:T:N[:R:E]  current-task per-CPU offset and task_struct pid/tgid/comm offsets
 *                  (task.c); R, E: task_struct.cred and cred.euid, for hc_user=root
 *   hc_user=root|none|all  who in user mode may use the trace control hypercalls (marks,
 *                  probes, the command agent): root (default): effective uid 0, read from the
 *                  current task (needs R and E; without them, as none); none: kernel mode
 *                  only; all: any process. Refused callers get #UD, counted.
 *   start=mark|boot|host|passes|entry
 *                  mark: hvtrace-mark hypercalls (default); boot: from the first VM exit;
 *                  host: only a control command starts it; passes: after 'passes' executions of
 *                  'at'; entry: on entry of the kernel function at 'at' (with pid=/comm=: only
 *                  when that task enters it). passes/entry use an EPT execute trap.
 *   at=ADDR        the trigger address (link-time kernel address: the KASLR slide is applied)
 *   passes=N       for start=passes (default 1)
 *   pid=N, comm=S  for start=entry: only this task (comm: up to 15 characters)
 *   budget=N       stop after N traced instructions (all CPUs together)
 *   only=kernel|user    record only kernel-mode or only user-mode instructions
 *   cr3=ADDR       record only instructions run under this page-table root (PCID bits ignored)
 *   range=LO-HI    record only instructions in [LO, HI) (up to TRACE_MAX_RANGES; kernel
 *                  addresses are link-time and slid)
 *   stop_at=A:B:.. stop when any of these (link-time kernel) addresses is executed: panic, oops
 *   flight=MB      flight recorder: keep the last MB of records in memory, dump at stop
 *   lstar=ADDR     link-time address of entry_SYSCALL_64: runtime IA32_LSTAR - this = the slide
 *   probe=KIND:ADDR  a hidden probe (probe.h), armed by the HVT_HC_PROBE hypercall: entry:ADDR
 *                  (a function's first instruction), addr:ADDR, return:LO-HI (every return
 *                  site of the function [LO, HI)); link-time kernel addresses, slid; up to
 *                  TRACE_MAX_PROBES; the probe's id is its position (1, 2, ...)
 *   scope=pid:N|tid:N|comm:NAME  single-step only this context (step.c, "Scope"): a process by
 *                  pid (its threads too), one thread by its id, or every task of that name; a
 *                  CPU running anything else runs at full speed, unstepped and undilated
 *   irq=in|out     with scope= and in D step() windows: hardware interrupts (and NMIs) taken
 *                  while the wanted context runs are recorded (in, the default) or left out
 *   switch_at=ADDR the scheduler's switch point (link-time __switch_to, slid): scope= watches
 *                  it to see which task a CPU switches to (hvt options adds it)
 *   record=full|flow  what each instruction's record carries (hvt_trace_format.h MODE): full,
 *                  every register it changed (default); flow, control flow alone (the analyzer
 *                  rebuilds each instruction from the code bytes)
 *   regs=R:R:..    record these registers only (rax..r15, rflags; RIP always): REGS mode
 *   checkregs=on|off  every fast step also compares all registers and counts what the
 *                  instruction's decoded write set missed (HVT-STEPSTAT wregs_misses); the
 *                  trace stays exact either way (a test option: it costs the full compare)
 * Errors name the item and its column: "trace option at column 17 ('passes=x'): bad number".
 */
#ifndef HVT_TRACE_OPTS_H
#define HVT_TRACE_OPTS_H
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include "hvt_trace_format.h"

#define TRACE_MAX_RANGES  4
#define TRACE_MAX_STOP_AT 8
#define TRACE_COMM_MAX    16
#define TRACE_MAX_PROBES  8

enum trace_start { TRACE_START_MARK, TRACE_START_BOOT, TRACE_START_HOST, TRACE_START_PASSES,
                   TRACE_START_ENTRY };
enum trace_only { TRACE_ONLY_ALL, TRACE_ONLY_KERNEL, TRACE_ONLY_USER };
enum trace_hc_user { TRACE_HC_ROOT, TRACE_HC_NONE, TRACE_HC_ALL };
enum trace_scope { TRACE_SCOPE_ALL, TRACE_SCOPE_PID, TRACE_SCOPE_TID, TRACE_SCOPE_COMM };

struct trace_range { uint64_t lo, hi; };
struct trace_probe { uint8_t kind; uint64_t lo, hi; };   /* kind: enum probe_kind */

struct trace_opts {
    bool task_set;
    uint64_t task[6];                      /* current, pid, tgid, comm offsets; cred, euid
                                              (0, 0: not given, no uid checks) */
    enum trace_start start;
    uint64_t at, passes;
    bool pid_set;
    uint64_t pid;
    char comm[TRACE_COMM_MAX];             /* "" = any */
    uint64_t budget;                       /* 0 = none */
    enum trace_only only;
    enum trace_hc_user hc_user;
    uint64_t cr3;                          /* 0 = any */
    struct trace_range range[TRACE_MAX_RANGES];
    unsigned nrange;
    uint64_t stop_at[TRACE_MAX_STOP_AT];
    unsigned nstop_at;
    uint64_t flight_mb;                    /* 0 = stream everything */
    uint64_t lstar;                        /* 0 = no slide known: kernel addresses as given */
    bool ranges_runtime;                   /* range= addresses are runtime ones (host control) */
    bool checkregs;
    unsigned record;                       /* hvt_rec_mode (HVT_MODE_FULL by default) */
    uint32_t regmask;                      /* HVT_MODE_REGS: the registers (HVT_REG_* bits) */
    enum trace_scope scope;                /* TRACE_SCOPE_ALL: every CPU steps */
    uint64_t scope_id;                     /* pid or tid */
    char scope_comm[TRACE_COMM_MAX];
    bool irq_out;
    uint64_t switch_at;                    /* link-time __switch_to */
    struct trace_probe probe[TRACE_MAX_PROBES];
    unsigned nprobe;
};

/* Parse 'text' into *o (defaults first). 0 on success; -1 with a message in err. */
int trace_opts_parse(const char *text, struct trace_opts *o, char *err, size_t errlen);
/* Kernel addresses in options are link-time: is this one? */
static inline bool trace_opts_is_kernel(uint64_t a) { return a >= 0xffff800000000000ull; }

#endif
