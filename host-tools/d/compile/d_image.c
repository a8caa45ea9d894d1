/*
 * d_image: the output side of the compiler. Instructions of the clause being compiled,
 * the constant pool, the string table (deduplicated), probe resolution through the caller's
 * resolver, and at the end the hvt_dif image laid out exactly as include/hvt_dif.h says
 * (header, clauses, insns, consts, vars, aggs, probes sorted by id, probe_clauses, strtab,
 * each section 8-byte aligned) and the dprog around it.
 */
#include "d_int.h"
#include <stdlib.h>
#include <string.h>
#include "util.h"
#include "stable.h"

typedef struct {
    uint32_t id;
    uint32_t prov, mod, func, name;  /* strtab offsets */
    int last_clause;                  /* dedupe within a clause */
} probe_ent;

typedef struct {
    struct hvt_dif_insn *code;
    int ncode, capcode;
    struct hvt_dif_clause *cl;
    int ncl, capcl;
    d_clause *dcl;
    int ndcl, capdcl;
    uint64_t *consts;
    int nconsts, capconsts;
    char *str;
    int slen, scap;
    uint32_t *shash;                  /* open addressing: strtab offset + 1 */
    uint32_t nshash, sused;
    probe_ent *pr;
    int npr, cappr;
    uint32_t *phash;                  /* index + 1 by id */
    uint32_t nphash;
    uint32_t *pairs;                  /* (probe index, clause) */
    int npairs, cappairs;
} image;

struct d_probe_sink {
    d_cc *cc;
    int n;
};

#define IMG ((image *)cc->img)

int d_image_init(d_cc *cc)
{
    image *im = calloc(1, sizeof *im);
    if (!im) return -1;
    cc->img = im;
    d_strtab_add(cc, "", 0);
    return 0;
}

static void free_clause(d_clause *c)
{
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

void d_image_free(d_cc *cc)
{
    image *im = cc->img;
    if (!im) return;
    free(im->code);
    free(im->cl);
    for (int i = 0; i < im->ndcl; i++) free_clause(&im->dcl[i]);
    free(im->dcl);
    free(im->consts);
    free(im->str);
    free(im->shash);
    free(im->pr);
    free(im->phash);
    free(im->pairs);
    free(im);
    cc->img = NULL;
}

/* ---- strings and constants ---- */
static uint32_t hash_str(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static void shash_put(image *im, uint32_t off)
{
    const char *s = im->str + off;
    uint32_t h = hash_str(s, strlen(s)) & (im->nshash - 1);
    while (im->shash[h]) h = (h + 1) & (im->nshash - 1);
    im->shash[h] = off + 1;
}

uint32_t d_strtab_add(d_cc *cc, const char *s, size_t len)
{
    image *im = IMG;
    len = strnlen(s, len);
    if (im->sused * 2 >= im->nshash) {
        uint32_t n = im->nshash ? im->nshash * 2 : 1024;
        uint32_t *nh = calloc(n, sizeof *nh);
        if (!nh) d_nomem(cc);
        free(im->shash);
        im->shash = nh;
        im->nshash = n;
        for (int off = 0; off < im->slen; off += (int)strlen(im->str + off) + 1) shash_put(im, (uint32_t)off);
    }
    uint32_t h = hash_str(s, len) & (im->nshash - 1);
    for (; im->shash[h]; h = (h + 1) & (im->nshash - 1)) {
        const char *t = im->str + im->shash[h] - 1;
        if (strlen(t) == len && !memcmp(t, s, len)) return im->shash[h] - 1;
    }
    if ((size_t)im->slen + len + 1 > HVT_DIF_MAX_IMAGE) d_fail(cc, 0, 0, "the string table is too large for the hypervisor");
    im->str = d_grow(cc, im->str, &im->scap, im->slen + (int)len + 1, 1);
    uint32_t off = (uint32_t)im->slen;
    memcpy(im->str + off, s, len);
    im->str[off + len] = 0;
    im->slen += (int)len + 1;
    im->shash[h] = off + 1;
    im->sused++;
    return off;
}

int d_const_add(d_cc *cc, uint64_t v)
{
    image *im = IMG;
    for (int i = 0; i < im->nconsts; i++)
        if (im->consts[i] == v) return i;
    im->consts = d_grow(cc, im->consts, &im->capconsts, im->nconsts + 1, sizeof *im->consts);
    im->consts[im->nconsts] = v;
    return im->nconsts++;
}

/* ---- code ---- */
void d_emit(d_cc *cc, int op, int rd, int ra, int rb, int32_t imm)
{
    image *im = IMG;
    im->code = d_grow(cc, im->code, &im->capcode, im->ncode + 1, sizeof *im->code);
    im->code[im->ncode++] = (struct hvt_dif_insn){(uint8_t)op, (uint8_t)rd, (uint8_t)ra, (uint8_t)rb, imm};
}

int d_clause_has_op(d_cc *cc, int op)
{
    for (uint32_t i = IMG->cl[IMG->ncl - 1].first; i < (uint32_t)IMG->ncode; i++)
        if (IMG->code[i].op == op)
            return 1;
    return 0;
}

int d_pc(d_cc *cc) { return IMG->ncode - (int)IMG->cl[IMG->ncl - 1].first; }

void d_patch(d_cc *cc, int at, int32_t target) { IMG->code[IMG->cl[IMG->ncl - 1].first + (uint32_t)at].imm = target; }

void d_cg_begin(d_cc *cc)
{
    image *im = IMG;
    im->cl = d_grow(cc, im->cl, &im->capcl, im->ncl + 1, sizeof *im->cl);
    im->cl[im->ncl++] = (struct hvt_dif_clause){(uint32_t)im->ncode, 0};
    im->dcl = d_grow(cc, im->dcl, &im->capdcl, im->ndcl + 1, sizeof *im->dcl);
    cc->clause = im->ndcl++;
    cc->dcl = &im->dcl[cc->clause];
    cc->npm = 0;
    cc->nstab = 0;
}

int d_cg_end(d_cc *cc)
{
    image *im = IMG;
    int ret = d_pc(cc);
    d_emit(cc, HVT_DIF_OP_RET, 0, 0, 0, 0);
    im->cl[im->ncl - 1].count = (uint32_t)(im->ncode - (int)im->cl[im->ncl - 1].first);
    return ret;
}

int d_action_add(d_cc *cc, int kind, int line, int col)
{
    d_clause *c = cc->dcl;
    if (c->nacts >= 0xffff) d_fail(cc, line, col, "too many actions in one clause");
    d_action *a = realloc(c->acts, (size_t)(c->nacts + 1) * sizeof *a);
    if (!a) d_nomem(cc);
    c->acts = a;
    memset(&a[c->nacts], 0, sizeof *a);
    a[c->nacts].kind = (uint8_t)kind;
    a[c->nacts].agg = -1;
    return c->nacts++;
}

/* ---- probes ---- */
static probe_ent *probe_get(d_cc *cc, uint32_t id, const char *prov, const char *mod, const char *func, const char *name)
{
    image *im = IMG;
    if ((uint32_t)im->npr * 2 >= im->nphash) {
        uint32_t n = im->nphash ? im->nphash * 2 : 1024;
        uint32_t *nh = calloc(n, sizeof *nh);
        if (!nh) d_nomem(cc);
        for (int i = 0; i < im->npr; i++) {
            uint32_t h = (uint32_t)((im->pr[i].id * UTIL_GOLDEN64) >> 40) & (n - 1);
            while (nh[h]) h = (h + 1) & (n - 1);
            nh[h] = (uint32_t)i + 1;
        }
        free(im->phash);
        im->phash = nh;
        im->nphash = n;
    }
    uint32_t h = (uint32_t)((id * UTIL_GOLDEN64) >> 40) & (im->nphash - 1);
    for (; im->phash[h]; h = (h + 1) & (im->nphash - 1))
        if (im->pr[im->phash[h] - 1].id == id) return &im->pr[im->phash[h] - 1];
    im->pr = d_grow(cc, im->pr, &im->cappr, im->npr + 1, sizeof *im->pr);
    probe_ent *p = &im->pr[im->npr];
    p->id = id;
    p->prov = d_strtab_add(cc, prov, strlen(prov));
    p->mod = d_strtab_add(cc, mod, strlen(mod));
    p->func = d_strtab_add(cc, func, strlen(func));
    p->name = d_strtab_add(cc, name, strlen(name));
    p->last_clause = -1;
    im->phash[h] = (uint32_t)im->npr + 1;
    im->npr++;
    return p;
}

void d_probe_add(d_probe_sink *sink, uint32_t id, const char *prov, const char *mod, const char *func, const char *name)
{
    d_cc *cc = sink->cc;
    image *im = IMG;
    size_t first;
    if (prov && stable_is_provider(prov) && name && stable_find(prov, name, &first)) {
        /* a stable probe: no probe of its own in the image, the clause is compiled again
         * on each of its rows' probes (d_xlate.c) */
        sink->n++;
        for (int i = 0; i < cc->nstab; i++)
            if (cc->stab[i].id == id) return;
        cc->stab = d_grow(cc, cc->stab, &cc->capstab, cc->nstab + 1, sizeof *cc->stab);
        cc->stab[cc->nstab++] = (d_pmatch){id, d_strndup(cc, prov, strlen(prov)), d_strndup(cc, mod ? mod : "", strlen(mod ? mod : "")),
                                           d_strndup(cc, func ? func : "", strlen(func ? func : "")), d_strndup(cc, name, strlen(name))};
        return;
    }
    probe_ent *p = probe_get(cc, id, prov ? prov : "", mod ? mod : "", func ? func : "", name ? name : "");
    sink->n++;
    if (p->last_clause == cc->clause) return;
    p->last_clause = cc->clause;
    im->pairs = d_grow(cc, im->pairs, &im->cappairs, im->npairs + 2, sizeof *im->pairs);
    im->pairs[im->npairs++] = (uint32_t)(p - im->pr);
    im->pairs[im->npairs++] = (uint32_t)cc->clause;
    cc->pm = d_grow(cc, cc->pm, &cc->cappm, cc->npm + 1, sizeof *cc->pm);
    /* names from the string table: stable only until it grows, so copy them */
    cc->pm[cc->npm++] = (d_pmatch){id, d_strndup(cc, prov ? prov : "", strlen(prov ? prov : "")),
                                   d_strndup(cc, mod ? mod : "", strlen(mod ? mod : "")),
                                   d_strndup(cc, func ? func : "", strlen(func ? func : "")),
                                   d_strndup(cc, name ? name : "", strlen(name ? name : ""))};
}

/* fields of a description, right-aligned as DTrace fills them; -1 if more than four */
static int split_desc(const char *d, char f[4][256])
{
    const char *parts[5];
    size_t lens[5];
    int n = 0;
    for (const char *p = d;; n++) {
        const char *c = strchr(p, ':');
        if (n == 4) return -1;
        parts[n] = p;
        lens[n] = c ? (size_t)(c - p) : strlen(p);
        if (lens[n] >= 256) return -1;
        if (!c) break;
        p = c + 1;
    }
    n++;
    for (int i = 0; i < 4; i++) f[i][0] = 0;
    for (int i = 0; i < n; i++) {
        memcpy(f[4 - n + i], parts[i], lens[i]);
        f[4 - n + i][lens[i]] = 0;
    }
    return 0;
}

static int field_match(const char *pat, const char *s) { return !pat[0] || util_glob(pat, s); }

int d_resolve_clause(d_cc *cc, d_item *cl)
{
    int rc = 0;
    for (d_pdesc *d = cl->descs; d; d = d->next) {
        char f[4][256];
        if (split_desc(d->text, f) < 0) {
            d_error(cc, d->line, d->col, "invalid probe description \"%s\": Overspecified probe description", d->text);
            rc = -1;
            continue;
        }
        d_probe_sink sink = {cc, 0};
        static const char *const dnames[3] = {"BEGIN", "END", "ERROR"};
        uint32_t dids[3] = {cc->opt->begin_id, cc->opt->end_id, cc->opt->error_id};
        for (int i = 0; i < 3; i++)
            if (dids[i] && field_match(f[0], "dtrace") && !f[1][0] && !f[2][0] && field_match(f[3], dnames[i]))
                d_probe_add(&sink, dids[i], "dtrace", "", "", dnames[i]);
        int special = !f[0][0] && !f[1][0] && !f[2][0] &&
                      (!strcmp(f[3], "BEGIN") || !strcmp(f[3], "END") || !strcmp(f[3], "ERROR"));
        if (cc->opt->resolve && !special) {
            char err[256] = "";
            if (cc->opt->resolve(cc->opt->resolve_ctx, d->text, &sink, err, sizeof err) < 0) {
                d_error(cc, d->line, d->col, "invalid probe description \"%s\": %s", d->text, err[0] ? err : "invalid");
                rc = -1;
                continue;
            }
        }
        if (!sink.n && !cc->zdefs) {
            fprintf(cc->err, "hvt: invalid probe specifier %s: probe description %s does not match any probes\n", d->text,
                    d->text);
            if (++cc->nerrors >= cc->max_errors) longjmp(cc->top, 1);
            rc = -1;
        }
    }
    return rc;
}

int d_resolve_desc(d_cc *cc, const char *desc, char *err, size_t errlen)
{
    d_probe_sink sink = {cc, 0};
    if (!cc->opt->resolve) return 0;
    if (cc->opt->resolve(cc->opt->resolve_ctx, desc, &sink, err, errlen) < 0) return -1;
    return sink.n;
}

/* ---- the image ---- */
static int pair_cmp(const void *a, const void *b, void *ctx)
{
    const image *im = ctx;
    const uint32_t *x = a, *y = b;
    uint32_t ix = im->pr[x[0]].id, iy = im->pr[y[0]].id;
    if (ix != iy) return ix < iy ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static uint8_t dif_type(d_cc *cc, int tid)
{
    int k = d_ty(cc, tid)->kind;
    return k == TY_STR ? HVT_DIF_T_STR : k == TY_STACK ? HVT_DIF_T_STACK : HVT_DIF_T_INT;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

int d_image_build(d_cc *cc, dprog *out)
{
    image *im = IMG;
    for (int i = 0; i < im->ncl; i++)
        if (im->cl[i].count > HVT_DIF_MAX_INSNS)
            d_error(cc, im->dcl[i].line, 1, "this clause compiles to %u instructions: the hypervisor runs at most %d a clause",
                    im->cl[i].count, HVT_DIF_MAX_INSNS);
    if (im->ncl > 0xffff) d_error(cc, 0, 0, "too many clauses (%d): at most 65535", im->ncl);
    /* names first: they grow the string table */
    uint32_t *vname = calloc((size_t)cc->nvars + 1, sizeof *vname), *aname = calloc((size_t)cc->naggs + 1, sizeof *aname);
    if (!vname || !aname) {
        free(vname);
        free(aname);
        d_nomem(cc);
    }
    for (int i = 0; i < cc->nvars; i++) vname[i] = d_strtab_add(cc, cc->vars[i].name, strlen(cc->vars[i].name));
    for (int i = 0; i < cc->naggs; i++) aname[i] = d_strtab_add(cc, cc->aggs[i].name, strlen(cc->aggs[i].name));
    int npairs = im->npairs / 2;
    if (npairs) qsort_r(im->pairs, (size_t)npairs, 2 * sizeof *im->pairs, pair_cmp, im);
    /* probes in id order: the order of their first pair */
    int nprobes = 0;
    for (int i = 0; i < npairs; i++)
        if (i == 0 || im->pairs[2 * i] != im->pairs[2 * i - 2]) nprobes++;
    struct hvt_dif_hdr h = {0};
    size_t off = align8(sizeof h);
    h.off_clauses = (uint32_t)off, off = align8(off + (size_t)im->ncl * sizeof(struct hvt_dif_clause));
    h.off_insns = (uint32_t)off, off = align8(off + (size_t)im->ncode * sizeof(struct hvt_dif_insn));
    h.off_consts = (uint32_t)off, off = align8(off + (size_t)im->nconsts * sizeof(uint64_t));
    h.off_vars = (uint32_t)off, off = align8(off + (size_t)cc->nvars * sizeof(struct hvt_dif_var));
    h.off_aggs = (uint32_t)off, off = align8(off + (size_t)cc->naggs * sizeof(struct hvt_dif_agg));
    h.off_probes = (uint32_t)off, off = align8(off + (size_t)nprobes * sizeof(struct hvt_dif_probe));
    h.off_probe_clauses = (uint32_t)off, off = align8(off + (size_t)npairs * sizeof(uint16_t));
    h.off_strtab = (uint32_t)off, off = align8(off + (size_t)im->slen);
    if (cc->uses_kstack) h.off_korc = (uint32_t)off, off = align8(off + sizeof(struct hvt_dif_korc));
    if (off > HVT_DIF_MAX_IMAGE)
        d_error(cc, 0, 0, "the compiled program is %zu bytes: the hypervisor takes at most %u (%d probes: narrow the "
                "probe descriptions)", off, HVT_DIF_MAX_IMAGE, nprobes);
    if (cc->nerrors) {
        free(vname);
        free(aname);
        return -1;
    }
    h.magic = HVT_DIF_MAGIC;
    h.size = (uint32_t)off;
    /* The option is DTrace's (dtrace-utils'): the most characters a string holds; the
     * hypervisor's strsize counts the NUL too. */
    h.strsize = cc->strsize + 1;
    h.nclauses = (uint32_t)im->ncl;
    h.ninsns = (uint32_t)im->ncode;
    h.nconsts = (uint32_t)im->nconsts;
    h.nvars = (uint32_t)cc->nvars;
    h.naggs = (uint32_t)cc->naggs;
    h.nprobes = (uint32_t)nprobes;
    h.nprobe_clauses = (uint32_t)npairs;
    h.strtab_len = (uint32_t)im->slen;
    h.bufsize = cc->bufsize;
    h.dynvarsize = cc->dynvarsize;
    h.aggsize = cc->aggsize;
    h.nspec = cc->uses_spec ? cc->nspec : 0;   /* no speculative buffers unless used */
    h.specsize = cc->uses_spec ? cc->specsize : 0;
    h.flags = cc->destructive ? HVT_DIF_HF_DESTRUCTIVE : 0;
    uint8_t *img = calloc(1, off);
    d_probe *probes = calloc((size_t)nprobes + 1, sizeof *probes);
    d_agg *aggs = calloc((size_t)cc->naggs + 1, sizeof *aggs);
    char **margs = calloc((size_t)cc->opt->nmacro_args + 1, sizeof *margs);
    if (!img || !probes || !aggs || !margs) goto nomem;
    if (im->ncl) memcpy(img + h.off_clauses, im->cl, (size_t)im->ncl * sizeof *im->cl);
    if (im->ncode) memcpy(img + h.off_insns, im->code, (size_t)im->ncode * sizeof *im->code);
    if (im->nconsts) memcpy(img + h.off_consts, im->consts, (size_t)im->nconsts * sizeof *im->consts);
    if (h.off_korc) memcpy(img + h.off_korc, cc->opt->korc, sizeof *cc->opt->korc);
    struct hvt_dif_var *vars = (struct hvt_dif_var *)(img + h.off_vars);
    for (int i = 0; i < cc->nvars; i++) {
        const d_var *v = &cc->vars[i];
        vars[i].kind = v->kind;
        vars[i].type = dif_type(cc, v->ty);
        vars[i].nkeys = (uint8_t)v->nkeys;
        for (int k = 0; k < v->nkeys; k++) vars[i].key_types[k] = dif_type(cc, v->keys[k]);
        if (v->kind != HVT_DIF_VK_ASSOC) vars[i].nelem = v->nelem; /* self arrays: the bound is CHKIDX's */
        vars[i].name = vname[i];
    }
    struct hvt_dif_agg *ga = (struct hvt_dif_agg *)(img + h.off_aggs);
    for (int i = 0; i < cc->naggs; i++) {
        const d_aggsym *a = &cc->aggs[i];
        ga[i].fn = a->fn;
        ga[i].nkeys = (uint8_t)a->nkeys;
        aggs[i].fn = a->fn;
        aggs[i].nkeys = a->nkeys;
        for (int k = 0; k < a->nkeys; k++) {
            ga[i].key_types[k] = dif_type(cc, a->keys[k]);
            d_val_of(cc, a->keys[k], &aggs[i].keys[k]);
        }
        memcpy(ga[i].p, a->p, sizeof ga[i].p);
        memcpy(aggs[i].p, a->p, sizeof aggs[i].p);
        ga[i].name = aname[i];
        ga[i].nbuckets = aggs[i].nbuckets = a->nbuckets;
        if (!(aggs[i].name = strdup(a->name))) goto nomem;
    }
    struct hvt_dif_probe *gp = (struct hvt_dif_probe *)(img + h.off_probes);
    uint16_t *pc = (uint16_t *)(img + h.off_probe_clauses);
    int np = -1;
    for (int i = 0; i < npairs; i++) {
        const probe_ent *p = &im->pr[im->pairs[2 * i]];
        if (i == 0 || im->pairs[2 * i] != im->pairs[2 * i - 2]) {
            np++;
            gp[np] = (struct hvt_dif_probe){p->id, (uint32_t)i, 0, p->prov, p->mod, p->func, p->name};
            probes[np].id = p->id;
            if (!(probes[np].prov = strdup(im->str + p->prov)) || !(probes[np].mod = strdup(im->str + p->mod)) ||
                !(probes[np].func = strdup(im->str + p->func)) || !(probes[np].name = strdup(im->str + p->name)))
                goto nomem;
            if (p->id == cc->opt->begin_id) h.begin_probe = p->id;
            if (p->id == cc->opt->end_id) h.end_probe = p->id;
            if (p->id == cc->opt->error_id) h.error_probe = p->id;
        }
        gp[np].nclauses++;
        pc[i] = (uint16_t)im->pairs[2 * i + 1];
    }
    memcpy(img + h.off_strtab, im->str, (size_t)im->slen);
    memcpy(img, &h, sizeof h);
    for (int i = 0; i < cc->opt->nmacro_args; i++)
        if (!(margs[i] = strdup(cc->opt->macro_args[i]))) goto nomem;
    out->image = img;
    out->image_len = off;
    out->nclauses = im->ndcl;
    out->clauses = im->dcl;
    im->dcl = NULL;
    im->ndcl = 0;
    out->naggs = cc->naggs;
    out->aggs = aggs;
    out->nprobes = nprobes;
    out->probes = probes;
    out->quiet = cc->quiet;
    out->flowindent = cc->flowindent;
    out->destructive = cc->destructive;
    out->aggsortkey = cc->aggsortkey;
    out->aggsortrev = cc->aggsortrev;
    out->aggsortpos = cc->aggsortpos;
    out->aggsortkeypos = cc->aggsortkeypos;
    out->aggzoom = cc->aggzoom;
    out->rawbytes = cc->rawbytes;
    out->stackindent_set = cc->stackindent_set;
    out->stackindent = cc->stackindent;
    out->switchrate_ns = cc->switchrate_ns;
    out->aggrate_ns = cc->aggrate_ns;
    out->macro_args = margs;
    out->nmacro_args = cc->opt->nmacro_args;
    free(vname);
    free(aname);
    return 0;
nomem:
    free(img);
    for (int i = 0; i < nprobes && probes; i++) {
        free(probes[i].prov);
        free(probes[i].mod);
        free(probes[i].func);
        free(probes[i].name);
    }
    free(probes);
    for (int i = 0; i < cc->naggs && aggs; i++) free(aggs[i].name);
    free(aggs);
    for (int i = 0; i < cc->opt->nmacro_args && margs; i++) free(margs[i]);
    free(margs);
    free(vname);
    free(aname);
    d_nomem(cc);
}
