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

static int grow(uint8_t **buf, size_t *cap, size_t need, char *err, size_t errlen)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap : 1 << 16;
    while (ncap < need)
        ncap *= 2;
    uint8_t *nb = realloc(*buf, ncap);
    if (!nb) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *buf = nb;
    *cap = ncap;
    return 0;
}

static int parse_header(const char *l, e9_line *c, int *used, char *err, size_t errlen)
{
    if (sscanf(l, "%u %u %" SCNu32 " %" SCNu32 " %" SCNu32 " %" SCNu64 " %" SCNu64 " %n", &c->kind,
               &c->cpu, &c->nrecords, &c->ninsns, &c->first_code_id, &c->first_tsc, &c->last_tsc,
               used) != 7 || (c->kind != HVT_CHUNK_CODE && c->kind != HVT_CHUNK_RECORDS) ||
        c->cpu > UINT16_MAX) {
        snprintf(err, errlen, "malformed HVT-CHUNK header");
        return E9_BAD;
    }
    return 0;
}

int e9_next(FILE *f, char **line, size_t *lcap, size_t *lineno, e9_line *c, uint8_t **buf,
            size_t *cap, char *err, size_t errlen)
{
    if (getline(line, lcap, f) <= 0)
        return E9_EOF;
    ++*lineno;
    const char *l = *line;
    while (*l == '\r') l++;
    if (strncmp(l, "HVT-CHUNKB ", 11))
        return e9_parse(*line, c, buf, cap, err, errlen);
    memset(c, 0, sizeof *c);
    int used = 0;
    unsigned long long len = 0;
    if (parse_header(l + 11, c, &used, err, errlen))
        return E9_BAD;
    if (sscanf(l + 11 + used, "%llu", &len) != 1) {
        snprintf(err, errlen, "HVT-CHUNKB without a length");
        return E9_BAD;
    }
    if (len > HVT_CHUNK_RAW_MAX) {
        snprintf(err, errlen, "chunk payload exceeds %u bytes", HVT_CHUNK_RAW_MAX);
        return E9_BAD;
    }
    if (grow(buf, cap, len ? len : 1, err, errlen))
        return E9_BAD;
    if (fread(*buf, 1, len, f) != len) {
        snprintf(err, errlen, "binary chunk cut short (%llu bytes announced)", len);
        return E9_BAD;
    }
    int end = fgetc(f);
    if (end != '\n') {
        snprintf(err, errlen, "binary chunk not followed by a newline");
        return E9_BAD;
    }
    c->len = len;
    return E9_CHUNK;
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
    if (parse_header(l + 10, c, &used, err, errlen))
        return E9_BAD;
    const char *h = l + 10 + used;
    while (hexval(h[0]) >= 0 && hexval(h[1]) >= 0) {
        if (c->len >= HVT_CHUNK_RAW_MAX) {
            snprintf(err, errlen, "chunk payload exceeds %u bytes", HVT_CHUNK_RAW_MAX);
            return E9_BAD;
        }
        if (grow(buf, cap, c->len + 1, err, errlen))
            return E9_BAD;
        (*buf)[c->len++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
        h += 2;
    }
    if (*h != '\n' && *h != '\r' && *h != 0) {
        snprintf(err, errlen, "bad hex at column %zu", (size_t)(h - l) + 1);
        return E9_BAD;
    }
    return E9_CHUNK;
}
