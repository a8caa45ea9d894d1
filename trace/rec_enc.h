/*
 * rec_enc.h - encoder for the per-instruction records of include/hvt_trace_format.h (one
 * RECORDS chunk payload at a time). It mirrors the format's decoder state exactly (expected
 * RIP, registers, CR3, tick, RIP->code-id predictor), so a field is sent only when the decoder
 * could not predict it.
 *
 * Contract: rec_begin() starts a chunk (state reset as the format requires); each rec_* call
 * appends one record and returns 0, or -1 when fewer than REC_MAX_BYTES remain (the caller then
 * sends the chunk and begins another, and retries). Freestanding and host-testable.
 */
#ifndef HVT_REC_ENC_H
#define HVT_REC_ENC_H
#include <stdint.h>
#include <stddef.h>
#include "hvt_trace_format.h"

#define REC_MAX_BYTES (1 + 5 * HVT_VARINT_MAX + HVT_NREGS * HVT_VARINT_MAX + 32)

struct rec_enc {
    uint8_t *buf;
    size_t cap, len;
    uint64_t expected_rip, cr3, tick, tsc, first_tsc;
    uint64_t regs[HVT_NREGS];
    uint32_t nrecords, ninsns;
    struct { uint64_t rip; uint32_t id; uint32_t valid; } pred[HVT_PRED_SLOTS];
};

void rec_begin(struct rec_enc *e, uint8_t *buf, size_t cap, uint64_t tsc);
/* gpr: the 16 general registers in HVT_REG_* order (RSP included), values after the insn. */
int  rec_insn(struct rec_enc *e, uint64_t rip, uint32_t code_id, unsigned code_len,
              uint64_t cr3, const uint64_t gpr[HVT_REG_RFLAGS], uint64_t rflags);
int  rec_event(struct rec_enc *e, uint8_t vector, uint8_t type, uint64_t errcode_plus1);
int  rec_syscall(struct rec_enc *e, uint64_t nr);
int  rec_startstop(struct rec_enc *e, int start, uint64_t reason);
int  rec_time(struct rec_enc *e, uint64_t tsc);
int  rec_switch(struct rec_enc *e, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3);
/* CONTEXT: the CPU's current task restated at a chunk start (not a switch). */
int  rec_context(struct rec_enc *e, uint64_t pid, uint64_t tgid, const char *comm, uint64_t cr3);
size_t rec_put_varint(uint8_t *p, uint64_t v);
static inline size_t rec_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

#endif
