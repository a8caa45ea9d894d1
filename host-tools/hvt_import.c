/*
 * hvt-import - turn the hypervisor's debug-port chunk lines (trace/sink.c) into a trace
 * file (include/hvt_trace_format.h).
 *   usage: hvt-import [-z LEVEL] E9_LOG OUT_TRACE     (zstd level, default 3; 0 = store)
 * Lines: "HVT-CHUNK kind cpu nrecords ninsns first_code_id first_tsc last_tsc HEX" and
 * "HVT-META key=value ..." (lstar=, cpus=). Other lines are ignored. Each chunk goes to disk
 * through trace_chunkw (the chunk layer hvtrace-collector uses for the same payloads arriving
 * over the network: same bytes on disk), then the index and the footer. A malformed chunk line
 * is an error naming the line; nothing is guessed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include "hvt_trace_format.h"
#include "trace_chunkw.h"

#define IMPORT_DEFAULT_LEVEL 3

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* "HVT-META k=v k=v": lstar (hex, the guest's syscall entry) and cpus (decimal). */
static void parse_meta(const char *l, hvt_trace_file_hdr *fh)
{
    const char *p = strstr(l, "lstar=");
    if (p) fh->lstar = strtoull(p + 6, NULL, 16);
    p = strstr(l, "cpus=");
    if (p) {
        unsigned long n = strtoul(p + 5, NULL, 10);
        if (n > fh->ncpus && n <= UINT16_MAX) fh->ncpus = (uint32_t)n;
    }
}

int main(int argc, char **argv)
{
    int level = IMPORT_DEFAULT_LEVEL;
    if (argc == 5 && !strcmp(argv[1], "-z")) {
        level = atoi(argv[2]);
        argv += 2;
        argc -= 2;
    }
    if (argc != 3) {
        fprintf(stderr, "usage: hvt-import [-z LEVEL] E9_LOG OUT_TRACE\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 1; }
    hvt_trace_file_hdr fh;
    memset(&fh, 0, sizeof fh);
    tcw *w = tcw_create(argv[2], &fh, level);   /* header rewritten at the end with what we learned */
    if (!w) return 1;
    size_t cap = 1 << 20, lineno = 0;
    char *line = NULL;
    uint8_t *payload = malloc(cap);
    uint64_t insns = 0, records = 0;
    ssize_t n;
    size_t lcap = 0;
    while ((n = getline(&line, &lcap, in)) > 0) {
        lineno++;
        char *l = line;
        while (*l == '\r') l++;
        if (!strncmp(l, "HVT-META ", 9)) {
            parse_meta(l + 9, &fh);
            continue;
        }
        if (strncmp(l, "HVT-CHUNK ", 10))
            continue;
        unsigned kind, cpu, nrec, ninsn, first_id;
        uint64_t t0, t1;
        int used = 0;
        if (sscanf(l + 10, "%u %u %u %u %u %" SCNu64 " %" SCNu64 " %n", &kind, &cpu, &nrec, &ninsn,
                   &first_id, &t0, &t1, &used) != 7 || (kind != HVT_CHUNK_CODE && kind != HVT_CHUNK_RECORDS) ||
            cpu > UINT16_MAX) {
            fprintf(stderr, "hvt-import: %s: line %zu: malformed HVT-CHUNK header\n", argv[1], lineno);
            return 1;
        }
        char *h = l + 10 + used;
        size_t len = 0;
        while (hexval(h[0]) >= 0 && hexval(h[1]) >= 0) {
            if (len >= cap) { cap *= 2; payload = realloc(payload, cap); }
            payload[len++] = (uint8_t)(hexval(h[0]) << 4 | hexval(h[1]));
            h += 2;
        }
        if (*h != '\n' && *h != '\r' && *h != 0) {
            fprintf(stderr, "hvt-import: %s: line %zu: bad hex at column %zu\n", argv[1], lineno,
                    (size_t)(h - line) + 1);
            return 1;
        }
        if (len > HVT_CHUNK_RAW_MAX) {
            fprintf(stderr, "hvt-import: %s: line %zu: chunk of %zu bytes exceeds %u\n", argv[1], lineno,
                    len, HVT_CHUNK_RAW_MAX);
            return 1;
        }
        hvt_trace_chunk_hdr ch;
        memset(&ch, 0, sizeof ch);
        ch.kind = (uint8_t)kind;
        ch.cpu = kind == HVT_CHUNK_RECORDS ? (uint16_t)cpu : 0;
        ch.nrecords = nrec;
        ch.ninsns = ninsn;
        ch.first_tsc = t0;
        ch.last_tsc = t1;
        ch.first_code_id = first_id;
        if (tcw_chunk(w, &ch, payload, len) != 0) {
            fprintf(stderr, "hvt-import: line %zu: %s\n", lineno, tcw_error(w));
            return 1;
        }
        if (kind == HVT_CHUNK_RECORDS) {
            insns += ninsn;
            records += nrec;
            if (cpu + 1 > fh.ncpus) fh.ncpus = cpu + 1;
        }
    }
    size_t nchunks = tcw_chunks(w);
    if (tcw_finish(w, &fh) != 0 || tcw_close(w) != 0) {
        fprintf(stderr, "hvt-import: %s: write failed\n", argv[2]);
        return 1;
    }
    fprintf(stderr, "hvt-import: %zu chunks, %" PRIu64 " instructions, %" PRIu64 " records, lstar %#" PRIx64 "\n",
            nchunks, insns, records, fh.lstar);
    return 0;
}
