/*
 * dif_lean.h - the lean path's run (dif_lean.c says which probes take it and why the result is
 * the interpreter's): inline in dif_vm.c's dif_fire, its only includer, so a lean firing pays
 * one function's entry. Under the CPU's buffer lock; f->execname 16 bytes readable.
 */
#ifndef HVT_DIF_LEAN_H
#define HVT_DIF_LEAN_H
#include "dif_impl.h"
#include "hvt_probe.h"

/* The timed phase of a lean instruction (dif_vm.c's dif_op_phase for these). */
static inline unsigned dif_lean_phase(unsigned op)
{
    switch (op) {
    case HVT_DIF_OP_VAR: return HVT_PH_BUILTINS;
    case HVT_DIF_OP_TKSTACK: return HVT_PH_SUBR;
    case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW: return HVT_PH_AGG;
    default: return HVT_PH_INSNS;
    }
}

/* A kernel stack key (dif_vm.c's dif_tstack for TKSTACK) at w: the header word, depth frames. */
static __attribute__((noinline)) void dif_lean_kstack(struct dif_state *st, const struct dif_firing *f, uint64_t *w,
                            uint32_t depth)
{
    uint32_t n = 0, exact = 0;
    bool from_user = false;
    memset(w + 1, 0, 8 * depth);
    if (st->env.kstack)
        n = st->env.kstack(f->ctx, w + 1, depth, &exact, &from_user);
    if (n > depth)
        n = depth;
    w[0] = hvt_dif_sk_word(n, depth, HVT_DIF_SK_KERNEL, from_user ? HVT_DIF_SK_FROM_USER : 0,
                           exact);
}

/* The lean instructions by opcode, dense (one jump table, no range test but the table's):
 * RET and every other opcode stop the clause (the classification let only these through, RET
 * last). */
enum { LEAN_STOP, LEAN_NOP, LEAN_LDI, LEAN_VAR, LEAN_TCLR, LEAN_TPUSH, LEAN_TKSTACK, LEAN_AGG };
static const uint8_t lean_op[256] = {
    [HVT_DIF_OP_NOP] = LEAN_NOP, [HVT_DIF_OP_LDI] = LEAN_LDI, [HVT_DIF_OP_VAR] = LEAN_VAR,
    [HVT_DIF_OP_TCLR] = LEAN_TCLR, [HVT_DIF_OP_TPUSH] = LEAN_TPUSH,
    [HVT_DIF_OP_TKSTACK] = LEAN_TKSTACK, [HVT_DIF_OP_AGG] = LEAN_AGG, [HVT_DIF_OP_AGGW] = LEAN_AGG,
};

/* The clauses of p; timed: a constant in each of the two copies (the plain one has no
 * stamp at all), as in dif_vm.c's loop. */
static inline __attribute__((always_inline))
void dif_lean_clauses(struct dif_state *st, struct dif_cpu *c, unsigned cpu,
                      const struct hvt_dif_probe *p, const struct dif_firing *f, const bool timed)
{
    uint64_t *cost = f->cost, t = timed ? __builtin_ia32_rdtsc() : 0;
    unsigned ph = HVT_PH_INSNS;
    for (const uint16_t *cl = st->probe_clauses + p->clauses, *end = cl + p->nclauses; cl < end;
         cl++) {
        if (__atomic_load_n(&st->exited, __ATOMIC_ACQUIRE) &&
            p->id != st->hdr->end_probe && p->id != st->hdr->error_probe)
            break;                   /* exit() took effect: END's clauses only (dif_vm.c) */
        const struct hvt_dif_insn *in = st->insns + st->clauses[*cl].first;
        uint64_t reg[HVT_DIF_NREGS];
        uint32_t exec = 0;           /* registers holding execname (bit per register) */
        c->tuple_len = c->tuple_n = 0;
        for (;; in++) {
#define LEAN_R(x) ((x) & (HVT_DIF_NREGS - 1))
            if (timed && dif_lean_phase(in->op) != ph) {
                uint64_t now = __builtin_ia32_rdtsc();
                cost[ph] += now - t;
                t = now;
                ph = dif_lean_phase(in->op);
            }
            switch (lean_op[in->op]) {
            case LEAN_LDI:
                reg[LEAN_R(in->rd)] = (uint64_t)(int64_t)in->imm;
                exec &= ~(1u << LEAN_R(in->rd));
                continue;
            case LEAN_VAR: {
                int32_t id = in->imm;
                unsigned rd = LEAN_R(in->rd);
                reg[rd] = id < HVT_DIF_V_ARG0 + 6 ?
                          (f->args ? f->args : &f->v[HVT_DIF_V_ARG0])[id - HVT_DIF_V_ARG0] :
                          id == HVT_DIF_V_CPU ? cpu : id == HVT_DIF_V_EXECNAME ? 0 : f->v[id];
                exec = id == HVT_DIF_V_EXECNAME ? exec | 1u << rd : exec & ~(1u << rd);
                continue;
            }
            case LEAN_TCLR:
                c->tuple_len = c->tuple_n = 0;
                continue;
            case LEAN_TPUSH: {
                uint64_t *k = c->tuple + c->tuple_len / 8;    /* a multiple of 8 */
                if (exec & 1u << LEAN_R(in->ra)) {
                    c->tuple_len += dif_round8(2 + dif_exec_key(f->execname, k));
                } else {
                    k[0] = reg[LEAN_R(in->ra)];
                    c->tuple_len += 8;
                }
                c->tuple_n++;
                continue;
            }
            case LEAN_TKSTACK:
                dif_lean_kstack(st, f, c->tuple + c->tuple_len / 8, (uint32_t)in->imm);
                c->tuple_len += 8 + 8 * (uint32_t)in->imm;
                c->tuple_n++;
                continue;
            case LEAN_AGG: {
                uint32_t idx = (uint32_t)in->imm;
                const struct hvt_dif_agg *a = &st->aggs[idx];
                int64_t v = a->fn == HVT_DIF_AGG_COUNT ? 0 : (int64_t)reg[LEAN_R(in->ra)];
                int64_t w = in->op == HVT_DIF_OP_AGGW ? (int64_t)reg[LEAN_R(in->rb)] : 1;
                dif_agg_update_fast(st, c, idx, a, v, w);
                continue;
            }
            case LEAN_NOP:
                continue;
            }
            break;                   /* RET, the last (dif_lean_clause) */
#undef LEAN_R
        }
    }
    if (timed)
        cost[ph] += __builtin_ia32_rdtsc() - t;
}

static inline __attribute__((always_inline))
void dif_lean_run(struct dif_state *st, struct dif_cpu *c, unsigned cpu,
                  const struct hvt_dif_probe *p, const struct dif_firing *f)
{
    if (__builtin_expect(++c->gen == 0, 0)) {  /* as dif_vm.c: this-> values of no firing */
        memset(c->local_gen, 0, (size_t)st->nlocals * 4);
        c->gen = 1;
    }
    if (f->cost)
        dif_lean_clauses(st, c, cpu, p, f, true);
    else
        dif_lean_clauses(st, c, cpu, p, f, false);
}

#endif
