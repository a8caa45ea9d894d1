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
 */
#include "dif_impl.h"
#include "hvt_probe.h"

/* The integer built-ins a lean clause may read: the firing's v[] (or args) as d_runtime fills
 * them, and the CPU. */
static bool dif_lean_int_var(int32_t id)
{
    if (id >= HVT_DIF_V_ARG0 && id < HVT_DIF_V_ARG0 + 6)
        return true;
    switch (id) {
    case HVT_DIF_V_PID: case HVT_DIF_V_TID: case HVT_DIF_V_CURTHREAD: case HVT_DIF_V_TIMESTAMP:
    case HVT_DIF_V_WALLTIMESTAMP: case HVT_DIF_V_ERRNO: case HVT_DIF_V_REGS_PC:
    case HVT_DIF_V_REGS_SP: case HVT_DIF_V_CPU:
        return true;
    }
    return false;
}

#define LEAN_INT  1u
#define LEAN_EXEC 2u

/* The budget units the interpreter would charge clause cl (its length, keys, stack frames),
 * or 0 when the clause is not lean. */
static uint64_t dif_lean_clause(const struct dif_state *st, const struct hvt_dif_clause *cl)
{
    const struct hvt_dif_insn *code = st->insns + cl->first;
    uint8_t kind[HVT_DIF_NREGS] = { 0 };
    uint64_t units = cl->count;
    uint32_t tn = 0, tlen = 0;
    for (uint32_t pc = 0; pc < cl->count; pc++) {
        const struct hvt_dif_insn *in = &code[pc];
        unsigned rd = in->rd & (HVT_DIF_NREGS - 1), ra = in->ra & (HVT_DIF_NREGS - 1);
        unsigned rb = in->rb & (HVT_DIF_NREGS - 1);
        switch (in->op) {
        case HVT_DIF_OP_NOP:
            break;
        case HVT_DIF_OP_LDI:
            kind[rd] = LEAN_INT;
            break;
        case HVT_DIF_OP_VAR:
            if (in->imm == HVT_DIF_V_EXECNAME && st->strsize > 16)
                kind[rd] = LEAN_EXEC;    /* (a 16-byte name fits a string value) */
            else if (dif_lean_int_var(in->imm))
                kind[rd] = LEAN_INT;
            else
                return 0;
            break;
        case HVT_DIF_OP_TCLR:
            tn = tlen = 0;
            break;
        case HVT_DIF_OP_TPUSH:
            if (!kind[ra])
                return 0;
            tn++;
            tlen += kind[ra] == LEAN_EXEC ? 24 : 8;     /* an execname key: 8 to 24 bytes */
            units += kind[ra] == LEAN_EXEC ? 16 : 0;    /* its bytes */
            break;
        case HVT_DIF_OP_TKSTACK:
            if (in->imm < 1 || in->imm > HVT_DIF_STACKKEY_MAX)
                return 0;
            tn++;
            tlen += 8 + 8 * (uint32_t)in->imm;
            units += 8 + 8 * (uint64_t)in->imm + (uint64_t)in->imm * DIF_KFRAME_UNITS;
            break;
        case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW: {
            if (in->imm < 0 || (uint32_t)in->imm >= st->hdr->naggs)
                return 0;
            bool count = st->aggs[in->imm].fn == HVT_DIF_AGG_COUNT;
            if ((!count && kind[ra] != LEAN_INT) ||
                (in->op == HVT_DIF_OP_AGGW && kind[rb] != LEAN_INT))
                return 0;
            units += tlen;
            break;
        }
        case HVT_DIF_OP_RET:
            return pc == cl->count - 1 && tn <= HVT_DIF_TUPLE_MAX && tlen <= HVT_DIF_KEY_MAX ?
                   units : 0;
        default:
            return 0;
        }
        if (tn > HVT_DIF_TUPLE_MAX || tlen > HVT_DIF_KEY_MAX)
            return 0;
    }
    return 0;                        /* no RET: the interpreter's illegal-op fault */
}

void dif_lean_classify(struct dif_state *st, uint8_t *lean)
{
    const struct hvt_dif_hdr *h = st->hdr;
    uint64_t grant = st->env.budget ? st->env.budget : DIF_DEF_BUDGET;
    if (grant > DIF_BUDGET_CHUNK)
        grant = DIF_BUDGET_CHUNK;
    for (uint32_t i = 0; i < h->nprobes; i++) {
        const struct hvt_dif_probe *p = &st->probes[i];
        uint64_t units = 0;
        bool ok = p->nclauses > 0;
        for (uint32_t j = 0; ok && j < p->nclauses; j++) {
            uint64_t u = dif_lean_clause(st, &st->clauses[st->probe_clauses[p->clauses + j]]);
            ok = u != 0;
            units += u;
        }
        lean[i] = ok && units <= grant;
    }
    st->lean = lean;
}
