/* trace_varint: LEB128 varints and zigzag, as hvt_trace_format.h defines them.
 * Contract: tv_put writes at most HVT_VARINT_MAX bytes; tv_get never reads past `end` and
 * returns NULL on a truncated or over-long varint. */
#ifndef HVT_TRACE_VARINT_H
#define HVT_TRACE_VARINT_H
#include "hvt_trace_format.h"
#include <stddef.h>
#include <stdint.h>

static inline uint8_t *tv_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}
static inline uint64_t tv_zig(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t tv_unzig(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline const uint8_t *tv_get(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
    if (p < end && *p < 0x80) { /* fast path: one byte */
        *out = *p;
        return p + 1;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 7 * HVT_VARINT_MAX; shift += 7) {
        if (p >= end) return NULL;
        uint8_t b = *p++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *out = v;
            return p;
        }
    }
    return NULL;
}
#endif
