/*
 * dif_vm.c - the D interpreter (dif.h): one firing runs its probe's clauses in order on one
 * CPU, under that CPU's buffer lock. Registers carry a run-time type beside their value, so
 * EMIT and TPUSH know what they hold and string uses are checked twice (the verifier proved
 * them already). A clause's record is built in place at the buffer's tail (its speculation's
 * buffer after speculate(): dif_spec.c) and only committed (the tail moved) at RET; a fault or
 * a full buffer abandons it.
 */
#include "dif_impl.h"
#include "dif_lean.h"
#include "hvt_probe.h"

#define R(x) ((x) & (HVT_DIF_NREGS - 1))

static void dif_set_int(struct dif_run *r, unsigned rd, uint64_t v)
{
    r->reg[R(rd)] = v;
    r->rt[R(rd)] = DIF_RT_INT;
}

static bool dif_illop(struct dif_run *r) { return dif_fault(r, HVT_DIF_F_ILLOP, 0); }

/* Room for n more bytes of this clause's record; NULL (and the clause ends with a drop) when
 * the buffer cannot hold them. Records start 8-aligned and grow by multiples of 8. */
static uint8_t *dif_rec_room(struct dif_run *r, uint32_t n)
{
    struct dif_cpu *c = r->c;
    uint32_t tail = c->buf_tail, size = c->buf_size;
    uint8_t *base = r->spec ? dif_spec_out(r, &tail, &size) : c->buf;
    if ((uint64_t)tail + r->rec_len + n > size) {
        r->dropped = true;
        return NULL;
    }
    uint8_t *p = base + tail + r->rec_len;
    r->rec_len += n;
    return p;
}

static bool dif_emit_int(struct dif_run *r, uint64_t v)
{
    uint8_t *p = dif_rec_room(r, 8);
    if (!p)
        return false;
    *(uint64_t *)p = v;
    return true;
}

/* u16 length, the bytes, zeros to a multiple of 8 (also a tuple key's encoding) */
static void dif_put_str(uint8_t *p, const char *s, uint32_t len)
{
    uint32_t n = dif_round8(2 + len);
    uint16_t l16 = (uint16_t)len;
    *(uint64_t *)(p + n - 8) = 0;
    __builtin_memcpy(p, &l16, 2);    /* p may be the uint64_t tuple: no uint16_t store */
    memcpy(p + 2, s, len);
}

/* TPUSH of execname, the common key (r->exec16): its 16 bytes read in place as two words
 * (dif_str_get's EXEC case without the handle's decoding), the key made from them
 * (dif_exec_key: dif_put_str's encoding). */
static bool dif_tpush(struct dif_run *r, unsigned ra);
static inline __attribute__((always_inline)) bool dif_tpush_exec(struct dif_run *r, unsigned ra)
{
    struct dif_cpu *c = r->c;
    if (c->tuple_n >= HVT_DIF_TUPLE_MAX || c->tuple_len + 24 > HVT_DIF_KEY_MAX)
        return dif_tpush(r, ra);                /* (its faults, or a shorter name that fits) */
    uint64_t k[3];
    uint32_t len = dif_exec_key(r->f->execname, k);
    if (!dif_charge(r, len))
        return false;
    __builtin_memcpy(c->tuple + c->tuple_len / 8, k, sizeof k);    /* tuple_len: 8-multiple */
    c->tuple_types[c->tuple_n++] = DIF_RT_STR;
    c->tuple_len += dif_round8(2 + len);
    return true;
}

static bool dif_tpush(struct dif_run *r, unsigned ra)
{
    struct dif_cpu *c = r->c;
    uint8_t *t = (uint8_t *)c->tuple;
    uint8_t type = r->rt[R(ra)];
    const char *s;
    uint32_t len, n = 8;
    if (c->tuple_n >= HVT_DIF_TUPLE_MAX)
        return dif_fault(r, HVT_DIF_F_TUPLE, 0);
    if (type == DIF_RT_STR) {
        if (!dif_str_get(r, ra, &s, &len))
            return false;
        n = dif_round8(2 + len);
        if (c->tuple_len + n > HVT_DIF_KEY_MAX)
            return dif_fault(r, HVT_DIF_F_TUPLE, 0);
        dif_put_str(t + c->tuple_len, s, len);
    } else if (type == DIF_RT_INT) {
        if (c->tuple_len + n > HVT_DIF_KEY_MAX)
            return dif_fault(r, HVT_DIF_F_TUPLE, 0);
        *(uint64_t *)(t + c->tuple_len) = r->reg[R(ra)];
    } else {
        return dif_illop(r);
    }
    c->tuple_types[c->tuple_n++] = type;
    c->tuple_len += n;
    return true;
}

static bool dif_tuple_is(const struct dif_cpu *c, unsigned nkeys, const uint8_t *types)
{
    if (c->tuple_n != nkeys)
        return false;
    for (unsigned i = 0; i < nkeys; i++)
        if (c->tuple_types[i] != types[i])
            return false;
    return true;
}

/* A string variable's value (NUL-terminated in its slot) into a scratch buffer for rd */
static bool dif_load_str(struct dif_run *r, unsigned rd, const char *src)
{
    unsigned slot;
    char *d = dif_scratch_alloc(r, &slot);
    uint32_t n = 0;
    if (!d)
        return false;
    while (n < r->st->strsize - 1 && src[n]) {
        d[n] = src[n];
        n++;
    }
    if (!dif_charge(r, n))
        return false;
    dif_str_set(r, rd, slot, n);
    return true;
}

/* LDSA / STSA: an element of a scalar array (`int a[5];`, `this int a[5];`): nelem slots
 * of the variable's type at its place in the globals or this CPU's locals, the index checked
 * here whatever the compiler proved (BADINDEX, arg the index, as dtrace-utils faults). A this->
 * array not yet stored in this firing reads as zeros; its first store zeroes it. */

/* A string variable's slot (a scalar, or one element of a scalar array): stored from s/len,
 * or loaded into register rd ("" where unset); a global's under the variables' lock, since
 * every CPU's firings share it. */
static bool str_slot(struct dif_run *r, const struct hvt_dif_var *v, uint8_t *slot, bool store,
                     const char *s, uint32_t len, bool unset, uint8_t rd)
{
    bool shared = v->kind == HVT_DIF_VK_GLOBAL, ok = true;
    if (shared)
        dif_lock(&r->st->var_lock);
    if (store) {
        memcpy(slot, s, len);
        slot[len] = 0;
    } else {
        ok = dif_load_str(r, rd, unset ? "" : (const char *)slot);
    }
    if (shared)
        dif_unlock(&r->st->var_lock);
    return ok;
}

static bool dif_op_array(struct dif_run *r, const struct hvt_dif_insn *in)
{
    struct dif_state *st = r->st;
    struct dif_cpu *c = r->c;
    uint32_t idx = (uint32_t)in->imm;
    if (idx >= st->hdr->nvars)
        return dif_illop(r);
    const struct hvt_dif_var *v = &st->vars[idx];
    if ((v->kind != HVT_DIF_VK_GLOBAL && v->kind != HVT_DIF_VK_LOCAL) || !v->nelem ||
        r->rt[R(in->ra)] != DIF_RT_INT)
        return dif_illop(r);
    uint64_t i = r->reg[R(in->ra)];
    if (i >= v->nelem)
        return dif_fault(r, HVT_DIF_F_BADINDEX, i);
    bool store = in->op == HVT_DIF_OP_STSA, is_str = v->type == HVT_DIF_T_STR;
    uint32_t esize = is_str ? dif_round8(st->strsize) : 8;
    const char *s = NULL;
    uint32_t len = 0;
    if (store && is_str && !dif_str_get(r, in->rb, &s, &len))
        return false;
    if (store && !is_str && r->rt[R(in->rb)] != DIF_RT_INT)
        return dif_illop(r);
    uint8_t *base = (v->kind == HVT_DIF_VK_GLOBAL ? st->globals : c->locals) + st->varpos[idx].off;
    uint8_t *slot = base + (size_t)i * esize;
    bool unset = false;
    if (v->kind == HVT_DIF_VK_LOCAL) {
        uint32_t *gen = &c->local_gen[st->varpos[idx].idx];
        unset = *gen != c->gen;
        if (store && unset) {
            if (!dif_charge(r, (uint64_t)v->nelem * esize))
                return false;
            memset(base, 0, (size_t)v->nelem * esize);
            *gen = c->gen;
            unset = false;
        }
    }
    if (!is_str) {
        if (store)
            __atomic_store_n((uint64_t *)slot, r->reg[R(in->rb)], __ATOMIC_RELAXED);
        else
            dif_set_int(r, in->rd, unset ? 0 : __atomic_load_n((uint64_t *)slot, __ATOMIC_RELAXED));
        return true;
    }
    return str_slot(r, v, slot, store, s, len, unset, in->rd);
}

/* LDxV / STxV: globals, thread-locals, this->, associative arrays */
static bool dif_op_var(struct dif_run *r, const struct hvt_dif_insn *in)
{
    struct dif_state *st = r->st;
    struct dif_cpu *c = r->c;
    static const uint8_t kind_of[HVT_DIF_OP__COUNT] = {
        [HVT_DIF_OP_LDGV] = HVT_DIF_VK_GLOBAL, [HVT_DIF_OP_STGV] = HVT_DIF_VK_GLOBAL,
        [HVT_DIF_OP_LDTV] = HVT_DIF_VK_THREAD, [HVT_DIF_OP_STTV] = HVT_DIF_VK_THREAD,
        [HVT_DIF_OP_LDLV] = HVT_DIF_VK_LOCAL, [HVT_DIF_OP_STLV] = HVT_DIF_VK_LOCAL,
        [HVT_DIF_OP_LDAV] = HVT_DIF_VK_ASSOC, [HVT_DIF_OP_STAV] = HVT_DIF_VK_ASSOC,
    };
    uint32_t idx = (uint32_t)in->imm;
    if (idx >= st->hdr->nvars || st->vars[idx].kind != kind_of[in->op])
        return dif_illop(r);
    const struct hvt_dif_var *v = &st->vars[idx];
    bool store = in->op == HVT_DIF_OP_STGV || in->op == HVT_DIF_OP_STTV ||
                 in->op == HVT_DIF_OP_STLV || in->op == HVT_DIF_OP_STAV;
    bool is_str = v->type == HVT_DIF_T_STR;
    uint64_t ival = r->reg[R(in->ra)];
    const char *s = NULL;
    uint32_t len = 0;
    if (store && is_str && !dif_str_get(r, in->ra, &s, &len))
        return false;
    if (store && !is_str && r->rt[R(in->ra)] != DIF_RT_INT)
        return dif_illop(r);
    if ((v->kind == HVT_DIF_VK_GLOBAL || v->kind == HVT_DIF_VK_LOCAL) && v->nelem)
        return dif_illop(r);             /* a scalar array: LDSA/STSA only */
    if (v->kind == HVT_DIF_VK_GLOBAL || v->kind == HVT_DIF_VK_LOCAL) {
        uint8_t *slot = (v->kind == HVT_DIF_VK_GLOBAL ? st->globals : c->locals) +
                        st->varpos[idx].off;
        uint32_t *gen = &c->local_gen[st->varpos[idx].idx];
        /* this-> values not set in this firing read as 0 / "" */
        bool unset = v->kind == HVT_DIF_VK_LOCAL && !store && *gen != c->gen;
        if (store && v->kind == HVT_DIF_VK_LOCAL)
            *gen = c->gen;
        if (!is_str) {
            if (store)
                __atomic_store_n((uint64_t *)slot, ival, __ATOMIC_RELAXED);
            else
                dif_set_int(r, in->rd, unset ? 0 : __atomic_load_n((uint64_t *)slot,
                                                                    __ATOMIC_RELAXED));
            return true;
        }
        return str_slot(r, v, slot, store, s, len, unset, in->rd);
    }
    /* dynamic: keyed by the tid or by the tuple */
    uint64_t tid = r->f->v[HVT_DIF_V_TID];
    const uint64_t *key = &tid;
    uint32_t key_len = 8;
    if (v->kind == HVT_DIF_VK_ASSOC) {
        if (!dif_tuple_is(c, v->nkeys, v->key_types))
            return dif_illop(r);
        key = c->tuple;
        key_len = c->tuple_len;
        if (!dif_charge(r, key_len)) /* hashed and compared */
            return false;
    }
    if (store) {
        bool ok = is_str ? dif_dyn_store(st, v->kind, (uint16_t)idx, key, key_len, s, len)
                         : dif_dyn_store(st, v->kind, (uint16_t)idx, key, key_len, &ival,
                                         ival ? 8 : 0);
        if (!ok)
            __atomic_fetch_add(&st->dyndrops, 1, __ATOMIC_RELAXED);
        return true;
    }
    if (!is_str) {
        uint64_t val = 0;
        dif_dyn_load(st, v->kind, (uint16_t)idx, key, key_len, &val, 8);
        dif_set_int(r, in->rd, val);
        return true;
    }
    unsigned slot;
    char *d = dif_scratch_alloc(r, &slot);
    if (!d)
        return false;
    uint32_t got = dif_dyn_load(st, v->kind, (uint16_t)idx, key, key_len, d, st->strsize - 1);
    if (!dif_charge(r, got))
        return false;
    dif_str_set(r, in->rd, slot, got);
    return true;
}

/* The user stack into pcs[0 .. max): the user pc, then the frame-pointer chain's return
 * addresses (see dif.h); returns how many. */
#define DIF_USER_TOP 0x0000800000000000ull
static uint32_t dif_ustack(struct dif_run *r, uint64_t *pcs, uint32_t max)
{
    const struct dif_env *e = &r->st->env;
    uint64_t pc, fp;
    if (!e->uregs || !e->read || !e->uregs(r->f->ctx, &pc, &fp) || !pc || pc >= DIF_USER_TOP)
        return 0;
    uint32_t n = 0;
    pcs[n++] = pc;
    while (n < max && fp && !(fp & 7) && fp < DIF_USER_TOP - 16) {
        uint64_t fr[2];                        /* saved fp, return address */
        if (e->read(r->f->ctx, fp, fr, sizeof fr, 1) != sizeof fr || !fr[1] || fr[1] >= DIF_USER_TOP)
            break;
        pcs[n++] = fr[1];
        if (fr[0] <= fp)                       /* frames go up the stack: else a loop or junk */
            break;
        fp = fr[0];
    }
    return n;
}

/* TKSTACK, TUSTACK: a stack as the tuple's next key, in hvt_dif.h's fixed-width encoding (a
 * header word, depth frames, zeros after the last one found). Unwinding is charged per frame
 * asked for: a kernel frame is a few dozen guest loads (the table search), a user one one. */
static bool dif_tstack(struct dif_run *r, const struct hvt_dif_insn *in)
{
    struct dif_cpu *c = r->c;
    uint32_t depth = (uint32_t)in->imm, len = 8 + 8 * depth;
    if (in->imm < 1 || depth > HVT_DIF_STACKKEY_MAX)
        return dif_illop(r);
    if (c->tuple_n >= HVT_DIF_TUPLE_MAX || c->tuple_len + len > HVT_DIF_KEY_MAX)
        return dif_fault(r, HVT_DIF_F_TUPLE, 0);
    if (!dif_charge(r, len + (uint64_t)depth * (in->op == HVT_DIF_OP_TKSTACK ? DIF_KFRAME_UNITS : 16)))
        return false;
    uint64_t *w = c->tuple + c->tuple_len / 8;     /* tuple_len stays a multiple of 8 */
    uint32_t n = 0, exact = 0, kind = HVT_DIF_SK_USER, flags = 0;
    memset(w + 1, 0, 8 * depth);
    if (in->op == HVT_DIF_OP_TKSTACK) {
        bool from_user = false;
        kind = HVT_DIF_SK_KERNEL;
        if (r->st->env.kstack)
            n = r->st->env.kstack(r->f->ctx, w + 1, depth, &exact, &from_user);
        if (n > depth)
            n = depth;
        flags = from_user ? HVT_DIF_SK_FROM_USER : 0;
    } else {
        n = dif_ustack(r, w + 1, depth);
    }
    w[0] = hvt_dif_sk_word(n, depth, kind, flags, exact);
    c->tuple_types[c->tuple_n++] = HVT_DIF_T_STACK;
    c->tuple_len += len;
    return true;
}

/* ACT, EMIT, STACK, USTACK, EXIT: the clause's record */
static bool dif_op_rec(struct dif_run *r, const struct hvt_dif_insn *in)
{
    struct dif_state *st = r->st;
    unsigned ra = R(in->ra);
    uint8_t *p;
    if (in->op == HVT_DIF_OP_ACT) {
        if (!r->rec_len && !dif_rec_room(r, sizeof(struct hvt_drec)))
            return false;
        if (!(p = dif_rec_room(r, 8)))
            return false;
        *(uint64_t *)p = (uint16_t)in->imm;    /* u16 action, u16 0, u32 0 */
        return true;
    }
    if (!r->rec_len)
        return dif_illop(r);                   /* values before an ACT */
    switch (in->op) {
    case HVT_DIF_OP_EMIT:
        if (r->rt[ra] == DIF_RT_STR) {
            const char *s;
            uint32_t len;
            if (!dif_str_get(r, ra, &s, &len) || !(p = dif_rec_room(r, dif_round8(2 + len))))
                return false;
            dif_put_str(p, s, len);
            return true;
        }
        return r->rt[ra] == DIF_RT_INT ? dif_emit_int(r, r->reg[ra]) : dif_illop(r);
    case HVT_DIF_OP_EXIT:
        if (!dif_emit_int(r, r->reg[ra]))
            return false;
        r->exit_pending = true;
        r->exit_status = (int64_t)r->reg[ra];
        return true;
    case HVT_DIF_OP_STACK: {
        uint32_t max = (uint32_t)in->imm;
        if (in->imm < 1 || max > HVT_PROBE_STACK_MAX)
            return dif_illop(r);
        if (!(p = dif_rec_room(r, 16 + dif_round8(max))))
            return false;
        uint64_t rsp = 0;
        size_t n = st->env.stack ? st->env.stack(r->f->ctx, p + 16, max, &rsp) : 0;
        if (n > max)
            n = max;
        if (!dif_charge(r, n))
            return false;
        ((uint32_t *)p)[0] = (uint32_t)n;
        ((uint32_t *)p)[1] = 0;
        ((uint64_t *)p)[1] = rsp;
        memset(p + 16 + n, 0, dif_round8((uint32_t)n) - n);
        r->rec_len -= dif_round8(max) - dif_round8((uint32_t)n);   /* give back the rest */
        return true;
    }
    case HVT_DIF_OP_USTACK: {
        uint32_t max = (uint32_t)in->imm;
        if (in->imm < 1 || max > HVT_DIF_USTACK_MAX)
            return dif_illop(r);
        if (!(p = dif_rec_room(r, 8 + 8 * max)))
            return false;
        uint32_t n = dif_ustack(r, (uint64_t *)(void *)(p + 8), max);
        if (!dif_charge(r, 16ull * n)) /* a frame read per address */
            return false;
        ((uint32_t *)p)[0] = n;
        ((uint32_t *)p)[1] = 0;
        r->rec_len -= 8 * (max - n);           /* give back the rest */
        return true;
    }
    }
    return dif_illop(r);
}

/* DTrace's probe id: its dtrace provider's BEGIN, END and ERROR are 1, 2 and 3 */
static uint32_t dif_dtrace_id(const struct dif_state *st, uint32_t id)
{
    const struct hvt_dif_hdr *h = st->hdr;
    if (id && id == h->begin_probe) return 1;
    if (id && id == h->end_probe) return 2;
    if (id && id == h->error_probe) return 3;
    return id;
}

static inline __attribute__((always_inline))
bool dif_builtin(struct dif_run *r, unsigned rd, int32_t id)
{
    const struct hvt_dif_probe *p = r->probe;
    switch (id) {
    case HVT_DIF_V_EXECNAME:                 /* dif_str_set_exec, inline: the common key */
        r->reg[R(rd)] = DIF_H_TAG | DIF_H_EXEC;
        r->rt[R(rd)] = DIF_RT_STR;
        return true;
    case HVT_DIF_V_PROBEPROV: dif_str_set_strtab(r, rd, p->prov); return true;
    case HVT_DIF_V_PROBEMOD:  dif_str_set_strtab(r, rd, p->mod); return true;
    case HVT_DIF_V_PROBEFUNC: dif_str_set_strtab(r, rd, p->func); return true;
    case HVT_DIF_V_PROBENAME: dif_str_set_strtab(r, rd, p->name); return true;
    case HVT_DIF_V_CPU:  dif_set_int(r, rd, r->cpu); return true;
    case HVT_DIF_V_EPID: dif_set_int(r, rd, r->epid); return true;
    case HVT_DIF_V_ID:   dif_set_int(r, rd, dif_dtrace_id(r->st, p->id)); return true;
    }
    if (id >= HVT_DIF_V_ARG0 && id < HVT_DIF_V_ARG0 + 6)
        dif_set_int(r, rd, r->args[id - HVT_DIF_V_ARG0]);
    else if (id >= HVT_DIF_V_ARG0 + 6 && id < HVT_DIF_V_ARG0 + 10)
        dif_set_int(r, rd, 0);               /* refused by the verifier: no value here */
    else if (id > 0 && id < HVT_DIF_V__COUNT)
        dif_set_int(r, rd, r->f->v[id]);
    else
        return dif_illop(r);
    return true;
}

static bool dif_ldg(struct dif_run *r, unsigned rd, uint64_t va, int32_t imm)
{
    unsigned size = (unsigned)imm & HVT_DIF_LD_SIZE_MASK;
    uint8_t b[8];
    if (size != 1 && size != 2 && size != 4 && size != 8)
        return dif_illop(r);
    size_t got = r->st->env.read ? r->st->env.read(r->f->ctx, va, b, size,
                                                  !!(imm & HVT_DIF_LD_USER)) : 0;
    if (got < size)
        return dif_fault(r, HVT_DIF_F_BADADDR, va + got);
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++)
        v |= (uint64_t)b[i] << (8 * i);
    if ((imm & HVT_DIF_LD_SIGNED) && size < 8 && (v >> (8 * size - 1)) & 1)
        v |= ~0ull << (8 * size);
    dif_set_int(r, rd, v);
    return true;
}

static inline __attribute__((always_inline))
bool dif_op_agg(struct dif_run *r, const struct hvt_dif_insn *in)
{
    struct dif_state *st = r->st;
    struct dif_cpu *c = r->c;
    uint32_t idx = (uint32_t)in->imm;
    if (idx >= st->hdr->naggs)
        return dif_illop(r);
    if (in->op == HVT_DIF_OP_AGGCLR) {
        dif_agg_clear(st, idx);
        return true;
    }
    const struct hvt_dif_agg *a = &st->aggs[idx];
    /* Not checked again here: the tuple's keys are the aggregation's and a weight is on a
     * quantization only (the verifier proves both on every path, dif_verify.c; test_dif.c has
     * the programs it refuses). */
    if (!dif_charge(r, c->tuple_len))    /* the key, hashed and compared */
        return false;
    int64_t v = a->fn == HVT_DIF_AGG_COUNT ? 0 : (int64_t)r->reg[R(in->ra)];
    int64_t w = in->op == HVT_DIF_OP_AGGW ? (int64_t)r->reg[R(in->rb)] : 1;
    dif_agg_update_fast(st, c, idx, a, v, w);
    return true;
}

/* A fresh budget (the firing's, then its ERROR runs'). */
static void dif_budget_start(struct dif_run *r)
{
    const struct dif_env *e = &r->st->env;
    r->budget = e->budget ? e->budget : DIF_DEF_BUDGET;
    r->spent = 0;
    r->grant = r->budget < DIF_BUDGET_CHUNK ? r->budget : DIF_BUDGET_CHUNK;
    r->left = (int64_t)r->grant;
    r->clock_started = r->over = false;
}

/* --- timing by phase (struct dif_firing cost) --- */
static inline uint64_t dif_clock(void) { return __builtin_ia32_rdtsc(); }

#define DIF_PH_KEEP 0xffu                /* NOP, RET: the phase before goes on */
/* The phase of the performance model an instruction's time belongs to. */
static unsigned dif_op_phase(unsigned op)
{
    switch (op) {
    case HVT_DIF_OP_NOP: case HVT_DIF_OP_RET:
        return DIF_PH_KEEP;
    case HVT_DIF_OP_VAR:
        return HVT_PH_BUILTINS;
    case HVT_DIF_OP_STRG: case HVT_DIF_OP_STRLEN: case HVT_DIF_OP_STRJOIN:
    case HVT_DIF_OP_BASENAME: case HVT_DIF_OP_SCMP: case HVT_DIF_OP_TKSTACK:
    case HVT_DIF_OP_TUSTACK: case HVT_DIF_OP_SPECNEW: case HVT_DIF_OP_SPECULATE:
    case HVT_DIF_OP_COMMIT: case HVT_DIF_OP_DISCARD: case HVT_DIF_OP_TRACER:
        return HVT_PH_SUBR;
    case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW: case HVT_DIF_OP_AGGCLR:
        return HVT_PH_AGG;
    case HVT_DIF_OP_ACT: case HVT_DIF_OP_EMIT: case HVT_DIF_OP_STACK: case HVT_DIF_OP_USTACK:
    case HVT_DIF_OP_EXIT:
        return HVT_PH_RECORD;
    default:
        return HVT_PH_INSNS;
    }
}

/* The time since the last stamp to the phase being timed; ph is timed from now on. */
static inline void dif_ph_switch(struct dif_run *r, unsigned ph)
{
    uint64_t now = dif_clock();
    r->f->cost[r->ph] += now - r->ph_t;
    r->ph_t = now;
    r->ph = ph;
}

/* One clause's code; returns with r->fault or r->dropped set, or at RET. Its instructions are
 * charged to the budget all at once, before the first: branches go strictly forward (the
 * verifier), so a clause runs at most n of them, and the loop itself stays free of the check.
 * timed (a constant in each copy): a stamp where the phase changes (dif_op_phase; the
 * predicate's instructions are the predicate's whatever they are). */
static inline __attribute__((always_inline))
void dif_exec_body(struct dif_run *r, const struct hvt_dif_insn *code, uint32_t n, const bool timed)
{
    struct dif_state *st = r->st;
    if (!dif_charge(r, n)) {
        r->pc = 0;                   /* as the clause starts */
        return;
    }
    for (uint32_t pc = 0; pc < n; pc++) {
        const struct hvt_dif_insn *in = &code[pc];
        /* the operands read where a case uses them (most use one or two) */
#define OP_RD  R(in->rd)
#define OP_RA  R(in->ra)
#define OP_RB  R(in->rb)
#define OP_A   r->reg[R(in->ra)]
#define OP_B   r->reg[R(in->rb)]
#define OP_IMM in->imm
        bool ok = true;
        if (timed) {
            unsigned ph = pc < r->pred_end ? HVT_PH_PREDICATE : dif_op_phase(in->op);
            if (ph != r->ph && ph != DIF_PH_KEEP)
                dif_ph_switch(r, ph);
        }
        switch (in->op) {
        case HVT_DIF_OP_NOP: break;
        case HVT_DIF_OP_RET: return;
        case HVT_DIF_OP_LDI: dif_set_int(r, OP_RD, (uint64_t)(int64_t)OP_IMM); break;
        case HVT_DIF_OP_LDC:
            if ((uint32_t)OP_IMM < st->hdr->nconsts)
                dif_set_int(r, OP_RD, st->consts[OP_IMM]);
            else
                ok = dif_illop(r);
            break;
        case HVT_DIF_OP_MOV: r->reg[OP_RD] = OP_A; r->rt[OP_RD] = r->rt[OP_RA]; break;
        case HVT_DIF_OP_ADD: dif_set_int(r, OP_RD, OP_A + OP_B); break;
        case HVT_DIF_OP_SUB: dif_set_int(r, OP_RD, OP_A - OP_B); break;
        case HVT_DIF_OP_MUL: dif_set_int(r, OP_RD, OP_A * OP_B); break;
        case HVT_DIF_OP_UDIV: case HVT_DIF_OP_UREM: case HVT_DIF_OP_SDIV: case HVT_DIF_OP_SREM:
            if (!OP_B) {
                ok = dif_fault(r, HVT_DIF_F_DIVZERO, 0);
                break;
            }
            if (in->op == HVT_DIF_OP_UDIV)
                dif_set_int(r, OP_RD, OP_A / OP_B);
            else if (in->op == HVT_DIF_OP_UREM)
                dif_set_int(r, OP_RD, OP_A % OP_B);
            else if ((int64_t)OP_B == -1)   /* INT64_MIN / -1 would trap (#DE): wrap instead */
                dif_set_int(r, OP_RD, in->op == HVT_DIF_OP_SDIV ? 0 - OP_A : 0);
            else if (in->op == HVT_DIF_OP_SDIV)
                dif_set_int(r, OP_RD, (uint64_t)((int64_t)OP_A / (int64_t)OP_B));
            else
                dif_set_int(r, OP_RD, (uint64_t)((int64_t)OP_A % (int64_t)OP_B));
            break;
        case HVT_DIF_OP_AND: dif_set_int(r, OP_RD, OP_A & OP_B); break;
        case HVT_DIF_OP_OR:  dif_set_int(r, OP_RD, OP_A | OP_B); break;
        case HVT_DIF_OP_XOR: dif_set_int(r, OP_RD, OP_A ^ OP_B); break;
        case HVT_DIF_OP_SHL: dif_set_int(r, OP_RD, OP_A << (OP_B & 63)); break;
        case HVT_DIF_OP_SHR: dif_set_int(r, OP_RD, OP_A >> (OP_B & 63)); break;
        case HVT_DIF_OP_SAR: dif_set_int(r, OP_RD, (uint64_t)((int64_t)OP_A >> (OP_B & 63))); break;
        case HVT_DIF_OP_ADDI: dif_set_int(r, OP_RD, OP_A + (uint64_t)(int64_t)OP_IMM); break;
        case HVT_DIF_OP_NEG: dif_set_int(r, OP_RD, 0 - OP_A); break;
        case HVT_DIF_OP_NOT: dif_set_int(r, OP_RD, ~OP_A); break;
        case HVT_DIF_OP_LNOT: dif_set_int(r, OP_RD, OP_A == 0); break;
        case HVT_DIF_OP_SEXT:
            if (OP_IMM == 1) dif_set_int(r, OP_RD, (uint64_t)(int64_t)(int8_t)OP_A);
            else if (OP_IMM == 2) dif_set_int(r, OP_RD, (uint64_t)(int64_t)(int16_t)OP_A);
            else if (OP_IMM == 4) dif_set_int(r, OP_RD, (uint64_t)(int64_t)(int32_t)OP_A);
            else ok = dif_illop(r);
            break;
        case HVT_DIF_OP_ZEXT:
            if (OP_IMM == 1) dif_set_int(r, OP_RD, (uint8_t)OP_A);
            else if (OP_IMM == 2) dif_set_int(r, OP_RD, (uint16_t)OP_A);
            else if (OP_IMM == 4) dif_set_int(r, OP_RD, (uint32_t)OP_A);
            else ok = dif_illop(r);
            break;
        case HVT_DIF_OP_EQ:  dif_set_int(r, OP_RD, OP_A == OP_B); break;
        case HVT_DIF_OP_NE:  dif_set_int(r, OP_RD, OP_A != OP_B); break;
        case HVT_DIF_OP_LT:  dif_set_int(r, OP_RD, (int64_t)OP_A < (int64_t)OP_B); break;
        case HVT_DIF_OP_LE:  dif_set_int(r, OP_RD, (int64_t)OP_A <= (int64_t)OP_B); break;
        case HVT_DIF_OP_LTU: dif_set_int(r, OP_RD, OP_A < OP_B); break;
        case HVT_DIF_OP_LEU: dif_set_int(r, OP_RD, OP_A <= OP_B); break;
        case HVT_DIF_OP_SCMP: ok = dif_str_cmp(r, OP_RD, OP_RA, OP_RB); break;
        case HVT_DIF_OP_JMP: case HVT_DIF_OP_BZ: case HVT_DIF_OP_BNZ:
            if (OP_IMM <= (int32_t)pc || (uint32_t)OP_IMM >= n) {
                ok = dif_illop(r);
                break;
            }
            if (in->op == HVT_DIF_OP_JMP || (in->op == HVT_DIF_OP_BZ) == (OP_A == 0))
                pc = (uint32_t)OP_IMM - 1;          /* the loop's pc++ lands on imm */
            break;
        case HVT_DIF_OP_LDG: ok = dif_ldg(r, OP_RD, OP_A, OP_IMM); break;
        case HVT_DIF_OP_STRG: ok = dif_str_guest(r, OP_RD, OP_A, !!(OP_IMM & HVT_DIF_LD_USER)); break;
        case HVT_DIF_OP_STRGR: ok = dif_str_guest_range(r, OP_RD, OP_A, OP_B, !!(OP_IMM & HVT_DIF_LD_USER)); break;
        case HVT_DIF_OP_VAR: ok = dif_builtin(r, OP_RD, OP_IMM); break;
        case HVT_DIF_OP_SCONST:
            if ((uint32_t)OP_IMM < st->hdr->strtab_len)
                dif_str_set_strtab(r, OP_RD, (uint32_t)OP_IMM);
            else
                ok = dif_illop(r);
            break;
        case HVT_DIF_OP_STRLEN: {
            const char *s;
            uint32_t len;
            if ((ok = dif_str_get(r, OP_RA, &s, &len)))
                dif_set_int(r, OP_RD, len);
            break;
        }
        case HVT_DIF_OP_STRJOIN: ok = dif_str_join(r, OP_RD, OP_RA, OP_RB); break;
        case HVT_DIF_OP_BASENAME: ok = dif_str_basename(r, OP_RD, OP_RA); break;
        case HVT_DIF_OP_LDGV: case HVT_DIF_OP_STGV: case HVT_DIF_OP_LDTV: case HVT_DIF_OP_STTV:
        case HVT_DIF_OP_LDLV: case HVT_DIF_OP_STLV: case HVT_DIF_OP_LDAV: case HVT_DIF_OP_STAV:
            ok = dif_op_var(r, in);
            break;
        case HVT_DIF_OP_LDSA: case HVT_DIF_OP_STSA: ok = dif_op_array(r, in); break;
        case HVT_DIF_OP_CHKIDX:
            if (r->rt[OP_RA] != DIF_RT_INT || OP_IMM < 1)
                ok = dif_illop(r);
            else if (OP_A >= (uint64_t)(uint32_t)OP_IMM)
                ok = dif_fault(r, HVT_DIF_F_BADINDEX, OP_A);
            break;
        case HVT_DIF_OP_TPUSH:
            ok = r->exec16 && OP_A == (DIF_H_TAG | DIF_H_EXEC) && r->rt[OP_RA] == DIF_RT_STR ?
                 dif_tpush_exec(r, OP_RA) : dif_tpush(r, OP_RA);
            break;
        case HVT_DIF_OP_TKSTACK: case HVT_DIF_OP_TUSTACK: ok = dif_tstack(r, in); break;
        case HVT_DIF_OP_TCLR: r->c->tuple_len = r->c->tuple_n = 0; break;
        case HVT_DIF_OP_ACT: case HVT_DIF_OP_EMIT: case HVT_DIF_OP_STACK: case HVT_DIF_OP_USTACK:
        case HVT_DIF_OP_EXIT:
            ok = dif_op_rec(r, in);
            break;
        case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGCLR: case HVT_DIF_OP_AGGW: ok = dif_op_agg(r, in); break;
        case HVT_DIF_OP_SPECNEW: dif_spec_new(r, OP_RD); break;
        case HVT_DIF_OP_SPECULATE:
            ok = r->rt[OP_RA] == DIF_RT_INT ? dif_spec_speculate(r, OP_A) : dif_illop(r);
            break;
        case HVT_DIF_OP_COMMIT: case HVT_DIF_OP_DISCARD:
            ok = r->rt[OP_RA] == DIF_RT_INT ? dif_spec_end(r, OP_A, in->op == HVT_DIF_OP_COMMIT)
                                         : dif_illop(r);
            break;
        case HVT_DIF_OP_TRACER:            /* at once: the tracer starts at each CPU's next exit */
            if (r->st->env.tracer && !r->st->env.tracer(r->f->ctx, in->imm))
                ok = dif_fault(r, HVT_DIF_F_STEPREFUSED, 0);
            break;
        default: ok = dif_illop(r); break;
        }
#undef OP_RD
#undef OP_RA
#undef OP_RB
#undef OP_A
#undef OP_B
#undef OP_IMM
        if (__builtin_expect(!ok, 0)) {
            r->pc = pc;              /* where it stopped: the error record's offset */
            return;
        }
    }
    r->pc = n - 1;
    dif_illop(r);                    /* ran off the end: a verified clause ends with RET */
}

static inline __attribute__((always_inline))
void dif_exec_plain(struct dif_run *r, const struct hvt_dif_insn *code, uint32_t n)
{
    dif_exec_body(r, code, n, false);
}

/* The predicate, as the compiler lays it out: the code up to the first branch to the clause's
 * last instruction (its RET) when it is false. */
static void dif_exec_timed(struct dif_run *r, const struct hvt_dif_insn *code, uint32_t n)
{
    r->pred_end = 0;
    for (uint32_t pc = 0; pc < n; pc++)
        if (code[pc].op == HVT_DIF_OP_BZ && (uint32_t)code[pc].imm == n - 1) {
            r->pred_end = pc + 1;
            break;
        }
    r->ph = r->pred_end ? HVT_PH_PREDICATE : HVT_PH_INSNS;
    r->ph_t = dif_clock();
    dif_exec_body(r, code, n, true);
    dif_ph_switch(r, HVT_PH_INSNS);
}

static inline __attribute__((always_inline))
void dif_exec(struct dif_run *r, const struct hvt_dif_insn *code, uint32_t n)
{
    if (r->f->cost)
        dif_exec_timed(r, code, n);
    else
        dif_exec_plain(r, code, n);
}

static void dif_rec_header(struct dif_run *r, uint8_t *p, uint32_t len, uint16_t type)
{
    struct hvt_drec *d = (struct hvt_drec *)p;
    d->len = len;
    d->type = type;
    d->cpu = (uint16_t)r->cpu;
    d->probe = r->probe->id;
    d->clause = (uint16_t)r->clause;
    d->pad = 0;
    d->tsc = r->f->tsc;
    d->arg = type == HVT_DREC_ERROR ? r->fault_addr : 0;
    d->pc = type == HVT_DREC_ERROR ? r->pc : 0;
    d->fault = type == HVT_DREC_ERROR ? r->fault : 0;
}

/* The end of a clause that did not simply run to RET with its record: a speculation's, a drop,
 * a fault, exit(). Out of line: most clauses end plainly (dif_run_clause). */
static __attribute__((noinline)) void dif_clause_end(struct dif_run *r)
{
    struct dif_state *st = r->st;
    struct dif_cpu *c = r->c;
    if (r->spec && (r->dropped || (!r->fault && r->rec_len))) {
        /* into its speculation, unless that ended meanwhile; a full one: a speculative drop */
        struct dif_specbuf *b = dif_spec_live(r);
        if (b && r->dropped) {
            b->drops++;
        } else if (b) {
            dif_rec_header(r, b->buf + b->tail, r->rec_len, HVT_DREC_DATA);
            b->tail += r->rec_len;
        }
    } else if (r->dropped) {
        if (!r->spec_void)
            c->drops++;
    } else if (r->fault) {
        /* the partial record is abandoned: the error record takes its place */
        if ((uint64_t)c->buf_tail + sizeof(struct hvt_drec) > c->buf_size) {
            c->drops++;
        } else {
            dif_rec_header(r, c->buf + c->buf_tail, sizeof(struct hvt_drec), HVT_DREC_ERROR);
            c->buf_tail += sizeof(struct hvt_drec);
        }
    } else {
        if (r->rec_len && !r->spec && !r->spec_void) {
            dif_rec_header(r, c->buf + c->buf_tail, r->rec_len, HVT_DREC_DATA);
            c->buf_tail += r->rec_len;
        }
        if (r->exit_pending) {
            __atomic_store_n(&st->exit_status, r->exit_status, __ATOMIC_RELAXED);
            __atomic_store_n(&st->exited, 1, __ATOMIC_RELEASE);
        }
    }
}

/* Clause ci (an index the verifier proved inside clauses[], its code inside insns[]). */
static inline __attribute__((always_inline))
void dif_run_clause(struct dif_run *r, uint32_t ci, uint32_t epid)
{
    struct dif_state *st = r->st;
    struct dif_cpu *c = r->c;
    r->clause = ci;
    r->epid = epid;
    r->rec_len = r->fault = 0;
    r->unusual = 0;                  /* dropped, exit_pending, spec_void */
    r->spec = r->spec_gen = 0;
    /* every register starts empty: no type, so no value of the last clause is used (and
     * its scratch strings are free again); the values themselves are not read untyped */
    __builtin_memset(r->rt, 0, sizeof(r->rt));
    r->given = 0;
    c->tuple_len = c->tuple_n = 0;
    const struct hvt_dif_clause *cl = &st->clauses[ci];
    dif_exec(r, st->insns + cl->first, cl->count);
    uint64_t t_rec = r->f->cost ? dif_clock() : 0;
    if (__builtin_expect(r->spec | r->fault | r->unusual, 0)) {
        dif_clause_end(r);
    } else if (r->rec_len) {         /* the record built in place: its header, then committed */
        dif_rec_header(r, c->buf + c->buf_tail, r->rec_len, HVT_DREC_DATA);
        c->buf_tail += r->rec_len;
    }
    if (r->f->cost)
        r->f->cost[HVT_PH_RECORD] += dif_clock() - t_rec;
}

struct dif_fault_info { uint32_t clause, pc, fault; uint64_t addr; };

/* Every clause of probe p, this-> fresh; faults noted (up to DIF_ERROR_FIRES) if asked.
 * p's clause list is inside probe_clauses[] (the verifier proved it). Returns the faults
 * noted. */
static inline __attribute__((always_inline))
unsigned dif_run_probe(struct dif_run *r, const struct hvt_dif_probe *p,
                       struct dif_fault_info *faults)
{
    struct dif_state *st = r->st;
    struct dif_cpu *c = r->c;
    unsigned nf = 0;
    if (__builtin_expect(++c->gen == 0, 0)) {  /* generations wrapped: forget every this-> value */
        memset(c->local_gen, 0, (size_t)st->nlocals * 4);
        c->gen = 1;
    }
    r->probe = p;
    const uint16_t *cls = st->probe_clauses + p->clauses;
    const uint32_t *epids = st->epids + p->clauses;
    for (uint32_t i = 0; i < p->nclauses; i++) {
        /* Once exit() has taken effect, only END's clauses run, as in dtrace-utils (each
         * clause runs only while the activity is its probe's: DRAINING is END's): no later
         * clause of this firing, no firing of another probe until the host disarms them.
         * ERROR runs for faults of clauses that did. */
        if (__atomic_load_n(&st->exited, __ATOMIC_ACQUIRE) &&
            p->id != st->hdr->end_probe && p->id != st->hdr->error_probe)
            break;
        dif_run_clause(r, cls[i], epids[i]);
        if (__builtin_expect(r->fault != 0, 0) && faults && nf < DIF_ERROR_FIRES)
            faults[nf++] = (struct dif_fault_info){ r->clause, r->pc, r->fault, r->fault_addr };
        if (r->over)
            break;                   /* out of budget: the firing ends here */
    }
    return nf;
}

/* DTrace's ERROR probe, after the firing's clauses (never for its own faults), with one more
 * budget for all its runs. Its arguments as dtrace-utils numbers them: arg0 0, arg1 the
 * faulting probe's id (its `id`), arg2 the faulting clause's index in the program (DTrace's
 * statement id), arg3 the offset in the clause, arg4 DTrace's fault number (DTRACEFLT_*),
 * arg5 the address or 0. */
static __attribute__((noinline))
void dif_fire_errors(struct dif_run *r, uint32_t probe_id, const struct dif_fault_info *faults,
                     unsigned nf)
{
    struct dif_state *st = r->st;
    uint32_t eid = st->hdr->error_probe;
    const struct hvt_dif_probe *ep = eid && eid != probe_id ?
        dif_probe_lookup(st->probes, st->hdr->nprobes, eid) : NULL;
    if (!ep)
        return;
    dif_budget_start(r);
    for (unsigned i = 0; i < nf && !r->over; i++) {
        uint64_t eargs[6] = { 0, dif_dtrace_id(st, probe_id), faults[i].clause, faults[i].pc,
                              hvt_dif_dtrace_fault(faults[i].fault), faults[i].addr };
        r->args = eargs;
        dif_run_probe(r, ep, NULL);
    }
}

/* The interpreter's firing (dif_fire, buffer lock held: released here). */
static __attribute__((noinline))
int dif_fire_interp(struct dif_state *st, struct dif_cpu *c, unsigned cpu,
                    const struct hvt_dif_probe *p, const struct dif_firing *f)
{
    struct dif_fault_info faults[DIF_ERROR_FIRES];
    struct dif_run r;
    r.st = st;
    r.c = c;
    r.f = f;
    /* ARG0..5: the caller's array, or v[] */
    r.args = f->args ? f->args : &f->v[HVT_DIF_V_ARG0];
    r.cpu = cpu;
    r.exec16 = f->execname && f->execname_max == 16 && st->strsize > 16;
    if (__atomic_load_n(&st->spec_pending, __ATOMIC_ACQUIRE))
        dif_spec_clean_cpu(st, cpu);     /* commits other CPUs made while this one was busy */
    uint64_t drops = c->drops;
    dif_budget_start(&r);
    unsigned nf = dif_run_probe(&r, p, faults);
    if (__builtin_expect(nf != 0, 0))
        dif_fire_errors(&r, p->id, faults, nf);
    if (__atomic_load_n(&st->spec_pending, __ATOMIC_ACQUIRE))
        dif_spec_clean_cpu(st, cpu);
    bool notify = (c->drops != drops || c->buf_tail > c->buf_size / 2) && !c->notified &&
                  st->env.notify;
    if (notify)
        c->notified = 1;
    dif_unlock(&c->buf_lock);
    if (notify)
        st->env.notify(st->env.env_ctx, cpu);
    return (int)p->nclauses;
}

int dif_fire(struct dif_state *st, unsigned cpu, uint32_t probe_id, const struct dif_firing *f)
{
    if (!st || !f || cpu >= st->ncpus)
        return DIF_EINVAL;
    struct dif_cpu *c = &st->cpus[cpu];
    dif_lock(&c->buf_lock);
    const struct hvt_dif_probe *p = c->last_probe;
    if (!p || p->id != probe_id) {
        p = dif_probe_lookup(st->probes, st->hdr->nprobes, probe_id);
        if (!p) {
            dif_unlock(&c->buf_lock);
            return DIF_ENOPROBE;
        }
        c->last_probe = p;
        c->last_lean = st->lean[p - st->probes];
    }
    /* lean, with the 16-byte process name its keys read if they read it (dif_lean.c); a thin
     * firing only for a probe that reads no more than it has */
    uint8_t lean = c->last_lean;
    if (__builtin_expect(lean != (DIF_LEAN | DIF_LEAN_THIN), 0) &&
        (!(lean & DIF_LEAN) || ((lean & DIF_LEAN_EXEC) && (!f->execname || f->execname_max != 16)) ||
         (f->thin && !(lean & DIF_LEAN_THIN)))) {
        if (f->thin) {
            dif_unlock(&c->buf_lock);
            return DIF_ETHIN;
        }
        return dif_fire_interp(st, c, cpu, p, f);
    }
    /* only aggregations (dif_lean.c): no record, no fault, no speculation made here; other
     * CPUs' commits and discards cleaned here before and after, as by the interpreter */
    if (__atomic_load_n(&st->spec_pending, __ATOMIC_ACQUIRE))
        dif_spec_clean_cpu(st, cpu);
    dif_lean_run(st, c, cpu, p, f);
    if (__atomic_load_n(&st->spec_pending, __ATOMIC_ACQUIRE))
        dif_spec_clean_cpu(st, cpu);
    dif_unlock(&c->buf_lock);
    return (int)p->nclauses;
}
