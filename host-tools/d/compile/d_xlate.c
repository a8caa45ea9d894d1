/*
 * d_xlate: the expressions of DTrace's stable providers (proc, sched, lockstat) and its
 * translators (psinfo_t, lwpsinfo_t) in the compiler, as D written over the kernel's own types
 * and probes: compile-time templates, analysed within d_sema (one pass with it), never new code
 * in the hypervisor (except pr_psargs' one string op, STRGR). The clauses a stable probe makes
 * are d_stable.c's.
 *
 *  - In a clause compiled for a row of host-tools/probes/stable.c (cc->srow), args[i] and argI
 *    are the row's expressions (argI as int64: the pointer, for a string argument its
 *    address) and probeprov.. probename the stable probe's.
 *  - A translated struct (TY_XL) is only ever reached through a pointer, whose value is the
 *    struct task_struct * it translates; base->member becomes the member's expression over
 *    that task (dtrace-utils' procfs.d translators, read through the same checked loads as
 *    any kernel pointer chain). curpsinfo and curlwpsinfo are curthread translated.
 *  - pr_psargs is the process's argument list, mm->arg_start .. arg_end in the process's own
 *    memory with its NULs made spaces (STRGR): the memory of the process the CPU runs at the
 *    firing, so only the current task's psinfo_t has it (a compile error otherwise).
 *  - Template text is hvtrace's own; the nodes it parses to are marked raw (their args[] are
 *    the underlying probe's) and carry the position of the use, for messages.
 *
 * And the io provider's translated arguments, as dtrace-utils' io.d defines them for a
 * struct bio (its dlibs/x86_64/6.1/io.d: translator bufinfo_t < struct bio *B >, devinfo_t,
 * fileinfo_t). Every io probe's arg0 is the bio (host-tools/probes/io_prov.c arranges it);
 * args[0] is a bufinfo_t *, args[1] a devinfo_t *, args[2] a fileinfo_t * (always NULL on
 * Linux, so its members are the translator's constants). A member read args[i]->m is the
 * translator's expression for m with B = (struct bio *)arg0 (at wait-done: the thread-local
 * an implicit clause at wait-start kept it in, as dtrace-utils does), parsed here and analysed in its
 * place (a compile-time template: no translated struct exists at run time, so args[i] itself
 * is not a value and xlate is not offered).
 * Differences from dtrace-utils, where hvtrace's D lacks the means: dev_statname is the disk's
 * name without a partition number (no lltostr); b_flags' B_PAGEIO/B_PHYS test bi_flags bit 6
 * as io.d does.
 */
#include "d_int.h"
#include "stable.h"
#include <string.h>

static void mark(d_node *n, int line, int col)
{
    for (; n; n = n->next) {
        n->raw = 1;
        n->line = line;
        n->col = col;
        mark(n->a, line, col);
        mark(n->b, line, col);
        mark(n->c, line, col);
    }
}

d_node *d_xl_parse(d_cc *cc, const char *text, int line, int col)
{
    d_lexer saved = cc->lx;
    const char *ssrc = cc->src;
    size_t slen = cc->len;
    jmp_buf *outer = cc->jb, jb;
    d_node *volatile e = NULL;
    cc->jb = &jb;
    int failed = setjmp(jb);
    if (!failed) {
        d_lex_init(cc, text, strlen(text));
        d_lex_set_top(cc, 0);
        cc->src = text;
        cc->len = strlen(text);
        e = d_parse_expr(cc);
        if (d_peek(cc, 0)->kind != TK_EOF) d_syntax(cc, d_peek(cc, 0), "the end of the expression");
    }
    cc->lx = saved;
    cc->src = ssrc;
    cc->len = slen;
    cc->jb = outer;
    if (failed) d_fail(cc, line, col, "internal error: hvtrace's D for this probe (%s) does not compile", text);
    mark(e, line, col);
    return e;
}

/* n (its line, column and list link kept) becomes the analysed expression e */
static void lower(d_cc *cc, d_node *n, d_node *e)
{
    d_sema_expr(cc, e);
    d_node *next = n->next;
    int line = n->line, col = n->col;
    *n = *e;
    n->next = next;
    n->line = line;
    n->col = col;
}

/* ---- stable probes ---- */
int d_xl_stable_arg(d_cc *cc, d_node *n, int idx, int is_args)
{
    if (!cc->srow || n->raw) return 0;
    const stable_row *r = cc->srow;
    const d_pmatch *sp = cc->sprobe;
    const char *t = idx >= 0 && idx < STABLE_MAXARGS ? r->args[idx] : NULL;
    if (!t) {
        if (is_args)
            d_fail(cc, n->line, n->col, "index %d is out of range for %s:%s:%s:%s args[ ]", idx, sp->prov, sp->mod, sp->func,
                   sp->name);
        d_node *z = d_node_new(cc, N_INT, n->line, n->col);
        z->ival = 0;
        z->ty = cc->t_i64;
        lower(cc, n, z);
        return 1;
    }
    d_node *e = d_xl_parse(cc, t, n->line, n->col);
    if (!is_args) { /* argN: the value as int64 (a string argument: its user address) */
        if (e->kind == N_CALL && !strcmp(e->str, "copyinstr")) e = e->b;
        else if (e->kind == N_STRINGOF) e = e->a;
        d_node *c = d_node_new(cc, N_CAST, n->line, n->col);
        c->ty = cc->t_i64;
        c->a = e;
        e = c;
    }
    lower(cc, n, e);
    return 1;
}

int d_xl_stable_name(d_cc *cc, d_node *n)
{
    const d_pmatch *sp = cc->sprobe;
    if (!sp) return 0;
    const char *v = !strcmp(n->str, "probeprov") ? sp->prov : !strcmp(n->str, "probemod") ? sp->mod
                  : !strcmp(n->str, "probefunc") ? sp->func : !strcmp(n->str, "probename") ? sp->name : NULL;
    if (!v) return 0;
    d_node *s = d_node_new(cc, N_STR, n->line, n->col);
    s->str = v;
    s->slen = strlen(v);
    lower(cc, n, s);
    return 1;
}

/* ---- translators ---- */
/* dtrace-utils' procfs.d translators, over T (struct task_struct *). The states are
 * DTrace's SSLEEP 1, SRUN 2, SZOMB 3, SSTOP 4, SONPROC 6 from the kernel's __state and
 * exit_state bits (TASK_INTERRUPTIBLE 1, TASK_UNINTERRUPTIBLE 2, __TASK_STOPPED 4,
 * __TASK_TRACED 8, EXIT_ZOMBIE 32). */
#define STATE(s, r, z, t, o) \
    "(T->__state & 3) ? " s " : (T->__state & 0xc) ? " t " : (T->exit_state & 0x30) ? " z " : T == curthread ? " o " : " r
static const struct { int xl; const char *member, *text; } members[] = {
    {0, "pr_nlwp", "(int)T->signal->nr_threads"},
    {0, "pr_pid", "T->tgid"},
    {0, "pr_ppid", "T->real_parent->tgid"},
    {0, "pr_pgid", "(pid_t)T->signal->pids[2]->numbers[0].nr"},
    {0, "pr_sid", "(pid_t)T->signal->pids[3]->numbers[0].nr"},
    {0, "pr_uid", "T->cred->uid.val"},
    {0, "pr_euid", "T->cred->euid.val"},
    {0, "pr_gid", "T->cred->gid.val"},
    {0, "pr_egid", "T->cred->egid.val"},
    {0, "pr_addr", "(uintptr_t)T"},
    {0, "pr_ttydev", "T->signal->tty"},
    {0, "pr_fname", "T->comm"},
    {0, "pr_psargs", "__psargs(T->mm->arg_start, T->mm->arg_end)"},
    {0, "pr_dmodel", "(char)2"}, /* PR_MODEL_LP64 */
    {0, "pr_wstat", "0"}, {0, "pr_nzomb", "0"}, {0, "pr_taskid", "0"}, {0, "pr_projid", "0"},
    {0, "pr_poolid", "0"}, {0, "pr_zoneid", "0"}, {0, "pr_contract", "0"},
    {1, "pr_lwpid", "T->pid"},
    {1, "pr_addr", "(uintptr_t)T"},
    {1, "pr_pri", "T->prio"},
    {1, "pr_name", "T->comm"},
    {1, "pr_onpro", "(int)T->thread_info.cpu"},
    {1, "pr_state", "(char)(" STATE("1", "2", "3", "4", "6") ")"},
    {1, "pr_sname", "(char)(" STATE("'S'", "'R'", "'Z'", "'T'", "'O'") ")"},
    {1, "pr_flag", "0"}, {1, "pr_wchan", "(uintptr_t)0"}, {1, "pr_stype", "(char)0"},
};

/* T: the task the pointer holds (base analysed, shared by every use) */
static void subst_t(d_cc *cc, d_node *n, d_node *base)
{
    for (; n; n = n->next) {
        if (n->kind == N_IDENT && !strcmp(n->str, "T")) {
            d_node *next = n->next;
            int line = n->line, col = n->col;
            memset(n, 0, sizeof *n);
            n->kind = N_CAST;
            n->ty = cc->t_thread;
            n->a = base;
            n->raw = 1;
            n->line = line;
            n->col = col;
            n->next = next;
            continue;
        }
        subst_t(cc, n->a, base);
        subst_t(cc, n->b, base);
        subst_t(cc, n->c, base);
    }
}

static int is_curthread(const d_node *b)
{
    while (b->kind == N_CAST) b = b->a;
    return b->vk == VK_BUILTIN && b->var == HVT_DIF_V_CURTHREAD;
}

/* ---- the program's own translators (d_int.h d_xlator) ---- */
static int same_type(d_cc *cc, int a, int b)
{
    return a == b || !strcmp(d_ty_str(cc, a), d_ty_str(cc, b));
}

int d_xl_user_type(d_cc *cc, int tag, const char *name)
{
    for (int i = 0; i < cc->nxlators; i++)
        if (cc->xlators[i].tag == tag && !strcmp(cc->xlators[i].outname, name)) return cc->xlators[i].out;
    return -1;
}

/* xlate <T *> (e) or xlate <T> (e), T a translator's output type: the translator from e's
 * type is chosen and n becomes e cast to a T * (a translated struct's pointer holds its
 * input, as curpsinfo's holds curthread); the struct form is read with '.' only. */
void d_xl_xlate(d_cc *cc, d_node *n)
{
    int target = n->ty, val = d_ty(cc, target)->kind != TY_PTR;
    int xt = val ? target : d_ty(cc, target)->ref;
    const d_type *x = d_ty(cc, xt);
    if (x->kind != TY_XL)
        d_fail(cc, n->line, n->col, "xlate needs a translator's output type or a pointer to one: \"%s\" is neither",
               d_ty_str(cc, target));
    d_sema_expr(cc, n->a);
    d_node *a = d_sema_rvalue(cc, n->a);
    if (x->nelem < D_XL_USER) {            /* psinfo_t, lwpsinfo_t: from a struct task_struct * */
        if (val || !same_type(cc, a->ty, cc->t_thread))
            d_fail(cc, n->line, n->col, "translator does not exist: %s%s from \"%s\" (hvtrace's is to %s * from "
                   "\"%s\")", x->name, val ? "" : " *", d_ty_str(cc, a->ty), x->name, d_ty_str(cc, cc->t_thread));
        n->a = a;
        n->kind = N_CAST;
        n->ty = target;
        d_sema_expr(cc, n);
        return;
    }
    int pick = -1;
    for (int i = 0; i < cc->nxlators && pick < 0; i++)
        if (cc->xlators[i].out == xt && same_type(cc, cc->xlators[i].in_ty, a->ty)) pick = i;
    if (pick < 0)
        d_fail(cc, n->line, n->col, "translator does not exist: %s from \"%s\"", x->name, d_ty_str(cc, a->ty));
    n->a = a;
    n->kind = N_CAST;
    n->ty = d_ty_ptr(cc, xt);
    n->xl = pick + 1;
    n->xlval = (uint8_t)val;
    d_sema_expr(cc, n);
}

/* the input's name in a member's expression: the input, base cast back to its type */
static void subst_param(d_cc *cc, d_node *n, const char *param, d_node *base, int in_ty)
{
    for (; n; n = n->next) {
        if (n->kind == N_IDENT && !strcmp(n->str, param)) {
            n->kind = N_CAST;
            n->ty = in_ty;
            n->a = base;
            n->str = NULL;
            continue;
        }
        subst_param(cc, n->a, param, base, in_ty);
        subst_param(cc, n->b, param, base, in_ty);
        subst_param(cc, n->c, param, base, in_ty);
    }
}

/* base->m (or base.m, base from xlate<T>(e)): the member's expression, parsed again where the
 * translator declares it, over the input */
static void user_member(d_cc *cc, d_node *n, d_node *base)
{
    int out = d_ty(cc, base->ty)->ref, xi = base->xl - 1;
    const char *tname = d_ty(cc, out)->name;
    if (n->kind == N_ARROW && base->xlval)
        d_fail(cc, n->line, n->col, "operator -> must be applied to a pointer: xlate<%s> is a %s (use '.', or xlate<%s *>)",
               tname, tname, tname);
    if (xi < 0) {                          /* a pointer kept in a variable: its one translator */
        for (int i = 0; i < cc->nxlators; i++)
            if (cc->xlators[i].out == out) {
                if (xi >= 0)
                    d_fail(cc, n->line, n->col, "%s has translators from several types: read %s through "
                           "xlate<%s *>(input)->%s", tname, n->str, tname, n->str);
                xi = i;
            }
    }
    const d_xlator *x = &cc->xlators[xi];
    const d_xlmem *m = NULL;
    for (int i = 0; i < x->nmem && !m; i++)
        if (!strcmp(x->mem[i].name, n->str)) m = &x->mem[i];
    if (!m)
        d_fail(cc, n->line, n->col, "%s is not a member of %s (its translator from \"%s\" at line %d)", n->str, tname,
               d_ty_str(cc, x->in_ty), x->line);
    d_lexer saved = cc->lx;
    cc->lx = m->at;                        /* parsed before: it parses again */
    d_node *e = d_parse_assign(cc);
    cc->lx = saved;
    base->done = 1;
    subst_param(cc, e, x->param, base, x->in_ty);
    lower(cc, n, e);
}

void d_xl_member(d_cc *cc, d_node *n, d_node *base)
{
    const d_type *t = d_ty(cc, d_ty(cc, base->ty)->ref);
    if (t->nelem >= D_XL_USER) {
        user_member(cc, n, base);
        return;
    }
    int xl = (int)t->nelem;
    const char *tname = t->name;
    if (n->kind != N_ARROW)
        d_fail(cc, n->line, n->col, "a %s is translated member by member: use a pointer to it (->)", tname);
    if (d_ty(cc, d_ty(cc, cc->t_thread)->ref)->kind != TY_SOU)
        d_fail(cc, n->line, n->col, "%s is translated from the kernel's struct task_struct: it needs the kernel's types "
               "(BTF, from --vmlinuz)", tname);
    const char *text = NULL;
    for (size_t i = 0; i < sizeof members / sizeof members[0] && !text; i++)
        if (members[i].xl == xl && !strcmp(members[i].member, n->str)) text = members[i].text;
    if (!text) d_fail(cc, n->line, n->col, "%s is not a member of %s (or not one hvtrace translates)", n->str, tname);
    if (!strcmp(n->str, "pr_psargs") && !is_curthread(base))
        d_fail(cc, n->line, n->col, "pr_psargs is read from the memory of the process the CPU runs: hvtrace has it for "
               "curpsinfo (the current task) only");
    base->done = 1;
    d_node *e = d_xl_parse(cc, text, n->line, n->col);
    subst_t(cc, e, base);
    lower(cc, n, e);
}

int d_xl_curvar(d_cc *cc, d_node *n)
{
    int ps = !strcmp(n->str, "curpsinfo");
    if (!ps && strcmp(n->str, "curlwpsinfo")) return 0;
    if (d_ty(cc, d_ty(cc, cc->t_thread)->ref)->kind != TY_SOU)
        d_fail(cc, n->line, n->col, "%s is translated from the kernel's struct task_struct: it needs the kernel's types "
               "(BTF, from --vmlinuz)", n->str);
    d_node *c = d_node_new(cc, N_CAST, n->line, n->col);
    c->ty = d_ty_ptr(cc, ps ? cc->t_psinfo : cc->t_lwpsinfo);
    c->a = d_node_new(cc, N_IDENT, n->line, n->col);
    c->a->str = "curthread";
    lower(cc, n, c);
    return 1;
}

/* ---- the io provider ---- */
#define B "((struct bio *)@)"
static const struct { int arg; const char *member, *expr; } io_members[] = {
    { 0, "b_flags", "((int)" B "->bi_opf & 1 ? 0x100 : 0x40) | ((int)" B "->bi_opf & 0x800 ? 0 : 0x400) | "
                    "((int)" B "->bi_flags & (1 << 6) ? 0x10 : 0x20)" },
    { 0, "b_bcount", "(size_t)" B "->bi_iter.bi_size" },
    { 0, "b_addr", "(char *)0" },
    { 0, "b_lblkno", "(uint64_t)" B "->bi_iter.bi_sector" },
    { 0, "b_blkno", "(uint64_t)" B "->bi_iter.bi_sector" },
    { 0, "b_resid", "(size_t)0" },
    { 0, "b_bufsize", "(size_t)" B "->bi_iter.bi_size" },
    { 0, "b_iodone", "(char *)" B "->bi_end_io" },
    { 0, "b_error", "0" },
    { 0, "b_edev", B "->bi_bdev == 0 ? 0 : " B "->bi_bdev->bd_dev" },
    { 1, "dev_major", B "->bi_bdev == 0 ? 0 : (int)(" B "->bi_bdev->bd_dev >> 20)" },
    { 1, "dev_minor", B "->bi_bdev == 0 ? 0 : (int)(" B "->bi_bdev->bd_dev & 0xfffff)" },
    { 1, "dev_instance", "0" },
    { 1, "dev_name", B "->bi_bdev == 0 ? \"nfs\" : "
                     "((struct blk_major_name **)&`major_names)[(" B "->bi_bdev->bd_dev >> 20) % 255]->name" },
    { 1, "dev_statname", B "->bi_bdev == 0 ? \"nfs\" : " B "->bi_bdev->bd_disk->disk_name" },
    { 1, "dev_pathname", B "->bi_bdev == 0 ? \"<nfs>\" : \"<unknown>\"" },
    { 2, "fi_name", "\"<none>\"" },
    { 2, "fi_dirname", "\"<none>\"" },
    { 2, "fi_pathname", "\"<none>\"" },
    { 2, "fi_offset", "(long long)0" },
    { 2, "fi_fs", "\"<none>\"" },
    { 2, "fi_mount", "\"<none>\"" },
    { 2, "fi_oflags", "0" },
};
#undef B
static const char *const io_types[] = { "bufinfo_t", "devinfo_t", "fileinfo_t" };
/* Where the bio is: arg0, or at wait-done (submit_bio_wait's return, where the argument is
 * gone) the thread-local the implicit wait-start clause keeps it in (d_xlate_implicit). */
#define WAIT_BIO D_XLATE_WAIT_BIO

static void relocate(d_node *n, int line, int col, int depth)
{
    for (; n && depth < D_MAX_DEPTH; n = n->next) {
        n->line = line;
        n->col = col;
        relocate(n->a, line, col, depth + 1);
        relocate(n->b, line, col, depth + 1);
        relocate(n->c, line, col, depth + 1);
    }
}

/* An expression of this file's own text, parsed as if written at line:col; each @ in it is
 * the bio. */
static d_node *snippet(d_cc *cc, const char *tmpl, int line, int col)
{
    const char *bio = cc->io_wait_clause ? "self->" WAIT_BIO : "arg0";
    size_t n = strlen(tmpl) + 1;
    for (const char *p = tmpl; *p; p++)
        n += *p == '@' ? strlen(bio) : 0;
    char *text = d_alloc(cc, n), *o = text;
    for (const char *p = tmpl; *p; p++) {
        if (*p == '@') {
            memcpy(o, bio, strlen(bio));
            o += strlen(bio);
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    d_lexer saved = cc->lx;
    d_lex_init(cc, text, strlen(text));
    d_lex_set_top(cc, 0);
    d_node *e = d_parse_expr(cc);
    if (d_peek(cc, 0)->kind != TK_EOF)
        d_fail(cc, line, col, "internal error: the io translator's text for this member does not parse");
    cc->lx = saved;
    relocate(e, line, col, 0);
    return e;
}

/* The clause's probes: all io ones, and wait-done among them? A clause of wait-done reads
 * the bio from the thread-local; with other io probes it could not (refused where it reads
 * an argument). Sets cc->io_wait_clause, and cc->io_wait_used (the implicit clauses); the
 * caller declares self->D_XLATE_WAIT_BIO for such a clause. */
int d_xlate_is_io(d_cc *cc)
{
    int io = 0, wait = 0;
    for (int i = 0; i < cc->npm; i++) {
        io += !strcmp(cc->pm[i].prov, "io");
        wait += !strcmp(cc->pm[i].prov, "io") && !strcmp(cc->pm[i].name, "wait-done");
    }
    cc->io_wait_clause = wait && wait == cc->npm;   /* (the caller declares the variable) */
    cc->io_wait_used |= cc->io_wait_clause;
    cc->io_wait_mixed = wait && wait != cc->npm;
    return io && io == cc->npm;
}

const char *d_xlate_implicit(const d_cc *cc)
{
    /* the bio at submit_bio_wait's entry, for its return; cleared after the program's own
     * wait-done clauses (clauses of one probe run in program order) */
    return cc->io_wait_used ? "io:::wait-start { self->" WAIT_BIO " = arg0; }\n"
                              "io:::wait-done { self->" WAIT_BIO " = 0; }\n" : NULL;
}

d_node *d_xlate_member(d_cc *cc, const d_node *n)
{
    const d_node *a = n->a;
    if (n->kind != N_ARROW || !a || a->kind != N_INDEX || !a->a || a->a->kind != N_IDENT ||
        strcmp(a->a->str, "args") || !a->b || a->b->next || a->b->kind != N_INT)
        return NULL;
    int provs = 0;
    for (int i = 0; i < cc->npm; i++)
        provs += !strcmp(cc->pm[i].prov, "io");
    if (!provs)
        return NULL;
    if (provs != cc->npm)
        d_fail(cc, n->line, n->col, "args[%d] of io probes is a translated type: a clause cannot match io probes "
               "and others", (int)a->b->ival);
    if (cc->io_wait_mixed)
        d_fail(cc, n->line, n->col, "args[%d] of io:::wait-done comes from its wait-start: a clause reading it cannot "
               "match other io probes (give wait-done a clause of its own)", (int)a->b->ival);
    if (a->b->ival > 2)
        d_fail(cc, a->b->line, a->b->col, "index %d is out of range for io probes' args[ ] (3 arguments)",
               (int)a->b->ival);
    for (size_t i = 0; i < sizeof io_members / sizeof io_members[0]; i++)
        if (io_members[i].arg == (int)a->b->ival && !strcmp(io_members[i].member, n->str))
            return snippet(cc, io_members[i].expr, n->line, n->col);
    d_fail(cc, n->line, n->col, "%s is not a member of %s", n->str, io_types[a->b->ival]);
}

d_node *d_xlate_pred(d_cc *cc, d_node *pred, int line, int col)
{
    /* dtrace-utils skips a done firing whose request has no bio (a flush): so do the
     * clauses of io probes, ahead of the program's own predicate */
    d_node *nz = snippet(cc, cc->io_wait_mixed ? "1" : "@ != 0", line, col);
    if (!pred)
        return nz;
    d_node *and = d_node_new(cc, N_BIN, line, col);
    and->op = TK_LAND;
    and->a = nz;
    and->b = pred;
    return and;
}
