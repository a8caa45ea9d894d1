/*
 * d_parse: D's grammar by recursive descent, C's precedence by climbing (DTrace's table:
 * assignments, ?:, ||, ^^, &&, |, ^, &, equality, relational, shifts, additive,
 * multiplicative, unary and casts, postfix). A program is a list of top-level items kept in
 * source order: clauses (descriptions, optional /predicate/, { statements }) and
 * declarations (int x; self string s; this int t; int a[string, int]; inline int N = 5;).
 * Statements and the top level are in d_parse_top.c.
 */
#include "d_int.h"
#include <stdlib.h>
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
    d_node *head = NULL, **tail = &head;
    for (; n; n = n->next) { /* lists iterate; only the tree's depth recurses */
        d_node *c = d_alloc(cc, sizeof *c);
        *c = *n;
        c->a = d_node_copy(cc, n->a);
        c->b = d_node_copy(cc, n->b);
        c->c = d_node_copy(cc, n->c);
        c->next = NULL;
        *tail = c;
        tail = &c->next;
    }
    return head;
}

_Noreturn void d_syntax(d_cc *cc, const d_tok *t, const char *expected)
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

d_tok d_expect(d_cc *cc, int kind, const char *what)
{
    const d_tok *t = d_peek(cc, 0);
    if (t->kind != kind) d_syntax(cc, t, what);
    return d_next(cc);
}

int d_is_kw(int k) { return k >= TK_SIZEOF && k <= TK_RESERVED; }

/* a member or variable name after -> and . (keywords are plain names there, as in DTrace) */
d_tok d_member_name(d_cc *cc)
{
    const d_tok *t = d_peek(cc, 0);
    if (t->kind != TK_IDENT && !(d_is_kw(t->kind) && t->text)) d_syntax(cc, t, "a member name");
    return d_next(cc);
}

/* ---- type names ---- */
static int is_type_name(d_cc *cc, const d_tok *t)
{
    if (t->kind != TK_IDENT || d_ident_seen(cc, t->text) || d_inline_find(cc, t->text)) return 0;
    return d_ty_lookup(cc, t->text) >= 0;
}

int d_is_type_start(d_cc *cc, const d_tok *t)
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
int d_parse_type_spec(d_cc *cc)
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
            if (base || tid >= 0) d_syntax(cc, t, NULL);
            base = t->kind;
            d_next(cc);
            continue;
        case TK_STRUCT: case TK_UNION: case TK_ENUM: {
            if (base || tid >= 0 || sign || shorts || longs) d_syntax(cc, t, NULL);
            int k = t->kind;
            d_next(cc);
            d_tok nm = d_member_name(cc);
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
    if (!any && tid < 0) d_syntax(cc, t, "a type name");
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

int d_parse_ptrs(d_cc *cc, int tid)
{
    for (;;) {
        int k = d_peek(cc, 0)->kind;
        if (k == TK_MUL) tid = d_ty_ptr(cc, tid);
        else if (k != TK_CONST && k != TK_VOLATILE && k != TK_RESTRICT) return tid;
        d_next(cc);
    }
}

int d_parse_type_name(d_cc *cc) { return d_parse_ptrs(cc, d_parse_type_spec(cc)); }

/* ---- expressions ---- */
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
        *tail = d_parse_assign(cc);
        tail = &(*tail)->next;
        const d_tok *t = d_peek(cc, 0);
        if (t->kind == TK_COMMA) {
            d_next(cc);
            continue;
        }
        if (t->kind != close) d_syntax(cc, t, what);
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
        d_expect(cc, TK_ARROW, t.kind == TK_SELF ? "-> after self" : "-> after this");
        d_tok m = d_member_name(cc);
        n = d_node_new(cc, t.kind == TK_SELF ? N_SELF : N_THIS, t.line, t.col);
        n->str = m.text;
        return n;
    }
    case TK_LPAR:
        n = d_parse_expr(cc);
        d_expect(cc, TK_RPAR, "')'");
        return n;
    case TK_RESERVED:
        if (t.text && !strcmp(t.text, "xlate")) {   /* xlate < type > ( expr ) */
            d_expect(cc, TK_LT, "'<' and the type to translate to");
            n = d_node_new(cc, N_XLATE, t.line, t.col);
            n->ty = d_parse_type_name(cc);
            d_expect(cc, TK_GT, "'>'");
            d_expect(cc, TK_LPAR, "'('");
            n->a = d_parse_expr(cc);
            d_expect(cc, TK_RPAR, "')'");
            return n;
        }
        d_syntax(cc, &t, NULL);
    case TK_OFFSETOF: {
        d_expect(cc, TK_LPAR, "'('");
        n = d_node_new(cc, N_OFFSETOF, t.line, t.col);
        n->ty = d_parse_type_name(cc);
        d_expect(cc, TK_COMMA, "','");
        d_tok m = d_member_name(cc);
        n->str = m.text;
        d_expect(cc, TK_RPAR, "')'");
        return n;
    }
    default:
        d_syntax(cc, &t, NULL);
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
            if (n->kind != N_IDENT) d_syntax(cc, &t, NULL);
            d_next(cc);
            m = d_node_new(cc, N_CALL, n->line, n->col);
            m->str = n->str;
            m->b = parse_args(cc, TK_RPAR, "',' or ')'");
            n = m;
            break;
        case TK_DOT: case TK_ARROW: {
            d_next(cc);
            d_tok nm = d_member_name(cc);
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

/* Every recursion of the grammar passes here or through d_parse_assign: bound it. */
static void enter(d_cc *cc)
{
    if (++cc->lx.depth > D_MAX_DEPTH) {
        const d_tok *t = d_peek(cc, 0);
        d_fail(cc, t->line, t->col, "expression nested too deeply (more than %d levels)", D_MAX_DEPTH);
    }
}

static d_node *parse_unary1(d_cc *cc);
static d_node *parse_unary(d_cc *cc)
{
    enter(cc);
    d_node *n = parse_unary1(cc);
    cc->lx.depth--;
    return n;
}

static d_node *parse_unary1(d_cc *cc)
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
        if (d_peek(cc, 0)->kind == TK_LPAR && d_is_type_start(cc, d_peek(cc, 1))) {
            d_next(cc);
            n->ty = d_parse_type_name(cc);
            d_expect(cc, TK_RPAR, "')'");
        } else
            n->a = parse_unary(cc);
        return n;
    case TK_STRINGOF:
        d_next(cc);
        n = d_node_new(cc, N_STRINGOF, t.line, t.col);
        n->a = parse_unary(cc);
        return n;
    case TK_LPAR:
        if (d_is_type_start(cc, d_peek(cc, 1))) {
            d_next(cc);
            n = d_node_new(cc, N_CAST, t.line, t.col);
            n->ty = d_parse_type_name(cc);
            d_expect(cc, TK_RPAR, "')'");
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
    enter(cc);
    d_node *n = d_node_new(cc, N_COND, t.line, t.col);
    n->a = c;
    n->b = d_parse_expr(cc);
    d_expect(cc, TK_COLON, "':'");
    n->c = parse_cond(cc);
    cc->lx.depth--;
    return n;
}

d_node *d_parse_assign(d_cc *cc)
{
    enter(cc);
    d_node *l = parse_cond(cc);
    d_tok t = *d_peek(cc, 0);
    if (is_assign_op(t.kind)) {
        d_next(cc);
        d_node *n = d_node_new(cc, N_ASSIGN, t.line, t.col);
        n->op = t.kind;
        n->a = l;
        n->b = d_parse_assign(cc);
        l = n;
    }
    cc->lx.depth--;
    return l;
}

void d_depth_check(d_cc *cc, const d_node *root)
{
    /* iterative: the check must not itself recurse as deep as what it refuses */
    struct { const d_node *n; int d; } *st = NULL;
    int sp = 0, cap = 0;
    if (root) {
        st = d_grow(cc, st, &cap, 1, sizeof *st);
        st[sp++].n = root, st[0].d = 1;
    }
    while (sp) {
        const d_node *n = st[--sp].n;
        int d = st[sp].d;
        if (d > D_MAX_DEPTH) {
            free(st);
            d_fail(cc, n->line, n->col, "expression nested too deeply (more than %d levels)", D_MAX_DEPTH);
        }
        const d_node *kids[4] = {n->a, n->b, n->c, n->next};
        for (int i = 0; i < 4; i++) {
            if (!kids[i]) continue;
            st = d_grow(cc, st, &cap, sp + 1, sizeof *st);
            st[sp].n = kids[i];
            st[sp++].d = i == 3 ? d : d + 1;
        }
    }
    free(st);
}

d_node *d_parse_expr(d_cc *cc)
{
    d_node *l = d_parse_assign(cc);
    for (;;) {
        d_tok t = *d_peek(cc, 0);
        if (t.kind != TK_COMMA) return l;
        d_next(cc);
        d_node *n = d_node_new(cc, N_BIN, t.line, t.col);
        n->op = TK_COMMA;
        n->a = l;
        n->b = d_parse_assign(cc);
        l = n;
    }
}

