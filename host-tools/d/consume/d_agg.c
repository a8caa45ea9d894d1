/* d_agg.c - see d_agg.h: the tables, bucket layouts, merging, keys and snapshots (the views,
 * their sorting and the host-side actions are in d_aggview.c). */
#include "d_agg_priv.h"
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define QBUCKETS 127      /* DTrace's quantize: -2^62 .. -1, 0, 1 .. 2^62 */

/* --- tables --- */

static uint32_t hash_key(uint16_t agg, const uint8_t *k, uint32_t n)
{
    uint32_t h = 2166136261u ^ agg;
    for (uint32_t i = 0; i < n; i++)
        h = (h ^ k[i]) * 16777619u;
    return h;
}

int64_t d_atab_find(const d_atab *t, uint16_t agg, const uint8_t *k, uint32_t klen, uint32_t h)
{
    if (!t->nhead)
        return -1;
    for (uint32_t i = t->head[h & (t->nhead - 1)]; i; i = t->e[i - 1].next) {
        const d_aent *e = &t->e[i - 1];
        if (e->hash == h && e->agg == agg && e->klen == klen && !memcmp(e->key, k, klen))
            return i - 1;
    }
    return -1;
}

static int rehash(d_atab *t, uint32_t nhead)
{
    uint32_t *nh = calloc(nhead, sizeof *nh);
    if (!nh)
        return -1;
    free(t->head);
    t->head = nh;
    t->nhead = nhead;
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t b = t->e[i].hash & (nhead - 1);
        t->e[i].next = nh[b];
        nh[b] = i + 1;
    }
    return 0;
}

int64_t d_atab_add(d_atab *t, uint16_t agg, const uint8_t *k, uint32_t klen, uint32_t h, uint32_t nb)
{
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 16;
        d_aent *ne = realloc(t->e, cap * sizeof *ne);
        if (!ne)
            return -1;
        t->e = ne;
        t->cap = cap;
    }
    if (t->n + 1 > t->nhead && rehash(t, t->nhead ? t->nhead * 2 : 16) < 0)
        return -1;
    d_aent *e = &t->e[t->n];
    memset(e, 0, sizeof *e);
    e->key = malloc(klen ? klen : 1);
    e->v = nb ? calloc(nb, sizeof *e->v) : NULL;
    if (!e->key || (nb && !e->v)) {
        free(e->key);
        free(e->v);
        return -1;
    }
    memcpy(e->key, k, klen);
    e->agg = agg;
    e->klen = klen;
    e->hash = h;
    e->normal = 1;
    uint32_t b = h & (t->nhead - 1);
    e->next = t->head[b];
    t->head[b] = t->n + 1;
    return t->n++;
}

void d_atab_free(d_atab *t)
{
    for (uint32_t i = 0; i < t->n; i++) {
        free(t->e[i].key);
        free(t->e[i].v);
        free(t->e[i].base);
    }
    free(t->e);
    free(t->head);
    memset(t, 0, sizeof *t);
}

/* --- layouts --- */

uint32_t d_agg_buckets(const d_agg *ag)
{
    const int64_t *p = ag->p;
    switch (ag->fn) {
    case HVT_DIF_AGG_QUANTIZE:
        return QBUCKETS;
    case HVT_DIF_AGG_LQUANTIZE:
        if (p[2] <= 0 || p[1] <= p[0] || (p[1] - p[0]) / p[2] > HVT_DIF_LQUANT_MAX)
            return 0;
        return (uint32_t)((p[1] - p[0]) / p[2] + 2);
    case HVT_DIF_AGG_LLQUANTIZE:
    {
        /* dtrace-utils' layout (include/hvt_dif.h); parameters as the compiler checked them */
        if (p[0] < 2 || p[0] > 65535 || p[1] < 0 || p[2] < p[1] || p[2] > 65535 || p[3] < 1 || p[3] > 65535)
            return 0;
        int64_t n = 2 * (p[2] - p[1] + 1) * (p[3] - p[3] / p[0]) + 3;
        return n <= HVT_DIF_LQUANT_MAX ? (uint32_t)n : 0;
    }
    default:
        return 0;
    }
}

/* Slots a function needs beyond the buckets' count (count/sum/min/max 1, avg 2, stddev 4). */
static uint32_t need(const d_agg *ag)
{
    switch (ag->fn) {
    case HVT_DIF_AGG_AVG: return 2;
    case HVT_DIF_AGG_STDDEV: return 4;
    case HVT_DIF_AGG_QUANTIZE: case HVT_DIF_AGG_LQUANTIZE: case HVT_DIF_AGG_LLQUANTIZE:
        return d_agg_buckets(ag);
    default: return 1;
    }
}

d_aggs *d_aggs_new(const dprog *p, uint32_t strsize, const d_symbolizer *sy)
{
    d_aggs *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->p = p;
    a->strsize = strsize ? strsize : 256;
    if (sy)
        a->sy = *sy;
    a->printed = calloc((size_t)p->naggs + 1, 1);
    a->hdr = calloc((size_t)p->naggs + 1, sizeof *a->hdr);
    if (!a->printed || !a->hdr) {
        d_aggs_free(a);
        return NULL;
    }
    for (int i = 0; i < p->naggs; i++) {
        uint32_t n = p->aggs[i].nkeys >= 0 && p->aggs[i].nkeys <= HVT_DIF_TUPLE_MAX ? need(&p->aggs[i]) : 0;
        /* an aggregation the program describes inconsistently takes no records */
        a->hdr[i] = n && p->aggs[i].nbuckets >= n ? p->aggs[i].nbuckets - n : UINT32_MAX;
        if (p->aggs[i].fn < HVT_DIF_AGG_QUANTIZE && n && p->aggs[i].nbuckets != n)
            a->hdr[i] = UINT32_MAX;
    }
    return a;
}

int d_aggs_usable(const d_aggs *a, int agg)
{
    return agg >= 0 && agg < a->p->naggs && a->hdr[agg] != UINT32_MAX;
}

void d_aggs_free(d_aggs *a)
{
    if (!a)
        return;
    for (uint32_t i = 0; i < a->ncpu; i++) {
        d_atab_free(&a->cpu[i].cur);
        d_atab_free(&a->cpu[i].pend);
    }
    free(a->cpu);
    d_atab_free(&a->meta);
    free(a->printed);
    free(a->hdr);
    free(a);
}

/* --- merging --- */

static int64_t add64(int64_t x, int64_t y) { return (int64_t)((uint64_t)x + (uint64_t)y); }
static int64_t sub64(int64_t x, int64_t y) { return (int64_t)((uint64_t)x - (uint64_t)y); }

static unsigned __int128 get128(const int64_t *v)
{
    return (unsigned __int128)(uint64_t)v[1] << 64 | (uint64_t)v[0];
}

static void put128(int64_t *v, unsigned __int128 x)
{
    v[0] = (int64_t)(uint64_t)x;
    v[1] = (int64_t)(uint64_t)(x >> 64);
}

void d_agg_merge(uint8_t fn, int64_t *dst, const int64_t *src, uint32_t nb)
{
    switch (fn) {
    case HVT_DIF_AGG_MIN:
        if (src[0] < dst[0])
            dst[0] = src[0];
        break;
    case HVT_DIF_AGG_MAX:
        if (src[0] > dst[0])
            dst[0] = src[0];
        break;
    case HVT_DIF_AGG_STDDEV:
        dst[0] = add64(dst[0], src[0]);
        dst[1] = add64(dst[1], src[1]);
        put128(dst + 2, get128(dst + 2) + get128(src + 2));
        break;
    default:              /* count, sum, avg and the quantizations add slot by slot */
        for (uint32_t i = 0; i < nb; i++)
            dst[i] = add64(dst[i], src[i]);
        break;
    }
}

/* v -= base (the values trunc() remembered): 1 when nothing happened since (stays hidden). */
int d_agg_since(uint8_t fn, int64_t *v, const int64_t *base, uint32_t nb, uint32_t hdr)
{
    switch (fn) {
    case HVT_DIF_AGG_MIN: case HVT_DIF_AGG_MAX:
        return v[0] == base[0];
    case HVT_DIF_AGG_STDDEV:
        v[0] = sub64(v[0], base[0]);
        v[1] = sub64(v[1], base[1]);
        put128(v + 2, get128(v + 2) - get128(base + 2));
        return v[0] == 0;
    default: {
        int zero = 1;
        for (uint32_t i = 0; i < nb; i++) {
            v[i] = sub64(v[i], base[i]);
            zero &= i < hdr || v[i] == 0;
        }
        return zero;
    }
    }
}

static uint64_t isqrt128(unsigned __int128 x)
{
    unsigned __int128 r = 0, bit = (unsigned __int128)1 << 126;
    while (bit > x)
        bit >>= 2;
    while (bit) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
        bit >>= 2;
    }
    return (uint64_t)r;
}

uint64_t d_agg_stddev(const int64_t *v, uint64_t normal)
{
    uint64_t n = (uint64_t)v[0];
    if (!n)
        return 0;
    if (!normal)
        normal = 1;
    /* DTrace: avg(x^2) with each division rounding down, minus the square of the average
     * computed with C's truncating signed division */
    unsigned __int128 sq = get128(v + 2) / normal / normal / n;
    int64_t avg = v[1] / (int64_t)normal / (int64_t)n;
    uint64_t a = avg < 0 ? -(uint64_t)avg : (uint64_t)avg;
    return isqrt128(sq - (unsigned __int128)a * a);
}

/* --- keys --- */

static int64_t get64(const uint8_t *p)
{
    int64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* Check a key against the aggregation's key types and write its canonical form (same
 * length). 0, or -1 with why. */
static int key_check(d_aggs *a, const d_agg *ag, const uint8_t *k, uint32_t klen, uint8_t *out,
                     char *why, size_t whylen)
{
    uint32_t at = 0;
    for (int i = 0; i < ag->nkeys; i++) {
        if (ag->keys[i].type == D_V_STR) {
            uint16_t l;
            if (klen - at < 2)
                goto short_key;
            memcpy(&l, k + at, 2);
            uint32_t tot = (2u + l + 7u) & ~7u;
            if (l >= a->strsize) {
                snprintf(why, whylen, "key #%d: string of %u bytes, strsize is %u", i + 1, l, a->strsize);
                return -1;
            }
            if (tot > klen - at)
                goto short_key;
            for (uint32_t j = at + 2 + l; j < at + tot; j++)
                if (k[j]) {
                    snprintf(why, whylen, "key #%d: padding is not zero", i + 1);
                    return -1;
                }
            memcpy(out + at, k + at, tot);
            at += tot;
        } else if (ag->keys[i].type == D_V_KSTACK || ag->keys[i].type == D_V_USTACK) {
            /* the header word (frames found, depth, kind), then depth frames, 0 after the last */
            uint32_t depth = ag->keys[i].size, tot = 8 + 8 * depth;
            if (klen - at < tot)
                goto short_key;
            uint64_t w = (uint64_t)get64(k + at);
            uint32_t nf = hvt_dif_sk_n(w);
            uint32_t kind = ag->keys[i].type == D_V_KSTACK ? HVT_DIF_SK_KERNEL : HVT_DIF_SK_USER;
            int bad = hvt_dif_sk_depth(w) != depth || hvt_dif_sk_kind(w) != kind || nf > depth ||
                      (w & 0xffe00000u) || (kind == HVT_DIF_SK_USER && (w >> 20));
            for (uint32_t j = 0; !bad && j < depth; j++)
                bad = (j < nf) != (get64(k + at + 8 + 8 * j) != 0);
            if (bad) {
                snprintf(why, whylen, "key #%d: not a stack of %u frames", i + 1, depth);
                return -1;
            }
            memcpy(out + at, k + at, tot);
            at += tot;
        } else {
            if (klen - at < 8)
                goto short_key;
            int64_t v = get64(k + at);
            if (ag->keys[i].type == D_V_KSYM)
                v = (int64_t)d_sym_start(&a->sy, (uint64_t)v, 0);
            memcpy(out + at, &v, 8);
            at += 8;
        }
    }
    if (at != klen) {
        snprintf(why, whylen, "key of %u bytes, its %d key(s) take %u", klen, ag->nkeys, at);
        return -1;
    }
    return 0;
short_key:
    snprintf(why, whylen, "key of %u bytes is too short for its %d key(s)", klen, ag->nkeys);
    return -1;
}

int d_agg_key_values(const d_agg *ag, const uint8_t *key, uint32_t klen, d_value *v, int stackindent)
{
    uint32_t at = 0;
    int i;
    for (i = 0; i < ag->nkeys && at < klen; i++) {
        memset(&v[i], 0, sizeof v[i]);
        v[i].type = ag->keys[i].type;
        v[i].size = ag->keys[i].size;
        if (v[i].type == D_V_STR) {
            uint16_t l;
            memcpy(&l, key + at, 2);
            v[i].s = (const char *)key + at + 2;
            v[i].slen = l;
            at += (2u + l + 7u) & ~7u;
        } else if (v[i].type == D_V_KSTACK || v[i].type == D_V_USTACK) {
            v[i].i = get64(key + at);
            v[i].s = (const char *)key + at + 8;
            v[i].slen = hvt_dif_sk_n((uint64_t)v[i].i);
            v[i].indent = stackindent;
            at += 8 + 8u * ag->keys[i].size;
        } else {
            v[i].i = get64(key + at);
            at += 8;
        }
    }
    return i;
}

/* --- snapshots --- */

static d_acpu *cpu_of(d_aggs *a, unsigned cpu)
{
    if (cpu > 0xffff)
        return NULL;
    if (cpu >= a->ncpu) {
        d_acpu *nc = realloc(a->cpu, (cpu + 1) * sizeof *nc);
        if (!nc)
            return NULL;
        memset(nc + a->ncpu, 0, (cpu + 1 - a->ncpu) * sizeof *nc);
        a->cpu = nc;
        a->ncpu = cpu + 1;
    }
    return &a->cpu[cpu];
}

static int why_fail(char *why, size_t whylen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why_fail(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The snapshot parts are deltas (the hypervisor resets what it sends): a CPU's copy is their
 * sum. A part is checked whole before any of it counts. */
int d_aggs_snap_begin(d_aggs *a, unsigned cpu, uint64_t gen, char *why, size_t whylen)
{
    d_acpu *c = cpu_of(a, cpu);
    if (!c)
        return why_fail(why, whylen, "snapshot of CPU %u: no memory or no such CPU", cpu);
    if (c->have && gen <= c->gen)
        return why_fail(why, whylen, "snapshot %llu of CPU %u is not newer than %llu",
                        (unsigned long long)gen, cpu, (unsigned long long)c->gen);
    c->pending = 1;
    c->bad = 0;
    c->pgen = gen;
    return 0;
}

/* The checked part in c->pend added into c->cur. */
static int add_part(d_aggs *a, d_acpu *c)
{
    for (uint32_t i = 0; i < c->pend.n; i++) {
        const d_aent *e = &c->pend.e[i];
        const d_agg *ag = &a->p->aggs[e->agg];
        int64_t j = d_atab_find(&c->cur, e->agg, e->key, e->klen, e->hash);
        if (j >= 0) {
            d_agg_merge(ag->fn, c->cur.e[j].v, e->v, ag->nbuckets);
            continue;
        }
        if ((j = d_atab_add(&c->cur, e->agg, e->key, e->klen, e->hash, ag->nbuckets)) < 0)
            return -1;
        memcpy(c->cur.e[j].v, e->v, (size_t)ag->nbuckets * sizeof *e->v);
    }
    return 0;
}

static int part_records(d_aggs *a, d_acpu *c, unsigned cpu, const void *recs, size_t len,
                        char *why, size_t whylen)
{
    const uint8_t *b = recs;
    for (size_t at = 0; at < len;) {
        struct hvt_dagg_rec r;
        if (len - at < sizeof r)
            return why_fail(why, whylen, "aggregation record truncated (%zu bytes left)", len - at);
        memcpy(&r, b + at, sizeof r);
        const d_agg *ag = r.agg < a->p->naggs ? &a->p->aggs[r.agg] : NULL;
        uint64_t want = sizeof r + (uint64_t)r.key_len + (uint64_t)r.nbuckets * 8;
        if (r.len != want || r.len > len - at || r.len % 8)
            return why_fail(why, whylen, "aggregation record of %u bytes (header says key %u, %u values)",
                            r.len, r.key_len, r.nbuckets);
        if (r.cpu != cpu)
            return why_fail(why, whylen, "aggregation record of CPU %u in the snapshot of CPU %u", r.cpu, cpu);
        if (!ag || a->hdr[r.agg] == UINT32_MAX)
            return why_fail(why, whylen, "aggregation index %u is not the program's", r.agg);
        if (r.nbuckets != ag->nbuckets)
            return why_fail(why, whylen, "@%s: %u values, the program has %u", ag->name, r.nbuckets,
                            ag->nbuckets);
        uint8_t kbuf[HVT_DIF_KEY_MAX];
        if (r.key_len > sizeof kbuf)
            return why_fail(why, whylen, "@%s: key of %u bytes", ag->name, r.key_len);
        char kwhy[128];
        if (key_check(a, ag, b + at + sizeof r, r.key_len, kbuf, kwhy, sizeof kwhy) < 0)
            return why_fail(why, whylen, "@%s: %s", ag->name, kwhy);
        uint32_t h = hash_key(r.agg, kbuf, r.key_len);
        if (d_atab_find(&c->pend, r.agg, kbuf, r.key_len, h) >= 0)
            return why_fail(why, whylen, "@%s: a key twice in one snapshot", ag->name);
        int64_t i = d_atab_add(&c->pend, r.agg, kbuf, r.key_len, h, r.nbuckets);
        if (i < 0)
            return why_fail(why, whylen, "out of memory");
        memcpy(c->pend.e[i].v, b + at + sizeof r + r.key_len, (size_t)r.nbuckets * 8);
        at += r.len;
    }
    return 0;
}

int d_aggs_snap_add(d_aggs *a, unsigned cpu, uint64_t gen, const void *recs, size_t len,
                    char *why, size_t whylen)
{
    d_acpu *c = cpu < a->ncpu ? &a->cpu[cpu] : NULL;
    if (!c || !c->pending || c->pgen != gen)
        return why_fail(why, whylen, "aggregation records for CPU %u outside its snapshot %llu", cpu,
                        (unsigned long long)gen);
    int rc = part_records(a, c, cpu, recs, len, why, whylen);
    if (rc == 0 && add_part(a, c) < 0)
        rc = why_fail(why, whylen, "out of memory");
    d_atab_free(&c->pend);
    if (rc < 0)
        c->bad = 1;
    return rc;
}

int d_aggs_snap_end(d_aggs *a, unsigned cpu, uint64_t gen, char *why, size_t whylen)
{
    d_acpu *c = cpu < a->ncpu ? &a->cpu[cpu] : NULL;
    if (!c || !c->pending || c->pgen != gen)
        return why_fail(why, whylen, "end of snapshot %llu of CPU %u that did not begin",
                        (unsigned long long)gen, cpu);
    c->pending = 0;
    c->gen = gen;
    c->have = 1;
    if (c->bad)
        return why_fail(why, whylen, "snapshot %llu of CPU %u had bad records: that part was left out",
                        (unsigned long long)gen, cpu);
    return 0;
}
