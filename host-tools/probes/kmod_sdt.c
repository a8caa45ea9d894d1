/* kmod_sdt.c - a module's own tracepoints (see kmod_sdt.h). */
#include "kmod_sdt.h"
#include "kmod.h"
#include "kbuiltin.h"
#include "util.h"
#include <elf.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINK_MAX   (256u << 20)            /* a module's allocated sections, at most */
#define UNDEF_STEP 16u                     /* room per undefined symbol past the sections */

typedef struct {
    const uint8_t *b;
    size_t len;
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh;
    const char *shstr;
    size_t shstr_len;
    const Elf64_Sym *sym;
    size_t nsym;
    const char *str;
    size_t str_len;
    uint64_t *addr;                        /* per section: its address (0: not allocated) */
    uint64_t end, undef_base;              /* past the sections; the undefined ones' base */
} ko;

static const char *sec_name(const ko *o, unsigned i)
{
    return o->sh[i].sh_name < o->shstr_len ? o->shstr + o->sh[i].sh_name : "";
}

static int sec_find(const ko *o, const char *name)
{
    for (unsigned i = 0; i < o->eh->e_shnum; i++)
        if (!strcmp(sec_name(o, i), name))
            return (int)i;
    return -1;
}

static const char *sym_name(const ko *o, size_t i)
{
    uint32_t n = o->sym[i].st_name;
    return n < o->str_len && memchr(o->str + n, 0, o->str_len - n) ? o->str + n : "";
}

/* A symbol's address in the layout: a section's plus its value, an undefined one's own, an
 * absolute one's value; 0 if it is in no allocated section. */
static uint64_t sym_addr(const ko *o, size_t i)
{
    const Elf64_Sym *s = &o->sym[i];
    if (s->st_shndx == SHN_UNDEF)
        return o->undef_base + UNDEF_STEP * i;
    if (s->st_shndx == SHN_ABS)
        return s->st_value;
    if (s->st_shndx >= o->eh->e_shnum || !o->addr[s->st_shndx])
        return 0;
    return o->addr[s->st_shndx] + s->st_value;
}

static bool is_tp(const char *n) { return !strncmp(n, "__tracepoint_", 13) && n[13]; }

static void say(char *err, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(err, n, f, ap);
    va_end(ap);
}

/* Sections laid out, their bytes copied and relocated into m->img. */
static int link_sections(ko *o, kmod_sdt *m, char *err, size_t errlen)
{
    uint64_t at = KMOD_LINK_BASE;
    for (unsigned i = 0; i < o->eh->e_shnum; i++) {
        const Elf64_Shdr *s = &o->sh[i];
        if (!(s->sh_flags & SHF_ALLOC) || !s->sh_size)
            continue;
        uint64_t al = s->sh_addralign > 1 && s->sh_addralign <= 4096 ? s->sh_addralign : 1;
        at = (at + al - 1) & ~(al - 1);
        if (s->sh_size > LINK_MAX || at - KMOD_LINK_BASE + s->sh_size > LINK_MAX) {
            say(err, errlen, "its sections are larger than %u MiB", LINK_MAX >> 20);
            return -1;
        }
        o->addr[i] = at;
        at += s->sh_size;
    }
    o->end = at;
    o->undef_base = (at + 0xfffff) & ~0xfffffull;
    size_t size = (size_t)(at - KMOD_LINK_BASE);
    uint8_t *img = calloc(1, size ? size : 1);
    if (!img) {
        say(err, errlen, "out of memory");
        return -1;
    }
    for (unsigned i = 0; i < o->eh->e_shnum; i++)
        if (o->addr[i] && o->sh[i].sh_type != SHT_NOBITS)
            memcpy(img + (o->addr[i] - KMOD_LINK_BASE), o->b + o->sh[i].sh_offset, o->sh[i].sh_size);
    for (unsigned r = 0; r < o->eh->e_shnum; r++) {
        const Elf64_Shdr *rs = &o->sh[r];
        if (rs->sh_type != SHT_RELA || rs->sh_info >= o->eh->e_shnum || !o->addr[rs->sh_info] ||
            rs->sh_entsize != sizeof(Elf64_Rela))
            continue;
        const Elf64_Shdr *ts = &o->sh[rs->sh_info];
        const Elf64_Rela *ra = (const void *)(o->b + rs->sh_offset);
        for (size_t k = 0; k < rs->sh_size / sizeof *ra; k++) {
            size_t si = ELF64_R_SYM(ra[k].r_info);
            unsigned type = ELF64_R_TYPE(ra[k].r_info);
            unsigned w = type == R_X86_64_64 || type == R_X86_64_PC64 ? 8
                       : type == R_X86_64_PC32 || type == R_X86_64_PLT32 || type == R_X86_64_32 ||
                         type == R_X86_64_32S ? 4 : 0;
            if (!w || si >= o->nsym || ra[k].r_offset > ts->sh_size || w > ts->sh_size - ra[k].r_offset ||
                ts->sh_type == SHT_NOBITS)
                continue;                  /* (no other type in x86-64 kernel modules' code) */
            uint64_t P = o->addr[rs->sh_info] + ra[k].r_offset, S = sym_addr(o, si), A = (uint64_t)ra[k].r_addend;
            uint64_t v = type == R_X86_64_PC32 || type == R_X86_64_PLT32 || type == R_X86_64_PC64 ? S + A - P : S + A;
            memcpy(img + (P - KMOD_LINK_BASE), &v, w);   /* little-endian: the low w bytes */
        }
    }
    m->img.path = m->name;
    m->img.elf.data = img;
    m->img.elf.len = size;
    m->img.compression = "none";
    m->img.segs[0] = (kimg_seg){ .vaddr = KMOD_LINK_BASE, .offset = 0, .filesz = size, .memsz = size };
    m->img.nsegs = 1;
    return 0;
}

/* The symbol table sdt_build reads: the module's functions and tracepoints, every undefined
 * symbol (a call's target is named by it), and the section markers. */
static int build_syms(const ko *o, kmod_sdt *m, char *err, size_t errlen)
{
    size_t cap = o->nsym + 16, pool = 1;
    for (size_t i = 0; i < o->nsym; i++)
        pool += strlen(sym_name(o, i)) + 1;
    pool += 16 * 32;
    ksym_table *t = &m->syms;
    t->syms = calloc(cap, sizeof *t->syms);
    t->names = malloc(pool);
    if (!t->syms || !t->names) {
        say(err, errlen, "out of memory");
        return -1;
    }
    size_t np = 0;
#define ADD(nm, a, ty) do { size_t l_ = strlen(nm) + 1; memcpy(t->names + np, nm, l_); \
        t->syms[t->count++] = (ksym_entry){ .addr = (a), .name_off = (uint32_t)np, .type = (ty) }; np += l_; } while (0)
    for (size_t i = 1; i < o->nsym; i++) {
        const char *n = sym_name(o, i);
        unsigned st = ELF64_ST_TYPE(o->sym[i].st_info);
        uint64_t a = sym_addr(o, i);
        if (!n[0] || !a || st == STT_SECTION || st == STT_FILE)
            continue;
        if (o->sym[i].st_shndx == SHN_UNDEF)
            ADD(n, a, 'U');
        else if (st == STT_FUNC)
            ADD(n, a, 't');
        else if (is_tp(n))
            ADD(n, a, 'd');
    }
    static const struct { const char *sec, *start, *stop; } mark[] = {
        { "__jump_table", "__start___jump_table", "__stop___jump_table" },
        { "_ftrace_events", "__start_ftrace_events", "__stop_ftrace_events" },
        { ".init.text", "_sinittext", "_einittext" },
    };
    for (size_t i = 0; i < sizeof mark / sizeof mark[0]; i++) {
        int s = sec_find(o, mark[i].sec);
        if (s >= 0 && o->addr[s]) {
            ADD(mark[i].start, o->addr[s], 'D');
            ADD(mark[i].stop, o->addr[s] + o->sh[s].sh_size, 'D');
        }
    }
    ADD("_text", KMOD_LINK_BASE, 'T');
    ADD("_end", o->end, 'B');
#undef ADD
    t->names_len = np;
    if (ksym_index(t)) {
        say(err, errlen, "out of memory");
        return -1;
    }
    t->end = UINT64_MAX;                   /* the undefined symbols past _end are named too */
    return 0;
}

/* The kernel's BTF and the module's split BTF as one blob (the split one's type ids start
 * after the kernel's last, its string offsets after the kernel's strings). */
static int merge_btf_into(const ko *o, const btf_info *kbtf, const char *name, uint8_t **blob, btf_info *out,
                          char *err, size_t errlen)
{
    int s = sec_find(o, ".BTF");
    if (s < 0 || !kbtf || !kbtf->ntypes)
        return 0;                          /* no BTF: the tracepoints stay untyped (refused) */
    const uint8_t *sb = o->b + o->sh[s].sh_offset;
    size_t sl = o->sh[s].sh_size;
    if (sl < 24 || sb[0] != 0x9f || sb[1] != 0xeb) {
        say(err, errlen, "its .BTF has no BTF header");
        return -1;
    }
    uint32_t hl, to, tl, so, stl;
    memcpy(&hl, sb + 4, 4);
    memcpy(&to, sb + 8, 4);
    memcpy(&tl, sb + 12, 4);
    memcpy(&so, sb + 16, 4);
    memcpy(&stl, sb + 20, 4);
    if (hl < 24 || hl > sl || to > sl - hl || tl > sl - hl - to || so > sl - hl || stl > sl - hl - so) {
        say(err, errlen, "its .BTF's sections lie past it");
        return -1;
    }
    size_t types = kbtf->types_len + tl, strs = kbtf->strs_len + stl, len = 24 + types + strs;
    uint8_t *b = malloc(len);
    if (!b) {
        say(err, errlen, "out of memory");
        return -1;
    }
    memcpy(b, kbtf->blob, 8);              /* magic, version, flags, hdr_len (rewritten) */
    uint32_t h[5] = { 24, 0, (uint32_t)types, (uint32_t)types, (uint32_t)strs };
    memcpy(b + 4, h, sizeof h);
    memcpy(b + 24, kbtf->types, kbtf->types_len);
    memcpy(b + 24 + kbtf->types_len, sb + hl + to, tl);
    memcpy(b + 24 + types, kbtf->strs, kbtf->strs_len);
    memcpy(b + 24 + types + kbtf->strs_len, sb + hl + so, stl);
    *blob = b;
    int was = util_err_quiet;
    util_err_quiet = 1;
    int rc = btf_parse(out, name, b, len);
    util_err_quiet = was;
    if (rc) {
        say(err, errlen, "its split BTF does not parse over the kernel's");
        return -1;
    }
    return 0;
}

static int merge_btf(const ko *o, const btf_info *kbtf, kmod_sdt *m, char *err, size_t errlen)
{
    return merge_btf_into(o, kbtf, m->name, &m->btf_blob, &m->btf, err, errlen);
}

/* The file's section headers and symbol table found (o->b, o->len set). */
static void ko_open(ko *o)
{
    o->eh = (const void *)o->b;
    o->sh = (const void *)(o->b + o->eh->e_shoff);
    o->shstr = (const char *)o->b + o->sh[o->eh->e_shstrndx].sh_offset;
    o->shstr_len = o->sh[o->eh->e_shstrndx].sh_size;
    for (unsigned i = 0; i < o->eh->e_shnum; i++)
        if (o->sh[i].sh_type == SHT_SYMTAB && o->sh[i].sh_link < o->eh->e_shnum &&
            o->sh[i].sh_entsize == sizeof(Elf64_Sym)) {
            o->sym = (const void *)(o->b + o->sh[i].sh_offset);
            o->nsym = o->sh[i].sh_size / sizeof(Elf64_Sym);
            o->str = (const char *)o->b + o->sh[o->sh[i].sh_link].sh_offset;
            o->str_len = o->sh[o->sh[i].sh_link].sh_size;
        }
}

int kmod_btf_read(const char *path, const btf_info *kbtf, kmod_btf *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    ko o = { 0 };
    o.b = kmod_file_load(path, &o.len, err, errlen);
    if (!o.b)
        return -1;
    ko_open(&o);
    char e2[300] = "";
    int rc = merge_btf_into(&o, kbtf, path, &out->blob, &out->btf, e2, sizeof e2);
    if (rc)
        say(err, errlen, "%s: %s", path, e2);
    else if (!out->btf.ntypes)
        say(err, errlen, "%s: no BTF", path), rc = -1;
    else
        out->split = kbtf->ntypes;
    free((void *)o.b);
    if (rc)
        kmod_btf_free(out);
    return rc;
}

void kmod_btf_free(kmod_btf *m)
{
    btf_free(&m->btf);
    free(m->blob);
    memset(m, 0, sizeof *m);
}

/* Is name the name of exactly one function of the module? */
static int unique_fn(const ko *o, const char *name)
{
    int n = 0;
    for (size_t i = 1; i < o->nsym && n < 2; i++)
        n += ELF64_ST_TYPE(o->sym[i].st_info) == STT_FUNC && o->sym[i].st_shndx != SHN_UNDEF &&
             !strcmp(sym_name(o, i), name);
    return n == 1;
}

/* Each site as a function and an offset; the refused ones with the reason (and the
 * tracepoint unsafe with it, as sdt_build does). */
static int place_sites(const ko *o, kmod_sdt *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->t.n; i++)
        total += m->t.p[i].nsites;
    m->site_fn = calloc(total ? total : 1, sizeof *m->site_fn);
    m->site_off = calloc(total ? total : 1, sizeof *m->site_off);
    if (!m->site_fn || !m->site_off)
        return -1;
    int ex = sec_find(o, ".exit.text");
    uint64_t ex_lo = ex >= 0 ? o->addr[ex] : 0, ex_hi = ex >= 0 ? ex_lo + o->sh[ex].sh_size : 0;
    size_t k = 0;
    for (size_t i = 0; i < m->t.n; i++) {
        sdt_point *p = &m->t.p[i];
        for (uint32_t j = 0; j < p->nsites; j++, k++) {
            sdt_site *st = &p->sites[j];
            uint64_t off;
            int64_t si = ksym_lookup(&m->syms, st->site, &off);
            const char *fn = si >= 0 && m->syms.syms[si].type == 't' ? ksym_name(&m->syms, (uint32_t)si) : NULL;
            const char *why = NULL;
            if (st->refused)
                continue;
            if (st->site >= ex_lo && st->site < ex_hi)
                why = "in exit text";
            else if (!fn)
                why = "in no function of the module";
            else if (!unique_fn(o, fn))
                why = "in a function whose name the module has twice (the hypervisor finds functions by name)";
            for (int a = 0; !why && a < (p->nargs > 0 ? p->nargs : 0) && a < HVT_SDT_ARGS; a++) {
                struct hvt_sdt_arg r;
                if (!hvt_sdt_arg_get(st->recipe, (unsigned)a, &r) && r.op == HVT_SDT_SITE)
                    why = "an argument is an address in the module (the kernel lays its sections out, not hvt)";
            }
            if (why) {
                st->refused = strdup(why);
                continue;
            }
            m->site_fn[k] = strdup(fn);
            m->site_off[k] = (uint32_t)off;
            if (!m->site_fn[k])
                return -1;
        }
        for (uint32_t j = 0; j < p->nsites && !p->unsafe; j++)
            if (p->sites[j].refused) {
                char b[400];
                snprintf(b, sizeof b, "site %u of %u: %s", j + 1, p->nsites, p->sites[j].refused);
                p->unsafe = strdup(b);
            }
    }
    return 0;
}

static int sdt_read(const char *path, const unsigned char *bytes, size_t blen, const btf_info *kbtf, kmod_sdt *m,
                    char *err, size_t errlen);

int kmod_sdt_read(const char *path, const btf_info *kbtf, kmod_sdt *m, char *err, size_t errlen)
{
    return sdt_read(path, NULL, 0, kbtf, m, err, errlen);
}

/* bytes: the file as read already (checked by kmod_file_load), or NULL to read it */
static int sdt_read(const char *path, const unsigned char *bytes, size_t blen, const btf_info *kbtf, kmod_sdt *m,
                    char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    ko o = { 0 };
    o.b = bytes ? bytes : kmod_file_load(path, &o.len, err, errlen);
    if (bytes)
        o.len = blen;
    if (!o.b)
        return -1;
    int rc = -1;
    ko_open(&o);
    o.addr = calloc(o.eh->e_shnum ? o.eh->e_shnum : 1, sizeof *o.addr);
    if (!o.addr || !o.sym) {
        say(err, errlen, "%s: %s", path, o.addr ? "no symbol table" : "out of memory");
        goto out;
    }
    bool own_tp = false;                   /* does it define or call a tracepoint at all? */
    for (size_t i = 1; i < o.nsym && !own_tp; i++)
        own_tp = is_tp(sym_name(&o, i));
    if (!own_tp || sec_find(&o, "__jump_table") < 0) {
        rc = 0;                            /* nothing of its own to offer */
        goto out;
    }
    char **fns = NULL, e2[300];
    size_t nf = 0;
    if (kmod_read(path, m->name, &fns, &nf, err, errlen))   /* its name, as the kernel names it */
        goto out;
    for (size_t i = 0; i < nf; i++)
        free(fns[i]);
    free(fns);
    if (link_sections(&o, m, e2, sizeof e2) || build_syms(&o, m, e2, sizeof e2) ||
        merge_btf(&o, kbtf, m, e2, sizeof e2)) {
        say(err, errlen, "%s: %s", path, e2);
        goto out;
    }
    if (!m->btf.ntypes) {
        rc = 0;                            /* no types: no argument count, nothing decodes */
        goto out;
    }
    if (sdt_build(&m->img, &m->syms, &m->btf, &m->t, e2, sizeof e2)) {
        say(err, errlen, "%s: %s", path, e2);
        goto out;
    }
    /* the kernel's tracepoints the module calls (undefined here): kept as foreign, their sites
     * the module's (their group and the kernel's verdict are the kernel's own probe's); one
     * the module never calls through a jump label is dropped */
    size_t keep = 0;
    m->foreign = calloc(m->t.n ? m->t.n : 1, 1);
    if (!m->foreign) {
        say(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < m->t.n; i++) {
        sdt_point *p = &m->t.p[i];
        int foreign = p->tp >= o.undef_base;
        if (foreign && !p->nsites) {
            free(p->event);
            free(p->group);
            free(p->unsafe);
            free(p->sites);
            continue;
        }
        if (foreign) {
            free(p->unsafe);               /* (sdt_build's "a bare tracepoint": its group is the kernel's) */
            p->unsafe = NULL;
        }
        m->foreign[keep] = (uint8_t)foreign;
        m->t.p[keep++] = *p;
    }
    m->t.n = keep;
    if (place_sites(&o, m)) {
        say(err, errlen, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < m->t.n; i++)
        if (m->foreign[i] && m->t.p[i].unsafe) {
            char b[600];
            snprintf(b, sizeof b, "its sites in module %s: %s", m->name, m->t.p[i].unsafe);
            free(m->t.p[i].unsafe);
            m->t.p[i].unsafe = strdup(b);
        }
    rc = 0;
out:
    free(o.addr);
    if (!bytes)
        free((void *)o.b);
    if (rc)
        kmod_sdt_free(m);
    return rc;
}

void kmod_sdt_free(kmod_sdt *m)
{
    size_t total = 0;
    for (size_t i = 0; i < m->t.n; i++)
        total += m->t.p[i].nsites;
    for (size_t k = 0; m->site_fn && k < total; k++)
        free(m->site_fn[k]);
    free(m->site_fn);
    free(m->site_off);
    free(m->foreign);
    sdt_free(&m->t);
    btf_free(&m->btf);
    free(m->btf_blob);
    ksym_free(&m->syms);
    free(m->img.elf.data);
    memset(m, 0, sizeof *m);
}

const char *kmod_sdt_site_fn(const kmod_sdt *m, const sdt_point *p, uint32_t j, uint32_t *off)
{
    size_t k = 0;
    for (size_t i = 0; i < m->t.n && &m->t.p[i] != p; i++)
        k += m->t.p[i].nsites;
    if (p < m->t.p || p >= m->t.p + m->t.n || j >= p->nsites || !m->site_fn[k + j])
        return NULL;
    *off = m->site_off[k + j];
    return m->site_fn[k + j];
}

/* sdt:GROUP::EVENT for the module's own tracepoints (kmod_sdt.h), kept by the list: 0, or -1
 * on no memory (a module whose tracepoints cannot be read just has none). */
static int add_module_sdt(probe_list *l, const char *path, const unsigned char *b, size_t len, void *ctx)
{
    const btf_info *kbtf = ctx;
    kmod_sdt *m = malloc(sizeof *m);
    kmod_sdt **nm = realloc(l->modsdt, (l->nmodsdt + 1) * sizeof *nm);
    char e[300];
    if (nm)
        l->modsdt = nm;
    if (!m || !nm) {
        free(m);
        return -1;
    }
    if (sdt_read(path, b, len, kbtf, m, e, sizeof e) || !m->t.n) {
        kmod_sdt_free(m);
        free(m);
        return 0;
    }
    probe_desc *nd = realloc(l->p, (l->n + m->t.n) * sizeof *nd);
    if (!nd) {
        kmod_sdt_free(m);
        free(m);
        return -1;
    }
    l->p = nd;
    l->modsdt[l->nmodsdt++] = m;
    l->modsdt_free = kmod_sdt_free;
    for (size_t i = 0; i < m->t.n; i++) {
        const sdt_point *p = &m->t.p[i];
        if (m->foreign[i]) {               /* the kernel's tracepoint: its probe gets these sites */
            for (size_t k = 0; k < l->n; k++) {
                probe_desc *d = &l->p[k];
                if (!d->sdt || d->modsdt || strcmp(d->provider, "sdt") || strcmp(d->name, p->event))
                    continue;
                if (p->unsafe) {           /* a probe on some of its sites would miss firings */
                    d->unsafe = p->unsafe;
                    break;
                }
                /* a tracepoint only modules call: probeable through their sites */
                if (d->unsafe && d->unsafe == d->sdt->unsafe && !d->sdt->nsites && d->sdt->group)
                    d->unsafe = NULL;
                struct probe_modsite *x = malloc(sizeof *x);
                if (!x)
                    return -1;
                *x = (struct probe_modsite){ .m = m, .p = p, .modpre = l->modpre, .next = d->msites };
                d->msites = x;
                break;
            }
            continue;
        }
        l->p[l->n] = (probe_desc){ .id = (uint32_t)l->n + 1, .provider = "sdt", .module = p->group ? p->group : "",
                                   .function = "", .name = p->event, .kind = PL_ADDR, .sdt = p,
                                   .modprobe = 1, .modpre = l->modpre, .modsdt = m,
                                   .unsafe = p->unsafe ? p->unsafe : p->nargs < 0 ? "no BTF prototype in the module" : NULL };
        l->n++;
    }
    return 0;
}

int probe_list_add_modules_btf(probe_list *l, const char *dir, const struct hvt_probe_spec pre[3],
                               const btf_info *kbtf, char *err, size_t errlen)
{
    return probe_list_add_modules_each(l, dir, pre, kbtf ? add_module_sdt : NULL, (void *)kbtf, err, errlen);
}

int probe_list_add_kmods(probe_list *l, const btf_info *btf, const ksym_table *syms, const char *dir,
                         char *err, size_t errlen)
{
    struct hvt_probe_spec pre[3];
    if (kmod_layout(btf, syms, pre, err, errlen))
        return -1;
    int mods = probe_list_add_modules_btf(l, dir, pre, btf, err, errlen);
    char e2[300];
    if (mods >= 0 && probe_list_name_builtin(l, syms, dir, e2, sizeof e2) < 0) {
        snprintf(err, errlen, "%s", e2);
        return -1;
    }
    return mods;
}
