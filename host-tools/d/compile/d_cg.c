/*
 * d_cg: expressions to hvt_dif instructions. Registers are handed out from a 16-bit mask,
 * each expression tree evaluated without spilling (the subtree needing more registers first
 * when evaluation order cannot be seen, Sethi-Ullman's way), so running out is a compile
 * error ("expression too complex"), never a runtime one. Integer values are kept in registers
 * the way C sees them: a value of a type narrower than 64 bits is sign- or zero-extended to
 * 64 bits, so operations that can leave that range (+ - * << negation, signed / and %) are
 * followed by SEXT/ZEXT of the result type, and conversions emit them where C changes the value.
 */
#include "d_int.h"
#include <string.h>

/* ---- registers ---- */
int d_cg_ralloc(d_cc *cc, const d_node *at)
{
    for (int r = 0; r < HVT_DIF_NREGS; r++)
        if (!(cc->regs & (1u << r))) {
            cc->regs |= (uint16_t)(1u << r);
            return r;
        }
    d_fail(cc, at ? at->line : 0, at ? at->col : 0,
           "expression too complex: it needs more than %d registers (split it with clause-local variables)", HVT_DIF_NREGS);
}

void d_cg_rfree(d_cc *cc, int r)
{
    if (r >= 0) cc->regs &= (uint16_t)~(1u << r);
}

void d_cg_ldi(d_cc *cc, int r, uint64_t v)
{
    if ((int64_t)v == (int32_t)v) d_emit(cc, HVT_DIF_OP_LDI, r, 0, 0, (int32_t)v);
    else d_emit(cc, HVT_DIF_OP_LDC, r, 0, 0, d_const_add(cc, v));
}

static void emit2(d_cc *cc, int op, int rd, int ra, int rb) { d_emit(cc, op, rd, ra, rb, 0); }

/* r, a value of some type, to the 64-bit form of INT type tid */
static void ext(d_cc *cc, int r, int tid)
{
    const d_type *t = d_ty(cc, tid);
    if (t->kind == TY_INT && t->size < 8 && t->size)
        d_emit(cc, t->uns ? HVT_DIF_OP_ZEXT : HVT_DIF_OP_SEXT, r, r, 0, (int32_t)t->size);
}

/* C's conversion of r from type `from` to type `to` */
static void convert(d_cc *cc, int r, int from, int to)
{
    const d_type *t = d_ty(cc, to), *f = d_ty(cc, from);
    if (t->kind != TY_INT || t->size >= 8 || from == to) return;
    if (f->kind == TY_INT && f->size < t->size && (f->uns || !t->uns)) return; /* it fits as it is */
    if (f->kind == TY_INT && f->size == t->size && f->uns == t->uns) return;
    ext(cc, r, to);
}

/* r *= size (pointer arithmetic) */
static void scale(d_cc *cc, int r, uint32_t size, const d_node *at)
{
    if (size <= 1) return;
    int t = d_cg_ralloc(cc, at);
    if (!(size & (size - 1))) {
        d_cg_ldi(cc, t, (uint64_t)__builtin_ctz(size));
        emit2(cc, HVT_DIF_OP_SHL, r, r, t);
    } else {
        d_cg_ldi(cc, t, size);
        emit2(cc, HVT_DIF_OP_MUL, r, r, t);
    }
    d_cg_rfree(cc, t);
}

static uint32_t pointee_size(d_cc *cc, int ptr)
{
    int s = d_ty_size(cc, d_ty(cc, ptr)->ref);
    return s > 0 ? (uint32_t)s : 1; /* void *: bytes, as GNU C */
}

/* ---- registers a subtree needs ---- */
static int need(const d_node *n)
{
    if (!n) return 0;
    int l = need(n->a), r = need(n->b), c = need(n->c);
    if (n->kind == N_CALL || (n->kind == N_INDEX && n->vk == VK_VAR)) {
        int m = 1, i = 0;
        for (const d_node *k = n->b; k; k = k->next, i++)
            if (need(k) + i > m) m = need(k) + i;
        return m;
    }
    int m = l == r ? l + 1 : l > r ? l : r;
    if (c > m) m = c;
    return m ? m : 1;
}

/* ---- branches ---- */
static void plist_add(d_cc *cc, d_plist **l, int at)
{
    d_plist *p = d_alloc(cc, sizeof *p);
    p->at = at;
    p->next = *l;
    *l = p;
}

void d_cg_here(d_cc *cc, d_plist *l)
{
    int pc = d_pc(cc);
    for (; l; l = l->next) d_patch(cc, l->at, pc);
}

void d_cg_branch(d_cc *cc, d_node *n, int jump_if, d_plist **l)
{
    if (n->vk == VK_CONST) {
        if (!!n->ival == !!jump_if) {
            plist_add(cc, l, d_pc(cc));
            d_emit(cc, HVT_DIF_OP_JMP, 0, 0, 0, 0);
        }
        return;
    }
    if (n->kind == N_UNARY && n->op == TK_LNEG) {
        d_cg_branch(cc, n->a, !jump_if, l);
        return;
    }
    if (n->kind == N_BIN && (n->op == TK_LAND || n->op == TK_LOR)) {
        int and = n->op == TK_LAND;
        if (jump_if != and) {          /* && jumping when false, || jumping when true */
            d_cg_branch(cc, n->a, jump_if, l);
            d_cg_branch(cc, n->b, jump_if, l);
        } else {
            d_plist *skip = NULL;
            d_cg_branch(cc, n->a, !jump_if, &skip);
            d_cg_branch(cc, n->b, jump_if, l);
            d_cg_here(cc, skip);
        }
        return;
    }
    int r = d_cg_expr(cc, n);
    plist_add(cc, l, d_pc(cc));
    d_emit(cc, jump_if ? HVT_DIF_OP_BNZ : HVT_DIF_OP_BZ, 0, r, 0, 0);
    d_cg_rfree(cc, r);
}

/* ---- variables ---- */
/* A stack key has no register: its slot holds -(STACK_KEY | user << 8 | frames), which
 * d_cg_push turns into TKSTACK / TUSTACK (and d_cg_rfree ignores, being negative). */
#define STACK_KEY 0x10000
void d_cg_tuple(d_cc *cc, d_node *keys, int *regs, int *n)
{
    *n = 0;
    for (d_node *k = keys; k; k = k->next) {
        const d_type *t = d_ty(cc, k->ty);
        regs[(*n)++] = t->kind == TY_STACK ? -(int)(STACK_KEY | (unsigned)t->user << 8 | t->nelem) : d_cg_expr(cc, k);
    }
}

void d_cg_push(d_cc *cc, const int *regs, int n)
{
    if (d_clause_has_op(cc, HVT_DIF_OP_TPUSH) || d_clause_has_op(cc, HVT_DIF_OP_TKSTACK) ||
        d_clause_has_op(cc, HVT_DIF_OP_TUSTACK))   /* a clause starts with an empty tuple */
        d_emit(cc, HVT_DIF_OP_TCLR, 0, 0, 0, 0);
    for (int i = 0; i < n; i++) {
        if (regs[i] >= 0) {
            d_emit(cc, HVT_DIF_OP_TPUSH, 0, regs[i], 0, 0);
            continue;
        }
        unsigned v = (unsigned)-regs[i];
        d_emit(cc, (v >> 8) & 1 ? HVT_DIF_OP_TUSTACK : HVT_DIF_OP_TKSTACK, 0, 0, 0, (int32_t)(v & 0xff));
    }
}

static int is_assoc(d_cc *cc, const d_node *v) { return cc->vars[v->var].kind == HVT_DIF_VK_ASSOC; }
/* a scalar array's element (`int a[5]`, `this int a[5]`): LDSA/STSA with the index register */
static int is_array(d_cc *cc, const d_node *v) { return !is_assoc(cc, v) && cc->vars[v->var].nelem; }

/* Load (store 0) or store r; keys[0] is the index register of a scalar array's element */
static void var_op(d_cc *cc, const d_node *v, int store, int r, const int *keys)
{
    static const int ops[5][2] = {{0, 0},
                                  {HVT_DIF_OP_LDGV, HVT_DIF_OP_STGV},
                                  {HVT_DIF_OP_LDTV, HVT_DIF_OP_STTV},
                                  {HVT_DIF_OP_LDLV, HVT_DIF_OP_STLV},
                                  {HVT_DIF_OP_LDAV, HVT_DIF_OP_STAV}};
    int k = cc->vars[v->var].kind;
    if (is_array(cc, v)) {
        if (store) d_emit(cc, HVT_DIF_OP_STSA, 0, keys[0], r, v->var);
        else d_emit(cc, HVT_DIF_OP_LDSA, r, keys[0], 0, v->var);
        return;
    }
    if (store) d_emit(cc, ops[k][1], 0, r, 0, v->var);
    else d_emit(cc, ops[k][0], r, 0, 0, v->var);
}

/* What an element access needs before its loads and stores: an associative array's tuple,
 * pushed (a thread-local scalar array, `self int a[5]`, is the associative array "self->a"
 * keyed by (tid, index): its index checked against the bound first, as dtrace-utils checks
 * it), or a scalar array's index in keys[0] (LDSA/STSA check it themselves). */
static void elem_prep(d_cc *cc, d_node *v, int *keys, int *nk)
{
    *nk = 0;
    if (is_assoc(cc, v)) {
        d_cg_tuple(cc, v->b, keys, nk);
        if (cc->vars[v->var].nelem && *nk > 0)
            d_emit(cc, HVT_DIF_OP_CHKIDX, 0, keys[*nk - 1], 0, (int32_t)cc->vars[v->var].nelem);
        d_cg_push(cc, keys, *nk);
    } else if (is_array(cc, v)) {
        keys[0] = d_cg_expr(cc, v->b);
        *nk = 1;
    }
}

static int binop_of(int assign_op)
{
    switch (assign_op) {
    case TK_ADD_EQ: return TK_ADD;
    case TK_SUB_EQ: return TK_SUB;
    case TK_MUL_EQ: return TK_MUL;
    case TK_DIV_EQ: return TK_DIV;
    case TK_MOD_EQ: return TK_MOD;
    case TK_AND_EQ: return TK_BAND;
    case TK_OR_EQ: return TK_BOR;
    case TK_XOR_EQ: return TK_XOR;
    case TK_LSH_EQ: return TK_LSH;
    case TK_RSH_EQ: return TK_RSH;
    default: return 0;
    }
}

/* rd = rd OP rb in type tid (an INT type), normalized */
static void arith_op(d_cc *cc, int op, int rd, int rb, int tid)
{
    int uns = d_ty(cc, tid)->uns, o, norm = 1;
    switch (op) {
    case TK_ADD: o = HVT_DIF_OP_ADD; break;
    case TK_SUB: o = HVT_DIF_OP_SUB; break;
    case TK_MUL: o = HVT_DIF_OP_MUL; break;
    case TK_DIV: o = uns ? HVT_DIF_OP_UDIV : HVT_DIF_OP_SDIV; norm = !uns; break;
    case TK_MOD: o = uns ? HVT_DIF_OP_UREM : HVT_DIF_OP_SREM; norm = !uns; break;
    case TK_BAND: o = HVT_DIF_OP_AND; norm = 0; break;
    case TK_BOR: o = HVT_DIF_OP_OR; norm = 0; break;
    case TK_XOR: o = HVT_DIF_OP_XOR; norm = 0; break;
    case TK_LSH: o = HVT_DIF_OP_SHL; break;
    case TK_RSH: o = uns ? HVT_DIF_OP_SHR : HVT_DIF_OP_SAR; norm = 0; break;
    default: o = HVT_DIF_OP_NOP; norm = 0; break;
    }
    emit2(cc, o, rd, rd, rb);
    if (norm) ext(cc, rd, tid);
}

static int cg_assign(d_cc *cc, d_node *n)
{
    d_node *l = n->a;
    int keys[HVT_DIF_TUPLE_MAX] = {0}, nk = 0, assoc = is_assoc(cc, l);
    if (n->op == TK_ASGN) {
        int rv = d_cg_expr(cc, n->b);
        convert(cc, rv, n->b->ty, l->ty);
        elem_prep(cc, l, keys, &nk);
        var_op(cc, l, 1, rv, keys);
        for (int i = 0; i < nk; i++) d_cg_rfree(cc, keys[i]);
        return rv;
    }
    elem_prep(cc, l, keys, &nk);
    int cur = d_cg_ralloc(cc, n);
    var_op(cc, l, 0, cur, keys);
    int rv = d_cg_expr(cc, n->b);
    int op = binop_of(n->op);
    if (n->var < 0) { /* pointer += integer */
        scale(cc, rv, pointee_size(cc, l->ty), n);
        emit2(cc, op == TK_ADD ? HVT_DIF_OP_ADD : HVT_DIF_OP_SUB, cur, cur, rv);
    } else {
        convert(cc, cur, l->ty, n->var);
        if (op != TK_LSH && op != TK_RSH) convert(cc, rv, n->b->ty, n->var);
        arith_op(cc, op, cur, rv, n->var);
        convert(cc, cur, n->var, l->ty);
    }
    d_cg_rfree(cc, rv);
    if (assoc && n->b->side) d_cg_push(cc, keys, nk); /* the right side built its own tuple */
    var_op(cc, l, 1, cur, keys);
    for (int i = 0; i < nk; i++) d_cg_rfree(cc, keys[i]);
    return cur;
}

static int cg_incdec(d_cc *cc, d_node *n, int post)
{
    d_node *l = n->a;
    int keys[HVT_DIF_TUPLE_MAX] = {0}, nk = 0;
    elem_prep(cc, l, keys, &nk);
    int cur = d_cg_ralloc(cc, n), old = -1;
    var_op(cc, l, 0, cur, keys);
    if (post) {
        old = d_cg_ralloc(cc, n);
        emit2(cc, HVT_DIF_OP_MOV, old, cur, 0);
    }
    int32_t d = d_ty(cc, l->ty)->kind == TY_PTR ? (int32_t)pointee_size(cc, l->ty) : 1;
    d_emit(cc, HVT_DIF_OP_ADDI, cur, cur, 0, n->op == TK_INC ? d : -d);
    ext(cc, cur, l->ty);
    var_op(cc, l, 1, cur, keys);
    for (int i = 0; i < nk; i++) d_cg_rfree(cc, keys[i]);
    if (!post) return cur;
    d_cg_rfree(cc, cur);
    return old;
}

/* ---- memory ---- */
/* The address of n as a register plus a constant: member offsets and constant indexes add
 * up, so a.b.c costs one ADDI. */
static int addr_off(d_cc *cc, d_node *n, int64_t *off)
{
    int r;
    switch (n->kind) {
    case N_DOT:
        r = addr_off(cc, n->a, off);
        *off += n->off;
        return r;
    case N_ARROW:
        r = d_cg_expr(cc, n->a);
        *off = n->off;
        return r;
    case N_INDEX: {
        *off = 0;
        if (n->a->vk == VK_MEM && n->a->decay) r = addr_off(cc, n->a, off); /* an array member */
        else r = d_cg_expr(cc, n->a);
        int64_t idx;
        int sz = d_ty_size(cc, n->ty);
        if (sz <= 0) sz = 1;
        if (d_sema_int_const(cc, n->b, &idx) && *off + idx * sz == (int32_t)(*off + idx * sz)) {
            *off += idx * sz;
        } else {
            int ri = d_cg_expr(cc, n->b);
            /* an index into a kernel array of more than one element is checked as dtrace-utils
             * checks it: index out of bounds, not a read past the array */
            if (n->off > 1) d_emit(cc, HVT_DIF_OP_CHKIDX, 0, ri, 0, (int32_t)n->off);
            scale(cc, ri, (uint32_t)sz, n);
            emit2(cc, HVT_DIF_OP_ADD, r, r, ri);
            d_cg_rfree(cc, ri);
        }
        return r;
    }
    case N_UNARY:
        if (n->op == TK_MUL) {
            *off = 0;
            return d_cg_expr(cc, n->a);
        }
        break;
    default: break;
    }
    d_fail(cc, n->line, n->col, "internal error: no address for node %d", n->kind);
}

int d_cg_addr(d_cc *cc, d_node *n)
{
    int64_t off = 0;
    int r = addr_off(cc, n, &off);
    if (off == (int32_t)off) {
        if (off) d_emit(cc, HVT_DIF_OP_ADDI, r, r, 0, (int32_t)off);
    } else {
        int t = d_cg_ralloc(cc, n);
        d_cg_ldi(cc, t, (uint64_t)off);
        emit2(cc, HVT_DIF_OP_ADD, r, r, t);
        d_cg_rfree(cc, t);
    }
    return r;
}

static void load(d_cc *cc, d_node *n, int r)
{
    const d_type *t = d_ty(cc, n->ty);
    if (n->bitsz) {
        d_emit(cc, HVT_DIF_OP_LDG, r, r, 0, n->unit | (n->user ? HVT_DIF_LD_USER : 0));
        int s = d_cg_ralloc(cc, n);
        if (!t->uns) { /* move the field to the top, then shift it down with its sign */
            int up = 64 - n->bitoff - n->bitsz;
            if (up) {
                d_cg_ldi(cc, s, (uint64_t)up);
                emit2(cc, HVT_DIF_OP_SHL, r, r, s);
            }
            d_cg_ldi(cc, s, (uint64_t)(64 - n->bitsz));
            emit2(cc, HVT_DIF_OP_SAR, r, r, s);
        } else {
            if (n->bitoff) {
                d_cg_ldi(cc, s, n->bitoff);
                emit2(cc, HVT_DIF_OP_SHR, r, r, s);
            }
            if (n->bitsz < 64) {
                d_cg_ldi(cc, s, (1ull << n->bitsz) - 1);
                emit2(cc, HVT_DIF_OP_AND, r, r, s);
            }
        }
        d_cg_rfree(cc, s);
        return;
    }
    uint32_t size = t->kind == TY_PTR ? 8 : t->size;
    if ((t->kind != TY_INT && t->kind != TY_PTR) || (size != 1 && size != 2 && size != 4 && size != 8))
        d_fail(cc, n->line, n->col, "a value of type \"%s\" cannot be used here", d_ty_str(cc, n->ty));
    int imm = (int)size | (t->kind == TY_INT && !t->uns && size < 8 ? HVT_DIF_LD_SIGNED : 0) |
              (n->user ? HVT_DIF_LD_USER : 0);
    d_emit(cc, HVT_DIF_OP_LDG, r, r, 0, imm);
}

/* ---- operators ---- */
static int cg_bin(d_cc *cc, d_node *n)
{
    int op = n->op;
    if (op == TK_COMMA) {
        d_cg_rfree(cc, d_cg_expr(cc, n->a));
        return d_cg_expr(cc, n->b);
    }
    if (op == TK_LAND || op == TK_LOR) {
        int rd = d_cg_expr(cc, n->a);
        emit2(cc, HVT_DIF_OP_LNOT, rd, rd, 0);
        emit2(cc, HVT_DIF_OP_LNOT, rd, rd, 0);
        d_plist *end = NULL;
        plist_add(cc, &end, d_pc(cc));
        d_emit(cc, op == TK_LAND ? HVT_DIF_OP_BZ : HVT_DIF_OP_BNZ, 0, rd, 0, 0);
        int rb = d_cg_expr(cc, n->b);
        emit2(cc, HVT_DIF_OP_LNOT, rd, rb, 0);
        emit2(cc, HVT_DIF_OP_LNOT, rd, rd, 0);
        d_cg_rfree(cc, rb);
        d_cg_here(cc, end);
        return rd;
    }
    /* constant right operand of + and -: ADDI */
    if ((op == TK_ADD || op == TK_SUB) && n->b->vk == VK_CONST && n->var != 2) {
        int64_t c = (int64_t)n->b->ival;
        if (n->var == 1) c *= (int64_t)pointee_size(cc, n->ty);
        if (op == TK_SUB) c = -c;
        if (c == (int32_t)c) {
            int ra = d_cg_expr(cc, n->a);
            if (n->var != 1) convert(cc, ra, n->a->ty, n->ty);
            d_emit(cc, HVT_DIF_OP_ADDI, ra, ra, 0, (int32_t)c);
            if (n->var != 1) ext(cc, ra, n->ty);
            return ra;
        }
    }
    int ra, rb;
    if (!n->a->side && !n->b->side && need(n->b) > need(n->a)) {
        rb = d_cg_expr(cc, n->b);
        ra = d_cg_expr(cc, n->a);
    } else {
        ra = d_cg_expr(cc, n->a);
        rb = d_cg_expr(cc, n->b);
    }
    if (op == TK_LXOR) {
        emit2(cc, HVT_DIF_OP_LNOT, ra, ra, 0);
        emit2(cc, HVT_DIF_OP_LNOT, rb, rb, 0);
        emit2(cc, HVT_DIF_OP_XOR, ra, ra, rb);
    } else if (op == TK_EQ || op == TK_NE || op == TK_LT || op == TK_LE || op == TK_GT || op == TK_GE) {
        if (n->var == 1) { /* strings: strcmp's sign, then the relation against 0 */
            emit2(cc, HVT_DIF_OP_SCMP, ra, ra, rb);
            if (op == TK_EQ || op == TK_NE) {
                emit2(cc, HVT_DIF_OP_LNOT, ra, ra, 0);
                if (op == TK_NE) emit2(cc, HVT_DIF_OP_LNOT, ra, ra, 0);
            } else {
                d_cg_ldi(cc, rb, 0);
                int swap = op == TK_GT || op == TK_GE;
                emit2(cc, op == TK_LT || op == TK_GT ? HVT_DIF_OP_LT : HVT_DIF_OP_LE, ra, swap ? rb : ra, swap ? ra : rb);
            }
        } else {
            if (n->var != 2 || (d_ty_is_int(cc, n->a->ty) && d_ty_is_int(cc, n->b->ty))) {
                int ct = d_ty_arith(cc, n->a->ty, n->b->ty);
                convert(cc, ra, n->a->ty, ct);
                convert(cc, rb, n->b->ty, ct);
            }
            int uns = n->var == 2, swap = op == TK_GT || op == TK_GE, o;
            if (op == TK_EQ) o = HVT_DIF_OP_EQ;
            else if (op == TK_NE) o = HVT_DIF_OP_NE;
            else if (op == TK_LT || op == TK_GT) o = uns ? HVT_DIF_OP_LTU : HVT_DIF_OP_LT;
            else o = uns ? HVT_DIF_OP_LEU : HVT_DIF_OP_LE;
            emit2(cc, o, ra, swap ? rb : ra, swap ? ra : rb);
        }
    } else if (n->var == 1 && (op == TK_ADD || op == TK_SUB)) { /* pointer +- integer */
        scale(cc, rb, pointee_size(cc, n->ty), n);
        emit2(cc, op == TK_ADD ? HVT_DIF_OP_ADD : HVT_DIF_OP_SUB, ra, ra, rb);
    } else if (n->var == 2 && op == TK_SUB) { /* pointer - pointer: elements between */
        emit2(cc, HVT_DIF_OP_SUB, ra, ra, rb);
        uint32_t sz = pointee_size(cc, n->a->ty);
        if (sz > 1) {
            d_cg_ldi(cc, rb, sz);
            emit2(cc, HVT_DIF_OP_SDIV, ra, ra, rb);
        }
    } else {
        convert(cc, ra, n->a->ty, n->ty);
        if (op != TK_LSH && op != TK_RSH) convert(cc, rb, n->b->ty, n->ty);
        arith_op(cc, op, ra, rb, n->ty);
    }
    d_cg_rfree(cc, rb);
    return ra;
}

static int cg_unary(d_cc *cc, d_node *n)
{
    int r;
    switch (n->op) {
    case TK_INC: case TK_DEC: return cg_incdec(cc, n, 0);
    case TK_BAND: return d_cg_addr(cc, n->a);
    case TK_MUL:
        r = d_cg_expr(cc, n->a);
        if (!n->decay) load(cc, n, r);
        return r;
    case TK_LNEG:
        r = d_cg_expr(cc, n->a);
        emit2(cc, HVT_DIF_OP_LNOT, r, r, 0);
        return r;
    case TK_SUB: case TK_BNEG:
        r = d_cg_expr(cc, n->a);
        convert(cc, r, n->a->ty, n->ty);
        emit2(cc, n->op == TK_SUB ? HVT_DIF_OP_NEG : HVT_DIF_OP_NOT, r, r, 0);
        if (n->op == TK_SUB || d_ty(cc, n->ty)->uns) ext(cc, r, n->ty);
        return r;
    default: /* unary + */
        r = d_cg_expr(cc, n->a);
        convert(cc, r, n->a->ty, n->ty);
        return r;
    }
}

static int cg_call(d_cc *cc, d_node *n)
{
    const char *f = n->str;
    if (!strcmp(f, "speculation")) {
        int rs = d_cg_ralloc(cc, n);
        d_emit(cc, HVT_DIF_OP_SPECNEW, rs, 0, 0, 0);
        cc->uses_spec = 1;
        return rs;
    }
    int r = d_cg_expr(cc, n->b);
    if (!strcmp(f, "copyinstr")) d_emit(cc, HVT_DIF_OP_STRG, r, r, 0, HVT_DIF_LD_USER);
    else if (!strcmp(f, "__psargs")) { /* the bytes [arg_start, arg_end) of the process's memory */
        int rb = d_cg_expr(cc, n->b->next);
        d_emit(cc, HVT_DIF_OP_STRGR, r, r, rb, HVT_DIF_LD_USER);
        d_cg_rfree(cc, rb);
    }
    /* copyin( ): the address itself (see d_sema_call) */
    else if (!strcmp(f, "strlen")) emit2(cc, HVT_DIF_OP_STRLEN, r, r, 0);
    else if (!strcmp(f, "basename")) emit2(cc, HVT_DIF_OP_BASENAME, r, r, 0);
    else if (!strcmp(f, "strjoin")) {
        int rb = d_cg_expr(cc, n->b->next);
        emit2(cc, HVT_DIF_OP_STRJOIN, r, r, rb);
        d_cg_rfree(cc, rb);
    }
    /* sym( ), func( ): the value itself; its type makes the host print a symbol */
    return r;
}

int d_cg_expr(d_cc *cc, d_node *n)
{
    int r;
    if (n->vk == VK_CONST) {
        r = d_cg_ralloc(cc, n);
        d_cg_ldi(cc, r, n->ival);
        return r;
    }
    switch (n->kind) {
    case N_STR:
        /* A constant longer than strsize is cut there, as every string is (dtrace-utils copies
         * at most strsize characters of a constant: strlen("123456789") is 5 at strsize=5). */
        r = d_cg_ralloc(cc, n);
        d_emit(cc, HVT_DIF_OP_SCONST, r, 0, 0, (int32_t)d_strtab_add(cc, n->str,
               strnlen(n->str, n->slen) > cc->strsize ? cc->strsize : n->slen));
        return r;
    case N_TOSTR:
        r = d_cg_addr(cc, n->a);
        d_emit(cc, HVT_DIF_OP_STRG, r, r, 0, n->a->user ? HVT_DIF_LD_USER : 0);
        return r;
    case N_STRINGOF: {
        const d_type *t = d_ty(cc, n->a->ty);
        r = d_cg_expr(cc, n->a);
        if (t->kind != TY_STR) d_emit(cc, HVT_DIF_OP_STRG, r, r, 0, t->kind == TY_PTR && t->user ? HVT_DIF_LD_USER : 0);
        return r;
    }
    case N_CALL: return cg_call(cc, n);
    case N_ASSIGN: return cg_assign(cc, n);
    case N_POST: return cg_incdec(cc, n, 1);
    case N_UNARY: return cg_unary(cc, n);
    case N_BIN: return cg_bin(cc, n);
    case N_CAST:
        r = d_cg_expr(cc, n->a);
        convert(cc, r, n->a->ty, n->ty);
        return r;
    case N_COND: {
        d_plist *other = NULL;
        d_cg_branch(cc, n->a, 0, &other);
        int rx = d_cg_expr(cc, n->b);
        convert(cc, rx, n->b->ty, n->ty);
        int jmp = d_pc(cc);
        d_emit(cc, HVT_DIF_OP_JMP, 0, 0, 0, 0);
        d_cg_here(cc, other);
        /* rx is dead on this path until the end: the other value may use it */
        d_cg_rfree(cc, rx);
        int ry = d_cg_expr(cc, n->c);
        convert(cc, ry, n->c->ty, n->ty);
        if (ry != rx) {
            emit2(cc, HVT_DIF_OP_MOV, rx, ry, 0);
            d_cg_rfree(cc, ry);
            cc->regs |= (uint16_t)(1u << rx);
        }
        d_patch(cc, jmp, d_pc(cc));
        return rx;
    }
    default: break;
    }
    switch (n->vk) {
    case VK_BUILTIN:
        r = d_cg_ralloc(cc, n);
        d_emit(cc, HVT_DIF_OP_VAR, r, 0, 0, n->var);
        if (n->var <= HVT_DIF_V_ARG0 + 9) ext(cc, r, n->ty); /* args[] of a narrow C type */
        return r;
    case VK_VAR: {
        int keys[HVT_DIF_TUPLE_MAX] = {0}, nk;
        elem_prep(cc, n, keys, &nk);
        if (is_array(cc, n)) { /* the element into the index's register */
            var_op(cc, n, 0, keys[0], keys);
            return keys[0];
        }
        for (int i = 0; i < nk; i++) d_cg_rfree(cc, keys[i]);
        r = d_cg_ralloc(cc, n);
        var_op(cc, n, 0, r, keys);
        return r;
    }
    case VK_MEM:
        r = d_cg_addr(cc, n);
        if (!n->decay) load(cc, n, r);
        return r;
    default: break;
    }
    d_fail(cc, n->line, n->col, "internal error: no code for node %d", n->kind);
}
