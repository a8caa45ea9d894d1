/*
 * d_lex: D's tokens, as DTrace's lexer makes them. Two modes: the outer scope, where a probe
 * specifier is one token ([-$:a-zA-Z_.?*\[\]!][-$:0-9a-zA-Z_.`?*\[\]!]*, with DTrace's escape
 * back to declarations when it is a type keyword or type name), and clause bodies (C tokens).
 * Control lines (#pragma D option, #!, #line) are handled here, wherever a line starts with #.
 * Macro arguments ($1, $$1, $target) are substituted here too, DTrace's way: $N is an integer
 * if its text is one, an identifier if it is one, else a string.
 */
#include "d_int.h"
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *s; int kind; } keywords[] = {
    {"sizeof", TK_SIZEOF}, {"stringof", TK_STRINGOF}, {"offsetof", TK_OFFSETOF}, {"self", TK_SELF},
    {"this", TK_THIS}, {"if", TK_IF}, {"else", TK_ELSE}, {"struct", TK_STRUCT}, {"union", TK_UNION},
    {"enum", TK_ENUM}, {"const", TK_CONST}, {"volatile", TK_VOLATILE}, {"restrict", TK_RESTRICT},
    {"signed", TK_SIGNED}, {"unsigned", TK_UNSIGNED}, {"char", TK_CHAR}, {"short", TK_SHORT},
    {"int", TK_INT_KW}, {"long", TK_LONG}, {"void", TK_VOID}, {"string", TK_STRING},
    {"float", TK_FLOAT}, {"double", TK_DOUBLE}, {"inline", TK_INLINE}, {"typedef", TK_TYPEDEF},
    /* D reserves these; none starts anything this compiler takes */
    {"auto", TK_RESERVED}, {"break", TK_RESERVED}, {"case", TK_RESERVED}, {"continue", TK_RESERVED},
    {"counter", TK_RESERVED}, {"default", TK_RESERVED}, {"do", TK_RESERVED}, {"extern", TK_RESERVED},
    {"for", TK_RESERVED}, {"goto", TK_RESERVED}, {"import", TK_RESERVED}, {"probe", TK_RESERVED},
    {"provider", TK_RESERVED}, {"register", TK_RESERVED}, {"return", TK_RESERVED},
    {"static", TK_RESERVED}, {"switch", TK_RESERVED}, {"translator", TK_RESERVED},
    {"while", TK_RESERVED}, {"xlate", TK_RESERVED}};

/* keywords that start a declaration in the outer scope, as in DTrace's lexer */
static const char *const decl_words[] = {
    "auto", "char", "const", "counter", "double", "enum", "extern", "float", "import", "inline",
    "int", "long", "provider", "register", "restrict", "self", "short", "signed", "static",
    "string", "struct", "this", "translator", "typedef", "union", "unsigned", "void", "volatile", NULL};

static const struct { int kind; const char *s; } puncts[] = {
    /* longest first */
    {TK_LSH_EQ, "<<="}, {TK_RSH_EQ, ">>="}, {TK_ELLIPSIS, "..."},
    {TK_ARROW, "->"}, {TK_INC, "++"}, {TK_DEC, "--"}, {TK_ADD_EQ, "+="}, {TK_SUB_EQ, "-="},
    {TK_MUL_EQ, "*="}, {TK_DIV_EQ, "/="}, {TK_MOD_EQ, "%="}, {TK_AND_EQ, "&="}, {TK_OR_EQ, "|="},
    {TK_XOR_EQ, "^="}, {TK_LAND, "&&"}, {TK_LOR, "||"}, {TK_LXOR, "^^"}, {TK_EQ, "=="},
    {TK_NE, "!="}, {TK_LE, "<="}, {TK_GE, ">="}, {TK_LSH, "<<"}, {TK_RSH, ">>"},
    {TK_LPAR, "("}, {TK_RPAR, ")"}, {TK_LBRAC, "["}, {TK_RBRAC, "]"}, {TK_LBRACE, "{"},
    {TK_RBRACE, "}"}, {TK_SEMI, ";"}, {TK_COMMA, ","}, {TK_DOT, "."}, {TK_QUEST, "?"},
    {TK_COLON, ":"}, {TK_ASGN, "="}, {TK_ADD, "+"}, {TK_SUB, "-"}, {TK_MUL, "*"}, {TK_DIV, "/"},
    {TK_MOD, "%"}, {TK_BAND, "&"}, {TK_BOR, "|"}, {TK_XOR, "^"}, {TK_BNEG, "~"}, {TK_LNEG, "!"},
    {TK_LT, "<"}, {TK_GT, ">"}};

const char *d_tok_name(int kind)
{
    static const char *const named[TK__COUNT] = {
        [TK_EOF] = "end of input", [TK_IDENT] = "identifier", [TK_INT] = "integer constant",
        [TK_STR] = "string constant", [TK_AGG] = "aggregation", [TK_PSPEC] = "probe description",
        [TK_EPRED] = "/", [TK_RESERVED] = "reserved word"};
    if (kind < 0 || kind >= TK__COUNT) return "?";
    if (named[kind]) return named[kind];
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        if (keywords[i].kind == kind) return keywords[i].s;
    for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++)
        if (puncts[i].kind == kind) return puncts[i].s;
    return "?";
}

void d_lex_init(d_cc *cc, const char *src, size_t len)
{
    memset(&cc->lx, 0, sizeof cc->lx);
    cc->lx.src = src;
    cc->lx.len = len;
    cc->lx.line = 1;
    cc->lx.top = 1;
}

void d_lex_set_top(d_cc *cc, int top) { cc->lx.top = top; }

static int cur(d_lexer *lx, size_t k) { return lx->pos + k < lx->len ? (unsigned char)lx->src[lx->pos + k] : -1; }
/* c in set, never for NUL (strchr finds a set's own terminator) */
static int in_set(const char *set, int c) { return c > 0 && strchr(set, c) != NULL; }
static int col_of(d_lexer *lx, size_t pos) { return (int)(pos - lx->line_start) + 1; }

static void newline(d_lexer *lx)
{
    lx->line++;
    lx->line_start = lx->pos;
}

/* C escapes, as DTrace resolves them: \n \t ... \ooo \xhh; anything else stands for itself. */
size_t d_unescape(const char *s, size_t n, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] != '\\' || i + 1 == n) {
            out[o++] = s[i];
            continue;
        }
        char c = s[++i];
        switch (c) {
        case 'n': out[o++] = '\n'; break;
        case 't': out[o++] = '\t'; break;
        case 'v': out[o++] = '\v'; break;
        case 'b': out[o++] = '\b'; break;
        case 'r': out[o++] = '\r'; break;
        case 'f': out[o++] = '\f'; break;
        case 'a': out[o++] = '\a'; break;
        case 'x': {
            int v = 0, k = 0;
            while (k < 2 && i + 1 < n && isxdigit((unsigned char)s[i + 1])) {
                char h = s[++i];
                v = v * 16 + (isdigit((unsigned char)h) ? h - '0' : (tolower((unsigned char)h) - 'a' + 10));
                k++;
            }
            out[o++] = k ? (char)v : 'x';
            break;
        }
        default:
            if (c >= '0' && c <= '7') {
                int v = c - '0', k = 1;
                while (k < 3 && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '7') v = v * 8 + (s[++i] - '0'), k++;
                out[o++] = (char)v;
            } else
                out[o++] = c;
        }
    }
    return o;
}

/* ---- control lines ---- */
typedef struct { const char *s; size_t n; int col; } word;

static void control_line(d_cc *cc)
{
    d_lexer *lx = &cc->lx;
    int line = lx->line;
    lx->pos++; /* '#' */
    word w[8];
    int nw = 0;
    for (;;) {
        int c = cur(lx, 0);
        if (c < 0 || c == '\n') break;
        if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r') {
            lx->pos++;
            continue;
        }
        size_t s = lx->pos;
        while ((c = cur(lx, 0)) >= 0 && c != '\n' && !in_set(" \t\f\v\r", c)) lx->pos++;
        if (nw < 8) w[nw++] = (word){lx->src + s, lx->pos - s, col_of(lx, s)};
    }
#define IS(k, str) (nw > (k) && w[k].n == strlen(str) && !memcmp(w[k].s, str, w[k].n))
    if (nw == 0 || w[0].s[0] == '!' || isdigit((unsigned char)w[0].s[0]) || IS(0, "line") || IS(0, "ident"))
        return; /* #!interpreter, cpp line markers, #ident: nothing to do */
    if (IS(0, "error")) {
        const char *rest = nw > 1 ? w[1].s : "";
        size_t n = 0;
        while (rest + n < lx->src + lx->pos && rest[n] != '\n') n++;
        d_error(cc, line, w[0].col, "#error: %.*s", (int)n, rest);
        return;
    }
    if (!IS(0, "pragma")) {
        d_error(cc, line, w[0].col, "invalid control directive: #%.*s", (int)w[0].n, w[0].s);
        return;
    }
    if (!IS(1, "D")) return; /* K&R says to ignore pragmas one does not know */
    if (nw < 3 || IS(2, "depends_on") || IS(2, "attributes") || IS(2, "binding") || IS(2, "ident") ||
        IS(2, "line"))
        return;
    if (IS(2, "error")) {
        d_error(cc, line, w[2].col, "#pragma error: %.*s", nw > 3 ? (int)w[3].n : 0, nw > 3 ? w[3].s : "");
        return;
    }
    if (!IS(2, "option")) {
        d_error(cc, line, w[2].col, "invalid D pragma: %.*s", (int)w[2].n, w[2].s);
        return;
    }
    if (nw < 4) {
        d_error(cc, line, w[2].col, "malformed #pragma option <option>=<val>");
        return;
    }
    if (nw > 4) {
        d_error(cc, line, w[4].col, "superfluous arguments specified for #pragma option");
        return;
    }
    const char *eq = memchr(w[3].s, '=', w[3].n);
    char *name = d_strndup(cc, w[3].s, eq ? (size_t)(eq - w[3].s) : w[3].n);
    char *val = eq ? d_strndup(cc, eq + 1, w[3].n - (size_t)(eq - w[3].s) - 1) : NULL;
    d_setopt(cc, name, val, line, w[3].col);
#undef IS
}

/* Whitespace, comments and control lines. */
static void skip_space(d_cc *cc)
{
    d_lexer *lx = &cc->lx;
    for (;;) {
        int c = cur(lx, 0);
        if (c == '\n') {
            lx->pos++;
            newline(lx);
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            lx->pos++;
        } else if (c == '\\' && cur(lx, 1) == '\n') {
            lx->pos += 2;
            newline(lx);
        } else if (c == '/' && cur(lx, 1) == '*') {
            int line = lx->line, col = col_of(lx, lx->pos);
            lx->pos += 2;
            for (;;) {
                int d = cur(lx, 0);
                if (d < 0) {
                    d_error(cc, line, col, "end-of-file encountered before matching */");
                    lx->eof_error = 1;
                    return;
                }
                if (d == '*' && cur(lx, 1) == '/') {
                    lx->pos += 2;
                    break;
                }
                if (d == '/' && cur(lx, 1) == '*')
                    d_error(cc, lx->line, col_of(lx, lx->pos), "/* encountered inside a comment");
                lx->pos++;
                if (d == '\n') newline(lx);
            }
        } else if (c == '/' && cur(lx, 1) == '/') {
            while (cur(lx, 0) >= 0 && cur(lx, 0) != '\n') lx->pos++;
        } else if (c == '#') {
            size_t i = lx->line_start;
            while (i < lx->pos && in_set(" \t\f\v\r", (unsigned char)lx->src[i])) i++;
            if (i != lx->pos) return; /* not at the start of a line: a syntax error later */
            control_line(cc);
        } else
            return;
    }
}

static int is_ident_start(int c) { return c == '_' || c == '`' || isalpha(c); }
static int is_ident_char(int c) { return c == '_' || c == '`' || isalnum(c); }
static int is_pspec_start(int c) { return c >= 0 && (isalpha(c) || in_set("-$:_.?*\\[]!", c)); }
/* '+' is hvtrace's: the addr provider's SYM+OFF (DTrace has no such description) */
static int is_pspec_char(int c) { return c >= 0 && (isalnum(c) || in_set("-$:_.`?*\\[]!+", c)); }

/* The type of an integer constant, C's rules as DTrace applies them. */
static int int_type(d_cc *cc, uint64_t v, int decimal, int u, int l)
{
    const struct { int *tid; int uns; int rank; uint64_t max; } ts[] = {
        {&cc->t_int, 0, 0, INT32_MAX}, {&cc->t_uint, 1, 0, UINT32_MAX},
        {&cc->t_long, 0, 1, INT64_MAX}, {&cc->t_ulong, 1, 1, UINT64_MAX}};
    for (size_t i = 0; i < 4; i++) {
        if (ts[i].rank < (l ? 1 : 0) || (u && !ts[i].uns) || (decimal && !u && ts[i].uns)) continue;
        if (v <= ts[i].max) return *ts[i].tid;
    }
    return -1;
}

static void lex_number(d_cc *cc, d_tok *t)
{
    d_lexer *lx = &cc->lx;
    size_t s = lx->pos;
    while (is_ident_char(cur(lx, 0))) lx->pos++;
    int hex = lx->pos - s > 1 && lx->src[s] == '0' && (lx->src[s + 1] == 'x' || lx->src[s + 1] == 'X');
    int fp = cur(lx, 0) == '.';
    for (size_t i = s; !hex && i < lx->pos && isdigit((unsigned char)lx->src[i]); i++)
        if (i + 1 < lx->pos && (lx->src[i + 1] == 'e' || lx->src[i + 1] == 'E')) fp = 1;
    if (fp) {
        for (;;) {
            int c = cur(lx, 0);
            int prev = lx->pos > s ? lx->src[lx->pos - 1] : 0;
            if (is_ident_char(c) || c == '.' || ((c == '+' || c == '-') && (prev == 'e' || prev == 'E'))) lx->pos++;
            else break;
        }
        d_error(cc, t->line, t->col, "floating-point constants are not permitted");
        t->kind = TK_INT;
        t->ity = cc->t_int;
        return;
    }
    char *text = d_strndup(cc, lx->src + s, lx->pos - s), *end;
    t->kind = TK_INT;
    t->ity = cc->t_int;
    errno = 0;
    uint64_t v = strtoull(text, &end, 0);
    if (errno == ERANGE) {
        d_error(cc, t->line, t->col, "constant %s results in integer overflow", text);
        return;
    }
    if (*end && !in_set("uUlL", (unsigned char)*end)) {
        d_error(cc, t->line, t->col, "constant %s contains invalid digit %c", text, *end);
        return;
    }
    int u = 0, l = 0;
    for (char *p = end; *p; p++) {
        if ((*p == 'u' || *p == 'U') && !u) u = 1;
        else if ((*p == 'l' || *p == 'L') && l < 2) l++;
        else {
            d_error(cc, t->line, t->col, "constant %s has an invalid suffix", text);
            return;
        }
    }
    int ty = int_type(cc, v, text[0] != '0', u, l);
    if (ty < 0) {
        d_error(cc, t->line, t->col, "integer constant 0x%llx cannot be represented in any built-in integral type",
                (unsigned long long)v);
        return;
    }
    t->ival = v;
    t->ity = ty;
}

/* "..." or '...': body between the quotes, unescaped. */
static int lex_quoted(d_cc *cc, d_tok *t, int q)
{
    d_lexer *lx = &cc->lx;
    size_t s = ++lx->pos;
    for (;;) {
        int c = cur(lx, 0);
        if (c < 0) {
            d_error(cc, t->line, t->col, q == '"' ? "unterminated string literal" : "unterminated character constant");
            return -1;
        }
        if (c == '\n') {
            d_error(cc, t->line, t->col, q == '"' ? "newline encountered in string literal"
                                                  : "newline encountered in character constant");
            return -1;
        }
        if (c == '\\' && cur(lx, 1) >= 0 && cur(lx, 1) != '\n') {
            lx->pos += 2;
            continue;
        }
        lx->pos++;
        if (c == q) break;
    }
    size_t n = lx->pos - 1 - s;
    char *out = d_alloc(cc, n + 1);
    t->len = d_unescape(lx->src + s, n, out);
    t->text = out;
    return 0;
}

static const char *macro_arg(d_cc *cc, int i, int line, int col, const char *text)
{
    const d_options *o = cc->opt;
    if (i == 0) return cc->file;
    if (i <= o->nmacro_args) {
        cc->macro_used[i] = 1;
        return o->macro_args[i - 1];
    }
    if (cc->defaultargs) return NULL;
    d_error(cc, line, col, "macro argument %s is not defined", text);
    return NULL;
}

/* $N, $$N, $target, $$target */
static void lex_macro(d_cc *cc, d_tok *t)
{
    d_lexer *lx = &cc->lx;
    size_t s = lx->pos;
    int str = cur(lx, 1) == '$';
    lx->pos += str ? 2 : 1;
    size_t ns = lx->pos;
    while (is_ident_char(cur(lx, 0))) lx->pos++;
    char *text = d_strndup(cc, lx->src + s, lx->pos - s), *name = text + (ns - s);
    t->kind = TK_INT;
    t->ity = cc->t_int;
    if (isdigit((unsigned char)*name)) {
        for (char *p = name; *p; p++)
            if (!isdigit((unsigned char)*p)) {
                d_error(cc, t->line, t->col, "syntax error near \"%s\"", text);
                return;
            }
        long i = strtol(name, NULL, 10);
        const char *v = macro_arg(cc, i > 1000 ? 1000 : (int)i, t->line, t->col, text);
        if (str) {
            t->kind = TK_STR;
            t->text = v ? v : "";
            t->len = strlen(t->text);
            return;
        }
        if (!v) v = "0";
        const char *p = v + (*v == '-' || *v == '+');
        char *end;
        errno = 0;
        uint64_t n = strtoull(p, &end, 0);
        if (isdigit((unsigned char)*p) && !*end && errno != ERANGE) {
            /* a signed argument keeps its sign and becomes the matching constant */
            t->ival = *v == '-' ? (uint64_t)-(int64_t)n : n;
            t->ity = *v == '-' ? (n > INT32_MAX + 1ull ? cc->t_long : cc->t_int)
                               : int_type(cc, n, 1, 0, 0) >= 0 ? int_type(cc, n, 1, 0, 0) : cc->t_ulong;
            return;
        }
        int id = is_ident_start((unsigned char)*v);
        for (const char *q = v; *q && id; q++) id = is_ident_char((unsigned char)*q);
        if (id) {
            t->kind = TK_IDENT;
            t->text = v;
            t->len = strlen(v);
            for (size_t k = 0; k < sizeof keywords / sizeof keywords[0]; k++)
                if (!strcmp(keywords[k].s, v)) t->kind = keywords[k].kind;
            return;
        }
        /* DTrace: neither a number nor an identifier, so a string (quotes stripped) */
        size_t n2 = strlen(v);
        if (n2 >= 2 && v[0] == '"' && v[n2 - 1] == '"') v++, n2 -= 2;
        char *out = d_alloc(cc, n2 + 1);
        t->kind = TK_STR;
        t->len = d_unescape(v, n2, out);
        t->text = out;
        return;
    }
    if (!strcmp(name, "target")) {
        if (!cc->opt->target_pid) d_error(cc, t->line, t->col, "macro variable %s is not defined", text);
        if (str) {
            t->kind = TK_STR;
            t->text = d_sprintf(cc, "%lld", (long long)cc->opt->target_pid);
            t->len = strlen(t->text);
        } else
            t->ival = (uint64_t)cc->opt->target_pid;
        return;
    }
    d_error(cc, t->line, t->col, "macro variable %s is not defined", text);
}

/* $1.. and $target inside a probe specifier: the text as given */
static const char *expand_pspec(d_cc *cc, const char *s, size_t n, int line, int col)
{
    if (!memchr(s, '$', n)) return d_strndup(cc, s, n);
    size_t cap = n + 64, o = 0;
    char *out = NULL;
    for (int pass = 0; pass < 2; pass++) {
        o = 0;
        for (size_t i = 0; i < n;) {
            const char *v = NULL;
            size_t adv = 1;
            if (s[i] == '$') {
                size_t j = i + 1 + (i + 1 < n && s[i + 1] == '$');
                size_t k = j;
                while (k < n && isalnum((unsigned char)s[k])) k++;
                char *nm = d_strndup(cc, s + j, k - j);
                if (*nm && isdigit((unsigned char)*nm)) {
                    v = macro_arg(cc, (int)(strtol(nm, NULL, 10) > 1000 ? 1000 : strtol(nm, NULL, 10)), line, col,
                                  d_strndup(cc, s + i, k - i));
                    if (!v) v = "";
                } else if (!strcmp(nm, "target")) {
                    v = d_sprintf(cc, "%lld", (long long)cc->opt->target_pid);
                }
                if (v) adv = k - i;
            }
            if (!v) {
                if (out) out[o] = s[i];
                o++;
            } else {
                size_t vl = strlen(v);
                if (out) memcpy(out + o, v, vl);
                o += vl;
            }
            i += adv;
        }
        if (!out) out = d_alloc(cc, (cap = o + 1));
    }
    out[o] = 0;
    return out;
}

static int is_decl_start(d_cc *cc, const char *text)
{
    if (strpbrk(text, ":-.?!`+") || !strcmp(text, "BEGIN") || !strcmp(text, "END") || !strcmp(text, "ERROR"))
        return 0;
    char buf[256];
    size_t n = strcspn(text, "*");
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, text, n);
    buf[n] = 0;
    for (int i = 0; decl_words[i]; i++)
        if (!strcmp(buf, decl_words[i])) return 1;
    return d_ty_lookup(cc, buf) >= 0;
}

static void lex_token(d_cc *cc, d_tok *t)
{
    d_lexer *lx = &cc->lx;
again:
    skip_space(cc);
    memset(t, 0, sizeof *t);
    t->line = lx->line;
    t->col = col_of(lx, lx->pos);
    t->off = lx->pos;
    int c = cur(lx, 0);
    if (c < 0) {
        t->kind = TK_EOF;
        return;
    }
    if (lx->top && c != '/' && c != ',' && c != '{' && is_pspec_start(c)) {
        size_t s = lx->pos;
        while (is_pspec_char(cur(lx, 0))) lx->pos++;
        char *raw = d_strndup(cc, lx->src + s, lx->pos - s);
        if (!is_decl_start(cc, raw)) {
            t->kind = TK_PSPEC;
            t->text = expand_pspec(cc, raw, lx->pos - s, t->line, t->col);
            t->len = strlen(t->text);
            return;
        }
        lx->pos = s; /* a declaration: lex it as C */
    }
    if (is_ident_start(c)) {
        size_t s = lx->pos;
        while (is_ident_char(cur(lx, 0))) lx->pos++;
        t->kind = TK_IDENT;
        t->text = d_strndup(cc, lx->src + s, lx->pos - s);
        t->len = lx->pos - s;
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if (!strcmp(keywords[i].s, t->text)) t->kind = keywords[i].kind;
        return;
    }
    if (isdigit(c) || (c == '.' && isdigit(cur(lx, 1)))) {
        lex_number(cc, t);
        return;
    }
    if (c == '$') {
        lex_macro(cc, t);
        return;
    }
    if (c == '@') {
        size_t s = ++lx->pos;
        while (is_ident_char(cur(lx, 0)) && cur(lx, 0) != '`') lx->pos++;
        if (lx->pos > s && isdigit((unsigned char)lx->src[s])) lx->pos = s; /* @ then a number */
        t->kind = TK_AGG;
        t->text = d_strndup(cc, lx->src + s, lx->pos - s);
        t->len = lx->pos - s;
        return;
    }
    if (c == '"') {
        if (lex_quoted(cc, t, '"') < 0) {
            t->kind = TK_EOF; /* the rest of the line is lost: stop here */
            lx->eof_error = 1;
            lx->pos = lx->len;
            return;
        }
        t->kind = TK_STR;
        return;
    }
    if (c == '\'') {
        if (lex_quoted(cc, t, '\'') < 0) {
            while (cur(lx, 0) >= 0 && cur(lx, 0) != '\n') lx->pos++;
            goto again;
        }
        t->kind = TK_INT;
        t->ity = cc->t_int;
        if (t->len == 0) d_error(cc, t->line, t->col, "empty character constant");
        else if (t->len > 8) d_error(cc, t->line, t->col, "character constant is too long");
        uint64_t v = 0;
        for (size_t i = 0; i < t->len && i < 8; i++) v = v << 8 | (unsigned char)t->text[i];
        t->ival = v;
        t->text = NULL;
        return;
    }
    for (size_t i = 0; i < sizeof puncts / sizeof puncts[0]; i++) {
        size_t n = strlen(puncts[i].s);
        if (lx->pos + n <= lx->len && !memcmp(lx->src + lx->pos, puncts[i].s, n)) {
            lx->pos += n;
            t->kind = puncts[i].kind;
            if (t->kind == TK_DIV && !lx->top) {
                /* DTrace's rule: a "/" followed (after blanks) by the end, ";", "{" or "/"
                 * closes a predicate; anything else divides */
                size_t k = lx->pos;
                while (k < lx->len && in_set(" \t\n\r\f\v", (unsigned char)lx->src[k])) k++;
                if (k == lx->len || lx->src[k] == ';' || lx->src[k] == '{' || lx->src[k] == '/') t->kind = TK_EPRED;
            }
            return;
        }
    }
    if (c >= 0x20 && c < 0x7f) d_error(cc, t->line, t->col, "syntax error near \"%c\"", c);
    else d_error(cc, t->line, t->col, "invalid character 0x%02x in the program", (unsigned)c);
    lx->pos++;
    goto again;
}

const d_tok *d_peek(d_cc *cc, int i)
{
    d_lexer *lx = &cc->lx;
    if (i > 3) i = 3;
    while (lx->nla <= i) {
        lex_token(cc, &lx->la[lx->nla]);
        lx->la[lx->nla].end = lx->pos;
        lx->nla++;
    }
    return &lx->la[i];
}

d_tok d_next(d_cc *cc)
{
    d_lexer *lx = &cc->lx;
    d_peek(cc, 0);
    d_tok t = lx->la[0];
    if (t.kind != TK_EOF) {
        memmove(lx->la, lx->la + 1, (size_t)(lx->nla - 1) * sizeof lx->la[0]);
        lx->nla--;
    }
    lx->last = t;
    return t;
}
