/* unit_trace: round trips through the trace writer and reader (no kernel needed).
 * Random instruction records and every marker kind on several CPUs, enough to span many
 * chunks; then reading back field by field, seeking to every chunk, a truncated copy (no
 * footer: recovered by scanning), and damaged copies (must fail cleanly, never crash).
 * Record modes: the same records written again with the mode changed on every CPU mid-stream
 * (FULL, FLOW, REGS, FULL: tw_set_mode), read in file order, merged and from every chunk: the
 * same records, each instruction with its mode and only its mode's registers known.
 * Version 4's forms (test_v4): hand-built payloads in files of a chosen version - the U32 short
 * record, the one-byte RFLAGS field, REPEAT's register deltas in FULL and REGS - read back
 * value by value, and their corrupt forms refused at their record's offset. */
#include "trace_reader.h"
#include "trace_varint.h"
#include "trace_writer.h"
#include "util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
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

/* ---- version 4's forms, by hand ---- */

/* A payload being built: bytes, and varints / zigzag varints. */
typedef struct { uint8_t b[512]; size_t n; } pbuf;
static void pb(pbuf *p, int n, ...)
{
    va_list ap;
    va_start(ap, n);
    while (n--) p->b[p->n++] = (uint8_t)va_arg(ap, int);
    va_end(ap);
}
static void pv(pbuf *p, uint64_t v) { p->n = (size_t)(tv_put(p->b + p->n, v) - p->b); }
static void pz(pbuf *p, int64_t v) { pv(p, tv_zig(v)); }

/* Code ids of the hand-built files: id 0 is 2 bytes, id 1 is 3 bytes. */
#define V4_L0 2
#define V4_L1 3
/* Every short record needs rip = expected_rip with a predicted id: the prologue runs id 0 at
 * rip 0, id 1 at rip 2, and jumps back to 0; v4_back() jumps back to 0 again (after id 1). */
static void v4_prologue(pbuf *p)
{
    pb(p, 2, HVT_INSN_CODE, 0);
    pb(p, 2, HVT_INSN_CODE, 1);
    pb(p, 1, HVT_INSN_RIP);
    pz(p, -(V4_L0 + V4_L1));
}
static void v4_back(pbuf *p)
{
    pb(p, 1, HVT_INSN_RIP);
    pz(p, -(V4_L0 + V4_L1));
}

/* What the reader yielded: every record (registers copied: regs[] is the reader's), the
 * error it printed, tr_next's last return. */
typedef struct {
    int n, rc;
    struct { uint8_t kind, mode; uint64_t rip, tsc; uint32_t changed, known; uint64_t regs[HVT_NREGS]; } r[64];
    char err[512];
} v4_read;

/* The payload as the one RECORDS chunk (nrec records, ninsn instructions) of a file of
 * `version` (header, a CODE chunk of ids 0 and 1), read through. */
static void v4_file(uint16_t version, const pbuf *p, uint32_t nrec, uint32_t ninsn, v4_read *out)
{
    static uint8_t file[2048];
    static const uint8_t code[] = { V4_L0, 0x66, 0x90, V4_L1, 0x0f, 0x1f, 0x00 };
    memset(out, 0, sizeof *out);
    hvt_trace_file_hdr h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, HVT_TRACE_MAGIC, sizeof h.magic);
    h.version = version;
    h.hdr_size = sizeof h;
    h.ncpus = 1;
    size_t off = 0;
    memcpy(file, &h, sizeof h);
    off += sizeof h;
    hvt_trace_chunk_hdr c;
    memset(&c, 0, sizeof c);
    c.magic = HVT_CHUNK_MAGIC;
    c.kind = HVT_CHUNK_CODE;
    c.payload_size = c.raw_size = sizeof code;
    c.nrecords = 2;
    c.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), code, sizeof code);
    memcpy(file + off, &c, sizeof c);
    memcpy(file + off + sizeof c, code, sizeof code);
    off += sizeof c + sizeof code;
    memset(&c, 0, sizeof c);
    c.magic = HVT_CHUNK_MAGIC;
    c.kind = HVT_CHUNK_RECORDS;
    c.payload_size = c.raw_size = (uint32_t)p->n;
    c.nrecords = nrec;
    c.ninsns = ninsn;
    c.first_tsc = 100;
    c.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), p->b, (uInt)p->n);
    memcpy(file + off, &c, sizeof c);
    memcpy(file + off + sizeof c, p->b, p->n);
    off += sizeof c + p->n;
    FILE *saved = stderr;
    stderr = fmemopen(out->err, sizeof out->err - 1, "w");
    setvbuf(stderr, NULL, _IONBF, 0);
    tr_reader *r = tr_open_mem("v4", file, off);
    if (!r) {
        out->rc = -9;
    } else {
        tr_rec rec;
        while ((out->rc = tr_next(r, &rec)) > 0 && out->n < 64) {
            out->r[out->n].kind = rec.kind;
            out->r[out->n].mode = rec.mode;
            out->r[out->n].rip = rec.rip;
            out->r[out->n].tsc = rec.tsc;
            out->r[out->n].changed = rec.kind == TR_INSN ? rec.changed : 0;
            out->r[out->n].known = rec.regs_known;
            if (rec.kind == TR_INSN) memcpy(out->r[out->n].regs, rec.regs, sizeof out->r[0].regs);
            out->n++;
        }
        tr_close(r);
    }
    fclose(stderr);
    stderr = saved;
}

/* The reader refused the payload at record byte `at` with `what` in its message. */
static int v4_refused(const v4_read *o, size_t at, const char *what)
{
    char want[48];
    snprintf(want, sizeof want, "record byte %zu of this chunk", at);
    return o->rc < 0 && strstr(o->err, want) && strstr(o->err, what);
}

#define R(x) (1u << HVT_REG_##x)

static void test_v4(void)
{
    v4_read o;
    pbuf p;
    /* The header's packing: the six arithmetic flags, both ways. */
    int packs = hvt_rflags_unpack(0x3f) == HVT_RFLAGS_ARITH;
    for (unsigned b = 0; b < 0x40; b++) packs &= hvt_rflags_pack(hvt_rflags_unpack(b)) == b;
    CHECK(packs, "v4: hvt_rflags_unpack(0x3f) is CF|PF|AF|ZF|SF|OF and pack undoes unpack");

    /* 1. U32: RAX first a 64-bit value, then 0x89abcdef as 4 raw bytes: zero-extended (the
     *    high half cleared, bit 31 not sign-extended); then RCX with a packed RFLAGS. */
    memset(&p, 0, sizeof p);
    pb(&p, 3, HVT_INSN_CODE | HVT_INSN_REGS, 0, R(RAX));
    pz(&p, (int64_t)0xffffffff00000005ull);
    pb(&p, 2, HVT_INSN_CODE, 1);
    pb(&p, 1, HVT_INSN_RIP);
    pz(&p, -(V4_L0 + V4_L1));
    size_t u32_at = p.n;
    pb(&p, 5, HVT_INSN_SHORT | HVT_SHORT_U32 | HVT_REG_RAX, 0xef, 0xcd, 0xab, 0x89);
    v4_back(&p);
    pb(&p, 6, HVT_INSN_SHORT | HVT_SHORT_U32 | HVT_SHORT_RFLAGS | HVT_REG_R9, 1, 0, 0, 0x80, 0x09);
    v4_file(4, &p, 6, 6, &o);
    CHECK(o.rc == 0 && o.n == 6, "v4 U32: six instructions read (rc %d, %d read) %s", o.rc, o.n, o.err);
    CHECK(o.r[0].regs[HVT_REG_RAX] == 0xffffffff00000005ull && o.r[3].regs[HVT_REG_RAX] == 0x89abcdefull &&
              o.r[3].changed == R(RAX) && o.r[3].rip == V4_L0,
          "v4 U32: RAX 0x%llx then 0x%llx (wanted 0x89abcdef, zero-extended), changed %#x",
          (unsigned long long)o.r[0].regs[HVT_REG_RAX], (unsigned long long)o.r[3].regs[HVT_REG_RAX], o.r[3].changed);
    CHECK(o.r[5].regs[HVT_REG_R9] == 0x80000001ull && o.r[5].regs[HVT_REG_RFLAGS] == 0x41 &&
              o.r[5].regs[HVT_REG_RAX] == 0x89abcdefull && o.r[5].changed == (R(R9) | R(RFLAGS)),
          "v4 U32 with packed RFLAGS: R9 0x%llx RFLAGS 0x%llx changed %#x",
          (unsigned long long)o.r[5].regs[HVT_REG_R9], (unsigned long long)o.r[5].regs[HVT_REG_RFLAGS], o.r[5].changed);
    /* U32 cut at the chunk end: 3 of its 4 bytes, then none */
    p.n = u32_at + 4;
    v4_file(4, &p, 4, 4, &o);
    CHECK(v4_refused(&o, u32_at, "truncated 32-bit register value"), "v4 U32 with 3 bytes: refused at byte %zu: %s", u32_at, o.err);
    p.n = u32_at + 1;
    v4_file(4, &p, 4, 4, &o);
    CHECK(v4_refused(&o, u32_at, "truncated 32-bit register value"), "v4 U32 with no byte: refused: %s", o.err);
    /* the U32 bit in a version 3 file: reserved there, as it was */
    p.n = u32_at + 5;
    v4_file(3, &p, 4, 4, &o);
    CHECK(v4_refused(&o, u32_at, "reserved bit set in a short record"), "v3 file with a U32 short record: refused: %s", o.err);

    /* 2. RFLAGS fields, long and short: WIDE, packed (XOR), WIDE down again. */
    memset(&p, 0, sizeof p);
    pb(&p, 3, HVT_INSN_CODE | HVT_INSN_RFLAGS, 0, HVT_RFLAGS_WIDE);
    pz(&p, 0x202);                                          /* 0 -> 0x202 */
    pb(&p, 3, HVT_INSN_CODE | HVT_INSN_RFLAGS, 1, 0x09);    /* ^= CF|ZF: 0x243 */
    v4_back(&p);
    pb(&p, 1, HVT_INSN_SHORT | HVT_SHORT_RFLAGS | HVT_REG_RDX);
    pz(&p, -3);
    pb(&p, 1, 0x3f);                                        /* ^= all six: 0xa96 */
    v4_back(&p);
    pb(&p, 2, HVT_INSN_SHORT | HVT_SHORT_RFLAGS | HVT_REG_RDX, 2);
    pb(&p, 1, HVT_RFLAGS_WIDE);
    pz(&p, -0xa00);                                         /* 0x96 */
    v4_back(&p);
    pb(&p, 3, HVT_INSN_REGS | HVT_INSN_RFLAGS, R(RBX), 4);  /* RBX 2, and RFLAGS ^= AF */
    pb(&p, 1, 0x04);
    v4_file(4, &p, 8, 8, &o);
    CHECK(o.rc == 0 && o.n == 8, "v4 RFLAGS: eight instructions read (rc %d, %d read) %s", o.rc, o.n, o.err);
    CHECK(o.r[0].regs[HVT_REG_RFLAGS] == 0x202 && o.r[1].regs[HVT_REG_RFLAGS] == 0x243 &&
              o.r[3].regs[HVT_REG_RFLAGS] == 0xa96 && o.r[3].regs[HVT_REG_RDX] == (uint64_t)-3 &&
              o.r[5].regs[HVT_REG_RFLAGS] == 0x96 && o.r[5].regs[HVT_REG_RDX] == (uint64_t)-2 &&
              o.r[7].regs[HVT_REG_RFLAGS] == 0x86 && o.r[7].regs[HVT_REG_RBX] == 2,
          "v4 RFLAGS: 0x%llx 0x%llx 0x%llx 0x%llx 0x%llx (wanted 0x202 0x243 0xa96 0x96 0x86)",
          (unsigned long long)o.r[0].regs[HVT_REG_RFLAGS], (unsigned long long)o.r[1].regs[HVT_REG_RFLAGS],
          (unsigned long long)o.r[3].regs[HVT_REG_RFLAGS], (unsigned long long)o.r[5].regs[HVT_REG_RFLAGS],
          (unsigned long long)o.r[7].regs[HVT_REG_RFLAGS]);
    CHECK(o.r[1].changed == R(RFLAGS) && o.r[3].changed == (R(RDX) | R(RFLAGS)) && o.r[7].changed == (R(RBX) | R(RFLAGS)),
          "v4 RFLAGS: changed %#x %#x %#x", o.r[1].changed, o.r[3].changed, o.r[7].changed);
    /* the same bytes' first record in a version 3 file: a plain zigzag varint (0x40 = +32) */
    memset(&p, 0, sizeof p);
    pb(&p, 3, HVT_INSN_CODE | HVT_INSN_RFLAGS, 0, HVT_RFLAGS_WIDE);
    pb(&p, 3, HVT_INSN_CODE | HVT_INSN_RFLAGS, 1, 0x09);
    v4_file(3, &p, 2, 2, &o);
    CHECK(o.rc == 0 && o.n == 2 && o.r[0].regs[HVT_REG_RFLAGS] == 32 && o.r[1].regs[HVT_REG_RFLAGS] == 32 - 5,
          "v3 RFLAGS stays a zigzag varint: %llx %llx %s", (unsigned long long)o.r[0].regs[HVT_REG_RFLAGS],
          (unsigned long long)o.r[1].regs[HVT_REG_RFLAGS], o.err);

    /* 3. The corrupt RFLAGS fields: 0 (no change), 0x41..0xff, in long and short records;
     *    cut at the chunk end; WIDE with its varint cut. */
    int bad_long = 1, bad_short = 1;
    for (unsigned b = 0; b < 0x100; b++) {
        if (b && b <= HVT_RFLAGS_WIDE) continue;
        char what[32];
        snprintf(what, sizeof what, "RFLAGS field byte 0x%02x", b);
        memset(&p, 0, sizeof p);
        pb(&p, 2, HVT_INSN_CODE, 0);
        pb(&p, 5, HVT_INSN_CODE | HVT_INSN_RFLAGS, 0, b, 0x01, 0x01); /* bytes after: an old reader's varint ends */
        v4_file(4, &p, 2, 2, &o);
        if (!v4_refused(&o, 2, what)) {
            if (bad_long) fprintf(stderr, "long record, RFLAGS byte 0x%02x: rc %d: %s\n", b, o.rc, o.err);
            bad_long = 0;
        }
        memset(&p, 0, sizeof p);
        v4_prologue(&p);
        size_t at = p.n;
        pb(&p, 5, HVT_INSN_SHORT | HVT_SHORT_RFLAGS | HVT_REG_RSI, 2, b, 0x01, 0x01);
        v4_file(4, &p, 4, 4, &o);
        if (!v4_refused(&o, at, what)) {
            if (bad_short) fprintf(stderr, "short record, RFLAGS byte 0x%02x: rc %d: %s\n", b, o.rc, o.err);
            bad_short = 0;
        }
    }
    CHECK(bad_long, "v4: a long record's RFLAGS field 0x00 and 0x41..0xff refused, the byte named");
    CHECK(bad_short, "v4: a short record's RFLAGS field 0x00 and 0x41..0xff refused, the byte named");
    memset(&p, 0, sizeof p);
    pb(&p, 2, HVT_INSN_CODE | HVT_INSN_RFLAGS, 0);
    v4_file(4, &p, 1, 1, &o);
    CHECK(v4_refused(&o, 0, "truncated RFLAGS field"), "v4: an RFLAGS field cut at the chunk end: %s", o.err);
    pb(&p, 2, HVT_RFLAGS_WIDE, 0x80);
    v4_file(4, &p, 1, 1, &o);
    CHECK(v4_refused(&o, 0, "truncated varint"), "v4: WIDE with its varint cut: %s", o.err);

    /* 4. REPEAT in FULL after a long record that moved several registers (a REP MOVSB's
     *    iteration: RCX down, RSI and RDI up, here RFLAGS too), then a REPEAT after the REPEAT:
     *    each repeated instruction adds the same deltas; RAX, left alone, stays. */
    memset(&p, 0, sizeof p);
    pb(&p, 2, HVT_INSN_CODE | HVT_INSN_REGS, 0);
    pv(&p, R(RAX) | R(RCX) | R(RSI) | R(RDI));
    pz(&p, 7); pz(&p, 10); pz(&p, 0x1000); pz(&p, 0x2000);
    pb(&p, 2, HVT_INSN_RIP | HVT_INSN_REGS | HVT_INSN_RFLAGS, tv_zig(-V4_L0));
    pv(&p, R(RCX) | R(RSI) | R(RDI));
    pz(&p, -1); pz(&p, 1); pz(&p, 1);
    pb(&p, 1, HVT_RFLAGS_WIDE);                             /* RFLAGS +0x202 */
    pz(&p, 0x202);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 3, 0);
    pb(&p, 2, HVT_TAG_MARKER | HVT_MARK_SYSCALL, 1);        /* a marker between: no instruction */
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 1, 0);
    v4_file(4, &p, 5, 6, &o);
    CHECK(o.rc == 0 && o.n == 7, "v4 REPEAT full: 6 instructions and a SYSCALL (rc %d, %d read) %s", o.rc, o.n, o.err);
    int rep_ok = o.n == 7;
    for (int i = 1; i < 7 && rep_ok; i++) {
        int k = i < 5 ? i : i - 1;                      /* the instruction's number: 1..5 */
        if (i == 5) { rep_ok &= o.r[i].kind == HVT_MARK_SYSCALL; continue; }
        rep_ok &= o.r[i].kind == TR_INSN && o.r[i].rip == 0 && o.r[i].tsc == 100 + 1 + (uint64_t)k &&
                  o.r[i].regs[HVT_REG_RCX] == 10 - (uint64_t)k && o.r[i].regs[HVT_REG_RSI] == 0x1000 + (uint64_t)k &&
                  o.r[i].regs[HVT_REG_RDI] == 0x2000 + (uint64_t)k && o.r[i].regs[HVT_REG_RFLAGS] == 0x202 * (uint64_t)k &&
                  o.r[i].regs[HVT_REG_RAX] == 7 && o.r[i].changed == (R(RCX) | R(RSI) | R(RDI) | R(RFLAGS)) &&
                  o.r[i].known == (1u << HVT_NREGS) - 1 && o.r[i].mode == HVT_MODE_FULL;
        if (!rep_ok) {
            fprintf(stderr, "v4 REPEAT full: record %d: rip %llu tsc %llu rcx %llu rsi %#llx rflags %#llx changed %#x\n", i,
                    (unsigned long long)o.r[i].rip, (unsigned long long)o.r[i].tsc,
                    (unsigned long long)o.r[i].regs[HVT_REG_RCX], (unsigned long long)o.r[i].regs[HVT_REG_RSI],
                    (unsigned long long)o.r[i].regs[HVT_REG_RFLAGS], o.r[i].changed);
            break;
        }
    }
    CHECK(rep_ok, "v4 REPEAT full: each repeated instruction (REPEAT 3, then REPEAT 1 after it) adds the last record's "
                  "deltas (RCX -1, RSI +1, RDI +1, RFLAGS +0x202), RAX stays, changed is that record's set");
    /* the same REPEAT in a version 3 file: the instruction again, no register (as before) */
    memset(&p, 0, sizeof p);
    pb(&p, 4, HVT_INSN_CODE | HVT_INSN_REGS, 0, R(RCX), tv_zig(10));
    pb(&p, 4, HVT_INSN_RIP | HVT_INSN_REGS, tv_zig(-V4_L0), R(RCX), tv_zig(-1));
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 2, 0);
    v4_file(3, &p, 3, 4, &o);
    CHECK(o.rc == 0 && o.n == 4 && o.r[3].regs[HVT_REG_RCX] == 9 && o.r[3].changed == 0 && o.r[2].changed == 0,
          "v3 REPEAT in FULL repeats no register delta (rcx %llu changed %#x) %s",
          (unsigned long long)o.r[3].regs[HVT_REG_RCX], o.r[3].changed, o.err);
    /* REPEAT after a short record: its delta (U32: new - old) again */
    memset(&p, 0, sizeof p);
    v4_prologue(&p);
    pb(&p, 5, HVT_INSN_SHORT | HVT_SHORT_U32 | HVT_REG_R8, 0x10, 0, 0, 0);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 2, 0);
    v4_file(4, &p, 5, 6, &o);
    CHECK(o.rc == 0 && o.n == 6 && o.r[5].regs[HVT_REG_R8] == 0x30 && o.r[5].rip == V4_L0 && o.r[5].changed == R(R8),
          "v4 REPEAT after a U32 short record: R8 0x10, 0x20, 0x30 (got 0x%llx) %s",
          (unsigned long long)o.r[5].regs[HVT_REG_R8], o.err);
    /* REPEAT still needs an instruction of the chunk (or since a GAP) before it */
    memset(&p, 0, sizeof p);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 1, 0);
    v4_file(4, &p, 1, 1, &o);
    CHECK(v4_refused(&o, 0, "REPEAT with no instruction"), "v4 REPEAT at the chunk start: refused: %s", o.err);
    memset(&p, 0, sizeof p);
    pb(&p, 4, HVT_INSN_CODE | HVT_INSN_REGS, 0, R(RCX), 2);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_GAP, 0, 0);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 1, 0);
    v4_file(4, &p, 3, 2, &o);
    CHECK(v4_refused(&o, 7, "REPEAT with no instruction"), "v4 REPEAT right after a GAP: refused: %s", o.err);

    /* 5. REPEAT in REGS {RCX, RDI}: the set's deltas again, only the set known */
    memset(&p, 0, sizeof p);
    pb(&p, 2, HVT_TAG_MARKER | HVT_MARK_MODE, HVT_MODE_REGS);
    pv(&p, R(RCX) | R(RDI));
    pb(&p, 2, HVT_INSN_CODE | HVT_INSN_REGS, 0);
    pv(&p, R(RCX) | R(RDI));
    pz(&p, 5); pz(&p, 0x100);
    pb(&p, 2, HVT_INSN_RIP | HVT_INSN_REGS, tv_zig(-V4_L0));
    pv(&p, R(RCX) | R(RDI));
    pz(&p, -1); pz(&p, 8);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 2, 0);
    v4_file(4, &p, 4, 4, &o);
    CHECK(o.rc == 0 && o.n == 5 && o.r[4].regs[HVT_REG_RCX] == 2 && o.r[4].regs[HVT_REG_RDI] == 0x118 &&
              o.r[3].regs[HVT_REG_RCX] == 3 && o.r[3].regs[HVT_REG_RDI] == 0x110 && o.r[4].changed == (R(RCX) | R(RDI)) &&
              o.r[4].known == (R(RCX) | R(RDI)) && o.r[4].mode == HVT_MODE_REGS,
          "v4 REPEAT regs: RCX 4, 3, 2 and RDI 0x108, 0x110, 0x118 (got %llu 0x%llx, changed %#x known %#x) %s",
          (unsigned long long)o.r[4].regs[HVT_REG_RCX], (unsigned long long)o.r[4].regs[HVT_REG_RDI], o.r[4].changed,
          o.r[4].known, o.err);
    /* and in FLOW: no register known, none changed (as before) */
    memset(&p, 0, sizeof p);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_MODE, HVT_MODE_FLOW, 0);
    pb(&p, 2, HVT_INSN_CODE, 0);
    pb(&p, 3, HVT_TAG_MARKER | HVT_MARK_REPEAT, 2, 0);
    v4_file(4, &p, 3, 3, &o);
    CHECK(o.rc == 0 && o.n == 4 && o.r[3].changed == 0 && o.r[3].known == 0 && o.r[3].mode == HVT_MODE_FLOW,
          "v4 REPEAT flow: no register (changed %#x known %#x) %s", o.r[3].changed, o.r[3].known, o.err);
}

/* The record-mode syntax (tr_mode_parse), which hvt trace start --regs also takes. */
static void test_mode_parse(void)
{
    static const struct { const char *s; int ok; unsigned mode; uint32_t mask; } cases[] = {
        { "full", 1, HVT_MODE_FULL, (1u << HVT_NREGS) - 1 }, { "flow", 1, HVT_MODE_FLOW, 0 },
        { "regs=rax", 1, HVT_MODE_REGS, 1u << HVT_REG_RAX },
        { "regs=rdi:rax:rflags", 1, HVT_MODE_REGS, 1u << HVT_REG_RDI | 1u << HVT_REG_RAX | 1u << HVT_REG_RFLAGS },
        { "regs=", 0, 0, 0 }, { "regs=rax:", 0, 0, 0 }, { "regs=:rax", 0, 0, 0 },
        { "regs=rax::rdi", 0, 0, 0 }, { "regs=rax:eax", 0, 0, 0 }, { "regs", 0, 0, 0 }, { "fulll", 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned mode = 99;
        uint32_t mask = 0;
        char err[160] = "";
        int rc = tr_mode_parse(cases[i].s, &mode, &mask, err, sizeof err);
        int ok = cases[i].ok ? rc == 0 && mode == cases[i].mode && mask == cases[i].mask : rc != 0 && err[0];
        if (!ok) fprintf(stderr, "mode '%s': rc %d mode %u mask %#x err '%s'\n", cases[i].s, rc, mode, mask, err);
        check(ok, "tr_mode_parse takes the valid lists and names what is wrong in the others");
    }
}

int main(void)
{
    test_mode_parse();
    test_v4();
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
