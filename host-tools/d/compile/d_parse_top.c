/*
 * d_parse_top: statements (expression statements, if/else, blocks; ';' separates them and the
 * last may go without) and the top level: clauses and declarations in source order. A syntax
 * error is reported and the parser resynchronises at the next ';' or '}' (of a statement) or
 * after the item, so one run reports several.
 */
#include "d_int.h"
#include <string.h>

/* ---- statements ---- */
static d_node *parse_stmts(d_cc *cc);

/* skip to the end of the statement in error: past ';' or up to '}' at this level */
static void skip_stmt(d_cc *cc)
{
    int depth = 0;
    for (;;) {
        int k = d_peek(cc, 0)->kind;
        if (k == TK_EOF) return;
        if (k == TK_RBRACE && depth-- == 0) return;
        if (k == TK_LBRACE) depth++;
        d_next(cc);
        if (k == TK_SEMI && depth == 0) return;
    }
}

static d_node *parse_block_or_stmt(d_cc *cc);

static d_node *parse_if(d_cc *cc)
{
    d_tok t = d_next(cc);
    d_node *n = d_node_new(cc, S_IF, t.line, t.col);
    d_expect(cc, TK_LPAR, "'(' after if");
    n->a = d_parse_expr(cc);
    d_depth_check(cc, n->a);
    d_expect(cc, TK_RPAR, "')'");
    n->b = parse_block_or_stmt(cc);
    if (d_peek(cc, 0)->kind == TK_ELSE) {
        d_next(cc);
        n->c = parse_block_or_stmt(cc);
    }
    return n;
}

static d_node *parse_block_or_stmt1(d_cc *cc);
static d_node *parse_block_or_stmt(d_cc *cc)
{
    const d_tok *t = d_peek(cc, 0);
    if (++cc->lx.depth > D_MAX_DEPTH) d_fail(cc, t->line, t->col, "statements nested too deeply (more than %d levels)", D_MAX_DEPTH);
    d_node *n = parse_block_or_stmt1(cc);
    cc->lx.depth--;
    return n;
}

static d_node *parse_block_or_stmt1(d_cc *cc)
{
    d_tok t = *d_peek(cc, 0);
    d_node *n;
    if (t.kind == TK_LBRACE) {
        d_next(cc);
        n = d_node_new(cc, S_BLOCK, t.line, t.col);
        n->a = parse_stmts(cc);
        d_expect(cc, TK_RBRACE, "'}'");
        return n;
    }
    if (t.kind == TK_IF) return parse_if(cc);
    n = d_node_new(cc, S_EXPR, t.line, t.col);
    n->a = d_parse_expr(cc);
    d_depth_check(cc, n->a);
    const d_tok *e = d_peek(cc, 0);
    if (e->kind == TK_SEMI) d_next(cc);
    else if (e->kind != TK_RBRACE) d_syntax(cc, e, "';'");
    return n;
}

static d_node *parse_stmts(d_cc *cc)
{
    d_node *head = NULL, **volatile tail = &head;
    jmp_buf *outer = cc->jb;
    for (;;) {
        const d_tok *t = d_peek(cc, 0);
        if (t->kind == TK_RBRACE || t->kind == TK_EOF) break;
        if (t->kind == TK_SEMI) {
            d_next(cc);
            continue;
        }
        jmp_buf jb;
        const int depth = cc->lx.depth; /* where this statement starts: restored on an error */
        cc->jb = &jb;
        if (setjmp(jb)) {
            cc->lx.depth = depth;
            skip_stmt(cc);
            continue;
        }
        d_node *s = parse_block_or_stmt(cc);
        *tail = s;
        tail = &s->next;
    }
    cc->jb = outer;
    return head;
}

/* ---- top level ---- */
static d_item *parse_clause(d_cc *cc)
{
    d_item *it = d_alloc(cc, sizeof *it);
    it->kind = ITEM_CLAUSE;
    d_pdesc **tail = &it->descs;
    size_t wlen = 0;
    for (;;) {
        d_tok t = d_expect(cc, TK_PSPEC, "a probe description");
        if (!it->line) it->line = t.line, it->col = t.col;
        d_pdesc *p = d_alloc(cc, sizeof *p);
        p->text = t.text;
        p->line = t.line;
        p->col = t.col;
        *tail = p;
        tail = &p->next;
        wlen += t.len + 1;
        if (d_peek(cc, 0)->kind != TK_COMMA) break;
        d_next(cc);
    }
    it->where = d_alloc(cc, wlen + 1);
    for (d_pdesc *p = it->descs; p; p = p->next) {
        if (p != it->descs) strcat(it->where, ",");
        strcat(it->where, p->text);
    }
    const d_tok *t = d_peek(cc, 0);
    if (t->kind == TK_DIV) {
        d_next(cc);
        d_lex_set_top(cc, 0);
        it->pred = d_parse_expr(cc);
        d_depth_check(cc, it->pred);
        d_expect(cc, TK_EPRED, "'/' to close the predicate");
        t = d_peek(cc, 0);
        if (t->kind != TK_LBRACE) d_syntax(cc, t, "'{'");
    }
    if (t->kind != TK_LBRACE) {
        /* descriptions alone: DTrace takes them (dtrace -n BEGIN), with the default action */
        if (t->kind == TK_EOF || t->kind == TK_PSPEC) return it;
        d_syntax(cc, t, "',', '/' or '{'");
    }
    d_next(cc);
    d_lex_set_top(cc, 0);
    it->body = parse_stmts(cc);
    d_expect(cc, TK_RBRACE, "'}'");
    return it;
}

static d_item *decl_item(d_cc *cc, int dclass, const d_tok *t)
{
    d_item *it = d_alloc(cc, sizeof *it);
    it->kind = ITEM_DECL;
    it->dclass = dclass;
    it->line = t->line;
    it->col = t->col;
    it->name = t->text;
    d_ident_add(cc, t->text);
    return it;
}

/* translator OUT < IN_TYPE NAME > { MEMBER = EXPR; ... }; (DTrace's syntax). OUT is struct or
 * union NAME, or a name: a type of its own that the translators to it define (hvtrace has no
 * struct definitions), never a type that exists already. Each member's expression is parsed
 * now (syntax errors here) and kept as the lexer's state where it begins: it is parsed again
 * and analysed at each use, with NAME standing for the input. Adds no item. */
static d_item *parse_translator(d_cc *cc)
{
    d_next(cc);                            /* translator */
    cc->xl_body = -1;                      /* (a failure skips its braces and its ';') */
    const d_tok *t = d_peek(cc, 0);
    int tag = 0;
    d_tok nm;
    if (t->kind == TK_STRUCT || t->kind == TK_UNION) {
        tag = t->kind;
        d_next(cc);
        nm = d_member_name(cc);
    } else if (t->kind == TK_IDENT) {
        nm = d_next(cc);
    } else {
        d_syntax(cc, t, "the translator's output type (struct NAME or a name)");
    }
    int out = tag ? d_ty_lookup_tag(cc, tag, nm.text) : d_ty_lookup(cc, nm.text);
    int own = -1;
    for (int i = 0; i < cc->nxlators && own < 0; i++)
        if (cc->xlators[i].out == out) own = i;
    if (out >= 0 && own < 0)
        d_fail(cc, nm.line, nm.col, "%s%s%s is already a type: a translator's output type is its own, defined by its "
               "translators (hvtrace has no struct definitions)", tag ? d_tok_name(tag) : "", tag ? " " : "", nm.text);
    d_expect(cc, TK_LT, "'<' and the translator's input type");
    int in = d_parse_type_name(cc);
    d_tok pn = d_expect(cc, TK_IDENT, "the translator's input name");
    d_expect(cc, TK_GT, "'>'");
    for (int i = 0; i < cc->nxlators; i++)
        if (cc->xlators[i].out == out && out >= 0 && cc->xlators[i].in_ty == in)
            d_fail(cc, nm.line, nm.col, "a translator to %s from %s is declared already (line %d)", nm.text,
                   d_ty_str(cc, in), cc->xlators[i].line);
    d_expect(cc, TK_LBRACE, "'{'");
    cc->xl_body = 1;
    d_xlator x = {.out = out, .tag = tag, .outname = nm.text, .in_ty = in, .param = pn.text,
                  .line = nm.line, .col = nm.col};
    int cap = 0;
    while (d_peek(cc, 0)->kind != TK_RBRACE) {
        d_tok m = d_member_name(cc);
        for (int i = 0; i < x.nmem; i++)
            if (!strcmp(x.mem[i].name, m.text))
                d_fail(cc, m.line, m.col, "translator member %s is defined twice (line %d)", m.text, x.mem[i].line);
        d_expect(cc, TK_ASGN, "'='");
        d_lexer at = cc->lx;               /* the expression's first token is next */
        d_node *e = d_parse_assign(cc);
        d_depth_check(cc, e);
        d_expect(cc, TK_SEMI, "';'");
        if (x.nmem == cap) {               /* (the arena's: a failure frees it with the rest) */
            cap = cap ? cap * 2 : 8;
            d_xlmem *nm2 = d_alloc(cc, (size_t)cap * sizeof *nm2);
            if (x.nmem) memcpy(nm2, x.mem, (size_t)x.nmem * sizeof *nm2);
            x.mem = nm2;
        }
        x.mem[x.nmem++] = (d_xlmem){m.text, at, m.line, m.col};
    }
    d_next(cc);
    cc->xl_body = 0;
    d_expect(cc, TK_SEMI, "';' after the translator");
    if (out < 0) {                         /* the first translator to this type makes it */
        size_t n = strlen(nm.text) + 8;
        char *disp = d_alloc(cc, n);
        snprintf(disp, n, "%s%s%s", tag == TK_STRUCT ? "struct " : tag == TK_UNION ? "union " : "", "", nm.text);
        x.out = d_ty_xl(cc, disp, D_XL_USER + (uint32_t)cc->nxlators);
    }
    cc->xlators = d_grow(cc, cc->xlators, &cc->capxlators, cc->nxlators + 1, sizeof *cc->xlators);
    cc->xlators[cc->nxlators++] = x;
    return NULL;
}

static d_item *parse_decl(d_cc *cc)
{
    d_tok first = *d_peek(cc, 0);
    if (first.kind == TK_RESERVED && !strcmp(first.text, "translator"))
        return parse_translator(cc);
    if (first.kind == TK_TYPEDEF || first.kind == TK_RESERVED)
        d_fail(cc, first.line, first.col, "%s declarations are not supported", first.text);
    if (first.kind == TK_INLINE) {
        d_next(cc);
        int ty = d_parse_type_name(cc);
        d_tok nm = d_expect(cc, TK_IDENT, "a name");
        d_item *it = decl_item(cc, TK_INLINE, &nm);
        it->ty = ty;
        d_expect(cc, TK_ASGN, "'='");
        it->init = d_parse_assign(cc);
        d_depth_check(cc, it->init);
        d_expect(cc, TK_SEMI, "';'");
        return it;
    }
    int dclass = 0;
    if (first.kind == TK_SELF || first.kind == TK_THIS) {
        dclass = first.kind;
        d_next(cc);
    }
    /* `self x;`, `this x;`: a declaration with no type is an int, as in DTrace */
    const d_tok *t0 = d_peek(cc, 0);
    int untyped = dclass && t0->kind == TK_IDENT && !d_is_type_start(cc, t0) &&
                  (d_peek(cc, 1)->kind == TK_SEMI || d_peek(cc, 1)->kind == TK_COMMA);
    int base = untyped ? cc->t_int : d_parse_type_spec(cc);
    d_item *head = NULL, **tail = &head;
    for (;;) {
        int ty = d_parse_ptrs(cc, base);
        d_tok nm = d_expect(cc, TK_IDENT, "a variable name");
        d_item *it = decl_item(cc, dclass, &nm);
        it->ty = ty;
        if (d_peek(cc, 0)->kind == TK_LBRAC) {
            d_next(cc);
            const d_tok *k0 = d_peek(cc, 0);
            if (k0->kind == TK_RBRAC)
                d_fail(cc, k0->line, k0->col, "array declaration requires array dimension or tuple signature: %s",
                       it->name);
            if (!d_is_type_start(cc, k0)) {
                /* a scalar array: its dimension a constant expression (sema folds it) */
                it->dim = d_parse_assign(cc);
                d_depth_check(cc, it->dim);
                d_expect(cc, TK_RBRAC, "']'");
                goto next;
            }
            for (;;) {
                const d_tok *k = d_peek(cc, 0);
                if (it->nkeys == HVT_DIF_TUPLE_MAX)
                    d_fail(cc, k->line, k->col, "an associative array has at most %d keys", HVT_DIF_TUPLE_MAX);
                it->keys[it->nkeys++] = d_parse_type_name(cc);
                if (d_peek(cc, 0)->kind != TK_COMMA) break;
                d_next(cc);
            }
            d_expect(cc, TK_RBRAC, "']'");
        }
    next:
        *tail = it;
        tail = &it->next;
        if (d_peek(cc, 0)->kind != TK_COMMA) break;
        d_next(cc);
    }
    d_expect(cc, TK_SEMI, "';'");
    return head;
}

/* After an error: past the item's end. depth: the braces open where it failed; in a
 * translator (its head: -1, its body: 1) the ';' after its closing brace is skipped too. */
static void skip_item(d_cc *cc, int depth)
{
    d_lex_set_top(cc, 0);
    int tr = depth != 0;
    if (depth < 0) depth = 0;
    for (;;) {
        int k = d_peek(cc, 0)->kind;
        if (k == TK_EOF) return;
        d_next(cc);
        if (k == TK_LBRACE) depth++;
        if (k == TK_RBRACE && --depth <= 0) {
            if (tr && d_peek(cc, 0)->kind == TK_SEMI) d_next(cc);
            return;
        }
        if (k == TK_SEMI && depth == 0) return;
    }
}

d_item *d_parse(d_cc *cc)
{
    d_item *head = NULL, **volatile tail = &head;
    for (;;) {
        d_lex_set_top(cc, 1);
        const d_tok *t = d_peek(cc, 0);
        if (t->kind == TK_EOF) break;
        jmp_buf jb;
        cc->jb = &jb;
        if (setjmp(jb)) {
            cc->lx.depth = 0;
            skip_item(cc, cc->xl_body);
            cc->xl_body = 0;
            continue;
        }
        d_item *it;
        if (t->kind == TK_PSPEC) it = parse_clause(cc);
        else if (t->kind == TK_IDENT || d_is_kw(t->kind)) {
            d_lex_set_top(cc, 0);
            it = parse_decl(cc);
        } else
            d_syntax(cc, t, "a probe description or a declaration");
        *tail = it;
        while (*tail) tail = &(*tail)->next;
    }
    cc->jb = NULL;
    return head;
}
