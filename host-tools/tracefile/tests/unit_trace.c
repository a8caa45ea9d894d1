/* unit_trace: round trips through the trace writer and reader (no kernel needed).
 * Random instruction records and every marker kind on several CPUs, enough to span many
 * chunks; then reading back field by field, seeking to every chunk, a truncated copy (no
 * footer: recovered by scanning), and damaged copies (must fail cleanly, never crash).
 * Record modes: the same records written again with the mode changed on every CPU mid-stream
 * (FULL, FLOW, REGS, FULL: tw_set_mode), read in file order, merged and from every chunk: the
 * same records, each instruction with its mode and only its mode's registers known. */
#include "trace_reader.h"
#include "trace_writer.h"
#include "util.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

enum { NCPUS = 3, NRECS = 600000, MAX_CODES = 3000 };

typedef struct {
    uint8_t kind, cpu, code_len, vector, ev_type;
    uint64_t rip, tsc, cr3, a, b;
    int64_t errcode;
    uint64_t regs[HVT_NREGS];
    uint8_t code[HVT_CODE_MAX];
    char comm[HVT_COMM_MAX + 1];
} exp_rec;

static void check(int ok, const char *what)
{
    if (ok) check_passed++;
    else {
        check_failed++;
        fprintf(stderr, "FAIL: %s\n", what);
    }
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static exp_rec *recs;
static int write_errors;
static size_t nrecs;
static uint8_t codes[MAX_CODES][HVT_CODE_MAX], code_lens[MAX_CODES];

static void make_trace(const char *path)
{
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    h.ncpus = NCPUS;
    h.lstar = 0xffffffff99e00080ull;
    tw_writer *w = tw_open(path, &h, 1);
    check(w != NULL, "tw_open");
    for (int i = 0; i < MAX_CODES; i++) {
        code_lens[i] = (uint8_t)(1 + rnd() % HVT_CODE_MAX);
        for (int j = 0; j < code_lens[i]; j++) codes[i][j] = (uint8_t)rnd();
    }
    uint64_t rip[NCPUS], tsc[NCPUS], cr3[NCPUS], regs[NCPUS][HVT_NREGS];
    memset(regs, 0, sizeof regs);
    for (int c = 0; c < NCPUS; c++) {
        rip[c] = 0xffffffff81000000ull + (uint64_t)c * 0x100000;
        tsc[c] = 1000 * (uint64_t)c;
        cr3[c] = 0x1000;
    }
    recs = calloc(NRECS, sizeof *recs);
    for (nrecs = 0; nrecs < NRECS; nrecs++) {
        exp_rec *e = &recs[nrecs];
        unsigned c = (unsigned)(rnd() % NCPUS);
        e->cpu = (uint8_t)c;
        uint64_t r = rnd() % 1000;
        if (r < 985) { /* instruction */
            int ci = (int)(rnd() % (r < 900 ? 50 : MAX_CODES)); /* mostly a hot set: predictor hits */
            if (rnd() % 8 == 0) rip[c] += rnd() % 2 ? rnd() % 4096 : -(rnd() % 4096);
            if (rnd() % 3000 == 0) rip[c] = 0x400000 + rnd() % 0x100000; /* user space */
            if (rnd() % 500 == 0) cr3[c] = (rnd() & 0xfffff000) | (rnd() & 0xfff);
            tsc[c] += rnd() % 10 == 0 ? rnd() % 1000 : 1;
            int nch = (int)(rnd() % 4);
            for (int k = 0; k < nch; k++) {
                int reg = (int)(rnd() % HVT_NREGS);
                regs[c][reg] = rnd() % 2 ? regs[c][reg] + rnd() % 64 : rnd();
            }
            e->kind = TR_INSN;
            e->rip = rip[c];
            e->tsc = tsc[c];
            e->cr3 = cr3[c];
            e->code_len = code_lens[ci];
            memcpy(e->code, codes[ci], e->code_len);
            memcpy(e->regs, regs[c], sizeof e->regs);
            tw_insn in = {e->rip, e->tsc, e->cr3, {0}, e->code, e->code_len};
            memcpy(in.regs, e->regs, sizeof in.regs);
            if (tw_insn_add(w, c, &in) != 0) write_errors++;
            rip[c] += e->code_len;
            continue;
        }
        e->kind = (uint8_t)(1 + rnd() % HVT_MARK_TIME); /* CONTEXT is the writer's own */
        e->tsc = tsc[c];
        switch (e->kind) {
        case HVT_MARK_EVENT:
            e->vector = (uint8_t)rnd();
            e->ev_type = (uint8_t)(rnd() % 7);
            e->errcode = rnd() % 2 ? -1 : (int64_t)(rnd() & 0xffff);
            tw_event(w, c, e->vector, e->ev_type, e->errcode);
            break;
        case HVT_MARK_SYSCALL: e->a = rnd() % 450; tw_syscall(w, c, e->a); break;
        case HVT_MARK_VMEXIT: e->a = rnd() % 70; e->b = rnd(); tw_vmexit(w, c, e->a, e->b); break;
        case HVT_MARK_SWITCH:
            e->a = rnd() % 40000;
            e->b = e->a;
            snprintf(e->comm, sizeof e->comm, "proc%llu-%s", (unsigned long long)e->a, rnd() % 2 ? "abcdefghijkl" : "");
            e->comm[HVT_COMM_MAX] = 0;
            e->rip = rnd();
            tw_switch(w, c, e->a, e->b, e->comm, e->rip);
            break;
        case HVT_MARK_START: case HVT_MARK_STOP: e->a = rnd() % 5; tw_startstop(w, c, e->kind == HVT_MARK_START, e->a); break;
        case HVT_MARK_GAP: e->a = rnd() % 100; e->b = rnd() % 10000; tw_gap(w, c, e->a, e->b); break;
        case HVT_MARK_TIME: tsc[c] += 100000; e->a = tsc[c]; e->tsc = tsc[c]; tw_time(w, c, e->a); break;
        }
    }
    check(write_errors == 0, "every instruction record is accepted");
    check(tw_close(w) == 0, "tw_close");
}

/* Per-CPU expected sequences, for comparing what the reader yields (file order differs). */
static size_t *cpu_idx[NCPUS], cpu_n[NCPUS];
static long context_seen;

static int same(const exp_rec *e, const tr_rec *r)
{
    if (e->kind != r->kind || e->cpu != r->cpu) return 0;
    if (e->kind == TR_INSN)
        return e->rip == r->rip && e->tsc == r->tsc && e->cr3 == r->cr3 && e->code_len == r->code_len &&
               memcmp(e->code, r->code, e->code_len) == 0 && memcmp(e->regs, r->regs, sizeof e->regs) == 0;
    switch (e->kind) {
    case HVT_MARK_EVENT: return e->vector == r->vector && e->ev_type == r->ev_type && e->errcode == r->errcode;
    case HVT_MARK_SWITCH: return e->a == r->a && e->b == r->b && strcmp(e->comm, r->comm) == 0 && e->rip == r->switch_cr3;
    case HVT_MARK_VMEXIT: case HVT_MARK_GAP: return e->a == r->a && e->b == r->b;
    case HVT_MARK_TIME: return e->a == r->a && e->tsc == r->tsc;
    default: return e->a == r->a;
    }
}

/* Read from the reader's current position; compare per CPU against expected suffixes.
 * start[c] is the expected index to start from per CPU, or SIZE_MAX: "find it from the first
 * record" (for seeks). Returns records read, or -1 on mismatch. */
static long read_compare(tr_reader *r, int from_seek, uint64_t *prev_regs_ok)
{
    size_t pos[NCPUS];
    int started[NCPUS] = {0};
    for (int c = 0; c < NCPUS; c++) pos[c] = 0;
    uint64_t last[NCPUS][HVT_NREGS];
    int seen[NCPUS] = {0};
    tr_rec rec;
    long n = 0;
    int rc;
    int changed_ok = 1;
    while ((rc = tr_next(r, &rec)) > 0) {
        unsigned c = rec.cpu;
        if (c >= NCPUS) return -1;
        if (rec.kind == HVT_MARK_CONTEXT) { /* inserted by the writer: must restate the last SWITCH */
            long k = started[c] ? (long)pos[c] - 1 : -1;
            if (!started[c] && from_seek) { /* position unknown yet: find it from the next record */
                n++;
                context_seen++;
                continue;
            }
            while (k >= 0 && recs[cpu_idx[c][k]].kind != HVT_MARK_SWITCH) k--;
            if (k < 0 || recs[cpu_idx[c][k]].a != rec.a || strcmp(recs[cpu_idx[c][k]].comm, rec.comm) != 0) {
                fprintf(stderr, "CONTEXT at cpu %u pos %zu does not restate the last switch\n", c, pos[c]);
                return -1;
            }
            context_seen++;
            n++;
            continue;
        }
        if (!started[c]) {
            started[c] = 1;
            if (from_seek) { /* locate: the reader's chunk starts somewhere in this CPU's sequence */
                size_t k;
                for (k = 0; k < cpu_n[c] && !same(&recs[cpu_idx[c][k]], &rec); k++) {}
                pos[c] = k;
            }
        }
        if (pos[c] >= cpu_n[c] || !same(&recs[cpu_idx[c][pos[c]]], &rec)) {
            fprintf(stderr, "mismatch at cpu %u expected record %zu (kind %u vs %u)\n", c, pos[c],
                    recs[cpu_idx[c][pos[c] < cpu_n[c] ? pos[c] : 0]].kind, rec.kind);
            return -1;
        }
        if (rec.kind == TR_INSN) {
            uint32_t want = 0;
            for (int i = 0; i < HVT_NREGS; i++)
                if (!seen[c] || last[c][i] != rec.regs[i]) want |= 1u << i;
            if (want != rec.changed) changed_ok = 0;
            memcpy(last[c], rec.regs, sizeof last[c]);
            seen[c] = 1;
        }
        pos[c]++;
        n++;
    }
    if (prev_regs_ok) *prev_regs_ok = (uint64_t)changed_ok;
    return rc < 0 ? -1 - n : n;
}

/* The mode in force at record i of the replay (tw_set_mode at these quarters of the records). */
#define MODE_REGS_SET (1u << HVT_REG_RAX | 1u << HVT_REG_RSP | 1u << HVT_REG_RFLAGS)
static unsigned mode_at(size_t i, uint32_t *known)
{
    static const unsigned plan[4] = {HVT_MODE_FULL, HVT_MODE_FLOW, HVT_MODE_REGS, HVT_MODE_FULL};
    unsigned m = plan[i * 4 / nrecs];
    *known = m == HVT_MODE_FULL ? (1u << HVT_NREGS) - 1 : m == HVT_MODE_FLOW ? 0 : MODE_REGS_SET;
    return m;
}

static void replay_modes(const char *path)
{
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    h.ncpus = NCPUS;
    tw_writer *w = tw_open(path, &h, 1);
    int err = !w;
    if (w) tw_set_chunk_bytes(w, 256 << 10);   /* many chunks, each to be read from its start */
    uint32_t known;
    for (size_t i = 0; i < nrecs && w; i++) {
        const exp_rec *e = &recs[i];
        unsigned c = e->cpu;
        if (i && mode_at(i, &known) != mode_at(i - 1, &known))
            err |= tw_set_mode(w, mode_at(i, &known), MODE_REGS_SET) != 0;
        switch (e->kind) {
        case TR_INSN: {
            tw_insn in = {e->rip, e->tsc, e->cr3, {0}, e->code, e->code_len};
            memcpy(in.regs, e->regs, sizeof in.regs);
            err |= tw_insn_add(w, c, &in) != 0;
            break;
        }
        case HVT_MARK_EVENT: tw_event(w, c, e->vector, e->ev_type, e->errcode); break;
        case HVT_MARK_SYSCALL: tw_syscall(w, c, e->a); break;
        case HVT_MARK_VMEXIT: tw_vmexit(w, c, e->a, e->b); break;
        case HVT_MARK_SWITCH: tw_switch(w, c, e->a, e->b, e->comm, e->rip); break;
        case HVT_MARK_START: case HVT_MARK_STOP: tw_startstop(w, c, e->kind == HVT_MARK_START, e->a); break;
        case HVT_MARK_GAP: tw_gap(w, c, e->a, e->b); break;
        case HVT_MARK_TIME: tw_time(w, c, e->a); break;
        }
    }
    check(!err && tw_close(w) == 0, "modes: the records written again with the mode changed mid-stream");
}

/* Like same(), registers only where the mode knows them; the mode as planned. */
static int same_in_mode(size_t i, const tr_rec *r)
{
    const exp_rec *e = &recs[i];
    if (e->kind != TR_INSN) return same(e, r);
    uint32_t known;
    unsigned m = mode_at(i, &known);
    if (e->kind != r->kind || e->cpu != r->cpu || e->rip != r->rip || e->tsc != r->tsc || e->cr3 != r->cr3 ||
        e->code_len != r->code_len || memcmp(e->code, r->code, e->code_len) || r->mode != m ||
        r->regs_known != known || (r->changed & ~known))
        return 0;
    for (int k = 0; k < HVT_NREGS; k++)
        if (known >> k & 1 && r->regs[k] != e->regs[k]) return 0;
    return 1;
}

/* read_compare for the replay: MODE and CONTEXT markers skipped; records found by position
 * (from_seek: the first record of each CPU locates it). -1 on a mismatch. */
static long mode_compare(tr_reader *r, int from_seek, long *modes_seen)
{
    size_t pos[NCPUS] = {0};
    int started[NCPUS] = {0};
    tr_rec rec;
    long n = 0;
    int rc;
    while ((rc = tr_next(r, &rec)) > 0) {
        unsigned c = rec.cpu;
        if (c >= NCPUS) return -1;
        if (rec.kind == HVT_MARK_MODE) { (*modes_seen)++; continue; }
        if (rec.kind == HVT_MARK_CONTEXT) continue;
        if (!started[c]) {
            started[c] = 1;
            if (from_seek)
                for (pos[c] = 0; pos[c] < cpu_n[c] && recs[cpu_idx[c][pos[c]]].tsc < rec.tsc; pos[c]++) {}
            while (from_seek && pos[c] < cpu_n[c] && !same_in_mode(cpu_idx[c][pos[c]], &rec)) pos[c]++;
        }
        if (pos[c] >= cpu_n[c] || !same_in_mode(cpu_idx[c][pos[c]], &rec)) {
            fprintf(stderr, "modes: mismatch at cpu %u expected record %zu (kind %u vs %u, mode %u known %#x)\n", c,
                    pos[c], recs[cpu_idx[c][pos[c] < cpu_n[c] ? pos[c] : 0]].kind, rec.kind, rec.mode, rec.regs_known);
            return -1;
        }
        pos[c]++;
        n++;
    }
    return rc < 0 ? -1 : n;
}

int main(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/hvt_unit_trace.%d.hvt", (int)getpid());
    make_trace(path);
    for (size_t i = 0; i < nrecs; i++) cpu_n[recs[i].cpu]++;
    for (int c = 0; c < NCPUS; c++) { cpu_idx[c] = malloc(cpu_n[c] * sizeof(size_t)); cpu_n[c] = 0; }
    for (size_t i = 0; i < nrecs; i++) cpu_idx[recs[i].cpu][cpu_n[recs[i].cpu]++] = i;

    /* 1. whole file, sequential */
    tr_reader *r = tr_open(path);
    check(r != NULL, "tr_open");
    if (!r) return 1;
    check(!tr_recovered(r), "complete file uses its index");
    check(tr_header(r)->lstar == 0xffffffff99e00080ull, "header survives");
    uint64_t changed_ok = 0;
    context_seen = 0;
    long n = read_compare(r, 0, &changed_ok);
    check(n - context_seen == (long)nrecs, "every record reads back equal, in per-CPU order");
    check(context_seen > 0, "chunks after a switch start by restating the task (CONTEXT)");
    check(changed_ok == 1, "changed-register masks match value differences");
    size_t nch = tr_chunk_count(r), nrec_chunks = 0;
    uint64_t insns = 0;
    for (size_t i = 0; i < nrecs; i++) insns += recs[i].kind == TR_INSN;
    check(tr_total_insns(r) == insns, "index instruction counts add up");
    /* 2. seek to every RECORDS chunk and read to the end */
    int seek_ok = 1;
    for (size_t i = 0; i < nch; i++) {
        if (tr_chunk(r, i)->kind != HVT_CHUNK_RECORDS) continue;
        nrec_chunks++;
        tr_seek_chunk(r, i);
        if (read_compare(r, 1, NULL) < 0) seek_ok = 0;
    }
    check(nrec_chunks > 6, "the trace spans many chunks");
    check(seek_ok, "reading from any chunk gives the matching suffix");
    /* 2b. merged by time: per-CPU order kept, tsc never decreases overall */
    check(tr_set_merge(r) == 0, "tr_set_merge");
    context_seen = 0;
    n = read_compare(r, 0, &changed_ok);
    check(n - context_seen == (long)nrecs && changed_ok == 1, "merged iteration yields every record, per-CPU order kept");
    tr_set_merge(r);
    tr_rec rec;
    uint64_t last_tsc = 0;
    int mono = 1;
    while (tr_next(r, &rec) > 0) {
        if (rec.tsc < last_tsc) mono = 0;
        last_tsc = rec.tsc;
    }
    check(mono, "merged iteration is in time order");
    tr_close(r);

    /* 3. on-disk size per instruction */
    util_buf b;
    util_read_file(path, &b);
    fprintf(stderr, "unit_trace: %zu records, %llu instructions, %zu bytes (%.2f B/insn; random registers)\n", nrecs,
            (unsigned long long)insns, b.len, (double)b.len / (double)insns);

    /* 4. truncated copies: recovered up to the last whole chunk, error names the offset */
    int trunc_ok = 1;
    for (int k = 1; k <= 8; k++) {
        size_t len = b.len * (size_t)k / 9;
        tr_reader *t = tr_open_mem("truncated", b.data, len);
        if (!t) continue; /* a cut inside the header is a clean open failure */
        if (!tr_recovered(t)) trunc_ok = 0;
        if (read_compare(t, 0, NULL) == -1) trunc_ok = 0; /* prefix must still match */
        tr_close(t);
    }
    check(trunc_ok, "truncated files read their intact prefix");
    /* 5. damaged copies: flip bytes all over; must never crash, errors are reported */
    uint8_t *dmg = malloc(b.len);
    int clean = 0;
    for (int k = 0; k < 200; k++) {
        memcpy(dmg, b.data, b.len);
        for (int j = 0; j < 4; j++) dmg[rnd() % b.len] ^= (uint8_t)(1 + rnd() % 255);
        FILE *saved = stderr;
        stderr = fopen("/dev/null", "w");
        tr_reader *t = tr_open_mem("damaged", dmg, b.len);
        tr_rec rec;
        if (t) while (tr_next(t, &rec) > 0) {}
        tr_close(t);
        fclose(stderr);
        stderr = saved;
        clean++;
    }
    check(clean == 200, "damaged files never crash the reader");
    free(dmg);
    util_buf_free(&b);
    remove(path);

    /* 6. the same records with the record mode changed mid-stream on every CPU */
    replay_modes(path);
    r = tr_open(path);
    check(r != NULL, "modes: tr_open");
    if (!r) return 1;
    long modes_seen = 0;
    n = mode_compare(r, 0, &modes_seen);
    check(n == (long)nrecs, "modes: every record reads back in file order (instructions in their mode, known registers equal)");
    check(modes_seen >= 3 * NCPUS, "modes: MODE markers yielded (changes and restatements)");
    check(tr_total_insns(r) == insns, "modes: the index counts every instruction");
    seek_ok = 1;
    nrec_chunks = 0;
    for (size_t i = 0; i < tr_chunk_count(r); i++) {
        if (tr_chunk(r, i)->kind != HVT_CHUNK_RECORDS) continue;
        nrec_chunks++;
        tr_seek_chunk(r, i);
        if (mode_compare(r, 1, &modes_seen) < 0) { if (seek_ok) fprintf(stderr, "modes: seek to chunk %zu fails\n", i); seek_ok = 0; }
    }
    check(seek_ok && nrec_chunks > 6, "modes: reading from any chunk knows its mode (restated at chunk starts)");
    check(tr_set_merge(r) == 0 && mode_compare(r, 0, &modes_seen) == (long)nrecs, "modes: merged iteration reads back every record");
    tr_close(r);
    util_read_file(path, &b);
    fprintf(stderr, "unit_trace: modes replay: %zu bytes\n", b.len);
    util_buf_free(&b);
    remove(path);
    return check_summary("unit_trace");
}
