/*
 * dprog.h - a compiled D program as the host keeps it: the hypervisor image (include/hvt_dif.h,
 * what is sent) and what only the host needs to print what the hypervisor records (action
 * descriptions, format strings, aggregation names and key types, probe descriptions).
 *
 * Contract:
 *  - d_compile() (d_compile.c) fills a dprog from D source; dprog_free() releases it.
 *  - The image's clause i is clauses[i] here; an HVT_DIF_OP_ACT k in clause i begins the
 *    values of clauses[i].acts[k]; values follow in the order of acts[k].args.
 *  - The consumer (d_consume.c) decodes struct hvt_drec records and aggregation snapshots with
 *    nothing but a dprog; it never trusts a record: every length is checked against this
 *    description and a mismatch is reported, not printed as garbage.
 */
#ifndef HVT_DPROG_H
#define HVT_DPROG_H
#include <stddef.h>
#include <stdint.h>
#include "hvt_dif.h"

enum d_act_kind {
    D_ACT_TRACE = 1,      /* trace(expr): one value */
    D_ACT_PRINTF,         /* printf(fmt, args...) */
    D_ACT_PRINTA,         /* printa([fmt,] @a): no values; the host prints the aggregation */
    D_ACT_STACK,          /* stack(): the kernel stack (HVT_DIF_OP_STACK's bytes) */
    D_ACT_USTACK,         /* ustack() */
    D_ACT_EXIT,           /* exit(n): one value */
    D_ACT_CLEAR,          /* clear(@a): done in the hypervisor; nothing to print */
    D_ACT_TRUNC,          /* trunc(@a[, n]): host side; arg: n (0: all) */
    D_ACT_NORMALIZE,      /* normalize(@a, n): one value (n); host side */
    D_ACT_DENORMALIZE,
    D_ACT_SETOPT,         /* setopt("opt"[, "val"]): names in fmt, value in args */
    D_ACT_STEP, D_ACT_UNSTEP, D_ACT_STOP,  /* the instruction tracer (no values) */
    D_ACT_DEFAULT,        /* a clause without statements: DTrace's default action, no values
                             (the consumer prints the probe line) */
};

/* The type of a recorded value, as the host prints it: integers with their C size and
 * signedness (trace() prints them the DTrace way), strings, and symbolized addresses. */
enum d_vtype { D_V_INT = 1, D_V_UINT, D_V_STR, D_V_PTR, D_V_KSYM /* %a */,
               D_V_KSTACK, D_V_USTACK /* aggregation keys: size = frames (hvt_dif.h's
                                         encoding: a header word, then size u64) */ };
typedef struct {
    uint8_t type;         /* enum d_vtype */
    uint8_t size;         /* integers: 1, 2, 4, 8 (how trace() prints it) */
} d_val;

typedef struct {
    uint8_t kind;         /* enum d_act_kind */
    char *fmt;            /* printf, printa: the format as written (escapes resolved) */
    int agg;              /* printa, clear, trunc, normalize: aggregation index, else -1 */
    int nargs;
    d_val *args;          /* the recorded values' types, in order */
    int frames;           /* stack, ustack: frames to print (stack(n), option stackframes) */
    int *xaggs;           /* printa(fmt, @a, @b, ...): the aggregations after the first (agg) */
    int nxaggs;
} d_action;

typedef struct {
    char *where;          /* the clause's probe descriptions as written, for messages */
    int line;             /* where the clause starts in the source */
    int nacts;
    d_action *acts;
    /* Where a fault happened, for "in predicate" / "in action #K" (an HVT_DREC_ERROR's pc is
     * an insn index in the clause's code): insns before pred_end are the predicate's (0: no
     * predicate); stmt_pc[k] is the first insn of the clause's statement k, DTrace's action
     * #k+1 (every statement counts, as in DTrace). stmt_pc NULL: unknown (action #1). */
    uint32_t pred_end;
    int nstmts;
    uint32_t *stmt_pc;
    /* Compiled for a stable probe (proc:vmlinux::exec-success): its id and names, which the
     * probe line shows instead of the underlying probe's the record names (NULL: none). */
    struct d_probe_s *stable;
} d_clause;

typedef struct {
    char *name;           /* without the @ ("" for the anonymous one) */
    uint8_t fn;           /* enum hvt_dif_aggfn */
    int nkeys;
    d_val keys[HVT_DIF_TUPLE_MAX];
    int64_t p[4];         /* as struct hvt_dif_agg */
    uint32_t nbuckets;
} d_agg;

/* One probe the program enables, and the clauses it runs (image's hvt_dif_probe). */
typedef struct d_probe_s {
    uint32_t id;          /* the probe list's id (host-tools/probes/probe_list.h) */
    char *prov, *mod, *func, *name;
} d_probe;

typedef struct {
    uint8_t *image;       /* the hypervisor's part, struct hvt_dif_hdr first */
    size_t image_len;
    int nclauses;
    d_clause *clauses;
    int naggs;
    d_agg *aggs;
    int nprobes;
    d_probe *probes;
    /* options (#pragma D option, -x): the ones the host acts on */
    int quiet, flowindent, destructive;
    int aggsortkey, aggsortrev, aggsortpos, aggsortkeypos;  /* how aggregations print sorted */
    int aggzoom, rawbytes;  /* how distributions, trace() and string keys print */
    int stackindent_set, stackindent;  /* stack frames' indent (not set: DTrace's 14) */
    uint64_t switchrate_ns, aggrate_ns;
    char **macro_args;    /* $1.. as given */
    int nmacro_args;
} dprog;

void dprog_free(dprog *p);

#endif
