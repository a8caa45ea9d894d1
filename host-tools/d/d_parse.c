/*
 * d_parse: D's grammar by recursive descent, C's precedence by climbing (DTrace's table:
 * assignments, ?:, ||, ^^, &&, |, ^, &, equality, relational, shifts, additive,
 * multiplicative, unary and casts, postfix). A program is a list of top-level items kept in
 * source order: clauses (descriptions, optional /predicate/, { statements }) and
 * declarations (int x; self string s; this int t; int a[string, int]; inline int N = 5;).
 * Syntax errors are reported and the parser resynchronises at the next ';' or '}', so one
 * run reports several.
 */
#include "d_int.h"
#include <string.h>

d_node *d_node_new(d_cc *cc, int kind, int line, int col)
{
    d_node *n = d_alloc(cc, sizeof *n);
    n->kind = (uint8_t)kind;
    n->line = line;
    n->col = col;
    n->ty = -1;
    return n;
}

const d_node *d_node_start(const d_node *n)
{
    for (;;) {
        switch (n->kind) {
        case N_BIN: case N_ASSIGN: case N_COND: case N_DOT: case N_ARROW: case N_INDEX: case N_POST: case N_TOSTR:
            if (n->a && (n->a->line < n->line || (n->a->line == n->line && n->a->col < n->col))) {
                n = n->a;
                continue;
            }
            return n;
        default:
            return n;
        }
    }
}

d_node *d_node_copy(d_cc *cc, const d_node *n)
{
    if (!n) return NULL;
    d_node *c = d_alloc(cc, sizeof *c);
    *c = *n;
    c->a = d_node_copy(cc, n->a);
    c->b = d_node_copy(cc, n->b);
    c->c = d_node_copy(cc, n->c);
    c->next = d_node_copy(cc, n->next);
    return c;
}

static _Noreturn void syntax(d_cc *cc, const d_tok *t, const char *expected)
{
    char near[64];
    if (t->kind == TK_EOF && cc->lx.eof_error) /* already reported: the input ended early */
        longjmp(cc->jb ? *cc->jb : cc->top, 1);
    if (t->kind == TK_EOF) snprintf(near, sizeof near, "end of input");
    else {
        size_t n = t->end > t->off ? t->end - t->off : 1;
        snprintf(near, sizeof near, "\"%.*s\"", (int)(n > 40 ? 40 : n), cc->src + t->off);
    }
    if (expected) d_fail(cc, t->line, t->col, "syntax error near %s: expected %s", near, expected);
    d_fail(cc, t->line, t->col, "syntax error near %s", near);
}

static d_tok expect(d_cc *cc, int kind, const char *what)
{
    const d_tok *t = d_peek(cc, 0);
    if (t->kind != kind) syntax(cc, t, what);
    return d_next(cc);
}

static int is_kw(int k) { return k >= TK_SIZEOF && k <= TK_RESERVED; }

/* a member or variable name after -> and . (keywords are plain names there, as in DTrace) */
static d_tok member_name(d_cc *cc)
{
    const d_tok *t = d_peek(cc, 0);
    if (t->kind != TK_IDENT && !(is_kw(t->kind) && t->text)) syntax(cc, t, "a member name");
    return d_next(cc);
}

/* ---- type names ---- */
static int is_type_name(d_cc *cc, const d_tok *t)
{
    if (t->kind != TK_IDENT || d_ident_seen(cc, t->text) || d_inline_find(cc, t->text)) return 0;
    return d_ty_lookup(cc, t->text) >= 0;
}

static int is_type_start(d_cc *cc, const d_tok *t)
{
    switch (t->kind) {
    case TK_CONST: case TK_VOLATILE: case TK_RESTRICT: case TK_SIGNED: case TK_UNSIGNED: case TK_CHAR:
    case TK_SHORT: case TK_INT_KW: case TK_LONG: case TK_VOID: case TK_STRING: case TK_STRUCT: case TK_UNION:
    case TK_ENUM: case TK_FLOAT: case TK_DOUBLE:
        return 1;
    default:
        return is_type_name(cc, t);
    }
}

/* declaration specifiers: the base type */
static int parse_type_spec(d_cc *cc)
{
    const d_tok *t = d_peek(cc, 0);
    int line = t->line, col = t->col;
    int sign = 0, shorts = 0, longs = 0, base = 0, tid = -1, any = 0;
    for (;; any = 1) {
        t = d_peek(cc, 0);
        switch (t->kind) {
        case TK_CONST: case TK_VOLATILE: case TK_RESTRICT: d_next(cc); continue;
        case TK_SIGNED: sign = 1; d_next(cc); continue;
        case TK_UNSIGNED: sign = 2; d_next(cc); continue;
        case TK_SHORT: shorts++; d_next(cc); continue;
        case TK_LONG: longs++; d_next(cc); continue;
        case TK_CHAR: case TK_INT_KW: case TK_VOID: case TK_STRING: case TK_FLOAT: case TK_DOUBLE:
            if (base || tid >= 0) syntax(cc, t, NULL);
            base = t->kind;
            d_next(cc);
            continue;
        case TK_STRUCT: case TK_UNION: case TK_ENUM: {
            if (base || tid >= 0 || sign || shorts || longs) syntax(cc, t, NULL);
            int k = t->kind;
            d_next(cc);
            d_tok nm = member_name(cc);
            if (d_peek(cc, 0)->kind == TK_LBRACE)
                d_fail(cc, nm.line, nm.col, "struct, union and enum definitions are not supported");
            tid = d_ty_lookup_tag(cc, k, nm.text);
            if (tid < 0)
                d_fail(cc, nm.line, nm.col, "failed to resolve type %s %s: %s", d_tok_name(k), nm.text,
                       cc->btf ? "Unknown type name" : "no kernel type information (BTF) was given");
            continue;
        }
        case TK_IDENT:
            if (!base && tid < 0 && !sign && !shorts && !longs && is_type_name(cc, t)) {
                tid = d_ty_lookup(cc, t->text);
                d_next(cc);
                continue;
            }
            break;
        default: break;
        }
        break;
    }
    if (!any && tid < 0) syntax(cc, t, "a type name");
    if (tid >= 0) return tid;
    if (base == TK_FLOAT || base == TK_DOUBLE) d_fail(cc, line, col, "floating-point types are not supported");
    if (base == TK_VOID || base == TK_STRING) {
        if (sign || shorts || longs) d_fail(cc, line, col, "invalid type combination");
        return base == TK_VOID ? cc->t_void : cc->t_str;
    }
    if (base == TK_CHAR) {
        if (shorts || longs) d_fail(cc, line, col, "invalid type combination");
        return sign == 2 ? cc->t_uchar : sign == 1 ? d_ty_int(cc, 1, 0, "signed char") : cc->t_char;
    }
    if (shorts > 1 || longs > 2 || (shorts && longs)) d_fail(cc, line, col, "invalid type combination");
    if (shorts) return sign == 2 ? cc->t_ushort : cc->t_short;
    if (longs == 2) return d_ty_int(cc, 8, sign == 2, sign == 2 ? "unsigned long long" : "long long");
    if (longs) return sign == 2 ? cc->t_ulong : cc->t_long;
    return sign == 2 ? cc->t_uint : cc->t_int;
}

static int parse_ptrs(d_cc *cc, int tid)
{
    for (;;) {
        int k = d_peek(cc, 0)->kind;
        if (k == TK_MUL) tid = d_ty_ptr(cc, tid);
        else if (k != TK_CONST && k != TK_VOLATILE && k != TK_RESTRICT) return tid;
        d_next(cc);
    }
}

static int parse_type_name(d_cc *cc) { return parse_ptrs(cc, parse_type_spec(cc)); }

/* ---- expressions ---- */
static d_node *parse_expr(d_cc *cc);
static d_node *parse_assign(d_cc *cc);
static d_node *parse_unary(d_cc *cc);

static int binprec(int k)
{
    switch (k) {
    case TK_LOR: return 1;
    case TK_LXOR: return 2;
    case TK_LAND: return 3;
    case TK_BOR: return 4;
    case TK_XOR: return 5;
    case TK_BAND: return 6;
    case TK_EQ: case TK_NE: return 7;
    case TK_LT: case TK_LE: case TK_GT: case TK_GE: return 8;
    case TK_LSH: case TK_RSH: return 9;
    case TK_ADD: case TK_SUB: return 10;
    case TK_MUL: case TK_DIV: case TK_MOD: return 11;
    default: return 0;
    }
}

static int is_assign_op(int k) { return k >= TK_ASGN && k <= TK_RSH_EQ; }

static d_node *parse_args(d_cc *cc, int close, const char *what)
{
    d_node *head = NULL, **tail = &head;
    if (d_peek(cc, 0)->kind == close) {
        d_next(cc);
        return NULL;
    }
    for (;;) {
        *tail = parse_assign(cc);
        tail = &(*tail)->next;
        const d_tok *t = d_peek(cc, 0);
        if (t->kind == TK_COMMA) {
            d_next(cc);
            continue;
        }
        if (t->kind != close) syntax(cc, t, what);
        d_next(cc);
        return head;
    }
}

static d_node *parse_primary(d_cc *cc)
{
    d_tok t = d_next(cc);
    d_node *n;
    switch (t.kind) {
    case TK_INT:
        n = d_node_new(cc, N_INT, t.line, t.col);
        n->ival = t.ival;
        n->ty = t.ity;
        return n;
    case TK_STR:
        n = d_node_new(cc, N_STR, t.line, t.col);
        n->str = t.text;
        n->slen = t.len;
        return n;
    case TK_IDENT: {
        n = d_node_new(cc, N_IDENT, t.line, t.col);
        n->str = t.text;
        /* DTrace's rule: a name followed by an assignment or [ is a variable, not a type */
        int k = d_peek(cc, 0)->kind;
        if (k == TK_LBRAC || k == TK_INC || k == TK_DEC || is_assign_op(k)) d_ident_add(cc, t.text);
        return n;
    }
    case TK_AGG:
        n = d_node_new(cc, N_AGG, t.line, t.col);
        n->str = t.text;
        return n;
    case TK_SELF: case TK_THIS: {
        expect(cc, TK_ARROW, t.kind == TK_SELF ? "-> after self" : "-> after this");
        d_tok m = member_name(cc);
        n = d_node_new(cc, t.kind == TK_SELF ? N_SELF : N_THIS, t.line, t.col);
        n->str = m.text;
        return n;
    }
    case TK_LPAR:
        n = parse_expr(cc);
        expect(cc, TK_RPAR, "')'");
        return n;
    case TK_OFFSETOF: {
        expect(cc, TK_LPAR, "'('");
        n = d_node_new(cc, N_OFFSETOF, t.line, t.col);
        n->ty = parse_type_name(cc);
        expect(cc, TK_COMMA, "','");
        d_tok m = member_name(cc);
        n->str = m.text;
        expect(cc, TK_RPAR, "')'");
        return n;
    }
    default:
        syntax(cc, &t, NULL);
    }
}

static d_node *parse_postfix(d_cc *cc)
{
    d_node *n = parse_primary(cc);
    for (;;) {
        d_tok t = *d_peek(cc, 0);
        d_node *m;
        switch (t.kind) {
        case TK_LBRAC:
            d_next(cc);
            m = d_node_new(cc, N_INDEX, t.line, t.col);
            m->a = n;
            m->b = parse_args(cc, TK_RBRAC, "',' or ']'");
            if (!m->b) d_fail(cc, t.line, t.col, "syntax error near \"]\": an index is required");
            n = m;
            break;
        case TK_LPAR:
            if (n->kind != N_IDENT) syntax(cc, &t, NULL);
            d_next(cc);
            m = d_node_new(cc, N_CALL, n->line, n->col);
            m->str = n->str;
            m->b = parse_args(cc, TK_RPAR, "',' or ')'");
            n = m;
            break;
        case TK_DOT: case TK_ARROW: {
            d_next(cc);
            d_tok nm = member_name(cc);
            m = d_node_new(cc, t.kind == TK_DOT ? N_DOT : N_ARROW, t.line, t.col);
            m->a = n;
            m->str = nm.text;
            n = m;
            break;
        }
        case TK_INC: case TK_DEC:
            d_next(cc);
            m = d_node_new(cc, N_POST, t.line, t.col);
            m->op = t.kind;
            m->a = n;
            n = m;
            break;
        default:
            return n;
        }
    }
}

static d_node *parse_unary(d_cc *cc)
{
    d_tok t = *d_peek(cc, 0);
    d_node *n;
    switch (t.kind) {
    case TK_INC: case TK_DEC: case TK_BAND: case TK_MUL: case TK_ADD: case TK_SUB: case TK_BNEG: case TK_LNEG:
        d_next(cc);
        n = d_node_new(cc, N_UNARY, t.line, t.col);
        n->op = t.kind;
        n->a = parse_unary(cc);
        return n;
    case TK_SIZEOF:
        d_next(cc);
        n = d_node_new(cc, N_SIZEOF, t.line, t.col);
        if (d_peek(cc, 0)->kind == TK_LPAR && is_type_start(cc, d_peek(cc, 1))) {
            d_next(cc);
            n->ty = parse_type_name(cc);
            expect(cc, TK_RPAR, "')'");
        } else
            n->a = parse_unary(cc);
        return n;
    case TK_STRINGOF:
        d_next(cc);
        n = d_node_new(cc, N_STRINGOF, t.line, t.col);
        n->a = parse_unary(cc);
        return n;
    case TK_LPAR:
        if (is_type_start(cc, d_peek(cc, 1))) {
            d_next(cc);
            n = d_node_new(cc, N_CAST, t.line, t.col);
            n->ty = parse_type_name(cc);
            expect(cc, TK_RPAR, "')'");
            n->a = parse_unary(cc);
            return n;
        }
        return parse_postfix(cc);
    default:
        return parse_postfix(cc);
    }
}

static d_node *parse_bin(d_cc *cc, int minprec)
{
    d_node *l = parse_unary(cc);
    for (;;) {
        d_tok t = *d_peek(cc, 0);
        int p = binprec(t.kind);
        if (!p || p < minprec) return l;
        d_next(cc);
        d_node *n = d_node_new(cc, N_BIN, t.line, t.col);
        n->op = t.kind;
        n->a = l;
        n->b = parse_bin(cc, p + 1);
        l = n;
    }
}

static d_node *parse_cond(d_cc *cc)
{
    d_node *c = parse_bin(cc, 1);
    d_tok t = *d_peek(cc, 0);
    if (t.kind != TK_QUEST) return c;
    d_next(cc);
    d_node *n = d_node_new(cc, N_COND, t.line, t.col);
    n->a = c;
    n->b = parse_expr(cc);
    expect(cc, TK_COLON, "':'");
    n->c = parse_cond(cc);
    return n;
}

static d_node *parse_assign(d_cc *cc)
{
    d_node *l = parse_cond(cc);
    d_tok t = *d_peek(cc, 0);
    if (!is_assign_op(t.kind)) return l;
    d_next(cc);
    d_node *n = d_node_new(cc, N_ASSIGN, t.line, t.col);
    n->op = t.kind;
    n->a = l;
    n->b = parse_assign(cc);
    return n;
}

static d_node *parse_expr(d_cc *cc)
{
    d_node *l = parse_assign(cc);
    for (;;) {
        d_tok t = *d_peek(cc, 0);
        if (t.kind != TK_COMMA) return l;
        d_next(cc);
        d_node *n = d_node_new(cc, N_BIN, t.line, t.col);
        n->op = TK_COMMA;
        n->a = l;
        n->b = parse_assign(cc);
        l = n;
    }
}

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
    expect(cc, TK_LPAR, "'(' after if");
    n->a = parse_expr(cc);
    expect(cc, TK_RPAR, "')'");
    n->b = parse_block_or_stmt(cc);
    if (d_peek(cc, 0)->kind == TK_ELSE) {
        d_next(cc);
        n->c = parse_block_or_stmt(cc);
    }
    return n;
}

static d_node *parse_block_or_stmt(d_cc *cc)
{
    d_tok t = *d_peek(cc, 0);
    d_node *n;
    if (t.kind == TK_LBRACE) {
        d_next(cc);
        n = d_node_new(cc, S_BLOCK, t.line, t.col);
        n->a = parse_stmts(cc);
        expect(cc, TK_RBRACE, "'}'");
        return n;
    }
    if (t.kind == TK_IF) return parse_if(cc);
    n = d_node_new(cc, S_EXPR, t.line, t.col);
    n->a = parse_expr(cc);
    const d_tok *e = d_peek(cc, 0);
    if (e->kind == TK_SEMI) d_next(cc);
    else if (e->kind != TK_RBRACE) syntax(cc, e, "';'");
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
        cc->jb = &jb;
        if (setjmp(jb)) {
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
        d_tok t = expect(cc, TK_PSPEC, "a probe description");
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
        it->pred = parse_expr(cc);
        expect(cc, TK_EPRED, "'/' to close the predicate");
        t = d_peek(cc, 0);
        if (t->kind != TK_LBRACE) syntax(cc, t, "'{'");
    }
    if (t->kind != TK_LBRACE) {
        /* descriptions alone: DTrace takes them (dtrace -n BEGIN), with the default action */
        if (t->kind == TK_EOF || t->kind == TK_PSPEC) return it;
        syntax(cc, t, "',', '/' or '{'");
    }
    d_next(cc);
    d_lex_set_top(cc, 0);
    it->body = parse_stmts(cc);
    expect(cc, TK_RBRACE, "'}'");
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

static d_item *parse_decl(d_cc *cc)
{
    d_tok first = *d_peek(cc, 0);
    if (first.kind == TK_TYPEDEF || first.kind == TK_RESERVED)
        d_fail(cc, first.line, first.col, "%s declarations are not supported", first.text);
    if (first.kind == TK_INLINE) {
        d_next(cc);
        int ty = parse_type_name(cc);
        d_tok nm = expect(cc, TK_IDENT, "a name");
        d_item *it = decl_item(cc, TK_INLINE, &nm);
        it->ty = ty;
        expect(cc, TK_ASGN, "'='");
        it->init = parse_assign(cc);
        expect(cc, TK_SEMI, "';'");
        return it;
    }
    int dclass = 0;
    if (first.kind == TK_SELF || first.kind == TK_THIS) {
        dclass = first.kind;
        d_next(cc);
    }
    int base = parse_type_spec(cc);
    d_item *head = NULL, **tail = &head;
    for (;;) {
        int ty = parse_ptrs(cc, base);
        d_tok nm = expect(cc, TK_IDENT, "a variable name");
        d_item *it = decl_item(cc, dclass, &nm);
        it->ty = ty;
        if (d_peek(cc, 0)->kind == TK_LBRAC) {
            d_tok lb = d_next(cc);
            if (d_peek(cc, 0)->kind == TK_INT)
                d_fail(cc, lb.line, lb.col, "scalar arrays are not supported: declare an associative array");
            for (;;) {
                const d_tok *k = d_peek(cc, 0);
                if (it->nkeys == HVT_DIF_TUPLE_MAX)
                    d_fail(cc, k->line, k->col, "an associative array has at most %d keys", HVT_DIF_TUPLE_MAX);
                it->keys[it->nkeys++] = parse_type_name(cc);
                if (d_peek(cc, 0)->kind != TK_COMMA) break;
                d_next(cc);
            }
            expect(cc, TK_RBRAC, "']'");
        }
        *tail = it;
        tail = &it->next;
        if (d_peek(cc, 0)->kind != TK_COMMA) break;
        d_next(cc);
    }
    expect(cc, TK_SEMI, "';'");
    return head;
}

static void skip_item(d_cc *cc)
{
    d_lex_set_top(cc, 0);
    int depth = 0;
    for (;;) {
        int k = d_peek(cc, 0)->kind;
        if (k == TK_EOF) return;
        d_next(cc);
        if (k == TK_LBRACE) depth++;
        if (k == TK_RBRACE && --depth <= 0) return;
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
            skip_item(cc);
            continue;
        }
        d_item *it;
        if (t->kind == TK_PSPEC) it = parse_clause(cc);
        else if (t->kind == TK_IDENT || is_kw(t->kind)) {
            d_lex_set_top(cc, 0);
            it = parse_decl(cc);
        } else
            syntax(cc, t, "a probe description or a declaration");
        *tail = it;
        while (*tail) tail = &(*tail)->next;
    }
    cc->jb = NULL;
    return head;
}
