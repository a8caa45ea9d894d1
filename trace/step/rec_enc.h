/*
 * rec_enc.h - encoder for the per-instruction records of include/hvt_trace_format.h (one
 * RECORDS chunk payload at a time). It mirrors the format's decoder state exactly (expected
 * RIP, registers, CR3, tick, RIP->code-id predictor), so a field is sent only when the decoder
 * could not predict it.
 *
 * Contract: rec_begin() starts a chunk (state reset as the format requires); each rec_* call
 * appends one record and returns 0, or -1 when fewer than REC_MAX_BYTES remain (the caller then
 * sends the chunk and begins another, and retries). The record mode (rec_set_mode: FULL, FLOW,
 * REGS with a register mask) is the writer's setting, kept across chunks: rec_begin restates a
 * mode other than FULL with a MODE marker, as the format asks. In FLOW, an instruction the
 * decoder predicts whole joins the last RUN marker (or a REPEAT, for the same instruction
 * again) instead of taking a record of its own. In FULL and REGS, a REP string instruction's
 * iteration that changed the registers exactly as its last one did (REC_CAND_REP) is one more on
 * a REPEAT marker. Freestanding and host-testable: the
 * hypervisor and the host's trace writer (host-tools/tracefile/trace_writer.c) share it, so there is
 * one encoder of the format.
 */
#ifndef HVT_REC_ENC_H
#define HVT_REC_ENC_H
#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include "hvt_trace_format.h"

#define REC_MAX_BYTES (1 + 5 * HVT_VARINT_MAX + HVT_NREGS * HVT_VARINT_MAX + 1 + 32)

struct rec_enc {
    uint8_t *buf;
    size_t cap, len;
    uint64_t expected_rip, cr3, tick, first_tsc;
    uint64_t tsc;                 /* the clock as of the chunk's tsc_n-th instruction: rec_tsc */
    uint32_t tsc_n, pad1;
    uint64_t regs[HVT_NREGS];
    uint32_t cand_all;            /* REC_REGS_ALL until a record compared every register */
    uint32_t nrecords, ninsns;
    uint32_t mode, regmask;       /* hvt_rec_mode; the registers it records (HVT_REG_* bits) */
    /* FLOW: the offset of the last RUN / REPEAT marker's tag; it grows in place while it is
     * the last thing written (at + REC_RUN_BYTES == len) and below HVT_RUN_MAX. */
    uint64_t run_at, rep_at;
    uint64_t last_rip;            /* FLOW: the last instruction's RIP (REPEAT's), while last_ok */
    uint32_t last_ok, pad0;
    /* FULL / REGS: a REPEAT may follow the record of a REP string instruction (REC_CAND_REP) at
     * rep_rip while nrecords is still rep_nrec (nothing written since it or its REPEAT), if
     * the registers change as lmask / ldelta say its last record changed them. */
    uint64_t rep_rip;
    uint32_t rep_nrec, lmask;
    uint64_t ldelta[HVT_NREGS];
    /* Changes (never 0) whenever the predictor is reset: a user that mirrors predictor slots
     * (step_cpu.h icache_entry.pstamp) stamps them with it. */
    uint32_t pstamp;
    struct { uint64_t rip; uint32_t id; uint32_t valid; } pred[HVT_PRED_SLOTS];
};

/* The clock after the instructions counted so far: one tick each since it was last set (the
 * instruction count is all a writer keeps per instruction - the fast path's included). */
static inline uint64_t rec_tsc(const struct rec_enc *e)
{
    return e->tsc + (uint64_t)(e->ninsns - e->tsc_n) * e->tick;
}
static inline void rec_set_tsc(struct rec_enc *e, uint64_t tsc)
{
    e->tsc = tsc;
    e->tsc_n = e->ninsns;
}

void rec_begin(struct rec_enc *e, uint8_t *buf, size_t cap, uint64_t tsc);
/* The record mode from the next record on (a MODE marker now if a chunk is open and the mode
 * changes; regmask is REGS's set, ignored otherwise). -1: no room (nothing changed). */
int  rec_set_mode(struct rec_enc *e, unsigned mode, uint32_t regmask);
#define REC_RUN_BYTES 3           /* a RUN or REPEAT marker: tag, u16 count */
/* The decoder's state back to a chunk's start (expected RIP, CR3, tick, registers,
 * predictor), keeping the buffer: what a GAP marker means to the reader. */
void rec_reset(struct rec_enc *e);
/* rec_insn's 'cand': the registers (HVT_REG_* bits) that may have changed since the last
 * record. RSP and RFLAGS are compared whatever it says; REC_REGS_ALL compares everything. */
#define REC_REGS_ALL    ((1u << HVT_NREGS) - 1)
/* In 'cand' too: the instruction is a REP string instruction, whose iterations may become
 * REPEAT counts (FULL, REGS). */
#define REC_CAND_REP    (1u << 31)
int  rec_event(struct rec_enc *e, uint8_t vector, uint8_t type, uint64_t errcode_plus1);
int  rec_syscall(struct rec_enc *e, uint64_t nr);
int  rec_startstop(struct rec_enc *e, int start, uint64_t reason);
int  rec_time(struct rec_enc *e, uint64_t tsc);
int  rec_switch(struct rec_enc *e, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3);
/* CONTEXT: the CPU's current task restated at a chunk start (not a switch). */
int  rec_context(struct rec_enc *e, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3);
int  rec_vmexit(struct rec_enc *e, uint64_t reason, uint64_t qual);
/* GAP: records lost before this point; the state resets (rec_reset) after it. */
int  rec_gap(struct rec_enc *e, uint64_t lost_records, uint64_t lost_insns);
size_t rec_put_varint(uint8_t *p, uint64_t v);
static inline size_t rec_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (__builtin_expect(v >= 0x80, 0)) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
static inline uint64_t rec_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
/* The RFLAGS field (version 4): the six arithmetic flags' change in one byte, or
 * HVT_RFLAGS_WIDE and the zigzag delta. */
static inline size_t rec_rflags(uint8_t *p, uint64_t old, uint64_t now)
{
    uint64_t x = old ^ now;
    if (!(x & ~HVT_RFLAGS_ARITH)) {
        p[0] = (uint8_t)hvt_rflags_pack(x);
        return 1;
    }
    p[0] = HVT_RFLAGS_WIDE;
    return 1 + rec_varint(p + 1, rec_zigzag((int64_t)(now - old)));
}
/* A short record's value: the zigzag delta, or (HVT_SHORT_U32) the new value's 4 bytes when
 * the delta would take 5 or more and the value is a 32-bit one. Returns the tag bit. */
static inline unsigned rec_short_value(uint8_t **pp, uint64_t old, uint64_t now)
{
    uint64_t z = rec_zigzag((int64_t)(now - old));
    if (z >= 1u << 28 && !(now >> 32)) {
        uint8_t *p = *pp;
        p[0] = (uint8_t)now;
        p[1] = (uint8_t)(now >> 8);
        p[2] = (uint8_t)(now >> 16);
        p[3] = (uint8_t)(now >> 24);
        *pp = p + 4;
        return HVT_SHORT_U32;
    }
    *pp += rec_varint(*pp, z);
    return 0;
}
/* Is there room for one more record of any kind? */
static inline bool rec_room(const struct rec_enc *e) { return e->cap - e->len >= REC_MAX_BYTES; }

/* One more instruction on the RUN / REPEAT marker at *at if it is the last thing written and
 * below its maximum count (no room needed); false otherwise. */
static inline bool rec_count_more(struct rec_enc *e, const uint64_t *at, unsigned kind)
{
    uint8_t *m = e->buf + *at;
    if (*at + REC_RUN_BYTES == e->len && (m[0] & 0x7f) == kind) {
        unsigned n = m[1] | (unsigned)m[2] << 8;
        if (n < HVT_RUN_MAX) {
            n++;
            m[1] = (uint8_t)n;
            m[2] = (uint8_t)(n >> 8);
            return true;
        }
    }
    return false;
}

/* One more instruction on the RUN / REPEAT marker at *at, or a new marker (room for it: the
 * caller checked rec_room). */
static inline void rec_count(struct rec_enc *e, uint64_t *at, unsigned kind)
{
    if (rec_count_more(e, at, kind))
        return;
    uint8_t *m;
    *at = e->len;
    m = e->buf + e->len;
    m[0] = HVT_TAG_MARKER | kind;
    m[1] = 1;
    m[2] = 0;
    e->len += REC_RUN_BYTES;
    e->nrecords++;
}

/* An instruction counted on a RUN / REPEAT marker, no record of its own: the decoder's
 * expectations and the clock follow it. */
static inline int rec_counted(struct rec_enc *e, uint64_t rip, unsigned code_len)
{
    e->expected_rip = rip + code_len;
    e->last_rip = rip;
    e->ninsns++;
    return 0;
}
/* Register i's change (RFLAGS as HVT_REG_RFLAGS) since the decoder's value. */
static inline uint64_t rec_delta(const struct rec_enc *e, const uint64_t gpr[HVT_REG_RFLAGS],
                                 uint64_t rflags, int i)
{
    return (i == HVT_REG_RFLAGS ? rflags : gpr[i]) - e->regs[i];
}

/* One instruction record: the hot path of every step, so inline. gpr: the 16 general registers
 * in HVT_REG_* order (RSP included), values after the instruction; cand: see REC_REGS_ALL
 * (the first record of a chunk compares all: the decoder starts from zeros). Returns -1
 * (nothing written) when the chunk is full. */
static inline int rec_insn_ticked(struct rec_enc *e, uint64_t rip, uint32_t code_id, unsigned code_len,
                                  uint64_t cr3, const uint64_t gpr[HVT_REG_RFLAGS], uint64_t rflags,
                                  uint32_t cand, uint64_t tick)
{
    uint32_t slot = HVT_PRED_SLOT(rip);
    bool predicted = e->pred[slot].valid && e->pred[slot].rip == rip && e->pred[slot].id == code_id;
    if (e->mode == HVT_MODE_FLOW && predicted && cr3 == e->cr3 && tick == e->tick) {
        /* Straight on (RUN), or the last instruction again (REPEAT): a count, no record (and
         * no room needed while the last marker grows in place). */
        uint64_t *at = &e->run_at;
        unsigned kind = HVT_MARK_RUN;
        if (rip != e->expected_rip) {
            if (!e->last_ok || rip != e->last_rip)
                goto record;
            at = &e->rep_at;
            kind = HVT_MARK_REPEAT;
        }
        if (!rec_count_more(e, at, kind)) {
            if (__builtin_expect(!rec_room(e), 0))
                return -1;
            rec_count(e, at, kind);
        }
        return rec_counted(e, rip, code_len);
    }
record:
    if (__builtin_expect(!rec_room(e), 0))
        return -1;
    /* Which registers changed: the candidates only (an instruction writes one or two), or all
     * of them, compare-and-branch unrolled; then only the set bits are visited. */
    uint32_t mask = 0;
    bool rep = cand & REC_CAND_REP;
    cand = (cand & ~REC_CAND_REP) | e->cand_all;
    if (__builtin_expect(cand == REC_REGS_ALL && e->regmask == REC_REGS_ALL, 0)) {
#pragma GCC unroll 16
        for (int i = 0; i < HVT_REG_RFLAGS; i++)
            if (__builtin_expect(gpr[i] != e->regs[i], 0))
                mask |= 1u << i;
    } else {
        /* RSP and RFLAGS whatever cand says (see REC_REGS_ALL), within the mode's set. */
        cand = (cand | 1u << HVT_REG_RSP | 1u << HVT_REG_RFLAGS) & e->regmask;
        for (uint32_t m = cand & ((1u << HVT_REG_RFLAGS) - 1); m; m &= m - 1) {
            int i = __builtin_ctz(m);
            if (gpr[i] != e->regs[i])
                mask |= 1u << i;
        }
    }
    if (e->regmask >> HVT_REG_RFLAGS & 1 && rflags != e->regs[HVT_REG_RFLAGS])
        mask |= 1u << HVT_REG_RFLAGS;
    if (rep && e->mode != HVT_MODE_FLOW) {
        /* A REP string iteration: a REPEAT count if it is the same instruction as the last
         * record (nothing since), predicted, and changed the registers as that one did. */
        bool same = e->rep_nrec == e->nrecords && rip == e->rep_rip && predicted && mask == e->lmask &&
                    cr3 == e->cr3 && tick == e->tick && !e->cand_all;
        for (uint32_t m = mask; same && m; m &= m - 1) {
            int i = __builtin_ctz(m);
            same = rec_delta(e, gpr, rflags, i) == e->ldelta[i];
        }
        if (same) {
            for (uint32_t m = mask; m; m &= m - 1) {
                int i = __builtin_ctz(m);
                e->regs[i] += e->ldelta[i];
            }
            rec_count(e, &e->rep_at, HVT_MARK_REPEAT);
            e->rep_nrec = e->nrecords;
            return rec_counted(e, rip, code_len);
        }
        e->rep_rip = rip;
        e->rep_nrec = e->nrecords + 1;
        e->lmask = mask;
        for (uint32_t m = mask; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            e->ldelta[i] = rec_delta(e, gpr, rflags, i);
        }
    }
    e->cand_all = 0;
    uint8_t *p = e->buf + e->len, *tagp = p++;
    unsigned tag = 0;
    if (rip != e->expected_rip) {
        tag |= HVT_INSN_RIP;
        p += rec_varint(p, rec_zigzag((int64_t)(rip - e->expected_rip)));
    }
    if (__builtin_expect(!predicted, 0)) {
        tag |= HVT_INSN_CODE;
        p += rec_varint(p, code_id);
        e->pred[slot].rip = rip;
        e->pred[slot].id = code_id;
        e->pred[slot].valid = 1;
    }
    if (__builtin_expect(cr3 != e->cr3, 0)) {
        tag |= HVT_INSN_CR3;
        p += rec_varint(p, cr3);
        e->cr3 = cr3;
    }
    if (__builtin_expect(tick != e->tick, 0)) {       /* never, from rec_insn() */
        tag |= HVT_INSN_TICK;
        p += rec_varint(p, tick);
        rec_set_tsc(e, rec_tsc(e));             /* the old tick up to here */
        e->tick = tick;
    }
    /* The general registers under HVT_INSN_REGS (a one-byte mask for RAX..RDI), RFLAGS on its
     * own (HVT_INSN_RFLAGS); a straight-line instruction that changed one general register is
     * a short record (HVT_INSN_SHORT): no mask. */
    uint32_t gmask = mask & ((1u << HVT_REG_RFLAGS) - 1);
    if (!tag && gmask && !(gmask & (gmask - 1))) {
        int i = __builtin_ctz(gmask);
        tag = HVT_INSN_SHORT | (unsigned)i | (mask >> HVT_REG_RFLAGS ? HVT_SHORT_RFLAGS : 0);
        tag |= rec_short_value(&p, e->regs[i], gpr[i]);
        e->regs[i] = gpr[i];
        gmask = 0;
    }
    if (gmask) {
        tag |= HVT_INSN_REGS;
        p += rec_varint(p, gmask);
        for (uint32_t m = gmask; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            p += rec_varint(p, rec_zigzag((int64_t)(gpr[i] - e->regs[i])));
            e->regs[i] = gpr[i];
        }
    }
    if (mask >> HVT_REG_RFLAGS) {
        if (!(tag & HVT_INSN_SHORT))
            tag |= HVT_INSN_RFLAGS;
        p += rec_rflags(p, e->regs[HVT_REG_RFLAGS], rflags);
        e->regs[HVT_REG_RFLAGS] = rflags;
    }
    *tagp = (uint8_t)tag;
    e->len = (size_t)(p - e->buf);
    e->expected_rip = rip + code_len;
    e->last_rip = rip;
    e->last_ok = 1;
    e->nrecords++;
    e->ninsns++;
    return 0;
}

/* The hypervisor's record: the TSC advances by the current tick (the stepped guest's clock
 * counts instructions; rec_time() resynchronises it). */
static inline int rec_insn(struct rec_enc *e, uint64_t rip, uint32_t code_id, unsigned code_len,
                           uint64_t cr3, const uint64_t gpr[HVT_REG_RFLAGS], uint64_t rflags,
                           uint32_t cand)
{
    return rec_insn_ticked(e, rip, code_id, code_len, cr3, gpr, rflags, cand, e->tick);
}

#endif
