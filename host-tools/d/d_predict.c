/* d_predict: see d_predict.h. */
#include "d_predict.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "hvt_dif.h"
#include "util.h"

static const struct {
    const char *name;
    unsigned phase;               /* enum hvt_probe_phase the class's time is in */
    enum d_cal_key fallback;      /* priced as this one when the table lacks it */
    bool optional;                /* the table lacks it: priced 0 (said) */
} cal_keys[D_CAL_KEYS] = {
    [D_CAL_EXIT]           = { "exit",           HVT_PH_EXIT,     D_CAL_EXIT },
    [D_CAL_LOOKUP]         = { "lookup",         HVT_PH_LOOKUP,   D_CAL_LOOKUP },
    [D_CAL_DFIRE]          = { "dfire",          HVT_PH_CLAUSES,  D_CAL_DFIRE },
    [D_CAL_CLAUSE]         = { "clause",         HVT_PH_CLAUSES,  D_CAL_CLAUSE },
    /* the engine reads them before the action and times them with the walk */
    [D_CAL_SYSARGS]        = { "sysargs",        HVT_PH_CLAUSES,  D_CAL_SYSARGS },
    [D_CAL_OP_INSN]        = { "op_insn",        HVT_PH_INSNS,    D_CAL_OP_INSN },
    [D_CAL_OP_VAR]         = { "op_var",         HVT_PH_INSNS,    D_CAL_OP_INSN },
    [D_CAL_OP_TVAR]        = { "op_tvar",        HVT_PH_INSNS,    D_CAL_OP_ASSOC },
    [D_CAL_OP_ASSOC]       = { "op_assoc",       HVT_PH_INSNS,    D_CAL_OP_VAR },
    [D_CAL_OP_TPUSH]       = { "op_tpush",       HVT_PH_INSNS,    D_CAL_OP_INSN },
    [D_CAL_OP_LDG]         = { "op_ldg",         HVT_PH_INSNS,    D_CAL_OP_INSN },
    [D_CAL_OP_BUILTIN]     = { "op_builtin",     HVT_PH_BUILTINS, D_CAL_OP_INSN },
    [D_CAL_OP_BUILTIN_STR] = { "op_builtin_str", HVT_PH_BUILTINS, D_CAL_OP_BUILTIN },
    [D_CAL_OP_SUBR]        = { "op_subr",        HVT_PH_SUBR,     D_CAL_OP_INSN },
    [D_CAL_OP_STACK]       = { "op_stack",       HVT_PH_SUBR,     D_CAL_OP_SUBR },
    [D_CAL_AGG_COUNT]      = { "agg_count",      HVT_PH_AGG,      D_CAL_OP_INSN },
    [D_CAL_AGG_SUM]        = { "agg_sum",        HVT_PH_AGG,      D_CAL_AGG_COUNT },
    [D_CAL_AGG_MIN]        = { "agg_min",        HVT_PH_AGG,      D_CAL_AGG_COUNT },
    [D_CAL_AGG_MAX]        = { "agg_max",        HVT_PH_AGG,      D_CAL_AGG_COUNT },
    [D_CAL_AGG_AVG]        = { "agg_avg",        HVT_PH_AGG,      D_CAL_AGG_COUNT },
    [D_CAL_AGG_STDDEV]     = { "agg_stddev",     HVT_PH_AGG,      D_CAL_AGG_COUNT },
    [D_CAL_AGG_QUANTIZE]   = { "agg_quantize",   HVT_PH_AGG,      D_CAL_AGG_COUNT },
    [D_CAL_AGG_LQUANTIZE]  = { "agg_lquantize",  HVT_PH_AGG,      D_CAL_AGG_QUANTIZE },
    [D_CAL_AGG_LLQUANTIZE] = { "agg_llquantize", HVT_PH_AGG,      D_CAL_AGG_QUANTIZE },
    [D_CAL_ACT]            = { "act",            HVT_PH_RECORD,   D_CAL_OP_INSN },
    [D_CAL_EMIT]           = { "emit",           HVT_PH_RECORD,   D_CAL_OP_INSN },
    [D_CAL_REC_STACK]      = { "rec_stack",      HVT_PH_RECORD,   D_CAL_EMIT },
    /* the task found anew is the lookup's; a key looked up, the aggregation's */
    [D_CAL_NEWTASK]        = { "newtask",        HVT_PH_LOOKUP,   D_CAL_NEWTASK,   true },
    [D_CAL_KEYNEW]         = { "keynew",         HVT_PH_AGG,      D_CAL_KEYNEW,    true },
    [D_CAL_INTERP]         = { "interp",         HVT_PH_CLAUSES,  D_CAL_INTERP,    true },
};

const char *d_cal_name(enum d_cal_key k) { return k < D_CAL_KEYS ? cal_keys[k].name : "?"; }
enum d_cal_key d_cal_fallback(enum d_cal_key k) { return k < D_CAL_KEYS ? cal_keys[k].fallback : k; }

int d_cal_parse(const char *text, struct d_cal *cal, char *err, size_t errlen)
{
    memset(cal, 0, sizeof *cal);
    bool seen_khz = false;
    unsigned line = 0;
    for (const char *p = text; *p; ) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        char buf[256];
        line++;
        if (n >= sizeof buf) {
            snprintf(err, errlen, "line %u: too long", line);
            return -1;
        }
        memcpy(buf, p, n);
        buf[n] = 0;
        p += n + (e != NULL);
        char *s = buf;
        while (*s == ' ' || *s == '\t' || *s == '\r') s++;
        char *hash = strchr(s, '#');
        if (hash) *hash = 0;
        size_t l = strlen(s);
        while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r')) s[--l] = 0;
        if (!*s)
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "line %u: not key=value: %s", line, s);
            return -1;
        }
        *eq = 0;
        char *end;
        errno = 0;
        double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || errno || !isfinite(v) || v < 0) {
            snprintf(err, errlen, "line %u: %s: not a number >= 0: %s", line, s, eq + 1);
            return -1;
        }
        if (!strcmp(s, "tsc_khz")) {
            if (seen_khz) {
                snprintf(err, errlen, "line %u: tsc_khz given twice", line);
                return -1;
            }
            seen_khz = true;
            cal->tsc_khz = v;
            continue;
        }
        unsigned k = 0;
        while (k < D_CAL_KEYS && strcmp(cal_keys[k].name, s))
            k++;
        if (k == D_CAL_KEYS) {
            snprintf(err, errlen, "line %u: unknown key %s", line, s);
            return -1;
        }
        if (cal->have & 1u << k) {
            snprintf(err, errlen, "line %u: %s given twice", line, s);
            return -1;
        }
        cal->v[k] = v;
        cal->have |= 1u << k;
    }
    return 0;
}

int d_cal_load(const char *path, struct d_cal *cal, char *used, size_t usedlen, char *err, size_t errlen)
{
    char def[4096];
    if (!path || !*path)
        path = getenv("HVT_PROBECOST_CAL");
    if (!path || !*path) {
        const char *x = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
        if (x && *x)
            snprintf(def, sizeof def, "%s/hvtrace/probecost.cal", x);
        else
            snprintf(def, sizeof def, "%s/.config/hvtrace/probecost.cal", home ? home : "");
        path = def;
    }
    snprintf(used, usedlen, "%s", path);
    util_buf b = { 0 };
    FILE *f = fopen(path, "r");            /* said once, here, with what to do */
    if (!f) {
        snprintf(err, errlen, "%s: cannot read the calibration table: %s (make bench-probe writes one: "
                 "bench/results/probecost.cal)", path, strerror(errno));
        return -1;
    }
    fclose(f);
    if (util_read_file(path, &b) != 0) {
        snprintf(err, errlen, "%s: cannot read the calibration table", path);
        return -1;
    }
    char *text = malloc(b.len + 1);
    if (!text) {
        free(b.data);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memcpy(text, b.data, b.len);
    text[b.len] = 0;
    free(b.data);
    char why[200];
    int rc = d_cal_parse(text, cal, why, sizeof why);
    free(text);
    if (rc)
        snprintf(err, errlen, "%s: %s", path, why);
    return rc;
}

/* The class an instruction's cost is in. */
static enum d_cal_key op_class(const struct hvt_dif_insn *in, const struct hvt_dif_agg *aggs, uint32_t naggs)
{
    switch (in->op) {
    case HVT_DIF_OP_LDGV: case HVT_DIF_OP_STGV: case HVT_DIF_OP_LDLV: case HVT_DIF_OP_STLV:
    case HVT_DIF_OP_LDSA: case HVT_DIF_OP_STSA:
        return D_CAL_OP_VAR;
    case HVT_DIF_OP_LDTV: case HVT_DIF_OP_STTV:
        return D_CAL_OP_TVAR;
    case HVT_DIF_OP_LDAV: case HVT_DIF_OP_STAV:
        return D_CAL_OP_ASSOC;
    case HVT_DIF_OP_TPUSH:
        return D_CAL_OP_TPUSH;
    case HVT_DIF_OP_LDG:
        return D_CAL_OP_LDG;
    case HVT_DIF_OP_VAR:
        switch (in->imm) {
        case HVT_DIF_V_EXECNAME: case HVT_DIF_V_PROBEPROV: case HVT_DIF_V_PROBEMOD:
        case HVT_DIF_V_PROBEFUNC: case HVT_DIF_V_PROBENAME:
            return D_CAL_OP_BUILTIN_STR;
        default:
            return D_CAL_OP_BUILTIN;
        }
    case HVT_DIF_OP_STRG: case HVT_DIF_OP_STRGR: case HVT_DIF_OP_STRLEN: case HVT_DIF_OP_STRJOIN:
    case HVT_DIF_OP_BASENAME: case HVT_DIF_OP_SCMP: case HVT_DIF_OP_SPECNEW:
    case HVT_DIF_OP_SPECULATE: case HVT_DIF_OP_COMMIT: case HVT_DIF_OP_DISCARD:
    case HVT_DIF_OP_TRACER:
        return D_CAL_OP_SUBR;
    case HVT_DIF_OP_TKSTACK: case HVT_DIF_OP_TUSTACK:
        return D_CAL_OP_STACK;
    case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW: case HVT_DIF_OP_AGGCLR: {
        unsigned fn = (uint32_t)in->imm < naggs ? aggs[in->imm].fn : HVT_DIF_AGG_COUNT;
        if (in->op == HVT_DIF_OP_AGGCLR || fn < HVT_DIF_AGG_COUNT || fn > HVT_DIF_AGG_LLQUANTIZE)
            fn = HVT_DIF_AGG_COUNT;
        return (enum d_cal_key)(D_CAL_AGG_COUNT + (fn - HVT_DIF_AGG_COUNT));
    }
    case HVT_DIF_OP_ACT:
        return D_CAL_ACT;
    case HVT_DIF_OP_EMIT: case HVT_DIF_OP_EXIT:
        return D_CAL_EMIT;
    case HVT_DIF_OP_STACK: case HVT_DIF_OP_USTACK:
        return D_CAL_REC_STACK;
    default:
        return D_CAL_OP_INSN;
    }
}

static bool in_image(size_t len, uint32_t off, uint64_t n, size_t size)
{
    return off <= len && n * size <= len - off;
}

static const char *strtab_at(const uint8_t *image, size_t len, uint32_t off)
{
    const struct hvt_dif_hdr *h = (const struct hvt_dif_hdr *)image;
    if (!in_image(len, h->off_strtab, h->strtab_len, 1) || off >= h->strtab_len)
        return "?";
    const char *s = (const char *)image + h->off_strtab + off;
    return memchr(s, 0, h->strtab_len - off) ? s : "?";
}

/* Does any instruction read a firing's arguments (the variables arg0..arg9, which args[] reads
 * too, or errno)? The hypervisor has the engine compute them only then. */
static bool image_reads_args(const struct hvt_dif_insn *in, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        if (in[i].op == HVT_DIF_OP_VAR &&
            ((in[i].imm >= HVT_DIF_V_ARG0 && in[i].imm < HVT_DIF_V_ARG0 + 10) || in[i].imm == HVT_DIF_V_ERRNO))
            return true;
    return false;
}

/* Does the hypervisor's lean path take this clause? Its rule (dif_lean.c dif_lean_clause),
 * instruction by instruction: no-ops, constants, integer built-ins and execname, tuples of
 * them and of kernel stacks, aggregations of integers, RET last; within the tuple's limits.
 * (The hypervisor also sends a clause past the budget's first grant, 4096 units, to the
 * interpreter: no clause that short of the budget is that long.) */
static bool clause_lean(const struct hvt_dif_hdr *h, const struct hvt_dif_insn *code, uint32_t n,
                        const struct hvt_dif_agg *aggs)
{
    enum { K_NONE, K_INT, K_EXEC };
    uint8_t kind[HVT_DIF_NREGS] = { 0 };
    uint32_t tn = 0, tlen = 0;
    for (uint32_t pc = 0; pc < n; pc++) {
        const struct hvt_dif_insn *in = &code[pc];
        unsigned rd = in->rd & (HVT_DIF_NREGS - 1), ra = in->ra & (HVT_DIF_NREGS - 1);
        unsigned rb = in->rb & (HVT_DIF_NREGS - 1);
        switch (in->op) {
        case HVT_DIF_OP_NOP:
            break;
        case HVT_DIF_OP_LDI:
            kind[rd] = K_INT;
            break;
        case HVT_DIF_OP_VAR:
            if (in->imm == HVT_DIF_V_EXECNAME && h->strsize > 16)
                kind[rd] = K_EXEC;
            else if (hvt_dif_lean_int_var(in->imm))
                kind[rd] = K_INT;
            else
                return false;
            break;
        case HVT_DIF_OP_TCLR:
            tn = tlen = 0;
            break;
        case HVT_DIF_OP_TPUSH:
            if (!kind[ra])
                return false;
            tn++;
            tlen += kind[ra] == K_EXEC ? 24 : 8;
            break;
        case HVT_DIF_OP_TKSTACK:
            if (in->imm < 1 || in->imm > HVT_DIF_STACKKEY_MAX)
                return false;
            tn++;
            tlen += 8 + 8 * (uint32_t)in->imm;
            break;
        case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW: {
            if (in->imm < 0 || (uint32_t)in->imm >= h->naggs)
                return false;
            bool count = aggs[in->imm].fn == HVT_DIF_AGG_COUNT;
            if ((!count && kind[ra] != K_INT) || (in->op == HVT_DIF_OP_AGGW && kind[rb] != K_INT))
                return false;
            break;
        }
        case HVT_DIF_OP_RET:
            return pc == n - 1 && tn <= HVT_DIF_TUPLE_MAX && tlen <= HVT_DIF_KEY_MAX;
        default:
            return false;
        }
        if (tn > HVT_DIF_TUPLE_MAX || tlen > HVT_DIF_KEY_MAX)
            return false;
    }
    return false;
}

/* What a value is made of: bits of the probe's names, the task's ids, the firing's data. */
enum { DEP_PROBE = 1, DEP_TASK = 2, DEP_DATA = 4 };

static unsigned var_dep(int32_t id)
{
    switch (id) {
    case HVT_DIF_V_PROBEPROV: case HVT_DIF_V_PROBEMOD: case HVT_DIF_V_PROBEFUNC:
    case HVT_DIF_V_PROBENAME: case HVT_DIF_V_EPID: case HVT_DIF_V_ID:
        return DEP_PROBE;
    case HVT_DIF_V_PID: case HVT_DIF_V_TID: case HVT_DIF_V_PPID: case HVT_DIF_V_UID:
    case HVT_DIF_V_CURTHREAD: case HVT_DIF_V_EXECNAME:
        return DEP_TASK;
    case HVT_DIF_V_CPU:              /* aggregations are per CPU: the same on each */
        return 0;
    default:
        return DEP_DATA;
    }
}

/* Each aggregation update of a clause into keys[] by what its key is made of: the values
 * followed from built-ins and constants through the registers (a write after a branch adds
 * to what the register held: either path's value may reach the key, and which path is taken
 * was decided by what the branch tested). */
static void clause_keys(const struct hvt_dif_insn *code, uint32_t n, double keys[D_KEY_KINDS])
{
    unsigned dep[HVT_DIF_NREGS] = { 0 }, tuple = 0;
    bool branched = false;
    for (uint32_t pc = 0; pc < n; pc++) {
        const struct hvt_dif_insn *in = &code[pc];
        unsigned rd = in->rd & (HVT_DIF_NREGS - 1), ra = in->ra & (HVT_DIF_NREGS - 1);
        unsigned rb = in->rb & (HVT_DIF_NREGS - 1), v;
        switch (in->op) {
        case HVT_DIF_OP_LDI: case HVT_DIF_OP_LDC: case HVT_DIF_OP_SCONST:
            v = 0;
            break;
        case HVT_DIF_OP_VAR:
            v = var_dep(in->imm);
            break;
        case HVT_DIF_OP_MOV: case HVT_DIF_OP_ADDI: case HVT_DIF_OP_NEG: case HVT_DIF_OP_NOT:
        case HVT_DIF_OP_LNOT: case HVT_DIF_OP_SEXT: case HVT_DIF_OP_ZEXT: case HVT_DIF_OP_STRLEN:
        case HVT_DIF_OP_BASENAME:
            v = dep[ra];
            break;
        case HVT_DIF_OP_ADD: case HVT_DIF_OP_SUB: case HVT_DIF_OP_MUL: case HVT_DIF_OP_UDIV:
        case HVT_DIF_OP_SDIV: case HVT_DIF_OP_UREM: case HVT_DIF_OP_SREM: case HVT_DIF_OP_AND:
        case HVT_DIF_OP_OR: case HVT_DIF_OP_XOR: case HVT_DIF_OP_SHL: case HVT_DIF_OP_SHR:
        case HVT_DIF_OP_SAR: case HVT_DIF_OP_EQ: case HVT_DIF_OP_NE: case HVT_DIF_OP_LT:
        case HVT_DIF_OP_LE: case HVT_DIF_OP_LTU: case HVT_DIF_OP_LEU: case HVT_DIF_OP_SCMP:
        case HVT_DIF_OP_STRJOIN:
            v = dep[ra] | dep[rb];
            break;
        case HVT_DIF_OP_LDG: case HVT_DIF_OP_STRG: case HVT_DIF_OP_STRGR: case HVT_DIF_OP_LDGV:
        case HVT_DIF_OP_LDTV: case HVT_DIF_OP_LDLV: case HVT_DIF_OP_LDAV: case HVT_DIF_OP_LDSA:
        case HVT_DIF_OP_SPECNEW:
            v = DEP_DATA;
            break;
        case HVT_DIF_OP_JMP: case HVT_DIF_OP_BZ: case HVT_DIF_OP_BNZ:
            branched |= (uint32_t)in->imm != n - 1;      /* (to the RET: nothing joins there) */
            continue;
        case HVT_DIF_OP_TCLR:
            tuple = 0;
            continue;
        case HVT_DIF_OP_TPUSH:
            tuple |= dep[ra];
            continue;
        case HVT_DIF_OP_TKSTACK: case HVT_DIF_OP_TUSTACK:
            tuple |= DEP_DATA;
            continue;
        case HVT_DIF_OP_AGG: case HVT_DIF_OP_AGGW:
            keys[tuple & DEP_DATA ? D_KEY_DATA : tuple == (DEP_PROBE | DEP_TASK) ? D_KEY_BOTH :
                 tuple == DEP_PROBE ? D_KEY_PROBE : tuple == DEP_TASK ? D_KEY_TASK : D_KEY_CONST]++;
            continue;
        default:                     /* writes no register */
            continue;
        }
        dep[rd] = branched ? dep[rd] | v : v;
    }
}

int d_model_probe(const uint8_t *image, size_t len, uint32_t pi, struct d_model *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const struct hvt_dif_hdr *h = (const struct hvt_dif_hdr *)image;
    if (len < sizeof *h || h->magic != HVT_DIF_MAGIC || h->size > len ||
        !in_image(len, h->off_clauses, h->nclauses, sizeof(struct hvt_dif_clause)) ||
        !in_image(len, h->off_insns, h->ninsns, sizeof(struct hvt_dif_insn)) ||
        !in_image(len, h->off_aggs, h->naggs, sizeof(struct hvt_dif_agg)) ||
        !in_image(len, h->off_probes, h->nprobes, sizeof(struct hvt_dif_probe)) ||
        !in_image(len, h->off_probe_clauses, h->nprobe_clauses, sizeof(uint16_t))) {
        snprintf(err, errlen, "not a D image");
        return -1;
    }
    if (pi >= h->nprobes) {
        snprintf(err, errlen, "probe %u: the image has %u", pi, h->nprobes);
        return -1;
    }
    const struct hvt_dif_probe *p = (const struct hvt_dif_probe *)(image + h->off_probes) + pi;
    const uint16_t *pc = (const uint16_t *)(image + h->off_probe_clauses);
    const struct hvt_dif_clause *cl = (const struct hvt_dif_clause *)(image + h->off_clauses);
    const struct hvt_dif_insn *insns = (const struct hvt_dif_insn *)(image + h->off_insns);
    const struct hvt_dif_agg *aggs = (const struct hvt_dif_agg *)(image + h->off_aggs);
    if ((uint64_t)p->clauses + p->nclauses > h->nprobe_clauses) {
        snprintf(err, errlen, "probe %u: its clauses are not in the image", pi);
        return -1;
    }
    m->n[D_CAL_EXIT] = m->n[D_CAL_LOOKUP] = 1;
    if (p->nclauses)
        m->n[D_CAL_DFIRE] = 1;
    /* a system call's entry: the engine reads the user's arguments (HVT_PROBE_F_SYSARGS) - for
     * a program that reads arguments at all (args[], argN or errno anywhere in the image: the
     * hypervisor decides per image when it loads it) */
    if (p->nclauses && !strcmp(strtab_at(image, len, p->prov), "syscall") &&
        !strcmp(strtab_at(image, len, p->name), "entry") && image_reads_args(insns, h->ninsns))
        m->n[D_CAL_SYSARGS] = 1;
    m->nclauses = p->nclauses;
    for (uint32_t i = 0; i < p->nclauses; i++) {
        uint16_t ci = pc[p->clauses + i];
        if (ci >= h->nclauses || (uint64_t)cl[ci].first + cl[ci].count > h->ninsns || !cl[ci].count) {
            snprintf(err, errlen, "probe %u: clause %u is not in the image", pi, ci);
            return -1;
        }
        m->n[D_CAL_CLAUSE]++;
        const struct hvt_dif_insn *code = insns + cl[ci].first;
        uint32_t n = cl[ci].count, pred_end = 0;
        /* the predicate as the interpreter times it: up to the first branch to the RET */
        for (uint32_t k = 0; k < n; k++)
            if (code[k].op == HVT_DIF_OP_BZ && (uint32_t)code[k].imm == n - 1) {
                pred_end = k + 1;
                break;
            }
        bool lean = clause_lean(h, code, n, aggs);
        for (uint32_t k = 0; k < n; k++) {
            enum d_cal_key c = op_class(&code[k], aggs, h->naggs);
            m->n[c]++;
            if (k < pred_end)
                m->pred[c]++;
        }
        if (lean)
            m->lean++;
        else
            m->n[D_CAL_INTERP]++;
        clause_keys(code, n, m->keys);
    }
    return 0;
}

void d_model_mix(struct d_model *m, const struct d_mix *mix)
{
    double nt = mix && mix->known ? mix->newtask : 0, sw = mix && mix->known ? mix->switched : 0;
    double both = nt + sw < 1 ? nt + sw : 1;
    m->n[D_CAL_NEWTASK] = nt;
    m->n[D_CAL_KEYNEW] = m->keys[D_KEY_PROBE] * sw + m->keys[D_KEY_TASK] * nt + m->keys[D_KEY_BOTH] * both;
}

int d_model_cost(const struct d_cal *cal, const struct d_model *m, double phase[HVT_PH_COUNT],
                 uint32_t *estimated, char *err, size_t errlen)
{
    for (unsigned i = 0; i < HVT_PH_COUNT; i++)
        phase[i] = 0;
    *estimated = 0;
    for (unsigned k = 0; k < D_CAL_KEYS; k++) {
        if (!m->n[k])
            continue;
        enum d_cal_key c = (enum d_cal_key)k;
        while (!(cal->have & 1u << c) && cal_keys[c].fallback != c)
            c = cal_keys[c].fallback;
        if (!(cal->have & 1u << c) && cal_keys[c].optional) {
            *estimated |= 1u << k;           /* not priced: said */
            continue;
        }
        if (!(cal->have & 1u << c)) {
            snprintf(err, errlen, "the calibration table has no %s", cal_keys[c].name);
            return -1;
        }
        if (c != (enum d_cal_key)k)
            *estimated |= 1u << k;
        /* the time is in the phase of the class the instruction is in, whatever prices it */
        phase[HVT_PH_PREDICATE] += m->pred[k] * cal->v[c];
        phase[cal_keys[k].phase] += (m->n[k] - m->pred[k]) * cal->v[c];
    }
    return 0;
}

double d_predict_rate(double fires, double ticks, double plain)
{
    double own = ticks - fires * plain;
    return fires >= 0 && own > 0 ? fires / own : -1;
}

double d_predict_slowdown(double rate, double cost) { return 1 + rate * cost; }

int d_predict_report(FILE *out, FILE *err, const uint8_t *image, size_t len, const struct d_cal *cal,
                     const char *calname, double rate, const struct d_mix *mix, int models)
{
    static const char *const ph_names[] = HVT_PH_NAMES;
    const struct hvt_dif_hdr *h = (const struct hvt_dif_hdr *)image;
    char why[200];
    double sum = 0, lo = 0, hi = 0, keys[D_KEY_KINDS] = { 0 };
    uint32_t estimated = 0, counted = 0;
    if (len < sizeof *h || h->magic != HVT_DIF_MAGIC) {
        fprintf(err, "hvt: not a D image\n");
        return -1;
    }
    if (cal) {
        fprintf(out, "probe effect predicted (DTrace's performance model; ticks per firing from %s)\n", calname);
        fprintf(out, "%-40s %10s", "probe", "ticks");
        for (unsigned i = 0; i < HVT_PH_COUNT; i++)
            fprintf(out, " %9s", ph_names[i]);
        fprintf(out, "\n");
    }
    for (uint32_t pi = 0; pi < h->nprobes; pi++) {
        const struct hvt_dif_probe *p = (const struct hvt_dif_probe *)(image + h->off_probes) + pi;
        if (p->id == h->begin_probe || p->id == h->end_probe || p->id == h->error_probe)
            continue;                      /* they run once, not per firing of the workload */
        struct d_model m;
        double ph[HVT_PH_COUNT], total = 0;
        uint32_t est;
        char name[160];
        snprintf(name, sizeof name, "%s:%s:%s:%s", strtab_at(image, len, p->prov), strtab_at(image, len, p->mod),
                 strtab_at(image, len, p->func), strtab_at(image, len, p->name));
        if (d_model_probe(image, len, pi, &m, why, sizeof why)) {
            fprintf(err, "hvt: %s\n", why);
            return -1;
        }
        for (unsigned k = 0; k < D_KEY_KINDS; k++)
            keys[k] += m.keys[k];
        if (!cal) {                        /* the counts alone: what a calibration fits */
            fprintf(out, "model probe=%s", name);
            for (unsigned k = 0; k < D_CAL_KEYS; k++)
                if (m.n[k])
                    fprintf(out, " %s=%g", cal_keys[k].name, m.n[k]);
            fprintf(out, "\n");
            counted++;
            continue;
        }
        d_model_mix(&m, mix);
        if (d_model_cost(cal, &m, ph, &est, why, sizeof why)) {
            fprintf(err, "hvt: %s\n", why);
            return -1;
        }
        for (unsigned i = 0; i < HVT_PH_COUNT; i++)
            total += ph[i];
        /* a big enabling (syscall:::entry) lists its first probes and the spread */
        if (counted < 8 || models) {
            fprintf(out, "%-40s %10.1f", name, total);
            for (unsigned i = 0; i < HVT_PH_COUNT; i++)
                fprintf(out, " %9.1f", ph[i]);
            fprintf(out, "\n");
        }
        if (models) {
            fprintf(out, "  counts");
            for (unsigned k = 0; k < D_CAL_KEYS; k++)
                if (m.n[k])
                    fprintf(out, " %s=%g", cal_keys[k].name, m.n[k]);
            fprintf(out, "\n");
        }
        if (!counted || total < lo) lo = total;
        if (!counted || total > hi) hi = total;
        sum += total;
        counted++;
        estimated |= est;
    }
    if (!counted) {
        fprintf(err, "hvt: the program enables no probe that fires in the workload\n");
        return -1;
    }
    if (!cal)
        return 0;
    if (counted > 8 && !models)
        fprintf(out, "... %u probes in all\n", counted);
    for (unsigned k = 0; k < D_CAL_KEYS; k++)
        if (estimated & 1u << k) {
            enum d_cal_key c = (enum d_cal_key)k;
            while (!(cal->have & 1u << c) && cal_keys[c].fallback != c)
                c = cal_keys[c].fallback;
            if (!(cal->have & 1u << c))
                fprintf(out, "note: the table has no %s: not priced (make bench-probe measures it)\n",
                        cal_keys[k].name);
            else
                fprintf(out, "note: the table has no %s: priced as %s\n", cal_keys[k].name, cal_keys[c].name);
        }
    if (mix && mix->known)
        fprintf(out, "mix: %.4g of the firings in a new task, %.4g of another probe than the last\n",
                mix->newtask, mix->switched);
    else if (keys[D_KEY_PROBE] + keys[D_KEY_TASK] + keys[D_KEY_BOTH] > 0)
        fprintf(out, "note: no counting run said how often the task or the probe changes (a timed one "
                "does: --count-for, or --count-run F:T:OWN:NEWTASK:SWITCHED): priced as if neither did\n");
    if (keys[D_KEY_DATA] > 0)
        fprintf(out, "note: an aggregation's key is made of the firing's data: priced as if it repeated "
                "(each change costs keynew more)\n");
    double mean = sum / counted;
    if (lo != hi)
        fprintf(out, "note: the probes cost %.1f to %.1f ticks a firing: the mean is taken (each probe "
                "as likely to fire)\n", lo, hi);
    if (rate >= 0) {
        double s = d_predict_slowdown(rate, mean);
        fprintf(out, "at %.6g firings per tick of the workload's own time: %.4fx its time, %.2f%% of "
                "it in the probes\n", rate, s, 100 * (s - 1) / s);
        fprintf(out, "cost_per_firing=%.1f rate_per_tick=%.6g predicted_slowdown=%.4f\n", mean, rate, s);
    } else {
        fprintf(out, "cost_per_firing=%.1f\n", mean);
    }
    return 0;
}

int d_predict_main(FILE *out, FILE *err, const uint8_t *image, size_t len, const char *calpath, double rate_s,
                   const char *count_run, double tsc_khz, int models)
{
    struct d_cal cal;
    char used[4096], why[4400];
    if (models && !calpath && !count_run && rate_s < 0)     /* the counts alone */
        return d_predict_report(out, err, image, len, NULL, NULL, -1, NULL, 1) ? 1 : 0;
    if (d_cal_load(calpath, &cal, used, sizeof used, why, sizeof why)) {
        fprintf(err, "hvt: %s\n", why);
        return 1;
    }
    double rate = -1;
    struct d_mix mix = { 0 };
    if (count_run) {
        char *end;
        double v[5];
        unsigned nv = 0;
        const char *q = count_run;
        errno = 0;
        for (;;) {
            v[nv++] = strtod(q, &end);
            if (end == q || !isfinite(v[nv - 1]) || v[nv - 1] < 0 || *end != ':' || nv == 5)
                break;
            q = end + 1;
        }
        if (*end || errno || (nv != 2 && nv != 5) || v[1] <= 0 ||
            (nv == 5 && (v[2] >= v[1] || v[3] > v[0] || v[4] > v[0]))) {
            fprintf(err, "hvt: --count-run FIRES:TICKS[:OWN:NEWTASK:SWITCHED]: %s\n", count_run);
            return 2;
        }
        double fires = v[0], ticks = v[1];
        /* the counting run's own firings: as the hypervisor timed them, or plain, an exit and
         * a lookup each */
        double plain = cal.v[D_CAL_EXIT] + cal.v[D_CAL_LOOKUP];
        if (nv == 5) {
            plain = fires ? v[2] / fires : 0;
            mix = (struct d_mix){ 1, fires ? v[3] / fires : 0, fires ? v[4] / fires : 0 };
        } else if (!(cal.have & 1u << D_CAL_EXIT) || !(cal.have & 1u << D_CAL_LOOKUP)) {
            fprintf(err, "hvt: %s has no exit or no lookup: the counting run's own cost is unknown\n", used);
            return 1;
        }
        if ((rate = d_predict_rate(fires, ticks, plain)) < 0) {
            fprintf(err, "hvt: the counting run's %g firings in %g ticks leave no time to the "
                    "workload at %g ticks a firing (%s)\n", fires, ticks, plain, used);
            return 1;
        }
        fprintf(out, "counting run: %g firings in %g ticks, %g of them the workload's own: %.6g firings a tick\n",
                fires, ticks, ticks - fires * plain, rate);
    } else if (rate_s >= 0) {
        double khz = tsc_khz > 0 ? tsc_khz : cal.tsc_khz;
        if (khz <= 0) {
            fprintf(err, "hvt: --rate is per second: give the TSC's rate (--tsc-khz N)\n");
            return 2;
        }
        rate = rate_s / (khz * 1000);
    }
    return d_predict_report(out, err, image, len, &cal, used, rate, &mix, models) ? 1 : 0;
}
