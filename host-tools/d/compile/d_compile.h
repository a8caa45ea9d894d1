/*
 * d_compile.h - the host's D compiler: DTrace's D language to the hypervisor's bytecode
 * (include/hvt_dif.h) and the host's description of the program (dprog.h).
 *
 * Contract:
 *  - d_compile() compiles one program text. It never crashes and never reads past `len`,
 *    whatever the text. On success it returns 0 and fills *out (free it with dprog_free());
 *    on failure it returns -1, leaves *out empty, and has printed every error it found to
 *    opt->err (stderr if NULL), each as
 *        hvt: FILE:LINE:COL: error: MESSAGE
 *        <the source line>
 *        <a caret under the column>
 *    (messages are DTrace's where DTrace has one), except a probe description that matches
 *    no probe, which prints DTrace's one line:
 *        hvt: invalid probe specifier DESC: probe description DESC does not match any probes
 *  - Probe descriptions are resolved by the caller's resolver (below), once per description
 *    as written (after $1.. and $target are expanded); BEGIN, END and ERROR are the reserved
 *    ids the caller gives (0: that probe does not exist) and are matched here as
 *    dtrace:::BEGIN etc. The image lists every matched probe once, sorted by id, with the
 *    clauses it runs in program order (a clause whose several descriptions match the same
 *    probe runs once for it).
 *  - Types come from opt->btf when given (struct members, function prototypes for fbt args[],
 *    kernel typedefs and enums); without it arg0..arg9, args[] (as int64_t) and every
 *    integer and string feature still work.
 *  - Limits, each a compile error: expressions and statements nested 400 deep, 8192
 *    variables, 8192 aggregations, 16 registers an expression, 1000 printf arguments, and the
 *    hypervisor's own (HVT_DIF_MAX_INSNS a clause, HVT_DIF_MAX_IMAGE, strsize <= 1024).
 *  - dprog_dump() prints the compiled program, one instruction a line (hvt -S).
 *
 * The code it emits (what the verifier and the consumer can rely on):
 *  - A clause is [predicate: BZ/BNZ/JMP to its final RET] statements RET; every branch goes
 *    forward; no register is read before it is written on every path to the read.
 *  - Each action is ACT k (k = its index in dprog.clauses[c].acts, in clause order) followed by
 *    the code of its values, each recorded by one EMIT in acts[k].args order. exit(n) is
 *    ACT k; EXIT r: EXIT records r as exit's one value. stack() is ACT k; STACK 8192
 *    (HVT_PROBE_STACK_MAX). A stack(N) / ustack(N) aggregation key is TKSTACK / TUSTACK N in
 *    the tuple's place (no register); a program with a stack(N) key carries opt->korc. trunc(@a) without a count records 0. A clause with no statement
 *    at all gets DTrace's default action: ACT k of kind D_ACT_DEFAULT, no values.
 *  - Aggregating: the value in ra (count(): ra 0, unread), the tuple built by TCLR; TPUSH...
 *    (TCLR alone for no keys) right before AGG; associative arrays likewise before
 *    LDAV/STAV. Keys are computed into registers first, so nested lookups never clobber a
 *    tuple being built. nbuckets as include/hvt_dif.h lays them out: lquantize levels + 2,
 *    llquantize d_sema_act.c's llq_top() + 1 (DTrace's, without its parameter word).
 *  - speculation() is SPECNEW rd; speculate(id), commit(id), discard(id) are id's code then
 *    SPECULATE/COMMIT/DISCARD ra, no ACT (they record nothing), in DTrace's order within a
 *    clause (libdtrace's rules and messages). The header's nspec/specsize are the options'
 *    (nspec default 1, specsize 0 = the hypervisor's default, DTrace's 32k), both 0 in a
 *    program that uses no speculation.
 *  - STRG's imm is 0 for kernel memory (stringof, char arrays) and HVT_DIF_LD_USER for
 *    copyinstr() and user memory reached through copyin() (which is not a copy here: its value
 *    is the user address; loads through it carry HVT_DIF_LD_USER).
 *  - Integers narrower than 64 bits live in registers sign- or zero-extended to 64 bits as C
 *    sees them (SEXT/ZEXT after operations that can leave their range); args[] of a narrow C
 *    type are extended after VAR ARGn.
 */
#ifndef HVT_D_COMPILE_H
#define HVT_D_COMPILE_H
#include <stdint.h>
#include <stdio.h>
#include "dprog.h"
#include "btf.h"

/* What the resolver hands back for each probe a description matches. */
typedef struct d_probe_sink d_probe_sink;
void d_probe_add(d_probe_sink *sink, uint32_t id, const char *prov, const char *mod,
                 const char *func, const char *name);

/* Resolve `desc` (DTrace syntax: "p:m:f:n" with globs, fewer fields fill from the right):
 * call d_probe_add() once per matching probe (the strings are copied). Return 0 (even when
 * nothing matched: the compiler reports that), or -1 after writing why the description is
 * invalid into err (e.g. a profile rate of 0). */
typedef int (*d_resolve_fn)(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen);

/* A loadable module's own types in the BTF given (split BTF joined to the kernel's). */
typedef struct { const char *name; uint32_t lo, hi; } d_btf_module;

typedef struct {
    d_resolve_fn resolve;        /* required unless the program only uses BEGIN/END/ERROR */
    void *resolve_ctx;
    uint32_t begin_id, end_id, error_id; /* reserved probe ids (0: not available) */
    const btf_info *btf;         /* kernel types, or NULL */
    const d_btf_module *btf_modules; /* btf holds these modules' own types too (each its id
                                    range; the kernel's are below the first): their fbt args[]
                                    are typed from them */
    int nbtf_modules;
    const struct hvt_dif_korc *korc; /* where the kernel keeps its ORC tables (orc_korc), or
                                    NULL: stack( ) keys are refused */
    const char *const *macro_args; /* $1, $2, ... as given on the command line */
    int nmacro_args;
    int64_t target_pid;          /* $target (0: not defined) */
    const void *ksyms;           /* const ksym_table *: kernel globals by name (`jiffies); NULL: none */
    int64_t kslide;              /* the running kernel's KASLR slide, added to their addresses */
    const char *const *xopts;    /* -x options: "name" or "name=value" */
    int nxopts;
    int destructive;             /* -w: allow destructive actions (stop) */
    int allow_zero_matches;      /* -Z: a description matching no probe is not an error */
    int max_errors;              /* stop after this many errors (0: 20) */
    FILE *err;                   /* messages (NULL: stderr) */
} d_options;

int d_compile(const char *file, const char *src, size_t len, const d_options *opt, dprog *out);

/* A resolver over a probe_list (host-tools/probes/probe_list.h): ctx is a probe_list *.
 * Adds profile-N / tick-N probes on demand (probe_list_add_profile), like hvt -n. */
int d_resolve_probe_list(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen);

/* The same over the kernel's probe list, and the addr provider's probes made on demand from
 * the kernel's symbols and image (probe_list_add_addr: addr:kernel:SYM+OFF:,
 * addr:kernel:0xADDR:, addr:pid<N>:0xADDR:); ctx is a d_kernel_resolver *. */
typedef struct {
    void *list;                  /* probe_list * */
    const void *syms;            /* const ksym_table *; NULL: no addr probes */
    const void *img;             /* const kimg * (the kernel image: decoding SYM+OFF) */
} d_kernel_resolver;
int d_resolve_kernel(void *ctx, const char *desc, d_probe_sink *sink, char *err, size_t errlen);

/* Disassembly: the header, then per clause its descriptions and one line per instruction
 * ("clause index mnemonic operands", variables and aggregations by name). */
void dprog_dump(FILE *f, const dprog *p);

#endif
