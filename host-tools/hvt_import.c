/*
 * hvt-import - turn the hypervisor's debug-port chunk lines (trace/sink_e9.c) into a trace
 * file (include/hvt_trace_format.h).
 *   usage: hvt-import [-z LEVEL] E9_LOG OUT_TRACE     (zstd level, default 3; 0 = store)
 * Lines: "HVT-CHUNK kind cpu nrecords ninsns first_code_id first_tsc last_tsc HEX" and
 * "HVT-META key=value ..." (lstar=, cpus=). Other lines are ignored. Chunks are written
 * zstd-compressed (as the collector stores them) with their CRC, then an index and a footer. A malformed chunk line is an error
 * naming the line; nothing is guessed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>
#include <zlib.h>
#include <zstd.h>
#include "hvt_trace_format.h"

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

int main(int argc, char **argv)
{
    int level = 3;
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
    FILE *out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 1; }
    hvt_trace_file_hdr fh;
    memset(&fh, 0, sizeof fh);
    memcpy(fh.magic, HVT_TRACE_MAGIC, 8);
    fh.version = HVT_TRACE_VERSION;
    fh.hdr_size = sizeof fh;
    fwrite(&fh, sizeof fh, 1, out);           /* rewritten at the end with what we learned */
    size_t cap = 1 << 20, lineno = 0, nidx = 0, idxcap = 1024;
    char *line = malloc(cap);
    uint8_t *payload = malloc(cap);
    hvt_trace_index_entry *idx = malloc(idxcap * sizeof *idx);
    uint64_t pos = sizeof fh, insns = 0, records = 0;
    void *zbuf = NULL;
    size_t zcap = 0;
    unsigned maxcpu = 0;
    ssize_t n;
    size_t lcap = cap;
    while ((n = getline(&line, &lcap, in)) > 0) {
        lineno++;
        char *l = line;
        while (*l == '\r') l++;
        if (!strncmp(l, "HVT-META ", 9)) {
            char *p = strstr(l, "lstar=");
            if (p) fh.lstar = strtoull(p + 6, NULL, 16);
            continue;
        }
        if (strncmp(l, "HVT-CHUNK ", 10))
            continue;
        unsigned kind, cpu, nrec, ninsn, first_id;
        uint64_t t0, t1;
        int used = 0;
        if (sscanf(l + 10, "%u %u %u %u %u %" SCNu64 " %" SCNu64 " %n", &kind, &cpu, &nrec, &ninsn,
                   &first_id, &t0, &t1, &used) != 7 || (kind != HVT_CHUNK_CODE && kind != HVT_CHUNK_RECORDS)) {
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
        hvt_trace_chunk_hdr ch;
        memset(&ch, 0, sizeof ch);
        ch.magic = HVT_CHUNK_MAGIC;
        ch.kind = (uint8_t)kind;
        ch.compression = HVT_COMP_NONE;
        ch.cpu = kind == HVT_CHUNK_RECORDS ? (uint16_t)cpu : 0;
        ch.payload_size = ch.raw_size = (uint32_t)len;
        if (level > 0) {
            size_t bound = ZSTD_compressBound(len);
            if (bound > zcap) { zcap = bound; zbuf = realloc(zbuf, zcap); }
            size_t z = ZSTD_compress(zbuf, zcap, payload, len, level);
            if (ZSTD_isError(z)) {
                fprintf(stderr, "hvt-import: line %zu: zstd: %s\n", lineno, ZSTD_getErrorName(z));
                return 1;
            }
            if (z < len) {
                memcpy(payload, zbuf, z);
                ch.compression = HVT_COMP_ZSTD;
                ch.payload_size = (uint32_t)z;
                len = z;
            }
        }
        ch.nrecords = nrec;
        ch.ninsns = ninsn;
        ch.first_tsc = t0;
        ch.last_tsc = t1;
        ch.first_code_id = first_id;
        ch.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), payload, (uInt)len);
        if (nidx == idxcap) { idxcap *= 2; idx = realloc(idx, idxcap * sizeof *idx); }
        idx[nidx++] = (hvt_trace_index_entry){ pos, (uint8_t)kind, 0, ch.cpu, ninsn, t0, t1 };
        fwrite(&ch, sizeof ch, 1, out);
        fwrite(payload, 1, len, out);
        pos += sizeof ch + len;
        if (kind == HVT_CHUNK_RECORDS) {
            insns += ninsn;
            records += nrec;
            if (cpu + 1 > maxcpu) maxcpu = cpu + 1;
        }
    }
    /* Index chunk and footer. */
    hvt_trace_chunk_hdr ih;
    memset(&ih, 0, sizeof ih);
    ih.magic = HVT_CHUNK_MAGIC;
    ih.kind = HVT_CHUNK_INDEX;
    ih.payload_size = ih.raw_size = (uint32_t)(nidx * sizeof *idx);
    ih.nrecords = (uint32_t)nidx;
    ih.crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), (const Bytef *)idx, ih.payload_size);
    uint64_t index_off = pos;
    fwrite(&ih, sizeof ih, 1, out);
    fwrite(idx, sizeof *idx, nidx, out);
    hvt_trace_footer ft;
    memcpy(ft.magic, HVT_TRACE_FOOTER_MAGIC, 8);
    ft.index_offset = index_off;
    ft.total_insns = insns;
    ft.total_records = records;
    fwrite(&ft, sizeof ft, 1, out);
    fh.ncpus = maxcpu;
    fseek(out, 0, SEEK_SET);
    fwrite(&fh, sizeof fh, 1, out);
    if (fclose(out)) { perror(argv[2]); return 1; }
    fprintf(stderr, "hvt-import: %zu chunks, %" PRIu64 " instructions, %" PRIu64 " records, lstar %#" PRIx64 "\n",
            nidx, insns, records, fh.lstar);
    return 0;
}
