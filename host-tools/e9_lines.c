/* e9_lines: see e9_lines.h. */
#include "e9_lines.h"
#include "hvt_trace_format.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int e9_parse(const char *l, e9_line *c, uint8_t **buf, size_t *cap, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    while (*l == '\r') l++;
    if (!strncmp(l, "HVT-META ", 9)) {
        c->meta = l + 9;
        return E9_META;
    }
    if (strncmp(l, "HVT-CHUNK ", 10))
        return E9_OTHER;
    int used = 0;
    if (sscanf(l + 10, "%u %u %" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNu64 " %" SCNu64 " %n", &c->kind,
               &c->cpu, &c->nrecords, &c->ninsns, &c->first_code_id, &c->first_tsc, &c->last_tsc,
               &used) != 7 || (c->kind != HVT_CHUNK_CODE && c->kind != HVT_CHUNK_RECORDS) ||
        c->cpu > UINT16_MAX) {
        snprintf(err, errlen, "malformed HVT-CHUNK header");
        return E9_BAD;
    }
    const char *h = l + 10 + used;
    while (hexval(h[0]) >= 0 && hexval(h[1]) >= 0) {
        if (c->len >= HVT_CHUNK_RAW_MAX) {
            snprintf(err, errlen, "chunk payload exceeds %u bytes", HVT_CHUNK_RAW_MAX);
            return E9_BAD;
        }
        if (c->len >= *cap) {
            size_t ncap = *cap ? *cap * 2 : 1 << 16;
            uint8_t *nb = realloc(*buf, ncap);
            if (!nb) {
                snprintf(err, errlen, "out of memory");
                return E9_BAD;
            }
            *buf = nb;
            *cap = ncap;
        }
        (*buf)[c->len++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
        h += 2;
    }
    if (*h != '\n' && *h != '\r' && *h != 0) {
        snprintf(err, errlen, "bad hex at column %zu", (size_t)(h - l) + 1);
        return E9_BAD;
    }
    return E9_CHUNK;
}
