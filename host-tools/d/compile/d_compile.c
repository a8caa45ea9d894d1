/* d_compile: the driver (see d_compile.h): the order of the passes, in compile(). The helpers
 * every pass uses (arena, errors, options) are util.c's. */
#include "d_int.h"
#include <stdlib.h>
#include <string.h>

/* ---- the driver ---- */
static void index_lines(d_cc *cc)
{
    int n = 1;
    for (size_t i = 0; i < cc->len; i++)
        if (cc->src[i] == '\n') n++;
    cc->lines = d_alloc(cc, (size_t)n * sizeof *cc->lines);
    cc->nlines = 0;
    cc->lines[cc->nlines++] = 0;
    for (size_t i = 0; i < cc->len; i++)
        if (cc->src[i] == '\n') cc->lines[cc->nlines++] = i + 1;
}

void d_ty_init(d_cc *cc);
void d_ty_free(d_cc *cc);

static void cc_free(d_cc *cc)
{
    d_image_free(cc);
    d_ty_free(cc);
    free(cc->vars);
    free(cc->aggs);
    free(cc->inls);
    free(cc->idents);
    free(cc->pm);
    free(cc->stab);
    free(cc->xlators);
    d_arena_free(cc);
    free(cc);
}

/* Everything after the setup, under the longjmp that gives up (too many errors, no memory). */
static int compile(d_cc *cc, const d_options *opt, dprog *out)
{
    if (setjmp(cc->top)) return -1;
    index_lines(cc);
    d_ty_init(cc);
    if (d_image_init(cc) < 0) d_nomem(cc);
    cc->macro_used = d_alloc(cc, (size_t)opt->nmacro_args + 1);
    for (int i = 0; i < opt->nxopts; i++) {
        const char *x = opt->xopts[i], *eq = strchr(x, '=');
        char *name = d_strndup(cc, x, eq ? (size_t)(eq - x) : strlen(x));
        d_setopt(cc, name, eq ? eq + 1 : NULL, 0, 0);
    }
    d_lex_init(cc, cc->src, cc->len);
    d_item *items = d_parse(cc);
    for (d_item *volatile it = items; it; it = it->next) {
        jmp_buf jb;
        cc->jb = &jb;
        if (setjmp(jb)) continue;
        if (it->kind == ITEM_DECL) d_sema_decl(cc, it);
        else d_xl_clause(cc, it);
    }
    {
        jmp_buf jb;
        cc->jb = &jb;
        if (!setjmp(jb)) d_xl_finish(cc);
    }
    /* clauses the program's own need after them (the io provider's wait-done) */
    const char *more = cc->nerrors ? NULL : d_xlate_implicit(cc);
    if (more) {
        d_lex_init(cc, more, strlen(more));
        d_item *extra = d_parse(cc);
        for (d_item *volatile it = extra; it; it = it->next) {
            jmp_buf jb;
            cc->jb = &jb;
            it->implicit = 1;
            if (setjmp(jb)) continue;
            d_xl_clause(cc, it);
        }
    }
    cc->jb = NULL;
    /* DTrace checks the last argument only: an unused one means a mistyped command line */
    int na = opt->nmacro_args;
    if (na > 0 && !cc->macro_used[na] && !cc->argref)
        d_error(cc, 0, 0, "extraneous argument '%s' ($%d is not referenced)", opt->macro_args[na - 1], na);
    if (!items && !cc->nerrors) d_error(cc, 0, 0, "empty D program translation unit");
    if (cc->nerrors) return -1;
    return d_image_build(cc, out);
}

int d_compile(const char *file, const char *src, size_t len, const d_options *opt, dprog *out)
{
    static const d_options none;
    if (!opt) opt = &none;
    memset(out, 0, sizeof *out);
    d_cc *cc = calloc(1, sizeof *cc);
    if (!cc) {
        fprintf(opt->err ? opt->err : stderr, "hvt: %s: out of memory\n", file ? file : "<program>");
        return -1;
    }
    cc->file = file ? file : "<program>";
    cc->src = src ? src : "";
    cc->len = src ? len : 0;
    cc->opt = opt;
    cc->btf = opt->btf;
    cc->err = opt->err ? opt->err : stderr;
    cc->max_errors = opt->max_errors > 0 ? opt->max_errors : 20;
    cc->strsize = 256; /* DTrace's default strsize */
    cc->stackframes = 20;
    cc->nspec = 1;     /* DTrace's default nspec (specsize 0: the hypervisor's, DTrace's 32k) */
    cc->ustackframes = 20;
    cc->destructive = opt->destructive;
    cc->zdefs = opt->allow_zero_matches;
    int rc = compile(cc, opt, out);
    cc_free(cc);
    if (rc < 0) dprog_free(out);
    return rc < 0 ? -1 : 0;
}

void dprog_free(dprog *p)
{
    if (!p) return;
    free(p->image);
    for (int i = 0; i < p->nclauses; i++) {
        d_clause *c = &p->clauses[i];
        free(c->where);
        for (int j = 0; j < c->nacts; j++) {
            free(c->acts[j].fmt);
            free(c->acts[j].args);
            free(c->acts[j].xaggs);
        }
        free(c->acts);
        free(c->stmt_pc);
        if (c->stable) {
            free(c->stable->prov);
            free(c->stable->mod);
            free(c->stable->func);
            free(c->stable->name);
            free(c->stable);
        }
    }
    free(p->clauses);
    for (int i = 0; i < p->naggs; i++) free(p->aggs[i].name);
    free(p->aggs);
    for (int i = 0; i < p->nprobes; i++) {
        free(p->probes[i].prov);
        free(p->probes[i].mod);
        free(p->probes[i].func);
        free(p->probes[i].name);
    }
    free(p->probes);
    for (int i = 0; i < p->nmacro_args; i++) free(p->macro_args[i]);
    free(p->macro_args);
    memset(p, 0, sizeof *p);
}
