/* orc: see orc.h. The unwinding rules are those of the kernel's arch/x86/kernel/unwind_orc.c
 * (unwind_next_frame): find the entry of the current ip (ip - 1 for a return address, so a
 * call to a noreturn function at the end of a function still finds the caller's entry),
 * compute the caller's stack pointer (the CFA) from sp_reg/sp_offset, then the caller's ip
 * (CALL: the return address just below the CFA; REGS: a pt_regs at the CFA; REGS_PARTIAL: an
 * iret frame at the CFA) and bp (from bp_reg/bp_offset, or the pt_regs just crossed). */
#include "orc.h"
#include "util.h"
#include "hvt_dif.h"
#include <elf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* More entries than any kernel has (6.1 has ~370k): bounds the allocation on bad input. */
enum { ORC_MAX_ENTRIES = 1 << 24 };


/* ---- ELF section headers (the bzImage payload keeps them even though it is stripped) ---- */

typedef struct {
    uint64_t addr, off, size, flags;
    uint32_t type;
} orc_sec;

typedef struct {
    const uint8_t *e;
    size_t n;
    uint64_t shoff;
    uint16_t shnum;
    orc_sec strtab;
} elf_view;

/* 0 and a usable view, or -1 with the reason in why (no or broken section headers). */
static int elf_open(const uint8_t *e, size_t n, elf_view *v, const char **why)
{
    Elf64_Ehdr eh;
    if (n < sizeof eh || memcmp(e, ELFMAG, SELFMAG) != 0) return *why = "not an ELF image", -1;
    memcpy(&eh, e, sizeof eh);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64) return *why = "not ELF64", -1;
    if (eh.e_shnum == 0 || eh.e_shoff == 0) return *why = "no section headers", -1;
    if (eh.e_shentsize != sizeof(Elf64_Shdr) || !util_fits(n, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
        return *why = "section header table out of range", -1;
    if (eh.e_shstrndx >= eh.e_shnum) return *why = "bad section name table index", -1;
    v->e = e;
    v->n = n;
    v->shoff = eh.e_shoff;
    v->shnum = eh.e_shnum;
    Elf64_Shdr sh;
    memcpy(&sh, e + eh.e_shoff + (uint64_t)eh.e_shstrndx * sizeof sh, sizeof sh);
    if (!util_fits(n, sh.sh_offset, sh.sh_size)) return *why = "section name table out of range", -1;
    v->strtab = (orc_sec){sh.sh_addr, sh.sh_offset, sh.sh_size, sh.sh_flags, sh.sh_type};
    return 0;
}

/* Section i; its name (NULL if the name runs out of the table). */
static const char *elf_sec(const elf_view *v, int i, orc_sec *s)
{
    Elf64_Shdr sh;
    memcpy(&sh, v->e + v->shoff + (uint64_t)i * sizeof sh, sizeof sh);
    *s = (orc_sec){sh.sh_addr, sh.sh_offset, sh.sh_size, sh.sh_flags, sh.sh_type};
    if (sh.sh_name >= v->strtab.size) return NULL;
    const char *name = (const char *)v->e + v->strtab.off + sh.sh_name;
    if (!memchr(name, 0, v->strtab.size - sh.sh_name)) return NULL;
    return name;
}

/* 1 found (contents inside the file), 0 absent, -1 present but out of range. */
static int elf_find(const elf_view *v, const char *want, orc_sec *out)
{
    for (int i = 1; i < v->shnum; i++) {
        orc_sec s;
        const char *name = elf_sec(v, i, &s);
        if (!name || strcmp(name, want) != 0) continue;
        *out = s;
        if (s.type == SHT_NOBITS || !util_fits(v->n, s.off, s.size)) return -1;
        return 1;
    }
    return 0;
}

/* ---- decoding ---- */

static orc_entry decode(const uint8_t *p, int layout, int *bad)
{
    orc_entry e;
    unsigned bits = util_le16(p + 4), raw;
    e.sp_offset = (int16_t)util_le16(p);
    e.bp_offset = (int16_t)util_le16(p + 2);
    e.sp_reg = bits & 0xf;
    e.bp_reg = (bits >> 4) & 0xf;
    if (layout == ORC_LAYOUT_V3) {
        raw = (bits >> 8) & 7;
        e.type = raw <= ORC_TYPE_REGS_PARTIAL ? raw : ORC_TYPE_INVALID;
        e.signal = (bits >> 11) & 1;
    } else {
        /* V1/V2: types CALL 0, REGS 1, REGS_PARTIAL 2; "undefined" and "end of stack" are
         * spelled sp_reg UNDEFINED without/with the end bit (bit 10 in V1, bit 11 in V2). */
        static const uint8_t map[4] = {ORC_TYPE_CALL, ORC_TYPE_REGS, ORC_TYPE_REGS_PARTIAL, ORC_TYPE_INVALID};
        int end = layout == ORC_LAYOUT_V1 ? (bits >> 10) & 1 : (bits >> 11) & 1;
        raw = (bits >> 8) & 3;
        if (e.sp_reg == ORC_REG_UNDEFINED) e.type = end ? ORC_TYPE_END_OF_STACK : ORC_TYPE_UNDEFINED;
        else e.type = map[raw];
        /* V1 has no signal bit: the kernel treated the ip after a REGS/REGS_PARTIAL frame as
         * exact and the one after a CALL frame as a return address. */
        e.signal = layout == ORC_LAYOUT_V2 ? (bits >> 10) & 1
                                           : e.type == ORC_TYPE_REGS || e.type == ORC_TYPE_REGS_PARTIAL;
    }
    if (e.type == ORC_TYPE_INVALID) ++*bad;
    return e;
}

/* The kernel's sort order: by address; at equal addresses the UNDEFINED "terminator" entries
 * (gaps objtool left) first, so a lookup, which takes the last match, prefers real entries. */
static int row_cmp(const orc_row *a, const orc_row *b)
{
    if (a->ip != b->ip) return a->ip < b->ip ? -1 : 1;
    int ua = a->e.type == ORC_TYPE_UNDEFINED, ub = b->e.type == ORC_TYPE_UNDEFINED;
    return ub - ua;
}

typedef struct {
    orc_row r;
    size_t idx;
} idx_row;

static int idx_cmp(const void *pa, const void *pb)
{
    const idx_row *a = pa, *b = pb;
    int c = row_cmp(&a->r, &b->r);
    if (c) return c;
    return a->idx < b->idx ? -1 : a->idx > b->idx; /* keep the image's order otherwise */
}

int orc_table_from_raw(const uint8_t *ip_sec, size_t ip_len, uint64_t ip_addr, const uint8_t *orc_sec_p,
                       size_t orc_len, int layout, orc_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (layout < ORC_LAYOUT_V1 || layout > ORC_LAYOUT_V3) return util_fail(err, errlen, "unknown ORC layout %d", layout);
    if (ip_len % 4 || orc_len % ORC_RAW_ENTRY)
        return util_fail(err, errlen, "ORC sections have odd sizes (ip table %zu bytes, entries %zu bytes)", ip_len, orc_len);
    size_t n = ip_len / 4;
    if (n != orc_len / ORC_RAW_ENTRY)
        return util_fail(err, errlen, "ORC ip table has %zu entries but the entry table %zu", n, orc_len / ORC_RAW_ENTRY);
    if (n == 0) return util_fail(err, errlen, "ORC tables are empty");
    if (n > ORC_MAX_ENTRIES) return util_fail(err, errlen, "ORC tables too large (%zu entries)", n);
    orc_row *rows = malloc(n * sizeof *rows);
    if (!rows) return util_fail(err, errlen, "out of memory for %zu ORC entries", n);
    int sorted = 1, bad = 0;
    for (size_t i = 0; i < n; i++) {
        /* Self-relative: the entry's address is the slot's own address plus its value. */
        int32_t rel = (int32_t)util_le32(ip_sec + 4 * i);
        rows[i].ip = ip_addr + 4 * i + (uint64_t)(int64_t)rel;
        rows[i].e = decode(orc_sec_p + ORC_RAW_ENTRY * i, layout, &bad);
        if (i && row_cmp(&rows[i - 1], &rows[i]) > 0) sorted = 0;
    }
    if (!sorted) {
        /* The kernel sorts at boot when the build did not; do the same, stably. */
        idx_row *tmp = malloc(n * sizeof *tmp);
        if (!tmp) {
            free(rows);
            return util_fail(err, errlen, "out of memory sorting %zu ORC entries", n);
        }
        for (size_t i = 0; i < n; i++) tmp[i] = (idx_row){rows[i], i};
        qsort(tmp, n, sizeof *tmp, idx_cmp);
        for (size_t i = 0; i < n; i++) rows[i] = tmp[i].r;
        free(tmp);
    }
    t->rows = rows;
    t->count = n;
    t->layout = layout;
    t->was_sorted = sorted;
    t->bad_types = (size_t)bad;
    t->range_start[0] = rows[0].ip;
    t->range_end[0] = rows[n - 1].ip + 1;
    t->nranges = 1;
    return 0;
}

/* "Linux version X.Y" from the banner in the image: 0 if found. */
static int banner_version(const uint8_t *e, size_t n, int *major, int *minor)
{
    static const char key[] = "Linux version ";
    const uint8_t *p = e, *end = e + n;
    while ((p = memmem(p, (size_t)(end - p), key, sizeof key - 1))) {
        p += sizeof key - 1;
        int ma = 0, mi = 0, dig = 0;
        while (p < end && *p >= '0' && *p <= '9' && ma < 1000) ma = ma * 10 + (*p++ - '0'), dig++;
        if (!dig || p >= end || *p != '.') continue;
        p++, dig = 0;
        while (p < end && *p >= '0' && *p <= '9' && mi < 1000) mi = mi * 10 + (*p++ - '0'), dig++;
        if (!dig) continue;
        *major = ma, *minor = mi;
        return 0;
    }
    return -1;
}

static void add_range(orc_table *t, uint64_t a, uint64_t b)
{
    if (b > a && t->nranges < ORC_MAX_RANGES) {
        t->range_start[t->nranges] = a;
        t->range_end[t->nranges++] = b;
    }
}

static uint64_t sym_addr(const ksym_table *s, const char *name, int *ok)
{
    int64_t i = s ? ksym_find(s, name) : -1;
    if (i < 0) {
        *ok = 0;
        return 0;
    }
    return s->syms[i].addr;
}

int orc_load(const kimg *k, orc_table *t, char *err, size_t errlen)
{
    return orc_load_ex(k, NULL, ORC_LAYOUT_AUTO, t, err, errlen);
}

int orc_load_ex(const kimg *k, const ksym_table *syms, int layout, orc_table *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *f = k->path ? k->path : "kernel image";
    const uint8_t *ipb = NULL, *orcb = NULL;
    uint64_t ip_addr = 0, ip_len = 0, orc_len = 0, orc_addr = 0;
    int from_sections = 0, has_header = 0;
    uint8_t header[ORC_HEADER_LEN] = {0};
    elf_view v;
    const char *why = "";
    int have_shdrs = elf_open(k->elf.data, k->elf.len, &v, &why) == 0;
    if (have_shdrs) {
        orc_sec si, so, sh;
        int a = elf_find(&v, ".orc_unwind_ip", &si), b = elf_find(&v, ".orc_unwind", &so);
        if (a < 0 || b < 0) return util_fail(err, errlen, "%s: ORC section %s runs past the end of the image", f, a < 0 ? ".orc_unwind_ip" : ".orc_unwind");
        if (a && b) {
            ipb = k->elf.data + si.off, ip_addr = si.addr, ip_len = si.size;
            orcb = k->elf.data + so.off, orc_len = so.size, orc_addr = so.addr;
            from_sections = 1;
        } else {
            why = "no .orc_unwind_ip/.orc_unwind sections";
        }
        int c = elf_find(&v, ".orc_header", &sh);
        if (c > 0 && sh.size >= ORC_HEADER_LEN) {
            has_header = 1;
            memcpy(header, k->elf.data + sh.off, ORC_HEADER_LEN);
        }
    }
    if (!from_sections) {
        /* The kallsyms bounds the kernel itself uses (unwind_init). */
        int ok = 1;
        uint64_t a = sym_addr(syms, "__start_orc_unwind_ip", &ok), b = sym_addr(syms, "__stop_orc_unwind_ip", &ok);
        uint64_t c = sym_addr(syms, "__start_orc_unwind", &ok);
        if (!ok || b < a)
            return util_fail(err, errlen, "%s: no ORC tables (%s; %s)", f, why,
                        syms ? "no usable __start/__stop_orc_unwind* symbols" : "no symbol table given");
        ip_addr = a, ip_len = b - a, orc_addr = c;
        orc_len = ip_len / 4 * ORC_RAW_ENTRY;
        int ok2 = 1;
        uint64_t d = sym_addr(syms, "__stop_orc_unwind", &ok2);
        if (ok2 && d >= c && d - c != orc_len)
            return util_fail(err, errlen, "%s: ORC symbol bounds disagree (%llu ip bytes, %llu entry bytes)", f,
                        (unsigned long long)ip_len, (unsigned long long)(d - c));
        if (ip_len > (uint64_t)ORC_MAX_ENTRIES * 4) return util_fail(err, errlen, "%s: ORC tables too large", f);
        ipb = kimg_ptr(k, a, ip_len);
        orcb = kimg_ptr(k, c, orc_len);
        if (!ipb || !orcb)
            return util_fail(err, errlen, "%s: ORC tables at 0x%llx/0x%llx are not inside the image", f, (unsigned long long)a,
                        (unsigned long long)c);
    }
    if (layout == ORC_LAYOUT_AUTO) {
        int ma, mi;
        if (has_header || (syms && ksym_find(syms, "orc_header") >= 0)) layout = ORC_LAYOUT_V3;
        else if (banner_version(k->elf.data, k->elf.len, &ma, &mi) == 0)
            layout = ma > 6 || (ma == 6 && mi >= 4) ? ORC_LAYOUT_V3 : ma == 6 && mi == 3 ? ORC_LAYOUT_V2 : ORC_LAYOUT_V1;
        else layout = ORC_LAYOUT_V1;
    }
    char e2[200];
    if (orc_table_from_raw(ipb, ip_len, ip_addr, orcb, orc_len, layout, t, e2, sizeof e2) < 0)
        return util_fail(err, errlen, "%s: %s", f, e2);
    t->from_sections = from_sections;
    t->ip_addr = ip_addr;
    t->orc_addr = orc_addr;
    memcpy(t->header, header, sizeof header);
    /* Text ranges: executable sections, else the kallsyms text bounds, else the table's span. */
    int nr = t->nranges;
    t->nranges = 0;
    if (have_shdrs)
        for (int i = 1; i < v.shnum; i++) {
            orc_sec s;
            if (elf_sec(&v, i, &s) && (s.flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) && s.addr)
                add_range(t, s.addr, s.addr + s.size);
        }
    if (!t->nranges && syms) {
        int ok = 1;
        uint64_t a = sym_addr(syms, "_stext", &ok), b = sym_addr(syms, "_etext", &ok);
        if (ok) add_range(t, a, b);
        ok = 1;
        a = sym_addr(syms, "_sinittext", &ok), b = sym_addr(syms, "_einittext", &ok);
        if (ok) add_range(t, a, b);
    }
    if (!t->nranges) t->nranges = nr; /* range 0 from orc_table_from_raw is still in place */
    return 0;
}

void orc_free(orc_table *t)
{
    free(t->rows);
    memset(t, 0, sizeof *t);
}

const orc_entry *orc_find(const orc_table *t, uint64_t ip)
{
    int in = 0;
    for (int i = 0; i < t->nranges && !in; i++) in = ip >= t->range_start[i] && ip < t->range_end[i];
    if (!in || !t->count) return NULL;
    /* Last row whose ip <= the address. */
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].ip <= ip) lo = mid + 1;
        else hi = mid;
    }
    return lo ? &t->rows[lo - 1].e : NULL;
}

static const char *reg_name(unsigned r)
{
    static const char *const n[] = {"undef", "prevsp", "dx", "di", "bp", "sp", "r10", "r13", "bp(ind)", "sp(ind)"};
    return r < sizeof n / sizeof n[0] ? n[r] : "?";
}

static const char *type_name(unsigned t)
{
    static const char *const n[] = {"undef", "end", "call", "regs", "regs_partial"};
    return t < sizeof n / sizeof n[0] ? n[t] : "invalid";
}

const char *orc_entry_str(const orc_entry *e, char *buf, size_t len)
{
    snprintf(buf, len, "sp:%s%+d bp:%s%+d type:%s%s", reg_name(e->sp_reg), e->sp_offset, reg_name(e->bp_reg),
             e->bp_offset, type_name(e->type), e->signal ? " signal" : "");
    return buf;
}

const char *orc_stop_name(int stop)
{
    static const char *const n[] = {"max", "end", "user", "read", "loop", "undefined", "bad"};
    return stop >= 0 && stop < (int)(sizeof n / sizeof n[0]) ? n[stop] : "?";
}

/* ---- unwinding ---- */

typedef struct {
    const uint8_t *buf;
    uint64_t base;
    size_t len;
} stack_copy;

static int in_copy(const stack_copy *s, uint64_t addr, uint64_t len)
{
    return addr >= s->base && util_fits(s->len, addr - s->base, len);
}

static int rd64(const stack_copy *s, uint64_t addr, uint64_t *v)
{
    if (!in_copy(s, addr, 8)) return 0;
    *v = util_le64(s->buf + (addr - s->base));
    return 1;
}

/* Where a pt_regs is: none, the caller's register file (host memory), or the stack copy. */
enum { REGS_NONE, REGS_HOST, REGS_STACK };
typedef struct {
    int kind;
    const uint64_t *host;
    uint64_t addr;
} regs_view;

static int view_get(const stack_copy *s, const regs_view *v, unsigned off, uint64_t *val)
{
    if (v->kind == REGS_HOST) return *val = v->host[off / 8], 1;
    if (v->kind == REGS_STACK) return rd64(s, v->addr + off, val);
    return 0;
}

typedef struct {
    uint64_t ip, sp, bp;
    int signal, full_regs;
    regs_view regs, prev_regs;
} unwind_state;

/* The kernel's get_reg(): a register saved in the last pt_regs crossed (or, after an iret
 * frame, in the full pt_regs before it). */
static int get_reg(const stack_copy *s, const unwind_state *u, unsigned off, uint64_t *val)
{
    if (u->regs.kind == REGS_NONE) return 0;
    if (u->full_regs) return view_get(s, &u->regs, off, val);
    if (u->prev_regs.kind != REGS_NONE) return view_get(s, &u->prev_regs, off, val);
    return 0;
}

static int user_mode(const stack_copy *s, const unwind_state *u)
{
    uint64_t cs;
    return u->regs.kind != REGS_NONE && view_get(s, &u->regs, ORC_PT_CS, &cs) && (cs & 3);
}

/* Entries the kernel uses where the table has none: ip 0 (a call through a NULL pointer: the
 * return address is on top of the stack), and code without ORC (BPF JIT, trampolines), which
 * is guessed to keep a frame pointer. */
static const orc_entry null_entry = {8, 0, ORC_REG_SP, ORC_REG_UNDEFINED, ORC_TYPE_CALL, 0};
static const orc_entry fp_entry = {16, -16, ORC_REG_BP, ORC_REG_PREV_SP, ORC_TYPE_CALL, 0};

/* One frame up; 1 moved, 0 stopped (st->stop says why). */
static int step(const orc_table *t, uint64_t slide, const stack_copy *s, unwind_state *u, orc_status *st)
{
    const orc_entry *e;
    uint64_t look = u->signal ? u->ip : u->ip - 1;
    if (u->signal && u->ip == 0) e = &null_entry;
    else if (!(e = orc_find(t, look - slide))) {
        e = &fp_entry;
        st->guessed = 1;
    } else if (e->type == ORC_TYPE_UNDEFINED) {
        st->stop = ORC_STOP_UNDEFINED;
        return 0;
    } else if (e->type == ORC_TYPE_END_OF_STACK) {
        st->stop = ORC_STOP_END;
        return 0;
    }
    uint64_t off = (uint64_t)(int64_t)e->sp_offset, cfa, tmp;
    int indirect = 0;
    switch (e->sp_reg) {
    case ORC_REG_SP: cfa = u->sp + off; break;
    case ORC_REG_BP: cfa = u->bp + off; break;
    case ORC_REG_SP_INDIRECT: cfa = u->sp, indirect = 1; break; /* (sp) + offset: call_on_stack */
    case ORC_REG_BP_INDIRECT: cfa = u->bp + off, indirect = 1; break; /* (bp + offset): DRAP */
    case ORC_REG_R10:
    case ORC_REG_R13:
    case ORC_REG_DI:
    case ORC_REG_DX: {
        unsigned ro = e->sp_reg == ORC_REG_R10 ? ORC_PT_R10 : e->sp_reg == ORC_REG_R13 ? ORC_PT_R13
                      : e->sp_reg == ORC_REG_DI ? ORC_PT_DI : ORC_PT_DX;
        if (!get_reg(s, u, ro, &cfa)) return st->stop = ORC_STOP_BAD, 0;
        break;
    }
    default: return st->stop = ORC_STOP_BAD, 0;
    }
    if (indirect) {
        if (!rd64(s, cfa, &cfa)) return st->stop = ORC_STOP_READ, 0;
        if (e->sp_reg == ORC_REG_SP_INDIRECT) cfa += off;
    }
    unwind_state n = *u;
    switch (e->type) {
    case ORC_TYPE_CALL:
        if (!rd64(s, cfa - 8, &n.ip)) return st->stop = ORC_STOP_READ, 0;
        if (!n.ip) return st->stop = ORC_STOP_BAD, 0;
        n.sp = cfa;
        n.regs.kind = n.prev_regs.kind = REGS_NONE;
        break;
    case ORC_TYPE_REGS:
        if (!in_copy(s, cfa, ORC_PT_REGS_WORDS * 8)) return st->stop = ORC_STOP_READ, 0;
        rd64(s, cfa + ORC_PT_IP, &n.ip);
        rd64(s, cfa + ORC_PT_SP, &n.sp);
        n.regs = (regs_view){REGS_STACK, NULL, cfa};
        n.prev_regs.kind = REGS_NONE;
        n.full_regs = 1;
        break;
    case ORC_TYPE_REGS_PARTIAL:
        /* An iret frame (ip, cs, flags, sp, ss) at the CFA: the tail of a pt_regs. */
        if (!in_copy(s, cfa, ORC_IRET_FRAME_SIZE)) return st->stop = ORC_STOP_READ, 0;
        rd64(s, cfa, &n.ip);
        rd64(s, cfa + (ORC_PT_SP - ORC_PT_IP), &n.sp);
        if (u->full_regs) n.prev_regs = u->regs;
        n.regs = (regs_view){REGS_STACK, NULL, cfa - ORC_IRET_FRAME_OFFSET};
        n.full_regs = 0;
        break;
    default: return st->stop = ORC_STOP_BAD, 0;
    }
    switch (e->bp_reg) {
    case ORC_REG_UNDEFINED:
        if (get_reg(s, &n, ORC_PT_BP, &tmp)) n.bp = tmp;
        break;
    case ORC_REG_PREV_SP:
        if (!rd64(s, cfa + (uint64_t)(int64_t)e->bp_offset, &n.bp)) return st->stop = ORC_STOP_READ, 0;
        break;
    case ORC_REG_BP:
        if (!rd64(s, u->bp + (uint64_t)(int64_t)e->bp_offset, &n.bp)) return st->stop = ORC_STOP_READ, 0;
        break;
    default: return st->stop = ORC_STOP_BAD, 0;
    }
    n.signal = e->signal;
    *u = n;
    return 1;
}

int orc_unwind(const orc_table *t, uint64_t slide, const struct orc_regs *r, uint64_t stack_base,
               const uint8_t *stack, size_t stack_len, uint64_t *pcs, int max, orc_status *st)
{
    orc_status local;
    if (!st) st = &local;
    memset(st, 0, sizeof *st);
    st->stop = ORC_STOP_BAD;
    if (!t || !r || !pcs || max <= 0 || (!stack && stack_len)) return 0;
    if (max > ORC_MAX_DEPTH) max = ORC_MAX_DEPTH;
    stack_copy s = {stack, stack_base, stack_len};
    unwind_state u = {r->rip, r->rsp, r->rbp, 1, 0, {REGS_NONE, NULL, 0}, {REGS_NONE, NULL, 0}};
    st->stop_ip = r->rip;
    if (r->pt_regs) {
        u.regs = (regs_view){REGS_HOST, r->pt_regs, 0};
        u.full_regs = 1;
        if (user_mode(&s, &u)) {
            st->stop = ORC_STOP_USER;
            st->user_rip = r->rip, st->user_rsp = r->rsp, st->user_rbp = r->rbp;
            return 0;
        }
    }
    int n = 0;
    pcs[n++] = u.ip;
    st->exact_mask = 1;
    st->stop = ORC_STOP_MAX;
    while (n < max) {
        uint64_t prev_sp = u.sp;
        if (!step(t, slide, &s, &u, st)) break;
        st->stop_ip = u.ip;
        if (user_mode(&s, &u)) {
            /* The entry code's pt_regs: the rest of the stack is user space's. */
            st->stop = ORC_STOP_USER;
            st->user_rip = u.ip, st->user_rsp = u.sp, st->user_rbp = u.bp;
            break;
        }
        /* Inside the copy sp must grow (so a loop is impossible); a frame whose sp is on
         * another stack (an IST or IRQ stack's interrupted context) is reported, but it is the
         * last: nothing of that stack is in the copy. */
        int inside = u.sp >= s.base && u.sp - s.base <= s.len;
        if (inside && u.sp <= prev_sp) {
            st->stop = ORC_STOP_LOOP;
            break;
        }
        if (n < 64 && u.signal) st->exact_mask |= 1ull << n;
        pcs[n++] = u.ip;
        if (!inside) {
            st->stop = ORC_STOP_READ;
            break;
        }
    }
    return n;
}

int fp_unwind(uint64_t rip, uint64_t rbp, uint64_t stack_base, const uint8_t *stack, size_t len, uint64_t *pcs,
              int max)
{
    if (!pcs || max <= 0 || (!stack && len)) return 0;
    if (max > ORC_MAX_DEPTH) max = ORC_MAX_DEPTH;
    stack_copy s = {stack, stack_base, len};
    int n = 0;
    pcs[n++] = rip;
    while (n < max) {
        uint64_t next, ret;
        if (!in_copy(&s, rbp, 16)) break; /* also catches rbp + 8 wrapping around */
        rd64(&s, rbp, &next);
        rd64(&s, rbp + 8, &ret);
        if (!ret) break;
        pcs[n++] = ret;
        if (next <= rbp) break; /* the chain must go up the stack: no loops */
        rbp = next;
    }
    return n;
}

int orc_korc(const orc_table *t, const ksym_table *syms, struct hvt_dif_korc *k, char *err, size_t errlen)
{
    memset(k, 0, sizeof *k);
    if (!t->ip_addr || !t->orc_addr || !t->count)
        return util_fail(err, errlen, "the ORC tables' addresses in the kernel are unknown");
    if (t->count > UINT32_MAX || t->nranges < 1 || t->nranges > HVT_DIF_KORC_RANGES)
        return util_fail(err, errlen, "the ORC tables do not fit the hypervisor's description");
    k->ip_table = t->ip_addr;
    k->entries = t->orc_addr;
    k->count = (uint32_t)t->count;
    k->layout = (uint32_t)t->layout;
    k->nranges = (uint32_t)t->nranges;
    for (int i = 0; i < t->nranges; i++) {
        k->range[i][0] = t->range_start[i];
        k->range[i][1] = t->range_end[i];
    }
    /* orc_lookup: u32 entry indexes, one per 256 bytes of [_stext, _etext) and one more */
    int ok = 1;
    uint64_t lk = sym_addr(syms, "orc_lookup", &ok), lke = sym_addr(syms, "orc_lookup_end", &ok);
    uint64_t st = sym_addr(syms, "_stext", &ok), et = sym_addr(syms, "_etext", &ok);
    if (ok && lke > lk && (lke - lk) % 4 == 0 && (lke - lk) / 4 <= UINT32_MAX && et > st) {
        k->lookup = lk;
        k->lookup_words = (uint32_t)((lke - lk) / 4);
        k->lookup_start = st;
        k->lookup_end = et;
    }
    return 0;
}
