/* flame: see flame.h. Stacks are kept folded ("a;b;c") in an open-addressing hash map, the
 * folded text being the key; the SVG is laid out from the stacks sorted frame by frame, so
 * stacks sharing a prefix are adjacent and each frame is one run of them. */
#include "flame.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *key; /* folded stack, NUL-terminated; NULL = empty slot */
    size_t len;
    uint64_t hash, count;
} flame_slot;

struct flame {
    flame_slot *tab;
    size_t cap, used; /* cap is a power of two */
    uint64_t total;
};

/* FNV-1a: the map's hash and the colors' (stable across runs and platforms). */
static uint64_t fnv1a(const char *s, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ull;
    return h;
}

flame *flame_new(void)
{
    flame *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->cap = 64;
    f->tab = calloc(f->cap, sizeof *f->tab);
    if (!f->tab) {
        free(f);
        return NULL;
    }
    return f;
}

void flame_free(flame *f)
{
    if (!f) return;
    for (size_t i = 0; i < f->cap; i++) free(f->tab[i].key);
    free(f->tab);
    free(f);
}

size_t flame_stacks(const flame *f) { return f->used; }
uint64_t flame_total(const flame *f) { return f->total; }

static int grow(flame *f)
{
    size_t cap = f->cap * 2;
    flame_slot *tab = calloc(cap, sizeof *tab);
    if (!tab) return -1;
    for (size_t i = 0; i < f->cap; i++) {
        if (!f->tab[i].key) continue;
        size_t j = f->tab[i].hash & (cap - 1);
        while (tab[j].key) j = (j + 1) & (cap - 1);
        tab[j] = f->tab[i];
    }
    free(f->tab);
    f->tab = tab;
    f->cap = cap;
    return 0;
}

/* Add `count` to stack `key` (len bytes); takes ownership of key when `own`, else copies. */
static int add_key(flame *f, char *key, size_t len, uint64_t count, int own)
{
    if (f->total + count < f->total) {
        if (own) free(key);
        return -1;
    }
    uint64_t h = fnv1a(key, len);
    size_t j = h & (f->cap - 1);
    for (; f->tab[j].key; j = (j + 1) & (f->cap - 1)) {
        flame_slot *s = &f->tab[j];
        if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
            s->count += count; /* <= total, which did not overflow */
            f->total += count;
            if (own) free(key);
            return 0;
        }
    }
    if ((f->used + 1) * 10 > f->cap * 7) {
        if (grow(f) < 0) {
            if (own) free(key);
            return -1;
        }
        j = h & (f->cap - 1);
        while (f->tab[j].key) j = (j + 1) & (f->cap - 1);
    }
    if (!own) {
        char *k = malloc(len + 1);
        if (!k) return -1;
        memcpy(k, key, len);
        k[len] = 0;
        key = k;
    }
    f->tab[j] = (flame_slot){key, len, h, count};
    f->used++;
    f->total += count;
    return 0;
}

int flame_add(flame *f, const char *const *frames, int n, uint64_t count)
{
    static const char unknown[] = "[unknown]";
    if (!f || !frames || n <= 0 || n > FLAME_MAX_DEPTH) return -1;
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (!frames[i]) return -1;
        size_t l = strlen(frames[i]);
        len += (l ? l : sizeof unknown - 1) + 1;
    }
    char *key = malloc(len), *p = key;
    if (!key) return -1;
    for (int i = 0; i < n; i++) {
        const char *s = frames[i][0] ? frames[i] : unknown;
        if (i) *p++ = ';';
        for (; *s; s++) {
            unsigned char c = (unsigned char)*s;
            *p++ = c == ';' ? ':' : c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    *p = 0;
    return add_key(f, key, (size_t)(p - key), count, 1);
}

static int key_cmp(const void *a, const void *b)
{
    return strcmp((*(flame_slot *const *)a)->key, (*(flame_slot *const *)b)->key);
}

/* The occupied slots, sorted by key. */
static flame_slot **sorted_slots(const flame *f)
{
    flame_slot **v = malloc((f->used ? f->used : 1) * sizeof *v);
    if (!v) return NULL;
    size_t n = 0;
    for (size_t i = 0; i < f->cap; i++)
        if (f->tab[i].key) v[n++] = &f->tab[i];
    qsort(v, n, sizeof *v, key_cmp);
    return v;
}

int flame_write_folded(const flame *f, FILE *out)
{
    flame_slot **v = sorted_slots(f);
    if (!v) return -1;
    for (size_t i = 0; i < f->used; i++) fprintf(out, "%s %llu\n", v[i]->key, (unsigned long long)v[i]->count);
    free(v);
    return ferror(out) ? -1 : 0;
}

int flame_each(const flame *f, int (*cb)(void *ctx, const char *folded, uint64_t count), void *ctx)
{
    flame_slot **v = sorted_slots(f);
    if (!v) return -1;
    int rc = 0;
    for (size_t i = 0; i < f->used && rc == 0; i++) rc = cb(ctx, v[i]->key, v[i]->count);
    free(v);
    return rc ? -1 : 0;
}

/* ---- reading ---- */

static int parse_line(flame *f, char *line, size_t len, char *why, size_t whylen)
{
    if (memchr(line, 0, len)) return snprintf(why, whylen, "NUL byte in line"), -1;
    char *sp = NULL;
    for (size_t i = len; i-- > 0;)
        if (line[i] == ' ') {
            sp = line + i;
            break;
        }
    if (!sp) return snprintf(why, whylen, "no sample count (expected \"frame;frame;... COUNT\")"), -1;
    const char *c = sp + 1;
    if (!*c) return snprintf(why, whylen, "empty sample count"), -1;
    uint64_t count = 0;
    for (; *c; c++) {
        if (*c < '0' || *c > '9')
            return snprintf(why, whylen, "sample count \"%.40s\" is not a decimal integer", sp + 1), -1;
        unsigned d = (unsigned)(*c - '0');
        if (count > (UINT64_MAX - d) / 10) return snprintf(why, whylen, "sample count overflows"), -1;
        count = count * 10 + d;
    }
    size_t klen = (size_t)(sp - line);
    if (!klen) return snprintf(why, whylen, "empty stack"), -1;
    int depth = 1;
    size_t start = 0;
    for (size_t i = 0; i <= klen; i++) {
        unsigned char ch = i < klen ? (unsigned char)line[i] : ';';
        if (ch == ';') {
            if (i == start) return snprintf(why, whylen, "empty frame name at byte %zu", i + 1), -1;
            if (i < klen && ++depth > FLAME_MAX_DEPTH)
                return snprintf(why, whylen, "more than %d frames", FLAME_MAX_DEPTH), -1;
            start = i + 1;
        } else if (ch < 0x20 || ch == 0x7f) {
            return snprintf(why, whylen, "control character 0x%02x at byte %zu", ch, i + 1), -1;
        }
    }
    if (add_key(f, line, klen, count, 0) < 0) return snprintf(why, whylen, "sample total overflows or out of memory"), -1;
    return 0;
}

int flame_read_folded(flame *f, FILE *in, const char *name, char *err, size_t errlen)
{
    char no_err[1];
    if (!err || !errlen) err = no_err, errlen = sizeof no_err;
    if (!name) name = "folded";
    flame *tmp = flame_new();
    if (!tmp) return snprintf(err, errlen, "%s: out of memory", name), -1;
    char *line = NULL, why[160];
    size_t cap = 0;
    ssize_t got;
    unsigned long lineno = 0;
    int rc = 0;
    while ((got = getline(&line, &cap, in)) >= 0) {
        lineno++;
        size_t len = (size_t)got;
        if (len > FLAME_MAX_LINE) {
            snprintf(err, errlen, "%s:%lu: line longer than %d bytes", name, lineno, FLAME_MAX_LINE);
            rc = -1;
            break;
        }
        if (len && line[len - 1] == '\n') line[--len] = 0;
        if (len && line[len - 1] == '\r') line[--len] = 0;
        if (!len) continue;
        if (parse_line(tmp, line, len, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s:%lu: %s", name, lineno, why);
            rc = -1;
            break;
        }
    }
    if (!rc && ferror(in)) {
        snprintf(err, errlen, "%s: read error", name);
        rc = -1;
    }
    free(line);
    if (!rc && f->total + tmp->total < f->total) {
        snprintf(err, errlen, "%s: sample total overflows", name);
        rc = -1;
    }
    /* All lines valid: merge (the read is all or nothing). */
    for (size_t i = 0; !rc && i < tmp->cap; i++)
        if (tmp->tab[i].key) {
            if (add_key(f, tmp->tab[i].key, tmp->tab[i].len, tmp->tab[i].count, 1) < 0) {
                snprintf(err, errlen, "%s: out of memory", name);
                rc = -1;
            }
            tmp->tab[i].key = NULL;
        }
    flame_free(tmp);
    return rc;
}

/* ---- SVG ---- */

enum { FRAME_H = 16, FONT_SIZE = 12, PAD_TOP = 40, PAD_BOTTOM = 10, XPAD = 10 };
#define FONT_WIDTH 0.6 /* monospace advance per character, in ems */

typedef struct {
    char *buf;     /* the key with ';' turned into NULs */
    const char **f;
    int n;
    uint64_t count;
} svg_stack;

typedef struct {
    FILE *out;
    double scale; /* pixels per sample */
    uint64_t total;
    double height;
} svg_ctx;

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if invalid (or a non-character XML
 * forbids: U+FFFE/U+FFFF). */
static int utf8_len(const unsigned char *s, size_t avail)
{
    unsigned c = s[0];
    if (c < 0x80) return 1;
    int n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (!n || (size_t)n > avail) return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) return 0;
    if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] > 0x9f) || (c == 0xf0 && s[1] < 0x90) ||
        (c == 0xf4 && s[1] > 0x8f))
        return 0; /* overlong, surrogate, beyond U+10FFFF */
    if (c == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf)) return 0;
    return n;
}

static void xml_put(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < len;) {
        unsigned c = s[i];
        int n = utf8_len(s + i, len - i);
        if (!n || (c < 0x20 && c != '\t')) {
            fputc('?', out);
            i++;
            continue;
        }
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default: fwrite(s + i, 1, (size_t)n, out);
        }
        i += (size_t)n;
    }
}

static void svg_frame(const svg_ctx *c, const char *name, int level, double x, double w, uint64_t samples)
{
    uint64_t h = fnv1a(name, strlen(name));
    /* A warm palette: red fixed high, green and blue from the hash. */
    unsigned r = 205 + (unsigned)((h & 0xff) * 50 / 255), g = (unsigned)(((h >> 8) & 0xff) * 230 / 255),
             b = (unsigned)(((h >> 16) & 0xff) * 55 / 255);
    double y = c->height - PAD_BOTTOM - (level + 1) * FRAME_H;
    fputs("<g><title>", c->out);
    xml_put(c->out, name, strlen(name));
    fprintf(c->out, " (%llu samples, %.2f%%)</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
                    "fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>",
            (unsigned long long)samples, 100.0 * (double)samples / (double)c->total, x, y, w, FRAME_H - 1, r, g, b);
    int fit = (int)((w - 6) / (FONT_SIZE * FONT_WIDTH));
    if (fit >= 3) {
        size_t len = strlen(name), show = len;
        int dots = 0;
        if (len > (size_t)fit) {
            show = (size_t)fit - 2, dots = 1;
            while (show && ((unsigned char)name[show] & 0xc0) == 0x80) show--; /* whole characters */
        }
        fprintf(c->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3, y + FRAME_H - 4.5);
        xml_put(c->out, name, show);
        fprintf(c->out, "%s</text>", dots ? ".." : "");
    }
    fputs("</g>\n", c->out);
}

/* Stacks [lo, hi) share their first `depth` frames; draw their frames at depth `depth`
 * (level depth + 1) from x on. Stacks that end at depth sort first: their samples are the
 * caller's own, drawn as the gap on the caller's right. */
static void svg_level(const svg_ctx *c, const svg_stack *s, size_t lo, size_t hi, int depth, double x)
{
    size_t i = lo;
    while (i < hi && s[i].n == depth) i++;
    while (i < hi) {
        const char *name = s[i].f[depth];
        uint64_t sum = 0;
        size_t j = i;
        for (; j < hi && strcmp(s[j].f[depth], name) == 0; j++) sum += s[j].count;
        double w = (double)sum * c->scale;
        if (w >= FLAME_MIN_WIDTH) {
            svg_frame(c, name, depth + 1, x, w, sum);
            svg_level(c, s, i, j, depth + 1, x);
        }
        x += w;
        i = j;
    }
}

static int stack_cmp(const void *pa, const void *pb)
{
    const svg_stack *a = pa, *b = pb;
    for (int i = 0; i < a->n && i < b->n; i++) {
        int c = strcmp(a->f[i], b->f[i]);
        if (c) return c;
    }
    return (a->n > b->n) - (a->n < b->n);
}

int flame_write_svg(const flame *f, FILE *out, const char *title)
{
    size_t n = f->used;
    svg_stack *s = calloc(n ? n : 1, sizeof *s);
    if (!s) return -1;
    int rc = 0, maxn = 0;
    size_t k = 0;
    for (size_t i = 0; i < f->cap && !rc; i++) {
        const flame_slot *sl = &f->tab[i];
        if (!sl->key) continue;
        svg_stack *t = &s[k++];
        int frames = 1;
        for (size_t j = 0; j < sl->len; j++) frames += sl->key[j] == ';';
        t->buf = malloc(sl->len + 1);
        t->f = malloc((size_t)frames * sizeof *t->f);
        if (!t->buf || !t->f) {
            rc = -1;
            break;
        }
        memcpy(t->buf, sl->key, sl->len + 1);
        t->f[t->n++] = t->buf;
        for (size_t j = 0; j < sl->len; j++)
            if (t->buf[j] == ';') t->buf[j] = 0, t->f[t->n++] = t->buf + j + 1;
        t->count = sl->count;
        if (t->n > maxn) maxn = t->n;
    }
    if (!rc) {
        qsort(s, k, sizeof *s, stack_cmp);
        svg_ctx c = {out, 0, f->total, PAD_TOP + (double)(maxn + 1) * FRAME_H + PAD_BOTTOM};
        fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
                     "<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                     "xmlns=\"http://www.w3.org/2000/svg\">\n"
                     "<style>text { font-family: monospace; font-size: %dpx; fill: rgb(0,0,0); } "
                     ".title { font-size: 17px; }</style>\n"
                     "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(248,248,248)\"/>\n"
                     "<text class=\"title\" x=\"%.0f\" y=\"24\" text-anchor=\"middle\">",
                FLAME_WIDTH, c.height, FLAME_WIDTH, c.height, FONT_SIZE, FLAME_WIDTH, c.height, FLAME_WIDTH / 2);
        const char *tt = title ? title : "Flame Graph";
        xml_put(out, tt, strlen(tt));
        fputs("</text>\n<g id=\"frames\">\n", out);
        if (f->total) {
            c.scale = (FLAME_WIDTH - 2 * XPAD) / (double)f->total;
            svg_frame(&c, "all", 0, XPAD, FLAME_WIDTH - 2 * XPAD, f->total);
            svg_level(&c, s, 0, k, 0, XPAD);
        } else {
            fprintf(out, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"middle\">no samples</text>\n", FLAME_WIDTH / 2,
                    c.height - PAD_BOTTOM - 4.5);
        }
        fputs("</g>\n</svg>\n", out);
        if (ferror(out)) rc = -1;
    }
    for (size_t i = 0; i < n; i++) {
        free(s[i].buf);
        free((void *)s[i].f);
    }
    free(s);
    return rc;
}
