/*
 * dif_verify.c - the D program verifier (dif.h). Everything an image says is checked before
 * anything uses it, reading only [image, image+len):
 *  - header: alignment, magic, size == len <= HVT_DIF_MAX_IMAGE, strsize, flags, options;
 *    the kernel's ORC descriptor (off_korc) inside the image and sane (kunwind_tables_check);
 *  - sections: 8-aligned offsets, inside the image (64-bit sums), after the header, no two
 *    overlapping; counts the record fields can hold; strtab ends with a NUL;
 *  - vars, aggs: kind/type/function known, keys and their types, padding zero, names inside
 *    strtab, aggregation parameters and nbuckets recomputed; a scalar array (GLOBAL or LOCAL
 *    with nelem) of at most HVT_DIF_ARRAY_MAX elements, the arrays' bytes at most DIF_OPT_MAX
 *    (globals) and DIF_LOCALS_MAX (this->), used by LDSA/STSA only and they only on arrays;
 *  - probes: sorted by id, unique, their clause lists inside probe_clauses[], names inside
 *    strtab; probe_clauses[] entries < nclauses;
 *  - clauses: 1..HVT_DIF_MAX_INSNS insns inside insns[], in order and disjoint (so the work
 *    is linear in the image), last insn RET;
 *  - each insn: known op, used registers < 16, unused fields zero, immediates in range and of
 *    the right kind, branches strictly forward inside the clause;
 *  - types: each register holds none, an integer or a string at each insn (the merge of its
 *    fall-through and every branch to it: types that differ merge to none), and so does the
 *    tuple being built (merging two different tuples makes it unusable). Reading a register
 *    that holds none is refused, integer ops take integers, string ops strings, stores the
 *    variable's type, LDAV/STAV/AGG/AGGW a tuple of the variable's / aggregation's key types
 *    (AGGW a quantization: its weight only there), and recording (EMIT, STACK, USTACK, EXIT)
 *    follows an ACT on every path; speculations keep DTrace's
 *    order on every path (dif_check_spec_order);
 *  - header: nspec <= HVT_DIF_NSPEC_MAX, nspec * specsize <= DIF_OPT_MAX (memory per CPU);
 *    dynvarsize holds one dynamic variable at least (key and value) if the program has any.
 * Unreachable insns get the structural checks only (they never run).
 */
#include "dif_impl.h"
#include "hvt_probe.h"

/* Per-insn state of one clause: the register types (2 bits each), the tuple (count, key
 * types, or unusable), whether an ACT was seen on every path, whether any path reaches it. */
#define VS_REGS   0xffffffffull
#define VS_TSHIFT 32
#define VS_TBAD   (1ull << 52)
#define VS_TUPLE  (0x1fffffull << VS_TSHIFT)   /* count (4 bits), types (16), bad (1) */
#define VS_ACTED  (1ull << 53)
/* on some path to the insn (merged by OR): an ACT, a SPECULATE, a COMMIT */
#define VS_ACT_ANY  (1ull << 54)
#define VS_SPEC_ANY (1ull << 55)
#define VS_COMM_ANY (1ull << 56)
#define VS_ANY      (VS_ACT_ANY | VS_SPEC_ANY | VS_COMM_ANY)
#define VS_REACH  (1ull << 63)

/* The states of the clause being checked: too big for a hypervisor stack, so static, and a
 * lock for it (verification is rare: a program load). */
static uint64_t dif_vstate[HVT_DIF_MAX_INSNS];
static struct dif_lock dif_vlock;

static unsigned vs_reg(uint64_t s, unsigned r) { return (unsigned)(s >> (2 * r)) & 3; }
static uint64_t vs_set(uint64_t s, unsigned r, unsigned t)
{
    return (s & ~(3ull << (2 * r))) | ((uint64_t)t << (2 * r));
}
static unsigned vs_tn(uint64_t s) { return (unsigned)(s >> VS_TSHIFT) & 15; }
static unsigned vs_tt(uint64_t s, unsigned i) { return (unsigned)(s >> (VS_TSHIFT + 4 + 2 * i)) & 3; }

static uint64_t vs_merge(uint64_t a, uint64_t b)
{
    if (!(a & VS_REACH))
        return b;
    if (!(b & VS_REACH))
        return a;
    /* registers whose 2-bit types differ become none */
    uint64_t d = (a ^ b) & VS_REGS;
    uint64_t m = (d | (d >> 1)) & 0x5555555555555555ull;
    m |= m << 1;
    uint64_t out = VS_REACH | (a & VS_REGS & ~m) | (a & b & VS_ACTED) | ((a | b) & VS_ANY);
    out |= (a & VS_TUPLE) == (b & VS_TUPLE) ? (a & VS_TUPLE) : VS_TBAD;
    return out;
}

/* What an op's immediate is */
enum { IK_ZERO, IK_ANY, IK_CONST, IK_TARGET, IK_LDG, IK_STRG, IK_BUILTIN, IK_STRTAB, IK_GVAR,
       IK_TVAR, IK_LVAR, IK_AVAR, IK_ACT, IK_STACK, IK_AGG, IK_EXT, IK_TRACER, IK_USTACK,
       IK_STACKKEY, IK_SVAR, IK_BOUND };
/* Which registers an op uses (rd written, ra and rb read) and its immediate */
struct dif_opdesc { uint8_t rd, ra, rb, imm; };
#define OP3(i)   { 1, 1, 1, i }
#define OP2(i)   { 1, 1, 0, i }
static const struct dif_opdesc dif_ops[HVT_DIF_OP__COUNT] = {
    [HVT_DIF_OP_NOP] = { 0, 0, 0, IK_ZERO },    [HVT_DIF_OP_RET] = { 0, 0, 0, IK_ZERO },
    [HVT_DIF_OP_LDI] = { 1, 0, 0, IK_ANY },     [HVT_DIF_OP_LDC] = { 1, 0, 0, IK_CONST },
    [HVT_DIF_OP_MOV] = OP2(IK_ZERO),
    [HVT_DIF_OP_ADD] = OP3(IK_ZERO), [HVT_DIF_OP_SUB] = OP3(IK_ZERO), [HVT_DIF_OP_MUL] = OP3(IK_ZERO),
    [HVT_DIF_OP_UDIV] = OP3(IK_ZERO), [HVT_DIF_OP_SDIV] = OP3(IK_ZERO),
    [HVT_DIF_OP_UREM] = OP3(IK_ZERO), [HVT_DIF_OP_SREM] = OP3(IK_ZERO),
    [HVT_DIF_OP_AND] = OP3(IK_ZERO), [HVT_DIF_OP_OR] = OP3(IK_ZERO), [HVT_DIF_OP_XOR] = OP3(IK_ZERO),
    [HVT_DIF_OP_SHL] = OP3(IK_ZERO), [HVT_DIF_OP_SHR] = OP3(IK_ZERO), [HVT_DIF_OP_SAR] = OP3(IK_ZERO),
    [HVT_DIF_OP_ADDI] = OP2(IK_ANY),
    [HVT_DIF_OP_NEG] = OP2(IK_ZERO), [HVT_DIF_OP_NOT] = OP2(IK_ZERO), [HVT_DIF_OP_LNOT] = OP2(IK_ZERO),
    [HVT_DIF_OP_SEXT] = OP2(IK_EXT), [HVT_DIF_OP_ZEXT] = OP2(IK_EXT),
    [HVT_DIF_OP_EQ] = OP3(IK_ZERO), [HVT_DIF_OP_NE] = OP3(IK_ZERO), [HVT_DIF_OP_LT] = OP3(IK_ZERO),
    [HVT_DIF_OP_LE] = OP3(IK_ZERO), [HVT_DIF_OP_LTU] = OP3(IK_ZERO), [HVT_DIF_OP_LEU] = OP3(IK_ZERO),
    [HVT_DIF_OP_SCMP] = OP3(IK_ZERO),
    [HVT_DIF_OP_JMP] = { 0, 0, 0, IK_TARGET },
    [HVT_DIF_OP_BZ] = { 0, 1, 0, IK_TARGET },   [HVT_DIF_OP_BNZ] = { 0, 1, 0, IK_TARGET },
    [HVT_DIF_OP_LDG] = OP2(IK_LDG),             [HVT_DIF_OP_STRG] = OP2(IK_STRG),
    [HVT_DIF_OP_VAR] = { 1, 0, 0, IK_BUILTIN }, [HVT_DIF_OP_SCONST] = { 1, 0, 0, IK_STRTAB },
    [HVT_DIF_OP_STRLEN] = OP2(IK_ZERO), [HVT_DIF_OP_STRJOIN] = OP3(IK_ZERO),
    [HVT_DIF_OP_BASENAME] = OP2(IK_ZERO),
    [HVT_DIF_OP_LDGV] = { 1, 0, 0, IK_GVAR },   [HVT_DIF_OP_STGV] = { 0, 1, 0, IK_GVAR },
    [HVT_DIF_OP_LDTV] = { 1, 0, 0, IK_TVAR },   [HVT_DIF_OP_STTV] = { 0, 1, 0, IK_TVAR },
    [HVT_DIF_OP_LDLV] = { 1, 0, 0, IK_LVAR },   [HVT_DIF_OP_STLV] = { 0, 1, 0, IK_LVAR },
    [HVT_DIF_OP_TPUSH] = { 0, 1, 0, IK_ZERO },  [HVT_DIF_OP_TCLR] = { 0, 0, 0, IK_ZERO },
    [HVT_DIF_OP_LDAV] = { 1, 0, 0, IK_AVAR },   [HVT_DIF_OP_STAV] = { 0, 1, 0, IK_AVAR },
    [HVT_DIF_OP_ACT] = { 0, 0, 0, IK_ACT },     [HVT_DIF_OP_EMIT] = { 0, 1, 0, IK_ZERO },
    [HVT_DIF_OP_STACK] = { 0, 0, 0, IK_STACK }, [HVT_DIF_OP_AGG] = { 0, 1, 0, IK_AGG },
    [HVT_DIF_OP_AGGCLR] = { 0, 0, 0, IK_AGG },  [HVT_DIF_OP_EXIT] = { 0, 1, 0, IK_ZERO },
    [HVT_DIF_OP_TRACER] = { 0, 0, 0, IK_TRACER },
    [HVT_DIF_OP_SPECNEW] = { 1, 0, 0, IK_ZERO }, [HVT_DIF_OP_SPECULATE] = { 0, 1, 0, IK_ZERO },
    [HVT_DIF_OP_COMMIT] = { 0, 1, 0, IK_ZERO },  [HVT_DIF_OP_DISCARD] = { 0, 1, 0, IK_ZERO },
    [HVT_DIF_OP_USTACK] = { 0, 0, 0, IK_USTACK },
    [HVT_DIF_OP_AGGW] = { 0, 1, 1, IK_AGG },
    [HVT_DIF_OP_TKSTACK] = { 0, 0, 0, IK_STACKKEY }, [HVT_DIF_OP_TUSTACK] = { 0, 0, 0, IK_STACKKEY },
    [HVT_DIF_OP_STRGR] = OP3(IK_STRG),
    [HVT_DIF_OP_LDSA] = { 1, 1, 0, IK_SVAR },   [HVT_DIF_OP_STSA] = { 0, 1, 1, IK_SVAR },
    [HVT_DIF_OP_CHKIDX] = { 0, 1, 0, IK_BOUND },
};

/* The image's sections, once the header is checked */
struct dif_vimg {
    const struct hvt_dif_hdr *h;
    const struct hvt_dif_clause *clauses;
    const struct hvt_dif_insn *insns;
    const struct hvt_dif_var *vars;
    const struct hvt_dif_agg *aggs;
    const struct hvt_dif_probe *probes;
    const uint16_t *probe_clauses;
    const char *strtab;
};

static int dif_vfail(struct dif_verr *err, int clause, int insn, int item, const char *why)
{
    err->clause = clause;
    err->insn = insn;
    err->item = item;
    err->reason = why;
    return DIF_EINVAL;
}

static bool dif_builtin_is_str(int32_t id)
{
    return id == HVT_DIF_V_EXECNAME || id == HVT_DIF_V_PROBEPROV || id == HVT_DIF_V_PROBEMOD ||
           id == HVT_DIF_V_PROBEFUNC || id == HVT_DIF_V_PROBENAME;
}

/* The immediate of one insn, against its kind; NULL when fine. */
static const char *dif_check_imm(const struct dif_vimg *v, const struct hvt_dif_insn *in,
                                 uint32_t pc, uint32_t n)
{
    const struct hvt_dif_hdr *h = v->h;
    int32_t imm = in->imm;
    uint8_t kind = 0;
    switch (dif_ops[in->op].imm) {
    case IK_ZERO:
        return imm ? "unused immediate not zero" : NULL;
    case IK_ANY:
        return NULL;
    case IK_CONST:
        return imm < 0 || (uint32_t)imm >= h->nconsts ? "constant index out of range" : NULL;
    case IK_TARGET:
        if (imm <= (int32_t)pc)
            return "branch not forward";
        return (uint32_t)imm >= n ? "branch outside the clause" : NULL;
    case IK_LDG: {
        unsigned size = (unsigned)imm & HVT_DIF_LD_SIZE_MASK;
        if ((uint32_t)imm & ~(uint32_t)(HVT_DIF_LD_SIZE_MASK | HVT_DIF_LD_SIGNED | HVT_DIF_LD_USER))
            return "unknown LDG flags";
        return size == 1 || size == 2 || size == 4 || size == 8 ? NULL : "bad LDG size";
    }
    case IK_STRG:
        return imm & ~HVT_DIF_LD_USER ? "unknown STRG flags" : NULL;
    case IK_BUILTIN:
        if (imm < 0 || imm >= HVT_DIF_V__COUNT)
            return "unknown built-in variable";
        /* the hypervisor has no value for these: the host reads ppid and uid through curthread,
         * arg6..9 from the stack, and refuses vtimestamp and stackdepth; a program that asks
         * would read a made-up 0 */
        if (imm == HVT_DIF_V_PPID || imm == HVT_DIF_V_UID || imm == HVT_DIF_V_VTIMESTAMP ||
            imm == HVT_DIF_V_STACKDEPTH || (imm >= HVT_DIF_V_ARG0 + 6 && imm <= HVT_DIF_V_ARG0 + 9))
            return "built-in variable the hypervisor does not give";
        return NULL;
    case IK_STRTAB:
        return imm < 0 || (uint32_t)imm >= h->strtab_len ? "string constant outside strtab" : NULL;
    case IK_GVAR: kind = HVT_DIF_VK_GLOBAL; break;
    case IK_TVAR: kind = HVT_DIF_VK_THREAD; break;
    case IK_LVAR: kind = HVT_DIF_VK_LOCAL; break;
    case IK_AVAR: kind = HVT_DIF_VK_ASSOC; break;
    case IK_ACT:
        return imm < 0 || imm > 0xffff ? "action index out of range" : NULL;
    case IK_STACK:
        return imm < 1 || imm > (int32_t)HVT_PROBE_STACK_MAX ? "bad stack size" : NULL;
    case IK_USTACK:
        return imm < 1 || imm > (int32_t)HVT_DIF_USTACK_MAX ? "bad user stack depth" : NULL;
    case IK_STACKKEY:
        if (imm < 1 || imm > (int32_t)HVT_DIF_STACKKEY_MAX)
            return "bad stack key depth";
        return in->op == HVT_DIF_OP_TKSTACK && !h->off_korc ?
               "kernel stack key without the kernel's ORC tables" : NULL;
    case IK_AGG:
        return imm < 0 || (uint32_t)imm >= h->naggs ? "aggregation index out of range" : NULL;
    case IK_EXT:
        return imm == 1 || imm == 2 || imm == 4 ? NULL : "bad extension width";
    case IK_TRACER:
        return imm == HVT_DIF_TRACER_STEP || imm == HVT_DIF_TRACER_UNSTEP ||
               imm == HVT_DIF_TRACER_STOP ? NULL : "bad tracer request";
    case IK_BOUND:
        return imm < 1 ? "bad index bound" : NULL;
    case IK_SVAR:
        if (imm < 0 || (uint32_t)imm >= h->nvars)
            return "variable index out of range";
        if (v->vars[imm].kind != HVT_DIF_VK_GLOBAL && v->vars[imm].kind != HVT_DIF_VK_LOCAL)
            return "variable of another kind";
        return v->vars[imm].nelem ? NULL : "element of a variable that is no scalar array";
    }
    if (imm < 0 || (uint32_t)imm >= h->nvars)
        return "variable index out of range";
    if (v->vars[imm].kind != kind)
        return "variable of another kind";
    return (kind == HVT_DIF_VK_GLOBAL || kind == HVT_DIF_VK_LOCAL) && v->vars[imm].nelem ?
           "a scalar array read or written whole" : NULL;
}

/* Op, registers, unused fields, immediate of one insn; NULL when fine. */
static const char *dif_check_insn(const struct dif_vimg *v, const struct hvt_dif_insn *in,
                                  uint32_t pc, uint32_t n)
{
    if (in->op >= HVT_DIF_OP__COUNT)
        return "unknown opcode";
    const struct dif_opdesc *d = &dif_ops[in->op];
    bool ra_used = d->ra;
    /* count() takes no value: its ra is unused */
    if (in->op == HVT_DIF_OP_AGG && in->imm >= 0 && (uint32_t)in->imm < v->h->naggs &&
        v->aggs[in->imm].fn == HVT_DIF_AGG_COUNT)
        ra_used = false;
    if ((d->rd && in->rd >= HVT_DIF_NREGS) || (ra_used && in->ra >= HVT_DIF_NREGS) ||
        (d->rb && in->rb >= HVT_DIF_NREGS))
        return "register out of range";
    if ((!d->rd && in->rd) || (!ra_used && in->ra) || (!d->rb && in->rb))
        return "unused register field not zero";
    return dif_check_imm(v, in, pc, n);
}

#define NEED(r, t) do {                                                            \
        unsigned t_ = vs_reg(s, (r));                                              \
        if (!t_)                                                                   \
            return "register read before it is set";                               \
        if ((t) && t_ != (t))                                                      \
            return (t) == HVT_DIF_T_INT ? "integer operand expected"               \
                                        : "string operand expected";               \
    } while (0)

static const char *dif_tuple_match(uint64_t s, unsigned nkeys, const uint8_t *types)
{
    if (s & VS_TBAD)
        return "tuple differs between paths";
    if (vs_tn(s) != nkeys)
        return "tuple does not match the keys";
    for (unsigned i = 0; i < nkeys; i++)
        if (vs_tt(s, i) != types[i])
            return "tuple does not match the keys";
    return NULL;
}

/* DTrace's order of speculations in a clause: SPECULATE before any recording, at most once, not
 * after a COMMIT; COMMIT before any recording (it appends to the principal buffer), at most
 * once, not in a speculated clause; nothing whose effect cannot wait for a commit after a
 * SPECULATE (aggregating, clear, exit, the tracer, stop), no aggregating after a COMMIT. */
static const char *dif_check_spec_order(const struct hvt_dif_insn *in, uint64_t s)
{
    switch (in->op) {
    case HVT_DIF_OP_SPECULATE:
        if (s & VS_ACT_ANY)
            return "SPECULATE after an ACT";
        if (s & (VS_SPEC_ANY | VS_COMM_ANY))
            return "SPECULATE after a SPECULATE or COMMIT";
        return NULL;
    case HVT_DIF_OP_COMMIT:
        if (s & VS_ACT_ANY)
            return "COMMIT after an ACT";
        if (s & (VS_SPEC_ANY | VS_COMM_ANY))
            return "COMMIT after a SPECULATE or COMMIT";
        return NULL;
    case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW:
        if (s & VS_COMM_ANY)
            return "aggregating after a COMMIT";
        __attribute__((fallthrough));
    case HVT_DIF_OP_AGGCLR: case HVT_DIF_OP_EXIT: case HVT_DIF_OP_TRACER:
        return s & VS_SPEC_ANY ? "its effect cannot follow a SPECULATE" : NULL;
    }
    return NULL;
}

/* The types an insn reads, and the state after it (*sp); NULL when fine. */
static const char *dif_check_types(const struct dif_vimg *v, const struct hvt_dif_insn *in,
                                   uint64_t *sp)
{
    uint64_t s = *sp;
    const char *why_order = dif_check_spec_order(in, s);
    if (why_order)
        return why_order;
    const struct hvt_dif_var *var = NULL;
    const char *why;
    unsigned out = 0;                /* type written to rd (ops that write one) */
    switch (in->op) {
    case HVT_DIF_OP_NOP: case HVT_DIF_OP_RET: case HVT_DIF_OP_JMP:
        break;
    case HVT_DIF_OP_LDI: case HVT_DIF_OP_LDC:
        out = HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_MOV:
        NEED(in->ra, 0);
        out = vs_reg(s, in->ra);
        break;
    case HVT_DIF_OP_ADD: case HVT_DIF_OP_SUB: case HVT_DIF_OP_MUL: case HVT_DIF_OP_UDIV:
    case HVT_DIF_OP_SDIV: case HVT_DIF_OP_UREM: case HVT_DIF_OP_SREM: case HVT_DIF_OP_AND:
    case HVT_DIF_OP_OR: case HVT_DIF_OP_XOR: case HVT_DIF_OP_SHL: case HVT_DIF_OP_SHR:
    case HVT_DIF_OP_SAR: case HVT_DIF_OP_EQ: case HVT_DIF_OP_NE: case HVT_DIF_OP_LT:
    case HVT_DIF_OP_LE: case HVT_DIF_OP_LTU: case HVT_DIF_OP_LEU:
        NEED(in->ra, HVT_DIF_T_INT);
        NEED(in->rb, HVT_DIF_T_INT);
        out = HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_ADDI: case HVT_DIF_OP_NEG: case HVT_DIF_OP_NOT: case HVT_DIF_OP_LNOT:
    case HVT_DIF_OP_SEXT: case HVT_DIF_OP_ZEXT: case HVT_DIF_OP_LDG:
        NEED(in->ra, HVT_DIF_T_INT);
        out = HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_SCMP:
        NEED(in->ra, HVT_DIF_T_STR);
        NEED(in->rb, HVT_DIF_T_STR);
        out = HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_BZ: case HVT_DIF_OP_BNZ:
        NEED(in->ra, HVT_DIF_T_INT);
        break;
    case HVT_DIF_OP_STRG:
        NEED(in->ra, HVT_DIF_T_INT);
        out = HVT_DIF_T_STR;
        break;
    case HVT_DIF_OP_STRGR:
        NEED(in->ra, HVT_DIF_T_INT);
        NEED(in->rb, HVT_DIF_T_INT);
        out = HVT_DIF_T_STR;
        break;
    case HVT_DIF_OP_VAR:
        out = dif_builtin_is_str(in->imm) ? HVT_DIF_T_STR : HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_SCONST:
        out = HVT_DIF_T_STR;
        break;
    case HVT_DIF_OP_STRLEN:
        NEED(in->ra, HVT_DIF_T_STR);
        out = HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_STRJOIN:
        NEED(in->ra, HVT_DIF_T_STR);
        NEED(in->rb, HVT_DIF_T_STR);
        out = HVT_DIF_T_STR;
        break;
    case HVT_DIF_OP_BASENAME:
        NEED(in->ra, HVT_DIF_T_STR);
        out = HVT_DIF_T_STR;
        break;
    case HVT_DIF_OP_LDGV: case HVT_DIF_OP_LDTV: case HVT_DIF_OP_LDLV:
        out = v->vars[in->imm].type;
        break;
    case HVT_DIF_OP_LDAV:
        var = &v->vars[in->imm];
        if ((why = dif_tuple_match(s, var->nkeys, var->key_types)))
            return why;
        out = var->type;
        break;
    case HVT_DIF_OP_STAV:
        var = &v->vars[in->imm];
        if ((why = dif_tuple_match(s, var->nkeys, var->key_types)))
            return why;
        __attribute__((fallthrough));    /* and the value's type */
    case HVT_DIF_OP_STGV: case HVT_DIF_OP_STTV: case HVT_DIF_OP_STLV:
        NEED(in->ra, 0);
        if (vs_reg(s, in->ra) != v->vars[in->imm].type)
            return "value type does not match the variable";
        break;
    case HVT_DIF_OP_LDSA:
        NEED(in->ra, HVT_DIF_T_INT);
        out = v->vars[in->imm].type;
        break;
    case HVT_DIF_OP_STSA:
        NEED(in->ra, HVT_DIF_T_INT);
        NEED(in->rb, 0);
        if (vs_reg(s, in->rb) != v->vars[in->imm].type)
            return "value type does not match the variable";
        break;
    case HVT_DIF_OP_CHKIDX:
        NEED(in->ra, HVT_DIF_T_INT);
        break;
    case HVT_DIF_OP_TPUSH: {
        NEED(in->ra, 0);
        if (s & VS_TBAD)
            break;                   /* stays unusable until a TCLR */
        unsigned n = vs_tn(s);
        if (n >= HVT_DIF_TUPLE_MAX)
            return "tuple longer than HVT_DIF_TUPLE_MAX";
        s += 1ull << VS_TSHIFT;
        s |= (uint64_t)vs_reg(s, in->ra) << (VS_TSHIFT + 4 + 2 * n);
        break;
    }
    case HVT_DIF_OP_TKSTACK: case HVT_DIF_OP_TUSTACK: {
        if (s & VS_TBAD)
            break;
        unsigned n = vs_tn(s);
        if (n >= HVT_DIF_TUPLE_MAX)
            return "tuple longer than HVT_DIF_TUPLE_MAX";
        s += 1ull << VS_TSHIFT;
        s |= (uint64_t)HVT_DIF_T_STACK << (VS_TSHIFT + 4 + 2 * n);
        break;
    }
    case HVT_DIF_OP_TCLR:
        s &= ~VS_TUPLE;
        break;
    case HVT_DIF_OP_ACT:
        s |= VS_ACTED | VS_ACT_ANY;
        break;
    case HVT_DIF_OP_SPECNEW:
        out = HVT_DIF_T_INT;
        break;
    case HVT_DIF_OP_SPECULATE:
        NEED(in->ra, HVT_DIF_T_INT);
        s |= VS_SPEC_ANY;
        break;
    case HVT_DIF_OP_COMMIT:
        NEED(in->ra, HVT_DIF_T_INT);
        s |= VS_COMM_ANY;
        break;
    case HVT_DIF_OP_DISCARD:
        NEED(in->ra, HVT_DIF_T_INT);
        break;
    case HVT_DIF_OP_EMIT:
        NEED(in->ra, 0);
        __attribute__((fallthrough));    /* recording needs an action */
    case HVT_DIF_OP_STACK:
    case HVT_DIF_OP_USTACK:
        if (!(s & VS_ACTED))
            return "value recorded before an ACT";
        break;
    case HVT_DIF_OP_EXIT:
        NEED(in->ra, HVT_DIF_T_INT);
        if (!(s & VS_ACTED))
            return "value recorded before an ACT";
        break;
    case HVT_DIF_OP_AGG: {
        const struct hvt_dif_agg *a = &v->aggs[in->imm];
        if ((why = dif_tuple_match(s, a->nkeys, a->key_types)))
            return why;
        if (a->fn != HVT_DIF_AGG_COUNT)
            NEED(in->ra, HVT_DIF_T_INT);
        break;
    }
    case HVT_DIF_OP_AGGW: {                /* a weight: the quantizations only, as DTrace */
        const struct hvt_dif_agg *a = &v->aggs[in->imm];
        if (a->fn != HVT_DIF_AGG_QUANTIZE && a->fn != HVT_DIF_AGG_LQUANTIZE &&
            a->fn != HVT_DIF_AGG_LLQUANTIZE)
            return "a weight on an aggregation that is not a quantization";
        if ((why = dif_tuple_match(s, a->nkeys, a->key_types)))
            return why;
        NEED(in->ra, HVT_DIF_T_INT);
        NEED(in->rb, HVT_DIF_T_INT);
        break;
    }
    case HVT_DIF_OP_AGGCLR:
        /* one instruction would walk every CPU's aggregation space; the compiler never emits
         * it (clear() is the host's) */
        return "AGGCLR is not accepted";
    case HVT_DIF_OP_TRACER:
        break;
    default:
        return "unknown opcode";
    }
    if (dif_ops[in->op].rd)
        s = vs_set(s, in->rd, out);
    *sp = s;
    return NULL;
}

/* One clause's code: structure of every insn, types along every path. */
static int dif_check_clause(const struct dif_vimg *v, uint32_t ci, struct dif_verr *err)
{
    const struct hvt_dif_clause *cl = &v->clauses[ci];
    const struct hvt_dif_insn *code = v->insns + cl->first;
    uint32_t n = cl->count;
    if (code[n - 1].op != HVT_DIF_OP_RET)
        return dif_vfail(err, (int)ci, (int)n - 1, -1, "clause does not end with RET");
    for (uint32_t i = 0; i < n; i++)
        dif_vstate[i] = 0;
    dif_vstate[0] = VS_REACH;        /* registers none, tuple empty, no ACT yet */
    for (uint32_t pc = 0; pc < n; pc++) {
        const struct hvt_dif_insn *in = &code[pc];
        const char *why = dif_check_insn(v, in, pc, n);
        uint64_t s = dif_vstate[pc];
        if (!why && (s & VS_REACH))
            why = dif_check_types(v, in, &s);
        if (why)
            return dif_vfail(err, (int)ci, (int)pc, -1, why);
        switch (in->op) {
        case HVT_DIF_OP_JMP:
            dif_vstate[in->imm] = vs_merge(dif_vstate[in->imm], s);
            break;
        case HVT_DIF_OP_BZ: case HVT_DIF_OP_BNZ:
            dif_vstate[in->imm] = vs_merge(dif_vstate[in->imm], s);
            __attribute__((fallthrough));    /* and the fall-through edge */
        default:
            if (in->op != HVT_DIF_OP_RET && pc + 1 < n)
                dif_vstate[pc + 1] = vs_merge(dif_vstate[pc + 1], s);
        }
    }
    return DIF_OK;
}

/* nkeys keys of known types (at most max), the unused type slots zero */
/* stacks: keys of aggregations only (a stack in an associative array's key has no use that an
 * aggregation does not serve better, and DTrace refuses it too) */
static const char *dif_check_keys(uint8_t nkeys, const uint8_t *types, unsigned max, bool stacks)
{
    if (nkeys > max)
        return max ? "bad key count" : "keys on a variable that has none";
    for (unsigned i = 0; i < HVT_DIF_TUPLE_MAX; i++) {
        if (i < nkeys && types[i] != HVT_DIF_T_INT && types[i] != HVT_DIF_T_STR &&
            !(stacks && types[i] == HVT_DIF_T_STACK))
            return "bad key type";
        if (i >= nkeys && types[i])
            return "unused key type not zero";
    }
    return NULL;
}

static int dif_check_vars(const struct dif_vimg *v, struct dif_verr *err)
{
    const struct hvt_dif_hdr *h = v->h;
    uint64_t globals = 0, locals = 0;    /* scalar arrays' bytes */
    for (uint32_t i = 0; i < h->nvars; i++) {
        const struct hvt_dif_var *var = &v->vars[i];
        const char *why = NULL;
        if (var->kind < HVT_DIF_VK_GLOBAL || var->kind > HVT_DIF_VK_ASSOC)
            why = "bad variable kind";
        else if (var->type != HVT_DIF_T_INT && var->type != HVT_DIF_T_STR)
            why = "bad variable type";
        else if (var->pad)
            why = "variable padding not zero";
        else if (var->kind == HVT_DIF_VK_ASSOC && var->nkeys == 0)
            why = "bad key count";
        else if ((var->kind == HVT_DIF_VK_GLOBAL || var->kind == HVT_DIF_VK_LOCAL) && var->nelem) {
            /* a scalar array: its count where the keys would be, nothing else there */
            uint32_t rest;
            memcpy(&rest, var->key_types + 4, 4);
            if (var->nkeys || rest)
                why = "keys on a variable that has none";
            else if (var->nelem > HVT_DIF_ARRAY_MAX)
                why = "scalar array larger than HVT_DIF_ARRAY_MAX";
            else if (var->name >= h->strtab_len)
                why = "name outside strtab";
            uint64_t bytes = dif_var_bytes(var, h->strsize);
            if (var->kind == HVT_DIF_VK_GLOBAL)
                globals += bytes;
            else
                locals += bytes;
            if (!why && (globals > DIF_OPT_MAX || locals > DIF_LOCALS_MAX))
                why = var->kind == HVT_DIF_VK_GLOBAL ? "globals larger than DIF_OPT_MAX"
                                                     : "clause-locals larger than DIF_LOCALS_MAX";
        } else if (!(why = dif_check_keys(var->nkeys, var->key_types,
                                        var->kind == HVT_DIF_VK_ASSOC ? HVT_DIF_TUPLE_MAX : 0,
                                        false)) &&
                 var->name >= h->strtab_len)
            why = "name outside strtab";
        if (why)
            return dif_vfail(err, -1, -1, (int)i, why);
    }
    /* DTrace refuses a dynvarsize that holds no dynamic variable ("Enabling exceeds size of
     * buffer"): every store would be a drop */
    uint32_t chunk = dif_dyn_chunk_size(h, v->vars);
    if (chunk && (h->dynvarsize ? h->dynvarsize : DIF_DEF_DYNVARSIZE) < chunk - DIF_DYN_HDR)
        return dif_vfail(err, -1, -1, -1, "dynvarsize holds no dynamic variable");
    return DIF_OK;
}

static int dif_check_aggs(const struct dif_vimg *v, struct dif_verr *err)
{
    const struct hvt_dif_hdr *h = v->h;
    for (uint32_t i = 0; i < h->naggs; i++) {
        const struct hvt_dif_agg *a = &v->aggs[i];
        const char *why = dif_check_keys(a->nkeys, a->key_types, HVT_DIF_TUPLE_MAX, true);
        for (unsigned k = 0; !why && k < sizeof(a->pad); k++)
            if (a->pad[k])
                why = "aggregation padding not zero";
        if (!why && a->name >= h->strtab_len)
            why = "name outside strtab";
        if (!why) {
            uint32_t nb = dif_agg_nbuckets(a, &why);
            if (nb && nb != a->nbuckets)
                why = "nbuckets differs from the function's";
        }
        if (why)
            return dif_vfail(err, -1, -1, (int)i, why);
    }
    return DIF_OK;
}

static int dif_check_probes(const struct dif_vimg *v, struct dif_verr *err)
{
    const struct hvt_dif_hdr *h = v->h;
    for (uint32_t i = 0; i < h->nprobe_clauses; i++)
        if (v->probe_clauses[i] >= h->nclauses)
            return dif_vfail(err, -1, -1, (int)i, "probe clause index out of range");
    /* A firing runs its probe's list and the state's epid layout walks every probe's range:
     * lists strictly increasing and ranges disjoint and in order bound the first by nclauses
     * and the second by nprobe_clauses (the compiler lays the lists out this way). */
    uint64_t range_end = 0;
    for (uint32_t i = 0; i < h->nprobes; i++) {
        const struct hvt_dif_probe *p = &v->probes[i];
        const char *why = NULL;
        if (i && p->id <= v->probes[i - 1].id)
            why = "probes not sorted by id";
        else if ((uint64_t)p->clauses + p->nclauses > h->nprobe_clauses)
            why = "probe clauses outside probe_clauses[]";
        else if (p->nclauses && p->clauses < range_end)
            why = "probe clause lists overlap";
        else if (p->prov >= h->strtab_len || p->mod >= h->strtab_len ||
                 p->func >= h->strtab_len || p->name >= h->strtab_len)
            why = "probe name outside strtab";
        for (uint32_t j = 1; !why && j < p->nclauses; j++)
            if (v->probe_clauses[p->clauses + j] <= v->probe_clauses[p->clauses + j - 1])
                why = "probe clause list not strictly increasing";
        if (p->nclauses)
            range_end = (uint64_t)p->clauses + p->nclauses;
        if (why)
            return dif_vfail(err, -1, -1, (int)i, why);
    }
    return DIF_OK;
}

static int dif_check_clauses(const struct dif_vimg *v, struct dif_verr *err)
{
    const struct hvt_dif_hdr *h = v->h;
    uint64_t end = 0;                /* of the previous clause */
    for (uint32_t i = 0; i < h->nclauses; i++) {
        const struct hvt_dif_clause *c = &v->clauses[i];
        const char *why = NULL;
        if (c->count == 0)
            why = "empty clause";
        else if (c->count > HVT_DIF_MAX_INSNS)
            why = "clause longer than HVT_DIF_MAX_INSNS";
        else if ((uint64_t)c->first + c->count > h->ninsns)
            why = "clause outside insns[]";
        else if (c->first < end)     /* in order and disjoint: the work is linear */
            why = "clauses overlap or out of order";
        end = (uint64_t)c->first + c->count;
        if (why)
            return dif_vfail(err, (int)i, -1, -1, why);
    }
    dif_lock(&dif_vlock);
    int rc = DIF_OK;
    for (uint32_t i = 0; i < h->nclauses && rc == DIF_OK; i++)
        rc = dif_check_clause(v, i, err);
    dif_unlock(&dif_vlock);
    return rc;
}

/* Header and sections; fills *v. */
static int dif_check_layout(const void *image, size_t len, struct dif_vimg *v,
                            struct dif_verr *err)
{
    const struct hvt_dif_hdr *h = image;
    if (!image || ((uintptr_t)image & 7))
        return dif_vfail(err, -1, -1, -1, "image not 8-byte aligned");
    if (len < sizeof(*h))
        return dif_vfail(err, -1, -1, -1, "image shorter than its header");
    if (h->magic != HVT_DIF_MAGIC)
        return dif_vfail(err, -1, -1, -1, "bad magic");
    if (h->size != len)
        return dif_vfail(err, -1, -1, -1, "header size differs from the image's");
    if (len > HVT_DIF_MAX_IMAGE)
        return dif_vfail(err, -1, -1, -1, "image larger than HVT_DIF_MAX_IMAGE");
    if (h->strsize < 2 || h->strsize > HVT_DIF_STRSIZE_MAX)
        return dif_vfail(err, -1, -1, -1, "bad strsize");
    if (h->flags & ~HVT_DIF_HF_DESTRUCTIVE)
        return dif_vfail(err, -1, -1, -1, "unknown header flags");
    if (h->bufsize > DIF_OPT_MAX || h->aggsize > DIF_OPT_MAX || h->dynvarsize > DIF_OPT_MAX)
        return dif_vfail(err, -1, -1, -1, "option too large");
    /* every CPU gets nspec buffers of specsize bytes: bound the product, not just each */
    if (h->nspec > HVT_DIF_NSPEC_MAX || h->specsize > DIF_OPT_MAX ||
        (uint64_t)h->nspec * (h->specsize ? h->specsize : DIF_DEF_SPECSIZE) > DIF_OPT_MAX)
        return dif_vfail(err, -1, -1, -1, "nspec or specsize too large");
    /* the record fields hold a clause index in 16 bits, a var or agg index too */
    if (h->nclauses > 0x10000 || h->nvars > 0xffff || h->naggs > 0xffff)
        return dif_vfail(err, -1, -1, -1, "too many clauses, variables or aggregations");
    const struct { uint32_t off, n, esz; } sec[] = {
        { h->off_clauses, h->nclauses, sizeof(struct hvt_dif_clause) },
        { h->off_insns, h->ninsns, sizeof(struct hvt_dif_insn) },
        { h->off_consts, h->nconsts, sizeof(uint64_t) },
        { h->off_vars, h->nvars, sizeof(struct hvt_dif_var) },
        { h->off_aggs, h->naggs, sizeof(struct hvt_dif_agg) },
        { h->off_probes, h->nprobes, sizeof(struct hvt_dif_probe) },
        { h->off_probe_clauses, h->nprobe_clauses, sizeof(uint16_t) },
        { h->off_strtab, h->strtab_len, 1 },
        { h->off_korc, h->off_korc ? 1 : 0, sizeof(struct hvt_dif_korc) },
    };
    const unsigned nsec = sizeof(sec) / sizeof(sec[0]);
    for (unsigned i = 0; i < nsec; i++) {
        uint64_t end = (uint64_t)sec[i].off + (uint64_t)sec[i].n * sec[i].esz;
        if (sec[i].off & 7)
            return dif_vfail(err, -1, -1, (int)i, "section not 8-byte aligned");
        if (!sec[i].n)
            continue;
        if (sec[i].off < sizeof(*h))
            return dif_vfail(err, -1, -1, (int)i, "section overlaps the header");
        if (end > len)
            return dif_vfail(err, -1, -1, (int)i, "section outside the image");
        for (unsigned j = 0; j < i; j++) {
            uint64_t jend = (uint64_t)sec[j].off + (uint64_t)sec[j].n * sec[j].esz;
            if (sec[j].n && sec[i].off < jend && sec[j].off < end)
                return dif_vfail(err, -1, -1, (int)i, "sections overlap");
        }
    }
    const uint8_t *base = image;
    v->h = h;
    v->clauses = (const void *)(base + h->off_clauses);
    v->insns = (const void *)(base + h->off_insns);
    v->vars = (const void *)(base + h->off_vars);
    v->aggs = (const void *)(base + h->off_aggs);
    v->probes = (const void *)(base + h->off_probes);
    v->probe_clauses = (const void *)(base + h->off_probe_clauses);
    v->strtab = (const char *)base + h->off_strtab;
    if (h->strtab_len == 0 || v->strtab[h->strtab_len - 1] != 0)
        return dif_vfail(err, -1, -1, 7, "strtab empty or not NUL-terminated");
    if (h->off_korc) {
        struct kunwind_tables t;
        dif_korc_tables((const void *)(base + h->off_korc), 0, &t);
        const char *why = kunwind_tables_check(&t);
        if (why)
            return dif_vfail(err, -1, -1, 8, why);
    }
    return DIF_OK;
}

int dif_verify(const void *image, size_t len, struct dif_verr *err)
{
    struct dif_verr dummy;
    struct dif_vimg v;
    if (!err)
        err = &dummy;
    err->clause = err->insn = err->item = -1;
    err->reason = NULL;
    int rc = dif_check_layout(image, len, &v, err);
    if (rc == DIF_OK)
        rc = dif_check_vars(&v, err);
    if (rc == DIF_OK)
        rc = dif_check_aggs(&v, err);
    if (rc == DIF_OK)
        rc = dif_check_probes(&v, err);
    if (rc == DIF_OK)
        rc = dif_check_clauses(&v, err);
    return rc;
}
