/* kmod.c - fbt probes in loadable modules (see kmod.h). */
#include "kmod.h"
#include "decompress.h"
#include <dirent.h>
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Byte offset of member path a.b (b may be empty) in struct sid: 0, or -1. */
static int member_off(const btf_info *b, uint32_t sid, const char *m, uint64_t *off, uint32_t *type)
{
    btf_member bm;
    if (btf_member_find(b, sid, m, &bm) < 0 || bm.bit_offset % 8)
        return -1;
    *off = bm.bit_offset / 8;
    *type = bm.type_id;
    return 0;
}

int kmod_layout(const btf_info *btf, const ksym_table *syms, struct hvt_probe_spec out[3],
                char *err, size_t errlen)
{
    uint32_t mod = btf ? btf_find_struct(btf, "module") : 0, t, ks = btf ? btf_find_struct(btf, "mod_kallsyms") : 0;
    uint64_t list, name, kallsyms, state, text, base, size, o;
    if (!mod || !ks) {
        snprintf(err, errlen, "the kernel's BTF has no struct module or struct mod_kallsyms");
        return -1;
    }
    if (member_off(btf, mod, "list", &list, &t) || member_off(btf, mod, "name", &name, &t) ||
        member_off(btf, mod, "kallsyms", &kallsyms, &t) || member_off(btf, mod, "state", &state, &t)) {
        snprintf(err, errlen, "struct module has no list, name, kallsyms or state");
        return -1;
    }
    /* the core text: 6.1's core_layout.{base,text_size}; 6.4's mem[MOD_TEXT = 0].{base,size} */
    uint32_t lt;
    if (member_off(btf, mod, "core_layout", &text, &lt) == 0) {
        if (member_off(btf, lt, "base", &base, &t) || member_off(btf, lt, "text_size", &size, &t)) {
            snprintf(err, errlen, "struct module_layout has no base or text_size");
            return -1;
        }
    } else if (member_off(btf, mod, "mem", &text, &lt) == 0) {
        btf_type at;
        if (btf_type_get(btf, lt, &at) < 0 || at.kind != 3 /* ARRAY */ ||
            member_off(btf, at.type, "base", &base, &t) || member_off(btf, at.type, "size", &size, &t)) {
            snprintf(err, errlen, "struct module's mem[] has no base or size");
            return -1;
        }
    } else {
        snprintf(err, errlen, "struct module has neither core_layout nor mem[]");
        return -1;
    }
    base += text;
    size += text;
    if (list > 0xfff || name > 0xfff || kallsyms > 0xfff || base > 0xfff || size > 0xfff ||
        state > 60 || state % 4) {
        snprintf(err, errlen, "struct module's fields lie past what a layout spec can describe");
        return -1;
    }
    /* the hypervisor reads mod_kallsyms at fixed offsets (trace/probe/probe_module.h) */
    if (member_off(btf, ks, "symtab", &o, &t) || o != 0 || member_off(btf, ks, "num_symtab", &o, &t) ||
        o != 8 || member_off(btf, ks, "strtab", &o, &t) || o != 16) {
        snprintf(err, errlen, "struct mod_kallsyms is not laid out as the hypervisor reads it");
        return -1;
    }
    int64_t head = ksym_find(syms, "modules"), load = ksym_find(syms, "do_init_module"),
            freed = ksym_find(syms, "free_module");
    if (head < 0 || load < 0 || freed < 0) {
        snprintf(err, errlen, "the kernel has no %s symbol", head < 0 ? "modules" : load < 0 ? "do_init_module" : "free_module");
        return -1;
    }
    out[0] = (struct hvt_probe_spec){ .kind = HVT_PROBE_KIND_MODINFO | HVT_PROBE_F_LINKTIME,
                                      .lo = syms->syms[head].addr,
                                      .hi = HVT_MODINFO_PACK(list, name, kallsyms, base, size, state) };
    out[1] = (struct hvt_probe_spec){ .kind = HVT_PROBE_KIND_MODHOOK | HVT_PROBE_F_LINKTIME,
                                      .lo = syms->syms[load].addr, .hi = HVT_MODHOOK_LOAD };
    out[2] = (struct hvt_probe_spec){ .kind = HVT_PROBE_KIND_MODHOOK | HVT_PROBE_F_LINKTIME,
                                      .lo = syms->syms[freed].addr, .hi = HVT_MODHOOK_FREE };
    return 0;
}

struct hvt_probe_spec kmod_spec(const probe_desc *d, uint32_t flags)
{
    return (struct hvt_probe_spec){ .id = d->id, .kind = d->kind | HVT_PROBE_F_MODULE | flags,
                                    .lo = hvt_name_hash(d->module, 64), .hi = hvt_name_hash(d->function, 128) };
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    unsigned char *buf = NULL;
    if (fseek(f, 0, SEEK_END) == 0) {
        long n = ftell(f);
        if (n > 0 && n < (1l << 30) && fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) &&
            fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = n > 0 ? (size_t)n : 0;
    }
    fclose(f);
    return buf;
}

#define KMOD_MAX (256u << 20)               /* a module file, decompressed, at most */

unsigned char *kmod_file_load(const char *path, size_t *lenp, char *err, size_t errlen)
{
    size_t len = 0;
    unsigned char *b = slurp(path, &len);
    if (!b) {
        snprintf(err, errlen, "%s: cannot read", path);
        return NULL;
    }
    /* Debian 6.12's modules are .ko.xz (kmod's .ko.gz and .ko.zst the same way) */
    if (len >= 4 && memcmp(b, ELFMAG, SELFMAG) && decompress_format(b, len)) {
        util_buf out = { 0 };
        int was = util_err_quiet;
        util_err_quiet = 1;
        int rc = decompress_payload(path, 0, b, len, 0, KMOD_MAX, &out);
        util_err_quiet = was;
        free(b);
        if (rc) {
            free(out.data);
            snprintf(err, errlen, "%s: cannot decompress", path);
            return NULL;
        }
        b = out.data;
        len = out.len;
    }
    const Elf64_Ehdr *eh = (const void *)b;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > len ||
        (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > len - eh->e_shoff || eh->e_shstrndx >= eh->e_shnum) {
        snprintf(err, errlen, "%s: not a 64-bit ELF module", path);
        free(b);
        return NULL;
    }
    const Elf64_Shdr *sh = (const void *)(b + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type != SHT_NOBITS && (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset)) {
            snprintf(err, errlen, "%s: section %u lies past the file", path, i);
            free(b);
            return NULL;
        }
    *lenp = len;
    return b;
}

static int read_kept(const char *path, char name[64], char ***fns, size_t *nfns, unsigned char **keep,
                     size_t *keep_len, char *err, size_t errlen);

int kmod_read(const char *path, char name[64], char ***fns, size_t *nfns, char *err, size_t errlen)
{
    return read_kept(path, name, fns, nfns, NULL, NULL, err, errlen);
}

/* kmod_read, the file's bytes handed to *keep (the caller frees them) when keep is not NULL */
static int read_kept(const char *path, char name[64], char ***fns, size_t *nfns, unsigned char **keep,
                     size_t *keep_len, char *err, size_t errlen)
{
    size_t len = 0;
    unsigned char *b = kmod_file_load(path, &len, err, errlen);
    *fns = NULL;
    *nfns = 0;
    if (!b)
        return -1;
    int rc = -1;
    const Elf64_Ehdr *eh = (const void *)b;
    const Elf64_Shdr *sh = (const void *)(b + eh->e_shoff);
    const Elf64_Shdr *shs = &sh[eh->e_shstrndx];
    const char *shstr = (const char *)b + shs->sh_offset;
    /* the name: .modinfo's name=, else the file's */
    name[0] = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_name >= shs->sh_size || strcmp(shstr + sh[i].sh_name, ".modinfo"))
            continue;
        const char *p = (const char *)b + sh[i].sh_offset, *end = p + sh[i].sh_size;
        for (; p < end; p += strnlen(p, (size_t)(end - p)) + 1)
            if (!strncmp(p, "name=", 5) && strnlen(p, (size_t)(end - p)) < (size_t)(end - p))
                snprintf(name, 64, "%s", p + 5);
    }
    if (!name[0]) {
        const char *base = strrchr(path, '/');
        snprintf(name, 64, "%s", base ? base + 1 : path);
        char *dot = strstr(name, ".ko");
        if (dot)
            *dot = 0;
        for (char *c = name; *c; c++)
            if (*c == '-')
                *c = '_';
    }
    size_t cap = 0;
    char **v = NULL;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum || sh[i].sh_entsize != sizeof(Elf64_Sym))
            continue;
        const Elf64_Sym *s = (const void *)(b + sh[i].sh_offset);
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        const char *str = (const char *)b + st->sh_offset;
        for (size_t k = 0; k < sh[i].sh_size / sizeof *s; k++) {
            if (ELF64_ST_TYPE(s[k].st_info) != STT_FUNC || s[k].st_shndx == SHN_UNDEF ||
                s[k].st_shndx >= eh->e_shnum || s[k].st_name >= st->sh_size)
                continue;
            const Elf64_Shdr *in = &sh[s[k].st_shndx];
            const char *secname = in->sh_name < shs->sh_size ? shstr + in->sh_name : "";
            if (!(in->sh_flags & SHF_EXECINSTR) || !strncmp(secname, ".init", 5) || !strncmp(secname, ".exit", 5))
                continue;
            const char *fn = str + s[k].st_name;
            if (strnlen(fn, st->sh_size - s[k].st_name) >= st->sh_size - s[k].st_name || !fn[0])
                continue;
            if (*nfns == cap) {
                cap = cap ? cap * 2 : 64;
                char **nv = realloc(v, cap * sizeof *nv);
                if (!nv)
                    goto nomem;
                v = nv;
            }
            if (!(v[(*nfns)++] = strdup(fn)))
                goto nomem;
        }
    }
    qsort(v, *nfns, sizeof *v, cmp_str);
    size_t u = 0;
    for (size_t k = 0; k < *nfns; k++) {
        if (u && !strcmp(v[u - 1], v[k]))
            free(v[k]);
        else
            v[u++] = v[k];
    }
    *nfns = u;
    *fns = v;
    rc = 0;
    goto out;
nomem:
    for (size_t k = 0; k < *nfns; k++)
        free(v[k]);
    free(v);
    *nfns = 0;
    snprintf(err, errlen, "out of memory");
out:
    if (keep && !rc) {
        *keep = b;
        *keep_len = len;
    } else {
        free(b);
    }
    return rc;
}

static int ko_paths(const char *dir, char ***paths, size_t *n, size_t *cap, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char p[4096];
        struct stat st;
        if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= sizeof p || stat(p, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            if (depth < 16)
                ko_paths(p, paths, n, cap, depth + 1);
            continue;
        }
        const char *ko = strstr(e->d_name, ".ko");
        if (!S_ISREG(st.st_mode) || !ko || (ko[3] && strcmp(ko, ".ko.xz") && strcmp(ko, ".ko.gz") &&
                                            strcmp(ko, ".ko.zst")))
            continue;
        if (*n == *cap) {
            *cap = *cap ? *cap * 2 : 256;
            char **np = realloc(*paths, *cap * sizeof *np);
            if (!np)
                break;
            *paths = np;
        }
        if (((*paths)[*n] = strdup(p)))
            ++*n;
    }
    closedir(d);
    return 0;
}

int kmod_find(const char *dir, const char *name, char *path, size_t n)
{
    char **paths = NULL;
    size_t np = 0, cap = 0;
    int found = -1;
    if (ko_paths(dir, &paths, &np, &cap, 0))
        return -1;
    qsort(paths, np, sizeof *paths, cmp_str);
    for (size_t i = 0; i < np; i++) {
        const char *b = strrchr(paths[i], '/');
        char base[256];
        snprintf(base, sizeof base, "%s", b ? b + 1 : paths[i]);
        char *dot = strstr(base, ".ko");
        if (dot)
            *dot = 0;
        for (char *c = base; *c; c++)
            if (*c == '-')
                *c = '_';
        if (found < 0 && !strcmp(base, name) && (size_t)snprintf(path, n, "%s", paths[i]) < n)
            found = 0;
        free(paths[i]);
    }
    free(paths);
    return found;
}

int probe_list_add_modules(probe_list *l, const char *dir, const struct hvt_probe_spec pre[3],
                           char *err, size_t errlen)
{
    return probe_list_add_modules_each(l, dir, pre, NULL, NULL, err, errlen);
}

int probe_list_add_modules_each(probe_list *l, const char *dir, const struct hvt_probe_spec pre[3],
                                int (*each)(probe_list *l, const char *path, const unsigned char *b,
                                            size_t len, void *ctx), void *ctx,
                                char *err, size_t errlen)
{
    if (!l->modpre && !(l->modpre = malloc(3 * sizeof *l->modpre))) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(l->modpre, pre, 3 * sizeof *pre);
    char **paths = NULL;
    size_t np = 0, pcap = 0;
    if (ko_paths(dir, &paths, &np, &pcap, 0)) {
        snprintf(err, errlen, "%s: not a directory", dir);
        return -1;
    }
    qsort(paths, np, sizeof *paths, cmp_str);
    int mods = 0, rc = 0;
    for (size_t i = 0; i < np; i++) {
        char name[64], **fns, e2[300];
        size_t nf;
        unsigned char *file = NULL;
        size_t flen = 0;
        if (rc || read_kept(paths[i], name, &fns, &nf, each ? &file : NULL, &flen, e2, sizeof e2)) {
            free(paths[i]);
            continue;                      /* a file that is no module: not this kernel's */
        }
        /* one block the list owns: the module's name, then its functions' */
        size_t total = strlen(name) + 1;
        for (size_t k = 0; k < nf; k++)
            total += strlen(fns[k]) + 1;
        char *blk = malloc(total);
        probe_desc *nd = blk ? realloc(l->p, (l->n + 2 * nf) * sizeof *nd) : NULL;
        if (!nd) {
            free(blk);
            snprintf(err, errlen, "out of memory");
            rc = -1;
        } else {
            l->p = nd;
            char *at = blk + strlen(name) + 1;
            memcpy(blk, name, strlen(name) + 1);
            for (size_t k = 0; k < nf; k++) {
                size_t fl = strlen(fns[k]) + 1;
                memcpy(at, fns[k], fl);
                const char *pad = !strncmp(at, "__pfx_", 6) || !strncmp(at, "__cfi_", 6)
                                  ? "padding before a function, not code" : NULL;
                l->p[l->n] = (probe_desc){ .id = (uint32_t)l->n + 1, .provider = "fbt", .module = blk,
                                           .function = at, .name = "entry", .kind = PL_ENTRY,
                                           .own = k == 0 ? blk : NULL, .modprobe = 1,
                                           .modpre = l->modpre,
                                           .unsafe = strstr(at, ".cold") ? "the cold part of a function: no entry of its own"
                                                   : pad };
                l->n++;
                /* its return sites: found by the hypervisor in the function's extent as loaded */
                l->p[l->n] = (probe_desc){ .id = (uint32_t)l->n + 1, .provider = "fbt", .module = blk,
                                           .function = at, .name = "return", .kind = PL_RETURN,
                                           .modprobe = 1, .modpre = l->modpre,
                                           .unsafe = strstr(at, ".cold") ? "the cold part of a function: its returns "
                                                                           "are its function's"
                                                   : pad };
                l->n++;
                at += fl;
            }
            if (!nf)
                free(blk);
            mods++;
            if (each && each(l, paths[i], file, flen, ctx)) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
        }
        for (size_t k = 0; k < nf; k++)
            free(fns[k]);
        free(fns);
        free(file);
        free(paths[i]);
    }
    free(paths);
    return rc ? -1 : mods;
}
