/*
 * dif_lean.h - the lean path's run (dif_lean.c says which probes take it and why the result is
 * the interpreter's): inline in dif_vm.c's dif_fire, its only includer, so a lean firing pays
 * one function's entry. Under the CPU's buffer lock; f->execname 16 bytes readable.
 */
#ifndef HVT_DIF_LEAN_H
#define HVT_DIF_LEAN_H
#include "dif_impl.h"
#include "hvt_probe.h"

/* The timed phase of each op (dif_vm.c's dif_op_phase for the instructions they come from). */
static const uint8_t dif_lean_phase[DIF_LK__COUNT] = {
    [DIF_LK_END] = HVT_PH_INSNS, [DIF_LK_LDI] = HVT_PH_INSNS,
    [DIF_LK_ARG] = HVT_PH_BUILTINS, [DIF_LK_VAR] = HVT_PH_BUILTINS, [DIF_LK_CPU] = HVT_PH_BUILTINS,
    [DIF_LK_TCLR] = HVT_PH_INSNS, [DIF_LK_TPUSH] = HVT_PH_INSNS, [DIF_LK_TPUSH_EXEC] = HVT_PH_INSNS,
    [DIF_LK_TKSTACK] = HVT_PH_SUBR,
    [DIF_LK_COUNT] = HVT_PH_AGG, [DIF_LK_QUANT] = HVT_PH_AGG, [DIF_LK_QUANTW] = HVT_PH_AGG,
    [DIF_LK_AGG] = HVT_PH_AGG, [DIF_LK_AGGW] = HVT_PH_AGG,
};

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

/* count() and quantize() with the tuple as the key: the entry this CPU last updated in place
 * when the key is its key (dif_agg_last_vals), else dif_agg_apply (hashed, found or made).
 * quantize's bucket is always one of its HVT_DIF_QUANT_BUCKETS (the verifier proved nbuckets). */
static inline __attribute__((always_inline))
void dif_lean_bump(struct dif_state *st, struct dif_cpu *c, uint32_t idx, uint32_t tlen,
                   int64_t v, int64_t w, bool count)
{
    int64_t *b = dif_agg_last_vals(c, idx, c->tuple, tlen);
    if (__builtin_expect(!b, 0)) {
        dif_agg_apply(st, c, idx, c->tuple, tlen, v, w);
        return;
    }
    uint32_t i = count ? 0 : dif_quantize_bucket(v);
    dif_lock(&c->agg_lock);          /* a snapshot on another CPU takes values out */
    b[i] = (int64_t)((uint64_t)b[i] + (count ? 1 : (uint64_t)w));
    dif_unlock(&c->agg_lock);
}

/* The clauses of p, their ops as dif_lean.c decoded them; timed: a constant in each of the
 * two copies (the plain one has no stamp at all), as in dif_vm.c's loop. The key tuple is
 * built in c->tuple, its length kept here (the interpreter sets its own at each clause). */
static inline __attribute__((always_inline))
void dif_lean_clauses(struct dif_state *st, struct dif_cpu *c, unsigned cpu,
                      const struct hvt_dif_probe *p, const struct dif_firing *f, const bool timed)
{
    uint64_t *cost = f->cost, t = timed ? __builtin_ia32_rdtsc() : 0;
    unsigned ph = HVT_PH_INSNS;
    const uint64_t *args = f->args ? f->args : &f->v[HVT_DIF_V_ARG0];
    for (const uint16_t *cl = st->probe_clauses + p->clauses, *end = cl + p->nclauses; cl < end;
         cl++) {
        if (__atomic_load_n(&st->exited, __ATOMIC_ACQUIRE) &&
            p->id != st->hdr->end_probe && p->id != st->hdr->error_probe)
            break;                   /* exit() took effect: END's clauses only (dif_vm.c) */
        uint64_t reg[HVT_DIF_NREGS];
        uint32_t tlen = 0;
        for (const struct dif_lean_op *op = st->lean_ops + st->clauses[*cl].first;; op++) {
            if (timed && dif_lean_phase[op->k] != ph) {
                uint64_t now = __builtin_ia32_rdtsc();
                cost[ph] += now - t;
                t = now;
                ph = dif_lean_phase[op->k];
            }
            switch (op->k) {
            case DIF_LK_LDI:
                reg[op->rd] = (uint64_t)(int64_t)op->x;
                continue;
            case DIF_LK_ARG:
                reg[op->rd] = args[op->x];
                continue;
            case DIF_LK_VAR:
                reg[op->rd] = f->v[op->x];
                continue;
            case DIF_LK_CPU:
                reg[op->rd] = cpu;
                continue;
            case DIF_LK_TCLR:
                tlen = 0;
                continue;
            case DIF_LK_TPUSH:
                c->tuple[tlen / 8] = reg[op->ra];    /* tlen: a multiple of 8 */
                tlen += 8;
                continue;
            case DIF_LK_TPUSH_EXEC:
                tlen += dif_round8(2 + dif_exec_key(f->execname, c->tuple + tlen / 8));
                continue;
            case DIF_LK_TKSTACK:
                dif_lean_kstack(st, f, c->tuple + tlen / 8, (uint32_t)op->x);
                tlen += 8 + 8 * (uint32_t)op->x;
                continue;
            case DIF_LK_COUNT:
                dif_lean_bump(st, c, (uint32_t)op->x, tlen, 0, 1, true);
                continue;
            case DIF_LK_QUANT:
                dif_lean_bump(st, c, (uint32_t)op->x, tlen, (int64_t)reg[op->ra], 1, false);
                continue;
            case DIF_LK_QUANTW:
                dif_lean_bump(st, c, (uint32_t)op->x, tlen, (int64_t)reg[op->ra],
                              (int64_t)reg[op->rb], false);
                continue;
            case DIF_LK_AGG:
                dif_agg_apply(st, c, (uint32_t)op->x, c->tuple, tlen, (int64_t)reg[op->ra], 1);
                continue;
            case DIF_LK_AGGW:
                dif_agg_apply(st, c, (uint32_t)op->x, c->tuple, tlen, (int64_t)reg[op->ra],
                              (int64_t)reg[op->rb]);
                continue;
            case DIF_LK_END:
                break;
            default:
                __builtin_unreachable();     /* dif_lean.c makes no other op */
            }
            break;                   /* DIF_LK_END, the last */
        }
    }
    if (timed)
        cost[ph] += __builtin_ia32_rdtsc() - t;
}

/* No this-> generation here (the interpreter's firings move it: a lean clause has no this->
 * variable, and two interpreted firings still see different generations). */
static inline __attribute__((always_inline))
void dif_lean_run(struct dif_state *st, struct dif_cpu *c, unsigned cpu,
                  const struct hvt_dif_probe *p, const struct dif_firing *f)
{
    if (f->cost)
        dif_lean_clauses(st, c, cpu, p, f, true);
    else
        dif_lean_clauses(st, c, cpu, p, f, false);
}

#endif
