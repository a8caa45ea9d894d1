/* trace_chunkw: see trace_chunkw.h. */
#include "trace_chunkw.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

struct tcw {
    FILE *f;
    char *path;
    int level, finished, failed;
    char err[256];
    uint64_t pos;                  /* end of the last chunk (= data length) */
    hvt_trace_index_entry *index;
    size_t index_len, index_cap;
    uint64_t total_insns, total_records;
    ZSTD_CCtx *zc;
    void *zbuf;
    size_t zcap;
};

static int fail(tcw *w, const char *what)
{
    if (!w->failed)
        snprintf(w->err, sizeof w->err, "%s: %s: %s", w->path, what, errno ? strerror(errno) : "error");
    w->failed = 1;
    return -1;
}

static int put(tcw *w, const void *p, size_t n)
{
    if (w->failed) return -1;
    if (n && fwrite(p, 1, n, w->f) != n) return fail(w, "write");
    return 0;
}

static tcw *alloc_writer(const char *path, int level)
{
    tcw *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->path = strdup(path);
    w->level = level;
    w->zc = ZSTD_createCCtx();
    if (!w->path || !w->zc) {
        free(w->path);
        ZSTD_freeCCtx(w->zc);
        free(w);
        return NULL;
    }
    return w;
}

static void free_writer(tcw *w)
{
    if (w->f) fclose(w->f);
    ZSTD_freeCCtx(w->zc);
    free(w->zbuf);
    free(w->index);
    free(w->path);
    free(w);
}

static int write_header(tcw *w, const hvt_trace_file_hdr *hdr)
{
    hvt_trace_file_hdr h = *hdr;
    memcpy(h.magic, HVT_TRACE_MAGIC, sizeof h.magic);
    h.version = HVT_TRACE_VERSION;
    h.hdr_size = sizeof h;
    if (w->failed) return -1;
    if (fseeko(w->f, 0, SEEK_SET) != 0) return fail(w, "seek");
    if (put(w, &h, sizeof h) != 0) return -1;
    if (fseeko(w->f, 0, SEEK_END) != 0) return fail(w, "seek");
    return 0;
}

tcw *tcw_create(const char *path, const hvt_trace_file_hdr *hdr, int zstd_level)
{
    tcw *w = alloc_writer(path, zstd_level);
    if (!w) return NULL;
    if (!(w->f = fopen(path, "w+b"))) {
        perror(path);
        free_writer(w);
        return NULL;
    }
    if (write_header(w, hdr) != 0) {
        fprintf(stderr, "%s\n", w->err);
        free_writer(w);
        return NULL;
    }
    w->pos = sizeof *hdr;
    return w;
}

static int add_index(tcw *w, const hvt_trace_chunk_hdr *h, uint64_t at)
{
    if (w->index_len == w->index_cap) {
        size_t cap = w->index_cap ? w->index_cap * 2 : 256;
        hvt_trace_index_entry *n = realloc(w->index, cap * sizeof *n);
        if (!n) { errno = ENOMEM; return fail(w, "index"); }
        w->index = n;
        w->index_cap = cap;
    }
    w->index[w->index_len++] = (hvt_trace_index_entry){ at, h->kind, 0, h->cpu, h->ninsns,
                                                        h->first_tsc, h->last_tsc };
    if (h->kind == HVT_CHUNK_RECORDS) {
        w->total_insns += h->ninsns;
        w->total_records += h->nrecords;
    }
    return 0;
}

tcw *tcw_reopen(const char *path, uint64_t data_len, int zstd_level, char *err, size_t errlen)
{
    tcw *w = alloc_writer(path, zstd_level);
    if (!w) { snprintf(err, errlen, "out of memory"); return NULL; }
    hvt_trace_file_hdr fh;
    if (!(w->f = fopen(path, "r+b"))) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        goto bad;
    }
    if (fread(&fh, sizeof fh, 1, w->f) != 1 || memcmp(fh.magic, HVT_TRACE_MAGIC, sizeof fh.magic) ||
        fh.version != HVT_TRACE_VERSION || fh.hdr_size != sizeof fh || data_len < sizeof fh) {
        snprintf(err, errlen, "%s: not a version %d trace file of at least %llu bytes", path,
                 HVT_TRACE_VERSION, (unsigned long long)data_len);
        goto bad;
    }
    if (ftruncate(fileno(w->f), (off_t)data_len) != 0) {
        snprintf(err, errlen, "%s: cannot cut back to %llu bytes: %s", path,
                 (unsigned long long)data_len, strerror(errno));
        goto bad;
    }
    for (uint64_t off = sizeof fh; off < data_len;) {
        hvt_trace_chunk_hdr h;
        if (fseeko(w->f, (off_t)off, SEEK_SET) != 0 || fread(&h, sizeof h, 1, w->f) != 1 ||
            h.magic != HVT_CHUNK_MAGIC || (h.kind != HVT_CHUNK_CODE && h.kind != HVT_CHUNK_RECORDS) ||
            off + sizeof h + h.payload_size > data_len) {
            snprintf(err, errlen, "%s: no whole CODE/RECORDS chunk at offset %llu (checkpoint says "
                     "the data ends at %llu)", path, (unsigned long long)off, (unsigned long long)data_len);
            goto bad;
        }
        if (add_index(w, &h, off) != 0) {
            snprintf(err, errlen, "%s", w->err);
            goto bad;
        }
        off += sizeof h + h.payload_size;
    }
    if (fseeko(w->f, 0, SEEK_END) != 0) {
        snprintf(err, errlen, "%s: seek: %s", path, strerror(errno));
        goto bad;
    }
    w->pos = data_len;
    return w;
bad:
    free_writer(w);
    return NULL;
}

/* A finished file gets more chunks: drop the index and footer, append where the data ends. */
static int unfinish(tcw *w)
{
    if (!w->finished) return 0;
    w->finished = 0;
    if (fflush(w->f) != 0) return fail(w, "flush");
    if (ftruncate(fileno(w->f), (off_t)w->pos) != 0) return fail(w, "truncate");
    if (fseeko(w->f, (off_t)w->pos, SEEK_SET) != 0) return fail(w, "seek");
    return 0;
}

static int emit(tcw *w, hvt_trace_chunk_hdr *h, const void *raw, size_t raw_len, int compress)
{
    const void *payload = raw;
    size_t plen = raw_len;
    h->magic = HVT_CHUNK_MAGIC;
    h->compression = HVT_COMP_NONE;
    if (compress && w->level > 0 && raw_len) {
        size_t need = ZSTD_compressBound(raw_len);
        if (need > w->zcap) {
            free(w->zbuf);
            w->zbuf = malloc(need);
            w->zcap = w->zbuf ? need : 0;
            if (!w->zbuf) { errno = ENOMEM; return fail(w, "compression buffer"); }
        }
        size_t c = ZSTD_compressCCtx(w->zc, w->zbuf, w->zcap, raw, raw_len, w->level);
        if (ZSTD_isError(c)) {
            snprintf(w->err, sizeof w->err, "%s: zstd: %s", w->path, ZSTD_getErrorName(c));
            w->failed = 1;
            return -1;
        }
        if (c < raw_len) {
            payload = w->zbuf;
            plen = c;
            h->compression = HVT_COMP_ZSTD;
        }
    }
    h->payload_size = (uint32_t)plen;
    h->raw_size = (uint32_t)raw_len;
    h->crc32 = (uint32_t)crc32(crc32(0, Z_NULL, 0), payload, (uInt)plen);
    if (put(w, h, sizeof *h) != 0 || put(w, payload, plen) != 0) return -1;
    return 0;
}

int tcw_chunk(tcw *w, const hvt_trace_chunk_hdr *hin, const void *raw, size_t raw_len)
{
    if (w->failed) return -1;
    if ((hin->kind != HVT_CHUNK_CODE && hin->kind != HVT_CHUNK_RECORDS) || raw_len > HVT_CHUNK_RAW_MAX) {
        snprintf(w->err, sizeof w->err, "%s: chunk kind %u / %zu raw bytes cannot be written", w->path,
                 hin->kind, raw_len);
        return -1;
    }
    if (unfinish(w) != 0) return -1;
    hvt_trace_chunk_hdr h = *hin;
    if (h.kind == HVT_CHUNK_CODE) h.cpu = 0;
    uint64_t at = w->pos;
    if (emit(w, &h, raw, raw_len, 1) != 0 || add_index(w, &h, at) != 0) return -1;
    w->pos += sizeof h + h.payload_size;
    return 0;
}

int tcw_finish(tcw *w, const hvt_trace_file_hdr *hdr)
{
    if (unfinish(w) != 0) return -1;
    hvt_trace_chunk_hdr h = {0};
    h.kind = HVT_CHUNK_INDEX;
    h.nrecords = (uint32_t)w->index_len;
    if (emit(w, &h, w->index, w->index_len * sizeof *w->index, 0) != 0) return -1;
    hvt_trace_footer ft;
    memset(&ft, 0, sizeof ft);
    memcpy(ft.magic, HVT_TRACE_FOOTER_MAGIC, sizeof ft.magic);
    ft.index_offset = w->pos;
    ft.total_insns = w->total_insns;
    ft.total_records = w->total_records;
    if (put(w, &ft, sizeof ft) != 0 || write_header(w, hdr) != 0) return -1;
    if (fflush(w->f) != 0) return fail(w, "flush");
    w->finished = 1;
    return 0;
}

int tcw_flush(tcw *w, int sync)
{
    if (w->failed) return -1;
    if (fflush(w->f) != 0) return fail(w, "flush");
    if (sync && fsync(fileno(w->f)) != 0) return fail(w, "fsync");
    return 0;
}

uint64_t tcw_data_len(const tcw *w) { return w->pos; }
uint64_t tcw_chunks(const tcw *w) { return w->index_len; }
int tcw_finished(const tcw *w) { return w->finished; }
const char *tcw_error(const tcw *w) { return w->failed ? w->err : NULL; }

int tcw_close(tcw *w)
{
    if (!w) return -1;
    int rc = w->failed ? -1 : 0;
    if (fclose(w->f) != 0 && rc == 0) rc = -1;
    w->f = NULL;
    free_writer(w);
    return rc;
}
