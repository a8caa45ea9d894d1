/* trace_reader: see trace_reader.h. */
#include "trace_reader.h"
#include "trace_varint.h"
#include "util.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

enum {
    TR_INDEX_MAX = 256u << 20,
    TR_POOL_SLACK = 16,  /* readable bytes after the last code entry: decoders load 16 at once */
    TR_CODE_STRIDE = 16, /* length byte + up to 15 instruction bytes */
};

typedef struct {
    uint64_t regs[HVT_NREGS];
    int seen;
} tr_carry;

/* Decoding state of one stream of RECORDS chunks (state resets at each chunk start). */
typedef struct {
    int cpu_filter; /* -1: every RECORDS chunk in file order; else only this CPU's */
    size_t next_chunk;
    uint8_t *raw;
    size_t raw_cap, raw_len, raw_pos;
    uint64_t chunk_off;
    uint16_t cpu;
    uint64_t tsc, tick, expected_rip, cr3;
    /* The writer's register state (what deltas apply to): zero at every reset. The values a
     * consumer sees are the CPU's carry (tr_carry), updated from it for the known registers. */
    uint64_t base[HVT_NREGS];
    int resync;     /* reset or new mode: compare every known register with the carry next */
    uint8_t mode;   /* hvt_rec_mode (FULL at every chunk start; a GAP keeps it) */
    uint32_t known; /* the registers the mode carries (HVT_REG_* bits) */
    /* A RUN or REPEAT marker being expanded: run_left instructions still to yield, the
     * marker's byte offset (for errors). REPEAT repeats the last instruction (have_last). */
    uint32_t run_left;
    uint8_t run_kind;
    size_t run_pos;
    int have_last;
    uint64_t last_rip;
    uint32_t last_id;
    /* Version 4's REPEAT in FULL and REGS adds the last instruction record's register deltas
     * (new - old, modulo 2^64) again each time: the registers that record sent (last_sent;
     * none after a RUN's instruction) and their deltas. */
    uint32_t last_sent;
    uint64_t last_delta[HVT_NREGS];
    /* The chunk header's counts, and what the payload held so far. */
    uint32_t hdr_records, hdr_insns, n_records, n_insns;
    struct { uint64_t rip; uint32_t id; } pred[HVT_PRED_SLOTS]; /* id + 1; 0 = empty. One line per slot */
} tr_cursor;

struct tr_reader {
    const char *name;
    const uint8_t *data;
    size_t len;
    int mapped, recovered, damaged;
    hvt_trace_file_hdr hdr;
    hvt_trace_index_entry *chunks;
    size_t nchunks;
    /* code dictionary */
    uint8_t *code_tab; /* id * TR_CODE_STRIDE: length byte, then the bytes */
    uint32_t ncode;
    /* iteration: one cursor over all chunks (file order), or one per CPU merged by time */
    tr_cursor file_cur;
    int merge;
    uint64_t range_from, range_to;
    tr_cursor *mcur; /* merge: per CPU with RECORDS chunks */
    tr_rec *mpeek;
    int *mhave;
    size_t nmcur;
    tr_carry **carry; /* per CPU, grown on demand to ncarry entries */
    size_t ncarry;
    ZSTD_DCtx *zd;
};

static int chunk_hdr_at(tr_reader *r, uint64_t off, hvt_trace_chunk_hdr *h, int quiet)
{
    if (!util_fits(r->len, off, sizeof *h)) {
        if (!quiet) util_err(r->name, off, "truncated chunk header (file is %zu bytes)", r->len);
        return -1;
    }
    memcpy(h, r->data + off, sizeof *h);
    if (h->magic != HVT_CHUNK_MAGIC || h->kind < HVT_CHUNK_CODE || h->kind > HVT_CHUNK_INDEX ||
        h->compression > HVT_COMP_ZSTD) {
        if (!quiet) util_err(r->name, off, "bad chunk header (magic 0x%08x kind %u)", h->magic, h->kind);
        return -1;
    }
    if (!util_fits(r->len, off + sizeof *h, h->payload_size)) {
        if (!quiet)
            util_err(r->name, off, "chunk payload of %u bytes runs past the end of the file (truncated)",
                     h->payload_size);
        return -1;
    }
    if ((h->kind != HVT_CHUNK_INDEX && h->raw_size > HVT_CHUNK_RAW_MAX) || h->raw_size > TR_INDEX_MAX ||
        (h->compression == HVT_COMP_NONE && h->raw_size != h->payload_size)) {
        if (!quiet) util_err(r->name, off, "chunk raw size %u is invalid", h->raw_size);
        return -1;
    }
    return 0;
}

static int payload(tr_reader *r, uint64_t off, const hvt_trace_chunk_hdr *h, uint8_t **buf, size_t *cap)
{
    const uint8_t *p = r->data + off + sizeof *h;
    if ((uint32_t)crc32(crc32(0, Z_NULL, 0), p, h->payload_size) != h->crc32) {
        util_err(r->name, off, "chunk checksum mismatch (corrupt payload)");
        return -1;
    }
    if (*cap < (size_t)h->raw_size + 1) {
        free(*buf);
        *cap = (size_t)h->raw_size + 1;
        *buf = malloc(*cap);
        if (!*buf) { *cap = 0; return -1; }
    }
    if (h->compression == HVT_COMP_NONE) {
        memcpy(*buf, p, h->raw_size);
        return 0;
    }
    size_t n = ZSTD_decompressDCtx(r->zd, *buf, h->raw_size, p, h->payload_size);
    if (ZSTD_isError(n) || n != h->raw_size) {
        util_err(r->name, off + sizeof *h, "chunk does not decompress to its %u bytes: %s", h->raw_size,
                 ZSTD_isError(n) ? ZSTD_getErrorName(n) : "size mismatch");
        return -1;
    }
    return 0;
}

static int add_chunk(tr_reader *r, size_t *cap, const hvt_trace_index_entry *e)
{
    if (r->nchunks == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        hvt_trace_index_entry *n = realloc(r->chunks, *cap * sizeof *n);
        if (!n) return -1;
        r->chunks = n;
    }
    r->chunks[r->nchunks++] = *e;
    return 0;
}

static int load_index(tr_reader *r)
{
    hvt_trace_footer ft;
    if (r->len < r->hdr.hdr_size + sizeof ft) return -1;
    memcpy(&ft, r->data + r->len - sizeof ft, sizeof ft);
    if (memcmp(ft.magic, HVT_TRACE_FOOTER_MAGIC, sizeof ft.magic) != 0) return -1;
    hvt_trace_chunk_hdr h;
    if (chunk_hdr_at(r, ft.index_offset, &h, 0) != 0 || h.kind != HVT_CHUNK_INDEX ||
        h.raw_size != (uint64_t)h.nrecords * sizeof(hvt_trace_index_entry) || h.compression != HVT_COMP_NONE)
        return -1;
    uint8_t *buf = NULL;
    size_t cap = 0, ccap = 0;
    if (payload(r, ft.index_offset, &h, &buf, &cap) != 0) { free(buf); return -1; }
    for (uint32_t i = 0; i < h.nrecords; i++) {
        hvt_trace_index_entry e;
        memcpy(&e, buf + (size_t)i * sizeof e, sizeof e);
        hvt_trace_chunk_hdr ch;
        if (e.offset < r->hdr.hdr_size || e.offset >= ft.index_offset || chunk_hdr_at(r, e.offset, &ch, 0) != 0 ||
            ch.kind != e.kind) {
            util_err(r->name, ft.index_offset, "index entry %u points to a bad chunk at 0x%llx", i,
                     (unsigned long long)e.offset);
            r->damaged = 1;
            free(buf);
            r->nchunks = 0;
            return -1;
        }
        if (add_chunk(r, &ccap, &e) != 0) { free(buf); return -1; }
    }
    free(buf);
    return 0;
}

static int scan_chunks(tr_reader *r)
{
    size_t cap = r->nchunks; /* == 0 */
    uint64_t off = r->hdr.hdr_size;
    while (off < r->len) {
        hvt_trace_chunk_hdr h;
        if (chunk_hdr_at(r, off, &h, 0) != 0) return -1; /* reported: truncated/corrupt at off */
        if (h.kind == HVT_CHUNK_INDEX) break;
        hvt_trace_index_entry e = {off, h.kind, 0, h.cpu, h.ninsns, h.first_tsc, h.last_tsc};
        if (add_chunk(r, &cap, &e) != 0) return -1;
        off += sizeof h + h.payload_size;
    }
    return 0;
}

/* The dictionary as a fixed-stride table: entry id is TR_CODE_STRIDE bytes at id * stride,
 * length first, so finding an instruction's bytes is one load (and reading 16 bytes from its
 * first byte stays inside the table, which keeps TR_POOL_SLACK bytes after the last entry). */
static int load_code(tr_reader *r)
{
    uint8_t *buf = NULL;
    size_t cap = 0, tab_cap = 0;
    for (size_t i = 0; i < r->nchunks; i++) {
        if (r->chunks[i].kind != HVT_CHUNK_CODE) continue;
        hvt_trace_chunk_hdr h;
        uint64_t off = r->chunks[i].offset;
        if (chunk_hdr_at(r, off, &h, 0) != 0 || payload(r, off, &h, &buf, &cap) != 0) goto bad;
        if (h.first_code_id != r->ncode) {
            util_err(r->name, off, "code chunk starts at id %u, expected %u", h.first_code_id, r->ncode);
            goto bad;
        }
        size_t p = 0;
        for (uint32_t k = 0; k < h.nrecords; k++) {
            if (p >= h.raw_size || buf[p] == 0 || buf[p] > HVT_CODE_MAX || buf[p] > h.raw_size - p - 1) {
                util_err(r->name, off, "code chunk entry %u (payload byte %zu) is malformed", k, p);
                goto bad;
            }
            size_t need = ((size_t)r->ncode + 1) * TR_CODE_STRIDE + TR_POOL_SLACK;
            if (need > tab_cap) {
                tab_cap = need * 2;
                uint8_t *nt = realloc(r->code_tab, tab_cap);
                if (!nt) goto bad;
                r->code_tab = nt;
            }
            uint8_t *e = r->code_tab + (size_t)r->ncode * TR_CODE_STRIDE;
            memset(e, 0, TR_CODE_STRIDE + TR_POOL_SLACK);
            memcpy(e, buf + p, 1 + (size_t)buf[p]);
            r->ncode++;
            p += 1 + buf[p];
        }
        if (p != h.raw_size) {
            util_err(r->name, off, "code chunk has %zu trailing bytes", h.raw_size - p);
            goto bad;
        }
    }
    free(buf);
    return 0;
bad:
    free(buf);
    return -1;
}

tr_reader *tr_open_mem(const char *name, const uint8_t *data, size_t len)
{
    tr_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->name = name;
    r->data = data;
    r->len = len;
    r->zd = ZSTD_createDCtx();
    if (!r->zd) goto fail;
    r->file_cur.cpu_filter = -1;
    r->range_to = UINT64_MAX;
    if (len < sizeof r->hdr) {
        util_err(name, len, "file too short for a trace header (%zu bytes)", len);
        goto fail;
    }
    memcpy(&r->hdr, data, sizeof r->hdr);
    if (memcmp(r->hdr.magic, HVT_TRACE_MAGIC, sizeof r->hdr.magic) != 0) {
        util_err(name, 0, "not an hvtrace trace (bad magic)");
        goto fail;
    }
    if (r->hdr.version < HVT_TRACE_VERSION_MIN || r->hdr.version > HVT_TRACE_VERSION ||
        r->hdr.hdr_size < sizeof r->hdr || r->hdr.hdr_size > len ||
        r->hdr.build_id_len > HVT_BUILD_ID_MAX) {
        util_err(name, 8, "unsupported trace version %u or header size %u", r->hdr.version, r->hdr.hdr_size);
        goto fail;
    }
    if (load_index(r) != 0) {
        r->recovered = 1;
        r->nchunks = 0;
        if (scan_chunks(r) != 0) {
            r->damaged = 1;
            if (!util_err_quiet)
                fprintf(stderr, "hvt: %s: no index; reading the %zu whole chunks before the damage\n", name, r->nchunks);
        }
    }
    if (load_code(r) != 0) goto fail;
    return r;
fail:
    tr_close(r);
    return NULL;
}

tr_reader *tr_open(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (!util_err_quiet) perror(path);
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        if (!util_err_quiet) fprintf(stderr, "hvt: %s: not a regular file\n", path);
        close(fd);
        return NULL;
    }
    size_t len = (size_t)st.st_size;
    void *m = len ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (len && m == MAP_FAILED) {
        perror(path);
        return NULL;
    }
    tr_reader *r = tr_open_mem(path, m, len);
    if (!r) {
        if (len) munmap(m, len);
        return NULL;
    }
    r->mapped = 1;
    return r;
}

void tr_close(tr_reader *r)
{
    if (!r) return;
    if (r->mapped && r->len) munmap((void *)r->data, r->len);
    for (size_t i = 0; i < r->ncarry; i++) free(r->carry[i]);
    free(r->carry);
    free(r->chunks);
    free(r->code_tab);
    free(r->file_cur.raw);
    for (size_t i = 0; i < r->nmcur; i++) free(r->mcur[i].raw);
    free(r->mcur);
    free(r->mpeek);
    free(r->mhave);
    ZSTD_freeDCtx(r->zd);
    free(r);
}

const hvt_trace_file_hdr *tr_header(const tr_reader *r) { return &r->hdr; }
size_t tr_chunk_count(const tr_reader *r) { return r->nchunks; }
const hvt_trace_index_entry *tr_chunk(const tr_reader *r, size_t i) { return i < r->nchunks ? &r->chunks[i] : NULL; }
int tr_recovered(const tr_reader *r) { return r->recovered; }
int tr_damaged(const tr_reader *r) { return r->damaged; }
uint32_t tr_code_count(const tr_reader *r) { return r->ncode; }

const uint8_t *tr_code(const tr_reader *r, uint32_t id, uint8_t *len)
{
    if (id >= r->ncode) return NULL;
    const uint8_t *p = r->code_tab + (size_t)id * TR_CODE_STRIDE;
    *len = p[0];
    return p + 1;
}

const char *tr_reg_name(unsigned reg)
{
    static const char *const names[HVT_NREGS] = HVT_REG_NAMES;
    return reg < HVT_NREGS ? names[reg] : NULL;
}

const char *tr_mode_name(char *buf, size_t n, unsigned mode, uint32_t mask)
{
    if (mode == HVT_MODE_FULL) snprintf(buf, n, "full");
    else if (mode == HVT_MODE_FLOW) snprintf(buf, n, "flow");
    else if (mode == HVT_MODE_REGS) {
        size_t at = (size_t)snprintf(buf, n, "regs=");
        for (unsigned i = 0; i < HVT_NREGS && at < n; i++)
            if (mask >> i & 1) at += (size_t)snprintf(buf + at, n - at, "%s%s", at > 5 ? ":" : "", tr_reg_name(i));
    } else snprintf(buf, n, "mode%u", mode);
    return buf;
}

int tr_mode_parse(const char *s, unsigned *mode, uint32_t *mask, char *err, size_t errlen)
{
    *mask = 0;
    if (!strcmp(s, "full")) { *mode = HVT_MODE_FULL; *mask = (1u << HVT_NREGS) - 1; return 0; }
    if (!strcmp(s, "flow")) { *mode = HVT_MODE_FLOW; return 0; }
    if (strncmp(s, "regs=", 5) != 0) {
        snprintf(err, errlen, "record mode '%s': full, flow or regs=REG:REG...", s);
        return -1;
    }
    *mode = HVT_MODE_REGS;
    if (!s[5]) {
        snprintf(err, errlen, "record mode '%s': regs= names at least one register", s);
        return -1;
    }
    /* Names separated by single ':' - an empty one (leading, doubled or trailing ':') is an
     * error, as in the hypervisor's own regs= option. */
    for (const char *p = s + 5;; p++) {
        size_t l = strcspn(p, ":");
        unsigned i;
        for (i = 0; i < HVT_NREGS; i++)
            if (strlen(tr_reg_name(i)) == l && !strncmp(p, tr_reg_name(i), l)) break;
        if (!l) {
            snprintf(err, errlen, "record mode '%s': an empty register name (names are separated by one ':')", s);
            return -1;
        }
        if (i == HVT_NREGS) {
            snprintf(err, errlen, "record mode '%s': no register '%.*s' (rax..r15, rflags)", s, (int)l, p);
            return -1;
        }
        *mask |= 1u << i;
        p += l;
        if (!*p)
            return 0;
    }
}

uint64_t tr_total_insns(const tr_reader *r)
{
    uint64_t n = 0;
    for (size_t i = 0; i < r->nchunks; i++)
        if (r->chunks[i].kind == HVT_CHUNK_RECORDS) n += r->chunks[i].ninsns;
    return n;
}

static void forget_carry(tr_reader *r)
{
    for (size_t c = 0; c < r->ncarry; c++)
        if (r->carry[c]) r->carry[c]->seen = 0;
}

int tr_seek_chunk(tr_reader *r, size_t i)
{
    if (i > r->nchunks) return -1;
    r->merge = 0;
    r->file_cur.next_chunk = i;
    r->file_cur.raw_len = r->file_cur.raw_pos = 0;
    r->file_cur.run_left = 0;   /* a RUN or REPEAT being expanded belongs to the old place */
    forget_carry(r);
    return 0;
}

/* What a chunk start and a GAP reset (the mode survives a GAP: the caller sets it). */
static void reset_state(tr_cursor *k)
{
    k->expected_rip = 0;
    k->cr3 = 0;
    k->tick = 1;
    memset(k->base, 0, sizeof k->base);
    memset(k->pred, 0, sizeof k->pred);
    k->resync = 1;
    k->have_last = 0;
    k->last_sent = 0;
}

static void set_mode(tr_cursor *k, uint8_t mode, uint32_t known)
{
    k->mode = mode;
    k->known = known;
    k->resync = 1;
}

static int corrupt_at(tr_reader *r, tr_cursor *k, size_t pos, const char *what)
{
    r->damaged = 1;
    util_err(r->name, k->chunk_off, "corrupt record at record byte %zu of this chunk: %s", pos, what);
    return -1;
}

static int corrupt(tr_reader *r, tr_cursor *k, const char *what) { return corrupt_at(r, k, k->raw_pos, what); }

/* The end of a chunk's payload: its header's counts must be what it held (a RUN or REPEAT
 * counts as its n instructions and one record). */
static int chunk_end(tr_reader *r, tr_cursor *k)
{
    if (k->n_records == k->hdr_records && k->n_insns == k->hdr_insns) return 0;
    char what[128];
    snprintf(what, sizeof what, "the chunk header says %u records, %u instructions; the payload holds %u, %u",
             k->hdr_records, k->hdr_insns, k->n_records, k->n_insns);
    return corrupt(r, k, what);
}

static int open_next_chunk(tr_reader *r, tr_cursor *k)
{
    while (k->next_chunk < r->nchunks) {
        const hvt_trace_index_entry *e = &r->chunks[k->next_chunk++];
        if (e->kind != HVT_CHUNK_RECORDS || (k->cpu_filter >= 0 && e->cpu != k->cpu_filter)) continue;
        if (e->last_tsc < r->range_from || e->first_tsc > r->range_to) continue;
        hvt_trace_chunk_hdr h;
        if (chunk_hdr_at(r, e->offset, &h, 0) != 0 || payload(r, e->offset, &h, &k->raw, &k->raw_cap) != 0) {
            r->damaged = 1;
            return -1;
        }
        k->chunk_off = e->offset;
        k->raw_len = h.raw_size;
        k->raw_pos = 0;
        k->cpu = h.cpu;
        k->tsc = h.first_tsc;
        k->run_left = 0;
        k->hdr_records = h.nrecords;
        k->hdr_insns = h.ninsns;
        k->n_records = k->n_insns = 0;
        reset_state(k);
        set_mode(k, HVT_MODE_FULL, (1u << HVT_NREGS) - 1);
        if (h.cpu >= r->ncarry) {
            size_t n = (size_t)h.cpu + 1;
            tr_carry **c = realloc(r->carry, n * sizeof *c);
            if (!c) return -1;
            memset(c + r->ncarry, 0, (n - r->ncarry) * sizeof *c);
            r->carry = c;
            r->ncarry = n;
        }
        if (!r->carry[h.cpu] && !(r->carry[h.cpu] = calloc(1, sizeof(tr_carry)))) return -1;
        if (k->raw_len) return 1;
        if (chunk_end(r, k) != 0) return -1;
    }
    return 0;
}

/* An instruction whose fields are read (deltas already in k->base for the registers in
 * 'sent'): the reported record, and the state every instruction advances. */
static void put_insn(tr_reader *r, tr_cursor *k, tr_rec *o, uint64_t rip, uint32_t id, uint32_t sent)
{
    tr_carry *c = r->carry[k->cpu];
    /* The registers the writer sent changed (it sends only those); after a reset or a mode
     * change every known register is compared with what the CPU last showed. */
    uint32_t look = k->resync ? k->known : sent, changed = 0;
    for (uint32_t m = look; m; m &= m - 1) {
        int i = __builtin_ctz(m);
        if (k->base[i] != c->regs[i]) {
            changed |= 1u << i;
            c->regs[i] = k->base[i];
        }
    }
    k->resync = 0;
    const uint8_t *code = r->code_tab + (size_t)id * TR_CODE_STRIDE;
    uint32_t slot = HVT_PRED_SLOT(rip);
    o->kind = TR_INSN;
    o->rip = rip;
    o->code_id = id;
    o->code_len = code[0];
    o->code = code + 1;
    o->cr3 = k->cr3;
    k->tsc += k->tick;
    o->tsc = k->tsc;
    o->changed = c->seen ? changed : changed | k->known;
    c->seen = 1;
    o->regs = c->regs;
    k->expected_rip = rip + code[0];
    k->pred[slot].rip = rip;
    k->pred[slot].id = id + 1;
    k->have_last = 1;
    k->last_rip = rip;
    k->last_id = id;
    k->n_insns++;
}

/* The next instruction of the RUN or REPEAT being expanded: exactly a tag-0 record (RUN: no
 * register changed, so a REPEAT after it changes none either) or the last instruction again
 * (REPEAT: from version 4 with that record's register deltas, within the mode's known set -
 * none in FLOW; before version 4 no register). */
static int run_next(tr_reader *r, tr_cursor *k, tr_rec *o)
{
    uint64_t rip;
    uint32_t id, sent = 0;
    if (k->run_kind == HVT_MARK_RUN) {
        rip = k->expected_rip;
        uint32_t slot = HVT_PRED_SLOT(rip);
        if (!k->pred[slot].id || k->pred[slot].rip != rip)
            return corrupt_at(r, k, k->run_pos, "RUN instruction with no predicted code id");
        id = k->pred[slot].id - 1;
        k->last_sent = 0;
    } else {
        rip = k->last_rip;
        id = k->last_id;
        if (r->hdr.version >= 4) {
            sent = k->last_sent & k->known;
            for (uint32_t m = sent; m; m &= m - 1) {
                int i = __builtin_ctz(m);
                k->base[i] += k->last_delta[i];
            }
        }
    }
    k->run_left--;
    put_insn(r, k, o, rip, id, sent);
    return 1;
}

/* A version 4 RFLAGS field at *pp (hvt_trace_format.h): the delta it makes to RFLAGS (old),
 * *pp moved past it; -1 reported. */
static int rflags_field(tr_reader *r, tr_cursor *k, const uint8_t **pp, const uint8_t *end, uint64_t old,
                        uint64_t *delta)
{
    const uint8_t *p = *pp;
    if (p >= end) return corrupt(r, k, "truncated RFLAGS field");
    uint8_t b = *p++;
    switch (hvt_rflags_byte(b)) {
    case HVT_RFLAGS_BYTE_WIDE: {
        uint64_t v;
        if (!(p = tv_get(p, end, &v))) return corrupt(r, k, "truncated varint (RFLAGS field)");
        *delta = (uint64_t)tv_unzig(v);
        break;
    }
    case HVT_RFLAGS_BYTE_PACKED:
        *delta = (old ^ hvt_rflags_unpack(b)) - old;
        break;
    case HVT_RFLAGS_BYTE_BAD: {
        char what[120];
        snprintf(what, sizeof what, HVT_RFLAGS_BAD_FMT, b);
        return corrupt(r, k, what);
    }
    }
    *pp = p;
    return 0;
}

#define GETV(v) do { if (!(p = tv_get(p, end, &(v)))) return corrupt(r, k, "truncated varint"); } while (0)

static int cursor_next(tr_reader *r, tr_cursor *k, tr_rec *o)
{
    o->cpu = k->cpu;
    if (k->run_left) {
        o->mode = k->mode;
        o->regs_known = k->known;
        return run_next(r, k, o);
    }
    if (k->raw_pos >= k->raw_len) {
        if (k->raw_len && chunk_end(r, k) != 0) return -1;
        k->raw_len = 0;
        int rc = open_next_chunk(r, k);
        if (rc <= 0) return rc;
    }
    const uint8_t *p = k->raw + k->raw_pos, *end = k->raw + k->raw_len;
    uint8_t tag = *p++;
    o->cpu = k->cpu;
    k->n_records++;
    if (!(tag & HVT_TAG_MARKER)) {
        uint64_t v, mask = 0;
        /* Registers whose field is not a zigzag varint: a version 4 short record's U32 one, and
         * from version 4 RFLAGS when it comes as an RFLAGS field (never in the mask). */
        uint32_t special = 0;
        if (tag & HVT_INSN_SHORT) {
            /* Version 3's short record: straight on, one register (and RFLAGS) changed. */
            if (r->hdr.version < 3) return corrupt(r, k, "a short record in a file older than version 3");
            if ((tag & HVT_SHORT_U32) && r->hdr.version < 4)
                return corrupt(r, k, "reserved bit set in a short record (HVT_SHORT_U32 before version 4)");
            mask = 1ull << (tag & HVT_SHORT_REG) | (tag & HVT_SHORT_RFLAGS ? 1ull << HVT_REG_RFLAGS : 0);
            if (tag & HVT_SHORT_U32) special = 1u << (tag & HVT_SHORT_REG);
            if ((tag & HVT_SHORT_RFLAGS) && r->hdr.version >= 4) special |= 1u << HVT_REG_RFLAGS;
            tag = 0;
        }
        if (tag & ~HVT_INSN_FLAGS_ALL) return corrupt(r, k, "reserved instruction flag set");
        uint64_t rip = k->expected_rip;
        if (tag & HVT_INSN_RIP) { GETV(v); rip += (uint64_t)tv_unzig(v); }
        uint32_t slot = HVT_PRED_SLOT(rip), id;
        if (tag & HVT_INSN_CODE) {
            GETV(v);
            if (v >= r->ncode) return corrupt(r, k, "code id not in the dictionary");
            id = (uint32_t)v;
        } else {
            if (!k->pred[slot].id || k->pred[slot].rip != rip) return corrupt(r, k, "no predicted code id");
            id = k->pred[slot].id - 1;
        }
        if (tag & HVT_INSN_CR3) GETV(k->cr3);
        if (tag & HVT_INSN_TICK) GETV(k->tick);
        if (tag & HVT_INSN_REGS) {
            GETV(mask);
            if (mask >> HVT_NREGS) return corrupt(r, k, "register mask has unknown bits");
        }
        if (tag & HVT_INSN_RFLAGS) {
            /* Version 2: RFLAGS's delta alone, where a mask bit 16 would put it (last). */
            if (mask >> HVT_REG_RFLAGS) return corrupt(r, k, "RFLAGS both in the mask and alone");
            mask |= 1ull << HVT_REG_RFLAGS;
            if (r->hdr.version >= 4) special |= 1u << HVT_REG_RFLAGS;
        }
        if (mask & ~(uint64_t)k->known)
            return corrupt(r, k, k->mode == HVT_MODE_FLOW ? "register field in FLOW mode"
                                                          : "register outside the REGS mode's set");
        /* In ascending register order, as the format puts the fields: the short record's
         * register (0..15) before RFLAGS (16). */
        for (uint32_t m = (uint32_t)mask; m; m &= m - 1) {
            int i = __builtin_ctz(m);
            uint64_t d;
            if (__builtin_expect(!(special >> i & 1), 1)) {
                GETV(v);
                d = (uint64_t)tv_unzig(v);
            } else if (i == HVT_REG_RFLAGS) {
                if (rflags_field(r, k, &p, end, k->base[i], &d) != 0) return -1;
            } else {
                /* HVT_SHORT_U32: the new value, zero-extended, as a 32-bit operation leaves it */
                if (end - p < 4) return corrupt(r, k, "truncated 32-bit register value (HVT_SHORT_U32)");
                uint64_t nv = p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint64_t)p[3] << 24;
                p += 4;
                d = nv - k->base[i];
            }
            k->base[i] += d;
            k->last_delta[i] = d;
        }
        k->last_sent = (uint32_t)mask;
        o->mode = k->mode;
        o->regs_known = k->known;
        put_insn(r, k, o, rip, id, (uint32_t)mask);
        k->raw_pos = (size_t)(p - k->raw);
        return 1;
    }
    uint8_t type = tag & 0x7f;
    uint64_t v;
    o->kind = type;
    o->tsc = k->tsc;
    o->rip = k->expected_rip;
    if (type >= HVT_MARK_MODE && r->hdr.version < 3)
        return corrupt(r, k, "a version 3 marker in an older file");
    switch (type) {
    case HVT_MARK_EVENT:
        if (end - p < 2) return corrupt(r, k, "truncated event");
        o->vector = p[0];
        o->ev_type = p[1];
        p += 2;
        GETV(v);
        o->errcode = v ? (int64_t)(v - 1) : -1;
        break;
    case HVT_MARK_SYSCALL: case HVT_MARK_START: case HVT_MARK_STOP:
        GETV(o->a);
        break;
    case HVT_MARK_TIME:
        GETV(o->a);
        k->tsc = o->a;
        o->tsc = o->a;
        break;
    case HVT_MARK_VMEXIT: case HVT_MARK_GAP:
        GETV(o->a);
        GETV(o->b);
        if (type == HVT_MARK_GAP) reset_state(k);
        break;
    case HVT_MARK_SWITCH: case HVT_MARK_CONTEXT: {
        GETV(o->a);
        GETV(o->b);
        if (p >= end || *p > HVT_COMM_MAX || *p > end - p - 1) return corrupt(r, k, "bad comm length");
        uint8_t l = *p++;
        memcpy(o->comm, p, l);
        o->comm[l] = 0;
        p += l;
        GETV(o->switch_cr3);
        break;
    }
    case HVT_MARK_MODE: {
        uint64_t mode, mask;
        GETV(mode);
        GETV(mask);
        const uint32_t all = (1u << HVT_NREGS) - 1;
        if (mode >= HVT_MODE_COUNT) return corrupt(r, k, "unknown record mode");
        if (mask & ~(uint64_t)all) return corrupt(r, k, "mode register mask has unknown bits");
        if ((mode == HVT_MODE_FULL && mask != all) || (mode == HVT_MODE_FLOW && mask))
            return corrupt(r, k, "mode register mask does not fit the mode (FULL: all, FLOW: none)");
        set_mode(k, (uint8_t)mode, (uint32_t)mask);
        o->a = mode;
        o->b = mask;
        break;
    }
    case HVT_MARK_RUN: case HVT_MARK_REPEAT: {
        if (end - p < 2) return corrupt(r, k, "truncated RUN/REPEAT count");
        uint32_t n = p[0] | (uint32_t)p[1] << 8;
        if (!n) return corrupt(r, k, "RUN/REPEAT of 0 instructions");
        if (type == HVT_MARK_REPEAT && !k->have_last)
            return corrupt(r, k, "REPEAT with no instruction before it (chunk start or GAP)");
        k->run_kind = type;
        k->run_left = n;
        k->run_pos = k->raw_pos;
        k->raw_pos = (size_t)(p + 2 - k->raw);
        o->mode = k->mode;
        o->regs_known = k->known;
        return run_next(r, k, o);
    }
    default:
        return corrupt(r, k, "unknown marker type");
    }
    o->mode = k->mode;
    o->regs_known = k->known;
    k->raw_pos = (size_t)(p - k->raw);
    return 1;
}

void tr_set_range(tr_reader *r, uint64_t from, uint64_t to)
{
    r->range_from = from;
    r->range_to = to;
}

int tr_set_merge(tr_reader *r)
{
    for (size_t i = 0; i < r->nmcur; i++) free(r->mcur[i].raw);
    free(r->mcur);
    free(r->mpeek);
    free(r->mhave);
    r->nmcur = 0;
    size_t ncpu = 0;
    for (size_t i = 0; i < r->nchunks; i++)
        if (r->chunks[i].kind == HVT_CHUNK_RECORDS && (size_t)r->chunks[i].cpu + 1 > ncpu) ncpu = (size_t)r->chunks[i].cpu + 1;
    r->mcur = calloc(ncpu ? ncpu : 1, sizeof *r->mcur);
    r->mpeek = calloc(ncpu ? ncpu : 1, sizeof *r->mpeek);
    r->mhave = calloc(ncpu ? ncpu : 1, sizeof *r->mhave);
    if (!r->mcur || !r->mpeek || !r->mhave) return -1;
    r->nmcur = ncpu;
    for (size_t c = 0; c < ncpu; c++) {
        r->mcur[c].cpu_filter = (int)c;
        r->mhave[c] = -1; /* not peeked yet */
    }
    forget_carry(r);
    r->merge = 1;
    return 0;
}

/* Merge: the CPU whose next record has the smallest tsc (ties: lowest CPU). A CPU's carry is
 * only touched by its own cursor, so a peeked record's register pointer stays valid. */
static int merged_next(tr_reader *r, tr_rec *o)
{
    size_t best = SIZE_MAX;
    for (size_t c = 0; c < r->nmcur; c++) {
        if (r->mhave[c] < 0) {
            int rc = cursor_next(r, &r->mcur[c], &r->mpeek[c]);
            if (rc < 0) return -1;
            r->mhave[c] = rc;
        }
        if (r->mhave[c] && (best == SIZE_MAX || r->mpeek[c].tsc < r->mpeek[best].tsc)) best = c;
    }
    if (best == SIZE_MAX) return 0;
    *o = r->mpeek[best];
    r->mhave[best] = -1;
    return 1;
}

int tr_next(tr_reader *r, tr_rec *o)
{
    return r->merge ? merged_next(r, o) : cursor_next(r, &r->file_cur, o);
}
