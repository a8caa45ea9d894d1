/*
 * d_xlate: the io provider's translated arguments, as dtrace-utils' io.d defines them for a
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
#include <string.h>

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
