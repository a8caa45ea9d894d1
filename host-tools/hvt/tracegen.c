/* tracegen: see tracegen.h. */
#include "tracegen.h"
#include "kimg.h"
#include "ksym.h"
#include "trace_reader.h"
#include "trace_writer.h"
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    GEN_MAX_DEPTH = 24,        /* calls followed this deep */
    GEN_MAX_STACK = 64,        /* frames incl. jumps */
    GEN_WALK_BUDGET = 4000,    /* instructions per walk */
    GEN_LOOP_LIMIT = 3,        /* backward branch taken at most this often per walk */
    GEN_SPIN_LIMIT = 16,       /* unconditional backward jump: a spin loop after this many */
    GEN_VISIT_BITS = 12,
    GEN_CACHE_BITS = 18,
    GEN_MAX_ENTRIES = 64,
    GEN_NCPUS_DEFAULT = 2,
    GEN_USER_BASE = 0x401000,
    GEN_USER_STACK = 0x7ffd0000f000ull,
    GEN_KERNEL_CR3 = 0x2a0c000,
    GEN_USER_CR3_BASE = 0x10000000,
    GEN_DEFAULT_SLIDE = 0x1e200000, /* a 2 MiB multiple, like KASLR's */
    GEN_RFLAGS_INIT = 0x246,
    GEN_EXTINT_VECTOR = 0xec,       /* LOCAL_TIMER_VECTOR */
    GEN_PF_VECTOR = 14,
    GEN_PF_ERRCODE = 0x6,
    GEN_PROCS = 3,
    GEN_POINTERS = 16,
    GEN_POINTER_STRIDE = 0x1c0,
};
#define GEN_POINTER_BASE 0xffff888003a4c000ull /* direct-map addresses, as kernel data pointers are */
#define GEN_KSTACK 0xffffc90000010000ull       /* a vmalloc'd kernel stack */
#define GEN_KSTACK_JITTER 0xff0ull

typedef struct {
    uint64_t rip;     /* link address, 0 = empty */
    uint8_t len, kind, ok;
    uint64_t target;
    uint32_t writes;  /* HVT_REG bits written */
    int8_t rsp_delta; /* push/pop/call/ret */
} gen_insn;

enum { GK_OTHER, GK_CALL, GK_ICALL, GK_RET, GK_JMP, GK_IJMP, GK_JCC, GK_END };

typedef struct {
    int32_t fid;
    uint8_t by_call;
    uint64_t ret; /* return address for call frames */
} gen_frame;

typedef struct {
    kimg k;
    ksym_table syms;
    csh cs;
    cs_insn *in;
    gen_insn *cache;
    tw_writer *w;
    FILE *truth;
    uint64_t slide, rng, tsc[256], insns, target_insns;
    uint64_t regs[256][HVT_NREGS];
    int64_t cur_pid[256];
    unsigned ncpus;
    uint16_t visits[1 << GEN_VISIT_BITS];
} gen;

static uint64_t rnd(gen *g)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return g->rng;
}

static int reg_index(unsigned r)
{
    switch (r) {
    case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: return HVT_REG_RAX;
    case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: return HVT_REG_RCX;
    case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: return HVT_REG_RDX;
    case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: return HVT_REG_RBX;
    case X86_REG_RBP: case X86_REG_EBP: return HVT_REG_RBP;
    case X86_REG_RSI: case X86_REG_ESI: return HVT_REG_RSI;
    case X86_REG_RDI: case X86_REG_EDI: return HVT_REG_RDI;
    case X86_REG_R8: case X86_REG_R8D: return HVT_REG_R8;
    case X86_REG_R9: case X86_REG_R9D: return HVT_REG_R9;
    case X86_REG_R10: case X86_REG_R10D: return HVT_REG_R10;
    case X86_REG_R11: case X86_REG_R11D: return HVT_REG_R11;
    case X86_REG_R12: case X86_REG_R12D: return HVT_REG_R12;
    case X86_REG_R13: case X86_REG_R13D: return HVT_REG_R13;
    case X86_REG_R14: case X86_REG_R14D: return HVT_REG_R14;
    case X86_REG_R15: case X86_REG_R15D: return HVT_REG_R15;
    case X86_REG_EFLAGS: return HVT_REG_RFLAGS;
    default: return -1;
    }
}

/* Retpoline thunks (__x86_indirect_thunk_*) stand for indirect calls and jumps: the target
 * is in a register the walker does not know, so they are treated as indirect. */
static int is_thunk(gen *g, uint64_t target)
{
    uint64_t off;
    int64_t s = ksym_lookup(&g->syms, target, &off);
    return s >= 0 && strncmp(ksym_name(&g->syms, (uint32_t)s), "__x86_indirect_", 15) == 0;
}

static int intra_call(gen *g, uint64_t rip, uint64_t target)
{
    uint64_t off_from, off_to;
    int64_t a = ksym_lookup(&g->syms, rip, &off_from), b = ksym_lookup(&g->syms, target, &off_to);
    return a >= 0 && a == b && off_to != 0;
}

static const gen_insn *decode(gen *g, uint64_t rip)
{
    gen_insn *c = &g->cache[(rip * UTIL_GOLDEN64 >> (64 - GEN_CACHE_BITS))];
    if (c->rip == rip) return c;
    memset(c, 0, sizeof *c);
    c->rip = rip;
    size_t avail = HVT_CODE_MAX;
    const uint8_t *p = NULL;
    while (avail && !(p = kimg_ptr(&g->k, rip, avail))) avail--;
    if (!p) return c;
    const uint8_t *q = p;
    uint64_t a = rip;
    if (!cs_disasm_iter(g->cs, &q, &avail, &a, g->in)) return c;
    c->ok = 1;
    c->len = (uint8_t)g->in->size;
    cs_detail *d = g->in->detail;
    int is_call = 0, is_ret = 0, is_jump = 0, is_int = 0, is_iret = 0;
    for (int i = 0; i < d->groups_count; i++) {
        is_call |= d->groups[i] == CS_GRP_CALL;
        is_ret |= d->groups[i] == CS_GRP_RET;
        is_jump |= d->groups[i] == CS_GRP_JUMP;
        is_int |= d->groups[i] == CS_GRP_INT;
        is_iret |= d->groups[i] == CS_GRP_IRET;
    }
    int direct = d->x86.op_count == 1 && d->x86.operands[0].type == X86_OP_IMM;
    if (direct) c->target = (uint64_t)d->x86.operands[0].imm;
    unsigned id = g->in->id;
    if (is_iret || is_int || id == X86_INS_SYSRET || id == X86_INS_SYSCALL || id == X86_INS_UD2 ||
        id == X86_INS_INT3 || id == X86_INS_HLT || id == X86_INS_LJMP || id == X86_INS_SYSEXIT)
        c->kind = GK_END;
    else if (is_call) c->kind = direct && !is_thunk(g, c->target) ? GK_CALL : GK_ICALL;
    else if (is_ret) c->kind = GK_RET;
    else if (id == X86_INS_JMP) c->kind = direct && !is_thunk(g, c->target) ? GK_JMP : GK_IJMP;
    else if (is_jump) c->kind = direct ? GK_JCC : GK_IJMP;
    else c->kind = GK_OTHER;
    cs_regs rr, rw;
    uint8_t nr, nw;
    if (cs_regs_access(g->cs, g->in, rr, &nr, rw, &nw) == CS_ERR_OK)
        for (int i = 0; i < nw; i++) {
            int r = reg_index(rw[i]);
            if (r >= 0) c->writes |= 1u << r;
        }
    c->writes &= ~(1u << HVT_REG_RSP);
    if (c->kind == GK_CALL || c->kind == GK_ICALL || id == X86_INS_PUSH || id == X86_INS_PUSHFQ) c->rsp_delta = -8;
    if (c->kind == GK_RET || id == X86_INS_POP || id == X86_INS_POPFQ) c->rsp_delta = 8;
    return c;
}

static int32_t fid_of(gen *g, uint64_t link)
{
    uint64_t off;
    int64_t s = ksym_lookup(&g->syms, link, &off);
    return s >= 0 ? (int32_t)s : -1;
}

static const char *fname(gen *g, int32_t fid)
{
    return fid >= 0 ? ksym_name(&g->syms, (uint32_t)fid) : fid == -2 ? "[user]" : "[unknown]";
}

static void truth_line(gen *g, unsigned cpu, int enter, int depth, int32_t fid)
{
    if (g->truth) fprintf(g->truth, "%3u  %*s%s %s\n", cpu, 2 * depth, "", enter ? "->" : "<-", fname(g, fid));
}

static void truth_level(gen *g, unsigned cpu, const char *why)
{
    if (g->truth) fprintf(g->truth, "%3u  == %s ==\n", cpu, why);
}

static int emit(gen *g, unsigned cpu, uint64_t runtime_rip, const uint8_t *code, uint8_t len, uint64_t cr3,
                uint32_t writes, int rsp_delta)
{
    uint64_t *r = g->regs[cpu];
    r[HVT_REG_RSP] += (uint64_t)(int64_t)rsp_delta;
    /* A register model, not real values: the walker does not execute. Written registers mostly
     * move a little (counters, offsets), sometimes load one of a few kernel pointers or a
     * small integer; RFLAGS takes the values arithmetic usually leaves. */
    static const uint64_t flags[] = {0x246, 0x202, 0x286, 0x297, 0x213, 0x206, 0x282, 0x293};
    for (int i = 0; i < HVT_NREGS; i++) {
        if (!(writes & (1u << i))) continue;
        uint64_t x = rnd(g);
        if (i == HVT_REG_RFLAGS) r[i] = flags[x % (sizeof flags / sizeof *flags)];
        else if (x % 8 < 5) r[i] += (x >> 8) % 64 - 16;
        else if (x % 8 < 7) r[i] = GEN_POINTER_BASE + ((x >> 8) % GEN_POINTERS) * GEN_POINTER_STRIDE;
        else r[i] = (x >> 8) % 4096;
    }
    tw_insn in = {runtime_rip, ++g->tsc[cpu], cr3, {0}, code, len};
    memcpy(in.regs, r, sizeof in.regs);
    g->insns++;
    return tw_insn_add(g->w, cpu, &in);
}

/* Walk real code from `entry` (link address). Truth lines mirror the nest rules (nest.h). */
static int walk(gen *g, unsigned cpu, uint64_t entry)
{
    gen_frame st[GEN_MAX_STACK];
    int depth = 0, calls = 0;
    uint64_t rip = entry;
    memset(g->visits, 0, sizeof g->visits);
    st[depth++] = (gen_frame){fid_of(g, rip), 1, 0};
    truth_line(g, cpu, 1, 0, st[0].fid);
    g->regs[cpu][HVT_REG_RSP] = GEN_KSTACK + (rnd(g) & GEN_KSTACK_JITTER);
    for (int n = 0; n < GEN_WALK_BUDGET; n++) {
        const gen_insn *c = decode(g, rip);
        if (!c->ok) break;
        const uint8_t *bytes = kimg_ptr(&g->k, rip, c->len);
        if (emit(g, cpu, rip + g->slide, bytes, c->len, GEN_KERNEL_CR3, c->writes, c->rsp_delta) != 0) return -1;
        uint64_t next = rip + c->len;
        int event = 0; /* 1 call, 2 ret, 0 flow */
        switch (c->kind) {
        case GK_END: case GK_IJMP: return 0;
        case GK_CALL:
            /* intra-function calls ("call 1f" RSB stuffing) drop their return address by hand:
             * the walker, which does not model RSP, steps over them instead */
            if (calls < GEN_MAX_DEPTH && depth < GEN_MAX_STACK && c->target != next && kimg_ptr(&g->k, c->target, 1) &&
                !intra_call(g, rip, c->target)) {
                st[depth] = (gen_frame){fid_of(g, c->target), 1, next};
                truth_line(g, cpu, 1, depth, st[depth].fid);
                depth++;
                calls++;
                rip = c->target;
                continue;
            }
            break; /* not followed: as if it returned at once */
        case GK_RET: {
            /* pop up to and including the innermost call frame */
            int top_call = depth - 1;
            while (top_call > 0 && !st[top_call].by_call) top_call--;
            if (top_call == 0) return 0; /* returning from the walk's entry: the walk ends */
            uint64_t ret = st[top_call].ret;
            while (depth > top_call) {
                depth--;
                truth_line(g, cpu, 0, depth, st[depth].fid);
            }
            calls--;
            next = ret;
            event = 2;
            break;
        }
        case GK_JMP: {
            /* an endless loop (panic's cpu_relax(), a WARN's spin) ends the walk */
            uint16_t *v = &g->visits[(rip ^ rip >> GEN_VISIT_BITS) & ((1u << GEN_VISIT_BITS) - 1)];
            if (c->target <= rip && ++*v > GEN_SPIN_LIMIT) return 0;
            next = c->target;
            break;
        }
        case GK_JCC: {
            int backward = c->target <= rip;
            uint16_t *v = &g->visits[(rip ^ rip >> GEN_VISIT_BITS) & ((1u << GEN_VISIT_BITS) - 1)];
            /* forward branches mostly skip out-of-line (unlikely) code, as in real runs */
            int take = backward ? (*v < GEN_LOOP_LIMIT && (rnd(g) & 1)) : (rnd(g) & 3) == 0;
            if (take) { next = c->target; if (backward) (*v)++; }
            break;
        }
        default: break;
        }
        (void)event;
        /* flow: control reached `next` without a (followed) call */
        int32_t fid = fid_of(g, next);
        if (fid != st[depth - 1].fid) {
            int i;
            for (i = depth - 2; i >= 0 && st[i].fid != fid; i--) {}
            if (i >= 0) {
                while (depth > i + 1) {
                    depth--;
                    truth_line(g, cpu, 0, depth, st[depth].fid);
                    if (st[depth].by_call) calls--;
                }
            } else if (depth < GEN_MAX_STACK) {
                st[depth] = (gen_frame){fid, 0, 0};
                truth_line(g, cpu, 1, depth, fid);
                depth++;
            } else {
                return 0;
            }
        }
        rip = next;
    }
    return 0;
}

static const char *const proc_comm[GEN_PROCS] = {"init", "sh", "hvtprobe"};

static int syscall_walk(gen *g, unsigned cpu, int proc, uint64_t nr, uint64_t entry)
{
    char why[64];
    int64_t pid = proc + 1;
    uint64_t ucr3 = GEN_USER_CR3_BASE + (uint64_t)proc * 0x1000;
    /* the real tracer marks every switch; we switch before every syscall walk */
    if (tw_switch(g->w, cpu, (uint64_t)pid, (uint64_t)pid, proc_comm[proc], ucr3) != 0) return -1;
    snprintf(why, sizeof why, "switch to %lld/%s", (long long)pid, proc_comm[proc]);
    truth_level(g, cpu, why);
    g->cur_pid[cpu] = pid;
    uint8_t mov[5] = {0xb8, (uint8_t)nr, (uint8_t)(nr >> 8), 0, 0};
    static const uint8_t sys[2] = {0x0f, 0x05};
    uint64_t ubase = GEN_USER_BASE + (uint64_t)proc * 0x10000;
    g->regs[cpu][HVT_REG_RSP] = GEN_USER_STACK - (uint64_t)proc * 0x1000;
    if (emit(g, cpu, ubase, mov, sizeof mov, ucr3, 0, 0) != 0) return -1;
    g->regs[cpu][HVT_REG_RAX] = nr;
    if (g->truth) fprintf(g->truth, "%3u  -> [user]\n", cpu);
    if (emit(g, cpu, ubase + sizeof mov, sys, sizeof sys, ucr3, 1u << HVT_REG_RCX | 1u << HVT_REG_R11, 0) != 0) return -1;
    if (tw_syscall(g->w, cpu, nr) != 0) return -1;
    snprintf(why, sizeof why, "syscall %llu", (unsigned long long)nr);
    truth_level(g, cpu, why);
    return walk(g, cpu, entry);
}

static int event_walk(gen *g, unsigned cpu, uint8_t vector, uint8_t type, int64_t err, uint64_t entry)
{
    char why[64];
    if (tw_event(g->w, cpu, vector, type, err) != 0) return -1;
    if (type == HVT_EV_EXTINT) snprintf(why, sizeof why, "interrupt %u", vector);
    else if (err >= 0) snprintf(why, sizeof why, "exception %u error 0x%llx", vector, (unsigned long long)err);
    else snprintf(why, sizeof why, "exception %u", vector);
    truth_level(g, cpu, why);
    return walk(g, cpu, entry);
}

static int usage(void)
{
    fprintf(stderr,
            "usage: hvt gen [--slide N] [--seed N] [--insns N] [--cpus N] [--truth FILE] [--entry SYM[:syscall=NR|:irq=V|:exc=V]]...\n"
            "               [--record full|flow | --regs R:R..] VMLINUZ OUT.hvt\n"
            "Default entries: entry_SYSCALL_64 (syscall 39), __x64_sys_getppid (110), __x64_sys_getpid (39),\n"
            "asm_sysvec_apic_timer_interrupt (irq 236), asm_exc_page_fault (exc 14). --insns repeats the\n"
            "walks (new branch choices each time) until that many instructions are written.\n"
            "--record/--regs: the record mode of the trace (as hvt trace start's; default full).\n");
    return 2;
}

typedef struct { char name[128]; int kind; uint64_t num; } gen_entry; /* kind: 0 syscall, 1 irq, 2 exc */

static int parse_entry(const char *s, gen_entry *e)
{
    memset(e, 0, sizeof *e);
    const char *colon = strchr(s, ':');
    size_t l = colon ? (size_t)(colon - s) : strlen(s);
    if (l >= sizeof e->name) return -1;
    memcpy(e->name, s, l);
    if (!colon) return 0;
    if (!strncmp(colon + 1, "syscall=", 8)) { e->kind = 0; e->num = strtoull(colon + 9, NULL, 0); }
    else if (!strncmp(colon + 1, "irq=", 4)) { e->kind = 1; e->num = strtoull(colon + 5, NULL, 0); }
    else if (!strncmp(colon + 1, "exc=", 4)) { e->kind = 2; e->num = strtoull(colon + 5, NULL, 0); }
    else return -1;
    return 0;
}

int tracegen_main(int argc, char **argv)
{
    static gen g;
    gen_entry entries[GEN_MAX_ENTRIES];
    int nentries = 0;
    const char *truth = NULL, *in = NULL, *out = NULL;
    uint64_t seed = 1;
    char mode_s[160] = "full", err[200];
    unsigned mode;
    uint32_t regmask;
    memset(&g, 0, sizeof g);
    g.slide = GEN_DEFAULT_SLIDE;
    g.ncpus = GEN_NCPUS_DEFAULT;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
        if (next && !strcmp(a, "--slide")) { g.slide = strtoull(next, NULL, 0); i++; }
        else if (next && !strcmp(a, "--seed")) { seed = strtoull(next, NULL, 0); i++; }
        else if (next && !strcmp(a, "--insns")) { g.target_insns = strtoull(next, NULL, 0); i++; }
        else if (next && !strcmp(a, "--cpus")) { g.ncpus = (unsigned)strtoul(next, NULL, 0); i++; }
        else if (next && !strcmp(a, "--truth")) { truth = next; i++; }
        else if (next && !strcmp(a, "--record")) { snprintf(mode_s, sizeof mode_s, "%s", next); i++; }
        else if (next && !strcmp(a, "--regs")) { snprintf(mode_s, sizeof mode_s, "regs=%s", next); i++; }
        else if (next && !strcmp(a, "--entry")) {
            if (nentries == GEN_MAX_ENTRIES || parse_entry(next, &entries[nentries++])) return usage();
            i++;
        } else if (a[0] == '-') return usage();
        else if (!in) in = a;
        else if (!out) out = a;
        else return usage();
    }
    if (!in || !out || g.ncpus == 0 || g.ncpus > 256 || g.slide % (2u << 20)) return usage();
    if (tr_mode_parse(mode_s, &mode, &regmask, err, sizeof err) != 0) {
        fprintf(stderr, "hvt gen: %s\n", err);
        return usage();
    }
    if (!nentries) {
        static const char *const defaults[] = {"entry_SYSCALL_64:syscall=39", "__x64_sys_getppid:syscall=110",
                                               "__x64_sys_getpid:syscall=39",
                                               "asm_sysvec_apic_timer_interrupt:irq=236",
                                               "asm_exc_page_fault:exc=14"};
        for (size_t i = 0; i < sizeof defaults / sizeof *defaults; i++) parse_entry(defaults[i], &entries[nentries++]);
    }
    g.rng = seed * UTIL_GOLDEN64 | 1; /* xorshift needs a nonzero state */
    if (kimg_load(&g.k, in) != 0 || ksym_extract(&g.k, &g.syms) != 0) return 1;
    int64_t lstar_sym = ksym_find(&g.syms, "entry_SYSCALL_64");
    uint64_t entry_addr[GEN_MAX_ENTRIES];
    for (int i = 0; i < nentries; i++) {
        int64_t s = ksym_find(&g.syms, entries[i].name);
        if (s < 0) {
            fprintf(stderr, "hvt gen: %s: no symbol %s\n", in, entries[i].name);
            return 1;
        }
        entry_addr[i] = g.syms.syms[s].addr;
    }
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &g.cs) != CS_ERR_OK) return 1;
    cs_option(g.cs, CS_OPT_DETAIL, CS_OPT_ON);
    g.in = cs_malloc(g.cs);
    g.cache = calloc((size_t)1 << GEN_CACHE_BITS, sizeof *g.cache);
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    h.ncpus = g.ncpus;
    h.lstar = lstar_sym >= 0 ? g.syms.syms[lstar_sym].addr + g.slide : 0;
    h.build_id_len = (uint8_t)(g.k.build_id_len < HVT_BUILD_ID_MAX ? g.k.build_id_len : HVT_BUILD_ID_MAX);
    memcpy(h.build_id, g.k.build_id, h.build_id_len);
    g.w = tw_open(out, &h, 1);
    if (!g.w || !g.cache || tw_set_mode(g.w, mode, regmask) != 0) return 1;
    if (truth && !(g.truth = fopen(truth, "w"))) {
        perror(truth);
        return 1;
    }
    if (g.truth) fprintf(g.truth, "CPU  FUNCTION\n");
    for (unsigned c = 0; c < g.ncpus; c++) g.regs[c][HVT_REG_RFLAGS] = GEN_RFLAGS_INIT;
    int rc = 0;
    unsigned round = 0;
    do {
        for (int i = 0; i < nentries && rc == 0; i++) {
            unsigned cpu = (round * (unsigned)nentries + (unsigned)i) % g.ncpus;
            const gen_entry *e = &entries[i];
            if (e->kind == 0) rc = syscall_walk(&g, cpu, (int)((round + (unsigned)i) % GEN_PROCS), e->num, entry_addr[i]);
            else rc = event_walk(&g, cpu, (uint8_t)e->num, e->kind == 1 ? HVT_EV_EXTINT : HVT_EV_HWEXC,
                                 e->kind == 1 ? -1 : GEN_PF_ERRCODE, entry_addr[i]);
        }
        round++;
    } while (rc == 0 && g.insns < g.target_insns);
    if (tw_close(g.w) != 0) rc = -1;
    if (g.truth && fclose(g.truth) != 0) rc = -1;
    cs_free(g.in, 1);
    cs_close(&g.cs);
    free(g.cache);
    ksym_free(&g.syms);
    kimg_free(&g.k);
    if (rc) fprintf(stderr, "hvt gen: %s: write failed: %s\n", out, strerror(errno));
    else fprintf(stderr, "hvt gen: %llu instructions, %u rounds\n", (unsigned long long)g.insns, round);
    return rc ? 1 : 0;
}
