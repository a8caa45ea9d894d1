/* ksym: see ksym.h. How the tables are found (the generator is scripts/kallsyms.c):
 * 1. kallsyms_token_table: 256 NUL-terminated tokens; single-character tokens for the digits
 *    "0".."9" sit at indexes 48..57, so find that run and walk back 48 strings.
 * 2. kallsyms_token_index (u16[256], 8-aligned after the table) must equal the token offsets.
 * 3. kallsyms_markers (u32, first 0, increasing) lie before the token table, possibly with
 *    kallsyms_seqs_of_names (3 bytes per symbol) in between (6.2, backported to Debian 6.1).
 * 4. kallsyms_num_syms (u32) sits 8 bytes before kallsyms_names; names end at the markers.
 *    Every 256th name offset must equal its marker: that check validates the whole guess.
 * 5. kallsyms_relative_base (u64) and kallsyms_offsets (s32 per symbol) precede num_syms in
 *    6.1 (follow token_index from 6.4 on). */
#include "ksym.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    KS_ALIGN = 8,          /* scripts/kallsyms.c ALGN */
    KS_TOKENS = 256,
    KS_DIGIT0_TOKEN = '0', /* token index of the single-char token "0" */
    KS_DIGITS = 10,
    KS_MARKER_STRIDE = 256,
    KS_SEQ_BYTES = 3,
    KS_MAX_SYMS = 4 << 20,
    KS_MAX_NAME = 512,      /* KSYM_NAME_LEN */
    KS_MAX_BACKSCAN = 64 << 20,
    KS_CACHE_MAGIC = 0x4d59534b, /* "KSYM" */
};

static size_t align_up(size_t v) { return (v + KS_ALIGN - 1) & ~(size_t)(KS_ALIGN - 1); }

/* Find the digit run "0\0" ... "9\0" starting at or after `from`; returns offset or -1. */
static int64_t find_digit_run(const uint8_t *d, size_t n, size_t from)
{
    static const char run[] = "0\0" "1\0" "2\0" "3\0" "4\0" "5\0" "6\0" "7\0" "8\0" "9";
    const size_t rl = sizeof run; /* includes final NUL */
    for (size_t i = from; i + rl <= n; i++) {
        const uint8_t *p = memchr(d + i, '0', n - rl + 1 - i);
        if (!p) return -1;
        i = (size_t)(p - d);
        if (memcmp(p, run, rl) == 0 && i > 0 && d[i - 1] == 0) return (int64_t)i;
    }
    return -1;
}

typedef struct {
    size_t tok_table, tok_index, tok_end;
    uint16_t tok_off[KS_TOKENS];
} ks_tokens;

static int find_tokens(const uint8_t *d, size_t n, ks_tokens *tk)
{
    size_t from = 0;
    for (;;) {
        int64_t z = find_digit_run(d, n, from);
        if (z < 0) return -1;
        from = (size_t)z + 1;
        /* walk back 48 strings: each preceded by the previous one's NUL */
        size_t p = (size_t)z;
        int ok = 1;
        for (int i = 0; i < KS_DIGIT0_TOKEN && ok; i++) {
            if (p < 2) { ok = 0; break; }
            size_t q = p - 1; /* the NUL ending the previous token */
            size_t s = q;
            while (s > 0 && d[s - 1] != 0 && q - s < KS_MAX_NAME) s--;
            if (s == q) ok = 0; /* empty token: not a token table */
            p = s;
        }
        if (!ok || p % KS_ALIGN) continue;
        /* walk forward 256 tokens, recording offsets */
        size_t q = p;
        for (int i = 0; i < KS_TOKENS && ok; i++) {
            if (q - p > UINT16_MAX) { ok = 0; break; }
            tk->tok_off[i] = (uint16_t)(q - p);
            const uint8_t *e = memchr(d + q, 0, n - q);
            if (!e || e == d + q) { ok = 0; break; }
            q = (size_t)(e - d) + 1;
        }
        if (!ok) continue;
        size_t idx = align_up(q);
        if (!util_fits(n, idx, 2 * KS_TOKENS)) continue;
        for (int i = 0; i < KS_TOKENS && ok; i++)
            if (util_le16(d + idx + 2 * i) != tk->tok_off[i]) ok = 0;
        if (!ok) continue;
        tk->tok_table = p;
        tk->tok_index = idx;
        tk->tok_end = idx + 2 * KS_TOKENS;
        return 0;
    }
}

/* Walk `count` compressed names from `start`; returns the end offset or 0 on malformed data.
 * If markers is given, check every 256th name offset against it. */
static size_t walk_names(const uint8_t *d, size_t limit, size_t start, uint32_t count,
                         const uint8_t *markers)
{
    size_t p = start;
    for (uint32_t i = 0; i < count; i++) {
        if (markers && i % KS_MARKER_STRIDE == 0 && util_le32(markers + 4 * (i / KS_MARKER_STRIDE)) != p - start)
            return 0;
        if (p >= limit) return 0;
        size_t len = d[p++];
        if (len & 0x80) { /* 2-byte length since 6.1: low 7 bits, then the rest */
            if (p >= limit) return 0;
            len = (len & 0x7f) | ((size_t)d[p++] << 7);
        }
        if (len == 0 || len > limit - p) return 0;
        p += len;
    }
    return p;
}

static int looks_like_markers(const uint8_t *d, size_t n, size_t m)
{
    const uint32_t min_step = 2 * KS_MARKER_STRIDE, max_step = KS_MAX_NAME * KS_MARKER_STRIDE;
    if (!util_fits(n, m, 12) || util_le32(d + m) != 0) return 0;
    uint32_t a = util_le32(d + m + 4), b = util_le32(d + m + 8);
    return a >= min_step && a <= max_step && b > a && b - a >= min_step && b - a <= max_step;
}

static int decode_names(const char *file, const uint8_t *d, size_t names, uint32_t count,
                        const ks_tokens *tk, ksym_table *t)
{
    size_t cap = (size_t)count * 32 + 1024;
    t->names = malloc(cap);
    if (!t->names) return -1;
    size_t used = 0, p = names;
    char buf[KS_MAX_NAME * 8];
    for (uint32_t i = 0; i < count; i++) {
        size_t len = d[p++];
        if (len & 0x80) len = (len & 0x7f) | ((size_t)d[p++] << 7);
        size_t bl = 0;
        for (size_t j = 0; j < len; j++) {
            const char *tok = (const char *)d + tk->tok_table + tk->tok_off[d[p + j]];
            size_t tl = strlen(tok);
            if (bl + tl >= sizeof buf) {
                util_err(file, p, "kallsyms: symbol %u expands past %zu bytes", i, sizeof buf);
                return -1;
            }
            memcpy(buf + bl, tok, tl);
            bl += tl;
        }
        p += len;
        if (bl < 2) {
            util_err(file, p, "kallsyms: symbol %u has an empty name", i);
            return -1;
        }
        if (used + bl + 1 > cap) {
            cap = cap * 2 + bl;
            char *nn = realloc(t->names, cap);
            if (!nn) return -1;
            t->names = nn;
        }
        t->syms[i].type = buf[0];
        t->syms[i].name_off = (uint32_t)used;
        memcpy(t->names + used, buf + 1, bl - 1);
        used += bl - 1;
        t->names[used++] = 0;
    }
    t->names_len = used;
    return 0;
}

int ksym_parse(const char *file, const uint8_t *d, size_t n, ksym_table *t)
{
    memset(t, 0, sizeof *t);
    ks_tokens tk;
    if (find_tokens(d, n, &tk) != 0) {
        util_err(file, 0, "kallsyms: no token table found (kernel without CONFIG_KALLSYMS?)");
        return -1;
    }
    size_t lo = tk.tok_table > KS_MAX_BACKSCAN ? tk.tok_table - KS_MAX_BACKSCAN : 0;
    for (size_t m = tk.tok_table - KS_ALIGN; m >= lo + KS_ALIGN && m < tk.tok_table; m -= KS_ALIGN) {
        if (!looks_like_markers(d, n, m)) continue;
        /* count the increasing marker entries */
        uint32_t nm = 1;
        while (m + 4 * (nm + 1) <= tk.tok_table && util_le32(d + m + 4 * nm) > util_le32(d + m + 4 * (nm - 1)))
            nm++;
        /* find num_syms: a u32, 8 bytes before the names, with ceil(num/256) markers. The
         * entries counted above may run on into seqs_of_names, so trust only marker[1]. */
        uint32_t second = util_le32(d + m + 4);
        if (second >= m) continue;
        for (size_t s = m - second; s >= KS_ALIGN && m - s < KS_MAX_BACKSCAN; s -= 1) {
            size_t ns = s - KS_ALIGN;
            if (ns % KS_ALIGN) continue;
            uint32_t num = util_le32(d + ns);
            if (num == 0 || num > KS_MAX_SYMS) continue;
            uint32_t want_markers = (num + KS_MARKER_STRIDE - 1) / KS_MARKER_STRIDE;
            if (want_markers > nm) continue;
            size_t end = walk_names(d, m, s, num, d + m);
            if (!end || align_up(end) != m) continue;
            /* seqs_of_names, if present, sits between markers and the token table */
            size_t after_markers = align_up(m + 4 * (size_t)want_markers);
            int seqs = after_markers != tk.tok_table;
            if (seqs && align_up(after_markers + (size_t)KS_SEQ_BYTES * num) != tk.tok_table) continue;
            /* offsets + relative_base: before num_syms (6.1) or after token_index (6.4+) */
            size_t off_bytes = align_up(4 * (size_t)num);
            size_t rb = ns - KS_ALIGN, offs = rb - off_bytes;
            if (ns < KS_ALIGN + off_bytes || (util_le64(d + rb) >> 63) == 0) {
                offs = align_up(tk.tok_end);
                rb = offs + off_bytes;
                if (!util_fits(n, rb, 8) || (util_le64(d + rb) >> 63) == 0) {
                    util_err(file, ns, "kallsyms: %u names found but no kallsyms_relative_base", num);
                    return -1;
                }
            }
            uint64_t base = util_le64(d + rb);
            t->syms = calloc(num, sizeof *t->syms);
            if (!t->syms) return -1;
            t->count = num;
            for (uint32_t i = 0; i < num; i++) {
                int32_t o = (int32_t)util_le32(d + offs + 4 * (size_t)i);
                /* CONFIG_KALLSYMS_ABSOLUTE_PERCPU: >= 0 is absolute, else base - 1 - o */
                if (o >= 0) {
                    t->syms[i].addr = (uint64_t)o;
                    t->syms[i].abs = 1;
                } else {
                    t->syms[i].addr = base - 1 - (uint64_t)(int64_t)o;
                }
            }
            if (decode_names(file, d, s, num, &tk, t) != 0 || ksym_index(t) != 0) {
                ksym_free(t);
                return -1;
            }
            return 0;
        }
    }
    util_err(file, tk.tok_table, "kallsyms: token table found but no kallsyms_markers/names before it");
    return -1;
}

int ksym_extract(const kimg *k, ksym_table *t) { return ksym_parse(k->path, k->elf.data, k->elf.len, t); }

static const ksym_table *sort_ctx;
static int cmp_addr(const void *a, const void *b)
{
    const ksym_entry *x = &sort_ctx->syms[*(const uint32_t *)a], *y = &sort_ctx->syms[*(const uint32_t *)b];
    if (x->addr != y->addr) return x->addr < y->addr ? -1 : 1;
    return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1; /* stable: first name wins */
}

int ksym_index(ksym_table *t)
{
    free(t->by_addr);
    t->by_addr = malloc(sizeof(uint32_t) * (t->count ? t->count : 1));
    if (!t->by_addr) return -1;
    uint32_t n = 0;
    for (uint32_t i = 0; i < t->count; i++)
        if (!t->syms[i].abs) t->by_addr[n++] = i;
    t->by_addr_count = n;
    sort_ctx = t;
    qsort(t->by_addr, n, sizeof *t->by_addr, cmp_addr);
    t->end = UINT64_MAX;
    for (uint32_t i = 0; i < t->count; i++)
        if (!t->syms[i].abs && strcmp(ksym_name(t, i), "_end") == 0) t->end = t->syms[i].addr;
    return 0;
}

void ksym_free(ksym_table *t)
{
    free(t->syms);
    free(t->names);
    free(t->by_addr);
    memset(t, 0, sizeof *t);
}

int64_t ksym_lookup(const ksym_table *t, uint64_t addr, uint64_t *off)
{
    if (addr >= t->end) return -1;
    uint32_t lo = 0, hi = t->by_addr_count;
    while (lo < hi) { /* first entry with addr > target */
        uint32_t mid = lo + (hi - lo) / 2;
        if (t->syms[t->by_addr[mid]].addr <= addr) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    /* among equal addresses prefer the first in kallsyms order (the sort is stable on index) */
    uint32_t i = lo - 1;
    uint64_t a = t->syms[t->by_addr[i]].addr;
    while (i > 0 && t->syms[t->by_addr[i - 1]].addr == a) i--;
    if (off) *off = addr - a;
    return t->by_addr[i];
}

int64_t ksym_find(const ksym_table *t, const char *name)
{
    for (uint32_t i = 0; i < t->count; i++)
        if (strcmp(ksym_name(t, i), name) == 0) return i;
    return -1;
}

int ksym_save(const ksym_table *t, const char *path)
{
    size_t sz = 12 + (size_t)t->count * sizeof(ksym_entry) + t->names_len;
    uint8_t *b = malloc(sz);
    if (!b) return -1;
    uint32_t hdr[3] = {KS_CACHE_MAGIC, t->count, (uint32_t)t->names_len};
    memcpy(b, hdr, sizeof hdr);
    memcpy(b + 12, t->syms, (size_t)t->count * sizeof(ksym_entry));
    memcpy(b + 12 + (size_t)t->count * sizeof(ksym_entry), t->names, t->names_len);
    int rc = util_write_file(path, b, sz);
    free(b);
    return rc;
}

int ksym_load(ksym_table *t, const char *path)
{
    memset(t, 0, sizeof *t);
    util_buf b;
    if (util_read_file(path, &b) != 0) return -1;
    uint32_t hdr[3];
    if (b.len < sizeof hdr) goto bad;
    memcpy(hdr, b.data, sizeof hdr);
    size_t want = 12 + (size_t)hdr[1] * sizeof(ksym_entry) + hdr[2];
    if (hdr[0] != KS_CACHE_MAGIC || b.len != want || hdr[2] == 0 || b.data[want - 1] != 0) goto bad;
    t->count = hdr[1];
    t->names_len = hdr[2];
    t->syms = malloc((size_t)t->count * sizeof(ksym_entry) + 1);
    t->names = malloc(t->names_len);
    if (!t->syms || !t->names) goto bad;
    memcpy(t->syms, b.data + 12, (size_t)t->count * sizeof(ksym_entry));
    memcpy(t->names, b.data + 12 + (size_t)t->count * sizeof(ksym_entry), t->names_len);
    for (uint32_t i = 0; i < t->count; i++)
        if (t->syms[i].name_off >= t->names_len) goto bad;
    util_buf_free(&b);
    return ksym_index(t);
bad:
    util_err(path, 0, "corrupt symbol cache");
    util_buf_free(&b);
    ksym_free(t);
    return -1;
}
