/*
 * hvt-import - turn the hypervisor's debug-port chunk lines (trace/sink.c) into a trace
 * file (include/hvt_trace_format.h).
 *   usage: hvt-import [-z LEVEL] E9_LOG OUT_TRACE     (zstd level, default 3; 0 = store)
 * Lines: binary "HVT-CHUNKB ..." or hex "HVT-CHUNK ..." chunks (e9_lines.h) and
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
#include "e9_lines.h"

#define IMPORT_DEFAULT_LEVEL 3

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
    size_t cap = 0, lineno = 0;
    char *line = NULL, err[160];
    uint8_t *payload = NULL;
    uint64_t insns = 0, records = 0;
    size_t lcap = 0;
    uint64_t code_bytes = 0;
    for (;;) {
        e9_line c;
        int k = e9_next(in, &line, &lcap, &lineno, &c, &payload, &cap, err, sizeof err);
        if (k == E9_EOF)
            break;
        if (k == E9_BAD) {
            fprintf(stderr, "hvt-import: %s: line %zu: %s\n", argv[1], lineno, err);
            return 1;
        }
        if (k == E9_META)
            parse_meta(c.meta, &fh);
        if (k != E9_CHUNK)
            continue;
        hvt_trace_chunk_hdr ch;
        memset(&ch, 0, sizeof ch);
        ch.kind = (uint8_t)c.kind;
        ch.cpu = c.kind == HVT_CHUNK_RECORDS ? (uint16_t)c.cpu : 0;
        ch.nrecords = c.nrecords;
        ch.ninsns = c.ninsns;
        ch.first_tsc = c.first_tsc;
        ch.last_tsc = c.last_tsc;
        ch.first_code_id = c.first_code_id;
        if (tcw_chunk(w, &ch, payload, c.len) != 0) {
            fprintf(stderr, "hvt-import: line %zu: %s\n", lineno, tcw_error(w));
            return 1;
        }
        if (c.kind == HVT_CHUNK_CODE)
            code_bytes += c.len;
        if (c.kind == HVT_CHUNK_RECORDS) {
            insns += c.ninsns;
            records += c.nrecords;
            if (c.cpu + 1 > fh.ncpus) fh.ncpus = c.cpu + 1;
        }
    }
    size_t nchunks = tcw_chunks(w);
    if (tcw_finish(w, &fh) != 0 || tcw_close(w) != 0) {
        fprintf(stderr, "hvt-import: %s: write failed\n", argv[2]);
        return 1;
    }
    fprintf(stderr, "hvt-import: %zu chunks, %" PRIu64 " instructions, %" PRIu64 " records, "
            "%" PRIu64 " code bytes, lstar %#" PRIx64 "\n", nchunks, insns, records, code_bytes, fh.lstar);
    return 0;
}
