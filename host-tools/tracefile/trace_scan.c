/* trace_scan: see trace_scan.h. */
#include "trace_scan.h"
#include "trace_varint.h"
#include <stdio.h>
#include <string.h>

#define BAD(what) do { snprintf(err, errlen, "record byte %zu: %s", (size_t)(rec - p), what); return -1; } while (0)
#define SKIPV(v) do { if (!(q = tv_get(q, end, &(v)))) BAD("truncated varint"); } while (0)

int ts_scan_records(const uint8_t *p, size_t n, ts_summary *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    const uint8_t *q = p, *end = p + n;
    while (q < end) {
        const uint8_t *rec = q;
        uint8_t tag = *q++;
        uint64_t v, mask = 0;
        s->records++;
        if (!(tag & HVT_TAG_MARKER)) {
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
                if ((tag & HVT_INSN_RFLAGS) && (mask >> HVT_REG_RFLAGS)) BAD("RFLAGS both in the mask and alone");
                for (; mask; mask &= mask - 1) SKIPV(v);
            }
            if (tag & HVT_INSN_RFLAGS) SKIPV(v);
            s->insns++;
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
        case HVT_MARK_GAP: SKIPV(v); SKIPV(v); s->gaps++; break;
        case HVT_MARK_VMEXIT: SKIPV(v); SKIPV(v); break;
        case HVT_MARK_SWITCH: case HVT_MARK_CONTEXT:
            SKIPV(v);
            SKIPV(v);
            if (q >= end || *q > HVT_COMM_MAX || *q > end - q - 1) BAD("bad comm length");
            q += 1 + *q;
            SKIPV(v);
            break;
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
