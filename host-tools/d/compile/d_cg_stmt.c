/*
 * d_cg_stmt: clauses and statements. A clause is [predicate: branch to its RET when false]
 * statements RET. Each statement is checked and compiled on its own (an error in one is
 * reported and the next is still compiled). Actions are checked here with DTrace's rules and
 * each becomes one d_action, numbered in clause order, whose values its code records after
 * ACT k: trace one, printf its arguments, exit/trunc/normalize the number, setopt the value;
 * stack( ) records the kernel stack; the others record nothing but their ACT.
 * speculate(id), commit(id), discard(id) are no d_action (they record nothing): their op
 * with the id's register; the order of a clause's actions around them is DTrace's
 * (libdtrace's dt_stmt_append, same messages), checked in source order, which covers every
 * path the verifier checks.
 */
#include "d_int.h"
#include <stdlib.h>
#include <string.h>
#include "hvt_probe.h"

static const struct {
    const char *name;
    int kind, lo, hi;
} acts[] = {
    {"trace", D_ACT_TRACE, 1, 1}, {"printf", D_ACT_PRINTF, 1, 1000}, {"printa", D_ACT_PRINTA, 1, 1000},
    {"stack", D_ACT_STACK, 0, 1}, {"ustack", D_ACT_USTACK, 0, 2}, {"exit", D_ACT_EXIT, 1, 1},
    {"clear", D_ACT_CLEAR, 1, 1}, {"trunc", D_ACT_TRUNC, 1, 2}, {"normalize", D_ACT_NORMALIZE, 2, 2},
    {"denormalize", D_ACT_DENORMALIZE, 1, 1}, {"setopt", D_ACT_SETOPT, 1, 2}, {"step", D_ACT_STEP, 0, 0},
    {"unstep", D_ACT_UNSTEP, 0, 0}, {"stop", D_ACT_STOP, 0, 0}};

static d_action *act_new(d_cc *cc, d_node *call, int kind)
{
    call->var = d_action_add(cc, kind, call->line, call->col);
    d_emit(cc, HVT_DIF_OP_ACT, 0, 0, 0, call->var);
    return &cc->dcl->acts[call->var];
}

static void act_vals(d_cc *cc, int k, const d_val *v, int n)
{
    d_action *a = &cc->dcl->acts[k];
    a->args = malloc((size_t)(n ? n : 1) * sizeof *v);
    if (!a->args) d_nomem(cc);
    memcpy(a->args, v, (size_t)n * sizeof *v);
    a->nargs = n;
}

static char *xstrdup(d_cc *cc, const char *s)
{
    char *p = strdup(s);
    if (!p) d_nomem(cc);
    return p;
}

static d_node *arg(d_node *call, int i)
{
    d_node *a = call->b;
    while (a && i--) a = a->next;
    return a;
}

/* an aggregation argument: its index */
static int agg_arg(d_cc *cc, d_node *call, int i)
{
    d_node *a = arg(call, i - 1);
    if (a->kind != N_AGG) {
        d_sema_expr(cc, a);
        d_arg_type(cc, call->str, i, a, "aggregation");
    }
    d_aggsym *g = d_agg_find(cc, a->str);
    if (!g) d_fail(cc, a->line, a->col, "undefined aggregation: @%s", a->str);
    return (int)(g - cc->aggs);
}

static const char *str_const(d_cc *cc, d_node *call, int i)
{
    d_node *a = arg(call, i - 1);
    if (a->kind != N_STR) {
        d_sema_expr(cc, a);
        d_arg_type(cc, call->str, i, a, "string constant");
    }
    return d_strndup(cc, a->str, strnlen(a->str, a->slen));
}

static int frames_arg(d_cc *cc, d_node *call, int i, int dflt)
{
    d_node *a = arg(call, i - 1);
    int64_t v;
    if (!a) return dflt;
    d_sema_expr(cc, a);
    if (!d_sema_int_const(cc, a, &v) || v <= 0 || v > 1024)
        d_fail(cc, a->line, a->col, "%s( ) argument #%d must be a non-zero positive integer constant", call->str, i);
    return (int)v;
}

static void emit_value(d_cc *cc, d_node *e)
{
    int r = d_cg_expr(cc, e);
    d_emit(cc, HVT_DIF_OP_EMIT, 0, r, 0, 0);
    d_cg_rfree(cc, r);
}

/* a scalar argument, recorded as one value */
static void scalar_value(d_cc *cc, d_node *call, int i, int k)
{
    d_node *a = d_int_arg(cc, call, i, 0);
    d_val v;
    d_val_of(cc, a->ty, &v);
    act_vals(cc, k, &v, 1);
    emit_value(cc, a);
}

/* ---- speculations: the order of a clause's actions ---- */
enum { SO_SPEC = 1, SO_COMMIT = 2, SO_DREC = 4 };           /* cc->spec_order bits */
enum { K_SPECULATE = -1, K_COMMIT = -2, K_DISCARD = -3, K_AGG = -4 }; /* besides D_ACT_* */

/* what this action may not follow; NULL when it may come here */
static const char *order_error(d_cc *cc, int kind, const char *name)
{
    int o = cc->spec_order;
    switch (kind) {
    case K_SPECULATE:
        if (o & SO_SPEC) return "speculate( ) may not follow speculate( )";
        if (o & SO_COMMIT) return "speculate( ) may not follow commit( )";
        if (o & SO_DREC) return "speculate( ) may not follow data-recording action(s)";
        return NULL;
    case K_COMMIT:
        if (o & SO_COMMIT) return "commit( ) may not follow commit( )";
        if (o & SO_DREC) return "commit( ) may not follow data-recording action(s)";
        if (o & SO_SPEC) return "commit( ) may not follow speculate( ) in hvtrace";
        return NULL;
    case K_DISCARD:
        return NULL;
    case K_AGG:
        if (o & SO_SPEC) return "aggregating actions may not follow speculate( )";
        if (o & SO_COMMIT) return "aggregating actions may not follow commit( )";
        return NULL;
    case D_ACT_EXIT:
        if (o & SO_SPEC) return "exit( ) may not follow speculate( )";
        break;
    case D_ACT_STEP: case D_ACT_UNSTEP: case D_ACT_STOP:     /* clear( ) is a record: it waits */
        if (o & SO_SPEC)
            return d_sprintf(cc, "%s( ) may not follow speculate( ) in hvtrace: it takes effect at once, not at the "
                             "commit", name);
        break;
    }
    return o & SO_COMMIT ? "data-recording actions may not follow commit( )" : NULL;
}

/* check the action against the clause's earlier ones, then count it in */
static void order(d_cc *cc, const d_node *at, int kind, const char *name)
{
    const char *why = order_error(cc, kind, name);
    if (why) d_fail(cc, at->line, at->col, "%s", why);
    int o = cc->spec_order;
    if (kind == K_SPECULATE) o |= SO_SPEC;
    else if (kind == K_COMMIT) o |= SO_COMMIT;
    else if (kind == K_AGG) o |= SO_DREC;
    else if (kind != K_DISCARD && !(o & SO_SPEC)) o |= SO_DREC;
    cc->spec_order = o;
}

static void spec_action(d_cc *cc, d_node *call)
{
    static const struct { const char *name; int kind, op; } sa[] = {
        {"speculate", K_SPECULATE, HVT_DIF_OP_SPECULATE}, {"commit", K_COMMIT, HVT_DIF_OP_COMMIT},
        {"discard", K_DISCARD, HVT_DIF_OP_DISCARD}};
    size_t i = 0;
    while (strcmp(sa[i].name, call->str)) i++;
    d_argc_check(cc, call, 1, 1);
    d_node *a = d_int_arg(cc, call, 1, 0);
    order(cc, call, sa[i].kind, call->str);
    int r = d_cg_expr(cc, a);
    d_emit(cc, sa[i].op, 0, r, 0, 0);
    d_cg_rfree(cc, r);
    cc->uses_spec = 1;
}

static void action(d_cc *cc, d_node *call)
{
    if (!strcmp(call->str, "speculate") || !strcmp(call->str, "commit") || !strcmp(call->str, "discard")) {
        spec_action(cc, call);
        return;
    }
    size_t i = 0;
    while (strcmp(acts[i].name, call->str)) i++;
    int kind = acts[i].kind, nargs = 0, k;
    d_argc_check(cc, call, acts[i].lo, acts[i].hi);
    order(cc, call, kind, call->str);
    for (d_node *a = call->b; a; a = a->next) nargs++;
    switch (kind) {
    case D_ACT_TRACE: {
        d_node *a = call->b;
        d_sema_expr(cc, a);
        d_node *s = d_sema_tostr(cc, a);
        a = s ? s : d_sema_rvalue(cc, a);
        d_val v;
        if (d_ty(cc, a->ty)->kind == TY_VOID) d_fail(cc, a->line, a->col, "trace( ) may not be applied to a void expression");
        if (d_val_of(cc, a->ty, &v) < 0) d_arg_type(cc, "trace", 1, a, "scalar or string");
        k = act_new(cc, call, kind) - cc->dcl->acts;
        act_vals(cc, k, &v, 1);
        emit_value(cc, a);
        return;
    }
    case D_ACT_PRINTF: {
        const char *fmt = str_const(cc, call, 1);
        d_node **args = d_alloc(cc, (size_t)nargs * sizeof *args);
        int n = 0;
        for (d_node *a = call->b->next; a; a = a->next) {
            d_sema_expr(cc, a);
            args[n++] = a;
        }
        d_val *vals = d_alloc(cc, (size_t)(n + 1) * sizeof *vals);
        d_printf_check(cc, "printf", fmt, call->b, args, n, 1, vals);
        for (int j = 0; j < n; j++) {
            d_node *s = d_sema_tostr(cc, args[j]);
            args[j] = s ? s : d_sema_rvalue(cc, args[j]);
        }
        k = act_new(cc, call, kind) - cc->dcl->acts;
        cc->dcl->acts[k].fmt = xstrdup(cc, fmt);
        act_vals(cc, k, vals, n);
        for (int j = 0; j < n; j++) emit_value(cc, args[j]);
        return;
    }
    case D_ACT_PRINTA: {
        int hasfmt = call->b->kind != N_AGG;
        if (!hasfmt && nargs > 1) {
            d_node *extra = arg(call, 1);
            d_fail(cc, extra->line, extra->col, "printa( ) of more than one aggregation needs a format string in hvtrace");
        }
        if (hasfmt && nargs == 1)
            d_fail(cc, call->line, call->col, "printa( ) prototype mismatch: 1 arg passed, an aggregation expected");
        if (nargs - hasfmt > 16)
            d_fail(cc, call->line, call->col, "printa( ) of more than 16 aggregations is not supported by hvtrace");
        const char *fmt = hasfmt ? str_const(cc, call, 1) : NULL;
        /* printa(fmt, @a, @b, ...): DTrace joins them on their keys, which must be alike */
        int gs[16], ng = 0;
        for (int i = 1 + hasfmt; i <= nargs; i++) {
            gs[ng] = agg_arg(cc, call, i);
            const d_aggsym *x = &cc->aggs[gs[ng]], *f = &cc->aggs[gs[0]];
            int same = x->nkeys == f->nkeys;
            for (int k = 0; same && k < x->nkeys; k++)
                same = x->keys[k] == f->keys[k];
            if (!same) {
                d_node *an = arg(call, i - 1);
                d_fail(cc, an->line, an->col, "printa( ) argument #%d is incompatible with argument #%d: key signature "
                       "of @%s differs from @%s", i, 1 + hasfmt, x->name, f->name);
            }
            ng++;
        }
        if (fmt) d_printa_check_n(cc, fmt, call->b, cc->aggs, gs, ng);
        d_action *a = act_new(cc, call, kind);
        a->agg = gs[0];
        if (fmt) a->fmt = xstrdup(cc, fmt);
        if (ng > 1) {
            a->xaggs = malloc((size_t)(ng - 1) * sizeof *a->xaggs);
            if (!a->xaggs) d_nomem(cc);
            memcpy(a->xaggs, gs + 1, (size_t)(ng - 1) * sizeof *a->xaggs);
            a->nxaggs = ng - 1;
        }
        return;
    }
    case D_ACT_STACK: case D_ACT_USTACK: {
        int frames = frames_arg(cc, call, 1, kind == D_ACT_STACK ? cc->stackframes : cc->ustackframes);
        if (kind == D_ACT_USTACK && nargs == 2) frames_arg(cc, call, 2, 0);
        act_new(cc, call, kind)->frames = frames;
        if (kind == D_ACT_STACK) d_emit(cc, HVT_DIF_OP_STACK, 0, 0, 0, HVT_PROBE_STACK_MAX);
        else d_emit(cc, HVT_DIF_OP_USTACK, 0, 0, 0, frames);   /* frames_arg: 1 .. 1024 */
        return;
    }
    case D_ACT_EXIT: {
        d_node *a = d_int_arg(cc, call, 1, 0);
        d_val v;
        d_val_of(cc, a->ty, &v);
        k = act_new(cc, call, kind) - cc->dcl->acts;
        act_vals(cc, k, &v, 1);
        int r = d_cg_expr(cc, a);
        d_emit(cc, HVT_DIF_OP_EXIT, 0, r, 0, 0); /* records the value: the action's one */
        d_cg_rfree(cc, r);
        return;
    }
    case D_ACT_CLEAR: case D_ACT_DENORMALIZE: {
        /* both act on the host's copy when the record is consumed, as DTrace's: clear() zeroes
         * the sum of the snapshots there, after the printa()s before it printed it (the
         * hypervisor's AGGCLR would lose what was aggregated since the last snapshot) */
        int g = agg_arg(cc, call, 1);
        act_new(cc, call, kind)->agg = g;
        return;
    }
    case D_ACT_TRUNC: case D_ACT_NORMALIZE: {
        int g = agg_arg(cc, call, 1);
        if (nargs == 2) {
            d_int_arg(cc, call, 2, 0);
            k = act_new(cc, call, kind) - cc->dcl->acts;
            cc->dcl->acts[k].agg = g;
            scalar_value(cc, call, 2, k);
        } else { /* trunc(@a): all of it, recorded as 0 */
            k = act_new(cc, call, kind) - cc->dcl->acts;
            cc->dcl->acts[k].agg = g;
            d_val v = {D_V_INT, 8};
            act_vals(cc, k, &v, 1);
            int r = d_cg_ralloc(cc, call);
            d_cg_ldi(cc, r, 0);
            d_emit(cc, HVT_DIF_OP_EMIT, 0, r, 0, 0);
            d_cg_rfree(cc, r);
        }
        return;
    }
    case D_ACT_SETOPT: {
        const char *name = str_const(cc, call, 1), *why = d_opt_refused(name);
        if (why)
            d_fail(cc, call->line, call->col, "option %s is not supported by hvtrace: %s", name, why);
        d_node *v = nargs == 2 ? d_str_arg(cc, call, 2) : NULL;
        k = act_new(cc, call, kind) - cc->dcl->acts;
        cc->dcl->acts[k].fmt = xstrdup(cc, name);
        if (v) {
            d_val sv = {D_V_STR, 0};
            act_vals(cc, k, &sv, 1);
            emit_value(cc, v);
        }
        return;
    }
    case D_ACT_STEP: case D_ACT_UNSTEP: case D_ACT_STOP:
        /* the instruction tracer; stop( ) is not DTrace's (stop the process: destructive) but
         * hvtrace's: the trace ends here, so it needs no -w */
        act_new(cc, call, kind);
        d_emit(cc, HVT_DIF_OP_TRACER, 0, 0, 0, kind == D_ACT_STEP ? HVT_DIF_TRACER_STEP :
               kind == D_ACT_UNSTEP ? HVT_DIF_TRACER_UNSTEP : HVT_DIF_TRACER_STOP);
        return;
    default:
        act_new(cc, call, kind);
        return;
    }
}

static void cg_aggstmt(d_cc *cc, d_node *e)
{
    d_node *lhs = e->a, *call = e->b;
    int g = lhs->var, rv, keys[HVT_DIF_TUPLE_MAX], nk = 0;
    order(cc, d_node_start(e), K_AGG, NULL);
    int fn = cc->aggs[g].fn, rw = -1;
    if (fn == HVT_DIF_AGG_COUNT) rv = -1; /* count( ) has no value: AGG's ra is 0, unread */
    else rv = d_cg_expr(cc, call->b);
    /* the quantizations' increment, the argument after their parameters: AGGW's weight */
    int incr = fn == HVT_DIF_AGG_QUANTIZE ? 2 : fn == HVT_DIF_AGG_LQUANTIZE ? 5 : fn == HVT_DIF_AGG_LLQUANTIZE ? 6 : 0;
    d_node *w = call->b;
    for (int i = 1; w && i < incr; i++) w = w->next;
    if (incr && w) rw = d_cg_expr(cc, w);
    if (lhs->kind == N_INDEX) d_cg_tuple(cc, lhs->b, keys, &nk);
    d_cg_push(cc, keys, nk);
    if (rw >= 0) d_emit(cc, HVT_DIF_OP_AGGW, 0, rv, rw, g);
    else d_emit(cc, HVT_DIF_OP_AGG, 0, rv < 0 ? 0 : rv, 0, g);
    for (int i = 0; i < nk; i++) d_cg_rfree(cc, keys[i]);
    d_cg_rfree(cc, rv);
    d_cg_rfree(cc, rw);
}

static void cond(d_cc *cc, d_node *c)
{
    d_sema_expr(cc, c);
    d_sema_rvalue(cc, c);
    if (!d_ty_is_scalar(cc, c->ty)) d_fail(cc, c->line, c->col, "if( ) condition must be of scalar type");
}

static void stmt(d_cc *cc, d_node *s)
{
    jmp_buf jb, *outer = cc->jb;
    cc->jb = &jb;
    if (setjmp(jb)) {
        cc->jb = outer;
        cc->regs = 0;
        return;
    }
    cc->regs = 0;
    switch (s->kind) {
    case S_EXPR: {
        d_node *e = s->a;
        if (d_is_action(e)) action(cc, e);
        else {
            d_sema_stmt(cc, s);
            if (e->kind == N_POST) { /* x++ as a statement: nobody wants the old value */
                e->kind = N_UNARY;
                e->side = 1;
            }
            if (e->action == 2) cg_aggstmt(cc, e);
            else d_cg_rfree(cc, d_cg_expr(cc, e));
        }
        break;
    }
    case S_BLOCK:
        for (d_node *c = s->a; c; c = c->next) stmt(cc, c);
        break;
    case S_IF: {
        d_plist *other = NULL;
        cond(cc, s->a);
        d_cg_branch(cc, s->a, 0, &other);
        stmt(cc, s->b);
        if (s->c) {
            int jmp = d_pc(cc);
            d_emit(cc, HVT_DIF_OP_JMP, 0, 0, 0, 0);
            d_cg_here(cc, other);
            stmt(cc, s->c);
            d_patch(cc, jmp, d_pc(cc));
        } else
            d_cg_here(cc, other);
        break;
    }
    default: break;
    }
    cc->jb = outer;
}

/* The clause's code for the probes resolved into cc->pm (d_cg_begin and d_resolve_clause done:
 * d_stable.c): rowpred, a stable probe's row condition, goes ahead of the clause's own. */
void d_cg_clause(d_cc *cc, d_item *cl, d_node *rowpred)
{
    jmp_buf *outer = cc->jb;
    d_clause *dc = cc->dcl;
    dc->where = xstrdup(cc, cl->where);
    dc->line = cl->line;
    int io = d_xlate_is_io(cc);
    if (cc->io_wait_clause && !d_var_find(cc, HVT_DIF_VK_THREAD, D_XLATE_WAIT_BIO))
        d_var_add(cc, HVT_DIF_VK_THREAD, D_XLATE_WAIT_BIO, cc->t_u64, cl->line, cl->col);
    if (io && !cl->implicit)
        cl->pred = d_xlate_pred(cc, cl->pred, cl->line, cl->col);
    cc->spec_order = 0;
    d_plist *ret = NULL;
    if (rowpred) {
        if (cl->pred) {
            d_node *both = d_node_new(cc, N_BIN, cl->pred->line, cl->pred->col);
            both->op = TK_LAND;
            both->a = rowpred;
            both->b = cl->pred;
            rowpred = both;
        }
        cl->pred = rowpred;
    }
    if (cl->pred) {
        jmp_buf jb;
        cc->jb = &jb;
        if (!setjmp(jb)) {
            cc->regs = 0;
            d_sema_predeclare(cc, cl->body);
            d_sema_pred(cc, cl->pred);
            d_cg_branch(cc, cl->pred, 0, &ret);
        }
        cc->jb = outer;
        dc->pred_end = (uint32_t)d_pc(cc);
    }
    int n = 0;
    for (d_node *s = cl->body; s; s = s->next) n++;
    dc->stmt_pc = calloc((size_t)n + 1, sizeof *dc->stmt_pc);
    if (!dc->stmt_pc) d_nomem(cc);
    dc->nstmts = n;
    n = 0;
    for (d_node *s = cl->body; s; s = s->next) {
        dc->stmt_pc[n++] = (uint32_t)d_pc(cc);
        stmt(cc, s);
    }
    if (!cl->body) { /* DTrace's default action: a record that only says the probe fired */
        int k = d_action_add(cc, D_ACT_DEFAULT, cl->line, cl->col);
        d_emit(cc, HVT_DIF_OP_ACT, 0, 0, 0, k);
    }
    d_cg_here(cc, ret);
    d_cg_end(cc);
    cc->jb = outer;
}
