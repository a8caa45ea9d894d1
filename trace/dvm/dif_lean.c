/*
 * dif_lean.c - the lean path of a firing (dif.h, dif_impl.h): a probe whose every clause only
 * aggregates - built-in integers, execname and kernel stacks as keys and values, count(),
 * sum(), quantize() and the others, no predicate, no record, no variable, no string but
 * execname - runs here, without the interpreter's per-clause state (register types, scratch
 * strings, the record being built, the budget, faults): such a clause cannot make a record or
 * fault, and its work is bounded by its length. Which clauses qualify is decided once per load
 * (dif_lean_classify), instruction by instruction, so that every register a clause reads was
 * set before in the same clause (the verifier proved the types; this pass proves them again
 * for the few instructions it accepts) and the firing's charges stay within the first grant of
 * the budget (the interpreter would never look at the budget or the clock for it: same
 * result). Everything else takes the interpreter (dif_vm.c).
 *
 * The same pass decodes each lean clause once into the ops dif_lean.h runs (struct
 * dif_lean_op): a lean clause has no branch, so what each register holds (an integer or the
 * execname) is known here for every instruction, and each op does only what is left at run
 * time - which built-in an argument is, whether a key is the name or an integer, which
 * aggregating function - so a firing tests none of it again. NOP and execname's VAR (the key
 * is made from the name where TPUSH takes it) leave no op; RET ends the clause (DIF_LK_END).
 */
#include "dif_impl.h"
#include "hvt_probe.h"

#define LEAN_INT  1u
#define LEAN_EXEC 2u

/* The budget units the interpreter would charge clause cl (its length, keys, stack frames),
 * or 0 when the clause is not lean; *reads gets DIF_LEAN_EXEC if it reads execname, loses
 * DIF_LEAN_THIN if it reads a v[] or the stack. ops: where its ops go (at most cl->count), or
 * NULL for the units alone (a clause found not lean may leave some there: no probe runs
 * them). */
static uint64_t dif_lean_clause(const struct dif_state *st, const struct hvt_dif_clause *cl,
                                struct dif_lean_op *ops, uint8_t *reads)
{
    const struct hvt_dif_insn *code = st->insns + cl->first;
    uint8_t kind[HVT_DIF_NREGS] = { 0 };
    uint64_t units = cl->count;
    uint32_t tn = 0, tlen = 0, n = 0;
    for (uint32_t pc = 0; pc < cl->count; pc++) {
        const struct hvt_dif_insn *in = &code[pc];
        unsigned rd = in->rd & (HVT_DIF_NREGS - 1), ra = in->ra & (HVT_DIF_NREGS - 1);
        unsigned rb = in->rb & (HVT_DIF_NREGS - 1);
        struct dif_lean_op op = { DIF_LK_END, (uint8_t)rd, (uint8_t)ra, (uint8_t)rb, in->imm };
        bool emit = true;
        switch (in->op) {
        case HVT_DIF_OP_NOP:
            emit = false;
            break;
        case HVT_DIF_OP_LDI:
            kind[rd] = LEAN_INT;
            op.k = DIF_LK_LDI;
            break;
        case HVT_DIF_OP_VAR:
            if (in->imm == HVT_DIF_V_EXECNAME && st->strsize > 16) {
                kind[rd] = LEAN_EXEC;    /* (a 16-byte name fits a string value) */
                *reads |= DIF_LEAN_EXEC;
                emit = false;            /* read where a TPUSH takes it */
            } else if (hvt_dif_lean_int_var(in->imm)) {
                kind[rd] = LEAN_INT;
                if (in->imm >= HVT_DIF_V_ARG0 && in->imm < HVT_DIF_V_ARG0 + 6) {
                    op.k = DIF_LK_ARG;
                    op.x = in->imm - HVT_DIF_V_ARG0;
                } else {
                    op.k = in->imm == HVT_DIF_V_CPU ? DIF_LK_CPU : DIF_LK_VAR;
                    if (op.k == DIF_LK_VAR)
                        *reads &= (uint8_t)~DIF_LEAN_THIN;
                }
            } else {
                return 0;
            }
            break;
        case HVT_DIF_OP_TCLR:
            tn = tlen = 0;
            op.k = DIF_LK_TCLR;
            break;
        case HVT_DIF_OP_TPUSH:
            if (!kind[ra])
                return 0;
            tn++;
            tlen += kind[ra] == LEAN_EXEC ? 24 : 8;     /* an execname key: 8 to 24 bytes */
            units += kind[ra] == LEAN_EXEC ? 16 : 0;    /* its bytes */
            op.k = kind[ra] == LEAN_EXEC ? DIF_LK_TPUSH_EXEC : DIF_LK_TPUSH;
            break;
        case HVT_DIF_OP_TKSTACK:
            if (in->imm < 1 || in->imm > HVT_DIF_STACKKEY_MAX)
                return 0;
            tn++;
            tlen += 8 + 8 * (uint32_t)in->imm;
            units += 8 + 8 * (uint64_t)in->imm + (uint64_t)in->imm * DIF_KFRAME_UNITS;
            op.k = DIF_LK_TKSTACK;
            *reads &= (uint8_t)~DIF_LEAN_THIN;
            break;
        case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW: {
            if (in->imm < 0 || (uint32_t)in->imm >= st->hdr->naggs)
                return 0;
            uint8_t fn = st->aggs[in->imm].fn;
            bool count = fn == HVT_DIF_AGG_COUNT, w = in->op == HVT_DIF_OP_AGGW;
            if ((!count && kind[ra] != LEAN_INT) || (w && kind[rb] != LEAN_INT))
                return 0;
            units += tlen;
            /* count() adds 1 whatever the weight (dif_agg_apply too) */
            op.k = count ? DIF_LK_COUNT : fn == HVT_DIF_AGG_QUANTIZE ?
                   (w ? DIF_LK_QUANTW : DIF_LK_QUANT) : w ? DIF_LK_AGGW : DIF_LK_AGG;
            break;
        }
        case HVT_DIF_OP_RET:
            if (pc != cl->count - 1 || tn > HVT_DIF_TUPLE_MAX || tlen > HVT_DIF_KEY_MAX)
                return 0;
            if (ops)
                ops[n] = op;             /* DIF_LK_END */
            return units;
        default:
            return 0;
        }
        if (tn > HVT_DIF_TUPLE_MAX || tlen > HVT_DIF_KEY_MAX)
            return 0;
        if (emit && ops)
            ops[n++] = op;
    }
    return 0;                        /* no RET: the interpreter's illegal-op fault */
}

void dif_lean_classify(struct dif_state *st, uint8_t *lean, struct dif_lean_op *ops)
{
    const struct hvt_dif_hdr *h = st->hdr;
    uint64_t grant = st->env.budget ? st->env.budget : DIF_DEF_BUDGET;
    if (grant > DIF_BUDGET_CHUNK)
        grant = DIF_BUDGET_CHUNK;
    uint8_t reads = 0;
    /* each lean clause's ops where its instructions are (clauses are disjoint: the verifier) */
    for (uint32_t i = 0; i < h->nclauses; i++)
        dif_lean_clause(st, &st->clauses[i], ops + st->clauses[i].first, &reads);
    /* BEGIN, END and ERROR are fired by the caller itself (their firings are never thin) or by
     * the interpreter: every other probe must take thin firings for the program to */
    bool thin = true;
    for (uint32_t i = 0; i < h->nprobes; i++) {
        const struct hvt_dif_probe *p = &st->probes[i];
        uint64_t units = 0;
        bool ok = p->nclauses > 0;
        reads = DIF_LEAN_THIN;
        for (uint32_t j = 0; ok && j < p->nclauses; j++) {
            uint64_t u = dif_lean_clause(st, &st->clauses[st->probe_clauses[p->clauses + j]], NULL,
                                         &reads);
            ok = u != 0;
            units += u;
        }
        lean[i] = !ok || units > grant ? 0 : DIF_LEAN | reads;
        if (!(lean[i] & DIF_LEAN_THIN) && p->id != h->begin_probe && p->id != h->end_probe &&
            p->id != h->error_probe)
            thin = false;
    }
    st->lean = lean;
    st->lean_ops = ops;
    st->thin = thin;
}

bool dif_thin(const struct dif_state *st) { return st && st->thin; }
