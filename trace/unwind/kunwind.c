/* kunwind.c - the kernel's ORC unwinder over guest memory (kunwind.h). The rules follow the
 * kernel's unwind_next_frame(): find the entry of the current ip (ip - 1 for a return address,
 * so a call to a noreturn function at a function's end still finds the caller's entry),
 * compute the caller's stack pointer (the CFA) from sp_reg/sp_offset, then the caller's ip
 * (CALL: the return address just below the CFA; REGS: a pt_regs at the CFA; REGS_PARTIAL: an
 * iret frame at the CFA) and bp (from bp_reg/bp_offset, or the pt_regs just crossed). */
#include "kunwind.h"

/* The kernel's ORC_REG_* (every layout) and the normalized types (6.4+'s numbering). */
enum { REG_UNDEFINED = 0, REG_PREV_SP, REG_DX, REG_DI, REG_BP, REG_SP, REG_R10, REG_R13,
       REG_BP_INDIRECT, REG_SP_INDIRECT };
enum { TYPE_UNDEFINED = 0, TYPE_END = 1, TYPE_CALL = 2, TYPE_REGS = 3, TYPE_REGS_PARTIAL = 4,
       TYPE_INVALID = 7 };
/* x86-64 struct pt_regs: the words the unwinder reads (byte offsets), and the iret frame
 * (ip cs flags sp ss) that ends it. */
enum { PT_R13 = 16, PT_BP = 32, PT_R10 = 56, PT_DX = 96, PT_DI = 112, PT_IP = 128, PT_CS = 136,
       PT_SP = 152, PT_SIZE = 21 * 8, IRET_OFFSET = PT_IP, IRET_SIZE = 40 };
#define ENTRY_SIZE 6                       /* s16 sp_offset, s16 bp_offset, u16 bits */

struct entry {
    int16_t sp_offset, bp_offset;
    uint8_t sp_reg, bp_reg, type, signal;
};

/* A pt_regs: none, the caller's registers (hypervisor memory), or one on the stack. */
enum { REGS_NONE, REGS_HOST, REGS_STACK };
struct regs_view { int kind; const uint64_t *host; uint64_t addr; };

struct state {
    uint64_t ip, sp, bp;
    bool signal, full_regs;
    struct regs_view regs, prev_regs;
};

struct ctx {
    const struct kunwind_tables *t;
    const struct kunwind_mem *m;
    uint64_t lo, hi;                       /* the stack words that may be read */
};

const char *kunwind_tables_check(const struct kunwind_tables *t)
{
    if (!t->count || t->count > KUNWIND_MAX_COUNT)
        return "ORC entry count out of range";
    if (t->layout < 1 || t->layout > 3)
        return "unknown ORC layout";
    if (t->ip_table + 4ull * t->count < t->ip_table || t->entries + ENTRY_SIZE * (uint64_t)t->count < t->entries)
        return "ORC tables wrap around";
    if (!t->nranges || t->nranges > KUNWIND_RANGES)
        return "bad number of text ranges";
    for (unsigned i = 0; i < t->nranges; i++)
        if (t->range_start[i] >= t->range_end[i])
            return "empty text range";
    if (t->lookup && (t->lookup_words < 2 || t->lookup_start >= t->lookup_end ||
                      t->lookup + 4ull * t->lookup_words < t->lookup))
        return "bad ORC lookup index";
    return NULL;
}

static bool rd(const struct ctx *c, uint64_t va, void *buf, size_t len)
{
    return c->m->read(c->m->ctx, va, buf, len) == len;
}

/* A stack word: only inside [lo, hi) (the host unwinder's copy). */
static bool rd64(const struct ctx *c, uint64_t addr, uint64_t *v)
{
    if (addr < c->lo || addr > c->hi || c->hi - addr < 8)
        return false;
    const struct kunwind_mem *m = c->m;
    if (m->win && addr >= m->win_lo && addr < m->win_hi && m->win_hi - addr >= 8) {
        __builtin_memcpy(v, m->win + (addr - m->win_lo), 8);
        return true;
    }
    return rd(c, addr, v, 8);
}

static bool in_stack(const struct ctx *c, uint64_t addr, uint64_t len)
{
    return addr >= c->lo && addr <= c->hi && c->hi - addr >= len;
}

static bool view_get(const struct ctx *c, const struct regs_view *v, unsigned off, uint64_t *val)
{
    if (v->kind == REGS_HOST) {
        *val = v->host[off / 8];
        return true;
    }
    return v->kind == REGS_STACK && rd64(c, v->addr + off, val);
}

/* The kernel's get_reg(): a register saved in the last pt_regs crossed (or, after an iret
 * frame, in the full pt_regs before it). */
static bool get_reg(const struct ctx *c, const struct state *u, unsigned off, uint64_t *val)
{
    if (u->regs.kind == REGS_NONE)
        return false;
    if (u->full_regs)
        return view_get(c, &u->regs, off, val);
    return u->prev_regs.kind != REGS_NONE && view_get(c, &u->prev_regs, off, val);
}

static bool user_mode(const struct ctx *c, const struct state *u)
{
    uint64_t cs;
    return u->regs.kind != REGS_NONE && view_get(c, &u->regs, PT_CS, &cs) && (cs & 3);
}

static void decode(const uint8_t *p, uint32_t layout, struct entry *e)
{
    unsigned bits = (unsigned)p[4] | (unsigned)p[5] << 8;
    e->sp_offset = (int16_t)((unsigned)p[0] | (unsigned)p[1] << 8);
    e->bp_offset = (int16_t)((unsigned)p[2] | (unsigned)p[3] << 8);
    e->sp_reg = bits & 0xf;
    e->bp_reg = (bits >> 4) & 0xf;
    if (layout == 3) {
        unsigned raw = (bits >> 8) & 7;
        e->type = raw <= TYPE_REGS_PARTIAL ? (uint8_t)raw : TYPE_INVALID;
        e->signal = (bits >> 11) & 1;
        return;
    }
    /* 6.3 and before: types CALL 0, REGS 1, REGS_PARTIAL 2; "undefined" and "end of stack"
     * are sp_reg UNDEFINED without/with the end bit (bit 10 before 6.3, bit 11 in 6.3). */
    static const uint8_t map[4] = { TYPE_CALL, TYPE_REGS, TYPE_REGS_PARTIAL, TYPE_INVALID };
    unsigned end = layout == 1 ? (bits >> 10) & 1 : (bits >> 11) & 1;
    if (e->sp_reg == REG_UNDEFINED)
        e->type = end ? TYPE_END : TYPE_UNDEFINED;
    else
        e->type = map[(bits >> 8) & 3];
    /* no signal bit before 6.3: the ip after a REGS/REGS_PARTIAL frame is exact */
    e->signal = layout == 2 ? (bits >> 10) & 1 : e->type == TYPE_REGS || e->type == TYPE_REGS_PARTIAL;
}

static bool ip_at(const struct ctx *c, uint32_t i, uint64_t *ip)
{
    int32_t rel;
    uint64_t slot = c->t->ip_table + 4ull * i;
    if (!rd(c, slot, &rel, 4))
        return false;
    *ip = slot + (uint64_t)(int64_t)rel;
    return true;
}

/* The last entry in [first, first + n) whose address is <= ip (the kernel's __orc_find, a
 * binary search while more than SEARCH_TAIL entries remain, then those read in one go);
 * 1 found (*idx), 0 none, -1 a table read failed. */
#define SEARCH_TAIL 16u
static int search(const struct ctx *c, uint32_t first, uint32_t n, uint64_t ip, uint32_t *idx)
{
    uint32_t lo = first, hi = first + n;     /* the answer is in [lo, hi), or found already */
    bool found = false;
    while (hi - lo > SEARCH_TAIL) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint64_t a;
        if (!ip_at(c, mid, &a))
            return -1;
        if (a <= ip) {
            *idx = mid;
            found = true;
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (lo == hi)
        return found;
    int32_t rel[SEARCH_TAIL];
    uint64_t slot = c->t->ip_table + 4ull * lo;
    if (!rd(c, slot, rel, 4 * (size_t)(hi - lo)))
        return -1;
    uint32_t l = 0, h = hi - lo;             /* the same search over the copy */
    while (l < h) {
        uint32_t mid = l + (h - l) / 2;
        if (slot + 4ull * mid + (uint64_t)(int64_t)rel[mid] <= ip) {
            *idx = lo + mid;
            found = true;
            l = mid + 1;
        } else {
            h = mid;
        }
    }
    return found;
}

/* An entry in 8 bytes for the cache: offsets, registers, type, signal, and bit 63 set (so a
 * cached "no entry" is 1ull << 62 and an empty slot 0). */
#define CACHED (1ull << 63)
#define CACHED_NONE (1ull << 62)
static uint64_t pack(const struct entry *e)
{
    return CACHED | (uint64_t)(uint16_t)e->sp_offset | (uint64_t)(uint16_t)e->bp_offset << 16 |
           (uint64_t)e->sp_reg << 32 | (uint64_t)e->bp_reg << 40 | (uint64_t)e->type << 48 |
           (uint64_t)e->signal << 56;
}
static void unpack(uint64_t v, struct entry *e)
{
    e->sp_offset = (int16_t)(uint16_t)v;
    e->bp_offset = (int16_t)(uint16_t)(v >> 16);
    e->sp_reg = (uint8_t)(v >> 32);
    e->bp_reg = (uint8_t)(v >> 40);
    e->type = (uint8_t)(v >> 48);
    e->signal = (uint8_t)(v >> 56) & 1;
}

static int find_tables(const struct ctx *c, uint64_t ip, struct entry *e);

/* The entry for ip: 1 found, 0 none (outside the text, or no entry at or below it), -1 a
 * table read failed (never cached). */
static int find(const struct ctx *c, uint64_t ip, struct entry *e)
{
    struct kunwind_cache *k = c->m->cache;
    if (!k)
        return find_tables(c, ip, e);
    /* two ways: slots h and h ^ 1; a new entry goes to h, the one there moves to h ^ 1 */
    unsigned h = (unsigned)((ip * 0x9e3779b97f4a7c15ull) >> 56) & (KUNWIND_CACHE - 1);
    for (unsigned w = h; w == h || w == (h ^ 1); w = w == h ? h ^ 1 : KUNWIND_CACHE)
        if (k->slot[w].e && k->slot[w].look == ip) {
            if (k->slot[w].e & CACHED_NONE)
                return 0;
            unpack(k->slot[w].e, e);
            return 1;
        }
    int f = find_tables(c, ip, e);
    if (f >= 0) {
        k->slot[h ^ 1] = k->slot[h];
        k->slot[h].look = ip;
        k->slot[h].e = f ? pack(e) : CACHED | CACHED_NONE;
    }
    return f;
}

static int find_tables(const struct ctx *c, uint64_t ip, struct entry *e)
{
    const struct kunwind_tables *t = c->t;
    bool in = false;
    for (unsigned i = 0; i < t->nranges && !in; i++)
        in = ip >= t->range_start[i] && ip < t->range_end[i];
    if (!in)
        return 0;
    uint32_t first = 0, n = t->count, idx = 0;
    if (t->lookup && ip >= t->lookup_start && ip < t->lookup_end) {
        uint64_t b = (ip - t->lookup_start) / KUNWIND_LOOKUP_BLOCK;
        uint32_t w[2];
        if (b + 1 < t->lookup_words) {
            if (!rd(c, t->lookup + 4 * b, w, sizeof w))
                return -1;
            /* the block's entries are [w[0], w[1]]; an index the guest broke: search it all */
            if (w[0] <= w[1] && w[1] < t->count) {
                first = w[0];
                n = w[1] - w[0] + 1;
            }
        }
    }
    int f = search(c, first, n, ip, &idx);
    if (f == 0 && first) {                  /* below the block's first entry: a bad index */
        f = search(c, 0, t->count, ip, &idx);
    }
    if (f <= 0)
        return f;
    uint8_t raw[ENTRY_SIZE];
    if (!rd(c, t->entries + (uint64_t)ENTRY_SIZE * idx, raw, sizeof raw))
        return -1;
    decode(raw, t->layout, e);
    return 1;
}

/* Where no entry applies: ip 0 (a call through a NULL pointer: the return address is on top
 * of the stack), and code without ORC (BPF JIT, trampolines), guessed to keep a frame
 * pointer. */
static const struct entry null_entry = { 8, 0, REG_SP, REG_UNDEFINED, TYPE_CALL, 0 };
static const struct entry fp_entry = { 16, -16, REG_BP, REG_PREV_SP, TYPE_CALL, 0 };

/* One frame up: true moved, false stopped (res->stop says why). */
static bool step(const struct ctx *c, struct state *u, struct kunwind_result *res)
{
    struct entry e;
    uint64_t look = u->signal ? u->ip : u->ip - 1;
    if (u->signal && u->ip == 0) {
        e = null_entry;
    } else {
        int f = find(c, look, &e);
        if (f < 0) {
            res->stop = KUNWIND_STOP_TABLE;
            return false;
        }
        if (f == 0) {
            e = fp_entry;
            res->guessed = true;
        } else if (e.type == TYPE_UNDEFINED) {
            res->stop = KUNWIND_STOP_UNDEFINED;
            return false;
        } else if (e.type == TYPE_END) {
            res->stop = KUNWIND_STOP_END;
            return false;
        }
    }
    uint64_t off = (uint64_t)(int64_t)e.sp_offset, cfa, tmp;
    bool indirect = false;
    switch (e.sp_reg) {
    case REG_SP: cfa = u->sp + off; break;
    case REG_BP: cfa = u->bp + off; break;
    case REG_SP_INDIRECT: cfa = u->sp; indirect = true; break;     /* (sp) + offset */
    case REG_BP_INDIRECT: cfa = u->bp + off; indirect = true; break; /* (bp + offset) */
    case REG_R10: case REG_R13: case REG_DI: case REG_DX: {
        unsigned ro = e.sp_reg == REG_R10 ? PT_R10 : e.sp_reg == REG_R13 ? PT_R13
                    : e.sp_reg == REG_DI ? PT_DI : PT_DX;
        if (!get_reg(c, u, ro, &cfa)) {
            res->stop = KUNWIND_STOP_BAD;
            return false;
        }
        break;
    }
    default:
        res->stop = KUNWIND_STOP_BAD;
        return false;
    }
    if (indirect) {
        if (!rd64(c, cfa, &cfa)) {
            res->stop = KUNWIND_STOP_READ;
            return false;
        }
        if (e.sp_reg == REG_SP_INDIRECT)
            cfa += off;
    }
    struct state n = *u;
    switch (e.type) {
    case TYPE_CALL:
        if (!rd64(c, cfa - 8, &n.ip)) {
            res->stop = KUNWIND_STOP_READ;
            return false;
        }
        if (!n.ip) {
            res->stop = KUNWIND_STOP_BAD;
            return false;
        }
        n.sp = cfa;
        n.regs.kind = n.prev_regs.kind = REGS_NONE;
        break;
    case TYPE_REGS:
        if (!in_stack(c, cfa, PT_SIZE) || !rd64(c, cfa + PT_IP, &n.ip) || !rd64(c, cfa + PT_SP, &n.sp)) {
            res->stop = KUNWIND_STOP_READ;
            return false;
        }
        n.regs = (struct regs_view){ REGS_STACK, NULL, cfa };
        n.prev_regs.kind = REGS_NONE;
        n.full_regs = true;
        break;
    case TYPE_REGS_PARTIAL:
        if (!in_stack(c, cfa, IRET_SIZE) || !rd64(c, cfa, &n.ip) || !rd64(c, cfa + (PT_SP - PT_IP), &n.sp)) {
            res->stop = KUNWIND_STOP_READ;
            return false;
        }
        if (u->full_regs)
            n.prev_regs = u->regs;
        n.regs = (struct regs_view){ REGS_STACK, NULL, cfa - IRET_OFFSET };
        n.full_regs = false;
        break;
    default:
        res->stop = KUNWIND_STOP_BAD;
        return false;
    }
    switch (e.bp_reg) {
    case REG_UNDEFINED:
        if (get_reg(c, &n, PT_BP, &tmp))
            n.bp = tmp;
        break;
    case REG_PREV_SP:
        if (!rd64(c, cfa + (uint64_t)(int64_t)e.bp_offset, &n.bp)) {
            res->stop = KUNWIND_STOP_READ;
            return false;
        }
        break;
    case REG_BP:
        if (!rd64(c, u->bp + (uint64_t)(int64_t)e.bp_offset, &n.bp)) {
            res->stop = KUNWIND_STOP_READ;
            return false;
        }
        break;
    default:
        res->stop = KUNWIND_STOP_BAD;
        return false;
    }
    n.signal = e.signal;
    *u = n;
    return true;
}

unsigned kunwind(const struct kunwind_tables *t, const struct kunwind_mem *m,
                 const struct kunwind_regs *r, uint64_t stack_lo, uint64_t stack_hi,
                 uint64_t *pcs, unsigned max, struct kunwind_result *res)
{
    *res = (struct kunwind_result){ .stop = KUNWIND_STOP_BAD };
    if (!max || stack_hi < stack_lo)
        return 0;
    if (max > KUNWIND_MAX_DEPTH)
        max = KUNWIND_MAX_DEPTH;
    struct ctx c = { t, m, stack_lo, stack_hi };
    struct state u = { r->rip, r->rsp, r->rbp, true, false, { REGS_NONE, NULL, 0 }, { REGS_NONE, NULL, 0 } };
    if (r->pt_regs) {
        u.regs = (struct regs_view){ REGS_HOST, r->pt_regs, 0 };
        u.full_regs = true;
        if (user_mode(&c, &u)) {
            res->stop = KUNWIND_STOP_USER;
            res->user_rip = r->rip;
            res->user_rsp = r->rsp;
            res->user_rbp = r->rbp;
            return 0;
        }
    }
    unsigned n = 0;
    pcs[n++] = u.ip;
    res->exact_mask = 1;
    res->stop = KUNWIND_STOP_MAX;
    while (n < max) {
        uint64_t prev_sp = u.sp;
        if (!step(&c, &u, res))
            break;
        if (user_mode(&c, &u)) {
            /* the entry code's pt_regs: the rest is user space's */
            res->stop = KUNWIND_STOP_USER;
            res->user_rip = u.ip;
            res->user_rsp = u.sp;
            res->user_rbp = u.bp;
            break;
        }
        /* inside the stack sp must grow (no loops); a frame whose sp is elsewhere (an IST or
         * IRQ stack's interrupted context) is reported, but it is the last */
        bool inside = u.sp >= stack_lo && u.sp <= stack_hi;
        if (inside && u.sp <= prev_sp) {
            res->stop = KUNWIND_STOP_LOOP;
            break;
        }
        if (n < 64 && u.signal)
            res->exact_mask |= 1ull << n;
        pcs[n++] = u.ip;
        if (!inside) {
            res->stop = KUNWIND_STOP_READ;
            break;
        }
    }
    res->n = n;
    return n;
}
