/*
 * d_stable: the clauses a clause on a stable probe (proc, sched, lockstat) becomes, driven from
 * d_compile.c in place of d_cg_clause (d_xlate.c gives the expressions).
 *
 *  - A clause on a stable probe is compiled once per row of host-tools/probes/stable.c the
 *    kernel has (d_xl_clause): on the row's underlying probes, with the row's condition ahead
 *    of the clause's predicate and cc->srow set for d_xlate.c's args[]; the d_clause names the
 *    stable probe for the consumer's probe line. A fallback row is used only when no other
 *    row of the probe matched. A clause that also matches ordinary probes compiles for them
 *    first, as it always did.
 *  - State between two probes (lockstat: the lock at mutex_lock's entry for its return) is
 *    kept by clauses of hvtrace's own, compiled after the program's (d_xl_finish): a helper
 *    row's assignments at its probe, then each used row's resets, so they run after every
 *    clause of the user's on the same probe. They record nothing.
 */
#include "d_int.h"
#include "stable.h"
#include <stdlib.h>
#include <string.h>

/* a d_probe of the stable probe for the consumer's probe line (owned by the d_clause) */
static struct d_probe_s *probe_copy(d_cc *cc, const d_pmatch *p)
{
    struct d_probe_s *d = calloc(1, sizeof *d);
    if (!d) d_nomem(cc);
    d->id = p->id;
    d->prov = strdup(p->prov);
    d->mod = strdup(p->mod);
    d->func = strdup(p->func);
    d->name = strdup(p->name);
    if (!d->prov || !d->mod || !d->func || !d->name) {
        free(d->prov), free(d->mod), free(d->func), free(d->name), free(d);
        d_nomem(cc);
    }
    return d;
}

/* Row k of the probe rows[first..first+nr) is used: its probe's helper rows and its own clear
 * are needed, and the thread-locals they keep declared. */
static void need_state(d_cc *cc, const stable_row *rows, size_t nrows, size_t first, size_t nr, size_t k)
{
    int any = rows[k].clear[0] != NULL;
    for (size_t j = first; j < first + nr; j++) any |= rows[j].helper;
    if (!any) return;
    if (!cc->xl_need) cc->xl_need = d_alloc(cc, nrows);
    for (size_t j = first; j < first + nr; j++)
        if (rows[j].helper) cc->xl_need[j] = 1;
    if (rows[k].clear[0]) cc->xl_need[k] = 1;
    static const char *const vars[] = STABLE_VARS;
    for (int i = 0; vars[i]; i++)
        if (!d_var_find(cc, HVT_DIF_VK_THREAD, vars[i])) d_var_add(cc, HVT_DIF_VK_THREAD, vars[i], cc->t_u64, 0, 0);
}

/* A clause of hvtrace's own on row r's probes: the assignments stmts under pred */
static void own_clause(d_cc *cc, const stable_row *r, const char *pred, const char *const *stmts, const char *what)
{
    char err[256] = "";
    d_cg_begin(cc);
    d_resolve_desc(cc, r->under, err, sizeof err);
    d_item it;
    memset(&it, 0, sizeof it);
    it.kind = ITEM_CLAUSE;
    it.where = d_sprintf(cc, "%s:::%s (hvtrace's %s at %s)", r->prov, r->name, what, r->under);
    it.pred = pred ? d_xl_parse(cc, pred, 0, 0) : NULL;
    d_node **tail = &it.body;
    for (int i = 0; i < 2 && stmts[i]; i++) {
        d_node *st = d_node_new(cc, S_EXPR, 0, 0);
        st->a = d_xl_parse(cc, stmts[i], 0, 0);
        *tail = st;
        tail = &st->next;
    }
    d_cg_clause(cc, &it, NULL);
}

static int same_texts(const char *const *a, const char *const *b)
{
    for (int i = 0; i < 2; i++)
        if ((a[i] == NULL) != (b[i] == NULL) || (a[i] && strcmp(a[i], b[i]))) return 0;
    return 1;
}

void d_xl_finish(d_cc *cc)
{
    if (!cc->xl_need) return;
    size_t nrows;
    const stable_row *rows = stable_rows(&nrows);
    /* helpers (state at entry probes), then clears: after every clause of the program, so
     * every clause on a probe sees the state before it is reset. The same clause twice (two
     * probes sharing a helper) is compiled once. */
    for (int pass = 0; pass < 2; pass++)
        for (size_t k = 0; k < nrows; k++) {
            const stable_row *r = &rows[k];
            if (!cc->xl_need[k] || (pass == 0) != !!r->helper) continue;
            const char *const *st = pass == 0 ? r->set : r->clear;
            const char *pred = pass == 0 ? r->pred : NULL;
            int dup = 0;
            for (size_t j = 0; j < k && !dup; j++) {
                const stable_row *q = &rows[j];
                dup = cc->xl_need[j] && (pass == 0) == !!q->helper && !strcmp(q->under, r->under) &&
                      same_texts(pass == 0 ? q->set : q->clear, st) &&
                      (pass || (q->pred == NULL) == (pred == NULL)) && (pass || !pred || !strcmp(q->pred, pred));
            }
            if (!dup) own_clause(cc, r, pred, st, pass == 0 ? "state" : "reset");
        }
}

/* One row's variant; an error in it leaves srow and sprobe unset again */
static void variant(d_cc *cc, d_item *v, const stable_row *r, const d_pmatch *sp)
{
    jmp_buf jb, *outer = cc->jb;
    cc->jb = &jb;
    cc->srow = r;
    cc->sprobe = sp;
    if (!setjmp(jb)) {
        d_node *rp = r->pred ? d_xl_parse(cc, r->pred, v->line, v->col) : NULL;
        d_cg_clause(cc, v, rp);
    }
    cc->jb = outer;
    cc->srow = NULL;
    cc->sprobe = NULL;
}

void d_xl_clause(d_cc *cc, d_item *cl)
{
    d_cg_begin(cc);
    d_resolve_clause(cc, cl);
    int nstab = cc->nstab, open = 1, errs = cc->nerrors;
    if (!nstab) {
        d_cg_clause(cc, cl, NULL);
        return;
    }
    d_pmatch *stab = d_alloc(cc, (size_t)nstab * sizeof *stab);
    memcpy(stab, cc->stab, (size_t)nstab * sizeof *stab);
    /* every variant analyses its own copy: analysis rewrites the tree */
    d_node *pred0 = d_node_copy(cc, cl->pred), *body0 = d_node_copy(cc, cl->body);
    if (cc->npm) {
        d_cg_clause(cc, cl, NULL);
        open = 0;
    }
    size_t nrows;
    const stable_row *rows = stable_rows(&nrows);
    for (int s = 0; s < nstab && cc->nerrors == errs; s++) {
        size_t first = 0, nr = stable_find(stab[s].prov, stab[s].name, &first);
        int primary = 0;
        for (size_t k = first; k < first + nr && cc->nerrors == errs; k++) {
            const stable_row *r = &rows[k];
            if (r->helper || (r->fallback && primary)) continue;
            if (!open) {
                d_cg_begin(cc);
                open = 1;
            }
            char err[256] = "";
            if (d_resolve_desc(cc, r->under, err, sizeof err) <= 0) continue;
            primary += !r->fallback;
            need_state(cc, rows, nrows, first, nr, k);
            d_item v = *cl;
            v.pred = d_node_copy(cc, pred0);
            v.body = d_node_copy(cc, body0);
            cc->dcl->stable = probe_copy(cc, &stab[s]);
            variant(cc, &v, r, &stab[s]);
            open = 0;
        }
    }
    if (open && cc->nerrors == errs) { /* no row matched (the probe list never offers such a probe) */
        cl->pred = pred0;
        cl->body = body0;
        d_cg_clause(cc, cl, NULL);
    }
}
