/* sdt.c - the kernel's static tracepoints as probes (see sdt.h). */
#include "sdt.h"
#include "hvt_hypercall.h"
#include <capstone/capstone.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TP_PREFIX     "__tracepoint_"
#define BLOCK_INSNS   48                   /* instructions decoded in one block at most */
#define NAME_MAX_LEN  128
/* struct jump_entry with relative references (x86-64's CONFIG_HAVE_ARCH_JUMP_LABEL_RELATIVE,
 * include/linux/jump_label.h): s32 code, s32 target, long key, each relative to its own
 * field; the key's two low bits are flags. */
#define JE_SIZE       16
#define JE_KEY_FLAGS  3ull

static char *fmt(const char *f, ...)
{
    va_list ap;
    char buf[256];
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return strdup(buf);
}

static void say(char *why, size_t n, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    vsnprintf(why, n, f, ap);
    va_end(ap);
}

/* ---- the block decoder: the block's instructions run on symbolic registers ---- */

enum { X_UNKNOWN = 15 };                    /* beside enum hvt_sdt_op: a value the block made */
typedef struct {
    uint8_t op, reg, size, sign;           /* size: log2 of bytes; the value is extended from it */
    uint8_t low8;                          /* a SETcc's: only the low byte is the value */
    int64_t disp;
    char how[64];                          /* X_UNKNOWN: what made it (a copy: an instruction's
                                              mnemonic lives only until the next is decoded) */
} expr;

static expr unknown_by(const char *how)
{
    expr e = { .op = X_UNKNOWN };
    snprintf(e.how, sizeof e.how, "%s", how);
    return e;
}

/* A capstone register: its x86 number (0-15) and width in bytes; -1 for anything else (AH..BH:
 * bits 15:8 of a register are not a value a rule can name). */
static int gpr_of(unsigned r, unsigned *width)
{
    static const unsigned q[16] = { X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX, X86_REG_RSP,
                                    X86_REG_RBP, X86_REG_RSI, X86_REG_RDI, X86_REG_R8, X86_REG_R9,
                                    X86_REG_R10, X86_REG_R11, X86_REG_R12, X86_REG_R13, X86_REG_R14,
                                    X86_REG_R15 };
    static const unsigned d[16] = { X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX, X86_REG_ESP,
                                    X86_REG_EBP, X86_REG_ESI, X86_REG_EDI, X86_REG_R8D, X86_REG_R9D,
                                    X86_REG_R10D, X86_REG_R11D, X86_REG_R12D, X86_REG_R13D,
                                    X86_REG_R14D, X86_REG_R15D };
    static const unsigned w[16] = { X86_REG_AX, X86_REG_CX, X86_REG_DX, X86_REG_BX, X86_REG_SP,
                                    X86_REG_BP, X86_REG_SI, X86_REG_DI, X86_REG_R8W, X86_REG_R9W,
                                    X86_REG_R10W, X86_REG_R11W, X86_REG_R12W, X86_REG_R13W,
                                    X86_REG_R14W, X86_REG_R15W };
    static const unsigned b[16] = { X86_REG_AL, X86_REG_CL, X86_REG_DL, X86_REG_BL, X86_REG_SPL,
                                    X86_REG_BPL, X86_REG_SIL, X86_REG_DIL, X86_REG_R8B, X86_REG_R9B,
                                    X86_REG_R10B, X86_REG_R11B, X86_REG_R12B, X86_REG_R13B,
                                    X86_REG_R14B, X86_REG_R15B };
    for (int i = 0; i < 16; i++) {
        if (r == q[i]) { *width = 8; return i; }
        if (r == d[i]) { *width = 4; return i; }
        if (r == w[i]) { *width = 2; return i; }
        if (r == b[i]) { *width = 1; return i; }
    }
    return -1;
}

static unsigned log2_of(unsigned bytes) { return bytes == 8 ? 3 : bytes == 4 ? 2 : bytes == 2 ? 1 : 0; }

/* The value cut to 1 << size bytes and extended (sign or zero): what MOVZX, MOVSX and a 32-bit
 * register write do to it. Cutting again is exact; widening a sign-extended value with zeros is
 * not a rule (unknown). */
static expr narrow(expr e, unsigned size, unsigned sign)
{
    if (e.op == X_UNKNOWN || e.op == HVT_SDT_NZ || e.op == HVT_SDT_Z)
        return e;                          /* (a 0 or a 1 is the same in any width) */
    if (size <= e.size) {
        e.size = (uint8_t)size;
        e.sign = (uint8_t)sign;
    } else if (e.sign && !sign) {
        return unknown_by("zero-extends a sign-extended value");
    }
    return e;
}

typedef struct {
    expr r[16];
    expr flag;                             /* what the last TEST r,r or CMP r,imm compared */
    int64_t flag_with;                     /* with this constant (TEST r,r: 0), when flag_ok */
    bool flag_ok;
    const kimg *k;
    uint64_t site, img_lo, img_hi;
} sym_state;

/* A memory operand's address as base register + displacement: false if it has an index, a
 * segment, or a base the block computed. */
static bool address_of(const sym_state *s, const cs_x86_op *op, uint64_t next_ip, expr *out)
{
    const x86_op_mem *m = &op->mem;
    if (m->segment != X86_REG_INVALID || m->index != X86_REG_INVALID)
        return false;
    if (m->base == X86_REG_RIP) {
        *out = (expr){ .op = HVT_SDT_SITE, .size = 3, .disp = (int64_t)(next_ip + (uint64_t)m->disp - s->site) };
        return true;
    }
    unsigned w;
    int g = gpr_of(m->base, &w);
    if (g < 0 || w != 8)
        return false;
    const expr *b = &s->r[g];
    if (b->size != 3 || (b->op != HVT_SDT_REG && b->op != HVT_SDT_LEA))
        return false;
    *out = (expr){ .op = HVT_SDT_LEA, .reg = b->reg, .size = 3, .disp = b->disp + m->disp };
    return true;
}

/* A source operand's value, op->size bytes of it. */
static expr value_of(const sym_state *s, const cs_x86_op *op, uint64_t next_ip)
{
    unsigned w;
    int g;
    expr a;
    switch (op->type) {
    case X86_OP_REG:
        g = gpr_of(op->reg, &w);
        if (g < 0)
            return unknown_by("a register no rule can name");
        if (s->r[g].low8)                  /* a SETcc's byte: read alone, or not at all */
            return w == 1 ? s->r[g] : unknown_by("the rest of a register a SETcc wrote");
        return w == 8 ? s->r[g] : narrow(s->r[g], log2_of(w), 0);
    case X86_OP_IMM:
        if ((uint64_t)op->imm >= s->img_lo && (uint64_t)op->imm < s->img_hi)   /* an address: slid */
            return (expr){ .op = HVT_SDT_SITE, .size = 3, .disp = (int64_t)((uint64_t)op->imm - s->site) };
        return narrow((expr){ .op = HVT_SDT_IMM, .size = 3, .disp = op->imm }, log2_of(op->size), 0);
    case X86_OP_MEM:
        if (op->mem.segment == X86_REG_GS) {
            /* %gs:OFF, or %gs:OFF(%rip) - the per-CPU offset comes out of the RIP-relative sum
             * (per-CPU symbols are absolute, at small addresses) */
            uint64_t off = op->mem.base == X86_REG_RIP ? next_ip + (uint64_t)op->mem.disp
                         : op->mem.base == X86_REG_INVALID ? (uint64_t)op->mem.disp : ~0ull;
            if (op->mem.index != X86_REG_INVALID || off >= 1ull << (HVT_SDT_DISP_BITS - 1))
                return unknown_by("a per-CPU load through a register");
            return (expr){ .op = HVT_SDT_PCPU, .size = (uint8_t)log2_of(op->size), .disp = (int64_t)off };
        }
        if (op->mem.base == X86_REG_RIP)
            return unknown_by("a load of a global");
        if (!address_of(s, op, next_ip, &a))
            return unknown_by("a load through a computed or indexed address");
        return (expr){ .op = HVT_SDT_LOAD, .reg = a.reg, .size = (uint8_t)log2_of(op->size), .disp = a.disp };
    default:
        return unknown_by("an operand of another kind");
    }
}

/* Symbolic execution of one instruction: 1 go on, 0 the tracepoint's call reached, -1 refused
 * (why set). *next: where to go on (a followed JMP changes it). */
static int step(sym_state *s, csh cs, const cs_insn *in, const ksym_table *syms, const char *event,
                uint64_t *next, char *why, size_t wl)
{
    const cs_x86 *x = &in->detail->x86;
    uint64_t next_ip = in->address + in->size;
    *next = next_ip;
    for (int i = 0; i < x->op_count; i++)
        if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE) &&
            x->operands[i].mem.segment != X86_REG_GS && in->id != X86_INS_LEA) {
            say(why, wl, "stores to memory (%s %s at %#llx)", in->mnemonic, in->op_str,
                (unsigned long long)in->address);
            return -1;
        }
    if (in->id == X86_INS_CALL || in->id == X86_INS_JMP) {
        if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM) {
            say(why, wl, "an indirect %s at %#llx", in->mnemonic, (unsigned long long)in->address);
            return -1;
        }
        uint64_t t = (uint64_t)x->operands[0].imm;
        if (in->id == X86_INS_JMP) {
            *next = t;
            return 1;
        }
        uint64_t off;
        int64_t si = ksym_lookup(syms, t, &off);
        const char *name = si >= 0 && off == 0 ? ksym_name(syms, (uint32_t)si) : "";
        char want1[NAME_MAX_LEN + 20], want2[NAME_MAX_LEN + 20];
        snprintf(want1, sizeof want1, "__SCT__tp_func_%s", event);
        snprintf(want2, sizeof want2, "__traceiter_%s", event);
        if (!strcmp(name, want1) || !strcmp(name, want2))
            return 0;
        say(why, wl, "calls %s before the tracepoint's call", *name ? name : "an address");
        return -1;
    }
    if (cs_insn_group(cs, in, X86_GRP_JUMP))
        return 1;                          /* a Jcc: the call is on the path that falls through */
    if (cs_insn_group(cs, in, X86_GRP_RET) || cs_insn_group(cs, in, X86_GRP_INT) ||
        in->id == X86_INS_UD2) {
        say(why, wl, "ends (%s at %#llx) before the tracepoint's call", in->mnemonic,
            (unsigned long long)in->address);
        return -1;
    }
    cs_regs rr, ww;
    uint8_t nr = 0, nw = 0;
    if (cs_regs_access(cs, in, rr, &nr, ww, &nw)) {
        say(why, wl, "cannot tell what %s writes", in->mnemonic);
        return -1;
    }
    unsigned w;
    for (unsigned i = 0; i < nw; i++)
        if (gpr_of(ww[i], &w) == 4) {
            say(why, wl, "moves the stack pointer (%s at %#llx)", in->mnemonic, (unsigned long long)in->address);
            return -1;
        }
    const cs_x86_op *o = x->operands;
    int dst = x->op_count >= 1 && o[0].type == X86_OP_REG ? gpr_of(o[0].reg, &w) : -1;
    expr v;
    bool known = dst >= 0 && x->op_count == 2, flags_set = false;
    for (unsigned i = 0; i < nw; i++)
        flags_set |= ww[i] == X86_REG_EFLAGS;
    /* TEST r,r or CMP r,imm then SETNE/SETE: whether r is zero or the constant, a bool
     * argument (signal_generate's group = ebx != 0; 6.12's sched_switch preempt = r14d == 1) */
    if (x->op_count == 2 && o[0].type == X86_OP_REG &&
        ((in->id == X86_INS_TEST && o[1].type == X86_OP_REG && o[1].reg == o[0].reg) ||
         (in->id == X86_INS_CMP && o[1].type == X86_OP_IMM))) {
        int64_t lim = 1ll << (HVT_SDT_DISP_BITS - 1), with = in->id == X86_INS_CMP ? o[1].imm : 0;
        if (o[0].size < 8)                 /* the constant as the compared width sees it */
            with = (int64_t)((uint64_t)with << (64 - 8 * o[0].size)) >> (64 - 8 * o[0].size);
        s->flag = value_of(s, &o[0], next_ip);
        s->flag_with = with;
        s->flag_ok = s->flag.op == HVT_SDT_REG && with >= -lim && with < lim;
        return 1;
    }
    if ((in->id == X86_INS_SETNE || in->id == X86_INS_SETE) && dst >= 0 && w == 1) {
        /* the rest of the register: kept only if the block zeroed it first (xor %esi,%esi) */
        bool zeroed = s->r[dst].op == HVT_SDT_IMM && s->r[dst].disp == 0 && s->r[dst].size >= 2;
        s->r[dst] = s->flag_ok ? (expr){ .op = in->id == X86_INS_SETNE ? HVT_SDT_NZ : HVT_SDT_Z,
                                         .reg = s->flag.reg, .size = s->flag.size,
                                         .disp = s->flag_with, .low8 = !zeroed }
                               : unknown_by("a SETcc of flags no rule can name");
        return 1;
    }
    if (flags_set)
        s->flag_ok = false;
    if (known && in->id == X86_INS_MOV) {
        v = value_of(s, &o[1], next_ip);
    } else if (known && (in->id == X86_INS_MOVZX || in->id == X86_INS_MOVSX) && o[1].type == X86_OP_REG &&
               (v = value_of(s, &o[1], next_ip)).low8) {
        v.low8 = 0;                        /* a 0 or a 1, extended */
    } else if (known && in->id == X86_INS_MOVZX) {
        v = narrow(value_of(s, &o[1], next_ip), log2_of(o[1].size), 0);
    } else if (known && (in->id == X86_INS_MOVSX || in->id == X86_INS_MOVSXD)) {
        v = narrow(value_of(s, &o[1], next_ip), log2_of(o[1].size), 1);
    } else if (known && in->id == X86_INS_LEA) {
        if (!address_of(s, &o[1], next_ip, &v))
            v = unknown_by("an address computed with an index");
    } else if (known && in->id == X86_INS_XOR && o[1].type == X86_OP_REG && o[1].reg == o[0].reg) {
        v = (expr){ .op = HVT_SDT_IMM, .size = 3 };
    } else {
        known = false;
    }
    if (known && w >= 4) {                 /* a 32-bit write zero-extends (SDM Vol. 1 3.4.1.1) */
        s->r[dst] = w == 4 ? narrow(v, 2, 0) : v;
        return 1;
    }
    for (unsigned i = 0; i < nw; i++) {    /* anything else: what it writes is the block's */
        int g = gpr_of(ww[i], &w);
        if (g >= 0)
            s->r[g] = unknown_by(in->mnemonic);
    }
    return 1;
}

static const char *const reg_names[16] = { "rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                                           "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15" };

/* The image's extent [_text, _end): an immediate inside it is an address KASLR slides. */
static void image_extent(const ksym_table *syms, uint64_t *lo, uint64_t *hi)
{
    int64_t l = ksym_find(syms, "_text"), h = ksym_find(syms, "_end");
    *lo = l >= 0 ? syms->syms[l].addr : 0;
    *hi = h >= 0 ? syms->syms[h].addr : 0;
}

static int decode_block(const kimg *k, const ksym_table *syms, const char *event, uint64_t site,
                        uint64_t block, int nargs, uint64_t img_lo, uint64_t img_hi, uint64_t recipe[3],
                        char *why, size_t wl);

int sdt_decode_block(const kimg *k, const ksym_table *syms, const char *event, uint64_t site,
                     uint64_t block, int nargs, uint64_t recipe[3], char *why, size_t wl)
{
    uint64_t lo, hi;
    image_extent(syms, &lo, &hi);
    return decode_block(k, syms, event, site, block, nargs, lo, hi, recipe, why, wl);
}

static int decode_block(const kimg *k, const ksym_table *syms, const char *event, uint64_t site,
                        uint64_t block, int nargs, uint64_t img_lo, uint64_t img_hi, uint64_t recipe[3],
                        char *why, size_t wl)
{
    static const uint8_t arg_reg[HVT_SDT_ARGS] = { 6, 2, 1, 8, 9 };   /* RSI RDX RCX R8 R9 */
    memset(recipe, 0, 3 * sizeof recipe[0]);
    if (nargs < 0) {
        say(why, wl, "no BTF prototype btf_trace_%s", event);
        return -1;
    }
    if (nargs > HVT_SDT_ARGS) {
        say(why, wl, "%d arguments: past the fifth they are on the stack", nargs);
        return -1;
    }
    csh cs;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
        say(why, wl, "capstone cannot open");
        return -1;
    }
    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
    sym_state s = { .k = k, .site = site, .img_lo = img_lo, .img_hi = img_hi };
    for (unsigned i = 0; i < 16; i++)
        s.r[i] = (expr){ .op = HVT_SDT_REG, .reg = (uint8_t)i, .size = 3 };
    int rc = -1;
    uint64_t ip = block;
    say(why, wl, "no call of the tracepoint within %d instructions", BLOCK_INSNS);
    cs_insn *in = cs_malloc(cs);
    for (int n = 0; n < BLOCK_INSNS && in; n++) {
        const uint8_t *b = kimg_ptr(k, ip, 15);
        size_t len = 15;
        const uint8_t *p = b;
        uint64_t a = ip;
        if (!b || !cs_disasm_iter(cs, &p, &len, &a, in)) {
            say(why, wl, "undecodable bytes at %#llx", (unsigned long long)ip);
            break;
        }
        uint64_t next;
        int r = step(&s, cs, in, syms, event, &next, why, wl);
        if (r < 0)
            break;
        if (r == 0) {
            rc = 0;
            break;
        }
        ip = next;
    }
    if (in)
        cs_free(in, 1);
    cs_close(&cs);
    for (int i = 0; rc == 0 && i < nargs; i++) {
        const expr *e = &s.r[arg_reg[i]];
        int64_t lim = 1ll << (HVT_SDT_DISP_BITS - 1);
        if (e->op == X_UNKNOWN) {
            say(why, wl, "argument %d (%s) is computed by the block (%s)", i, reg_names[arg_reg[i]], e->how);
            rc = -1;
        } else if (e->disp < -lim || e->disp >= lim) {
            say(why, wl, "argument %d (%s): %lld does not fit a rule", i, reg_names[arg_reg[i]], (long long)e->disp);
            rc = -1;
        } else {
            struct hvt_sdt_arg a = { .op = e->op, .reg = e->reg, .size = e->size, .sign = e->sign,
                                     .disp = (int32_t)e->disp };
            if (a.op == HVT_SDT_LEA && !a.disp)
                a.op = HVT_SDT_REG;
            hvt_sdt_arg_put(recipe, (unsigned)i, &a);
        }
    }
    if (rc == 0 && hvt_sdt_recipe_check(recipe)) {   /* unreachable: the rules are built checked */
        say(why, wl, "internal error: a malformed recipe");
        rc = -1;
    }
    return rc;
}

void sdt_recipe_str(const uint64_t recipe[3], int nargs, char *buf, size_t n)
{
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < nargs && i < HVT_SDT_ARGS && at < n; i++) {
        struct hvt_sdt_arg a;
        char v[64], cut[8] = "";
        if (hvt_sdt_arg_get(recipe, (unsigned)i, &a)) {
            snprintf(v, sizeof v, "?");
        } else {
            long long d = a.disp;
            const char *r = reg_names[a.reg];
            switch (a.op) {
            case HVT_SDT_REG:  snprintf(v, sizeof v, "%s", r); break;
            case HVT_SDT_LEA:  snprintf(v, sizeof v, "%s%+lld", r, d); break;
            case HVT_SDT_LOAD: snprintf(v, sizeof v, "[%s%+lld]", r, d); break;
            case HVT_SDT_IMM:  snprintf(v, sizeof v, "$%lld", d); break;
            case HVT_SDT_SITE: snprintf(v, sizeof v, "site%+lld", d); break;
            case HVT_SDT_NZ:   snprintf(v, sizeof v, "%s!=%lld", r, d); break;
            case HVT_SDT_Z:    snprintf(v, sizeof v, "%s==%lld", r, d); break;
            case HVT_SDT_PCPU: snprintf(v, sizeof v, "%%gs:[%#llx]", (unsigned long long)d); break;
            default:           snprintf(v, sizeof v, "-"); break;
            }
            if (a.size < 3 || a.op == HVT_SDT_LOAD || a.op == HVT_SDT_PCPU || a.op == HVT_SDT_NZ ||
                a.op == HVT_SDT_Z)
                snprintf(cut, sizeof cut, ":%u%s", 1u << a.size, a.sign ? "s" : "");
        }
        at += (size_t)snprintf(buf + at, n - at, "%s%s%s", i ? " " : "", v, cut);
    }
}

/* ---- the tracepoints of an image ---- */

static bool rd64(const kimg *k, uint64_t va, uint64_t *v)
{
    const uint8_t *p = kimg_ptr(k, va, 8);
    if (p)
        memcpy(v, p, 8);
    return p != NULL;
}

static char *rd_str(const kimg *k, uint64_t va)
{
    char buf[NAME_MAX_LEN];
    for (size_t i = 0; i < sizeof buf; i++) {
        const uint8_t *p = kimg_ptr(k, va + i, 1);
        if (!p)
            return NULL;
        buf[i] = (char)*p;
        if (!*p)
            return i ? strdup(buf) : NULL;
    }
    return NULL;
}

static int64_t member_off(const btf_info *b, const char *st, const char *m)
{
    btf_member bm;
    uint32_t id = btf_find_struct(b, st);
    return id && !btf_member_find(b, id, m, &bm) && !bm.bit_size ? (int64_t)(bm.bit_offset / 8) : -1;
}

static int64_t enum_value(const btf_info *b, const char *name)
{
    for (uint32_t id = 1; id < b->ntypes; id++) {
        btf_type t;
        if (btf_type_get(b, id, &t) || (t.kind != 6 && t.kind != 19))
            continue;
        const char *n;
        int64_t v;
        for (unsigned i = 0; !btf_enum_val(b, id, i, &n, &v); i++)
            if (!strcmp(n, name))
                return v;
    }
    return -1;
}

static int cmp_point(const void *a, const void *b)
{
    const sdt_point *x = a, *y = b;
    return x->tp < y->tp ? -1 : x->tp > y->tp;
}

static sdt_point *by_tp(sdt_table *t, uint64_t tp)
{
    sdt_point key = { .tp = tp };
    return bsearch(&key, t->p, t->n, sizeof *t->p, cmp_point);
}

const sdt_point *sdt_find(const sdt_table *t, const char *event)
{
    for (size_t i = 0; i < t->n; i++)
        if (!strcmp(t->p[i].event, event))
            return &t->p[i];
    return NULL;
}

/* btf_trace_EVENT: typedef -> pointer -> FUNC_PROTO (include/trace/bpf_probe.h). */
static void proto_of(const btf_info *b, sdt_table *t)
{
    for (uint32_t id = 1; id < b->ntypes; id++) {
        btf_type ty, p, f;
        if (btf_type_get(b, id, &ty) || ty.kind != 8 || strncmp(ty.name, "btf_trace_", 10))
            continue;
        if (btf_type_get(b, ty.type, &p) || p.kind != 2 || btf_type_get(b, p.type, &f) || f.kind != 13 ||
            f.vlen < 1)
            continue;
        const sdt_point *sp = sdt_find(t, ty.name + 10);
        if (sp) {
            ((sdt_point *)sp)->proto = p.type;
            ((sdt_point *)sp)->nargs = (int)f.vlen - 1;
        }
    }
}

/* GROUP: the system of the trace event made on the tracepoint (trace_event_call with
 * TRACE_EVENT_FL_TRACEPOINT: its tp is the struct tracepoint, its class has the system). */
static void groups_of(const kimg *k, const ksym_table *syms, const btf_info *b, sdt_table *t)
{
    int64_t s = ksym_find(syms, "__start_ftrace_events"), e = ksym_find(syms, "__stop_ftrace_events");
    int64_t o_class = member_off(b, "trace_event_call", "class"), o_tp = member_off(b, "trace_event_call", "tp");
    int64_t o_flags = member_off(b, "trace_event_call", "flags"), o_sys = member_off(b, "trace_event_class", "system");
    int64_t fl_tp = enum_value(b, "TRACE_EVENT_FL_TRACEPOINT");
    if (s < 0 || e < 0 || o_class < 0 || o_tp < 0 || o_flags < 0 || o_sys < 0 || fl_tp <= 0)
        return;
    for (uint64_t a = syms->syms[s].addr; a + 8 <= syms->syms[e].addr; a += 8) {
        uint64_t call, cls, tp, sys;
        const uint8_t *fp;
        int32_t flags;
        if (!rd64(k, a, &call) || !(fp = kimg_ptr(k, call + (uint64_t)o_flags, 4)))
            continue;
        memcpy(&flags, fp, 4);
        if (!(flags & fl_tp) || !rd64(k, call + (uint64_t)o_tp, &tp) || !rd64(k, call + (uint64_t)o_class, &cls) ||
            !rd64(k, cls + (uint64_t)o_sys, &sys))
            continue;
        sdt_point *p = by_tp(t, tp);
        if (p && !p->group)
            p->group = rd_str(k, sys);
    }
}

int sdt_build(const kimg *k, const ksym_table *syms, const btf_info *b, sdt_table *out,
              char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    int64_t js = ksym_find(syms, "__start___jump_table"), je = ksym_find(syms, "__stop___jump_table");
    if (js < 0 || je < 0) {
        snprintf(err, errlen, "no __jump_table in the kernel's symbols");
        return -1;
    }
    int64_t o_key = member_off(b, "tracepoint", "key");
    if (o_key < 0 || btf_type_size(b, btf_find_struct(b, "jump_entry")) != JE_SIZE) {
        snprintf(err, errlen, "the kernel's BTF has no struct tracepoint.key or a jump_entry of %d bytes", JE_SIZE);
        return -1;
    }
    size_t cap = 0;
    for (uint32_t i = 0; i < syms->count; i++) {
        const char *n = ksym_name(syms, i);
        if (strncmp(n, TP_PREFIX, strlen(TP_PREFIX)) || syms->syms[i].abs || !n[strlen(TP_PREFIX)])
            continue;
        if (out->n == cap) {
            cap = cap ? cap * 2 : 1024;
            sdt_point *np = realloc(out->p, cap * sizeof *np);
            if (!np)
                goto nomem;
            out->p = np;
        }
        out->p[out->n++] = (sdt_point){ .event = strdup(n + strlen(TP_PREFIX)), .tp = syms->syms[i].addr,
                                        .nargs = -1 };
        if (!out->p[out->n - 1].event)
            goto nomem;
    }
    qsort(out->p, out->n, sizeof *out->p, cmp_point);
    proto_of(b, out);
    groups_of(k, syms, b, out);
    int64_t is = ksym_find(syms, "_sinittext"), ie = ksym_find(syms, "_einittext");
    uint64_t img_lo, img_hi;
    image_extent(syms, &img_lo, &img_hi);
    for (uint64_t a = syms->syms[js].addr; a + JE_SIZE <= syms->syms[je].addr; a += JE_SIZE) {
        const uint8_t *p = kimg_ptr(k, a, JE_SIZE);
        if (!p)
            continue;
        int32_t code, target;
        int64_t key;
        memcpy(&code, p, 4);
        memcpy(&target, p + 4, 4);
        memcpy(&key, p + 8, 8);
        uint64_t tp = ((a + 8 + (uint64_t)key) & ~JE_KEY_FLAGS) - (uint64_t)o_key;
        sdt_point *pt = by_tp(out, tp);
        if (!pt)
            continue;                      /* a static key of something else */
        sdt_site *ns = realloc(pt->sites, (pt->nsites + 1) * sizeof *ns);
        if (!ns)
            goto nomem;
        pt->sites = ns;
        sdt_site *st = &ns[pt->nsites++];
        *st = (sdt_site){ .site = a + (uint64_t)(int64_t)code, .block = a + 4 + (uint64_t)(int64_t)target };
        out->entries++;
        char why[200];
        if (is >= 0 && ie >= 0 && st->site >= syms->syms[is].addr && st->site < syms->syms[ie].addr)
            st->refused = strdup("in init text: freed after boot");
        else if (decode_block(k, syms, pt->event, st->site, st->block, pt->nargs, img_lo, img_hi, st->recipe,
                              why, sizeof why))
            st->refused = strdup(why);
    }
    for (size_t i = 0; i < out->n; i++) {
        sdt_point *pt = &out->p[i];
        if (!pt->group)
            pt->unsafe = fmt("no trace event on it (a bare tracepoint: no group)");
        else if (!strcmp(pt->group, "raw_syscalls"))
            /* syscall_trace_enter/exit run only for a task with SYSCALL_WORK_SYSCALL_TRACEPOINT,
             * which the kernel sets while something is attached to these two: a hidden probe
             * there would miss every call of the others */
            pt->unsafe = fmt("on the system call slow path, which the kernel takes only while a tracer "
                             "of its own is attached (use syscall:::entry and syscall:::return)");
        else if (!pt->nsites)
            pt->unsafe = fmt("no site in the jump table (not used by the kernel's own code)");
        for (uint32_t j = 0; j < pt->nsites && !pt->unsafe; j++) {
            uint64_t off;
            int64_t si = ksym_lookup(syms, pt->sites[j].site, &off);
            if (pt->sites[j].refused)
                pt->unsafe = fmt("site %u of %u (%s+%#llx): %s", j + 1, pt->nsites,
                                 si >= 0 ? ksym_name(syms, (uint32_t)si) : "?", (unsigned long long)off,
                                 pt->sites[j].refused);
        }
    }
    return 0;
nomem:
    sdt_free(out);
    snprintf(err, errlen, "out of memory");
    return -1;
}

void sdt_free(sdt_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        for (uint32_t j = 0; j < t->p[i].nsites; j++)
            free(t->p[i].sites[j].refused);
        free(t->p[i].sites);
        free(t->p[i].event);
        free(t->p[i].group);
        free(t->p[i].unsafe);
    }
    free(t->p);
    memset(t, 0, sizeof *t);
}
