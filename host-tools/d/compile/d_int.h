/*
 * d_int.h - the D compiler's internals, shared by its files (not an API: see d_compile.h).
 *
 * Contract:
 *  - One d_cc holds a whole compilation. Every AST node, token text and type-name string is
 *    allocated from its arena (d_alloc) and freed at once at the end, so error paths never
 *    leak: an error inside a statement prints itself (d_error) and longjmps (d_fail) to the
 *    recovery point of that statement (cc->jb), and compilation goes on with the next one to
 *    report several errors in one run.
 *  - Phases: d_lex (tokens, #pragma, macros) -> d_parse (AST of top-level items, in source
 *    order) -> per item in order: declarations, or for a clause: probe resolution
 *    (d_image.c), d_sema (types, variables, constant folding) and d_cg (instructions) ->
 *    d_image_build (the hvt_dif image and the dprog).
 *  - Types are interned in cc->types and named by index (a "tid"); equal types have equal tids.
 *    A d_type pointer does not survive the creation of a type (the table grows): keep tids.
 *  - A d_var, d_aggsym or d_action pointer likewise does not survive adding one: keep indexes.
 */
#ifndef HVT_D_INT_H
#define HVT_D_INT_H
#include <setjmp.h>
#include <stdarg.h>
#include "d_compile.h"

typedef struct d_cc d_cc;

/* ---- tokens (d_lex.c) ---- */
enum {
    TK_EOF = 0, TK_IDENT, TK_INT, TK_STR, TK_AGG, TK_PSPEC,
    /* keywords */
    TK_SIZEOF, TK_STRINGOF, TK_OFFSETOF, TK_SELF, TK_THIS, TK_IF, TK_ELSE,
    TK_STRUCT, TK_UNION, TK_ENUM, TK_CONST, TK_VOLATILE, TK_RESTRICT, TK_SIGNED, TK_UNSIGNED,
    TK_CHAR, TK_SHORT, TK_INT_KW, TK_LONG, TK_VOID, TK_STRING, TK_FLOAT, TK_DOUBLE,
    TK_INLINE, TK_TYPEDEF, TK_RESERVED,  /* a D keyword this compiler does not take */
    /* punctuation */
    TK_LPAR, TK_RPAR, TK_LBRAC, TK_RBRAC, TK_LBRACE, TK_RBRACE, TK_SEMI, TK_COMMA,
    TK_DOT, TK_ARROW, TK_QUEST, TK_COLON, TK_ELLIPSIS,
    TK_ASGN, TK_ADD_EQ, TK_SUB_EQ, TK_MUL_EQ, TK_DIV_EQ, TK_MOD_EQ, TK_AND_EQ, TK_OR_EQ,
    TK_XOR_EQ, TK_LSH_EQ, TK_RSH_EQ, TK_INC, TK_DEC,
    TK_ADD, TK_SUB, TK_MUL, TK_DIV, TK_MOD, TK_BAND, TK_BOR, TK_XOR, TK_BNEG, TK_LNEG,
    TK_LAND, TK_LOR, TK_LXOR, TK_EQ, TK_NE, TK_LT, TK_LE, TK_GT, TK_GE, TK_LSH, TK_RSH,
    TK_EPRED,                 /* the "/" that closes a predicate */
    TK__COUNT
};

typedef struct {
    int kind;
    int line, col;            /* 1-based; col counts bytes */
    size_t off, end;          /* byte offsets of its first character and just past it */
    const char *text;         /* identifiers, string contents, probe specifiers, AGG names */
    size_t len;
    uint64_t ival;            /* TK_INT */
    int ity;                  /* TK_INT: its type (tid) */
} d_tok;

typedef struct {
    const char *src;
    size_t len, pos;
    int line;
    size_t line_start;        /* offset of the current line's first byte */
    int top;                  /* lex probe specifiers (the outer scope) */
    d_tok la[4];              /* lookahead */
    int nla;
    d_tok last;               /* the token last consumed (for "near" messages at EOF) */
    int depth;                /* the parser's recursion, bounded (D_MAX_DEPTH) */
    int eof_error;            /* an unterminated string or comment ended the input */
} d_lexer;

void d_lex_init(d_cc *cc, const char *src, size_t len);
const d_tok *d_peek(d_cc *cc, int i);   /* i-th token ahead (0: next) */
d_tok d_next(d_cc *cc);
void d_lex_set_top(d_cc *cc, int top);  /* only with no lookahead buffered */
const char *d_tok_name(int kind);       /* "(", "sizeof", ... for messages */
size_t d_unescape(const char *s, size_t n, char *out); /* C escapes; returns the length */

/* ---- types (d_type.c) ---- */
enum { TY_VOID = 1, TY_INT, TY_PTR, TY_ARRAY, TY_SOU, TY_STR, TY_FUNC, TY_FLOAT, TY_SYM,
       TY_STACK, /* an aggregation key only: user 0 stack( ), 1 ustack( ); nelem its frames */
       TY_XL     /* a translated struct (psinfo_t, lwpsinfo_t: d_xlate.c): nelem its translator;
                    a pointer to one holds the struct task_struct * it is translated from */ };
typedef struct {
    uint8_t kind;
    uint8_t uns;              /* INT: unsigned */
    uint8_t ischar;           /* INT: a char type (char arrays are strings) */
    uint8_t isunion;          /* SOU */
    uint8_t user;             /* PTR: into user space (from copyin( )): loads walk the process's tables */
    uint32_t size;            /* bytes (0: unknown or incomplete) */
    int ref;                  /* PTR: pointee; ARRAY: element */
    uint32_t nelem;           /* ARRAY */
    uint32_t btf;             /* SOU: the struct/union's BTF id */
    const char *name;         /* display name ("int", "struct file", "size_t"); NULL: derived */
} d_type;

int d_ty_int(d_cc *cc, unsigned size, int uns, const char *name);
int d_ty_ptr(d_cc *cc, int ref);
int d_ty_user(d_cc *cc, int ptr);      /* the same pointer, into user space */
int d_ty_array(d_cc *cc, int elem, uint32_t n);
int d_ty_stack(d_cc *cc, int user, uint32_t frames);
int d_ty_btf(d_cc *cc, uint32_t id);    /* the BTF type as a D type (typedef names kept) */
const d_type *d_ty(const d_cc *cc, int tid);
void d_ty_name(const d_cc *cc, int tid, char *buf, size_t n);
const char *d_ty_str(d_cc *cc, int tid); /* the name, in the arena (for messages) */
int d_ty_is_int(const d_cc *cc, int tid);      /* INT or SYM */
int d_ty_is_scalar(const d_cc *cc, int tid);   /* INT, SYM or PTR */
int d_ty_is_chararray(const d_cc *cc, int tid);
/* A type name: builtin D typedef or BTF typedef/base type; -1 if none. */
int d_ty_lookup(d_cc *cc, const char *name);
int d_ty_xl(d_cc *cc, const char *display, uint32_t nelem);   /* a new translated struct type */
/* struct/union/enum NAME from BTF (kind: TK_STRUCT, TK_UNION, TK_ENUM); -1 if none. */
int d_ty_lookup_tag(d_cc *cc, int kind, const char *name);
/* BTF lookups through the lazily built name index: FUNC by name (its id, 0 if none), an
 * enumerator's value (0 found, -1 not). */
uint32_t d_btf_func(d_cc *cc, const char *name);
uint32_t d_btf_func_in(d_cc *cc, const char *name, uint32_t lo, uint32_t hi);   /* a FUNC with id in [lo, hi) */
uint32_t d_btf_var(d_cc *cc, const char *name);   /* a VAR (a typed kernel variable), 0 if none */
int d_btf_enumval(d_cc *cc, const char *name, int64_t *val, int *tid);
/* A struct/union member: its type and byte offset; a bitfield is read as `unit` bytes at off,
 * then bitsz bits from bit bitoff. */
typedef struct {
    int ty;
    uint32_t off;
    uint8_t bitoff, bitsz, unit;
} d_member;
int d_ty_member(d_cc *cc, int sou, const char *name, d_member *m);
int d_ty_compat(const d_cc *cc, int a, int b);  /* assignable / comparable (D's rules) */
int d_ty_size(const d_cc *cc, int tid);         /* bytes (strings: strsize) */
int d_ty_promote(d_cc *cc, int t);              /* C's integer promotion (d_sema.c) */
int d_ty_arith(d_cc *cc, int a, int b);         /* C's usual arithmetic conversions */

/* ---- AST (d_parse.c) ---- */
enum {
    N_INT = 1, N_STR, N_IDENT, N_SELF, N_THIS, N_AGG, N_UNARY, N_POST, N_BIN, N_ASSIGN, N_COND,
    N_INDEX, N_CALL, N_DOT, N_ARROW, N_CAST, N_SIZEOF, N_STRINGOF, N_OFFSETOF,
    N_TOSTR,                  /* sema: a char array read as a string */
    N_XLATE,                  /* xlate <ty> (a): a translator's output (d_xlate.c) */
    S_EXPR, S_IF, S_BLOCK
};
/* value kinds (sema) */
enum { VK_VAL = 0, VK_MEM, VK_VAR, VK_BUILTIN, VK_CONST };

typedef struct d_node {
    uint8_t kind;
    int op;                   /* TK_* of an operator; N_UNARY TK_INC/TK_DEC: prefix */
    int line, col;
    struct d_node *a, *b, *c; /* operands; N_INDEX/N_CALL: b = argument list; S_IF: a cond,
                                 b then, c else; S_BLOCK: a = statements */
    struct d_node *next;      /* lists: arguments, statements */
    const char *str;          /* identifier, member, function, string contents, AGG name */
    size_t slen;
    uint64_t ival;            /* N_INT, constants after folding */
    int ty;                   /* parse: cast/sizeof/offsetof type; sema: the value's type */
    /* sema */
    uint8_t vk;
    uint8_t decay;            /* an array used as a value: its address */
    uint8_t side;             /* side effects or tuple use inside: keep evaluation order */
    uint8_t action;           /* a call to an action (statement level only) */
    int var;                  /* VK_VAR: vars[]; VK_BUILTIN: HVT_DIF_V_*; N_AGG: aggs[] */
    uint32_t off;             /* N_DOT/N_ARROW: member byte offset */
    uint8_t bitoff, bitsz, unit; /* bitfield: d_member's */
    uint8_t user;             /* VK_MEM: in user space */
    uint8_t raw;              /* in a stable probe's row or a translator (d_xlate.c): args[]
                                 and argN are the underlying probe's, __ functions allowed */
    uint8_t done;             /* analysed already: d_sema_expr leaves it as it is */
    uint8_t xlval;            /* xlate<T>(e) (a translated struct, not a pointer): read by . */
    int xl;                   /* xlate: the program's translator it chose (index + 1) */
    int need;                 /* registers it needs (Sethi-Ullman) */
} d_node;

typedef struct d_pdesc {
    const char *text;         /* as written, macros expanded */
    int line, col;
    struct d_pdesc *next;
} d_pdesc;

enum { ITEM_CLAUSE = 1, ITEM_DECL };
typedef struct d_item {
    int kind;
    int line, col;
    /* clause */
    d_pdesc *descs;
    d_node *pred;
    d_node *body;             /* statement list */
    char *where;              /* descriptions joined by "," */
    int implicit;             /* the compiler's own clause (d_xlate_implicit) */
    /* declaration */
    int dclass;               /* 0 global, TK_SELF, TK_THIS, TK_INLINE */
    const char *name;
    int ty;
    int nkeys;
    int keys[HVT_DIF_TUPLE_MAX];
    d_node *dim;              /* a scalar array's dimension (int a[5]), folded by sema */
    d_node *init;             /* inline */
    struct d_item *next;
} d_item;

/* How deep expressions and statements may nest: the parser and every later phase recurse on
 * the tree, and no input may exhaust the stack. */
#define D_MAX_DEPTH 400
#define D_MAX_VARS 8192          /* variables, and aggregations: lookups are linear */
d_item *d_parse(d_cc *cc);                       /* d_parse_top.c */
void d_depth_check(d_cc *cc, const d_node *root); /* fails if the tree is deeper */
/* d_parse.c: expressions and type names, for d_parse_top.c */
_Noreturn void d_syntax(d_cc *cc, const d_tok *t, const char *expected);
d_tok d_expect(d_cc *cc, int kind, const char *what);
d_tok d_member_name(d_cc *cc);
int d_is_kw(int kind);
int d_is_type_start(d_cc *cc, const d_tok *t);   /* t begins a type name */
int d_parse_type_spec(d_cc *cc);
int d_parse_ptrs(d_cc *cc, int tid);
int d_parse_type_name(d_cc *cc);
d_node *d_parse_expr(d_cc *cc);
d_node *d_parse_assign(d_cc *cc);
d_node *d_node_new(d_cc *cc, int kind, int line, int col);
d_node *d_node_copy(d_cc *cc, const d_node *n);
const d_node *d_node_start(const d_node *n);     /* the leftmost token of an expression */

/* ---- symbols ---- */
typedef struct {
    const char *name;
    uint8_t kind;             /* HVT_DIF_VK_* */
    int ty;                   /* value type */
    int nkeys;
    int keys[HVT_DIF_TUPLE_MAX];
    uint32_t nelem;           /* a scalar array's elements (GLOBAL, LOCAL; ASSOC: self int a[N],
                                 keyed by (tid, index)); 0: none */
    int line;
} d_var;

typedef struct {
    const char *name;         /* "" for @ */
    uint8_t fn;               /* HVT_DIF_AGG_* */
    int nkeys;
    int keys[HVT_DIF_TUPLE_MAX];
    int64_t p[4];
    uint32_t nbuckets;
    int line;
} d_aggsym;

typedef struct {
    const char *name;
    int ty;
    d_node *expr;             /* checked once; copied at each use */
} d_inline;

/* a probe the current clause runs on (for args[] types) */
typedef struct {
    uint32_t id;
    const char *prov, *mod, *func, *name;
} d_pmatch;

/* A translator the program declares (translator out < in_t P > { m = e; ... };): its output
 * type a TY_XL of its own (nelem D_XL_USER + the index of the first translator to it), each
 * member's expression kept as the lexer's state where it starts (parsed again at each use,
 * so its messages point into the declaration). */
#define D_XL_USER 0x100u
typedef struct { const char *name; d_lexer at; int line, col; } d_xlmem;
typedef struct {
    int out, tag;             /* the output type; TK_STRUCT/TK_UNION when named so, else 0 */
    const char *outname;      /* its name (without struct/union) */
    int in_ty;                /* the input's type */
    const char *param;        /* the input's name */
    d_xlmem *mem;
    int nmem;
    int line, col;
} d_xlator;

/* ---- the compilation ---- */
struct d_cc {
    const char *file;
    const char *src;
    size_t len;
    const d_options *opt;
    const btf_info *btf;
    FILE *err;
    int nerrors, max_errors;
    jmp_buf *jb;              /* recovery point of the statement being compiled */
    jmp_buf top;              /* give up (too many errors, out of memory) */
    void *arena;
    size_t *lines;            /* offset of each line's start (lines[0] = line 1) */
    int nlines;
    d_lexer lx;
    d_xlator *xlators;        /* the program's translator declarations */
    int nxlators, capxlators;
    int xl_body;              /* parsing a translator: -1 its head, 1 its body (error recovery) */
    /* types */
    d_type *types;
    int ntypes, captypes;
    int t_int, t_uint, t_long, t_ulong, t_char, t_uchar, t_short, t_ushort, t_i64, t_u64;
    int t_str, t_void, t_voidp, t_size, t_sym, t_pid, t_uid, t_thread;
    int t_psinfo, t_lwpsinfo;  /* TY_XL: psinfo_t, lwpsinfo_t */
    void *btf_index;          /* d_type.c's name index */
    /* names the parser saw assigned or indexed (identifiers, not types: DTrace's rule) */
    const char **idents;
    int nidents, capidents;
    /* symbols */
    d_var *vars;
    int nvars, capvars;
    d_aggsym *aggs;
    int naggs, capaggs;
    d_inline *inls;
    int ninls, capinls;
    /* options */
    uint32_t strsize, bufsize, dynvarsize, aggsize;
    int quiet, flowindent, destructive, defaultargs, zdefs, argref;
    int aggsortkey, aggsortrev, aggsortpos, aggsortkeypos;
    int aggzoom, rawbytes, stackindent_set, stackindent;  /* printing only: the consumer's (dprog.h) */
    uint16_t regs;            /* registers in use (d_cg.c) */
    uint64_t switchrate_ns, aggrate_ns;
    int stackframes, ustackframes;
    uint32_t nspec, specsize;  /* speculations (0 specsize: the hypervisor's default, DTrace's) */
    int uses_spec;            /* the program uses speculations: the image asks for nspec */
    int uses_kstack;          /* stack( ) keys: the image carries the kernel's ORC tables */
    int io_wait_clause, io_wait_mixed, io_wait_used; /* d_xlate.c: the clause's io:::wait-done */
    int spec_order;           /* the clause's actions so far (d_cg_stmt.c's SO_* bits) */
    uint8_t *macro_used;      /* $N referenced */
    /* the clause being compiled */
    d_pmatch *pm;
    int npm, cappm;
    d_pmatch *stab;           /* the stable probes (proc, sched) its descriptions matched */
    int nstab, capstab;
    const struct stable_row_s *srow; /* compiling it for this row of a stable probe, or NULL */
    const d_pmatch *sprobe;   /* ... of this stable probe */
    uint8_t *xl_need;         /* stable rows whose helper or clear clauses the program needs */
    int clause;
    d_clause *dcl;            /* its host description (actions) */
    /* output (d_image.c) */
    void *img;
};

/* util.c: errors, memory, options, identifiers and inlines the parser knows */
void d_error(d_cc *cc, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
_Noreturn void d_fail(d_cc *cc, int line, int col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
_Noreturn void d_nomem(d_cc *cc);
void *d_alloc(d_cc *cc, size_t n);
void d_arena_free(d_cc *cc);                      /* every d_alloc at once */
char *d_strndup(d_cc *cc, const char *s, size_t n);
char *d_sprintf(d_cc *cc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void *d_grow(d_cc *cc, void *p, int *cap, int need, size_t elem); /* realloc'd array */
int d_setopt(d_cc *cc, const char *name, const char *val, int line, int col);
/* Why hvtrace refuses DTrace option name whatever its value (NULL: it does not). */
const char *d_opt_refused(const char *name);
int d_ident_seen(d_cc *cc, const char *name);
void d_ident_add(d_cc *cc, const char *name);
d_inline *d_inline_find(d_cc *cc, const char *name);
/* d_xlate.c: the io provider's translated arguments (bufinfo_t, devinfo_t, fileinfo_t from the
 * bio in arg0): args[i]->m as the translator's expression (unanalysed; NULL when n is no such
 * read), whether the clause's probes are io probes, and their implicit predicate. */
d_node *d_xlate_member(d_cc *cc, const d_node *n);
int d_xlate_is_io(d_cc *cc);
d_node *d_xlate_pred(d_cc *cc, d_node *pred, int line, int col);
/* The clauses the program needs after its own (io:::wait-done's bio kept at wait-start in the
 * thread-local D_XLATE_WAIT_BIO), or NULL. */
#define D_XLATE_WAIT_BIO "__io_wait_bio"
const char *d_xlate_implicit(const d_cc *cc);

/* d_sema.c, d_sema_act.c */
d_var *d_var_find(d_cc *cc, int kind, const char *name);
int d_var_add(d_cc *cc, int kind, const char *name, int ty, int line, int col);
void d_sema_expr(d_cc *cc, d_node *n);           /* type an expression (rvalue use) */
void d_sema_stmt(d_cc *cc, d_node *s);
void d_sema_pred(d_cc *cc, d_node *p);
/* Before a clause's predicate: the variables its statements declare by ++ or -- (DTrace cooks
 * the actions first, so a predicate may read a variable the body first increments). */
void d_sema_predeclare(d_cc *cc, const d_node *body);
void d_sema_decl(d_cc *cc, d_item *it);
d_node *d_sema_tostr(d_cc *cc, d_node *n);       /* n as a string, or NULL */
d_node *d_sema_rvalue(d_cc *cc, d_node *n);      /* arrays decayed */
int d_sema_int_const(d_cc *cc, d_node *n, int64_t *v); /* 1 if an integer constant */
int d_args_type(d_cc *cc, int idx, int line, int col); /* args[idx] for the current clause */
int d_sema_stack_arg(d_cc *cc, d_node *n, int idx, int ty); /* arg6..9: a stack slot or 0 */
int d_sema_self_assoc(d_cc *cc, d_node *n);     /* self->a[k]: "self->a"[tid, k] */
_Noreturn void d_sema_array_whole(d_cc *cc, const d_node *n); /* a scalar array without [i] */
int d_self_assoc_name(const char *name);       /* a name d_sema_self_assoc made */
int d_aggfn_lookup(const char *name);            /* HVT_DIF_AGG_* or 0 */
int d_is_action(const d_node *e);                /* a call to an action */
d_aggsym *d_agg_find(d_cc *cc, const char *name);
void d_argc_check(d_cc *cc, d_node *call, int lo, int hi);   /* DTrace's prototype mismatch */
_Noreturn void d_arg_type(d_cc *cc, const char *fn, int i, d_node *a, const char *proto);
d_node *d_str_arg(d_cc *cc, d_node *call, int i);            /* argument i (1-based) as a string */
d_node *d_int_arg(d_cc *cc, d_node *call, int i, int ptr_ok);
int d_val_of(d_cc *cc, int tid, d_val *v);       /* recorded-value type of tid; -1 if none */

/* d_pfcheck.c: check a printf/printa format against its arguments (DTrace's rules). For
 * printf, args are the value arguments (typed, not yet converted); for printa, the
 * aggregation's key types and function. vals (printf: nargs entries) gets the recorded types. */
void d_printf_check(d_cc *cc, const char *func, const char *fmt, const d_node *fmtnode,
                    d_node **args, int nargs, int foff, d_val *vals);
void d_printa_check(d_cc *cc, const char *fmt, const d_node *fmtnode, const d_aggsym *agg);
/* printa(fmt, @a, @b, ...): the keys are the first's, the k-th %@ the k-th aggregation's value */
void d_printa_check_n(d_cc *cc, const char *fmt, const d_node *fmtnode, const d_aggsym *aggs, const int *gs, int ng);

/* d_cg.c, d_cg_stmt.c */
typedef struct d_plist {        /* branches waiting for their target */
    int at;
    struct d_plist *next;
} d_plist;
int d_cg_expr(d_cc *cc, d_node *n);              /* the value in a new register */
int d_cg_addr(d_cc *cc, d_node *n);              /* a memory lvalue's address */
void d_cg_branch(d_cc *cc, d_node *n, int jump_if, d_plist **l);
void d_cg_here(d_cc *cc, d_plist *l);            /* patch l to the next insn */
int d_cg_ralloc(d_cc *cc, const d_node *at);
void d_cg_rfree(d_cc *cc, int r);
void d_cg_ldi(d_cc *cc, int r, uint64_t v);
void d_cg_tuple(d_cc *cc, d_node *keys, int *regs, int *n); /* keys into registers */
void d_cg_push(d_cc *cc, const int *regs, int n);           /* TCLR, TPUSH each */
void d_cg_clause(d_cc *cc, d_item *cl, d_node *rowpred); /* d_cg_stmt.c */

/* d_xlate.c (translators, stable probes' arguments) and d_stable.c (their clauses) */
d_node *d_xl_parse(d_cc *cc, const char *text, int line, int col); /* a D expression, raw */
int d_xl_stable_arg(d_cc *cc, d_node *n, int idx, int is_args);   /* args[idx]/argN at a stable
                                                                      probe: 1 lowered */
int d_xl_stable_name(d_cc *cc, d_node *n);                       /* probeprov..: 1 lowered */
int d_xl_curvar(d_cc *cc, d_node *n);                            /* curpsinfo, curlwpsinfo */
void d_xl_member(d_cc *cc, d_node *n, d_node *base);             /* base->member, base a
                                                                    pointer to a TY_XL */
void d_xl_xlate(d_cc *cc, d_node *n);                            /* xlate <T> (e): analysed */
int  d_xl_user_type(d_cc *cc, int tag, const char *name);       /* a translator's output type, or -1 */
void d_xl_clause(d_cc *cc, d_item *cl);                          /* a clause of the program */
void d_xl_finish(d_cc *cc);                                      /* after the program's clauses:
                                                                    the helper and clear clauses */

/* d_image.c */
void d_cg_begin(d_cc *cc);                       /* a new clause's code and d_clause */
int d_cg_end(d_cc *cc);                          /* appends RET; returns its index */
int d_image_init(d_cc *cc);
void d_image_free(d_cc *cc);
int d_resolve_clause(d_cc *cc, d_item *cl);     /* fills cc->pm; -1 on an error */
/* One description into cc->pm (a stable probe's row): the matches, or -1 with err set. */
int d_resolve_desc(d_cc *cc, const char *desc, char *err, size_t errlen);
uint32_t d_strtab_add(d_cc *cc, const char *s, size_t len);
int d_const_add(d_cc *cc, uint64_t v);
void d_emit(d_cc *cc, int op, int rd, int ra, int rb, int32_t imm);
/* The clause being generated has an op so far (branches go forward only: code that runs
 * before this point is code emitted before it). */
int d_clause_has_op(d_cc *cc, int op);
int d_pc(d_cc *cc);                              /* index of the next insn in the clause */
void d_patch(d_cc *cc, int at, int32_t target);
int d_action_add(d_cc *cc, int kind, int line, int col); /* a d_action of the clause */
int d_image_build(d_cc *cc, dprog *out);

#endif
