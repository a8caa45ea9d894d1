/*
 * d_type: D's types. Interned in cc->types (equal types, equal tids), made from D's built-in
 * names (DTrace's D container: int64_t, uint_t, pid_t, ...) or from the kernel's BTF (kept by
 * id for structs and unions, whose members are looked up when used). A name index over BTF
 * (typedefs, structs, unions, enums, functions, enumerators) is built on first use.
 */
#include "d_int.h"
#include <stdlib.h>
#include <string.h>

enum { BK_INT = 1, BK_PTR, BK_ARRAY, BK_STRUCT, BK_UNION, BK_ENUM, BK_FWD, BK_TYPEDEF, BK_VOLATILE,
       BK_CONST, BK_RESTRICT, BK_FUNC, BK_FUNC_PROTO, BK_VAR, BK_DATASEC, BK_FLOAT, BK_DECL_TAG,
       BK_TYPE_TAG, BK_ENUM64 };

typedef struct { const char *name; uint32_t id; uint8_t kind; } nm_ent;
typedef struct { const char *name; int64_t val; uint32_t id; } ev_ent;
typedef struct {
    nm_ent *names;
    size_t nnames;
    ev_ent *evs;
    size_t nevs;
    int *memo;                /* BTF id -> tid + 1 */
} btf_index;

static int intern(d_cc *cc, const d_type *t)
{
    for (int i = 0; i < cc->ntypes; i++) {
        const d_type *u = &cc->types[i];
        if (u->kind == t->kind && u->uns == t->uns && u->ischar == t->ischar && u->isunion == t->isunion && u->user == t->user &&
            u->size == t->size && u->ref == t->ref && u->nelem == t->nelem && u->btf == t->btf &&
            (u->name == t->name || (u->name && t->name && !strcmp(u->name, t->name))))
            return i;
    }
    cc->types = d_grow(cc, cc->types, &cc->captypes, cc->ntypes + 1, sizeof *cc->types);
    cc->types[cc->ntypes] = *t;
    return cc->ntypes++;
}

const d_type *d_ty(const d_cc *cc, int tid) { return &cc->types[tid]; }

int d_ty_int(d_cc *cc, unsigned size, int uns, const char *name)
{
    d_type t = {.kind = TY_INT, .uns = (uint8_t)!!uns, .size = size, .name = name, .ref = -1};
    t.ischar = size == 1 && name && strstr(name, "char") != NULL;
    return intern(cc, &t);
}

int d_ty_ptr(d_cc *cc, int ref)
{
    d_type t = {.kind = TY_PTR, .uns = 1, .size = 8, .ref = ref};
    return intern(cc, &t);
}

int d_ty_user(d_cc *cc, int ptr)
{
    if (cc->types[ptr].kind != TY_PTR || cc->types[ptr].user) return ptr;
    d_type t = cc->types[ptr];
    t.user = 1;
    return intern(cc, &t);
}

int d_ty_array(d_cc *cc, int elem, uint32_t n)
{
    uint64_t sz = (uint64_t)cc->types[elem].size * n;
    d_type t = {.kind = TY_ARRAY, .size = sz > UINT32_MAX ? 0 : (uint32_t)sz, .ref = elem, .nelem = n};
    return intern(cc, &t);
}

static int named(d_cc *cc, int tid, const char *name)
{
    d_type t = cc->types[tid];
    t.name = name;
    return intern(cc, &t);
}

void d_ty_init(d_cc *cc)
{
    d_type v = {.kind = TY_VOID, .name = "void", .ref = -1};
    cc->t_void = intern(cc, &v);
    cc->t_char = d_ty_int(cc, 1, 0, "char");
    cc->t_uchar = d_ty_int(cc, 1, 1, "unsigned char");
    cc->t_short = d_ty_int(cc, 2, 0, "short");
    cc->t_ushort = d_ty_int(cc, 2, 1, "unsigned short");
    cc->t_int = d_ty_int(cc, 4, 0, "int");
    cc->t_uint = d_ty_int(cc, 4, 1, "unsigned int");
    cc->t_long = d_ty_int(cc, 8, 0, "long");
    cc->t_ulong = d_ty_int(cc, 8, 1, "unsigned long");
    cc->t_i64 = d_ty_int(cc, 8, 0, "int64_t");
    cc->t_u64 = d_ty_int(cc, 8, 1, "uint64_t");
    cc->t_size = d_ty_int(cc, 8, 1, "size_t");
    cc->t_pid = d_ty_int(cc, 4, 0, "pid_t");
    cc->t_uid = d_ty_int(cc, 4, 1, "uid_t");
    d_type s = {.kind = TY_STR, .name = "string", .ref = -1};
    cc->t_str = intern(cc, &s);
    d_type y = {.kind = TY_SYM, .size = 8, .uns = 1, .name = "_symaddr", .ref = -1};
    cc->t_sym = intern(cc, &y);
    cc->t_voidp = d_ty_ptr(cc, cc->t_void);
    int ts = d_ty_lookup_tag(cc, TK_STRUCT, "task_struct");
    cc->t_thread = ts >= 0 ? d_ty_ptr(cc, ts) : cc->t_voidp;
    /* DTrace's translated structs (d_xlate.c): sizeless, read member by member */
    d_type ps = {.kind = TY_XL, .name = "psinfo_t", .ref = -1, .nelem = 0};
    d_type lw = {.kind = TY_XL, .name = "lwpsinfo_t", .ref = -1, .nelem = 1};
    cc->t_psinfo = intern(cc, &ps);
    cc->t_lwpsinfo = intern(cc, &lw);
}

void d_ty_free(d_cc *cc)
{
    btf_index *x = cc->btf_index;
    if (x) {
        free(x->names);
        free(x->evs);
        free(x->memo);
        free(x);
    }
    free(cc->types);
}

int d_ty_size(const d_cc *cc, int tid)
{
    const d_type *t = &cc->types[tid];
    return t->kind == TY_STR ? (int)cc->strsize : (int)t->size;
}

/* A stack key's type: stack(N) and ustack(N) keys of different N are different types. */
int d_ty_stack(d_cc *cc, int user, uint32_t frames)
{
    d_type t = {.kind = TY_STACK, .user = (uint8_t)!!user, .size = 8 + 8 * frames, .nelem = frames, .ref = -1};
    return intern(cc, &t);
}

void d_ty_name(const d_cc *cc, int tid, char *buf, size_t n)
{
    const d_type *t = &cc->types[tid];
    if (t->name) {
        snprintf(buf, n, "%s", t->name);
        return;
    }
    char in[256];
    switch (t->kind) {
    case TY_PTR:
        d_ty_name(cc, t->ref, in, sizeof in);
        if (cc->types[t->ref].kind == TY_FUNC) snprintf(buf, n, "%s", in);
        else snprintf(buf, n, "%s%s*", in, in[0] && in[strlen(in) - 1] == '*' ? "" : " ");
        break;
    case TY_ARRAY:
        d_ty_name(cc, t->ref, in, sizeof in);
        snprintf(buf, n, "%s [%u]", in, t->nelem);
        break;
    case TY_FUNC: snprintf(buf, n, "function pointer"); break;
    case TY_SOU: snprintf(buf, n, "%s <anonymous>", t->isunion ? "union" : "struct"); break;
    case TY_FLOAT: snprintf(buf, n, "float%u", t->size * 8); break;
    case TY_STACK: snprintf(buf, n, "%s(%u)", t->user ? "ustack" : "stack", t->nelem); break;
    default: snprintf(buf, n, "?"); break;
    }
}

const char *d_ty_str(d_cc *cc, int tid)
{
    char buf[256];
    d_ty_name(cc, tid, buf, sizeof buf);
    return d_strndup(cc, buf, strlen(buf));
}

int d_ty_is_int(const d_cc *cc, int tid) { return cc->types[tid].kind == TY_INT || cc->types[tid].kind == TY_SYM; }
int d_ty_is_scalar(const d_cc *cc, int tid) { return d_ty_is_int(cc, tid) || cc->types[tid].kind == TY_PTR; }
int d_ty_is_chararray(const d_cc *cc, int tid)
{
    const d_type *t = &cc->types[tid];
    return t->kind == TY_ARRAY && cc->types[t->ref].kind == TY_INT && cc->types[t->ref].ischar;
}

int d_ty_compat(const d_cc *cc, int a, int b)
{
    if (a == b) return 1;
    const d_type *x = &cc->types[a], *y = &cc->types[b];
    if (d_ty_is_int(cc, a) && d_ty_is_int(cc, b)) return 1;
    if (x->kind == TY_STR || y->kind == TY_STR)
        return (x->kind == TY_STR || d_ty_is_chararray(cc, a)) && (y->kind == TY_STR || d_ty_is_chararray(cc, b));
    if (x->kind == TY_PTR && y->kind == TY_PTR) {
        if (x->ref == y->ref || x->ref == cc->t_void || y->ref == cc->t_void) return 1; /* user or not */
        /* the same struct seen through a typedef and directly */
        const d_type *p = &cc->types[x->ref], *q = &cc->types[y->ref];
        return p->kind == q->kind && p->size == q->size && p->btf == q->btf && p->uns == q->uns && p->kind != TY_PTR;
    }
    return 0;
}

/* ---- built-in type names (DTrace's D container) ---- */
static const struct { const char *name; uint8_t size, uns; } builtin_names[] = {
    {"int8_t", 1, 0}, {"int16_t", 2, 0}, {"int32_t", 4, 0}, {"int64_t", 8, 0}, {"uint8_t", 1, 1},
    {"uint16_t", 2, 1}, {"uint32_t", 4, 1}, {"uint64_t", 8, 1}, {"intptr_t", 8, 0}, {"uintptr_t", 8, 1},
    {"size_t", 8, 1}, {"ssize_t", 8, 0}, {"off_t", 8, 0}, {"off64_t", 8, 0}, {"pid_t", 4, 0},
    {"uid_t", 4, 1}, {"gid_t", 4, 1}, {"id_t", 4, 0}, {"processorid_t", 4, 0}, {"uchar_t", 1, 1},
    {"ushort_t", 2, 1}, {"uint_t", 4, 1}, {"ulong_t", 8, 1}, {"longlong_t", 8, 0},
    {"u_longlong_t", 8, 1}, {"hrtime_t", 8, 0}, {"time_t", 8, 0}, {"dev_t", 4, 1}, {"mode_t", 4, 1},
    {"boolean_t", 4, 0}, {"zoneid_t", 4, 0}, {"projid_t", 4, 0}, {"taskid_t", 4, 0}};

/* ---- the BTF name index ---- */
static int nm_cmp(const void *a, const void *b)
{
    const nm_ent *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : (int)x->kind - (int)y->kind;
}
static int ev_cmp(const void *a, const void *b) { return strcmp(((const ev_ent *)a)->name, ((const ev_ent *)b)->name); }

static btf_index *index_get(d_cc *cc)
{
    if (cc->btf_index || !cc->btf) return cc->btf_index;
    const btf_info *b = cc->btf;
    btf_index *x = calloc(1, sizeof *x);
    if (!x) d_nomem(cc);
    cc->btf_index = x;
    x->memo = calloc(b->ntypes ? b->ntypes : 1, sizeof *x->memo);
    if (!x->memo) d_nomem(cc);
    size_t cap = 0, ecap = 0;
    for (uint32_t id = 1; id < b->ntypes; id++) {
        btf_type t;
        if (btf_type_get(b, id, &t) < 0) continue;
        if (t.name[0] && (t.kind == BK_TYPEDEF || t.kind == BK_STRUCT || t.kind == BK_UNION || t.kind == BK_ENUM ||
                          t.kind == BK_ENUM64 || t.kind == BK_FUNC || t.kind == BK_INT || t.kind == BK_FWD || t.kind == BK_VAR)) {
            if (x->nnames == cap) {
                cap = cap ? cap * 2 : 4096;
                nm_ent *n = realloc(x->names, cap * sizeof *n);
                if (!n) d_nomem(cc);
                x->names = n;
            }
            x->names[x->nnames++] = (nm_ent){t.name, id, (uint8_t)t.kind};
        }
        if (t.kind == BK_ENUM || t.kind == BK_ENUM64) {
            for (unsigned i = 0; i < t.vlen; i++) {
                const char *en;
                int64_t v;
                if (btf_enum_val(b, id, i, &en, &v) < 0 || !en[0]) continue;
                if (x->nevs == ecap) {
                    ecap = ecap ? ecap * 2 : 4096;
                    ev_ent *n = realloc(x->evs, ecap * sizeof *n);
                    if (!n) d_nomem(cc);
                    x->evs = n;
                }
                x->evs[x->nevs++] = (ev_ent){en, v, id};
            }
        }
    }
    if (x->nnames) qsort(x->names, x->nnames, sizeof *x->names, nm_cmp);
    if (x->nevs) qsort(x->evs, x->nevs, sizeof *x->evs, ev_cmp);
    return x;
}

/* First entry named `name` of one of the kinds in mask (bit per BTF kind). */
static uint32_t index_find(d_cc *cc, const char *name, unsigned mask)
{
    btf_index *x = index_get(cc);
    if (!x || !x->nnames) return 0;
    size_t lo = 0, hi = x->nnames;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(x->names[mid].name, name) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (size_t i = lo; i < x->nnames && !strcmp(x->names[i].name, name); i++)
        if (mask & (1u << x->names[i].kind)) return x->names[i].id;
    return 0;
}

uint32_t d_btf_func(d_cc *cc, const char *name) { return index_find(cc, name, 1u << BK_FUNC); }

uint32_t d_btf_func_in(d_cc *cc, const char *name, uint32_t lo, uint32_t hi)
{
    btf_index *x = index_get(cc);
    if (!x || !x->nnames) return 0;
    size_t a = 0, b = x->nnames;
    while (a < b) {
        size_t mid = (a + b) / 2;
        if (strcmp(x->names[mid].name, name) < 0) a = mid + 1;
        else b = mid;
    }
    for (size_t i = a; i < x->nnames && !strcmp(x->names[i].name, name); i++)
        if (x->names[i].kind == BK_FUNC && x->names[i].id >= lo && x->names[i].id < hi) return x->names[i].id;
    return 0;
}
uint32_t d_btf_var(d_cc *cc, const char *name) { return index_find(cc, name, 1u << BK_VAR); }

int d_btf_enumval(d_cc *cc, const char *name, int64_t *val, int *tid)
{
    btf_index *x = index_get(cc);
    if (!x || !x->nevs) return -1;
    ev_ent key = {name, 0, 0};
    ev_ent *e = bsearch(&key, x->evs, x->nevs, sizeof *x->evs, ev_cmp);
    if (!e) return -1;
    *val = e->val;
    *tid = d_ty_btf(cc, e->id);
    return 0;
}

/* A translator's output type by name (the program's translators: d_int.h d_xlator), or -1. */
static int xl_user(d_cc *cc, int tag, const char *name)
{
    for (int i = 0; i < cc->nxlators; i++)
        if (cc->xlators[i].tag == tag && !strcmp(cc->xlators[i].outname, name)) return cc->xlators[i].out;
    return -1;
}

int d_ty_xl(d_cc *cc, const char *display, uint32_t nelem)
{
    d_type t = {.kind = TY_XL, .name = display, .ref = -1, .nelem = nelem};
    return intern(cc, &t);
}

int d_ty_lookup(d_cc *cc, const char *name)
{
    int u = xl_user(cc, 0, name);
    if (u >= 0) return u;
    for (size_t i = 0; i < sizeof builtin_names / sizeof builtin_names[0]; i++)
        if (!strcmp(builtin_names[i].name, name))
            return d_ty_int(cc, builtin_names[i].size, builtin_names[i].uns, builtin_names[i].name);
    if (!strcmp(name, "caddr_t")) return named(cc, d_ty_ptr(cc, cc->t_char), "caddr_t");
    if (!strcmp(name, "psinfo_t")) return cc->t_psinfo;
    if (!strcmp(name, "lwpsinfo_t")) return cc->t_lwpsinfo;
    uint32_t id = index_find(cc, name, 1u << BK_TYPEDEF);
    return id ? d_ty_btf(cc, id) : -1;
}

int d_ty_lookup_tag(d_cc *cc, int kind, const char *name)
{
    int u = kind != TK_ENUM ? xl_user(cc, kind, name) : -1;
    if (u >= 0) return u;
    unsigned mask = kind == TK_STRUCT ? 1u << BK_STRUCT : kind == TK_UNION ? 1u << BK_UNION
                                                                          : (1u << BK_ENUM) | (1u << BK_ENUM64);
    uint32_t id = index_find(cc, name, mask);
    if (!id && kind != TK_ENUM) id = index_find(cc, name, 1u << BK_FWD);
    return id ? d_ty_btf(cc, id) : -1;
}

static int from_btf(d_cc *cc, uint32_t id, int depth)
{
    const btf_info *b = cc->btf;
    btf_index *x = index_get(cc);
    if (!id || !b || id >= b->ntypes || depth > 32) return cc->t_void;
    if (x->memo[id]) return x->memo[id] - 1;
    btf_type t;
    btf_type_get(b, id, &t);
    int r = cc->t_void;
    switch (t.kind) {
    case BK_INT: {
        int uns = !(t.int_enc & 1) || (t.int_enc & 4);
        r = d_ty_int(cc, t.size ? t.size : 1, uns, t.name);
        if (t.size == 1 && (t.int_enc & 2)) {
            d_type c = cc->types[r];
            c.ischar = 1;
            r = intern(cc, &c);
        }
        break;
    }
    case BK_ENUM: case BK_ENUM64:
        r = d_ty_int(cc, t.size ? t.size : 4, !t.kflag, t.name[0] ? d_sprintf(cc, "enum %s", t.name) : "enum");
        break;
    case BK_PTR: r = d_ty_ptr(cc, from_btf(cc, t.type, depth + 1)); break;
    case BK_ARRAY: r = d_ty_array(cc, from_btf(cc, t.type, depth + 1), t.nelems); break;
    case BK_STRUCT: case BK_UNION: {
        d_type s = {.kind = TY_SOU, .isunion = t.kind == BK_UNION, .size = t.size, .btf = id, .ref = -1};
        s.name = t.name[0] ? d_sprintf(cc, "%s %s", t.kind == BK_UNION ? "union" : "struct", t.name) : NULL;
        r = intern(cc, &s);
        break;
    }
    case BK_FWD: {
        uint32_t full = t.name[0] ? index_find(cc, t.name, t.kflag ? 1u << BK_UNION : 1u << BK_STRUCT) : 0;
        if (full) r = from_btf(cc, full, depth + 1);
        else {
            d_type s = {.kind = TY_SOU, .isunion = (uint8_t)t.kflag, .btf = id, .ref = -1};
            s.name = d_sprintf(cc, "%s %s", t.kflag ? "union" : "struct", t.name);
            r = intern(cc, &s);
        }
        break;
    }
    case BK_TYPEDEF: {
        int base = from_btf(cc, t.type, depth + 1);
        r = cc->types[base].kind == TY_VOID ? base : named(cc, base, t.name);
        break;
    }
    case BK_VOLATILE: case BK_CONST: case BK_RESTRICT: case BK_TYPE_TAG:
        r = from_btf(cc, t.type, depth + 1);
        break;
    case BK_FUNC_PROTO: {
        d_type f = {.kind = TY_FUNC, .ref = -1};
        r = intern(cc, &f);
        break;
    }
    case BK_FLOAT: {
        d_type f = {.kind = TY_FLOAT, .size = t.size, .name = t.name, .ref = -1};
        r = intern(cc, &f);
        break;
    }
    default: break;
    }
    x->memo[id] = r + 1;
    return r;
}

int d_ty_btf(d_cc *cc, uint32_t id) { return from_btf(cc, id, 0); }

int d_ty_member(d_cc *cc, int sou, const char *name, d_member *out)
{
    const d_type *s = &cc->types[sou];
    btf_member m;
    if (!cc->btf || s->kind != TY_SOU || btf_member_find(cc->btf, s->btf, name, &m) < 0) return -1;
    memset(out, 0, sizeof *out);
    out->ty = d_ty_btf(cc, m.type_id);
    uint32_t bits = m.bit_size;
    const d_type *mt = &cc->types[out->ty];
    if (!bits && mt->kind == TY_INT) {
        /* the encoding without kind_flag: the width is in the int type itself */
        uint32_t id = m.type_id;
        btf_type t;
        for (int d = 0; d < 32 && btf_type_get(cc->btf, id, &t) == 0 && t.kind != BK_INT; d++) id = t.type;
        if (t.kind == BK_INT && t.int_bits && t.int_bits < t.size * 8) bits = t.int_bits;
    }
    if (!bits) {
        out->off = (uint32_t)(m.bit_offset / 8);
        return 0;
    }
    unsigned unit = mt->size >= 1 && mt->size <= 8 ? mt->size : 8;
    uint64_t start = m.bit_offset / (unit * 8) * unit;
    if (m.bit_offset - start * 8 + bits > unit * 8) { /* straddles its unit: read 8 bytes */
        unit = 8;
        start = m.bit_offset / 8;
    }
    out->off = (uint32_t)start;
    out->bitoff = (uint8_t)(m.bit_offset - start * 8);
    out->bitsz = (uint8_t)bits;
    out->unit = (uint8_t)unit;
    return 0;
}
