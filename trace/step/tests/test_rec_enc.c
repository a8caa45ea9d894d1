/* test_rec_enc: the hypervisor's record encoder (trace/step/rec_enc.h, the inline rec_insn every
 * step runs) against the host's reader (host-tools/tracefile/trace_reader.c): random instruction streams
 * with changed registers of every size (compared in full or only among candidates, as the
 * MTF fast path passes them; a chunk's first record always in full), CR3 switches, RIP jumps, code-id changes at a RIP,
 * markers and chunk boundaries are encoded, written as a trace file (trace_chunkw) and read
 * back; every field the reader reports must equal what was encoded.
 *   test_rec_enc [SEED] [RECORDS]      prints "rec_enc: N passed, M failed" */
#include "rec_enc.h"
#include "trace_chunkw.h"
#include "trace_reader.h"
#include "rand_regs.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check.h"

#define NCODES   64
#define CAP      (64 * 1024)          /* small chunks: many boundaries */

struct want { uint8_t kind; uint64_t rip, cr3, tsc, a; uint32_t id, cand; uint64_t regs[HVT_NREGS]; };


/* The encoder's chunk as a RECORDS chunk of the file, as the sink sends it. */
static int put_records(tcw *w, const struct rec_enc *e)
{
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_RECORDS;
    ch.nrecords = e->nrecords;
    ch.ninsns = e->ninsns;
    ch.first_tsc = e->first_tsc;
    ch.last_tsc = e->tsc;
    if (tcw_chunk(w, &ch, e->buf, e->len)) {
        fprintf(stderr, "%s\n", tcw_error(w));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1) rng = strtoull(argv[1], 0, 0) | 1;
    size_t n = argc > 2 ? strtoull(argv[2], 0, 0) : 200000;
    char path[] = "/tmp/test_rec_enc.XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) { perror("mkstemp"); return 2; }
    close(fd);
    hvt_trace_file_hdr fh;
    memset(&fh, 0, sizeof fh);
    fh.ncpus = 1;
    tcw *w = tcw_create(path, &fh, 1);
    /* The code dictionary: NCODES entries of 1..15 bytes. */
    uint8_t code[NCODES * 16];
    size_t clen = 0;
    uint8_t lens[NCODES];
    for (int i = 0; i < NCODES; i++) {
        lens[i] = (uint8_t)(1 + rnd() % 15);
        code[clen++] = lens[i];
        for (int k = 0; k < lens[i]; k++) code[clen++] = (uint8_t)rnd();
    }
    hvt_trace_chunk_hdr ch;
    memset(&ch, 0, sizeof ch);
    ch.kind = HVT_CHUNK_CODE;
    ch.nrecords = NCODES;
    if (tcw_chunk(w, &ch, code, clen)) { fprintf(stderr, "%s\n", tcw_error(w)); return 2; }

    struct want *want = calloc(n + 64, sizeof *want);
    static struct rec_enc e;
    static uint8_t buf[CAP];
    uint64_t regs[HVT_NREGS] = { 0 }, rip = 0xffffffff81000000ull, cr3 = 0x1000, tsc = 1000;
    size_t nw = 0;
    rec_begin(&e, buf, sizeof buf, tsc);
    for (size_t i = 0; i < n; i++) {
        /* Make the next record. */
        struct want x = { 0 };
        unsigned what = (unsigned)(rnd() % 100);
        if (what < 3) {
            x.kind = HVT_MARK_SYSCALL;
            x.a = rnd() % 500;
        } else if (what < 5) {
            x.kind = HVT_MARK_TIME;
            x.a = tsc = tsc + 1 + rnd() % 100000;
        } else {
            x.kind = TR_INSN;
            if (rnd() % 8 == 0) rip = (rnd() % 2 ? 0xffffffff81000000ull : 0x400000ull) + rnd() % 0x100000;
            if (rnd() % 50 == 0) cr3 = (rnd() & 0xffffff000ull) | (rnd() % 4096);
            x.id = rnd() % 16 == 0 ? (uint32_t)(rnd() % NCODES) : (uint32_t)(rip % NCODES);
            unsigned nchg = (unsigned)(rnd() % 4);
            uint32_t chg = 0;
            for (unsigned k = 0; k < nchg; k++) {
                unsigned r = (unsigned)(rnd() % HVT_NREGS);
                regs[r] = change(regs[r]);
                chg |= 1u << r;
            }
            /* The candidates the fast path would pass: a superset of what changed (a decoded
             * write set), sometimes all (the full step). */
            x.cand = rnd() % 10 == 0 ? REC_REGS_ALL : (chg | ((uint32_t)(rnd() & rnd()) & REC_REGS_ALL));
            x.rip = rip;
            x.cr3 = cr3;
            tsc += 1;
            x.tsc = tsc;
            memcpy(x.regs, regs, sizeof regs);
            rip += lens[x.id];
        }
        /* Encode it; a full chunk is written and a new one begun, as the sink does. */
        for (int tries = 0; tries < 2; tries++) {
            int rc = x.kind == TR_INSN ? rec_insn(&e, x.rip, x.id, lens[x.id], x.cr3, x.regs, x.regs[HVT_REG_RFLAGS], x.cand)
                   : x.kind == HVT_MARK_SYSCALL ? rec_syscall(&e, x.a) : rec_time(&e, x.a);
            if (rc == 0) break;
            if (put_records(w, &e)) return 2;
            rec_begin(&e, buf, sizeof buf, tsc - (x.kind == TR_INSN));
        }
        want[nw++] = x;
    }
    if (e.len && put_records(w, &e)) return 2;
    if (tcw_finish(w, &fh) || tcw_close(w)) { fprintf(stderr, "write failed\n"); return 2; }

    tr_reader *r = tr_open(path);
    if (!r) { fprintf(stderr, "rec_enc: reader refused the file\n"); return 1; }
    size_t pass = 0, fail = 0, k = 0;
    tr_rec rec, one;
    int rc;
    while ((rc = tr_next(r, &rec)) == 1) {
        if (k >= nw) { fail++; break; }
        const struct want *x = &want[k++];
        int ok = rec.kind == x->kind;
        if (ok && x->kind == TR_INSN)
            ok = rec.rip == x->rip && rec.cr3 == x->cr3 && rec.code_id == x->id && rec.tsc == x->tsc &&
                 !memcmp(rec.regs, x->regs, sizeof x->regs) && rec.code_len == lens[x->id];
        else if (ok)
            ok = rec.a == x->a;
        if (ok) {
            pass++;
        } else if (fail++ < 5) {
            fprintf(stderr, "rec_enc: record %zu: kind %u/%u rip %#" PRIx64 "/%#" PRIx64 " id %u/%u tsc %" PRIu64 "/%" PRIu64 "\n",
                    k - 1, rec.kind, x->kind, rec.rip, x->rip, rec.code_id, x->id, rec.tsc, x->tsc);
        }
    }
    if (rc < 0 || k != nw) {
        fprintf(stderr, "rec_enc: read %zu of %zu records (rc %d)\n", k, nw, rc);
        fail++;
    }
    tr_close(r);
    unlink(path);

    /* Version 1 records put RFLAGS in the mask (bit 16): still read; RFLAGS both in the mask
     * and alone (HVT_INSN_RFLAGS) is corrupt. */
    for (int both = 0; both < 2; both++) {
        uint8_t rec[64], *q = rec;
        *q++ = HVT_INSN_CODE | HVT_INSN_REGS | (both ? HVT_INSN_RFLAGS : 0);
        q += rec_put_varint(q, 0);                              /* code id 0 */
        q += rec_put_varint(q, (1u << HVT_REG_RFLAGS) | 1u);    /* RAX and RFLAGS */
        q += rec_put_varint(q, rec_zigzag(7));
        q += rec_put_varint(q, rec_zigzag(0x246));
        if (both) q += rec_put_varint(q, rec_zigzag(1));
        w = tcw_create(path, &fh, 1);
        memset(&ch, 0, sizeof ch);
        ch.kind = HVT_CHUNK_CODE;
        ch.nrecords = NCODES;
        tcw_chunk(w, &ch, code, clen);
        memset(&ch, 0, sizeof ch);
        ch.kind = HVT_CHUNK_RECORDS;
        ch.nrecords = ch.ninsns = 1;
        tcw_chunk(w, &ch, rec, (size_t)(q - rec));
        tcw_finish(w, &fh);
        tcw_close(w);
        r = tr_open(path);
        int got = r ? tr_next(r, &one) : -9;
        int ok = both ? got < 0 : (got == 1 && one.regs[HVT_REG_RAX] == 7 &&
                                   one.regs[HVT_REG_RFLAGS] == 0x246);
        if (ok) pass++;
        else { fail++; fprintf(stderr, "rec_enc: v1 mask case %d: tr_next %d\n", both, got); }
        if (r) tr_close(r);
        unlink(path);
    }
    check_passed += (long)pass;
    check_failed += (long)fail;
    return check_summary("rec_enc");
}
