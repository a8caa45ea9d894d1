/* btf: see btf.h. Format: include/uapi/linux/btf.h (header, then type records of kind-specific
 * length, then a string section). */
#include "btf.h"
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    BTF_MAGIC = 0xeB9F,
    BTF_HDR_MIN = 24,
    BTF_TYPE_BYTES = 12,
    BTF_MAX_DEPTH = 32, /* typedef chains and anonymous nesting */
    BTF_MAX_TYPES = 1 << 24,
};

enum {
    K_UNKN, K_INT, K_PTR, K_ARRAY, K_STRUCT, K_UNION, K_ENUM, K_FWD, K_TYPEDEF, K_VOLATILE,
    K_CONST, K_RESTRICT, K_FUNC, K_FUNC_PROTO, K_VAR, K_DATASEC, K_FLOAT, K_DECL_TAG,
    K_TYPE_TAG, K_ENUM64, K_MAX
};

static uint32_t t_name(const btf_info *b, uint32_t id) { return util_le32(b->types + b->type_off[id]); }
static uint32_t t_info(const btf_info *b, uint32_t id) { return util_le32(b->types + b->type_off[id] + 4); }
static uint32_t t_sztype(const btf_info *b, uint32_t id) { return util_le32(b->types + b->type_off[id] + 8); }
/* btf_type.info: vlen in bits 0-15, kind in 24-28, kind_flag in 31 (uapi/linux/btf.h) */
#define BTF_INFO_KIND(i) (((i) >> 24) & 0x1f)
#define BTF_INFO_VLEN(i) ((i) & 0xffff)
#define BTF_INFO_KFLAG(i) ((i) >> 31)
/* struct member offset with kind_flag: bitfield size in bits 24-31, bit offset in 0-23 */
#define BTF_MEMBER_BITFIELD_SIZE(o) ((o) >> 24)
#define BTF_MEMBER_BIT_OFFSET(o) ((o) & 0xffffff)
static unsigned t_kind(const btf_info *b, uint32_t id) { return id ? BTF_INFO_KIND(t_info(b, id)) : K_UNKN; }
static unsigned t_vlen(const btf_info *b, uint32_t id) { return BTF_INFO_VLEN(t_info(b, id)); }
static const uint8_t *t_extra(const btf_info *b, uint32_t id) { return b->types + b->type_off[id] + BTF_TYPE_BYTES; }
static const char *str_at(const btf_info *b, uint32_t off) { return off < b->strs_len ? b->strs + off : ""; }

int btf_find_blob(const kimg *k, const uint8_t **blob, size_t *len)
{
    const uint8_t *e = k->elf.data;
    size_t n = k->elf.len;
    Elf64_Ehdr eh;
    memcpy(&eh, e, sizeof eh);
    if (eh.e_shoff && eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shstrndx < eh.e_shnum &&
        util_fits(n, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr))) {
        Elf64_Shdr strh;
        memcpy(&strh, e + eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof strh, sizeof strh);
        for (int i = 0; i < eh.e_shnum && util_fits(n, strh.sh_offset, strh.sh_size); i++) {
            Elf64_Shdr sh;
            memcpy(&sh, e + eh.e_shoff + (uint64_t)i * sizeof sh, sizeof sh);
            if (sh.sh_name + sizeof ".BTF" > strh.sh_size) continue;
            if (memcmp(e + strh.sh_offset + sh.sh_name, ".BTF", sizeof ".BTF") == 0 &&
                util_fits(n, sh.sh_offset, sh.sh_size)) {
                *blob = e + sh.sh_offset;
                *len = sh.sh_size;
                return 0;
            }
        }
    }
    /* No section headers: find the header by magic and trust its own lengths. */
    for (size_t i = 0; i + BTF_HDR_MIN <= n; i += 4) {
        if (util_le16(e + i) != BTF_MAGIC || e[i + 2] != 1 || util_le32(e + i + 4) != BTF_HDR_MIN) continue;
        uint64_t tl = util_le32(e + i + 8) + (uint64_t)util_le32(e + i + 12);
        uint64_t sl = util_le32(e + i + 16) + (uint64_t)util_le32(e + i + 20);
        uint64_t total = BTF_HDR_MIN + (tl > sl ? tl : sl);
        if (util_fits(n, i, total)) {
            *blob = e + i;
            *len = total;
            return 0;
        }
    }
    util_err(k->path, 0, "no BTF in the image (kernel built without CONFIG_DEBUG_INFO_BTF?)");
    return -1;
}

static size_t extra_bytes(unsigned kind, unsigned vlen)
{
    switch (kind) {
    case K_INT: case K_VAR: case K_DECL_TAG: return 4;
    case K_ARRAY: return 12;
    case K_STRUCT: case K_UNION: case K_DATASEC: case K_ENUM64: return (size_t)vlen * 12;
    case K_ENUM: case K_FUNC_PROTO: return (size_t)vlen * 8;
    default: return 0;
    }
}

int btf_parse(btf_info *b, const char *file, const uint8_t *blob, size_t len)
{
    memset(b, 0, sizeof *b);
    b->file = file;
    b->blob = blob;
    b->len = len;
    if (len < BTF_HDR_MIN || util_le16(blob) != BTF_MAGIC) {
        util_err(file, 0, "BTF: bad magic");
        return -1;
    }
    uint32_t hl = util_le32(blob + 4);
    uint64_t to = util_le32(blob + 8), tl = util_le32(blob + 12);
    uint64_t so = util_le32(blob + 16), sl = util_le32(blob + 20);
    if (hl < BTF_HDR_MIN || !util_fits(len, hl + to, tl) || !util_fits(len, hl + so, sl) || sl == 0 ||
        blob[hl + so + sl - 1] != 0) {
        util_err(file, 4, "BTF: header section bounds exceed the %zu-byte blob", len);
        return -1;
    }
    b->types = blob + hl + to;
    b->types_len = tl;
    b->strs = (const char *)blob + hl + so;
    b->strs_len = sl;
    size_t cap = 1024;
    b->type_off = malloc(cap * sizeof *b->type_off);
    if (!b->type_off) return -1;
    b->type_off[0] = 0;
    uint32_t n = 1;
    for (size_t p = 0; p < tl;) {
        if (p + BTF_TYPE_BYTES > tl) {
            util_err(file, hl + to + p, "BTF: truncated type record %u", n);
            goto bad;
        }
        uint32_t info = util_le32(b->types + p + 4);
        unsigned kind = BTF_INFO_KIND(info), vlen = BTF_INFO_VLEN(info);
        if (kind == K_UNKN || kind >= K_MAX) {
            util_err(file, hl + to + p, "BTF: type %u has unknown kind %u", n, kind);
            goto bad;
        }
        size_t rec = BTF_TYPE_BYTES + extra_bytes(kind, vlen);
        if (rec > tl - p) {
            util_err(file, hl + to + p, "BTF: type %u runs past the type section", n);
            goto bad;
        }
        if (n == cap) {
            if (cap >= BTF_MAX_TYPES) goto bad;
            cap *= 2;
            uint32_t *nt = realloc(b->type_off, cap * sizeof *nt);
            if (!nt) goto bad;
            b->type_off = nt;
        }
        b->type_off[n++] = (uint32_t)p;
        p += rec;
    }
    b->ntypes = n;
    return 0;
bad:
    btf_free(b);
    return -1;
}

void btf_free(btf_info *b)
{
    free(b->type_off);
    b->type_off = NULL;
    b->ntypes = 0;
}

static uint32_t resolve(const btf_info *b, uint32_t id)
{
    for (int d = 0; d < BTF_MAX_DEPTH && id && id < b->ntypes; d++) {
        unsigned k = t_kind(b, id);
        if (k != K_TYPEDEF && k != K_VOLATILE && k != K_CONST && k != K_RESTRICT && k != K_TYPE_TAG) return id;
        id = t_sztype(b, id);
    }
    return id < b->ntypes ? id : 0;
}

static uint64_t type_size(const btf_info *b, uint32_t id, int depth)
{
    id = resolve(b, id);
    if (!id || depth > BTF_MAX_DEPTH) return 0; /* malformed BTF can chain arrays in a cycle */
    switch (t_kind(b, id)) {
    case K_INT: case K_STRUCT: case K_UNION: case K_ENUM: case K_ENUM64: case K_FLOAT: case K_DATASEC:
        return t_sztype(b, id);
    case K_PTR: return sizeof(uint64_t);
    case K_ARRAY: {
        const uint8_t *a = t_extra(b, id);
        uint32_t elem = util_le32(a);
        if (elem >= b->ntypes || elem == id) return 0;
        return type_size(b, elem, depth + 1) * util_le32(a + 8);
    }
    default: return 0;
    }
}

uint64_t btf_type_size(const btf_info *b, uint32_t id) { return type_size(b, id, 0); }

uint32_t btf_find_struct(const btf_info *b, const char *name)
{
    for (uint32_t id = 1; id < b->ntypes; id++) {
        unsigned k = t_kind(b, id);
        if ((k == K_STRUCT || k == K_UNION) && strcmp(str_at(b, t_name(b, id)), name) == 0) return id;
    }
    return 0;
}

typedef struct {
    const char *want;
    btf_member *out;
    int found;
    void (*fn)(const btf_member *, void *);
    void *ctx;
} walk_ctx;

static void walk(const btf_info *b, uint32_t sid, uint64_t base, int depth, walk_ctx *w)
{
    sid = resolve(b, sid);
    if (!sid || depth > BTF_MAX_DEPTH) return;
    unsigned k = t_kind(b, sid);
    if (k != K_STRUCT && k != K_UNION) return;
    int kflag = (int)BTF_INFO_KFLAG(t_info(b, sid));
    const uint8_t *m = t_extra(b, sid);
    for (unsigned i = 0; i < t_vlen(b, sid) && !w->found; i++, m += 12) {
        uint32_t name = util_le32(m), type = util_le32(m + 4), off = util_le32(m + 8);
        uint32_t bit_off = kflag ? BTF_MEMBER_BIT_OFFSET(off) : off;
        uint32_t bit_size = kflag ? BTF_MEMBER_BITFIELD_SIZE(off) : 0;
        if (type >= b->ntypes) continue;
        const char *nm = str_at(b, name);
        if (!*nm) { /* anonymous struct/union: its members belong to us */
            walk(b, type, base + bit_off, depth + 1, w);
            continue;
        }
        btf_member bm = {nm, base + bit_off, bit_size, type, btf_type_size(b, type)};
        if (w->fn) w->fn(&bm, w->ctx);
        if (w->want && strcmp(nm, w->want) == 0) {
            *w->out = bm;
            w->found = 1;
        }
    }
}

int btf_member_find(const btf_info *b, uint32_t sid, const char *name, btf_member *out)
{
    walk_ctx w = {name, out, 0, NULL, NULL};
    walk(b, sid, 0, 0, &w);
    return w.found ? 0 : -1;
}

void btf_members_each(const btf_info *b, uint32_t sid, void (*fn)(const btf_member *, void *), void *ctx)
{
    walk_ctx w = {NULL, NULL, 0, fn, ctx};
    walk(b, sid, 0, 0, &w);
}

void btf_type_str(const btf_info *b, uint32_t id, char *buf, size_t n)
{
    char suffix[64] = "";
    size_t stars = 0;
    buf[0] = 0;
    for (int d = 0; d < BTF_MAX_DEPTH; d++) {
        if (!id || id >= b->ntypes) {
            snprintf(buf, n, "void");
            break;
        }
        unsigned k = t_kind(b, id);
        const char *nm = str_at(b, t_name(b, id));
        if (k == K_PTR) { stars++; id = t_sztype(b, id); continue; }
        if (k == K_CONST || k == K_VOLATILE || k == K_RESTRICT || k == K_TYPE_TAG) { id = t_sztype(b, id); continue; }
        if (k == K_ARRAY && !stars && !suffix[0]) {
            snprintf(suffix, sizeof suffix, "[%u]", util_le32(t_extra(b, id) + 8));
            id = util_le32(t_extra(b, id));
            continue;
        }
        const char *pre = k == K_STRUCT ? "struct " : k == K_UNION ? "union " : k == K_ENUM || k == K_ENUM64 ? "enum " : "";
        snprintf(buf, n, "%s%s", pre, *nm ? nm : (k == K_FUNC_PROTO ? "fn" : "(anon)"));
        break;
    }
    size_t l = strlen(buf);
    for (size_t i = 0; i < stars && l + 1 < n; i++) buf[l++] = '*';
    buf[l] = 0;
    snprintf(buf + l, n - l, "%s", suffix);
}

int btf_has_var(const btf_info *b, const char *name)
{
    for (uint32_t id = 1; id < b->ntypes; id++)
        if (t_kind(b, id) == K_VAR && strcmp(str_at(b, t_name(b, id)), name) == 0) return 1;
    return 0;
}

int btf_type_get(const btf_info *b, uint32_t id, btf_type *out)
{
    memset(out, 0, sizeof *out);
    out->name = "";
    if (!id || id >= b->ntypes) return -1;
    uint32_t info = t_info(b, id);
    unsigned k = BTF_INFO_KIND(info);
    out->kind = k;
    out->name = str_at(b, t_name(b, id));
    out->vlen = BTF_INFO_VLEN(info);
    out->kflag = (int)BTF_INFO_KFLAG(info);
    switch (k) {
    case K_INT: {
        uint32_t enc = util_le32(t_extra(b, id));
        out->size = t_sztype(b, id);
        out->int_enc = (enc >> 24) & 0xf; /* BTF_INT_ENCODING */
        out->int_bits = enc & 0xff;       /* BTF_INT_BITS */
        break;
    }
    case K_STRUCT: case K_UNION: case K_ENUM: case K_ENUM64: case K_FLOAT: case K_DATASEC:
        out->size = t_sztype(b, id);
        break;
    case K_ARRAY:
        out->type = util_le32(t_extra(b, id));
        out->nelems = util_le32(t_extra(b, id) + 8);
        break;
    default:
        out->type = t_sztype(b, id);
        break;
    }
    return 0;
}

int btf_param(const btf_info *b, uint32_t proto, unsigned i, uint32_t *type, const char **name)
{
    if (!proto || proto >= b->ntypes || t_kind(b, proto) != K_FUNC_PROTO || i >= t_vlen(b, proto)) return -1;
    const uint8_t *p = t_extra(b, proto) + (size_t)i * 8;
    *name = str_at(b, util_le32(p));
    *type = util_le32(p + 4);
    return 0;
}

int btf_enum_val(const btf_info *b, uint32_t id, unsigned i, const char **name, int64_t *val)
{
    if (!id || id >= b->ntypes || i >= t_vlen(b, id)) return -1;
    unsigned k = t_kind(b, id);
    if (k == K_ENUM) {
        const uint8_t *p = t_extra(b, id) + (size_t)i * 8;
        *name = str_at(b, util_le32(p));
        uint32_t v = util_le32(p + 4);
        *val = BTF_INFO_KFLAG(t_info(b, id)) ? (int64_t)(int32_t)v : (int64_t)v;
        return 0;
    }
    if (k == K_ENUM64) {
        const uint8_t *p = t_extra(b, id) + (size_t)i * 12;
        *name = str_at(b, util_le32(p));
        *val = (int64_t)((uint64_t)util_le32(p + 4) | (uint64_t)util_le32(p + 8) << 32);
        return 0;
    }
    return -1;
}
