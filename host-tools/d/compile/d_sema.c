/*
 * d_sema: types of expressions (C's promotions and conversions, DTrace's messages),
 * variables (a variable's type is that of its first assignment in source order; reading one
 * before it is assigned or declared is an error), lvalues, constant folding. Calls, actions,
 * aggregations and declarations are in d_sema_act.c.
 */
#include "d_int.h"
#include "ksym.h"
#include <string.h>

/* ---- variables ---- */
d_var *d_var_find(d_cc *cc, int kind, const char *name)
{
    for (int i = 0; i < cc->nvars; i++) {
        d_var *v = &cc->vars[i];
        int k = v->kind == HVT_DIF_VK_ASSOC ? HVT_DIF_VK_GLOBAL : v->kind;
        if (k == kind && !strcmp(v->name, name)) return v;
    }
    return NULL;
}

int d_var_add(d_cc *cc, int kind, const char *name, int ty, int line, int col)
{
    if (cc->nvars >= D_MAX_VARS)
        d_fail(cc, line, col, "cannot create %s: limit on number of variables exceeded (%d)", name, D_MAX_VARS);
    cc->vars = d_grow(cc, cc->vars, &cc->capvars, cc->nvars + 1, sizeof *cc->vars);
    d_var *v = &cc->vars[cc->nvars];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->kind = (uint8_t)kind;
    v->ty = ty;
    v->line = line;
    return cc->nvars++;
}

/* ---- built-in variables ---- */
static const struct { const char *name; int v; int tyoff; } builtins[] = {
    {"pid", HVT_DIF_V_PID, offsetof(d_cc, t_pid)}, {"tid", HVT_DIF_V_TID, offsetof(d_cc, t_pid)},
    {"cpu", HVT_DIF_V_CPU, offsetof(d_cc, t_int)}, {"timestamp", HVT_DIF_V_TIMESTAMP, offsetof(d_cc, t_u64)},
    {"walltimestamp", HVT_DIF_V_WALLTIMESTAMP, offsetof(d_cc, t_i64)},
    {"curthread", HVT_DIF_V_CURTHREAD, offsetof(d_cc, t_thread)}, {"errno", HVT_DIF_V_ERRNO, offsetof(d_cc, t_int)},
    {"epid", HVT_DIF_V_EPID, offsetof(d_cc, t_uint)}, {"id", HVT_DIF_V_ID, offsetof(d_cc, t_uint)},
    {"execname", HVT_DIF_V_EXECNAME, offsetof(d_cc, t_str)}, {"probeprov", HVT_DIF_V_PROBEPROV, offsetof(d_cc, t_str)},
    {"probemod", HVT_DIF_V_PROBEMOD, offsetof(d_cc, t_str)}, {"probefunc", HVT_DIF_V_PROBEFUNC, offsetof(d_cc, t_str)},
    {"probename", HVT_DIF_V_PROBENAME, offsetof(d_cc, t_str)}};

static const char *const unsupported_vars[] = {
    "ucaller", "uregs", "ipl", "curcpu", "cwd", "root",
    "ustackdepth", "arg", "zonename", "projid", "taskid", "execargs", NULL};

/* Built-ins hvtrace cannot give honestly: a compile error that says why, never a wrong value. */
static const struct { const char *name, *why; } refused_vars[] = {
    {"vtimestamp", "the hypervisor does not account per-thread on-CPU time: use timestamp"},
    {"stackdepth", "the kernel stack is unwound by the host from stack()'s record, after the firing: "
                   "use stack()"},
    {NULL, NULL}};

/* n (its line, column and list link kept) becomes the analysed expression e. */
static void lower_to(d_cc *cc, d_node *n, d_node *e)
{
    d_sema_expr(cc, e);
    d_node *next = n->next;
    int line = n->line, col = n->col;
    *n = *e;
    n->next = next;
    n->line = line;
    n->col = col;
}

/* ppid, uid and gid as DTrace's Linux translators define them, read through the kernel's types
 * like any curthread->member chain (so a bad pointer is an invalid address like any load):
 * ppid = curthread->real_parent->tgid, uid = curthread->cred->uid.val, gid likewise. */
static int task_var(d_cc *cc, d_node *n)
{
    static const struct { const char *name, *path[3]; } tv[] = {
        {"ppid", {"real_parent", "tgid", NULL}}, {"uid", {"cred", "uid", "val"}}, {"gid", {"cred", "gid", "val"}}};
    for (size_t i = 0; i < sizeof tv / sizeof tv[0]; i++) {
        if (strcmp(n->str, tv[i].name)) continue;
        if (d_ty(cc, d_ty(cc, cc->t_thread)->ref)->kind != TY_SOU)
            d_fail(cc, n->line, n->col, "%s is read from the kernel's struct task_struct: it needs the kernel's types "
                   "(BTF, from --vmlinuz)", n->str);
        d_node *e = d_node_new(cc, N_IDENT, n->line, n->col);
        e->str = "curthread";
        for (int k = 0; k < 3 && tv[i].path[k]; k++) {
            d_node *m = d_node_new(cc, k == 2 ? N_DOT : N_ARROW, n->line, n->col);
            m->str = tv[i].path[k];
            m->a = e;
            e = m;
        }
        lower_to(cc, n, e);
        return 1;
    }
    return 0;
}

/* The clause's probes: how many there are, how many are fbt entry probes, how many fire at a
 * function's boundary (fbt or syscall, entry or return: the return address is at [rsp]). */
static void clause_sites(d_cc *cc, int *entries, int *bounds, const d_pmatch **other)
{
    *entries = *bounds = 0;
    *other = NULL;
    for (int i = 0; i < cc->npm; i++) {
        const d_pmatch *p = &cc->pm[i];
        int fbt = !strcmp(p->prov, "fbt"), sys = !strcmp(p->prov, "syscall");
        int entry = fbt && !strcmp(p->name, "entry");
        int bound = (fbt || sys) && (!strcmp(p->name, "entry") || !strcmp(p->name, "return"));
        *entries += entry;
        *bounds += bound;
        if (!*other && !bound) *other = p;
    }
}

/* n becomes *(ty *)addr: guest memory read through the checked loads at the firing. */
static void lower_to_mem(d_cc *cc, d_node *n, d_node *addr, int ty)
{
    d_node *cast = d_node_new(cc, N_CAST, n->line, n->col);
    cast->ty = d_ty_ptr(cc, ty);
    cast->a = addr;
    d_node *deref = d_node_new(cc, N_UNARY, n->line, n->col);
    deref->op = TK_MUL;
    deref->a = cast;
    lower_to(cc, n, deref);
}

/* n becomes the 8-byte stack slot [rsp + off] of type ty, read through the guest-memory path at
 * the firing: at an fbt entry the return address is at [rsp] and the C arguments past the sixth
 * at [rsp+8], [rsp+16], ... (the x86-64 SysV ABI). Costs nothing at firings that do not read it. */
static void stack_slot(d_cc *cc, d_node *n, uint32_t off, int ty)
{
    d_node *sp = d_node_new(cc, N_IDENT, n->line, n->col);
    sp->str = "regs_sp";
    sp->vk = VK_BUILTIN;
    sp->var = HVT_DIF_V_REGS_SP;
    sp->ty = cc->t_u64;
    d_node *addr = sp;
    if (off) {
        d_node *o = d_node_new(cc, N_INT, n->line, n->col);
        o->ival = off;
        o->ty = cc->t_u64;
        addr = d_node_new(cc, N_BIN, n->line, n->col);
        addr->op = TK_ADD;
        addr->a = sp;
        addr->b = o;
    }
    lower_to_mem(cc, n, addr, ty);
}

/* arg6 .. arg9 (args[6..9] typed ty): on the stack at fbt entry probes, 0 at every other
 * probe (as DTrace's, which have at most six arguments there); a clause matching both kinds
 * cannot say which at compile time. */
int d_sema_stack_arg(d_cc *cc, d_node *n, int idx, int ty)
{
    if (idx < 6) return 0;
    int entries, bounds;
    const d_pmatch *other;
    clause_sites(cc, &entries, &bounds, &other);
    if (entries && entries < cc->npm) {
        const d_pmatch *p = NULL;
        for (int i = 0; i < cc->npm && !p; i++)
            if (strcmp(cc->pm[i].prov, "fbt") || strcmp(cc->pm[i].name, "entry")) p = &cc->pm[i];
        d_fail(cc, n->line, n->col, "arg%d is read from the stack at fbt entry probes only, and this clause also matches "
               "%s:%s:%s:%s: use a narrower description", idx, p->prov, p->mod, p->func, p->name);
    }
    if (entries) {
        stack_slot(cc, n, 8u * (uint32_t)(idx - 5), ty);
    } else {
        n->kind = N_INT;
        n->vk = VK_CONST;
        n->ival = 0;
        n->ty = ty;
    }
    return 1;
}

/* caller: the return address at [rsp] where the probe fires on a function's boundary; elsewhere
 * (profile, tick, BEGIN, END, ERROR) finding it needs the host's unwinder. */
static void caller_var(d_cc *cc, d_node *n)
{
    int entries, bounds;
    const d_pmatch *other;
    clause_sites(cc, &entries, &bounds, &other);
    if (other)
        d_fail(cc, n->line, n->col, "caller is known to hvtrace at fbt and syscall probes only, and this clause matches "
               "%s:%s:%s:%s (use stack())", other->prov, other->mod, other->func, other->name);
    stack_slot(cc, n, 0, cc->t_u64);
}

/* the built-ins the compiler turns into loads: never assignable, whatever the probes or types */
static int is_lowered_var(const char *s)
{
    return !strcmp(s, "ppid") || !strcmp(s, "uid") || !strcmp(s, "gid") || !strcmp(s, "caller");
}

static int builtin_var(d_cc *cc, d_node *n)
{
    const char *s = n->str;
    if (s[0] == 'a' && s[1] == 'r' && s[2] == 'g' && s[3] >= '0' && s[3] <= '9' && !s[4]) {
        if (d_xl_stable_arg(cc, n, s[3] - '0', 0)) return 1;
        n->vk = VK_BUILTIN;
        n->var = HVT_DIF_V_ARG0 + (s[3] - '0');
        n->ty = cc->t_i64;
        d_sema_stack_arg(cc, n, s[3] - '0', cc->t_i64);
        return 1;
    }
    if (task_var(cc, n)) return 1;
    if (d_xl_stable_name(cc, n) || d_xl_curvar(cc, n)) return 1;
    if (!strcmp(s, "caller")) {
        caller_var(cc, n);
        return 1;
    }
    for (int i = 0; refused_vars[i].name; i++)
        if (!strcmp(refused_vars[i].name, s))
            d_fail(cc, n->line, n->col, "%s is not supported by hvtrace (%s)", s, refused_vars[i].why);
    for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
        if (!strcmp(builtins[i].name, s)) {
            n->vk = VK_BUILTIN;
            n->var = builtins[i].v;
            n->ty = *(int *)((char *)cc + builtins[i].tyoff);
            return 1;
        }
    for (int i = 0; unsupported_vars[i]; i++)
        if (!strcmp(unsupported_vars[i], s))
            d_fail(cc, n->line, n->col, "built-in variable %s is not supported by hvtrace", s);
    return 0;
}

/* ---- helpers ---- */
static const char *opstr(int op) { return op == TK_COMMA ? "," : d_tok_name(op); }

int d_ty_promote(d_cc *cc, int t)
{
    const d_type *y = d_ty(cc, t);
    if (y->kind == TY_SYM) return cc->t_u64;
    if (y->kind == TY_INT && y->size < 4) return cc->t_int;
    return t;
}

/* C's usual arithmetic conversions */
int d_ty_arith(d_cc *cc, int a, int b)
{
    a = d_ty_promote(cc, a);
    b = d_ty_promote(cc, b);
    if (a == b) return a;
    const d_type *x = d_ty(cc, a), *y = d_ty(cc, b);
    if (x->size == y->size) {
        if (x->uns == y->uns) return a;
        return x->uns ? a : b;
    }
    return x->size > y->size ? a : b;
}

static uint64_t norm(const d_cc *cc, uint64_t v, int t)
{
    const d_type *y = d_ty(cc, t);
    if (y->kind != TY_INT || y->size >= 8 || y->size == 0) return v;
    unsigned bits = y->size * 8;
    uint64_t m = (1ull << bits) - 1;
    v &= m;
    if (!y->uns && (v >> (bits - 1))) v |= ~m;
    return v;
}

/* DTrace's own integer constants (dtrace-utils' D library, unistd.d: int inlines): the fault numbers
 * ERROR's arg4 carries (include/hvt_dif.h). */
static int dtrace_const(const char *name, int64_t *v)
{
    static const struct { const char *name; int64_t v; } k[] = {
        {"DTRACEFLT_UNKNOWN", HVT_DTRACEFLT_UNKNOWN}, {"DTRACEFLT_BADADDR", HVT_DTRACEFLT_BADADDR},
        {"DTRACEFLT_BADALIGN", HVT_DTRACEFLT_BADALIGN}, {"DTRACEFLT_ILLOP", HVT_DTRACEFLT_ILLOP},
        {"DTRACEFLT_DIVZERO", HVT_DTRACEFLT_DIVZERO}, {"DTRACEFLT_NOSCRATCH", HVT_DTRACEFLT_NOSCRATCH},
        {"DTRACEFLT_KPRIV", HVT_DTRACEFLT_KPRIV}, {"DTRACEFLT_UPRIV", HVT_DTRACEFLT_UPRIV},
        {"DTRACEFLT_TUPOFLOW", HVT_DTRACEFLT_TUPOFLOW}, {"DTRACEFLT_BADSTACK", HVT_DTRACEFLT_BADSTACK},
        /* dtrace-utils' io.d: bufinfo_t's b_flags */
        {"B_BUSY", 0x1}, {"B_DONE", 0x2}, {"B_ERROR", 0x4}, {"B_PAGEIO", 0x10}, {"B_PHYS", 0x20},
        {"B_READ", 0x40}, {"B_WRITE", 0x100}, {"B_ASYNC", 0x400}};
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcmp(k[i].name, name)) {
            *v = k[i].v;
            return 1;
        }
    return 0;
}

static void set_const(d_cc *cc, d_node *n, uint64_t v, int t)
{
    n->kind = N_INT;
    n->vk = VK_CONST;
    n->ty = t;
    n->ival = norm(cc, v, t);
    n->a = n->b = n->c = NULL;
}

int d_sema_int_const(d_cc *cc, d_node *n, int64_t *v)
{
    (void)cc;
    if (n->vk != VK_CONST) return 0;
    *v = (int64_t)n->ival;
    return 1;
}

static int is_str(d_cc *cc, int t) { return d_ty(cc, t)->kind == TY_STR || d_ty_is_chararray(cc, t); }
static int is_ptr(d_cc *cc, int t) { return d_ty(cc, t)->kind == TY_PTR; }

d_node *d_sema_tostr(d_cc *cc, d_node *n)
{
    if (d_ty(cc, n->ty)->kind == TY_STR) return n;
    if (!d_ty_is_chararray(cc, n->ty) || n->vk != VK_MEM) return NULL;
    d_node *s = d_node_new(cc, N_TOSTR, n->line, n->col);
    s->a = n;
    s->ty = cc->t_str;
    s->side = n->side;
    return s;
}

d_node *d_sema_rvalue(d_cc *cc, d_node *n)
{
    const d_type *t = d_ty(cc, n->ty);
    if (t->kind == TY_ARRAY && n->vk == VK_MEM) {
        n->decay = 1;
        n->ty = d_ty_ptr(cc, t->ref);
        if (n->user) n->ty = d_ty_user(cc, n->ty);
    }
    return n;
}

/* sema, then the value as a scalar or string operand */
static d_node *operand(d_cc *cc, d_node *n)
{
    d_sema_expr(cc, n);
    return d_sema_rvalue(cc, n);
}

static _Noreturn void incompat(d_cc *cc, d_node *at, int op, int a, int b)
{
    d_fail(cc, at->line, at->col, "operands have incompatible types: \"%s\" %s \"%s\"", d_ty_str(cc, a), opstr(op),
           d_ty_str(cc, b));
}

/* ---- lvalues: variables (created by a first assignment), never kernel memory ---- */
static int var_type_of(d_cc *cc, d_node *rhs)
{
    const d_type *t = d_ty(cc, rhs->ty);
    if (d_ty_is_chararray(cc, rhs->ty)) return cc->t_str;
    if (t->kind == TY_INT || t->kind == TY_PTR || t->kind == TY_STR || t->kind == TY_SYM) return rhs->ty;
    d_fail(cc, rhs->line, rhs->col, "a variable cannot hold a value of type \"%s\"", d_ty_str(cc, rhs->ty));
}

void d_sema_keys(d_cc *cc, d_node **keys, const char *pre, const char *name, int *nkeys, int *kt, int create);

/* self->a[k...], DTrace's thread-local associative array, is the associative array named
 * "self->a" (no D identifier can clash with it) keyed by (tid, k...): the same dynamic variable
 * space and lifetime as the self-> scalars, which are keyed by the tid too. n, an N_INDEX, is
 * rewritten so; 0 when it is no such array (this->, or self->p[i] with p a pointer). */
int d_self_assoc_name(const char *name) { return !strncmp(name, "self->", 6); }

int d_sema_self_assoc(d_cc *cc, d_node *n)
{
    d_node *base = n->a;
    if (base->kind != N_SELF || d_var_find(cc, HVT_DIF_VK_THREAD, base->str)) return 0;
    size_t len = strlen(base->str) + 7;
    char *name = d_alloc(cc, len);
    snprintf(name, len, "self->%s", base->str);
    base->kind = N_IDENT;
    base->str = name;
    d_node *tid = d_node_new(cc, N_IDENT, n->line, n->col);
    tid->str = "tid";
    tid->next = n->b;
    n->b = tid;
    return 1;
}

/* A scalar array named without an index: hvt has its elements only. Its address (DTrace
 * lets a program point into its own variables) is refused: hvt's pointers are guest addresses
 * and every load through one reads the guest. */
_Noreturn void d_sema_array_whole(d_cc *cc, const d_node *n)
{
    d_fail(cc, n->line, n->col, "%s%s is a scalar array: use its elements (%s%s[i]); the address of a D variable is not "
           "supported by hvtrace (its pointers are guest addresses)", n->kind == N_THIS ? "this->" : "",
           n->str, n->kind == N_THIS ? "this->" : "", n->str);
}

/* Resolve the target of an assignment or ++/--; rhs (NULL for ++/--) types a new variable. */
static void lvalue(d_cc *cc, d_node *l, d_node *rhs, int op)
{
    int kind = l->kind == N_SELF ? HVT_DIF_VK_THREAD : l->kind == N_THIS ? HVT_DIF_VK_LOCAL : HVT_DIF_VK_GLOBAL;
    if (l->kind == N_IDENT || l->kind == N_SELF || l->kind == N_THIS) {
        if (l->kind == N_IDENT && (is_lowered_var(l->str) || builtin_var(cc, l) || d_inline_find(cc, l->str) || !strcmp(l->str, "args")))
            d_fail(cc, l->line, l->col, "operator %s can only be applied to a writable variable", opstr(op));
        d_var *v = d_var_find(cc, kind, l->str);
        if (v && v->kind == HVT_DIF_VK_ASSOC)
            d_fail(cc, l->line, l->col, "%s is an associative array: it needs a key", l->str);
        if (v && v->nelem) d_sema_array_whole(cc, l);
        if (!v) {
            /* ++ and -- declare the variable as DTrace does: an int64_t that was 0 */
            int inc = op == TK_INC || op == TK_DEC;
            if (op != TK_ASGN && !inc)
                d_fail(cc, l->line, l->col, "%s%s has not yet been declared or assigned",
                       kind == HVT_DIF_VK_THREAD ? "self->" : kind == HVT_DIF_VK_LOCAL ? "this->" : "", l->str);
            d_var_add(cc, kind, l->str, inc ? cc->t_i64 : var_type_of(cc, rhs), l->line, l->col);
            v = &cc->vars[cc->nvars - 1];
        }
        l->vk = VK_VAR;
        l->var = (int)(v - cc->vars);
        l->ty = v->ty;
        return;
    }
    if (l->kind == N_INDEX) d_sema_self_assoc(cc, l);
    if (l->kind == N_INDEX && l->a->kind == N_IDENT && strcmp(l->a->str, "args") &&
        !d_var_find(cc, HVT_DIF_VK_GLOBAL, l->a->str) && !d_inline_find(cc, l->a->str) && !builtin_var(cc, l->a)) {
        if (op != TK_ASGN)
            d_fail(cc, l->line, l->col, "%s has not yet been declared or assigned", l->a->str);
        int nk = 0, kt[HVT_DIF_TUPLE_MAX];
        d_sema_keys(cc, &l->b, "", l->a->str, &nk, kt, 1);
        int vi = d_var_add(cc, HVT_DIF_VK_ASSOC, l->a->str, var_type_of(cc, rhs), l->line, l->col);
        cc->vars[vi].nkeys = nk;
        memcpy(cc->vars[vi].keys, kt, sizeof kt);
        l->vk = VK_VAR;
        l->var = vi;
        l->ty = cc->vars[vi].ty;
        l->side = 1;
        return;
    }
    if (l->kind == N_INDEX && (l->a->kind == N_SELF || l->a->kind == N_THIS) &&
        !d_var_find(cc, l->a->kind == N_SELF ? HVT_DIF_VK_THREAD : HVT_DIF_VK_LOCAL, l->a->str))
        d_fail(cc, l->line, l->col, "%s associative arrays are not supported by hvtrace",
               l->a->kind == N_SELF ? "thread-local" : "clause-local");
    if (l->kind == N_AGG || (l->kind == N_INDEX && l->a->kind == N_AGG))
        d_fail(cc, l->line, l->col, "operator %s cannot be applied to an aggregation: use @a = func(...)", opstr(op));
    d_sema_expr(cc, l);
    if (l->vk == VK_VAR) return;
    if (l->vk == VK_MEM)
        d_fail(cc, l->line, l->col, "operator %s can only be applied to a writable variable", opstr(op));
    d_fail(cc, l->line, l->col, "operator %s requires modifiable lvalue as an operand", opstr(op));
}

static void check_assign(d_cc *cc, d_node *n, int lt, d_node *r)
{
    if (n->op == TK_ASGN) {
        if (!d_ty_compat(cc, lt, r->ty) &&
            !(is_ptr(cc, lt) && r->vk == VK_CONST && r->ival == 0))
            incompat(cc, n, n->op, lt, r->ty);
        return;
    }
    int ok = d_ty_is_int(cc, lt) && d_ty_is_int(cc, r->ty);
    n->var = ok ? (n->op == TK_LSH_EQ || n->op == TK_RSH_EQ ? d_ty_promote(cc, lt) : d_ty_arith(cc, lt, r->ty)) : -1;
    if ((n->op == TK_ADD_EQ || n->op == TK_SUB_EQ) && is_ptr(cc, lt) && d_ty_is_int(cc, r->ty)) ok = 1;
    if (!ok) incompat(cc, n, n->op, lt, r->ty);
    if ((n->op == TK_DIV_EQ || n->op == TK_MOD_EQ) && r->vk == VK_CONST && !norm(cc, r->ival, n->var))
        d_fail(cc, n->line, n->col, "expression contains division by zero");
}

/* ---- constant folding ---- */
static int fold_bin(d_cc *cc, d_node *n, int rt, int ot)
{
    d_node *a = n->a, *b = n->b;
    if (a->vk != VK_CONST || b->vk != VK_CONST) return 0;
    uint64_t x = a->ival, y = b->ival, r;
    int uns = d_ty(cc, ot)->uns;
    switch (n->op) {
    case TK_ADD: r = x + y; break;
    case TK_SUB: r = x - y; break;
    case TK_MUL: r = x * y; break;
    case TK_DIV: case TK_MOD:
        if (!norm(cc, y, ot)) d_fail(cc, n->line, n->col, "expression contains division by zero");
        if (uns) r = n->op == TK_DIV ? x / y : x % y;
        else if ((int64_t)y == -1) r = n->op == TK_DIV ? -x : 0;
        else r = n->op == TK_DIV ? (uint64_t)((int64_t)x / (int64_t)y) : (uint64_t)((int64_t)x % (int64_t)y);
        break;
    case TK_BAND: r = x & y; break;
    case TK_BOR: r = x | y; break;
    case TK_XOR: r = x ^ y; break;
    case TK_LSH: r = x << (y & 63); break;
    case TK_RSH: r = uns ? x >> (y & 63) : (uint64_t)((int64_t)x >> (y & 63)); break;
    case TK_EQ: r = x == y; break;
    case TK_NE: r = x != y; break;
    case TK_LT: r = uns ? x < y : (int64_t)x < (int64_t)y; break;
    case TK_LE: r = uns ? x <= y : (int64_t)x <= (int64_t)y; break;
    case TK_GT: r = uns ? x > y : (int64_t)x > (int64_t)y; break;
    case TK_GE: r = uns ? x >= y : (int64_t)x >= (int64_t)y; break;
    case TK_LAND: r = x && y; break;
    case TK_LOR: r = x || y; break;
    case TK_LXOR: r = !x != !y; break;
    default: return 0;
    }
    set_const(cc, n, r, rt);
    /* DTrace folds integer constants in 64 bits and keeps every bit, whatever the type says:
     * (1 << 63) - 1 is INT64_MAX, not an int's -1 (dt_node_op2's uintmax_t arithmetic). A
     * cast still cuts the value to its type. */
    if (n->op != TK_EQ && n->op != TK_NE && n->op != TK_LT && n->op != TK_LE && n->op != TK_GT &&
        n->op != TK_GE && n->op != TK_LAND && n->op != TK_LOR && n->op != TK_LXOR)
        n->ival = r;
    return 1;
}

/* ---- binary operators ---- */
static void sema_bin(d_cc *cc, d_node *n)
{
    int op = n->op;
    if (op == TK_COMMA) {
        d_sema_expr(cc, n->a);
        operand(cc, n->b);
        n->ty = n->b->ty;
        n->side = 1;
        return;
    }
    d_sema_expr(cc, n->a);
    d_sema_expr(cc, n->b);
    d_node *a = n->a, *b = n->b;
    n->side = a->side | b->side;
    int cmp = op == TK_EQ || op == TK_NE || op == TK_LT || op == TK_LE || op == TK_GT || op == TK_GE;
    if (cmp && (is_str(cc, a->ty) || is_str(cc, b->ty))) {
        d_node *sa = d_sema_tostr(cc, a), *sb = d_sema_tostr(cc, b);
        if (!sa || !sb) incompat(cc, n, op, a->ty, b->ty);
        n->a = sa;
        n->b = sb;
        n->ty = cc->t_int;
        n->var = 1; /* a string comparison */
        return;
    }
    a = d_sema_rvalue(cc, a);
    b = d_sema_rvalue(cc, b);
    int ta = a->ty, tb = b->ty;
    if (op == TK_LAND || op == TK_LOR || op == TK_LXOR) {
        if (!d_ty_is_scalar(cc, ta) || !d_ty_is_scalar(cc, tb))
            d_fail(cc, n->line, n->col, "operator %s requires operands of scalar type", opstr(op));
        n->ty = cc->t_int;
        fold_bin(cc, n, cc->t_int, cc->t_int);
        return;
    }
    if (cmp) {
        n->ty = cc->t_int;
        if (d_ty_is_int(cc, ta) && d_ty_is_int(cc, tb)) {
            int ct = d_ty_arith(cc, ta, tb);
            n->var = d_ty(cc, ct)->uns ? 2 : 0;
            fold_bin(cc, n, cc->t_int, ct);
            return;
        }
        if ((is_ptr(cc, ta) || d_ty_is_int(cc, ta)) && (is_ptr(cc, tb) || d_ty_is_int(cc, tb))) {
            if (is_ptr(cc, ta) && is_ptr(cc, tb) && !d_ty_compat(cc, ta, tb)) incompat(cc, n, op, ta, tb);
            n->var = 2; /* pointers compare unsigned */
            return;
        }
        incompat(cc, n, op, ta, tb);
    }
    if (op == TK_ADD || op == TK_SUB) {
        if (is_ptr(cc, ta) && d_ty_is_int(cc, tb)) {
            n->ty = ta;
            n->var = 1; /* pointer arithmetic: scale b */
            return;
        }
        if (op == TK_ADD && d_ty_is_int(cc, ta) && is_ptr(cc, tb)) {
            n->a = b, n->b = a; /* p + i */
            n->ty = tb;
            n->var = 1;
            return;
        }
        if (op == TK_SUB && is_ptr(cc, ta) && is_ptr(cc, tb)) {
            if (!d_ty_compat(cc, ta, tb)) incompat(cc, n, op, ta, tb);
            n->ty = cc->t_long;
            n->var = 2; /* a difference of pointers: divide by the size */
            return;
        }
    }
    int isint = op == TK_MOD || op == TK_BAND || op == TK_BOR || op == TK_XOR || op == TK_LSH || op == TK_RSH;
    if (!d_ty_is_int(cc, ta) || !d_ty_is_int(cc, tb))
        d_fail(cc, n->line, n->col, "operator %s requires operands of %s type", opstr(op), isint ? "integral" : "arithmetic");
    if (op == TK_LSH || op == TK_RSH) {
        n->ty = d_ty_promote(cc, ta);
        fold_bin(cc, n, n->ty, n->ty);
        return;
    }
    n->ty = d_ty_arith(cc, ta, tb);
    if ((op == TK_DIV || op == TK_MOD) && b->vk == VK_CONST && !norm(cc, b->ival, n->ty))
        d_fail(cc, n->line, n->col, "expression contains division by zero");
    fold_bin(cc, n, n->ty, n->ty);
}

/* ---- the rest ---- */
/* A kernel global by name, DTrace's `sym (or `vmlinux`sym, `kernel`sym): the object at the
 * symbol's address in the running kernel (the image's link address plus the KASLR slide the
 * hypervisor reports), typed from the kernel's BTF VAR of that name, read through the checked
 * guest loads like any pointer. A symbol BTF does not type (pahole encodes per-CPU variables,
 * and globals only when asked) can be used through its address: &`sym is a char *
 * (addr_only: n is the operand of unary &). */
static int is_kernel_global(const d_node *n) { return n->kind == N_IDENT && n->str && strchr(n->str, '`') != NULL; }
static void kernel_global(d_cc *cc, d_node *n, int addr_only)
{
    const char *q = strrchr(n->str, '`'), *sym = q + 1;
    size_t modlen = (size_t)(q - n->str);
    if (modlen && !(modlen == 7 && !strncmp(n->str, "vmlinux", 7)) && !(modlen == 6 && !strncmp(n->str, "kernel", 6)))
        d_fail(cc, n->line, n->col, "failed to resolve %s: only the kernel's own symbols (`sym, vmlinux`sym), not a module's", n->str);
    const ksym_table *ks = cc->opt->ksyms;
    if (!ks) d_fail(cc, n->line, n->col, "failed to resolve %s: no kernel symbols (give --vmlinuz)", n->str);
    int64_t i = ksym_find(ks, sym);
    if (i < 0) d_fail(cc, n->line, n->col, "failed to resolve %s: no such kernel symbol", n->str);
    if (ks->syms[i].abs)
        d_fail(cc, n->line, n->col, "%s is a per-CPU variable: its address differs on every CPU (not supported)", n->str);
    uint32_t var = cc->opt->btf ? d_btf_var(cc, sym) : 0;
    btf_type bt;
    int ty;
    if (var && btf_type_get(cc->opt->btf, var, &bt) == 0)
        ty = d_ty_btf(cc, bt.type);
    else if (addr_only)
        ty = cc->t_char;
    else
        d_fail(cc, n->line, n->col, "%s has no type in the kernel's BTF: use its address, e.g. *(unsigned long *)&%s",
               n->str, n->str);
    d_node *a = d_node_new(cc, N_INT, n->line, n->col);
    a->ival = ks->syms[i].addr + (uint64_t)cc->opt->kslide;
    a->ty = cc->t_u64;
    lower_to_mem(cc, n, a, ty);
}

static void sema_unary(d_cc *cc, d_node *n)
{
    int op = n->op;
    if (op == TK_INC || op == TK_DEC) {
        lvalue(cc, n->a, NULL, op);
        if (!d_ty_is_int(cc, n->a->ty) && !is_ptr(cc, n->a->ty))
            d_fail(cc, n->line, n->col, "operator %s requires an operand of scalar type", opstr(op));
        n->ty = n->a->ty;
        n->side = 1;
        return;
    }
    if (op == TK_BAND) {
        if (is_kernel_global(n->a))
            kernel_global(cc, n->a, 1);     /* analysed as it is lowered */
        else
            d_sema_expr(cc, n->a);
        if (n->a->vk == VK_VAR) d_fail(cc, n->line, n->col, "cannot take address of dynamic variable");
        if (n->a->vk != VK_MEM) d_fail(cc, n->line, n->col, "unacceptable operand for unary & operator");
        if (n->a->bitsz) d_fail(cc, n->line, n->col, "cannot take address of bit-field");
        n->ty = d_ty_ptr(cc, n->a->ty);
        n->side = n->a->side;
        return;
    }
    d_node *a = operand(cc, n->a);
    n->side = a->side;
    const d_type *t = d_ty(cc, a->ty);
    if (op == TK_MUL) {
        if (t->kind != TY_PTR) d_fail(cc, n->line, n->col, "cannot dereference non-pointer type");
        const d_type *p = d_ty(cc, t->ref);
        if (p->kind == TY_VOID) d_fail(cc, n->line, n->col, "cannot dereference pointer to void");
        if (p->kind == TY_FUNC) d_fail(cc, n->line, n->col, "cannot dereference pointer to function");
        n->vk = VK_MEM;
        n->user = t->user;
        n->ty = n->user ? d_ty_user(cc, t->ref) : t->ref;
        return;
    }
    if (op == TK_LNEG) {
        if (!d_ty_is_scalar(cc, a->ty)) d_fail(cc, n->line, n->col, "operator ! requires an operand of scalar type");
        n->ty = cc->t_int;
        if (a->vk == VK_CONST) set_const(cc, n, !a->ival, cc->t_int);
        return;
    }
    if (!d_ty_is_int(cc, a->ty))
        d_fail(cc, n->line, n->col, "operator %s requires an operand of %s type", opstr(op),
               op == TK_BNEG ? "integral" : "arithmetic");
    n->ty = d_ty_promote(cc, a->ty);
    if (a->vk == VK_CONST)
        set_const(cc, n, op == TK_SUB ? -a->ival : op == TK_BNEG ? ~a->ival : a->ival, n->ty);
}

static void sema_member(d_cc *cc, d_node *n)
{
    d_node *x = d_xlate_member(cc, n);    /* io: args[i]->m, a translator's member */
    if (x) {
        lower_to(cc, n, x);
        return;
    }
    d_node *a = n->kind == N_ARROW ? operand(cc, n->a) : (d_sema_expr(cc, n->a), n->a);
    n->side = a->side;
    const d_type *t = d_ty(cc, a->ty); /* (d_type pointers do not survive new types) */
    int sou = a->ty, user = n->kind == N_ARROW ? t->user : a->user;
    if (n->kind == N_ARROW) {
        if (t->kind != TY_PTR) d_fail(cc, n->line, n->col, "operator -> must be applied to a pointer");
        sou = t->ref;
        if (d_ty(cc, sou)->kind == TY_XL) {
            d_xl_member(cc, n, a);
            return;
        }
        if (d_ty(cc, sou)->kind != TY_SOU)
            d_fail(cc, n->line, n->col, "operator -> cannot be applied to pointer to type \"%s\"; must be applied to a "
                   "struct or union pointer", d_ty_str(cc, sou));
    } else if (a->xlval && t->kind == TY_PTR && d_ty(cc, t->ref)->kind == TY_XL) {
        d_xl_member(cc, n, a);             /* xlate<T>(e).m */
        return;
    } else if (t->kind != TY_SOU || a->vk != VK_MEM)
        d_fail(cc, n->line, n->col, "operator . cannot be applied to type \"%s\"; must be applied to a struct or union",
               d_ty_str(cc, a->ty));
    const d_type *s = d_ty(cc, sou);
    if (!s->size)
        d_fail(cc, n->line, n->col, "operator %s cannot be applied to a forward declaration: no %s definition is "
               "available", n->kind == N_ARROW ? "->" : ".", d_ty_str(cc, sou));
    d_member m;
    if (d_ty_member(cc, sou, n->str, &m) < 0)
        d_fail(cc, n->line, n->col, "%s is not a member of %s", n->str, d_ty_str(cc, sou));
    n->vk = VK_MEM;
    n->user = (uint8_t)user;
    n->ty = n->user ? d_ty_user(cc, m.ty) : m.ty; /* a pointer read from user memory points there */
    n->off = m.off;
    n->bitoff = m.bitoff;
    n->bitsz = m.bitsz;
    n->unit = m.unit;
}

static void sema_cast(d_cc *cc, d_node *n)
{
    d_node *a = operand(cc, n->a);
    n->side = a->side;
    const d_type *to = d_ty(cc, n->ty), *from = d_ty(cc, a->ty);
    int ok = 0;
    if (to->kind == TY_VOID) ok = 1;
    else if (to->kind == TY_INT || to->kind == TY_PTR) ok = from->kind == TY_INT || from->kind == TY_PTR || from->kind == TY_SYM;
    if (!ok) d_fail(cc, n->line, n->col, "invalid cast expression: \"%s\" to \"%s\"", d_ty_str(cc, a->ty), d_ty_str(cc, n->ty));
    if (from->kind == TY_PTR && from->user) n->ty = d_ty_user(cc, n->ty); /* (T *)copyin(...) */
    if (a->vk == VK_CONST && to->kind != TY_VOID) set_const(cc, n, a->ival, n->ty);
}

static void sema_cond(d_cc *cc, d_node *n)
{
    d_node *c = operand(cc, n->a), *x = n->b, *y = n->c;
    d_sema_expr(cc, x);
    d_sema_expr(cc, y);
    n->side = c->side | x->side | y->side;
    if (!d_ty_is_scalar(cc, c->ty)) d_fail(cc, n->line, n->col, "operator ?: expression must be of scalar type");
    if (is_str(cc, x->ty) && is_str(cc, y->ty) && d_sema_tostr(cc, x) && d_sema_tostr(cc, y)) {
        n->b = d_sema_tostr(cc, x);
        n->c = d_sema_tostr(cc, y);
        n->ty = cc->t_str;
        return;
    }
    x = d_sema_rvalue(cc, x);
    y = d_sema_rvalue(cc, y);
    int tx = x->ty, ty = y->ty;
    if (d_ty_is_int(cc, tx) && d_ty_is_int(cc, ty)) {
        n->ty = d_ty_arith(cc, tx, ty);
    } else if (is_ptr(cc, tx) && (d_ty_compat(cc, tx, ty) || (y->vk == VK_CONST && !y->ival))) {
        n->ty = tx;
    } else if (is_ptr(cc, ty) && x->vk == VK_CONST && !x->ival) {
        n->ty = ty;
    } else
        d_fail(cc, n->line, n->col, "operator ?: operands must have compatible types");
    if (c->vk == VK_CONST && x->vk == VK_CONST && y->vk == VK_CONST) set_const(cc, n, c->ival ? x->ival : y->ival, n->ty);
}

void d_sema_index(d_cc *cc, d_node *n);
void d_sema_call(d_cc *cc, d_node *n);

void d_sema_expr(d_cc *cc, d_node *n)
{
    if (n->done) return;
    if (n->ty >= 0 && n->kind != N_INT && n->kind != N_CAST && n->kind != N_SIZEOF && n->kind != N_OFFSETOF &&
        n->kind != N_XLATE) return;
    switch (n->kind) {
    case N_INT:
        n->vk = VK_CONST;
        return;
    case N_STR:
        n->ty = cc->t_str;
        return;
    case N_IDENT: {
        d_inline *in = d_inline_find(cc, n->str);
        if (in) {
            d_node *e = d_node_copy(cc, in->expr), *next = n->next;
            int line = n->line, col = n->col;
            *n = *e;
            n->next = next;
            n->line = line;
            n->col = col;
            return;
        }
        if (builtin_var(cc, n)) return;
        d_var *v = d_var_find(cc, HVT_DIF_VK_GLOBAL, n->str);
        if (v) {
            if (v->kind == HVT_DIF_VK_ASSOC) d_fail(cc, n->line, n->col, "%s is an associative array: it needs a key", n->str);
            if (v->nelem) d_sema_array_whole(cc, n);
            n->vk = VK_VAR;
            n->var = (int)(v - cc->vars);
            n->ty = v->ty;
            return;
        }
        int64_t ev;
        int et;
        if (!strcmp(n->str, "NULL")) {     /* dtrace-utils' built-in `inline long NULL = 0;` */
            set_const(cc, n, 0, cc->t_long);
            return;
        }
        if (dtrace_const(n->str, &ev)) {
            set_const(cc, n, (uint64_t)ev, cc->t_int);
            return;
        }
        if (d_btf_enumval(cc, n->str, &ev, &et) == 0) {
            set_const(cc, n, (uint64_t)ev, et);
            return;
        }
        if (is_kernel_global(n)) {
            kernel_global(cc, n, 0);
            return;
        }
        if (!strcmp(n->str, "args")) d_fail(cc, n->line, n->col, "args[ ] needs an index: args[0] ... args[9]");
        d_fail(cc, n->line, n->col, "failed to resolve %s: Unknown variable name", n->str);
    }
    case N_SELF: case N_THIS: {
        int kind = n->kind == N_SELF ? HVT_DIF_VK_THREAD : HVT_DIF_VK_LOCAL;
        d_var *v = d_var_find(cc, kind, n->str);
        if (!v) d_fail(cc, n->line, n->col, "%s%s has not yet been declared or assigned", n->kind == N_SELF ? "self->" : "this->", n->str);
        if (v->nelem) d_sema_array_whole(cc, n);
        n->vk = VK_VAR;
        n->var = (int)(v - cc->vars);
        n->ty = v->ty;
        return;
    }
    case N_AGG:
        d_fail(cc, n->line, n->col, "aggregation @%s may only be used as @%s[keys] = func(...) or as an argument of "
               "printa( ), clear( ), trunc( ), normalize( ) or denormalize( )", n->str, n->str);
    case N_INDEX: d_sema_index(cc, n); return;
    case N_CALL: d_sema_call(cc, n); return;
    case N_UNARY: sema_unary(cc, n); return;
    case N_POST:
        lvalue(cc, n->a, NULL, n->op);
        if (!d_ty_is_int(cc, n->a->ty) && !is_ptr(cc, n->a->ty))
            d_fail(cc, n->line, n->col, "operator %s requires an operand of scalar type", opstr(n->op));
        n->ty = n->a->ty;
        n->side = 1;
        return;
    case N_BIN: sema_bin(cc, n); return;
    case N_ASSIGN: {
        /* a char array assigned is a string (DTrace would copy the array by value) */
        d_sema_expr(cc, n->b);
        d_node *r = d_sema_tostr(cc, n->b);
        if (!r) r = d_sema_rvalue(cc, n->b);
        n->b = r;
        if (d_ty(cc, r->ty)->kind == TY_VOID) d_fail(cc, r->line, r->col, "cannot assign a void expression");
        lvalue(cc, n->a, r, n->op);
        int lt = n->a->ty;
        if (d_ty(cc, lt)->kind == TY_STR) {
            if (n->op != TK_ASGN) incompat(cc, n, n->op, lt, r->ty);
            d_node *s = d_sema_tostr(cc, r);
            if (!s) incompat(cc, n, n->op, lt, r->ty);
            n->b = r = s;
        }
        check_assign(cc, n, lt, r);
        n->ty = lt;
        n->side = 1;
        return;
    }
    case N_COND: sema_cond(cc, n); return;
    case N_DOT: case N_ARROW: sema_member(cc, n); return;
    case N_CAST: sema_cast(cc, n); return;
    case N_XLATE: d_xl_xlate(cc, n); return;
    case N_SIZEOF: {
        int t = n->ty;
        if (n->a) {
            d_sema_expr(cc, n->a);
            t = n->a->ty;
            if (n->a->bitsz) d_fail(cc, n->line, n->col, "cannot apply sizeof to a bit-field");
        }
        int sz = d_ty_size(cc, t);
        if (sz <= 0) d_fail(cc, n->line, n->col, "cannot apply sizeof to an operand of unknown size");
        set_const(cc, n, (uint64_t)sz, cc->t_size);
        return;
    }
    case N_OFFSETOF: {
        d_member m;
        if (d_ty(cc, n->ty)->kind != TY_SOU) d_fail(cc, n->line, n->col, "offsetof operand must be a struct or union type");
        if (d_ty_member(cc, n->ty, n->str, &m) < 0)
            d_fail(cc, n->line, n->col, "%s is not a member of %s", n->str, d_ty_str(cc, n->ty));
        if (m.bitsz) d_fail(cc, n->line, n->col, "cannot take offset of a bit-field: %s", n->str);
        set_const(cc, n, m.off, cc->t_size);
        return;
    }
    case N_STRINGOF: {
        d_node *a = n->a;
        d_sema_expr(cc, a);
        n->side = a->side;
        n->ty = cc->t_str;
        d_node *s = d_sema_tostr(cc, a);
        if (s) {
            n->a = s;
            return;
        }
        d_sema_rvalue(cc, a);
        if (!d_ty_is_scalar(cc, a->ty))
            d_fail(cc, n->line, n->col, "cannot apply stringof to a value of type %s", d_ty_str(cc, a->ty));
        return;
    }
    default:
        d_fail(cc, n->line, n->col, "internal error: unexpected node %d", n->kind);
    }
}

void d_sema_predeclare(d_cc *cc, const d_node *n)
{
    for (; n; n = n->next) {
        const d_node *l = n->a;
        if ((n->kind == N_POST || (n->kind == N_UNARY && (n->op == TK_INC || n->op == TK_DEC))) && l &&
            (l->kind == N_IDENT || l->kind == N_SELF || l->kind == N_THIS)) {
            int kind = l->kind == N_SELF ? HVT_DIF_VK_THREAD : l->kind == N_THIS ? HVT_DIF_VK_LOCAL : HVT_DIF_VK_GLOBAL;
            if (!d_var_find(cc, kind, l->str) &&
                !(l->kind == N_IDENT && (is_lowered_var(l->str) || builtin_var(cc, (d_node *)l) ||
                                         d_inline_find(cc, l->str) || !strcmp(l->str, "args") ||
                                         d_var_find(cc, HVT_DIF_VK_ASSOC, l->str))))
                d_var_add(cc, kind, l->str, cc->t_i64, l->line, l->col);
        }
        d_sema_predeclare(cc, n->a);
        d_sema_predeclare(cc, n->b);
        d_sema_predeclare(cc, n->c);
    }
}

void d_sema_pred(d_cc *cc, d_node *p)
{
    operand(cc, p);
    if (!d_ty_is_scalar(cc, p->ty)) d_fail(cc, p->line, p->col, "predicate result must be of scalar type");
}
