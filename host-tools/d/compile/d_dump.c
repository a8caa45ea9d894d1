/*
 * d_dump: dprog_dump() (hvt -S), the compiled program as text: the header, probes, variables,
 * aggregations, then per clause one line per instruction: "clause index mnemonic operands"
 * with variables, aggregations, built-ins and string constants by name. It reads the image
 * with bounds checks, so a damaged one prints "?" rather than crashing.
 */
#include <inttypes.h>
#include <string.h>
#include "d_compile.h"

static const char *const opnames[HVT_DIF_OP__COUNT] = {
    [HVT_DIF_OP_NOP] = "nop", [HVT_DIF_OP_RET] = "ret", [HVT_DIF_OP_LDI] = "ldi", [HVT_DIF_OP_LDC] = "ldc",
    [HVT_DIF_OP_MOV] = "mov", [HVT_DIF_OP_ADD] = "add", [HVT_DIF_OP_SUB] = "sub", [HVT_DIF_OP_MUL] = "mul",
    [HVT_DIF_OP_UDIV] = "udiv", [HVT_DIF_OP_SDIV] = "sdiv", [HVT_DIF_OP_UREM] = "urem", [HVT_DIF_OP_SREM] = "srem",
    [HVT_DIF_OP_AND] = "and", [HVT_DIF_OP_OR] = "or", [HVT_DIF_OP_XOR] = "xor", [HVT_DIF_OP_SHL] = "shl",
    [HVT_DIF_OP_SHR] = "shr", [HVT_DIF_OP_SAR] = "sar", [HVT_DIF_OP_ADDI] = "addi", [HVT_DIF_OP_NEG] = "neg",
    [HVT_DIF_OP_NOT] = "not", [HVT_DIF_OP_LNOT] = "lnot", [HVT_DIF_OP_SEXT] = "sext", [HVT_DIF_OP_ZEXT] = "zext",
    [HVT_DIF_OP_EQ] = "eq", [HVT_DIF_OP_NE] = "ne", [HVT_DIF_OP_LT] = "lt", [HVT_DIF_OP_LE] = "le",
    [HVT_DIF_OP_LTU] = "ltu", [HVT_DIF_OP_LEU] = "leu", [HVT_DIF_OP_SCMP] = "scmp", [HVT_DIF_OP_JMP] = "jmp",
    [HVT_DIF_OP_BZ] = "bz", [HVT_DIF_OP_BNZ] = "bnz", [HVT_DIF_OP_LDG] = "ldg", [HVT_DIF_OP_STRG] = "strg", [HVT_DIF_OP_STRGR] = "strgr",
    [HVT_DIF_OP_VAR] = "var", [HVT_DIF_OP_SCONST] = "sconst", [HVT_DIF_OP_STRLEN] = "strlen",
    [HVT_DIF_OP_STRJOIN] = "strjoin", [HVT_DIF_OP_BASENAME] = "basename", [HVT_DIF_OP_LDGV] = "ldgv",
    [HVT_DIF_OP_STGV] = "stgv", [HVT_DIF_OP_LDTV] = "ldtv", [HVT_DIF_OP_STTV] = "sttv", [HVT_DIF_OP_LDLV] = "ldlv",
    [HVT_DIF_OP_STLV] = "stlv", [HVT_DIF_OP_TPUSH] = "tpush", [HVT_DIF_OP_TCLR] = "tclr", [HVT_DIF_OP_LDAV] = "ldav",
    [HVT_DIF_OP_STAV] = "stav", [HVT_DIF_OP_ACT] = "act", [HVT_DIF_OP_EMIT] = "emit", [HVT_DIF_OP_STACK] = "stack",
    [HVT_DIF_OP_AGG] = "agg", [HVT_DIF_OP_AGGCLR] = "aggclr", [HVT_DIF_OP_EXIT] = "exit",
    [HVT_DIF_OP_TRACER] = "tracer",
    [HVT_DIF_OP_SPECNEW] = "specnew", [HVT_DIF_OP_SPECULATE] = "spec", [HVT_DIF_OP_COMMIT] = "commit",
    [HVT_DIF_OP_DISCARD] = "discard", [HVT_DIF_OP_USTACK] = "ustack", [HVT_DIF_OP_AGGW] = "aggw",
    [HVT_DIF_OP_TKSTACK] = "tkstack", [HVT_DIF_OP_TUSTACK] = "tustack", [HVT_DIF_OP_LDSA] = "ldsa",
    [HVT_DIF_OP_STSA] = "stsa", [HVT_DIF_OP_CHKIDX] = "chkidx"};

static const char *const vnames[HVT_DIF_V__COUNT] = {
    "arg0", "arg1", "arg2", "arg3", "arg4", "arg5", "arg6", "arg7", "arg8", "arg9", "pid", "tid", "ppid", "uid", "cpu",
    "timestamp", "vtimestamp", "walltimestamp", "curthread", "errno", "epid", "id", "execname", "probeprov",
    "probemod", "probefunc", "probename", "regs[pc]", "regs[sp]", "stackdepth"};

static const char *const actnames[] = {"?", "trace", "printf", "printa", "stack", "ustack", "exit", "clear", "trunc",
                                       "normalize", "denormalize", "setopt", "step", "unstep", "stop", "default"};

static const char *const aggfns[] = {"?", "count", "sum", "min", "max", "avg", "stddev", "quantize", "lquantize",
                                     "llquantize"};

typedef struct {
    const uint8_t *img;
    size_t len;
    struct hvt_dif_hdr h;
} view;

static const void *sect(const view *v, uint32_t off, uint32_t n, size_t sz)
{
    if (off > v->len || (uint64_t)n * sz > v->len - off) return NULL;
    return v->img + off;
}

static const char *str(const view *v, uint32_t off)
{
    const char *s = sect(v, v->h.off_strtab, v->h.strtab_len, 1);
    if (!s || off >= v->h.strtab_len || !memchr(s + off, 0, v->h.strtab_len - off)) return "?";
    return s + off;
}

static void quoted(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c == '\n') fputs("\\n", f);
        else if (c == '\t') fputs("\\t", f);
        else if (c < 0x20 || c >= 0x7f) fprintf(f, "\\x%02x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static const char *var_name(const view *v, int32_t i)
{
    const struct hvt_dif_var *vs = sect(v, v->h.off_vars, v->h.nvars, sizeof *vs);
    if (!vs || i < 0 || (uint32_t)i >= v->h.nvars) return "?";
    return str(v, vs[i].name);
}

static const char *agg_name(const view *v, int32_t i)
{
    const struct hvt_dif_agg *as = sect(v, v->h.off_aggs, v->h.naggs, sizeof *as);
    if (!as || i < 0 || (uint32_t)i >= v->h.naggs) return "?";
    return str(v, as[i].name);
}

static void insn(FILE *f, const view *v, const d_clause *dc, const struct hvt_dif_insn *in)
{
    const char *m = in->op < HVT_DIF_OP__COUNT ? opnames[in->op] : NULL;
    if (!m) {
        fprintf(f, "op%u %u, %u, %u, %d", in->op, in->rd, in->ra, in->rb, in->imm);
        return;
    }
    fprintf(f, "%-9s", m);
    switch (in->op) {
    case HVT_DIF_OP_NOP: case HVT_DIF_OP_RET: case HVT_DIF_OP_TCLR: break;
    case HVT_DIF_OP_LDI: fprintf(f, "r%u, %d", in->rd, in->imm); break;
    case HVT_DIF_OP_LDC: {
        const uint64_t *c = sect(v, v->h.off_consts, v->h.nconsts, 8);
        if (c && in->imm >= 0 && (uint32_t)in->imm < v->h.nconsts)
            fprintf(f, "r%u, 0x%" PRIx64 " (const %d)", in->rd, c[in->imm], in->imm);
        else fprintf(f, "r%u, ? (const %d)", in->rd, in->imm);
        break;
    }
    case HVT_DIF_OP_MOV: case HVT_DIF_OP_NEG: case HVT_DIF_OP_NOT: case HVT_DIF_OP_LNOT: case HVT_DIF_OP_STRLEN:
    case HVT_DIF_OP_BASENAME:
        fprintf(f, "r%u, r%u", in->rd, in->ra);
        break;
    case HVT_DIF_OP_ADDI: case HVT_DIF_OP_SEXT: case HVT_DIF_OP_ZEXT:
        fprintf(f, "r%u, r%u, %d", in->rd, in->ra, in->imm);
        break;
    case HVT_DIF_OP_JMP: fprintf(f, "-> %d", in->imm); break;
    case HVT_DIF_OP_BZ: case HVT_DIF_OP_BNZ: fprintf(f, "r%u, -> %d", in->ra, in->imm); break;
    case HVT_DIF_OP_LDG:
        fprintf(f, "r%u, [r%u], %d%s%s", in->rd, in->ra, in->imm & HVT_DIF_LD_SIZE_MASK,
                in->imm & HVT_DIF_LD_SIGNED ? " signed" : "", in->imm & HVT_DIF_LD_USER ? " user" : "");
        break;
    case HVT_DIF_OP_STRG: fprintf(f, "r%u, [r%u]%s", in->rd, in->ra, in->imm & HVT_DIF_LD_USER ? " user" : ""); break;
    case HVT_DIF_OP_STRGR: fprintf(f, "r%u, [r%u, r%u)%s", in->rd, in->ra, in->rb, in->imm & HVT_DIF_LD_USER ? " user" : ""); break;
    case HVT_DIF_OP_VAR:
        fprintf(f, "r%u, %s", in->rd, in->imm >= 0 && in->imm < HVT_DIF_V__COUNT ? vnames[in->imm] : "?");
        break;
    case HVT_DIF_OP_SCONST:
        fprintf(f, "r%u, ", in->rd);
        quoted(f, in->imm >= 0 ? str(v, (uint32_t)in->imm) : "?");
        break;
    case HVT_DIF_OP_LDGV: case HVT_DIF_OP_LDTV: case HVT_DIF_OP_LDLV:
        fprintf(f, "r%u, %s%s", in->rd, in->op == HVT_DIF_OP_LDTV ? "self->" : in->op == HVT_DIF_OP_LDLV ? "this->" : "",
                var_name(v, in->imm));
        break;
    case HVT_DIF_OP_STGV: case HVT_DIF_OP_STTV: case HVT_DIF_OP_STLV:
        fprintf(f, "%s%s, r%u", in->op == HVT_DIF_OP_STTV ? "self->" : in->op == HVT_DIF_OP_STLV ? "this->" : "",
                var_name(v, in->imm), in->ra);
        break;
    case HVT_DIF_OP_LDSA: fprintf(f, "r%u, %s[r%u]", in->rd, var_name(v, in->imm), in->ra); break;
    case HVT_DIF_OP_STSA: fprintf(f, "%s[r%u], r%u", var_name(v, in->imm), in->ra, in->rb); break;
    case HVT_DIF_OP_CHKIDX: fprintf(f, "r%u < %d", in->ra, in->imm); break;
    case HVT_DIF_OP_LDAV: fprintf(f, "r%u, %s[tuple]", in->rd, var_name(v, in->imm)); break;
    case HVT_DIF_OP_STAV: fprintf(f, "%s[tuple], r%u", var_name(v, in->imm), in->ra); break;
    case HVT_DIF_OP_TPUSH: case HVT_DIF_OP_EMIT: case HVT_DIF_OP_EXIT: fprintf(f, "r%u", in->ra); break;
    case HVT_DIF_OP_SPECULATE: case HVT_DIF_OP_COMMIT: case HVT_DIF_OP_DISCARD: fprintf(f, "r%u", in->ra); break;
    case HVT_DIF_OP_SPECNEW: fprintf(f, "r%u", in->rd); break;
    case HVT_DIF_OP_TKSTACK: case HVT_DIF_OP_TUSTACK: fprintf(f, "%d frames", in->imm); break;
    case HVT_DIF_OP_ACT:
        fprintf(f, "#%d", in->imm);
        if (dc && in->imm >= 0 && in->imm < dc->nacts && dc->acts[in->imm].kind < sizeof actnames / sizeof actnames[0])
            fprintf(f, " (%s)", actnames[dc->acts[in->imm].kind]);
        break;
    case HVT_DIF_OP_STACK: fprintf(f, "%d bytes", in->imm); break;
    case HVT_DIF_OP_AGG: fprintf(f, "@%s[tuple], r%u", agg_name(v, in->imm), in->ra); break;
    case HVT_DIF_OP_AGGCLR: fprintf(f, "@%s", agg_name(v, in->imm)); break;
    case HVT_DIF_OP_AGGW: fprintf(f, "@%s[tuple], r%u, weight r%u", agg_name(v, in->imm), in->ra, in->rb); break;
    default: fprintf(f, "r%u, r%u, r%u", in->rd, in->ra, in->rb); break;
    }
}

void dprog_dump(FILE *f, const dprog *p)
{
    view v = {p->image, p->image_len, {0}};
    if (!p->image || p->image_len < sizeof v.h) {
        fprintf(f, "no image\n");
        return;
    }
    memcpy(&v.h, p->image, sizeof v.h);
    const struct hvt_dif_hdr *h = &v.h;
    fprintf(f, "image %u bytes: %u clauses, %u insns, %u consts, %u vars, %u aggs, %u probes; strsize %u%s\n", h->size,
            h->nclauses, h->ninsns, h->nconsts, h->nvars, h->naggs, h->nprobes, h->strsize - 1,
            h->flags & HVT_DIF_HF_DESTRUCTIVE ? ", destructive" : "");
    if (h->nspec)
        fprintf(f, "speculations: nspec %u, specsize %u%s\n", h->nspec, h->specsize, h->specsize ? "" : " (default)");
    const struct hvt_dif_probe *pr = sect(&v, h->off_probes, h->nprobes, sizeof *pr);
    const uint16_t *pc = sect(&v, h->off_probe_clauses, h->nprobe_clauses, 2);
    for (uint32_t i = 0; pr && pc && i < h->nprobes; i++) {
        fprintf(f, "probe %u %s:%s:%s:%s clauses", pr[i].id, str(&v, pr[i].prov), str(&v, pr[i].mod), str(&v, pr[i].func),
                str(&v, pr[i].name));
        for (uint32_t k = 0; k < pr[i].nclauses && (uint64_t)pr[i].clauses + k < h->nprobe_clauses; k++)
            fprintf(f, " %u", pc[pr[i].clauses + k]);
        fputc('\n', f);
    }
    static const char *const kinds[] = {"?", "global", "self", "this", "assoc"};
    const struct hvt_dif_var *vs = sect(&v, h->off_vars, h->nvars, sizeof *vs);
    for (uint32_t i = 0; vs && i < h->nvars; i++) {
        fprintf(f, "var %u %s %s %s", i, vs[i].kind < 5 ? kinds[vs[i].kind] : "?", str(&v, vs[i].name),
                vs[i].type == HVT_DIF_T_STR ? "string" : "int");
        for (int k = 0; k < vs[i].nkeys && k < HVT_DIF_TUPLE_MAX; k++)
            fprintf(f, "%s%s", k ? ", " : " [", vs[i].key_types[k] == HVT_DIF_T_STR ? "string" : "int");
        fputs(vs[i].nkeys ? "]\n" : "\n", f);
    }
    const struct hvt_dif_agg *as = sect(&v, h->off_aggs, h->naggs, sizeof *as);
    for (uint32_t i = 0; as && i < h->naggs; i++)
        fprintf(f, "agg %u @%s %s keys %u buckets %u params %" PRId64 " %" PRId64 " %" PRId64 " %" PRId64 "\n", i,
                str(&v, as[i].name), as[i].fn < 10 ? aggfns[as[i].fn] : "?", as[i].nkeys, as[i].nbuckets, as[i].p[0],
                as[i].p[1], as[i].p[2], as[i].p[3]);
    const struct hvt_dif_clause *cl = sect(&v, h->off_clauses, h->nclauses, sizeof *cl);
    const struct hvt_dif_insn *ins = sect(&v, h->off_insns, h->ninsns, sizeof *ins);
    for (uint32_t c = 0; cl && ins && c < h->nclauses; c++) {
        const d_clause *dc = (int)c < p->nclauses ? &p->clauses[c] : NULL;
        fprintf(f, "clause %u: %s (line %d)\n", c, dc && dc->where ? dc->where : "?", dc ? dc->line : 0);
        for (int a = 0; dc && a < dc->nacts; a++) {
            const d_action *ac = &dc->acts[a];
            fprintf(f, "  action #%d %s", a, ac->kind < sizeof actnames / sizeof actnames[0] ? actnames[ac->kind] : "?");
            if (ac->fmt) {
                fputc(' ', f);
                quoted(f, ac->fmt);
            }
            if (ac->agg >= 0) fprintf(f, " @%s", agg_name(&v, ac->agg));
            for (int k = 0; k < ac->nargs; k++) {
                static const char *const vt[] = {"?", "int", "uint", "string", "ptr", "ksym"};
                fprintf(f, "%s%s", k ? ", " : " (", ac->args[k].type < 6 ? vt[ac->args[k].type] : "?");
                if (ac->args[k].type == D_V_INT || ac->args[k].type == D_V_UINT) fprintf(f, "%u", ac->args[k].size * 8);
            }
            fputs(ac->nargs ? ")\n" : "\n", f);
        }
        for (uint32_t i = 0; i < cl[c].count && (uint64_t)cl[c].first + i < h->ninsns; i++) {
            fprintf(f, "%4u %4u  ", c, i);
            insn(f, &v, dc, &ins[cl[c].first + i]);
            fputc('\n', f);
        }
    }
}
