/* test_rec_enc: the hypervisor's record encoder (trace/step/rec_enc.h, the inline rec_insn every
 * step runs) against the host's reader (host-tools/tracefile/trace_reader.c) and the collector's
 * syntax check (trace_scan.c): random instruction streams with changed registers of every size
 * (compared in full or only among candidates, as the MTF fast path passes them; a chunk's first
 * record always in full), CR3 switches, RIP jumps, loops, REP-style repeats of one instruction,
 * code-id changes at a RIP, markers (SYSCALL, TIME, GAP) and chunk boundaries are encoded,
 * written as a trace file (trace_chunkw) and read back; every field the reader reports must
 * equal what was encoded.
 * The same stream is encoded in every record mode (format version 3): FULL, FLOW (straight-line
 * instructions folded into RUN markers, repeats into REPEAT), REGS with a register set, and
 * MIXED (the mode changed at random, mid-chunk). Each must read back as the same instructions
 * (rip, code id, cr3, tsc), the same markers, and the registers the mode carries equal to the
 * stream's (regs_known as the mode says). Boundary cases: a REPEAT past the u16 count (65535),
 * a RUN whose count needs its high byte, and hand-made malformed chunks every check of the
 * reader and the scanner must refuse.
 *   test_rec_enc [SEED] [RECORDS]      prints "rec_enc: N passed, M failed" */
#include "rec_enc.h"
#include "trace_chunkw.h"
#include "trace_reader.h"
#include "trace_scan.h"
#include "trace_varint.h"
#include "util.h"
#include "rand_regs.h"
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define NCODES   64
#define CAP      (64 * 1024)          /* small chunks: many boundaries */
#define KIND_MODE 0xff                /* a stream entry: the MIXED encoding changes mode here */
#define ALL      REC_REGS_ALL

struct want {
    uint8_t kind;                     /* TR_INSN, HVT_MARK_* or KIND_MODE */
    uint64_t rip, cr3, tsc, a, b;     /* KIND_MODE: a = mode, b = mask */
    uint32_t id, cand;
    uint64_t regs[HVT_NREGS];
};

static uint8_t code[NCODES * 16], lens[NCODES];
static size_t clen;
static char path[] = "/tmp/test_rec_enc.XXXXXX";
static hvt_trace_file_hdr fh;

/* The encoder's chunk as a RECORDS chunk of the file, as the sink sends it; the collector's
 * scanner must count exactly what the encoder counted. */
static int put_records(tcw *w, const struct rec_enc *e, long *scan_bad)
{
    ts_summary s;
    char err[128] = "counts differ";
    if (ts_scan_records(e->buf, e->len, &s, err, sizeof err) != 0 || s.records != e->nrecords ||
        s.insns != e->ninsns) {
        if ((*scan_bad)++ < 3)
            fprintf(stderr, "rec_enc: scan of a chunk: %s records %u/%u insns %u/%u\n", err, s.records,
                    e->nrecords, s.insns, e->ninsns);
    }
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_RECORDS;
    ch.nrecords = e->nrecords;
    ch.ninsns = e->ninsns;
    ch.first_tsc = e->first_tsc;
    ch.last_tsc = rec_tsc(e);
    if (tcw_chunk(w, &ch, e->buf, e->len)) {
        fprintf(stderr, "%s\n", tcw_error(w));
        return -1;
    }
    return 0;
}

static tcw *new_file(void)
{
    tcw *w = tcw_create(path, &fh, 1);
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_CODE;
    ch.nrecords = NCODES;
    if (!w || tcw_chunk(w, &ch, code, clen)) return NULL;
    return w;
}

static uint32_t mode_mask(unsigned mode, uint32_t regs) { return mode == HVT_MODE_FULL ? ALL : mode == HVT_MODE_FLOW ? 0 : regs; }

/* The stream: mostly straight on (the next instruction at the fall-through), loops back to a
 * recent RIP, runs of the same instruction again (a REP string instruction's iterations), far
 * jumps, markers, and (for MIXED only) mode changes. */
static size_t make_stream(struct want *want, size_t n)
{
    uint64_t regs[HVT_NREGS] = { 0 }, rip = 0xffffffff81000000ull, cr3 = 0x1000, tsc = 1000;
    uint64_t hist[8] = { rip };
    size_t nw = 0, rep_left = 0;
    uint32_t last_id = 0, rep_cand = 0;
    uint64_t rep_delta[HVT_NREGS] = { 0 };
    int have_last = 0;
    for (size_t i = 0; i < n; i++) {
        struct want x = { 0 };
        unsigned what = (unsigned)(rnd() % 1000);
        if (what < 25) {
            x.kind = HVT_MARK_SYSCALL;
            x.a = rnd() % 500;
        } else if (what < 40) {
            x.kind = HVT_MARK_TIME;
            x.a = tsc = tsc + 1 + rnd() % 100000;
        } else if (what < 44) {
            x.kind = HVT_MARK_GAP;
            x.a = rnd() % 100;
            x.b = rnd() % 1000;
            have_last = 0;
        } else if (what < 52) {
            x.kind = KIND_MODE;
            x.a = rnd() % HVT_MODE_COUNT;
            x.b = x.a == HVT_MODE_REGS ? (uint32_t)(rnd() & ALL) : 0;
        } else {
            x.kind = TR_INSN;
            unsigned how = (unsigned)(rnd() % 100);
            int again = 0;
            if (rep_left) {
                rep_left--;
                again = have_last;
            } else if (how < 3 && have_last) {
                rep_left = rnd() % 4 == 0 ? rnd() % 300 : rnd() % 5;   /* a REP instruction's iterations */
                again = 1;
                rep_cand = rnd() % 2 ? REC_CAND_REP : 0;                /* (decoded as one, or not) */
                memset(rep_delta, 0, sizeof rep_delta);
                for (unsigned k = (unsigned)(rnd() % 4); k; k--) {
                    unsigned r = (unsigned)(rnd() % HVT_NREGS);
                    rep_delta[r] = change(regs[r]) - regs[r];
                }
            } else if (how < 13) {
                rip = hist[rnd() % 8];                                  /* a loop's back edge */
            } else if (how < 16) {
                rip = (rnd() % 2 ? 0xffffffff81000000ull : 0x400000ull) + rnd() % 0x100000;
            }
            if (again) {
                for (size_t k = nw; k-- > 0;)
                    if (want[k].kind == TR_INSN) { rip = want[k].rip; break; }
                x.id = last_id;
            } else {
                x.id = rnd() % 64 == 0 ? (uint32_t)(rnd() % NCODES) : (uint32_t)(rip % NCODES);
            }
            if (rnd() % 200 == 0) cr3 = (rnd() & 0xffffff000ull) | (rnd() % 4096);
            unsigned nchg = (unsigned)(rnd() % 4);
            uint32_t chg = 0;
            if (again && rnd() % 8) {
                /* A REP string iteration: the registers step as in the last one (REPEAT in
                 * FULL and REGS when decoded as one), now and then otherwise. */
                for (unsigned r = 0; r < HVT_NREGS; r++) {
                    regs[r] += rep_delta[r];
                    chg |= rep_delta[r] ? 1u << r : 0;
                }
            } else
            for (unsigned k = 0; k < nchg; k++) {
                unsigned r = (unsigned)(rnd() % HVT_NREGS);
                regs[r] = change(regs[r]);
                chg |= 1u << r;
            }
            /* The candidates the fast path would pass: a superset of what changed (a decoded
             * write set), sometimes all (the full step). */
            x.cand = rnd() % 10 == 0 ? ALL : (chg | ((uint32_t)(rnd() & rnd()) & ALL));
            if (again || rep_left)
                x.cand |= rep_cand;
            x.rip = rip;
            x.cr3 = cr3;
            x.tsc = ++tsc;
            memcpy(x.regs, regs, sizeof regs);
            hist[rnd() % 8] = rip;
            last_id = x.id;
            have_last = 1;
            rip += lens[x.id];
        }
        want[nw++] = x;
    }
    return nw;
}

/* Encode the stream in one mode (MIXED: -1, following the stream's mode entries) into the
 * file; *bytes = payload bytes. A full chunk is written and a new one begun, as the sink does. */
static int encode(const struct want *want, size_t nw, int mode, uint32_t regs, size_t cap, uint64_t *bytes,
                  long *scan_bad)
{
    static struct rec_enc e;
    static uint8_t buf[1 << 20];
    tcw *w = new_file();
    if (!w || cap > sizeof buf) return -1;
    memset(&e, 0, sizeof e);
    uint64_t tsc = 1000;
    *bytes = 0;
    rec_set_mode(&e, mode < 0 ? HVT_MODE_FULL : (unsigned)mode, regs);
    rec_begin(&e, buf, cap, tsc);
    for (size_t i = 0; i < nw; i++) {
        const struct want *x = &want[i];
        if (x->kind == KIND_MODE && mode >= 0) continue;
        if (x->kind == TR_INSN) tsc = x->tsc;
        if (x->kind == HVT_MARK_TIME) tsc = x->a;
        int rc = -1;
        for (int tries = 0; tries < 2 && rc; tries++) {
            switch (x->kind) {
            case TR_INSN:
                rc = rec_insn(&e, x->rip, x->id, lens[x->id], x->cr3, x->regs, x->regs[HVT_REG_RFLAGS], x->cand);
                break;
            case HVT_MARK_SYSCALL: rc = rec_syscall(&e, x->a); break;
            case HVT_MARK_TIME: rc = rec_time(&e, x->a); break;
            case HVT_MARK_GAP: rc = rec_gap(&e, x->a, x->b); break;
            case KIND_MODE: rc = rec_set_mode(&e, (unsigned)x->a, (uint32_t)x->b); break;
            }
            if (rc == 0) break;
            *bytes += e.len;
            if (put_records(w, &e, scan_bad)) return -1;
            rec_begin(&e, buf, cap, tsc - (x->kind == TR_INSN));
        }
        if (rc) return -1;
    }
    *bytes += e.len;
    if (e.len && put_records(w, &e, scan_bad)) return -1;
    if (tcw_finish(w, &fh) || tcw_close(w)) return -1;
    return 0;
}

/* Read the file back and compare with the stream. */
static int compare(const struct want *want, size_t nw, int mode, uint32_t regs, const char *name)
{
    tr_reader *r = tr_open(path);
    if (!r) { fprintf(stderr, "rec_enc %s: reader refused the file\n", name); return 1; }
    size_t k = 0, bad = 0;
    unsigned cur_mode = mode < 0 ? HVT_MODE_FULL : (unsigned)mode;
    uint32_t cur_mask = mode_mask(cur_mode, regs);
    tr_rec rec;
    int rc;
    while ((rc = tr_next(r, &rec)) == 1) {
        if (rec.kind == HVT_MARK_MODE) continue;    /* restated at chunk starts, or a change */
        while (k < nw && want[k].kind == KIND_MODE) {
            if (mode < 0) {
                cur_mode = (unsigned)want[k].a;
                cur_mask = mode_mask(cur_mode, (uint32_t)want[k].b);
            }
            k++;
        }
        if (k >= nw) { bad++; break; }
        const struct want *x = &want[k++];
        int ok = rec.kind == x->kind;
        if (ok && x->kind == TR_INSN) {
            ok = rec.rip == x->rip && rec.cr3 == x->cr3 && rec.code_id == x->id && rec.tsc == x->tsc &&
                 rec.code_len == lens[x->id] && rec.mode == cur_mode && rec.regs_known == cur_mask &&
                 !(rec.changed & ~rec.regs_known);
            for (int i = 0; ok && i < HVT_NREGS; i++)
                if (cur_mask >> i & 1) ok = rec.regs[i] == x->regs[i];
        } else if (ok) {
            ok = rec.a == x->a && (x->kind != HVT_MARK_GAP || rec.b == x->b);
        }
        if (!ok && getenv("REC_DUMP") && !bad) for (size_t j = k > 8 ? k - 8 : 0; j < k + 2 && j < nw; j++) fprintf(stderr, "  want %zu: kind %u rip %#" PRIx64 " id %u\n", j, want[j].kind, want[j].rip, want[j].id);
        if (!ok && bad++ < 5)
            fprintf(stderr, "rec_enc %s: record %zu: kind %u/%u rip %#" PRIx64 "/%#" PRIx64 " id %u/%u tsc %" PRIu64
                    "/%" PRIu64 " mode %u/%u known %#x/%#x\n", name, k - 1, rec.kind, x->kind, rec.rip, x->rip,
                    rec.code_id, x->id, rec.tsc, x->tsc, rec.mode, cur_mode, rec.regs_known, cur_mask);
    }
    while (k < nw && want[k].kind == KIND_MODE) k++;
    if (rc < 0 || k != nw) {
        fprintf(stderr, "rec_enc %s: read %zu of %zu records (rc %d)\n", name, k, nw, rc);
        bad++;
    }
    tr_close(r);
    return bad != 0;
}

/* One hand-made RECORDS chunk (after the code chunk) in a file of the given version: how many
 * records the reader yields before its end (-1: it reported an error), and what the scanner
 * says (0 ok, -1 refused). */
static int one_chunk(const uint8_t *rec, size_t len, uint32_t nrecords, uint32_t ninsns, uint16_t version,
                     int *scan)
{
    tcw *w = new_file();
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_RECORDS;
    ch.nrecords = nrecords;
    ch.ninsns = ninsns;
    tcw_chunk(w, &ch, rec, len);
    tcw_finish(w, &fh);
    tcw_close(w);
    if (version != HVT_TRACE_VERSION) {          /* an older writer's file: patch the header */
        FILE *f = fopen(path, "r+b");
        fseek(f, offsetof(hvt_trace_file_hdr, version), SEEK_SET);
        fwrite(&version, 2, 1, f);
        fclose(f);
    }
    ts_summary s;
    char err[128];
    *scan = ts_scan_records(rec, len, &s, err, sizeof err);
    tr_reader *r = tr_open(path);
    if (!r) return -2;
    tr_rec one;
    int n = 0, rc;
    while ((rc = tr_next(r, &one)) == 1) n++;
    tr_close(r);
    unlink(path);
    return rc < 0 ? -1 : n;
}

int main(int argc, char **argv)
{
    if (argc > 1) rng = strtoull(argv[1], 0, 0) | 1;
    size_t n = argc > 2 ? strtoull(argv[2], 0, 0) : 200000;
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 2; }
    close(fd);
    memset(&fh, 0, sizeof fh);
    fh.ncpus = 1;
    util_err_quiet = 1;
    /* The code dictionary: NCODES entries of 1..15 bytes. */
    for (int i = 0; i < NCODES; i++) {
        lens[i] = (uint8_t)(1 + rnd() % 15);
        code[clen++] = lens[i];
        for (int k = 0; k < lens[i]; k++) code[clen++] = (uint8_t)rnd();
    }
    struct want *want = calloc(n + 64, sizeof *want);
    size_t nw = make_stream(want, n);
    size_t ninsn = 0;
    for (size_t i = 0; i < nw; i++) ninsn += want[i].kind == TR_INSN;

    /* 1. The stream in every mode. */
    static const struct { const char *name; int mode; uint32_t regs; } modes[] = {
        { "full", HVT_MODE_FULL, 0 }, { "flow", HVT_MODE_FLOW, 0 },
        { "regs", HVT_MODE_REGS, 1u << HVT_REG_RAX | 1u << HVT_REG_RSP | 1u << HVT_REG_RDI | 1u << HVT_REG_RFLAGS },
        { "regs-gpr", HVT_MODE_REGS, 1u << HVT_REG_RCX | 1u << HVT_REG_R15 },
        { "mixed", -1, 0 },
    };
    for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
        uint64_t bytes;
        long scan_bad = 0;
        int rc = encode(want, nw, modes[m].mode, modes[m].regs, CAP, &bytes, &scan_bad);
        CHECK(rc == 0, "%s: encoded", modes[m].name);
        CHECK(scan_bad == 0, "%s: the scanner's counts equal the encoder's in every chunk (%ld not)", modes[m].name, scan_bad);
        CHECK(rc == 0 && compare(want, nw, modes[m].mode, modes[m].regs, modes[m].name) == 0,
              "%s: read back as the stream (rip, code id, cr3, tsc, markers, known registers)", modes[m].name);
        printf("rec_enc: %-8s %zu instructions, %.3f bytes per instruction\n", modes[m].name, ninsn,
               (double)bytes / (double)ninsn);
        unlink(path);
    }

    /* 2. Boundaries of the u16 counts: one instruction run 140000 times (REPEATs of 65535,
     * 65535, 8929); a loop of 1000 straight-line instructions twice (a RUN of 999: the count's
     * high byte). Both in FLOW, in one big chunk, compared like the streams above. */
    {
        size_t nb = 140000 + 2000 + 8;
        struct want *b = calloc(nb, sizeof *b);
        size_t k = 0;
        uint64_t tsc = 1000, rip = 0x401000;
        for (int i = 0; i < 140000; i++)
            b[k++] = (struct want){ .kind = TR_INSN, .rip = 0x400000, .cr3 = 0x1000, .tsc = ++tsc, .id = 3, .cand = ALL };
        uint32_t id = 0;               /* a short instruction: 1000 of them in one page, so no
                                           two share a predictor slot */
        while (lens[id] > 4) id++;
        for (int pass = 0; pass < 2; pass++) {
            rip = 0x401000;
            for (int i = 0; i < 1000; i++) {
                b[k++] = (struct want){ .kind = TR_INSN, .rip = rip, .cr3 = 0x1000, .tsc = ++tsc, .id = id, .cand = ALL };
                rip += lens[id];
            }
        }
        uint64_t bytes;
        long scan_bad = 0;
        static struct rec_enc e;
        int rc = encode(b, k, HVT_MODE_FLOW, 0, 1 << 20, &bytes, &scan_bad);
        CHECK(rc == 0 && scan_bad == 0 && compare(b, k, HVT_MODE_FLOW, 0, "flow-u16") == 0,
              "flow: 140000 repeats and a 999-instruction RUN read back");
        /* A seek while a REPEAT is being expanded starts afresh at the chunk's start. */
        tr_reader *r = tr_open(path);
        tr_rec one;
        size_t got = 0;
        for (int i = 0; r && i < 10; i++) tr_next(r, &one);
        for (size_t c = 0; r && c < tr_chunk_count(r); c++)
            if (tr_chunk(r, c)->kind == HVT_CHUNK_RECORDS) { tr_seek_chunk(r, c); break; }
        while (r && tr_next(r, &one) == 1) got += one.kind == TR_INSN;
        CHECK(r && got == k && !tr_damaged(r), "a seek inside a REPEAT reads the chunk from its start (%zu of %zu)", got, k);
        if (r) tr_close(r);
        unlink(path);
        /* The marker counts themselves, from the encoder's buffer. */
        static uint8_t buf[1 << 20];
        memset(&e, 0, sizeof e);
        rec_set_mode(&e, HVT_MODE_FLOW, 0);
        rec_begin(&e, buf, sizeof buf, 1000);
        for (size_t i = 0; i < k; i++)
            rec_insn(&e, b[i].rip, b[i].id, lens[b[i].id], b[i].cr3, b[i].regs, 0, ALL);
        uint32_t reps[8], nrep = 0, runmax = 0;
        for (size_t i = 0; i < e.len;) {
            uint8_t t = buf[i];
            if (t == (HVT_TAG_MARKER | HVT_MARK_REPEAT) || t == (HVT_TAG_MARKER | HVT_MARK_RUN)) {
                uint32_t c = buf[i + 1] | (uint32_t)buf[i + 2] << 8;
                if (t == (HVT_TAG_MARKER | HVT_MARK_RUN) && c > runmax) runmax = c;
                if (t == (HVT_TAG_MARKER | HVT_MARK_REPEAT) && nrep < 8) reps[nrep++] = c;
                i += 3;
            } else if (t == (HVT_TAG_MARKER | HVT_MARK_MODE)) {
                i += 3;                         /* mode 1, mask 0: one byte each */
            } else {                            /* an instruction record: tag, rip?, code id? */
                const uint8_t *p = buf + i + 1;
                uint64_t v;
                if (t & HVT_INSN_RIP) p = tv_get(p, buf + e.len, &v);
                if (t & HVT_INSN_CODE) p = tv_get(p, buf + e.len, &v);
                i = (size_t)(p - buf);
            }
        }
        CHECK(nrep == 3 && reps[0] == 65535 && reps[1] == 65535 && reps[2] == 140000 - 1 - 2 * 65535,
              "repeats past 65535 roll over to a new REPEAT (%u markers: %u %u %u)", nrep, reps[0], nrep > 1 ? reps[1] : 0,
              nrep > 2 ? reps[2] : 0);
        CHECK(runmax == 999, "a loop's second pass is one RUN of 999 (largest RUN %u)", runmax);
        CHECK(e.ninsns == k, "the encoder counts every instruction (%u of %zu)", e.ninsns, k);
        free(b);
    }

    /* 3. Hand-made chunks: what the reader and the scanner accept and refuse. Instruction
     * records for code id 0 at rip 0 (no RIP field) and markers around them. */
    {
        struct { const char *what; uint8_t b[24]; size_t len; uint32_t nrec, ninsn; uint16_t ver; int reads, scans; } cs[] = {
#define I0   HVT_INSN_CODE, 0                       /* rip 0 (expected), code id 0 */
#define C    HVT_INSN_CODE
#define M(k) HVT_TAG_MARKER | HVT_MARK_##k
            { "RUN of a predicted straight-line instruction", { 0 }, 0, 0, 0, 3, 0, 0 },     /* built below */
            { "REPEAT 2 after an instruction", { I0, M(REPEAT), 2, 0 }, 5, 2, 3, 3, 3, 0 },
            { "REPEAT 65535 (u16, little-endian)", { I0, M(REPEAT), 0xff, 0xff }, 5, 2, 65536, 3, 65536, 0 },
            { "REPEAT 0", { I0, M(REPEAT), 0, 0 }, 5, 2, 1, 3, -1, -1 },
            { "REPEAT at the chunk start", { M(REPEAT), 1, 0 }, 3, 1, 1, 3, -1, -1 },
            { "REPEAT right after a GAP", { I0, M(GAP), 0, 0, M(REPEAT), 1, 0 }, 8, 3, 2, 3, -1, -1 },
            { "RUN 0", { I0, M(RUN), 0, 0 }, 5, 2, 1, 3, -1, -1 },
            { "RUN with no prediction (chunk start)", { M(RUN), 1, 0 }, 3, 1, 1, 3, -1, 0 },
            { "truncated RUN count", { I0, M(RUN), 1 }, 4, 2, 2, 3, -1, -1 },
            { "MODE flow, instruction with a register field", { M(MODE), 1, 0, C | HVT_INSN_REGS, 0, 1, 2 }, 7, 2, 1, 3, -1, -1 },
            { "MODE flow, instruction with RFLAGS", { M(MODE), 1, 0, C | HVT_INSN_RFLAGS, 0, 2 }, 6, 2, 1, 3, -1, -1 },
            { "MODE regs {rax}, RAX field", { M(MODE), 2, 1, C | HVT_INSN_REGS, 0, 1, 2 }, 7, 2, 1, 3, 2, 0 },
            { "MODE regs {rax}, RCX field", { M(MODE), 2, 1, C | HVT_INSN_REGS, 0, 2, 2 }, 7, 2, 1, 3, -1, -1 },
            { "MODE regs {rax}, RFLAGS field", { M(MODE), 2, 1, C | HVT_INSN_RFLAGS, 0, 2 }, 6, 2, 1, 3, -1, -1 },
            { "MODE 3 (unknown)", { M(MODE), 3, 0 }, 3, 1, 0, 3, -1, -1 },
            { "MODE flow with a mask", { M(MODE), 1, 1 }, 3, 1, 0, 3, -1, -1 },
            { "MODE full without all registers", { M(MODE), 0, 1 }, 3, 1, 0, 3, -1, -1 },
            { "MODE regs, mask beyond RFLAGS", { M(MODE), 2, 0x80, 0x80, 0x08 }, 5, 1, 0, 3, -1, -1 },
            { "header ninsns without the REPEAT's count", { I0, M(REPEAT), 2, 0 }, 5, 2, 1, 3, -1, 0 },
            { "header nrecords counting a REPEAT's instructions", { I0, M(REPEAT), 2, 0 }, 5, 3, 3, 3, -1, 0 },
            { "MODE marker in a version 2 file", { M(MODE), 1, 0 }, 3, 1, 0, 2, -1, 0 },
            { "version 2 file, plain records", { I0, M(SYSCALL), 5 }, 4, 2, 1, 2, 2, 0 },
        };
        /* Case 0: rip 0 (code 0), rip len0 (code 1), back to rip 0 (predicted), then RUN 1:
         * rip len0 again, its code id from the predictor. */
        {
            uint8_t *p = cs[0].b;
            size_t l = 0;
            p[l++] = HVT_INSN_CODE; p[l++] = 0;                           /* rip 0 */
            p[l++] = HVT_INSN_CODE; p[l++] = 1;                           /* rip len0 */
            p[l++] = HVT_INSN_RIP;                                        /* back to rip 0 */
            l += rec_put_varint(p + l, rec_zigzag(-(int64_t)(lens[0] + lens[1])));
            p[l++] = M(RUN); p[l++] = 1; p[l++] = 0;                      /* rip len0, predicted */
            cs[0].len = l;
            cs[0].nrec = 4;
            cs[0].ninsn = 4;
            cs[0].reads = 4;
        }
#undef I0
#undef C
#undef M
        for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
            int scan;
            int got = one_chunk(cs[i].b, cs[i].len, cs[i].nrec, cs[i].ninsn, cs[i].ver, &scan);
            CHECK(got == cs[i].reads, "%s: the reader yields %d (wanted %d)", cs[i].what, got, cs[i].reads);
            CHECK(scan == cs[i].scans, "%s: the scanner says %d (wanted %d)", cs[i].what, scan, cs[i].scans);
        }
    }

    /* 4. Version 1 records put RFLAGS in the mask (bit 16): still read; RFLAGS both in the mask
     * and alone (HVT_INSN_RFLAGS) is corrupt. */
    for (int both = 0; both < 2; both++) {
        uint8_t rec[64], *q = rec;
        *q++ = HVT_INSN_CODE | HVT_INSN_REGS | (both ? HVT_INSN_RFLAGS : 0);
        q += rec_put_varint(q, 0);                              /* code id 0 */
        q += rec_put_varint(q, (1u << HVT_REG_RFLAGS) | 1u);    /* RAX and RFLAGS */
        q += rec_put_varint(q, rec_zigzag(7));
        q += rec_put_varint(q, rec_zigzag(0x246));
        if (both) q += rec_put_varint(q, rec_zigzag(1));
        tcw *w = new_file();
        hvt_trace_chunk_hdr ch;
        memset(&ch, 0, sizeof ch);
        ch.kind = HVT_CHUNK_RECORDS;
        ch.nrecords = ch.ninsns = 1;
        tcw_chunk(w, &ch, rec, (size_t)(q - rec));
        tcw_finish(w, &fh);
        tcw_close(w);
        tr_reader *r = tr_open(path);
        tr_rec one;
        int got = r ? tr_next(r, &one) : -9;
        int ok = both ? got < 0 : (got == 1 && one.regs[HVT_REG_RAX] == 7 && one.regs[HVT_REG_RFLAGS] == 0x246 &&
                                   one.regs_known == ALL && one.mode == HVT_MODE_FULL);
        CHECK(ok, "v1 mask case %d: tr_next %d", both, got);
        if (r) tr_close(r);
        unlink(path);
    }
    free(want);
    return check_summary("rec_enc");
}
