/* trace_scan: see trace_scan.h. */
#include "trace_scan.h"
#include "trace_varint.h"
#include <stdio.h>
#include <string.h>

/* Batches on the wire carry records of this version (hvt_stream.h HVT_STREAM_VERSION says
 * which), and the collector files them under a header of this version: the scanner checks
 * exactly its syntax. A new version must come here. */
_Static_assert(HVT_TRACE_VERSION == 4, "trace_scan checks version 4's record syntax");

#define BAD(what) do { snprintf(err, errlen, "record byte %zu: %s", (size_t)(rec - p), what); return -1; } while (0)
#define SKIPV(v) do { if (!(q = tv_get(q, end, &(v)))) BAD("truncated varint"); } while (0)
/* An RFLAGS field (hvt_rflags_byte): packed flags, or HVT_RFLAGS_WIDE and a zigzag varint. */
#define SKIPRF() do {                                                                            \
        if (q >= end) BAD("truncated RFLAGS field");                                            \
        enum hvt_rflags_byte kind_ = hvt_rflags_byte(*q);                                        \
        if (kind_ == HVT_RFLAGS_BYTE_BAD) {                                                      \
            snprintf(err, errlen, "record byte %zu: " HVT_RFLAGS_BAD_FMT, (size_t)(rec - p), *q); \
            return -1;                                                                           \
        }                                                                                        \
        q++;                                                                                     \
        if (kind_ == HVT_RFLAGS_BYTE_WIDE) SKIPV(v);                                             \
    } while (0)

int ts_scan_records(const uint8_t *p, size_t n, ts_summary *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const uint8_t *q = p, *end = p + n;
    /* The mode's register set (a chunk starts in FULL) and whether REPEAT has an instruction to
     * repeat (none at the chunk start nor after a GAP): syntax a batch must keep. */
    const uint32_t all = (1u << HVT_NREGS) - 1;
    uint32_t known = all;
    int have_insn = 0;
    while (q < end) {
        const uint8_t *rec = q;
        uint8_t tag = *q++;
        uint64_t v, mask = 0;
        uint32_t fields = 0;
        s->records++;
        if (!(tag & HVT_TAG_MARKER)) {
            if (tag & HVT_INSN_SHORT) {          /* one register (and RFLAGS), nothing else */
                fields = 1u << (tag & HVT_SHORT_REG) | (tag & HVT_SHORT_RFLAGS ? 1u << HVT_REG_RFLAGS : 0);
                if (tag & HVT_SHORT_U32) {       /* the new value: 4 bytes, little-endian */
                    if (end - q < 4) BAD("truncated 32-bit register value (HVT_SHORT_U32)");
                    q += 4;
                } else {
                    SKIPV(v);
                }
                if (tag & HVT_SHORT_RFLAGS) SKIPRF();
                if (fields & ~known) BAD("register field outside the record mode's set");
                if (s->insns == UINT32_MAX) BAD("instruction count overflows");
                s->insns++;
                have_insn = 1;
                continue;
            }
            if (tag & ~HVT_INSN_FLAGS_ALL) BAD("reserved instruction flag set");
            if (tag & HVT_INSN_RIP) SKIPV(v);
            if (tag & HVT_INSN_CODE) {
                SKIPV(v);
                if (v + 1 > s->code_ids_end) s->code_ids_end = v + 1;
            }
            if (tag & HVT_INSN_CR3) SKIPV(v);
            if (tag & HVT_INSN_TICK) SKIPV(v);
            if (tag & HVT_INSN_REGS) {
                SKIPV(mask);
                if (mask >> HVT_NREGS) BAD("register mask has unknown bits");
                fields = (uint32_t)mask;
                if ((tag & HVT_INSN_RFLAGS) && (mask >> HVT_REG_RFLAGS)) BAD("RFLAGS both in the mask and alone");
                for (; mask; mask &= mask - 1) SKIPV(v);
            }
            if (tag & HVT_INSN_RFLAGS) SKIPRF();
            if (((tag & HVT_INSN_REGS) && (fields & ~known)) || ((tag & HVT_INSN_RFLAGS) && !(known >> HVT_REG_RFLAGS)))
                BAD("register field outside the record mode's set");
            if (s->insns == UINT32_MAX) BAD("instruction count overflows");
            s->insns++;
            have_insn = 1;
            continue;
        }
        switch (tag & 0x7f) {
        case HVT_MARK_EVENT:
            if (end - q < 2) BAD("truncated event");
            q += 2;
            SKIPV(v);
            break;
        case HVT_MARK_START: SKIPV(v); s->starts++; s->last_window = 1; break;
        case HVT_MARK_STOP: SKIPV(v); s->stops++; s->last_window = -1; break;
        case HVT_MARK_SYSCALL: case HVT_MARK_TIME: SKIPV(v); break;
        case HVT_MARK_GAP: SKIPV(v); SKIPV(v); s->gaps++; have_insn = 0; break;
        case HVT_MARK_VMEXIT: SKIPV(v); SKIPV(v); break;
        case HVT_MARK_SWITCH: case HVT_MARK_CONTEXT:
            SKIPV(v);
            SKIPV(v);
            if (q >= end || *q > HVT_COMM_MAX || *q > end - q - 1) BAD("bad comm length");
            q += 1 + *q;
            SKIPV(v);
            break;
        case HVT_MARK_MODE:
            SKIPV(v);
            SKIPV(mask);
            if (v >= HVT_MODE_COUNT) BAD("unknown record mode");
            if (mask & ~(uint64_t)all) BAD("mode register mask has unknown bits");
            if ((v == HVT_MODE_FULL && mask != all) || (v == HVT_MODE_FLOW && mask))
                BAD("mode register mask does not fit the mode (FULL: all, FLOW: none)");
            known = (uint32_t)mask;
            s->modes |= 1u << v;
            break;
        case HVT_MARK_RUN: case HVT_MARK_REPEAT: {
            if (end - q < 2) BAD("truncated RUN/REPEAT count");
            uint32_t k = q[0] | (uint32_t)q[1] << 8;
            q += 2;
            if (!k) BAD("RUN/REPEAT of 0 instructions");
            if ((tag & 0x7f) == HVT_MARK_REPEAT && !have_insn) BAD("REPEAT with no instruction before it");
            if (s->insns > UINT32_MAX - k) BAD("instruction count overflows");
            s->insns += k;
            have_insn = 1;
            break;
        }
        default:
            BAD("unknown marker type");
        }
    }
    return 0;
}

int ts_scan_code(const uint8_t *p, size_t n, uint32_t *entries, char *err, size_t errlen)
{
    size_t i = 0;
    *entries = 0;
    while (i < n) {
        if (p[i] == 0 || p[i] > HVT_CODE_MAX || p[i] > n - i - 1) {
            snprintf(err, errlen, "code entry %u (byte %zu): bad length %u", *entries, i, p[i]);
            return -1;
        }
        i += 1u + p[i];
        (*entries)++;
    }
    return 0;
}
