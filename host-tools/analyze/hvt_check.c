/*
 * hvt-check - control-flow continuity of a trace: every instruction record must follow the
 * previous one on its CPU as its fall-through, its direct branch target, any target of an
 * indirect transfer (ret, indirect jmp/call, iret, syscall/sysret, int), the same RIP again
 * for a REP string instruction's next iteration, or come after an EVENT / START / GAP marker
 * (the entry of an interrupt or exception, or a new window).
 *   usage: hvt-check [--max-report N] [--allow-gaps] TRACE
 * Prints per-CPU counts (instructions, kernel/user split, events, syscalls, violations, the
 * START/STOP reasons, records/instructions lost in GAPs, first and last instruction address,
 * instructions per record mode)
 * and "violations=N insns=N events=N syscalls=N gaps=N modes=MODE:N,..." (instructions per
 * record mode, then "regs=REG:..." if any were recorded in REGS mode: the registers it
 * carried); exit 1 on violations, gaps (records
 * lost, HVT_MARK_GAP; --allow-gaps: reported only, e.g. a flight recorder's overwritten past)
 * or a damaged file. A START or GAP marker resyncs continuity (a filter's STOP/START pair too).
 */
#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "disasm.h"
#include "trace_reader.h"

#define MAX_CPUS 256

struct cpu_state {
    int have_prev, free_next;
    uint64_t rip, lstar_hint;
    uint8_t code[16], len;
    uint64_t insns, events, syscalls, violations, gaps;
    uint64_t kinsns, lost_records, lost_insns, first_rip, last_rip;
    uint64_t start_reason, stop_reason;
    int starts, stops;
    uint64_t stop_seen;                  /* bit r: a STOP with reason r (r < 64) */
    uint64_t mode_insns[HVT_MODE_COUNT]; /* instructions per record mode */
    uint32_t regs_sets;                  /* the registers REGS mode carried (all its sets) */
};

/* "full:N,flow:N,regs:N" (the modes with instructions) and the REGS sets' registers. */
static void put_modes(char *buf, size_t n, const uint64_t *insns, uint32_t regs)
{
    static const char *const names[HVT_MODE_COUNT] = {"full", "flow", "regs"};
    size_t at = 0;
    buf[0] = 0;
    for (int k = 0; k < HVT_MODE_COUNT && at < n; k++)
        if (insns[k]) at += (size_t)snprintf(buf + at, n - at, "%s%s:%" PRIu64, at ? "," : "", names[k], insns[k]);
    if (!at) snprintf(buf, n, "-");
    else if (insns[HVT_MODE_REGS] && at < n) {
        char m[160];
        snprintf(buf + at, n - at, " %s", tr_mode_name(m, sizeof m, HVT_MODE_REGS, regs));
    }
}

static void put_reason(char *buf, size_t n, int count, uint64_t last)
{
    if (!count)
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%" PRIu64 "%s", last, count > 1 ? "+" : "");
}

enum allowed { A_FALL, A_FALL_OR_TARGET, A_TARGET, A_ANY, A_FALL_OR_SELF };

static enum allowed classify(csh cs, cs_insn *ci, const struct cpu_state *c, uint64_t *target)
{
    const uint8_t *p = c->code;
    size_t n = c->len;
    uint64_t a = c->rip;
    if (!cs_disasm_iter(cs, &p, &n, &a, ci))
        return A_ANY;                           /* undecodable: the guest took #UD (an event) */
    cs_detail *d = ci->detail;
    int jump = 0, call = 0, ret = 0, other = 0;
    for (int i = 0; i < d->groups_count; i++) {
        switch (d->groups[i]) {
        case CS_GRP_JUMP: jump = 1; break;
        case CS_GRP_CALL: call = 1; break;
        case CS_GRP_RET: case CS_GRP_IRET: ret = 1; break;
        case CS_GRP_INT: other = 1; break;
        }
    }
    switch (ci->id) {
    case X86_INS_SYSCALL: case X86_INS_SYSRET: case X86_INS_SYSENTER: case X86_INS_SYSEXIT:
    case X86_INS_UD2: case X86_INS_INT3: case X86_INS_INTO: case X86_INS_INT:
        return A_ANY;
    default: break;
    }
    if (ret || other)
        return A_ANY;
    if (jump || call) {
        if (d->x86.op_count == 1 && d->x86.operands[0].type == X86_OP_IMM) {
            *target = (uint64_t)d->x86.operands[0].imm;
            /* unconditional jmp and call must go to the target; conditional ones either way */
            if (ci->id == X86_INS_JMP || ci->id == X86_INS_CALL)
                return A_TARGET;
            return A_FALL_OR_TARGET;
        }
        return A_ANY;                           /* indirect */
    }
    for (int i = 0; i < 4; i++)
        if (d->x86.prefix[i] == X86_PREFIX_REP || d->x86.prefix[i] == X86_PREFIX_REPNE)
            return A_FALL_OR_SELF;
    return A_FALL;
}

int main(int argc, char **argv)
{
    int max_report = 20, allow_gaps = 0;
    const char *path = NULL;
    const char *usage = "usage: hvt-check [--max-report N] [--allow-gaps] TRACE\n";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-report") && i + 1 < argc) max_report = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--allow-gaps")) allow_gaps = 1;
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else { fputs(usage, stderr); return 2; }
    }
    if (!path) { fputs(usage, stderr); return 2; }
    tr_reader *r = tr_open(path);
    if (!r) return 1;
    csh cs;
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) return 1;
    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
    cs_insn *ci = cs_malloc(cs);
    static struct cpu_state cpus[MAX_CPUS];
    tr_rec rec;
    int rc;
    uint64_t total_v = 0, total_i = 0, total_e = 0, total_s = 0, total_g = 0;
    uint64_t total_m[HVT_MODE_COUNT] = {0};
    uint32_t total_regs = 0;
    char modes[256];
    while ((rc = tr_next(r, &rec)) == 1) {
        struct cpu_state *c = &cpus[rec.cpu % MAX_CPUS];
        if (rec.kind != TR_INSN) {
            if (rec.kind == HVT_MARK_EVENT) { c->events++; c->free_next = 1; }
            if (rec.kind == HVT_MARK_START || rec.kind == HVT_MARK_GAP) c->free_next = 1;
            if (rec.kind == HVT_MARK_GAP) {
                c->gaps++;
                c->lost_records += rec.a;
                c->lost_insns += rec.b;
            }
            /* Filters suspend and resume recording inside one window: not a new window. */
            if (rec.kind == HVT_MARK_START && rec.a != HVT_REASON_FILTER) { c->starts++; c->start_reason = rec.a; }
            if (rec.kind == HVT_MARK_STOP && rec.a != HVT_REASON_FILTER) {
                c->stops++;
                c->stop_reason = rec.a;
                if (rec.a < 64) c->stop_seen |= 1ull << rec.a;
            }
            if (rec.kind == HVT_MARK_SYSCALL) c->syscalls++;
            continue;
        }
        c->insns++;
        if (rec.mode < HVT_MODE_COUNT) c->mode_insns[rec.mode]++;
        if (rec.mode == HVT_MODE_REGS) c->regs_sets |= rec.regs_known;
        if (disasm_is_kernel(rec.rip))
            c->kinsns++;
        if (c->insns == 1)
            c->first_rip = rec.rip;
        c->last_rip = rec.rip;
        if (c->have_prev && !c->free_next) {
            uint64_t target = 0, fall = c->rip + c->len;
            enum allowed al = classify(cs, ci, c, &target);
            int ok = al == A_ANY ||
                     (al == A_FALL && rec.rip == fall) ||
                     (al == A_TARGET && rec.rip == target) ||
                     (al == A_FALL_OR_TARGET && (rec.rip == fall || rec.rip == target)) ||
                     (al == A_FALL_OR_SELF && (rec.rip == fall || rec.rip == c->rip));
            if (!ok) {
                c->violations++;
                if ((int)total_v++ < max_report)
                    printf("violation: cpu %u tsc %" PRIu64 ": %#" PRIx64 " (%s %s) -> %#" PRIx64 "\n",
                           rec.cpu, rec.tsc, c->rip, ci->mnemonic, ci->op_str, rec.rip);
            }
        }
        c->have_prev = 1;
        c->free_next = 0;
        c->rip = rec.rip;
        c->len = rec.code_len;
        memcpy(c->code, rec.code, rec.code_len);
    }
    for (int i = 0; i < MAX_CPUS; i++) {
        struct cpu_state *c = &cpus[i];
        if (!c->insns && !c->events) continue;
        char sr[24], pr[24];
        put_reason(sr, sizeof sr, c->starts, c->start_reason);
        put_reason(pr, sizeof pr, c->stops, c->stop_reason);
        char seen[200] = "-";
        put_modes(modes, sizeof modes, c->mode_insns, c->regs_sets);
        for (unsigned b = 0, at = 0; b < 64; b++)
            if (c->stop_seen >> b & 1)
                at += (unsigned)snprintf(seen + at, sizeof seen - at, "%s%u", at ? "," : "", b);
        printf("cpu %d: insns=%" PRIu64 " events=%" PRIu64 " syscalls=%" PRIu64 " violations=%" PRIu64
               " kernel=%" PRIu64 " user=%" PRIu64 " start=%s stop=%s lost_records=%" PRIu64
               " lost_insns=%" PRIu64 " first=%#" PRIx64 " last=%#" PRIx64 " modes=%s stop_reasons=%s\n",
               i, c->insns, c->events, c->syscalls, c->violations, c->kinsns, c->insns - c->kinsns,
               sr, pr, c->lost_records, c->lost_insns, c->first_rip, c->last_rip, modes, seen);
        total_i += c->insns; total_e += c->events; total_s += c->syscalls; total_g += c->gaps;
        for (int k = 0; k < HVT_MODE_COUNT; k++) total_m[k] += c->mode_insns[k];
        total_regs |= c->regs_sets;
    }
    int damaged = rc < 0 || tr_damaged(r);
    put_modes(modes, sizeof modes, total_m, total_regs);
    printf("violations=%" PRIu64 " insns=%" PRIu64 " events=%" PRIu64 " syscalls=%" PRIu64 " gaps=%" PRIu64 " modes=%s%s\n",
           total_v, total_i, total_e, total_s, total_g, modes, damaged ? " damaged=1" : "");
    cs_free(ci, 1);
    cs_close(&cs);
    tr_close(r);
    return (total_v || (total_g && !allow_gaps) || damaged) ? 1 : 0;
}
