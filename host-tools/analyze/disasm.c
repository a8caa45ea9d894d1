/* disasm: see disasm.h. */
#include "disasm.h"
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DISASM_INIT_BITS = 16, DISASM_TEXT_MAX = 192 };
#define DISASM_MIX 0xff51afd7ed558ccdull /* murmur3's fmix64 constant: spreads the code bytes */

/* Entries live densely in first-seen order (so code that runs in sequence sits side by side in
 * memory); a power-of-two slot table maps the key hash to entry index + 1. */
struct disasm_cache {
    csh cs;
    cs_insn *insn;
    const ksym_table *syms;
    int64_t slide;
    disasm_entry *ents;
    uint32_t nents, cap;
    uint32_t *slots;
    uint32_t bits;
    char *text;
    size_t text_len, text_cap;
    uint64_t misses;
};

static inline uint64_t key_hash(uint64_t rip, uint64_t lo, uint64_t hi)
{
    uint64_t h = (rip ^ lo * DISASM_MIX ^ hi) * UTIL_GOLDEN64;
    return h ^ (h >> 31);
}

/* The bytes as two words, masked to `len` (the bytes beyond belong to someone else). */
static inline void make_key(const uint8_t *code, uint8_t len, uint64_t *lo, uint64_t *hi)
{
    uint64_t a, b;
    memcpy(&a, code, 8);
    memcpy(&b, code + 8, 8);
    *lo = len >= 8 ? a : a & ((1ull << (8 * len)) - 1);
    *hi = len <= 8 ? 0 : len >= 16 ? b : b & ((1ull << (8 * (len - 8))) - 1);
}

disasm_cache *disasm_open(const ksym_table *syms, int64_t slide)
{
    disasm_cache *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs) != CS_ERR_OK) {
        free(d);
        return NULL;
    }
    cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON); /* before cs_malloc: it then allocates detail */
    d->insn = cs_malloc(d->cs);
    d->syms = syms;
    d->slide = slide;
    d->bits = DISASM_INIT_BITS;
    d->slots = calloc((size_t)1 << d->bits, sizeof *d->slots);
    d->cap = 1u << (DISASM_INIT_BITS - 1);
    d->ents = malloc((size_t)d->cap * sizeof *d->ents);
    if (!d->insn || !d->slots || !d->ents) {
        disasm_close(d);
        return NULL;
    }
    return d;
}

void disasm_close(disasm_cache *d)
{
    if (!d) return;
    if (d->insn) cs_free(d->insn, 1);
    cs_close(&d->cs);
    free(d->slots);
    free(d->ents);
    free(d->text);
    free(d);
}

/* Keep the slot table at most half full. */
static int grow_slots(disasm_cache *d)
{
    size_t n = (size_t)1 << (d->bits + 1), mask = n - 1;
    uint32_t *t = calloc(n, sizeof *t);
    if (!t) return -1;
    for (uint32_t k = 0; k < d->nents; k++) {
        const disasm_entry *e = &d->ents[k];
        size_t j = key_hash(e->rip, e->key_lo, e->key_hi) & mask;
        while (t[j]) j = (j + 1) & mask;
        t[j] = k + 1;
    }
    free(d->slots);
    d->slots = t;
    d->bits++;
    return 0;
}

static uint32_t add_text(disasm_cache *d, const char *s)
{
    size_t l = strlen(s) + 1;
    if (d->text_len + l > d->text_cap) {
        d->text_cap = (d->text_len + l) * 2 + 4096;
        char *t = realloc(d->text, d->text_cap);
        if (!t) return 0;
        d->text = t;
    }
    memcpy(d->text + d->text_len, s, l);
    d->text_len += l;
    return (uint32_t)(d->text_len - l);
}

static disasm_kind classify(const cs_insn *in, uint64_t *target)
{
    *target = 0;
    const cs_x86 *x = &in->detail->x86;
    int grp_call = 0, grp_ret = 0, grp_jump = 0, grp_iret = 0, grp_int = 0;
    for (int i = 0; i < in->detail->groups_count; i++) {
        switch (in->detail->groups[i]) {
        case CS_GRP_CALL: grp_call = 1; break;
        case CS_GRP_RET: grp_ret = 1; break;
        case CS_GRP_JUMP: grp_jump = 1; break;
        case CS_GRP_IRET: grp_iret = 1; break;
        case CS_GRP_INT: grp_int = 1; break;
        default: break;
        }
    }
    if ((grp_call || grp_jump) && x->op_count == 1 && x->operands[0].type == X86_OP_IMM)
        *target = (uint64_t)x->operands[0].imm;
    switch (in->id) {
    case X86_INS_SYSRET: case X86_INS_SYSEXIT: return DISASM_SYSRET;
    case X86_INS_SYSCALL: case X86_INS_SYSENTER: return DISASM_SYSCALL;
    case X86_INS_JMP: case X86_INS_LJMP: return DISASM_JMP;
    default: break;
    }
    if (grp_iret) return DISASM_IRET;
    if (grp_ret) return DISASM_RET;
    if (grp_call) return DISASM_CALL;
    if (grp_int) return DISASM_INT;
    if (grp_jump) return DISASM_JCC;
    return DISASM_OTHER;
}

static void format_text(const cs_insn *in, char *out, size_t n)
{
    if (in->op_str[0]) snprintf(out, n, "%s %s", in->mnemonic, in->op_str);
    else snprintf(out, n, "%s", in->mnemonic);
}

static inline int same_key(const disasm_entry *e, uint64_t rip, uint64_t lo, uint64_t hi, uint8_t len)
{
    return e->rip == rip && e->key_lo == lo && e->key_hi == hi && e->klen == len;
}

static disasm_entry *insert(disasm_cache *d, uint64_t rip, uint64_t lo, uint64_t hi, const uint8_t *code, uint8_t len);

/* Index of the entry for the key, inserting (decoding) it if new; UINT32_MAX on failure. */
static uint32_t lookup(disasm_cache *d, uint64_t rip, uint64_t lo, uint64_t hi, const uint8_t *code, uint8_t len)
{
    size_t mask = ((size_t)1 << d->bits) - 1;
    size_t i = key_hash(rip, lo, hi) & mask;
    for (; d->slots[i]; i = (i + 1) & mask)
        if (same_key(&d->ents[d->slots[i] - 1], rip, lo, hi, len)) return d->slots[i] - 1;
    if (!insert(d, rip, lo, hi, code, len)) return UINT32_MAX;
    d->slots[i] = d->nents;
    if ((size_t)d->nents * 2 > mask && grow_slots(d) != 0) return UINT32_MAX;
    return d->nents - 1;
}

const disasm_entry *disasm_get(disasm_cache *d, uint64_t rip, const uint8_t *code, uint8_t len)
{
    uint64_t lo, hi;
    make_key(code, len, &lo, &hi);
    uint32_t k = lookup(d, rip, lo, hi, code, len);
    return k == UINT32_MAX ? NULL : &d->ents[k];
}

const disasm_entry *disasm_next(disasm_cache *d, uint32_t *hint, uint64_t rip, const uint8_t *code, uint8_t len)
{
    uint64_t lo, hi;
    make_key(code, len, &lo, &hi);
    uint32_t h = *hint;
    if (h && h <= d->nents) {
        uint32_t s = d->ents[h - 1].succ; /* what followed last time */
        if (s && same_key(&d->ents[s - 1], rip, lo, hi, len)) {
            *hint = s;
            return &d->ents[s - 1];
        }
        if (h < d->nents && same_key(&d->ents[h], rip, lo, hi, len)) { /* next in first-seen order */
            d->ents[h - 1].succ = h + 1;
            *hint = h + 1;
            return &d->ents[h];
        }
    }
    uint32_t k = lookup(d, rip, lo, hi, code, len);
    if (k == UINT32_MAX) return NULL;
    if (h && h <= d->nents) d->ents[h - 1].succ = k + 1;
    *hint = k + 1;
    return &d->ents[k];
}

static disasm_entry *insert(disasm_cache *d, uint64_t rip, uint64_t lo, uint64_t hi, const uint8_t *code, uint8_t len)
{
    d->misses++;
    if (d->nents == d->cap) {
        disasm_entry *n = realloc(d->ents, (size_t)d->cap * 2 * sizeof *n);
        if (!n) return NULL;
        d->ents = n;
        d->cap *= 2;
    }
    disasm_entry *e = &d->ents[d->nents++];
    memset(e, 0, sizeof *e);
    e->used = 1;
    e->rip = rip;
    e->key_lo = lo;
    e->key_hi = hi;
    e->klen = len;
    e->sym = -1;
    const uint8_t *p = code;
    size_t sz = len;
    uint64_t addr = rip;
    char text[DISASM_TEXT_MAX];
    if (cs_disasm_iter(d->cs, &p, &sz, &addr, d->insn)) {
        e->len = (uint8_t)d->insn->size;
        e->kind = (uint8_t)classify(d->insn, &e->target);
        format_text(d->insn, text, sizeof text);
    } else {
        e->kind = DISASM_BAD;
        snprintf(text, sizeof text, "(bad)");
    }
    e->text_off = add_text(d, text);
    if (d->syms && disasm_is_kernel(rip)) {
        uint64_t off;
        int64_t s = ksym_lookup(d->syms, rip - (uint64_t)d->slide, &off);
        if (s >= 0 && off < UINT32_MAX) {
            e->sym = (int32_t)s;
            e->sym_off = (uint32_t)off;
        }
    }
    return e;
}

const char *disasm_text(const disasm_cache *d, const disasm_entry *e) { return d->text + e->text_off; }

int disasm_raw(disasm_cache *d, uint64_t rip, const uint8_t *code, uint8_t len, char *text, size_t n)
{
    cs_insn *in;
    size_t c = cs_disasm(d->cs, code, len, rip, 1, &in);
    if (!c) {
        snprintf(text, n, "(bad)");
        return -1;
    }
    format_text(in, text, n);
    cs_free(in, c);
    return 0;
}

uint64_t disasm_misses(const disasm_cache *d) { return d->misses; }
