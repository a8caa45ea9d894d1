/*
 * d_sema_act: what is not an operator: indexing (args[], associative arrays, pointers),
 * subroutine calls, actions (each becomes one d_action of its clause, in clause order),
 * aggregations (function, parameters and key types fixed by their first use; nbuckets the
 * way the hypervisor checks them), declarations and inlines, the types of args[].
 */
#include "d_int.h"
#include <string.h>
#include <stdio.h>
#include "hvt_probe.h"

/* ---- tuples: associative array and aggregation keys ---- */
/* stack(N), ustack(N[, strsize]) as an aggregation key: the hypervisor unwinds it (N frames,
 * default stackframes / ustackframes, at most HVT_DIF_STACKKEY_MAX) and aggregates on the
 * return addresses. */
static void stack_key(d_cc *cc, d_node *e)
{
    int user = e->str[0] == 'u', nargs = 0, max = user ? 2 : 1;
    for (d_node *a = e->b; a; a = a->next) nargs++;
    if (nargs > max)
        d_fail(cc, e->line, e->col, "%s( ) prototype mismatch: %d args passed, at most %d expected", e->str, nargs, max);
    int64_t frames = user ? cc->ustackframes : cc->stackframes;
    if (frames > HVT_DIF_STACKKEY_MAX) frames = HVT_DIF_STACKKEY_MAX;   /* the options' default */
    for (d_node *a = e->b; a; a = a->next) {
        int64_t v;
        d_sema_expr(cc, a);
        if (!d_sema_int_const(cc, a, &v) || v <= 0)
            d_fail(cc, a->line, a->col, "%s( ) argument #%d must be a non-zero positive integer constant", e->str,
                   a == e->b ? 1 : 2);
        if (a == e->b) {
            if (v > HVT_DIF_STACKKEY_MAX)
                d_fail(cc, a->line, a->col, "%s(%lld) as a key: the hypervisor keeps at most %d frames of a stack key",
                       e->str, (long long)v, HVT_DIF_STACKKEY_MAX);
            frames = v;
        }
    }
    if (!user && !cc->opt->korc)
        d_fail(cc, e->line, e->col, "stack( ) as a key needs the kernel's ORC tables (from the kernel image)");
    cc->uses_kstack |= !user;
    e->ty = d_ty_stack(cc, user, (uint32_t)frames);
    e->vk = VK_VAL;
}

void d_sema_keys(d_cc *cc, d_node **keys, const char *pre, const char *name, int *nkeys, int *kt, int create)
{
    int n = 0, hid = d_self_assoc_name(name); /* the thread's key, not counted in messages */
    for (d_node **k = keys; *k; k = &(*k)->next, n++) {
        d_node *e = *k;
        if (n == HVT_DIF_TUPLE_MAX)
            d_fail(cc, e->line, e->col, "%s%s[ ]: at most %d keys", pre, name, HVT_DIF_TUPLE_MAX - hid);
        if (e->kind == N_CALL && (!strcmp(e->str, "stack") || !strcmp(e->str, "ustack"))) {
            if (pre[0] != '@')
                d_fail(cc, e->line, e->col, "%s( ) as an associative array key is not supported by hvtrace (it is an "
                       "aggregation key)", e->str);
            stack_key(cc, e);
        } else {
            d_sema_expr(cc, e);
            d_node *s = d_sema_tostr(cc, e);
            if (s) {
                s->next = e->next;
                *k = e = s;
            } else
                d_sema_rvalue(cc, e);
        }
        if (!d_ty_is_scalar(cc, e->ty) && d_ty(cc, e->ty)->kind != TY_STR && d_ty(cc, e->ty)->kind != TY_STACK)
            d_fail(cc, e->line, e->col, "%s%s[ ] key #%d cannot be of type \"%s\"", pre, name, n + 1 - hid, d_ty_str(cc, e->ty));
        if (create) kt[n] = e->ty;
        else if (n < *nkeys && !d_ty_compat(cc, kt[n], e->ty))
            d_fail(cc, d_node_start(e)->line, d_node_start(e)->col, "%s%s[ ] key #%d is incompatible with prototype:\n\tprototype: %s\n\t      key: %s",
                   pre, name, n + 1 - hid, d_ty_str(cc, kt[n]), d_ty_str(cc, e->ty));
    }
    if (create) *nkeys = n;
    else if (n != *nkeys) {
        d_node *at = hid && *keys ? (*keys)->next : *keys;
        d_fail(cc, at ? at->line : 0, at ? at->col : 0, "%s%s[ ] prototype mismatch: %d key%spassed, %d expected", pre, name,
               n - hid, n - hid == 1 ? " " : "s ", *nkeys - hid);
    }
}

/* ---- args[] ---- */
/* A static tracepoint's probe function prototype: the BTF typedef btf_trace_EVENT is a pointer
 * to it (its first parameter is the tracepoint's void *__data, not an argument). 0: none. */
static uint32_t sdt_proto(d_cc *cc, const char *event)
{
    static const btf_info *memo_btf;
    static char memo_name[128];
    static uint32_t memo_proto;
    if (memo_btf == cc->btf && !strcmp(memo_name, event)) return memo_proto;
    uint32_t proto = 0;
    for (uint32_t id = 1; id < cc->btf->ntypes && !proto; id++) {
        btf_type t, pt, f;
        if (btf_type_get(cc->btf, id, &t) < 0 || t.kind != 8 /* TYPEDEF */ || strncmp(t.name, "btf_trace_", 10) ||
            strcmp(t.name + 10, event))
            continue;
        if (btf_type_get(cc->btf, t.type, &pt) == 0 && pt.kind == 2 /* PTR */ &&
            btf_type_get(cc->btf, pt.type, &f) == 0 && f.kind == 13 /* FUNC_PROTO */)
            proto = pt.type;
    }
    memo_btf = cc->btf;
    snprintf(memo_name, sizeof memo_name, "%s", event);
    memo_proto = proto;
    return proto;
}

static int probe_arg(d_cc *cc, const d_pmatch *p, int idx, int line, int col)
{
    if (cc->btf && !strcmp(p->prov, "sdt")) {
        uint32_t proto = sdt_proto(cc, p->name), pt;
        const char *pname;
        if (!proto) return cc->t_i64;
        if (btf_param(cc->btf, proto, (unsigned)idx + 1, &pt, &pname) < 0)
            d_fail(cc, line, col, "index %d is out of range for %s:%s:%s:%s args[ ]", idx, p->prov, p->mod, p->func, p->name);
        return d_ty_btf(cc, pt);
    }
    if (!cc->btf || strcmp(p->prov, "fbt")) return cc->t_i64;
    /* a module's function: typed from that module's own BTF only (the kernel may have a
     * function of the same name with another prototype); the kernel's from the kernel's */
    uint32_t klim = UINT32_MAX, lo = 1, hi = UINT32_MAX;
    for (int i = 0; i < cc->opt->nbtf_modules; i++)
        if (cc->opt->btf_modules[i].lo < klim) klim = cc->opt->btf_modules[i].lo;
    if (strcmp(p->mod, "kernel") && strcmp(p->mod, "vmlinux")) {
        const d_btf_module *m = NULL;
        for (int i = 0; i < cc->opt->nbtf_modules && !m; i++)
            if (!strcmp(cc->opt->btf_modules[i].name, p->mod)) m = &cc->opt->btf_modules[i];
        if (!m) return cc->t_i64;
        lo = m->lo;
        hi = m->hi;
    } else {
        hi = klim;
    }
    uint32_t fn = d_btf_func_in(cc, p->func, lo, hi);
    btf_type ft;
    if (!fn || btf_type_get(cc->btf, fn, &ft) < 0) return cc->t_i64;
    uint32_t proto = ft.type, pt;
    const char *pname;
    if (!strcmp(p->name, "entry")) {
        if (btf_param(cc->btf, proto, (unsigned)idx, &pt, &pname) < 0)
            d_fail(cc, line, col, "index %d is out of range for %s:%s:%s:%s args[ ]", idx, p->prov, p->mod, p->func, p->name);
        return pt ? d_ty_btf(cc, pt) : cc->t_i64; /* the "..." of a variadic function */
    }
    if (!strcmp(p->name, "return")) {
        btf_type pr;
        if (idx == 0) return cc->t_int; /* the return site's offset */
        if (idx > 1 || btf_type_get(cc->btf, proto, &pr) < 0 || d_ty(cc, d_ty_btf(cc, pr.type))->kind == TY_VOID)
            d_fail(cc, line, col, "index %d is out of range for %s:%s:%s:%s args[ ]", idx, p->prov, p->mod, p->func, p->name);
        return d_ty_btf(cc, pr.type);
    }
    return cc->t_i64;
}

int d_args_type(d_cc *cc, int idx, int line, int col)
{
    int t = -1;
    const d_pmatch *first = NULL;
    for (int i = 0; i < cc->npm; i++) {
        int u = probe_arg(cc, &cc->pm[i], idx, line, col);
        if (t >= 0 && u != t) {
            const d_pmatch *p = &cc->pm[i];
            d_fail(cc, line, col, "args[%d] has different types in the probes this clause matches: \"%s\" in %s:%s:%s:%s, "
                   "\"%s\" in %s:%s:%s:%s (use arg%d, or a narrower description)", idx, d_ty_str(cc, t), first->prov,
                   first->mod, first->func, first->name, d_ty_str(cc, u), p->prov, p->mod, p->func, p->name, idx);
        }
        if (t < 0) first = &cc->pm[i];
        t = u;
    }
    return t >= 0 ? t : cc->t_i64;
}

/* ---- indexing ---- */
/* An index into an array of nelem elements: an integer; a constant one at or past the end is
 * DTrace's compile-time error (checked, as dtrace-utils does, only where nelem > 1: arrays of
 * 0 or 1 element anchor variable-length data at the end of kernel structs); any other index
 * is checked when it runs (LDSA/STSA, CHKIDX). */
static void array_index(d_cc *cc, d_node *n, d_node *idx, uint32_t nelem)
{
    int64_t c;
    if (!d_ty_is_int(cc, idx->ty)) d_fail(cc, idx->line, idx->col, "operator [ ] requires an index of integral type");
    if (nelem > 1 && d_sema_int_const(cc, idx, &c) && (uint64_t)c >= nelem)
        d_fail(cc, n->line, n->col, "index outside array bounds: %llu, max is %u", (unsigned long long)c, nelem);
}

void d_sema_index(d_cc *cc, d_node *n)
{
    d_node *base = n->a;
    int nargs = 0;
    for (d_node *k = n->b; k; k = k->next) nargs++;
    if (d_sema_self_assoc(cc, n) && !d_var_find(cc, HVT_DIF_VK_GLOBAL, base->str))
        d_fail(cc, n->line, n->col, "%s has not yet been declared or assigned", base->str);
    if (base->kind == N_IDENT && !d_var_find(cc, HVT_DIF_VK_GLOBAL, base->str) && !d_inline_find(cc, base->str)) {
        if (!strcmp(base->str, "args")) {
            int64_t idx;
            if (nargs != 1)
                d_fail(cc, n->line, n->col, "args[ ] prototype mismatch: %d arg%spassed, 1 expected", nargs, nargs == 1 ? " " : "s ");
            d_sema_expr(cc, n->b);
            if (!d_sema_int_const(cc, n->b, &idx))
                d_fail(cc, n->b->line, n->b->col, "args[ ] argument #1 is incompatible with prototype:\n\tprototype: integer "
                       "constant\n\t argument: %s", d_ty_str(cc, n->b->ty));
            if (idx < 0 || idx > 9)
                d_fail(cc, n->b->line, n->b->col, "args[%lld]: the hypervisor gives the probes' arguments 0 to 9",
                       (long long)idx);
            if (d_xl_stable_arg(cc, n, (int)idx, 1)) return;
            n->vk = VK_BUILTIN;
            n->var = HVT_DIF_V_ARG0 + (int)idx;
            n->ty = d_args_type(cc, (int)idx, base->line, base->col);
            d_sema_stack_arg(cc, n, (int)idx, n->ty);
            return;
        }
        d_sema_expr(cc, base); /* a built-in (curthread[0]) or the right error */
    }
    if (base->kind == N_IDENT) {
        d_var *v = d_var_find(cc, HVT_DIF_VK_GLOBAL, base->str);
        if (v && v->kind == HVT_DIF_VK_ASSOC) {
            /* the keys may assign new variables: v does not survive them */
            int vi = (int)(v - cc->vars), nk = v->nkeys, kt[HVT_DIF_TUPLE_MAX];
            memcpy(kt, v->keys, sizeof kt);
            int nk_now = 0;
            for (d_node *k = n->b; k; k = k->next) nk_now++;
            if (v->nelem && nk_now != 2) /* self int a[N]: (tid, index) */
                d_fail(cc, n->line, n->col, "cannot access scalar %s as an associative array", base->str);
            d_sema_keys(cc, &n->b, "", base->str, &nk, kt, 0);
            if (cc->vars[vi].nelem) array_index(cc, n, n->b->next, cc->vars[vi].nelem);
            n->vk = VK_VAR;
            n->var = vi;
            n->ty = cc->vars[vi].ty;
            n->side = 1; /* the tuple */
            return;
        }
    }
    /* a scalar array's element: a[i], this->a[i] */
    d_var *sa = base->kind == N_IDENT ? d_var_find(cc, HVT_DIF_VK_GLOBAL, base->str) :
                base->kind == N_THIS ? d_var_find(cc, HVT_DIF_VK_LOCAL, base->str) : NULL;
    if (sa && sa->nelem) {
        int vi = (int)(sa - cc->vars);
        if (nargs != 1)
            d_fail(cc, n->line, n->col, "cannot access scalar %s as an associative array", base->str);
        d_sema_expr(cc, n->b);
        d_sema_rvalue(cc, n->b);
        array_index(cc, n, n->b, cc->vars[vi].nelem);
        n->vk = VK_VAR;
        n->var = vi;
        n->ty = cc->vars[vi].ty;
        n->side = n->b->side;
        return;
    }
    /* self->p[i], this->p[i] with p a pointer: *(p + i), as DTrace decides by the type */
    if ((base->kind == N_SELF || base->kind == N_THIS) &&
        !d_var_find(cc, base->kind == N_SELF ? HVT_DIF_VK_THREAD : HVT_DIF_VK_LOCAL, base->str))
        d_fail(cc, n->line, n->col, "%s associative arrays are not supported by hvtrace",
               base->kind == N_SELF ? "thread-local" : "clause-local");
    if (base->kind == N_AGG)
        d_fail(cc, n->line, n->col, "aggregation @%s may only be used as @%s[keys] = func(...)", base->str, base->str);
    d_sema_expr(cc, base);
    const d_type *bt = d_ty(cc, base->ty);
    uint32_t bound = bt->kind == TY_ARRAY ? bt->nelem : 0;
    d_sema_rvalue(cc, base);
    bt = d_ty(cc, base->ty);
    if (bt->kind != TY_PTR)
        d_fail(cc, n->line, n->col, "operator [ ] cannot be applied to a value of type \"%s\"", d_ty_str(cc, base->ty));
    int elem = bt->ref, user = bt->user; /* bt does not survive new types */
    if (nargs != 1) d_fail(cc, n->line, n->col, "operator [ ] takes one index here, not %d", nargs);
    d_sema_expr(cc, n->b);
    d_sema_rvalue(cc, n->b);
    if (!d_ty_is_int(cc, n->b->ty)) d_fail(cc, n->b->line, n->b->col, "operator [ ] requires an index of integral type");
    array_index(cc, n, n->b, bound);
    const d_type *et = d_ty(cc, elem);
    if (et->kind == TY_VOID || et->kind == TY_FUNC)
        d_fail(cc, n->line, n->col, "cannot index a pointer to %s", et->kind == TY_VOID ? "void" : "function");
    n->vk = VK_MEM;
    n->off = bound;    /* d_cg checks an index that is not constant against it (CHKIDX) */
    n->user = (uint8_t)user;
    n->ty = n->user ? d_ty_user(cc, elem) : elem;
    n->side = base->side | n->b->side;
}

/* ---- subroutines ---- */
static const char *const actions[] = {"trace", "printf", "printa", "stack", "ustack", "exit", "clear", "trunc",
                                      "normalize", "denormalize", "setopt", "step", "unstep", "stop", "speculate",
                                      "commit", "discard", NULL};
static const char *const unsupported[] = {
    "alloca", "bcopy", "copyinto", "copyout", "copyoutstr", "dirname", "substr", "index", "rindex", "strstr", "strchr",
    "strrchr", "strtok", "lltostr", "toupper", "tolower", "inet_ntoa", "inet_ntoa6", "inet_ntop", "htons", "htonl",
    "htonll", "ntohs", "ntohl", "ntohll", "rand", "progenyof", "getmajor", "getminor", "ddi_pathname", "mutex_owned",
    "mutex_owner", "mutex_type_adaptive", "mutex_type_spin", "rw_read_held", "rw_write_held", "rw_iswriter",
    "msgdsize", "msgsize", "cleanpath", "d_path", "link_ntop",
    "strtoll", "getf", "json", "uaddr", "usym", "umod", "ufunc", "mod", "print", "printm", "tracemem", "jstack",
    "freopen", "ftruncate", "pcap", "system", "raise", "panic", "breakpoint", "chill", NULL};

int d_aggfn_lookup(const char *name)
{
    static const char *const fns[] = {"", "count", "sum", "min", "max", "avg", "stddev", "quantize", "lquantize",
                                      "llquantize"};
    for (int i = 1; i < 10; i++)
        if (!strcmp(fns[i], name)) return i;
    return 0;
}

static int in_list(const char *const *l, const char *s)
{
    for (int i = 0; l[i]; i++)
        if (!strcmp(l[i], s)) return 1;
    return 0;
}

static d_node *nth(d_node *l, int i)
{
    while (l && i--) l = l->next;
    return l;
}

static int count_args(d_node *l)
{
    int n = 0;
    for (; l; l = l->next) n++;
    return n;
}

void d_argc_check(d_cc *cc, d_node *call, int lo, int hi)
{
    int n = count_args(call->b);
    if (n >= lo && n <= hi) return;
    const char *cmp = lo == hi ? "" : n < lo ? "at least " : "at most ";
    d_fail(cc, call->line, call->col, "%s( ) prototype mismatch: %d arg%spassed, %s%d expected", call->str, n,
           n == 1 ? " " : "s ", cmp, n < lo ? lo : hi);
}

_Noreturn void d_arg_type(d_cc *cc, const char *fn, int i, d_node *a, const char *proto)
{
    const d_node *s = d_node_start(a);
    d_fail(cc, s->line, s->col, "%s( ) argument #%d is incompatible with prototype:\n\tprototype: %s\n\t argument: %s", fn,
           i, proto, d_ty_str(cc, a->ty));
}

/* argument i (1-based) of call as a string; replaces it in the list */
d_node *d_str_arg(d_cc *cc, d_node *call, int i)
{
    d_node **p = &call->b;
    for (int k = 1; k < i; k++) p = &(*p)->next;
    d_node *a = *p;
    d_sema_expr(cc, a);
    d_node *s = d_sema_tostr(cc, a);
    if (!s) d_arg_type(cc, call->str, i, a, "string");
    s->next = a->next;
    *p = s;
    return s;
}

d_node *d_int_arg(d_cc *cc, d_node *call, int i, int ptr_ok)
{
    d_node *a = nth(call->b, i - 1);
    d_sema_expr(cc, a);
    d_sema_rvalue(cc, a);
    if (!d_ty_is_int(cc, a->ty) && !(ptr_ok && d_ty(cc, a->ty)->kind == TY_PTR))
        d_arg_type(cc, call->str, i, a, ptr_ok ? "pointer or integer" : "integer");
    return a;
}

void d_sema_call(d_cc *cc, d_node *n)
{
    const char *f = n->str;
    if (in_list(actions, f))
        d_fail(cc, n->line, n->col, "%s( ) is an action: it may only be used as a statement", f);
    if (d_aggfn_lookup(f))
        d_fail(cc, n->line, n->col, "%s( ) is an aggregating function: use it as @name[keys] = %s(...)", f, f);
    if (in_list(unsupported, f))
        d_fail(cc, n->line, n->col, "%s( ) is not supported by hvtrace", f);
    n->ty = cc->t_str;
    if (!strcmp(f, "__psargs") && n->raw) { /* psinfo_t's pr_psargs (d_xlate.c) */
        d_argc_check(cc, n, 2, 2);
        d_int_arg(cc, n, 1, 1);
        d_int_arg(cc, n, 2, 1);
    } else if (!strcmp(f, "copyinstr")) {
        d_argc_check(cc, n, 1, 2);
        if (n->b->next) d_fail(cc, n->b->next->line, n->b->next->col, "copyinstr( ) with a length is not supported by hvtrace");
        d_int_arg(cc, n, 1, 1);
    } else if (!strcmp(f, "strlen")) {
        d_argc_check(cc, n, 1, 1);
        d_str_arg(cc, n, 1);
        n->ty = cc->t_size;
    } else if (!strcmp(f, "strjoin")) {
        d_argc_check(cc, n, 2, 2);
        d_str_arg(cc, n, 1);
        d_str_arg(cc, n, 2);
    } else if (!strcmp(f, "basename")) {
        d_argc_check(cc, n, 1, 1);
        d_str_arg(cc, n, 1);
    } else if (!strcmp(f, "copyin")) {
        /* hvtrace reads user memory where it is instead of copying it: copyin( )'s value is
         * the user address, and what is read through it (*(int *)copyin(p, 4)) is read from
         * the process's address space */
        d_argc_check(cc, n, 2, 2);
        d_int_arg(cc, n, 1, 1);
        d_int_arg(cc, n, 2, 0);
        n->ty = d_ty_user(cc, cc->t_voidp);
    } else if (!strcmp(f, "speculation")) {
        d_argc_check(cc, n, 0, 0);
        n->ty = cc->t_int;
        n->side = 1; /* takes a speculation: evaluated exactly where written */
    } else if (!strcmp(f, "sym") || !strcmp(f, "func")) {
        d_argc_check(cc, n, 1, 1);
        d_int_arg(cc, n, 1, 1);
        n->ty = cc->t_sym;
    } else
        d_fail(cc, n->line, n->col, "undefined function name: %s", f);
    for (d_node *a = n->b; a; a = a->next) n->side |= a->side;
}

/* ---- recorded values ---- */
int d_val_of(d_cc *cc, int tid, d_val *v)
{
    const d_type *t = d_ty(cc, tid);
    switch (t->kind) {
    case TY_INT: *v = (d_val){t->uns ? D_V_UINT : D_V_INT, (uint8_t)(t->size ? t->size : 8)}; return 0;
    case TY_SYM: *v = (d_val){D_V_KSYM, 8}; return 0;
    case TY_STACK: *v = (d_val){t->user ? D_V_USTACK : D_V_KSTACK, (uint8_t)t->nelem}; return 0;
    case TY_PTR: *v = (d_val){D_V_PTR, 8}; return 0;
    case TY_STR: *v = (d_val){D_V_STR, 0}; return 0;
    default: return -1;
    }
}

/* ---- aggregations ---- */
d_aggsym *d_agg_find(d_cc *cc, const char *name)
{
    for (int i = 0; i < cc->naggs; i++)
        if (!strcmp(cc->aggs[i].name, name)) return &cc->aggs[i];
    return NULL;
}

static const char *aggfn_name(int fn)
{
    static const char *const fns[] = {"", "count", "sum", "min", "max", "avg", "stddev", "quantize", "lquantize",
                                      "llquantize"};
    return fn > 0 && fn < 10 ? fns[fn] : "?";
}

static int64_t const_arg(d_cc *cc, d_node *call, int i, const char *what)
{
    d_node *a = nth(call->b, i);
    int64_t v;
    d_sema_expr(cc, a);
    if (!d_sema_int_const(cc, a, &v))
        d_fail(cc, a->line, a->col, "%s( ) argument #%d must be %s", call->str, i, what);
    return v;
}

/* parameters and bucket count of an aggregating function; DTrace's checks and messages */
static void agg_params(d_cc *cc, d_node *call, int fn, int64_t *p, uint32_t *nb)
{
    memset(p, 0, 4 * sizeof *p);
    switch (fn) {
    case HVT_DIF_AGG_COUNT: case HVT_DIF_AGG_SUM: case HVT_DIF_AGG_MIN: case HVT_DIF_AGG_MAX: *nb = 1; return;
    case HVT_DIF_AGG_AVG: *nb = 2; return;
    case HVT_DIF_AGG_STDDEV: *nb = 4; return;
    case HVT_DIF_AGG_QUANTIZE: *nb = HVT_DIF_QUANT_BUCKETS; return;
    case HVT_DIF_AGG_LQUANTIZE: {
        int64_t base = const_arg(cc, call, 1, "an integer constant");
        if (base < INT32_MIN || base > INT32_MAX) d_fail(cc, call->line, call->col, "lquantize( ) argument #1 must be a 32-bit quantity");
        int64_t limit = const_arg(cc, call, 2, "an integer constant");
        if (limit < INT32_MIN || limit > INT32_MAX) d_fail(cc, call->line, call->col, "lquantize( ) argument #2 must be a 32-bit quantity");
        if (limit <= base) d_fail(cc, call->line, call->col, "lquantize( ) base (argument #1) must be less than limit (argument #2)");
        int64_t step = 1;
        if (count_args(call->b) > 3) {
            step = const_arg(cc, call, 3, "a non-zero positive integer constant");
            if (step <= 0) {
                d_node *a = nth(call->b, 3);
                d_fail(cc, a->line, a->col, "lquantize( ) argument #3 must be a non-zero positive integer constant");
            }
            if (step > UINT16_MAX) d_fail(cc, call->line, call->col, "lquantize( ) argument #3 must be a 16-bit quantity");
        }
        int64_t levels = (limit - base) / step;
        if (levels == 0)
            d_fail(cc, call->line, call->col, "lquantize( ) step (argument #3) too large: must have at least one quantization level");
        if (levels > UINT16_MAX)
            d_fail(cc, call->line, call->col, "lquantize( ) step (argument #3) too small: number of quantization levels must be a 16-bit quantity");
        /* DTrace's layout without its parameter word: one bucket below base, the levels, one
         * at or above base + levels * step */
        if (levels + 2 > HVT_DIF_LQUANT_MAX)
            d_fail(cc, call->line, call->col, "lquantize( ) has %lld buckets: hvtrace keeps at most %d (make the step larger)",
                   (long long)levels + 2, HVT_DIF_LQUANT_MAX);
        p[0] = base, p[1] = limit, p[2] = step;
        *nb = (uint32_t)(levels + 2);
        return;
    }
    case HVT_DIF_AGG_LLQUANTIZE: {
        /* dtrace-utils' checks and messages (dt_cg_agg_llquantize) and its layout
         * (include/hvt_dif.h): 2 * (high - low + 1) * (steps - steps/factor) + 3 buckets */
        int64_t v[4];
        for (int i = 0; i < 4; i++) {
            d_node *a = nth(call->b, i + 1);
            d_sema_expr(cc, a);
            int isc = d_sema_int_const(cc, a, &v[i]);
            if (i == 3 && (!isc || v[i] <= 0))
                d_fail(cc, a->line, a->col, "llquantize( ) argument #4 must be a non-zero positive integer constant");
            if (!isc) d_fail(cc, a->line, a->col, "llquantize( ) argument #%d must be an integer constant", i + 1);
            if ((uint64_t)v[i] > UINT16_MAX || (i == 0 && v[i] < 2))
                d_fail(cc, a->line, a->col, "llquantize( ) argument #%d must be an unsigned 16-bit quantity%s", i + 1,
                       i == 0 ? " greater than or equal to 2" : "");
            if (i == 2 && v[2] < v[1])
                d_fail(cc, a->line, a->col, "llquantize( ) argument #3 (high magnitude) must be at least argument #2 "
                       "(low magnitude)");
            if (i == 2) {
                uint64_t m = 1;
                for (int64_t k = 0; k <= v[2]; k++) /* factor^(high+1) must fit */
                    if (__builtin_mul_overflow(m, (uint64_t)v[0], &m))
                        d_fail(cc, a->line, a->col, "llquantize( ) argument #3 (high magnitude) will cause overflow of 64 bits");
            }
        }
        int64_t factor = v[0], low = v[1], high = v[2], steps = v[3];
        d_node *a1 = nth(call->b, 1);
        if (steps < factor && factor % steps)
            d_fail(cc, a1->line, a1->col, "llquantize() argument #4 (steps) must evenly divide argument #1 (factor) "
                   "when steps<factor");
        if (steps > factor) {
            if (steps % factor)
                d_fail(cc, a1->line, a1->col, "llquantize() argument #4 (steps) must be a multiple of argument #1 (factor) "
                       "when steps>factor");
            uint64_t pw = 1;
            for (int64_t k = 0; k <= (low ? low : 1); k++) pw *= (uint64_t)factor; /* <= factor^(high+1) or factor^2 */
            if (pw % (uint64_t)steps) {
                if (!low)
                    d_fail(cc, a1->line, a1->col, "llquantize() argument #4 (steps) must evenly divide the square of "
                           "argument #1 (factor) when steps>factor and lmag==0");
                d_fail(cc, a1->line, a1->col, "llquantize() argument #4 (steps) must evenly divide pow(argument #1 "
                       "(factor), lmag (argument #2) + 1) when steps>factor and lmag>0");
            }
        }
        int64_t n = 2 * (high - low + 1) * (steps - steps / factor) + 3;
        if (n > HVT_DIF_LQUANT_MAX)
            d_fail(cc, call->line, call->col, "llquantize( ) has %lld buckets: hvtrace keeps at most %d", (long long)n,
                   HVT_DIF_LQUANT_MAX);
        p[0] = factor, p[1] = low, p[2] = high, p[3] = steps;
        *nb = (uint32_t)n;
        return;
    }
    }
}

/* @name[keys] = fn(args) */
static void sema_aggstmt(d_cc *cc, d_node *e)
{
    d_node *lhs = e->a, *call = e->b;
    d_node *an = lhs->kind == N_AGG ? lhs : lhs->a;
    d_node **keys = lhs->kind == N_INDEX ? &lhs->b : NULL;
    if (e->op != TK_ASGN)
        d_fail(cc, e->line, e->col, "operator %s cannot be applied to an aggregation: use @%s = func(...)", d_tok_name(e->op), an->str);
    int fn = call->kind == N_CALL ? d_aggfn_lookup(call->str) : 0;
    if (!fn) d_fail(cc, e->line, e->col, "@%s must be assigned the result of an aggregating function", an->str);
    static const int lo[] = {0, 0, 1, 1, 1, 1, 1, 1, 3, 5}, hi[] = {0, 0, 1, 1, 1, 1, 1, 2, 5, 6};
    d_argc_check(cc, call, lo[fn], hi[fn]);
    int nargs = count_args(call->b);
    /* the quantizations' optional increment (DTrace: any integer expression) */
    int incr = fn == HVT_DIF_AGG_QUANTIZE ? 2 : fn == HVT_DIF_AGG_LQUANTIZE ? 5 : fn == HVT_DIF_AGG_LLQUANTIZE ? 6 : 99;
    if (nargs >= incr) {
        d_node *w = d_int_arg(cc, call, incr, 1);
        call->side |= w->side;
        if (w->vk != VK_CONST && !d_ty_is_scalar(cc, w->ty)) d_arg_type(cc, call->str, incr, w, "scalar");
    }
    if (fn != HVT_DIF_AGG_COUNT) {
        d_node *v = d_int_arg(cc, call, 1, 1);
        call->side |= v->side;
        if (v->vk != VK_CONST && !d_ty_is_scalar(cc, v->ty)) d_arg_type(cc, call->str, 1, v, "scalar");
    }
    int64_t p[4];
    uint32_t nb;
    agg_params(cc, call, fn, p, &nb);
    int nk = 0, kt[HVT_DIF_TUPLE_MAX];
    d_aggsym *a = d_agg_find(cc, an->str);
    if (a) {
        if (a->fn != fn)
            d_fail(cc, e->line, e->col, "aggregation redefined: @%s\n\t current: @%s = %s( )\n\tprevious: @%s = %s( ) : line %d",
                   an->str, an->str, aggfn_name(fn), an->str, aggfn_name(a->fn), a->line);
        static const char *const pn[2][4] = {{"base", "limit", "step", ""}, {"factor", "low magnitude", "high magnitude", "steps"}};
        for (int i = 0; i < 4; i++)
            if (a->p[i] != p[i])
                d_fail(cc, call->line, call->col, "%s( ) %s (argument #%d) doesn't match previous declaration: expected %lld, "
                       "found %lld", call->str, pn[fn == HVT_DIF_AGG_LLQUANTIZE][i], i + 1, (long long)a->p[i], (long long)p[i]);
        nk = a->nkeys;
        memcpy(kt, a->keys, sizeof kt);
        if (keys) d_sema_keys(cc, keys, "@", an->str, &nk, kt, 0);
        else if (nk)
            d_fail(cc, lhs->line, lhs->col, "@%s[ ] prototype mismatch: 0 keys passed, %d expected", an->str, nk);
    } else {
        if (keys) d_sema_keys(cc, keys, "@", an->str, &nk, kt, 1);
        if (cc->naggs >= D_MAX_VARS)
            d_fail(cc, e->line, e->col, "cannot create @%s: limit on number of aggregations exceeded (%d)", an->str, D_MAX_VARS);
        cc->aggs = d_grow(cc, cc->aggs, &cc->capaggs, cc->naggs + 1, sizeof *cc->aggs);
        a = &cc->aggs[cc->naggs++];
        memset(a, 0, sizeof *a);
        a->name = an->str;
        a->fn = (uint8_t)fn;
        a->nkeys = nk;
        memcpy(a->keys, kt, sizeof kt);
        memcpy(a->p, p, sizeof a->p);
        a->nbuckets = nb;
        a->line = e->line;
    }
    lhs->var = an->var = (int)(a - cc->aggs);
    e->action = 2;
}

/* ---- statements (actions are d_cg_stmt.c's) ---- */
int d_is_action(const d_node *e) { return e->kind == N_CALL && in_list(actions, e->str); }

void d_sema_stmt(d_cc *cc, d_node *s)
{
    d_node *e = s->a;
    if (e->kind == N_ASSIGN && (e->a->kind == N_AGG || (e->a->kind == N_INDEX && e->a->a->kind == N_AGG))) {
        sema_aggstmt(cc, e);
        return;
    }
    d_sema_expr(cc, e);
}

/* ---- declarations ---- */
void d_sema_decl(d_cc *cc, d_item *it)
{
    if (it->dclass == TK_INLINE) {
        if (d_inline_find(cc, it->name)) d_fail(cc, it->line, it->col, "identifier redefined: %s", it->name);
        d_node *e = it->init;
        d_sema_expr(cc, e);
        d_node *s = d_sema_tostr(cc, e);
        if (d_ty(cc, it->ty)->kind == TY_STR) {
            if (!s) d_fail(cc, e->line, e->col, "inline %s definition uses incompatible types: \"%s\" = \"%s\"", it->name,
                           d_ty_str(cc, it->ty), d_ty_str(cc, e->ty));
            e = s;
        } else {
            d_sema_rvalue(cc, e);
            if (!d_ty_is_scalar(cc, it->ty) || !d_ty_compat(cc, it->ty, e->ty))
                d_fail(cc, e->line, e->col, "inline %s definition uses incompatible types: \"%s\" = \"%s\"", it->name,
                       d_ty_str(cc, it->ty), d_ty_str(cc, e->ty));
            d_node *c = d_node_new(cc, N_CAST, e->line, e->col);
            c->ty = it->ty;
            c->a = e;
            d_sema_expr(cc, c);
            e = c;
        }
        cc->inls = d_grow(cc, cc->inls, &cc->capinls, cc->ninls + 1, sizeof *cc->inls);
        cc->inls[cc->ninls++] = (d_inline){it->name, it->ty, e};
        return;
    }
    int kind = it->dclass == TK_SELF ? HVT_DIF_VK_THREAD : it->dclass == TK_THIS ? HVT_DIF_VK_LOCAL : HVT_DIF_VK_GLOBAL;
    const d_type *t = d_ty(cc, it->ty);
    if (t->kind == TY_VOID) d_fail(cc, it->line, it->col, "cannot have void object: %s", it->name);
    if (t->kind != TY_INT && t->kind != TY_PTR && t->kind != TY_STR)
        d_fail(cc, it->line, it->col, "a variable cannot hold a value of type \"%s\"", d_ty_str(cc, it->ty));
    if (it->nkeys && kind == HVT_DIF_VK_LOCAL)
        d_fail(cc, it->line, it->col, "associative arrays may not be declared as local variables: %s", it->name);
    /* int a[N]: a scalar array of N elements, DTrace's D_DECL_ARRSUB / ARRBIG rules (a
     * positive integral constant below 2^32), within the hypervisor's HVT_DIF_ARRAY_MAX */
    uint32_t nelem = 0;
    if (it->dim) {
        int64_t n;
        d_sema_expr(cc, it->dim);
        if (!d_sema_int_const(cc, it->dim, &n) || n <= 0)
            d_fail(cc, it->dim->line, it->dim->col, "positive integral constant expression or tuple signature expected "
                   "as array declaration subscript");
        if ((uint64_t)n > UINT32_MAX) d_fail(cc, it->dim->line, it->dim->col, "array dimension too big");
        if ((uint64_t)n > HVT_DIF_ARRAY_MAX)
            d_fail(cc, it->dim->line, it->dim->col, "array dimension too big for hvtrace: at most %u elements",
                   HVT_DIF_ARRAY_MAX);
        nelem = (uint32_t)n;
    }
    for (int i = 0; i < it->nkeys; i++)
        if (!d_ty_is_scalar(cc, it->keys[i]) && d_ty(cc, it->keys[i])->kind != TY_STR)
            d_fail(cc, it->line, it->col, "%s[ ] key #%d cannot be of type \"%s\"", it->name, i + 1, d_ty_str(cc, it->keys[i]));
    /* self int a[k]: the array "self->a" keyed by (tid, k), as d_sema_self_assoc makes it */
    const char *name = it->name;
    int nkeys = it->nkeys, keys[HVT_DIF_TUPLE_MAX];
    memcpy(keys, it->keys, sizeof keys);
    if (nelem && kind == HVT_DIF_VK_THREAD) {
        /* self int a[N]: the associative array "self->a" keyed by (tid, index), its index
         * checked against N: each thread's elements, 0 until stored, as DTrace's */
        nkeys = 1;
        keys[0] = cc->t_long;
    }
    if (nkeys && kind == HVT_DIF_VK_THREAD) {
        if (nkeys >= HVT_DIF_TUPLE_MAX)
            d_fail(cc, it->line, it->col, "self->%s[ ]: at most %d keys", it->name, HVT_DIF_TUPLE_MAX - 1);
        size_t len = strlen(it->name) + 7;
        char *n = d_alloc(cc, len);
        snprintf(n, len, "self->%s", it->name);
        name = n;
        kind = HVT_DIF_VK_GLOBAL;
        memmove(keys + 1, keys, sizeof keys[0] * (size_t)nkeys);
        keys[0] = cc->t_pid;
        nkeys++;
    }
    d_var *v = d_var_find(cc, kind, name);
    if (v) {
        if (v->ty != it->ty || v->nkeys != nkeys || (v->kind == HVT_DIF_VK_ASSOC) != (nkeys > 0) || v->nelem != nelem)
            d_fail(cc, it->line, it->col, "identifier redeclared: %s\n\t current: %s\n\tprevious: %s", name,
                   d_ty_str(cc, it->ty), d_ty_str(cc, v->ty));
        return;
    }
    int vi = d_var_add(cc, nkeys ? HVT_DIF_VK_ASSOC : kind, name, it->ty, it->line, it->col);
    cc->vars[vi].nkeys = nkeys;
    cc->vars[vi].nelem = nelem;
    memcpy(cc->vars[vi].keys, keys, sizeof keys);
}
